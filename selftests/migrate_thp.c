// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE on large folios, once per engine (fixture
 * "migrate_thp", migrate.c's NP_MIG_FIXTURE()): a PMD THP split with
 * NUMAPLACE_MIGRATE_SPLIT_OK (whole, PTE-mapped), per-page targets inside
 * a THP against move_pages(2), THPs the page-table engine moves whole,
 * and a COW page shared with another process that must stay mapped there
 * while its range moves back and forth.
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

/* ------------------------------------------------------------------ */
/* Fixture "migrate_thp": every test once per engine.              */
/* ------------------------------------------------------------------ */

NP_MIG_FIXTURE(migrate_thp)

/*
 * @n pages of PMD-mapped THPs at @p on node 0, each page stamped with
 * generation 1, khugepaged kept away (it would re-collapse what an engine
 * split), @addrs their addresses. 0, or -ENOENT: no THP (THP disabled?).
 */
static int np_thp_on0(char *p, __u64 *addrs, size_t n)
{
	struct np_pre pre;

	np_range_addrs(addrs, (uintptr_t)p, n);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 1);
	np_mempolicy(MPOL_DEFAULT, -1);
	madvise(p, n * psz, MADV_NOHUGEPAGE);
	if (np_pre_read(0, addrs, 1, &pre) || !(pre.pg.what & NPW_PMD))
		return -ENOENT;
	return 0;
}

/*
 * THPs: whole through the kernel engine; with ENGINE_VMA they stay in
 * place (-EBUSY) unless SPLIT_OK lets the engine split them. Data intact.
 */
NP_TEST_F(migrate_thp, thp_split_ok)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 2 * NP_SEG_PAGES;
	char *p = np_pmd_map(2 * NP_PMD, 1);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	__s32 *st = calloc(n + 1, sizeof(*st));
	int *now = calloc(n, sizeof(*now));
	struct numaplace_migrate m;
	struct np_pre pre;
	int t2, bad = 0;
	size_t first = 0;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(addrs && st && now);
	if (np_thp_on0(p, addrs, n))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");

	/* Without SPLIT_OK. */
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
				     n * psz, 1, st, &m));
	EXPECT_EQ(n, m.done);
	for (size_t i = 0; i < n; i++)
		bad += st[i] != (self->vma_only ? -EBUSY : 1);
	EXPECT_EQ(0, bad) TH_LOG("first status %d", st[0]);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "thp", &m, st, n, 1,
					   self->allowed));
	if (!self->vma_only) {
		EXPECT_EQ(2, m.nr_moved_folios);
	}
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != (self->vma_only ? 0 : 1);
	EXPECT_EQ(0, bad) TH_LOG("page 0 on %d", now[0]);
	ASSERT_EQ(0, np_pre_read(0, addrs, 1, &pre));
	/* A THP moves whole (and the VMA engine leaves it alone). */
	if (self->eflags) {
		EXPECT_TRUE(pre.pg.what & NPW_PMD) TH_LOG("the THP was split");
	}
	EXPECT_EQ(0, np_fill_bad(p, n, 1, &first)) TH_LOG("page %zu", first);

	/* SPLIT_OK: the VMA engine may split them to move them. */
	t2 = self->vma_only ? 1 : 0;
	ASSERT_EQ(0, np_migrate_node(self->fd, 0,
				     self->eflags | NUMAPLACE_MIGRATE_SPLIT_OK,
				     (uintptr_t)p, n * psz, t2, st, &m));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += st[i] != t2;
	EXPECT_EQ(0, bad) TH_LOG("first status %d", st[0]);
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "thp split_ok", &m, st,
					   n, 1, self->allowed));
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != t2;
	EXPECT_EQ(0, bad) TH_LOG("page 0 on %d", now[0]);
	EXPECT_EQ(0, np_fill_bad(p, n, 1, &first)) TH_LOG("page %zu", first);
	free(addrs);
	free(st);
	free(now);
}

/*
 * Where the page-table engine moves PMD-mapped THPs (INFO
 * FEAT_MIGRATE_PT_THP: 6.12 and 7.3, not where IBT seals its internals),
 * the pt variant (ENGINE_PT; by default the kernel engine moves THPs)
 * moves four THPs to node 1 and back with it alone
 * (`engines` is exactly ENGINE_PT): each stays one PMD-mapped THP, none is
 * split (thp_split_pmd, thp_split_page), thp_migration_success counts
 * each, the data is intact and nr_isolated_anon is back to its baseline.
 * On 6302746 (no PMD path) the engines were ENGINE_KERNEL's.
 */
#define NP_THP_PT_NR	4	/* THPs, more than one per page-table range */

NP_TEST_F(migrate_thp, thp_pt_whole)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_THP_PT_NR * NP_SEG_PAGES;
	char *p = np_pmd_map(n * psz, 1);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	__s32 *st = calloc(n + 1, sizeof(*st));
	int *now = calloc(n, sizeof(*now));
	long iso0, isof0, iso, isof;
	struct numaplace_migrate m;
	size_t first = 0;
	struct np_pre pre;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(addrs && st && now);
	/* By default the kernel engine moves THPs (measured faster). */
	if (self->eflags != NUMAPLACE_MIGRATE_ENGINE_PT)
		SKIP(return, "this variant gives THPs to the kernel engine");
	if (!(self->info.features & NUMAPLACE_FEAT_MIGRATE_PT_THP))
		SKIP(return, "the page-table engine moves no THP here");
	if (np_thp_on0(p, addrs, n))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");
	ASSERT_EQ(0, np_isolated(&iso0, &isof0));
	for (int r = 0; r < 2; r++) {
		const int to = !r;
		long ok = np_vmstat("thp_migration_success");
		long split_pmd = np_vmstat("thp_split_pmd");
		long split = np_vmstat("thp_split_page");
		int bad = 0, whole = 0;

		ASSERT_LE(0, ok);
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags,
					     (uintptr_t)p, n * psz, to, st, &m));
		EXPECT_EQ(n, m.done);
		EXPECT_EQ(NUMAPLACE_ENGINE_PT, m.engines)
			TH_LOG("round %d: engines %#x", r, m.engines);
		EXPECT_EQ(NP_THP_PT_NR, m.nr_moved_folios);
		EXPECT_EQ(n, m.nr_moved_pages);
		EXPECT_EQ(0, np_check_mig_counters(&self->c, "thp pt", &m, st,
						   n, 1, self->allowed));
		ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
		for (size_t i = 0; i < n; i++)
			bad += st[i] != to || now[i] != to;
		EXPECT_EQ(0, bad) TH_LOG("round %d: page 0: status %d, on %d",
					 r, st[0], now[0]);
		for (size_t k = 0; k < NP_THP_PT_NR; k++) {
			ASSERT_EQ(0, np_pre_read(0, addrs + k * NP_SEG_PAGES, 1,
						 &pre));
			whole += !!(pre.pg.what & NPW_PMD);
		}
		EXPECT_EQ(NP_THP_PT_NR, whole) TH_LOG("round %d", r);
		EXPECT_EQ(ok + NP_THP_PT_NR, np_vmstat("thp_migration_success"));
		EXPECT_EQ(split_pmd, np_vmstat("thp_split_pmd"));
		EXPECT_EQ(split, np_vmstat("thp_split_page"));
		EXPECT_EQ(0, np_fill_bad(p, n, 1, &first))
			TH_LOG("round %d: page %zu", r, first);
	}
	EXPECT_EQ(0, np_isolated_settle(iso0, isof0, 2000, &iso, &isof))
		TH_LOG("nr_isolated_anon %ld, baseline %ld", iso, iso0);
	free(addrs);
	free(st);
	free(now);
}

/*
 * A PTE-mapped THP (a PMD split by mprotect(), the folio still large) with
 * SPLIT_OK: migrate_vma_*() skips such a folio, so only an engine that
 * moves it whole may take it: the kernel engine moves it (still large),
 * without one it stays with -EBUSY. Data intact either way. (Fails on a
 * module that gives SPLIT_OK's large folios to the VMA engines without
 * asking how they are mapped: every page -EBUSY.)
 */
NP_TEST_F(migrate_thp, thp_pte_mapped_split_ok)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_SEG_PAGES;
	char *p = np_pmd_map(NP_PMD, 1);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	__s32 *st = calloc(n + 1, sizeof(*st));
	int *now = calloc(n, sizeof(*now));
	int want = self->allowed & NUMAPLACE_ENGINE_KERNEL ? 1 : -EBUSY;
	struct numaplace_migrate m;
	struct np_pre pre;
	size_t first = 0;
	int bad = 0;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(addrs && st && now);
	if (np_thp_on0(p, addrs, n))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");
	/*
	 * Split the PMD, keep the folio: PTE-mapped, still large. The page
	 * stays read-only, so the VMA stays split and the model (which cannot
	 * see how a page is mapped) knows the PMD is gone.
	 */
	ASSERT_EQ(0, mprotect(p + psz, psz, PROT_READ));
	ASSERT_EQ(0, np_pre_read(0, addrs, 1, &pre));
	ASSERT_EQ(NPW_THP, pre.pg.what & (NPW_THP | NPW_PMD));

	ASSERT_EQ(0, np_migrate_node(self->fd, 0,
				     self->eflags | NUMAPLACE_MIGRATE_SPLIT_OK,
				     (uintptr_t)p, n * psz, 1, st, &m));
	EXPECT_EQ(n, m.done);
	for (size_t i = 0; i < n; i++)
		bad += st[i] != want;
	EXPECT_EQ(0, bad) TH_LOG("first status %d, want %d", st[0], want);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "pte-mapped thp", &m, st,
					   n, 1, self->allowed));
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != (want == 1 ? 1 : 0);
	EXPECT_EQ(0, bad) TH_LOG("page 0 on %d", now[0]);
	if (want == 1) {
		/* Moved whole: one folio, still large. */
		EXPECT_EQ(1, m.nr_moved_folios);
		ASSERT_EQ(0, np_pre_read(0, addrs, 1, &pre));
		EXPECT_TRUE(pre.pg.what & NPW_THP) TH_LOG("the folio was split");
	}
	EXPECT_EQ(0, np_fill_bad(p, n, 1, &first)) TH_LOG("page %zu", first);
	free(addrs);
	free(st);
	free(now);
}

/*
 * AS_SYSCALL with per-page targets that change inside a THP: move_pages(2)
 * migrates its batch at each change of target (do_pages_move()), so the
 * folio moves at each change and ends on the last one's node, and each
 * entry's status is its batch's node: [1, 0, 1, 0] with both THPs on node
 * 0, so entries 0 and 2 say node 1 of pages on node 0. numaplace moves
 * each THP once, for the first entry that takes it, and answers the entry
 * of another target -EBUSY (Documentation/abi.md): [1, -EBUSY, 1, -EBUSY],
 * both THPs on node 1, every status true. On 3ecca51 it answered as the
 * syscall does, false statuses included.
 */
NP_TEST_F(migrate_thp, thp_targets_as_syscall)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 2 * NP_SEG_PAGES;
	/* Two entries in each THP, the second to another node. */
	const size_t at[] = { 0, 1, NP_SEG_PAGES, NP_SEG_PAGES + 9 };
	const int to[] = { 1, 0, 1, 0 };
	const int want[] = { 1, -EBUSY, 1, -EBUSY };
	const size_t k = sizeof(at) / sizeof(at[0]);
	char *a = np_pmd_map(n * psz, 1), *b = np_pmd_map(n * psz, 1);
	__u64 *aa = calloc(n, sizeof(*aa)), *ba = calloc(n, sizeof(*ba));
	__u64 pa[4], pb[4];
	int sys[4], nodes[4], now_a[4], now_b[4];
	__s32 st[4];
	struct numaplace_migrate m;

	ASSERT_TRUE(a && b && aa && ba);
	if (!(self->allowed & NUMAPLACE_ENGINE_KERNEL))
		SKIP(return, "no engine here moves a THP whole");
	if (np_thp_on0(a, aa, n) || np_thp_on0(b, ba, n))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");
	for (size_t i = 0; i < k; i++) {
		pa[i] = aa[at[i]];
		pb[i] = ba[at[i]];
		nodes[i] = to[i];
		sys[i] = st[i] = NP_SENTINEL;
	}
	ASSERT_EQ(0, np_sys_move_pages(0, k, pa, nodes, sys, NP_MF_MOVE));
	np_migrate_init(&m, 0, self->eflags | NUMAPLACE_MIGRATE_PAGES |
			NUMAPLACE_MIGRATE_AS_SYSCALL, NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)pb;
	m.count = k;
	m.nodes_ptr = (uintptr_t)nodes;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(k, m.done);
	EXPECT_EQ(2, m.nr_moved_folios);
	ASSERT_EQ(0, np_nodes_of(0, pa, k, now_a));
	ASSERT_EQ(0, np_nodes_of(0, pb, k, now_b));
	for (size_t i = 0; i < k; i++) {
		TH_LOG("entry %zu to %d: syscall %d (page on %d), numaplace %d (page on %d)",
		       i, to[i], sys[i], now_a[i], st[i], now_b[i]);
		EXPECT_EQ(want[i], st[i]) TH_LOG("entry %zu", i);
		EXPECT_EQ(1, now_b[i]) TH_LOG("entry %zu's page", i);
	}
	EXPECT_EQ(0, np_fill_bad(b, n, 1, (size_t[]){ 0 }));
	free(aa);
	free(ba);
}

/*
 * A page shared with another process (after fork, not written since) in
 * the middle of a range of private pages: the call answers it -EACCES
 * and must not touch it, in either process. migrate_vma_setup() unmaps
 * every page it can lock in its range, in every mm that maps it; a range
 * that covered the shared page put migration entries into the other
 * process meanwhile. The other process (the child) samples its own
 * pagemap entry of that page while the test migrates the range back and
 * forth: it must always be present. On 41261ae the VMA engine's ranges
 * spanned it: the child saw it unmapped.
 */
#define NP_COW_PAGES	64
#define NP_COW_SHARED	32	/* the page the child shares */
#define NP_COW_ROUNDS	100

struct np_cow {
	volatile int started, stop;
	long samples, unmapped;
};

static void np_cow_child(const char *p, struct np_cow *x)
{
	uintptr_t va = (uintptr_t)(p + NP_COW_SHARED * psz);
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	__u64 e;

	if (pm < 0)
		_exit(2);
	x->started = 1;
	while (!x->stop) {
		if (pread(pm, &e, 8, va / psz * 8) != 8)
			_exit(3);
		x->samples++;
		x->unmapped += !(e & NP_PM_PRESENT);
	}
	_exit(0);
}

TEST_F_TIMEOUT(migrate_thp, cow_shared_untouched, NP_TIMEOUT(120))
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_COW_PAGES;
	char *p = np_pmd_map(n * psz, 0);
	struct np_cow *x = mmap(NULL, sizeof(*x), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	__s32 st[NP_COW_PAGES];
	struct numaplace_migrate m;
	int status, bad = 0;
	pid_t pid;

	ASSERT_NE(NULL, p);
	ASSERT_NE(MAP_FAILED, x);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 1);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		np_cow_child(p, x);
	/* Every page the test's own (copy on write) but the shared one. */
	for (size_t i = 0; i < n; i++)
		if (i != NP_COW_SHARED)
			((volatile char *)p)[i * psz] = p[i * psz];
	np_mempolicy(MPOL_DEFAULT, -1);
	while (!x->started)
		usleep(1000);
	for (int r = 0; r < NP_COW_ROUNDS; r++) {
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags,
					     (uintptr_t)p, n * psz, (r + 1) % 2,
					     st, &m));
		/* Where it already is, the answer is its node. */
		bad += st[NP_COW_SHARED] != ((r + 1) % 2 ? -EACCES : 0);
	}
	x->stop = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	TH_LOG("the child sampled its page %ld times, %ld unmapped",
	       x->samples, x->unmapped);
	EXPECT_EQ(0, bad) TH_LOG("the shared page's answers");
	EXPECT_LT(NP_COW_ROUNDS, x->samples);
	EXPECT_EQ(0, x->unmapped);
	munmap(x, sizeof(*x));
}


NP_HARNESS_MAIN
