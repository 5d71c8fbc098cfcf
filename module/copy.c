// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the copy step of the batched engine. A batch is an array of
 * source pages (migrate_pfn() values, as migrate_vma_setup() left them)
 * with their target nodes. Destinations are allocated on the target node
 * in bulk by the caller and up to copy_workers - 1 kernel workers (an
 * unbound workqueue, each work queued on the target node), each a
 * contiguous share of the array: Debian's kernels zero every new page
 * (init_on_alloc), and that work is spread over the workers. For the
 * page-table engine's ranges they are reserved before the pages are
 * unmapped (np_copy_reserve(), as migrate_pages() allocates a folio's
 * destination before it unmaps it: a node that runs out is known before
 * anything is unmapped for it), and once the pages are unmapped the
 * reservations that fit are kept (np_copy_reserve_check()); for
 * migrate_vma_setup()'s ranges they are allocated after it, in the copy's
 * shares. The same workers fill them (np_copy_batch()). With
 * np_config.dma a dmaengine memcpy channel copies instead, page by page
 * falling back to the CPU on any error.
 */
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "copy.h"
#include "stats.h"

static struct workqueue_struct *np_copy_wq;

/* One worker's part of a parallel job. */
struct np_par_share {
	struct work_struct work;
	np_par_fn fn;
	void *ctx;
	unsigned int share, from, to;
};

int np_copy_init(void)
{
	/*
	 * WQ_MEM_RECLAIM: the caller waits for these works holding page
	 * locks of the pages it moves (and reclaim may wait for those), so
	 * they must make progress under memory pressure: a rescuer thread.
	 */
	np_copy_wq = alloc_workqueue("numaplace_copy",
				     WQ_UNBOUND | WQ_MEM_RECLAIM,
				     NUMAPLACE_COPY_WORKERS_MAX);
	return np_copy_wq ? 0 : -ENOMEM;
}

void np_copy_exit(void)
{
	destroy_workqueue(np_copy_wq);
}

/*
 * Threads for a job of @nr items on node @nid: np_config.copy_workers, or
 * the CPUs of the node; capped by NUMAPLACE_COPY_WORKERS_MAX and by @min_share
 * items a share (a work item costs more than a few items).
 */
unsigned int np_par_workers(unsigned int nr, int nid, unsigned int min_share)
{
	unsigned int w = READ_ONCE(np_config.copy_workers);

	if (!w)
		w = nid == NUMA_NO_NODE ? 1 :
		    max_t(unsigned int, 1, nr_cpus_node(nid));
	w = min3(w, (unsigned int)NUMAPLACE_COPY_WORKERS_MAX,
		 DIV_ROUND_UP(nr, max(min_share, 1U)));
	return max(w, 1U);
}

static void np_par_work(struct work_struct *work)
{
	struct np_par_share *s = container_of(work, struct np_par_share, work);

	s->fn(s->ctx, s->share, s->from, s->to);
}

/*
 * Run @fn over [0, @nr) in @workers contiguous shares: the caller takes the
 * first, kernel workers queued on node @nid (NUMA_NO_NODE: any CPU) the
 * others; returns when all are done. @fn may sleep.
 */
void np_par_run(unsigned int nr, unsigned int workers, int nid, np_par_fn fn,
		void *ctx)
{
	struct np_par_share shares[NUMAPLACE_COPY_WORKERS_MAX];
	unsigned int w = clamp(workers, 1U, (unsigned int)NUMAPLACE_COPY_WORKERS_MAX);
	unsigned int i, per = DIV_ROUND_UP(nr, w);

	for (i = 1; i < w; i++) {
		shares[i] = (struct np_par_share) {
			.fn = fn, .ctx = ctx, .share = i,
			.from = min(i * per, nr), .to = min((i + 1) * per, nr),
		};
		INIT_WORK_ONSTACK(&shares[i].work, np_par_work);
		if (nid == NUMA_NO_NODE)
			queue_work(np_copy_wq, &shares[i].work);
		else
			queue_work_node(nid, np_copy_wq, &shares[i].work);
	}
	fn(ctx, 0, 0, min(per, nr));
	for (i = 1; i < w; i++) {
		flush_work(&shares[i].work);
		destroy_work_on_stack(&shares[i].work);
	}
}

/**
 * np_vma_src_ok - may migrate_vma_pages() move this collected source?
 * @spage: a page migrate_vma_setup() collected (MIGRATE_PFN_MIGRATE): it
 *	is locked, so writeback cannot start on it and it cannot enter or
 *	leave the swap cache
 *
 * Not when it is in the swap cache or under writeback:
 * migrate_vma_pages() never waits for writeback and BUG()s on it
 * (migrate_folio_extra() on 6.1, __migrate_device_pages() on 6.12). Not
 * a KSM page either: KSM may have merged it since collect (the mmap read
 * lock does not stop ksmd), and it is other processes' page too.
 * Collect keeps such folios away already; this is the check that holds,
 * made after a page it saw could have been swapped out and faulted back
 * in. Return: true to give it a destination.
 */
bool np_vma_src_ok(struct page *spage)
{
	struct folio *folio = page_folio(spage);

	return !folio_test_swapcache(folio) && !folio_test_writeback(folio) &&
	       !folio_test_ksm(folio);
}

static_assert(!(NP_PFN_TAIL & (MIGRATE_PFN_VALID | MIGRATE_PFN_MIGRATE |
			       MIGRATE_PFN_WRITE)) &&
	      NP_PFN_TAIL < (1UL << MIGRATE_PFN_SHIFT));
#ifdef MIGRATE_PFN_COMPOUND
static_assert(!(NP_PFN_TAIL & MIGRATE_PFN_COMPOUND));
#endif

/* The pages entry @j stands for (not for a tail entry). */
static unsigned int np_copy_nr(const struct np_copy_batch *cb, unsigned int j)
{
	return np_pfn_entries(cb->src, cb->nr, j);
}

/* Entry @j may have a destination: collected, ours, not there yet. */
static bool np_copy_movable(const struct np_copy_batch *cb, unsigned int j)
{
	struct page *spage;
	int target = cb->target[j];

	if (target < 0 || !(cb->src[j] & MIGRATE_PFN_MIGRATE))
		return false;
	spage = migrate_pfn_to_page(cb->src[j]);
	return spage && page_to_nid(spage) != target && np_vma_src_ok(spage);
}

/*
 * The pages entry @j reserves a destination for, before the unmap: its
 * folio's (cb->head), or one; 0 for none (a folio's later pages, or a
 * large folio that would not end inside the batch).
 */
static unsigned int np_copy_reserve_nr(const struct np_copy_batch *cb,
				       unsigned int j)
{
	unsigned int nr;

	if (!cb->head)
		return 1;
	if (!cb->head[j])
		return 0;
	nr = 1U << (cb->head[j] - 1);
	return j + nr <= cb->nr ? nr : 0;
}

/*
 * The pages entry @j wants a destination for: before the unmap (@reserve),
 * np_copy_reserve_nr(); after it, its folio's, when it may have one and
 * has none reserved (np_copy_reserve_check()). 0: none, or its node has
 * run out.
 */
static unsigned int np_copy_want(const struct np_copy_batch *cb,
				 unsigned int j, bool reserve)
{
	int target = cb->target[j];

	if (target < 0 || READ_ONCE(cb->node_err[target]))
		return 0;
	if (reserve)
		return np_copy_reserve_nr(cb, j);
	if ((cb->src[j] & NP_PFN_TAIL) || cb->dst[j] || !np_copy_movable(cb, j))
		return 0;
	/*
	 * One page: no large folio is given a destination after its unmap (no
	 * GFP_TRANSHUGE allocation while its mappings wait): restore hands it
	 * to the kernel engine, which allocates first.
	 */
	return np_copy_nr(cb, j) == 1;
}

/*
 * Destinations on @nid for the @n entries @slots of the share [@from, ..)
 * that go there: in bulk (one pass over the per-CPU free lists), single
 * pages for what the bulk call leaves, until the node runs out (-ENOMEM
 * noted once for the round: the other entries for that node are not tried).
 */
static void np_copy_alloc_node(struct np_copy_batch *cb, unsigned int from,
			       int nid, const unsigned int *slots,
			       unsigned int n)
{
	const gfp_t gfp = GFP_HIGHUSER_MOVABLE | __GFP_THISNODE | __GFP_NOWARN;
	struct page **pages = cb->pages + from;
	struct page *page;
	unsigned int k, got;

	memset(pages, 0, n * sizeof(*pages));
	got = np_alloc_pages_bulk_node(gfp, nid, n, pages);
	while (got < n) {
		page = alloc_pages_node(nid, gfp, 0);
		if (!page) {
			WRITE_ONCE(cb->node_err[nid], -ENOMEM);
			WRITE_ONCE(cb->ran_out, true);
			break;
		}
		pages[got++] = page;
	}
	for (k = 0; k < got; k++) {
		lock_page(pages[k]);
		cb->dst[slots[k]] = migrate_pfn(page_to_pfn(pages[k]));
	}
}

/*
 * A destination folio of @nr pages on @nid for entry @j and those after it:
 * as alloc_migration_target() allocates for a large folio (its order,
 * GFP_TRANSHUGE: direct reclaim and compaction, no kswapd wakeup; the
 * node only, as move_pages(2)'s mask). A
 * node without one is not full: the source stays, and the caller hands it
 * to the next engine (np_pt_restore()).
 */
static void np_copy_alloc_large(struct np_copy_batch *cb, unsigned int j,
				int nid, unsigned int nr)
{
	const gfp_t gfp = ((GFP_HIGHUSER_MOVABLE | __GFP_THISNODE) &
			   ~__GFP_RECLAIM) | GFP_TRANSHUGE;
	struct folio *folio = __folio_alloc_node(gfp, ilog2(nr), nid);
	unsigned int k;

	if (!folio)
		return;
	folio_lock(folio);
	for (k = 0; k < nr; k++)
		cb->dst[j + k] = migrate_pfn(folio_pfn(folio) + k);
}

/*
 * Allocate the destinations entries [@from, @to) want (np_copy_want()),
 * node by node. A share takes a large folio's entries with its first,
 * past @to too; the share they fall in leaves them alone.
 */
static void np_copy_alloc(struct np_copy_batch *cb, unsigned int from,
			  unsigned int to, bool reserve)
{
	unsigned int *slots = cb->slots + from;
	unsigned int j, n, nr;
	nodemask_t nodes;
	int nid;

	nodes_clear(nodes);
	for (j = from; j < to; j++)
		if (np_copy_want(cb, j, reserve))
			node_set(cb->target[j], nodes);
	for_each_node_mask(nid, nodes) {
		for (j = from, n = 0; j < to; j++) {
			if (cb->target[j] != nid)
				continue;
			nr = np_copy_want(cb, j, reserve);
			if (nr > 1)
				np_copy_alloc_large(cb, j, nid, nr);
			else if (nr)
				slots[n++] = j;
		}
		if (n)
			np_copy_alloc_node(cb, from, nid, slots, n);
	}
}

/*
 * How long one page's DMA copy may take: a 4 KiB copy takes microseconds;
 * a channel that has not completed it by then is stuck, and the caller
 * holds page locks and the target's mmap lock meanwhile.
 */
#define NP_DMA_TIMEOUT_MS	100

struct np_dma_wait {
	struct completion done;
	enum dmaengine_tx_result result;
};

/* The descriptor's completion callback (tasklet or IRQ context). */
static void np_copy_dma_done(void *arg, const struct dmaengine_result *res)
{
	struct np_dma_wait *wait = arg;

	wait->result = res ? res->result : DMA_TRANS_NOERROR;
	complete(&wait->done);
}

/*
 * One page through the DMA channel; false: copy it with the CPU. Done is
 * what the descriptor's callback says (a device that completes out of
 * order, as Intel DSA, has no cookie order to poll). On a timeout the
 * channel is terminated before the buffers are unmapped: the device may
 * still be writing.
 */
static bool np_copy_dma(struct dma_chan *chan, struct page *dst,
			struct page *src)
{
	struct device *dev = chan->device->dev;
	struct dma_async_tx_descriptor *tx;
	struct np_dma_wait wait;
	dma_cookie_t cookie;
	dma_addr_t s, d;
	bool ok = false;

	s = dma_map_page(dev, src, 0, PAGE_SIZE, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, s))
		return false;
	d = dma_map_page(dev, dst, 0, PAGE_SIZE, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, d))
		goto unmap_src;
	tx = dmaengine_prep_dma_memcpy(chan, d, s, PAGE_SIZE,
				       DMA_CTRL_ACK | DMA_PREP_INTERRUPT);
	if (!tx)
		goto unmap_dst;
	init_completion(&wait.done);
	wait.result = DMA_TRANS_ABORTED;
	tx->callback_result = np_copy_dma_done;
	tx->callback_param = &wait;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie))
		goto unmap_dst;
	dma_async_issue_pending(chan);
	if (!wait_for_completion_timeout(&wait.done,
					 msecs_to_jiffies(NP_DMA_TIMEOUT_MS))) {
		/* No callback runs after this returns: @wait may go. */
		dmaengine_terminate_sync(chan);
		goto unmap_dst;
	}
	ok = wait.result == DMA_TRANS_NOERROR;
unmap_dst:
	dma_unmap_page(dev, d, PAGE_SIZE, DMA_FROM_DEVICE);
unmap_src:
	dma_unmap_page(dev, s, PAGE_SIZE, DMA_TO_DEVICE);
	return ok;
}

/* Entry @j (@nr pages) gets no destination: its folio stays where it is. */
static void np_copy_drop(struct np_copy_batch *cb, unsigned int j,
			 unsigned int nr, struct page *dpage)
{
	struct folio *folio = page_folio(dpage);

	memset(cb->dst + j, 0, nr * sizeof(*cb->dst));
	folio_unlock(folio);
	folio_put(folio);
}

/*
 * Fill @dpage from @spage: with the DMA channel while it works (after its
 * first failure the rest of the call copies with the CPU), else as the
 * kernel's migration copies. Return: 0, or -EFAULT (a poisoned source).
 */
static int np_copy_one(struct np_copy_batch *cb, struct np_copy_stats *st,
		       struct page *dpage, struct page *spage)
{
	if (cb->dma) {
		if (cb->chan && !READ_ONCE(cb->dma_failed)) {
			if (np_copy_dma(cb->chan, dpage, spage)) {
				st->dma_pages++;
				return 0;
			}
			WRITE_ONCE(cb->dma_failed, true);
		}
		st->dma_fallback++;	/* no channel, or it failed */
	}
	return np_copy_page(dpage, spage);
}

/*
 * Fill the @nr pages of entry @j from its source's. Return: 0, or -EFAULT
 * (a poisoned source page: the folio is not moved).
 */
static int np_copy_entry(struct np_copy_batch *cb, struct np_copy_stats *st,
			 unsigned int j, unsigned int nr)
{
	unsigned int k;
	int ret;

	for (k = 0; k < nr; k++) {
		ret = np_copy_one(cb, st, migrate_pfn_to_page(cb->dst[j + k]),
				  migrate_pfn_to_page(cb->src[j + k]));
		if (ret)
			return ret;
		/* A PMD-sized folio: 512 pages. */
		if (k && !(k % NP_COPY_RESCHED))
			cond_resched();
	}
	return 0;
}

/* np_par_fn: allocate and fill the destinations of one share. */
static void np_copy_share(void *ctx, unsigned int share, unsigned int from,
			  unsigned int to)
{
	struct np_copy_batch *cb = ctx;
	struct np_copy_stats *st = &cb->shares[share];
	unsigned int j, nr, since = 0;	/* pages since the last resched */
	u64 t0 = ktime_get_ns(), t1;
	struct page *dpage;

	np_copy_alloc(cb, from, to, false);
	t1 = ktime_get_ns();
	st->alloc_ns = t1 - t0;
	for (j = from; j < to; j++) {
		/* A tail's entry is its first's, maybe another share's. */
		if ((cb->src[j] & NP_PFN_TAIL) || !cb->dst[j])
			continue;
		nr = np_copy_nr(cb, j);
		dpage = migrate_pfn_to_page(cb->dst[j]);
		if (READ_ONCE(cb->abort)) {
			/* Killed: this folio stays where it is (restore remaps it). */
			np_copy_drop(cb, j, nr, dpage);
			continue;
		}
		if (np_copy_entry(cb, st, j, nr))
			np_copy_drop(cb, j, nr, dpage);	/* poisoned source */
		since += nr;
		if (since >= NP_COPY_RESCHED) {
			since = 0;
			cond_resched();
			/* The caller's share sees its signals for all. */
			if (!share && fatal_signal_pending(current))
				WRITE_ONCE(cb->abort, true);
		}
	}
	st->copy_ns = ktime_get_ns() - t1;
}

/* A node with memory to queue shares on: the first target's. */
static int np_copy_node(const struct np_copy_batch *cb)
{
	unsigned int j;

	for (j = 0; j < cb->nr; j++)
		if (cb->target[j] >= 0)
			return cb->target[j];
	return NUMA_NO_NODE;
}

/* np_par_fn: reserve the destinations of one share. */
static void np_copy_reserve_share(void *ctx, unsigned int share,
				  unsigned int from, unsigned int to)
{
	struct np_copy_batch *cb = ctx;
	u64 t0 = ktime_get_ns();

	np_copy_alloc(cb, from, to, true);
	cb->shares[share].alloc_ns = ktime_get_ns() - t0;
}

/**
 * np_copy_reserve - destinations for a range before it is unmapped
 * @cb: @src unused yet; @target: per entry, its node or -1; @head: per
 *	entry, 1 + the order of the folio that starts there (0: none), or
 *	NULL: every entry is one page; @dst: out
 *
 * As migrate_pages() calls get_new_folio() before try_to_migrate(): a
 * locked destination in dst[] for each folio to move, of its order; a
 * node that runs out of base pages is marked in @node_err, and its later
 * entries get none. A large folio that gets none on such a node is left
 * mapped (its target cleared: answered -ENOMEM, as splitting it would
 * need base pages the node does not have); on another node (no free
 * folio of its order) it gets none after the unmap either (np_copy_want()):
 * restore hands it to the kernel engine.
 * Return: the first base page left without a destination because its
 * node ran out (nothing from there is to be unmapped), or @cb->nr.
 */
unsigned int np_copy_reserve(struct np_copy_batch *cb)
{
	int nid = np_copy_node(cb);
	unsigned int i, j, k, nr;

	memset(cb->shares, 0, sizeof(cb->shares));
	memset(cb->dst, 0, cb->nr * sizeof(*cb->dst));
	cb->ran_out = false;
	cb->workers = np_par_workers(cb->nr, nid, NP_COPY_SHARE_MIN);
	np_par_run(cb->nr, cb->workers, nid, np_copy_reserve_share, cb);
	for (i = 0; i < cb->workers; i++)
		cb->alloc_ns += cb->shares[i].alloc_ns;
	/* No node of the range had run out before (np_batch_stretch()). */
	for (j = 0; cb->ran_out && j < cb->nr; j++) {
		if (cb->target[j] < 0 || cb->dst[j] ||
		    !cb->node_err[cb->target[j]])
			continue;
		nr = np_copy_reserve_nr(cb, j);
		if (nr == 1)
			return j;
		/* A large folio of a node out of base pages: left mapped. */
		for (k = 0; k < nr; k++)
			cb->target[j + k] = -1;
	}
	return cb->nr;
}

/* Free the destination folio at dst[@j] (its first page); its entries: 0. */
static void np_copy_unreserve(struct np_copy_batch *cb, unsigned int j)
{
	struct page *dpage = migrate_pfn_to_page(cb->dst[j]);
	unsigned int nr = min_t(unsigned int, folio_nr_pages(page_folio(dpage)),
				cb->nr - j);

	np_copy_drop(cb, j, nr, dpage);
}

/* Drop the reservations of entries @from on: they will not be unmapped. */
void np_copy_reserve_cut(struct np_copy_batch *cb, unsigned int from)
{
	unsigned int j;

	for (j = from; j < cb->nr; j++)
		if (cb->dst[j])
			np_copy_unreserve(cb, j);
}

/**
 * np_copy_reserve_check - keep what fits once the range is unmapped
 * @cb: @src as np_pt_unmap() left it, @dst as np_copy_reserve() left it
 *
 * A reservation is kept for an entry that is the first entry of a folio
 * np_pt_unmap() unmapped, still with a target, of the reservation's size.
 * The others are freed:
 * pages that were not unmapped (raced, busy, pinned), a folio split or
 * collapsed since collect (its pages get destinations in the copy, as
 * before). A large folio unmapped without a destination gets none after
 * the unmap either (np_copy_want()).
 */
void np_copy_reserve_check(struct np_copy_batch *cb)
{
	struct page *dpage;
	struct folio *dst;
	unsigned int j, nr;

	for (j = 0; j < cb->nr; j += nr) {
		nr = 1;
		if (!cb->dst[j])
			continue;
		dpage = migrate_pfn_to_page(cb->dst[j]);
		dst = page_folio(dpage);
		/*
		 * Unmapped, its own first entry, still to move: np_pt_unmap()
		 * took it with np_pt_folio_ok() under the page table lock and
		 * holds it locked, so its node and flags stand.
		 */
		if ((cb->src[j] & (MIGRATE_PFN_MIGRATE | NP_PFN_TAIL)) ==
		    MIGRATE_PFN_MIGRATE && cb->target[j] >= 0 &&
		    &dst->page == dpage) {
			nr = np_copy_nr(cb, j);
			if (folio_nr_pages(dst) == nr)
				continue;	/* its tails' are the folio's */
			nr = 1;
		}
		np_copy_unreserve(cb, j);	/* dst[j] is 0 now */
	}
}

/*
 * Allocate and fill destinations for @cb: dst[j] set (a locked page holding
 * the data) for every entry that got one; the totals of the shares in @cb.
 */
void np_copy_batch(struct np_copy_batch *cb)
{
	int nid = np_copy_node(cb);
	unsigned int i;
	u64 t0 = ktime_get_ns();

	memset(cb->shares, 0, sizeof(cb->shares));
	cb->workers = np_par_workers(cb->nr, nid, NP_COPY_SHARE_MIN);
	np_par_run(cb->nr, cb->workers, nid, np_copy_share, cb);
	for (i = 0; i < cb->workers; i++) {
		cb->alloc_ns += cb->shares[i].alloc_ns;
		cb->copy_ns += cb->shares[i].copy_ns;
		cb->dma_pages += cb->shares[i].dma_pages;
		cb->dma_fallback += cb->shares[i].dma_fallback;
	}
	cb->wall_ns = ktime_get_ns() - t0;
}

/*
 * A dmaengine memcpy channel, or NULL (none on this host: CPU copies). Only
 * a channel that can be stopped and synchronised: after a timeout
 * dmaengine_terminate_sync() must guarantee that the device writes no
 * more and no callback runs, before the pages and the waiter go. Without
 * device_terminate_all and device_synchronize (ioatdma and idxd have
 * neither) it does nothing, so such a channel is not used.
 */
struct dma_chan *np_copy_dma_get(void)
{
	struct dma_chan *chan;
	dma_cap_mask_t mask;

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_chan_by_mask(&mask);
	if (IS_ERR(chan))
		return NULL;
	if (!chan->device->device_terminate_all ||
	    !chan->device->device_synchronize) {
		dma_release_channel(chan);
		return NULL;
	}
	return chan;
}

void np_copy_dma_put(struct dma_chan *chan)
{
	if (chan)
		dma_release_channel(chan);
}
