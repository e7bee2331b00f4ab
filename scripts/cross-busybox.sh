#!/bin/bash
# Debian's busybox-static for another architecture, through apt's multiarch
# (the package is not Multi-Arch: installing it would replace the host's, so
# it is downloaded and unpacked instead).
# usage: cross-busybox.sh DEBARCH OUTDIR  -> OUTDIR/busybox
. "$(dirname "$0")/lib.sh"
set -euo pipefail
ARCH=$1 OUT=$2
[ -x "$OUT/busybox" ] && exit 0
if ! dpkg --print-foreign-architectures | grep -qx "$ARCH"; then
	[ "$(id -u)" = 0 ] || die "dpkg does not know the $ARCH architecture" \
		"sudo dpkg --add-architecture $ARCH && sudo apt-get update"
	say "adding the $ARCH architecture to dpkg (for busybox-static:$ARCH)"
	dpkg --add-architecture "$ARCH"
	apt-get update -q > /dev/null || die "apt-get update failed after adding $ARCH" \
		"check the apt sources, then: apt-get update"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ "$(id -u)" = 0 ] && chown _apt "$tmp"	# apt downloads as its _apt user
(cd "$tmp" && apt-get download -q "busybox-static:$ARCH" > /dev/null) ||
	die "apt-get download busybox-static:$ARCH failed" "apt-get update, then make again"
dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/x"
mkdir -p "$OUT"
cp "$tmp/x/bin/busybox" "$OUT/busybox.tmp"
mv "$OUT/busybox.tmp" "$OUT/busybox"
say "busybox for $ARCH: $(file -b "$OUT/busybox" | cut -d, -f1-2)"
