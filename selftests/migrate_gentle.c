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

TEST_F_TIMEOUT(gentle, full_node_tail_mapped, 60)
{
	NP_SKIPPED_OR_FILTERED();
	long got, total_kb, nomem = 0;
	struct numaplace_migrate m;
	struct np_tail *t;
	char path[128], val[32];
	pthread_t th;
	size_t n, first = 0;
	__s32 *st;
	char *p;

	snprintf(path, sizeof(path), NP_HP_PATH, 1);
	self->hp_orig[1] = np_read_long(path);
	if (self->hp_orig[1] < 0)
		SKIP(return, "no %s", path);
	np_hp_save(self->hp_orig);
	/* As many huge pages as node 1 gives, then 4 MiB back. */
	ASSERT_EQ(0, np_write_str(path, "1000000"));
	got = np_read_long(path);
	ASSERT_GT(got, self->hp_orig[1] + 2);
	snprintf(val, sizeof(val), "%ld", got - 2);
	ASSERT_EQ(0, np_write_str(path, val));
	total_kb = np_node_kb(1, "MemTotal:");
	ASSERT_GT(total_kb, 0);
	/* All of node 1 that is not huge pages, and more (migrate_bounds). */
	n = (total_kb - (got - 2) * NP_HP_KB + NP_GENTLE_OVER_KB) * 1024 / psz;
	p = np_pmd_map(n * psz, 0);
	st = calloc(n, sizeof(*st));
	t = calloc(1, sizeof(*t));
	ASSERT_TRUE(p != NULL && st != NULL && t != NULL);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 5);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Unevictable: node 1's reclaim cannot make room by swapping. */
	ASSERT_EQ(0, mlock(p, n * psz));

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
	EXPECT_EQ(0, np_fill_bad(p, n, 5, &first)) TH_LOG("page %zu", first);
	munlock(p, n * psz);
	munmap(p, n * psz);
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

TEST_F_TIMEOUT(gentle, in_place_unlocked, 300)
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

#define NP_MR_KO	"/usr/lib/numaplace/np_mn_rec.ko"
#define NP_MR_DEV	"/dev/np_mn_rec"
/* As many records as the module keeps between two reads (np_mn_rec.c). */
#define NP_MR_MAX	16384
/* Pages of the move: four 8 MiB windows. */
#define NP_GENTLE_MN_PAGES	8192UL
/* One page in this many is on the target already. */
#define NP_GENTLE_MN_STRIDE	4

/* np_mn_rec's read() layout. */
struct np_mr_head {
	__u32 nr, lost;
};

struct np_mr_range {
	__u64 start, end;
	__u32 event, blockable;
};

struct np_mr_read {
	struct np_mr_head h;
	struct np_mr_range r[NP_MR_MAX];
};

/* Page @i is on the target before the move. */
static bool np_mn_in_place(size_t i)
{
	return i % NP_GENTLE_MN_STRIDE == 1;
}

TEST_F_TIMEOUT(gentle, notifier_in_place_untouched, 120)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_GENTLE_MN_PAGES;
	size_t i, k, nr_in_place = 0, covered = 0, first = 0;
	uintptr_t base, lo, hi;
	struct numaplace_migrate m;
	struct np_mr_read *rd;
	int modfd, fd, *nodes, *st1;
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
	modfd = open(NP_MR_KO, O_RDONLY | O_CLOEXEC);
	if (modfd < 0)
		SKIP(return, "no %s", NP_MR_KO);
	if (syscall(SYS_finit_module, modfd, "", 0) && errno != EEXIST) {
		TH_LOG("insmod np_mn_rec: %s", strerror(errno));
		close(modfd);
		ASSERT_TRUE(0);
	}
	close(modfd);
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
	for (k = 0; k < rd->h.nr; k++) {
		lo = rd->r[k].start > base ? rd->r[k].start : base;
		hi = rd->r[k].end < base + n * psz ? rd->r[k].end : base + n * psz;
		if (lo >= hi)
			continue;
		in_range++;
		for (i = (lo - base) / psz; i < (hi - base + psz - 1) / psz; i++) {
			if (!np_mn_in_place(i))
				continue;
			if (!covered++)
				TH_LOG("range [%#llx, %#llx) event %u covers page %zu, in place",
				       (unsigned long long)rd->r[k].start,
				       (unsigned long long)rd->r[k].end,
				       rd->r[k].event, i);
		}
	}
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
	EXPECT_EQ(0, syscall(SYS_delete_module, "np_mn_rec", O_NONBLOCK))
		TH_LOG("rmmod np_mn_rec: %s", strerror(errno));
}

TEST_HARNESS_MAIN
