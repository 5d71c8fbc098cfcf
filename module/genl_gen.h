/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/numaplace.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_NUMAPLACE_GEN_H
#define _LINUX_NUMAPLACE_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/numaplace-genl.h>
#include <compat.h>
#include <linux/numaplace.h>

/* Ops table for numaplace */
extern const struct genl_split_ops numaplace_nl_ops[3];

int numaplace_nl_stats_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb);
int numaplace_nl_config_get_doit(struct sk_buff *skb, struct genl_info *info);
int numaplace_nl_config_set_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	NUMAPLACE_NLGRP_EVENTS,
};

#endif /* _LINUX_NUMAPLACE_GEN_H */
