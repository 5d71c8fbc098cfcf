// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the page-table engine, for private anonymous folios that
 * only the walked mm maps: order-0 pages, PTE-mapped large folios (mTHP)
 * where the kernel removes a folio's rmap in one call (compat.h
 * NP_PT_LARGE), and PMD-mapped THPs (compat.h NP_PT_PMD). It is the
 * batched engine (engine_batch.c: windows, bulk allocation, copy workers)
 * with its own unmap and restore: for such a folio the entries the walk
 * holds under their lock are its only mappings, so the walk is the rmap
 * walk, and there is none to do. A large folio moves whole: one
 * destination of its order, its PTEs (or its PMD) unmapped and its rmap
 * removed together (never "partly mapped", so never queued for a deferred
 * split by us; one the kernel queued has its destination queued in its
 * place), or stays whole and goes to the kernel engine.
 *
 *  - reserve: the batched engine's, before the unmap (np_copy_reserve():
 *    a destination per folio, of its order, from collect's
 *    m->head_order); a page whose node ran out is not unmapped;
 *  - unmap (np_pt_unmap()), per page table of a VMA range, under its lock:
 *    each folio is locked, isolated, and its PTEs replaced by migration
 *    entries that keep what try_to_migrate_one() keeps (writable, readable
 *    exclusive, young, dirty, soft-dirty, uffd-wp), with the same
 *    anon-exclusive handling (a folio that may be pinned is left mapped),
 *    then its rmap is dropped; one TLB flush per page table, and one
 *    mmu-notifier invalidation for the range;
 *  - copy: the batched engine's (module/copy.c), into the reservations
 *    that fit; a large folio without one is not given one while it is
 *    unmapped: restore hands it to the kernel engine;
 *  - move (np_pt_restore()): folio_migrate_mapping() (an unexpected
 *    reference fails that page) and folio_migrate_flags(), both exported,
 *    as __migrate_folio() does after its copy;
 *  - restore, per page table, under its lock: where the entry is still
 *    ours, the new page is mapped (or the old one where a step failed: the
 *    data stays where it was) as remove_migration_pte() maps it, with its
 *    rmap; then both go back to the LRU (or the old one is freed; a large
 *    one not moved goes to the kernel engine's list, the next engine).
 * Design.md compares each step with the kernel's code, per version.
 *
 * The order-0 path runs once a page: its helpers are __always_inline and
 * the large-folio and PMD paths, which share them, noinline, else GCC
 * makes calls of the helpers in np_pt_unmap() and np_pt_restore()
 * (performance.md, "the 4 KiB drift").
 *
 * Runs under the mmap lock held for read (since collect), outside RCU
 * except while a page table is looked up and locked. The mmap lock keeps
 * fork (which would share the pages), mremap and munmap out; a zap under
 * the read lock (MADV_DONTNEED) may clear an entry meanwhile, which
 * restore sees. Internals only through ksyms.c: the engine is available
 * when every one of them is resolved and callable.
 */
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/pgtable.h>
#include <linux/rmap.h>
#include <linux/sched/signal.h>
#include <linux/swapops.h>
#include <linux/userfaultfd_k.h>

#include "migrate.h"
#include "compat.h"
#include "copy.h"
#include "ksyms.h"
#include "walk.h"

/* Under lockdep, the notifier's map (np_pt_range_start()) is needed too. */
static bool np_pt_lockdep_map(void)
{
#ifdef CONFIG_LOCKDEP
	return np_ksyms.mmu_range_start_map;
#else
	return true;
#endif
}

static bool np_engine_pt_available(void)
{
	return IS_ENABLED(CONFIG_MIGRATION) && IS_ENABLED(CONFIG_MMU_NOTIFIER) &&
	       np_ksyms.folio_isolate_lru &&
	       np_ksyms.rmap_remove && np_ksyms.rmap_add_anon &&
	       np_ksyms.flush_tlb_mm_range && np_ksyms.mmu_range_start &&
	       np_ksyms.mmu_range_end && np_ksyms.swap_migration_ad_supported &&
	       np_pt_lockdep_map();
}

/*
 * mmu_notifier_invalidate_range_start() and _end(), inline in the kernel
 * over the unexported __ entry points, as they are there: might_sleep(),
 * and under lockdep the start's map, so that lockdep checks this engine's
 * locks against every subscriber's, as it does the kernel's own callers'.
 * Return: 0, or a subscriber's refusal (never for a blockable range).
 */
static int np_pt_range_start(struct mmu_notifier_range *range)
{
	int ret = 0;

	might_sleep();
#ifdef CONFIG_LOCKDEP
	lock_map_acquire(np_ksyms.mmu_range_start_map);
#endif
	if (mm_has_notifiers(range->mm))
		ret = np_ksyms.mmu_range_start(range);
#ifdef CONFIG_LOCKDEP
	lock_map_release(np_ksyms.mmu_range_start_map);
#endif
	return ret;
}

static void np_pt_range_end(struct mmu_notifier_range *range)
{
	might_sleep();
	if (mm_has_notifiers(range->mm))
		np_mmu_range_end_call(np_ksyms.mmu_range_end, range);
}

/*
 * May the engine take this VMA's pages? Not an mlocked one (the kernel
 * drains the mlock batch per page there), nor one under userfaultfd
 * read-write protection, nor a shadow stack (compat.h np_maybe_mkwrite()):
 * those stay with the migrate_vma path. Nor in a call that lets THPs be
 * split (SPLIT_OK): collect hands those to migrate_vma, which splits them
 * (the caller asked for a split this engine never makes).
 */
bool np_pt_takes_vma(const struct np_mig *m, struct vm_area_struct *vma)
{
	return (m->engines & NUMAPLACE_ENGINE_PT) &&
	       !(m->a->flags & NUMAPLACE_MIGRATE_SPLIT_OK) &&
	       vma_is_anonymous(vma) &&
	       !(vma->vm_flags & VM_LOCKED) && !np_uffd_rwp(vma) &&
	       !np_vma_shadow_stack(vma);
}

/* Can the engine requeue a destination on the deferred split queue? */
static bool np_pt_requeues(void)
{
#ifdef NP_HAVE_PT_PMD
	return np_ksyms.deferred_split;
#else
	return false;
#endif
}

/*
 * Does the engine move PMD-mapped THPs (compat.h NP_PT_PMD)? Their rmap
 * calls and deferred_split_folio(), which requeues a destination as
 * migrate_folio_move() does, resolved and callable.
 */
static bool np_pt_thp_available(void)
{
#ifdef NP_HAVE_PT_PMD
	return np_ksyms.rmap_remove_pmd && np_ksyms.rmap_add_anon_pmd &&
	       np_pt_requeues();
#else
	return false;
#endif
}

/*
 * A large folio's own state the engine can carry over. Not hugetlb. Not,
 * where the engine cannot requeue a destination (np_pt_requeues()),
 * a PMD-sized one on the deferred split queue: 6.12's underused-THP
 * shrinker queues every PMD-sized THP at fault and collapse
 * (split_underused_thp), and migrate_folio_move() requeues the destination
 * of one it moves; ours would drop off the queue. Those go to the kernel
 * engine.
 */
static bool np_pt_large_ok(struct folio *folio)
{
	return !folio_test_hugetlb(folio) &&
	       (np_pt_requeues() ||
		!(folio_test_pmd_mappable(folio) && np_folio_deferred(folio)));
}

/*
 * Does the call give the engine its PMD-mapped THPs? Only when it asks for
 * this engine (ENGINE_PT) or has no kernel engine: by default the kernel
 * engine moves them, measured faster (performance.md, "PMD THP through the
 * page-table engine": 1.30x against 1.18x of move_pages(2) on 6.12,
 * icount): a THP costs the kernel one rmap walk, and this engine's
 * per-page arrays more than that.
 */
static bool np_pt_thp_chosen(const struct np_mig *m)
{
	return (m->a->flags & NUMAPLACE_MIGRATE_ENGINE_PT) ||
	       !(m->engines & NUMAPLACE_ENGINE_KERNEL);
}

/**
 * np_pt_takes_large - may the engine take this large folio?
 * @m: the call
 * @folio: a large folio collect found in a VMA, not shared, KSM, in the
 *	swap cache nor under writeback (np_vma_engine_takes())
 * @page: its first page in this run
 * @n: its pages in this run
 * @pmd: the run is a PMD mapping
 *
 * Whole in the run from its first page, in a VMA the engine takes, and
 * mapped by nothing else: PTE-mapped, its mapcount the run's @n PTEs (no
 * other mm, no PMD); or PMD-mapped where the engine moves THPs and the
 * call gives it them (np_pt_thp_chosen()), its mapcount that one PMD.
 * Unmap checks it again under the page table's lock. A folio it refuses
 * goes to the kernel engine.
 */
bool np_pt_takes_large(const struct np_mig *m, struct folio *folio,
		       struct page *page, unsigned long n, bool pmd)
{
	if (pmd ? !np_pt_thp_available() || !np_pt_thp_chosen(m) :
		  !NP_PT_LARGE)
		return false;
	return page == &folio->page && n == folio_nr_pages(folio) &&
	       folio_mapcount(folio) == (pmd ? 1 : n) &&
	       np_pt_large_ok(folio) && np_pt_takes_vma(m, m->w.vma);
}

/*
 * The PMD entry for @addr, or NULL where an upper level maps none; the
 * caller locks the PTE table it maps (np_pte_table_lock(), RCU held: walk.c
 * keeps the table so) or the PMD itself (a THP). Upper levels are kept by
 * the mmap lock.
 */
static pmd_t *np_pt_pmd(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgd = pgd_offset(mm, addr);
	p4d_t *p4d;
	pud_t *pud;

	/* Not the *_none_or_clear_bad() helpers: their reports are not exported. */
	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud) || pud_leaf(*pud) || pud_bad(*pud))
		return NULL;
	return pmd_offset(pud, addr);
}

static void np_pt_flush(struct mm_struct *mm, unsigned long first,
			unsigned long last)
{
	if (first <= last)
		np_ksyms.flush_tlb_mm_range(mm, first, last + PAGE_SIZE,
					    PAGE_SHIFT, false);
}

/*
 * May the engine move @folio, mapped at @page, to @target? Anonymous, not
 * hardware-poisoned (the kernel maps a hwpoison entry there instead; for a
 * large folio, no page of it), not KSM, not in the swap cache or under
 * writeback, not on @target. Who else maps it, the caller decides.
 */
static __always_inline bool np_pt_folio_ok(struct folio *folio,
					   struct page *page, int target)
{
	return folio_test_anon(folio) && !PageHWPoison(page) &&
	       !(folio_test_large(folio) && folio_test_has_hwpoisoned(folio)) &&
	       !folio_test_ksm(folio) && !folio_test_swapcache(folio) &&
	       !folio_test_writeback(folio) && folio_nid(folio) != target;
}

/*
 * The page @pte maps, if the engine may move it to @target: a present
 * PTE (PROT_NONE too; not special or devmap) of a page np_pt_folio_ok()
 * takes that only this PTE maps (of a large folio, np_pt_large_nr()
 * decides).
 */
static struct page *np_pt_page(pte_t pte, int target)
{
	struct folio *folio;
	struct page *page;
	unsigned long pfn;

	/* PROT_NONE (NUMA hinting) is present: remap restores the VMA's prot. */
	if (!pte_present(pte) || pte_special(pte) ||
	    (pte_flags(pte) & NP_PAGE_DEVMAP))
		return NULL;
	pfn = pte_pfn(pte);
	if (!pfn_valid(pfn))
		return NULL;
	page = pfn_to_page(pfn);
	folio = page_folio(page);
	if ((folio_test_large(folio) && !NP_PT_LARGE) ||
	    !np_pt_folio_ok(folio, page, target) ||
	    np_mapped_shared(folio, page))
		return NULL;
	return page;
}

/*
 * Done with an isolated, locked source folio: back on the LRU where it
 * did not move (@back, as folio_putback_lru()), else freed with the
 * isolation's reference, its last (as migrate_folio_done()).
 */
static __always_inline void np_pt_src_done(struct folio *folio, bool back)
{
	np_lru_isolated_end(folio);
	folio_unlock(folio);
	if (back)
		folio_add_lru(folio);
	folio_put(folio);	/* the isolation's reference */
}

/*
 * The migration entry's flags and pfn for @page in place of a present
 * entry: writable, readable exclusive or readable, with the
 * young and dirty bits where the kernel's entries keep them.
 */
static __always_inline swp_entry_t np_pt_migration_entry(struct page *page,
							 bool write,
							 bool anon_exclusive,
							 bool young, bool dirty)
{
	swp_entry_t entry;

	if (write)
		entry = make_writable_migration_entry(page_to_pfn(page));
	else if (anon_exclusive)
		entry = make_readable_exclusive_migration_entry(page_to_pfn(page));
	else
		entry = make_readable_migration_entry(page_to_pfn(page));
	return np_migration_entry_ad(entry,
				     READ_ONCE(*np_ksyms.swap_migration_ad_supported),
				     young, dirty);
}

/*
 * The migration entry for @page in place of @pteval (cleared from @ptep),
 * as try_to_migrate_one() makes it.
 */
static __always_inline void np_pt_set_entry(struct mm_struct *mm,
					    unsigned long addr, pte_t *ptep,
					    struct page *page, pte_t pteval,
					    bool anon_exclusive)
{
	swp_entry_t entry;
	pte_t swp_pte;

	if (pte_dirty(pteval))
		folio_mark_dirty(page_folio(page));
	entry = np_pt_migration_entry(page, pte_write(pteval), anon_exclusive,
				      pte_young(pteval), pte_dirty(pteval));
	swp_pte = swp_entry_to_pte(entry);
	if (pte_soft_dirty(pteval))
		swp_pte = pte_swp_mksoft_dirty(swp_pte);
	if (np_pte_uffd(pteval))
		swp_pte = np_pte_swp_mkuffd(swp_pte);
	set_pte_at(mm, addr, ptep, swp_pte);
}

/*
 * The PTE remove_migration_pte() makes for @new in place of @old_pte, the
 * migration entry @entry (np_leaf_from_pte() of it, decoded by the caller).
 */
static __always_inline pte_t np_pt_entry_pte(struct vm_area_struct *vma,
					     pte_t old_pte, np_leaf_t entry,
					     struct folio *folio,
					     struct page *new)
{
	bool ad = READ_ONCE(*np_ksyms.swap_migration_ad_supported);
	pte_t pte;

	pte = mk_pte(new, READ_ONCE(vma->vm_page_prot));
	if (!np_leaf_is_migration_young(ad, entry))
		pte = pte_mkold(pte);
	if (folio_test_dirty(folio) && np_leaf_is_migration_dirty(ad, entry))
		pte = pte_mkdirty(pte);
	/*
	 * x86's pte_mkdirty() sets the soft-dirty bit too: clear it for a
	 * page that was not soft-dirty, as 6.12's and 7.3's
	 * remove_migration_pte() do (6.1's leaves it set, reporting a clean
	 * page soft-dirty after a move; migrate_pt.c tests it).
	 */
	if (pte_swp_soft_dirty(old_pte))
		pte = pte_mksoft_dirty(pte);
	else
		pte = pte_clear_soft_dirty(pte);
	if (np_leaf_is_migration_write(entry))
		pte = np_maybe_mkwrite(pte, vma);
	else if (np_pte_swp_uffd(old_pte))
		pte = np_pte_mkuffd(pte);
	return pte;
}

/* The rmap flags of a page mapped in place of the migration entry @entry. */
static rmap_t np_pt_entry_rmap(np_leaf_t entry)
{
	return np_leaf_is_migration_read(entry) ? RMAP_NONE : RMAP_EXCLUSIVE;
}

/*
 * Lock and isolate @folio for its unmap (under the page table's lock: a
 * trylock), as collect and migrate_pages() would have before
 * try_to_migrate(). false: busy, left as it was.
 */
static __always_inline bool np_pt_take(struct folio *folio)
{
	if (!folio_trylock(folio))
		return false;
	if (np_lru_isolate(folio))
		return true;
	folio_unlock(folio);
	return false;
}

/*
 * try_to_migrate_one() for one PTE of an exclusive order-0 page, without
 * its flush (the caller flushes the table's range once). Return: true
 * when @ptep holds a migration entry for @page, its rmap dropped and the
 * folio locked and isolated, with one reference (the isolation's).
 */
static bool np_pt_unmap_one(struct vm_area_struct *vma, unsigned long addr,
			    pte_t *ptep, struct page *page)
{
	struct folio *folio = page_folio(page);
	struct mm_struct *mm = vma->vm_mm;
	bool anon_exclusive;
	pte_t pteval;

	if (!np_pt_take(folio))
		return false;
	anon_exclusive = PageAnonExclusive(page);
	pteval = ptep_get_and_clear(mm, addr, ptep);
	/* See folio_try_share_anon_rmap_pte(): PTE cleared first. */
	if (anon_exclusive && np_try_share_anon_pte(folio, page)) {
		set_pte_at(mm, addr, ptep, pteval);
		np_pt_src_done(folio, true);
		return false;
	}
	np_pt_set_entry(mm, addr, ptep, page, pteval, anon_exclusive);
	np_rmap_remove_pte(np_ksyms.rmap_remove, folio, page, vma);
	folio_put(folio);	/* the mapping's reference */
	return true;
}

#ifdef np_rmap_remove_ptes
/*
 * The pages of the large folio whose first page @ptep maps, if the engine
 * may move it whole from here: every page mapped by the next PTEs of this
 * table, in order, within [@addr, @end), all of them to the same target
 * (@target, per page), and nothing else mapping it (its mapcount, which
 * counts a PMD mapping and other mms' too, is those PTEs). 0: it stays.
 */
static noinline unsigned long np_pt_large_nr(struct folio *folio,
					     struct page *page, pte_t *ptep,
					     unsigned long addr,
					     unsigned long end,
					     const s32 *target)
{
	unsigned long nr = folio_nr_pages(folio), pfn = folio_pfn(folio), k;
	pte_t pte;

	if (page != &folio->page || nr > (end - addr) >> PAGE_SHIFT ||
	    folio_mapcount(folio) != nr || !np_pt_large_ok(folio))
		return 0;
	for (k = 1; k < nr; k++) {
		pte = ptep_get(ptep + k);
		if (target[k] != target[0] || !pte_present(pte) ||
		    pte_pfn(pte) != pfn + k)
			return 0;
	}
	return nr;
}

/*
 * Put back the present PTEs of the first @n pages of @folio, which
 * np_pt_unmap_large() replaced by migration entries (their rmap and
 * references still held), each page exclusive again where it was.
 */
static void np_pt_unmap_undo(struct vm_area_struct *vma, unsigned long addr,
			     pte_t *ptep, struct folio *folio, unsigned long n)
{
	struct page *page;
	np_leaf_t entry;
	unsigned long k;
	pte_t old;

	for (k = 0; k < n; k++, addr += PAGE_SIZE) {
		page = folio_page(folio, k);
		old = ptep_get(ptep + k);
		entry = np_leaf_from_pte(old);
		if (np_pt_entry_rmap(entry) & RMAP_EXCLUSIVE)
			SetPageAnonExclusive(page);
		set_pte_at(vma->vm_mm, addr, ptep + k,
			   np_pt_entry_pte(vma, old, entry, folio, page));
	}
}

/*
 * try_to_migrate_one() for the @nr PTEs from @ptep of a large folio only
 * they map, without the flush (the caller's, once for the table's range),
 * and with the rmap of all of them removed in one call. A page that may be
 * pinned (the check is per folio, after each PTE is cleared, as the
 * kernel's) puts every PTE back. Return: true when the PTEs hold
 * migration entries, the rmap is dropped and the folio is locked and
 * isolated, with one reference (the isolation's).
 */
static noinline bool np_pt_unmap_large(struct vm_area_struct *vma,
				       unsigned long addr, pte_t *ptep,
				       struct folio *folio, unsigned long nr)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long k, a;
	struct page *page;
	bool anon_exclusive;
	pte_t pteval;

	if (!np_pt_take(folio))
		return false;
	for (k = 0; k < nr; k++) {
		a = addr + k * PAGE_SIZE;
		page = folio_page(folio, k);
		anon_exclusive = PageAnonExclusive(page);
		pteval = ptep_get_and_clear(mm, a, ptep + k);
		if (anon_exclusive && np_try_share_anon_pte(folio, page)) {
			set_pte_at(mm, a, ptep + k, pteval);
			np_pt_unmap_undo(vma, addr, ptep, folio, k);
			np_pt_src_done(folio, true);
			return false;
		}
		np_pt_set_entry(mm, a, ptep + k, page, pteval, anon_exclusive);
	}
	np_rmap_remove_ptes(np_ksyms.rmap_remove, folio, &folio->page, nr, vma);
	folio_put_refs(folio, nr);	/* the mappings' references */
	return true;
}
#else
static unsigned long np_pt_large_nr(struct folio *folio, struct page *page,
				    pte_t *ptep, unsigned long addr,
				    unsigned long end, const s32 *target)
{
	return 0;
}

static bool np_pt_unmap_large(struct vm_area_struct *vma, unsigned long addr,
			      pte_t *ptep, struct folio *folio,
			      unsigned long nr)
{
	return false;
}
#endif

#ifdef NP_HAVE_PT_PMD
/*
 * set_pmd_migration_entry() for the THP that @pmdp maps at @addr, whose
 * whole range is in the call (@target: per page), under the PMD's lock,
 * with the flush of its range. Taken as np_pt_page() takes a page
 * (np_pt_folio_ok()), when only this PMD maps it (its mapcount 1: no other
 * mm, no PTE) and every page goes to that one target. The PMD is invalidated (never none: a
 * fault meanwhile waits on its lock, not maps a PTE table there) before
 * the anon-exclusive check, as the kernel does. Return: its first page,
 * its HPAGE_PMD_NR pages now under one PMD migration entry, the folio's
 * rmap dropped and the folio locked and isolated with one reference (the
 * isolation's); or NULL, left as it was.
 */
static noinline struct page *np_pt_unmap_pmd(struct vm_area_struct *vma,
					     unsigned long addr, pmd_t *pmdp,
					     const s32 *target)
{
	struct mm_struct *mm = vma->vm_mm;
	struct page *page, *ret = NULL;
	bool anon_exclusive;
	struct folio *folio;
	unsigned long k;
	swp_entry_t entry;
	pmd_t pmdval, swp;
	spinlock_t *ptl;

	ptl = pmd_lock(mm, pmdp);
	pmdval = np_pmdp_get(pmdp);
	if (!pmd_trans_huge(pmdval) || np_pmd_devmap(pmdval) ||
	    np_pmd_special(pmdval) || target[0] < 0)
		goto unlock;
	page = pmd_page(pmdval);
	folio = page_folio(page);
	for (k = 1; k < HPAGE_PMD_NR; k++)
		if (target[k] != target[0])
			goto unlock;
	if (folio_nr_pages(folio) != HPAGE_PMD_NR ||
	    !np_pt_folio_ok(folio, page, target[0]) ||
	    folio_mapcount(folio) != 1 || !np_pt_large_ok(folio) ||
	    !np_pt_take(folio))
		goto unlock;
	pmdval = pmdp_establish(vma, addr, pmdp, pmd_mkinvalid(pmdval));
	/* See folio_try_share_anon_rmap_pmd(): PMD invalidated first. */
	anon_exclusive = PageAnonExclusive(page);
	if (anon_exclusive && folio_try_share_anon_rmap_pmd(folio, page)) {
		set_pmd_at(mm, addr, pmdp, pmdval);
		np_pt_src_done(folio, true);
		goto unlock;
	}
	if (pmd_dirty(pmdval))
		folio_mark_dirty(folio);
	entry = np_pt_migration_entry(page, pmd_write(pmdval), anon_exclusive,
				      pmd_young(pmdval), pmd_dirty(pmdval));
	swp = swp_entry_to_pmd(entry);
	if (pmd_soft_dirty(pmdval))
		swp = pmd_swp_mksoft_dirty(swp);
	if (np_pmd_uffd(pmdval))
		swp = np_pmd_swp_mkuffd(swp);
	set_pmd_at(mm, addr, pmdp, swp);
	np_ksyms.rmap_remove_pmd(folio, page, vma);
	folio_put(folio);	/* the mapping's reference */
	/* No CPU writes the old THP once this returns. */
	np_ksyms.flush_tlb_mm_range(mm, addr, addr + HPAGE_PMD_SIZE, PMD_SHIFT,
				    false);
	ret = page;
unlock:
	spin_unlock(ptl);
	return ret;
}

/*
 * remove_migration_pmd() for the PMD at @addr where np_pt_unmap_pmd() left
 * the migration entry of the THP at @old_pfn: map @folio there (the new
 * THP, or the old one where a step failed), with its rmap. Return: false
 * when the PMD now maps a PTE table (a split of the entry meanwhile made
 * PTE migration entries: the caller maps those as PTEs, as the kernel's
 * rmap walk would); true when done, or nothing is left to map (a zap).
 */
static noinline bool np_pt_map_pmd(struct vm_area_struct *vma,
				   unsigned long addr, pmd_t *pmdp,
				   unsigned long old_pfn, struct folio *folio)
{
	bool ad = READ_ONCE(*np_ksyms.swap_migration_ad_supported);
	struct mm_struct *mm = vma->vm_mm;
	rmap_t flags = RMAP_NONE;
	np_leaf_t entry;
	pmd_t pmdval, pmde;
	spinlock_t *ptl;
	bool done = true;

	ptl = pmd_lock(mm, pmdp);
	pmdval = np_pmdp_get(pmdp);
	if (pmd_none(pmdval) || pmd_present(pmdval)) {
		/*
		 * Zapped (nothing to map), or a table (the PTE path maps
		 * it), or a THP faulted in after a zap (not ours: the PTE
		 * path finds no table there).
		 */
		done = pmd_none(pmdval);
		goto unlock;
	}
	entry = np_leaf_from_pmd(pmdval);
	if (!np_leaf_is_migration(entry) || np_leaf_pfn(entry) != old_pfn)
		goto unlock;
	folio_get(folio);
	pmde = pmd_mkhuge(pfn_pmd(folio_pfn(folio), READ_ONCE(vma->vm_page_prot)));
	if (pmd_swp_soft_dirty(pmdval))
		pmde = pmd_mksoft_dirty(pmde);
	if (np_leaf_is_migration_write(entry))
		pmde = np_pmd_mkwrite(pmde);
	if (np_pmd_swp_uffd(pmdval))
		pmde = np_pmd_mkuffd(pmde);
	if (!np_leaf_is_migration_young(ad, entry))
		pmde = pmd_mkold(pmde);
	/* As the kernel's: on x86 this sets soft-dirty too. */
	if (folio_test_dirty(folio) && np_leaf_is_migration_dirty(ad, entry))
		pmde = pmd_mkdirty(pmde);
	if (!np_leaf_is_migration_read(entry))
		flags = RMAP_EXCLUSIVE;
	np_ksyms.rmap_add_anon_pmd(folio, &folio->page, vma, addr, flags);
	set_pmd_at(mm, addr, pmdp, pmde);
	/* No need to invalidate: it was non-present before. */
	update_mmu_cache_pmd(vma, addr, pmdp);
unlock:
	spin_unlock(ptl);
	return done;
}

/*
 * As migrate_folio_move() does after the move: a destination whose source
 * was on the deferred split queue (folio_migrate_mapping() took the source
 * off) is queued in its place. @src_deferred, @src_partially: the source's
 * state before the move.
 */
static void np_pt_requeue(struct folio *dst, bool src_deferred,
			  bool src_partially)
{
	if (src_deferred && np_pt_requeues())
		np_ksyms.deferred_split(dst, src_partially);
}
#else
static struct page *np_pt_unmap_pmd(struct vm_area_struct *vma,
				    unsigned long addr, pmd_t *pmdp,
				    const s32 *target)
{
	return NULL;
}

static bool np_pt_map_pmd(struct vm_area_struct *vma, unsigned long addr,
			  pmd_t *pmdp, unsigned long old_pfn,
			  struct folio *folio)
{
	return false;
}

static void np_pt_requeue(struct folio *dst, bool src_deferred,
			  bool src_partially)
{
}
#endif

/* Entries [@j, @j + @nr) of @args: the pages of one folio from @page. */
static void np_pt_set_src(struct migrate_vma *args, unsigned long j,
			  struct page *page, unsigned long nr)
{
	unsigned long k;

	for (k = 0; k < nr; k++)
		args->src[j + k] = migrate_pfn(page_to_pfn(page) + k) |
				   MIGRATE_PFN_MIGRATE | (k ? NP_PFN_TAIL : 0);
}

/* Is entry @j of @args the first of a folio np_pt_unmap() unmapped? */
static bool np_pt_first(const struct migrate_vma *args, unsigned long j)
{
	return (args->src[j] & (MIGRATE_PFN_MIGRATE | NP_PFN_TAIL)) ==
	       MIGRATE_PFN_MIGRATE;
}

/*
 * Unmap the pages to move of [@addr, @end), a run inside one page table
 * whose every page is one collect marked (target >= 0), under one notifier
 * range of exactly that run (np_pt_unmap()).
 */
static void np_pt_unmap_run(struct migrate_vma *args, s32 *target,
			    unsigned long addr, unsigned long end)
{
	struct vm_area_struct *vma = args->vma;
	struct mm_struct *mm = vma->vm_mm;
	unsigned long first = ULONG_MAX, last = 0, j, k, nr;
	struct folio *folio;
	struct page *page;
	spinlock_t *ptl;
	pmd_t *pmdp;
	pte_t *ptep;

	rcu_read_lock();
	pmdp = np_pt_pmd(mm, addr);
	if (pmdp && np_pt_thp_available() && end - addr == HPAGE_PMD_SIZE &&
	    pmd_trans_huge(np_pmdp_get(pmdp))) {
		j = (addr - args->start) >> PAGE_SHIFT;
		page = np_pt_unmap_pmd(vma, addr, pmdp, target + j);
		if (page) {
			np_pt_set_src(args, j, page, HPAGE_PMD_NR);
			pmdp = NULL;
		}
	}
	/* A table, also one a THP was split to since (else NULL). */
	ptep = pmdp ? np_pte_table_lock(mm, pmdp, addr, &ptl) : NULL;
	if (!ptep) {
		rcu_read_unlock();
		return;
	}
	for (; addr < end; addr += nr << PAGE_SHIFT, ptep += nr) {
		nr = 1;
		j = (addr - args->start) >> PAGE_SHIFT;
		page = np_pt_page(ptep_get(ptep), target[j]);
		if (!page)
			continue;
		folio = page_folio(page);
		if (!folio_test_large(folio)) {
			/*
			 * np_pt_set_src() and the range update of the large
			 * path, written out for one page: shared, they cost
			 * the 4 KiB unmap 3% (icount, 6.12).
			 */
			if (!np_pt_unmap_one(vma, addr, ptep, page))
				continue;
			args->src[j] = migrate_pfn(page_to_pfn(page)) |
				       MIGRATE_PFN_MIGRATE;
			first = min(first, addr);
			last = addr;
			continue;
		}
		/* Its other pages' PTEs fail np_pt_large_nr(). */
		k = np_pt_large_nr(folio, page, ptep, addr, end, target + j);
		if (!k || !np_pt_unmap_large(vma, addr, ptep, folio, k))
			continue;
		nr = k;
		np_pt_set_src(args, j, page, nr);
		first = min(first, addr);
		last = addr + ((nr - 1) << PAGE_SHIFT);
	}
	/* No CPU writes the old pages once this returns. */
	np_pt_flush(mm, first, last);
	spin_unlock(ptl);
	rcu_read_unlock();
}

/**
 * np_pt_unmap - unmap the pages of a VMA range the engine takes
 * @args: the range (vma, start, end) and its src array, one entry per page
 * @target: per page of the range, its target node, or -1: not one collect
 *	marked for this engine; set to -1 for a page unmapped with a
 *	reference besides ours (it gets no destination: restore maps it back)
 *
 * Fills @args->src: migrate_pfn() | MIGRATE_PFN_MIGRATE for each page now
 * behind a migration entry (NP_PFN_TAIL too for a large folio's pages
 * after its first), 0 for the rest (left where they are, answered by
 * resolve). Sets @args->npages.
 *
 * Secondary MMUs (KVM, an SVA device) are told of what may be unmapped and
 * nothing else: one notifier range per run of marked pages within a page
 * table, as try_to_migrate() sends one per folio mapping; a page left in
 * place, a gap, a hole gets none.
 */
void np_pt_unmap(struct migrate_vma *args, s32 *target)
{
	struct mm_struct *mm = args->vma->vm_mm;
	unsigned long addr, next, run, end, j, k;
	struct mmu_notifier_range range;
	struct folio *folio;

	args->npages = (args->end - args->start) >> PAGE_SHIFT;
	memset(args->src, 0, args->npages * sizeof(*args->src));
	update_hiwater_rss(mm);
	for (addr = args->start; addr < args->end; addr = next) {
		next = pmd_addr_end(addr, args->end);
		for (run = addr; run < next; run = end) {
			j = (run - args->start) >> PAGE_SHIFT;
			if (target[j] < 0) {
				end = run + PAGE_SIZE;
				continue;
			}
			for (end = run + PAGE_SIZE; end < next; end += PAGE_SIZE)
				if (target[(end - args->start) >> PAGE_SHIFT] < 0)
					break;
			/*
			 * Blockable, as mmu_notifier_invalidate_range_start()
			 * makes it: a subscriber may then not refuse. Should
			 * one anyway, the run stays mapped and its range is
			 * not ended (the kernel's wrapper WARNs).
			 */
			np_mmu_range_init(&range, args->vma, run, end);
			if (WARN_ON_ONCE(np_pt_range_start(&range)))
				continue;
			np_pt_unmap_run(args, target, run, end);
			np_pt_range_end(&range);
		}
	}
	/*
	 * A reference besides ours (the isolation's) is a holder that may
	 * still write the page (/proc/PID/mem, ptrace, a GUP without a pin):
	 * as __migrate_folio() checks before its copy, such a page gets no
	 * destination, and restore maps the old one back. None can be taken
	 * from here on but speculative ones, which folio_migrate_mapping()
	 * refuses.
	 */
	for (j = 0; j < args->npages; j++) {
		if (!np_pt_first(args, j))
			continue;
		folio = page_folio(migrate_pfn_to_page(args->src[j]));
		if (folio_ref_count(folio) != 1)
			for (k = 0; k < folio_nr_pages(folio); k++)
				target[j + k] = -1;
	}
}

/*
 * Does @pte still hold the migration entry of @old_pfn? Then *@entry: that
 * entry, decoded.
 */
static __always_inline bool np_pt_ours(pte_t pte, unsigned long old_pfn,
				       np_leaf_t *entry)
{
	if (pte_none(pte) || pte_present(pte))
		return false;
	*entry = np_leaf_from_pte(pte);
	return np_leaf_is_migration(*entry) && np_leaf_pfn(*entry) == old_pfn;
}

/*
 * remove_migration_pte() for one PTE: map @new, a page of @folio, where
 * @ptep still holds the migration entry of @old_pfn (else a zap took it
 * meanwhile: nothing to map, as the kernel's rmap walk would find
 * nothing). The entry is read and decoded once.
 */
static void np_pt_map_one(struct vm_area_struct *vma, unsigned long addr,
			  pte_t *ptep, unsigned long old_pfn,
			  struct folio *folio, struct page *new)
{
	pte_t old = ptep_get(ptep);
	np_leaf_t entry;

	if (!np_pt_ours(old, old_pfn, &entry))
		return;
	folio_get(folio);
	np_rmap_add_anon_ptes(np_ksyms.rmap_add_anon, folio, new, 1, vma, addr,
			      np_pt_entry_rmap(entry));
	set_pte_at(vma->vm_mm, addr, ptep,
		   np_pt_entry_pte(vma, old, entry, folio, new));
	/* No need to invalidate: it was non-present before. */
	update_mmu_cache(vma, addr, ptep);
}

/*
 * np_pt_map_one() for the @nr PTEs from @ptep of one large folio: the
 * pages of @folio from @new, in order, from @old_pfn's entries. The
 * kernel's walk adds a page's rmap at a time; here each run of PTEs with
 * the same exclusivity takes one call (one mapcount and statistics update
 * for the run).
 */
static noinline void np_pt_map(struct vm_area_struct *vma, unsigned long addr,
			       pte_t *ptep, unsigned long old_pfn,
			       struct folio *folio, struct page *new,
			       unsigned long nr)
{
	unsigned long idx = folio_page_idx(folio, new), k, n, i, a;
	np_leaf_t entry, e;
	rmap_t flags;
	pte_t old;

	for (k = 0; k < nr; k += n) {
		n = 1;
		if (!np_pt_ours(ptep_get(ptep + k), old_pfn + k, &entry))
			continue;
		flags = np_pt_entry_rmap(entry);
		while (k + n < nr &&
		       np_pt_ours(ptep_get(ptep + k + n), old_pfn + k + n, &e) &&
		       np_pt_entry_rmap(e) == flags)
			n++;
		folio_ref_add(folio, n);
		np_rmap_add_anon_ptes(np_ksyms.rmap_add_anon, folio,
				      folio_page(folio, idx + k), n, vma,
				      addr + (k << PAGE_SHIFT), flags);
		for (i = k; i < k + n; i++) {
			a = addr + (i << PAGE_SHIFT);
			old = ptep_get(ptep + i);
			e = np_leaf_from_pte(old);
			set_pte_at(vma->vm_mm, a, ptep + i,
				   np_pt_entry_pte(vma, old, e, folio,
						   folio_page(folio, idx + i)));
			update_mmu_cache(vma, a, ptep + i);
		}
	}
}

/* The entries entry @j of @args stands for (copy.h np_pfn_entries()). */
static unsigned long np_pt_nr(const struct migrate_vma *args, unsigned long j)
{
	return np_pfn_entries(args->src, args->npages, j);
}

/*
 * Move mapping and flags from each unmapped folio to its filled
 * destination (args->dst), as __migrate_folio() does after the copy; a
 * failure drops the destination (args->dst[j] = 0 for all its pages).
 * folio_migrate_mapping() takes a large folio off the deferred split
 * queue, frozen, as the kernel's move does.
 */
static void np_pt_move(struct migrate_vma *args)
{
	bool deferred, partially;
	struct folio *src, *dst;
	unsigned long j;

	for (j = 0; j < args->npages; j++) {
		if (!np_pt_first(args, j) || !args->dst[j])
			continue;
		src = page_folio(migrate_pfn_to_page(args->src[j]));
		dst = page_folio(migrate_pfn_to_page(args->dst[j]));
		/* Read as migrate_folio_move() reads it: order 2 and up. */
		deferred = folio_order(src) > 1 && np_folio_deferred(src);
		partially = deferred && np_folio_partially_mapped(src);
		/* Our one reference (the isolation's) and no other. */
		if (folio_migrate_mapping(NULL, dst, src, 0)) {
			folio_unlock(dst);
			folio_put(dst);
			memset(args->dst + j, 0,
			       folio_nr_pages(src) * sizeof(*args->dst));
			continue;
		}
		folio_migrate_flags(dst, src);
		np_pt_requeue(dst, deferred, partially);
	}
}

/*
 * Done with a large source folio that did not move, mapped again, whose
 * @nr pages start at chunk index @idx: to the next engine, the kernel's,
 * as collect would have isolated it for it (still isolated, with the
 * isolation's reference; migrate_pages() splits it where it cannot move
 * it whole, as for the syscall). Its pages are the kernel engine's from
 * now on: resolve answers them, no busy pass takes them again, and
 * migrate_pages() counts its own failures. Return: false when the call
 * has no kernel engine, is being killed, or knows the node is full (its
 * -ENOMEM is the answer; the kernel would split the folio for nothing).
 */
static noinline bool np_pt_to_kernel(struct np_mig *m, struct folio *folio,
				     unsigned int idx, unsigned long nr)
{
	int target = m->target[idx];

	if (!(m->engines & NUMAPLACE_ENGINE_KERNEL) || target < 0 ||
	    m->node_err[target] || fatal_signal_pending(current))
		return false;
	folio_unlock(folio);
	list_add_tail(&folio->lru, &m->lists[target]);
	m->nr_listed[target]++;
	bitmap_clear(m->vma_pending, idx, nr);
	return true;
}

/**
 * np_pt_restore - move and remap a range np_pt_unmap() unmapped
 * @m: the call
 * @args: the range; dst[j]: the filled destination of src[j], or 0
 * @idx0: chunk index of the range's first page
 *
 * On return every page is mapped again (the new one where it moved, else
 * the old one), off the locks and on the LRU, or for a large folio that
 * did not move, on the kernel engine's list; dst[j] is still set for the
 * pages that moved (0 for the others), for the caller's answers.
 */
void np_pt_restore(struct np_mig *m, struct migrate_vma *args,
		   unsigned int idx0)
{
	struct vm_area_struct *vma = args->vma;
	struct mm_struct *mm = vma->vm_mm;
	unsigned long addr, next, j, nr;
	struct page *spage, *dpage;
	struct folio *src, *dst;
	spinlock_t *ptl;
	pmd_t *pmdp;
	pte_t *ptep;

	np_pt_move(args);
	for (addr = args->start; addr < args->end; addr = next) {
		next = pmd_addr_end(addr, args->end);
		rcu_read_lock();
		pmdp = np_pt_pmd(mm, addr);
		j = (addr - args->start) >> PAGE_SHIFT;
		/* A THP np_pt_unmap_pmd() unmapped starts its table's range. */
		if (pmdp && np_pt_thp_available() &&
		    (args->src[j] & MIGRATE_PFN_MIGRATE) &&
		    np_pt_nr(args, j) == HPAGE_PMD_NR) {
			spage = migrate_pfn_to_page(args->src[j]);
			dpage = args->dst[j] ? migrate_pfn_to_page(args->dst[j]) :
					       spage;
			if (np_pt_map_pmd(vma, addr, pmdp, page_to_pfn(spage),
					  page_folio(dpage))) {
				rcu_read_unlock();
				continue;
			}
		}
		ptep = pmdp ? np_pte_table_lock(mm, pmdp, addr, &ptl) : NULL;
		/* A folio's entries are in one table (np_pt_large_nr()). */
		for (; ptep && addr < next; addr += PAGE_SIZE, ptep++) {
			j = (addr - args->start) >> PAGE_SHIFT;
			if (!np_pt_first(args, j))
				continue;
			nr = np_pt_nr(args, j);
			spage = migrate_pfn_to_page(args->src[j]);
			dpage = args->dst[j] ? migrate_pfn_to_page(args->dst[j]) :
					       spage;
			if (nr == 1)
				np_pt_map_one(vma, addr, ptep,
					      page_to_pfn(spage),
					      page_folio(dpage), dpage);
			else
				np_pt_map(vma, addr, ptep, page_to_pfn(spage),
					  page_folio(dpage), dpage, nr);
		}
		if (ptep)
			spin_unlock(ptl);
		rcu_read_unlock();
	}
	/* The LRU for the batch, off the page table locks. */
	for (j = 0; j < args->npages; j++) {
		if (!np_pt_first(args, j))
			continue;
		src = page_folio(migrate_pfn_to_page(args->src[j]));
		if (args->dst[j]) {
			dst = page_folio(migrate_pfn_to_page(args->dst[j]));
			folio_unlock(dst);
			folio_add_lru(dst);
			folio_put(dst);	/* the allocation's reference */
		} else if (folio_test_large(src) &&
			   np_pt_to_kernel(m, src, idx0 + j,
					   folio_nr_pages(src))) {
			continue;
		}
		np_pt_src_done(src, !args->dst[j]);
	}
}

/* INFO's MIGRATE_PT_THP: the engine moves PMD-mapped THPs here. */
static u64 np_engine_pt_features(void)
{
	return np_pt_thp_available() ? NUMAPLACE_FEAT_MIGRATE_PT_THP : 0;
}

/*
 * A strategy of the batched engine (np_pt_unmap() and np_pt_restore() are
 * its unmap and restore in the VMAs np_pt_takes_vma() takes): it has no
 * steps of its own, and needs the batched engine; what it leaves goes to
 * the batched engine, and the rest to the kernel engine.
 */
const struct np_engine_ops np_engine_pt_ops = {
	NP_ENGINE(pt, PT),
	.needs = NUMAPLACE_ENGINE_BATCH,
	.with = NUMAPLACE_ENGINE_BATCH | NUMAPLACE_ENGINE_KERNEL,
	.available = np_engine_pt_available,
	.features = np_engine_pt_features,
};
