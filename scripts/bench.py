#!/usr/bin/python3
"""Boot the stock and the patched x86_64 kernel alternately (A/B/A/B) in
QEMU with the same initramfs, in mmlab.mode=benchmark: each boot runs
tests/bench, which prints one JSON line per workload (median of 5 runs).
Report per workload the median over the boots of each kernel, the
patched/stock ratio and the gather counters (deterministic where times are
not), as a table, build/bench/results.json and build/bench/bench.png
(gnuplot)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def say(msg):
    print(f'mmlab: {msg}', flush=True)


def boot(kernel, initrd, timeout, log):
    # TCG with one thread, as boot.py runs it (see there why); KVM guests do
    # not run on the machines this was made on, and a probe costs 8 s a boot.
    accel = os.environ.get('QEMU_ACCEL', 'tcg')
    cmd = ['qemu-system-x86_64', '-accel', 'tcg,thread=single' if accel == 'tcg' else accel,
           '-smp', '2', '-m', '2G', '-nographic', '-no-reboot', '-kernel', kernel,
           '-initrd', initrd, '-append', 'console=ttyS0 panic=-1 mmlab.mode=benchmark']
    if accel == 'tcg':
        cmd += ['-cpu', 'max']
    t0 = time.time()
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, timeout=timeout).stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b''
        with open(log, 'wb') as f:
            f.write(out)
        sys.exit(f'mmlab: error: {kernel} did not finish the bench in {timeout}s (log {log})')
    with open(log, 'wb') as f:
        f.write(out)
    rows = []
    for line in out.decode(errors='replace').splitlines():
        if line.startswith('bench {'):
            rows.append(json.loads(line[len('bench '):]))
    if not rows:
        sys.exit(f'mmlab: error: no bench results from {kernel} (log {log})')
    bad = [r for r in rows if not r['ok']]
    if bad:
        sys.exit(f'mmlab: error: data checks failed in {bad} (log {log})')
    return rows, time.time() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--stock', required=True)
    p.add_argument('--patched', required=True)
    p.add_argument('--initrd', required=True)
    p.add_argument('--boots', type=int, default=5)
    p.add_argument('--out', required=True)
    p.add_argument('--bloat', help='bloat-o-meter output to include')
    p.add_argument('--timeout', type=int, default=900)
    a = p.parse_args()
    if a.boots < 5:
        sys.exit('mmlab: error: --boots must be at least 5 (medians of fewer are noise)')
    for f in (a.stock, a.patched, a.initrd):
        if not os.path.exists(f):
            sys.exit(f'mmlab: error: {f} is missing (make bench builds it)')
    os.makedirs(a.out, exist_ok=True)
    kernels = {'stock': a.stock, 'patched': a.patched}
    runs = {'stock': [], 'patched': []}
    for i in range(a.boots):
        for name in ('stock', 'patched'):
            rows, secs = boot(kernels[name], a.initrd, a.timeout,
                              os.path.join(a.out, f'{name}-{i + 1}.log'))
            runs[name].append(rows)
            say(f'boot {i + 1}/{a.boots} {name}: {len(rows)} workloads in {secs:.0f}s')

    results = []
    keys = [(r['workload'], r['pages']) for r in runs['patched'][0]]
    for w, pages in keys:
        entry = {'workload': w, 'pages': pages}
        for name in ('stock', 'patched'):
            rs = [r for boot_rows in runs[name] for r in boot_rows
                  if r['workload'] == w and r['pages'] == pages]
            entry[name] = {
                'ns_per_page_median': statistics.median(r['ns_per_page'] for r in rs),
                'ns_per_page_boots': [r['ns_per_page'] for r in rs],
                'flushes': rs[0]['flushes'], 'batch_allocs': rs[0]['batch_allocs'],
                'pages_freed': rs[0]['pages_freed'],
            }
        s, pt = entry['stock']['ns_per_page_median'], entry['patched']['ns_per_page_median']
        entry['ratio'] = pt / s if s else None
        fl = entry['patched']['flushes']
        entry['flushes_per_mib'] = fl * 256 / pages if fl >= 0 else None
        results.append(entry)

    doc = {'boots_per_kernel': a.boots, 'accel': os.environ.get('QEMU_ACCEL', 'tcg'),
           'stock': a.stock, 'patched': a.patched, 'results': results}
    if a.bloat and os.path.exists(a.bloat):
        with open(a.bloat) as f:
            doc['bloat_o_meter_stock_vs_options_off'] = f.read()
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump(doc, f, indent=1)

    hdr = f'{"workload":<20}{"pages":>7}{"stock ns/pg":>13}{"patched":>10}{"ratio":>7}' \
          f'{"flushes":>9}{"allocs":>8}{"flush/MiB":>10}'
    print(hdr)
    print('-' * len(hdr))
    for e in results:
        pt = e['patched']
        print(f'{e["workload"]:<20}{e["pages"]:>7}{e["stock"]["ns_per_page_median"]:>13.1f}'
              f'{pt["ns_per_page_median"]:>10.1f}{e["ratio"]:>7.2f}{pt["flushes"]:>9}'
              f'{pt["batch_allocs"]:>8}'
              f'{(e["flushes_per_mib"] if e["flushes_per_mib"] is not None else -1):>10.2f}')

    dat = os.path.join(a.out, 'bench.dat')
    with open(dat, 'w') as f:
        for i, e in enumerate(results):
            f.write(f'{i} "{e["workload"]}\\n{e["pages"]}" '
                    f'{e["stock"]["ns_per_page_median"]} {e["patched"]["ns_per_page_median"]}\n')
    png = os.path.join(a.out, 'bench.png')
    gp = f'''set terminal pngcairo size 1200,600 noenhanced
set output "{png}"
set title "ns per 4 KiB page, median of {a.boots} boots each (QEMU {doc["accel"]})"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "ns/page (log)"
set xtics rotate by -30 font ",9"
plot "{dat}" using 3:xtic(2) title "stock", "" using 4 title "patched"
'''
    r = subprocess.run(['gnuplot'], input=gp.encode(), stderr=subprocess.PIPE)
    if r.returncode:
        sys.exit(f'mmlab: error: gnuplot failed: {r.stderr.decode()[:300]} (apt-get install gnuplot-nox)')
    say(f'results: {os.path.join(a.out, "results.json")}, plot: {png}')


if __name__ == '__main__':
    main()
