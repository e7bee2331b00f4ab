// SPDX-License-Identifier: GPL-2.0
/*
 * bench: what unmapping costs, in ns per 4 KiB page, with the mmu_gather
 * counters of each run (absent, -1, on a kernel without the series):
 * munmap and MADV_DONTNEED across the gather's sizes (the 8-page bundle,
 * one batch, past the batch cap), exit of a process with 64 MiB RSS,
 * fork + exit of one, munmap of a dirty MAP_SHARED memfd, MADV_PAGEOUT to
 * zram, and (x86) a THP split by mprotect.
 *
 * Without arguments it is a test like the others: one run of each, data
 * checked, TAP. "bench -r N" (make bench) prints one JSON line per
 * workload with the median of N runs, for scripts/bench.py.
 */
#define _GNU_SOURCE
#include <sys/wait.h>
#include <time.h>
#include "mmlab.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define HPAGE (2UL << 20)

static int reps = 1, json;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static char *populated(size_t npages)
{
	char *p = mmlab_map(npages);

	mmlab_fill(p, 0, npages, 3);
	return p;
}

struct sample { double ns; long long flush, alloc, freed; };

static long long ev(const char *name) { return mmlab_vmstat(name); }

/* One run of @w on @npages pages: the time of the measured step only. */
static int run_once(const char *w, size_t npages, struct sample *s)
{
	long long f0 = ev("mmu_gather_flush"), a0 = ev("mmu_gather_batch_alloc");
	long long p0 = ev("mmu_gather_pages_freed");
	double t0 = 0, t1 = 0;
	int bad = 0;

	if (!strcmp(w, "munmap") || !strcmp(w, "dontneed")) {
		char *p = populated(npages);

		f0 = ev("mmu_gather_flush"); a0 = ev("mmu_gather_batch_alloc");
		p0 = ev("mmu_gather_pages_freed");
		t0 = now_ns();
		if (w[0] == 'm') {
			bad = munmap(p, npages * MMLAB_PAGE);
		} else {
			bad = madvise(p, npages * MMLAB_PAGE, MADV_DONTNEED);
		}
		t1 = now_ns();
		if (w[0] == 'd') {
			bad |= mmlab_check(p, 0, npages, 0, "after MADV_DONTNEED") != 0;
			munmap(p, npages * MMLAB_PAGE);
		}
	} else if (!strcmp(w, "exit") || !strcmp(w, "fork_exit")) {
		int go[2], ready[2];
		char c = 0;
		pid_t pid;
		char *p = w[0] == 'f' ? populated(npages) : NULL;

		if (pipe(go) || pipe(ready))
			return -1;
		if (w[0] == 'f')
			t0 = now_ns();
		pid = fork();
		if (!pid) {
			if (w[0] == 'e') {
				mmlab_fill(populated(npages), 0, 1, 4);
				if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
					_exit(1);
			}
			_exit(0);
		}
		if (w[0] == 'e') {
			if (read(ready[0], &c, 1) != 1)
				bad = 1;
			f0 = ev("mmu_gather_flush"); a0 = ev("mmu_gather_batch_alloc");
			p0 = ev("mmu_gather_pages_freed");
			t0 = now_ns();
			if (write(go[1], &c, 1) != 1)
				bad = 1;
		}
		waitpid(pid, NULL, 0);
		t1 = now_ns();
		close(go[0]); close(go[1]); close(ready[0]); close(ready[1]);
		if (p) {
			bad |= mmlab_check(p, 0, npages, 3, "parent after fork") != 0;
			munmap(p, npages * MMLAB_PAGE);
		}
	} else if (!strcmp(w, "memfd_munmap")) {
		int fd = memfd_create("bench", 0);
		char *p;

		if (fd < 0 || ftruncate(fd, npages * MMLAB_PAGE))
			return -1;
		p = mmap(NULL, npages * MMLAB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return -1;
		mmlab_fill(p, 0, npages, 5);
		f0 = ev("mmu_gather_flush"); a0 = ev("mmu_gather_batch_alloc");
		p0 = ev("mmu_gather_pages_freed");
		t0 = now_ns();
		bad = munmap(p, npages * MMLAB_PAGE);
		t1 = now_ns();
		p = mmap(NULL, npages * MMLAB_PAGE, PROT_READ, MAP_SHARED, fd, 0);
		bad |= p == MAP_FAILED || mmlab_check(p, 0, npages, 5, "memfd after munmap");
		munmap(p, npages * MMLAB_PAGE);
		close(fd);
	} else if (!strcmp(w, "pageout")) {
		char *p = populated(npages);

		t0 = now_ns();
		bad = madvise(p, npages * MMLAB_PAGE, MADV_PAGEOUT);
		t1 = now_ns();
		bad |= mmlab_check(p, 0, npages, 3, "after swap-in") != 0;
		munmap(p, npages * MMLAB_PAGE);
	} else if (!strcmp(w, "thp_split_mprotect")) {
		char *r = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *p = (char *)(((unsigned long)r + HPAGE - 1) & ~(HPAGE - 1));

		madvise(p, HPAGE, MADV_HUGEPAGE);
		mmlab_fill(p, 0, npages, 6);
		t0 = now_ns();
		bad = mprotect(p + 5 * MMLAB_PAGE, MMLAB_PAGE, PROT_READ);
		t1 = now_ns();
		bad |= mmlab_check(p, 0, npages, 6, "split THP") != 0;
		munmap(r, 2 * HPAGE);
	}
	s->ns = (t1 - t0) / npages;
	s->flush = f0 < 0 ? -1 : ev("mmu_gather_flush") - f0;
	s->alloc = a0 < 0 ? -1 : ev("mmu_gather_batch_alloc") - a0;
	s->freed = p0 < 0 ? -1 : ev("mmu_gather_pages_freed") - p0;
	return bad ? -1 : 0;
}

static int cmp(const void *a, const void *b)
{
	double x = ((const struct sample *)a)->ns, y = ((const struct sample *)b)->ns;

	return x < y ? -1 : x > y;
}

static void bench(const char *w, size_t npages)
{
	struct sample s[32], m;
	int i, bad = 0;

	for (i = 0; i < reps; i++)
		bad |= run_once(w, npages, &s[i]);
	qsort(s, reps, sizeof(s[0]), cmp);
	m = s[reps / 2];
	if (json)
		printf("bench {\"workload\": \"%s\", \"pages\": %zu, \"ns_per_page\": %.1f, "
		       "\"flushes\": %lld, \"batch_allocs\": %lld, \"pages_freed\": %lld, \"ok\": %d}\n",
		       w, npages, m.ns, m.flush, m.alloc, m.freed, !bad);
	else
		ksft_test_result(!bad, "%s %zu pages: %.1f ns/page, flushes %lld, batch allocs %lld\n",
				 w, npages, m.ns, m.flush, m.alloc);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 9, 518, 4096, 16384 };
	char why[128];
	int thp = !access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK);
	int swap, opt;
	size_t i;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg);
	}
	if (reps < 1 || reps > 32)
		ksft_exit_fail_msg("-r takes 1..32\n");
	json = reps > 1;
	if (!json)
		mmlab_need_mem(160);	/* 64 MiB RSS, 64 MiB zram swap */
	swap = !mmlab_swap_on(64, why, sizeof(why));
	if (!json) {
		ksft_print_header();
		ksft_set_plan(12);
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		bench("munmap", sizes[i]);
	bench("dontneed", 518);
	bench("dontneed", 16384);
	bench("exit", 16384);
	bench("fork_exit", 16384);
	bench("memfd_munmap", 4096);
	if (swap)
		bench("pageout", 4096);
	else if (!json)
		mmlab_skip("pageout", why);
	if (thp)
		bench("thp_split_mprotect", 512);
	else if (!json)
		mmlab_skip("thp_split_mprotect", "no THP in this kernel (UML has none)");
	if (swap)
		mmlab_swap_off();
	if (!json)
		ksft_finished();
	return 0;
}
