"""The guest tests' metadata: tests/manifest, one line per tests/NAME.c
("name set machines mib timeout", `-` for none; # comments). The guest's
runner (rootfs/bin/mmlab-test) reads the same file as /etc/mmlab/manifest,
and the Makefile picks a cross machine's tests from its machines column.

  python3 -m mmlab.manifest check              every test has one good line (exit 1 if not)
  python3 -m mmlab.manifest tests-for MACHINE  the tests a machine's guest carries
"""
import glob
import os
import sys

from . import ROOT
from .conf import MACHINES
from .outcome import die

PATH = os.path.join(ROOT, 'tests', 'manifest')
SETS = ('quick', 'slow')
COLUMNS = ('name', 'set', 'machines', 'mib', 'timeout')


class Test:
    """One line: name, set (quick or slow), machines (['all'] or machine
    names), mib and timeout (int, None for `-`, or the text when it is
    neither: check() names it); line, its number."""

    def __init__(self, name, set_, machines, mib, timeout, line=0):
        self.name, self.set, self.line = name, set_, line
        self.machines = machines.split(',')
        self.mib, self.timeout = _number(mib), _number(timeout)
        self.raw = {'mib': mib, 'timeout': timeout}

    def carried_by(self, machine):
        return 'all' in self.machines or machine in self.machines

    def __repr__(self):
        return f'Test({self.name})'


def _number(text):
    """int, None for `-`, or the text itself when it is neither."""
    if text == '-':
        return None
    return int(text) if text.isdigit() else text


def _show(path):
    """PATH as a message names it: from the top of the repository."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith('..') else rel


def _lines(path):
    """(number, fields) of each line that is neither blank nor a comment."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if fields and not fields[0].startswith('#'):
                yield n, fields


def read(path=PATH):
    """The manifest's tests, in its order (a line with too few columns is
    left out: check() names it)."""
    return [Test(*fields[:5], line=n) for n, fields in _lines(path) if len(fields) >= 5]


def tests_for(machine, path=PATH):
    """The names of the tests whose machines are `all` or name MACHINE, as
    the Makefile's tests_for picks a cross machine's. (uml and x86 share
    one root, which carries every test: the Makefile's TEST_BINS, not this.)"""
    return [t.name for t in read(path) if t.carried_by(machine)]


def check(path=PATH, tests_dir=None, machines=None):
    """What is wrong in the manifest, one line each: a test without a line
    (or with two), a line without a test, a bad set, machine or number."""
    tests_dir = tests_dir or os.path.dirname(path)
    machines = MACHINES if machines is None else machines
    rel, tdir = _show(path), _show(tests_dir)
    out, seen = [], {}
    for n, fields in _lines(path):
        where = f'{rel}:{n}'
        if len(fields) != len(COLUMNS):
            out.append(f'{where}: {len(fields)} columns, not {len(COLUMNS)} '
                       f'({" ".join(COLUMNS)})')
            if len(fields) < len(COLUMNS):
                continue
        t = Test(*fields[:5], line=n)
        if t.name in seen:
            out.append(f'{where}: {t.name} again (first on line {seen[t.name]})')
        seen.setdefault(t.name, n)
        if not os.path.exists(os.path.join(tests_dir, t.name + '.c')):
            out.append(f'{where}: {t.name}: no {tdir}/{t.name}.c')
        if t.set not in SETS:
            out.append(f'{where}: {t.name}: set {t.set!r}: {" or ".join(SETS)}')
        if t.machines != ['all']:
            for m in t.machines:
                if m not in machines:
                    out.append(f'{where}: {t.name}: machine {m!r} is not in machines.mk '
                               '(all, or machines, comma-separated)')
        for col in ('mib', 'timeout'):
            v = getattr(t, col)
            if v is not None and (not isinstance(v, int) or v <= 0):
                out.append(f'{where}: {t.name}: {col} {t.raw[col]!r}: '
                           'a positive whole number, or -')
    for c in sorted(glob.glob(os.path.join(tests_dir, '*.c'))):
        name = os.path.basename(c)[:-2]
        if name not in seen:
            out.append(f'{rel}: {tdir}/{name}.c has no line')
    return out


def main(argv):
    if argv == ['check']:
        bad = check()
        for line in bad:
            print(f'mmlab: {line}')
        if not bad:
            print(f'mmlab: {_show(PATH)}: {len(read())} tests, no problems')
        return 1 if bad else 0
    if argv[:1] == ['tests-for'] and len(argv) == 2:
        if argv[1] not in MACHINES:
            die(f'no machine {argv[1]!r} in machines.mk', f'one of: {" ".join(MACHINES)}')
        print(' '.join(tests_for(argv[1])))
        return 0
    die('usage: python3 -m mmlab.manifest check | tests-for MACHINE')
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
