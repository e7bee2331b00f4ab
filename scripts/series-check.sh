#!/bin/bash
# Upstream-quality checks of the quilt series, in a scratch copy of the
# pristine tree (build/check/), never in build/src:
#   1. scripts/checkpatch.pl --strict on every patch;
#   2. the series as mail: one author and Signed-off-by, and git am of
#      every patch onto the pristine tree;
#   3. every prefix of the series builds (UML, uml-config): bisectable;
#   4. zero cost, byte for byte: with the series' debug options off, every
#      object file of the whole series equals the same object built with
#      only the patches before the "zero-cost" marker in patches/series
#      (the fixes and the functional changes),
#      on UML (uml-config) and on x86_64 with THP (qemu-config): code
#      (objdump -d -r), every allocated section's bytes, relocations and
#      symbols; debug info is left out. A difference is reported with the
#      object and the first differing lines.
# usage: series-check.sh KSRC GITDIR PATCHES CHECKDIR FRAGMENT X86_FRAGMENT
# PREFIXES=0 skips step 3 (the zero-cost check alone, after a full run);
# PREFIXES=NNNN builds the prefixes from patch NNNN on (those before it
# applied, not built: after a full run, when only the series' tail changed).
. "$(dirname "$0")/lib.sh"
set -euo pipefail
KSRC=$1 GITDIR=$2 PATCHES=$3 CHECK=$4 FRAGMENT=$5 X86_FRAGMENT=$6
S=$(dirname "$0")
AUTHOR='mmlab <mmlab@localhost>'
MARKER='# zero-cost-from-here'
JOBS=${JOBS:-$(nproc)}
CC="gcc"
command -v ccache > /dev/null && CC="ccache gcc"
# Share the cache with build/src: paths relative to build/, cwd not hashed.
export CCACHE_BASEDIR=$(dirname "$CHECK") CCACHE_NOHASHDIR=1
export QUILT_PATCHES=patches QUILT_PC=.pc
quilt() { command quilt --quiltrc - "$@"; }

mapfile -t patches < <(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" | awk '{print $1}')
[ ${#patches[@]} -gt 0 ] || die "the series is empty"
zero_from=$(awk -v m="$MARKER" '$0 == m {found=1; next} found && !/^#/ && NF {print $1; exit}' "$PATCHES/series")
[ -n "$zero_from" ] || die "no '$MARKER' line in $PATCHES/series" \
	"put it above the first patch whose code must vanish when its option is off"
first_built=${PREFIXES:-1}
case $first_built in
0 | 1) ;;
*) printf '%s\n' "${patches[@]}" | grep -q "^$first_built" ||
	die "PREFIXES=$first_built names no patch of $PATCHES/series" \
		"give the number of a patch (PREFIXES=0026), 0 to skip the prefix builds, or leave it unset for all" ;;
esac
fails=0

say "1/4 checkpatch --strict on ${#patches[@]} patches"
# The tree is Debian's tarball, without upstream history: the commit ids
# the changelogs cite cannot be looked up here (UNKNOWN_COMMIT_ID).
for p in "${patches[@]}"; do
	if out=$(cd "$KSRC" && perl scripts/checkpatch.pl --strict -q --ignore UNKNOWN_COMMIT_ID \
		"$PATCHES/$p" 2>&1); then
		echo "  ok   $p"
	else
		echo "  FAIL $p"; echo "$out" | sed 's/^/       /'; fails=$((fails + 1))
	fi
done

say "2/4 the series as mail: author and Signed-off-by '$AUTHOR', git am onto pristine"
for p in "${patches[@]}"; do
	from=$(sed -n '1,/^$/s/^From: //p' "$PATCHES/$p")
	if [ "$from" != "$AUTHOR" ] || ! grep -qxF "Signed-off-by: $AUTHOR" "$PATCHES/$p"; then
		echo "  FAIL $p: From '$from', needs From and Signed-off-by '$AUTHOR'"
		fails=$((fails + 1))
	fi
done
am=$CHECK/am
if [ ! -d "$am/.git" ]; then
	step "cloning the pristine tree into $am for git am" bash -c \
		"git clone -q --shared --no-checkout '$GITDIR' '$am' && git -C '$am' checkout -q pristine"
fi
git -C "$am" am --abort > /dev/null 2>&1 || true
git -C "$am" checkout -q -f --detach pristine && git -C "$am" clean -fdxq
amok=0
for p in "${patches[@]}"; do
	if git -C "$am" -c user.name=mmlab -c user.email=mmlab@localhost am -q "$PATCHES/$p" \
		> "$CHECK/am.log" 2>&1; then
		amok=$((amok + 1))
	else
		echo "  FAIL git am $p:"; sed 's/^/       /' "$CHECK/am.log" | head -10
		git -C "$am" am --abort > /dev/null 2>&1 || true
		fails=$((fails + 1)); break
	fi
done
[ "$amok" = ${#patches[@]} ] && echo "  ok   git am applied all $amok patches; top: $(git -C "$am" log -1 --format=%s)"

src=$CHECK/src
scratch_tree "$GITDIR" "$src" "$PATCHES"
cd "$src"
quilt pop -a -q > /dev/null 2>&1 || true

# Options the series adds: everything in a fragment that stock lacks;
# off_fragment FRAGMENT OUT writes FRAGMENT with those turned off.
off_fragment() {
	local o opts
	opts=$(sed -n 's/^\(CONFIG_[A-Z0-9_]*\)=.*/\1/p' "$1" | while read -r o; do
		grep -rqsE "^[[:space:]]*(menu)?config ${o#CONFIG_}\$" --include='Kconfig*' . || echo "$o"; done)
	if [ -n "$opts" ]; then
		grep -v -F -f <(echo "$opts") "$1" > "$2" || true
	else
		cp "$1" "$2"
	fi
	for o in $opts; do echo "# $o is not set" >> "$2"; done
	echo $opts
}
off=$CHECK/options-off.config x86_off=$CHECK/x86-options-off.config
say "the series' own options (off for the zero-cost check): $(off_fragment "$FRAGMENT" "$off")"
say "on x86: $(off_fragment "$X86_FRAGMENT" "$x86_off")"

# the uml and x86 machines' arch and base config (machines.mk)
uml_arch=$(conf uml arch) uml_base=$(conf uml base) x86_arch=$(conf x86 arch) x86_base=$(conf x86 base)
build() {	# build NAME FRAGMENT: UML in $CHECK/uml
	local t0=$(date +%s) log=$CHECK/build-$1.log
	make -s O="$CHECK/uml" ARCH="$uml_arch" $uml_base > "$log" 2>&1 &&
	ARCH=$uml_arch scripts/kconfig/merge_config.sh -m -O "$CHECK/uml" "$CHECK/uml/.config" "$2" >> "$log" 2>&1 &&
	make -s O="$CHECK/uml" ARCH="$uml_arch" olddefconfig >> "$log" 2>&1 &&
	make -s O="$CHECK/uml" ARCH="$uml_arch" CC="$CC" -j"$JOBS" vmlinux >> "$log" 2>&1
	local rc=$?
	echo "  $([ $rc = 0 ] && echo ok || echo FAIL)   $1 ($(( $(date +%s) - t0 ))s, log $log)"
	return $rc
}

if [ "$first_built" = 0 ]; then
	say "3/4 skipped (PREFIXES=0): not checking that every prefix builds"
	quilt push -a -q > "$CHECK/push.log" 2>&1 || { cat "$CHECK/push.log"; die "the series does not apply"; }
else
	say "3/4 every prefix of the series builds (UML, $(basename "$FRAGMENT") with what exists so far)"
	building=$([ "$first_built" = 1 ] && echo yes || echo no)
	for p in "${patches[@]}"; do
		case $p in "$first_built"*) building=yes ;; esac
		quilt push -q "$p" > "$CHECK/push.log" 2>&1 || { cat "$CHECK/push.log"; die "$p does not apply"; }
		if [ $building = yes ]; then
			build "$p" "$FRAGMENT" || fails=$((fails + 1))
		else
			echo "  applied $p (not built: PREFIXES=$first_built)"
		fi
	done
fi

# The zero-cost builds: reproducible (fixed timestamp, version, user and
# host), each arch in its own O= directory, so that the builds before and
# after differ only where the code does. A patch that adds lines moves
# every line below them, and __LINE__ is code and data (WARN/BUG sites,
# lock class names, initcall names): each __LINE__ becomes __COUNTER__,
# the number of its use in the file (scripts/line-as-counter.h, forced into
# every C file). That stays unique (the kernel pastes __LINE__ into names,
# so -D__LINE__=0 does not build; -D__LINE__=... is an error under x86's
# -Werror) and is the same before and after unless the code the compiler
# sees changed.
export KBUILD_BUILD_TIMESTAMP='Thu Jan  1 00:00:00 UTC 2026' KBUILD_BUILD_VERSION=1 \
	KBUILD_BUILD_USER=mmlab KBUILD_BUILD_HOST=mmlab \
	KCFLAGS="-include $(cd "$(dirname "$0")" && pwd)/line-as-counter.h"
zbuild() {	# zbuild NAME ARCH "BASE" FRAGMENT
	local t0=$(date +%s) o=$CHECK/zc-$2 log=$CHECK/build-zc-$2-$1.log rc
	{ "$S/config.sh" "$PWD" "$o" "$2" "$3" "$4" &&
	  make -s O="$o" ARCH="$2" CC="$CC" -j"$JOBS" vmlinux; } > "$log" 2>&1
	rc=$?
	echo "  $([ $rc = 0 ] && echo ok || echo FAIL)   $2 $1 ($(( $(date +%s) - t0 ))s, log $log)"
	return $rc
}
# dump_objects O OUT: a text dump of every object file of the kernel in O:
# section names and sizes, code with relocations, the bytes of every
# allocated section, relocations and the sorted symbol table; no debug
# info. Host tools (scripts/) and the linked vmlinux.o/kallsyms are not
# kernel objects of their own.
dump_one() {
	local secs
	secs=$(objdump -h "$1" | awk '$1 ~ /^[0-9]+$/ && $2 !~ /^\.(debug|comment|note\.GNU-stack)/ {printf " -j %s", $2}')
	objdump -h "$1" | awk '$1 ~ /^[0-9]+$/ && $2 !~ /^\.(debug|comment)/ {print $2, $3}'
	objdump -d -r "$1" | tail -n +3
	[ -n "$secs" ] && objdump -s $secs "$1" | tail -n +3
	# relocations, without the records of the debug sections (they follow
	# the debug info, which moves with every line)
	objdump -r "$1" | tail -n +3 |
		awk '/^RELOCATION RECORDS FOR \[/ {skip = $0 ~ /\.debug|\.comment/} !skip'
	objdump -t "$1" | tail -n +5 | grep -v -e '\.debug' | sort
}
export -f dump_one
dump_objects() {
	rm -rf "$2" && mkdir -p "$2"
	(cd "$1" && find . -name '*.o' ! -path './scripts/*' ! -path './tools/*' ! -name 'vmlinux.o' \
		! -name '.tmp_*' ! -name '*.mod.o' -print0 | sort -z |
		xargs -0 -P"$JOBS" -n 64 bash -c 'for f; do mkdir -p "$0/${f%/*}"; dump_one "$f" > "$0/$f.dump"; done' "$2")
}
# compare NAME BASE OFF: report every object that differs
compare() {
	local n diffs f
	n=$(find "$2" -name '*.dump' | wc -l)
	diffs=$(diff -rq "$2" "$3" | sed -e "s|^Files $2/\(.*\)\.dump and .*|\1|" -e "s|^Only in $2/*|only before: |" \
		-e "s|^Only in $3/*|only after: |")
	# The kernel embeds its .config: UML as text (arch/um/kernel/config.c),
	# IKCONFIG gzipped (kernel/configs.c); the new "is not set" lines
	# change it, and that is all they may change.
	local allowed=$'arch/um/kernel/config.o\nkernel/configs.o' f bad
	bad=$(echo "$diffs" | grep -v -x -F "$allowed" | grep . || true)
	for f in $allowed; do
		echo "$diffs" | grep -qxF "$f" && echo "       ($f differs: the embedded .config, not code)"
	done
	if [ -z "$bad" ]; then
		echo "  ok   $1: $n objects, 0 bytes differ with the series' options off"
		return 0
	fi
	echo "  FAIL $1: $(echo "$bad" | wc -l) of $n objects differ with the options off:"
	for f in $bad; do
		echo "       $f"
		[ -f "$2/$f.dump" ] && [ -f "$3/$f.dump" ] &&
			diff -u "$2/$f.dump" "$3/$f.dump" | sed -n '3,$p' | grep '^[-+]' | head -8 | sed 's/^/         /'
	done
	return 1
}

say "4/4 zero cost, byte for byte: the patches before $zero_from vs the whole series, options off"
quilt pop -q "$(grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" | awk '{print $1}' |
	grep -B1 -xF "$zero_from" | head -1)" > "$CHECK/push.log" 2>&1 ||
	{ cat "$CHECK/push.log"; die "cannot pop back to before $zero_from"; }
ok_before=1
zbuild "before-$zero_from" "$uml_arch" "$uml_base" "$off" && dump_objects "$CHECK/zc-$uml_arch" "$CHECK/dump-um-before" || ok_before=0
zbuild "before-$zero_from" "$x86_arch" "$x86_base" "$x86_off" &&
	dump_objects "$CHECK/zc-$x86_arch" "$CHECK/dump-x86_64-before" || ok_before=0
quilt push -a -q > "$CHECK/push.log" 2>&1 || { cat "$CHECK/push.log"; die "the series does not apply"; }
if [ $ok_before = 1 ] &&
   zbuild all-options-off "$uml_arch" "$uml_base" "$off" && dump_objects "$CHECK/zc-$uml_arch" "$CHECK/dump-um-after" &&
   zbuild all-options-off "$x86_arch" "$x86_base" "$x86_off" &&
   dump_objects "$CHECK/zc-$x86_arch" "$CHECK/dump-x86_64-after"; then
	compare "UML" "$CHECK/dump-um-before" "$CHECK/dump-um-after" || fails=$((fails + 1))
	compare "x86_64 (THP)" "$CHECK/dump-x86_64-before" "$CHECK/dump-x86_64-after" || fails=$((fails + 1))
else
	fails=$((fails + 1))
fi
quilt pop -a -q > /dev/null 2>&1 || true

if [ $fails -gt 0 ]; then
	say "series-check: $fails problem(s)"
	exit 1
fi
if [ "$first_built" = 0 ]; then
	prefixes="prefixes not built (PREFIXES=0)"
elif [ "$first_built" != 1 ]; then
	prefixes="every prefix from $first_built on builds (the earlier ones not built)"
else
	prefixes="every prefix builds"
fi
say "series-check: checkpatch-clean, git am applies, $prefixes, 0 bytes differ when off (UML, x86_64)"
