// SPDX-License-Identifier: GPL-2.0
/*
 * um_host_ops: on UML a TLB flush becomes host mmap/munmap/mprotect calls.
 * Follow an mprotect() and a munmap() of 64 contiguous pages to their host
 * calls with the UML tracepoint of the tree: the mprotect remaps the range
 * read-only (and a write then faults), the munmap is one merged host
 * munmap, nothing else is issued.
 *   6.1:  um_tlb:um_fix_range, per flush (fix_range_common()), the host
 *         operations after merging;
 *   6.12: um_tlb:um_tlb_sync, per sync of the pending range (um_tlb_sync(),
 *         on the way back to userspace), the operations of the page table
 *         walk, one per changed PTE, and the host calls the stub's queue
 *         merged them into.
 */
#include "mmlab.h"

#define TRACING	"/sys/kernel/tracing/events/um_tlb/"
#define NPAGES	64

static const char *ev;		/* the tracepoint's directory */
static int sync_ev;		/* um_tlb_sync (6.12), else um_fix_range */

/* per kind: host calls, and (um_tlb_sync only) the walk's operations */
struct ops { int events; unsigned int mmap, munmap, mprotect, op_mmap, op_munmap, op_mprotect; };

/* Run @fn with the tracepoint on; sum the events that touch [lo, hi). */
static struct ops traced(void (*fn)(char *), char *p, unsigned long lo, unsigned long hi)
{
	static char line[1024];
	struct ops o = { 0 };
	char path[256];
	FILE *f;

	if (mmlab_trace_own(ev))
		ksft_exit_fail_msg("cannot enable %s\n", ev);
	fn(p);
	snprintf(path, sizeof(path), "%s/enable", ev);
	mmlab_write_file(path, "0");
	f = fopen("/sys/kernel/tracing/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		unsigned int a, b, c, oa = 0, ob = 0, oc = 0;
		char *q;

		if (sync_ev) {
			q = strstr(line, "um_tlb_sync:");
			if (!q || sscanf(q, "um_tlb_sync: mm=%*s range=%lx-%lx mmap=%u/%u munmap=%u/%u mprotect=%u/%u",
					 &s, &e, &oa, &a, &ob, &b, &oc, &c) != 8)
				continue;
		} else {
			q = strstr(line, "um_fix_range:");
			if (!q || sscanf(q, "um_fix_range: mm=%*s range=%lx-%lx force=%*d mmap=%u munmap=%u mprotect=%u",
					 &s, &e, &a, &b, &c) != 5)
				continue;
		}
		if (e <= lo || s >= hi)
			continue;
		o.events++;
		o.mmap += a;
		o.munmap += b;
		o.mprotect += c;
		o.op_mmap += oa;
		o.op_munmap += ob;
		o.op_mprotect += oc;
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
	if (!access(TRACING "um_tlb_sync/enable", W_OK)) {
		ev = TRACING "um_tlb_sync";
		sync_ev = 1;
	} else if (!access(TRACING "um_fix_range/enable", W_OK)) {
		ev = TRACING "um_fix_range";
	} else {
		ksft_exit_skip("no um_tlb:um_tlb_sync or um_tlb:um_fix_range tracepoint (not UML, or CONFIG_DEBUG_UM_TLB off)\n");
	}
	ksft_set_plan(3);

	/* 64 pages with a populated page on each side, all in one 2 MiB block */
	r = mmlab_map(512 * 3);
	p = (char *)(((unsigned long)r + 512 * MMLAB_PAGE) & ~(512 * MMLAB_PAGE - 1)) + MMLAB_PAGE;
	lo = (unsigned long)p;
	hi = lo + NPAGES * MMLAB_PAGE;
	mmlab_fill(p - MMLAB_PAGE, 0, NPAGES + 2, 1);

	/*
	 * UML's set_pte() marks a changed present PTE as a new page, so the
	 * flush remaps it (mmap with the new protection) instead of a host
	 * mprotect. The page is merged into the previous host mmap when both
	 * its address and its offset in the physical-memory file follow on
	 * (6.1: add_mmap(); 6.12: the stub queue's map()): one call per run
	 * of physically contiguous pages, which /proc/self/pagemap tells
	 * exactly. On 6.12 the walk's own operations are one per page.
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
	if (sync_ev)
		ksft_print_msg("mprotect: the walk's operations: mmap %u munmap %u mprotect %u\n",
			       o.op_mmap, o.op_munmap, o.op_mprotect);
	ksft_test_result(o.events == 1 && o.mmap == runs && !o.mprotect && !o.munmap &&
			 (!sync_ev || (o.op_mmap == NPAGES && !o.op_munmap && !o.op_mprotect)) &&
			 mmlab_probe(p + 5 * MMLAB_PAGE, 1) == SIGSEGV,
			 "mprotect of %d pages: one flush, one host mmap per physical run (%u), read-only\n",
			 NPAGES, runs);

	o = traced(do_munmap, p, lo, hi);
	ksft_print_msg("munmap: %d flushes, host mmap %u munmap %u mprotect %u\n",
		       o.events, o.mmap, o.munmap, o.mprotect);
	if (sync_ev)
		ksft_print_msg("munmap: the walk's operations: mmap %u munmap %u mprotect %u\n",
			       o.op_mmap, o.op_munmap, o.op_mprotect);
	ksft_test_result(o.events == 1 && o.munmap == 1 && !o.mmap && !o.mprotect &&
			 (!sync_ev || (o.op_munmap == NPAGES && !o.op_mmap && !o.op_mprotect)),
			 "munmap of %d pages: one flush, one merged host munmap\n", NPAGES);
	ksft_test_result(mmlab_probe(p, 0) == SIGSEGV &&
			 !mmlab_check(p - MMLAB_PAGE, 0, 1, 1, "left") &&
			 !mmlab_check(p - MMLAB_PAGE, NPAGES + 1, 1, 1, "right"),
			 "range gone on the host, neighbours intact\n");
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/filter", ev);
		mmlab_write_file(path, "0");
	}
	ksft_finished();
}
