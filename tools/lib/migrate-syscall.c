// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: numaplace_migrate_range() through move_pages(2), where the
 * syscall flushes the TLB less than the module can (flush.c). The
 * counters are MIGRATE's:
 *  - QUERY's runs say where each page is first: a page already on the
 *    target is in place and not handed to the syscall, and a stretch with
 *    no VMA is -EFAULT without a call (MIGRATE's hole rule);
 *  - every other page goes to move_pages(2), a chunk at a time: a PMD- or
 *    PUD-mapped folio as one entry, its status counting all its pages in
 *    the range; a page whose status is the target moved;
 *  - -EBUSY is also the syscall's answer for the second page of a
 *    PTE-mapped large folio it has just isolated for the first: such pages
 *    are asked again, and count as moved if they are on the target now;
 *  - a call the syscall does not finish (a positive count: its batch
 *    failed and it stopped there; or an error) is asked again: what is on
 *    the target moved, and MIGRATE moves the rest, with its own answers;
 *  - a folio counts once where the runs show it whole (PMD- or
 *    PUD-mapped); a PTE-mapped large folio counts once per page;
 *  - engines stays 0 for what the syscall moved.
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
 * Entries per move_pages(2) call, 24 bytes each (384 KiB, allocated per
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

/* One chunk: the entries, and how many pages of the range each one is. */
struct np_ms_chunk {
	void *pages[NP_MS_CHUNK];
	int nodes[NP_MS_CHUNK];
	int status[NP_MS_CHUNK];
	int where[NP_MS_CHUNK];		/* asked again: the node, or -errno */
	__u32 nr_pages[NP_MS_CHUNK];
	size_t n;
	int large;			/* entries are PMD or PUD folios */
};

static int np_ms_reason(int status)
{
	switch (-status) {
	case ENOMEM:
		return NUMAPLACE_FAIL_ENOMEM;
	case EBUSY:
		return NUMAPLACE_FAIL_EBUSY;
	case EACCES:
		return NUMAPLACE_FAIL_EACCES;
	case EFAULT:
		return NUMAPLACE_FAIL_EFAULT;
	case ENOENT:
		return NUMAPLACE_FAIL_ENOENT;
	}
	return NUMAPLACE_FAIL_OTHER;
}

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

/*
 * [@addr, @addr + @len) through MIGRATE instead: the module's answers
 * and counters. 0 or -errno.
 */
static int np_ms_module(struct numaplace_migrate *m, __u64 addr, __u64 len)
{
	struct numaplace_migrate r;
	int ret;

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

/* Move chunk @c: 0, or -errno with the pages before it counted. */
static int np_ms_move(struct numaplace_migrate *m, struct np_ms_chunk *c,
		      __u64 page_size, int mp_flags)
{
	int busy = 0, ret;
	long done;
	size_t i;

	for (i = 0; i < c->n; i++) {
		c->nodes[i] = m->node;
		c->status[i] = NP_MS_UNSET;
	}
	done = syscall(SYS_move_pages, m->pid, c->n, c->pages, c->nodes,
		       c->status, mp_flags);
	if (done) {
		/* Unfinished: what is on the target moved, MIGRATE the rest. */
		np_ms_where(m, c);
		for (i = 0; i < c->n; i++) {
			if (c->where[i] == m->node) {
				np_ms_moved(m, c->nr_pages[i], c->large);
				continue;
			}
			ret = np_ms_module(m, (uintptr_t)c->pages[i],
					   c->nr_pages[i] * page_size);
			if (ret)
				return ret;
		}
		return 0;
	}
	for (i = 0; i < c->n; i++)
		busy += c->status[i] == -EBUSY;
	if (busy)
		np_ms_where(m, c);
	for (i = 0; i < c->n; i++) {
		if (c->status[i] == m->node ||
		    (c->status[i] == -EBUSY && c->where[i] == m->node))
			np_ms_moved(m, c->nr_pages[i], c->large);
		else
			np_ms_fail(m, np_ms_reason(c->status[i]),
				   c->nr_pages[i]);
	}
	return 0;
}

/* A run's pages, into chunks of entries. 0 or -errno. */
static int np_ms_run(struct numaplace_migrate *m, const struct numaplace_run *r,
		     struct np_ms_chunk *c, __u64 page_size, int mp_flags)
{
	__u64 addr = r->start, end = r->start + r->nr_pages * page_size;
	__u64 block = page_size, next;
	int ret;

	if (r->kind & NUMAPLACE_KIND_NOVMA) {
		np_ms_fail(m, NUMAPLACE_FAIL_EFAULT, r->nr_pages);
		return 0;
	}
	if ((r->kind & NUMAPLACE_KIND_PRESENT) &&
	    !(r->kind & NUMAPLACE_KIND_ZERO) && r->node == m->node) {
		m->nr_in_place_pages += r->nr_pages;
		m->done += r->nr_pages;
		return 0;
	}
	if (r->kind & NUMAPLACE_KIND_PUD)
		block = NP_MS_PUD_SIZE;
	else if (r->kind & NUMAPLACE_KIND_PMD)
		block = NP_MS_PMD_SIZE;
	c->n = 0;
	c->large = block > page_size;
	for (; addr < end; addr = next) {
		next = (addr & ~(block - 1)) + block;
		if (next > end)
			next = end;
		c->pages[c->n] = (void *)(uintptr_t)addr;
		c->nr_pages[c->n++] = (next - addr) / page_size;
		if (c->n == NP_MS_CHUNK) {
			ret = np_ms_move(m, c, page_size, mp_flags);
			if (ret)
				return ret;
			c->n = 0;
		}
	}
	return c->n ? np_ms_move(m, c, page_size, mp_flags) : 0;
}

int np_migrate_range_syscall(struct numaplace_migrate *m)
{
	__u64 page_size = sysconf(_SC_PAGESIZE);
	__u64 addr = m->start & ~(page_size - 1);
	__u64 end = (m->start + m->len + page_size - 1) & ~(page_size - 1);
	struct numaplace_run runs[NP_MS_RUNS];
	struct numaplace_info info;
	struct np_ms_chunk *c;
	size_t nr, done = 0, i;
	int mp_flags = MPOL_MF_MOVE, ret = 0, saved_errno = errno;

	/*
	 * MIGRATE answers what it would refuse or what needs no move: flags
	 * but MOVE_ALL, no length or one that wraps, a node without memory;
	 * then the syscall's pid, ptrace and CAP_SYS_NICE checks, before any
	 * page.
	 */
	if (m->flags & NUMAPLACE_MIGRATE_MOVE_ALL)
		mp_flags |= MPOL_MF_MOVE_ALL;
	if ((m->flags & ~NUMAPLACE_MIGRATE_MOVE_ALL) || !m->len ||
	    m->start + m->len < m->start || end <= addr || m->node < 0 ||
	    m->node >= NUMAPLACE_MAX_NODES || numaplace_info(&info) ||
	    !(info.node_memory[m->node / 64] & (1ULL << (m->node % 64))) ||
	    syscall(SYS_move_pages, m->pid, 0UL, NULL, NULL, NULL, mp_flags))
		goto migrate;
	c = malloc(sizeof(*c));
	if (!c)
		goto migrate;
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
	free(c);
	/* As MIGRATE's callers see it: the answer is the return value. */
	errno = saved_errno;
	return ret && !m->done ? 1 : ret;

migrate:
	errno = saved_errno;
	return 1;
}
