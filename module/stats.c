// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: per-CPU counters. Writers add to their CPU's copy without a
 * lock; the netlink dump sums the copies (a read may see a counter of one
 * CPU a moment older than another's, never a torn 64-bit value on 64-bit).
 */
#include <linux/cpumask.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "stats.h"

/* The errno each failure reason but NUMAPLACE_FAIL_OTHER stands for. */
static const u8 np_fail_errnos[] = NUMAPLACE_FAIL_ERRNOS;
static_assert(ARRAY_SIZE(np_fail_errnos) == NUMAPLACE_FAIL_OTHER);

/* The positive errno of failure reason @reason; 0: OTHER (any other). */
unsigned int np_fail_errno(unsigned int reason)
{
	return reason < NUMAPLACE_FAIL_OTHER ? np_fail_errnos[reason] : 0;
}

struct np_stats_cpu __percpu *np_stats;
struct np_stats_node __percpu **np_node_stats;

int np_stats_init(void)
{
	int nid;

	np_stats = alloc_percpu(struct np_stats_cpu);
	if (!np_stats)
		return -ENOMEM;
	np_node_stats = kcalloc(nr_node_ids, sizeof(*np_node_stats), GFP_KERNEL);
	if (!np_node_stats)
		goto free_stats;
	for (nid = 0; nid < nr_node_ids; nid++) {
		np_node_stats[nid] = alloc_percpu(struct np_stats_node);
		if (!np_node_stats[nid])
			goto free_nodes;
	}
	return 0;
free_nodes:
	while (nid--)
		free_percpu(np_node_stats[nid]);
	kfree(np_node_stats);
free_stats:
	free_percpu(np_stats);
	return -ENOMEM;
}

void np_stats_exit(void)
{
	int nid;

	for (nid = 0; nid < nr_node_ids; nid++)
		free_percpu(np_node_stats[nid]);
	kfree(np_node_stats);
	free_percpu(np_stats);
}

void np_stats_sum(struct np_stats_sum *sum)
{
	const struct np_stats_cpu *s;
	unsigned int i, j;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(np_stats, cpu);
		for (i = 0; i < NP_STAT_MAX; i++)
			sum->stat[i] += READ_ONCE(s->stat[i]);
		for (i = 0; i < NUMAPLACE_FAIL_MAX; i++)
			sum->fail[i] += READ_ONCE(s->fail[i]);
		for (i = 0; i < NP_STAT_ENGINES; i++)
			for (j = 0; j < NUMAPLACE_PHASE_MAX; j++)
				sum->phase_ns[i][j] += READ_ONCE(s->phase_ns[i][j]);
	}
}

void np_stats_sum_node(int nid, struct np_stats_node *sum)
{
	const struct np_stats_node *n;
	unsigned int i;
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		n = per_cpu_ptr(np_node_stats[nid], cpu);
		sum->pages_in += READ_ONCE(n->pages_in);
		sum->pages_out += READ_ONCE(n->pages_out);
		for (i = 0; i < NP_STAT_ORDERS; i++) {
			sum->folios_in[i] += READ_ONCE(n->folios_in[i]);
			sum->folios_out[i] += READ_ONCE(n->folios_out[i]);
		}
	}
}
