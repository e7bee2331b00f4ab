#!/bin/bash
# Unpack the kernel tree's Debian package (trees.mk's row: the tree
# MMLAB_TREE names, default the first; linux-source-6.1 today) into
# build/src once (or check KSRC), check that it is that VERSION.PATCHLEVEL
# (6.1.x), and record its pristine state in a git repository kept outside
# the tree (build/tree.git), so local edits can be found later.
# usage: tree.sh SRC GITDIR
. "$(dirname "$0")/lib.sh"
set -eu
SRC=$1 GITDIR=$2
# one Python for the four (this runs before every build)
fields=$(tree_conf tarball package version sublevel)
{ read -r TARBALL; read -r PKG; read -r VER; read -r SUB; } <<EOF
$fields
EOF
export GIT_DIR=$GITDIR GIT_WORK_TREE=$SRC

version() {
	sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' -e 's/^SUBLEVEL = //p' \
		"$1/Makefile" | paste -sd.
}

if [ ! -f "$SRC/Makefile" ]; then
	[ -n "${KSRC_IS_USER:-}" ] && die "KSRC=$SRC is not a kernel tree (no Makefile)" \
		"point KSRC at an unpacked Linux $VER source tree"
	[ -f "$TARBALL" ] || die "$TARBALL is missing" "make deps (apt-get install $PKG)"
	tmp=$SRC.unpacking
	rm -rf "$tmp" && mkdir -p "$tmp"
	step "unpacking $TARBALL" tar -C "$tmp" -xJf "$TARBALL"
	top=$(ls "$tmp")
	mv "$tmp/$top" "$SRC" && rmdir "$tmp"
fi

v=$(version "$SRC")
case $v in
"$VER".*) ;;
*) die "$SRC is Linux $v, not $VER.x" "use Debian's $PKG (unset KSRC) or a $VER tree" ;;
esac

if [ ! -d "$GITDIR" ]; then
	[ -d "$SRC/.pc" ] && die "$SRC already has quilt patches applied but no baseline" \
		"quilt pop -a in $SRC, or remove $SRC to unpack it again"
	# Debian's top-level .gitignore hides the whole tree: add with -f.
	step "recording the pristine tree (for local-edit checks)" sh -c '
		git init -q && git config core.compression 1 &&
		git add -A -f -- . ":!.pc" ":!patches" &&
		git -c user.name=mmlab -c user.email=mmlab@localhost commit -q -m "pristine linux $0" &&
		git tag pristine' "$v"
fi
say "kernel tree $SRC: Linux $v"
[ "$v" = "$VER.$SUB" ] ||
	warn "the series was made and tested on $VER.$SUB (trees.mk); $v may need its patches refreshed"
