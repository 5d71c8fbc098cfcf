/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace tier: the command and its loop (tier.c), its options
 * (tier_opts.c), the processes it tracks, given with -p or found in
 * --cgroup directories (tier_targets.c), and its output: a line per
 * period and the Prometheus textfile (tier_print.c).
 */
#ifndef NP_TIER_H
#define NP_TIER_H

#include <limits.h>
#include <stddef.h>

#include "numaplace.h"

/* A set of pids: appended to, then sorted (np_pids_sort()) to look up. */
struct np_pids {
	int *v;
	size_t nr, cap;
};

/* 0, or -ENOMEM. */
int np_pids_add(struct np_pids *p, int pid);
/* "numaplace tier: out of memory" on stderr; NP_EXIT_FAIL. */
int np_tier_oom(void);

/* One --cgroup directory. */
struct np_tier_cgroup {
	const char *path;	/* as given */
	int gone;		/* its cgroup.procs is gone: never read again */
};

/*
 * What the command tracks: the -p processes for as long as they live,
 * and whatever process each cgroup holds at the start of a period. Every
 * set is owned here and freed by np_tier_targets_free().
 */
struct np_tier_targets {
	struct np_pids given;		/* -p, sorted at the start */
	struct np_tier_cgroup *cgroups;	/* --cgroup */
	size_t nr_cgroups, cap_cgroups;
	size_t nr_gone;			/* cgroups gone */
	struct np_pids members;		/* in the cgroups, this period */
	struct np_pids tracked;		/* in the context, this period */
	/* cgroup members the scan may not touch, said once each */
	struct np_pids refused, refused_prev;
};

/* One --cgroup PATH more (kept, not copied). 0 or -ENOMEM. */
int np_tier_targets_cgroup(struct np_tier_targets *tg, const char *path);
/*
 * Track the -p processes and the cgroups' members. NP_EXIT_OK, or the
 * exit code of a failure (said): no such process or cgroup, permission.
 */
int np_tier_targets_start(struct numaplace_tier *t, struct np_tier_targets *tg);
/*
 * Read the cgroups again: track their new members, stop tracking those
 * that left. A member the scan may not touch is said once and skipped; a
 * cgroup gone is said once. NP_EXIT_OK, or the exit code of a failure.
 */
int np_tier_targets_update(struct numaplace_tier *t,
			   struct np_tier_targets *tg);
/* Nothing is left to track: no process after a step, no cgroup. */
int np_tier_targets_done(const struct np_tier_targets *tg, __u64 nr_targets);
void np_tier_targets_free(struct np_tier_targets *tg);


/* Bytes of a node list as text: 64 nodes as pairs, "0-1,3-4,..." (126). */
#define NP_TIER_LIST		160
/* Bytes of the Prometheus "tier" label: a file name, each byte escaped. */
#define NP_TIER_LABEL		(2 * NAME_MAX + 1)

/* The output of the periods. */
struct np_tier_out {
	int json;			/* --json */
	const char *prom;		/* --prometheus FILE, or NULL */
	char tier[NP_TIER_LABEL];	/* its samples' "tier" label, escaped */
	int prom_failing;		/* its last write failed (said) */
	__u64 fast[NUMAPLACE_TIER_NODES / 64];	/* the context's nodes */
	__u64 slow[NUMAPLACE_TIER_NODES / 64];
	struct numaplace_tier_period tot;	/* since the start */
	__u64 periods;
	struct numaplace_tier_period last;	/* the gauges' values */
};

/*
 * --prometheus @file: its samples' label tier="NAME", NAME the file's name
 * without ".prom" (node_exporter refuses one series from two files).
 * 0, or -EINVAL when @file names no file.
 */
int np_tier_prom_init(struct np_tier_out *out, const char *file);
/* "0-3,5" into @buf: the nodes of @mask (NUMAPLACE_TIER_NODES bits). */
const char *np_tier_node_list(const __u64 *mask, char *buf, size_t size);
/* Period @nr (1-based), @p, as a line on stdout (flushed). */
void np_tier_print(struct np_tier_out *out, unsigned long nr,
		   const struct numaplace_tier_period *p);
/* Add @p to the totals, as np_tier_prom_write() shows them. */
void np_tier_count(struct np_tier_out *out,
		   const struct numaplace_tier_period *p);
/*
 * Write the totals to the --prometheus file (a no-op without one): into
 * FILE.tmp, then renamed over FILE. 0, or -errno (said once, until a
 * write succeeds again).
 */
int np_tier_prom_write(struct np_tier_out *out);

/* ---- the command (tier.c), its options (tier_opts.c) ------------------ */

#define NP_NS_PER_MS		1000000ULL
#define NP_NS_PER_S		1000000000ULL

struct np_tier_cmd {
	struct numaplace_tier_params params;
	struct np_tier_targets tg;
	struct np_tier_out out;
	__u64 interval_ns;
	unsigned long count;		/* periods; 0: until stopped */
};

/*
 * The defaults, then the command line into @c: NP_EXIT_OK, NP_EXIT_USAGE
 * (said), NP_EXIT_FAIL (out of memory) or NP_OPT_HELP after --help.
 */
int np_tier_parse(struct np_tier_cmd *c, int argc, char **argv);

#endif /* NP_TIER_H */
