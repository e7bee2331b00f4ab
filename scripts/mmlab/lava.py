"""make lava-job / make lava-check: the x86_64 suite as a LAVA job.

  lava.py job   ROOT OUTDIR [--mode MODE]
  lava.py check ROOT KSRC OUTDIR LOGDIR [--mode MODE]

job writes OUTDIR/job.yaml (deploy the bzImage and the initramfs to tmpfs,
boot them with QEMU -smp 3 -m 2G on 2 NUMA nodes, and a "monitors" test action that turns
each KTAP result line between our markers into a LAVA test case), the
device dictionary a lab's lava-server renders for a QEMU worker
(OUTDIR/mmlab-qemu01.jinja2) and the rendered device that Debian's
lava-dispatcher reads locally (OUTDIR/device.yaml).

check runs that job here with Debian's lava-run (root), takes LAVA's test
cases from its log (2023.01 keeps only the job's verdict in result.yaml),
has results.py read the console that LAVA recorded, and compares the two
case for case: same tests in the same order, same names, pass for ok and
fail for not ok. LAVA's monitor cannot say skip (one regex group is the
result, and a KTAP skip is an "ok" line), so our SKIP must be its pass.
Exit: 0 they agree and the suite passed, 1 they disagree or a test failed,
2 setup, 3 kernel splat, 124 LAVA's timeout.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import yaml


from .outcome import die, finish, say
from . import conf, qemu
from .results import BEGIN, END, KTAP_RESULT, summarize
from .series import patchset_hash, sha256_of

# The x86 machine of machines.mk, as boot.py runs it under TCG: its run's
# timeout, and LAVA's around it: the test action must end before the boot
# action's, which bounds each monitor wait (otherwise a stalled monitor
# leaves the job passing).
X86 = conf.machine('x86')
SUITE_S = X86.timeout
APPEND = ' '.join(qemu.console_params(X86) + qemu.DEBUG_PARAMS)   # as boot.py's
SMP_NUMA_OPTIONS = qemu.pairs(qemu.smp_numa_options(X86.mem, qemu.DEFAULT_SMP, X86.nodes))
TCG_OPTIONS = [f'-accel {qemu.accel_arg("tcg")}'] + qemu.pairs(X86.board)
QEMU_OPTIONS = ['-nographic', '-monitor none', '-no-reboot', '-net none',
                f'-m {X86.mem}'] + TCG_OPTIONS + SMP_NUMA_OPTIONS
# A KTAP result line at any depth, without its directive: the same cut as
# results.KTAP_RESULT. pexpect matches a stream, not lines: from the \n
# before the line to its \r.
MONITOR = r'\n *(?P<result>ok|not ok) \d+ (?P<test_case_id>[^\r\n#]+?) *(?:#[^\r\n]*)?\r'


def write_job(root, out, mode):
    kernel, initrd = X86.kernel(root), X86.root_image(root)
    for path, fix in ((kernel, 'make x86'), (initrd, 'make initramfs')):
        if not os.path.exists(path):
            die(f'{path} is missing', fix)
    os.makedirs(out, exist_ok=True)
    minutes = -(-SUITE_S // 60)
    job = {
        'device_type': 'qemu',
        'job_name': f'mmlab {X86.arch} suite (mmlab.mode={mode})',
        'visibility': 'public',
        'priority': 'medium',
        'context': {'arch': X86.deb},
        'timeouts': {'job': {'minutes': minutes + 5}, 'action': {'minutes': minutes + 2},
                     'connection': {'minutes': 2}},
        'actions': [
            {'deploy': {
                'to': 'tmpfs', 'timeout': {'minutes': 2},
                'images': {
                    'kernel': {'url': f'file://{kernel}',
                               'image_arg': f'-kernel {{kernel}} -append '
                                            f'"{APPEND} mmlab.mode={mode}"'},
                    'ramdisk': {'url': f'file://{initrd}', 'image_arg': '-initrd {ramdisk}'}}}},
            {'boot': {'method': 'qemu', 'media': 'tmpfs', 'timeout': {'minutes': minutes + 2}}},
            {'test': {
                'timeout': {'minutes': minutes},
                'monitors': [{
                    'name': 'mmlab-ktap', 'start': BEGIN, 'end': END, 'pattern': MONITOR,
                    'fixupdict': {'ok': 'pass', 'not ok': 'fail'}}]}},
        ],
    }
    device = {
        'available_architectures': [X86.deb, X86.arch],
        'actions': {
            'deploy': {'methods': {'image': {'parameters': {}}}},
            'boot': {'connections': {'serial': None},
                     'methods': {'qemu': {'parameters': {
                         'command': X86.qemu, 'options': QEMU_OPTIONS}}}}},
        'timeouts': {},
    }
    with open(os.path.join(out, 'job.yaml'), 'w') as f:
        f.write(f'# make lava-job: the {X86.arch} suite of mmlab (scripts/mmlab/lava.py)\n')
        yaml.safe_dump(job, f, sort_keys=False, width=1000)
    with open(os.path.join(out, 'device.yaml'), 'w') as f:
        f.write('# The rendered QEMU device Debian\'s lava-run reads (no lava-server here).\n')
        yaml.safe_dump(device, f, sort_keys=False, width=1000)
    with open(os.path.join(out, 'mmlab-qemu01.jinja2'), 'w') as f:
        f.write("{# Device dictionary for a lab's lava-server: a QEMU worker like ours #}\n"
                "{% extends 'qemu.jinja2' %}\n"
                "{% set no_kvm = True %}\n"
                f"{{% set memory = {qemu.mib(X86.mem)} %}}\n"
                "{% set netdevice = 'user' %}\n"
                "{% set extra_options = " +
                repr(TCG_OPTIONS + ['-no-reboot'] + SMP_NUMA_OPTIONS) + " %}\n")
    say(f'LAVA job: {out}/job.yaml (mmlab.mode={mode}, test timeout {minutes} min), '
        f'device: {out}/device.yaml, device dictionary: {out}/mmlab-qemu01.jinja2')


def read_log(path):
    """LAVA's log, one YAML mapping per line: its test cases and the console."""
    cases, console = [], []
    with open(path, errors='replace') as f:
        for line in f:
            if not any(f'"lvl": "{lvl}"' in line for lvl in ('results', 'target', 'feedback')):
                continue
            try:
                rec = yaml.load(line, Loader=yaml.CSafeLoader)
            except yaml.YAMLError:
                continue
            msg = rec.get('msg')
            # The console is "target"; what it prints while no action
            # listens (here once: the end marker, after the monitor's last
            # wait) LAVA logs as "feedback".
            if rec.get('lvl') in ('target', 'feedback') and isinstance(msg, str):
                console.append(msg)
            elif rec.get('lvl') == 'results' and isinstance(msg, dict) \
                    and msg.get('definition') == 'mmlab-ktap':
                cases.append((msg['extra']['test_case_id'], msg['result']))
    return cases, console


def ours(console):
    """Our KTAP's result lines, in order, as LAVA should have seen them."""
    out, on = [], False
    for line in console:
        if line == BEGIN:
            on = True
        elif line == END:
            break
        elif on:
            m = KTAP_RESULT.match(line)
            if m:
                name = m.group('name').split('#', 1)[0].strip()
                out.append((name, 'pass' if m.group('ok') == 'ok' else 'fail',
                            bool(re.search(r'#\s*SKIP', line))))
    return out


def check(root, ksrc, out, logdir, mode):
    if os.geteuid() != 0:
        die('lava-run must run as root', 'sudo make lava-check')
    if not shutil.which('lava-run'):
        die('lava-run is missing', 'make lava-check installs scripts/packages-lava')
    write_job(root, out, mode)
    res = os.path.join(out, 'output')
    shutil.rmtree(res, ignore_errors=True)
    log = os.path.join(out, 'lava-run.log')
    cmd = ['lava-run', '--job-id', '1', '--output-dir', res,
           '--device', os.path.join(out, 'device.yaml'), os.path.join(out, 'job.yaml')]
    say('$ ' + ' '.join(cmd) + f' 2> {log}')
    t0 = time.monotonic()
    with open(log, 'w') as f:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=f)
        report = 60
        while proc.poll() is None:
            time.sleep(1)
            if time.monotonic() - t0 >= report:
                say(f'lava-run: {report}s')
                report += 60
    took = time.monotonic() - t0
    verdict = {}
    try:
        with open(os.path.join(res, 'result.yaml')) as f:
            verdict = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError):
        pass
    if isinstance(verdict, list):
        verdict = verdict[0] if verdict else {}
    say(f'lava-run exited {proc.returncode} after {took:.0f}s; LAVA job result: '
        f'{verdict.get("result", "none")}'
        f'{" (" + verdict["error_msg"] + ")" if verdict.get("error_msg") else ""}')
    cases, console = read_log(log)
    console_log = os.path.join(logdir, 'lava-check.log')
    with open(console_log, 'w') as f:
        f.write('\n'.join(console) + '\n')
    timed_out = SUITE_S if 'timed out' in str(verdict.get('error_msg', '')) else None
    rc = summarize('lava-check', console, logdir, ksrc, timed_out, console_log,
                   os.path.join(conf.machine('x86').out(root), 'vmlinux'),
                   {'target': 'qemu', 'runner': 'lava-run', 'lava_job': log,
                    'config_sha256': sha256_of(os.path.join(conf.machine('x86').out(root), '.config')),
                    'patchset_hash': patchset_hash(conf.patches_dir(root))})
    mine = ours(console)
    agree = bad = 0
    for i in range(max(len(mine), len(cases))):
        a = mine[i] if i < len(mine) else None
        b = cases[i] if i < len(cases) else None
        if a and b and a[0] == b[0] and a[1] == b[1]:
            agree += 1
            continue
        bad += 1
        if bad <= 10:
            say(f'  case {i + 1}: ours {a[:2] if a else "none"}, LAVA {b or "none"}')
    skips = sum(1 for a in mine if a[2])
    lava_pass = sum(1 for c in cases if c[1] == 'pass')
    say(f'LAVA: {len(cases)} cases, {lava_pass} pass, {len(cases) - lava_pass} fail '
        f'| ours: {len(mine)} results, {skips} of them skips (LAVA: pass) '
        f'| {agree} agree, {bad} differ')
    if verdict.get('result') != 'pass' and rc == 0:
        rc = 1
    if bad and rc == 0:
        rc = 1
    return finish(logdir, 'lava-check', agree, bad + (verdict.get('result') != 'pass'), 0, rc)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('what', choices=['job', 'check'])
    p.add_argument('args', nargs='+')
    p.add_argument('--mode', default='test', help='mmlab.mode= (default: the whole suite)')
    a = p.parse_args()
    if a.what == 'job':
        if len(a.args) != 2:
            die('usage: python3 -m mmlab.lava job ROOT OUTDIR')
        write_job(a.args[0], a.args[1], a.mode)
        return 0
    if len(a.args) != 4:
        die('usage: python3 -m mmlab.lava check ROOT KSRC OUTDIR LOGDIR')
    return check(*a.args, a.mode)


if __name__ == '__main__':
    sys.exit(main())
