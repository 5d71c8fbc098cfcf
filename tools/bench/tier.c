// SPDX-License-Identifier: GPL-2.0
/*
 * bench/tier (tierbench, make bench-tier): how well does libnumaplace's
 * tiering policy keep a workload's hot pages on the top tier? (issue 32)
 *
 * A child process, the workload, maps NP_MIB MiB (-m) on the slow node,
 * 4 KiB pages or THP (-v), and runs one thread per hot set: each thread
 * reads one word of every page of its own hot set, page after page,
 * without pause. Every -P periods the phase changes and each thread
 * reads another part of the buffer (-n phases). Two cases (-c):
 *  1: a thread on each fast node, 8 MiB hot each (NP_HOT1_MIB);
 *  2: every thread on node 0's CPUs, a neighbour holding node 0 (this
 *     process maps and fills it until NP_FREE2_MIB MiB are free), 96 MiB
 *     hot in all (NP_HOT2_MIB): the hot set must spill to node 1.
 * Methods (each on a fresh workload, the same boot):
 *  - numaplace: a tier context (numaplace_tier_new() with the defaults:
 *    the kernel's tiers, or the memory-only nodes as the slow ones) that
 *    steps once a period;
 *  - oracle: at each phase change, the new hot sets moved where they
 *    belong (each thread's node, case 2 node 0 while it has room);
 *  - none: nothing moves (the floor);
 *  - balancing: the kernel's own, NUMA balancing's memory tiering mode
 *    (kernel.numa_balancing=2 while it runs, 0 again after): its moves
 *    from the nodes' pgpromote_success and pgdemote_* counters, its cost
 *    the hint faults the guest took (in the last column; the kernel's
 *    demotions count only where /sys/kernel/mm/numa/demotion_enabled
 *    is on, off by default and in the project's guests). 6.1 does not
 *    tier a memory-only node, so it promotes nothing there. DAMON's
 *    migrate_hot is not a method: in this emulator no DAMON region
 *    reaches two accesses (its clears are not flushed from QEMU's soft
 *    TLB; kernel-facts.md section 12), so it would measure the emulator.
 * Per method and period: the share of the hot pages on the top tier
 * (the workload's accesses are spread evenly over its hot pages, so this
 * is the share of its accesses that land there), on their thread's node
 * (case 1), and numaplace's classes against the truth: precision and
 * recall of "hot". Per method: the mean share over every period, the
 * periods until 95% of a new hot set was on the top tier, pages moved
 * per page that became useful (a hot page brought onto the top tier),
 * pages moved 3+ times, the spread of promotions over the fast nodes
 * (max/min), and the scan's cost per page next to QUERY's (the access
 * scan of the whole buffer against numaplace_query_runs() of it, best of
 * three, in the same boot), with what a period's step cost a page: its
 * scan's wall time, and the CPU time of a step that moved nothing (the
 * kernel's scan and the library's work, without the workload's slices
 * on a shared vCPU).
 *
 * Placement counts do not depend on the emulator's speed; the scan cost
 * is a time: read it under --accel icount (which has one vCPU: case 1
 * then has every thread on node 0's CPU, and says so).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "numaplace.h"
#include "bench.h"

/* The workload: 256 MiB on the slow node. */
#define NP_MIB			256
#define NP_HOT1_MIB		8
#define NP_HOT2_MIB		96
/* Case 2's neighbour leaves node 0 about this much free (the issue's). */
#define NP_FREE2_MIB		95
#define NP_PERIOD_MS		500
/* 10 s a phase: the hot sets change every 20 to 30 s. */
#define NP_PERIODS		20
#define NP_PHASES		3
/* Threads of the workload at most (one per fast node in case 1). */
#define NP_MAX_THREADS		8
#define NP_GOAL_PCT		95
#define NP_MAX_PERIODS		256
#define NP_ROW_FMT		"%-6s %-4s %-9s "

enum np_method { NP_M_NUMAPLACE, NP_M_ORACLE, NP_M_NONE, NP_M_BALANCING,
		 NP_M_MAX };
static const char *const np_method_names[NP_M_MAX] = {
	"numaplace", "oracle", "none", "balancing",
};

/* Shared with the workload (MAP_SHARED). */
struct np_ctl {
	volatile int phase;
	volatile int stop;
	volatile int ready;
	char *volatile buf;
};

struct np_run {
	int cse, thp;
	size_t psz, pages, hot_pages;	/* hot pages per thread */
	int nr_threads;
	int thread_node[NP_MAX_THREADS];
	int thread_cpu[NP_MAX_THREADS];
	__u64 fast[NUMAPLACE_TIER_NODES / 64], slow[NUMAPLACE_TIER_NODES / 64];
	int slow_node;
	pid_t kid;
	struct np_ctl *ctl;
	char *buf;
	unsigned char *cls;
	/* Results. */
	double share[NP_MAX_PERIODS], local[NP_MAX_PERIODS];
	double prec[NP_MAX_PERIODS], recall[NP_MAX_PERIODS];
	int nr_periods;
	int to95[NP_PHASES * 4];
	__u64 moves, useful;		/* pages moved, by either method */
	struct numaplace_tier_period tot;	/* numaplace's steps, added */
	/*
	 * The CPU time of this thread in the steps that moved nothing (the
	 * kernel's scan and the library's work: a period at steady state),
	 * and the pages they scanned: with one vCPU, a step's wall time
	 * (tot.scan_ns) also holds the workload's reader's slices.
	 */
	__u64 still_cpu_ns, still_pages;
	__u64 hint_faults;		/* balancing: the workload's */
};

/*
 * What the kernel's counters say NUMA balancing did: promotions by the
 * node they went to (node N's vmstat pgpromote_success), demotions
 * (pgdemote_*, every node), and the hint faults it took to decide
 * (/proc/vmstat numa_hint_faults, the whole guest's: the workload is
 * all that runs).
 */
struct np_bal_counts {
	__u64 promoted[NUMAPLACE_TIER_NODES];
	__u64 demoted;
	__u64 hint_faults;
};

static unsigned long opt_mib = NP_MIB, opt_periods = NP_PERIODS,
	opt_phases = NP_PHASES, opt_period_ms = NP_PERIOD_MS;
static const char *opt_variant, *opt_case;

/* Thread @i's hot set in phase @p: its first page. */
static size_t np_hot_first(const struct np_run *r, int p, int i)
{
	size_t slot = (size_t)p * r->nr_threads + i;

	/* 2 MiB aligned: a THP is all hot or all cold. */
	return slot * r->hot_pages % (r->pages - r->hot_pages + 1) / 512 * 512;
}

struct np_reader {
	struct np_run *r;
	int i;
};

static void *np_reader(void *arg)
{
	struct np_reader *rd = arg;
	struct np_run *r = rd->r;
	volatile char sink;
	cpu_set_t set;
	size_t k, first;

	CPU_ZERO(&set);
	CPU_SET(r->thread_cpu[rd->i], &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!r->ctl->stop) {
		first = np_hot_first(r, r->ctl->phase, rd->i);
		for (k = 0; k < r->hot_pages && !r->ctl->stop; k++)
			sink = r->ctl->buf[(first + k) * r->psz];
	}
	(void)sink;
	return NULL;
}

/* The workload: its own buffer on the slow node, a reader per thread. */
static void np_workload(struct np_run *r)
{
	struct np_reader rd[NP_MAX_THREADS];
	pthread_t th[NP_MAX_THREADS];
	unsigned long mask = 1UL << r->slow_node;
	size_t len = r->pages * r->psz, map_len;
	char *map, *buf;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	buf = np_bench_map(len, 2 << 20, r->thp, "tier", &map, &map_len);
	if (!buf)
		_exit(1);
	if (syscall(__NR_mbind, buf, len, MPOL_BIND, &mask, 64, 0))
		_exit(2);
	memset(buf, 1, len);
	/* Placed: the policy no longer binds it (a move may take it away). */
	syscall(__NR_mbind, buf, len, MPOL_DEFAULT, NULL, 0, 0);
	r->ctl->buf = buf;
	for (i = 0; i < r->nr_threads; i++) {
		rd[i] = (struct np_reader){ r, i };
		if (pthread_create(&th[i], NULL, np_reader, &rd[i]))
			_exit(3);
	}
	r->ctl->ready = 1;
	for (i = 0; i < r->nr_threads; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

static int np_start(struct np_run *r)
{
	double t0 = np_bench_now_ms();

	r->ctl = mmap(NULL, sizeof(*r->ctl), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->ctl == MAP_FAILED)
		return -1;
	r->kid = fork();
	if (r->kid < 0)
		return -1;
	if (!r->kid)
		np_workload(r);
	while (!r->ctl->ready) {
		if (np_bench_now_ms() - t0 > 600000 ||
		    waitpid(r->kid, NULL, WNOHANG) == r->kid) {
			printf("tier: the workload did not start\n");
			return -1;
		}
		usleep(10000);
	}
	r->buf = r->ctl->buf;
	return 0;
}

static void np_stop(struct np_run *r)
{
	r->ctl->stop = 1;
	kill(r->kid, SIGKILL);
	waitpid(r->kid, NULL, 0);
	munmap(r->ctl, sizeof(*r->ctl));
}

/* Per node pages of thread @i's hot set now, into @node_pages. */
static int np_hot_nodes(struct np_run *r, int i, __u64 *node_pages)
{
	size_t first = np_hot_first(r, r->ctl->phase, i);

	return numaplace_query_totals(r->kid, r->buf + first * r->psz,
				      r->hot_pages * r->psz, node_pages,
				      NUMAPLACE_TIER_NODES, NULL);
}

/* One period's sample: shares on the top tier and local, and classes. */
static void np_sample(struct np_run *r, struct numaplace_tier *t)
{
	__u64 nodes[NUMAPLACE_TIER_NODES];
	size_t k, first, hot = 0, fast = 0, local = 0;
	size_t tp = 0, said_hot = 0, truth = 0;
	int i, n, p = r->nr_periods;

	for (i = 0; i < r->nr_threads; i++) {
		if (np_hot_nodes(r, i, nodes))
			continue;
		for (n = 0; n < NUMAPLACE_TIER_NODES; n++) {
			hot += nodes[n];
			if (numaplace_node_isset(r->fast, n))
				fast += nodes[n];
			if (n == r->thread_node[i])
				local += nodes[n];
		}
	}
	r->share[p] = hot ? (double)fast / hot : 0;
	r->local[p] = hot ? (double)local / hot : 0;
	r->prec[p] = r->recall[p] = -1;
	if (t && !numaplace_tier_classes(t, r->kid, r->buf, r->pages, r->cls)) {
		for (k = 0; k < r->pages; k++) {
			bool is_hot = false;

			for (i = 0; i < r->nr_threads; i++) {
				first = np_hot_first(r, r->ctl->phase, i);
				is_hot |= k >= first && k < first + r->hot_pages;
			}
			truth += is_hot;
			said_hot += r->cls[k] == NUMAPLACE_TIER_HOT;
			tp += is_hot && r->cls[k] == NUMAPLACE_TIER_HOT;
		}
		r->prec[p] = said_hot ? (double)tp / said_hot : 0;
		r->recall[p] = truth ? (double)tp / truth : 0;
	}
	r->nr_periods++;
}

/* @key ("MemFree:") of node 0's meminfo, in kB; 0 when unread. */
static long np_node0_kb(const char *key)
{
	char line[256], name[64];
	long kb = 0, v;
	FILE *f = fopen("/sys/devices/system/node/node0/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Node 0 %63s %ld", name, &v) == 2 &&
		    !strcmp(name, key))
			kb = v;
	if (f)
		fclose(f);
	return kb;
}

/*
 * The sum of the counters of vmstat file @path named @name, or, with
 * @name ending in '_', of those whose names start with it. 0 unread.
 */
static __u64 np_vmstat(const char *path, const char *name)
{
	size_t len = strlen(name);
	bool prefix = len && name[len - 1] == '_';
	unsigned long long v;
	char line[256], key[128];
	__u64 sum = 0;
	FILE *f = fopen(path, "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %llu", key, &v) != 2)
			continue;
		if (prefix ? !strncmp(key, name, len) : !strcmp(key, name))
			sum += v;
	}
	if (f)
		fclose(f);
	return sum;
}

static void np_bal_read(struct np_bal_counts *c)
{
	char path[96];
	int fd, n;

	/* The per-CPU deltas folded in first: node stats lag without it. */
	fd = open("/proc/sys/vm/stat_refresh", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) < 0)
			perror("tier: /proc/sys/vm/stat_refresh");
		close(fd);
	}
	memset(c, 0, sizeof(*c));
	for (n = 0; n < NUMAPLACE_TIER_NODES; n++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/vmstat", n);
		if (access(path, R_OK))
			continue;
		c->promoted[n] = np_vmstat(path, "pgpromote_success");
		c->demoted += np_vmstat(path, "pgdemote_");
	}
	c->hint_faults = np_vmstat("/proc/vmstat", "numa_hint_faults");
}

/* NUMA balancing's moves and faults between @a and @b, into @r. */
static void np_bal_account(struct np_run *r, const struct np_bal_counts *a,
			   const struct np_bal_counts *b)
{
	int n;

	for (n = 0; n < NUMAPLACE_TIER_NODES; n++) {
		r->tot.nr_promoted[n] = b->promoted[n] - a->promoted[n];
		r->moves += r->tot.nr_promoted[n];
	}
	r->moves += b->demoted - a->demoted;
	r->hint_faults = b->hint_faults - a->hint_faults;
}

/* The oracle: every hot set where it belongs, at once. */
static void np_oracle(struct np_run *r)
{
	struct numaplace_migrate m;
	long room = -1;
	size_t first;
	int i, node;

	/* Node 0 down to its watermark (5%), as the policy's. */
	if (r->cse == 2)
		room = (np_node0_kb("MemFree:") - np_node0_kb("MemTotal:") / 20) *
		       1024 / (long)r->psz;
	for (i = 0; i < r->nr_threads; i++) {
		size_t at = 0, n;

		first = np_hot_first(r, r->ctl->phase, i);
		/* Case 2: node 0 up to its room (2 MiB at a time), then 1. */
		while (at < r->hot_pages) {
			n = r->hot_pages - at;
			node = r->thread_node[i];
			if (r->cse == 2) {
				n = room >= 512 ? 512 : n;
				if (n > r->hot_pages - at)
					n = r->hot_pages - at;
				node = room >= (long)n ? 0 : 1;
				if (!node)
					room -= n;
			}
			memset(&m, 0, sizeof(m));
			if (!numaplace_migrate_range(r->kid,
						     r->buf + (first + at) * r->psz,
						     n * r->psz, node, 0, &m))
				r->moves += m.nr_moved_pages;
			at += n;
		}
	}
}

/* Pages a step moved, promoted or demoted. */
static __u64 np_period_moved(const struct numaplace_tier_period *per)
{
	__u64 n = 0;
	int node;

	for (node = 0; node < NUMAPLACE_TIER_NODES; node++)
		n += per->nr_promoted[node] + per->nr_demoted[node];
	return n;
}

/* This thread's CPU time, user and system. */
static __u64 np_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The scan's cost per page against QUERY's: best of three each. */
static void np_scan_cost(struct np_run *r, double *scan, double *query)
{
	static struct numaplace_run runs[65536];
	size_t nr, done, at;
	uint64_t t0, best_s = UINT64_MAX, best_q = UINT64_MAX, dt;
	int k;

	for (k = 0; k < 3; k++) {
		t0 = np_bench_now_ns();
		for (at = 0; at < r->pages; at += done) {
			if (numaplace_access_runs(r->kid, r->buf + at * r->psz,
						  (r->pages - at) * r->psz,
						  NUMAPLACE_QUERY_CLEAR_ACCESS |
						  NUMAPLACE_QUERY_FLUSH_TLB,
						  runs, NP_ARRAY_SIZE(runs),
						  &nr, &done, NULL) || !done)
				break;
		}
		dt = np_bench_now_ns() - t0;
		best_s = dt < best_s ? dt : best_s;
		t0 = np_bench_now_ns();
		for (at = 0; at < r->pages; at += done) {
			if (numaplace_query_runs(r->kid, r->buf + at * r->psz,
						 (r->pages - at) * r->psz, runs,
						 NP_ARRAY_SIZE(runs), &nr,
						 &done) || !done)
				break;
		}
		dt = np_bench_now_ns() - t0;
		best_q = dt < best_q ? dt : best_q;
	}
	*scan = (double)best_s / r->pages;
	*query = (double)best_q / r->pages;
}

/* One method on a fresh workload: every phase, every period. */
static int np_method(struct np_run *r, enum np_method meth)
{
	struct numaplace_tier_params p;
	struct numaplace_tier_period per;
	struct numaplace_tier *t = NULL;
	struct np_bal_counts bal0, bal1;
	__u64 nodes[NUMAPLACE_TIER_NODES];
	double start_fast;
	__u64 cpu0, moved;
	int ph, k, i, n, ret;

	if (np_start(r))
		return -1;
	if (meth == NP_M_NUMAPLACE) {
		numaplace_tier_params_init(&p);
		ret = numaplace_tier_new(&p, &t);
		if (!ret)
			ret = numaplace_tier_add(t, r->kid);
		if (ret) {
			printf("tier: numaplace_tier: %s\n", strerror(-ret));
			np_stop(r);
			numaplace_tier_free(t);
			return -1;
		}
	}
	/* The kernel's own tiering, from the placed workload on. */
	if (meth == NP_M_BALANCING) {
		ret = np_bench_balancing_set("2");
		if (ret) {
			printf("tier: kernel.numa_balancing=2: %s\n",
			       strerror(-ret));
			np_stop(r);
			return -1;
		}
		np_bal_read(&bal0);
	}
	for (ph = 0; ph < (int)opt_phases; ph++) {
		r->ctl->phase = ph;
		start_fast = 0;
		for (i = 0; i < r->nr_threads; i++) {
			if (np_hot_nodes(r, i, nodes))
				continue;
			for (n = 0; n < NUMAPLACE_TIER_NODES; n++)
				if (numaplace_node_isset(r->fast, n))
					start_fast += nodes[n];
		}
		if (meth == NP_M_ORACLE)
			np_oracle(r);
		r->to95[ph] = -1;
		for (k = 1; k <= (int)opt_periods; k++) {
			usleep(opt_period_ms * 1000);
			cpu0 = np_thread_cpu_ns();
			ret = t ? numaplace_tier_step(t, &per) : -1;
			cpu0 = np_thread_cpu_ns() - cpu0;
			if (t && ret)
				printf("tier: step: %s\n", strerror(-ret));
			if (!ret) {
				moved = np_period_moved(&per);
				numaplace_tier_period_add(&r->tot, &per);
				r->moves += moved;
				/* Nothing moved nor tried: a still step. */
				if (!moved && !per.nr_failed) {
					r->still_cpu_ns += cpu0;
					r->still_pages += per.nr_scanned;
				}
			}
			if (r->nr_periods < NP_MAX_PERIODS)
				np_sample(r, t);
			if (r->to95[ph] < 0 &&
			    r->share[r->nr_periods - 1] * 100 >= NP_GOAL_PCT)
				r->to95[ph] = k;
		}
		r->useful += r->share[r->nr_periods - 1] *
			     r->hot_pages * r->nr_threads > start_fast ?
			     (__u64)(r->share[r->nr_periods - 1] *
				     r->hot_pages * r->nr_threads - start_fast) : 0;
	}
	if (meth == NP_M_BALANCING) {
		np_bal_read(&bal1);
		np_bal_account(r, &bal0, &bal1);
		/* Left on, it would move pages under every later method. */
		ret = np_bench_balancing_set("0");
		if (ret) {
			printf("tier: kernel.numa_balancing=0 again: %s\n",
			       strerror(-ret));
			return -2;
		}
	}
	numaplace_tier_free(t);
	return 0;
}

static void np_print(struct np_run *r, enum np_method meth, double scan,
		     double query)
{
	double share = 0, local = 0, prec = 0, recall = 0;
	__u64 lo = ~0ULL, hi = 0;
	int k, n, nr_pr = 0;
	char to95[64] = "", spread[32] = "-", cost[64] = "-", moved3[16] = "-";

	for (k = 0; k < r->nr_periods; k++) {
		share += r->share[k];
		local += r->local[k];
		/* Steady state: the last period of each phase. */
		if (r->prec[k] >= 0 && (k + 1) % (int)opt_periods == 0) {
			prec += r->prec[k];
			recall += r->recall[k];
			nr_pr++;
		}
	}
	for (k = 0; k < (int)opt_phases; k++)
		snprintf(to95 + strlen(to95), sizeof(to95) - strlen(to95),
			 "%s%s%d", k ? "," : "", r->to95[k] < 0 ? ">" : "",
			 r->to95[k] < 0 ? (int)opt_periods : r->to95[k]);
	for (n = 0; n < NUMAPLACE_TIER_NODES; n++) {
		if (!numaplace_node_isset(r->fast, n))
			continue;
		lo = r->tot.nr_promoted[n] < lo ? r->tot.nr_promoted[n] : lo;
		hi = r->tot.nr_promoted[n] > hi ? r->tot.nr_promoted[n] : hi;
	}
	if ((meth == NP_M_NUMAPLACE || meth == NP_M_BALANCING) && hi)
		snprintf(spread, sizeof(spread), lo ? "%.2f" : "inf",
			 lo ? (double)hi / lo : 0);
	if (meth == NP_M_BALANCING)
		snprintf(cost, sizeof(cost), "%llu hint faults",
			 (unsigned long long)r->hint_faults);
	if (meth == NP_M_NUMAPLACE && r->tot.nr_scanned)
		snprintf(cost, sizeof(cost),
			 "%.0f (%.0f in a period, %.0f CPU) / %.0f", scan,
			 (double)r->tot.scan_ns / r->tot.nr_scanned,
			 r->still_pages ?
			 (double)r->still_cpu_ns / r->still_pages : 0, query);
	printf(NP_ROW_FMT, r->cse == 1 ? "case1" : "case2",
	       r->thp ? "thp" : "4k", np_method_names[meth]);
	printf("%6.1f%% %6.1f%% ", 100 * share / r->nr_periods,
	       100 * local / r->nr_periods);
	if (nr_pr)
		printf("%6.1f%% %6.1f%% ", 100 * prec / nr_pr,
		       100 * recall / nr_pr);
	else
		printf("%7s %7s ", "-", "-");
	if (meth == NP_M_NUMAPLACE)
		snprintf(moved3, sizeof(moved3), "%.3f%%",
			 100.0 * r->tot.nr_moved_3 / r->pages);
	printf("%-11s %6.2f %7s %6s %s\n", to95,
	       r->useful ? (double)r->moves / r->useful : 0, moved3, spread,
	       cost);
}

/* Case 2's neighbour: node 0 filled until NP_FREE2_MIB MiB are free. */
static char *np_neighbour(size_t *len)
{
	long long free_kb = np_node0_kb("MemFree:");
	unsigned long mask = 1;
	char *p;

	if (free_kb < (NP_FREE2_MIB + 16) * 1024LL)
		return NULL;
	*len = (free_kb - NP_FREE2_MIB * 1024LL) * 1024;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (syscall(__NR_mbind, p, *len, MPOL_BIND, &mask, 64, 0)) {
		munmap(p, *len);
		return NULL;
	}
	memset(p, 1, *len);
	return p;
}

/* The threads of case @cse: a CPU and node each. */
static int np_threads(struct np_run *r)
{
	cpu_set_t set;
	int cpu, n, node;

	r->nr_threads = 0;
	sched_getaffinity(0, sizeof(set), &set);
	for (n = 0; n < NUMAPLACE_TIER_NODES; n++) {
		if (!numaplace_node_isset(r->fast, n))
			continue;
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			char path[96];

			if (!CPU_ISSET(cpu, &set))
				continue;
			snprintf(path, sizeof(path),
				 "/sys/devices/system/node/node%d/cpu%d", n, cpu);
			if (access(path, F_OK))
				continue;
			node = r->cse == 2 ? 0 : n;
			if (r->cse == 2 && n != 0)
				break;
			r->thread_cpu[r->nr_threads] = cpu;
			r->thread_node[r->nr_threads++] = node;
			break;
		}
	}
	if (r->cse == 2 && r->nr_threads == 1) {
		/* Two threads on node 0's CPU. */
		r->thread_cpu[1] = r->thread_cpu[0];
		r->thread_node[r->nr_threads++] = 0;
	}
	if (!r->nr_threads)
		return -1;
	r->hot_pages = (r->cse == 1 ? (size_t)NP_HOT1_MIB << 20 :
			((size_t)NP_HOT2_MIB << 20) / r->nr_threads) / r->psz;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct np_bench_opt opts[] = {
		{ 'm', .num = &opt_mib }, { 'P', .num = &opt_periods },
		{ 'n', .num = &opt_phases }, { 'i', .num = &opt_period_ms },
		{ 'v', .str = &opt_variant }, { 'c', .str = &opt_case },
	};
	struct numaplace_tier_params p;
	struct numaplace_tier *t;
	char bal[32];
	double scan = 0, query = 0;
	int cse, thp, meth, ret, rc = 0;

	ret = np_bench_getopt(argc, argv, opts, NP_ARRAY_SIZE(opts),
			      "usage: tier [-m MIB] [-P PERIODS] [-n PHASES] [-i MS] [-v 4k|thp] [-c 1|2]\n");
	if (ret)
		return ret;
	if (opt_periods * opt_phases > NP_MAX_PERIODS ||
	    opt_phases > NP_PHASES * 4 || !opt_periods || !opt_phases) {
		fprintf(stderr, "tier: at most %d periods in all\n",
			NP_MAX_PERIODS);
		return 2;
	}
	numaplace_tier_params_init(&p);
	ret = numaplace_tier_new(&p, &t);
	if (ret) {
		printf("tier: no tier context (%s): needs the module, the access scan and two tiers\n",
		       strerror(-ret));
		return 1;
	}
	np_bench_balancing_say(bal, sizeof(bal));
	for (cse = 1; cse <= 2; cse++) {
		if (opt_case && atoi(opt_case) != cse)
			continue;
		for (thp = 0; thp <= 1; thp++) {
			struct np_run r = { .cse = cse, .thp = thp };
			char *hog = NULL;
			size_t hog_len = 0;
			int n;

			if (opt_variant && strcmp(opt_variant, thp ? "thp" : "4k"))
				continue;
			r.psz = sysconf(_SC_PAGESIZE);
			r.pages = (opt_mib << 20) / r.psz;
			numaplace_tier_nodes(t, r.fast, r.slow);
			for (n = NUMAPLACE_TIER_NODES - 1; n >= 0; n--)
				if (numaplace_node_isset(r.slow, n))
					r.slow_node = n;
			r.cls = calloc(r.pages, 1);
			if (!r.cls || np_threads(&r)) {
				printf("tier: no memory, or no CPU for the workload\n");
				free(r.cls);
				rc = 1;
				continue;
			}
			printf("\n%s, %s: %d threads (nodes", cse == 1 ?
			       "case 1: a thread per fast node" :
			       "case 2: every thread on node 0, node 0 held",
			       thp ? "THP" : "4 KiB", r.nr_threads);
			for (n = 0; n < r.nr_threads; n++)
				printf(" %d", r.thread_node[n]);
			printf("), %zu MiB hot each, %lu MiB on node %d, %lu phases of %lu periods of %lu ms\n",
			       r.hot_pages * r.psz >> 20, opt_mib, r.slow_node,
			       opt_phases, opt_periods, opt_period_ms);
			if (cse == 2) {
				hog = np_neighbour(&hog_len);
				if (!hog) {
					printf("case 2: node 0 has too little free memory for the neighbour\n");
					free(r.cls);
					continue;
				}
			}
			printf(NP_ROW_FMT, "case", "page", "method");
			printf("%7s %7s %7s %7s %-11s %6s %7s %6s %s\n",
			       "top", "local", "prec", "recall", "to95",
			       "mv/use", "3+mv", "spread",
			       "scan ns/page (in a period, still step CPU) / query ns/page; balancing: hint faults");
			for (meth = 0; meth < NP_M_MAX; meth++) {
				struct np_run one = r;

				one.cls = r.cls;
				ret = np_method(&one, meth);
				if (ret == -2) {
					np_stop(&one);
					numaplace_tier_free(t);
					return 1;
				}
				if (ret) {
					rc = 1;
					continue;
				}
				if (meth == NP_M_NUMAPLACE)
					np_scan_cost(&one, &scan, &query);
				np_stop(&one);
				np_print(&one, meth, scan, query);
			}
			if (hog)
				munmap(hog, hog_len);
			free(r.cls);
		}
	}
	numaplace_tier_free(t);
	np_bench_balancing_restore(bal);
	return rc;
}
