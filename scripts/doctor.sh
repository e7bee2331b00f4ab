#!/bin/bash
# One line per check of this machine, OK or FAIL with the fix. Exit 2 if any failed.
# The kernel tree checked for is trees.mk's, as make read it (no Python
# needed: doctor runs before make deps has installed it).
# usage: doctor.sh KSRC TARBALL VERSION TREE_PACKAGE PACKAGE...  (the tree's package,
# then the host packages beyond scripts/packages; the tree's among them unless KSRC is yours)
# environment: RELEASE (bookworm, trixie), RELEASE_TREE (trees.mk's default
# for it), TREES (trees.mk's): the release's tree is checked against apt.
. "$(dirname "$0")/lib.sh"
[ $# -ge 4 ] || die "usage: doctor.sh KSRC TARBALL VERSION PACKAGE..." "make doctor (it passes trees.mk's)"
KSRC=$1 tb=$2 ver=$3 pkg=$4
shift 4
fails=0
ok()   { printf 'OK    %s\n' "$1"; }
bad()  { printf 'FAIL  %s\n      fix: %s\n' "$1" "$2"; fails=$((fails + 1)); }
info() { printf 'INFO  %s\n' "$1"; }

pk=$(missing_packages "$MMLAB_SCRIPTS/packages" "$@")
[ -n "$pk" ] && pk=" $pk"
if [ -z "$pk" ]; then ok "packages: all installed"
else
	sudo=; [ "$(id -u)" = 0 ] || sudo="sudo "
	bad "packages missing:$pk" "make deps, or: ${sudo}apt-get install -y --no-install-recommends$pk"
fi

if [ -f "$KSRC/Makefile" ]; then
	v=$(sed -n -e 's/^VERSION = //p' -e 's/^PATCHLEVEL = //p' -e 's/^SUBLEVEL = //p' "$KSRC/Makefile" | paste -sd.)
	case $v in "$ver".*) ok "kernel tree $KSRC is $v" ;;
	*) bad "kernel tree $KSRC is $v, not $ver" "unset KSRC to use Debian's $pkg" ;; esac
elif [ -f "$tb" ]; then ok "linux-source: $tb present (make tree unpacks it)"
else bad "linux-source: $tb missing" "make deps"; fi

# The release's default tree (trees.mk) is the one its linux-source
# depends on, and each tree the project has: offered here, unpacked, built.
if [ -n "${RELEASE:-}" ]; then
	dep=$(apt-cache depends linux-source 2>/dev/null | sed -n 's/.*Depends: linux-source-//p' | head -1)
	if [ -z "$dep" ]; then info "release $RELEASE: apt has no linux-source; make uses $RELEASE_TREE"
	elif [ "$dep" = "$RELEASE_TREE" ]; then ok "release $RELEASE: linux-source is $dep, make's default tree (trees.mk)"
	else bad "release $RELEASE: linux-source depends on linux-source-$dep, trees.mk's default is $RELEASE_TREE" \
		"set $dep.default (or the tree's default) in trees.mk to name $RELEASE"; fi
	offered=" $(offered_trees) "
	root=$(dirname "$MMLAB_SCRIPTS")
	for t in ${TREES:-}; do
		case $offered in *" $t "*) o="offered" ;; *) o="not offered by $RELEASE" ;; esac
		b=$(for m in uml x86; do [ -e "$root/build/$t/$m/.config" ] && printf ' %s' "$m"; done)
		info "tree $t: $o; $([ -f "$root/build/$t/src/Makefile" ] && echo unpacked || echo "not unpacked"); built:${b:- nothing}"
	done
fi

# UML maps its physical memory from a file in $TMPDIR (or /dev/shm): it must allow exec.
tmp=${TMPDIR:-/dev/shm}
probe=$(mktemp "$tmp/mmlab-exec.XXXXXX" 2>/dev/null)
if [ -n "$probe" ] && printf '#!/bin/sh\nexit 0\n' > "$probe" && chmod +x "$probe" && "$probe"; then
	ok "TMPDIR $tmp allows exec (UML memory file)"
else
	bad "TMPDIR $tmp does not allow exec: UML cannot map its memory" \
		"export TMPDIR=/dev/shm (or another exec-capable tmpfs)"
fi
rm -f "$probe"

ps=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ "$ps" -le 1 ]; then ok "ptrace allowed (yama ptrace_scope=$ps): UML and gdb can trace"
else bad "ptrace restricted (yama ptrace_scope=$ps): UML cannot run" \
	"echo 1 | sudo tee /proc/sys/kernel/yama/ptrace_scope"; fi

if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	info "/dev/kvm opens; qemu-verify still probes whether a KVM guest really runs (TCG otherwise)"
else
	info "/dev/kvm not usable: qemu-verify will use TCG (slower, works)"
fi

avail=$(df -Pm "$(dirname "$KSRC")" 2>/dev/null | awk 'NR==2 {print $4}')
if [ -n "$avail" ] && [ "$avail" -ge 8000 ]; then ok "free disk: ${avail} MiB (>= 8 GiB needed)"
else bad "free disk: ${avail:-?} MiB, the trees and builds need about 8 GiB" "free space under $(dirname "$KSRC")"; fi

if command -v ccache > /dev/null; then ok "ccache: $(ccache -s 2>/dev/null | grep -m1 -i 'cache size' | tr -s ' ')"
else bad "ccache missing: every build is cold" "make deps"; fi

[ $fails = 0 ] || exit 2
