// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of libnumaplace, run on the build host (tools/vm/check
 * --unit, in make check): numaplace_engine_name() names each engine bit
 * of the uapi, and nothing else (no bit, two bits, a bit of no engine).
 */
#include <linux/types.h>
#include <string.h>

#include "kselftest_harness.h"
#include "numaplace.h"

/* Every engine bit of the uapi. */
#define NP_ALL_ENGINES	(NUMAPLACE_ENGINE_KERNEL | NUMAPLACE_ENGINE_VMA | \
			 NUMAPLACE_ENGINE_BATCH | NUMAPLACE_ENGINE_PT)

/* The engines' names by bit, the lowest first (the spec's "engine" list). */
static const char *const want[] = { "kernel", "vma", "batch", "pt" };

TEST(each_engine)
{
	const unsigned int nr = sizeof(want) / sizeof(want[0]);

	/* The uapi's engines are the low bits, one for each name above. */
	ASSERT_EQ((1U << nr) - 1, NP_ALL_ENGINES);
	for (unsigned int b = 0; b < nr; b++) {
		const char *got = numaplace_engine_name(1U << b);

		ASSERT_NE(NULL, got);
		EXPECT_STREQ(want[b], got);
	}
}

TEST(not_one_engine)
{
	unsigned int all = NP_ALL_ENGINES;

	EXPECT_EQ(NULL, numaplace_engine_name(0));
	EXPECT_EQ(NULL, numaplace_engine_name(NUMAPLACE_ENGINE_KERNEL |
					      NUMAPLACE_ENGINE_PT));
	EXPECT_EQ(NULL, numaplace_engine_name(all));
	/* The bit above the last engine's. */
	EXPECT_EQ(NULL, numaplace_engine_name((all + 1) & ~all));
	EXPECT_EQ(NULL, numaplace_engine_name(1U << 31));
}

TEST_HARNESS_MAIN
