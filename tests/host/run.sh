#!/bin/bash
# Host checks of mmlab's own tooling: the Python package's unit tests on
# recorded logs and golden data (tests/host/test_*.py), then the tools on
# bad input, each failing the way the docs promise (exit code and
# message), then the guests' exit codes and the README's commands. What
# needs the tree or a kernel is skipped, saying which make target gives
# it, until they are built: on a fresh clone the unit tests run alone.
# Prints TAP, writes LOGDIR/test-host.summary ("passed failed skipped rc").
# usage: tests/host/run.sh LOGDIR   (run by make test-host)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LOGS=$1
B=${MMLAB_BUILD:-$ROOT/build/$(PYTHONPATH=$ROOT/scripts /usr/bin/python3 -m mmlab.conf tree name)}
KSRC=${KSRC:-$B/src}
GITDIR=${GITDIR:-$B/tree.git}
S=$ROOT/scripts
. "$S/lib.sh"
export PYTHONPATH=$S
# Debian's Python: its packages (python3-yaml, -junit.xml, ...) are the ones make deps installs
PYTHON=/usr/bin/python3
mkdir -p "$LOGS"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mmlab-host.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
n=0 pass=0 fail=0 skip=0

# check NAME WANT_RC PATTERN CMD...: CMD must exit WANT_RC and print PATTERN.
check() {
	local name=$1 want=$2 pattern=$3 rc t0
	shift 3
	n=$((n + 1))
	t0=$(date +%s)
	"$@" > "$TMP/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ] && { [ -z "$pattern" ] || grep -qE -- "$pattern" "$TMP/out"; }; then
		echo "ok $n $name ($(( $(date +%s) - t0 ))s)"
		pass=$((pass + 1))
	else
		echo "not ok $n $name: exit $rc (want $want), output should match /$pattern/"
		sed 's/^/# /' "$TMP/out" | tail -20
		fail=$((fail + 1))
	fi
}
# ok_if NAME COND...: a plain assertion
ok_if() {
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then echo "ok $n $name"; pass=$((pass + 1))
	else echo "not ok $n $name"; fail=$((fail + 1)); fi
}

# skip_all WHY NAME...: each check NAME skipped, saying why
skip_all() {
	local why=$1 t
	shift
	for t in "$@"; do
		n=$((n + 1)) skip=$((skip + 1))
		echo "ok $n $t # SKIP $why"
	done
}

echo "TAP version 13"

# --- the host Python: each module's unit tests -------------------------------
# (a module's skipped cases are named in its line: "N of M skipped: why")
for t in "$ROOT"/tests/host/test_*.py; do
	u=$(cd "$ROOT" && env KSRC="$KSRC" GITDIR="$GITDIR" $PYTHON -B -m unittest -v "$t" 2>&1)
	printf '%s\n' "$u" > "$TMP/unit"
	why=$(sed -n "s/.* \.\.\. skipped [\"']\(.*\)[\"']\$/\1/p" "$TMP/unit" | sort | uniq -c |
		sed 's/^ *\([0-9]*\) \(.*\)/\1 skipped: \2/' | paste -sd';')
	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\}.*/\1/p' "$TMP/unit")
	check "unit tests: $(basename "$t" .py), ${ran:-0} tests${why:+ ($why)}" 0 '^OK' cat "$TMP/unit"
done

have_tree=0 have_uml=0
[ -f "$KSRC/Makefile" ] && GIT_DIR=$GITDIR git rev-parse -q --verify pristine > /dev/null 2>&1 && have_tree=1
[ -x "$B/uml/linux" ] && [ -f "$B/rootfs.img" ] && have_uml=1
if [ $have_tree = 1 ]; then

# --- a series with a broken patch, on a small copy of the tree -------------
mini=$TMP/src
mkdir -p "$mini"
cp "$KSRC/Makefile" "$mini/"
for f in mm/mmu_gather.c mm/vmstat.c; do
	mkdir -p "$mini/$(dirname "$f")"
	GIT_DIR=$GITDIR git show "pristine:$f" > "$mini/$f"
done
cp -r "$ROOT/patches" "$TMP/patches"
rm -f "$TMP/patches"/*.patch
cat > "$TMP/patches/0001-good.patch" <<'P'
Subject: a good patch
--- a/mm/vmstat.c
+++ b/mm/vmstat.c
@@ -1,3 +1,4 @@
+// mmlab host test: a good patch
P
sed -n 1,3p "$mini/mm/vmstat.c" | sed 's/^/ /' >> "$TMP/patches/0001-good.patch"
cat > "$TMP/patches/0002-broken.patch" <<'P'
Subject: a patch whose context is not in 6.1
--- a/mm/mmu_gather.c
+++ b/mm/mmu_gather.c
@@ -20,3 +20,3 @@
 this line is not in mm/mmu_gather.c
-nor is this one
+so the hunk is rejected
 the end
P
printf '0001-good.patch\n0002-broken.patch\n' > "$TMP/patches/series"
KSRC_IS_USER=1 "$S/tree.sh" "$mini" "$TMP/git" > /dev/null 2>&1
check "broken patch: exit 2 naming the patch and its rejected hunk" 2 \
	'patch 0002-broken.patch does not apply' \
	"$S/series.sh" apply "$mini" "$TMP/git" "$TMP/patches"
grep -q 'rejected hunk' "$TMP/out" && grep -q 'so the hunk is rejected' "$TMP/out"
ok_if "broken patch: the rejected hunk is shown" [ $? = 0 ]
ok_if "broken patch: tree left pristine (good patch rolled back, no .pc)" \
	bash -c "[ ! -e '$mini/.pc' ] && GIT_DIR='$TMP/git' GIT_WORK_TREE='$mini' git diff --quiet pristine"

# --- local edits are never thrown away -------------------------------------
printf '0001-good.patch\n' > "$TMP/patches/series"
check "good series applies" 0 'series applied: 1 patches' \
	"$S/series.sh" apply "$mini" "$TMP/git" "$TMP/patches"
echo '/* a local edit */' >> "$mini/mm/mmu_gather.c"
echo ' ' >> "$TMP/patches/series"    # the series changed: re-apply is due
check "series changed over local edits: refused with exit 2" 2 \
	'local edits:|mm/mmu_gather.c' "$S/series.sh" apply "$mini" "$TMP/git" "$TMP/patches"
ok_if "the local edit is still there" grep -q 'a local edit' "$mini/mm/mmu_gather.c"
check "series-refresh turns the edit into the top patch" 0 'now in' \
	"$S/series.sh" refresh "$mini" "$TMP/git" "$TMP/patches"
ok_if "the top patch now carries the edit" grep -q '^+/\* a local edit \*/' "$TMP/patches/0001-good.patch"
check "after the refresh the series applies again" 0 '' \
	"$S/series.sh" apply "$mini" "$TMP/git" "$TMP/patches"

# --- a config option that cannot be set ------------------------------------
printf 'CONFIG_NUMA=y\nCONFIG_DEBUG_VM=y\n' > "$TMP/bad-config"
check "config option that cannot be set: exit 2 naming it" 2 'CONFIG_NUMA=y requested' \
	"$S/config.sh" "$KSRC" "$TMP/o" um defconfig "$TMP/bad-config"
# an arch's fragment takes out what that arch lacks (arm64-config over qemu-config)
printf '# not on um: CONFIG_NUMA UML has no NUMA\n' > "$TMP/um-drops"
check "config option an arch's fragment says it lacks: dropped, the rest checked" 0 '' \
	"$S/config.sh" "$KSRC" "$TMP/o" um defconfig "$TMP/bad-config" "$TMP/um-drops"
ok_if "with CONFIG_NUMA dropped, CONFIG_DEBUG_VM=y is still set" grep -qx CONFIG_DEBUG_VM=y "$TMP/o/.config"

else
	skip_all "no kernel tree yet (make tree)" "broken patch: exit 2" "broken patch: hunk shown" \
		"broken patch: tree left pristine" "good series applies" "series changed over local edits" \
		"the local edit is still there" "series-refresh" "the top patch carries the edit" \
		"the series applies again" "config option that cannot be set" "config option dropped" \
		"CONFIG_DEBUG_VM still set"
fi

# --- a guest that panics / hangs ---------------------------------------------
if [ $have_uml = 1 ]; then
BOOT=($PYTHON -m mmlab.boot uml --ksrc "$KSRC" --logdir "$TMP/logs" --append "mmlab.hosttest=$$")
check "guest panic: exit 3" 3 'kernel splat' "${BOOT[@]}" --mode panic --timeout 60
t0=$(date +%s)
check "guest hang: exit 124" 124 'timed out after 8s' "${BOOT[@]}" --mode hang --timeout 8
ok_if "guest hang: stopped within the timeout (+5s)" [ $(( $(date +%s) - t0 )) -le 13 ]
ok_if "no UML process left behind" bash -c "! pgrep -f 'mmlab[.]hosttest=$$' > /dev/null"
else
	skip_all "no UML kernel and rootfs yet (make uml rootfs)" "guest panic: exit 3" \
		"guest hang: exit 124" "guest hang: stopped in time" "no UML process left behind"
fi

# --- the same exit codes from QEMU (TCG forced: no KVM probe needed) ---------
bz=$B/x86/arch/x86/boot/bzImage
if [ -f "$bz" ] && [ -f "$B/initramfs.cpio" ]; then
	QBOOT=($PYTHON -m mmlab.boot x86 --ksrc "$KSRC" --logdir "$TMP/logs" --append "mmlab.hosttest=$$")
	QEMU_ACCEL=tcg check "qemu guest panic: exit 3" 3 'kernel splat' "${QBOOT[@]}" --mode panic --timeout 180
	t0=$(date +%s)
	QEMU_ACCEL=tcg check "qemu guest hang: exit 124" 124 'timed out after 20s' "${QBOOT[@]}" --mode hang --timeout 20
	ok_if "qemu guest hang: stopped within the timeout (+5s)" [ $(( $(date +%s) - t0 )) -le 25 ]
	ok_if "no QEMU process left behind" bash -c "! pgrep -f 'mmlab[.]hosttest=$$' > /dev/null"
else
	skip_all "no x86 kernel yet (make x86 initramfs)" "qemu guest panic: exit 3" \
		"qemu guest hang: exit 124" "qemu hang timing" "no QEMU left"
fi

# --- one make at a time per checkout ---------------------------------------
# scripts/lock.sh, which every make in a checkout runs under, on a scratch
# build directory (this very run holds the checkout's own lock): a holder
# for 6 s; a second one with NOWAIT=1 stops naming it; a plain one waits,
# then runs.
(unset MMLAB_LOCKED; MMLAB_GOALS=hosttest-$$ "$S/lock.sh" "$TMP/b" sleep 6) &
holder=$!
sleep 1
check "a second make stops with NOWAIT=1, naming the first (exit 2)" 2 \
	"another make is using $TMP/b: pid [0-9]+ \\(make hosttest-$$ " \
	env -u MMLAB_LOCKED NOWAIT=1 "$S/lock.sh" "$TMP/b" true
t0=$(date +%s)
check "a second make waits for the first, saying so, then runs" 0 \
	"another make is using $TMP/b: .*hosttest-$$.*waiting" \
	env -u MMLAB_LOCKED "$S/lock.sh" "$TMP/b" true
ok_if "the waiting make ran after the first ended ($(( $(date +%s) - t0 ))s)" \
	[ $(( $(date +%s) - t0 )) -ge 3 ]
wait $holder

# --- make test: each kernel builds while the guest before it runs ------------
# scripts/test-all.sh with a stand-in make that logs when each target
# starts and ends: b2 (slow) is the background build p3 waits for, p2
# waits for nothing, *:p4 waits for every build, b3's build fails, so b4
# is left to p6's own make; bx never ends (the suite is stopped).
mkdir -p "$TMP/fakebin" "$TMP/ta"
cat > "$TMP/fakebin/make" << 'EOF'
#!/bin/bash
t=$2
echo "start $t" >> "$TA/order"
case $t in b1) sleep 1 ;; b2|b3) sleep 4 ;; bx) sleep 37 ;; p*) sleep 1; echo "1 0 0 0" > "$TA/logs/$t.summary" ;; esac
echo "end $t" >> "$TA/order"
[ "$t" != b3 ]
EOF
chmod +x "$TMP/fakebin/make"
check "test-all.sh: background builds, parts in order, the sum last" 0 \
	'background builds: b1 [0-9]+s b2 [0-9]+s b3 [0-9]+s \(exit 1\) b4 \(not built\) 6 passed, 0 failed, 0 skipped $' \
	env TA="$TMP/ta" PATH="$TMP/fakebin:$PATH" bash -c "set -o pipefail
	$S/test-all.sh $TMP/ta/logs b1:p1 p2 b1,b2:p3 '*:p4' b3:p5 b4:p6 2>&1 | tr '\n' ' '"
before() { awk -v a="$1" -v b="$2" '$0 == a { x = NR } $0 == b { y = NR } END { exit !(x && y && x < y) }' "$TMP/ta/order"; }
ok_if "a part starts after its background build ends (b1 before p1)" before "end b1" "start p1"
ok_if "a part that needs no build runs while one builds (p2 during b2)" before "start p2" "end b2"
ok_if "b1,b2:p3 waits for both" before "end b2" "start p3"
ok_if "*:p4 waits for every background build" before "end b3" "start p4"
ok_if "each background target is made once" [ "$(grep -c '^start b1$' "$TMP/ta/order")" = 1 ]
ok_if "a failed background build ends the background builds (b4 not started)" \
	bash -c "! grep -q '^start b4$' '$TMP/ta/order'"
# a TERM to test-all.sh alone (not to its process group) while bx builds
TA="$TMP/ta" PATH="$TMP/fakebin:$PATH" "$S/test-all.sh" "$TMP/ta/logs" bx:p7 > /dev/null 2>&1 &
ta=$!
sleep 3
kill $ta
wait $ta
ok_if "test-all.sh stopped by TERM: exit 130" [ $? = 130 ]
sleep 1
ok_if "test-all.sh stopped: its background make is gone too" bash -c "! pgrep -f '^sleep 37$' > /dev/null"
pkill -f '^sleep 37$'
# PART@KVER: made as make KVER=... PART, its summary read from that tree's
# logs (build/KVER/logs beside build/THIS/logs); its background build too.
mkdir -p "$TMP/tt/6.1/logs" "$TMP/tt/9.9/logs"
cat > "$TMP/fakebin/make" << 'EOF'
#!/bin/bash
t=${*: -1} kv=
for a in "$@"; do case $a in KVER=*) kv=${a#KVER=} ;; esac; done
echo "make ${kv:+KVER=$kv }$t" >> "$TT/order"
case $t in p*) echo "2 0 1 0" > "$TT/${kv:-6.1}/logs/$t.summary" ;; esac
EOF
chmod +x "$TMP/fakebin/make"
check "test-all.sh: PART@KVER is made for that tree and counted from its logs" 0 \
	'4 passed, 0 failed, 2 skipped $' \
	env TT="$TMP/tt" PATH="$TMP/fakebin:$PATH" bash -c "set -o pipefail
	$S/test-all.sh $TMP/tt/6.1/logs p1 b1@9.9:p2@9.9 2>&1 | tr '\n' ' '"
ok_if "test-all.sh: b1@9.9 built as make KVER=9.9 b1, p2@9.9 as make KVER=9.9 p2" \
	bash -c "grep -qx 'make KVER=9.9 b1' '$TMP/tt/order' && grep -qx 'make KVER=9.9 p2' '$TMP/tt/order' &&
		grep -qx 'make p1' '$TMP/tt/order'"

if [ $have_uml = 1 ]; then
# --- a kernel build reports progress -----------------------------------------
check "make uml prints progress lines with steps and elapsed time" 0 \
	'^mmlab: uml: [0-9]+ steps of ~[0-9]+ in a full build \([0-9]+%\), [0-9]+s$' \
	env PROGRESS_S=1 make -s -C "$ROOT" uml

# --- the README's opening commands, exactly as written -----------------------
# `./linux ubd0=rootfs.img` from the repo root, on a terminal (script(1)), in
# UML's default memory: the whole KTAP document, the guest's own summary,
# power-off with exit 0. The guest's count must agree with the host's
# parser (kunit.py) on the same KTAP.
plain=$TMP/plain.log
t0=$(date +%s)
(cd "$ROOT" && SHELL=/bin/bash timeout 600 script -qefc './linux ubd0=rootfs.img' "$plain" \
	< /dev/null > /dev/null 2>&1)
prc=$?
tr -d '\r' < "$plain" > "$LOGS/plain-boot.log"
gsum=$(grep -m1 -E '^mmlab: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$LOGS/plain-boot.log")
ok_if "./linux ubd0=rootfs.img: exit $prc (want 0) after $(( $(date +%s) - t0 ))s, guest summary '${gsum#mmlab: }'" \
	[ "$prc" = 0 -a -n "$gsum" ]
ok_if "./linux ubd0=rootfs.img: no test failed, the KTAP is complete" bash -c "
	echo '$gsum' | grep -q ' 0 failed' &&
	grep -qx 'mmlab: ktap end' '$LOGS/plain-boot.log'"
sed -n '/^mmlab: ktap begin$/,/^mmlab: ktap end$/p' "$LOGS/plain-boot.log" | sed '1d;$d' \
	> "$TMP/plain.ktap"
# The host's own count (boot.py's, over kunit.py parse), not a second copy.
hsum=$($PYTHON -B -c '
import sys
from mmlab.results import parse_ktap
print("%d passed, %d failed, %d skipped" % parse_ktap(*sys.argv[2:]))' \
	"$S" "$KSRC" "$TMP/plain.ktap" "$TMP/plain.json" 2> /dev/null | tail -1)
ok_if "./linux ubd0=rootfs.img: the guest's summary matches kunit.py's ($hsum)" \
	[ "${gsum#mmlab: }" = "$hsum" ]
ok_if "./linux ubd0=rootfs.img: each skip for memory names what it needs and mem=" bash -c "
	! grep -E '# SKIP.*(memory|MiB)' '$LOGS/plain-boot.log' | grep -v 'needs [0-9]* MiB.*mem=' | grep -q ."

# `./linux ubd0=rootfs.img mmlab.mode=shell` in a real terminal (tmux): the
# shell answers, `poweroff -f` ends UML with exit 0.
sess=mmlab-host-$$
shlog=$TMP/shell.rc
tmux kill-session -t "$sess" 2>/dev/null
(cd "$ROOT" && tmux new-session -d -s "$sess" -x 120 -y 40 \
	"./linux ubd0=rootfs.img mmlab.mode=shell; echo \"rc=\$?\" > '$shlog'; sleep 1")
pane() { tmux capture-pane -p -t "$sess" -S -200 2>/dev/null; }
wait_pane() {	# wait_pane PATTERN SECONDS
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		pane | grep -qE -- "$1" && return 0
		sleep 0.2
	done
	return 1
}
wait_pane 'mmlab: shell on' 60 && sleep 1
tmux send-keys -t "$sess" 'echo "answer $((6 * 7)) from $(uname -m)"' Enter
ok_if "./linux ubd0=rootfs.img mmlab.mode=shell: the shell answers on the terminal" \
	wait_pane '^answer 42 from x86_64' 30
tmux send-keys -t "$sess" 'poweroff -f' Enter
for ((i = 0; i < 150; i++)); do [ -s "$shlog" ] && break; sleep 0.2; done
ok_if "./linux ubd0=rootfs.img mmlab.mode=shell: poweroff -f ends UML with exit 0 ($(cat "$shlog" 2>/dev/null))" \
	grep -qx 'rc=0' "$shlog"
[ -s "$shlog" ] || pane | tail -20 | sed 's/^/# /'
tmux kill-session -t "$sess" 2>/dev/null

# --- gdb ./linux loads the kernel's lx-* helpers ------------------------------
check "gdb ./linux auto-loads the lx-* helpers" 0 '^lx-dmesg' \
	timeout 120 gdb -nx -iex "add-auto-load-safe-path $ROOT" -batch -ex 'apropos lx-' "$ROOT/linux"

# --- gdb batch: the mmlab helpers agree with what the guest saw ------------
# The munmap workload prints its address, the pfn /proc/self/pagemap gives
# and its child's pid; gdb stops at its munmap() and in that munmap's
# tlb_flush_mmu(). Every number below comes from the guest, not from gdb.
gdblog=$TMP/gdb-batch.log
(cd "$ROOT" && timeout 300 gdb -batch -nx -iex "add-auto-load-safe-path $ROOT" \
	-x gdb-scripts/uml.gdb -x tests/host/gdb_batch.py --args ./linux \
	ubd0r=$B/rootfs.img mem=384M con=null ssl=null con0=null,fd:1 mmlab.mode=munmap) \
	> "$gdblog" 2>&1
cp "$gdblog" "$LOGS/gdb-batch.log"
info=$(grep -m1 -o 'gdb: addr=.*' "$gdblog")
addr=$(echo "$info" | sed -n 's/.*addr=\(0x[0-9a-f]*\).*/\1/p')
pfn=$(echo "$info" | sed -n 's/.*pfn=\(0x[0-9a-f]*\).*/\1/p')
child=$(echo "$info" | sed -n 's/.*child=\([0-9]*\).*/\1/p')
ok_if "gdb batch: the munmap workload ran under gdb (addr ${addr:-?}, pfn ${pfn:-?})" \
	[ -n "$addr" -a -n "$pfn" -a -n "$child" ]
ok_if "gdb batch: lx-pgwalk finds the pfn pagemap gave ($pfn)" \
	grep -q -- "-> pfn $pfn, page" "$gdblog"
ok_if "gdb batch: lx-anon-vma lists the forked child's VMA (munmap[$child])" \
	grep -qE "^  vma 0x[0-9a-f]+ 0x[0-9a-f]+-0x[0-9a-f]+ mm 0x[0-9a-f]+ \(munmap\[$child\]\)" "$gdblog"
# A batch is full at max, or from 6.3 on at max - 1 (encoded pages).
case $(basename "$B") in 6.1) b0=8 b1=510 ;; *) b0=7 b1=509 ;; esac
b2=$((600 - b0 - b1))
ok_if "gdb batch: lx-mmu-gather shows the 600 pages in $b0 + $b1 + $b2" bash -c "
	grep -q '^  pages gathered: 600 in 3 batches' '$gdblog' &&
	grep -q '^  batch_count 2$' '$gdblog' &&
	grep -q 'batch 0 (local, on stack) 0x[0-9a-f]*: nr $b0/8\$' '$gdblog' &&
	grep -q 'batch 1 (page) 0x[0-9a-f]*: nr $b1/510\$' '$gdblog' &&
	grep -q 'batch 2 (page) 0x[0-9a-f]*: nr $b2/510 <- active' '$gdblog' &&
	grep -q 'first page 0x[0-9a-f]*: pfn $pfn ' '$gdblog'"
[ $fail = 0 ] || sed 's/^/# /' "$gdblog" | grep -A12 '^# ===' | head -40

# --- power-off with an interrupt pending ------------------------------------
# A timer interrupt that comes in after halt_skas() blocked signals stays
# pending; main() must not run its handler on the host's stack (it panics:
# SIGABRT, exit 134, and nothing on the console, since the console is gone;
# seen once in several hundred boots). gdb makes SIGALRM pending there
# (signals_pending's SIGALRM bit is 1 << 1) in every run.
halt=$TMP/gdb-halt.log
(cd "$ROOT" && timeout 120 gdb -batch -nx -x gdb-scripts/uml.gdb -ex 'break deactivate_all_fds' \
	-ex run -ex "set var 'signal.c'::signals_pending = 2" -ex continue --args ./linux \
	ubd0r=$B/rootfs.img mem=256M con=null ssl=null con0=null,fd:1 mmlab.mode=munmap) > "$halt" 2>&1
ok_if "./linux powers off with a timer interrupt pending: exit 0, not SIGABRT" bash -c "
	grep -q 'hit Breakpoint 1, deactivate_all_fds' '$halt' && grep -q 'exited normally' '$halt'"
grep -q 'exited normally' "$halt" ||
	grep -E 'Breakpoint 1,|received signal|exited with|^#' "$halt" | head -12 | sed 's/^/# /'
else
	skip_all "no UML kernel and rootfs yet (make uml rootfs)" "make uml prints progress" \
		"./linux ubd0=rootfs.img: exit 0" "./linux ubd0=rootfs.img: no test failed" \
		"./linux ubd0=rootfs.img: summary matches kunit.py's" "./linux ubd0=rootfs.img: memory skips" \
		"mmlab.mode=shell: the shell answers" "mmlab.mode=shell: poweroff -f" \
		"gdb ./linux auto-loads the lx-* helpers" "gdb batch: the munmap workload ran" \
		"gdb batch: lx-pgwalk" "gdb batch: lx-anon-vma" "gdb batch: lx-mmu-gather" \
		"./linux powers off with a timer interrupt pending"
fi

echo "1..$n"
rc=0
[ $fail = 0 ] || rc=1
finish "$LOGS" test-host $pass $fail $skip $rc
