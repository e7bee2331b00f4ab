#!/bin/bash
# make bench: what the series costs and gains on x86_64, as ratios.
#   1. stock: the pristine tree, no patch applied, in the scratch tree
#      build/check/src (series-check's; build/src is not touched), built
#      in build/x86-stock with qemu-config minus the series' own options;
#   2. the series (build/src) with those options off, in build/x86-off;
#   3. the series with them on: make x86.
#   bloat-o-meter stock -> off shows what the functional patches add,
#   off -> on what the options cost (that off adds no byte to the
#   instrumented code is series-check's byte comparison).
#   All three are booted in turn, BOOTS times each, with the same
#   initramfs, on 4 vCPUs and 2 NUMA nodes, running tests/bench (median of
#   5 runs per boot): scripts/mmlab/bench.py reports the medians, the ratios to
#   stock, the TLB shootdowns and the counters, and checks what the
#   batching must show.
# usage: bench.sh SRC GITDIR BUILD ROOT   (BOOTS=5, JOBS, KCC from make)
. "$(dirname "$0")/lib.sh"
set -Eeuo pipefail
SRC=$1 GITDIR=$2 BUILD=$3 ROOT=$4
OUT=$BUILD/bench
BOOTS=${BOOTS:-5}
JOBS=${JOBS:-$(nproc)}
KCC=${KCC:-gcc}
# One ccache for both trees: paths relative to build/, cwd not hashed.
export CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=1
mkdir -p "$OUT"

# The fragment without the series' own options: the stock tree has none of
# them, and off is their default.
PATCHES=$(dirname "$ROOT/$(tree_conf series)")
opts=$(cat /dev/null "$PATCHES"/*.patch 2>/dev/null | grep '^+config ' | awk '{print $2}' | paste -sd'|')
grep -v -E "^(# )?CONFIG_($opts)[= ]" "$ROOT/qemu-config" > "$OUT/qemu-config.stock"

build() {	# build MACHINE TREE: its config (machines.mk) with the stock fragment
	local arch
	arch=$(conf "$1" arch)
	"$ROOT/scripts/config.sh" "$2" "$BUILD/$1" "$arch" "$(conf "$1" base)" "$OUT/qemu-config.stock"
	step "building $1 ($(conf "$1" note)) in $BUILD/$1" env PYTHONPATH="$ROOT/scripts" \
		/usr/bin/python3 -m mmlab.kbuild "$1" "$2" "$BUILD/$1" "$arch" "$KCC" "$JOBS" $(conf "$1" targets)
}

stock=$BUILD/check/src
scratch_tree "$GITDIR" "$stock" "$PATCHES"
build x86-stock "$stock"
if [ "${BENCH_AA:-0}" = 1 ]; then
	# The noise floor: stock against itself, in all three slots.
	make -s -C "$ROOT" initramfs
	s=$(conf x86-stock kernel)
	say "BENCH_AA=1: stock against itself (the noise floor), $BOOTS boots in each slot"
	PYTHONPATH=$ROOT/scripts exec /usr/bin/python3 -m mmlab.bench --aa --stock "$s" --off "$s" \
		--patched "$s" --initrd "$(conf x86 root_image)" --boots "$BOOTS" --out "$OUT/aa"
fi
build x86-off "$SRC"
make -s -C "$ROOT" x86 initramfs

bloat() {	# bloat NAME FROM TO
	say "bloat-o-meter $1"
	"$SRC/scripts/bloat-o-meter" "$BUILD/$2/vmlinux" "$BUILD/$3/vmlinux" > "$OUT/bloat-$2-$3.txt"
	# the summary, the 12 largest changes, the total
	awk 'NR == 1 || /^Total/ || (!/^(add\/remove|Function)/ && ++n <= 12)' \
		"$OUT/bloat-$2-$3.txt" | sed 's/^/mmlab:   /'
}
bloat "stock -> series with its options off (the functional patches)" x86-stock x86-off
bloat "series: options off -> on (the instrumentation)" x86-off x86

PYTHONPATH=$ROOT/scripts /usr/bin/python3 -m mmlab.bench --stock "$(conf x86-stock kernel)" \
	--off "$(conf x86-off kernel)" --patched "$(conf x86 kernel)" --initrd "$(conf x86 root_image)" --boots "$BOOTS" --out "$OUT" \
	--bloat "stock_to_off=$OUT/bloat-x86-stock-x86-off.txt" --bloat "off_to_on=$OUT/bloat-x86-off-x86.txt"
