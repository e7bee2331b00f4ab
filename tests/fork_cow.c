// SPDX-License-Identifier: GPL-2.0
/*
 * fork_cow: a parent with many MiB of patterned anonymous memory forks
 * children that read it, write half of it (copy-on-write), unmap part of it,
 * or are killed while holding it. The parent's data must never change, each
 * child must see its own writes, and each child's exit must free every page
 * it copied, itself: each child notes the PFN of each copy it made
 * (pagemap), and the kmem:mm_page_free events of that child's pid, traced
 * while it exits (or dies of SIGKILL), must name every one of them. A
 * gather that leaks a page, or leaves it for someone else to free, fails.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>
#include "mmlab.h"

#define NPAGES	4096UL		/* 16 MiB */
#define NCOPY	(NPAGES / 2)	/* the pages a writing child copies */
#define NCHILD	4
#define FREE_EV	"/sys/kernel/tracing/events/kmem/mm_page_free"

enum { READER, WRITER, UNMAPPER, KILLED };

/* Shared with the children: the PFN of each page each child copied. */
static uint64_t (*copies)[NCOPY];

/* A child's copies: odd pages (writer, killed) or the upper half (unmapper). */
static size_t copy_page(int kind, size_t k)
{
	return kind == UNMAPPER ? NPAGES / 2 + k : 2 * k + 1;
}

/*
 * Check and write as @kind, note the copies' PFNs, say ready on @ready_fd,
 * then exit when @go_fd closes (the killed child waits for SIGKILL).
 */
static int child(char *base, int kind, int id, int ready_fd, int go_fd)
{
	size_t pg, bad = 0;
	char c;

	/* exit_mmap() drains this CPU's LRU batch, which holds new copies */
	mmlab_pin(sched_getcpu());
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
	for (size_t k = 0; kind != READER && k < NCOPY; k++)
		copies[id][k] = mmlab_pfn(base + copy_page(kind, k) * MMLAB_PAGE);
	if (write(ready_fd, "r", 1) != 1)
		bad++;
	if (kind == KILLED)
		for (;;)
			pause();
	while (read(go_fd, &c, 1) == 1)
		;
	return bad ? 1 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The order-0 pages each child freed (kmem:mm_page_free of its pid), sorted
 * into @freed[i] (@nfreed[i] of them). 0, or -1 when the trace lost events.
 */
static int read_frees(const pid_t *pids, uint64_t **freed, size_t *nfreed)
{
	static char line[512];
	unsigned long in_buffer = 0, written = 1;
	FILE *f = fopen("/sys/kernel/tracing/trace", "r");

	for (int i = 0; i < NCHILD; i++)
		nfreed[i] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *q = strstr(line, "mm_page_free: ");
		unsigned long pfn;
		int order, pid = mmlab_trace_pid(line);

		if (sscanf(line, "# entries-in-buffer/entries-written: %lu/%lu",
			   &in_buffer, &written) == 2)
			continue;
		if (!q || !(q = strstr(q, "pfn=")) ||
		    sscanf(q, "pfn=0x%lx order=%d", &pfn, &order) != 2 || order)
			continue;
		for (int i = 0; i < NCHILD; i++) {
			if (pids[i] != pid)
				continue;
			if (nfreed[i] % 4096 == 0)
				freed[i] = realloc(freed[i], (nfreed[i] + 4096) * sizeof(uint64_t));
			if (!freed[i])
				ksft_exit_fail_msg("out of memory\n");
			freed[i][nfreed[i]++] = pfn;
		}
	}
	if (f)
		fclose(f);
	for (int i = 0; i < NCHILD; i++)
		if (nfreed[i])
			qsort(freed[i], nfreed[i], sizeof(uint64_t), cmp_u64);
	return f && in_buffer == written ? 0 : -1;
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
	uint64_t *freed[NCHILD] = { NULL };
	size_t nfreed[NCHILD];
	pid_t pids[NCHILD];
	int ready[2], go[2], i, traced;
	char filter[256] = "", *base;
	char c;

	ksft_print_header();
	/* 48 MiB (16, copied by the writing child): in tests/manifest, the runner checks it */
	ksft_set_plan(NCHILD + 4);

	base = mmlab_map(NPAGES);
	mmlab_fill(base, 0, NPAGES, 1);
	copies = mmap(NULL, NCHILD * sizeof(*copies), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (copies == MAP_FAILED || pipe(ready) || pipe(go))
		ksft_exit_fail_msg("mmap or pipe: %s\n", strerror(errno));

	for (i = 0; i < NCHILD; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pids[i]) {
			close(go[1]);
			_exit(child(base, kinds[i], i, ready[1], go[0]));
		}
		snprintf(filter + strlen(filter), sizeof(filter) - strlen(filter),
			 "%scommon_pid == %d", i ? " || " : "", pids[i]);
	}
	close(go[0]);
	for (i = 0; i < NCHILD; i++)
		if (read(ready[0], &c, 1) != 1)
			ksft_exit_fail_msg("a child never got ready\n");

	/* Trace the children's frees while they exit. */
	traced = !mmlab_write_file("/sys/kernel/tracing/trace", "") &&
		 !mmlab_write_file(FREE_EV "/filter", filter) &&
		 !mmlab_write_file(FREE_EV "/enable", "1");
	close(go[1]);
	kill(pids[KILLED], SIGKILL);
	for (i = 0; i < NCHILD; i++) {
		int status;

		if (waitpid(pids[i], &status, 0) != pids[i])
			ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
		if (kinds[i] == KILLED)
			ksft_test_result(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
					 "%s child died of SIGKILL holding %lu MiB of copies\n",
					 names[i], NCOPY * MMLAB_PAGE >> 20);
		else
			ksft_test_result(WIFEXITED(status) && !WEXITSTATUS(status),
					 "%s child saw the parent's data and its own\n",
					 names[i]);
	}
	mmlab_write_file(FREE_EV "/enable", "0");
	mmlab_write_file(FREE_EV "/filter", "0");

	ksft_test_result(!mmlab_check(base, 0, NPAGES, 1, "parent"),
			 "parent's %lu pages unchanged by the children\n", NPAGES);

	if (!traced || read_frees(pids, freed, nfreed)) {
		ksft_test_result_fail("children's frees: %s\n", traced ?
				      "the trace lost events (buffer_size_kb too small)" :
				      "no kmem:mm_page_free tracepoint");
	} else {
		size_t kept = 0, first_kept = 0;
		int who = -1;

		for (i = 0; i < NCHILD; i++) {
			size_t own = 0;

			for (size_t k = 0; kinds[i] != READER && k < NCOPY; k++) {
				if (bsearch(&copies[i][k], freed[i], nfreed[i],
					    sizeof(uint64_t), cmp_u64)) {
					own++;
				} else if (!kept++) {
					who = i;
					first_kept = k;
				}
			}
			ksft_print_msg("%s child: freed %zu pages as it exited, %zu of its %lu copies\n",
				       names[i], nfreed[i], own,
				       kinds[i] == READER ? 0 : NCOPY);
		}
		if (kept)
			ksft_print_msg("first copy not freed by its child: %s page %zu (pfn %#llx)\n",
				       names[who], copy_page(kinds[who], first_kept),
				       (unsigned long long)copies[who][first_kept]);
		ksft_test_result(!kept,
				 "each child's exit freed every page it copied (%zu not)\n", kept);
	}

	mmlab_fill(base, 0, NPAGES, 2);
	ksft_test_result(!mmlab_check(base, 0, NPAGES, 2, "rewrite"),
			 "parent rewrites its now-exclusive pages\n");
	ksft_test_result(!uncopied_shared_page(),
			 "child faults in a shared page that fork did not copy\n");
	ksft_finished();
}
