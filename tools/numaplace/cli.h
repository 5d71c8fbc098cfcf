/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: what the commands share. The helpers are in util.c, the
 * option tables' parser in opts.c, the output layer in output.h.
 */
#ifndef NP_CLI_H
#define NP_CLI_H

#include <signal.h>
#include <stdio.h>

#include "numaplace.h"

#define NP_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Exit codes of the numaplace tool (numaplace(1), EXIT STATUS). */
enum np_exit {
	NP_EXIT_OK = 0,
	NP_EXIT_FAIL = 1,	/* the operation failed */
	NP_EXIT_USAGE = 2,	/* bad command line */
	NP_EXIT_NODEV = 3,	/* /dev/numaplace missing or incompatible */
	NP_EXIT_PERM = 4,	/* permission denied: the process, or
				 * CAP_SYS_ADMIN / CAP_NET_ADMIN */
	NP_EXIT_NOPROC = 5,	/* no such process */
	NP_EXIT_NODE = 6,	/* target node without memory, absent or not allowed */
	NP_EXIT_PARTIAL = 7,	/* some pages could not move (busy, shared, no memory) */
	NP_EXIT_REJECTED = 8,	/* the module refused a value (its message says why) */
};

/*
 * The exit code of a failure -errno (or errno) of the module, its netlink
 * family or /proc: the one mapping of every command. A command that knows
 * more (migrate's target node, config's refused value) decides first.
 */
int np_exit_of(int err);

/* ---- options: getopt_long from a declarative table (opts.c) ---------- */

/**
 * struct np_opt - one option of a command
 * @name: the long name, without "--"
 * @short_name: the short letter, 0 for none
 * @has_arg: no_argument, required_argument or optional_argument
 * @val: what np_getopt() returns for it: @short_name, or a value above 255
 * @arg: the argument's name in the help ("PID"), NULL without one
 * @help: one line or more ('\n' separated) of help
 */
struct np_opt {
	const char *name;
	int short_name;
	int has_arg;
	int val;
	const char *arg;
	const char *help;
};

/**
 * struct np_cmd_desc - a command's usage, options and exit codes
 * @name: "query"
 * @synopsis: what follows "usage: numaplace NAME " (may span lines)
 * @about: a paragraph before the options, or NULL
 * @opts: the options; -h/--help is added by np_getopt()
 * @nr_opts: entries of @opts
 * @operands: help of the positional arguments ("RANGE  START-END ..."),
 *	printed after the options, or NULL
 * @exits: the exit codes this command uses, NP_EXIT_* bits (1 << code)
 */
struct np_cmd_desc {
	const char *name;
	const char *synopsis;
	const char *about;
	const struct np_opt *opts;
	size_t nr_opts;
	const char *operands;
	unsigned int exits;
};

#define NP_EXIT_BIT(code)	(1U << (code))
/* What every command that talks to the module may exit with. */
#define NP_EXITS_BASE	(NP_EXIT_BIT(NP_EXIT_OK) | NP_EXIT_BIT(NP_EXIT_FAIL) | \
			 NP_EXIT_BIT(NP_EXIT_USAGE) | NP_EXIT_BIT(NP_EXIT_NODEV))

/* np_getopt(): -h/--help was given (the usage went to stdout). */
#define NP_OPT_HELP	(-2)
/* np_getopt(): a bad option (said, with the usage, on stderr). */
#define NP_OPT_ERROR	(-3)

struct np_getopt {
	const struct np_cmd_desc *desc;
	int argc;
	char **argv;
	int started;
};

void np_getopt_init(struct np_getopt *g, const struct np_cmd_desc *desc,
		    int argc, char **argv);
/*
 * The next option's @val (optarg holds its argument), -1 after the last
 * one (optind is the first operand), NP_OPT_HELP or NP_OPT_ERROR.
 */
int np_getopt(struct np_getopt *g);
void np_usage(const struct np_cmd_desc *desc, FILE *out);
/* "numaplace NAME: MESSAGE", the usage on stderr; NP_EXIT_USAGE. */
int np_usage_error(const struct np_cmd_desc *desc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- shared helpers (util.c) ----------------------------------------- */

int np_parse_range(const char *s, unsigned long long *start,
		   unsigned long long *end);
/* A decimal number in [0, @max], its end in *@end. 0 or -EINVAL/-ERANGE. */
int np_parse_uint(const char *s, char **end, unsigned long max,
		  unsigned long *val);
/* A whole decimal pid, 1 to INT_MAX. 0 or -EINVAL. */
int np_parse_pid(const char *s, int *pid);

/*
 * The handshake: INFO of /dev/numaplace into *@info and, when @cmd_bit is
 * not 0, the module's support of it (and of one of @features, if not 0);
 * @what names the missing support ("query pages"). Said on stderr with
 * @who's prefix; NP_EXIT_OK or NP_EXIT_NODEV.
 */
int np_handshake(const char *who, struct numaplace_info *info,
		 unsigned long long cmd_bit, unsigned long long features,
		 const char *what);

/*
 * Each line of /proc/PID/maps (PID 0: self) to @cb: start, end, perms
 * and the name. 0, the first non-zero return of @cb, or -errno (-ESRCH:
 * no such process; -EIO: a line did not parse, said on stderr with @who).
 */
typedef int (*np_maps_cb)(void *data, unsigned long long start,
			  unsigned long long end, const char *perms,
			  const char *name);
int np_read_maps(const char *who, int pid, np_maps_cb cb, void *data);

/* Seconds of @clock (CLOCK_MONOTONIC, CLOCK_REALTIME). */
double np_clock(int clock);

/* Set by SIGINT / SIGTERM once np_stop_on_signals() ran (no SA_RESTART). */
extern volatile sig_atomic_t np_stop;
void np_stop_on_signals(void);

/* ---- the commands ----------------------------------------------------- */

struct np_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

int np_cmd_info(int argc, char **argv);
int np_cmd_query(int argc, char **argv);
int np_cmd_migrate(int argc, char **argv);
int np_cmd_stats(int argc, char **argv);
int np_cmd_config(int argc, char **argv);
int np_cmd_monitor(int argc, char **argv);

/* watch.c: the watch command, and its lines for the monitor */
struct nlmsghdr;
struct numaplace_watch_record;
int np_cmd_watch(int argc, char **argv);
void np_watch_print(const struct numaplace_watch_record *r, long pid, int json);
void np_watch_print_id(const struct numaplace_watch_record *r, long pid,
		       unsigned long long id, int json);
void np_watch_print_nl(const struct nlmsghdr *nlh, int json);

#endif
