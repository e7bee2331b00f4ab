#!/bin/bash
# make bench: what the series costs and gains on x86_64, as ratios.
#   1. stock: the series popped from the one tree, built in build/x86-stock
#      with qemu-config minus the series' own options;
#   2. the series applied with those options off (build/x86-off):
#      bloat-o-meter stock -> off must show 0 bytes;
#   3. the patched kernel (make x86, options on) and the stock one booted
#      alternately, BOOTS times each, with the same initramfs, running
#      tests/bench (median of 5 runs per boot): scripts/bench.py reports the
#      medians, the patched/stock ratios and the gather counters.
# usage: bench.sh SRC BUILD ROOT   (BOOTS=5, JOBS, KCC from make)
. "$(dirname "$0")/lib.sh"
set -Eeuo pipefail
SRC=$1 BUILD=$2 ROOT=$3
OUT=$BUILD/bench
BOOTS=${BOOTS:-5}
JOBS=${JOBS:-$(nproc)}
KCC=${KCC:-gcc}
export QUILT_PATCHES=patches QUILT_PC=.pc
quilt() { command quilt --quiltrc - "$@"; }
mkdir -p "$OUT"

# The fragment without the series' own options: the stock tree has none of
# them, and off is their default.
opts=$(grep -h '^+config ' "$ROOT"/patches/*.patch | awk '{print $2}' | paste -sd'|')
grep -v -E "^(# )?CONFIG_($opts)[= ]" "$ROOT/qemu-config" > "$OUT/qemu-config.stock"

build() {	# build NAME O
	local t0
	t0=$(date +%s)
	"$ROOT/scripts/config.sh" "$SRC" "$2" x86_64 "x86_64_defconfig kvm_guest.config" \
		"$OUT/qemu-config.stock"
	say "building the $1 x86_64 kernel in $2 ..."
	make -s -C "$SRC" O="$2" ARCH=x86_64 CC="$KCC" -j"$JOBS" bzImage > "$2.log" 2>&1 ||
		{ tail -20 "$2.log" >&2; die "the $1 build failed (log $2.log)"; }
	say "$1 kernel built in $(( $(date +%s) - t0 ))s"
}

cd "$SRC"
n=$(quilt applied 2>/dev/null | wc -l)
[ "$n" -gt 0 ] || die "the series is not applied" "make series"
# Whatever happens from here on, put the series back.
trap 'cd "$SRC" && quilt push -a -q > /dev/null 2>&1 || true' EXIT
say "popping the $n patches for the stock kernel"
quilt pop -a -q > /dev/null
build stock "$BUILD/x86-stock"
quilt push -a -q > /dev/null
trap - EXIT
say "series re-applied: $(quilt applied | wc -l) patches"

build "patched, options off" "$BUILD/x86-off"
say "bloat-o-meter: stock -> patched with the series' options off"
"$SRC/scripts/bloat-o-meter" "$BUILD/x86-stock/vmlinux" "$BUILD/x86-off/vmlinux" |
	tee "$OUT/bloat-o-meter.txt" | sed 's/^/mmlab:   /'

make -s -C "$ROOT" x86 initramfs
python3 "$ROOT/scripts/bench.py" --stock "$BUILD/x86-stock/arch/x86/boot/bzImage" \
	--patched "$BUILD/x86/arch/x86/boot/bzImage" --initrd "$BUILD/initramfs.cpio" \
	--boots "$BOOTS" --out "$OUT" --bloat "$OUT/bloat-o-meter.txt"
