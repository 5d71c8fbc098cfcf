// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: where are a process's pages? NUMAPLACE_IOC_QUERY in its two
 * modes, and move_pages(2) with the syscall's exact contract on top of it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "lib.h"
#include "numaplace.h"

/* The flags move_pages(2) accepts; any other bit is -EINVAL. */
#define NP_MOVE_PAGES_FLAGS	(MPOL_MF_MOVE | MPOL_MF_MOVE_ALL)

/* Any engine: the module can migrate on this kernel. */
#define NP_FEAT_MIGRATE_ANY	(NUMAPLACE_FEAT_MIGRATE_KERNEL | \
				 NUMAPLACE_FEAT_MIGRATE_VMA | \
				 NUMAPLACE_FEAT_MIGRATE_BATCH)

static pthread_once_t np_query_once = PTHREAD_ONCE_INIT;
/* INFO's features when the device answers QUERY, else 0: set once. */
static __u64 np_query_features;
/* INFO's features when the device answers MIGRATE, else 0: set once. */
static __u64 np_migrate_features;

static void np_query_probe(void)
{
	struct numaplace_info info;
	int saved_errno = errno;

	if (!numaplace_info(&info)) {
		if (numaplace_supports(&info, 1ULL << NUMAPLACE_CMD_QUERY,
				       NUMAPLACE_FEAT_QUERY))
			np_query_features = info.features;
		if (numaplace_supports(&info, 1ULL << NUMAPLACE_CMD_MIGRATE, 0) &&
		    (info.features & NP_FEAT_MIGRATE_ANY))
			np_migrate_features = info.features;
	}
	/* The probe is invisible: a missing device must not leave ENOENT. */
	errno = saved_errno;
}

static __u64 np_query_feature_mask(void)
{
	pthread_once(&np_query_once, np_query_probe);
	return np_query_features;
}

static __u64 np_migrate_feature_mask(void)
{
	pthread_once(&np_query_once, np_query_probe);
	return np_migrate_features;
}

__u64 np_lib_migrate_features(void)
{
	return np_migrate_feature_mask();
}

static long np_sys_move_pages(int pid, unsigned long count, void **pages,
			      const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

/*
 * A call the module does not answer, the real syscall does: nothing to
 * answer, NULL arrays (the syscall faults on them after its pid checks),
 * 32-bit pointers (pages[] is not an array of __u64 there), or no support
 * of the mode in the module (@mask(), asked only then, is 0).
 */
static int np_move_pages_direct(unsigned long count, void **pages,
				int *status, __u64 (*mask)(void))
{
	return !count || !pages || !status ||
	       sizeof(void *) != sizeof(__u64) || !mask();
}

/*
 * kernel_move_pages()'s own checks before any page, in its order: the
 * flags, then for MPOL_MF_MOVE_ALL its CAP_SYS_NICE, pid and ptrace
 * answers (the syscall's, for no pages). 0 to go on; else what the call
 * returns, errno set.
 */
static long np_move_pages_precheck(int pid, int flags)
{
	if (flags & ~NP_MOVE_PAGES_FLAGS) {
		errno = EINVAL;
		return -1;
	}
	if (flags & MPOL_MF_MOVE_ALL)
		return np_sys_move_pages(pid, 0, NULL, NULL, NULL, flags);
	return 0;
}

/*
 * Errors by which the module says "not this request" rather than giving
 * the syscall's answer, to a query and to MIGRATE alike: the real
 * syscall then answers. ENOMEM is the module's own buffer, not an answer
 * move_pages(2) would give; EBADF is a program that closed every
 * descriptor, ours included. @features: INFO's, of the module that
 * answers the command.
 */
static int np_fallback(int err, int pid, __u64 features)
{
	switch (err) {
	case EBADF:
	case ENOTTY:
	case EOPNOTSUPP:
	case E2BIG:
	case ENOMEM:
	case ENXIO:
		return 1;
	case EPERM:
		/*
		 * Without the exact ptrace check the module is stricter than
		 * the syscall for another process: let the kernel decide.
		 */
		return pid && pid != getpid() &&
		       !(features & NUMAPLACE_FEAT_PTRACE_EXACT);
	}
	return 0;
}

/*
 * A query also falls back on EINTR, a signal that cut the walk short,
 * and on ENODEV. EFAULT: the module reads pages[] a chunk at a time and
 * answers nothing of a chunk it cannot read whole; the syscall answers
 * the entries before the fault. A query is idempotent: the syscall
 * answers it all.
 */
static int np_query_fallback(int err, int pid)
{
	return err == EFAULT || err == EINTR || err == ENODEV ||
	       np_fallback(err, pid, np_query_features);
}

/*
 * MIGRATE does not on ENODEV, which is move_pages' own answer for a bad
 * node (after the entries before it moved), nor on EINTR and EFAULT,
 * resumed by the caller.
 */
static int np_migrate_fallback(int err, int pid)
{
	return np_fallback(err, pid, np_migrate_features);
}

/*
 * move_pages(2) in move mode through NUMAPLACE_IOC_MIGRATE: array mode,
 * one target per address, this kernel's statuses. The module checks the
 * pid, every node (-ENODEV, -EACCES for one outside the task's cpuset) and
 * the arrays (-EFAULT) as the syscall does, entry by entry: the entries
 * before a bad one have moved and have their status.
 */
static long np_move_pages_move(int pid, unsigned long count, void **pages,
			       const int *nodes, int *status, int flags)
{
	struct numaplace_migrate m;
	int saved_errno = errno, err, fd;
	long ret;

	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	m.flags = NUMAPLACE_MIGRATE_PAGES | NUMAPLACE_MIGRATE_AS_SYSCALL;
	if (flags & MPOL_MF_MOVE_ALL)
		m.flags |= NUMAPLACE_MIGRATE_MOVE_ALL;
	m.pid = pid;
	m.policy = NUMAPLACE_POLICY_PER_PAGE;
	m.pages_ptr = (uintptr_t)pages;
	m.count = count;
	m.nodes_ptr = (uintptr_t)nodes;
	m.status_ptr = (uintptr_t)status;
	fd = numaplace_fd();
	ret = fd < 0 ? -1 : ioctl(fd, NUMAPLACE_IOC_MIGRATE, &m);
	if (ret >= 0) {
		/* 0, or the syscall's count of pages not migrated. */
		errno = saved_errno;
		return ret;
	}
	err = fd < 0 ? EBADF : errno;
	if ((err == EINTR || err == EFAULT) && m.done <= count) {
		/*
		 * A signal cut the call short, or a chunk of the arrays could
		 * not be read whole: the first m.done entries have moved and
		 * have their status; the syscall does the rest, entry by
		 * entry, up to its own fault.
		 */
		errno = saved_errno;
		if (m.done == count)
			return 0;
		return np_sys_move_pages(pid, count - m.done, pages + m.done,
					 nodes + m.done, status + m.done,
					 flags);
	}
	if (err == EINTR || np_migrate_fallback(err, pid)) {
		errno = saved_errno;
		return np_sys_move_pages(pid, count, pages, nodes, status,
					 flags);
	}
	errno = err;
	return -1;
}

/* move_pages(2) in query mode (no @nodes) through NUMAPLACE_IOC_QUERY. */
static long np_move_pages_query(int pid, unsigned long count, void **pages,
				int *status, int flags)
{
	struct numaplace_query q;
	int saved_errno = errno;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.flags = NUMAPLACE_QUERY_PAGES | NUMAPLACE_QUERY_AS_SYSCALL;
	q.pid = pid;
	q.pages_ptr = (uintptr_t)pages;
	q.count = count;
	q.status_ptr = (uintptr_t)status;
	if (!ioctl(numaplace_fd(), NUMAPLACE_IOC_QUERY, &q)) {
		errno = saved_errno;
		return 0;
	}
	if (np_query_fallback(errno, pid)) {
		errno = saved_errno;
		return np_sys_move_pages(pid, count, pages, NULL, status,
					 flags);
	}
	return -1;
}

NP_EXPORT long numaplace_move_pages(int pid, unsigned long count,
				    void **pages, const int *nodes,
				    int *status, int flags)
{
	/* np_query_features is set only with NUMAPLACE_FEAT_QUERY. */
	__u64 (*mask)(void) = nodes ? np_migrate_feature_mask :
				      np_query_feature_mask;
	long ret;

	/* What the module does not answer, or moves with more TLB flushes. */
	if (np_move_pages_direct(count, pages, status, mask) ||
	    (nodes && np_syscall_flushes_less(pid, mask())))
		return np_sys_move_pages(pid, count, pages, nodes, status,
					 flags);
	ret = np_move_pages_precheck(pid, flags);
	if (ret)
		return ret;
	if (nodes)
		return np_move_pages_move(pid, count, pages, nodes, status,
					  flags);
	return np_move_pages_query(pid, count, pages, status, flags);
}

static void np_query_range_init(struct numaplace_query *q, int pid,
				const void *start, size_t len)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->pid = pid;
	q->start = (uintptr_t)start;
	q->len = len;
}

/* A range-mode QUERY with @flags into @runs: the runs calls' one body. */
static int np_query_runs_flags(int pid, const void *start, size_t len,
			       __u32 flags, struct numaplace_run *runs,
			       size_t cap, struct numaplace_query *q)
{
	/* No buffer would answer the whole range and return no runs. */
	if (!runs || !cap)
		return -EINVAL;
	np_query_range_init(q, pid, start, len);
	q->flags = flags;
	q->runs_ptr = (uintptr_t)runs;
	q->runs_cap = cap > UINT32_MAX ? UINT32_MAX : cap;
	return numaplace_ioctl(NUMAPLACE_IOC_QUERY, q);
}

NP_EXPORT int numaplace_query_runs(int pid, const void *start, size_t len,
				   struct numaplace_run *runs, size_t cap,
				   size_t *nr_runs, size_t *done)
{
	struct numaplace_query q;
	int ret;

	ret = np_query_runs_flags(pid, start, len, 0, runs, cap, &q);
	if (ret)
		return ret;
	if (nr_runs)
		*nr_runs = q.nr_runs;
	if (done)
		*done = q.done;
	return 0;
}

NP_EXPORT int numaplace_access_runs(int pid, const void *start, size_t len,
				    unsigned int flags,
				    struct numaplace_run *runs, size_t cap,
				    size_t *nr_runs, size_t *done,
				    size_t *nr_young)
{
	const unsigned int known = NUMAPLACE_QUERY_CLEAR_ACCESS |
				   NUMAPLACE_QUERY_FLUSH_TLB;
	struct numaplace_query q;
	int ret;

	if (flags & ~known)
		return -EINVAL;
	ret = np_query_runs_flags(pid, start, len,
				  flags | NUMAPLACE_QUERY_ACCESS, runs, cap, &q);
	if (ret)
		return ret;
	if (nr_runs)
		*nr_runs = q.nr_runs;
	if (done)
		*done = q.done;
	if (nr_young)
		*nr_young = q.nr_young;
	return 0;
}

NP_EXPORT int numaplace_query_totals(int pid, const void *start, size_t len,
				     __u64 *node_pages, size_t nr_nodes,
				     __u64 *unplaced)
{
	struct numaplace_query q;
	int ret;

	if (!node_pages)
		nr_nodes = 0;
	if (nr_nodes)
		memset(node_pages, 0, nr_nodes * sizeof(*node_pages));
	np_query_range_init(&q, pid, start, len);
	q.node_pages_ptr = (uintptr_t)node_pages;
	/* No node id reaches NUMAPLACE_MAX_NODES: entries past it stay 0. */
	q.node_pages_len = nr_nodes > NUMAPLACE_MAX_NODES ?
			   NUMAPLACE_MAX_NODES : nr_nodes;
	ret = numaplace_ioctl(NUMAPLACE_IOC_QUERY, &q);
	if (ret)
		return ret;
	if (unplaced)
		*unplaced = q.nr_unplaced;
	return 0;
}
