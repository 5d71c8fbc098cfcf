/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: the run walker. It turns a virtual range of one mm into runs:
 * maximal stretches of consecutive pages with the same answer (node or
 * errno, as move_pages(2) gives it) and the same kind. Every page-table
 * locking rule of every supported kernel lives in walk.c.
 */
#ifndef _NUMAPLACE_WALK_H
#define _NUMAPLACE_WALK_H

#include <linux/mm_types.h>

#include "numaplace.h"
#include "access.h"

/**
 * struct np_run - pages with one answer
 * @start: address of the first page
 * @nr_pages: number of base pages
 * @pfn: pfn of the first page when NUMAPLACE_KIND_PRESENT, else 0
 * @status: node id, or -ENOENT / -EFAULT as move_pages(2) answers
 * @kind: NUMAPLACE_KIND_* flags
 * @entryp: a clearing access scan's: the page table entry of @start
 *	(PTE, PMD or PUD), valid while the run's lock is held
 */
struct np_run {
	unsigned long start;
	unsigned long nr_pages;
	unsigned long pfn;
	int status;
	u32 kind;
	void *entryp;
};

struct np_walk;

/*
 * The consumer of runs. Returns how many of @run's pages it took; fewer
 * than @run->nr_pages stops the walk there. Called with the mmap lock,
 * RCU and possibly a page-table spinlock held: it must not sleep or touch
 * user memory.
 */
typedef unsigned long (*np_walk_emit_fn)(struct np_walk *w,
					 const struct np_run *run);

/* np_walk.flags */
#define NP_WALK_LEGACY		BIT(0)	/* answer as 6.1's follow_page() */
#define NP_WALK_PFN_CONTIG	BIT(1)	/* split runs where pfns jump */
/*
 * Present runs are emitted with their page table's lock held (PTE lock,
 * or the PMD/PUD lock of a leaf), so the consumer may take references or
 * isolate the folios it sees: runs end at every table and leaf.
 */
#define NP_WALK_LOCKED		BIT(2)

/**
 * struct np_walk - one walk over one mm; the consumer embeds it
 * @mm: the mm, with a reference held by the caller
 * @flags: NP_WALK_*
 * @emit: the consumer
 * @budget: pages the walk may still visit before it stops (bounds how long
 *	the mmap lock is held); the caller refills it per np_walk_begin()
 * @next: out, the first address not handed to @emit
 * @access: with an access scan, present runs' kinds also say YOUNG and
 *	DIRTY (runs split where they change). A clearing scan is walked as
 *	NP_WALK_LOCKED: a young bit is cleared when its page is visited,
 *	and set again for every page the consumer did not take (the walk
 *	stopped first), so that no access is cleared unreported.
 */
struct np_walk {
	struct mm_struct *mm;
	unsigned int flags;
	np_walk_emit_fn emit;
	unsigned long budget;
	unsigned long next;
	/* private to walk.c, but @vma may be read by @emit */
	struct vm_area_struct *vma;	/* VMA of the run being emitted, or NULL */
	struct np_run cur;		/* pending run, not yet emitted */
	u32 vma_kind;			/* ANON/FILE/HUGETLB of the current VMA */
	int hole_status;		/* answer for nothing mapped in that VMA */
	bool stopped;
	struct np_nodemap_cache nm;
	/* set by the consumer: the access scan (access.h), or NULL */
	struct np_access *access;
	void *entryp;			/* the entry of the page being added */
};

int np_walk_begin(struct np_walk *w);
void np_walk_begin_owed(struct np_walk *w);
bool np_walk_range(struct np_walk *w, unsigned long start, unsigned long end);
void np_walk_end(struct np_walk *w);
pte_t *np_pte_table_lock(struct mm_struct *mm, pmd_t *pmdp,
			 unsigned long addr, spinlock_t **ptlp);

#endif /* _NUMAPLACE_WALK_H */
