#!/bin/bash
# Install the Debian packages mmlab needs. Quiet when all are present; when
# not root and something is missing, print the apt-get line and exit 2.
. "$(dirname "$0")/lib.sh"

# usage: deps.sh [--offered] [LIST|PACKAGE]...   (LIST: a file of package names, a path
# with a /; PACKAGE: a package's name; any mix; none: scripts/packages)
# make deps: deps.sh scripts/packages linux-source-6.1 (trees.mk's package);
# make arch-deps: deps.sh with the packages of machines.mk's cross machines.
# --offered: install those of the packages this release's apt offers, and
# name the others in one line (what needs them says it is skipped).
args=("$@")
offered=0
[ "${1:-}" = --offered ] && { offered=1; shift; }
rel=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-this release}")
# candidate PKG: does this release's apt offer PKG?
candidate() {
	local c
	c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }')
	[ -n "$c" ] && [ "$c" != "(none)" ]
}
missing=$(missing_packages "$@") || exit 2
[ -z "$missing" ] && exit 0
if [ $offered = 1 ]; then
	keep=
	for p in $missing; do
		if candidate "$p"; then keep="$keep $p"
		else say "$rel's apt offers no $p: what needs it is skipped"; fi
	done
	missing=${keep# }
	[ -z "$missing" ] && exit 0
fi
missing=" $missing"

# A kernel tree this release does not offer: apt would match its name as a
# pattern (linux-source-6.1 installing linux-source-6.12 on Debian 13).
# Say what the release offers, before installing anything.
for p in $missing; do
	case $p in linux-source-[0-9]*.[0-9]*) ;; *) continue ;; esac
	if ! candidate "$p"; then
		if [ "$(id -u)" -eq 0 ] && [ -z "${MMLAB_APT_UPDATED:-}" ]; then
			say "apt offers no $p: updating the package lists to be sure"
			apt-get update -q > /dev/null 2>&1 && MMLAB_APT_UPDATED=1 exec "$0" "${args[@]}"
		fi
		offers=$(offered_trees)
		die "$rel's apt offers no $p: it offers linux-source ${offers:-(none)}" \
			"make KVER=X.Y with one of: ${offers:-(none; check the apt sources)} that trees.mk has; unset KVER for the release's own"
	fi
done

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	die "missing Debian packages:$missing" "sudo $line"
fi
say "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $missing >/dev/null; then
	say "apt-get install failed; updating the package lists and retrying"
	# shellcheck disable=SC2086
	apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $missing >/dev/null ||
		die "apt-get could not install:$missing" "check the network/apt sources, then: $line"
fi
