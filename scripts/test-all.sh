#!/bin/bash
# Run each part of the suite as a make target (all of them, even after a
# failure), then print the sum of their summaries as the last line.
# A part written TARGET[,TARGET...]:PART first waits for those targets,
# which one background make builds, one after another in the order they
# first appear: a guest under TCG uses one host thread, so the next kernel
# builds while it runs. *:PART waits for every background build to end: a
# part that edits build/src (mutants, bisect) must run alone. A failed
# background build is logged (LOGDIR/prebuild/TARGET.out) and ends the
# background builds: each part's own make then builds what it needs, and
# fails there, in its place.
# A target written TARGET@KVER is made for that kernel tree (make
# KVER=... TARGET; its summary is in that tree's build/KVER/logs): make
# test runs the other tree's UML and x86 suites so.
# --parallel: start every part at once (make soak's guests, one host
# thread each), each one's output in LOGDIR/TARGET.out, printed in order
# when all are done.
# Exit: 3 if any part saw a kernel splat, else 124 on a timeout, 2 on a
# setup error, 1 on a test failure, 0 when everything passed.
# usage: test-all.sh [--parallel] LOGDIR [TARGET,...:]PART...
. "$(dirname "$0")/lib.sh"
parallel=0
[ "$1" = --parallel ] && { parallel=1; shift; }
LOGS=$1
shift
mkdir -p "$LOGS"
P=0 F=0 SK=0 worst=0 reasons=()
# needs [TARGET,...:]PART: the background targets PART waits for (*: all
# those queued so far)
needs() {
	local n=${1%%:*}
	[[ $1 = *:* ]] || return 0
	[ "$n" = '*' ] && n="${builds[*]}"
	echo "${n//,/ }"
}
# mk TARGET[@KVER] [ARGS]: make it, for tree KVER when it says one
mk() {
	local t=$1
	shift
	case $t in
	*@*) make -s KVER="${t#*@}" "$@" "${t%@*}" ;;
	*) make -s "$@" "$t" ;;
	esac
}
# summary_of TARGET[@KVER]: the file its summary is in
summary_of() {
	case $1 in
	*@*) echo "$(dirname "$(dirname "$LOGS")")/${1#*@}/logs/${1%@*}.summary" ;;
	*) echo "$LOGS/$1.summary" ;;
	esac
}
# descendants PID: every process PID started, and theirs
descendants() {
	local c
	for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done
}
rank() { case $1 in 0) echo 0 ;; 1) echo 1 ;; 2) echo 2 ;; 124) echo 3 ;; *) echo 4 ;; esac; }
tally() {	# tally TARGET RC SECONDS
	local t=$1 rc=$2 p f s
	say "=== make $t: exit $rc in ${3}s"
	if [ -f "$(summary_of "$t")" ]; then
		# make says 2 for any failed recipe: the part's own code is in its summary.
		read -r p f s rc < "$(summary_of "$t")"
	else
		# The part did not get as far as its results: count it as one failure.
		p=0 f=1 s=0
		[ "$rc" = 0 ] && rc=2
	fi
	P=$((P + p)) F=$((F + f)) SK=$((SK + s))
	[ "$(rank "$rc")" -gt "$(rank $worst)" ] && worst=$rc
	summary="$summary  $t: $p passed, $f failed, $s skipped (exit $rc)\n"
	# what its failed tests said (results.py writes NAME.failures)
	local why=$(summary_of "$t")
	why=${why%.summary}.failures
	if [ "$rc" != 0 ] && [ -s "$why" ]; then
		reasons+=("$t:")
		mapfile -t -O ${#reasons[@]} reasons < <(head -8 "$why" | cut -c1-400 | sed 's/^/    /')
	fi
}
if [ $parallel = 1 ]; then
	declare -A pid
	t0=$(date +%s)
	for t in "$@"; do
		sf=$(summary_of "$t") && rm -f "$sf" "${sf%.summary}.failures"
		say "=== make $t started (output: $LOGS/$t.out)"
		mk "$t" > "$LOGS/$t.out" 2>&1 &
		pid[$t]=$!
	done
	# a line every 2 minutes while any part runs
	n=0
	while running=$(for t in "$@"; do kill -0 "${pid[$t]}" 2>/dev/null && echo "$t"; done) &&
		[ -n "$running" ]; do
		sleep 5
		n=$((n + 1))
		[ $((n % 24)) = 0 ] && say "running: $(echo $running) ($(elapsed) so far)"
	done
	for t in "$@"; do
		wait "${pid[$t]}"
		rc=$?
		say "=== make $t"
		cat "$LOGS/$t.out"
		tally "$t" $rc $(( $(date +%s) - t0 ))
	done
else
	PB=$LOGS/prebuild builds=() builder=
	declare -A queued
	for a in "$@"; do
		for b in $(needs "$a"); do
			[ -n "${queued[$b]:-}" ] || { queued[$b]=1; builds+=("$b"); }
		done
	done
	if [ ${#builds[@]} -gt 0 ]; then
		rm -rf "$PB" && mkdir -p "$PB"
		say "building in the background, in this order: ${builds[*]} (output: $PB/)"
		# Niced: the guest beside it keeps its core. Stops at the first
		# failure: the parts then build what is left themselves.
		(
			for b in "${builds[@]}"; do
				t0=$(date +%s)
				nice -n 10 bash -c "$(declare -f mk); mk $b" < /dev/null > "$PB/$b.out" 2>&1
				rc=$? s=$(( $(date +%s) - t0 ))
				echo "$rc $s" > "$PB/$b.rc"
				if [ $rc != 0 ]; then
					warn "background make $b: exit $rc after ${s}s ($PB/$b.out); the parts build what is left themselves"
					exit
				fi
				say "background make $b: done in ${s}s ($(elapsed) so far)"
			done
		) &
		builder=$!
		trap '[ -z "$builder" ] || kill $builder $(descendants $builder) 2> /dev/null' EXIT
		trap 'exit 130' INT TERM
	fi
	for a in "$@"; do
		t=${a#*:} n=0
		for b in $(needs "$a"); do
			while [ ! -f "$PB/$b.rc" ] && kill -0 "$builder" 2> /dev/null; do
				# every 2 minutes, the build's own last progress line
				[ $((n % 60)) = 0 ] && say "$t waits for the background make $b ($(elapsed) so far)$(grep -a '^mmlab:' "$PB/$b.out" 2> /dev/null | tail -1 | sed 's/^mmlab: /: /')"
				n=$((n + 1))
				sleep 2
			done
		done
		sf=$(summary_of "$t") && rm -f "$sf" "${sf%.summary}.failures"
		say "=== make $t ($(elapsed) so far)"
		t0=$(date +%s)
		mk "$t"
		tally "$t" $? $(( $(date +%s) - t0 ))
	done
	if [ -n "$builder" ]; then
		wait "$builder"
		builder=
		summary="$summary  background builds:$(for b in "${builds[@]}"; do
			if read -r rc s < "$PB/$b.rc" 2> /dev/null; then
				printf ' %s %ss' "$b" "$s"
				[ "$rc" = 0 ] || printf ' (exit %s)' "$rc"
			else printf ' %s (not built)' "$b"; fi; done)\n"
	fi
fi
printf "mmlab: suite done in %s\n$summary" "$(elapsed)"
[ ${#reasons[@]} = 0 ] || printf 'failed, as the tests said it:\n%s\n' "$(printf '  %s\n' "${reasons[@]}")"
echo "$P passed, $F failed, $SK skipped"
exit $worst
