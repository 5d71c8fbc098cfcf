/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: the batched engine's copy step (module/copy.c).
 */
#ifndef _NUMAPLACE_COPY_H
#define _NUMAPLACE_COPY_H

#include <linux/types.h>

#include "numaplace.h"

/* A share of fewer pages is not worth a work item (queue + wake-up). */
#define NP_COPY_SHARE_MIN	64
/* Pages copied between cond_resched() calls. */
#define NP_COPY_RESCHED		64

/*
 * In a page-table range's src array (engine_pt.c; never handed to
 * migrate_vma_*()): a page of a large folio after its first. The entry of
 * the folio's first page stands for the folio (one destination folio of
 * its order, filled whole, moved whole, or none); the entries marked
 * follow it. Bit 5 is free in the migrate_pfn() flags of 6.1 to 7.3
 * (copy.c checks it at build time).
 */
#define NP_PFN_TAIL		(1UL << 5)

/*
 * The entries entry @j of @src (@n entries) stands for: itself and the
 * NP_PFN_TAIL entries after it (a large folio's pages, 1 for the rest).
 */
static inline unsigned long np_pfn_entries(const unsigned long *src,
					   unsigned long n, unsigned long j)
{
	unsigned long k = j + 1;

	while (k < n && (src[k] & NP_PFN_TAIL))
		k++;
	return k - j;
}

struct dma_chan;
struct page;

/**
 * struct np_copy_batch - destinations to allocate and fill
 * @src: migrate_pfn() of each source page, as migrate_vma_setup() left it
 *	(or np_pt_unmap(), whose large folios span several: NP_PFN_TAIL)
 * @dst: out: migrate_pfn() of a locked destination filled with the data,
 *	or 0 (not ours, already on its node, or no memory on the node);
 *	between np_copy_reserve() and np_copy_batch(), the reservations
 * @target: the node each entry goes to, or -1: leave it
 * @head: np_copy_reserve(): per entry, 1 + the order of the folio that
 *	starts there, 0 for none; NULL: one page each
 * @nr: entries
 * @node_err: per node: set to -ENOMEM when the node ran out of memory
 * @pages: scratch, @nr entries
 * @slots: scratch, @nr entries
 * @dma: copy with a DMA channel (np_config.dma)
 * @chan: the DMA memcpy channel, or NULL: none on this host
 * @shares: each worker's part of the totals below
 * @alloc_ns: out: time allocating, summed over the workers
 * @copy_ns: out: time copying, summed over the workers
 * @wall_ns: out: time from the first share started to the last ended
 * @dma_pages: out: pages the DMA channel copied
 * @dma_fallback: out: pages whose DMA copy failed, copied by the CPU
 * @workers: out: threads that took a share (the caller included)
 * @abort: the caller got a fatal signal: the shares stop copying and free
 *	the destinations not filled yet (those pages stay where they are)
 * @dma_failed: a DMA copy failed or timed out: the rest of the batch
 *	copies with the CPU (set by any share)
 * @ran_out: np_copy_reserve(): a node of @target ran out of base pages
 *	(set by any share)
 */
struct np_copy_batch {
	unsigned long *src;
	unsigned long *dst;
	s32 *target;
	const u8 *head;
	unsigned int nr;
	int *node_err;
	struct page **pages;
	unsigned int *slots;
	bool dma;
	struct dma_chan *chan;
	struct np_copy_stats {
		u64 alloc_ns, copy_ns;
		unsigned long dma_pages, dma_fallback;
	} shares[NUMAPLACE_COPY_WORKERS_MAX];
	u64 alloc_ns, copy_ns, wall_ns;
	unsigned long dma_pages, dma_fallback;
	unsigned int workers;
	bool abort;
	bool dma_failed;
	bool ran_out;
};

/* One share of a parallel job: items [@from, @to), share number @share. */
typedef void (*np_par_fn)(void *ctx, unsigned int share, unsigned int from,
			  unsigned int to);

int np_copy_init(void);
#ifdef NP_COPY_LIMIT
/* module/copy_limit.c: the benchmark's probe (Kbuild NP_COPY_LIMIT=y). */
void np_copy_limit_init(void);
void np_copy_limit_exit(void);
#else
static inline void np_copy_limit_init(void) {}
static inline void np_copy_limit_exit(void) {}
#endif
unsigned int np_par_workers(unsigned int nr, int nid, unsigned int min_share);
void np_par_run(unsigned int nr, unsigned int workers, int nid, np_par_fn fn,
		void *ctx);
void np_copy_exit(void);
bool np_vma_src_ok(struct page *spage);
unsigned int np_copy_reserve(struct np_copy_batch *cb);
void np_copy_reserve_cut(struct np_copy_batch *cb, unsigned int from);
void np_copy_reserve_check(struct np_copy_batch *cb);
void np_copy_batch(struct np_copy_batch *cb);
struct dma_chan *np_copy_dma_get(void);
void np_copy_dma_put(struct dma_chan *chan);

#endif /* _NUMAPLACE_COPY_H */
