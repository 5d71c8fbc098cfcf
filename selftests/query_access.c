// SPDX-License-Identifier: GPL-2.0
/*
 * The access scan: NUMAPLACE_QUERY_ACCESS reports each present page's
 * young and dirty bits in its run's kind, CLEAR_ACCESS test-and-clears
 * the young bits, FLUSH_TLB flushes what was cleared once at the end.
 * Exactness against a workload that touches known pages (4 KiB anon and
 * shared file pages, PMD THP, hugetlb), with and without the flush, the
 * flags' rules, and whose pages a caller may scan: what opening
 * /proc/PID/pagemap (read) and /proc/PID/clear_refs (clear) allows, the
 * same process run as the oracle.
 */
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "np_test.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

#define NP_NOBODY	65534
/* The 4 KiB workload: pages, and which of them a round touches. */
#define NP_AC_PAGES	256
#define NP_AC_READ(i)	((i) % 3 == 0)
#define NP_AC_WRITE(i)	((i) % 7 == 0)
#define NP_AC_TOUCHED(i) (NP_AC_READ(i) || NP_AC_WRITE(i))

static long psz;

#define NP_CLEAR	(NUMAPLACE_QUERY_CLEAR_ACCESS | NUMAPLACE_QUERY_FLUSH_TLB)

/*
 * One access scan of @n pages at @p of @pid: each page's young and dirty
 * bit into @young and @dirty (may be NULL). 0 or -errno; -EIO when the
 * call did not answer every page.
 */
static int np_scan(int fd, int pid, __u32 flags, const char *p, size_t n,
		   char *young, char *dirty, struct numaplace_query *q)
{
	struct numaplace_run *runs = calloc(n, sizeof(*runs));
	size_t at = 0;
	int ret;

	if (!runs)
		return -ENOMEM;
	ret = np_query_range(fd, pid, flags | NUMAPLACE_QUERY_ACCESS,
			     (uintptr_t)p, n * psz, runs, n, NULL, NULL, 0, q);
	if (!ret && q->done != n)
		ret = -EIO;
	if (young)
		memset(young, 0, n);
	if (dirty)
		memset(dirty, 0, n);
	for (__u32 r = 0; !ret && r < q->nr_runs; r++) {
		size_t first = (runs[r].start - (uintptr_t)p) / psz;

		/* The runs tile the range: no page left unanswered. */
		if (runs[r].start != (uintptr_t)p + at * psz ||
		    at + runs[r].nr_pages > n) {
			ret = -EPROTO;
			break;
		}
		at += runs[r].nr_pages;
		for (size_t k = 0; k < runs[r].nr_pages; k++) {
			if (young)
				young[first + k] = !!(runs[r].kind & NUMAPLACE_KIND_YOUNG);
			if (dirty)
				dirty[first + k] = !!(runs[r].kind & NUMAPLACE_KIND_DIRTY);
		}
	}
	if (!ret && at != n)
		ret = -EPROTO;
	free(runs);
	return ret;
}

/* The pages of @v[0, n) that are set. */
static size_t np_ac_count(const char *v, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += !!v[i];
	return c;
}

/*
 * @n pages of private anonymous memory, no THP, written: every page
 * present and young. NULL on failure.
 */
static char *np_ac_anon(size_t n)
{
	char *p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n * psz, MADV_NOHUGEPAGE);
	memset(p, 1, n * psz);
	return p;
}

/* One round of the workload over @n pages at @p. */
static void np_touch(char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (NP_AC_WRITE(i))
			p[i * psz + 8] = (char)i;
		else if (NP_AC_READ(i))
			(void)*(volatile char *)(p + i * psz + 8);
	}
}

/* np_query_open(), for a module with the access scan. */
static int np_ac_open(int *fd, struct np_ctx *c, struct numaplace_info *info,
		      char *why, size_t len)
{
	int ret = np_query_open(fd, c, info, why, len);

	if (!ret && !(info->features & NUMAPLACE_FEAT_ACCESS)) {
		snprintf(why, len, "the module has no access scan");
		return 1;
	}
	return ret;
}

FIXTURE(access)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	char *p;
	size_t len;
	int file;
	char hp_path[128];
	long hp_orig;
};

FIXTURE_SETUP(access)
{
	self->p = NULL;
	self->file = -1;
	self->hp_orig = -1;
	if (NP_OPEN_SETUP(np_ac_open, &self->fd, &self->c, &self->info))
		return;
	psz = self->c.psz;
}

FIXTURE_TEARDOWN(access)
{
	char val[32];

	if (self->p)
		munmap(self->p, self->len);
	if (self->file >= 0)
		close(self->file);
	if (self->hp_orig >= 0) {
		snprintf(val, sizeof(val), "%ld", self->hp_orig);
		np_write_str(self->hp_path, val);
	}
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * @n pages of the workload in self->p, their bits cleared, then one
 * round of it: a scan must find exactly NP_AC_TOUCHED() young.
 */
static void np_ac_touched(struct __test_metadata *_metadata,
			  FIXTURE_DATA(access) *self, size_t n)
{
	struct numaplace_query q;

	self->len = n * psz;
	self->p = np_ac_anon(n);
	ASSERT_NE(NULL, self->p);
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, NULL, NULL,
			     &q));
	np_touch(self->p, n);
}

/* Needs the flush for exact answers (the emulator's TLB is large). */
#define NP_NEED_FLUSH()							\
	do {								\
		if (!(self->info.features & NUMAPLACE_FEAT_ACCESS_FLUSH)) \
			SKIP(return, "no TLB flush on this kernel");	\
	} while (0)

/* The flags' rules; the feature bits of every supported kernel. */
NP_TEST_F(access, flags)
{
	NP_SKIPPED();
	struct numaplace_query q;
	__u64 a = (uintptr_t)&q;
	__s32 st;
	static const __u32 bad[] = {
		NUMAPLACE_QUERY_CLEAR_ACCESS,
		NUMAPLACE_QUERY_FLUSH_TLB,
		NUMAPLACE_QUERY_ACCESS | NUMAPLACE_QUERY_FLUSH_TLB,
		NUMAPLACE_QUERY_CLEAR_ACCESS | NUMAPLACE_QUERY_FLUSH_TLB,
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		np_query_init(&q, 0, bad[i]);
		q.start = a;
		q.len = 1;
		EXPECT_EQ(-EINVAL, np_query(self->fd, &q)) TH_LOG("flags %#x", bad[i]);
	}
	/* Array mode has no runs to report in. */
	np_query_init(&q, 0, NUMAPLACE_QUERY_PAGES | NUMAPLACE_QUERY_ACCESS);
	q.pages_ptr = a;
	q.count = 1;
	q.status_ptr = (uintptr_t)&st;
	EXPECT_EQ(-EINVAL, np_query(self->fd, &q));
	np_query_init(&q, 0, NUMAPLACE_QUERY_ACCESS | NUMAPLACE_QUERY_CLEAR_ACCESS);
	q.start = a;
	q.len = 1;
	EXPECT_EQ(0, np_query(self->fd, &q));
	EXPECT_EQ(1, q.done);
	/* The kernel's flag for reclaim: PAGE_IDLE_FLAG (not Debian's 6.1). */
	TH_LOG("features %#llx: flush %d, notify %d, keep %d",
	       (unsigned long long)self->info.features,
	       !!(self->info.features & NUMAPLACE_FEAT_ACCESS_FLUSH),
	       !!(self->info.features & NUMAPLACE_FEAT_ACCESS_NOTIFY),
	       !!(self->info.features & NUMAPLACE_FEAT_ACCESS_KEEP));
}

/*
 * The workload's pages, 4 KiB each, with a hole: after a clear and a
 * flush, exactly the touched pages are young, exactly the written ones
 * dirty (file: read-faulted, so clean until written; anon: written when
 * faulted), nothing in the hole; a clear leaves none young.
 */
static void np_exact(struct __test_metadata *_metadata,
		     FIXTURE_DATA(access) *self, int file)
{
	size_t n = NP_AC_PAGES, hole = n / 2, bad = 0;
	char young[NP_AC_PAGES], dirty[NP_AC_PAGES], dirty0[NP_AC_PAGES];
	struct numaplace_query q;

	self->len = n * psz;
	if (file) {
		self->file = np_tmpfile(n);
		ASSERT_LE(0, self->file);
		self->p = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			       MAP_SHARED, self->file, 0);
	} else {
		self->p = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	ASSERT_NE(MAP_FAILED, self->p) {
		self->p = NULL;
	}
	madvise(self->p, self->len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++) {
		if (file)
			(void)*(volatile char *)(self->p + i * psz);
		else
			self->p[i * psz] = 1;
	}
	ASSERT_EQ(0, munmap(self->p + hole * psz, psz));

	/* Every page was just faulted: young. */
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, dirty0, &q));
	EXPECT_EQ(n - 1, q.nr_young);
	EXPECT_EQ(n - 1, np_ac_count(young, n));
	EXPECT_EQ(0, young[hole]);
	EXPECT_EQ(0, dirty0[hole]);
	/*
	 * A read fault of a file page may map it dirty when its folio is
	 * (6.12+ set_pte_range()): then it stays so; anon: all written.
	 */
	if (!file) {
		EXPECT_EQ(n - 1, np_ac_count(dirty0, n));
	}
	TH_LOG("dirty after the faults: %zu of %zu", np_ac_count(dirty0, n), n - 1);
	/* Cleared, nothing touched since. */
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL, &q));
	EXPECT_EQ(0, q.nr_young);
	EXPECT_EQ(0, np_ac_count(young, n));

	np_touch(self->p, hole);
	np_touch(self->p + (hole + 1) * psz, n - hole - 1);
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, dirty, &q));
	for (size_t i = 0; i < n; i++) {
		size_t k = i < hole ? i : i - hole - 1;
		int touched = i != hole && NP_AC_TOUCHED(k);
		/* Dirty bits are never cleared, set by every write. */
		int written = i != hole && (dirty0[i] || NP_AC_WRITE(k));

		if (young[i] != touched || dirty[i] != written) {
			if (bad++ < 8)
				TH_LOG("page %zu: young %d dirty %d, touched %d written %d",
				       i, young[i], dirty[i], touched, written);
		}
	}
	EXPECT_EQ(0, bad);
	EXPECT_EQ(np_ac_count(young, n), q.nr_young);
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL, &q));
	EXPECT_EQ(0, q.nr_young);
}

NP_TEST_F(access, exact_anon)
{
	NP_SKIPPED();
	NP_NEED_FLUSH();
	np_exact(_metadata, self, 0);
}

NP_TEST_F(access, exact_shared_file)
{
	NP_SKIPPED();
	NP_NEED_FLUSH();
	np_exact(_metadata, self, 1);
}

/* A target on another CPU: it touches the workload when told to. */
struct np_ac_remote {
	pid_t pid;
	int cmd, ack;		/* pipes: the test's end */
	char *base;		/* in the child */
};

static void np_ac_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int np_ac_remote_start(struct np_ac_remote *t, char **shared)
{
	int cmd[2], ack[2];
	char c;

	if (pipe(cmd) || pipe(ack))
		return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (!t->pid) {
		char *p;

		close(cmd[1]);
		close(ack[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		np_ac_pin(1);
		p = np_ac_anon(NP_AC_PAGES);
		if (!p)
			_exit(1);
		*shared = p;
		while (read(cmd[0], &c, 1) == 1) {
			np_touch(p, NP_AC_PAGES);
			if (write(ack[1], &c, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(cmd[0]);
	close(ack[1]);
	t->cmd = cmd[1];
	t->ack = ack[0];
	/* The first round tells that it is ready. */
	c = 'T';
	if (write(t->cmd, &c, 1) != 1 || read(t->ack, &c, 1) != 1)
		return -1;
	t->base = *shared;
	return 0;
}

static void np_ac_remote_stop(struct np_ac_remote *t)
{
	close(t->cmd);
	close(t->ack);
	waitpid(t->pid, NULL, 0);
}

/*
 * Another process's pages, the tiering daemon's case: the target runs on
 * another CPU than the scan, so the flush must reach that CPU's TLB.
 * After a clear, exactly the pages it touched again are young.
 */
NP_TEST_F(access, exact_other_process)
{
	NP_SKIPPED();
	char young[NP_AC_PAGES], **shared, c = 'T';
	struct np_ac_remote t;
	struct numaplace_query q;
	size_t bad = 0;

	NP_NEED_FLUSH();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shared);
	np_ac_pin(0);
	ASSERT_EQ(0, np_ac_remote_start(&t, shared));
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, np_scan(self->fd, t.pid, NP_CLEAR, t.base, NP_AC_PAGES,
				     young, NULL, &q));
		if (round) {
			for (size_t i = 0; i < NP_AC_PAGES; i++) {
				if (young[i] != NP_AC_TOUCHED(i) && bad++ < 8)
					TH_LOG("round %d page %zu: young %d", round,
					       i, young[i]);
			}
		}
		ASSERT_EQ(0, np_scan(self->fd, t.pid, NP_CLEAR, t.base, NP_AC_PAGES,
				     young, NULL, &q));
		EXPECT_EQ(0, q.nr_young);
		ASSERT_EQ(1, write(t.cmd, &c, 1));
		ASSERT_EQ(1, read(t.ack, &c, 1));
	}
	EXPECT_EQ(0, bad);
	np_ac_remote_stop(&t);
	munmap(shared, sizeof(*shared));
}

/*
 * A clearing scan in calls that each end when the caller's runs buffer
 * is full (4 runs: the workload's pattern makes a run of a page or two):
 * every call's last page was visited, its bit cleared, and not reported;
 * the next call must still find it young. Exactly the touched pages,
 * over all the calls.
 */
NP_TEST_F(access, resume)
{
	NP_SKIPPED();
	size_t n = NP_AC_PAGES, at = 0, calls = 0, bad = 0;
	char young[NP_AC_PAGES];
	struct numaplace_run runs[4];
	struct numaplace_query q;

	NP_NEED_FLUSH();
	np_ac_touched(_metadata, self, n);
	memset(young, 0, n);
	while (at < n && calls++ < n) {
		ASSERT_EQ(0, np_query_range(self->fd, 0, NUMAPLACE_QUERY_ACCESS | NP_CLEAR,
					    (uintptr_t)self->p + at * psz,
					    (n - at) * psz, runs, ARRAY_SIZE(runs),
					    NULL, NULL, 0, &q));
		ASSERT_GT(q.done, 0);
		ASSERT_LE(q.nr_runs, ARRAY_SIZE(runs));
		for (__u32 r = 0; r < q.nr_runs; r++) {
			size_t first = (runs[r].start - (uintptr_t)self->p) / psz;

			for (size_t k = 0; k < runs[r].nr_pages; k++)
				young[first + k] = !!(runs[r].kind & NUMAPLACE_KIND_YOUNG);
		}
		at += q.done;
	}
	EXPECT_EQ(n, at);
	for (size_t i = 0; i < n; i++) {
		if (young[i] != NP_AC_TOUCHED(i) && bad++ < 8)
			TH_LOG("page %zu: young %d, touched %d", i, young[i],
			       NP_AC_TOUCHED(i));
	}
	EXPECT_EQ(0, bad);
	TH_LOG("%zu calls", calls);
	/* And all of them cleared. */
	ASSERT_EQ(0, np_scan(self->fd, 0, 0, self->p, n, young, NULL, &q));
	EXPECT_EQ(0, q.nr_young);
}

/*
 * Reading alone clears nothing: the same answer twice, then a clear
 * still finds the bits.
 */
NP_TEST_F(access, read_only)
{
	NP_SKIPPED();
	size_t n = NP_AC_PAGES;
	char a[NP_AC_PAGES], b[NP_AC_PAGES];
	struct numaplace_query q;

	NP_NEED_FLUSH();
	np_ac_touched(_metadata, self, n);
	ASSERT_EQ(0, np_scan(self->fd, 0, 0, self->p, n, a, NULL, &q));
	ASSERT_EQ(0, np_scan(self->fd, 0, 0, self->p, n, b, NULL, &q));
	EXPECT_EQ(0, memcmp(a, b, n));
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, b, NULL, &q));
	EXPECT_EQ(0, memcmp(a, b, n));
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(NP_AC_TOUCHED(i), a[i]) TH_LOG("page %zu", i);
	}
	ASSERT_EQ(0, np_scan(self->fd, 0, 0, self->p, n, b, NULL, &q));
	EXPECT_EQ(0, q.nr_young);
}

/*
 * Without the flush a page touched again may stay idle (its translation,
 * young, is still cached), never the reverse: no page the workload did
 * not touch is young. What the flush buys is logged: the share of the
 * touched pages seen in the second round without it.
 */
NP_TEST_F(access, no_flush)
{
	NP_SKIPPED();
	size_t n = NP_AC_PAGES, wrong = 0, seen = 0, touched = 0;
	char young[NP_AC_PAGES];
	struct numaplace_query q;

	self->len = n * psz;
	self->p = np_ac_anon(n);
	ASSERT_NE(NULL, self->p);
	for (int round = 0; round < 3; round++) {
		ASSERT_EQ(0, np_scan(self->fd, 0, NUMAPLACE_QUERY_CLEAR_ACCESS,
				     self->p, n, young, NULL, &q));
		np_touch(self->p, n);
	}
	ASSERT_EQ(0, np_scan(self->fd, 0, NUMAPLACE_QUERY_CLEAR_ACCESS,
			     self->p, n, young, NULL, &q));
	for (size_t i = 0; i < n; i++) {
		touched += NP_AC_TOUCHED(i);
		seen += young[i] && NP_AC_TOUCHED(i);
		wrong += young[i] && !NP_AC_TOUCHED(i);
	}
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(seen, q.nr_young);
	TH_LOG("without the flush: %zu of %zu touched pages seen young", seen,
	       touched);
}

/* Two PMD-mapped THPs in self->p, written; a skip where THP is off. */
#define NP_AC_THPS()							\
	do {								\
		self->len = 2 * NP_PMD;					\
		self->p = np_pmd_map(self->len, 1);			\
		ASSERT_NE(NULL, self->p);				\
		memset(self->p, 1, self->len);				\
		NP_NEED_PMD(self->p);					\
		NP_NEED_PMD(self->p + NP_PMD);				\
	} while (0)

/*
 * @n pages in self->p, all just written: a clearing scan finds them all
 * young, the next one none.
 */
static void np_ac_clears(struct __test_metadata *_metadata,
			 FIXTURE_DATA(access) *self, size_t n, char *young)
{
	struct numaplace_query q;

	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL,
			     &q));
	EXPECT_EQ(n, q.nr_young);
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL,
			     &q));
	EXPECT_EQ(0, q.nr_young);
}

/* A PMD-mapped THP has one bit: its 512 pages are young together. */
NP_TEST_F(access, thp)
{
	NP_SKIPPED();
	size_t n = 2 * NP_PMD / psz, per = NP_PMD / psz;
	char *young = malloc(n);
	struct numaplace_query q;

	NP_NEED_FLUSH();
	ASSERT_NE(NULL, young);
	NP_AC_THPS();
	/*
	 * Written again just before the scan. Once on 7.3 one THP was not
	 * young at the first scan (1 run in 6, not reproduced since); the
	 * likely cause is the kernel's own aging (reclaim's
	 * folio_referenced(), MGLRU's walk) between the write and the scan:
	 * the narrower window leaves it less room.
	 */
	memset(self->p, 2, self->len);
	np_ac_clears(_metadata, self, n, young);
	(void)*(volatile char *)(self->p + NP_PMD + 5 * psz);
	/*
	 * A scan of half the THP reports it young and leaves its bit, which
	 * stands for the other half too: the whole scan finds it again.
	 */
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p + NP_PMD + per / 2 * psz,
			     per / 2, young, NULL, &q));
	EXPECT_EQ(per / 2, q.nr_young);
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL, &q));
	EXPECT_EQ(per, q.nr_young);
	EXPECT_EQ(per, np_ac_count(young + per, per));
	ASSERT_EQ(0, np_scan(self->fd, 0, 0, self->p, n, young, NULL, &q));
	EXPECT_EQ(0, q.nr_young);
	self->p[3 * psz] = 2;
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL, &q));
	EXPECT_EQ(per, q.nr_young);
	EXPECT_EQ(per, np_ac_count(young, per));
	free(young);
}

/*
 * A THP the caller's full runs buffer left out (first THP idle, second
 * young, room for one run): its bit is set again, and the next call,
 * from where the first ended, reports it young.
 */
NP_TEST_F(access, thp_resume)
{
	NP_SKIPPED();
	size_t per = NP_PMD / psz;
	struct numaplace_run run;
	struct numaplace_query q;

	NP_NEED_FLUSH();
	NP_AC_THPS();
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, 2 * per, NULL, NULL, &q));
	(void)*(volatile char *)(self->p + NP_PMD + 7 * psz);
	ASSERT_EQ(0, np_query_range(self->fd, 0, NUMAPLACE_QUERY_ACCESS | NP_CLEAR,
				    (uintptr_t)self->p, self->len, &run, 1,
				    NULL, NULL, 0, &q));
	ASSERT_EQ(per, q.done);
	EXPECT_FALSE(run.kind & NUMAPLACE_KIND_YOUNG);
	EXPECT_EQ(0, q.nr_young);
	ASSERT_EQ(0, np_query_range(self->fd, 0, NUMAPLACE_QUERY_ACCESS | NP_CLEAR,
				    (uintptr_t)self->p + NP_PMD, NP_PMD, &run, 1,
				    NULL, NULL, 0, &q));
	ASSERT_EQ(per, q.done);
	EXPECT_TRUE(run.kind & NUMAPLACE_KIND_YOUNG);
	EXPECT_TRUE(run.kind & NUMAPLACE_KIND_PMD);
	EXPECT_EQ(per, q.nr_young);
}

/* A 2 MiB hugetlb page: young as a whole, cleared. */
NP_TEST_F(access, hugetlb)
{
	NP_SKIPPED();
	size_t n = 2 * NP_PMD / psz, per = NP_PMD / psz;
	char *young = malloc(n);
	struct numaplace_query q;
	int ret;

	NP_NEED_FLUSH();
	ASSERT_NE(NULL, young);
	ret = np_hp_grow(0, 2, self->hp_path, sizeof(self->hp_path),
			 &self->hp_orig);
	if (ret == -ENOENT)
		SKIP(return, "no %s", self->hp_path);
	if (ret)
		SKIP(return, "no free 2 MiB huge pages on node 0");
	self->len = 2 * NP_PMD;
	self->p = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	ASSERT_NE(MAP_FAILED, self->p) {
		self->p = NULL;
	}
	memset(self->p, 1, self->len);
	np_ac_clears(_metadata, self, n, young);
	(void)*(volatile char *)(self->p + NP_PMD + 9 * psz);
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL, &q));
	EXPECT_EQ(per, q.nr_young);
	EXPECT_EQ(per, np_ac_count(young + per, per));
	free(young);
}

/* ---- What reclaim sees after a clear ------------------------------- */

/* Each of the two sets: 4 MiB, what memory.reclaim is asked for. */
#define NP_RC_PAGES	1024
#define NP_RC_ASK	"4M"

/* One run of the reclaim workload, in memory shared with the test. */
struct np_rc {
	int fd;			/* the device */
	int scan;		/* clear the young bits before reclaim */
	int err;		/* the child's first failed step */
	long swapped_hot, swapped_cold;
};

/* Pages of @n at @p that pagemap says are swapped out. */
static long np_rc_swapped(const char *p, size_t n)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	long swapped = 0;
	__u64 e;

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (pread(fd, &e, sizeof(e),
			  ((uintptr_t)p / psz + i) * sizeof(e)) != sizeof(e)) {
			swapped = -1;
			break;
		}
		swapped += !!(e & (1ULL << 62));
	}
	close(fd);
	return swapped;
}

/*
 * In memcg @cg: a hot and a cold set, both faulted; every young bit
 * cleared with the TLB flushed (a scan), then every folio's young and
 * referenced flags (clear_refs 1, which flushes no TLB: clearing first
 * makes it find no cached translation); the hot set read again; with
 * r->scan, a clearing scan of both (the hot set is reported young and
 * cleared); then the memcg asked to reclaim the size of one set.
 */
static int np_rc_child(const char *cg, void *arg)
{
	struct np_rc *r = arg;
	size_t n = NP_RC_PAGES;
	struct numaplace_query q;
	char *hot, *cold;

	r->err = 1;
	if (np_memcg_enter(cg))
		return 1;
	hot = np_ac_anon(2 * n);
	r->err = 2;
	if (!hot)
		return 1;
	cold = hot + n * psz;
	r->err = 3;
	if (np_scan(r->fd, 0, NP_CLEAR, hot, 2 * n, NULL, NULL, &q) ||
	    np_write_str("/proc/self/clear_refs", "1"))
		return 1;
	for (size_t i = 0; i < n; i++)
		(void)*(volatile char *)(hot + i * psz);
	r->err = 4;
	if (r->scan && np_scan(r->fd, 0, NP_CLEAR, hot, 2 * n, NULL, NULL, &q))
		return 1;
	r->err = 5;
	if (r->scan && q.nr_young != n)
		return 1;
	/* -EAGAIN when it could not take all: what it took counts. */
	np_memcg_set(cg, "memory.reclaim", NP_RC_ASK);
	r->swapped_hot = np_rc_swapped(hot, n);
	r->swapped_cold = np_rc_swapped(cold, n);
	r->err = 0;
	return 0;
}

/*
 * Clearing must not make reclaim take a hot page for a cold one: the
 * scan sets the folio's young flag, which reclaim's folio_referenced()
 * counts, as DAMON's clear does. Where the kernel has no such flag
 * (FEAT_ACCESS_KEEP clear: Debian's 6.1) it cannot, and the test states
 * what then happens: after the scan, the hot set is reclaimed as if it
 * were cold (measured: 1024 of 1024 hot pages, 340 cold). The same
 * workload without the scan is logged for reference.
 */
TEST_F_TIMEOUT(access, reclaim, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	struct np_rc *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int keep = !!(self->info.features & NUMAPLACE_FEAT_ACCESS_KEEP);
	long total_swap = 0;
	char cg[128], line[256];
	FILE *f;
	int ret;

	ASSERT_NE(MAP_FAILED, r);
	NP_NEED_FLUSH();
	if (geteuid())
		SKIP(return, "needs root (a memcg)");
	f = fopen("/proc/swaps", "re");
	while (f && fgets(line, sizeof(line), f))
		total_swap += !!strncmp(line, "Filename", 8);
	if (f)
		fclose(f);
	if (!total_swap)
		SKIP(return, "needs swap");
	for (int scan = 0; scan < 2; scan++) {
		memset(r, 0, sizeof(*r));
		r->fd = self->fd;
		r->scan = scan;
		ret = np_memcg_fork(scan ? "np-access-scan" : "np-access-ref",
				    cg, sizeof(cg), np_rc_child, r);
		np_memcg_remove(cg);
		if (ret == -ENOENT)
			SKIP(return, "no memory controller");
		ASSERT_EQ(0, ret) TH_LOG("child step %d", r->err);
		ASSERT_EQ(0, r->err);
		TH_LOG("%s: %ld of %d hot pages swapped out, %ld of %d cold",
		       scan ? "after a clearing scan" : "no scan", r->swapped_hot,
		       NP_RC_PAGES, r->swapped_cold, NP_RC_PAGES);
		/*
		 * The reference is only logged: 6.1 keeps the hot set on its
		 * young PTEs alone; 6.12's and 7.3's multi-gen LRU, in this
		 * workload, took the hot set all the same (1023 and 1024 of
		 * 1024) and kept the cold one.
		 */
		if (!scan)
			continue;
		if (keep) {
			/* The hot set stays; the cold one goes. */
			EXPECT_LE(r->swapped_hot, NP_RC_PAGES / 8);
			EXPECT_GE(r->swapped_cold, NP_RC_PAGES / 2);
		} else {
			/* 6.1: the access is gone, the hot set goes too. */
			EXPECT_GT(r->swapped_hot, NP_RC_PAGES / 8);
		}
	}
	munmap(r, sizeof(*r));
}

#define NP_MR_PAGES		64

/* What np_mn_rec hands over: room for a few records per page. */
struct np_mr_rec {
	struct np_mr_head h;
	struct np_mr_range r[4 * NP_MR_PAGES];
};

/*
 * A secondary MMU on the caller's mm (np_mn_rec.ko, as KVM would be):
 * a clear asks it for every present page, once, and a page it says is
 * young is reported young though the CPU's bit is clear. Without
 * FEAT_ACCESS_NOTIFY (its internal missing or sealed), a clear in such an
 * mm is refused: -EOPNOTSUPP, never a clear of the CPU's bits alone;
 * reading is still allowed.
 */
NP_TEST_F(access, secondary_mmu)
{
	NP_SKIPPED();
	size_t n = NP_MR_PAGES, calls = 0, wrong = 0;
	struct np_mr_rec *rec = calloc(1, sizeof(*rec));
	char young[NP_MR_PAGES];
	struct numaplace_query q;
	__u64 win[2] = { 0, 0 };
	uintptr_t base;
	ssize_t got;
	int mr, ret;

	NP_NEED_FLUSH();
	ASSERT_NE(NULL, rec);
	ret = np_mr_load();
	if (ret == -ENOENT)
		SKIP(return, "np_mn_rec.ko is not installed (%s)", NP_KO_WHERE);
	ASSERT_EQ(0, ret);
	self->len = n * psz;
	self->p = np_ac_anon(n);
	ASSERT_NE(NULL, self->p);
	base = (uintptr_t)self->p;
	mr = open(NP_MR_DEV, O_RDWR);
	ASSERT_LE(0, mr);
	if (!(self->info.features & NUMAPLACE_FEAT_ACCESS_NOTIFY)) {
		EXPECT_EQ(-EOPNOTSUPP, np_scan(self->fd, 0, NP_CLEAR, self->p, n,
					       young, NULL, &q));
		EXPECT_EQ(0, np_scan(self->fd, 0, 0, self->p, n, young, NULL, &q));
		close(mr);
		free(rec);
		return;
	}
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL, &q));
	EXPECT_EQ(n, q.nr_young);
	got = read(mr, rec, sizeof(*rec));
	ASSERT_LE((ssize_t)sizeof(rec->h), got);
	EXPECT_EQ(0, rec->h.lost);
	for (__u32 i = 0; i < rec->h.nr; i++) {
		if (rec->r[i].event != NP_MR_CLEAR_YOUNG)
			continue;
		calls++;
		if (rec->r[i].start < base || rec->r[i].end > base + n * psz ||
		    rec->r[i].end - rec->r[i].start != (__u64)psz)
			wrong++;
	}
	EXPECT_EQ(n, calls);
	EXPECT_EQ(0, wrong);
	/* Pages 8 to 15 young for the secondary MMU only. */
	win[0] = base + 8 * psz;
	win[1] = base + 16 * psz;
	ASSERT_EQ(sizeof(win), write(mr, win, sizeof(win)));
	ASSERT_EQ(0, np_scan(self->fd, 0, NP_CLEAR, self->p, n, young, NULL, &q));
	EXPECT_EQ(8, q.nr_young);
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(i >= 8 && i < 16, young[i]) TH_LOG("page %zu", i);
	}
	/* Reading asks the secondary MMU nothing. */
	ASSERT_LE((ssize_t)sizeof(rec->h), read(mr, rec, sizeof(*rec)));
	ASSERT_EQ(0, np_scan(self->fd, 0, 0, self->p, n, young, NULL, &q));
	ASSERT_LE((ssize_t)sizeof(rec->h), read(mr, rec, sizeof(*rec)));
	EXPECT_EQ(0, rec->h.nr);
	close(mr);
	free(rec);
}

/* ---- Whose pages: /proc/PID/pagemap's and clear_refs' rules ---------- */

/* What a prober saw, in memory shared with the test. */
struct np_ac_probe {
	unsigned long base;	/* the target's page */
	int pagemap;		/* open(/proc/PID/pagemap, O_RDONLY): 0 or -errno */
	int clear_refs;		/* open(/proc/PID/clear_refs, O_WRONLY) */
	int query;		/* QUERY without the access scan */
	int read;		/* QUERY_ACCESS */
	int clear;		/* QUERY_ACCESS | QUERY_CLEAR_ACCESS */
};

static int np_open_err(int pid, const char *file, int flags)
{
	char path[64];
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, flags);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static void np_ac_probe_run(int fd, int pid, struct np_ac_probe *r)
{
	struct numaplace_query q;
	char young;

	r->pagemap = np_open_err(pid, "pagemap", O_RDONLY);
	r->clear_refs = np_open_err(pid, "clear_refs", O_WRONLY);
	r->query = np_query_range(fd, pid, 0, r->base, psz, NULL, 0, NULL,
				  NULL, 0, &q);
	r->read = np_scan(fd, pid, 0, (char *)r->base, 1, &young, NULL, &q);
	r->clear = np_scan(fd, pid, NUMAPLACE_QUERY_CLEAR_ACCESS,
			   (char *)r->base, 1, &young, NULL, &q);
}

static int np_ac_target(void *arg)
{
	struct np_ac_probe *r = arg;
	char *p = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	p[0] = 1;
	r->base = (uintptr_t)p;
	return 0;
}

struct np_ac_who {
	uid_t uid;
	int dumpable;
	struct np_ac_probe *r;
};

static int np_ac_become_target(void *arg)
{
	struct np_ac_who *w = arg;

	if (np_become(w->uid, w->dumpable))
		return 1;
	return np_ac_target(w->r);
}

/* What np_ac_probe_as() drops of root's capabilities. */
#define NP_AC_NO_OVERRIDE	1	/* CAP_DAC_OVERRIDE */
#define NP_AC_NO_SEARCH		2	/* CAP_DAC_READ_SEARCH */

/*
 * In a child that becomes @uid (root: less the capabilities @drop
 * names), dumpable or not, probe @pid (0: the child's own page). 0 when
 * it ran to the end.
 */
static int np_ac_probe_as(uid_t uid, int dumpable, int drop, int pid,
			  struct np_ac_probe *r)
{
	int status;
	pid_t kid = fork();

	if (kid < 0)
		return -1;
	if (kid == 0) {
		int fd;

		if (uid && np_drop_to(uid))
			_exit(2);
		if ((drop & NP_AC_NO_OVERRIDE) && np_drop_cap(CAP_DAC_OVERRIDE))
			_exit(3);
		if ((drop & NP_AC_NO_SEARCH) && np_drop_cap(CAP_DAC_READ_SEARCH))
			_exit(3);
		if (!pid && np_ac_target(r))
			_exit(4);
		if (prctl(PR_SET_DUMPABLE, dumpable))
			_exit(5);
		fd = np_open();
		if (fd < 0)
			_exit(6);
		np_ac_probe_run(fd, pid, r);
		_exit(0);
	}
	if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(access_perm)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	struct np_ac_probe *r;
	pid_t kid;
	int exact;
};

FIXTURE_SETUP(access_perm)
{
	self->r = MAP_FAILED;
	self->kid = -1;
	if (NP_OPEN_SETUP(np_ac_open, &self->fd, &self->c, &self->info))
		return;
	psz = self->c.psz;
	if (geteuid())
		SKIP(return, "needs root: it changes uids");
	self->exact = !!(self->info.features & NUMAPLACE_FEAT_PTRACE_EXACT);
	self->r = mmap(NULL, sizeof(*self->r), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->r);
}

FIXTURE_TEARDOWN(access_perm)
{
	if (self->kid > 0) {
		kill(self->kid, SIGKILL);
		waitpid(self->kid, NULL, 0);
	}
	if (self->r != MAP_FAILED)
		munmap(self->r, sizeof(*self->r));
	if (self->fd >= 0)
		close(self->fd);
}

/* A target process of @uid, dumpable or not; its page in r->base. */
static pid_t np_ac_spawn(FIXTURE_DATA(access_perm) *self, uid_t uid,
			 int dumpable)
{
	struct np_ac_who w = { uid, dumpable, self->r };

	self->kid = np_fork_ready(np_ac_become_target, &w);
	return self->kid;
}

/*
 * A target of @uid, dumpable or not, probed by a dumpable @prober (root:
 * less the capabilities @drop names); what it saw in self->r. 0 when
 * both ran.
 */
static int np_ac_case(FIXTURE_DATA(access_perm) *self, uid_t uid,
		      int dumpable, uid_t prober, int drop)
{
	pid_t pid = np_ac_spawn(self, uid, dumpable);

	if (pid <= 0)
		return -1;
	return np_ac_probe_as(prober, 1, drop, pid, self->r);
}

/*
 * The module against the /proc files, one prober: reading needs what
 * opening pagemap needs, clearing that and what opening clear_refs
 * needs. Without the exact ptrace check the module admits less: only
 * the caller's own process.
 */
static void np_ac_expect(struct __test_metadata *_metadata,
			 const struct np_ac_probe *r, int own, int exact,
			 const char *who)
{
	int read_ok = !r->pagemap && !r->query;
	int clear_ok = read_ok && !r->clear_refs;

	TH_LOG("%s: pagemap %d, clear_refs %d, query %d, read %d, clear %d",
	       who, r->pagemap, r->clear_refs, r->query, r->read, r->clear);
	if (!exact && !own) {
		EXPECT_NE(0, r->read);
		EXPECT_NE(0, r->clear);
		return;
	}
	EXPECT_EQ(read_ok, !r->read);
	EXPECT_EQ(clear_ok, !r->clear);
	/* A /proc refusal is the open's errno. */
	if (!r->query && r->pagemap) {
		EXPECT_EQ(-EACCES, r->read);
	}
}

/* Root scans a non-dumpable nobody: its /proc files are root's. */
NP_TEST_F(access_perm, root_nobody)
{
	NP_SKIPPED();
	ASSERT_EQ(0, np_ac_case(self, NP_NOBODY, 0, 0, 0));
	EXPECT_EQ(0, self->r->pagemap);
	EXPECT_EQ(0, self->r->clear_refs);
	np_ac_expect(_metadata, self->r, 0, self->exact, "root");
}

/* nobody scans another dumpable nobody process: as pagemap allows. */
NP_TEST_F(access_perm, same_uid)
{
	NP_SKIPPED();
	ASSERT_EQ(0, np_ac_case(self, NP_NOBODY, 1, NP_NOBODY, 0));
	EXPECT_EQ(0, self->r->pagemap);
	np_ac_expect(_metadata, self->r, 0, self->exact, "nobody");
}

/* nobody may not scan root's process. */
NP_TEST_F(access_perm, other_user)
{
	NP_SKIPPED();
	ASSERT_EQ(0, np_ac_case(self, 0, 1, NP_NOBODY, 0));
	EXPECT_NE(0, self->r->pagemap);
	EXPECT_NE(0, self->r->read);
	EXPECT_NE(0, self->r->clear);
	np_ac_expect(_metadata, self->r, 0, self->exact, "nobody");
}

/*
 * A non-dumpable nobody process scanning itself: move_pages(2) may look
 * (QUERY works), but its own pagemap is root's: -EACCES for the scan.
 */
NP_TEST_F(access_perm, self_not_dumpable)
{
	NP_SKIPPED();
	ASSERT_EQ(0, np_ac_probe_as(NP_NOBODY, 0, 0, 0, self->r));
	EXPECT_EQ(0, self->r->query);
	EXPECT_EQ(-EACCES, self->r->pagemap);
	EXPECT_EQ(-EACCES, self->r->read);
	EXPECT_EQ(-EACCES, self->r->clear);
	ASSERT_EQ(0, np_ac_probe_as(NP_NOBODY, 1, 0, 0, self->r));
	EXPECT_EQ(0, self->r->read);
	EXPECT_EQ(0, self->r->clear);
}

/*
 * Root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: the ptrace
 * check passes (CAP_SYS_PTRACE), a dumpable nobody's pagemap does not
 * open: the scan is refused, QUERY is not.
 */
NP_TEST_F(access_perm, root_without_dac)
{
	NP_SKIPPED();
	ASSERT_EQ(0, np_ac_case(self, NP_NOBODY, 1, 0,
				NP_AC_NO_OVERRIDE | NP_AC_NO_SEARCH));
	EXPECT_EQ(-EACCES, self->r->pagemap);
	EXPECT_EQ(-EACCES, self->r->clear_refs);
	EXPECT_EQ(0, self->r->query);
	np_ac_expect(_metadata, self->r, 0, self->exact, "root without DAC");
}

/*
 * Root with CAP_DAC_READ_SEARCH but not CAP_DAC_OVERRIDE: a nobody's
 * pagemap opens, its clear_refs does not (a write needs OVERRIDE): the
 * scan reads and may not clear.
 */
NP_TEST_F(access_perm, root_read_search_only)
{
	NP_SKIPPED();
	ASSERT_EQ(0, np_ac_case(self, NP_NOBODY, 1, 0, NP_AC_NO_OVERRIDE));
	EXPECT_EQ(0, self->r->pagemap);
	EXPECT_EQ(-EACCES, self->r->clear_refs);
	np_ac_expect(_metadata, self->r, 0, self->exact, "root, read-search only");
	if (self->exact) {
		EXPECT_EQ(0, self->r->read);
		EXPECT_EQ(-EACCES, self->r->clear);
	}
}

NP_HARNESS_MAIN
