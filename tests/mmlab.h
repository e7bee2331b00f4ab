/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the mmlab guest tests: page patterns, fault probing and
 * /proc readers. Results are reported with the tree's kselftest.h (TAP).
 */
#ifndef MMLAB_H
#define MMLAB_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include "kselftest.h"

#define MMLAB_PAGE	4096UL
/*
 * What one PTE table maps (and one THP is): 2 MiB on x86_64, UML x86_64,
 * arm64 (4 KiB pages) and arm with LPAE; a segment, 1 MiB, on s390x; on
 * sh4 (two levels, 1024 PTEs of 4 bytes) 4 MiB, and no THP.
 */
#if defined(__s390x__)
#define MMLAB_PMD_SIZE	(1UL << 20)
#elif defined(__sh__)
#define MMLAB_PMD_SIZE	(4UL << 20)
#else
#define MMLAB_PMD_SIZE	(2UL << 20)
#endif
#define MMLAB_WORDS	(MMLAB_PAGE / sizeof(uint64_t))

/* The value of word @w of page @pg for pattern @seed: differs per page and per seed. */
static inline uint64_t mmlab_word(uint64_t seed, size_t pg, size_t w)
{
	return (seed << 40) ^ ((uint64_t)pg << 12) ^ w ^ 0x5a5a000000000000ULL;
}

/* Seconds on the monotonic clock, for a test's time limits. */
static inline double mmlab_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * A skipped test case that keeps its name: kselftest.h's skip line has
 * none ("ok N # SKIP why"), which KTAP parsers cannot attribute.
 */
static inline void mmlab_skip(const char *name, const char *why)
{
	ksft_inc_xskip_cnt();
	printf("ok %u %s # SKIP %s\n", ksft_test_num(), name, why);
}

static inline void mmlab_fill(void *base, size_t first, size_t npages, uint64_t seed)
{
	for (size_t pg = first; pg < first + npages; pg++) {
		uint64_t *p = (uint64_t *)((char *)base + pg * MMLAB_PAGE);

		for (size_t w = 0; w < MMLAB_WORDS; w++)
			p[w] = mmlab_word(seed, pg, w);
	}
}

/*
 * Check pages [first, first + npages) of @base against pattern @seed (seed 0
 * means "all zero"). Returns the number of bad pages and reports the first one.
 */
static inline size_t mmlab_check(const void *base, size_t first, size_t npages,
				 uint64_t seed, const char *what)
{
	size_t bad = 0;

	for (size_t pg = first; pg < first + npages; pg++) {
		const uint64_t *p = (const uint64_t *)((const char *)base + pg * MMLAB_PAGE);

		for (size_t w = 0; w < MMLAB_WORDS; w++) {
			uint64_t want = seed ? mmlab_word(seed, pg, w) : 0;

			if (p[w] != want) {
				if (!bad)
					ksft_print_msg("%s: page %zu word %zu is %#llx, want %#llx\n",
						       what, pg, w,
						       (unsigned long long)p[w],
						       (unsigned long long)want);
				bad++;
				break;
			}
		}
	}
	return bad;
}

static sigjmp_buf mmlab_fault_jmp;

static inline void mmlab_fault_handler(int sig)
{
	siglongjmp(mmlab_fault_jmp, sig);
}

/*
 * Touch @addr (read, or write when @write) and return the signal it raised
 * (SIGSEGV/SIGBUS) or 0 when the access succeeded.
 */
static inline int mmlab_probe(volatile char *addr, int write)
{
	struct sigaction sa = { .sa_handler = mmlab_fault_handler }, old_segv, old_bus;
	int sig;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sig = sigsetjmp(mmlab_fault_jmp, 1);
	if (!sig) {
		if (write)
			*addr = 1;
		else
			(void)*addr;
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return sig;
}

/* Write @val to a sysfs/debugfs/tracefs file (truncating it); 0 or -1. */
static inline int mmlab_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	close(fd);
	return ok ? 0 : -1;
}

/* A "Field: N kB" line of a /proc file (meminfo, PID/status, ...), or -1. */
static inline long mmlab_proc_kib(const char *path, const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			val = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

/* A field of /proc/meminfo in KiB, or -1. */
static inline long mmlab_meminfo(const char *field)
{
	return mmlab_proc_kib("/proc/meminfo", field);
}

/*
 * Memory: a test that needs more than the guest has available would only
 * meet the OOM killer (or take the boot down with it). It skips instead,
 * saying how much it needs and how to give it: a UML guest booted without
 * mem= has UML's default of 64 MiB, about 30 MiB of it available. QEMU's
 * sh4 board (r2d) cannot be given more than its 64 MiB. A whole test's
 * need is its line in tests/manifest, which the runner checks before it
 * starts the test (run by hand, it does not check); these helpers are for
 * a case's own need, or one that comes after others.
 */
#ifdef __sh__
#define MMLAB_MEM_FIX	"sh4's r2d board has 64 MiB, no more"
#else
#define MMLAB_MEM_FIX	"boot with mem=384M"
#endif

/* MemAvailable in MiB, or -1 when /proc/meminfo has none. */
static inline long mmlab_mem_available_mib(void)
{
	long kib = mmlab_meminfo("MemAvailable");

	return kib < 0 ? -1 : kib / 1024;
}

/* Whether @mib MiB are available (an unknown amount counts as enough). */
static inline int mmlab_mem_fits(long mib)
{
	long have = mmlab_mem_available_mib();

	return have < 0 || have >= mib;
}

/* The reason a case that needs @mib MiB gives when it skips. */
static inline const char *mmlab_mem_why(long mib)
{
	static char why[128];

	snprintf(why, sizeof(why), "needs %ld MiB available, the guest has %ld MiB (%s)",
		 mib, mmlab_mem_available_mib(), MMLAB_MEM_FIX);
	return why;
}

/* Skip the whole program unless @mib MiB are available. */
static inline void mmlab_need_mem(long mib)
{
	if (!mmlab_mem_fits(mib))
		ksft_exit_skip("%s\n", mmlab_mem_why(mib));
}

/*
 * Free memory in KiB, including the pages waiting in the per-cpu free lists
 * (MemFree leaves those out, and a large free can park many MiB there).
 */
static inline long mmlab_free_kib(void)
{
	char line[256];
	long pcp = 0, n;
	FILE *f = fopen("/proc/zoneinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &n) == 1)
			pcp += n;
	if (f)
		fclose(f);
	return mmlab_meminfo("MemFree") + pcp * (long)(MMLAB_PAGE / 1024);
}

/* A counter of /proc/vmstat, or -1 when the kernel has no such counter. */
static inline long long mmlab_vmstat(const char *name)
{
	char key[128];
	long long val;
	long long found = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%127s %lld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			found = val;
			break;
		}
	}
	fclose(f);
	return found;
}

/*
 * Number of /proc/self/maps lines that overlap [start, end), and the
 * permissions of each (up to @max), so VMA splits and merges can be checked.
 */
static inline int mmlab_vmas(const void *start, const void *end, char perms[][5], int max)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char p[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, p) != 3)
			continue;
		if (hi <= (unsigned long)start || lo >= (unsigned long)end)
			continue;
		if (n < max)
			memcpy(perms[n], p, 5);
		n++;
	}
	fclose(f);
	return n;
}

/* The /proc/self/pagemap entry of @addr (0 if unreadable). */
static inline uint64_t mmlab_pagemap(const void *addr)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0 && pread(fd, &ent, sizeof(ent),
			     (unsigned long)addr / MMLAB_PAGE * 8) != sizeof(ent))
		ent = 0;
	if (fd >= 0)
		close(fd);
	return ent;
}

#define MMLAB_PM_PRESENT	(1ULL << 63)
#define MMLAB_PM_SWAPPED	(1ULL << 62)

/* The PFN mapping @addr (needs root), or 0 when it is not present. */
static inline uint64_t mmlab_pfn(const void *addr)
{
	uint64_t ent = mmlab_pagemap(addr);

	return (ent & MMLAB_PM_PRESENT) ? ent & ((1ULL << 55) - 1) : 0;
}

/* How many of the @n 2 MiB steps of @p are THPs (/proc/kpageflags), or -1. */
static inline long mmlab_thps(const char *p, size_t n)
{
	int fd = open("/proc/kpageflags", O_RDONLY);
	long thps = 0;

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t flags = 0, pfn = mmlab_pfn(p + i * MMLAB_PMD_SIZE);

		if (pfn && pread(fd, &flags, sizeof(flags), pfn * 8) == sizeof(flags) &&
		    (flags & (1ULL << 22)))	/* KPF_THP */
			thps++;
	}
	close(fd);
	return thps;
}

/*
 * Split the THPs mapped in [@p, @p + @len) of this task in place (debugfs
 * split_huge_pages, root): 0, or -1 with errno. It may skip a THP it
 * cannot lock or that has extra references: count what is left.
 */
static inline int mmlab_split_thps(const void *p, size_t len)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "%d,%#lx,%#lx", getpid(), (unsigned long)p,
		 (unsigned long)p + len);
	return mmlab_write_file("/sys/kernel/debug/split_huge_pages", cmd);
}

#ifdef SYS_move_pages	/* <sys/syscall.h> */
/* move_pages(2) of this task (glibc has no wrapper without libnuma). */
static inline long mmlab_move_pages(size_t count, void **pages, const int *nodes,
				    int *status, int flags)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status, flags);
}
#endif

/*
 * Swap in guest memory: /dev/zram0 of @mib MiB, made and enabled with
 * busybox. 0, or -1 with the reason in @why.
 */
static inline int mmlab_swap_on(int mib, char *why, size_t len)
{
	char cmd[16];

	if (access("/sys/block/zram0/disksize", W_OK)) {
		snprintf(why, len, "no /dev/zram0 (CONFIG_ZRAM)");
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "%dM", mib);
	mmlab_write_file("/sys/block/zram0/reset", "1");
	if (mmlab_write_file("/sys/block/zram0/disksize", cmd)) {
		snprintf(why, len, "zram0 disksize %s: %s", cmd, strerror(errno));
		return -1;
	}
	if (system("mkswap /dev/zram0 >/dev/null 2>&1 && swapon /dev/zram0")) {
		snprintf(why, len, "mkswap/swapon /dev/zram0 failed");
		return -1;
	}
	return 0;
}

/* swapoff (which reads every swapped page back in) and free the zram. */
static inline int mmlab_swap_off(void)
{
	int rc = system("swapoff /dev/zram0");

	mmlab_write_file("/sys/block/zram0/reset", "1");
	return rc ? -1 : 0;
}

/*
 * Make the fault attribute in debugfs directory @dir fail every time, but
 * only for this task (task-filter + /proc/PID/make-it-fail); or stop it.
 * 0, or -1 when a file could not be written.
 */
static inline int mmlab_fail_attr(const char *dir, int on)
{
	static const char *const set[][2] = {
		{ "task-filter", "Y" }, { "interval", "1" }, { "times", "-1" },
		{ "verbose", "0" }, { "probability", "100" },
	};
	char path[256];
	int bad = 0;

	if (!on) {
		snprintf(path, sizeof(path), "%s/probability", dir);
		bad |= mmlab_write_file(path, "0");
	}
	for (size_t i = 0; on && i < sizeof(set) / sizeof(set[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, set[i][0]);
		bad |= mmlab_write_file(path, set[i][1]);
	}
	snprintf(path, sizeof(path), "/proc/%d/make-it-fail", getpid());
	bad |= mmlab_write_file(path, on ? "1" : "0");
	return bad ? -1 : 0;
}

/* The pid in a tracefs "trace" line's "comm-pid [cpu]" prefix, or -1. */
static inline int mmlab_trace_pid(const char *line)
{
	const char *cpu = strstr(line, " [");
	const char *dash;

	if (!cpu)
		return -1;
	for (dash = cpu; dash > line && *dash != '-'; dash--)
		;
	return *dash == '-' ? atoi(dash + 1) : -1;
}

/*
 * Trace tracefs event directory @ev for this task only, and where @also
 * holds when it is not empty (more of the filter: "reason == 4"); the
 * buffer is left as it is. 0, or -1.
 */
static inline int mmlab_trace_own_where(const char *ev, const char *also)
{
	char path[256], filter[160];

	snprintf(filter, sizeof(filter), "common_pid == %d%s%s", getpid(),
		 also[0] ? " && " : "", also);
	snprintf(path, sizeof(path), "%s/filter", ev);
	if (mmlab_write_file(path, filter))
		return -1;
	snprintf(path, sizeof(path), "%s/enable", ev);
	return mmlab_write_file(path, "1");
}

/* mmlab_trace_own_where() with no more filter, from an empty buffer. */
static inline int mmlab_trace_own(const char *ev)
{
	if (mmlab_write_file("/sys/kernel/tracing/trace", ""))
		return -1;
	return mmlab_trace_own_where(ev, "");
}

/*
 * The running kernel's major and minor version as major * 100 + minor
 * (601, 612), or 0; @u (if not NULL) gets the whole uname().
 */
static inline int mmlab_kernel_version(struct utsname *u)
{
	struct utsname own;
	int major = 0, minor = 0;

	if (!u)
		u = &own;
	if (uname(u) || sscanf(u->release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major * 100 + minor;
}

/* Stop tracing tracefs event directory @ev. 0, or -1. */
static inline int mmlab_trace_stop(const char *ev)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/enable", ev);
	return mmlab_write_file(path, "0");
}

#ifdef CPU_SET	/* <sched.h> with _GNU_SOURCE */
/* Pin the calling thread to @cpu: 0, or an error number. */
static inline int mmlab_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? errno : 0;
}
#endif

static inline void *mmlab_map(size_t npages)
{
	void *p = mmap(NULL, npages * MMLAB_PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap of %zu pages: %s\n", npages, strerror(errno));
	return p;
}

#endif
