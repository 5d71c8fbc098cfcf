/* SPDX-License-Identifier: GPL-2.0 */
#ifndef NP_CLI_H
#define NP_CLI_H

#include <signal.h>

/* Exit codes of the numaplace tool. */
enum np_exit {
	NP_EXIT_OK = 0,
	NP_EXIT_FAIL = 1,	/* the operation failed */
	NP_EXIT_USAGE = 2,	/* bad command line */
	NP_EXIT_NODEV = 3,	/* /dev/numaplace missing or incompatible */
	NP_EXIT_PERM = 4,	/* permission denied: the process, or CAP_NET_ADMIN */
	NP_EXIT_NOPROC = 5,	/* no such process */
	NP_EXIT_NODE = 6,	/* target node without memory, absent or not allowed */
	NP_EXIT_PARTIAL = 7,	/* some pages could not move (busy, shared, no memory) */
	NP_EXIT_REJECTED = 8,	/* the module refused a value (its message says why) */
};

struct np_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

int np_parse_range(const char *s, unsigned long long *start,
		   unsigned long long *end);

/* Set by SIGINT / SIGTERM once np_stop_on_signals() ran (no SA_RESTART). */
extern volatile sig_atomic_t np_stop;
void np_stop_on_signals(void);

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
