// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace migrate: what it says: the progress bar on a terminal, the
 * reason a chunk failed in the words of what was asked, and the summary
 * through the output layer (output.h), as text or JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "migrate.h"
#include "output.h"

/* The progress bar is redrawn at most this often. */
#define NP_PROGRESS_MS		100
/* Cells of the progress bar. */
#define NP_BAR_WIDTH		30

void np_progress_draw(struct np_migrate_cmd *c, int final)
{
	double now = np_clock(CLOCK_MONOTONIC), el = now - c->t0, frac, rate, eta;
	unsigned long long moved = c->sum.nr_moved_pages * c->info.page_size;
	char bar[NP_BAR_WIDTH + 1];
	int i, fill;

	if (!c->progress)
		return;
	if (final) {
		/* The summary replaces the bar, if one was drawn. */
		if (c->last_draw != c->t0)
			fprintf(stderr, "\r\033[K");
		fflush(stderr);
		return;
	}
	if ((now - c->last_draw) * 1000 < NP_PROGRESS_MS)
		return;
	c->last_draw = now;
	frac = c->total_bytes ? (double)c->done_bytes / c->total_bytes : 1;
	fill = frac * NP_BAR_WIDTH;
	for (i = 0; i < NP_BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[NP_BAR_WIDTH] = 0;
	rate = el > 0 ? moved / el / (1 << 20) : 0;
	fprintf(stderr, "\r[%s] %3.0f%%  %8.1f MiB/s", bar, frac * 100, rate);
	if (frac > 0 && frac < 1) {
		eta = el / frac - el;
		fprintf(stderr, "  ETA %d:%02d", (int)eta / 60, (int)eta % 60);
	}
	fprintf(stderr, "\033[K");
	fflush(stderr);
}

/*
 * The nodes of --interleave that INFO says have no memory (@exist set) or
 * do not exist (@exist clear), as "2,5"; the number of them.
 */
static int np_bad_nodes(const struct np_migrate_cmd *c, int exist, char *buf,
			size_t len)
{
	unsigned int n;
	size_t off = 0;
	int nr = 0;

	buf[0] = 0;
	for (n = 0; n < NUMAPLACE_MAX_NODES && off < len; n++) {
		if (!numaplace_node_isset(c->node_set, n) ||
		    numaplace_node_isset(c->info.node_memory, n) ||
		    (n < c->info.nr_node_ids) != exist)
			continue;
		off += snprintf(buf + off, len - off, "%s%u", off ? "," : "",
				n);
		nr++;
	}
	return nr;
}

/* The node of @cpu from sysfs, or -1. */
static int np_cpu_node(unsigned int cpu)
{
	char path[64];
	unsigned int n;

	for (n = 0; n < NUMAPLACE_MAX_NODES; n++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%u/node%u", cpu, n);
		if (!access(path, F_OK))
			return n;
	}
	return -1;
}

/*
 * The target's errors are 6 (NP_EXIT_NODE): ENODEV, EACCES (the cpuset,
 * not a permission) and, for --cpu, EINVAL; the rest are np_exit_of()'s.
 */
int np_report_error(const struct np_migrate_cmd *c, int err,
			   unsigned long long addr)
{
	char nodes[128];
	int nr, node;

	switch (err) {
	case ESRCH:
		fprintf(stderr, "numaplace migrate: no process %d\n",
			c->proc.pid);
		return np_exit_of(err);
	case EPERM:
		fprintf(stderr, "numaplace migrate: not allowed to move the pages of process %d%s\n",
			c->proc.pid, c->flags & NUMAPLACE_MIGRATE_MOVE_ALL ?
			" (--move-all needs CAP_SYS_NICE)" :
			" (needs the right to ptrace it)");
		return np_exit_of(err);
	case ENODEV:
		if (c->policy == NUMAPLACE_POLICY_CPU) {
			node = np_cpu_node(c->cpu);
			if (node >= 0)
				fprintf(stderr, "numaplace migrate: CPU %u is on node %d, which has no memory\n",
					c->cpu, node);
			else
				fprintf(stderr, "numaplace migrate: CPU %u is not online or its node has no memory\n",
					c->cpu);
		} else if (c->policy == NUMAPLACE_POLICY_NODE) {
			fprintf(stderr, "numaplace migrate: node %d %s\n",
				c->node, c->node >= (int)c->info.nr_node_ids ?
				"does not exist" : "has no memory");
		} else if ((nr = np_bad_nodes(c, 0, nodes, sizeof(nodes)))) {
			fprintf(stderr, "numaplace migrate: node%s %s of --interleave %s do%s not exist\n",
				nr > 1 ? "s" : "", nodes, c->target_arg,
				nr > 1 ? "" : "es");
		} else if ((nr = np_bad_nodes(c, 1, nodes, sizeof(nodes)))) {
			fprintf(stderr, "numaplace migrate: node%s %s of --interleave %s ha%s no memory\n",
				nr > 1 ? "s" : "", nodes, c->target_arg,
				nr > 1 ? "ve" : "s");
		} else {
			fprintf(stderr, "numaplace migrate: a node of --interleave %s has no memory\n",
				c->target_arg);
		}
		return NP_EXIT_NODE;
	case EACCES:
		if (c->policy == NUMAPLACE_POLICY_NODE)
			fprintf(stderr, "numaplace migrate: node %d is not allowed by the cpuset of process %d\n",
				c->node, c->proc.pid);
		else if (c->policy == NUMAPLACE_POLICY_CPU)
			fprintf(stderr, "numaplace migrate: the node of CPU %u is not allowed by the cpuset of process %d\n",
				c->cpu, c->proc.pid);
		else
			fprintf(stderr, "numaplace migrate: a node of %s is not allowed by the cpuset of process %d\n",
				c->target_arg, c->proc.pid);
		return NP_EXIT_NODE;
	case EINVAL:
		if (c->policy == NUMAPLACE_POLICY_CPU) {
			fprintf(stderr, "numaplace migrate: CPU %u does not exist or is not online\n",
				c->cpu);
			return NP_EXIT_NODE;
		}
		break;
	case ENOTTY:
	case EOPNOTSUPP:
		fprintf(stderr, "numaplace migrate: the module cannot migrate %s on this kernel: %s\n",
			c->engine ? "with this engine" : "these pages",
			strerror(err));
		return np_exit_of(err);
	}
	fprintf(stderr, "numaplace migrate: at %llx: %s\n", addr,
		strerror(err));
	return np_exit_of(err);
}

/*
 * The name of numaplace_migrate.nr_failed[@i]: its errno's ("ENOMEM"),
 * "OTHER", or "reason@i" (in @buf) for a slot past NUMAPLACE_FAIL_OTHER.
 */
static const char *np_fail_name(int i, char *buf, size_t len)
{
	int err = numaplace_fail_errno(i);

	if (err)
		return strerrorname_np(err);
	if (i == NUMAPLACE_FAIL_OTHER)
		return "OTHER";
	snprintf(buf, len, "reason%d", i);
	return buf;
}

/* The target: its policy and, as text, as it was given. */
static void np_print_target(struct np_out *o, const struct np_migrate_cmd *c)
{
	static const char *const names[] = {
		[NUMAPLACE_POLICY_NODE] = "node",
		[NUMAPLACE_POLICY_INTERLEAVE] = "interleave",
		[NUMAPLACE_POLICY_CPU] = "cpu",
	};
	unsigned int n;

	np_print_text(o, "%-12s ", "target");
	np_print_str(o, NP_PRINT_ANY, "policy", "%s", names[c->policy]);
	np_print_str(o, NP_PRINT_TEXT, NULL, " %s\n", c->target_arg);
	if (c->policy == NUMAPLACE_POLICY_NODE) {
		np_print_int(o, NP_PRINT_JSON, "node", NULL, c->node);
	} else if (c->policy == NUMAPLACE_POLICY_CPU) {
		np_print_uint(o, NP_PRINT_JSON, "cpu", NULL, c->cpu);
	} else {
		np_out_arr_open(o, "nodes", 0);
		for (n = 0; n < NUMAPLACE_MAX_NODES; n++)
			if (numaplace_node_isset(c->node_set, n))
				np_print_uint(o, NP_PRINT_JSON, NULL, NULL, n);
		np_out_close(o);
	}
}

/* The pages that did not move, and by reason those that did not. */
static void np_print_failed(struct np_out *o, const struct numaplace_migrate *s)
{
	const char *sep = ": ";
	char buf[16];
	size_t i;

	np_print_text(o, "%-12s", "failed");
	np_print_uint(o, NP_PRINT_ANY, "failed_pages", " %12llu pages",
		      s->nr_failed_pages);
	np_out_obj_open(o, "failed", 0);
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++) {
		/* JSON: every reason this tool names, and any other seen. */
		if (!s->nr_failed[i] && i > NUMAPLACE_FAIL_OTHER)
			continue;
		if (s->nr_failed[i])
			np_print_text(o, "%s%s ", sep,
				      np_fail_name(i, buf, sizeof(buf)));
		np_print_uint(o, s->nr_failed[i] ? NP_PRINT_ANY : NP_PRINT_JSON,
			      np_fail_name(i, buf, sizeof(buf)), "%llu",
			      s->nr_failed[i]);
		if (s->nr_failed[i])
			sep = ", ";
	}
	np_out_close(o);
	np_print_text(o, "\n");
}

/* The kernel mappings the walk passed over (the vsyscall page). */
static void np_print_skipped(struct np_out *o, const struct np_migrate_cmd *c)
{
	size_t i;

	np_out_arr_open(o, "skipped", 0);
	for (i = 0; i < c->skipped.nr; i++) {
		np_out_obj_open(o, NULL, 0);
		np_print_text(o, "%-12s ", i ? "" : "skipped");
		np_print_hex(o, NP_PRINT_ANY, "start", "%llx",
			     c->skipped.v[i].start);
		np_print_hex(o, NP_PRINT_ANY, "end", "-%llx",
			     c->skipped.v[i].end);
		np_print_str(o, NP_PRINT_ANY, "name",
			     " %s (a kernel mapping: cannot move)\n",
			     c->skipped.v[i].name);
		np_out_close(o);
	}
	np_out_close(o);
}

int np_migrate_print(const struct np_migrate_cmd *c, int status)
{
	const struct numaplace_migrate *s = &c->sum;
	double bytes = (double)s->nr_moved_pages * c->info.page_size;
	enum np_print novma;
	struct np_out o;

	if (np_out_begin(&o, c->proc.json ? NP_FMT_JSON : NP_FMT_TEXT))
		return -ENOMEM;
	np_print_text(&o, "%-12s", "process");
	np_print_int(&o, NP_PRINT_ANY, "pid", " %lld\n", c->proc.pid);
	np_print_target(&o, c);
	np_print_bool(&o, NP_PRINT_JSON, "complete", NULL,
		      status == NP_EXIT_OK || status == NP_EXIT_PARTIAL);
	np_print_uint(&o, NP_PRINT_JSON, "bytes", NULL, c->total_bytes);
	np_print_uint(&o, NP_PRINT_JSON, "bytes_done", NULL, c->done_bytes);

	np_print_text(&o, "%-12s", "moved");
	np_print_uint(&o, NP_PRINT_ANY, "moved_pages", " %12llu pages",
		      s->nr_moved_pages);
	np_print_float(&o, NP_PRINT_ANY, "moved_mib", "  %10.1f MiB", 1,
		       bytes / (1 << 20));
	np_print_uint(&o, NP_PRINT_ANY, "moved_folios", "  %llu folios\n",
		      s->nr_moved_folios);
	np_print_text(&o, "%-12s", "in place");
	np_print_uint(&o, NP_PRINT_ANY, "in_place_pages", " %12llu pages\n",
		      s->nr_in_place_pages);
	np_print_failed(&o, s);
	if (c->engine && !strcmp(c->engine, "vma") &&
	    !(c->flags & NUMAPLACE_MIGRATE_SPLIT_OK) &&
	    s->nr_failed[NUMAPLACE_FAIL_EBUSY])
		np_print_text(&o, "%-12s the vma engine moves base pages only: large folios (THPs) need --split-ok\n",
			      "");
	if (c->proc.range.set) {
		/* JSON: always with a range; text: when there are some. */
		novma = c->nr_novma_pages ? NP_PRINT_ANY : NP_PRINT_JSON;
		if (c->nr_novma_pages)
			np_print_text(&o, "%-12s", "unmapped");
		np_print_uint(&o, novma, "novma_pages",
			      " %12llu pages (no VMA there, not asked)\n",
			      c->nr_novma_pages);
	}
	np_print_text(&o, "%-12s", "elapsed");
	np_print_float(&o, NP_PRINT_ANY, "elapsed_s", " %12.3f s", 3,
		       c->elapsed);
	np_print_float(&o, NP_PRINT_ANY, "gb_per_s", "  %10.3f GB/s\n", 3,
		       c->elapsed > 0 ? bytes / c->elapsed / 1e9 : 0.0);
	np_print_text(&o, "%-12s ", "engines");
	np_print_names(&o, NP_PRINT_ANY, "engines", "%s\n", &np_engine_bits,
		       s->engines);
	np_print_skipped(&o, c);
	np_out_end(&o);
	return 0;
}

int np_partial(const struct numaplace_migrate *s)
{
	return s->nr_failed[NUMAPLACE_FAIL_ENOMEM] ||
	       s->nr_failed[NUMAPLACE_FAIL_EBUSY] ||
	       s->nr_failed[NUMAPLACE_FAIL_EACCES] ||
	       s->nr_failed[NUMAPLACE_FAIL_OTHER] ||
	       s->nr_failed[6] || s->nr_failed[7];
}

int np_maps_error(const struct np_migrate_cmd *c, int err)
{
	switch (err) {
	case ESRCH:
		fprintf(stderr, "numaplace migrate: no process %d\n",
			c->proc.pid);
		break;
	case EACCES:
	case EPERM:
		fprintf(stderr, "numaplace migrate: not allowed to read /proc/%d/maps\n",
			c->proc.pid);
		break;
	case ENOMEM:
		fprintf(stderr, "numaplace: out of memory\n");
		break;
	case EIO:
		break;	/* said where it happened */
	default:
		fprintf(stderr, "numaplace migrate: /proc/%d/maps: %s\n",
			c->proc.pid, strerror(err));
	}
	return np_exit_of(err);
}
