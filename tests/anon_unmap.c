// SPDX-License-Identifier: GPL-2.0
/*
 * anon_unmap: a large anonymous mapping filled with a per-page pattern, then
 * holes of sizes around the mmu_gather boundaries (8-page bundle, one batch
 * of ~510 pages, many batches) punched with munmap and MADV_DONTNEED. Each
 * hole must really be gone (SIGSEGV, or zero pages), every other page must
 * keep its data, and the holes re-filled with new mappings must hold theirs.
 */
#include "mmlab.h"

#define NPAGES	8192UL		/* 32 MiB */

struct hole {
	size_t first, npages;
	int dontneed;
};

static const struct hole holes[] = {
	{  100,    1, 0 }, {  200,    8, 0 }, {  300,    9, 0 },
	{  600,  510, 0 }, { 1200,  511, 0 }, { 2000, 4096, 0 },
	{ 6200,    1, 1 }, { 6300,    8, 1 }, { 6400,    9, 1 },
	{ 6500,  600, 1 }, { 7168, 1024, 1 },
};

static long rss_anon_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* Is @pg of @base outside every hole? */
static int untouched(size_t pg)
{
	for (size_t i = 0; i < ARRAY_SIZE(holes); i++)
		if (pg >= holes[i].first && pg < holes[i].first + holes[i].npages)
			return 0;
	return 1;
}

static size_t check_untouched(char *base, uint64_t seed, const char *what)
{
	size_t bad = 0;

	for (size_t pg = 0; pg < NPAGES; pg++)
		if (untouched(pg))
			bad += mmlab_check(base, pg, 1, seed, what);
	return bad;
}

int main(void)
{
	char *base;
	size_t i, bad;

	ksft_print_header();
	/* 48 MiB (32 of pattern pages): in tests/manifest, the runner checks it */
	ksft_set_plan(2 * ARRAY_SIZE(holes) + 4);

	base = mmlab_map(NPAGES);
	mmlab_fill(base, 0, NPAGES, 1);
	ksft_test_result(mmlab_check(base, 0, NPAGES, 1, "fill") == 0,
			 "fill %lu pages and read back\n", NPAGES);

	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		const struct hole *h = &holes[i];
		char *start = base + h->first * MMLAB_PAGE;
		long rss_before = rss_anon_kib();
		size_t pg, wrong = 0;

		if (h->dontneed) {
			if (madvise(start, h->npages * MMLAB_PAGE, MADV_DONTNEED))
				ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
			wrong = mmlab_check(base, h->first, h->npages, 0, "dontneed");
		} else {
			if (munmap(start, h->npages * MMLAB_PAGE))
				ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
			/*
			 * Probe ~32 pages spread over the hole and its last one
			 * (each fault is a signal, slow on UML); RssAnon below
			 * accounts for all of them.
			 */
			size_t step = h->npages > 32 ? h->npages / 32 : 1;

			for (pg = 0; pg < h->npages; pg += step)
				if (mmlab_probe(start + pg * MMLAB_PAGE, 0) != SIGSEGV)
					wrong++;
			if (mmlab_probe(start + (h->npages - 1) * MMLAB_PAGE, 0) != SIGSEGV)
				wrong++;
		}
		/* RSS counters are cached per task: allow 64 pages of lag. */
		if (h->npages >= 512) {
			long dropped = rss_before - rss_anon_kib();

			if (dropped < (long)(h->npages - 64) * 4) {
				ksft_print_msg("RssAnon fell by %ld KiB, want ~%zu KiB\n",
					       dropped, h->npages * 4);
				wrong++;
			}
		}
		ksft_test_result(!wrong, "%s %zu pages at page %zu: hole is gone\n",
				 h->dontneed ? "MADV_DONTNEED" : "munmap",
				 h->npages, h->first);
	}

	bad = check_untouched(base, 1, "after holes");
	ksft_test_result(!bad, "pages around the holes intact (%zu bad)\n", bad);

	/* Map fresh memory into the holes; fill with a new pattern. */
	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		const struct hole *h = &holes[i];
		char *start = base + h->first * MMLAB_PAGE;

		if (!h->dontneed &&
		    mmap(start, h->npages * MMLAB_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != start)
			ksft_exit_fail_msg("re-mmap: %s\n", strerror(errno));
		mmlab_fill(base, h->first, h->npages, 2 + i);
	}
	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		const struct hole *h = &holes[i];

		ksft_test_result(!mmlab_check(base, h->first, h->npages, 2 + i, "refill"),
				 "refilled %zu pages at page %zu read back\n",
				 h->npages, h->first);
	}
	bad = check_untouched(base, 1, "after refill");
	ksft_test_result(!bad, "pages around the refilled holes intact (%zu bad)\n", bad);

	if (munmap(base, NPAGES * MMLAB_PAGE))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	ksft_test_result(mmlab_probe(base, 0) == SIGSEGV &&
			 mmlab_probe(base + (NPAGES - 1) * MMLAB_PAGE, 0) == SIGSEGV,
			 "whole mapping unmapped\n");
	ksft_finished();
}
