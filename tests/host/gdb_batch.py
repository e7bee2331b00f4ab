# SPDX-License-Identifier: GPL-2.0
# Run by tests/host/gdb-batch.sh inside `gdb -batch` on UML booted into the
# munmap workload: at the workload's munmap() walk the address and its
# anon_vma, then stop in the tlb_flush_mmu() of that munmap and show the
# gather. Breakpoints filter on the task name; after their one hit they
# disable themselves so the rest of the boot runs at full speed.
import gdb

COMM = 'munmap'


def comm():
    return gdb.parse_and_eval('$mm_current()->comm').string()


class FlushStop(gdb.Breakpoint):
    def stop(self):
        if comm() != COMM:
            return False
        gdb.write('=== lx-mmu-gather\n')
        gdb.execute('lx-mmu-gather tlb')
        self.enabled = False
        return False


class MunmapEntry(gdb.Breakpoint):
    def stop(self):
        if comm() != COMM:
            return False
        addr = int(gdb.parse_and_eval('addr'))
        gdb.write('=== lx-pgwalk %#x\n' % addr)
        gdb.execute('lx-pgwalk %#x' % addr)
        gdb.write('=== lx-anon-vma $pgwalk_page\n')
        gdb.execute('lx-anon-vma $pgwalk_page')
        self.enabled = False
        flush.enabled = True
        return False


flush = FlushStop('tlb_flush_mmu', internal=True)
flush.enabled = False
MunmapEntry('sys_munmap', internal=True)
gdb.execute('run')
