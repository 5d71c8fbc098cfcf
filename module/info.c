// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: NUMAPLACE_IOC_INFO, the handshake.
 */
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/stddef.h>

#include "numaplace.h"
#include "access.h"

/* Each feature bit is set only when that feature works on this kernel. */
u64 np_features(void)
{
	u64 features = NUMAPLACE_FEAT_QUERY; /* inline accessors and exports only */
	unsigned int engines = np_migrate_engines();

	if (np_target_exact())
		features |= NUMAPLACE_FEAT_PTRACE_EXACT;
	if (engines & NUMAPLACE_ENGINE_KERNEL)
		features |= NUMAPLACE_FEAT_MIGRATE_KERNEL;
	if (engines & NUMAPLACE_ENGINE_VMA)
		features |= NUMAPLACE_FEAT_MIGRATE_VMA;
	if (engines & NUMAPLACE_ENGINE_BATCH)
		features |= NUMAPLACE_FEAT_MIGRATE_BATCH;
	if (engines & NUMAPLACE_ENGINE_PT)
		features |= NUMAPLACE_FEAT_MIGRATE_PT;
	if ((engines & NUMAPLACE_ENGINE_PT) && np_pt_thp_available())
		features |= NUMAPLACE_FEAT_MIGRATE_PT_THP;
	if (np_watch_supported())
		features |= NUMAPLACE_FEAT_WATCH;
	return features | np_access_features();
}

static void np_fill_nodemask(u64 *words, enum node_states state)
{
	int nid;

	for_each_node_state(nid, state)
		words[nid / 64] |= 1ULL << (nid % 64);
}

int np_info(void *arg)
{
	struct numaplace_info *info = arg;

	BUILD_BUG_ON(offsetofend(struct numaplace_info, reserved) !=
		     NUMAPLACE_INFO_SIZE_VER0);
	BUILD_BUG_ON(MAX_NUMNODES > NUMAPLACE_MAX_NODES);

	if (info->reserved0 || memchr_inv(info->reserved, 0,
					  sizeof(info->reserved)))
		return -EINVAL;

	info->abi_version = NUMAPLACE_ABI_VERSION;
	info->nr_node_ids = nr_node_ids;
	info->features = np_features();
	info->ioctls = np_ioctl_mask();
	info->page_size = PAGE_SIZE;
	memset(info->node_online, 0, sizeof(info->node_online));
	memset(info->node_memory, 0, sizeof(info->node_memory));
	np_fill_nodemask(info->node_online, N_ONLINE);
	np_fill_nodemask(info->node_memory, N_MEMORY);
	return 0;
}
