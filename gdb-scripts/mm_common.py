# SPDX-License-Identifier: GPL-2.0
"""Shared helpers of the mmlab gdb commands: architecture, current task,
struct page decoding, container_of and rbtree walks. Works on UML (3-level
page tables, mem_map) and x86_64 (4/5-level, vmemmap_base)."""
import gdb

PAGE_SHIFT = 12
PAGE_MAPPING_ANON = 1


def lookup(name):
    sym = gdb.lookup_global_symbol(name) or gdb.lookup_static_symbol(name)
    return sym.value() if sym else None


def is_uml():
    return gdb.lookup_global_symbol('uml_physmem') is not None


def ulong(v):
    return int(v.cast(gdb.lookup_type('unsigned long')))


def has_field(value_or_type, name):
    """Does the struct (or the struct pointed to) have field @name, also
    inside anonymous members (6.1's mm_struct keeps its fields in one)?"""
    t = value_or_type.type if isinstance(value_or_type, gdb.Value) else value_or_type
    t = t.strip_typedefs()
    if t.code == gdb.TYPE_CODE_PTR:
        t = t.target().strip_typedefs()
    for f in t.fields():
        if f.name == name:
            return True
        if f.name is None and f.type.strip_typedefs().code in (gdb.TYPE_CODE_STRUCT,
                                                              gdb.TYPE_CODE_UNION):
            if has_field(f.type, name):
                return True
    return False


def container_of(ptr, typename, member):
    t = gdb.lookup_type(typename)
    offset = next(f.bitpos // 8 for f in t.fields() if f.name == member)
    return gdb.Value(ulong(ptr) - offset).cast(t.pointer())


def rb_inorder(node):
    """Yield the nodes of an rbtree (struct rb_node *) in order."""
    stack = []
    while stack or ulong(node):
        while ulong(node):
            stack.append(node)
            node = node['rb_left']
        node = stack.pop()
        yield node
        node = node['rb_right']


def thread_size():
    return int(lookup('init_stack').type.sizeof)


def current_task():
    """The running task. x86: the per-cpu current_task; UML keeps it in the
    thread_info at the bottom of the kernel stack."""
    if is_uml():
        sp = ulong(gdb.parse_and_eval('$sp'))
        ti = gdb.Value(sp & ~(thread_size() - 1)).cast(
            gdb.lookup_type('struct thread_info').pointer())
        return ti['task']
    return gdb.parse_and_eval('$lx_current()').address


def page_type():
    return gdb.lookup_type('struct page')


def pfn_to_page(pfn):
    if is_uml():
        return lookup('mem_map') + pfn
    base = ulong(lookup('vmemmap_base'))
    return gdb.Value(base + pfn * page_type().sizeof).cast(page_type().pointer())


def page_to_pfn(page):
    if is_uml():
        return (ulong(page) - ulong(lookup('mem_map'))) // page_type().sizeof
    return (ulong(page) - ulong(lookup('vmemmap_base'))) // page_type().sizeof


def phys_to_virt(phys):
    if is_uml():
        return ulong(lookup('uml_physmem')) + phys
    return ulong(lookup('page_offset_base')) + phys


def describe_page(page):
    """pfn, flags, anon/file, refcount and mapcount of a struct page *
    (of its head page for a tail page of a compound page)."""
    head = ulong(page['compound_head'])
    if head & 1:
        head_page = gdb.Value(head - 1).cast(page_type().pointer())
        return 'pfn %#x, tail of head page %#x: %s' % (page_to_pfn(page), head - 1,
                                                        describe_page(head_page))
    mapping = ulong(page['mapping'])
    kind = 'anon' if mapping & PAGE_MAPPING_ANON else ('file' if mapping else 'none')
    text = ('pfn %#x flags %#x %s refcount %d mapcount %d' %
            (page_to_pfn(page), ulong(page['flags']), kind,
             int(page['_refcount']['counter']), int(page['_mapcount']['counter']) + 1))
    try:
        is_head = ulong(page['flags']) >> int(gdb.parse_and_eval('PG_head')) & 1
        if is_head and has_field(page_type(), 'compound_mapcount'):
            second = (page + 1).dereference()
            text += ' (compound: PMD mapcount %d)' % (int(second['compound_mapcount']['counter']) + 1)
    except gdb.error:
        pass
    return text


def task_of_mm(mm):
    """'comm[pid]' of the mm's owner when the kernel records it."""
    if has_field(mm, 'owner') and ulong(mm['owner']):
        t = mm['owner']
        return '%s[%d]' % (t['comm'].string(), int(t['pid']))
    return '?'


class MmCurrent(gdb.Function):
    """$mm_current(): the running task (works on UML, where $lx_current() does not)."""

    def __init__(self):
        super().__init__('mm_current')

    def invoke(self):
        return current_task()


MmCurrent()


class SummaryPrinter:
    """Pretty-printer showing a struct through a helper's report lines."""

    def __init__(self, lines_of, val):
        self.lines_of, self.val = lines_of, val

    def to_string(self):
        return '\n'.join(self.lines_of(self.val.address))


def register_summary_printer(tag, lines_of):
    """`p *x` for struct @tag prints lines_of(&x) instead of raw fields."""
    def lookup(val):
        t = val.type.strip_typedefs()
        if t.code == gdb.TYPE_CODE_STRUCT and t.tag == tag and val.address is not None:
            return SummaryPrinter(lines_of, val)
        return None
    gdb.pretty_printers.append(lookup)
