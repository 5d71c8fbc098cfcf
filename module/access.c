// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the access scan's bits (access.h). Called by the walker with
 * the mmap lock, RCU and, to clear, the entry's page-table lock held.
 */
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/page_idle.h>

#include "access.h"
#include "walk.h"
#include "ksyms.h"
#include "stats.h"

/* The NUMAPLACE_FEAT_ACCESS* bits this kernel has. */
u64 np_access_features(void)
{
	u64 features = NUMAPLACE_FEAT_ACCESS;

	if (np_ksyms.flush_tlb_mm_range)
		features |= NUMAPLACE_FEAT_ACCESS_FLUSH;
	if (np_ksyms.mmu_clear_young)
		features |= NUMAPLACE_FEAT_ACCESS_NOTIFY;
	/* folio_set_young() is a no-op stub without the flag (6.1). */
	if (IS_ENABLED(CONFIG_PAGE_IDLE_FLAG))
		features |= NUMAPLACE_FEAT_ACCESS_KEEP;
	return features;
}

/**
 * np_access_begin - start an access scan of @mm
 * @a: the scan
 * @mm: the mm, with a reference
 * @flags: the call's NUMAPLACE_QUERY_* flags
 *
 * Return: 0, or -EOPNOTSUPP when the kernel lacks what the flags ask:
 * the TLB flush, or the secondary MMUs' clear in an mm that has them (a
 * clear of the CPU's bits alone would leave a KVM guest's accesses
 * counted forever; never a half clear).
 */
int np_access_begin(struct np_access *a, struct mm_struct *mm, u32 flags)
{
	a->clear = flags & NUMAPLACE_QUERY_CLEAR_ACCESS;
	a->flush = flags & NUMAPLACE_QUERY_FLUSH_TLB;
	a->flush_start = ULONG_MAX;
	a->flush_end = 0;
	a->nr_cleared = 0;
	if (a->flush && !np_ksyms.flush_tlb_mm_range)
		return -EOPNOTSUPP;
	if (a->clear && mm_has_notifiers(mm) && !np_ksyms.mmu_clear_young)
		return -EOPNOTSUPP;
	return 0;
}

/* One TLB flush of the cleared span, whatever ended the call; counted. */
void np_access_end(struct np_access *a, struct mm_struct *mm)
{
	if (a->flush && a->flush_end) {
		np_ksyms.flush_tlb_mm_range(mm, a->flush_start, a->flush_end,
					    PAGE_SHIFT, false);
		np_stat_add(NP_STAT_ACCESS_FLUSHES, 1);
	}
	np_stat_add(NP_STAT_ACCESS_CLEARED, a->nr_cleared);
}

/*
 * A hugetlb PMD table may be shared by the processes that map the same
 * PUD-aligned gigabyte of a shared file (want_pmd_share(),
 * mm/hugetlb.c): a clear there would clear theirs. Reported, not cleared.
 */
static bool np_access_shared_table(struct vm_area_struct *vma,
				   unsigned long addr)
{
	unsigned long base = addr & PUD_MASK;

	return is_vm_hugetlb_page(vma) && (vma->vm_flags & VM_MAYSHARE) &&
	       huge_page_size(hstate_vma(vma)) == PMD_SIZE &&
	       base >= vma->vm_start && base + PUD_SIZE <= vma->vm_end;
}

/*
 * Whether the young bit of [@addr, @addr + @size) in the walk's VMA may be
 * cleared: not in a PFN or I/O map (6.1 maps a PFN PMD with no special
 * bit: no folio to tell), not in a table other processes may share, not
 * where a secondary MMU would be left out (a notifier registered after
 * np_access_begin() with its clear unresolved: report, never half clear).
 */
static bool np_access_may_clear(struct np_walk *w, unsigned long addr)
{
	return w->access->clear &&
	       !(w->vma->vm_flags & (VM_PFNMAP | VM_IO)) &&
	       !np_access_shared_table(w->vma, addr) &&
	       (!mm_has_notifiers(w->mm) || np_ksyms.mmu_clear_young);
}

/* [@start, @end) had CPU young bits cleared: the call's flush covers it. */
static void np_access_flush_span(struct np_access *a, unsigned long start,
				 unsigned long end)
{
	a->flush_start = min(a->flush_start, start);
	a->flush_end = max(a->flush_end, end);
}

/*
 * As damon_ptep_mkold(): reclaim's folio_referenced() still counts the
 * access; as folio_referenced(): an accessed folio is not idle. Each flag
 * read first: most folios a daemon scans again have them already.
 */
static void np_access_folio_young(struct folio *folio)
{
	if (!folio_test_young(folio))
		folio_set_young(folio);
	if (folio_test_idle(folio))
		folio_clear_idle(folio);
}

/*
 * The young bit at @entryp (a PTE, PMD or PUD, with its lock held), read
 * as @young: cleared with the secondary MMUs' for [@addr, @addr + @size),
 * the folio of @pfn told. Return: NUMAPLACE_KIND_YOUNG or 0.
 */
static u32 np_access_young(struct np_walk *w, unsigned long *entryp,
			   bool young, unsigned long addr, unsigned long size,
			   unsigned long pfn)
{
	bool cpu;

	if (!np_access_may_clear(w, addr))
		return young ? NUMAPLACE_KIND_YOUNG : 0;
	/* x86's ptep_test_and_clear_young() (arch/x86/mm/pgtable.c). */
	cpu = young && test_and_clear_bit(_PAGE_BIT_ACCESSED, entryp);
	if (cpu)
		np_access_flush_span(w->access, addr, addr + size);
	young = cpu;
	/* mmu_notifier_clear_young(), as the kernel's aging calls it. */
	if (mm_has_notifiers(w->mm))
		young |= np_ksyms.mmu_clear_young(w->mm, addr, addr + size);
	if (!young)
		return 0;
	w->access->nr_cleared += size >> PAGE_SHIFT;
	np_access_folio_young(page_folio(pfn_to_page(pfn)));
	return NUMAPLACE_KIND_YOUNG;
}

/**
 * np_access_pte - the access bits of a present page's PTE
 * @w: the walk, with the PTE table's lock held
 * @ptep: the entry
 * @pte: its value, read under that lock
 * @addr: its address
 * @pfn: its page (with a struct page)
 *
 * Return: NUMAPLACE_KIND_YOUNG and NUMAPLACE_KIND_DIRTY as they are set.
 */
u32 np_access_pte(struct np_walk *w, pte_t *ptep, pte_t pte,
		  unsigned long addr, unsigned long pfn)
{
	u32 access = pte_dirty(pte) ? NUMAPLACE_KIND_DIRTY : 0;

	return access | np_access_young(w, (unsigned long *)&ptep->pte,
					pte_young(pte), addr, PAGE_SIZE, pfn);
}

/**
 * np_access_clear_ptes - clear the young bits of @n young plain pages
 * @w: the walk, with the PTE table's lock held, in an mm without mmu
 *	notifiers (so that each page's answer is its CPU bit, which only
 *	the CPU sets and every clearer clears under that lock: young)
 * @ptep: the first entry
 * @addr: its address
 * @n: entries, every one young with a struct page (the walker's scan)
 */
void np_access_clear_ptes(struct np_walk *w, pte_t *ptep, unsigned long addr,
			  unsigned long n)
{
	struct folio *folio, *last = NULL;
	unsigned long i;

	/* One VMA, one PTE table: one answer for them all. */
	if (!np_access_may_clear(w, addr))
		return;
	for (i = 0; i < n; i++) {
		test_and_clear_bit(_PAGE_BIT_ACCESSED,
				   (unsigned long *)&ptep[i].pte);
		/* A large folio's pages, PTE-mapped, follow each other. */
		folio = page_folio(pfn_to_page(pte_pfn(ptep_get(ptep + i))));
		if (folio != last)
			np_access_folio_young(folio);
		last = folio;
	}
	w->access->nr_cleared += n;
	np_access_flush_span(w->access, addr, addr + (n << PAGE_SHIFT));
}

/**
 * np_access_leaf - the access bits of a PMD or PUD leaf's page
 * @w: the walk, with the leaf's lock held
 * @leafp: the pmd_t or pud_t (x86: the same bits as a PTE's)
 * @addr: the leaf's first address
 * @size: PMD_SIZE or PUD_SIZE
 * @pfn: the leaf's first page
 * @whole: the walk covers the whole leaf: else its bit, which stands for
 *	pages outside the range too, is reported and not cleared
 *
 * Return: NUMAPLACE_KIND_YOUNG and NUMAPLACE_KIND_DIRTY as they are set.
 */
u32 np_access_leaf(struct np_walk *w, void *leafp, unsigned long addr,
		   unsigned long size, unsigned long pfn, bool whole)
{
	pte_t bits = __pte(READ_ONCE(*(unsigned long *)leafp));
	u32 access = pte_dirty(bits) ? NUMAPLACE_KIND_DIRTY : 0;

	if (!whole)
		return access | (pte_young(bits) ? NUMAPLACE_KIND_YOUNG : 0);
	return access | np_access_young(w, leafp, pte_young(bits), addr, size,
					pfn);
}

/*
 * Whether the walk cleared the young bits of @run, a young run, when it
 * visited it: np_access_may_clear() answers as it did then (the mmap lock,
 * held since, keeps an mmu notifier from being registered), and a leaf is
 * cleared only when the walk covered it whole.
 */
static bool np_access_run_cleared(struct np_walk *w, const struct np_run *run)
{
	unsigned long size;

	if (!np_access_may_clear(w, run->start))
		return false;
	if (!(run->kind & (NUMAPLACE_KIND_PMD | NUMAPLACE_KIND_PUD)))
		return true;
	size = run->kind & NUMAPLACE_KIND_PUD ? PUD_SIZE : PMD_SIZE;
	return IS_ALIGNED(run->start, size) &&
	       run->nr_pages == size >> PAGE_SHIFT;
}

/**
 * np_access_unreport - give back the young bits of pages not reported
 * @w: a walk, with the lock of @run's entries held (NP_WALK_LOCKED)
 * @run: a run whose pages from @taken on the consumer did not take
 * @taken: the pages it took
 *
 * A clearing scan clears a young bit when it visits the page; a page the
 * walk visited but did not hand over (the consumer's buffer was full) is
 * walked again by the next round or call, which must still find it young:
 * its CPU bit is set again (as the CPU would on an access; a secondary
 * MMU's young state, cleared, becomes the CPU's bit), and the call's
 * count of cleared pages no longer counts it.
 */
void np_access_unreport(struct np_walk *w, const struct np_run *run,
			unsigned long taken)
{
	unsigned long i;

	if (!w->access->clear || !(run->kind & NUMAPLACE_KIND_YOUNG) ||
	    !run->entryp || taken >= run->nr_pages ||
	    !np_access_run_cleared(w, run))
		return;
	if (run->kind & (NUMAPLACE_KIND_PMD | NUMAPLACE_KIND_PUD)) {
		set_bit(_PAGE_BIT_ACCESSED, run->entryp);
		w->access->nr_cleared -= run->nr_pages;
		return;
	}
	for (i = taken; i < run->nr_pages; i++)
		set_bit(_PAGE_BIT_ACCESSED,
			(unsigned long *)((pte_t *)run->entryp + i));
	w->access->nr_cleared -= run->nr_pages - taken;
}
