// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-size THP (mTHP) must stay large (issue 16): a buffer of 64 KiB
 * anonymous folios moved by numaplace arrives as 64 KiB folios where
 * move_pages(2) moves the same buffer whole, and numaplace never splits
 * more, nor allocates more, than the syscall does for an identical buffer.
 *
 * Fixture "mthp" runs once per engine that moves PTE-mapped large folios
 * (default: the module's choice, through numaplace_migrate_range(); kernel:
 * NUMAPLACE_MIGRATE_ENGINE_KERNEL alone, through the ioctl, whose
 * migrate_pages() is the syscall's; pt: NUMAPLACE_MIGRATE_ENGINE_PT, the
 * page-table engine, which moves a folio only this process maps whole,
 * with no rmap walk). Kernels without hugepages-64kB (6.1) skip. Each test
 * enables 64 KiB mTHP (and disables PMD THP, so that only 64 KiB folios
 * back the buffer) for its duration and puts both settings back.
 *  - migrate_keeps_64k: the first move, node 0 -> 1, against move_pages(2)
 *    on an identical buffer: statuses, counters, placement, data, folio
 *    sizes (/proc/self/pagemap + /proc/kpageflags) and the
 *    hugepages-64kB/stats/split counter, which must not move; where the
 *    page-table engine runs, it alone moved every folio.
 *  - migrate_again_as_syscall: the second move of the same folios, back to
 *    node 0. The kernel's migrate_pages() splits every one of them here
 *    (Documentation/design.md, "Large folios"): numaplace must split no
 *    more, keep as many whole, place them the same and allocate no more
 *    pages (/proc/vmstat pgalloc_*) than move_pages(2); the page-table
 *    engine splits none and keeps every one whole.
 *  - pinned_folio_stays_whole: one page of one folio held by a pipe
 *    (vmsplice(2)): that folio stays on node 0, whole, answered -EBUSY,
 *    its failure counted once in pgmigrate_fail (the page-table engine
 *    hands such a folio to the kernel engine, whose answer is final);
 *    every other folio moves whole; once the pipe lets go, it moves too
 *    (whole where the page-table engine moves it).
 */
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "numaplace.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

#define NP_MTHP_DIR	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB"
#define NP_MTHP_ENABLED	NP_MTHP_DIR "/enabled"
#define NP_MTHP_SPLIT	NP_MTHP_DIR "/stats/split"
/* PMD THP off for the test: a 2 MiB folio would hide the 64 KiB ones. */
#define NP_PMD_ENABLED	"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled"
#define NP_MTHP_SIZE	(64UL << 10)
/*
 * 32 MiB: 512 folios, twice the kernel engine's preallocation window
 * (module/engine_kernel.c, 16 MiB) and 32 times migrate_pages()'s batch
 * (512 base pages), so every path a round takes is crossed more than once.
 */
#define NP_MTHP_BUF	(32UL << 20)
/* Folios not 64 KiB printed before they are only counted. */
#define NP_MTHP_LOG	4

FIXTURE(mthp)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	char mthp_was[32];	/* hugepages-64kB/enabled before; "": untouched */
	char pmd_was[32];	/* hugepages-2048kB/enabled before */
	char *a, *b;		/* numaplace's buffer, the syscall's */
	size_t pages;		/* base pages of each */
	struct np_model model;	/* its pagemap and kpageflags files */
	int model_open;
};

NP_ENGINE_FIXTURE_VARIANT(mthp);
NP_ENGINE_VARIANT(mthp, default);
NP_ENGINE_VARIANT(mthp, kernel);
NP_ENGINE_VARIANT(mthp, pt);

/*
 * Does the page-table engine move this variant's folios? Forced, or the
 * default where INFO has it (6.12, 7.3; not where IBT seals it).
 */
static bool np_mthp_pt(const FIXTURE_DATA(mthp) *self,
		       const FIXTURE_VARIANT(mthp) *variant)
{
	return variant->flags == NUMAPLACE_MIGRATE_ENGINE_PT ||
	       (!variant->flags &&
		(self->info.features & NUMAPLACE_FEAT_MIGRATE_PT));
}

FIXTURE_SETUP(mthp)
{
	self->fd = -1;
	self->a = self->b = NULL;
	self->mthp_was[0] = self->pmd_was[0] = 0;
	self->model_open = 0;
	if (access(NP_MTHP_ENABLED, F_OK))
		SKIP(return, "no %s (mTHP needs 6.8+)", NP_MTHP_ENABLED);
	if (NP_MIG_SETUP(&self->fd, &self->c, &self->info))
		return;
	if (variant->feature && !(self->info.features & variant->feature))
		SKIP(return, "engine not available (features %#llx)",
		     (unsigned long long)self->info.features);
	ASSERT_EQ(0, np_thp_setting(NP_MTHP_ENABLED, self->mthp_was,
				    sizeof(self->mthp_was)));
	ASSERT_EQ(0, np_thp_setting(NP_PMD_ENABLED, self->pmd_was,
				    sizeof(self->pmd_was)));
	ASSERT_EQ(0, np_write_str(NP_MTHP_ENABLED, "always"));
	ASSERT_EQ(0, np_write_str(NP_PMD_ENABLED, "never"));
	ASSERT_EQ(0, np_model_open(&self->model, 0));
	self->model_open = 1;
	self->pages = NP_MTHP_BUF / self->c.psz;
}

FIXTURE_TEARDOWN(mthp)
{
	if (self->a)
		munmap(self->a, NP_MTHP_BUF);
	if (self->b)
		munmap(self->b, NP_MTHP_BUF);
	if (self->mthp_was[0])
		np_write_str(NP_MTHP_ENABLED, self->mthp_was);
	if (self->pmd_was[0])
		np_write_str(NP_PMD_ENABLED, self->pmd_was);
	if (self->model_open)
		np_model_close(&self->model);
	if (self->fd >= 0)
		close(self->fd);
}

static __u64 np_mthp_word(size_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

/*
 * NP_MTHP_BUF of anonymous memory, 64 KiB aligned, faulted in on node 0
 * (each fault allocates one 64 KiB folio) and filled with its pattern.
 */
static char *np_mthp_buffer(void)
{
	size_t len = NP_MTHP_BUF + NP_MTHP_SIZE, i;
	char *map, *buf;
	__u64 *w;

	map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	buf = (char *)(((uintptr_t)map + NP_MTHP_SIZE - 1) &
		       ~(NP_MTHP_SIZE - 1));
	if (buf > map)
		munmap(map, buf - map);
	if (map + len > buf + NP_MTHP_BUF)
		munmap(buf + NP_MTHP_BUF, map + len - (buf + NP_MTHP_BUF));
	if (np_mempolicy(MPOL_BIND, 0)) {
		munmap(buf, NP_MTHP_BUF);
		return NULL;
	}
	w = (__u64 *)buf;
	for (i = 0; i < NP_MTHP_BUF / sizeof(*w); i++)
		w[i] = np_mthp_word(i);
	np_mempolicy(MPOL_DEFAULT, -1);
	return buf;
}

/* Words of @buf that are not their pattern. */
static size_t np_mthp_bad_words(const char *buf)
{
	const __u64 *w = (const __u64 *)buf;
	size_t i, bad = 0;

	for (i = 0; i < NP_MTHP_BUF / sizeof(*w); i++)
		bad += w[i] != np_mthp_word(i);
	return bad;
}

/*
 * The folios of @buf that are not exactly one 64 KiB THP: 16 present
 * pages, physically contiguous from a 64 KiB aligned PFN, the first a
 * compound head and the others its tails, all THP; the next page is not
 * a tail of the same folio (the block is not part of a bigger one).
 */
static size_t np_mthp_not_64k(struct __test_metadata *_metadata,
			      FIXTURE_DATA(mthp) *self, const char *buf,
			      const char *what)
{
	const size_t per = NP_MTHP_SIZE / self->c.psz;
	size_t blk, k, bad = 0;
	__u64 pm, kpf, pfn0 = 0;
	const char *why;

	for (blk = 0; blk < self->pages / per; blk++) {
		why = NULL;
		for (k = 0; k < per && !why; k++) {
			unsigned long va = (uintptr_t)buf +
					   (blk * per + k) * self->c.psz;

			pm = np_model_pm(&self->model, va);
			if (!(pm & NP_PM_PRESENT)) {
				why = "not present";
				break;
			}
			if (!k)
				pfn0 = pm & NP_PM_PFN_MASK;
			if ((pm & NP_PM_PFN_MASK) != pfn0 + k) {
				why = "not contiguous";
				break;
			}
			kpf = np_model_kpf(&self->model, pfn0 + k);
			if (!(kpf & (1ULL << KPF_THP)))
				why = "not THP";
			else if (!k && !(kpf & (1ULL << KPF_COMPOUND_HEAD)))
				why = "no compound head";
			else if (k && !(kpf & (1ULL << KPF_COMPOUND_TAIL)))
				why = "no compound tail";
		}
		if (!why && (pfn0 & (per - 1)))
			why = "not 64 KiB aligned";
		if (!why && blk + 1 < self->pages / per) {
			kpf = np_model_kpf(&self->model, pfn0 + per);
			pm = np_model_pm(&self->model, (uintptr_t)buf +
					    (blk + 1) * NP_MTHP_SIZE);
			if ((pm & NP_PM_PFN_MASK) == pfn0 + per &&
			    (kpf & (1ULL << KPF_COMPOUND_TAIL)))
				why = "part of a larger folio";
		}
		if (why && bad++ < NP_MTHP_LOG)
			TH_LOG("%s: folio %zu (%p, pfn %#llx): %s", what, blk,
			       buf + blk * NP_MTHP_SIZE,
			       (unsigned long long)pfn0, why);
	}
	return bad;
}

/*
 * Every check of @buf on @node: placement (the syscall's query), data,
 * folio sizes. Returns the number of problems (each logged).
 */
static size_t np_mthp_check(struct __test_metadata *_metadata,
			    FIXTURE_DATA(mthp) *self, const char *buf,
			    int node, const char *what)
{
	size_t off, words, folios;
	long first = -1;
	int where = -1;

	off = np_pages_not_on(0, buf, self->pages, node, &first, &where);
	if (off)
		TH_LOG("%s: %zu pages not on node %d (page %ld on %d)", what,
		       off, node, first, where);
	words = np_mthp_bad_words(buf);
	if (words)
		TH_LOG("%s: %zu words with wrong data", what, words);
	folios = np_mthp_not_64k(_metadata, self, buf, what);
	if (folios)
		TH_LOG("%s: %zu of %lu folios not 64 KiB", what, folios,
		       NP_MTHP_BUF / NP_MTHP_SIZE);
	return off + words + folios;
}

/*
 * Numaplace's buffer and the syscall's, identical: the premise of every
 * comparison is that the kernel gave both 64 KiB folios, on node 0 (an
 * ASSERT ends the test otherwise).
 */
static void np_mthp_two_buffers(struct __test_metadata *_metadata,
				FIXTURE_DATA(mthp) *self)
{
	self->a = np_mthp_buffer();
	self->b = np_mthp_buffer();
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_EQ(0, np_mthp_check(_metadata, self, self->a, 0,
				   "numaplace's buffer before"));
	ASSERT_EQ(0, np_mthp_check(_metadata, self, self->b, 0,
				   "the syscall's buffer before"));
}

NP_TEST_F(mthp, migrate_keeps_64k)
{
	const int nodes_one = 1;
	struct numaplace_migrate m;
	long split0, split_np, split_sys;
	__s32 *st;
	__u64 *addrs;
	int *nodes, *sys;
	size_t i, bad = 0;

	NP_SKIPPED();
	np_mthp_two_buffers(_metadata, self);

	st = calloc(self->pages, sizeof(*st));
	addrs = calloc(self->pages, sizeof(*addrs));
	nodes = calloc(self->pages, sizeof(*nodes));
	sys = calloc(self->pages, sizeof(*sys));
	ASSERT_TRUE(st && addrs && nodes && sys);

	split0 = np_read_long(NP_MTHP_SPLIT);
	ASSERT_LE(0, split0);
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, variant->flags,
				     (uintptr_t)self->a, NP_MTHP_BUF,
				     nodes_one, st, &m));
	split_np = np_read_long(NP_MTHP_SPLIT) - split0;
	EXPECT_EQ(self->pages, m.done);
	EXPECT_EQ(self->pages, m.nr_moved_pages);
	EXPECT_EQ(0, m.nr_failed_pages);
	for (i = 0; i < self->pages; i++)
		bad += st[i] != nodes_one;
	EXPECT_EQ(0, bad) TH_LOG("statuses not node %d", nodes_one);
	EXPECT_EQ(0, np_mthp_check(_metadata, self, self->a, nodes_one,
				   "numaplace, after"));

	for (i = 0; i < self->pages; i++) {
		addrs[i] = (uintptr_t)self->b + i * self->c.psz;
		nodes[i] = nodes_one;
	}
	split0 = np_read_long(NP_MTHP_SPLIT);
	EXPECT_EQ(0, np_sys_move_pages(0, self->pages, addrs, nodes, sys,
				       NP_MF_MOVE));
	split_sys = np_read_long(NP_MTHP_SPLIT) - split0;
	/* The same final placement, and folios as whole as ours. */
	EXPECT_EQ(0, np_mthp_check(_metadata, self, self->b, nodes_one,
				   "move_pages(2), after"));
	TH_LOG("64 KiB splits: numaplace %ld, move_pages(2) %ld; %llu folios",
	       split_np, split_sys, (unsigned long long)m.nr_moved_folios);
	EXPECT_LE(split_np, split_sys);
	EXPECT_EQ(0, split_np);
	/* Every 64 KiB folio counted once. */
	EXPECT_EQ(NP_MTHP_BUF / NP_MTHP_SIZE, m.nr_moved_folios);
	/* No folio left to the kernel engine (a fallback is a failure here). */
	if (np_mthp_pt(self, variant))
		EXPECT_EQ(NUMAPLACE_ENGINE_PT, m.engines);
	free(st);
	free(addrs);
	free(nodes);
	free(sys);
}

/* Pages the kernel allocated so far: the pgalloc_* lines of /proc/vmstat. */
static long np_pgalloc(void)
{
	char key[64];
	long v, sum = 0;
	FILE *f = fopen("/proc/vmstat", "re");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		if (!strncmp(key, "pgalloc_", strlen("pgalloc_")))
			sum += v;
	fclose(f);
	return sum;
}

/*
 * Move @buf to @node as the variant does: the default through
 * numaplace_migrate_range(), an engine through the ioctl with its flag.
 */
static int np_mthp_move(FIXTURE_DATA(mthp) *self, __u32 flags, char *buf,
			int node, struct numaplace_migrate *m)
{
	memset(m, 0, sizeof(*m));
	if (!flags)
		return numaplace_migrate_range(0, buf, NP_MTHP_BUF, node, 0, m);
	return np_migrate_node(self->fd, 0, flags, (uintptr_t)buf, NP_MTHP_BUF,
			       node, NULL, m);
}

/* move_pages(2) of every page of @buf to @node: 0 or -errno. */
static long np_mthp_sys_move(FIXTURE_DATA(mthp) *self, char *buf, int node)
{
	__u64 *addrs = calloc(self->pages, sizeof(*addrs));
	int *nodes = calloc(self->pages, sizeof(*nodes));
	int *st = calloc(self->pages, sizeof(*st));
	long ret = -ENOMEM;
	size_t i;

	if (addrs && nodes && st) {
		for (i = 0; i < self->pages; i++) {
			addrs[i] = (uintptr_t)buf + i * self->c.psz;
			nodes[i] = node;
		}
		ret = np_sys_move_pages(0, self->pages, addrs, nodes, st,
					NP_MF_MOVE);
	}
	free(addrs);
	free(nodes);
	free(st);
	return ret;
}

/*
 * A slack on the pages one move allocates: 5/8 of the buffer. An engine
 * that allocated a second destination for every folio would be 8/8 over.
 * The rest: page tables, status arrays and the rest of the guest (1/8),
 * and the kernel engine's preallocation, which decides by an unlocked
 * read of the deferred-split state (compat.h np_migrate_splits_first(),
 * only a hint): 7.3's make check of 844872a saw it allocate 64 KiB for
 * 256 of the 512 folios that migrate_pages() then split (4136 pages over
 * the syscall's 8192; other runs 0-200).
 */
#define NP_MTHP_ALLOC_SLACK(pages)	((long)(pages) * 5 / 8)

/*
 * The second move of the same folios: the kernel's migrate_pages() (both
 * the syscall's and numaplace's kernel engine) may split a large folio
 * here that its first move queued as partially mapped (issue 16,
 * Documentation/design.md "Large folios"): numaplace must split no more
 * than the syscall, end with as many 64 KiB folios, in the same place,
 * and allocate no more pages than it.
 */
NP_TEST_F(mthp, migrate_again_as_syscall)
{
	long s0, split_np, split_sys, a0, alloc_np, alloc_sys;
	size_t whole_np, whole_sys;
	struct numaplace_migrate m;

	NP_SKIPPED();
	np_mthp_two_buffers(_metadata, self);
	/* First moves, to node 1: whole, as migrate_keeps_64k checks. */
	ASSERT_EQ(0, np_mthp_move(self, variant->flags, self->a, 1, &m));
	ASSERT_EQ(0, np_mthp_sys_move(self, self->b, 1));

	s0 = np_read_long(NP_MTHP_SPLIT);
	a0 = np_pgalloc();
	ASSERT_LE(0, s0);
	ASSERT_LE(0, a0);
	ASSERT_EQ(0, np_mthp_move(self, variant->flags, self->a, 0, &m));
	split_np = np_read_long(NP_MTHP_SPLIT) - s0;
	alloc_np = np_pgalloc() - a0;
	EXPECT_EQ(self->pages, m.nr_moved_pages);
	EXPECT_EQ(0, m.nr_failed_pages);

	s0 = np_read_long(NP_MTHP_SPLIT);
	a0 = np_pgalloc();
	ASSERT_EQ(0, np_mthp_sys_move(self, self->b, 0));
	split_sys = np_read_long(NP_MTHP_SPLIT) - s0;
	alloc_sys = np_pgalloc() - a0;

	whole_np = NP_MTHP_BUF / NP_MTHP_SIZE -
		   np_mthp_not_64k(_metadata, self, self->a, "numaplace, after");
	whole_sys = NP_MTHP_BUF / NP_MTHP_SIZE -
		    np_mthp_not_64k(_metadata, self, self->b, "syscall, after");
	TH_LOG("second move: 64 KiB splits numaplace %ld, move_pages(2) %ld; 64 KiB folios after %zu, %zu; pages allocated %ld, %ld; engines %#x",
	       split_np, split_sys, whole_np, whole_sys, alloc_np, alloc_sys,
	       m.engines);
	/*
	 * The page-table engine removes a folio's rmap in one call: its
	 * first move never queued one as partly mapped, its second splits
	 * none and allocates a destination per folio, as the first.
	 */
	if (np_mthp_pt(self, variant)) {
		EXPECT_EQ(NUMAPLACE_ENGINE_PT, m.engines);
		EXPECT_EQ(0, split_np);
		EXPECT_EQ(NP_MTHP_BUF / NP_MTHP_SIZE, whole_np);
		EXPECT_EQ(NP_MTHP_BUF / NP_MTHP_SIZE, m.nr_moved_folios);
	}
	/*
	 * The kernel's own outcome varies: 7.3 runs of this test saw the
	 * syscall keep 256 of the 512 folios whole (allocating 12288 pages)
	 * in 1 of 3 runs, where its deferred-split state had changed between
	 * the moves. The comparison holds numaplace to the kernel's usual
	 * outcome, every folio split; the other is logged, not compared.
	 */
	if (whole_sys) {
		ksft_print_msg("the syscall kept %zu folios whole: not compared\n",
			       whole_sys);
	} else {
		EXPECT_LE(split_np, split_sys);
		EXPECT_GE(whole_np, whole_sys);
		EXPECT_LE(alloc_np, alloc_sys + NP_MTHP_ALLOC_SLACK(self->pages))
			TH_LOG("numaplace allocated destinations it did not use");
	}
	/* The same final placement, the data intact. */
	EXPECT_EQ(0, np_pages_not_on(0, self->a, self->pages, 0,
				     &(long){0}, &(int){0}));
	EXPECT_EQ(0, np_pages_not_on(0, self->b, self->pages, 0,
				     &(long){0}, &(int){0}));
	EXPECT_EQ(0, np_mthp_bad_words(self->a));
}

/* The folio one page of which the pipe holds. */
#define NP_MTHP_HELD	5

/*
 * A folio with a reference besides its mappings (a pipe's, from
 * vmsplice(2)) cannot move: migrate_pages() fails it after its passes,
 * as the page-table engine's reference check does. It must stay whole
 * where it was, with the data, answered -EBUSY, and be failed once: the
 * page-table engine gives it to the kernel engine, which answers for it,
 * not to its own busy passes (each pass would hand it over again and
 * count 16 more failed pages).
 */
NP_TEST_F(mthp, pinned_folio_stays_whole)
{
	const size_t per = NP_MTHP_SIZE / self->c.psz;
	const size_t held = NP_MTHP_HELD * per + 3;
	struct numaplace_migrate m;
	long split0, split, fail0, fail;
	size_t i, bad = 0;
	struct iovec iov;
	__s32 *st;
	char *back;
	int pfd[2];

	NP_SKIPPED();
	self->a = np_mthp_buffer();
	ASSERT_NE(NULL, self->a);
	ASSERT_EQ(0, np_mthp_check(_metadata, self, self->a, 0, "before"));
	st = calloc(self->pages, sizeof(*st));
	back = malloc(self->c.psz);
	ASSERT_TRUE(st && back);
	ASSERT_EQ(0, pipe(pfd));
	iov.iov_base = self->a + held * self->c.psz;
	iov.iov_len = self->c.psz;
	ASSERT_EQ(self->c.psz, vmsplice(pfd[1], &iov, 1, 0));

	split0 = np_read_long(NP_MTHP_SPLIT);
	fail0 = np_vmstat("pgmigrate_fail");
	ASSERT_LE(0, split0);
	ASSERT_LE(0, fail0);
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, variant->flags,
				     (uintptr_t)self->a, NP_MTHP_BUF, 1, st,
				     &m));
	split = np_read_long(NP_MTHP_SPLIT) - split0;
	fail = np_vmstat("pgmigrate_fail") - fail0;
	TH_LOG("held folio: 64 KiB splits %ld, pgmigrate_fail %ld, engines %#x",
	       split, fail, m.engines);
	for (i = 0; i < self->pages; i++) {
		int want = i / per == NP_MTHP_HELD ? -EBUSY : 1;

		if (st[i] != want && bad++ < NP_MTHP_LOG)
			TH_LOG("page %zu: status %d, not %d", i, st[i], want);
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(self->pages - per, m.nr_moved_pages);
	EXPECT_EQ(per, m.nr_failed_pages);
	EXPECT_EQ(0, split);
	/* Failed once: one folio's pages, not once per busy pass. */
	EXPECT_LE(per, fail);
	EXPECT_GT(2 * per, fail);
	EXPECT_EQ(0, np_mthp_bad_words(self->a));
	EXPECT_EQ(0, np_mthp_not_64k(_metadata, self, self->a, "after"));
	EXPECT_EQ(per, np_pages_not_on(0, self->a, self->pages, 1,
				       &(long){0}, &(int){0}));

	/* The pipe reads the page's bytes; then the folio moves, whole. */
	ASSERT_EQ(self->c.psz, read(pfd[0], back, self->c.psz));
	EXPECT_EQ(0, memcmp(back, self->a + held * self->c.psz, self->c.psz));
	close(pfd[0]);
	close(pfd[1]);
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, variant->flags,
				     (uintptr_t)self->a, NP_MTHP_BUF, 1, st,
				     &m));
	EXPECT_EQ(per, m.nr_moved_pages);
	EXPECT_EQ(0, np_pages_not_on(0, self->a, self->pages, 1,
				     &(long){0}, &(int){0}));
	EXPECT_EQ(0, np_mthp_bad_words(self->a));
	/*
	 * Whole where the page-table engine moves it. migrate_pages()'s
	 * failed try left it queued as partly mapped (try_to_migrate_one()
	 * unmaps a page at a time), so the kernel engine, as the syscall,
	 * splits it now: logged, not compared.
	 */
	split = np_mthp_not_64k(_metadata, self, self->a, "after the pipe let go");
	if (np_mthp_pt(self, variant)) {
		EXPECT_EQ(0, split);
		EXPECT_EQ(NUMAPLACE_ENGINE_PT, m.engines);
	}
	free(back);
	free(st);
}

NP_HARNESS_MAIN
