#!/bin/bash
# Upstream-quality checks of the quilt series, in a scratch copy of the
# pristine tree (build/check/), never in build/src:
#   1. scripts/checkpatch.pl --strict on every patch;
#   2. every prefix of the series builds (UML, uml-config): bisectable;
#   3. zero cost: with the series' debug options off, vmlinux of the whole
#      series equals vmlinux of the patches before the "zero-cost" marker
#      in patches/series (scripts/bloat-o-meter: 0 bytes).
# usage: series-check.sh KSRC GITDIR PATCHES CHECKDIR FRAGMENT
. "$(dirname "$0")/lib.sh"
set -euo pipefail
KSRC=$1 GITDIR=$2 PATCHES=$3 CHECK=$4 FRAGMENT=$5
MARKER='# zero-cost-from-here'
JOBS=${JOBS:-$(nproc)}
CC="gcc"
command -v ccache > /dev/null && CC="ccache gcc"
# Share the cache with build/src: paths relative to build/, cwd not hashed.
export CCACHE_BASEDIR=$(dirname "$CHECK") CCACHE_NOHASHDIR=1
export QUILT_PATCHES=patches QUILT_PC=.pc
quilt() { command quilt --quiltrc - "$@"; }

mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" | awk '{print $1}')
[ ${#patches[@]} -gt 0 ] || die "the series is empty"
zero_from=$(awk -v m="$MARKER" '$0 == m {found=1; next} found && !/^#/ && NF {print $1; exit}' "$PATCHES/series")
[ -n "$zero_from" ] || die "no '$MARKER' line in $PATCHES/series" \
	"put it above the first patch whose code must vanish when its option is off"
fails=0

say "1/3 checkpatch --strict on ${#patches[@]} patches"
for p in "${patches[@]}"; do
	if out=$(cd "$KSRC" && perl scripts/checkpatch.pl --strict -q "$PATCHES/$p" 2>&1); then
		echo "  ok   $p"
	else
		echo "  FAIL $p"; echo "$out" | sed 's/^/       /'; fails=$((fails + 1))
	fi
done

src=$CHECK/src
if [ ! -f "$src/Makefile" ]; then
	step "checking out the pristine tree into $src" bash -c \
		"mkdir -p '$src' && GIT_DIR='$GITDIR' GIT_WORK_TREE='$src' git checkout -q -f pristine -- ."
fi
cd "$src"
ln -sfn "$PATCHES" patches
quilt pop -a -q > /dev/null 2>&1 || true

# Options the series adds: everything in the fragment that stock lacks.
opts=$(sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=.*/\1/p' "$FRAGMENT" | while read -r o; do
	grep -rqsE "^(menu)?config ${o#CONFIG_}\$" --include='Kconfig*' . || echo "$o"; done)
off=$CHECK/options-off.config
if [ -n "$opts" ]; then
	grep -v -F -f <(echo "$opts") "$FRAGMENT" > "$off" || true
else
	cp "$FRAGMENT" "$off"
fi
for o in $opts; do echo "# $o is not set" >> "$off"; done
say "the series' own options (off for the zero-cost check): $(echo $opts)"

build() {	# build NAME FRAGMENT: UML in $CHECK/uml
	local t0=$(date +%s) log=$CHECK/build-$1.log
	make -s O="$CHECK/uml" ARCH=um defconfig > "$log" 2>&1 &&
	ARCH=um scripts/kconfig/merge_config.sh -m -O "$CHECK/uml" "$CHECK/uml/.config" "$2" >> "$log" 2>&1 &&
	make -s O="$CHECK/uml" ARCH=um olddefconfig >> "$log" 2>&1 &&
	make -s O="$CHECK/uml" ARCH=um CC="$CC" -j"$JOBS" vmlinux >> "$log" 2>&1
	local rc=$?
	echo "  $([ $rc = 0 ] && echo ok || echo FAIL)   $1 ($(( $(date +%s) - t0 ))s, log $log)"
	return $rc
}

say "2/3 every prefix of the series builds (UML, $(basename "$FRAGMENT") with what exists so far)"
base_vmlinux=
for p in "${patches[@]}"; do
	if [ "$p" = "$zero_from" ]; then
		# The baseline for the zero-cost check: everything before the marker.
		build "before-$p-options-off" "$off" && cp "$CHECK/uml/vmlinux" "$CHECK/vmlinux.base" &&
			base_vmlinux=$CHECK/vmlinux.base || fails=$((fails + 1))
	fi
	quilt push -q "$p" > "$CHECK/push.log" 2>&1 || { cat "$CHECK/push.log"; die "$p does not apply"; }
	build "$p" "$FRAGMENT" || fails=$((fails + 1))
done

say "3/3 zero cost: the whole series with its options off vs before $zero_from"
if build "all-options-off" "$off" && [ -n "$base_vmlinux" ]; then
	bloat=$(./scripts/bloat-o-meter "$base_vmlinux" "$CHECK/uml/vmlinux")
	echo "$bloat" | sed 's/^/  /'
	# UML embeds its .config as text (arch/um/kernel/config.c: "config"),
	# as IKCONFIG does (kernel_config_data); the new "is not set" lines
	# grow it. Every other symbol must be unchanged.
	changed=$(echo "$bloat" | awk '/^Function/ {t=1; next} /^Total:/ {t=0}
		t && $1 != "config" && $1 != "kernel_config_data" && $4 != 0 {print}')
	if [ -z "$changed" ]; then
		echo "  ok   0 bytes of code or data: the series costs nothing with its options off"
		echo "$bloat" | awk '/^Function/ {t=1; next} /^Total:/ {t=0}
			t && ($1 == "config" || $1 == "kernel_config_data") {
			print "       (" $1 " " $4 " bytes: the embedded .config text, not code)"}'
	else
		echo "$changed" | sed 's/^/  changed: /'
		echo "  FAIL the series changes vmlinux with its options off"; fails=$((fails + 1))
	fi
else
	fails=$((fails + 1))
fi
quilt pop -a -q > /dev/null 2>&1 || true

if [ $fails -gt 0 ]; then
	say "series-check: $fails problem(s)"
	exit 1
fi
say "series-check: all patches checkpatch-clean, every prefix builds, 0 bytes when off"
