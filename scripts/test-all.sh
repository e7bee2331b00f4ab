#!/bin/bash
# Run each part of the suite as a make target (all of them, even after a
# failure), then print the sum of their summaries as the last line.
# Exit: 3 if any part saw a kernel splat, else 124 on a timeout, 2 on a
# setup error, 1 on a test failure, 0 when everything passed.
# usage: test-all.sh LOGDIR TARGET...
. "$(dirname "$0")/lib.sh"
LOGS=$1
shift
mkdir -p "$LOGS"
P=0 F=0 SK=0 worst=0
rank() { case $1 in 0) echo 0 ;; 1) echo 1 ;; 2) echo 2 ;; 124) echo 3 ;; *) echo 4 ;; esac; }
for t in "$@"; do
	rm -f "$LOGS/$t.summary"
	say "=== make $t ($(elapsed) so far)"
	t0=$(date +%s)
	make -s "$t"
	rc=$?
	say "=== make $t: exit $rc in $(( $(date +%s) - t0 ))s"
	if [ -f "$LOGS/$t.summary" ]; then
		# make says 2 for any failed recipe: the part's own code is in its summary.
		read -r p f s rc < "$LOGS/$t.summary"
	else
		# The part did not get as far as its results: count it as one failure.
		p=0 f=1 s=0
		[ $rc = 0 ] && rc=2
	fi
	P=$((P + p)) F=$((F + f)) SK=$((SK + s))
	[ "$(rank $rc)" -gt "$(rank $worst)" ] && worst=$rc
	summary="$summary  $t: $p passed, $f failed, $s skipped (exit $rc)\n"
done
printf "mmlab: suite done in %s\n$summary" "$(elapsed)"
echo "$P passed, $F failed, $SK skipped"
exit $worst
