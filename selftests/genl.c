// SPDX-License-Identifier: GPL-2.0
/*
 * The "numaplace" generic netlink family, read with libmnl as the CLI
 * does (Documentation/netlink/specs/numaplace.yaml):
 *  - family: the controller lists the family, its "events" group and its
 *    operations with the right flags (CONFIG_SET admin-only);
 *  - stats_*: the STATS_GET dump is one global message then one per
 *    online node; the counters move by exactly the counts of a known
 *    query and a known migration (4 KiB pages and a THP, node 0 to 1,
 *    with failures) and by nothing else. Nothing else may call the
 *    module meanwhile: the runner runs one test at a time;
 *  - config_*: CONFIG_SET and joining "events" need CAP_SYS_ADMIN (EPERM
 *    for nobody and for root without it, with CAP_NET_ADMIN; CONFIG_GET
 *    and the dump are open to all); bad values
 *    are refused whole, with an extack message pointing at the attribute;
 *    the bounds are accepted; GET returns what SET set, and a migration
 *    without an engine flag uses the configured engine. The knobs are
 *    restored in the teardown;
 *  - event_*: a listener of "events" gets one MIGRATE_DONE per call, whose
 *    fields are the ioctl's (own pages, another process's, a failed call);
 *  - unload_with_listener: the module goes and comes back while a socket
 *    is in its group and an event is queued; the socket stays usable
 *    (the runner checks the kernel log). The module is loaded at the end.
 */
#include <grp.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/mempolicy.h>
#include <libmnl/libmnl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "np_test.h"
#include "kselftest_harness.h"

#define GN_MODULE_PATH	"/usr/lib/numaplace/numaplace.ko"
#define GN_PMD		(2UL << 20)
#define GN_THP_ORDER	9
#define GN_NOBODY	65534
/* Nodes and folio orders the test keeps counters for. */
#define GN_NODES	64
#define GN_ORDERS	32
#define GN_ERRNOS	256
#define GN_ENGINES	3
/* An event is sent before the ioctl returns: this is plenty. */
#define GN_EVENT_MS	5000
/* The bounds of batch_pages: the spec's, which the module's policy uses. */
#define GN_BATCH_MIN	NUMAPLACE_BATCH_PAGES_MIN
#define GN_BATCH_MAX	NUMAPLACE_BATCH_PAGES_MAX
/* A test that loads and unloads the module, or migrates, in TCG. */
#define GN_TIMEOUT	120

static long psz;

/* ---- a generic netlink socket on the family (libmnl) ------------------ */

struct gn_sock {
	struct mnl_socket *sk;
	unsigned int portid, seq;
	uint16_t family;
	uint32_t events_grp;
	char *buf;			/* GN_BUF bytes */
	/* The extended ACK of the last error. */
	char msg[256];
	int bad_attr;			/* type NLMSGERR_ATTR_OFFS points at */
	int has_min, has_max;
	__u64 pol_min, pol_max;		/* NLMSGERR_ATTR_POLICY bounds */
	const struct nlmsghdr *req;
	/* CTRL_ATTR_OPS: flags by command, -1 when not listed. */
	long op_flags[NUMAPLACE_NL_CMD_MAX + 1];
};

#define GN_BUF	65536

struct gn_ctx {
	struct gn_sock *g;
	unsigned int seq;
	mnl_cb_t cb;
	void *data;
};

static int gn_policy_cb(const struct nlattr *a, void *data)
{
	struct gn_sock *g = data;

	if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
		return MNL_CB_OK;
	if (mnl_attr_get_type(a) == NL_POLICY_TYPE_ATTR_MIN_VALUE_U) {
		g->pol_min = mnl_attr_get_u64(a);
		g->has_min = 1;
	} else if (mnl_attr_get_type(a) == NL_POLICY_TYPE_ATTR_MAX_VALUE_U) {
		g->pol_max = mnl_attr_get_u64(a);
		g->has_max = 1;
	}
	return MNL_CB_OK;
}

static int gn_ext_cb(const struct nlattr *a, void *data)
{
	struct gn_sock *g = data;
	const struct nlattr *bad;
	uint32_t off;

	switch (mnl_attr_get_type(a)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(g->msg, sizeof(g->msg), "%s",
				 mnl_attr_get_str(a));
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(a, MNL_TYPE_U32) < 0 || !g->req)
			break;
		off = mnl_attr_get_u32(a);
		if (off + sizeof(*bad) > g->req->nlmsg_len)
			break;
		bad = (const struct nlattr *)((const char *)g->req + off);
		g->bad_attr = mnl_attr_get_type(bad);
		break;
	case NLMSGERR_ATTR_POLICY:
		mnl_attr_parse_nested(a, gn_policy_cb, g);
		break;
	}
	return MNL_CB_OK;
}

static int gn_err_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gn_ctx *c = data;
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*e);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(e->msg);
		mnl_attr_parse(nlh, off, gn_ext_cb, c->g);
	}
	if (!e->error)
		return MNL_CB_STOP;
	errno = -e->error;
	return MNL_CB_ERROR;
}

static int gn_done_cb(const struct nlmsghdr *nlh, void *data)
{
	int err = 0;

	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(err)))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (!err)
		return MNL_CB_STOP;
	errno = -err;
	return MNL_CB_ERROR;
}

static int gn_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gn_ctx *c = data;

	if (nlh->nlmsg_seq != c->seq)	/* a notification */
		return MNL_CB_OK;
	return c->cb ? c->cb(nlh, c->data) : MNL_CB_OK;
}

static mnl_cb_t gn_ctl[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = gn_err_cb,
	[NLMSG_DONE] = gn_done_cb,
};

static struct nlmsghdr *gn_msg(struct gn_sock *g, char *buf, uint16_t family,
			       uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *gh;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++g->seq;
	gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));
	gh->cmd = cmd;
	gh->version = family == GENL_ID_CTRL ? 1 : NUMAPLACE_FAMILY_VERSION;
	return nlh;
}

/* Send, read to the ACK or DONE. 0 or -errno; extack kept in @g. */
static int gn_talk(struct gn_sock *g, struct nlmsghdr *nlh, mnl_cb_t cb,
		   void *data)
{
	struct gn_ctx c = { g, nlh->nlmsg_seq, cb, data };
	ssize_t n;
	int ret;

	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	g->msg[0] = 0;
	g->bad_attr = -1;
	g->has_min = g->has_max = 0;
	g->req = nlh;
	if (mnl_socket_sendto(g->sk, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		n = mnl_socket_recvfrom(g->sk, g->buf, GN_BUF);
		if (n < 0)
			return -errno;
		ret = mnl_cb_run2(g->buf, n, nlh->nlmsg_seq, g->portid,
				  gn_data_cb, &c, gn_ctl, NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0)
			return -errno;
	}
}

struct gn_family {
	struct gn_sock *g;
	uint16_t id;
	uint32_t grp;
};

static int gn_op_cb(const struct nlattr *a, void *data)
{
	long *v = data;

	if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return MNL_CB_OK;
	if (mnl_attr_get_type(a) == CTRL_ATTR_OP_ID)
		v[0] = mnl_attr_get_u32(a);
	else if (mnl_attr_get_type(a) == CTRL_ATTR_OP_FLAGS)
		v[1] = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int gn_grp_cb(const struct nlattr *a, void *data)
{
	const struct nlattr **tb = data;

	if (mnl_attr_get_type(a) <= CTRL_ATTR_MCAST_GRP_MAX)
		tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static int gn_family_attr_cb(const struct nlattr *a, void *data)
{
	struct gn_family *f = data;
	const struct nlattr *n, *tb[CTRL_ATTR_MCAST_GRP_MAX + 1];
	long op[2];

	switch (mnl_attr_get_type(a)) {
	case CTRL_ATTR_FAMILY_ID:
		f->id = mnl_attr_get_u16(a);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		mnl_attr_for_each_nested(n, a) {
			memset(tb, 0, sizeof(tb));
			mnl_attr_parse_nested(n, gn_grp_cb, tb);
			if (tb[CTRL_ATTR_MCAST_GRP_NAME] &&
			    tb[CTRL_ATTR_MCAST_GRP_ID] &&
			    !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
				    NUMAPLACE_MCGRP_EVENTS))
				f->grp = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
		}
		break;
	case CTRL_ATTR_OPS:
		mnl_attr_for_each_nested(n, a) {
			op[0] = op[1] = -1;
			mnl_attr_parse_nested(n, gn_op_cb, op);
			if (op[0] >= 0 && op[0] <= NUMAPLACE_NL_CMD_MAX)
				f->g->op_flags[op[0]] = op[1];
		}
		break;
	}
	return MNL_CB_OK;
}

static int gn_family_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, GENL_HDRLEN, gn_family_attr_cb, data);
	return MNL_CB_OK;
}

/* Resolve the family and its group into @g. 0, -ENOENT (none), -errno. */
static int gn_resolve(struct gn_sock *g)
{
	struct gn_family f = { .g = g };
	char req[512] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	int ret;

	for (int i = 0; i <= NUMAPLACE_NL_CMD_MAX; i++)
		g->op_flags[i] = -1;
	nlh = gn_msg(g, req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NUMAPLACE_FAMILY_NAME);
	ret = gn_talk(g, nlh, gn_family_cb, &f);
	if (ret)
		return ret;
	g->family = f.id;
	g->events_grp = f.grp;
	return f.id ? 0 : -EPROTO;
}

static void gn_close(struct gn_sock *g)
{
	if (g->sk)
		mnl_socket_close(g->sk);
	g->sk = NULL;
	free(g->buf);
	g->buf = NULL;
}

/* Open and resolve. 0 or -errno (-ENOENT: no family). */
static int gn_open(struct gn_sock *g)
{
	int one = 1, ret;

	memset(g, 0, sizeof(*g));
	g->seq = time(NULL);
	g->buf = malloc(GN_BUF);
	g->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!g->buf || !g->sk) {
		gn_close(g);
		return -ENOMEM;
	}
	if (mnl_socket_bind(g->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		gn_close(g);
		return ret;
	}
	g->portid = mnl_socket_get_portid(g->sk);
	mnl_socket_setsockopt(g->sk, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(g->sk, NETLINK_CAP_ACK, &one, sizeof(one));
	ret = gn_resolve(g);
	if (ret)
		gn_close(g);
	return ret;
}

static int gn_join(struct gn_sock *g, uint32_t grp)
{
	return mnl_socket_setsockopt(g->sk, NETLINK_ADD_MEMBERSHIP, &grp,
				     sizeof(grp)) ? -errno : 0;
}

/* ---- STATS_GET ---------------------------------------------------------- */

struct gn_node {
	int seen;
	__u64 pages_in, pages_out;
	__u64 folios_in[GN_ORDERS], folios_out[GN_ORDERS];
};

struct gn_stats {
	int nr_global;			/* messages without a node */
	int nr_node_msgs;
	int order_ok;			/* node messages in increasing order */
	int last_node;
	__u64 query_calls, query_pages, query_runs, migrate_calls;
	__u64 bytes_copied;
	__u64 dma_pages, dma_fallback;
	__u64 fail[GN_ERRNOS];		/* pages by positive errno, 0: other */
	__u64 phase_ns[GN_ENGINES][NUMAPLACE_PHASE_MAX];
	struct gn_node node[GN_NODES];
};

struct gn_nest {
	const struct nlattr *tb[8];
};

static int gn_nest_cb(const struct nlattr *a, void *data)
{
	struct gn_nest *n = data;

	if (mnl_attr_get_type(a) < 8)
		n->tb[mnl_attr_get_type(a)] = a;
	return MNL_CB_OK;
}

static __u64 gn_u64(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 8 ? mnl_attr_get_u64(a) : 0;
}

static long gn_u32(const struct nlattr *a)
{
	return a && mnl_attr_get_payload_len(a) == 4 ? (long)mnl_attr_get_u32(a) : -1;
}

struct gn_stats_msg {
	struct gn_stats *s;
	const struct nlattr *tb[NUMAPLACE_A_STATS_MAX + 1];
	struct gn_node n;
};

static int gn_stats_attr_cb(const struct nlattr *a, void *data)
{
	struct gn_stats_msg *m = data;
	unsigned int type = mnl_attr_get_type(a);
	struct gn_nest n = { { 0 } };
	long e, p, o;

	if (type > NUMAPLACE_A_STATS_MAX)
		return MNL_CB_OK;
	switch (type) {
	case NUMAPLACE_A_STATS_ORDER:
		mnl_attr_parse_nested(a, gn_nest_cb, &n);
		o = gn_u32(n.tb[NUMAPLACE_A_ORDER_ORDER]);
		if (o >= 0 && o < GN_ORDERS) {
			m->n.folios_in[o] += gn_u64(n.tb[NUMAPLACE_A_ORDER_FOLIOS_IN]);
			m->n.folios_out[o] += gn_u64(n.tb[NUMAPLACE_A_ORDER_FOLIOS_OUT]);
		}
		break;
	case NUMAPLACE_A_STATS_FAIL:
		mnl_attr_parse_nested(a, gn_nest_cb, &n);
		e = gn_u32(n.tb[NUMAPLACE_A_FAIL_ERRNO]);
		if (e >= 0 && e < GN_ERRNOS)
			m->s->fail[e] += gn_u64(n.tb[NUMAPLACE_A_FAIL_PAGES]);
		break;
	case NUMAPLACE_A_STATS_PHASE:
		mnl_attr_parse_nested(a, gn_nest_cb, &n);
		e = gn_u32(n.tb[NUMAPLACE_A_PHASE_ENGINE]);
		p = gn_u32(n.tb[NUMAPLACE_A_PHASE_PHASE]);
		if (e > 0 && __builtin_ctzl(e) < GN_ENGINES && p >= 0 &&
		    p < NUMAPLACE_PHASE_MAX)
			m->s->phase_ns[__builtin_ctzl(e)][p] +=
				gn_u64(n.tb[NUMAPLACE_A_PHASE_NS]);
		break;
	default:
		m->tb[type] = a;
	}
	return MNL_CB_OK;
}

static int gn_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gn_stats_msg m = { .s = data };
	struct gn_stats *s = m.s;
	long node;

	mnl_attr_parse(nlh, GENL_HDRLEN, gn_stats_attr_cb, &m);
	if (!m.tb[NUMAPLACE_A_STATS_NODE]) {
		s->nr_global++;
		s->query_calls = gn_u64(m.tb[NUMAPLACE_A_STATS_QUERY_CALLS]);
		s->query_pages = gn_u64(m.tb[NUMAPLACE_A_STATS_QUERY_PAGES]);
		s->query_runs = gn_u64(m.tb[NUMAPLACE_A_STATS_QUERY_RUNS]);
		s->migrate_calls = gn_u64(m.tb[NUMAPLACE_A_STATS_MIGRATE_CALLS]);
		s->bytes_copied = gn_u64(m.tb[NUMAPLACE_A_STATS_BYTES_COPIED]);
		s->dma_pages = gn_u64(m.tb[NUMAPLACE_A_STATS_DMA_PAGES]);
		s->dma_fallback = gn_u64(m.tb[NUMAPLACE_A_STATS_DMA_FALLBACK]);
		return MNL_CB_OK;
	}
	node = gn_u32(m.tb[NUMAPLACE_A_STATS_NODE]);
	s->nr_node_msgs++;
	if (node <= s->last_node || !s->nr_global)
		s->order_ok = 0;
	s->last_node = node;
	if (node < 0 || node >= GN_NODES)
		return MNL_CB_OK;
	m.n.seen = s->node[node].seen + 1;
	m.n.pages_in = gn_u64(m.tb[NUMAPLACE_A_STATS_PAGES_IN]);
	m.n.pages_out = gn_u64(m.tb[NUMAPLACE_A_STATS_PAGES_OUT]);
	s->node[node] = m.n;
	return MNL_CB_OK;
}

static int gn_stats(struct gn_sock *g, struct gn_stats *s)
{
	char req[256] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;

	memset(s, 0, sizeof(*s));
	s->order_ok = 1;
	s->last_node = -1;
	nlh = gn_msg(g, req, g->family, NUMAPLACE_NL_CMD_STATS_GET, NLM_F_DUMP);
	return gn_talk(g, nlh, gn_stats_cb, s);
}

/* ---- CONFIG_GET / CONFIG_SET --------------------------------------------- */

struct gn_config {
	long engine, batch_pages;	/* -1: absent */
	long copy_workers, dma;
};

static int gn_config_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gn_config *c = data;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) == NUMAPLACE_A_CONFIG_ENGINE)
			c->engine = gn_u32(a);
		else if (mnl_attr_get_type(a) == NUMAPLACE_A_CONFIG_BATCH_PAGES)
			c->batch_pages = gn_u32(a);
		else if (mnl_attr_get_type(a) == NUMAPLACE_A_CONFIG_COPY_WORKERS)
			c->copy_workers = gn_u32(a);
		else if (mnl_attr_get_type(a) == NUMAPLACE_A_CONFIG_DMA)
			c->dma = gn_u32(a);
	}
	return MNL_CB_OK;
}

static int gn_config_get(struct gn_sock *g, struct gn_config *c)
{
	char req[256] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;

	c->engine = c->batch_pages = c->copy_workers = c->dma = -1;
	nlh = gn_msg(g, req, g->family, NUMAPLACE_NL_CMD_CONFIG_GET, 0);
	return gn_talk(g, nlh, gn_config_cb, c);
}

/* Values below 0 are left out of the request. 0 or -errno. */
static int gn_config_set(struct gn_sock *g, long long engine,
			 long long batch_pages)
{
	static char req[256] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;

	nlh = gn_msg(g, req, g->family, NUMAPLACE_NL_CMD_CONFIG_SET, 0);
	if (engine >= 0)
		mnl_attr_put_u32(nlh, NUMAPLACE_A_CONFIG_ENGINE, engine);
	if (batch_pages >= 0)
		mnl_attr_put_u32(nlh, NUMAPLACE_A_CONFIG_BATCH_PAGES, batch_pages);
	return gn_talk(g, nlh, NULL, NULL);
}

/* Set one u32 knob. 0 or -errno (g->msg: the kernel's extack message). */
static int gn_config_set_u32(struct gn_sock *g, __u16 attr, __u32 val)
{
	static char req[256] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;

	nlh = gn_msg(g, req, g->family, NUMAPLACE_NL_CMD_CONFIG_SET, 0);
	mnl_attr_put_u32(nlh, attr, val);
	return gn_talk(g, nlh, NULL, NULL);
}

/* ---- MIGRATE_DONE --------------------------------------------------------- */

struct gn_event {
	int got;
	long pid, engines, error;
	__u64 pages, bytes, duration_ns, failed;
};

static int gn_event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gn_event *ev = data;
	const struct nlattr *a;
	const struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);

	if (gh->cmd != NUMAPLACE_NL_CMD_MIGRATE_DONE)
		return MNL_CB_OK;
	ev->got++;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		switch (mnl_attr_get_type(a)) {
		case NUMAPLACE_A_EVENT_PID:
			ev->pid = gn_u32(a);
			break;
		case NUMAPLACE_A_EVENT_ENGINES:
			ev->engines = gn_u32(a);
			break;
		case NUMAPLACE_A_EVENT_ERROR:
			ev->error = gn_u32(a);
			break;
		case NUMAPLACE_A_EVENT_PAGES:
			ev->pages = gn_u64(a);
			break;
		case NUMAPLACE_A_EVENT_BYTES:
			ev->bytes = gn_u64(a);
			break;
		case NUMAPLACE_A_EVENT_DURATION_NS:
			ev->duration_ns = gn_u64(a);
			break;
		case NUMAPLACE_A_EVENT_FAILED:
			ev->failed = gn_u64(a);
			break;
		}
	}
	return MNL_CB_OK;
}

/*
 * Read the events queued on @g within @ms (0: only what is there). The
 * last one is in *@ev, ev->got counts them. 0 or -errno.
 */
static int gn_events(struct gn_sock *g, struct gn_event *ev, int ms)
{
	struct pollfd pfd = { .fd = mnl_socket_get_fd(g->sk), .events = POLLIN };
	ssize_t n;
	int ret;

	memset(ev, 0, sizeof(*ev));
	ev->pid = ev->engines = ev->error = -1;
	for (;;) {
		ret = poll(&pfd, 1, ev->got ? 0 : ms);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret <= 0)
			return ret < 0 ? -errno : 0;
		n = recv(pfd.fd, g->buf, GN_BUF, 0);
		if (n < 0)
			return -errno;
		if (mnl_cb_run(g->buf, n, 0, 0, gn_event_cb, ev) < 0)
			return -errno;
	}
}

/* ---- memory, migration, module ------------------------------------------- */

/* @len bytes of private anonymous memory aligned to a PMD. */
static char *gn_map(size_t len)
{
	char *raw, *p;

	raw = mmap(NULL, len + GN_PMD, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + GN_PMD - 1) & ~(GN_PMD - 1));
	if (p > raw)
		munmap(raw, p - raw);
	munmap(p + len, raw + GN_PMD - p);
	return p;
}

/* set_mempolicy(2) with one node, or MPOL_DEFAULT (@node < 0). */
static int gn_mempolicy(int mode, int node)
{
	unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };

	if (node >= 0)
		mask[node / 64] = 1UL << (node % 64);
	return syscall(SYS_set_mempolicy, mode, node >= 0 ? mask : NULL,
		       node >= 0 ? NUMAPLACE_MAX_NODES + 1 : 0) ? -errno : 0;
}

/*
 * Write pages [first, first + n) of @p with memory bound to @node. Never
 * with zeros: 6.12 maps the zero-filled pages of a THP it splits to the
 * shared zero page.
 */
static int gn_touch_on(char *p, size_t first, size_t n, int node)
{
	int ret = gn_mempolicy(MPOL_BIND, node);

	if (ret)
		return ret;
	for (size_t i = first; i < first + n; i++)
		memset(p + i * psz, 1 + (int)(i % 251), psz);
	return gn_mempolicy(MPOL_DEFAULT, -1);
}

static int gn_migrate(int fd, int pid, __u32 flags, const void *start,
		      size_t len, int node, __s32 *status,
		      struct numaplace_migrate *m)
{
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	m->flags = flags;
	m->pid = pid;
	m->policy = NUMAPLACE_POLICY_NODE;
	m->start = (uintptr_t)start;
	m->len = len;
	m->node = node;
	m->status_ptr = (uintptr_t)status;
	return np_ioctl(fd, NUMAPLACE_IOC_MIGRATE, m);
}

/* The errno a NUMAPLACE_FAIL_* slot is reported with (0: other). */
static int gn_fail_errno(int slot)
{
	static const int errnos[NUMAPLACE_FAIL_OTHER] = {
		[NUMAPLACE_FAIL_ENOMEM] = ENOMEM,
		[NUMAPLACE_FAIL_EBUSY] = EBUSY,
		[NUMAPLACE_FAIL_EACCES] = EACCES,
		[NUMAPLACE_FAIL_EFAULT] = EFAULT,
		[NUMAPLACE_FAIL_ENOENT] = ENOENT,
	};

	return slot < NUMAPLACE_FAIL_OTHER ? errnos[slot] : 0;
}

static int gn_loaded(void)
{
	struct stat st;

	return stat("/sys/module/numaplace", &st) == 0;
}

static int gn_load(void)
{
	int fd = open(GN_MODULE_PATH, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int gn_unload(void)
{
	return syscall(SYS_delete_module, "numaplace", O_NONBLOCK) ? -errno : 0;
}

/* Drop capability @cap from the effective and permitted sets. */
static int gn_drop_cap(int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[cap / 32].effective &= ~(1U << (cap % 32));
	d[cap / 32].permitted &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* ---- the fixture ------------------------------------------------------- */

FIXTURE(genl)
{
	int fd;
	struct gn_sock g;
	struct numaplace_info info;
	struct gn_config saved;		/* restored in the teardown */
	__u32 engines;			/* NUMAPLACE_ENGINE_* this host has */
	int unloaded;			/* the test unloads the module */
};

/* The 6.1 harness runs the body after a SKIP() in FIXTURE_SETUP(). */
#define GN_SKIPPED()							\
	do {								\
		if (_metadata->skip)					\
			return;						\
	} while (0)

FIXTURE_SETUP(genl)
{
	int ret;

	self->fd = -1;
	psz = sysconf(_SC_PAGESIZE);
	ret = np_open();
	if (ret == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(ret, 0);
	self->fd = ret;
	ASSERT_EQ(0, np_get_info(self->fd, &self->info));
	ret = gn_open(&self->g);
	if (ret == -ENOENT)
		SKIP(return, "no generic netlink family " NUMAPLACE_FAMILY_NAME);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, gn_config_get(&self->g, &self->saved));
	if (self->info.features & NUMAPLACE_FEAT_MIGRATE_KERNEL)
		self->engines |= NUMAPLACE_ENGINE_KERNEL;
	if (self->info.features & NUMAPLACE_FEAT_MIGRATE_VMA)
		self->engines |= NUMAPLACE_ENGINE_VMA;
	if (self->info.features & NUMAPLACE_FEAT_MIGRATE_BATCH)
		self->engines |= NUMAPLACE_ENGINE_BATCH;
	/* Its scanner would move and mark pages at random moments. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
}

FIXTURE_TEARDOWN(genl)
{
	/* A test that failed with the module unloaded loads it back. */
	if (self->unloaded && !gn_loaded())
		gn_load();
	if (self->g.sk && self->saved.engine >= 0) {
		gn_close(&self->g);
		if (!gn_open(&self->g)) {
			EXPECT_EQ(0, gn_config_set(&self->g, self->saved.engine,
						   self->saved.batch_pages))
				TH_LOG("restoring the knobs: %s", self->g.msg);
		}
	}
	gn_close(&self->g);
	if (self->fd >= 0)
		close(self->fd);
}

/* Nodes 0 and 1 with memory, or SKIP. */
#define GN_NEED_TWO_NODES()						\
	do {								\
		if (!np_node_isset(self->info.node_memory, 0) ||	\
		    !np_node_isset(self->info.node_memory, 1))		\
			SKIP(return, "needs nodes 0 and 1 with memory");\
	} while (0)

TEST_F(genl, family)
{
	GN_SKIPPED();
	EXPECT_NE(0, self->g.family);
	EXPECT_NE(0, self->g.events_grp) TH_LOG("no \"events\" group");
	EXPECT_EQ(GENL_CMD_CAP_DUMP,
		  self->g.op_flags[NUMAPLACE_NL_CMD_STATS_GET] & (GENL_CMD_CAP_DUMP |
							      GENL_ADMIN_PERM));
	EXPECT_EQ(GENL_CMD_CAP_DO,
		  self->g.op_flags[NUMAPLACE_NL_CMD_CONFIG_GET] & (GENL_CMD_CAP_DO |
							       GENL_ADMIN_PERM));
	EXPECT_EQ(GENL_CMD_CAP_DO | GENL_ADMIN_PERM,
		  self->g.op_flags[NUMAPLACE_NL_CMD_CONFIG_SET] & (GENL_CMD_CAP_DO |
							       GENL_ADMIN_PERM));
	/* An event is no request. */
	EXPECT_EQ(-1, self->g.op_flags[NUMAPLACE_NL_CMD_MIGRATE_DONE]);
}

/* One global message, then one per online node, each once, in order. */
TEST_F(genl, stats_dump_shape)
{
	__u64 online[NUMAPLACE_NODE_WORDS];
	struct gn_stats s;
	int top, n;

	GN_SKIPPED();
	top = np_read_nodelist("/sys/devices/system/node/online", online);
	ASSERT_GT(top, 0);
	ASSERT_EQ(0, gn_stats(&self->g, &s));
	EXPECT_EQ(1, s.nr_global);
	EXPECT_TRUE(s.order_ok) TH_LOG("node messages out of order");
	for (n = 0; n < GN_NODES; n++) {
		EXPECT_EQ(np_node_isset(online, n) ? 1 : 0, s.node[n].seen)
			TH_LOG("node %d", n);
	}
	/* Counters only grow; a second dump is never below the first. */
	{
		struct gn_stats t;

		ASSERT_EQ(0, gn_stats(&self->g, &t));
		EXPECT_LE(s.query_calls, t.query_calls);
		EXPECT_LE(s.migrate_calls, t.migrate_calls);
	}
}

/* QUERY in range mode with runs, with a short runs buffer, in array mode. */
TEST_F(genl, stats_query_exact)
{
	const size_t n = 64;
	struct numaplace_run runs[64];
	struct numaplace_query q;
	struct gn_stats a, b;
	__u64 addrs[10];
	char *p;

	GN_SKIPPED();
	if (!(self->info.features & NUMAPLACE_FEAT_QUERY))
		SKIP(return, "no NUMAPLACE_FEAT_QUERY");
	p = gn_map(n * psz);
	ASSERT_NE(NULL, p);
	/* Touched and untouched stretches of 8 pages: several runs. */
	for (size_t i = 0; i < n; i += 16)
		memset(p + i * psz, 1, 8 * psz);

	ASSERT_EQ(0, gn_stats(&self->g, &a));
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, n * psz, runs,
				    64, NULL, NULL, 0, &q));
	ASSERT_EQ(0, gn_stats(&self->g, &b));
	EXPECT_EQ(n, q.done);
	EXPECT_GE(q.nr_runs, 8);
	EXPECT_EQ(1, b.query_calls - a.query_calls);
	EXPECT_EQ(n, b.query_pages - a.query_pages);
	EXPECT_EQ(q.nr_runs, b.query_runs - a.query_runs);
	EXPECT_EQ(0, b.migrate_calls - a.migrate_calls);
	EXPECT_EQ(0, b.bytes_copied - a.bytes_copied);

	/* Two runs fit: the call stops short, the counters say what it did. */
	ASSERT_EQ(0, gn_stats(&self->g, &a));
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, n * psz, runs,
				    2, NULL, NULL, 0, &q));
	ASSERT_EQ(0, gn_stats(&self->g, &b));
	EXPECT_EQ(2, q.nr_runs);
	EXPECT_LT(q.done, n);
	EXPECT_EQ(1, b.query_calls - a.query_calls);
	EXPECT_EQ(q.done, b.query_pages - a.query_pages);
	EXPECT_EQ(2, b.query_runs - a.query_runs);

	/* Array mode: addresses answered, no runs. */
	for (size_t i = 0; i < 10; i++)
		addrs[i] = (uintptr_t)p + i * 3 * psz;
	ASSERT_EQ(0, gn_stats(&self->g, &a));
	ASSERT_EQ(0, np_query_array(self->fd, 0, 0, addrs, 10, NULL, NULL, 0,
				    &q));
	ASSERT_EQ(0, gn_stats(&self->g, &b));
	EXPECT_EQ(1, b.query_calls - a.query_calls);
	EXPECT_EQ(10, b.query_pages - a.query_pages);
	EXPECT_EQ(0, b.query_runs - a.query_runs);
	munmap(p, n * psz);
}

/*
 * A migration of 16 written 4 KiB pages, 16 never-touched ones (ENOENT)
 * and a THP from node 0 to 1, kernel engine: every counter moves by what
 * the call reports, node by node and order by order, and nothing else.
 */
TEST_F_TIMEOUT(genl, stats_migrate_exact, GN_TIMEOUT)
{
	const size_t small = 32, thp = GN_PMD / psz, total = small + thp;
	struct numaplace_run runs[16];
	struct numaplace_migrate m;
	struct numaplace_query q;
	struct gn_stats a, b;
	__u64 d_in, d_out, pages;
	__s32 *status;
	char *p, *start;
	int has_thp = 0, bad = 0;

	GN_SKIPPED();
	GN_NEED_TWO_NODES();
	if (!(self->engines & NUMAPLACE_ENGINE_KERNEL))
		SKIP(return, "no kernel engine");
	/* [0, 2 MiB) no THP, [2 MiB, 4 MiB) a THP; the call takes the last
	 * 32 pages of the first half and the whole second half.
	 */
	p = gn_map(2 * GN_PMD);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, GN_PMD, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, madvise(p + GN_PMD, GN_PMD, MADV_HUGEPAGE));
	start = p + GN_PMD - small * psz;
	ASSERT_EQ(0, gn_touch_on(start, 0, small / 2, 0));
	ASSERT_EQ(0, gn_touch_on(p + GN_PMD, 0, thp, 0));
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p + GN_PMD,
				    GN_PMD, runs, 16, NULL, NULL, 0, &q));
	has_thp = q.nr_runs == 1 && (runs[0].kind & NUMAPLACE_KIND_PMD) &&
		  runs[0].node == 0;
	if (!has_thp)
		SKIP(return, "no PMD-mapped THP on node 0 (THP disabled?)");
	status = calloc(total, sizeof(*status));
	ASSERT_NE(NULL, status);

	ASSERT_EQ(0, gn_stats(&self->g, &a));
	ASSERT_EQ(0, gn_migrate(self->fd, 0, NUMAPLACE_MIGRATE_ENGINE_KERNEL,
				start, total * psz, 1, status, &m));
	ASSERT_EQ(0, gn_stats(&self->g, &b));

	/* The call itself, as the layout says. */
	EXPECT_EQ(total, m.done);
	EXPECT_EQ(small / 2 + thp, m.nr_moved_pages);
	EXPECT_EQ(small / 2 + 1, m.nr_moved_folios);
	EXPECT_EQ(small / 2, m.nr_failed_pages);
	EXPECT_EQ(small / 2, m.nr_failed[NUMAPLACE_FAIL_ENOENT]);
	EXPECT_EQ(NUMAPLACE_ENGINE_KERNEL, m.engines);
	for (size_t i = 0; i < total; i++)
		bad += status[i] != (i >= small / 2 && i < small ? -ENOENT : 1);
	EXPECT_EQ(0, bad);

	/* Global. */
	EXPECT_EQ(1, b.migrate_calls - a.migrate_calls);
	EXPECT_EQ(0, b.query_calls - a.query_calls);
	EXPECT_EQ(0, b.query_pages - a.query_pages);
	EXPECT_EQ(m.nr_moved_pages * psz, b.bytes_copied - a.bytes_copied);
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++) {
		int e = gn_fail_errno(r);
		__u64 want = 0;

		/* Every slot of one errno (0 for the others) adds up. */
		for (int s = 0; s < NUMAPLACE_FAIL_MAX; s++)
			if (gn_fail_errno(s) == e)
				want += m.nr_failed[s];
		EXPECT_EQ(want, b.fail[e] - a.fail[e]) TH_LOG("errno %d", e);
	}
	for (int e = 0; e < GN_ERRNOS; e++) {
		if (e == 0 || e == ENOMEM || e == EBUSY || e == EACCES ||
		    e == EFAULT || e == ENOENT)
			continue;
		EXPECT_EQ(0, b.fail[e] - a.fail[e]) TH_LOG("errno %d", e);
	}
	/* The kernel engine's time; the migrate_vma engine's did not move. */
	EXPECT_LT(a.phase_ns[0][NUMAPLACE_PHASE_MIGRATE],
		  b.phase_ns[0][NUMAPLACE_PHASE_MIGRATE]);
	EXPECT_LT(a.phase_ns[0][NUMAPLACE_PHASE_COLLECT],
		  b.phase_ns[0][NUMAPLACE_PHASE_COLLECT]);
	EXPECT_LT(a.phase_ns[0][NUMAPLACE_PHASE_RESOLVE],
		  b.phase_ns[0][NUMAPLACE_PHASE_RESOLVE]);
	for (int ph = 0; ph < NUMAPLACE_PHASE_MAX; ph++) {
		EXPECT_EQ(a.phase_ns[1][ph], b.phase_ns[1][ph])
			TH_LOG("vma phase %d", ph);
	}

	/* Per node: 0 -> 1 only, by exactly the pages and folios moved. */
	for (int n = 0; n < GN_NODES; n++) {
		d_in = b.node[n].pages_in - a.node[n].pages_in;
		d_out = b.node[n].pages_out - a.node[n].pages_out;
		EXPECT_EQ(n == 1 ? m.nr_moved_pages : 0, d_in) TH_LOG("node %d in", n);
		EXPECT_EQ(n == 0 ? m.nr_moved_pages : 0, d_out) TH_LOG("node %d out", n);
		pages = 0;
		for (int o = 0; o < GN_ORDERS; o++) {
			__u64 fi = b.node[n].folios_in[o] - a.node[n].folios_in[o];
			__u64 fo = b.node[n].folios_out[o] - a.node[n].folios_out[o];
			__u64 want = o == 0 ? small / 2 : o == GN_THP_ORDER ? 1 : 0;

			EXPECT_EQ(n == 1 ? want : 0, fi) TH_LOG("node %d order %d in", n, o);
			EXPECT_EQ(n == 0 ? want : 0, fo) TH_LOG("node %d order %d out", n, o);
			pages += fi << o;
		}
		EXPECT_EQ(d_in, pages) TH_LOG("node %d: folios by order vs pages", n);
	}
	free(status);
	munmap(p, 2 * GN_PMD);
}

/*
 * What arrived: the folios the pages of [p, p + n * psz) whose status is
 * @node now belong to, counted by order from /proc/self/pagemap and
 * /proc/kpageflags (a THP's pages carry KPF_THP; THPs are aligned in the
 * PFN space). *@pages gets the base pages of those folios. 0 or -errno.
 */
static int gn_census(const char *p, size_t n, const __s32 *status, int node,
		     __u64 *folios, __u64 *pages)
{
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	unsigned long last_thp = ~0UL, pfn;
	__u64 e, f;
	int ret = 0;

	memset(folios, 0, GN_ORDERS * sizeof(*folios));
	*pages = 0;
	if (pm < 0 || kpf < 0) {
		ret = -errno;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (status[i] != node)
			continue;
		if (pread(pm, &e, 8, ((uintptr_t)p / psz + i) * 8) != 8 ||
		    !(e & NP_PM_PRESENT)) {
			ret = -EIO;
			goto out;
		}
		pfn = e & NP_PM_PFN_MASK;
		if (pread(kpf, &f, 8, pfn * 8) != 8) {
			ret = -EIO;
			goto out;
		}
		if (!(f & (1ULL << KPF_THP))) {
			folios[0]++;
			*pages += 1;
		} else if (pfn >> GN_THP_ORDER != last_thp) {
			last_thp = pfn >> GN_THP_ORDER;
			folios[GN_THP_ORDER]++;
			*pages += 1UL << GN_THP_ORDER;
		}
	}
out:
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
	return ret;
}

/*
 * A THP with one page unmapped (MADV_DONTNEED: PTE-mapped, partially
 * mapped), node 0 to 1 by the kernel engine. 6.12's migrate_pages()
 * splits such a folio before it moves it (kernel-facts 3.4 (a)); 6.1
 * moves it whole. Either way the counters must say what arrived: the
 * folios, by order, that the moved pages now belong to, and their pages.
 * (The same split happens on both kernels when the target node has no
 * free 2 MiB block.)
 */
TEST_F_TIMEOUT(genl, stats_migrate_partial_thp, GN_TIMEOUT)
{
	const size_t n = GN_PMD / psz;
	__u64 want[GN_ORDERS], want_pages, d_in, d_out;
	struct numaplace_run runs[16];
	struct numaplace_migrate m;
	struct numaplace_query q;
	struct gn_stats a, b;
	__s32 *status;
	char *p;

	GN_SKIPPED();
	GN_NEED_TWO_NODES();
	if (!(self->engines & NUMAPLACE_ENGINE_KERNEL))
		SKIP(return, "no kernel engine");
	p = gn_map(GN_PMD);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, GN_PMD, MADV_HUGEPAGE));
	ASSERT_EQ(0, gn_touch_on(p, 0, n, 0));
	ASSERT_EQ(0, np_query_range(self->fd, 0, 0, (uintptr_t)p, GN_PMD, runs,
				    16, NULL, NULL, 0, &q));
	if (q.nr_runs != 1 || !(runs[0].kind & NUMAPLACE_KIND_PMD))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");
	ASSERT_EQ(0, madvise(p + (n - 1) * psz, psz, MADV_DONTNEED));
	status = calloc(n, sizeof(*status));
	ASSERT_NE(NULL, status);

	ASSERT_EQ(0, gn_stats(&self->g, &a));
	ASSERT_EQ(0, gn_migrate(self->fd, 0, NUMAPLACE_MIGRATE_ENGINE_KERNEL,
				p, GN_PMD, 1, status, &m));
	ASSERT_EQ(0, gn_stats(&self->g, &b));
	ASSERT_EQ(0, gn_census(p, n, status, 1, want, &want_pages));
	TH_LOG("moved %llu pages, %llu folios; arrived: %llu order-0, %llu order-9 folios",
	       (unsigned long long)m.nr_moved_pages,
	       (unsigned long long)m.nr_moved_folios,
	       (unsigned long long)want[0],
	       (unsigned long long)want[GN_THP_ORDER]);
	for (size_t i = 0, logged = 0; i < n && logged < NP_LOG_MAX; i++) {
		if (status[i] != 1 && i != n - 1) {
			TH_LOG("page %zu not moved: %d", i, status[i]);
			logged++;
		}
	}
	EXPECT_EQ(n - 1, m.nr_moved_pages);
	EXPECT_EQ(1, m.nr_failed[NUMAPLACE_FAIL_ENOENT]);
	EXPECT_EQ(NUMAPLACE_ENGINE_KERNEL, m.engines);
	EXPECT_EQ(want_pages * psz, b.bytes_copied - a.bytes_copied);
	for (int nd = 0; nd < 2; nd++) {
		d_in = b.node[nd].pages_in - a.node[nd].pages_in;
		d_out = b.node[nd].pages_out - a.node[nd].pages_out;
		EXPECT_EQ(nd == 1 ? want_pages : 0, d_in) TH_LOG("node %d in", nd);
		EXPECT_EQ(nd == 0 ? want_pages : 0, d_out) TH_LOG("node %d out", nd);
		for (int o = 0; o < GN_ORDERS; o++) {
			__u64 fi = b.node[nd].folios_in[o] - a.node[nd].folios_in[o];
			__u64 fo = b.node[nd].folios_out[o] - a.node[nd].folios_out[o];

			EXPECT_EQ(nd == 1 ? want[o] : 0, fi)
				TH_LOG("node %d order %d in", nd, o);
			EXPECT_EQ(nd == 0 ? want[o] : 0, fo)
				TH_LOG("node %d order %d out", nd, o);
		}
	}
	free(status);
	munmap(p, GN_PMD);
}

/*
 * Child: drop privileges as told (nobody, or root without CAP_SYS_ADMIN
 * but with CAP_NET_ADMIN), then CONFIG_SET must be EPERM and joining the
 * events group too (its messages name other users' processes).
 */
static int gn_unprivileged_child(int as_nobody)
{
	struct gn_config c;
	struct gn_stats s;
	struct gn_sock g;
	int ret;

	if (as_nobody) {
		if (setgroups(0, NULL) || setgid(GN_NOBODY) || setuid(GN_NOBODY))
			return 10;
	} else if (gn_drop_cap(CAP_SYS_ADMIN)) {
		return 11;
	}
	if (gn_open(&g))
		return 12;
	ret = gn_config_set(&g, NUMAPLACE_CONFIG_ENGINE_AUTO, -1);
	if (ret != -EPERM) {
		fprintf(stderr, "# CONFIG_SET without CAP_SYS_ADMIN: %d (%s)\n",
			ret, g.msg);
		return 13;
	}
	ret = gn_join(&g, g.events_grp);
	if (ret != -EPERM) {
		fprintf(stderr, "# joined \"events\" without CAP_SYS_ADMIN: %d\n",
			ret);
		return 16;
	}
	/* Reading is open to all. */
	if (gn_config_get(&g, &c) || c.engine < 0 || c.batch_pages < 0)
		return 14;
	if (gn_stats(&g, &s) || s.nr_global != 1)
		return 15;
	gn_close(&g);
	return 0;
}

static int gn_run_child(int as_nobody)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(gn_unprivileged_child(as_nobody));
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(genl, config_unprivileged)
{
	struct gn_config c;

	GN_SKIPPED();
	EXPECT_EQ(0, gn_run_child(1)) TH_LOG("as nobody");
	EXPECT_EQ(0, gn_run_child(0)) TH_LOG("as root without CAP_SYS_ADMIN");
	ASSERT_EQ(0, gn_config_get(&self->g, &c));
	EXPECT_EQ(self->saved.engine, c.engine);
	EXPECT_EQ(self->saved.batch_pages, c.batch_pages);
}

/* What the kernel said when it refused a request. */
struct gn_refusal {
	char msg[256];
	int has_min, has_max;
	__u64 min, max;
};

/*
 * A refused CONFIG_SET: an error, an extack message (kept in *@r),
 * nothing changed.
 */
static void gn_expect_refused(struct __test_metadata *_metadata,
			      FIXTURE_DATA(genl) *self, long long engine,
			      long long batch, int bad_attr, const char *what,
			      struct gn_refusal *r)
{
	struct gn_config c;
	int ret;

	ret = gn_config_set(&self->g, engine, batch);
	memcpy(r->msg, self->g.msg, sizeof(r->msg));
	r->has_min = self->g.has_min;
	r->has_max = self->g.has_max;
	r->min = self->g.pol_min;
	r->max = self->g.pol_max;
	EXPECT_GT(0, ret) TH_LOG("%s: accepted", what);
	EXPECT_NE(0, self->g.msg[0]) TH_LOG("%s: no extack message", what);
	if (bad_attr > 0) {
		EXPECT_EQ(bad_attr, self->g.bad_attr)
			TH_LOG("%s: extack points at %d (\"%s\")", what,
			       self->g.bad_attr, self->g.msg);
	}
	TH_LOG("%s: %s: \"%s\"", what, strerror(-ret), self->g.msg);
	ASSERT_EQ(0, gn_config_get(&self->g, &c));
	EXPECT_EQ(self->saved.engine, c.engine) TH_LOG("%s", what);
	EXPECT_EQ(self->saved.batch_pages, c.batch_pages) TH_LOG("%s", what);
}

TEST_F(genl, config_bad_values)
{
	struct gn_refusal r;
	struct gn_config c;
	int ret;

	GN_SKIPPED();
	ASSERT_GE(self->saved.engine, 0);
	ASSERT_GE(self->saved.batch_pages, 0);
	gn_expect_refused(_metadata, self, -1, 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=1", &r);
	/* The range is in the message or in the policy the kernel sent. */
	EXPECT_TRUE(strstr(r.msg, "range") ||
		    (r.has_min && r.min == GN_BATCH_MIN))
		TH_LOG("\"%s\"", r.msg);
	if (r.has_min && r.has_max) {
		EXPECT_EQ(GN_BATCH_MIN, r.min);
		EXPECT_EQ(GN_BATCH_MAX, r.max);
	} else {
		TH_LOG("no policy bounds in the extended ACK");
	}
	gn_expect_refused(_metadata, self, -1, 1000000,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=1000000", &r);
	gn_expect_refused(_metadata, self, -1, GN_BATCH_MIN - 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=511", &r);
	gn_expect_refused(_metadata, self, -1, GN_BATCH_MAX + 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES, "batch_pages=65537", &r);
	gn_expect_refused(_metadata, self, 9, -1, NUMAPLACE_A_CONFIG_ENGINE,
			  "engine=9", &r);
	gn_expect_refused(_metadata, self, 0x80000000LL, -1,
			  NUMAPLACE_A_CONFIG_ENGINE, "engine=2^31", &r);
	if (!(self->engines & NUMAPLACE_ENGINE_BATCH)) {
		gn_expect_refused(_metadata, self, NUMAPLACE_CONFIG_ENGINE_BATCH,
				  -1, NUMAPLACE_A_CONFIG_ENGINE,
				  "engine=batch (not on this host)", &r);
		/* All or nothing: the good batch_pages is not taken either. */
		gn_expect_refused(_metadata, self, NUMAPLACE_CONFIG_ENGINE_BATCH,
				  1024, NUMAPLACE_A_CONFIG_ENGINE,
				  "engine=batch batch_pages=1024", &r);
	}
	gn_expect_refused(_metadata, self, NUMAPLACE_CONFIG_ENGINE_KERNEL, 1,
			  NUMAPLACE_A_CONFIG_BATCH_PAGES,
			  "engine=kernel batch_pages=1", &r);
	gn_expect_refused(_metadata, self, -1, -1, 0, "nothing to set", &r);

	/* The bounds themselves are good. */
	EXPECT_EQ(0, gn_config_set(&self->g, -1, GN_BATCH_MIN)) TH_LOG("%s", self->g.msg);
	ASSERT_EQ(0, gn_config_get(&self->g, &c));
	EXPECT_EQ(GN_BATCH_MIN, c.batch_pages);
	EXPECT_EQ(0, gn_config_set(&self->g, -1, GN_BATCH_MAX)) TH_LOG("%s", self->g.msg);
	ASSERT_EQ(0, gn_config_get(&self->g, &c));
	EXPECT_EQ(GN_BATCH_MAX, c.batch_pages);
	ret = gn_config_set(&self->g, self->saved.engine, self->saved.batch_pages);
	EXPECT_EQ(0, ret);
}

/* Migrate @n pages of @p (bound to node @from) to @to, no engine flag. */
static int gn_migrate_default(int fd, char *p, size_t n, int to,
			      struct numaplace_migrate *m)
{
	return gn_migrate(fd, 0, 0, p, n * psz, to, NULL, m);
}

TEST_F_TIMEOUT(genl, config_roundtrip_engine, GN_TIMEOUT)
{
	static const struct {
		__u32 config, engine;
	} engines[] = {
		{ NUMAPLACE_CONFIG_ENGINE_KERNEL, NUMAPLACE_ENGINE_KERNEL },
		{ NUMAPLACE_CONFIG_ENGINE_VMA, NUMAPLACE_ENGINE_VMA },
		{ NUMAPLACE_CONFIG_ENGINE_BATCH, NUMAPLACE_ENGINE_BATCH },
	};
	const size_t n = 64;
	struct numaplace_migrate m;
	struct gn_config c;
	int to = 1;
	char *p;

	GN_SKIPPED();
	GN_NEED_TWO_NODES();
	p = gn_map(n * psz);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, n * psz, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, gn_touch_on(p, 0, n, 0));

	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++) {
		if (!(self->engines & engines[i].engine))
			continue;
		ASSERT_EQ(0, gn_config_set(&self->g, engines[i].config, 1024))
			TH_LOG("engine %u: %s", engines[i].config, self->g.msg);
		ASSERT_EQ(0, gn_config_get(&self->g, &c));
		EXPECT_EQ(engines[i].config, c.engine);
		EXPECT_EQ(1024, c.batch_pages);
		/* Private anonymous 4 KiB pages: every engine takes them. */
		ASSERT_EQ(0, gn_migrate_default(self->fd, p, n, to, &m));
		EXPECT_EQ(n, m.nr_moved_pages) TH_LOG("engine %u", engines[i].config);
		EXPECT_EQ(engines[i].engine, m.engines)
			TH_LOG("configured %u, used %#x", engines[i].config, m.engines);
		to = !to;
	}
	ASSERT_EQ(0, gn_config_set(&self->g, NUMAPLACE_CONFIG_ENGINE_AUTO,
				   self->saved.batch_pages));
	ASSERT_EQ(0, gn_config_get(&self->g, &c));
	EXPECT_EQ(NUMAPLACE_CONFIG_ENGINE_AUTO, c.engine);
	ASSERT_EQ(0, gn_migrate_default(self->fd, p, n, to, &m));
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines & ~self->engines);
	/* An explicit engine flag wins over the configured engine. */
	if ((self->engines & NUMAPLACE_ENGINE_VMA) &&
	    (self->engines & NUMAPLACE_ENGINE_KERNEL)) {
		ASSERT_EQ(0, gn_config_set(&self->g, NUMAPLACE_CONFIG_ENGINE_VMA, -1));
		ASSERT_EQ(0, gn_migrate(self->fd, 0, NUMAPLACE_MIGRATE_ENGINE_KERNEL,
					p, n * psz, !to, NULL, &m));
		EXPECT_EQ(NUMAPLACE_ENGINE_KERNEL, m.engines);
	}
	munmap(p, n * psz);
}

/*
 * The batched engine's copy knobs: every worker count and the DMA switch
 * move every page with its data; without a DMA channel (the guest has
 * none) every page of a DMA copy is counted as a CPU fallback, with one
 * each is counted once; out-of-range values are refused and change
 * nothing.
 */
TEST_F_TIMEOUT(genl, batch_workers_dma, GN_TIMEOUT)
{
	static const __u32 workers[] = { 1, 2, 8, 0 };
	const size_t n = 1024;	/* 2 shares of at least NP_COPY_SHARE_MIN */
	struct numaplace_migrate m;
	struct gn_stats a, b;
	struct gn_config c;
	int to = 1, bad;
	char *p;

	GN_SKIPPED();
	GN_NEED_TWO_NODES();
	if (!(self->engines & NUMAPLACE_ENGINE_BATCH))
		SKIP(return, "no batched engine");
	p = gn_map(n * psz);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, n * psz, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, gn_touch_on(p, 0, n, 0));
	for (size_t w = 0; w < sizeof(workers) / sizeof(workers[0]); w++) {
		for (__u32 dma = 0; dma <= 1; dma++) {
			ASSERT_EQ(0, gn_config_set_u32(&self->g,
					NUMAPLACE_A_CONFIG_COPY_WORKERS, workers[w]))
				TH_LOG("%s", self->g.msg);
			ASSERT_EQ(0, gn_config_set_u32(&self->g,
					NUMAPLACE_A_CONFIG_DMA, dma));
			ASSERT_EQ(0, gn_config_get(&self->g, &c));
			EXPECT_EQ(workers[w], c.copy_workers);
			EXPECT_EQ(dma, c.dma);
			ASSERT_EQ(0, gn_stats(&self->g, &a));
			ASSERT_EQ(0, gn_migrate(self->fd, 0,
						NUMAPLACE_MIGRATE_ENGINE_BATCH,
						p, n * psz, to, NULL, &m));
			ASSERT_EQ(0, gn_stats(&self->g, &b));
			EXPECT_EQ(n, m.nr_moved_pages)
				TH_LOG("workers %u dma %u", workers[w], dma);
			EXPECT_EQ(NUMAPLACE_ENGINE_BATCH, m.engines);
			bad = 0;
			for (size_t i = 0; i < n; i++)
				for (size_t k = 0; k < psz; k += 512)
					bad += (unsigned char)p[i * psz + k] != 1 + (int)(i % 251);
			EXPECT_EQ(0, bad) TH_LOG("workers %u dma %u", workers[w], dma);
			EXPECT_EQ(dma ? n : 0, (b.dma_pages - a.dma_pages) +
					       (b.dma_fallback - a.dma_fallback));
			to = !to;
		}
	}
	/* Out of range: refused with the attribute named, nothing changed. */
	EXPECT_NE(0, gn_config_set_u32(&self->g, NUMAPLACE_A_CONFIG_COPY_WORKERS, 9));
	EXPECT_NE(0, gn_config_set_u32(&self->g, NUMAPLACE_A_CONFIG_DMA, 2));
	ASSERT_EQ(0, gn_config_get(&self->g, &c));
	EXPECT_EQ(0, c.copy_workers);
	EXPECT_EQ(1, c.dma);
	EXPECT_EQ(0, gn_config_set_u32(&self->g, NUMAPLACE_A_CONFIG_DMA, 0));
	munmap(p, n * psz);
}

/* Events of own calls: the fields are the ioctl's. One per call. */
TEST_F_TIMEOUT(genl, event_migrate, GN_TIMEOUT)
{
	const size_t n = 48;
	struct numaplace_migrate m;
	struct gn_event ev;
	struct gn_sock l;
	__s32 status[48];
	char *p;

	GN_SKIPPED();
	GN_NEED_TWO_NODES();
	ASSERT_EQ(0, gn_open(&l));
	ASSERT_EQ(0, gn_join(&l, l.events_grp));
	p = gn_map(n * psz);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, n * psz, MADV_NOHUGEPAGE));
	/* 40 written pages, 8 never touched: failures in the event too. */
	ASSERT_EQ(0, gn_touch_on(p, 0, 40, 0));

	ASSERT_EQ(0, gn_migrate(self->fd, 0, 0, p, n * psz, 1, status, &m));
	ASSERT_EQ(0, gn_events(&l, &ev, GN_EVENT_MS));
	ASSERT_EQ(1, ev.got);
	EXPECT_EQ(getpid(), ev.pid);
	EXPECT_EQ(m.nr_moved_pages, ev.pages);
	EXPECT_EQ(40, ev.pages);
	EXPECT_EQ(m.nr_moved_pages * psz, ev.bytes);
	EXPECT_EQ(m.engines, ev.engines);
	EXPECT_EQ(m.nr_failed_pages, ev.failed);
	EXPECT_EQ(8, ev.failed);
	EXPECT_EQ(0, ev.error);
	EXPECT_LT(0, ev.duration_ns);

	/* Nothing moved (all in place): still one event, zeros. */
	ASSERT_EQ(0, gn_migrate(self->fd, 0, 0, p, 40 * psz, 1, NULL, &m));
	ASSERT_EQ(0, gn_events(&l, &ev, GN_EVENT_MS));
	ASSERT_EQ(1, ev.got);
	EXPECT_EQ(0, ev.pages);
	EXPECT_EQ(0, ev.engines);
	EXPECT_EQ(0, ev.failed);
	EXPECT_EQ(0, ev.error);

	/* A call that fails: its error is in the event. */
	for (int node = 0; node < (int)self->info.nr_node_ids; node++) {
		int ret;

		if (!np_node_isset(self->info.node_online, node) ||
		    np_node_isset(self->info.node_memory, node))
			continue;
		ret = gn_migrate(self->fd, 0, 0, p, n * psz, node, NULL, &m);
		EXPECT_EQ(-ENODEV, ret) TH_LOG("to memoryless node %d", node);
		ASSERT_EQ(0, gn_events(&l, &ev, GN_EVENT_MS));
		EXPECT_EQ(1, ev.got);
		EXPECT_EQ(ENODEV, ev.error);
		EXPECT_EQ(0, ev.pages);
		EXPECT_EQ(getpid(), ev.pid);
		break;
	}
	munmap(p, n * psz);
	gn_close(&l);
}

/* Another process's pages: the event names it. */
TEST_F_TIMEOUT(genl, event_other_process, GN_TIMEOUT)
{
	const size_t n = 16;
	struct numaplace_migrate m;
	struct gn_event ev;
	struct gn_sock l;
	int pipefd[2], status;
	char c = 0, *p;
	pid_t child;

	GN_SKIPPED();
	GN_NEED_TWO_NODES();
	ASSERT_EQ(0, gn_open(&l));
	ASSERT_EQ(0, gn_join(&l, l.events_grp));
	p = gn_map(n * psz);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, n * psz, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, pipe(pipefd));
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		/* Its own copies of the pages, on node 0. */
		if (gn_touch_on(p, 0, n, 0))
			_exit(1);
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	EXPECT_EQ(0, gn_migrate(self->fd, child, 0, p, n * psz, 1, NULL, &m));
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(0, gn_events(&l, &ev, GN_EVENT_MS));
	EXPECT_EQ(1, ev.got);
	EXPECT_EQ(child, ev.pid);
	EXPECT_EQ(m.nr_moved_pages, ev.pages);
	EXPECT_EQ(m.engines, ev.engines);
	EXPECT_EQ(m.nr_failed_pages, ev.failed);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(p, n * psz);
	gn_close(&l);
}

/*
 * Unload the module while a socket listens, with an event queued on it;
 * load it again: the socket still works, joins the new group and gets
 * the next event. The runner fails the run on any kernel report.
 */
TEST_F_TIMEOUT(genl, unload_with_listener, GN_TIMEOUT)
{
	struct numaplace_migrate m;
	struct gn_event ev;
	struct gn_sock l;
	const size_t n = 8;
	char *p;
	int fd, ret;

	GN_SKIPPED();
	GN_NEED_TWO_NODES();
	if (access(GN_MODULE_PATH, R_OK))
		SKIP(return, "no %s", GN_MODULE_PATH);
	p = gn_map(n * psz);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, n * psz, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, gn_touch_on(p, 0, n, 0));
	ASSERT_EQ(0, gn_open(&l));
	ASSERT_EQ(0, gn_join(&l, l.events_grp));
	/* An event left unread in the listener's queue. */
	ASSERT_EQ(0, gn_migrate(self->fd, 0, 0, p, n * psz, 1, NULL, &m));

	/* Nothing of ours may hold the module. */
	close(self->fd);
	self->fd = -1;
	gn_close(&self->g);
	self->unloaded = 1;
	ret = gn_unload();
	ASSERT_EQ(0, ret) TH_LOG("delete_module: %s", strerror(-ret));
	ASSERT_FALSE(gn_loaded());
	/* The queued event outlives the module (read it before anything
	 * else is asked on the socket: a request's reader skips events).
	 */
	ASSERT_EQ(0, gn_events(&l, &ev, 0));
	EXPECT_EQ(1, ev.got);
	EXPECT_EQ(n, ev.pages);
	EXPECT_EQ(-ENOENT, gn_resolve(&l));

	ret = gn_load();
	ASSERT_EQ(0, ret) TH_LOG("finit_module: %s", strerror(-ret));
	fd = np_open();
	ASSERT_GE(fd, 0);
	self->fd = fd;
	ASSERT_EQ(0, gn_open(&self->g));
	/* The kernel dropped the listener from the old group. */
	ASSERT_EQ(0, gn_migrate(self->fd, 0, 0, p, n * psz, 0, NULL, &m));
	ASSERT_EQ(0, gn_events(&l, &ev, 200));
	EXPECT_EQ(0, ev.got);
	/* The same socket resolves the new family and joins its group. */
	ASSERT_EQ(0, gn_resolve(&l));
	ASSERT_EQ(0, gn_join(&l, l.events_grp));
	ASSERT_EQ(0, gn_migrate(self->fd, 0, 0, p, n * psz, 1, NULL, &m));
	ASSERT_EQ(0, gn_events(&l, &ev, GN_EVENT_MS));
	EXPECT_EQ(1, ev.got);
	EXPECT_EQ(n, ev.pages);
	gn_close(&l);
	munmap(p, n * psz);
	EXPECT_TRUE(gn_loaded());
}

NP_HARNESS_MAIN
