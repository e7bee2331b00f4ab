"""The one QEMU command builder: boot.py, bench.py and the LAVA job all
take their QEMU arguments from here and the machine's row (machines.mk)."""
import os
import re
import subprocess

from .outcome import die

# Under TCG one host thread runs every vCPU (why not one each before QEMU
# 8.1: thread_caveat()). The guest still has its CPUs, IPIs and per-CPU
# TLBs; they just do not run at the same instant. QEMU_TCG_THREAD=multi
# asks for one host thread per vCPU (docs/architectures.md: where that works).
TCG_THREAD = 'single'
# Every guest booted here poisons the pages it frees (CONFIG_PAGE_POISONING
# in both config fragments): a use after free of a page or of a gather's
# batch then reads 0xaa.. and faults, instead of finding the old contents.
DEBUG_PARAMS = ['page_poison=1']
# vCPUs of a guest unless told: the migration tests run writers on two CPUs
# beside the migrating one.
DEFAULT_SMP = 3


def tcg_thread():
    """TCG's threading: QEMU_TCG_THREAD (single or multi), else single."""
    thread = os.environ.get('QEMU_TCG_THREAD', TCG_THREAD)
    if thread not in ('single', 'multi'):
        die(f'QEMU_TCG_THREAD={thread}', 'QEMU_TCG_THREAD=single or multi')
    return thread


def version(binary):
    """(major, minor) that @binary --version prints, or None."""
    try:
        out = subprocess.run([binary, '--version'], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version (\d+)\.(\d+)', out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def thread_caveat(binary, thread):
    """What to say before a multi-threaded TCG guest of QEMU before 8.1:
    a vCPU there can run code that another vCPU has just patched (fixed by
    QEMU's deba78709ae8), so the guest may oops on an int3 that a static
    key or tracepoint no longer has. None when that cannot happen."""
    v = version(binary) if thread == 'multi' else None
    if not v or v >= (8, 1):
        return None
    return (f'{binary} is QEMU {v[0]}.{v[1]}: under thread=multi a vCPU can run code another '
            'vCPU has just patched (fixed in QEMU 8.1); an "int3" oops where the kernel '
            'patched a static key or tracepoint is QEMU\'s, not the kernel\'s')


def accel_arg(accel, thread=TCG_THREAD):
    """-accel's value: kvm, or tcg with its threading."""
    return f'tcg,thread={thread}' if accel == 'tcg' else accel


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
    total = mib(mem)
    if total % nodes or smp < nodes:
        die(f'--mem {mem} --smp {smp} --numa {nodes}',
            'memory divisible by the nodes, at least one vCPU per node')
    opts, first = smp_opts, 0
    for i in range(nodes):
        last = first + (smp - first) // (nodes - i) - 1
        opts += ['-object', f'memory-backend-ram,id=node{i},size={total // nodes}M',
                 '-numa', f'node,nodeid={i},memdev=node{i},cpus={first}-{last}']
        first = last + 1
    return opts


def machine_options(m, accel, mem, smp, nodes, thread=TCG_THREAD):
    """The arguments that describe the guest machine, without the kernel,
    its root and its command line (what a LAVA device gives QEMU)."""
    opts = ['-accel', accel_arg(accel, thread), '-m', mem, '-nographic', '-no-reboot']
    return opts, (m.board if accel == 'tcg' else []) + smp_numa_options(mem, smp, nodes)


def mib(mem):
    """'2G' -> 2048, '384M' -> 384."""
    units = {'M': 1, 'G': 1024}
    if not mem or mem[-1] not in units or not mem[:-1].isdigit():
        die(f'memory size {mem}', 'give the memory as NM or NG')
    return int(mem[:-1]) * units[mem[-1]]


def pairs(opts):
    """['-cpu', 'max', '-no-reboot'] -> ['-cpu max', '-no-reboot']: each
    option with its value, as LAVA's device options are written."""
    out = []
    for o in opts:
        if out and not o.startswith('-'):
            out[-1] += ' ' + o
        else:
            out.append(o)
    return out


def console_params(m):
    return [f'console={m.console}', 'panic=-1']


def command(m, kernel, initrd, params, accel, mem, smp, nodes, thread=TCG_THREAD, gdb=False):
    """QEMU's argv for machine @m booting @kernel with @initrd and the
    kernel parameters @params (a list)."""
    head, tail = machine_options(m, accel, mem, smp, nodes, thread)
    cmd = [m.qemu] + head + ['-kernel', kernel, '-initrd', initrd] + tail
    if gdb:
        cmd += ['-s', '-S']
    return cmd + ['-append', ' '.join(params)]


def probe_command(m, kernel):
    """A short KVM boot of @kernel that prints early (boot.py's probe: does a
    KVM guest run here at all?)."""
    return [m.qemu, '-accel', 'kvm', '-m', '256M', '-nographic', '-no-reboot', '-kernel', kernel,
            '-append', f'console={m.console} earlyprintk=serial panic=-1 mmlab.mode=hang']
