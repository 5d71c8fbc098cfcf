/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by numaplace's selftests (kselftest harness): their
 * declarations; the bodies are np_test.c, np_model.c and np_check.c, in
 * the tests' library. Only macros here may use a test's _metadata.
 */
#ifndef NP_TEST_H
#define NP_TEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include <linux/kernel-page-flags.h>
#include <linux/numaplace.h>

/* One wrapper for every ioctl: retries EINTR, returns 0 or -errno. */
int np_ioctl(int fd, unsigned long cmd, void *arg);

/* Open the device, or -errno. */
int np_open(void);

/*
 * Parse a sysfs node list ("0-1,3") into a NUMAPLACE_NODE_WORDS bitmap;
 * returns the highest node + 1 or -errno.
 */
int np_read_nodelist(const char *path, __u64 *mask);

/* ---- NUMAPLACE_IOC_QUERY helpers (query.c, target.c) ------------------ */

/* A status[] slot nobody wrote: neither a node nor an errno. */
#define NP_SENTINEL	((__s32)0x5a5a5a5a)
/* The node_pages[] fill before a call: every entry must be rewritten. */
#define NP_NODE_FILL	0xa5a5a5a5a5a5a5a5ULL
/* Mismatch lines one check prints before it only counts them. */
#define NP_LOG_MAX	6

/* 1 if bit @node is set in a numaplace node mask. */
static inline int np_node_isset(const __u64 *mask, int node)
{
	return node >= 0 && node < NUMAPLACE_MAX_NODES &&
	       (mask[node / 64] >> (node % 64)) & 1;
}

/* INFO into @info; 0 or -errno. */
int np_get_info(int fd, struct numaplace_info *info);

/*
 * 1 when the running kernel answers move_pages(2) queries the 6.12 way
 * (folio_walk_start(): untouched anon -ENOENT, PROT_NONE has a node), 0
 * for the follow_page() answers of 6.1 (kernel-facts.md 1.3), -1 if
 * uname fails.
 */
int np_kernel_is_new(void);

/*
 * The kernel's text, read through /proc/kallsyms and /proc/kcore (root),
 * for what the module's ksyms.c decides under IBT (np_ksym.c).
 * np_kernel_ibt(): 1 if the kernel is built with IBT (an address-taken
 * function starts with ENDBR64), 0 if not, -errno if the text cannot be
 * read. np_ksym_endbr(): 1 if @name starts with ENDBR64 (callable
 * indirectly under IBT), 0 if sealed or absent, -errno as above.
 */
int np_kernel_ibt(void);
int np_ksym_endbr(const char *name);

/*
 * The kernel's own system call, not through syscall(3): a library the
 * test links (libnumaplace's preload shim) may interpose syscall() and
 * move_pages(), and the oracle must be the kernel. Returns the kernel's
 * value: a result, or -errno.
 */
long np_raw_syscall6(long nr, long a1, long a2, long a3,
		     long a4, long a5, long a6);

/* move_pages(2): its return value, or -errno. */
long np_sys_move_pages(int pid, unsigned long n,
		       const __u64 *pages, const int *nodes,
		       int *status, int flags);

/* The oracle: move_pages(pid, n, pages, NULL, status, 0). */
long np_sys_query(int pid, unsigned long n, const __u64 *pages,
		  int *status);

void np_query_init(struct numaplace_query *q, int pid,
		   __u32 flags);

static inline int np_query(int fd, struct numaplace_query *q)
{
	return np_ioctl(fd, NUMAPLACE_IOC_QUERY, q);
}

/* Range mode; NULL buffers are not asked for. 0 or -errno; outputs in *q. */
int np_query_range(int fd, int pid, __u32 flags, __u64 start,
		   __u64 len, struct numaplace_run *runs,
		   __u32 cap, __s32 *status, __u64 *node_pages,
		   __u32 nr_nodes, struct numaplace_query *q);

/* Array mode (NUMAPLACE_QUERY_PAGES is added). 0 or -errno. */
int np_query_array(int fd, int pid, __u32 flags,
		   const __u64 *pages, __u64 count,
		   __s32 *status, __u64 *node_pages,
		   __u32 nr_nodes, struct numaplace_query *q);

/* Write a string to a sysfs/procfs file; 0 or -errno. */
int np_write_str(const char *path, const char *val);
/* The value of /proc/vmstat line @key, or -1. */
long np_vmstat(const char *key);

/* Read a small file into @buf (NUL-terminated, newline cut); or -errno. */
int np_read_str(const char *path, char *buf, size_t size);

/* A number from a sysfs/procfs file, or -1. */
long np_read_long(const char *path);

/* ---- ksmd: run, sleep_millisecs, pages_to_scan ------------------------ */

/* Writable where a test may control ksmd. */
#define NP_KSM_RUN	"/sys/kernel/mm/ksm/run"

/* ksmd's settings before a test changed them. */
struct np_ksm {
	char saved[3][32];
	int changed;		/* saved: np_ksm_restore() puts them back */
};

/* Save ksmd's settings into @k: 0, or -errno. */
int np_ksm_save(struct np_ksm *k);

/* ksmd on and fast (1000 pages every 10 ms): 0, or -errno. */
int np_ksm_fast(void);

/* Put back what np_ksm_save() saved, if it did. */
void np_ksm_restore(struct np_ksm *k);

/*
 * A failure in a test's thread or child: counted in *@errors; the first
 * @max (*@logged counts them) printed to stderr, "# " @prefix message.
 */
void np_vfail(atomic_long *errors, atomic_long *logged, long max,
	      const char *prefix, const char *fmt, va_list ap);

/* The pids np_bad_pids() gives. */
#define NP_BAD_PIDS	4

/*
 * Pids of no process: the highest free one below pid_max (down to 300),
 * -1, INT_MIN and INT_MAX. 0, or -1 when pid_max is 300 or less.
 */
int np_bad_pids(int pids[NP_BAD_PIDS]);

/*
 * ---- The model: what move_pages(2) answers for a page, from /proc ----
 *
 * An independent oracle for both kernels' query semantics
 * (kernel-facts.md 1.3/1.4): the VMA from /proc/PID/smaps, the page table
 * entry from /proc/PID/pagemap, the frame's flags from /proc/kpageflags
 * and its node from the memory blocks under /sys/devices/system/node.
 * Needs root (PFNs are hidden otherwise). The tests check the running
 * kernel's syscall against it, and the module's default answers against
 * its 6.12 column on both kernels.
 */
#define NP_PM_PFN_MASK	((1ULL << 55) - 1)
#define NP_PM_SWAP	(1ULL << 62)
#define NP_PM_PRESENT	(1ULL << 63)

/* VMA properties (struct np_vma.flags). */
#define NPV_ANON	(1U << 0) /* no vm_ops: vma_is_anonymous() */
#define NPV_NOFAULT	(1U << 1) /* anon, or vm_ops without ->fault */
#define NPV_PFNMAP	(1U << 2) /* VmFlags "pf" */
#define NPV_HUGETLB	(1U << 3) /* VmFlags "ht" */
#define NPV_PROTNONE	(1U << 4) /* ---: present PTEs are pte_protnone */
#define NPV_FILE	(1U << 5) /* file or shmem (has an inode) */

struct np_vma {
	unsigned long start, end;
	unsigned int flags;
	unsigned long kpage_size;	/* KernelPageSize, bytes */
	char desc[80];			/* perms and name, for logs */
};

struct np_vmas {
	struct np_vma *v;
	size_t nr;
};

/*
 * What the model saw at a page (struct np_page.what); the module's run
 * kinds must agree (np_check_kinds()).
 */
#define NPW_NOVMA	(1U << 0)
#define NPW_HOLE	(1U << 1)  /* no entry: never touched */
#define NPW_SWAP	(1U << 2)  /* non-present entry: swap, migration */
#define NPW_PRESENT	(1U << 3)
#define NPW_ZERO	(1U << 4)  /* zero page or huge zero page */
#define NPW_PMD		(1U << 5)  /* mapped by a PMD (THP, 2M hugetlb) */
#define NPW_PROTNONE	(1U << 6)
#define NPW_SPECIAL	(1U << 7)  /* PFN map: no struct page */
#define NPW_HUGETLB	(1U << 8)
#define NPW_ANON	(1U << 9)
#define NPW_FILE	(1U << 10)
#define NPW_KSM		(1U << 11)
#define NPW_THP		(1U << 12)
#define NPW_PFNMAP	(1U << 13) /* VM_PFNMAP: pagemap cannot see entries */

/* Skip unless root: the model reads PFNs from /proc/PID/pagemap. */
#define NP_NEED_MODEL()							\
	do {								\
		if (geteuid())						\
			SKIP(return, "the /proc model needs root "	\
			     "(pagemap PFNs)");				\
	} while (0)

/* A model answer that is one of -EFAULT and -ENOENT, the model can't tell. */
#define NP_ANY		INT_MIN

struct np_page {
	int st_old;		/* 6.1's move_pages status */
	int st_new;		/* 6.12's, and the module's default answer */
	unsigned int what;	/* NPW_* */
	int node;		/* of the frame, or -1 */
	unsigned long pfn;
	char vma[80];		/* the VMA's np_vma.desc, "" for none */
};

/* memory block -> node, to place a PFN without asking move_pages. */
struct np_nodemap {
	unsigned long block_pages;
	size_t nr;
	short *node;
};

struct np_model {
	int pid;
	long psz;
	unsigned long pmd_size;
	struct np_vmas vmas;
	struct np_nodemap map;
	int pagemap_fd;
	int kpf_fd;
	unsigned long pmd_blk;	/* one-block cache of np_model_pmd() */
	int pmd_blk_valid, pmd_blk_mapped;
};

void np_vmas_free(struct np_vmas *m);

int np_vmas_read(int pid, struct np_vmas *m);

const struct np_vma *np_vma_find(const struct np_vmas *m,
				 unsigned long addr);

/*
 * Whether the caller's VMA at @addr is VM_PFNMAP (smaps "pf"): [vvar] is
 * up to 6.12, not on 7.x (lib/vdso/datastore.c: VM_MIXEDMAP).
 */
bool np_addr_is_pfnmap(unsigned long addr);

int np_nodemap_read(struct np_nodemap *nm);

int np_pfn_node(const struct np_nodemap *nm, unsigned long pfn);

void np_model_close(struct np_model *m);

/* Snapshot @pid's VMAs; pages are read at np_model_page(). 0 or -errno. */
int np_model_open(struct np_model *m, int pid);

__u64 np_model_pm(struct np_model *m, unsigned long addr);

__u64 np_model_kpf(struct np_model *m, unsigned long pfn);

/*
 * PMD-mapped THP: the aligned block lies in one VMA and its entries map
 * one aligned, contiguous THP. (A THP split to PTEs and then re-merged
 * into one VMA would look the same; the tests never build that.)
 */
int np_model_pmd(struct np_model *m, const struct np_vma *v,
		 unsigned long addr);

/* The expected answers for @addr of the model's process. */
void np_model_page(struct np_model *m, unsigned long addr,
		   struct np_page *pg);

const char *np_page_str(const struct np_page *pg, char *buf,
			size_t size);

/* ---- Comparisons: each returns the number of mismatches ------------ */

/* 1 if all @len bytes at @p are @b (a fill nobody overwrote). */
int np_all_bytes(const void *p, size_t len, unsigned char b);

/* One target process, one open device, as the checks below use them. */
struct np_ctx {
	int fd;
	int pid;		/* 0: the caller */
	int new_kernel;		/* np_kernel_is_new() */
	__u32 nr_nodes;		/* INFO's nr_node_ids */
	long psz;
	int logged;		/* mismatch lines printed */
};

#define np_log(c, fmt, ...)						\
	do {								\
		if ((c)->logged++ < NP_LOG_MAX)				\
			fprintf(stderr, "# " fmt "\n", ##__VA_ARGS__);	\
	} while (0)

/* Start one check's mismatch lines; end it with np_log_end(). */
void np_log_start(struct np_ctx *c);

int np_log_end(struct np_ctx *c, const char *what, int bad);

int np_cmp_status(struct np_ctx *c, const char *what,
		  const __u64 *addrs, const int *exp,
		  const __s32 *got, size_t n,
		  const struct np_page *pg);

/* Node totals and nr_unplaced against the status array they summarise. */
int np_check_totals(struct np_ctx *c, const char *what,
		    const struct numaplace_query *q,
		    const __s32 *status, size_t n,
		    const __u64 *node_pages);

/*
 * Runs of one range-mode call: they start at @start, follow each other
 * without gaps, are non-empty, cover exactly q->done pages, neighbours
 * differ in node or kind, and each page's run node is its status. The
 * kind of every page goes to @kinds (may be NULL).
 */
int np_check_runs(struct np_ctx *c, const char *what,
		  const struct numaplace_query *q,
		  const struct numaplace_run *runs, __u64 start,
		  const __s32 *status, __u32 *kinds);

/* Run kinds against what the model saw (see NUMAPLACE_KIND_*). */
int np_check_kinds(struct np_ctx *c, const char *what,
		   const __u64 *addrs, const struct np_page *pg,
		   const __u32 *kinds, const __s32 *status,
		   size_t n);

/* The expected status of the module's mode @flags for the model's page. */
int np_expect(const struct np_ctx *c, const struct np_page *pg,
	      const int *sys, __u32 flags);

/*
 * Array mode on @addrs (any order, duplicates, offsets) in both modes
 * against the model and the syscall. @pg: the model's pages for @addrs,
 * @sys: the syscall's answers.
 */
int np_check_array_modes(struct np_ctx *c, const char *label,
			 const __u64 *addrs, size_t n,
			 const struct np_page *pg,
			 const int *sys);

/* The model and the syscall for @addrs of c->pid; 0 or -errno. */
int np_oracles(struct np_ctx *c, const __u64 *addrs, size_t n,
	       struct np_page *pg, int *sys);

/* The running kernel's syscall against the model's column for it. */
int np_check_model(struct np_ctx *c, const char *label,
		   const __u64 *addrs, size_t n,
		   const struct np_page *pg, const int *sys);

/* Every check of one set of addresses (array mode only). */
int np_check_addrs(struct np_ctx *c, const char *label,
		   const __u64 *addrs, size_t n);

/*
 * Every check of the pages of [base, base + npages * psz) of c->pid:
 * the syscall against the model; range mode (runs, status, totals, run
 * kinds) and array mode (each page's address plus an offset) in the
 * default mode against the model's 6.12 answers and in AS_SYSCALL mode
 * against the syscall. The default status goes to @dflt if not NULL.
 */
int np_check_range(struct np_ctx *c, const char *label,
		   unsigned long base, size_t npages,
		   __s32 *dflt);

/*
 * Range mode with a runs buffer of @cap entries, resumed from start +
 * done * psz until the range is answered: the runs joined must give
 * @exp, every call must make progress and its totals must count what it
 * answered.
 */
int np_check_resume(struct np_ctx *c, const char *label,
		    unsigned long base, size_t npages,
		    __u32 cap, __u32 flags, const __s32 *exp);

/* Fill @c for the caller's device and @pid. 0 or -errno. */
int np_ctx_init(struct np_ctx *c, int fd, int pid);

/*
 * ---- An ioctl struct's sizes and reserved fields (np_size.c) ----------
 *
 * For query_abi.c and migrate_abi.c. Every struct of the ABI starts with
 * its __u32 size, read as clone3's:
 * shorter than VER0 is -EINVAL; VER0 is answered with nothing written
 * past it; longer with a zero tail is answered and told the module's own
 * size, the tail left zero; a non-zero byte in the tail (every @stride
 * bytes from the module's size on) is -E2BIG; over a page is -E2BIG
 * whatever the tail, a page of zero tail is answered. np_size_next()
 * sets each case up in turn in z->buf (zeroed, the size set): the test
 * fills its request in, calls, and counts np_size_check()'s mismatches.
 */
#define NP_SIZE_SHORTS	7

enum np_size_kind {
	NP_SIZE_SHORT, NP_SIZE_VER0, NP_SIZE_LONG, NP_SIZE_TAIL,
	NP_SIZE_OVER_PAGE, NP_SIZE_PAGE,
};

struct np_size {
	char *buf;		/* the struct; cap bytes */
	__u32 size;		/* the case's size field */
	int want;		/* its answer: 0, -EINVAL or -E2BIG */
	char what[64];		/* the case, for messages */
	/* private: np_size_next()'s */
	const char *name;
	enum np_size_kind kind;
	size_t known, ver0, psz, len, cap, stride, nr_tail, at, i;
	__u32 shorts[NP_SIZE_SHORTS];
};

/* Start @z for a struct of @known bytes, @ver0 published. 0 or -errno. */
int np_size_start(struct np_size *z, size_t known, size_t ver0,
		  size_t stride);
/* Set the next case up in z->buf: false after the last. */
bool np_size_next(struct np_size *z);
/* The call's answer @ret to the case: the number of mismatches (logged). */
int np_size_check(const struct np_size *z, int ret);
void np_size_end(struct np_size *z);

/* A field of an ioctl struct, and a value to set it to. */
struct np_field {
	const char *name;
	size_t off, size;	/* size: 4 or 8 */
	__u64 val;
};

/* @sz, a field's size, where it is 4 or 8; else the build fails. */
#define NP_SIZE_4_OR_8(sz)						\
	((sz) + 0 * sizeof(char[((sz) == 4 || (sz) == 8) ? 1 : -1]))

#define NP_FIELD(type, field, v)					\
	{ #field, offsetof(type, field),				\
	  NP_SIZE_4_OR_8(sizeof(((type *)0)->field)), v }

/*
 * @ok (@len bytes), a request ioctl @cmd answers, sent once per field of
 * @f[0..@nr) with that field alone set to its value (a reserved field):
 * each must be refused -EINVAL. The number that are not (logged), or
 * -ENOMEM.
 */
int np_fields_refused(int fd, unsigned long cmd, const void *ok, size_t len,
		      const struct np_field *f, size_t nr);

/* ---- NUMAPLACE_IOC_MIGRATE helpers (migrate.c, migrate_integrity.c) -- */

#define NP_MIG_ENGINE_FLAGS	(NUMAPLACE_MIGRATE_ENGINE_KERNEL |	\
				 NUMAPLACE_MIGRATE_ENGINE_VMA |		\
				 NUMAPLACE_MIGRATE_ENGINE_BATCH |	\
				 NUMAPLACE_MIGRATE_ENGINE_PT)
/* MPOL_MF_MOVE and MPOL_MF_MOVE_ALL of move_pages(2). */
#define NP_MF_MOVE		(1 << 1)
#define NP_MF_MOVE_ALL		(1 << 2)

/*
 * A migration fixture's tests run once per engine: the variant's flags
 * go into every MIGRATE call, and its feature is the INFO bit the engine
 * needs (the setup skips where it is missing; 0: the module's default
 * choice, always there). NP_ENGINE_VARIANTS(f) gives fixture f the four;
 * a fixture that runs on fewer names NP_ENGINE_VARIANT(f, engine) for
 * each, after NP_ENGINE_FIXTURE_VARIANT(f).
 */
#define NP_ENGINE_FLAGS_default		0
#define NP_ENGINE_FEATURE_default	0
#define NP_ENGINE_FLAGS_kernel		NUMAPLACE_MIGRATE_ENGINE_KERNEL
#define NP_ENGINE_FEATURE_kernel	NUMAPLACE_FEAT_MIGRATE_KERNEL
#define NP_ENGINE_FLAGS_vma		NUMAPLACE_MIGRATE_ENGINE_VMA
#define NP_ENGINE_FEATURE_vma		NUMAPLACE_FEAT_MIGRATE_VMA
#define NP_ENGINE_FLAGS_batch		NUMAPLACE_MIGRATE_ENGINE_BATCH
#define NP_ENGINE_FEATURE_batch		NUMAPLACE_FEAT_MIGRATE_BATCH
#define NP_ENGINE_FLAGS_pt		NUMAPLACE_MIGRATE_ENGINE_PT
#define NP_ENGINE_FEATURE_pt		NUMAPLACE_FEAT_MIGRATE_PT

#define NP_ENGINE_FIXTURE_VARIANT(fixture)				\
	FIXTURE_VARIANT(fixture)					\
	{								\
		__u32 flags;						\
		__u64 feature;						\
	}

#define NP_ENGINE_VARIANT(fixture, engine)				\
	FIXTURE_VARIANT_ADD(fixture, engine)				\
	{								\
		.flags = NP_ENGINE_FLAGS_##engine,			\
		.feature = NP_ENGINE_FEATURE_##engine,			\
	}

#define NP_ENGINE_VARIANTS(fixture)					\
	NP_ENGINE_FIXTURE_VARIANT(fixture);				\
	NP_ENGINE_VARIANT(fixture, default);				\
	NP_ENGINE_VARIANT(fixture, kernel);				\
	NP_ENGINE_VARIANT(fixture, vma);				\
	NP_ENGINE_VARIANT(fixture, batch);				\
	NP_ENGINE_VARIANT(fixture, pt)

void np_migrate_init(struct numaplace_migrate *m, int pid,
		     __u32 flags, __u32 policy);

int np_migrate(int fd, struct numaplace_migrate *m);

/* Range mode, every page of [start, start + len) to @node. 0 or -errno. */
int np_migrate_node(int fd, int pid, __u32 flags, __u64 start,
		    __u64 len, int node, __s32 *status,
		    struct numaplace_migrate *m);

/* The NUMAPLACE_ENGINE_* bits whose INFO feature is set. */
__u32 np_engines_available(const struct numaplace_info *info);

/*
 * The engine that moves private anonymous 4 KiB pages for a call with
 * @flags: the one forced, else the batched engine, else migrate_vma's.
 */
__u32 np_vma_engine(__u32 flags, __u32 avail);

/* The NUMAPLACE_ENGINE_* bits a call with @flags may report. */
__u32 np_engines_allowed(const struct numaplace_info *info,
			 __u32 flags);

/*
 * Stamp word @k of page @i at generation @g: the integrity tests write it
 * to every word and check every byte against it.
 */
__u64 np_stamp_word(size_t i, __u64 g, size_t k);

/*
 * Where each page is (move_pages(2) query of @pid); the count of pages
 * not on @node, the first in *first.
 */
long np_pages_not_on(int pid, const char *buf, size_t n,
		     int node, long *first, int *where);

/*
 * The negative entries of @status[@n] by NUMAPLACE_FAIL_* slot, added to
 * @fail[NUMAPLACE_FAIL_MAX]; their number.
 */
__u64 np_count_fails(const __s32 *status, size_t n, __u64 *fail);

/*
 * A MIGRATE call's counters against its @n statuses: nr_failed_pages is
 * the number of negative statuses and nr_failed[] splits them by reason;
 * in range mode (@range) moved + in place + failed is every page handled.
 * engines names a moving engine (within @allowed) exactly when pages
 * moved. Returns the number of mismatches.
 */
int np_check_mig_counters(struct np_ctx *c, const char *what,
			  const struct numaplace_migrate *m,
			  const __s32 *status, size_t n,
			  int range, __u32 allowed);

/* set_mempolicy(2) with one node (or none): 0 or -errno. */
long np_mempolicy(int mode, int node);

/* CLOCK_MONOTONIC in milliseconds. */
long np_mono_ms(void);

/*
 * fork() with a pipe from the child to its parent: *@fd is the pipe's
 * write end in the child (fork() answered 0), its read end in the parent
 * (the child's pid); the other end is closed. -1 on failure.
 */
pid_t np_fork_pipe(int *fd);

/*
 * A child that dies with its parent (PR_SET_PDEATHSIG), runs @fn(@arg)
 * when @fn is set (non-zero: it exits before telling), tells its parent
 * through a pipe that it is ready and waits to be killed. Its pid once
 * it told, or -1 (a child that did not tell is killed and reaped).
 */
pid_t np_fork_ready(int (*fn)(void *arg), void *arg);

/*
 * A child that reads every page of [@p, @p + @len) (so that it maps
 * them too: shared, or copy-on-write) and waits to be killed. Its pid,
 * or -1.
 */
pid_t np_fork_sharer(char *p, size_t len);

/*
 * A thread of the caller's that waits until np_idle_stop(): its thread id
 * (t->tid) names the caller's mm. np_idle_start(): 0 or -errno, t->tid
 * set.
 */
struct np_idle {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	int stop;
};

int np_idle_start(struct np_idle *t);
void np_idle_stop(struct np_idle *t);

/*
 * The kinds of bad user pointer the bad-pointer tests pass in every
 * buffer (np_bad_names[] names them).
 */
enum np_bad {
	NP_BAD_NULL, NP_BAD_KERNEL, NP_BAD_UNMAPPED, NP_BAD_PROTNONE,
	NP_BAD_RDONLY, NP_BAD_MAX
};

extern const char *const np_bad_names[NP_BAD_MAX];

/*
 * The selected word of a THP "enabled" file ("always [inherit] madvise
 * never") into @out: 0; -errno when the file cannot be read; -EINVAL
 * when it names none or it does not fit (@out is "" on any error).
 */
int np_thp_setting(const char *path, char *out, size_t len);

/*
 * A fixture's first steps: open the device into *@fd and read its INFO.
 * 0; 1 with the reason to skip in @why (no module); or -errno (@why says
 * which step).
 */
int np_open_info(int *fd, struct numaplace_info *info, char *why,
		 size_t len);

/*
 * In a fixture's setup or a test, a call @open(..., why, len) that
 * answers as np_open_info() (np_query_open(), np_mig_open()): 0, or -1
 * after a SKIP (it answered 1) or a failed step (it answered -errno; @why
 * says which).
 */
#define NP_OPEN_SETUP(open, ...)					\
	({								\
		char _why[160] = "";						\
		int _ret = open(__VA_ARGS__, _why, sizeof(_why));	\
									\
		if (_ret > 0)						\
			SKIP(, "%s", _why);				\
		else							\
			ASSERT_EQ(0, _ret) TH_LOG("%s", _why);		\
		_ret ? -1 : 0;						\
	})

/*
 * np_ctx_init() for @fd and the caller itself, NUMA balancing off (its
 * scanner would make PROT_NONE hints at random moments). 0 or -errno
 * (said in @why).
 */
int np_ctx_ready(struct np_ctx *c, int fd, char *why, size_t len);

/*
 * A guarded buffer: @nb bytes ending exactly at a PROT_NONE page, for
 * arrays that end on an unmapped page. Returns the start of the bytes, or
 * NULL; the whole mapping goes to *@map, *@maplen when they are set.
 */
void *np_guarded(size_t nb, char **map, size_t *maplen);

/*
 * A pointer of kind @k to @len bytes (at most 4 pages) holding @src
 * (read-only: a copy); NULL for NP_BAD_NULL or when it cannot be made.
 */
void *np_bad_pointer(enum np_bad k, const void *src, size_t len);

/*
 * nr_isolated_anon and nr_isolated_file of /proc/vmstat, after folding
 * the per-CPU deltas in (vm.stat_refresh, root). 0 or -errno.
 */
int np_isolated(long *anon, long *file);

/*
 * Poll np_isolated() every 50 ms, for @ms at most, until both counters
 * are at or below @anon0 and @file0 (the baseline: other work on the
 * machine may isolate pages meanwhile, and per-CPU deltas take a moment).
 * The last values read are left in @anon and @file. 0 or -errno.
 */
int np_isolated_settle(long anon0, long file0, long ms,
		       long *anon, long *file);

/* Field @key of /proc/meminfo in kB, or -1. */
long np_meminfo_kb(const char *key);

/*
 * ---- cgroup v2 memory controller ---------------------------------------
 *
 * The guest's /init mounts cgroup2 on NP_CG_ROOT. A test's memcg is a
 * child of the root with the memory controller on; its files are read
 * and written by name.
 */
#define NP_CG_ROOT	"/sys/fs/cgroup"

/* @file of cgroup directory @cg as a path in @buf. */
const char *np_cg_file(char *buf, size_t len, const char *cg,
		       const char *file);

/*
 * Make memcg NP_CG_ROOT/@name (its path in @cg, @len bytes), the memory
 * controller on. 0, -ENOENT (no cgroup2 or no memory controller) or
 * -errno.
 */
int np_memcg_make(const char *name, char *cg, size_t len);

int np_memcg_set(const char *cg, const char *file,
		 const char *val);

/* A one-number file of @cg (memory.current, memory.peak), or -1. */
long np_memcg_long(const char *cg, const char *file);

/* Key @key of a flat-keyed file of @cg (memory.events, memory.stat). */
long np_memcg_key(const char *cg, const char *file,
		  const char *key);

/* Move the calling process into @cg. 0 or -errno. */
int np_memcg_enter(const char *cg);

/*
 * Run @fn(@cg, @arg) in a child that is to enter memcg @cg (made here as
 * NP_CG_ROOT/@name) and wait for it. Return: its wait status, -ENOENT (no
 * memory controller) or -errno. The caller removes @cg.
 */
int np_memcg_fork(const char *name, char *cg, size_t len,
		  int (*fn)(const char *cg, void *arg), void *arg);

/* Remove @cg once its processes are gone (a few tries: they exit late). */
int np_memcg_remove(const char *cg);

/*
 * A call made in a full memcg: the reliability matrix's "memory.max just
 * above the working set", at its edge. np_memcg_tight() makes memcg
 * NP_CG_ROOT/@name and runs @fn(@cg, @arg, @t) in a child. The child
 * faults what it will touch, enters @cg (np_memcg_enter()) and calls
 * np_memcg_tight_begin(@t): when that returns, the test has drained the
 * memcg's per-CPU precharge (memory.high 0, then "max") and set its
 * memory.max to what it holds, so any charge fails. The child makes its
 * call, then np_memcg_tight_end(@t) returns once memory.max is "max"
 * again. A fault in the full memcg would OOM-kill the child: it must
 * touch nothing new between the two. Return: the child's wait status,
 * -ENOENT (no memory controller) or -errno; what the test saw is in
 * *@seen. The caller removes @cg.
 */
struct np_memcg_tight {
	volatile int step;	/* the two processes' handshake */
	long max;		/* memory.max for the call, bytes */
	long oom_kill;		/* memory.events oom_kill after it */
	long nr_max_events;	/* memory.events max: how many while full */
};

int np_memcg_tight(const char *name, char *cg, size_t len,
		   int (*fn)(const char *cg, void *arg,
			     struct np_memcg_tight *t),
		   void *arg, struct np_memcg_tight *seen);
void np_memcg_tight_begin(struct np_memcg_tight *t);
void np_memcg_tight_end(struct np_memcg_tight *t);

/*
 * ---- Timeouts on slow kernels ------------------------------------------
 *
 * A test's own time bounds (a call that must end within N ms) are
 * multiplied by NP_TEST_TIMEOUT_SCALE (an integer, 1 to
 * NP_TIMEOUT_SCALE_MAX): the debug kernel (KASAN, lockdep, SLUB
 * debugging) under TCG runs the same tests several times slower
 * (tools/vm/check sets it for that kernel).
 */
#define NP_TIMEOUT_SCALE_MAX	20

/* NP_TEST_TIMEOUT_SCALE, or 1. */
unsigned int np_time_scale(void);

/*
 * The harness's timeout of a test bounds a hang; it is no speed check
 * (the tests' own bounds are). The harness fixes it when it registers
 * the test, so it cannot follow NP_TEST_TIMEOUT_SCALE: every test's
 * timeout is NP_HANG_SLACK times the time it needs on a stock kernel's
 * guest, because the slowest host we run it on, a debug kernel's TCG
 * guest on a busy 2-core machine, took up to 5 times as long
 * (Documentation/testing.md). A hang costs that much longer to see.
 */
#define NP_HANG_SLACK		5
#define NP_TIMEOUT(s)		((s) * NP_HANG_SLACK)
/* TEST_F() with the slack on the harness's default timeout. */
#define NP_TEST_F(fixture, test)					\
	TEST_F_TIMEOUT(fixture, test, NP_TIMEOUT(TEST_TIMEOUT_DEFAULT))

/*
 * Save what the tests may change: the knobs np_test.c lists (NUMA
 * balancing, THP and mTHP modes, khugepaged and KSM, each node's huge
 * page pools), which test modules and whether numaplace.ko are loaded;
 * then turn NUMA balancing off for the program's run (tests compare
 * placements). At the program's exit (its main process only) every knob
 * that differs is written back, a test module the program loaded is
 * unloaded and a module that was loaded is loaded again: a test host's
 * state outlives no program, even one whose test failed half-way.
 */
void np_state_save(void);

/*
 * Every test file ends with this instead of TEST_HARNESS_MAIN: the
 * harness's own main(), after a constructor that saves the state above
 * and makes stdout line-buffered (a test runs in a child that
 * _exit()s: what its body printed to a piped stdout, ksft_print_msg(),
 * would die in the buffer).
 */
#define NP_HARNESS_MAIN							\
	static void __attribute__((constructor)) np_harness_init(void)	\
	{								\
		setvbuf(stdout, NULL, _IOLBF, 0);			\
		np_state_save();					\
	}								\
	TEST_HARNESS_MAIN

/*
 * The 6.1 harness runs the body after a SKIP() in FIXTURE_SETUP(): every
 * body that a setup can skip starts with this.
 */
#define NP_SKIPPED()							\
	do {								\
		if (_metadata->skip)					\
			return;						\
	} while (0)

/*
 * The end of a test whose fork child checks every page when told to
 * (migrate_integrity.c, soak.c): set @verify (an atomic_int *), reap
 * @kid (a pid_t lvalue, -1 after), expect a clean exit and @child_bad
 * (an atomic_long *, the pages the child saw wrong) 0.
 */
#define NP_KID_VERIFY(kid, verify, child_bad)				\
	do {								\
		int status_;						\
									\
		atomic_store(verify, 1);				\
		ASSERT_EQ(kid, waitpid(kid, &status_, 0));		\
		kid = -1;						\
		EXPECT_TRUE(WIFEXITED(status_) && !WEXITSTATUS(status_)) \
			TH_LOG("child status %#x", status_);		\
		EXPECT_EQ(0, atomic_load(child_bad));			\
	} while (0)

/* ---- np_genl_util.c: the module's lifetime, capabilities, memory ------ */

/*
 * Where the tests look for a kernel module NAME (numaplace, and the test
 * modules np_fake_dma and np_mn_rec of selftests/kmod), first found wins:
 * $NP_KO_DIR, the test program's own directory (an installed collection
 * can carry the test modules), /usr/lib/numaplace (where tools/vm/run
 * puts them in the guest), then the running kernel's
 * /lib/modules/RELEASE/updates/dkms (numaplace-dkms), updates (make
 * install) and extra; NAME.ko, or NAME.ko.xz / NAME.ko.zst (DKMS
 * compresses as the kernel's own modules are), loaded with
 * MODULE_INIT_COMPRESSED_FILE.
 */
#define NP_KO_WHERE	"$NP_KO_DIR, the test's directory, /usr/lib/numaplace, " \
			"/lib/modules/$(uname -r)/{updates/dkms,updates,extra}"

/* Open NAME's module file read-only: an fd, or -ENOENT if none is found. */
int np_ko_open(const char *name);

/* 1 when np_ko_open(@name) finds a file, else 0. */
int np_ko_found(const char *name);

/* finit_module(2) of @modfd (from np_ko_open()) with @params. 0 or -errno. */
int np_ko_load(int modfd, const char *params);

/*
 * The test module np_mn_rec (selftests/kmod/np_mn_rec.c), a secondary
 * MMU: load it (once; 0, -ENOENT when not installed, or -errno), unload
 * it (0 or -1 with errno).
 */
int np_mr_load(void);
int np_mr_unload(void);

/*
 * np_mn_rec's device and read() layout: a header, then the records; a
 * clear_young() is recorded as event NP_MR_CLEAR_YOUNG. A write() of two
 * __u64 (start, end) sets the range its clear_young() answers young for.
 */
#define NP_MR_DEV		"/dev/np_mn_rec"
#define NP_MR_CLEAR_YOUNG	0xc1ea

struct np_mr_head {
	__u32 nr, lost;
};

struct np_mr_range {
	__u64 start, end;
	__u32 event, blockable;
};

/* 1 when numaplace.ko is loaded, else 0. */
int np_module_loaded(void);

/* finit_module(2) of the open module file @modfd. 0 or -errno. */
int np_module_load_fd(int modfd);

/* Load numaplace.ko (np_ko_open()). 0 or -errno. */
int np_module_load(void);

/* delete_module(2), O_NONBLOCK: -EWOULDBLOCK while anything holds it. */
int np_module_unload(void);

/* Drop capability @cap from the effective and permitted sets. 0 or -errno. */
int np_drop_cap(int cap);

/*
 * Write pages [first, first + n) of @p with memory bound to @node. Never
 * with zeros: 6.12 maps the zero-filled pages of a THP it splits to the
 * shared zero page. 0 or -errno.
 */
int np_touch_on(char *p, size_t first, size_t n, int node);

/*
 * Unreclaimable slab in kB once RCU-deferred frees, caches and (on a
 * KASAN kernel, whose quarantine counts as slab) every slab cache are
 * settled and shrunk.
 */
long np_slab_settled_kb(void);

/*
 * The end of leak batch @batch that started at @before kB: *@grew gets
 * the growth (logged); 1 when it is under @slack_kb (no leak: stop).
 */
int np_slab_batch_end(int batch, long before, long *grew, long slack_kb);

/* ---- np_watch_util.c: placement watches and their records ------------ */

/* The state a watch's stream of records has reached. */
struct np_wt_stream {
	__u64 cookie;
	__u64 seq;			/* last number seen */
	__u64 totals[NUMAPLACE_WATCH_NODES + 1]; /* per node, then unplaced */
	unsigned int nr_nodes;
	__u64 nr_pages;
	int nr_recs, nr_overflow, gone, eof;
	struct numaplace_watch_record last;
};

/*
 * Open a watch (libnumaplace's numaplace_watch_open(), close-on-exec) and
 * start its stream from the totals the ioctl gives. The fd or -errno.
 */
int np_wt_open(int pid, const void *start, size_t len, __u64 cookie,
	       __u32 flags, unsigned int nr_nodes, struct np_wt_stream *s);

/* QUERY's per-node totals of the range, then its unplaced pages. */
int np_wt_query(int dev, int pid, const void *start, size_t len,
		unsigned int nr_nodes, __u64 *totals);

/* One record against the stream: 0, or the number of faults (logged). */
int np_wt_check_rec(struct np_wt_stream *s,
		    const struct numaplace_watch_record *r);

/* The stream's totals equal @want (per node, then unplaced). */
int np_wt_at(const struct np_wt_stream *s, const __u64 *want);

/*
 * Read records until the stream reaches @want (NULL: until GONE), or
 * @ms pass. Returns the number of inconsistent records.
 */
int np_wt_follow(int fd, struct np_wt_stream *s, const __u64 *want, long ms);

/* Read every record until none comes for @quiet_ms. */
int np_wt_drain(int fd, struct np_wt_stream *s, long quiet_ms);

/* Nothing readable for @ms. */
int np_wt_quiet(int fd, long ms);

/* Move @n pages from @start to @node with move_pages(2). 0 or -errno. */
long np_wt_move_pages(char *start, int n, int node);

/* Log where the stream is against @want. */
void np_wt_dump(const char *what, const struct np_wt_stream *s,
		const __u64 *want);

/* What every watch fixture holds: the device and a written buffer. */
struct np_wt_fix {
	int fd;
	struct numaplace_info info;
	char *buf;			/* MAP_FAILED when unmapped */
	size_t len;
};

/*
 * Open the device, check for watches and memory on nodes 0 and 1, turn
 * NUMA balancing off, map and write @pages pages. 0, -ENODEV (no device),
 * -EOPNOTSUPP (no NUMAPLACE_FEAT_WATCH), -EXDEV (no two nodes) or -errno.
 */
int np_wt_setup(struct np_wt_fix *f, size_t pages);
void np_wt_teardown(struct np_wt_fix *f);

/* FIXTURE_SETUP()'s body for a fixture whose self->w is a np_wt_fix. */
#define NP_WT_SETUP(pages)						\
	do {								\
		int __ret = np_wt_setup(&self->w, pages);		\
									\
		if (__ret == -ENODEV)					\
			SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)"); \
		if (__ret == -EOPNOTSUPP)				\
			SKIP(return, "no NUMAPLACE_FEAT_WATCH");	\
		if (__ret == -EXDEV)					\
			SKIP(return, "needs memory on nodes 0 and 1");	\
		ASSERT_EQ(0, __ret);					\
	} while (0)

/* A watch fixture @fx: self->w set up with @pages pages, torn down. */
#define NP_WT_FIXTURE(fx, pages)					\
	FIXTURE(fx) {							\
		struct np_wt_fix w;					\
	};								\
	FIXTURE_SETUP(fx) { NP_WT_SETUP(pages); }			\
	FIXTURE_TEARDOWN(fx) { np_wt_teardown(&self->w); }

/*
 * ---- Page-level helpers of the QUERY tests (np_query_util.c) ----------
 *
 * query.c (page kinds), query_random.c, query_abi.c, query_walk.c,
 * query_race*.c and target.c; PMD-aligned memory is migrate_lay.c's
 * np_pmd_map().
 */

/* Flags newer than some libc headers (values of the uapi). */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB		0x40000
#endif

/* Whole user address space of 4-level paging (47 bits). */
#define NP_USER_TOP	(1ULL << 47)

/*
 * The device, QUERY and the caller's np_ctx; NUMA balancing off. 0; 1
 * with the reason to skip in @why; or -errno with the step that failed.
 */
int np_query_open(int *fd, struct np_ctx *c, struct numaplace_info *info,
		  char *why, size_t len);

/* np_query_open() in a fixture's setup: 0, or -1 after a SKIP or failure. */
#define NP_QUERY_SETUP(fd, c, info)					\
	NP_OPEN_SETUP(np_query_open, fd, c, info)

/*
 * A fixture @name with the device open for QUERY (fd, c, info); its setup
 * sets the test file's static psz.
 */
#define NP_QUERY_FIXTURE(name)						\
	FIXTURE(name)							\
	{								\
		int fd;							\
		struct np_ctx c;					\
		struct numaplace_info info;				\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		if (!NP_QUERY_SETUP(&self->fd, &self->c, &self->info))	\
			psz = self->c.psz;				\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		if (self->fd >= 0)					\
			close(self->fd);				\
	}

/* A first node with memory other than @node, or -1. */
int np_other_node(const struct numaplace_info *info, int node);

/* Write (a byte of) page @i of @base; read one. */
void np_write_page(char *base, size_t i);
void np_read_page(char *base, size_t i);

/* Write @n pages of @base from page @first by @step. */
void np_write_pages(char *base, size_t first, size_t n, size_t step);

/* @n pages by np_pmd_map() (no THP), each written; NULL on failure. */
char *np_written_pages(size_t n);

/* @n 2 MiB blocks by np_pmd_map() for THPs, all written; NULL on failure. */
char *np_written_thps(size_t n);

/* The addresses of pages [0, n) of @base. */
void np_fill_addrs(__u64 *addrs, const char *base, size_t n);

/* The syscall's answer for one address of the caller. */
int np_sys_one(const void *addr);

/*
 * Every page of [start, start + n pages) of the caller is answered
 * @status in the default mode and its run kind has all of @kinds.
 * Returns the number of pages that are not.
 */
int np_expect_kind(int fd, unsigned long start, size_t n, __u32 kinds,
		   int status);

/* The model's NPW_* for one address of the caller, or 0. */
unsigned int np_what(const void *addr);

/* 0 when THP is "never" in this kernel: only then may no THP form. */
int np_thp_on(void);

/* A PMD-mapped THP at @p (not NULL), unless THP is off. */
#define NP_NEED_PMD(p)							\
	do {								\
		ASSERT_NE(NULL, p);					\
		if (np_what(p) & NPW_PMD)				\
			break;						\
		if (!np_thp_on())					\
			SKIP(return, "THP is disabled");		\
		ASSERT_TRUE(0) TH_LOG("no PMD-mapped THP at %p", p);	\
	} while (0)

/* Move @n pages of @base from page @first by @step to @node: pages left. */
int np_move(char *base, size_t first, size_t n, size_t step, int node);

/* An unlinked tmpfs file under /tmp of @pages pages; fd or -1. */
int np_tmpfile(size_t pages);

/*
 * @more 2 MiB huge pages more in node @node's pool, whose file goes to
 * @path (@len bytes) and whose size before to *@orig (write it back
 * there when done). 0, -ENOENT (no pool) or -ENOMEM (the pool did not
 * grow: no free memory).
 */
int np_hp_grow(int node, long more, char *path, size_t len, long *orig);

/* Write 64 bytes at page @i of file @fd. 0 or -1. */
int np_pwrite_page(int fd, size_t i);

/*
 * A mixed region of many runs: anon written/untouched/zero, pages moved
 * to @other (if >= 0), PROT_NONE, a hole, and a PMD THP. Returns its
 * start; its pages in *npages.
 */
char *np_mixed_region(size_t *npages, int other);

#endif /* NP_TEST_H */
