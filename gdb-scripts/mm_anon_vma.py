# SPDX-License-Identifier: GPL-2.0
"""lx-anon-vma: an anon_vma, its lock and every VMA on its interval tree."""
import gdb
from mm_common import (register_summary_printer, ulong, container_of, rb_inorder,
                       task_of_mm, PAGE_MAPPING_ANON)


def to_anon_vma(val):
    """Accept a struct anon_vma *, or a struct page */folio * to find it."""
    t = val.type.strip_typedefs()
    if t.code != gdb.TYPE_CODE_PTR:
        val, t = val.address, val.address.type.strip_typedefs()
    tag = t.target().strip_typedefs().tag
    if tag == 'anon_vma':
        return val
    if tag in ('page', 'folio'):
        mapping = ulong(val['mapping'])
        if not mapping & PAGE_MAPPING_ANON:
            raise gdb.GdbError('that %s is not anonymous (mapping %#x)' % (tag, mapping))
        return gdb.Value(mapping & ~3).cast(gdb.lookup_type('struct anon_vma').pointer())
    raise gdb.GdbError('need a struct anon_vma *, struct page * or struct folio *')


def anon_vma_lines(av):
    out = ['anon_vma %#x: root %#x parent %#x refcount %d' %
           (ulong(av), ulong(av['root']), ulong(av['parent']), int(av['refcount']['counter']))]
    sem = av['root']['rwsem']
    owner = ulong(sem['owner']['counter'])
    out.append('  root rwsem: count %#x owner %#x' % (ulong(sem['count']['counter']), owner))
    out.append('  num_children %d num_active_vmas %d' %
               (int(av['num_children']), int(av['num_active_vmas'])))
    n = 0
    for node in rb_inorder(av['rb_root']['rb_root']['rb_node']):
        avc = container_of(node, 'struct anon_vma_chain', 'rb')
        vma = avc['vma']
        mm = vma['vm_mm']
        out.append('  vma %#x %#x-%#x mm %#x (%s)' %
                   (ulong(vma), ulong(vma['vm_start']), ulong(vma['vm_end']), ulong(mm),
                    task_of_mm(mm)))
        n += 1
    out.append('  %d vmas' % n)
    return out


class LxAnonVma(gdb.Command):
    """Show an anon_vma: lx-anon-vma EXPR (an anon_vma, or a page/folio to find it).

Root, parent, refcount, the root's rwsem (count, owner), num_children,
num_active_vmas, and every VMA on its interval tree with its mm and range."""

    def __init__(self):
        super().__init__('lx-anon-vma', gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        if not arg.strip():
            raise gdb.GdbError('usage: lx-anon-vma EXPR')
        for line in anon_vma_lines(to_anon_vma(gdb.parse_and_eval(arg))):
            gdb.write(line + '\n')


LxAnonVma()
register_summary_printer('anon_vma', anon_vma_lines)
