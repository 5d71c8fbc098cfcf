// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace tier: its options (a declarative table, cli.h) into the
 * command (tier.h), with the limits of each.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tier.h"

/*
 * The shortest period: a scan of a large process takes milliseconds, and
 * young bits cleared more often than that tell hot from cold no better.
 */
#define NP_TIER_INTERVAL_MIN_NS	(10 * NP_NS_PER_MS)
/*
 * The longest: a history of a few scans would span hours, and a page hot
 * then is not what the process needs on the fast node now.
 */
#define NP_TIER_INTERVAL_MAX_NS	(3600 * NP_NS_PER_S)
/* The default: hot in 2 of 4 scans is then 2 to 4 seconds of use. */
#define NP_TIER_INTERVAL_NS	NP_NS_PER_S

enum {
	NP_OPT_CGROUP = NP_OPT_CMD, NP_OPT_FAST, NP_OPT_SLOW, NP_OPT_INTERVAL,
	NP_OPT_COUNT, NP_OPT_HISTORY, NP_OPT_HOT, NP_OPT_COLD, NP_OPT_HOLD,
	NP_OPT_SPREAD, NP_OPT_WATERMARK, NP_OPT_RATE, NP_OPT_NO_FLUSH,
	NP_OPT_DRY_RUN, NP_OPT_PROM,
};

static const struct np_opt np_tier_opts[] = {
	NP_OPT_PID("a process to track (again for more)"),
	NP_OPT_ARG("cgroup", NP_OPT_CGROUP, "PATH",
		   "the processes of a cgroup v2 directory, read again\n"
		   "every period; ends when it is gone"),
	NP_OPT_ARG("fast", NP_OPT_FAST, "LIST",
		   "the fast nodes (0,1 or 0-3); default: the kernel's\n"
		   "top memory tier"),
	NP_OPT_ARG("slow", NP_OPT_SLOW, "LIST",
		   "the slow nodes; default: the tiers below"),
	NP_OPT_ARG("interval", NP_OPT_INTERVAL, "DUR",
		   "a period: 500ms, 1.5s, 2 (seconds), 5m or 1h;\n"
		   "10ms to 1h, default 1s"),
	NP_OPT_ARG("count", NP_OPT_COUNT, "N",
		   "stop after N periods (0, the default: never)"),
	NP_OPT_ARG("history", NP_OPT_HISTORY, "N",
		   "scans a page remembers, 1 to 9 (default 4)"),
	NP_OPT_ARG("hot", NP_OPT_HOT, "K",
		   "hot: young in K of them (default 2)"),
	NP_OPT_ARG("cold", NP_OPT_COLD, "M",
		   "cold: not young for M scans, 1 to 7 (default 4)"),
	NP_OPT_ARG("hold", NP_OPT_HOLD, "H",
		   "a page moved stays H scans, 0 to 7 (default 4)"),
	NP_OPT_ARG("spread", NP_OPT_SPREAD, "HOW",
		   "promotions: local (the threads' nodes first),\n"
		   "round-robin or free (by room); default local"),
	NP_OPT_ARG("watermark", NP_OPT_WATERMARK, "PCT",
		   "demote while a fast node's free memory is under\n"
		   "PCT% of it, 0 to 50 (default 5)"),
	NP_OPT_ARG("rate", NP_OPT_RATE, "MBPS",
		   "move at most MBPS MiB/s (0, the default: no limit)"),
	NP_OPT_FLAG("no-flush", NP_OPT_NO_FLUSH,
		    "no TLB flush after clearing the access bits"),
	NP_OPT_FLAG("dry-run", NP_OPT_DRY_RUN,
		    "decide and count, move nothing"),
	NP_OPT_FLAG("json", NP_OPT_JSON, "one JSON object per line"),
	NP_OPT_ARG("prometheus", NP_OPT_PROM, "FILE",
		   "after each period, write the totals for\n"
		   "node_exporter's textfile collector into FILE"),
};

static const struct np_cmd_desc np_tier_desc = {
	.name = "tier",
	.synopsis = "(-p PID | --cgroup PATH)... [--fast LIST] [--slow LIST]\n"
		    "                      [--interval DUR] [--count N] [--history N] [--hot K]\n"
		    "                      [--cold M] [--hold H] [--spread HOW] [--watermark PCT]\n"
		    "                      [--rate MBPS] [--no-flush] [--dry-run] [--json]\n"
		    "                      [--prometheus FILE]",
	.about = "Each period, scan the processes' access bits, promote the hot pages\n"
		 "of the slow nodes to the fast ones and, when a fast node is short\n"
		 "of free memory, demote its cold pages; print a line of what was\n"
		 "done. Ends on SIGINT/SIGTERM, after N periods, or when every\n"
		 "process has exited and every cgroup is gone.",
	NP_CMD_OPTS(np_tier_opts),
	.exits = NP_EXITS_PROC,
};

static const char *const np_tier_spreads[] = {
	[NUMAPLACE_TIER_SPREAD_LOCAL] = "local",
	[NUMAPLACE_TIER_SPREAD_ROUND_ROBIN] = "round-robin",
	[NUMAPLACE_TIER_SPREAD_FREE] = "free",
};

/* The units of --interval, in nanoseconds; a bare number is seconds. */
static const struct {
	const char *suffix;
	__u64 ns;
} np_tier_units[] = {
	{ "ms", NP_NS_PER_MS }, { "s", NP_NS_PER_S }, { "", NP_NS_PER_S },
	{ "m", 60 * NP_NS_PER_S }, { "h", 3600 * NP_NS_PER_S },
};

/* "500ms", "1.5s", "2" (seconds) or "1h" into nanoseconds, within limits. */
static int np_parse_interval(const char *s, __u64 *ns)
{
	size_t i, digits = strspn(s, "0123456789.");
	char *end;
	double v;

	if (!digits)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end != s + digits)	/* not "1e3", "0x10" */
		return -EINVAL;
	for (i = 0; i < NP_ARRAY_SIZE(np_tier_units); i++)
		if (!strcmp(end, np_tier_units[i].suffix))
			break;
	if (i == NP_ARRAY_SIZE(np_tier_units))
		return -EINVAL;
	v *= np_tier_units[i].ns;
	if (!(v >= NP_TIER_INTERVAL_MIN_NS && v <= NP_TIER_INTERVAL_MAX_NS))
		return -ERANGE;
	*ns = v + 0.5;
	return 0;
}

/* A policy number @what in [@min, @max] into *@val. */
static int np_tier_uint(const char *what, const char *arg, unsigned int min,
			unsigned int max, unsigned int *val)
{
	unsigned long v;

	if (np_parse_whole_uint(arg, max, &v) || v < min) {
		fprintf(stderr, "numaplace tier: bad %s '%s': want %u to %u\n",
			what, arg, min, max);
		return NP_EXIT_USAGE;
	}
	*val = v;
	return NP_EXIT_OK;
}

static int np_tier_spread(const char *arg, unsigned int *spread)
{
	unsigned int i;

	for (i = 0; i < NP_ARRAY_SIZE(np_tier_spreads); i++) {
		if (!strcmp(arg, np_tier_spreads[i])) {
			*spread = i;
			return NP_EXIT_OK;
		}
	}
	fprintf(stderr, "numaplace tier: bad spread '%s': want local, round-robin or free\n",
		arg);
	return NP_EXIT_USAGE;
}

static int np_tier_nodes_opt(const char *arg, __u64 *mask)
{
	if (!np_parse_node_list(arg, NUMAPLACE_TIER_NODES, mask))
		return NP_EXIT_OK;
	fprintf(stderr, "numaplace tier: bad node list '%s': want N,M,... or N-M (below %d)\n",
		arg, NUMAPLACE_TIER_NODES);
	return NP_EXIT_USAGE;
}

static int np_tier_opt(void *data, int opt, const char *arg)
{
	const struct np_cmd_desc *d = &np_tier_desc;
	struct np_tier_cmd *c = data;
	struct numaplace_tier_params *p = &c->params;
	unsigned int rate;
	int ret, pid;

	switch (opt) {
	case 'p':
		ret = np_opt_pid(d, arg, &pid);
		if (!ret && np_pids_add(&c->tg.given, pid))
			return np_tier_oom();
		return ret;
	case NP_OPT_CGROUP:
		return np_tier_targets_cgroup(&c->tg, arg) ? np_tier_oom() :
		       NP_EXIT_OK;
	case NP_OPT_FAST:
		return np_tier_nodes_opt(arg, p->fast_nodes);
	case NP_OPT_SLOW:
		return np_tier_nodes_opt(arg, p->slow_nodes);
	case NP_OPT_INTERVAL:
		if (!np_parse_interval(arg, &c->interval_ns))
			return NP_EXIT_OK;
		fprintf(stderr, "numaplace tier: bad interval '%s': want 10ms to 1h (500ms, 1.5s, 2 for seconds, 5m)\n",
			arg);
		return NP_EXIT_USAGE;
	case NP_OPT_COUNT:
		if (np_parse_whole_uint(arg, ULONG_MAX, &c->count))
			return np_bad_arg(d, "count", arg);
		return NP_EXIT_OK;
	case NP_OPT_HISTORY:
		return np_tier_uint("history", arg, 1,
				    NUMAPLACE_TIER_MAX_HISTORY, &p->history);
	case NP_OPT_HOT:
		return np_tier_uint("hot", arg, 1, NUMAPLACE_TIER_MAX_HISTORY,
				    &p->hot_scans);
	case NP_OPT_COLD:
		return np_tier_uint("cold", arg, 1, NUMAPLACE_TIER_MAX_AGE,
				    &p->cold_scans);
	case NP_OPT_HOLD:
		return np_tier_uint("hold", arg, 0, NUMAPLACE_TIER_MAX_AGE,
				    &p->hold_scans);
	case NP_OPT_SPREAD:
		return np_tier_spread(arg, &p->spread);
	case NP_OPT_WATERMARK:
		return np_tier_uint("watermark", arg, 0, NUMAPLACE_TIER_MAX_WATERMARK,
				    &p->demote_free_pct);
	case NP_OPT_RATE:
		ret = np_tier_uint("rate", arg, 0, NUMAPLACE_TIER_MAX_RATE, &rate);
		if (!ret)
			p->rate_mb_s = rate;
		return ret;
	case NP_OPT_NO_FLUSH:
		p->flags |= NUMAPLACE_TIER_NO_FLUSH;
		return NP_EXIT_OK;
	case NP_OPT_DRY_RUN:
		p->flags |= NUMAPLACE_TIER_DRY_RUN;
		return NP_EXIT_OK;
	case NP_OPT_JSON:
		c->out.json = 1;
		return NP_EXIT_OK;
	case NP_OPT_PROM:
		if (!np_tier_prom_init(&c->out, arg))
			return NP_EXIT_OK;
		return np_bad_arg(d, "Prometheus file", arg);
	}
	return NP_EXIT_OK;
}

int np_tier_parse(struct np_tier_cmd *c, int argc, char **argv)
{
	const struct np_cmd_desc *d = &np_tier_desc;
	const struct numaplace_tier_params *p = &c->params;
	unsigned int w;
	int ret;

	numaplace_tier_params_init(&c->params);
	c->interval_ns = NP_TIER_INTERVAL_NS;
	ret = np_parse_opts_only(d, argc, argv, np_tier_opt, c);
	if (ret)
		return ret;
	if (!c->tg.given.nr && !c->tg.nr_cgroups)
		return np_usage_error(d, "give the processes: -p PID or --cgroup PATH");
	if (p->hot_scans > p->history) {
		fprintf(stderr, "numaplace tier: --hot %u is more than --history %u\n",
			p->hot_scans, p->history);
		return NP_EXIT_USAGE;
	}
	for (w = 0; w < NP_ARRAY_SIZE(p->fast_nodes); w++) {
		if (p->fast_nodes[w] & p->slow_nodes[w]) {
			fprintf(stderr, "numaplace tier: a node cannot be both fast and slow\n");
			return NP_EXIT_USAGE;
		}
	}
	return NP_EXIT_OK;
}

