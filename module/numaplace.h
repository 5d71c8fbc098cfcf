/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: internal declarations shared by the module's files.
 */
#ifndef _NUMAPLACE_INTERNAL_H
#define _NUMAPLACE_INTERNAL_H

#include <linux/types.h>
#include <linux/gfp.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/numaplace.h>

#define NP_NAME "numaplace"

/*
 * What a call allocates for itself (its state, a round's arrays, a
 * sorted copy of its stretches) is the caller's memory, as the syscalls'
 * is: charged to the caller's memcg (__GFP_ACCOUNT). When that memcg is
 * full, the call fails with -ENOMEM (or that round's pages stay, with
 * their status) instead of OOM-killing in it: __GFP_RETRY_MAYFAIL makes
 * try_charge_memcg() give up before mem_cgroup_oom() (6.1 to 7.3); arrays
 * take np_call_array_alloc(). No warning: a caller's limit is no state of
 * the host.
 */
#define NP_GFP_CALL	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/*
 * kvmalloc_array() for a call's arrays, with NP_GFP_CALL (@zero: 0 or
 * __GFP_ZERO). Not kvmalloc() itself: given __GFP_RETRY_MAYFAIL, it
 * leaves out its __GFP_NORETRY from the physically contiguous attempt
 * (6.1 mm/util.c kvmalloc_node()), and any caller could make a
 * fragmented host reclaim and compact for an array vmalloc serves as
 * well. One light kmalloc attempt, then vmalloc, charged, no OOM kill.
 */
static inline void *np_call_array_alloc(size_t n, size_t size, gfp_t zero)
{
	size_t bytes;
	void *p;

	if (unlikely(check_mul_overflow(n, size, &bytes)))
		return NULL;
	if (bytes <= PAGE_SIZE)
		return kmalloc(bytes, NP_GFP_CALL | zero);
	p = kmalloc(bytes, (NP_GFP_CALL & ~__GFP_RETRY_MAYFAIL) |
			   __GFP_NORETRY | zero);
	return p ?: __vmalloc(bytes, NP_GFP_CALL | zero);
}

/*
 * A call's arrays carved out of one np_call_array_alloc(), so that a call
 * makes one charged allocation, not one per array: np_carve() places @n
 * elements of @size after those before (at an 8-byte boundary, enough
 * for any of them) and returns their offset; *@bytes is the block's size
 * so far. Saturating: an overflow makes a size no allocation meets.
 */
static inline size_t np_carve(size_t *bytes, size_t n, size_t size)
{
	size_t off = size_add(*bytes, sizeof(u64) - 1) & ~(sizeof(u64) - 1);

	*bytes = size_add(off, size_mul(n, size));
	return off;
}

/**
 * struct np_ioctl_op - one row of the ioctl table (module/dev.c)
 * @cmd: the full ioctl number
 * @handler: does the work on a kernel copy of the struct; returns 0 or
 *	-errno; on 0 the struct is copied back to the caller
 * @size: sizeof() the struct as this module knows it
 * @min_size: the first published size (*_SIZE_VER0): shorter is -EINVAL
 * @valid_flags: the flags the command knows: others are -EINVAL
 * @progress: the struct goes back to the caller on any error too (not
 *	only -EINTR): its progress fields say what was done before it
 * @new_fd: the handler's return value (a new file descriptor or -errno) is
 *	the ioctl's; the struct is not copied back
 */
struct np_ioctl_op {
	unsigned int cmd;
	int (*handler)(void *arg);
	size_t size;
	size_t min_size;
	u32 valid_flags;
	bool progress;
	bool new_fd;
};

struct mm_struct;
struct task_struct;

/* module/target.c */
struct np_target {
	struct mm_struct *mm;	/* with a reference */
	nodemask_t mems;	/* where the task's cpuset lets its pages go */
};

/* What a call may do to the target: the /proc file it stands for. */
enum np_target_need {
	NP_TARGET_MOVE,		/* move_pages(2)'s check (QUERY, MIGRATE) */
	NP_TARGET_PAGEMAP,	/* ...and reading /proc/PID/pagemap's */
	NP_TARGET_CLEAR_REFS,	/* ...and writing /proc/PID/clear_refs' too */
};

int np_target_get(pid_t pid, struct np_target *t);
int np_target_get_proc(pid_t pid, enum np_target_need need,
		       struct np_target *t);
void np_target_put(struct np_target *t);
struct mm_struct *np_target_mm(pid_t pid, enum np_target_need need);
bool np_target_exact(void);

/* module/nodemap.c: pfn -> node */
struct np_pfn_span {
	unsigned long start;	/* first pfn */
	unsigned long end;	/* last pfn + 1 */
	int nid;
};

/* A caller's last hit; start with it zeroed. */
struct np_nodemap_cache {
	struct np_pfn_span span;
};

#define NP_NID_NOPAGE (-1)	/* no struct page behind the pfn */
#define NP_NID_DEVICE (-2)	/* a ZONE_DEVICE page */

int np_nodemap_init(void);
void np_nodemap_exit(void);
int np_nodemap_lookup(struct np_nodemap_cache *c, unsigned long pfn);

/* The node of a mapped pfn, or NP_NID_*. Call under rcu_read_lock(). */
static __always_inline int np_pfn_to_nid(struct np_nodemap_cache *c,
					 unsigned long pfn)
{
	if (likely(pfn - c->span.start < c->span.end - c->span.start))
		return c->span.nid;
	return np_nodemap_lookup(c, pfn);
}

/* module/uarray.c */
struct np_stretch {
	unsigned long start;	/* page address */
	unsigned int nr_pages;
};

struct np_seg {
	unsigned int nr_pages;
	s32 status;
};

int np_get_stretches(const u64 __user *src, unsigned int n,
		     struct np_stretch *st, bool *ascending);
int np_put_segs(s32 __user *dst, const struct np_seg *segs, unsigned int nr);
int np_get_s32s(s32 *dst, const s32 __user *src, unsigned int n);
int np_put_s32s(s32 __user *dst, const s32 *src, unsigned int n);
int np_range_check(u64 start, u64 len);

/* module/query.c */
int np_query(void *arg);

/* module/migrate.c */
int np_migrate(void *arg);

/* module/engine.c */
unsigned int np_engines_have(void);
u64 np_engines_features(void);
bool np_engine_config_ok(u32 config);

/* module/watch_file.c, module/watch.c */
int np_watch(void *arg);
bool np_watch_supported(void);

/* module/config.c: set through netlink, read once per call */
/*
 * Pages per migration round: what is collected and handed to the engines
 * before the next signal check. Bounds (the spec's definitions, in
 * <linux/numaplace-genl.h>): NUMAPLACE_BATCH_PAGES_MIN, a page table's
 * worth (the engines' batch unit), and NUMAPLACE_BATCH_PAGES_MAX, 256 MiB
 * of 4 KiB pages (the round's per-page arrays then take 640 KiB).
 */
#define NP_BATCH_PAGES_DEFAULT	16384

/*
 * Threads copying a batch (the caller and kernel workers): 0 is "the CPUs
 * of the target node", capped at NUMAPLACE_COPY_WORKERS_MAX (the spec's
 * definition): past the CPUs of a node the workers only take turns, and a
 * socket's memory bandwidth is saturated by a few copying cores.
 */

struct np_config {
	u32 engine;		/* enum numaplace_config_engine */
	u32 batch_pages;	/* pages per migration round */
	u32 copy_workers;	/* batched engine's copy threads, 0 = auto */
	u32 dma;		/* batched engine copies with a DMA engine */
};
extern struct np_config np_config;
extern struct mutex np_config_mutex;

/* module/genl.c */
int np_genl_init(void);
void np_genl_exit(void);
void np_genl_migrate_done(const struct numaplace_migrate *a, pid_t pid,
			  u64 duration_ns, int err);

/* module/info.c */
u64 np_features(void);

/* module/dev.c */
int np_dev_init(void);
void np_dev_exit(void);

#endif /* _NUMAPLACE_INTERNAL_H */
