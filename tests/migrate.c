// SPDX-License-Identifier: GPL-2.0
/*
 * migrate: pages moved between two NUMA nodes while threads on every CPU
 * keep writing them. The main thread (CPU 0) moves a region back and
 * forth; each writer (one per CPU, CPU 0 included) owns every Wth page
 * and, page after page, reads the page's counter word, checks that it
 * still holds the value it wrote last, and writes the next one. A write that went to
 * the old page through a stale TLB entry after migration copied that page
 * is lost: the writer's next read of the new page finds its previous value
 * and the case fails. The writer on CPU 0 is there for QEMU's
 * single-threaded TCG, which runs one vCPU at a time for up to 100 ms: the
 * other vCPUs rarely run inside the short window between a copy and the
 * flush, but the scheduler of CPU 0 preempts the migration at its
 * cond_resched() points, and CPU 0's TLB holds the old entries until the
 * flush as well. After each round every page must sit on the node it
 * was sent to (move_pages(2) status) and hold its writer's last value.
 *
 * Cases: private anon 4 KiB pages (move_pages), shared anon pages
 * (mbind(MPOL_MF_MOVE)), a shmem file (migrate_pages(2)), anon THPs
 * (move_pages), and THPs mapped by PTEs split in place (debugfs
 * split_huge_pages) while the writers write them. Then, with no writers,
 * the budget: a page a pipe holds a reference to never moves, and how
 * many times migration unmapped it is counted; and an allocation failure
 * (fail_page_alloc) ends a synchronous migration at once.
 *
 * The flushes: with remote CPUs running the mm, migration used to send one
 * TLB shootdown per page; with the migration batch unmapped first and
 * flushed once (the series' batched migration), it sends at most one per
 * batch plus one per folio retried alone. The private anon case counts
 * the shootdowns this task sends (tlb:tlb_flush, reason
 * TLB_REMOTE_SEND_IPI, filtered to its pid) and checks that bound. The
 * pages each round moved, and that none failed, come from the same task's
 * migrate:mm_migrate_pages events (pgmigrate_success and pgmigrate_fail,
 * but only this task's: kcompactd migrates too). The
 * split case checks that unmapping each THP for the split flushed it (none
 * if the flush that ends unmap_folio() were missing) and sent at most one
 * shootdown for it (one per PTE without the batching). It counts the
 * flushes themselves, as the splitting CPU traces them (tlb:tlb_flush,
 * this task): a batched flush (reason TLB_LOCAL_SHOOTDOWN, no mm), and a
 * PTE flushed alone (TLB_LOCAL_MM_SHOOTDOWN).
 *
 * try_to_migrate_one() defers a PTE's flush only while another CPU runs
 * the mm. Alone, the writers keep every CPU on it and each THP gets one
 * batched flush. Beside the soak's stressors (MMLAB_SOAK set), a writer
 * preempted off its CPU takes that CPU out of the mm's cpumask, and the
 * PTEs cleared meanwhile are flushed one by one; one of those can still
 * send an IPI, when a writer comes back between the check and the flush,
 * and a flush the CPU has already caught up with is not traced at all. In
 * 600 s soaks, 4 of 9 rounds had 1 or 2 THPs of 4 flushed PTE by PTE, one
 * 701 single flushes and 5 IPIs, one 2 batched and 652 single flushes for
 * 4 THPs. There the counts are said, not checked: what the split must
 * keep there is the data, which the writers check.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include "mmlab.h"

#define NPAGES		2048		/* 8 MiB of 4 KiB pages per case */
#define NTHP		4		/* 8 MiB of THPs */
#define ROUNDS		4
#define MAX_LEFT	2		/* pages a case may ask for twice */
#define MAX_WRITERS	8
#define BATCH		512		/* NR_MAX_BATCHED_MIGRATION, x86_64 */
#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)
#define MPOL_MF_STRICT	(1 << 0)
#define TLB_FLUSH_EV	"/sys/kernel/tracing/events/tlb/tlb_flush"
#define MIGRATE_EV	"/sys/kernel/tracing/events/migrate/mm_migrate_pages"
#define TLB_LOCAL_SHOOTDOWN "2"	/* enum tlb_flush_reason */
#define TLB_LOCAL_MM_SHOOTDOWN "3"
#define TLB_REMOTE_SEND_IPI "4"
#define SPLIT_THPS	"/sys/kernel/debug/split_huge_pages"
#define FAIL_PAGE_ALLOC	"/sys/kernel/debug/fail_page_alloc"
/*
 * x86 flushes other CPUs' TLBs by IPI and traces each shootdown. arm64
 * invalidates them with broadcast TLBI instructions: no IPI, no
 * tlb:tlb_flush event, and 6.1 does not batch its migration flushes there
 * (ARCH_WANT_BATCHED_UNMAP_TLB_FLUSH is x86's alone). Elsewhere the cases
 * check the data and the page moves, and say that they count no flushes.
 */
#ifdef __x86_64__
#define COUNT_SHOOTDOWNS 1
#else
#define COUNT_SHOOTDOWNS 0
#endif

enum how { BY_MOVE_PAGES, BY_MBIND, BY_MIGRATE_PAGES, BY_SPLIT };

static char *region;
static size_t region_pages;
static int nwriters;
static int beside_stressors;	/* MMLAB_SOAK: the soak's stressors share the CPUs */
static atomic_int stop, running;
static atomic_long writes, lost;
static long first_lost_page = -1;
static uint64_t first_got, first_want;

struct writer {
	pthread_t thr;
	int idx, cpu;
	uint64_t *last;		/* private: the value last written per owned page */
};

static struct writer writers[MAX_WRITERS];

static void *writer(void *arg)
{
	struct writer *w = arg;
	size_t n = 0;

	if (mmlab_pin(w->cpu))
		ksft_print_msg("writer %d: cannot pin to CPU %d\n", w->idx, w->cpu);
	atomic_fetch_add(&running, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (size_t pg = w->idx, i = 0; pg < region_pages; pg += nwriters, i++) {
			volatile uint64_t *word = (volatile uint64_t *)(region + pg * MMLAB_PAGE);
			uint64_t got = *word;

			if (got != w->last[i]) {
				if (!atomic_fetch_add(&lost, 1)) {
					first_lost_page = pg;
					first_got = got;
					first_want = w->last[i];
				}
				w->last[i] = got;	/* report each loss once */
			}
			*word = ++w->last[i];
			n++;
		}
	}
	atomic_fetch_add(&writes, n);
	return NULL;
}

/*
 * Move the whole region to @node; 0 or an error message. With @leave,
 * pages left behind are no error: the caller checks where they are.
 */
static const char *move_region(enum how how, int node, int from, int leave)
{
	static char why[160];
	unsigned long to_mask = 1UL << node, from_mask = 1UL << from;
	size_t n = region_pages;
	void **pages = malloc(n * sizeof(*pages));
	int *nodes = malloc(n * sizeof(*nodes)), *status = malloc(n * sizeof(*status));
	long rc = 0;
	int err;

	switch (how) {
	case BY_MOVE_PAGES:
		for (size_t i = 0; i < n; i++) {
			pages[i] = region + i * MMLAB_PAGE;
			nodes[i] = node;
		}
		rc = mmlab_move_pages(n, pages, nodes, status, MPOL_MF_MOVE);
		break;
	case BY_MBIND:
		rc = syscall(SYS_mbind, region, n * MMLAB_PAGE, MPOL_BIND, &to_mask,
			     sizeof(to_mask) * 8, MPOL_MF_MOVE | MPOL_MF_STRICT);
		break;
	case BY_MIGRATE_PAGES:
		rc = syscall(SYS_migrate_pages, 0, sizeof(from_mask) * 8, &from_mask, &to_mask);
		break;
	case BY_SPLIT:
		break;
	}
	err = errno;
	free(pages);
	free(nodes);
	free(status);
	/* mbind(MPOL_MF_STRICT) says EIO for pages it could not move. */
	if (rc < 0 && !(leave && how == BY_MBIND && err == EIO)) {
		snprintf(why, sizeof(why), "migration to node %d: %s", node, strerror(err));
		return why;
	}
	if (rc > 0 && how != BY_MIGRATE_PAGES && !leave) {
		snprintf(why, sizeof(why), "migration to node %d left %ld pages behind", node, rc);
		return why;
	}
	return NULL;
}

/* Split the THPs of the region (mapped by PTEs); 0 or an error message. */
static const char *split_region(void)
{
	static char why[160];

	if (mmlab_split_thps(region, region_pages * MMLAB_PAGE)) {
		snprintf(why, sizeof(why), "writing to %s: %s", SPLIT_THPS, strerror(errno));
		return why;
	}
	return NULL;
}

/* How many pages of the region are not on @node (move_pages status query). */
static size_t pages_off_node(int node, long *first_bad, int *bad_status)
{
	size_t n = region_pages, off = 0;
	void **pages = malloc(n * sizeof(*pages));
	int *status = malloc(n * sizeof(*status));

	for (size_t i = 0; i < n; i++)
		pages[i] = region + i * MMLAB_PAGE;
	if (mmlab_move_pages(n, pages, NULL, status, 0) < 0) {
		*first_bad = 0;
		*bad_status = -errno;
		off = n;
	}
	for (size_t i = 0; !off && i < n; i++) {
		if (status[i] != node) {
			if (!off) {
				*first_bad = i;
				*bad_status = status[i];
			}
			off++;
		}
	}
	free(pages);
	free(status);
	return off;
}

/*
 * What this task's trace says since the buffer was cleared: the TLB
 * shootdowns it sent, its batched unmap flushes and its flushes of one
 * mm, and the pages its migrations moved and failed to move
 * (mm_migrate_pages, once per migrate_pages() call). 0, or -1.
 */
static int read_trace(long *ipis, long *batched, long *mm_flushes, long *moved, long *failed)
{
	char line[512];
	FILE *f = fopen("/sys/kernel/tracing/trace", "r");

	*ipis = *batched = *mm_flushes = *moved = *failed = 0;
	while (f && fgets(line, sizeof(line), f)) {
		const char *m = strstr(line, "mm_migrate_pages: nr_succeeded=");
		unsigned long ok, bad;

		if (line[0] == '#')
			continue;
		if (strstr(line, "tlb_flush:") && strstr(line, "reason:remote ipi send"))
			(*ipis)++;
		if (strstr(line, "tlb_flush:") && strstr(line, "reason:local shootdown"))
			(*batched)++;
		if (strstr(line, "tlb_flush:") && strstr(line, "reason:local mm shootdown"))
			(*mm_flushes)++;
		if (m && sscanf(m, "mm_migrate_pages: nr_succeeded=%lu nr_failed=%lu",
				&ok, &bad) == 2) {
			*moved += ok;
			*failed += bad;
		}
	}
	if (f)
		fclose(f);
	return f ? 0 : -1;
}

static void run_case(const char *name, enum how how, char *mem, size_t npages,
		     size_t thp, int count_ipis)
{
	long ipis = -1, batched = -1, mm_flushes = -1, bad_page = -1, thps = 0;
	long moved = -1, failed = -1, left = 0;
	int traced = 0, splits = 0;
	int bad_status = 0, node = 0, fail = 0;
	size_t nbatches = (npages + BATCH - 1) / BATCH;
	const char *err = NULL;
	char first_err[256] = "";

	region = mem;
	region_pages = npages;
	memset(mem, 0, npages * MMLAB_PAGE);
	atomic_store(&stop, 0);
	atomic_store(&running, 0);
	atomic_store(&lost, 0);
	atomic_store(&writes, 0);
	first_lost_page = -1;
	/* Start on node 0: every later round then moves every page. */
	if (how != BY_SPLIT &&
	    (err = move_region(how == BY_MIGRATE_PAGES ? BY_MOVE_PAGES : how, 0, 1, 0)))
		goto report;
	if (thp && (thps = mmlab_thps(mem, thp)) != (long)thp) {
		snprintf(first_err, sizeof(first_err), "%ld of %zu THPs before the first round",
			 thps, thp);
		goto report;
	}
	for (int i = 0; i < nwriters; i++) {
		writers[i].idx = i;
		writers[i].cpu = i;
		writers[i].last = calloc(npages / nwriters + 1, sizeof(uint64_t));
		if (pthread_create(&writers[i].thr, NULL, writer, &writers[i]))
			ksft_exit_fail_msg("pthread_create\n");
	}
	while (atomic_load(&running) < nwriters)
		sched_yield();
	/*
	 * The moves count IPIs only: a single-PTE flush per page (no other
	 * CPU on the mm, beside the soak's stressors) would be thousands of
	 * events, and could push this task's mm_migrate_pages events out of
	 * the trace buffer. The split counts every flush of its own.
	 */
	traced = !mmlab_write_file("/sys/kernel/tracing/trace", "") &&
		 !mmlab_trace_own_where(MIGRATE_EV, "") &&
		 (!COUNT_SHOOTDOWNS ||
		  !mmlab_trace_own_where(TLB_FLUSH_EV, how != BY_SPLIT ?
					 "reason == " TLB_REMOTE_SEND_IPI :
					 "(reason == " TLB_REMOTE_SEND_IPI
					 " || reason == " TLB_LOCAL_SHOOTDOWN
					 " || reason == " TLB_LOCAL_MM_SHOOTDOWN ")"));
	if (how == BY_SPLIT) {
		/*
		 * split_huge_pages skips a THP whose lock it cannot take or
		 * that has extra references (khugepaged may be looking at
		 * it): ask again for the ones left, a few times.
		 */
		do {
			err = split_region();
			splits++;
		} while (!err && (thps = mmlab_thps(mem, thp)) != 0 && splits < 10);
		if (!err && thps)
			snprintf(first_err, sizeof(first_err),
				 "%ld of %zu THPs left after %d splits", thps, thp, splits);
	}
	for (int round = 0; round < ROUNDS && !err && how != BY_SPLIT; round++) {
		long off;

		node = !node;
		err = move_region(how, node, !node, 1);
		if (err)
			break;
		off = pages_off_node(node, &bad_page, &bad_status);
		/*
		 * Migration gives up on a page that something still holds a
		 * reference to after its ten tries. Under QEMU's single-threaded
		 * TCG a vCPU that holds a brief one (a fault's page cache
		 * lookup) can sit preempted for a whole time slice (seen once on
		 * arm64: 1 of 8737 moves). A few such pages, once a case, are
		 * asked for again: they must move then, and the trace must count
		 * exactly them as failed.
		 */
		if (off && off <= MAX_LEFT && !left) {
			left = off;
			ksft_print_msg("%s: round %d: %ld of %zu pages left on node %d, asked again\n",
				       name, round, off, npages, !node);
			err = move_region(how, node, !node, 1);
			if (err)
				break;
			off = pages_off_node(node, &bad_page, &bad_status);
		}
		if (off && !first_err[0])
			snprintf(first_err, sizeof(first_err),
				 "round %d: %ld of %zu pages not on node %d (page %ld: %d)",
				 round, off, npages, node, bad_page, bad_status);
		/* THP migration moves each THP whole: it must not split them. */
		if (thp && (thps = mmlab_thps(mem, thp)) != (long)thp && !first_err[0])
			snprintf(first_err, sizeof(first_err), "round %d: %ld of %zu THPs left",
				 round, thps, thp);
	}
	if (COUNT_SHOOTDOWNS)
		mmlab_trace_stop(TLB_FLUSH_EV);
	mmlab_trace_stop(MIGRATE_EV);
	if (traced && read_trace(&ipis, &batched, &mm_flushes, &moved, &failed))
		traced = 0;
	atomic_store(&stop, 1);
	for (int i = 0; i < nwriters; i++) {
		pthread_join(writers[i].thr, NULL);
		for (size_t pg = i, j = 0; pg < npages; pg += nwriters, j++) {
			uint64_t got = *(uint64_t *)(mem + pg * MMLAB_PAGE);

			if (got != writers[i].last[j] && !atomic_fetch_add(&lost, 1)) {
				first_lost_page = pg;
				first_got = got;
				first_want = writers[i].last[j];
			}
		}
		free(writers[i].last);
	}
report:
	if (err) {
		ksft_print_msg("%s: %s\n", name, err);
		fail = 1;
	}
	if (first_err[0]) {
		ksft_print_msg("%s: %s\n", name, first_err);
		fail = 1;
	}
	if (atomic_load(&lost)) {
		ksft_print_msg("%s: %ld writes lost; first: page %ld holds %llu, its writer wrote %llu last\n",
			       name, atomic_load(&lost), first_lost_page,
			       (unsigned long long)first_got, (unsigned long long)first_want);
		fail = 1;
	}
	ksft_print_msg("%s: %d rounds of %zu pages, %d writers, %ld writes checked\n",
		       name, how == BY_SPLIT ? 1 : ROUNDS, npages, nwriters, atomic_load(&writes));
	if (!traced && !err && !first_err[0]) {
		ksft_print_msg("%s: no trace of this task (tracefs: %s)\n", name, MIGRATE_EV);
		fail = 1;
	} else if (!err && how != BY_SPLIT) {
		/*
		 * Every page moves once a round (migrate_pages(2) moves the
		 * rest of the process too), and none may fail but those asked
		 * for again: the writers hold no lasting references.
		 */
		size_t want = ROUNDS * npages;

		ksft_print_msg("%s: migrations moved %ld pages, %ld failed (want %s%zu, %ld)\n",
			       name, moved, failed, how == BY_MIGRATE_PAGES ? ">= " : "", want, left);
		if (failed != left || moved < (long)want ||
		    (how != BY_MIGRATE_PAGES && moved != (long)want))
			fail = 1;
	}
	if (!COUNT_SHOOTDOWNS && (how == BY_SPLIT || count_ipis)) {
		ksft_print_msg("%s: TLB shootdowns not counted: this architecture flushes other CPUs by broadcast instructions, not IPIs\n",
			       name);
	} else if (traced && !err && how == BY_SPLIT) {
		/*
		 * unmap_folio() defers the flush of each of the 512 PTEs and
		 * flushes once: one batched flush per THP, and one more each
		 * time a split unmapped a THP but then found it busy and
		 * mapped it back (at most each THP each request); none at all
		 * if the final flush is missing, 512 single flushes per THP
		 * without the batching. Beside the stressors the counts
		 * depend on where the writers ran (see the top): said only.
		 */
		long most = thp * splits;

		ksft_print_msg("%s: %ld batched TLB flushes and %ld of single PTEs for %zu THP splits in %d requests; %ld sent IPIs (want %zu..%ld batched, 0 single, <= %ld IPIs%s)\n",
			       name, batched, mm_flushes, thp, splits, ipis, thp, most, most,
			       beside_stressors ? "; not checked beside the soak's stressors" : "");
		if (!beside_stressors &&
		    (batched < (long)thp || batched > most || mm_flushes || ipis > most))
			fail = 1;
	} else if (traced && count_ipis && !err) {
		/* One per batch and round, and a few for retried folios. */
		long limit = ROUNDS * (nbatches + 8);

		ksft_print_msg("%s: %ld TLB shootdowns sent for %zu page moves (at most %ld)\n",
			       name, ipis, ROUNDS * npages, limit);
		if (ipis < 0 || ipis > limit) {
			ksft_print_msg("%s: migration flushed %s\n", name,
				       ipis < 0 ? "(trace unreadable)" : "per page, not per batch");
			fail = 1;
		}
	}
	ksft_test_result(!fail, "%s\n", name);
}

/*
 * A page that can never move: a pipe holds a reference to it (vmsplice),
 * so each try unmaps it, finds the extra reference when it moves it, and
 * maps it back. Count this task's TLB flushes during one move_pages(2) of
 * it: the test is single-threaded, so each unmap flushes its one PTE once,
 * whether the flush is deferred (TTU_BATCH_FLUSH, then a batched flush) or
 * not (no other CPU runs the mm: the PTE's own flush).
 *
 * 6.1 tries each page NR_MAX_MIGRATE_PAGES_RETRY (10) times, unmapping it
 * each time; with the series' 0005, 3 asynchronous tries and 7 in the
 * caller's mode: 10 unmaps either way (13 if the retry had a budget of its
 * own). 6.12 (upstream since 6.3) unmaps a folio once per
 * migrate_pages_batch() call and retries only its move while it stays
 * unmapped: one asynchronous call and one synchronous, 2 unmaps.
 */
static void case_unmovable(void)
{
	const char *name = "a page a pipe holds: tried the budget's times, not moved";
	int ver = mmlab_kernel_version(NULL), want = ver >= 603 ? 2 : 10;
	int pipefd[2], node = 1, status = -1, fail = 0;
	long ipis, batched, mm_flushes, moved, failed, rc;
	char *page = mmlab_map(1);
	struct iovec iov = { .iov_base = page, .iov_len = MMLAB_PAGE };
	void *pages[1] = { page };
	int to0 = 0;
	char unmaps[128] = "unmaps not counted: only x86 emits tlb:tlb_flush";

	memset(page, 7, MMLAB_PAGE);
	if (mmlab_move_pages(1, pages, &to0, &status, MPOL_MF_MOVE) < 0 || status != 0) {
		ksft_test_result_fail("%s: could not place the page on node 0 (status %d)\n",
				      name, status);
		return;
	}
	if (pipe(pipefd) || vmsplice(pipefd[1], &iov, 1, 0) != MMLAB_PAGE) {
		ksft_test_result_fail("%s: vmsplice: %s\n", name, strerror(errno));
		return;
	}
	if (mmlab_write_file("/sys/kernel/tracing/trace", "") ||
	    mmlab_trace_own_where(MIGRATE_EV, "") ||
	    (COUNT_SHOOTDOWNS &&
	     mmlab_trace_own_where(TLB_FLUSH_EV, "(reason == " TLB_LOCAL_SHOOTDOWN
				   " || reason == " TLB_LOCAL_MM_SHOOTDOWN ")"))) {
		ksft_test_result_fail("%s: cannot trace this task\n", name);
		return;
	}
	rc = mmlab_move_pages(1, pages, &node, &status, MPOL_MF_MOVE);
	if (COUNT_SHOOTDOWNS)
		mmlab_trace_stop(TLB_FLUSH_EV);
	mmlab_trace_stop(MIGRATE_EV);
	if (read_trace(&ipis, &batched, &mm_flushes, &moved, &failed))
		fail = 1;
	/* the unmaps are counted by their flushes: x86's tlb:tlb_flush */
	if (COUNT_SHOOTDOWNS) {
		snprintf(unmaps, sizeof(unmaps),
			 "%ld batched flushes and %ld of its PTE: %ld unmaps (want %d on %d.%d)",
			 batched, mm_flushes, batched + mm_flushes, want, ver / 100, ver % 100);
		if (batched + mm_flushes != want)
			fail = 1;
	}
	ksft_print_msg("%s: move_pages returned %ld (want 1 not moved); %s; migrations moved %ld, failed %ld (want 0, 1)\n",
		       name, rc, unmaps, moved, failed);
	if (rc != 1 || moved != 0 || failed != 1)
		fail = 1;
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(page, MMLAB_PAGE);
	ksft_test_result(!fail, "%s\n", name);
}

/*
 * An allocation failure ends a synchronous migration at once: the
 * migration target of the first page of a move_pages(2) call of 8 pages
 * cannot be allocated (fail_page_alloc, this task only, once: that
 * allocation is the first of its own the call makes), so the call fails
 * with ENOMEM having moved nothing, as stock 6.1 and 6.12 do. alloc_contig_range()
 * relies on it. A retry that carried on after the failure would move all 8.
 */
static void case_enomem(void)
{
	const char *name = "an allocation failure ends a synchronous migration at once";
	static const char *const set[][2] = {
		{ "ignore-gfp-wait", "N" }, { "ignore-gfp-highmem", "N" }, { "min-order", "0" },
		{ "task-filter", "Y" }, { "interval", "1" }, { "times", "1" },
		{ "verbose", "0" }, { "probability", "100" },
	};
	enum { N = 8 };
	char *mem = mmlab_map(N), path[256], times[16] = "";
	void *pages[N];
	int nodes[N], status[N], fail = 0, on0 = 0, bad = 0, err;
	long ipis, batched, mm_flushes, moved = -1, failed = -1, rc;
	FILE *f;

	if (access(FAIL_PAGE_ALLOC, F_OK)) {
		mmlab_skip(name, "no " FAIL_PAGE_ALLOC " (CONFIG_FAIL_PAGE_ALLOC)");
		return;
	}
	memset(mem, 3, N * MMLAB_PAGE);
	for (int i = 0; i < N; i++) {
		pages[i] = mem + i * MMLAB_PAGE;
		nodes[i] = 0;
	}
	if (mmlab_move_pages(N, pages, nodes, status, MPOL_MF_MOVE) != 0) {
		ksft_test_result_fail("%s: could not place the pages on node 0\n", name);
		return;
	}
	for (int i = 0; i < N; i++)
		nodes[i] = 1;
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", FAIL_PAGE_ALLOC, set[i][0]);
		bad |= mmlab_write_file(path, set[i][1]);
	}
	bad |= mmlab_write_file("/sys/kernel/tracing/trace", "") ||
	       mmlab_trace_own_where(MIGRATE_EV, "");
	if (bad) {
		ksft_test_result_fail("%s: cannot set up %s or tracing\n", name, FAIL_PAGE_ALLOC);
		return;
	}
	mmlab_write_file("/proc/self/make-it-fail", "1");
	rc = mmlab_move_pages(N, pages, nodes, status, MPOL_MF_MOVE);
	err = errno;
	mmlab_fail_attr(FAIL_PAGE_ALLOC, 0);
	mmlab_trace_stop(MIGRATE_EV);
	read_trace(&ipis, &batched, &mm_flushes, &moved, &failed);
	f = fopen(FAIL_PAGE_ALLOC "/times", "r");
	if (!f || !fgets(times, sizeof(times), f))
		strcpy(times, "?");
	if (f)
		fclose(f);
	times[strcspn(times, "\n")] = 0;
	for (int i = 0; i < N; i++)
		nodes[i] = -1;
	if (mmlab_move_pages(N, pages, NULL, status, 0) == 0)
		for (int i = 0; i < N; i++)
			on0 += status[i] == 0;
	ksft_print_msg("%s: move_pages returned %ld (%s; want -1, ENOMEM); failures left to inject %s (want 0); migrations moved %ld, failed %ld (want 0, 1); %d of %d pages on node 0 (want all)\n",
		       name, rc, rc < 0 ? strerror(err) : "no error", times, moved, failed, on0, N);
	if (rc != -1 || err != ENOMEM || strcmp(times, "0") || moved != 0 || failed != 1 ||
	    on0 != N)
		fail = 1;
	munmap(mem, N * MMLAB_PAGE);
	ksft_test_result(!fail, "%s\n", name);
}

static char *map_shared(size_t npages, int shmem_fd)
{
	char *p = mmap(NULL, npages * MMLAB_PAGE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | (shmem_fd < 0 ? MAP_ANONYMOUS : 0), shmem_fd, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap shared: %s\n", strerror(errno));
	return p;
}

int main(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t thp_len = NTHP * MMLAB_PMD_SIZE;
	char *anon, *shared, *file, *thp_raw, *thp;
	int fd;

	ksft_print_header();
	if (access("/sys/devices/system/node/node1", F_OK))
		ksft_exit_skip("needs 2 NUMA nodes, this kernel has 1 (x86_64 and arm64 boot QEMU with -numa; UML, 32-bit arm and sh4's r2d have no NUMA, QEMU's s390x describes none)\n");
	if (ncpu < 2)
		ksft_exit_skip("needs 2 CPUs, this kernel has %ld\n", ncpu);
	/* after the NUMA and CPU needs: more memory would not make it run */
	mmlab_need_mem(4 * 8 + 16);
	nwriters = ncpu > MAX_WRITERS ? MAX_WRITERS : ncpu;
	beside_stressors = getenv("MMLAB_SOAK") != NULL;
	ksft_set_plan(7);
	if (mmlab_pin(0))
		ksft_exit_fail_msg("cannot pin to CPU 0\n");

	anon = mmlab_map(NPAGES);
	madvise(anon, NPAGES * MMLAB_PAGE, MADV_NOHUGEPAGE);
	run_case("anon 4 KiB pages, move_pages", BY_MOVE_PAGES, anon, NPAGES, 0, 1);
	munmap(anon, NPAGES * MMLAB_PAGE);

	shared = map_shared(NPAGES, -1);
	run_case("shared anon pages, mbind MPOL_MF_MOVE", BY_MBIND, shared, NPAGES, 0, 0);
	munmap(shared, NPAGES * MMLAB_PAGE);

	fd = memfd_create("migrate", 0);
	if (fd < 0 || ftruncate(fd, NPAGES * MMLAB_PAGE))
		ksft_exit_fail_msg("memfd: %s\n", strerror(errno));
	file = map_shared(NPAGES, fd);
	run_case("shmem file pages, migrate_pages", BY_MIGRATE_PAGES, file, NPAGES, 0, 0);
	munmap(file, NPAGES * MMLAB_PAGE);
	close(fd);

	thp_raw = mmap(NULL, thp_len + MMLAB_PMD_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (thp_raw == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	thp = (char *)(((unsigned long)thp_raw + MMLAB_PMD_SIZE - 1) & ~(MMLAB_PMD_SIZE - 1));
	if (madvise(thp, thp_len, MADV_HUGEPAGE)) {
		mmlab_skip("anon THPs, move_pages", "no THP (madvise MADV_HUGEPAGE failed)");
		mmlab_skip("PTE-mapped THP split", "no THP (madvise MADV_HUGEPAGE failed)");
		case_unmovable();
		case_enomem();
		ksft_finished();
	}
	run_case("anon THPs, move_pages", BY_MOVE_PAGES, thp, thp_len / MMLAB_PAGE, NTHP, 0);
	munmap(thp_raw, thp_len + MMLAB_PMD_SIZE);

	/*
	 * The same THPs mapped by PTEs (an mprotect() of one page splits
	 * each PMD, the folio stays whole), then split by
	 * split_huge_pages while the writers write them.
	 */
	thp_raw = mmap(NULL, thp_len + MMLAB_PMD_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (thp_raw == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	thp = (char *)(((unsigned long)thp_raw + MMLAB_PMD_SIZE - 1) & ~(MMLAB_PMD_SIZE - 1));
	madvise(thp, thp_len, MADV_HUGEPAGE);
	memset(thp, 1, thp_len);
	for (int i = 0; i < NTHP; i++) {
		char *page = thp + i * MMLAB_PMD_SIZE + MMLAB_PAGE;

		if (mprotect(page, MMLAB_PAGE, PROT_READ) ||
		    mprotect(page, MMLAB_PAGE, PROT_READ | PROT_WRITE))
			ksft_exit_fail_msg("mprotect: %s\n", strerror(errno));
	}
	if (access(SPLIT_THPS, W_OK))
		mmlab_skip("PTE-mapped THP split", "no " SPLIT_THPS " (CONFIG_DEBUG_FS)");
	else
		run_case("PTE-mapped THP split", BY_SPLIT, thp, thp_len / MMLAB_PAGE, NTHP, 1);
	case_unmovable();
	case_enomem();
	ksft_finished();
}
