#!/bin/bash
# make fresh-check: the README's opening commands, as written, on a fresh
# Debian 12 root and a fresh Debian 13 root, which is what CI cannot show
# (CI's machine keeps whatever was ever installed on it by hand). Each
# release builds the tree its own linux-source is (6.1 on 12, 6.12 on 13).
#   1. mmdebstrap --variant=apt RELEASE, plus make and git: what a user
#      has who cloned this repository;
#   2. a clone of the committed HEAD into that root, at this checkout's own
#      path (ccache keys hold absolute paths: the same path lets this
#      machine's cache serve the build);
#   3. in a chroot: `make`, then `./linux ubd0=rootfs.img` on a terminal.
# It passes when both exit 0 and the boot printed the guest's summary with
# no failure. Shared with this machine: the kernel (UML runs as a process),
# the ccache directory and apt's cache of downloaded .debs; nothing else.
# Mounts are undone and the root removed on every exit (KEEP=1 keeps it).
# FRESH_CCACHE=cold leaves this machine's ccache out: a new user's first
# build, cold. FRESH_SUITE=bookworm (or trixie) checks that release alone.
# usage: fresh-check.sh ROOT BUILD LOGS
. "$(dirname "$0")/lib.sh"
set -uo pipefail
ROOT=$1 BUILD=$2 LOGS=$3
SUITES=${FRESH_SUITE:-bookworm trixie}
for SUITE in $SUITES; do
	case $SUITE in bookworm|trixie) ;;
	*) die "FRESH_SUITE=$SUITE: the README's commands are for bookworm (Debian 12) and trixie (Debian 13)" \
		"FRESH_SUITE=bookworm or FRESH_SUITE=trixie (unset: both)" ;;
	esac
done
mkdir -p "$LOGS"

[ "$(id -u)" = 0 ] || die "fresh-check needs root (mmdebstrap, chroot and bind mounts)" \
	"sudo make fresh-check"
for c in mmdebstrap git script; do
	command -v $c > /dev/null || die "$c is missing" "make deps"
done
git -C "$ROOT" diff --quiet HEAD -- . ':!build' 2>/dev/null ||
	warn "uncommitted changes are not part of the check: it clones the committed HEAD"

# check_one: the check on a fresh root of $SUITE (run in a subshell: its
# EXIT trap undoes the mounts and removes the root); exit 0 passed.
check_one() {
	FRESH=$BUILD/fresh-$SUITE
	log=$LOGS/fresh-check-$SUITE.log
	: > "$log"
	mounted=()
	bind() {	# bind SRC DST: DST is inside the fresh root
		mkdir -p "$2" && mount --bind "$1" "$2" && mounted+=("$2")
	}
	cleanup() {
		local rc=$? p m i
		trap - EXIT INT TERM
		# Whatever still runs in the root (a UML guest, its helpers) goes first.
		for p in /proc/[0-9]*; do
			[ "$(readlink "$p/root" 2>/dev/null)" = "$FRESH" ] && kill -9 "${p#/proc/}" 2>/dev/null
		done
		for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
			m=${mounted[$i]}
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
				warn "could not unmount $m"
		done
		# Never remove a tree that still has something of the host mounted in it.
		if grep -q " $FRESH[/ ]" /proc/mounts; then
			warn "mounts remain under $FRESH; not removing it:"
			grep " $FRESH[/ ]" /proc/mounts | cut -d' ' -f2 >&2
		elif [ "${KEEP:-0}" = 1 ]; then
			say "kept the fresh root: $FRESH"
		else
			rm -rf "$FRESH"
		fi
		exit $rc
	}
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	if [ -e "$FRESH" ]; then
		grep -q " $FRESH[/ ]" /proc/mounts && die "$FRESH has mounts from an earlier run" \
			"umount -R $FRESH, then rm -rf $FRESH"
		rm -rf "$FRESH"
	fi

	t0=$(date +%s)
	say "fresh-check $SUITE: a Debian $([ "$SUITE" = trixie ] && echo 13 || echo 12) ($SUITE) root with mmdebstrap in $FRESH ..."
	mmdebstrap --variant=apt --include=make,git "$SUITE" "$FRESH" >> "$log" 2>&1 ||
		{ tail -20 "$log" >&2; die "mmdebstrap failed (log $log)" "check apt's network access"; }
	say "fresh-check $SUITE: root made in $(( $(date +%s) - t0 ))s ($(du -sm "$FRESH" | cut -f1) MiB)"

	mkdir -p "$FRESH$(dirname "$ROOT")"
	git clone -q --no-hardlinks "$ROOT" "$FRESH$ROOT" >> "$log" 2>&1 ||
		die "git clone of $ROOT failed (log $log)"
	say "fresh-check $SUITE: cloned $(git -C "$ROOT" rev-parse --short HEAD) to $ROOT inside the root"

	mount -t proc proc "$FRESH/proc" && mounted+=("$FRESH/proc")
	bind /dev "$FRESH/dev"
	bind /dev/pts "$FRESH/dev/pts"
	mount -t tmpfs tmpfs "$FRESH/dev/shm" && mounted+=("$FRESH/dev/shm")
	bind /var/cache/apt/archives "$FRESH/var/cache/apt/archives"
	cache=$(ccache -k cache_dir 2>/dev/null)
	case ${FRESH_CCACHE:-warm} in warm|cold) ;;
	*) die "FRESH_CCACHE=$FRESH_CCACHE: warm (share this machine's ccache) or cold (the root's own, empty)" \
		"make fresh-check FRESH_CCACHE=cold" ;;
	esac
	if [ "${FRESH_CCACHE:-warm}" = cold ]; then
		say "FRESH_CCACHE=cold: the build inside starts from the root's own empty ccache"
		export_cache=
	elif [ -n "$cache" ] && [ -d "$cache" ]; then
		bind "$cache" "$FRESH$cache"
		export_cache="CCACHE_DIR=$cache"
	else
		warn "no ccache directory on this machine: the build inside is cold"
		export_cache=
	fi

	# root_cmd CMD: the command line that runs CMD (a shell line) in the root,
	# in the clone, with the environment a login shell of a new machine has and
	# nothing of ours.
	root_cmd() {
		printf '%q ' env -i HOME=/root TERM="${TERM:-xterm}" LANG=C.UTF-8 $export_cache \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			chroot "$FRESH" bash -c "cd '$ROOT' && $1"
	}

	rc=0
	t1=$(date +%s)
	say "fresh-check $SUITE: \$ make   (output: $log)"
	eval "$(root_cmd make)" 2>&1 | tee -a "$log" | grep --line-buffered -E '^mmlab: ([^ ]+ kernel built|error|  fix|building|rootfs|installing|.*: [0-9]+ steps)|passed, .* failed' |
		sed -u 's/^/  | /'
	mrc=${PIPESTATUS[0]}
	say "fresh-check $SUITE: make exited $mrc after $(( $(date +%s) - t1 ))s"
	[ "$mrc" = 0 ] || rc=1

	if [ $rc = 0 ]; then
		t2=$(date +%s)
		blog=$LOGS/fresh-boot-$SUITE.log
		say "fresh-check $SUITE: \$ ./linux ubd0=rootfs.img   (on a terminal; output: $blog)"
		# script(1) gives UML the terminal a user's shell has; stdin stays empty.
		SHELL=/bin/bash timeout 600 script -qefc "$(root_cmd './linux ubd0=rootfs.img')" \
			"$blog" < /dev/null > /dev/null 2>&1
		brc=$?
		tr -d '\r' < "$blog" >> "$log"
		sum=$(tr -d '\r' < "$blog" | grep -m1 -E '^mmlab: [0-9]+ passed, [0-9]+ failed')
		say "fresh-check $SUITE: ./linux exited $brc after $(( $(date +%s) - t2 ))s: ${sum:-no summary}"
		if [ "$brc" != 0 ] || [ -z "$sum" ] || ! echo "$sum" | grep -q ' 0 failed'; then
			rc=1
			tr -d '\r' < "$blog" | grep -E '^not ok|panic|BUG' | head -20 >&2
		fi
	fi
	echo "fresh-check $SUITE: $([ $rc = 0 ] && echo passed || echo FAILED) in $(elapsed)" >> "$log"
	say "fresh-check $SUITE $([ $rc = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - t0 ))s (log: $log)"
	exit $rc
}

passed=0 failed=0 worst=0
T0=$(date +%s)
for SUITE in $SUITES; do
	( check_one )
	r=$?
	if [ $r = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); [ $worst = 0 ] && worst=$r; fi
	[ $r = 130 ] || [ $r = 143 ] && break
done
say "fresh-check: $passed of $(echo $SUITES | wc -w) releases passed in $(( $(date +%s) - T0 ))s"
# For make test's sum: each release is one test.
finish "$LOGS" fresh-check $passed $failed 0 $worst
