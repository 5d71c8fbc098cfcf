// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: collect for MIGRATE. The walker's runs (locked, physically
 * contiguous) become folios, each handled once, with move_pages(2)'s
 * checks in its order (6.12's add_folio_for_migration()): VMA migratable,
 * a page there, not already on its target, not shared without MOVE_ALL,
 * isolated. What an engine takes is answered after it ran: resolve walks
 * the pages again and reports the node each one is on.
 */
#include <linux/dax.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/vmstat.h>

#include "migrate.h"
#include "compat.h"

/* Record @err for @n chunk indexes from @i: not moved, and why. */
void np_mig_fail(struct np_mig *m, unsigned int i, unsigned int n, int err)
{
	while (n--)
		m->status[i++] = err;
}

/*
 * Call @fn on the parts of a round's stretches that this pass handles:
 * every stretch below TASK_SIZE_MAX in the first pass; in a retry pass
 * (m->busy.retry), each run of busy chunk indexes within one.
 */
void np_mig_parts(struct np_mig *m, const struct np_stretch *st,
		  unsigned int nr, np_part_fn fn)
{
	unsigned int s, idx, b, e, end;

	for (s = 0, idx = 0; s < nr; idx += st[s++].nr_pages) {
		if (st[s].start >= TASK_SIZE_MAX)
			continue;
		if (!m->busy.retry) {
			fn(m, st[s].start, idx, st[s].nr_pages);
			continue;
		}
		end = idx + st[s].nr_pages;
		for (b = find_next_bit(m->busy.pages, end, idx); b < end;
		     b = find_next_bit(m->busy.pages, end, e)) {
			e = find_next_zero_bit(m->busy.pages, end, b);
			fn(m, st[s].start + ((unsigned long)(b - idx) << PAGE_SHIFT),
			   b, e - b);
		}
	}
}

/*
 * vma_migratable() (unexported) without its policy_zone test (unexported
 * data; on x86-64 no file mapping's gfp zone is below ZONE_NORMAL).
 */
static bool np_vma_migratable(struct vm_area_struct *vma)
{
	if (!vma || vma->vm_flags & (VM_IO | VM_PFNMAP))
		return false;
	if (vma_is_dax(vma))
		return false;
	if (is_vm_hugetlb_page(vma) &&
	    !hugepage_migration_supported(hstate_vma(vma)))
		return false;
	return true;
}

/* -ENODEV or -EACCES for a target the syscall would refuse, else 0. */
int np_mig_node_check(const struct np_mig *m, int nid)
{
	if (nid < 0 || nid >= MAX_NUMNODES || !node_state(nid, N_MEMORY))
		return -ENODEV;
	if (!node_isset(nid, m->mems))
		return -EACCES;
	return 0;
}

/*
 * The target of a new folio whose first page here is chunk index @i. A
 * retry pass keeps the one the first pass gave (an interleave set moves
 * on per folio).
 */
static int np_mig_target(struct np_mig *m, unsigned int i)
{
	int nid;

	if (m->busy.retry)
		return m->target[i];
	switch (m->a->policy) {
	case NUMAPLACE_POLICY_PER_PAGE:
		return m->target[i];
	case NUMAPLACE_POLICY_INTERLEAVE:
		nid = m->next_node;
		m->next_node = next_node_in(nid, *(nodemask_t *)m->a->node_set);
		return nid;
	case NUMAPLACE_POLICY_CPU:
		return cpu_to_node(m->a->cpu);
	default:
		return m->a->node;
	}
}

/*
 * Private anonymous, order 0, mapped once, not in the swap cache: what
 * migrate_vma_*() moves (and the page-table engine, with its large
 * folios, np_pt_takes_large()). A swap-cache folio may be under writeback (mapped
 * again by do_swap_page() while its write is in flight), and
 * migrate_vma_pages() does not wait for writeback: it BUG()s on it
 * (migrate_folio_extra()). Those go to the kernel engine, which waits; the
 * engines check again once setup has locked the folio (np_vma_src_ok()).
 * @n: its pages in this run, from @page; @pmd: the run is a PMD mapping.
 */
static bool np_vma_engine_takes(struct np_mig *m, struct folio *folio,
				struct page *page, unsigned int n, bool pmd)
{
	struct vm_area_struct *vma = m->w.vma;

	if (!(m->engines & (NUMAPLACE_ENGINE_VMA | NUMAPLACE_ENGINE_BATCH)) ||
	    !vma_is_anonymous(vma) || folio_test_ksm(folio) ||
	    folio_test_swapcache(folio) || folio_test_writeback(folio) ||
	    np_mapped_shared(folio, page))
		return false;
	if (!folio_test_large(folio))
		return true;
	if (np_pt_takes_large(m, folio, page, n, pmd))
		return true;
	/*
	 * It splits a PMD-mapped THP: only when the caller allows it. A
	 * PTE-mapped large folio it skips (PageTransCompound PTEs): never.
	 */
	return (m->a->flags & NUMAPLACE_MIGRATE_SPLIT_OK) && pmd &&
	       folio_test_pmd_mappable(folio);
}

/* The address of chunk index @i of the stretch being walked. */
static unsigned long np_mig_addr(const struct np_mig *m, unsigned int i)
{
	return m->base + ((unsigned long)(i - m->idx0) << PAGE_SHIFT);
}

/*
 * Chunk indexes [@i, @i + @n) go to an engine, to @target. @head: 1 + the
 * order of the folio they begin (its first pages in the round), or 0 for
 * more pages of the folio before them: where the batched engine reserves
 * a destination of that order before it unmaps (m->head_order).
 */
static void np_mig_pending(struct np_mig *m, unsigned int i, unsigned int n,
			   int target, bool vma, u8 head)
{
	unsigned int k;

	for (k = i; k < i + n; k++)
		m->target[k] = target;
	bitmap_set(m->pending, i, n);
	if (vma) {
		bitmap_set(m->vma_pending, i, n);
		m->prev.vma_idx = i + n - 1;
		m->prev.vma = m->w.vma;
		if (m->head_order) {
			m->head_order[i] = head;
			if (n > 1)
				memset(m->head_order + i + 1, 0, n - 1);
		}
	}
}

/*
 * The batched engine unmaps a VMA range from its first to its last page to
 * move: a page in between that it must leave alone (in place, shared, the
 * kernel engine's) would be unmapped, isolated and remapped for nothing.
 * Holding its lock keeps it out (migrate_vma_setup() skips a page it
 * cannot trylock) for the price of a lock and a reference, until the
 * ranges that may cover it are set up (np_collect_release_below()). Not
 * when the round's address array names a page twice, or may (!m->ascending):
 * the page held as in place could be named again to move. Never in a VMA
 * the page-table engine takes: it touches only the pages marked for it
 * (np_pt_unmap()), so a range spans any other page there unlocked.
 */
static void np_collect_hold(struct np_mig *m, struct folio *folio,
			    unsigned int i)
{
	if (!m->hold.folios || !m->ascending || m->prev.vma != m->w.vma ||
	    i - m->prev.vma_idx > NP_BATCH_GAP || folio_test_large(folio) ||
	    m->hold.nr >= m->chunk || np_pt_takes_vma(m, m->w.vma) ||
	    !folio_trylock(folio))
		return;
	folio_get(folio);
	m->hold.idx[m->hold.nr] = i;
	m->hold.folios[m->hold.nr++] = folio;
	set_bit(i, m->gap_ok);
}

/*
 * May migrate_vma ranges cover chunk indexes [@from, @to), pages they do
 * not move? migrate_vma_setup() unmaps every page it can lock in its
 * range, in every mm that maps it (try_to_migrate()), and splits THPs: a
 * page shared with another process, a KSM page, one the kernel engine
 * isolated, a PROT_NONE (NUMA-hinting) page that 6.1's AS_SYSCALL answers
 * -ENOENT, the huge zero page, would all be touched for nothing. Only
 * indexes in @gap_ok: collect holds the folio locked (setup skips it), or
 * collect saw no page setup would take (never touched, the small zero
 * page).
 */
bool np_range_spans_ok(const struct np_mig *m, unsigned int from,
		       unsigned int to)
{
	unsigned int k;

	for (k = from; k < to; k++)
		if (!test_bit(k, m->vma_pending) && !test_bit(k, m->gap_ok))
			return false;
	return true;
}

/*
 * Unlock what np_collect_hold() held below chunk index @idx: the ranges
 * that could cover them are set up (migrate_vma_setup() has passed them
 * over), and the ranges still to come start at @idx or later. Held in
 * chunk index order: the first one at @idx or later stops it.
 */
void np_collect_release_below(struct np_mig *m, unsigned int idx)
{
	struct folio *folio;

	for (; m->hold.nr_unlocked < m->hold.nr; m->hold.nr_unlocked++) {
		if (m->hold.idx[m->hold.nr_unlocked] >= idx)
			break;
		folio = m->hold.folios[m->hold.nr_unlocked];
		clear_bit(m->hold.idx[m->hold.nr_unlocked], m->gap_ok);
		folio_unlock(folio);
		folio_put(folio);
	}
}

/* Unlock all np_collect_hold() held: the batched engine's unmap is done. */
void np_collect_release(struct np_mig *m)
{
	np_collect_release_below(m, UINT_MAX);
	bitmap_zero(m->gap_ok, m->chunk);
	m->hold.nr = 0;
	m->hold.nr_unlocked = 0;
}

/*
 * Do chunk indexes [@i, @i + @n) share one target? In a retry pass a
 * large folio moves as one only then: collapsed from pages a per-page
 * policy sent to different nodes, it stays (-EBUSY).
 */
static bool np_mig_one_target(const struct np_mig *m, unsigned int i,
			      unsigned int n)
{
	unsigned int k;

	for (k = i + 1; k < i + n; k++)
		if (m->target[k] != m->target[i])
			return false;
	return true;
}

/*
 * Does the call keep a record of @folio (module/seen.c)? Only where
 * targets may differ from folio to folio, so that a folio met again could
 * be sent elsewhere: PER_PAGE, INTERLEAVE. A large folio always; an
 * order-0 one where an address may be named twice (m->seen_small).
 */
static bool np_collect_recorded(const struct np_mig *m, struct folio *folio)
{
	return m->seen_on && (m->seen_small || folio_test_large(folio));
}

/*
 * Has the call met @folio before, at another of its pages (the one at
 * chunk index @i is @page)? Asked of its whole span where it maps
 * linearly around @page: a THP's, an mTHP's, a hugetlb page's.
 */
static enum np_seen_what np_collect_met(struct np_mig *m, struct folio *folio,
					struct page *page, unsigned int i)
{
	unsigned long addr, off, lo;

	if (!np_collect_recorded(m, folio))
		return NP_SEEN_NONE;
	addr = np_mig_addr(m, i);
	off = (unsigned long)folio_page_idx(folio, page) << PAGE_SHIFT;
	lo = addr >= off ? addr - off : 0;
	return np_seen_span(&m->seen, lo, lo + folio_size(folio));
}

/*
 * Record @n pages from chunk index @i of @folio as @what. 0, or -ENOMEM
 * (no memory for the record: the caller must not hand the folio on).
 */
static int np_collect_mark(struct np_mig *m, struct folio *folio,
			   unsigned int i, unsigned int n,
			   enum np_seen_what what)
{
	if (!np_collect_recorded(m, folio))
		return 0;
	return np_seen_mark(&m->seen, np_mig_addr(m, i), n, what);
}

/*
 * Pages of a folio an earlier entry of this pass handed to an engine:
 * moving it again for them would undo that, so no engine takes them;
 * resolve answers them by where the folio is then (np_resolve_again()).
 * Their answer is recorded as theirs (the earlier entry's may fail), or
 * they answer -ENOMEM now.
 */
static void np_mig_again(struct np_mig *m, struct folio *folio,
			 unsigned int i, unsigned int n, int target)
{
	unsigned int k;

	if (np_collect_mark(m, folio, i, n, NP_SEEN_PENDING)) {
		np_mig_fail(m, i, n, -ENOMEM);
		return;
	}
	if (m->a->policy != NUMAPLACE_POLICY_PER_PAGE)
		for (k = i; k < i + n; k++)
			m->target[k] = target;
	bitmap_set(m->pending, i, n);
	bitmap_set(m->again, i, n);
}

/*
 * One folio of @run, @n of whose pages start at chunk index @i (the first
 * of them @page). A folio the call met before stays where it is (one move
 * per folio a call): the pages answered then name the node it is on when
 * the call returns. What the call asks of it now is answered by where it
 * is: its node where that is the page's target, else -EBUSY, as the
 * syscall answers a page of a folio an earlier entry took.
 */
static void np_collect_folio(struct np_mig *m, const struct np_run *run,
			     struct folio *folio, struct page *page,
			     unsigned int i, unsigned int n)
{
	int nid = run->status, target;
	enum np_seen_what met;
	bool vma = false;

	if (folio == m->prev.folio) {
		/*
		 * Best effort: the folio's first pages, which share these
		 * pages' fate (one target, one move), hold its record.
		 */
		np_collect_mark(m, folio, i, n, NP_SEEN_PENDING);
		np_mig_pending(m, i, n, m->prev.target, m->prev.to_vma, 0);
		return;
	}
	/*
	 * A retry pass walks only busy pages: a large folio whole in its run
	 * is all busy (one the page-table engine left, say). One of which it
	 * sees only part, as a page collapsed into a large folio meanwhile
	 * (khugepaged, the mmap lock was dropped), stays: moving the folio
	 * would move pages whose answers are written. So does one whose
	 * pages the first pass sent to different nodes.
	 */
	if (m->busy.retry && folio_test_large(folio) &&
	    (page != &folio->page || n != folio_nr_pages(folio) ||
	     !np_mig_one_target(m, i, n))) {
		np_mig_fail(m, i, n, -EBUSY);
		return;
	}
	target = np_mig_target(m, i);
	met = np_collect_met(m, folio, page, i);
	if (met == NP_SEEN_PENDING) {
		np_mig_again(m, folio, i, n, target);
		return;
	}
	if (nid == target) {
		/*
		 * In place: the answer is the node, and the folio stays for
		 * the rest of the call (or -ENOMEM: that could not be noted).
		 */
		if (np_collect_mark(m, folio, i, n, NP_SEEN_ANSWERED)) {
			np_mig_fail(m, i, n, -ENOMEM);
			return;
		}
		np_mig_fail(m, i, n, nid);
		m->a->nr_in_place_pages += n;
		np_collect_hold(m, folio, i);
		return;
	}
	if (!(m->a->flags & NUMAPLACE_MIGRATE_MOVE_ALL) &&
	    np_mapped_shared(folio, page)) {
		np_mig_fail(m, i, n, -EACCES);
		np_collect_hold(m, folio, i);
		return;
	}
	if (!node_isset(target, m->caller_mems)) {
		/* The syscall's allocation would fail in the caller's cpuset. */
		np_mig_fail(m, i, n, -ENOMEM);
		np_collect_hold(m, folio, i);
		return;
	}
	if (met == NP_SEEN_ANSWERED) {
		/* Taken by an earlier entry: it stays on @nid. */
		np_mig_fail(m, i, n, -EBUSY);
		np_collect_hold(m, folio, i);
		return;
	}
	/* Later entries must find it taken, or it is not handed on. */
	if (np_collect_mark(m, folio, i, n, NP_SEEN_PENDING)) {
		np_mig_fail(m, i, n, -ENOMEM);
		return;
	}
	vma = np_vma_engine_takes(m, folio, page, n,
				  run->kind & NUMAPLACE_KIND_PMD);
	if (!vma) {
		/* A folio only the kernel engine moves. */
		if (!(m->engines & NUMAPLACE_ENGINE_KERNEL)) {
			np_mig_fail(m, i, n, -EBUSY);
			return;
		}
		/*
		 * Isolation fails for a folio racing, pinned, or isolated by
		 * this very call (named again further on): answered after the
		 * engines ran, by where it is then (-EBUSY if not moved).
		 */
		if (np_engine_kernel_isolate(folio, &m->lists[target]))
			m->nr_listed[target]++;
		np_collect_hold(m, folio, i);
	}
	np_mig_pending(m, i, n, target, vma, folio_order(folio) + 1);
	m->prev.folio = folio;
	m->prev.target = target;
	m->prev.to_vma = vma;
}

static unsigned long np_collect_emit(struct np_walk *w, const struct np_run *run)
{
	struct np_mig *m = container_of(w, struct np_mig, w);
	unsigned int i = m->idx0 + ((run->start - m->base) >> PAGE_SHIFT);
	unsigned long n = run->nr_pages, k, nr;
	struct folio *folio;
	struct page *page;

	if (!np_vma_migratable(w->vma)) {
		np_mig_fail(m, i, n, -EFAULT);
		return n;
	}
	if (!(run->kind & NUMAPLACE_KIND_PRESENT) || run->status < 0) {
		np_mig_fail(m, i, n, run->status);
		m->prev.folio = NULL;
		/* Nothing there a range could unmap or split (see gap_ok). */
		if ((run->kind & NUMAPLACE_KIND_NONE) ||
		    (run->kind & (NUMAPLACE_KIND_ZERO | NUMAPLACE_KIND_PMD)) ==
		    NUMAPLACE_KIND_ZERO)
			bitmap_set(m->gap_ok, i, n);
		return n;
	}
	/* Present, physically contiguous, and this entry's lock is held. */
	for (k = 0; k < n; k += nr) {
		page = pfn_to_page(run->pfn + k);
		folio = page_folio(page);
		nr = min_t(unsigned long, n - k,
			   folio_nr_pages(folio) - folio_page_idx(folio, page));
		np_collect_folio(m, run, folio, page, i + k, nr);
	}
	return n;
}

/*
 * A page of a folio an earlier entry handed to an engine (np_mig_again()),
 * now on @nid (or gone: an errno): the node where it is its target, else
 * -EBUSY.
 */
static void np_resolve_again(struct np_mig *m, unsigned int k, int nid)
{
	if (nid == m->target[k]) {
		m->status[k] = nid;
		m->a->nr_in_place_pages++;
	} else {
		m->status[k] = nid < 0 ? nid : -EBUSY;
	}
}

/* Answer what the engines took: the node each page is on now. */
static unsigned long np_resolve_emit(struct np_walk *w, const struct np_run *run)
{
	struct np_mig *m = container_of(w, struct np_mig, w);
	unsigned int i = m->idx0 + ((run->start - m->base) >> PAGE_SHIFT);
	unsigned long k;

	for (k = i; k < i + run->nr_pages; k++) {
		if (!test_bit(k, m->pending))
			continue;
		if (test_bit(k, m->again)) {
			np_resolve_again(m, k, run->status);
		} else if (run->status == m->target[k]) {
			m->status[k] = run->status;
			m->a->nr_moved_pages++;
		} else {
			m->status[k] = m->node_err[m->target[k]] ?: -EBUSY;
		}
	}
	return run->nr_pages;
}

void np_collect_begin(struct np_mig *m)
{
	m->prev.folio = NULL;
	m->prev.vma = NULL;
}

/* Collect @nr_pages from @start, chunk indexes from @idx0. Locks held. */
void np_collect_stretch(struct np_mig *m, unsigned long start,
			unsigned int idx0, unsigned int nr_pages)
{
	m->w.emit = np_collect_emit;
	m->w.flags |= NP_WALK_LOCKED | NP_WALK_PFN_CONTIG;
	m->prev.vma = NULL;
	m->base = start;
	m->idx0 = idx0;
	np_walk_range(&m->w, start, start + ((unsigned long)nr_pages << PAGE_SHIFT));
}

void np_resolve_stretch(struct np_mig *m, unsigned long start,
			unsigned int idx0, unsigned int nr_pages)
{
	if (find_next_bit(m->pending, idx0 + nr_pages, idx0) >= idx0 + nr_pages)
		return;
	m->w.emit = np_resolve_emit;
	m->w.flags &= ~(NP_WALK_LOCKED | NP_WALK_PFN_CONTIG);
	m->base = start;
	m->idx0 = idx0;
	np_walk_range(&m->w, start, start + ((unsigned long)nr_pages << PAGE_SHIFT));
}
