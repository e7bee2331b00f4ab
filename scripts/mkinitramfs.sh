#!/bin/bash
# The QEMU guest's initramfs: the same staging directory as rootfs.img,
# packed with the tree's own usr/gen_initramfs.sh + gen_init_cpio (which
# can add /dev/console without root).
# usage: mkinitramfs.sh STAGE OUT KSRC TOOLDIR
. "$(dirname "$0")/lib.sh"
set -euo pipefail
STAGE=$1 OUT=$2 KSRC=$3 TOOLS=$4
[ -d "$STAGE/sbin" ] || die "$STAGE is not a staged rootfs" "make rootfs"
mkdir -p "$TOOLS/usr"
if [ ! -x "$TOOLS/usr/gen_init_cpio" ] || [ "$KSRC/usr/gen_init_cpio.c" -nt "$TOOLS/usr/gen_init_cpio" ]; then
	gcc -O2 -o "$TOOLS/usr/gen_init_cpio" "$KSRC/usr/gen_init_cpio.c"
fi
printf 'nod /dev/console 0600 0 0 c 5 1\nnod /dev/null 0666 0 0 c 1 3\n' > "$TOOLS/devices.list"
(cd "$TOOLS" && "$KSRC/usr/gen_initramfs.sh" -o "$OUT.tmp" -u "$(id -u)" -g "$(id -g)" \
	"$STAGE" "$TOOLS/devices.list")
mv "$OUT.tmp" "$OUT"
say "initramfs: $OUT ($(( $(stat -c %s "$OUT") / 1024 / 1024 )) MiB, packed from $STAGE)"
