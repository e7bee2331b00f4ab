#!/bin/bash
# One make at a time per checkout: two builds into the same O= directories
# corrupt them. Run COMMAND holding build/.mmlab.lock; when another make
# holds it, name that make and wait for it (NOWAIT=1: stop with exit 2).
# The lock is held by flock(1) itself (-o), not inherited by COMMAND's
# children, so a stray guest process can never keep it.
# usage: lock.sh BUILD COMMAND...
. "$(dirname "$0")/lib.sh"
BUILD=$1
shift
mkdir -p "$BUILD" || die "cannot create $BUILD"
lock=$BUILD/.mmlab.lock
owner=$BUILD/.mmlab.lock.owner
command -v flock > /dev/null || die "flock is missing" "apt-get install util-linux"
if ! flock -n "$lock" true; then
	who=$(cat "$owner" 2>/dev/null)
	[ -n "$who" ] || who="unknown (see: lslocks | grep mmlab.lock)"
	[ "${NOWAIT:-0}" = 1 ] && die "another make is using $BUILD: $who" \
		"wait for it to finish, or stop it (NOWAIT=0 waits)"
	say "another make is using $BUILD: $who; waiting for it (Ctrl-C to give up)"
fi
export MMLAB_LOCKED=1
# shellcheck disable=SC2016 # expanded by the inner shell
exec flock -o "$lock" bash -c '
	echo "pid $PPID (make $MMLAB_GOALS in $PWD, since $(date +%T))" > "$0"
	exec "$@"' "$owner" "$@"
