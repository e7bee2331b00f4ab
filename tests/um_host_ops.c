// SPDX-License-Identifier: GPL-2.0
/*
 * um_host_ops: on UML a TLB flush becomes host mmap/munmap/mprotect calls
 * (fix_range_common()). Follow an mprotect() and a munmap() of 64
 * contiguous pages to their host operations with the um_tlb:um_fix_range
 * tracepoint: the mprotect remaps the range read-only (and a write then
 * faults), the munmap is one merged host munmap, nothing else is issued.
 */
#include "mmlab.h"

#define EV	"/sys/kernel/tracing/events/um_tlb/um_fix_range"
#define NPAGES	64

struct ops { int events; unsigned int mmap, munmap, mprotect; };

/* Run @fn with the tracepoint on; sum the events that touch [lo, hi). */
static struct ops traced(void (*fn)(char *), char *p, unsigned long lo, unsigned long hi)
{
	static char line[1024];
	struct ops o = { 0 };
	FILE *f;

	if (mmlab_trace_own(EV))
		ksft_exit_fail_msg("cannot enable %s\n", EV);
	fn(p);
	mmlab_write_file(EV "/enable", "0");
	f = fopen("/sys/kernel/tracing/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		unsigned int a, b, c;
		char *q = strstr(line, "um_fix_range:");

		if (!q || sscanf(q, "um_fix_range: mm=%*s range=%lx-%lx force=%*d mmap=%u munmap=%u mprotect=%u",
				 &s, &e, &a, &b, &c) != 5)
			continue;
		if (e <= lo || s >= hi)
			continue;
		o.events++;
		o.mmap += a;
		o.munmap += b;
		o.mprotect += c;
	}
	if (f)
		fclose(f);
	return o;
}

static void do_mprotect(char *p)
{
	if (mprotect(p, NPAGES * MMLAB_PAGE, PROT_READ))
		ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
}

static void do_munmap(char *p)
{
	if (munmap(p, NPAGES * MMLAB_PAGE))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
}

int main(void)
{
	unsigned long lo, hi;
	unsigned int runs;
	uint64_t prev = 0;
	struct ops o;
	char *r, *p;

	ksft_print_header();
	if (access(EV "/enable", W_OK))
		ksft_exit_skip("no um_tlb:um_fix_range tracepoint (not UML, or CONFIG_DEBUG_MMU_GATHER off)\n");
	ksft_set_plan(3);

	/* 64 pages with a populated page on each side, all in one 2 MiB block */
	r = mmlab_map(512 * 3);
	p = (char *)(((unsigned long)r + 512 * MMLAB_PAGE) & ~(512 * MMLAB_PAGE - 1)) + MMLAB_PAGE;
	lo = (unsigned long)p;
	hi = lo + NPAGES * MMLAB_PAGE;
	mmlab_fill(p - MMLAB_PAGE, 0, NPAGES + 2, 1);

	/*
	 * 6.1's set_pte() marks a changed present PTE as a new page, so the
	 * flush remaps it (mmap with the new protection) instead of a host
	 * mprotect. add_mmap() merges a page into the previous operation when
	 * both its address and its offset in the physical-memory file follow
	 * on: one operation per run of physically contiguous pages, which
	 * /proc/self/pagemap tells exactly.
	 */
	runs = 0;
	for (int i = 0; i < NPAGES; i++) {
		uint64_t pfn = mmlab_pfn(p + i * MMLAB_PAGE);

		if (!pfn)
			ksft_exit_fail_msg("no pfn for page %d in /proc/self/pagemap\n", i);
		if (i == 0 || pfn != prev + 1)
			runs++;
		prev = pfn;
	}
	o = traced(do_mprotect, p, lo, hi);
	ksft_print_msg("mprotect: %d flushes, host mmap %u munmap %u mprotect %u; %u physical runs\n",
		       o.events, o.mmap, o.munmap, o.mprotect, runs);
	ksft_test_result(o.events == 1 && o.mmap == runs && !o.mprotect && !o.munmap &&
			 mmlab_probe(p + 5 * MMLAB_PAGE, 1) == SIGSEGV,
			 "mprotect of %d pages: one flush, one host mmap per physical run (%u), read-only\n",
			 NPAGES, runs);

	o = traced(do_munmap, p, lo, hi);
	ksft_print_msg("munmap: %d flushes, host mmap %u munmap %u mprotect %u\n",
		       o.events, o.mmap, o.munmap, o.mprotect);
	ksft_test_result(o.events == 1 && o.munmap == 1 && !o.mmap && !o.mprotect,
			 "munmap of %d pages: one flush, one merged host munmap\n", NPAGES);
	ksft_test_result(mmlab_probe(p, 0) == SIGSEGV &&
			 !mmlab_check(p - MMLAB_PAGE, 0, 1, 1, "left") &&
			 !mmlab_check(p - MMLAB_PAGE, NPAGES + 1, 1, 1, "right"),
			 "range gone on the host, neighbours intact\n");
	mmlab_write_file(EV "/filter", "0");
	ksft_finished();
}
