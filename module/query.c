// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: NUMAPLACE_IOC_QUERY. The walker's runs become the caller's
 * runs, a move_pages(2)-style status array and per-node totals.
 *
 * User memory is touched only between walks, never under the mmap lock (a
 * fault on the caller's own mm would take it again): each round walks a
 * bounded stretch into kernel buffers, drops the locks, copies out, checks
 * for a fatal signal and reschedules. Memory use is bounded whatever the
 * size of the request.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "walk.h"
#include "compat.h"

/* Status entries answered per round: 8 KiB of buffer, one lock round. */
#define NP_QUERY_STATUS_CHUNK	2048
/* Array mode: addresses read per round, one status each. */
#define NP_QUERY_ADDR_CHUNK	NP_QUERY_STATUS_CHUNK
/* Runs buffered before they are copied out: 3 KiB. */
#define NP_QUERY_RUNS_CHUNK	128
/*
 * Pages walked per mmap-lock hold when no status array bounds the round:
 * 256 MiB of 4 KiB pages is well under a millisecond of walking, so
 * writers (mmap, munmap) wait no longer than that.
 */
#define NP_QUERY_BATCH_PAGES	(64UL * 1024)

/**
 * struct np_query - one QUERY call
 * @w: the walk; its consumer is np_query_emit()
 * @status: kernel buffer; @status[i] answers @st_base + i pages
 * @st_base: address answered by @status[0]
 * @st_len: pages @status covers this round
 * @runs: kernel buffer of runs not yet copied out; the last one stays
 *	behind between rounds so that the next round can extend it
 * @nr_runs: runs in @runs
 * @runs_room: runs the caller's buffer can still take, counting @runs
 * @runs_full: the caller's runs buffer is full: the call ends
 * @node_pages: pages answered per node (nr_node_ids entries)
 * @unplaced: pages answered with a negative status
 */
struct np_query {
	struct np_walk w;
	s32 *status;
	unsigned long st_base;
	unsigned long st_len;
	struct numaplace_run *runs;
	unsigned int nr_runs;
	u64 runs_room;
	bool runs_full;
	u64 *node_pages;
	u64 unplaced;
};

static bool np_query_extends(const struct numaplace_run *last,
			     const struct np_run *run)
{
	return last->node == run->status && last->kind == run->kind &&
	       last->start + (last->nr_pages << PAGE_SHIFT) == run->start;
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
	unsigned long n = run->nr_pages, idx = 0, i;

	if (q->status) {
		idx = (run->start - q->st_base) >> PAGE_SHIFT;
		n = min(n, q->st_len - idx);
	}
	if (q->runs && !np_query_add_run(q, run, n))
		return 0;
	if (q->status)
		for (i = 0; i < n; i++)
			q->status[idx + i] = run->status;
	if (run->status >= 0)
		q->node_pages[run->status] += n;
	else
		q->unplaced += n;
	return n;
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

static int np_query_range(struct np_query *q, struct numaplace_query *a,
			  unsigned long start, unsigned long end)
{
	s32 __user *ustatus = u64_to_user_ptr(a->status_ptr);
	unsigned long addr = start, stop;
	int ret = 0;

	while (addr < end && !q->runs_full) {
		stop = end;
		if (q->status) {
			if ((end - addr) >> PAGE_SHIFT > NP_QUERY_STATUS_CHUNK)
				stop = addr + NP_QUERY_STATUS_CHUNK * PAGE_SIZE;
			q->st_base = addr;
			q->st_len = (stop - addr) >> PAGE_SHIFT;
		}
		q->w.budget = NP_QUERY_BATCH_PAGES;
		ret = np_walk_begin(&q->w);
		if (ret)
			break;
		np_walk_range(&q->w, addr, stop);
		np_walk_end(&q->w);

		if (q->status &&
		    copy_to_user(ustatus + ((addr - start) >> PAGE_SHIFT),
				 q->status,
				 ((q->w.next - addr) >> PAGE_SHIFT) * sizeof(s32))) {
			ret = -EFAULT;
			break;
		}
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

/* Walk one stretch of consecutive pages of an address array. */
static void np_query_stretch(struct np_query *q, const u64 *addrs, s32 *status,
			     unsigned int n)
{
	unsigned long base = addrs[0] & PAGE_MASK;

	/* Beyond any user VMA (and where base + n pages would wrap). */
	if (base >= TASK_SIZE_MAX) {
		q->unplaced += n;
		while (n--)
			*status++ = -EFAULT;
		return;
	}
	q->status = status;
	q->st_base = base;
	q->st_len = n;
	np_walk_range(&q->w, base, base + ((unsigned long)n << PAGE_SHIFT));
}

static int np_query_array(struct np_query *q, struct numaplace_query *a,
			  u64 *addrs, s32 *status)
{
	const u64 __user *upages = u64_to_user_ptr(a->pages_ptr);
	s32 __user *ustatus = u64_to_user_ptr(a->status_ptr);
	unsigned int n, j, k;
	u64 i, base;
	int ret = 0;

	q->w.budget = ULONG_MAX;	/* a round is bounded by its addresses */
	for (i = 0; i < a->count; i += n) {
		n = min_t(u64, a->count - i, NP_QUERY_ADDR_CHUNK);
		if (copy_from_user(addrs, upages + i, n * sizeof(*addrs)))
			return -EFAULT;
		ret = np_walk_begin(&q->w);
		if (ret)
			return ret;
		for (j = 0; j < n; j = k) {
			base = addrs[j] & PAGE_MASK;
			for (k = j + 1; k < n && base < TASK_SIZE_MAX; k++)
				if ((addrs[k] & PAGE_MASK) !=
				    base + ((u64)(k - j) << PAGE_SHIFT))
					break;
			np_query_stretch(q, addrs + j, status + j, k - j);
		}
		np_walk_end(&q->w);
		if (ustatus && copy_to_user(ustatus + i, status, n * sizeof(*status)))
			return -EFAULT;
		a->done = i + n;
		ret = np_query_pause();
		if (ret)
			return ret;
	}
	return 0;
}

static int np_query_check(const struct numaplace_query *a)
{
	u64 end;

	if (a->reserved0 || a->reserved1 ||
	    memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (!a->runs_ptr != !a->runs_cap)
		return -EINVAL;
	if (!a->node_pages_ptr != !a->node_pages_len ||
	    a->node_pages_len > NUMAPLACE_MAX_NODES)
		return -EINVAL;
	if (a->flags & NUMAPLACE_QUERY_PAGES)
		return a->start || a->len || a->runs_ptr ? -EINVAL : 0;
	if (a->pages_ptr || a->count)
		return -EINVAL;
	/* The range and its page-aligned end must not wrap. */
	if (check_add_overflow(a->start, a->len, &end) ||
	    (end & ~PAGE_MASK && !PAGE_ALIGN(end)))
		return -EINVAL;
	return 0;
}

static int np_query_put_totals(struct np_query *q, struct numaplace_query *a)
{
	a->nr_unplaced = q->unplaced;
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
	s32 *status = NULL;
	u64 *addrs = NULL;
	int ret = -ENOMEM;

	q->node_pages = kcalloc(nr_nodes, sizeof(u64), GFP_KERNEL);
	if (!q->node_pages)
		return -ENOMEM;
	if (a->flags & NUMAPLACE_QUERY_PAGES || a->status_ptr) {
		status = kmalloc_array(NP_QUERY_STATUS_CHUNK, sizeof(s32),
				       GFP_KERNEL);
		if (!status)
			goto free_node_pages;
	}
	/* Array mode points q->status into the buffer per stretch. */
	q->status = status;
	if (a->flags & NUMAPLACE_QUERY_PAGES) {
		addrs = kmalloc_array(NP_QUERY_ADDR_CHUNK, sizeof(u64),
				      GFP_KERNEL);
		if (!addrs)
			goto free_status;
		ret = np_query_array(q, a, addrs, status);
		kfree(addrs);
	} else {
		if (a->runs_ptr) {
			q->runs = kmalloc_array(NP_QUERY_RUNS_CHUNK,
						sizeof(*q->runs), GFP_KERNEL);
			if (!q->runs)
				goto free_status;
			q->runs_room = a->runs_cap;
		}
		ret = a->len ? np_query_range(q, a, a->start & PAGE_MASK,
					      PAGE_ALIGN(a->start + a->len)) : 0;
		kfree(q->runs);
	}
	if (!ret || ret == -EINTR)
		ret = np_query_put_totals(q, a) ?: ret;
free_status:
	kfree(status);
free_node_pages:
	kfree(q->node_pages);
	return ret;
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

	q.w.mm = np_target_mm(a->pid);
	if (IS_ERR(q.w.mm))
		return PTR_ERR(q.w.mm);
	if (NP_SYSCALL_QUERY_LEGACY && (a->flags & NUMAPLACE_QUERY_AS_SYSCALL))
		q.w.flags |= NP_WALK_LEGACY;

	ret = np_query_run(&q, a);
	mmput(q.w.mm);
	return ret;
}
