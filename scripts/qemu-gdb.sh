#!/bin/bash
# QEMU stopped at the first instruction (-s -S, nokaslr), console in
# build/logs/qemu-gdb.log, and gdb attached with the kernel's lx-* helpers
# (vmlinux-gdb.py) and gdb-scripts/ loaded. Quitting gdb stops QEMU.
# usage: qemu-gdb.sh "BOOT COMMAND" X86_O ROOT [WORKLOAD]
. "$(dirname "$0")/lib.sh"
set -eu
BOOT=$1 O=$2 ROOT=$3 WORKLOAD=${4:-shell}
$BOOT --gdb --name qemu-gdb --mode "$WORKLOAD" --timeout 86400 > "$MMLAB_BUILD/logs/qemu-gdb.out" 2>&1 &
qemu=$!
# boot.py kills its QEMU when it is stopped.
trap 'kill $qemu 2>/dev/null || true' EXIT
sleep 1
say "guest console: tail -f $MMLAB_BUILD/logs/qemu-gdb.log (QEMU waits for gdb's 'continue')"
extra=()
[ -f "$ROOT/gdb-scripts/qemu.gdb" ] && extra=(-x "$ROOT/gdb-scripts/qemu.gdb")
gdb -iex "add-auto-load-safe-path $ROOT" -ex "target remote :1234" "${extra[@]}" "$O/vmlinux"
