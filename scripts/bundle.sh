#!/bin/bash
# make bundle [RUN=name]: one tarball that reproduces a run elsewhere.
#
# RUN is a run boot.py recorded in build/logs (NAME.run): by default the
# last one that failed, else the last one. The bundle holds its kernel
# (and the vmlinux with symbols), .config, the UML rootfs image or the
# initramfs, the series, the exact command line it booted with, its SEED if
# it was a soak, its console log, KTAP, JSON, JUnit and the decoded log of
# a splat, and a README with the commands that replay it.
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
		python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not r.get("command"))' "$r" &&
			echo "$r"; done)
	[ -n "$runs" ] || die "no run booted by boot.py in $LOGS" "make test-uml (or any guest run) first"
	for r in $runs; do
		if python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["rc"] == 0)' "$r"; then
			RUN=$(basename "$r" .run)
			break
		fi
	done
	RUN=${RUN:-$(basename "$(echo "$runs" | head -1)" .run)}
fi
rec=$LOGS/$RUN.run
[ -f "$rec" ] || die "no run $RUN in $LOGS" "RUN= one of: $(ls "$LOGS"/*.run | xargs -n1 basename | sed 's/\.run$//' | paste -sd' ')"
field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print("" if v is None else v)' "$rec" "$1"; }
target=$(field target) kernel=$(field kernel) cmd=$(field command) log=$(field log) rc=$(field rc)
[ -n "$cmd" ] || die "$RUN was not booted by boot.py: no kernel or command line to bundle" \
	"RUN= a run of make test-uml, qemu-verify, soak, ..."
[ -f "$kernel" ] || die "the kernel of $RUN ($kernel) is gone" "rebuild it and rerun, then make bundle"
# The kernel, image and .config are what build/ holds now: built from
# another .config or series than the run's, they would not replay it.
if [ "$target" = uml ]; then o=$(dirname "$kernel"); else o=${kernel%/arch/x86/boot/bzImage}; fi
want=$(field config_sha256)/$(field patchset_hash)
have=$(sha256sum < "$o/.config" | cut -d' ' -f1)/$(python3 -c 'import sys
sys.path.insert(0, sys.argv[1])
from results import patchset_hash
print(patchset_hash(sys.argv[2]))' "$ROOT/scripts" "$ROOT/patches")
[ "$want" = / ] || [ "$want" = "$have" ] ||
	die "$RUN ran a kernel built from another .config or series than $o has now" \
		"rerun the failing target, then make bundle"

stamp=$(date +%Y%m%d-%H%M%S)
name=mmlab-$RUN-$stamp
dir=$OUT/$name
rm -rf "$dir" && mkdir -p "$dir/kernel" "$dir/logs"
t0=$(date +%s)
say "bundle: $RUN ($target, exit $rc) -> $OUT/$name.tar.gz"
if [ "$target" = uml ]; then
	cp "$kernel" "$dir/kernel/linux"
	image=$(echo "$cmd" | grep -o 'ubd0r=[^ ]*' | cut -d= -f2)
	cp --sparse=always "$image" "$dir/rootfs.img"
	replay=$(echo "$cmd" | sed -e "s|^[^ ]*|./kernel/linux|" -e "s|ubd0r=[^ ]*|ubd0r=rootfs.img|")
	debug="gdb --args $replay   (the UML kernel carries its own symbols)"
else
	cp "$kernel" "$dir/kernel/bzImage"
	[ -f "$o/vmlinux" ] && cp "$o/vmlinux" "$dir/kernel/vmlinux"
	initrd=$(echo "$cmd" | grep -o -- '-initrd [^ ]*' | cut -d' ' -f2)
	cp "$initrd" "$dir/initramfs.cpio"
	replay=$(echo "$cmd" | sed -e "s|-kernel [^ ]*|-kernel kernel/bzImage|" \
		-e "s|-initrd [^ ]*|-initrd initramfs.cpio|")
	debug="add -s -S to the command above, then: gdb kernel/vmlinux -ex 'target remote :1234'"
fi
cp "$o/.config" "$dir/kernel/config"
cp -r "$ROOT/patches" "$dir/patches"
for f in "$log" "$LOGS/$RUN".{ktap,json,junit.xml,summary,run,decoded.log}; do
	[ -f "$f" ] && cp "$f" "$dir/logs/"
done
seed=$(grep -o 'seed [0-9]*' "$log" 2>/dev/null | head -1 | cut -d' ' -f2 || true)
echo "$cmd" > "$dir/command-line"
[ -n "$seed" ] && echo "$seed" > "$dir/SEED"
cat > "$dir/README" <<EOF
mmlab bundle: run $RUN of $(date -u -d @"$t0" +%Y-%m-%dT%H:%MZ), exit $rc
(0 pass, 1 test failure, 2 setup, 3 kernel splat, 124 timeout)
$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("what happened: " + r["why"]) if r.get("why") else None' "$rec")

Kernel: Linux $(sed -n 's/^# Linux\/[^ ]* \([^ ]*\) Kernel Configuration$/\1/p' "$dir/kernel/config") ($target),
the Debian linux-source-6.1 tree with patches/series applied; its
.config is kernel/config.
${seed:+Soak seed: $seed (SEED; make soak SEED=$seed replays the fuzzing in a checkout).}

Replay (from this directory; needs $( [ "$target" = uml ] && echo "nothing but this x86_64 host" || echo "qemu-system-x86"))
  $replay

The exact command line of the run: command-line. Its console log and
results: logs/ (the .ktap, the kunit.py .json, JUnit, and for a splat
the decoded log made with the tree's scripts/decode_stacktrace.sh).
Debug: $debug
Rebuild the kernel: unpack linux-source-6.1, quilt push -a the patches/,
cp kernel/config .config, make olddefconfig $( [ "$target" = uml ] && echo "ARCH=um" ).
EOF
tar -C "$OUT" -czf "$OUT/$name.tar.gz" "$name"
rm -rf "$dir"
say "bundle: $OUT/$name.tar.gz, $(du -h "$OUT/$name.tar.gz" | cut -f1), in $(( $(date +%s) - t0 ))s"
