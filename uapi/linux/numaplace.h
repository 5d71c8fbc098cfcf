/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * numaplace: see and change the NUMA placement of a process's pages.
 *
 * The ioctl ABI of /dev/numaplace. Conventions for every command struct
 * (after clone3/openat2 and iommufd):
 *  - it starts with "__u32 size; __u32 flags;": size is sizeof() of the
 *    struct as the caller knows it, flags must hold only known bits;
 *  - all fields are fixed width, user pointers are __u64;
 *  - reserved fields must be zero;
 *  - a caller's struct shorter than the first published version is
 *    -EINVAL; a longer one is accepted when every byte the module does not
 *    know is zero, else -E2BIG; the module writes back at most the size the
 *    caller gave;
 *  - an unknown ioctl is -ENOTTY.
 * Ask NUMAPLACE_IOC_INFO first: it says which ioctls and features this
 * module on this kernel supports.
 */
#ifndef _UAPI_LINUX_NUMAPLACE_H
#define _UAPI_LINUX_NUMAPLACE_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/numaplace-genl.h>	/* the netlink family, generated */

#define NUMAPLACE_DEVICE	"/dev/numaplace"
/*
 * The ABI's name, never bumped (as UFFD_API): the ABI grows by struct
 * size, feature bits and ioctl bits (numaplace_info), never by a new
 * version that old clients would refuse.
 */
#define NUMAPLACE_ABI_VERSION	1

/* The node masks below are fixed-size: the largest MAX_NUMNODES of any
 * kernel config (CONFIG_NODES_SHIFT <= 10).
 */
#define NUMAPLACE_MAX_NODES	1024
#define NUMAPLACE_NODE_WORDS	(NUMAPLACE_MAX_NODES / 64)

/* Feature bits of numaplace_info.features: set only when the feature
 * works on the running kernel.
 */
#define NUMAPLACE_FEAT_QUERY		(1ULL << 0) /* NUMAPLACE_IOC_QUERY */
#define NUMAPLACE_FEAT_MIGRATE_KERNEL	(1ULL << 1) /* kernel migrate_pages engine */
#define NUMAPLACE_FEAT_MIGRATE_VMA	(1ULL << 2) /* migrate_vma_* engine */
#define NUMAPLACE_FEAT_MIGRATE_BATCH	(1ULL << 3) /* batched engine */
#define NUMAPLACE_FEAT_PTRACE_EXACT	(1ULL << 4) /* exact ptrace check */
#define NUMAPLACE_FEAT_WATCH		(1ULL << 5) /* NUMAPLACE_IOC_WATCH */
#define NUMAPLACE_FEAT_MIGRATE_PT	(1ULL << 6) /* page-table engine */
#define NUMAPLACE_FEAT_MIGRATE_PT_THP	(1ULL << 7) /* ...moves PMD-mapped THPs whole */
#define NUMAPLACE_FEAT_ACCESS		(1ULL << 8) /* QUERY_ACCESS, QUERY_CLEAR_ACCESS */
#define NUMAPLACE_FEAT_ACCESS_FLUSH	(1ULL << 9) /* ...QUERY_FLUSH_TLB */
#define NUMAPLACE_FEAT_ACCESS_NOTIFY	(1ULL << 10) /* ...clears secondary MMUs' bits */
#define NUMAPLACE_FEAT_ACCESS_KEEP	(1ULL << 11) /* ...reclaim still sees a cleared access */

enum numaplace_cmd {
	NUMAPLACE_CMD_INFO = 0,
	NUMAPLACE_CMD_QUERY = 1,
	NUMAPLACE_CMD_MIGRATE = 2,
	NUMAPLACE_CMD_WATCH = 3,
	NUMAPLACE_CMD_MAX,
};

#define NUMAPLACE_TYPE		0xB7

/**
 * struct numaplace_info - NUMAPLACE_IOC_INFO: the handshake
 * @size: in, sizeof(struct numaplace_info) as the caller knows it
 * @flags: in, must be 0
 * @abi_version: out, NUMAPLACE_ABI_VERSION of the module
 * @nr_node_ids: out, the kernel's nr_node_ids (highest possible node + 1)
 * @features: out, NUMAPLACE_FEAT_* that work on this kernel
 * @ioctls: out, bit (1 << NUMAPLACE_CMD_x) for each supported ioctl
 * @page_size: out, the kernel's PAGE_SIZE in bytes
 * @reserved0: must be 0
 * @node_online: out, bitmap of online nodes (bit n of word n / 64)
 * @node_memory: out, bitmap of nodes with memory (N_MEMORY)
 * @reserved: must be 0
 */
struct numaplace_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 nr_node_ids;
	__u64 features;
	__u64 ioctls;
	__u32 page_size;
	__u32 reserved0;
	__u64 node_online[NUMAPLACE_NODE_WORDS];
	__u64 node_memory[NUMAPLACE_NODE_WORDS];
	__u64 reserved[4];
};
#define NUMAPLACE_INFO_SIZE_VER0	328

#define NUMAPLACE_IOC_INFO	_IO(NUMAPLACE_TYPE, NUMAPLACE_CMD_INFO)

/*
 * Kind flags of a run (numaplace_run.kind). Several can be set: e.g. a
 * PMD-mapped THP in an anonymous VMA is PRESENT | PMD | ANON.
 */
#define NUMAPLACE_KIND_PRESENT	 (1U << 0)  /* a page is mapped: node is valid */
#define NUMAPLACE_KIND_PMD	 (1U << 1)  /* mapped by a PMD (THP, 2 MiB hugetlb) */
#define NUMAPLACE_KIND_PUD	 (1U << 2)  /* mapped by a PUD (1 GiB hugetlb) */
#define NUMAPLACE_KIND_HUGETLB	 (1U << 3)  /* in a hugetlb VMA */
#define NUMAPLACE_KIND_ZERO	 (1U << 4)  /* the zero page or huge zero page */
#define NUMAPLACE_KIND_ANON	 (1U << 5)  /* in an anonymous VMA */
#define NUMAPLACE_KIND_FILE	 (1U << 6)  /* in a file or shmem VMA */
#define NUMAPLACE_KIND_SWAP	 (1U << 7)  /* swapped out */
#define NUMAPLACE_KIND_MIGRATION (1U << 8)  /* under migration */
#define NUMAPLACE_KIND_NONE	 (1U << 9)  /* nothing mapped (never touched) */
#define NUMAPLACE_KIND_NOVMA	 (1U << 10) /* no VMA at the address */
#define NUMAPLACE_KIND_SPECIAL	 (1U << 11) /* PFN map, device or special: no page */
#define NUMAPLACE_KIND_PROTNONE	 (1U << 12) /* PROT_NONE or NUMA-hinting entry */
#define NUMAPLACE_KIND_OTHER	 (1U << 13) /* other non-present entry (marker, poison) */
/* With NUMAPLACE_QUERY_ACCESS, of a PRESENT run (never PROTNONE): */
#define NUMAPLACE_KIND_YOUNG	 (1U << 14) /* accessed since its young bit was cleared */
#define NUMAPLACE_KIND_DIRTY	 (1U << 15) /* written: dirty in the page table */

/**
 * struct numaplace_run - a stretch of pages with one answer
 * @start: virtual address of the first page
 * @nr_pages: number of base pages
 * @node: the node they are on, or a negative errno exactly as
 *	move_pages(2) reports it in status[] (-ENOENT, -EFAULT)
 * @kind: NUMAPLACE_KIND_* flags
 */
struct numaplace_run {
	__u64 start;
	__u64 nr_pages;
	__s32 node;
	__u32 kind;
};

/* numaplace_query.flags */
#define NUMAPLACE_QUERY_PAGES	   (1U << 0) /* pages_ptr/count, not start/len */
#define NUMAPLACE_QUERY_AS_SYSCALL (1U << 1) /* this kernel's move_pages answers */
/*
 * The access scan (range mode): runs also tell NUMAPLACE_KIND_YOUNG and
 * NUMAPLACE_KIND_DIRTY. Reading needs what reading /proc/PID/pagemap
 * needs; CLEAR_ACCESS also what writing /proc/PID/clear_refs needs.
 */
#define NUMAPLACE_QUERY_ACCESS	   (1U << 2) /* report young and dirty bits */
#define NUMAPLACE_QUERY_CLEAR_ACCESS (1U << 3) /* ...and test-and-clear young */
#define NUMAPLACE_QUERY_FLUSH_TLB  (1U << 4) /* ...then one TLB flush */

/**
 * struct numaplace_query - NUMAPLACE_IOC_QUERY: where are these pages?
 * @size: in, sizeof(struct numaplace_query) as the caller knows it
 * @flags: in, NUMAPLACE_QUERY_*
 * @pid: in, the process to look at, 0 for the caller
 * @reserved0: must be 0
 * @start: in, range mode: first address (rounded down to a page)
 * @len: in, range mode: length in bytes; every page that [start,
 *	start + len) touches is answered
 * @pages_ptr: in, array mode: user pointer to @count __u64 addresses, any
 *	order, duplicates allowed (move_pages' pages[])
 * @count: in, array mode: number of addresses
 * @runs_ptr: in, range mode only: user buffer for @runs_cap runs, or 0
 * @runs_cap: in, capacity of @runs_ptr in entries
 * @nr_runs: out, runs written
 * @status_ptr: in, user buffer of __s32, one per page (range mode) or per
 *	address (array mode), or 0: filled exactly as move_pages' status[]
 * @node_pages_ptr: in, user buffer of @node_pages_len __u64, or 0
 * @node_pages_len: in, entries in @node_pages_ptr (nr_node_ids is enough);
 *	out: pages placed on node n are counted in entry n
 * @reserved1: must be 0
 * @done: out, pages (range mode) or addresses (array mode) answered. Less
 *	than asked only when @runs_ptr filled up (resume from
 *	start + done * page size) or on -EINTR (a fatal signal)
 * @nr_unplaced: out, of @done, pages with a negative status
 * @nr_young: out, with QUERY_ACCESS: of @done, pages reported young
 * @reserved: must be 0
 *
 * Without @runs_ptr the whole request is answered in one call. The node
 * totals, @nr_unplaced and @nr_young count what this call answered.
 *
 * The access scan. A page is young when the CPU set its page table
 * entry's accessed bit since the bit was last cleared (by this scan, by
 * reclaim, by clear_refs); a PMD or PUD leaf has one bit for all its
 * pages. With QUERY_CLEAR_ACCESS each young bit is cleared as it is read,
 * with the secondary MMUs' (mmu notifier clear_young: a page a KVM guest
 * touched is young too), and the folio keeps the access for reclaim where
 * the kernel has the flag for it (FEAT_ACCESS_KEEP; not on a kernel
 * without CONFIG_PAGE_IDLE_FLAG, such as Debian's 6.1: there, reclaim no
 * longer sees an access that a clear took away). Without
 * FEAT_ACCESS_NOTIFY, a clear in an mm with mmu notifiers is -EOPNOTSUPP.
 * x86 caches a translation with its accessed bit set and does not set it
 * again while the TLB holds it: a page in use may look idle after a clear
 * until its entry is evicted. QUERY_FLUSH_TLB flushes once, at the end of
 * the call, what it cleared, so that the next access sets the bit.
 * Hugetlb mappings whose PMD table may be shared with other processes
 * are reported but not cleared. Dirty bits are never cleared.
 */
struct numaplace_query {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 reserved0;
	__u64 start;		/* range mode */
	__u64 len;		/* range mode */
	__u64 pages_ptr;	/* array mode */
	__u64 count;		/* array mode */
	__u64 runs_ptr;		/* range mode */
	__u32 runs_cap;		/* range mode */
	__u32 nr_runs;		/* range mode */
	__u64 status_ptr;
	__u64 node_pages_ptr;
	__u32 node_pages_len;
	__u32 reserved1;
	__u64 done;
	__u64 nr_unplaced;
	__u64 nr_young;
	__u64 reserved[3];
};
#define NUMAPLACE_QUERY_SIZE_VER0	136

#define NUMAPLACE_IOC_QUERY	_IO(NUMAPLACE_TYPE, NUMAPLACE_CMD_QUERY)

/* numaplace_migrate.flags */
#define NUMAPLACE_MIGRATE_PAGES	    (1U << 0) /* pages_ptr/count, not start/len */
#define NUMAPLACE_MIGRATE_MOVE_ALL  (1U << 1) /* MPOL_MF_MOVE_ALL: shared pages too */
#define NUMAPLACE_MIGRATE_SPLIT_OK  (1U << 2) /* large folios may be split */
#define NUMAPLACE_MIGRATE_AS_SYSCALL (1U << 3) /* this kernel's move_pages statuses */
#define NUMAPLACE_MIGRATE_ENGINE_KERNEL (1U << 4) /* only the kernel engine */
#define NUMAPLACE_MIGRATE_ENGINE_VMA	(1U << 5) /* only the migrate_vma engine */
#define NUMAPLACE_MIGRATE_ENGINE_BATCH	(1U << 6) /* only the batched engine */
#define NUMAPLACE_MIGRATE_ENGINE_PT	(1U << 7) /* the page-table engine first */
/* The flags that choose an engine (at most one per call). */
#define NUMAPLACE_MIGRATE_ENGINES	(NUMAPLACE_MIGRATE_ENGINE_KERNEL | \
					 NUMAPLACE_MIGRATE_ENGINE_VMA | \
					 NUMAPLACE_MIGRATE_ENGINE_BATCH | \
					 NUMAPLACE_MIGRATE_ENGINE_PT)

/* numaplace_migrate.policy: where each page goes */
enum numaplace_policy {
	NUMAPLACE_POLICY_NODE = 0,	 /* every page to @node */
	NUMAPLACE_POLICY_PER_PAGE = 1,	 /* page i to nodes_ptr[i] (move_pages' nodes[]) */
	NUMAPLACE_POLICY_INTERLEAVE = 2, /* round-robin over @node_set, a folio at a time */
	NUMAPLACE_POLICY_CPU = 3,	 /* to the node of CPU @cpu */
	NUMAPLACE_POLICY_MAX,
};

/* numaplace_migrate.nr_failed[]: pages that did not move, by reason */
enum numaplace_fail {
	NUMAPLACE_FAIL_ENOMEM = 0,	/* no memory on the target node */
	NUMAPLACE_FAIL_EBUSY = 1,	/* could not be isolated or migrated now */
	NUMAPLACE_FAIL_EACCES = 2,	/* mapped by other processes, no MOVE_ALL */
	NUMAPLACE_FAIL_EFAULT = 3,	/* no VMA, zero page, VM_IO/PFNMAP/DAX */
	NUMAPLACE_FAIL_ENOENT = 4,	/* nothing mapped, swapped out, device page */
	NUMAPLACE_FAIL_OTHER = 5,
	NUMAPLACE_FAIL_MAX = 8,
};

/*
 * The errno of each reason but NUMAPLACE_FAIL_OTHER, by reason (each is
 * named after it): an initialiser for a table of NUMAPLACE_FAIL_OTHER
 * entries, with <errno.h> or <linux/errno.h> included.
 */
#define NUMAPLACE_FAIL_ERRNOS {					\
	[NUMAPLACE_FAIL_ENOMEM] = ENOMEM, [NUMAPLACE_FAIL_EBUSY] = EBUSY,	\
	[NUMAPLACE_FAIL_EACCES] = EACCES, [NUMAPLACE_FAIL_EFAULT] = EFAULT,	\
	[NUMAPLACE_FAIL_ENOENT] = ENOENT }

/* numaplace_migrate.engines and numaplace_info engine reporting */
#define NUMAPLACE_ENGINE_KERNEL	(1U << 0) /* the kernel's migrate_pages() */
#define NUMAPLACE_ENGINE_VMA	(1U << 1) /* migrate_vma_* (exported API) */
#define NUMAPLACE_ENGINE_BATCH	(1U << 2) /* numaplace's batched engine */
#define NUMAPLACE_ENGINE_PT	(1U << 3) /* numaplace's page-table engine */

/**
 * struct numaplace_migrate - NUMAPLACE_IOC_MIGRATE: move these pages
 * @size: in, sizeof(struct numaplace_migrate) as the caller knows it
 * @flags: in, NUMAPLACE_MIGRATE_*
 * @pid: in, the process whose pages move, 0 for the caller
 * @policy: in, NUMAPLACE_POLICY_*
 * @start: in, range mode: first address (rounded down to a page)
 * @len: in, range mode: length in bytes
 * @pages_ptr: in, array mode: user pointer to @count __u64 addresses
 * @count: in, array mode: number of addresses
 * @nodes_ptr: in, POLICY_PER_PAGE: user pointer to one __s32 node per page
 *	of the range (range mode) or per address (array mode)
 * @status_ptr: in, user buffer of __s32, one per page (range mode) or per
 *	address (array mode), or 0: as move_pages' status[]: the node the
 *	page is on when the call returns, or a negative errno
 * @node: in, POLICY_NODE: the target node
 * @cpu: in, POLICY_CPU: the CPU whose node is the target
 * @node_set: in, POLICY_INTERLEAVE: bitmap of target nodes
 * @done: out, pages (range mode) or addresses (array mode) handled; less
 *	than asked only with an error (-EINTR, -ENODEV, -EACCES, -EFAULT for
 *	a bad entry of the arrays): resume from there
 * @nr_moved_pages: out, base pages migrated
 * @nr_moved_folios: out, folios migrated (a THP counts once)
 * @nr_in_place_pages: out, pages already on their target
 * @nr_failed_pages: out, pages that did not move
 * @nr_failed: out, @nr_failed_pages by reason, NUMAPLACE_FAIL_*
 * @engines: out, NUMAPLACE_ENGINE_* that moved pages in this call
 * @reserved0: must be 0
 * @reserved: must be 0
 */
struct numaplace_migrate {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 policy;
	__u64 start;
	__u64 len;
	__u64 pages_ptr;
	__u64 count;
	__u64 nodes_ptr;
	__u64 status_ptr;
	__s32 node;
	__u32 cpu;
	__u64 node_set[NUMAPLACE_NODE_WORDS];
	__u64 done;
	__u64 nr_moved_pages;
	__u64 nr_moved_folios;
	__u64 nr_in_place_pages;
	__u64 nr_failed_pages;
	__u64 nr_failed[NUMAPLACE_FAIL_MAX];
	__u32 engines;
	__u32 reserved0;
	__u64 reserved[4];
};
#define NUMAPLACE_MIGRATE_SIZE_VER0	344

#define NUMAPLACE_IOC_MIGRATE	_IO(NUMAPLACE_TYPE, NUMAPLACE_CMD_MIGRATE)

/* numaplace_watch.flags */
#define NUMAPLACE_WATCH_CLOEXEC	 (1U << 0) /* O_CLOEXEC on the new fd */
#define NUMAPLACE_WATCH_NONBLOCK (1U << 1) /* O_NONBLOCK on the new fd */

/**
 * struct numaplace_watch - NUMAPLACE_IOC_WATCH: tell me when these pages move
 * @size: in, sizeof(struct numaplace_watch) as the caller knows it
 * @flags: in, NUMAPLACE_WATCH_*
 * @pid: in, the process to watch, 0 for the caller (QUERY's permission
 *	checks, with the caller's credentials at this call)
 * @reserved0: must be 0
 * @start: in, first address (rounded down to a page)
 * @len: in, length in bytes (> 0); every page [start, start + len)
 *	touches is watched
 * @cookie: in, copied into every record of this watch
 * @node_pages_ptr: in, user buffer of @node_pages_len __u64, or 0: the
 *	range's per-node totals when the watch starts (as QUERY's)
 * @node_pages_len: in, entries in @node_pages_ptr
 * @reserved1: must be 0
 * @reserved: must be 0
 *
 * The ioctl returns a new file descriptor (nothing is written back to the
 * struct): read() it for struct numaplace_watch_record, poll() it for
 * POLLIN; close it to stop watching.
 */
struct numaplace_watch {
	__u32 size;
	__u32 flags;
	__s32 pid;
	__u32 reserved0;
	__u64 start;
	__u64 len;
	__u64 cookie;
	__u64 node_pages_ptr;
	__u32 node_pages_len;
	__u32 reserved1;
	__u64 reserved[4];
};
#define NUMAPLACE_WATCH_SIZE_VER0	88

#define NUMAPLACE_IOC_WATCH	_IO(NUMAPLACE_TYPE, NUMAPLACE_CMD_WATCH)

/* numaplace_watch_record.reason: enum numaplace_watch_reason */

/* Nodes a record has room for: numaplace_info.nr_node_ids must not exceed
 * it (else NUMAPLACE_FEAT_WATCH is not set).
 */
#define NUMAPLACE_WATCH_NODES	64

/**
 * struct numaplace_watch_record - one change of a watched range's placement
 * @cookie: the watch's cookie
 * @seq: 1 for the first record of the watch, +1 for each next one: a gap
 *	never happens (dropped changes are an OVERFLOW record)
 * @start: first address of the changed sub-range (page aligned)
 * @len: its length in bytes; GONE: the whole range
 * @reason: enum numaplace_watch_reason
 * @nr_nodes: entries of @before and @after that are valid (nr_node_ids)
 * @nr_changed: pages whose placement changed; OVERFLOW: records dropped
 * @unplaced_before: pages of the range with no node before the change
 * @unplaced_after: the same after it
 * @before: pages of the whole watched range per node, before the change
 * @after: the same after it (GONE: all zero)
 *
 * An OVERFLOW record stands for the records it replaces: its sub-range
 * covers theirs, @before is the state before the first, @after the state
 * after the last.
 */
struct numaplace_watch_record {
	__u64 cookie;
	__u64 seq;
	__u64 start;
	__u64 len;
	__u32 reason;
	__u32 nr_nodes;
	__u64 nr_changed;
	__u64 unplaced_before;
	__u64 unplaced_after;
	__u64 before[NUMAPLACE_WATCH_NODES];
	__u64 after[NUMAPLACE_WATCH_NODES];
};
#define NUMAPLACE_WATCH_RECORD_SIZE	1088

/*
 * Generic netlink family "numaplace": telemetry, configuration, events.
 * Its names (NUMAPLACE_FAMILY_NAME, NUMAPLACE_A_*, NUMAPLACE_NL_CMD_*,
 * enum numaplace_phase, numaplace_config_engine, numaplace_watch_reason,
 * the knobs' limits) are in <linux/numaplace-genl.h>, generated from
 * Documentation/netlink/specs/numaplace.yaml. 64-bit values are u64
 * attributes padded with the message's *_PAD attribute.
 */

/*
 * Names from before the generated header, which has no count of an enum
 * and starts the commands at 1: kept for programs that use them.
 */
#define NUMAPLACE_PHASE_MAX	(NUMAPLACE_PHASE_RESOLVE + 1)
#define NUMAPLACE_NL_CMD_UNSPEC	0

#endif /* _UAPI_LINUX_NUMAPLACE_H */
