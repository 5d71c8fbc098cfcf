/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * libnumaplace tiering internals: the policy's pure parts (tier_policy.c,
 * unit-tested in tests/tier_policy.c) and what the nodes and processes
 * say (tier_nodes.c). Not installed.
 */
#ifndef NUMAPLACE_TIER_PRIV_H
#define NUMAPLACE_TIER_PRIV_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "numaplace.h"

/* ---- a page's state: 16 bits --------------------------------------- */

/*
 * bits 0-8	history: bit 0 is the last scan's young bit
 * bits 9-11	age: scans since tracking began or the page last moved
 *		(or failed to), saturated at NUMAPLACE_TIER_MAX_AGE
 * bits 12-13	moves, saturated at 3
 * bit 14	a move of it failed: held as a moved page is
 * bit 15	seen: its first scan (which only clears) is done
 */
#define NP_TIER_HIST_MASK	0x01ffU
#define NP_TIER_AGE_SHIFT	9
#define NP_TIER_AGE_MASK	(0x7U << NP_TIER_AGE_SHIFT)
#define NP_TIER_MOVES_SHIFT	12
#define NP_TIER_MOVES_MASK	(0x3U << NP_TIER_MOVES_SHIFT)
#define NP_TIER_FAILED		(1U << 14)
#define NP_TIER_SEEN		(1U << 15)

enum np_tier_class {
	NP_TIER_WARM = NUMAPLACE_TIER_WARM,	/* neither, or too new */
	NP_TIER_HOT = NUMAPLACE_TIER_HOT,
	NP_TIER_COLD = NUMAPLACE_TIER_COLD,
};

static inline unsigned int np_tier_age(__u16 st)
{
	return (st & NP_TIER_AGE_MASK) >> NP_TIER_AGE_SHIFT;
}

static inline unsigned int np_tier_moves(__u16 st)
{
	return (st & NP_TIER_MOVES_MASK) >> NP_TIER_MOVES_SHIFT;
}

/* A page's class by @p, from its state. */
enum np_tier_class np_tier_page_class(__u16 st,
				      const struct numaplace_tier_params *p);
/*
 * One scan of a page: its young bit into the history, the age one scan
 * older; the page's class by @p. A page's first scan only marks it seen
 * (its bit said "since ever"): NP_TIER_WARM.
 */
__u16 np_tier_page_scan(__u16 st, bool young,
			const struct numaplace_tier_params *p,
			enum np_tier_class *cls);
/* 1 while a page that moved (or failed to) is held by @hold scans. */
bool np_tier_page_held(__u16 st, unsigned int hold);
/*
 * A move of the page was done: age 0, one move more. *@ping_pong: it had
 * moved before; *@third: this is its third move.
 */
__u16 np_tier_page_moved(__u16 st, bool *ping_pong, bool *third);
/* A move of the page failed: age 0, held. */
__u16 np_tier_page_failed(__u16 st);

/* ---- where a move goes: the spread over nodes with room ------------- */

/**
 * struct np_tier_spread - where moves go, step after step
 * @mode: NUMAPLACE_TIER_SPREAD_*
 * @nodes: the candidate nodes (fast nodes for promotions, slow ones for
 *	demotions), in order
 * @nr: entries of @nodes
 * @room: pages each may still take this step (by node id)
 * @base: @room at the start of the step (FREE's weights)
 * @given: pages given to each this step (FREE)
 * @recent: pages given to each, halved at each step: what ROUND_ROBIN
 *	and LOCAL even out, across steps (one THP a step alternates)
 * @next: ROUND_ROBIN's and LOCAL's cursor into @nodes, for ties
 */
struct np_tier_spread {
	unsigned int mode;
	int nodes[NUMAPLACE_TIER_NODES];
	unsigned int nr;
	__s64 room[NUMAPLACE_TIER_NODES];
	__s64 base[NUMAPLACE_TIER_NODES];
	__u64 given[NUMAPLACE_TIER_NODES];
	__u64 recent[NUMAPLACE_TIER_NODES];
	unsigned int next;
};

/* A spread over the nodes of @mask, nothing given yet. */
void np_tier_spread_init(struct np_tier_spread *s, unsigned int mode,
			 const __u64 *mask);
/* A new step: each node's room[node] pages; the past weighs half. */
void np_tier_spread_step(struct np_tier_spread *s, const __s64 *room);
/*
 * The node for @nr_pages pages among those of @allowed (the process's
 * mems), LOCAL preferring those of @local (its CPUs' nodes): a node with
 * room for them all, its room taken. -1 when none has room.
 */
int np_tier_spread_pick(struct np_tier_spread *s, const __u64 *allowed,
			const __u64 *local, __u64 nr_pages);
/* Node @node can take nothing more this step (a move to it ran out). */
void np_tier_spread_full(struct np_tier_spread *s, int node);

/* ---- the rate limit: a token bucket in pages ------------------------ */

struct np_tier_bucket {
	double rate;		/* pages per second; 0: no limit */
	double tokens;
	double last;		/* seconds, CLOCK_MONOTONIC; < 0: never */
};

void np_tier_bucket_init(struct np_tier_bucket *b, double pages_per_s);
/*
 * The pages that may move at @now: the tokens gathered since the last
 * call (at most a second's worth, or the time since the last call if
 * longer), @cap at most (@cap when there is no limit).
 */
__u64 np_tier_bucket_take(struct np_tier_bucket *b, double now, __u64 cap);
/* Give back @pages taken but not moved. */
void np_tier_bucket_give(struct np_tier_bucket *b, __u64 pages);

/* ---- nodes and processes (tier_nodes.c) ----------------------------- */

#define NP_TIER_WORDS	(NUMAPLACE_TIER_NODES / 64)

/*
 * A node list ("0-1,3", as sysfs and /proc print them) into @mask; a
 * node past NUMAPLACE_TIER_NODES is -ERANGE. 0 or -EINVAL.
 */
int np_tier_parse_nodes(const char *s, __u64 *mask);
/* The kernel's top memory tier into @fast, the tiers below into @slow. */
int np_tier_read_tiers(__u64 *fast, __u64 *slow);
/* The nodes with memory, and those with CPUs. 0 or -errno. */
int np_tier_read_node_masks(__u64 *memory, __u64 *cpus);
/* Node @node's size and free memory, in pages of @page_size. */
int np_tier_read_node_mem(int node, long page_size, __u64 *total,
			  __u64 *free);
/*
 * Process @pid's allowed memory nodes (its cpuset's mems) into @mems and
 * the nodes of the CPUs its threads last ran on into @local, by
 * @cpu_node (the node of each CPU, -1 unknown, @nr_cpus entries). 0 or
 * -errno (-ESRCH: gone).
 */
int np_tier_read_task_nodes(int pid, const int *cpu_node, int nr_cpus,
			    __u64 *mems, __u64 *local);
/*
 * What names process @pid across its life: when it started (field 22 of
 * /proc/PID/stat), so that a pid reused after an exit is not taken for
 * it, and where its program's code starts (field 26), which an exec
 * changes. 0 or -errno (-ESRCH: gone, or a zombie).
 */
int np_tier_read_identity(int pid, __u64 *start, __u64 *code);
/*
 * /proc/@pid/@name open for reading, or NULL with errno set: ESRCH where
 * the process is gone (ENOENT).
 */
FILE *np_tier_proc_open(int pid, const char *name);
/* The node of each CPU, into a new array of *@nr_cpus entries. */
int np_tier_read_cpu_nodes(int **cpu_node, int *nr_cpus);

static inline bool np_tier_isset(const __u64 *mask, int node)
{
	return node >= 0 && node < NUMAPLACE_TIER_NODES &&
	       (mask[node / 64] >> (node % 64)) & 1;
}

static inline void np_tier_set(__u64 *mask, int node)
{
	mask[node / 64] |= 1ULL << (node % 64);
}

#endif /* NUMAPLACE_TIER_PRIV_H */
