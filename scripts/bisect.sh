#!/bin/bash
# make bisect GOOD=<patch> BAD=<patch> [T=tests] [BISECT_ON=uml|x86]
#
# Which patch of the series broke the tests? One commit per patch on a
# scratch branch of build/tree.git (pristine, then each patch of the series
# as far as BAD), then `git bisect run` between GOOD and BAD. Each step
# builds the kernel incrementally and boots the tests T (default: kunit)
# on UML, or on x86 in QEMU with BISECT_ON=x86; our exit codes map to git
# bisect's: 0 good; 1 (a test failed) and 3 (kernel splat) bad; 2 (setup,
# e.g. the build failed) and 124 (timeout) skip. It names the first bad
# patch, then puts the tree back as it was (the series applied, quilt state
# included) and rebuilds that kernel, also after a failure or Ctrl-C.
#
# usage: bisect.sh ROOT SRC GITDIR PATCHES GOOD BAD      (T, BISECT_ON from make)
# A patch is named by its file name or a unique prefix ("0007").
# Exit: 0 a first bad patch was named, 1 none (BAD passes or GOOD fails
# the tests), 2 setup.
. "$(dirname "$0")/lib.sh"
set -Eeuo pipefail
ROOT=$1 SRC=$2 GITDIR=$3 PATCHES=$4 GOOD=${5:-} BAD=${6:-}
ON=${BISECT_ON:-uml}
T=${T:-kunit}
export GIT_DIR=$GITDIR GIT_WORK_TREE=$SRC
export QUILT_PATCHES=patches QUILT_PC=.pc
GIT="git -c user.name=mmlab -c user.email=mmlab@localhost"
BRANCH=mmlab-bisect

[ -n "$GOOD" ] && [ -n "$BAD" ] || die "GOOD= and BAD= name two patches of the series" \
	"make bisect GOOD=0004 BAD=0012 [T=kunit,munmap] [BISECT_ON=x86]"
case $ON in uml|x86) ;; *) die "BISECT_ON=$ON" "BISECT_ON=uml (default) or x86" ;; esac
mapfile -t series < <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" | awk '{print $1}')
index_of() {	# index_of NAME: its position in the series (0-based)
	local i hit=
	for i in "${!series[@]}"; do
		case ${series[$i]} in "$1"*) [ -z "$hit" ] || die "$1 names more than one patch" \
			"give more of the name: ${series[$hit]}, ${series[$i]}"; hit=$i ;; esac
	done
	[ -n "$hit" ] || die "no patch $1 in $PATCHES/series" "quilt series lists them"
	echo "$hit"
}
g=$(index_of "$GOOD")
b=$(index_of "$BAD")
[ "$g" -lt "$b" ] || die "GOOD (${series[$g]}) must come before BAD (${series[$b]}) in the series"

cd "$SRC"
edits=$({ git diff --name-only HEAD; git ls-files -o -x /.pc/ -x /patches -x __pycache__ \
	-x '*.pyc' -x '/.checkpatch-camelcase.*'; } | sort -u)
[ -z "$edits" ] || die "$SRC has local edits ($(echo $edits | cut -c1-80))" \
	"make series-refresh keeps them in the series, make series-reset drops them"
orig=$(git symbolic-ref -q --short HEAD) || die "$GITDIR is not on a branch" "make series"

restore() {
	trap - EXIT INT TERM
	say "bisect: putting the tree back (series applied on $orig)"
	git bisect reset -q > /dev/null 2>&1 || true
	git checkout -q -f "$orig"
	git reset -q --hard pristine
	git clean -fdxq -e /patches
	ln -sfn "$ROOT/patches" patches
	command quilt --quiltrc - push -a -q > /dev/null
	git branch -q -D "$BRANCH" 2> /dev/null || true
	edits=$(git diff --name-only HEAD)
	[ -z "$edits" ] || warn "the restored tree differs from $orig: $edits"
	say "bisect: rebuilding the $ON kernel of the restored tree"
	if [ "$ON" = uml ]; then make -s -C "$ROOT" uml > /dev/null; else make -s -C "$ROOT" x86 > /dev/null; fi
}
trap restore EXIT
trap 'exit 130' INT TERM

# One commit per patch, pristine first.
say "bisect: one commit per patch, ${series[0]} .. ${series[$b]}, from $PATCHES"
git checkout -q -f -B "$BRANCH" pristine
git clean -fdxq -e /patches
rm -rf .pc
declare -a commit
for i in $(seq 0 "$b"); do
	p=${series[$i]}
	patch -p1 -s -f --no-backup-if-mismatch < "$PATCHES/$p" > "$GITDIR/bisect-patch.log" 2>&1 ||
		die "$p does not apply at its place in the series (see $GITDIR/bisect-patch.log)"
	git add -A -f -- . ':!.pc' ':!patches'
	$GIT commit -q --allow-empty -m "$p"
	commit[$i]=$(git rev-parse HEAD)
done

step=$ROOT/scripts/bisect-step.sh
t0=$(date +%s)
say "bisect: good ${series[$g]}, bad ${series[$b]}, tests $T on $ON"
# Both ends first: git bisect takes them on trust.
for end in "$b bad 1" "$g good 0"; do
	set -- $end
	git checkout -q -f "${commit[$1]}"
	set +e
	"$step" "$ROOT" "$ON" "$T"
	rc=$?
	set -e
	[ $rc = 125 ] && die "${series[$1]} could not be tested (build or boot setup failed)" \
		"see $ROOT/build/logs/bisect-step.log"
	if [ $rc != "$3" ]; then
		echo "mmlab: bisect: ${series[$1]}, named as $2, is not: nothing to bisect" >&2
		exit 1
	fi
done
git bisect start -q "${commit[$b]}" "${commit[$g]}" > /dev/null
set +e
git bisect run "$step" "$ROOT" "$ON" "$T" > "$GITDIR/bisect.log" 2>&1
rc=$?
set -e
grep -E '^mmlab: bisect step|is the first bad commit|^There are only|could be any of' \
	"$GITDIR/bisect.log" || true
git bisect log > "$GITDIR/bisect-transcript.log" 2>&1 || true
first=$(sed -n 's/^\([0-9a-f]\{40\}\) is the first bad commit$/\1/p' "$GITDIR/bisect.log")
if [ -n "$first" ]; then
	say "bisect: first bad patch: $(git log -1 --format=%s "$first") ($(( $(date +%s) - t0 ))s;" \
		"transcript: $GITDIR/bisect-transcript.log)"
	exit 0
fi
tail -5 "$GITDIR/bisect.log" | sed 's/^/mmlab:   /'
[ $rc = 0 ] && die "git bisect ended without a first bad patch (log: $GITDIR/bisect.log)"
echo "mmlab: bisect: no first bad patch found (git bisect run exit $rc; log: $GITDIR/bisect.log)" >&2
exit 1
