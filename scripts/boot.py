#!/usr/bin/env python3
"""Boot an mmlab guest (UML or QEMU), keep its console in build/logs/,
parse the KTAP it prints with the tree's kunit.py, print one line per test
and a last line "N passed, N failed, N skipped".

Exit codes: 0 pass, 1 a test failed, 2 setup/usage error, 3 kernel panic/
oops/BUG/WARNING/lockdep/KASAN report, 124 timeout.
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

SPLAT = re.compile(r'Kernel panic|Oops[:\s]|BUG:|kernel BUG at|WARNING:|KASAN:|UBSAN:|'
                   r'possible recursive locking|circular locking dependency|'
                   r'INFO: task .* blocked|general protection fault|Bad page (state|map)|'
                   r'Unable to handle kernel|pagealloc: memory corruption')
BEGIN, END = 'mmlab: ktap begin', 'mmlab: ktap end'

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


def qemu_command(a):
    for path, fix in ((a.kernel, 'make x86'), (a.initrd, 'make initramfs')):
        if not os.path.exists(path):
            fail_setup(f'{path} is missing', fix)
    if not shutil.which('qemu-system-x86_64'):
        fail_setup('qemu-system-x86_64 is missing', 'make deps')
    accel = os.environ.get('QEMU_ACCEL', 'auto')
    if accel not in ('auto', 'kvm', 'tcg'):
        fail_setup(f'QEMU_ACCEL={accel}', 'QEMU_ACCEL=kvm, tcg or unset (probe)')
    if accel == 'auto':
        ok, why = kvm_works(a.kernel)
        accel = 'kvm' if ok else 'tcg'
        say(f'accelerator: {accel} (probe: {why})')
    else:
        say(f'accelerator: {accel} (forced by QEMU_ACCEL)')
    cmd = ['qemu-system-x86_64', '-accel', accel, '-smp', str(a.smp), '-m', a.mem,
           '-nographic', '-no-reboot', '-kernel', a.kernel, '-initrd', a.initrd]
    if accel == 'tcg':
        # One host thread for all vCPUs: with multi-threaded TCG, a vCPU
        # ran a stale int3 that text_poke_bp() had already removed (static
        # key flip when a trace event was enabled): "int3: 0000 [#1]" in
        # __schedule, seen with QEMU 7.2. The guest still has 2 CPUs, IPIs
        # and per-CPU TLBs; they just do not run at the same instant.
        cmd[cmd.index('-accel') + 1] = 'tcg,thread=single'
        cmd += ['-cpu', 'max']
    append = ['console=ttyS0', 'panic=-1', f'mmlab.mode={a.mode}'] + DEBUG_PARAMS + a.append
    if a.gdb:
        cmd += ['-s', '-S']
        append.append('nokaslr')
    return cmd + ['-append', ' '.join(append)], accel


def parse_ktap(ksrc, ktap_path, json_path):
    """kunit.py parse, in this process; return (passed, failed, skipped) of the leaves."""
    kdir = os.path.join(ksrc, 'tools/testing/kunit')
    if not os.path.exists(os.path.join(kdir, 'kunit.py')):
        fail_setup(f'{kdir}/kunit.py is missing', 'make tree')
    if os.path.exists(json_path):
        os.unlink(json_path)
    # What "kunit.py parse --json=FILE KTAP" does, without a second Python
    # start (0.4 s here). No __pycache__ in the kernel tree: it would count
    # as a local edit.
    sys.dont_write_bytecode = True
    sys.path.insert(0, kdir)
    try:
        import kunit  # pylint: disable=import-outside-toplevel
        import kunit_json  # pylint: disable=import-outside-toplevel
        with open(ktap_path, errors='backslashreplace') as f:
            ktap = f.read().splitlines()
        kunit.parse_tests(kunit.KunitParseRequest(raw_output=None, json=json_path),
                          kunit_json.Metadata(), ktap)
        sys.stdout.flush()
    except Exception as e:  # pylint: disable=broad-except
        say(f'kunit.py parse failed: {e!r}')
    finally:
        sys.path.remove(kdir)
    try:
        with open(json_path) as f:
            root = json.load(f)
    except (OSError, ValueError):
        say('kunit.py parse wrote no results')
        return 0, 1, 0
    counts = [0, 0, 0]

    def walk(group):
        for case in group.get('test_cases', []):
            counts[{'PASS': 0, 'SKIP': 2}.get(case['status'], 1)] += 1
        for sub in group.get('sub_groups', []):
            walk(sub)
    walk(root)
    # kunit_json keeps only the leaves: a test that printed "ok" for every
    # case and then crashed or timed out ("not ok N name") must still fail.
    with open(ktap_path) as f:
        for line in f:
            m = re.match(r'not ok \d+ (\S+)', line)
            if m and '# SKIP' not in line:
                group = next((g for g in root.get('sub_groups', []) if g['name'] == m.group(1)),
                             None)
                if group is None or not any(c['status'] not in ('PASS', 'SKIP')
                                            for c in group.get('test_cases', [])):
                    counts[1] += 1
    return tuple(counts)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('target', choices=['uml', 'qemu'])
    p.add_argument('--kernel', required=True)
    p.add_argument('--rootfs', help='UML: the ext4 image')
    p.add_argument('--initrd', help='QEMU: the initramfs')
    p.add_argument('--smp', type=int, default=2, help='QEMU: vCPUs')
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
    with open(log_path, 'w', errors='replace') as log:
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

    splats = [l for l in lines if SPLAT.search(l)]
    if BEGIN in lines:
        ktap = lines[lines.index(BEGIN) + 1:]
        ktap = ktap[:ktap.index(END)] if END in ktap else ktap
    else:
        ktap = []
    ktap_path = os.path.join(a.logdir, f'{name}.ktap')
    with open(ktap_path, 'w') as f:
        f.write('\n'.join(ktap) + '\n')

    if ktap:
        passed, failed, skipped = parse_ktap(a.ksrc, ktap_path,
                                             os.path.join(a.logdir, f'{name}.json'))
    else:
        say('the guest printed no KTAP results')
        passed, failed, skipped = 0, 1, 0
    if END not in lines and ktap:
        say('the KTAP output stopped before its end marker')
        failed = max(failed, 1)

    if splats:
        rc, why = 3, 'kernel splat in the console log:\n' + \
            '\n'.join('    ' + s for s in splats[:10])
        if timed_out:
            why += f'\n  and then it timed out after {a.timeout}s'
    elif timed_out:
        rc, why = 124, f'timed out after {a.timeout}s (raise with TIMEOUT=)'
    elif failed:
        rc, why = 1, 'test failures'
    else:
        rc, why = 0, None
    if why:
        say(f'{name}: {why} (log: {log_path})')
    with open(os.path.join(a.logdir, f'{name}.summary'), 'w') as f:
        f.write(f'{passed} {failed} {skipped} {rc}\n')
    print(f'{passed} passed, {failed} failed, {skipped} skipped', flush=True)
    sys.exit(rc)


if __name__ == '__main__':
    main()
