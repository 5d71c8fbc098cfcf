// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/numaplace.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "genl_gen.h"

#include <uapi/linux/numaplace-genl.h>
#include <compat.h>
#include <linux/numaplace.h>

/* Integer value ranges */
static const struct netlink_range_validation numaplace_a_config_batch_pages_range = {
	.min	= NUMAPLACE_BATCH_PAGES_MIN,
	.max	= NUMAPLACE_BATCH_PAGES_MAX,
};

/* NUMAPLACE_NL_CMD_CONFIG_SET - do */
static const struct nla_policy numaplace_config_set_nl_policy[NUMAPLACE_A_CONFIG_DMA + 1] = {
	[NUMAPLACE_A_CONFIG_ENGINE] = NLA_POLICY_MAX(NLA_U32, 3),
	[NUMAPLACE_A_CONFIG_BATCH_PAGES] = NLA_POLICY_FULL_RANGE(NLA_U32, &numaplace_a_config_batch_pages_range),
	[NUMAPLACE_A_CONFIG_COPY_WORKERS] = NLA_POLICY_MAX(NLA_U32, NUMAPLACE_COPY_WORKERS_MAX),
	[NUMAPLACE_A_CONFIG_DMA] = NLA_POLICY_MAX(NLA_U32, 1),
};

/* Ops table for numaplace */
const struct genl_split_ops numaplace_nl_ops[3] = {
	{
		.cmd	= NUMAPLACE_NL_CMD_STATS_GET,
		.dumpit	= numaplace_nl_stats_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd	= NUMAPLACE_NL_CMD_CONFIG_GET,
		.doit	= numaplace_nl_config_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= NUMAPLACE_NL_CMD_CONFIG_SET,
		.doit		= numaplace_nl_config_set_doit,
		.policy		= numaplace_config_set_nl_policy,
		.maxattr	= NUMAPLACE_A_CONFIG_DMA,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group numaplace_nl_mcgrps[] = {
	[NUMAPLACE_NLGRP_EVENTS] = { "events", },
};
