// SPDX-License-Identifier: GPL-2.0
/*
 * How NUMAPLACE_IOC_QUERY walks: tiny runs buffers resumed until done
 * give the one answer, no query faults anything in, the whole user
 * address space is answered quickly with totals RSS agrees with, and a
 * fatal signal ends a caller inside big queries promptly.
 */
#include <limits.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "np_test.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

/* A fatal signal must end even a whole-address-space query this fast. */
#define NP_KILL_WAIT_MS	10000

static long psz;

/* Resuming, faulting nothing in, the whole address space. */
NP_QUERY_FIXTURE(qwalk);

/* Runs buffers of 1..3 entries, resumed until done, give one answer. */
TEST_F_TIMEOUT(qwalk, resume_tiny_runs, NP_TIMEOUT(120))
{
	NP_SKIPPED();
	size_t n = 0;
	char *p = np_mixed_region(&n, np_other_node(&self->info, 0));
	__s32 *dflt = calloc(n, sizeof(*dflt));
	int *sys = calloc(n, sizeof(*sys));
	__u64 *addrs = calloc(n, sizeof(*addrs));

	NP_NEED_MODEL();
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_check_range(&self->c, "mixed", (uintptr_t)p, n, dflt));
	np_fill_addrs(addrs, p, n);
	ASSERT_EQ(0, np_sys_query(0, n, addrs, sys));
	for (__u32 cap = 1; cap <= 3; cap++) {
		EXPECT_EQ(0, np_check_resume(&self->c, "mixed", (uintptr_t)p,
					     n, cap, 0, dflt));
		EXPECT_EQ(0, np_check_resume(&self->c, "mixed", (uintptr_t)p,
					     n, cap,
					     NUMAPLACE_QUERY_AS_SYSCALL, sys));
	}
	free(dflt);
	free(sys);
	free(addrs);
}

/* Nothing that was not there is there after any kind of query. */
NP_TEST_F(qwalk, never_faults_in)
{
	NP_SKIPPED();
	const size_t n = 40;
	int mfd = memfd_create("np-nofault", MFD_CLOEXEC), tfd = np_tmpfile(n);
	struct { char *p; size_t n; const char *what; } r[4];
	struct numaplace_run runs[8];
	struct numaplace_query q;
	unsigned char vec[NP_PMD / 4096];
	__u64 *addrs = calloc(NP_PMD / psz, sizeof(*addrs));
	__s32 *st = calloc(NP_PMD / psz, sizeof(*st));
	__u64 np[NUMAPLACE_MAX_NODES];
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	ASSERT_GE(mfd, 0);
	ASSERT_GE(tfd, 0);
	ASSERT_GE(pm, 0);
	ASSERT_EQ(0, ftruncate(mfd, n * psz));
	/* Half of each file is in the page cache, none of it mapped. */
	for (size_t i = 0; i < n / 2; i++) {
		ASSERT_EQ(0, np_pwrite_page(mfd, i));
		ASSERT_EQ(0, np_pwrite_page(tfd, i));
	}
	r[0].p = np_pmd_map(n * psz, 0);
	r[0].n = n;
	r[0].what = "anon";
	r[1].p = np_pmd_map(NP_PMD, 1);
	r[1].n = NP_PMD / psz;
	r[1].what = "thp";
	r[2].p = mmap(NULL, n * psz, PROT_READ, MAP_SHARED, mfd, 0);
	r[2].n = n;
	r[2].what = "memfd";
	r[3].p = mmap(NULL, n * psz, PROT_READ, MAP_PRIVATE, tfd, 0);
	r[3].n = n;
	r[3].what = "tmpfs";
	for (int k = 0; k < 4; k++) {
		ASSERT_TRUE(r[k].p && r[k].p != MAP_FAILED);
		np_fill_addrs(addrs, r[k].p, r[k].n);
		for (__u32 f = 0; f <= NUMAPLACE_QUERY_AS_SYSCALL;
		     f += NUMAPLACE_QUERY_AS_SYSCALL) {
			EXPECT_EQ(0, np_query_range(self->fd, 0, f,
						    (uintptr_t)r[k].p,
						    r[k].n * psz, runs, 8, st,
						    np, self->c.nr_nodes, &q));
			EXPECT_EQ(0, np_query_range(self->fd, 0, f,
						    (uintptr_t)r[k].p,
						    r[k].n * psz, runs, 1, NULL,
						    NULL, 0, &q));
			EXPECT_EQ(0, np_query_array(self->fd, 0, f, addrs,
						    r[k].n, st, np,
						    self->c.nr_nodes, &q));
		}
	}
	for (int k = 0; k < 4; k++) {
		ASSERT_EQ(0, mincore(r[k].p, r[k].n * psz, vec));
		for (size_t i = 0; i < r[k].n; i++) {
			__u64 e = 0;
			int cached = k >= 2 && i < n / 2;

			ASSERT_EQ(8, pread(pm, &e, 8,
					   ((uintptr_t)r[k].p / psz + i) * 8));
			EXPECT_EQ(0, e & (NP_PM_PRESENT | NP_PM_SWAP))
				TH_LOG("%s page %zu was faulted in", r[k].what, i);
			EXPECT_EQ(cached, vec[i] & 1)
				TH_LOG("%s page %zu: mincore %d", r[k].what, i,
				       vec[i]);
		}
	}
	close(pm);
	close(mfd);
	close(tfd);
	free(addrs);
	free(st);
}


/*
 * 6.1 batches a task's RSS updates (TASK_RSS_EVENTS_THRESH, 64 events)
 * before statm sees them; allow twice that.
 */
#define NP_RSS_SLACK	128

/* Statm's resident pages (which skip the zero page and PFN maps). */
static long np_rss_pages(void)
{
	long size, rss;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss;
}

/* Totals for the whole user address space, quickly and consistently. */
TEST_F_TIMEOUT(qwalk, whole_address_space_totals, NP_TIMEOUT(120))
{
	NP_SKIPPED();
	const size_t n = 64;
	char *p = np_pmd_map(n * psz, 0);
	__u64 np[NUMAPLACE_MAX_NODES], sum = 0;
	struct numaplace_query q;
	long before, after;

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < n; i++)
		np_write_page(p, i);
	before = np_rss_pages();
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, 0, NP_USER_TOP, NULL, 0,
				    NULL, np, self->c.nr_nodes, &q));
	after = np_rss_pages();
	EXPECT_EQ(NP_USER_TOP / psz, q.done);
	for (__u32 i = 0; i < self->c.nr_nodes; i++)
		sum += np[i];
	EXPECT_EQ(q.done, sum + q.nr_unplaced);
	EXPECT_GE(sum, n);
	/* Every present normal page counts once, as RSS counts them. */
	EXPECT_GE(sum + NP_RSS_SLACK,
		  (__u64)(before < after ? before : after))
		TH_LOG("sum %llu rss %ld..%ld", (unsigned long long)sum,
		       before, after);
	EXPECT_LE(sum, (__u64)(before > after ? before : after) +
		       NP_RSS_SLACK)
		TH_LOG("sum %llu rss %ld..%ld", (unsigned long long)sum,
		       before, after);
}

static long np_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* SIGKILL ends a caller inside big queries promptly. */
NP_TEST_F(qwalk, sigkill_bounded)
{
	NP_SKIPPED();
	struct timespec t0;
	int status = 0;
	pid_t pid;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		__u64 np[NUMAPLACE_MAX_NODES];
		struct numaplace_query q;

		for (;;)
			np_query_range(self->fd, 0, 0, 0, NP_USER_TOP, NULL, 0,
				       NULL, np, self->c.nr_nodes, &q);
	}
	usleep(300000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	while (waitpid(pid, &status, WNOHANG) == 0 &&
	       np_ms_since(&t0) < NP_KILL_WAIT_MS)
		usleep(10000);
	EXPECT_LT(np_ms_since(&t0), NP_KILL_WAIT_MS);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	if (!WIFSIGNALED(status))
		waitpid(pid, &status, 0);
}

NP_HARNESS_MAIN
