// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace stats: the netlink STATS_GET dump (one global message, then
 * one per online node) into struct np_st.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "stats.h"

/* Nodes allocated at first: more than most machines have. */
#define NP_ST_NODES_FIRST	8

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
	[NUMAPLACE_A_STATS_MIGRATE_RETRY_PASSES] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_ACCESS_CALLS] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_ACCESS_PAGES] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_ACCESS_YOUNG] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_ACCESS_CLEARED] = MNL_TYPE_U64,
	[NUMAPLACE_A_STATS_ACCESS_FLUSHES] = MNL_TYPE_U64,
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

/* The attributes of the nest @a into @n, those it lacks NULL. */
static void np_st_nest_parse(const struct nlattr *a, struct np_st_nest *n)
{
	memset(n, 0, sizeof(*n));
	mnl_attr_parse_nested(a, np_st_nest_cb, n);
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
	st->migrate_retry_passes =
		np_get_u64(p->tb[NUMAPLACE_A_STATS_MIGRATE_RETRY_PASSES]);
	st->access_calls = np_get_u64(p->tb[NUMAPLACE_A_STATS_ACCESS_CALLS]);
	st->access_pages = np_get_u64(p->tb[NUMAPLACE_A_STATS_ACCESS_PAGES]);
	st->access_young = np_get_u64(p->tb[NUMAPLACE_A_STATS_ACCESS_YOUNG]);
	st->access_cleared = np_get_u64(p->tb[NUMAPLACE_A_STATS_ACCESS_CLEARED]);
	st->access_flushes = np_get_u64(p->tb[NUMAPLACE_A_STATS_ACCESS_FLUSHES]);
	for (i = 0; i < p->nr_fail; i++) {
		np_st_nest_parse(p->fail[i], &n);
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
		np_st_nest_parse(p->phase[i], &n);
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

	if (np_array_reserve(st->nodes, &st->cap_nodes, st->nr_nodes,
			     NP_ST_NODES_FIRST))
		return -ENOMEM;
	nd = &st->nodes[st->nr_nodes++];
	memset(nd, 0, sizeof(*nd));
	nd->node = mnl_attr_get_u32(p->tb[NUMAPLACE_A_STATS_NODE]);
	nd->pages_in = np_get_u64(p->tb[NUMAPLACE_A_STATS_PAGES_IN]);
	nd->pages_out = np_get_u64(p->tb[NUMAPLACE_A_STATS_PAGES_OUT]);
	for (i = 0; i < p->nr_order; i++) {
		np_st_nest_parse(p->order[i], &n);
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

void np_st_free(struct np_st *st)
{
	free(st->nodes);
	memset(st, 0, sizeof(*st));
}

int np_st_get(struct np_nl *nl, struct np_st *st)
{
	struct nlmsghdr *nlh;

	free(st->nodes);
	memset(st, 0, sizeof(*st));
	nlh = np_nl_msg(nl, nl->family, NUMAPLACE_NL_CMD_STATS_GET, NLM_F_DUMP);
	st->t = np_clock(CLOCK_MONOTONIC);
	st->wall = np_clock(CLOCK_REALTIME);
	return np_nl_send_recv(nl, nlh, np_st_msg_cb, st);
}
