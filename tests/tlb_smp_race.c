// SPDX-License-Identifier: GPL-2.0
/*
 * tlb_smp_race: the SMP paths that mmu_gather and the x86 flush code
 * handle specially, each raced by two threads pinned to CPUs 0 and 1.
 *
 * nested zaps: both threads MADV_DONTNEED the same populated range at
 *   once, after both read it (so both TLBs hold it). One clears the PTEs,
 *   the other finds them already clear; tlb_finish_mmu() sees the other
 *   gather pending and flushes the whole mm. Right after its own
 *   madvise() returns, each thread must read zeroes only: old data
 *   means it returned before a flush reached its CPU (7a30df49f63a).
 * zap vs fault: one thread zaps a range over and over while the other
 *   writes a new value to each page and reads it back: each word must
 *   read its value or zero (zapped in between), nothing else.
 * unmap vs GUP-fast: one thread maps a 2 MiB-aligned range, fills it and
 *   maps PROT_NONE over it (which unmaps it and frees its page table),
 *   while the other pins its pages into a pipe with vmsplice(), i.e.
 *   get_user_pages_fast(), which walks the page tables without mmap_lock.
 *   Each byte of a page that comes out of the pipe must be zero or that
 *   byte of one fill's value for that word of that page, never another
 *   page's data: the walker must not have used a freed table. (A byte, not
 *   a word: the pipe's page is copied out while the other thread may still
 *   fill it, and x86's copy to user space is rep movsb, which TCG runs a
 *   byte at a time, so a word stored meanwhile can come out with some of
 *   its bytes still zero.)
 *
 * The guests boot with page_poison=1: a write through a stale TLB entry
 * to a page already freed breaks its poison, which the page allocator
 * reports when it hands the page out again (a kernel splat, exit 3).
 * Under QEMU TCG the two vCPUs take turns on one host thread, so a race
 * window is hit only when a vCPU switch falls into it: these cases show
 * the paths run and stay consistent, and catch a broken flush only by
 * chance; the KUnit cases mmu_gather.gather_nested_flushes_mm and
 * gather_full_table_batch_flushes check the same decisions exactly.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/uio.h>
#include <time.h>
#include "mmlab.h"

#define NPAGES		64
#define SECONDS		3
#define PAT(gen, pg, w)	(0x5ace000000000000ULL | ((uint64_t)(gen) << 24) | ((uint64_t)(pg) << 12) | (w))

static pthread_barrier_t bar;
static atomic_int stop;
static char *region;

/* Run fn(0) on CPU 0 and fn(1) on CPU 1; fail the test if pinning does. */
static void run_pair(void *(*fn)(void *))
{
	pthread_t thr;

	atomic_store(&stop, 0);
	pthread_barrier_init(&bar, NULL, 2);
	if (mmlab_pin(0) || pthread_create(&thr, NULL, fn, (void *)1L))
		ksft_exit_fail_msg("cannot start a thread pinned to CPU 1\n");
	fn((void *)0L);
	pthread_join(thr, NULL);
	pthread_barrier_destroy(&bar);
}

/* --- nested zaps --- */
static atomic_long nested_rounds, nested_unseen, nested_stale;

static void *nested_fn(void *arg)
{
	long me = (long)arg, rounds = 0;
	double end = mmlab_now() + SECONDS;

	if (me && mmlab_pin(1))
		ksft_exit_fail_msg("cannot pin to CPU 1\n");
	for (;;) {
		/* Thread 0 decides, for both, whether there is another round. */
		if (!me && mmlab_now() > end)
			atomic_store(&stop, 1);
		pthread_barrier_wait(&bar);
		if (atomic_load(&stop))
			break;
		if (!me)
			mmlab_fill(region, 0, NPAGES, rounds + 1);
		pthread_barrier_wait(&bar);
		if (mmlab_check(region, 0, NPAGES, rounds + 1, "before the zap"))
			atomic_fetch_add(&nested_unseen, 1);
		pthread_barrier_wait(&bar);
		if (madvise(region, NPAGES * MMLAB_PAGE, MADV_DONTNEED))
			ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
		for (size_t i = 0; i < NPAGES * MMLAB_WORDS; i++)
			if (((volatile uint64_t *)region)[i])
				atomic_fetch_add(&nested_stale, 1);
		rounds++;
	}
	if (!me)
		atomic_store(&nested_rounds, rounds);
	return NULL;
}

/* --- zap vs fault --- */
static atomic_long fault_writes, fault_zeroes, fault_bad, zaps;

static void *fault_fn(void *arg)
{
	long me = (long)arg;
	double end = mmlab_now() + SECONDS;
	uint64_t v = 0;

	if (me && mmlab_pin(1))
		ksft_exit_fail_msg("cannot pin to CPU 1\n");
	pthread_barrier_wait(&bar);
	if (!me) {
		while (mmlab_now() < end) {
			madvise(region, NPAGES * MMLAB_PAGE, MADV_DONTNEED);
			atomic_fetch_add(&zaps, 1);
		}
		atomic_store(&stop, 1);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		for (size_t pg = 0; pg < NPAGES; pg++) {
			volatile uint64_t *p = (uint64_t *)(region + pg * MMLAB_PAGE);
			uint64_t a, b;

			v++;
			p[0] = v;
			p[MMLAB_WORDS - 1] = v;
			a = p[0];
			b = p[MMLAB_WORDS - 1];
			atomic_fetch_add(&fault_writes, 1);
			if ((a != v && a) || (b != v && b))
				atomic_fetch_add(&fault_bad, 1);
			else if (!a || !b)
				atomic_fetch_add(&fault_zeroes, 1);
		}
	}
	return NULL;
}

/* --- unmap vs GUP-fast --- */
static atomic_long gup_maps, gup_pinned, gup_efault, gup_bad, gup_torn;
static atomic_int gup_gen;
static char *gup_addr;

/*
 * Whether @v is what a copy may read of a word being set from zero to
 * @want: each of its bytes zero or that byte of @want.
 */
static int bytes_of(uint64_t v, uint64_t want)
{
	for (int i = 0; i < 64; i += 8) {
		uint64_t b = v >> i & 0xff;

		if (b && b != (want >> i & 0xff))
			return 0;
	}
	return 1;
}

static void *gup_fn(void *arg)
{
	long me = (long)arg;
	double end = mmlab_now() + SECONDS;
	static uint64_t buf[MMLAB_WORDS];
	int pfd[2];
	long n = 0;

	if (me && mmlab_pin(1))
		ksft_exit_fail_msg("cannot pin to CPU 1\n");
	pthread_barrier_wait(&bar);
	if (!me) {
		for (int gen = 1; mmlab_now() < end; gen++) {
			uint64_t *p = mmap(gup_addr, MMLAB_PMD_SIZE, PROT_READ | PROT_WRITE,
					   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

			if (p == MAP_FAILED)
				ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
			atomic_store(&gup_gen, gen);
			for (size_t pg = 0; pg < NPAGES; pg++)
				for (size_t w = 0; w < MMLAB_WORDS; w++)
					p[pg * MMLAB_WORDS + w] = PAT(gen, pg, w);
			/*
			 * Back to a PROT_NONE reservation: the whole 2 MiB is
			 * unmapped first, and its page table freed with it.
			 */
			if (mmap(p, MMLAB_PMD_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED | MAP_NORESERVE, -1, 0) != p)
				ksft_exit_fail_msg("mmap PROT_NONE: %s\n", strerror(errno));
			atomic_fetch_add(&gup_maps, 1);
		}
		atomic_store(&stop, 1);
		return NULL;
	}
	if (pipe(pfd))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	fcntl(pfd[1], F_SETFL, O_NONBLOCK);
	while (!atomic_load(&stop)) {
		size_t pg = n++ % NPAGES;
		struct iovec iov = { gup_addr + pg * MMLAB_PAGE, MMLAB_PAGE };
		uint64_t gen;
		size_t w;

		if (vmsplice(pfd[1], &iov, 1, 0) != (ssize_t)MMLAB_PAGE) {
			atomic_fetch_add(&gup_efault, 1);
			continue;
		}
		if (read(pfd[0], buf, sizeof(buf)) != sizeof(buf))
			ksft_exit_fail_msg("read from the pipe: %s\n", strerror(errno));
		atomic_fetch_add(&gup_pinned, 1);
		/*
		 * One generation's fill of this very page, in any state (the
		 * pipe copies it while the other thread may still fill it):
		 * each byte zero or that byte of the generation's value for
		 * its word. The generation is the largest a word names: a
		 * word read half-stored names a smaller one, never a larger.
		 */
		for (w = 0, gen = 0; w < MMLAB_WORDS; w++)
			if ((buf[w] >> 24 & 0xffffff) > gen)
				gen = buf[w] >> 24 & 0xffffff;
		for (w = 0; w < MMLAB_WORDS; w++) {
			uint64_t want = PAT(gen, pg, w);

			if (!bytes_of(buf[w], want))
				break;
			if (buf[w] && buf[w] != want)
				atomic_fetch_add(&gup_torn, 1);
		}
		if (w != MMLAB_WORDS && !atomic_fetch_add(&gup_bad, 1))
			ksft_print_msg("page %zu word %zu: %#llx, not (a part of) %#llx (generation %llu)\n",
				       pg, w, (unsigned long long)buf[w],
				       (unsigned long long)PAT(gen, pg, w), (unsigned long long)gen);
	}
	return NULL;
}

int main(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char *res;

	ksft_print_header();
	if (ncpu < 2)
		ksft_exit_skip("needs 2 CPUs, this kernel has %ld (UML and sh4's r2d have no SMP)\n", ncpu);
	ksft_set_plan(3);
	region = mmlab_map(NPAGES);

	run_pair(nested_fn);
	ksft_test_result(nested_rounds > 0 && !nested_unseen && !nested_stale,
			 "nested zaps: %ld rounds, %ld stale words read after madvise() returned (%ld fills misread)\n",
			 atomic_load(&nested_rounds), atomic_load(&nested_stale),
			 atomic_load(&nested_unseen));

	run_pair(fault_fn);
	ksft_test_result(zaps > 0 && fault_writes > 0 && !fault_bad,
			 "zap vs fault: %ld zaps, %ld write+read pairs (%ld saw a zap between), %ld read a foreign value\n",
			 atomic_load(&zaps), atomic_load(&fault_writes),
			 atomic_load(&fault_zeroes), atomic_load(&fault_bad));

	/* 2 MiB-aligned, in a reservation that keeps everything else out. */
	res = mmap(NULL, 2 * MMLAB_PMD_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		   MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	gup_addr = (char *)(((uintptr_t)res + MMLAB_PMD_SIZE - 1) & ~(MMLAB_PMD_SIZE - 1));
	run_pair(gup_fn);
	ksft_test_result(gup_maps > 0 && gup_pinned > 0 && !gup_bad,
			 "unmap vs GUP-fast: %ld map/fill/unmap cycles, %ld pages pinned (%ld not mapped, %ld words read half-stored), %ld held wrong data\n",
			 atomic_load(&gup_maps), atomic_load(&gup_pinned),
			 atomic_load(&gup_efault), atomic_load(&gup_torn), atomic_load(&gup_bad));
	ksft_finished();
}
