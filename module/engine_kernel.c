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
#include <linux/sizes.h>
#include <linux/swap.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "migrate.h"
#include "copy.h"
#include "ksyms.h"
#include "stats.h"

static bool np_engine_kernel_available(void)
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
	if (!np_lru_isolate(folio))
		return false;
	list_add_tail(&folio->lru, list);
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

/*
 * With the batched engine, the destinations of a node's large folios are
 * allocated before migrate_pages() runs, by the copy workers in parallel
 * (module/copy.c): a new THP is zeroed by the allocator (init_on_alloc,
 * Debian's default), most of its migration time in the guest (make
 * bench-profile); migrate_pages() then takes them from the allocation
 * callback, unmaps, copies and remaps. Folios it splits, retries and small
 * folios are allocated on demand as before.
 */
struct np_prealloc {
	struct np_mtc *mtc;
	struct folio **src;
	struct folio **dst;	/* NULL: none (node full) or taken */
	unsigned int nr;
	unsigned int cursor;	/* where the next lookup starts */
};

struct np_kernel_call {
	struct np_mtc mtc;
	struct np_prealloc *pre;
	unsigned int folios;	/* destinations allocated, not put back */
	unsigned int next;	/* next slot of @recent */
	struct {
		struct folio *dst;
		int src_nid;
	} recent[NP_KERNEL_RECENT];
};

/*
 * Is a destination for @src worth allocating ahead? Large folios only (a
 * small one is allocated on demand as fast), not hugetlb (its own pool),
 * and not one that migrate_pages() splits before it moves it (compat.h
 * np_migrate_splits_first()): its pieces get order-0 destinations on
 * demand, and a large one allocated (and zeroed) for it would only be
 * freed again. The kernel's own migrate_pages() leaves every PTE-mapped
 * large folio it moved in that state (Documentation/design.md, "Large
 * folios"), so a second move of the same buffer meets nothing else.
 */
static bool np_prealloc_wants(struct folio *folio)
{
	return folio_test_large(folio) && !folio_test_hugetlb(folio) &&
	       !np_migrate_splits_first(folio);
}

/* A preallocated destination for @src, or NULL. */
static struct folio *np_prealloc_take(struct np_prealloc *p, struct folio *src)
{
	struct folio *dst;
	unsigned int k, i;

	if (!p || !folio_test_large(src))
		return NULL;
	/* migrate_pages() takes the list in order: the cursor hits first. */
	for (k = 0; k < p->nr; k++) {
		i = (p->cursor + k) % p->nr;
		if (p->src[i] != src || !p->dst[i])
			continue;
		dst = p->dst[i];
		p->dst[i] = NULL;
		p->cursor = i + 1;
		return dst;
	}
	return NULL;
}

static struct folio *np_kernel_alloc(struct folio *src, unsigned long private)
{
	struct np_kernel_call *c = (struct np_kernel_call *)private;
	struct folio *dst;

	dst = np_prealloc_take(c->pre, src);
	if (!dst)
		dst = np_alloc_target_call(np_ksyms.alloc_migration_target,
					   src, (unsigned long)&c->mtc);
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

/* np_par_fn: destinations for preallocated entries [@from, @to). */
static void np_prealloc_share(void *ctx, unsigned int share,
			      unsigned int from, unsigned int to)
{
	struct np_prealloc *p = ctx;
	unsigned int j;

	for (j = from; j < to; j++) {
		p->dst[j] = np_alloc_target_call(np_ksyms.alloc_migration_target,
						 p->src[j],
						 (unsigned long)p->mtc);
		if (!p->dst[j])
			break;	/* node full: the rest fail on demand */
		cond_resched();
	}
}

/* Allocate destinations for the large folios of @list in parallel. */
static struct np_prealloc *np_prealloc_begin(struct np_kernel_call *c,
					     struct list_head *list)
{
	struct np_prealloc *p;
	struct folio *folio;
	unsigned int n = 0;

	list_for_each_entry(folio, list, lru)
		n += np_prealloc_wants(folio);
	if (!n)
		return NULL;
	p = kzalloc(sizeof(*p), NP_GFP_CALL);
	if (!p)
		return NULL;
	p->src = np_call_array_alloc(n, sizeof(*p->src), 0);
	p->dst = np_call_array_alloc(n, sizeof(*p->dst), __GFP_ZERO);
	if (!p->src || !p->dst) {
		kvfree(p->dst);
		kvfree(p->src);
		kfree(p);
		return NULL;	/* allocated on demand */
	}
	p->mtc = &c->mtc;
	list_for_each_entry(folio, list, lru)
		if (np_prealloc_wants(folio))
			p->src[p->nr++] = folio;
	np_par_run(p->nr, np_par_workers(p->nr, c->mtc.nid, 1), c->mtc.nid,
		   np_prealloc_share, p);
	return p;
}

/* Free what migrate_pages() did not take (it never saw them). */
static void np_prealloc_end(struct np_prealloc *p)
{
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++)
		if (p->dst[i])
			folio_put(p->dst[i]);
	kvfree(p->dst);
	kvfree(p->src);
	kfree(p);
}

/*
 * Destinations allocated ahead of migrate_pages() (in parallel, zeroing
 * included) are held on top of the sources, uncharged, until it takes
 * them: at most this many pages of them at a time, whatever the round
 * (16 MiB: eight THPs, a share for each of up to NUMAPLACE_COPY_WORKERS_MAX
 * workers). The kernel's own path holds one folio's worth.
 */
#define NP_PREALLOC_WINDOW_PAGES	(SZ_16M >> PAGE_SHIFT)

/*
 * Move folios from the head of @from to @to until @to holds
 * NP_PREALLOC_WINDOW_PAGES pages of large (preallocated) folios, or
 * @from is empty.
 */
static void np_prealloc_window(struct list_head *from, struct list_head *to)
{
	struct folio *folio, *tmp;
	unsigned long large = 0, nr;

	list_for_each_entry_safe(folio, tmp, from, lru) {
		if (np_prealloc_wants(folio)) {
			nr = folio_nr_pages(folio);
			if (large && large + nr > NP_PREALLOC_WINDOW_PAGES)
				break;
			large += nr;
		}
		list_move_tail(&folio->lru, to);
	}
}

/*
 * Migrate @list (node @c->mtc.nid's) with migrate_pages(): in windows when
 * destinations are preallocated (@pre), else at once. What fails is put
 * back. Return: 0, or the first negative error (-ENOMEM: the node is full,
 * the rest was not tried); folios that failed otherwise stay where they
 * are (resolve: -EBUSY).
 */
static int np_kernel_migrate_list(struct np_kernel_call *c,
				  struct list_head *list, bool pre,
				  u64 *alloc_ns)
{
	unsigned int succeeded;
	LIST_HEAD(window);
	int ret = 0;
	u64 t0;

	while (!list_empty(list)) {
		if (pre) {
			np_prealloc_window(list, &window);
			t0 = ktime_get_ns();
			c->pre = np_prealloc_begin(c, &window);
			*alloc_ns += ktime_get_ns() - t0;
		} else {
			list_splice_init(list, &window);
		}
		succeeded = 0;
		ret = np_ksyms.migrate_pages(&window, np_kernel_alloc_cb,
					     np_kernel_put_cb, (unsigned long)c,
					     MIGRATE_SYNC, MR_SYSCALL, &succeeded);
		np_prealloc_end(c->pre);
		c->pre = NULL;
		if (ret)
			np_ksyms.putback_movable_pages(&window);
		if (ret < 0)
			break;
	}
	if (!list_empty(list))
		np_ksyms.putback_movable_pages(list);
	return ret < 0 ? ret : 0;
}

/* Migrate every node's list; what fails is put back, its error noted. */
static void np_engine_kernel_run(struct np_mig *m)
{
	struct np_kernel_call *c;
	u64 t0 = ktime_get_ns(), alloc_ns = 0;
	int nid, ret;

	for (nid = 0; nid < nr_node_ids && !m->nr_listed[nid]; nid++)
		;
	if (nid == nr_node_ids)
		return;		/* nothing isolated this round */
	c = kzalloc(sizeof(*c), NP_GFP_CALL);
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
		np_mtc_set_reason(&c->mtc, MR_SYSCALL);
		ret = np_kernel_migrate_list(c, &m->lists[nid],
					     m->engines & NUMAPLACE_ENGINE_BATCH,
					     &alloc_ns);
		/* -ENOMEM: no room on the node; else busy or racing. */
		if (ret)
			m->node_err[nid] = ret;
		if (c->folios) {
			m->a->nr_moved_folios += c->folios;
			m->a->engines |= NUMAPLACE_ENGINE_KERNEL;
		}
		m->nr_listed[nid] = 0;
	}
	kfree(c);
	/* MIGRATE: migrate_pages() with what it allocates itself; ALLOC: ours. */
	np_stat_phase(NUMAPLACE_ENGINE_KERNEL, NUMAPLACE_PHASE_ALLOC, alloc_ns);
	np_stat_phase(NUMAPLACE_ENGINE_KERNEL, NUMAPLACE_PHASE_MIGRATE,
		      ktime_get_ns() - t0 - alloc_ns);
}

/* The kernel's migrate_pages(), no lock held, on the folios collect isolated. */
const struct np_engine_ops np_engine_kernel_ops = {
	NP_ENGINE(kernel, KERNEL),
	.config = NUMAPLACE_CONFIG_ENGINE_KERNEL,
	.available = np_engine_kernel_available,
	.run = np_engine_kernel_run,
};
