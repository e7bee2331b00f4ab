// SPDX-License-Identifier: GPL-2.0
/*
 * anon_vma: rmap walks over anonymous memory shared by a family of forked
 * processes, through every way folio_lock_anon_vma_read() can go.
 *
 * A parent fills a shared region and forks children; every process also
 * writes an exclusive region of its own. Writing the PFNs of the shared
 * pages to /sys/kernel/mm/page_idle/bitmap walks their rmap from this task:
 * one fast lock per page on an LRU list. With fail_anon_vma_trylock forced
 * for this task the same walks pin the anon_vma and sleep for the lock
 * (slow), and cgroup v2 memory.reclaim, whose folio_referenced() walks with
 * try_lock, gives up (contended) and swaps nothing out. The outcomes are
 * this task's, from the anon_vma_lock_read tracepoint filtered on its pid;
 * the anon_vma_lock_* counters, which every task moves, must have grown by
 * at least as much.
 * Then, with swap on zram and while a thread forks, exits and mprotects,
 * memory.reclaim swaps the shared pages out and MADV_PAGEOUT the exclusive
 * ones; every page in every process must read back its pattern, and swapoff
 * must bring every swapped page back.
 */
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "mmlab.h"

#define SHARED_PAGES	2048UL		/* 8 MiB, mapped by every process */
#define EXCL_PAGES	512UL		/* 2 MiB per process, copied on write */
#define NCHILD		3
#define SWAP_MIB	64
#define CG		"/sys/fs/cgroup/mmlab-anon_vma"
#define FAILFS		"/sys/kernel/debug/fail_anon_vma_trylock"
#define IDLE_BITMAP	"/sys/kernel/mm/page_idle/bitmap"
#define KPAGEFLAGS	"/proc/kpageflags"
#define KPF_LRU		5
#define LOCK_EVENT	"/sys/kernel/tracing/events/anon_vma/anon_vma_lock_read"
#define TRACE_KB	"/sys/kernel/tracing/buffer_size_kb"
/*
 * Per CPU. A contended memory.reclaim walks ~100k times (96264 seen on UML);
 * on 32-bit arm the reclaim during the fork/mprotect stress walked 360k-430k
 * times in one round, and 8 MiB kept 419159 of 432215 events.
 */
#define TRACE_KB_NEED	"16384"

#define SHARED_SEED	1
#define EXCL_SEED(id)	(20 + (id))	/* id 0 is the parent */

static char *shared, *excl;

/* How many of the @npages pages at @base are in swap. */
static long swapped_pages(const char *base, size_t npages)
{
	long n = 0;
	size_t pg;

	for (pg = 0; pg < npages; pg++)
		if (mmlab_pagemap(base + pg * MMLAB_PAGE) & MMLAB_PM_SWAPPED)
			n++;
	return n;
}

/*
 * This task's folio_lock_anon_vma_read() outcomes, from the
 * anon_vma_lock_read tracepoint filtered on its pid (the vm counters are
 * global: kswapd, kcompactd or anything else walking rmap moves them), and
 * how much the four counters grew meanwhile, which is at least that.
 */
struct outcomes {
	long fast, slow, race, contended;
	long long counted;
};

static long long lock_counters(void)
{
	return mmlab_vmstat("anon_vma_lock_fast") + mmlab_vmstat("anon_vma_lock_slow") +
	       mmlab_vmstat("anon_vma_lock_race") + mmlab_vmstat("anon_vma_lock_contended");
}

static void outcomes_begin(struct outcomes *o)
{
	if (mmlab_trace_own(LOCK_EVENT))
		ksft_exit_fail_msg("cannot trace %s: %s\n", LOCK_EVENT, strerror(errno));
	o->counted = lock_counters();
}

/* Stop tracing and count this task's events; a lost event fails the test. */
static void outcomes_end(struct outcomes *o)
{
	unsigned long in_buffer = 0, written = 0;
	long long counted = lock_counters();
	static char line[512];
	FILE *f;

	mmlab_write_file(LOCK_EVENT "/enable", "0");
	o->fast = o->slow = o->race = o->contended = 0;
	f = fopen("/sys/kernel/tracing/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "# entries-in-buffer/entries-written: %lu/%lu",
			   &in_buffer, &written) == 2)
			continue;
		o->fast += !!strstr(line, " outcome=fast");
		o->slow += !!strstr(line, " outcome=slow");
		o->race += !!strstr(line, " outcome=race");
		o->contended += !!strstr(line, " outcome=contended");
	}
	if (!f || in_buffer != written)
		ksft_exit_fail_msg("the trace kept %lu of %lu events (buffer_size_kb too small)\n",
				   in_buffer, written);
	fclose(f);
	o->counted = counted - o->counted;
}

static char trace_kb[32];	/* buffer_size_kb before the test */
static volatile int stop_stress;
static pid_t parent, pids[NCHILD];
static int swap_is_on, in_cgroup;

/* The fault attribute's settings before the test, restored at exit. */
static struct { const char *name; char val[64]; } attr[] = {
	{ .name = "probability" }, { .name = "interval" }, { .name = "times" },
	{ .name = "verbose" }, { .name = "task-filter" },
};
static long stress_forks, stress_mprotects;

/* Each child serves commands from the parent: c(heck), p(ageout), q(uit). */
static int child(int id, int cmd_fd, int reply_fd)
{
	char cmd, bad;

	mmlab_fill(excl, 0, EXCL_PAGES, EXCL_SEED(id));
	while (read(cmd_fd, &cmd, 1) == 1) {
		switch (cmd) {
		case 'c':
			bad = !!(mmlab_check(shared, 0, SHARED_PAGES, SHARED_SEED, "child shared") +
				 mmlab_check(excl, 0, EXCL_PAGES, EXCL_SEED(id), "child exclusive"));
			break;
		case 'p':
			/* Only pages still in a per-cpu LRU batch may stay. */
			bad = madvise(excl, EXCL_PAGES * MMLAB_PAGE, MADV_PAGEOUT) ||
			      swapped_pages(excl, EXCL_PAGES) < (long)EXCL_PAGES - 64;
			ksft_print_msg("child %d: %ld of %lu exclusive pages in swap\n",
				       id, swapped_pages(excl, EXCL_PAGES), EXCL_PAGES);
			break;
		default:
			return 0;
		}
		if (write(reply_fd, &bad, 1) != 1)
			return 1;
	}
	return 1;
}

/* Send @cmd to every child; the number of children that reported a failure. */
static int tell_children(int cmd_fd[], int reply_fd[], char cmd)
{
	int i, bad = 0;
	char r;

	for (i = 0; i < NCHILD; i++)
		if (write(cmd_fd[i], &cmd, 1) != 1)
			bad++;
	for (i = 0; i < NCHILD; i++)
		if (read(reply_fd[i], &r, 1) != 1 || r)
			bad++;
	return bad;
}

/*
 * How many shared pages are on an LRU list (/proc/kpageflags). The page_idle
 * bitmap walks only those: a page still in a CPU's LRU batch is skipped.
 */
static long lru_pages(void)
{
	int fd = open(KPAGEFLAGS, O_RDONLY);
	uint64_t flags, pfn;
	long n = 0;
	size_t pg;

	if (fd < 0)
		return -1;
	for (pg = 0; pg < SHARED_PAGES; pg++) {
		pfn = mmlab_pfn(shared + pg * MMLAB_PAGE);
		if (pfn && pread(fd, &flags, 8, pfn * 8) == 8 && (flags >> KPF_LRU & 1))
			n++;
	}
	close(fd);
	return n;
}

/*
 * Mark the shared pages idle through the page_idle bitmap: one rmap walk of
 * each page that is on an LRU list. Returns how many pages were named.
 */
static long idle_walk(void)
{
	uint64_t word = 0, chunk = ~0ULL, pfn;
	long named = 0;
	size_t pg;
	int fd = open(IDLE_BITMAP, O_WRONLY);

	if (fd < 0)
		return -1;
	for (pg = 0; pg <= SHARED_PAGES; pg++) {
		pfn = pg < SHARED_PAGES ? mmlab_pfn(shared + pg * MMLAB_PAGE) : 0;
		if ((!pfn || pfn / 64 != chunk) && chunk != ~0ULL) {
			/*
			 * The kernel walks a last, partial chunk below max_pfn
			 * but returns 0 for it: only an error is an error.
			 */
			if (pwrite(fd, &word, 8, chunk * 8) < 0) {
				ksft_print_msg("%s: pfns %#llx-%#llx: %s\n", IDLE_BITMAP,
					       (unsigned long long)chunk * 64,
					       (unsigned long long)chunk * 64 + 63, strerror(errno));
				named = -1;
			}
			chunk = ~0ULL;
			word = 0;
		}
		if (!pfn || named < 0)
			continue;
		chunk = pfn / 64;
		word |= 1ULL << (pfn % 64);
		named++;
	}
	close(fd);
	return named;
}

static int fail_trylock(int on)
{
	return mmlab_fail_attr(FAILFS, on);
}

/* Fork short-lived children and mprotect part of the shared region. */
static void *stress(void *arg)
{
	char *mid = shared + SHARED_PAGES / 2 * MMLAB_PAGE;
	pid_t pid;

	(void)arg;
	while (!stop_stress) {
		pid = fork();
		if (pid == 0) {
			volatile char c = shared[0];

			excl[0] = c;	/* one copy-on-write page */
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, NULL, 0) == pid)
			stress_forks++;
		/* Split the VMA in three and merge it back. */
		if (!mprotect(mid, 16 * MMLAB_PAGE, PROT_READ) &&
		    !mprotect(mid, 16 * MMLAB_PAGE, PROT_READ | PROT_WRITE))
			stress_mprotects++;
	}
	return NULL;
}

static void cgroup_leave(void)
{
	mmlab_write_file("/sys/fs/cgroup/cgroup.procs", "0");
	rmdir(CG);
}

static void save_attr(void)
{
	char path[128];
	size_t i;
	FILE *f;

	for (i = 0; i < sizeof(attr) / sizeof(attr[0]); i++) {
		snprintf(path, sizeof(path), FAILFS "/%s", attr[i].name);
		f = fopen(path, "r");
		if (!f || !fgets(attr[i].val, sizeof(attr[i].val), f))
			attr[i].val[0] = 0;
		if (f)
			fclose(f);
	}
	f = fopen(TRACE_KB, "r");
	if (!f || !fgets(trace_kb, sizeof(trace_kb), f))
		trace_kb[0] = 0;
	if (f)
		fclose(f);
}

/*
 * However the test ends, leave the machine as it was: no fault injection,
 * no swap, no test cgroup, no children.
 */
static void cleanup(void)
{
	char path[128];
	size_t i;
	int k;

	if (getpid() != parent)
		return;
	for (i = 0; i < sizeof(attr) / sizeof(attr[0]); i++) {
		snprintf(path, sizeof(path), FAILFS "/%s", attr[i].name);
		if (attr[i].val[0])
			mmlab_write_file(path, attr[i].val);
	}
	mmlab_write_file("/proc/self/make-it-fail", "0");
	if (trace_kb[0])
		mmlab_write_file(TRACE_KB, trace_kb);
	for (k = 0; k < NCHILD; k++) {
		if (pids[k] > 0) {
			kill(pids[k], SIGKILL);
			waitpid(pids[k], NULL, 0);
		}
	}
	if (swap_is_on)
		mmlab_swap_off();
	if (in_cgroup)
		cgroup_leave();
}

int main(void)
{
	long long out, in;
	struct outcomes o;
	int cmd_fd[NCHILD], reply_fd[NCHILD], i, bad, status;
	pthread_t thread;
	char why[128];
	long named, swapped, lru, lru_after;

	ksft_print_header();
	/* 128 MiB (16 in 4 processes, 64 of zram swap): in tests/manifest, the runner checks it */
	if (mmlab_vmstat("anon_vma_lock_fast") < 0)
		ksft_exit_skip("no anon_vma_lock_* in /proc/vmstat (CONFIG_DEBUG_ANON_VMA_LOCK)\n");
	if (access(IDLE_BITMAP, W_OK))
		ksft_exit_skip("no %s (CONFIG_IDLE_PAGE_TRACKING)\n", IDLE_BITMAP);
	if (access(LOCK_EVENT, F_OK))
		ksft_exit_skip("no %s (CONFIG_DEBUG_ANON_VMA_LOCK, tracefs)\n", LOCK_EVENT);
	if (access(FAILFS, F_OK))
		ksft_exit_skip("no %s (CONFIG_FAIL_ANON_VMA_TRYLOCK)\n", FAILFS);
	if (access("/sys/fs/cgroup/cgroup.subtree_control", W_OK))
		ksft_exit_skip("no cgroup v2 at /sys/fs/cgroup\n");
	ksft_set_plan(10);
	parent = getpid();
	save_attr();
	atexit(cleanup);
	if (mmlab_write_file(TRACE_KB, TRACE_KB_NEED))
		ksft_exit_fail_msg("cannot set %s to %s: %s\n", TRACE_KB, TRACE_KB_NEED, strerror(errno));

	/* Everything this test maps is charged to its own memory cgroup. */
	if (mmlab_write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory") ||
	    (mkdir(CG, 0755) && errno != EEXIST) ||
	    mmlab_write_file(CG "/cgroup.procs", "0"))
		ksft_exit_fail_msg("memory cgroup %s: %s\n", CG, strerror(errno));
	in_cgroup = 1;
	if (mmlab_swap_on(SWAP_MIB, why, sizeof(why)))
		ksft_exit_fail_msg("swap: %s\n", why);
	swap_is_on = 1;
	ksft_test_result_pass("setup: %d MiB swap on zram0, memory cgroup %s\n", SWAP_MIB, CG);

	shared = mmlab_map(SHARED_PAGES);
	excl = mmlab_map(EXCL_PAGES);
	mmlab_fill(shared, 0, SHARED_PAGES, SHARED_SEED);
	for (i = 0; i < NCHILD; i++) {
		int c[2], r[2];

		if (pipe(c) || pipe(r))
			ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
		pids[i] = fork();
		if (pids[i] < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (!pids[i]) {
			close(c[1]);
			close(r[0]);
			_exit(child(i + 1, c[0], r[1]));
		}
		close(c[0]);
		close(r[1]);
		cmd_fd[i] = c[1];
		reply_fd[i] = r[0];
	}
	mmlab_fill(excl, 0, EXCL_PAGES, EXCL_SEED(0));
	bad = tell_children(cmd_fd, reply_fd, 'c');
	ksft_test_result(!bad, "%d children share %lu pages and own %lu each\n",
			 NCHILD, SHARED_PAGES, EXCL_PAGES);

	/* 1. Nobody writes the anon_vma: every walk gets the lock by trylock. */
	lru = lru_pages();
	outcomes_begin(&o);
	named = idle_walk();
	outcomes_end(&o);
	lru_after = lru_pages();
	/* One walk, and one lock, per page on an LRU list (the same after). */
	ksft_test_result(named == (long)SHARED_PAGES && lru > 0 && lru_after == lru &&
			 o.fast == lru && !o.slow && !o.race && !o.contended &&
			 o.counted >= o.fast,
			 "page_idle walks of %ld shared pages, %ld on an LRU list (%ld after): this task's locks fast %ld, slow %ld, race %ld, contended %ld (counters +%lld)\n",
			 named, lru, lru_after, o.fast, o.slow, o.race, o.contended, o.counted);

	/* 2. Forced trylock failure: the same walks pin and sleep. */
	if (fail_trylock(1))
		ksft_exit_fail_msg("cannot force %s: %s\n", FAILFS, strerror(errno));
	lru = lru_pages();
	outcomes_begin(&o);
	named = idle_walk();
	outcomes_end(&o);
	lru_after = lru_pages();
	ksft_test_result(named == (long)SHARED_PAGES && lru > 0 && lru_after == lru &&
			 o.slow == lru && !o.fast && !o.race && !o.contended &&
			 o.counted >= o.slow,
			 "fail_anon_vma_trylock: page_idle walks of %ld pages on an LRU list (%ld after) take the slow path: this task's locks slow %ld, fast %ld, race %ld, contended %ld (counters +%lld)\n",
			 lru, lru_after, o.slow, o.fast, o.race, o.contended, o.counted);

	/* 3. ... and reclaim's try_lock walks give up: nothing goes to swap. */
	outcomes_begin(&o);
	mmlab_write_file(CG "/memory.reclaim", "8M");	/* -EAGAIN is expected */
	outcomes_end(&o);
	fail_trylock(0);
	swapped = swapped_pages(shared, SHARED_PAGES) + swapped_pages(excl, EXCL_PAGES);
	ksft_test_result(o.contended > 0 && !o.fast && !o.slow && !swapped &&
			 o.counted >= o.contended,
			 "fail_anon_vma_trylock: memory.reclaim gives up on contended anon_vmas: this task's locks contended %ld, fast %ld, slow %ld (counters +%lld), %ld of its pages in swap\n",
			 o.contended, o.fast, o.slow, o.counted, swapped);

	/* 4. Reclaim: MADV_PAGEOUT takes only pages mapped once, all of these. */
	out = mmlab_vmstat("pswpout");
	bad = !!madvise(excl, EXCL_PAGES * MMLAB_PAGE, MADV_PAGEOUT);
	swapped = swapped_pages(excl, EXCL_PAGES);
	bad += tell_children(cmd_fd, reply_fd, 'p');
	out = mmlab_vmstat("pswpout") - out;
	ksft_test_result(!bad && out > 0 && swapped >= (long)EXCL_PAGES - 64,
			 "MADV_PAGEOUT of the exclusive pages of %d processes: pswpout +%lld, parent has %ld of %lu in swap\n",
			 NCHILD + 1, out, swapped, EXCL_PAGES);

	/* memory.reclaim of the shared pages while the family forks, exits and mprotects */
	stop_stress = 0;
	if (pthread_create(&thread, NULL, stress, NULL))
		ksft_exit_fail_msg("pthread_create failed\n");
	out = mmlab_vmstat("pswpout");
	outcomes_begin(&o);
	for (i = 0; i < 8 && swapped_pages(shared, SHARED_PAGES) < (long)SHARED_PAGES / 2; i++)
		mmlab_write_file(CG "/memory.reclaim", "16M");
	outcomes_end(&o);
	swapped = swapped_pages(shared, SHARED_PAGES);
	ksft_test_result(swapped > 0 && o.fast > 0,
			 "memory.reclaim swapped out %ld of %lu shared pages in %d rounds: this task's locks fast %ld, contended %ld, pswpout +%lld\n",
			 swapped, SHARED_PAGES, i, o.fast, o.contended, mmlab_vmstat("pswpout") - out);

	/* 5. Everything comes back from swap intact. */
	in = mmlab_vmstat("pswpin");
	bad = !!mmlab_check(shared, 0, SHARED_PAGES, SHARED_SEED, "parent shared");
	bad += !!mmlab_check(excl, 0, EXCL_PAGES, EXCL_SEED(0), "parent exclusive");
	bad += tell_children(cmd_fd, reply_fd, 'c');
	in = mmlab_vmstat("pswpin") - in;
	stop_stress = 1;
	pthread_join(thread, NULL);
	ksft_test_result(!bad && in > 0,
			 "every page of %d processes reads back its pattern after swap-in (pswpin +%lld; meanwhile %ld forks, %ld mprotect pairs)\n",
			 NCHILD + 1, in, stress_forks, stress_mprotects);

	bad = 0;
	for (i = 0; i < NCHILD; i++) {
		if (write(cmd_fd[i], "q", 1) != 1 || waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
		pids[i] = 0;
	}
	ksft_test_result(!bad, "the children exit cleanly\n");

	munmap(shared, SHARED_PAGES * MMLAB_PAGE);
	munmap(excl, EXCL_PAGES * MMLAB_PAGE);
	bad = mmlab_swap_off();
	swap_is_on = 0;
	ksft_test_result(!bad && mmlab_meminfo("SwapTotal") == 0,
			 "swapoff: nothing left in swap (SwapTotal %ld kB)\n", mmlab_meminfo("SwapTotal"));
	cgroup_leave();
	in_cgroup = 0;
	ksft_finished();
}
