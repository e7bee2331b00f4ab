#!/bin/sh
# The kernel builds' CC when ccache is installed: ccache COMPILER ARGS...,
# in ccache's depend mode where its key is complete, in its default mode
# elsewhere.
# Depend mode keys an object on the source, the compiler's flags and the
# headers kbuild's -MMD file names, and saves the extra preprocessor run
# a miss costs in the default mode (UML's fs/, cold: 57-66 s instead of
# 76-94 s). Its key misses two things, so those compiles use the default
# mode:
# - a file pulled in by .incbin (arm's piggy.S holds the compressed
#   kernel; x86's generated piggy.S, vdso wrappers): the default mode sees
#   the directive and does not cache the object;
# - system headers, which -MMD leaves out: any compile without -nostdinc
#   (UML's host-side files).
# usage: kcc.sh COMPILER ARGS...   (CCACHE_NODEPEND=1: never depend mode)
for src; do :; done	# the last argument: kbuild names the source last
case " $* " in
*" -nostdinc "*)
	if [ -z "${CCACHE_NODEPEND:-}" ] && ! { [ -f "$src" ] && grep -q incbin "$src"; }; then
		CCACHE_DEPEND=1 exec ccache "$@"
	fi ;;
esac
unset CCACHE_DEPEND	# set in the environment, it would still mean depend mode
exec ccache "$@"
