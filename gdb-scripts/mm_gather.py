# SPDX-License-Identifier: GPL-2.0
"""lx-mmu-gather: a struct mmu_gather, its flags and its chain of batches."""
import gdb
from mm_common import (register_summary_printer, ulong, has_field, describe_page,
                       task_of_mm)

FLAGS = ('fullmm', 'need_flush_all', 'freed_tables', 'cleared_ptes',
         'cleared_pmds', 'cleared_puds', 'cleared_p4ds', 'unshared_tables')


def gather_lines(tlb):
    """The report for a struct mmu_gather * as a list of lines."""
    out = []
    mm = tlb['mm']
    out.append('mmu_gather %#x: mm %#x (%s)' % (ulong(tlb), ulong(mm), task_of_mm(mm)))
    start, end = ulong(tlb['start']), ulong(tlb['end'])
    out.append('  range %#x-%#x%s' % (start, end, '  (empty: already flushed)' if start >= end else ''))
    if has_field(tlb, 'flushed_start'):
        fs, fe = ulong(tlb['flushed_start']), ulong(tlb['flushed_end'])
        out.append('  flushed since the last free: %s' %
                   ('%#x-%#x' % (fs, fe) if fs < fe else 'nothing'))
    out.append('  flags ' + ' '.join('%s=%d' % (f, int(tlb[f]))
                                      for f in FLAGS if has_field(tlb, f)))
    if not has_field(tlb, 'local'):
        out.append('  (MMU_GATHER_NO_GATHER: no page batches)')
        return out
    out.append('  batch_count %d' % int(tlb['batch_count']))
    batch = tlb['local'].address
    active = ulong(tlb['active'])
    total, n, first, last = 0, 0, None, None
    while ulong(batch):
        nr, mx = int(batch['nr']), int(batch['max'])
        where = 'local, on stack' if n == 0 else 'page'
        mark = ' <- active' if ulong(batch) == active else ''
        out.append('  batch %d (%s) %#x: nr %d/%d%s' % (n, where, ulong(batch), nr, mx, mark))
        if nr:
            if first is None:
                first = batch['pages'][0]
            last = batch['pages'][nr - 1]
        total += nr
        n += 1
        batch = batch['next']
    out.append('  pages gathered: %d in %d batches' % (total, n))
    if first is not None:
        out.append('  first page %#x: %s' % (ulong(first), describe_page(first)))
        out.append('  last page  %#x: %s' % (ulong(last), describe_page(last)))
    return out


class LxMmuGather(gdb.Command):
    """Show an mmu_gather: lx-mmu-gather [EXPR] (default: tlb in the selected frame).

mm and its owner, the range to flush, the flag bits, batch_count, every
batch of the chain (address, nr/max, which is active), the pages gathered,
and the first and last page: pfn, flags, anon/file, refcount, mapcount."""

    def __init__(self):
        super().__init__('lx-mmu-gather', gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        tlb = gdb.parse_and_eval(arg.strip() or 'tlb')
        if tlb.type.strip_typedefs().code != gdb.TYPE_CODE_PTR:
            tlb = tlb.address
        for line in gather_lines(tlb):
            gdb.write(line + '\n')


LxMmuGather()
register_summary_printer('mmu_gather', gather_lines)
