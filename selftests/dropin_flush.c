// SPDX-License-Identifier: GPL-2.0
/*
 * The drop-ins' choice of the syscall on a host without an engine that
 * flushes the TLB once per batch (tools/lib/flush.c). The module is
 * reloaded with simulate_ibt=1: on 6.12 and 7.3 the kernel and page-table
 * engines go, as on a CPU that enforces IBT; on 6.1 nothing is sealed and
 * both stay. The module's migrate_calls counter (STATS_GET) says whether
 * a drop-in went through it:
 *  - a single-threaded caller moving its own pages: the module, always;
 *  - a caller with a second thread, or moving another process's pages:
 *    the syscall where neither engine is left, else the module;
 *  - numaplace_migrate_range() by the same rule, with MIGRATE's counters
 *    either way (moved pages and folios, in place, -EFAULT past the end
 *    of a mapping), of 4 KiB pages and of PMD-mapped THPs (one folio
 *    each, where the syscall answers -EBUSY for all but one page of a
 *    THP given page by page); to a node MIGRATE refuses, its answer.
 * Every page is checked on its target after each call. The lib calls run
 * in children, so that no descriptor of the device outlives them and the
 * teardown can load the module plainly again.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/mempolicy.h>

#include "kselftest_harness.h"
#include "migrate_lib.h"
#include "np_genl.h"
#include "numaplace.h"

#define NP_DF_PAGES	64	/* pages each call moves */
#define NP_DF_UNLOAD_TRIES	50	/* 100 ms apart: a closing fd lets go */

static long psz;

static void __attribute__((constructor)) dropin_flush_page_size(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

/* Unload the module and load it with @params. 0 or -errno. */
static int df_reload(const char *params)
{
	int modfd = np_ko_open("numaplace"), ret = 0, ret2;

	if (modfd < 0)
		return modfd;
	for (int i = 0; i < NP_DF_UNLOAD_TRIES; i++) {
		ret = np_module_unload();
		if (!ret || ret == -ENOENT)
			break;
		usleep(100000);
	}
	/* Still loaded after the tries: the unload's error, not EEXIST. */
	ret2 = np_ko_load(modfd, params);
	if (ret2)
		ret = ret2 == -EEXIST && ret ? ret : ret2;
	else
		ret = 0;
	close(modfd);
	return ret;
}

/* How a child calls the drop-ins. */
enum df_how {
	DF_SELF,		/* move_pages drop-in, own pages, one thread */
	DF_SELF_THREADS,	/* the same with a second thread */
	DF_MIGRATE_THREADS,	/* migrate_pages drop-in, with a second thread */
	DF_OTHER,		/* move_pages drop-in, another process's pages */
	DF_RANGE_THREADS,	/* numaplace_migrate_range(), a second thread */
	DF_RANGE_THP,		/* the same, of two PMD-mapped THPs */
	DF_RANGE_REFUSED,	/* the same, to nodes MIGRATE refuses */
};

/*
 * DF_RANGE_THREADS: pages past the buffer, unmapped: -EFAULT. A mapped
 * page after them (outside the range) closes the hole: open above, the
 * gap np_pmd_map() leaves could take libnumaplace's own scratch chunk
 * (np_migrate_range_syscall()'s, 400 KiB, mmapped by malloc) partly
 * inside the range, whose written first page the syscall path then
 * moved (6.12, CI: moved 65 of 64, -EFAULT 6 of 16).
 */
#define NP_DF_HOLE	16
#define NP_DF_HOLE_END	1
/* DF_RANGE_THP: two THPs, 512 pages each. */
#define NP_DF_THPS	2
#define NP_DF_THP_PAGES	(NP_DF_THPS * 512)
/* df_child()'s exit status when the kernel gave no THP: not a failure. */
#define NP_DF_NO_THP	99

static void *df_sleeper(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/* The @n pages at @p of @pid on @node? 0 if so, else the first not + 1. */
static int df_all_on(int pid, char *p, size_t n, int node)
{
	__u64 pages[NP_DF_THP_PAGES];
	int st[NP_DF_THP_PAGES];

	if (n > NP_DF_THP_PAGES)
		return -1;
	for (size_t i = 0; i < n; i++)
		pages[i] = (uintptr_t)p + i * psz;
	if (np_sys_query(pid, n, pages, st))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (st[i] != node)
			return i + 1;
	return 0;
}

/* The counters of @m, as expected. 0, or @code when one differs. */
static int df_counts(const struct numaplace_migrate *m, __u64 done,
		     __u64 moved, __u64 folios, __u64 in_place, __u64 efault,
		     int code)
{
	if (m->done != done || m->nr_moved_pages != moved ||
	    m->nr_moved_folios != folios || m->nr_in_place_pages != in_place ||
	    m->nr_failed_pages != efault ||
	    m->nr_failed[NUMAPLACE_FAIL_EFAULT] != efault) {
		fprintf(stderr, "# counters: done %llu moved %llu folios %llu in place %llu failed %llu efault %llu\n",
			(unsigned long long)m->done,
			(unsigned long long)m->nr_moved_pages,
			(unsigned long long)m->nr_moved_folios,
			(unsigned long long)m->nr_in_place_pages,
			(unsigned long long)m->nr_failed_pages,
			(unsigned long long)m->nr_failed[NUMAPLACE_FAIL_EFAULT]);
		return code;
	}
	return 0;
}

/* Pages of [@p, @p + @n pages) that QUERY sees PMD-mapped, or -1. */
static long df_pmd_pages(char *p, size_t n)
{
	struct numaplace_run runs[8];
	size_t nr, done;
	long pmd = 0;

	if (numaplace_query_runs(0, p, n * psz, runs, 8, &nr, &done) ||
	    done != n)
		return -1;
	for (size_t i = 0; i < nr; i++)
		if (runs[i].kind & NUMAPLACE_KIND_PMD)
			pmd += runs[i].nr_pages;
	return pmd;
}

/*
 * numaplace_migrate_range() of @n pages at @p (@thp: PMD-mapped THPs)
 * and @hole unmapped pages after them, twice: the counters are MIGRATE's
 * whichever way the pages go. 0, or which check failed.
 */
static int df_range(char *p, size_t n, size_t hole, int thp)
{
	const size_t len = (n + hole) * psz;
	__u64 folios = thp ? n / 512 : n, addrs[NP_DF_PAGES / 2];
	int nodes[NP_DF_PAGES / 2], st[NP_DF_PAGES / 2];
	struct numaplace_migrate m;
	int ret;

	if (numaplace_migrate_range(0, p, len, 1, 0, &m))
		return 21;
	ret = df_counts(&m, n + hole, n, folios, 0, hole, 22);
	if (ret)
		return ret;
	if (df_all_on(0, p, n, 1))
		return 23;
	/* Again: every page is in place now. */
	if (numaplace_migrate_range(0, p, len, 1, 0, &m))
		return 24;
	ret = df_counts(&m, n + hole, 0, 0, n, hole, 25);
	if (ret || thp)
		return ret;
	/* Every other page back on node 0: runs of one page, in one chunk. */
	for (size_t i = 0; i < n / 2; i++) {
		addrs[i] = (uintptr_t)p + 2 * i * psz;
		nodes[i] = 0;
	}
	if (np_sys_move_pages(0, n / 2, addrs, nodes, st, MPOL_MF_MOVE))
		return 26;
	if (numaplace_migrate_range(0, p, len, 1, 0, &m))
		return 27;
	ret = df_counts(&m, n + hole, n / 2, n / 2, n / 2, hole, 28);
	return ret ?: df_all_on(0, p, n, 1) ? 29 : 0;
}

/*
 * numaplace_migrate_range() of the @len bytes at @p to targets MIGRATE
 * refuses (no such node, one beyond the map, node 2: the guest's node
 * without memory): the call's answer is MIGRATE's. 0, or which differed.
 */
static int df_refused(char *p, size_t len)
{
	struct numaplace_migrate m;

	for (int k = 0; k < 3; k++) {
		static const int bad[] = { -1, NUMAPLACE_MAX_NODES, 2 };
		struct numaplace_migrate r;
		int lib, mod;

		memset(&r, 0, sizeof(r));
		r.policy = NUMAPLACE_POLICY_NODE;
		r.start = (uintptr_t)p;
		r.len = len;
		r.node = bad[k];
		mod = numaplace_migrate(&r);
		lib = numaplace_migrate_range(0, p, len, bad[k], 0, &m);
		if (!mod || lib != mod || m.done != r.done) {
			fprintf(stderr, "# node %d: numaplace_migrate_range %d, MIGRATE %d\n",
				bad[k], lib, mod);
			return 30 + k;
		}
	}
	return 0;
}

/*
 * The child: pages on node 0, then to node 1 by the drop-in @how. Exit
 * status 0 when the call succeeded and every page is on node 1.
 */
static int df_child(enum df_how how)
{
	unsigned long from = 1UL << 0, to = 1UL << 1;
	size_t n = how == DF_RANGE_THP ? NP_DF_THP_PAGES : NP_DF_PAGES;
	size_t hole = how == DF_RANGE_THREADS ? NP_DF_HOLE : 0;
	size_t end = hole ? NP_DF_HOLE_END : 0;
	char *p = np_pmd_map((n + hole + end) * psz, how == DF_RANGE_THP);
	int nodes[NP_DF_PAGES], st[NP_DF_PAGES];
	void *pages[NP_DF_PAGES];
	int pid = 0, status;
	pthread_t th;
	pid_t kid = 0;
	long ret;

	if (!p || np_touch_on(p, 0, n, 0))
		return 10;
	if (hole && munmap(p + n * psz, hole * psz))
		return 10;
	if (how == DF_RANGE_THP && df_pmd_pages(p, n) != (long)n)
		return NP_DF_NO_THP;
	if (how != DF_SELF && how != DF_OTHER)
		if (pthread_create(&th, NULL, df_sleeper, NULL))
			return 11;
	if (how == DF_OTHER) {
		int ready[2];
		char c = 0;

		/*
		 * A process with pages of its own at the same addresses:
		 * written after the fork (no page shared with this one), on
		 * node 0, then asleep.
		 */
		if (pipe(ready))
			return 12;
		kid = fork();
		if (kid < 0)
			return 12;
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			c = !np_touch_on(p, 0, NP_DF_PAGES, 0);
			if (write(ready[1], &c, 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		if (read(ready[0], &c, 1) != 1 || !c)
			return 12;
		close(ready[0]);
		close(ready[1]);
		pid = kid;
	}
	for (int i = 0; i < NP_DF_PAGES; i++) {
		pages[i] = p + i * psz;
		nodes[i] = 1;
	}
	if (how == DF_RANGE_THREADS || how == DF_RANGE_THP)
		return df_range(p, n, hole, how == DF_RANGE_THP);
	if (how == DF_RANGE_REFUSED)
		return df_refused(p, n * psz);
	if (how == DF_MIGRATE_THREADS)
		ret = numaplace_migrate_pages(0, 64, &from, &to);
	else
		ret = numaplace_move_pages(pid, NP_DF_PAGES, pages, nodes, st,
					   MPOL_MF_MOVE);
	status = ret < 0 ? 13 : df_all_on(pid, p, NP_DF_PAGES, 1) ? 14 : 0;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	return status;
}

/* Run df_child(@how) in a child: its exit status, the module's calls. */
static int df_run(struct __test_metadata *_metadata, struct np_nl *nl,
		  enum df_how how, __u64 *calls)
{
	struct np_gn_stats a, b;
	int status;
	pid_t kid;

	if (np_gn_stats(nl, &a))
		return -1;
	kid = fork();
	if (kid < 0)
		return -1;
	if (kid == 0)
		_exit(df_child(how));
	if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status))
		return -1;
	if (np_gn_stats(nl, &b))
		return -1;
	*calls = b.migrate_calls - a.migrate_calls;
	return WEXITSTATUS(status);
}

FIXTURE(dropin_flush)
{
	int reloaded;
	struct np_nl nl;
	__u64 features;
};

FIXTURE_SETUP(dropin_flush)
{
	struct numaplace_info info;
	int fd;

	if (geteuid())
		SKIP(return, "needs root: it reloads the module");
	if (!np_ko_found("numaplace"))
		SKIP(return, "no numaplace.ko in " NP_KO_WHERE);
	self->reloaded = 1;
	ASSERT_EQ(0, df_reload("simulate_ibt=1"));
	fd = np_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, np_get_info(fd, &info));
	close(fd);
	if (!np_node_isset(info.node_memory, 0) ||
	    !np_node_isset(info.node_memory, 1))
		SKIP(return, "needs nodes 0 and 1 with memory");
	self->features = info.features;
	ASSERT_EQ(0, np_gn_open(&self->nl));
}

FIXTURE_TEARDOWN(dropin_flush)
{
	if (!self->reloaded)
		return;
	np_nl_close(&self->nl);
	EXPECT_EQ(0, df_reload(""));
}

TEST_F_TIMEOUT(dropin_flush, choice, NP_TIMEOUT(NP_GN_TIMEOUT))
{
	const __u64 batched = NUMAPLACE_FEAT_MIGRATE_KERNEL |
			      NUMAPLACE_FEAT_MIGRATE_PT;
	static const char *const what[] = {
		[DF_SELF] = "move_pages, one thread",
		[DF_SELF_THREADS] = "move_pages, two threads",
		[DF_MIGRATE_THREADS] = "migrate_pages, two threads",
		[DF_OTHER] = "move_pages, another process",
		[DF_RANGE_THREADS] = "numaplace_migrate_range, two threads",
		[DF_RANGE_THP] = "numaplace_migrate_range of THPs, two threads",
		[DF_RANGE_REFUSED] = "numaplace_migrate_range, refused nodes",
	};
	int syscall_wins;
	__u64 calls;

	NP_SKIPPED();
	/* What simulate_ibt=1 leaves: no batched flush on 6.12 and later. */
	syscall_wins = !(self->features & batched);
	EXPECT_EQ(np_kernel_is_new(), syscall_wins)
		TH_LOG("features %#llx", (unsigned long long)self->features);
	ASSERT_TRUE(self->features & NUMAPLACE_FEAT_MIGRATE_BATCH);

	for (int how = DF_SELF; how <= DF_RANGE_REFUSED; how++) {
		/* Refused targets: MIGRATE's answer, by MIGRATE. */
		int want_module = how == DF_SELF || how == DF_RANGE_REFUSED ||
				  !syscall_wins;
		int ret = df_run(_metadata, &self->nl, how, &calls);

		if (ret == NP_DF_NO_THP) {
			TH_LOG("%s: no THP here, left out", what[how]);
			continue;
		}
		EXPECT_EQ(0, ret) TH_LOG("%s", what[how]);
		if (want_module) {
			EXPECT_LT(0, calls) TH_LOG("%s: the module was not used",
						  what[how]);
		} else {
			EXPECT_EQ(0, calls) TH_LOG("%s: %llu module calls",
						  what[how],
						  (unsigned long long)calls);
		}
	}
}

NP_HARNESS_MAIN
