// SPDX-License-Identifier: GPL-2.0
/*
 * Tiering (issue 32): libnumaplace's tier context and the numaplace tier
 * daemon against a workload whose hot pages are known. A child maps
 * NP_TR_MB MiB on the slow node (node 1) and reads one quarter of it,
 * the hot set, in a loop; the fast node is node 0.
 *  - promote_hot_leave_cold: the hot set reaches node 0 within a few
 *    periods, the cold pages stay on node 1, nothing is demoted, no page
 *    moves three times; a phase change (another quarter hot) is
 *    followed; the state is at most 0.1% of the memory tracked;
 *  - demote_under_watermark: with node 0's free memory under the
 *    watermark, the cold pages leave node 0 and the hot ones stay;
 *  - dry_run, rate_limit: counted but not moved; at most the rate moved;
 *  - bad_input, permission, target_exit: what the calls refuse, whose
 *    processes a caller may tier, a target that exits;
 *  - daemon: numaplace tier's exact command line end to end, JSON
 *    lines, SIGTERM, the target's exit.
 * 4 KiB and THP variants where the layout matters. Needs the access scan
 * (INFO) and memory on nodes 0 and 1; NUMA balancing off.
 */
#include <grp.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "numaplace.h"
#include "np_test.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

#define NP_NOBODY	65534
/* The workload: its size, and the quarter its phase makes hot. */
#define NP_TR_MB	16
#define NP_TR_PHASES	4
/* Periods the tests give the policy (defaults: hot after 2 young scans). */
#define NP_TR_STEPS	5
#define NP_TR_PERIOD_MS	100
/* Chunks of state for the rest of the workload: its program, libc, stack. */
#define NP_TR_OTHER_CHUNKS	32
/* Share of a hot set that must be on the fast node, in percent. */
#define NP_TR_GOAL	95

/* What the parent and the workload share (a MAP_SHARED page). */
struct np_tr_ctl {
	volatile int phase;		/* the quarter read, -1: none */
	volatile int stop;
	volatile unsigned long loops;	/* passes over the hot set */
	char *volatile buf;		/* the workload's buffer, once mapped */
};

struct np_tr {
	pid_t kid;
	struct np_tr_ctl *ctl;
	char *buf;
	size_t len, pages;
	long psz;
};

/*
 * The workload: its own pages (so that MPOL_MF_MOVE moves them), placed
 * on @node, THP or not, then the hot quarter read until told to stop.
 */
static void np_tr_work(struct np_tr_ctl *ctl, size_t len, bool thp, int node)
{
	const long psz = sysconf(_SC_PAGESIZE);
	unsigned long mask = 1UL << node;
	size_t i, q = len / NP_TR_PHASES;
	volatile char sink;
	char *map, *buf;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	map = mmap(NULL, len + (2 << 20), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		_exit(1);
	buf = (char *)(((uintptr_t)map + (2 << 20) - 1) & ~((2UL << 20) - 1));
	madvise(buf, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	if (syscall(__NR_mbind, buf, len, MPOL_BIND, &mask, 64, 0))
		_exit(2);
	for (i = 0; i < len; i += psz)
		buf[i] = 1;
	ctl->buf = buf;
	while (!ctl->stop) {
		if (ctl->phase < 0) {
			usleep(1000);
			continue;
		}
		for (i = ctl->phase * q; i < (ctl->phase + 1) * q; i += psz)
			sink = buf[i];
		ctl->loops++;
		(void)sink;
	}
	_exit(0);
}

/* Start the workload; 0, or -1 (said). */
static int np_tr_start(struct np_tr *w, bool thp, int node)
{
	long t0 = np_mono_ms();

	w->psz = sysconf(_SC_PAGESIZE);
	w->len = (size_t)NP_TR_MB << 20;
	w->pages = w->len / w->psz;
	w->ctl = mmap(NULL, sizeof(*w->ctl), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w->ctl == MAP_FAILED)
		return -1;
	w->ctl->phase = 0;
	w->kid = fork();
	if (w->kid < 0)
		return -1;
	if (!w->kid)
		np_tr_work(w->ctl, w->len, thp, node);
	while (!w->ctl->buf || !w->ctl->loops) {
		if (np_mono_ms() - t0 > 10000 * (long)np_time_scale() ||
		    waitpid(w->kid, NULL, WNOHANG) == w->kid)
			return -1;
		usleep(1000);
	}
	w->buf = w->ctl->buf;
	return 0;
}

static void np_tr_stop(struct np_tr *w)
{
	if (w->kid > 0) {
		kill(w->kid, SIGKILL);
		waitpid(w->kid, NULL, 0);
		w->kid = 0;
	}
	if (w->ctl && w->ctl != MAP_FAILED)
		munmap(w->ctl, sizeof(*w->ctl));
	w->ctl = NULL;
}

/* Pages of quarter @q of the workload not on @node. */
static long np_tr_not_on(const struct np_tr *w, int q, int node)
{
	size_t n = w->pages / NP_TR_PHASES;
	long first = -1;
	int where = 0;

	return np_pages_not_on(w->kid, w->buf + q * n * w->psz, n, node,
			       &first, &where);
}

/* Whether quarter @q is mapped by PMDs (a THP each 2 MiB). */
static bool np_tr_is_thp(const struct np_tr *w, int q)
{
	struct numaplace_run run;
	size_t nr = 0, done = 0;

	if (numaplace_query_runs(w->kid,
				 w->buf + q * (w->len / NP_TR_PHASES),
				 w->psz, &run, 1, &nr, &done))
		return false;
	return nr == 1 && (run.kind & NUMAPLACE_KIND_PMD);
}

static void np_tr_params(struct numaplace_tier_params *p)
{
	numaplace_tier_params_init(p);
	p->fast_nodes[0] = 1ULL << 0;
	p->slow_nodes[0] = 1ULL << 1;
}

/* @n steps of @t, a period apart, added into @sum. */
static int np_tr_steps(struct numaplace_tier *t, int n,
		       struct numaplace_tier_period *sum)
{
	struct numaplace_tier_period p;
	int i, ret;

	for (i = 0; i < n; i++) {
		usleep(NP_TR_PERIOD_MS * 1000);
		ret = numaplace_tier_step(t, &p);
		if (ret)
			return ret;
		numaplace_tier_period_add(sum, &p);
	}
	return 0;
}

/* Skip without the access scan or nodes 0 and 1; NUMA balancing off. */
static int np_tr_ready(struct __test_metadata *_metadata)
{
	struct numaplace_info info;
	int fd;

	if (NP_OPEN_SETUP(np_open_info, &fd, &info))
		return 1;
	close(fd);
	if (!(info.features & NUMAPLACE_FEAT_ACCESS))
		SKIP(return 1, "no access scan (features %#llx)",
		     (unsigned long long)info.features);
	/* Without the flush, a page in a TLB entry looks idle. */
	if (!(info.features & NUMAPLACE_FEAT_ACCESS_FLUSH))
		SKIP(return 1, "no TLB flush after a clear on this kernel");
	if (!np_node_isset(info.node_memory, 0) ||
	    !np_node_isset(info.node_memory, 1))
		SKIP(return 1, "needs memory on nodes 0 and 1");
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	return 0;
}

FIXTURE(tier)
{
	struct np_tr w;
	struct numaplace_tier *t;
	bool ready;
};

FIXTURE_VARIANT(tier)
{
	bool thp;
};

FIXTURE_VARIANT_ADD(tier, small) { .thp = false };
FIXTURE_VARIANT_ADD(tier, thp) { .thp = true };

FIXTURE_SETUP(tier)
{
	if (np_tr_ready(_metadata))
		return;
	ASSERT_EQ(0, np_tr_start(&self->w, variant->thp, 1));
	ASSERT_EQ(0, np_tr_not_on(&self->w, 0, 1));
	if (variant->thp && !np_tr_is_thp(&self->w, 0))
		SKIP(return, "no PMD THP for the workload");
	self->ready = true;
}

FIXTURE_TEARDOWN(tier)
{
	numaplace_tier_free(self->t);
	np_tr_stop(&self->w);
}

/* The tier of @p over the fixture's workload; its first @steps into @sum. */
static void np_tr_tier(struct __test_metadata *_metadata,
		       FIXTURE_DATA(tier) *self,
		       const struct numaplace_tier_params *p, int steps,
		       struct numaplace_tier_period *sum)
{
	ASSERT_EQ(0, numaplace_tier_new(p, &self->t));
	ASSERT_EQ(0, numaplace_tier_add(self->t, self->w.kid));
	ASSERT_EQ(0, np_tr_steps(self->t, steps, sum));
}

NP_TEST_F(tier, promote_hot_leave_cold)
{
	struct numaplace_tier_period sum = { 0 };
	struct numaplace_tier_params p;
	size_t q = self->w.pages / NP_TR_PHASES;
	long off;
	int i;

	if (!self->ready)
		return;
	np_tr_params(&p);
	p.spread = NUMAPLACE_TIER_SPREAD_ROUND_ROBIN;
	np_tr_tier(_metadata, self, &p, NP_TR_STEPS, &sum);
	off = np_tr_not_on(&self->w, 0, 0);
	EXPECT_LE(off * 100, (long)q * (100 - NP_TR_GOAL)) {
		TH_LOG("%ld of %zu hot pages not on node 0", off, q);
	}
	for (i = 1; i < NP_TR_PHASES; i++)
		EXPECT_EQ(0, np_tr_not_on(&self->w, i, 1)) {
			TH_LOG("cold quarter %d left node 1", i);
		}
	EXPECT_GE(sum.nr_promoted[0] * 100, q * NP_TR_GOAL);
	EXPECT_EQ(0, sum.nr_promoted[1]);
	EXPECT_EQ(0, sum.nr_demoted[1] + sum.nr_demoted[0]);
	EXPECT_EQ(0, sum.nr_scan_failed);
	EXPECT_EQ(1, sum.nr_targets);
	/*
	 * The state: a chunk (about 1 KiB) per 2 MiB of the buffer, and a
	 * few for the rest of the process (its program, libraries, stack),
	 * which map a page here and there: 0.05% of the buffer, and at most
	 * NP_TR_OTHER_CHUNKS chunks more.
	 */
	EXPECT_GE(sum.nr_tracked, self->w.pages);
	EXPECT_LE(sum.state_bytes, (self->w.len >> 21) * 1100 +
				   NP_TR_OTHER_CHUNKS * 1100) {
		TH_LOG("%llu bytes of state for %llu pages",
		       (unsigned long long)sum.state_bytes,
		       (unsigned long long)sum.nr_tracked);
	}

	/*
	 * A new phase: the next quarter hot, followed; long enough for the
	 * old hot set to turn cold (cold_scans idle scans), which must stay
	 * on node 0 all the same: node 0 is far above its watermark.
	 */
	self->w.ctl->phase = 1;
	ASSERT_EQ(0, np_tr_steps(self->t, NP_TR_STEPS + p.cold_scans, &sum));
	off = np_tr_not_on(&self->w, 1, 0);
	EXPECT_LE(off * 100, (long)q * (100 - NP_TR_GOAL)) {
		TH_LOG("%ld of %zu pages of the new hot set not on node 0",
		       off, q);
	}
	for (i = 2; i < NP_TR_PHASES; i++)
		EXPECT_EQ(0, np_tr_not_on(&self->w, i, 1));
	/* No pressure on node 0: the old hot set stays there. */
	EXPECT_EQ(0, np_tr_not_on(&self->w, 0, 0));
	EXPECT_EQ(0, sum.nr_demoted[1]);
	EXPECT_EQ(0, sum.nr_moved_3);
	EXPECT_EQ(0, sum.nr_ping_pong);
}

NP_TEST_F(tier, dry_run)
{
	struct numaplace_tier_period sum = { 0 };
	struct numaplace_tier_params p;
	size_t q = self->w.pages / NP_TR_PHASES;

	if (!self->ready)
		return;
	np_tr_params(&p);
	p.flags = NUMAPLACE_TIER_DRY_RUN;
	np_tr_tier(_metadata, self, &p, NP_TR_STEPS, &sum);
	EXPECT_GE(sum.nr_promoted[0] * 100, q * NP_TR_GOAL);
	EXPECT_EQ(0, np_tr_not_on(&self->w, 0, 1));
}

/*
 * Node 0 under a watermark of half its size, held there by this
 * process's own pages: the workload's cold pages leave node 0 for
 * node 1, its hot ones stay.
 */
NP_TEST_F(tier, demote_under_watermark)
{
	struct numaplace_tier_period sum = { 0 };
	struct numaplace_tier_params p;
	size_t q = self->w.pages / NP_TR_PHASES;
	long total_kb, free_kb, hog_kb;
	unsigned long node0 = 1;
	char *hog = MAP_FAILED;
	int i;

	if (!self->ready)
		return;
	/* The workload back on node 0, as a fast tier's pages would be. */
	np_tr_params(&p);
	p.demote_free_pct = 50;
	ASSERT_EQ(0, numaplace_tier_new(&p, &self->t));
	ASSERT_EQ(0, numaplace_migrate_range(self->w.kid, self->w.buf,
					     self->w.len, 0, 0, NULL));
	ASSERT_EQ(0, np_tr_not_on(&self->w, 1, 0));
	total_kb = np_node_kb(0, "MemTotal:");
	free_kb = np_node_kb(0, "MemFree:");
	ASSERT_LT(0, total_kb);
	/* Down to 40% free: under the watermark (50%), with room to spare. */
	hog_kb = free_kb - total_kb * 2 / 5;
	if (hog_kb > 0) {
		hog = mmap(NULL, hog_kb << 10, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		ASSERT_NE(MAP_FAILED, hog);
		ASSERT_EQ(0, syscall(__NR_mbind, hog, hog_kb << 10, MPOL_BIND,
				     &node0, 64, MPOL_MF_MOVE));
		memset(hog, 1, hog_kb << 10);
	}
	ASSERT_EQ(0, numaplace_tier_add(self->t, self->w.kid));
	/* The first scan, m cold scans, and one to move. */
	ASSERT_EQ(0, np_tr_steps(self->t, p.cold_scans + 2, &sum));
	EXPECT_EQ(0, np_tr_not_on(&self->w, 0, 0)) {
		TH_LOG("hot pages left node 0");
	}
	for (i = 1; i < NP_TR_PHASES; i++) {
		long off = np_tr_not_on(&self->w, i, 1);

		EXPECT_LE(off * 100, (long)q * (100 - NP_TR_GOAL)) {
			TH_LOG("%ld cold pages of quarter %d not on node 1",
			       off, i);
		}
	}
	EXPECT_GE(sum.nr_demoted[1] * 100, 3 * q * NP_TR_GOAL);
	EXPECT_EQ(0, sum.nr_promoted[0]);
	if (hog != MAP_FAILED)
		munmap(hog, hog_kb << 10);
}

/*
 * A rate limit: a second's worth first, then by the time passed; 4 KiB
 * pages up to the budget, a THP whole or not at all (1 MiB/s, THP 3).
 */
NP_TEST_F(tier, rate_limit)
{
	struct numaplace_tier_period sum = { 0 };
	struct numaplace_tier_params p;
	__u64 per_s, bound;
	long t0, ms;

	if (!self->ready)
		return;
	np_tr_params(&p);
	/* THP: 3 MiB/s lets one of the two hot THPs through, not both. */
	p.rate_mb_s = variant->thp ? 3 : 1;
	per_s = ((__u64)p.rate_mb_s << 20) / self->w.psz;
	np_tr_tier(_metadata, self, &p, 0, &sum);
	t0 = np_mono_ms();
	ASSERT_EQ(0, np_tr_steps(self->t, NP_TR_STEPS, &sum));
	ms = np_mono_ms() - t0;
	bound = per_s + per_s * ms / 1000 + 1;
	EXPECT_LE(sum.nr_promoted[0], bound);
	EXPECT_LT(0, sum.nr_promoted[0]);
	EXPECT_LT(0, sum.nr_limited);
	/* The buffer's pages left node 1 a THP at a time. */
	if (variant->thp)
		EXPECT_EQ(0, np_tr_not_on(&self->w, 0, 1) % 512);
}

/* A target that exits is dropped; the step goes on. */
NP_TEST_F(tier, target_exit)
{
	struct numaplace_tier_period sum = { 0 };
	struct numaplace_tier_params p;
	int pids[2];

	if (!self->ready)
		return;
	np_tr_params(&p);
	np_tr_tier(_metadata, self, &p, 0, &sum);
	ASSERT_EQ(1, numaplace_tier_pids(self->t, pids, 2));
	EXPECT_EQ(self->w.kid, pids[0]);
	ASSERT_EQ(0, np_tr_steps(self->t, 2, &sum));
	EXPECT_EQ(1, sum.nr_targets);
	kill(self->w.kid, SIGKILL);
	waitpid(self->w.kid, NULL, 0);
	self->w.kid = 0;
	ASSERT_EQ(0, np_tr_steps(self->t, 1, &sum));
	EXPECT_EQ(0, sum.nr_targets);
	EXPECT_EQ(0, numaplace_tier_pids(self->t, pids, 2));
}

/* The calls alone, without a workload. */
FIXTURE(tierx)
{
	int unused;
};

FIXTURE_SETUP(tierx)
{
}

FIXTURE_TEARDOWN(tierx)
{
}

NP_TEST_F(tierx, bad_input)
{
	struct numaplace_tier_params p;
	struct numaplace_tier *t = NULL;
	pid_t dead;

	if (np_tr_ready(_metadata))
		return;
	np_tr_params(&p);
	p.history = 0;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	p.history = NUMAPLACE_TIER_MAX_HISTORY + 1;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	np_tr_params(&p);
	p.hot_scans = p.history + 1;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	np_tr_params(&p);
	p.cold_scans = NUMAPLACE_TIER_MAX_AGE + 1;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	np_tr_params(&p);
	p.spread = 99;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	np_tr_params(&p);
	p.demote_free_pct = 51;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	np_tr_params(&p);
	p.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	/* Overlapping tiers; a node without memory. */
	np_tr_params(&p);
	p.slow_nodes[0] |= 1;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	np_tr_params(&p);
	p.slow_nodes[0] = 1ULL << 63;
	EXPECT_EQ(-EINVAL, numaplace_tier_new(&p, &t));
	EXPECT_EQ(NULL, t);

	np_tr_params(&p);
	ASSERT_EQ(0, numaplace_tier_new(&p, &t));
	EXPECT_EQ(-ESRCH, numaplace_tier_add(t, -1));
	EXPECT_EQ(-ESRCH, numaplace_tier_add(t, 0));
	dead = fork();
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	EXPECT_EQ(-ESRCH, numaplace_tier_add(t, dead));
	EXPECT_EQ(0, numaplace_tier_add(t, getpid()));
	EXPECT_EQ(-EEXIST, numaplace_tier_add(t, getpid()));
	EXPECT_EQ(-ENOENT, numaplace_tier_remove(t, dead));
	EXPECT_EQ(0, numaplace_tier_remove(t, getpid()));
	EXPECT_EQ(0, numaplace_tier_pids(t, NULL, 0));
	numaplace_tier_free(t);
}

/*
 * Tiering another process needs what writing its clear_refs needs:
 * nobody may not tier root's process, but may tier its own.
 */
NP_TEST_F(tierx, permission)
{
	struct numaplace_tier_params p;
	pid_t root_kid, kid;
	int status;

	if (np_tr_ready(_metadata))
		return;
	if (getuid())
		SKIP(return, "needs root");
	root_kid = fork();
	ASSERT_LE(0, root_kid);
	if (!root_kid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	kid = fork();
	ASSERT_LE(0, kid);
	if (!kid) {
		struct numaplace_tier *t;
		int ret;

		if (setgroups(0, NULL) || setgid(NP_NOBODY) ||
		    setuid(NP_NOBODY))
			_exit(10);
		/* A uid change makes a process non-dumpable: undo it. */
		prctl(PR_SET_DUMPABLE, 1);
		np_tr_params(&p);
		ret = numaplace_tier_new(&p, &t);
		if (ret)
			_exit(11);
		ret = numaplace_tier_add(t, root_kid);
		if (ret != -EACCES && ret != -EPERM)
			_exit(12);
		/* Its own process: allowed. */
		ret = numaplace_tier_add(t, getpid());
		_exit(ret ? 13 : 0);
	}
	ASSERT_EQ(kid, waitpid(kid, &status, 0));
	kill(root_kid, SIGKILL);
	waitpid(root_kid, NULL, 0);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* ---- the daemon, numaplace tier ---------------------------------------- */

/*
 * Start "numaplace tier --fast 0 --slow 1 ARGS" with its stdout on a
 * pipe: its pid, the pipe's read end in *@out.
 */
static pid_t np_tr_daemon_run(const char *args, FILE **out)
{
	char cmd[512];
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "exec numaplace tier --fast 0 --slow 1 %s", args);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	*out = fdopen(fds[0], "r");
	return pid;
}

/* The same for process @target: "-p TARGET ARGS". */
static pid_t np_tr_daemon(pid_t target, const char *args, FILE **out)
{
	char all[384];

	snprintf(all, sizeof(all), "-p %d %s", target, args);
	return np_tr_daemon_run(all, out);
}

/* The daemon's exit status within @ms, or -1 (then killed). */
static int np_tr_daemon_wait(pid_t pid, long ms)
{
	long t0 = np_mono_ms();
	int status;

	while (np_mono_ms() - t0 < ms * (long)np_time_scale()) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

FIXTURE(tierd)
{
	struct np_tr w;
	bool ready;
};

FIXTURE_SETUP(tierd)
{
	if (np_tr_ready(_metadata))
		return;
	if (system("command -v numaplace >/dev/null"))
		SKIP(return, "no numaplace command");
	ASSERT_EQ(0, np_tr_start(&self->w, false, 1));
	self->ready = true;
}

FIXTURE_TEARDOWN(tierd)
{
	np_tr_stop(&self->w);
}

/* The command line: one JSON line a period, the hot set moved. */
NP_TEST_F(tierd, promotes)
{
	size_t q = self->w.pages / NP_TR_PHASES;
	int lines = 0, periods = 6;
	char line[4096], args[128];
	FILE *out;
	long off;
	pid_t d;

	if (!self->ready)
		return;
	snprintf(args, sizeof(args), "--interval 200ms --json --count %d",
		 periods);
	d = np_tr_daemon(self->w.kid, args, &out);
	ASSERT_LT(0, d);
	while (fgets(line, sizeof(line), out)) {
		lines++;
		EXPECT_EQ('{', line[0]);
		EXPECT_NE(NULL, strstr(line, "\"period\":"));
		EXPECT_NE(NULL, strstr(line, "\"promoted\":"));
	}
	fclose(out);
	EXPECT_EQ(0, np_tr_daemon_wait(d, 30000));
	EXPECT_EQ(periods, lines);
	off = np_tr_not_on(&self->w, 0, 0);
	EXPECT_LE(off * 100, (long)q * (100 - NP_TR_GOAL)) {
		TH_LOG("%ld of %zu hot pages not on node 0", off, q);
	}
	EXPECT_EQ(0, np_tr_not_on(&self->w, 2, 1));
}

/*
 * Once the daemon (@args) printed its first line: SIGTERM to it, or
 * (@target_dies) SIGKILL to its only target; it must exit with status 0.
 */
static void np_tr_ends(struct __test_metadata *_metadata,
		       FIXTURE_DATA(tierd) *self, const char *args,
		       int target_dies)
{
	char line[4096];
	FILE *out;
	pid_t d;

	d = np_tr_daemon(self->w.kid, args, &out);
	ASSERT_LT(0, d);
	ASSERT_NE(NULL, fgets(line, sizeof(line), out));
	if (target_dies) {
		kill(self->w.kid, SIGKILL);
		waitpid(self->w.kid, NULL, 0);
		self->w.kid = 0;
	} else {
		kill(d, SIGTERM);
	}
	EXPECT_EQ(0, np_tr_daemon_wait(d, 10000));
	fclose(out);
}

/* SIGTERM ends it cleanly, between periods or in one. */
NP_TEST_F(tierd, sigterm)
{
	if (self->ready)
		np_tr_ends(_metadata, self, "--interval 100ms --json", 0);
}

/* Its only target's exit ends it, status 0. */
NP_TEST_F(tierd, target_exit)
{
	if (self->ready)
		np_tr_ends(_metadata, self, "--interval 100ms", 1);
}

/* Where the Prometheus test writes, and what it must not touch. */
#define NP_TR_PROM_DIR	"/tmp/np-tier-prom"

/*
 * --prometheus: the totals for node_exporter, written anew each period
 * (FILE.tmp then renamed), never through a symlink planted as FILE.tmp.
 */
NP_TEST_F(tierd, prometheus)
{
	char line[4096], buf[256];
	bool promoted = false;
	FILE *out, *f;
	long n0;
	pid_t d;

	if (!self->ready)
		return;
	mkdir(NP_TR_PROM_DIR, 0755);
	unlink(NP_TR_PROM_DIR "/t.prom");
	f = fopen(NP_TR_PROM_DIR "/victim", "w");
	ASSERT_NE(NULL, f);
	fputs("keep", f);
	fclose(f);
	unlink(NP_TR_PROM_DIR "/t.prom.tmp");
	ASSERT_EQ(0, symlink(NP_TR_PROM_DIR "/victim",
			     NP_TR_PROM_DIR "/t.prom.tmp"));
	d = np_tr_daemon(self->w.kid, "--interval 200ms --count 6 --prometheus "
			 NP_TR_PROM_DIR "/t.prom", &out);
	ASSERT_LT(0, d);
	while (fgets(line, sizeof(line), out))
		;
	fclose(out);
	EXPECT_EQ(0, np_tr_daemon_wait(d, 30000));
	ASSERT_EQ(0, np_read_str(NP_TR_PROM_DIR "/victim", buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "keep", 4));
	EXPECT_NE(0, access(NP_TR_PROM_DIR "/t.prom.tmp", F_OK));
	f = fopen(NP_TR_PROM_DIR "/t.prom", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "numaplace_tier_promoted_pages_total{", 36) ||
		    !strstr(line, "node=\"0\""))
			continue;
		n0 = strtol(strrchr(line, ' ') + 1, NULL, 10);
		promoted = n0 > 0;
	}
	fclose(f);
	EXPECT_TRUE(promoted);
}

/*
 * --cgroup: the processes of a cgroup, read each period; the daemon ends
 * when the cgroup is gone.
 */
NP_TEST_F(tierd, cgroup)
{
	const char *cg = NP_CG_ROOT "/np-tier-test";
	size_t q = self->w.pages / NP_TR_PHASES;
	char line[4096], pid[16];
	int lines = 0;
	FILE *out;
	long off;
	pid_t d;

	if (!self->ready)
		return;
	if (access(NP_CG_ROOT "/cgroup.procs", W_OK))
		SKIP(return, "no cgroup v2 at " NP_CG_ROOT);
	if (mkdir(cg, 0755) && errno != EEXIST)
		SKIP(return, "cannot make %s: %s", cg, strerror(errno));
	snprintf(pid, sizeof(pid), "%d", self->w.kid);
	ASSERT_EQ(0, np_write_str(NP_CG_ROOT "/np-tier-test/cgroup.procs", pid));
	d = np_tr_daemon_run("--cgroup " NP_CG_ROOT "/np-tier-test "
			     "--interval 200ms --json", &out);
	ASSERT_LT(0, d);
	while (lines < 6 && fgets(line, sizeof(line), out))
		lines++;
	EXPECT_EQ(6, lines);
	off = np_tr_not_on(&self->w, 0, 0);
	EXPECT_LE(off * 100, (long)q * (100 - NP_TR_GOAL)) {
		TH_LOG("%ld of %zu hot pages not on node 0", off, q);
	}
	/* The workload gone, then its cgroup: the daemon ends, status 0. */
	kill(self->w.kid, SIGKILL);
	waitpid(self->w.kid, NULL, 0);
	self->w.kid = 0;
	EXPECT_EQ(0, np_memcg_remove(cg));
	while (fgets(line, sizeof(line), out))
		;
	fclose(out);
	EXPECT_EQ(0, np_tr_daemon_wait(d, 10000));
}

NP_HARNESS_MAIN
