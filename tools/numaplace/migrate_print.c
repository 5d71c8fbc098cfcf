// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace migrate: what it says: the progress bar on a terminal, the
 * reason a chunk failed in the words of what was asked, and the summary
 * as text or JSON.
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

/* numaplace_migrate.nr_failed[] by index. */
static const char *const np_fail_names[NUMAPLACE_FAIL_MAX] = {
	[NUMAPLACE_FAIL_ENOMEM] = "ENOMEM",
	[NUMAPLACE_FAIL_EBUSY] = "EBUSY",
	[NUMAPLACE_FAIL_EACCES] = "EACCES",
	[NUMAPLACE_FAIL_EFAULT] = "EFAULT",
	[NUMAPLACE_FAIL_ENOENT] = "ENOENT",
	[NUMAPLACE_FAIL_OTHER] = "OTHER",
};

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
		fprintf(stderr, "numaplace migrate: no process %d\n", c->pid);
		return np_exit_of(err);
	case EPERM:
		fprintf(stderr, "numaplace migrate: not allowed to move the pages of process %d%s\n",
			c->pid, c->flags & NUMAPLACE_MIGRATE_MOVE_ALL ?
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
				c->node, c->pid);
		else if (c->policy == NUMAPLACE_POLICY_CPU)
			fprintf(stderr, "numaplace migrate: the node of CPU %u is not allowed by the cpuset of process %d\n",
				c->cpu, c->pid);
		else
			fprintf(stderr, "numaplace migrate: a node of %s is not allowed by the cpuset of process %d\n",
				c->target_arg, c->pid);
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

static const char *np_fail_name(int i, char *buf, size_t len)
{
	if (np_fail_names[i])
		return np_fail_names[i];
	snprintf(buf, len, "reason%d", i);
	return buf;
}

static void np_print_target(const struct np_migrate_cmd *c, int json)
{
	static const char *const names[] = {
		[NUMAPLACE_POLICY_NODE] = "node",
		[NUMAPLACE_POLICY_INTERLEAVE] = "interleave",
		[NUMAPLACE_POLICY_CPU] = "cpu",
	};
	const char *sep = "";
	unsigned int n;

	if (!json) {
		printf("%-12s %s %s\n", "target", names[c->policy],
		       c->target_arg);
		return;
	}
	printf("  \"policy\": \"%s\",\n", names[c->policy]);
	if (c->policy == NUMAPLACE_POLICY_NODE) {
		printf("  \"node\": %d,\n", c->node);
	} else if (c->policy == NUMAPLACE_POLICY_CPU) {
		printf("  \"cpu\": %u,\n", c->cpu);
	} else {
		printf("  \"nodes\": [");
		for (n = 0; n < NUMAPLACE_MAX_NODES; n++) {
			if (!numaplace_node_isset(c->node_set, n))
				continue;
			printf("%s%u", sep, n);
			sep = ", ";
		}
		printf("],\n");
	}
}

void np_migrate_print_json(const struct np_migrate_cmd *c, int status)
{
	const struct numaplace_migrate *s = &c->sum;
	double mib = (double)s->nr_moved_pages * c->info.page_size / (1 << 20);
	char buf[16];
	size_t i;

	printf("{\n  \"pid\": %d,\n", c->pid);
	np_print_target(c, 1);
	printf("  \"complete\": %s,\n", status == NP_EXIT_OK ||
	       status == NP_EXIT_PARTIAL ? "true" : "false");
	printf("  \"bytes\": %llu,\n  \"bytes_done\": %llu,\n",
	       c->total_bytes, c->done_bytes);
	printf("  \"moved_pages\": %llu,\n  \"moved_folios\": %llu,\n"
	       "  \"in_place_pages\": %llu,\n  \"failed_pages\": %llu,\n",
	       (unsigned long long)s->nr_moved_pages,
	       (unsigned long long)s->nr_moved_folios,
	       (unsigned long long)s->nr_in_place_pages,
	       (unsigned long long)s->nr_failed_pages);
	printf("  \"failed\": {");
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++) {
		if (!np_fail_names[i] && !s->nr_failed[i])
			continue;
		printf("%s \"%s\": %llu", i ? "," : "",
		       np_fail_name(i, buf, sizeof(buf)),
		       (unsigned long long)s->nr_failed[i]);
	}
	printf(" },\n");
	if (c->range.set)
		printf("  \"novma_pages\": %llu,\n", c->nr_novma_pages);
	printf("  \"moved_mib\": %.1f,\n  \"elapsed_s\": %.3f,\n"
	       "  \"gb_per_s\": %.3f,\n",
	       mib, c->elapsed, c->elapsed > 0 ?
	       s->nr_moved_pages * (double)c->info.page_size / c->elapsed / 1e9 :
	       0.0);
	printf("  \"engines\": [");
	np_print_bits(&np_engine_bits, s->engines, 1);
	printf("],\n  \"skipped\": [");
	for (i = 0; i < c->skipped.nr; i++) {
		printf("%s\n    { \"start\": \"%#llx\", \"end\": \"%#llx\", \"name\": ",
		       i ? "," : "", c->skipped.v[i].start,
		       c->skipped.v[i].end);
		np_json_str(stdout, c->skipped.v[i].name);
		printf(" }");
	}
	printf("%s]\n}\n", c->skipped.nr ? "\n  " : "");
}

void np_migrate_print_text(const struct np_migrate_cmd *c)
{
	const struct numaplace_migrate *s = &c->sum;
	double mib = (double)s->nr_moved_pages * c->info.page_size / (1 << 20);
	const char *sep = ": ";
	char buf[16];
	size_t i;

	printf("%-12s %d\n", "process", c->pid);
	np_print_target(c, 0);
	printf("%-12s %12llu pages  %10.1f MiB  %llu folios\n", "moved",
	       (unsigned long long)s->nr_moved_pages, mib,
	       (unsigned long long)s->nr_moved_folios);
	printf("%-12s %12llu pages\n", "in place",
	       (unsigned long long)s->nr_in_place_pages);
	printf("%-12s %12llu pages", "failed",
	       (unsigned long long)s->nr_failed_pages);
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++) {
		if (!s->nr_failed[i])
			continue;
		printf("%s%s %llu", sep, np_fail_name(i, buf, sizeof(buf)),
		       (unsigned long long)s->nr_failed[i]);
		sep = ", ";
	}
	printf("\n");
	if (c->engine && !strcmp(c->engine, "vma") &&
	    !(c->flags & NUMAPLACE_MIGRATE_SPLIT_OK) &&
	    s->nr_failed[NUMAPLACE_FAIL_EBUSY])
		printf("%-12s the vma engine moves base pages only: large folios (THPs) need --split-ok\n",
		       "");
	if (c->range.set && c->nr_novma_pages)
		printf("%-12s %12llu pages (no VMA there, not asked)\n",
		       "unmapped", c->nr_novma_pages);
	printf("%-12s %12.3f s  %10.3f GB/s\n", "elapsed", c->elapsed,
	       c->elapsed > 0 ? s->nr_moved_pages * (double)c->info.page_size /
				c->elapsed / 1e9 : 0.0);
	printf("%-12s ", "engines");
	np_print_bits(&np_engine_bits, s->engines, 0);
	printf("\n");
	for (i = 0; i < c->skipped.nr; i++)
		printf("%-12s %llx-%llx %s (a kernel mapping: cannot move)\n",
		       i ? "" : "skipped", c->skipped.v[i].start,
		       c->skipped.v[i].end, c->skipped.v[i].name);
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
		fprintf(stderr, "numaplace migrate: no process %d\n", c->pid);
		break;
	case EACCES:
	case EPERM:
		fprintf(stderr, "numaplace migrate: not allowed to read /proc/%d/maps\n",
			c->pid);
		break;
	case ENOMEM:
		fprintf(stderr, "numaplace: out of memory\n");
		break;
	case EIO:
		break;	/* said where it happened */
	default:
		fprintf(stderr, "numaplace migrate: /proc/%d/maps: %s\n",
			c->pid, strerror(err));
	}
	return np_exit_of(err);
}
