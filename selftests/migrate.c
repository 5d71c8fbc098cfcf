// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE against move_pages(2).
 *
 * Fixture "mig" runs once per engine (default: the module's choice; kernel:
 * NUMAPLACE_MIGRATE_ENGINE_KERNEL; vma: NUMAPLACE_MIGRATE_ENGINE_VMA,
 * skipped when INFO lacks the feature):
 *  - oracle_*: two identical copies of a layout of every page kind
 *    (anon written/untouched/zero/PROT_NONE/read-only/moved, holes, PMD
 *    THP, THP on the target, PTE-mapped THP, PROT_NONE THP, huge zero
 *    page, private anon and THP shared with a child by fork(), MAP_SHARED
 *    anon shared with the child, memfd, tmpfs file, swapped out, hugetlb,
 *    [vvar]). One goes through move_pages(2), one through the ioctl, with
 *    the same targets. Both are checked against a simulation of the
 *    syscall (do_pages_move()'s batches) over the page states read from
 *    /proc before the call (np_model_page(), /proc/kpagecount): the
 *    syscall against it proves the simulation, the ioctl against the
 *    module's column of it proves the module. Statuses, final placement
 *    (from pagemap, the child's too) and counters are compared.
 *    The module's column differs from the syscall's only where the ABI
 *    says so: without NUMAPLACE_MIGRATE_AS_SYSCALL the answers are 6.12's
 *    on both kernels (6.1: untouched anon -EFAULT and PROT_NONE -ENOENT
 *    only with the flag); an entry whose folio the call already took is
 *    answered with the node, where the syscall says -EBUSY (the second
 *    4 KiB of a THP, kernel-facts 2.3; a repeated address); a hugetlb
 *    tail address moves the page, where 6.1's syscall says -EACCES
 *    (kernel-facts 2.2). With ENGINE_VMA only private anonymous pages
 *    mapped once move; the rest (large folios without
 *    NUMAPLACE_MIGRATE_SPLIT_OK, file, shmem, hugetlb, pages mapped by
 *    two processes under MOVE_ALL) stays with -EBUSY (abi.md, Engines).
 * Large folios per engine and the COW case are migrate_thp.c; a full
 * target node, the extra memory and a killed caller are
 * migrate_bounds.c (the same fixture, NP_MIG_FIXTURE()).
 * The ABI, bad-input and permission rows of reliability.md, policies CPU
 * and INTERLEAVE and the cpuset check are migrate_abi.c (fixture
 * "migrate"); data integrity under concurrent writers is
 * migrate_integrity.c. The layouts and the simulation are
 * migrate_lay.c and migrate_sim.c (migrate_lib.h).
 *
 * NP_ONLY=word,word runs only the tests whose names contain one of the
 * words (the harness has no filter): NP_ONLY=oracle,cpuset.
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
/* Fixture "mig": every test once per engine.                      */
/* ------------------------------------------------------------------ */

NP_MIG_FIXTURE(mig)

/*
 * @want more free 2 MiB huge pages on nodes 0 and 1 (originals saved for
 * the teardown). 1 if they are there.
 */
static int np_hp_reserve(long *orig, const int *want)
{
	char path[128], val[32];

	for (int n = 0; n < 2; n++) {
		long have;

		snprintf(path, sizeof(path), NP_HP_PATH, n);
		have = np_read_long(path);
		if (have < 0)
			return 0;
		if (orig[n] < 0) {
			orig[n] = have;
			np_hp_save(orig);
		}
		snprintf(val, sizeof(val), "%ld", orig[n] + want[n]);
		np_write_str(path, val);
		if (np_read_long(path) < orig[n] + want[n])
			return 0;
	}
	return 1;
}

/* The segments this guest can build (swap, hugetlb only if there). */
static int np_mig_kinds(FIXTURE_DATA(mig) *self, enum np_seg *kinds)
{
	static const int hp[2] = { 3, 3 };
	int n = 0;

	for (int k = 0; k < NP_SEG_MAX; k++) {
		if (k == NP_SEG_SWAP && !np_have_swap())
			continue;
		if (k == NP_SEG_HUGETLB && !np_hp_reserve(self->hp_orig, hp)) {
			ksft_print_msg("no free hugetlb pages: no hugetlb segment\n");
			continue;
		}
		kinds[n++] = k;
	}
	return n;
}

/* How an oracle run calls the module. */
struct np_orc {
	const char *name;
	int array;		/* array mode, shuffled, repeated addresses */
	__u32 policy;		/* NUMAPLACE_POLICY_PER_PAGE or _NODE */
	__u32 flags;		/* NUMAPLACE_MIGRATE_AS_SYSCALL, _MOVE_ALL */
	__u64 seed;
};

/* Extra array-mode addresses: no VMA, kernel, tagged, low, [vvar]. */
#define NP_ORC_EXTRA	24

/*
 * Array mode: every page of the layout at an offset, then repeats of
 * some, and addresses that are no page of it, shuffled. @a for copy @la,
 * @b the same entries in copy @lb, @tgt their targets.
 */
static size_t np_orc_addrs(const struct np_lay *la, const struct np_lay *lb,
			   __u64 *a, __u64 *b, int *tgt, __u64 *s)
{
	size_t n = 0, np = la->npages;
	unsigned long vs = 0, ve = 0;

	for (size_t i = 0; i < np; i++, n++) {
		__u64 off = i * psz + np_rnd_below(s, psz);

		a[n] = (uintptr_t)la->base + off;
		b[n] = (uintptr_t)lb->base + off;
		tgt[n] = la->target[i];
	}
	for (size_t r = 0; r < np / 16; r++, n++) {
		size_t j = np_rnd_below(s, np);

		a[n] = a[j];
		b[n] = b[j];
		tgt[n] = tgt[j];
	}
	np_vvar(&vs, &ve);
	for (size_t x = 0; x < NP_ORC_EXTRA; x++, n++) {
		size_t j = np_rnd_below(s, np);

		switch (x % 6) {
		case 0:	/* tagged: no VMA, as the syscall does not untag */
			a[n] = a[j] | 1ULL << (57 + x % 5);
			b[n] = b[j] | 1ULL << (57 + x % 5);
			break;
		case 1:
			a[n] = b[n] = 0xffff888000000000ULL + x * psz;
			break;
		case 2:
			a[n] = b[n] = x * 64;
			break;
		case 3:
			a[n] = b[n] = vs ? vs + x / 6 % ((ve - vs) / psz) * psz :
				      x;
			break;
		default:
			a[n] = a[j];
			b[n] = b[j];
			break;
		}
		tgt[n] = x % 6 < 4 ? (int)np_rnd_below(s, 2) : tgt[j];
	}
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = np_rnd_below(s, i + 1);
		__u64 t1 = a[i], t2 = b[i];
		int t3 = tgt[i];

		a[i] = a[j];
		b[i] = b[j];
		tgt[i] = tgt[j];
		a[j] = t1;
		b[j] = t2;
		tgt[j] = t3;
	}
	return n;
}

/*
 * One oracle run: two copies of the variant's layout (and a child that
 * shares parts of both), one through the syscall, one through the ioctl.
 */
static void np_oracle(struct __test_metadata *_metadata,
		      FIXTURE_DATA(mig) *self, const struct np_orc *o)
{
	enum np_seg kinds[NP_SEG_MAX];
	int nk = np_mig_kinds(self, kinds);
	struct np_lay *la = &self->a, *lb = &self->b;
	struct np_call k = {
		.name = o->name, .array = o->array, .policy = o->policy,
		.flags = o->flags | self->eflags, .vma_only = self->vma_only,
		.allowed = self->allowed,
		.avail = np_engines_available(&self->info), .la = la, .lb = lb,
	};
	__u64 *aa, *ab, s = o->seed;
	size_t cap, n;
	int *tgt;

	ASSERT_EQ(0, np_lay_build(la, kinds, nk, o->seed));
	ASSERT_EQ(0, np_lay_build(lb, kinds, nk, o->seed));
	self->kid = np_lay_fork(la, lb);
	ASSERT_GT(self->kid, 0);
	k.kid = self->kid;

	cap = la->npages + la->npages / 16 + NP_ORC_EXTRA + 1;
	aa = calloc(cap, sizeof(*aa));
	ab = calloc(cap, sizeof(*ab));
	tgt = calloc(cap, sizeof(*tgt));
	ASSERT_TRUE(aa && ab && tgt);
	if (o->array) {
		n = np_orc_addrs(la, lb, aa, ab, tgt, &s);
	} else {
		n = la->npages;
		np_range_addrs(aa, (uintptr_t)la->base, n);
		np_range_addrs(ab, (uintptr_t)lb->base, n);
		memcpy(tgt, la->target, n * sizeof(*tgt));
	}
	if (o->policy == NUMAPLACE_POLICY_NODE)
		for (size_t i = 0; i < n; i++)
			tgt[i] = 1;
	EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, n));
	free(aa);
	free(ab);
	free(tgt);
}

/* A test of one oracle run: its name, then struct np_orc's fields. */
#define NP_ORACLE_TEST(test, ...)					\
	TEST_F_TIMEOUT(mig, test, NP_TIMEOUT(90))			\
	{								\
		NP_SKIPPED_OR_FILTERED();				\
		static const struct np_orc o = { __VA_ARGS__ };		\
									\
		np_oracle(_metadata, self, &o);				\
	}

/* Per-page targets over the range, this kernel's answers. */
NP_ORACLE_TEST(oracle_range_as_syscall, "range as_syscall", 0,
	       NUMAPLACE_POLICY_PER_PAGE, NUMAPLACE_MIGRATE_AS_SYSCALL, 1)

/* Per-page targets over the range, 6.12's answers on every kernel. */
NP_ORACLE_TEST(oracle_range, "range", 0, NUMAPLACE_POLICY_PER_PAGE, 0, 2)

/* Shuffled addresses, repeats and strangers, this kernel's answers. */
NP_ORACLE_TEST(oracle_array_as_syscall, "array as_syscall", 1,
	       NUMAPLACE_POLICY_PER_PAGE, NUMAPLACE_MIGRATE_AS_SYSCALL, 3)

NP_ORACLE_TEST(oracle_array, "array", 1, NUMAPLACE_POLICY_PER_PAGE, 0, 4)

/* POLICY_NODE: everything to node 1. */
NP_ORACLE_TEST(oracle_node, "node", 0, NUMAPLACE_POLICY_NODE,
	       NUMAPLACE_MIGRATE_AS_SYSCALL, 5)

/* MOVE_ALL (root has CAP_SYS_NICE): pages shared with the child move. */
NP_ORACLE_TEST(oracle_move_all, "move_all", 0, NUMAPLACE_POLICY_PER_PAGE,
	       NUMAPLACE_MIGRATE_AS_SYSCALL | NUMAPLACE_MIGRATE_MOVE_ALL, 6)

/*
 * Array mode names a folio as often as it likes, in any order: every
 * entry is answered with the node the page is on at the end (where the
 * syscall says -EBUSY for an entry whose folio waits in its batch).
 */
NP_TEST_F(mig, array_repeats)
{
	NP_SKIPPED_OR_FILTERED();
	char *a = np_pmd_map(NP_PMD, 0), *t = np_pmd_map(NP_PMD, 1), *f;
	int mfd = memfd_create("np-repeats", MFD_CLOEXEC);
	struct numaplace_migrate m;
	__u64 e[16];
	__s32 st[16];
	size_t n = 0;

	ASSERT_TRUE(a && t && mfd >= 0);
	ASSERT_EQ(0, ftruncate(mfd, 4 * psz));
	f = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, f);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(a, 2, 5);
	memset(t, 0x33, NP_PMD);
	madvise(t, NP_PMD, MADV_NOHUGEPAGE);
	memset(f, 0x44, 2 * psz);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* anon 4 KiB: A B A, then A A */
	e[n++] = (uintptr_t)a;
	e[n++] = (uintptr_t)a + psz;
	e[n++] = (uintptr_t)a + 100;
	e[n++] = (uintptr_t)a + psz + 8;
	e[n++] = (uintptr_t)a + psz + 16;
	if (!self->vma_only) {
		/* a THP by three of its addresses; a memfd page twice */
		e[n++] = (uintptr_t)t;
		e[n++] = (uintptr_t)f;
		e[n++] = (uintptr_t)t + 77 * psz;
		e[n++] = (uintptr_t)f + 5;
		e[n++] = (uintptr_t)t + NP_PMD - 1;
	}
	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	np_migrate_init(&m, 0, self->eflags | NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_NODE);
	m.pages_ptr = (uintptr_t)e;
	m.count = n;
	m.node = 1;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(1, st[i]) TH_LOG("entry %zu (%#llx)", i,
					   (unsigned long long)e[i]);
	}
	EXPECT_EQ(NP_SENTINEL, st[n]);
	EXPECT_EQ(0, m.nr_failed_pages);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "repeats", &m, st, n, 1,
					   self->allowed));
	ASSERT_EQ(0, np_nodes_of(0, e, n, (int *)st));
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(1, st[i]) TH_LOG("entry %zu: on node %d", i, st[i]);
	}
	EXPECT_EQ(0, np_fill_bad(a, 2, 5, NULL));
	EXPECT_TRUE(np_all_bytes(t, NP_PMD, 0x33));
	EXPECT_TRUE(np_all_bytes(f, 2 * psz, 0x44));
	munmap(f, 4 * psz);
	close(mfd);
}

/* MIGRATE @n addresses of @e to nodes[] in array mode, statuses in @st. */
static int np_migrate_per_page(int fd, __u32 eflags, const __u64 *e,
			       const __s32 *nodes, size_t n, __s32 *st,
			       struct numaplace_migrate *m)
{
	for (size_t i = 0; i < n; i++)
		st[i] = NP_SENTINEL;
	np_migrate_init(m, 0, eflags | NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m->pages_ptr = (uintptr_t)e;
	m->nodes_ptr = (uintptr_t)nodes;
	m->count = n;
	m->status_ptr = (uintptr_t)st;
	return np_migrate(fd, m);
}

/*
 * Per-page targets in array mode: a page first named where it is (in
 * place), then named again to move, stays: its first answer, the node,
 * must stay true (one move per folio a call, Documentation/abi.md), and
 * the second entry answers -EBUSY. The batched engine keeps in-place
 * pages out of its unmap by holding them locked (only when no page is
 * named twice: the addresses strictly ascend); the other pages, in place
 * or to move, alternate around it and must all be where they are asked
 * to be. On 3ecca51 the page moved and its first answer, 0, was false.
 */
NP_TEST_F(mig, array_in_place_then_moved)
{
	NP_SKIPPED_OR_FILTERED();
	char *a = np_pmd_map(NP_PMD, 0);
	struct numaplace_migrate m;
	__u64 e[8];
	__s32 nodes[8], st[8];
	int on[8];
	size_t n = 0, i;

	ASSERT_NE(NULL, a);
	np_mempolicy(MPOL_BIND, 0);
	madvise(a, NP_PMD, MADV_NOHUGEPAGE);
	np_fill(a, 8, 7);
	np_mempolicy(MPOL_DEFAULT, -1);
	/*
	 * Page 1 to move, page 2 in place right after it (where a hold
	 * would keep it out of the unmap), page 2 again to move, then pages
	 * 3..7 alternating move / in place.
	 */
	e[n] = (uintptr_t)a + psz, nodes[n++] = 1;
	e[n] = (uintptr_t)a + 2 * psz, nodes[n++] = 0;
	e[n] = (uintptr_t)a + 2 * psz + 8, nodes[n++] = 1;
	for (i = 3; i < 8; i++)
		e[n] = (uintptr_t)a + i * psz, nodes[n++] = i & 1;
	ASSERT_EQ(0, np_migrate_per_page(self->fd, self->eflags, e, nodes, n,
					 st, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(1, m.nr_failed_pages);
	EXPECT_EQ(1, m.nr_failed[NUMAPLACE_FAIL_EBUSY]);
	ASSERT_EQ(0, np_nodes_of(0, e, n, on));
	for (i = 0; i < n; i++) {
		if (i == 1 || i == 2) {
			/* Answered in place first: it stays, the answer true. */
			EXPECT_EQ(i == 1 ? 0 : -EBUSY, st[i])
				TH_LOG("entry %zu", i);
			EXPECT_EQ(0, on[i]) TH_LOG("entry %zu: on node %d", i,
						    on[i]);
			continue;
		}
		EXPECT_EQ(nodes[i], st[i]) TH_LOG("entry %zu", i);
		EXPECT_EQ(nodes[i], on[i]) TH_LOG("entry %zu: on node %d", i,
						  on[i]);
	}
	EXPECT_EQ(0, np_fill_bad(a, 8, 7, NULL));
	/*
	 * Strictly ascending, pages 2..7 (on 0 1 0 1 0 1 now), to 1 0 0 1 1
	 * 1: 2, 3 and 6 move; 4, 5 and 7, in place near them, are held.
	 */
	n = 0;
	for (i = 2; i < 8; i++)
		e[n] = (uintptr_t)a + i * psz,
		nodes[n++] = i == 2 || i >= 5 ? 1 : 0;
	ASSERT_EQ(0, np_migrate_per_page(self->fd, self->eflags, e, nodes, n,
					 st, &m));
	EXPECT_EQ(3, m.nr_moved_pages);
	EXPECT_EQ(3, m.nr_in_place_pages);
	ASSERT_EQ(0, np_nodes_of(0, e, n, on));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(nodes[i], st[i]) TH_LOG("entry %zu", i);
		EXPECT_EQ(nodes[i], on[i]) TH_LOG("entry %zu", i);
	}
	EXPECT_EQ(0, np_fill_bad(a, 8, 7, NULL));
}

/* [vvar] is VM_IO | VM_PFNMAP up to 6.12: not migratable, -EFAULT in range mode too. */
NP_TEST_F(mig, pfnmap_vvar)
{
	NP_SKIPPED_OR_FILTERED();
	unsigned long vs = 0, ve = 0;
	struct numaplace_migrate m;
	struct timespec ts;
	__u64 addrs[64];
	int nodes[64], sys[64];
	__s32 st[65];
	size_t n;

	bool pfnmap;

	if (np_vvar(&vs, &ve))
		SKIP(return, "no [vvar] mapping");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/*
	 * 7.x maps [vvar] VM_MIXEDMAP with the vDSO data pages
	 * (lib/vdso/datastore.c): migratable VMA, pages that cannot move;
	 * the module must still answer as the syscall, page by page.
	 */
	pfnmap = np_addr_is_pfnmap(vs);
	n = (ve - vs) / psz;
	ASSERT_LE(n, 64);
	np_range_addrs(addrs, vs, n);
	for (size_t i = 0; i < n; i++)
		nodes[i] = 1;
	ASSERT_EQ(0, np_sys_move_pages(0, n, addrs, nodes, sys, NP_MF_MOVE));
	for (__u32 f = 0; f <= NUMAPLACE_MIGRATE_AS_SYSCALL;
	     f += NUMAPLACE_MIGRATE_AS_SYSCALL) {
		for (size_t i = 0; i <= n; i++)
			st[i] = NP_SENTINEL;
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, f | self->eflags, vs,
					     ve - vs, 1, st, &m));
		EXPECT_EQ(n, m.done);
		EXPECT_EQ(NP_SENTINEL, st[n]);
		for (size_t i = 0; i < n; i++) {
			if (pfnmap)
				EXPECT_EQ(-EFAULT, sys[i]) TH_LOG("page %zu", i);
			EXPECT_EQ(sys[i], st[i]) TH_LOG("page %zu", i);
		}
		if (pfnmap)
			EXPECT_EQ(n, m.nr_failed[NUMAPLACE_FAIL_EFAULT]);
		EXPECT_EQ(0, np_check_mig_counters(&self->c, "vvar", &m, st, n,
						   1, self->allowed));
	}
}

/*
 * /proc/vmstat's pgmigrate_success counts every base page moved, once, as
 * migrate_pages() counts its own: an operator's view of migration (sar
 * -B, node_exporter's vmstat collector) sees every engine. On 4683408 the
 * page-table, batched and migrate_vma engines counted nothing.
 */
NP_TEST_F(mig, vmstat_counted)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 512;
	struct numaplace_migrate m;
	long before, after;
	char *p;

	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	p = np_pmd_map(n * psz, 0);
	ASSERT_NE(NULL, p);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 9);
	np_mempolicy(MPOL_DEFAULT, -1);
	before = np_vmstat("pgmigrate_success");
	if (before < 0) {
		munmap(p, n * psz);
		SKIP(return, "no pgmigrate_success in /proc/vmstat");
	}
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
				     n * psz, 1, NULL, &m));
	after = np_vmstat("pgmigrate_success");
	EXPECT_EQ(n, m.nr_moved_pages);
	/* Each page once: not again by a kernel that starts counting them. */
	EXPECT_LE(before + (long)m.nr_moved_pages, after)
		TH_LOG("engines %#x moved %llu pages", m.engines,
		       (unsigned long long)m.nr_moved_pages);
	EXPECT_GT(before + 2 * (long)m.nr_moved_pages, after)
		TH_LOG("engines %#x moved %llu pages, counted %ld", m.engines,
		       (unsigned long long)m.nr_moved_pages, after - before);
	EXPECT_EQ(0, np_fill_bad(p, n, 9, NULL));
	munmap(p, n * psz);
}

NP_HARNESS_MAIN
