// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of libnumaplace, run on the build host (no module, no
 * guest; tools/vm/check --unit, in make check): the (source, destination)
 * pairs numaplace_migrate_pages_pairs() derives from migrate_pages(2)'s
 * two masks, against pairs derived by hand from the kernel's
 * do_migrate_pages() loop.
 */
#include <linux/types.h>

#include "kselftest_harness.h"
#include "numaplace.h"

struct mp_pairs_case {
	const char *name;
	int from[8], to[8];	/* node lists, -1 ended */
	int want[8][2];		/* pairs, { -1, -1 } ended */
};

/*
 * Each derived by hand from do_migrate_pages(): scan tmp = from; skip s
 * in to when the weights differ; d = node_remap(s); remember (s, d) when
 * s != d; stop at the first d not in tmp; migrate the remembered pair,
 * clear s, rescan.
 */
static const struct mp_pairs_case mp_pairs_cases[] = {
	{ "0->1", { 0, -1 }, { 1, -1 }, { { 0, 1 }, { -1, -1 } } },
	{ "1->0", { 1, -1 }, { 0, -1 }, { { 1, 0 }, { -1, -1 } } },
	{ "same mask", { 0, 1, -1 }, { 0, 1, -1 }, { { -1, -1 } } },
	/* Weights 2 and 1: 1 is in to, skipped; 0 remaps to 1. */
	{ "01->1", { 0, 1, -1 }, { 1, -1 }, { { 0, 1 }, { -1, -1 } } },
	{ "01->0", { 0, 1, -1 }, { 0, -1 }, { { 1, 0 }, { -1, -1 } } },
	/* Weights 1 and 2, 0 in to: nothing moves. */
	{ "0->01", { 0, -1 }, { 0, 1, -1 }, { { -1, -1 } } },
	/* The kernel's comment: [2,3,4] -> [3,4,5] moves everything, the
	 * pair whose dest is no longer a source first.
	 */
	{ "234->345", { 2, 3, 4, -1 }, { 3, 4, 5, -1 },
	  { { 4, 5 }, { 3, 4 }, { 2, 3 }, { -1, -1 } } },
	/* [0-7] -> [3,4,5] moves only 0,1,2,6,7 (the last pair remembered
	 * each scan, every dest being a source still).
	 */
	{ "0-7->345", { 0, 1, 2, 3, 4, 5, 6, 7 }, { 3, 4, 5, -1 },
	  { { 7, 4 }, { 6, 3 }, { 2, 5 }, { 1, 4 }, { 0, 3 }, { -1, -1 } } },
	/* Order kept: 1 -> 2 before 0 -> 1. */
	{ "01->12", { 0, 1, -1 }, { 1, 2, -1 },
	  { { 1, 2 }, { 0, 1 }, { -1, -1 } } },
	/* Weights 3 and 1: 1 skipped, 0 and 2 remap to 1 (2 mod 1 = 0). */
	{ "012->1", { 0, 1, 2, -1 }, { 1, -1 },
	  { { 2, 1 }, { 0, 1 }, { -1, -1 } } },
	/* A node no machine has counts in the ordinals: 5 -> 1. */
	{ "05->1", { 0, 5, -1 }, { 1, -1 },
	  { { 0, 1 }, { 5, 1 }, { -1, -1 } } },
};

TEST(pairs)
{
	int got[NUMAPLACE_MAX_NODES][2];

	for (size_t c = 0; c < ARRAY_SIZE(mp_pairs_cases); c++) {
		const struct mp_pairs_case *k = &mp_pairs_cases[c];
		__u64 from[NUMAPLACE_NODE_WORDS] = { 0 };
		__u64 to[NUMAPLACE_NODE_WORDS] = { 0 };
		int nr, want = 0, bad = 0;

		for (int i = 0; i < 8 && k->from[i] >= 0; i++)
			from[k->from[i] / 64] |= 1ULL << (k->from[i] % 64);
		for (int i = 0; i < 8 && k->to[i] >= 0; i++)
			to[k->to[i] / 64] |= 1ULL << (k->to[i] % 64);
		while (k->want[want][0] >= 0)
			want++;
		nr = numaplace_migrate_pages_pairs(from, to, got, NUMAPLACE_MAX_NODES);
		bad = nr != want;
		for (int i = 0; !bad && i < nr; i++)
			bad = got[i][0] != k->want[i][0] ||
			      got[i][1] != k->want[i][1];
		EXPECT_EQ(0, bad) {
			TH_LOG("%s: %d pairs, want %d", k->name, nr, want);
			for (int i = 0; i < nr && i < 8; i++)
				TH_LOG("  got %d -> %d", got[i][0], got[i][1]);
		}
	}
}

TEST_HARNESS_MAIN
