#!/bin/bash
# Build the tree's own mm selftests (tools/testing/selftests/vm on 6.1,
# .../mm since 6.3; the guests find them in ksft/vm either way) statically
# for the guests: the uapi headers of the same tree (headers_install into its
# own O= directory, so the source stays clean for the UML and x86 builds),
# then every program LIST (trees.mk's kselftests) names, with -static.
# usage: kselftest.sh SRC OUT LIST
. "$(dirname "$0")/lib.sh"
set -euo pipefail
SRC=$1 OUT=$2 LIST=$3
VM=$SRC/tools/testing/selftests/mm
[ -d "$VM" ] || VM=$SRC/tools/testing/selftests/vm
[ -d "$VM" ] || die "no $SRC/tools/testing/selftests/mm (or vm, before 6.3)" "make tree"
for lib in libnuma.a libcap.a; do
	[ -n "$(find /usr/lib /usr/lib64 -name $lib 2>/dev/null | head -1)" ] ||
		die "$lib is missing (ksm_tests and migration link it statically)" \
			"make deps (apt-get install libnuma-dev libcap-dev)"
done

t0=$(date +%s)
say "uapi headers for the selftests ..."
# Not the calling make's flags: M= (make mutate M=...) means a module to kbuild.
unset MAKEFLAGS MAKEOVERRIDES MFLAGS
make -s -C "$SRC" O="$OUT/hdr" ARCH=x86 headers_install INSTALL_HDR_PATH="$OUT/hdr/usr" \
	> "$OUT.log" 2>&1 || {
	tail -20 "$OUT.log" >&2
	missing=$(grep -o '[[:alnum:]_.+-]*: not found' "$OUT.log" | head -1 | cut -d: -f1)
	[ -n "$missing" ] && die "headers_install needs $missing, which is not installed (log $OUT.log)" \
		"make deps (scripts/packages lists what the build runs), or apt-get install $missing"
	die "headers_install failed (log $OUT.log)"
}

progs=$(grep -v -e '^#' -e '^[[:space:]]*$' "$LIST" | awk '{print $1}' | sort -u)
say "building $(echo "$progs" | wc -w) vm selftests (static) in $OUT/vm"
mkdir -p "$OUT/vm"
targets=
for p in $progs; do targets="$targets $OUT/vm/$p"; done
# shellcheck disable=SC2086 # one target per word
make -C "$VM" OUTPUT="$OUT/vm" KHDR_INCLUDES="-isystem $OUT/hdr/usr/include" \
	EXTRA_CFLAGS="-static" CC="${CC:-gcc}" $targets >> "$OUT.log" 2>&1 ||
	{ grep -E 'error|Error' "$OUT.log" | head -20 >&2; die "building the vm selftests failed (log $OUT.log)"; }
for p in $progs; do
	file "$OUT/vm/$p" | grep -q 'statically linked' ||
		die "$OUT/vm/$p is not statically linked" "see $OUT.log"
done
# 6.12's Makefile probes for liburing into the source directory
# (local_config.h, .mk): not part of the tree, so not a local edit.
rm -f "$VM/local_config.h" "$VM/local_config.mk"
cp "$LIST" "$OUT/vm/list"
say "vm selftests built in $(( $(date +%s) - t0 ))s"
