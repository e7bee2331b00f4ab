# SPDX-License-Identifier: GPL-2.0
"""lx-pgwalk: walk an address through the page tables of an mm."""
import gdb
from mm_common import (ulong, is_uml, lookup, current_task, pfn_to_page,
                       phys_to_virt, describe_page, PAGE_SHIFT)

ADDR_MASK = 0x000ffffffffff000

# name, bit for the generic flags decoded at every level
UML_BITS = (('present', 0x001), ('newpage', 0x002), ('newprot', 0x004),
            ('write', 0x020), ('user', 0x040), ('young', 0x080), ('dirty', 0x100))
X86_BITS = (('present', 0x001), ('write', 0x002), ('user', 0x004), ('young', 0x020),
            ('dirty', 0x040), ('huge', 0x080), ('global', 0x100), ('nx', 1 << 63))


def levels():
    """(name, shift) from the top level down to the pte."""
    if is_uml():
        return (('pgd', 30), ('pmd', 21), ('pte', 12))
    l5 = lookup('__pgtable_l5_enabled')
    top = [('pgd', 48), ('p4d', 39)] if l5 is not None and int(l5) else [('pgd', 39)]
    return tuple(top + [('pud', 30), ('pmd', 21), ('pte', 12)])


def decode(val):
    bits = UML_BITS if is_uml() else X86_BITS
    return ' '.join(name for name, bit in bits if val & bit) or 'none'


def huge_zero_pfn():
    page = lookup('huge_zero_page')
    if page is None or not ulong(page):
        return None
    from mm_common import page_to_pfn
    return page_to_pfn(page)


def walk(addr, mm):
    """Yield report lines; return (pfn, struct page *) of the final entry or None."""
    table = ulong(mm['pgd'])
    ulong_t = gdb.lookup_type('unsigned long').pointer()
    result = None
    lines = ['lx-pgwalk %#x in mm %#x' % (addr, ulong(mm))]
    for name, shift in levels():
        idx = (addr >> shift) & 511
        entry_addr = table + idx * 8
        val = ulong(gdb.Value(entry_addr).cast(ulong_t).dereference())
        phys = val & ADDR_MASK
        line = '  %-3s[%3d] @%#x = %#018x  %s' % (name, idx, entry_addr, val, decode(val))
        leaf = name == 'pte' or (not is_uml() and name in ('pmd', 'pud') and val & 0x80)
        protnone = 0x010 if is_uml() else 0x100
        if name == 'pte' and val and not val & 1 and val & protnone:
            line += '  [PROT_NONE: present to the kernel, no access]'
        elif not val or not (val & 1):
            lines.append(line + ('  (not present)' if val else '  (none)'))
            return lines, None
        if leaf:
            pfn = (phys >> PAGE_SHIFT) + ((addr >> PAGE_SHIFT) & ((1 << (shift - PAGE_SHIFT)) - 1))
            page = pfn_to_page(pfn)
            tags = []
            if name != 'pte':
                tags.append('trans-huge')
                if huge_zero_pfn() == phys >> PAGE_SHIFT:
                    tags.append('huge zero page')
            lines.append(line + ('  [%s]' % ', '.join(tags) if tags else ''))
            lines.append('  -> pfn %#x, page %#x: %s' % (pfn, ulong(page), describe_page(page)))
            gdb.set_convenience_variable('pgwalk_page', page)
            gdb.set_convenience_variable('pgwalk_pfn', pfn)
            return lines, (pfn, page)
        lines.append(line)
        table = phys_to_virt(phys)
    return lines, result


class LxPgwalk(gdb.Command):
    """Walk ADDR through the page tables: lx-pgwalk ADDR [MM] (default: current mm).

Every level's entry is printed and decoded (present, write, dirty, young,
huge/trans-huge, the huge zero page; UML: newpage/newprot), and the final
pfn with its struct page. Sets $pgwalk_page and $pgwalk_pfn."""

    def __init__(self):
        super().__init__('lx-pgwalk', gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        if not argv:
            raise gdb.GdbError('usage: lx-pgwalk ADDR [MM]')
        addr = ulong(gdb.parse_and_eval(argv[0]))
        if len(argv) > 1:
            mm = gdb.parse_and_eval(argv[1])
        else:
            task = current_task()
            mm = task['mm'] if ulong(task['mm']) else task['active_mm']
        lines, _ = walk(addr, mm)
        for line in lines:
            gdb.write(line + '\n')


LxPgwalk()
