/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: what one MIGRATE call has answered, by address (seen.c), so
 * that a folio met again is not moved after its pages were answered.
 */
#ifndef _NUMAPLACE_SEEN_H
#define _NUMAPLACE_SEEN_H

#include <linux/xarray.h>

#include "numaplace.h"

enum np_seen_what {
	NP_SEEN_NONE = 0,
	NP_SEEN_ANSWERED,	/* a page's status is a node: the folio stays */
	NP_SEEN_PENDING,	/* an engine has a page in this pass */
};

/**
 * struct np_seen - the pages one MIGRATE call has met
 * @leaves: per 2 MiB of address space, its pages' bits (seen.c)
 * @idx: the index of @leaf (ULONG_MAX: none cached)
 * @leaf: the leaf last looked up, or NULL (none there)
 */
struct np_seen {
	struct xarray leaves;
	unsigned long idx;
	void *leaf;
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
