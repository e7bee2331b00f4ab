// SPDX-License-Identifier: GPL-2.0
/*
 * x86_lazy_tlb: which CPUs in lazy TLB mode x86 sends a shootdown to.
 *
 * A thread of this process runs on CPU 1, touches the mapping and blocks:
 * CPU 1 goes idle with this mm still loaded (lazy TLB mode) and stays in
 * its mm_cpumask. The main thread (CPU 0) then unmaps, and CPU 1's count
 * of received TLB shootdowns ("TLB:" in /proc/interrupts, raised only by
 * flush_tlb_func() on a remote CPU) says whether it was sent one:
 *
 *  - munmap() of one page, no page table freed: a lazy CPU is skipped
 *    (it flushes when it next switches to the mm): +0;
 *  - munmap() of a whole 2 MiB range, its page table freed: every CPU of
 *    the mm is sent one, lazy or not, because a lazy CPU may still walk
 *    the freed table speculatively: +1, and CPU 1 drops the mm (it
 *    switches to init_mm, leaving the mm's cpumask);
 *  - the same again: CPU 1 is no longer in the cpumask: +0.
 *
 * Nothing else sends CPU 1 shootdowns meanwhile: each CPU is in the
 * cpumask of the one user mm it last ran, and the guest runs nothing but
 * this test. The thread runs between rounds, so each round starts lazy.
 * But once a second x86 trims the cpumask (should_trim_cpumask(), in 6.12
 * and 6.1.192): the first flush after that second with another CPU in
 * the mask IPIs every CPU of it, lazy ones too, which then leave. So each
 * round first lets that trim happen, unmeasured (CPU 1 lazy, a second
 * gone by, one page unmapped), makes CPU 1 lazy again, and measures
 * within the next second.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include "mmlab.h"

#define ROUNDS	5
#define HPAGE	MMLAB_PMD_SIZE
#define LAZY_CPU 1

static int wake[2];
static atomic_int sleeper_tid, touched;
static char *volatile target;

/* CPU LAZY_CPU's "TLB shootdowns" count, or -1. */
static long tlb_ipis(void)
{
	char line[4096];
	long v = -1;
	FILE *f = fopen("/proc/interrupts", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *p = line;

		while (*p == ' ')
			p++;
		if (strncmp(p, "TLB:", 4))
			continue;
		p += 4;
		for (int cpu = 0; cpu <= LAZY_CPU; cpu++)
			v = strtol(p, &p, 10);
		break;
	}
	if (f)
		fclose(f);
	return v;
}

/* The thread on CPU 1: touch the target, then sleep in read() until woken. */
static void *sleeper(void *arg)
{
	char c;

	(void)arg;
	if (mmlab_pin(LAZY_CPU))
		ksft_exit_fail_msg("cannot pin to CPU %d\n", LAZY_CPU);
	atomic_store(&sleeper_tid, syscall(SYS_gettid));
	while (read(wake[0], &c, 1) == 1 && c == 't') {
		target[0]++;
		atomic_fetch_add(&touched, 1);
	}
	return NULL;
}

/* Whether thread @tid sleeps (state S in its stat). */
static int sleeping(int tid)
{
	char path[64], buf[512], *p;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n > 0 ? n : 0] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* Let the thread touch @p on CPU 1, and wait until it sleeps again. */
static void run_sleeper_on(char *p)
{
	int before = atomic_load(&touched);

	target = p;
	if (write(wake[1], "t", 1) != 1)
		ksft_exit_fail_msg("write: %s\n", strerror(errno));
	while (atomic_load(&touched) == before)
		sched_yield();
	while (!sleeping(atomic_load(&sleeper_tid)))
		sched_yield();
}

/* munmap() of [@p, @p + @len): the shootdowns CPU 1 received meanwhile. */
static long ipis_during_munmap(char *p, size_t len)
{
	long n = tlb_ipis();

	if (munmap(p, len))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	return tlb_ipis() - n;
}

/* A 2 MiB-aligned, 2 MiB range with its page table filled, in a 6 MiB mapping. */
static char *map_table(char **raw)
{
	char *p;

	*raw = mmap(NULL, 3 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*raw == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	madvise(*raw, 3 * HPAGE, MADV_NOHUGEPAGE);
	p = (char *)(((unsigned long)*raw + HPAGE - 1) & ~(HPAGE - 1));
	mmlab_fill(p, 0, HPAGE / MMLAB_PAGE, 7);
	return p;
}

int main(void)
{
	long one[ROUNDS], table[ROUNDS], again[ROUNDS];
	int bad_one = 0, bad_table = 0, bad_again = 0;
	pthread_t thr;
	char c = 'q';

	ksft_print_header();
	if (access("/sys/kernel/debug/x86/tlb_single_page_flush_ceiling", F_OK))
		ksft_exit_skip("x86 only\n");
	if (sysconf(_SC_NPROCESSORS_ONLN) <= LAZY_CPU)
		ksft_exit_skip("needs 2 CPUs\n");
	if (tlb_ipis() < 0)
		ksft_exit_fail_msg("no TLB line for CPU %d in /proc/interrupts\n", LAZY_CPU);
	ksft_set_plan(3);
	if (mmlab_pin(0))
		ksft_exit_fail_msg("cannot pin to CPU 0\n");
	if (pipe(wake) || pthread_create(&thr, NULL, sleeper, NULL))
		ksft_exit_fail_msg("pipe or pthread_create: %s\n", strerror(errno));

	for (int r = 0; r < ROUNDS; r++) {
		char *raw, *p = map_table(&raw), *raw2, *p2 = map_table(&raw2);

		/* the once-a-second trim, now and unmeasured */
		run_sleeper_on(p);
		usleep(1100 * 1000);
		if (munmap(p + 9 * MMLAB_PAGE, MMLAB_PAGE))
			ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
		/* one page: the table stays, CPU 1 is lazy and skipped */
		run_sleeper_on(p);
		one[r] = ipis_during_munmap(p + 8 * MMLAB_PAGE, MMLAB_PAGE);
		/* the whole 2 MiB: its page table is freed, CPU 1 gets one */
		table[r] = ipis_during_munmap(p, HPAGE);
		/* CPU 1 has left the mm: not even a freed table reaches it */
		again[r] = ipis_during_munmap(p2, HPAGE);
		ksft_print_msg("round %d: CPU %d received %ld, %ld, %ld shootdowns (want 0, 1, 0)\n",
			       r, LAZY_CPU, one[r], table[r], again[r]);
		bad_one += one[r] != 0;
		bad_table += table[r] != 1;
		bad_again += again[r] != 0;
		munmap(raw, 3 * HPAGE);
		munmap(raw2, 3 * HPAGE);
	}
	if (write(wake[1], &c, 1) != 1 || pthread_join(thr, NULL))
		ksft_exit_fail_msg("cannot stop the thread\n");

	ksft_test_result(!bad_one,
			 "lazy CPU skipped when no page table is freed (%d of %d rounds sent it one)\n",
			 bad_one, ROUNDS);
	ksft_test_result(!bad_table,
			 "lazy CPU sent exactly one shootdown when a page table is freed (%d of %d rounds not)\n",
			 bad_table, ROUNDS);
	ksft_test_result(!bad_again,
			 "after it, the CPU has left the mm: no shootdown (%d of %d rounds sent one)\n",
			 bad_again, ROUNDS);
	ksft_finished();
}
