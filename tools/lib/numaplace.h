/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * libnumaplace: user-space access to /dev/numaplace.
 *
 * Every function returns 0 (or a count) on success and -errno on failure,
 * unless it documents the syscall convention (-1 and errno) instead.
 */
#ifndef NUMAPLACE_LIB_H
#define NUMAPLACE_LIB_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/numaplace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The module's device, opened once per process (O_CLOEXEC); -errno if
 * missing.
 */
int numaplace_fd(void);

/* 1 when /dev/numaplace answers INFO (any module version), else 0. */
int numaplace_available(void);

/* Fill @info by the handshake ioctl. 0 or -errno. */
int numaplace_info(struct numaplace_info *info);

/*
 * The handshake's verdict: 1 when the module that answered @info runs
 * every command of @cmds (bits 1 << NUMAPLACE_CMD_x) with every feature
 * of @features (NUMAPLACE_FEAT_*) on this kernel, else 0. It never
 * compares abi_version, which is never bumped (as UFFD_API): a newer
 * module answers the commands and structs an older client knows, and
 * struct sizes are negotiated per call (Documentation/abi.md).
 */
int numaplace_supports(const struct numaplace_info *info, __u64 cmds,
		       __u64 features);

/* Issue one numaplace ioctl, retrying EINTR; 0 or -errno. */
int numaplace_ioctl(unsigned long cmd, void *arg);

/*
 * move_pages(2) with the same signature, return value, errno and status[].
 * With nodes == NULL it answers through NUMAPLACE_IOC_QUERY (array mode,
 * NUMAPLACE_QUERY_AS_SYSCALL, so the answers are this kernel's syscall's);
 * with a node list it moves through NUMAPLACE_IOC_MIGRATE (array mode,
 * NUMAPLACE_POLICY_PER_PAGE, NUMAPLACE_MIGRATE_AS_SYSCALL) when the module
 * has a migration engine; without the device, or for what the module
 * cannot do, it calls the real syscall. Returns 0 (or the syscall's count of pages not migrated),
 * or -1 with errno set.
 */
long numaplace_move_pages(int pid, unsigned long count, void **pages,
			  const int *nodes, int *status, int flags);

/*
 * migrate_pages(2) with the same signature, return value and errno: the
 * pages of process @pid (0 = caller) on @old_nodes move to @new_nodes,
 * pair by pair as the kernel's do_migrate_pages() pairs them, each pair
 * through NUMAPLACE_IOC_QUERY's runs and NUMAPLACE_IOC_MIGRATE. Every
 * check is the kernel's own answer (mbind(2) with no range for
 * @old_nodes, migrate_pages(2) with no old nodes for the rest); a pair
 * the module did not finish is done again by the real syscall, whose
 * count it returns; without the device, the real syscall. Returns the
 * number of pages not moved (as the kernel counts them), or -1 with errno
 * set.
 */
long numaplace_migrate_pages(int pid, unsigned long maxnode,
			     const unsigned long *old_nodes,
			     const unsigned long *new_nodes);

/*
 * do_migrate_pages()'s (source, dest) pairs for @from -> @to (masks of
 * NUMAPLACE_NODE_WORDS words; @to already limited to the caller's allowed
 * nodes with memory), in the kernel's order, into @pairs[i][0] (source)
 * and @pairs[i][1] (dest). The number of pairs, or -ENOSPC past @cap
 * (NUMAPLACE_MAX_NODES is always enough).
 */
int numaplace_migrate_pages_pairs(const __u64 *from, const __u64 *to,
				  int (*pairs)[2], size_t cap);

/*
 * Runs of [start, start + len) of process @pid (0 = caller), at most @cap
 * of them into @runs. *@nr_runs gets the number written, *@done the number
 * of pages they cover: call again from start + *done * page size while it
 * is short of the range. 0 or -errno.
 */
int numaplace_query_runs(int pid, const void *start, size_t len,
			 struct numaplace_run *runs, size_t cap,
			 size_t *nr_runs, size_t *done);

/*
 * The access scan (INFO's NUMAPLACE_FEAT_ACCESS): numaplace_query_runs()
 * whose runs also say NUMAPLACE_KIND_YOUNG and NUMAPLACE_KIND_DIRTY.
 * @flags: 0 (read), or NUMAPLACE_QUERY_CLEAR_ACCESS (test-and-clear the
 * young bits), with NUMAPLACE_QUERY_FLUSH_TLB (then one TLB flush, so
 * that the next access sets the bit again: FEAT_ACCESS_FLUSH). Reading
 * needs what /proc/PID/pagemap needs, clearing what clear_refs needs.
 * *@nr_young, if not NULL, gets the young pages of *@done. 0 or -errno.
 */
int numaplace_access_runs(int pid, const void *start, size_t len,
			  unsigned int flags, struct numaplace_run *runs,
			  size_t cap, size_t *nr_runs, size_t *done,
			  size_t *nr_young);

/*
 * Per-node page totals of [start, start + len) in one call: @node_pages
 * has @nr_nodes entries (nr_node_ids is enough); *@unplaced, if not NULL,
 * gets the number of pages with no node (absent, zero page, no VMA).
 * 0 or -errno.
 */
int numaplace_query_totals(int pid, const void *start, size_t len,
			   __u64 *node_pages, size_t nr_nodes, __u64 *unplaced);

/*
 * NUMAPLACE_IOC_MIGRATE with @m as prepared by the caller (size is set
 * here). 0, or -errno (on -EINTR, -ENODEV, -EACCES and -EFAULT, m->done
 * and the counters say what was done before the error). A call cut short
 * by a signal is resumed from m->done: the counters cover the whole
 * request.
 */
int numaplace_migrate(struct numaplace_migrate *m);

/*
 * Add the outputs of one migration call @from (done, the page, folio and
 * failure counters, the engines) to @to: the totals of a request made in
 * several calls, a chunk at a time.
 */
void numaplace_migrate_add(struct numaplace_migrate *to,
			   const struct numaplace_migrate *from);

/*
 * The NUMAPLACE_FAIL_* slot of nr_failed[] that a page's -errno status
 * counts in (-ENOMEM, -EBUSY, -EACCES, -EFAULT, -ENOENT; any other is
 * NUMAPLACE_FAIL_OTHER), as the module counts its own.
 */
int numaplace_fail_reason(int status);

/*
 * Move [start, start + len) of process @pid (0 = caller) to @node (flags:
 * NUMAPLACE_MIGRATE_*). @out, if not NULL, gets the counters. 0 or -errno.
 * Without an engine flag, where the module's engines would flush the TLB
 * once per page of an mm live on other CPUs, the pages go through
 * move_pages(2) with MIGRATE's counters (Documentation/abi.md, "Where
 * libnumaplace calls the syscall instead").
 */
int numaplace_migrate_range(int pid, const void *start, size_t len, int node,
			    unsigned int flags, struct numaplace_migrate *out);

/*
 * Placement watch: a new file descriptor that reports each change of the
 * placement of [start, start + len) of process @pid (0 = caller), with
 * @cookie in every record; @flags NUMAPLACE_WATCH_CLOEXEC/NONBLOCK.
 * @node_pages, if not NULL, gets the per-node totals at the start
 * (@nr_nodes entries). Returns the fd, or -errno. Close it (or
 * numaplace_watch_close()) to stop watching.
 */
int numaplace_watch_open(int pid, const void *start, size_t len,
			 __u64 cookie, unsigned int flags,
			 __u64 *node_pages, size_t nr_nodes);

/*
 * Read up to @max records from a watch fd (blocks unless it is
 * non-blocking). Returns the number read, 0 after the GONE record (end of
 * the watch), or -errno (-EAGAIN: none yet on a non-blocking fd).
 */
ssize_t numaplace_watch_read(int fd, struct numaplace_watch_record *recs,
			     size_t max);

/* Wait up to @timeout_ms (-1: forever) for a record or the end: 1 when
 * read() will not block, 0 on timeout (or a signal), -errno.
 */
int numaplace_watch_wait(int fd, int timeout_ms);

int numaplace_watch_close(int fd);

/* 1 if bit @node is set in a numaplace node mask. */
static inline int numaplace_node_isset(const __u64 *mask, unsigned int node)
{
	return node < NUMAPLACE_MAX_NODES &&
	       (mask[node / 64] >> (node % 64)) & 1;
}

#ifdef __cplusplus
}
#endif
#endif /* NUMAPLACE_LIB_H */
