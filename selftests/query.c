// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_QUERY against move_pages(2), page kind by page kind.
 *
 * Three oracles meet on every page (np_check_range() in np_test.h):
 *  - the running kernel's move_pages(pid, n, pages, NULL, status, 0);
 *  - a model built from /proc (smaps, pagemap, kpageflags and the memory
 *    blocks of each node) that gives 6.1's and 6.12's answers
 *    (kernel-facts.md 1.3, 1.4); the syscall is checked against its
 *    column for this kernel, so the model cannot drift;
 *  - the module: its default answers are 6.12's on both kernels, with
 *    NUMAPLACE_QUERY_AS_SYSCALL they are this kernel's syscall's. Range
 *    mode (runs, status, totals, run kinds) and array mode must agree.
 *
 * Fixture "kinds" builds one page kind per test and runs with the pages
 * on node 0 and on node 1 (a MPOL_BIND task policy). Seeded random
 * layouts are query_random.c; the ABI and bad input query_abi.c;
 * resuming, faulting nothing in and the whole address space
 * query_walk.c. Their page helpers are np_query_util.c.
 *
 * NUMA-hinting PTEs are not built here: with numa_balancing off (the
 * tests turn it off) nothing makes them, and a hinting PTE is the same
 * pte_protnone() state as PROT_NONE, which the protnone tests cover.
 * A VM_PFNMAP hole in a VMA without ->fault (6.1: -EFAULT) cannot be
 * made from user space: /dev/mem maps every page at mmap() time and
 * refuses MADV_DONTNEED; [vvar] holes have ->fault (-ENOENT on both).
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

/* How long KSM gets to merge a few pages (ksmd scans every 10 ms here). */
#define NP_KSM_WAIT_MS	20000

static long psz;

#define NP_CHECK(self, label, base, n)					\
	EXPECT_EQ(0, np_check_range(&(self)->c, label, (uintptr_t)(base), \
				    n, NULL))

/* ------------------------------------------------------------------ */
/* One kind of page per test, on each node in turn.                   */
/* ------------------------------------------------------------------ */

FIXTURE(kinds)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	int node, other;
	char hp_path[128];
	long hp_orig;
	char *hp_map;
	struct np_ksm ksm;
};

FIXTURE_VARIANT(kinds)
{
	int node;
};

FIXTURE_VARIANT_ADD(kinds, node0) { .node = 0 };
FIXTURE_VARIANT_ADD(kinds, node1) { .node = 1 };

FIXTURE_SETUP(kinds)
{
	self->hp_orig = -1;
	if (NP_QUERY_SETUP(&self->fd, &self->c, &self->info))
		return;
	psz = self->c.psz;
	NP_NEED_MODEL();
	if (!np_node_isset(self->info.node_memory, variant->node))
		SKIP(return, "node %d has no memory", variant->node);
	self->node = variant->node;
	self->other = np_other_node(&self->info, self->node);
	/* Every page this test faults in comes from the variant's node. */
	ASSERT_EQ(0, np_mempolicy(MPOL_BIND, self->node));
}

FIXTURE_TEARDOWN(kinds)
{
	char val[32];

	if (self->hp_map)
		munmap(self->hp_map, 2 * NP_PMD);
	if (self->hp_orig >= 0) {
		snprintf(val, sizeof(val), "%ld", self->hp_orig);
		np_write_str(self->hp_path, val);
	}
	np_ksm_restore(&self->ksm);
	if (self->fd >= 0)
		close(self->fd);
}

/* Present anonymous 4 KiB pages next to never-touched ones. */
NP_TEST_F(kinds, anon_4k)
{
	NP_SKIPPED();
	const size_t n = 48;
	char *p = np_pmd_map(n * psz, 0);

	ASSERT_NE(NULL, p);
	/* Two pages of every three. */
	for (size_t i = 0; i < n; i += 3)
		np_write_pages(p, i, 2, 1);
	for (size_t i = 0; i < n; i += 3) {
		EXPECT_EQ(self->node, np_sys_one(p + i * psz)) TH_LOG("page %zu", i);
	}
	NP_CHECK(self, "anon_4k", p, n);
}

/* Pages moved to the other node with move_pages(2): mixed answers. */
NP_TEST_F(kinds, anon_moved)
{
	NP_SKIPPED();
	const size_t n = 48;
	char *p = np_written_pages(n);

	if (self->other < 0)
		SKIP(return, "one node with memory");
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_move(p, 1, n / 2, 2, self->other));
	EXPECT_EQ(self->other, np_sys_one(p + psz));
	EXPECT_EQ(self->node, np_sys_one(p));
	NP_CHECK(self, "anon_moved", p, n);
}

/* A PMD-mapped THP is one PMD run; a partial range of it too. */
NP_TEST_F(kinds, thp_pmd)
{
	NP_SKIPPED();
	char *p = np_pmd_map(3 * NP_PMD, 1);
	struct numaplace_run runs[4];
	struct numaplace_query q;
	unsigned long start;
	__s32 st[16];

	ASSERT_NE(NULL, p);
	memset(p, 1, NP_PMD);
	np_write_page(p + 2 * NP_PMD, 7);
	NP_NEED_PMD(p);
	NP_CHECK(self, "thp_pmd", p, 3 * NP_PMD / psz);

	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, NP_PMD,
				    runs, 4, NULL, NULL, 0, &q));
	ASSERT_EQ(1, q.nr_runs);
	EXPECT_EQ(NP_PMD / psz, runs[0].nr_pages);
	EXPECT_EQ(self->node, runs[0].node);
	EXPECT_EQ(NUMAPLACE_KIND_PRESENT | NUMAPLACE_KIND_PMD |
		  NUMAPLACE_KIND_ANON,
		  runs[0].kind & (NUMAPLACE_KIND_PRESENT | NUMAPLACE_KIND_PMD |
				  NUMAPLACE_KIND_ANON));

	/* 10 pages and 17 bytes from inside the THP touch 11 pages. */
	start = (uintptr_t)p + 100 * psz + 17;
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, start, 10 * psz, runs, 4,
				    st, NULL, 0, &q));
	EXPECT_EQ(11, q.done);
	ASSERT_EQ(1, q.nr_runs);
	EXPECT_EQ((uintptr_t)p + 100 * psz, runs[0].start);
	EXPECT_EQ(11, runs[0].nr_pages);
	EXPECT_TRUE(runs[0].kind & NUMAPLACE_KIND_PMD);
	for (int i = 0; i < 11; i++) {
		EXPECT_EQ(self->node, st[i]) TH_LOG("page %d", i);
	}
}

/* A THP split to PTEs by a partial mprotect and a partial munmap. */
NP_TEST_F(kinds, thp_pte_mapped)
{
	NP_SKIPPED();
	char *p = np_written_thps(2);

	NP_NEED_PMD(p);
	ASSERT_EQ(0, mprotect(p + 100 * psz, 100 * psz, PROT_READ));
	ASSERT_EQ(0, munmap(p + NP_PMD + 300 * psz, 16 * psz));
	EXPECT_EQ(NPW_THP, np_what(p) & (NPW_THP | NPW_PMD));
	EXPECT_EQ(NPW_THP, np_what(p + NP_PMD) & (NPW_THP | NPW_PMD));
	NP_CHECK(self, "thp_pte_mapped", p, 2 * NP_PMD / psz);
}

/*
 * PROT_NONE on a whole THP keeps it PMD-mapped (6.1 anon: -EFAULT);
 * on half of one it is split (6.1: -ENOENT). Default mode: the node.
 */
NP_TEST_F(kinds, thp_protnone)
{
	NP_SKIPPED();
	char *p = np_written_thps(2);

	NP_NEED_PMD(p);
	ASSERT_EQ(0, mprotect(p, NP_PMD, PROT_NONE));
	ASSERT_EQ(0, mprotect(p + NP_PMD, NP_PMD / 2, PROT_NONE));
	EXPECT_EQ(NPW_PMD | NPW_PROTNONE,
		  np_what(p) & (NPW_PMD | NPW_PROTNONE));
	NP_CHECK(self, "thp_protnone", p, 2 * NP_PMD / psz);
}

/* Read faults map the zero page; some of it and some data PROT_NONE. */
NP_TEST_F(kinds, zero_page)
{
	NP_SKIPPED();
	const size_t n = 32;
	char *p = np_pmd_map(n * psz, 0);

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < 16; i++)
		np_read_page(p, i);
	np_write_pages(p, 16, 8, 1);
	EXPECT_TRUE(np_what(p) & NPW_ZERO);
	EXPECT_EQ(-EFAULT, np_sys_one(p));
	NP_CHECK(self, "zero_page", p, n);
	/* PROT_NONE zero page: 6.1 -ENOENT, 6.12 -EFAULT. */
	ASSERT_EQ(0, mprotect(p + 8 * psz, 4 * psz, PROT_NONE));
	ASSERT_EQ(0, mprotect(p + 20 * psz, 2 * psz, PROT_NONE));
	NP_CHECK(self, "zero_page protnone", p, n);
}

/* A read fault on a THP-able range maps the huge zero page. */
NP_TEST_F(kinds, huge_zero_page)
{
	NP_SKIPPED();
	const char *knob = "/sys/kernel/mm/transparent_hugepage/use_zero_page";
	struct numaplace_run runs[4];
	struct numaplace_query q;
	long old = np_read_long(knob);
	char *p = np_pmd_map(2 * NP_PMD, 1);

	if (old < 0)
		SKIP(return, "no %s", knob);
	ASSERT_NE(NULL, p);
	if (!old)
		ASSERT_EQ(0, np_write_str(knob, "1"));
	np_read_page(p, 0);
	np_read_page(p + NP_PMD, 3);
	if (!old)
		np_write_str(knob, "0");
	ASSERT_EQ(NPW_PMD | NPW_ZERO, np_what(p) & (NPW_PMD | NPW_ZERO))
		TH_LOG("no huge zero page at %p", p);
	ASSERT_EQ(0, mprotect(p + NP_PMD, NP_PMD, PROT_NONE));
	NP_CHECK(self, "huge_zero_page", p, 2 * NP_PMD / psz);

	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, NP_PMD,
				    runs, 4, NULL, NULL, 0, &q));
	ASSERT_EQ(1, q.nr_runs);
	EXPECT_EQ(-EFAULT, runs[0].node);
	EXPECT_EQ(NUMAPLACE_KIND_PMD | NUMAPLACE_KIND_ZERO,
		  runs[0].kind & (NUMAPLACE_KIND_PMD | NUMAPLACE_KIND_ZERO));
}

/* Page cache of a tmpfs file, shared and private (with a COW page). */
NP_TEST_F(kinds, file_tmpfs)
{
	NP_SKIPPED();
	const size_t n = 64;
	int fd = np_tmpfile(n);
	char *sh, *pr;

	ASSERT_GE(fd, 0);
	for (size_t i = 0; i < 32; i++)
		ASSERT_EQ(0, np_pwrite_page(fd, i));
	sh = mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	pr = mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_NE(MAP_FAILED, pr);
	np_read_page(sh, 0);
	np_read_page(sh, 10);
	np_write_page(sh, 40);
	np_read_page(pr, 1);
	np_write_page(pr, 2);
	np_write_page(pr, 45);
	EXPECT_EQ(self->node, np_sys_one(sh));
	EXPECT_EQ(self->node, np_sys_one(pr + 2 * psz));
	NP_CHECK(self, "file shared", sh, n);
	NP_CHECK(self, "file private", pr, n);
	close(fd);
}

/* An anonymous memfd (shmem), some pages moved to the other node. */
NP_TEST_F(kinds, memfd_shmem)
{
	NP_SKIPPED();
	const size_t n = 64;
	int fd = memfd_create("np-query", MFD_CLOEXEC);
	char *p;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, n * psz));
	p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	np_write_pages(p, 0, 16, 1);
	for (size_t i = 20; i < 24; i++)
		np_read_page(p, i);
	if (self->other >= 0) {
		EXPECT_EQ(0, np_move(p, 4, 4, 1, self->other));
	}
	EXPECT_EQ(self->node, np_sys_one(p));
	NP_CHECK(self, "memfd", p, n);
	close(fd);
}

/* MAP_SHARED | MAP_ANONYMOUS is shmem too. */
NP_TEST_F(kinds, shmem_anon_shared)
{
	NP_SKIPPED();
	const size_t n = 40;
	char *p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	np_write_pages(p, 0, n / 2, 2);
	EXPECT_EQ(self->node, np_sys_one(p));
	EXPECT_EQ(-ENOENT, np_sys_one(p + psz));
	NP_CHECK(self, "shmem_anon_shared", p, n);
}

/* Never touched: anon (6.1 -EFAULT, default -ENOENT), THP-able, file. */
NP_TEST_F(kinds, never_touched)
{
	NP_SKIPPED();
	const size_t n = 40;	/* more than two 16-entry syscall chunks */
	char *a = np_pmd_map(n * psz, 0), *t = np_pmd_map(NP_PMD, 1), *f;
	int fd = memfd_create("np-untouched", MFD_CLOEXEC);

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, t);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, n * psz));
	f = mmap(NULL, n * psz, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, f);
	EXPECT_EQ(self->c.new_kernel ? -ENOENT : -EFAULT, np_sys_one(a));
	EXPECT_EQ(-ENOENT, np_sys_one(f));
	NP_CHECK(self, "untouched anon", a, n);
	NP_CHECK(self, "untouched thp", t, NP_PMD / psz);
	NP_CHECK(self, "untouched memfd", f, n);
	close(fd);
}

/* No VMA: a hole between two mappings, inside one range. */
NP_TEST_F(kinds, no_vma_hole)
{
	NP_SKIPPED();
	const size_t n = 48;
	char *p = np_written_pages(n);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p + 16 * psz, 16 * psz));
	EXPECT_EQ(-EFAULT, np_sys_one(p + 20 * psz));
	NP_CHECK(self, "no_vma_hole", p, n);
}

/*
 * [vvar] is VM_PFNMAP|VM_IO up to 6.12: special PTEs (6.1 -EFAULT, 6.12
 * -ENOENT); 7.x maps it VM_MIXEDMAP.
 */
NP_TEST_F(kinds, pfnmap_vvar)
{
	NP_SKIPPED();
	unsigned long s = 0, e = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	struct timespec ts;

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vvar]\n") &&
		    sscanf(line, "%lx-%lx", &s, &e) == 2)
			break;
	fclose(f);
	if (!s)
		SKIP(return, "no [vvar] mapping");
	/* The vDSO reads the data page; other pages may SIGBUS. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	(void)*(volatile char *)s;
	if (!(np_what((void *)s) & NPW_PFNMAP)) {
		/*
		 * 7.x: [vvar] is VM_MIXEDMAP, ordinary PTEs of the vDSO data
		 * pages (lib/vdso/datastore.c), no PFN map: module against
		 * the syscall only (pfnmap_devmem tests a PFN map).
		 */
		TH_LOG("[vvar] %#lx is not VM_PFNMAP on this kernel", s);
		NP_CHECK(self, "vvar", s, (e - s) / psz);
		return;
	}
	/* 6.1: present special -EFAULT (a hole with ->fault: -ENOENT). */
	EXPECT_EQ(self->c.new_kernel ? -ENOENT : -EFAULT, np_sys_one((void *)s));
	NP_CHECK(self, "vvar", s, (e - s) / psz);
	EXPECT_EQ(0, np_expect_kind(self->fd, s, 1, NUMAPLACE_KIND_SPECIAL,
				    -ENOENT));
}

/* /dev/mem: VM_PFNMAP without ->fault; half of it PROT_NONE. */
NP_TEST_F(kinds, pfnmap_devmem)
{
	NP_SKIPPED();
	const size_t n = 16;
	int fd = open("/dev/mem", O_RDONLY | O_CLOEXEC);
	char *p;

	if (fd < 0)
		SKIP(return, "/dev/mem: %s", strerror(errno));
	/* The BIOS area: allowed under STRICT_DEVMEM (low 1 MiB). */
	p = mmap(NULL, n * psz, PROT_READ, MAP_SHARED, fd, 0xf0000);
	close(fd);
	if (p == MAP_FAILED)
		SKIP(return, "mmap /dev/mem: %s", strerror(errno));
	ASSERT_TRUE(np_what(p) & NPW_PFNMAP);
	NP_CHECK(self, "devmem", p, n);
	/* remap_pfn_range() mapped every page at mmap() time. */
	EXPECT_EQ(0, np_expect_kind(self->fd, (uintptr_t)p, n,
				    NUMAPLACE_KIND_SPECIAL, -ENOENT));
	ASSERT_EQ(0, mprotect(p + 8 * psz, 8 * psz, PROT_NONE));
	/* 6.1: protnone before special: -ENOENT. */
	EXPECT_EQ(self->c.new_kernel ? -ENOENT : -EFAULT, np_sys_one(p));
	EXPECT_EQ(-ENOENT, np_sys_one(p + 8 * psz));
	NP_CHECK(self, "devmem protnone", p, n);
	EXPECT_EQ(0, np_expect_kind(self->fd, (uintptr_t)p, n,
				    NUMAPLACE_KIND_SPECIAL, -ENOENT));
	EXPECT_EQ(0, np_expect_kind(self->fd, (uintptr_t)p + 8 * psz, 8,
				    NUMAPLACE_KIND_PROTNONE, -ENOENT));
}

/* hugetlb: any address inside a present huge page has its node. */
NP_TEST_F(kinds, hugetlb)
{
	NP_SKIPPED();
	int ret = np_hp_grow(self->node, 2, self->hp_path,
			     sizeof(self->hp_path), &self->hp_orig);

	if (ret == -ENOENT)
		SKIP(return, "no %s", self->hp_path);
	if (ret)
		SKIP(return, "no free 2 MiB huge pages on node %d", self->node);
	self->hp_map = mmap(NULL, 2 * NP_PMD, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	ASSERT_NE(MAP_FAILED, self->hp_map) {
		self->hp_map = NULL;
	}
	memset(self->hp_map, 1, NP_PMD);
	EXPECT_EQ(self->node, np_sys_one(self->hp_map + NP_PMD - 1));
	EXPECT_EQ(-ENOENT, np_sys_one(self->hp_map + NP_PMD));
	/* The array pass queries an address in every 4 KiB of both. */
	NP_CHECK(self, "hugetlb", self->hp_map, 2 * NP_PMD / psz);
}

/* Swapped-out pages: only with swap in the guest. */
NP_TEST_F(kinds, swap)
{
	NP_SKIPPED();
	const size_t n = 32;
	char line[256];
	int swaps = 0;
	FILE *f = fopen("/proc/swaps", "re");
	char *p;

	while (f && fgets(line, sizeof(line), f))
		swaps++;
	if (f)
		fclose(f);
	if (swaps < 2)
		SKIP(return, "no swap device in the guest (/proc/swaps empty)");
	p = np_written_pages(n);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, n / 2 * psz, MADV_PAGEOUT));
	NP_CHECK(self, "swap", p, n);
}

/* KSM-merged pages are normal pages with a node. */
TEST_F_TIMEOUT(kinds, ksm, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	const size_t n = 32;
	int merged = 0;
	char *p;

	if (access(NP_KSM_RUN, W_OK))
		SKIP(return, "no KSM (%s)", NP_KSM_RUN);
	ASSERT_EQ(0, np_ksm_save(&self->ksm));
	p = np_pmd_map(n * psz, 0);
	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < n; i++)
		memset(p + i * psz, i < 16 ? 0x5a : (int)i, psz);
	ASSERT_EQ(0, madvise(p, n * psz, MADV_MERGEABLE));
	ASSERT_EQ(0, np_ksm_fast());
	for (int ms = 0; ms < NP_KSM_WAIT_MS && !merged; ms += 50) {
		usleep(50000);
		merged = (np_what(p) & NPW_KSM) &&
			 (np_what(p + 15 * psz) & NPW_KSM);
	}
	ASSERT_TRUE(merged) TH_LOG("KSM did not merge in %d ms",
				   NP_KSM_WAIT_MS);
	NP_CHECK(self, "ksm", p, n);
}

/* PROT_NONE after touching: present protnone PTEs (6.1 -ENOENT). */
NP_TEST_F(kinds, protnone_4k)
{
	NP_SKIPPED();
	const size_t n = 40;
	char *p = np_pmd_map(n * psz, 0);

	ASSERT_NE(NULL, p);
	/* All but page 15. */
	np_write_pages(p, 0, 15, 1);
	np_write_pages(p, 16, n - 16, 1);
	ASSERT_EQ(0, mprotect(p + 10 * psz, 20 * psz, PROT_NONE));
	EXPECT_EQ(self->c.new_kernel ? self->node : -ENOENT,
		  np_sys_one(p + 10 * psz));
	NP_CHECK(self, "protnone_4k", p, n);
}

NP_HARNESS_MAIN
