// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the copy step of the batched engine. A batch is an array of
 * source pages (migrate_pfn() values, as migrate_vma_setup() left them)
 * with their target nodes. Destinations are allocated on the target node
 * in bulk and filled by the caller and up to copy_workers - 1 kernel
 * workers (an unbound workqueue, each work queued on the target node),
 * each a contiguous share of the array. Allocation is part of a share:
 * Debian's kernels zero every new page (init_on_alloc), and that work is
 * spread over the workers too. With np_config.dma a dmaengine memcpy
 * channel copies instead, page by page falling back to the CPU on any
 * error.
 */
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/workqueue.h>

#include "copy.h"
#include "stats.h"

static struct workqueue_struct *np_copy_wq;

/* One worker's part of a batch. */
struct np_copy_share {
	struct work_struct work;
	struct np_copy_batch *cb;
	unsigned int from, to;		/* entries [from, to) */
	u64 alloc_ns, copy_ns;
	unsigned long dma_pages, dma_fallback;
};

int np_copy_init(void)
{
	np_copy_wq = alloc_workqueue("numaplace_copy", WQ_UNBOUND,
				     NP_COPY_WORKERS_MAX);
	return np_copy_wq ? 0 : -ENOMEM;
}

void np_copy_exit(void)
{
	destroy_workqueue(np_copy_wq);
}

/* Entry @j wants a destination: collected, ours, not there yet. */
static bool np_copy_wanted(const struct np_copy_batch *cb, unsigned int j)
{
	struct page *spage;
	int target = cb->target[j];

	if (target < 0 || !(cb->src[j] & MIGRATE_PFN_MIGRATE))
		return false;
	spage = migrate_pfn_to_page(cb->src[j]);
	return spage && page_to_nid(spage) != target &&
	       !READ_ONCE(cb->node_err[target]);
}

/*
 * Destinations on @nid for the @n entries @slots of this share that go
 * there: in bulk (one pass over the per-CPU free lists), single pages for
 * what the bulk call leaves, until the node runs out (-ENOMEM noted once
 * for the round: the other entries for that node are not tried).
 */
static void np_copy_alloc_node(struct np_copy_share *s, int nid,
			       const unsigned int *slots, unsigned int n)
{
	const gfp_t gfp = GFP_HIGHUSER_MOVABLE | __GFP_THISNODE | __GFP_NOWARN;
	struct np_copy_batch *cb = s->cb;
	struct page **pages = cb->pages + s->from;
	struct page *page;
	unsigned int k, got;

	memset(pages, 0, n * sizeof(*pages));
	got = alloc_pages_bulk_array_node(gfp, nid, n, pages);
	while (got < n) {
		page = alloc_pages_node(nid, gfp, 0);
		if (!page) {
			WRITE_ONCE(cb->node_err[nid], -ENOMEM);
			break;
		}
		pages[got++] = page;
	}
	for (k = 0; k < got; k++) {
		lock_page(pages[k]);
		cb->dst[slots[k]] = migrate_pfn(page_to_pfn(pages[k]));
	}
}

/* Allocate the share's destinations, node by node. */
static void np_copy_alloc(struct np_copy_share *s)
{
	struct np_copy_batch *cb = s->cb;
	unsigned int *slots = cb->slots + s->from;
	unsigned int j, n;
	nodemask_t nodes;
	int nid;

	nodes_clear(nodes);
	for (j = s->from; j < s->to; j++) {
		cb->dst[j] = 0;
		if (np_copy_wanted(cb, j))
			node_set(cb->target[j], nodes);
	}
	for_each_node_mask(nid, nodes) {
		for (j = s->from, n = 0; j < s->to; j++)
			if (cb->target[j] == nid && np_copy_wanted(cb, j))
				slots[n++] = j;
		if (n)
			np_copy_alloc_node(s, nid, slots, n);
	}
}

/* One page through the DMA channel; false: copy it with the CPU. */
static bool np_copy_dma(struct dma_chan *chan, struct page *dst,
			struct page *src)
{
	struct device *dev = chan->device->dev;
	struct dma_async_tx_descriptor *tx;
	dma_cookie_t cookie;
	dma_addr_t s, d;
	bool ok = false;

	s = dma_map_page(dev, src, 0, PAGE_SIZE, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, s))
		return false;
	d = dma_map_page(dev, dst, 0, PAGE_SIZE, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, d))
		goto unmap_src;
	tx = dmaengine_prep_dma_memcpy(chan, d, s, PAGE_SIZE, 0);
	if (!tx)
		goto unmap_dst;
	cookie = dmaengine_submit(tx);
	if (dma_submit_error(cookie))
		goto unmap_dst;
	dma_async_issue_pending(chan);
	ok = dma_sync_wait(chan, cookie) == DMA_COMPLETE;
unmap_dst:
	dma_unmap_page(dev, d, PAGE_SIZE, DMA_FROM_DEVICE);
unmap_src:
	dma_unmap_page(dev, s, PAGE_SIZE, DMA_TO_DEVICE);
	return ok;
}

static void np_copy_share_run(struct np_copy_share *s)
{
	struct np_copy_batch *cb = s->cb;
	struct page *spage, *dpage;
	u64 t0 = ktime_get_ns(), t1;
	unsigned int j;

	np_copy_alloc(s);
	t1 = ktime_get_ns();
	s->alloc_ns = t1 - t0;
	for (j = s->from; j < s->to; j++) {
		if (!cb->dst[j])
			continue;
		spage = migrate_pfn_to_page(cb->src[j]);
		dpage = migrate_pfn_to_page(cb->dst[j]);
		if (cb->chan) {
			if (np_copy_dma(cb->chan, dpage, spage)) {
				s->dma_pages++;
				continue;
			}
			s->dma_fallback++;
		}
		copy_highpage(dpage, spage);
		if (!(j & (NP_COPY_RESCHED - 1)))
			cond_resched();
	}
	s->copy_ns = ktime_get_ns() - t1;
}

static void np_copy_work(struct work_struct *work)
{
	np_copy_share_run(container_of(work, struct np_copy_share, work));
}

/* A node with memory to queue a share on: the first target's. */
static int np_copy_node(const struct np_copy_batch *cb)
{
	unsigned int j;

	for (j = 0; j < cb->nr; j++)
		if (cb->target[j] >= 0)
			return cb->target[j];
	return NUMA_NO_NODE;
}

/*
 * The worker count of a batch: np_config.copy_workers, or the CPUs of the
 * target node; capped by NP_COPY_WORKERS_MAX and by NP_COPY_SHARE_MIN
 * pages a share (a work item costs more than copying a few pages).
 */
static unsigned int np_copy_workers(const struct np_copy_batch *cb, int nid)
{
	unsigned int w = READ_ONCE(np_config.copy_workers);

	if (!w)
		w = nid == NUMA_NO_NODE ? 1 :
		    max_t(unsigned int, 1, nr_cpus_node(nid));
	w = min3(w, (unsigned int)NP_COPY_WORKERS_MAX,
		 DIV_ROUND_UP(cb->nr, NP_COPY_SHARE_MIN));
	return max(w, 1U);
}

/*
 * Allocate and fill destinations for @cb: dst[j] set (locked page) for
 * every entry that got one. The caller copies the first share itself.
 */
void np_copy_batch(struct np_copy_batch *cb)
{
	struct np_copy_share shares[NP_COPY_WORKERS_MAX];
	int nid = np_copy_node(cb);
	unsigned int w = np_copy_workers(cb, nid), i, per;
	u64 t0 = ktime_get_ns();

	per = DIV_ROUND_UP(cb->nr, w);
	for (i = 0; i < w; i++) {
		shares[i] = (struct np_copy_share) {
			.cb = cb,
			.from = min(i * per, cb->nr),
			.to = min((i + 1) * per, cb->nr),
		};
		INIT_WORK_ONSTACK(&shares[i].work, np_copy_work);
		if (i)
			queue_work_node(nid == NUMA_NO_NODE ? numa_mem_id() :
					nid, np_copy_wq, &shares[i].work);
	}
	np_copy_share_run(&shares[0]);
	for (i = 0; i < w; i++) {
		if (i)
			flush_work(&shares[i].work);
		destroy_work_on_stack(&shares[i].work);
		cb->alloc_ns += shares[i].alloc_ns;
		cb->copy_ns += shares[i].copy_ns;
		cb->dma_pages += shares[i].dma_pages;
		cb->dma_fallback += shares[i].dma_fallback;
	}
	cb->workers = w;
	cb->wall_ns = ktime_get_ns() - t0;
}

/* A dmaengine memcpy channel, or NULL (none on this host: CPU copies). */
struct dma_chan *np_copy_dma_get(void)
{
	struct dma_chan *chan;
	dma_cap_mask_t mask;

	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_chan_by_mask(&mask);
	return IS_ERR(chan) ? NULL : chan;
}

void np_copy_dma_put(struct dma_chan *chan)
{
	if (chan)
		dma_release_channel(chan);
}
