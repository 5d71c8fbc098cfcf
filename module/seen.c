// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: what one MIGRATE call has answered, by address. A folio is
 * met again when the call names another of its pages later (a THP that
 * straddles two rounds, the pages of a PER_PAGE run after a change of
 * target, a THP with a hole in it, the same page named twice). Moving it
 * then would make the answers its other pages got false: the status says
 * "the node the page is on when the call returns". So the call keeps, per
 * page it named, two bits: @answered, the page's status is a node (the
 * folio stays where it is for the rest of the call), and @pending, an
 * engine has the page in this pass (its answer comes at resolve). Collect
 * asks about a folio's whole span (np_seen_span()) before it hands the
 * folio on; one met again is not moved (module/collect.c).
 *
 * Which folios are recorded (module/collect.c, np_collect_recorded()):
 * only calls whose targets may differ from folio to folio (PER_PAGE,
 * INTERLEAVE); in range mode only large folios, as an order-0 page of a
 * range is named once; in array mode every folio (an address may be named
 * twice).
 *
 * Memory: a leaf per 2 MiB of address space (a page table's span) in
 * which the call answered a page with a node, 128 bytes, and the xarray's
 * node above it (up to 576 bytes where leaves lie far apart), charged to
 * the caller (NP_GFP_SEEN); the first leaf lives in the call's own state,
 * so a call within 2 MiB allocates none. A leaf is made when a page in it
 * is first marked; one left with no mark after its pass is dropped
 * (np_seen_settle()).
 */
#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/xarray.h>

#include "seen.h"

/*
 * A leaf is made under the page-table lock: no sleep, no reclaim, charged
 * to the caller as the call's other memory is (NP_GFP_CALL). Without one
 * (a full memcg, or no free memory at that moment) the folio is not moved
 * and its pages answer -ENOMEM, as when a destination cannot be had.
 */
#define NP_GFP_SEEN	(GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN)

void np_seen_init(struct np_seen *s)
{
	xa_init(&s->leaves);
	s->idx = ULONG_MAX;
	s->leaf = NULL;
	s->first_idx = ULONG_MAX;
}

void np_seen_destroy(struct np_seen *s)
{
	struct np_seen_leaf *leaf;
	unsigned long idx;

	xa_for_each(&s->leaves, idx, leaf)
		kfree(leaf);
	xa_destroy(&s->leaves);
	np_seen_init(s);
}

/* The leaf of index @idx, or NULL (none made). */
static struct np_seen_leaf *np_seen_find(struct np_seen *s, unsigned long idx)
{
	return idx == s->first_idx ? &s->first : xa_load(&s->leaves, idx);
}

/* The leaf of @addr, or NULL. One lookup per leaf met in a row. */
static struct np_seen_leaf *np_seen_leaf(struct np_seen *s, unsigned long addr)
{
	unsigned long idx = addr >> NP_SEEN_LEAF_SHIFT;

	if (idx != s->idx) {
		s->leaf = np_seen_find(s, idx);
		s->idx = idx;
	}
	return s->leaf;
}

/*
 * A new leaf for index @idx: the one in @s itself while it is free (a
 * call within 2 MiB allocates nothing), else a charged one in the
 * xarray. NULL: no memory.
 */
static struct np_seen_leaf *np_seen_make(struct np_seen *s, unsigned long idx)
{
	struct np_seen_leaf *leaf;

	if (s->first_idx == ULONG_MAX) {
		memset(&s->first, 0, sizeof(s->first));
		s->first_idx = idx;
		return &s->first;
	}
	leaf = kzalloc(sizeof(*leaf), NP_GFP_SEEN);
	if (leaf && xa_err(xa_store(&s->leaves, idx, leaf, NP_GFP_SEEN))) {
		kfree(leaf);
		leaf = NULL;
	}
	return leaf;
}

/* Drop the leaf of index @idx: it holds no mark. */
static void np_seen_drop(struct np_seen *s, unsigned long idx,
			 struct np_seen_leaf *leaf)
{
	if (leaf == &s->first) {
		s->first_idx = ULONG_MAX;
		return;
	}
	xa_erase(&s->leaves, idx);
	kfree(leaf);
}

static unsigned long np_seen_off(unsigned long addr)
{
	return (addr >> PAGE_SHIFT) & (NP_SEEN_LEAF_PAGES - 1);
}

/*
 * Mark @nr pages from @addr: answered with a node, or pending (@what).
 * Under the page-table lock: a leaf is made without sleeping.
 * Return: 0, or -ENOMEM (no memory for a leaf: nothing marked in it).
 */
int np_seen_mark(struct np_seen *s, unsigned long addr, unsigned long nr,
		 enum np_seen_what what)
{
	struct np_seen_leaf *leaf;
	unsigned long off, k;

	while (nr) {
		off = np_seen_off(addr);
		k = min(nr, NP_SEEN_LEAF_PAGES - off);
		leaf = np_seen_leaf(s, addr);
		if (!leaf) {
			leaf = np_seen_make(s, s->idx);
			if (!leaf)
				return -ENOMEM;
			s->leaf = leaf;
		}
		if (k == 1)	/* the usual: an order-0 folio */
			__set_bit(off, what == NP_SEEN_PENDING ? leaf->pending :
				  leaf->answered);
		else
			bitmap_set(what == NP_SEEN_PENDING ? leaf->pending :
				   leaf->answered, off, k);
		addr += k << PAGE_SHIFT;
		nr -= k;
	}
	return 0;
}

static enum np_seen_what np_seen_in_leaf(const struct np_seen_leaf *leaf,
					 unsigned long from, unsigned long to)
{
	if (to - from == 1)	/* an order-0 folio */
		return test_bit(from, leaf->pending) ? NP_SEEN_PENDING :
		       test_bit(from, leaf->answered) ? NP_SEEN_ANSWERED :
		       NP_SEEN_NONE;
	if (find_next_bit(leaf->pending, to, from) < to)
		return NP_SEEN_PENDING;
	if (find_next_bit(leaf->answered, to, from) < to)
		return NP_SEEN_ANSWERED;
	return NP_SEEN_NONE;
}

/*
 * Has the call met any page of [@lo, @hi) (a folio's span) before?
 * NP_SEEN_PENDING when an engine has one in this pass (the folio's
 * answers come at resolve), else NP_SEEN_ANSWERED when one's status is a
 * node (the folio stays), else NP_SEEN_NONE. A leaf a lookup: 512 of
 * them for a 1 GiB hugetlb page, one for any other folio but one that
 * crosses a 2 MiB boundary.
 */
enum np_seen_what np_seen_span(struct np_seen *s, unsigned long lo,
			       unsigned long hi)
{
	unsigned long first = lo >> NP_SEEN_LEAF_SHIFT;
	unsigned long last = (hi - 1) >> NP_SEEN_LEAF_SHIFT, idx, from, to;
	enum np_seen_what met = NP_SEEN_NONE, w;
	struct np_seen_leaf *leaf;

	for (idx = first; idx <= last; idx++) {
		leaf = np_seen_leaf(s, idx << NP_SEEN_LEAF_SHIFT);
		if (!leaf)
			continue;
		from = idx == first ? np_seen_off(lo) : 0;
		to = idx == last ? np_seen_off(hi - 1) + 1 : NP_SEEN_LEAF_PAGES;
		w = np_seen_in_leaf(leaf, from, to);
		if (w == NP_SEEN_PENDING)
			return w;
		if (w == NP_SEEN_ANSWERED)
			met = w;
	}
	return met;
}

/*
 * The end of a pass, with no lock held: of the @nr pages from @addr, whose
 * answers are @status, none is pending any more, and those answered with
 * a node are marked so where their leaf is (a page with no leaf was not
 * recorded: an order-0 page of a range, or its folio's other pages hold
 * the record). A leaf left with no mark is dropped: a hole, or pages that
 * failed, cost nothing after their pass.
 */
void np_seen_settle(struct np_seen *s, unsigned long addr, const s32 *status,
		    unsigned long nr)
{
	struct np_seen_leaf *leaf;
	unsigned long idx, off, k, j;

	for (; nr; addr += k << PAGE_SHIFT, status += k, nr -= k) {
		idx = addr >> NP_SEEN_LEAF_SHIFT;
		off = np_seen_off(addr);
		k = min(nr, NP_SEEN_LEAF_PAGES - off);
		leaf = np_seen_find(s, idx);
		if (!leaf)
			continue;
		bitmap_clear(leaf->pending, off, k);
		for (j = 0; j < k; j++)
			if (status[j] >= 0)
				__set_bit(off + j, leaf->answered);
		if (bitmap_empty(leaf->answered, NP_SEEN_LEAF_PAGES) &&
		    bitmap_empty(leaf->pending, NP_SEEN_LEAF_PAGES))
			np_seen_drop(s, idx, leaf);
	}
	s->idx = ULONG_MAX;
	s->leaf = NULL;
}
