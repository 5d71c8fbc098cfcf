/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: per-CPU counters, read by the netlink STATS_GET dump.
 */
#ifndef _NUMAPLACE_STATS_H
#define _NUMAPLACE_STATS_H

#include <linux/percpu.h>
#include <linux/pgtable.h>

#include "numaplace.h"

/* Folio orders counted: up to a PUD-sized folio (1 GiB hugetlb). */
#define NP_STAT_ORDERS	(PUD_SHIFT - PAGE_SHIFT + 1)
/* Engines with phase times: kernel, vma, batch, pt (NUMAPLACE_ENGINE_* bits). */
#define NP_STAT_ENGINES	4

/* Global counters, each with its unit. */
enum np_stat {
	NP_STAT_QUERY_CALLS,	/* calls */
	NP_STAT_QUERY_PAGES,	/* pages answered */
	NP_STAT_QUERY_RUNS,	/* runs returned to callers */
	NP_STAT_MIGRATE_CALLS,	/* calls */
	NP_STAT_BYTES_COPIED,	/* bytes of pages migrated (copied once each) */
	NP_STAT_DMA_PAGES,	/* pages a DMA engine copied */
	NP_STAT_DMA_FALLBACK,	/* pages the CPU copied after a DMA error */
	NP_STAT_MIGRATE_RETRY_PASSES,	/* passes over busy pages again */
	/* The access scan: QUERY calls with NUMAPLACE_QUERY_ACCESS. */
	NP_STAT_ACCESS_CALLS,	/* calls */
	NP_STAT_ACCESS_PAGES,	/* pages answered */
	NP_STAT_ACCESS_YOUNG,	/* pages reported young */
	NP_STAT_ACCESS_CLEARED,	/* pages whose young bit was cleared */
	NP_STAT_ACCESS_FLUSHES,	/* TLB flushes: FLUSH_TLB calls that cleared */
	NP_STAT_MAX,
};

/* Per node counters, each with its unit. */
struct np_stats_node {
	u64 pages_in;			/* base pages migrated onto the node */
	u64 pages_out;			/* base pages migrated off the node */
	u64 folios_in[NP_STAT_ORDERS];	/* folios, by order */
	u64 folios_out[NP_STAT_ORDERS];	/* folios, by order */
};

struct np_stats_cpu {
	u64 stat[NP_STAT_MAX];
	u64 fail[NUMAPLACE_FAIL_MAX];	/* pages that did not move, by reason */
	u64 phase_ns[NP_STAT_ENGINES][NUMAPLACE_PHASE_MAX]; /* nanoseconds */
};

/* The totals over every CPU, as the dump reports them. */
struct np_stats_sum {
	u64 stat[NP_STAT_MAX];
	u64 fail[NUMAPLACE_FAIL_MAX];
	u64 phase_ns[NP_STAT_ENGINES][NUMAPLACE_PHASE_MAX];
};

extern struct np_stats_cpu __percpu *np_stats;
/*
 * Per node, one per-CPU block each (320 bytes): a single block for every
 * node would pass the per-CPU allocator's 32 KiB limit past 100 nodes.
 */
extern struct np_stats_node __percpu **np_node_stats;

unsigned int np_fail_errno(unsigned int reason);
int np_stats_init(void);
void np_stats_exit(void);
void np_stats_sum(struct np_stats_sum *sum);
void np_stats_sum_node(int nid, struct np_stats_node *sum);

#ifdef NP_NO_STATS
/* Built without counters (make NP_NO_STATS=y): to measure what they cost. */
static inline void np_stat_add(enum np_stat item, u64 n) {}
static inline void np_stat_fail(unsigned int reason, u64 n) {}
static inline void np_stat_phase(unsigned int engine, unsigned int phase,
				 u64 ns) {}
static inline void np_stat_folio_moved(int from, int to, unsigned int order,
				       int sign) {}
#else
static inline void np_stat_add(enum np_stat item, u64 n)
{
	this_cpu_add(np_stats->stat[item], n);
}

static inline void np_stat_fail(unsigned int reason, u64 n)
{
	this_cpu_add(np_stats->fail[reason], n);
}

/* Time of one phase of one engine (a single NUMAPLACE_ENGINE_* bit). */
static inline void np_stat_phase(unsigned int engine, unsigned int phase,
				 u64 ns)
{
	this_cpu_add(np_stats->phase_ns[ilog2(engine)][phase], ns);
}

/* A folio of @order moved from node @from to node @to (@sign -1: undo). */
static inline void np_stat_folio_moved(int from, int to, unsigned int order,
				       int sign)
{
	u64 pages = (u64)sign << order;

	order = min_t(unsigned int, order, NP_STAT_ORDERS - 1);
	preempt_disable();
	__this_cpu_add(np_node_stats[to]->pages_in, pages);
	__this_cpu_add(np_node_stats[to]->folios_in[order], sign);
	__this_cpu_add(np_node_stats[from]->pages_out, pages);
	__this_cpu_add(np_node_stats[from]->folios_out[order], sign);
	__this_cpu_add(np_stats->stat[NP_STAT_BYTES_COPIED], pages << PAGE_SHIFT);
	preempt_enable();
}
#endif /* NP_NO_STATS */

#endif /* _NUMAPLACE_STATS_H */
