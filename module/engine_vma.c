// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the portable engine, on the exported device-migration API.
 * migrate_vma_setup() collects a range and unmaps it (one TLB flush per
 * page table for pages it can), we allocate on the target node and copy,
 * migrate_vma_pages() moves mapping and flags, migrate_vma_finalize()
 * restores every mapping. No internals, no IBT question. It splits PMD
 * THPs and skips PTE-mapped large folios, so collect hands it private
 * anonymous order-0 pages only (THPs when the caller allows a split).
 * Runs with the mmap lock held for read, outside any RCU section.
 */
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "compat.h"
#include "copy.h"
#include "migrate.h"
#include "stats.h"

/* One migrate_vma_setup() covers at most a page table: 512 pages, 8 KiB of pfns. */
#define NP_VMA_BATCH	PTRS_PER_PTE

static bool np_engine_vma_available(void)
{
	return IS_ENABLED(CONFIG_MIGRATION) && IS_ENABLED(CONFIG_DEVICE_MIGRATION);
}

/*
 * Destinations for what setup collected; pages not ours stay (dst 0).
 * Called with the mmap lock held for read and nothing else: it sleeps.
 */
static void np_vma_alloc_copy(struct np_mig *m, struct migrate_vma *args,
			      unsigned int idx0)
{
	struct page *spage, *dpage;
	unsigned long j;
	int target;

	for (j = 0; j < args->npages; j++) {
		args->dst[j] = 0;
		if (!(args->src[j] & MIGRATE_PFN_MIGRATE))
			continue;
		spage = migrate_pfn_to_page(args->src[j]);
		if (!spage || !test_bit(idx0 + j, m->vma_pending) ||
		    !np_vma_src_ok(spage))
			continue;
		target = m->target[idx0 + j];
		/*
		 * Already there (an address named twice), or the node ran out
		 * of memory earlier in this round: one failed allocation with
		 * direct reclaim is enough, the rest answer -ENOMEM at once.
		 */
		if (page_to_nid(spage) == target || m->node_err[target])
			continue;
		dpage = alloc_pages_node(target, GFP_HIGHUSER_MOVABLE |
					 __GFP_THISNODE | __GFP_NOWARN, 0);
		if (!dpage) {
			m->node_err[target] = -ENOMEM;
			continue;
		}
		lock_page(dpage);
		if (np_copy_page(dpage, spage)) {
			/* A poisoned source stays where it is. */
			unlock_page(dpage);
			put_page(dpage);
			continue;
		}
		args->dst[j] = migrate_pfn(page_to_pfn(dpage));
	}
}

static void np_vma_setup_move(struct np_mig *m, struct vm_area_struct *vma,
			      unsigned long start, unsigned int idx0,
			      unsigned int nr, unsigned long *src,
			      unsigned long *dst)
{
	struct migrate_vma args = {
		.vma = vma,
		.start = start,
		.end = start + ((unsigned long)nr << PAGE_SHIFT),
		.src = src,
		.dst = dst,
		.flags = MIGRATE_VMA_SELECT_SYSTEM,
	};
	u64 t0 = ktime_get_ns(), t1, t2;
	struct page *spage;
	unsigned long j;

	if (migrate_vma_setup(&args))
		return;		/* left pending: resolve answers -EBUSY */
	t1 = ktime_get_ns();
	np_stat_phase(NUMAPLACE_ENGINE_VMA, NUMAPLACE_PHASE_UNMAP, t1 - t0);
	if (args.cpages)
		np_vma_alloc_copy(m, &args, idx0);
	else
		memset(dst, 0, nr * sizeof(*dst));
	t2 = ktime_get_ns();
	np_stat_phase(NUMAPLACE_ENGINE_VMA, NUMAPLACE_PHASE_COPY, t2 - t1);
	migrate_vma_pages(&args);
	for (j = 0; j < args.npages; j++) {
		if (!dst[j] || !(src[j] & MIGRATE_PFN_MIGRATE))
			continue;
		spage = migrate_pfn_to_page(src[j]);
		np_stat_folio_moved(page_to_nid(spage), m->target[idx0 + j], 0,
				    1);
		/* migrate_vma_pages() counts no vmstat event: migrate_pages() would. */
		count_vm_event(PGMIGRATE_SUCCESS);
		m->a->nr_moved_folios++;
		m->a->engines |= NUMAPLACE_ENGINE_VMA;
	}
	migrate_vma_finalize(&args);
	np_stat_phase(NUMAPLACE_ENGINE_VMA, NUMAPLACE_PHASE_RESTORE,
		      ktime_get_ns() - t2);
}

/* A setup's pages: a page table's, or the call's where it has fewer. */
static unsigned int np_vma_batch(const struct np_mig *m)
{
	return min_t(unsigned int, NP_VMA_BATCH, m->chunk);
}

/*
 * The call's src[] and dst[], allocated once (not per stretch): in a
 * full memcg the call fails with -ENOMEM before it moves anything, as
 * for the batched engine's arrays.
 */
static int np_engine_vma_begin(struct np_mig *m)
{
	m->priv = np_call_array_alloc(2 * np_vma_batch(m),
				      sizeof(unsigned long), 0);
	return m->priv ? 0 : -ENOMEM;
}

static void np_engine_vma_end(struct np_mig *m)
{
	kvfree(m->priv);
	m->priv = NULL;
}

/*
 * The last page to move in [@from, @to) that one setup may reach from
 * @from (marked): it stops before a page the range must not cover
 * (np_range_spans_ok()), or before one whose node ran out.
 */
static unsigned int np_vma_last(const struct np_mig *m, unsigned int from,
				unsigned int to)
{
	unsigned int last = from, next;

	while ((next = find_next_bit(m->vma_pending, to, last + 1)) < to &&
	       !m->node_err[m->target[next]] &&
	       np_range_spans_ok(m, last + 1, next))
		last = next;
	return last;
}

/*
 * Move the pages collect marked for this engine among @nr_pages from
 * @start (chunk indexes from @idx0), one setup per page table and VMA: a
 * batch spans from a marked page to the last marked page of its table
 * that it can reach without covering a page it must not touch
 * (np_range_spans_ok(): shared, KSM, the kernel engine's); holes and zero
 * pages in between are passed over untouched (cheaper than a setup for
 * each marked stretch when targets alternate).
 */
static void np_engine_vma_part(struct np_mig *m, unsigned long start,
			       unsigned int idx0, unsigned int nr_pages)
{
	unsigned int i = idx0, end = idx0 + nr_pages, n, limit;
	unsigned long *src = m->priv, *dst = src + np_vma_batch(m);
	struct vm_area_struct *vma;
	unsigned long addr;

	for (i = find_next_bit(m->vma_pending, end, i); i < end;
	     i = find_next_bit(m->vma_pending, end, i + n)) {
		n = 1;
		if (m->node_err[m->target[i]]) {
			/* Its node ran out: left, -ENOMEM (np_batch_stretch()). */
			clear_bit(i, m->vma_pending);
			continue;
		}
		addr = start + ((unsigned long)(i - idx0) << PAGE_SHIFT);
		limit = (pmd_addr_end(addr, ULONG_MAX) - addr) >> PAGE_SHIFT;
		vma = vma_lookup(m->w.mm, addr);
		if (vma)
			limit = min_t(unsigned long, limit,
				      (vma->vm_end - addr) >> PAGE_SHIFT);
		limit = min3(limit, end - i, np_vma_batch(m));
		n = np_vma_last(m, i, i + limit) - i + 1;
		if (vma)
			np_vma_setup_move(m, vma, addr, i, n, src, dst);
	}
}

static void np_engine_vma_run(struct np_mig *m, const struct np_stretch *st,
			      unsigned int nr)
{
	np_mig_parts(m, st, nr, np_engine_vma_part);
}

/* migrate_vma_*() per page table, under the mmap lock: no internals. */
const struct np_engine_ops np_engine_vma_ops = {
	NP_ENGINE(vma, VMA),
	.config = NUMAPLACE_CONFIG_ENGINE_VMA,
	.available = np_engine_vma_available,
	.begin = np_engine_vma_begin,
	.end = np_engine_vma_end,
	.run_mapped = np_engine_vma_run,
};
