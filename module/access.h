/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: the access scan. The walker (walk.c) reads each present
 * entry's accessed (young) and dirty bits into its run's kind, and with
 * NUMAPLACE_QUERY_CLEAR_ACCESS clears the young bits here, under the
 * entry's page-table lock, as the kernel's own aging does (DAMON's
 * damon_ptep_mkold(), mm/damon/ops-common.c): the CPU's bit, the
 * secondary MMUs' (mmu notifier clear_young), and the folio's young flag
 * set for reclaim. One TLB flush of what was cleared ends the call when
 * asked (NUMAPLACE_QUERY_FLUSH_TLB).
 */
#ifndef _NUMAPLACE_ACCESS_H
#define _NUMAPLACE_ACCESS_H

#include <linux/mm_types.h>

struct np_walk;

/**
 * struct np_access - one call's access scan
 * @clear: test-and-clear the young bits it reads
 * @flush: flush the TLB of [@flush_start, @flush_end) at the end
 * @flush_start: first address whose CPU young bit was cleared
 * @flush_end: end of the last one (0: none cleared)
 * @nr_cleared: pages whose young bit (the CPU's or a secondary MMU's) the
 *	call cleared and did not set again; a PMD or PUD leaf counts its
 *	pages. Added to the counters by np_access_end().
 */
struct np_access {
	bool clear;
	bool flush;
	unsigned long flush_start;
	unsigned long flush_end;
	u64 nr_cleared;
};

u64 np_access_features(void);
int np_access_begin(struct np_access *a, struct mm_struct *mm, u32 flags);
void np_access_end(struct np_access *a, struct mm_struct *mm);
u32 np_access_pte(struct np_walk *w, pte_t *ptep, pte_t pte,
		  unsigned long addr, unsigned long pfn);
void np_access_clear_ptes(struct np_walk *w, pte_t *ptep, unsigned long addr,
			  unsigned long n);
u32 np_access_leaf(struct np_walk *w, void *leafp, unsigned long addr,
		   unsigned long size, unsigned long pfn, bool whole);
struct np_run;
void np_access_unreport(struct np_walk *w, const struct np_run *run,
			unsigned long taken);

#endif /* _NUMAPLACE_ACCESS_H */
