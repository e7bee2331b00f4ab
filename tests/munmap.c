// SPDX-License-Identifier: GPL-2.0
/*
 * munmap: the gdb workload (make gdb WORKLOAD=munmap), also a test. It maps
 * 600 anonymous pages between two mapped guard pages (so no page table is
 * freed with them), writes them, forks a child that keeps them shared (so
 * their anon_vma has the child's VMA too), prints what a debugger should
 * find (address, pfn from /proc/self/pagemap, child pid), then munmaps them
 * in one call: one mmu_gather with 8 + 510 + 82 pages in three batches
 * (7 + 509 + 84 from 6.3 on, where a batch is full at max - 1).
 */
#include <sys/wait.h>
#include "mmlab.h"

#define NPAGES 600

int main(void)
{
	char *region, *p;
	int pipefd[2], status;
	uint64_t pfn;
	pid_t child;
	char c;

	ksft_print_header();
	ksft_set_plan(3);
	/* 2 MiB-aligned block + 1 page: the 600 pages cover no whole block */
	region = mmlab_map(3 * 512);
	p = (char *)(((unsigned long)region + 512 * MMLAB_PAGE) & ~(512 * MMLAB_PAGE - 1)) +
	    MMLAB_PAGE;
	mmlab_fill(p - MMLAB_PAGE, 0, NPAGES + 2, 1);
	pfn = mmlab_pfn(p);

	if (pipe(pipefd))
		ksft_exit_fail_msg("pipe\n");
	child = fork();
	if (!child) {
		close(pipefd[1]);
		/* hold the shared pages until the parent is done */
		if (read(pipefd[0], &c, 1) < 0)
			_exit(1);
		_exit(mmlab_check(p - MMLAB_PAGE, 0, NPAGES + 2, 1, "child") ? 1 : 0);
	}
	close(pipefd[0]);
	ksft_print_msg("gdb: addr=%#lx pages=%d pfn=%#llx child=%d\n",
		       (unsigned long)p, NPAGES, (unsigned long long)pfn, child);
	fflush(stdout);

	if (munmap(p, NPAGES * MMLAB_PAGE))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	ksft_test_result(pfn != 0, "pagemap gave the first page's pfn\n");
	ksft_test_result(mmlab_probe(p, 0) == SIGSEGV &&
			 mmlab_probe(p + (NPAGES - 1) * MMLAB_PAGE, 0) == SIGSEGV &&
			 !mmlab_check(p - MMLAB_PAGE, 0, 1, 1, "left guard") &&
			 !mmlab_check(p - MMLAB_PAGE, NPAGES + 1, 1, 1, "right guard"),
			 "%d pages unmapped, guards intact\n", NPAGES);
	close(pipefd[1]);
	waitpid(child, &status, 0);
	ksft_test_result(WIFEXITED(status) && !WEXITSTATUS(status),
			 "the child still had every shared page\n");
	ksft_finished();
}
