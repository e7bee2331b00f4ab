// SPDX-License-Identifier: GPL-2.0
/*
 * file_writeback: one thread writes a shared file mapping while another
 * writes the file back, on a block-backed filesystem (ext2 on a zram disk
 * of the test's own). Writeback cleans each page through the rmap
 * (folio_mkclean(): page_vma_mkclean_one() clears the PTE, flushes it and
 * sets it back write-protected and clean), so the writer's next write to
 * the page faults and dirties it again. A translation left writable after
 * the cleaning lets writes land in a page the kernel holds clean: they
 * never reach the disk.
 *
 * So, in ROUNDS rounds: fsync() while the writer writes every page, then
 * wait until the writer has written every page once more. Checked:
 *  - the writer's own minor faults (getrusage(RUSAGE_THREAD)): every page
 *    was dirty at each fsync(), so each round makes each page fault again,
 *    at least NPAGES * ROUNDS in all (no write through a stale writable
 *    translation);
 *  - after the writer stopped, the mapping was unmapped and the file
 *    synced: the disk (read with O_DIRECT, past the page cache) holds in
 *    every page the last value the writer wrote there, and the seed in the
 *    rest of the page.
 * On SMP the writer is on CPU 1 and the syncing thread on CPU 0, so a
 * missing flush leaves the writer's TLB entries writable; on UML a missing
 * flush leaves the host's mapping writable.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include "mmlab.h"

#define NPAGES		64
#define ROUNDS		20
#define SEED		11
#define DISK_MIB	16
#define DIR		"/tmp/mmlab-wb"
#define FILE_NAME	DIR "/data"

static char *map;
static long ncpus;
static atomic_int stop, writer_ready;
static atomic_long passes;		/* passes the writer completed */
static long writer_faults;

static inline uint64_t mark(long pass, size_t pg)
{
	return 0x3b00000000000000ULL | ((uint64_t)pass << 16) | pg;
}

static long thread_minflt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? -1 : ru.ru_minflt;
}

/* Writes word 0 of every page, pass after pass, with no system call between. */
static void *writer(void *arg)
{
	long f0, pass;

	(void)arg;
	if (ncpus > 1)
		mmlab_pin(1);
	f0 = thread_minflt();
	atomic_store(&writer_ready, 1);
	for (pass = 1; !atomic_load(&stop); pass++) {
		for (size_t pg = 0; pg < NPAGES; pg++)
			*(volatile uint64_t *)(map + pg * MMLAB_PAGE) = mark(pass, pg);
		atomic_store(&passes, pass);
	}
	writer_faults = thread_minflt() - f0;
	return NULL;
}

/* A new zram disk: its id, or -1 with @why set. */
static int zram_add(char *why, size_t len)
{
	char buf[32], path[64];
	int fd = open("/sys/class/zram-control/hot_add", O_RDONLY), id;
	ssize_t n;

	if (fd < 0) {
		snprintf(why, len, "no /sys/class/zram-control (CONFIG_ZRAM): %s", strerror(errno));
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		snprintf(why, len, "zram hot_add: %s", n < 0 ? strerror(errno) : "empty");
		return -1;
	}
	buf[n] = 0;
	id = atoi(buf);
	snprintf(path, sizeof(path), "/sys/block/zram%d/disksize", id);
	snprintf(buf, sizeof(buf), "%dM", DISK_MIB);
	if (mmlab_write_file(path, buf)) {
		snprintf(why, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	return id;
}

static void zram_remove(int id)
{
	char buf[16], path[64];

	snprintf(path, sizeof(path), "/sys/block/zram%d/reset", id);
	mmlab_write_file(path, "1");
	snprintf(buf, sizeof(buf), "%d", id);
	mmlab_write_file("/sys/class/zram-control/hot_remove", buf);
}

int main(void)
{
	char why[160], dev[32], cmd[96];
	size_t bad = 0, wrong_rest = 0;
	uint64_t last[NPAGES];
	long rounds_done = 0;
	pthread_t w;
	char *disk;
	int id, fd, fails = 0;

	ksft_print_header();
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	id = zram_add(why, sizeof(why));
	if (id < 0)
		ksft_exit_skip("%s\n", why);
	snprintf(dev, sizeof(dev), "/dev/zram%d", id);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -b 4096 %s > /dev/null 2>&1", dev);
	if (system(cmd)) {
		zram_remove(id);
		ksft_exit_fail_msg("%s failed\n", cmd);
	}
	mkdir(DIR, 0755);
	if (mount(dev, DIR, "ext2", 0, NULL) && mount(dev, DIR, "ext4", 0, NULL)) {
		snprintf(why, sizeof(why), "mounting %s (ext2) on %s: %s (the kernel needs ext2, or ext4 with EXT4_USE_FOR_EXT2)",
			 dev, DIR, strerror(errno));
		zram_remove(id);
		ksft_exit_skip("%s\n", why);
	}
	ksft_set_plan(2);

	fd = open(FILE_NAME, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, NPAGES * MMLAB_PAGE))
		ksft_exit_fail_msg("%s: %s\n", FILE_NAME, strerror(errno));
	map = mmap(NULL, NPAGES * MMLAB_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	mmlab_fill(map, 0, NPAGES, SEED);
	if (fsync(fd))
		ksft_exit_fail_msg("fsync: %s\n", strerror(errno));

	if (ncpus > 1)
		mmlab_pin(0);
	if (pthread_create(&w, NULL, writer, NULL))
		ksft_exit_fail_msg("pthread_create: %s\n", strerror(errno));
	while (!atomic_load(&writer_ready) || atomic_load(&passes) < 1)
		sched_yield();
	for (rounds_done = 0; rounds_done < ROUNDS; rounds_done++) {
		long target;

		if (fsync(fd)) {
			ksft_print_msg("fsync in round %ld: %s\n", rounds_done, strerror(errno));
			fails++;
			break;
		}
		/* a whole pass after the cleaning: every page written again */
		target = atomic_load(&passes) + 2;
		while (atomic_load(&passes) < target)
			sched_yield();
	}
	atomic_store(&stop, 1);
	pthread_join(w, NULL);
	for (size_t pg = 0; pg < NPAGES; pg++)
		last[pg] = *(uint64_t *)(map + pg * MMLAB_PAGE);
	ksft_print_msg("%ld writeback rounds while the writer wrote %ld passes over %d pages: it took %ld write faults (want at least %ld: each page cleaned and written again each round)\n",
		       rounds_done, atomic_load(&passes), NPAGES, writer_faults,
		       (long)NPAGES * rounds_done);
	ksft_test_result(!fails && writer_faults >= (long)NPAGES * rounds_done,
			 "every writeback round write-protected every page: the writer faulted on each again\n");

	/* the mapping gone and the file synced: what the disk holds */
	munmap(map, NPAGES * MMLAB_PAGE);
	if (fsync(fd))
		ksft_exit_fail_msg("fsync: %s\n", strerror(errno));
	close(fd);
	fd = open(FILE_NAME, O_RDONLY | O_DIRECT);
	if (fd < 0 || posix_memalign((void **)&disk, MMLAB_PAGE, NPAGES * MMLAB_PAGE) ||
	    pread(fd, disk, NPAGES * MMLAB_PAGE, 0) != (ssize_t)(NPAGES * MMLAB_PAGE))
		ksft_exit_fail_msg("reading %s with O_DIRECT: %s\n", FILE_NAME, strerror(errno));
	close(fd);
	for (size_t pg = 0; pg < NPAGES; pg++) {
		const uint64_t *p = (const uint64_t *)(disk + pg * MMLAB_PAGE);
		size_t wd = 1;

		if (p[0] != last[pg]) {
			if (!bad)
				ksft_print_msg("page %zu on disk holds %#llx, the writer last wrote %#llx: a write that landed through a translation writeback left writable, never written back\n",
					       pg, (unsigned long long)p[0], (unsigned long long)last[pg]);
			bad++;
		}
		while (wd < MMLAB_WORDS && p[wd] == mmlab_word(SEED, pg, wd))
			wd++;
		wrong_rest += wd < MMLAB_WORDS;
	}
	ksft_print_msg("on disk: %zu of %d pages hold the writer's last value, %zu lost the rest of their data\n",
		       NPAGES - bad, NPAGES, wrong_rest);
	ksft_test_result(!bad && !wrong_rest,
			 "the disk holds every page's last write (read with O_DIRECT after munmap and fsync)\n");
	free(disk);

	if (umount(DIR))
		ksft_print_msg("umount %s: %s\n", DIR, strerror(errno));
	zram_remove(id);
	ksft_finished();
}
