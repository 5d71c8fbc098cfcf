// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the batched engine, for private anonymous order-0 pages (THPs
 * only when the caller allows a split), on the exported device-migration
 * API. A round goes in batches of at most NP_BATCH_WINDOW_PAGES pages:
 *  - reserve, for the page-table engine's ranges: before a range is
 *    unmapped, a destination for each folio to move, on its target node,
 *    of its order (np_copy_reserve(), as migrate_pages() allocates before
 *    it unmaps); a node that runs out ends the range there, and its pages
 *    are not unmapped;
 *  - unmap: one migrate_vma_setup() per VMA range from the first to the
 *    last page to move (cut at NP_BATCH_GAP pages not moved): it isolates
 *    and unmaps them with one TLB flush per page table for pages not
 *    exclusive to the process (anon-exclusive ones are cleared with a flush
 *    each, the kernel's choice); pages in place in between are kept out by
 *    collect (np_collect_hold()) until the ranges are set up; the
 *    page-table engine's ranges (np_pt_unmap()) touch only the pages to
 *    move. Pages whose target node ran out earlier in the call are not
 *    unmapped again: they stay, answered -ENOMEM;
 *  - allocate and copy: destinations on the target nodes, in bulk (the
 *    page-table engine's reservations that fit what was unmapped; a page
 *    whose folio was split since collect gets its destination here),
 *    filled by a pool of copy workers (module/copy.c), or a DMA engine;
 *  - restore: migrate_vma_pages() moves mapping and flags,
 *    migrate_vma_finalize() remaps every page (the new one, or the old one
 *    where anything failed: the data stays where it was) and puts the
 *    batch back.
 * No kernel internals and no IBT question. Runs under the mmap lock held
 * for read since collect, outside RCU. No page lock of collect's is held
 * while a batch copies (design.md), nor in a page-table engine's VMA, whose
 * destinations are reserved before its range is unmapped; in a round that
 * mixes VMAs, collect may still hold pages of a later migrate_vma_setup()
 * range then (reclaim and compaction only trylock them).
 */
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "migrate.h"
#include "copy.h"
#include "stats.h"

/*
 * VMA ranges set up before a batch is copied and restored. A round in more
 * ranges (fragmented by holes, other VMAs, pages of the kernel engine) is
 * copied and restored in several batches: the struct migrate_vma array is
 * per call, 64 ranges keep it within a page.
 */
#define NP_BATCH_SEGS_MAX	64
/*
 * Pages set up (reserved and unmapped; in a migrate_vma_setup() range,
 * unmapped and then given destinations) before a batch is copied and
 * restored: the destinations are held on top of the sources, uncharged
 * until migrate_vma_pages() moves the charge (on 6.1 it charges them by
 * force while the sources wait for finalize), so a round of up to
 * NUMAPLACE_BATCH_PAGES_MAX pages goes in windows of 8 MiB.
 */
#define NP_BATCH_WINDOW_BYTES	SZ_8M
#define NP_BATCH_WINDOW_PAGES	(NP_BATCH_WINDOW_BYTES >> PAGE_SHIFT)
static_assert(NP_BATCH_WINDOW_BYTES >= 4 * PMD_SIZE);

/* The per-call state, sized for a round of m->chunk pages. */
struct np_batch {
	unsigned long *src, *dst;
	s32 *target;
	struct page **pages;
	unsigned int *slots;
	bool dma;
	bool dma_failed;	/* a DMA copy failed: the CPU copies from now on */
	struct dma_chan *chan;
	struct migrate_vma segs[NP_BATCH_SEGS_MAX];
	unsigned int seg_idx[NP_BATCH_SEGS_MAX];	/* chunk index of a range's first page */
	bool seg_pt[NP_BATCH_SEGS_MAX];	/* unmapped by the page-table engine */
	unsigned int nr_segs;
	unsigned int used;		/* entries of src/dst in use */
	u64 alloc_ns;		/* reserving destinations, since the last flush */
	u64 unmap_ns;
	u64 pt_unmap_ns;
};

/* The call's state: the batched engine's m->priv. */
static struct np_batch *np_batch(const struct np_mig *m)
{
	return m->priv;
}

static bool np_engine_batch_available(void)
{
	return IS_ENABLED(CONFIG_MIGRATION) && IS_ENABLED(CONFIG_DEVICE_MIGRATION);
}

static void np_engine_batch_end(struct np_mig *m)
{
	struct np_batch *b = m->priv;

	if (!b)
		return;
	np_copy_dma_put(b->chan);
	kvfree(b);
	m->priv = NULL;
	m->hold.folios = NULL;
	m->hold.idx = NULL;
	m->head_order = NULL;
}

/* The call's state and arrays, a round's worth of each, in one block. */
static int np_engine_batch_begin(struct np_mig *m)
{
	size_t bytes = 0, src, dst, target, pages, slots, held, held_idx,
	       head_order;
	unsigned int n = m->chunk;
	struct np_batch *b;
	void *base;

	np_carve(&bytes, 1, sizeof(*b));
	src = np_carve(&bytes, n, sizeof(*b->src));
	dst = np_carve(&bytes, n, sizeof(*b->dst));
	target = np_carve(&bytes, n, sizeof(*b->target));
	pages = np_carve(&bytes, n, sizeof(*b->pages));
	slots = np_carve(&bytes, n, sizeof(*b->slots));
	held = np_carve(&bytes, n, sizeof(*m->hold.folios));
	held_idx = np_carve(&bytes, n, sizeof(*m->hold.idx));
	head_order = np_carve(&bytes, n, sizeof(*m->head_order));
	base = np_call_array_alloc(bytes, 1, 0);
	if (!base)
		return -ENOMEM;
	b = base;
	memset(b, 0, sizeof(*b));
	b->src = base + src;
	b->dst = base + dst;
	b->target = base + target;
	b->pages = base + pages;
	b->slots = base + slots;
	m->hold.folios = base + held;
	m->hold.idx = base + held_idx;
	m->head_order = base + head_order;
	m->priv = b;
	b->dma = READ_ONCE(np_config.dma);
	if (b->dma)
		b->chan = np_copy_dma_get();
	return 0;
}

/*
 * Reserve the destinations of a page-table range's @cb->nr pages from
 * chunk index @i before it is unmapped. Return: how many of its pages to
 * set up: all, or those before the first page whose node ran out (none
 * from there is unmapped).
 */
static unsigned int np_batch_reserve(struct np_mig *m, struct np_copy_batch *cb,
				     unsigned int i)
{
	unsigned int nr;

	cb->head = m->head_order + i;
	nr = np_copy_reserve(cb);
	np_batch(m)->alloc_ns += cb->alloc_ns;
	if (nr < cb->nr) {
		np_copy_reserve_cut(cb, nr);
		/* Its first failure, as migrate_pages() counts it. */
		count_vm_event(PGMIGRATE_FAIL);
	}
	return nr;
}

/*
 * Set up [@i, @last] of a stretch from @start: collect, isolate and unmap;
 * in a VMA the page-table engine takes, reserve the destinations first and
 * unmap only what got one (as migrate_pages() allocates before it
 * unmaps). migrate_vma_setup()'s ranges keep the device-migration API's
 * order (unmap, then the caller allocates): collect holds their in-place
 * pages locked until they are set up, and no allocation is made under
 * those locks. Return: the chunk index after the pages set up, @last + 1,
 * or the first page whose node ran out of memory: the caller goes on from
 * it without that node's pages, as migrate_pages() stops at its first
 * -ENOMEM.
 */
static unsigned int np_batch_setup(struct np_mig *m, struct vm_area_struct *vma,
				   unsigned long start, unsigned int idx0,
				   unsigned int i, unsigned int last)
{
	struct np_batch *b = np_batch(m);
	struct migrate_vma *args = &b->segs[b->nr_segs];
	unsigned int nr = last - i + 1, k;
	bool pt = np_pt_takes_vma(m, vma);
	s32 *target = b->target + b->used;
	struct np_copy_batch cb = {
		.src = b->src + b->used,
		.dst = b->dst + b->used,
		.target = target,
		.nr = nr,
		.node_err = m->node_err,
		.pages = b->pages + b->used,
		.slots = b->slots + b->used,
	};
	u64 t0;
	int ret;

	/* Killed: nothing more is set up, the answers so far stand. */
	if (fatal_signal_pending(current))
		return last + 1;
	for (k = 0; k < nr; k++)
		target[k] = test_bit(i + k, m->vma_pending) ? m->target[i + k] : -1;
	if (pt)
		nr = np_batch_reserve(m, &cb, i);
	else
		memset(cb.dst, 0, nr * sizeof(*cb.dst));
	if (!nr)
		return i;
	t0 = ktime_get_ns();
	*args = (struct migrate_vma) {
		.vma = vma,
		.start = start + ((unsigned long)(i - idx0) << PAGE_SHIFT),
		.end = start + ((unsigned long)(i + nr - idx0) << PAGE_SHIFT),
		.src = cb.src,
		.dst = cb.dst,
		.flags = MIGRATE_VMA_SELECT_SYSTEM,
	};
	if (pt) {
		np_pt_unmap(args, target);
		b->pt_unmap_ns += ktime_get_ns() - t0;
		cb.nr = nr;
		np_copy_reserve_check(&cb);
	} else {
		ret = migrate_vma_setup(args);
		b->unmap_ns += ktime_get_ns() - t0;
		if (ret)
			return i + nr;	/* left pending: resolve answers -EBUSY */
	}
	b->seg_pt[b->nr_segs] = pt;
	b->seg_idx[b->nr_segs] = i;
	b->used += args->npages;
	b->nr_segs++;
	return i + nr;
}

/*
 * A page moved: answer it here (the node it is on is its target), so that
 * resolve does not walk it again; pages not moved stay pending, resolve
 * answers them (-ENOMEM, -EBUSY, or where a page named twice ended up).
 * @nr: the pages of the folio whose first page this is, 0 for the others
 * (a large folio's, NP_PFN_TAIL: counted with its first).
 */
static void np_batch_moved(struct np_mig *m, unsigned int idx,
			   unsigned long src, unsigned long dst,
			   unsigned int engine, unsigned int nr)
{
	int to = page_to_nid(migrate_pfn_to_page(dst));

	if (nr) {
		np_stat_folio_moved(page_to_nid(migrate_pfn_to_page(src)), to,
				    ilog2(nr), 1);
		m->a->nr_moved_folios++;
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
		/* As migrate_pages() counts a PMD-sized folio it moved. */
		if (nr == HPAGE_PMD_NR)
			count_vm_event(THP_MIGRATION_SUCCESS);
#endif
	}
	/*
	 * migrate_vma_pages() counts no vmstat event: migrate_pages() would,
	 * a page at a time.
	 */
	count_vm_event(PGMIGRATE_SUCCESS);
	m->a->engines |= engine;
	if (test_bit(idx, m->vma_pending) && m->target[idx] == to) {
		clear_bit(idx, m->pending);
		m->status[idx] = to;
		m->a->nr_moved_pages++;
	}
}

/* Copy and restore what is set up. */
static void np_batch_flush(struct np_mig *m)
{
	struct np_batch *b = np_batch(m);
	struct np_copy_batch cb = {
		.src = b->src,
		.dst = b->dst,
		.target = b->target,
		.nr = b->used,
		.node_err = m->node_err,
		.pages = b->pages,
		.slots = b->slots,
		.dma = b->dma,
		.dma_failed = b->dma_failed,
		.chan = b->chan,
	};
	struct migrate_vma *args;
	unsigned long j;
	unsigned int s, nr, engine = NUMAPLACE_ENGINE_BATCH;
	u64 t0;
	bool pt;

	np_stat_phase(NUMAPLACE_ENGINE_BATCH, NUMAPLACE_PHASE_UNMAP,
		      b->unmap_ns);
	np_stat_phase(NUMAPLACE_ENGINE_PT, NUMAPLACE_PHASE_UNMAP,
		      b->pt_unmap_ns);
	/* Only the page-table engine's ranges reserve. */
	np_stat_phase(NUMAPLACE_ENGINE_PT, NUMAPLACE_PHASE_ALLOC, b->alloc_ns);
	b->unmap_ns = 0;
	b->pt_unmap_ns = 0;
	b->alloc_ns = 0;
	if (!b->nr_segs)
		return;
	/* A batch with any page-table range counts as that engine's. */
	for (s = 0; s < b->nr_segs; s++)
		if (b->seg_pt[s])
			engine = NUMAPLACE_ENGINE_PT;
	np_copy_batch(&cb);
	np_stat_phase(engine, NUMAPLACE_PHASE_ALLOC, cb.alloc_ns);
	np_stat_phase(engine, NUMAPLACE_PHASE_COPY, cb.copy_ns);
	b->dma_failed = cb.dma_failed;
	np_stat_add(NP_STAT_DMA_PAGES, cb.dma_pages);
	np_stat_add(NP_STAT_DMA_FALLBACK, cb.dma_fallback);

	t0 = ktime_get_ns();
	for (s = 0; s < b->nr_segs; s++) {
		args = &b->segs[s];
		pt = b->seg_pt[s];
		if (pt)	/* moves, remaps, puts back */
			np_pt_restore(m, args, b->seg_idx[s]);
		else
			migrate_vma_pages(args);
		for (j = 0; j < args->npages; j++) {
			if (!args->dst[j] || !(args->src[j] & MIGRATE_PFN_MIGRATE))
				continue;
			/* A folio's pages: its first and the tails after it. */
			nr = args->src[j] & NP_PFN_TAIL ? 0 :
			     np_pfn_entries(args->src, args->npages, j);
			np_batch_moved(m, b->seg_idx[s] + j, args->src[j],
				       args->dst[j], pt ? NUMAPLACE_ENGINE_PT :
						     NUMAPLACE_ENGINE_BATCH, nr);
		}
		if (!pt)
			migrate_vma_finalize(args);
	}
	np_stat_phase(engine, NUMAPLACE_PHASE_RESTORE, ktime_get_ns() - t0);
	b->nr_segs = 0;
	b->used = 0;
}

/*
 * The pages of a window from @addr: NP_BATCH_WINDOW_PAGES, down to a page
 * table's boundary (a window is at least 3 tables), where no PTE-mapped
 * large folio the page-table engine takes can straddle two windows.
 */
static unsigned long np_batch_window(unsigned long addr)
{
	unsigned long end = ALIGN_DOWN(addr + NP_BATCH_WINDOW_BYTES, PMD_SIZE);

	return (end - addr) >> PAGE_SHIFT;
}

/* Set up the ranges of one stretch; flush when the batch is full. */
static void np_batch_stretch(struct np_mig *m, unsigned long start,
			     unsigned int idx0, unsigned int nr_pages)
{
	unsigned int i, last, next, end = idx0 + nr_pages, limit, done;
	struct vm_area_struct *vma;
	unsigned long addr;
	bool pt;

	for (i = find_next_bit(m->vma_pending, end, idx0); i < end;
	     i = find_next_bit(m->vma_pending, end, done)) {
		last = i;
		done = i + 1;
		if (m->node_err[m->target[i]]) {
			/*
			 * Its node ran out earlier in the call (a batch before,
			 * a round before): not unmapped for nothing, left where
			 * it is, answered -ENOMEM (resolve), as migrate_pages()
			 * gives up at its first -ENOMEM.
			 */
			clear_bit(i, m->vma_pending);
			continue;
		}
		addr = start + ((unsigned long)(i - idx0) << PAGE_SHIFT);
		vma = vma_lookup(m->w.mm, addr);
		if (!vma)
			continue;	/* gone since collect: -EBUSY */
		pt = np_pt_takes_vma(m, vma);
		limit = min3((unsigned long)end,
			     i + ((vma->vm_end - addr) >> PAGE_SHIFT),
			     (unsigned long)i + np_batch_window(addr));
		for (;; last = next) {
			next = find_next_bit(m->vma_pending, limit, last + 1);
			if (next >= limit || next - last > NP_BATCH_GAP ||
			    m->node_err[m->target[next]] ||
			    (!pt && !np_range_spans_ok(m, last + 1, next)))
				break;
		}
		if (np_batch(m)->nr_segs == NP_BATCH_SEGS_MAX ||
		    np_batch(m)->used + last - i + 1 > NP_BATCH_WINDOW_PAGES) {
			/*
			 * A batch's worth: copy and restore it, with no page
			 * lock of collect's held below this range (the ranges
			 * set up have passed those pages over, the ranges to
			 * come start here); np_range_spans_ok() counts on the
			 * others being locked for the ranges still to come.
			 */
			np_collect_release_below(m, i);
			np_batch_flush(m);
		}
		done = np_batch_setup(m, vma, start, idx0, i, last);
	}
}

/*
 * Move the pages collect marked for this engine in the stretches of a
 * round. Called with the mmap lock held for read since collect (and the
 * folios collect held locked); returns with it still held, every held
 * folio released.
 */
static void np_engine_batch_run(struct np_mig *m, const struct np_stretch *st,
				unsigned int nr)
{
	unsigned int s, idx;
	u64 t0;

	for (s = 0, idx = 0; s < nr; idx += st[s++].nr_pages)
		if (st[s].start < TASK_SIZE_MAX)
			np_batch_stretch(m, st[s].start, idx, st[s].nr_pages);
	t0 = ktime_get_ns();
	np_collect_release(m);
	np_batch(m)->unmap_ns += ktime_get_ns() - t0;
	np_batch_flush(m);
}

/*
 * The exported device-migration API, under the mmap lock; what it leaves
 * (large folios, shared pages) goes to the kernel engine where the call
 * asks for this one.
 */
const struct np_engine_ops np_engine_batch_ops = {
	NP_ENGINE(batch, BATCH),
	.config = NUMAPLACE_CONFIG_ENGINE_BATCH,
	.with = NUMAPLACE_ENGINE_KERNEL,
	.available = np_engine_batch_available,
	.begin = np_engine_batch_begin,
	.end = np_engine_batch_end,
	.run_mapped = np_engine_batch_run,
};
