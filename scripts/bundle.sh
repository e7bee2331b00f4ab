#!/bin/bash
# make bundle [RUN=name]: one tarball that reproduces a run elsewhere.
#
# RUN is a run boot.py recorded in build/logs (NAME.run): by default the
# last one that failed, else the last one. The bundle holds its kernel
# (and the vmlinux with symbols), .config, the UML rootfs image or the
# initramfs, the series, the exact command line it booted with, its SEED if
# it was a soak, its console log, KTAP, JSON, JUnit and the decoded log of
# a splat, and a README with the commands that replay it. The run's
# machine (its record's "machine"; a record from before: the NAME of the
# build/NAME/ its kernel came from) says where the image and its .config
# are (machines.mk); the tree's package is trees.mk's.
# usage: bundle.sh ROOT LOGDIR OUTDIR
. "$(dirname "$0")/lib.sh"
set -euo pipefail
ROOT=$1 LOGS=$2 OUT=$3
RUN=${RUN:-}

if [ -z "$RUN" ]; then
	runs=$(ls -t "$LOGS"/*.run 2>/dev/null | grep -v -e '/mutate' -e '/bisect' || true)
	[ -n "$runs" ] || die "no recorded run in $LOGS" "make test-uml (or any guest run) first"
	# runs boot.py made (lava-check's has no kernel or command line of its own)
	runs=$(for r in $runs; do
		/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not r.get("command"))' "$r" &&
			echo "$r"; done)
	[ -n "$runs" ] || die "no run booted by boot.py in $LOGS" "make test-uml (or any guest run) first"
	for r in $runs; do
		if /usr/bin/python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["rc"] == 0)' "$r"; then
			RUN=$(basename "$r" .run)
			break
		fi
	done
	RUN=${RUN:-$(basename "$(echo "$runs" | head -1)" .run)}
fi
rec=$LOGS/$RUN.run
[ -f "$rec" ] || die "no run $RUN in $LOGS" "RUN= one of: $(ls "$LOGS"/*.run | xargs -n1 basename | sed 's/\.run$//' | paste -sd' ')"
field() { /usr/bin/python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print("" if v is None else v)' "$rec" "$1"; }
target=$(field target) kernel=$(field kernel) cmd=$(field command) log=$(field log) rc=$(field rc)
[ -n "$cmd" ] || die "$RUN was not booted by boot.py: no kernel or command line to bundle" \
	"RUN= a run of make test-uml, qemu-verify, soak, ..."
[ -f "$kernel" ] || die "the kernel of $RUN ($kernel) is gone" "rebuild it and rerun, then make bundle"
machine=$(field machine)
if [ -z "$machine" ]; then	# recorded before runs named their machine
	machine=${kernel#"$ROOT"/build/}
	machine=${machine%%/*}
fi
kimage=$(conf "$machine" image 2> /dev/null) ||
	die "$RUN ran a kernel of no machine of machines.mk ($kernel)" \
		"RUN= a run of a machine's kernel in build/KVER/NAME (make test-uml, qemu-verify-arm64, ...)"
# The machine's O= directory: its kernel is the image there.
o=${kernel%/"$kimage"}
[ "$o" != "$kernel" ] || die "the kernel of $RUN ($kernel) is not $machine's $kimage" \
	"RUN= a run of $machine's own kernel (build/KVER/$machine/$kimage)"
[ -f "$o/.config" ] || die "no .config beside the kernel of $RUN ($o)" "make $machine, rerun, then make bundle"
# The tree the run's kernel was built from (runs record it; older ones are
# of the tree in use).
t=$(field tree)
export MMLAB_TREE=${t:-$MMLAB_TREE}
pkg=$(tree_conf package)
series=$ROOT/$(tree_conf series)
patches=$(dirname "$series")
# The kernel, image and .config are what build/ holds now: built from
# another .config or series than the run's, they would not replay it.
want=$(field config_sha256)/$(field patchset_hash)
have=$(sha256sum < "$o/.config" | cut -d' ' -f1)/$(PYTHONPATH=$MMLAB_SCRIPTS /usr/bin/python3 -c 'import sys
from mmlab.series import patchset_hash
print(patchset_hash(sys.argv[1], sys.argv[2]))' "$patches" "$series")
[ "$want" = / ] || [ "$want" = "$have" ] ||
	die "$RUN ran a kernel built from another .config or series than $o has now" \
		"rerun the failing target, then make bundle"

stamp=$(date +%Y%m%d-%H%M%S)
name=mmlab-$RUN-$stamp
dir=$OUT/$name
rm -rf "$dir" && mkdir -p "$dir/kernel" "$dir/logs"
t0=$(date +%s)
say "bundle: $RUN ($machine, exit $rc) -> $OUT/$name.tar.gz"
if [ "$target" = uml ]; then
	cp "$kernel" "$dir/kernel/linux"
	image=$(echo "$cmd" | grep -o 'ubd0r=[^ ]*' | cut -d= -f2)
	cp --sparse=always "$image" "$dir/rootfs.img"
	replay=$(echo "$cmd" | sed -e "s|^[^ ]*|./kernel/linux|" -e "s|ubd0r=[^ ]*|ubd0r=rootfs.img|")
	debug="gdb --args $replay   (the UML kernel carries its own symbols)"
else
	kname=$(basename "$kimage")	# bzImage, Image, zImage
	cp "$kernel" "$dir/kernel/$kname"
	[ -f "$o/vmlinux" ] && cp "$o/vmlinux" "$dir/kernel/vmlinux"
	initrd=$(echo "$cmd" | grep -o -- '-initrd [^ ]*' | cut -d' ' -f2)
	cp "$initrd" "$dir/initramfs.cpio"
	replay=$(echo "$cmd" | sed -e "s|-kernel [^ ]*|-kernel kernel/$kname|" \
		-e "s|-initrd [^ ]*|-initrd initramfs.cpio|")
	debug="add -s -S to the command above, then: gdb kernel/vmlinux -ex 'target remote :1234'"
fi
cp "$o/.config" "$dir/kernel/config"
cp -r "$patches" "$dir/patches"
for f in "$log" "$LOGS/$RUN".{ktap,json,junit.xml,summary,run,decoded.log}; do
	[ -f "$f" ] && cp "$f" "$dir/logs/"
done
seed=$(grep -o 'seed [0-9]*' "$log" 2>/dev/null | head -1 | cut -d' ' -f2 || true)
# what the README's replay and rebuild need: QEMU's package (the machine's
# packages name it), kbuild's ARCH (x86_64 is the host's) and CROSS_COMPILE
qemu_pkg=$(conf "$machine" packages | tr ' ' '\n' | grep -m1 '^qemu-system-' || true)
qemu_pkg=${qemu_pkg:-$(conf "$machine" qemu)}
arch=$(conf "$machine" arch) cross=$(conf "$machine" cross)
make_args=$( [ "$arch" = x86_64 ] || echo "ARCH=$arch" )${cross:+ CROSS_COMPILE=$cross}
echo "$cmd" > "$dir/command-line"
[ -n "$seed" ] && echo "$seed" > "$dir/SEED"
cat > "$dir/README" <<EOF
mmlab bundle: run $RUN of $(date -u -d @"$t0" +%Y-%m-%dT%H:%MZ), exit $rc
(0 pass, 1 test failure, 2 setup, 3 kernel splat, 124 timeout)
$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("what happened: " + r["why"]) if r.get("why") else None' "$rec")

Kernel: Linux $(sed -n 's/^# Linux\/[^ ]* \([^ ]*\) Kernel Configuration$/\1/p' "$dir/kernel/config") ($target, machine $machine),
the Debian $pkg tree with patches/series applied; its
.config is kernel/config.
${seed:+Soak seed: $seed (SEED; make soak SEED=$seed replays the fuzzing in a checkout).}

Replay (from this directory; needs $( [ "$target" = uml ] && echo "nothing but this x86_64 host" || echo "$qemu_pkg"))
  $replay

The exact command line of the run: command-line. Its console log and
results: logs/ (the .ktap, the kunit.py .json, JUnit, and for a splat
the decoded log made with the tree's scripts/decode_stacktrace.sh).
Debug: $debug
Rebuild the kernel: unpack $pkg, quilt push -a the patches/,
cp kernel/config .config, make olddefconfig $make_args.
EOF
tar -C "$OUT" -czf "$OUT/$name.tar.gz" "$name"
rm -rf "$dir"
say "bundle: $OUT/$name.tar.gz, $(du -h "$OUT/$name.tar.gz" | cut -f1), in $(( $(date +%s) - t0 ))s"
