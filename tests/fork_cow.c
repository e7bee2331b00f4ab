// SPDX-License-Identifier: GPL-2.0
/*
 * fork_cow: a parent with many MiB of patterned anonymous memory forks
 * children that read it, write half of it (copy-on-write), unmap part of it,
 * or are killed while holding it. The parent's data must never change, each
 * child must see its own writes, and once all children are gone the memory
 * they copied must be back (MemFree), i.e. exit freed every page it gathered.
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include "mmlab.h"

#define NPAGES	4096UL		/* 16 MiB */
#define NCHILD	4

enum { READER, WRITER, UNMAPPER, KILLED };

static int child(char *base, int kind, int id, int ready_fd)
{
	size_t pg, bad = 0;

	bad += mmlab_check(base, 0, NPAGES, 1, "child sees parent");
	switch (kind) {
	case WRITER:
	case KILLED:
		for (pg = 1; pg < NPAGES; pg += 2)
			mmlab_fill(base, pg, 1, 10 + id);
		for (pg = 0; pg < NPAGES; pg++)
			bad += mmlab_check(base, pg, 1, pg & 1 ? 10 + id : 1, "child");
		break;
	case UNMAPPER:
		if (munmap(base, NPAGES / 2 * MMLAB_PAGE))
			bad++;
		mmlab_fill(base, NPAGES / 2, NPAGES / 2, 10 + id);
		bad += mmlab_check(base, NPAGES / 2, NPAGES / 2, 10 + id, "child");
		break;
	}
	if (kind == KILLED) {
		/* Tell the parent the copies exist, then wait for SIGKILL. */
		if (write(ready_fd, "k", 1) != 1)
			bad++;
		for (;;)
			pause();
	}
	return bad ? 1 : 0;
}

/*
 * fork() copies no PTE of a shared mapping without an anon_vma: the child
 * faults those pages in on first touch. Put such a page next to an
 * anonymous one in the same page table, so that the child has that table
 * and the shared page's PTE in it is empty. The child must fault the page
 * in when it reads it; on UML that means the child's host process (a copy
 * of the parent's) must have lost the parent's host mapping of the page,
 * which only force_flush_all()'s forced unmap of empty PTEs takes away.
 * Returns the number of failed checks.
 */
static int uncopied_shared_page(void)
{
	size_t span = 2 * MMLAB_PMD_SIZE;
	char *res, *anon, *shared;
	int fd, status, bad = 0;
	pid_t pid;

	res = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = memfd_create("fork_cow", 0);
	if (res == MAP_FAILED || fd < 0 || ftruncate(fd, MMLAB_PAGE))
		ksft_exit_fail_msg("reserve/memfd: %s\n", strerror(errno));
	anon = (char *)(((uintptr_t)res + MMLAB_PMD_SIZE - 1) & ~(MMLAB_PMD_SIZE - 1));
	shared = anon + MMLAB_PAGE;
	if (mmap(anon, MMLAB_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != anon ||
	    mmap(shared, MMLAB_PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, 0) != shared)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	mmlab_fill(anon, 0, 1, 3);
	mmlab_fill(shared, 0, 1, 4);

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		int before = !!(mmlab_pagemap(shared) & MMLAB_PM_PRESENT);

		bad += mmlab_check(shared, 0, 1, 4, "child's shared page");
		bad += mmlab_check(anon, 0, 1, 3, "child's anonymous page");
		if (before || !(mmlab_pagemap(shared) & MMLAB_PM_PRESENT)) {
			ksft_print_msg("child: shared page present before its read %d, after %d (want 0, 1)\n",
				       before, !!(mmlab_pagemap(shared) & MMLAB_PM_PRESENT));
			bad++;
		}
		_exit(bad ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	munmap(res, span);
	close(fd);
	return !(WIFEXITED(status) && !WEXITSTATUS(status));
}

int main(void)
{
	static const char *const names[] = { "reader", "writer", "unmapper", "killed" };
	int kinds[NCHILD] = { READER, WRITER, UNMAPPER, KILLED };
	pid_t pids[NCHILD];
	long free_before, free_after;
	int pipefd[2], i;
	char *base;
	char c;

	ksft_print_header();
	/* 48 MiB (16, copied by the writing child): in tests/manifest, the runner checks it */
	ksft_set_plan(NCHILD + 4);

	base = mmlab_map(NPAGES);
	mmlab_fill(base, 0, NPAGES, 1);
	if (pipe(pipefd))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	free_before = mmlab_free_kib();

	for (i = 0; i < NCHILD; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pids[i])
			_exit(child(base, kinds[i], i, pipefd[1]));
	}
	if (read(pipefd[0], &c, 1) != 1)
		ksft_exit_fail_msg("killed child never got ready\n");
	kill(pids[KILLED], SIGKILL);

	for (i = 0; i < NCHILD; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) != pids[i])
			ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
		if (kinds[i] == KILLED)
			ksft_test_result(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
					 "%s child died of SIGKILL holding %lu MiB of copies\n",
					 names[i], NPAGES / 2 * MMLAB_PAGE >> 20);
		else
			ksft_test_result(WIFEXITED(status) && !WEXITSTATUS(status),
					 "%s child saw the parent's data and its own\n",
					 names[i]);
	}

	ksft_test_result(!mmlab_check(base, 0, NPAGES, 1, "parent"),
			 "parent's %lu pages unchanged by the children\n", NPAGES);

	free_after = mmlab_free_kib();
	/*
	 * The children copied 2 x 8 MiB + 8 MiB. Allow 512 KiB for slab and
	 * page-table pages still cached (up to 168 KiB seen on UML and x86).
	 */
	ksft_print_msg("free memory (with per-cpu lists) before fork %ld KiB, after the children exited %ld KiB\n",
		       free_before, free_after);
	ksft_test_result(free_after >= free_before - 512,
			 "memory copied by the children was freed at exit\n");

	mmlab_fill(base, 0, NPAGES, 2);
	ksft_test_result(!mmlab_check(base, 0, NPAGES, 2, "rewrite"),
			 "parent rewrites its now-exclusive pages\n");
	ksft_test_result(!uncopied_shared_page(),
			 "child faults in a shared page that fork did not copy\n");
	ksft_finished();
}
