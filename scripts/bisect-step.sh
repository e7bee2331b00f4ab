#!/bin/bash
# One step of make bisect, run by git bisect run in build/src at a commit
# of the scratch branch: build incrementally, boot the tests, map our exit
# code to git bisect's (0 good; 1, 3 bad; 2, 124 skip: 125).
# usage: bisect-step.sh ROOT uml|x86 TESTS
. "$(dirname "$0")/lib.sh"
ROOT=$1 ON=$2 T=$3
name=$(git log -1 --format=%s)
if [ "$ON" = uml ]; then run=test-uml O=$ROOT/build/uml; else run=qemu-verify O=$ROOT/build/x86; fi
# the series' .config, as bisect.sh saved it (this state's build may drop options)
cp "$BISECT_CONFIG" "$O/.config"
rm -f "$ROOT/build/logs/$run.summary"
t0=$(date +%s)
make -s -C "$ROOT" "$run" T="$T" > "$ROOT/build/logs/bisect-step.log" 2>&1
rc=$(awk '{ print $4 }' "$ROOT/build/logs/$run.summary" 2>/dev/null)
case ${rc:-2} in
0) verdict=good code=0 ;;
1|3) verdict=bad code=1 ;;
*) verdict=skip code=125 ;;
esac
say "bisect step: $name: $run exit ${rc:-2 (no result: the build failed?)} -> $verdict ($(( $(date +%s) - t0 ))s)"
[ "$code" = 125 ] && tail -5 "$ROOT/build/logs/bisect-step.log" | sed 's/^/mmlab:   /'
exit $code
