/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace stats: the counters of one STATS_GET dump (stats_nl.c) and
 * their rendering (stats_print.c).
 */
#ifndef NP_STATS_H
#define NP_STATS_H

#include <stddef.h>

#include "nl.h"
#include "output.h"

/* Folio orders kept: far above a PUD (order 18 with 4 KiB pages). */
#define NP_ST_ORDERS		32
/* Failure reasons kept: the module has NUMAPLACE_FAIL_MAX. */
#define NP_ST_FAILS		16
/* Engines kept: NUMAPLACE_ENGINE_* bits 0.. (kernel, vma, batch). */
#define NP_ST_ENGINES		8
/* Phases kept: NUMAPLACE_PHASE_MAX and some room for a newer module. */
#define NP_ST_PHASES		16

struct np_st_node {
	unsigned int node;
	__u64 pages_in, pages_out;		/* base pages */
	__u64 folios_in[NP_ST_ORDERS];		/* folios, by order */
	__u64 folios_out[NP_ST_ORDERS];
	int has_order[NP_ST_ORDERS];		/* the module sent the order */
};

struct np_st_fail {
	__u32 err;				/* positive errno, 0: other */
	__u64 pages;
};

/* One STATS_GET dump. */
struct np_st {
	__u64 query_calls, query_pages, query_runs;
	__u64 migrate_calls, bytes_copied;
	__u64 dma_pages, dma_fallback;	/* pages */
	__u64 migrate_retry_passes;	/* passes */
	__u64 access_calls;		/* QUERY calls with QUERY_ACCESS */
	__u64 access_pages, access_young, access_cleared;	/* pages */
	__u64 access_flushes;		/* TLB flushes */
	struct np_st_fail fail[NP_ST_FAILS];
	unsigned int nr_fail;
	__u64 phase_ns[NP_ST_ENGINES][NP_ST_PHASES];
	int has_phase[NP_ST_ENGINES][NP_ST_PHASES];
	struct np_st_node *nodes;
	size_t nr_nodes, cap_nodes;
	double t;				/* CLOCK_MONOTONIC, seconds */
	double wall;				/* CLOCK_REALTIME, seconds */
};

/* Dump the counters into @st (emptied first). 0 or -errno. */
int np_st_get(struct np_nl *nl, struct np_st *st);
void np_st_free(struct np_st *st);

/* @st in @fmt; @prev (may be NULL): the sample rates are drawn from. */
void np_st_print(enum np_fmt fmt, const struct np_st *st,
		 const struct np_st *prev);

#endif /* NP_STATS_H */
