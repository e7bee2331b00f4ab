// SPDX-License-Identifier: GPL-2.0
/*
 * bench: what unmapping costs, in ns per 4 KiB page, with the mmu_gather
 * counters of each run (absent, -1, on a kernel without the series):
 * munmap and MADV_DONTNEED across the gather's sizes (the 8-page bundle,
 * one batch, past the batch cap), exit of a process with 64 MiB RSS,
 * fork + exit of one, munmap of a dirty MAP_SHARED memfd, MADV_PAGEOUT to
 * zram, and (x86) a THP split by mprotect; and, between two NUMA nodes
 * with R = 1..3 threads of this process spinning on the other CPUs, page
 * migration (move_pages(2) node 0 -> 1 -> 0) and THP splits in place
 * (split_huge_page of PTE-mapped THPs): what batching their TLB flushes
 * saves, with the TLB shootdown IPIs received and the pages migrated per
 * run.
 *
 * Without arguments it is a test like the others: one run of each, data
 * checked, TAP. "bench -r N" (make bench) prints one JSON line per
 * workload with the median of N runs, for scripts/mmlab/bench.py.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include "mmlab.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define HPAGE (2UL << 20)
#define MPOL_MF_MOVE (1 << 1)
#define MAX_REMOTE 3

/*
 * Runs per workload; migrate and thp_split with remote threads take 3 at
 * most (a run of migrate is 12 s of TCG: 256 MiB moved twice). Under make
 * bench the others take more where their runs are short (bench()).
 */
#define MAX_RUNS 64
#define MIN_MEASURED_NS 250e6
static int all_reps = 1, remote_reps = 1, json;

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

/* What a run counted; -1 for a counter this kernel does not have. */
struct counts { long long flush, alloc, freed, ipis, migrated, mig_failed; };
struct sample { double ns; struct counts c; };

static long long ev(const char *name) { return mmlab_vmstat(name); }

/* TLB shootdown IPIs received by all CPUs so far (/proc/interrupts), or -1. */
static long long tlb_ipis(void)
{
	char line[1024], *p, *end;
	long long sum = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "TLB:", 4))
			continue;
		sum = 0;
		for (p += 4;; p = end) {
			long long v = strtoll(p, &end, 10);

			if (end == p)
				break;
			sum += v;
		}
	}
	if (f)
		fclose(f);
	return sum;
}

static void counts_now(struct counts *c)
{
	c->flush = ev("mmu_gather_release");
	c->alloc = ev("mmu_gather_batch_alloc");
	c->freed = ev("mmu_gather_pages_released");
	c->ipis = tlb_ipis();
	c->migrated = ev("pgmigrate_success");
	c->mig_failed = ev("pgmigrate_fail");
}

static long long delta(long long before, long long after)
{
	return before < 0 ? -1 : after - before;
}

/* Say why a run of @w failed (a "#" line, which make bench keeps in its log); 1. */
static int __attribute__((format(printf, 3, 4))) why(const char *w, int remote,
						      const char *fmt, ...)
{
	va_list ap;

	printf("# %s R=%d: ", w, remote);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return 1;
}

/*
 * R threads of this process on CPUs 1..R, spinning with pause while the
 * main thread (CPU 0) migrates or splits: the mm runs on those CPUs, so
 * each TLB flush of it sends them an IPI. Under single-threaded TCG a vCPU
 * runs only when the round-robin gets to it; pause ends its turn, so an IPI
 * is answered as soon as the sender waits, as on real hardware.
 */
static atomic_int spin_stop;

static void *spinner(void *arg)
{
	if (mmlab_pin((int)(long)arg))
		return (void *)1L;
	while (!atomic_load_explicit(&spin_stop, memory_order_relaxed))
		__builtin_ia32_pause();
	return NULL;
}

static pthread_t spinners[MAX_REMOTE];
static int nspinners;

static int remote_start(int remote)
{
	atomic_store(&spin_stop, 0);
	if (mmlab_pin(0))
		return -1;
	for (nspinners = 0; nspinners < remote; nspinners++)
		if (pthread_create(&spinners[nspinners], NULL, spinner, (void *)(long)(nspinners + 1)))
			return -1;
	usleep(10000);	/* let them reach their CPUs */
	return 0;
}

/* Stop the spinners; -1 if one could not run on its CPU. */
static int remote_stop(void)
{
	void *rc;
	int bad = 0;

	atomic_store(&spin_stop, 1);
	while (nspinners)
		bad |= pthread_join(spinners[--nspinners], &rc) || rc;
	return bad ? -1 : 0;
}

/* Move @n pages of @p to @node; the pages left behind (0 when all moved), or -1. */
static long move_all(char *p, size_t n, int node, void **pages, int *nodes, int *status)
{
	long rc;

	for (size_t i = 0; i < n; i++) {
		pages[i] = p + i * MMLAB_PAGE;
		nodes[i] = node;
	}
	if (mmlab_move_pages(n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		return -1;
	rc = 0;
	for (size_t i = 0; i < n; i++)
		rc += status[i] != node;
	return rc;
}

/*
 * One run of @w on @npages pages (@remote spinning threads for migrate and
 * thp_split): the time of the measured step only.
 */
static int run_once(const char *w, size_t npages, int remote, struct sample *s)
{
	struct counts c0, c1;
	double t0 = 0, t1 = 0;
	int bad = 0;

	/* from here, or from just before the measured step where it is set up first */
	counts_now(&c0);

	if (!strcmp(w, "munmap") || !strcmp(w, "dontneed")) {
		char *p = populated(npages);

		counts_now(&c0);
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
			counts_now(&c0);
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
		counts_now(&c0);
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
		/* the PMD of each THP split by an mprotect() of its 6th page */
		size_t thps = npages / 512, len = thps * HPAGE;
		char *r = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *p = (char *)(((unsigned long)r + HPAGE - 1) & ~(HPAGE - 1));

		madvise(p, len, MADV_HUGEPAGE);
		mmlab_fill(p, 0, npages, 6);
		t0 = now_ns();
		for (size_t i = 0; i < thps; i++)
			bad |= mprotect(p + i * HPAGE + 5 * MMLAB_PAGE, MMLAB_PAGE, PROT_READ);
		t1 = now_ns();
		bad |= mmlab_check(p, 0, npages, 6, "split THP") != 0;
		munmap(r, len + HPAGE);
	} else if (!strcmp(w, "migrate")) {
		/* node 0 -> 1 -> 0: ns per page moved, two moves per page */
		char *p = mmlab_map(npages);
		void **pages = malloc(npages * sizeof(*pages));
		int *nodes = malloc(npages * sizeof(*nodes));
		int *status = malloc(npages * sizeof(*status));

		long left[3] = { 0, 0, 0 };

		madvise(p, npages * MMLAB_PAGE, MADV_NOHUGEPAGE);
		if (!pages || !nodes || !status || remote_start(remote))
			bad = why(w, remote, "no memory or no remote threads");
		mmlab_fill(p, 0, npages, 7);	/* first touch on CPU 0: node 0 */
		left[0] = move_all(p, npages, 0, pages, nodes, status);
		counts_now(&c0);
		t0 = now_ns();
		left[1] = move_all(p, npages, 1, pages, nodes, status);
		left[2] = move_all(p, npages, 0, pages, nodes, status);
		t1 = now_ns();
		npages *= 2;
		if (left[0] || left[1] || left[2])
			bad = why(w, remote, "move_pages to nodes 0, 1, 0 left %ld, %ld, %ld pages "
				  "(-1: it failed)", left[0], left[1], left[2]);
		if (remote_stop())
			bad = why(w, remote, "a remote thread could not run on its CPU");
		bad |= mmlab_check(p, 0, npages / 2, 7, "after migration") != 0;
		munmap(p, npages / 2 * MMLAB_PAGE);
		free(pages);
		free(nodes);
		free(status);
	} else if (!strcmp(w, "thp_split")) {
		/*
		 * THPs mapped by PTEs (an mprotect() of one page splits each
		 * PMD, the folio stays whole, as after a partial munmap), split
		 * in place by split_huge_page: its unmap_folio() clears 512
		 * PTEs per THP, which is what batching its flush saves. (A
		 * PMD-mapped THP becomes migration entries under one PMD
		 * flush, batched or not.) ns per 4 KiB page split.
		 */
		size_t thps = npages / 512, len = thps * HPAGE;
		char *r = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *p = (char *)(((unsigned long)r + HPAGE - 1) & ~(HPAGE - 1));
		long have;
		int tries = 0;

		madvise(p, len, MADV_HUGEPAGE);
		bad = remote_start(remote);
		mmlab_fill(p, 0, npages, 8);
		have = mmlab_thps(p, thps);
		if (have != (long)thps)
			bad = why(w, remote, "%ld of %zu THPs after the faults", have, thps);
		for (size_t i = 0; !bad && i < thps; i++)
			if (mprotect(p + i * HPAGE, MMLAB_PAGE, PROT_READ) ||
			    mprotect(p + i * HPAGE, MMLAB_PAGE, PROT_READ | PROT_WRITE))
				bad = why(w, remote, "mprotect: %s", strerror(errno));
		counts_now(&c0);
		t0 = now_ns();
		/* it skips a THP it cannot lock or pin at once: ask again */
		while (!bad && (have = mmlab_thps(p, thps)) && tries++ < 10) {
			if (tries > 1)
				usleep(1000);
			if (mmlab_split_thps(p, len))
				bad = why(w, remote, "split_huge_pages: %s", strerror(errno));
		}
		t1 = now_ns();
		if (!bad && have)
			bad = why(w, remote, "%ld of %zu THPs left after %d splits", have, thps,
				  tries - 1);
		if (remote_stop())
			bad = why(w, remote, "a remote thread could not run on its CPU");
		bad |= mmlab_check(p, 0, npages, 8, "after the THP split") != 0;
		munmap(r, len + HPAGE);
	}
	counts_now(&c1);
	s->ns = (t1 - t0) / npages;
	s->c.flush = delta(c0.flush, c1.flush);
	s->c.alloc = delta(c0.alloc, c1.alloc);
	s->c.freed = delta(c0.freed, c1.freed);
	s->c.ipis = delta(c0.ipis, c1.ipis);
	s->c.migrated = delta(c0.migrated, c1.migrated);
	s->c.mig_failed = delta(c0.mig_failed, c1.mig_failed);
	return bad ? -1 : 0;
}

static int cmp(const void *a, const void *b)
{
	double x = ((const struct sample *)a)->ns, y = ((const struct sample *)b)->ns;

	return x < y ? -1 : x > y;
}

static void bench(const char *w, size_t npages, int remote)
{
	struct sample s[MAX_RUNS], m;
	char name[40];
	int i, bad = 0, reps = remote ? remote_reps : all_reps;

	for (i = 0; i < reps; i++) {
		bad |= run_once(w, npages, remote, &s[i]);
		/*
		 * make bench: as many runs as make MIN_MEASURED_NS of measured
		 * time (at most MAX_RUNS), sized by the first. A munmap of 8
		 * pages is 0.8 ms of TCG and a timer tick or a translation
		 * cache flush moved its median by 20 % between boots.
		 */
		if (json && !remote && !i && reps < MAX_RUNS &&
		    s[0].ns * npages * reps < MIN_MEASURED_NS) {
			double want = MIN_MEASURED_NS / (s[0].ns * npages) + 1;

			reps = want < MAX_RUNS ? (int)want : MAX_RUNS;
		}
	}
	if (json) {
		/* the counters of every run, in run order: they should not vary */
		/* unit_pages: what ns_per_page divides by (migrate: 2 moves a page) */
		printf("bench {\"workload\": \"%s\", \"pages\": %zu, \"unit_pages\": %zu, "
		       "\"remote\": %d, \"runs\": [", w, npages,
		       strcmp(w, "migrate") ? npages : 2 * npages, remote);
		for (i = 0; i < reps; i++)
			printf("%s{\"ns_per_page\": %.1f, \"tlb_ipis\": %lld, \"pgmigrate_success\": %lld, "
			       "\"pgmigrate_fail\": %lld}", i ? ", " : "", s[i].ns, s[i].c.ipis,
			       s[i].c.migrated, s[i].c.mig_failed);
		printf("], ");
	}
	qsort(s, reps, sizeof(s[0]), cmp);
	m = s[reps / 2];
	snprintf(name, sizeof(name), remote ? "%s R=%d" : "%s", w, remote);
	if (json)
		printf("\"ns_per_page\": %.1f, \"flushes\": %lld, \"batch_allocs\": %lld, "
		       "\"pages_freed\": %lld, \"tlb_ipis\": %lld, \"pgmigrate_success\": %lld, "
		       "\"pgmigrate_fail\": %lld, \"ok\": %d}\n",
		       m.ns, m.c.flush, m.c.alloc, m.c.freed, m.c.ipis, m.c.migrated,
		       m.c.mig_failed, !bad);
	else
		ksft_test_result(!bad, "%s %zu pages: %.1f ns/page, flushes %lld, batch allocs %lld, "
				 "TLB IPIs %lld, migrated %lld\n", name, npages, m.ns, m.c.flush,
				 m.c.alloc, m.c.ipis, m.c.migrated);
}

/*
 * @w with R = 1..@rmax remote threads, unless @why says what it lacks: a
 * skip as a test, an error for make bench (which must not lose a workload).
 */
static void remote_bench(const char *w, const char *why, size_t npages, int rmax)
{
	if (*why && json)
		ksft_exit_fail_msg("%s: %s\n", w, why);
	if (*why) {
		mmlab_skip(w, why);
		return;
	}
	for (int r = 1; r <= rmax; r++)
		bench(w, npages, r);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 9, 518, 4096, 16384 };
	char why[128], few_cpus[64] = "";
	int thp = !access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK);
	int split = !access("/sys/kernel/debug/split_huge_pages", W_OK);
	int numa = !access("/sys/devices/system/node/node1", F_OK);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int swap, opt, rmax;
	size_t i;

	while ((opt = getopt(argc, argv, "r:")) != -1) {
		if (opt == 'r')
			all_reps = atoi(optarg);
	}
	if (all_reps < 1 || all_reps > 32)
		ksft_exit_fail_msg("-r takes 1..32\n");
	remote_reps = all_reps < 3 ? all_reps : 3;
	json = all_reps > 1;
	/*
	 * make bench: R = 1..3, or 1..CPUs - 1 with fewer (multi-threaded TCG
	 * gets a vCPU per host core; bench.py checks which R ran); as a test:
	 * R = 1, small.
	 */
	rmax = json ? MAX_REMOTE : 1;
	if (json && cpus > 1 && cpus <= rmax)
		rmax = cpus - 1;
	if (!json)
		mmlab_need_mem(160);	/* 64 MiB RSS, 64 MiB zram swap */
	swap = !mmlab_swap_on(64, why, sizeof(why));
	if (!json) {
		ksft_print_header();
		ksft_set_plan(14);
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		bench("munmap", sizes[i], 0);
	bench("dontneed", 518, 0);
	bench("dontneed", 16384, 0);
	bench("exit", 16384, 0);
	bench("fork_exit", 16384, 0);
	bench("memfd_munmap", 4096, 0);
	if (swap)
		bench("pageout", 4096, 0);
	else if (!json)
		mmlab_skip("pageout", why);
	if (thp)
		bench("thp_split_mprotect", json ? 16384 : 512, 0);	/* 32 THPs; 1 */
	else if (!json)
		mmlab_skip("thp_split_mprotect", "no THP in this kernel (UML has none)");
	if (cpus <= rmax)
		snprintf(few_cpus, sizeof(few_cpus), "needs %d CPUs, %ld online", rmax + 1, cpus);
	remote_bench("migrate", !numa ? "needs 2 NUMA nodes, this kernel has 1" : few_cpus,
		     json ? 65536 : 1024, rmax);	/* 256 MiB; 4 MiB */
	remote_bench("thp_split", !thp ? "no THP in this kernel (UML has none)" :
		     !split ? "no debugfs split_huge_pages (CONFIG_DEBUG_FS)" : few_cpus,
		     json ? 16384 : 2048, rmax);	/* 32 THPs; 4 */
	if (swap)
		mmlab_swap_off();
	if (!json)
		ksft_finished();
	return 0;
}
