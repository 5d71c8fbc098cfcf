// SPDX-License-Identifier: GPL-2.0
/*
 * The page-table engine (NUMAPLACE_MIGRATE_ENGINE_PT, module/engine_pt.c)
 * keeps what the kernel's migration entry keeps (issue 16). Its oracle,
 * integrity, race, THP and bounds tests are the engine variant "pt" of
 * migrate.c, migrate_integrity.c, race.c, migrate_thp.c and
 * migrate_bounds.c; these are the bits only this engine writes itself:
 *  - soft_dirty_kept: after clear_refs, half the pages written again; a
 *    move to node 1 must leave /proc/self/pagemap's soft-dirty bit (55)
 *    as it was, page by page, the data intact, the pages not written
 *    since still write-protected until written (then soft-dirty), and
 *    nr_isolated_anon back at (or below) where it was.
 *  - uffd_wp_kept: a userfaultfd write-protected range moved keeps
 *    pagemap's uffd-wp bit (57) on every page.
 * Skipped without the engine (INFO), nodes 0 and 1, or the kernel
 * feature (soft-dirty, uffd-wp on anonymous memory).
 */
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "migrate_lib.h"
#include "kselftest_harness.h"

#define NP_PT_PAGES		256
#define NP_PM_SOFT_DIRTY	(1ULL << 55)
#define NP_PM_UFFD_WP		(1ULL << 57)
/* nr_isolated_anon is back at its baseline this soon after a move. */
#define NP_PT_SETTLE_MS		2000

FIXTURE(pt)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	char *buf;
	size_t len;
};

FIXTURE_SETUP(pt)
{
	unsigned long node0 = 1;

	self->fd = -1;
	self->buf = MAP_FAILED;
	if (NP_MIG_SETUP(&self->fd, &self->c, &self->info))
		return;
	if (!(self->info.features & NUMAPLACE_FEAT_MIGRATE_PT))
		SKIP(return, "no page-table engine (features %#llx)",
		     (unsigned long long)self->info.features);
	if (!np_node_isset(self->info.node_memory, 0) ||
	    !np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs memory on nodes 0 and 1");
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	self->len = NP_PT_PAGES * self->c.psz;
	self->buf = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	/* 4 KiB pages only: the engine moves order-0 folios. */
	madvise(self->buf, self->len, MADV_NOHUGEPAGE);
	/* Faulted in on node 0, wherever the test runs; moved to node 1. */
	ASSERT_EQ(0, syscall(__NR_mbind, self->buf, self->len, MPOL_BIND,
			     &node0, sizeof(node0) * 8, 0));
}

FIXTURE_TEARDOWN(pt)
{
	if (self->buf != MAP_FAILED)
		munmap(self->buf, self->len);
	if (self->fd >= 0)
		close(self->fd);
}

/* pagemap entries of @n pages from @p. 0 or -errno. */
static int np_pt_pagemap(const char *p, size_t n, long psz, __u64 *pm)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	ssize_t got;

	if (fd < 0)
		return -errno;
	got = pread(fd, pm, n * sizeof(*pm),
		    (off_t)((uintptr_t)p / psz * sizeof(*pm)));
	close(fd);
	return got == (ssize_t)(n * sizeof(*pm)) ? 0 : -EIO;
}

static void np_pt_fill(char *p, size_t n, long psz, __u64 g)
{
	for (size_t i = 0; i < n; i++)
		*(__u64 *)(p + i * psz) = np_stamp_word(i, g, 0);
}

static size_t np_pt_bad_stamps(const char *p, size_t n, long psz, __u64 g)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += *(const __u64 *)(p + i * psz) != np_stamp_word(i, g, 0);
	return bad;
}

/* Move the buffer to @node with the page-table engine; every page must. */
static void np_pt_move(struct __test_metadata *_metadata,
		       FIXTURE_DATA(pt) *self, int node)
{
	static __s32 st[NP_PT_PAGES];
	struct numaplace_migrate m;
	size_t off = 0;

	ASSERT_EQ(0, np_migrate_node(self->fd, 0, NUMAPLACE_MIGRATE_ENGINE_PT,
				     (uintptr_t)self->buf, self->len, node, st,
				     &m));
	EXPECT_EQ(NP_PT_PAGES, m.nr_moved_pages);
	EXPECT_EQ(NUMAPLACE_ENGINE_PT, m.engines);
	for (size_t i = 0; i < NP_PT_PAGES; i++)
		off += st[i] != node;
	EXPECT_EQ(0, off) TH_LOG("%zu pages not on node %d", off, node);
}

NP_TEST_F(pt, soft_dirty_kept)
{
	static __u64 before[NP_PT_PAGES], after[NP_PT_PAGES];
	long psz = self->c.psz, anon0, file0, anon, file;
	size_t sd = 0, diff = 0;

	NP_SKIPPED();

	np_pt_fill(self->buf, NP_PT_PAGES, psz, 1);
	if (np_write_str("/proc/self/clear_refs", "4"))
		SKIP(return, "no soft-dirty clearing (/proc/self/clear_refs)");
	for (size_t i = 0; i < NP_PT_PAGES; i += 2)
		*(__u64 *)(self->buf + i * psz) = np_stamp_word(i, 1, 0);
	ASSERT_EQ(0, np_pt_pagemap(self->buf, NP_PT_PAGES, psz, before));
	for (size_t i = 0; i < NP_PT_PAGES; i++)
		sd += !!(before[i] & NP_PM_SOFT_DIRTY);
	if (!sd)
		SKIP(return, "no soft-dirty bit (CONFIG_MEM_SOFT_DIRTY)");
	ASSERT_EQ(NP_PT_PAGES / 2, sd);

	ASSERT_EQ(0, np_isolated(&anon0, &file0));
	np_pt_move(_metadata, self, 1);
	ASSERT_EQ(0, np_pt_pagemap(self->buf, NP_PT_PAGES, psz, after));
	for (size_t i = 0; i < NP_PT_PAGES; i++) {
		if ((before[i] ^ after[i]) & NP_PM_SOFT_DIRTY) {
			if (diff++ < 4)
				TH_LOG("page %zu: soft-dirty %d before, %d after",
				       i, !!(before[i] & NP_PM_SOFT_DIRTY),
				       !!(after[i] & NP_PM_SOFT_DIRTY));
		}
	}
	EXPECT_EQ(0, diff);
	EXPECT_EQ(0, np_pt_bad_stamps(self->buf, NP_PT_PAGES, psz, 1));

	/* The clean half is still write-protected: a write marks it. */
	for (size_t i = 1; i < NP_PT_PAGES; i += 2)
		*(__u64 *)(self->buf + i * psz) = np_stamp_word(i, 1, 0);
	ASSERT_EQ(0, np_pt_pagemap(self->buf, NP_PT_PAGES, psz, after));
	for (size_t i = 0, n = 0; i < NP_PT_PAGES; i++)
		if (!(after[i] & NP_PM_SOFT_DIRTY) && n++ < 4)
			TH_LOG("page %zu: written, not soft-dirty", i);
	for (size_t i = 0; i < NP_PT_PAGES; i++)
		EXPECT_TRUE(after[i] & NP_PM_SOFT_DIRTY);
	ASSERT_EQ(0, np_isolated_settle(anon0, file0, NP_PT_SETTLE_MS,
					&anon, &file));
	EXPECT_LE(anon, anon0);
}

NP_TEST_F(pt, uffd_wp_kept)
{
	static __u64 pm[NP_PT_PAGES];
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { (uintptr_t)self->buf, self->len },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)self->buf, self->len },
		.mode = UFFDIO_WRITEPROTECT_MODE_WP,
	};
	long psz = self->c.psz;
	size_t set = 0;
	int uffd;

	NP_SKIPPED();

	np_pt_fill(self->buf, NP_PT_PAGES, psz, 2);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api) ||
	    ioctl(uffd, UFFDIO_REGISTER, &reg) ||
	    ioctl(uffd, UFFDIO_WRITEPROTECT, &wp)) {
		close(uffd);
		SKIP(return, "no uffd-wp on anonymous memory: %s",
		     strerror(errno));
	}
	ASSERT_EQ(0, np_pt_pagemap(self->buf, NP_PT_PAGES, psz, pm));
	for (size_t i = 0; i < NP_PT_PAGES; i++)
		set += !!(pm[i] & NP_PM_UFFD_WP);
	if (!set) {
		close(uffd);
		SKIP(return, "pagemap shows no uffd-wp bit");
	}
	ASSERT_EQ(NP_PT_PAGES, set);

	np_pt_move(_metadata, self, 1);
	ASSERT_EQ(0, np_pt_pagemap(self->buf, NP_PT_PAGES, psz, pm));
	set = 0;
	for (size_t i = 0; i < NP_PT_PAGES; i++)
		set += !!(pm[i] & NP_PM_UFFD_WP);
	EXPECT_EQ(NP_PT_PAGES, set);
	EXPECT_EQ(0, np_pt_bad_stamps(self->buf, NP_PT_PAGES, psz, 2));

	wp.mode = 0;
	EXPECT_EQ(0, ioctl(uffd, UFFDIO_WRITEPROTECT, &wp));
	close(uffd);
}

NP_HARNESS_MAIN
