#!/bin/bash
# A static busybox for MACHINE, a machine of machines.mk with a root of its
# own; its row gives DEB (deb), CROSS_PREFIX (cross), LIBC (libc), PLUGIN.
# LIBC glibc: Debian's busybox-static for the machine's
# Debian architecture DEB, through apt's multiarch (the package is not
# Multi-Arch: installing it would replace the host's, so it is downloaded
# and unpacked instead).
# LIBC musl: the C library is musl and the busybox is Debian's own, both
# from their source packages, fetched by apt into a private state under
# OUTDIR (the system's sources are left alone) and cross-compiled with
# CROSS_PREFIX and CROSS_CFLAGS: OUTDIR/musl has musl's libc.a, its headers
# with the kernel's UAPI ones (linux-libc-dev-DEB-cross), and
# musl-gcc.specs, which the machine's tests are linked with. That is sh4's
# way today: Debian 12 builds no binary packages for sh4 (a ports
# architecture), and its sh4 C library cannot be used: the compiler bug
# that scripts/sh-treg-combine-off.cc works around is in its libc.a too
# (__libc_start_main spins on a branch to itself).
# A musl machine whose row names a GCC plugin (plugin) must have it in
# CROSS_CFLAGS where its compiler needs it (scripts/plugin.sh): its musl
# and busybox are compiled with it.
# usage: [CROSS_CFLAGS=...] cross-busybox.sh MACHINE OUTDIR  -> OUTDIR/busybox
#   e.g. cross-busybox.sh arm64 build/busybox-arm64
# OUTDIR/busybox.cflags keeps CROSS_CFLAGS and a checksum of each -fplugin=
# they name: a busybox (and musl) built with others is built again, and
# OUTDIR/busybox is left alone (its time too) when nothing changed.
. "$(dirname "$0")/lib.sh"
set -euo pipefail
[ $# = 2 ] || die "usage: [CROSS_CFLAGS=...] cross-busybox.sh MACHINE OUTDIR" \
	"make MACHINE runs it (MACHINE: a machine of machines.mk with a root of its own)"
MACHINE=$1 OUT=$(realpath -m "$2") CFLAGS=${CROSS_CFLAGS:-}
ARCH=$(conf "$MACHINE" deb) CROSS=$(conf "$MACHINE" cross) LIBC=$(conf "$MACHINE" libc) &&
	PLUGIN=$(conf "$MACHINE" plugin) || exit 2
case $LIBC in
glibc|musl) ;;
*) die "$MACHINE.libc = $LIBC: cross-busybox.sh knows glibc (Debian's busybox-static) and musl (from source)" \
	"libc = glibc or musl in the machine's row of machines.mk" ;;
esac
key=$CFLAGS
for f in $CFLAGS; do
	case $f in
	-fplugin=*) [ -f "${f#-fplugin=}" ] || die "no GCC plugin ${f#-fplugin=}" "make $MACHINE builds it"
		key="$key $(sha256sum < "${f#-fplugin=}" | cut -c1-16)" ;;
	esac
done
if [ -n "$PLUGIN" ] && [ "$LIBC" = musl ]; then
	# what scripts/plugin.sh decides for this machine's compiler
	want=$("$MMLAB_SCRIPTS/plugin.sh" "$MACHINE" "$(dirname "$OUT")/tools") || exit 2
	[ -z "$want" ] || case " $CFLAGS " in
	*" $want "*) ;;
	*) die "$MACHINE's musl and busybox need '$want' in CROSS_CFLAGS (its compiler needs scripts/$PLUGIN.cc)" \
		"make $MACHINE (it passes it)" ;;
	esac
fi
# Built with these flags: musl's files are there for musl, and absent for
# glibc (a machine whose libc changed is built again).
[ -x "$OUT/busybox" ] && [ "$(cat "$OUT/busybox.cflags" 2> /dev/null)" = "$key" ] &&
	if [ "$LIBC" = musl ]; then [ -f "$OUT/musl/lib/musl-gcc.specs" ]; else [ ! -e "$OUT/musl" ]; fi &&
	exit 0

# apt_source PKG DIR: Debian's source package PKG, unpacked (its patches
# applied) into $apt/src/DIR
apt_source() {
	(cd "$apt/src" && apt-get "${opts[@]}" source --download-only "$1") >> "$apt/log" 2>&1 ||
		die "apt-get source $1 failed (log: $apt/log)" "check the network, then make again"
	(cd "$apt/src" && dpkg-source -x "$1"_*.dsc "$2") >> "$apt/log" 2>&1 ||
		die "dpkg-source -x of $1 failed (log: $apt/log)" "make arch-deps (dpkg-dev), then make again"
}

from_source() {
	local cross=$1 codename uri t0=$SECONDS
	apt=$OUT/apt
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	uri=$(apt-get indextargets --format '$(REPO_URI)' "Identifier: Packages" "Label: Debian" \
		"Codename: $codename" "Component: main" | head -1)
	[ -n "$uri" ] || die "no Debian $codename main archive in apt's sources" \
		"add it (deb.debian.org/debian $codename main), apt-get update, then make again"
	command -v "${cross}gcc" > /dev/null || die "${cross}gcc is missing" "make arch-deps"
	rm -rf "$apt" "$OUT/musl" && mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/src"
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $codename main" \
		> "$apt/sources.list"
	opts=(-q -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1)
	say "musl and busybox for $ARCH: Debian $codename's source packages, cross-built static (about two minutes)"
	apt-get "${opts[@]}" update > "$apt/log" 2>&1 ||
		die "apt-get update of $codename's sources failed (log: $apt/log)" "check the network, then make again"
	if [ "$(id -u)" = 0 ]; then	# apt downloads as its _apt user
		chown _apt "$apt/src" || die "cannot hand $apt/src to apt's _apt user" "check that user _apt exists"
	fi
	apt_source musl musl
	{ (cd "$apt/src/musl" && ./configure --target="${cross%-}" --prefix="$OUT/musl" --disable-shared \
		CROSS_COMPILE="$cross" CC="${cross}gcc${CFLAGS:+ $CFLAGS}") &&
	  make -C "$apt/src/musl" -j"$(nproc)" && make -C "$apt/src/musl" install; } >> "$apt/log" 2>&1 ||
		die "musl did not build for $ARCH (log: $apt/log)" "read the log's last lines"
	# the kernel's UAPI headers, as linux-libc-dev-$ARCH-cross has them
	local uapi
	uapi=$(dpkg -L "linux-libc-dev-$ARCH-cross" 2> /dev/null |
		awk -F/ 'NF == 5 && $4 == "include" { print $0 }' || true)
	[ -n "$uapi" ] && cp -r $uapi "$OUT/musl/include/" ||
		die "no UAPI headers from linux-libc-dev-$ARCH-cross" "make arch-deps"
	apt_source busybox bb
	# The .config as debian/rules makes it for busybox-static
	cat "$apt/src/bb/debian/config/os/linux" "$apt/src/bb/debian/config/pkg/static" > "$apt/src/bb/.config"
	# but without glibc's regex extensions (grep, vi), which musl lacks
	sed -i -e 's/^CONFIG_EXTRA_COMPAT=y/# CONFIG_EXTRA_COMPAT is not set/' \
		-e 's/^CONFIG_FEATURE_VI_REGEX_SEARCH=y/# CONFIG_FEATURE_VI_REGEX_SEARCH is not set/' \
		"$apt/src/bb/.config"
	# GCC 14 (Debian 13) makes an incompatible pointer argument an error:
	# busybox's syslogd passes a struct sockaddr_un * to getsockname(),
	# which glibc's transparent union takes and musl's prototype does not.
	local cc="${cross}gcc${CFLAGS:+ $CFLAGS} -specs $OUT/musl/lib/musl-gcc.specs"
	cc="$cc -Wno-error=incompatible-pointer-types"
	{ { yes "" || true; } | make -C "$apt/src/bb" CROSS_COMPILE="$cross" CC="$cc" silentoldconfig &&
	  make -C "$apt/src/bb" -j"$(nproc)" CROSS_COMPILE="$cross" CC="$cc" busybox; } >> "$apt/log" 2>&1 ||
		die "busybox did not build for $ARCH (log: $apt/log)" "read the log's last lines"
	mkdir -p "$OUT"
	cp "$apt/src/bb/busybox" "$OUT/busybox.tmp"
	mv "$OUT/busybox.tmp" "$OUT/busybox"
	printf '%s\n' "$key" > "$OUT/busybox.cflags"
	rm -rf "$apt/src"
	say "musl and busybox for $ARCH: $(file -b "$OUT/busybox" | cut -d, -f1-2), built in $((SECONDS - t0)) s"
}

if [ "$LIBC" = musl ]; then
	from_source "$CROSS"
	exit 0
fi
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
rm -rf "$OUT/musl" "$OUT/apt"	# a musl build's, when the machine's libc was musl
cp "$tmp/x/bin/busybox" "$OUT/busybox.tmp"
mv "$OUT/busybox.tmp" "$OUT/busybox"
printf '%s\n' "$key" > "$OUT/busybox.cflags"
say "busybox for $ARCH: $(file -b "$OUT/busybox" | cut -d, -f1-2)"
