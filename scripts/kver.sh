#!/bin/bash
# The error make gives for a tree it cannot use, before it installs or
# unpacks anything: one line naming the trees the project has and those this
# release's apt offers, and the fix. Exit 2.
# usage: kver.sh unknown|ksrc|nokernel KVER KSRC KSRC_VERSION RELEASE TREE...
. "$(dirname "$0")/lib.sh"
why=$1 kver=$2 ksrc=$3 ksrc_ver=$4 rel=${5:-this release}
shift 5
have="$*"
offers=$(offered_trees)
offers="${rel}'s apt offers linux-source ${offers:-(none: no apt, or apt-get update first)}"
case $why in
unknown) [ -n "$ksrc" ] && [ "$kver" = "$ksrc_ver" ] &&
		die "KSRC=$ksrc is Linux ${ksrc_ver:-?}: the project has series for Linux ${have// /, } only; $offers" \
			"point KSRC at a ${have// / or } tree, or unset KSRC for Debian's"
	die "KVER=$kver: the project has series for Linux ${have// /, } only (trees.mk); $offers" \
		"KVER= one of: $have (unset: the release's own)" ;;
nokernel) die "KSRC=$ksrc is not a kernel tree (no Makefile with VERSION and PATCHLEVEL)" \
		"point KSRC at an unpacked Linux ${have// / or } source tree, or unset it for Debian's" ;;
ksrc)	die "KVER=$kver but KSRC=$ksrc is Linux ${ksrc_ver:-? (no Makefile)}" \
		"drop KVER= (KSRC's version picks the tree), or point KSRC at a $kver tree" ;;
*)	die "kver.sh: unknown check '$why'" "unknown or ksrc" ;;
esac
