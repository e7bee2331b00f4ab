"""mmlab flake: run one part of the suite RUNS times and report how often
each test passed. A test that fails in some runs and passes in others is
flaky: a failing test until its cause is known.

  python3 -m mmlab.flake ROOT LOGS RUNS PART [MAKEVAR=VALUE ...]

PART is a make target that boots a guest and leaves LOGS/PART.json
(test-uml, test-uml-all, qemu-verify, qemu-verify-quick, ...). Each run is
`make -s PART MAKEVAR=VALUE ...`; its results file is removed first, so a
run that leaves none is counted as a failed run, never as the last run's
results. Writes LOGS/flake-PART.json (per test: passed, failed, skipped,
and the runs it failed in) and prints every test that did not pass in
every run it was not skipped in.

Exit 0 when every run passed, 1 when a test failed in some run or a run
failed without naming a test, 2 for bad usage. Last line: the tests that
passed every run, those that failed in at least one, those skipped in all.
"""
import json
import os
import re
import subprocess
import sys
import time

from .outcome import FAIL, PASS, SETUP, die, finish, say


# A measured value in a test's description ("memory came back (free 272640
# -> 338316 KiB)") differs between runs: the name keeps "(...)" instead.
MEASURED = re.compile(r'\([^()]*\d[^()]*\)')


def names(found):
    """(name, status) with measured values cut out of the names, and a
    repeated name within one run numbered (#2, #3, ...)."""
    seen = {}
    for name, status in found:
        name = MEASURED.sub('(...)', name)
        seen[name] = seen.get(name, 0) + 1
        yield (name if seen[name] == 1 else f'{name} #{seen[name]}'), status


def cases(group, prefix=''):
    """(name, status) of every test case in a kunit.py JSON group."""
    name = group.get('name', '')
    here = f'{prefix}.{name}' if prefix and name else (name or prefix)
    if here == 'KUnit Test Group':
        here = ''
    for c in group.get('test_cases', []):
        yield (f'{here}.{c["name"]}' if here else c['name']), c.get('status', 'ERROR')
    for g in group.get('sub_groups', []):
        yield from cases(g, here)


def keep(logs, part, i, out):
    """What make printed in a run that failed: LOGS/flake-PART-runI.out
    (it names that run's console log)."""
    with open(os.path.join(logs, f'flake-{part}-run{i}.out'), 'w') as f:
        f.write(out)


def main():
    if len(sys.argv) < 5:
        die('usage: python3 -m mmlab.flake ROOT LOGS RUNS PART [VAR=VALUE ...]',
            'make flake PART=test-uml RUNS=20')
    root, logs, runs, part, *makevars = sys.argv[1:]
    try:
        runs = int(runs)
    except ValueError:
        runs = 0
    if runs < 2:
        die(f'RUNS={sys.argv[3]}: a flake check needs at least 2 runs', 'make flake RUNS=20')
    results = os.path.join(logs, f'{part}.json')
    summary = os.path.join(logs, f'{part}.summary')
    tests = {}          # name -> {'passed', 'failed', 'skipped', 'failed_in'}
    bad_runs = []       # (run, exit code) of runs that failed without a failing test
    times = []
    t_all = time.monotonic()
    for i in range(1, runs + 1):
        for f in (results, summary):
            if os.path.exists(f):
                os.unlink(f)
        t0 = time.monotonic()
        r = subprocess.run(['make', '-s', '-C', root, part] + makevars,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        took = time.monotonic() - t0
        times.append(round(took, 1))
        try:
            with open(results) as f:
                got = list(names(cases(json.load(f))))
        except (OSError, ValueError):
            got = []
        # The run's verdict (make itself exits 2 for any failed recipe):
        # the exit code the guest's results gave, LOGS/PART.summary.
        try:
            with open(summary) as f:
                rc = int(f.read().split()[3])
        except (OSError, ValueError, IndexError):
            rc = None
        tail = (r.stdout.strip().splitlines() or ['no output'])[-1]
        if rc is None and not got:
            keep(logs, part, i, r.stdout)
            die(f'run {i}: make {part} ran no guest (no {summary}): {tail}',
                f'make {part} alone shows why; {logs}/flake-{part}-run{i}.out has its output',
                rc=SETUP)
        if rc is None:
            rc = PASS if r.returncode == 0 else FAIL
        if not got:
            bad_runs.append((i, rc))
            say(f'[{i}/{runs}] {part}: no results ({results}), exit {rc}: {tail}')
            keep(logs, part, i, r.stdout)
            continue
        counts = {'PASS': 0, 'FAIL': 0, 'SKIP': 0}
        for name, status in got:
            t = tests.setdefault(name, {'passed': 0, 'failed': 0, 'skipped': 0, 'failed_in': []})
            if status == 'PASS':
                t['passed'] += 1
                counts['PASS'] += 1
            elif status == 'SKIP':
                t['skipped'] += 1
                counts['SKIP'] += 1
            else:
                t['failed'] += 1
                t['failed_in'].append(i)
                counts['FAIL'] += 1
        if rc != PASS and not counts['FAIL']:
            bad_runs.append((i, rc))
        if rc != PASS or counts['FAIL']:
            keep(logs, part, i, r.stdout)
        say(f'[{i}/{runs}] {part}: {counts["PASS"]} passed, {counts["FAIL"]} failed, '
            f'{counts["SKIP"]} skipped in {took:.0f} s (exit {rc})')

    flaky = {n: t for n, t in tests.items() if t['failed']}
    always = [n for n, t in tests.items() if not t['failed'] and t['passed']]
    skipped = [n for n, t in tests.items() if not t['failed'] and not t['passed']]
    with open(os.path.join(logs, f'flake-{part}.json'), 'w') as f:
        json.dump({'part': part, 'runs': runs, 'make': makevars, 'seconds': times,
                   'bad_runs': bad_runs, 'tests': tests}, f, indent=1)
    say(f'{part}, {runs} runs in {time.monotonic() - t_all:.0f} s '
        f'(each {min(times):.0f}-{max(times):.0f} s): {len(always)} tests passed every run '
        f'they were not skipped in, {len(flaky)} failed in some, {len(skipped)} skipped in all')
    for n, t in sorted(flaky.items()):
        ran = t['passed'] + t['failed']
        say(f'  {n}: passed {t["passed"]} of {ran} ({100 * t["passed"] // ran} %), '
            f'failed in run(s) {",".join(map(str, t["failed_in"]))} '
            f'({logs}/flake-{part}-runN.out)')
    for i, rc in bad_runs:
        say(f'  run {i}: exit {rc} without a failing test ({logs}/flake-{part}-run{i}.out)')
    rc = FAIL if flaky or bad_runs else PASS
    sys.exit(finish(logs, f'flake-{part}', len(always), len(flaky), len(skipped), rc))


if __name__ == '__main__':
    main()
