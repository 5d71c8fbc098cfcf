/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: what one MIGRATE call has answered, by address (seen.c), so
 * that a folio met again is not moved after its pages were answered.
 */
#ifndef _NUMAPLACE_SEEN_H
#define _NUMAPLACE_SEEN_H

#include <linux/pgtable.h>
#include <linux/xarray.h>

#include "numaplace.h"

enum np_seen_what {
	NP_SEEN_NONE = 0,
	NP_SEEN_ANSWERED,	/* a page's status is a node: the folio stays */
	NP_SEEN_PENDING,	/* an engine has a page in this pass */
};

/* A leaf covers what one PMD maps: the span of any THP, PMD-aligned. */
#define NP_SEEN_LEAF_SHIFT	PMD_SHIFT
#define NP_SEEN_LEAF_PAGES	(1UL << (NP_SEEN_LEAF_SHIFT - PAGE_SHIFT))

/* The pages of one 2 MiB of address space: two bits each. */
struct np_seen_leaf {
	DECLARE_BITMAP(answered, NP_SEEN_LEAF_PAGES);
	DECLARE_BITMAP(pending, NP_SEEN_LEAF_PAGES);
};

/**
 * struct np_seen - the pages one MIGRATE call has met
 * @leaves: per 2 MiB of address space (its index: address >>
 *	NP_SEEN_LEAF_SHIFT), the leaf of its pages, but for @first's
 * @first: the first leaf made, kept here (no allocation for it)
 * @first_idx: the index @first stands for (ULONG_MAX: free)
 * @idx: the index of @leaf (ULONG_MAX: none cached)
 * @leaf: the leaf last looked up, or NULL (none there)
 */
struct np_seen {
	struct xarray leaves;
	struct np_seen_leaf first;
	unsigned long first_idx;
	unsigned long idx;
	struct np_seen_leaf *leaf;
};

void np_seen_init(struct np_seen *s);
void np_seen_destroy(struct np_seen *s);
int np_seen_mark(struct np_seen *s, unsigned long addr, unsigned long nr,
		 enum np_seen_what what);
enum np_seen_what np_seen_span(struct np_seen *s, unsigned long lo,
			       unsigned long hi);
void np_seen_settle(struct np_seen *s, unsigned long addr, const s32 *status,
		    unsigned long nr);

#endif /* _NUMAPLACE_SEEN_H */
