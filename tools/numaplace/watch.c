// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace watch: print a line each time the kernel changes the placement
 * of a range of a process (NUMAPLACE_IOC_WATCH), until the range or the
 * process is gone, or SIGINT/SIGTERM. Every line is flushed.
 *
 *   numaplace watch [-p PID] START-END|START+LEN [--json] [--count N]
 *
 * np_watch_print_id() also prints the WATCH events of `numaplace monitor`.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "numaplace.h"
#include "cli.h"
#include "output.h"

/* Records read per read(2). */
#define NP_WATCH_READ_RECS	16

static const char *const np_watch_reasons[] = {
	[0] = "start",		/* the line printed as the watch begins */
	[NUMAPLACE_WATCH_MIGRATED] = "migrated",
	[NUMAPLACE_WATCH_UNMAPPED] = "unmapped",
	[NUMAPLACE_WATCH_GONE] = "gone",
	[NUMAPLACE_WATCH_OVERFLOW] = "overflow",
	[NUMAPLACE_WATCH_MAPPED] = "mapped",
};

struct np_watch_cmd {
	struct np_proc_args proc;	/* -p PID, RANGE, --json */
	long count;		/* records to print, 0: no limit */
	struct numaplace_info info;
};

enum { NP_OPT_COUNT = NP_OPT_CMD };

static const struct np_opt np_watch_opts[] = {
	NP_OPT_PID("the process (default: this one, which is of little use)"),
	NP_OPT_FLAG("json", NP_OPT_JSON, "one JSON object per line"),
	NP_OPT_ARG("count", NP_OPT_COUNT, "N", "stop after N records"),
};

static const struct np_cmd_desc np_watch_desc = {
	.name = "watch",
	.synopsis = "[-p PID] START-END|START+LEN [--json] [--count N]",
	.about = "Print the range's pages per node now, then a line each time the\n"
		 "kernel changes them (migration by anyone, NUMA balancing,\n"
		 "compaction, swap, unmap): time, pid, the record's number, reason,\n"
		 "changed sub-range and pages, and per node the pages before -> after.\n"
		 "Ends when the range or the process is gone, or on SIGINT/SIGTERM.",
	NP_CMD_OPTS(np_watch_opts),
	.operands = "  START-END|START+LEN   the range, in hex as /proc/PID/maps",
	.exits = NP_EXITS_PROC,
};

static const char *np_watch_reason(unsigned int reason)
{
	if (reason < NP_ARRAY_SIZE(np_watch_reasons) &&
	    np_watch_reasons[reason])
		return np_watch_reasons[reason];
	return "unknown";
}

/* Per node with pages before or after: "  n0 12->0"; JSON objects. */
static void np_watch_print_nodes(struct np_out *o,
				 const struct numaplace_watch_record *r,
				 unsigned int nr)
{
	unsigned int n;

	np_out_arr_open(o, "nodes", 0);
	for (n = 0; n < nr; n++) {
		if (!r->before[n] && !r->after[n])
			continue;
		np_out_obj_open(o, NULL, 0);
		np_print_uint(o, NP_PRINT_ANY, "node", "  n%llu ", n);
		np_print_uint(o, NP_PRINT_ANY, "before", "%llu", r->before[n]);
		np_print_uint(o, NP_PRINT_ANY, "after", "->%llu", r->after[n]);
		np_out_close(o);
	}
	np_out_close(o);
}

/*
 * One record (from the fd, or a netlink WATCH event with the watch's
 * @id; 0 when unknown) as a line.
 */
void np_watch_print_id(const struct numaplace_watch_record *r, long pid,
		       unsigned long long id, int json)
{
	int unplaced = r->unplaced_before || r->unplaced_after;
	unsigned int nr = r->nr_nodes;
	enum np_print t = unplaced ? NP_PRINT_ANY : NP_PRINT_JSON;
	struct timeval tv;
	char seq[48];
	struct np_out o;

	if (nr > NUMAPLACE_WATCH_NODES)
		nr = NUMAPLACE_WATCH_NODES;
	if (np_out_begin(&o, json ? NP_FMT_JSON : NP_FMT_TEXT))
		return;
	gettimeofday(&tv, NULL);
	np_print_time(&o, NP_PRINT_ANY, "time", "%s", &tv);
	np_print_str(&o, NP_PRINT_JSON, "event", NULL, "watch");
	if (id)		/* the monitor: any watch's record */
		np_print_uint(&o, NP_PRINT_JSON, "watch", NULL, id);
	np_print_int(&o, NP_PRINT_ANY, "pid", " %8lld", pid);
	np_print_uint(&o, NP_PRINT_JSON, "cookie", NULL, r->cookie);
	np_print_uint(&o, NP_PRINT_JSON, "seq", NULL, r->seq);
	/* Text: the record as "w<watch>#<seq>", or "#<seq>". */
	if (id)
		snprintf(seq, sizeof(seq), "w%llu#%llu", id,
			 (unsigned long long)r->seq);
	else
		snprintf(seq, sizeof(seq), "#%llu", (unsigned long long)r->seq);
	np_print_str(&o, NP_PRINT_TEXT, NULL, " %-7s", seq);
	np_print_str(&o, NP_PRINT_ANY, "reason", " %-8s",
		     np_watch_reason(r->reason));
	np_print_hex(&o, NP_PRINT_ANY, "start", " %#llx", r->start);
	np_print_uint(&o, NP_PRINT_ANY, "len", "+%#llx", r->len);
	np_print_uint(&o, NP_PRINT_ANY, "changed", " %llu", r->nr_changed);
	np_print_text(&o, " %s", r->reason == NUMAPLACE_WATCH_OVERFLOW ?
		      "records" : "pages");
	np_watch_print_nodes(&o, r, nr);
	/* The pages on no node: JSON [before, after]; text when any. */
	np_out_arr_open(&o, "unplaced", 0);
	if (unplaced)
		np_print_text(&o, "  none ");
	np_print_uint(&o, t, NULL, "%llu", r->unplaced_before);
	np_print_uint(&o, t, NULL, "->%llu", r->unplaced_after);
	np_out_close(&o);
	np_print_text(&o, "\n");
	np_out_end(&o);
	fflush(stdout);
}

void np_watch_print(const struct numaplace_watch_record *r, long pid, int json)
{
	np_watch_print_id(r, pid, 0, json);
}

static int np_watch_opt(void *data, int opt, const char *arg)
{
	const struct np_cmd_desc *d = &np_watch_desc;
	struct np_watch_cmd *c = data;
	unsigned long count;

	switch (opt) {
	case NP_OPT_COUNT:
		if (np_parse_whole_uint(arg, 0x7fffffffUL, &count) || !count)
			return np_bad_arg(d, "count", arg);
		c->count = count;
		break;
	default:
		return np_proc_opt(d, &c->proc, opt, arg);
	}
	return NP_EXIT_OK;
}

/* The one RANGE. */
static int np_watch_operands(void *data, int argc, char **argv)
{
	struct np_watch_cmd *c = data;

	if (optind != argc - 1)
		return np_usage_error(&np_watch_desc, "give one RANGE");
	return np_range_arg(&np_watch_desc, argv[optind], &c->proc.range);
}

/* The handshake: the device and its watches. */
static int np_watch_open(void *data)
{
	struct np_watch_cmd *c = data;
	int ret;

	ret = np_handshake("numaplace watch", &c->info, 0, 0, NULL);
	if (ret)
		return ret;
	if (!(c->info.features & NUMAPLACE_FEAT_WATCH)) {
		fprintf(stderr, "numaplace watch: the module has no watches here\n");
		return NP_EXIT_NODEV;
	}
	return NP_EXIT_OK;
}

/* The range's totals as the watch starts: a record with nothing changed. */
static void np_watch_print_start(const struct np_watch_cmd *c,
				 const __u64 *totals, unsigned int nr)
{
	struct numaplace_watch_record r = { 0 };
	__u64 placed = 0;
	unsigned int n;

	r.start = c->proc.range.start;
	r.len = c->proc.range.end - c->proc.range.start;
	r.nr_nodes = nr;
	for (n = 0; n < nr && n < NUMAPLACE_WATCH_NODES; n++) {
		r.before[n] = r.after[n] = totals[n];
		placed += totals[n];
	}
	r.unplaced_before = r.unplaced_after =
		r.len / sysconf(_SC_PAGESIZE) - placed;
	if (c->proc.json) {
		np_watch_print(&r, c->proc.pid, 1);
		return;
	}
	printf("%-12s %8s %-7s %-8s %s\n", "TIME", "PID", "SEQ", "REASON",
	       "RANGE CHANGED  NODE BEFORE->AFTER");
	np_watch_print(&r, c->proc.pid, 0);
}

/* Read and print until the end, a signal or --count. */
static int np_watch_loop(const struct np_watch_cmd *c, int fd)
{
	struct numaplace_watch_record r[NP_WATCH_READ_RECS];
	long printed = 0;
	ssize_t n, i;

	while (!np_stop) {
		/* poll(2) returns on a signal; the read after it cannot block. */
		n = numaplace_watch_wait(fd, -1);
		if (n < 0) {
			fprintf(stderr, "numaplace watch: poll: %s\n", strerror(-n));
			return NP_EXIT_FAIL;
		}
		if (!n)
			continue;
		n = numaplace_watch_read(fd, r, NP_WATCH_READ_RECS);
		if (n == -EAGAIN)
			continue;
		if (n < 0) {
			fprintf(stderr, "numaplace watch: read: %s\n", strerror(-n));
			return NP_EXIT_FAIL;
		}
		if (!n)
			return NP_EXIT_OK;	/* after GONE */
		for (i = 0; i < n; i++) {
			np_watch_print(&r[i], c->proc.pid, c->proc.json);
			if (c->count && ++printed >= c->count)
				return NP_EXIT_OK;
		}
	}
	return NP_EXIT_OK;
}

/* The watch of the range, its lines until it ends. */
static int np_watch_run(void *data)
{
	__u64 totals[NUMAPLACE_WATCH_NODES] = { 0 };
	struct np_watch_cmd *c = data;
	const struct np_range *r = &c->proc.range;
	int ret, fd;

	fd = numaplace_watch_open(c->proc.pid, (void *)(uintptr_t)r->start,
				  r->end - r->start, 0, NUMAPLACE_WATCH_CLOEXEC,
				  totals, NUMAPLACE_WATCH_NODES);
	if (fd < 0) {
		fprintf(stderr, "numaplace watch: %s\n", strerror(-fd));
		return np_exit_of(fd);
	}
	if (!c->proc.pid)
		c->proc.pid = getpid();
	/* No SA_RESTART: the signal ends the read at once. */
	np_stop_on_signals();
	np_watch_print_start(c, totals, c->info.nr_node_ids);
	ret = np_watch_loop(c, fd);
	numaplace_watch_close(fd);
	return ret;
}

static const struct np_cmd_steps np_watch_steps = {
	.desc = &np_watch_desc, .opt = np_watch_opt,
	.operands = np_watch_operands, .open = np_watch_open,
	.run = np_watch_run,
};

int np_cmd_watch(int argc, char **argv)
{
	struct np_watch_cmd c = { 0 };

	return np_cmd_run(&np_watch_steps, &c, argc, argv);
}
