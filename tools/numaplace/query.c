// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace query: on which nodes are a process's pages? One row per VMA
 * (or per piece of a range), totals per node and, on request, the runs.
 *
 *   numaplace query [-p PID] [START-END | START+LEN | --all] [--json] [--runs]
 *
 * Addresses and lengths are hex, as in /proc/PID/maps.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nl.h"
#include "numaplace.h"
#include "output.h"

/* Runs fetched per ioctl: 24 KiB of buffer; longer lists are resumed. */
#define NP_RUNS_BATCH	1024

/* One row of the table: a VMA, the part of it in the range, or a gap. */
struct np_row {
	unsigned long long start, end;	/* [start, end), page aligned */
	char perms[8];
	char *name;
	__u64 *node_pages;		/* nr_nodes entries */
	__u64 unplaced;
};

struct np_query_cmd {
	struct np_proc_args proc;	/* pid 0: the caller (this tool) */
	int runs;
	unsigned int access;		/* -1U: no access scan, else its flags */
	struct numaplace_info info;
	unsigned int nr_nodes;		/* info.nr_node_ids, at least 1 */
	unsigned char *show_node;	/* nr_nodes flags: node has a column */
	struct np_row *rows;
	size_t nr_rows, cap_rows;
	__u64 *total;			/* nr_nodes entries */
	__u64 total_unplaced;
};

static const struct np_bit_name np_kind_names[] = {
	{ NUMAPLACE_KIND_PRESENT, "present" },
	{ NUMAPLACE_KIND_PMD, "pmd" },
	{ NUMAPLACE_KIND_PUD, "pud" },
	{ NUMAPLACE_KIND_HUGETLB, "hugetlb" },
	{ NUMAPLACE_KIND_ZERO, "zero" },
	{ NUMAPLACE_KIND_ANON, "anon" },
	{ NUMAPLACE_KIND_FILE, "file" },
	{ NUMAPLACE_KIND_SWAP, "swap" },
	{ NUMAPLACE_KIND_MIGRATION, "migration" },
	{ NUMAPLACE_KIND_NONE, "none" },
	{ NUMAPLACE_KIND_NOVMA, "novma" },
	{ NUMAPLACE_KIND_SPECIAL, "special" },
	{ NUMAPLACE_KIND_PROTNONE, "protnone" },
	{ NUMAPLACE_KIND_OTHER, "other" },
	{ NUMAPLACE_KIND_YOUNG, "young" },
	{ NUMAPLACE_KIND_DIRTY, "dirty" },
};

static const struct np_bits np_kind_bits = {
	np_kind_names, NP_ARRAY_SIZE(np_kind_names), ",", "-", 1,
};

enum { NP_OPT_RUNS = NP_OPT_CMD, NP_OPT_ACCESS, NP_OPT_CLEAR_ACCESS };

static const struct np_opt np_query_opts[] = {
	NP_OPT_PID("the process to look at (default: numaplace itself)"),
	NP_OPT_FLAG("all", NP_OPT_ALL,
		    "every VMA of the process (the default)"),
	NP_OPT_FLAG("json", NP_OPT_JSON, "print JSON instead of a table"),
	NP_OPT_FLAG("runs", NP_OPT_RUNS,
		    "also list the runs: start, pages, node, kind"),
	NP_OPT_FLAG("access", NP_OPT_ACCESS,
		    "the runs with their young and dirty bits (--runs)"),
	NP_OPT_FLAG("clear-access", NP_OPT_CLEAR_ACCESS,
		    "the same, and clear the young bits (TLB flushed)"),
};

static const struct np_cmd_desc np_query_desc = {
	.name = "query",
	.synopsis = "[-p PID] [RANGE | --all] [--json] [--runs | --access | --clear-access]",
	NP_CMD_OPTS(np_query_opts),
	.operands = NP_RANGE_HELP,
	.exits = NP_EXITS_PROC,
};

/* Rows allocated at first: a process's VMAs, often fewer. */
#define NP_ROWS_FIRST	64

static int np_add_row(struct np_query_cmd *c, unsigned long long start,
		      unsigned long long end, const char *perms,
		      const char *name)
{
	struct np_row *row;

	if (np_array_reserve(c->rows, &c->cap_rows, c->nr_rows, NP_ROWS_FIRST))
		return -ENOMEM;
	row = &c->rows[c->nr_rows];
	memset(row, 0, sizeof(*row));
	row->start = start;
	row->end = end;
	snprintf(row->perms, sizeof(row->perms), "%s", perms);
	row->name = strdup(name);
	row->node_pages = calloc(c->nr_nodes, sizeof(__u64));
	if (!row->name || !row->node_pages) {
		free(row->name);
		free(row->node_pages);
		return -ENOMEM;
	}
	c->nr_rows++;
	return 0;
}

/*
 * Add the row of one VMA from /proc/PID/maps (with a range, its part in
 * the range), or of a hole of the range as a "[no vma]" row.
 */
static int np_add_vma(void *data, unsigned long long start,
		      unsigned long long end, const char *perms,
		      const char *name)
{
	if (!name)
		return np_add_row(data, start, end, "----", "[no vma]");
	return np_add_row(data, start, end, perms, name);
}

/* The rows of the range (or every VMA), and the range's end past them. */
static int np_query_maps(struct np_query_cmd *c)
{
	char path[64];
	int ret;

	ret = np_read_range_maps("numaplace", c->proc.pid, &c->proc.range,
				 np_add_vma, c);
	if (ret == -ENOMEM) {
		fprintf(stderr, "numaplace: out of memory\n");
	} else if (ret && ret != -EIO) {
		if (c->proc.pid)
			snprintf(path, sizeof(path), "/proc/%d/maps",
				 c->proc.pid);
		else
			snprintf(path, sizeof(path), "/proc/self/maps");
		fprintf(stderr, "numaplace: %s: %s\n", path, strerror(-ret));
	}
	return ret;
}

/* Per-node totals of every row, one ioctl each; sums and columns. */
static int np_query_rows(struct np_query_cmd *c)
{
	unsigned int n;
	size_t i;
	int ret;

	for (i = 0; i < c->nr_rows; i++) {
		struct np_row *row = &c->rows[i];

		ret = numaplace_query_totals(c->proc.pid,
					     (void *)(uintptr_t)row->start,
					     row->end - row->start,
					     row->node_pages, c->nr_nodes,
					     &row->unplaced);
		if (ret) {
			fprintf(stderr, "numaplace: query %llx-%llx (%s): %s\n",
				row->start, row->end, row->name,
				strerror(-ret));
			return ret;
		}
		for (n = 0; n < c->nr_nodes; n++) {
			c->total[n] += row->node_pages[n];
			if (row->node_pages[n])
				c->show_node[n] = 1;
		}
		c->total_unplaced += row->unplaced;
	}
	return 0;
}

/* Text column formats, set by the widest address and number. */
struct np_query_fmt {
	int width;		/* of "start-end" */
	int digits;		/* of the number columns */
	char num[24];		/* "  %8llu" */
	char total[32];		/* " %8llu pages  " */
};

static void np_print_run(struct np_out *o, const struct numaplace_run *r)
{
	const char *err = r->node < 0 ? np_errno_name(-r->node) : NULL;
	char buf[24];

	np_out_obj_open(o, NULL, 0);
	np_print_hex(o, NP_PRINT_ANY, "start", "%16llx", r->start);
	np_print_uint(o, NP_PRINT_ANY, "pages", " %10llu ", r->nr_pages);
	/* A run the walk could not read: its errno, named when known. */
	np_print_int(o, err ? NP_PRINT_JSON : NP_PRINT_ANY, "node", "%8lld  ",
		     r->node);
	if (r->node < 0 && !err)
		snprintf(buf, sizeof(buf), "errno %d", -r->node);
	if (r->node < 0)
		np_print_str(o, err ? NP_PRINT_ANY : NP_PRINT_JSON, "error",
			     "%8s  ", err ? err : buf);
	np_print_names(o, NP_PRINT_ANY, "kind", "%s\n", &np_kind_bits,
		       r->kind);
	np_out_close(o);
}

/* Fetch and print the runs of one row, resuming while the buffer fills. */
static int np_print_row_runs(struct np_out *o, const struct np_query_cmd *c,
			     const struct np_row *row,
			     struct numaplace_run *buf)
{
	unsigned long long addr = row->start;
	int pid = c->proc.pid;
	size_t nr, done, i;
	int ret;

	while (addr < row->end) {
		if (c->access == -1U)
			ret = numaplace_query_runs(pid, (void *)(uintptr_t)addr,
						   row->end - addr, buf,
						   NP_RUNS_BATCH, &nr, &done);
		else
			ret = numaplace_access_runs(pid, (void *)(uintptr_t)addr,
						    row->end - addr, c->access,
						    buf, NP_RUNS_BATCH, &nr,
						    &done, NULL);
		if (!ret && (!done || done > (row->end - addr) /
					     c->info.page_size))
			ret = -EIO;	/* the module made no sense */
		if (ret) {
			fflush(stdout);
			fprintf(stderr, "numaplace: runs of %llx-%llx: %s\n",
				addr, row->end, strerror(-ret));
			return ret;
		}
		for (i = 0; i < nr; i++)
			np_print_run(o, &buf[i]);
		addr += (unsigned long long)done * c->info.page_size;
	}
	return 0;
}

/* Pages per node with a column: JSON { "0": 12, ... }, text columns. */
static void np_print_node_pages(struct np_out *o, const struct np_query_cmd *c,
				const __u64 *pages, const char *fmt)
{
	char key[12];
	unsigned int n;

	np_out_obj_open(o, "pages", 0);
	for (n = 0; n < c->nr_nodes; n++) {
		if (!c->show_node[n])
			continue;
		snprintf(key, sizeof(key), "%u", n);
		np_print_uint(o, NP_PRINT_ANY, key, fmt, pages[n]);
	}
	np_out_close(o);
}

/* One VMA's row: its range, permissions, pages per node and name. */
static void np_print_row(struct np_out *o, const struct np_query_cmd *c,
			 const struct np_row *row, const struct np_query_fmt *f)
{
	int len = snprintf(NULL, 0, "%llx-%llx", row->start, row->end);

	np_print_hex(o, NP_PRINT_ANY, "start", "%llx", row->start);
	np_print_hex(o, NP_PRINT_ANY, "end", "-%llx", row->end);
	np_print_text(o, "%*s", f->width - len, "");
	np_print_str(o, NP_PRINT_ANY, "perms", " %-5s", row->perms);
	np_print_node_pages(o, c, row->node_pages, f->num);
	np_print_uint(o, NP_PRINT_ANY, "unplaced", f->num, row->unplaced);
	np_print_str(o, *row->name ? NP_PRINT_ANY : NP_PRINT_JSON, "name",
		     "  %s\n", row->name);
	if (!*row->name)
		np_print_text(o, "  [anon]\n");
}

/* Bytes of @pages in the largest binary unit that keeps a digit. */
static void np_print_size(struct np_out *o, __u64 pages,
			  unsigned int page_size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB",
					     "PiB", "EiB" };
	double size = (double)pages * page_size / 1024;
	size_t u = 0;

	while (size >= 1024 && u < NP_ARRAY_SIZE(units) - 1) {
		size /= 1024;
		u++;
	}
	np_print_text(o, "%8.1f %s\n", size, units[u]);
}

/* The totals: pages per node and unplaced, with their sizes. */
static void np_print_totals(struct np_out *o, const struct np_query_cmd *c,
			    const struct np_query_fmt *f)
{
	char key[12], label[24];
	unsigned int n;

	np_out_obj_open(o, "total", 0);
	np_out_obj_open(o, "pages", 0);
	for (n = 0; n < c->nr_nodes; n++) {
		if (!c->show_node[n])
			continue;
		snprintf(key, sizeof(key), "%u", n);
		snprintf(label, sizeof(label), "node %u", n);
		np_print_text(o, "%-10s", label);
		np_print_uint(o, NP_PRINT_ANY, key, f->total, c->total[n]);
		np_print_size(o, c->total[n], c->info.page_size);
	}
	np_out_close(o);
	np_print_text(o, "%-10s", "unplaced");
	np_print_uint(o, NP_PRINT_ANY, "unplaced", f->total, c->total_unplaced);
	np_print_size(o, c->total_unplaced, c->info.page_size);
	np_out_close(o);
}

static int np_digits(__u64 v)
{
	int d = 1;

	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

/* The totals are the largest numbers: they set the column width. */
static void np_query_fmt(const struct np_query_cmd *c, struct np_query_fmt *f)
{
	int num = (int)strlen("UNPLACED"), len;
	unsigned int n;
	size_t i;

	for (n = 0; n < c->nr_nodes; n++)
		if (c->show_node[n] && np_digits(c->total[n]) > num)
			num = np_digits(c->total[n]);
	if (np_digits(c->total_unplaced) > num)
		num = np_digits(c->total_unplaced);
	f->width = 0;
	for (i = 0; i < c->nr_rows; i++) {
		len = snprintf(NULL, 0, "%llx-%llx", c->rows[i].start,
			       c->rows[i].end);
		if (len > f->width)
			f->width = len;
	}
	f->digits = num;
	snprintf(f->num, sizeof(f->num), "  %%%dllu", num);
	snprintf(f->total, sizeof(f->total), " %%%dllu pages  ", num);
}

/* The table's heading (text): a column per node with memory. */
static void np_print_heading(struct np_out *o, const struct np_query_cmd *c,
			     const struct np_query_fmt *f)
{
	int num = f->digits;
	char name[16];
	unsigned int n;

	np_print_text(o, "%-*s %-5s", f->width, "ADDRESS", "PERMS");
	for (n = 0; n < c->nr_nodes; n++) {
		if (!c->show_node[n])
			continue;
		snprintf(name, sizeof(name), "NODE%u", n);
		np_print_text(o, "  %*s", num, name);
	}
	np_print_text(o, "  %*s  %s\n", num, "UNPLACED", "NAME");
}

/*
 * The answer: the table and its totals, then (--runs) the runs; in JSON
 * each VMA holds its runs. After an error the JSON is left unclosed, so
 * that no parser takes a part of the answer for all of it.
 */
static int np_query_print(const struct np_query_cmd *c,
			  struct numaplace_run *buf)
{
	struct np_query_fmt f;
	struct np_out o;
	unsigned int n;
	size_t i;
	int ret;

	if (np_out_begin(&o, c->proc.json ? NP_FMT_JSON : NP_FMT_TEXT))
		return -ENOMEM;
	np_query_fmt(c, &f);
	np_print_int(&o, NP_PRINT_JSON, "pid", NULL,
		     c->proc.pid ? c->proc.pid : (int)getpid());
	np_print_uint(&o, NP_PRINT_JSON, "page_size", NULL, c->info.page_size);
	np_out_arr_open(&o, "nodes", 0);
	for (n = 0; n < c->nr_nodes; n++)
		if (c->show_node[n])
			np_print_uint(&o, NP_PRINT_JSON, NULL, NULL, n);
	np_out_close(&o);
	np_print_heading(&o, c, &f);
	np_out_arr_open(&o, "vmas", 0);
	for (i = 0; i < c->nr_rows; i++) {
		np_out_obj_open(&o, NULL, 0);
		np_print_row(&o, c, &c->rows[i], &f);
		if (c->runs && c->proc.json) {
			np_out_arr_open(&o, "runs", 0);
			ret = np_print_row_runs(&o, c, &c->rows[i], buf);
			if (ret)
				return ret;
			np_out_close(&o);
		}
		np_out_close(&o);
	}
	np_out_close(&o);
	np_print_text(&o, "\n");
	np_print_totals(&o, c, &f);
	if (c->runs && !c->proc.json) {
		np_print_text(&o, "\n%16s %10s %8s  %s\n", "START", "PAGES",
			      "NODE", "KIND");
		for (i = 0; i < c->nr_rows; i++) {
			ret = np_print_row_runs(&o, c, &c->rows[i], buf);
			if (ret)
				return ret;
		}
	}
	np_out_end(&o);
	return 0;
}

/* The handshake: the device, its query feature and the node columns. */
static int np_query_open(void *data)
{
	struct np_query_cmd *c = data;
	unsigned int n;
	int ret;

	ret = np_handshake("numaplace", &c->info, 1ULL << NUMAPLACE_CMD_QUERY,
			   c->access == -1U ? NUMAPLACE_FEAT_QUERY :
			   NUMAPLACE_FEAT_ACCESS, "query pages");
	if (ret)
		return ret;
	/* A clear is flushed where the kernel can: else a page in use looks idle. */
	if (c->access && c->access != -1U &&
	    (c->info.features & NUMAPLACE_FEAT_ACCESS_FLUSH))
		c->access |= NUMAPLACE_QUERY_FLUSH_TLB;
	c->nr_nodes = c->info.nr_node_ids ? c->info.nr_node_ids : 1;
	if (c->nr_nodes > NUMAPLACE_MAX_NODES)
		c->nr_nodes = NUMAPLACE_MAX_NODES;
	c->show_node = calloc(c->nr_nodes, 1);
	c->total = calloc(c->nr_nodes, sizeof(*c->total));
	if (!c->show_node || !c->total) {
		fprintf(stderr, "numaplace: out of memory\n");
		return NP_EXIT_FAIL;
	}
	for (n = 0; n < c->nr_nodes; n++)
		c->show_node[n] = numaplace_node_isset(c->info.node_memory, n);
	return NP_EXIT_OK;
}

static int np_query_opt(void *data, int opt, const char *arg)
{
	struct np_query_cmd *c = data;

	switch (opt) {
	case NP_OPT_RUNS:
		c->runs = 1;
		break;
	case NP_OPT_ACCESS:
		c->runs = 1;
		c->access = 0;
		break;
	case NP_OPT_CLEAR_ACCESS:
		c->runs = 1;
		c->access = NUMAPLACE_QUERY_CLEAR_ACCESS;
		break;
	default:
		return np_proc_opt(&np_query_desc, &c->proc, opt, arg);
	}
	return NP_EXIT_OK;
}

/* [RANGE | --all] */
static int np_query_operands(void *data, int argc, char **argv)
{
	struct np_query_cmd *c = data;

	return np_range_operand(&np_query_desc, argc, argv, c->proc.all,
				&c->proc.range);
}

/* The rows of the range, printed (with the runs: a buffer for them). */
static int np_query_run(void *data)
{
	struct np_query_cmd *c = data;
	struct numaplace_run *buf = NULL;
	int ret;

	ret = np_query_maps(c);
	if (!ret)
		ret = np_query_rows(c);
	if (!ret && c->runs) {
		buf = calloc(NP_RUNS_BATCH, sizeof(*buf));
		if (!buf) {
			fprintf(stderr, "numaplace: out of memory\n");
			ret = -ENOMEM;
		}
	}
	if (!ret)
		ret = np_query_print(c, buf);
	fflush(stdout);
	free(buf);
	return np_exit_of(ret);
}

static void np_query_free(void *data)
{
	struct np_query_cmd *c = data;
	size_t i;

	for (i = 0; i < c->nr_rows; i++) {
		free(c->rows[i].name);
		free(c->rows[i].node_pages);
	}
	free(c->rows);
	free(c->show_node);
	free(c->total);
}

static const struct np_cmd_steps np_query_steps = {
	.desc = &np_query_desc, .opt = np_query_opt,
	.operands = np_query_operands, .open = np_query_open,
	.run = np_query_run, .free = np_query_free,
};

int np_cmd_query(int argc, char **argv)
{
	struct np_query_cmd c = { .access = -1U };

	return np_cmd_run(&np_query_steps, &c, argc, argv);
}
