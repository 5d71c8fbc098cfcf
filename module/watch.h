/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: placement watches (watch.c) and their netlink event (genl.c).
 */
#ifndef _NUMAPLACE_WATCH_H
#define _NUMAPLACE_WATCH_H

#include <linux/list.h>
#include <linux/types.h>

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

/* module/genl.c: a WATCH event, only when someone listens */
void np_genl_watch(const struct np_watch_rec *r, pid_t pid, u64 cookie,
		   u64 id);

#endif /* _NUMAPLACE_WATCH_H */
