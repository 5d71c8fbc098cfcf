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
 * Memory: a leaf per 2 MiB of address space (a page table's span) in
 * which the call answered a page with a node, 128 bytes, charged to the
 * caller (NP_GFP_SEEN): 1/16384 of what the call moves. A leaf is made
 * when a page in it is first marked; one left with no answer after its
 * pass is dropped (np_seen_settle()).
 */
#include <linux/bitmap.h>
#include <linux/mm.h>
#include <linux/xarray.h>

#include "seen.h"

/*
 * A leaf is made under the page-table lock: no sleep, no reclaim, charged
 * to the caller as the call's other memory (NP_GFP_CALL); failing, the
 * folio is not moved (-ENOMEM), as when its destination cannot be had.
 */
#define NP_GFP_SEEN	(GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN)

/* A leaf covers what one PMD maps: the span of any THP, PMD-aligned. */
#define NP_SEEN_LEAF_SHIFT	PMD_SHIFT
#define NP_SEEN_LEAF_PAGES	(1UL << (NP_SEEN_LEAF_SHIFT - PAGE_SHIFT))

struct np_seen_leaf {
	DECLARE_BITMAP(answered, NP_SEEN_LEAF_PAGES);
	DECLARE_BITMAP(pending, NP_SEEN_LEAF_PAGES);
};

void np_seen_init(struct np_seen *s)
{
	xa_init(&s->leaves);
	s->idx = ULONG_MAX;
	s->leaf = NULL;
}

void np_seen_destroy(struct np_seen *s)
{
	struct np_seen_leaf *leaf;
	unsigned long idx;

	xa_for_each(&s->leaves, idx, leaf)
		kfree(leaf);
	xa_destroy(&s->leaves);
	s->leaf = NULL;
	s->idx = ULONG_MAX;
}

/* The leaf of @addr, or NULL (none prepared). One lookup per leaf met. */
static struct np_seen_leaf *np_seen_leaf(struct np_seen *s, unsigned long addr)
{
	unsigned long idx = addr >> NP_SEEN_LEAF_SHIFT;

	if (idx != s->idx) {
		s->leaf = xa_load(&s->leaves, idx);
		s->idx = idx;
	}
	return s->leaf;
}

static unsigned long np_seen_off(unsigned long addr)
{
	return (addr >> PAGE_SHIFT) & (NP_SEEN_LEAF_PAGES - 1);
}

/*
 * Mark @nr pages from @addr: answered with a node, or pending (@what).
 * Under the page-table lock: a leaf is allocated without sleeping.
 * Return: 0, or -ENOMEM (the caller's memcg is full; nothing marked in the
 * leaf that could not be had).
 */
int np_seen_mark(struct np_seen *s, unsigned long addr, unsigned long nr,
		 enum np_seen_what what)
{
	struct np_seen_leaf *leaf;
	unsigned long off, k;
	int err;

	while (nr) {
		off = np_seen_off(addr);
		k = min(nr, NP_SEEN_LEAF_PAGES - off);
		leaf = np_seen_leaf(s, addr);
		if (!leaf) {
			leaf = kzalloc(sizeof(*leaf), NP_GFP_SEEN);
			if (!leaf)
				return -ENOMEM;
			err = xa_err(xa_store(&s->leaves, s->idx, leaf,
					      NP_GFP_SEEN));
			if (err) {
				kfree(leaf);
				return err;
			}
			s->leaf = leaf;
		}
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
 * node (the folio stays), else NP_SEEN_NONE.
 */
enum np_seen_what np_seen_span(struct np_seen *s, unsigned long lo,
			       unsigned long hi)
{
	unsigned long first = lo >> NP_SEEN_LEAF_SHIFT;
	unsigned long last = (hi - 1) >> NP_SEEN_LEAF_SHIFT, idx, from, to;
	enum np_seen_what met = NP_SEEN_NONE, w;
	struct np_seen_leaf *leaf;

	if (first == last) {	/* any folio but hugetlb: the cached leaf */
		leaf = np_seen_leaf(s, lo);
		return leaf ? np_seen_in_leaf(leaf, np_seen_off(lo),
					      np_seen_off(hi - 1) + 1) :
			      NP_SEEN_NONE;
	}
	for (idx = first; (leaf = xa_find(&s->leaves, &idx, last, XA_PRESENT));
	     idx++) {
		from = idx == first ? np_seen_off(lo) : 0;
		to = idx == last ? np_seen_off(hi - 1) + 1 : NP_SEEN_LEAF_PAGES;
		w = np_seen_in_leaf(leaf, from, to);
		if (w == NP_SEEN_PENDING)
			return w;
		if (w == NP_SEEN_ANSWERED)
			met = w;
		if (idx == last)
			break;
	}
	return met;
}

/*
 * The end of a pass, with no lock held: of the @nr pages from @addr, whose
 * answers are @status, none is pending any more, and those answered with
 * a node are marked so. A leaf left with no answer is dropped: a hole, or
 * pages that failed, cost nothing after their pass.
 */
void np_seen_settle(struct np_seen *s, unsigned long addr, const s32 *status,
		    unsigned long nr)
{
	struct np_seen_leaf *leaf;
	unsigned long off, k, j;

	for (; nr; addr += k << PAGE_SHIFT, status += k, nr -= k) {
		off = np_seen_off(addr);
		k = min(nr, NP_SEEN_LEAF_PAGES - off);
		leaf = xa_load(&s->leaves, addr >> NP_SEEN_LEAF_SHIFT);
		if (!leaf)
			continue;	/* nothing marked there */
		bitmap_clear(leaf->pending, off, k);
		for (j = 0; j < k; j++)
			if (status[j] >= 0)
				__set_bit(off + j, leaf->answered);
		if (!bitmap_empty(leaf->answered, NP_SEEN_LEAF_PAGES) ||
		    !bitmap_empty(leaf->pending, NP_SEEN_LEAF_PAGES))
			continue;
		xa_erase(&s->leaves, addr >> NP_SEEN_LEAF_SHIFT);
		kfree(leaf);
	}
	s->idx = ULONG_MAX;
	s->leaf = NULL;
}
