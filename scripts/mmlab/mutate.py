"""make mutate: do the tests catch the bugs they claim to catch?

Each mutant in the tree's tests/mutants/KVER/ (trees.mk: mutants) is a
small patch to the patched tree that models one real bug. One at a time:
apply it to the tree, rebuild the kernel it runs on incrementally, boot
the guest tests its header names, and put the tree back byte for byte
(checked against build/tree.git's HEAD, also on Ctrl-C or any failure).
A mutant is KILLED when the run fails (a test failed, the kernel
splatted, or it timed out), SURVIVED when every test passed. A mutant
whose header says "# equivalent: why" is not run: it is listed with the
reason it cannot be observed.

Header of a mutant file (patch(1) skips these lines):
    # bug: what real bug it models (the upstream commit, if a known one)
    # run: TARGET TEST[,TEST...]   (TARGET: a machine of machines.mk that
                                  make builds by its name: uml, x86, arm64,
                                  ...; TESTs: guest test names, "kunit")
    # killer: the test expected to fail   (or "# equivalent: reason")

usage: python3 -m mmlab.mutate ROOT KSRC GITDIR LOGS [NAME...]
       (NAME: file name or a prefix)
A mutant's machine is rebuilt with its make targets (conf's make_targets)
and booted with python3 -m mmlab.boot MACHINE for its mutate_timeout.
Exit: 0 every mutant killed or equivalent, 1 a mutant survived, 2 setup
(a mutant does not apply or build, local edits in a mutated file).
"""
import json
import os
import re
import signal
import subprocess
import sys
import time


from . import conf, manifest
from .outcome import FAIL, PASS, SETUP, die, finish, say

# scripts/, where this package is: the boot of the same checkout
SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def targets():
    """The machines a mutant can run on: those make builds by their own
    name (not make bench's baselines, which carry no series to mutate)."""
    return {n: m for n, m in conf.MACHINES.items() if not m.built_by}


# What the guest runner takes besides the tests of tests/manifest.
RUNNER_WORDS = {'kunit', 'kselftest', 'soak', 'quick'}


def runnable():
    """The names a run line may give: the manifest's tests and RUNNER_WORDS
    (read once: parse() runs for every mutant)."""
    if not hasattr(runnable, 'names'):
        runnable.names = {t.name for t in manifest.read()} | RUNNER_WORDS
    return runnable.names


def boot_command(m, ksrc, logs, tests):
    """Boot machine m's kernel and root (build/NAME) as run "mutate"."""
    return [sys.executable, '-m', 'mmlab.boot', m.name, '--ksrc', ksrc, '--logdir', logs,
            '--name', 'mutate', '--mode', tests, '--timeout', str(m.mutate_timeout)]


def parse(path):
    m = {'name': os.path.basename(path)[:-len('.patch')], 'path': path, 'files': []}
    with open(path) as f:
        for line in f:
            h = re.match(r'# (bug|run|killer|equivalent): (.*)', line)
            if h:
                m[h.group(1)] = h.group(2).strip()
            elif line.startswith('+++ b/'):
                m['files'].append(line[6:].split('\t')[0].strip())
    if 'bug' not in m or not m['files']:
        die(f'{path}: needs a "# bug:" line and a diff', 'see tests/mutants/README')
    if 'equivalent' not in m:
        run = m.get('run', '').split()
        if len(run) != 2 or run[0] not in targets():
            die(f'{path}: "# run: TARGET TESTS" is missing or malformed',
                f'TARGET is one of {", ".join(sorted(targets()))}')
        m['target'], m['tests'] = run
        unknown = [t for t in m['tests'].split(',') if t not in runnable()]
        if unknown:
            die(f'{path}: "# run:" names {", ".join(unknown)}, no guest test '
                '(the runner would fail it as "no such test", a false kill)',
                'name guest tests of tests/manifest, and kunit for the KUnit suites')
    return m


class Tree:
    """The kernel tree and the git repository that knows its HEAD state."""

    def __init__(self, ksrc, gitdir):
        self.ksrc, self.env = ksrc, dict(os.environ, GIT_DIR=gitdir, GIT_WORK_TREE=ksrc)
        self.dirty = []

    def git(self, *args):
        return subprocess.run(['git', *args], cwd=self.ksrc, env=self.env,
                              capture_output=True, text=True)

    def clean(self, files):
        return self.git('diff', '--quiet', 'HEAD', '--', *files).returncode == 0

    def apply(self, m):
        if not self.clean(m['files']):
            die(f'{", ".join(m["files"])} has local edits; a mutant must start from the series',
                "make series-refresh (keep them) or make series-reset (discard), then again")
        self.dirty = m['files']
        with open(m['path']) as f:
            r = subprocess.run(['patch', '-p1', '-s', '-f', '--no-backup-if-mismatch', '-d',
                                self.ksrc], stdin=f, capture_output=True, text=True)
        return r.returncode == 0, (r.stdout + r.stderr).strip()

    def restore(self):
        if not self.dirty:
            return
        files, self.dirty = self.dirty, []
        self.git('checkout', 'HEAD', '--', *files)
        for f in files:     # patch may leave .rej/.orig on a failed apply
            for junk in (f + '.rej', f + '.orig'):
                if os.path.exists(os.path.join(self.ksrc, junk)):
                    os.unlink(os.path.join(self.ksrc, junk))
        if not self.clean(files):
            die(f'could not restore {", ".join(files)} to the series (git checkout failed)',
                'make series-reset')


def killer(logs, name):
    """The first failing leaf of the run's KTAP, or what ended the run."""
    try:
        with open(os.path.join(logs, f'{name}.ktap')) as f:
            ktap = f.read().splitlines()
    except OSError:
        return 'no results'
    stack = []
    for line in ktap:
        s = line.lstrip()
        depth = (len(line) - len(s)) // 4
        sub = re.match(r'# Subtest: (\S+)', s)
        if sub:     # "# Subtest: X" is indented as X's children are
            del stack[max(depth - 1, 0):]
            stack.append(sub.group(1))
            continue
        bad = re.match(r'not ok \d+ (?:- )?([^#]*)', s)
        if bad:
            return '.'.join(stack[:depth] + [bad.group(1).strip()])
    return 'the run (no test failed: a splat or a timeout)'


def main():
    if len(sys.argv) < 5:
        die('usage: python3 -m mmlab.mutate ROOT KSRC GITDIR LOGS [NAME...]')
    root, ksrc, gitdir, logs, *want = sys.argv[1:]
    mdir = os.path.join(root, conf.tree()['mutants'])
    if not os.path.isdir(mdir):
        die(f'tree {conf.tree()["name"]} has no mutants: {mdir} is missing',
            'port them from another tree (tests/mutants/README)')
    paths = sorted(os.path.join(mdir, f) for f in os.listdir(mdir) if f.endswith('.patch'))
    if want:
        names = [w for arg in want for w in arg.split(',') if w]
        sel = [p for p in paths if any(os.path.basename(p).startswith(n) for n in names)]
        missing = [n for n in names if not any(os.path.basename(p).startswith(n) for p in paths)]
        if missing:
            die(f'no mutant named {", ".join(missing)} in {mdir}', f'ls {mdir}')
        paths = sel
    mutants = [parse(p) for p in paths]
    tree = Tree(ksrc, gitdir)
    os.makedirs(logs, exist_ok=True)

    def stop(signum, _):
        tree.restore()
        say('interrupted: the tree is restored; the next make rebuilds the kernel from it')
        sys.exit(128 + signum)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)

    built = set()
    rows, t_all = [], time.monotonic()
    say(f'{len(mutants)} mutants from {mdir}')
    try:
        for i, m in enumerate(mutants, 1):
            head = f'[{i}/{len(mutants)}] {m["name"]}'
            if 'equivalent' in m:
                rows.append((m['name'], 'EQUIVALENT', m['equivalent'], 0))
                say(f'{head}: EQUIVALENT, not run: {m["equivalent"]}')
                continue
            t0 = time.monotonic()
            ok, out = tree.apply(m)
            if not ok:
                tree.restore()
                rows.append((m['name'], 'ERROR', f'does not apply: {out[:200]}', 0))
                say(f'{head}: ERROR: the mutant does not apply: {out[:200]}')
                continue
            built.add(m['target'])
            say(f'{head}: {m["bug"]}')
            mach = conf.machine(m['target'])
            make = ['make', '-s', '-C', root] + mach.make_targets()
            b = subprocess.run(make, capture_output=True, text=True)
            if b.returncode != 0:
                tree.restore()
                out = b.stdout + b.stderr
                blog = os.path.join(logs, f'mutate-{m["name"]}.build.log')
                with open(blog, 'w') as f:
                    f.write(out)
                # the compiler's or mmlab's own error first, make's last
                lines = out.splitlines()
                err = ([l for l in lines if 'error:' in l] or
                       [l for l in lines if 'error' in l.lower()] or ['?'])
                rows.append((m['name'], 'ERROR', f'does not build: {err[0][:200]} (log: {blog})',
                             time.monotonic() - t0))
                say(f'{head}: ERROR: does not build: {err[0][:200]} (log: {blog})')
                continue
            boot = boot_command(mach, ksrc, logs, m['tests'])
            record = os.path.join(logs, 'mutate.run')
            if os.path.exists(record):
                os.unlink(record)
            r = subprocess.run(boot, capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=SCRIPTS))
            tree.restore()
            took = time.monotonic() - t0
            try:
                with open(record) as f:
                    run = json.load(f)
            except (OSError, ValueError):
                run = None
            if r.returncode not in (0, 2) and (run is None or run['rc'] != r.returncode):
                # boot.py itself failed (a Python error exits 1 too): that
                # is no verdict on the mutant.
                tail = (r.stderr.strip().splitlines() or ['?'])[-1][:200]
                rows.append((m['name'], 'ERROR', f'boot.py wrote no results: {tail}', took))
            elif r.returncode == 0:
                rows.append((m['name'], 'SURVIVED', f'{m["target"]} {m["tests"]} all passed', took))
            elif r.returncode == 2:
                rows.append((m['name'], 'ERROR', f'boot setup failed: {r.stderr.strip()[:200]}', took))
            else:
                why = {3: 'kernel splat: ', 124: 'timeout: '}.get(r.returncode, '')
                if r.returncode == 3:
                    why += run.get('why', '?')[:160]
                else:
                    why += killer(logs, 'mutate')
                rows.append((m['name'], 'KILLED', why, took))
            say(f'{head}: {rows[-1][1]} ({rows[-1][2]}) in {took:.0f}s')
    finally:
        tree.restore()
    # Leave the kernels as the tree is: no mutant in ./linux afterwards.
    for target in sorted(built):
        say(f'rebuilding {target} from the restored tree')
        subprocess.run(['make', '-s', '-C', root] + conf.machine(target).make_targets(),
                       capture_output=True)

    killed = sum(r[1] == 'KILLED' for r in rows)
    survived = [r for r in rows if r[1] == 'SURVIVED']
    errors = [r for r in rows if r[1] == 'ERROR']
    equiv = sum(r[1] == 'EQUIVALENT' for r in rows)
    print()
    for name, verdict, why, took in rows:
        print(f'{verdict:10} {name:45} {why}' + (f' ({took:.0f}s)' if took else ''))
    scored = killed + len(survived)
    print(f'\nmutation score: {killed}/{scored} killed'
          f'{f" ({100 * killed // scored}%)" if scored else ""}, {equiv} equivalent, '
          f'{len(errors)} errors, {time.monotonic() - t_all:.0f}s')
    rc = SETUP if errors else FAIL if survived else PASS
    sys.exit(finish(logs, os.environ.get('SUMMARY', 'mutate'), killed, len(survived) + len(errors),
                    equiv, rc))


if __name__ == '__main__':
    main()
