#!/bin/bash
# make bisect-check: does make bisect find a bad patch? A copy of the
# tree's series with a known bad patch slipped in right after the patch
# that adds KUnit's anon_vma_lock suite (6.1's 0016, 6.12's 0011): the
# tree's mutant 22 (22-lock-anon-vma-fast-recheck-inverted.patch in its
# trees.mk `mutants`: folio_lock_anon_vma_read() gives up on every mapped
# folio, which that suite catches), bisected between that patch (good) and
# the last one (bad) with T=kunit on UML. It must name the slipped-in
# patch. Writes LOGDIR/bisect-check.summary.
# usage: bisect-check.sh ROOT SRC GITDIR BUILD LOGDIR
. "$(dirname "$0")/lib.sh"
set -uo pipefail
ROOT=$1 SRC=$2 GITDIR=$3 BUILD=$4 LOGS=$5
PATCHES=$(dirname "$ROOT/$(tree_conf series)")
MUTANT=$ROOT/$(tree_conf mutants)/22-lock-anon-vma-fast-recheck-inverted.patch
[ -f "$MUTANT" ] || die "no $MUTANT to slip into the series" "port mutant 22 to this tree (tests/mutants/README)"
# the first patch of the series that touches the suite's file adds it
GOOD=
for p in $(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series"); do
	grep -q '^+++ b/mm/anon_vma_lock_test.c' "$PATCHES/$p" && { GOOD=$p; break; }
done
[ -n "$GOOD" ] || die "no patch of $PATCHES/series adds mm/anon_vma_lock_test.c" \
	"bisect-check slips its bad patch in after the anon_vma_lock KUnit suite"
num=${GOOD%%-*}
BADNAME=${num}a-mmlab-bisect-check-anon-vma-recheck-inverted.patch
P=$BUILD/bisect-check/patches
rm -rf "$P" && mkdir -p "$P"
cp "$PATCHES"/*.patch "$P/"
grep -v '^#' "$MUTANT" > "$P/$BADNAME"
sed "/^$GOOD\$/a $BADNAME" "$PATCHES/series" > "$P/series"
grep -q "^$BADNAME" "$P/series" || die "could not slip the bad patch in after $GOOD"
t0=$(date +%s)
T=kunit BISECT_ON=uml "$ROOT/scripts/bisect.sh" "$ROOT" "$SRC" "$GITDIR" "$P" "$num" "$(grep -v -e '^#' -e '^[[:space:]]*$' "$P/series" | tail -1)" |
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
