// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: migrate_pages(2) through the module.
 *
 * The kernel's kernel_migrate_pages() checks the masks, the pid, the
 * caller's right to the target and its nodes, then do_migrate_pages()
 * moves the target's pages one (source, dest) pair of nodes at a time,
 * each pair a walk of the whole address space. Here:
 *
 *  - every check is the kernel's own answer: mbind(2) with an empty range
 *    reads old_nodes with the same get_nodes() (EINVAL, EFAULT) and
 *    changes nothing; the real migrate_pages(2) with no old nodes answers
 *    new_nodes, ESRCH, both EPERMs, the empty-target EINVAL, the LSM and
 *    the mm check, and moves nothing;
 *  - the pairs are do_migrate_pages()'s, computed by
 *    numaplace_migrate_pages_pairs(), in its order;
 *  - each pair is a walk of NUMAPLACE_IOC_QUERY's runs over the whole
 *    address space and one NUMAPLACE_IOC_MIGRATE (range mode, node policy)
 *    per stretch of pages on the source node, MOVE_ALL when the caller has
 *    CAP_SYS_NICE, as the kernel decides;
 *  - a pair the module could not finish (a page it did not move for a
 *    reason the kernel may see otherwise, or any error) is done again by
 *    the real syscall for that one pair, whose answer (its count of pages
 *    not moved, or its error) is the pair's: the count is always the
 *    kernel's, never the module's estimate of it.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "lib.h"
#include "numaplace.h"

/* Runs read per QUERY call (24 bytes each, on the stack). */
#define NP_MP_RUNS		256
/*
 * The end of the walk: above the highest user address of any x86-64
 * paging mode (LA57: 56 bits). The module answers the space past the last
 * VMA as one run, so the size of the hole costs nothing.
 */
#define NP_MP_USER_END		(1ULL << 56)
/* Bits of a node mask kept here: every kernel's MAX_NUMNODES fits. */
#define NP_MP_BITS		NUMAPLACE_MAX_NODES
/* get_mempolicy(MPOL_F_MEMS_ALLOWED)'s maxnode: room for every node. */
#define NP_MP_MEMS_MAXNODE	(NP_MP_BITS + 1)
#define NP_MP_WORDS		NUMAPLACE_NODE_WORDS

/* Failure reasons after which the kernel could have done otherwise. */
#define NP_MP_FAIL_RETRY(m)	((m)->nr_failed[NUMAPLACE_FAIL_ENOMEM] + \
				 (m)->nr_failed[NUMAPLACE_FAIL_EBUSY] + \
				 (m)->nr_failed[NUMAPLACE_FAIL_EACCES] + \
				 (m)->nr_failed[NUMAPLACE_FAIL_OTHER])

static int np_mp_test(const __u64 *mask, unsigned int bit)
{
	return (mask[bit / 64] >> (bit % 64)) & 1;
}

static unsigned int np_mp_weight(const __u64 *mask)
{
	unsigned int w = 0;
	int i;

	for (i = 0; i < NP_MP_WORDS; i++)
		w += __builtin_popcountll(mask[i]);
	return w;
}

static int np_mp_empty(const __u64 *mask)
{
	return !np_mp_weight(mask);
}

/*
 * The kernel's node_remap() (bitmap_bitremap()): @bit is the n-th set bit
 * of @from; the answer is the (n mod weight(@to))-th set bit of @to, or
 * @bit itself when it is not in @from or @to is empty.
 */
static unsigned int np_mp_remap(unsigned int bit, const __u64 *from,
				const __u64 *to)
{
	unsigned int w = np_mp_weight(to), n = 0, i;

	if (!w || !np_mp_test(from, bit))
		return bit;
	for (i = 0; i < bit; i++)
		n += np_mp_test(from, i);
	n %= w;
	for (i = 0; i < NP_MP_BITS; i++) {
		if (np_mp_test(to, i) && !n--)
			return i;
	}
	return bit;	/* not reached: @to has w bits */
}

/*
 * do_migrate_pages()'s loop (mm/mempolicy.c, the same in 6.1, 6.12 and
 * 7.3): scan the source nodes left; skip a node that is in @to when the
 * two masks differ in weight; remember the last node that moves (its
 * remap differs) and stop at the first whose destination is not itself a
 * source still to do; migrate that pair and clear its source; end when no
 * node moves.
 */
NP_EXPORT int numaplace_migrate_pages_pairs(const __u64 *from, const __u64 *to,
					    int (*pairs)[2], size_t cap)
{
	unsigned int wf = np_mp_weight(from), wt = np_mp_weight(to);
	__u64 tmp[NP_MP_WORDS];
	size_t nr = 0;

	memcpy(tmp, from, sizeof(tmp));
	while (!np_mp_empty(tmp)) {
		int source = -1, dest = 0;
		unsigned int s, d;

		for (s = 0; s < NP_MP_BITS; s++) {
			if (!np_mp_test(tmp, s))
				continue;
			if (wf != wt && np_mp_test(to, s))
				continue;
			d = np_mp_remap(s, from, to);
			if (s == d)
				continue;
			source = s;
			dest = d;
			if (!np_mp_test(tmp, d))
				break;
		}
		if (source < 0)
			break;
		tmp[source / 64] &= ~(1ULL << (source % 64));
		if (nr == cap)
			return -ENOSPC;
		pairs[nr][0] = source;
		pairs[nr][1] = dest;
		nr++;
	}
	return nr;
}

static long np_sys_migrate_pages(int pid, unsigned long maxnode,
				 const unsigned long *old_nodes,
				 const unsigned long *new_nodes)
{
	return syscall(SYS_migrate_pages, pid, maxnode, old_nodes, new_nodes);
}

/*
 * A node mask the kernel has checked (get_nodes() returned 0 for it): its
 * first min(maxnode - 1, NP_MP_BITS) bits; the kernel found the bits past
 * its MAX_NUMNODES zero.
 */
static void np_mp_read_mask(__u64 *out, const unsigned long *mask,
			    unsigned long maxnode)
{
	unsigned long bits = maxnode ? maxnode - 1 : 0, i;

	memset(out, 0, NP_MP_WORDS * sizeof(*out));
	if (!mask || !bits)
		return;
	if (bits > NP_MP_BITS)
		bits = NP_MP_BITS;
	for (i = 0; i < bits / 64; i++)
		out[i] = mask[i];
	if (bits % 64)
		out[i] = mask[i] & ((1ULL << (bits % 64)) - 1);
}

/* cpuset_mems_allowed(current): the caller's allowed nodes with memory. */
static int np_mp_mems_allowed(__u64 *mems, const __u64 *node_memory)
{
	unsigned long buf[NP_MP_WORDS + 1];
	int i;

	memset(buf, 0, sizeof(buf));
	if (syscall(SYS_get_mempolicy, NULL, buf, NP_MP_MEMS_MAXNODE, NULL,
		    MPOL_F_MEMS_ALLOWED))
		return -errno;
	for (i = 0; i < NP_MP_WORDS; i++)
		mems[i] = buf[i] & node_memory[i];
	return 0;
}

/* One stretch [start, start + len) to @dest: 1 when all of it moved. */
static int np_mp_move(int fd, int pid, __u64 start, __u64 len, int dest,
		      unsigned int flags)
{
	struct numaplace_migrate m;

	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	m.flags = flags;
	m.pid = pid;
	m.policy = NUMAPLACE_POLICY_NODE;
	m.start = start;
	m.len = len;
	m.node = dest;
	return !ioctl(fd, NUMAPLACE_IOC_MIGRATE, &m) && !NP_MP_FAIL_RETRY(&m);
}

/*
 * One pair through the module: every stretch of present pages on @source
 * goes to @dest. 1 when the module moved everything it found (the kernel
 * would have counted nothing), 0 when the pair must be done again by the
 * syscall.
 */
static int np_mp_pair_module(int pid, int source, int dest, unsigned int flags,
			     __u64 page_size)
{
	struct numaplace_run runs[NP_MP_RUNS];
	struct numaplace_query q;
	__u64 addr = 0, start = 0, len = 0;
	int fd = numaplace_fd(), on;
	__u32 i;

	if (fd < 0)
		return 0;
	while (addr < NP_MP_USER_END) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.pid = pid;
		q.start = addr;
		q.len = NP_MP_USER_END - addr;
		q.runs_ptr = (uintptr_t)runs;
		q.runs_cap = NP_MP_RUNS;
		if (ioctl(fd, NUMAPLACE_IOC_QUERY, &q) || !q.done)
			return 0;
		for (i = 0; i < q.nr_runs; i++) {
			const struct numaplace_run *r = &runs[i];

			on = (r->kind & NUMAPLACE_KIND_PRESENT) &&
			     r->node == source;
			/* Stretches of the source node, joined end to end. */
			if (on && len && start + len == r->start) {
				len += r->nr_pages * page_size;
				continue;
			}
			if (len && !np_mp_move(fd, pid, start, len, dest, flags))
				return 0;
			len = 0;
			if (on) {
				start = r->start;
				len = r->nr_pages * page_size;
			}
		}
		addr += q.done * page_size;
	}
	return !len || np_mp_move(fd, pid, start, len, dest, flags);
}

static __u64 np_mp_features(struct numaplace_info *info)
{
	const __u64 cmds = (1ULL << NUMAPLACE_CMD_QUERY) |
			   (1ULL << NUMAPLACE_CMD_MIGRATE);

	if (numaplace_info(info) || !numaplace_supports(info, cmds,
							 NUMAPLACE_FEAT_QUERY))
		return 0;
	return info->features & (NUMAPLACE_FEAT_MIGRATE_KERNEL |
				 NUMAPLACE_FEAT_MIGRATE_VMA |
				 NUMAPLACE_FEAT_MIGRATE_BATCH);
}

NP_EXPORT long numaplace_migrate_pages(int pid, unsigned long maxnode,
				       const unsigned long *old_nodes,
				       const unsigned long *new_nodes)
{
	__u64 from[NP_MP_WORDS], to[NP_MP_WORDS], mems[NP_MP_WORDS];
	int pairs[NP_MP_BITS][2], nr, i, saved_errno = errno;
	__u64 page_size = sysconf(_SC_PAGESIZE);
	struct numaplace_info info;
	unsigned int flags = 0;
	long ret, sum = 0;

	/*
	 * The module cannot move pages here, or not with as few TLB flushes,
	 * or masks are not __u64 words.
	 */
	if (sizeof(unsigned long) != sizeof(__u64) || !np_mp_features(&info) ||
	    np_syscall_flushes_less(pid, info.features)) {
		errno = saved_errno;
		return np_sys_migrate_pages(pid, maxnode, old_nodes, new_nodes);
	}
	errno = saved_errno;

	/* old_nodes: get_nodes()'s EINVAL / EFAULT, through mbind(2). */
	if (syscall(SYS_mbind, 0UL, 0UL, MPOL_DEFAULT, old_nodes, maxnode, 0U))
		return -1;
	/* The rest of kernel_migrate_pages()'s checks: nothing to move. */
	ret = np_sys_migrate_pages(pid, maxnode, NULL, new_nodes);
	if (ret)
		return ret;

	np_mp_read_mask(from, old_nodes, maxnode);
	if (np_mp_empty(from))
		return 0;
	np_mp_read_mask(to, new_nodes, maxnode);
	if (np_mp_mems_allowed(mems, info.node_memory)) {
		errno = saved_errno;
		return np_sys_migrate_pages(pid, maxnode, old_nodes, new_nodes);
	}
	for (i = 0; i < NP_MP_WORDS; i++)
		to[i] &= mems[i];
	/* CAP_SYS_NICE as capable() sees it: move_pages(2)'s own check. */
	if (!syscall(SYS_move_pages, 0, 0UL, NULL, NULL, NULL,
		     MPOL_MF_MOVE_ALL))
		flags |= NUMAPLACE_MIGRATE_MOVE_ALL;
	errno = saved_errno;

	nr = numaplace_migrate_pages_pairs(from, to, pairs, NP_MP_BITS);
	for (i = 0; i < nr; i++) {
		unsigned long s[NP_MP_WORDS] = { 0 }, d[NP_MP_WORDS] = { 0 };

		if (np_mp_pair_module(pid, pairs[i][0], pairs[i][1], flags,
				      page_size))
			continue;
		/* The pair alone: {source} -> {dest} is that one pair. */
		s[pairs[i][0] / 64] = 1UL << (pairs[i][0] % 64);
		d[pairs[i][1] / 64] = 1UL << (pairs[i][1] % 64);
		errno = saved_errno;
		ret = np_sys_migrate_pages(pid, NP_MP_BITS + 1, s, d);
		if (ret < 0)
			return ret;
		sum += ret;
	}
	errno = saved_errno;
	/* 6.12 and later cap the count at INT_MAX; 6.1's int never grows so. */
	return sum < INT32_MAX ? sum : INT32_MAX;
}
