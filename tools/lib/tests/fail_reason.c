// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of libnumaplace, run on the build host (no module, no
 * guest; tools/vm/check --unit, in make check): the nr_failed[] slot
 * numaplace_fail_reason() gives each status, against the slots the uapi
 * header names (uapi/linux/numaplace.h, enum numaplace_fail), and the
 * errno numaplace_fail_errno() gives each slot back.
 */
#include <errno.h>
#include <linux/types.h>

#include "kselftest_harness.h"
#include "numaplace.h"

TEST(named_errnos)
{
	EXPECT_EQ(NUMAPLACE_FAIL_ENOMEM, numaplace_fail_reason(-ENOMEM));
	EXPECT_EQ(NUMAPLACE_FAIL_EBUSY, numaplace_fail_reason(-EBUSY));
	EXPECT_EQ(NUMAPLACE_FAIL_EACCES, numaplace_fail_reason(-EACCES));
	EXPECT_EQ(NUMAPLACE_FAIL_EFAULT, numaplace_fail_reason(-EFAULT));
	EXPECT_EQ(NUMAPLACE_FAIL_ENOENT, numaplace_fail_reason(-ENOENT));
}

/* Every other status, a node or a positive errno too, is OTHER. */
TEST(other_statuses)
{
	static const int others[] = { 0, 1, -EINVAL, -EPERM, -ENODEV,
				      -EIO, ENOMEM, EBUSY, -4095 };

	for (unsigned int i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		EXPECT_EQ(NUMAPLACE_FAIL_OTHER,
			  numaplace_fail_reason(others[i])) {
			TH_LOG("status %d", others[i]);
		}
	}
}

/* numaplace_fail_errno() is numaplace_fail_reason()'s inverse. */
TEST(errno_of_reason)
{
	for (int r = 0; r < NUMAPLACE_FAIL_OTHER; r++) {
		int e = numaplace_fail_errno(r);

		EXPECT_LT(0, e) {
			TH_LOG("reason %d", r);
		}
		EXPECT_EQ(r, numaplace_fail_reason(-e)) {
			TH_LOG("reason %d, errno %d", r, e);
		}
	}
	EXPECT_EQ(0, numaplace_fail_errno(NUMAPLACE_FAIL_OTHER));
	EXPECT_EQ(0, numaplace_fail_errno(NUMAPLACE_FAIL_MAX));
	EXPECT_EQ(0, numaplace_fail_errno(-1));
}

TEST_HARNESS_MAIN
