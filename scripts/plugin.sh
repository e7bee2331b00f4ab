#!/bin/bash
# The GCC plugin a machine's code is compiled with (machines.mk: plugin,
# plugin_gcc), as a flag on stdout: -fplugin=TOOLS/PLUGIN.so, built first
# when it is missing or older than scripts/PLUGIN.cc. Nothing when the
# machine names no plugin, or when its cross compiler's major version is
# not one of plugin_gcc (empty: every version): sh4's works around a bug of
# GCC 12 that GCC 13 fixed (scripts/sh-treg-combine-off.cc).
# Decided when make runs the recipe, after make arch-deps installed the
# compiler, so a new machine never builds without the plugin it needs.
# usage: plugin.sh MACHINE TOOLS
. "$(dirname "$0")/lib.sh"
set -euo pipefail
[ $# = 2 ] || die "usage: plugin.sh MACHINE TOOLS" "the Makefile runs it for a machine with a plugin"
MACHINE=$1 TOOLS=$2
PLUGIN=$(conf "$MACHINE" plugin) && FOR=$(conf "$MACHINE" plugin_gcc) &&
	CROSS=$(conf "$MACHINE" cross) || exit 2
[ -n "$PLUGIN" ] || exit 0
command -v "${CROSS}gcc" > /dev/null || die "${CROSS}gcc is missing" "make arch-deps"
major=$("${CROSS}gcc" -dumpversion)
major=${major%%.*}
if [ -n "$FOR" ]; then
	case " $FOR " in
	*" $major "*) ;;
	*) exit 0 ;;
	esac
fi
src=$MMLAB_SCRIPTS/$PLUGIN.cc so=$TOOLS/$PLUGIN.so
if [ ! -f "$so" ] || [ "$src" -nt "$so" ]; then
	inc=$("${CROSS}gcc" -print-file-name=plugin)/include
	[ -f "$inc/gcc-plugin.h" ] || die "no GCC plugin headers for ${CROSS}gcc $major ($inc)" \
		"make arch-deps (it installs $MACHINE's packages: gcc-$major-plugin-dev-${CROSS%-})"
	mkdir -p "$TOOLS"
	g++ -shared -fPIC -fno-rtti -O2 -Wall -I"$inc" -o "$so.tmp" "$src" >&2
	mv "$so.tmp" "$so"
	say "$PLUGIN.so built for ${CROSS}gcc $major" >&2
fi
echo "-fplugin=$so"
