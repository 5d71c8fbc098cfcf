// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the run walker.
 *
 * Locking, for both supported kernels:
 *  - np_walk_begin() takes the mmap lock for read (killable) and RCU. The
 *    mmap lock keeps VMAs and the upper page-table levels (PUD and PMD
 *    tables are freed only under the mmap write lock, free_pgtables()).
 *  - A PTE table is not kept alive by the mmap lock on 6.12: khugepaged's
 *    retract_page_tables() and MADV_COLLAPSE clear the PMD and free the
 *    table with pte_free_defer(), an RCU callback. So, as the kernel's own
 *    __pte_offset_map_lock() (unexported) does: read the PMD once, reject
 *    none/leaf/bad values, map the PTE table from that snapshot, take its
 *    lock and check that the PMD still holds the same value, else retry.
 *    RCU keeps the table's memory valid between the read and the lock. On
 *    6.1 the same sequence is correct (the table cannot go at all).
 *  - PMD and PUD leaves (THP, hugetlb) are read once, without their lock:
 *    the answer is a snapshot, as the syscall's is the moment it returns,
 *    and the pfn -> node map needs no struct page (nodemap.c).
 * Only inline accessors and exported symbols are used: no internals.
 */
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/rcupdate_wait.h> /* cond_resched_rcu() on 6.12 */
#include <linux/swap.h>
#include <linux/swapops.h>

#include "walk.h"
#include "compat.h"

/* Hand the pending run to the consumer. false: stop (w->next is set). */
static bool np_walk_flush(struct np_walk *w)
{
	unsigned long taken;

	if (!w->cur.nr_pages)
		return true;
	taken = w->emit(w, &w->cur);
	w->next = w->cur.start + (taken << PAGE_SHIFT);
	if (taken < w->cur.nr_pages) {
		if (w->access)
			np_access_unreport(w, &w->cur, taken);
		w->stopped = true;
		w->cur.nr_pages = 0;
		return false;
	}
	w->cur.nr_pages = 0;
	return true;
}

/* Add @nr pages at @addr to the pending run, or start a new one. */
static __always_inline bool np_walk_add(struct np_walk *w, unsigned long addr,
					unsigned long nr, unsigned long pfn,
					int status, u32 kind)
{
	struct np_run *cur = &w->cur;

	if (cur->nr_pages && cur->status == status && cur->kind == kind &&
	    cur->start + (cur->nr_pages << PAGE_SHIFT) == addr &&
	    (!(w->flags & NP_WALK_PFN_CONTIG) ||
	     cur->pfn + cur->nr_pages == pfn)) {
		cur->nr_pages += nr;
		return true;
	}
	if (!np_walk_flush(w)) {
		if (w->access)
			np_access_unreport(w, &(struct np_run){ .start = addr,
				.nr_pages = nr, .kind = kind,
				.entryp = w->entryp }, 0);
		return false;
	}
	cur->start = addr;
	cur->nr_pages = nr;
	cur->pfn = pfn;
	cur->status = status;
	cur->kind = kind;
	cur->entryp = w->entryp;
	return true;
}

static bool np_walk_hole(struct np_walk *w, unsigned long addr,
			 unsigned long end)
{
	return np_walk_add(w, addr, (end - addr) >> PAGE_SHIFT, 0,
			   w->hole_status, w->vma_kind | NUMAPLACE_KIND_NONE);
}

/* Status for a present pfn that no special bit excluded. */
static int np_walk_pfn_status(struct np_walk *w, unsigned long pfn, u32 *kind)
{
	int nid = np_pfn_to_nid(&w->nm, pfn);

	if (likely(nid >= 0))
		return nid;
	*kind = (*kind & ~NUMAPLACE_KIND_PRESENT) | NUMAPLACE_KIND_SPECIAL;
	if (nid == NP_NID_DEVICE)
		return -ENOENT;
	/* No struct page (vm_normal_page()'s pfn sanity test): special. */
	return w->flags & NP_WALK_LEGACY ? -EFAULT : -ENOENT;
}

/* A non-present, non-none entry: swap, migration, marker, poison. */
static u32 np_walk_swap_kind(np_leaf_t entry)
{
	if (np_leaf_is_migration(entry))
		return NUMAPLACE_KIND_MIGRATION;
	if (np_leaf_is_swap(entry))
		return NUMAPLACE_KIND_SWAP;
	return NUMAPLACE_KIND_OTHER;
}

/* The slow cases of one PTE: everything but a plain present page. */
static int np_walk_pte_slow(struct np_walk *w, pte_t pte, unsigned long *pfn,
			    u32 *kind)
{
	bool legacy = w->flags & NP_WALK_LEGACY;
	int status;

	*pfn = 0;
	*kind = w->vma_kind;
	if (pte_none(pte)) {
		*kind |= NUMAPLACE_KIND_NONE;
		return w->hole_status;
	}
	if (!pte_present(pte)) {
		*kind |= np_walk_swap_kind(np_leaf_from_pte(pte));
		return -ENOENT;
	}
	if (pte_special(pte) || np_pte_devmap(pte)) {
		if (is_zero_pfn(pte_pfn(pte))) {
			*kind |= NUMAPLACE_KIND_ZERO;
			status = -EFAULT;
		} else {
			*kind |= NUMAPLACE_KIND_SPECIAL;
			/* 6.1: devmap pages were found, then zone-device. */
			status = legacy && !np_pte_devmap(pte) ? -EFAULT : -ENOENT;
		}
	} else {
		*kind |= NUMAPLACE_KIND_PRESENT;
		*pfn = pte_pfn(pte);
		status = np_walk_pfn_status(w, *pfn, kind);
	}
	if (pte_protnone(pte)) {
		*kind |= NUMAPLACE_KIND_PROTNONE;
		/* 6.1's follow_page_pte() tests PROT_NONE first: no page. */
		if (legacy) {
			*kind &= ~NUMAPLACE_KIND_PRESENT;
			*pfn = 0;
			status = -ENOENT;
		}
	}
	return status;
}

/* A present PTE of a page with a struct page and no special bit. */
static __always_inline bool np_pte_plain(pte_t pte)
{
	return pte_present(pte) && !pte_special(pte) && !pte_protnone(pte) &&
	       !np_pte_devmap(pte);
}

/* One PTE's answer: its status, its pfn and kind into *@pfn and *@kind. */
static __always_inline int np_walk_pte_answer(struct np_walk *w, pte_t pte,
					      unsigned long *pfn, u32 *kind)
{
	if (likely(np_pte_plain(pte))) {
		*kind = w->vma_kind | NUMAPLACE_KIND_PRESENT;
		*pfn = pte_pfn(pte);
		return np_walk_pfn_status(w, *pfn, kind);
	}
	return np_walk_pte_slow(w, pte, pfn, kind);
}

/*
 * How many of the @max PTEs at @ptep are plain pages inside the pfn span
 * [@lo, @lo + @len): the hot loop, one load an entry, state in registers.
 */
static __always_inline unsigned long np_walk_scan(const pte_t *ptep,
						  unsigned long max,
						  unsigned long lo,
						  unsigned long len)
{
	const pteval_t pfn_mask = PTE_PFN_MASK;
	unsigned long n;

	if (np_native_pgtables()) {
		for (n = 0; n < max; n++) {
			pteval_t v = READ_ONCE(ptep[n].pte);

			if ((v & NP_PTE_PLAIN_MASK) != _PAGE_PRESENT ||
			    ((v & pfn_mask) >> PAGE_SHIFT) - lo >= len)
				break;
		}
		return n;
	}
	for (n = 0; n < max; n++) {
		pte_t pte = ptep_get((pte_t *)ptep + n);

		if (!np_pte_plain(pte) || pte_pfn(pte) - lo >= len)
			break;
	}
	return n;
}

/*
 * The pending run can swallow plain pages at @addr on the cached node
 * span without a look at each one's answer.
 */
static __always_inline bool np_walk_extends(const struct np_walk *w,
					    unsigned long addr, u32 present)
{
	const struct np_run *cur = &w->cur;

	return cur->nr_pages && cur->status == w->nm.span.nid &&
	       cur->kind == present && !(w->flags & NP_WALK_PFN_CONTIG) &&
	       !w->access &&
	       cur->start + (cur->nr_pages << PAGE_SHIFT) == addr;
}

/*
 * The access scan's hot loop: how many of the @max PTEs at @ptep are
 * plain pages inside the pfn span [@lo, @lo + @len) with the access bits
 * @bits (young, dirty) of the page before them.
 */
static __always_inline unsigned long np_walk_scan_access(const pte_t *ptep,
							 unsigned long max,
							 unsigned long lo,
							 unsigned long len,
							 pteval_t bits)
{
	const pteval_t mask = NP_PTE_PLAIN_MASK | NP_PTE_ACCESS_MASK;
	const pteval_t want = _PAGE_PRESENT | bits;
	unsigned long n;

	for (n = 0; n < max; n++) {
		pteval_t v = READ_ONCE(ptep[n].pte);

		if ((v & mask) != want ||
		    ((v & PTE_PFN_MASK) >> PAGE_SHIFT) - lo >= len)
			break;
	}
	return n;
}

/*
 * After a plain page at @ptep - 1 added to the pending run: the pages
 * after it with the same answer and access bits join the run at once.
 * A clear with mmu notifiers asks each page's secondary MMUs, whose
 * answers may differ: no shortcut there. Return: the pages taken.
 */
static unsigned long np_walk_access_more(struct np_walk *w, pte_t *ptep,
					 unsigned long addr, unsigned long max,
					 pte_t first)
{
	pteval_t bits = pte_val(first) & NP_PTE_ACCESS_MASK;
	unsigned long n;

	if (!np_native_pgtables() || w->cur.status != w->nm.span.nid ||
	    (w->flags & NP_WALK_PFN_CONTIG) ||
	    (w->access->clear && mm_has_notifiers(w->mm)))
		return 0;
	n = np_walk_scan_access(ptep, max, w->nm.span.start,
				w->nm.span.end - w->nm.span.start, bits);
	if (n && w->access->clear && (bits & _PAGE_ACCESSED))
		np_access_clear_ptes(w, ptep, addr, n);
	w->cur.nr_pages += n;
	return n;
}

/*
 * np_walk_ptes() for an access scan: every entry's young and dirty bits
 * in its kind (np_access_pte() clears young ones when asked).
 */
static void np_walk_ptes_access(struct np_walk *w, pte_t *ptep,
				unsigned long addr, unsigned long end)
{
	unsigned long pfn;
	int status;
	u32 kind;

	while (addr != end) {
		pte_t pte = ptep_get(ptep);
		bool plain;

		status = np_walk_pte_answer(w, pte, &pfn, &kind);
		/*
		 * A page with a struct page; no NUMA-hinting entry's bits.
		 * Only a plain PTE answers so (np_walk_pte_slow()).
		 */
		plain = (kind & (NUMAPLACE_KIND_PRESENT | NUMAPLACE_KIND_PROTNONE)) ==
			NUMAPLACE_KIND_PRESENT;
		if (plain)
			kind |= np_access_pte(w, ptep, pte, addr, pfn);
		w->entryp = ptep;
		if (!np_walk_add(w, addr, 1, pfn, status, kind))
			return;
		ptep++;
		addr += PAGE_SIZE;
		if (plain && addr != end) {
			unsigned long n = np_walk_access_more(w, ptep, addr,
							      (end - addr) >> PAGE_SHIFT,
							      pte);

			ptep += n;
			addr += n << PAGE_SHIFT;
		}
	}
}

static void np_walk_ptes(struct np_walk *w, pte_t *ptep, unsigned long addr,
			 unsigned long end)
{
	u32 present = w->vma_kind | NUMAPLACE_KIND_PRESENT, kind;
	unsigned long nr = (end - addr) >> PAGE_SHIFT, i = 0, n, pfn;
	int status;

	if (w->access)
		return np_walk_ptes_access(w, ptep, addr, end);
	while (i < nr) {
		if (np_walk_extends(w, addr + (i << PAGE_SHIFT), present)) {
			n = np_walk_scan(ptep + i, nr - i, w->nm.span.start,
					 w->nm.span.end - w->nm.span.start);
			w->cur.nr_pages += n;
			i += n;
			if (i == nr)
				break;
		}
		status = np_walk_pte_answer(w, ptep_get(ptep + i), &pfn, &kind);
		if (!np_walk_add(w, addr + (i << PAGE_SHIFT), 1, pfn, status,
				 kind))
			return;
		i++;
	}
}

/*
 * Lock the PTE table of @pmdval, read from *@pmdp: the lock, or NULL when
 * the PMD changed before it was taken (read it again).
 */
static spinlock_t *np_pte_lock_same(struct mm_struct *mm, pmd_t *pmdp,
				    pmd_t pmdval)
{
	spinlock_t *ptl = pte_lockptr(mm, &pmdval);

	spin_lock(ptl);
	if (unlikely(!pmd_same(pmdval, np_pmdp_get(pmdp)))) {
		spin_unlock(ptl);
		return NULL;
	}
	return ptl;
}

/**
 * np_pte_table_lock - __pte_offset_map_lock(), for the other engines
 * @mm: the mm, its mmap lock held
 * @pmdp: the PMD entry covering @addr
 * @addr: an address in the table
 * @ptlp: out, the table's lock, held on success
 *
 * Called under RCU (which keeps a table freed with pte_free_defer() valid
 * until the PMD is seen again under the lock). Return: the PTE of @addr,
 * or NULL when the PMD maps no PTE table (none, bad, a leaf or an entry).
 */
pte_t *np_pte_table_lock(struct mm_struct *mm, pmd_t *pmdp,
			 unsigned long addr, spinlock_t **ptlp)
{
	pmd_t pmd;

	do {
		pmd = np_pmdp_get(pmdp);
		if (pmd_none(pmd) || !pmd_present(pmd) || pmd_leaf(pmd) ||
		    np_pmd_devmap(pmd) || pmd_bad(pmd))
			return NULL;
		*ptlp = np_pte_lock_same(mm, pmdp, pmd);
	} while (!*ptlp);
	return pte_offset_kernel(&pmd, addr);
}

/*
 * Lock the PTE table behind *@pmdp as __pte_offset_map_lock() does.
 * Return: false when the PMD changed before the lock was taken: the
 * caller reads it again. A stop inside the table is w->stopped.
 */
static bool np_walk_pte_table(struct np_walk *w, pmd_t *pmdp, pmd_t pmdval,
			      unsigned long addr, unsigned long end)
{
	spinlock_t *ptl = np_pte_lock_same(w->mm, pmdp, pmdval);

	if (!ptl)
		return false;
	np_walk_ptes(w, pte_offset_kernel(&pmdval, addr), addr, end);
	if ((w->flags & NP_WALK_LOCKED) && !w->stopped)
		np_walk_flush(w);
	spin_unlock(ptl);
	return true;
}

/*
 * Only the huge zero page is PMD-mapped in an anonymous VMA without being
 * anon (do_huge_pmd_anonymous_page()), so no need for the unexported
 * huge_zero_pfn. It is never mapped writable: a writable PMD needs no look
 * at struct page.
 */
static bool np_walk_huge_zero(struct np_walk *w, bool writable,
			      unsigned long pfn)
{
	return (w->vma_kind & NUMAPLACE_KIND_ANON) && !writable &&
	       pfn_valid(pfn) && !PageAnon(pfn_to_page(pfn));
}

/*
 * The leaf of a PMD or PUD: a THP, a hugetlb page, a huge PFN map.
 * @leafp: the entry, for an access scan (its lock held to clear).
 */
static bool np_walk_leaf(struct np_walk *w, void *leafp, unsigned long addr,
			 unsigned long end, unsigned long pfn, bool protnone,
			 bool special, bool writable, u32 level)
{
	unsigned long size = level == NUMAPLACE_KIND_PUD ? PUD_SIZE : PMD_SIZE;
	unsigned long head = pfn;
	bool legacy = w->flags & NP_WALK_LEGACY;
	u32 kind = w->vma_kind | level;
	int status;

	pfn += (addr & (size - 1)) >> PAGE_SHIFT;
	if (protnone)
		kind |= NUMAPLACE_KIND_PROTNONE;
	if (w->vma_kind & NUMAPLACE_KIND_HUGETLB) {
		/* Both kernels follow hugetlb entries, PROT_NONE or not. */
		kind |= NUMAPLACE_KIND_PRESENT;
		status = np_walk_pfn_status(w, pfn, &kind);
	} else {
		/*
		 * The huge zero page first: 7.3 maps it special
		 * (mm/huge_memory.c set_huge_zero_folio(): pmd_mkspecial(),
		 * not so on 6.12); no other special PMD is in an anonymous
		 * VMA.
		 */
		if (np_walk_huge_zero(w, writable, pfn)) {
			kind |= NUMAPLACE_KIND_ZERO;
			status = -EFAULT;
		} else if (special) {
			kind |= NUMAPLACE_KIND_SPECIAL;
			status = -ENOENT;
		} else {
			kind |= NUMAPLACE_KIND_PRESENT;
			status = np_walk_pfn_status(w, pfn, &kind);
		}
		/* 6.1's follow_pmd_mask() takes a PROT_NONE PMD for a hole. */
		if (protnone && legacy) {
			kind &= ~NUMAPLACE_KIND_PRESENT;
			status = w->hole_status;
		}
	}
	/* A page with a struct page; no NUMA-hinting entry's bits. */
	if (w->access && (kind & (NUMAPLACE_KIND_PRESENT | NUMAPLACE_KIND_PROTNONE)) ==
			 NUMAPLACE_KIND_PRESENT)
		kind |= np_access_leaf(w, leafp, addr & ~(size - 1), size, head,
				       !(addr & (size - 1)) && end - addr == size);
	w->entryp = leafp;
	return np_walk_add(w, addr, (end - addr) >> PAGE_SHIFT,
			   kind & NUMAPLACE_KIND_PRESENT ? pfn : 0, status, kind);
}

/* A non-present PMD or PUD that is not none: migration, hwpoison. */
static bool np_walk_leaf_entry(struct np_walk *w, unsigned long addr,
			       unsigned long end, np_leaf_t entry)
{
	u32 kind = w->vma_kind | np_walk_swap_kind(entry);
	int status = -ENOENT;

	/* 6.1: follow_pmd_mask() takes it for a hole (hugetlb: waits). */
	if ((w->flags & NP_WALK_LEGACY) &&
	    !(w->vma_kind & NUMAPLACE_KIND_HUGETLB))
		status = w->hole_status;
	return np_walk_add(w, addr, (end - addr) >> PAGE_SHIFT, 0, status, kind);
}

/* A PMD-mapped page whose answer is its node: THP or hugetlb, no flags. */
static __always_inline bool np_pmd_plain(const struct np_walk *w, pmd_t pmd)
{
	return pmd_present(pmd) && pmd_leaf(pmd) && !np_pmd_devmap(pmd) &&
	       !np_pmd_special(pmd) && !pmd_protnone(pmd) &&
	       (pmd_write(pmd) || (w->vma_kind & NUMAPLACE_KIND_HUGETLB));
}

/*
 * The PMD counterpart of np_walk_scan(): how many of the @max whole PMDs
 * at @pmdp map plain huge pages inside the cached node span.
 */
static unsigned long np_walk_scan_pmds(const struct np_walk *w,
				       const pmd_t *pmdp, unsigned long max)
{
	const pmdval_t pfn_mask = PHYSICAL_PMD_PAGE_MASK; /* a PSE leaf */
	unsigned long lo = w->nm.span.start;
	unsigned long len = w->nm.span.end - lo;
	unsigned long n;

	if (np_native_pgtables() && !(w->vma_kind & NUMAPLACE_KIND_HUGETLB)) {
		for (n = 0; n < max; n++) {
			pmdval_t v = READ_ONCE(pmdp[n].pmd);

			if ((v & NP_PMD_PLAIN_MASK) != NP_PMD_PLAIN ||
			    ((v & pfn_mask) >> PAGE_SHIFT) - lo >= len)
				break;
		}
		return n;
	}
	for (n = 0; n < max; n++) {
		pmd_t pmd = np_pmdp_get(pmdp + n);

		if (!np_pmd_plain(w, pmd) || pmd_pfn(pmd) - lo >= len)
			break;
	}
	return n;
}

/* Stop for the budget: the caller drops the locks and comes back. */
static bool np_walk_budget_stop(struct np_walk *w, unsigned long addr)
{
	if (np_walk_flush(w)) {
		w->next = addr;
		w->stopped = true;
	}
	return false;
}

/*
 * A PMD leaf must be read under its lock when a consumer takes references
 * (NP_WALK_LOCKED), for an access scan (its pfn and its bits one value,
 * and to clear them), and before struct page is read for it: a read-only
 * PMD in an anonymous VMA may be the huge zero page, told apart by
 * PageAnon(), which is only meaningful while the page stays mapped.
 */
static bool np_walk_leaf_needs_lock(const struct np_walk *w, pmd_t pmd)
{
	return (w->flags & NP_WALK_LOCKED) || w->access ||
	       ((w->vma_kind & NUMAPLACE_KIND_ANON) && !pmd_write(pmd));
}

static bool np_walk_pmd_leaf(struct np_walk *w, pmd_t *pmdp, pmd_t pmd,
			     unsigned long addr, unsigned long next)
{
	return np_walk_leaf(w, pmdp, addr, next, pmd_pfn(pmd), pmd_protnone(pmd),
			    np_pmd_devmap(pmd) || np_pmd_special(pmd),
			    pmd_write(pmd), NUMAPLACE_KIND_PMD);
}

static bool np_walk_pmd(struct np_walk *w, pmd_t *pmdp, unsigned long addr,
			unsigned long next)
{
	spinlock_t *ptl;
	bool ok;
	pmd_t pmd;

again:
	pmd = np_pmdp_get(pmdp);
	if (pmd_none(pmd) ||
	    (pmd_present(pmd) && !pmd_leaf(pmd) && pmd_bad(pmd)))
		return np_walk_hole(w, addr, next);
	if (!pmd_present(pmd))
		return np_walk_leaf_entry(w, addr, next, np_leaf_from_pmd(pmd));
	if (pmd_leaf(pmd) || np_pmd_devmap(pmd)) {
		if (!np_walk_leaf_needs_lock(w, pmd))
			return np_walk_pmd_leaf(w, pmdp, pmd, addr, next);
		ptl = pmd_lock(w->mm, pmdp);
		if (!pmd_same(pmd, np_pmdp_get(pmdp))) {
			spin_unlock(ptl);
			goto again;
		}
		ok = np_walk_pmd_leaf(w, pmdp, pmd, addr, next) &&
		     (!(w->flags & NP_WALK_LOCKED) || np_walk_flush(w));
		spin_unlock(ptl);
		return ok;
	}
	/* hugetlb maps no PTE table: a non-leaf there is not ours to follow. */
	if (w->vma_kind & NUMAPLACE_KIND_HUGETLB)
		return np_walk_hole(w, addr, next);
	if (!np_walk_pte_table(w, pmdp, pmd, addr, next)) {
		cond_resched_rcu();
		goto again;
	}
	return !w->stopped;
}

static bool np_walk_pmds(struct np_walk *w, pud_t *pudp, unsigned long addr,
			 unsigned long end)
{
	u32 huge = w->vma_kind | NUMAPLACE_KIND_PRESENT | NUMAPLACE_KIND_PMD;
	pmd_t *pmdp = pmd_offset(pudp, addr);
	unsigned long next, n;

	while (addr != end) {
		if (!(addr & ~PMD_MASK) && np_walk_extends(w, addr, huge)) {
			n = np_walk_scan_pmds(w, pmdp,
					      min((end - addr) >> PMD_SHIFT,
						  w->budget / PTRS_PER_PTE));
			w->cur.nr_pages += n * PTRS_PER_PTE;
			w->budget -= n * PTRS_PER_PTE;
			pmdp += n;
			addr += n << PMD_SHIFT;
			if (addr == end)
				break;
		}
		if (w->budget < PTRS_PER_PTE)
			return np_walk_budget_stop(w, addr);
		w->budget -= PTRS_PER_PTE;
		next = pmd_addr_end(addr, end);
		if (!np_walk_pmd(w, pmdp, addr, next))
			return false;
		pmdp++;
		addr = next;
	}
	return true;
}

/*
 * x86's pud_present() tests _PAGE_PRESENT only: a PROT_NONE 1 GiB hugetlb
 * leaf (PSE | PROTNONE) is not "present" and is no swap entry either.
 */
static bool np_pud_protnone_leaf(pud_t pud)
{
	return (pud_val(pud) & (_PAGE_PRESENT | _PAGE_PSE | _PAGE_PROTNONE)) ==
	       (_PAGE_PSE | _PAGE_PROTNONE);
}

/*
 * 6.12's folio_walk tests pud_present() and finds nothing (-ENOENT); 6.1's
 * follow_huge_pud() follows any hugetlb leaf to its node. A locked walk
 * (collect) emits such a leaf under its pud_lock() and re-reads it there,
 * as any other PUD leaf: its consumer takes the folio behind it.
 */
static bool np_walk_pud_protnone(struct np_walk *w, pud_t *pudp,
				 unsigned long addr, unsigned long next,
				 pud_t pud)
{
	u32 kind = w->vma_kind | NUMAPLACE_KIND_PUD | NUMAPLACE_KIND_PROTNONE;
	spinlock_t *ptl;
	bool ok;

	if (!(w->flags & NP_WALK_LEGACY) ||
	    !(w->vma_kind & NUMAPLACE_KIND_HUGETLB))
		return np_walk_add(w, addr, (next - addr) >> PAGE_SHIFT, 0,
				   -ENOENT, kind);
	if (!(w->flags & NP_WALK_LOCKED))
		return np_walk_leaf(w, pudp, addr, next, pud_pfn(pud), true, false,
				    false, NUMAPLACE_KIND_PUD);
	ptl = pud_lock(w->mm, pudp);
	pud = np_pudp_get(pudp);
	if (!np_pud_protnone_leaf(pud)) {
		/* Changed under us: gone, or in flux; nothing to take. */
		spin_unlock(ptl);
		return np_walk_hole(w, addr, next);
	}
	ok = np_walk_leaf(w, pudp, addr, next, pud_pfn(pud), true, false, false,
			  NUMAPLACE_KIND_PUD) &&
	     np_walk_flush(w);
	spin_unlock(ptl);
	return ok;
}

static bool np_walk_pud_leaf(struct np_walk *w, pud_t *pudp, pud_t pud,
			     unsigned long addr, unsigned long next)
{
	spinlock_t *ptl;
	bool ok;

	if (!(w->flags & NP_WALK_LOCKED) && !w->access)
		return np_walk_leaf(w, pudp, addr, next, pud_pfn(pud), false,
				    np_pud_devmap(pud) || np_pud_special(pud),
				    pud_write(pud), NUMAPLACE_KIND_PUD);
	ptl = pud_lock(w->mm, pudp);
	/*
	 * Read again under the lock. A hugetlb PUD is never split into a
	 * table: if it is no longer a leaf, it is gone or under migration.
	 */
	pud = np_pudp_get(pudp);
	if (!pud_present(pud) || !(pud_leaf(pud) || np_pud_devmap(pud))) {
		spin_unlock(ptl);
		if (pud_none(pud))
			return np_walk_hole(w, addr, next);
		return np_walk_leaf_entry(w, addr, next,
					  np_leaf_from_pte(__pte(pud_val(pud))));
	}
	ok = np_walk_leaf(w, pudp, addr, next, pud_pfn(pud), false,
			  np_pud_devmap(pud) || np_pud_special(pud),
			  pud_write(pud), NUMAPLACE_KIND_PUD) &&
	     np_walk_flush(w);
	spin_unlock(ptl);
	return ok;
}

static bool np_walk_puds(struct np_walk *w, p4d_t *p4dp, unsigned long addr,
			 unsigned long end)
{
	pud_t *pudp = pud_offset(p4dp, addr);
	unsigned long next;
	pud_t pud;

	for (; addr != end; pudp++, addr = next) {
		next = pud_addr_end(addr, end);
		pud = np_pudp_get(pudp);
		if (pud_none(pud)) {
			if (!np_walk_hole(w, addr, next))
				return false;
		} else if (np_pud_protnone_leaf(pud)) {
			if (!np_walk_pud_protnone(w, pudp, addr, next, pud))
				return false;
		} else if (!pud_present(pud)) {
			if (!np_walk_leaf_entry(w, addr, next,
						np_leaf_from_pte(__pte(pud_val(pud)))))
				return false;
		} else if (pud_leaf(pud) || np_pud_devmap(pud)) {
			if (!np_walk_pud_leaf(w, pudp, pud, addr, next))
				return false;
		} else if (pud_bad(pud)) {
			if (!np_walk_hole(w, addr, next))
				return false;
		} else if (!np_walk_pmds(w, pudp, addr, next)) {
			return false;
		}
	}
	return true;
}

static bool np_walk_p4ds(struct np_walk *w, pgd_t *pgdp, unsigned long addr,
			 unsigned long end)
{
	p4d_t *p4dp = p4d_offset(pgdp, addr);
	unsigned long next;
	p4d_t p4d;

	for (; addr != end; p4dp++, addr = next) {
		next = p4d_addr_end(addr, end);
		p4d = np_p4dp_get(p4dp);
		if (p4d_none(p4d) || p4d_bad(p4d)) {
			if (!np_walk_hole(w, addr, next))
				return false;
		} else if (!np_walk_puds(w, p4dp, addr, next)) {
			return false;
		}
	}
	return true;
}

static bool np_walk_vma(struct np_walk *w, struct vm_area_struct *vma,
			unsigned long addr, unsigned long end)
{
	pgd_t *pgdp = pgd_offset(w->mm, addr);
	unsigned long next;
	pgd_t pgd;

	w->vma = vma;
	w->vma_kind = vma_is_anonymous(vma) ? NUMAPLACE_KIND_ANON :
					      NUMAPLACE_KIND_FILE;
	if (is_vm_hugetlb_page(vma))
		w->vma_kind |= NUMAPLACE_KIND_HUGETLB;
	/* 6.1's no_page_table(): -EFAULT where nothing could fault in. */
	w->hole_status = -ENOENT;
	if ((w->flags & NP_WALK_LEGACY) && (!vma->vm_ops || !vma->vm_ops->fault))
		w->hole_status = -EFAULT;

	for (; addr != end; pgdp++, addr = next) {
		next = pgd_addr_end(addr, end);
		pgd = np_pgdp_get(pgdp);
		if (pgd_none(pgd) || pgd_bad(pgd)) {
			if (!np_walk_hole(w, addr, next))
				return false;
		} else if (!np_walk_p4ds(w, pgdp, addr, next)) {
			return false;
		}
	}
	return true;
}

/*
 * A hugetlb VMA's PMD table may be shared with other processes
 * (HUGETLB_PMD_PAGE_TABLE_SHARING): our mmap lock does not keep it, and
 * x86 frees page tables without an RCU grace period. huge_pmd_unshare()
 * runs with the mapping's i_mmap_rwsem held for write, so hold it for
 * read around the VMA (mmap_lock -> i_mmap_rwsem is the kernel's order; a
 * sleeping lock, so RCU is dropped around taking it).
 */
static bool np_walk_vma_locked(struct np_walk *w, struct vm_area_struct *vma,
			       unsigned long addr, unsigned long end)
{
	struct address_space *mapping;
	bool ok;

	if (!is_vm_hugetlb_page(vma) || !vma->vm_file)
		return np_walk_vma(w, vma, addr, end);
	mapping = vma->vm_file->f_mapping;
	rcu_read_unlock();
	i_mmap_lock_read(mapping);
	rcu_read_lock();
	ok = np_walk_vma(w, vma, addr, end);
	rcu_read_unlock();
	i_mmap_unlock_read(mapping);
	rcu_read_lock();
	return ok;
}

/**
 * np_walk_begin - lock @w->mm for a walk
 * Return: 0, or -EINTR when a fatal signal arrived while waiting.
 */
int np_walk_begin(struct np_walk *w)
{
	if (mmap_read_lock_killable(w->mm))
		return -EINTR;
	rcu_read_lock();
	return 0;
}

/*
 * np_walk_begin() for a walk whose answers are owed whatever the signals
 * (resolve, after a round's engines ran: pages have moved and the caller
 * must be told which): the lock is taken unkillably. One round's walk is
 * bounded; the fatal signal ends the call right after it.
 */
void np_walk_begin_owed(struct np_walk *w)
{
	mmap_read_lock(w->mm);
	rcu_read_lock();
}

void np_walk_end(struct np_walk *w)
{
	rcu_read_unlock();
	mmap_read_unlock(w->mm);
}

/**
 * np_walk_range - hand the runs of [@start, @end) to @w->emit
 * @w: the walk, between np_walk_begin() and np_walk_end()
 * @start: page-aligned first address
 * @end: page-aligned end, > @start
 *
 * Return: true when every page was handed over; false when the consumer
 * or the budget stopped the walk: @w->next is where to resume.
 */
bool np_walk_range(struct np_walk *w, unsigned long start, unsigned long end)
{
	struct vm_area_struct *vma;
	unsigned long addr = start, vend;

	w->stopped = false;
	w->cur.nr_pages = 0;
	w->next = start;
	while (addr < end) {
		vma = find_vma(w->mm, addr);
		if (!vma || vma->vm_start >= end) {
			vend = end;
		} else if (vma->vm_start > addr) {
			vend = vma->vm_start;
		} else {
			vend = min(end, vma->vm_end);
			if (!np_walk_vma_locked(w, vma, addr, vend))
				return false;
			addr = vend;
			continue;
		}
		/* No VMA: -EFAULT, as vma_lookup() failing in the syscall. */
		w->vma = NULL;
		w->vma_kind = 0;
		if (!np_walk_add(w, addr, (vend - addr) >> PAGE_SHIFT, 0, -EFAULT,
				 NUMAPLACE_KIND_NOVMA))
			return false;
		addr = vend;
	}
	if (!np_walk_flush(w))
		return false;
	w->next = end;
	return true;
}
