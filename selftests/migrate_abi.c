// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE's ABI (fixture "migrate"): the ABI and bad-input
 * rows of reliability.md (counts, ranges, tagged and bad pointers,
 * struct sizes, flags, reserved fields). The small comparisons
 * (count_edges, unaligned_range, tagged_addresses) run the move_pages(2)
 * oracle of migrate.c (np_compare(), migrate_lib.h) on one layout of
 * 4 KiB pages. Permissions are migrate_perm.c's, policies, nodes and
 * cpusets migrate_policy.c's, the engines against the oracle migrate.c's.
 *
 * NP_ONLY=word,word runs only the tests whose names contain one of the
 * words (the harness has no filter).
 */
#include <grp.h>
#include <limits.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "migrate_lib.h"
#include "kselftest_harness.h"

static long psz;

#define NP_HUGE_COUNT	(1ULL << 40)

NP_ABI_FIXTURE(migrate)

NP_TEST_F(migrate, zero_len_and_count)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(2);
	struct numaplace_migrate m;
	__u64 a;
	__s32 st[2] = { NP_SENTINEL, NP_SENTINEL };
	int node = 1;

	ASSERT_NE(NULL, p);
	a = (uintptr_t)p;
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, 0, a, 0, 1, st, &m));
	EXPECT_EQ(0, m.done);
	EXPECT_EQ(0, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines);
	EXPECT_EQ(NP_SENTINEL, st[0]);
	np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES, NUMAPLACE_POLICY_NODE);
	m.node = 1;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.done);
	np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)&a;
	m.nodes_ptr = (uintptr_t)&node;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.done);
	EXPECT_EQ(NP_SENTINEL, st[0]);
	EXPECT_EQ(0, np_sys_move_pages(0, 0, NULL, NULL, NULL, NP_MF_MOVE));
	EXPECT_EQ(0, np_sys_query(0, 1, &a, &node));
	EXPECT_EQ(0, node);
}

/* Two copies of a 4k layout for the small comparisons. */
static void np_two_4k(struct __test_metadata *_metadata,
		      FIXTURE_DATA(migrate) *self)
{
	static const enum np_seg k[] = { NP_SEG_4K };

	ASSERT_EQ(0, np_lay_build(&self->a, k, 1, 11));
	ASSERT_EQ(0, np_lay_build(&self->b, k, 1, 11));
}

static struct np_call np_call_of(FIXTURE_DATA(migrate) *self,
				 const char *name, int array, __u32 flags)
{
	struct np_call k = {
		.name = name, .array = array,
		.policy = NUMAPLACE_POLICY_PER_PAGE, .flags = flags,
		.allowed = self->allowed,
		.avail = np_engines_available(&self->info),
		.la = &self->a, .lb = &self->b,
	};

	return k;
}

/* Counts around the syscall's 16-entry chunks; range and array mode. */
NP_TEST_F(migrate, count_edges)
{
	NP_SKIPPED_OR_FILTERED();
	static const size_t counts[] = { 1, 15, 16, 17, 33 };
	__u64 aa[64], ab[64];
	int tgt[64];
	char name[64];

	np_two_4k(_metadata, self);
	for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
		size_t n = counts[c];
		struct np_call k;

		for (size_t i = 0; i < n; i++) {
			size_t pg = (i * 7 + c * 64) % 192;
			__u64 off = pg * psz + (i * 97) % psz;

			aa[i] = (uintptr_t)self->a.base + off;
			ab[i] = (uintptr_t)self->b.base + off;
			tgt[i] = self->a.target[pg];
		}
		snprintf(name, sizeof(name), "array count %zu", n);
		k = np_call_of(self, name, 1, NUMAPLACE_MIGRATE_AS_SYSCALL);
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, n));
		np_range_addrs(aa, (uintptr_t)self->a.base + (250 + 40 * c) * psz,
			       n);
		np_range_addrs(ab, (uintptr_t)self->b.base + (250 + 40 * c) * psz,
			       n);
		for (size_t i = 0; i < n; i++)
			tgt[i] = self->a.target[250 + 40 * c + i];
		snprintf(name, sizeof(name), "range count %zu", n);
		k = np_call_of(self, name, 0, NUMAPLACE_MIGRATE_AS_SYSCALL);
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, n));
	}
}

/* An unaligned start and len move every page they touch. */
NP_TEST_F(migrate, unaligned_range)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { size_t off, len, pages; } cases[] = {
		{ 100, 3 * 4096, 4 }, { 4095, 2, 2 }, { 1, 1, 1 },
		{ 0, 4097, 2 }, { 4095, 1, 1 },
	};
	__u64 aa[8], ab[8];
	int tgt[8];
	char name[64];

	np_two_4k(_metadata, self);
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		size_t first = 16 + 16 * c, n = cases[c].pages;
		struct np_call k;

		np_range_addrs(aa, (uintptr_t)self->a.base + first * psz, n);
		np_range_addrs(ab, (uintptr_t)self->b.base + first * psz, n);
		for (size_t i = 0; i < n; i++)
			tgt[i] = 1;
		snprintf(name, sizeof(name), "unaligned case %zu", c);
		k = np_call_of(self, name, 0, NUMAPLACE_MIGRATE_AS_SYSCALL);
		k.start = ab[0] + cases[c].off;
		k.len = cases[c].len;
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, n));
	}
}

/* Tagged addresses are not untagged: no VMA, -EFAULT, as the syscall. */
NP_TEST_F(migrate, tagged_addresses)
{
	NP_SKIPPED_OR_FILTERED();
	__u64 aa[16], ab[16];
	int tgt[16];
	struct np_call k;

	np_two_4k(_metadata, self);
	for (int bit = 48; bit < 64; bit += 5) {
		np_range_addrs(aa, (uintptr_t)self->a.base | 1ULL << bit, 4);
		np_range_addrs(ab, (uintptr_t)self->b.base | 1ULL << bit, 4);
		for (int i = 0; i < 4; i++)
			tgt[i] = 1;
		k = np_call_of(self, "tagged range", 0,
			       NUMAPLACE_MIGRATE_AS_SYSCALL);
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, 4));
	}
	for (int i = 0; i < 16; i++) {
		aa[i] = ((uintptr_t)self->a.base + i * psz + i) |
			(i % 2 ? 1ULL << (56 + i / 2) : 0);
		ab[i] = ((uintptr_t)self->b.base + i * psz + i) |
			(i % 2 ? 1ULL << (56 + i / 2) : 0);
		tgt[i] = 1;
	}
	k = np_call_of(self, "tagged array", 1, NUMAPLACE_MIGRATE_AS_SYSCALL);
	EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, 16));
}

/* start + len that wraps: -EINVAL. */
NP_TEST_F(migrate, len_overflow)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { __u64 start, len; } wrap[] = {
		{ -4096ULL, 8192 }, { 4096, ~0ULL }, { 1ULL << 63, 1ULL << 63 },
		{ -4096ULL, 4096 }, { ~0ULL, 1 },
	};
	struct numaplace_migrate m;
	__s32 st[4];

	for (size_t i = 0; i < ARRAY_SIZE(wrap); i++) {
		EXPECT_EQ(-EINVAL, np_migrate_node(self->fd, 0, 0, wrap[i].start,
						   wrap[i].len, 1, st, &m))
			TH_LOG("start %#llx len %#llx",
			       (unsigned long long)wrap[i].start,
			       (unsigned long long)wrap[i].len);
	}
}

/* Every user buffer, each kind of bad pointer: -EFAULT or "not asked". */
NP_TEST_F(migrate, bad_pointers)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(8);
	struct numaplace_migrate m, *mp;
	__u64 addrs[8];
	int nodes[8], sys[8];
	__s32 st[8];

	ASSERT_NE(NULL, p);
	np_range_addrs(addrs, (uintptr_t)p, 8);
	for (int i = 0; i < 8; i++)
		nodes[i] = i % 2;
	for (int k = 0; k < NP_BAD_MAX; k++) {
		const char *name = np_bad_names[k];
		int want = k == NP_BAD_RDONLY ? 0 : -EFAULT;
		void *bad;

		/* The struct (read-only: the answer cannot go back). */
		np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);
		m.start = (uintptr_t)p;
		m.len = 8 * psz;
		m.node = k % 2;
		mp = np_bad_pointer(k, &m, sizeof(m));
		EXPECT_EQ(-EFAULT, np_migrate(self->fd, mp)) TH_LOG("struct %s", name);

		/* pages[]: read-only is fine. */
		bad = np_bad_pointer(k, addrs, sizeof(addrs));
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)bad;
		m.count = 8;
		m.node = k % 2;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(want, np_migrate(self->fd, &m)) TH_LOG("pages %s", name);
		if (want) {
			EXPECT_EQ(0, m.done) TH_LOG("pages %s", name);
		}
		EXPECT_EQ(want, np_sys_move_pages(0, 8, bad, nodes, sys,
						  NP_MF_MOVE))
			TH_LOG("syscall pages %s", name);

		/* nodes[], array and range mode. */
		bad = np_bad_pointer(k, nodes, sizeof(nodes));
		for (int r = 0; r < 2; r++) {
			np_per_page_init(&m, r, addrs, (uintptr_t)p, 8,
					 bad, st);
			/* abi.md: PER_PAGE without nodes_ptr is -EINVAL. */
			EXPECT_EQ(k == NP_BAD_NULL ? -EINVAL : want,
				  np_migrate(self->fd, &m))
				TH_LOG("nodes %s (%s mode)", name,
				       r ? "range" : "array");
		}
		/* (NULL nodes is the syscall's query mode.) */
		if (k != NP_BAD_NULL) {
			EXPECT_EQ(want, np_sys_move_pages(0, 8, addrs, bad, sys,
							  NP_MF_MOVE))
				TH_LOG("syscall nodes %s", name);
		}

		/* status[]: NULL is "not asked", the rest -EFAULT. */
		bad = np_bad_pointer(k, NULL, 0);
		want = k == NP_BAD_NULL ? 0 : -EFAULT;
		for (int r = 0; r < 2; r++) {
			np_per_page_init(&m, r, addrs, (uintptr_t)p, 8,
					 nodes, bad);
			EXPECT_EQ(want, np_migrate(self->fd, &m))
				TH_LOG("status %s (%s mode)", name,
				       r ? "range" : "array");
		}
		if (k != NP_BAD_NULL) {
			EXPECT_EQ(-EFAULT, np_sys_move_pages(0, 8, addrs, nodes,
							     bad, NP_MF_MOVE))
				TH_LOG("syscall status %s", name);
		}
		for (int i = 0; i < 8; i++)
			nodes[i] ^= 1;
	}
	/* All well again; the data never changed. */
	EXPECT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)p, 8 * psz, 0,
				     st, &m));
	EXPECT_EQ(8, np_count_s32(st, 8, 0));
	EXPECT_EQ(0, np_fill_bad(p, 8, 3, NULL));
}

/*
 * After an -EFAULT for an array entry: done says how far the call got,
 * and the statuses of those entries are written (the rest are not).
 */
static int np_partial_ok(const struct numaplace_migrate *m, const __s32 *st,
			 size_t n)
{
	if (m->done > n)
		return 0;
	for (size_t i = 0; st && i < m->done; i++)
		if (st[i] == NP_SENTINEL)
			return 0;
	return 1;
}

/* Arrays that end on an unmapped page: exact fits work, one more faults. */
NP_TEST_F(migrate, arrays_end_on_unmapped)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 20;
	char *p = np_pages_on0(n);
	__u64 *pages = np_guarded(n * 8, NULL, NULL), big[32];
	int *nodes = np_guarded(n * 4, NULL, NULL), bnodes[32], sys[32];
	__s32 *gst = np_guarded(n * 4, NULL, NULL), st[32];
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(pages && nodes && gst);
	for (size_t i = 0; i < 32; i++) {
		big[i] = (uintptr_t)p + (i % n) * psz;
		bnodes[i] = 1;
	}
	memcpy(pages, big, n * 8);
	memcpy(nodes, bnodes, n * 4);

	/* pages[] */
	for (size_t c = n; c <= n + 1; c++) {
		for (size_t i = 0; i < 32; i++)
			st[i] = NP_SENTINEL;
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)pages;
		m.count = c;
		m.node = 1;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
			TH_LOG("pages count %zu", c);
		EXPECT_TRUE(np_partial_ok(&m, st, n));
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, pages, bnodes, sys, NP_MF_MOVE));
	}
	/* nodes[], array and range mode */
	for (size_t c = n; c <= n + 1; c++) {
		for (int r = 0; r < 2; r++) {
			for (size_t i = 0; i < 32; i++)
				st[i] = NP_SENTINEL;
			np_per_page_init(&m, r, big, (uintptr_t)p, c,
					 nodes, st);
			EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
				TH_LOG("nodes count %zu %s", c, r ? "range" : "array");
			EXPECT_TRUE(np_partial_ok(&m, st, n));
		}
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, big, nodes, sys, NP_MF_MOVE));
	}
	/* status[], array and range mode */
	for (size_t c = n; c <= n + 1; c++) {
		for (int r = 0; r < 2; r++) {
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_NODE);
			m.pages_ptr = r ? 0 : (uintptr_t)big;
			m.count = r ? 0 : c;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? c * psz : 0;
			m.node = 0;
			m.status_ptr = (uintptr_t)gst;
			EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
				TH_LOG("status count %zu %s", c, r ? "range" : "array");
			EXPECT_LE(m.done, c);
		}
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, big, bnodes, gst, NP_MF_MOVE));
	}
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/* A count far past the arrays: -EFAULT, like the syscall, no stray write. */
NP_TEST_F(migrate, count_huge)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 40, canary = 8;
	static const __u64 counts[] = { NP_HUGE_COUNT, 1ULL << 61, ~0ULL };
	char *p = np_pages_on0(16);
	__u64 *pages = np_guarded(n * 8, NULL, NULL);
	int *nodes = np_guarded(n * 4, NULL, NULL), sys[64];
	__s32 *st = np_guarded((n + canary) * 4, NULL, NULL);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(pages && nodes && st);
	for (size_t i = 0; i < n; i++) {
		pages[i] = (uintptr_t)p + (i % 16) * psz;
		nodes[i] = i % 2;
	}
	for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
		for (int pol = 0; pol < 2; pol++) {
			int ret;

			for (size_t i = 0; i < n + canary; i++)
				st[i] = NP_SENTINEL;
			np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
					pol ? NUMAPLACE_POLICY_PER_PAGE :
					NUMAPLACE_POLICY_NODE);
			m.pages_ptr = (uintptr_t)pages;
			m.count = counts[c];
			m.nodes_ptr = pol ? (uintptr_t)nodes : 0;
			m.node = 1;
			m.status_ptr = (uintptr_t)st;
			ret = np_migrate(self->fd, &m);
			/* count * 8 wraps past 1 << 61: -EINVAL is fair. */
			if (counts[c] >= 1ULL << 61 && ret == -EINVAL)
				ret = -EFAULT;
			EXPECT_EQ(-EFAULT, ret) TH_LOG("count %#llx policy %d",
						       (unsigned long long)counts[c], pol);
			EXPECT_LE(m.done, n);
			for (size_t i = n; i < n + canary; i++) {
				EXPECT_EQ(NP_SENTINEL, st[i])
					TH_LOG("count %#llx: status[%zu] written",
					       (unsigned long long)counts[c], i);
			}
		}
		EXPECT_EQ(-EFAULT, np_sys_move_pages(0, counts[c], pages, nodes,
						     sys, NP_MF_MOVE));
	}
	/* A long range: the status buffer ends first. */
	st = np_guarded(n * 4, NULL, NULL);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(-EFAULT, np_migrate_node(self->fd, 0, 0, (uintptr_t)p,
					   NP_HUGE_COUNT * psz, 1, st, &m));
	EXPECT_LE(m.done, n);
	EXPECT_EQ(0, np_fill_bad(p, 16, 3, NULL));
}

/*
 * Struct sizes (np_size_next()): short -EINVAL, long with a zero tail
 * fine, else -E2BIG. Each call answered moves the pages to the other
 * node, all four; one refused moves none.
 */
NP_TEST_F(migrate, struct_size)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(4);
	struct numaplace_migrate *m;
	struct np_size z;
	int node = 1, at, ret;
	__s32 st[4];

	ASSERT_NE(NULL, p);
	ASSERT_EQ(NUMAPLACE_MIGRATE_SIZE_VER0, sizeof(*m));
	ASSERT_EQ(0, np_size_start(&z, sizeof(*m),
				   NUMAPLACE_MIGRATE_SIZE_VER0, 127));
	m = (void *)z.buf;
	while (np_size_next(&z)) {
		m->node = node;
		m->start = (uintptr_t)p;
		m->len = 4 * psz;
		m->status_ptr = (uintptr_t)st;
		ret = np_migrate(self->fd, m);
		EXPECT_EQ(0, np_size_check(&z, ret));
		if (ret)
			continue;
		EXPECT_EQ(4, m->done) TH_LOG("%s", z.what);
		EXPECT_EQ(4, m->nr_moved_pages) TH_LOG("%s", z.what);
		EXPECT_EQ(4, np_count_s32(st, 4, node)) TH_LOG("%s", z.what);
		EXPECT_EQ(0, np_sys_query(0, 1, (__u64[]){ (uintptr_t)p },
					  &at));
		EXPECT_EQ(node, at) TH_LOG("%s", z.what);
		node = !node;
	}
	np_size_end(&z);
}

/* Flags the ABI does not know: -EINVAL, nothing moved. */
NP_TEST_F(migrate, unknown_flags)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(2);
	struct numaplace_migrate m;
	int node;

	ASSERT_NE(NULL, p);
	/* Bit 7 (ENGINE_PT) is the last one known. */
	for (int bit = 8; bit < 32; bit++) {
		EXPECT_EQ(-EINVAL, np_migrate_node(self->fd, 0, 1U << bit,
						   (uintptr_t)p, 2 * psz, 1,
						   NULL, &m))
			TH_LOG("bit %d", bit);
	}
	ASSERT_EQ(0, np_sys_query(0, 1, (__u64[]){ (uintptr_t)p }, &node));
	EXPECT_EQ(0, node);
	EXPECT_EQ(0, np_migrate_node(self->fd, 0,
				     NUMAPLACE_MIGRATE_AS_SYSCALL |
				     NUMAPLACE_MIGRATE_SPLIT_OK, (uintptr_t)p,
				     2 * psz, 1, NULL, &m));
	EXPECT_EQ(2, m.nr_moved_pages);
}

/* A reserved field set: -EINVAL, nothing moved; the same call moves. */
NP_TEST_F(migrate, reserved_nonzero)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct np_field reserved[] = {
		NP_FIELD(struct numaplace_migrate, reserved0, 1),
		NP_FIELD(struct numaplace_migrate, reserved0, 1U << 31),
		NP_FIELD(struct numaplace_migrate, reserved[0], 1),
		NP_FIELD(struct numaplace_migrate, reserved[1], 1ULL << 63),
		NP_FIELD(struct numaplace_migrate, reserved[2], 1),
		NP_FIELD(struct numaplace_migrate, reserved[3], 1ULL << 32),
	};
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);
	m.start = (uintptr_t)p;
	m.len = psz;
	m.node = 1;
	EXPECT_EQ(0, np_fields_refused(self->fd, NUMAPLACE_IOC_MIGRATE, &m,
				       sizeof(m), reserved,
				       ARRAY_SIZE(reserved)));
	EXPECT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(1, m.nr_moved_pages);
}


NP_HARNESS_MAIN
