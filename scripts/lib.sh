# shellcheck shell=bash
# Shared by the mmlab host scripts: messages, errors with their fix, timing.
# Exit codes: 0 ok, 1 test failure, 2 setup or usage error, 3 kernel splat,
# 124 timeout.

MMLAB_T0=${MMLAB_T0:-$(date +%s)}

say()  { printf 'mmlab: %s\n' "$*"; }
warn() { printf 'mmlab: warning: %s\n' "$*" >&2; }
# die MESSAGE [FIX]: a setup error, exit 2
die() {
	printf 'mmlab: error: %s\n' "$1" >&2
	[ -n "${2:-}" ] && printf 'mmlab:   fix: %s\n' "$2" >&2
	exit 2
}
# finish LOGDIR NAME PASSED FAILED SKIPPED RC: LOGDIR/NAME.summary (what
# test-all.sh adds up) and the summary line, as scripts/mmlab/outcome.py's
# finish(); returns RC
finish() {
	echo "$3 $4 $5 $6" > "$1/$2.summary"
	echo "$3 passed, $4 failed, $5 skipped"
	return "$6"
}
elapsed() { echo "$(( $(date +%s) - MMLAB_T0 ))s"; }
# step NAME CMD...: run a long step with progress and elapsed time
step() {
	local name=$1 t0
	shift
	t0=$(date +%s)
	say "$name ..."
	"$@" || return
	say "$name done in $(( $(date +%s) - t0 ))s"
}
# conf NAME FIELD: one field of machine NAME (machines.mk) or kernel tree
# NAME (trees.mk), as scripts/mmlab/conf.py reads it (a `from` block filling
# what a block leaves out; lists space-separated); no such machine, tree or
# field: its error on stderr, exit 2.
MMLAB_SCRIPTS=$(CDPATH='' cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
conf() {
	PYTHONPATH=$MMLAB_SCRIPTS /usr/bin/python3 -m mmlab.conf get "$1" "$2"
}
# tree_conf FIELD...: fields of the kernel tree in use (trees.mk), a line
# each: the tree MMLAB_TREE names (the Makefile exports it), else the
# first; a tree that is not in trees.mk: its error on stderr, exit 2.
tree_conf() {
	PYTHONPATH=$MMLAB_SCRIPTS /usr/bin/python3 -m mmlab.conf tree "$@"
}
# missing_packages [LIST|PACKAGE]...: of the packages named and those each
# LIST file holds (a path, with a /: names on lines not starting with #),
# the ones not installed, space-separated, in order, each once (one
# dpkg-query for all: this runs before every build). No argument: the list
# scripts/packages. A LIST that is not there: exit 2, the error on stderr.
missing_packages() {
	local want='' have p out='' a
	[ $# -gt 0 ] || set -- "$MMLAB_SCRIPTS/packages"
	for a in "$@"; do
		case $a in
		*/*) [ -f "$a" ] || die "no package list $a" "name a list file that exists, or packages"
			want="$want $(grep -v '^#' "$a")" ;;
		*) want="$want $a" ;;
		esac
	done
	# shellcheck disable=SC2086
	want=$(printf '%s\n' $want | awk 'NF && !seen[$0]++')
	[ -n "$want" ] || { echo; return 0; }
	# shellcheck disable=SC2086
	have=" $(dpkg-query -W -f='${Package} ${binary:Package} ${Status}\n' $want 2>/dev/null |
		awk '$NF == "installed" && $(NF-1) == "ok" { printf "%s %s ", $1, $2 }')"
	for p in $want; do
		case $have in *" $p "*) ;; *) out="$out $p" ;; esac
	done
	echo "${out# }"
}
# scratch_tree GITDIR DIR PATCHES: DIR holds the pristine tree (tag
# "pristine" of GITDIR) with no patch applied, and PATCHES linked as its
# quilt series, for builds that must not touch build/src (series-check,
# bench's stock kernel). A tree whose patches no longer pop (renamed
# since) is checked out again. Its own git index is DIR's sibling "index":
# GITDIR's belongs to build/src.
scratch_tree() {
	local gitdir=$1 dir=$2 patches=$3
	if [ -s "$dir/.pc/applied-patches" ]; then
		(cd "$dir" && ln -sfn "$patches" patches &&
		 QUILT_PATCHES=patches QUILT_PC=.pc quilt --quiltrc - pop -a -q > /dev/null 2>&1) || true
		if [ -s "$dir/.pc/applied-patches" ]; then
			say "the patches applied in $dir no longer pop (renamed since?): checking it out again"
			rm -rf "$dir"
		fi
	fi
	if [ ! -f "$dir/Makefile" ]; then
		step "checking out the pristine tree into $dir" bash -c \
			"mkdir -p '$dir' && GIT_DIR='$gitdir' GIT_WORK_TREE='$dir' \
			 GIT_INDEX_FILE='$(dirname "$dir")/index' git checkout -q -f pristine -- ."
	fi
	ln -sfn "$patches" "$dir/patches"
}
# offered_trees: the X.Y of each linux-source-X.Y this machine's apt offers,
# space-separated, oldest first (a few seconds: apt-cache reads its lists).
offered_trees() {
	apt-cache pkgnames linux-source- 2>/dev/null | sed -n 's/^linux-source-\([0-9]*\.[0-9]*\)$/\1/p' |
		sort -V | paste -sd' '
}
