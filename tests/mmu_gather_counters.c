// SPDX-License-Identifier: GPL-2.0
/*
 * mmu_gather_counters: unmap anonymous memory of sizes that cross the
 * mmu_gather's boundaries (the on-stack bundle, one batch, the
 * MAX_GATHER_BATCH_COUNT cap; the first two measured on the running kernel,
 * see find_batch_model()) with munmap() and MADV_DONTNEED, and check
 * that the CONFIG_DEBUG_MMU_GATHER counters in /proc/vmstat move exactly as
 * a model of the batching predicts; then again with fail_mmu_gather at
 * 100 %, where a flush must come every 8 pages. The counters are global:
 * this task's share comes from the mmu_gather tracepoints, which name the
 * task, and the counters must agree with it (and with what other tasks did
 * meanwhile), so the model holds for this task's own gathers. The
 * mmu_gather_release tracepoint must report the unmapped range; a
 * process killed with 64 MiB must pass every resident page and page table
 * through one gather as the model says; every page must come back and an
 * unrelated mapping must keep its data.
 *
 * s390 gathers nothing (MMU_GATHER_NO_GATHER): once it has cleared a PTE
 * no other CPU can reach the page, and it frees the page at once. There
 * the model is that only mmu_gather_pages_released moves, by one per page (the
 * other events are not even compiled there). Without flush events nothing
 * names the task of a freed page, so the counter's delta is taken whole
 * (another task's frees in the window retry the case: other_task_freed());
 * the tracepoint checks are skips that say why.
 */
#include <sys/wait.h>
#include "mmlab.h"

/*
 * The gather's sizes. What include/asm-generic/tlb.h gives them:
 * MMU_GATHER_BUNDLE, 8 entries on the stack; MAX_GATHER_BATCH, a page less
 * struct mmu_gather_batch (a pointer, two unsigned ints), in pointers of
 * the kernel (510 for 4 KiB pages on 64-bit, 1021 on 32-bit); and
 * MAX_GATHER_BATCH_COUNT, 10000 / MAX_GATHER_BATCH (19, 9). Since v6.3 a
 * batch holds encoded pages, where a folio range takes two entries:
 * __tlb_remove_folio_pages() asks for the next batch once nr >= max - 1,
 * so the bundle takes 7 single pages and a batch 509; before, a batch was
 * full at max.
 *
 * The model uses what the running kernel does, measured by
 * find_batch_model() (through fail_mmu_gather and the release tracepoint),
 * and checks it against the above; without fail_mmu_gather it uses the
 * above and says so.
 */
#define HDR_BUNDLE	8
static int full_early;		/* a batch is full at max - 1 (since 6.3) */
static long hdr_batch;		/* MAX_GATHER_BATCH for this kernel */
static long BUNDLE, BATCH;	/* pages the bundle and a batch take */
static long BATCH_COUNT;	/* MAX_GATHER_BATCH_COUNT */
static int measured;		/* BUNDLE and BATCH read from the kernel */
#define MAX_BATCH_COUNT	64	/* room in predict(); 9 or 19 in practice */

#ifdef __s390x__
#define NO_GATHER	1	/* arch/s390/Kconfig: select MMU_GATHER_NO_GATHER */
#else
#define NO_GATHER	0
#endif

enum { ALLOC, FAIL, LIMIT, FLUSH, FREED, NR_EV };
static const char *const ev_names[NR_EV] = {
	"mmu_gather_batch_alloc", "mmu_gather_batch_alloc_fail",
	"mmu_gather_batch_limit", "mmu_gather_release", "mmu_gather_pages_released",
};

#define TRACEFS	"/sys/kernel/tracing"
#define FAILFS	"/sys/kernel/debug/fail_mmu_gather"

/* Read the five counters without allocating (no heap activity). */
static int read_events(long long ev[NR_EV])
{
	static char buf[32768];
	ssize_t n, len = 0;
	int fd = open("/proc/vmstat", O_RDONLY), i, found = 0;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	for (i = 0; i < NR_EV; i++) {
		char key[64];
		char *p;

		snprintf(key, sizeof(key), "\n%s ", ev_names[i]);
		p = strstr(buf, key);
		if (p) {
			ev[i] = atoll(p + strlen(key));
			found++;
		}
	}
	return found == NR_EV ? 0 : -1;
}

/*
 * The model: @pages go through one gather (the data pages, then the
 * page-table pages free_pgtables() adds). Batch pages are allocated when a
 * batch fills, reused after a flush, and capped; a full chain or a failed
 * allocation forces a flush of everything gathered so far.
 */
static void predict(long pages, int fail, long long ev[NR_EV])
{
	long nr[MAX_BATCH_COUNT + 1] = { 0 }, pending = 0;
	int active = 0, chain = 0;	/* batches allocated after the bundle */

	memset(ev, 0, sizeof(long long) * NR_EV);
	if (NO_GATHER) {
		ev[FREED] = pages;	/* each at once, no batch, no flush */
		return;
	}
	for (long i = 0; i < pages; i++) {
		int cap = active ? BATCH : BUNDLE, flush = 0;

		nr[active]++;
		pending++;
		if (nr[active] < cap)
			continue;
		if (active < chain) {
			active++;
		} else if (chain == BATCH_COUNT) {
			ev[LIMIT]++;
			flush = 1;
		} else if (fail) {
			ev[FAIL]++;
			flush = 1;
		} else {
			ev[ALLOC]++;
			chain++;
			active++;
		}
		if (flush) {
			ev[FLUSH]++;
			ev[FREED] += pending;
			pending = 0;
			memset(nr, 0, sizeof(nr));
			active = 0;
		}
	}
	if (pending) {
		ev[FLUSH]++;
		ev[FREED] += pending;
	}
}

static int set_failing(int on)
{
	return mmlab_fail_attr(FAILFS, on);
}

#define EVENTS	TRACEFS "/events/mmu_gather/"

static void populate(char *p, long npages);

/*
 * The pages this task's first release carried when MADV_DONTNEED dropped
 * @npages with fail_mmu_gather failing every batch allocation after
 * @space bytes' worth of them (fail_mmu_gather's "space": each allocation
 * asks for a page), or -1.
 */
static long first_release(long npages, long space)
{
	static char line[1024];
	char buf[32];
	long nr = -1;
	char *p = mmlab_map(npages);
	FILE *f;

	madvise(p, npages * MMLAB_PAGE, MADV_NOHUGEPAGE);
	populate(p, npages);
	snprintf(buf, sizeof(buf), "%ld", space);
	if (set_failing(1) || mmlab_write_file(FAILFS "/space", buf) ||
	    mmlab_write_file(TRACEFS "/trace", "") ||
	    mmlab_trace_own_where(EVENTS "mmu_gather_release", "")) {
		set_failing(0);
		munmap(p, npages * MMLAB_PAGE);
		return -1;
	}
	madvise(p, npages * MMLAB_PAGE, MADV_DONTNEED);
	mmlab_trace_stop(EVENTS "mmu_gather_release");
	mmlab_write_file(EVENTS "mmu_gather_release/filter", "0");
	set_failing(0);
	mmlab_write_file(FAILFS "/space", "0");
	f = fopen(TRACEFS "/trace", "r");
	while (f && nr < 0 && fgets(line, sizeof(line), f)) {
		char *r = strstr(line, "nr_pages=");

		if (line[0] != '#' && strstr(line, "mmu_gather_release:") && r)
			nr = atol(r + strlen("nr_pages="));
	}
	if (f)
		fclose(f);
	munmap(p, npages * MMLAB_PAGE);
	return nr;
}

/*
 * Read the gather's sizes from the running kernel (see the top), and check
 * them against what its headers give. 0, or how many differ.
 */
static int find_batch_model(void)
{
	struct utsname u = { 0 };
	int ver = mmlab_kernel_version(&u), major = ver / 100, minor = ver % 100, bad = 0;
	long word = 8, bundle = -1, both = -1;

	/* the kernel's pointers: 32-bit arm and sh4 here */
	if (!strncmp(u.machine, "armv", 4) || !strncmp(u.machine, "sh", 2) ||
	    !strcmp(u.machine, "i686"))
		word = 4;
	full_early = ver >= 603;
	hdr_batch = (MMLAB_PAGE - word - 2 * 4) / word;
	BUNDLE = HDR_BUNDLE - full_early;
	BATCH = hdr_batch - full_early;
	if (!NO_GATHER && access(FAILFS "/space", W_OK) == 0) {
		/* all fail: the bundle alone; one batch let through: and a batch */
		bundle = first_release(4 * HDR_BUNDLE, 0);
		both = first_release(2 * (HDR_BUNDLE + hdr_batch), MMLAB_PAGE + 1);
	}
	if (bundle > 0 && both > bundle) {
		ksft_print_msg("Linux %d.%d (%s, %ld-byte pointers): the bundle takes %ld pages, a batch %ld (its headers: %ld, %ld: full at %s)\n",
			       major, minor, u.machine, word, bundle, both - bundle, BUNDLE, BATCH,
			       full_early ? "max - 1" : "max");
		bad = (bundle != BUNDLE) + (both - bundle != BATCH);
		measured = 1;
		BUNDLE = bundle;
		BATCH = both - bundle;
	} else {
		ksft_print_msg("Linux %d.%d: the headers' sizes, not measured (%s): bundle %ld pages, batch %ld (full at %s)\n",
			       major, minor,
			       NO_GATHER ? "no gather" : bundle == -1 && both == -1 ?
			       "no " FAILFS "/space" : "the release tracepoint said nothing",
			       BUNDLE, BATCH, full_early ? "max - 1" : "max");
	}
	BATCH_COUNT = 10000 / (BATCH + full_early);
	if (BATCH_COUNT > MAX_BATCH_COUNT)
		BATCH_COUNT = MAX_BATCH_COUNT;
	return bad;
}

/*
 * What the two tracepoints saw: this task's share of each counter but the
 * cap (own[]) and the range of its flushes, and the other tasks' share
 * (foreign[]).
 */
struct trace_sum {
	unsigned long lo, hi;
	int fullmm;
	long long own[NR_EV], foreign[NR_EV];
};

/* How many flushes and batch allocations other tasks had meanwhile. */
static long long foreign_events(const struct trace_sum *t)
{
	return t->foreign[ALLOC] + t->foreign[FAIL] + t->foreign[FLUSH];
}

static int trace_on(void)
{
	return mmlab_write_file(EVENTS "mmu_gather_release/enable", "1") ||
	       mmlab_write_file(EVENTS "mmu_gather_batch_alloc/enable", "1") ||
	       mmlab_write_file(TRACEFS "/trace", "");
}

/* @pid: whose flushes are "this task's" (getpid(), or an exiting child). */
static void trace_off(struct trace_sum *t, pid_t pid)
{
	static char line[1024];
	FILE *f;

	mmlab_write_file(EVENTS "mmu_gather_release/enable", "0");
	mmlab_write_file(EVENTS "mmu_gather_batch_alloc/enable", "0");
	memset(t, 0, sizeof(*t));
	t->lo = ~0UL;
	f = fopen(TRACEFS "/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		unsigned int nr;
		int full, own = mmlab_trace_pid(line) == pid;
		char *p = strstr(line, "mmu_gather_release:");

		if (!p) {
			/* "[mm=%p ]ok|failed batch_count=%u": mm= since 6.12's series */
			p = strstr(line, "mmu_gather_batch_alloc: ");
			if (p) {
				p += strlen("mmu_gather_batch_alloc: ");
				if (!strncmp(p, "mm=", 3) && strchr(p, ' '))
					p = strchr(p, ' ') + 1;
				(own ? t->own : t->foreign)[strncmp(p, "ok ", 3) ? FAIL : ALLOC]++;
			}
			continue;
		}
		if (sscanf(p, "mmu_gather_release: mm=%*s range=%lx-%lx fullmm=%d freed_tables=%*d nr_pages=%u",
			   &s, &e, &full, &nr) != 4)
			continue;
		if (!own) {
			/* another task unmapped meanwhile */
			t->foreign[FLUSH]++;
			t->foreign[FREED] += nr;
			continue;
		}
		t->own[FLUSH]++;
		t->own[FREED] += nr;
		t->fullmm |= full;
		if (s < t->lo)
			t->lo = s;
		if (e > t->hi)
			t->hi = e;
	}
	if (f)
		fclose(f);
}

/*
 * This task's counts into @got. The tracepoints name the task of every
 * flush and batch allocation, so this task's are counted from them (the
 * cap has no tracepoint: it comes from the counter). The global counters
 * must then hold exactly those when no other task was traced meanwhile;
 * when one was, those plus the other tasks' traced events, give or take
 * the one whose count and trace fall on either side of the window.
 * Untraced, the counters are all there is. Returns how many counters
 * disagree, naming them.
 */
static int task_counts(const long long before[NR_EV], const long long after[NR_EV],
		       const struct trace_sum *t, int traced, long long got[NR_EV])
{
	long long foreign = foreign_events(t);
	int i, bad = 0;

	for (i = 0; i < NR_EV; i++) {
		long long delta = after[i] - before[i];

		got[i] = traced && i != LIMIT && !(NO_GATHER && i == FREED) ? t->own[i] : delta;
		/*
		 * Another task's event whose count fell inside the window and
		 * its trace after it adds one more; pages_freed is counted
		 * after the trace, so a flush traced before the window may add
		 * a batch of pages: only the lower bound holds for it then.
		 */
		if (foreign ? delta < got[i] ||
			      (i != FREED && delta > got[i] + t->foreign[i] + 1) :
			      delta != got[i]) {
			ksft_print_msg("%s: the counter moved %lld, this task's tracepoints say %lld%s\n",
				       ev_names[i], delta, got[i],
				       foreign ? " (other tasks too: that plus theirs)" : "");
			bad++;
		}
	}
	if (foreign)
		ksft_print_msg("%lld flushes and batch allocations of other tasks meanwhile\n",
			       foreign);
	return bad;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/*
 * Make every page present and dirty from inside the kernel: the counters
 * only need present pages, and on UML each user page fault costs a host
 * round trip.
 */
static void populate(char *p, long npages)
{
	if (madvise(p, npages * MMLAB_PAGE, MADV_POPULATE_WRITE))
		mmlab_fill(p, 0, npages, 7);
}

/* Sample up to 64 pages spread over the range: all must read zero. */
static size_t check_zero_sampled(char *p, long npages)
{
	long step = npages > 64 ? npages / 64 : 1;
	size_t bad = 0;

	for (long pg = 0; pg < npages; pg += step)
		bad += mmlab_check(p, pg, 1, 0, "after dontneed");
	return bad;
}

static char *guard;	/* an unrelated mapping that must keep its data */
#define GUARD_PAGES 64

/*
 * Map @npages at a PTE table's boundary (MMLAB_PMD_SIZE) with a mapped page
 * on each side, so that munmap() frees exactly the page tables of the whole
 * blocks inside.
 */
#define TABLE_PAGES	(MMLAB_PMD_SIZE / MMLAB_PAGE)

static char *map_aligned(long npages, char **region, size_t *rlen)
{
	size_t len = (npages + 2 * TABLE_PAGES + 2) * MMLAB_PAGE;
	char *r = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (r == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	p = (char *)(((unsigned long)r + MMLAB_PMD_SIZE) & ~(MMLAB_PMD_SIZE - 1));
	/* neighbours stay mapped and populated */
	p[-1] = 1;
	p[npages * MMLAB_PAGE] = 1;
	*region = r;
	*rlen = len;
	return p;
}

/*
 * Do the page tables freed by munmap() go through the page batches? On
 * x86 (and UML) they do: x86's tlb_remove_table() is tlb_remove_page(),
 * except when a paravirtual remote TLB flush (KVM, Hyper-V) frees them
 * through the RCU table batch; the kernel says so at boot. Asked once,
 * before any case; a log that no longer starts at record 0 may have lost
 * that line. arm64, and arm with LPAE and SMP (as arm-config builds it),
 * free them through the table batch (MMU_GATHER_RCU_TABLE_FREE), which
 * these counters do not see.
 */
static int tables_in_batches;

static void find_table_model(void)
{
#if defined(__x86_64__)
	static char rec[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK), pv = 0, first = 1;
	ssize_t n;

	tables_in_batches = 1;
	if (fd < 0)
		return;
	while (!pv && (n = read(fd, rec, sizeof(rec) - 1)) != 0) {
		if (n < 0) {
			if (errno == EPIPE || errno == EINVAL)
				continue;	/* overwritten, or too long: next */
			break;			/* EAGAIN: the end of the log */
		}
		rec[n] = 0;
		if (first && strtol(strchr(rec, ',') ? strchr(rec, ',') + 1 : "0", NULL, 10))
			ksft_print_msg("the kernel log has wrapped: a paravirtual flush would go unseen\n");
		first = 0;
		pv = strstr(rec, "KVM setup pv remote TLB flush") ||
		     strstr(rec, "Using hypercall for remote TLB flush");
	}
	close(fd);
	tables_in_batches = !pv;
#elif defined(__sh__)
	/* sh's __pte_free_tlb() is tlb_remove_page(): the page batches */
	tables_in_batches = 1;
#elif defined(__aarch64__) || defined(__arm__) || defined(__s390x__)
	tables_in_batches = 0;
	ksft_print_msg("%s: page tables are freed through the table batch, not counted\n",
		       NO_GATHER ? "s390x" : sizeof(void *) == 8 ? "arm64" : "arm");
#else
#error "say where this architecture's munmap() frees page tables"
#endif
}

/*
 * With 5-level paging (la57) the P4D page under the PGD is a table of its
 * own: free_pgtables() gathers it, and VmPTE does not count it.
 */
static long p4d_pages(void)
{
	static char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	long la57 = 0;

	/* UML shows the host's flags: its page tables have three levels. */
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "User Mode Linux")) {
			la57 = 0;
			break;
		}
		if (!strncmp(line, "flags", 5))
			la57 = !!strstr(line, " la57");
	}
	if (f)
		fclose(f);
	return la57;
}

/*
 * Without batches nothing names the task of a freed page: another task's
 * unmap in the window adds to mmu_gather_pages_released. Only when that is all
 * that is off (more pages than this task's, every other counter as the
 * model says) is the case tried again, twice at most; a wrong count of this
 * task's own fails every attempt.
 */
static int other_task_freed(int bad, const long long got[NR_EV], const long long want[NR_EV],
			    int attempt, const char *what, long npages)
{
	if (!NO_GATHER || bad != 1 || got[FREED] <= want[FREED] || attempt >= 3)
		return 0;
	ksft_print_msg("%s %ld pages, attempt %d: %lld pages freed in the window, %lld of them this task's: another task freed pages meanwhile, again\n",
		       what, npages, attempt, got[FREED], want[FREED]);
	return 1;
}

static void one_case(const char *how, long npages, int fail)
{
	long long before[NR_EV], after[NR_EV], want[NR_EV], got[NR_EV];
	long tables = 0, free_before, free_after;
	struct trace_sum t = { 0 };	/* stays empty untraced */
	char *region, *p;
	size_t rlen;
	int i, bad = 0, traced, counters_bad, attempt = 0;
	const char *what = !strcmp(how, "munmap") ? "munmap" : "MADV_DONTNEED";

again:
	attempt++;
	p = map_aligned(npages, &region, &rlen);
	populate(p, npages);
	free_before = mmlab_free_kib();
	if (fail && set_failing(1))
		ksft_exit_fail_msg("cannot enable fail_mmu_gather\n");
	traced = !trace_on();
	if (read_events(before))
		ksft_exit_fail_msg("cannot read /proc/vmstat\n");
	if (!strcmp(how, "munmap")) {
		if (munmap(p, npages * MMLAB_PAGE))
			ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
		/*
		 * free_pgtables() hands the PTE pages of the whole blocks
		 * to the same gather (UML, x86 and sh alike), unless a
		 * paravirtual flush frees them apart.
		 */
		tables = tables_in_batches ? npages / TABLE_PAGES : 0;
	} else if (madvise(p, npages * MMLAB_PAGE, MADV_DONTNEED)) {
		ksft_exit_fail_msg("madvise: %s\n", strerror(errno));
	}
	read_events(after);
	if (traced)
		trace_off(&t, getpid());
	if (fail)
		set_failing(0);

	counters_bad = task_counts(before, after, &t, traced, got);
	predict(npages + tables, fail, want);
	bad = 0;
	for (i = 0; i < NR_EV; i++)
		if (got[i] != want[i])
			bad++;
	if (other_task_freed(bad, got, want, attempt, what, npages)) {
		munmap(region, rlen);
		goto again;
	}
	if (bad)
		ksft_print_msg("got   alloc %lld fail %lld limit %lld flush %lld freed %lld\n",
			       got[ALLOC], got[FAIL], got[LIMIT], got[FLUSH], got[FREED]);
	ksft_print_msg("%s %ld pages%s: alloc %lld fail %lld limit %lld flush %lld freed %lld\n",
		       what, npages, fail ? " (fail_mmu_gather 100%)" : "",
		       want[ALLOC], want[FAIL], want[LIMIT], want[FLUSH], want[FREED]);
	ksft_test_result(!bad, "%s %ld pages%s: counters match the model\n", what, npages,
			 fail ? " with fail_mmu_gather" : "");

	if (!traced) {
		char name[96];

		snprintf(name, sizeof(name), "%s %ld pages: tracepoint agrees", what, npages);
		mmlab_skip(name, "no tracefs mmu_gather events");
	} else if (NO_GATHER) {
		char name[96];

		snprintf(name, sizeof(name), "%s %ld pages: tracepoint agrees", what, npages);
		mmlab_skip(name, "s390 frees each page at once: no gather flush to trace");
	} else {
		int ok = !counters_bad && !t.fullmm &&
			 t.lo <= (unsigned long)p && t.hi >= (unsigned long)(p + npages * MMLAB_PAGE);

		if (!ok)
			ksft_print_msg("trace: %lld events, %lld pages, range %lx-%lx, fullmm %d; unmapped %p-%p\n",
				       t.own[FLUSH], t.own[FREED], t.lo, t.hi, t.fullmm, p,
				       p + npages * MMLAB_PAGE);
		ksft_test_result(ok, "%s %ld pages%s: tracepoint agrees (events, pages, range)\n",
				 what, npages, fail ? " with fail_mmu_gather" : "");
	}

	if (strcmp(how, "munmap"))
		ksft_test_result(!check_zero_sampled(p, npages),
				 "%s %ld pages: pages read back as zero\n", what, npages);
	munmap(region, rlen);
	free_after = mmlab_free_kib();
	if (npages >= 4096)
		ksft_test_result(free_after >= free_before + npages * 4 - 2048,
				 "%s %ld pages%s: memory came back (free %ld -> %ld KiB)\n", what,
				 npages, fail ? " with fail_mmu_gather" : "", free_before, free_after);
	ksft_test_result(!mmlab_check(guard, 0, GUARD_PAGES, 3, "guard"),
			 "%s %ld pages: unrelated mapping intact\n", what, npages);
}

static void exit_case(long npages, int fail)
{
	long long before[NR_EV], after[NR_EV], got[NR_EV], want[NR_EV];
	long free_before, free_after, rss, tables;
	struct trace_sum t = { 0 };	/* stays empty untraced */
	int i, bad = 0, traced, status, pipefd[2], attempt = 0;
	char path[64], c;
	pid_t pid;

again:
	attempt++;
	if (pipe(pipefd))
		ksft_exit_fail_msg("pipe\n");
	/* fail_mmu_gather filters on tasks: the child inherits it. */
	if (fail && set_failing(1))
		ksft_exit_fail_msg("cannot enable fail_mmu_gather\n");
	pid = fork();
	if (!pid) {
		char *p = mmlab_map(npages);

		populate(p, npages);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(pipefd[0], &c, 1) != 1)
		ksft_exit_fail_msg("child did not start\n");
	/*
	 * Everything the stopped child maps goes through the one gather of
	 * exit_mmap(): each page it has present (Rss of smaps_rollup, which
	 * walks the page tables; VmRSS may lag by a task's unsynced counts on
	 * SMP) and the page tables that free_pgtables() hands to the gather
	 * (VmPTE: PTE, PMD and PUD pages, and the P4D page of 5-level paging;
	 * the PGD is freed apart), unless a paravirtual flush frees those
	 * through tlb_remove_table().
	 */
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	rss = mmlab_proc_kib(path, "Rss") / 4;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	tables = tables_in_batches ? mmlab_proc_kib(path, "VmPTE") / 4 + p4d_pages() : 0;
	free_before = mmlab_free_kib();	/* the child holds its pages */
	traced = !trace_on();
	read_events(before);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	read_events(after);
	if (traced)
		trace_off(&t, pid);
	if (fail)
		set_failing(0);
	free_after = mmlab_free_kib();
	close(pipefd[0]);
	close(pipefd[1]);

	/* The batching model must hold exactly for the pages gathered. */
	bad = task_counts(before, after, &t, traced, got);
	predict(got[FREED], fail, want);
	for (i = 0; i < NR_EV; i++)
		bad += got[i] != want[i];
	want[FREED] = rss + tables;
	if (other_task_freed(bad + (got[FREED] != want[FREED]), got, want, attempt, "exit with", npages))
		goto again;
	bad += got[FREED] != want[FREED];
	/* A fullmm flush covers the whole address space: 0 to TASK_SIZE. */
	if (traced && !NO_GATHER)
		bad += !t.fullmm || t.lo != 0 || !t.hi || t.hi == ~0UL;
	ksft_print_msg("exit with %ld pages%s (Rss %ld pages, %ld page-table pages): got alloc %lld fail %lld limit %lld flush %lld freed %lld; want %lld %lld %lld %lld %lld\n",
		       npages, fail ? " (fail_mmu_gather 100%)" : "", rss, tables,
		       got[ALLOC], got[FAIL], got[LIMIT], got[FLUSH], got[FREED],
		       want[ALLOC], want[FAIL], want[LIMIT], want[FLUSH], want[FREED]);
	if (traced)
		ksft_print_msg("exit trace: the child's %lld flushes of %lld pages, fullmm %d, range %lx-%lx\n",
			       t.own[FLUSH], t.own[FREED], t.fullmm, t.lo, t.hi);
	ksft_test_result(!bad, "exit with %ld pages%s: its Rss and page tables in one gather, counters match the model\n",
			 npages, fail ? " with fail_mmu_gather" : "");
	ksft_test_result(free_after >= free_before + npages * 4 - 2048,
			 "exit with %ld pages%s: its memory came back (free %ld -> %ld KiB)\n", npages,
			 fail ? " with fail_mmu_gather" : "", free_before, free_after);
}

/* What a case of @npages needs: the pages, their page tables and slack. */
#define CASE_MIB(npages)	((npages) / 256 + 16)

/* 32K .. 64M: the bundle full, one past it, a batch's worth, the bundle
 * and a batch full (those three set from find_batch_model()), 64 MiB */
static long sizes[] = { 0, 0, 512, 0, 16384 };

int main(void)
{
	long long ev[NR_EV];
	int fail, has_fail, plan = 1, sizes_bad;

	ksft_print_header();
	sizes_bad = find_batch_model();
	sizes[0] = BUNDLE;
	sizes[1] = BUNDLE + 1;
	sizes[3] = BUNDLE + BATCH;
	if (read_events(ev))
		ksft_exit_skip("kernel built without CONFIG_DEBUG_MMU_GATHER (no mmu_gather_* in /proc/vmstat)\n");
	has_fail = access(FAILFS "/probability", W_OK) == 0;
	/* Without batches there is no batch allocation to fail: one skip says so. */
	for (fail = 0; fail < 2 - NO_GATHER; fail++)
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
			plan += 2 * (3 + (sizes[i] >= 4096)) + 1;	/* munmap + dontneed */
	plan += 2 * (2 - NO_GATHER) + NO_GATHER;
	ksft_set_plan(plan);
	if (measured)
		ksft_test_result(!sizes_bad, "the gather's sizes, measured, are its headers' (bundle %ld pages, batch %ld)\n",
				 BUNDLE, BATCH);
	else
		mmlab_skip("the gather's sizes", NO_GATHER ? "s390 gathers no pages" :
			   "not measured: no fail_mmu_gather or no release tracepoint");
	if (NO_GATHER)
		mmlab_skip("fail_mmu_gather cases",
			   "s390 gathers no pages (MMU_GATHER_NO_GATHER): no batch allocation to fail");

	find_table_model();
	guard = mmlab_map(GUARD_PAGES);
	mmlab_fill(guard, 0, GUARD_PAGES, 3);

	for (fail = 0; fail < 2 - NO_GATHER; fail++) {
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			if (fail && !has_fail) {
				int n = 2 * (3 + (sizes[i] >= 4096)) + 1;

				while (n--)
					mmlab_skip("fail_mmu_gather case", "no " FAILFS " (CONFIG_FAIL_MMU_GATHER off)");
				continue;
			}
			if (!mmlab_mem_fits(CASE_MIB(sizes[i]))) {
				int n = 2 * (3 + (sizes[i] >= 4096)) + 1;

				while (n--)
					mmlab_skip("munmap/dontneed case", mmlab_mem_why(CASE_MIB(sizes[i])));
				continue;
			}
			one_case("munmap", sizes[i], fail);
			one_case("dontneed", sizes[i], fail);
		}
		if (fail && !has_fail) {
			mmlab_skip("exit with fail_mmu_gather", "no " FAILFS " (CONFIG_FAIL_MMU_GATHER off)");
			mmlab_skip("exit with fail_mmu_gather", "no " FAILFS " (CONFIG_FAIL_MMU_GATHER off)");
			continue;
		}
		if (!mmlab_mem_fits(CASE_MIB(16384))) {
			mmlab_skip("exit case", mmlab_mem_why(CASE_MIB(16384)));
			mmlab_skip("exit case", mmlab_mem_why(CASE_MIB(16384)));
			continue;
		}
		exit_case(16384, fail);
	}
	ksft_finished();
}
