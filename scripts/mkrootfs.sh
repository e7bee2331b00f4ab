#!/bin/bash
# Build the guest root: rootfs/ + Debian's busybox-static + the static test
# binaries -> a staging directory -> an ext4 image made by mkfs.ext4 -d (no
# root, no loop mount).
# usage: mkrootfs.sh STAGE IMAGE KSFTDIR TESTBIN...
#   KSFTDIR: the built vm selftests and their list (scripts/kselftest.sh)
# Another architecture's guest (make qemu-verify-ARCH): CROSS_BUSYBOX=its
# busybox, KSFTDIR and IMAGE "none" (the stage is packed as an initramfs);
# the soak's programs, the host's, stay out.
# SERIES_FUNCTIONS: the functions the series changes (mmlab/series_functions.py),
# the guest's /etc/mmlab/series-functions for its KCSAN triage.
# tests/manifest becomes the guest's /etc/mmlab/manifest (mmlab-test's).
# KCSAN_KNOWN: the tree's reviewed KCSAN reports (trees.mk: kcsan_known), the
# guest's /etc/mmlab/kcsan-known.
. "$(dirname "$0")/lib.sh"
set -euo pipefail
STAGE=$1 IMAGE=$2 KSFT=$3
shift 3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUSYBOX=/bin/busybox	# and its applet list (the same Debian busybox on every arch)

[ -x $BUSYBOX ] || die "$BUSYBOX is missing" "make deps (apt-get install busybox-static)"
file -L $BUSYBOX | grep -q 'statically linked' ||
	die "$BUSYBOX is not the static busybox (the guest has no libc)" "apt-get install busybox-static"
command -v mkfs.ext4 > /dev/null || die "mkfs.ext4 is missing" "apt-get install e2fsprogs"

rm -rf "$STAGE"
mkdir -p "$STAGE"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,root,tests,mnt}
cp -a "$ROOT/rootfs/." "$STAGE/"
ln -s sbin/init "$STAGE/init"	# the initramfs (QEMU) starts /init
cp "${CROSS_BUSYBOX:-$BUSYBOX}" "$STAGE/bin/busybox"
[ -f "${SERIES_FUNCTIONS:-}" ] || die "SERIES_FUNCTIONS='${SERIES_FUNCTIONS:-}' is not a file" \
	"make rootfs (it makes build/series-functions with scripts/mmlab/series_functions.py)"
cp "$SERIES_FUNCTIONS" "$STAGE/etc/mmlab/series-functions"
# The tests' metadata (their set, memory, timeout), which the runner reads
# beside rootfs/etc/mmlab's splat patterns; it lives beside the tests.
cp "$ROOT/tests/manifest" "$STAGE/etc/mmlab/manifest"
[ -f "${KCSAN_KNOWN:-}" ] || die "KCSAN_KNOWN='${KCSAN_KNOWN:-}' is not a file" \
	"make rootfs (trees.mk's kcsan_known names the tree's list)"
cp "$KCSAN_KNOWN" "$STAGE/etc/mmlab/kcsan-known"
for applet in $($BUSYBOX --list-full); do
	[ -e "$STAGE/$applet" ] || ln -s /bin/busybox "$STAGE/$applet"
done
for t in "$@"; do
	cp "$t" "$STAGE/tests/"
done
if [ "$KSFT" != none ]; then
	[ -f "$KSFT/list" ] || die "no vm selftests in $KSFT" "make rootfs builds them (scripts/kselftest.sh)"
	mkdir -p "$STAGE/kselftest/vm"
	for p in $(grep -v -e '^#' -e '^[[:space:]]*$' "$KSFT/list" | awk '{print $1}' | sort -u); do
		cp "$KSFT/$p" "$STAGE/kselftest/vm/"
	done
	cp "$KSFT/list" "$STAGE/kselftest/vm/list"
fi
if [ -n "${CROSS_BUSYBOX:-}" ]; then
	say "stage: $STAGE ($# tests)"
	exit 0
fi
# The soak's stressors are Debian's dynamically linked binaries: copy them
# with every library ldd lists and the dynamic loader.
for prog in /usr/bin/stress-ng /usr/bin/trinity; do
	[ -x $prog ] || die "$prog is missing (make soak and make test use it)" "make deps"
	cp $prog "$STAGE/usr/bin/"
	for lib in $(ldd $prog | grep -o '/[^ ]*'); do
		mkdir -p "$STAGE$(dirname "$lib")"
		cp -L "$lib" "$STAGE$lib"
	done
done

mb=$(( $(du -sm "$STAGE" | cut -f1) + 32 ))
rm -f "$IMAGE.tmp"
mkfs.ext4 -q -F -L mmlab -E root_owner=0:0 -d "$STAGE" "$IMAGE.tmp" "${mb}M" ||
	die "mkfs.ext4 -d failed" "e2fsprogs >= 1.43 is needed for -d"
mv "$IMAGE.tmp" "$IMAGE"
say "rootfs: $IMAGE (${mb} MiB ext4, $# tests)"
