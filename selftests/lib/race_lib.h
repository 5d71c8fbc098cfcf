/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NUMAPLACE_IOC_MIGRATE race engine of race.c: the writer thread
 * that stamps and checks every page, the disturbers that change the
 * memory under it and the migration (race_mm.c, in the tests' library:
 * no kselftest harness there), and the race's shared state.
 */
#ifndef NP_RACE_LIB_H
#define NP_RACE_LIB_H

#include <pthread.h>
#include <stdatomic.h>

#include "np_test.h"

#define NP_PMD			(2UL << 20)
/* Pages of the region: one PMD (a THP in the thp race). */
#define NP_RC_PAGES		512
/* Pages one disturber step changes at most. */
#define NP_RC_SLICE		32
/* Pages one madvise step changes at most (see np_rc_madvise()). */
#define NP_RC_PAGEOUT_MAX	8
/* One race's length (under TCG: a few dozen migrations). */
#define NP_RC_MS		1500
/* Migrations of the region at least, however long they take. */
#define NP_RC_MIN_ROUNDS	3
/* The disturber's pause between steps, at most. */
#define NP_RC_PAUSE_US		2000
/* A fork child checks its copy for this long while we migrate. */
#define NP_RC_CHILD_MS		200
/* Targets that exit or exec, one after the other. */
#define NP_RC_TARGETS		6
/* Wait this long for nr_isolated_* to settle back. */
#define NP_RC_SETTLE_MS		3000
/* Mismatch lines printed before they are only counted. */
#define NP_RC_LOG_MAX		8
/* A migration call this long is reported with every thread's stack. */
#define NP_RC_STUCK_MS		20000

/* Generation values with a meaning (the rest are stamps). */
#define NP_RC_ZERO		0ULL		/* the page reads all zeroes */
#define NP_RC_GONE		(~0ULL)		/* not mapped: not checked */
#define NP_RC_OR_ZERO		(1ULL << 62)	/* this stamp, or zeroes */

struct np_rc;
typedef void (*np_rc_step_fn)(struct np_rc *x, __u64 *rng);

/* One race. */
struct np_rc {
	int fd;
	__u32 eflags;		/* the variant's engine flag */
	__u32 allowed;		/* engines it may report */
	char *buf;		/* the region */
	char *spare;		/* where mremap moves a slice meanwhile */
	size_t n;
	atomic_int stop;
	atomic_int *lock;	/* per page: the writer or the disturber */
	_Atomic __u64 *gen;	/* per page: what it must hold */
	atomic_ullong next_gen;
	atomic_long errors;
	atomic_long writes;
	atomic_long steps;
	atomic_long logged;
	atomic_int kid;		/* fork child being checked, or 0 */
	atomic_long kids_bad;	/* children that did not exit 0 */
	atomic_int move_all;	/* the main thread adds MOVE_ALL */
	atomic_long call_ms;	/* when the main thread's call began, or 0 */
	np_rc_step_fn step;
};

/* Count an error of the race; the first NP_RC_LOG_MAX are printed. */
void np_rc_log(struct np_rc *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* 1 if page @i holds what generation value @g says. */
int np_rc_ok(const struct np_rc *x, size_t i, __u64 g);
/* The writer, the disturber (x->step in a loop), the stuck-call watchdog. */
void *np_rc_writer(void *arg);
void np_rc_fill(struct np_rc *x);
void *np_rc_disturber(void *arg);
void *np_rc_watchdog(void *arg);
/* The disturbers: one step each. */
void np_rc_munmap(struct np_rc *x, __u64 *rng);
void np_rc_mremap(struct np_rc *x, __u64 *rng);
/* Reap the fork child; @wait: wait for it. */
void np_rc_reap(struct np_rc *x, int wait);
void np_rc_fork(struct np_rc *x, __u64 *rng);
void np_rc_madvise(struct np_rc *x, __u64 *rng);
void np_rc_dontneed_pmd(struct np_rc *x, __u64 *rng);
void np_rc_mprotect(struct np_rc *x, __u64 *rng);
void np_rc_mlock(struct np_rc *x, __u64 *rng);
void np_rc_thp(struct np_rc *x, __u64 *rng);
void np_rc_migrate2(struct np_rc *x, __u64 *rng);
void np_rc_move_pages(struct np_rc *x, __u64 *rng);
/* One race's length: NP_RACE_MS of the environment, or NP_RC_MS. */
long np_rc_ms(void);
/*
 * The rounds of a race that moves its region back and forth, counted in
 * @r from 0: for np_rc_ms() from @t0 (set here) and at least @min rounds.
 * Round r moves the region to NP_RC_ROUND_NODE(r): 1, 0, 1, ...
 */
#define NP_RC_ROUNDS(r, t0, min)					\
	for ((t0) = np_mono_ms(), (r) = 0;				\
	     np_mono_ms() - (t0) < np_rc_ms() || (r) < (min); (r)++)
#define NP_RC_ROUND_NODE(r)	(((r) + 1) % 2)
/* The region: @thp for THPs (2: mTHP), stamped on node 0. 0 or -errno. */
int np_rc_setup(struct np_rc *x, int thp);
/* 1 if @p starts a 16-page (64 KiB) folio. */
int np_rc_is_mthp(const char *p);
/*
 * np_check_mig_counters() less the rules that tie folios to pages, which
 * a racing munmap, move_pages(2) or second migration can break.
 */
int np_rc_counters(struct np_ctx *c, const char *what,
		   struct numaplace_migrate *m, const __s32 *st, size_t n,
		   __u32 allowed);
/* Statuses a race may explain, besides the target node. */
int np_rc_status_ok(int st);
/* NP_RACE_ONLY=TEST and NP_RACE_FLAGS=ENGINE_FLAGS: run just that one. */
int np_rc_filtered(const char *name, __u32 eflags);

/*
 * The flags of a race's migrations: the variant's engine, with SPLIT_OK
 * (the migrate_vma engines may split the THPs the disturbers make), except
 * for the page-table engine: it takes no VMA in a call with SPLIT_OK
 * (design.md), which would leave its variant running the batched engine.
 */
static inline __u32 np_rc_flags(const struct np_rc *x)
{
	if (x->eflags == NUMAPLACE_MIGRATE_ENGINE_PT)
		return x->eflags;
	return x->eflags | NUMAPLACE_MIGRATE_SPLIT_OK;
}

#endif /* NP_RACE_LIB_H */
