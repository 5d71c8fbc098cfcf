// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace info: the handshake, human-readable or JSON.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "numaplace.h"
#include "output.h"

static const struct np_cmd_desc np_info_desc = {
	.name = "info",
	NP_CMD_JSON_ONLY("print JSON instead of text"),
	.about = "Print the module's ABI version, its ioctls, the nodes online and\n"
		 "with memory, and the features this kernel allows.",
	.exits = NP_EXITS_BASE,
};

static const struct np_bit_name np_feature_names[] = {
	{ NUMAPLACE_FEAT_QUERY, "query" },
	{ NUMAPLACE_FEAT_MIGRATE_KERNEL, "migrate-kernel" },
	{ NUMAPLACE_FEAT_MIGRATE_VMA, "migrate-vma" },
	{ NUMAPLACE_FEAT_MIGRATE_BATCH, "migrate-batch" },
	{ NUMAPLACE_FEAT_MIGRATE_PT, "migrate-pt" },
	{ NUMAPLACE_FEAT_MIGRATE_PT_THP, "migrate-pt-thp" },
	{ NUMAPLACE_FEAT_PTRACE_EXACT, "ptrace-exact" },
	{ NUMAPLACE_FEAT_WATCH, "watch" },
	{ NUMAPLACE_FEAT_ACCESS, "access" },
	{ NUMAPLACE_FEAT_ACCESS_FLUSH, "access-flush" },
	{ NUMAPLACE_FEAT_ACCESS_NOTIFY, "access-notify" },
	{ NUMAPLACE_FEAT_ACCESS_KEEP, "access-keep" },
};

/* A feature this tool has no name for is not shown. */
static const struct np_bits np_feature_bits = {
	.names = np_feature_names, .nr_names = NP_ARRAY_SIZE(np_feature_names),
	.sep = " ", .none = "(none)",
};

int np_cmd_info(int argc, char **argv)
{
	struct numaplace_info info;
	int json = 0, ret;
	struct np_out o;

	/* --json is the only option. */
	ret = np_parse_opts_only(&np_info_desc, argc, argv, np_opt_flag, &json);
	if (ret)
		return ret == NP_OPT_HELP ? NP_EXIT_OK : ret;
	ret = np_handshake("numaplace", &info, 0, 0, NULL);
	if (ret)
		return ret;
	if (np_out_begin(&o, json ? NP_FMT_JSON : NP_FMT_TEXT))
		return np_exit_of(ENOMEM);
	np_print_uint(&o, NP_PRINT_ANY, "abi_version", "abi version   %llu\n",
		      info.abi_version);
	np_print_uint(&o, NP_PRINT_ANY, "nr_node_ids", "nr_node_ids   %llu\n",
		      info.nr_node_ids);
	np_print_uint(&o, NP_PRINT_ANY, "page_size", "page size     %llu\n",
		      info.page_size);
	/* JSON: the mask as a number (scripts test bits of it). */
	np_print_uint(&o, NP_PRINT_ANY, "ioctls", "ioctls        %#llx\n",
		      info.ioctls);
	np_print_text(&o, "%-14s", "nodes online");
	np_print_nodes(&o, "nodes online", "", info.node_online,
		       info.nr_node_ids, NULL);
	np_print_text(&o, "\n%-14s", "nodes memory");
	np_print_nodes(&o, "nodes memory", "", info.node_memory,
		       info.nr_node_ids, NULL);
	np_print_text(&o, "\n");
	np_print_names(&o, NP_PRINT_ANY, "features", "features      %s\n",
		       &np_feature_bits, info.features);
	np_out_end(&o);
	return NP_EXIT_OK;
}
