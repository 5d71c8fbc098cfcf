// SPDX-License-Identifier: GPL-2.0
/*
 * Placement watches (NUMAPLACE_IOC_WATCH). The oracle for every record is
 * a QUERY of the same range after the move; and every stream must be
 * consistent on its own: each record's "before" is the previous record's
 * "after" (the first one's is the totals the ioctl returned), numbers are
 * consecutive (an OVERFLOW record counts the ones it replaces), pages add
 * up to the range, the cookie is the watch's.
 *  - idle: reads, writes and mprotect make no record;
 *  - move_pages / migrate_pages / numaplace_migrate: records up to the
 *    QUERY totals, reason MIGRATED;
 *  - munmap_part / munmap_whole: UNMAPPED, then GONE and end of file;
 *  - child_exit / child_exec: GONE when the watched process goes;
 *  - overflow: a reader that does not read gets one OVERFLOW record,
 *    while a second watch paces the changes;
 *  - many_ranges: 64 watches on one buffer's pieces and one on all of it;
 *  - thp: a PMD-mapped THP buffer moved by numaplace;
 *  - cli: `numaplace watch --json` prints the start and the move;
 *  - cycles: 1,000 watch/close with no slab growth, refcount back, and a
 *    watch fd holds the module;
 *  - netlink: the WATCH event on the "events" group carries the record;
 *  - permission: another user's process cannot be watched, one's own can;
 *  - bad_input: flags, reserved, sizes, ranges, pids, read sizes.
 */
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "np_test.h"
#include "kselftest_harness.h"

#define WT_PAGES	256	/* the watched buffer: 1 MiB of 4 KiB pages */
/* Long enough for the module's debounce and worker in a busy TCG guest. */
#define WT_WAIT_MS	10000
/* Quiet time that proves no record comes: many debounce periods. */
#define WT_IDLE_MS	500
#define WT_RECS		512	/* records a test keeps */
#define WT_RANGES	64	/* many_ranges: watches at once */
#define WT_CYCLES	1000	/* cycles: watch/close pairs per batch */
#define WT_SLAB_SLACK_KB 96	/* as load.c: a leak grows every batch */
#define WT_BATCHES	3
/* overflow: changes made (each seen by the pacer): well past the queue. */
#define WT_FLOOD	300
#define WT_FLOOD_MS	60000
#define WT_MODULE_PATH	"/usr/lib/numaplace/numaplace.ko"

static long psz;

/* child_exec: the program run again with this in its environment exits. */
#define WT_EXEC_ENV	"NP_WATCH_EXEC_CHILD=1"

static void __attribute__((constructor)) wt_exec_child(void)
{
	const char *v = getenv("NP_WATCH_EXEC_CHILD");

	if (v && *v == '1')
		_exit(0);
}

/* The state a stream of records has reached. */
struct wt_stream {
	__u64 cookie;
	__u64 seq;			/* last number seen */
	__u64 totals[NUMAPLACE_WATCH_NODES + 1]; /* per node, then unplaced */
	unsigned int nr_nodes;
	__u64 nr_pages;
	int nr_recs, nr_overflow, gone, eof;
	struct numaplace_watch_record last;
};

FIXTURE(watch) {
	int fd;
	struct numaplace_info info;
	char *buf;
	size_t len;
};

FIXTURE_SETUP(watch)
{
	self->buf = MAP_FAILED;
	psz = sysconf(_SC_PAGESIZE);
	self->len = WT_PAGES * psz;
	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &self->info));
	if (!(self->info.features & NUMAPLACE_FEAT_WATCH))
		SKIP(return, "no NUMAPLACE_FEAT_WATCH");
	if (!np_node_isset(self->info.node_memory, 0) ||
	    !np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs memory on nodes 0 and 1");
	ASSERT_LE(self->info.nr_node_ids, NUMAPLACE_WATCH_NODES);
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	self->buf = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, self->len);
}

FIXTURE_TEARDOWN(watch)
{
	if (self->buf != MAP_FAILED)
		munmap(self->buf, self->len);
	if (self->fd >= 0)
		close(self->fd);
}

/* The 6.1 harness runs the body after a SKIP() in FIXTURE_SETUP(). */
#define WT_SKIPPED()				\
	do {					\
		if (_metadata->skip)		\
			return;			\
	} while (0)

static int wt_watch(int dev, int pid, const void *start, size_t len,
		    __u64 cookie, __u32 flags, __u64 *totals, __u32 nr)
{
	struct numaplace_watch w;
	int fd;

	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.flags = flags;
	w.pid = pid;
	w.start = (uintptr_t)start;
	w.len = len;
	w.cookie = cookie;
	w.node_pages_ptr = (uintptr_t)totals;
	w.node_pages_len = totals ? nr : 0;
	do {
		fd = ioctl(dev, NUMAPLACE_IOC_WATCH, &w);
	} while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

/* Open a watch and start its stream from the totals the ioctl gives. */
static int wt_open(int dev, int pid, const void *start, size_t len,
		   __u64 cookie, __u32 flags, unsigned int nr_nodes,
		   struct wt_stream *s)
{
	__u64 sum = 0;
	unsigned int n;
	int fd;

	memset(s, 0, sizeof(*s));
	s->cookie = cookie;
	s->nr_nodes = nr_nodes;
	s->nr_pages = (((uintptr_t)start + len + psz - 1) / psz) -
		      (uintptr_t)start / psz;
	fd = wt_watch(dev, pid, start, len, cookie, flags | NUMAPLACE_WATCH_CLOEXEC,
		      s->totals, nr_nodes);
	if (fd < 0)
		return fd;
	for (n = 0; n < nr_nodes; n++)
		sum += s->totals[n];
	s->totals[nr_nodes] = s->nr_pages - sum;
	return fd;
}

/* QUERY's per-node totals of the range, then its unplaced pages. */
static int wt_query(int dev, int pid, const void *start, size_t len,
		    unsigned int nr_nodes, __u64 *totals)
{
	struct numaplace_query q;
	int ret;

	ret = np_query_range(dev, pid, 0, (uintptr_t)start, len, NULL, 0, NULL,
			     totals, nr_nodes, &q);
	totals[nr_nodes] = q.nr_unplaced;
	return ret;
}

/* One record against the stream: 0, or the number of faults (logged). */
static int wt_check_rec(struct __test_metadata *_metadata, struct wt_stream *s,
			const struct numaplace_watch_record *r)
{
	__u64 next = s->seq + (r->reason == NUMAPLACE_WATCH_OVERFLOW ?
			       r->nr_changed : 1);
	__u64 sum_b = r->unplaced_before, sum_a = r->unplaced_after;
	unsigned int n;
	int bad = 0;

	if (r->cookie != s->cookie || r->seq != next ||
	    r->nr_nodes != s->nr_nodes || s->gone) {
		TH_LOG("record: cookie %#llx seq %llu (want %#llx %llu) nodes %u gone %d",
		       (unsigned long long)r->cookie, (unsigned long long)r->seq,
		       (unsigned long long)s->cookie, (unsigned long long)next,
		       r->nr_nodes, s->gone);
		bad++;
	}
	for (n = 0; n < s->nr_nodes && n < NUMAPLACE_WATCH_NODES; n++) {
		sum_b += r->before[n];
		sum_a += r->after[n];
		if (r->before[n] != s->totals[n]) {
			TH_LOG("seq %llu node %u: before %llu, last after %llu",
			       (unsigned long long)r->seq, n,
			       (unsigned long long)r->before[n],
			       (unsigned long long)s->totals[n]);
			bad++;
		}
	}
	if (r->unplaced_before != s->totals[s->nr_nodes] ||
	    sum_b != s->nr_pages ||
	    (r->reason != NUMAPLACE_WATCH_GONE && sum_a != s->nr_pages) ||
	    r->start % psz || r->len % psz || !r->len ||
	    (r->reason != NUMAPLACE_WATCH_OVERFLOW &&
	     r->reason != NUMAPLACE_WATCH_GONE &&
	     (!r->nr_changed || r->nr_changed > r->len / psz))) {
		TH_LOG("seq %llu: reason %u unplaced %llu->%llu sums %llu->%llu of %llu, [%#llx +%#llx) changed %llu",
		       (unsigned long long)r->seq, r->reason,
		       (unsigned long long)r->unplaced_before,
		       (unsigned long long)r->unplaced_after,
		       (unsigned long long)sum_b, (unsigned long long)sum_a,
		       (unsigned long long)s->nr_pages,
		       (unsigned long long)r->start, (unsigned long long)r->len,
		       (unsigned long long)r->nr_changed);
		bad++;
	}
	s->seq = r->seq;
	memcpy(s->totals, r->after, s->nr_nodes * sizeof(__u64));
	s->totals[s->nr_nodes] = r->unplaced_after;
	s->nr_recs++;
	s->nr_overflow += r->reason == NUMAPLACE_WATCH_OVERFLOW;
	s->gone |= r->reason == NUMAPLACE_WATCH_GONE;
	s->last = *r;
	return bad;
}

/* The stream's totals equal @want (per node, then unplaced). */
static int wt_at(const struct wt_stream *s, const __u64 *want)
{
	return !memcmp(s->totals, want, (s->nr_nodes + 1) * sizeof(__u64));
}

/*
 * Read records until the stream reaches @want (NULL: until GONE), or
 * @ms pass. Returns the number of inconsistent records.
 */
static int wt_follow(struct __test_metadata *_metadata, int fd,
		     struct wt_stream *s, const __u64 *want, long ms)
{
	struct numaplace_watch_record r[8];
	long end = np_mono_ms() + ms;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int bad = 0, i;
	ssize_t n;

	while (!(want ? wt_at(s, want) : s->gone) && !s->eof) {
		long left = end - np_mono_ms();

		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		n = read(fd, r, sizeof(r));
		if (n == 0) {
			s->eof = 1;
			break;
		}
		if (n < 0 || n % sizeof(r[0])) {
			TH_LOG("read: %zd (%s)", n, strerror(errno));
			return bad + 1;
		}
		for (i = 0; i < n / (ssize_t)sizeof(r[0]); i++)
			bad += wt_check_rec(_metadata, s, &r[i]);
	}
	return bad;
}

/* Read every record until none comes for @quiet_ms. */
static int wt_drain(struct __test_metadata *_metadata, int fd,
		    struct wt_stream *s, long quiet_ms)
{
	struct numaplace_watch_record r[8];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int bad = 0, i;
	ssize_t n;

	while (poll(&p, 1, quiet_ms) > 0) {
		n = read(fd, r, sizeof(r));
		if (n <= 0 || n % sizeof(r[0]))
			return bad + (n != 0);
		for (i = 0; i < n / (ssize_t)sizeof(r[0]); i++)
			bad += wt_check_rec(_metadata, s, &r[i]);
	}
	return bad;
}

/* Nothing readable for @ms. */
static int wt_quiet(int fd, long ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 0;
}

/* Move @n pages from @start to @node with move_pages(2). 0 or -errno. */
static long wt_move_pages(char *start, int n, int node)
{
	__u64 *pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(*nodes)), *st = calloc(n, sizeof(*st));
	long ret = -ENOMEM;

	if (pages && nodes && st) {
		for (int i = 0; i < n; i++) {
			pages[i] = (uintptr_t)(start + i * psz);
			nodes[i] = node;
		}
		ret = np_sys_move_pages(0, n, pages, nodes, st, NP_MF_MOVE);
	}
	free(pages);
	free(nodes);
	free(st);
	return ret;
}

static void wt_dump(struct __test_metadata *_metadata, const char *what,
		    const struct wt_stream *s, const __u64 *want)
{
	TH_LOG("%s: %d records, last seq %llu reason %u; totals n0 %llu n1 %llu unplaced %llu, want %llu %llu %llu",
	       what, s->nr_recs, (unsigned long long)s->seq, s->last.reason,
	       (unsigned long long)s->totals[0], (unsigned long long)s->totals[1],
	       (unsigned long long)s->totals[s->nr_nodes],
	       (unsigned long long)want[0], (unsigned long long)want[1],
	       (unsigned long long)want[s->nr_nodes]);
}

/* Move the buffer with @how, then follow the watch to QUERY's totals. */
#define WT_MOVE_AND_CHECK(how, label)					\
	do {								\
		__u64 want[NUMAPLACE_WATCH_NODES + 1];			\
		ASSERT_EQ(0, (how));					\
		ASSERT_EQ(0, wt_query(self->fd, 0, self->buf, self->len,	\
				      nr, want));			\
		EXPECT_EQ(0, wt_follow(_metadata, wfd, &s, want, WT_WAIT_MS)); \
		if (!wt_at(&s, want))					\
			wt_dump(_metadata, label, &s, want);		\
		ASSERT_TRUE(wt_at(&s, want));				\
		EXPECT_EQ(NUMAPLACE_WATCH_MIGRATED, s.last.reason);	\
	} while (0)

TEST_F_TIMEOUT(watch, idle, 60)
{
	unsigned int nr = self->info.nr_node_ids;
	struct wt_stream s;
	volatile char sum = 0;
	int wfd;

	WT_SKIPPED();
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	wfd = wt_open(self->fd, 0, self->buf, self->len, 1, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	EXPECT_EQ(WT_PAGES, s.totals[0]);
	for (size_t i = 0; i < self->len; i += psz) {
		sum += self->buf[i];
		self->buf[i] = 1;
	}
	ASSERT_EQ(0, mprotect(self->buf, self->len, PROT_READ));
	ASSERT_EQ(0, mprotect(self->buf, self->len, PROT_READ | PROT_WRITE));
	EXPECT_TRUE(wt_quiet(wfd, WT_IDLE_MS));
	close(wfd);
	(void)sum;
}

TEST_F_TIMEOUT(watch, move_pages, 120)
{
	unsigned int nr = self->info.nr_node_ids;
	struct wt_stream s;
	int wfd;

	WT_SKIPPED();
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	wfd = wt_open(self->fd, 0, self->buf, self->len, 0xc0ffee, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(WT_PAGES, s.totals[0]);
	WT_MOVE_AND_CHECK(wt_move_pages(self->buf, WT_PAGES, 1), "all to 1");
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	WT_MOVE_AND_CHECK(wt_move_pages(self->buf + psz * 16, 32, 0),
			  "32 back to 0");
	EXPECT_EQ(32, s.totals[0]);
	/* The last record's sub-range covers what moved and no more. */
	EXPECT_LE((uintptr_t)s.last.start, (uintptr_t)self->buf + psz * 16);
	EXPECT_GE(s.last.start + s.last.len, (uintptr_t)self->buf + psz * 48);
	EXPECT_TRUE(wt_quiet(wfd, WT_IDLE_MS));
	close(wfd);
}

TEST_F_TIMEOUT(watch, migrate_pages, 120)
{
	unsigned int nr = self->info.nr_node_ids;
	unsigned long from = 1UL << 0, to = 1UL << 1;
	struct wt_stream s;
	int wfd;

	WT_SKIPPED();
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	wfd = wt_open(self->fd, 0, self->buf, self->len, 2, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	WT_MOVE_AND_CHECK(syscall(SYS_migrate_pages, 0, 64, &from, &to) < 0 ?
			  -errno : 0, "migrate_pages 0 -> 1");
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	close(wfd);
}

TEST_F_TIMEOUT(watch, numaplace_migrate, 120)
{
	unsigned int nr = self->info.nr_node_ids;
	struct numaplace_migrate m;
	struct wt_stream s;
	int wfd;

	WT_SKIPPED();
	if (!(self->info.ioctls & (1ULL << NUMAPLACE_CMD_MIGRATE)))
		SKIP(return, "no NUMAPLACE_IOC_MIGRATE");
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	wfd = wt_open(self->fd, 0, self->buf, self->len, 3, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	WT_MOVE_AND_CHECK(np_migrate_node(self->fd, 0, 0, (uintptr_t)self->buf,
					  self->len, 1, NULL, &m), "migrate to 1");
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	WT_MOVE_AND_CHECK(np_migrate_node(self->fd, 0, 0, (uintptr_t)self->buf,
					  self->len / 2, 0, NULL, &m),
			  "half back to 0");
	EXPECT_EQ(WT_PAGES / 2, s.totals[0]);
	close(wfd);
}

TEST_F_TIMEOUT(watch, munmap, 120)
{
	unsigned int nr = self->info.nr_node_ids;
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct numaplace_watch_record r;
	struct pollfd p;
	struct wt_stream s;
	int wfd;

	WT_SKIPPED();
	wfd = wt_open(self->fd, 0, self->buf, self->len, 4, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(0, s.totals[nr]);
	/* A quarter goes: UNMAPPED, and the watch goes on. */
	ASSERT_EQ(0, munmap(self->buf, self->len / 4));
	ASSERT_EQ(0, wt_query(self->fd, 0, self->buf, self->len, nr, want));
	ASSERT_EQ(WT_PAGES / 4, want[nr]);
	EXPECT_EQ(0, wt_follow(_metadata, wfd, &s, want, WT_WAIT_MS));
	ASSERT_TRUE(wt_at(&s, want));
	EXPECT_EQ(NUMAPLACE_WATCH_UNMAPPED, s.last.reason);
	EXPECT_EQ(WT_PAGES / 4, s.last.nr_changed);
	EXPECT_EQ((uintptr_t)self->buf, s.last.start);
	EXPECT_EQ(self->len / 4, s.last.len);
	/* The rest goes: GONE, then end of file and POLLHUP. */
	ASSERT_EQ(0, munmap(self->buf + self->len / 4, self->len * 3 / 4));
	self->buf = MAP_FAILED;
	EXPECT_EQ(0, wt_follow(_metadata, wfd, &s, NULL, WT_WAIT_MS));
	ASSERT_TRUE(s.gone);
	EXPECT_EQ(0, s.last.after[0] + s.last.after[1] + s.last.unplaced_after);
	EXPECT_EQ(0, read(wfd, &r, sizeof(r)));
	p = (struct pollfd){ .fd = wfd, .events = POLLIN };
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLHUP);
	close(wfd);
}

/*
 * A child maps a buffer, reports its address, waits for the word, then
 * exits (@exec: runs this program's test list instead, a new mm).
 */
static pid_t wt_child(struct __test_metadata *_metadata, size_t len,
		      int exec, int *go, char **addr)
{
	int up[2], down[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char *b = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (b == MAP_FAILED)
			_exit(1);
		memset(b, 1, len);
		if (write(up[1], &b, sizeof(b)) != sizeof(b) ||
		    read(down[0], &c, 1) != 1)
			_exit(1);
		if (exec)
			execle("/proc/self/exe", "watch", (char *)NULL,
			       (char *[]){ WT_EXEC_ENV, NULL });
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(sizeof(*addr), read(up[0], addr, sizeof(*addr)));
	close(up[0]);
	*go = down[1];
	return pid;
}

static void wt_child_gone(struct __test_metadata *_metadata, int dev,
			  unsigned int nr, int exec)
{
	size_t len = 64 * psz;
	struct wt_stream s;
	char *addr;
	int go, wfd, st;
	pid_t pid;

	pid = wt_child(_metadata, len, exec, &go, &addr);
	wfd = wt_open(dev, pid, addr, len, 5, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(0, s.totals[nr]);
	EXPECT_TRUE(wt_quiet(wfd, 100));
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);
	EXPECT_EQ(0, wt_follow(_metadata, wfd, &s, NULL, WT_WAIT_MS));
	EXPECT_TRUE(s.gone);
	EXPECT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(wfd);
}

TEST_F_TIMEOUT(watch, child_exit, 60)
{
	WT_SKIPPED();
	wt_child_gone(_metadata, self->fd, self->info.nr_node_ids, 0);
}

TEST_F_TIMEOUT(watch, child_exec, 60)
{
	WT_SKIPPED();
	wt_child_gone(_metadata, self->fd, self->info.nr_node_ids, 1);
}

/*
 * A watch nobody reads while the buffer's first page moves back and forth
 * WT_FLOOD times; a second watch, read after every move, paces them.
 */
TEST_F_TIMEOUT(watch, overflow, 150)
{
	unsigned int nr = self->info.nr_node_ids;
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct wt_stream slow, pace;
	long end = np_mono_ms() + WT_FLOOD_MS;
	int sfd, pfd, i;

	WT_SKIPPED();
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	sfd = wt_open(self->fd, 0, self->buf, psz, 6, 0, nr, &slow);
	pfd = wt_open(self->fd, 0, self->buf, psz, 7, 0, nr, &pace);
	ASSERT_GE(sfd, 0);
	ASSERT_GE(pfd, 0);
	for (i = 0; i < WT_FLOOD && np_mono_ms() < end; i++) {
		ASSERT_EQ(0, wt_move_pages(self->buf, 1, !(i % 2)));
		ASSERT_EQ(0, wt_query(self->fd, 0, self->buf, psz, nr, want));
		ASSERT_EQ(0, wt_follow(_metadata, pfd, &pace, want, WT_WAIT_MS));
		ASSERT_TRUE(wt_at(&pace, want)) TH_LOG("move %d", i);
	}
	ASSERT_EQ(WT_FLOOD, i) TH_LOG("only %d moves in %d ms", i, WT_FLOOD_MS);
	EXPECT_EQ(0, pace.nr_overflow);
	/* The slow reader: every change is accounted for, one OVERFLOW. */
	EXPECT_EQ(0, wt_drain(_metadata, sfd, &slow, WT_IDLE_MS));
	EXPECT_TRUE(wt_at(&slow, want));
	EXPECT_EQ(1, slow.nr_overflow);
	EXPECT_LT(slow.nr_recs, WT_FLOOD);
	TH_LOG("pacer %d records, slow reader %d (seq %llu)", pace.nr_recs,
	       slow.nr_recs, (unsigned long long)slow.seq);
	close(sfd);
	close(pfd);
}

/*
 * Records are the watcher's memory: a worker (a kworker) allocates them,
 * and they must be charged to the memcg of whoever made the watch, not to
 * the root. A child in a memcg of its own fills the queues of
 * WT_MEMCG_WATCHES watches it never reads; its memcg's slab must grow by
 * at least WT_MEMCG_RECS_MIN records a watch of WT_MEMCG_REC_MIN bytes.
 * On 41261ae it did not grow (the root paid).
 */
#define WT_MEMCG_WATCHES	64
#define WT_MEMCG_MOVES		140	/* changes a watch sees: past its queue */
#define WT_MEMCG_RECS_MIN	32
#define WT_MEMCG_REC_MIN	64	/* bytes: a record is larger */
#define WT_MEMCG_PAUSE_US	30000	/* the debounce and a walk */

static int wt_memcg_child(const char *cg, void *arg)
{
	int dev = np_open(), fds[WT_MEMCG_WATCHES];
	long before, after, want;
	char *p;

	if (dev < 0 || np_memcg_enter(cg))
		return 10;
	p = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 11;
	memset(p, 1, psz);
	for (int i = 0; i < WT_MEMCG_WATCHES; i++) {
		fds[i] = wt_watch(dev, 0, p, psz, i, 0, NULL, 0);
		if (fds[i] < 0)
			return 12;
	}
	usleep(WT_MEMCG_PAUSE_US);
	before = np_memcg_key(cg, "memory.stat", "slab_unreclaimable");
	for (int i = 0; i < WT_MEMCG_MOVES; i++) {
		if (wt_move_pages(p, 1, !(i % 2)))
			return 13;
		usleep(WT_MEMCG_PAUSE_US);
	}
	usleep(10 * WT_MEMCG_PAUSE_US);
	after = np_memcg_key(cg, "memory.stat", "slab_unreclaimable");
	want = (long)WT_MEMCG_WATCHES * WT_MEMCG_RECS_MIN * WT_MEMCG_REC_MIN;
	fprintf(stderr, "# memcg slab_unreclaimable %ld -> %ld bytes (want +%ld)\n",
		before, after, want);
	if (before < 0 || after < 0)
		return 14;
	return after - before >= want ? 0 : 15;
}

TEST_F_TIMEOUT(watch, memcg_charged, 120)
{
	char cg[128];
	int status;

	WT_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root (cgroups)");
	status = np_memcg_fork("np-watch", cg, sizeof(cg), wt_memcg_child, NULL);
	if (status == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_LE(0, status);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, np_memcg_remove(cg));
}

/* WT_RANGES watches on the buffer's pieces and one on all of it. */
TEST_F_TIMEOUT(watch, many_ranges, 120)
{
	unsigned int nr = self->info.nr_node_ids, piece = WT_PAGES / WT_RANGES;
	static struct wt_stream s[WT_RANGES + 1];
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct numaplace_migrate m;
	int wfd[WT_RANGES + 1], i;

	WT_SKIPPED();
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	for (i = 0; i <= WT_RANGES; i++) {
		wfd[i] = i < WT_RANGES ?
			wt_open(self->fd, 0, self->buf + i * piece * psz,
				piece * psz, 100 + i, 0, nr, &s[i]) :
			wt_open(self->fd, 0, self->buf, self->len, 100 + i, 0,
				nr, &s[i]);
		ASSERT_GE(wfd[i], 0);
	}
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)self->buf,
				     self->len, 1, NULL, &m));
	for (i = 0; i <= WT_RANGES; i++) {
		size_t len = i < WT_RANGES ? piece * psz : self->len;

		char *start = i < WT_RANGES ? self->buf + i * piece * psz :
					      self->buf;

		ASSERT_EQ(0, wt_query(self->fd, 0, start, len, nr, want));
		EXPECT_EQ(0, wt_follow(_metadata, wfd[i], &s[i], want, WT_WAIT_MS));
		EXPECT_TRUE(wt_at(&s[i], want)) TH_LOG("watch %d", i);
		EXPECT_EQ(len / psz, s[i].totals[1]);
	}
	for (i = 0; i <= WT_RANGES; i++)
		close(wfd[i]);
}

#define WT_PMD_SIZE	(2UL << 20)	/* x86-64 THP */

/* A PMD-mapped THP moves: the totals follow, 512 pages at a time. */
TEST_F_TIMEOUT(watch, thp, 120)
{
	unsigned int nr = self->info.nr_node_ids;
	size_t len = 2 * WT_PMD_SIZE;
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct numaplace_migrate m;
	struct wt_stream s;
	char *map, *thp;
	int wfd;

	WT_SKIPPED();
	map = mmap(NULL, len + WT_PMD_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	thp = (char *)(((uintptr_t)map + WT_PMD_SIZE - 1) & ~(WT_PMD_SIZE - 1));
	if (madvise(thp, len, MADV_HUGEPAGE))
		TH_LOG("MADV_HUGEPAGE: %s (4 KiB pages then)", strerror(errno));
	np_mempolicy(2 /* MPOL_BIND */, 0);
	memset(thp, 0x3c, len);
	np_mempolicy(0 /* MPOL_DEFAULT */, -1);
	wfd = wt_open(self->fd, 0, thp, len, 8, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(len / psz, s.totals[0]);
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)thp, len, 1,
				     NULL, &m));
	ASSERT_EQ(0, wt_query(self->fd, 0, thp, len, nr, want));
	EXPECT_EQ(0, wt_follow(_metadata, wfd, &s, want, WT_WAIT_MS));
	if (!wt_at(&s, want))
		wt_dump(_metadata, "THP to 1", &s, want);
	ASSERT_TRUE(wt_at(&s, want));
	EXPECT_EQ(NUMAPLACE_WATCH_MIGRATED, s.last.reason);
	EXPECT_EQ(len / psz, s.totals[1]);
	close(wfd);
	munmap(map, len + WT_PMD_SIZE);
}

/* `numaplace watch --json --count 2`: the start line, then the move. */
TEST_F_TIMEOUT(watch, cli, 120)
{
	char cmd[256], line[4096], want[128];
	struct numaplace_migrate m;
	FILE *out;

	WT_SKIPPED();
	if (access("/usr/bin/numaplace", X_OK))
		SKIP(return, "no /usr/bin/numaplace");
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/numaplace watch -p %d %lx+%zx --json --count 1",
		 getpid(), (unsigned long)(uintptr_t)self->buf, self->len);
	out = popen(cmd, "r");
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, fgets(line, sizeof(line), out));
	EXPECT_NE(NULL, strstr(line, "\"reason\":\"start\""));
	snprintf(want, sizeof(want), "{\"node\":0,\"before\":%d,\"after\":%d}",
		 WT_PAGES, WT_PAGES);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)self->buf,
				     self->len, 1, NULL, &m));
	ASSERT_NE(NULL, fgets(line, sizeof(line), out));
	EXPECT_NE(NULL, strstr(line, "\"reason\":\"migrated\"")) TH_LOG("%s", line);
	snprintf(want, sizeof(want), "{\"node\":1,\"before\":0,\"after\":%d}",
		 WT_PAGES);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	EXPECT_EQ(0, pclose(out));
}

static long wt_slab_settled_kb(void)
{
	usleep(200 * 1000);
	np_write_str("/proc/sys/vm/drop_caches", "3");
	return np_meminfo_kb("SUnreclaim");
}

static int wt_unload(void)
{
	return syscall(SYS_delete_module, "numaplace", O_NONBLOCK) ? -errno : 0;
}

TEST_F_TIMEOUT(watch, cycles, 300)
{
	unsigned int nr = self->info.nr_node_ids;
	long before, after, grew = 0, ref0;
	struct wt_stream s;
	int i, batch, wfd, ret;

	WT_SKIPPED();
	ref0 = np_read_long("/sys/module/numaplace/refcnt");
	for (batch = 0; batch < WT_BATCHES; batch++) {
		before = wt_slab_settled_kb();
		ASSERT_GT(before, 0);
		for (i = 0; i < WT_CYCLES; i++) {
			wfd = wt_open(self->fd, 0, self->buf, self->len, i, 0,
				      nr, &s);
			ASSERT_GE(wfd, 0) TH_LOG("cycle %d: %s", i, strerror(-wfd));
			if (i % 100 == 0) {	/* some with work pending */
				self->buf[0]++;
				madvise(self->buf, psz, MADV_DONTNEED);
			}
			close(wfd);
		}
		after = wt_slab_settled_kb();
		grew = after - before;
		TH_LOG("batch %d: SUnreclaim %ld kB -> %ld kB", batch, before,
		       after);
		if (grew < WT_SLAB_SLACK_KB)
			break;
	}
	EXPECT_LT(grew, WT_SLAB_SLACK_KB);
	EXPECT_EQ(ref0, np_read_long("/sys/module/numaplace/refcnt"));

	/* A watch fd alone holds the module. */
	wfd = wt_open(self->fd, 0, self->buf, self->len, 1, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	close(self->fd);
	self->fd = -1;
	ret = wt_unload();
	if (!ret) {	/* put it back for the tests that follow */
		int mod = open(WT_MODULE_PATH, O_RDONLY | O_CLOEXEC);

		if (mod >= 0 && syscall(SYS_finit_module, mod, "", 0))
			perror("finit_module");
		if (mod >= 0)
			close(mod);
	}
	EXPECT_EQ(-EWOULDBLOCK, ret);
	close(wfd);
}

/* ---- netlink: the WATCH event ------------------------------------------ */

struct wt_nl {
	struct mnl_socket *sk;
	uint16_t family;
	uint32_t grp;
	char buf[8192];		/* MNL_SOCKET_BUFFER_SIZE, a page at most */
};

static int wt_grp_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(a) <= CTRL_ATTR_MCAST_GRP_MAX)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static int wt_family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct wt_nl *nl = data;
	struct nlattr *a, *g;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			nl->family = mnl_attr_get_u16(a);
		if (mnl_attr_get_type(a) != CTRL_ATTR_MCAST_GROUPS)
			continue;
		mnl_attr_for_each_nested(g, a) {
			const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1] = {};

			mnl_attr_parse_nested(g, wt_grp_cb, tb);
			if (tb[CTRL_ATTR_MCAST_GRP_NAME] && tb[CTRL_ATTR_MCAST_GRP_ID] &&
			    !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
				    NUMAPLACE_MCGRP_EVENTS))
				nl->grp = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
		}
	}
	return MNL_CB_OK;
}

/* Open, resolve the family and join "events". 0 or -errno. */
static int wt_nl_open(struct wt_nl *nl)
{
	struct timeval tv = { .tv_sec = 1 };
	struct genlmsghdr *gh;
	struct nlmsghdr *nlh;
	unsigned int portid;
	int n;

	nl->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sk || mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	portid = mnl_socket_get_portid(nl->sk);
	nlh = mnl_nlmsg_put_header(nl->buf);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = 1;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = CTRL_CMD_GETFAMILY;
	gh->version = 1;
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NUMAPLACE_FAMILY_NAME);
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(nl->sk, nl->buf, sizeof(nl->buf));
	if (n < 0 || mnl_cb_run(nl->buf, n, 1, portid, wt_family_cb, nl) < 0)
		return -EPROTO;
	if (!nl->family || !nl->grp)
		return -ENOENT;
	if (mnl_socket_setsockopt(nl->sk, NETLINK_ADD_MEMBERSHIP, &nl->grp,
				  sizeof(nl->grp)))
		return -errno;
	setsockopt(mnl_socket_get_fd(nl->sk), SOL_SOCKET, SO_RCVTIMEO, &tv,
		   sizeof(tv));
	return 0;
}

struct wt_event {
	__u64 cookie, seq, start, len, changed, id;
	long pid, reason;
	__u64 after[NUMAPLACE_WATCH_NODES];
	int found;
};

static int wt_event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	struct wt_event e = {}, *want = data;
	struct nlattr *a, *n;

	if (gh->cmd != NUMAPLACE_NL_CMD_WATCH)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case NUMAPLACE_A_WATCH_PID:
			e.pid = mnl_attr_get_u32(a);
			break;
		case NUMAPLACE_A_WATCH_ID:
			e.id = mnl_attr_get_u64(a);
			break;
		case NUMAPLACE_A_WATCH_COOKIE:
			e.cookie = mnl_attr_get_u64(a);
			break;
		case NUMAPLACE_A_WATCH_SEQ:
			e.seq = mnl_attr_get_u64(a);
			break;
		case NUMAPLACE_A_WATCH_REASON:
			e.reason = mnl_attr_get_u32(a);
			break;
		case NUMAPLACE_A_WATCH_NODE: {
			long node = -1;
			__u64 after = 0;

			mnl_attr_for_each_nested(n, a) {
				if (mnl_attr_get_type(n) == NUMAPLACE_A_WNODE_NODE)
					node = mnl_attr_get_u32(n);
				if (mnl_attr_get_type(n) == NUMAPLACE_A_WNODE_AFTER)
					after = mnl_attr_get_u64(n);
			}
			if (node >= 0 && node < NUMAPLACE_WATCH_NODES)
				e.after[node] = after;
			break;
		}
		}
	}
	if (e.cookie == want->cookie && e.pid == want->pid) {
		e.found = want->found + 1;
		*want = e;
	}
	return MNL_CB_OK;
}

TEST_F_TIMEOUT(watch, netlink, 120)
{
	unsigned int nr = self->info.nr_node_ids;
	struct wt_event ev = { .cookie = 0xfeed };
	struct numaplace_migrate m;
	struct wt_stream s;
	long end;
	struct wt_nl nl = {};
	int wfd, n;

	WT_SKIPPED();
	ASSERT_EQ(0, wt_nl_open(&nl));
	ev.pid = getpid();
	ASSERT_EQ(0, wt_move_pages(self->buf, WT_PAGES, 0));
	wfd = wt_open(self->fd, 0, self->buf, self->len, ev.cookie, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)self->buf,
				     self->len, 1, NULL, &m));
	end = np_mono_ms() + WT_WAIT_MS;
	while (ev.after[1] != WT_PAGES && np_mono_ms() < end) {
		n = mnl_socket_recvfrom(nl.sk, nl.buf, sizeof(nl.buf));
		if (n > 0)
			mnl_cb_run(nl.buf, n, 0, 0, wt_event_cb, &ev);
	}
	ASSERT_GT(ev.found, 0);
	EXPECT_EQ(WT_PAGES, ev.after[1]);
	EXPECT_EQ(NUMAPLACE_WATCH_MIGRATED, ev.reason);
	EXPECT_NE(0, ev.id);
	/* The fd has the same records, numbered the same. */
	EXPECT_EQ(0, wt_follow(_metadata, wfd, &s, NULL, 200));
	EXPECT_EQ(ev.seq, s.seq);
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	close(wfd);
	mnl_socket_close(nl.sk);
}

/* An unprivileged process may watch itself, not another user's process. */
TEST_F_TIMEOUT(watch, permission, 60)
{
	pid_t parent = getpid(), pid;
	int st;

	WT_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root to switch users");
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char *own = mmap(NULL, psz, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int dev, fd, code = 0;

		if (own == MAP_FAILED || setgid(65534) || setuid(65534))
			_exit(10);
		own[0] = 1;
		dev = np_open();
		if (dev < 0)
			_exit(11);
		if (wt_watch(dev, parent, self->buf, self->len, 1, 0, NULL, 0) !=
		    -EPERM)
			code |= 1;
		fd = wt_watch(dev, 0, own, psz, 1, 0, NULL, 0);
		if (fd < 0)
			code |= 2;
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st))
		TH_LOG("1: another user's process was watched, 2: own refused, 10+: setup");
}

TEST_F_TIMEOUT(watch, bad_input, 60)
{
	struct numaplace_watch w;
	struct numaplace_watch_record r[2];
	char *hole;
	int wfd;

	WT_SKIPPED();
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.start = (uintptr_t)self->buf;
	w.len = self->len;
	w.flags = 1U << 7;
	EXPECT_EQ(-EINVAL, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.flags = 0;
	w.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.reserved[3] = 0;
	w.size = NUMAPLACE_WATCH_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.size = sizeof(w);
	w.len = 0;
	EXPECT_EQ(-EINVAL, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.len = -1ULL;
	EXPECT_EQ(-EINVAL, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.len = self->len;
	w.node_pages_len = 4;	/* without a pointer */
	EXPECT_EQ(-EINVAL, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.node_pages_len = 0;
	w.pid = -1;
	EXPECT_EQ(-ESRCH, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.pid = 0;
	w.node_pages_ptr = 8;	/* unwritable */
	w.node_pages_len = 2;
	EXPECT_EQ(-EFAULT, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.node_pages_ptr = 0;
	w.node_pages_len = 0;
	/* Nothing mapped there. */
	hole = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	munmap(hole, psz);
	w.start = (uintptr_t)hole;
	w.len = psz;
	EXPECT_EQ(-EFAULT, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));
	w.start = 1ULL << 63;
	EXPECT_EQ(-EFAULT, np_ioctl(self->fd, NUMAPLACE_IOC_WATCH, &w));

	/* Reads: smaller than a record, nothing yet on a non-blocking fd. */
	wfd = wt_watch(self->fd, 0, self->buf, self->len, 9,
		       NUMAPLACE_WATCH_NONBLOCK | NUMAPLACE_WATCH_CLOEXEC,
		       NULL, 0);
	ASSERT_GE(wfd, 0);
	EXPECT_EQ(FD_CLOEXEC, fcntl(wfd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(-1, read(wfd, r, sizeof(r[0]) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(wfd, r, sizeof(r)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(-1, write(wfd, r, sizeof(r[0])));
	close(wfd);
}

NP_HARNESS_MAIN
