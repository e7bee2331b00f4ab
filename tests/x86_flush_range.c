// SPDX-License-Identifier: GPL-2.0
/*
 * x86_flush_range: how x86 flushes what a munmap() gathered. The gather
 * ends in one flush_tlb_mm_range() for the unmapped range; x86 invalidates
 * it page by page up to tlb_single_page_flush_ceiling pages (33 unless
 * changed in debugfs) and flushes the whole TLB above that, because one
 * invlpg per page costs more than refilling the TLB from there on.
 *
 * The test stays on one CPU, so its mm is loaded nowhere else and each
 * flush is local. Before it was pinned it may have run on another CPU,
 * which then keeps the mm loaded while lazy; x86 (6.12, and 6.1.192)
 * sends such CPUs an IPI with the first flush after the mm's cpumask is
 * due for a trim (once a second, should_trim_cpumask()), which takes them
 * out of the mask. So it waits past that second once, pinned, and flushes
 * one page unmeasured first: every later flush finds only this CPU in the
 * mask. For munmap() of N pages out of the middle of a larger
 * mapping (no page table is freed), tlb:tlb_flush, filtered on this task,
 * must report exactly one local mm shootdown of N pages, or of all
 * (pages:-1) above the ceiling. Then a page made read-only by mprotect()
 * must fault on a write right after, though its writable translation was
 * just used: the single-page flush really happened.
 */
#define _GNU_SOURCE
#include <sched.h>
#include "mmlab.h"

#define EV	"/sys/kernel/tracing/events/tlb/tlb_flush"
#define CEILING	"/sys/kernel/debug/x86/tlb_single_page_flush_ceiling"
#define MAP	512		/* pages mapped; the cases unmap from its middle */

struct flushes { int events, others, switches; long pages; };

static struct flushes traced_munmap(char *p, long npages)
{
	static char line[1024];
	struct flushes r = { 0, 0, 0, 0 };
	FILE *f;

	if (mmlab_trace_own(EV))
		ksft_exit_fail_msg("cannot enable %s\n", EV);
	if (munmap(p, npages * MMLAB_PAGE))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	mmlab_write_file(EV "/enable", "0");
	f = fopen("/sys/kernel/tracing/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *q = strstr(line, "tlb_flush: pages:");
		long pages;

		if (!q || sscanf(q, "tlb_flush: pages:%ld", &pages) != 1)
			continue;
		if (strstr(q, "reason:local mm shootdown")) {
			r.events++;
			r.pages = pages;
		} else if (strstr(q, "reason:flush on task switch")) {
			r.switches++;	/* switching back to this task: not a shootdown */
		} else {
			r.others++;
			ksft_print_msg("unexpected: %s", q);
		}
	}
	if (f)
		fclose(f);
	return r;
}

int main(void)
{
	static const long sizes[] = { 1, 8, 33, 34, 64 };
	long ceiling = 33;
	cpu_set_t one;
	char buf[32];
	FILE *f;

	ksft_print_header();
	f = fopen(CEILING, "r");
	if (!f)
		ksft_exit_skip("no %s: x86 only\n", CEILING);
	if (fgets(buf, sizeof(buf), f))
		ceiling = strtol(buf, NULL, 10);
	fclose(f);
	if (access(EV "/enable", W_OK))
		ksft_exit_skip("no tlb:tlb_flush tracepoint\n");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		ksft_exit_fail_msg("sched_setaffinity: %s\n", strerror(errno));
	ksft_set_plan(ARRAY_SIZE(sizes) + 1);
	ksft_print_msg("tlb_single_page_flush_ceiling is %ld pages\n", ceiling);
	{
		char *warm = mmlab_map(1);

		warm[0] = 1;
		usleep(1100 * 1000);	/* past the once-a-second trim */
		munmap(warm, MMLAB_PAGE);
	}

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		long n = sizes[i], want = n > ceiling ? -1 : n;
		char *map = mmlab_map(MAP), *p = map + 64 * MMLAB_PAGE;
		struct flushes r;

		mmlab_fill(map, 0, MAP, 1);
		r = traced_munmap(p, n);
		ksft_print_msg("munmap of %ld pages: %d local flushes (last of %ld pages), %d other shootdowns, %d task-switch flushes\n",
			       n, r.events, r.pages, r.others, r.switches);
		ksft_test_result(r.events == 1 && r.pages == want && !r.others,
				 "munmap of %ld pages: one local flush of %s\n", n,
				 want < 0 ? "the whole TLB (above the ceiling)" : "exactly those pages");
		munmap(map, MAP * MMLAB_PAGE);
	}

	{
		char *map = mmlab_map(3);

		mmlab_fill(map, 0, 3, 2);	/* the writable translation is in the TLB */
		if (mprotect(map + MMLAB_PAGE, MMLAB_PAGE, PROT_READ))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
		ksft_test_result(mmlab_probe(map + MMLAB_PAGE, 1) == SIGSEGV &&
				 mmlab_probe(map, 1) == 0 && mmlab_probe(map + 2 * MMLAB_PAGE, 1) == 0,
				 "a page just written faults on a write after mprotect(PROT_READ) of it alone\n");
		munmap(map, 3 * MMLAB_PAGE);
	}
	mmlab_write_file(EV "/filter", "0");
	ksft_finished();
}
