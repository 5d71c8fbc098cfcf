// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace config: show the engines' knobs (netlink CONFIG_GET) or change
 * them (CONFIG_SET, CAP_SYS_ADMIN and CAP_NET_ADMIN) without reloading
 * the module.
 *
 *   numaplace config                      engine=auto, batch_pages=N, ...
 *   numaplace config KEY=VALUE ...        set them, all or none
 *
 * The keys are a table (np_config_keys): their parsers, printers, help
 * and netlink attributes.
 *
 * The command line is checked before anything is sent (unknown key,
 * value of the wrong kind); the module judges the value itself (its
 * bounds, whether an engine exists on this host) and says why in its
 * extack message, which is printed.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nl.h"

/* enum numaplace_config_engine by value. */
static const char *const np_engine_names[] = {
	[NUMAPLACE_CONFIG_ENGINE_AUTO] = "auto",
	[NUMAPLACE_CONFIG_ENGINE_KERNEL] = "kernel",
	[NUMAPLACE_CONFIG_ENGINE_VMA] = "vma",
	[NUMAPLACE_CONFIG_ENGINE_BATCH] = "batch",
};

static int np_parse_engine(const char *s, __u32 *val)
{
	size_t i;

	for (i = 0; i < NP_ARRAY_SIZE(np_engine_names); i++) {
		if (!strcmp(s, np_engine_names[i])) {
			*val = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void np_print_engine(__u32 val)
{
	if (val < NP_ARRAY_SIZE(np_engine_names))
		printf("%s", np_engine_names[val]);
	else
		printf("%u", val);
}

/* A decimal __u32; its bounds are the module's to check. */
static int np_parse_u32(const char *s, __u32 *val)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > 0xffffffffULL)
		return -EINVAL;
	*val = v;
	return 0;
}

static void np_print_u32(__u32 val)
{
	printf("%u", val);
}

/* The keys, in the order CONFIG_GET prints them. */
static const struct np_config_key {
	const char *name;
	__u16 attr;			/* NUMAPLACE_A_CONFIG_* */
	int (*parse)(const char *s, __u32 *val);
	void (*print)(__u32 val);
	const char *values;		/* what VALUE may be */
	const char *help;
} np_config_keys[] = {
	{ "engine", NUMAPLACE_A_CONFIG_ENGINE, np_parse_engine, np_print_engine,
	  "auto|kernel|vma|batch",
	  "the engines a migration without an engine flag uses" },
	{ "batch_pages", NUMAPLACE_A_CONFIG_BATCH_PAGES, np_parse_u32,
	  np_print_u32, "a number of pages",
	  "pages per migration round (the module checks for signals\n"
	  "               between rounds)" },
	{ "copy_workers", NUMAPLACE_A_CONFIG_COPY_WORKERS, np_parse_u32,
	  np_print_u32, "0 (auto) to 8",
	  "threads copying a batch of the batched engine (0: the CPUs\n"
	  "               of the target node)" },
	{ "dma", NUMAPLACE_A_CONFIG_DMA, np_parse_u32, np_print_u32, "0|1",
	  "the batched engine copies with a DMA engine where there is\n"
	  "               one (else, and on any DMA error, the CPU copies)" },
};

/* Names of the attributes, for the module's error messages. */
static const char *const np_config_attr_names[NUMAPLACE_A_CONFIG_MAX + 1] = {
	[NUMAPLACE_A_CONFIG_ENGINE] = "engine",
	[NUMAPLACE_A_CONFIG_BATCH_PAGES] = "batch_pages",
	[NUMAPLACE_A_CONFIG_COPY_WORKERS] = "copy_workers",
	[NUMAPLACE_A_CONFIG_DMA] = "dma",
};

/* Bytes of the help's KEY=VALUE lines, built from np_config_keys. */
#define NP_CONFIG_HELP_SIZE	2048

static char np_config_operands[NP_CONFIG_HELP_SIZE];

static struct np_cmd_desc np_config_desc = {
	.name = "config",
	.synopsis = "[KEY=VALUE ...]",
	.about = "Without arguments, print the knobs as KEY=VALUE lines. With them,\n"
		 "set them (CAP_SYS_ADMIN and CAP_NET_ADMIN); the module takes every\n"
		 "value or none.",
	.operands = np_config_operands,
	.exits = NP_EXITS_BASE | NP_EXIT_BIT(NP_EXIT_PERM) |
		 NP_EXIT_BIT(NP_EXIT_REJECTED),
};

/* The KEY=VALUE part of the help, from the keys' table. */
static void np_config_help_init(void)
{
	size_t i, len = 0;

	len += snprintf(np_config_operands, sizeof(np_config_operands),
			"\nkeys:");
	for (i = 0; i < NP_ARRAY_SIZE(np_config_keys) &&
		    len < sizeof(np_config_operands); i++)
		len += snprintf(np_config_operands + len,
				sizeof(np_config_operands) - len,
				"\n  %-12s %s\n%15s%s", np_config_keys[i].name,
				np_config_keys[i].values, "",
				np_config_keys[i].help);
}

struct np_config_vals {
	__u32 val[NP_ARRAY_SIZE(np_config_keys)];
	int have[NP_ARRAY_SIZE(np_config_keys)];
};

static int np_config_attr_cb(const struct nlattr *attr, void *data)
{
	struct np_config_vals *v = data;
	size_t i;

	if (mnl_attr_validate(attr, MNL_TYPE_U32) < 0)
		return MNL_CB_OK;
	for (i = 0; i < NP_ARRAY_SIZE(np_config_keys); i++) {
		if (mnl_attr_get_type(attr) == np_config_keys[i].attr) {
			v->val[i] = mnl_attr_get_u32(attr);
			v->have[i] = 1;
		}
	}
	return MNL_CB_OK;
}

static int np_config_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, GENL_HDRLEN, np_config_attr_cb, data);
	return MNL_CB_OK;
}

/*
 * The exit code: a value the module refused names its attribute in the
 * extended ACK (the policy's bounds, an engine this host lacks); any
 * other error is the shared mapping's.
 */
static int np_config_exit(const struct np_nl *nl, int err)
{
	if (err && err != -EPERM && nl && nl->ext.attr >= 0)
		return NP_EXIT_REJECTED;
	return np_exit_of(err);
}

static int np_config_get(struct np_nl *nl)
{
	struct np_config_vals v = { 0 };
	struct nlmsghdr *nlh;
	size_t i;
	int ret;

	nlh = np_nl_msg(nl, nl->family, NUMAPLACE_NL_CMD_CONFIG_GET, 0);
	ret = np_nl_send_recv(nl, nlh, np_config_cb, &v);
	if (ret)
		return np_config_exit(nl, ret);
	for (i = 0; i < NP_ARRAY_SIZE(np_config_keys); i++) {
		if (!v.have[i])
			continue;	/* an older module */
		printf("%s=", np_config_keys[i].name);
		np_config_keys[i].print(v.val[i]);
		putchar('\n');
	}
	return NP_EXIT_OK;
}

int np_cmd_config(int argc, char **argv)
{
	struct np_config_vals v = { 0 };
	const struct np_config_key *k;
	struct nlmsghdr *nlh;
	struct np_nl nl;
	const char *eq;
	size_t i, len;
	int a, ret;

	np_config_help_init();
	/* No option but --help: the knobs are operands. */
	ret = np_parse_opts(&np_config_desc, argc, argv, NULL, NULL);
	if (ret)
		return ret == NP_OPT_HELP ? NP_EXIT_OK : ret;
	/* Check the whole command line before anything is sent. */
	for (a = optind; a < argc; a++) {
		eq = strchr(argv[a], '=');
		len = eq ? (size_t)(eq - argv[a]) : strlen(argv[a]);
		for (i = 0; i < NP_ARRAY_SIZE(np_config_keys); i++)
			if (strlen(np_config_keys[i].name) == len &&
			    !strncmp(argv[a], np_config_keys[i].name, len))
				break;
		if (i == NP_ARRAY_SIZE(np_config_keys))
			return np_usage_error(&np_config_desc,
					      "unknown key '%.*s'", (int)len,
					      argv[a]);
		k = &np_config_keys[i];
		if (!eq || k->parse(eq + 1, &v.val[i])) {
			fprintf(stderr, "numaplace config: %s takes %s\n",
				k->name, k->values);
			return NP_EXIT_USAGE;
		}
		if (v.have[i]) {
			fprintf(stderr, "numaplace config: %s given twice\n",
				k->name);
			return NP_EXIT_USAGE;
		}
		v.have[i] = 1;
	}

	ret = np_nl_open(&nl, "numaplace config", 0);
	if (ret)
		return np_config_exit(NULL, ret);
	if (optind == argc) {
		ret = np_config_get(&nl);
		np_nl_close(&nl);
		return ret;
	}
	nl.attr_names = np_config_attr_names;
	nl.nr_attr_names = NP_ARRAY_SIZE(np_config_attr_names);
	nlh = np_nl_msg(&nl, nl.family, NUMAPLACE_NL_CMD_CONFIG_SET, 0);
	for (i = 0; i < NP_ARRAY_SIZE(np_config_keys); i++)
		if (v.have[i])
			mnl_attr_put_u32(nlh, np_config_keys[i].attr, v.val[i]);
	nl.quiet = 1;
	ret = np_nl_send_recv(&nl, nlh, NULL, NULL);
	if (ret == -EPERM)
		fprintf(stderr, "numaplace config: %s: changing the knobs needs CAP_SYS_ADMIN and CAP_NET_ADMIN\n",
			strerror(-ret));
	else if (ret)
		np_nl_perror(&nl, ret);
	ret = np_config_exit(&nl, ret);
	np_nl_close(&nl);
	return ret;
}
