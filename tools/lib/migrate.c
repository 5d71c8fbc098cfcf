// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: move a process's pages. NUMAPLACE_IOC_MIGRATE as prepared
 * by the caller, and a range to one node on top of it.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib.h"
#include "numaplace.h"

/* The errno each failure reason but NUMAPLACE_FAIL_OTHER stands for. */
static const int np_fail_errnos[] = NUMAPLACE_FAIL_ERRNOS;
_Static_assert(sizeof(np_fail_errnos) / sizeof(np_fail_errnos[0]) ==
	       NUMAPLACE_FAIL_OTHER, "one errno per failure reason but OTHER");

NP_EXPORT int numaplace_fail_errno(int reason)
{
	return reason >= 0 && reason < NUMAPLACE_FAIL_OTHER ?
	       np_fail_errnos[reason] : 0;
}

NP_EXPORT int numaplace_fail_reason(int status)
{
	int r;

	for (r = 0; r < NUMAPLACE_FAIL_OTHER; r++)
		if (np_fail_errnos[r] && status == -np_fail_errnos[r])
			return r;
	return NUMAPLACE_FAIL_OTHER;
}

/* The spec's "engine" list (make engine-check holds it to the spec). */
static const struct {
	unsigned int bit;
	const char *name;
} np_engine_names[] = {
	{ NUMAPLACE_ENGINE_KERNEL, "kernel" },
	{ NUMAPLACE_ENGINE_VMA, "vma" },
	{ NUMAPLACE_ENGINE_BATCH, "batch" },
	{ NUMAPLACE_ENGINE_PT, "pt" },
};

NP_EXPORT const char *numaplace_engine_name(unsigned int engine)
{
	size_t i;

	for (i = 0; i < sizeof(np_engine_names) / sizeof(np_engine_names[0]); i++)
		if (np_engine_names[i].bit == engine)
			return np_engine_names[i].name;
	return NULL;
}

NP_EXPORT void numaplace_migrate_add(struct numaplace_migrate *to,
				     const struct numaplace_migrate *from)
{
	int i;

	to->done += from->done;
	to->nr_moved_pages += from->nr_moved_pages;
	to->nr_moved_folios += from->nr_moved_folios;
	to->nr_in_place_pages += from->nr_in_place_pages;
	to->nr_failed_pages += from->nr_failed_pages;
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++)
		to->nr_failed[i] += from->nr_failed[i];
	to->engines |= from->engines;
}

/*
 * Step @m past the @done pages or addresses a call handled: the arrays
 * advance by as many entries, a range by as many pages.
 */
static void np_migrate_advance(struct numaplace_migrate *m, __u64 done,
			       __u64 page_size)
{
	__u64 first, end;

	if (m->flags & NUMAPLACE_MIGRATE_PAGES) {
		m->pages_ptr += done * sizeof(__u64);
		m->count -= done;
	} else {
		first = m->start & ~(page_size - 1);
		end = m->start + m->len;
		m->start = first + done * page_size;
		m->len = end > m->start ? end - m->start : 0;
	}
	if (m->nodes_ptr)
		m->nodes_ptr += done * sizeof(__s32);
	if (m->status_ptr)
		m->status_ptr += done * sizeof(__s32);
}

/* One ioctl, no retry: -EINTR comes back with the struct copied out. */
static int np_migrate_ioctl(struct numaplace_migrate *m)
{
	int fd = numaplace_fd();

	if (fd < 0)
		return fd;
	return ioctl(fd, NUMAPLACE_IOC_MIGRATE, m) < 0 ? -errno : 0;
}

/*
 * One ioctl, resumed after an interrupted call (-EINTR with some pages
 * done) so that the counters add up over the whole request: a plain retry
 * would start over and count the pages the first call moved as in place.
 * The module copies the struct back on error for MIGRATE, so m->done and
 * the counters are valid on every return.
 */
NP_EXPORT int numaplace_migrate(struct numaplace_migrate *m)
{
	struct numaplace_migrate req = *m, sum;
	__u64 page_size = sysconf(_SC_PAGESIZE);
	int ret;

	req.size = sizeof(req);
	memset(&sum, 0, sizeof(sum));
	for (;;) {
		/* Outputs from a previous attempt must not read as input. */
		req.done = 0;
		ret = np_migrate_ioctl(&req);
		numaplace_migrate_add(&sum, &req);
		if (ret != -EINTR)
			break;
		np_migrate_advance(&req, req.done, page_size);
		if (req.flags & NUMAPLACE_MIGRATE_PAGES ? !req.count : !req.len) {
			ret = 0;
			break;
		}
	}
	m->size = sizeof(*m);
	m->done = sum.done;
	m->nr_moved_pages = sum.nr_moved_pages;
	m->nr_moved_folios = sum.nr_moved_folios;
	m->nr_in_place_pages = sum.nr_in_place_pages;
	m->nr_failed_pages = sum.nr_failed_pages;
	memcpy(m->nr_failed, sum.nr_failed, sizeof(m->nr_failed));
	m->engines = sum.engines;
	return ret;
}

NP_EXPORT int numaplace_migrate_range(int pid, const void *start, size_t len,
				      int node, unsigned int flags,
				      struct numaplace_migrate *out)
{
	struct numaplace_migrate m;
	int ret;

	/* Array mode needs arrays: this call is range mode only. */
	if (flags & NUMAPLACE_MIGRATE_PAGES)
		return -EINVAL;
	memset(&m, 0, sizeof(m));
	m.flags = flags;
	m.pid = pid;
	m.policy = NUMAPLACE_POLICY_NODE;
	m.start = (uintptr_t)start;
	m.len = len;
	m.node = node;
	/* Fewer TLB flushes by the syscall (flush.c), unless an engine is named. */
	if (!(flags & NUMAPLACE_MIGRATE_ENGINES) &&
	    np_syscall_flushes_less(pid, np_lib_migrate_features())) {
		m.size = sizeof(m);
		/* 1: nothing done, nothing counted; MIGRATE answers. */
		ret = np_migrate_range_syscall(&m);
		if (ret <= 0)
			goto out;
	}
	ret = numaplace_migrate(&m);
out:
	if (out)
		*out = m;
	return ret;
}
