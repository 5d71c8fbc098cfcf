// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the "numaplace" generic netlink family's tables, written from
 * Documentation/netlink/specs/numaplace.yaml: policies, operations,
 * multicast groups. The handlers are in genl.c.
 */
#include <net/genetlink.h>

#include "numaplace.h"
#include "compat.h"
#include "genl.h"

/* Not const: 6.1's nla_policy points to a non-const range. */
static struct netlink_range_validation np_batch_pages_range = {
	.min = NP_BATCH_PAGES_MIN,
	.max = NP_BATCH_PAGES_MAX,
};

static const struct nla_policy np_config_policy[NUMAPLACE_A_CONFIG_MAX + 1] = {
	[NUMAPLACE_A_CONFIG_ENGINE] =
		NLA_POLICY_MAX(NLA_U32, NUMAPLACE_CONFIG_ENGINE_BATCH),
	[NUMAPLACE_A_CONFIG_BATCH_PAGES] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &np_batch_pages_range),
	[NUMAPLACE_A_CONFIG_COPY_WORKERS] =
		NLA_POLICY_MAX(NLA_U32, NP_COPY_WORKERS_MAX),
	[NUMAPLACE_A_CONFIG_DMA] = NLA_POLICY_MAX(NLA_U32, 1),
};

static const struct genl_ops np_genl_ops[] = {
	{
		.cmd = NUMAPLACE_NL_CMD_STATS_GET,
		.dumpit = np_genl_stats_get_dumpit,
		.flags = 0,
	},
	{
		.cmd = NUMAPLACE_NL_CMD_CONFIG_GET,
		.doit = np_genl_config_get_doit,
		.flags = 0,
	},
	{
		.cmd = NUMAPLACE_NL_CMD_CONFIG_SET,
		.doit = np_genl_config_set_doit,
		.policy = np_config_policy,
		.maxattr = NUMAPLACE_A_CONFIG_MAX,
		/*
		 * Admin only, as the controller tells clients; the handler
		 * also asks for CAP_SYS_ADMIN: the knobs are memory and CPU
		 * time, not network configuration.
		 */
		.flags = GENL_ADMIN_PERM,
	},
};

static const struct genl_multicast_group np_genl_mcgrps[] = {
	/*
	 * Events name other users' processes (pid, watched ranges, their
	 * placement): joining needs CAP_SYS_ADMIN, as reading another
	 * process's placement needs the ptrace check (admin-guide.md).
	 */
	[NP_GENL_MCGRP_EVENTS] = { .name = NUMAPLACE_MCGRP_EVENTS,
				   .flags = NP_GENL_MCAST_CAP },
};

struct genl_family np_genl_family __ro_after_init = {
	.name = NUMAPLACE_FAMILY_NAME,
	.version = NUMAPLACE_FAMILY_VERSION,
	.netnsok = false,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = np_genl_ops,
	.n_ops = ARRAY_SIZE(np_genl_ops),
	.mcgrps = np_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(np_genl_mcgrps),
};
