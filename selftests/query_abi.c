// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_QUERY's ABI: counts and lengths at their edges and past
 * them, unaligned, tagged and kernel addresses, every bad user pointer,
 * arrays that end on unmapped memory, the struct's size rules, unknown
 * flags, reserved fields, the runs buffer's rules and output fields
 * that must be ignored on input. The answers themselves are query.c's.
 */
#include <limits.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "np_test.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

/* A huge count: far past any buffer, far from overflowing count * 8. */
#define NP_HUGE_COUNT	(1ULL << 40)

static long psz;

/* The ABI and bad input. */
NP_QUERY_FIXTURE(query);

NP_TEST_F(query, count_edges)
{
	NP_SKIPPED();
	static const size_t counts[] = { 1, 15, 16, 17, 31, 32, 33 };
	size_t n = 0;
	char *p = np_mixed_region(&n, np_other_node(&self->info, 0));
	__u64 addrs[64];
	char label[32];

	NP_NEED_MODEL();
	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < 64; i++)
		addrs[i] = (uintptr_t)p + ((i * 7) % 64) * psz + i;
	for (size_t i = 0; i < ARRAY_SIZE(counts); i++) {
		snprintf(label, sizeof(label), "count %zu", counts[i]);
		EXPECT_EQ(0, np_check_addrs(&self->c, label, addrs, counts[i]));
		EXPECT_EQ(0, np_check_range(&self->c, label,
					    (uintptr_t)p + 30 * psz,
					    counts[i], NULL));
	}
}

/* len 0 and count 0 answer nothing, successfully. */
NP_TEST_F(query, zero_len_and_count)
{
	NP_SKIPPED();
	__u64 np[NUMAPLACE_MAX_NODES], addr = (uintptr_t)&addr;
	struct numaplace_run runs[2];
	struct numaplace_query q;
	__s32 st[2] = { NP_SENTINEL, NP_SENTINEL };

	for (int f = 0; f < 2; f++) {
		__u32 flags = f ? NUMAPLACE_QUERY_AS_SYSCALL : 0;

		memset(np, 0xa5, sizeof(np));
		ASSERT_EQ(0, np_query_range(self->fd, 0, flags, addr, 0, runs, 2,
					    st, np, self->c.nr_nodes, &q));
		EXPECT_EQ(0, q.done);
		EXPECT_EQ(0, q.nr_runs);
		EXPECT_EQ(0, q.nr_unplaced);
		EXPECT_EQ(NP_SENTINEL, st[0]);
		for (__u32 i = 0; i < self->c.nr_nodes; i++) {
			EXPECT_EQ(0, np[i]) TH_LOG("node %u", i);
		}
		ASSERT_EQ(0, np_query_range(self->fd, 0, flags, 0, 0, NULL, 0,
					    NULL, NULL, 0, &q));
		EXPECT_EQ(0, q.done);
		ASSERT_EQ(0, np_query_array(self->fd, 0, flags, NULL, 0, NULL,
					    NULL, 0, &q));
		EXPECT_EQ(0, q.done);
		ASSERT_EQ(0, np_query_array(self->fd, 0, flags, &addr, 0, st,
					    np, self->c.nr_nodes, &q));
		EXPECT_EQ(0, q.done);
		EXPECT_EQ(0, q.nr_unplaced);
		EXPECT_EQ(NP_SENTINEL, st[0]);
	}
	/* The syscall agrees that nothing is fine. */
	EXPECT_EQ(0, np_sys_move_pages(0, 0, NULL, NULL, NULL, 0));
}

/* A count far past the array: -EFAULT, like the syscall, no stray write. */
NP_TEST_F(query, count_huge)
{
	NP_SKIPPED();
	const size_t n = 40, canary = 8;
	char *pm, *sm, *rm;
	size_t pl, sl, rl;
	__u64 *pages = np_guarded(n * 8, &pm, &pl);
	__s32 *st = np_guarded((n + canary) * 4, &sm, &sl);
	struct numaplace_run *runs = np_guarded(4 * sizeof(*runs), &rm, &rl);
	static const __u64 counts[] = { NP_HUGE_COUNT, 1ULL << 61, ~0ULL };
	__u64 np[NUMAPLACE_MAX_NODES];
	char *p = np_pmd_map(16 * psz, 0);
	struct numaplace_query q;

	ASSERT_NE(NULL, pages);
	ASSERT_NE(NULL, st);
	ASSERT_NE(NULL, runs);
	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < 16; i++)
		np_write_page(p, i);
	for (size_t i = 0; i < n; i++)
		pages[i] = (uintptr_t)p + (i % 16) * psz;
	for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
		for (int f = 0; f < 2; f++) {
			__u32 flags = f ? NUMAPLACE_QUERY_AS_SYSCALL : 0;
			int ret;

			for (size_t i = 0; i < n + canary; i++)
				st[i] = NP_SENTINEL;
			ret = np_query_array(self->fd, 0, flags, pages,
					     counts[c], st, np,
					     self->c.nr_nodes, &q);
			/* count * 8 wraps past 1 << 61: -EINVAL is fair. */
			if (counts[c] >= 1ULL << 61 && ret == -EINVAL)
				ret = -EFAULT;
			EXPECT_EQ(-EFAULT, ret) TH_LOG("count %#llx",
						       (unsigned long long)counts[c]);
			for (size_t i = n; i < n + canary; i++) {
				EXPECT_EQ(NP_SENTINEL, st[i])
					TH_LOG("count %#llx: status[%zu] written",
					       (unsigned long long)counts[c], i);
			}
			ret = np_query_array(self->fd, 0, flags, pages,
					     counts[c], NULL, np,
					     self->c.nr_nodes, &q);
			if (counts[c] >= 1ULL << 61 && ret == -EINVAL)
				ret = -EFAULT;
			EXPECT_EQ(-EFAULT, ret);
		}
		EXPECT_EQ(-EFAULT, np_sys_move_pages(0, counts[c], pages, NULL,
						     st, 0));
	}

	/* A huge range: the status buffer ends first. */
	st = np_guarded(n * 4, &sm, &sl);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(-EFAULT, np_query_range(self->fd, 0, 0, (uintptr_t)p,
					  NP_HUGE_COUNT * psz, NULL, 0, st,
					  NULL, 0, &q));
	/* A huge range with a tiny runs buffer: the runs end it, quickly. */
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p,
				    NP_HUGE_COUNT * psz, runs, 4, NULL, NULL,
				    0, &q));
	EXPECT_EQ(4, q.nr_runs);
	EXPECT_GT(q.done, 0);
	EXPECT_LT(q.done, NP_HUGE_COUNT);
}

/*
 * The buffers a query allocates for itself (a chunk's status segments, a
 * chunk of stretches in array mode) are the caller's memory: charged to
 * its memcg, and a full memcg fails the call with ENOMEM, no OOM kill
 * (libnumaplace then asks the syscall). A child in a memcg of its own,
 * its memory.max at what the memcg holds (np_memcg_tight()): both modes
 * with statuses fail with ENOMEM; with memory.max back to "max" they
 * answer every page. On 394f443 (GFP_KERNEL) both answered in the full
 * memcg.
 */
#define NP_QCHARGED_PAGES	64

struct np_qcharged {
	int fd;
	int tight[2], free[2];		/* range, array: 0 or -errno */
	__s32 st[NP_QCHARGED_PAGES];	/* the array query's, at last */
};

static int np_qcharged_calls(struct np_qcharged *c, const char *p,
			     const __u64 *pages, int *ret)
{
	struct numaplace_query q;

	ret[0] = np_query_range(c->fd, 0, 0, (uintptr_t)p,
				NP_QCHARGED_PAGES * psz, NULL, 0, c->st, NULL,
				0, &q);
	ret[1] = np_query_array(c->fd, 0, 0, pages, NP_QCHARGED_PAGES, c->st,
				NULL, 0, &q);
	return ret[0] || ret[1];
}

static int np_qcharged_child(const char *cg, void *arg,
			     struct np_memcg_tight *t)
{
	struct np_qcharged *c = arg;
	char *p = np_pmd_map(NP_QCHARGED_PAGES * psz, 0);
	__u64 pages[NP_QCHARGED_PAGES];
	int warm[2];

	if (!p)
		return 20;
	for (size_t i = 0; i < NP_QCHARGED_PAGES; i++) {
		np_write_page(p, i);
		pages[i] = (uintptr_t)p + i * psz;
	}
	/* Both calls once: what they touch is faulted here. */
	if (np_qcharged_calls(c, p, pages, warm))
		return 21;
	if (np_memcg_enter(cg))
		return 22;
	np_memcg_tight_begin(t);
	np_qcharged_calls(c, p, pages, c->tight);
	np_memcg_tight_end(t);
	memset(c->st, 0xff, sizeof(c->st));
	return np_qcharged_calls(c, p, pages, c->free) ? 23 : 0;
}

TEST_F_TIMEOUT(query, call_memory_charged, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	struct np_qcharged *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct np_memcg_tight t;
	char cg[128];
	int status;

	ASSERT_NE(MAP_FAILED, c);
	if (geteuid())
		SKIP(return, "needs root (cgroups)");
	memset(c, 0, sizeof(*c));
	c->fd = self->fd;
	status = np_memcg_tight("np-qcharged", cg, sizeof(cg),
				np_qcharged_child, c, &t);
	if (status == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_LE(0, status);
	TH_LOG("memcg: memory.max %ld at the tight calls", t.max);
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, t.oom_kill);
	EXPECT_EQ(-ENOMEM, c->tight[0]);
	EXPECT_EQ(-ENOMEM, c->tight[1]);
	EXPECT_EQ(0, c->free[0]);
	EXPECT_EQ(0, c->free[1]);
	for (size_t i = 0; i < NP_QCHARGED_PAGES; i++) {
		EXPECT_LE(0, c->st[i]) TH_LOG("page %zu: %d", i, c->st[i]);
	}
	EXPECT_EQ(0, np_memcg_remove(cg));
	munmap(c, sizeof(*c));
}

/* start + len that wraps: -EINVAL. High ranges that do not: -EFAULT. */
NP_TEST_F(query, len_overflow)
{
	NP_SKIPPED();
	static const struct { __u64 start, len; } wrap[] = {
		{ -4096ULL, 8192 },
		{ 4096, ~0ULL },
		{ 1ULL << 63, 1ULL << 63 },
		{ -4096ULL, 4096 },
		{ -4096ULL + 100, 4096 - 100 },
		{ ~0ULL, 1 },
	};
	struct numaplace_run runs[4];
	struct numaplace_query q;
	__s32 st[4];
	__u64 a[4];
	int sys[4];

	for (size_t i = 0; i < ARRAY_SIZE(wrap); i++) {
		EXPECT_EQ(-EINVAL, np_query_range(self->fd, 0, 0,
						  wrap[i].start, wrap[i].len,
						  NULL, 0, st, NULL, 0, &q))
			TH_LOG("start %#llx len %#llx",
			       (unsigned long long)wrap[i].start,
			       (unsigned long long)wrap[i].len);
	}
	/* The last pages below the top: no VMA, answered like the syscall. */
	for (int i = 0; i < 4; i++)
		a[i] = -4ULL * 4096 - 4096 + i * 4096;
	ASSERT_EQ(0, np_sys_query(0, 4, a, sys));
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, a[0], 4 * 4096, runs, 4,
				    st, NULL, 0, &q));
	EXPECT_EQ(4, q.done);
	EXPECT_EQ(1, q.nr_runs);
	EXPECT_TRUE(runs[0].kind & NUMAPLACE_KIND_NOVMA);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(-EFAULT, sys[i]);
		EXPECT_EQ(sys[i], st[i]) TH_LOG("page %d", i);
	}
}

/* An unaligned start and len answer every page they touch (AS_SYSCALL). */
NP_TEST_F(query, unaligned_range)
{
	NP_SKIPPED();
	static const struct { size_t off, len, pages; } cases[] = {
		{ 100, 2 * 4096, 3 }, { 4095, 2, 2 }, { 1, 1, 1 },
		{ 0, 1, 1 }, { 4095, 1, 1 }, { 0, 4097, 2 },
	};
	char *p = np_pmd_map(8 * psz, 0);
	struct numaplace_run runs[8];
	struct numaplace_query q;
	__s32 st[8];

	ASSERT_NE(NULL, p);
	np_write_pages(p, 0, 4, 2);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ASSERT_EQ(0, np_query_range(self->fd, 0,
					    NUMAPLACE_QUERY_AS_SYSCALL,
					    (uintptr_t)p + 2 * psz +
					    cases[i].off, cases[i].len, runs,
					    8, st, NULL, 0, &q));
		EXPECT_EQ(cases[i].pages, q.done) TH_LOG("case %zu", i);
		EXPECT_EQ((uintptr_t)p + 2 * psz, runs[0].start);
		for (size_t j = 0; j < q.done && j < 8; j++) {
			EXPECT_EQ(np_sys_one(p + (2 + j) * psz), st[j])
				TH_LOG("case %zu page %zu", i, j);
		}
	}
}

/* Tagged addresses are not untagged: -EFAULT, as the syscall says. */
NP_TEST_F(query, tagged_addresses)
{
	NP_SKIPPED();
	char *p = np_pmd_map(4 * psz, 0);
	struct numaplace_query q;
	__u64 a[16];
	__s32 st[4];

	NP_NEED_MODEL();
	ASSERT_NE(NULL, p);
	np_write_pages(p, 0, 4, 1);
	for (size_t i = 0; i < 16; i++)
		a[i] = ((uintptr_t)p + (i % 4) * psz + i) |
		       (i < 8 ? 1ULL << (56 + i) : 0x3fULL << 57);
	a[15] = (uintptr_t)p;	/* and one plain address */
	EXPECT_EQ(0, np_check_addrs(&self->c, "tagged", a, 16));
	for (int bit = 48; bit < 64; bit += 5) {
		ASSERT_EQ(0, np_query_range(self->fd, 0, 0,
					    (uintptr_t)p | (1ULL << bit),
					    4 * psz, NULL, 0, st, NULL, 0, &q));
		for (int i = 0; i < 4; i++) {
			EXPECT_EQ(-EFAULT, st[i]) TH_LOG("bit %d page %d", bit, i);
		}
	}
}

/* Kernel addresses and the vsyscall page are no VMA of ours. */
NP_TEST_F(query, kernel_addresses)
{
	NP_SKIPPED();
	__u64 a[] = {
		0xffffffff81000000ULL, 0xffff888000000000ULL, -4096ULL,
		0xffffffffff600000ULL, 0xffffffffff600400ULL,
		NP_USER_TOP, NP_USER_TOP - 1, 0, 4095,
	};

	NP_NEED_MODEL();
	EXPECT_EQ(0, np_check_addrs(&self->c, "kernel addresses", a,
				    ARRAY_SIZE(a)));
}

/* Every user buffer, each kind of bad pointer: -EFAULT or "not asked". */
NP_TEST_F(query, bad_pointers)
{
	NP_SKIPPED();
	char *p = np_pmd_map(8 * psz, 0);
	__u64 addrs[8], np[NUMAPLACE_MAX_NODES];
	struct numaplace_run runs[8];
	struct numaplace_query q, *qp;
	int sys[8];
	__s32 st[8];

	ASSERT_NE(NULL, p);
	for (int i = 0; i < 8; i++) {
		np_write_page(p, i);
		addrs[i] = (uintptr_t)p + i * psz;
	}
	for (int k = 0; k < NP_BAD_MAX; k++) {
		const char *name = np_bad_names[k];
		void *bad;
		int ret;

		/* The struct itself (read-only: the answer can't go back). */
		np_query_range(self->fd, 0, 0, 0, 0, NULL, 0, NULL, NULL, 0,
			       &q);
		q.start = (uintptr_t)p;
		q.len = 8 * psz;
		qp = np_bad_pointer(k, &q, sizeof(q));
		EXPECT_EQ(-EFAULT, np_query(self->fd, qp)) TH_LOG("struct %s", name);

		/* pages[]: read-only is fine, the rest -EFAULT. */
		bad = np_bad_pointer(k, addrs, sizeof(addrs));
		for (int f = 0; f < 2; f++) {
			ret = np_query_array(self->fd, 0,
					     f ? NUMAPLACE_QUERY_AS_SYSCALL : 0,
					     bad, 8, st, NULL, 0, &q);
			EXPECT_EQ(k == NP_BAD_RDONLY ? 0 : -EFAULT, ret)
				TH_LOG("pages %s", name);
		}
		EXPECT_EQ(k == NP_BAD_RDONLY ? 0 : -EFAULT,
			  np_sys_move_pages(0, 8, bad, NULL, sys, 0))
			TH_LOG("syscall pages %s", name);

		/* status[]: NULL is "not asked", the rest -EFAULT. */
		bad = np_bad_pointer(k, NULL, 0);
		for (int f = 0; f < 2; f++) {
			__u32 fl = f ? NUMAPLACE_QUERY_AS_SYSCALL : 0;

			ret = np_query_array(self->fd, 0, fl, addrs, 8, bad,
					     NULL, 0, &q);
			EXPECT_EQ(k == NP_BAD_NULL ? 0 : -EFAULT, ret)
				TH_LOG("array status %s", name);
			ret = np_query_range(self->fd, 0, fl, (uintptr_t)p,
					     8 * psz, NULL, 0, bad, NULL, 0,
					     &q);
			EXPECT_EQ(k == NP_BAD_NULL ? 0 : -EFAULT, ret)
				TH_LOG("range status %s", name);
		}
		if (k != NP_BAD_NULL) {
			EXPECT_EQ(-EFAULT,
				  np_sys_move_pages(0, 8, addrs, NULL, bad, 0))
				TH_LOG("syscall status %s", name);
		}

		/* runs[] (NULL: cap 0, "not asked"). */
		ret = np_query_range(self->fd, 0, 0, (uintptr_t)p, 8 * psz,
				     bad, k == NP_BAD_NULL ? 0 : 8, NULL, NULL,
				     0, &q);
		EXPECT_EQ(k == NP_BAD_NULL ? 0 : -EFAULT, ret)
			TH_LOG("runs %s", name);

		/* node_pages[] (NULL: length 0, "not asked"). */
		for (int f = 0; f < 2; f++) {
			__u32 len = k == NP_BAD_NULL ? 0 : self->c.nr_nodes;

			ret = f ? np_query_array(self->fd, 0, 0, addrs, 8, st,
						 bad, len, &q) :
				  np_query_range(self->fd, 0, 0, (uintptr_t)p,
						 8 * psz, runs, 8, st, bad,
						 len, &q);
			EXPECT_EQ(k == NP_BAD_NULL ? 0 : -EFAULT, ret)
				TH_LOG("node_pages %s (%s mode)", name,
				       f ? "array" : "range");
		}
	}
	/* All well again. */
	EXPECT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, 8 * psz,
				    runs, 8, st, np, self->c.nr_nodes, &q));
}

/* Buffers that end on an unmapped page: exact fits work, one more faults. */
NP_TEST_F(query, arrays_end_on_unmapped)
{
	NP_SKIPPED();
	const size_t n = 20;
	char *p = np_pmd_map(n * psz, 0), *m;
	size_t ml;
	__u64 *pages, big[32], *np;
	struct numaplace_run *runs;
	struct numaplace_query q;
	int sys[32];
	__s32 *st, sbig[32];

	ASSERT_NE(NULL, p);
	np_write_pages(p, 0, n / 2, 2);
	for (size_t i = 0; i < 32; i++)
		big[i] = (uintptr_t)p + (i % n) * psz;

	/* pages[] */
	pages = np_guarded(n * 8, &m, &ml);
	ASSERT_NE(NULL, pages);
	memcpy(pages, big, n * 8);
	EXPECT_EQ(0, np_query_array(self->fd, 0, 0, pages, n, sbig, NULL, 0,
				    &q));
	EXPECT_EQ(n, q.done);
	EXPECT_EQ(-EFAULT, np_query_array(self->fd, 0, 0, pages, n + 1, sbig,
					  NULL, 0, &q));
	EXPECT_EQ(-EFAULT, np_sys_move_pages(0, n + 1, pages, NULL, sys, 0));
	EXPECT_EQ(0, np_sys_move_pages(0, n, pages, NULL, sys, 0));

	/* status[], both modes */
	st = np_guarded(n * 4, &m, &ml);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(0, np_query_array(self->fd, 0, 0, big, n, st, NULL, 0, &q));
	EXPECT_EQ(-EFAULT, np_query_array(self->fd, 0, 0, big, n + 1, st,
					  NULL, 0, &q));
	EXPECT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, n * psz,
				    NULL, 0, st, NULL, 0, &q));
	EXPECT_EQ(-EFAULT, np_query_range(self->fd, 0, 0, (uintptr_t)p,
					  (n + 1) * psz, NULL, 0, st, NULL, 0,
					  &q));
	EXPECT_EQ(-EFAULT, np_sys_move_pages(0, n + 1, big, NULL, st, 0));

	/* runs[]: 20 alternating pages need 20 runs. */
	runs = np_guarded(4 * sizeof(*runs), &m, &ml);
	ASSERT_NE(NULL, runs);
	EXPECT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, n * psz,
				    runs, 4, NULL, NULL, 0, &q));
	EXPECT_EQ(4, q.nr_runs);
	EXPECT_EQ(4, q.done);
	EXPECT_EQ(-EFAULT, np_query_range(self->fd, 0, 0, (uintptr_t)p,
					  n * psz, runs, 5, NULL, NULL, 0,
					  &q));

	/* node_pages[]: every entry is written. */
	np = np_guarded(self->c.nr_nodes * 8, &m, &ml);
	ASSERT_NE(NULL, np);
	EXPECT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, n * psz,
				    NULL, 0, NULL, np, self->c.nr_nodes, &q));
	EXPECT_EQ(-EFAULT, np_query_range(self->fd, 0, 0, (uintptr_t)p,
					  n * psz, NULL, 0, NULL, np + 1,
					  self->c.nr_nodes, &q));
}

/*
 * Struct sizes (np_size_next()): short -EINVAL, long with a zero tail
 * fine, else -E2BIG; an answered call answers all four pages.
 */
NP_TEST_F(query, struct_size)
{
	NP_SKIPPED();
	char *p = np_pmd_map(4 * psz, 0);
	struct numaplace_query *q;
	struct np_size z;
	__s32 st[4];
	int ret;

	ASSERT_NE(NULL, p);
	np_write_page(p, 1);
	ASSERT_EQ(0, np_size_start(&z, sizeof(*q), NUMAPLACE_QUERY_SIZE_VER0,
				   1021));
	q = (void *)z.buf;
	while (np_size_next(&z)) {
		for (size_t i = 0; i < ARRAY_SIZE(st); i++)
			st[i] = NP_SENTINEL;
		q->start = (uintptr_t)p;
		q->len = 4 * psz;
		q->status_ptr = (uintptr_t)st;
		ret = np_query(self->fd, q);
		EXPECT_EQ(0, np_size_check(&z, ret));
		if (!ret) {
			EXPECT_EQ(4, q->done) TH_LOG("%s", z.what);
			EXPECT_EQ(np_sys_one(p + psz), st[1])
				TH_LOG("%s", z.what);
		}
	}
	np_size_end(&z);
}

NP_TEST_F(query, unknown_flags)
{
	NP_SKIPPED();
	struct numaplace_query q;
	__u64 a = (uintptr_t)&q;
	__s32 st;

	/* The access scan's flags (2-4) are known: query_access.c. */
	for (int bit = 5; bit < 32; bit++) {
		np_query_init(&q, 0, 1U << bit);
		q.start = a;
		q.len = 1;
		EXPECT_EQ(-EINVAL, np_query(self->fd, &q)) TH_LOG("bit %d", bit);
		np_query_init(&q, 0, (1U << bit) | NUMAPLACE_QUERY_PAGES |
				     NUMAPLACE_QUERY_AS_SYSCALL);
		q.pages_ptr = (uintptr_t)&a;
		q.count = 1;
		q.status_ptr = (uintptr_t)&st;
		EXPECT_EQ(-EINVAL, np_query(self->fd, &q)) TH_LOG("bit %d", bit);
	}
	/* Known flags alone are fine. */
	EXPECT_EQ(0, np_query_array(self->fd, 0, NUMAPLACE_QUERY_AS_SYSCALL,
				    &a, 1, &st, NULL, 0, &q));
}

NP_TEST_F(query, reserved_nonzero)
{
	NP_SKIPPED();
	struct numaplace_query q;
	__u64 a = (uintptr_t)&q;
	static const struct np_field reserved[] = {
		NP_FIELD(struct numaplace_query, reserved0, 1),
		NP_FIELD(struct numaplace_query, reserved0, 1U << 31),
		NP_FIELD(struct numaplace_query, reserved1, 1),
		NP_FIELD(struct numaplace_query, reserved[0], 1),
		NP_FIELD(struct numaplace_query, reserved[1], 1ULL << 63),
		NP_FIELD(struct numaplace_query, reserved[2], 1ULL << 32),
	};

	np_query_init(&q, 0, 0);
	q.start = a;
	q.len = 1;
	EXPECT_EQ(0, np_fields_refused(self->fd, NUMAPLACE_IOC_QUERY, &q,
				       sizeof(q), reserved,
				       ARRAY_SIZE(reserved)));
	/*
	 * nr_young (reserved[0] before the access scan) is out only: a
	 * struct used again after a scan is fine, and the count is reset.
	 */
	np_query_init(&q, 0, 0);
	q.start = a;
	q.len = 1;
	q.nr_young = 5;
	EXPECT_EQ(0, np_query(self->fd, &q));
	EXPECT_EQ(0, q.nr_young);
}

/* runs are for range mode; a runs buffer needs a capacity. */
NP_TEST_F(query, runs_rules)
{
	NP_SKIPPED();
	struct numaplace_run runs[4];
	struct numaplace_query q;
	__u64 a = (uintptr_t)&q;
	__s32 st;

	np_query_init(&q, 0, NUMAPLACE_QUERY_PAGES);
	q.pages_ptr = (uintptr_t)&a;
	q.count = 1;
	q.status_ptr = (uintptr_t)&st;
	q.runs_ptr = (uintptr_t)runs;
	q.runs_cap = 4;
	EXPECT_EQ(-EINVAL, np_query(self->fd, &q));
	q.runs_cap = 0;
	EXPECT_EQ(-EINVAL, np_query(self->fd, &q));

	np_query_init(&q, 0, 0);
	q.start = a;
	q.len = 1;
	q.runs_ptr = (uintptr_t)runs;
	q.runs_cap = 0;
	EXPECT_EQ(-EINVAL, np_query(self->fd, &q));
	q.runs_cap = 1;
	EXPECT_EQ(0, np_query(self->fd, &q));
	EXPECT_EQ(1, q.nr_runs);
	EXPECT_EQ(1, q.done);
}

/* done, nr_runs, nr_unplaced are outputs: what comes in is ignored. */
NP_TEST_F(query, out_fields_ignored)
{
	NP_SKIPPED();
	char *p = np_pmd_map(4 * psz, 0);
	struct numaplace_run runs[4];
	struct numaplace_query q;

	ASSERT_NE(NULL, p);
	np_write_page(p, 0);
	np_query_init(&q, 0, 0);
	q.start = (uintptr_t)p;
	q.len = 4 * psz;
	q.runs_ptr = (uintptr_t)runs;
	q.runs_cap = 4;
	q.nr_runs = 77;
	q.done = ~0ULL;
	q.nr_unplaced = 12345;
	ASSERT_EQ(0, np_query(self->fd, &q));
	EXPECT_EQ(4, q.done);
	EXPECT_EQ(2, q.nr_runs);
	EXPECT_EQ(3, q.nr_unplaced);
}

NP_HARNESS_MAIN
