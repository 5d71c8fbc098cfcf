// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace migrate: move a process's pages to a node, over a set of nodes
 * or to a CPU's node, a chunk per ioctl, with a progress bar on a terminal
 * and a summary at the end.
 *
 *   numaplace migrate -p PID (--to NODE | --interleave N,M,... | --cpu CPU)
 *                     [RANGE | --all] [--move-all] [--engine ENGINE]
 *                     [--split-ok] [--json]
 *
 * Addresses and lengths are hex, as in /proc/PID/maps and numaplace query.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "migrate.h"

/* The engines --engine names. */
static const struct np_engine {
	unsigned int flag;		/* NUMAPLACE_MIGRATE_ENGINE_* */
	unsigned long long feature;	/* NUMAPLACE_FEAT_MIGRATE_* */
	const struct np_bit_name *id;	/* its NUMAPLACE_ENGINE_* and name */
} np_engines[NP_NR_ENGINES] = {
	{ NUMAPLACE_MIGRATE_ENGINE_KERNEL, NUMAPLACE_FEAT_MIGRATE_KERNEL,
	  &np_engine_bit_names[0] },
	{ NUMAPLACE_MIGRATE_ENGINE_VMA, NUMAPLACE_FEAT_MIGRATE_VMA,
	  &np_engine_bit_names[1] },
	{ NUMAPLACE_MIGRATE_ENGINE_BATCH, NUMAPLACE_FEAT_MIGRATE_BATCH,
	  &np_engine_bit_names[2] },
	{ NUMAPLACE_MIGRATE_ENGINE_PT, NUMAPLACE_FEAT_MIGRATE_PT,
	  &np_engine_bit_names[3] },
};

/*
 * Bytes of address space per ioctl: short enough for the progress bar to
 * move (about a second of migration in a TCG guest), long enough that the
 * per-call cost is noise. A power of two, so chunk edges fall on PMD (THP)
 * boundaries and never cut a huge page in two.
 */
#define NP_CHUNK		(64ULL << 20)
/*
 * The kernel's special mappings: their pages are the kernel's own (vDSO
 * text, vvar data, the uprobes slot), a PFN map, or no VMA at all
 * ([vsyscall] is the gate area). None of them can move.
 */
static const char *const np_unmovable[] = {
	"[vvar]", "[vvar_vclock]", "[vdso]", "[vsyscall]", "[uprobes]",
};

static const struct np_cmd_desc np_migrate_desc;

static int np_set_target(struct np_migrate_cmd *c, int opt, const char *arg)
{
	const struct np_cmd_desc *d = &np_migrate_desc;
	unsigned long v;

	if (c->target_arg) {
		fprintf(stderr, "numaplace migrate: give one of --to, --interleave, --cpu\n");
		return NP_EXIT_USAGE;
	}
	c->target_arg = arg;
	switch (opt) {
	case 't':
		if (np_parse_whole_uint(arg, NUMAPLACE_MAX_NODES - 1, &v))
			return np_bad_arg(d, "node", arg);
		c->policy = NUMAPLACE_POLICY_NODE;
		c->node = v;
		break;
	case 'i':
		if (np_parse_node_list(arg, NUMAPLACE_MAX_NODES, c->node_set)) {
			fprintf(stderr, "numaplace migrate: bad node list '%s': want N,M,... or N-M (below %d)\n",
				arg, NUMAPLACE_MAX_NODES);
			return NP_EXIT_USAGE;
		}
		c->policy = NUMAPLACE_POLICY_INTERLEAVE;
		break;
	case 'c':
		if (np_parse_whole_uint(arg, 0xffffffffUL, &v))
			return np_bad_arg(d, "CPU", arg);
		c->policy = NUMAPLACE_POLICY_CPU;
		c->cpu = v;
		break;
	}
	return NP_EXIT_OK;
}

static int np_set_engine(struct np_migrate_cmd *c, const char *arg)
{
	size_t i;

	for (i = 0; i < NP_ARRAY_SIZE(np_engines); i++) {
		if (!strcmp(arg, np_engines[i].id->name)) {
			c->flags |= np_engines[i].flag;
			c->engine = np_engines[i].id->name;
			return NP_EXIT_OK;
		}
	}
	fprintf(stderr, "numaplace migrate: unknown engine '%s': want kernel, vma, batch or pt\n",
		arg);
	return NP_EXIT_USAGE;
}

enum { NP_OPT_MOVE_ALL = NP_OPT_CMD, NP_OPT_ENGINE, NP_OPT_SPLIT };

static const struct np_opt np_migrate_opts[] = {
	NP_OPT_PID("the process whose pages move"),
	{ "to", 't', required_argument, 't', "NODE", "every page to NODE" },
	{ "interleave", 'i', required_argument, 'i', "LIST",
	  "round-robin over the nodes of LIST (0,1 or 0-3),\n"
	  "a folio at a time" },
	{ "cpu", 'c', required_argument, 'c', "CPU", "to the node of CPU" },
	NP_OPT_FLAG("all", NP_OPT_ALL,
		    "every VMA of the process (the default); the\n"
		    "kernel's special mappings ([vdso], [vvar], ...)\n"
		    "are skipped"),
	NP_OPT_FLAG("move-all", NP_OPT_MOVE_ALL,
		    "also pages other processes map (CAP_SYS_NICE)"),
	NP_OPT_ARG("engine", NP_OPT_ENGINE, "ENGINE",
		   "only this engine: kernel, vma, batch or pt"),
	NP_OPT_FLAG("split-ok", NP_OPT_SPLIT,
		    "large folios may be split to move"),
	NP_OPT_FLAG("json", NP_OPT_JSON, "print the summary as JSON"),
};

static const struct np_cmd_desc np_migrate_desc = {
	.name = "migrate",
	.synopsis = "-p PID (--to NODE | --interleave N,M,... | --cpu CPU)\n"
		    "                         [RANGE | --all] [--move-all] [--engine ENGINE]\n"
		    "                         [--split-ok] [--json]",
	NP_CMD_OPTS(np_migrate_opts),
	.operands = NP_RANGE_HELP,
	.exits = NP_EXITS_PROC | NP_EXIT_BIT(NP_EXIT_NODE) |
		 NP_EXIT_BIT(NP_EXIT_PARTIAL),
};

static int np_migrate_opt(void *data, int opt, const char *arg)
{
	struct np_migrate_cmd *c = data;

	switch (opt) {
	case 't':
	case 'i':
	case 'c':
		return np_set_target(c, opt, arg);
	case NP_OPT_MOVE_ALL:
		c->flags |= NUMAPLACE_MIGRATE_MOVE_ALL;
		break;
	case NP_OPT_ENGINE:
		if (c->engine) {
			fprintf(stderr, "numaplace migrate: give --engine once\n");
			return NP_EXIT_USAGE;
		}
		return np_set_engine(c, arg);
	case NP_OPT_SPLIT:
		c->flags |= NUMAPLACE_MIGRATE_SPLIT_OK;
		break;
	default:
		return np_proc_opt(&np_migrate_desc, &c->proc, opt, arg);
	}
	return NP_EXIT_OK;
}

/* -p and a target given, and [RANGE | --all]. */
static int np_migrate_operands(void *data, int argc, char **argv)
{
	const struct np_cmd_desc *d = &np_migrate_desc;
	struct np_migrate_cmd *c = data;

	if (!c->proc.pid || !c->target_arg)
		return np_usage_error(d, "%s", !c->proc.pid ?
				      "-p PID is required" :
				      "give a target: --to NODE, --interleave N,M,... or --cpu CPU");
	return np_range_operand(d, argc, argv, c->proc.all, &c->proc.range);
}

/* Pieces allocated at first: a process's VMAs, often fewer. */
#define NP_PIECES_FIRST	64

static int np_pieces_add(struct np_pieces *p, unsigned long long start,
			 unsigned long long end, const char *name)
{
	if (np_array_reserve(p->v, &p->cap, p->nr, NP_PIECES_FIRST))
		return -ENOMEM;
	p->v[p->nr].name = strdup(name);
	if (!p->v[p->nr].name)
		return -ENOMEM;
	p->v[p->nr].start = start;
	p->v[p->nr].end = end;
	p->nr++;
	return 0;
}

static void np_pieces_free(struct np_pieces *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->v[i].name);
	free(p->v);
}

static int np_unmovable_name(const char *name)
{
	size_t i;

	for (i = 0; i < NP_ARRAY_SIZE(np_unmovable); i++)
		if (!strcmp(name, np_unmovable[i]))
			return 1;
	return 0;
}

/*
 * One VMA of /proc/PID/maps (with a range, its part in the range), or a
 * hole of the range, counted as pages in no VMA; special mappings go to
 * the skipped list.
 */
static int np_add_vma(void *data, unsigned long long start,
		      unsigned long long end, const char *perms,
		      const char *name)
{
	struct np_migrate_cmd *c = data;

	if (!name) {
		c->nr_novma_pages += (end - start) / c->info.page_size;
		return 0;
	}
	if (np_unmovable_name(name))
		return np_pieces_add(&c->skipped, start, end, name);
	c->total_bytes += end - start;
	return np_pieces_add(&c->todo, start, end, name);
}

static int np_migrate_maps(struct np_migrate_cmd *c)
{
	return np_read_range_maps("numaplace migrate", c->proc.pid,
				  &c->proc.range, np_add_vma, c);
}

/* The handshake: the device, its migration support and the engine. */
static int np_migrate_open(void *data)
{
	struct np_migrate_cmd *c = data;
	unsigned long long any = NUMAPLACE_FEAT_MIGRATE_KERNEL |
				 NUMAPLACE_FEAT_MIGRATE_VMA |
				 NUMAPLACE_FEAT_MIGRATE_BATCH |
				 NUMAPLACE_FEAT_MIGRATE_PT;
	size_t i;
	int ret;

	ret = np_handshake("numaplace", &c->info, 1ULL << NUMAPLACE_CMD_MIGRATE,
			   any, "migrate pages");
	if (ret)
		return ret;
	for (i = 0; c->engine && i < NP_ARRAY_SIZE(np_engines); i++) {
		if (strcmp(c->engine, np_engines[i].id->name))
			continue;
		if (!(c->info.features & np_engines[i].feature)) {
			fprintf(stderr, "numaplace: the %s engine does not work on this kernel (see numaplace info)\n",
				c->engine);
			return NP_EXIT_NODEV;
		}
	}
	return NP_EXIT_OK;
}

/* Every piece, a chunk per ioctl; the first error stops the run. */
static int np_migrate_pieces(struct np_migrate_cmd *c)
{
	unsigned long long addr, next;
	struct numaplace_migrate m;
	size_t i;
	int ret;

	c->t0 = np_clock(CLOCK_MONOTONIC);
	/* No bar off a terminal, nor for a call done within a redraw. */
	c->progress = isatty(STDERR_FILENO);
	c->last_draw = c->t0;
	for (i = 0; i < c->todo.nr; i++) {
		for (addr = c->todo.v[i].start; addr < c->todo.v[i].end;
		     addr = next) {
			next = (addr + NP_CHUNK) & ~(NP_CHUNK - 1);
			if (next > c->todo.v[i].end || next <= addr)
				next = c->todo.v[i].end;
			memset(&m, 0, sizeof(m));
			m.flags = c->flags;
			m.pid = c->proc.pid;
			m.policy = c->policy;
			m.start = addr;
			m.len = next - addr;
			m.node = c->node;
			m.cpu = c->cpu;
			memcpy(m.node_set, c->node_set, sizeof(m.node_set));
			ret = numaplace_migrate(&m);
			numaplace_migrate_add(&c->sum, &m);
			if (ret) {
				c->done_bytes += m.done * c->info.page_size;
				c->elapsed = np_clock(CLOCK_MONOTONIC) - c->t0;
				np_progress_draw(c, 1);
				return np_report_error(c, -ret,
					addr + m.done * c->info.page_size);
			}
			c->done_bytes += next - addr;
			np_progress_draw(c, 0);
		}
	}
	c->elapsed = np_clock(CLOCK_MONOTONIC) - c->t0;
	np_progress_draw(c, 1);
	return NP_EXIT_OK;
}

/* The pieces of the range, moved; the summary. */
static int np_migrate_run(void *data)
{
	struct np_migrate_cmd *c = data;
	int ret;

	ret = np_migrate_maps(c);
	if (ret)
		return np_maps_error(c, -ret);
	ret = np_migrate_pieces(c);
	if (!ret && np_partial(&c->sum))
		ret = NP_EXIT_PARTIAL;
	/* After an error the text summary says what had been done. */
	if ((c->proc.json || ret == NP_EXIT_OK || ret == NP_EXIT_PARTIAL ||
	     c->done_bytes) && np_migrate_print(c, ret)) {
		fprintf(stderr, "numaplace: out of memory\n");
		if (ret == NP_EXIT_OK || ret == NP_EXIT_PARTIAL)
			ret = np_exit_of(ENOMEM);
	}
	fflush(stdout);
	return ret;
}

static void np_migrate_free(void *data)
{
	struct np_migrate_cmd *c = data;

	np_pieces_free(&c->todo);
	np_pieces_free(&c->skipped);
}

static const struct np_cmd_steps np_migrate_steps = {
	.desc = &np_migrate_desc, .opt = np_migrate_opt,
	.operands = np_migrate_operands, .open = np_migrate_open,
	.run = np_migrate_run, .free = np_migrate_free,
};

int np_cmd_migrate(int argc, char **argv)
{
	struct np_migrate_cmd c = { 0 };

	return np_cmd_run(&np_migrate_steps, &c, argc, argv);
}
