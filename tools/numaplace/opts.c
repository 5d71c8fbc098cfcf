// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: every command's options are a table (struct np_opt, as
 * ethtool declares its arguments), parsed by getopt_long() and printed
 * as the command's --help; numaplace(1) is checked against that help
 * (tools/numaplace/check-man.sh).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Options of one command, -h/--help included. */
#define NP_MAX_OPTS		24
/* Columns before an option's help. */
#define NP_HELP_COL		24

static const struct np_opt np_help_opt = {
	"help", 'h', no_argument, 'h', NULL, "print this help and exit",
};

/* What each exit code means, for the help's last lines. */
static const char *const np_exit_words[] = {
	[NP_EXIT_OK] = "ok",
	[NP_EXIT_FAIL] = "failed",
	[NP_EXIT_USAGE] = "usage",
	[NP_EXIT_NODEV] = "module missing or without this feature",
	[NP_EXIT_PERM] = "permission denied",
	[NP_EXIT_NOPROC] = "no such process",
	[NP_EXIT_NODE] = "bad target node",
	[NP_EXIT_PARTIAL] = "some pages could not move (busy, shared, no memory on the node)",
	[NP_EXIT_REJECTED] = "the module refused a value",
};

static const struct np_opt *np_opt_at(const struct np_cmd_desc *d, size_t i)
{
	return i < d->nr_opts ? &d->opts[i] : &np_help_opt;
}

/* Help text lines after the first are indented to the help column. */
static void np_print_help(FILE *out, const char *help)
{
	const char *nl;

	while ((nl = strchr(help, '\n'))) {
		fprintf(out, "%.*s\n%*s", (int)(nl - help), help, NP_HELP_COL, "");
		help = nl + 1;
	}
	fprintf(out, "%s\n", help);
}

void np_usage(const struct np_cmd_desc *d, FILE *out)
{
	char head[64];
	size_t i;
	int len, code;

	fprintf(out, "usage: numaplace %s %s\n", d->name, d->synopsis);
	if (d->about)
		fprintf(out, "\n%s\n", d->about);
	fputc('\n', out);
	for (i = 0; i <= d->nr_opts; i++) {
		const struct np_opt *o = np_opt_at(d, i);
		const char *arg = o->arg ? o->arg : "";

		if (o->short_name)
			len = snprintf(head, sizeof(head), "  -%c, --%s", o->short_name,
				       o->name);
		else
			len = snprintf(head, sizeof(head), "  --%s", o->name);
		if (o->arg)
			len += snprintf(head + len, sizeof(head) - len,
					o->has_arg == optional_argument ?
					" [%s]" : " %s", arg);
		if (len >= NP_HELP_COL - 1)
			fprintf(out, "%s\n%*s", head, NP_HELP_COL, "");
		else
			fprintf(out, "%-*s", NP_HELP_COL, head);
		np_print_help(out, o->help);
	}
	if (d->operands)
		fprintf(out, "%s\n", d->operands);
	fprintf(out, "\nexit status:\n");
	for (code = 0; code < (int)NP_ARRAY_SIZE(np_exit_words); code++)
		if (d->exits & NP_EXIT_BIT(code))
			fprintf(out, "  %d  %s\n", code, np_exit_words[code]);
}

int np_usage_error(const struct np_cmd_desc *d, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "numaplace %s: ", d->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	np_usage(d, stderr);
	return NP_EXIT_USAGE;
}

void np_getopt_init(struct np_getopt *g, const struct np_cmd_desc *desc,
		    int argc, char **argv)
{
	memset(g, 0, sizeof(*g));
	g->desc = desc;
	g->argc = argc;
	g->argv = argv;
}

int np_getopt(struct np_getopt *g)
{
	const struct np_cmd_desc *d = g->desc;
	struct option lo[NP_MAX_OPTS + 1];
	char so[3 * NP_MAX_OPTS + 2], *s = so;
	size_t i, nr = d->nr_opts + 1;
	int opt;

	if (nr > NP_MAX_OPTS) {
		fprintf(stderr, "numaplace %s: too many options\n", d->name);
		return NP_OPT_ERROR;
	}
	if (!g->started) {
		optind = 1;	/* each command parses its own argv */
		g->started = 1;
	}
	/* ':' first: a missing argument is ':', not '?'. */
	*s++ = ':';
	for (i = 0; i < nr; i++) {
		const struct np_opt *o = np_opt_at(d, i);

		lo[i] = (struct option){ o->name, o->has_arg, NULL, o->val };
		if (!o->short_name)
			continue;
		*s++ = o->short_name;
		if (o->has_arg != no_argument)
			*s++ = ':';
		if (o->has_arg == optional_argument)
			*s++ = ':';
	}
	*s = 0;
	memset(&lo[nr], 0, sizeof(lo[nr]));
	opterr = 0;	/* our messages name the command */
	opt = getopt_long(g->argc, g->argv, so, lo, NULL);
	switch (opt) {
	case 'h':
		np_usage(d, stdout);
		return NP_OPT_HELP;
	case ':':
		np_usage_error(d, "'%s' needs an argument", g->argv[optind - 1]);
		return NP_OPT_ERROR;
	case '?':
		if (optopt && optopt < 256)
			np_usage_error(d, "unknown option '-%c'", optopt);
		else
			np_usage_error(d, "unknown option '%s'",
				       g->argv[optind - 1]);
		return NP_OPT_ERROR;
	}
	return opt;
}

int np_parse_opts(const struct np_cmd_desc *d, int argc, char **argv,
		  np_opt_cb cb, void *data)
{
	struct np_getopt g;
	int opt, ret;

	np_getopt_init(&g, d, argc, argv);
	while ((opt = np_getopt(&g)) != -1) {
		if (opt == NP_OPT_HELP)
			return NP_OPT_HELP;
		if (opt == NP_OPT_ERROR)
			return NP_EXIT_USAGE;
		ret = cb ? cb(data, opt, optarg) : NP_EXIT_OK;
		if (ret)
			return ret;
	}
	return NP_EXIT_OK;
}

int np_parse_opts_only(const struct np_cmd_desc *d, int argc, char **argv,
		       np_opt_cb cb, void *data)
{
	int ret = np_parse_opts(d, argc, argv, cb, data);

	if (!ret && optind < argc)
		return np_usage_error(d, "unknown argument '%s'", argv[optind]);
	return ret;
}

int np_opt_flag(void *data, int opt, const char *arg)
{
	*(int *)data = 1;
	return NP_EXIT_OK;
}

int np_cmd_run(const struct np_cmd_steps *s, void *cmd, int argc,
	       char **argv)
{
	int ret = np_parse_opts(s->desc, argc, argv, s->opt, cmd);

	if (ret)
		return ret == NP_OPT_HELP ? NP_EXIT_OK : ret;
	ret = s->operands(cmd, argc, argv);
	if (ret)
		return ret;
	ret = s->open(cmd);
	if (!ret)
		ret = s->run(cmd);
	if (s->free)
		s->free(cmd);
	return ret;
}

int np_bad_arg(const struct np_cmd_desc *d, const char *what, const char *arg)
{
	fprintf(stderr, "numaplace %s: bad %s '%s'\n", d->name, what, arg);
	return NP_EXIT_USAGE;
}

int np_opt_pid(const struct np_cmd_desc *d, const char *arg, int *pid)
{
	return np_parse_pid(arg, pid) ? np_bad_arg(d, "pid", arg) : NP_EXIT_OK;
}

int np_proc_opt(const struct np_cmd_desc *d, struct np_proc_args *a, int opt,
		const char *arg)
{
	switch (opt) {
	case 'p':
		return np_opt_pid(d, arg, &a->pid);
	case NP_OPT_ALL:
		a->all = 1;
		break;
	case NP_OPT_JSON:
		a->json = 1;
		break;
	}
	return NP_EXIT_OK;
}
