// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifetime: load and unload numaplace.ko many times in a row; the
 * device comes and goes with it, nothing leaks (unreclaimable slab stays
 * flat). Leaves the module loaded for the tests that follow.
 */
#include "np_test.h"
#include "kselftest_harness.h"

#define NP_LOAD_CYCLES	100
/*
 * Unreclaimable slab drifts with unrelated kernel activity (a new slab
 * page here and there). A leak grows with every cycle; drift does not: a
 * batch of NP_LOAD_CYCLES that stays under this bound proves there is no
 * leak of 2.5 KiB a cycle, and up to NP_LOAD_BATCHES batches are tried.
 * 96 KiB (1 KiB a cycle) was the bound until 7.3's loader itself kept
 * more: plain insmod/rmmod of stop 22's module (c9d6e17) grew SUnreclaim
 * by 352 KiB in 100 cycles there, and this tree's module, with the
 * page-table engine, settled at 120-352 KiB a batch (issue 16 note; the
 * kernel-side cause is not found yet).
 */
#define NP_LOAD_SLAB_SLACK_KB 256
#define NP_LOAD_BATCHES	3

/* One cycle: load, open, INFO, refuse unload while open, close, unload. */
static void np_cycle(struct __test_metadata *_metadata, int modfd, int i)
{
	struct numaplace_info info;
	int fd;

	ASSERT_EQ(0, np_module_load_fd(modfd)) TH_LOG("load %d", i);
	fd = np_open();
	ASSERT_GE(fd, 0) TH_LOG("open after load %d", i);
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	ASSERT_EQ(0, np_ioctl(fd, NUMAPLACE_IOC_INFO, &info));
	/* An open file holds the module. */
	EXPECT_EQ(-EWOULDBLOCK, np_module_unload());
	close(fd);
	ASSERT_EQ(0, np_module_unload()) TH_LOG("unload %d", i);
	ASSERT_FALSE(np_module_loaded());
	ASSERT_EQ(-ENOENT, np_open());
}

/* No state: a fixture for the timeout's slack (NP_TIMEOUT()). */
FIXTURE(load) {};
FIXTURE_SETUP(load) {}
FIXTURE_TEARDOWN(load) {}

TEST_F_TIMEOUT(load, unload_cycles, NP_TIMEOUT(TEST_TIMEOUT_DEFAULT))
{
	long before, grew = 0;
	int modfd, i, batch;

	modfd = np_ko_open("numaplace");
	if (modfd < 0)
		SKIP(return, "no numaplace.ko in " NP_KO_WHERE);
	if (np_module_loaded())
		ASSERT_EQ(0, np_module_unload());

	/* Warm-up cycles so first-load allocations do not count. */
	for (i = 0; i < 5; i++)
		np_cycle(_metadata, modfd, i);
	for (batch = 0; batch < NP_LOAD_BATCHES; batch++) {
		before = np_slab_settled_kb();
		ASSERT_GT(before, 0);
		for (i = 0; i < NP_LOAD_CYCLES; i++)
			np_cycle(_metadata, modfd, i);
		if (np_slab_batch_end(batch, before, &grew,
				      NP_LOAD_SLAB_SLACK_KB))
			break;
	}
	EXPECT_LT(grew, NP_LOAD_SLAB_SLACK_KB)
		TH_LOG("every batch of %d cycles grew unreclaimable slab",
		       NP_LOAD_CYCLES);

	ASSERT_EQ(0, np_module_load_fd(modfd));
	close(modfd);
}

NP_HARNESS_MAIN
