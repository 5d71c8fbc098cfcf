// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE's bounds, once per engine (fixture
 * "migrate_bounds", migrate.c's NP_MIG_FIXTURE()): the extra memory a
 * migration takes in the caller's memcg, a target node that is full
 * (-ENOMEM per page, data intact, in bounded time) and a caller killed
 * mid-call (gone fast).
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
#include "np_genl.h"

/* A killed caller must be gone this fast (times np_time_scale()). */
#define NP_KILL_MS	2000
/* A migration to a full node takes no longer (times np_time_scale()). */
#define NP_FULL_MS	10000
/* Isolated pages are back this soon after the killed caller is gone. */
#define NP_ISOLATED_SETTLE_MS	2000
/* Pages of the SIGKILL test's buffer: 256 MiB. */
#define NP_KILL_PAGES	(65536UL)

static long psz;

/* ------------------------------------------------------------------ */
/* Fixture "migrate_bounds": every test once per engine.           */
/* ------------------------------------------------------------------ */

NP_MIG_FIXTURE(migrate_bounds)

/*
 * What a call holds beyond its sources is bounded, and charged where the
 * kernel would charge it: a child in a memcg whose memory.max is its
 * working set plus NP_EXTRA_MAX_MB (no swap) moves 64 MiB of 4 KiB pages
 * and 64 MiB of THPs to node 1, one call each: the memcg's memory.peak
 * stays within memory.max, no OOM kill, every page moved and intact. On
 * 41261ae the batched engine unmapped and allocated a whole round (64 MiB)
 * before restoring any of it, and 6.1 charges each destination by force
 * when it is moved (mem_cgroup_migrate()) while the sources wait for the
 * round's finalize: the peak went 44 MiB past memory.max. The host's free
 * memory is sampled and logged: it is no bound (freed pages reach the
 * free lists late, by tens of MiB either way), so the kernel engine's
 * preallocation window has no assertion here.
 */
#define NP_EXTRA_MB		64	/* each of the two regions */
#define NP_EXTRA_MAX_MB		24	/* the engines' 8 MiB window, plus slack */

struct np_extra {
	volatile int stop;
	long min_free_kb;
};

static void *np_extra_sampler(void *arg)
{
	struct np_extra *x = arg;

	while (!x->stop) {
		long kb = np_meminfo_kb("MemFree");

		if (kb >= 0 && kb < x->min_free_kb)
			x->min_free_kb = kb;
		usleep(500);
	}
	return NULL;
}

/* What the child tells the test, in memory shared with it. */
struct np_extra_out {
	long extra_kb[2];		/* beyond free memory: 4 KiB, THP */
	__u64 nr_failed[2][NUMAPLACE_FAIL_MAX];	/* pages not moved, by reason */
};

struct np_extra_args {
	__u32 eflags;
	int fd;
	struct np_extra_out *out;
};

/* The child's part: in @cg, map, fill and move both regions. */
static int np_extra_child(const char *cg, void *arg)
{
	const struct np_extra_args *args = arg;
	__u32 eflags = args->eflags;
	long *extra_kb = args->out->extra_kb;
	int fd = args->fd;
	const size_t n = NP_EXTRA_MB << 8;
	char *small = np_pmd_map(n * psz, 0), *thp = np_pmd_map(n * psz, 1);
	struct numaplace_migrate m;
	struct np_extra x;
	size_t first;
	pthread_t th;
	char max[32];
	long cur;

	if (!small || !thp)
		return 20;
	/* Faulted in the memcg: charged to it. */
	if (np_memcg_enter(cg))
		return 21;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(small, n, 3);
	np_fill(thp, n, 4);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Its limit: what it has now, plus the slack. */
	cur = np_memcg_long(cg, "memory.current");
	snprintf(max, sizeof(max), "%ld", cur + ((long)NP_EXTRA_MAX_MB << 20));
	if (cur <= 0 || np_memcg_set(cg, "memory.swap.max", "0") ||
	    np_memcg_set(cg, "memory.max", max))
		return 22;
	for (int r = 0; r < 2; r++) {
		char *p = r ? thp : small;

		x.stop = 0;
		x.min_free_kb = np_meminfo_kb("MemFree");
		extra_kb[r] = x.min_free_kb;
		if (pthread_create(&th, NULL, np_extra_sampler, &x))
			return 23;
		if (np_migrate_node(fd, 0, eflags, (uintptr_t)p, n * psz, 1,
				    NULL, &m))
			return 24;
		x.stop = 1;
		pthread_join(th, NULL);
		extra_kb[r] -= x.min_free_kb;
		memcpy(args->out->nr_failed[r], m.nr_failed,
		       sizeof(m.nr_failed));
		if (m.nr_moved_pages != n)
			return 25 + r;
		if (np_fill_bad(p, n, r ? 4 : 3, &first))
			return 27;
	}
	return 0;
}

TEST_F_TIMEOUT(migrate_bounds, extra_memory_bounded, NP_TIMEOUT(180))
{
	NP_SKIPPED_OR_FILTERED();
	struct np_extra_out *out = mmap(NULL, sizeof(*out),
					PROT_READ | PROT_WRITE,
					MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct np_extra_args args = { self->eflags, self->fd, out };
	char cg[128];
	long peak, lim;
	int status;

	ASSERT_NE(MAP_FAILED, out);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	if (self->vma_only)
		SKIP(return, "the VMA engine does not move THPs");
	status = np_memcg_fork("np-extra", cg, sizeof(cg), np_extra_child,
			       &args);
	if (status == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_LE(0, status);
	peak = np_memcg_long(cg, "memory.peak");
	lim = np_memcg_long(cg, "memory.max");
	TH_LOG("beyond free memory: 4 KiB %ld KiB, THP %ld KiB; memcg peak %ld of %ld",
	       out->extra_kb[0], out->extra_kb[1], peak, lim);
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Any exit but 0 (25, 26: pages not moved): why pages stayed. */
	for (int r = 0; WEXITSTATUS(status) && r < 2; r++)
		TH_LOG("%s: not moved: ENOMEM %llu EBUSY %llu EACCES %llu EFAULT %llu ENOENT %llu other %llu",
		       r ? "THP" : "4 KiB",
		       (unsigned long long)out->nr_failed[r][NUMAPLACE_FAIL_ENOMEM],
		       (unsigned long long)out->nr_failed[r][NUMAPLACE_FAIL_EBUSY],
		       (unsigned long long)out->nr_failed[r][NUMAPLACE_FAIL_EACCES],
		       (unsigned long long)out->nr_failed[r][NUMAPLACE_FAIL_EFAULT],
		       (unsigned long long)out->nr_failed[r][NUMAPLACE_FAIL_ENOENT],
		       (unsigned long long)out->nr_failed[r][NUMAPLACE_FAIL_OTHER]);
	EXPECT_EQ(0, np_memcg_key(cg, "memory.events", "oom_kill"));
	EXPECT_LT(0, peak);
	EXPECT_LE(peak, lim);
	EXPECT_EQ(0, np_memcg_remove(cg));
	munmap(out, sizeof(*out));
}

/*
 * What a call allocates for itself (its state, a round's status, target
 * and page arrays) is the caller's memory, as the syscalls' is: charged
 * to the caller's memcg, and a full memcg fails the call cleanly, with
 * no OOM kill. A child maps and fills NP_CHARGED_PAGES 4 KiB pages in
 * the test's memcg (charged there) and makes one call that moves nothing
 * (its stack faulted), then enters a memcg of its own, which so holds
 * next to nothing (np_memcg_tight()):
 *  - memory.max at what the memcg holds: the call to node 1 fails with
 *    ENOMEM, no page moved, no OOM kill;
 *  - memory.max back to "max": the call moves every page, intact, and
 *    where the batched arrays were used (the batched and page-table
 *    engines), memory.peak has them: NP_CHARGED_BYTES_PER_PAGE bytes a
 *    page of a round (batch_pages, or the call's pages where fewer).
 * On 394f443 the arrays were GFP_KERNEL: the tight call moved every page
 * (6.1, every engine) and the memcg's peak stayed 0.
 */
/* 64 MiB: a round's arrays (a round of batch_pages at most) past the
 * memcg's first precharge (64 pages). */
#define NP_CHARGED_PAGES	16384
/*
 * Bytes a page of a round: the batched arrays (src, dst, pages, held: 8;
 * target, slots: 4) and the call's status and target (4 each).
 */
#define NP_CHARGED_BYTES_PER_PAGE	48

/* What the child tells the test, in memory shared with it. */
struct np_charged {
	__u32 eflags;
	int fd;
	int tight_ret;			/* 0 or -errno */
	__u64 tight_moved, moved, engines;
	size_t bad;
};

static int np_charged_child(const char *cg, void *arg,
			    struct np_memcg_tight *t)
{
	struct np_charged *c = arg;
	const size_t n = NP_CHARGED_PAGES;
	char *p = np_pmd_map(n * psz, 0);
	struct numaplace_migrate m;
	size_t first;

	if (!p)
		return 20;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 5);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* The same path once, nothing to move: its stack pages faulted. */
	if (np_migrate_node(c->fd, 0, c->eflags, (uintptr_t)p, n * psz, 0,
			    NULL, &m))
		return 21;
	c->tight_ret = 1;		/* faulted before the memcg */
	if (np_memcg_enter(cg))
		return 22;
	np_memcg_tight_begin(t);
	memset(&m, 0, sizeof(m));
	c->tight_ret = np_migrate_node(c->fd, 0, c->eflags, (uintptr_t)p,
				       n * psz, 1, NULL, &m);
	c->tight_moved = m.nr_moved_pages;
	np_memcg_tight_end(t);
	if (np_migrate_node(c->fd, 0, c->eflags, (uintptr_t)p, n * psz, 1,
			    NULL, &m))
		return 23;
	c->moved = m.nr_moved_pages;
	c->engines = m.engines;
	c->bad = np_fill_bad(p, n, 5, &first);
	return 0;
}

TEST_F_TIMEOUT(migrate_bounds, call_memory_charged, NP_TIMEOUT(120))
{
	NP_SKIPPED_OR_FILTERED();
	struct np_charged *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct np_memcg_tight t;
	struct np_gn_config conf;
	struct np_nl nl;
	int status;
	long peak;
	char cg[128];

	ASSERT_NE(MAP_FAILED, c);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	if (geteuid())
		SKIP(return, "needs root (cgroups)");
	ASSERT_EQ(0, np_gn_open(&nl));
	ASSERT_EQ(0, np_gn_config_get(&nl, &conf));
	np_nl_close(&nl);
	memset(c, 0, sizeof(*c));
	c->eflags = self->eflags;
	c->fd = self->fd;
	status = np_memcg_tight("np-charged", cg, sizeof(cg), np_charged_child,
				c, &t);
	if (status == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_LE(0, status);
	peak = np_memcg_long(cg, "memory.peak");
	TH_LOG("memcg: memory.max %ld at the tight call; peak %ld; batch_pages %ld; engines %#llx",
	       t.max, peak, conf.batch_pages, (unsigned long long)c->engines);
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, t.oom_kill);
	EXPECT_EQ(-ENOMEM, c->tight_ret);
	EXPECT_EQ(0, c->tight_moved);
	EXPECT_EQ(NP_CHARGED_PAGES, c->moved);
	EXPECT_EQ(0, c->bad);
	if (c->engines & (NUMAPLACE_ENGINE_BATCH | NUMAPLACE_ENGINE_PT))
		EXPECT_LE(NP_CHARGED_BYTES_PER_PAGE *
			  (conf.batch_pages < NP_CHARGED_PAGES ?
			   conf.batch_pages : NP_CHARGED_PAGES), peak);
	EXPECT_EQ(0, np_memcg_remove(cg));
	munmap(c, sizeof(*c));
}

/*
 * Node 1 full (its memory held as hugetlb pages): the pages that do not
 * fit stay where they are with -ENOMEM, counted in
 * nr_failed[NUMAPLACE_FAIL_ENOMEM], their data intact; the others move.
 */
TEST_F_TIMEOUT(migrate_bounds, target_node_full, NP_TIMEOUT(30))
{
	NP_SKIPPED_OR_FILTERED();
	char path[128];
	long got, total_kb, free_kb, lru_kb, nomem = 0, moved = 0, other = 0;
	long t0;
	struct numaplace_migrate m;
	size_t n, first = 0;
	__u64 *addrs;
	__s32 *st;
	int *now;
	char *p;

	NP_HP_FILL_NODE(got, 1, self->hp_orig);
	snprintf(path, sizeof(path), NP_HP_PATH, 1);
	total_kb = np_node_kb(1, "MemTotal:");
	free_kb = np_node_kb(1, "MemFree:");
	lru_kb = np_node_kb(1, "Active(anon):,Inactive(anon):,Active(file):,"
			       "Inactive(file):,KReclaimable:");
	ASSERT_GT(total_kb, 0);
	ASSERT_GE(free_kb, 0);
	ASSERT_GE(lru_kb, 0);
	/*
	 * More than fits: all of node 1 that is not its huge pages, plus
	 * 64 MiB. What is free and what reclaim could free (LRU pages,
	 * reclaimable slab) at this moment is not an upper bound: node 1 has
	 * been seen with up to 100 MB in use by nothing its meminfo names
	 * (no anon, file, slab or page-table pages) that the call could then
	 * have, and a CI run moved all of free + reclaimable + 64 MiB.
	 */
	n = (total_kb - got * NP_HP_KB + 65536) * 1024 / psz;
	TH_LOG("node 1: %ld kB, %ld huge pages, %ld kB free, %ld kB reclaimable; moving %zu pages",
	       total_kb, got, free_kb, lru_kb, n);
	p = np_full_src(n, 7);
	ASSERT_NE(NULL, p) TH_LOG("%zu pages: %s", n, strerror(errno));
	addrs = calloc(n, sizeof(*addrs));
	st = calloc(n + 1, sizeof(*st));
	now = calloc(n, sizeof(*now));
	ASSERT_TRUE(addrs && st && now);
	np_range_addrs(addrs, (uintptr_t)p, n);

	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	TH_LOG("node 1 before the call: %ld kB free, %ld kB reclaimable",
	       np_node_kb(1, "MemFree:"),
	       np_node_kb(1, "Active(anon):,Inactive(anon):,Active(file):,"
			  "Inactive(file):,KReclaimable:"));
	t0 = np_mono_ms();
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
				     n * psz, 1, st, &m));
	t0 = np_mono_ms() - t0;
	TH_LOG("the call took %ld ms", t0);
	/* No room is no reason to take long (move_pages(2) gives up). */
	EXPECT_LT(t0, NP_FULL_MS * np_time_scale());
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(NP_SENTINEL, st[n]);
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	for (size_t i = 0; i < n; i++) {
		if (st[i] == -ENOMEM && now[i] == 0)
			nomem++;
		else if (st[i] == 1 && now[i] == 1)
			moved++;
		else if (other++ < NP_LOG_MAX)
			TH_LOG("page %zu: status %d, on node %d", i, st[i],
			       now[i]);
	}
	TH_LOG("%ld moved, %ld -ENOMEM; node 1 now: %ld huge pages, %ld kB free",
	       moved, nomem, np_read_long(path), np_node_kb(1, "MemFree:"));
	EXPECT_EQ(0, other);
	EXPECT_GT(nomem, 0);
	EXPECT_EQ(nomem, m.nr_failed[NUMAPLACE_FAIL_ENOMEM]);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "node full", &m, st, n,
					   1, self->allowed));
	EXPECT_EQ(0, np_full_src_free(p, n, 7, &first))
		TH_LOG("page %zu", first);
	np_hp_restore(self->hp_orig);
	free(addrs);
	free(st);
	free(now);
}

/*
 * SIGKILL of a caller inside a 256 MiB migration: it is gone within
 * NP_KILL_MS, and nothing stays isolated.
 */
TEST_F_TIMEOUT(migrate_bounds, sigkill_bounded, NP_TIMEOUT(90))
{
	NP_SKIPPED_OR_FILTERED();
	long anon0, file0, anon, file, t0, waited = -1;
	struct { volatile int in, calls, ms; } *sh;
	int status = 0;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, np_isolated(&anon0, &file0));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		size_t len = NP_KILL_PAGES * psz;
		char *p = np_pmd_map(len, 0);
		struct numaplace_migrate m;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!p)
			_exit(1);
		np_mempolicy(MPOL_BIND, 0);
		memset(p, 0x3c, len);
		np_mempolicy(MPOL_DEFAULT, -1);
		for (int node = 1;; node ^= 1) {
			long t = np_mono_ms();

			sh->in = 1;
			np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
					len, node, NULL, &m);
			sh->in = 0;
			sh->ms = np_mono_ms() - t;
			sh->calls++;
		}
	}
	/* After one whole call, kill it inside the next. */
	t0 = np_mono_ms();
	while ((sh->calls < 1 || !sh->in) && np_mono_ms() - t0 < 60000)
		usleep(1000);
	ASSERT_TRUE(sh->calls >= 1 && sh->in) TH_LOG("the child never called");
	usleep(100000);
	t0 = np_mono_ms();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	while (np_mono_ms() - t0 < 10 * NP_KILL_MS * np_time_scale()) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			waited = np_mono_ms() - t0;
			break;
		}
		usleep(5000);
	}
	if (waited < 0)
		waitpid(pid, &status, 0);
	ksft_print_msg("a whole call took %d ms; the killed caller was gone after %ld ms\n",
		       sh->ms, waited);
	EXPECT_GE(waited, 0);
	EXPECT_LT(waited, NP_KILL_MS * np_time_scale());
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	/* Isolated pages go back (allow the per-CPU counters a moment). */
	ASSERT_EQ(0, np_isolated_settle(anon0, file0, NP_ISOLATED_SETTLE_MS,
					&anon, &file));
	EXPECT_LE(anon, anon0);
	EXPECT_LE(file, file0);
	munmap(sh, sizeof(*sh));
}


NP_HARNESS_MAIN
