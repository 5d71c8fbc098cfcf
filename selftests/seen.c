// SPDX-License-Identifier: GPL-2.0
/*
 * Every status true (issue 35; module/seen.c). A status is "the node the
 * page is on when the call returns, or a negative errno". With PER_PAGE
 * targets that differ inside one large folio, a call meets the folio
 * again and again: a THP that straddles two rounds (AS_SYSCALL ends a
 * round at every change of target), a THP with a hole in it, the pages of
 * an mTHP. Moving it again then would leave the pages answered before on
 * another node than their status says. A caller that trusts the status
 * loses track of its memory.
 *
 * The layout: NP_SEEN_SLOTS slots of 2 MiB, each of one kind at random
 * (a THP written whole; a THP with a hole unmapped in it, PTE-mapped; a
 * VMA without a whole PMD, so 64 KiB mTHP where the kernel has them and
 * 4 KiB pages where not; 4 KiB pages written, read (the zero page),
 * untouched or unmapped), all on node 0. Every page gets a target at
 * random, node 0 or 1, and the call moves them all: through
 * numaplace_move_pages() (AS_SYSCALL), or MIGRATE natively with an address
 * array or a range; the array in ascending or descending order, or every
 * page twice (up, then down, each entry its own target). Then each
 * page's node is asked of the kernel (move_pages(2) with no nodes), and a
 * status that names a node must name that one. The seed is printed;
 * NP_SEEN_SEED replays it.
 */
#include <linux/mempolicy.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#include "numaplace.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

/* 32 MiB: 16 slots, as the layout; several rounds of AS_SYSCALL. */
#define NP_SEEN_SLOTS	16
#define NP_SEEN_MTHP_ENABLED	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"
/* Wrong statuses printed before they are only counted. */
#define NP_SEEN_LOG	8

enum np_seen_kind {
	NP_SEEN_THP,		/* MADV_HUGEPAGE, written whole */
	NP_SEEN_THP_HOLE,	/* a THP written, a run unmapped in it */
	NP_SEEN_MTHP,		/* no whole PMD in its VMA: mTHP, or 4 KiB */
	NP_SEEN_4K,		/* MADV_NOHUGEPAGE, pages of every kind */
	NP_SEEN_NR_KINDS
};

static const char *const np_seen_names[NP_SEEN_NR_KINDS] = {
	"thp", "thp-hole", "mthp", "4k-mixed",
};

/* How the call is made. */
enum np_seen_how {
	NP_SEEN_DROPIN,		/* numaplace_move_pages(): AS_SYSCALL */
	NP_SEEN_ARRAY,		/* MIGRATE, address array, PER_PAGE */
	NP_SEEN_RANGE,		/* MIGRATE, range, PER_PAGE */
};

FIXTURE(seen)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	char *map;		/* the slots and a 2 MiB alignment margin */
	size_t maplen;
	char mthp_was[32];	/* hugepages-64kB/enabled before; "": untouched */
	unsigned long long seed;
};

FIXTURE_VARIANT(seen)
{
	enum np_seen_how how;
	int down;		/* the array names the pages top down */
	int twice;		/* ... then every page again, the other way */
};

FIXTURE_VARIANT_ADD(seen, dropin_up) { .how = NP_SEEN_DROPIN };
FIXTURE_VARIANT_ADD(seen, dropin_down) { .how = NP_SEEN_DROPIN, .down = 1 };
FIXTURE_VARIANT_ADD(seen, dropin_twice) { .how = NP_SEEN_DROPIN, .twice = 1 };
FIXTURE_VARIANT_ADD(seen, array_up) { .how = NP_SEEN_ARRAY };
FIXTURE_VARIANT_ADD(seen, array_down) { .how = NP_SEEN_ARRAY, .down = 1 };
FIXTURE_VARIANT_ADD(seen, array_twice) { .how = NP_SEEN_ARRAY, .twice = 1 };
FIXTURE_VARIANT_ADD(seen, range) { .how = NP_SEEN_RANGE };

FIXTURE_SETUP(seen)
{
	const char *env = getenv("NP_SEEN_SEED");

	self->fd = -1;
	self->map = NULL;
	self->mthp_was[0] = 0;
	if (NP_MIG_SETUP(&self->fd, &self->c, &self->info))
		return;
	/* mTHP where the kernel has it (6.8+): the mthp slots get 64 KiB. */
	if (!access(NP_SEEN_MTHP_ENABLED, F_OK)) {
		ASSERT_EQ(0, np_thp_setting(NP_SEEN_MTHP_ENABLED, self->mthp_was,
					    sizeof(self->mthp_was)));
		ASSERT_EQ(0, np_write_str(NP_SEEN_MTHP_ENABLED, "always"));
	}
	self->seed = env ? strtoull(env, NULL, 0) :
		     (unsigned long long)time(NULL) << 16 ^ getpid();
	fprintf(stderr, "# seed %llu (NP_SEEN_SEED=%llu replays it)\n",
		self->seed, self->seed);
}

FIXTURE_TEARDOWN(seen)
{
	if (self->map)
		munmap(self->map, self->maplen);
	if (self->mthp_was[0])
		np_write_str(NP_SEEN_MTHP_ENABLED, self->mthp_was);
	if (self->fd >= 0)
		close(self->fd);
}

/* splitmix64 */
static unsigned long long np_seen_rnd(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Slot @p of kind @k, faulted in on the task's policy's node. */
static void np_seen_slot(unsigned long long *s, char *p, enum np_seen_kind k,
			 size_t psz)
{
	const size_t per = NP_PMD / psz;
	size_t at, n, i;

	switch (k) {
	case NP_SEEN_THP:
	case NP_SEEN_THP_HOLE:
		madvise(p, NP_PMD, MADV_HUGEPAGE);
		memset(p, 0x3c, NP_PMD);
		if (k == NP_SEEN_THP)
			break;
		at = 1 + np_seen_rnd(s) % (per - 40);
		n = 1 + np_seen_rnd(s) % 32;
		munmap(p + at * psz, n * psz);
		break;
	case NP_SEEN_MTHP:
		/* The slot's last page unmapped: no whole PMD in the VMA. */
		munmap(p + NP_PMD - psz, psz);
		madvise(p, NP_PMD - psz, MADV_HUGEPAGE);
		memset(p, 0x3c, NP_PMD - psz);
		break;
	default:
		madvise(p, NP_PMD, MADV_NOHUGEPAGE);
		for (i = 0; i < per; i++) {
			switch (np_seen_rnd(s) % 4) {
			case 0:
			case 1:
				p[i * psz] = 1;
				break;
			case 2:
				(void)*(volatile char *)(p + i * psz);
				break;
			default:	/* untouched */
				break;
			}
		}
		break;
	}
}

/*
 * The slots, on node 0, in self->map; *@base gets the first. Their kinds
 * go to @kinds.
 */
static int np_seen_build(FIXTURE_DATA(seen) *self, unsigned long long *s,
			 char **base, int *kinds)
{
	size_t psz = self->c.psz;
	char *p;

	self->maplen = (NP_SEEN_SLOTS + 1) * NP_PMD;
	self->map = mmap(NULL, self->maplen, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (self->map == MAP_FAILED) {
		self->map = NULL;
		return -errno;
	}
	p = (char *)(((uintptr_t)self->map + NP_PMD - 1) & ~(NP_PMD - 1));
	if (np_mempolicy(MPOL_BIND, 0))
		return -EINVAL;
	for (int i = 0; i < NP_SEEN_SLOTS; i++) {
		kinds[i] = np_seen_rnd(s) % NP_SEEN_NR_KINDS;
		np_seen_slot(s, p + i * NP_PMD, kinds[i], psz);
	}
	np_mempolicy(MPOL_DEFAULT, -1);
	*base = p;
	return 0;
}

/* The call this variant makes: 0, or -errno. */
static int np_seen_call(FIXTURE_DATA(seen) *self,
			const FIXTURE_VARIANT(seen) *variant, char *base,
			void **pages, int *nodes, int *status, size_t n)
{
	struct numaplace_migrate m;
	long ret;

	switch (variant->how) {
	case NP_SEEN_DROPIN:
		ret = numaplace_move_pages(0, n, pages, nodes, status,
					   MPOL_MF_MOVE);
		return ret < 0 ? -errno : 0;
	case NP_SEEN_ARRAY:
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_PER_PAGE);
		m.pages_ptr = (uintptr_t)pages;
		m.count = n;
		break;
	default:
		np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_PER_PAGE);
		m.start = (uintptr_t)base;
		m.len = n * self->c.psz;
		break;
	}
	m.nodes_ptr = (uintptr_t)nodes;
	m.status_ptr = (uintptr_t)status;
	return np_migrate(self->fd, &m);
}

/*
 * Random per-page targets over a random layout; every status that names a
 * node names the one the page is on after the call.
 */
TEST_F_TIMEOUT(seen, random_targets_status_true, NP_TIMEOUT(180))
{
	size_t psz, per, np, n;
	unsigned long long s = self->seed;
	int kinds[NP_SEEN_SLOTS], *nodes, *status, *place;
	size_t i, k, wrong = 0, moved = 0, busy = 0;
	void **pages;
	char *base = NULL;

	NP_SKIPPED_OR_FILTERED();
	psz = self->c.psz;
	per = NP_PMD / psz;
	np = NP_SEEN_SLOTS * per;
	n = variant->twice ? 2 * np : np;
	pages = calloc(n, sizeof(*pages));
	nodes = calloc(n, sizeof(*nodes));
	status = calloc(n, sizeof(*status));
	place = calloc(n, sizeof(*place));
	ASSERT_TRUE(pages && nodes && status && place);
	ASSERT_EQ(0, np_seen_build(self, &s, &base, kinds));
	for (i = 0; i < n; i++) {
		/* The range variant names the pages in order. */
		k = i < np ? i : 2 * np - 1 - i;
		if (variant->down)
			k = np - 1 - k;
		pages[i] = base + k * psz;
		nodes[i] = np_seen_rnd(&s) & 1;
	}
	ASSERT_EQ(0, np_seen_call(self, variant, base, pages, nodes, status,
				  n));
	/* Where each page is now: the kernel's own answer. */
	ASSERT_EQ(0, np_sys_move_pages(0, n, (const __u64 *)pages, NULL, place, 0));
	for (i = 0; i < n; i++) {
		k = ((char *)pages[i] - base) / psz;
		if (status[i] == nodes[i])
			moved++;
		else if (status[i] == -EBUSY)
			busy++;
		if (status[i] < 0 || status[i] == place[i])
			continue;
		if (wrong++ < NP_SEEN_LOG)
			fprintf(stderr, "# entry %zu (slot %zu, %s, page %zu): to node %d, status %d, on %d\n",
				i, k / per, np_seen_names[kinds[k / per]],
				k % per, nodes[i], status[i], place[i]);
	}
	fprintf(stderr, "# %zu entries: %zu on their target, %zu -EBUSY, %zu statuses name a node the page is not on\n",
		n, moved, busy, wrong);
	fprintf(stderr, "# slots:");
	for (i = 0; i < NP_SEEN_SLOTS; i++)
		fprintf(stderr, " %s", np_seen_names[kinds[i]]);
	fprintf(stderr, "\n");
	EXPECT_EQ(0, wrong);
	/* The call did move pages: the check above is not of an idle call. */
	EXPECT_LT(0, moved);
	free(pages);
	free(nodes);
	free(status);
	free(place);
}

NP_HARNESS_MAIN
