// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE as gentle as migrate_pages(2) with the process it
 * migrates and with the rest of the machine, once per engine (fixture
 * "gentle", NP_MIG_FIXTURE()). Each test watches the call while it runs
 * (a second thread, a recording secondary MMU):
 *  - full_node_tail_mapped: node 1 full (its memory held as hugetlb pages),
 *    a move of more than fits. Once the node has run out, the pages after
 *    are not unmapped for nothing: a QUERY loop over the last 32 MiB never
 *    sees a migration entry (NUMAPLACE_KIND_MIGRATION) there. On c2b9b93
 *    the page-table and batched engines unmapped, flushed and mapped back
 *    every later 8 MiB window of the round.
 *  - in_place_unlocked: a page already on the target, between two pages to
 *    move, is not kept locked while a later window moves: sampled from
 *    /proc/kpageflags (KPF_LOCKED) whenever the last page of the range is
 *    behind a migration entry (pagemap's swap bit). On c2b9b93 collect
 *    held it locked to the end of the round, across every window's
 *    allocation and copy.
 *  - notifier_in_place_untouched: a secondary MMU (selftests/kmod's
 *    np_mn_rec.ko, which records every invalidate_range_start() of the
 *    mm) is told only of the pages that may move: no range covers a page
 *    already on the target (one in four). On c2b9b93 the page-table
 *    engine invalidated its whole 8 MiB window, those pages too. Not for
 *    the engines on migrate_vma_setup(), which invalidates its range.
 *  - full_node_enomem_untouched: node 1 full, the moved pages unswappable
 *    (a memcg without swap): no invalidation covers a page answered
 *    -ENOMEM, as migrate_pages() allocates before it unmaps. On ce9a48b
 *    the page-table engine unmapped the window where the node ran out
 *    before it allocated, and mapped its pages back.
 * They need root (pfns, kpageflags, hugetlb pools, a module) and two
 * nodes.
 */
#include <linux/kernel-page-flags.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "migrate_lib.h"
#include "kselftest_harness.h"

static long psz;

/* The tail of the full-node move the QUERY loop watches: 32 MiB. */
#define NP_GENTLE_TAIL_PAGES	8192UL
/* Beyond what node 1 can hold: four 8 MiB windows and the tail. */
#define NP_GENTLE_OVER_KB	(64UL << 10)
/* Moves there and back of in_place_unlocked, each sampled throughout. */
#define NP_GENTLE_ROUNDS	3
/*
 * Huge pages full_node_enomem_untouched gives back after the fill, 96 MiB:
 * room for some pages to move before the node runs out. The fill leaves
 * node 1 below its min watermark (a 1 GiB node of the guest: 34 MiB of
 * min_free_kbytes' 66 MiB), which a move does not allocate from, so that
 * with less nothing moved and the recorder had nothing to see.
 */
#define NP_GENTLE_ROOM_HP	48
/* Pages of in_place_unlocked's range: four 8 MiB windows. */
#define NP_GENTLE_PAGES		8192UL

NP_MIG_FIXTURE(gentle)

/* ---- full_node_tail_mapped -------------------------------------------- */

struct np_tail {
	int fd;
	__u64 start, len;
	atomic_int stop;
	long samples;		/* QUERYs that answered */
	long migrating;		/* pages seen behind a migration entry */
	long errors;		/* QUERYs that failed */
	struct numaplace_run runs[NP_GENTLE_TAIL_PAGES];
};

static void *np_tail_watch(void *arg)
{
	struct np_tail *t = arg;
	struct numaplace_query q;

	while (!atomic_load(&t->stop)) {
		if (np_query_range(t->fd, 0, 0, t->start, t->len, t->runs,
				   NP_GENTLE_TAIL_PAGES, NULL, NULL, 0, &q)) {
			t->errors++;
			continue;
		}
		t->samples++;
		for (__u32 r = 0; r < q.nr_runs; r++)
			if (t->runs[r].kind & NUMAPLACE_KIND_MIGRATION)
				t->migrating += t->runs[r].nr_pages;
	}
	return NULL;
}

TEST_F_TIMEOUT(gentle, full_node_tail_mapped, NP_TIMEOUT(60))
{
	NP_SKIPPED_OR_FILTERED();
	long got, total_kb, nomem = 0;
	struct numaplace_migrate m;
	struct np_tail *t;
	pthread_t th;
	size_t n, first = 0;
	__s32 *st;
	char *p;

	NP_HP_FILL_NODE(got, 1, self->hp_orig);
	total_kb = np_node_kb(1, "MemTotal:");
	ASSERT_GT(total_kb, 0);
	/* All of node 1 that is not huge pages, and more (migrate_bounds). */
	n = (total_kb - got * NP_HP_KB + NP_GENTLE_OVER_KB) * 1024 / psz;
	p = np_full_src(n, 5);
	ASSERT_NE(NULL, p) TH_LOG("%zu pages: %s", n, strerror(errno));
	st = calloc(n, sizeof(*st));
	t = calloc(1, sizeof(*t));
	ASSERT_TRUE(st != NULL && t != NULL);

	t->fd = self->fd;
	t->start = (uintptr_t)p + (n - NP_GENTLE_TAIL_PAGES) * psz;
	t->len = NP_GENTLE_TAIL_PAGES * psz;
	ASSERT_EQ(0, pthread_create(&th, NULL, np_tail_watch, t));
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
				     n * psz, 1, st, &m));
	atomic_store(&t->stop, 1);
	pthread_join(th, NULL);
	for (size_t i = 0; i < n; i++)
		nomem += st[i] == -ENOMEM;
	TH_LOG("%zu pages, %ld -ENOMEM; %ld QUERYs of the last %lu pages, %ld pages seen under migration",
	       n, nomem, t->samples, NP_GENTLE_TAIL_PAGES, t->migrating);
	/* The tail did not fit: every page of it is answered -ENOMEM. */
	for (size_t i = n - NP_GENTLE_TAIL_PAGES; i < n; i++)
		if (st[i] != -ENOMEM) {
			TH_LOG("page %zu: status %d", i, st[i]);
			ASSERT_EQ(-ENOMEM, st[i]);
		}
	EXPECT_EQ(0, t->errors);
	EXPECT_GT(t->samples, 0);
	EXPECT_EQ(0, t->migrating);
	EXPECT_EQ(0, np_full_src_free(p, n, 5, &first))
		TH_LOG("page %zu", first);
	np_hp_restore(self->hp_orig);
	free(st);
	free(t);
}

/* ---- in_place_unlocked ------------------------------------------------ */

struct np_held {
	int pagemap, kpf;
	uintptr_t last;		/* the range's last page */
	_Atomic __u64 pfn;	/* the in-place page's frame, 0: none now */
	atomic_int stop;
	long unmapped;		/* samples with the last page unmapped */
	long locked;		/* of those, with the in-place page locked */
};

static int np_pread64(int fd, __u64 *v, __u64 idx)
{
	return pread(fd, v, sizeof(*v), idx * sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

static void *np_held_watch(void *arg)
{
	struct np_held *h = arg;
	__u64 pm, flags, pfn;

	while (!atomic_load(&h->stop)) {
		pfn = atomic_load(&h->pfn);
		if (!pfn || np_pread64(h->pagemap, &pm, h->last / psz) ||
		    !(pm & NP_PM_SWAP))
			continue;
		if (np_pread64(h->kpf, &flags, pfn))
			continue;
		h->unmapped++;
		if (flags & (1ULL << KPF_LOCKED))
			h->locked++;
	}
	return NULL;
}

/* The frame of the caller's page @p, or 0. */
static __u64 np_pfn_of(int pagemap, const void *p)
{
	__u64 pm;

	if (np_pread64(pagemap, &pm, (uintptr_t)p / psz) ||
	    !(pm & NP_PM_PRESENT))
		return 0;
	return pm & NP_PM_PFN_MASK;
}

TEST_F_TIMEOUT(gentle, in_place_unlocked, NP_TIMEOUT(300))
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_GENTLE_PAGES;
	struct numaplace_migrate m;
	struct np_held h = { 0 };
	int node = 1, back = 0, st1;
	size_t first = 0;
	__u64 addr;
	pthread_t th;
	char *p;

	h.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	h.kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (h.kpf < 0)
		SKIP(return, "no /proc/kpageflags: %s", strerror(errno));
	ASSERT_LE(0, h.pagemap);
	p = np_pmd_map(n * psz, 0);
	ASSERT_TRUE(p != NULL);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 6);
	np_mempolicy(MPOL_DEFAULT, -1);
	h.last = (uintptr_t)p + (n - 1) * psz;
	addr = (uintptr_t)(p + psz);
	ASSERT_EQ(0, pthread_create(&th, NULL, np_held_watch, &h));
	for (int r = 0; r < NP_GENTLE_ROUNDS; r++) {
		/* Page 1 on the target already, pages 0 and 2.. to move. */
		ASSERT_EQ(0, np_sys_move_pages(0, 1, &addr, &node, &st1, 0));
		ASSERT_EQ(node, st1);
		atomic_store(&h.pfn, np_pfn_of(h.pagemap, p + psz));
		ASSERT_NE(0, atomic_load(&h.pfn));
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags,
					     (uintptr_t)p, n * psz, node, NULL,
					     &m));
		atomic_store(&h.pfn, 0);
		EXPECT_EQ(n, m.done);
		EXPECT_LE(1, m.nr_in_place_pages);
		/* Back for the next round, page 1 too. */
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags,
					     (uintptr_t)p, n * psz, back, NULL,
					     &m));
	}
	atomic_store(&h.stop, 1);
	pthread_join(th, NULL);
	TH_LOG("last page seen unmapped %ld times, the in-place page locked in %ld of them",
	       h.unmapped, h.locked);
	if (!h.unmapped)
		SKIP(goto out, "the last window was never seen unmapped");
	EXPECT_EQ(0, h.locked);
	EXPECT_EQ(0, np_fill_bad(p, n, 6, &first)) TH_LOG("page %zu", first);
out:
	munmap(p, n * psz);
	close(h.kpf);
	close(h.pagemap);
}

/* ---- notifier_in_place_untouched ------------------------------------- */

/* As many records as the module keeps between two reads (np_mn_rec.c). */
#define NP_MR_MAX	131072
/* Pages of the move: four 8 MiB windows. */
#define NP_GENTLE_MN_PAGES	8192UL
/* One page in this many is on the target already. */
#define NP_GENTLE_MN_STRIDE	4

struct np_mr_read {
	struct np_mr_head h;
	struct np_mr_range r[NP_MR_MAX];
};

/* A status np_mr_covered() looks for: a page no range may cover. */
#define NP_MR_WATCHED	INT32_MIN

/*
 * The recorded ranges of @rd that meet the @n pages from @base; the pages
 * they cover whose status in @st is NP_MR_WATCHED count in *@covered (the
 * first is logged). Return: the number of ranges that meet them.
 */
static long np_mr_covered(const struct np_mr_read *rd, uintptr_t base,
			  size_t n, const __s32 *st, size_t *covered)
{
	uintptr_t lo, hi, end = base + n * psz;
	long in_range = 0;
	size_t i;

	for (__u32 k = 0; k < rd->h.nr; k++) {
		/* Aging's question (7.x reclaim asks it): no invalidation. */
		if (rd->r[k].event == NP_MR_CLEAR_YOUNG)
			continue;
		lo = rd->r[k].start > base ? rd->r[k].start : base;
		hi = rd->r[k].end < end ? rd->r[k].end : end;
		if (lo >= hi)
			continue;
		in_range++;
		for (i = (lo - base) / psz; i < (hi - base + psz - 1) / psz; i++) {
			if (st[i] != NP_MR_WATCHED)
				continue;
			if (!(*covered)++)
				printf("# range [%#llx, %#llx) event %u covers page %zu\n",
				       (unsigned long long)rd->r[k].start,
				       (unsigned long long)rd->r[k].end,
				       rd->r[k].event, i);
		}
	}
	return in_range;
}

/* Page @i is on the target before the move. */
static bool np_mn_in_place(size_t i)
{
	return i % NP_GENTLE_MN_STRIDE == 1;
}

TEST_F_TIMEOUT(gentle, notifier_in_place_untouched, NP_TIMEOUT(120))
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_GENTLE_MN_PAGES;
	size_t i, k, nr_in_place = 0, covered = 0, first = 0;
	uintptr_t base;
	struct numaplace_migrate m;
	struct np_mr_read *rd;
	int ret, fd, *nodes, *st1;
	long in_range = 0;
	__u64 *addrs;
	ssize_t got;
	__s32 *st;
	char *p;

	/*
	 * migrate_vma_setup() invalidates its whole range, the pages it
	 * passes over too: the kernel's own API, as every migrate_vma user
	 * (nouveau, amdgpu) has it. The page-table and kernel engines send
	 * what try_to_migrate() sends, per folio mapping.
	 */
	if (self->eflags == NUMAPLACE_MIGRATE_ENGINE_VMA ||
	    self->eflags == NUMAPLACE_MIGRATE_ENGINE_BATCH)
		SKIP(return, "migrate_vma_setup() invalidates its whole range");
	if (!self->eflags && !(self->info.features & NUMAPLACE_FEAT_MIGRATE_PT))
		SKIP(return, "the default engine is not the page-table engine");
	ret = np_mr_load();
	if (ret == -ENOENT)
		SKIP(return, "no np_mn_rec.ko in " NP_KO_WHERE);
	ASSERT_EQ(0, ret) TH_LOG("insmod np_mn_rec: %s", strerror(-ret));
	p = np_pmd_map(n * psz, 0);
	st = calloc(n, sizeof(*st));
	addrs = calloc(n, sizeof(*addrs));
	nodes = calloc(n, sizeof(*nodes));
	st1 = calloc(n, sizeof(*st1));
	rd = calloc(1, sizeof(*rd));
	ASSERT_TRUE(p != NULL && st != NULL && addrs != NULL &&
		    nodes != NULL && st1 != NULL && rd != NULL);
	base = (uintptr_t)p;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 7);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Every NP_GENTLE_MN_STRIDE-th page on node 1 already. */
	for (i = 0; i < n; i++)
		if (np_mn_in_place(i)) {
			addrs[nr_in_place] = base + i * psz;
			nodes[nr_in_place++] = 1;
		}
	ASSERT_EQ(0, np_sys_move_pages(0, nr_in_place, addrs, nodes, st1, 0));
	for (k = 0; k < nr_in_place; k++)
		ASSERT_EQ(1, st1[k]);

	/* A secondary MMU on this mm from here on. */
	fd = open(NP_MR_DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s: %s", NP_MR_DEV, strerror(errno));
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags, base,
				     n * psz, 1, st, &m));
	got = read(fd, rd, sizeof(*rd));
	ASSERT_LE((ssize_t)sizeof(rd->h), got);
	EXPECT_EQ(0, rd->h.lost);
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(nr_in_place, m.nr_in_place_pages);
	for (i = 0; i < n; i++)
		if (st[i] != 1) {
			TH_LOG("page %zu: status %d", i, st[i]);
			ASSERT_EQ(1, st[i]);
		}
	for (i = 0; i < n; i++)
		if (np_mn_in_place(i))
			st[i] = NP_MR_WATCHED;
	in_range = np_mr_covered(rd, base, n, st, &covered);
	TH_LOG("%u invalidations, %ld in the range; in-place pages covered: %zu",
	       rd->h.nr, in_range, covered);
	/* The pages that moved were invalidated: the recorder saw the call. */
	EXPECT_LT(0, in_range);
	EXPECT_EQ(0, covered);
	EXPECT_EQ(0, np_fill_bad(p, n, 7, &first)) TH_LOG("page %zu", first);
	close(fd);
	munmap(p, n * psz);
	free(rd);
	free(st1);
	free(nodes);
	free(addrs);
	free(st);
	EXPECT_EQ(0, np_mr_unload()) TH_LOG("rmmod np_mn_rec: %s", strerror(errno));
}

/* ---- full_node_enomem_untouched ------------------------------------ */

/* What the child of full_node_enomem_untouched saw. */
struct np_nomem_out {
	size_t n, nomem, moved, covered, bad;
	long in_range, free_kb;	/* node 1's MemFree before the move */
	__u32 nr, lost;
};

struct np_nomem_args {
	int fd;
	__u32 eflags;
	size_t n;
	struct np_nomem_out *out;
};

/*
 * In memcg @cg with no swap (node 1's reclaim cannot make room by
 * swapping the moved pages out), a recording secondary MMU on the mm:
 * move more 4 KiB pages to node 1 than it holds. Exit 0 or the step that
 * failed.
 */
static int np_nomem_child(const char *cg, void *arg)
{
	struct np_nomem_args *a = arg;
	struct np_nomem_out *o = a->out;
	struct numaplace_migrate m;
	struct np_mr_read *rd;
	size_t i, first;
	uintptr_t base;
	__s32 *st;
	char *p;
	int fd;

	if (np_memcg_enter(cg) || np_memcg_set(cg, "memory.swap.max", "0"))
		return 20;
	p = np_pmd_map(a->n * psz, 0);
	st = calloc(a->n, sizeof(*st));
	rd = calloc(1, sizeof(*rd));
	if (!p || !st || !rd)
		return 21;
	base = (uintptr_t)p;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, a->n, 9);
	np_mempolicy(MPOL_DEFAULT, -1);
	fd = open(NP_MR_DEV, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 22;
	o->free_kb = np_node_kb(1, "MemFree:");
	if (np_migrate_node(a->fd, 0, a->eflags, base, a->n * psz, 1, st, &m))
		return 23;
	if (read(fd, rd, sizeof(*rd)) < (ssize_t)sizeof(rd->h))
		return 24;
	o->n = a->n;
	o->nr = rd->h.nr;
	o->lost = rd->h.lost;
	for (i = 0; i < a->n; i++) {
		o->moved += st[i] == 1;
		if (st[i] == -ENOMEM) {
			o->nomem++;
			st[i] = NP_MR_WATCHED;
		}
	}
	o->in_range = np_mr_covered(rd, base, a->n, st, &o->covered);
	o->bad = np_fill_bad(p, a->n, 9, &first);
	close(fd);
	return 0;
}

/*
 * Node 1 full, 4 KiB pages, no swap for them: no invalidation a secondary
 * MMU is sent covers a page answered -ENOMEM. migrate_pages() allocates a
 * folio's destination before it unmaps it, so a page of a node that ran
 * out was never unmapped; on ce9a48b the page-table engine allocated after
 * it unmapped a window, and the window where the node ran out was
 * invalidated, unmapped and mapped back. Not for the engines on
 * migrate_vma_setup(): the device-migration API unmaps, then the caller
 * allocates.
 */
TEST_F_TIMEOUT(gentle, full_node_enomem_untouched, NP_TIMEOUT(120))
{
	NP_SKIPPED_OR_FILTERED();
	struct np_nomem_out *out;
	struct np_nomem_args a;
	long got, total_kb;
	int ret, status;
	char cg[128];

	if (self->eflags == NUMAPLACE_MIGRATE_ENGINE_VMA ||
	    self->eflags == NUMAPLACE_MIGRATE_ENGINE_BATCH)
		SKIP(return, "migrate_vma_setup() unmaps before the caller allocates");
	NP_HP_FILL_NODE(got, 1, self->hp_orig);
	ASSERT_LT(NP_GENTLE_ROOM_HP, got);
	np_hp_write(1, got - NP_GENTLE_ROOM_HP);
	got -= NP_GENTLE_ROOM_HP;
	ret = np_mr_load();
	if (ret == -ENOENT)
		SKIP(return, "no np_mn_rec.ko in " NP_KO_WHERE);
	ASSERT_EQ(0, ret) TH_LOG("insmod np_mn_rec: %s", strerror(-ret));
	total_kb = np_node_kb(1, "MemTotal:");
	ASSERT_GT(total_kb, 0);
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, out);
	a = (struct np_nomem_args) {
		.fd = self->fd, .eflags = self->eflags, .out = out,
		/* All of node 1 that is not huge pages, and more. */
		.n = (total_kb - got * NP_HP_KB + NP_GENTLE_OVER_KB) * 1024 / psz,
	};
	status = np_memcg_fork("np-gentle", cg, sizeof(cg), np_nomem_child, &a);
	if (status == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_LE(0, status);
	TH_LOG("node 1: %ld kB free; %zu pages: %zu moved, %zu -ENOMEM; %u invalidations (%u lost), %ld in the range; -ENOMEM pages covered: %zu",
	       out->free_kb, out->n, out->moved, out->nomem, out->nr, out->lost,
	       out->in_range, out->covered);
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, out->lost);
	/* The node ran out, and what fitted moved. */
	EXPECT_LT(0, out->nomem);
	EXPECT_LT(0, out->moved);
	EXPECT_LT(0, out->in_range);
	EXPECT_EQ(0, out->covered);
	EXPECT_EQ(0, out->bad);
	EXPECT_EQ(0, np_memcg_remove(cg));
	EXPECT_EQ(0, np_mr_unload()) TH_LOG("rmmod np_mn_rec: %s", strerror(errno));
	np_hp_restore(self->hp_orig);
	munmap(out, sizeof(*out));
}

NP_HARNESS_MAIN
