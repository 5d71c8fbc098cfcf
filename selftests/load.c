// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifetime: load and unload numaplace.ko many times in a row; the
 * device comes and goes with it, nothing leaks (unreclaimable slab stays
 * flat). Leaves the module loaded for the tests that follow.
 */
#include <sys/stat.h>
#include <sys/syscall.h>

#include "np_test.h"
#include "kselftest_harness.h"

#define NP_MODULE_PATH	"/usr/lib/numaplace/numaplace.ko"
#define NP_LOAD_CYCLES	100
/*
 * Unreclaimable slab drifts with unrelated kernel activity (a new slab
 * page here and there). A leak grows with every cycle; drift does not: a
 * batch of NP_LOAD_CYCLES that stays under this bound proves there is no
 * leak of 1 KiB a cycle, and up to NP_LOAD_BATCHES batches are tried.
 */
#define NP_LOAD_SLAB_SLACK_KB 96
#define NP_LOAD_BATCHES	3

static int np_loaded(void)
{
	struct stat st;

	return stat("/sys/module/numaplace", &st) == 0;
}

static int np_load(int modfd)
{
	return syscall(SYS_finit_module, modfd, "", 0) ? -errno : 0;
}

static int np_unload(void)
{
	return syscall(SYS_delete_module, "numaplace", O_NONBLOCK) ? -errno : 0;
}

static void np_drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);

	if (fd >= 0) {
		if (write(fd, "3", 1) < 0)
			perror("drop_caches");
		close(fd);
	}
}

/*
 * Shrink every slab cache: on a KASAN kernel freed objects wait in the
 * quarantine (up to 1/32 of memory) and still count as slab until their
 * cache is shrunk (kasan_cache_shrink()), which would read as a leak.
 */
static void np_shrink_slabs(void)
{
	struct dirent *d;
	char path[300];
	DIR *dir = opendir("/sys/kernel/slab");
	int fd;

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 d->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		/* An error is no matter: the reading says what is left. */
		if (write(fd, "1", 1) < 0)
			errno = 0;
		close(fd);
	}
	closedir(dir);
}

/* Settle RCU-deferred frees and caches, then read unreclaimable slab. */
static long np_slab_settled_kb(void)
{
	usleep(200 * 1000);
	np_drop_caches();
	np_shrink_slabs();
	return np_meminfo_kb("SUnreclaim");
}

/* One cycle: load, open, INFO, refuse unload while open, close, unload. */
static void np_cycle(struct __test_metadata *_metadata, int modfd, int i)
{
	struct numaplace_info info;
	int fd;

	ASSERT_EQ(0, np_load(modfd)) TH_LOG("load %d", i);
	fd = np_open();
	ASSERT_GE(fd, 0) TH_LOG("open after load %d", i);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	ASSERT_EQ(0, np_ioctl(fd, NUMAPLACE_IOC_INFO, &info));
	/* An open file holds the module. */
	EXPECT_EQ(-EWOULDBLOCK, np_unload());
	close(fd);
	ASSERT_EQ(0, np_unload()) TH_LOG("unload %d", i);
	ASSERT_FALSE(np_loaded());
	ASSERT_EQ(-ENOENT, np_open());
}

TEST(load_unload_cycles)
{
	long before, after = 0, grew = 0;
	int modfd, i, batch;

	modfd = open(NP_MODULE_PATH, O_RDONLY | O_CLOEXEC);
	if (modfd < 0)
		SKIP(return, "no %s", NP_MODULE_PATH);
	if (np_loaded())
		ASSERT_EQ(0, np_unload());

	/* Warm-up cycles so first-load allocations do not count. */
	for (i = 0; i < 5; i++)
		np_cycle(_metadata, modfd, i);
	for (batch = 0; batch < NP_LOAD_BATCHES; batch++) {
		before = np_slab_settled_kb();
		ASSERT_GT(before, 0);
		for (i = 0; i < NP_LOAD_CYCLES; i++)
			np_cycle(_metadata, modfd, i);
		after = np_slab_settled_kb();
		grew = after - before;
		TH_LOG("batch %d: SUnreclaim %ld kB -> %ld kB", batch, before,
		       after);
		if (grew < NP_LOAD_SLAB_SLACK_KB)
			break;
	}
	EXPECT_LT(grew, NP_LOAD_SLAB_SLACK_KB)
		TH_LOG("every batch of %d cycles grew unreclaimable slab",
		       NP_LOAD_CYCLES);

	ASSERT_EQ(0, np_load(modfd));
	close(modfd);
}

NP_HARNESS_MAIN
