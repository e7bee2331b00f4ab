# mmlab: the x86_64 guest under gdb (make qemu-gdb); lx-* come from
# vmlinux-gdb.py next to build/x86/vmlinux.
set pagination off
source gdb-scripts/mmlab.py
skip file include/asm-generic/tlb.h
skip file include/linux/rcupdate.h
skip file include/linux/compiler.h
