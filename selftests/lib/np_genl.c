// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink tests' helpers (np_genl.h) on the CLI's client
 * (tools/lib/nl/nl.c, libnp_nl.a): STATS_GET, CONFIG_GET/SET,
 * MIGRATE_DONE events and the genl fixtures' common state.
 */
#include <stddef.h>
#include <unistd.h>

#include "np_genl.h"

/* ---- STATS_GET ------------------------------------------------------------ */

/* A nest's attributes by type, up to NP_GN_NEST_MAX. */
#define NP_GN_NEST_MAX	8

struct np_gn_nest {
	const struct nlattr *tb[NP_GN_NEST_MAX];
};

static int np_gn_nest_cb(const struct nlattr *a, void *data)
{
	struct np_gn_nest *n = data;

	if (mnl_attr_get_type(a) < NP_GN_NEST_MAX)
		n->tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static __u64 np_gn_u64(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 8 ? mnl_attr_get_u64(a) : 0;
}

static long np_gn_u32(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 4 ? (long)mnl_attr_get_u32(a) : -1;
}

struct np_gn_stats_msg {
	struct np_gn_stats *s;
	const struct nlattr *tb[NUMAPLACE_A_STATS_MAX + 1];
	struct np_gn_node n;
};

static void np_gn_order(struct np_gn_stats_msg *m, const struct nlattr *a)
{
	struct np_gn_nest n = { { 0 } };
	long o;

	mnl_attr_parse_nested(a, np_gn_nest_cb, &n);
	o = np_gn_u32(n.tb[NUMAPLACE_A_ORDER_ORDER]);
	if (o < 0 || o >= NP_GN_ORDERS)
		return;
	m->n.folios_in[o] += np_gn_u64(n.tb[NUMAPLACE_A_ORDER_FOLIOS_IN]);
	m->n.folios_out[o] += np_gn_u64(n.tb[NUMAPLACE_A_ORDER_FOLIOS_OUT]);
}

static void np_gn_fail(struct np_gn_stats_msg *m, const struct nlattr *a)
{
	struct np_gn_nest n = { { 0 } };
	long e;

	mnl_attr_parse_nested(a, np_gn_nest_cb, &n);
	e = np_gn_u32(n.tb[NUMAPLACE_A_FAIL_ERRNO]);
	if (e >= 0 && e < NP_GN_ERRNOS)
		m->s->fail[e] += np_gn_u64(n.tb[NUMAPLACE_A_FAIL_PAGES]);
}

static void np_gn_phase(struct np_gn_stats_msg *m, const struct nlattr *a)
{
	struct np_gn_nest n = { { 0 } };
	long e, p;

	mnl_attr_parse_nested(a, np_gn_nest_cb, &n);
	e = np_gn_u32(n.tb[NUMAPLACE_A_PHASE_ENGINE]);
	p = np_gn_u32(n.tb[NUMAPLACE_A_PHASE_PHASE]);
	if (e > 0 && __builtin_ctzl(e) < NP_GN_ENGINES && p >= 0 &&
	    p < NUMAPLACE_PHASE_MAX)
		m->s->phase_ns[__builtin_ctzl(e)][p] +=
			np_gn_u64(n.tb[NUMAPLACE_A_PHASE_NS]);
}

static int np_gn_stats_attr_cb(const struct nlattr *a, void *data)
{
	struct np_gn_stats_msg *m = data;
	unsigned int type = mnl_attr_get_type(a);

	if (type > NUMAPLACE_A_STATS_MAX)
		return MNL_CB_OK;
	if (type == NUMAPLACE_A_STATS_ORDER)
		np_gn_order(m, a);
	else if (type == NUMAPLACE_A_STATS_FAIL)
		np_gn_fail(m, a);
	else if (type == NUMAPLACE_A_STATS_PHASE)
		np_gn_phase(m, a);
	else
		m->tb[type] = a;
	return MNL_CB_OK;
}

static int np_gn_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_gn_stats_msg m = { .s = data };
	struct np_gn_stats *s = m.s;
	long node;

	mnl_attr_parse(nlh, GENL_HDRLEN, np_gn_stats_attr_cb, &m);
	if (!m.tb[NUMAPLACE_A_STATS_NODE]) {
		s->nr_global++;
		s->query_calls = np_gn_u64(m.tb[NUMAPLACE_A_STATS_QUERY_CALLS]);
		s->query_pages = np_gn_u64(m.tb[NUMAPLACE_A_STATS_QUERY_PAGES]);
		s->query_runs = np_gn_u64(m.tb[NUMAPLACE_A_STATS_QUERY_RUNS]);
		s->migrate_calls = np_gn_u64(m.tb[NUMAPLACE_A_STATS_MIGRATE_CALLS]);
		s->bytes_copied = np_gn_u64(m.tb[NUMAPLACE_A_STATS_BYTES_COPIED]);
		s->dma_pages = np_gn_u64(m.tb[NUMAPLACE_A_STATS_DMA_PAGES]);
		s->dma_fallback = np_gn_u64(m.tb[NUMAPLACE_A_STATS_DMA_FALLBACK]);
		s->migrate_retry_passes =
			np_gn_u64(m.tb[NUMAPLACE_A_STATS_MIGRATE_RETRY_PASSES]);
		s->access_calls = np_gn_u64(m.tb[NUMAPLACE_A_STATS_ACCESS_CALLS]);
		s->access_pages = np_gn_u64(m.tb[NUMAPLACE_A_STATS_ACCESS_PAGES]);
		s->access_young = np_gn_u64(m.tb[NUMAPLACE_A_STATS_ACCESS_YOUNG]);
		s->access_cleared =
			np_gn_u64(m.tb[NUMAPLACE_A_STATS_ACCESS_CLEARED]);
		s->access_flushes =
			np_gn_u64(m.tb[NUMAPLACE_A_STATS_ACCESS_FLUSHES]);
		return MNL_CB_OK;
	}
	node = np_gn_u32(m.tb[NUMAPLACE_A_STATS_NODE]);
	s->nr_node_msgs++;
	if (node <= s->last_node || !s->nr_global)
		s->order_ok = 0;
	s->last_node = node;
	if (node < 0 || node >= NP_GN_NODES)
		return MNL_CB_OK;
	m.n.seen = s->node[node].seen + 1;
	m.n.pages_in = np_gn_u64(m.tb[NUMAPLACE_A_STATS_PAGES_IN]);
	m.n.pages_out = np_gn_u64(m.tb[NUMAPLACE_A_STATS_PAGES_OUT]);
	s->node[node] = m.n;
	return MNL_CB_OK;
}

int np_gn_stats(struct np_nl *nl, struct np_gn_stats *s)
{
	struct nlmsghdr *nlh;

	memset(s, 0, sizeof(*s));
	s->order_ok = 1;
	s->last_node = -1;
	nlh = np_nl_msg(nl, nl->family, NUMAPLACE_NL_CMD_STATS_GET, NLM_F_DUMP);
	return np_nl_send_recv(nl, nlh, np_gn_stats_cb, s);
}

/* ---- CONFIG_GET / CONFIG_SET --------------------------------------------- */

/* CONFIG_GET's attributes, each a u32 into a long of the struct. */
static const struct {
	__u16 type;
	size_t off;
} np_gn_config_attrs[] = {
	{ NUMAPLACE_A_CONFIG_ENGINE, offsetof(struct np_gn_config, engine) },
	{ NUMAPLACE_A_CONFIG_BATCH_PAGES, offsetof(struct np_gn_config, batch_pages) },
	{ NUMAPLACE_A_CONFIG_COPY_WORKERS, offsetof(struct np_gn_config, copy_workers) },
	{ NUMAPLACE_A_CONFIG_DMA, offsetof(struct np_gn_config, dma) },
};

static int np_gn_config_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;
	size_t i;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		for (i = 0; i < sizeof(np_gn_config_attrs) / sizeof(np_gn_config_attrs[0]); i++)
			if (mnl_attr_get_type(a) == np_gn_config_attrs[i].type)
				*(long *)((char *)data + np_gn_config_attrs[i].off) =
					np_gn_u32(a);
	}
	return MNL_CB_OK;
}

int np_gn_config_get(struct np_nl *nl, struct np_gn_config *c)
{
	struct nlmsghdr *nlh;

	c->engine = c->batch_pages = c->copy_workers = c->dma = -1;
	nlh = np_nl_msg(nl, nl->family, NUMAPLACE_NL_CMD_CONFIG_GET, 0);
	return np_nl_send_recv(nl, nlh, np_gn_config_cb, c);
}

int np_gn_config_set(struct np_nl *nl, long long engine, long long batch_pages)
{
	struct nlmsghdr *nlh;

	nlh = np_nl_msg(nl, nl->family, NUMAPLACE_NL_CMD_CONFIG_SET, 0);
	if (engine >= 0)
		mnl_attr_put_u32(nlh, NUMAPLACE_A_CONFIG_ENGINE, engine);
	if (batch_pages >= 0)
		mnl_attr_put_u32(nlh, NUMAPLACE_A_CONFIG_BATCH_PAGES, batch_pages);
	return np_nl_send_recv(nl, nlh, NULL, NULL);
}

int np_gn_config_set_u32(struct np_nl *nl, __u16 attr, __u32 val)
{
	struct nlmsghdr *nlh;

	nlh = np_nl_msg(nl, nl->family, NUMAPLACE_NL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, attr, val);
	return np_nl_send_recv(nl, nlh, NULL, NULL);
}

/* ---- MIGRATE_DONE --------------------------------------------------------- */

static int np_gn_event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_gn_event *ev = data;
	struct np_nl_event e = { .pid = -1, .engines = -1, .error = -1 };

	if (np_nl_event_parse(nlh, &e)) {
		ev->ev = e;
		ev->got++;
	}
	return MNL_CB_OK;
}

int np_gn_events(struct np_nl *nl, struct np_gn_event *ev, int ms)
{
	int ret;

	memset(ev, 0, sizeof(*ev));
	ev->ev.pid = ev->ev.engines = ev->ev.error = -1;
	for (;;) {
		ret = np_nl_wait_notify(nl, ev->got ? 0 : ms, np_gn_event_cb, ev);
		if (ret == -EINTR)
			continue;
		if (ret <= 0)
			return ret;
	}
}

/* ---- the genl fixtures' state -------------------------------------------- */

int np_gn_setup(struct np_gn *g)
{
	int ret;

	g->fd = -1;
	ret = np_open();
	if (ret < 0)
		return ret == -ENOENT ? -ENODEV : ret;
	g->fd = ret;
	ret = np_get_info(g->fd, &g->info);
	if (ret)
		return ret;
	ret = np_gn_open(&g->nl);
	if (ret)
		return ret;
	ret = np_gn_config_get(&g->nl, &g->saved);
	if (ret)
		return ret;
	g->engines = np_engines_available(&g->info);
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	return 0;
}

int np_gn_teardown(struct np_gn *g)
{
	int ret = 0;

	/* A test that failed with the module unloaded loads it back. */
	if (g->unloaded && !np_module_loaded())
		np_module_load();
	if (g->nl.sk && g->saved.engine >= 0) {
		np_nl_close(&g->nl);
		if (!np_gn_open(&g->nl))
			ret = np_gn_config_set(&g->nl, g->saved.engine,
					       g->saved.batch_pages);
	}
	np_nl_close(&g->nl);
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	return ret;
}
