#!/usr/bin/python3
"""machines.mk and trees.mk: every block complete, and make and
scripts/mmlab/conf.py read the same value for every field of every
machine and tree (make through the Makefile's M function, its `from`
block filling what a block leaves out; conf through conf.blocks).

usage: python3 -m unittest tests/host/test_tables.py
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(ROOT, 'scripts')
sys.path.insert(0, SCRIPTS)
from mmlab import conf  # noqa: E402

def make_values(root=ROOT):
    """{(NAME, FIELD): value} as make reads the tables of root (the
    Makefile's own machine-fields target, run on root's tables)."""
    r = subprocess.run(['make', '-s', '--no-print-directory', '-f', os.path.join(ROOT, 'Makefile'),
                        f'ROOT={root}', 'machine-fields'], capture_output=True, text=True, check=True)
    out = {}
    for line in r.stdout.splitlines():
        key, _, value = line.partition('\t')
        name, _, field = key.rpartition('.')
        out[name, field] = value
    return out


def without_line(src, dst, key):
    """Copy the table src to dst leaving out the line of key (NAME.FIELD)."""
    with open(src) as f:
        lines = f.readlines()
    kept = [l for l in lines if l.split('=')[0].strip() != key]
    assert len(kept) == len(lines) - 1, f'{key} is not one line of {src}'
    with open(dst, 'w') as f:
        f.writelines(kept)


@unittest.skipUnless(shutil.which('make'), 'needs make')
class Tables(unittest.TestCase):
    def test_every_block_is_complete(self):
        self.assertEqual(conf.problems(), [])

    def test_make_and_conf_read_the_same_fields(self):
        got = make_values()
        self.assertEqual(len(got), len(conf.MACHINES) * len(conf.FIELDS) +
                         len(conf.TREES) * len(conf.TREE_FIELDS))
        diff = []
        for n, m in conf.MACHINES.items():
            for f in conf.FIELDS:
                if got[n, f] != m.fields.get(f, ''):
                    diff.append(f'{n}.{f}: make {got[n, f]!r}, conf {m.fields.get(f, "")!r}')
        for n, t in conf.TREES.items():
            for f in conf.TREE_FIELDS:
                if got[n, f] != t.get(f, ''):
                    diff.append(f'{n}.{f}: make {got[n, f]!r}, conf {t.get(f, "")!r}')
        self.assertEqual(diff, [])

    def test_from_fills_the_fields_a_block_leaves_out(self):
        # sh4 takes arm64's, which takes x86's: a chain of two
        self.assertEqual(conf.machine('sh4').fields.get('timeout_kvm'),
                         conf.machine('x86').fields['timeout_kvm'])
        self.assertEqual(make_values()['sh4', 'timeout_kvm'], conf.machine('x86').fields['timeout_kvm'])
        # a field given empty is empty, not its from block's
        self.assertEqual(conf.machine('uml-kasan').fields['link'], '')

    def test_the_get_command_prints_typed_fields(self):
        def get(name, field):
            return subprocess.run([sys.executable, '-m', 'mmlab.conf', 'get', name, field],
                                  env=dict(os.environ, PYTHONPATH=SCRIPTS), capture_output=True,
                                  text=True)
        r = get('arm64', 'make_targets')
        self.assertEqual((r.returncode, r.stdout), (0, 'arm64\n'))
        r = get('nosuch', 'image')
        self.assertEqual(r.returncode, 2)
        self.assertIn(' '.join(conf.MACHINES), r.stderr)


@unittest.skipUnless(shutil.which('make'), 'needs make')
class PluginByCompiler(unittest.TestCase):
    """KCIDB's config_name names sh4's plugin only where the build's GCC
    (its LINUX_COMPILER) is one plugin_gcc lists, as scripts/plugin.sh
    decides."""
    SH4 = conf.MACHINES['sh4']

    def test_gcc_12_is_compiled_with_it(self):
        self.assertIn('compiled with scripts/sh-treg-combine-off.cc', self.SH4.config_name(
            'sh4-linux-gnu-gcc (Debian 12.2.0-13) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40'))

    def test_gcc_14_is_not(self):
        self.assertNotIn('compiled with', self.SH4.config_name(
            'sh4-linux-gnu-gcc (Debian 14.2.0-19) 14.2.0, GNU ld (GNU Binutils for Debian) 2.44'))

    def test_an_unknown_compiler_keeps_the_row(self):
        self.assertIn('compiled with', self.SH4.config_name(None))


class MissingField(unittest.TestCase):
    """A block without a required field (uml's timeout: uml-kasan, whose
    from is uml, has none either) is reported."""
    KEY = 'uml.timeout'
    WANT = ['machines.mk: uml has no timeout', 'machines.mk: uml-kasan has no timeout']

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, 'root')
        os.makedirs(os.path.join(self.root, 'scripts'))
        # the repository as it is (fragments, patches/, rootfs/, plugins),
        # but the tables and the package are copies
        for e in os.listdir(ROOT):
            if e not in ('machines.mk', 'trees.mk', 'scripts', 'build', '.git'):
                os.symlink(os.path.join(ROOT, e), os.path.join(self.root, e))
        for e in os.listdir(SCRIPTS):
            if e != 'mmlab':
                os.symlink(os.path.join(SCRIPTS, e), os.path.join(self.root, 'scripts', e))
        shutil.copytree(os.path.join(SCRIPTS, 'mmlab'), os.path.join(self.root, 'scripts', 'mmlab'),
                        ignore=shutil.ignore_patterns('__pycache__'))
        without_line(os.path.join(ROOT, 'machines.mk'), os.path.join(self.root, 'machines.mk'),
                     self.KEY)
        shutil.copy(os.path.join(ROOT, 'trees.mk'), os.path.join(self.root, 'trees.mk'))

    def tearDown(self):
        self.tmp.cleanup()

    def test_conf_check_of_a_checkout_reports_it(self):
        # a checkout whose machines.mk lacks it: conf check there says so
        r = subprocess.run([sys.executable, '-B', '-m', 'mmlab.conf', 'check'],
                           env=dict(os.environ, PYTHONPATH=os.path.join(self.root, 'scripts')),
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        lines = [l[len('mmlab: '):] for l in r.stdout.splitlines()]
        for want in self.WANT:
            self.assertIn(want, lines)
        self.assertIn(f'{len(conf.MACHINES)} machines, {len(conf.TREES)} trees: 2 problems',
                      lines[-1])

    def test_make_reads_it_empty_too(self):
        got = make_values(self.root)
        self.assertEqual((got['uml', 'timeout'], got['uml-kasan', 'timeout']), ('', ''))

    def test_problems_of_another_root(self):
        bad = conf.problems(root=self.root)
        for want in self.WANT:
            self.assertIn(want, bad)


if __name__ == '__main__':
    unittest.main()


def make_help(*args):
    """make help with ARGS in a scratch directory's copy of nothing: the
    repository's Makefile, its exit status and output."""
    # a user's shell: not what a make running these tests exports
    env = {k: v for k, v in os.environ.items()
           if k not in ('KVER', 'KSRC', 'GITDIR', 'KSRC_IS_USER', 'MMLAB_TREE', 'MMLAB_BUILD',
                        'MAKEFLAGS', 'MFLAGS', 'MAKEOVERRIDES', 'MAKELEVEL')}
    return subprocess.run(['make', '-s', '--no-print-directory', '-C', ROOT, 'help', *args],
                          capture_output=True, text=True, env=dict(env, MMLAB_LOCKED='1'))


def fake_tree(d, version, patchlevel):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'Makefile'), 'w') as f:
        f.write(f'VERSION = {version}\nPATCHLEVEL = {patchlevel}\nSUBLEVEL = 0\n')
    return d


@unittest.skipUnless(shutil.which('make'), 'needs make')
class TreeChoice(unittest.TestCase):
    """Which tree make uses (KVER, KSRC's version, the release's
    linux-source) and the one-line errors for one it cannot use."""

    def test_the_release_picks_its_own_linux_source(self):
        self.assertEqual(conf.default_tree('bookworm'), '6.1')
        self.assertEqual(conf.default_tree('trixie'), '6.12')
        self.assertEqual(conf.default_tree('sid-unknown'), next(iter(conf.TREES)))

    def test_each_tree_builds_in_its_own_directory(self):
        self.assertEqual(conf.build_dir('/r', '6.1'), '/r/build/6.1')
        self.assertEqual(conf.build_dir('/r', '6.12'), '/r/build/6.12')
        self.assertEqual(conf.patches_dir('/r', '6.12'), '/r/patches/6.12')
        os.environ['MMLAB_TREE'] = '6.12'
        try:
            self.assertEqual(conf.machine('uml').kernel('/r'), '/r/build/6.12/uml/linux')
            self.assertEqual(conf.machine('x86').root_image('/r'), '/r/build/6.12/initramfs.cpio')
        finally:
            del os.environ['MMLAB_TREE']

    def test_kver_names_the_tree(self):
        for t in conf.TREES:
            r = make_help(f'KVER={t}')
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f'Tree: KVER={t} ({conf.tree(t)["package"]}', r.stdout)
            self.assertIn(f'build/KVER below is build/{t}', r.stdout)

    def test_a_kver_with_no_series_is_one_error_and_exit_2(self):
        r = make_help('KVER=6.5')
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        first = r.stderr.splitlines()[0]
        self.assertIn('mmlab: error: KVER=6.5: the project has series for Linux 6.1, 6.12 only', first)
        self.assertIn("apt offers linux-source", first)
        self.assertNotIn('Tree:', r.stdout)

    def test_ksrc_gives_its_version_and_must_agree_with_kver(self):
        with tempfile.TemporaryDirectory() as t:
            k612 = fake_tree(os.path.join(t, 'a'), 6, 12)
            r = make_help(f'KSRC={k612}')
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f'Tree: KVER=6.12 (linux-source-6.12, KSRC={k612}', r.stdout)
            r = make_help(f'KSRC={k612}', 'KVER=6.1')
            self.assertEqual(r.returncode, 2)
            self.assertIn(f'KVER=6.1 but KSRC={k612} is Linux 6.12', r.stderr)
            r = make_help(f'KSRC={t}')
            self.assertEqual(r.returncode, 2)
            self.assertIn(f'KSRC={t} is not a kernel tree', r.stderr)
            k65 = fake_tree(os.path.join(t, 'b'), 6, 5)
            r = make_help(f'KSRC={k65}')
            self.assertEqual(r.returncode, 2)
            self.assertIn(f'KSRC={k65} is Linux 6.5: the project has series for Linux 6.1, 6.12 only',
                          r.stderr)
