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
                   r'Unable to handle kernel')
BEGIN, END = 'mmlab: ktap begin', 'mmlab: ktap end'
TOP_RESULT = re.compile(r'^(not ok|ok) \d+ ')


def say(msg):
    print(f'mmlab: {msg}', flush=True)


def fail_setup(msg, fix=None):
    print(f'mmlab: error: {msg}', file=sys.stderr)
    if fix:
        print(f'mmlab:   fix: {fix}', file=sys.stderr)
    sys.exit(2)


def uml_command(a):
    if not os.access(a.kernel, os.X_OK):
        fail_setup(f'no UML kernel at {a.kernel}', 'make uml')
    if not os.path.exists(a.rootfs):
        fail_setup(f'no root image at {a.rootfs}', 'make rootfs')
    # ubd0r: the image is opened read-only, so a run can never modify it.
    cmd = [a.kernel, f'ubd0r={a.rootfs}', f'mem={a.mem}', f'mmlab.mode={a.mode}']
    if not a.interactive:
        cmd += ['con=null', 'ssl=null', 'con0=null,fd:1']
    return cmd + a.append


def parse_ktap(ksrc, ktap_path, json_path):
    """Run kunit.py parse; return (passed, failed, skipped) of the leaves."""
    kunit = os.path.join(ksrc, 'tools/testing/kunit/kunit.py')
    if not os.path.exists(kunit):
        fail_setup(f'{kunit} is missing', 'make tree')
    subprocess.run([sys.executable, kunit, 'parse', f'--json={json_path}', ktap_path],
                   check=False)
    try:
        with open(json_path) as f:
            root = json.load(f)
    except (OSError, ValueError):
        return 0, 1, 0
    counts = [0, 0, 0]

    def walk(group):
        for case in group.get('test_cases', []):
            counts[{'PASS': 0, 'SKIP': 2}.get(case['status'], 1)] += 1
        for sub in group.get('sub_groups', []):
            walk(sub)
    walk(root)
    return tuple(counts)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('target', choices=['uml'])
    p.add_argument('--kernel', required=True)
    p.add_argument('--rootfs', required=True)
    p.add_argument('--ksrc', required=True, help='kernel tree (for kunit.py)')
    p.add_argument('--logdir', required=True)
    p.add_argument('--name', default=None, help='log name (default: target)')
    p.add_argument('--mode', default='test', help='mmlab.mode= for the guest')
    p.add_argument('--mem', default='384M')
    p.add_argument('--timeout', type=int, default=300)
    p.add_argument('--interactive', action='store_true')
    p.add_argument('--verbose', action='store_true', help='echo the console')
    p.add_argument('--append', action='append', default=[], metavar='PARAM',
                   help='one more kernel parameter (repeatable)')
    a = p.parse_args()
    name = a.name or a.target

    cmd = uml_command(a)
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
    say(f'booting {a.target} (mode {a.mode}, timeout {a.timeout}s), console: {latest}')

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
    say(f'guest ran {elapsed:.1f}s, exit status {proc.returncode}')

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

    if timed_out:
        rc, why = 124, f'timed out after {a.timeout}s (raise with TIMEOUT=)'
    elif splats:
        rc, why = 3, 'kernel splat in the console log:\n' + \
            '\n'.join('    ' + s for s in splats[:10])
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
