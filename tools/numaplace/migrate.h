/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace migrate: the command's state (migrate.c parses, reads the
 * maps and runs the chunks; migrate_print.c reports: progress, errors,
 * the summary).
 */
#ifndef NP_MIGRATE_H
#define NP_MIGRATE_H

#include "cli.h"
#include "numaplace.h"

/* A piece of address space to migrate, or one skipped, with its name. */
struct np_piece {
	unsigned long long start, end;	/* [start, end), page aligned */
	char *name;
};

struct np_pieces {
	struct np_piece *v;
	size_t nr, cap;
};

struct np_migrate_cmd {
	struct np_proc_args proc;	/* -p PID (required), RANGE, --json */
	unsigned int policy;		/* NUMAPLACE_POLICY_* */
	int node;			/* --to */
	unsigned int cpu;		/* --cpu */
	__u64 node_set[NUMAPLACE_NODE_WORDS];	/* --interleave */
	const char *target_arg;		/* the target as given */
	unsigned int flags;		/* NUMAPLACE_MIGRATE_* */
	const char *engine;		/* --engine, or NULL */
	struct numaplace_info info;
	struct np_pieces todo;		/* what goes to the module */
	struct np_pieces skipped;	/* special mappings left alone */
	unsigned long long nr_novma_pages;	/* range pages in no VMA */
	unsigned long long total_bytes, done_bytes;	/* of todo */
	struct numaplace_migrate sum;	/* counters over every chunk */
	double t0, elapsed;		/* seconds */
	int progress;			/* stderr is a terminal */
	double last_draw;
};

/* Redraw the progress bar (if due); @final clears it for the summary. */
void np_progress_draw(struct np_migrate_cmd *c, int final);
/* Say why a chunk failed at @addr, in the words of what was asked; the exit code. */
int np_report_error(const struct np_migrate_cmd *c, int err,
		    unsigned long long addr);
/* /proc/PID/maps could not be read (-@err): say so; the exit code. */
int np_maps_error(const struct np_migrate_cmd *c, int err);
/* Pages that did not move although they could have, one day. */
int np_partial(const struct numaplace_migrate *s);
/* The summary, as text or (--json) JSON; @status: the exit code so far. -ENOMEM. */
int np_migrate_print(const struct np_migrate_cmd *c, int status);

#endif /* NP_MIGRATE_H */
