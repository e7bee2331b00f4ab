#!/bin/bash
# One step of make bisect, run by git bisect run in build/src at a commit
# of the scratch branch: build incrementally, boot the tests, map our exit
# code to git bisect's (0 good; 1, 3 bad; 2, 124 skip: 125).
# usage: bisect-step.sh ROOT MACHINE TESTS   (MACHINE: a machine of machines.mk)
. "$(dirname "$0")/lib.sh"
ROOT=$1 ON=$2 T=$3
name=$(git log -1 --format=%s)
# Booted as run "bisect" (not test-uml or qemu-verify: their results stay
# those of the tree), the way make test-uml / qemu-verify boot: the
# machine's kernel in build/MACHINE and its root, built by its make targets.
L=$MMLAB_BUILD/logs
O=$MMLAB_BUILD/$ON
# its make targets, as bisect.sh found them (conf's make_targets)
read -ra build <<< "${BISECT_TARGETS:-$(conf "$ON" make_targets)}"
# none (no such machine): abort git bisect run (an exit code above 127)
[ ${#build[@]} -gt 0 ] || { echo "mmlab: bisect step: no make targets for machine $ON" >&2; exit 128; }
# the series' .config, as bisect.sh saved it (this state's build may drop options)
cp "$BISECT_CONFIG" "$O/.config"
rm -f "$L/bisect.summary"
t0=$(date +%s)
# Not under git bisect's GIT_DIR: the kernel's setlocalversion would see a
# git tree in build/src and build "6.1.192-g<sha>".
env -u GIT_DIR -u GIT_WORK_TREE make -s -C "$ROOT" "${build[@]}" > "$L/bisect-step.log" 2>&1 &&
	PYTHONPATH=$ROOT/scripts /usr/bin/python3 -m mmlab.boot "$ON" --ksrc "$BISECT_SRC" --logdir "$L" \
		--name bisect --mode "$T" >> "$L/bisect-step.log" 2>&1
rc=$(awk '{ print $4 }' "$L/bisect.summary" 2>/dev/null)
case ${rc:-2} in
0) verdict=good code=0 ;;
1|3) verdict=bad code=1 ;;
*) verdict=skip code=125 ;;
esac
say "bisect step: $name: exit ${rc:-2 (no result: the build failed?)} -> $verdict ($(( $(date +%s) - t0 ))s)"
[ "$code" = 125 ] && tail -5 "$L/bisect-step.log" | sed 's/^/mmlab:   /'
exit $code
