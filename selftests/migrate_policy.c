// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE's policies and nodes (fixture "migrate_policy"):
 * bad policies and engines, bad and offline nodes (alone and in the
 * middle of PER_PAGE targets), POLICY_CPU and INTERLEAVE, the status
 * array's optional outputs, and the cpuset check (a node outside the
 * target's cpuset, a caller in a small cpuset). The bad input is
 * migrate_abi.c's, permissions migrate_perm.c's.
 *
 * NP_ONLY=word,word runs only the tests whose names contain one of the
 * words (the harness has no filter): NP_ONLY=cpuset.
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

NP_ABI_FIXTURE(migrate_policy)

NP_TEST_F(migrate_policy, bad_policy)
{
	NP_SKIPPED_OR_FILTERED();
	static const __u32 bad[] = { NUMAPLACE_POLICY_MAX, 5, 255, 1U << 31,
				     ~0U };
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		np_migrate_init(&m, 0, 0, bad[i]);
		m.start = (uintptr_t)p;
		m.len = psz;
		m.node = 1;
		EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m)) TH_LOG("policy %u", bad[i]);
	}
}

/* Forcing an engine INFO does not list: -EOPNOTSUPP. */
NP_TEST_F(migrate_policy, engine_unavailable)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { __u32 flag; __u64 feat; } e[] = {
		{ NUMAPLACE_MIGRATE_ENGINE_KERNEL, NUMAPLACE_FEAT_MIGRATE_KERNEL },
		{ NUMAPLACE_MIGRATE_ENGINE_VMA, NUMAPLACE_FEAT_MIGRATE_VMA },
		{ NUMAPLACE_MIGRATE_ENGINE_BATCH, NUMAPLACE_FEAT_MIGRATE_BATCH },
	};
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;
	int tried = 0;

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < ARRAY_SIZE(e); i++) {
		int ret = np_migrate_node(self->fd, 0, e[i].flag, (uintptr_t)p,
					  psz, i % 2 ? 0 : 1, NULL, &m);

		if (self->info.features & e[i].feat) {
			EXPECT_EQ(0, ret) TH_LOG("engine flag %#x", e[i].flag);
		} else {
			tried++;
			EXPECT_EQ(-EOPNOTSUPP, ret) TH_LOG("engine flag %#x", e[i].flag);
		}
	}
	if (!tried)
		ksft_print_msg("every engine is available: no -EOPNOTSUPP case\n");
}

/* A node that is not, or has no memory: -ENODEV, nothing moved. */
NP_TEST_F(migrate_policy, bad_nodes)
{
	NP_SKIPPED_OR_FILTERED();
	int bad[] = { -1, NUMAPLACE_MAX_NODES, INT_MAX, INT_MIN,
		      NUMAPLACE_MAX_NODES - 1, (int)self->info.nr_node_ids, -2 };
	char *p = np_pages_on0(4);
	struct numaplace_migrate m;
	__u64 addrs[4];
	int nodes[4], sys[4], memless = -1;
	__s32 st[4];

	ASSERT_NE(NULL, p);
	np_range_addrs(addrs, (uintptr_t)p, 4);
	for (int n = 0; n < (int)self->info.nr_node_ids; n++)
		if (np_node_isset(self->info.node_online, n) &&
		    !np_node_isset(self->info.node_memory, n))
			memless = n;
	if (memless >= 0)
		bad[ARRAY_SIZE(bad) - 1] = memless;
	else
		ksft_print_msg("no memoryless node in this guest\n");
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		int node = bad[b];

		for (int i = 0; i < 4; i++) {
			nodes[i] = node;
			st[i] = NP_SENTINEL;
		}
		EXPECT_EQ(-ENODEV, np_sys_move_pages(0, 4, addrs, nodes, sys,
						     NP_MF_MOVE))
			TH_LOG("syscall node %d", node);
		EXPECT_EQ(-ENODEV, np_migrate_node(self->fd, 0, 0, (uintptr_t)p,
						   4 * psz, node, st, &m))
			TH_LOG("range node %d", node);
		EXPECT_EQ(0, m.done);
		EXPECT_EQ(0, m.nr_moved_pages);
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_PER_PAGE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = 4;
		m.nodes_ptr = (uintptr_t)nodes;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m)) TH_LOG("array node %d", node);
		EXPECT_EQ(0, m.done);
		EXPECT_EQ(NP_SENTINEL, st[0]);
		if (node >= 0 && node < NUMAPLACE_MAX_NODES) {
			np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
			m.start = (uintptr_t)p;
			m.len = 4 * psz;
			m.node_set[0] = 1;
			m.node_set[node / 64] |= 1ULL << (node % 64);
			EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m))
				TH_LOG("interleave over 0 and %d", node);
		}
	}
	ASSERT_EQ(0, np_nodes_of(0, addrs, 4, sys));
	EXPECT_EQ(4, np_count(sys, 4, 0));
}

/*
 * A bad node in the middle of PER_PAGE targets: the entries before it are
 * moved and answered, as the syscall does; then -ENODEV, done = its index.
 */
NP_TEST_F(migrate_policy, bad_node_mid_array)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 8, at = 3;
	int bad[] = { -1, NUMAPLACE_MAX_NODES, -2 };
	struct numaplace_migrate m;
	__u64 aa[8], ab[8];
	int nodes[8], sys[8], wa[8], wb[8];
	__s32 st[8];

	for (int n2 = 0; n2 < (int)self->info.nr_node_ids; n2++)
		if (np_node_isset(self->info.node_online, n2) &&
		    !np_node_isset(self->info.node_memory, n2))
			bad[2] = n2;
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		for (int r = 0; r < 2; r++) {
			char *pa = np_pages_on0(n), *pb = np_pages_on0(n);
			int ret;

			ASSERT_TRUE(pa && pb);
			np_range_addrs(aa, (uintptr_t)pa, n);
			np_range_addrs(ab, (uintptr_t)pb, n);
			for (size_t i = 0; i < n; i++) {
				nodes[i] = i == at ? bad[b] : 1;
				sys[i] = st[i] = NP_SENTINEL;
			}
			EXPECT_EQ(-ENODEV, np_sys_move_pages(0, n, aa, nodes, sys,
							     NP_MF_MOVE));
			np_per_page_init(&m, r, ab, (uintptr_t)pb, n,
					 nodes, st);
			ret = np_migrate(self->fd, &m);
			EXPECT_EQ(-ENODEV, ret) TH_LOG("node %d %s", bad[b],
						       r ? "range" : "array");
			EXPECT_EQ(at, m.done) TH_LOG("node %d %s", bad[b],
						     r ? "range" : "array");
			EXPECT_EQ(at, m.nr_moved_pages);
			ASSERT_EQ(0, np_nodes_of(0, aa, n, wa));
			ASSERT_EQ(0, np_nodes_of(0, ab, n, wb));
			for (size_t i = 0; i < n; i++) {
				EXPECT_EQ(sys[i], st[i]) TH_LOG("node %d %s: status %zu",
								bad[b], r ? "range" : "array", i);
				EXPECT_EQ(wa[i], wb[i]) TH_LOG("node %d %s: page %zu",
							       bad[b], r ? "range" : "array", i);
			}
			munmap(pa, n * psz);
			munmap(pb, n * psz);
		}
	}
}

/* POLICY_CPU: the node of the CPU; a CPU of a memoryless node -ENODEV. */
NP_TEST_F(migrate_policy, policy_cpu)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 16;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	int cpu1 = np_cpu_of_node(1), cpu0 = np_cpu_of_node(0), nodes[16];
	__s32 st[16];

	ASSERT_NE(NULL, p);
	if (cpu1 < 0 || cpu0 < 0)
		SKIP(return, "no CPU on node 0 or 1");
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_CPU);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.cpu = cpu1;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, np_count_s32(st, n, 1));
	EXPECT_EQ(n, m.nr_moved_pages);
	ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 1));
	m.cpu = cpu0;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, np_count_s32(st, n, 0));

	for (int nd = 0; nd < (int)self->info.nr_node_ids; nd++) {
		int cpu = np_cpu_of_node(nd);

		if (np_node_isset(self->info.node_memory, nd) || cpu < 0)
			continue;
		m.cpu = cpu;
		EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m))
			TH_LOG("cpu %d of memoryless node %d", cpu, nd);
		EXPECT_EQ(0, m.done);
	}
	m.cpu = 1U << 20;
	EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m));
	ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 0));
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/*
 * POLICY_INTERLEAVE over {0, 1} on THPs and 4 KiB pages: every folio
 * whole on one node, the nodes alternate folio by folio (in address
 * order), as many folios on each.
 */
TEST_F_TIMEOUT(migrate_policy, interleave, NP_TIMEOUT(60))
{
	NP_SKIPPED_OR_FILTERED();
	/* 1: THP, 0: 4k, every other page written */
	static const int thp[] = { 1, 0, 1, 0, 1, 1 };
	const size_t nch = ARRAY_SIZE(thp), n = nch * NP_SEG_PAGES;
	char *p = np_pmd_map(nch * NP_PMD, 0);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	struct np_pre *pre = calloc(n, sizeof(*pre));
	struct np_page *post = calloc(n, sizeof(*post));
	__s32 *st = calloc(n + 1, sizeof(*st));
	__u64 moved = 0, in_place = 0, folios[2] = { 0, 0 }, holes = 0;
	unsigned long last = 0;
	int last_node = -1, bad = 0;
	struct numaplace_migrate m;
	struct np_model md;

	ASSERT_TRUE(p && addrs && pre && post && st);
	np_mempolicy(MPOL_BIND, 0);
	for (size_t c = 0; c < nch; c++) {
		char *q = p + c * NP_PMD;

		if (thp[c]) {
			madvise(q, NP_PMD, MADV_HUGEPAGE);
			memset(q, 0x40 + c, NP_PMD);
			madvise(q, NP_PMD, MADV_NOHUGEPAGE);
		} else {
			for (size_t i = 0; i < NP_SEG_PAGES; i += 2)
				np_touch_w(q, i);
		}
	}
	np_mempolicy(MPOL_DEFAULT, -1);
	np_range_addrs(addrs, (uintptr_t)p, n);
	ASSERT_EQ(0, np_pre_read(0, addrs, n, pre));
	if (!(pre[0].pg.what & NPW_PMD))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");

	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.node_set[0] = 3;
	m.status_ptr = (uintptr_t)st;
	st[n] = NP_SENTINEL;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(NP_SENTINEL, st[n]);
	ASSERT_EQ(0, np_model_open(&md, 0));
	for (size_t i = 0; i < n; i++)
		np_model_page(&md, addrs[i], &post[i]);
	np_model_close(&md);

	self->c.logged = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pre[i].folio) {
			holes++;
			if (st[i] != -ENOENT) {
				bad++;
				np_log(&self->c, "page %zu: never touched, status %d",
				       i, st[i]);
			}
			continue;
		}
		if (post[i].node != st[i] || st[i] < 0 || st[i] > 1) {
			bad++;
			np_log(&self->c, "page %zu: status %d, on node %d", i,
			       st[i], post[i].node);
		}
		if (pre[i].folio == last) {
			if (st[i] != last_node) {
				bad++;
				np_log(&self->c, "page %zu: status %d, its folio went to %d",
				       i, st[i], last_node);
			}
			continue;
		}
		/* A new folio. */
		if (st[i] == last_node) {
			bad++;
			np_log(&self->c, "page %zu: folio to node %d after a folio to %d",
			       i, st[i], last_node);
		}
		last = pre[i].folio;
		last_node = st[i];
		if (st[i] == 0 || st[i] == 1) {
			folios[st[i]]++;
			if (st[i] == 1)
				moved += pre[i].nr;
			else
				in_place += pre[i].nr;
		}
	}
	np_log_end(&self->c, "interleave", bad);
	EXPECT_EQ(0, bad);
	ksft_print_msg("folios: %llu on node 0, %llu on node 1\n",
		       (unsigned long long)folios[0],
		       (unsigned long long)folios[1]);
	EXPECT_LE(folios[0], folios[1] + 1);
	EXPECT_LE(folios[1], folios[0] + 1);
	EXPECT_EQ(moved, m.nr_moved_pages);
	EXPECT_EQ(in_place, m.nr_in_place_pages);
	EXPECT_EQ(holes, m.nr_failed[NUMAPLACE_FAIL_ENOENT]);
	EXPECT_EQ(folios[1], m.nr_moved_folios);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "interleave", &m, st, n, 1,
					   self->allowed));
	/* THPs stay whole (PMD-mapped), data intact. */
	for (size_t c = 0; c < nch; c++) {
		char *q = p + c * NP_PMD;

		if (!thp[c])
			continue;
		EXPECT_TRUE(post[c * NP_SEG_PAGES].what & NPW_PMD) TH_LOG("chunk %zu", c);
		EXPECT_TRUE(np_all_bytes(q, NP_PMD, 0x40 + c)) TH_LOG("chunk %zu", c);
	}

	/* One node in the set: everything there. */
	memset(m.node_set, 0, sizeof(m.node_set));
	m.node_set[0] = 2;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n - holes, np_count_s32(st, n, 1));
	free(addrs);
	free(pre);
	free(post);
	free(st);
}

/* An empty node set for INTERLEAVE: -EINVAL. */
NP_TEST_F(migrate_policy, interleave_empty_set)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(4);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
	m.start = (uintptr_t)p;
	m.len = 4 * psz;
	EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.nr_moved_pages);
}

/* status_ptr is optional; outputs that come in are ignored. */
NP_TEST_F(migrate_policy, status_optional_outputs_ignored)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 32;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	__s32 st[32];

	ASSERT_NE(NULL, p);
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.node = 1;
	m.done = ~0ULL;
	m.nr_moved_pages = m.nr_moved_folios = 12345;
	m.nr_in_place_pages = m.nr_failed_pages = 777;
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++)
		m.nr_failed[r] = r + 1;
	m.engines = ~0U;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(n, m.nr_moved_folios);
	EXPECT_EQ(0, m.nr_in_place_pages);
	EXPECT_EQ(0, m.nr_failed_pages);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "no status", &m, NULL, n,
					   1, self->allowed));
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++) {
		EXPECT_EQ(0, m.nr_failed[r]) TH_LOG("reason %d", r);
	}
	/* Again: all in place, no engine. */
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.nr_in_place_pages);
	EXPECT_EQ(0, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines);
	EXPECT_EQ(n, np_count_s32(st, n, 1));
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/*
 * A cpuset cgroup whose cpuset.mems is @mems, on a cgroup2 mount of the
 * test's own (self->cg, self->cg_mnt: the teardown removes both). 0,
 * -ENOENT (no cgroup2 or no cpuset controller) or -errno.
 */
static int np_cpuset_make(FIXTURE_DATA(migrate_policy) *self, const char *mems)
{
	char path[256];

	snprintf(self->cg_mnt, sizeof(self->cg_mnt), "/tmp/np-cg-%d", getpid());
	if (mkdir(self->cg_mnt, 0700))
		return -errno;
	if (mount("none", self->cg_mnt, "cgroup2", 0, NULL)) {
		rmdir(self->cg_mnt);
		self->cg_mnt[0] = 0;
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", self->cg_mnt);
	if (np_write_str(path, "+cpuset"))
		return -ENOENT;
	snprintf(self->cg, sizeof(self->cg), "%s/np-migrate", self->cg_mnt);
	if (mkdir(self->cg, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/cpuset.mems", self->cg);
	return np_write_str(path, mems);
}

/*
 * A node outside the target's cpuset (cgroup2 cpuset.mems): -EACCES as
 * the syscall; in the middle of PER_PAGE targets after the entries
 * before it; a memoryless node is still -ENODEV.
 */
NP_TEST_F(migrate_policy, cpuset_outside)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_PROBE_PAGES, at = 5;
	int ret;
	struct np_probe_args a = { 0, 0, 1, 0, NP_MF_MOVE };
	struct numaplace_migrate m;
	char path[256], val[32];
	__u64 addrs[NP_PROBE_PAGES];
	int nodes[NP_PROBE_PAGES], sys[NP_PROBE_PAGES];
	__s32 st[NP_PROBE_PAGES];
	pid_t pid;

	ret = np_cpuset_make(self, "0");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 cpuset controller");
	ASSERT_EQ(0, ret);
	pid = np_abi_kid(&self->kids, self->res, 0, 1);
	ASSERT_GT(pid, 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", self->cg);
	snprintf(val, sizeof(val), "%d", pid);
	ASSERT_EQ(0, np_write_str(path, val));

	a.pid = pid;
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self->res, 0, &a));
	EXPECT_EQ(-EACCES, self->res->sys);
	EXPECT_EQ(-EACCES, self->res->mod);
	EXPECT_EQ(0, self->res->done);
	EXPECT_EQ(NP_SENTINEL, self->res->st[0]);

	/* In the middle: entries before it answered (in place here). */
	np_range_addrs(addrs, a.base, n);
	for (size_t i = 0; i < n; i++) {
		nodes[i] = i == at ? 1 : 0;
		sys[i] = st[i] = NP_SENTINEL;
	}
	EXPECT_EQ(-EACCES, np_sys_move_pages(pid, n, addrs, nodes, sys,
					     NP_MF_MOVE));
	np_migrate_init(&m, pid, NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)addrs;
	m.count = n;
	m.nodes_ptr = (uintptr_t)nodes;
	m.status_ptr = (uintptr_t)st;
	EXPECT_EQ(-EACCES, np_migrate(self->fd, &m));
	EXPECT_EQ(at, m.done);
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(sys[i], st[i]) TH_LOG("entry %zu", i);
	}
	/* Node checks before the cpuset. */
	for (int nd = 0; nd < (int)self->info.nr_node_ids; nd++) {
		if (np_node_isset(self->info.node_memory, nd))
			continue;
		EXPECT_EQ(-ENODEV, np_migrate_node(self->fd, pid, 0, a.base,
						   n * psz, nd, NULL, &m));
	}
	ASSERT_EQ(0, np_where_pages(pid, a.base, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 0));
}

/*
 * A target node inside the target's cpuset but outside the caller's:
 * move_pages(2) allocates in the caller's context, so nothing moves and
 * the call fails with ENOMEM (its way of saying the node is full).
 * numaplace moves nothing either and answers each such page -ENOMEM (as
 * for a full node, abi.md), also when its copy workers (kworkers, outside
 * any cpuset) allocate. (41261ae passes too here: the caller's own share
 * fails first and stops the workers; the check up front makes it so by
 * construction.) The caller is a child in a cpuset of node 0; the target
 * is the test, outside it.
 */
#define NP_CPUSET_SMALL	512

NP_TEST_F(migrate_policy, cpuset_caller)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t nt = 2 * NP_SEG_PAGES, n = NP_CPUSET_SMALL + nt;
	char *small = np_pmd_map(NP_CPUSET_SMALL * psz, 0);
	char *thp = np_pmd_map(nt * psz, 1);
	size_t bytes = (2 * n + 1) * sizeof(int);
	int *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int *mod = sh, *sys = sh + n, now[NP_CPUSET_SMALL + 2 * NP_SEG_PAGES];
	__u64 *addrs = calloc(n, sizeof(*addrs));
	int bad = 0, ret, status;
	pid_t pid;

	ASSERT_TRUE(small && thp && sh != MAP_FAILED && addrs);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	ret = np_cpuset_make(self, "0");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 cpuset controller");
	ASSERT_EQ(0, ret);
	np_range_addrs(addrs, (uintptr_t)small, NP_CPUSET_SMALL);
	np_range_addrs(addrs + NP_CPUSET_SMALL, (uintptr_t)thp, nt);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(small, NP_CPUSET_SMALL, 1);
	np_fill(thp, nt, 2);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Not shared with the caller (else -EACCES without MOVE_ALL). */
	ASSERT_EQ(0, madvise(small, NP_CPUSET_SMALL * psz, MADV_DONTFORK));
	ASSERT_EQ(0, madvise(thp, nt * psz, MADV_DONTFORK));
	/* Workers that allocate outside the caller's context. */
	if (system("numaplace config copy_workers=2 >/dev/null 2>&1"))
		TH_LOG("could not set copy_workers=2: only the caller copies");

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char procs[256];
		pid_t target = getppid();
		struct numaplace_migrate m;
		int nodes[NP_CPUSET_SMALL + 2 * NP_SEG_PAGES];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", self->cg);
		if (np_write_str(procs, "0"))
			_exit(2);
		for (size_t i = 0; i < n; i++) {
			nodes[i] = 1;
			mod[i] = sys[i] = NP_SENTINEL;
		}
		np_migrate_init(&m, target, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = n;
		m.node = 1;
		m.status_ptr = (uintptr_t)mod;
		if (np_migrate(self->fd, &m))
			_exit(3);
		sys[n] = np_sys_move_pages(target, n, addrs, nodes, sys,
					   NP_MF_MOVE);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (system("numaplace config copy_workers=0 >/dev/null 2>&1"))
		TH_LOG("could not set copy_workers=0 back");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOMEM, sys[n]);
	for (size_t i = 0; i < n; i++)
		bad += mod[i] != -ENOMEM;
	EXPECT_EQ(0, bad) TH_LOG("page 0: %d; last: %d", mod[0], mod[n - 1]);
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != 0;
	EXPECT_EQ(0, bad) TH_LOG("pages moved out of the caller's cpuset");
	munmap(sh, bytes);
	free(addrs);
}


NP_HARNESS_MAIN
