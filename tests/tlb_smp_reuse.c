// SPDX-License-Identifier: GPL-2.0
/*
 * tlb_smp_reuse: munmap() on one CPU while another reads the mapping, then
 * reuse of the freed pages. A reader thread on CPU 0 keeps reading a
 * mapping (so its TLB holds the translations); a thread on CPU 1 munmaps
 * it, puts a PROT_NONE placeholder at the same address (so no new mapping
 * can legitimately appear there), then maps fresh memory and fills it with
 * a new pattern, which reuses the just-freed pages (same CPU, per-cpu free
 * lists are LIFO). The reader must only ever see the old pattern, or
 * SIGSEGV.
 *
 * What this checks is that the shootdown reached CPU 0 by the time
 * munmap() returned. It cannot see the order of the flush and the free
 * inside munmap(): the pages are reused only after munmap() returns, when
 * any flush, even one issued after the free, has completed. That order is
 * checked by the KUnit case mmu_gather.gather_flushes_before_release.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include "mmlab.h"

#define NPAGES		64
#define FRESH_PAGES	256
#define ITERATIONS	400
#define TIME_LIMIT_S	60

#define OLD(it, pg, w)	(0x01d0000000000000ULL | ((uint64_t)(it) << 24) | ((pg) << 12) | (w))
#define NEW(it, pg, w)	(0x0e30000000000000ULL | ((uint64_t)(it) << 24) | ((pg) << 12) | (w))

static char *_Atomic region;
static atomic_int cur_iter = -1, reader_started = -1, reader_faulted = -1;
static atomic_int stop;
static atomic_long reads, bad_reads, new_reads;
static uint64_t first_bad;
static __thread sigjmp_buf reader_jmp;

static void on_segv(int sig)
{
	siglongjmp(reader_jmp, sig);
}

static void *reader(void *arg)
{
	int seen = -1;

	(void)arg;
	if (mmlab_pin(0))
		ksft_print_msg("reader: cannot pin to CPU 0\n");
	while (!atomic_load(&stop)) {
		int it = atomic_load(&cur_iter);
		volatile uint64_t *p;

		if (it == seen) {
			sched_yield();
			continue;
		}
		p = (volatile uint64_t *)atomic_load(&region);
		if (sigsetjmp(reader_jmp, 1)) {
			/* SIGSEGV: the unmap is visible here, as it must be. */
			atomic_store(&reader_faulted, it);
			seen = it;
			continue;
		}
		atomic_store(&reader_started, it);
		for (;;) {
			for (uint64_t pg = 0; pg < NPAGES; pg++) {
				for (uint64_t w = 0; w < MMLAB_WORDS; w += 64) {
					uint64_t v = p[pg * MMLAB_WORDS + w];

					atomic_fetch_add_explicit(&reads, 1, memory_order_relaxed);
					if (v == OLD(it, pg, w))
						continue;
					if (!atomic_fetch_add(&bad_reads, 1))
						first_bad = v;
					if ((v >> 52) == (NEW(0, 0, 0) >> 52))
						atomic_fetch_add(&new_reads, 1);
				}
			}
			if (atomic_load(&stop))
				return NULL;
		}
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_segv };
	struct timespec t0, t1;
	pthread_t thr;
	int it, done = 0, unfaulted = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	ksft_print_header();
	if (ncpu < 2)
		ksft_exit_skip("needs 2 CPUs, this kernel has %ld (UML and sh4's r2d have no SMP)\n", ncpu);
	ksft_set_plan(2);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	if (mmlab_pin(1))
		ksft_exit_fail_msg("cannot pin to CPU 1\n");
	if (pthread_create(&thr, NULL, reader, NULL))
		ksft_exit_fail_msg("pthread_create\n");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (it = 0; it < ITERATIONS; it++) {
		uint64_t *r = mmap(NULL, NPAGES * MMLAB_PAGE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		uint64_t *fresh, *hold;

		if (r == MAP_FAILED)
			ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
		for (uint64_t pg = 0; pg < NPAGES; pg++)
			for (uint64_t w = 0; w < MMLAB_WORDS; w++)
				r[pg * MMLAB_WORDS + w] = OLD(it, pg, w);
		atomic_store(&region, (char *)r);
		atomic_store(&cur_iter, it);
		while (atomic_load(&reader_started) != it)
			sched_yield();

		if (munmap(r, NPAGES * MMLAB_PAGE))
			ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
		hold = mmap(r, NPAGES * MMLAB_PAGE, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		fresh = mmap(NULL, FRESH_PAGES * MMLAB_PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (hold == MAP_FAILED || fresh == MAP_FAILED)
			ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
		for (uint64_t pg = 0; pg < FRESH_PAGES; pg++)
			for (uint64_t w = 0; w < MMLAB_WORDS; w++)
				fresh[pg * MMLAB_WORDS + w] = NEW(it, pg % NPAGES, w);

		/*
		 * The reader must trip over the hole before the placeholder
		 * goes: after that the address may be mapped again.
		 */
		clock_gettime(CLOCK_MONOTONIC, &t1);
		while (atomic_load(&reader_faulted) != it) {
			struct timespec now;

			sched_yield();
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t1.tv_sec > 10)
				break;
		}
		if (atomic_load(&reader_faulted) != it) {
			unfaulted++;
			ksft_print_msg("iteration %d: the reader did not fault within 10 s\n", it);
			done++;
			break;
		}
		munmap(fresh, FRESH_PAGES * MMLAB_PAGE);
		munmap(hold, NPAGES * MMLAB_PAGE);
		done++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > TIME_LIMIT_S)
			break;
	}
	atomic_store(&stop, 1);
	pthread_join(thr, NULL);

	ksft_print_msg("%d iterations, %ld reads on CPU 0, %ld unexpected (%ld of the new pattern)\n",
		       done, atomic_load(&reads), atomic_load(&bad_reads), atomic_load(&new_reads));
	if (atomic_load(&bad_reads))
		ksft_print_msg("first unexpected value %#llx\n", (unsigned long long)first_bad);
	ksft_test_result(!atomic_load(&bad_reads),
			 "reader on CPU 0 never saw the pages' reuse after munmap() returned on CPU 1\n");
	ksft_test_result(done > 0 && !unfaulted,
			 "the unmap reached CPU 0: SIGSEGV in %d of %d iterations\n",
			 done - unfaulted, done);
	ksft_finished();
}
