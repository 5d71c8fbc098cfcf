// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace stats: the module's counters (netlink STATS_GET dump: one
 * global message, then one per online node), as text, JSON or the
 * Prometheus text exposition format, once or every few seconds with
 * rates.
 *
 *   numaplace stats [--json | --prometheus] [--watch [SECONDS]]
 *
 * --prometheus writes what node_exporter's textfile collector reads: write
 * it to a temporary file and rename it into the collector's directory, so
 * a scrape never sees half a file.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nl.h"

/* Folio orders kept: far above a PUD (order 18 with 4 KiB pages). */
#define NP_ST_ORDERS		32
/* Failure reasons kept: the module has NUMAPLACE_FAIL_MAX. */
#define NP_ST_FAILS		16
/* Engines kept: NUMAPLACE_ENGINE_* bits 0.. (kernel, vma, batch). */
#define NP_ST_ENGINES		8
/* Phases kept: NUMAPLACE_PHASE_MAX and some room for a newer module. */
#define NP_ST_PHASES		16
/* Longest and shortest --watch interval, seconds. */
#define NP_WATCH_MAX_S		86400.0
#define NP_WATCH_MIN_S		0.01

struct np_st_node {
	unsigned int node;
	__u64 pages_in, pages_out;		/* base pages */
	__u64 folios_in[NP_ST_ORDERS];		/* folios, by order */
	__u64 folios_out[NP_ST_ORDERS];
	int has_order[NP_ST_ORDERS];		/* the module sent the order */
};

struct np_st_fail {
	__u32 err;				/* positive errno, 0: other */
	__u64 pages;
};

/* One STATS_GET dump. */
struct np_st {
	__u64 query_calls, query_pages, query_runs;
	__u64 migrate_calls, bytes_copied;
	__u64 dma_pages, dma_fallback;	/* pages */
	struct np_st_fail fail[NP_ST_FAILS];
	unsigned int nr_fail;
	__u64 phase_ns[NP_ST_ENGINES][NP_ST_PHASES];
	int has_phase[NP_ST_ENGINES][NP_ST_PHASES];
	struct np_st_node *nodes;
	size_t nr_nodes, cap_nodes;
	double t;				/* CLOCK_MONOTONIC, seconds */
	double wall;				/* CLOCK_REALTIME, seconds */
};

enum np_st_format { NP_ST_TEXT, NP_ST_JSON, NP_ST_PROM };

struct np_stats_cmd {
	enum np_st_format format;
	int watch;
	double interval;			/* seconds */
	int tty;				/* stdout is a terminal */
};

/* The errnos the module counts failures for, always exported. */
static const int np_fail_errnos[] = { ENOMEM, EBUSY, EACCES, EFAULT, ENOENT };

static const char *const np_phase_names[NUMAPLACE_PHASE_MAX] = {
	[NUMAPLACE_PHASE_COLLECT] = "collect",
	[NUMAPLACE_PHASE_UNMAP] = "unmap",
	[NUMAPLACE_PHASE_ALLOC] = "alloc",
	[NUMAPLACE_PHASE_COPY] = "copy",
	[NUMAPLACE_PHASE_RESTORE] = "restore",
	[NUMAPLACE_PHASE_MIGRATE] = "migrate",
	[NUMAPLACE_PHASE_RESOLVE] = "resolve",
};

/* By bit number of NUMAPLACE_ENGINE_*. */
static const char *const np_engine_names[] = { "kernel", "vma", "batch" };

/* A name for engine bit @e or phase @p, the number when it has none. */
static const char *np_engine_name(unsigned int e, char *buf, size_t size)
{
	if (e < NP_ARRAY_SIZE(np_engine_names))
		return np_engine_names[e];
	snprintf(buf, size, "engine%u", e);
	return buf;
}

static const char *np_phase_name(unsigned int p, char *buf, size_t size)
{
	if (p < NUMAPLACE_PHASE_MAX && np_phase_names[p])
		return np_phase_names[p];
	snprintf(buf, size, "phase%u", p);
	return buf;
}

static const char *np_fail_name(__u32 err, char *buf, size_t size)
{
	const char *name = err ? np_errno_name(err) : "OTHER";

	if (name)
		return name;
	snprintf(buf, size, "E%u", err);
	return buf;
}

/* ---- the dump ---------------------------------------------------------- */

struct np_st_parse {
	struct np_st *st;
	const struct nlattr *tb[NUMAPLACE_A_STATS_MAX + 1];
	const struct nlattr *order[NP_ST_ORDERS * 2];
	unsigned int nr_order;
	const struct nlattr *fail[NP_ST_FAILS];
	unsigned int nr_fail;
	const struct nlattr *phase[NP_ST_ENGINES * NP_ST_PHASES];
	unsigned int nr_phase;
};

static const enum mnl_attr_data_type np_stats_types[NUMAPLACE_A_STATS_MAX + 1] = {
	[NUMAPLACE_A_STATS_NODE] = MNL_TYPE_U32,
	[NUMAPLACE_A_STATS_QUERY_CALLS] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_QUERY_PAGES] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_QUERY_RUNS] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_MIGRATE_CALLS] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_BYTES_COPIED] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_DMA_PAGES] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_DMA_FALLBACK] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_PAGES_IN] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_PAGES_OUT] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_ORDER] = MNL_TYPE_NESTED,
	[NUMAPLACE_A_STATS_FAIL] = MNL_TYPE_NESTED,
	[NUMAPLACE_A_STATS_PHASE] = MNL_TYPE_NESTED,
};

/* Top-level attributes; the multi-attr nests are collected in order. */
static int np_st_attr_cb(const struct nlattr *attr, void *data)
{
	struct np_st_parse *p = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type > NUMAPLACE_A_STATS_MAX || !np_stats_types[type])
		return MNL_CB_OK;	/* pad, or newer than this tool */
	if (mnl_attr_validate(attr, np_stats_types[type]) < 0)
		return MNL_CB_OK;
	switch (type) {
	case NUMAPLACE_A_STATS_ORDER:
		if (p->nr_order < NP_ARRAY_SIZE(p->order))
			p->order[p->nr_order++] = attr;
		break;
	case NUMAPLACE_A_STATS_FAIL:
		if (p->nr_fail < NP_ARRAY_SIZE(p->fail))
			p->fail[p->nr_fail++] = attr;
		break;
	case NUMAPLACE_A_STATS_PHASE:
		if (p->nr_phase < NP_ARRAY_SIZE(p->phase))
			p->phase[p->nr_phase++] = attr;
		break;
	default:
		p->tb[type] = attr;
	}
	return MNL_CB_OK;
}

/* A nest's u32 and u64 attributes by type, up to @max. */
struct np_st_nest {
	const struct nlattr *tb[8];
};

static int np_st_nest_cb(const struct nlattr *attr, void *data)
{
	struct np_st_nest *n = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type < NP_ARRAY_SIZE(n->tb) &&
	    (mnl_attr_validate(attr, MNL_TYPE_U32) >= 0 ||
	     mnl_attr_validate(attr, MNL_TYPE_U64) >= 0))
		n->tb[type] = attr;
	return MNL_CB_OK;
}

static __u64 np_get_u64(const struct nlattr *attr)
{
	return attr ? mnl_attr_get_u64(attr) : 0;
}

static int np_nest_u32(const struct np_st_nest *n, unsigned int type,
		       __u32 *val)
{
	if (!n->tb[type] || mnl_attr_get_payload_len(n->tb[type]) != 4)
		return -1;
	*val = mnl_attr_get_u32(n->tb[type]);
	return 0;
}

static __u64 np_nest_u64(const struct np_st_nest *n, unsigned int type)
{
	return n->tb[type] && mnl_attr_get_payload_len(n->tb[type]) == 8 ?
	       mnl_attr_get_u64(n->tb[type]) : 0;
}

static void np_st_global(struct np_st *st, const struct np_st_parse *p)
{
	struct np_st_nest n;
	__u32 err, eng, ph;
	unsigned int i, e;

	st->query_calls = np_get_u64(p->tb[NUMAPLACE_A_STATS_QUERY_CALLS]);
	st->query_pages = np_get_u64(p->tb[NUMAPLACE_A_STATS_QUERY_PAGES]);
	st->query_runs = np_get_u64(p->tb[NUMAPLACE_A_STATS_QUERY_RUNS]);
	st->migrate_calls = np_get_u64(p->tb[NUMAPLACE_A_STATS_MIGRATE_CALLS]);
	st->bytes_copied = np_get_u64(p->tb[NUMAPLACE_A_STATS_BYTES_COPIED]);
	st->dma_pages = np_get_u64(p->tb[NUMAPLACE_A_STATS_DMA_PAGES]);
	st->dma_fallback = np_get_u64(p->tb[NUMAPLACE_A_STATS_DMA_FALLBACK]);
	for (i = 0; i < p->nr_fail; i++) {
		memset(&n, 0, sizeof(n));
		mnl_attr_parse_nested(p->fail[i], np_st_nest_cb, &n);
		if (np_nest_u32(&n, NUMAPLACE_A_FAIL_ERRNO, &err))
			continue;
		/* Several reasons may share an errno (0: the others). */
		for (e = 0; e < st->nr_fail; e++)
			if (st->fail[e].err == err)
				break;
		if (e == NP_ST_FAILS)
			continue;
		if (e == st->nr_fail) {
			st->fail[e].err = err;
			st->fail[e].pages = 0;
			st->nr_fail++;
		}
		st->fail[e].pages += np_nest_u64(&n, NUMAPLACE_A_FAIL_PAGES);
	}
	for (i = 0; i < p->nr_phase; i++) {
		memset(&n, 0, sizeof(n));
		mnl_attr_parse_nested(p->phase[i], np_st_nest_cb, &n);
		if (np_nest_u32(&n, NUMAPLACE_A_PHASE_ENGINE, &eng) ||
		    np_nest_u32(&n, NUMAPLACE_A_PHASE_PHASE, &ph) || !eng ||
		    ph >= NP_ST_PHASES)
			continue;
		e = __builtin_ctz(eng);
		if (e >= NP_ST_ENGINES)
			continue;
		st->phase_ns[e][ph] += np_nest_u64(&n, NUMAPLACE_A_PHASE_NS);
		st->has_phase[e][ph] = 1;
	}
}

static int np_st_node(struct np_st *st, const struct np_st_parse *p)
{
	struct np_st_node *nd;
	struct np_st_nest n;
	unsigned int i;
	__u32 o;

	if (st->nr_nodes == st->cap_nodes) {
		size_t cap = st->cap_nodes ? 2 * st->cap_nodes : 8;

		nd = realloc(st->nodes, cap * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		st->nodes = nd;
		st->cap_nodes = cap;
	}
	nd = &st->nodes[st->nr_nodes++];
	memset(nd, 0, sizeof(*nd));
	nd->node = mnl_attr_get_u32(p->tb[NUMAPLACE_A_STATS_NODE]);
	nd->pages_in = np_get_u64(p->tb[NUMAPLACE_A_STATS_PAGES_IN]);
	nd->pages_out = np_get_u64(p->tb[NUMAPLACE_A_STATS_PAGES_OUT]);
	for (i = 0; i < p->nr_order; i++) {
		memset(&n, 0, sizeof(n));
		mnl_attr_parse_nested(p->order[i], np_st_nest_cb, &n);
		if (np_nest_u32(&n, NUMAPLACE_A_ORDER_ORDER, &o) ||
		    o >= NP_ST_ORDERS)
			continue;
		nd->folios_in[o] = np_nest_u64(&n, NUMAPLACE_A_ORDER_FOLIOS_IN);
		nd->folios_out[o] = np_nest_u64(&n, NUMAPLACE_A_ORDER_FOLIOS_OUT);
		nd->has_order[o] = 1;
	}
	return 0;
}

static int np_st_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_st_parse p = { .st = data };

	if (np_nl_cmd(nlh) != NUMAPLACE_NL_CMD_STATS_GET)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, GENL_HDRLEN, np_st_attr_cb, &p);
	if (!p.tb[NUMAPLACE_A_STATS_NODE]) {
		np_st_global(p.st, &p);
		return MNL_CB_OK;
	}
	if (np_st_node(p.st, &p)) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static void np_st_free(struct np_st *st)
{
	free(st->nodes);
	memset(st, 0, sizeof(*st));
}

/* Dump the counters into @st (emptied first). 0 or -errno. */
static int np_st_get(struct np_nl *nl, struct np_st *st)
{
	struct nlmsghdr *nlh;

	free(st->nodes);
	memset(st, 0, sizeof(*st));
	nlh = np_nl_msg(nl, nl->family, NUMAPLACE_NL_CMD_STATS_GET, NLM_F_DUMP);
	st->t = np_clock(CLOCK_MONOTONIC);
	st->wall = np_clock(CLOCK_REALTIME);
	return np_nl_send_recv(nl, nlh, np_st_msg_cb, st);
}

static const struct np_st_node *np_st_find_node(const struct np_st *st,
						unsigned int node)
{
	size_t i;

	for (i = 0; st && i < st->nr_nodes; i++)
		if (st->nodes[i].node == node)
			return &st->nodes[i];
	return NULL;
}

static __u64 np_st_fail_pages(const struct np_st *st, __u32 err)
{
	unsigned int i;

	for (i = 0; st && i < st->nr_fail; i++)
		if (st->fail[i].err == err)
			return st->fail[i].pages;
	return 0;
}

/*
 * Per second from @prev to @cur over @dt seconds. A counter that went
 * back (the module was reloaded) has no rate: NAN.
 */
static double np_rate(__u64 cur, __u64 prev, double dt)
{
	if (cur < prev || dt <= 0)
		return NAN;
	return (cur - prev) / dt;
}

/* ---- text -------------------------------------------------------------- */

/* "1.5 GiB" */
static const char *np_human_bytes(double b, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned int u = 0;

	while (b >= 1024 && u + 1 < NP_ARRAY_SIZE(units)) {
		b /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", b, units[u]);
	return buf;
}

/* A rate column: empty without a previous sample. */
static void np_text_rate(const struct np_st *prev, double r)
{
	if (!prev)
		return;
	if (isnan(r))
		printf("  %12s", "-");
	else
		printf("  %10.1f/s", r);
}

static void np_text_row(const char *label, __u64 v, const struct np_st *prev,
			__u64 pv, double dt)
{
	printf("%-16s %16llu", label, (unsigned long long)v);
	np_text_rate(prev, np_rate(v, pv, dt));
	putchar('\n');
}

static void np_print_text(const struct np_st *st, const struct np_st *prev)
{
	double dt = prev ? st->t - prev->t : 0;
	const struct np_st_node *pn;
	char b1[32], b2[32];
	unsigned int e, p, o, i;
	int any;

	if (prev)
		printf("%-16s %16s  %12s\n", "", "total", "rate");
	np_text_row("query calls", st->query_calls, prev,
		    prev ? prev->query_calls : 0, dt);
	np_text_row("query pages", st->query_pages, prev,
		    prev ? prev->query_pages : 0, dt);
	np_text_row("query runs", st->query_runs, prev,
		    prev ? prev->query_runs : 0, dt);
	np_text_row("migrate calls", st->migrate_calls, prev,
		    prev ? prev->migrate_calls : 0, dt);
	printf("%-16s %16llu", "bytes copied",
	       (unsigned long long)st->bytes_copied);
	if (prev) {
		double r = np_rate(st->bytes_copied, prev->bytes_copied, dt);

		if (isnan(r))
			printf("  %12s", "-");
		else
			printf("  %10s/s", np_human_bytes(r, b1, sizeof(b1)));
	} else {
		printf("  (%s)", np_human_bytes(st->bytes_copied, b1, sizeof(b1)));
	}
	putchar('\n');
	np_text_row("DMA pages", st->dma_pages, prev,
		    prev ? prev->dma_pages : 0, dt);
	np_text_row("DMA fallback", st->dma_fallback, prev,
		    prev ? prev->dma_fallback : 0, dt);

	printf("\nfailed pages by reason\n");
	if (!st->nr_fail)
		printf("  (none)\n");
	for (i = 0; i < st->nr_fail; i++) {
		printf("  %-14s %16llu", np_fail_name(st->fail[i].err, b1, sizeof(b1)),
		       (unsigned long long)st->fail[i].pages);
		np_text_rate(prev, np_rate(st->fail[i].pages,
					   np_st_fail_pages(prev, st->fail[i].err),
					   dt));
		putchar('\n');
	}

	printf("\nmigration time by engine and phase (seconds%s)\n",
	       prev ? "; rate: seconds per second" : "");
	any = 0;
	for (e = 0; e < NP_ST_ENGINES; e++) {
		for (p = 0; p < NP_ST_PHASES; p++) {
			if (!st->has_phase[e][p])
				continue;
			any = 1;
			printf("  %-6s %-7s %16.6f", np_engine_name(e, b1, sizeof(b1)),
			       np_phase_name(p, b2, sizeof(b2)),
			       st->phase_ns[e][p] / 1e9);
			if (prev) {
				double r = np_rate(st->phase_ns[e][p],
						   prev->phase_ns[e][p], dt);

				if (isnan(r))
					printf("  %12s", "-");
				else
					printf("  %12.4f", r / 1e9);
			}
			putchar('\n');
		}
	}
	if (!any)
		printf("  (none)\n");

	printf("\n%-6s %16s %16s", "node", "pages in", "pages out");
	if (prev)
		printf("  %12s  %12s", "in/s", "out/s");
	putchar('\n');
	for (i = 0; i < st->nr_nodes; i++) {
		const struct np_st_node *n = &st->nodes[i];

		pn = np_st_find_node(prev, n->node);
		printf("%-6u %16llu %16llu", n->node,
		       (unsigned long long)n->pages_in,
		       (unsigned long long)n->pages_out);
		if (prev) {
			np_text_rate(prev, pn ? np_rate(n->pages_in, pn->pages_in, dt) : NAN);
			np_text_rate(prev, pn ? np_rate(n->pages_out, pn->pages_out, dt) : NAN);
		}
		putchar('\n');
	}

	any = 0;
	for (i = 0; i < st->nr_nodes; i++) {
		const struct np_st_node *n = &st->nodes[i];

		pn = np_st_find_node(prev, n->node);
		for (o = 0; o < NP_ST_ORDERS; o++) {
			if (!n->has_order[o])
				continue;
			if (!any)
				printf("\n%-6s %5s %16s %16s%s\n", "node", "order",
				       "folios in", "folios out",
				       prev ? "          in/s         out/s" : "");
			any = 1;
			printf("%-6u %5u %16llu %16llu", n->node, o,
			       (unsigned long long)n->folios_in[o],
			       (unsigned long long)n->folios_out[o]);
			if (prev) {
				np_text_rate(prev, pn ? np_rate(n->folios_in[o],
								pn->folios_in[o], dt) : NAN);
				np_text_rate(prev, pn ? np_rate(n->folios_out[o],
								pn->folios_out[o], dt) : NAN);
			}
			putchar('\n');
		}
	}
	if (!any)
		printf("\nno folio migrated yet\n");
}

/* ---- JSON -------------------------------------------------------------- */

static void np_json_rate(const char *key, double r, const char *sep)
{
	if (isnan(r))
		printf("%s\"%s\":null", sep, key);
	else
		printf("%s\"%s\":%.3f", sep, key, r);
}

/* One object on one line; with @prev, "rates" per second since it. */
static void np_print_json(const struct np_st *st, const struct np_st *prev)
{
	double dt = prev ? st->t - prev->t : 0;
	const struct np_st_node *pn;
	const char *sep = "";
	char b1[32], b2[32];
	unsigned int e, p, o, i;

	printf("{\"time\":%.3f,\"query_calls\":%llu,\"query_pages\":%llu,"
	       "\"query_runs\":%llu,\"migrate_calls\":%llu,\"bytes_copied\":%llu,"
	       "\"dma_pages\":%llu,\"dma_fallback\":%llu",
	       st->wall, (unsigned long long)st->query_calls,
	       (unsigned long long)st->query_pages,
	       (unsigned long long)st->query_runs,
	       (unsigned long long)st->migrate_calls,
	       (unsigned long long)st->bytes_copied,
	       (unsigned long long)st->dma_pages,
	       (unsigned long long)st->dma_fallback);
	printf(",\"failed_pages\":{");
	for (i = 0; i < st->nr_fail; i++)
		printf("%s\"%s\":%llu", i ? "," : "",
		       np_fail_name(st->fail[i].err, b1, sizeof(b1)),
		       (unsigned long long)st->fail[i].pages);
	printf("},\"phase_ns\":[");
	for (e = 0; e < NP_ST_ENGINES; e++) {
		for (p = 0; p < NP_ST_PHASES; p++) {
			if (!st->has_phase[e][p])
				continue;
			printf("%s{\"engine\":\"%s\",\"phase\":\"%s\",\"ns\":%llu}",
			       sep, np_engine_name(e, b1, sizeof(b1)),
			       np_phase_name(p, b2, sizeof(b2)),
			       (unsigned long long)st->phase_ns[e][p]);
			sep = ",";
		}
	}
	printf("],\"nodes\":[");
	for (i = 0; i < st->nr_nodes; i++) {
		const struct np_st_node *n = &st->nodes[i];

		printf("%s{\"node\":%u,\"pages_in\":%llu,\"pages_out\":%llu,"
		       "\"folios\":[", i ? "," : "", n->node,
		       (unsigned long long)n->pages_in,
		       (unsigned long long)n->pages_out);
		sep = "";
		for (o = 0; o < NP_ST_ORDERS; o++) {
			if (!n->has_order[o])
				continue;
			printf("%s{\"order\":%u,\"in\":%llu,\"out\":%llu}", sep,
			       o, (unsigned long long)n->folios_in[o],
			       (unsigned long long)n->folios_out[o]);
			sep = ",";
		}
		printf("]}");
	}
	printf("]");
	if (prev) {
		printf(",\"interval\":%.3f,\"rates\":{", dt);
		np_json_rate("query_calls",
			     np_rate(st->query_calls, prev->query_calls, dt), "");
		np_json_rate("query_pages",
			     np_rate(st->query_pages, prev->query_pages, dt), ",");
		np_json_rate("query_runs",
			     np_rate(st->query_runs, prev->query_runs, dt), ",");
		np_json_rate("migrate_calls",
			     np_rate(st->migrate_calls, prev->migrate_calls, dt), ",");
		np_json_rate("bytes_copied",
			     np_rate(st->bytes_copied, prev->bytes_copied, dt), ",");
		printf(",\"nodes\":[");
		for (i = 0; i < st->nr_nodes; i++) {
			const struct np_st_node *n = &st->nodes[i];

			pn = np_st_find_node(prev, n->node);
			printf("%s{\"node\":%u", i ? "," : "", n->node);
			np_json_rate("pages_in", pn ? np_rate(n->pages_in,
							      pn->pages_in, dt) : NAN, ",");
			np_json_rate("pages_out", pn ? np_rate(n->pages_out,
							       pn->pages_out, dt) : NAN, ",");
			printf("}");
		}
		printf("]}");
	}
	printf("}\n");
}

/* ---- Prometheus text exposition format ------------------------------- */

static void np_prom_head(const char *name, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s counter\n", name, help, name);
}

static void np_print_prom(const struct np_st *st)
{
	char b1[32], b2[32];
	unsigned int e, p, o, i;
	size_t k;

	np_prom_head("numaplace_query_calls_total", "NUMAPLACE_IOC_QUERY calls.");
	printf("numaplace_query_calls_total %llu\n",
	       (unsigned long long)st->query_calls);
	np_prom_head("numaplace_query_pages_total", "Pages answered by queries.");
	printf("numaplace_query_pages_total %llu\n",
	       (unsigned long long)st->query_pages);
	np_prom_head("numaplace_query_runs_total", "Runs returned by queries.");
	printf("numaplace_query_runs_total %llu\n",
	       (unsigned long long)st->query_runs);
	np_prom_head("numaplace_migrate_calls_total", "NUMAPLACE_IOC_MIGRATE calls.");
	printf("numaplace_migrate_calls_total %llu\n",
	       (unsigned long long)st->migrate_calls);
	np_prom_head("numaplace_copied_bytes_total",
		     "Bytes of pages migrated (copied once each).");
	printf("numaplace_copied_bytes_total %llu\n",
	       (unsigned long long)st->bytes_copied);
	np_prom_head("numaplace_dma_pages_total", "Pages a DMA engine copied.");
	printf("numaplace_dma_pages_total %llu\n",
	       (unsigned long long)st->dma_pages);
	np_prom_head("numaplace_dma_fallback_pages_total",
		     "Pages the CPU copied after a DMA error.");
	printf("numaplace_dma_fallback_pages_total %llu\n",
	       (unsigned long long)st->dma_fallback);

	np_prom_head("numaplace_migrated_pages_total",
		     "Base pages migrated onto (in) or off (out) a node.");
	for (i = 0; i < st->nr_nodes; i++) {
		printf("numaplace_migrated_pages_total{node=\"%u\",direction=\"in\"} %llu\n",
		       st->nodes[i].node, (unsigned long long)st->nodes[i].pages_in);
		printf("numaplace_migrated_pages_total{node=\"%u\",direction=\"out\"} %llu\n",
		       st->nodes[i].node, (unsigned long long)st->nodes[i].pages_out);
	}
	np_prom_head("numaplace_folios_total",
		     "Folios migrated onto (in) or off (out) a node, by folio order.");
	for (i = 0; i < st->nr_nodes; i++) {
		for (o = 0; o < NP_ST_ORDERS; o++) {
			if (!st->nodes[i].has_order[o])
				continue;
			printf("numaplace_folios_total{node=\"%u\",order=\"%u\",direction=\"in\"} %llu\n",
			       st->nodes[i].node, o,
			       (unsigned long long)st->nodes[i].folios_in[o]);
			printf("numaplace_folios_total{node=\"%u\",order=\"%u\",direction=\"out\"} %llu\n",
			       st->nodes[i].node, o,
			       (unsigned long long)st->nodes[i].folios_out[o]);
		}
	}

	/* The module's reasons always, so that their series never vanish. */
	np_prom_head("numaplace_failed_pages_total",
		     "Pages that did not migrate, by errno (OTHER: any other reason).");
	for (k = 0; k < NP_ARRAY_SIZE(np_fail_errnos); k++)
		printf("numaplace_failed_pages_total{errno=\"%s\"} %llu\n",
		       np_fail_name(np_fail_errnos[k], b1, sizeof(b1)),
		       (unsigned long long)np_st_fail_pages(st, np_fail_errnos[k]));
	for (i = 0; i < st->nr_fail; i++) {
		for (k = 0; k < NP_ARRAY_SIZE(np_fail_errnos); k++)
			if ((int)st->fail[i].err == np_fail_errnos[k])
				break;
		if (k < NP_ARRAY_SIZE(np_fail_errnos))
			continue;
		printf("numaplace_failed_pages_total{errno=\"%s\"} %llu\n",
		       np_fail_name(st->fail[i].err, b1, sizeof(b1)),
		       (unsigned long long)st->fail[i].pages);
	}

	np_prom_head("numaplace_phase_seconds_total",
		     "Time spent migrating, by engine and phase.");
	for (e = 0; e < NP_ST_ENGINES; e++)
		for (p = 0; p < NP_ST_PHASES; p++)
			if (st->has_phase[e][p])
				printf("numaplace_phase_seconds_total{engine=\"%s\",phase=\"%s\"} %.9f\n",
				       np_engine_name(e, b1, sizeof(b1)),
				       np_phase_name(p, b2, sizeof(b2)),
				       st->phase_ns[e][p] / 1e9);
}

/* ---- the command ------------------------------------------------------- */

static void np_stats_usage(FILE *out)
{
	fprintf(out,
		"usage: numaplace stats [--json | --prometheus] [--watch [SECONDS]]\n"
		"\n"
		"  --json             one JSON object per line\n"
		"  --prometheus       the text exposition format, for node_exporter's\n"
		"                     textfile collector (write a temporary file, then\n"
		"                     rename it into the collector's directory)\n"
		"  -w, --watch [S]    redraw every S seconds (default 1) with rates per\n"
		"                     second, until interrupted; with --json a line per\n"
		"                     sample\n"
		"\n"
		"exit status: %d ok, %d failed, %d usage, %d module not loaded\n",
		NP_EXIT_OK, NP_EXIT_FAIL, NP_EXIT_USAGE, NP_EXIT_NODEV);
}

/* The options, declared. */
enum np_stats_opt { NP_ST_OPT_JSON, NP_ST_OPT_PROM, NP_ST_OPT_WATCH, NP_ST_OPT_HELP };

static const struct {
	const char *long_name, *short_name;
	enum np_stats_opt opt;
} np_stats_opts[] = {
	{ "--json", NULL, NP_ST_OPT_JSON },
	{ "--prometheus", NULL, NP_ST_OPT_PROM },
	{ "--watch", "-w", NP_ST_OPT_WATCH },
	{ "--help", "-h", NP_ST_OPT_HELP },
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

static int np_stats_parse(struct np_stats_cmd *c, int argc, char **argv)
{
	const char *arg, *val;
	size_t k, len;
	int a;

	c->interval = 1;
	for (a = 1; a < argc; a++) {
		arg = argv[a];
		val = NULL;
		len = strcspn(arg, "=");
		for (k = 0; k < NP_ARRAY_SIZE(np_stats_opts); k++) {
			if (strlen(np_stats_opts[k].long_name) == len &&
			    !strncmp(arg, np_stats_opts[k].long_name, len))
				break;
			if (np_stats_opts[k].short_name &&
			    !strcmp(arg, np_stats_opts[k].short_name))
				break;
		}
		if (k == NP_ARRAY_SIZE(np_stats_opts)) {
			fprintf(stderr, "numaplace stats: unknown argument '%s'\n", arg);
			return -EINVAL;
		}
		if (arg[len] == '=')
			val = arg + len + 1;
		if (val && np_stats_opts[k].opt != NP_ST_OPT_WATCH) {
			fprintf(stderr, "numaplace stats: %s takes no value\n",
				np_stats_opts[k].long_name);
			return -EINVAL;
		}
		switch (np_stats_opts[k].opt) {
		case NP_ST_OPT_JSON:
		case NP_ST_OPT_PROM:
			if (c->format != NP_ST_TEXT) {
				fprintf(stderr, "numaplace stats: --json and --prometheus exclude each other\n");
				return -EINVAL;
			}
			c->format = np_stats_opts[k].opt == NP_ST_OPT_JSON ?
				    NP_ST_JSON : NP_ST_PROM;
			break;
		case NP_ST_OPT_WATCH:
			c->watch = 1;
			/* The optional SECONDS: "--watch=2" or "--watch 2". */
			if (!val && a + 1 < argc && argv[a + 1][0] != '-')
				val = argv[++a];
			if (val && np_parse_seconds(val, &c->interval)) {
				fprintf(stderr, "numaplace stats: --watch takes seconds, %g to %g\n",
					NP_WATCH_MIN_S, NP_WATCH_MAX_S);
				return -EINVAL;
			}
			break;
		case NP_ST_OPT_HELP:
			return 1;
		}
	}
	if (c->watch && c->format == NP_ST_PROM) {
		fprintf(stderr, "numaplace stats: --prometheus is one snapshot (the scraper computes rates): run it from a timer instead of --watch\n");
		return -EINVAL;
	}
	return 0;
}

static void np_stats_print(const struct np_stats_cmd *c, const struct np_st *st,
			   const struct np_st *prev)
{
	char when[32];
	time_t t;

	switch (c->format) {
	case NP_ST_JSON:
		np_print_json(st, prev);
		break;
	case NP_ST_PROM:
		np_print_prom(st);
		break;
	case NP_ST_TEXT:
		if (c->watch) {
			t = (time_t)st->wall;
			strftime(when, sizeof(when), "%H:%M:%S", localtime(&t));
			/* A terminal is redrawn in place; a pipe gets each sample. */
			printf(c->tty ? "\033[H\033[J" : "\n");
			printf("numaplace stats, every %gs: %s\n\n", c->interval, when);
		}
		np_print_text(st, prev);
		break;
	}
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
	struct np_stats_cmd c = { .format = NP_ST_TEXT };
	struct np_st st[2] = { { 0 } }, *cur = &st[0], *prev = NULL;
	struct np_nl nl;
	int ret;

	ret = np_stats_parse(&c, argc, argv);
	if (ret) {
		np_stats_usage(ret > 0 ? stdout : stderr);
		return ret > 0 ? NP_EXIT_OK : NP_EXIT_USAGE;
	}
	c.tty = isatty(STDOUT_FILENO);
	ret = np_nl_open(&nl, "numaplace stats", 0);
	if (ret)
		return ret == -ENOENT ? NP_EXIT_NODEV : NP_EXIT_FAIL;

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
	if (ret == -ENOENT)
		return NP_EXIT_NODEV;
	return ret ? NP_EXIT_FAIL : NP_EXIT_OK;
}
