// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace tier: keep the hot pages of some processes on the fast nodes
 * and their cold pages on the slow ones, a period at a time, with
 * libnumaplace's tier context (numaplace.h, "tiering"):
 *
 *   numaplace tier (-p PID | --cgroup PATH)... [--fast LIST] [--slow LIST]
 *                  [--interval DUR] [--count N] [policy] [--json]
 *                  [--prometheus FILE]
 *
 * The options are in tier_opts.c. A period reads the cgroups again
 * (tier_targets.c), steps the context (scan the access bits, move what
 * the policy says) and prints a line (tier_print.c, flushed: a pipe or
 * journald sees it at once). Periods start on a CLOCK_MONOTONIC
 * schedule; after one that overran, the next starts at once and the
 * schedule goes on from there (no backlog). SIGINT and SIGTERM end the
 * sleep, or the run after the step under way.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "tier.h"

/*
 * The longest single sleep: a signal that lands between the check of
 * np_stop and clock_nanosleep() is seen within a second, not a period.
 */
#define NP_TIER_WAKE_NS		NP_NS_PER_S

/* The exit code of a failure of the library: -ENODEV is the module's. */
static int np_tier_exit(int err)
{
	return err == -ENODEV ? NP_EXIT_NODEV : np_exit_of(err);
}

/*
 * NUMA balancing makes PROT_NONE hinting entries, which the scan sees as
 * not young, and moves pages itself (mode 2 promotes too): say so.
 */
static void np_tier_warn_balancing(void)
{
	char mode[16] = "";
	FILE *f = fopen("/proc/sys/kernel/numa_balancing", "re");

	if (!f)
		return;
	if (fgets(mode, sizeof(mode), f) && atoi(mode))
		fprintf(stderr, "numaplace tier: NUMA balancing is on (kernel.numa_balancing=%d): its hinting faults hide accesses from the scan and it moves pages too\n",
			atoi(mode));
	fclose(f);
}

/* The context, its nodes said. NP_EXIT_OK or an exit code (said). */
static int np_tier_open(struct np_tier_cmd *c, struct numaplace_tier **t)
{
	char fast[NP_TIER_LIST], slow[NP_TIER_LIST];
	int ret = numaplace_tier_new(&c->params, t);

	switch (ret) {
	case 0:
		break;
	case -ENOENT:
		fprintf(stderr, "numaplace tier: no memory tiers on this kernel: give --fast and --slow\n");
		return NP_EXIT_USAGE;
	case -EINVAL:
		fprintf(stderr, "numaplace tier: the parameters are refused: the fast and the slow nodes must be apart, not empty, and have memory\n");
		return NP_EXIT_USAGE;
	default:
		fprintf(stderr, "numaplace tier: %s\n", strerror(-ret));
		return np_tier_exit(ret);
	}
	numaplace_tier_nodes(*t, c->out.fast, c->out.slow);
	fprintf(stderr, "numaplace tier: fast nodes %s, slow nodes %s%s\n",
		np_tier_node_list(c->out.fast, fast, sizeof(fast)),
		np_tier_node_list(c->out.slow, slow, sizeof(slow)),
		c->params.flags & NUMAPLACE_TIER_DRY_RUN ? " (dry run)" : "");
	return NP_EXIT_OK;
}

static void np_ts_add(struct timespec *ts, __u64 ns)
{
	ns += ts->tv_nsec;
	ts->tv_sec += ns / NP_NS_PER_S;
	ts->tv_nsec = ns % NP_NS_PER_S;
}

static int np_ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/*
 * Until the next period's start, @next (moved on by @interval_ns); when
 * that is past, the next period starts now and @next with it. 0, or
 * -EINTR when a signal asked to stop.
 */
static int np_tier_sleep(struct timespec *next, __u64 interval_ns)
{
	struct timespec now, wake;

	np_ts_add(next, interval_ns);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!np_ts_before(&now, next))
		*next = now;
	/* No SA_RESTART: a signal ends clock_nanosleep() with EINTR. */
	while (!np_stop && np_ts_before(&now, next)) {
		wake = now;
		np_ts_add(&wake, NP_TIER_WAKE_NS);
		if (np_ts_before(next, &wake))
			wake = *next;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	}
	return np_stop ? -EINTR : 0;
}

/* The periods, until a signal, --count or nothing left to track. */
static int np_tier_loop(struct np_tier_cmd *c, struct numaplace_tier *t)
{
	struct numaplace_tier_period p;
	struct timespec next;
	unsigned long nr;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (nr = 1;; nr++) {
		/* The first period's members were read at the start. */
		ret = nr > 1 ? np_tier_targets_update(t, &c->tg) : NP_EXIT_OK;
		if (ret)
			return ret;
		ret = numaplace_tier_step(t, &p);
		if (ret == -EINTR && np_stop)
			break;
		if (ret) {
			fprintf(stderr, "numaplace tier: %s\n",
				ret == -ENODEV ? "the module is gone" :
				strerror(-ret));
			return np_tier_exit(ret);
		}
		np_tier_count(&c->out, &p);
		np_tier_print(&c->out, nr, &p);
		/* A failure is said; the tiering goes on without the file. */
		np_tier_prom_write(&c->out);
		if (np_stop)
			break;
		if (np_tier_targets_done(&c->tg, p.nr_targets)) {
			fprintf(stderr, "numaplace tier: every target exited\n");
			return NP_EXIT_OK;
		}
		if (c->count && nr >= c->count)
			return NP_EXIT_OK;
		if (np_tier_sleep(&next, c->interval_ns))
			break;
	}
	fprintf(stderr, "numaplace tier: stopped (signal)\n");
	return NP_EXIT_OK;
}

int np_cmd_tier(int argc, char **argv)
{
	struct np_tier_cmd c = { 0 };
	struct numaplace_info info;
	struct numaplace_tier *t;
	int ret;

	ret = np_tier_parse(&c, argc, argv);
	if (ret)
		goto free_targets;
	ret = np_handshake("numaplace tier", &info,
			   1ULL << NUMAPLACE_CMD_QUERY, NUMAPLACE_FEAT_ACCESS,
			   "scan access bits");
	if (ret)
		goto free_targets;
	if (!(info.features & NUMAPLACE_FEAT_ACCESS_FLUSH) &&
	    !(c.params.flags & NUMAPLACE_TIER_NO_FLUSH))
		fprintf(stderr, "numaplace tier: no TLB flush after a clear on this kernel: a page in use may look cold\n");
	np_tier_warn_balancing();
	ret = np_tier_open(&c, &t);
	if (ret)
		goto free_targets;
	ret = np_tier_targets_start(t, &c.tg);
	if (ret)
		goto free_tier;
	/*
	 * The file from the start; a failure is said (and again when it is
	 * written at last), and the tiering goes on without it: a host
	 * without node_exporter's directory still tiers.
	 */
	np_tier_prom_write(&c.out);
	/* A reader of the lines that goes away ends nothing but the lines. */
	signal(SIGPIPE, SIG_IGN);
	/* No SA_RESTART: a signal ends the sleep at once. */
	np_stop_on_signals();
	ret = np_tier_loop(&c, t);
free_tier:
	numaplace_tier_free(t);
free_targets:
	np_tier_targets_free(&c.tg);
	return ret == NP_OPT_HELP ? NP_EXIT_OK : ret;
}
