"""The QEMU and UML command lines of every machine and the LAVA job files,
made by the one builder (scripts/mmlab/qemu.py) from machines.mk, against
the golden copies tests/host/golden/ kept from before the tables (ef76733).

Differences from ef76733, each on purpose:
- bench: the same arguments, -append now last as in every other command
  line (one builder); the golden argv has this order.
- the LAVA job's comment names scripts/mmlab/lava.py (the module moved).
Added after ef76733: soak-x86 (x86-kasan) and the KVM probe's argv, made by
this code; each is what ef76733's Makefile and boot.py ran (read there).
"""
import json
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
# The golden command lines are 6.1's (build/6.1/NAME).
os.environ['MMLAB_TREE'] = '6.1'

from mmlab import boot, conf, lava, qemu  # noqa: E402
from mmlab import bench  # noqa: E402

GOLDEN = os.path.join(HERE, 'golden')
ARCH_MODE = ('kunit,anon_unmap,anon_vma,fork_cow,migrate,mmu_gather_counters,mprotect_split,'
             'munmap,thp_split,tlb_smp_race,tlb_smp_reuse')
# golden name -> (machine, boot.py arguments, accelerator) as the Makefile
# targets of the same name run them
RUNS = {
    'test-uml': ('uml', ['--name', 'test-uml', '--timeout', '300', '--mode', 'quick'], None),
    'run': ('uml', ['--interactive', '--mode', 'shell'], None),
    'soak-uml': ('uml-kasan', ['--name', 'soak-uml', '--mode', 'soak', '--append', 'mmlab.soak=180',
                               '--append', 'mmlab.seed=7'], None),
    'qemu-verify-tcg': ('x86', ['--name', 'qemu-verify', '--mode', 'test'], 'tcg'),
    'qemu-verify-kvm': ('x86', ['--name', 'qemu-verify', '--mode', 'test'], 'kvm'),
    'qemu-run': ('x86', ['--interactive', '--mode', 'shell'], 'tcg'),
    'qemu-gdb': ('x86', ['--gdb', '--name', 'qemu-gdb', '--mode', 'munmap'], 'tcg'),
    'soak-x86': ('x86-kasan', ['--name', 'soak-x86', '--mode', 'soak', '--append', 'mmlab.soak=180'],
                 'tcg'),
    'soak-kcsan': ('x86-kcsan', ['--name', 'soak-kcsan', '--mode', 'soak',
                                 '--append', 'mmlab.soak=180'], 'tcg'),
    **{f'qemu-verify-{m}': (m, ['--name', f'qemu-verify-{m}', '--mode', ARCH_MODE], 'tcg')
       for m in ('arm64', 'arm', 's390x', 'sh4')},
}


def argv(machine, args, accel):
    m, a = boot.parse_args([machine, '--ksrc', 'K', '--logdir', 'L'] + args, root='@ROOT@')
    if m.boot == 'uml':
        return boot.uml_command(m, a)
    boot.fit_board(m, a)
    return boot.qemu_command(m, a, accel)


class Golden(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(GOLDEN, 'argv.json')) as f:
            self.golden = json.load(f)

    def test_every_golden_command_is_made(self):
        made = set(RUNS) | {k for k in self.golden if k.startswith('bench')} | {'kvm-probe'}
        self.assertEqual(made, set(self.golden))

    def test_boot_commands(self):
        for name, (machine, args, accel) in RUNS.items():
            with self.subTest(name):
                self.assertEqual(argv(machine, args, accel), self.golden[name])

    def test_tcg_thread(self):
        """QEMU_TCG_THREAD picks TCG's threading for every QEMU guest; only
        -accel changes, and a value that is neither is exit 2."""
        for value, want in ((None, 'single'), ('single', 'single'), ('multi', 'multi')):
            with mock.patch.dict(os.environ, {'QEMU_TCG_THREAD': value} if value else {}):
                if not value:
                    os.environ.pop('QEMU_TCG_THREAD', None)
                m, a = boot.parse_args(['x86', '--ksrc', 'K', '--logdir', 'L', '--name', 'qemu-verify',
                                        '--mode', 'test'], root='@ROOT@')
                cmd = boot.qemu_command(m, a, 'tcg', qemu.tcg_thread())
            golden = self.golden['qemu-verify-tcg'].copy()
            golden[golden.index('tcg,thread=single')] = f'tcg,thread={want}'
            self.assertEqual(cmd[:-1], golden[:-1])
        with mock.patch.dict(os.environ, {'QEMU_TCG_THREAD': 'many'}):
            with self.assertRaises(SystemExit) as e:
                qemu.tcg_thread()
        self.assertEqual(e.exception.code, 2)

    def test_tcg_thread_caveat(self):
        """Multi-threaded TCG on a QEMU before 8.1 is said to be unsafe
        for code patching; 8.1 and later, or one thread, say nothing."""
        tmp = tempfile.mkdtemp()
        try:
            for printed, thread, caveat in (('7.2.19', 'multi', True), ('8.1.0', 'multi', False),
                                            ('10.0.13', 'multi', False), ('7.2.19', 'single', False)):
                fake = os.path.join(tmp, 'qemu')
                with open(fake, 'w') as f:
                    f.write(f'#!/bin/sh\necho "QEMU emulator version {printed} (Debian)"\n')
                os.chmod(fake, 0o755)
                with self.subTest(printed=printed, thread=thread):
                    said = qemu.thread_caveat(fake, thread)
                    self.assertEqual(bool(said), caveat)
                    if caveat:
                        self.assertIn('QEMU 7.2', said)
        finally:
            shutil.rmtree(tmp)

    def test_kvm_probe(self):
        self.assertEqual(qemu.probe_command(conf.machine('x86'), '@ROOT@/build/6.1/x86/arch/x86/boot/bzImage'),
                         self.golden['kvm-probe'])

    def test_bench_commands(self):
        kernel = '@ROOT@/build/6.1/x86-stock/arch/x86/boot/bzImage'
        initrd = '@ROOT@/build/6.1/initramfs.cpio'
        for name, env in (('bench', {}), ('bench-QEMU_TCG_THREAD=multi', {'QEMU_TCG_THREAD': 'multi'}),
                          ('bench-QEMU_ACCEL=kvm', {'QEMU_ACCEL': 'kvm'})):
            with self.subTest(name):
                old = dict(os.environ)
                os.environ.pop('QEMU_TCG_THREAD', None)
                os.environ.pop('QEMU_ACCEL', None)
                os.environ.pop('BENCH_SMP', None)
                os.environ.update(env)
                real = os.cpu_count
                os.cpu_count = lambda: 2    # the golden copy was made on 2 cores
                try:
                    self.assertEqual(bench.qemu_cmd(kernel, initrd), self.golden[name])
                finally:
                    os.cpu_count = real
                    os.environ.clear()
                    os.environ.update(old)

    def test_lava_files(self):
        tmp = tempfile.mkdtemp()
        try:
            x86 = conf.machine('x86')
            for path in (x86.kernel(tmp), x86.root_image(tmp)):
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, 'w').close()
            for mode in ('quick', 'test'):
                out = os.path.join(tmp, mode)
                lava.write_job(tmp, out, mode)
                for made, gold in (('job.yaml', 'job.yaml'), ('device.yaml', 'device.yaml'),
                                   ('mmlab-qemu01.jinja2', 'mmlab-qemu01.jinja2')):
                    with self.subTest(mode=mode, file=made):
                        with open(os.path.join(out, made)) as f:
                            text = f.read().replace(tmp, '@ROOT@')
                        with open(os.path.join(GOLDEN, f'lava-{mode}-{gold}')) as f:
                            want = f.read()
                        self.assertEqual(text, want)
        finally:
            shutil.rmtree(tmp)


if __name__ == '__main__':
    unittest.main()
