// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: numaplace_migrate_range() through move_pages(2), where the
 * syscall flushes the TLB less than the module can (flush.c). The
 * counters are MIGRATE's:
 *  - QUERY's runs say where each page is first: a page already on the
 *    target is in place and not handed to the syscall, and a stretch with
 *    no VMA is -EFAULT without a call (MIGRATE's hole rule);
 *  - every other page goes to move_pages(2), a chunk of up to NP_MS_CHUNK
 *    entries at a time across runs and QUERY calls: a PMD- or PUD-mapped
 *    folio as one entry, its status counting all its pages in the range;
 *    a page whose status is the target moved;
 *  - -EBUSY is also the syscall's answer for the second page of a
 *    PTE-mapped large folio it has just isolated for the first: such pages
 *    are asked again, and count as moved if they are on the target now;
 *  - a call the syscall does not finish (a positive count: its batch
 *    failed and it stopped there; or an error) is asked again: what is on
 *    the target moved, and MIGRATE moves the rest, a stretch of
 *    contiguous entries a call, with its own answers;
 *  - a folio counts once where the runs show it whole (PMD- or
 *    PUD-mapped); a PTE-mapped large folio counts once per page;
 *  - engines stays 0 for what the syscall moved;
 *  - pages are counted in address order, so that done, on an error, is
 *    where the range resumes: the in-place and no-VMA stretches between a
 *    chunk's entries are counted when the chunk is.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "lib.h"
#include "numaplace.h"

/* Runs read per QUERY call (24 bytes each, on the stack). */
#define NP_MS_RUNS		64
/*
 * Entries per move_pages(2) call, 25 bytes each (400 KiB, allocated per
 * call): each call drains every CPU's LRU caches first (do_pages_move()'s
 * lru_cache_disable() on 6.1 and 6.12), work on each CPU and a wait, which
 * under two writer threads cost 512-entry calls a third of their speed.
 */
#define NP_MS_CHUNK		16384
/* What a PMD and a PUD map on x86-64: one folio per entry. */
#define NP_MS_PMD_SIZE		(2ULL << 20)
#define NP_MS_PUD_SIZE		(1ULL << 30)
/* A status the syscall did not write. */
#define NP_MS_UNSET		INT32_MIN
/* Stretches counted without the syscall between a chunk's entries. */
#define NP_MS_SKIPS		1024

/* A stretch that is not moved: in place, or -EFAULT (no VMA). */
struct np_ms_skip {
	size_t at;			/* counted before entry @at */
	__u64 nr_pages;
	int in_place;
};

/*
 * One chunk: the entries in address order, how many pages of the range
 * each one is, and the stretches between them.
 */
struct np_ms_chunk {
	void *pages[NP_MS_CHUNK];
	int nodes[NP_MS_CHUNK];
	int status[NP_MS_CHUNK];
	int where[NP_MS_CHUNK];		/* asked again: the node, or -errno */
	__u32 nr_pages[NP_MS_CHUNK];
	__u8 large[NP_MS_CHUNK];	/* a PMD- or PUD-mapped folio */
	size_t n;
	struct np_ms_skip skip[NP_MS_SKIPS];
	size_t nr_skips;
};

static void np_ms_fail(struct numaplace_migrate *m, int reason, __u64 n)
{
	m->nr_failed[reason] += n;
	m->nr_failed_pages += n;
	m->done += n;
}

static void np_ms_moved(struct numaplace_migrate *m, __u64 n, int large)
{
	m->nr_moved_pages += n;
	m->nr_moved_folios += large ? 1 : n;
	m->done += n;
}

/* Count the stretches of @c before entry @k, from *@next on. */
static void np_ms_skips(struct numaplace_migrate *m, struct np_ms_chunk *c,
			size_t k, size_t *next)
{
	for (; *next < c->nr_skips && c->skip[*next].at <= k; (*next)++) {
		const struct np_ms_skip *sk = &c->skip[*next];

		if (sk->in_place) {
			m->nr_in_place_pages += sk->nr_pages;
			m->done += sk->nr_pages;
		} else {
			np_ms_fail(m, NUMAPLACE_FAIL_EFAULT, sk->nr_pages);
		}
	}
}

/*
 * [@addr, @addr + @len) through MIGRATE instead: the module's answers
 * and counters. 0 or -errno.
 */
static int np_ms_module(struct numaplace_migrate *m, __u64 addr, __u64 len)
{
	struct numaplace_migrate r;
	int ret;

	if (!len)
		return 0;
	memset(&r, 0, sizeof(r));
	r.flags = m->flags;
	r.pid = m->pid;
	r.policy = NUMAPLACE_POLICY_NODE;
	r.start = addr;
	r.len = len;
	r.node = m->node;
	ret = numaplace_migrate(&r);
	numaplace_migrate_add(m, &r);
	return ret;
}

/*
 * Where the entries of @c are now (move_pages(2) without nodes), in
 * c->where: the node, or -errno; NP_MS_UNSET for all if the call fails.
 */
static void np_ms_where(struct numaplace_migrate *m, struct np_ms_chunk *c)
{
	size_t i;

	if (!syscall(SYS_move_pages, m->pid, c->n, c->pages, NULL, c->where, 0))
		return;
	for (i = 0; i < c->n; i++)
		c->where[i] = NP_MS_UNSET;
}

/*
 * The syscall did not finish @c: what is on the target moved, each
 * stretch of contiguous entries that is not goes to MIGRATE. 0 or -errno.
 */
static int np_ms_unfinished(struct numaplace_migrate *m, struct np_ms_chunk *c,
			    __u64 page_size)
{
	__u64 start = 0, len = 0;
	size_t i, next = 0;
	int ret;

	np_ms_where(m, c);
	for (i = 0; i < c->n; i++) {
		__u64 addr = (uintptr_t)c->pages[i];
		__u64 bytes = (__u64)c->nr_pages[i] * page_size;
		int on = c->where[i] == m->node;
		int cut = next < c->nr_skips && c->skip[next].at <= i;

		/* A stretch for MIGRATE ends where this entry does not extend it. */
		if (len && (on || cut || start + len != addr)) {
			ret = np_ms_module(m, start, len);
			if (ret)
				return ret;
			len = 0;
		}
		np_ms_skips(m, c, i, &next);
		if (on) {
			np_ms_moved(m, c->nr_pages[i], c->large[i]);
			continue;
		}
		if (!len)
			start = addr;
		len += bytes;
	}
	ret = np_ms_module(m, start, len);
	if (ret)
		return ret;
	np_ms_skips(m, c, c->n, &next);
	return 0;
}

/* Move chunk @c and count it with its stretches: 0, or -errno. */
static int np_ms_flush(struct numaplace_migrate *m, struct np_ms_chunk *c,
		       __u64 page_size, int mp_flags)
{
	size_t i, next = 0;
	int busy = 0, ret = 0;

	if (c->n) {
		for (i = 0; i < c->n; i++) {
			c->nodes[i] = m->node;
			c->status[i] = NP_MS_UNSET;
		}
		if (syscall(SYS_move_pages, m->pid, c->n, c->pages, c->nodes,
			    c->status, mp_flags)) {
			ret = np_ms_unfinished(m, c, page_size);
			goto out;
		}
	}
	for (i = 0; i < c->n; i++)
		busy += c->status[i] == -EBUSY;
	if (busy)
		np_ms_where(m, c);
	for (i = 0; i < c->n; i++) {
		np_ms_skips(m, c, i, &next);
		if (c->status[i] == m->node ||
		    (c->status[i] == -EBUSY && c->where[i] == m->node))
			np_ms_moved(m, c->nr_pages[i], c->large[i]);
		else
			np_ms_fail(m, numaplace_fail_reason(c->status[i]),
				   c->nr_pages[i]);
	}
	np_ms_skips(m, c, c->n, &next);
out:
	c->n = 0;
	c->nr_skips = 0;
	return ret;
}

/* A stretch counted with the chunk, after its entries so far. */
static int np_ms_skip(struct numaplace_migrate *m, struct np_ms_chunk *c,
		      __u64 nr_pages, int in_place, __u64 page_size,
		      int mp_flags)
{
	int ret;

	if (c->nr_skips == NP_MS_SKIPS) {
		ret = np_ms_flush(m, c, page_size, mp_flags);
		if (ret)
			return ret;
	}
	c->skip[c->nr_skips].at = c->n;
	c->skip[c->nr_skips].nr_pages = nr_pages;
	c->skip[c->nr_skips++].in_place = in_place;
	return 0;
}

/* A run's pages into the chunk, flushed when full. 0 or -errno. */
static int np_ms_run(struct numaplace_migrate *m, const struct numaplace_run *r,
		     struct np_ms_chunk *c, __u64 page_size, int mp_flags)
{
	__u64 addr = r->start, end = r->start + r->nr_pages * page_size;
	__u64 block = page_size, next;
	int ret;

	if (r->kind & NUMAPLACE_KIND_NOVMA)
		return np_ms_skip(m, c, r->nr_pages, 0, page_size, mp_flags);
	if ((r->kind & NUMAPLACE_KIND_PRESENT) &&
	    !(r->kind & NUMAPLACE_KIND_ZERO) && r->node == m->node)
		return np_ms_skip(m, c, r->nr_pages, 1, page_size, mp_flags);
	if (r->kind & NUMAPLACE_KIND_PUD)
		block = NP_MS_PUD_SIZE;
	else if (r->kind & NUMAPLACE_KIND_PMD)
		block = NP_MS_PMD_SIZE;
	for (; addr < end; addr = next) {
		next = (addr & ~(block - 1)) + block;
		if (next > end)
			next = end;
		if (c->n == NP_MS_CHUNK) {
			ret = np_ms_flush(m, c, page_size, mp_flags);
			if (ret)
				return ret;
		}
		c->pages[c->n] = (void *)(uintptr_t)addr;
		c->nr_pages[c->n] = (next - addr) / page_size;
		c->large[c->n++] = block > page_size;
	}
	return 0;
}

int np_migrate_range_syscall(struct numaplace_migrate *m)
{
	__u64 page_size = sysconf(_SC_PAGESIZE);
	__u64 addr = m->start & ~(page_size - 1);
	__u64 end = (m->start + m->len + page_size - 1) & ~(page_size - 1);
	/* No user address: the probe's entry answers -EFAULT, moves nothing. */
	void *probe = (void *)(uintptr_t)-page_size;
	int mp_flags = MPOL_MF_MOVE, ret = 0, saved_errno = errno;
	int probe_status = 0, node = m->node;
	struct numaplace_run runs[NP_MS_RUNS];
	struct numaplace_info info;
	size_t nr, done = 0, i;
	struct np_ms_chunk *c;

	/*
	 * MIGRATE answers what it would refuse or what needs no move: flags
	 * but MOVE_ALL, no length or one that wraps, a node without memory;
	 * then the syscall's own checks before any page (pid, ptrace,
	 * CAP_SYS_NICE, the node in the task's cpuset), on one entry that
	 * is no user address.
	 */
	if (m->flags & NUMAPLACE_MIGRATE_MOVE_ALL)
		mp_flags |= MPOL_MF_MOVE_ALL;
	if ((m->flags & ~NUMAPLACE_MIGRATE_MOVE_ALL) || !m->len ||
	    m->start + m->len < m->start || end <= addr || m->node < 0 ||
	    m->node >= NUMAPLACE_MAX_NODES || numaplace_info(&info) ||
	    !(info.node_memory[m->node / 64] & (1ULL << (m->node % 64))) ||
	    syscall(SYS_move_pages, m->pid, 1UL, &probe, &node, &probe_status,
		    mp_flags))
		goto migrate;
	c = malloc(sizeof(*c));
	if (!c)
		goto migrate;
	c->n = 0;
	c->nr_skips = 0;
	while (!ret && addr < end) {
		ret = numaplace_query_runs(m->pid, (void *)(uintptr_t)addr,
					   end - addr, runs, NP_MS_RUNS, &nr,
					   &done);
		if (!ret && !done)
			ret = -EIO;
		for (i = 0; !ret && i < nr; i++)
			ret = np_ms_run(m, &runs[i], c, page_size, mp_flags);
		addr += done * page_size;
	}
	if (!ret)
		ret = np_ms_flush(m, c, page_size, mp_flags);
	free(c);
	/* As MIGRATE's callers see it: the answer is the return value. */
	errno = saved_errno;
	return ret && !m->done ? 1 : ret;

migrate:
	errno = saved_errno;
	return 1;
}
