/* SPDX-License-Identifier: GPL-2.0 */
/* numaplace: generic netlink handlers (genl.c) and tables (genl-ops.c). */
#ifndef _NUMAPLACE_GENL_H
#define _NUMAPLACE_GENL_H

#include <net/genetlink.h>

enum np_genl_mcgrp {
	NP_GENL_MCGRP_EVENTS,
};

extern struct genl_family np_genl_family;

int np_genl_stats_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int np_genl_config_get_doit(struct sk_buff *skb, struct genl_info *info);
int np_genl_config_set_doit(struct sk_buff *skb, struct genl_info *info);

#endif /* _NUMAPLACE_GENL_H */
