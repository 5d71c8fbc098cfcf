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
	int pid;			/* 0: the caller (this tool) */
	int all, json, runs;
	struct np_range range;		/* RANGE, if given */
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
};

static const struct np_bits np_kind_bits = {
	np_kind_names, NP_ARRAY_SIZE(np_kind_names), ",", "-", 1,
};

enum { NP_OPT_ALL = 256, NP_OPT_JSON, NP_OPT_RUNS };

static const struct np_opt np_query_opts[] = {
	{ "pid", 'p', required_argument, 'p', "PID",
	  "the process to look at (default: numaplace itself)" },
	{ "all", 0, no_argument, NP_OPT_ALL, NULL,
	  "every VMA of the process (the default)" },
	{ "json", 0, no_argument, NP_OPT_JSON, NULL,
	  "print JSON instead of a table" },
	{ "runs", 0, no_argument, NP_OPT_RUNS, NULL,
	  "also list the runs: start, pages, node, kind" },
};

static const struct np_cmd_desc np_query_desc = {
	.name = "query",
	.synopsis = "[-p PID] [RANGE | --all] [--json] [--runs]",
	.opts = np_query_opts,
	.nr_opts = NP_ARRAY_SIZE(np_query_opts),
	.operands = NP_RANGE_HELP,
	.exits = NP_EXITS_PROC,
};

/* Rows allocated at first: a process's VMAs, often fewer. */
#define NP_ROWS_FIRST	64

static int np_add_row(struct np_query_cmd *c, unsigned long long start,
		      unsigned long long end, const char *perms,
		      const char *name)
{
	struct np_row *rows = np_array_grow(c->rows, &c->cap_rows, c->nr_rows,
					    sizeof(*rows), NP_ROWS_FIRST);
	struct np_row *row;

	if (!rows)
		return -ENOMEM;
	c->rows = rows;
	row = &rows[c->nr_rows];
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

	ret = np_read_range_maps("numaplace", c->pid, &c->range, np_add_vma, c);
	if (ret == -ENOMEM) {
		fprintf(stderr, "numaplace: out of memory\n");
	} else if (ret && ret != -EIO) {
		if (c->pid)
			snprintf(path, sizeof(path), "/proc/%d/maps", c->pid);
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

		ret = numaplace_query_totals(c->pid,
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

static void np_print_run(const struct numaplace_run *r, int json, int first)
{
	const char *err = r->node < 0 ? np_errno_name(-r->node) : NULL;

	if (!json) {
		printf("%16llx %10llu ", (unsigned long long)r->start,
		       (unsigned long long)r->nr_pages);
		if (r->node >= 0)
			printf("%8d  ", r->node);
		else if (err)
			printf("%8s  ", err);
		else
			printf("%8d  ", r->node);
		np_print_bits(&np_kind_bits, r->kind, 0);
		putchar('\n');
		return;
	}
	printf("%s\n        { \"start\": \"%#llx\", \"pages\": %llu, \"node\": %d, ",
	       first ? "" : ",",
	       (unsigned long long)r->start, (unsigned long long)r->nr_pages,
	       r->node);
	if (r->node < 0) {
		if (err)
			printf("\"error\": \"%s\", ", err);
		else
			printf("\"error\": \"errno %d\", ", -r->node);
	}
	printf("\"kind\": [");
	np_print_bits(&np_kind_bits, r->kind, 1);
	printf("] }");
}

/* Fetch and print the runs of one row, resuming while the buffer fills. */
static int np_print_row_runs(const struct np_query_cmd *c,
			     const struct np_row *row,
			     struct numaplace_run *buf)
{
	unsigned long long addr = row->start;
	size_t nr, done, i;
	int ret, first = 1;

	while (addr < row->end) {
		ret = numaplace_query_runs(c->pid, (void *)(uintptr_t)addr,
					   row->end - addr, buf,
					   NP_RUNS_BATCH, &nr, &done);
		if (!ret && (!done || done > (row->end - addr) /
					     c->info.page_size))
			ret = -EIO;	/* the module made no sense */
		if (ret) {
			fflush(stdout);
			fprintf(stderr, "numaplace: runs of %llx-%llx: %s\n",
				addr, row->end, strerror(-ret));
			return ret;
		}
		for (i = 0; i < nr; i++, first = 0)
			np_print_run(&buf[i], c->json, first);
		addr += (unsigned long long)done * c->info.page_size;
	}
	return 0;
}

static void np_json_node_pages(const struct np_query_cmd *c,
			       const __u64 *pages)
{
	const char *sep = "";
	unsigned int n;

	printf("{ ");
	for (n = 0; n < c->nr_nodes; n++) {
		if (!c->show_node[n])
			continue;
		printf("%s\"%u\": %llu", sep, n, (unsigned long long)pages[n]);
		sep = ", ";
	}
	printf(" }");
}

static int np_print_json(const struct np_query_cmd *c,
			 struct numaplace_run *buf)
{
	const char *sep = "";
	unsigned int n;
	size_t i;
	int ret;

	printf("{\n  \"pid\": %d,\n  \"page_size\": %u,\n  \"nodes\": [",
	       c->pid ? c->pid : (int)getpid(), c->info.page_size);
	for (n = 0; n < c->nr_nodes; n++) {
		if (!c->show_node[n])
			continue;
		printf("%s%u", sep, n);
		sep = ", ";
	}
	printf("],\n  \"vmas\": [");
	for (i = 0; i < c->nr_rows; i++) {
		const struct np_row *row = &c->rows[i];

		printf("%s\n    { \"start\": \"%#llx\", \"end\": \"%#llx\", \"perms\": ",
		       i ? "," : "", row->start, row->end);
		np_json_str(stdout, row->perms);
		printf(", \"name\": ");
		np_json_str(stdout, row->name);
		printf(",\n      \"pages\": ");
		np_json_node_pages(c, row->node_pages);
		printf(", \"unplaced\": %llu",
		       (unsigned long long)row->unplaced);
		if (c->runs) {
			printf(",\n      \"runs\": [");
			ret = np_print_row_runs(c, row, buf);
			if (ret)
				return ret;
			printf("\n      ]");
		}
		printf(" }");
	}
	printf("\n  ],\n  \"total\": { \"pages\": ");
	np_json_node_pages(c, c->total);
	printf(", \"unplaced\": %llu }\n}\n",
	       (unsigned long long)c->total_unplaced);
	return 0;
}

/* Bytes of @pages in the largest binary unit that keeps a digit. */
static void np_print_size(__u64 pages, unsigned int page_size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB",
					     "PiB", "EiB" };
	double size = (double)pages * page_size / 1024;
	size_t u = 0;

	while (size >= 1024 && u < NP_ARRAY_SIZE(units) - 1) {
		size /= 1024;
		u++;
	}
	printf("%8.1f %s", size, units[u]);
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

static void np_print_table(const struct np_query_cmd *c)
{
	int width = 0, num = (int)strlen("UNPLACED");
	unsigned int n;
	char addr[40];
	size_t i;

	/* The totals are the largest numbers: they set the column width. */
	for (n = 0; n < c->nr_nodes; n++)
		if (c->show_node[n] && np_digits(c->total[n]) > num)
			num = np_digits(c->total[n]);
	if (np_digits(c->total_unplaced) > num)
		num = np_digits(c->total_unplaced);
	for (i = 0; i < c->nr_rows; i++) {
		int len = snprintf(addr, sizeof(addr), "%llx-%llx",
				   c->rows[i].start, c->rows[i].end);

		if (len > width)
			width = len;
	}
	printf("%-*s %-5s", width, "ADDRESS", "PERMS");
	for (n = 0; n < c->nr_nodes; n++) {
		if (!c->show_node[n])
			continue;
		snprintf(addr, sizeof(addr), "NODE%u", n);
		printf("  %*s", num, addr);
	}
	printf("  %*s  %s\n", num, "UNPLACED", "NAME");
	for (i = 0; i < c->nr_rows; i++) {
		const struct np_row *row = &c->rows[i];

		snprintf(addr, sizeof(addr), "%llx-%llx", row->start,
			 row->end);
		printf("%-*s %-5s", width, addr, row->perms);
		for (n = 0; n < c->nr_nodes; n++)
			if (c->show_node[n])
				printf("  %*llu", num,
				       (unsigned long long)row->node_pages[n]);
		printf("  %*llu  %s\n", num, (unsigned long long)row->unplaced,
		       *row->name ? row->name : "[anon]");
	}
	printf("\n");
	for (n = 0; n < c->nr_nodes; n++) {
		if (!c->show_node[n])
			continue;
		snprintf(addr, sizeof(addr), "node %u", n);
		printf("%-10s %*llu pages  ", addr, num,
		       (unsigned long long)c->total[n]);
		np_print_size(c->total[n], c->info.page_size);
		printf("\n");
	}
	printf("%-10s %*llu pages  ", "unplaced", num,
	       (unsigned long long)c->total_unplaced);
	np_print_size(c->total_unplaced, c->info.page_size);
	printf("\n");
}

static int np_print_text(const struct np_query_cmd *c,
			 struct numaplace_run *buf)
{
	size_t i;
	int ret;

	np_print_table(c);
	if (!c->runs)
		return 0;
	printf("\n%16s %10s %8s  %s\n", "START", "PAGES", "NODE", "KIND");
	for (i = 0; i < c->nr_rows; i++) {
		ret = np_print_row_runs(c, &c->rows[i], buf);
		if (ret)
			return ret;
	}
	return 0;
}

/* The handshake: the device, its query feature and the node columns. */
static int np_query_open(struct np_query_cmd *c)
{
	unsigned int n;
	int ret;

	ret = np_handshake("numaplace", &c->info, 1ULL << NUMAPLACE_CMD_QUERY,
			   NUMAPLACE_FEAT_QUERY, "query pages");
	if (ret)
		return ret;
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
	case 'p':
		return np_opt_pid(&np_query_desc, arg, &c->pid);
	case NP_OPT_ALL:
		c->all = 1;
		break;
	case NP_OPT_JSON:
		c->json = 1;
		break;
	case NP_OPT_RUNS:
		c->runs = 1;
		break;
	}
	return NP_EXIT_OK;
}

/* NP_EXIT_OK, NP_EXIT_USAGE, or NP_OPT_HELP after --help. */
static int np_query_args(struct np_query_cmd *c, int argc, char **argv)
{
	int ret = np_parse_opts(&np_query_desc, argc, argv, np_query_opt, c);

	return ret ? ret : np_range_operand(&np_query_desc, argc, argv, c->all,
					    &c->range);
}

static void np_query_free(struct np_query_cmd *c)
{
	size_t i;

	for (i = 0; i < c->nr_rows; i++) {
		free(c->rows[i].name);
		free(c->rows[i].node_pages);
	}
	free(c->rows);
	free(c->show_node);
	free(c->total);
}

int np_cmd_query(int argc, char **argv)
{
	struct numaplace_run *buf = NULL;
	struct np_query_cmd c = { 0 };
	int ret;

	ret = np_query_args(&c, argc, argv);
	if (ret)
		return ret < 0 ? NP_EXIT_OK : ret;
	ret = np_query_open(&c);
	if (ret)
		goto out;
	ret = np_query_maps(&c);
	if (!ret)
		ret = np_query_rows(&c);
	if (!ret && c.runs) {
		buf = calloc(NP_RUNS_BATCH, sizeof(*buf));
		if (!buf) {
			fprintf(stderr, "numaplace: out of memory\n");
			ret = -ENOMEM;
		}
	}
	if (!ret)
		ret = c.json ? np_print_json(&c, buf) : np_print_text(&c, buf);
	fflush(stdout);
	ret = np_exit_of(ret);
out:
	free(buf);
	np_query_free(&c);
	return ret;
}
