#!/usr/bin/python3
"""tests/manifest and rootfs/etc/mmlab/splat, the files the host and the
guest's runner (rootfs/bin/mmlab-test) both read: the manifest matches
tests/*.c and machines.mk, the runner reads it as mmlab.manifest does (run
with busybox sh over a fake /tests, as in the guest), and every splat
pattern means the same to Python's re and to grep -E.

usage: python3 -m unittest tests/host/test_manifest.py
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
from mmlab import manifest  # noqa: E402
from mmlab import outcome  # noqa: E402

RUNNER = os.path.join(ROOT, 'rootfs/bin/mmlab-test')
SPLAT = os.path.join(ROOT, 'rootfs/etc/mmlab/splat')
MMLAB_H = os.path.join(ROOT, 'tests/mmlab.h')
BUSYBOX = shutil.which('busybox')
NEEDS_BUSYBOX = unittest.skipUnless(BUSYBOX, 'needs busybox (apt-get install busybox-static)')


def busybox_env(tmp, **extra):
    """An environment whose PATH has only busybox's applets, as the guest's."""
    bindir = os.path.join(tmp, 'bin')
    if not os.path.isdir(bindir):
        os.makedirs(bindir)
        applets = subprocess.run([BUSYBOX, '--list'], capture_output=True, text=True,
                                 check=True).stdout.split()
        for a in applets:
            os.symlink(BUSYBOX, os.path.join(bindir, a))
    env = {'PATH': bindir, 'LC_ALL': 'C'}
    env.update(extra)
    return env


class Manifest(unittest.TestCase):
    def test_no_problems(self):
        self.assertEqual(manifest.check(), [])

    def test_every_test_once(self):
        names = [t.name for t in manifest.read()]
        sources = sorted(f[:-2] for f in os.listdir(os.path.join(ROOT, 'tests'))
                         if f.endswith('.c'))
        self.assertEqual(sorted(names), sources)

    def test_tests_for_arm64(self):
        arm64 = manifest.tests_for('arm64')
        not_arm64 = {'bench', 'file_writeback', 'um_host_ops', 'x86_flush_range', 'x86_lazy_tlb'}
        for name in not_arm64:
            self.assertNotIn(name, arm64)
        rest = {t.name for t in manifest.read()} - not_arm64
        self.assertEqual(set(arm64), rest)

    def test_tests_for_as_the_makefile(self):
        """The Makefile's tests_for, on the same file (make tests-for)."""
        for m in ('uml', 'x86', 'arm64', 'sh4'):
            made = subprocess.run(['make', '-s', '-C', ROOT, 'tests-for', f'MACHINE={m}'],
                                  capture_output=True, text=True, check=True).stdout.split()
            self.assertEqual(manifest.tests_for(m), made, m)

    def test_check_names_what_is_wrong(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in ('a', 'b', 'c'):
                open(os.path.join(tmp, name + '.c'), 'w').close()
            path = os.path.join(tmp, 'manifest')
            with open(path, 'w') as f:
                f.write('# name set machines mib timeout\n\n'
                        'a  quick  all        16  -\n'
                        'b  fast   uml,vax    x   0\n'
                        'a  slow   all        -   -\n'
                        'gone quick all       -   -\n'
                        'short quick\n')
            bad = '\n'.join(manifest.check(path, tmp))
            for want in ("set 'fast'", "machine 'vax'", "mib 'x'", "timeout '0'",
                         'a again', f'no {tmp}/gone.c', f'{tmp}/c.c has no line',
                         f'{path}:7: 2 columns'):
                self.assertIn(want, bad)
            self.assertNotIn("'uml'", bad)
            self.assertEqual(len(bad.splitlines()), 8, bad)


@NEEDS_BUSYBOX
class Runner(unittest.TestCase):
    """mmlab-test's reading of the manifest, with MMLAB_TEST_DRY=1 (it prints
    "name set mib timeout" per test it would run, and stops)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.etc = os.path.join(self.tmp, 'etc')
        self.tests = os.path.join(self.tmp, 'tests')
        os.makedirs(self.etc)
        os.makedirs(self.tests)
        shutil.copy(manifest.PATH, os.path.join(self.etc, 'manifest'))
        # the guest's /tests: one executable per manifest line
        for t in manifest.read():
            path = os.path.join(self.tests, t.name)
            with open(path, 'w') as f:
                f.write('#!/bin/sh\n')
            os.chmod(path, 0o755)

    def dry(self, *args, **env):
        out = subprocess.run(
            [BUSYBOX, 'sh', RUNNER, *args], capture_output=True, text=True, timeout=60,
            env=busybox_env(self.tmp, MMLAB_ETC=self.etc, TESTS_DIR=self.tests,
                            MMLAB_TEST_DRY='1', **env))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stderr, '')
        return [line.split() for line in out.stdout.splitlines()]

    def test_quick_is_the_manifests(self):
        got = [f[0] for f in self.dry('quick')]
        self.assertEqual(got, sorted(t.name for t in manifest.read() if t.set == 'quick'))
        self.assertNotIn('bench', got)

    def test_all(self):
        got = [f[0] for f in self.dry()]
        self.assertEqual(got, sorted(t.name for t in manifest.read()))

    def test_each_tests_columns(self):
        want = {t.name: [t.set, '-' if t.mib is None else str(t.mib),
                         str(t.timeout or 120)] for t in manifest.read()}
        for fields in self.dry():
            self.assertEqual(fields[1:], want[fields[0]], fields[0])

    def test_timeouts(self):
        """`-`: TEST_TIMEOUT (init's mmlab.test_timeout=, else 120); a number
        overrides it."""
        with open(os.path.join(self.etc, 'manifest'), 'a') as f:
            f.write('extra   quick  all  64  33\n')
        open(os.path.join(self.tests, 'extra'), 'w').close()
        got = {f[0]: f[1:] for f in self.dry('munmap', 'extra', 'bench', TEST_TIMEOUT='300')}
        self.assertEqual(got, {'munmap': ['quick', '-', '300'], 'extra': ['quick', '64', '33'],
                               'bench': ['slow', '-', '300']})

    def test_slow_and_unlisted(self):
        """A test the manifest does not list counts as quick, with no needs."""
        with open(os.path.join(self.etc, 'manifest'), 'a') as f:
            f.write('# slow_looking  slow  all  -  -\n')
        open(os.path.join(self.tests, 'newcomer'), 'w').close()
        got = {f[0]: f[1:] for f in self.dry('quick')}
        self.assertEqual(got['newcomer'], ['-', '-', '120'])
        self.assertFalse({'bench', 'anon_vma', 'anon_unmap', 'fork_cow'} & set(got))

    def test_no_manifest(self):
        os.unlink(os.path.join(self.etc, 'manifest'))
        got = [f[0] for f in self.dry('quick')]
        self.assertEqual(got, sorted(os.listdir(self.tests)))

    def test_memory_skip_text(self):
        """The runner's memory check and reason, as mmlab.h's mmlab_mem_why():
        the block from avail_mib() to KSFT_MIB=, run on this host's
        /proc/meminfo."""
        with open(RUNNER) as f:
            text = f.read()
        m = re.search(r'^avail_mib\(\).*?(?=^KSFT_MIB=)', text, re.M | re.S)
        self.assertTrue(m, 'no avail_mib() ... KSFT_MIB= block in mmlab-test')
        script = m.group(0) + '''
mem_fits 1 && echo fits1
mem_fits 999999999 || echo toobig
echo "$MEM_FIX"
mem_why 999999999
'''
        out = subprocess.run([BUSYBOX, 'sh', '-c', script], capture_output=True, text=True,
                             env=busybox_env(self.tmp), check=True).stdout.splitlines()
        self.assertEqual(out[:2], ['fits1', 'toobig'])
        with open(MMLAB_H) as f:
            fixes = dict(re.findall(r'#(ifdef __sh__|else)\n#define MMLAB_MEM_FIX\t"([^"]*)"',
                                    f.read()))
        self.assertEqual(out[2], fixes['else'])     # this host is not sh4
        self.assertIn(f'sh*) MEM_FIX="{fixes["ifdef __sh__"]}"', text)
        self.assertRegex(out[3], r'^needs 999999999 MiB available, the guest has \d+ MiB '
                                 r'\(boot with mem=384M\)$')
        # tests/host/run.sh's check of a UML boot's memory skips
        self.assertRegex(out[3], 'needs [0-9]* MiB.*mem=')


class Splat(unittest.TestCase):
    SAMPLES = {
        'BUG: kernel NULL pointer dereference, address: 0000000000000000': True,
        'Oops: 0000 [#1] PREEMPT SMP NOPTI': True,
        'Kernel panic - not syncing: Attempted to kill init!': True,
        'WARNING: CPU: 0 PID: 1 at mm/mmu_gather.c:42 tlb_flush+0x1/0x2': True,
        'INFO: task kworker/0:1:12 blocked for more than 120 seconds.': True,
        'invalid opcode: 0000 [#1] SMP': True,
        'mmlab: test munmap starts': False,
        'Freeing unused kernel image (initmem) memory: 1024K': False,
        '': False,
    }

    def patterns(self):
        return outcome.splat_patterns(SPLAT)

    def test_python_re(self):
        pats = self.patterns()
        self.assertTrue(pats)
        for p in pats:
            re.compile(p)
            # what POSIX ERE lacks or reads otherwise (the file's header says so)
            self.assertNotRegex(p, r'\\[A-Za-z0-9]|\(\?', f'{p!r}: \\d, \\s, (?...) are not ERE')
        for line, want in self.SAMPLES.items():
            self.assertEqual(bool(outcome.splat_re().search(line)), want, line)

    def greps(self):
        out = [['grep']]
        if BUSYBOX:
            out.append([BUSYBOX, 'grep'])
        return out

    def stripped(self, tmp):
        """The patterns as the runner gives them to grep -f (its own grep -v)."""
        with open(RUNNER) as f:
            m = re.search(r"^(grep -v -e '\^#' [^>]*)> /tmp/splat\.re", f.read(), re.M)
        self.assertTrue(m, 'no grep -v ... > /tmp/splat.re in mmlab-test')
        cmd = m.group(1).replace('"$ETC/splat"', '"$1"')
        path = os.path.join(tmp, 'splat.re')
        with open(path, 'w') as f:
            subprocess.run(['sh', '-c', cmd, 'sh', SPLAT], stdout=f, check=True)
        with open(path) as f:
            self.assertEqual(f.read().splitlines(), self.patterns())
        return path

    def test_grep_e(self):
        with tempfile.TemporaryDirectory() as tmp:
            res = self.stripped(tmp)
            for grep in self.greps():
                for p in self.patterns():   # each alone: none is an error to grep
                    r = subprocess.run(grep + ['-E', '-e', p], input='', capture_output=True,
                                       text=True)
                    self.assertEqual((r.returncode, r.stderr), (1, ''), f'{grep} -E {p!r}')
                for line, want in self.SAMPLES.items():
                    r = subprocess.run(grep + ['-E', '-f', res], input=line + '\n',
                                       capture_output=True, text=True)
                    self.assertEqual(r.returncode, 0 if want else 1,
                                     f'{grep}: {line!r}: {r.stderr}')

    def test_same_verdict_line_by_line(self):
        """Python's re and grep -E agree on each line of the recorded logs."""
        logs = os.path.join(HERE, 'logs')
        lines = []
        for name in sorted(os.listdir(logs)):
            with open(os.path.join(logs, name), errors='replace') as f:
                lines += [line.rstrip('\n') for line in f]
        lines += list(self.SAMPLES)
        py = {i for i, line in enumerate(lines) if outcome.splat_re().search(line)}
        self.assertTrue(py)
        with tempfile.TemporaryDirectory() as tmp:
            res = self.stripped(tmp)
            for grep in self.greps():
                r = subprocess.run(grep + ['-n', '-a', '-E', '-f', res],
                                   input='\n'.join(lines) + '\n', capture_output=True,
                                   text=True, errors='replace')
                found = {int(line.split(':', 1)[0]) - 1 for line in r.stdout.splitlines()}
                self.assertEqual(found, py, grep)


if __name__ == '__main__':
    unittest.main()
