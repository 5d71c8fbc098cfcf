// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of libnumaplace's tiering policy, run on the build host (no
 * module, no guest; tools/vm/check --unit, in make check): a page's
 * history and class, the hysteresis and the move counts
 * (tier_policy.c), the spread of promotions over the fast nodes, the rate
 * limit, and the node lists of sysfs (tier_nodes.c).
 */
#include <errno.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

#include "kselftest_harness.h"
#include "tier.h"

/* The pages of a THP: what one pick is asked for at most. */
#define THP_PAGES	512

static struct numaplace_tier_params params(void)
{
	struct numaplace_tier_params p;

	numaplace_tier_params_init(&p);
	return p;
}

/* Scan @st once per character of @bits ('1' young), the last class out. */
static __u16 scans(__u16 st, const char *bits,
		   const struct numaplace_tier_params *p,
		   enum np_tier_class *cls)
{
	for (; *bits; bits++)
		st = np_tier_page_scan(st, *bits == '1', p, cls);
	return st;
}

/* The first scan's young bit says "since ever": it is not history. */
TEST(first_scan_only_clears)
{
	struct numaplace_tier_params p = params();
	enum np_tier_class cls;
	__u16 st;

	p.hot_scans = 1;
	st = np_tier_page_scan(0, true, &p, &cls);
	EXPECT_EQ(NP_TIER_WARM, cls);
	EXPECT_EQ(NP_TIER_SEEN, st);
	st = np_tier_page_scan(st, true, &p, &cls);
	EXPECT_EQ(NP_TIER_HOT, cls);
}

/* Hot: young in k of the last n scans, and only of the last n. */
TEST(hot_is_k_of_last_n)
{
	struct numaplace_tier_params p = params();	/* n 4, k 2 */
	enum np_tier_class cls;
	__u16 st;

	ASSERT_EQ(4, p.history);
	ASSERT_EQ(2, p.hot_scans);
	st = scans(0, "x1", &p, &cls);
	EXPECT_EQ(NP_TIER_WARM, cls);
	st = scans(st, "1", &p, &cls);
	EXPECT_EQ(NP_TIER_HOT, cls);
	/* 1 0 0 1: two of the last four */
	st = scans(0, "x1001", &p, &cls);
	EXPECT_EQ(NP_TIER_HOT, cls);
	/* 1 0 0 0 1: the first is five scans back */
	st = scans(0, "x10001", &p, &cls);
	EXPECT_NE(NP_TIER_HOT, cls);
	p.history = NUMAPLACE_TIER_MAX_HISTORY;
	p.hot_scans = NUMAPLACE_TIER_MAX_HISTORY;
	st = scans(0, "x111111111", &p, &cls);
	EXPECT_EQ(NP_TIER_HOT, cls);
	st = scans(0, "x111111110", &p, &cls);
	EXPECT_NE(NP_TIER_HOT, cls);
}

/* Cold: not young for m scans, m scans after tracking began at least. */
TEST(cold_is_m_idle_scans)
{
	struct numaplace_tier_params p = params();	/* m 4 */
	enum np_tier_class cls;
	__u16 st;

	ASSERT_EQ(4, p.cold_scans);
	st = scans(0, "x000", &p, &cls);
	EXPECT_EQ(NP_TIER_WARM, cls);
	st = scans(st, "0", &p, &cls);
	EXPECT_EQ(NP_TIER_COLD, cls);
	st = scans(st, "1", &p, &cls);
	EXPECT_EQ(NP_TIER_WARM, cls);
	st = scans(st, "000", &p, &cls);
	EXPECT_EQ(NP_TIER_WARM, cls);
	st = scans(st, "0", &p, &cls);
	EXPECT_EQ(NP_TIER_COLD, cls);
	/* Hot wins: with k 1 and m 1 a young page is never cold. */
	p.hot_scans = 1;
	p.cold_scans = 1;
	st = scans(0, "x1", &p, &cls);
	EXPECT_EQ(NP_TIER_HOT, cls);
}

/* A page that moved (or failed to) is held for hold scans, not others. */
TEST(hysteresis)
{
	struct numaplace_tier_params p = params();	/* hold 4 */
	bool ping_pong, third;
	enum np_tier_class cls;
	unsigned int i;
	__u16 st;

	st = scans(0, "x11", &p, &cls);
	EXPECT_FALSE(np_tier_page_held(st, p.hold_scans));
	st = np_tier_page_moved(st, &ping_pong, &third);
	for (i = 0; i < p.hold_scans; i++) {
		EXPECT_TRUE(np_tier_page_held(st, p.hold_scans));
		st = np_tier_page_scan(st, false, &p, &cls);
	}
	EXPECT_FALSE(np_tier_page_held(st, p.hold_scans));
	/* The history survives the move: a hot page stays hot. */
	st = scans(0, "x11", &p, &cls);
	st = np_tier_page_moved(st, &ping_pong, &third);
	st = np_tier_page_scan(st, true, &p, &cls);
	EXPECT_EQ(NP_TIER_HOT, cls);
	/* A failed move holds too, then lets go. */
	st = np_tier_page_failed(scans(0, "x11", &p, &cls));
	EXPECT_TRUE(np_tier_page_held(st, p.hold_scans));
	st = scans(st, "1111", &p, &cls);
	EXPECT_FALSE(np_tier_page_held(st, p.hold_scans));
	EXPECT_FALSE(np_tier_page_held(st, 0));
}

/* Moves count up to 3: the second is a ping-pong, the third is named. */
TEST(move_counts)
{
	bool ping_pong, third;
	__u16 st = NP_TIER_SEEN;
	int i;

	st = np_tier_page_moved(st, &ping_pong, &third);
	EXPECT_FALSE(ping_pong);
	EXPECT_FALSE(third);
	st = np_tier_page_moved(st, &ping_pong, &third);
	EXPECT_TRUE(ping_pong);
	EXPECT_FALSE(third);
	st = np_tier_page_moved(st, &ping_pong, &third);
	EXPECT_TRUE(third);
	for (i = 0; i < 5; i++) {
		st = np_tier_page_moved(st, &ping_pong, &third);
		EXPECT_TRUE(ping_pong);
		EXPECT_FALSE(third);
	}
	EXPECT_EQ(3, np_tier_moves(st));
	EXPECT_EQ(0, np_tier_age(st));
	EXPECT_TRUE(st & NP_TIER_SEEN);
}

/* A node mask for the spreads, inside a TEST. */
#define mask_of(m, list)	ASSERT_EQ(0, np_tier_parse_nodes(list, m))

static void expect_balanced(struct __test_metadata *_metadata,
			    const struct np_tier_spread *s, const __u64 *m,
			    double bound)
{
	__u64 lo = ~0ULL, hi = 0;
	int node;

	for (node = 0; node < NUMAPLACE_TIER_NODES; node++) {
		if (!np_tier_isset(m, node))
			continue;
		lo = s->given[node] < lo ? s->given[node] : lo;
		hi = s->given[node] > hi ? s->given[node] : hi;
	}
	ASSERT_GT(lo, 0);
	EXPECT_LE((double)hi / lo, bound) {
		TH_LOG("max %llu min %llu", hi, lo);
	}
}

/* Round-robin: equal shares (max/min <= 1.1), never all to one node. */
TEST(spread_round_robin)
{
	__s64 room[NUMAPLACE_TIER_NODES] = { 0 };
	__u64 fast[NP_TIER_WORDS], all[NP_TIER_WORDS];
	struct np_tier_spread s;
	int i;

	mask_of(fast, "0-1,3");
	mask_of(all, "0-63");
	room[0] = room[1] = room[3] = 1 << 20;
	np_tier_spread_init(&s, NUMAPLACE_TIER_SPREAD_ROUND_ROBIN, fast);
	np_tier_spread_step(&s, room);
	for (i = 0; i < 301; i++)
		ASSERT_LE(0, np_tier_spread_pick(&s, all, all, i % 3 ? 1 : THP_PAGES));
	expect_balanced(_metadata, &s, fast, 1.1);
	EXPECT_EQ(0, s.given[2]);
}

/*
 * Across steps: one THP a step alternates (round-robin and local over
 * two nodes), where a spread that forgot between steps put them all on
 * the first node.
 */
TEST(spread_across_steps)
{
	__s64 room[NUMAPLACE_TIER_NODES] = { 0 };
	__u64 fast[NP_TIER_WORDS], total[NUMAPLACE_TIER_NODES] = { 0 };
	struct np_tier_spread s;
	unsigned int mode;
	int i, node;

	mask_of(fast, "0-1");
	room[0] = room[1] = 1 << 20;
	for (mode = NUMAPLACE_TIER_SPREAD_LOCAL;
	     mode <= NUMAPLACE_TIER_SPREAD_ROUND_ROBIN; mode++) {
		np_tier_spread_init(&s, mode, fast);
		total[0] = total[1] = 0;
		for (i = 0; i < 100; i++) {
			np_tier_spread_step(&s, room);
			node = np_tier_spread_pick(&s, fast, fast, THP_PAGES);
			ASSERT_LE(0, node);
			total[node] += THP_PAGES;
		}
		EXPECT_EQ(total[0], total[1]) {
			TH_LOG("mode %u: %llu and %llu pages", mode,
			       total[0], total[1]);
		}
	}
}

/* Local: the CPUs' node while it has room, then the others by room. */
TEST(spread_local_then_spill)
{
	__s64 room[NUMAPLACE_TIER_NODES] = { 0 };
	__u64 fast[NP_TIER_WORDS], all[NP_TIER_WORDS], local[NP_TIER_WORDS];
	struct np_tier_spread s;
	int i;

	mask_of(fast, "0-2");
	mask_of(all, "0-2");
	mask_of(local, "0");
	room[0] = 10 * THP_PAGES;
	room[1] = room[2] = 100 * THP_PAGES;
	np_tier_spread_init(&s, NUMAPLACE_TIER_SPREAD_LOCAL, fast);
	np_tier_spread_step(&s, room);
	for (i = 0; i < 10; i++)
		EXPECT_EQ(0, np_tier_spread_pick(&s, all, local, THP_PAGES));
	for (i = 0; i < 100; i++)
		EXPECT_NE(0, np_tier_spread_pick(&s, all, local, THP_PAGES));
	/* The spill goes to both other nodes, not all to one. */
	EXPECT_EQ(50 * THP_PAGES, s.given[1]);
	EXPECT_EQ(50 * THP_PAGES, s.given[2]);
	/* A process on two nodes spreads over both. */
	mask_of(local, "1-2");
	np_tier_spread_init(&s, NUMAPLACE_TIER_SPREAD_LOCAL, fast);
	np_tier_spread_step(&s, room);
	for (i = 0; i < 100; i++)
		ASSERT_NE(0, np_tier_spread_pick(&s, all, local, THP_PAGES));
	expect_balanced(_metadata, &s, local, 1.1);
}

/* Free: in proportion to room; the process's mems are a hard limit. */
TEST(spread_free_and_allowed)
{
	__s64 room[NUMAPLACE_TIER_NODES] = { 0 };
	__u64 fast[NP_TIER_WORDS], allowed[NP_TIER_WORDS], none[NP_TIER_WORDS];
	struct np_tier_spread s;
	double ratio;
	int i;

	mask_of(fast, "0-1");
	mask_of(none, "");
	room[0] = 3 << 20;
	room[1] = 1 << 20;
	np_tier_spread_init(&s, NUMAPLACE_TIER_SPREAD_FREE, fast);
	np_tier_spread_step(&s, room);
	for (i = 0; i < 400; i++)
		ASSERT_LE(0, np_tier_spread_pick(&s, fast, none, THP_PAGES));
	ratio = (double)s.given[0] / s.given[1];
	EXPECT_GE(ratio, 2.9);
	EXPECT_LE(ratio, 3.1);
	mask_of(allowed, "1");
	np_tier_spread_init(&s, NUMAPLACE_TIER_SPREAD_FREE, fast);
	np_tier_spread_step(&s, room);
	for (i = 0; i < 100; i++)
		EXPECT_EQ(1, np_tier_spread_pick(&s, allowed, none, THP_PAGES));
}

/* No room, no pick; a node found full takes nothing more. */
TEST(spread_room)
{
	__s64 room[NUMAPLACE_TIER_NODES] = { 0 };
	__u64 fast[NP_TIER_WORDS];
	struct np_tier_spread s;

	mask_of(fast, "0-1");
	room[0] = THP_PAGES;
	room[1] = -5;		/* under its watermark */
	np_tier_spread_init(&s, NUMAPLACE_TIER_SPREAD_ROUND_ROBIN, fast);
	np_tier_spread_step(&s, room);
	EXPECT_EQ(-1, np_tier_spread_pick(&s, fast, fast, THP_PAGES + 1));
	EXPECT_EQ(0, np_tier_spread_pick(&s, fast, fast, THP_PAGES));
	EXPECT_EQ(-1, np_tier_spread_pick(&s, fast, fast, 1));
	room[1] = 100;
	np_tier_spread_init(&s, NUMAPLACE_TIER_SPREAD_FREE, fast);
	np_tier_spread_step(&s, room);
	np_tier_spread_full(&s, 1);
	EXPECT_EQ(0, np_tier_spread_pick(&s, fast, fast, 1));
	np_tier_spread_full(&s, 0);
	EXPECT_EQ(-1, np_tier_spread_pick(&s, fast, fast, 1));
}

/* The rate limit: a second's worth at first, then by the time passed. */
TEST(rate_limit)
{
	struct np_tier_bucket b;

	np_tier_bucket_init(&b, 1000);
	EXPECT_EQ(1000, np_tier_bucket_take(&b, 10.0, ~0ULL));
	EXPECT_EQ(0, np_tier_bucket_take(&b, 10.0, ~0ULL));
	EXPECT_EQ(500, np_tier_bucket_take(&b, 10.5, ~0ULL));
	np_tier_bucket_give(&b, 200);
	EXPECT_EQ(200, np_tier_bucket_take(&b, 10.5, ~0ULL));
	/* A long gap is worth its time, not more. */
	EXPECT_EQ(5000, np_tier_bucket_take(&b, 15.5, ~0ULL));
	/* Unused tokens do not pile up past a second's worth. */
	EXPECT_EQ(10, np_tier_bucket_take(&b, 16.0, 10));
	EXPECT_EQ(1000, np_tier_bucket_take(&b, 17.0, ~0ULL));
	np_tier_bucket_init(&b, 0);
	EXPECT_EQ(123, np_tier_bucket_take(&b, 1.0, 123));
}

/* Periods added: counts add, the end of a period is the last one's. */
TEST(period_add)
{
	struct numaplace_tier_period sum = { 0 }, a = { 0 }, b = { 0 };

	a.nr_promoted[1] = 3;
	a.nr_scanned = 10;
	a.nr_moved_3 = 1;
	a.scan_ns = 100;
	a.nr_targets = 2;
	a.state_bytes = 1032;
	a.scan_error = -EACCES;
	b.nr_promoted[1] = 4;
	b.nr_demoted[63] = 5;
	b.nr_scanned = 20;
	b.nr_targets = 1;
	b.state_bytes = 2064;
	numaplace_tier_period_add(&sum, &a);
	numaplace_tier_period_add(&sum, &b);
	EXPECT_EQ(7, sum.nr_promoted[1]);
	EXPECT_EQ(5, sum.nr_demoted[63]);
	EXPECT_EQ(30, sum.nr_scanned);
	EXPECT_EQ(1, sum.nr_moved_3);
	EXPECT_EQ(100, sum.scan_ns);
	EXPECT_EQ(1, sum.nr_targets);
	EXPECT_EQ(2064, sum.state_bytes);
	EXPECT_EQ(-EACCES, sum.scan_error);
}

/* sysfs node lists. */
TEST(node_lists)
{
	__u64 m[NP_TIER_WORDS];

	ASSERT_EQ(0, np_tier_parse_nodes("0-1,3\n", m));
	EXPECT_EQ(0xbULL, m[0]);
	ASSERT_EQ(0, np_tier_parse_nodes("", m));
	EXPECT_EQ(0, m[0]);
	ASSERT_EQ(0, np_tier_parse_nodes("63", m));
	EXPECT_EQ(1ULL << 63, m[0]);
	EXPECT_EQ(-ERANGE, np_tier_parse_nodes("64", m));
	EXPECT_EQ(-ERANGE, np_tier_parse_nodes("0-1023", m));
	EXPECT_EQ(-EINVAL, np_tier_parse_nodes("3-1", m));
	EXPECT_EQ(-EINVAL, np_tier_parse_nodes("1,,2", m));
	EXPECT_EQ(-EINVAL, np_tier_parse_nodes("-1", m));
	EXPECT_EQ(-EINVAL, np_tier_parse_nodes("1-", m));
	EXPECT_EQ(-EINVAL, np_tier_parse_nodes("a", m));
}

/*
 * A process's start time, what tells a pid reused after an exit from the
 * process tracked: the same across reads, across a rename to a name with
 * spaces and parentheses (the stat line's field 2), gone with the process.
 */
TEST(start_time)
{
	__u64 a = 0, b = 0, code_a = 0, code_b = 0;
	siginfo_t si;
	pid_t kid;

	ASSERT_EQ(0, np_tier_read_identity(getpid(), &a, &code_a));
	EXPECT_LT(0, a);
	EXPECT_LT(0, code_a);
	ASSERT_EQ(0, prctl(PR_SET_NAME, "a) 1 2 (3"));
	ASSERT_EQ(0, np_tier_read_identity(getpid(), &b, &code_b));
	EXPECT_EQ(a, b);
	EXPECT_EQ(code_a, code_b);
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid)
		_exit(0);
	/* A zombie is gone; so is a reaped process. */
	ASSERT_EQ(0, waitid(P_PID, kid, &si, WEXITED | WNOWAIT));
	EXPECT_EQ(-ESRCH, np_tier_read_identity(kid, &b, &code_b));
	ASSERT_EQ(kid, waitpid(kid, NULL, 0));
	EXPECT_EQ(-ESRCH, np_tier_read_identity(kid, &b, &code_b));
}

TEST_HARNESS_MAIN
