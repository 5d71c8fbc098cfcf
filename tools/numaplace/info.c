// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace info: the handshake, human-readable or JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "numaplace.h"

enum { NP_OPT_JSON = 256 };

static const struct np_opt np_info_opts[] = {
	{ "json", 0, no_argument, NP_OPT_JSON, NULL, "print JSON instead of text" },
};

static const struct np_cmd_desc np_info_desc = {
	.name = "info",
	.synopsis = "[--json]",
	.about = "Print the module's ABI version, its ioctls, the nodes online and\n"
		 "with memory, and the features this kernel allows.",
	.opts = np_info_opts,
	.nr_opts = NP_ARRAY_SIZE(np_info_opts),
	.exits = NP_EXITS_BASE,
};

static const struct np_bit_name np_feature_names[] = {
	{ NUMAPLACE_FEAT_QUERY, "query" },
	{ NUMAPLACE_FEAT_MIGRATE_KERNEL, "migrate-kernel" },
	{ NUMAPLACE_FEAT_MIGRATE_VMA, "migrate-vma" },
	{ NUMAPLACE_FEAT_MIGRATE_BATCH, "migrate-batch" },
	{ NUMAPLACE_FEAT_PTRACE_EXACT, "ptrace-exact" },
};

static void np_print_mask(const char *label, const __u64 *mask,
			  unsigned int nr, int json)
{
	const char *sep = "";
	unsigned int n;

	printf(json ? "  \"%s\": [" : "%-14s", label);
	for (n = 0; n < nr; n++) {
		if (!numaplace_node_isset(mask, n))
			continue;
		printf("%s%u", sep, n);
		sep = json ? ", " : ",";
	}
	printf(json ? "],\n" : "\n");
}

/* A feature this tool has no name for is not shown. */
static const struct np_bits np_feature_bits = {
	np_feature_names, NP_ARRAY_SIZE(np_feature_names), " ", "(none)", 0,
};

static void np_print_features(__u64 features, int json)
{
	printf(json ? "  \"features\": [" : "%-14s", "features");
	np_print_bits(&np_feature_bits, features, json);
	printf(json ? "]\n" : "\n");
}

int np_cmd_info(int argc, char **argv)
{
	struct numaplace_info info;
	int json = 0, ret;

	/* --json is the only option. */
	ret = np_parse_opts_only(&np_info_desc, argc, argv, np_opt_flag, &json);
	if (ret)
		return ret == NP_OPT_HELP ? NP_EXIT_OK : ret;
	ret = np_handshake("numaplace", &info, 0, 0, NULL);
	if (ret)
		return ret;
	if (json)
		printf("{\n  \"abi_version\": %u,\n  \"nr_node_ids\": %u,\n"
		       "  \"page_size\": %u,\n  \"ioctls\": %llu,\n",
		       info.abi_version, info.nr_node_ids, info.page_size,
		       (unsigned long long)info.ioctls);
	else
		printf("%-14s%u\n%-14s%u\n%-14s%u\n%-14s%#llx\n",
		       "abi version", info.abi_version, "nr_node_ids",
		       info.nr_node_ids, "page size", info.page_size, "ioctls",
		       (unsigned long long)info.ioctls);
	np_print_mask("nodes online", info.node_online, info.nr_node_ids, json);
	np_print_mask("nodes memory", info.node_memory, info.nr_node_ids, json);
	np_print_features(info.features, json);
	if (json)
		printf("}\n");
	return NP_EXIT_OK;
}
