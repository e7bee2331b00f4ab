"""What every mmlab command promises: its exit code, its last line, its
messages. Defined here once; lib.sh says the same for the shell scripts.

Exit codes: 0 pass, 1 a test failed, 2 setup or usage error (the message
names the fix), 3 a kernel splat (panic, oops, BUG, WARNING, lockdep,
KASAN, ...), 124 a timeout.
"""
import os
import re
import sys

from . import ROOT

PASS, FAIL, SETUP, SPLAT, TIMEOUT = 0, 1, 2, 3, 124
# worst first: a splat hides a timeout, which hides a setup error, ...
SEVERITY = {PASS: 0, FAIL: 1, SETUP: 2, TIMEOUT: 3, SPLAT: 4}
WHAT = {PASS: 'pass', FAIL: 'test failure', SETUP: 'setup', SPLAT: 'kernel splat',
        TIMEOUT: 'timeout'}
SPLAT_FILE = os.path.join(ROOT, 'rootfs/etc/mmlab/splat')


def say(msg):
    print(f'mmlab: {msg}', flush=True)


def warn(msg):
    print(f'mmlab: warning: {msg}', file=sys.stderr, flush=True)


def die(msg, fix=None, rc=SETUP):
    """An error that names its fix; exits rc (2, setup, unless told)."""
    print(f'mmlab: error: {msg}', file=sys.stderr, flush=True)
    if fix:
        print(f'mmlab:   fix: {fix}', file=sys.stderr, flush=True)
    sys.exit(rc)


def worst(*codes):
    return max(codes, key=lambda c: SEVERITY.get(c, 4))


def summary_line(passed, failed, skipped):
    """The last line of every test command."""
    return f'{passed} passed, {failed} failed, {skipped} skipped'


def write_summary(logdir, name, passed, failed, skipped, rc):
    """LOGDIR/NAME.summary, "passed failed skipped rc": what test-all.sh
    adds up (written first: nothing after it may lose the verdict)."""
    with open(os.path.join(logdir, f'{name}.summary'), 'w') as f:
        f.write(f'{passed} {failed} {skipped} {rc}\n')


def finish(logdir, name, passed, failed, skipped, rc):
    """The summary file and the summary line; returns rc."""
    write_summary(logdir, name, passed, failed, skipped, rc)
    print(summary_line(passed, failed, skipped), flush=True)
    return rc


def splat_patterns(path=SPLAT_FILE):
    """The kernel-report patterns, one per line: the guest's kernel_log test
    greps the same file (grep -E -f), so they are written in the syntax
    both POSIX ERE and Python's re read alike."""
    with open(path) as f:
        return [l.rstrip('\n') for l in f if l.strip() and not l.startswith('#')]


SPLAT_RE = re.compile('|'.join(splat_patterns()))
