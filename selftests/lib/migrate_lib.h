/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two NUMAPLACE_IOC_MIGRATE suites share: migrate.c (fixture
 * "mig", the engines against the move_pages(2) oracle) and migrate_abi.c
 * (fixture "migrate", the ABI, bad input, permissions and policies).
 * migrate_lay.c builds the layouts of every page kind; migrate_sim.c
 * reads page states, simulates the syscall and compares one call of
 * each against it (np_compare()). Both are compiled once, into the
 * tests' library; neither uses the kselftest harness, whose globals only
 * a test file may define: what needs a test's _metadata is a macro here.
 */
#ifndef NP_MIGRATE_LIB_H
#define NP_MIGRATE_LIB_H

#include <sys/types.h>

#include "np_test.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define NP_PMD		(2UL << 20)
#define NP_SEG_PAGES	512		/* pages of one 2 MiB layout segment */
#define NP_HP_PATH	"/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages"
#define NP_HP_KB	2048	/* the huge page size NP_HP_PATH counts */
/* No batch yet (the syscall's NUMA_NO_NODE). */
#define NP_NO_NODE	(-1)
/* nr_hugepages of nodes 0 and 1 before a test changed them ("n0 n1"). */
#define NP_HP_SAVED	"/tmp/np-migrate-hugepages"

/* NP_SKIPPED(), and a test NP_ONLY leaves out is skipped too. */
#define NP_SKIPPED_OR_FILTERED()						\
	do {								\
		NP_SKIPPED();						\
		if (np_filtered(_metadata->name))			\
			SKIP(return, "not in NP_ONLY");			\
	} while (0)

/*
 * A round of a test that migrates its region again and again: the call
 * answered all @n pages, wrote nothing past st[@n - 1] and its counters
 * add up (np_check_mig_counters()). @what (a char array) is set to
 * "round @round", the label of its messages.
 */
#define NP_ROUND_DONE(self, m, st, n, round, what)			\
	do {								\
		snprintf(what, sizeof(what), "round %ld", (long)(round)); \
		EXPECT_EQ((n), (m).done) TH_LOG("%s", what);		\
		EXPECT_EQ(NP_SENTINEL, (st)[n]) TH_LOG("%s", what);	\
		EXPECT_EQ(0, np_check_mig_counters(&(self)->c, what, &(m), \
						   (st), (n), 1,	\
						   (self)->allowed));	\
	} while (0)

/* In a teardown: how long the test took since @t0 (ms), unless skipped. */
#define NP_TOOK(t0)							\
	do {								\
		if (!_metadata->skip)					\
			ksft_print_msg("took %ld ms\n", np_mono_ms() - (t0)); \
	} while (0)

/*
 * The device, MIGRATE, root, nodes 0 and 1 (np_mig_open()) in a fixture's
 * setup: 0, or -1 after a SKIP(); a failed step fails the test.
 */
#define NP_MIG_SETUP(fd, c, info)					\
	NP_OPEN_SETUP(np_mig_open, fd, c, info)

/* ---- Layouts of every page kind, built twice identically (migrate_lay.c) */
enum np_seg {
	NP_SEG_4K,		/* anon: written, zero, untouched, PROT_NONE, ... */
	NP_SEG_THP,		/* PMD THP on node 0 */
	NP_SEG_THP_ON1,		/* PMD THP already on node 1 */
	NP_SEG_THP_PTE,		/* THP mapped by PTEs (partial mprotect) */
	NP_SEG_THP_PROTNONE,	/* PMD THP, PROT_NONE */
	NP_SEG_HUGE_ZERO,	/* the huge zero page */
	NP_SEG_FORK_4K,		/* anon 4k shared with the child by fork() */
	NP_SEG_FORK_THP,	/* a THP shared with the child by fork() */
	NP_SEG_SWAP,		/* anon, half swapped out (with swap) */
	NP_SEG_SHARED_ANON,	/* MAP_SHARED anon, half mapped by the child */
	NP_SEG_MEMFD,		/* memfd (shmem) */
	NP_SEG_FILE,		/* a tmpfs file under /tmp */
	NP_SEG_HUGETLB,		/* one 2 MiB hugetlb page, touched */
	NP_SEG_MAX,
};

struct np_lay {
	char *base;
	size_t npages;
	int nseg;
	enum np_seg seg[NP_SEG_MAX];
	int fds[NP_SEG_MAX];
	int *target;		/* per page */
};

extern const char *const np_seg_names[];

/* NP_ONLY=a,b runs only the tests whose name contains a or b. */
int np_filtered(const char *name);

size_t np_rnd_below(__u64 *s, size_t n);

/* Private anonymous memory aligned to a PMD, THP asked for or refused. */
char *np_pmd_map(size_t len, int thp);

/* Stamp every 64-bit word of pages [0, n) of @p with np_stamp(i, g) + k. */
void np_fill(char *p, size_t n, __u64 g);

/* Pages of [0, n) of @p that do not hold np_fill(p, n, g). */
size_t np_fill_bad(const char *p, size_t n, __u64 g, size_t *first);

/* The node of each page of the caller's @n addresses (query), or errno. */
int np_nodes_of(int pid, const __u64 *addrs, size_t n, int *st);

void np_range_addrs(__u64 *a, uintptr_t base, size_t n);

/* The first online CPU of @node, or -1. */
int np_cpu_of_node(int node);

/*
 * kB of @node's meminfo lines named in @keys (comma-separated, e.g.
 * "MemFree:"), added up; -1 if none is there.
 */
long np_node_kb(int node, const char *keys);

int np_have_swap(void);

/* [vvar]'s range of the caller; 0 or -ENOENT. */
int np_vvar(unsigned long *s, unsigned long *e);

int np_drop_to(uid_t uid);

/*
 * In a child: become @uid (0: stay), die with the parent again (the uid
 * change cleared it), PR_SET_DUMPABLE @dumpable. 0 or -errno.
 */
int np_become(uid_t uid, int dumpable);

/*
 * In a child: become @uid (0: stay) and return @fd, or the device opened
 * after the uid change when @fd < 0. Exits the child with 2 when the uid
 * change fails, 3 when the open does.
 */
int np_child_device(uid_t uid, int fd);

/* Read @pid's stat state letter, or 0. */
int np_proc_state(pid_t pid);

/*
 * A child that exited and is not reaped (the caller waitpid()s it): its
 * pid once its state is 'Z' (2 s at most), or -1.
 */
pid_t np_zombie(void);

void np_lay_free(struct np_lay *l);

void np_touch_w(char *p, size_t i);

/*
 * Lay out @nseg segments of @kinds (pages faulted in on node 0), targets
 * from @seed. 0 or -errno.
 */
int np_lay_build(struct np_lay *l, const enum np_seg *kinds, int nseg,
		 __u64 seed);

/* The fork() child: maps the shared segments of @a and @b, waits. */
pid_t np_lay_fork(const struct np_lay *a, const struct np_lay *b);

void np_hp_write(int node, long val);

void np_hp_save(const long *orig);

/* What np_hp_fill_node() asks of a node's pool: more than any node gives. */
#define NP_HP_FILL_ASK		1000000L
/* The huge pages it gives back: 4 MiB of the node left to allocate from. */
#define NP_HP_FILL_ROOM		2

/*
 * Node @node (0 or 1) full: as many huge pages as it gives, then
 * NP_HP_FILL_ROOM of them back. Its pool before goes to @orig[@node],
 * saved (np_hp_save(); np_hp_restore() puts it back). Return: the huge
 * pages the node holds now; -ENOENT: no pool file (skip); -ENOMEM: it
 * gave too few; -EIO.
 */
long np_hp_fill_node(int node, long *orig);

/*
 * In a test: @got = np_hp_fill_node(@node, @orig); a node without a pool
 * skips the test, any other failure fails it.
 */
#define NP_HP_FILL_NODE(got, node, orig)				\
	do {								\
		(got) = np_hp_fill_node((node), (orig));		\
		if ((got) == -ENOENT)					\
			SKIP(return, "node %d has no 2 MiB huge page pool", \
			     (node));					\
		ASSERT_LT(0, (got));					\
	} while (0)

/*
 * What a full node 1 is asked to take: @n pages on node 0 stamped with
 * np_fill(p, n, @g), mlocked (reclaim on node 1 cannot swap out what
 * moved). NULL with errno when a step failed.
 */
char *np_full_src(size_t n, __u64 g);

/*
 * The pages of np_full_src() that no longer hold @g (np_fill_bad(), the
 * first into @first); then they are unlocked and unmapped.
 */
size_t np_full_src_free(char *p, size_t n, __u64 g, size_t *first);

/*
 * The device, MIGRATE, root, nodes 0 and 1; NUMA balancing off and the
 * huge pages a killed test left changed put back. 0; 1 with the reason to
 * skip in @why; or -errno with the step that failed in @why.
 */
int np_mig_open(int *fd, struct np_ctx *c, struct numaplace_info *info,
		char *why, size_t len);

/* ---- Page states, the syscall's simulation, a compared call (migrate_sim.c) */

/* One entry (a page, or an address of array mode) before the call. */
struct np_pre {
	struct np_page pg;	/* the /proc model's answer */
	unsigned long folio;	/* its folio's first pfn; 0: no folio */
	int nr;			/* pages of the folio */
	int large;		/* THP or hugetlb */
	int shared;		/* mapped more than once (kpagecount) */
	int hugetlb_tail;	/* a hugetlb address past its first 4 KiB */
	size_t rep;		/* the first entry of the same folio */
};

struct np_sim {
	int syscall;		/* move_pages(2)'s batches, not the module */
	int old;		/* 6.1's lookup answers */
	int move_all;
	int vma_only;		/* only the migrate_vma or the batched engine */
	int kernel_only;	/* only the kernel engine */
	__u32 avail;		/* NUMAPLACE_ENGINE_* the module has */
	__u32 vma_engine;	/* the one that takes private anon 4 KiB pages */
	int split_ok;
	/* out */
	__u64 moved_pages, moved_folios, in_place;
	__u32 engines;		/* the engines that moved pages */
};

/* One compared call: how the module is asked. */
struct np_call {
	const char *name;
	int array;		/* array mode */
	__u32 policy;		/* NUMAPLACE_POLICY_PER_PAGE or _NODE */
	__u32 flags;		/* the module's flags, engine included */
	int vma_only;		/* NUMAPLACE_MIGRATE_ENGINE_VMA */
	__u32 allowed;		/* engines it may report */
	__u32 avail;		/* engines the module has */
	const struct np_lay *la, *lb;	/* for log lines, or NULL */
	pid_t kid;		/* the fork child sharing pages, or 0 */
	__u64 start, len;	/* range mode: copy B's range, if len */
};

/* The model's state of @n addresses of @pid. 0 or -errno. */
int np_pre_read(int pid, const __u64 *addrs, size_t n,
		struct np_pre *pre);

void np_simulate(struct np_sim *o, const struct np_pre *pre,
		 const int *tgt, size_t n, int *exp, int *node);

/*
 * Copy A's addresses @aa through move_pages(2), copy B's @ab through the
 * ioctl, targets @tgt; each against the simulation over its own state.
 * Returns the number of failed checks (each logged); a failed step ends
 * the comparison there.
 */
int np_compare(struct np_ctx *c, const struct np_call *k, const __u64 *aa,
	       const __u64 *ab, const int *tgt, size_t n);

/* nr_hugepages of nodes 0 and 1 back to @orig (-1: untouched), forgotten. */
void np_hp_restore(long *orig);

/*
 * The fixture of migrate.c, migrate_thp.c and migrate_bounds.c: every
 * test once per engine (NP_ENGINE_VARIANTS()), the device and MIGRATE
 * (NP_MIG_SETUP()), a child, two layouts and nr_hugepages, undone by the
 * teardown.
 */
#define NP_MIG_FIXTURE(name)						\
	FIXTURE(name)							\
	{								\
		int fd;							\
		struct np_ctx c;					\
		struct numaplace_info info;				\
		__u32 eflags;	/* NUMAPLACE_MIGRATE_ENGINE_* */	\
		__u32 allowed;	/* NUMAPLACE_ENGINE_* it may report */	\
		int vma_only;						\
		pid_t kid;						\
		struct np_lay a, b;					\
		long hp_orig[2]; /* nodes 0, 1; -1: untouched */	\
		long t0;	/* setup's CLOCK_MONOTONIC ms */	\
	};								\
									\
	NP_ENGINE_VARIANTS(name);					\
									\
	FIXTURE_SETUP(name)						\
	{								\
		self->t0 = np_mono_ms();				\
		self->kid = -1;						\
		self->hp_orig[0] = self->hp_orig[1] = -1;		\
		self->a.base = self->b.base = NULL;			\
		if (NP_MIG_SETUP(&self->fd, &self->c, &self->info))	\
			return;						\
		psz = self->c.psz;					\
		if (variant->feature &&					\
		    !(self->info.features & variant->feature))		\
			SKIP(return, "engine not available (features %#llx)", \
			     (unsigned long long)self->info.features);	\
		self->eflags = variant->flags;				\
		self->allowed = np_engines_allowed(&self->info,		\
						   variant->flags);	\
		/* The batched engine hands what it does not move to the kernel's. */ \
		self->vma_only = variant->flags == NUMAPLACE_MIGRATE_ENGINE_VMA || \
			(variant->flags == NUMAPLACE_MIGRATE_ENGINE_BATCH && \
			 !(self->info.features & NUMAPLACE_FEAT_MIGRATE_KERNEL)); \
	}								\
									\
	FIXTURE_TEARDOWN(name)						\
	{								\
		NP_TOOK(self->t0);					\
		if (self->kid > 0) {					\
			kill(self->kid, SIGKILL);			\
			waitpid(self->kid, NULL, 0);			\
		}							\
		np_lay_free(&self->a);					\
		np_lay_free(&self->b);					\
		np_hp_restore(self->hp_orig);				\
		if (self->fd >= 0)					\
			close(self->fd);				\
	}

/* ---- The MIGRATE ABI tests' fixture and probes (migrate_abi_lib.c) ----- */
#define NP_NOBODY	65534
#define NP_PROBE_PAGES	16

/* What a probe in another process saw, in memory shared with the test. */
struct np_res {
	unsigned long base;	/* the last target's pages */
	long sys;		/* move_pages(2) */
	int mod;		/* the ioctl */
	int mod_self;		/* the ioctl on the prober's own page */
	__u64 done;
	__s32 st[NP_PROBE_PAGES];
	int sys_st[NP_PROBE_PAGES];
};

#define NP_MAX_KIDS	4

/* A test's target children, killed by np_kids_kill(). */
struct np_kids {
	pid_t pid[NP_MAX_KIDS];
	int nr;
};

/* @n written pages on node 0, PMD-aligned, no THP. */
char *np_pages_on0(size_t n);

/*
 * A child that becomes @uid (0: stays root), sets PR_SET_DUMPABLE to
 * @dumpable, writes NP_PROBE_PAGES pages on node 0 (start in res->base)
 * and waits to be killed. Its pid (in @kids), or -1.
 */
pid_t np_abi_kid(struct np_kids *kids, struct np_res *res, uid_t uid,
		 int dumpable);
void np_kids_kill(struct np_kids *kids);

struct np_probe_args {
	int pid;
	__u64 base;		/* NP_PROBE_PAGES pages of @pid */
	int node;
	__u32 flags;		/* the ioctl's */
	int sysflags;		/* the syscall's */
};

/*
 * In a child that becomes @uid (0: stays root): the ioctl (array mode,
 * POLICY_NODE), then move_pages(2), on the pages; then the ioctl on a
 * page of its own. Results in @r (shared memory); 0 when the child ran.
 */
int np_probe(struct np_res *r, uid_t uid, const struct np_probe_args *a);
/* As np_probe(), on @fd (opened by the test) when @fd >= 0. */
int np_probe_fd(struct np_res *r, uid_t uid, int fd,
		const struct np_probe_args *a);

/*
 * @m as a POLICY_PER_PAGE MIGRATE over @n pages: the array @addrs, or
 * (@range) the range of @n pages from @base; targets @nodes, statuses
 * into @st (either may be a bad pointer).
 */
void np_per_page_init(struct numaplace_migrate *m, int range,
		      const __u64 *addrs, uintptr_t base, size_t n,
		      const void *nodes, void *st);

/* Nodes of @n pages of @pid from @base into @nodes; 0 or -errno. */
int np_where_pages(int pid, uintptr_t base, size_t n, int *nodes);
/* Count of @n ints equal to @v. */
size_t np_count(const int *a, size_t n, int v);
size_t np_count_s32(const __s32 *a, size_t n, __s32 v);

/*
 * The fixture of migrate_abi.c, migrate_perm.c and migrate_policy.c: the
 * device and MIGRATE (NP_MIG_SETUP()), the probes' shared results, the
 * target children, two layouts and a cpuset cgroup, all undone by the
 * teardown.
 */
#define NP_ABI_FIXTURE(name)						\
	FIXTURE(name)							\
	{								\
		int fd;							\
		struct np_ctx c;					\
		struct numaplace_info info;				\
		__u32 allowed;						\
		struct np_res *res;					\
		struct np_kids kids;					\
		struct np_lay a, b;					\
		char cg[128];	/* a cgroup this test made, "" for none */ \
		char cg_mnt[64]; /* cgroup2 mounted here by it, or "" */ \
		long t0;	/* setup's CLOCK_MONOTONIC ms */	\
	};								\
									\
	FIXTURE_SETUP(name)						\
	{								\
		self->t0 = np_mono_ms();				\
		self->res = MAP_FAILED;					\
		if (NP_MIG_SETUP(&self->fd, &self->c, &self->info))	\
			return;						\
		psz = self->c.psz;					\
		self->allowed = np_engines_allowed(&self->info, 0);	\
		self->res = mmap(NULL, sizeof(*self->res),		\
				 PROT_READ | PROT_WRITE,		\
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);	\
		ASSERT_NE(MAP_FAILED, self->res);			\
	}								\
									\
	FIXTURE_TEARDOWN(name)						\
	{								\
		NP_TOOK(self->t0);					\
		np_kids_kill(&self->kids);				\
		if (self->cg[0])					\
			rmdir(self->cg);				\
		if (self->cg_mnt[0]) {					\
			umount(self->cg_mnt);				\
			rmdir(self->cg_mnt);				\
		}							\
		np_lay_free(&self->a);					\
		np_lay_free(&self->b);					\
		if (self->fd >= 0)					\
			close(self->fd);				\
		if (self->res != MAP_FAILED)				\
			munmap(self->res, sizeof(*self->res));		\
	}

#endif /* NP_MIGRATE_LIB_H */
