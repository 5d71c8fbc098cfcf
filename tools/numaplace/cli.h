/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: what the commands share. The helpers are in util.c, the
 * option tables' parser in opts.c, the output layer in output.h.
 */
#ifndef NP_CLI_H
#define NP_CLI_H

#include <signal.h>
#include <stdio.h>

#include "array.h"
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

/*
 * Entries of an np_opt table, as perf's OPT_BOOLEAN() and OPT_STRING():
 * a long option without an argument (--NAME), one with an argument
 * (--NAME ARG), both with a @val above 255, and -p/--pid PID.
 */
#define NP_OPT_FLAG(name, val, help) \
	{ name, 0, no_argument, val, NULL, help }
#define NP_OPT_ARG(name, val, arg, help) \
	{ name, 0, required_argument, val, arg, help }
#define NP_OPT_PID(help) \
	{ "pid", 'p', required_argument, 'p', "PID", help }

/*
 * The @val of the long options several commands share; a command's own
 * long options take theirs from NP_OPT_CMD on.
 */
enum { NP_OPT_ALL = 256, NP_OPT_JSON, NP_OPT_CMD };

/* A struct np_cmd_desc's @opts and @nr_opts, from one array. */
#define NP_CMD_OPTS(array)	.opts = (array), .nr_opts = NP_ARRAY_SIZE(array)
/*
 * The synopsis and options of a command whose one option is --json
 * (info, monitor), @help its help: np_parse_opts_only() with
 * np_opt_flag() parses them.
 */
#define NP_CMD_JSON_ONLY(help)						\
	.synopsis = "[--json]",						\
	NP_CMD_OPTS(((const struct np_opt[]){				\
		NP_OPT_FLAG("json", NP_OPT_JSON, help) }))

#define NP_EXIT_BIT(code)	(1U << (code))
/* What every command that talks to the module may exit with. */
#define NP_EXITS_BASE	(NP_EXIT_BIT(NP_EXIT_OK) | NP_EXIT_BIT(NP_EXIT_FAIL) | \
			 NP_EXIT_BIT(NP_EXIT_USAGE) | NP_EXIT_BIT(NP_EXIT_NODEV))
/* ... and every command on a process's pages (-p PID). */
#define NP_EXITS_PROC	(NP_EXITS_BASE | NP_EXIT_BIT(NP_EXIT_PERM) | \
			 NP_EXIT_BIT(NP_EXIT_NOPROC))

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

/*
 * One option of a command: its @val and argument (NULL without one).
 * NP_EXIT_OK to go on, or an exit code that ends the parse.
 */
typedef int (*np_opt_cb)(void *data, int opt, const char *arg);

/*
 * Every option of @argv to @cb (NULL: the command has none but --help).
 * NP_EXIT_OK with optind at the first operand, NP_OPT_HELP after --help
 * (said on stdout), NP_EXIT_USAGE after a bad option (said), or what
 * @cb ended with.
 */
int np_parse_opts(const struct np_cmd_desc *desc, int argc, char **argv,
		  np_opt_cb cb, void *data);
/* np_parse_opts() for a command without operands: one is a usage error. */
int np_parse_opts_only(const struct np_cmd_desc *desc, int argc, char **argv,
		       np_opt_cb cb, void *data);
/* An np_opt_cb that sets the int at @data to 1 (info's and monitor's --json). */
int np_opt_flag(void *data, int opt, const char *arg);

/**
 * struct np_cmd_steps - a command run step by step (query, migrate, watch)
 * @desc: its usage and options
 * @opt: each option of it (np_parse_opts()), with the command as @data
 * @operands: the operands, optind the first: NP_EXIT_OK or NP_EXIT_USAGE
 *	(said); checks of the options together go here too
 * @open: the handshake with the module
 * @run: the work, its output flushed
 * @free: what @open and @run left, after either; NULL for nothing
 *
 * @open and @run return an exit code, the run ends at the first not
 * NP_EXIT_OK.
 */
struct np_cmd_steps {
	const struct np_cmd_desc *desc;
	np_opt_cb opt;
	int (*operands)(void *cmd, int argc, char **argv);
	int (*open)(void *cmd);
	int (*run)(void *cmd);
	void (*free)(void *cmd);
};

/* @s on @cmd (set up by the caller): the command's exit code. */
int np_cmd_run(const struct np_cmd_steps *s, void *cmd, int argc,
	       char **argv);
/* "numaplace NAME: bad WHAT 'ARG'" on stderr; NP_EXIT_USAGE. */
int np_bad_arg(const struct np_cmd_desc *desc, const char *what,
	       const char *arg);
/* -p PID into *@pid: NP_EXIT_OK, or NP_EXIT_USAGE (said). */
int np_opt_pid(const struct np_cmd_desc *desc, const char *arg, int *pid);

/* ---- shared helpers (util.c) ----------------------------------------- */

int np_parse_range(const char *s, unsigned long long *start,
		   unsigned long long *end);
/* A decimal number in [0, @max], its end in *@end. 0 or -EINVAL/-ERANGE. */
int np_parse_uint(const char *s, char **end, unsigned long max,
		  unsigned long *val);
/* The whole of @s a decimal number in [0, @max]. 0 or -EINVAL/-ERANGE. */
int np_parse_whole_uint(const char *s, unsigned long max, unsigned long *val);

/* A command's RANGE operand. */
struct np_range {
	int set;			/* a RANGE was given */
	unsigned long long start, end;	/* [start, end), page aligned */
};

/* RANGE @s into @r: NP_EXIT_OK, or NP_EXIT_USAGE (said, with @desc's name). */
int np_range_arg(const struct np_cmd_desc *desc, const char *s,
		 struct np_range *r);
/*
 * The operands of [RANGE | --all] (@all: --all was given) into @r (left
 * unset without one): NP_EXIT_OK, or NP_EXIT_USAGE (said). NP_RANGE_HELP
 * is their help (struct np_cmd_desc's @operands).
 */
#define NP_RANGE_HELP \
	"  RANGE                 START-END or START+LEN, in hex as /proc/PID/maps"
int np_range_operand(const struct np_cmd_desc *desc, int argc, char **argv,
		     int all, struct np_range *r);

/* What the commands on a process's pages take alike (query, migrate, watch). */
struct np_proc_args {
	int pid;			/* -p PID; 0: not given */
	int all, json;			/* --all, --json */
	struct np_range range;		/* RANGE, if given */
};

/*
 * -p PID, --all or --json (other options: nothing) into @a: NP_EXIT_OK,
 * or NP_EXIT_USAGE (said). An np_opt_cb's default case (opts.c).
 */
int np_proc_opt(const struct np_cmd_desc *desc, struct np_proc_args *a,
		int opt, const char *arg);
/* A whole decimal pid, 1 to INT_MAX. 0 or -EINVAL. */
int np_parse_pid(const char *s, int *pid);
/*
 * A node list, "0,1" or "0-3,5", of nodes below @nr into @mask (@nr / 64
 * words, cleared first). 0, or -EINVAL for a bad or empty list.
 */
int np_parse_node_list(const char *s, unsigned int nr, __u64 *mask);

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
/*
 * np_read_maps() within @r: each VMA's part in the range to @cb and each
 * hole of the range (in no VMA), in address order, with @perms and @name
 * NULL. Without a range (@r->set clear), every VMA and no hole.
 */
int np_read_range_maps(const char *who, int pid, const struct np_range *r,
		       np_maps_cb cb, void *data);

/* A bit and its name, for masks printed as names. */
struct np_bit_name {
	unsigned long long bit;
	const char *name;
};

/* How a mask prints (np_print_names()): its bits' names, and what else. */
struct np_bits {
	const struct np_bit_name *names;
	size_t nr_names;
	const char *sep;	/* between names in text */
	const char *none;	/* text without a bit set */
	int unknown;		/* bits without a name as one hex number */
};

/* The engines, NUMAPLACE_ENGINE_* by bit: their names, as migrate prints them. */
#define NP_NR_ENGINES		4
extern const struct np_bit_name np_engine_bit_names[NP_NR_ENGINES];
extern const struct np_bits np_engine_bits;
/* The name of engine bit number @e, "engine@e" (in @buf) when it has none. */
const char *np_engine_name(unsigned int e, char *buf, size_t size);

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
int np_cmd_tier(int argc, char **argv);

/* watch.c: the watch command, and its lines for the monitor */
struct numaplace_watch_record;
int np_cmd_watch(int argc, char **argv);
void np_watch_print(const struct numaplace_watch_record *r, long pid, int json);
void np_watch_print_id(const struct numaplace_watch_record *r, long pid,
		       unsigned long long id, int json);

#endif
