// SPDX-License-Identifier: GPL-2.0
/*
 * Placement watches (NUMAPLACE_IOC_WATCH): the records of a watch fd.
 * The oracle for every record is a QUERY of the same range after the
 * move; and every stream must be consistent on its own: each record's
 * "before" is the previous record's "after" (the first one's is the
 * totals the ioctl returned), numbers are consecutive (an OVERFLOW record
 * counts the ones it replaces), pages add up to the range, the cookie is
 * the watch's (np_wt_check_rec()).
 *  - idle: reads, writes and mprotect make no record;
 *  - move_pages / migrate_pages / numaplace_migrate: records up to the
 *    QUERY totals, reason MIGRATED;
 *  - munmap: UNMAPPED, then GONE and end of file;
 *  - child_exit / child_exec: GONE when the watched process goes;
 *  - overflow: a reader that does not read gets one OVERFLOW record,
 *    while a second watch paces the changes;
 *  - many_ranges: 64 watches on one buffer's pieces and one on all of it;
 *  - thp: a PMD-mapped THP buffer moved by numaplace.
 * The watch as a resource and its other readers are watch_ctl.c's.
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "np_test.h"
#include "kselftest_harness.h"

#define WT_PAGES	256	/* the watched buffer: 1 MiB of 4 KiB pages */
/* Long enough for the module's debounce and worker in a busy TCG guest. */
#define WT_WAIT_MS	10000
/* Quiet time that proves no record comes: many debounce periods. */
#define WT_IDLE_MS	500
#define WT_RANGES	64	/* many_ranges: watches at once */
/* overflow: changes made (each seen by the pacer): well past the queue. */
#define WT_FLOOD	300
#define WT_FLOOD_MS	60000

static long psz;

static void __attribute__((constructor)) watch_page_size(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

/* child_exec: the program run again with this in its environment exits. */
#define WT_EXEC_ENV	"NP_WATCH_EXEC_CHILD=1"

static void __attribute__((constructor)) wt_exec_child(void)
{
	const char *v = getenv("NP_WATCH_EXEC_CHILD");

	if (v && *v == '1')
		_exit(0);
}

NP_WT_FIXTURE(watch, WT_PAGES);

/* The buffer on node 0 and a watch of it with @cookie: wfd and s. */
#define WT_START(cookie)						\
	do {								\
		ASSERT_EQ(0, np_wt_move_pages(self->w.buf, WT_PAGES, 0)); \
		wfd = np_wt_open(0, self->w.buf, self->w.len, cookie, 0, \
				 nr, &s);				\
		ASSERT_GE(wfd, 0);					\
		ASSERT_EQ(WT_PAGES, s.totals[0]);			\
	} while (0)

/* Move the buffer with @how, then follow the watch to QUERY's totals. */
#define WT_MOVE_AND_CHECK(how, label)					\
	do {								\
		__u64 want[NUMAPLACE_WATCH_NODES + 1];			\
		ASSERT_EQ(0, (how));					\
		ASSERT_EQ(0, np_wt_query(self->w.fd, 0, self->w.buf,	\
					 self->w.len, nr, want));	\
		EXPECT_EQ(0, np_wt_follow(wfd, &s, want, WT_WAIT_MS));	\
		if (!np_wt_at(&s, want))				\
			np_wt_dump(label, &s, want);			\
		ASSERT_TRUE(np_wt_at(&s, want));			\
		EXPECT_EQ(NUMAPLACE_WATCH_MIGRATED, s.last.reason);	\
	} while (0)

TEST_F_TIMEOUT(watch, idle, NP_TIMEOUT(60))
{
	unsigned int nr = self->w.info.nr_node_ids;
	struct np_wt_stream s;
	volatile char sum = 0;
	int wfd;

	NP_SKIPPED();
	WT_START(1);
	for (size_t i = 0; i < self->w.len; i += psz) {
		sum += self->w.buf[i];
		self->w.buf[i] = 1;
	}
	ASSERT_EQ(0, mprotect(self->w.buf, self->w.len, PROT_READ));
	ASSERT_EQ(0, mprotect(self->w.buf, self->w.len, PROT_READ | PROT_WRITE));
	EXPECT_TRUE(np_wt_quiet(wfd, WT_IDLE_MS));
	close(wfd);
	(void)sum;
}

TEST_F_TIMEOUT(watch, move_pages, NP_TIMEOUT(120))
{
	unsigned int nr = self->w.info.nr_node_ids;
	struct np_wt_stream s;
	int wfd;

	NP_SKIPPED();
	WT_START(0xc0ffee);
	WT_MOVE_AND_CHECK(np_wt_move_pages(self->w.buf, WT_PAGES, 1), "all to 1");
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	WT_MOVE_AND_CHECK(np_wt_move_pages(self->w.buf + psz * 16, 32, 0),
			  "32 back to 0");
	EXPECT_EQ(32, s.totals[0]);
	/* The last record's sub-range covers what moved and no more. */
	EXPECT_LE((uintptr_t)s.last.start, (uintptr_t)self->w.buf + psz * 16);
	EXPECT_GE(s.last.start + s.last.len, (uintptr_t)self->w.buf + psz * 48);
	EXPECT_TRUE(np_wt_quiet(wfd, WT_IDLE_MS));
	close(wfd);
}

TEST_F_TIMEOUT(watch, migrate_pages, NP_TIMEOUT(120))
{
	unsigned int nr = self->w.info.nr_node_ids;
	unsigned long from = 1UL << 0, to = 1UL << 1;
	struct np_wt_stream s;
	int wfd;

	NP_SKIPPED();
	WT_START(2);
	WT_MOVE_AND_CHECK(syscall(SYS_migrate_pages, 0, 64, &from, &to) < 0 ?
			  -errno : 0, "migrate_pages 0 -> 1");
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	close(wfd);
}

TEST_F_TIMEOUT(watch, numaplace_migrate, NP_TIMEOUT(120))
{
	unsigned int nr = self->w.info.nr_node_ids;
	struct numaplace_migrate m;
	struct np_wt_stream s;
	int wfd;

	NP_SKIPPED();
	if (!(self->w.info.ioctls & (1ULL << NUMAPLACE_CMD_MIGRATE)))
		SKIP(return, "no NUMAPLACE_IOC_MIGRATE");
	WT_START(3);
	WT_MOVE_AND_CHECK(np_migrate_node(self->w.fd, 0, 0, (uintptr_t)self->w.buf,
					  self->w.len, 1, NULL, &m), "migrate to 1");
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	WT_MOVE_AND_CHECK(np_migrate_node(self->w.fd, 0, 0, (uintptr_t)self->w.buf,
					  self->w.len / 2, 0, NULL, &m),
			  "half back to 0");
	EXPECT_EQ(WT_PAGES / 2, s.totals[0]);
	close(wfd);
}

TEST_F_TIMEOUT(watch, munmap, NP_TIMEOUT(120))
{
	unsigned int nr = self->w.info.nr_node_ids;
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct numaplace_watch_record r;
	struct pollfd p;
	struct np_wt_stream s;
	int wfd;

	NP_SKIPPED();
	wfd = np_wt_open(0, self->w.buf, self->w.len, 4, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(0, s.totals[nr]);
	/* A quarter goes: UNMAPPED, and the watch goes on. */
	ASSERT_EQ(0, munmap(self->w.buf, self->w.len / 4));
	ASSERT_EQ(0, np_wt_query(self->w.fd, 0, self->w.buf, self->w.len, nr, want));
	ASSERT_EQ(WT_PAGES / 4, want[nr]);
	EXPECT_EQ(0, np_wt_follow(wfd, &s, want, WT_WAIT_MS));
	ASSERT_TRUE(np_wt_at(&s, want));
	EXPECT_EQ(NUMAPLACE_WATCH_UNMAPPED, s.last.reason);
	EXPECT_EQ(WT_PAGES / 4, s.last.nr_changed);
	EXPECT_EQ((uintptr_t)self->w.buf, s.last.start);
	EXPECT_EQ(self->w.len / 4, s.last.len);
	/* The rest goes: GONE, then end of file and POLLHUP. */
	ASSERT_EQ(0, munmap(self->w.buf + self->w.len / 4, self->w.len * 3 / 4));
	self->w.buf = MAP_FAILED;
	EXPECT_EQ(0, np_wt_follow(wfd, &s, NULL, WT_WAIT_MS));
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

static void wt_child_gone(struct __test_metadata *_metadata, unsigned int nr,
			  int exec)
{
	size_t len = 64 * psz;
	struct np_wt_stream s;
	char *addr;
	int go, wfd, st;
	pid_t pid;

	pid = wt_child(_metadata, len, exec, &go, &addr);
	wfd = np_wt_open(pid, addr, len, 5, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(0, s.totals[nr]);
	EXPECT_TRUE(np_wt_quiet(wfd, 100));
	ASSERT_EQ(1, write(go, "g", 1));
	close(go);
	EXPECT_EQ(0, np_wt_follow(wfd, &s, NULL, WT_WAIT_MS));
	EXPECT_TRUE(s.gone);
	EXPECT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(wfd);
}

TEST_F_TIMEOUT(watch, child_exit, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	wt_child_gone(_metadata, self->w.info.nr_node_ids, 0);
}

TEST_F_TIMEOUT(watch, child_exec, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	wt_child_gone(_metadata, self->w.info.nr_node_ids, 1);
}

/*
 * A watch nobody reads while the buffer's first page moves back and forth
 * WT_FLOOD times; a second watch, read after every move, paces them.
 */
TEST_F_TIMEOUT(watch, overflow, NP_TIMEOUT(150))
{
	unsigned int nr = self->w.info.nr_node_ids;
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct np_wt_stream slow, pace;
	long end = np_mono_ms() + WT_FLOOD_MS;
	int sfd, pfd, i;

	NP_SKIPPED();
	ASSERT_EQ(0, np_wt_move_pages(self->w.buf, WT_PAGES, 0));
	sfd = np_wt_open(0, self->w.buf, psz, 6, 0, nr, &slow);
	pfd = np_wt_open(0, self->w.buf, psz, 7, 0, nr, &pace);
	ASSERT_GE(sfd, 0);
	ASSERT_GE(pfd, 0);
	for (i = 0; i < WT_FLOOD && np_mono_ms() < end; i++) {
		ASSERT_EQ(0, np_wt_move_pages(self->w.buf, 1, !(i % 2)));
		ASSERT_EQ(0, np_wt_query(self->w.fd, 0, self->w.buf, psz, nr, want));
		ASSERT_EQ(0, np_wt_follow(pfd, &pace, want, WT_WAIT_MS));
		ASSERT_TRUE(np_wt_at(&pace, want)) TH_LOG("move %d", i);
	}
	ASSERT_EQ(WT_FLOOD, i) TH_LOG("only %d moves in %d ms", i, WT_FLOOD_MS);
	EXPECT_EQ(0, pace.nr_overflow);
	/* The slow reader: every change is accounted for, one OVERFLOW. */
	EXPECT_EQ(0, np_wt_drain(sfd, &slow, WT_IDLE_MS));
	EXPECT_TRUE(np_wt_at(&slow, want));
	EXPECT_EQ(1, slow.nr_overflow);
	EXPECT_LT(slow.nr_recs, WT_FLOOD);
	TH_LOG("pacer %d records, slow reader %d (seq %llu)", pace.nr_recs,
	       slow.nr_recs, (unsigned long long)slow.seq);
	close(sfd);
	close(pfd);
}

/* WT_RANGES watches on the buffer's pieces and one on all of it. */
TEST_F_TIMEOUT(watch, many_ranges, NP_TIMEOUT(120))
{
	unsigned int nr = self->w.info.nr_node_ids, piece = WT_PAGES / WT_RANGES;
	static struct np_wt_stream s[WT_RANGES + 1];
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct numaplace_migrate m;
	int wfd[WT_RANGES + 1], i;

	NP_SKIPPED();
	ASSERT_EQ(0, np_wt_move_pages(self->w.buf, WT_PAGES, 0));
	for (i = 0; i <= WT_RANGES; i++) {
		wfd[i] = i < WT_RANGES ?
			np_wt_open(0, self->w.buf + i * piece * psz,
				piece * psz, 100 + i, 0, nr, &s[i]) :
			np_wt_open(0, self->w.buf, self->w.len, 100 + i, 0,
				nr, &s[i]);
		ASSERT_GE(wfd[i], 0);
	}
	ASSERT_EQ(0, np_migrate_node(self->w.fd, 0, 0, (uintptr_t)self->w.buf,
				     self->w.len, 1, NULL, &m));
	for (i = 0; i <= WT_RANGES; i++) {
		size_t len = i < WT_RANGES ? piece * psz : self->w.len;

		char *start = i < WT_RANGES ? self->w.buf + i * piece * psz :
					      self->w.buf;

		ASSERT_EQ(0, np_wt_query(self->w.fd, 0, start, len, nr, want));
		EXPECT_EQ(0, np_wt_follow(wfd[i], &s[i], want, WT_WAIT_MS));
		EXPECT_TRUE(np_wt_at(&s[i], want)) TH_LOG("watch %d", i);
		EXPECT_EQ(len / psz, s[i].totals[1]);
	}
	for (i = 0; i <= WT_RANGES; i++)
		close(wfd[i]);
}

#define WT_PMD_SIZE	(2UL << 20)	/* x86-64 THP */

/* A PMD-mapped THP moves: the totals follow, 512 pages at a time. */
TEST_F_TIMEOUT(watch, thp, NP_TIMEOUT(120))
{
	unsigned int nr = self->w.info.nr_node_ids;
	size_t len = 2 * WT_PMD_SIZE;
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct numaplace_migrate m;
	struct np_wt_stream s;
	char *map, *thp;
	int wfd;

	NP_SKIPPED();
	map = mmap(NULL, len + WT_PMD_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	thp = (char *)(((uintptr_t)map + WT_PMD_SIZE - 1) & ~(WT_PMD_SIZE - 1));
	if (madvise(thp, len, MADV_HUGEPAGE))
		TH_LOG("MADV_HUGEPAGE: %s (4 KiB pages then)", strerror(errno));
	np_mempolicy(2 /* MPOL_BIND */, 0);
	memset(thp, 0x3c, len);
	np_mempolicy(0 /* MPOL_DEFAULT */, -1);
	wfd = np_wt_open(0, thp, len, 8, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(len / psz, s.totals[0]);
	ASSERT_EQ(0, np_migrate_node(self->w.fd, 0, 0, (uintptr_t)thp, len, 1,
				     NULL, &m));
	ASSERT_EQ(0, np_wt_query(self->w.fd, 0, thp, len, nr, want));
	EXPECT_EQ(0, np_wt_follow(wfd, &s, want, WT_WAIT_MS));
	if (!np_wt_at(&s, want))
		np_wt_dump("THP to 1", &s, want);
	ASSERT_TRUE(np_wt_at(&s, want));
	EXPECT_EQ(NUMAPLACE_WATCH_MIGRATED, s.last.reason);
	EXPECT_EQ(len / psz, s.totals[1]);
	close(wfd);
	munmap(map, len + WT_PMD_SIZE);
}

NP_HARNESS_MAIN
