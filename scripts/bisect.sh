#!/bin/bash
# make bisect GOOD=<patch> BAD=<patch> [T=tests] [BISECT_ON=MACHINE]
#
# Which patch of the series broke the tests? One commit per patch on a
# scratch branch of build/tree.git (pristine, then each patch of the series
# as far as BAD), then `git bisect run` between GOOD and BAD. Each step
# builds the kernel incrementally and boots the tests T (default: kunit)
# on a machine of machines.mk: UML by default, BISECT_ON=x86 (arm64, ...)
# another one that make builds by its name from this tree (its kernel in
# build/MACHINE, with what its make_targets build); our exit codes map to git
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
	"make bisect GOOD=0008 BAD=0016 [T=kunit,munmap] [BISECT_ON=x86]"
# The machines make builds from this tree by their name (not make bench's
# baselines, built from a tree of their own).
all=$(PYTHONPATH=$MMLAB_SCRIPTS /usr/bin/python3 -m mmlab.conf machines) || exit 2
ons=
for m in $all; do
	by=$(conf "$m" built_by) || exit 2
	[ -n "$by" ] || ons="$ons $m"
done
ons=${ons# }
case " $ons " in
*" $ON "*) ;;
*) die "BISECT_ON=$ON is not a machine make builds from the tree (machines.mk)" \
	"BISECT_ON= one of: $ons (default uml)" ;;
esac
mapfile -t series < <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" | awk '{print $1}')
index_of() {	# index_of NAME: its position in the series (0-based)
	local i whole=() part=()
	for i in "${!series[@]}"; do
		case ${series[$i]} in
		"$1" | "$1"[-.]*) whole+=("$i") ;;	# 0012 is 0012-..., not 0012a-...
		"$1"*) part+=("$i") ;;
		esac
	done
	[ ${#whole[@]} = 0 ] && whole=("${part[@]}")
	[ ${#whole[@]} = 1 ] && { echo "${whole[0]}"; return; }
	[ ${#whole[@]} = 0 ] && die "no patch $1 in $PATCHES/series" "quilt series lists them"
	die "$1 names more than one patch: $(for i in "${whole[@]}"; do printf '%s ' "${series[$i]}"; done)" \
		"give more of the name"
}
g=$(index_of "$GOOD")
b=$(index_of "$BAD")
[ "$g" -lt "$b" ] || die "GOOD (${series[$g]}) must come before BAD (${series[$b]}) in the series" \
	"swap them, or pick two other patches (quilt series lists them in order)"

cd "$SRC"
edits=$({ git diff --name-only HEAD; git ls-files -o -x /.pc/ -x /patches -x __pycache__ \
	-x '*.pyc' -x '/.checkpatch-camelcase.*'; } | sort -u)
[ -z "$edits" ] || die "$SRC has local edits ($(echo $edits | cut -c1-80))" \
	"make series-refresh keeps them in the series, make series-reset drops them"
orig=$(git symbolic-ref -q --short HEAD) || die "$GITDIR is not on a branch (an interrupted bisect?)" \
	"GIT_DIR=$GITDIR GIT_WORK_TREE=$SRC git bisect reset; then git checkout master"

orig_commit=$(git rev-parse HEAD)
# The kernel's .config as the series wants it: an older state's Kconfig
# lacks the series' options and its build drops them from .config, so each
# step starts again from this copy (bisect-step.sh) and so does the restore.
O=$MMLAB_BUILD/$ON
[ -f "$O/.config" ] || die "no $O/.config to bisect with" "make $ON first"
# what each step builds (the kernel, and its root unless that comes with it)
BISECT_TARGETS=$(conf "$ON" make_targets) || exit 2
export BISECT_TARGETS
export BISECT_CONFIG=$GITDIR/bisect-config-$ON BISECT_SRC=$SRC
cp "$O/.config" "$BISECT_CONFIG"

# The commits are made in a scratch index (git apply --cached), so the work
# tree only ever changes by what differs between two states of the series:
# each step rebuilds those files alone. Back at HEAD's state, quilt's .pc
# (never touched) matches the tree again.
restore() {
	trap - EXIT INT TERM
	set +e
	unset GIT_INDEX_FILE	# the real index: never check out against the scratch one
	say "bisect: putting the tree back ($orig at ${orig_commit:0:12}, the series applied)"
	git bisect reset > /dev/null 2>&1
	if ! git checkout -q -f "$orig" || ! git reset -q --hard "$orig_commit"; then
		echo "mmlab: error: could not put $SRC back on $orig" >&2
		echo "mmlab:   fix: rm -f $GITDIR/index.lock; GIT_DIR=$GITDIR GIT_WORK_TREE=$SRC" \
			"git checkout -f $orig && git reset --hard $orig_commit" >&2
		exit 2
	fi
	git branch -q -D "$BRANCH" 2> /dev/null
	rm -f "$GITDIR/bisect-index"
	edits=$(git diff --name-only HEAD)
	[ -z "$edits" ] || warn "the restored tree differs from $orig: $edits"
	cp "$BISECT_CONFIG" "$O/.config"
	say "bisect: rebuilding the $ON kernel of the restored tree"
	env -u GIT_DIR -u GIT_WORK_TREE make -s -C "$ROOT" "$ON" > /dev/null ||
		warn "the rebuild of the restored tree failed: make $ON says why"
}
trap restore EXIT
trap 'exit 130' INT TERM

# One commit per patch on top of pristine, the work tree left alone.
say "bisect: one commit per patch, ${series[0]} .. ${series[$b]}, from $PATCHES"
export GIT_INDEX_FILE=$GITDIR/bisect-index
git read-tree pristine
parent=$(git rev-parse pristine)
declare -a commit
for i in $(seq 0 "$b"); do
	p=${series[$i]}
	git apply --cached -p1 "$PATCHES/$p" 2> "$GITDIR/bisect-patch.log" ||
		die "$p does not apply at its place in the series (see $GITDIR/bisect-patch.log)"
	parent=$($GIT commit-tree "$(git write-tree)" -p "$parent" -m "$p")
	commit[$i]=$parent
done
unset GIT_INDEX_FILE
git branch -q -f "$BRANCH" "${commit[$b]}"

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
		"see $MMLAB_BUILD/logs/bisect-step.log"
	if [ $rc != "$3" ]; then
		echo "mmlab: bisect: ${series[$1]}, named as $2, is not: nothing to bisect" >&2
		exit 1
	fi
done
git bisect start "${commit[$b]}" "${commit[$g]}" > /dev/null
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
