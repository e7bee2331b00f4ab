#!/bin/bash
# Debian's busybox-static for another architecture, through apt's multiarch
# (the package is not Multi-Arch: installing it would replace the host's, so
# it is downloaded and unpacked instead).
# Debian 12 builds no binary packages for sh4 (a ports architecture): there
# the busybox is Debian 12's own source package, fetched by apt into a
# private apt state under OUTDIR (the system's sources are left alone),
# cross-compiled with its static configuration.
# usage: cross-busybox.sh DEBARCH OUTDIR  -> OUTDIR/busybox
. "$(dirname "$0")/lib.sh"
set -euo pipefail
ARCH=$1 OUT=$2
[ -x "$OUT/busybox" ] && exit 0

from_source() {
	local cross=$1 codename uri apt=$OUT/apt t0=$SECONDS
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	uri=$(apt-get indextargets --format '$(REPO_URI)' "Identifier: Packages" "Label: Debian" \
		"Codename: $codename" "Component: main" | head -1)
	[ -n "$uri" ] || die "no Debian $codename main archive in apt's sources" \
		"add it (deb.debian.org/debian $codename main), apt-get update, then make again"
	command -v "${cross}gcc" > /dev/null || die "${cross}gcc is missing" "make arch-deps"
	rm -rf "$apt" && mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/src"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $codename main" \
		> "$apt/sources.list"
	local opts=(-q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1)
	say "busybox for $ARCH: Debian $codename's source package, cross-built static (about a minute)"
	apt-get "${opts[@]}" update > "$apt/log" 2>&1 ||
		die "apt-get update of $codename's sources failed (log: $apt/log)" "check the network, then make again"
	if [ "$(id -u)" = 0 ]; then	# apt downloads as its _apt user
		chown _apt "$apt/src" || die "cannot hand $apt/src to apt's _apt user" "check that user _apt exists"
	fi
	(cd "$apt/src" && apt-get "${opts[@]}" source --download-only busybox) >> "$apt/log" 2>&1 ||
		die "apt-get source busybox failed (log: $apt/log)" "apt-get update, then make again"
	(cd "$apt/src" && dpkg-source -x busybox_*.dsc bb) >> "$apt/log" 2>&1 ||
		die "dpkg-source -x of busybox failed (log: $apt/log)" "make arch-deps (dpkg-dev), then make again"
	# The .config as debian/rules makes it for busybox-static
	cat "$apt/src/bb/debian/config/os/linux" "$apt/src/bb/debian/config/pkg/static" > "$apt/src/bb/.config"
	{ { yes "" || true; } | make -C "$apt/src/bb" CROSS_COMPILE="$cross" silentoldconfig &&
	  make -C "$apt/src/bb" -j"$(nproc)" CROSS_COMPILE="$cross" busybox; } >> "$apt/log" 2>&1 ||
		die "busybox did not build for $ARCH (log: $apt/log)" "read the log's last lines"
	mkdir -p "$OUT"
	cp "$apt/src/bb/busybox" "$OUT/busybox.tmp"
	mv "$OUT/busybox.tmp" "$OUT/busybox"
	rm -rf "$apt/src"
	say "busybox for $ARCH: $(file -b "$OUT/busybox" | cut -d, -f1-2), built in $((SECONDS - t0)) s"
}

case $ARCH in
sh4)	from_source sh4-linux-gnu-; exit 0 ;;
esac
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
