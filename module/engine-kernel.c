// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the kernel engine. Folios isolated by collect, grouped by
 * target node over the whole round, go to the kernel's own migrate_pages()
 * with its own allocation callback (alloc_migration_target(): same order,
 * __GFP_THISNODE, split only where the kernel itself would), exactly as
 * move_pages(2) hands them over, but one call per node instead of one per
 * change of target. Everything here is a kernel internal (ksyms.c).
 */
#include <linux/gfp.h>
#include <linux/hugetlb.h>
#include <linux/migrate.h>
#include <linux/mm_inline.h>
#include <linux/swap.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "migrate.h"
#include "ksyms.h"
#include "stats.h"

bool np_engine_kernel_available(void)
{
	return np_ksyms.migrate_pages && np_ksyms.alloc_migration_target &&
	       np_ksyms.putback_movable_pages && np_ksyms.folio_isolate_lru &&
	       np_ksyms.hugetlb_isolate && np_ksyms.lru_cache_disable &&
	       np_ksyms.lru_disable_count;
}

/*
 * As move_pages(2): drain the per-CPU LRU batches and keep new pages out of
 * them for the call, so that recently faulted pages can be isolated (by
 * either engine). false: these internals are missing, nothing was done.
 */
bool np_lru_disable(void)
{
	if (!np_ksyms.lru_cache_disable || !np_ksyms.lru_disable_count)
		return false;
	np_ksyms.lru_cache_disable();
	return true;
}

/* lru_cache_enable() is an inline atomic_dec() of unexported data. */
void np_lru_enable(void)
{
	atomic_dec(np_ksyms.lru_disable_count);
}

/*
 * Isolate @folio onto @list as add_folio_for_migration() does, under the
 * page-table lock that maps it. false: busy (racing, pinned, in flight).
 */
bool np_engine_kernel_isolate(struct folio *folio, struct list_head *list)
{
	if (folio_test_hugetlb(folio))
		return np_hugetlb_isolate_call(np_ksyms.hugetlb_isolate, folio,
					       list);
	if (!NP_ISOLATE_LRU_OK(np_ksyms.folio_isolate_lru(folio)))
		return false;
	list_add_tail(&folio->lru, list);
	node_stat_mod_folio(folio, NR_ISOLATED_ANON + folio_is_file_lru(folio),
			    folio_nr_pages(folio));
	return true;
}

/*
 * One migrate_pages() call's bookkeeping, its @private: the kernel's own
 * allocation callback gets @mtc. A destination folio counts as moved when
 * it is allocated and is taken back if migrate_pages() puts it back (a
 * split THP's pieces are counted as what they are). A batch of
 * migrate_pages() holds at most NR_MAX_BATCHED_MIGRATION (512) base pages,
 * so a destination put back is among the last NP_KERNEL_RECENT allocated:
 * their source nodes are kept for that.
 */
#define NP_KERNEL_RECENT	1024

struct np_kernel_call {
	struct np_mtc mtc;
	unsigned int folios;	/* destinations allocated, not put back */
	unsigned int next;	/* next slot of @recent */
	struct {
		struct folio *dst;
		int src_nid;
	} recent[NP_KERNEL_RECENT];
};

static struct folio *np_kernel_alloc(struct folio *src, unsigned long private)
{
	struct np_kernel_call *c = (struct np_kernel_call *)private;
	struct folio *dst;

	dst = np_alloc_target_call(np_ksyms.alloc_migration_target, src,
				   (unsigned long)&c->mtc);
	if (!dst)
		return NULL;
	np_stat_folio_moved(folio_nid(src), c->mtc.nid, folio_order(dst), 1);
	c->recent[c->next].dst = dst;
	c->recent[c->next].src_nid = folio_nid(src);
	c->next = (c->next + 1) % NP_KERNEL_RECENT;
	c->folios++;
	return dst;
}

/* A destination migrate_pages() did not use: free it, take it back. */
static void np_kernel_put(struct folio *dst, unsigned long private)
{
	struct np_kernel_call *c = (struct np_kernel_call *)private;
	unsigned int i;

	for (i = 0; i < NP_KERNEL_RECENT; i++) {
		if (c->recent[i].dst != dst)
			continue;
		np_stat_folio_moved(c->recent[i].src_nid, c->mtc.nid,
				    folio_order(dst), -1);
		c->recent[i].dst = NULL;
		break;
	}
	c->folios--;
	folio_put(dst);
}

NP_MIGRATE_CALLBACKS(np_kernel_alloc, np_kernel_put)

/* Migrate every node's list; what fails is put back, its error noted. */
void np_engine_kernel_run(struct np_mig *m)
{
	struct np_kernel_call *c;
	u64 t0 = ktime_get_ns();
	unsigned int succeeded;
	int nid, ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	for (nid = 0; nid < nr_node_ids; nid++) {
		if (!m->nr_listed[nid])
			continue;
		if (!c) {
			/* No room to count: put them back, busy. */
			np_ksyms.putback_movable_pages(&m->lists[nid]);
			m->node_err[nid] = -ENOMEM;
			m->nr_listed[nid] = 0;
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->mtc.nid = nid;
		/* As the syscall, but a full node is an answer, not a warning. */
		c->mtc.gfp_mask = GFP_HIGHUSER_MOVABLE | __GFP_THISNODE |
				  __GFP_NOWARN;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
		c->mtc.reason = MR_SYSCALL;
#endif
		succeeded = 0;
		ret = np_ksyms.migrate_pages(&m->lists[nid], np_kernel_alloc_cb,
					     np_kernel_put_cb, (unsigned long)c,
					     MIGRATE_SYNC, MR_SYSCALL, &succeeded);
		if (ret) {
			np_ksyms.putback_movable_pages(&m->lists[nid]);
			/* -ENOMEM: no room on the node; else busy or racing. */
			m->node_err[nid] = ret < 0 ? ret : -EBUSY;
		}
		if (c->folios) {
			m->a->nr_moved_folios += c->folios;
			m->a->engines |= NUMAPLACE_ENGINE_KERNEL;
		}
		m->nr_listed[nid] = 0;
	}
	kfree(c);
	np_stat_phase(NUMAPLACE_ENGINE_KERNEL, NUMAPLACE_PHASE_MIGRATE,
		      ktime_get_ns() - t0);
}
