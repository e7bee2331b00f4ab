"""Boot a machine of machines.mk (UML, or QEMU with the one command builder
of qemu.py), keep its console in build/logs/, print each top-level result
as it comes; then results.py reads the log (KTAP, counts, verdict, crash
title, JUnit) and prints the summary line. Exit codes: outcome.py's.

  python3 -m mmlab.boot MACHINE --ksrc DIR --logdir DIR [--mode M] ...
"""
import argparse
import datetime
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time

from . import ROOT, conf, qemu
from .outcome import SETUP, TIMEOUT, die, say, warn
from .results import BEGIN, END, summarize
from .series import patchset_hash, sha256_of

KVM_PROBE_S = 8
TOP_RESULT = re.compile(r'^(not ok|ok) \d+ ')


def uml_command(m, a):
    """UML's argv: the kernel is the program."""
    # ubd0r: the image is opened read-only, so a run can never modify it.
    cmd = [a.kernel, f'ubd0r={a.root}', f'mem={a.mem}', f'mmlab.mode={a.mode}'] + qemu.DEBUG_PARAMS
    if not a.interactive:
        cmd += ['con=null', 'ssl=null', 'con0=null,fd:1']
    return cmd + a.append


def kvm_works(m, kernel):
    """A short KVM boot: does the guest kernel print anything within seconds?

    On some hosts /dev/kvm opens, yet a KVM guest hangs after SeaBIOS
    ("Booting from ROM..."); only a real boot tells.
    """
    if not (os.access('/dev/kvm', os.R_OK | os.W_OK)):
        return False, '/dev/kvm is not usable'
    cmd = qemu.probe_command(m, kernel)
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
    except OSError as e:
        return False, str(e)
    os.set_blocking(proc.stdout.fileno(), False)
    out = b''
    while time.monotonic() - t0 < KVM_PROBE_S and proc.poll() is None:
        time.sleep(0.2)
        out += proc.stdout.read() or b''
        if b'Linux version' in out:
            break
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    if b'Linux version' in out:
        return True, f'guest kernel printed within {time.monotonic() - t0:.1f}s'
    tail = out.decode('utf-8', 'replace').strip().splitlines()[-1:] or ['nothing']
    return False, f'no kernel output in {KVM_PROBE_S}s under KVM (last: {tail[0][:60]!r})'


def fit_board(m, a):
    """A board with a fixed number of CPUs (the machine's `cpus`) has its
    memory fixed too (its `mem`): say so when asked for more."""
    if m.cpus and a.smp > m.cpus:
        say(f'{m.name}: {m.cpus} vCPU{"s" if m.cpus > 1 else ""} (the board has no more)')
        a.smp = m.cpus
    if m.cpus and a.mem != m.mem:
        say(f'{m.name}: {m.mem} of memory (the board has that, no more)')
        a.mem = m.mem


def choose_accel(m, a):
    """kvm or tcg, and why: QEMU_ACCEL (auto, kvm, tcg) where the machine
    may probe KVM, else TCG."""
    accel = os.environ.get('QEMU_ACCEL', 'auto')
    if accel not in ('auto', 'kvm', 'tcg'):
        die(f'QEMU_ACCEL={accel}', 'QEMU_ACCEL=kvm, tcg or unset (probe)')
    if m.accel == 'tcg':
        if accel == 'kvm':
            die(f'QEMU_ACCEL=kvm for an {m.name} guest on this host', 'QEMU_ACCEL=tcg or unset')
        return 'tcg', f'{m.name} guest'
    if accel == 'auto':
        ok, why = kvm_works(m, a.kernel)
        return ('kvm' if ok else 'tcg'), f'probe: {why}'
    return accel, 'forced by QEMU_ACCEL'


def qemu_command(m, a, accel, thread=qemu.TCG_THREAD):
    """QEMU's argv for machine @m under @accel (TCG's @thread), from the one
    builder."""
    params = [f'mmlab.mode={a.mode}'] + qemu.DEBUG_PARAMS + a.append
    if accel == 'tcg' and m.test_timeout:
        # Each test's limit in the guest: s390x's anon_vma took over 120 s
        # (the runner's default) under TCG while make test built a kernel
        # beside it. Under KVM the whole run has 300 s: 120 s stays.
        params.append(f'mmlab.test_timeout={m.test_timeout}')
    if a.gdb:
        params.append('nokaslr')
    return qemu.command(m, a.kernel, a.root, qemu.console_params(m) + params, accel,
                        a.mem, a.smp, a.numa, thread, gdb=a.gdb)


def check_files(m, a):
    """The kernel, the root and QEMU are there, or exit 2 naming the fix."""
    what = 'make ' + (m.built_by or m.name)
    root_fix = {'rootfs': 'make rootfs', 'initramfs': 'make initramfs'}.get(m.root, what)
    for path, fix in ((a.kernel, what), (a.root, root_fix)):
        if not os.path.exists(path):
            die(f'{path} is missing', fix)
    if m.boot == 'uml' and not os.access(a.kernel, os.X_OK):
        die(f'{a.kernel} is not executable', what)
    if m.boot == 'qemu' and not shutil.which(m.qemu):
        die(f'{m.qemu} is missing', 'make deps' if not m.cross
            else f'make arch-deps (it installs {" ".join(m.packages)})')


def vmlinux_of(m, kernel):
    """The ELF with symbols for decode_stacktrace.sh: UML's linux is one; a
    QEMU guest's image has its vmlinux at the top of its O= directory."""
    if m.boot == 'uml' or not kernel.endswith(m.image):
        return kernel
    return os.path.join(kernel[:-len(m.image)], 'vmlinux')


def parse_args(argv=None, root=ROOT):
    p = argparse.ArgumentParser(prog='python3 -m mmlab.boot', description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('machine', choices=list(conf.MACHINES), metavar='MACHINE',
                   help='a machine of machines.mk: ' + ' '.join(conf.MACHINES))
    p.add_argument('--kernel', help='the kernel (default: build/KVER/MACHINE/ and its image)')
    p.add_argument('--root', help='the root: UML\'s ext4 image or QEMU\'s initramfs '
                   '(default: the machine\'s)')
    p.add_argument('--smp', type=int, default=qemu.DEFAULT_SMP,
                   help=f'QEMU: vCPUs (default {qemu.DEFAULT_SMP})')
    p.add_argument('--numa', type=int, default=None,
                   help='QEMU: NUMA nodes sharing the memory (default: the machine\'s nodes)')
    p.add_argument('--gdb', action='store_true', help='QEMU: -s -S, nokaslr')
    p.add_argument('--ksrc', required=True, help='kernel tree (for kunit.py)')
    p.add_argument('--logdir', required=True)
    p.add_argument('--name', default=None, help='log name (default: the machine\'s)')
    p.add_argument('--mode', default='test', help='mmlab.mode= for the guest')
    p.add_argument('--mem', default=None, help='guest memory (default: the machine\'s mem)')
    p.add_argument('--timeout', type=int, default=None,
                   help='seconds (default: the machine\'s timeout; timeout_kvm under KVM)')
    p.add_argument('--interactive', action='store_true')
    p.add_argument('--verbose', action='store_true', help='echo the console')
    p.add_argument('--append', action='append', default=[], metavar='PARAM',
                   help='one more kernel parameter (repeatable)')
    a = p.parse_args(argv)
    m = conf.machine(a.machine)
    a.kernel = a.kernel or m.kernel(root)
    a.root = a.root or m.root_image(root)
    a.mem = a.mem or m.mem
    a.numa = m.nodes if a.numa is None else a.numa
    return m, a


def main():
    m, a = parse_args()
    name = a.name or m.name
    check_files(m, a)
    accel = None
    if m.boot == 'uml':
        cmd = uml_command(m, a)
    else:
        fit_board(m, a)
        kind, why = choose_accel(m, a)
        thread = qemu.tcg_thread()
        accel = qemu.accel_arg(kind, thread)
        say(f'accelerator: {accel} ({why})')
        caveat = qemu.thread_caveat(m.qemu, thread) if kind == 'tcg' else None
        if caveat:
            warn(caveat)
        cmd = qemu_command(m, a, kind, thread)
    if a.timeout is None:
        a.timeout = m.timeout_kvm if accel == 'kvm' else m.timeout
    if a.interactive:
        say('$ ' + ' '.join(cmd))
        os.execvp(cmd[0], cmd)

    os.makedirs(a.logdir, exist_ok=True)
    stamp = time.strftime('%Y%m%d-%H%M%S')
    log_path = os.path.join(a.logdir, f'{name}-{stamp}.log')
    latest = os.path.join(a.logdir, f'{name}.log')
    if os.path.lexists(latest):
        os.unlink(latest)
    os.symlink(os.path.basename(log_path), latest)
    say(f'booting {m.name}{f" ({accel})" if accel else ""} (mode {a.mode}, '
        f'timeout {a.timeout}s), console: {latest}')

    def no_core():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    t0 = time.monotonic()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            preexec_fn=no_core)
    timed_out = False

    def on_alarm(*_):
        nonlocal timed_out
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(a.timeout)

    def on_stop(signum, _):
        # Ctrl-C, or CI stopping us: the guest must not outlive us.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        sys.exit(128 + signum)
    signal.signal(signal.SIGINT, on_stop)
    signal.signal(signal.SIGTERM, on_stop)

    lines, in_ktap, first_line_t = [], False, None
    with open(log_path, 'w', errors='replace', buffering=1) as log:   # line by line: tail -f
        for raw in proc.stdout:
            line = raw.decode('utf-8', 'replace').rstrip('\r\n').replace('\r', '')
            if first_line_t is None:
                first_line_t = time.monotonic() - t0
            log.write(line + '\n')
            lines.append(line)
            if a.verbose:
                print(line, flush=True)
            if line == BEGIN:
                in_ktap = True
                say(f'guest tests started at {time.monotonic() - t0:.1f}s')
            elif line == END:
                in_ktap = False
            elif in_ktap and TOP_RESULT.match(line) and not a.verbose:
                print(f'  [{time.monotonic() - t0:6.1f}s] {line}', flush=True)
    proc.wait()
    signal.alarm(0)
    # UML's userspace helpers share the session: make sure none survive.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    elapsed = time.monotonic() - t0
    say(f'guest ran {elapsed:.1f}s{f" under {accel}" if accel else ""}, '
        f'exit status {proc.returncode}')

    # What the kernel was built from, so a result is never hung on another build.
    vmlinux = vmlinux_of(m, os.path.abspath(a.kernel))
    kdir = os.path.dirname(vmlinux)
    tree = conf.tree()
    run = {'target': m.boot, 'machine': m.name, 'tree': tree['name'],
           'tree_package': tree['package'], 'kernel': os.path.abspath(a.kernel), 'accel': accel,
           'started': started, 'seconds': round(elapsed, 1), 'command': shlex.join(cmd),
           'config_sha256': sha256_of(os.path.join(kdir, '.config'))
           if os.path.exists(os.path.join(kdir, '.config')) else None,
           'patchset_hash': patchset_hash(conf.patches_dir(ROOT))}
    died = -proc.returncode if proc.returncode < 0 and not timed_out else None
    sys.exit(summarize(name, lines, a.logdir, a.ksrc, a.timeout if timed_out else None,
                       log_path, vmlinux, run, died))

if __name__ == '__main__':
    main()
