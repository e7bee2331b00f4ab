"""Boot the stock kernel, the series with its debug options off and the
series with them on (make x86) in turn (A/B/C, BOOTS times) in QEMU with
the same initramfs, 4 vCPUs (vcpus(): fewer under multi-threaded TCG) on
2 NUMA nodes (boot.py's layout: node 0 has CPU 0, node 1 the others), in
mmlab.mode=benchmark: each boot runs tests/bench, which prints one JSON
line per workload (median of its runs, and every run's counters). Report
per workload the median over the boots of each kernel, the ratios to stock
(ratio_off: options off over stock, in ns per page; ratio_on: options on
over stock), the TLB shootdown IPIs per MiB and per page, and the gather
counters, as a table,
build/bench/results.json and build/bench/bench.png (gnuplot).

What the batching must show (exit 1 otherwise): migrate with remote
threads at least 2.0x the stock pages/s and at most 0.05x its shootdowns
per page; no workload under 0.98x stock's pages/s. Each ratio comes with
its 95 % interval over the boots (mmlab.stats: the pairwise ratios of the
boots, cut where the Mann-Whitney rank test says), and a check is PASS or
FAIL only when the whole interval lies on one side of its threshold;
otherwise INCONCLUSIVE, with the boots that would decide it (counted as
skipped in the last line, never as a pass)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


from . import conf, qemu, stats
from .outcome import FAIL, PASS, TIMEOUT, die, say, summary_line

KERNELS = ('stock', 'off', 'patched')
X86 = conf.machine('x86')
NODES, MEM = X86.nodes, X86.mem
MIN_MIGRATE_SPEEDUP, MAX_MIGRATE_IPI_RATIO, MIN_SPEED = 2.0, 0.05, 0.98


def accel_thread():
    """TCG with one thread, as boot.py runs it (see qemu.py why); KVM guests
    do not run on the machines this was made on, and a probe costs 8 s a
    boot. QEMU_TCG_THREAD=multi: one host thread per vCPU (QEMU before 8.1
    can run code another vCPU has just rewritten, deba78709ae8; the bench
    enables no trace event, the usual trigger)."""
    return os.environ.get('QEMU_ACCEL', 'tcg'), qemu.tcg_thread()


def accel():
    """-accel's value, as the results name it."""
    return qemu.accel_arg(*accel_thread())


def vcpus():
    """4 (R = 1..3), or with multi-threaded TCG one vCPU per host core: a
    vCPU thread that waits for a core makes every shootdown wait for the
    host scheduler, which is no IPI's cost (4 vCPUs on 2 cores: the stock
    boot was not done after 8 min, against 135 s single-threaded). BENCH_SMP
    overrides."""
    n = os.environ.get('BENCH_SMP')
    if n:
        if not n.isdigit() or not NODES <= int(n) <= 4:
            die(f'BENCH_SMP={n}', f'BENCH_SMP={NODES}..4 vCPUs')
        return int(n)
    return min(4, os.cpu_count()) if accel() == 'tcg,thread=multi' else 4


def qemu_cmd(kernel, initrd):
    """The x86 machine's QEMU (the three kernels differ in nothing else),
    without page poisoning: it would be measured too."""
    acc, thread = accel_thread()
    return qemu.command(X86, kernel, initrd, qemu.console_params(X86) + ['mmlab.mode=benchmark'],
                        acc, MEM, vcpus(), NODES, thread)


def boot(kernel, initrd, timeout, log):
    t0 = time.time()
    try:
        out = subprocess.run(qemu_cmd(kernel, initrd), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             timeout=timeout).stdout
    except subprocess.TimeoutExpired as e:
        with open(log, 'wb') as f:
            f.write(e.stdout or b'')
        die(f'{kernel} did not finish the bench in {timeout}s (log {log})', rc=TIMEOUT)
    with open(log, 'wb') as f:
        f.write(out)
    text = out.decode(errors='replace')
    rows = [json.loads(line[len('bench '):]) for line in text.splitlines()
            if line.startswith('bench {')]
    if 'mmlab: bench end' not in text:
        bail = [line for line in text.splitlines() if 'Bail out' in line or 'error' in line]
        die(f'the bench on {kernel} did not finish: '
            f'{bail[-1] if bail else "no end marker"} (log {log})', rc=FAIL)
    bad = [r['workload'] for r in rows if not r['ok']]
    if bad:
        die(f'data checks failed in {bad} (log {log})', rc=FAIL)
    return rows, time.time() - t0


def key(r):
    return (r['workload'], r['pages'], r.get('remote', 0))


def label(k):
    w, pages, remote = k
    return f'{w} R={remote}' if remote else w


def summarize(runs):
    """Per workload, from {kernel: [rows of each boot]}: the medians over
    the boots, the shootdowns per page and MiB, the ratios to stock."""
    keys = [key(r) for r in runs['stock'][0]]
    for name in KERNELS:
        for i, rows in enumerate(runs[name]):
            have = [key(r) for r in rows]
            if have != keys:
                die(f'boot {i + 1} of {name} ran other workloads than '
                    f'stock\'s first: {sorted(set(have) ^ set(keys))}', rc=FAIL)
    results = []
    for k in keys:
        w, pages, remote = k
        entry = {'workload': w, 'pages': pages, 'remote': remote}
        for name in KERNELS:
            rs = [r for rows in runs[name] for r in rows if key(r) == k]
            unit = rs[0].get('unit_pages', pages)
            ipis = statistics.median(r['tlb_ipis'] for r in rs)
            entry[name] = {
                'ns_per_page_median': statistics.median(r['ns_per_page'] for r in rs),
                'ns_per_page_boots': [r['ns_per_page'] for r in rs],
                'unit_pages': unit,
                'tlb_ipis_median': ipis,
                'tlb_ipis_per_page': ipis / unit,
                'tlb_ipis_per_mib': ipis * 256 / unit,
                'counters_per_boot': [r.get('runs', []) for r in rs],
                'tlb_ipis_boots': [r['tlb_ipis'] for r in rs],
                'flushes': rs[0]['flushes'], 'batch_allocs': rs[0]['batch_allocs'],
                'pages_freed': rs[0]['pages_freed'],
                'pgmigrate_success': rs[0].get('pgmigrate_success'),
            }
        s = entry['stock']
        for name, field in (('off', 'ratio_off'), ('patched', 'ratio_on')):
            e = entry[name]
            entry[field] = e['ns_per_page_median'] / s['ns_per_page_median']
            entry[field + '_ipis'] = (e['tlb_ipis_per_page'] / s['tlb_ipis_per_page']
                                      if s['tlb_ipis_per_page'] else None)
        results.append(entry)
    return results


def missing_remotes(rows, cpus):
    """The R = 1..cpus - 1 that a boot's rows have no migrate for."""
    have = {r['remote'] for r in rows if r['workload'] == 'migrate'}
    return sorted(set(range(1, cpus)) - have)


def boots_of(entry, name, what):
    """One sample per boot of kernel @name: ns/page, or shootdowns per page
    (+1 shootdown per boot, so that a boot with none still has a ratio)."""
    k = entry[name]
    if what == 'ns':
        return k['ns_per_page_boots']
    return [(ipis + 1) / k['unit_pages'] for ipis in k['tlb_ipis_boots']]


def check(entry, name, what, threshold, at_least):
    """(verdict, text, interval) of one check of @name against stock."""
    r = stats.ratio(boots_of(entry, name, what), boots_of(entry, 'stock', what))
    if what == 'ns':
        r = stats.inverse(r)    # pages/s
    v = stats.verdict(r, threshold, at_least)
    lo, hi = r['low'], r['high']
    iv = (f'[{lo:.3f}, {hi:.3f}]' if lo is not None else
          f'no 95 % interval from {r["n"]} boots')
    text = (f'{"pages/s" if what == "ns" else "shootdowns per page"} {r["estimate"]:.3f}x stock '
            f'{iv} ({">=" if at_least else "<="} {threshold})')
    if v == stats.INCONCLUSIVE:
        need = stats.boots_to_decide(r, threshold)
        text += (f': about {need} boots of each would decide it' if need else
                 ': the estimate is on the threshold, no number of boots decides it')
    return v, text, r


def verdicts(results):
    """[(verdict, what)]: what the series with its options off must show
    against stock (the module docstring)."""
    out = []
    for e in results:
        name = label((e['workload'], e['pages'], e['remote']))
        if e['workload'] == 'migrate':
            v, text, e['ci_speed_off'] = check(e, 'off', 'ns', MIN_MIGRATE_SPEEDUP, True)
            out.append((v, f'{name}: {text}'))
            v, text, e['ci_ipis_off'] = check(e, 'off', 'ipis', MAX_MIGRATE_IPI_RATIO, False)
            out.append((v, f'{name}: {text}'))
        else:
            v, text, e['ci_speed_off'] = check(e, 'off', 'ns', MIN_SPEED, True)
            out.append((v, f'{name} {e["pages"]}: {text}'))
        e['ci_speed_on'] = stats.inverse(stats.ratio(boots_of(e, 'patched', 'ns'),
                                                     boots_of(e, 'stock', 'ns')))
    return out


def plot(results, out, boots, accel_name):
    """bench.png: ns/page per kernel (median, bars from the fastest to the
    slowest boot) and pages/s over stock with its 95 % interval."""
    dat = os.path.join(out, 'bench.dat')
    with open(dat, 'w') as f:
        for i, e in enumerate(results):
            lab = label((e['workload'], e['pages'], e['remote']))
            # per kernel: median, fastest and slowest boot (the error bar)
            f.write(f'{i} "{lab}\\n{e["pages"]}" ' +
                    ' '.join(f'{e[k]["ns_per_page_median"]} {min(e[k]["ns_per_page_boots"])} '
                             f'{max(e[k]["ns_per_page_boots"])}' for k in KERNELS) + '\n')
    rdat = os.path.join(out, 'ratios.dat')
    with open(rdat, 'w') as f:
        for i, e in enumerate(results):
            lab = label((e['workload'], e['pages'], e['remote']))
            row = []
            for k in ('ci_speed_off', 'ci_speed_on'):
                c = e[k]
                row += [c['estimate'], c['low'] or c['estimate'], c['high'] or c['estimate']]
            f.write(f'{i} "{lab}\\n{e["pages"]}" ' + ' '.join(map(str, row)) + '\n')
    png = os.path.join(out, 'bench.png')
    gp = f'''set terminal pngcairo size 1400,1100 noenhanced
set output "{png}"
set multiplot layout 2,1
set title "ns per 4 KiB page: median of {boots} boots each, bars from the fastest to the slowest boot (QEMU {accel_name}, {vcpus()} vCPUs, {NODES} nodes)"
set style data histogram
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set logscale y
set ylabel "ns/page (log)"
set xtics rotate by -30 font ",9"
plot "{dat}" using 3:4:5:xtic(2) title "stock", "" using 6:7:8 title "series, options off", \\
     "" using 9:10:11 title "series, options on"
unset logscale y
set title "pages/s over stock's: estimate and 95 % interval over the boots (1 = stock)"
set ylabel "x stock"
plot "{rdat}" using 3:4:5:xtic(2) title "options off", "" using 6:7:8 title "options on", \\
     1 with lines lc "black" dt 2 notitle
unset multiplot
'''
    r = subprocess.run(['gnuplot'], input=gp.encode(), stderr=subprocess.PIPE)
    if r.returncode:
        die(f'gnuplot failed: {r.stderr.decode()[:300]}', 'make deps (gnuplot-nox)')
    return png


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    for k in KERNELS:
        p.add_argument(f'--{k}', required=True, help=f'the {k} bzImage')
    p.add_argument('--initrd', required=True)
    p.add_argument('--boots', type=int, default=5)
    p.add_argument('--out', required=True)
    p.add_argument('--bloat', action='append', default=[], metavar='NAME=FILE',
                   help='bloat-o-meter output to include (repeatable)')
    p.add_argument('--timeout', type=int, default=1800, help='seconds per boot')
    p.add_argument('--aa', action='store_true',
                   help='the three kernels are one (stock): the noise floor, no verdict may FAIL')
    a = p.parse_args()
    if a.boots < 3:
        die(f'--boots {a.boots}: medians of fewer than 3 are noise', 'BOOTS=3 or more')
    kernels = {k: getattr(a, k) for k in KERNELS}
    for f in list(kernels.values()) + [a.initrd]:
        if not os.path.exists(f):
            die(f'{f} is missing', 'make bench (it builds the three kernels)')
    os.makedirs(a.out, exist_ok=True)
    runs = {k: [] for k in KERNELS}
    for i in range(a.boots):
        for name in KERNELS:
            rows, secs = boot(kernels[name], a.initrd, a.timeout,
                              os.path.join(a.out, f'{name}-{i + 1}.log'))
            lost = missing_remotes(rows, vcpus())
            if lost:
                die(f'{name} ran no migrate with R = {lost} on '
                    f'{vcpus()} vCPUs (log {a.out}/{name}-{i + 1}.log)', rc=FAIL)
            runs[name].append(rows)
            say(f'boot {i + 1}/{a.boots} {name}: {len(rows)} workloads in {secs:.0f}s')

    results = summarize(runs)
    checks = verdicts(results)
    if a.aa:
        # one kernel in every slot: the gains the batching must show do not
        # apply, only "no slower than 0.98x" (no FAIL against itself)
        checks = [(v, w) for v, w in checks if not w.startswith('migrate')]

    doc = {'boots_per_kernel': a.boots, 'accel': accel(),
           'qemu': {'smp': vcpus(), 'numa_nodes': NODES, 'mem': MEM},
           'remote_threads': 'R threads of the benchmark process pinned to CPUs 1..R, '
                             'spinning on pause (main thread on CPU 0, node 0)',
           'kernels': kernels, 'results': results,
           'verdicts': [{'verdict': v, 'what': what} for v, what in checks]}
    if a.aa:
        # the same kernel in every slot: the intervals are the noise floor
        doc['noise_floor'] = [{'workload': label((e['workload'], e['pages'], e['remote'])),
                               'pages': e['pages'], 'ci': e['ci_speed_off'],
                               'width': (e['ci_speed_off']['high'] - e['ci_speed_off']['low']
                                         if e['ci_speed_off']['low'] is not None else None)}
                              for e in results]
    for item in a.bloat:
        name, _, path = item.partition('=')
        if os.path.exists(path):
            with open(path) as f:
                doc[f'bloat_o_meter_{name}'] = f.read()
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump(doc, f, indent=1)

    hdr = (f'{"workload":<20}{"pages":>7}{"stock ns/pg":>12}{"off":>10}{"on":>10}'
           f'{"off/st":>8}{"on/st":>7}{"IPI/MiB st":>11}{"off":>8}{"flushes":>9}')
    print(hdr)
    print('-' * len(hdr))
    for e in results:
        st, off, on = e['stock'], e['off'], e['patched']
        print(f'{label((e["workload"], e["pages"], e["remote"])):<20}{e["pages"]:>7}'
              f'{st["ns_per_page_median"]:>12.1f}{off["ns_per_page_median"]:>10.1f}'
              f'{on["ns_per_page_median"]:>10.1f}{e["ratio_off"]:>8.3f}{e["ratio_on"]:>7.3f}'
              f'{st["tlb_ipis_per_mib"]:>11.1f}{off["tlb_ipis_per_mib"]:>8.1f}{on["flushes"]:>9}')
    if a.aa:
        say(f'noise floor (stock over stock, {a.boots} boots each): pages/s ratio and its 95 % interval')
        for n in doc['noise_floor']:
            c = n['ci']
            say(f'  {n["workload"]:<20}{n["pages"]:>7}  {c["estimate"]:.3f}  '
                + (f'[{c["low"]:.3f}, {c["high"]:.3f}]  width {n["width"]:.3f}'
                   if c['low'] is not None else 'no interval'))
    for v, what in checks:
        say(f'{v:<12} {what}')

    png = plot(results, a.out, a.boots, doc['accel'])
    say(f'results: {os.path.join(a.out, "results.json")}, plot: {png}')
    failed = sum(1 for v, _ in checks if v == stats.FAIL)
    undecided = sum(1 for v, _ in checks if v == stats.INCONCLUSIVE)
    if undecided:
        say(f'{undecided} checks INCONCLUSIVE: their intervals cross the threshold '
            f'(counted as skipped; BOOTS= more decides them)')
    print(summary_line(len(checks) - failed - undecided, failed, undecided), flush=True)
    sys.exit(FAIL if failed else PASS)


if __name__ == '__main__':
    main()
