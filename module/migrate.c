// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: NUMAPLACE_IOC_MIGRATE. Per round of np_config.batch_pages pages:
 * read the caller's arrays (no lock held), collect under the mmap lock
 * (isolating folios for the kernel engine, marking pages for the
 * migrate_vma engine, which runs before the lock is dropped), run the
 * kernel engine without locks, answer what the engines took by walking
 * again; pass again over the pages an engine left busy (a bounded number
 * of times, as migrate_pages() retries); write the statuses, check for a
 * fatal signal.
 *
 * Checks run in move_pages(2)'s order: flags (dev.c), capability, pid,
 * ptrace, LSM, cpuset (target.c), then each target node as it is met: a
 * bad node ends the call after the pages before it were handled, as the
 * syscall's flush before it returns -ENODEV / -EACCES.
 */
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/sched/task.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/vmstat.h>

#include "migrate.h"
#include "compat.h"
#include "stats.h"

static int np_migrate_check(const struct numaplace_migrate *a)
{
	BUILD_BUG_ON(sizeof(a->node_set) != sizeof(nodemask_t));
	if (a->reserved0 || memchr_inv(a->reserved, 0, sizeof(a->reserved)))
		return -EINVAL;
	if (a->policy >= NUMAPLACE_POLICY_MAX)
		return -EINVAL;
	if (!!a->nodes_ptr != (a->policy == NUMAPLACE_POLICY_PER_PAGE))
		return -EINVAL;
	if (a->policy == NUMAPLACE_POLICY_CPU &&
	    (a->cpu >= nr_cpu_ids || !cpu_possible(a->cpu)))
		return -EINVAL;
	if (a->policy == NUMAPLACE_POLICY_INTERLEAVE &&
	    bitmap_empty((unsigned long *)a->node_set, MAX_NUMNODES))
		return -EINVAL;
	if (a->flags & NUMAPLACE_MIGRATE_PAGES)
		return a->start || a->len ? -EINVAL : 0;
	if (a->pages_ptr || a->count)
		return -EINVAL;
	return np_range_check(a->start, a->len);
}

/* The call's fixed targets (NODE, CPU, INTERLEAVE set) against the task. */
static int np_migrate_check_nodes(struct np_mig *m)
{
	const struct numaplace_migrate *a = m->a;
	nodemask_t *set = (nodemask_t *)a->node_set;
	int nid, ret;

	switch (a->policy) {
	case NUMAPLACE_POLICY_NODE:
		return np_mig_node_check(m, a->node);
	case NUMAPLACE_POLICY_CPU:
		return np_mig_node_check(m, cpu_to_node(a->cpu));
	case NUMAPLACE_POLICY_INTERLEAVE:
		for_each_node_mask(nid, *set) {
			ret = np_mig_node_check(m, nid);
			if (ret)
				return ret;
		}
		m->next_node = first_node(*set);
		return 0;
	}
	return 0;
}

/*
 * POLICY_PER_PAGE: read @n nodes for chunk indexes 0.. into m->target.
 * Return: how many are good (a bad one ends the round before it; *err
 * says why; with AS_SYSCALL so does a change of target), or -EFAULT.
 */
static int np_migrate_get_nodes(struct np_mig *m, u64 first, unsigned int n,
				int *err)
{
	const s32 __user *src = u64_to_user_ptr(m->a->nodes_ptr);
	unsigned int i;
	int ret;

	*err = 0;
	if (m->a->policy != NUMAPLACE_POLICY_PER_PAGE)
		return n;
	ret = np_get_s32s(m->target, src + first, n);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		/*
		 * As the syscall: do_pages_move() migrates its batch each
		 * time the target changes, so a large folio named with
		 * several targets moves at each change, in array order. The
		 * round ends there; the next one reads on from the change.
		 */
		if ((m->a->flags & NUMAPLACE_MIGRATE_AS_SYSCALL) && i &&
		    m->target[i] != m->target[i - 1])
			return i;
		*err = np_mig_node_check(m, m->target[i]);
		if (*err)
			return i;
	}
	return n;
}

static void np_migrate_count(struct np_mig *m, unsigned int n)
{
	unsigned int i, r;

	for (i = 0; i < n; i++) {
		if (m->status[i] >= 0)
			continue;
		m->a->nr_failed_pages++;
		for (r = 0; r < NUMAPLACE_FAIL_OTHER; r++)
			if (m->status[i] == -(int)np_fail_errno(r))
				break;
		m->a->nr_failed[r]++;
		np_stat_fail(r, 1);
	}
}

/* The end of a round: answers out, counters, signal check. */
static int np_migrate_finish_round(struct np_mig *m, u64 first, unsigned int n)
{
	s32 __user *ustatus = u64_to_user_ptr(m->a->status_ptr);

	np_migrate_count(m, n);
	if (ustatus && np_put_s32s(ustatus + first, m->status, n))
		return -EFAULT;
	m->a->done = first + n;
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

/*
 * Collect and resolve are shared by the engines: their time is counted for
 * the engine that runs with no lock held (the kernel engine) when the call
 * uses it, else for the one under the mmap lock.
 */
static void np_migrate_phase(const struct np_mig *m, unsigned int phase,
			     u64 since)
{
	/* Every call has one or the other (np_engines_pick()). */
	const struct np_engine_ops *e = m->unlocked ?: m->mapped;

	np_stat_phase(e->engine, phase, ktime_get_ns() - since);
}

/*
 * Passes over a round's busy pages. The page-table, batched and
 * migrate_vma engines leave a page that is locked, has a reference
 * besides theirs, or loses the refcount freeze: passing states (a writer's
 * fault, a /proc/PID/mem read, a speculative reference) that the kernel's
 * migrate_pages() retries, NR_MAX_MIGRATE_PAGES_RETRY (10) passes in all.
 * The same bound here: the first pass and up to nine more on what is left.
 */
#define NP_MIGRATE_BUSY_PASSES	10
/*
 * The wait before retry pass k: NP_MIGRATE_BUSY_WAIT_US << (k - 1), 4 ms
 * over the nine (up to 6 ms with the timer's slack). The kernel's passes
 * are spaced by the destination each one allocates (and zeroes,
 * init_on_alloc) before it tries the unmap; ours try the unmap first, and
 * a pass that finds the page pinned again takes microseconds: ten of them
 * fit inside one process_vm_readv(2) pin under emulation, and an O_DIRECT
 * pin lasts its I/O. Backing off spreads the passes over milliseconds.
 */
#define NP_MIGRATE_BUSY_WAIT_US	8
/*
 * The waits of one call, at most: a buffer that stays pinned (an io_uring
 * fixed buffer, an RDMA region) would pay each round's 4 ms again. 64 ms
 * is the waits of 15 such rounds (a GiB in default rounds of 64 MiB);
 * after it the passes go on without waiting, as the kernel's do.
 */
#define NP_MIGRATE_BUSY_WAIT_MAX_US	(64 * USEC_PER_MSEC)

static int np_stretch_cmp(const void *a, const void *b)
{
	const struct np_stretch *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Does any page lie in two of a round's @nr stretches? Asked of an
 * address array that does not ascend, and only once a page is left busy:
 * a sorted copy of its stretches (at most a round's, m->chunk, charged to
 * the caller), each compared with the next. Addresses at or above
 * TASK_SIZE_MAX are left out: never a page to pass over again, and a
 * stretch there could wrap past the top. Return: true also when the copy
 * cannot be had (no pass over again is the safe answer).
 */
static bool np_stretches_overlap(const struct np_stretch *st, unsigned int nr)
{
	struct np_stretch *s;
	unsigned int i, k;
	bool overlap = false;

	s = np_call_array_alloc(nr, sizeof(*s), 0);
	if (!s)
		return true;
	for (i = 0, k = 0; i < nr; i++)
		if (st[i].start < TASK_SIZE_MAX)
			s[k++] = st[i];
	sort(s, k, sizeof(*s), np_stretch_cmp, NULL);
	for (i = 1; i < k && !overlap; i++)
		overlap = s[i - 1].start +
			  ((unsigned long)s[i - 1].nr_pages << PAGE_SHIFT) >
			  s[i].start;
	kvfree(s);
	return overlap;
}

/*
 * Does the round name each page once (m->busy.distinct)? Known from the
 * start for a range and an ascending array; for any other array, found
 * out the first time it is asked (np_stretches_overlap()).
 */
static bool np_migrate_distinct(struct np_mig *m, const struct np_stretch *st,
				unsigned int nr)
{
	if (!m->busy.distinct_known) {
		m->busy.distinct = !np_stretches_overlap(st, nr);
		m->busy.distinct_known = true;
	}
	return m->busy.distinct;
}

/*
 * The pages to pass over again: those a page-table, batched or
 * migrate_vma engine took and left, answered -EBUSY. Not the kernel
 * engine's: migrate_pages() made its passes already, and an isolation
 * that failed is final for the syscall too. Not in a round whose address
 * array names a page twice (np_migrate_distinct()): a later entry may
 * have moved that page to its own target meanwhile, and moving it again
 * for the earlier one would undo it (the syscall leaves a page at the
 * last entry's target). The others these engines left (-ENOMEM) are
 * final: /proc/vmstat's pgmigrate_fail, as migrate_pages() counts its
 * own. Return: any busy to pass over again?
 */
static bool np_migrate_busy(struct np_mig *m, const struct np_stretch *st,
			    unsigned int nr, unsigned int n)
{
	unsigned long nr_failed = 0;	/* pages */
	unsigned int k;
	bool any = false;

	bitmap_zero(m->busy.pages, n);
	for_each_set_bit(k, m->vma_pending, n) {
		if (!test_bit(k, m->pending) || m->status[k] >= 0)
			continue;
		if (m->status[k] == -EBUSY) {
			__set_bit(k, m->busy.pages);
			any = true;
		} else {
			nr_failed++;
		}
	}
	if (any && !np_migrate_distinct(m, st, nr)) {
		nr_failed += bitmap_weight(m->busy.pages, n);
		bitmap_zero(m->busy.pages, n);
		any = false;
	}
	count_vm_events(PGMIGRATE_FAIL, nr_failed);
	return any;
}

/* After a pass: every page of a part is answered (module/seen.c). */
static void np_migrate_settle_part(struct np_mig *m, unsigned long start,
				   unsigned int idx0, unsigned int nr_pages)
{
	np_seen_settle(&m->seen, start, m->status + idx0, nr_pages);
}


/*
 * Forget a pass's errors but a full node's: a node that ran out stays out
 * for the rest of the call, as migrate_pages() stops at its first -ENOMEM
 * ("when memory is low, don't bother to try to migrate other pages"). The
 * later passes and rounds neither unmap nor allocate for it (the engines
 * skip a target whose node_err is set) and answer its pages -ENOMEM.
 */
static void np_migrate_node_err_reset(struct np_mig *m)
{
	unsigned int nid;

	for (nid = 0; nid < nr_node_ids; nid++)
		if (m->node_err[nid] != -ENOMEM)
			m->node_err[nid] = 0;
}

/* Collect, migrate and answer one pass over a round's stretches. */
static int np_migrate_pass(struct np_mig *m, const struct np_stretch *st,
			   unsigned int nr, unsigned int n)
{
	unsigned int s, idx;
	u64 t0 = ktime_get_ns();
	int ret;

	bitmap_zero(m->pending, n);
	bitmap_zero(m->vma_pending, n);
	bitmap_zero(m->again, n);
	bitmap_zero(m->gap_ok, n);
	ret = np_walk_begin(&m->w);
	if (ret)
		return ret;
	np_collect_begin(m);
	if (!m->busy.retry)
		for (s = 0, idx = 0; s < nr; idx += st[s++].nr_pages)
			if (st[s].start >= TASK_SIZE_MAX)
				np_mig_fail(m, idx, st[s].nr_pages, -EFAULT);
	np_mig_parts(m, st, nr, np_collect_stretch);
	np_migrate_phase(m, NUMAPLACE_PHASE_COLLECT, t0);

	/*
	 * migrate_vma_*() sleep: the mmap lock alone, no RCU section. It is
	 * kept from collect on: the folios collect holds locked for the
	 * batched engine must not wait for it (lock order: mmap lock first).
	 * The batched engine goes by the pages collect marked: whole
	 * stretches in a retry pass too.
	 */
	rcu_read_unlock();
	if (m->mapped)
		m->mapped->run_mapped(m, st, nr);
	mmap_read_unlock(m->w.mm);

	if (m->unlocked)
		m->unlocked->run(m);

	/* The engines ran: this pass's answers are owed. */
	t0 = ktime_get_ns();
	np_walk_begin_owed(&m->w);
	np_mig_parts(m, st, nr, np_resolve_stretch);
	np_walk_end(&m->w);
	if (m->seen_on)
		np_mig_parts(m, st, nr, np_migrate_settle_part);
	np_migrate_phase(m, NUMAPLACE_PHASE_RESOLVE, t0);
	np_migrate_node_err_reset(m);
	return 0;
}

/* Sleep @us, killable (a fatal signal ends it), with no lock held. */
static void np_migrate_busy_wait(unsigned long us)
{
	ktime_t t = ns_to_ktime((u64)us * NSEC_PER_USEC);

	set_current_state(TASK_KILLABLE);
	schedule_hrtimeout_range(&t, us * NSEC_PER_USEC / 2, HRTIMER_MODE_REL);
}

/*
 * Collect, migrate and answer one round of stretches: a first pass, then
 * passes over its busy pages (NP_MIGRATE_BUSY_PASSES), each after a wait
 * with no lock held (NP_MIGRATE_BUSY_WAIT_US, while the call's
 * NP_MIGRATE_BUSY_WAIT_MAX_US last), until none is left or a
 * fatal signal comes (np_migrate_finish_round() then answers what is
 * done, and the call ends with -EINTR).
 */
static int np_migrate_round(struct np_mig *m, const struct np_stretch *st,
			    unsigned int nr, unsigned int n)
{
	unsigned int pass, wait;
	int ret;

	m->busy.retry = false;
	ret = np_migrate_pass(m, st, nr, n);
	if (ret)
		return ret;
	for (pass = 1; np_migrate_busy(m, st, nr, n); pass++) {
		if (pass == NP_MIGRATE_BUSY_PASSES)
			break;
		wait = NP_MIGRATE_BUSY_WAIT_US << (pass - 1);
		if (m->busy.wait_us + wait <= NP_MIGRATE_BUSY_WAIT_MAX_US) {
			m->busy.wait_us += wait;
			np_migrate_busy_wait(wait);
		}
		if (fatal_signal_pending(current))
			break;
		m->busy.retry = true;
		/* Only a fatal signal stops it: the answers so far stand. */
		if (np_migrate_pass(m, st, nr, n))
			break;
		np_stat_add(NP_STAT_MIGRATE_RETRY_PASSES, 1);
		cond_resched();
	}
	m->busy.retry = false;
	/* Still busy after the last pass: failed, as migrate_pages() counts it. */
	count_vm_events(PGMIGRATE_FAIL, bitmap_weight(m->busy.pages, n));
	return 0;
}

/* Cut the stretches of a round after @n entries. */
static unsigned int np_migrate_cut(struct np_stretch *st, unsigned int nr,
				   unsigned int n)
{
	unsigned int s, idx = 0;

	for (s = 0; s < nr && idx < n; idx += st[s++].nr_pages)
		if (idx + st[s].nr_pages > n)
			st[s].nr_pages = n - idx;
	return s;
}

static int np_migrate_array(struct np_mig *m, struct np_stretch *st)
{
	const u64 __user *upages = u64_to_user_ptr(m->a->pages_ptr);
	unsigned int n, good;
	int nr, ret, err;
	u64 i;

	for (i = 0; i < m->a->count; i += n) {
		n = min_t(u64, m->a->count - i, m->chunk);
		nr = np_get_stretches(upages + i, n, st, &m->ascending);
		if (nr < 0)
			return nr;
		/*
		 * A call read whole in its first round, strictly ascending,
		 * names each page once: its order-0 folios need no record.
		 * Any other array may name one again in a later round.
		 */
		if (!i)
			m->seen_small = !(n == m->a->count && m->ascending);
		/* Ascending: each page once. Else found out when it matters. */
		m->busy.distinct = m->ascending;
		m->busy.distinct_known = m->ascending;
		good = np_migrate_get_nodes(m, i, n, &err);
		if ((int)good < 0)
			return good;
		nr = np_migrate_cut(st, nr, good);
		ret = np_migrate_round(m, st, nr, good);
		if (ret)
			return ret;
		ret = np_migrate_finish_round(m, i, good);
		if (ret || err)
			return ret ?: err;
		n = good;	/* a round may end early (AS_SYSCALL) */
	}
	return 0;
}

/*
 * Range mode with no status array and one target for every page: the
 * pages of [@addr, @end) before the next VMA are -EFAULT without being
 * walked a round at a time (a whole address space is mostly holes: 2^35
 * pages of them took tens of minutes). Return: the pages skipped.
 */
static unsigned long np_migrate_hole(struct np_mig *m, unsigned long addr,
				     unsigned long end)
{
	struct vm_area_struct *vma;
	unsigned long next;

	if (m->a->status_ptr || m->a->policy == NUMAPLACE_POLICY_PER_PAGE)
		return 0;
	if (mmap_read_lock_killable(m->w.mm))
		return 0;	/* the round's own lock attempt says -EINTR */
	vma = find_vma(m->w.mm, addr);
	next = vma ? max(vma->vm_start, addr) : end;
	mmap_read_unlock(m->w.mm);
	next = min(next, end);
	m->a->nr_failed_pages += (next - addr) >> PAGE_SHIFT;
	m->a->nr_failed[NUMAPLACE_FAIL_EFAULT] += (next - addr) >> PAGE_SHIFT;
	np_stat_fail(NUMAPLACE_FAIL_EFAULT, (next - addr) >> PAGE_SHIFT);
	return (next - addr) >> PAGE_SHIFT;
}

static int np_migrate_range(struct np_mig *m, unsigned long start,
			    unsigned long end)
{
	unsigned long addr = start, hole;
	struct np_stretch st;
	unsigned int n, good;
	int ret, err;

	while (addr < end) {
		hole = np_migrate_hole(m, addr, end);
		if (hole) {
			addr += hole << PAGE_SHIFT;
			m->a->done = (addr - start) >> PAGE_SHIFT;
			if (fatal_signal_pending(current))
				return -EINTR;
			cond_resched();
			continue;
		}
		n = min_t(unsigned long, (end - addr) >> PAGE_SHIFT,
			  m->chunk);
		good = np_migrate_get_nodes(m, (addr - start) >> PAGE_SHIFT, n,
					    &err);
		if ((int)good < 0)
			return good;
		st.start = addr;
		st.nr_pages = good;
		ret = np_migrate_round(m, &st, good ? 1 : 0, good);
		if (ret)
			return ret;
		ret = np_migrate_finish_round(m, (addr - start) >> PAGE_SHIFT,
					      good);
		if (ret || err)
			return ret ?: err;
		/* A round may end early (AS_SYSCALL): on from there. */
		addr += (unsigned long)good << PAGE_SHIFT;
	}
	return 0;
}

/*
 * A round's arrays in one block (np_carve()): the per-node ones (zeroed),
 * the five bitmaps, status and target (each set before it is read).
 */
static int np_migrate_alloc(struct np_mig *m)
{
	size_t bytes = 0, lists, listed, err, zeroed, pending, status, target;
	unsigned int nid, words = BITS_TO_LONGS(m->chunk);
	void *base;

	lists = np_carve(&bytes, nr_node_ids, sizeof(*m->lists));
	listed = np_carve(&bytes, nr_node_ids, sizeof(*m->nr_listed));
	err = np_carve(&bytes, nr_node_ids, sizeof(*m->node_err));
	zeroed = bytes;
	pending = np_carve(&bytes, 5 * words, sizeof(*m->pending));
	status = np_carve(&bytes, m->chunk, sizeof(*m->status));
	target = np_carve(&bytes, m->chunk, sizeof(*m->target));
	base = np_call_array_alloc(bytes, 1, 0);
	if (!base)
		return -ENOMEM;
	memset(base, 0, zeroed);
	m->arrays = base;
	m->lists = base + lists;
	m->nr_listed = base + listed;
	m->node_err = base + err;
	m->pending = base + pending;
	m->vma_pending = m->pending + words;
	m->gap_ok = m->pending + 2 * words;
	m->busy.pages = m->pending + 3 * words;
	m->again = m->pending + 4 * words;
	m->status = base + status;
	m->target = base + target;
	for (nid = 0; nid < nr_node_ids; nid++)
		INIT_LIST_HEAD(&m->lists[nid]);
	return 0;
}

static void np_migrate_free(struct np_mig *m)
{
	kvfree(m->arrays);
}

static int np_migrate_run(struct np_mig *m)
{
	struct numaplace_migrate *a = m->a;
	struct np_stretch *st;
	bool lru_off;
	int ret;

	ret = np_migrate_alloc(m);
	if (ret)
		goto free;
	if (m->mapped && m->mapped->begin) {
		ret = m->mapped->begin(m);
		if (ret)
			goto free;
	}
	lru_off = np_lru_disable();
	if (a->flags & NUMAPLACE_MIGRATE_PAGES) {
		st = np_call_array_alloc(m->chunk, sizeof(*st), 0);
		ret = st ? np_migrate_array(m, st) : -ENOMEM;
		kvfree(st);
	} else if (a->len) {
		m->ascending = true;
		m->busy.distinct = true;
		m->busy.distinct_known = true;
		ret = np_migrate_range(m, a->start & PAGE_MASK,
				       PAGE_ALIGN(a->start + a->len));
	}
	if (lru_off)
		np_lru_enable();
	if (m->mapped && m->mapped->end)
		m->mapped->end(m);
free:
	np_migrate_free(m);
	return ret;
}

/*
 * Pages (range mode) or addresses (array mode) a round takes: batch_pages,
 * or the whole call where it is smaller. The call's arrays are sized by
 * it: a call of a few pages allocates (and charges) for a few pages.
 */
static unsigned int np_migrate_chunk(const struct numaplace_migrate *a)
{
	u64 n = a->count;

	if (!(a->flags & NUMAPLACE_MIGRATE_PAGES))
		n = (PAGE_ALIGN(a->start + a->len) - (a->start & PAGE_MASK)) >>
		    PAGE_SHIFT;
	return clamp_t(u64, n, 1, READ_ONCE(np_config.batch_pages));
}

int np_migrate(void *arg)
{
	struct numaplace_migrate *a = arg;
	u64 t0 = ktime_get_ns();
	struct np_mig *m;
	struct np_target t;
	int ret, engines;

	BUILD_BUG_ON(offsetofend(struct numaplace_migrate, reserved) !=
		     NUMAPLACE_MIGRATE_SIZE_VER0);
	ret = np_migrate_check(a);
	if (ret)
		return ret;
	engines = np_engines_pick(a->flags, READ_ONCE(np_config.engine));
	if (engines < 0)
		return engines;
	a->done = 0;
	a->nr_moved_pages = 0;
	a->nr_moved_folios = 0;
	a->nr_in_place_pages = 0;
	a->nr_failed_pages = 0;
	memset(a->nr_failed, 0, sizeof(a->nr_failed));
	a->engines = 0;
	if ((a->flags & NUMAPLACE_MIGRATE_MOVE_ALL) && !capable(CAP_SYS_NICE))
		return -EPERM;
	ret = np_target_get(a->pid, &t);
	if (ret)
		return ret;

	m = kzalloc(sizeof(*m), NP_GFP_CALL);
	if (!m) {
		ret = -ENOMEM;
		goto put_target;
	}
	m->a = a;
	np_seen_init(&m->seen);
	m->seen_on = a->policy == NUMAPLACE_POLICY_PER_PAGE ||
		     a->policy == NUMAPLACE_POLICY_INTERLEAVE;
	m->mems = t.mems;
	/* As np_target_mems(): consistent under task_lock(). */
	task_lock(current);
	m->caller_mems = current->mems_allowed;
	task_unlock(current);
	m->engines = engines;
	np_engines_steps(engines, &m->mapped, &m->unlocked);
	m->w.mm = t.mm;
	m->chunk = np_migrate_chunk(a);
	m->w.budget = ULONG_MAX;	/* a round is bounded by m->chunk */
	if (NP_SYSCALL_QUERY_LEGACY && (a->flags & NUMAPLACE_MIGRATE_AS_SYSCALL))
		m->w.flags |= NP_WALK_LEGACY;
	ret = np_migrate_check_nodes(m);
	if (!ret)
		ret = np_migrate_run(m);
	np_seen_destroy(&m->seen);
	kfree(m);
	np_stat_add(NP_STAT_MIGRATE_CALLS, 1);
	np_genl_migrate_done(a, a->pid ?: task_tgid_vnr(current),
			     ktime_get_ns() - t0, ret);
put_target:
	np_target_put(&t);
	return ret;
}
