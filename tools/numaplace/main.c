// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the command-line tool. One file per command; this one
 * dispatches from a table.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct np_cmd np_cmds[] = {
	{ "info", np_cmd_info, "show the module's ABI, features and nodes" },
	{ "query", np_cmd_query,
	  "show on which nodes a process's pages are (per VMA, runs)" },
	{ "migrate", np_cmd_migrate,
	  "move a process's pages to a node, over nodes or to a CPU's node" },
	{ "stats", np_cmd_stats,
	  "show the module's counters (text, JSON, Prometheus), or watch them" },
	{ "config", np_cmd_config, "show or change the engines' knobs" },
	{ "monitor", np_cmd_monitor, "print a line per completed migration" },
	{ "watch", np_cmd_watch,
	  "print a line each time the kernel moves a range's pages" },
	{ "tier", np_cmd_tier,
	  "move hot pages to the fast nodes and cold ones to the slow nodes, a period at a time" },
};

static void np_main_usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: numaplace COMMAND [ARGS]\n"
		     "       numaplace --version\n\ncommands:\n");
	for (i = 0; i < NP_ARRAY_SIZE(np_cmds); i++)
		fprintf(out, "  %-10s %s\n", np_cmds[i].name, np_cmds[i].help);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		np_main_usage(stderr);
		return NP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		np_main_usage(stdout);
		return NP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("numaplace %s\n", NP_VERSION);
		return NP_EXIT_OK;
	}
	for (i = 0; i < NP_ARRAY_SIZE(np_cmds); i++)
		if (!strcmp(argv[1], np_cmds[i].name))
			return np_cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "numaplace: unknown command '%s'\n", argv[1]);
	np_main_usage(stderr);
	return NP_EXIT_USAGE;
}
