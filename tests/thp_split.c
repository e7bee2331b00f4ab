// SPDX-License-Identifier: GPL-2.0
/*
 * thp_split: transparent huge pages on x86 (UML has none): a write fault
 * in an aligned MADV_HUGEPAGE range maps a PMD-sized page; munmap() of one
 * 4 KiB page in it splits the PMD (thp_split_pmd) and every other byte
 * survives; a read fault maps the huge zero page, and the first write to it
 * splits that PMD too and reads back what was written.
 */
#include "mmlab.h"

#define HPAGE		(2UL << 20)
#define HPAGE_PAGES	(HPAGE / MMLAB_PAGE)

/* AnonHugePages (KiB) of the mapping containing @addr, from smaps. */
static long anon_huge_kib(void *addr)
{
	char line[256];
	long v = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		/* a mapping's header line; field lines never parse as 3 items */
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3)
			in = (unsigned long)addr >= lo && (unsigned long)addr < hi;
		if (in && sscanf(line, "AnonHugePages: %ld", &v) == 1)
			break;
	}
	if (f)
		fclose(f);
	return v;
}

/* The PFN mapping @addr (root only), or 0. */
static uint64_t pfn_of(void *addr)
{
	uint64_t ent = 0;
	FILE *f = fopen("/proc/self/pagemap", "rb");

	if (f && !fseek(f, (unsigned long)addr / MMLAB_PAGE * 8, SEEK_SET) &&
	    fread(&ent, sizeof(ent), 1, f) != 1)
		ent = 0;
	if (f)
		fclose(f);
	return (ent >> 63) ? ent & ((1ULL << 55) - 1) : 0;
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

int main(void)
{
	long long split0, zero0, fault0;
	char mode[128] = "";
	char *p, *z, *z2;
	FILE *f;

	ksft_print_header();
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (!f)
		ksft_exit_skip("no THP in this kernel (UML has none)\n");
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = 0;
	fclose(f);
	if (strstr(mode, "[never]"))
		ksft_exit_skip("THP is disabled (%s)\n", mode);
	ksft_set_plan(5);

	fault0 = mmlab_vmstat("thp_fault_alloc");
	split0 = mmlab_vmstat("thp_split_pmd");
	p = map_huge_aligned();
	mmlab_fill(p, 0, HPAGE_PAGES, 5);
	ksft_test_result(mmlab_vmstat("thp_fault_alloc") == fault0 + 1 &&
			 anon_huge_kib(p) >= 2048,
			 "write fault maps a 2 MiB page (AnonHugePages %ld KiB)\n", anon_huge_kib(p));

	if (munmap(p + 100 * MMLAB_PAGE, MMLAB_PAGE))
		ksft_exit_fail_msg("munmap: %s\n", strerror(errno));
	ksft_test_result(mmlab_vmstat("thp_split_pmd") == split0 + 1 &&
			 mmlab_probe(p + 100 * MMLAB_PAGE, 0) == SIGSEGV,
			 "munmap of one page splits the PMD (thp_split_pmd +%lld)\n",
			 mmlab_vmstat("thp_split_pmd") - split0);
	ksft_test_result(!mmlab_check(p, 0, 100, 5, "below hole") &&
			 !mmlab_check(p, 101, HPAGE_PAGES - 101, 5, "above hole"),
			 "every other page of the split huge page kept its data\n");

	zero0 = mmlab_vmstat("thp_zero_page_alloc");
	split0 = mmlab_vmstat("thp_split_pmd");
	z = map_huge_aligned();
	z2 = map_huge_aligned();
	ksft_test_result(!mmlab_check(z, 0, HPAGE_PAGES, 0, "huge zero page") &&
			 !mmlab_check(z2, 0, 1, 0, "huge zero page") &&
			 pfn_of(z) && pfn_of(z) == pfn_of(z2) &&
			 pfn_of(z + 511 * MMLAB_PAGE) == pfn_of(z) + 511,
			 "read faults in two ranges map the same huge zero page (pfn %#llx, thp_zero_page_alloc %lld -> %lld)\n",
			 (unsigned long long)pfn_of(z), zero0, mmlab_vmstat("thp_zero_page_alloc"));
	z[5 * MMLAB_PAGE] = 42;
	ksft_test_result(z[5 * MMLAB_PAGE] == 42 && z[6 * MMLAB_PAGE] == 0 &&
			 mmlab_vmstat("thp_split_pmd") >= split0 + 1,
			 "write to the huge zero page splits its PMD (thp_split_pmd +%lld)\n",
			 mmlab_vmstat("thp_split_pmd") - split0);
	ksft_finished();
}
