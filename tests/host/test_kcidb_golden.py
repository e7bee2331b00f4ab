#!/usr/bin/python3
"""make kcidb's document against tests/host/golden/kcidb.json, which the
code before the machines table (fae053e, scripts/kcidb.py with its own
BUILDS and IMAGES) made from the inputs below: a root whose build/NAME of
uml, x86, arm64, arm, s390x and sh4 each hold a .config ("# config of
NAME"), the kernel image and (all but uml) include/generated/compile.h;
three recorded runs in build/logs (test-uml, qemu-verify and
qemu-verify-arm64: munmap with a passing and a skipped case, kernel_log);
a KSRC whose `make kernelversion` says 6.1.192, dpkg-query saying
6.1.192-3 for linux-source-6.1, and a fixed two-patch series of its own
(SERIES; regenerated for it on 2026-12-06, so that editing patches/ does
not change the document). The root's path is @ROOT@ in the golden file;
nothing else in it varies.

usage: python3 -m unittest tests/host/test_kcidb_golden.py
"""
import hashlib
import importlib.util
import json
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
# The golden document is 6.1's: its machines' build/6.1/NAME and series.
os.environ['MMLAB_TREE'] = '6.1'
from mmlab import conf  # noqa: E402
from mmlab.series import patchset_hash  # noqa: E402

GOLDEN = os.path.join(HERE, 'golden', 'kcidb.json')
BUILT = ('uml', 'x86', 'arm64', 'arm', 's390x', 'sh4')
COMPILER = 'gcc (Debian 12.2.0-14+deb12u1) 12.2.0'
# run name -> its machine
RUNS = {'test-uml': 'uml', 'qemu-verify': 'x86', 'qemu-verify-arm64': 'arm64'}
RESULT = {'name': 'main', 'status': 'PASS',
          'sub_groups': [{'name': 'munmap', 'status': 'PASS', 'sub_groups': [],
                          'test_cases': [{'name': 'unmaps 8 pages', 'status': 'PASS'},
                                         {'name': 'thp', 'status': 'SKIP'}]}],
          'test_cases': [{'name': 'kernel_log', 'status': 'PASS'}]}

# The fixture's series (patches/6.1/ of its root), fixed.
SERIES = {
    'series': '# a fixed series for the golden document\n0001-mm-one.patch\n0002-mm-two.patch\n',
    '0001-mm-one.patch': 'From: mmlab <mmlab@localhost>\nSubject: [PATCH] mm: one\n\n'
                         'Signed-off-by: mmlab <mmlab@localhost>\n---\n'
                         '--- a/mm/one.c\n+++ b/mm/one.c\n@@ -1 +1 @@\n-a\n+b\n',
    '0002-mm-two.patch': 'From: mmlab <mmlab@localhost>\nSubject: [PATCH] mm: two\n\n'
                         'Signed-off-by: mmlab <mmlab@localhost>\n---\n'
                         '--- a/mm/two.c\n+++ b/mm/two.c\n@@ -1 +1 @@\n-c\n+d\n',
}

HAVE_JSONSCHEMA = importlib.util.find_spec('jsonschema') is not None


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)


class Fixture:
    """The golden document's inputs under a temporary root."""

    def __init__(self, machines=BUILT, with_machine=False):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, 'root')
        root = self.root
        os.makedirs(os.path.join(root, 'scripts'))
        # a series of its own: the golden document must not change with
        # every edit of the repository's series
        for name, text in SERIES.items():
            write(os.path.join(root, 'patches', '6.1', name), text)
        os.symlink(os.path.join(SCRIPTS, 'kcidb-v5.3.schema.json'),
                   os.path.join(root, 'scripts', 'kcidb-v5.3.schema.json'))
        self.sha = {}
        for name in machines:
            m = conf.machine(name)
            cfg = os.path.join(m.out(root), '.config')
            write(cfg, f'# config of {name}\n')
            write(m.kernel(root), 'kernel\n')
            os.utime(cfg, (1_000_000, 1_000_000))
            os.utime(m.kernel(root), (2_000_000, 2_000_000))
            if m.boot != 'uml':
                write(os.path.join(m.out(root), 'include/generated/compile.h'),
                      f'#define UTS_MACHINE "{m.arch}"\n#define LINUX_COMPILER "{COMPILER}"\n')
            with open(cfg, 'rb') as f:
                self.sha[name] = hashlib.sha256(f.read()).hexdigest()
        self.logs = os.path.join(conf.build_dir(root), 'logs')
        os.makedirs(self.logs)
        ph = patchset_hash(conf.patches_dir(root, '6.1'))
        for run, name in RUNS.items():
            m = conf.machine(name)
            rec = {'target': m.boot, 'kernel': m.kernel(root), 'accel': 'tcg',
                   'started': '2026-12-06T07:00:00+00:00', 'seconds': 10.0,
                   'command': f'{m.qemu or m.kernel(root)} ...',
                   'config_sha256': self.sha[name], 'patchset_hash': ph,
                   'planned': ['munmap', 'kernel_log'],
                   'top': [['munmap', 'PASS'], ['kernel_log', 'PASS']], 'rc': 0,
                   'log': os.path.join(self.logs, f'{run}.log')}
            if with_machine:
                rec['machine'] = name
                del rec['kernel']   # the machine alone must place it
            write(os.path.join(self.logs, f'{run}.run'), json.dumps(rec))
            write(os.path.join(self.logs, f'{run}.json'), json.dumps(RESULT))
            write(os.path.join(self.logs, f'{run}.log'), 'console\n')
        self.ksrc = os.path.join(self.tmp.name, 'ksrc')
        write(os.path.join(self.ksrc, 'Makefile'), 'kernelversion:\n\t@echo 6.1.192\n')
        self.bin = os.path.join(self.tmp.name, 'bin')
        # dpkg-query -W -f FORMAT PACKAGE: a version for the tree's package only
        write(os.path.join(self.bin, 'dpkg-query'),
              '#!/bin/sh\n[ "$4" = linux-source-6.1 ] && printf 6.1.192-3 && exit 0\n'
              'echo "dpkg-query: no packages found matching $4" >&2; exit 1\n')
        os.chmod(os.path.join(self.bin, 'dpkg-query'), 0o755)
        self.out = os.path.join(self.tmp.name, 'kcidb.json')

    def run(self, **env):
        e = dict(os.environ, PYTHONPATH=SCRIPTS, PATH=f'{self.bin}:{os.environ["PATH"]}')
        e['MMLAB_TREE'] = '6.1'
        e.update(env)
        return subprocess.run([sys.executable, '-m', 'mmlab.kcidb', self.root, self.ksrc,
                               self.logs, self.out], env=e, capture_output=True, text=True)

    def document(self):
        """The document as the golden file has it: the root is @ROOT@."""
        with open(self.out) as f:
            return f.read().replace(self.root, '@ROOT@')

    def cleanup(self):
        self.tmp.cleanup()


@unittest.skipUnless(HAVE_JSONSCHEMA, 'needs python3-jsonschema (make deps)')
@unittest.skipUnless(shutil.which('make'), 'needs make')
class KcidbGolden(unittest.TestCase):
    def setUp(self):
        with open(GOLDEN) as f:
            self.golden = f.read()

    def check(self, fx, **env):
        try:
            r = fx.run(**env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn('KCIDB v5.3, valid: 1 checkouts, 6 builds, 12 tests (9 PASS, 3 SKIP)',
                          r.stdout)
            doc = fx.document()
        finally:
            fx.cleanup()
        if doc != self.golden:     # field by field: a readable difference
            self.assertEqual(json.loads(doc), json.loads(self.golden))
        self.assertEqual(doc, self.golden)

    def test_runs_placed_by_their_kernel_as_the_old_records_have_it(self):
        self.check(Fixture())

    def test_runs_placed_by_their_machine(self):
        self.check(Fixture(with_machine=True))

    def test_the_tree_named_by_mmlab_tree(self):
        self.check(Fixture(), MMLAB_TREE='6.1')

    def test_an_unknown_tree_is_a_setup_error_naming_the_trees(self):
        fx = Fixture()
        try:
            r = fx.run(MMLAB_TREE='0.0')
        finally:
            fx.cleanup()
        self.assertEqual(r.returncode, 2)
        self.assertIn("no kernel tree '0.0' in trees.mk", r.stderr)
        self.assertIn(' '.join(conf.TREES), r.stderr)

    def test_every_machine_built_is_a_build_of_its_row(self):
        # the sanitizer and bench kernels too: a soak run hangs on its own
        # kernel's build, the stock kernel on the checkout without the series
        names = list(conf.MACHINES)
        fx = Fixture(machines=names, with_machine=True)
        try:
            rec = os.path.join(fx.logs, 'test-uml.run')
            with open(rec) as f:
                run = json.load(f)
            run.update(machine='uml-kasan', config_sha256=fx.sha['uml-kasan'])
            write(os.path.join(fx.logs, 'soak-uml.run'), json.dumps(run))
            shutil.copy(os.path.join(fx.logs, 'test-uml.json'), os.path.join(fx.logs, 'soak-uml.json'))
            r = fx.run()
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(fx.out) as f:
                doc = json.load(f)
        finally:
            fx.cleanup()
        blds = {b['misc']['output_dir'].rsplit('/', 1)[1]: b for b in doc['builds']}
        self.assertEqual(list(blds), names)
        for n, b in blds.items():
            m = conf.machine(n)
            self.assertEqual((b['architecture'], b['misc']['variant'], b['config_name']),
                             (m.kcidb_arch, m.variant, m.config_name()), n)
            self.assertEqual(b['status'], 'PASS', n)
        stock = [c['id'] for c in doc['checkouts'] if not c['patchset_hash']]
        self.assertEqual(len(stock), 1)
        self.assertEqual(blds['x86-stock']['checkout_id'], stock[0])
        self.assertEqual(blds['x86-off']['config_name'],
                         "x86_64_defconfig + kvm_guest.config + qemu-config "
                         "without the series' options")
        soak = {t['build_id'] for t in doc['tests'] if ':soak-uml:' in t['id']}
        self.assertEqual(soak, {blds['uml-kasan']['id']})


if __name__ == '__main__':
    unittest.main()
