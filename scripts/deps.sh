#!/bin/bash
# Install the Debian packages mmlab needs. Quiet when all are present; when
# not root and something is missing, print the apt-get line and exit 2.
. "$(dirname "$0")/lib.sh"

# usage: deps.sh [LIST|PACKAGE]...   (LIST: a file of package names, a path
# with a /; PACKAGE: a package's name; any mix; none: scripts/packages)
# make deps: deps.sh scripts/packages linux-source-6.1 (trees.mk's package);
# make arch-deps: deps.sh with the packages of machines.mk's cross machines.
missing=$(missing_packages "$@") || exit 2
[ -z "$missing" ] && exit 0
missing=" $missing"

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
