// SPDX-License-Identifier: GPL-2.0
/*
 * mprotect_split: mprotect() of part of a VMA splits it, the new protection
 * is enforced at once (the stale writable TLB entry is gone), restoring it
 * merges the VMAs again, and no page's data changes on the way.
 */
#include "mmlab.h"

#define NPAGES	64UL
#define BIG	2048UL

int main(void)
{
	char perms[8][5];
	char *base, *big;
	int n;

	ksft_print_header();
	/* 16 MiB (8 mapped): in tests/manifest, the runner checks it */
	ksft_set_plan(7);

	base = mmlab_map(NPAGES);
	mmlab_fill(base, 0, NPAGES, 1);

	if (mprotect(base + 16 * MMLAB_PAGE, 16 * MMLAB_PAGE, PROT_READ))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	n = mmlab_vmas(base, base + NPAGES * MMLAB_PAGE, perms, 8);
	ksft_test_result(n == 3 && !strcmp(perms[0], "rw-p") &&
			 !strcmp(perms[1], "r--p") && !strcmp(perms[2], "rw-p"),
			 "read-only middle splits the VMA in 3 (got %d)\n", n);

	ksft_test_result(mmlab_probe(base + 20 * MMLAB_PAGE, 1) == SIGSEGV &&
			 mmlab_probe(base + 20 * MMLAB_PAGE, 0) == 0 &&
			 mmlab_probe(base + 31 * MMLAB_PAGE + 100, 1) == SIGSEGV,
			 "write to the read-only part faults, read does not\n");

	if (mprotect(base + 24 * MMLAB_PAGE, 4 * MMLAB_PAGE, PROT_NONE))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	n = mmlab_vmas(base, base + NPAGES * MMLAB_PAGE, perms, 8);
	ksft_test_result(n == 5 && !strcmp(perms[2], "---p") &&
			 mmlab_probe(base + 25 * MMLAB_PAGE, 0) == SIGSEGV,
			 "PROT_NONE inside it splits again and blocks reads (got %d VMAs)\n", n);

	if (mprotect(base, NPAGES * MMLAB_PAGE, PROT_READ | PROT_WRITE))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	n = mmlab_vmas(base, base + NPAGES * MMLAB_PAGE, perms, 8);
	ksft_test_result(n == 1 && !strcmp(perms[0], "rw-p"),
			 "restoring read-write merges back to one VMA (got %d)\n", n);

	ksft_test_result(!mmlab_check(base, 0, NPAGES, 1, "after mprotect"),
			 "no page changed across the splits and merge\n");

	/* A large range: every one of its PTEs must lose write permission. */
	big = mmlab_map(BIG);
	mmlab_fill(big, 0, BIG, 3);
	if (mprotect(big, BIG * MMLAB_PAGE, PROT_READ))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	n = 0;
	for (size_t pg = 0; pg < BIG; pg += 7)
		if (mmlab_probe(big + pg * MMLAB_PAGE, 1) != SIGSEGV)
			n++;
	ksft_test_result(!n, "%lu-page read-only range faults on every probed page (%d did not)\n",
			 BIG, n);
	if (mprotect(big, BIG * MMLAB_PAGE, PROT_READ | PROT_WRITE))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	mmlab_fill(big, 0, BIG, 4);
	ksft_test_result(!mmlab_check(big, 0, BIG, 4, "big rw again"),
			 "%lu-page range writable and correct again\n", BIG);
	ksft_finished();
}
