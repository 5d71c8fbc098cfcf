// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace tiering: a context that tracks processes, scans their
 * access bits a period at a time and moves pages between the fast and
 * the slow nodes by their history (numaplace.h, "tiering"). The policy's
 * pure parts are in tier_policy.c, what sysfs and /proc say in
 * tier_nodes.c.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "array.h"
#include "lib.h"
#include "tier.h"

/* Pages a chunk of state covers: a PMD's worth, so a THP is in one. */
#define NP_TIER_CHUNK_PAGES	512
/* Runs asked of one access scan call (24 bytes each: 96 KiB). */
#define NP_TIER_RUNS		4096
/* Pages of one move call: its arrays are 16 bytes a page (64 KiB). */
#define NP_TIER_MOVE_BATCH	4096
/*
 * Pages one step may move at most, whatever the rate: the step's list
 * of moves is 24 bytes a page (24 MiB for 4 GiB moved), and a step's
 * length stays about one period's.
 */
#define NP_TIER_MAX_MOVES	(1UL << 20)
/* A line of /proc/PID/maps: the fields before the name fit well in it. */
#define NP_TIER_MAPS_LINE	512
/* Entries of the arrays that grow (mappings, chunks, moves) at first. */
#define NP_TIER_VMAS_FIRST	64
#define NP_TIER_CHUNKS_FIRST	64
#define NP_TIER_MOVES_FIRST	1024
#define NP_TIER_TARGETS_FIRST	4
/* A status move_pages(2) never writes: the move was not tried. */
#define NP_TIER_NOT_TRIED	INT_MIN

struct np_tier_chunk {
	__u64 base;			/* the address of its first page */
	__u16 st[NP_TIER_CHUNK_PAGES];
};

/* A chunk array, in address order. */
struct np_tier_chunks {
	struct np_tier_chunk **v;
	size_t nr, cap;
};

struct np_tier_target {
	int pid;
	__u64 start_time;		/* np_tier_read_identity(): pid reuse */
	__u64 start_code;		/* ...and exec */
	struct np_tier_chunks chunks;
	__u64 mems[NP_TIER_WORDS];	/* its cpuset's nodes, this step */
	__u64 local[NP_TIER_WORDS];	/* its CPUs' nodes, this step */
};

/*
 * One move decided by a scan: a 4 KiB page, or a THP (PMD leaf) given by
 * its first address, which stands for its @nr pages.
 */
struct np_tier_move {
	__u64 addr;
	__u16 *st;			/* its states, in a chunk of this step */
	unsigned int nr;
	int to;
	bool promote;
};

/* The arrays of one access scan call and of one move call. */
struct np_tier_calls {
	struct numaplace_run runs[NP_TIER_RUNS];
	void *move_pages[NP_TIER_MOVE_BATCH];
	int move_nodes[NP_TIER_MOVE_BATCH];
	int move_status[NP_TIER_MOVE_BATCH];
};

/* A step's scan of one target: the old chunks it walks, the new ones. */
struct np_tier_scan {
	struct np_tier_target *tg;
	struct np_tier_chunks next;
	size_t cursor;			/* into tg->chunks */
};

struct numaplace_tier {
	struct numaplace_tier_params p;
	__u64 fast[NP_TIER_WORDS], slow[NP_TIER_WORDS];
	long page_size;
	unsigned int scan_flags;
	int *cpu_node;
	int nr_cpus;
	struct np_tier_target *targets;
	size_t nr_targets, cap_targets;
	struct np_tier_bucket bucket;
	struct np_tier_calls *calls;
	struct np_tier_move *moves;
	size_t nr_moves, cap_moves;
	/* The step's: */
	struct np_tier_spread up, down;
	__u64 need[NUMAPLACE_TIER_NODES];	/* pages to demote from a fast node */
	__u64 promote_budget, demote_budget;
	struct numaplace_tier_period *out;
};

static __u64 np_tier_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool np_tier_mask_empty(const __u64 *m)
{
	int i;

	for (i = 0; i < NP_TIER_WORDS; i++)
		if (m[i])
			return false;
	return true;
}

/* A __u64 member of struct numaplace_tier_period (or an array of them). */
#define NP_TIER_PERIOD_U64(m) {						\
	offsetof(struct numaplace_tier_period, m),			\
	sizeof(((struct numaplace_tier_period *)0)->m) / sizeof(__u64) }

/* The members of a period that periods add up in. */
static const struct {
	size_t off;		/* into the struct */
	size_t nr;		/* __u64s there */
} np_tier_period_sums[] = {
	NP_TIER_PERIOD_U64(nr_scanned), NP_TIER_PERIOD_U64(nr_young),
	NP_TIER_PERIOD_U64(nr_hot), NP_TIER_PERIOD_U64(nr_cold),
	NP_TIER_PERIOD_U64(nr_promoted), NP_TIER_PERIOD_U64(nr_demoted),
	NP_TIER_PERIOD_U64(nr_failed), NP_TIER_PERIOD_U64(nr_held),
	NP_TIER_PERIOD_U64(nr_limited), NP_TIER_PERIOD_U64(nr_no_room),
	NP_TIER_PERIOD_U64(nr_scan_failed), NP_TIER_PERIOD_U64(nr_ping_pong),
	NP_TIER_PERIOD_U64(nr_moved_3), NP_TIER_PERIOD_U64(scan_ns),
	NP_TIER_PERIOD_U64(move_ns),
};

/*
 * Every member is summed (above: 13 scalars and two per-node arrays) or
 * kept from the last period (nr_targets, nr_tracked, state_bytes,
 * scan_error): a member added to the struct and to neither fails here.
 */
#define NP_TIER_PERIOD_SUMMED	(13 + 2 * NUMAPLACE_TIER_NODES)
#define NP_TIER_PERIOD_KEPT	4
_Static_assert(sizeof(struct numaplace_tier_period) ==
	       (NP_TIER_PERIOD_SUMMED + NP_TIER_PERIOD_KEPT) * sizeof(__u64),
	       "a member of struct numaplace_tier_period neither summed nor kept");

NP_EXPORT void numaplace_tier_period_add(struct numaplace_tier_period *to,
				       const struct numaplace_tier_period *from)
{
	const __u64 *f;
	size_t i, k;
	__u64 *t;

	for (i = 0; i < sizeof(np_tier_period_sums) /
			sizeof(np_tier_period_sums[0]); i++) {
		t = (__u64 *)((char *)to + np_tier_period_sums[i].off);
		f = (const __u64 *)((const char *)from +
				    np_tier_period_sums[i].off);
		for (k = 0; k < np_tier_period_sums[i].nr; k++)
			t[k] += f[k];
	}
	/* The rest is the state at the end: the last period's. */
	to->nr_targets = from->nr_targets;
	to->nr_tracked = from->nr_tracked;
	to->state_bytes = from->state_bytes;
	if (from->scan_error)
		to->scan_error = from->scan_error;
}

NP_EXPORT void numaplace_tier_params_init(struct numaplace_tier_params *p)
{
	*p = (struct numaplace_tier_params){
		.history = 4,
		.hot_scans = 2,
		.cold_scans = 4,
		.hold_scans = 4,
		.spread = NUMAPLACE_TIER_SPREAD_LOCAL,
		.demote_free_pct = 5,
	};
}

static int np_tier_check_params(const struct numaplace_tier_params *p)
{
	if (!p->history || p->history > NUMAPLACE_TIER_MAX_HISTORY ||
	    !p->hot_scans || p->hot_scans > p->history ||
	    !p->cold_scans || p->cold_scans > NUMAPLACE_TIER_MAX_AGE ||
	    p->hold_scans > NUMAPLACE_TIER_MAX_AGE ||
	    p->spread > NUMAPLACE_TIER_SPREAD_FREE ||
	    p->demote_free_pct > NUMAPLACE_TIER_MAX_WATERMARK ||
	    p->rate_mb_s > NUMAPLACE_TIER_MAX_RATE ||
	    p->flags & ~(NUMAPLACE_TIER_NO_FLUSH | NUMAPLACE_TIER_DRY_RUN))
		return -EINVAL;
	return 0;
}

/*
 * The fast and slow nodes: @p's, the one given completed by the other
 * nodes with memory, or the kernel's tiers, or CPU nodes against
 * memory-only ones. Both non-empty, apart, and nodes with memory.
 */
static int np_tier_pick_nodes(struct numaplace_tier *t)
{
	__u64 memory[NP_TIER_WORDS], cpus[NP_TIER_WORDS];
	bool fast_given = !np_tier_mask_empty(t->p.fast_nodes);
	bool slow_given = !np_tier_mask_empty(t->p.slow_nodes);
	int i, ret;

	ret = np_tier_read_node_masks(memory, cpus);
	if (ret)
		return ret;
	memcpy(t->fast, t->p.fast_nodes, sizeof(t->fast));
	memcpy(t->slow, t->p.slow_nodes, sizeof(t->slow));
	if (fast_given != slow_given) {
		for (i = 0; i < NP_TIER_WORDS; i++) {
			if (!fast_given)
				t->fast[i] = memory[i] & ~t->slow[i];
			else
				t->slow[i] = memory[i] & ~t->fast[i];
		}
	} else if (!fast_given) {
		ret = np_tier_read_tiers(t->fast, t->slow);
		if (ret && ret != -ENOENT)
			return ret;
		if (ret || np_tier_mask_empty(t->slow)) {
			for (i = 0; i < NP_TIER_WORDS; i++) {
				t->fast[i] = memory[i] & cpus[i];
				t->slow[i] = memory[i] & ~cpus[i];
			}
			if (np_tier_mask_empty(t->slow))
				return -ENOENT;
		}
	}
	if (np_tier_mask_empty(t->fast) || np_tier_mask_empty(t->slow))
		return -EINVAL;
	for (i = 0; i < NP_TIER_WORDS; i++)
		if (t->fast[i] & t->slow[i] ||
		    (t->fast[i] | t->slow[i]) & ~memory[i])
			return -EINVAL;
	return 0;
}

NP_EXPORT int numaplace_tier_new(const struct numaplace_tier_params *p,
				 struct numaplace_tier **out)
{
	struct numaplace_info info;
	struct numaplace_tier *t;
	int ret;

	ret = np_tier_check_params(p);
	if (ret)
		return ret;
	ret = numaplace_info(&info);
	if (ret)
		return ret == -ENOENT ? -ENODEV : ret;
	if (!numaplace_supports(&info, 1ULL << NUMAPLACE_CMD_QUERY,
				NUMAPLACE_FEAT_ACCESS))
		return -EOPNOTSUPP;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->p = *p;
	t->page_size = sysconf(_SC_PAGESIZE);
	t->scan_flags = NUMAPLACE_QUERY_CLEAR_ACCESS;
	if (!(p->flags & NUMAPLACE_TIER_NO_FLUSH) &&
	    info.features & NUMAPLACE_FEAT_ACCESS_FLUSH)
		t->scan_flags |= NUMAPLACE_QUERY_FLUSH_TLB;
	ret = np_tier_pick_nodes(t);
	if (ret)
		goto free_tier;
	t->calls = calloc(1, sizeof(*t->calls));
	if (!t->calls) {
		ret = -ENOMEM;
		goto free_tier;
	}
	ret = np_tier_read_cpu_nodes(&t->cpu_node, &t->nr_cpus);
	if (ret)
		goto free_tier;
	np_tier_spread_init(&t->up, p->spread, t->fast);
	np_tier_spread_init(&t->down, NUMAPLACE_TIER_SPREAD_FREE, t->slow);
	np_tier_bucket_init(&t->bucket,
			    (double)p->rate_mb_s * (1 << 20) / t->page_size);
	*out = t;
	return 0;

free_tier:
	numaplace_tier_free(t);
	return ret;
}

static void np_tier_chunks_free(struct np_tier_chunks *c, size_t from)
{
	size_t i;

	for (i = from; i < c->nr; i++)
		free(c->v[i]);
	free(c->v);
	*c = (struct np_tier_chunks){ 0 };
}

NP_EXPORT void numaplace_tier_free(struct numaplace_tier *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->nr_targets; i++)
		np_tier_chunks_free(&t->targets[i].chunks, 0);
	free(t->targets);
	free(t->moves);
	free(t->calls);
	free(t->cpu_node);
	free(t);
}

NP_EXPORT void numaplace_tier_nodes(const struct numaplace_tier *t,
				    __u64 *fast, __u64 *slow)
{
	memcpy(fast, t->fast, sizeof(t->fast));
	memcpy(slow, t->slow, sizeof(t->slow));
}

static struct np_tier_target *np_tier_find(const struct numaplace_tier *t,
					   int pid)
{
	size_t i;

	for (i = 0; i < t->nr_targets; i++)
		if (t->targets[i].pid == pid)
			return &t->targets[i];
	return NULL;
}

/* A mapping of /proc/PID/maps worth scanning. */
struct np_tier_vma {
	__u64 start, end;
};

/*
 * The mappings of @pid into a new array: not the inaccessible ones
 * (guard pages, PROT_NONE reservations) nor the vsyscall page, vDSO and
 * vvar, which hold no page of the process's. The number, or -errno
 * (-ESRCH: no such process).
 */
static long np_tier_read_vmas(int pid, struct np_tier_vma **out)
{
	unsigned long long start, end;
	struct np_tier_vma *v = NULL;
	char line[NP_TIER_MAPS_LINE], perms[8];
	size_t nr = 0, cap = 0;
	bool rest = false;
	int name;
	FILE *f;

	f = np_tier_proc_open(pid, "maps");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* The rest of a line longer than the buffer (a long path). */
		bool cont = rest;

		rest = !strchr(line, '\n') && !feof(f);
		if (cont)
			continue;
		name = -1;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %n", &start, &end,
			   perms, &name) < 3 || name < 0)
			continue;
		if (!strncmp(perms, "---", 3) || !strncmp(line + name, "[v", 2))
			continue;
		if (np_array_reserve(v, &cap, nr, NP_TIER_VMAS_FIRST)) {
			free(v);
			fclose(f);
			return -ENOMEM;
		}
		v[nr++] = (struct np_tier_vma){ start, end };
	}
	fclose(f);
	*out = v;
	return nr;
}

NP_EXPORT int numaplace_tier_add(struct numaplace_tier *t, int pid)
{
	struct np_tier_vma *vmas = NULL;
	size_t nr_runs, done;
	__u64 start_time, start_code;
	long nr;
	int ret;

	if (pid <= 0)
		return -ESRCH;
	if (np_tier_find(t, pid))
		return -EEXIST;
	ret = np_tier_read_identity(pid, &start_time, &start_code);
	if (ret)
		return ret;
	nr = np_tier_read_vmas(pid, &vmas);
	if (nr <= 0)
		return nr ? nr : -ESRCH;
	/* What a scan needs, asked of one page now rather than at a step. */
	ret = numaplace_access_runs(pid, (void *)(uintptr_t)vmas[0].start,
				    t->page_size, NUMAPLACE_QUERY_CLEAR_ACCESS,
				    t->calls->runs, 1, &nr_runs, &done, NULL);
	free(vmas);
	if (ret)
		return ret;
	if (np_array_reserve(t->targets, &t->cap_targets, t->nr_targets,
			     NP_TIER_TARGETS_FIRST))
		return -ENOMEM;
	t->targets[t->nr_targets++] = (struct np_tier_target){
		.pid = pid, .start_time = start_time,
		.start_code = start_code };
	return 0;
}

static void np_tier_drop(struct numaplace_tier *t, struct np_tier_target *tg)
{
	np_tier_chunks_free(&tg->chunks, 0);
	*tg = t->targets[--t->nr_targets];
}

NP_EXPORT int numaplace_tier_remove(struct numaplace_tier *t, int pid)
{
	struct np_tier_target *tg = np_tier_find(t, pid);

	if (!tg)
		return -ENOENT;
	np_tier_drop(t, tg);
	return 0;
}

NP_EXPORT size_t numaplace_tier_pids(const struct numaplace_tier *t,
				     int *pids, size_t cap)
{
	size_t i;

	for (i = 0; i < t->nr_targets && i < cap; i++)
		pids[i] = t->targets[i].pid;
	return t->nr_targets;
}

/* The first chunk of @c at or after @base: a binary search. */
static size_t np_tier_chunk_find(const struct np_tier_chunks *c, __u64 base)
{
	size_t lo = 0, hi = c->nr, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->v[mid]->base < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

NP_EXPORT int numaplace_tier_classes(const struct numaplace_tier *t, int pid,
				     const void *start, size_t nr_pages,
				     unsigned char *classes)
{
	const __u64 chunk_bytes = (__u64)NP_TIER_CHUNK_PAGES * t->page_size;
	const struct np_tier_target *tg = np_tier_find(t, pid);
	__u64 addr, base;
	size_t i, k;

	if (!tg)
		return -ENOENT;
	addr = (uintptr_t)start & ~((__u64)t->page_size - 1);
	k = np_tier_chunk_find(&tg->chunks, addr & ~(chunk_bytes - 1));
	for (i = 0; i < nr_pages; i++, addr += t->page_size) {
		base = addr & ~(chunk_bytes - 1);
		while (k < tg->chunks.nr && tg->chunks.v[k]->base < base)
			k++;
		if (k == tg->chunks.nr || tg->chunks.v[k]->base != base) {
			classes[i] = NUMAPLACE_TIER_UNKNOWN;
			continue;
		}
		classes[i] = np_tier_page_class(
			tg->chunks.v[k]->st[(addr - base) / t->page_size],
			&t->p);
	}
	return 0;
}

static int np_tier_chunks_push(struct np_tier_chunks *c,
			       struct np_tier_chunk *chunk)
{
	if (np_array_reserve(c->v, &c->cap, c->nr, NP_TIER_CHUNKS_FIRST))
		return -ENOMEM;
	c->v[c->nr++] = chunk;
	return 0;
}

/*
 * The chunk of the page at @base (chunk-aligned) for this scan: the
 * last one taken, else the old one of that address (the old ones before
 * it are gone from the process: freed), else a new one. Addresses come
 * in increasing order. NULL when out of memory.
 */
static struct np_tier_chunk *np_tier_chunk_get(struct np_tier_scan *sc,
					       __u64 base)
{
	struct np_tier_chunks *old = &sc->tg->chunks;
	struct np_tier_chunk *c = NULL;

	if (sc->next.nr && sc->next.v[sc->next.nr - 1]->base == base)
		return sc->next.v[sc->next.nr - 1];
	while (sc->cursor < old->nr && old->v[sc->cursor]->base < base)
		free(old->v[sc->cursor++]);
	if (sc->cursor < old->nr && old->v[sc->cursor]->base == base)
		c = old->v[sc->cursor++];
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
		c->base = base;
	}
	if (np_tier_chunks_push(&sc->next, c)) {
		free(c);
		return NULL;
	}
	return c;
}

static int np_tier_push_move(struct numaplace_tier *t, __u64 addr, __u16 *st,
			     unsigned int nr, int to, bool promote)
{
	if (np_array_reserve(t->moves, &t->cap_moves, t->nr_moves,
			     NP_TIER_MOVES_FIRST))
		return -ENOMEM;
	t->moves[t->nr_moves++] = (struct np_tier_move){ addr, st, nr, to,
							 promote };
	return 0;
}

/*
 * A target for @take of @nr pages on @node that would move one way: the
 * rest counted as over the budget, the budget and the target's room
 * taken (and, for a demotion, the node's need). The node, or -1 when
 * nothing is to move (@take 0, or no target with room: counted).
 */
static int np_tier_reserve(struct numaplace_tier *t, struct np_tier_target *tg,
			   unsigned int nr, unsigned int take, int node,
			   bool promote)
{
	__u64 *budget = promote ? &t->promote_budget : &t->demote_budget;
	struct np_tier_spread *s = promote ? &t->up : &t->down;
	int to;

	t->out->nr_limited += nr - take;
	if (!take)
		return -1;
	to = np_tier_spread_pick(s, tg->mems, tg->local, take);
	if (to < 0) {
		t->out->nr_no_room += take;
		return -1;
	}
	*budget -= take;
	if (!promote)
		t->need[node] = t->need[node] > take ? t->need[node] - take : 0;
	return to;
}

/*
 * Pages @idx[0..@nr) of chunk @c, all of one run on @node, to move one
 * way: one target for them all, as many 4 KiB pages as the budget
 * allows.
 */
static int np_tier_plan(struct numaplace_tier *t, struct np_tier_target *tg,
			struct np_tier_chunk *c, const unsigned int *idx,
			unsigned int nr, int node, bool promote)
{
	__u64 budget = promote ? t->promote_budget : t->demote_budget;
	unsigned int i, take = budget < nr ? budget : nr;
	int to, ret;

	to = np_tier_reserve(t, tg, nr, take, node, promote);
	for (i = 0; to >= 0 && i < take; i++) {
		ret = np_tier_push_move(t, c->base + (__u64)idx[i] * t->page_size,
					&c->st[idx[i]], 1, to, promote);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A THP, pages [first, first + nr) of chunk @c (a PMD leaf: 2 MiB
 * aligned, so in one chunk), moves as one: when most of its pages would
 * move, all of them, to one target, given by its first address alone,
 * whole within the budget or not at all.
 */
static int np_tier_plan_leaf(struct numaplace_tier *t,
			     struct np_tier_target *tg,
			     struct np_tier_chunk *c, unsigned int first,
			     unsigned int nr, unsigned int nr_want, int node,
			     bool promote)
{
	__u64 budget = promote ? t->promote_budget : t->demote_budget;
	int to;

	if (!nr_want || 2 * nr_want < nr)
		return 0;
	to = np_tier_reserve(t, tg, nr, budget < nr ? 0 : nr, node, promote);
	if (to < 0)
		return 0;
	return np_tier_push_move(t, c->base + (__u64)first * t->page_size,
				 &c->st[first], nr, to, promote);
}

/*
 * The end of the stretch of states equal to @was that starts at @i
 * (before @end): four states a compare while they match, as a page's
 * state is the same as its neighbours' in a hot or a cold range.
 */
static unsigned int np_tier_stretch_end(const __u16 *st, unsigned int i,
					unsigned int end, __u16 was)
{
	const __u64 four = was * 0x0001000100010001ULL;
	__u64 w;

	for (; i + 4 <= end; i += 4) {
		memcpy(&w, st + i, sizeof(w));
		if (w != four)
			break;
	}
	while (i < end && st[i] == was)
		i++;
	return i;
}

/* States [@i, @end) set to @now, four a store. */
static void np_tier_stretch_set(__u16 *st, unsigned int i, unsigned int end,
				__u16 now)
{
	const __u64 four = now * 0x0001000100010001ULL;

	for (; i + 4 <= end; i += 4)
		memcpy(st + i, &four, sizeof(four));
	for (; i < end; i++)
		st[i] = now;
}

/*
 * Pages [first, first + nr) of a run (@kind, on @node), in chunk @c. A
 * page's next state, class and hold depend on its state and the run's
 * young bit alone: a stretch of pages with one state (a hot or a cold
 * range has one) is worked out once, then stored and counted whole.
 */
static int np_tier_scan_pages(struct numaplace_tier *t,
			      struct np_tier_target *tg,
			      struct np_tier_chunk *c, unsigned int first,
			      unsigned int nr, int node, __u32 kind)
{
	unsigned int up[NP_TIER_CHUNK_PAGES], down[NP_TIER_CHUNK_PAGES];
	unsigned int i, j, k, end = first + nr, nr_up = 0, nr_down = 0;
	unsigned int *list, *nr_list;
	bool young = kind & NUMAPLACE_KIND_YOUNG;
	bool slow = np_tier_isset(t->slow, node);
	bool fast = np_tier_isset(t->fast, node);
	struct numaplace_tier_period *out = t->out;
	enum np_tier_class cls;
	__u16 was, now;
	int ret;

	out->nr_scanned += nr;
	if (young)
		out->nr_young += nr;
	for (i = first; i < end; i = j) {
		was = c->st[i];
		now = np_tier_page_scan(was, young, &t->p, &cls);
		j = np_tier_stretch_end(c->st, i + 1, end, was);
		np_tier_stretch_set(c->st, i, j, now);
		if (cls == NP_TIER_HOT) {
			out->nr_hot += j - i;
			if (!slow)
				continue;
		} else if (cls == NP_TIER_COLD) {
			out->nr_cold += j - i;
			if (!fast || !t->need[node])
				continue;
		} else {
			continue;
		}
		if (np_tier_page_held(now, t->p.hold_scans)) {
			out->nr_held += j - i;
			continue;
		}
		list = cls == NP_TIER_HOT ? up : down;
		nr_list = cls == NP_TIER_HOT ? &nr_up : &nr_down;
		for (k = i; k < j; k++)
			list[(*nr_list)++] = k;
	}
	if (kind & NUMAPLACE_KIND_PMD) {
		ret = np_tier_plan_leaf(t, tg, c, first, nr, nr_up, node, true);
		if (!ret)
			ret = np_tier_plan_leaf(t, tg, c, first, nr, nr_down,
						node, false);
		return ret;
	}
	ret = np_tier_plan(t, tg, c, up, nr_up, node, true);
	if (!ret)
		ret = np_tier_plan(t, tg, c, down, nr_down, node, false);
	return ret;
}

/* One run of a scan: each chunk's part of it. */
static int np_tier_scan_run(struct numaplace_tier *t, struct np_tier_scan *sc,
			    const struct numaplace_run *r)
{
	const __u64 chunk_bytes = (__u64)NP_TIER_CHUNK_PAGES * t->page_size;
	__u64 addr = r->start, end = r->start + r->nr_pages * t->page_size;
	struct np_tier_chunk *c;
	unsigned int first, nr;
	__u64 base;
	int ret;

	/*
	 * Not tracked: what is not a present page of the process's, and a
	 * 1 GiB hugetlb page (moving one is not a tiering step's work).
	 */
	if (!(r->kind & NUMAPLACE_KIND_PRESENT) ||
	    r->kind & (NUMAPLACE_KIND_ZERO | NUMAPLACE_KIND_SPECIAL |
		       NUMAPLACE_KIND_PUD) ||
	    r->node < 0 || r->node >= NUMAPLACE_TIER_NODES)
		return 0;
	while (addr < end) {
		base = addr & ~(chunk_bytes - 1);
		/* Runs come in address order: an earlier one is a bug's. */
		if (sc->next.nr && base < sc->next.v[sc->next.nr - 1]->base)
			return -EIO;
		c = np_tier_chunk_get(sc, base);
		if (!c)
			return -ENOMEM;
		first = (addr - base) / t->page_size;
		nr = NP_TIER_CHUNK_PAGES - first;
		if (addr + (__u64)nr * t->page_size > end)
			nr = (end - addr) / t->page_size;
		ret = np_tier_scan_pages(t, sc->tg, c, first, nr, r->node,
					 r->kind);
		if (ret)
			return ret;
		addr += (__u64)nr * t->page_size;
	}
	return 0;
}

/* One mapping [start, end), a call of the access scan at a time. */
static int np_tier_scan_vma(struct numaplace_tier *t, struct np_tier_scan *sc,
			    __u64 start, __u64 end)
{
	size_t i, nr_runs, done;
	int ret;

	while (start < end) {
		ret = numaplace_access_runs(sc->tg->pid,
					    (void *)(uintptr_t)start,
					    end - start, t->scan_flags,
					    t->calls->runs, NP_TIER_RUNS,
					    &nr_runs, &done, NULL);
		if (ret)
			return ret;
		if (!done)
			return -EIO;
		for (i = 0; i < nr_runs; i++) {
			ret = np_tier_scan_run(t, sc, &t->calls->runs[i]);
			if (ret)
				return ret;
		}
		start += done * t->page_size;
	}
	return 0;
}

/*
 * Scan target @tg: each mapping, its pages' state into a new chunk
 * array. The old chunks of pages no longer present are freed; after a
 * failure, those the scan did not reach are kept.
 */
static int np_tier_scan_target(struct numaplace_tier *t,
			       struct np_tier_target *tg)
{
	struct np_tier_scan sc = { .tg = tg };
	struct np_tier_vma *vmas = NULL;
	long i, nr;
	int ret = 0;

	nr = np_tier_read_vmas(tg->pid, &vmas);
	if (nr < 0)
		return nr;
	for (i = 0; i < nr && !ret; i++)
		ret = np_tier_scan_vma(t, &sc, vmas[i].start, vmas[i].end);
	free(vmas);
	if (ret) {
		while (sc.cursor < tg->chunks.nr && !np_tier_chunks_push(
			       &sc.next, tg->chunks.v[sc.cursor]))
			sc.cursor++;
	}
	np_tier_chunks_free(&tg->chunks, sc.cursor);
	tg->chunks = sc.next;
	return ret;
}

/*
 * The outcome of one move (@status: the node its page is on, -errno, or
 * NP_TIER_NOT_TRIED): counted, and its pages' states.
 */
static void np_tier_moved(struct numaplace_tier *t, struct np_tier_move *mv,
			  int status)
{
	struct numaplace_tier_period *out = t->out;
	bool ping_pong, third;
	unsigned int i;

	if (status == NP_TIER_NOT_TRIED)
		return;
	if (status != mv->to) {
		out->nr_failed += mv->nr;
		for (i = 0; i < mv->nr; i++)
			mv->st[i] = np_tier_page_failed(mv->st[i]);
		if (status == -ENOMEM)
			np_tier_spread_full(mv->promote ? &t->up : &t->down,
					    mv->to);
		return;
	}
	if (mv->promote)
		out->nr_promoted[mv->to] += mv->nr;
	else
		out->nr_demoted[mv->to] += mv->nr;
	if (t->p.flags & NUMAPLACE_TIER_DRY_RUN)
		return;
	for (i = 0; i < mv->nr; i++) {
		mv->st[i] = np_tier_page_moved(mv->st[i], &ping_pong, &third);
		out->nr_ping_pong += ping_pong;
		out->nr_moved_3 += third;
	}
}

/*
 * The moves the scan of @pid planned, NP_TIER_MOVE_BATCH a call. The
 * syscall (where libnumaplace hands the call to it) stops at a batch's
 * failure and leaves the later statuses unwritten: those are not tried,
 * neither moved nor failed.
 */
static int np_tier_move(struct numaplace_tier *t, int pid)
{
	void **pages = t->calls->move_pages;
	int *nodes = t->calls->move_nodes, *status = t->calls->move_status;
	size_t i, n, k;
	long ret;

	for (i = 0; i < t->nr_moves; i += n) {
		n = t->nr_moves - i;
		if (n > NP_TIER_MOVE_BATCH)
			n = NP_TIER_MOVE_BATCH;
		for (k = 0; k < n; k++) {
			pages[k] = (void *)(uintptr_t)t->moves[i + k].addr;
			nodes[k] = t->moves[i + k].to;
			status[k] = t->p.flags & NUMAPLACE_TIER_DRY_RUN ?
				    t->moves[i + k].to : NP_TIER_NOT_TRIED;
		}
		if (!(t->p.flags & NUMAPLACE_TIER_DRY_RUN)) {
			ret = numaplace_move_pages(pid, n, pages, nodes,
						   status, MPOL_MF_MOVE);
			if (ret < 0 && errno == ESRCH)
				return -ESRCH;
			if (ret < 0)
				for (k = 0; k < n; k++)
					if (status[k] == NP_TIER_NOT_TRIED)
						status[k] = -errno;
		}
		for (k = 0; k < n; k++)
			np_tier_moved(t, &t->moves[i + k], status[k]);
	}
	return 0;
}

/*
 * The step's view of the nodes: each fast node's room above its
 * watermark and what must leave it to get back to twice the watermark,
 * each slow node's room; the spreads over them.
 */
static void np_tier_read_nodes_room(struct numaplace_tier *t)
{
	__s64 room[NUMAPLACE_TIER_NODES] = { 0 };
	__u64 total, free, low;
	int node;

	for (node = 0; node < NUMAPLACE_TIER_NODES; node++) {
		t->need[node] = 0;
		if (!np_tier_isset(t->fast, node) &&
		    !np_tier_isset(t->slow, node))
			continue;
		/* A node gone offline (a CXL device removed) takes nothing. */
		if (np_tier_read_node_mem(node, t->page_size, &total, &free))
			continue;
		low = total * t->p.demote_free_pct / 100;
		room[node] = (__s64)free - (__s64)low;
		if (np_tier_isset(t->fast, node) && free < low)
			t->need[node] = 2 * low - free;
	}
	np_tier_spread_step(&t->up, room);
	np_tier_spread_step(&t->down, room);
}

/* One target's step: its nodes, its scan, its moves. -ESRCH: gone. */
static int np_tier_step_target(struct numaplace_tier *t,
			       struct np_tier_target *tg)
{
	struct numaplace_tier_period *out = t->out;
	__u64 t0, start_time, start_code;
	int ret;

	ret = np_tier_read_identity(tg->pid, &start_time, &start_code);
	/* Gone, or its pid now names another process. */
	if (ret == -ESRCH || (!ret && start_time != tg->start_time))
		return -ESRCH;
	if (ret) {
		out->nr_scan_failed++;
		out->scan_error = ret;
		return 0;
	}
	/* A new program: the old one's history says nothing of it. */
	if (start_code != tg->start_code) {
		np_tier_chunks_free(&tg->chunks, 0);
		tg->start_code = start_code;
	}
	t->nr_moves = 0;
	t0 = np_tier_ns();
	ret = np_tier_read_task_nodes(tg->pid, t->cpu_node, t->nr_cpus,
				      tg->mems, tg->local);
	if (!ret)
		ret = np_tier_scan_target(t, tg);
	out->scan_ns += np_tier_ns() - t0;
	if (ret == -ESRCH || ret == -ENOMEM)
		return ret;
	if (ret) {
		/* Refused or unreadable: it stays tracked, nothing moves. */
		out->nr_scan_failed++;
		out->scan_error = ret;
		return 0;
	}
	t0 = np_tier_ns();
	ret = np_tier_move(t, tg->pid);
	out->move_ns += np_tier_ns() - t0;
	return ret;
}

NP_EXPORT int numaplace_tier_step(struct numaplace_tier *t,
				  struct numaplace_tier_period *out)
{
	__u64 budget, need = 0, moved = 0;
	struct np_tier_chunks *c;
	size_t i;
	int node, ret;

	memset(out, 0, sizeof(*out));
	t->out = out;
	np_tier_read_nodes_room(t);
	for (node = 0; node < NUMAPLACE_TIER_NODES; node++)
		need += t->need[node];
	budget = np_tier_bucket_take(&t->bucket, np_tier_ns() / 1e9,
				     NP_TIER_MAX_MOVES);
	t->demote_budget = need < budget ? need : budget;
	t->promote_budget = budget - t->demote_budget;
	for (i = 0; i < t->nr_targets;) {
		ret = np_tier_step_target(t, &t->targets[i]);
		if (ret == -ESRCH) {
			np_tier_drop(t, &t->targets[i]);
			continue;
		}
		if (ret)
			return ret;
		i++;
	}
	for (node = 0; node < NUMAPLACE_TIER_NODES; node++)
		moved += out->nr_promoted[node] + out->nr_demoted[node];
	np_tier_bucket_give(&t->bucket, budget > moved ? budget - moved : 0);
	for (i = 0; i < t->nr_targets; i++) {
		c = &t->targets[i].chunks;
		out->nr_tracked += c->nr * NP_TIER_CHUNK_PAGES;
		out->state_bytes += c->nr * sizeof(struct np_tier_chunk) +
				    c->cap * sizeof(*c->v);
	}
	out->nr_targets = t->nr_targets;
	return 0;
}
