// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: generic netlink handlers. STATS_GET dumps one global message
 * then one per node; CONFIG_GET/SET read and change the knobs (SET needs
 * CAP_SYS_ADMIN: they size what the module allocates and how many threads
 * copy); MIGRATE_DONE and WATCH go to the "events" group (joining it needs
 * CAP_SYS_ADMIN, np_genl_mcgrps), built only when someone listens. One
 * *_fill() per message. The policy and ops tables are generated from
 * Documentation/netlink/specs/numaplace.yaml (genl_gen.c, make genl-gen);
 * the family is here: the generator would make it netns-aware, and its
 * group could not ask for CAP_SYS_ADMIN.
 */
#include <linux/capability.h>
#include <linux/sched.h>
#include <net/genetlink.h>

#include "numaplace.h"
#include "compat.h"
#include "genl.h"
#include "stats.h"
#include "watch.h"

static const struct genl_multicast_group np_genl_mcgrps[] = {
	/*
	 * Events name other users' processes (pid, watched ranges, their
	 * placement): joining needs CAP_SYS_ADMIN, as reading another
	 * process's placement needs the ptrace check (admin-guide.md).
	 */
	[NUMAPLACE_NLGRP_EVENTS] = { .name = NUMAPLACE_MCGRP_EVENTS,
				     .flags = NP_GENL_MCAST_CAP },
};

/* The ops' CONFIG_SET is admin-perm; its handler asks for CAP_SYS_ADMIN. */
static struct genl_family np_genl_family __ro_after_init = {
	.name = NUMAPLACE_FAMILY_NAME,
	.version = NUMAPLACE_FAMILY_VERSION,
	.netnsok = false,
	.parallel_ops = true,
	.module = THIS_MODULE,
	NP_GENL_FAMILY_OPS(numaplace_nl_ops),
	.mcgrps = np_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(np_genl_mcgrps),
};

static int np_put_u64(struct sk_buff *skb, int type, u64 v, int pad)
{
	return nla_put_u64_64bit(skb, type, v, pad);
}

/* The global counters' attributes; -EMSGSIZE when the message is full. */
static int np_genl_stats_put_global(struct sk_buff *skb)
{
	static const u8 attrs[NP_STAT_MAX] = {
		[NP_STAT_QUERY_CALLS] = NUMAPLACE_A_STATS_QUERY_CALLS,
		[NP_STAT_QUERY_PAGES] = NUMAPLACE_A_STATS_QUERY_PAGES,
		[NP_STAT_QUERY_RUNS] = NUMAPLACE_A_STATS_QUERY_RUNS,
		[NP_STAT_MIGRATE_CALLS] = NUMAPLACE_A_STATS_MIGRATE_CALLS,
		[NP_STAT_BYTES_COPIED] = NUMAPLACE_A_STATS_BYTES_COPIED,
		[NP_STAT_DMA_PAGES] = NUMAPLACE_A_STATS_DMA_PAGES,
		[NP_STAT_DMA_FALLBACK] = NUMAPLACE_A_STATS_DMA_FALLBACK,
		[NP_STAT_MIGRATE_RETRY_PASSES] =
			NUMAPLACE_A_STATS_MIGRATE_RETRY_PASSES,
		[NP_STAT_ACCESS_CALLS] = NUMAPLACE_A_STATS_ACCESS_CALLS,
		[NP_STAT_ACCESS_PAGES] = NUMAPLACE_A_STATS_ACCESS_PAGES,
		[NP_STAT_ACCESS_YOUNG] = NUMAPLACE_A_STATS_ACCESS_YOUNG,
		[NP_STAT_ACCESS_CLEARED] = NUMAPLACE_A_STATS_ACCESS_CLEARED,
		[NP_STAT_ACCESS_FLUSHES] = NUMAPLACE_A_STATS_ACCESS_FLUSHES,
	};
	struct np_stats_sum sum;
	struct nlattr *nest;
	unsigned int i, e, p;

	np_stats_sum(&sum);
	for (i = 0; i < NP_STAT_MAX; i++)
		if (np_put_u64(skb, attrs[i], sum.stat[i], NUMAPLACE_A_STATS_PAD))
			return -EMSGSIZE;
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++) {
		if (!sum.fail[i])
			continue;
		nest = nla_nest_start(skb, NUMAPLACE_A_STATS_FAIL);
		if (!nest ||
		    nla_put_u32(skb, NUMAPLACE_A_FAIL_ERRNO, np_fail_errno(i)) ||
		    np_put_u64(skb, NUMAPLACE_A_FAIL_PAGES, sum.fail[i],
			       NUMAPLACE_A_FAIL_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	for (e = 0; e < NP_STAT_ENGINES; e++) {
		for (p = 0; p < NUMAPLACE_PHASE_MAX; p++) {
			if (!sum.phase_ns[e][p])
				continue;
			nest = nla_nest_start(skb, NUMAPLACE_A_STATS_PHASE);
			if (!nest ||
			    nla_put_u32(skb, NUMAPLACE_A_PHASE_ENGINE, 1U << e) ||
			    nla_put_u32(skb, NUMAPLACE_A_PHASE_PHASE, p) ||
			    np_put_u64(skb, NUMAPLACE_A_PHASE_NS,
				       sum.phase_ns[e][p], NUMAPLACE_A_PHASE_PAD))
				return -EMSGSIZE;
			nla_nest_end(skb, nest);
		}
	}
	return 0;
}

/* Node @nid's counters' attributes; -EMSGSIZE when the message is full. */
static int np_genl_stats_put_node(struct sk_buff *skb, int nid)
{
	struct np_stats_node sum;
	struct nlattr *nest;
	unsigned int o;

	np_stats_sum_node(nid, &sum);
	if (nla_put_u32(skb, NUMAPLACE_A_STATS_NODE, nid) ||
	    np_put_u64(skb, NUMAPLACE_A_STATS_PAGES_IN, sum.pages_in,
		       NUMAPLACE_A_STATS_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_STATS_PAGES_OUT, sum.pages_out,
		       NUMAPLACE_A_STATS_PAD))
		return -EMSGSIZE;
	for (o = 0; o < NP_STAT_ORDERS; o++) {
		if (!sum.folios_in[o] && !sum.folios_out[o])
			continue;
		nest = nla_nest_start(skb, NUMAPLACE_A_STATS_ORDER);
		if (!nest || nla_put_u32(skb, NUMAPLACE_A_ORDER_ORDER, o) ||
		    np_put_u64(skb, NUMAPLACE_A_ORDER_FOLIOS_IN,
			       sum.folios_in[o], NUMAPLACE_A_ORDER_PAD) ||
		    np_put_u64(skb, NUMAPLACE_A_ORDER_FOLIOS_OUT,
			       sum.folios_out[o], NUMAPLACE_A_ORDER_PAD))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	return 0;
}

/*
 * One STATS_GET message: the global counters for @nid NUMA_NO_NODE, else
 * node @nid's. A message that does not fit is taken back whole
 * (genlmsg_cancel() drops the open nests with it).
 */
static int np_genl_stats_fill(struct sk_buff *skb, u32 portid, u32 seq,
			      int nid)
{
	void *hdr;
	int ret;

	hdr = genlmsg_put(skb, portid, seq, &np_genl_family, NLM_F_MULTI,
			  NUMAPLACE_NL_CMD_STATS_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nid == NUMA_NO_NODE)
		ret = np_genl_stats_put_global(skb);
	else
		ret = np_genl_stats_put_node(skb, nid);
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return ret;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* cb->args[0]: 0 for the global message, then node id + 1. */
int numaplace_nl_stats_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u32 portid = NETLINK_CB(cb->skb).portid, seq = cb->nlh->nlmsg_seq;
	long idx = cb->args[0];
	int ret;

	if (idx == 0) {
		ret = np_genl_stats_fill(skb, portid, seq, NUMA_NO_NODE);
		if (ret)
			return skb->len ?: ret;
		idx = 1;
	}
	for (; idx <= nr_node_ids; idx++) {
		if (!node_online(idx - 1))
			continue;
		ret = np_genl_stats_fill(skb, portid, seq, idx - 1);
		if (ret)
			break;
	}
	cb->args[0] = idx;
	return skb->len;
}

static int np_genl_config_fill(struct sk_buff *skb, u32 portid, u32 seq)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &np_genl_family, 0,
			  NUMAPLACE_NL_CMD_CONFIG_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NUMAPLACE_A_CONFIG_ENGINE,
			READ_ONCE(np_config.engine)) ||
	    nla_put_u32(skb, NUMAPLACE_A_CONFIG_BATCH_PAGES,
			READ_ONCE(np_config.batch_pages)) ||
	    nla_put_u32(skb, NUMAPLACE_A_CONFIG_COPY_WORKERS,
			READ_ONCE(np_config.copy_workers)) ||
	    nla_put_u32(skb, NUMAPLACE_A_CONFIG_DMA,
			READ_ONCE(np_config.dma))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int numaplace_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = np_genl_config_fill(msg, info->snd_portid, info->snd_seq);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/* The engine an admin names must exist on this host. */
static int np_genl_engine_check(u32 engine, const struct nlattr *attr,
				struct netlink_ext_ack *extack)
{
	if (np_engine_config_ok(engine))
		return 0;
	NL_SET_ERR_MSG_ATTR(extack, attr, "engine not available on this host");
	return -EOPNOTSUPP;
}

int numaplace_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *engine = info->attrs[NUMAPLACE_A_CONFIG_ENGINE];
	struct nlattr *batch = info->attrs[NUMAPLACE_A_CONFIG_BATCH_PAGES];
	struct nlattr *workers = info->attrs[NUMAPLACE_A_CONFIG_COPY_WORKERS];
	struct nlattr *dma = info->attrs[NUMAPLACE_A_CONFIG_DMA];
	int ret = 0;

	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "CONFIG_SET needs CAP_SYS_ADMIN (memory-management knobs)");
		return -EPERM;
	}
	if (!engine && !batch && !workers && !dma) {
		NL_SET_ERR_MSG(info->extack, "nothing to set");
		return -EINVAL;
	}
	mutex_lock(&np_config_mutex);
	if (engine)
		ret = np_genl_engine_check(nla_get_u32(engine), engine,
					   info->extack);
	if (!ret && engine)
		WRITE_ONCE(np_config.engine, nla_get_u32(engine));
	if (!ret && batch)
		WRITE_ONCE(np_config.batch_pages, nla_get_u32(batch));
	if (!ret && workers)
		WRITE_ONCE(np_config.copy_workers, nla_get_u32(workers));
	if (!ret && dma)
		WRITE_ONCE(np_config.dma, nla_get_u32(dma));
	mutex_unlock(&np_config_mutex);
	return ret;
}

static int np_genl_event_fill(struct sk_buff *skb,
			      const struct numaplace_migrate *a, pid_t pid,
			      u64 duration_ns, int err)
{
	void *hdr;

	hdr = genlmsg_put(skb, 0, 0, &np_genl_family, 0,
			  NUMAPLACE_NL_CMD_MIGRATE_DONE);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NUMAPLACE_A_EVENT_PID, pid) ||
	    np_put_u64(skb, NUMAPLACE_A_EVENT_PAGES, a->nr_moved_pages,
		       NUMAPLACE_A_EVENT_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_EVENT_BYTES,
		       a->nr_moved_pages << PAGE_SHIFT, NUMAPLACE_A_EVENT_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_EVENT_DURATION_NS, duration_ns,
		       NUMAPLACE_A_EVENT_PAD) ||
	    nla_put_u32(skb, NUMAPLACE_A_EVENT_ENGINES, a->engines) ||
	    np_put_u64(skb, NUMAPLACE_A_EVENT_FAILED, a->nr_failed_pages,
		       NUMAPLACE_A_EVENT_PAD) ||
	    nla_put_u32(skb, NUMAPLACE_A_EVENT_ERROR, -err)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* A message for the events group, or NULL: nobody listens (or no memory). */
static struct sk_buff *np_genl_event_new(void)
{
	if (!NP_GENL_MCAST_PROTECTED ||
	    !genl_has_listeners(&np_genl_family, &init_net,
				NUMAPLACE_NLGRP_EVENTS))
		return NULL;
	return genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
}

/* Send @msg to the events group if @fill_err is 0, else drop it. */
static void np_genl_event_send(struct sk_buff *msg, int fill_err)
{
	if (fill_err) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast(&np_genl_family, msg, 0, NUMAPLACE_NLGRP_EVENTS,
			  GFP_KERNEL);
}

/* One MIGRATE_DONE per completed call, only when someone listens. */
void np_genl_migrate_done(const struct numaplace_migrate *a, pid_t pid,
			  u64 duration_ns, int err)
{
	struct sk_buff *msg = np_genl_event_new();

	if (msg)
		np_genl_event_send(msg, np_genl_event_fill(msg, a, pid,
							   duration_ns, err));
}

/* One node's totals of a watch record, when it has pages before or after. */
static int np_genl_watch_node(struct sk_buff *skb, const struct np_watch_rec *r,
			      unsigned int nid)
{
	struct nlattr *nest;

	if (!r->before[nid] && !r->after[nid])
		return 0;
	nest = nla_nest_start(skb, NUMAPLACE_A_WATCH_NODE);
	if (!nest || nla_put_u32(skb, NUMAPLACE_A_WNODE_NODE, nid) ||
	    np_put_u64(skb, NUMAPLACE_A_WNODE_BEFORE, r->before[nid],
		       NUMAPLACE_A_WNODE_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_WNODE_AFTER, r->after[nid],
		       NUMAPLACE_A_WNODE_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int np_genl_watch_fill(struct sk_buff *skb, const struct np_watch_rec *r,
			      pid_t pid, u64 cookie, u64 id)
{
	unsigned int nid;
	void *hdr;

	hdr = genlmsg_put(skb, 0, 0, &np_genl_family, 0, NUMAPLACE_NL_CMD_WATCH);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, NUMAPLACE_A_WATCH_PID, pid) ||
	    np_put_u64(skb, NUMAPLACE_A_WATCH_ID, id, NUMAPLACE_A_WATCH_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_WATCH_COOKIE, cookie,
		       NUMAPLACE_A_WATCH_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_WATCH_SEQ, r->seq, NUMAPLACE_A_WATCH_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_WATCH_START, r->start,
		       NUMAPLACE_A_WATCH_PAD) ||
	    np_put_u64(skb, NUMAPLACE_A_WATCH_LEN, r->end - r->start,
		       NUMAPLACE_A_WATCH_PAD) ||
	    nla_put_u32(skb, NUMAPLACE_A_WATCH_REASON, r->reason) ||
	    np_put_u64(skb, NUMAPLACE_A_WATCH_CHANGED, r->nr_changed,
		       NUMAPLACE_A_WATCH_PAD))
		goto cancel;
	for (nid = 0; nid < nr_node_ids; nid++)
		if (np_genl_watch_node(skb, r, nid))
			goto cancel;
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* One WATCH event per watch record (before any fd queue limit). */
void np_genl_watch(const struct np_watch_rec *r, pid_t pid, u64 cookie,
		   u64 id)
{
	struct sk_buff *msg = np_genl_event_new();

	if (msg)
		np_genl_event_send(msg, np_genl_watch_fill(msg, r, pid, cookie,
							   id));
}

int np_genl_init(void)
{
	return genl_register_family(&np_genl_family);
}

void np_genl_exit(void)
{
	genl_unregister_family(&np_genl_family);
}
