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
 * Count every folio of @list as moved from its node to @nid (@sign 1),
 * or take back the ones that failed (@sign -1): per-CPU counters add up
 * modulo 2^64, so the sum is exact once both passes are done. Returns the
 * number of folios.
 */
static unsigned int np_list_account(struct list_head *list, int nid, int sign)
{
	struct folio *folio;
	unsigned int n = 0;

	list_for_each_entry(folio, list, lru) {
		np_stat_folio_moved(folio_nid(folio), nid, folio_order(folio),
				    sign);
		n++;
	}
	return n;
}

/* Migrate every node's list; what fails is put back, its error noted. */
void np_engine_kernel_run(struct np_mig *m)
{
	u64 t0 = ktime_get_ns();
	unsigned int succeeded, failed;
	struct np_mtc mtc = {
		.gfp_mask = GFP_HIGHUSER_MOVABLE | __GFP_THISNODE,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
		.reason = MR_SYSCALL,
#endif
	};
	int nid, ret;

	for (nid = 0; nid < nr_node_ids; nid++) {
		if (!m->nr_listed[nid])
			continue;
		mtc.nid = nid;
		succeeded = 0;
		np_list_account(&m->lists[nid], nid, 1);
		ret = np_ksyms.migrate_pages(&m->lists[nid],
					     np_ksyms.alloc_migration_target,
					     NULL, (unsigned long)&mtc,
					     MIGRATE_SYNC, MR_SYSCALL, &succeeded);
		failed = 0;
		if (ret) {
			failed = np_list_account(&m->lists[nid], nid, -1);
			np_ksyms.putback_movable_pages(&m->lists[nid]);
			/* -ENOMEM: no room on the node; else busy or racing. */
			m->node_err[nid] = ret < 0 ? ret : -EBUSY;
		}
		if (failed < m->nr_listed[nid]) {
			m->a->nr_moved_folios += m->nr_listed[nid] - failed;
			m->a->engines |= NUMAPLACE_ENGINE_KERNEL;
		}
		m->nr_listed[nid] = 0;
	}
	np_stat_phase(NUMAPLACE_ENGINE_KERNEL, NUMAPLACE_PHASE_MIGRATE,
		      ktime_get_ns() - t0);
}
