#!/bin/bash
# make bisect-check: does make bisect find a bad patch? A copy of the
# series with a known bad patch slipped in after 0016 (tests/mutants/6.1/
# 22-lock-anon-vma-fast-recheck-inverted.patch: folio_lock_anon_vma_read()
# gives up on every mapped folio, which KUnit's anon_vma_lock suite, added by
# 0016, catches), bisected between 0016 (good) and the last patch (bad)
# with T=kunit on UML. It must name the slipped-in patch. The patches after
# it change only the selftests, so each step rebuilds one file of the
# kernel. Writes LOGDIR/bisect-check.summary.
# usage: bisect-check.sh ROOT SRC GITDIR BUILD LOGDIR
. "$(dirname "$0")/lib.sh"
set -uo pipefail
ROOT=$1 SRC=$2 GITDIR=$3 BUILD=$4 LOGS=$5
BADNAME=0016a-mmlab-bisect-check-anon-vma-recheck-inverted.patch
P=$BUILD/bisect-check/patches
rm -rf "$P" && mkdir -p "$P"
PATCHES=$(dirname "$ROOT/$(tree_conf series)")
cp "$PATCHES"/*.patch "$P/"
grep -v '^#' "$ROOT/$(tree_conf mutants)/22-lock-anon-vma-fast-recheck-inverted.patch" > "$P/$BADNAME"
sed "/^0016-/a $BADNAME" "$PATCHES/series" > "$P/series"
grep -q "^$BADNAME" "$P/series" || die "no 0016 patch in the series to slip the bad patch after"
t0=$(date +%s)
T=kunit BISECT_ON=uml "$ROOT/scripts/bisect.sh" "$ROOT" "$SRC" "$GITDIR" "$P" 0016 "$(grep -v -e '^#' -e '^[[:space:]]*$' "$P/series" | tail -1)" |
	tee "$LOGS/bisect-check.log"
rc=${PIPESTATUS[0]}
took=$(( $(date +%s) - t0 ))
if [ "$rc" = 0 ] && grep -q "first bad patch: $BADNAME" "$LOGS/bisect-check.log"; then
	say "bisect-check: make bisect named $BADNAME in ${took}s"
	finish "$LOGS" bisect-check 1 0 0 0
	exit
fi
say "bisect-check: FAILED: make bisect exited $rc and did not name $BADNAME (${took}s)"
[ "$rc" = 2 ] || rc=1
finish "$LOGS" bisect-check 0 1 0 $rc
