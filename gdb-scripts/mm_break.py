# SPDX-License-Identifier: GPL-2.0
"""mm-break gather|rmap|thp [COMM]: breakpoint presets for the MM paths."""
import gdb

PRESETS = {
    'gather': ('tlb_flush_mmu', 'tlb_next_batch', 'tlb_finish_mmu'),
    'rmap': ('folio_lock_anon_vma_read',),
    'thp': ('__split_huge_pmd', '__split_huge_zero_page_pmd'),
}


def exists(fn):
    """Can gdb place a breakpoint on @fn (also an inlined-only function)?"""
    try:
        return bool(gdb.decode_line(fn)[1])
    except gdb.error:
        return False


class MmBreak(gdb.Command):
    """Set the useful breakpoints of an MM path: mm-break gather|rmap|thp [COMM].

gather: tlb_flush_mmu, tlb_next_batch, tlb_finish_mmu; rmap:
folio_lock_anon_vma_read; thp: __split_huge_pmd, __split_huge_zero_page_pmd.
With COMM they only stop in tasks of that name ($mm_current()->comm), so
the rest of the system does not stop at every unmap."""

    def __init__(self):
        super().__init__('mm-break', gdb.COMMAND_BREAKPOINTS)

    def complete(self, text, word):
        return [p for p in PRESETS if p.startswith(text)]

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        if not argv or argv[0] not in PRESETS:
            raise gdb.GdbError('usage: mm-break %s [COMM]' % '|'.join(PRESETS))
        comm = argv[1] if len(argv) > 1 else None
        for fn in PRESETS[argv[0]]:
            if not exists(fn):
                gdb.write('mm-break: no %s in this kernel (not built: UML has no THP), skipped\n'
                          % fn)
                continue
            bp = gdb.Breakpoint(fn)
            if comm:
                bp.condition = '$_streq($mm_current()->comm, "%s")' % comm
            gdb.write('mm-break: breakpoint %d at %s%s\n' %
                      (bp.number, fn, ' for comm %s' % comm if comm else ''))


MmBreak()
