// SPDX-License-Identifier: GPL-2.0
/*
 * gather_hold: one thread of this process zaps part of a range and is held
 * inside its mmu_gather (CONFIG_DEBUG_MM_HOLD, /sys/kernel/debug/mm_hold/),
 * while the main thread reads the zapped pages through whatever
 * translation it still has and writes the pages around them. Then it is
 * let go. Three zaps, each held at two points:
 *
 *  - MADV_DONTNEED of private anonymous pages. Held before the gather's
 *    last TLB flush (gather_finish): the PTEs are cleared, the pages not
 *    freed. A read sees each page's old data (a stale translation) or
 *    zeros (it faulted): never anything else. Where the gather spans VMAs
 *    (x86: MMU_GATHER_MERGE_VMAS) this flush is the only one and reads on
 *    other CPUs see the old data; UML flushes each VMA as it ends
 *    (tlb_end_vma()), so there they fault. Held after that flush and
 *    before the pages are freed (gather_flushed): no translation is left,
 *    so a read faults and sees zeros, never the old data, and never a
 *    freed page (page_poison=1 fills a freed page with 0xaa: a gather that
 *    freed before it flushed shows through the stale translation).
 *    Afterwards the range reads zero.
 *  - munmap() of them: the same, but a read that faults gets SIGSEGV (the
 *    VMA is gone), never zeros; afterwards every page of the range faults.
 *  - MADV_DONTNEED of a shared memfd mapping, whose pages the page cache
 *    keeps: a read sees the page's current data either way (the stale
 *    translation and a new fault reach the same page), and the main thread
 *    also writes the zapped pages while the zapper is held, through stale
 *    translations or new faults: afterwards each page holds the last
 *    write, none is lost.
 *  - mprotect(PROT_READ) of private pages, while a writer thread (on CPU
 *    1, the zapper on CPU 0, where there are two) that has just written
 *    them writes each once more. mprotect() holds mmap_lock for writing,
 *    so a write that faults waits in the fault until the call is done and
 *    then gets SIGSEGV. Held before the last flush, a write may land
 *    through a stale writable translation (x86, another CPU); held after
 *    it, none may: the first write faults. Either way a write that lands
 *    after one has faulted (after mprotect() returned) is a writable
 *    translation left behind. Afterwards each page holds the last write
 *    that landed, and every write faults, on the writer's CPU too.
 *
 * Every time, the pages around the zapped ones keep every byte the main
 * thread wrote, and the held thread saw its call succeed. UML runs the
 * main thread while the zapper sleeps at the hold; on SMP the zapper is
 * on another CPU.
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
/*
 * and for at most this long: the hold lets the task go after 10 s
 * (MM_HOLD_MAX_MS), and under TCG on s390x 200 passes of SIGSEGVs took
 * longer than that
 */
#define READ_MS		3000

enum zap { DONTNEED, MUNMAP, SHARED, MPROTECT };
static const char *const zap_name[] = {
	"MADV_DONTNEED", "munmap", "shared MADV_DONTNEED", "mprotect(PROT_READ)"
};

static char *base;
static long ncpus;
static enum zap zap_how;
static atomic_int zap_go, zap_done, zapper_tid;
static int zap_err;

static void *zapper(void *arg)
{
	char *z = base + ZAP_FIRST * MMLAB_PAGE;
	int rc;

	(void)arg;
	if (zap_how == MPROTECT && ncpus > 1)
		mmlab_pin(0);
	atomic_store(&zapper_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&zap_go))
		sched_yield();
	if (zap_how == MUNMAP)
		rc = munmap(z, ZAP_PAGES * MMLAB_PAGE);
	else if (zap_how == MPROTECT)
		rc = mprotect(z, ZAP_PAGES * MMLAB_PAGE, PROT_READ);
	else
		rc = madvise(z, ZAP_PAGES * MMLAB_PAGE, MADV_DONTNEED);
	zap_err = rc ? errno : 0;
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
 * What the zapped pages hold now. Each must read all of @seed's data (the
 * old data through a stale translation, or a shared page's current data)
 * or, after MADV_DONTNEED of private pages, all zeros (it faulted); after
 * munmap() a read that faults gets SIGSEGV (@gone). Counts the pages of
 * each kind; returns those that were none of them, reporting the first.
 */
static size_t classify(uint64_t seed, size_t *stale, size_t *zero, size_t *gone)
{
	size_t bad = 0;

	for (size_t pg = ZAP_FIRST; pg < ZAP_FIRST + ZAP_PAGES; pg++) {
		const volatile uint64_t *p = (const uint64_t *)(base + pg * MMLAB_PAGE);
		size_t old = 0, nul = 0, w;
		uint64_t v = 0;

		if (zap_how == MUNMAP && mmlab_probe((volatile char *)p, 0)) {
			(*gone)++;
			continue;
		}
		for (w = 0; w < MMLAB_WORDS; w++) {
			v = p[w];
			if (v == mmlab_word(seed, pg, w))
				old++;
			else if (!v)
				nul++;
			else
				break;
		}
		if (old == MMLAB_WORDS) {
			(*stale)++;
		} else if (nul == MMLAB_WORDS && zap_how == DONTNEED) {
			(*zero)++;
		} else {
			if (!bad)
				ksft_print_msg("page %zu word %zu reads %#llx (%zu words of seed %llu, %zu zero before it)%s\n",
					       pg, w < MMLAB_WORDS ? w : MMLAB_WORDS - 1,
					       (unsigned long long)v, old, (unsigned long long)seed, nul,
					       (v & 0xffffffff) == 0xaaaaaaaa ?
					       ": page_poison's pattern, a freed page" : "");
			bad++;
		}
	}
	return bad;
}

/* A fresh range for one zap: private anonymous, or a shared memfd. */
static void map_range(void)
{
	int fd = -1;

	if (zap_how == SHARED) {
		fd = memfd_create("gather_hold", 0);
		if (fd < 0 || ftruncate(fd, NPAGES * MMLAB_PAGE))
			ksft_exit_fail_msg("memfd: %s\n", strerror(errno));
	}
	base = mmap(NULL, NPAGES * MMLAB_PAGE, PROT_READ | PROT_WRITE,
		    fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* A fresh range filled with SEED, and the zapper's flags reset, for @how. */
static void new_zap(enum zap how)
{
	zap_how = how;
	map_range();
	mmlab_fill(base, 0, NPAGES, SEED);
	atomic_store(&zap_go, 0);
	atomic_store(&zap_done, 0);
	atomic_store(&zapper_tid, 0);
}

/*
 * Arm @point for the zapper, let it go and wait up to 5 s until it is
 * held there: 1 if it is, else 0 with the reason printed.
 */
static int hold_zapper(const char *point)
{
	char state[64] = "", want[64];
	int i;

	snprintf(want, sizeof(want), "%d", atomic_load(&zapper_tid));
	if (hold_write(point, want))
		ksft_exit_fail_msg("arming %s for %s: %s\n", point, want, strerror(errno));
	atomic_store(&zap_go, 1);
	snprintf(want, sizeof(want), "held %d", atomic_load(&zapper_tid));
	for (i = 0; i < 5000; i++) {
		if (hold_state(point, state, sizeof(state)) && !strcmp(state, want))
			return 1;
		if (atomic_load(&zap_done))
			break;
		usleep(1000);
	}
	ksft_print_msg("%s %s: the zapper was not held (state \"%s\", %s %s)\n",
		       zap_name[zap_how], point, state, zap_name[zap_how],
		       atomic_load(&zap_done) ? "returned" : "running");
	return 0;
}

/* One zap (@how) held at @point; returns the failed checks. */
static int held_zap(enum zap how, const char *point, int allow_stale)
{
	size_t stale = 0, zero = 0, gone = 0, bad = 0, reads = 0;
	uint64_t zapped_seed = SEED;	/* what the zapped pages must hold */
	double end;
	pthread_t z;
	int fails = 0;

	new_zap(how);
	if (pthread_create(&z, NULL, zapper, NULL))
		ksft_exit_fail_msg("pthread_create: %s\n", strerror(errno));
	while (!atomic_load(&zapper_tid))
		sched_yield();
	if (!hold_zapper(point)) {
		fails++;
	} else {
		/*
		 * Read through what translations are left; write around them
		 * (and, shared, into them: no write may be lost).
		 */
		end = mmlab_now() + READ_MS / 1000.0;
		for (reads = 0; reads < READS && (!reads || mmlab_now() < end); reads++) {
			bad += classify(zapped_seed, &stale, &zero, &gone);
			mmlab_fill(base, 0, ZAP_FIRST, SEED + 1 + reads);
			mmlab_fill(base, ZAP_FIRST + ZAP_PAGES, NPAGES - ZAP_FIRST - ZAP_PAGES,
				   SEED + 1 + reads);
			if (how == SHARED) {
				zapped_seed = SEED + 1 + reads;
				mmlab_fill(base, ZAP_FIRST, ZAP_PAGES, zapped_seed);
			}
		}
		if (atomic_load(&zap_done)) {
			ksft_print_msg("%s %s: the call returned while held\n", zap_name[how], point);
			fails++;
		}
		ksft_print_msg("%s %s: while held, %zu page reads saw %s (%s), %zu saw zeros, %zu faulted (SIGSEGV), %zu none of these (%zu passes)\n",
			       zap_name[how], point, stale,
			       how == SHARED ? "the last write" : "the old data",
			       how == SHARED ? "a stale translation or a new fault" : "stale",
			       zero, gone, bad, reads);
		if (bad)
			fails++;
		if (!allow_stale && stale && how != SHARED) {
			ksft_print_msg("%s %s: the TLB was flushed, yet %zu reads saw the old data\n",
				       zap_name[how], point, stale);
			fails++;
		}
	}
	if (hold_write(point, "release")) {
		ksft_print_msg("%s %s: release: %s\n", zap_name[how], point, strerror(errno));
		fails++;
	}
	pthread_join(z, NULL);
	if (zap_err) {
		ksft_print_msg("%s %s: %s\n", zap_name[how], point, strerror(zap_err));
		fails++;
	}
	if (how == MUNMAP) {
		size_t mapped = 0;

		for (size_t pg = ZAP_FIRST; pg < ZAP_FIRST + ZAP_PAGES; pg++)
			mapped += !mmlab_probe(base + pg * MMLAB_PAGE, 0);
		if (mapped)
			ksft_print_msg("munmap %s: %zu unmapped pages still read afterwards\n",
				       point, mapped);
		fails += !!mapped;
	} else {
		fails += !!mmlab_check(base, ZAP_FIRST, ZAP_PAGES,
				       how == SHARED ? zapped_seed : 0, "zapped pages after the call");
	}
	fails += !!mmlab_check(base, 0, ZAP_FIRST, SEED + reads, "pages before the zapped ones");
	fails += !!mmlab_check(base, ZAP_FIRST + ZAP_PAGES, NPAGES - ZAP_FIRST - ZAP_PAGES,
			       SEED + reads, "pages after the zapped ones");
	munmap(base, NPAGES * MMLAB_PAGE);
	return fails;
}

/*
 * A write of @v to *@p: 0 if it landed, else the signal it got. No system
 * call on the way (the handler is installed once, SA_NODEFER, and the
 * mask not saved): the writer's CPU keeps what translations it has.
 */
static int write_or_fault(volatile uint64_t *p, uint64_t v)
{
	int sig = sigsetjmp(mmlab_fault_jmp, 0);

	if (!sig)
		*p = v;
	return sig;
}

static void catch_faults(void)
{
	struct sigaction sa = { .sa_handler = mmlab_fault_handler, .sa_flags = SA_NODEFER };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

#define MARK(pg)	(0x5eed0000000000ULL | (pg))	/* the writer's value for page pg */

static atomic_int w_go, w_tid, w_done_pages;
static int w_landed[ZAP_PAGES];		/* 1: the write landed, 0: it faulted */

/*
 * The writer: writes every zapped page (so that its CPU holds writable
 * translations), waits for the go, then writes word 0 of each page once,
 * noting which writes landed.
 */
static void *writer(void *arg)
{
	(void)arg;
	if (ncpus > 1)
		mmlab_pin(1);
	catch_faults();
	for (size_t i = 0; i < ZAP_PAGES; i++) {
		volatile uint64_t *p = (uint64_t *)(base + (ZAP_FIRST + i) * MMLAB_PAGE);

		*p = *p;
	}
	atomic_store(&w_tid, (int)syscall(SYS_gettid));
	while (!atomic_load(&w_go))
		;
	for (size_t i = 0; i < ZAP_PAGES; i++) {
		uint64_t *p = (uint64_t *)(base + (ZAP_FIRST + i) * MMLAB_PAGE);

		w_landed[i] = !write_or_fault(p, MARK(ZAP_FIRST + i));
		atomic_store(&w_done_pages, (int)i + 1);
	}
	return NULL;
}

/* The state letter of thread @tid ("R", "S", "D", ...), or '?'. */
static char thread_state(int tid)
{
	char path[64], buf[256], *c;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	c = strrchr(buf, ')');
	return c && c[1] && c[2] ? c[2] : '?';
}

/*
 * mprotect(PROT_READ) of the zapped pages, held at @point, while the
 * writer writes them; returns the failed checks.
 */
static int held_mprotect(const char *point, int allow_stale)
{
	size_t landed_held = 0, landed = 0, late = 0, bad = 0, writable = 0;
	int fails = 0, i, faulted = 0, blocked = 0;
	pthread_t z, w;
	cpu_set_t cpus;

	new_zap(MPROTECT);
	atomic_store(&w_go, 0);
	atomic_store(&w_tid, 0);
	atomic_store(&w_done_pages, 0);
	if (pthread_create(&z, NULL, zapper, NULL) || pthread_create(&w, NULL, writer, NULL))
		ksft_exit_fail_msg("pthread_create: %s\n", strerror(errno));
	while (!atomic_load(&zapper_tid) || !atomic_load(&w_tid))
		sched_yield();
	if (!hold_zapper(point)) {
		fails++;
	} else {
		/*
		 * Let the writer go; it is done when it has written every
		 * page or waits in a fault for mmap_lock ("D"), up to 5 s.
		 */
		atomic_store(&w_go, 1);
		for (i = 0; i < 5000; i++) {
			if (atomic_load(&w_done_pages) == ZAP_PAGES)
				break;
			/* (a writer that has written every page waits to exit) */
			if (thread_state(atomic_load(&w_tid)) == 'D') {
				blocked = atomic_load(&w_done_pages) < ZAP_PAGES;
				break;
			}
			usleep(1000);
		}
		landed_held = (size_t)atomic_load(&w_done_pages);
		if (!blocked && landed_held < ZAP_PAGES) {
			ksft_print_msg("mprotect %s: the writer neither finished nor waited in a fault in 5 s (%zu pages written)\n",
				       point, landed_held);
			fails++;
		}
		if (atomic_load(&zap_done)) {
			ksft_print_msg("mprotect %s: the call returned while held\n", point);
			fails++;
		}
	}
	if (hold_write(point, "release")) {
		ksft_print_msg("mprotect %s: release: %s\n", point, strerror(errno));
		fails++;
	}
	atomic_store(&w_go, 1);
	pthread_join(z, NULL);
	pthread_join(w, NULL);
	if (zap_err) {
		ksft_print_msg("mprotect %s: %s\n", point, strerror(zap_err));
		fails++;
	}
	/* landed writes, and any after the first that faulted */
	for (size_t k = 0; k < ZAP_PAGES; k++) {
		if (w_landed[k]) {
			landed++;
			late += faulted;
		} else {
			faulted = 1;
		}
	}
	ksft_print_msg("mprotect %s: while held, %zu of %d writes landed (stale writable translations), the writer %s; %zu landed after a write had faulted\n",
		       point, landed_held, ZAP_PAGES,
		       blocked ? "then waited in a fault" : "wrote every page", late);
	if (late)
		fails++;
	if (!allow_stale && landed) {
		ksft_print_msg("mprotect %s: the TLB was flushed, yet %zu writes landed\n", point, landed);
		fails++;
	}
	/* each page: word 0 the last write that landed, the rest the seed */
	for (size_t k = 0; k < ZAP_PAGES; k++) {
		size_t pg = ZAP_FIRST + k;
		const uint64_t *p = (const uint64_t *)(base + pg * MMLAB_PAGE);
		uint64_t w0 = w_landed[k] ? MARK(pg) : mmlab_word(SEED, pg, 0);

		size_t w = 1;

		while (w < MMLAB_WORDS && p[w] == mmlab_word(SEED, pg, w))
			w++;
		if (p[0] != w0 || w < MMLAB_WORDS) {
			if (!bad)
				ksft_print_msg("mprotect %s: page %zu holds %#llx in word 0, want %#llx (%s)\n",
					       point, pg, (unsigned long long)p[0], (unsigned long long)w0,
					       w_landed[k] ? "the write that landed" : "the seed");
			bad++;
		}
	}
	/* every write faults now, on the writer's CPU too */
	sched_getaffinity(0, sizeof(cpus), &cpus);
	if (ncpus > 1)
		mmlab_pin(1);
	for (size_t k = 0; k < ZAP_PAGES; k++)
		writable += !write_or_fault((uint64_t *)(base + (ZAP_FIRST + k) * MMLAB_PAGE), 0);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	signal(SIGSEGV, SIG_DFL);
	if (writable)
		ksft_print_msg("mprotect %s: after the call %zu pages still took a write\n", point, writable);
	fails += !!bad + !!writable;
	fails += !!mmlab_check(base, 0, ZAP_FIRST, SEED, "pages before the protected ones");
	fails += !!mmlab_check(base, ZAP_FIRST + ZAP_PAGES, NPAGES - ZAP_FIRST - ZAP_PAGES,
			       SEED, "pages after the protected ones");
	munmap(base, NPAGES * MMLAB_PAGE);
	return fails;
}

int main(void)
{
	/* what each zap's reads may see, held before and after the flush */
	static const char *const seen[][2] = {
		[DONTNEED] = { "old data or zeros", "zeros only" },
		[MUNMAP] = { "old data or SIGSEGV", "SIGSEGV only" },
		[SHARED] = { "the last write", "the last write" },
	};
	static const char *const after[] = {
		[DONTNEED] = "afterwards zero",
		[MUNMAP] = "afterwards unmapped",
		[SHARED] = "afterwards each page holds the last write",
	};
	char state[64];

	ksft_print_header();
	if (access(HOLD_DIR "gather_finish", W_OK))
		ksft_exit_skip("no " HOLD_DIR "gather_finish (CONFIG_DEBUG_MM_HOLD, debugfs): %s\n",
			       strerror(errno));
	if (!hold_state("gather_finish", state, sizeof(state)) || strcmp(state, "idle"))
		ksft_exit_fail_msg("gather_finish is not idle: \"%s\"\n", state);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	ksft_set_plan(8);

	for (enum zap how = DONTNEED; how <= SHARED; how++) {
		ksft_test_result(!held_zap(how, "gather_finish", 1),
				 "%s held before the last flush: %s, nothing else; %s, neighbours intact\n",
				 zap_name[how], seen[how][0], after[how]);
		ksft_test_result(!held_zap(how, "gather_flushed", 0),
				 "%s held between the flush and the free: %s (no stale data, no freed page); %s\n",
				 zap_name[how], seen[how][1], after[how]);
	}
	ksft_test_result(!held_mprotect("gather_finish", 1),
			 "mprotect(PROT_READ) held before the last flush: writes land or fault, none after one faulted; afterwards each page holds the last write that landed and takes none\n");
	ksft_test_result(!held_mprotect("gather_flushed", 0),
			 "mprotect(PROT_READ) held between the flush and the free: every write faults; afterwards no page takes a write\n");
	ksft_finished();
}
