#!/usr/bin/python3
"""Boot an mmlab guest (UML or QEMU), keep its console in build/logs/,
print each top-level result as it comes; then results.py reads the log
(KTAP, counts, verdict, crash title, JUnit) and prints the last line
"N passed, N failed, N skipped".

Exit codes: 0 pass, 1 a test failed, 2 setup/usage error, 3 kernel panic/
oops/BUG/WARNING/lockdep/KASAN report, 124 timeout.
"""
import argparse
import collections
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

from results import BEGIN, END, patchset_hash, sha256_of, summarize  # noqa: E402 (scripts/results.py)

KVM_PROBE_S = 8
TOP_RESULT = re.compile(r'^(not ok|ok) \d+ ')


def say(msg):
    print(f'mmlab: {msg}', flush=True)


def fail_setup(msg, fix=None):
    print(f'mmlab: error: {msg}', file=sys.stderr)
    if fix:
        print(f'mmlab:   fix: {fix}', file=sys.stderr)
    sys.exit(2)


# Every guest booted here poisons the pages it frees (CONFIG_PAGE_POISONING
# in both config fragments): a use after free of a page or of a gather's
# batch then reads 0xaa.. and faults, instead of finding the old contents.
DEBUG_PARAMS = ['page_poison=1']


def uml_command(a):
    if not os.access(a.kernel, os.X_OK):
        fail_setup(f'no UML kernel at {a.kernel}', 'make uml')
    if not os.path.exists(a.rootfs):
        fail_setup(f'no root image at {a.rootfs}', 'make rootfs')
    # ubd0r: the image is opened read-only, so a run can never modify it.
    cmd = [a.kernel, f'ubd0r={a.rootfs}', f'mem={a.mem}', f'mmlab.mode={a.mode}'] + DEBUG_PARAMS
    if not a.interactive:
        cmd += ['con=null', 'ssl=null', 'con0=null,fd:1']
    return cmd + a.append


def kvm_works(kernel):
    """A short KVM boot: does the guest kernel print anything within seconds?

    On some hosts /dev/kvm opens, yet a KVM guest hangs after SeaBIOS
    ("Booting from ROM..."); only a real boot tells.
    """
    if not (os.access('/dev/kvm', os.R_OK | os.W_OK)):
        return False, '/dev/kvm is not usable'
    cmd = ['qemu-system-x86_64', '-accel', 'kvm', '-m', '256M', '-nographic', '-no-reboot',
           '-kernel', kernel, '-append', 'console=ttyS0 earlyprintk=serial panic=-1 mmlab.mode=hang']
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


def smp_numa_options(mem, smp, nodes):
    """QEMU options for @smp vCPUs, one socket each, and @nodes NUMA nodes
    sharing @mem equally, the vCPUs in contiguous ranges (3 vCPUs on 2
    nodes: 0 and 1-2), so migration between nodes can be tested with
    writers on other CPUs. (vCPUs of one socket share a last-level cache:
    on two nodes the guest warns "llc-sibling ... is not on the same
    node".)"""
    smp_opts = ['-smp', f'{smp},sockets={smp}']
    if nodes <= 1:
        return smp_opts
    units = {'M': 1, 'G': 1024}
    if not mem or mem[-1] not in units or not mem[:-1].isdigit():
        fail_setup(f'--mem {mem} with --numa {nodes}', 'give the memory as NM or NG')
    mib = int(mem[:-1]) * units[mem[-1]]
    if mib % nodes or smp < nodes:
        fail_setup(f'--mem {mem} --smp {smp} --numa {nodes}',
                   'memory divisible by the nodes, at least one vCPU per node')
    opts, first = smp_opts, 0
    for i in range(nodes):
        last = first + (smp - first) // (nodes - i) - 1
        opts += ['-object', f'memory-backend-ram,id=node{i},size={mib // nodes}M',
                 '-numa', f'node,nodeid={i},memdev=node{i},cpus={first}-{last}']
        first = last + 1
    return opts


# QEMU for each guest architecture: program, board and CPU under TCG,
# console, where the image is in its O= directory, NUMA nodes (--numa's
# default), the most vCPUs the board has (--smp is capped to it) and the
# memory it has (None: --mem's).
# arm64: virt's default CPU is a 32-bit Cortex-A15, so -cpu is given; max
# has FEAT_TLBIRANGE (range TLBIs, as 6.1 uses them), and without
# pauth-impdef QEMU 7.2 spends much of its time in pointer authentication.
# arm: the Cortex-A15 has LPAE; 32-bit arm Linux has no NUMA.
Arch = collections.namedtuple('Arch', 'qemu board console image nodes cpus mem')
QEMU_ARCH = {
    'x86_64': Arch('qemu-system-x86_64', ['-cpu', 'max'], 'ttyS0', 'arch/x86/boot/bzImage',
                   2, None, None),
    'arm64': Arch('qemu-system-aarch64', ['-M', 'virt', '-cpu', 'max,pauth-impdef=on'],
                  'ttyAMA0', 'arch/arm64/boot/Image', 2, None, None),
    'arm': Arch('qemu-system-arm', ['-M', 'virt', '-cpu', 'cortex-a15'], 'ttyAMA0',
                'arch/arm/boot/zImage', 1, None, None),
    # QEMU's s390x machine describes no NUMA topology: one node
    's390x': Arch('qemu-system-s390x', ['-M', 's390-ccw-virtio', '-cpu', 'max'], 'ttysclp0',
                  'arch/s390/boot/bzImage', 1, None, None),
    # The R2D-Plus: one SH7751R, 64 MiB, the console on the second SCIF
    'sh4': Arch('qemu-system-sh4', ['-M', 'r2d', '-serial', 'null', '-serial', 'mon:stdio'],
                'ttySC1', 'arch/sh/boot/zImage', 1, 1, '64M'),
}


def qemu_command(a):
    qemu, board, console, _, nodes, cpus, mem = QEMU_ARCH[a.arch]
    a.numa = nodes if a.numa is None else a.numa
    if cpus and a.smp > cpus:
        say(f'{a.arch}: {cpus} vCPU{"s" if cpus > 1 else ""} (the board has no more)')
        a.smp = cpus
    if mem and a.mem != mem:
        say(f'{a.arch}: {mem} of memory (the board has that, no more)')
        a.mem = mem
    made_by = 'x86' if a.arch == 'x86_64' else a.arch
    for path, fix in ((a.kernel, f'make {made_by}'),
                      (a.initrd, 'make initramfs' if a.arch == 'x86_64' else f'make {made_by}')):
        if not os.path.exists(path):
            fail_setup(f'{path} is missing', fix)
    if not shutil.which(qemu):
        fail_setup(f'{qemu} is missing', 'make deps' if a.arch == 'x86_64'
                   else 'make arch-deps (it installs scripts/packages-arch)')
    accel = os.environ.get('QEMU_ACCEL', 'auto')
    if accel not in ('auto', 'kvm', 'tcg'):
        fail_setup(f'QEMU_ACCEL={accel}', 'QEMU_ACCEL=kvm, tcg or unset (probe)')
    if a.arch != 'x86_64':
        if accel == 'kvm':
            fail_setup(f'QEMU_ACCEL=kvm for an {a.arch} guest on this host', 'QEMU_ACCEL=tcg or unset')
        accel = 'tcg'
        say(f'accelerator: tcg ({a.arch} guest)')
    elif accel == 'auto':
        ok, why = kvm_works(a.kernel)
        accel = 'kvm' if ok else 'tcg'
        say(f'accelerator: {accel} (probe: {why})')
    else:
        say(f'accelerator: {accel} (forced by QEMU_ACCEL)')
    cmd = [qemu, '-accel', accel, '-m', a.mem,
           '-nographic', '-no-reboot', '-kernel', a.kernel, '-initrd', a.initrd]
    if accel == 'tcg':
        # One host thread for all vCPUs: with multi-threaded TCG, a vCPU
        # ran a stale int3 that text_poke_bp() had already removed (static
        # key flip when a trace event was enabled): "int3: 0000 [#1]" in
        # __schedule, seen with QEMU 7.2. The guest still has 2 CPUs, IPIs
        # and per-CPU TLBs; they just do not run at the same instant.
        cmd[cmd.index('-accel') + 1] = 'tcg,thread=single'
        cmd += board
    cmd += smp_numa_options(a.mem, a.smp, a.numa)
    append = [f'console={console}', 'panic=-1', f'mmlab.mode={a.mode}'] + DEBUG_PARAMS + a.append
    if accel == 'tcg':
        # Each test's limit in the guest: s390x's anon_vma took over 120 s
        # (the runner's default) under TCG while make test built a kernel
        # beside it. Under KVM the whole run has 300 s: 120 s stays.
        append.append('mmlab.test_timeout=300')
    if a.gdb:
        cmd += ['-s', '-S']
        append.append('nokaslr')
    return cmd + ['-append', ' '.join(append)], accel


def vmlinux_of(kernel):
    """The ELF with symbols for decode_stacktrace.sh: UML's linux is one; a
    QEMU guest's image has its vmlinux at the top of its O= directory."""
    for arch in QEMU_ARCH.values():
        if kernel.endswith(arch.image):
            return os.path.join(kernel[:-len(arch.image)], 'vmlinux')
    return kernel


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('target', choices=['uml', 'qemu'])
    p.add_argument('--kernel', required=True)
    p.add_argument('--rootfs', help='UML: the ext4 image')
    p.add_argument('--initrd', help='QEMU: the initramfs')
    p.add_argument('--arch', choices=sorted(QEMU_ARCH), default='x86_64',
                   help='QEMU: the guest architecture (anything but x86_64 runs under TCG)')
    p.add_argument('--smp', type=int, default=3,
                   help='QEMU: vCPUs (3: the migration tests run writers on two CPUs)')
    p.add_argument('--numa', type=int, default=None,
                   help='QEMU: NUMA nodes sharing the memory (2 where the arch has NUMA: '
                   'migration between them)')
    p.add_argument('--gdb', action='store_true', help='QEMU: -s -S, nokaslr')
    p.add_argument('--ksrc', required=True, help='kernel tree (for kunit.py)')
    p.add_argument('--logdir', required=True)
    p.add_argument('--name', default=None, help='log name (default: target)')
    p.add_argument('--mode', default='test', help='mmlab.mode= for the guest')
    p.add_argument('--mem', default=None, help='guest memory (UML 384M, QEMU 2G: the khugepaged selftest needs 512 THPs at once)')
    p.add_argument('--timeout', type=int, default=None,
                   help='seconds (default UML 300, QEMU 300 under KVM, 1200 under TCG)')
    p.add_argument('--interactive', action='store_true')
    p.add_argument('--verbose', action='store_true', help='echo the console')
    p.add_argument('--append', action='append', default=[], metavar='PARAM',
                   help='one more kernel parameter (repeatable)')
    a = p.parse_args()
    name = a.name or a.target

    accel = None
    if a.target == 'uml':
        a.mem = a.mem or '384M'
        cmd = uml_command(a)
    else:
        a.mem = a.mem or '2G'
        cmd, accel = qemu_command(a)
    if a.timeout is None:
        a.timeout = 1200 if accel == 'tcg' else 300
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
    say(f'booting {a.target}{f" ({accel})" if accel else ""} (mode {a.mode}, '
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
    kdir = os.path.dirname(vmlinux_of(os.path.abspath(a.kernel)))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    run = {'target': a.target, 'kernel': os.path.abspath(a.kernel), 'accel': accel,
           'started': started, 'seconds': round(elapsed, 1), 'command': shlex.join(cmd),
           'config_sha256': sha256_of(os.path.join(kdir, '.config'))
           if os.path.exists(os.path.join(kdir, '.config')) else None,
           'patchset_hash': patchset_hash(os.path.join(root, 'patches'))}
    sys.exit(summarize(name, lines, a.logdir, a.ksrc, a.timeout if timed_out else None,
                       log_path, vmlinux_of(a.kernel), run))

if __name__ == '__main__':
    main()
