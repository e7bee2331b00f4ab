// SPDX-License-Identifier: GPL-2.0
/*
 * thp_split: PMD splits of transparent huge pages on x86 (UML has no THP).
 *
 * A write fault in an aligned MADV_HUGEPAGE range maps a huge page, a read
 * fault maps the huge zero page (the same PFN for two ranges). Then each of
 * mprotect() of one 4 KiB page, munmap() of it, mremap() of it elsewhere and
 * a write fault to it must split the huge zero PMD at exactly that address:
 * the thp:split_huge_pmd tracepoint reports one split by this task, with
 * address, haddr and kind=huge-zero; thp_split_pmd_zero and thp_split_pmd
 * count it (global counters: any other task's splits in the same window,
 * which the tracepoint also sees, are allowed for and no more); the other
 * pages stay mapped to the small zero page and read zero (the written one
 * its data), and RSS grows by the written page only, never by 2 MiB. The
 * same three splits of an anonymous THP with data report kind=anon, count
 * in thp_split_pmd only and keep every byte. Last, a THP that fork() shares
 * is split in the child, whose writes must copy and leave the parent's data.
 * On x86 the tlb:tlb_flush tracepoint also counts each op's flushes: the
 * split must flush the PMD's translation itself (want_flushes below).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>
#include "mmlab.h"

#define HPAGE		MMLAB_PMD_SIZE
#define HPAGE_PAGES	(HPAGE / MMLAB_PAGE)
#define TRACEFS		"/sys/kernel/tracing"
#define SPLIT_EVENT	TRACEFS "/events/thp/split_huge_pmd/enable"
#define OFF		5		/* the page each operation names */
#define SEED		5

enum op { MPROTECT, MUNMAP, MREMAP, WRITE, NR_OPS };
static const char *const op_name[NR_OPS] = { "mprotect", "munmap", "mremap", "write fault" };

/* Sum of smaps field @field (KiB) over the mappings overlapping [lo, hi). */
static long smaps_kib(const char *field, const void *lo, const void *hi)
{
	char line[256], key[64];
	long v, sum = 0;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(key, sizeof(key), "%s: %%ld", field);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[5];

		/* a mapping's header line; field lines never parse as 3 items */
		if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3)
			in = b > (unsigned long)lo && a < (unsigned long)hi;
		else if (in && sscanf(line, key, &v) == 1)
			sum += v;
	}
	if (f)
		fclose(f);
	return sum;
}

static char *map_huge_aligned(void)
{
	char *r = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (r == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	p = (char *)(((unsigned long)r + HPAGE - 1) & ~(HPAGE - 1));
	if (madvise(p, HPAGE, MADV_HUGEPAGE))
		ksft_exit_fail_msg("madvise(MADV_HUGEPAGE): %s\n", strerror(errno));
	return p;
}

/* Our own splits (the last one's fields), and every task's. */
struct split_trace {
	int n;
	unsigned long address, haddr;
	char kind[16];
	int freeze;
	int all, all_zero;
	int flushes;	/* x86: this task's local flushes of its mm */
};

/*
 * x86's tlb:tlb_flush: this task's flushes of its own mm during each op
 * (pinned to one CPU, every one is local). The split flushes the PMD's
 * 2 MiB translation itself, then the op flushes the PTE it changed: two,
 * but for mprotect(PROT_READ) of a huge zero page, whose PTE is read-only
 * already. Without the split's flush a stale 2 MiB TLB entry would live on
 * beside the new PTEs: on hardware, conflicting sizes for one address
 * (AMD erratum 383), which TCG does not model; the count shows it.
 */
#define TLB_EV		TRACEFS "/events/tlb/tlb_flush"
static int have_tlb_ev;
static const int want_flushes[2][NR_OPS] = {
	[0] = { 2, 2, 2, 2 },	/* a THP (no write-fault case) */
	[1] = { 1, 2, 2, 2 },	/* the huge zero page */
};

static int trace_begin(void)
{
	if (mmlab_write_file(SPLIT_EVENT, "1") || mmlab_write_file(TRACEFS "/trace", ""))
		return -1;
	return have_tlb_ev && mmlab_trace_own_where(TLB_EV, "") ? -1 : 0;
}

/* The split_huge_pmd events since trace_begin(): ours, the last in @t. */
static void trace_end(struct split_trace *t)
{
	static char line[1024];
	FILE *f;

	mmlab_write_file(SPLIT_EVENT, "0");
	if (have_tlb_ev)
		mmlab_trace_stop(TLB_EV);
	memset(t, 0, sizeof(*t));
	f = fopen(TRACEFS "/trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "split_huge_pmd:");

		if (strstr(line, "tlb_flush:") && strstr(line, "reason:local mm shootdown"))
			t->flushes++;
		if (!p)
			continue;
		t->all++;
		t->all_zero += !!strstr(p, "kind=huge-zero ");
		if (mmlab_trace_pid(line) != getpid() ||
		    sscanf(p, "split_huge_pmd: mm=%*s address=%lx haddr=%lx kind=%15s freeze=%d",
			   &t->address, &t->haddr, t->kind, &t->freeze) != 4)
			continue;
		t->n++;
	}
	if (f)
		fclose(f);
}

/*
 * Split the PMD mapping @p (the huge zero page when @zero, else a THP filled
 * with SEED) by @op on page OFF, and check everything the header promises.
 */
static void split_case(char *p, int zero, enum op op)
{
	long long split0, zsplit0, split, zsplit, split_max, zsplit_max;
	char *a = p + OFF * MMLAB_PAGE, *moved = NULL;
	long rss0, rss1, want_rss;
	int still_mapped;
	char *last;
	struct split_trace t;
	size_t bad = 0;
	int traced;

	rss0 = smaps_kib("Rss", p, p + HPAGE);
	traced = !trace_begin();
	split0 = mmlab_vmstat("thp_split_pmd");
	zsplit0 = mmlab_vmstat("thp_split_pmd_zero");
	switch (op) {
	case MPROTECT:
		bad += !!mprotect(a, MMLAB_PAGE, PROT_READ);
		break;
	case MUNMAP:
		bad += !!munmap(a, MMLAB_PAGE);
		break;
	case MREMAP:
		moved = mmap(NULL, MMLAB_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		moved = mremap(a, MMLAB_PAGE, MMLAB_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, moved);
		bad += moved == MAP_FAILED;
		break;
	case WRITE:
		mmlab_fill(p, OFF, 1, SEED + 1);
		break;
	default:
		break;
	}
	split = mmlab_vmstat("thp_split_pmd") - split0;
	zsplit = mmlab_vmstat("thp_split_pmd_zero") - zsplit0;
	if (traced)
		trace_end(&t);
	/*
	 * Before anything reads them: the first and the last page are still
	 * mapped, to the small zero page, or to their subpages of the THP.
	 */
	last = p + (HPAGE_PAGES - 1) * MMLAB_PAGE;
	if (zero)
		still_mapped = mmlab_pfn(p) && mmlab_pfn(p) == mmlab_pfn(last);
	else
		still_mapped = mmlab_pfn(p) && mmlab_pfn(last) == mmlab_pfn(p) + HPAGE_PAGES - 1;
	bad += !still_mapped;
	rss1 = smaps_kib("Rss", p, p + HPAGE) + (moved && moved != MAP_FAILED ?
						 smaps_kib("Rss", moved, moved + MMLAB_PAGE) : 0);

	/* Data: zero (or SEED) everywhere but the page the op named. */
	bad += mmlab_check(p, 0, OFF, zero ? 0 : SEED, "below");
	bad += mmlab_check(p, OFF + 1, HPAGE_PAGES - OFF - 1, zero ? 0 : SEED, "above");
	if (op == MPROTECT)
		bad += mmlab_check(p, OFF, 1, zero ? 0 : SEED, "mprotected page") +
		       (mmlab_probe(a, 1) != SIGSEGV);
	if (op == MUNMAP)
		bad += mmlab_probe(a, 0) != SIGSEGV;
	if (op == MREMAP && moved != MAP_FAILED)
		/* the moved page keeps what page OFF held */
		bad += mmlab_check(moved - OFF * MMLAB_PAGE, OFF, 1, zero ? 0 : SEED,
				   "moved page") + (mmlab_probe(a, 0) != SIGSEGV);
	if (op == WRITE)
		bad += mmlab_check(p, OFF, 1, SEED + 1, "written page");

	/*
	 * Memory: the zero page costs no RSS, a written page 4 KiB; a THP
	 * loses only what was unmapped (a moved page is counted where it went).
	 */
	if (zero)
		want_rss = rss0 + (op == WRITE ? 4 : 0);
	else
		want_rss = rss0 - (op == MUNMAP ? 4 : 0);
	bad += rss1 != want_rss;

	ksft_test_result(!bad, "%s %s: data intact, %s, Rss %ld -> %ld KiB\n",
			 zero ? "huge zero page" : "THP", op_name[op],
			 still_mapped ? "the rest still mapped" : "pages lost their mapping",
			 rss0, rss1);
	/*
	 * The counters are global: they hold our one split and any other
	 * task's meanwhile, which the tracepoint (every task, the same
	 * window) bounds. Untraced, nothing may have split but us.
	 */
	split_max = traced ? t.all : 1;
	zsplit_max = traced ? t.all_zero : !!zero;
	ksft_test_result(split >= 1 && split <= split_max &&
			 zsplit >= !!zero && zsplit <= zsplit_max,
			 "%s %s splits the PMD: thp_split_pmd +%lld (want 1..%lld), thp_split_pmd_zero +%lld (want %d..%lld)\n",
			 zero ? "huge zero page" : "THP", op_name[op], split, split_max,
			 zsplit, !!zero, zsplit_max);
	if (!traced) {
		mmlab_skip("split_huge_pmd tracepoint", "no " SPLIT_EVENT);
		return;
	}
	ksft_test_result(t.n == 1 && t.address == (unsigned long)a &&
			 t.haddr == (unsigned long)p && !t.freeze &&
			 !strcmp(t.kind, zero ? "huge-zero" : "anon"),
			 "%s %s: thp:split_huge_pmd x%d address=%lx (want %p) haddr=%lx kind=%s\n",
			 zero ? "huge zero page" : "THP", op_name[op], t.n, t.address, a,
			 t.haddr, t.kind);
	if (have_tlb_ev)
		ksft_test_result(t.flushes == want_flushes[zero][op],
				 "%s %s: %d local flushes of this mm (want %d: the split's of the PMD%s)\n",
				 zero ? "huge zero page" : "THP", op_name[op], t.flushes,
				 want_flushes[zero][op],
				 want_flushes[zero][op] > 1 ? ", then the op's" : "");
}

/*
 * fork() shares a THP write-protected between parent and child. A split in
 * either must keep each PTE write-protected, so that the next write copies
 * the page: the child splits its PMD by unmapping page OFF and writes every
 * other page, and the parent must still read its own data.
 */
static void split_cow_shared(void)
{
	char *p = map_huge_aligned();
	size_t bad;
	int status;
	pid_t pid;

	mmlab_fill(p, 0, HPAGE_PAGES, SEED);
	if (smaps_kib("AnonHugePages", p, p + HPAGE) < (long)(HPAGE >> 10))
		ksft_exit_fail_msg("no THP mapped for the fork case\n");
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		bad = !!munmap(p + OFF * MMLAB_PAGE, MMLAB_PAGE);
		mmlab_fill(p, 0, OFF, SEED + 2);
		mmlab_fill(p, OFF + 1, HPAGE_PAGES - OFF - 1, SEED + 2);
		bad += mmlab_check(p, 0, OFF, SEED + 2, "child below");
		bad += mmlab_check(p, OFF + 1, HPAGE_PAGES - OFF - 1, SEED + 2, "child above");
		_exit(bad ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	bad = mmlab_check(p, 0, HPAGE_PAGES, SEED, "parent after the child's writes");
	ksft_test_result(WIFEXITED(status) && !WEXITSTATUS(status) && !bad,
			 "THP shared by fork and split in the child: the child's writes copy, the parent keeps its data (%zu pages changed)\n",
			 bad);
	munmap(p, HPAGE);
}

int main(void)
{
	long long zero0, fault0;
	char mode[128] = "";
	int use_zero;
	char *p, *z, *z2;
	enum op op;
	FILE *f;

	ksft_print_header();
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
#ifdef __s390x__
		/* has_transparent_hugepage(): QEMU 7.2's TCG CPU lacks it */
		ksft_exit_skip("no THP: s390 needs the EDAT-1 facility, which this CPU lacks\n");
#else
		ksft_exit_skip("no THP in this kernel (UML and sh have none)\n");
#endif
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = 0;
	fclose(f);
	if (strstr(mode, "[never]"))
		ksft_exit_skip("THP is disabled (%s)\n", mode);
	f = fopen("/sys/kernel/mm/transparent_hugepage/use_zero_page", "r");
	if (!f || fscanf(f, "%d", &use_zero) != 1)
		use_zero = 0;
	if (f)
		fclose(f);
	if (!use_zero)
		ksft_exit_skip("the huge zero page is off (transparent_hugepage/use_zero_page)\n");
	if (mmlab_vmstat("thp_split_pmd_zero") < 0)
		ksft_exit_skip("no thp_split_pmd_zero in /proc/vmstat (CONFIG_DEBUG_THP_SPLIT_PMD)\n");
	/*
	 * Every architecture has the tlb:tlb_flush event (mm/rmap.c defines
	 * it), but only x86's flushes emit it: elsewhere it stays silent.
	 */
#ifdef __x86_64__
	have_tlb_ev = !access(TLB_EV "/enable", W_OK);
#else
	ksft_print_msg("local flushes not counted: only x86 emits tlb:tlb_flush\n");
#endif
	ksft_set_plan(3 + NR_OPS * 3 + 3 * 3 + 1 + (have_tlb_ev ? NR_OPS + 3 : 0));
	/* one CPU: each flush of the mm is this CPU's own, traced as local */
	if (mmlab_pin(0))
		ksft_exit_fail_msg("cannot pin to CPU 0\n");

	fault0 = mmlab_vmstat("thp_fault_alloc");
	p = map_huge_aligned();
	mmlab_fill(p, 0, HPAGE_PAGES, SEED);
	ksft_test_result(mmlab_vmstat("thp_fault_alloc") == fault0 + 1 &&
			 smaps_kib("AnonHugePages", p, p + HPAGE) >= (long)(HPAGE >> 10),
			 "write fault maps a %lu KiB page (AnonHugePages %ld KiB)\n",
			 HPAGE >> 10, smaps_kib("AnonHugePages", p, p + HPAGE));

	zero0 = mmlab_vmstat("thp_zero_page_alloc");
	z = map_huge_aligned();
	z2 = map_huge_aligned();
	ksft_test_result(!mmlab_check(z, 0, HPAGE_PAGES, 0, "huge zero page") &&
			 !mmlab_check(z2, 0, 1, 0, "huge zero page") &&
			 mmlab_pfn(z) && mmlab_pfn(z) == mmlab_pfn(z2) &&
			 mmlab_pfn(z + 511 * MMLAB_PAGE) == mmlab_pfn(z) + 511,
			 "read faults in two ranges map the same huge zero page (pfn %#llx, thp_zero_page_alloc %lld -> %lld)\n",
			 (unsigned long long)mmlab_pfn(z), zero0, mmlab_vmstat("thp_zero_page_alloc"));
	ksft_test_result(smaps_kib("Rss", z, z + HPAGE) == 0,
			 "the huge zero page mapping costs no RSS (%ld KiB)\n",
			 smaps_kib("Rss", z, z + HPAGE));
	munmap(z, HPAGE);
	munmap(z2, HPAGE);

	for (op = 0; op < NR_OPS; op++) {
		z = map_huge_aligned();
		if (mmlab_check(z, 0, 1, 0, "huge zero page") || !mmlab_pfn(z) ||
		    mmlab_pfn(z + MMLAB_PAGE) != mmlab_pfn(z) + 1)
			ksft_exit_fail_msg("no huge zero page mapped for %s\n", op_name[op]);
		split_case(z, 1, op);
	}
	for (op = 0; op < WRITE; op++) {
		p = map_huge_aligned();
		mmlab_fill(p, 0, HPAGE_PAGES, SEED);
		if (smaps_kib("AnonHugePages", p, p + HPAGE) < (long)(HPAGE >> 10))
			ksft_exit_fail_msg("no THP mapped for %s\n", op_name[op]);
		split_case(p, 0, op);
	}
	split_cow_shared();

	ksft_finished();
}
