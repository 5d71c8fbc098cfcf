// SPDX-License-Identifier: GPL-2.0
/*
 * Placement watches (NUMAPLACE_IOC_WATCH) as a resource, and the readers
 * of their records other than the fd (the streams are watch.c's):
 *  - memcg_charged: records are charged to the watcher's memcg;
 *  - memcg_full: in a full memcg a record's charge fails, no OOM kill,
 *    and the record comes once there is room;
 *  - cli: `numaplace watch --json` prints the start and the move;
 *  - cycles: 1,000 watch/close with no slab growth, refcount back, and a
 *    watch fd holds the module;
 *  - netlink: the WATCH event on the "events" group (read with the CLI's
 *    client, libnp_nl.a) carries the record;
 *  - permission: another user's process cannot be watched, one's own can;
 *  - bad_input: flags, reserved, sizes, ranges, pids, read sizes.
 */
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "numaplace.h"
#include "np_test.h"
#include "nl.h"
#include "kselftest_harness.h"

#define WT_PAGES	256	/* the watched buffer: 1 MiB of 4 KiB pages */
/* Long enough for the module's debounce and worker in a busy TCG guest. */
#define WT_WAIT_MS	10000
#define WT_CYCLES	1000	/* cycles: watch/close pairs per batch */
#define WT_SLAB_SLACK_KB 96	/* as load.c: a leak grows every batch */
#define WT_BATCHES	3

static long psz;

static void __attribute__((constructor)) watch_ctl_page_size(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

NP_WT_FIXTURE(watch_ctl, WT_PAGES);

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
		fds[i] = numaplace_watch_open(0, p, psz, i, 0, NULL, 0);
		if (fds[i] < 0)
			return 12;
	}
	usleep(WT_MEMCG_PAUSE_US);
	before = np_memcg_key(cg, "memory.stat", "slab_unreclaimable");
	for (int i = 0; i < WT_MEMCG_MOVES; i++) {
		if (np_wt_move_pages(p, 1, !(i % 2)))
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

TEST_F_TIMEOUT(watch_ctl, memcg_charged, NP_TIMEOUT(120))
{
	char cg[128];
	int status;

	NP_SKIPPED();
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

/*
 * A record made while the watcher's memcg is full: the worker's charge
 * fails (no OOM kill in the watcher's memcg) and it tries again later,
 * until there is room; then the record comes, nothing lost. A child in a
 * memcg of its own watches two pages; with the memcg full
 * (np_memcg_tight()) it zaps one (MADV_DONTNEED, which frees and charges
 * nothing) and waits WT_FULL_QUIET_MS. The memcg must count the worker's
 * failed charges (memory.events max: it did meet the full memcg), and no
 * task may be OOM-killed; with memory.max "max" again, the record must
 * bring the stream to the page gone. Whether the record already came
 * while full is logged, not asserted: a small slab object can find room
 * in a memcg at its memory.max (bytes a per-CPU stock or a freed object
 * left to its objcg), so a later try may succeed (6.1 and 6.12 in the
 * full suite: 2 failed charges, then the record). No THP (a collapse
 * before the zap would leave a record allocated). On d6039bc
 * (GFP_KERNEL_ACCOUNT in the worker) the child was OOM-killed.
 */
#define WT_FULL_QUIET_MS	300	/* the worker's tries at 10, 20, 40, 80 ms... */

struct wt_full {
	unsigned int nr_nodes;
	int zapped;			/* MADV_DONTNEED while full */
	int quiet;			/* nothing readable while full: logged */
	int bad, at;			/* np_wt_follow() afterwards */
};

static int wt_full_child(const char *cg, void *arg, struct np_memcg_tight *t)
{
	struct wt_full *f = arg;
	__u64 want[NUMAPLACE_WATCH_NODES + 1];
	struct np_wt_stream s;
	int wfd, node = -1;
	__u64 second;
	char *p;

	p = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 20;
	if (madvise(p, 2 * psz, MADV_NOHUGEPAGE))
		return 24;
	memset(p, 1, 2 * psz);
	second = (uintptr_t)p + psz;
	if (np_memcg_enter(cg))
		return 21;
	wfd = np_wt_open(0, p, 2 * psz, 9, 0, f->nr_nodes, &s);
	if (wfd < 0)
		return 22;
	if (np_sys_query(0, 1, &second, &node) || node < 0 ||
	    node >= (int)f->nr_nodes)
		return 23;
	memcpy(want, s.totals, sizeof(want));
	want[node]--;
	want[f->nr_nodes]++;
	/* Both calls once: what they touch is faulted here. */
	f->quiet = np_wt_quiet(wfd, 1);
	np_memcg_tight_begin(t);
	f->zapped = !madvise(p + psz, psz, MADV_DONTNEED);
	f->quiet = np_wt_quiet(wfd, WT_FULL_QUIET_MS);
	np_memcg_tight_end(t);
	f->bad = np_wt_follow(wfd, &s, want, WT_WAIT_MS);
	f->at = np_wt_at(&s, want);
	if (!f->at)
		np_wt_dump("memcg_full", &s, want);
	close(wfd);
	return 0;
}

TEST_F_TIMEOUT(watch_ctl, memcg_full, NP_TIMEOUT(120))
{
	struct wt_full *f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct np_memcg_tight t;
	char cg[128];
	int status;

	NP_SKIPPED();
	ASSERT_NE(MAP_FAILED, f);
	if (geteuid())
		SKIP(return, "needs root (cgroups)");
	memset(f, 0, sizeof(*f));
	f->nr_nodes = self->w.info.nr_node_ids;
	status = np_memcg_tight("np-watch-full", cg, sizeof(cg), wt_full_child,
				f, &t);
	if (status == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_LE(0, status);
	TH_LOG("memcg: memory.max %ld while full, %ld charges failed", t.max,
	       t.nr_max_events);
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, t.oom_kill);
	EXPECT_TRUE(f->zapped);
	EXPECT_LT(0, t.nr_max_events) TH_LOG("the worker never charged");
	if (!f->quiet)
		TH_LOG("the record came while the memcg was full: a retry found room");
	EXPECT_EQ(0, f->bad);
	EXPECT_TRUE(f->at);
	EXPECT_EQ(0, np_memcg_remove(cg));
	munmap(f, sizeof(*f));
}

/* `numaplace watch --json --count 2`: the start line, then the move. */
TEST_F_TIMEOUT(watch_ctl, cli, NP_TIMEOUT(120))
{
	char cmd[256], line[4096], want[128];
	struct numaplace_migrate m;
	FILE *out;

	NP_SKIPPED();
	if (access("/usr/bin/numaplace", X_OK))
		SKIP(return, "no /usr/bin/numaplace");
	ASSERT_EQ(0, np_wt_move_pages(self->w.buf, WT_PAGES, 0));
	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/numaplace watch -p %d %lx+%zx --json --count 1",
		 getpid(), (unsigned long)(uintptr_t)self->w.buf, self->w.len);
	out = popen(cmd, "r");
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, fgets(line, sizeof(line), out));
	EXPECT_NE(NULL, strstr(line, "\"reason\":\"start\""));
	snprintf(want, sizeof(want), "{\"node\":0,\"before\":%d,\"after\":%d}",
		 WT_PAGES, WT_PAGES);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	ASSERT_EQ(0, np_migrate_node(self->w.fd, 0, 0, (uintptr_t)self->w.buf,
				     self->w.len, 1, NULL, &m));
	ASSERT_NE(NULL, fgets(line, sizeof(line), out));
	EXPECT_NE(NULL, strstr(line, "\"reason\":\"migrated\"")) TH_LOG("%s", line);
	snprintf(want, sizeof(want), "{\"node\":1,\"before\":0,\"after\":%d}",
		 WT_PAGES);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("%s", line);
	EXPECT_EQ(0, pclose(out));
}

TEST_F_TIMEOUT(watch_ctl, cycles, NP_TIMEOUT(300))
{
	unsigned int nr = self->w.info.nr_node_ids;
	long before, grew = 0, ref0;
	struct np_wt_stream s;
	int i, batch, wfd, ret, lib;

	NP_SKIPPED();
	/* libnumaplace's device fd, which np_wt_open() uses, is in ref0. */
	lib = numaplace_fd();
	ASSERT_GE(lib, 0);
	ref0 = np_read_long("/sys/module/numaplace/refcnt");
	for (batch = 0; batch < WT_BATCHES; batch++) {
		before = np_slab_settled_kb();
		ASSERT_GT(before, 0);
		for (i = 0; i < WT_CYCLES; i++) {
			wfd = np_wt_open(0, self->w.buf, self->w.len, i, 0,
					 nr, &s);
			ASSERT_GE(wfd, 0) TH_LOG("cycle %d: %s", i, strerror(-wfd));
			if (i % 100 == 0) {	/* some with work pending */
				self->w.buf[0]++;
				madvise(self->w.buf, psz, MADV_DONTNEED);
			}
			close(wfd);
		}
		if (np_slab_batch_end(batch, before, &grew, WT_SLAB_SLACK_KB))
			break;
	}
	EXPECT_LT(grew, WT_SLAB_SLACK_KB);
	EXPECT_EQ(ref0, np_read_long("/sys/module/numaplace/refcnt"));

	/* A watch fd alone holds the module. */
	wfd = np_wt_open(0, self->w.buf, self->w.len, 1, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	close(self->w.fd);
	self->w.fd = -1;
	/* libnumaplace's too: this process is done with the library. */
	close(lib);
	ret = np_module_unload();
	if (!ret && np_module_load())	/* back for the tests that follow */
		perror("finit_module");
	EXPECT_EQ(-EWOULDBLOCK, ret);
	close(wfd);
}

/* ---- netlink: the WATCH event ------------------------------------------ */

/* The WATCH events of one watch (its cookie and pid): the last one. */
struct wt_event {
	__u64 cookie;
	__u32 pid;
	int found;
	struct np_nl_watch w;
};

static int wt_event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_nl_watch w = { .pid = -1 };
	struct wt_event *ev = data;

	if (np_nl_watch_parse(nlh, &w) && w.rec.cookie == ev->cookie &&
	    w.pid == ev->pid) {
		ev->w = w;
		ev->found++;
	}
	return MNL_CB_OK;
}

TEST_F_TIMEOUT(watch_ctl, netlink, NP_TIMEOUT(120))
{
	unsigned int nr = self->w.info.nr_node_ids;
	struct wt_event ev = { .cookie = 0xfeed };
	struct numaplace_migrate m;
	struct np_wt_stream s;
	struct np_nl nl;
	long end;
	int wfd;

	NP_SKIPPED();
	ASSERT_EQ(0, np_nl_open(&nl, "watch", 1));
	ASSERT_NE(0, nl.events_grp) TH_LOG("no \"events\" group");
	ASSERT_EQ(0, np_nl_group(&nl, nl.events_grp, 1));
	ev.pid = getpid();
	ASSERT_EQ(0, np_wt_move_pages(self->w.buf, WT_PAGES, 0));
	wfd = np_wt_open(0, self->w.buf, self->w.len, ev.cookie, 0, nr, &s);
	ASSERT_GE(wfd, 0);
	ASSERT_EQ(0, np_migrate_node(self->w.fd, 0, 0, (uintptr_t)self->w.buf,
				     self->w.len, 1, NULL, &m));
	end = np_mono_ms() + WT_WAIT_MS;
	while (ev.w.rec.after[1] != WT_PAGES && np_mono_ms() < end)
		np_nl_wait_notify(&nl, end - np_mono_ms(), wt_event_cb, &ev);
	ASSERT_GT(ev.found, 0);
	EXPECT_EQ(WT_PAGES, ev.w.rec.after[1]);
	EXPECT_EQ(NUMAPLACE_WATCH_MIGRATED, ev.w.rec.reason);
	EXPECT_NE(0, ev.w.id);
	/* The fd has the same records, numbered the same. */
	EXPECT_EQ(0, np_wt_follow(wfd, &s, NULL, 200));
	EXPECT_EQ(ev.w.rec.seq, s.seq);
	EXPECT_EQ(WT_PAGES, s.totals[1]);
	close(wfd);
	np_nl_close(&nl);
}

/* An unprivileged process may watch itself, not another user's process. */
TEST_F_TIMEOUT(watch_ctl, permission, NP_TIMEOUT(60))
{
	pid_t parent = getpid(), pid;
	int st;

	NP_SKIPPED();
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
		if (numaplace_watch_open(parent, self->w.buf, self->w.len, 1,
					 0, NULL, 0) != -EPERM)
			code |= 1;
		fd = numaplace_watch_open(0, own, psz, 1, 0, NULL, 0);
		if (fd < 0)
			code |= 2;
		_exit(code);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st))
		TH_LOG("1: another user's process was watched, 2: own refused, 10+: setup");
}

TEST_F_TIMEOUT(watch_ctl, bad_input, NP_TIMEOUT(60))
{
	struct numaplace_watch w;
	struct numaplace_watch_record r[2];
	char *hole;
	int wfd;

	NP_SKIPPED();
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.start = (uintptr_t)self->w.buf;
	w.len = self->w.len;
	w.flags = 1U << 7;
	EXPECT_EQ(-EINVAL, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.flags = 0;
	w.reserved[3] = 1;
	EXPECT_EQ(-EINVAL, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.reserved[3] = 0;
	w.size = NUMAPLACE_WATCH_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.size = sizeof(w);
	w.len = 0;
	EXPECT_EQ(-EINVAL, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.len = -1ULL;
	EXPECT_EQ(-EINVAL, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.len = self->w.len;
	w.node_pages_len = 4;	/* without a pointer */
	EXPECT_EQ(-EINVAL, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.node_pages_len = 0;
	w.pid = -1;
	EXPECT_EQ(-ESRCH, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.pid = 0;
	w.node_pages_ptr = 8;	/* unwritable */
	w.node_pages_len = 2;
	EXPECT_EQ(-EFAULT, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.node_pages_ptr = 0;
	w.node_pages_len = 0;
	/* Nothing mapped there. */
	hole = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	munmap(hole, psz);
	w.start = (uintptr_t)hole;
	w.len = psz;
	EXPECT_EQ(-EFAULT, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));
	w.start = 1ULL << 63;
	EXPECT_EQ(-EFAULT, np_ioctl(self->w.fd, NUMAPLACE_IOC_WATCH, &w));

	/* Reads: smaller than a record, nothing yet on a non-blocking fd. */
	wfd = numaplace_watch_open(0, self->w.buf, self->w.len, 9,
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
