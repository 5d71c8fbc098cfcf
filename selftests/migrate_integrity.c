// SPDX-License-Identifier: GPL-2.0
/*
 * Nothing lost while NUMAPLACE_IOC_MIGRATE moves pages under writers.
 *
 * Writer threads (and, for memory shared through fork(), the child too)
 * keep stamping every page of a buffer: each 64-bit word holds a value
 * derived from the page index, a generation and the word's position, so
 * a stale, zeroed, torn or misplaced page shows. A writer checks the
 * page still holds its previous stamp before it writes the next, and
 * records the generation in shared memory. Meanwhile the main thread
 * moves the whole buffer between nodes 0 and 1 many times. At the end
 * every page holds exactly the last stamp written (in every mapping of
 * it), is on the last target node, and nobody died of SIGBUS/SIGSEGV.
 *
 * Buffers: private anon 4 KiB, THPs, MAP_SHARED anon shared with a
 * forked child (MOVE_ALL), a memfd, a tmpfs file. Once per engine
 * (default/kernel/vma as migrate.c); the migrate_vma engine only moves
 * private anonymous memory, so it runs the first two (THPs with
 * NUMAPLACE_MIGRATE_SPLIT_OK).
 */
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "np_test.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

/*
 * Writer threads of the caller. Under TCG every page moved costs a TLB
 * shootdown of the CPUs running the writers: one writer (and the fork
 * child) keeps the vCPUs from being overcommitted on small hosts.
 */
#define NP_IG_WRITERS	1
#define NP_IG_MIN_ROUNDS 4	/* migrations at least ... */
#define NP_IG_MS	2000	/* ... and for at least this long */
#define NP_IG_MAX_ROUNDS 400
#define NP_IG_FINAL_TRIES 10	/* calls to get the last -EBUSY pages over */

static long psz;

enum np_ig_kind { NP_IG_ANON, NP_IG_THP, NP_IG_FORK, NP_IG_MEMFD, NP_IG_FILE };

/* What every writer shares (MAP_SHARED: the fork child is a writer too). */
struct np_ig {
	atomic_int stop;	/* writers: finish the page, leave */
	atomic_int verify;	/* the child: check every page, exit */
	atomic_int child_ready;
	atomic_int child_done;
	atomic_long errors;	/* stamps a writer found changed */
	atomic_long first_bad;	/* page of the first, or -1 */
	atomic_long child_bad;	/* pages the child saw wrong at the end */
	atomic_long writes;
	size_t n;		/* pages */
	int writers;		/* writers in all (threads + child) */
	char *buf;
	atomic_ullong gen[];	/* the last generation written to each page */
};


/* 1 if page @i holds generation @g's stamp in every word. */
static int np_ig_ok(const struct np_ig *s, size_t i, __u64 g)
{
	const volatile __u64 *w = (const __u64 *)(s->buf + i * psz);

	for (size_t k = 0; k < psz / 8; k++)
		if (w[k] != np_stamp_word(i, g, k))
			return 0;
	return 1;
}

static void np_ig_stamp(struct np_ig *s, size_t i, __u64 g)
{
	volatile __u64 *w = (__u64 *)(s->buf + i * psz);

	for (size_t k = 0; k < psz / 8; k++)
		w[k] = np_stamp_word(i, g, k);
}

/* Writer @id of s->writers: pages i with i % writers == id. */
static void np_ig_write(struct np_ig *s, int id)
{
	for (__u64 g = 1; !atomic_load(&s->stop); g++) {
		for (size_t i = id; i < s->n; i += s->writers) {
			__u64 last = atomic_load(&s->gen[i]);

			if (last && !np_ig_ok(s, i, last)) {
				long none = -1;

				atomic_fetch_add(&s->errors, 1);
				atomic_compare_exchange_strong(&s->first_bad,
							       &none, (long)i);
			}
			np_ig_stamp(s, i, g);
			atomic_store(&s->gen[i], g);
			atomic_fetch_add(&s->writes, 1);
			if (atomic_load(&s->stop))
				break;
		}
	}
}

struct np_writer {
	struct np_ig *s;
	int id;
};

static void *np_ig_thread(void *arg)
{
	struct np_writer *w = arg;

	np_ig_write(w->s, w->id);
	return NULL;
}

/* Pages of the buffer that do not hold their last stamp. */
static long np_ig_bad(const struct np_ig *s, long *first)
{
	long bad = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (np_ig_ok(s, i, atomic_load(&s->gen[i])))
			continue;
		if (!bad && first)
			*first = i;
		bad++;
	}
	return bad;
}

FIXTURE(integ)
{
	int fd;
	struct numaplace_info info;
	struct np_ctx c;
	__u32 eflags;
	__u32 allowed;
	int vma_only;
	struct np_ig *s;
	size_t slen;
	pid_t kid;
	int mfd;
};

NP_ENGINE_VARIANTS(integ);

FIXTURE_SETUP(integ)
{
	self->kid = -1;
	self->mfd = -1;
	self->s = MAP_FAILED;
	if (NP_MIG_SETUP(&self->fd, &self->c, &self->info))
		return;
	psz = self->c.psz;
	if (variant->feature && !(self->info.features & variant->feature))
		SKIP(return, "engine not available (features %#llx)",
		     (unsigned long long)self->info.features);
	self->eflags = variant->flags;
	self->allowed = np_engines_allowed(&self->info, variant->flags);
	/* The batched engine hands what it does not move to the kernel's. */
	self->vma_only = variant->flags == NUMAPLACE_MIGRATE_ENGINE_VMA ||
			 (variant->flags == NUMAPLACE_MIGRATE_ENGINE_BATCH &&
			  !(self->info.features & NUMAPLACE_FEAT_MIGRATE_KERNEL));
}

FIXTURE_TEARDOWN(integ)
{
	if (self->s != MAP_FAILED)
		atomic_store(&self->s->stop, 1);
	if (self->kid > 0) {
		kill(self->kid, SIGKILL);
		waitpid(self->kid, NULL, 0);
	}
	if (self->s != MAP_FAILED) {
		if (self->s->buf)
			munmap(self->s->buf, self->s->n * psz);
		munmap(self->s, self->slen);
	}
	if (self->mfd >= 0)
		close(self->mfd);
	if (self->fd >= 0)
		close(self->fd);
}

/* The buffer of @kind, @n pages, first stamps written on node 0. */
static char *np_ig_buf(FIXTURE_DATA(integ) *self, enum np_ig_kind kind,
		       size_t n)
{
	size_t len = n * psz;
	char path[] = "/tmp/np-integrity-XXXXXX", *p;

	switch (kind) {
	case NP_IG_ANON:
	case NP_IG_THP:
		p = np_pmd_map(len, kind == NP_IG_THP);
		if (!p)
			return NULL;
		if (kind == NP_IG_THP) {
			/*
			 * THPs now, and no khugepaged later: a collapse of
			 * pages an engine split, allocated on the node it saw
			 * before a move, would move them back behind us.
			 */
			memset(p, 0, len);
			madvise(p, len, MADV_NOHUGEPAGE);
		}
		return p;
	case NP_IG_FORK:
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	case NP_IG_MEMFD:
		self->mfd = memfd_create("np-integrity", MFD_CLOEXEC);
		break;
	case NP_IG_FILE:
		self->mfd = mkstemp(path);
		if (self->mfd >= 0)
			unlink(path);
		break;
	}
	if (self->mfd < 0 || ftruncate(self->mfd, len))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->mfd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The fork child: maps every page, writes its own, checks all at the end. */
static void np_ig_child(struct np_ig *s)
{
	long bad;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (size_t i = 0; i < s->n; i++)
		(void)((volatile char *)s->buf)[i * psz];
	atomic_store(&s->child_ready, 1);
	np_ig_write(s, s->writers - 1);
	atomic_store(&s->child_done, 1);
	while (!atomic_load(&s->verify))
		usleep(1000);
	bad = np_ig_bad(s, NULL);
	atomic_store(&s->child_bad, bad);
	_exit(0);
}


/*
 * The test: @n pages of @kind, stamped by the writers while the buffer
 * moves between nodes 0 and 1 (@flags added to each call).
 */
static void np_integrity(struct __test_metadata *_metadata,
			 FIXTURE_DATA(integ) *self, enum np_ig_kind kind,
			 size_t n, __u32 flags)
{
	int child = kind == NP_IG_FORK, threads = NP_IG_WRITERS;
	struct np_writer w[NP_IG_WRITERS];
	pthread_t th[NP_IG_WRITERS];
	__s32 *st = calloc(n + 1, sizeof(*st));
	long rounds = 0, busy = 0, moved = 0, other = 0, misplaced = 0;
	long t0, first = -1, bad;
	__u32 engines = 0;
	struct numaplace_migrate m;
	struct np_ig *s;
	int node = 0, where = 0, status;
	char what[64];

	ASSERT_NE(NULL, st);
	self->slen = sizeof(*s) + n * sizeof(s->gen[0]);
	s = self->s = mmap(NULL, self->slen, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, s);
	atomic_store(&s->first_bad, -1);
	s->n = n;
	s->writers = threads + child;
	np_mempolicy(MPOL_BIND, 0);
	s->buf = np_ig_buf(self, kind, n);
	ASSERT_NE(NULL, s->buf);
	for (size_t i = 0; i < n; i++)
		np_ig_stamp(s, i, 0);
	np_mempolicy(MPOL_DEFAULT, -1);
	for (size_t i = 0; i < n; i++)
		atomic_store(&s->gen[i], 0);

	if (child) {
		self->kid = fork();
		ASSERT_GE(self->kid, 0);
		if (self->kid == 0)
			np_ig_child(s);
		while (!atomic_load(&s->child_ready)) {
			ASSERT_EQ(0, waitpid(self->kid, &status, WNOHANG))
				TH_LOG("the child died: status %#x", status);
			usleep(1000);
		}
	}
	for (int i = 0; i < threads; i++) {
		w[i].s = s;
		w[i].id = i;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, np_ig_thread, &w[i]));
	}

	t0 = np_mono_ms();
	while (rounds < NP_IG_MAX_ROUNDS &&
	       (rounds < NP_IG_MIN_ROUNDS || np_mono_ms() - t0 < NP_IG_MS)) {
		int ret;

		node ^= 1;
		for (size_t i = 0; i <= n; i++)
			st[i] = NP_SENTINEL;
		ret = np_migrate_node(self->fd, 0, flags | self->eflags,
				      (uintptr_t)s->buf, n * psz, node, st, &m);
		rounds++;
		if (ret) {
			EXPECT_EQ(0, ret) TH_LOG("round %ld: %s", rounds,
						 strerror(-ret));
			break;
		}
		NP_ROUND_DONE(self, m, st, n, rounds, what);
		engines |= m.engines;
		for (size_t i = 0; i < n; i++) {
			if (st[i] == node) {
				moved++;
			} else if (st[i] == -EBUSY) {
				busy++;
			} else if (other++ < 4) {
				ksft_print_msg("round %ld page %zu: status %d\n",
					       rounds, i, st[i]);
			}
		}
		/* What says it is on the target is there. */
		{
			long f = 0;
			int wh = 0;
			long not_on = np_pages_not_on(0, s->buf, n, node, &f, &wh);
			long busy_now = 0;

			for (size_t i = 0; i < n; i++)
				busy_now += st[i] == -EBUSY;
			if (not_on > busy_now) {
				misplaced++;
				ksft_print_msg("round %ld: %ld pages not on node %d, %ld were -EBUSY; page %ld on %d\n",
					       rounds, not_on, node, busy_now, f, wh);
			}
		}
	}
	atomic_store(&s->stop, 1);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	while (child && !atomic_load(&s->child_done)) {
		/* A SIGBUS or SIGSEGV in the child ends the test here. */
		ASSERT_EQ(0, waitpid(self->kid, &status, WNOHANG))
			TH_LOG("the child died: status %#x", status);
		usleep(1000);
	}

	/* The last target, for the pages a race kept back. */
	for (int tries = 0; tries < NP_IG_FINAL_TRIES; tries++) {
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, flags | self->eflags,
					     (uintptr_t)s->buf, n * psz, node,
					     st, &m));
		if (!m.nr_failed_pages)
			break;
	}
	ksft_print_msg("%ld rounds in %ld ms, %ld writes: %ld pages moved "
		       "(engines %#x), %ld -EBUSY, %ld other\n", rounds,
		       np_mono_ms() - t0, (long)atomic_load(&s->writes), moved,
		       engines, busy, other);
	EXPECT_EQ(0, other);
	EXPECT_EQ(0, misplaced);
	EXPECT_EQ(0, m.nr_failed_pages) TH_LOG("after %d calls", NP_IG_FINAL_TRIES);
	/* Races may refuse a page now and then; not one in ten. */
	EXPECT_LT(busy * 10, moved + busy);
	EXPECT_EQ(0, atomic_load(&s->errors))
		TH_LOG("writers found %ld stamps changed, first page %ld",
		       (long)atomic_load(&s->errors),
		       (long)atomic_load(&s->first_bad));
	EXPECT_EQ(0, np_pages_not_on(0, s->buf, n, node, &first, &where))
		TH_LOG("page %ld on %d, not %d", first, where, node);
	if (child) {
		EXPECT_EQ(0, np_pages_not_on(self->kid, s->buf, n, node, &first,
					  &where))
			TH_LOG("child: page %ld on %d, not %d", first, where, node);
		NP_KID_VERIFY(self->kid, &s->verify, &s->child_bad);
	}
	first = -1;
	bad = np_ig_bad(s, &first);
	EXPECT_EQ(0, bad) TH_LOG("first bad page %ld", first);
	free(st);
}

TEST_F_TIMEOUT(integ, anon_4k, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_integrity(_metadata, self, NP_IG_ANON, 128, 0);
}

TEST_F_TIMEOUT(integ, thp, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	/*
	 * The migrate_vma engine moves THPs only by splitting them, and
	 * then 4 KiB at a time: one THP is enough for it.
	 */
	np_integrity(_metadata, self, NP_IG_THP, (self->vma_only ? 1 : 4) * 512,
		     self->vma_only ? NUMAPLACE_MIGRATE_SPLIT_OK : 0);
}

TEST_F_TIMEOUT(integ, shared_fork, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	if (self->vma_only)
		SKIP(return, "the migrate_vma engine moves private anon only");
	/* Two writers in two processes: every move flushes both TLBs. */
	np_integrity(_metadata, self, NP_IG_FORK, 64,
		     NUMAPLACE_MIGRATE_MOVE_ALL);
}

TEST_F_TIMEOUT(integ, memfd, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	if (self->vma_only)
		SKIP(return, "the migrate_vma engine moves private anon only");
	np_integrity(_metadata, self, NP_IG_MEMFD, 128, 0);
}

TEST_F_TIMEOUT(integ, tmpfs_file, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	if (self->vma_only)
		SKIP(return, "the migrate_vma engine moves private anon only");
	np_integrity(_metadata, self, NP_IG_FILE, 128, 0);
}

NP_HARNESS_MAIN
