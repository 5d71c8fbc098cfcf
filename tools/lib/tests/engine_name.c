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

TEST(each_engine)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} want[] = {
		{ NUMAPLACE_ENGINE_KERNEL, "kernel" },
		{ NUMAPLACE_ENGINE_VMA, "vma" },
		{ NUMAPLACE_ENGINE_BATCH, "batch" },
		{ NUMAPLACE_ENGINE_PT, "pt" },
	};

	for (unsigned int i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *got = numaplace_engine_name(want[i].bit);

		ASSERT_NE(NULL, got);
		EXPECT_STREQ(want[i].name, got);
	}
}

TEST(not_one_engine)
{
	unsigned int all = NUMAPLACE_ENGINE_KERNEL | NUMAPLACE_ENGINE_VMA |
			   NUMAPLACE_ENGINE_BATCH | NUMAPLACE_ENGINE_PT;

	EXPECT_EQ(NULL, numaplace_engine_name(0));
	EXPECT_EQ(NULL, numaplace_engine_name(NUMAPLACE_ENGINE_KERNEL |
					      NUMAPLACE_ENGINE_PT));
	EXPECT_EQ(NULL, numaplace_engine_name(all));
	/* The bit above the last engine's. */
	EXPECT_EQ(NULL, numaplace_engine_name((all + 1) & ~all));
	EXPECT_EQ(NULL, numaplace_engine_name(1U << 31));
}

TEST_HARNESS_MAIN
