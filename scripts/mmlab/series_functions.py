"""List the kernel functions that the series (and any local edit) changes.

usage: python3 -m mmlab.series_functions SRC GITDIR OUT

Diffs the work tree SRC against the pristine tag of GITDIR (the tree as
unpacked, see tree.sh) and prints, one per line, every function whose body
has a changed line. A changed static inline in a header counts for every
function that calls it, the callers' callers in headers too. The guest's
KCSAN triage (rootfs/bin/mmlab-kcsan) fails a report with a frame in one of
these and counts the others as stock 6.1.

OUT's first line records a hash of the diff: when the tree has not changed
since, OUT is left alone (a rebuild of the guest root waits on its date).

Function bodies are found by kernel style: a definition's "{" and "}" are
each alone at column 0. Exit 2 when the tree cannot be read.
"""
import hashlib
import os
import re
import subprocess
import sys

from . import conf
from .outcome import die

HUNK = re.compile(r'^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@')
NAME = re.compile(r'\b([A-Za-z_]\w*)\s*\(')


def bodies(lines):
    """(name, first, last) for each function body, 1-based lines."""
    out = []
    for i, l in enumerate(lines):
        if l.rstrip() != '{':
            continue
        head = []
        for j in range(i - 1, max(i - 8, -1), -1):
            t = lines[j].strip()
            if not t or t.endswith((';', '}', '*/')) or t.startswith(('#', '*', '/*', '//')):
                break
            head.insert(0, lines[j])
        m = NAME.search(' '.join(head))
        if not m:
            continue
        end = next((k for k in range(i + 1, len(lines)) if lines[k].startswith('}')), len(lines) - 1)
        out.append((m.group(1), i - len(head) + 1, end + 1))
    return out


def git(gitdir, src, *args):
    r = subprocess.run(['git', '--git-dir', gitdir, '--work-tree', src, *args],
                       capture_output=True, text=True, cwd=src)
    if r.returncode:
        first = (r.stderr.strip().splitlines() or [''])[0]
        die(f'git {" ".join(args)} failed in {src}: {first}',
            f'make tree (it records the pristine tree in {gitdir})')
    return r.stdout


def main():
    if len(sys.argv) != 4:
        die('usage: python3 -m mmlab.series_functions SRC GITDIR OUT', __doc__.strip().splitlines()[0])
    src, gitdir, out = (os.path.abspath(a) for a in sys.argv[1:])
    if not os.path.isfile(os.path.join(src, 'mm', 'mmu_gather.c')):
        die(f'{src} is not a kernel tree', f'make tree, or point KSRC at an unpacked {conf.tree()["version"]} tree')
    diff = git(gitdir, src, 'diff', '-U0', '--no-color', 'pristine', '--',
               '*.c', '*.h', ':!tools', ':!scripts', ':!samples')
    stamp = '# diff %s\n' % hashlib.sha1(diff.encode()).hexdigest()
    if os.path.exists(out):
        with open(out) as f:
            if f.readline() == stamp:
                return
    changed = {}
    path = None
    for l in diff.splitlines():
        if l.startswith('+++ '):
            path = l[6:] if l.startswith('+++ b/') else None
        m = HUNK.match(l)
        if m and path:
            first, count = int(m.group(1)), int(m.group(2) or 1)
            changed.setdefault(path, []).append((first, first + max(count, 1) - 1))
    funcs, inlines = set(), set()
    for path, ranges in changed.items():
        with open(os.path.join(src, path), errors='replace') as f:
            lines = f.read().splitlines()
        for name, first, last in bodies(lines):
            if any(a <= last and b >= first for a, b in ranges):
                funcs.add(name)
                if path.endswith('.h'):
                    inlines.add(name)
    # A changed inline is compiled into its callers (and theirs, if inline).
    seen = set()
    while inlines - seen:
        names = sorted(inlines - seen)
        seen |= inlines
        args = [a for n in names for a in ('-e', n)]
        users = git(gitdir, src, 'grep', '-lw', *args, '--', '*.c', '*.h',
                    ':!tools', ':!scripts', ':!samples', ':!Documentation').split()
        call = re.compile(r'\b(?:%s)\s*\(' % '|'.join(map(re.escape, names)))
        for path in users:
            with open(os.path.join(src, path), errors='replace') as f:
                lines = f.read().splitlines()
            for caller, first, last in bodies(lines):
                if caller not in names and any(call.search(x) for x in lines[first - 1:last]):
                    funcs.add(caller)
                    if path.endswith('.h'):
                        inlines.add(caller)
    with open(out + '.tmp', 'w') as f:
        f.write(stamp + ''.join(n + '\n' for n in sorted(funcs)))
    os.replace(out + '.tmp', out)
    print(f'mmlab: {out}: {len(funcs)} functions the series changes (for KCSAN triage)')


if __name__ == '__main__':
    main()
