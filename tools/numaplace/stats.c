// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace stats: the module's counters (stats_nl.c), as text, JSON or
 * the Prometheus text exposition format (stats_print.c), once or every
 * few seconds with rates.
 *
 *   numaplace stats [--json | --prometheus] [--watch [SECONDS]]
 *
 * --prometheus writes what node_exporter's textfile collector reads: write
 * it to a temporary file and rename it into the collector's directory, so
 * a scrape never sees half a file.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "stats.h"

/* Longest and shortest --watch interval, seconds. */
#define NP_WATCH_MAX_S		86400.0
#define NP_WATCH_MIN_S		0.01

struct np_stats_cmd {
	enum np_fmt format;
	int watch;
	double interval;			/* seconds */
	int tty;				/* stdout is a terminal */
	int argc;				/* the command line */
	char **argv;
};

enum { NP_OPT_PROM = NP_OPT_CMD };

static const struct np_opt np_stats_opts[] = {
	NP_OPT_FLAG("json", NP_OPT_JSON, "one JSON object per line"),
	NP_OPT_FLAG("prometheus", NP_OPT_PROM,
		    "the text exposition format, for node_exporter's\n"
		    "textfile collector (write a temporary file, then\n"
		    "rename it into the collector's directory)"),
	{ "watch", 'w', optional_argument, 'w', "SECONDS",
	  "redraw every SECONDS (default 1) with rates per\n"
	  "second, until interrupted; with --json a line per\n"
	  "sample" },
};

static const struct np_cmd_desc np_stats_desc = {
	.name = "stats",
	.synopsis = "[--json | --prometheus] [--watch [SECONDS]]",
	NP_CMD_OPTS(np_stats_opts),
	.exits = NP_EXITS_BASE,
};

/* "2", "0.5": seconds in [NP_WATCH_MIN_S, NP_WATCH_MAX_S]. */
static int np_parse_seconds(const char *s, double *val)
{
	char *end;
	double v;

	if (!(*s >= '0' && *s <= '9') && *s != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= NP_WATCH_MIN_S && v <= NP_WATCH_MAX_S))
		return -ERANGE;
	*val = v;
	return 0;
}

static int np_stats_opt(void *data, int opt, const char *arg)
{
	const struct np_cmd_desc *d = &np_stats_desc;
	struct np_stats_cmd *c = data;

	switch (opt) {
	case NP_OPT_JSON:
	case NP_OPT_PROM:
		if (c->format != NP_FMT_TEXT)
			return np_usage_error(d, "--json and --prometheus exclude each other");
		c->format = opt == NP_OPT_JSON ? NP_FMT_JSON : NP_FMT_PROM;
		break;
	case 'w':
		c->watch = 1;
		/* The optional SECONDS: "--watch=2", "-w2" or "--watch 2". */
		if (!arg && optind < c->argc && c->argv[optind][0] != '-')
			arg = c->argv[optind++];
		if (arg && np_parse_seconds(arg, &c->interval))
			return np_usage_error(d, "--watch takes seconds, %g to %g",
					      NP_WATCH_MIN_S, NP_WATCH_MAX_S);
		break;
	}
	return NP_EXIT_OK;
}

/* NP_EXIT_OK, NP_EXIT_USAGE, or NP_OPT_HELP after --help. */
static int np_stats_parse(struct np_stats_cmd *c, int argc, char **argv)
{
	const struct np_cmd_desc *d = &np_stats_desc;
	int ret;

	c->interval = 1;
	c->argc = argc;
	c->argv = argv;
	ret = np_parse_opts_only(d, argc, argv, np_stats_opt, c);
	if (ret)
		return ret;
	if (c->watch && c->format == NP_FMT_PROM)
		return np_usage_error(d, "--prometheus is one snapshot (the scraper computes rates): run it from a timer instead of --watch");
	return NP_EXIT_OK;
}

static void np_stats_print(const struct np_stats_cmd *c, const struct np_st *st,
			   const struct np_st *prev)
{
	char when[32];
	time_t t;

	if (c->format == NP_FMT_TEXT && c->watch) {
		t = (time_t)st->wall;
		strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
		/* A terminal is redrawn in place; a pipe gets each sample. */
		printf(c->tty ? "\033[H\033[J" : "\n");
		printf("numaplace stats, every %gs: %s\n\n", c->interval, when);
	}
	np_st_print(c->format, st, prev);
	fflush(stdout);
}

/* Sleep @s seconds; 0, or -EINTR when a signal asked to stop. */
static int np_sleep(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s };

	ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
	while (!np_stop && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return np_stop ? -EINTR : 0;
}

/*
 * --watch and the family is gone (numaplace.ko unloaded): look it up
 * again (quietly: @nl->quiet is set while watching); its counters start
 * from zero, so no rate is drawn across the reload (*@prev is dropped).
 * 0, or -errno of a failure other than the module's absence.
 */
static int np_stats_rejoin(struct np_nl *nl, struct np_st **prev)
{
	int ret;

	if (nl->family)
		fprintf(stderr, "numaplace stats: the module is not loaded; waiting for it\n");
	*prev = NULL;
	nl->family = 0;
	ret = np_nl_resolve(nl, NUMAPLACE_FAMILY_NAME, &nl->family, NULL, NULL);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		np_nl_perror(nl, ret);
	return ret;
}

int np_cmd_stats(int argc, char **argv)
{
	struct np_stats_cmd c = { .format = NP_FMT_TEXT };
	struct np_st st[2] = { { 0 } }, *cur = &st[0], *prev = NULL;
	struct np_nl nl;
	int ret;

	ret = np_stats_parse(&c, argc, argv);
	if (ret)
		return ret < 0 ? NP_EXIT_OK : ret;
	c.tty = isatty(STDOUT_FILENO);
	ret = np_nl_open(&nl, "numaplace stats", 0);
	if (ret)
		return np_exit_of(ret);

	/* No SA_RESTART: a signal ends a sleep or a receive at once. */
	np_stop_on_signals();
	/* Watching, the loop prints its errors: the module may come back. */
	nl.quiet = c.watch;
	for (;;) {
		ret = nl.family ? np_st_get(&nl, cur) : -ENOENT;
		if (ret == -ENOENT && c.watch) {
			/* The module went: wait for it, counting from zero. */
			ret = np_stats_rejoin(&nl, &prev);
		} else if (ret) {
			if (ret != -EINTR && c.watch)
				np_nl_perror(&nl, ret);
		} else {
			np_stats_print(&c, cur, prev);
			if (!c.watch)
				break;
			prev = cur;
			cur = cur == &st[0] ? &st[1] : &st[0];
		}
		if (ret)
			break;
		ret = np_sleep(c.interval);
		if (ret)
			break;
	}
	np_nl_close(&nl);
	np_st_free(&st[0]);
	np_st_free(&st[1]);
	/* Interrupted while watching: the way --watch is meant to end. */
	if (ret == -EINTR && np_stop && c.watch)
		return NP_EXIT_OK;
	return ret == -EINTR ? NP_EXIT_FAIL : np_exit_of(ret);
}
