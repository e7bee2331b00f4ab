#!/bin/bash
# Make O's .config = ARCH's base defconfig + fragment(s), merged with the
# tree's merge_config.sh, then check that every option the fragments ask for
# survived olddefconfig (like kunit.py's validate_config). Exit 2 listing
# those that did not.
# A fragment may say "# not on ARCH: CONFIG_X reason" or "# not on KVER:
# CONFIG_X reason" (KVER: the tree, MMLAB_TREE): CONFIG_X then leaves every
# fragment (an arch's own over qemu-config, for what it lacks; a tree's
# line, for what that tree has not, with the reason).
# CROSS_COMPILE in the environment is passed on: Kconfig probes the compiler.
# usage: config.sh SRC O ARCH "BASE_TARGETS" FRAGMENT...
. "$(dirname "$0")/lib.sh"
set -euo pipefail
SRC=$1 O=$2 ARCH=$3 BASE=$4
shift 4
# Not the calling make's flags: its variables (make mutate M=..., T=, V=)
# would reach kbuild, where M= means an external module.
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
mkdir -p "$O"
for f in "$@"; do
	[ -f "$f" ] || die "config fragment $f is missing"
done
drop=$(sed -n -e "s/^# not on $ARCH: \(CONFIG_[A-Za-z0-9_]*\).*/\1/p" \
	${MMLAB_TREE:+-e "s/^# not on ${MMLAB_TREE//./\\.}: \(CONFIG_[A-Za-z0-9_]*\).*/\1/p"} "$@" | paste -sd'|')
if [ -n "$drop" ]; then
	frags=()
	for f in "$@"; do
		frags+=("$O/.fragment.$(basename "$f")")
		grep -v -E "^(# )?($drop)[= ]" "$f" > "${frags[-1]}" || true
	done
	set -- "${frags[@]}"
fi

make -s -C "$SRC" O="$O" ARCH="$ARCH" $BASE > "$O/config.log" 2>&1 ||
	{ cat "$O/config.log" >&2; die "make ARCH=$ARCH $BASE failed (log above)"; }
(cd "$SRC" && ARCH=$ARCH scripts/kconfig/merge_config.sh -m -O "$O" "$O/.config" "$@") \
	>> "$O/config.log" 2>&1 || { cat "$O/config.log" >&2; die "merge_config.sh failed"; }
make -s -C "$SRC" O="$O" ARCH="$ARCH" olddefconfig >> "$O/config.log" 2>&1 ||
	{ cat "$O/config.log" >&2; die "olddefconfig failed"; }

# Every CONFIG_X=v must be in .config as is; every "# CONFIG_X is not set"
# must not be set to y/m (an option whose dependencies are off vanishes).
bad=0
while IFS= read -r line; do
	if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
		opt=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		got=$(grep -m1 -E "^$opt=" "$O/.config" | cut -d= -f2- || true)
		if [ "$got" != "$want" ]; then
			echo "mmlab:   $opt=$want requested, got ${got:-not set}" >&2
			bad=1
		fi
	elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
		opt=${BASH_REMATCH[1]}
		if grep -qE "^$opt=" "$O/.config"; then
			echo "mmlab:   $opt off requested, got $(grep -m1 -E "^$opt=" "$O/.config")" >&2
			bad=1
		fi
	fi
done < <(cat "$@")
[ $bad = 0 ] || die "options above did not survive olddefconfig (missing dependency or typo)" \
	"fix the fragment ($*), or add what they depend on; see 'make ARCH=$ARCH O=$O menuconfig'"
# Remember what this .config was made from, so make can tell when to redo it.
cat "$@" > "$O/.mmlab-fragment"
