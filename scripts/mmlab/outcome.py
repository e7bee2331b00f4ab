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

# (a run that saw several: a splat before a timeout before a setup error
# before a failure, scripts/test-all.sh's rank())
PASS, FAIL, SETUP, SPLAT, TIMEOUT = 0, 1, 2, 3, 124
SPLAT_FILE = os.path.join(ROOT, 'rootfs/etc/mmlab/splat')


def say(msg):
    print(f'mmlab: {msg}', flush=True)


def warn(msg):
    print(f'mmlab: warning: {msg}', file=sys.stderr, flush=True)


def error(msg, fix=None):
    """An error and its fix, two lines on stderr; the caller goes on."""
    print(f'mmlab: error: {msg}', file=sys.stderr, flush=True)
    if fix:
        print(f'mmlab:   fix: {fix}', file=sys.stderr, flush=True)


def die(msg, fix=None, rc=SETUP):
    """An error that names its fix; exits rc (2, setup, unless told)."""
    error(msg, fix)
    sys.exit(rc)


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
    try:
        with open(path) as f:
            return [l.rstrip('\n') for l in f if l.strip() and not l.startswith('#')]
    except OSError as e:
        die(f'the splat patterns: {e}', 'git checkout rootfs/etc/mmlab/splat')


_SPLAT_RE = None


def splat_re():
    """The patterns as one regular expression (read on first use)."""
    global _SPLAT_RE  # pylint: disable=global-statement
    if _SPLAT_RE is None:
        _SPLAT_RE = re.compile('|'.join(splat_patterns()))
    return _SPLAT_RE
