# mmlab: UML under gdb (make gdb). The kernel's lx-* helpers come from
# linux-gdb.py next to ./linux; this adds the signal recipe and ours.
# UML uses SIGSEGV and SIGUSR1 itself; SIGALRM, SIGIO, SIGWINCH and SIGCHLD
# already pass silently. Keep detach-on-fork on (off hangs the ptrace checks).
handle SIGSEGV nostop noprint pass
handle SIGUSR1 nostop noprint pass
set pagination off
source gdb-scripts/mmlab.py
# Inlined header helpers are noise when stepping through tlb_flush_mmu.
skip file include/asm-generic/tlb.h
skip file include/linux/rcupdate.h
skip file include/linux/compiler.h
skip file include/linux/instrumented.h
skip file include/linux/atomic/atomic-instrumented.h
