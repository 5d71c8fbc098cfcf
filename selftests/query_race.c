// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_QUERY under races. Querier threads ask about one region
 * in a loop (range mode with runs, status and totals, range mode resumed
 * through tiny runs buffers, array mode, whole-address-space totals)
 * while mutator threads change the region under them: mmap/munmap of its
 * pieces, mremap (MAYMOVE | FIXED, DONTUNMAP, in-place shrink and grow),
 * mprotect toggling PROT_NONE, MADV_DONTNEED / FREE, MADV_PAGEOUT (the
 * suite runs with zram swap), MADV_COLLAPSE and khugepaged on anonymous
 * memory and on shmem mapped twice (6.12 frees the PTE tables of both
 * under RCU), THP splits by partial mprotect / munmap / hole punching,
 * hugetlb faults and zaps, fork with children that write and exit. Other
 * tests query a child that exits or is killed mid-query, and SIGKILL a
 * process inside huge range queries.
 *
 * Every answer is checked for what must hold whatever the timing:
 *  - the call returns 0 (for a dying child also -ESRCH or -EINVAL);
 *  - every status is a node with memory, -ENOENT or -EFAULT, and a run's
 *    kind agrees with its status (PRESENT exactly when it is a node, one
 *    page state per run, -EFAULT only for no VMA or the zero page in the
 *    default mode, NOVMA alone, ANON or FILE in a VMA);
 *  - runs tile the answered pages, neighbours differ, each page's status
 *    is its run's node; nothing is written past done, nr_runs or any
 *    buffer; a resumed call always makes progress;
 *  - node totals and nr_unplaced count exactly the statuses answered;
 *  - pages nobody touches (mlocked, written once) always answer their
 *    node; the zero page never shows in memory that is only ever written.
 * The guest's kernel log must stay clean (tools/vm/run fails the run on
 * any WARN, BUG or lockdep report). Each race runs a few seconds
 * (NP_RACE_MS in the environment changes it).
 */
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "qrace.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

/* ---- the fixture -------------------------------------------------- */

QR_FIXTURE(qrace);

/*
 * Run the queriers of @qtypes and the mutators for @ms, then check. The
 * mutators are already initialised (their slices mapped).
 */
static void qr_race(struct __test_metadata *_metadata, struct qr_ctx *x,
		    struct qr_region *r, struct qr_mut *muts, int nmuts,
		    const enum qr_qtype *qtypes, int nq, long ms)
{
	struct qr_q qs[QR_MAX_Q];
	long t0;
	int i;

	ASSERT_LE(nq, QR_MAX_Q);
	for (i = 0; i < nq; i++)
		ASSERT_EQ(0, qr_q_alloc(&qs[i], x, qtypes[i], 1234 + 77 * i));
	if (r)
		qr_region_hole(r);
	x->stop = 0;
	for (i = 0; i < nmuts; i++)
		ASSERT_EQ(0, pthread_create(&muts[i].th, NULL, qr_mutator,
					    &muts[i]));
	for (i = 0; i < nq; i++)
		ASSERT_EQ(0, pthread_create(&qs[i].th, NULL, qr_querier,
					    &qs[i]));
	t0 = np_mono_ms();
	while (np_mono_ms() - t0 < ms && !__atomic_load_n(&x->bad, __ATOMIC_RELAXED))
		usleep(20000);
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nq; i++)
		pthread_join(qs[i].th, NULL);
	for (i = 0; i < nmuts; i++)
		pthread_join(muts[i].th, NULL);

	for (i = 0; i < nq; i++) {
		ksft_print_msg("querier %d (type %d): %lu calls, %lu pages\n",
			       i, qs[i].type, qs[i].calls, qs[i].answered);
		EXPECT_GT(qs[i].calls, 0);
		qr_q_free(&qs[i]);
	}
	for (i = 0; i < nmuts; i++) {
		ksft_print_msg("mutator %s: %lu steps, %lu did their job\n",
			       muts[i].name, muts[i].iters, muts[i].done);
		EXPECT_GT(muts[i].iters, 0);
	}
	EXPECT_EQ(0, x->bad);
	EXPECT_EQ(0, x->hard);
	EXPECT_TRUE(x->stable_ok) TH_LOG("the stable pages could not be mlocked");
}

/* Set up the region and @n mutators of one kind on slices 0 .. n - 1. */
#define QR_SETUP(n, name, step, init)					\
	do {								\
		ASSERT_EQ(0, qr_region_init(&self->e.x, &self->e.r, (n)));	\
		for (int _i = 0; _i < (n); _i++) {			\
			qr_mut_init(&muts[_i], &self->e.x, &self->e.r, _i,	\
				    name, step);			\
			ASSERT_EQ(0, init(&muts[_i]));			\
		}							\
	} while (0)

/* QR_SETUP(), then the race of every querier type for @ms. */
#define QR_RUN(n, name, step, init, ms)					\
	do {								\
		QR_SETUP(n, name, step, init);				\
		qr_race(_metadata, &self->e.x, &self->e.r, muts, (n),	\
			qr_all_q, QR_NQ, (ms));				\
	} while (0)

static int qr_init_memfd(struct qr_mut *m)
{
	m->memfd = memfd_create("np-race", MFD_CLOEXEC);
	if (m->memfd < 0 || ftruncate(m->memfd, m->len))
		return -errno;
	return qr_init_anon(m);
}

static void qr_close_memfds(struct qr_mut *muts, int n)
{
	for (int i = 0; i < n; i++)
		if (muts[i].memfd >= 0)
			close(muts[i].memfd);
}

/* Pieces unmapped and mapped again as anon, shmem, file, PROT_NONE. */
NP_TEST_F(qrace, mmap_munmap)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_RUN(2, "mmap", qr_step_mmap, qr_init_memfd, qr_race_ms());
	qr_close_memfds(muts, 2);
}

/* mremap: MAYMOVE | FIXED, DONTUNMAP, shrink and grow in place. */
NP_TEST_F(qrace, mremap)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_RUN(2, "mremap", qr_step_mremap, qr_init_mremap, qr_race_ms());
	for (int i = 0; i < 2; i++)
		free(muts[i].state);
}

/* PROT_NONE and read-only pieces toggled, THPs split by them. */
NP_TEST_F(qrace, mprotect)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_RUN(2, "mprotect", qr_step_mprotect, qr_init_anon, qr_race_ms());
}

/* MADV_DONTNEED / MADV_FREE and refaults, THPs zapped whole and split. */
NP_TEST_F(qrace, dontneed)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_RUN(2, "dontneed", qr_step_dontneed, qr_init_anon, qr_race_ms());
}

/* Read-only and PROT_NONE THPs zapped and faulted again, three times longer. */
TEST_F_TIMEOUT(qrace, thp_readonly_zap, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	if (!np_thp_on())
		SKIP(return, "THP is disabled");
	QR_RUN(2, "rozap", qr_step_rozap, qr_init_anon, 3 * qr_race_ms());
}

/* MADV_PAGEOUT to swap, swap-ins, swap entries zapped. */
NP_TEST_F(qrace, pageout)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	if (!np_have_swap())
		SKIP(return, "no swap in the guest (tools/vm/run --swap MB)");
	QR_RUN(2, "pageout", qr_step_pageout, qr_init_anon, qr_race_ms());
	EXPECT_GT(muts[0].done + muts[1].done, 0);
}

/* khugepaged as fast as it goes, for the collapse tests. */
static void qr_khugepaged_fast(struct qr_env *e)
{
	static const char *const k = "/sys/kernel/mm/transparent_hugepage/khugepaged/";
	char path[160];

	snprintf(path, sizeof(path), "%sscan_sleep_millisecs", k);
	qr_set(e, path, "1");
	snprintf(path, sizeof(path), "%salloc_sleep_millisecs", k);
	qr_set(e, path, "1");
	snprintf(path, sizeof(path), "%spages_to_scan", k);
	qr_set(e, path, "8192");
}

/* A collapse test: skipped without THP; khugepaged fast. */
#define QR_NEED_COLLAPSE()						\
	do {								\
		if (!np_thp_on())					\
			SKIP(return, "THP is disabled");		\
		qr_khugepaged_fast(&self->e);				\
	} while (0)

/* MADV_COLLAPSE and khugepaged on anon memory; splits in between. */
NP_TEST_F(qrace, collapse_anon)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_NEED_COLLAPSE();
	QR_RUN(2, "collapse", qr_step_collapse, qr_init_collapse, qr_race_ms());
	ksft_print_msg("%lu collapses\n", muts[0].done + muts[1].done);
}

/* shmem mapped twice: collapse, retract, punch holes, split. */
NP_TEST_F(qrace, collapse_shmem)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_NEED_COLLAPSE();
	qr_set(&self->e, "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
	       "advise");
	ASSERT_EQ(0, qr_region_init(&self->e.x, &self->e.r, 4));
	for (int i = 0; i < 2; i++) {
		qr_mut_init(&muts[i], &self->e.x, &self->e.r, 2 * i, "shmem",
			    qr_step_shmem);
		muts[i].lo2 = self->e.r.slice[2 * i + 1];
		ASSERT_EQ(0, qr_init_shmem(&muts[i]));
	}
	qr_race(_metadata, &self->e.x, &self->e.r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
	ksft_print_msg("%lu collapses\n", muts[0].done + muts[1].done);
	qr_close_memfds(muts, 2);
}

/* fork: page tables copied, write-protected, COW broken; children exit. */
NP_TEST_F(qrace, fork)
{
	NP_SKIPPED();
	struct qr_mut muts[3];

	QR_SETUP(3, "fork", qr_step_fork, qr_init_anon);
	/* And zaps next to them, while children come and go. */
	muts[2].name = "dontneed";
	muts[2].step = qr_step_dontneed;
	qr_race(_metadata, &self->e.x, &self->e.r, muts, 3, qr_all_q, QR_NQ,
		qr_race_ms());
}

/* hugetlb: 2 MiB pages faulted, zapped, PROT_NONE, remapped. */
NP_TEST_F(qrace, hugetlb)
{
	NP_SKIPPED();
	const char *nr = "/proc/sys/vm/nr_hugepages";
	const char *fr = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
	struct qr_mut muts[2];
	long have = np_read_long(nr);
	char val[32];

	if (have < 0)
		SKIP(return, "no hugetlb");
	snprintf(val, sizeof(val), "%ld", have + 12);
	qr_set(&self->e, nr, val);
	if (np_read_long(fr) < 10)
		SKIP(return, "fewer than 10 free 2 MiB huge pages");
	QR_RUN(2, "hugetlb", qr_step_hugetlb, qr_init_hugetlb, qr_race_ms());
}

/*
 * hugetlb PMD sharing: a 1 GiB-aligned MAP_SHARED hugetlb mapping (few
 * pages faulted, MAP_NORESERVE) shared with a child after fork: both
 * processes fault, zap (huge_pmd_unshare()), split and merge the VMA and
 * map it again, so the PMD table the queriers walk is shared, unshared
 * and freed by the other process under them.
 */
#define QR_PUD		(1UL << 30)
#define QR_HS_PAGES	8	/* huge pages ever faulted */

static void qr_hshare_op(char *base, int memfd, unsigned int *seed)
{
	char *p = base + (rand_r(seed) % QR_HS_PAGES) * QR_PMD;

	switch (rand_r(seed) % 8) {
	case 0:
	case 1:
	case 2:
		((volatile char *)p)[rand_r(seed) % QR_PMD] = 1;
		break;
	case 3:
	case 4:
		madvise(p, QR_PMD, MADV_DONTNEED);
		break;
	case 5:
		/* A split VMA cannot share: unshared, merged again. */
		mprotect(p, QR_PMD, PROT_READ);
		mprotect(base, QR_PUD, PROT_READ | PROT_WRITE);
		break;
	case 6:
		/* Drop this mm's share of the table; the next fault shares again. */
		if (mmap(base, QR_PUD, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED | MAP_NORESERVE, memfd, 0) != base)
			_exit(9);
		break;
	default:
		break;
	}
}

static void qr_step_hshare(struct qr_mut *m)
{
	qr_hshare_op(m->lo, m->memfd, &m->seed);
	m->done++;
}

TEST_F_TIMEOUT(qrace, hugetlb_shared_pmd, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	const char *nr = "/proc/sys/vm/nr_hugepages";
	const char *fr = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
	struct qr_ctx *x = &self->e.x;
	long have = np_read_long(nr);
	struct qr_mut mut;
	unsigned int seed = 3;
	char val[32], *raw, *base;
	int memfd, status;
	pid_t child;

	if (have < 0)
		SKIP(return, "no hugetlb");
	snprintf(val, sizeof(val), "%ld", have + QR_HS_PAGES + 4);
	qr_set(&self->e, nr, val);
	if (np_read_long(fr) < QR_HS_PAGES + 2)
		SKIP(return, "fewer than %d free 2 MiB huge pages",
		     QR_HS_PAGES + 2);
	/* The stable pages; the region queried is the hugetlb one. */
	ASSERT_EQ(0, qr_region_init(x, &self->e.r, 0));
	memfd = memfd_create("np-race-hshare", MFD_CLOEXEC | MFD_HUGETLB);
	if (memfd < 0)
		SKIP(return, "no hugetlb memfd: %s", strerror(errno));
	ASSERT_EQ(0, ftruncate(memfd, QR_PUD));
	raw = mmap(NULL, 2 * QR_PUD, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	base = (char *)(((uintptr_t)raw + QR_PUD - 1) & ~(QR_PUD - 1));
	ASSERT_EQ(base, mmap(base, QR_PUD, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED | MAP_NORESERVE, memfd, 0));
	for (int i = 0; i < QR_HS_PAGES; i += 2)
		base[i * QR_PMD] = 1;
	x->qstart = (uintptr_t)base;
	x->qpages = QR_PUD / qr_psz;
	x->zlo = (uintptr_t)base;
	x->zhi = (uintptr_t)base + QR_PUD;
	x->splits0 = qr_thp_splits();

	/* fork() shares the PMD table with the child. */
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		seed = getpid();
		for (;;)
			qr_hshare_op(base, memfd, &seed);
	}
	memset(&mut, 0, sizeof(mut));
	mut.x = x;
	mut.name = "hshare";
	mut.step = qr_step_hshare;
	mut.lo = base;
	mut.len = QR_PUD;
	mut.memfd = memfd;
	mut.seed = 11;
	qr_race(_metadata, x, NULL, &mut, 1, qr_all_q, QR_NQ, qr_race_ms());
	kill(child, SIGKILL);
	EXPECT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child status %#x", status);
	munmap(raw, 2 * QR_PUD);
	close(memfd);
}

/* Everything at once, twice as long. */
TEST_F_TIMEOUT(qrace, mixed, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	static const qr_step_fn steps[] = {
		qr_step_mmap, qr_step_mremap, qr_step_mprotect,
		qr_step_dontneed, qr_step_pageout, qr_step_collapse,
		qr_step_fork,
	};
	static const char *const names[] = {
		"mmap", "mremap", "mprotect", "dontneed", "pageout",
		"collapse", "fork", "shmem",
	};
	struct qr_mut muts[8];
	int n = 8;

	if (np_thp_on())
		qr_khugepaged_fast(&self->e);
	ASSERT_EQ(0, qr_region_init(&self->e.x, &self->e.r, 8));
	for (int i = 0; i < 7; i++) {
		int ret;

		qr_mut_init(&muts[i], &self->e.x, &self->e.r, i, names[i], steps[i]);
		if (steps[i] == qr_step_mmap)
			ret = qr_init_memfd(&muts[i]);
		else if (steps[i] == qr_step_mremap)
			ret = qr_init_mremap(&muts[i]);
		else if (steps[i] == qr_step_collapse)
			ret = qr_init_collapse(&muts[i]);
		else
			ret = qr_init_anon(&muts[i]);
		ASSERT_EQ(0, ret) TH_LOG("%s", names[i]);
	}
	/* shmem: its first mapping in slice 7, its second in the tail. */
	qr_mut_init(&muts[7], &self->e.x, &self->e.r, 7, names[7], qr_step_shmem);
	muts[7].len = QR_PMD;
	muts[7].lo2 = self->e.r.slice[7] + QR_PMD;
	ASSERT_EQ(0, qr_init_shmem(&muts[7]));
	qr_race(_metadata, &self->e.x, &self->e.r, muts, n, qr_all_q, QR_NQ,
		2 * qr_race_ms());
	qr_close_memfds(muts, n);
	for (int i = 0; i < n; i++)
		free(muts[i].state);
}

NP_HARNESS_MAIN
