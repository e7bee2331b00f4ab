# SPDX-License-Identifier: GPL-2.0
"""lx-mmu-gather: a struct mmu_gather, its flags and its chain of batches."""
import gdb
from mm_common import (register_summary_printer, ulong, has_field, describe_page,
                       task_of_mm)

FLAGS = ('fullmm', 'need_flush_all', 'freed_tables', 'cleared_ptes',
         'cleared_pmds', 'cleared_puds', 'cleared_p4ds', 'unshared_tables')


# Since v6.3 a batch holds encoded pages (include/linux/mm_types.h): the
# low bits of each entry are flags, and an entry flagged NR_PAGES_NEXT is
# followed by one holding the number of pages of that folio range.
ENCODED_PAGE_BITS = 3
ENCODED_PAGE_BIT_DELAY_RMAP = 1
ENCODED_PAGE_BIT_NR_PAGES_NEXT = 2


def batch_entries(batch):
    """[(page pointer value, nr_pages, delay_rmap)] of a batch, decoded."""
    nr = int(batch['nr'])
    if has_field(batch, 'pages'):            # before 6.3: plain pages
        return [(ulong(batch['pages'][i]), 1, False) for i in range(nr)]
    arr = batch['encoded_pages']
    out, i = [], 0
    while i < nr:
        v = ulong(arr[i])
        flags = v & ENCODED_PAGE_BITS
        pages = 1
        if flags & ENCODED_PAGE_BIT_NR_PAGES_NEXT and i + 1 < nr:
            i += 1
            pages = ulong(arr[i]) >> 2
        out.append((v & ~ENCODED_PAGE_BITS, pages, bool(flags & ENCODED_PAGE_BIT_DELAY_RMAP)))
        i += 1
    return out


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
    total, n, first, last, ranges, delayed = 0, 0, None, None, 0, 0
    page_t = gdb.lookup_type('struct page').pointer()
    while ulong(batch):
        nr, mx = int(batch['nr']), int(batch['max'])
        where = 'local, on stack' if n == 0 else 'page'
        mark = ' <- active' if ulong(batch) == active else ''
        ents = batch_entries(batch)
        pages = sum(e[1] for e in ents)
        extra = '' if pages == nr else ', %d pages' % pages
        out.append('  batch %d (%s) %#x: nr %d/%d%s%s' % (n, where, ulong(batch), nr, mx, extra, mark))
        if ents:
            if first is None:
                first = ents[0][0]
            last = ents[-1][0]
        total += pages
        ranges += sum(1 for e in ents if e[1] > 1)
        delayed += sum(e[1] for e in ents if e[2])
        n += 1
        batch = batch['next']
    more = ''
    if ranges or delayed:
        more = ' (%d folio ranges, %d pages with their rmap delayed to the flush)' % (ranges, delayed)
    out.append('  pages gathered: %d in %d batches%s' % (total, n, more))
    if first is not None:
        for name, v in (('first page', first), ('last page ', last)):
            page = gdb.Value(v).cast(page_t)
            out.append('  %s %#x: %s' % (name, v, describe_page(page)))
    return out


class LxMmuGather(gdb.Command):
    """Show an mmu_gather: lx-mmu-gather [EXPR] (default: tlb in the selected frame).

mm and its owner, the range to flush, the flag bits, batch_count, every
batch of the chain (address, nr/max, which is active), the pages gathered,
and the first and last page: pfn, flags, anon/file, refcount, mapcount.
Since 6.3 a batch holds encoded pages: entries are decoded (a folio range
is two entries, its pages counted; delayed rmaps are said)."""

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
