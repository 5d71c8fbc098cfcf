// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: NUMAPLACE_IOC_WATCH. A watch is an mmu interval notifier on a
 * range of one mm and a file descriptor that delivers a record each time
 * the range's placement changes.
 *
 *  - The notifier callback only widens the watch's dirty interval (one
 *    [start, end) under a spinlock: no sleep, no allocation) and queues
 *    the worker after a debounce.
 *  - The worker (charging the watcher's memcg, taken at creation) waits
 *    for the invalidation to end (mmu_interval_read_begin),
 *    takes an mm_users reference if the mm still has users, re-walks the
 *    dirty part with the run walker and compares each page's node with the
 *    one it kept (2 bytes a page). A change makes a record: the whole
 *    range's per-node totals before and after, the changed sub-range, the
 *    reason. Pages under migration (migration entries) are not an answer:
 *    the part is walked again after the debounce. A record is held back
 *    while the range keeps changing under the walk (read_retry), at most
 *    NP_WATCH_SETTLE_PASSES passes.
 *  - Records queue on the watch (np_watch_push(): OVERFLOW past
 *    NP_WATCH_QUEUE_MAX), read through its fd (watch_file.c: the WATCH
 *    ioctl, read, poll, release).
 *  - The watch ends with a GONE record when the mm is released (exit, exec)
 *    or no VMA is left in the range; read() then returns 0.
 *  - np_watch_stop() removes the notifier (after which no callback runs),
 *    then cancels the worker synchronously.
 * Locks: walk_mutex (worker, initial scan) -> mmap_lock (walk). @lock is a
 * leaf, taken by the callback, the worker, read() and poll().
 */
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "walk.h"
#include "watch.h"

/*
 * Pages one watch may cover: its per-page state takes 2 bytes a page, so
 * at most 8 MiB (16 GiB of 4 KiB pages).
 */
#define NP_WATCH_MAX_PAGES	(1UL << 22)
/*
 * From the first invalidation to the walk: a migration invalidates folio
 * by folio, so one record describes a whole call's worth rather than one
 * folio's.
 */
#define NP_WATCH_DEBOUNCE_MS	10
/*
 * A record the watcher's memcg has no room for is tried again after the
 * debounce, then after twice as long each time, up to this: a memcg left
 * full does not make the worker reclaim in it a hundred times a second.
 */
#define NP_WATCH_NOMEM_MAX_MS	1000
/* Passes a change is held back while the range changes under the walk. */
#define NP_WATCH_SETTLE_PASSES	8
/* Pages walked per mmap-lock hold: as QUERY (under a millisecond). */
#define NP_WATCH_BATCH_PAGES	(64UL * 1024)
/* Watches made since the module was loaded: each one's id for netlink. */
static atomic64_t np_watch_ids = ATOMIC64_INIT(0);

/* The per-page state of a page with no node (absent, swap, no VMA). */
#define NP_WATCH_UNPLACED	U16_MAX

/* What the changes of a pending record were. */
#define NP_WATCH_SAW_MOVE	BIT(0)	/* node -> other node */
#define NP_WATCH_SAW_LOSS	BIT(1)	/* node -> none */
#define NP_WATCH_SAW_GAIN	BIT(2)	/* none -> node */

static void np_watch_queue_work(struct np_watch *w)
{
	queue_delayed_work(system_unbound_wq, &w->work,
			   msecs_to_jiffies(NP_WATCH_DEBOUNCE_MS));
}

/* Widen the dirty interval to [@start, @end). Under @w->lock. */
static void np_watch_mark(struct np_watch *w, unsigned long start,
			  unsigned long end)
{
	if (start >= end)
		return;
	if (w->dirty_start == w->dirty_end) {
		w->dirty_start = start;
		w->dirty_end = end;
		return;
	}
	w->dirty_start = min(w->dirty_start, start);
	w->dirty_end = max(w->dirty_end, end);
}

/*
 * The notifier callback: may run in any context that may not sleep (the
 * OOM reaper): a spinlock and queueing a work item only.
 */
static bool np_watch_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct np_watch *w = container_of(mni, struct np_watch, notifier);
	unsigned long start = max(range->start, w->start);
	unsigned long end = min(range->end, w->end);
	bool queue = true;

	spin_lock(&w->lock);
	mmu_interval_set_seq(mni, cur_seq);
	if (w->gone) {
		queue = false;
	} else if (range->event == MMU_NOTIFY_RELEASE) {
		w->released = true;
	} else if (range->event == MMU_NOTIFY_PROTECTION_VMA ||
		   range->event == MMU_NOTIFY_PROTECTION_PAGE ||
		   range->event == MMU_NOTIFY_SOFT_DIRTY) {
		/* The same pages stay mapped: nothing can have moved. */
		queue = false;
	} else {
		if (range->event == MMU_NOTIFY_UNMAP &&
		    start == w->start && end == w->end)
			w->unmapped = true;
		np_watch_mark(w, start, end);
	}
	spin_unlock(&w->lock);
	if (queue)
		np_watch_queue_work(w);
	return true;
}

static const struct mmu_interval_notifier_ops np_watch_notifier_ops = {
	.invalidate = np_watch_invalidate,
};

/*
 * Records queue in order, at most NP_WATCH_QUEUE_MAX per watch (about 140
 * KiB with 2 nodes; watch_file.c reads them): the next change becomes an
 * OVERFLOW record at the tail that absorbs every change until it is read.
 */
#define NP_WATCH_QUEUE_MAX	128

/*
 * Queue @r, or fold it into the OVERFLOW record when the queue is full.
 * @r is a change (not GONE): it gets the next number.
 */
static void np_watch_push(struct np_watch *w, struct np_watch_rec *r)
{
	struct np_watch_rec *o;
	size_t len = (w->nr_nodes + 1) * sizeof(u64);

	spin_lock(&w->lock);
	r->seq = ++w->seq;
	spin_unlock(&w->lock);
	np_genl_watch(r, w->pid, w->cookie, w->id);

	spin_lock(&w->lock);
	o = w->overflow;
	if (o) {
		o->seq = r->seq;
		o->start = min(o->start, r->start);
		o->end = max(o->end, r->end);
		o->nr_changed++;
		memcpy(o->after, r->after, len);
	} else if (w->nr_queued >= NP_WATCH_QUEUE_MAX) {
		r->reason = NUMAPLACE_WATCH_OVERFLOW;
		r->nr_changed = 1;
		w->overflow = r;
	}
	if (!o) {
		list_add_tail(&r->link, &w->queue);
		w->nr_queued++;
	}
	spin_unlock(&w->lock);
	if (o)
		kfree(r);
	wake_up_interruptible_poll(&w->wq, EPOLLIN | EPOLLRDNORM);
}

/* Queue the GONE record @r (always: it is not counted against the limit). */
static void np_watch_push_gone(struct np_watch *w, struct np_watch_rec *r)
{
	spin_lock(&w->lock);
	r->seq = ++w->seq;
	spin_unlock(&w->lock);
	np_genl_watch(r, w->pid, w->cookie, w->id);
	spin_lock(&w->lock);
	list_add_tail(&r->link, &w->queue);
	w->nr_queued++;
	w->gone = true;
	spin_unlock(&w->lock);
	wake_up_interruptible_poll(&w->wq, EPOLLIN | EPOLLRDNORM | EPOLLHUP);
}

/*
 * A record is the watcher's memory (the worker charges its memcg). In a
 * full memcg the allocation fails after one round of reclaim
 * (__GFP_NORETRY), rather than OOM-kill the watcher's tasks:
 * np_watch_pass() keeps the change marked and tries again later
 * (NP_WATCH_NOMEM_MAX_MS).
 */
static struct np_watch_rec *np_watch_rec_alloc(struct np_watch *w)
{
	struct np_watch_rec *r;

	r = kzalloc(struct_size(r, data, 2 * (w->nr_nodes + 1)),
		    GFP_KERNEL_ACCOUNT | __GFP_NORETRY | __GFP_NOWARN);
	if (!r)
		return NULL;
	r->before = r->data;
	r->after = r->data + w->nr_nodes + 1;
	return r;
}

/* Account one page going from node @was to node @now (or UNPLACED). */
static void np_watch_page_moved(struct np_watch *w, unsigned long addr,
				u16 was, u16 now)
{
	struct np_watch_rec *r = w->pending;

	w->totals[was == NP_WATCH_UNPLACED ? w->nr_nodes : was]--;
	w->totals[now == NP_WATCH_UNPLACED ? w->nr_nodes : now]++;
	if (!r)
		return;		/* the initial scan */
	if (was == NP_WATCH_UNPLACED)
		w->saw |= NP_WATCH_SAW_GAIN;
	else if (now == NP_WATCH_UNPLACED)
		w->saw |= NP_WATCH_SAW_LOSS;
	else
		w->saw |= NP_WATCH_SAW_MOVE;
	if (!r->nr_changed++) {
		r->start = addr;
		r->end = addr + PAGE_SIZE;
		return;
	}
	r->start = min(r->start, addr);
	r->end = max(r->end, addr + PAGE_SIZE);
}

/* The walker's consumer: under the mmap lock and RCU, no sleeping. */
static unsigned long np_watch_emit(struct np_walk *walk,
				   const struct np_run *run)
{
	struct np_watch *w = container_of(walk, struct np_watch, walk);
	unsigned long first = (run->start - w->start) >> PAGE_SHIFT;
	unsigned long i, end = first + run->nr_pages;
	u16 now = run->status >= 0 ? run->status : NP_WATCH_UNPLACED;

	if (run->kind & NUMAPLACE_KIND_MIGRATION) {
		/* In transit: its node is known when the migration ends. */
		if (w->busy_start == w->busy_end)
			w->busy_start = run->start;
		w->busy_end = run->start + (run->nr_pages << PAGE_SHIFT);
		return run->nr_pages;
	}
	for (i = first; i < end; i++) {
		if (likely(w->nodes[i] == now))
			continue;
		np_watch_page_moved(w, w->start + (i << PAGE_SHIFT),
				    w->nodes[i], now);
		w->nodes[i] = now;
	}
	return run->nr_pages;
}

/*
 * Walk [@start, @end) of the watch, a bounded stretch per lock hold. The
 * caller holds walk_mutex and an mm_users reference.
 * Return: 0, -ENOENT when no VMA is left in the range, -EINTR on a fatal
 * signal (the initial scan only: a worker gets none).
 */
static int np_watch_scan(struct np_watch *w, unsigned long start,
			 unsigned long end)
{
	unsigned long addr = start;
	int ret;

	w->busy_start = 0;
	w->busy_end = 0;
	while (addr < end) {
		w->walk.budget = NP_WATCH_BATCH_PAGES;
		ret = np_walk_begin(&w->walk);
		if (ret)
			return ret;
		if (addr == start &&
		    !find_vma_intersection(w->mm, w->start, w->end)) {
			np_walk_end(&w->walk);
			return -ENOENT;
		}
		np_walk_range(&w->walk, addr, end);
		np_walk_end(&w->walk);
		addr = w->walk.next;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/* Report the pending record if it holds changes. Under walk_mutex. */
static void np_watch_report(struct np_watch *w)
{
	struct np_watch_rec *r = w->pending;

	if (!r || !r->nr_changed)
		return;
	memcpy(r->after, w->totals, (w->nr_nodes + 1) * sizeof(u64));
	if (w->saw & NP_WATCH_SAW_MOVE)
		r->reason = NUMAPLACE_WATCH_MIGRATED;
	else if (w->saw & NP_WATCH_SAW_LOSS)
		r->reason = NUMAPLACE_WATCH_UNMAPPED;
	else
		r->reason = NUMAPLACE_WATCH_MAPPED;
	w->pending = NULL;
	w->saw = 0;
	np_watch_push(w, r);
}

/* The range or the process is gone: report what was seen, then GONE. */
static void np_watch_finish(struct np_watch *w)
{
	struct np_watch_rec *r = w->gone_rec;

	np_watch_report(w);
	memcpy(r->before, w->totals, (w->nr_nodes + 1) * sizeof(u64));
	r->start = w->start;
	r->end = w->end;
	r->reason = NUMAPLACE_WATCH_GONE;
	w->gone_rec = NULL;

	np_watch_push_gone(w, r);
}

/* Take the dirty interval. false: the watch is over (or already was). */
static bool np_watch_take_dirty(struct np_watch *w, unsigned long *start,
				unsigned long *end, bool *gone)
{
	bool over;

	spin_lock(&w->lock);
	over = w->gone;
	*gone = w->released || w->unmapped;
	*start = w->dirty_start;
	*end = w->dirty_end;
	w->dirty_start = 0;
	w->dirty_end = 0;
	spin_unlock(&w->lock);
	return !over;
}

/* Walk [@start, @end) again @ms from now (unless the work is queued). */
static void np_watch_again_in(struct np_watch *w, unsigned long start,
			      unsigned long end, unsigned int ms)
{
	spin_lock(&w->lock);
	np_watch_mark(w, start, end);
	spin_unlock(&w->lock);
	queue_delayed_work(system_unbound_wq, &w->work, msecs_to_jiffies(ms));
}

/* Walk [@start, @end) again later: the walk failed or saw a migration. */
static void np_watch_again(struct np_watch *w, unsigned long start,
			   unsigned long end)
{
	np_watch_again_in(w, start, end, NP_WATCH_DEBOUNCE_MS);
}

/*
 * One pass over the changed part: walk it between read_begin and
 * read_retry; report unless it changed under the walk or pages were in
 * transit (held back up to NP_WATCH_SETTLE_PASSES passes).
 */
static void np_watch_pass(struct np_watch *w, unsigned long start,
			  unsigned long end)
{
	unsigned long seq;
	bool retry, busy;
	int ret;

	if (!w->pending) {
		w->pending = np_watch_rec_alloc(w);
		if (!w->pending) {
			w->nomem_ms = clamp_t(unsigned int, 2 * w->nomem_ms,
					      NP_WATCH_DEBOUNCE_MS,
					      NP_WATCH_NOMEM_MAX_MS);
			np_watch_again_in(w, start, end, w->nomem_ms);
			return;
		}
		w->nomem_ms = 0;
		memcpy(w->pending->before, w->totals,
		       (w->nr_nodes + 1) * sizeof(u64));
	}
	if (!mmget_not_zero(w->mm)) {
		np_watch_finish(w);	/* the RELEASE callback is coming */
		return;
	}
	seq = mmu_interval_read_begin(&w->notifier);
	ret = np_watch_scan(w, start, end);
	mmput(w->mm);
	if (ret) {
		np_watch_finish(w);	/* -ENOENT: no VMA left */
		return;
	}
	spin_lock(&w->lock);
	retry = mmu_interval_read_retry(&w->notifier, seq);
	spin_unlock(&w->lock);
	busy = w->busy_start != w->busy_end;
	if (busy)
		np_watch_again(w, w->busy_start, w->busy_end);
	if ((retry || busy) && w->unsettled++ < NP_WATCH_SETTLE_PASSES) {
		/* Not every invalidation queues a pass (mprotect): ask one. */
		if (retry)
			np_watch_again(w, start, end);
		return;
	}
	w->unsettled = 0;
	np_watch_report(w);
}

static void np_watch_work(struct work_struct *work)
{
	struct np_watch *w = container_of(to_delayed_work(work),
					  struct np_watch, work);
	unsigned long start, end;
	bool gone;

	struct mem_cgroup *old;

	mutex_lock(&w->walk_mutex);
	if (!np_watch_take_dirty(w, &start, &end, &gone))
		goto unlock;
	/* Records are the watcher's memory: charged to its memcg. */
	old = set_active_memcg(w->memcg);
	if (gone)
		np_watch_finish(w);
	else if (start < end)
		np_watch_pass(w, start, end);
	set_active_memcg(old);
unlock:
	mutex_unlock(&w->walk_mutex);
}

/* Free a stopped watch (np_watch_stop()) and what it holds. */
void np_watch_free(struct np_watch *w)
{
	struct np_watch_rec *r, *tmp;

	list_for_each_entry_safe(r, tmp, &w->queue, link)
		kfree(r);
	kfree(w->pending);
	kfree(w->gone_rec);
	kfree(w->totals);
	kvfree(w->nodes);
	mem_cgroup_put(w->memcg);
	mmdrop(w->mm);
	kfree(w);
}

/* The notifier first: after its removal no callback queues the worker. */
void np_watch_stop(struct np_watch *w)
{
	mmu_interval_notifier_remove(&w->notifier);
	cancel_delayed_work_sync(&w->work);
}

static struct np_watch *np_watch_alloc(struct mm_struct *mm,
				       unsigned long start, unsigned long end)
{
	unsigned long i, nr_pages = (end - start) >> PAGE_SHIFT;
	struct np_watch *w;

	w = kzalloc(sizeof(*w), NP_GFP_CALL);
	if (!w)
		return NULL;
	w->nr_nodes = nr_node_ids;
	w->nodes = np_call_array_alloc(nr_pages, sizeof(u16), 0);
	w->totals = kcalloc(w->nr_nodes + 1, sizeof(u64), NP_GFP_CALL);
	w->gone_rec = np_watch_rec_alloc(w);
	if (!w->nodes || !w->totals || !w->gone_rec) {
		kvfree(w->nodes);
		kfree(w->totals);
		kfree(w->gone_rec);
		kfree(w);
		return NULL;
	}
	for (i = 0; i < nr_pages; i++)
		w->nodes[i] = NP_WATCH_UNPLACED;
	w->totals[w->nr_nodes] = nr_pages;
	/*
	 * The worker allocates records in a kworker, which GFP_KERNEL_ACCOUNT
	 * alone would charge to the root: it charges the memcg of the
	 * watcher (the caller now, not the watched process).
	 */
	w->memcg = get_mem_cgroup_from_mm(current->mm);
	mmgrab(mm);
	w->mm = mm;
	w->start = start;
	w->end = end;
	mutex_init(&w->walk_mutex);
	INIT_DELAYED_WORK(&w->work, np_watch_work);
	w->walk.mm = mm;
	w->walk.emit = np_watch_emit;
	spin_lock_init(&w->lock);
	INIT_LIST_HEAD(&w->queue);
	init_waitqueue_head(&w->wq);
	return w;
}

static int np_watch_check(const struct numaplace_watch *a)
{
	u64 end;

	if (a->reserved0 || a->reserved1 ||
	    memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!a->node_pages_ptr != !a->node_pages_len ||
	    a->node_pages_len > NUMAPLACE_MAX_NODES)
		return -EINVAL;
	if (!a->len || np_range_check(a->start, a->len))
		return -EINVAL;
	end = PAGE_ALIGN(a->start + a->len);
	if (end > TASK_SIZE_MAX)
		return -EFAULT;		/* no VMA can be there */
	if ((end - (a->start & PAGE_MASK)) >> PAGE_SHIFT > NP_WATCH_MAX_PAGES)
		return -E2BIG;
	if (nr_node_ids > NUMAPLACE_WATCH_NODES)
		return -EOPNOTSUPP;
	return 0;
}

/* The range's totals as the watch starts, into the caller's buffer. */
static int np_watch_put_totals(const struct np_watch *w,
			       const struct numaplace_watch *a)
{
	unsigned int n = min(a->node_pages_len, w->nr_nodes);
	u64 __user *dst = u64_to_user_ptr(a->node_pages_ptr);
	unsigned int i;

	if (!a->node_pages_ptr)
		return 0;
	if (copy_to_user(dst, w->totals, n * sizeof(u64)))
		return -EFAULT;
	for (i = n; i < a->node_pages_len; i++)
		if (put_user(0ULL, dst + i))
			return -EFAULT;
	return 0;
}

/*
 * Insert the notifier, then take the first snapshot: a change meanwhile is
 * caught by the notifier and walked again. The worker waits for the
 * snapshot (walk_mutex), so it never compares with the empty state.
 */
static int np_watch_start(struct np_watch *w)
{
	int ret;

	mutex_lock(&w->walk_mutex);
	ret = mmu_interval_notifier_insert(&w->notifier, w->mm, w->start,
					   w->end - w->start,
					   &np_watch_notifier_ops);
	if (ret) {
		mutex_unlock(&w->walk_mutex);
		return ret;
	}
	ret = np_watch_scan(w, w->start, w->end);
	/* Pages under migration count as unplaced until a pass sees them. */
	if (!ret && w->busy_start != w->busy_end)
		np_watch_again(w, w->busy_start, w->busy_end);
	mutex_unlock(&w->walk_mutex);
	if (ret == -ENOENT)
		ret = -EFAULT;		/* nothing mapped there to watch */
	if (ret)
		np_watch_stop(w);	/* after the unlock: it waits for the worker */
	return ret;
}

/**
 * np_watch_new - a watch for NUMAPLACE_IOC_WATCH, started
 * @a: the request; the range's totals are written to it
 *
 * Return: the watch (np_watch_stop(), then np_watch_free(), end it), or an
 * ERR_PTR().
 */
struct np_watch *np_watch_new(struct numaplace_watch *a)
{
	struct np_target t;
	struct np_watch *w;
	int ret;

	BUILD_BUG_ON(offsetofend(struct numaplace_watch, reserved) !=
		     NUMAPLACE_WATCH_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct numaplace_watch_record) !=
		     NUMAPLACE_WATCH_RECORD_SIZE);
	ret = np_watch_check(a);
	if (ret)
		return ERR_PTR(ret);
	ret = np_target_get(a->pid, &t);
	if (ret)
		return ERR_PTR(ret);
	w = np_watch_alloc(t.mm, a->start & PAGE_MASK,
			   PAGE_ALIGN(a->start + a->len));
	ret = -ENOMEM;
	if (!w)
		goto put_target;
	w->cookie = a->cookie;
	w->id = atomic64_inc_return(&np_watch_ids);
	w->pid = a->pid ?: task_tgid_vnr(current);
	ret = np_watch_start(w);
	if (ret)
		goto free_watch;
	ret = np_watch_put_totals(w, a);
	if (ret)
		goto stop_watch;
	np_target_put(&t);
	return w;

stop_watch:
	np_watch_stop(w);
free_watch:
	np_watch_free(w);
put_target:
	np_target_put(&t);
	return ERR_PTR(ret);
}

/* Watches need every node in a record. */
bool np_watch_supported(void)
{
	return nr_node_ids <= NUMAPLACE_WATCH_NODES;
}
