// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_QUERY on seeded random layouts: every page kind of
 * query.c next to every other, in 2 MiB chunks, checked in range and
 * array mode against the syscall and the /proc model (np_check_range()).
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

static long psz;

/* ------------------------------------------------------------------ */
/* Seeded random layouts: every kind next to every other.             */
/* ------------------------------------------------------------------ */

#define NP_RND_CHUNKS	8	/* 2 MiB chunks of one random layout */
#define NP_RND_ADDRS	3000	/* array-mode addresses per layout */
/*
 * The largest munmapped hole, in pages: below glibc's mmap threshold, so
 * no malloc() of the checks lands in it while the test runs.
 */
#define NP_RND_HOLE	16

FIXTURE(random)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	int fds[NP_RND_CHUNKS];
};

FIXTURE_VARIANT(random)
{
	__u64 seed;
};

FIXTURE_VARIANT_ADD(random, seed1) { .seed = 1 };
FIXTURE_VARIANT_ADD(random, seed2) { .seed = 2 };
FIXTURE_VARIANT_ADD(random, seed3) { .seed = 0xdecafbad };
FIXTURE_VARIANT_ADD(random, seed4) { .seed = 20240611 };

FIXTURE_SETUP(random)
{
	for (int i = 0; i < NP_RND_CHUNKS; i++)
		self->fds[i] = -1;
	if (NP_QUERY_SETUP(&self->fd, &self->c, &self->info))
		return;
	psz = self->c.psz;
	NP_NEED_MODEL();
}

FIXTURE_TEARDOWN(random)
{
	for (int i = 0; i < NP_RND_CHUNKS; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	if (self->fd >= 0)
		close(self->fd);
}
struct np_layout {
	char *base;
	size_t npages;
	__u64 *move;		/* addresses to move to a random node */
	size_t nr_move;
	__u64 *prot;		/* pages to make PROT_NONE */
	size_t nr_prot;
	int nodes[2];		/* two nodes with memory, or one twice */
};

/*
 * The kinds of a layout's 2 MiB chunk @c, one builder each: 0, or -1 when
 * it could not be built. A memfd behind the chunk goes to *@fd.
 */
typedef int (*np_rnd_chunk_fn)(__u64 *s, struct np_layout *l, char *c,
			       int *fd);

/* 4 KiB pages: untouched, written or read, some moved, some PROT_NONE. */
static int np_rnd_4k(__u64 *s, struct np_layout *l, char *c, int *fd)
{
	for (size_t i = 0; i < NP_PMD / psz; i++) {
		size_t r = np_rnd_below(s, 10);

		if (r >= 3 && r != 6 && r != 9)
			np_write_page(c, i);
		else if (r == 6 || r == 9)
			np_read_page(c, i);
		if (r == 7)
			l->move[l->nr_move++] = (uintptr_t)c + i * psz;
		if (r == 8 || r == 9)
			l->prot[l->nr_prot++] = (uintptr_t)c + i * psz;
	}
	return 0;
}

/*
 * A random subrange of 1 to @max pages of the chunk at @c: its start;
 * its length in bytes in *@len.
 */
static char *np_rnd_sub(__u64 *s, char *c, size_t max, size_t *len)
{
	size_t n = 1 + np_rnd_below(s, max);

	*len = n * psz;
	return c + np_rnd_below(s, NP_PMD / psz - n) * psz;
}

/*
 * A THP chunk, and one of seven fates, each as likely: none, moved (in
 * l->move), PROT_NONE whole, or a random subrange of it PROT_NONE,
 * unmapped, zapped or read-only.
 */
static int np_rnd_thp(__u64 *s, struct np_layout *l, char *c, int *fd)
{
	int fate = np_rnd_below(s, 7);
	size_t len;
	char *p;

	madvise(c, NP_PMD, MADV_HUGEPAGE);
	memset(c, 0x11, NP_PMD);
	if (fate == 3)
		l->move[l->nr_move++] = (uintptr_t)c;
	else if (fate == 4)
		mprotect(c, NP_PMD, PROT_NONE);
	if (fate == 0 || fate == 3 || fate == 4)
		return 0;
	p = np_rnd_sub(s, c, fate == 2 ? NP_RND_HOLE : 64, &len);
	if (fate == 2)
		munmap(p, len);
	else if (fate == 5)
		madvise(p, len, MADV_DONTNEED);
	else
		mprotect(p, len, fate == 1 ? PROT_NONE : PROT_READ);
	return 0;
}

/* The huge zero page, as it is, split by a write, or PROT_NONE. */
static int np_rnd_huge_zero(__u64 *s, struct np_layout *l, char *c, int *fd)
{
	madvise(c, NP_PMD, MADV_HUGEPAGE);
	np_read_page(c, np_rnd_below(s, NP_PMD / psz));
	switch (np_rnd_below(s, 3)) {
	case 0:
		break;
	case 1:
		np_write_page(c, np_rnd_below(s, NP_PMD / psz));
		/*
		 * The write split the huge zero PMD into 511 zero-page PTEs
		 * and one page: khugepaged would collapse them into a THP at
		 * some moment of the test (seen on the slow debug kernel).
		 */
		madvise(c, NP_PMD, MADV_NOHUGEPAGE);
		break;
	case 2:
		mprotect(c, NP_PMD, PROT_NONE);
		break;
	}
	return 0;
}

/* A memfd's pages, some in its page cache, some read or written here. */
static int np_rnd_file(__u64 *s, struct np_layout *l, char *c, int *fd)
{
	*fd = memfd_create("np-random", MFD_CLOEXEC);
	if (*fd < 0 || ftruncate(*fd, NP_PMD))
		return -1;
	for (size_t i = 0; i < NP_PMD / psz; i++)
		if (!np_rnd_below(s, 3))
			np_pwrite_page(*fd, i);
	if (mmap(c, NP_PMD, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 *fd, 0) == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < NP_PMD / psz; i++) {
		size_t r = np_rnd_below(s, 8);

		if (r == 0)
			np_read_page(c, i);
		else if (r == 1)
			np_write_page(c, i);
	}
	return 0;
}

/* Untouched pages, THP-able half the time. */
static int np_rnd_thp_able(__u64 *s, struct np_layout *l, char *c, int *fd)
{
	if (np_rnd_below(s, 2))
		madvise(c, NP_PMD, MADV_HUGEPAGE);
	return 0;
}

/* Written pages with one to three holes unmapped. */
static int np_rnd_holes(__u64 *s, struct np_layout *l, char *c, int *fd)
{
	size_t len;

	for (size_t i = 0; i < NP_PMD / psz; i++)
		np_write_page(c, i);
	for (size_t h = 1 + np_rnd_below(s, 3); h; h--) {
		char *p = np_rnd_sub(s, c, NP_RND_HOLE, &len);

		munmap(p, len);
	}
	return 0;
}

/* Shared anonymous memory, half of it written. */
static int np_rnd_shared(__u64 *s, struct np_layout *l, char *c, int *fd)
{
	if (mmap(c, NP_PMD, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < NP_PMD / psz; i++)
		if (np_rnd_below(s, 2))
			np_write_page(c, i);
	return 0;
}

/* A chunk's type in the seed's log is its index here. */
static const np_rnd_chunk_fn np_rnd_chunks[] = {
	np_rnd_4k, np_rnd_thp, np_rnd_huge_zero, np_rnd_file,
	np_rnd_thp_able, np_rnd_holes, np_rnd_shared,
};

/* Build a random layout; 0 or -1. */
static int np_rnd_layout(__u64 *s, struct np_layout *l, int *fds)
{
	size_t per_chunk = NP_PMD / psz;

	l->npages = NP_RND_CHUNKS * per_chunk;
	l->base = np_pmd_map(NP_RND_CHUNKS * NP_PMD, 0);
	l->move = calloc(l->npages, sizeof(*l->move));
	l->prot = calloc(l->npages, sizeof(*l->prot));
	if (!l->base || !l->move || !l->prot)
		return -1;
	for (int c = 0; c < NP_RND_CHUNKS; c++) {
		char *chunk = l->base + c * NP_PMD;
		size_t type = np_rnd_below(s, ARRAY_SIZE(np_rnd_chunks));

		ksft_print_msg("seed layout: chunk %d type %zu\n", c, type);
		if (np_rnd_chunks[type](s, l, chunk, &fds[c]))
			return -1;
	}
	for (size_t i = 0; i < l->nr_move; i++) {
		int node = l->nodes[np_rnd_below(s, 2)], st;

		np_sys_move_pages(0, 1, &l->move[i], &node, &st, 0);
	}
	for (size_t i = 0; i < l->nr_prot; i++)
		mprotect((void *)(uintptr_t)l->prot[i], psz, PROT_NONE);
	return 0;
}

/*
 * Array-mode addresses: pages of the layout at random offsets, repeats,
 * addresses below mmap_min_addr, kernel and tagged addresses.
 */
static void np_rnd_addrs(__u64 *s, const struct np_layout *l, __u64 *a,
			 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t r = np_rnd_below(s, 20);
		__u64 page = (uintptr_t)l->base +
			     np_rnd_below(s, l->npages) * psz;

		if (r < 14 || !i)
			a[i] = page + np_rnd_below(s, psz);
		else if (r < 17)
			a[i] = a[np_rnd_below(s, i)];
		else if (r == 17)
			a[i] = np_rnd_below(s, 16) * psz;  /* < 64 KiB */
		else if (r == 18)
			a[i] = 0xffff888000000000ULL + np_rnd_below(s, 1 << 20);
		else
			a[i] = page | (1ULL << (56 + np_rnd_below(s, 8)));
	}
}

TEST_F_TIMEOUT(random, layout, NP_TIMEOUT(300))
{
	NP_SKIPPED();
	__u64 s = variant->seed, *addrs = calloc(NP_RND_ADDRS, sizeof(*addrs));
	struct np_layout l = { 0 };
	__s32 *dflt;
	int *sys;
	__u32 cap;

	ksft_print_msg("random layout seed %#llx\n",
		       (unsigned long long)variant->seed);
	ASSERT_NE(NULL, addrs);
	l.nodes[0] = 0;
	l.nodes[1] = np_other_node(&self->info, 0);
	if (l.nodes[1] < 0)
		l.nodes[1] = 0;
	ASSERT_EQ(0, np_rnd_layout(&s, &l, self->fds))
		TH_LOG("building the layout: %s", strerror(errno));

	dflt = calloc(l.npages, sizeof(*dflt));
	sys = calloc(l.npages, sizeof(*sys));
	ASSERT_NE(NULL, dflt);
	ASSERT_NE(NULL, sys);
	EXPECT_EQ(0, np_check_range(&self->c, "random", (uintptr_t)l.base,
				    l.npages, dflt));

	np_rnd_addrs(&s, &l, addrs, NP_RND_ADDRS);
	EXPECT_EQ(0, np_check_addrs(&self->c, "random array", addrs,
				    NP_RND_ADDRS));

	cap = 1 + np_rnd_below(&s, 3);
	{
		__u64 *pages = calloc(l.npages, sizeof(*pages));

		ASSERT_NE(NULL, pages);
		np_fill_addrs(pages, l.base, l.npages);
		ASSERT_EQ(0, np_sys_query(0, l.npages, pages, sys));
		free(pages);
	}
	EXPECT_EQ(0, np_check_resume(&self->c, "random", (uintptr_t)l.base,
				     l.npages, cap, 0, dflt));
	EXPECT_EQ(0, np_check_resume(&self->c, "random", (uintptr_t)l.base,
				     l.npages, cap,
				     NUMAPLACE_QUERY_AS_SYSCALL, sys));
	free(dflt);
	free(sys);
	free(addrs);
}

NP_HARNESS_MAIN
