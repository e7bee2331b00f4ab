// SPDX-License-Identifier: GPL-2.0
/*
 * gather_hold: one thread of this process zaps part of a shared anonymous
 * range with MADV_DONTNEED and is held inside its mmu_gather
 * (CONFIG_DEBUG_MM_HOLD, /sys/kernel/debug/mm_hold/), while the other
 * threads read the zapped pages through whatever translation they still
 * have and write the pages around them. Then it is let go.
 *
 *  - held before the gather's last TLB flush (gather_finish): the PTEs
 *    are cleared, the pages not freed. A reader sees each page's old data
 *    (a stale translation) or zeros (it faulted): never anything else.
 *    Where the gather spans VMAs (x86: MMU_GATHER_MERGE_VMAS) this flush
 *    is the only one and readers on other CPUs see the old data; UML
 *    flushes each VMA as it ends (tlb_end_vma()), so there they fault.
 *  - held after that flush and before the pages are freed
 *    (gather_flushed): no translation is left, so a reader faults and sees
 *    zeros, never the old data, and never a freed page (page_poison=1
 *    fills a freed page with 0xaa: a gather that freed before it flushed
 *    shows through the stale translation).
 *
 * Either way the zapped pages read zero afterwards, the pages around them
 * keep every byte the writers put there, and the held thread saw its call
 * succeed. UML runs the other threads while the zapper sleeps at the hold;
 * on SMP they run on the other CPUs.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include "mmlab.h"

#define HOLD_DIR	"/sys/kernel/debug/mm_hold/"
#define NPAGES		64		/* the shared range */
#define ZAP_FIRST	16		/* MADV_DONTNEED of pages 16..47 */
#define ZAP_PAGES	32
#define SEED		7
#define READS		200		/* passes over the zapped pages while held */

static char *base;
static atomic_int zap_go, zap_done, zapper_tid;
static int zap_err;

static void *zapper(void *arg)
{
	(void)arg;
	atomic_store(&zapper_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&zap_go))
		sched_yield();
	zap_err = madvise(base + ZAP_FIRST * MMLAB_PAGE, ZAP_PAGES * MMLAB_PAGE,
			  MADV_DONTNEED) ? errno : 0;
	atomic_store(&zap_done, 1);
	return NULL;
}

/*
 * "held TID", "armed TID", ... from the point's file; 0 if unreadable.
 * With open() and read() into the caller's buffer: while the zapper is
 * held it holds mmap_lock for reading, and a malloc() that grew the heap
 * would wait for it behind brk()'s write lock.
 */
static int hold_state(const char *point, char *state, size_t len)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), HOLD_DIR "%s", point);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, state, len - 1);
	close(fd);
	if (n <= 0)
		return 0;
	state[n] = 0;
	state[strcspn(state, "\n")] = 0;
	return 1;
}

static int hold_write(const char *point, const char *what)
{
	char path[128];

	snprintf(path, sizeof(path), HOLD_DIR "%s", point);
	return mmlab_write_file(path, what);
}

/*
 * What the zapped pages hold now: each page must read all its old data
 * (a stale translation) or all zeros (it faulted). Counts the pages of
 * each kind; returns those that were neither, reporting the first.
 */
static size_t classify(size_t *stale, size_t *zero)
{
	size_t bad = 0;

	for (size_t pg = ZAP_FIRST; pg < ZAP_FIRST + ZAP_PAGES; pg++) {
		const volatile uint64_t *p = (const uint64_t *)(base + pg * MMLAB_PAGE);
		size_t old = 0, nul = 0, w;
		uint64_t v = 0;

		for (w = 0; w < MMLAB_WORDS; w++) {
			v = p[w];
			if (v == mmlab_word(SEED, pg, w))
				old++;
			else if (!v)
				nul++;
			else
				break;
		}
		if (old == MMLAB_WORDS) {
			(*stale)++;
		} else if (nul == MMLAB_WORDS) {
			(*zero)++;
		} else {
			if (!bad)
				ksft_print_msg("page %zu word %zu reads %#llx (%zu old words, %zu zero before it)%s\n",
					       pg, w < MMLAB_WORDS ? w : MMLAB_WORDS - 1,
					       (unsigned long long)v, old, nul,
					       (v & 0xffffffff) == 0xaaaaaaaa ?
					       ": page_poison's pattern, a freed page" : "");
			bad++;
		}
	}
	return bad;
}

/* One zap held at @point; returns the failed checks. */
static int held_zap(const char *point, int allow_stale)
{
	char state[64], want[64];
	size_t stale = 0, zero = 0, bad = 0, reads;
	pthread_t z;
	int fails = 0, i;

	mmlab_fill(base, 0, NPAGES, SEED);
	atomic_store(&zap_go, 0);
	atomic_store(&zap_done, 0);
	atomic_store(&zapper_tid, 0);
	if (pthread_create(&z, NULL, zapper, NULL))
		ksft_exit_fail_msg("pthread_create: %s\n", strerror(errno));
	while (!atomic_load(&zapper_tid))
		sched_yield();
	snprintf(want, sizeof(want), "%d", atomic_load(&zapper_tid));
	if (hold_write(point, want))
		ksft_exit_fail_msg("arming %s for %s: %s\n", point, want, strerror(errno));
	atomic_store(&zap_go, 1);

	/* wait up to 5 s for "held TID" */
	snprintf(want, sizeof(want), "held %d", atomic_load(&zapper_tid));
	for (i = 0; i < 5000; i++) {
		if (hold_state(point, state, sizeof(state)) && !strcmp(state, want))
			break;
		if (atomic_load(&zap_done))
			break;
		usleep(1000);
	}
	if (strcmp(state, want)) {
		ksft_print_msg("%s: the zapper was not held (state \"%s\", madvise %s)\n",
			       point, state, atomic_load(&zap_done) ? "returned" : "running");
		fails++;
	} else {
		/* read through what translations are left; write around them */
		for (reads = 0; reads < READS; reads++) {
			bad += classify(&stale, &zero);
			mmlab_fill(base, 0, ZAP_FIRST, SEED + 1 + reads);
			mmlab_fill(base, ZAP_FIRST + ZAP_PAGES, NPAGES - ZAP_FIRST - ZAP_PAGES,
				   SEED + 1 + reads);
		}
		if (atomic_load(&zap_done)) {
			ksft_print_msg("%s: madvise() returned while held\n", point);
			fails++;
		}
		ksft_print_msg("%s: while held, %zu page reads saw the old data (stale), %zu saw zeros, %zu neither\n",
			       point, stale, zero, bad);
		if (bad)
			fails++;
		if (!allow_stale && stale) {
			ksft_print_msg("%s: the TLB was flushed, yet %zu reads saw the old data\n",
				       point, stale);
			fails++;
		}
	}
	if (hold_write(point, "release")) {
		ksft_print_msg("%s: release: %s\n", point, strerror(errno));
		fails++;
	}
	pthread_join(z, NULL);
	if (zap_err) {
		ksft_print_msg("%s: madvise: %s\n", point, strerror(zap_err));
		fails++;
	}
	fails += !!mmlab_check(base, ZAP_FIRST, ZAP_PAGES, 0, "zapped pages after the call");
	fails += !!mmlab_check(base, 0, ZAP_FIRST, SEED + READS, "pages before the zapped ones");
	fails += !!mmlab_check(base, ZAP_FIRST + ZAP_PAGES, NPAGES - ZAP_FIRST - ZAP_PAGES,
			       SEED + READS, "pages after the zapped ones");
	return fails;
}

int main(void)
{
	char state[64];

	ksft_print_header();
	if (access(HOLD_DIR "gather_finish", W_OK))
		ksft_exit_skip("no " HOLD_DIR "gather_finish (CONFIG_DEBUG_MM_HOLD, debugfs): %s\n",
			       strerror(errno));
	if (!hold_state("gather_finish", state, sizeof(state)) || strcmp(state, "idle"))
		ksft_exit_fail_msg("gather_finish is not idle: \"%s\"\n", state);
	ksft_set_plan(2);
	base = mmlab_map(NPAGES);

	ksft_test_result(!held_zap("gather_finish", 1),
			 "held before the last flush: old data or zeros, nothing else; afterwards zero, neighbours intact\n");
	ksft_test_result(!held_zap("gather_flushed", 0),
			 "held between the flush and the free: zeros only (no stale data, no freed page)\n");
	ksft_finished();
}
