// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE against move_pages(2) while the pages are busy,
 * once per engine (fixture "migrate_busy", migrate.c's NP_MIG_FIXTURE()).
 *
 * A page can be busy for a moment: pinned by a process_vm_readv(2) in
 * flight (pin_user_pages_remote()), locked, or holding a reference
 * besides the migration's. The kernel's migrate_pages() passes over such
 * a page again, NR_MAX_MIGRATE_PAGES_RETRY (10) passes in all, and
 * move_pages(2) moves it; the module's page-table, batched and
 * migrate_vma engines pass over what they left just as often
 * (NP_MIGRATE_BUSY_PASSES, module/migrate.c).
 *
 * The test moves two twin buffers between nodes 0 and 1, round after
 * round, one with the ioctl and one with the syscall (A B, then B A),
 * while two writer threads stamp one word of every page of both, sweep
 * after sweep, and a third thread reads one page of each, again and
 * again, with process_vm_readv(2). A pinned anonymous page cannot be
 * unmapped for migration (the anon-exclusive check of
 * try_to_migrate_one()). The ioctl goes in range mode and in array mode
 * by turns; a page unmapped in each buffer splits the array into two
 * stretches (the pinned page in the second), and in range mode its
 * answer (-EFAULT) must survive the passes over the busy pages. The
 * ioctl must leave no more pages behind than the syscall
 * (NP_BUSY_SLACK), answer each page it left -EBUSY, count every page
 * once, and count each page it left in /proc/vmstat's pgmigrate_fail;
 * every word must be what was last written there. Each round
 * moves every page again, so a reference or a pin that a pass leaked
 * would leave its page behind in every round after; nr_isolated_anon
 * must be back where it started.
 *
 * On 4683408 the page-table engine made one pass: the pinned page was
 * left, -EBUSY, whenever that pass met the pin (6.1: 3 of 24 rounds by
 * default, 2 with ENGINE_PT; the syscall none).
 *
 * pinned_shuffled gives the ioctl an array in a new shuffled order every
 * round: no page named twice, so the busy pages are passed over again
 * as for an ascending one. Before that, only an ascending array's were.
 * held_passes counts those passes (STATS_GET's migrate-retry-passes)
 * with a page held for the whole call (vmsplice(2) into a pipe): as many
 * for a shuffled array as for an ascending one, none for an array that
 * names a page twice, none for the kernel engine (migrate_pages() makes
 * its own).
 */
#include <linux/mempolicy.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "migrate_lib.h"
#include "np_genl.h"
#include "kselftest_harness.h"

/* Pages of each buffer: 1 MiB, so a round is quick and the pin often met. */
#define NP_BUSY_PAGES	256
/* The page the reader pins, in each buffer. */
#define NP_BUSY_HOT	(NP_BUSY_PAGES / 2)
/*
 * The page unmapped in each buffer (a hole: -EFAULT), below the pinned
 * one: in array mode the pinned page is in the second stretch.
 */
#define NP_BUSY_HOLE	(NP_BUSY_PAGES / 4)
/*
 * Moves of each buffer: enough that a single pass meets the pin in
 * several rounds (2 to 3 of 24 seen on 4683408).
 */
#define NP_BUSY_ROUNDS	32
/*
 * pinned_shuffled's: fewer, each test of the file takes a minute or two
 * per engine under TCG. Without passes over a shuffled array's busy
 * pages the pinned page was left in 12 of 48 rounds (6.1).
 */
#define NP_BUSY_SHUFFLED_ROUNDS	24
/*
 * Pages the ioctl may leave beyond the syscall: a pin whose holder the
 * host does not run for longer than all the passes together (seen once
 * in 46 rounds with a busy page, 7.3, TCG on 2 host cores: the pin held
 * for over 8 ms). The syscall's passes meet the same stalls.
 */
#define NP_BUSY_SLACK	1
/* The writer threads (each stamps every other page). */
#define NP_BUSY_WRITERS	2
/* Isolated pages are back on the LRU this soon after the last move. */
#define NP_BUSY_SETTLE_MS	2000

static long psz;

NP_MIG_FIXTURE(migrate_busy)

/* Two buffers (0: the ioctl's, 1: the syscall's), shared with the threads. */
struct np_busy {
	char *buf[2];
	__u64 *last[2];		/* per page: the stamp last written in word 0 */
	volatile int stop;
	unsigned long nr_pins;	/* process_vm_readv(2) calls that read a page */
	unsigned long nr_sweeps;
};

struct np_busy_writer {
	struct np_busy *s;
	int id;
};

/* Word @k of page @i of buffer @b, as filled (word 0 is the writers'). */
static __u64 np_busy_word(int b, size_t i, size_t k)
{
	return ((__u64)b << 62) ^ (i * 0x9e3779b97f4a7c15ULL) ^ k;
}

static void np_busy_fill(struct np_busy *s)
{
	for (int b = 0; b < 2; b++) {
		for (size_t i = 0; i < NP_BUSY_PAGES; i++) {
			__u64 *w = (__u64 *)(s->buf[b] + i * psz);

			if (i == NP_BUSY_HOLE)
				continue;

			for (size_t k = 0; k < psz / 8; k++)
				w[k] = np_busy_word(b, i, k);
			s->last[b][i] = w[0];
		}
	}
}

/* Stamp word 0 of every page this writer owns, in both buffers. */
static void *np_busy_write(void *arg)
{
	const struct np_busy_writer *wr = arg;
	struct np_busy *s = wr->s;
	__u64 gen = 0;

	while (!s->stop) {
		gen++;
		for (int b = 0; b < 2; b++) {
			for (size_t i = wr->id; i < NP_BUSY_PAGES;
			     i += NP_BUSY_WRITERS) {
				__u64 v = gen << 32 | i << 1 | b;

				if (i == NP_BUSY_HOLE)
					continue;

				*(volatile __u64 *)(s->buf[b] + i * psz) = v;
				s->last[b][i] = v;
			}
		}
		if (!wr->id)
			s->nr_sweeps++;
	}
	return NULL;
}

/* Pin and read the hot page of each buffer, in turn, until told to stop. */
static void *np_busy_pin(void *arg)
{
	struct np_busy *s = arg;
	char *tmp = malloc(psz);
	struct iovec local = { tmp, psz }, remote;
	pid_t self = getpid();

	for (int b = 0; tmp && !s->stop; b ^= 1) {
		remote.iov_base = s->buf[b] + NP_BUSY_HOT * psz;
		remote.iov_len = psz;
		if (process_vm_readv(self, &local, 1, &remote, 1, 0) == psz)
			s->nr_pins++;
	}
	free(tmp);
	return NULL;
}

/* Pages of buffer @b not on @node (queried with move_pages(2)). */
static long np_busy_left(const struct np_busy *s, int b, int node)
{
	__u64 addrs[NP_BUSY_PAGES];
	int st[NP_BUSY_PAGES];
	long left = 0;

	np_range_addrs(addrs, (uintptr_t)s->buf[b], NP_BUSY_PAGES);
	if (np_sys_query(0, NP_BUSY_PAGES, addrs, st))
		return -1;
	for (size_t i = 0; i < NP_BUSY_PAGES; i++)
		left += i != NP_BUSY_HOLE && st[i] != node;
	return left;
}

/* Words not as filled or last written. Call with the writers stopped. */
static long np_busy_bad(const struct np_busy *s, int b, size_t *first)
{
	long bad = 0;

	for (size_t i = 0; i < NP_BUSY_PAGES; i++) {
		const __u64 *w = (const __u64 *)(s->buf[b] + i * psz);
		int ok;

		if (i == NP_BUSY_HOLE)
			continue;
		ok = w[0] == s->last[b][i];

		for (size_t k = 1; ok && k < psz / 8; k++)
			ok = w[k] == np_busy_word(b, i, k);
		if (!ok && !bad++)
			*first = i;
	}
	return bad;
}

/* How the ioctl names its buffer's pages in a round. */
enum np_busy_mode {
	NP_BUSY_RANGE,		/* range mode */
	NP_BUSY_ASCENDING,	/* array mode, every page but the hole, ascending */
	NP_BUSY_SHUFFLED,	/* the same pages, shuffled anew each round */
};

/* Shuffle @n entries of @a and @page alike (Fisher-Yates, seeded by @seed). */
static void np_busy_shuffle(__u64 *a, size_t *page, size_t n, unsigned int seed)
{
	__u64 x = seed * 0x9e3779b97f4a7c15ULL + 1;

	for (size_t i = n - 1; i > 0; i--) {
		size_t j, tp;
		__u64 t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = x % (i + 1);
		t = a[i], a[i] = a[j], a[j] = t;
		tp = page[i], page[i] = page[j], page[j] = tp;
	}
}

/*
 * One move of the ioctl's buffer to @node, naming its pages as @mode
 * says (array modes at an offset inside each page; round @r seeds the
 * shuffle). Return: pages left behind, or -1 with the reason logged. A
 * page left must be answered -EBUSY (the buffer holds nothing else to
 * refuse), a page moved with @node, the hole -EFAULT in range mode; every
 * entry is counted once.
 */
static long np_busy_ioctl(struct __test_metadata *_metadata,
			  FIXTURE_DATA(migrate_busy) *self,
			  const struct np_busy *s, int node,
			  enum np_busy_mode mode, int r)
{
	int array = mode != NP_BUSY_RANGE;
	__u64 addrs[NP_BUSY_PAGES], n = 0;
	__s32 st[NP_BUSY_PAGES];
	size_t page[NP_BUSY_PAGES];
	struct numaplace_migrate m;
	long left = 0;
	int ret;

	np_migrate_init(&m, 0, self->eflags, NUMAPLACE_POLICY_NODE);
	m.node = node;
	m.status_ptr = (uintptr_t)st;
	for (size_t i = 0; i < NP_BUSY_PAGES; i++) {
		if (array && i == NP_BUSY_HOLE)
			continue;
		addrs[n] = (uintptr_t)s->buf[0] + i * psz + i % 8 * 8;
		page[n++] = i;
	}
	if (mode == NP_BUSY_SHUFFLED)
		np_busy_shuffle(addrs, page, n, r);
	if (array) {
		m.flags |= NUMAPLACE_MIGRATE_PAGES;
		m.pages_ptr = (uintptr_t)addrs;
		m.count = n;
	} else {
		m.start = (uintptr_t)s->buf[0];
		m.len = NP_BUSY_PAGES * psz;
	}
	ret = np_migrate(self->fd, &m);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(n, m.done);
	if (ret || m.done != n)
		return -1;
	EXPECT_EQ(n, m.nr_moved_pages + m.nr_in_place_pages +
		     m.nr_failed_pages);
	for (size_t k = 0; k < n; k++) {
		if (page[k] == NP_BUSY_HOLE) {
			EXPECT_EQ(-EFAULT, st[k]);
			continue;
		}
		if (st[k] == node)
			continue;
		EXPECT_EQ(-EBUSY, st[k]) TH_LOG("page %zu", page[k]);
		left++;
	}
	EXPECT_EQ(left, m.nr_failed[NUMAPLACE_FAIL_EBUSY]);
	return left;
}

/*
 * One move of the syscall's buffer to @node. Its statuses are not read:
 * when a page is left, do_pages_move() returns how many and leaves the
 * batch's entries unwritten. Return: pages left behind, or -1.
 */
static long np_busy_syscall(struct __test_metadata *_metadata,
			    const struct np_busy *s, int node)
{
	__u64 addrs[NP_BUSY_PAGES];
	int nodes[NP_BUSY_PAGES], st[NP_BUSY_PAGES];
	long ret;

	np_range_addrs(addrs, (uintptr_t)s->buf[1], NP_BUSY_PAGES);
	for (size_t i = 0; i < NP_BUSY_PAGES; i++)
		nodes[i] = node;
	ret = np_sys_move_pages(0, NP_BUSY_PAGES, addrs, nodes, st,
				NP_MF_MOVE);
	EXPECT_LE(0, ret) TH_LOG("move_pages: %s", strerror(-ret));
	return ret < 0 ? -1 : np_busy_left(s, 1, node);
}

/* The ioctl's mode in round @r: @mode, or range and ascending by turns. */
static enum np_busy_mode np_busy_mode_of(int mode, int r)
{
	if (mode >= 0)
		return mode;
	return r / 2 % 2 ? NP_BUSY_ASCENDING : NP_BUSY_RANGE;
}

/*
 * @rounds rounds of both buffers under the writers and the pinner, the
 * ioctl's in @mode (-1: range and ascending by turns), and every check.
 */
static void np_busy_run(struct __test_metadata *_metadata,
			FIXTURE_DATA(migrate_busy) *self, int mode, int rounds)
{
	struct np_busy s = { 0 };
	struct np_busy_writer wr[NP_BUSY_WRITERS];
	pthread_t th[NP_BUSY_WRITERS + 1];
	long left[2] = { 0, 0 }, n = 0, bad, anon0, file0, anon, file;
	long fail0;
	size_t first = 0;
	int r, b, t;

	ASSERT_EQ(0, np_isolated(&anon0, &file0));
	for (b = 0; b < 2; b++) {
		s.buf[b] = np_pmd_map(NP_BUSY_PAGES * psz, 0);
		s.last[b] = calloc(NP_BUSY_PAGES, sizeof(*s.last[b]));
		ASSERT_TRUE(s.buf[b] && s.last[b]);
		ASSERT_EQ(0, munmap(s.buf[b] + NP_BUSY_HOLE * psz, psz));
	}
	np_mempolicy(MPOL_BIND, 0);
	np_busy_fill(&s);
	np_mempolicy(MPOL_DEFAULT, -1);
	for (t = 0; t < NP_BUSY_WRITERS; t++) {
		wr[t] = (struct np_busy_writer){ &s, t };
		ASSERT_EQ(0, pthread_create(&th[t], NULL, np_busy_write, &wr[t]));
	}
	ASSERT_EQ(0, pthread_create(&th[t], NULL, np_busy_pin, &s));
	fail0 = np_vmstat("pgmigrate_fail");

	/* Round r moves both buffers to node (r + 1) % 2: A B, then B A. */
	for (r = 0; r < rounds; r++) {
		int node = (r + 1) % 2;

		for (int k = 0; k < 2; k++) {
			b = (r % 2) ^ k;	/* 0: the ioctl's buffer */
			n = b ? np_busy_syscall(_metadata, &s, node) :
				np_busy_ioctl(_metadata, self, &s, node,
					      np_busy_mode_of(mode, r), r);
			if (n < 0)
				break;
			left[b] += n;
		}
		if (n < 0)
			break;
	}
	s.stop = 1;
	for (t = 0; t <= NP_BUSY_WRITERS; t++)
		pthread_join(th[t], NULL);

	TH_LOG("%d rounds, %lu pins, %lu sweeps: pages left: ioctl %ld, move_pages %ld",
	       r, s.nr_pins, s.nr_sweeps, left[0], left[1]);
	EXPECT_EQ(rounds, r);
	/* The race happened: the reader pinned, the writers wrote, all along. */
	EXPECT_LT(rounds, s.nr_pins);
	EXPECT_LT(0, s.nr_sweeps);
	EXPECT_LE(left[0], left[1] + NP_BUSY_SLACK);
	/* The syscall's pages left count there too: at least the ioctl's. */
	if (fail0 >= 0)
		EXPECT_LE(fail0 + left[0], np_vmstat("pgmigrate_fail"));
	for (b = 0; b < 2; b++) {
		bad = np_busy_bad(&s, b, &first);
		EXPECT_EQ(0, bad) TH_LOG("buffer %d: first bad page %zu", b, first);
		munmap(s.buf[b], NP_BUSY_PAGES * psz);
		free(s.last[b]);
	}
	ASSERT_EQ(0, np_isolated_settle(anon0, file0, NP_BUSY_SETTLE_MS,
					&anon, &file));
	EXPECT_LE(anon, anon0);
}

TEST_F_TIMEOUT(migrate_busy, pinned_and_written, NP_TIMEOUT(120))
{
	NP_SKIPPED_OR_FILTERED();
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	np_busy_run(_metadata, self, -1, NP_BUSY_ROUNDS);
}

TEST_F_TIMEOUT(migrate_busy, pinned_shuffled, NP_TIMEOUT(180))
{
	NP_SKIPPED_OR_FILTERED();
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	if (self->eflags == NUMAPLACE_MIGRATE_ENGINE_KERNEL)
		SKIP(return, "migrate_pages() makes its own passes (pinned_and_written)");
	np_busy_run(_metadata, self, NP_BUSY_SHUFFLED, NP_BUSY_SHUFFLED_ROUNDS);
}

/* Pages of held_passes' buffer, and the one vmsplice(2) holds. */
#define NP_HELD_PAGES	16
#define NP_HELD_PAGE	3

/*
 * Move @n entries of @addrs to node 1. Return: the retry passes the call
 * made (STATS_GET before and after), or -1; *@st of the held page's entry.
 */
static long np_held_move(struct __test_metadata *_metadata,
			 FIXTURE_DATA(migrate_busy) *self, struct np_nl *nl,
			 const __u64 *addrs, size_t n, size_t held,
			 __s32 *held_st, __u32 *engines)
{
	struct np_gn_stats a, b;
	struct numaplace_migrate m;
	__s32 st[NP_HELD_PAGES + 1];
	int ret;

	np_migrate_init(&m, 0, self->eflags | NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_NODE);
	m.node = 1;
	m.status_ptr = (uintptr_t)st;
	m.pages_ptr = (uintptr_t)addrs;
	m.count = n;
	if (np_gn_stats(nl, &a))
		return -1;
	ret = np_migrate(self->fd, &m);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(n, m.done);
	if (np_gn_stats(nl, &b) || ret)
		return -1;
	*held_st = st[held];
	*engines |= m.engines;
	return b.migrate_retry_passes - a.migrate_retry_passes;
}

TEST_F_TIMEOUT(migrate_busy, held_passes, NP_TIMEOUT(60))
{
	NP_SKIPPED_OR_FILTERED();
	__u64 addrs[NP_HELD_PAGES + 1];
	long asc, shuf, twice, overlap;
	__u32 engines = 0;
	struct np_nl nl;
	struct iovec iov;
	__s32 held;
	int pfd[2];
	char *p;

	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	ASSERT_EQ(0, np_gn_open(&nl));
	p = np_pmd_map(NP_HELD_PAGES * psz, 0);
	ASSERT_NE(NULL, p);
	np_mempolicy(MPOL_BIND, 0);
	memset(p, 0x5a, NP_HELD_PAGES * psz);
	np_mempolicy(MPOL_DEFAULT, -1);
	ASSERT_EQ(0, pipe(pfd));
	iov.iov_base = p + NP_HELD_PAGE * psz;
	iov.iov_len = psz;
	if (vmsplice(pfd[1], &iov, 1, 0) != psz)
		SKIP(return, "vmsplice: %s", strerror(errno));

	/* Ascending. */
	np_range_addrs(addrs, (uintptr_t)p, NP_HELD_PAGES);
	asc = np_held_move(_metadata, self, &nl, addrs, NP_HELD_PAGES,
			   NP_HELD_PAGE, &held, &engines);
	EXPECT_EQ(-EBUSY, held);
	/* Descending: the same pages, each named once. */
	for (size_t i = 0; i < NP_HELD_PAGES; i++)
		addrs[i] = (uintptr_t)p + (NP_HELD_PAGES - 1 - i) * psz;
	shuf = np_held_move(_metadata, self, &nl, addrs, NP_HELD_PAGES,
			    NP_HELD_PAGES - 1 - NP_HELD_PAGE, &held, &engines);
	EXPECT_EQ(-EBUSY, held);
	/* Page 0 named again at the end: no pass over again. */
	np_range_addrs(addrs, (uintptr_t)p, NP_HELD_PAGES);
	addrs[NP_HELD_PAGES] = (uintptr_t)p;
	twice = np_held_move(_metadata, self, &nl, addrs, NP_HELD_PAGES + 1,
			     NP_HELD_PAGE, &held, &engines);
	EXPECT_EQ(-EBUSY, held);
	/* Pages 8..15, then 0..8: page 8 twice, in stretches apart. */
	np_range_addrs(addrs, (uintptr_t)p + 8 * psz, 8);
	np_range_addrs(addrs + 8, (uintptr_t)p, 9);
	overlap = np_held_move(_metadata, self, &nl, addrs, NP_HELD_PAGES + 1,
			       8 + NP_HELD_PAGE, &held, &engines);
	EXPECT_EQ(-EBUSY, held);
	TH_LOG("retry passes: ascending %ld, descending %ld, a page twice %ld and %ld (engines %#x)",
	       asc, shuf, twice, overlap, engines);
	ASSERT_LE(0, asc);
	ASSERT_LE(0, shuf);
	if (engines & ~NUMAPLACE_ENGINE_KERNEL) {
		EXPECT_LT(0, asc);
	} else {
		EXPECT_EQ(0, asc);
	}
	EXPECT_EQ(asc, shuf);
	EXPECT_EQ(0, twice);
	EXPECT_EQ(0, overlap);
	close(pfd[0]);
	close(pfd[1]);
	munmap(p, NP_HELD_PAGES * psz);
	np_nl_close(&nl);
}

NP_HARNESS_MAIN
