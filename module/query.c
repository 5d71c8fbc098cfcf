// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: NUMAPLACE_IOC_QUERY. The walker's runs become the caller's
 * runs, a move_pages(2)-style status array and per-node totals.
 *
 * User memory is touched only between walks, never under the mmap lock (a
 * fault on the caller's own mm would take it again): each round walks a
 * bounded stretch into kernel buffers (runs, and segments of equal status),
 * drops the locks, writes out, checks for a fatal signal and reschedules.
 * Memory use is bounded whatever the size of the request.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "walk.h"
#include "compat.h"
#include "stats.h"

/*
 * Pages (range mode) or addresses (array mode) answered per round when a
 * status array is wanted: bounds the segment and stretch buffers (16 KiB
 * and 32 KiB at worst) and the time between signal checks.
 */
#define NP_QUERY_CHUNK		2048
/* Runs buffered (on the stack) before they are copied out: 384 bytes. */
#define NP_QUERY_RUNS_CHUNK	16
/* Node totals kept on the stack up to this many nodes, else allocated. */
#define NP_QUERY_STACK_NODES	8
/*
 * Pages walked per mmap-lock hold when no status array bounds the round:
 * 256 MiB of 4 KiB pages is well under a millisecond of walking, so
 * writers (mmap, munmap) wait no longer than that.
 */
#define NP_QUERY_BATCH_PAGES	(64UL * 1024)

/**
 * struct np_query - one QUERY call
 * @w: the walk; its consumer is np_query_emit()
 * @segs: when a status array is wanted, this round's answers in page order
 *	as segments of equal status (NP_QUERY_CHUNK entries)
 * @nr_segs: segments in @segs
 * @runs: kernel buffer of runs not yet copied out; the last one stays
 *	behind between rounds so that the next round can extend it
 * @nr_runs: runs in @runs
 * @runs_room: runs the caller's buffer can still take, counting @runs
 * @runs_full: the caller's runs buffer is full: the call ends
 * @node_pages: pages answered per node (nr_node_ids entries at least)
 * @unplaced: pages answered with a negative status
 * @young: pages answered young (QUERY_ACCESS)
 * @access: the access scan (QUERY_ACCESS); the walk points at it
 * @runs_buf: @runs when the caller wants runs
 * @node_buf: @node_pages for up to NP_QUERY_STACK_NODES nodes
 */
struct np_query {
	struct np_walk w;
	struct np_seg *segs;
	unsigned int nr_segs;
	struct numaplace_run *runs;
	unsigned int nr_runs;
	u64 runs_room;
	bool runs_full;
	u64 *node_pages;
	u64 unplaced;
	u64 young;
	struct np_access access;
	struct numaplace_run runs_buf[NP_QUERY_RUNS_CHUNK];
	u64 node_buf[NP_QUERY_STACK_NODES];
};

static bool np_query_extends(const struct numaplace_run *last,
			     const struct np_run *run)
{
	return last->node == run->status && last->kind == run->kind &&
	       last->start + (last->nr_pages << PAGE_SHIFT) == run->start;
}

/* Account @n pages answered @status: segments and totals. */
static void np_query_answer(struct np_query *q, unsigned long n, int status)
{
	struct np_seg *last;

	if (q->segs) {
		last = q->nr_segs ? &q->segs[q->nr_segs - 1] : NULL;
		if (last && last->status == status)
			last->nr_pages += n;
		else
			q->segs[q->nr_segs++] = (struct np_seg){ n, status };
	}
	if (status >= 0)
		q->node_pages[status] += n;
	else
		q->unplaced += n;
}

/* Record @n pages of @run in the runs buffer. false: no room now. */
static bool np_query_add_run(struct np_query *q, const struct np_run *run,
			     unsigned long n)
{
	struct numaplace_run *last = q->nr_runs ? &q->runs[q->nr_runs - 1] : NULL;

	if (last && np_query_extends(last, run)) {
		last->nr_pages += n;
		return true;
	}
	if (!q->runs_room) {
		q->runs_full = true;
		return false;
	}
	if (q->nr_runs == NP_QUERY_RUNS_CHUNK)
		return false;	/* copy out, then go on */
	q->runs[q->nr_runs++] = (struct numaplace_run){
		.start = run->start,
		.nr_pages = n,
		.node = run->status,
		.kind = run->kind,
	};
	q->runs_room--;
	return true;
}

static unsigned long np_query_emit(struct np_walk *w, const struct np_run *run)
{
	struct np_query *q = container_of(w, struct np_query, w);

	if (q->runs && !np_query_add_run(q, run, run->nr_pages))
		return 0;
	np_query_answer(q, run->nr_pages, run->status);
	if (run->kind & NUMAPLACE_KIND_YOUNG)
		q->young += run->nr_pages;
	return run->nr_pages;
}

/* Copy out the buffered runs; all but the last unless @final. */
static int np_query_put_runs(struct np_query *q, struct numaplace_query *a,
			     bool final)
{
	unsigned int n = final ? q->nr_runs : q->nr_runs - !!q->nr_runs;
	struct numaplace_run __user *dst;

	if (!n)
		return 0;
	dst = u64_to_user_ptr(a->runs_ptr) + a->nr_runs * sizeof(*dst);
	if (copy_to_user(dst, q->runs, n * sizeof(*dst)))
		return -EFAULT;
	a->nr_runs += n;
	q->nr_runs -= n;
	if (q->nr_runs)
		q->runs[0] = q->runs[n];
	return 0;
}

/* One round between the locks is over: check for a signal, yield. */
static int np_query_pause(void)
{
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

/* Write this round's segments out at @dst and start the next round. */
static int np_query_put_segs(struct np_query *q, s32 __user *dst)
{
	int ret = 0;

	if (q->segs && dst)
		ret = np_put_segs(dst, q->segs, q->nr_segs);
	q->nr_segs = 0;
	return ret;
}

/*
 * Where a round with a status array ends: NP_QUERY_CHUNK pages on, or for
 * an access scan at the PMD boundary before that, so that no THP is cut
 * in two rounds (a leaf only partly walked is reported, not cleared).
 */
static unsigned long np_query_chunk_end(const struct np_query *q,
					unsigned long addr)
{
	unsigned long stop = addr + NP_QUERY_CHUNK * PAGE_SIZE;

	if (q->w.access && ALIGN_DOWN(stop, PMD_SIZE) > addr)
		stop = ALIGN_DOWN(stop, PMD_SIZE);
	return stop;
}

static int np_query_range(struct np_query *q, struct numaplace_query *a,
			  unsigned long start, unsigned long end)
{
	s32 __user *ustatus = u64_to_user_ptr(a->status_ptr);
	unsigned long addr = start, stop;
	int ret = 0;

	while (addr < end && !q->runs_full) {
		stop = end;
		if (q->segs && (end - addr) >> PAGE_SHIFT > NP_QUERY_CHUNK)
			stop = np_query_chunk_end(q, addr);
		q->w.budget = NP_QUERY_BATCH_PAGES;
		ret = np_walk_begin(&q->w);
		if (ret)
			break;
		np_walk_range(&q->w, addr, stop);
		np_walk_end(&q->w);

		ret = np_query_put_segs(q, ustatus + ((addr - start) >> PAGE_SHIFT));
		if (ret)
			break;
		addr = q->w.next;
		a->done = (addr - start) >> PAGE_SHIFT;
		if (q->runs) {
			ret = np_query_put_runs(q, a, false);
			if (ret)
				break;
		}
		ret = np_query_pause();
		if (ret)
			break;
	}
	if (q->runs && ret != -EFAULT)
		ret = np_query_put_runs(q, a, true) ?: ret;
	return ret;
}

/* Answer one chunk of an address array, stretch by stretch. */
static void np_query_stretches(struct np_query *q, const struct np_stretch *st,
			       unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		/* Beyond any user VMA: as vma_lookup() failing. */
		if (st[i].start >= TASK_SIZE_MAX) {
			np_query_answer(q, st[i].nr_pages, -EFAULT);
			continue;
		}
		np_walk_range(&q->w, st[i].start,
			      st[i].start + ((unsigned long)st[i].nr_pages << PAGE_SHIFT));
	}
}

static int np_query_array(struct np_query *q, struct numaplace_query *a,
			  struct np_stretch *st)
{
	const u64 __user *upages = u64_to_user_ptr(a->pages_ptr);
	s32 __user *ustatus = u64_to_user_ptr(a->status_ptr);
	unsigned int n;
	int nr, ret;
	u64 i;

	q->w.budget = ULONG_MAX;	/* a round is bounded by its addresses */
	for (i = 0; i < a->count; i += n) {
		n = min_t(u64, a->count - i, NP_QUERY_CHUNK);
		nr = np_get_stretches(upages + i, n, st, NULL);
		if (nr < 0)
			return nr;
		ret = np_walk_begin(&q->w);
		if (ret)
			return ret;
		np_query_stretches(q, st, nr);
		np_walk_end(&q->w);
		ret = np_query_put_segs(q, ustatus ? ustatus + i : NULL);
		if (ret)
			return ret;
		a->done = i + n;
		ret = np_query_pause();
		if (ret)
			return ret;
	}
	return 0;
}

static int np_query_check(const struct numaplace_query *a)
{
	if (a->reserved0 || a->reserved1 ||
	    memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!a->runs_ptr != !a->runs_cap)
		return -EINVAL;
	if (!a->node_pages_ptr != !a->node_pages_len ||
	    a->node_pages_len > NUMAPLACE_MAX_NODES)
		return -EINVAL;
	/* Clearing reads; a flush is of what was cleared. */
	if ((a->flags & NUMAPLACE_QUERY_FLUSH_TLB) &&
	    !(a->flags & NUMAPLACE_QUERY_CLEAR_ACCESS))
		return -EINVAL;
	if ((a->flags & NUMAPLACE_QUERY_CLEAR_ACCESS) &&
	    !(a->flags & NUMAPLACE_QUERY_ACCESS))
		return -EINVAL;
	/* The access scan reports in runs: range mode only. */
	if (a->flags & NUMAPLACE_QUERY_PAGES)
		return a->start || a->len || a->runs_ptr ||
		       (a->flags & NUMAPLACE_QUERY_ACCESS) ? -EINVAL : 0;
	if (a->pages_ptr || a->count)
		return -EINVAL;
	return np_range_check(a->start, a->len);
}

static int np_query_put_totals(struct np_query *q, struct numaplace_query *a)
{
	a->nr_unplaced = q->unplaced;
	a->nr_young = q->young;
	if (!a->node_pages_ptr)
		return 0;
	if (copy_to_user(u64_to_user_ptr(a->node_pages_ptr), q->node_pages,
			 a->node_pages_len * sizeof(u64)))
		return -EFAULT;
	return 0;
}

static int np_query_run(struct np_query *q, struct numaplace_query *a)
{
	unsigned int nr_nodes = max_t(unsigned int, nr_node_ids, a->node_pages_len);
	struct np_stretch *st = NULL;
	int ret = -ENOMEM;

	q->node_pages = q->node_buf;
	if (nr_nodes > NP_QUERY_STACK_NODES) {
		q->node_pages = kcalloc(nr_nodes, sizeof(u64), NP_GFP_CALL);
		if (!q->node_pages)
			return -ENOMEM;
	}
	if (a->status_ptr) {
		q->segs = kmalloc_array(NP_QUERY_CHUNK, sizeof(*q->segs),
					NP_GFP_CALL);
		if (!q->segs)
			goto free_node_pages;
	}
	if (a->flags & NUMAPLACE_QUERY_PAGES) {
		/* 32 KiB: no high-order allocation needed. */
		st = np_call_array_alloc(NP_QUERY_CHUNK, sizeof(*st), 0);
		if (!st)
			goto free_segs;
		ret = np_query_array(q, a, st);
		kvfree(st);
	} else {
		if (a->runs_ptr) {
			q->runs = q->runs_buf;
			q->runs_room = a->runs_cap;
		}
		ret = a->len ? np_query_range(q, a, a->start & PAGE_MASK,
					      PAGE_ALIGN(a->start + a->len)) : 0;
	}
	if (!ret || ret == -EINTR)
		ret = np_query_put_totals(q, a) ?: ret;
free_segs:
	kfree(q->segs);
free_node_pages:
	if (q->node_pages != q->node_buf)
		kfree(q->node_pages);
	return ret;
}

/* The /proc file whose check the call's flags stand for. */
static enum np_target_need np_query_need(u32 flags)
{
	if (flags & NUMAPLACE_QUERY_CLEAR_ACCESS)
		return NP_TARGET_CLEAR_REFS;
	if (flags & NUMAPLACE_QUERY_ACCESS)
		return NP_TARGET_PAGEMAP;
	return NP_TARGET_MOVE;
}

int np_query(void *arg)
{
	struct numaplace_query *a = arg;
	struct np_query q = { .w.emit = np_query_emit };
	int ret;

	BUILD_BUG_ON(offsetofend(struct numaplace_query, reserved) !=
		     NUMAPLACE_QUERY_SIZE_VER0);
	ret = np_query_check(a);
	if (ret)
		return ret;
	a->nr_runs = 0;
	a->done = 0;
	a->nr_unplaced = 0;
	a->nr_young = 0;

	q.w.mm = np_target_mm(a->pid, np_query_need(a->flags));
	if (IS_ERR(q.w.mm))
		return PTR_ERR(q.w.mm);
	if (NP_SYSCALL_QUERY_LEGACY && (a->flags & NUMAPLACE_QUERY_AS_SYSCALL))
		q.w.flags |= NP_WALK_LEGACY;
	if (a->flags & NUMAPLACE_QUERY_ACCESS) {
		ret = np_access_begin(&q.access, q.w.mm, a->flags);
		if (ret)
			goto put_mm;
		q.w.access = &q.access;
		/* Runs under their lock: np_access_unreport() needs it. */
		if (q.access.clear)
			q.w.flags |= NP_WALK_LOCKED;
	}

	ret = np_query_run(&q, a);
	if (q.w.access)
		np_access_end(&q.access, q.w.mm);
put_mm:
	mmput(q.w.mm);
	np_stat_add(NP_STAT_QUERY_CALLS, 1);
	np_stat_add(NP_STAT_QUERY_PAGES, a->done);
	np_stat_add(NP_STAT_QUERY_RUNS, a->nr_runs);
	if (a->flags & NUMAPLACE_QUERY_ACCESS) {
		np_stat_add(NP_STAT_ACCESS_CALLS, 1);
		np_stat_add(NP_STAT_ACCESS_PAGES, a->done);
		np_stat_add(NP_STAT_ACCESS_YOUNG, a->nr_young);
	}
	return ret;
}
