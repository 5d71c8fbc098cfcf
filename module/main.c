// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: module init and exit.
 */
#include <linux/module.h>
#include <linux/init.h>

#include "numaplace.h"
#include "copy.h"
#include "ksyms.h"
#include "stats.h"

static int __init np_init(void)
{
	int ret;

	ret = np_ksyms_init();
	if (ret)
		return ret;
	ret = np_nodemap_init();
	if (ret)
		return ret;
	ret = np_stats_init();
	if (ret)
		goto exit_nodemap;
	ret = np_copy_init();
	if (ret)
		goto exit_stats;
	ret = np_genl_init();
	if (ret)
		goto exit_copy;
	ret = np_dev_init();
	if (ret)
		goto exit_genl;
	np_copy_limit_init();
	pr_info(NP_NAME ": loaded, ABI %u, features %#llx\n",
		NUMAPLACE_ABI_VERSION, np_features());
	return 0;

exit_genl:
	np_genl_exit();
exit_copy:
	np_copy_exit();
exit_stats:
	np_stats_exit();
exit_nodemap:
	np_nodemap_exit();
	return ret;
}

static void __exit np_exit(void)
{
	np_dev_exit();
	np_copy_limit_exit();
	np_genl_exit();
	np_copy_exit();
	np_stats_exit();
	np_nodemap_exit();
}

module_init(np_init);
module_exit(np_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("NUMA page placement: query in runs, migrate in batches");
MODULE_AUTHOR("numaplace developers");
