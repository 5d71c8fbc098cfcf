// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace info: the handshake, human-readable or JSON.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "numaplace.h"

static const struct {
	unsigned long long bit;
	const char *name;
} np_feature_names[] = {
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

static void np_print_features(__u64 features, int json)
{
	const char *sep = "";
	size_t i;

	printf(json ? "  \"features\": [" : "%-14s", "features");
	for (i = 0; i < sizeof(np_feature_names) / sizeof(np_feature_names[0]);
	     i++) {
		if (!(features & np_feature_names[i].bit))
			continue;
		printf(json ? "%s\"%s\"" : "%s%s", sep, np_feature_names[i].name);
		sep = json ? ", " : " ";
	}
	if (!json && !*sep)
		printf("(none)");
	printf(json ? "]\n" : "\n");
}

int np_cmd_info(int argc, char **argv)
{
	struct numaplace_info info;
	int json = argc > 1 && !strcmp(argv[1], "--json");
	int ret;

	ret = numaplace_info(&info);
	if (ret) {
		fprintf(stderr, "numaplace: %s: %s\n", NUMAPLACE_DEVICE,
			strerror(-ret));
		return NP_EXIT_NODEV;
	}
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
