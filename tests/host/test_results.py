#!/usr/bin/python3
"""mmlab.results and mmlab.kcidb on recorded console logs
(tests/host/logs/), the way tools/testing/kunit tests its parser on
test_data/: a pass, a failure, a UML panic in KUnit, an x86 oops in a guest
test, a timeout and a KTAP document cut short.

usage: KSRC=build/KVER/src python3 -m unittest tests/host/test_results.py
"""
import contextlib
import io
import json
import os
import shutil
import re
import subprocess
import sys
import tempfile
import unittest

import junitparser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
from mmlab import bench  # noqa: E402
from mmlab import kcidb  # noqa: E402
from mmlab import results  # noqa: E402
from mmlab import conf  # noqa: E402

KSRC = os.environ.get('KSRC', os.path.join(conf.build_dir(ROOT), 'src'))
LOGS = os.path.join(HERE, 'logs')
# results.summarize() parses with the tree's own kunit.py
NEEDS_TREE = unittest.skipUnless(os.path.exists(os.path.join(KSRC, 'tools/testing/kunit/kunit.py')),
                                 'needs the tree\'s kunit.py (make tree)')


def lines_of(name):
    with open(os.path.join(LOGS, name), errors='replace') as f:
        return f.read().splitlines()


def guest_counts(lines):
    """The guest's own summary line ("mmlab: N passed, N failed, N skipped")."""
    for line in lines:
        m = re.match(r'mmlab: (\d+) passed, (\d+) failed, (\d+) skipped', line)
        if m:
            return tuple(int(x) for x in m.groups())
    return None


@NEEDS_TREE
class Results(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def summarize(self, lines, timed_out=None, target='uml'):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = results.summarize('r', lines, self.out, KSRC, timed_out, None, None,
                                   {'target': target})
        with open(os.path.join(self.out, 'r.summary')) as f:
            summary = tuple(int(x) for x in f.read().split())
        with open(os.path.join(self.out, 'r.run')) as f:
            run = json.load(f)
        return rc, summary, run, buf.getvalue()

    def junit_counts(self):
        """(tests, failures + errors, skipped) as junitparser reads r.junit.xml."""
        xml = junitparser.JUnitXml.fromfile(os.path.join(self.out, 'r.junit.xml'))
        tests = failures = skipped = 0
        for suite in xml:
            for case in suite:
                tests += 1
                kinds = {type(r).__name__ for r in case.result}
                failures += bool(kinds & {'Failure', 'Error'})
                skipped += 'Skipped' in kinds
        return tests, failures, skipped

    def test_pass(self):
        lines = lines_of('pass-uml.log')
        rc, summary, run, _ = self.summarize(lines)
        self.assertEqual(rc, 0)
        self.assertEqual(summary[:3], guest_counts(lines))
        self.assertEqual(summary[1], 0)
        p, f, s = summary[:3]
        self.assertEqual(self.junit_counts(), (p + f + s, f, s))
        self.assertEqual(run['planned'][-1], 'kernel_log')
        self.assertNotIn('why', run)

    def test_failure(self):
        lines = lines_of('fail-uml.log')
        rc, summary, _, out = self.summarize(lines)
        self.assertEqual(rc, 1)
        self.assertEqual(summary[:3], guest_counts(lines))
        self.assertEqual(summary[:3], (4, 3, 0))
        self.assertEqual(self.junit_counts(), (7, 3, 0))
        self.assertIn('r: test failures', out)
        xml = junitparser.JUnitXml.fromfile(os.path.join(self.out, 'r.junit.xml'))
        names = {s.name for s in xml}
        self.assertEqual(names, {'mmlab.r.munmap', 'mmlab.r.um_host_ops', 'mmlab.r'})
        # r.failures: each failed case once (not its suite's own "not ok"),
        # with what the guest printed just before it
        with open(os.path.join(self.out, 'r.failures')) as f:
            self.assertEqual(f.read().splitlines(), [
                'munmap.600 pages unmapped, guards intact: (no message)',
                'um_host_ops.munmap of 64 pages: one flush, one merged host munmap: '
                'munmap: 1 flushes, host mmap 0 munmap 0 mprotect 0',
                'um_host_ops.range gone on the host, neighbours intact: (no message)'])

    def test_failures_file_empty_on_pass(self):
        self.summarize(lines_of('pass-uml.log'))
        with open(os.path.join(self.out, 'r.failures')) as f:
            self.assertEqual(f.read(), '')

    def test_panic_in_kunit(self):
        rc, _, run, out = self.summarize(lines_of('panic-uml.log'))
        self.assertEqual(rc, 3)
        title = ('BUG: failure at mm/mmu_gather.c:195/__tlb_remove_page_size()! in '
                 '__tlb_remove_page_size() while mmu_gather (after its case '
                 '"gather_extends_chain") ran (task kunit_try_catch)')
        self.assertEqual(run['why'], title)
        self.assertIn(f'kernel splat: {title}', out)
        # JUnit fails too: one error case for the run, with the title
        xml = junitparser.JUnitXml.fromfile(os.path.join(self.out, 'r.junit.xml'))
        errors = [r.message for s in xml for c in s for r in c.result
                  if type(r).__name__ == 'Error']
        self.assertEqual(errors, ['kernel splat'])

    def test_oops_in_guest_test(self):
        rc, summary, run, _ = self.summarize(lines_of('oops-x86.log'), target='qemu')
        self.assertEqual(rc, 3)
        self.assertGreaterEqual(summary[1], 1)
        self.assertEqual(run['why'], 'invalid opcode: 0000 [#1] PREEMPT SMP NOPTI in '
                         '__split_huge_pmd() during the guest tests (task thp_split)')

    def test_timeout_names_the_running_test(self):
        lines = lines_of('timeout-uml.log')
        rc, summary, run, out = self.summarize(lines, timed_out=300)
        self.assertEqual(rc, 124)
        self.assertGreaterEqual(summary[1], 1)
        # the guest had reported its first two tests: the third was running
        self.assertEqual(run['why'], f'timed out after 300s while {run["planned"][2]} ran')
        self.assertIn(run['why'], out)
        tests, failures, _ = self.junit_counts()
        self.assertGreaterEqual(failures, 1)        # the run's own error case

    def test_uml_killed_by_sigabrt_is_a_splat(self):
        # every test passed, then UML's process died of SIGABRT at shutdown
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = results.summarize('r', lines_of('pass-uml.log'), self.out, KSRC, None, None,
                                   None, {'target': 'uml'}, died=6)
        with open(os.path.join(self.out, 'r.run')) as f:
            run = json.load(f)
        self.assertEqual(rc, 3)
        self.assertTrue(run['why'].startswith("the guest's process died of SIGABRT (UML's "
                                              'os_dump_core()'), run['why'])
        self.assertIn('its last lines:', buf.getvalue())
        with open(os.path.join(self.out, 'r.failures')) as f:
            self.assertIn('died of SIGABRT', f.read())

    def test_truncated_ktap_fails(self):
        rc, summary, _, out = self.summarize(lines_of('truncated-uml.log'))
        self.assertEqual(rc, 1)
        self.assertGreaterEqual(summary[1], 1)
        self.assertIn('the KTAP output stopped before its end marker', out)

    def test_suite_fails_after_its_cases_passed(self):
        # a test that crashed after its last case: its own "not ok" is the
        # only failure, and the summary, JUnit and KCIDB must all show it
        lines = ['mmlab: ktap begin', 'KTAP version 1', '1..2', '# mmlab tests: munmap kernel_log',
                 '    KTAP version 1', '    # Subtest: munmap', '    1..2',
                 '    ok 1 first', '    ok 2 second', 'not ok 1 munmap # exit status 139',
                 'not ok 2 kernel_log', 'mmlab: ktap end']
        rc, summary, run, _ = self.summarize(lines)
        self.assertEqual((rc, summary[:3]), (1, (2, 2, 0)))
        self.assertEqual(run['top'], [['munmap', 'FAIL'], ['kernel_log', 'FAIL']])
        self.assertEqual(self.junit_counts(), (4, 2, 0))
        with open(os.path.join(self.out, 'r.json')) as f:
            result = json.load(f)
        run['log'] = '/logs/r.log'
        tests = {t['path']: t['status'] for t in kcidb.run_tests('r', run, result, 'mmlab:b')}
        self.assertEqual(tests, {'mmlab.munmap.first': 'PASS', 'mmlab.munmap.second': 'PASS',
                                 'mmlab.munmap': 'FAIL', 'mmlab.kernel_log': 'FAIL'})

    def test_warning_found_by_kernel_log_names_the_test_it_came_in(self):
        # a WARNING stays off the console (dmesg -n 1): kernel_log quotes
        # it, and the kernel log at the end places it after "thp_split starts"
        lines = ['mmlab: ktap begin', 'KTAP version 1', '1..3',
                 '# mmlab tests: thp_split fork_cow kernel_log',
                 'ok 1 thp_split', 'ok 2 fork_cow',
                 '    # [    3.10] WARNING: CPU: 1 PID: 90 at mm/huge_memory.c:2100 '
                 '__split_huge_pmd+0x50/0x900',
                 'not ok 3 kernel_log # the kernel log has a splat (full log below)',
                 'mmlab: ktap end', 'mmlab: kernel log follows',
                 '[    3.00] mmlab: test thp_split starts',
                 '[    3.10] WARNING: CPU: 1 PID: 90 at mm/huge_memory.c:2100 '
                 '__split_huge_pmd+0x50/0x900',
                 '[    3.10] RIP: 0010:__split_huge_pmd+0x50/0x900',
                 '[    3.50] mmlab: test fork_cow starts', 'mmlab: kernel log end']
        rc, _, run, _ = self.summarize(lines, target='qemu')
        self.assertEqual(rc, 3)
        self.assertIn('in __split_huge_pmd() while thp_split ran', run['why'])

    def test_kcsan_reports_the_guest_cleared_are_not_splats_and_others_are(self):
        # make soak's KCSAN guest: kernel_log names each report it clears
        # (rootfs/bin/mmlab-kcsan); exactly those log lines pass
        known = '[  160.71] BUG: KCSAN: data-race in generic_update_time / inode_needs_update_time'
        stock = '[  170.20] BUG: KCSAN: data-race in get_swap_pages / swap_readpage'
        again = '[  180.30] BUG: KCSAN: data-race in get_swap_pages / swap_readpage'
        ours = '[  190.40] BUG: KCSAN: data-race in tlb_flush_mmu / zap_pte_range'

        def log(*reports):
            return ['mmlab: ktap begin', 'KTAP version 1', '1..1',
                    f'# known, not ours (/etc/mmlab/kcsan-known): {known}',
                    '# stock, not ours (no frame in a function the series changes): ' + stock,
                    f'        #   {stock}',     # a test quoting the kernel log
                    'ok 1 kernel_log', 'mmlab: ktap end', 'mmlab: kernel log follows',
                    *reports, 'mmlab: kernel log end']
        rc, summary, _, out = self.summarize(log(known, stock), target='qemu')
        self.assertEqual((rc, summary[:3]), (0, (1, 0, 0)))
        self.assertIn("known KCSAN report, not ours (listed in the guest's /etc/mmlab/kcsan-known, the tree's tests/kcsan-known), 1x: "
                      'BUG: KCSAN: data-race in generic_update_time', out)
        self.assertIn('stock KCSAN report, not ours (no frame in a function the series changes), '
                      '1x: BUG: KCSAN: data-race in get_swap_pages / swap_readpage', out)
        for other in (ours, again, f'    #   {ours}'):   # not cleared, or the title at another time
            rc, _, run, _ = self.summarize(log(known, stock, other), target='qemu')
            self.assertEqual(rc, 3, other)
            self.assertIn(ours[11:] if ours in other else other[11:], run['why'])

    def test_no_ktap_at_all(self):
        rc, summary, _, out = self.summarize(['Linux version 6.1.192', 'nothing else'])
        self.assertEqual((rc, summary), (1, (0, 1, 0, 1)))
        self.assertIn('the guest printed no KTAP results', out)


class KcsanTriage(unittest.TestCase):
    """rootfs/bin/mmlab-kcsan under busybox (the guest's sh and awk), and
    the function list it reads (mmlab.series_functions)."""
    KNOWN = 'data-race in generic_update_time / inode_needs_update_time'

    def triage(self, log, funcs='try_to_unmap_one\nmigrate_pages_batch\n'):
        with tempfile.TemporaryDirectory() as tmp:
            known, fns = os.path.join(tmp, 'known'), os.path.join(tmp, 'funcs')
            with open(known, 'w') as f:
                f.write(f'# why\n{self.KNOWN}\n')
            with open(fns, 'w') as f:
                f.write('# diff 0\n' + funcs)
            r = subprocess.run(['busybox', 'sh', os.path.join(ROOT, 'rootfs/bin/mmlab-kcsan'),
                                known, fns], input='\n'.join(log) + '\n',
                               capture_output=True, text=True)
        return r.returncode, r.stdout.splitlines(), r.stderr

    @staticmethod
    def report(t, title, first, second, irq=False):
        by = 'interrupt' if irq else 'task 200'
        return [f'[{t}] ' + l for l in
                ['==================================================================',
                 f'BUG: KCSAN: data-race in {title}', '',
                 f'write to 0xff17 of 8 bytes by {by} on cpu 1:', *first, '',
                 'read to 0xff17 of 8 bytes by task 199 on cpu 0:', *second, '',
                 'value changed: 0x01 -> 0x00', '', 'Reported by Kernel Concurrency Sanitizer on:',
                 '==================================================================']]

    def test_each_report_is_sorted(self):
        stock = self.report('  5.1', 'get_swap_pages / swap_readpage',
                            [' get_swap_pages+0xd7e/0x11e0', ' shrink_folio_list+0x1442/0x1d60'],
                            [' swap_readpage+0x216/0xbd0', ' do_swap_page+0xd2b/0x15f0'])
        ours = self.report('  6.2', 'folio_migrate_mapping / migration_entry_wait_on_locked',
                           [' migration_entry_wait_on_locked+0x1b2/0x560'],
                           [' folio_migrate_mapping+0x1c1/0xe70',
                            ' migrate_pages_batch.constprop.0+0x10b2/0x1c70'])
        # An interrupt's access: what it interrupted (below asm_*) is not it.
        irq = self.report('  7.3', '__cgroup_account_cputime / cgroup_rstat_flush_locked',
                          [' __cgroup_account_cputime+0x53/0xb0',
                           ' asm_sysvec_call_function_single+0x16/0x20',
                           ' try_to_unmap_one+0x55/0x900'],
                          [' cgroup_rstat_flush_locked+0x30/0x500'], irq=True)
        task = self.report('  8.4', 'a / b', [' a+0x1/0x2', ' asm_exc_page_fault+0x22/0x30'],
                           [' b+0x1/0x2', ' try_to_unmap_one+0x55/0x900'])
        listed = self.report('  9.5', 'generic_update_time / inode_needs_update_time',
                             [' generic_update_time+0x1/0x2'], [' try_to_unmap_one+0x5/0x9'])
        rc, out, err = self.triage(['[  1.0] unrelated'] + stock + ours + irq + task + listed)
        self.assertEqual((rc, err), (0, ''))
        self.assertEqual(out, [
            'stock\t[  5.1] BUG: KCSAN: data-race in get_swap_pages / swap_readpage',
            'ours migrate_pages_batch\t[  6.2] BUG: KCSAN: data-race in folio_migrate_mapping / '
            'migration_entry_wait_on_locked',
            'stock\t[  7.3] BUG: KCSAN: data-race in __cgroup_account_cputime / '
            'cgroup_rstat_flush_locked',
            'ours try_to_unmap_one\t[  8.4] BUG: KCSAN: data-race in a / b',
            f'known\t[  9.5] BUG: KCSAN: {self.KNOWN}'])
        # With no function listed, nothing is ours.
        rc, out, _ = self.triage(ours + task, funcs='')
        self.assertEqual([l.split('\t')[0] for l in out], ['stock', 'stock'])

    def test_a_missing_list_is_a_setup_error(self):
        r = subprocess.run(['busybox', 'sh', os.path.join(ROOT, 'rootfs/bin/mmlab-kcsan'),
                            '/nonexistent', '/dev/null'], input='', capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn('/nonexistent is missing: rebuild the guest root', r.stderr)

    @unittest.skipUnless(os.path.isdir(os.path.join(conf.build_dir(ROOT), 'tree.git')), 'needs make tree')
    def test_series_functions_of_the_tree(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, 'f')
            cmd = [sys.executable, '-m', 'mmlab.series_functions', KSRC,
                   os.path.join(conf.build_dir(ROOT), 'tree.git'), out]
            env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'scripts'))
            subprocess.run(cmd, check=True, capture_output=True, env=env)
            with open(out) as f:
                names = f.read().splitlines()
            mtime = os.stat(out).st_mtime_ns
            r = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
            self.assertEqual((os.stat(out).st_mtime_ns, r.stdout), (mtime, ''))   # unchanged tree
        self.assertTrue(names[0].startswith('# diff '))
        # changed bodies; a changed inline's callers (zap_pte_range calls
        # tlb_flush_mmu_tlbonly); not a stock function the series only calls
        # (migrate_pages_batch: 6.1's series changes it; 6.12 has it upstream)
        changed = ('try_to_unmap_one', 'tlb_flush_mmu_tlbonly', 'zap_pte_range',
                   'folio_lock_anon_vma_read', 'tlb_note_flushed_range')
        if conf.tree()['name'] == '6.1':
            changed += ('migrate_pages_batch',)
        for name in changed:
            self.assertIn(name, names)
        for name in ('folio_migrate_mapping', 'remove_migration_pte', 'swap_readpage'):
            self.assertNotIn(name, names)


@NEEDS_TREE
class Kcidb(unittest.TestCase):
    BUILD = 'mmlab:v6.1.192-0123456789abcdef:um-patched-0123456789ab'

    def results_of(self, log, timed_out=None):
        with tempfile.TemporaryDirectory() as out:
            with contextlib.redirect_stdout(io.StringIO()):
                results.summarize('r', lines_of(log), out, KSRC, timed_out, None, None,
                                  {'target': 'uml'})
            with open(os.path.join(out, 'r.run')) as f:
                run = json.load(f)
            with open(os.path.join(out, 'r.json')) as f:
                result = json.load(f)
        run['log'] = '/logs/r.log'
        return kcidb.run_tests('r', run, result, self.BUILD)

    def validate(self, tests):
        import jsonschema  # pylint: disable=import-outside-toplevel
        with open(os.path.join(ROOT, 'scripts/kcidb-v5.3.schema.json')) as f:
            schema = json.load(f)
        doc = {'version': {'major': 5, 'minor': 3},
               'checkouts': [{'id': 'mmlab:c', 'origin': 'mmlab'}],
               'builds': [{'id': self.BUILD, 'checkout_id': 'mmlab:c', 'origin': 'mmlab'}],
               'tests': tests}
        v = jsonschema.Draft7Validator(schema,
                                       format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
        return [e.message for e in v.iter_errors(doc)]

    def test_failure_tests(self):
        tests = self.results_of('fail-uml.log')
        self.assertEqual(self.validate(tests), [])
        by_path = {t['path']: t['status'] for t in tests}
        self.assertEqual(by_path['mmlab.munmap.600_pages_unmapped_guards_intact'], 'FAIL')
        self.assertEqual(by_path['mmlab.kernel_log'], 'PASS')
        self.assertEqual(by_path['mmlab.munmap'], 'FAIL')         # the test as a whole
        self.assertEqual(len(tests), 9)                             # 7 cases, 2 tests with cases
        self.assertEqual(len({t['id'] for t in tests}), 9)
        self.assertEqual(tests, self.results_of('fail-uml.log'))     # stable ids

    def test_timeout_gives_error_and_miss(self):
        tests = self.results_of('timeout-uml.log', timed_out=300)
        self.assertEqual(self.validate(tests), [])
        status = {t['path']: t['status'] for t in tests}
        # munmap was running when the guest was killed; the rest never ran
        self.assertEqual(status['mmlab.munmap'], 'ERROR')
        self.assertEqual(status['mmlab.kernel_log'], 'MISS')
        self.assertEqual(list(status.values()).count('ERROR'), 1)
        self.assertEqual(list(status.values()).count('MISS'), 8)
        self.assertNotIn('mmlab._', status)     # no nameless stand-ins

    def test_bench_medians_are_done_with_a_number(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(conf.build_dir(root), 'bench'))
            doc = {'boots_per_kernel': 5, 'results': [{
                'workload': 'munmap 4k', 'pages': 512,
                'stock': {'ns_per_page_median': 101.5, 'ns_per_page_boots': [100, 101.5, 103]},
                'patched': {'ns_per_page_median': 99.0, 'ns_per_page_boots': [98, 99, 99.5]}}]}
            with open(os.path.join(conf.build_dir(root), 'bench', 'results.json'), 'w') as f:
                json.dump(doc, f)
            blds = {'x86': {'id': self.BUILD}, 'x86-stock': {'id': self.BUILD + '-stock'}}
            tests = kcidb.bench_tests(root, blds)
        self.assertEqual([(t['path'], t['status'], t['number']['value'], t['number']['unit'])
                          for t in tests],
                         [('mmlab.bench.munmap_4k.pages_512', 'DONE', 101.5, 'ns/page'),
                          ('mmlab.bench.munmap_4k.pages_512', 'DONE', 99.0, 'ns/page')])
        self.assertEqual(tests[0]['build_id'], self.BUILD + '-stock')
        self.assertEqual(self.validate([dict(t, build_id=self.BUILD) for t in tests]), [])

    def test_bench_remote_threads_and_options_off_have_their_own_tests(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(conf.build_dir(root), 'bench'))
            res = [{'workload': 'migrate', 'pages': 65536, 'remote': r,
                    **{k: {'ns_per_page_median': 10.0 * r, 'ns_per_page_boots': [10.0 * r]}
                       for k in ('stock', 'off', 'patched')}} for r in (1, 2)]
            with open(os.path.join(conf.build_dir(root), 'bench', 'results.json'), 'w') as f:
                json.dump({'boots_per_kernel': 3, 'results': res}, f)
            blds = {'x86': {'id': 'p'}, 'x86-stock': {'id': 's'}, 'x86-off': {'id': 'o'}}
            tests = kcidb.bench_tests(root, blds)
        self.assertEqual(len({t['id'] for t in tests}), 6)
        self.assertIn('mmlab.bench.migrate.pages_65536.remote_2', {t['path'] for t in tests})
        self.assertEqual({t['build_id'] for t in tests}, {'p', 's', 'o'})


    def test_schema_rejects_a_bad_path(self):
        tests = self.results_of('fail-uml.log')
        tests[0]['path'] = 'mmlab.a b'
        tests[1]['status'] = 'BROKEN'
        self.assertEqual(len(self.validate(tests)), 2)


class BenchVerdicts(unittest.TestCase):
    """mmlab.bench: the medians and ratios of three kernels' boots,
    and what make bench requires of the batching."""

    @staticmethod
    def row(w, ns, ipis, remote=0, pages=65536):
        unit = 2 * pages if w == 'migrate' else pages
        return {'workload': w, 'pages': pages, 'unit_pages': unit, 'remote': remote,
                'ns_per_page': ns, 'tlb_ipis': ipis, 'flushes': 1, 'batch_allocs': 1,
                'pages_freed': 1, 'ok': 1}

    # the same boot-to-boot noise for every kernel: tight, or wide
    TIGHT = (0.995, 0.998, 1.0, 1.002, 1.005)
    WIDE = (0.8, 0.9, 1.0, 1.1, 1.25)

    def runs(self, migrate_off, ipis_off, munmap_off, noise=TIGHT):
        def boots(m, i, u):
            return [[self.row('migrate', m * f, i, 1), self.row('munmap', u * f, 0, 0, 512)]
                    for f in noise]
        return {'stock': boots(100.0, 131072, 10.0), 'off': boots(migrate_off, ipis_off, munmap_off),
                'patched': boots(migrate_off, ipis_off, munmap_off * 1.1)}

    def check(self, *args, **kw):
        results = bench.summarize(self.runs(*args, **kw))
        checks = bench.verdicts(results)
        return results, [v for v, _ in checks], [what for _, what in checks]

    def test_batched_migration_passes(self):
        results, verdicts, _ = self.check(40.0, 256, 10.1)
        self.assertEqual(verdicts, ['PASS', 'PASS', 'PASS'])
        mig = results[0]
        self.assertAlmostEqual(mig['ratio_off'], 0.4)
        self.assertAlmostEqual(mig['stock']['tlb_ipis_per_page'], 1.0)
        self.assertAlmostEqual(mig['stock']['tlb_ipis_per_mib'], 256.0)
        self.assertAlmostEqual(mig['ratio_off_ipis'], 256 / 131072)
        self.assertAlmostEqual(results[1]['ratio_on'], 1.111, places=3)
        # pages/s 2.5x, its interval from the pairwise ratios of the boots
        ci = mig['ci_speed_off']
        self.assertAlmostEqual(ci['estimate'], 2.5)
        self.assertTrue(2.45 < ci['low'] < 2.5 < ci['high'] < 2.55, ci)

    def test_too_slow_too_many_shootdowns_or_a_slower_workload_fail(self):
        self.assertEqual(self.check(60.0, 256, 10.0)[1], ['FAIL', 'PASS', 'PASS'])
        self.assertEqual(self.check(40.0, 131072 // 10, 10.0)[1], ['PASS', 'FAIL', 'PASS'])
        self.assertEqual(self.check(40.0, 256, 10.3)[1], ['PASS', 'PASS', 'FAIL'])

    def test_noisy_boots_give_no_verdict(self):
        # 1 % slower with boots 50 % apart: neither pass nor fail
        _, verdicts, whats = self.check(40.0, 256, 10.1, noise=self.WIDE)
        self.assertEqual(verdicts[2], 'INCONCLUSIVE')
        self.assertRegex(whats[2], r'pages/s 0\.990x stock \[0\.\d+, 1\.\d+\] \(>= 0\.98\): '
                                   r'about \d+ boots of each would decide it')
        # a 1.25x migration under the same noise is still clearly short of 2x
        self.assertEqual(self.check(80.0, 256, 10.0, noise=self.WIDE)[1][0], 'FAIL')

    def test_three_boots_have_no_interval(self):
        _, verdicts, whats = self.check(40.0, 256, 10.0, noise=(0.99, 1.0, 1.01))
        self.assertEqual(verdicts, ['INCONCLUSIVE'] * 3)
        self.assertIn('no 95 % interval from 3 boots', whats[0])

    @unittest.skipUnless(shutil.which('gnuplot'), 'gnuplot is missing (make deps)')
    def test_plot_with_error_bars(self):
        results = bench.summarize(self.runs(40.0, 256, 10.1, noise=self.WIDE))
        bench.verdicts(results)
        with tempfile.TemporaryDirectory() as out:
            png = bench.plot(results, out, 5, 'tcg')
            self.assertGreater(os.path.getsize(png), 10000)
            with open(os.path.join(out, 'ratios.dat')) as f:
                rows = f.read().splitlines()
        # label, then estimate, low, high for options off and on
        self.assertEqual(len(rows), 2)
        est, lo, hi = map(float, rows[1].split('" ')[1].split()[:3])
        self.assertTrue(lo < est < hi, rows[1])

    def test_a_boot_without_every_remote_count_is_caught(self):
        rows = [self.row('migrate', 1.0, 1, r) for r in (1, 3)]
        self.assertEqual(bench.missing_remotes(rows, 4), [2])
        self.assertEqual(bench.missing_remotes(rows[:1], 2), [])

    def test_other_workloads_on_one_kernel_are_an_error(self):
        runs = self.runs(40.0, 256, 10.0)
        runs['off'][1] = runs['off'][1][:1]
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            bench.summarize(runs)


if __name__ == '__main__':
    unittest.main()
