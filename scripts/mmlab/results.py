"""mmlab results: one guest's console log -> its KTAP, the counts, the
verdict (exit code), a one-line crash title, a decoded copy of the log and
JUnit XML.

boot.py calls summarize() after each boot. Run on a recorded console log
(tests/host/logs/ keeps some) it does the same without a guest:

  results.py LOG --ksrc build/src --logdir DIR [--name N] [--timed-out SECS]

Exit codes: 0 pass, 1 a test failed, 2 setup error, 3 kernel splat, 124
timeout.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys

from .outcome import FAIL, SETUP, SPLAT, TIMEOUT, die, error, say, splat_re, summary_line, write_summary

# The guest's kernel_log test sorts the KCSAN reports (rootfs/bin/mmlab-kcsan)
# and names each one it clears (listed in kcsan-known, or no frame in a
# function the series changes) with the report's title line as the log has
# it: exactly those lines are not splats here.
CLEARED = re.compile(r'^\s*# (known|stock), not ours \([^)]*\): (.*\S)\s*$')


def cleared_reports(lines):
    """{title line: 'known' or 'stock'} for the reports the guest cleared."""
    return {m.group(2): m.group(1) for l in lines for m in [CLEARED.match(l)] if m}


# A kernel log line, also where a test quotes it ("#   [ 12.3] BUG: ...").
STAMPED = re.compile(r'\[\s*\d+\.\d+\] .*\S')


def is_splat(line, cleared=()):
    # SPLAT_RE: rootfs/etc/mmlab/splat, which the guest's kernel_log greps too
    if not splat_re().search(line) or CLEARED.match(line):
        return False
    m = STAMPED.search(line)
    return (m.group(0) if m else line.strip()) not in cleared


BEGIN, END = 'mmlab: ktap begin', 'mmlab: ktap end'
DMESG_BEGIN = 'mmlab: kernel log follows'
TEST_START = re.compile(r'mmlab: test (\S+) starts$')
# A KTAP result line at any depth (the name still carries its directive)
KTAP_RESULT = re.compile(r'^(?P<indent> *)(?P<ok>ok|not ok) \d+ (?P<name>.*)$')
TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
# "RIP: 0010:__split_huge_pmd+0xbb4/0x1620" (x86; user mode shows a bare
# address), "RIP: 0033:gather_extends_chain+0x1b9/0x370" (UML, before its panic)
KERNEL_RIP = re.compile(r'RIP: [0-9a-f]+:([A-Za-z_][\w.]*)\+0x')
# "[<60117f28>] __tlb_remove_page_size+0x171/0x17f" (UML), " func+0x1/0x2" (x86)
TRACE_ENTRY = re.compile(r'^\s*(?:\[<[0-9a-f]+>\]\s*)?(\?\s+)?([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x')
# Functions that report a problem rather than have it.
REPORTERS = re.compile(r'^(show_stack|dump_stack\w*|panic|__warn\w*|warn_slowpath\w*|report_bug|'
                       r'handle_bug|exc_invalid_op|asm_exc_\w+|dump_page|__dump_page|bad_page|'
                       r'print_\w+|_printk|printk\w*|vprintk\w*|__report_bad\w*|die|oops_\w+|'
                       r'lockdep_\w+|check_\w+_usage|__lock_acquire|lock_acquire|'
                       r'dump_header|kasan_report|__asan_\w+|panic_exit|segv\w*|relay_signal|'
                       r'sig_handler\w*|hard_handler|unblock_signals\w*|um_\w+signals|'
                       r'kunit_try_catch\w*|kthread|ret_from_fork|new_thread_handler)$')


def ktap_section(lines):
    """The lines between the guest's KTAP markers, and whether the end came."""
    if BEGIN not in lines:
        return [], False
    ktap = lines[lines.index(BEGIN) + 1:]
    if END in ktap:
        return ktap[:ktap.index(END)], True
    return ktap, False


def parse_ktap(ksrc, ktap_path, json_path):
    """kunit.py parse, in this process; return (passed, failed, skipped) of the leaves."""
    kdir = os.path.join(ksrc, 'tools/testing/kunit')
    if not os.path.exists(os.path.join(kdir, 'kunit.py')):
        die(f'{kdir}/kunit.py is missing', 'make tree')
    if os.path.exists(json_path):
        os.unlink(json_path)
    # What "kunit.py parse --json=FILE KTAP" does, without a second Python
    # start (0.4 s here). No __pycache__ in the kernel tree: it would count
    # as a local edit.
    sys.dont_write_bytecode = True
    sys.path.insert(0, kdir)
    try:
        import kunit  # pylint: disable=import-outside-toplevel
        import kunit_json  # pylint: disable=import-outside-toplevel
        with open(ktap_path, errors='backslashreplace') as f:
            ktap = f.read().splitlines()
        kunit.parse_tests(kunit.KunitParseRequest(raw_output=None, json=json_path),
                          kunit_json.Metadata(), ktap)
        sys.stdout.flush()
    except Exception as e:  # pylint: disable=broad-except
        say(f'kunit.py parse failed: {e!r}')
    finally:
        sys.path.remove(kdir)
    try:
        with open(json_path) as f:
            root = json.load(f)
    except (OSError, ValueError):
        say('kunit.py parse wrote no results')
        return 0, 1, 0
    counts = [0, 0, 0]

    def walk(group):
        for case in group.get('test_cases', []):
            counts[{'PASS': 0, 'SKIP': 2}.get(case['status'], 1)] += 1
        for sub in group.get('sub_groups', []):
            walk(sub)
    walk(root)
    # kunit_json keeps only the leaves: a test that printed "ok" for every
    # case and then crashed or timed out ("not ok N name") must still fail.
    with open(ktap_path) as f:
        for line in f:
            m = re.match(r'not ok \d+ (\S+)', line)
            if m and '# SKIP' not in line:
                group = next((g for g in root.get('sub_groups', []) if g['name'] == m.group(1)),
                             None)
                if group is None:       # a test without cases: a leaf of the root
                    group = {'test_cases': [c for c in root.get('test_cases', [])
                                            if c['name'] == m.group(1)]}
                if not any(c['status'] not in ('PASS', 'SKIP')
                           for c in group.get('test_cases', [])):
                    counts[1] += 1
    return tuple(counts)


def running_test(lines):
    """The test running at the end of these console or KTAP lines.

    The deepest KTAP subtest opened and not closed, with its last result;
    else, as the guest prints a test's KTAP only when it ends, the next name
    of its "# mmlab tests:" line after the top-level results so far. Printk
    timestamps (KUnit at boot) are ignored.
    """
    stack, planned, done = [], [], 0
    for raw in lines:
        line = TIMESTAMP.sub('', raw).rstrip()
        if line.startswith('# mmlab tests:'):
            planned = line.split(':', 1)[1].split()
            continue
        if re.match(r'(not )?ok \d+ ', line):
            done += 1
        line = line.strip()
        m = re.match(r'# Subtest: (\S+)', line)
        if m:
            stack.append([m.group(1), None])
            continue
        m = re.match(r'(?:not )?ok \d+ (.*?)(?:\s+#.*)?$', line)
        if m and stack:
            if m.group(1) == stack[-1][0]:
                stack.pop()
            else:
                stack[-1][1] = m.group(1)
    if stack:
        test = '.'.join(s[0] for s in stack)
        last = stack[-1][1]
        return f'{test} (after its case "{last}")' if last else f'{test} (before its first case)'
    if done < len(planned):
        return planned[done]
    return None


DUMP_PAGE = re.compile(r'page dumped because')


def triage(lines, cleared):
    """One line naming the first splat: its title, where, and the test running.
    cleared: cleared_reports(lines)."""
    first = next((i for i, l in enumerate(lines) if is_splat(l, cleared)), None)
    if first is None:
        return None
    # dump_page() speaks before the report it belongs to (VM_BUG_ON_PAGE's
    # BUG, VM_WARN_ON_PAGE's WARNING): the report is the title.
    if DUMP_PAGE.search(lines[first]):
        first = next((i for i in range(first + 1, min(len(lines), first + 40))
                      if is_splat(lines[i], cleared) and not DUMP_PAGE.search(lines[i])), first)
    title = TIMESTAMP.sub('', lines[first]).strip()
    title = re.sub(r'^#\s*(\[\s*\d+\.\d+\]\s*)?', '', title)   # quoted by the guest's kernel_log
    where = comm = None
    # UML dumps the registers (and "Pid: N, comm: X") before its panic line,
    # x86 after its oops line: look back a little first, then forward.
    before = [TIMESTAMP.sub('', l) for l in lines[max(0, first - 15):first]]
    for text in reversed(before):
        m = KERNEL_RIP.search(text)
        if m and where is None:
            where = m.group(1)
        m = re.search(r'\b[Cc]omm: (\S+)', text)
        if m and comm is None:
            comm = m.group(1)
    for line in lines[first:first + 120]:
        text = TIMESTAMP.sub('', line)
        m = re.search(r'\b[Cc]omm: (\S+)', text)
        if m and comm is None:
            comm = m.group(1)
        if where is not None:
            if comm is not None:
                break
            continue
        m = KERNEL_RIP.search(text)
        if m:
            where = m.group(1)
            continue
        m = TRACE_ENTRY.match(text)
        if m and not m.group(1) and not REPORTERS.match(m.group(2)):
            where = m.group(2)
    if where is None:
        m = re.search(r'/(\w+)\(\)', title)     # "BUG: failure at mm/x.c:195/func()!"
        where = m.group(1) if m else None
    ktap, _ = ktap_section(lines[:first])
    test = running_test(ktap) if ktap else running_test(lines[:first])
    # A report below the console's log level (a WARNING, lockdep) reaches
    # the console only inside kernel_log's output: the kernel log the guest
    # prints at the end has it in order with "mmlab: test X starts".
    if DMESG_BEGIN in lines:
        dmesg = lines[lines.index(DMESG_BEGIN) + 1:]
        at = next((i for i, l in enumerate(dmesg) if is_splat(l, cleared)), None)
        if at is not None:
            starts = [m.group(1) for l in dmesg[:at] for m in [TEST_START.search(l)] if m]
            if starts:
                test = starts[-1]
    out = title
    if where:
        out += f' in {where}()'
    if test:
        out += f' while {test} ran'
    else:
        out += ' during the guest tests' if ktap else ' at boot, before the guest tests'
    if comm:
        out += f' (task {comm})'
    return out


def decode(ksrc, vmlinux, log_path, out_path):
    """The tree's decode_stacktrace.sh over the console log, into out_path."""
    script = os.path.join(ksrc, 'scripts/decode_stacktrace.sh')
    if not (vmlinux and os.path.exists(vmlinux) and os.path.exists(script)):
        return f'no decoded copy: {vmlinux or "no vmlinux"} or {script} is missing'
    with open(log_path, 'rb') as src, open(out_path, 'wb') as dst:
        try:
            p = subprocess.run([script, vmlinux, ksrc], stdin=src, stdout=dst,
                               stderr=subprocess.DEVNULL, check=False, timeout=300)
        except subprocess.TimeoutExpired:
            return f'decode_stacktrace.sh took over 300 s: {out_path} is partial'
    if p.returncode:
        return f'decode_stacktrace.sh exited {p.returncode}'
    return f'decoded log: {out_path}'


def junit(json_path, xml_path, name, top, rc, why, props=None):
    """JUnit XML of the run: one <testsuite> per KTAP subtest (nested ones
    named parent.child), each with the run's properties (its tree and
    machine, so 6.1's results are told from 6.12's), one <testcase> per
    named leaf; a test whose "not
    ok" no failed case explains gets a failed <testcase> of its own, and a
    crash, a timeout or a KTAP document cut short one <testcase> with an
    error, so JUnit fails wherever the summary does."""
    from junit_xml import TestCase, TestSuite, to_xml_report_string  # pylint: disable=import-outside-toplevel
    try:
        with open(json_path) as f:
            root = json.load(f)
    except (OSError, ValueError):
        root = {'name': name, 'sub_groups': [], 'test_cases': []}
    suites = []

    def failed(group):
        return any(c['status'] not in ('PASS', 'SKIP') for c in group.get('test_cases', [])) \
            or any(failed(g) for g in group.get('sub_groups', []))

    def case(c, prefix):
        tc = TestCase(c['name'], classname=prefix)
        if c['status'] == 'SKIP':
            tc.add_skipped_info(c.get('log', '') or 'skipped')
        elif c['status'] != 'PASS':
            tc.add_failure_info(c['status'], c.get('log', ''))
        return tc

    def walk(group, prefix, verdict=None):
        # unnamed: kunit.py's stand-in for a test that never reported
        cases = [case(c, prefix) for c in group.get('test_cases', []) if c['name']]
        if verdict == 'FAIL' and not failed(group):
            tc = TestCase(group['name'], classname=prefix)
            tc.add_failure_info('not ok', 'the test failed after its cases passed')
            cases.append(tc)
        if cases:
            suites.append(TestSuite(prefix, cases, properties=props))
        for sub in group.get('sub_groups', []):
            walk(sub, f'{prefix}.{sub["name"]}')
    verdicts = dict((n, st) for n, st in top)
    for group in root.get('sub_groups', []):
        walk(group, f'mmlab.{name}.{group["name"]}', verdicts.get(group['name']))
    # The tests without cases (kernel_log, ...) and the run itself.
    cases = [case(c, f'mmlab.{name}') for c in root.get('test_cases', []) if c['name']]
    if why:
        tc = TestCase(name, classname=f'mmlab.{name}')
        tc.add_error_info({3: 'kernel splat', 124: 'timeout'}.get(rc, 'incomplete run'), why)
        cases.append(tc)
    if cases:
        suites.append(TestSuite(f'mmlab.{name}', cases, properties=props))
    with open(xml_path, 'w') as f:
        f.write(to_xml_report_string(suites, prettyprint=True))


def planned_tests(ktap):
    """The names the guest's "# mmlab tests:" line announced (empty if none)."""
    for line in ktap[:4]:
        if line.startswith('# mmlab tests:'):
            return line.split(':', 1)[1].split()
    return []


def top_results(ktap):
    """[name, PASS|FAIL|SKIP] of each top-level KTAP result, in order."""
    out = []
    for line in ktap:
        m = KTAP_RESULT.match(line)
        if m and not m.group('indent'):
            test, _, directive = m.group('name').partition('#')
            status = 'FAIL' if m.group('ok') == 'not ok' else \
                'SKIP' if directive.strip().upper().startswith('SKIP') else 'PASS'
            out.append([test.strip(), status])
    return out


def failure_reasons(ktap, most=3):
    """'SUITE.TEST: what it printed last' for each failed KTAP result.

    The message is the diagnostic lines between the result before it and
    its "not ok" (at most the last MOST of them). A suite's own "not ok"
    after failed cases adds nothing and is left out.
    """
    out, since, parents, failed_in = [], [], {}, set()
    for line in ktap:
        sub = re.match(r'^( *)# Subtest: (.*)$', line)
        m = KTAP_RESULT.match(line)
        if sub:
            parents[len(sub.group(1))] = sub.group(2).strip()
            since = []
        elif m:
            depth = len(m.group('indent'))
            test, _, directive = m.group('name').partition('#')
            test = test.strip()
            failed = m.group('ok') == 'not ok' and \
                not directive.strip().upper().startswith('SKIP')
            if failed and test not in failed_in:
                path = '.'.join(parents[d] for d in sorted(parents) if 0 < d <= depth)
                said = ' | '.join(since[-most:]) or '(no message)'
                out.append(f'{path + "." if path else ""}{test}: {said}')
            if failed and depth and depth in parents:
                failed_in.add(parents[depth])
            since = []
        elif line.strip().startswith('#') and not line.strip().startswith('# Totals'):
            since.append(line.strip()[1:].strip())
    return out


def died_why(sig, run=None):
    """Why a guest whose process ended with signal SIG failed."""
    try:
        what = signal.Signals(sig).name
    except ValueError:
        what = f'signal {sig}'
    why = f'the guest\'s process died of {what}'
    if (run or {}).get('target') == 'uml' and sig == signal.SIGABRT:
        why += (' (UML\'s os_dump_core(): a kernel panic or a fatal SIGSEGV in the kernel, '
                'after the console stopped, or an abort on the host side)')
    return why


def summarize(name, lines, logdir, ksrc, timed_out=None, log_path=None, vmlinux=None,
              run=None, died=None):
    """Write NAME.ktap, .json, .junit.xml, .summary and .run; print the counts;
    return the exit code.

    timed_out: the timeout in seconds when the guest was killed for it.
    died: the signal that ended the guest's process, when one did and the
    timeout did not (UML's os_dump_core() ends in SIGABRT: after a panic,
    a fatal SIGSEGV of the kernel, or on the host side).
    run: what boot.py knows of the run (target, kernel, start, seconds), kept
    in NAME.run with the verdict for make kcidb.
    """
    ktap, complete = ktap_section(lines)
    ktap_path = os.path.join(logdir, f'{name}.ktap')
    json_path = os.path.join(logdir, f'{name}.json')
    decoded = os.path.join(logdir, f'{name}.decoded.log')
    for stale in (json_path, decoded):
        if os.path.exists(stale):
            os.unlink(stale)
    with open(ktap_path, 'w') as f:
        f.write('\n'.join(ktap) + '\n')
    why = None
    if ktap:
        passed, failed, skipped = parse_ktap(ksrc, ktap_path, json_path)
        if not complete:
            why = 'the KTAP output stopped before its end marker'
            failed = max(failed, 1)
    else:
        why = 'the guest printed no KTAP results'
        passed, failed, skipped = 0, 1, 0
    if why:
        say(why)
    cleared = cleared_reports(lines)
    splats = [l for l in lines if is_splat(l, cleared)]
    for kind, reason in (('known', "listed in the guest's /etc/mmlab/kcsan-known, the tree's tests/kcsan-known"),
                         ('stock', 'no frame in a function the series changes')):
        titles = [TIMESTAMP.sub('', t).strip() for t, k in cleared.items() if k == kind]
        for t in sorted(set(titles)):
            say(f'{name}: {kind} KCSAN report, not ours ({reason}), {titles.count(t)}x: {t}')
    where = f' (log: {log_path})' if log_path else ''
    if splats:
        rc, why = SPLAT, triage(lines, cleared)
        say(f'{name}: kernel splat: {why}{where}')
        for s in splats[:10]:
            print(f'    {s}', flush=True)
        if timed_out:
            say(f'  and then it timed out after {timed_out}s')
    elif timed_out:
        rc, why = TIMEOUT, f'timed out after {timed_out}s'
        test = running_test(ktap) if ktap else None
        if test:
            why += f' while {test} ran'
        say(f'{name}: {why} (raise with TIMEOUT=){where}')
    elif died:
        rc, why = SPLAT, died_why(died, run)
        say(f'{name}: {why}{where}; its last lines:')
        for line in lines[-15:]:
            print(f'    {line}', flush=True)
    elif failed:
        rc = FAIL
        say(f'{name}: test failures{where}')
    else:
        rc = 0
    top = top_results(ktap)
    # The verdict first: nothing below may lose it.
    write_summary(logdir, name, passed, failed, skipped, rc)
    # What each failed test said, for the suite's last lines (make test).
    reasons = failure_reasons(ktap) if rc else []
    if rc and why:
        reasons.append(why)
    with open(os.path.join(logdir, f'{name}.failures'), 'w') as f:
        f.write(''.join(f'{r}\n' for r in reasons))
    record = dict(run or {}, log=os.path.abspath(log_path) if log_path else None, rc=rc,
                  passed=passed, failed=failed, skipped=skipped,
                  planned=planned_tests(ktap), top=top)
    if why:
        record['why'] = why
    with open(os.path.join(logdir, f'{name}.run'), 'w') as f:
        json.dump(record, f, indent=1)
    try:
        props = {k: run[k] for k in ('tree', 'tree_package', 'machine') if (run or {}).get(k)}
        junit(json_path, os.path.join(logdir, f'{name}.junit.xml'), name, top, rc, why, props or None)
    except ImportError:
        error('python3-junit.xml is missing: no JUnit for this run', 'make deps')
        rc = rc or SETUP
    if rc == SPLAT and log_path:
        say(decode(ksrc, vmlinux, log_path, decoded))
    print(summary_line(passed, failed, skipped), flush=True)
    return rc


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('log', help='a console log boot.py kept')
    p.add_argument('--ksrc', required=True, help='kernel tree (for kunit.py)')
    p.add_argument('--logdir', required=True)
    p.add_argument('--name', default=None, help='result name (default: the log\'s)')
    p.add_argument('--timed-out', type=int, default=None, metavar='SECS',
                   help='the guest was killed after SECS')
    p.add_argument('--vmlinux', default=None, help='for the decoded copy of a splat')
    p.add_argument('--target', default='uml', choices=['uml', 'qemu'])
    a = p.parse_args()
    try:
        with open(a.log, errors='replace') as f:
            lines = f.read().splitlines()
    except OSError as e:
        die(str(e), 'name a console log boot.py kept (build/logs/NAME.log)')
    os.makedirs(a.logdir, exist_ok=True)
    name = a.name or os.path.basename(a.log).rsplit('.', 1)[0]
    sys.exit(summarize(name, lines, a.logdir, a.ksrc, a.timed_out, a.log, a.vmlinux,
                       {'target': a.target}))


if __name__ == '__main__':
    main()
