"""One kernel build into its own O= directory, with progress.

kbuild's own short lines ("  CC      mm/mmu_gather.o") are counted, not
printed: every PROGRESS_S seconds (default 30) one line says how many steps
are done, of how many the last full build of this O= directory had, and the
elapsed time. Everything else kbuild prints (warnings, errors) passes
through, minus three known-harmless host-linker notes. V=1 in the
environment prints every line.

usage: python3 -m mmlab.kbuild NAME KSRC O ARCH CC JOBS TARGET...
Exit: 0 built, 2 the build failed (the kernel's own messages say why).
"""
import os
import re
import select
import subprocess
import sys
import time

from .outcome import SETUP, die

NOISE = ('missing .note.GNU-stack', 'NOTE: This behaviour is deprecated',
         'has a LOAD segment with RWX')
STEP = re.compile(r'^  [A-Z][A-Z0-9_]* +\S')
# 6.1's Kbuild.include starts a shell for every $(call cmd,x), even when
# cmd_x is empty: "$(call cmd,force_checksrc)" after each C object, so a
# build that changes one file still spawns ~730 shells that do nothing
# (2.2 s of the 9 s no-op walk of our UML tree, measured). Upstream's
# later Kbuild.include runs nothing for an empty command; this is the
# same macro with 6.1's names, given on the command line, which overrides
# the makefile's own definition in every sub-make. It changes no command
# that runs, so nothing is rebuilt because of it. Only for a tree whose
# Kbuild.include has 6.1's names (echo-cmd): 6.12's skips empty commands
# itself and prints through other macros, which this would silence.
QUIET_CMD = ('cmd=@$(if $(cmd_$(1)),set -e; $(echo-cmd) $($(quiet)redirect) '
             '$(delete-on-interrupt) $(cmd_$(1)),:)')


def old_kbuild(ksrc):
    """Does the tree's Kbuild.include spawn a shell for an empty command
    (6.1's, with its echo-cmd)?"""
    try:
        with open(os.path.join(ksrc, 'scripts', 'Kbuild.include')) as f:
            return re.search(r'^echo-cmd\b', f.read(), re.M) is not None
    except OSError:
        return False


def main():
    if len(sys.argv) < 8:
        die('usage: python3 -m mmlab.kbuild NAME KSRC O ARCH CC JOBS TARGET...')
    name, ksrc, out, arch, cc, jobs, *targets = sys.argv[1:]
    every = float(os.environ.get('PROGRESS_S', '30'))
    verbose = os.environ.get('V') == '1'
    os.makedirs(out, exist_ok=True)
    memo = os.path.join(out, '.mmlab-steps')
    try:
        with open(memo) as f:
            full = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        full = 0
    # The parent make's flags (-s from "make -s") would hide kbuild's step
    # lines: this build sets its own.
    env = dict(os.environ, MAKEFLAGS='')
    cmd = ['make', '--no-print-directory', '-C', ksrc, f'O={out}', f'ARCH={arch}',
           f'CC={cc}', f'-j{jobs}'] + ([QUIET_CMD] if old_kbuild(ksrc) else []) + targets
    print(f'mmlab: building {name} ({jobs} jobs, CC={cc}) in {out} ...', flush=True)
    t0 = last = time.monotonic()
    steps = 0
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    buf = b''
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b'\n')
            for raw in lines:
                line = raw.decode('utf-8', 'replace')
                if STEP.match(line):
                    steps += 1
                    if not verbose:
                        continue
                if verbose or not any(n in line for n in NOISE):
                    print(line, flush=True)
        now = time.monotonic()
        if now - last >= every:
            last = now
            of = f' of ~{full} in a full build ({min(99, 100 * steps // full)}%)' if full else ''
            print(f'mmlab: {name}: {steps} steps{of}, {now - t0:.0f}s', flush=True)
    rc = proc.wait()
    took = time.monotonic() - t0
    if rc != 0:
        die(f'{name} build failed (exit {rc}) after {took:.0f}s', 'the lines above say why', rc=SETUP)
    if steps > full:
        with open(memo, 'w') as f:
            f.write(f'{steps}\n')
    print(f'mmlab: {name} kernel built in {took:.0f}s ({steps} steps)', flush=True)


if __name__ == '__main__':
    main()
