"""make kcidb: the last results as one KCIDB v5.3 document, validated.

  python3 -m mmlab.kcidb ROOT KSRC LOGDIR OUT

One checkout (the tree of trees.mk that MMLAB_TREE names, default the
first: its version as KSRC's Makefile gives it, from the stable branch the
row names, as Debian's package of the row has it, plus our series:
patchset_hash; and the same without the series for make bench's stock
kernel), one build per machine of machines.mk built here (a .config in its
O= directory build/NAME; its architecture, variant, config_name and image
from the table), one test per KTAP node of each guest run that boot.py
recorded in LOGDIR (NAME.run and NAME.json, hung on the build of the run's
machine; the runs of mutants and bisect steps are not results of this
tree), the bench medians as DONE tests with a number. Ids are "mmlab:" and
what the object is, so the same results give the same document.

Validated against scripts/kcidb-v5.3.schema.json with Debian's
python3-jsonschema (Draft-07, format checking on): exit 1 and every error
when it does not validate, 2 when there is nothing to report.
"""
import glob
import json
import os
import re
import subprocess
import sys

from . import conf
from .outcome import FAIL, PASS, die, finish, warn, write_summary
from .series import patchset_hash, patches, sha256_of

ORIGIN = 'mmlab'
STABLE = 'https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git'


def segment(name):
    """One path segment in KCIDB's [a-zA-Z0-9_-]+."""
    return re.sub(r'[^a-zA-Z0-9_-]+', '_', name).strip('_') or '_'


def checkout(root, ksrc, tree):
    series_file = os.path.join(root, tree['series'])
    series = patches(series_file)
    patchset = patchset_hash(os.path.dirname(series_file), series_file)
    version = subprocess.run(['make', '-s', '-C', ksrc, 'kernelversion'], capture_output=True,
                             text=True, check=False).stdout.strip() or 'unknown'
    if version != 'unknown' and not version.startswith(tree['version'] + '.'):
        warn(f'{ksrc} is Linux {version}, not {tree["version"]}.x, the tree of trees.mk in use '
             f'(MMLAB_TREE): the checkout says {tree["stable"]}')
    deb = subprocess.run(['dpkg-query', '-W', '-f', '${Version}', tree['package']],
                         capture_output=True, text=True, check=False).stdout.strip()
    return {
        'id': f'{ORIGIN}:v{version}-{patchset[:16]}',
        'origin': ORIGIN,
        'tree_name': 'stable',
        'git_repository_url': STABLE,
        'git_repository_branch': tree['stable'],
        'git_commit_name': f'v{version}',
        'git_commit_tags': [f'v{version}'],
        'patchset_hash': patchset,
        'valid': True,
        'misc': {'source': f'Debian {tree["package"]} {deb}'.strip(),
                 'series': series},
    }


def stock_checkout(co):
    """The same tree without our series: what make bench's stock kernel is."""
    stock = dict(co, id=co['id'].rsplit('-', 1)[0], patchset_hash='',
                 misc={'source': co['misc']['source'], 'series': []})
    return stock


def builds(root, checkout_id, stock_id):
    """{machine: build} of every machine of machines.mk with a .config in
    its O= directory, in the table's order."""
    out = {}
    for d, m in conf.MACHINES.items():
        arch, variant = m.kcidb_arch, m.variant
        co_id = stock_id if variant == 'stock' else checkout_id
        o = m.out(root)
        cfg = os.path.join(o, '.config')
        if not os.path.exists(cfg):
            continue
        image = m.kernel(root)
        compiler = None
        compile_h = os.path.join(o, 'include/generated/compile.h')
        if os.path.exists(compile_h):
            with open(compile_h) as f:
                found = re.search(r'LINUX_COMPILER\s+"([^"]*)"', f.read())
            compiler = found.group(1) if found else None
        b = {
            'id': f'{co_id}:{arch}-{variant}-{sha256_of(cfg)[:12]}',
            'checkout_id': co_id,
            'origin': ORIGIN,
            'architecture': arch,
            'config_name': m.config_name(compiler),
            'config_url': f'file://{cfg}',
            # A .config whose image is missing or older: the last build failed.
            'status': 'PASS' if os.path.exists(image) and
                      os.path.getmtime(image) >= os.path.getmtime(cfg) else 'FAIL',
            'misc': {'variant': variant, 'output_dir': o, 'config_sha256': sha256_of(cfg)},
        }
        if compiler:
            b['compiler'] = compiler
        out[d] = b
    return out


def run_tests(name, run, result, build_id):
    """One KCIDB test per KTAP node of one run."""
    tests, seen = [], {}

    def add(path, status, **extra):
        n = seen[path] = seen.get(path, 0) + 1
        if n > 1:
            path = f'{path}_{n}'
        t = {'id': f'{build_id}:{name}:{path}', 'build_id': build_id, 'origin': ORIGIN,
             'path': path, 'status': status,
             'environment': {'comment': f'{run["target"]} guest, mmlab run {name}'},
             'log_url': f'file://{run["log"]}'}
        t.update(extra)
        tests.append(t)

    def walk(group, prefix):
        for c in group.get('test_cases', []):
            if c['name']:       # unnamed: kunit.py's stand-in for a test that never reported
                add(f'{prefix}.{segment(c["name"])}', c['status'], comment=c['name'])
        for sub in group.get('sub_groups', []):
            walk(sub, f'{prefix}.{segment(sub["name"])}')
    # Each test's own result line too: a test can fail after its cases passed.
    verdict = dict(run.get('top', []))
    reported = set(verdict)
    for top in result.get('sub_groups', []):
        reported.add(top['name'])
        walk(top, f'mmlab.{segment(top["name"])}')
        if top['name'] in verdict:
            add(f'mmlab.{segment(top["name"])}', verdict[top['name']],
                comment=f'{top["name"]}, the test as a whole')
    for c in result.get('test_cases', []):
        if c['name']:
            reported.add(c['name'])
            add(f'mmlab.{segment(c["name"])}', c['status'], comment=c['name'])
    why = run.get('why', '')
    missing = [t for t in run.get('planned', []) if t not in reported]
    for i, t in enumerate(missing):
        if i == 0 and run['rc'] in (3, 124):
            add(f'mmlab.{segment(t)}', 'ERROR', comment=f'{t}: running when the run ended',
                log_excerpt=why[:16384])
        else:
            add(f'mmlab.{segment(t)}', 'MISS', comment=f'{t}: never reported')
    if run['rc'] in (3, 124) and not missing:
        add('mmlab', 'ERROR', comment=why, log_excerpt=why[:16384])
    return tests


def bench_tests(root, blds):
    path = os.path.join(conf.build_dir(root), 'bench', 'results.json')
    if not os.path.exists(path):
        return []
    with open(path) as f:
        doc = json.load(f)
    tests = []
    for kernel, d in (('stock', 'x86-stock'), ('off', 'x86-off'), ('patched', 'x86')):
        if d not in blds:
            continue
        bid = blds[d]['id']
        for e in doc['results']:
            if kernel not in e:
                continue
            p = f'mmlab.bench.{segment(e["workload"])}.pages_{e["pages"]}'
            if e.get('remote'):
                p += f'.remote_{e["remote"]}'
            tests.append({'id': f'{bid}:bench:{p}', 'build_id': bid, 'origin': ORIGIN,
                          'path': p, 'status': 'DONE',
                          'number': {'value': e[kernel]['ns_per_page_median'], 'unit': 'ns/page'},
                          'comment': f'median over {doc["boots_per_kernel"]} boots, {kernel} kernel',
                          'misc': {'boots': e[kernel]['ns_per_page_boots']}})
    return tests


def main():
    if len(sys.argv) != 5:
        die('usage: python3 -m mmlab.kcidb ROOT KSRC LOGDIR OUT')
    root, ksrc, logdir, out = sys.argv[1:]
    try:
        import jsonschema  # pylint: disable=import-outside-toplevel
    except ImportError:
        die('python3-jsonschema is missing', 'make deps')
    co = checkout(root, ksrc, conf.tree())
    stock = stock_checkout(co)
    blds = builds(root, co['id'], stock['id'])
    # a run that names no machine: the table's first machine of its kind
    by_target = {t: blds.get(next((n for n, m in conf.MACHINES.items() if m.boot == t), ''))
                 for t in ('uml', 'qemu')}
    tests = []
    for run_path in sorted(glob.glob(os.path.join(logdir, '*.run'))):
        name = os.path.basename(run_path)[:-4]
        if name.startswith(('mutate', 'bisect')):
            continue
        run = json.load(open(run_path))
        # The build of the run's machine; a run recorded before runs named
        # their machine: the O= directory its kernel came from, else the
        # first build of its kind (uml or qemu).
        if run.get('machine'):
            build = blds.get(run['machine'])
        else:
            build = next((b for b in blds.values()
                          if run.get('kernel', '').startswith(b['misc']['output_dir'] + '/')),
                         by_target.get(run['target']))
        if build is None:
            print(f'mmlab: {name}: no {run.get("machine") or run["target"]} build to hang it on, '
                  'left out')
            continue
        # A run of a kernel built from another series or .config is not a
        # result of this build (local edits to the tree are not seen here).
        if (run.get('config_sha256'), run.get('patchset_hash')) != \
                (build['misc']['config_sha256'], co['patchset_hash']):
            print(f'mmlab: {name}: ' + ('its kernel was built from another .config or series'
                                        if run.get('config_sha256') else
                                        'recorded without its build (an older run)') + ', left out')
            continue
        json_path = os.path.join(logdir, f'{name}.json')
        result = json.load(open(json_path)) if os.path.exists(json_path) else {}
        tests += run_tests(name, run, result, build['id'])
    tests += bench_tests(root, blds)
    if not blds:
        die('no kernel built yet', 'make, then make kcidb')
    checkouts = [co] + ([stock] if any(b['checkout_id'] == stock['id'] for b in blds.values())
                        else [])
    doc = {'version': {'major': 5, 'minor': 3}, 'checkouts': checkouts,
           'builds': list(blds.values()), 'tests': tests}
    schema_path = os.path.join(root, 'scripts/kcidb-v5.3.schema.json')
    schema = json.load(open(schema_path))
    v = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    errors = sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))
    with open(out, 'w') as f:
        json.dump(doc, f, indent=1)
    if errors:
        for e in errors[:20]:
            where = '/'.join(str(p) for p in e.absolute_path)
            print(f'mmlab: kcidb: {where}: {e.message}', file=sys.stderr)
        write_summary(logdir, 'kcidb', 0, 1, 0, FAIL)
        die(f'{out} does not validate against {schema_path}: {len(errors)} errors', rc=FAIL)
    counts = {}
    for t in tests:
        counts[t['status']] = counts.get(t['status'], 0) + 1
    print(f'mmlab: {out}: KCIDB v5.3, valid: {len(checkouts)} checkouts, {len(blds)} builds, '
          f'{len(tests)} tests '
          f'({", ".join(f"{n} {s}" for s, n in sorted(counts.items()))})')
    return finish(logdir, 'kcidb', 1, 0, 0, PASS)


if __name__ == '__main__':
    sys.exit(main())
