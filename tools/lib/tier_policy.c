// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace tiering: the policy's pure parts, without I/O. A page's
 * history and class, the hysteresis, the spread of moves over the nodes
 * with room, and the rate limit. tier.c drives them; tests/tier_policy.c
 * checks them on the build host.
 */
#include "tier.h"

static __u16 np_tier_set_age(__u16 st, unsigned int age)
{
	if (age > NUMAPLACE_TIER_MAX_AGE)
		age = NUMAPLACE_TIER_MAX_AGE;
	return (st & ~NP_TIER_AGE_MASK) | (age << NP_TIER_AGE_SHIFT);
}

enum np_tier_class np_tier_page_class(__u16 st,
				      const struct numaplace_tier_params *p)
{
	unsigned int hist = st & NP_TIER_HIST_MASK;
	unsigned int hot_mask = (1U << p->history) - 1;
	unsigned int cold_mask = (1U << p->cold_scans) - 1;

	if (!(st & NP_TIER_SEEN))
		return NP_TIER_WARM;
	if ((unsigned int)__builtin_popcount(hist & hot_mask) >= p->hot_scans)
		return NP_TIER_HOT;
	if (np_tier_age(st) >= p->cold_scans && !(hist & cold_mask))
		return NP_TIER_COLD;
	return NP_TIER_WARM;
}

__u16 np_tier_page_scan(__u16 st, bool young,
			const struct numaplace_tier_params *p,
			enum np_tier_class *cls)
{
	unsigned int hist;

	if (!(st & NP_TIER_SEEN)) {
		*cls = NP_TIER_WARM;
		return NP_TIER_SEEN;
	}
	hist = ((st << 1) | young) & NP_TIER_HIST_MASK;
	st = np_tier_set_age((st & ~NP_TIER_HIST_MASK) | hist,
			     np_tier_age(st) + 1);
	*cls = np_tier_page_class(st, p);
	return st;
}

bool np_tier_page_held(__u16 st, unsigned int hold)
{
	if (!np_tier_moves(st) && !(st & NP_TIER_FAILED))
		return false;
	return np_tier_age(st) < hold;
}

__u16 np_tier_page_moved(__u16 st, bool *ping_pong, bool *third)
{
	unsigned int moves = np_tier_moves(st);

	*ping_pong = moves > 0;
	*third = moves == 2;
	if (moves < 3)
		moves++;
	st = (st & ~(NP_TIER_MOVES_MASK | NP_TIER_FAILED)) |
	     (moves << NP_TIER_MOVES_SHIFT);
	return np_tier_set_age(st, 0);
}

__u16 np_tier_page_failed(__u16 st)
{
	return np_tier_set_age(st | NP_TIER_FAILED, 0);
}

void np_tier_spread_init(struct np_tier_spread *s, unsigned int mode,
			 const __u64 *mask)
{
	int node;

	*s = (struct np_tier_spread){ .mode = mode };
	for (node = 0; node < NUMAPLACE_TIER_NODES; node++)
		if (np_tier_isset(mask, node))
			s->nodes[s->nr++] = node;
}

void np_tier_spread_step(struct np_tier_spread *s, const __s64 *room)
{
	unsigned int i;
	int node;

	for (i = 0; i < s->nr; i++) {
		node = s->nodes[i];
		s->room[node] = room[node] > 0 ? room[node] : 0;
		s->base[node] = s->room[node];
		s->given[node] = 0;
		s->recent[node] /= 2;
	}
}

static bool np_tier_spread_fits(const struct np_tier_spread *s, int node,
				const __u64 *allowed, __u64 nr_pages)
{
	return np_tier_isset(allowed, node) &&
	       s->room[node] >= (__s64)nr_pages;
}

/*
 * Round-robin in pages: the node given the fewest pages lately (@recent),
 * among those of @among (NULL: any) that fit; ties go in turn from the
 * cursor. A THP counts as its 512 pages, so nodes get equal memory, not
 * equal picks, within a step and across steps.
 */
static int np_tier_spread_next(struct np_tier_spread *s, const __u64 *allowed,
			       const __u64 *among, __u64 nr_pages)
{
	unsigned int i, idx, pick_idx = 0;
	int node, pick = -1;

	for (i = 0; i < s->nr; i++) {
		idx = (s->next + i) % s->nr;
		node = s->nodes[idx];
		if (among && !np_tier_isset(among, node))
			continue;
		if (!np_tier_spread_fits(s, node, allowed, nr_pages))
			continue;
		if (pick < 0 || s->recent[node] < s->recent[pick]) {
			pick = node;
			pick_idx = idx;
		}
	}
	if (pick >= 0)
		s->next = pick_idx + 1;
	return pick;
}

/*
 * The node whose share after these pages, given / base, is the least:
 * pages go to the nodes in proportion to the room they had.
 */
static int np_tier_spread_free(struct np_tier_spread *s, const __u64 *allowed,
			       __u64 nr_pages)
{
	double best = 0, share;
	int i, node, pick = -1;

	for (i = 0; i < (int)s->nr; i++) {
		node = s->nodes[i];
		if (!np_tier_spread_fits(s, node, allowed, nr_pages))
			continue;
		share = (double)(s->given[node] + nr_pages) / s->base[node];
		if (pick < 0 || share < best) {
			best = share;
			pick = node;
		}
	}
	return pick;
}

int np_tier_spread_pick(struct np_tier_spread *s, const __u64 *allowed,
			const __u64 *local, __u64 nr_pages)
{
	int node;

	switch (s->mode) {
	case NUMAPLACE_TIER_SPREAD_ROUND_ROBIN:
		node = np_tier_spread_next(s, allowed, NULL, nr_pages);
		break;
	case NUMAPLACE_TIER_SPREAD_LOCAL:
		node = np_tier_spread_next(s, allowed, local, nr_pages);
		if (node < 0)
			node = np_tier_spread_free(s, allowed, nr_pages);
		break;
	default:
		node = np_tier_spread_free(s, allowed, nr_pages);
		break;
	}
	if (node >= 0) {
		s->room[node] -= nr_pages;
		s->given[node] += nr_pages;
		s->recent[node] += nr_pages;
	}
	return node;
}

void np_tier_spread_full(struct np_tier_spread *s, int node)
{
	if (node >= 0 && node < NUMAPLACE_TIER_NODES)
		s->room[node] = 0;
}

void np_tier_bucket_init(struct np_tier_bucket *b, double pages_per_s)
{
	b->rate = pages_per_s;
	b->tokens = 0;
	b->last = -1;
}

__u64 np_tier_bucket_take(struct np_tier_bucket *b, double now, __u64 cap)
{
	double dt, burst;
	__u64 take;

	if (b->rate <= 0)
		return cap;
	/* The first call starts with a second's worth. */
	dt = b->last < 0 ? 1.0 : now - b->last;
	if (dt < 0)
		dt = 0;
	b->last = now;
	burst = b->rate * (dt > 1.0 ? dt : 1.0);
	b->tokens += b->rate * dt;
	if (b->tokens > burst)
		b->tokens = burst;
	take = (__u64)b->tokens;
	if (take > cap)
		take = cap;
	b->tokens -= take;
	return take;
}

void np_tier_bucket_give(struct np_tier_bucket *b, __u64 pages)
{
	if (b->rate > 0)
		b->tokens += pages;
}
