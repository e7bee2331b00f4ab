#!/usr/bin/python3
"""make flake (scripts/mmlab/flake.py): a part rerun RUNS times, each
test's pass rate.

A scratch ROOT whose Makefile stands in for the suite: its target `part`
writes LOGS/part.json as kunit.py does, one test passing every run, one
failing in every second run, one always skipped, and (on request) a run
that leaves no results. The flake check must name the flaky test with its
rate and runs, count the run without results, exit 1, end with the
summary line, and exit 0 when every run passes.

usage: python3 -m unittest tests/host/test_flake.py
"""
import json
import os
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Run N (counted in LOGS/n): "steady" passes, "flaky" fails on even runs
# (unless STEADY=1), "skipped" skips, and LOGS/part.summary gets the
# verdict as boot.py writes it; run NORESULT crashes (a summary, exit 3,
# no results), run NOGUEST fails before any guest (neither).
MAKEFILE = r'''
part:
	@n=$$(( $$(cat $(LOGS)/n 2>/dev/null || echo 0) + 1 )); echo $$n > $(LOGS)/n; \
	if [ "$$n" = "$(NOGUEST)" ]; then echo "the build failed"; exit 2; fi; \
	if [ "$$n" = "$(NORESULT)" ]; then echo "0 0 0 3" > $(LOGS)/part.summary; echo "guest crashed"; exit 3; fi; \
	f=PASS rc=0; [ -z "$(STEADY)" ] && [ $$((n % 2)) = 0 ] && f=FAIL rc=1; \
	printf '{"name": "KUnit Test Group", "test_cases": [], "sub_groups": [{"name": "suite", "sub_groups": [], "test_cases": [{"name": "steady", "status": "PASS"}, {"name": "flaky", "status": "%s"}, {"name": "skipped", "status": "SKIP"}, {"name": "freed (free '$$n'00 KiB)", "status": "PASS"}, {"name": "twice", "status": "PASS"}, {"name": "twice", "status": "PASS"}]}]}' $$f > $(LOGS)/part.json; \
	echo "4 0 1 $$rc" > $(LOGS)/part.summary; \
	[ $$f = PASS ]
'''


class FlakeTest(unittest.TestCase):
    def run_flake(self, runs, *makevars):
        self.tmp = tempfile.mkdtemp(prefix='mmlab-flake-')
        logs = os.path.join(self.tmp, 'logs')
        os.makedirs(logs)
        with open(os.path.join(self.tmp, 'Makefile'), 'w') as f:
            f.write(MAKEFILE)
        r = subprocess.run(['/usr/bin/python3', '-m', 'mmlab.flake', self.tmp, logs, str(runs),
                            'part', f'LOGS={logs}'] + list(makevars),
                           capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'scripts'),
                                    MAKEFLAGS=''))
        return r, logs

    def tearDown(self):
        subprocess.run(['rm', '-rf', self.tmp])

    def test_flaky_test_and_lost_run(self):
        r, logs = self.run_flake(5, 'NORESULT=3')
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 1, out)
        # runs 1..5: run 3 left nothing; flaky failed in runs 2 and 4
        self.assertIn('suite.flaky: passed 2 of 4 (50 %), failed in run(s) 2,4', out)
        self.assertIn('run 3: exit 3 without a failing test', out)
        # a measured value in a name, and a name twice in a run, are one test each
        self.assertEqual(out.strip().splitlines()[-1], '4 passed, 1 failed, 1 skipped')
        with open(os.path.join(logs, 'flake-part.json')) as f:
            d = json.load(f)
        self.assertEqual(d['tests']['suite.steady']['passed'], 4)
        self.assertEqual(d['tests']['suite.freed (...)']['passed'], 4)
        self.assertEqual(d['tests']['suite.twice #2']['passed'], 4)
        self.assertEqual(d['tests']['suite.flaky']['failed_in'], [2, 4])
        self.assertEqual(d['bad_runs'], [[3, 3]])
        self.assertTrue(os.path.exists(os.path.join(logs, 'flake-part-run3.out')))
        self.assertTrue(os.path.exists(os.path.join(logs, 'flake-part-run2.out')))

    def test_all_pass(self):
        r, logs = self.run_flake(3, 'STEADY=1')
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        self.assertEqual(out.strip().splitlines()[-1], '5 passed, 0 failed, 1 skipped')

    def test_run_without_guest_stops(self):
        r, logs = self.run_flake(4, 'NOGUEST=2', 'STEADY=1')
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn('run 2: make part ran no guest', r.stderr)
        self.assertTrue(os.path.exists(os.path.join(logs, 'flake-part-run2.out')))

    def test_needs_two_runs(self):
        r, _ = self.run_flake(1)
        self.assertEqual(r.returncode, 2)
        self.assertIn('at least 2 runs', r.stderr)


if __name__ == '__main__':
    unittest.main()
