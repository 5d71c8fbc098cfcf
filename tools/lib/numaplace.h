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
 * The positive errno that failure reason @reason (NUMAPLACE_FAIL_*) counts,
 * as the module's STATS_GET names it; 0 for NUMAPLACE_FAIL_OTHER and any
 * other value.
 */
int numaplace_fail_errno(int reason);

/*
 * The name of the engine of NUMAPLACE_ENGINE_* bit @engine ("kernel",
 * "vma", "batch", "pt": the netlink spec's names, as numaplace(1) and the
 * counters use them), or NULL when @engine is not one engine's bit.
 */
const char *numaplace_engine_name(unsigned int engine);

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

/*
 * ---- tiering: hotness from the access scan, and a policy -------------
 *
 * A tier context tracks processes, scans their pages' access bits once a
 * step (numaplace_access_runs(), test-and-clear, with the TLB flush where
 * the module offers it), keeps a short history per page, and moves pages
 * between the fast and the slow nodes by that history:
 *
 * - hot: young in @hot_scans of the last @history scans; a hot page on a
 *   slow node is promoted to a fast node the process may use (its
 *   cpuset's mems), spread over them by @spread;
 * - cold: not young for @cold_scans scans; a cold page on a fast node is
 *   demoted to a slow node only while that fast node's free memory is
 *   under @demote_free_pct of its size, until it is twice that;
 * - a page moved is not moved again for @hold_scans scans (hysteresis);
 * - promotions never take a fast node's free memory under
 *   @demote_free_pct; moves are limited to @rate_mb_s (a token bucket).
 *
 * A process's first scan of a page only clears its bit: the accessed bit
 * then says "since ever", not "since the last scan". The state is two
 * bytes per page, kept in 2 MiB chunks (1,032 bytes) for each 2 MiB
 * that holds a present page: 0.05% of memory mapped densely, more where
 * a mapping holds a page here and there; nothing for holes. A context
 * is for one thread at a time.
 */

/* Nodes a tier context's per-node counters and lists cover. */
#define NUMAPLACE_TIER_NODES		64
/* The longest history a page keeps (bits of its state). */
#define NUMAPLACE_TIER_MAX_HISTORY	9
/* The longest cold or hold span, in scans (a 3-bit age). */
#define NUMAPLACE_TIER_MAX_AGE		7
/* The highest watermark: above half a node, no node is left to fill. */
#define NUMAPLACE_TIER_MAX_WATERMARK	50
/* The highest rate, MiB/s: a TiB/s is beyond any memory bus. */
#define NUMAPLACE_TIER_MAX_RATE		(1UL << 20)

/* numaplace_tier_params.spread: where promotions go among the fast nodes. */
enum numaplace_tier_spread {
	/* the nodes of the CPUs the process's threads run on while they
	 * have room, then the other fast nodes, by free memory */
	NUMAPLACE_TIER_SPREAD_LOCAL,
	/* each fast node with room in turn, in equal pages */
	NUMAPLACE_TIER_SPREAD_ROUND_ROBIN,
	/* in proportion to each fast node's room */
	NUMAPLACE_TIER_SPREAD_FREE,
};

/* numaplace_tier_params.flags */
#define NUMAPLACE_TIER_NO_FLUSH	(1U << 0) /* no TLB flush after a clear */
#define NUMAPLACE_TIER_DRY_RUN	(1U << 1) /* decide and count, move nothing */

/**
 * struct numaplace_tier_params - a tier context's policy
 * @history: n, scans remembered per page (1..NUMAPLACE_TIER_MAX_HISTORY)
 * @hot_scans: k, hot when young in k of the last n scans (1..n)
 * @cold_scans: m, cold when not young for m scans (1..MAX_AGE)
 * @hold_scans: a page moved stays for this many scans (0..MAX_AGE)
 * @spread: NUMAPLACE_TIER_SPREAD_*
 * @demote_free_pct: a fast node's watermark, % of its size
 *	(0..NUMAPLACE_TIER_MAX_WATERMARK)
 * @rate_mb_s: pages moved per second, in MiB; 0 for no limit
 *	(at most NUMAPLACE_TIER_MAX_RATE)
 * @flags: NUMAPLACE_TIER_*
 * @fast_nodes: the top tier; all zero: from the kernel's memory tiers
 * @slow_nodes: the nodes below; all zero: from the kernel's memory tiers
 */
struct numaplace_tier_params {
	unsigned int history;
	unsigned int hot_scans;
	unsigned int cold_scans;
	unsigned int hold_scans;
	unsigned int spread;
	unsigned int demote_free_pct;
	unsigned long rate_mb_s;
	unsigned int flags;
	__u64 fast_nodes[NUMAPLACE_TIER_NODES / 64];
	__u64 slow_nodes[NUMAPLACE_TIER_NODES / 64];
};

/**
 * struct numaplace_tier_period - what one numaplace_tier_step() did
 * @nr_targets: processes tracked after the step
 * @nr_scanned: present pages scanned
 * @nr_young: of them, accessed since the previous scan
 * @nr_hot: hot pages (on any node)
 * @nr_cold: cold pages (on any node)
 * @nr_promoted: pages promoted, by the node they went to
 * @nr_demoted: pages demoted, by the node they went to
 * @nr_failed: pages a move was asked for that did not move (busy, shared,
 *	no memory on the target)
 * @nr_held: hot pages on a slow node, or cold ones on a fast node under
 *	its watermark, not moved because they moved in the last @hold_scans
 * @nr_limited: pages not moved this step because of @rate_mb_s
 * @nr_no_room: pages not moved because no target node had room
 * @nr_scan_failed: processes whose scan failed in this step (the access
 *	scan refused: permission, or -EOPNOTSUPP for an mm with secondary
 *	MMUs whose young bits the module cannot clear); they stay tracked
 * @scan_error: the last such failure's -errno, 0 without one
 * @nr_ping_pong: moves of a page that had moved before
 * @nr_moved_3: pages that reached their third move in this step
 * @nr_tracked: pages with state after the step
 * @state_bytes: the memory that state takes
 * @scan_ns: time scanning
 * @move_ns: time moving
 */
struct numaplace_tier_period {
	__u64 nr_targets;
	__u64 nr_scanned;
	__u64 nr_young;
	__u64 nr_hot;
	__u64 nr_cold;
	__u64 nr_promoted[NUMAPLACE_TIER_NODES];
	__u64 nr_demoted[NUMAPLACE_TIER_NODES];
	__u64 nr_failed;
	__u64 nr_held;
	__u64 nr_limited;
	__u64 nr_no_room;
	__u64 nr_scan_failed;
	__s64 scan_error;
	__u64 nr_ping_pong;
	__u64 nr_moved_3;
	__u64 nr_tracked;
	__u64 state_bytes;
	__u64 scan_ns;
	__u64 move_ns;
};

struct numaplace_tier;

/* The defaults: history 4, hot 2, cold 4, hold 4, LOCAL, 5%, no limit. */
void numaplace_tier_params_init(struct numaplace_tier_params *p);

/*
 * A new context with @p (copied) in *@out. The fast and slow nodes are
 * @p's, or else the kernel's memory tiers (the top tier, and the nodes of
 * every tier below it), or else, with one tier (Debian's 6.1 does not
 * tier memory-only nodes), the nodes with CPUs and the memory-only nodes.
 * 0; -EINVAL (a bad parameter; fast and slow nodes overlapping, empty, or
 * without memory), -ENOENT (no tiers and none given), -ENODEV (no
 * module), -EOPNOTSUPP (a module without the access scan), -ENOMEM.
 */
int numaplace_tier_new(const struct numaplace_tier_params *p,
		       struct numaplace_tier **out);
void numaplace_tier_free(struct numaplace_tier *t);

/* The context's fast and slow nodes (NUMAPLACE_TIER_NODES / 64 words). */
void numaplace_tier_nodes(const struct numaplace_tier *t, __u64 *fast,
			  __u64 *slow);

/*
 * Track process @pid (every mapping of it, as /proc/PID/maps lists them
 * at each step). 0, -EEXIST, -ESRCH, or the scan's permission error
 * (-EACCES, -EPERM: what clearing its clear_refs needs).
 */
int numaplace_tier_add(struct numaplace_tier *t, int pid);
/* Stop tracking @pid and free its state. 0 or -ENOENT. */
int numaplace_tier_remove(struct numaplace_tier *t, int pid);
/* The processes tracked, at most @cap into @pids; the number tracked. */
size_t numaplace_tier_pids(const struct numaplace_tier *t, int *pids,
			   size_t cap);

/*
 * Add period @from to @to, the totals of several steps: its counts of
 * pages and times add; what describes the end of a period (nr_targets,
 * nr_tracked, state_bytes, and scan_error when it has one) is @from's.
 */
void numaplace_tier_period_add(struct numaplace_tier_period *to,
			       const struct numaplace_tier_period *from);

/* What numaplace_tier_classes() says of a page. */
enum numaplace_tier_class {
	NUMAPLACE_TIER_UNKNOWN,	/* no state: not present at the last step */
	NUMAPLACE_TIER_WARM,	/* neither hot nor cold, or scanned once */
	NUMAPLACE_TIER_HOT,
	NUMAPLACE_TIER_COLD,
};

/*
 * The class of each of @nr_pages pages from @start of tracked process
 * @pid, as the last step left them, into @classes (enum
 * numaplace_tier_class): what a policy of its own, or a benchmark of
 * this one, can read. 0, -ENOENT (@pid not tracked).
 */
int numaplace_tier_classes(const struct numaplace_tier *t, int pid,
			   const void *start, size_t nr_pages,
			   unsigned char *classes);

/*
 * One period: scan every tracked process, update the history, move what
 * the policy says, and count it all in *@out (zeroed first). A process
 * that has exited is dropped (nr_targets says how many are left). 0, or
 * -errno for a failure of the whole step (-ENOMEM). A process whose scan
 * fails otherwise stays tracked and is counted (nr_scan_failed).
 */
int numaplace_tier_step(struct numaplace_tier *t,
			struct numaplace_tier_period *out);

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
