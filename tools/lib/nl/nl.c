// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the CLI's generic netlink socket (libmnl). See nl.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nl.h"

/* The controller's answer to CTRL_CMD_GETFAMILY, as far as we need it. */
struct np_nl_family {
	uint16_t id;
	const char *grp;	/* the group asked for, or NULL */
	uint32_t grp_id;
	long *op_flags;		/* CTRL_ATTR_OPS by command, or NULL */
	unsigned int nr_ops;	/* entries of @op_flags */
};

/* One request's answers: who gets the data messages. */
struct np_nl_ctx {
	struct np_nl *nl;
	unsigned int seq;	/* of the request */
	mnl_cb_t cb;
	void *data;
};

const char *np_errno_name(int err)
{
	return err > 0 ? strerrorname_np(err) : NULL;
}

uint8_t np_nl_cmd(const struct nlmsghdr *nlh)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);

	return nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*g)) ? g->cmd : 0;
}

void np_nl_perror(const struct np_nl *nl, int err)
{
	const struct np_nl_ext *e = &nl->ext;

	fprintf(stderr, "%s: %s", nl->who, strerror(-err));
	if (e->msg[0])
		fprintf(stderr, ": %s", e->msg);
	if (e->attr >= 0) {
		if ((unsigned int)e->attr < nl->nr_attr_names &&
		    nl->attr_names[e->attr])
			fprintf(stderr, " (%s", nl->attr_names[e->attr]);
		else
			fprintf(stderr, " (attribute %d", e->attr);
		if (e->has_range == 3)
			fprintf(stderr, ", valid %lld..%lld", e->min, e->max);
		fputc(')', stderr);
	}
	fputc('\n', stderr);
}

static int np_nl_fail(struct np_nl *nl, int err)
{
	if (!nl->quiet && err != -EINTR)
		np_nl_perror(nl, err);
	return err;
}

/* NLMSGERR_ATTR_POLICY: the bounds of the rejected attribute. */
static int np_nl_policy_cb(const struct nlattr *attr, void *data)
{
	struct np_nl_ext *e = data;

	if (mnl_attr_validate(attr, MNL_TYPE_U64) < 0)
		return MNL_CB_OK;
	switch (mnl_attr_get_type(attr)) {
	case NL_POLICY_TYPE_ATTR_MIN_VALUE_U:
	case NL_POLICY_TYPE_ATTR_MIN_VALUE_S:
		e->min = (long long)mnl_attr_get_u64(attr);
		e->has_range |= 1;
		break;
	case NL_POLICY_TYPE_ATTR_MAX_VALUE_U:
	case NL_POLICY_TYPE_ATTR_MAX_VALUE_S:
		e->max = (long long)mnl_attr_get_u64(attr);
		e->has_range |= 2;
		break;
	}
	return MNL_CB_OK;
}

/* The extended ACK's attributes (NETLINK_EXT_ACK). */
static int np_nl_ext_cb(const struct nlattr *attr, void *data)
{
	struct np_nl *nl = data;
	const struct nlattr *bad;
	uint32_t offs;

	switch (mnl_attr_get_type(attr)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(nl->ext.msg, sizeof(nl->ext.msg), "%s",
				 mnl_attr_get_str(attr));
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0 || !nl->req)
			break;
		/* Counted from the start of our request's header. */
		offs = mnl_attr_get_u32(attr);
		if (offs < mnl_nlmsg_size(GENL_HDRLEN) ||
		    offs + sizeof(*bad) > nl->req->nlmsg_len)
			break;
		bad = (const struct nlattr *)((const char *)nl->req + offs);
		nl->ext.attr = mnl_attr_get_type(bad);
		break;
	case NLMSGERR_ATTR_POLICY:
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) >= 0)
			mnl_attr_parse_nested(attr, np_nl_policy_cb, &nl->ext);
		break;
	}
	return MNL_CB_OK;
}

/*
 * NLMSG_ERROR: an ACK (error 0) ends the request; an error ends it with
 * errno set and the extack attributes kept. With NETLINK_CAP_ACK the
 * kernel leaves our request out (NLM_F_CAPPED): the attributes follow
 * the nlmsgerr's copy of our header.
 */
static int np_nl_error_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_nl_ctx *ctx = data;
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	size_t off = sizeof(*err);

	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*err))) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += err->msg.nlmsg_len - sizeof(err->msg);
		if (mnl_nlmsg_size(off) <= nlh->nlmsg_len)
			mnl_attr_parse(nlh, off, np_nl_ext_cb, ctx->nl);
	}
	if (!err->error)
		return MNL_CB_STOP;
	errno = err->error < 0 ? -err->error : EPROTO;
	return MNL_CB_ERROR;
}

/* NLMSG_DONE ends a dump; it carries the dump's error, if any. */
static int np_nl_done_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_nl_ctx *ctx = data;
	int err = 0;

	if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(err)))
		memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
	if (!err)
		return MNL_CB_STOP;
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS)
		mnl_attr_parse(nlh, sizeof(err), np_nl_ext_cb, ctx->nl);
	errno = err < 0 ? -err : EPROTO;
	return MNL_CB_ERROR;
}

static int np_nl_data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct np_nl_ctx *ctx = data;

	/* A notification (sequence number 0) is not an answer: skip it. */
	if (nlh->nlmsg_seq != ctx->seq)
		return MNL_CB_OK;
	return ctx->cb ? ctx->cb(nlh, ctx->data) : MNL_CB_OK;
}

/* Not const: mnl_cb_run2() takes a plain pointer. */
static mnl_cb_t np_nl_ctl_cb[NLMSG_MIN_TYPE] = {
	[NLMSG_ERROR] = np_nl_error_cb,
	[NLMSG_DONE] = np_nl_done_cb,
};

struct nlmsghdr *np_nl_msg(struct np_nl *nl, uint16_t family, uint8_t cmd,
			   uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(nl->req_buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++nl->seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = family == GENL_ID_CTRL ? 1 : NUMAPLACE_FAMILY_VERSION;
	return nlh;
}

int np_nl_send_recv(struct np_nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
		    void *data)
{
	struct np_nl_ctx ctx = {
		.nl = nl, .seq = nlh->nlmsg_seq, .cb = cb, .data = data,
	};
	ssize_t n;
	int ret;

	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		nlh->nlmsg_flags |= NLM_F_ACK;
	memset(&nl->ext, 0, sizeof(nl->ext));
	nl->ext.attr = -1;
	nl->req = nlh;
	if (mnl_socket_sendto(nl->sk, nlh, nlh->nlmsg_len) < 0)
		return np_nl_fail(nl, -errno);
	for (;;) {
		n = mnl_socket_recvfrom(nl->sk, nl->buf, NP_NL_RECV_SIZE);
		if (n < 0)
			return np_nl_fail(nl, -errno);
		ret = mnl_cb_run2(nl->buf, n, nlh->nlmsg_seq, nl->portid,
				  np_nl_data_cb, &ctx, np_nl_ctl_cb,
				  NLMSG_MIN_TYPE);
		if (ret == MNL_CB_STOP)
			return 0;
		if (ret < 0)
			return np_nl_fail(nl, -errno);
	}
}

int np_nl_group(struct np_nl *nl, uint32_t grp, int join)
{
	int opt = join ? NETLINK_ADD_MEMBERSHIP : NETLINK_DROP_MEMBERSHIP;

	return mnl_socket_setsockopt(nl->sk, opt, &grp, sizeof(grp)) ? -errno : 0;
}

int np_nl_recv_notify(struct np_nl *nl, mnl_cb_t cb, void *data)
{
	ssize_t n = mnl_socket_recvfrom(nl->sk, nl->buf, NP_NL_RECV_SIZE);

	if (n < 0)
		return -errno;
	/* Notifications carry sequence number 0 and port id 0. */
	return mnl_cb_run(nl->buf, n, 0, 0, cb, data) < 0 ? -errno : 0;
}

int np_nl_wait_notify(struct np_nl *nl, int ms, mnl_cb_t cb, void *data)
{
	struct pollfd p = { .fd = mnl_socket_get_fd(nl->sk), .events = POLLIN };
	int ret = poll(&p, 1, ms);

	if (ret <= 0)
		return ret < 0 ? -errno : 0;
	ret = np_nl_recv_notify(nl, cb, data);
	return ret ? ret : 1;
}

static int np_nl_grp_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (type == CTRL_ATTR_MCAST_GRP_NAME &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
		tb[type] = attr;
	else if (type == CTRL_ATTR_MCAST_GRP_ID &&
		 mnl_attr_validate(attr, MNL_TYPE_U32) >= 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

/* One CTRL_ATTR_OPS entry: v[0] its command, v[1] its flags. */
static int np_nl_op_cb(const struct nlattr *attr, void *data)
{
	long *v = data;

	if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return MNL_CB_OK;
	if (mnl_attr_get_type(attr) == CTRL_ATTR_OP_ID)
		v[0] = mnl_attr_get_u32(attr);
	else if (mnl_attr_get_type(attr) == CTRL_ATTR_OP_FLAGS)
		v[1] = mnl_attr_get_u32(attr);
	return MNL_CB_OK;
}

static void np_nl_family_ops(struct np_nl_family *f, const struct nlattr *attr)
{
	const struct nlattr *op;
	long v[2];

	if (!f->op_flags || mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
		return;
	mnl_attr_for_each_nested(op, attr) {
		v[0] = v[1] = -1;
		mnl_attr_parse_nested(op, np_nl_op_cb, v);
		if (v[0] >= 0 && v[0] < f->nr_ops)
			f->op_flags[v[0]] = v[1];
	}
}

static int np_nl_family_attr_cb(const struct nlattr *attr, void *data)
{
	struct np_nl_family *f = data;
	const struct nlattr *grp, *tb[CTRL_ATTR_MCAST_GRP_MAX + 1];

	switch (mnl_attr_get_type(attr)) {
	case CTRL_ATTR_FAMILY_ID:
		if (mnl_attr_validate(attr, MNL_TYPE_U16) >= 0)
			f->id = mnl_attr_get_u16(attr);
		break;
	case CTRL_ATTR_MCAST_GROUPS:
		if (!f->grp || mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			break;
		mnl_attr_for_each_nested(grp, attr) {
			memset(tb, 0, sizeof(tb));
			mnl_attr_parse_nested(grp, np_nl_grp_cb, tb);
			if (tb[CTRL_ATTR_MCAST_GRP_NAME] &&
			    tb[CTRL_ATTR_MCAST_GRP_ID] &&
			    !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
				    f->grp))
				f->grp_id = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
		}
		break;
	case CTRL_ATTR_OPS:
		np_nl_family_ops(f, attr);
		break;
	}
	return MNL_CB_OK;
}

static int np_nl_family_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, GENL_HDRLEN, np_nl_family_attr_cb, data);
	return MNL_CB_OK;
}

/* CTRL_CMD_GETFAMILY of @name into @f. 0 or -errno. */
static int np_nl_get_family(struct np_nl *nl, const char *name,
			    struct np_nl_family *f)
{
	struct nlmsghdr *nlh;
	int ret;

	nlh = np_nl_msg(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	ret = np_nl_send_recv(nl, nlh, np_nl_family_cb, f);
	if (ret)
		return ret;
	return f->id ? 0 : -EPROTO;
}

int np_nl_resolve(struct np_nl *nl, const char *name, uint16_t *id,
		  const char *grp, uint32_t *grp_id)
{
	struct np_nl_family f = { .grp = grp };
	int ret = np_nl_get_family(nl, name, &f);

	if (ret)
		return ret;
	*id = f.id;
	if (grp_id)
		*grp_id = f.grp_id;
	return 0;
}

int np_nl_op_flags(struct np_nl *nl, const char *name, long *flags,
		   unsigned int nr)
{
	struct np_nl_family f = { .op_flags = flags, .nr_ops = nr };

	for (unsigned int i = 0; i < nr; i++)
		flags[i] = -1;
	return np_nl_get_family(nl, name, &f);
}

int np_nl_open(struct np_nl *nl, const char *who, int quiet)
{
	int one = 1, ret;

	memset(nl, 0, sizeof(*nl));
	nl->who = who;
	nl->quiet = quiet;
	nl->ext.attr = -1;
	nl->seq = time(NULL);
	nl->buf = malloc(NP_NL_RECV_SIZE);
	if (!nl->buf)
		return np_nl_fail(nl, -ENOMEM);
	nl->sk = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sk) {
		ret = -errno;
		np_nl_close(nl);
		return np_nl_fail(nl, ret);
	}
	if (mnl_socket_bind(nl->sk, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		np_nl_close(nl);
		return np_nl_fail(nl, ret);
	}
	nl->portid = mnl_socket_get_portid(nl->sk);
	/* Both are hints: a kernel without them still answers. */
	mnl_socket_setsockopt(nl->sk, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sk, NETLINK_CAP_ACK, &one, sizeof(one));

	nl->quiet = 1;
	ret = np_nl_resolve(nl, NUMAPLACE_FAMILY_NAME, &nl->family,
			    NUMAPLACE_MCGRP_EVENTS, &nl->events_grp);
	nl->quiet = quiet;
	if (ret == -ENOENT) {
		if (!quiet)
			fprintf(stderr,
				"%s: no generic netlink family \"%s\": is numaplace.ko loaded?\n",
				who, NUMAPLACE_FAMILY_NAME);
	} else if (ret) {
		np_nl_fail(nl, ret);
	}
	if (ret)
		np_nl_close(nl);
	return ret;
}

void np_nl_close(struct np_nl *nl)
{
	if (nl->sk)
		mnl_socket_close(nl->sk);
	nl->sk = NULL;
	free(nl->buf);
	nl->buf = NULL;
}

/* Where a flat message's u32 or u64 attribute of a type goes. */
struct np_nl_field {
	uint16_t type;
	enum mnl_attr_data_type kind;	/* MNL_TYPE_U32 or MNL_TYPE_U64 */
	size_t off;			/* into the destination struct */
};

#define NP_NL_U32(t, s, m) { t, MNL_TYPE_U32, offsetof(s, m) }
#define NP_NL_U64(t, s, m) { t, MNL_TYPE_U64, offsetof(s, m) }

/*
 * Store each attribute of @a listed in @f with a valid size at its
 * offset into @dst; unknown or malformed attributes are skipped.
 */
static void np_nl_field_put(const struct nlattr *a, const struct np_nl_field *f,
			    size_t nr, void *dst)
{
	uint32_t v32;
	uint64_t v64;

	for (size_t i = 0; i < nr; i++) {
		if (f[i].type != mnl_attr_get_type(a) ||
		    mnl_attr_validate(a, f[i].kind) < 0)
			continue;
		if (f[i].kind == MNL_TYPE_U32) {
			v32 = mnl_attr_get_u32(a);
			memcpy((char *)dst + f[i].off, &v32, sizeof(v32));
		} else {
			v64 = mnl_attr_get_u64(a);
			memcpy((char *)dst + f[i].off, &v64, sizeof(v64));
		}
		return;
	}
}

static const struct np_nl_field np_nl_event_fields[] = {
	NP_NL_U32(NUMAPLACE_A_EVENT_PID, struct np_nl_event, pid),
	NP_NL_U32(NUMAPLACE_A_EVENT_ENGINES, struct np_nl_event, engines),
	NP_NL_U32(NUMAPLACE_A_EVENT_ERROR, struct np_nl_event, error),
	NP_NL_U64(NUMAPLACE_A_EVENT_PAGES, struct np_nl_event, pages),
	NP_NL_U64(NUMAPLACE_A_EVENT_BYTES, struct np_nl_event, bytes),
	NP_NL_U64(NUMAPLACE_A_EVENT_DURATION_NS, struct np_nl_event, duration_ns),
	NP_NL_U64(NUMAPLACE_A_EVENT_FAILED, struct np_nl_event, failed),
};

int np_nl_event_parse(const struct nlmsghdr *nlh, struct np_nl_event *ev)
{
	const struct nlattr *a;

	if (np_nl_cmd(nlh) != NUMAPLACE_NL_CMD_MIGRATE_DONE)
		return 0;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN)
		np_nl_field_put(a, np_nl_event_fields,
				sizeof(np_nl_event_fields) / sizeof(np_nl_event_fields[0]),
				ev);
	return 1;
}

#define NP_NL_REC(t, m) NP_NL_U64(t, struct np_nl_watch, rec.m)
static const struct np_nl_field np_nl_watch_fields[] = {
	NP_NL_U32(NUMAPLACE_A_WATCH_PID, struct np_nl_watch, pid),
	NP_NL_U64(NUMAPLACE_A_WATCH_ID, struct np_nl_watch, id),
	NP_NL_REC(NUMAPLACE_A_WATCH_COOKIE, cookie),
	NP_NL_REC(NUMAPLACE_A_WATCH_SEQ, seq),
	NP_NL_REC(NUMAPLACE_A_WATCH_START, start),
	NP_NL_REC(NUMAPLACE_A_WATCH_LEN, len),
	NP_NL_REC(NUMAPLACE_A_WATCH_CHANGED, nr_changed),
	NP_NL_U32(NUMAPLACE_A_WATCH_REASON, struct np_nl_watch, rec.reason),
};

/* A NUMAPLACE_A_WATCH_NODE nest: one node's before and after. */
struct np_nl_wnode {
	uint32_t node;
	uint64_t before, after;
};

static const struct np_nl_field np_nl_wnode_fields[] = {
	NP_NL_U32(NUMAPLACE_A_WNODE_NODE, struct np_nl_wnode, node),
	NP_NL_U64(NUMAPLACE_A_WNODE_BEFORE, struct np_nl_wnode, before),
	NP_NL_U64(NUMAPLACE_A_WNODE_AFTER, struct np_nl_wnode, after),
};

static void np_nl_watch_node(const struct nlattr *nest, struct np_nl_watch *w)
{
	struct np_nl_wnode n = { .node = NUMAPLACE_WATCH_NODES };
	const struct nlattr *a;

	if (mnl_attr_validate(nest, MNL_TYPE_NESTED) < 0)
		return;
	mnl_attr_for_each_nested(a, nest)
		np_nl_field_put(a, np_nl_wnode_fields,
				sizeof(np_nl_wnode_fields) / sizeof(np_nl_wnode_fields[0]),
				&n);
	if (n.node >= NUMAPLACE_WATCH_NODES)
		return;
	w->rec.before[n.node] = n.before;
	w->rec.after[n.node] = n.after;
	if (n.node >= w->rec.nr_nodes)
		w->rec.nr_nodes = n.node + 1;
}

int np_nl_watch_parse(const struct nlmsghdr *nlh, struct np_nl_watch *w)
{
	const struct nlattr *a;

	if (np_nl_cmd(nlh) != NUMAPLACE_NL_CMD_WATCH)
		return 0;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		if (mnl_attr_get_type(a) == NUMAPLACE_A_WATCH_NODE)
			np_nl_watch_node(a, w);
		else
			np_nl_field_put(a, np_nl_watch_fields,
					sizeof(np_nl_watch_fields) / sizeof(np_nl_watch_fields[0]),
					w);
	}
	return 1;
}
