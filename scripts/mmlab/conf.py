"""The machines and trees tables: machines.mk and trees.mk at the top of
the repository, which the Makefile includes. Each holds NAME.FIELD = VALUE
lines (and the lists `machines`, `fields`, ...): nothing else, so this
reader and make read the same thing (tests/host/test_tables.py checks it).

  python3 -m mmlab.conf get NAME FIELD   one field (a machine's or a tree's)
  python3 -m mmlab.conf tree FIELD...    fields of the tree in use (MMLAB_TREE), a line each
  python3 -m mmlab.conf machines         the machines' names
  python3 -m mmlab.conf check            every block complete (exit 1 if not)
  python3 -m mmlab.conf table            the machines, a line each (make machines)
"""
import os
import re
import shlex
import sys

from . import ROOT
from .outcome import die

LINE = re.compile(r'^([A-Za-z0-9_.-]+?)\s*=\s*(.*?)\s*$')


def read(path):
    """{name: value} of a NAME = VALUE file, continuation lines joined."""
    out, text = {}, ''
    with open(path) as f:
        for raw in f:
            line = raw.rstrip('\n')
            if text:
                line = text + ' ' + line.lstrip()
                text = ''
            if line.endswith('\\'):
                text = line[:-1].rstrip()
                continue
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            m = LINE.match(line)
            if not m or '$' in line:
                die(f'{path}: cannot read "{line}"', 'NAME.FIELD = VALUE, no make functions')
            out[m.group(1)] = m.group(2)
    return out


def blocks(values, names, fields):
    """{name: {field: value}}, a block's `from` filling what it leaves out
    (the blocks in `names` order, so a `from` comes first)."""
    out = {}
    for n in names:
        own = {f: values[f'{n}.{f}'] for f in fields if f'{n}.{f}' in values}
        parent = own.get('from')
        if parent:
            if parent not in out:
                die(f'{n}.from = {parent}: no block {parent} before {n}',
                    f'list {parent} before {n} in `machines`')
            own = dict(out[parent], **own)
            own['from'] = parent
        out[n] = own
    return out


class Machine:
    """One row of machines.mk, with its fields typed."""
    INTS = ('nodes', 'cpus', 'timeout', 'timeout_kvm', 'test_timeout', 'mutate_timeout')
    LISTS = ('fragments', 'targets', 'packages', 'board')

    def __init__(self, name, fields, all_fields=()):
        self.name, self.fields = name, fields
        for f in all_fields:
            setattr(self, f, [] if f in self.LISTS else None)
        for f, v in fields.items():
            if f in self.INTS:
                v = int(v) if v else None
            elif f in self.LISTS:
                v = shlex.split(v)
            setattr(self, f, v)

    def out(self, root=ROOT):
        """Its O= directory, in the tree's build directory."""
        return os.path.join(build_dir(root), self.name)

    def kernel(self, root=ROOT):
        return os.path.join(self.out(root), self.image)

    def root_image(self, root=ROOT):
        """The guest's root: the UML image or the initramfs."""
        b = build_dir(root)
        return {'rootfs': os.path.join(b, 'rootfs.img'),
                'initramfs': os.path.join(b, 'initramfs.cpio'),
                'own': os.path.join(b, f'initramfs-{self.name}.cpio')}[self.root]

    def make_targets(self):
        """What make builds to boot it: the kernel, and its root unless the
        kernel's own target makes that too."""
        target = self.built_by or self.name
        return [target] if self.root == 'own' or self.built_by else [target, self.root]

    def config_name(self, compiler=None):
        """KCIDB's config_name: what the .config is made of, and the plugin
        the build was compiled with: none where @compiler (the kernel's
        LINUX_COMPILER) is a GCC whose major version plugin_gcc leaves out
        (scripts/plugin.sh decides the same)."""
        name = ' + '.join(self.base.split() + self.fragments)
        only = (self.fields.get('plugin_gcc') or '').split()
        major = re.search(r'gcc .* (\d+)\.\d+(?:\.\d+)?$', (compiler or '').split(',')[0])
        if self.plugin and not (only and major and major.group(1) not in only):
            name += f', compiled with scripts/{self.plugin}.cc'
        return f'{name} {self.note}' if self.note else name

    def __repr__(self):
        return f'Machine({self.name})'


def _tables(root=ROOT):
    m = read(os.path.join(root, 'machines.mk'))
    t = read(os.path.join(root, 'trees.mk'))
    return m, t


def load(root=ROOT):
    """The tables of the checkout at root: (machines, trees, fields of each
    kind, required fields)."""
    m, t = _tables(root)
    fields = m['fields'].split()
    machines = {n: Machine(n, f, fields) for n, f in blocks(m, m['machines'].split(), fields).items()}
    trees = blocks(t, t['trees'].split(), t['tree_fields'].split())
    return {'raw': (m, t), 'machines': machines, 'trees': trees, 'fields': fields,
            'tree_fields': t['tree_fields'].split(), 'required': m['required'].split(),
            'required_qemu': m['required_qemu'].split()}


_THIS = load()
FIELDS = _THIS['fields']
MACHINES = _THIS['machines']
TREE_FIELDS = _THIS['tree_fields']
TREES = _THIS['trees']


def machine(name):
    if name not in MACHINES:
        die(f'no machine {name!r} in machines.mk', f'one of: {" ".join(MACHINES)}')
    return MACHINES[name]


def release(os_release='/etc/os-release'):
    """This Debian release's code name (bookworm, trixie), or ''."""
    try:
        with open(os_release) as f:
            for line in f:
                k, _, v = line.strip().partition('=')
                if k == 'VERSION_CODENAME':
                    return v.strip('"')
    except OSError:
        pass
    return ''


def default_tree(rel=None):
    """The tree of this release's unversioned linux-source (trees.mk's
    `default`), else the first of trees.mk: what the Makefile picks when
    neither KVER nor KSRC says."""
    rel = release() if rel is None else rel
    for name, tr in TREES.items():
        if rel and rel in tr.get('default', '').split():
            return name
    return next(iter(TREES))


def build_dir(root=ROOT, version=None):
    """The tree's build directory: build/KVER (each tree its own, so
    switching KVER never touches the other's kernels, root or logs)."""
    return os.path.join(root, 'build', version or tree()['name'])


def patches_dir(root=ROOT, version=None):
    """The directory of the tree's quilt series (patches/KVER)."""
    return os.path.dirname(os.path.join(root, tree(version)['series']))


def tree(version=None):
    """A tree's fields: VERSION's, or the one in use (MMLAB_TREE, which the
    Makefile sets; else the release's default)."""
    version = version or os.environ.get('MMLAB_TREE') or default_tree()
    if version not in TREES:
        die(f'no kernel tree {version!r} in trees.mk', f'one of: {" ".join(TREES)}')
    return dict(TREES[version], name=version)


def problems(root=ROOT):
    """What is missing or wrong in root's tables, one line each."""
    out = []
    tables = load(root)
    m, _ = tables['raw']
    machines, trees = tables['machines'], tables['trees']
    known = set(tables['fields'])
    for key in m:
        name, _, field = key.rpartition('.')
        if name and field not in known:
            out.append(f'machines.mk: {key}: no field {field!r} (fields: the `fields` list)')
        if name and name not in machines:
            out.append(f'machines.mk: {key}: {name} is not in `machines`')
    for name, mach in machines.items():
        need = tables['required'] + (tables['required_qemu'] if mach.fields.get('boot') == 'qemu' else [])
        for f in need:
            if not mach.fields.get(f):
                out.append(f'machines.mk: {name} has no {f}')
        for frag in mach.fields.get('fragments', '').split():
            if not os.path.exists(os.path.join(root, frag)):
                out.append(f'machines.mk: {name}: fragment {frag} is not in the repository')
        if mach.fields.get('plugin') and not os.path.exists(
                os.path.join(root, 'scripts', mach.plugin + '.cc')):
            out.append(f'machines.mk: {name}: no scripts/{mach.plugin}.cc for its plugin')
        if mach.fields.get('root') not in ('rootfs', 'initramfs', 'own'):
            out.append(f'machines.mk: {name}.root = {mach.fields.get("root")}: '
                       'rootfs, initramfs or own')
        if mach.fields.get('boot') not in ('uml', 'qemu'):
            out.append(f'machines.mk: {name}.boot = {mach.fields.get("boot")}: uml or qemu')
        if mach.fields.get('accel') not in (None, 'probe', 'tcg'):
            out.append(f'machines.mk: {name}.accel = {mach.accel}: probe or tcg')
    for name, tr in trees.items():
        for f in tables['tree_fields']:
            if not tr.get(f):
                out.append(f'trees.mk: {name} has no {f}')
        if tr.get('series') and not os.path.exists(os.path.join(root, tr['series'])):
            out.append(f'trees.mk: {name}: {tr["series"]} is missing')
    return out


def main(argv):
    if argv == ['machines']:
        print(' '.join(MACHINES))
        return 0
    if argv[:1] == ['tree'] and len(argv) >= 2:
        tr = tree()
        for field in argv[1:]:
            if field not in TREE_FIELDS + ['name']:
                die(f'trees have no field {field!r}', f'one of: name {" ".join(TREE_FIELDS)}')
        print('\n'.join(tr.get(field, '') for field in argv[1:]))
        return 0
    if argv[:1] == ['get'] and len(argv) == 3:
        name, field = argv[1:]
        if name in TREES:
            if field not in TREE_FIELDS:
                die(f'trees have no field {field!r}', f'one of: {" ".join(TREE_FIELDS)}')
            print(TREES[name].get(field, ''))
            return 0
        m = machine(name)
        derived = ('kernel', 'root_image', 'make_targets', 'config_name', 'out')
        if field not in FIELDS and field not in derived:
            die(f'machines have no field {field!r}', f'one of: {" ".join(FIELDS + list(derived))}')
        v = getattr(m, field)
        v = v() if callable(v) else v
        print(' '.join(v) if isinstance(v, list) else '' if v is None else v)
        return 0
    if argv == ['table']:
        # what make machines prints: a line per machine, the fields that
        # tell them apart
        cols = ('arch', 'boot', 'root', 'cross', 'image', 'verify')
        print(f'{"machine":<11}' + ''.join(f'{c:<{w}}' for c, w in zip(cols, (8, 6, 11, 21, 25, 0))))
        for n, mach in MACHINES.items():
            vals = [mach.fields.get(c) or '-' for c in cols]
            print(f'{n:<11}' + ''.join(f'{v:<{w}}' for v, w in zip(vals, (8, 6, 11, 21, 25, 0))))
        trees = ' '.join(f'{t} ({tr["package"]})' for t, tr in TREES.items())
        print(f'trees: {trees}')
        return 0
    if argv == ['check']:
        bad = problems()
        for line in bad:
            print(f'mmlab: {line}')
        print(f'mmlab: {len(MACHINES)} machines, {len(TREES)} trees: '
              f'{"complete" if not bad else f"{len(bad)} problems"}')
        return 1 if bad else 0
    die('usage: python3 -m mmlab.conf get NAME FIELD | tree FIELD | machines | check | table')
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
