/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: placement watches (watch.c), their queue and file
 * (watch_file.c) and their netlink event (genl.c).
 */
#ifndef _NUMAPLACE_WATCH_H
#define _NUMAPLACE_WATCH_H

#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "walk.h"

/**
 * struct np_watch_rec - one queued record, as the worker made it
 * @link: in the watch's queue
 * @seq: the change's number (OVERFLOW: the last dropped change's)
 * @start: first address of the changed sub-range
 * @end: its end
 * @reason: enum numaplace_watch_reason
 * @nr_changed: pages whose placement changed (OVERFLOW: records dropped)
 * @before: pages per node before the change, then the unplaced pages
 *	(nr_node_ids + 1 entries)
 * @after: the same after it
 */
struct np_watch_rec {
	struct list_head link;
	u64 seq;
	unsigned long start;
	unsigned long end;
	u32 reason;
	u64 nr_changed;
	u64 *before;
	u64 *after;
	u64 data[];	/* @before and @after point here */
};

/**
 * struct np_watch - one watch, the file's private data
 * @notifier: on [@start, @end) of @mm
 * @mm: the watched mm, mmgrab()bed (never an mm_users reference: that
 *	would keep the process's memory alive after it exits)
 * @start: first watched address
 * @end: end of the range
 * @cookie: the caller's, in every record
 * @pid: the watched process for netlink events (the caller's view)
 * @id: the watch's number in netlink events (np_watch_ids)
 * @nr_nodes: nr_node_ids when the watch began
 * @memcg: the watcher's memcg (a reference): the worker charges records to it
 * @walk_mutex: serialises the walks (worker and the initial scan) and
 *	protects the fields up to @lock
 * @work: the worker
 * @walk: the walker; its consumer is np_watch_emit()
 * @nodes: per page of the range, its node or NP_WATCH_UNPLACED
 * @totals: pages per node, then the unplaced pages (@nr_nodes + 1)
 * @pending: the record being built: changes not reported yet (or NULL)
 * @nomem_ms: how long the worker last waited for room for @pending in
 *	the watcher's memcg (0: it had room)
 * @saw: NP_WATCH_SAW_* of @pending
 * @unsettled: passes @pending was held back
 * @busy_start: first page under migration seen by this pass
 * @busy_end: end of the last one (== @busy_start: none)
 * @gone_rec: the final record, allocated up front so it cannot fail
 * @lock: protects the fields below
 * @dirty_start: start of the part to walk again
 * @dirty_end: its end (== @dirty_start: nothing to walk)
 * @released: the mm was released (its last user exited or exec'd)
 * @unmapped: an unmap covered the whole range
 * @gone: the GONE record is queued: nothing else will be
 * @queue: records not read yet, oldest first
 * @nr_queued: records in @queue
 * @overflow: the OVERFLOW record at the tail of @queue, while unread
 * @seq: the last change's number
 * @wq: readers and pollers
 */
struct np_watch {
	struct mmu_interval_notifier notifier;
	struct mm_struct *mm;
	unsigned long start;
	unsigned long end;
	u64 cookie;
	pid_t pid;
	u64 id;
	unsigned int nr_nodes;
	struct mem_cgroup *memcg;

	struct mutex walk_mutex;
	struct delayed_work work;
	struct np_walk walk;
	u16 *nodes;
	u64 *totals;
	struct np_watch_rec *pending;
	unsigned int nomem_ms;
	unsigned int saw;
	unsigned int unsettled;
	unsigned long busy_start;
	unsigned long busy_end;
	struct np_watch_rec *gone_rec;

	spinlock_t lock;
	unsigned long dirty_start;
	unsigned long dirty_end;
	bool released;
	bool unmapped;
	bool gone;
	struct list_head queue;
	unsigned int nr_queued;
	struct np_watch_rec *overflow;
	u64 seq;
	wait_queue_head_t wq;
};

/* module/watch.c */
struct np_watch *np_watch_new(struct numaplace_watch *a);
void np_watch_stop(struct np_watch *w);
void np_watch_free(struct np_watch *w);

/* module/genl.c: a WATCH event, only when someone listens */
void np_genl_watch(const struct np_watch_rec *r, pid_t pid, u64 cookie,
		   u64 id);

#endif /* _NUMAPLACE_WATCH_H */
