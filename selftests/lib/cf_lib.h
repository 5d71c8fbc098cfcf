/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The conformance tests' engine (cf_lib.c, in the tests' library): the
 * machine, one move_pages(2) case and its two results. Only macros here
 * may use a test's _metadata.
 */
#ifndef CF_LIB_H
#define CF_LIB_H

#include <limits.h>
#include <sys/types.h>

#include "numaplace.h"
#include "np_test.h"
#include "migrate_lib.h"


#define CF_NOBODY	65534
#define CF_PMD		(2UL << 20)
/* status[] slots past the end that must stay untouched. */
#define CF_TAIL		4
/* status[] room past the compared entries: nothing may write there. */
#define CF_ROOM		1024
#define CF_SENTINEL	((int)0x5a5a5a5a)
/* Mismatch lines printed per comparison before only counting. */
#define CF_LOG_MAX	8
#define CF_MAX_MAPS	8
#define CF_MAX_KIDS	4
#define CF_MAX_WANT	4
/* Entries before the guard page in the huge-count case (not a multiple
 * of the syscall's 16-entry chunk).
 */
#define CF_GUARD_ENTRIES 40
/* KSM must merge within this (ksmd scans every 10 ms when asked). */
#define CF_KSM_WAIT_MS	20000
#define CF_KSM_PAGES	20
/* migrate_pages03 moves KSM pages back and forth this many times. */
#define CF_KSM_LOOPS	6
#define CF_HP_PATH	"/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages"
#define CF_HP_PER_NODE	2
/* x86-64 user space ends below this (47-bit addresses). */
#define CF_USER_END	(1UL << 47)

#ifndef MPOL_MF_STRICT
#define MPOL_MF_STRICT	(1 << 0)
#endif

/* The 6.1 harness runs the body after a SKIP() in FIXTURE_SETUP(). */
#define CF_SKIPPED()	NP_SKIPPED()

/*
 * The documented differences (Documentation/abi.md) an entry may show,
 * cf_case.thp_second[]:
 * @CF_ACCEPT_BUSY: the syscall's -EBUSY for a page of a THP it moved whole;
 *	numaplace answers the node
 * @CF_ACCEPT_HUGETLB: the same for a hugetlb page, or 6.1's -EACCES for a
 *	hugetlb tail address
 * @CF_ACCEPT_CONTESTED: a folio the entries name with several targets: the
 *	syscall moves it at each change, numaplace once; numaplace's status
 *	must be true (its node where that is its target, or -EBUSY, or the
 *	syscall's errno), where the page ends up is not compared
 */
enum cf_accept {
	CF_ACCEPT_NONE,
	CF_ACCEPT_BUSY,
	CF_ACCEPT_HUGETLB,
	CF_ACCEPT_CONTESTED,
};

/* What the tests know of the machine. */
struct cf_env {
	struct numaplace_info info;
	long psz;
	int a, b;		/* two nodes with memory; b -1 if one */
	int memless;		/* an online node without memory, or -1 */
	int offline;		/* a node id < nr_node_ids not online, or -1 */
	int root;
};

/* One move_pages(2) call and the memory it is about. */
struct cf_case {
	const char *what;
	int pid;
	unsigned long count;
	void **pages;
	int *nodes;		/* NULL: a query */
	int flags;
	unsigned long nst;	/* status[] entries the call answers */
	uid_t as_uid;		/* != 0: called with this uid ... */
	int use_seteuid;	/* ... by seteuid() here (pages stay private) */
	int no_place;		/* the placement is not compared */
	int null_status;	/* status == NULL */
	/* Entries where a documented difference is accepted: enum cf_accept. */
	unsigned char *thp_second;
	int want_ret;		/* the syscall's return value LTP expects */
	int want_err;		/* its errno (0: success) */
	int nr_want;		/* status entries LTP expects */
	struct { unsigned long i; int st; } want[CF_MAX_WANT];
	struct { void *p; size_t len; } maps[CF_MAX_MAPS];
	int nr_maps;
	pid_t kids[CF_MAX_KIDS];
	int nr_kids;
	char *layout;		/* printed on a difference, when set */
	unsigned int *ent_page;	/* each entry's page in the layout, or NULL */
	void **pages_alloc;	/* what cf_arrays() allocated */
	int *nodes_alloc;
};

struct cf_result {
	long ret;
	int err;
	int *status;		/* nst + CF_ROOM, MAP_SHARED */
	int *place;		/* nst, after the call */
};

typedef int (*cf_build_fn)(struct cf_case *c, const struct cf_env *e,
			   long arg);


extern struct cf_env cf_env;

/*
 * The oracle is the kernel: glibc's own syscall(), taken from libc.so.6
 * itself (cf_sys_init()), so that no interposed syscall()
 * (libnumaplace-preload.so, or a libnumaplace.so that wrongly carried it)
 * can stand in for the kernel.
 */
typedef long (*cf_syscall_fn)(long number, ...);
extern cf_syscall_fn cf_sys;
int cf_sys_init(void);

/* cf_env from INFO of @fd, cf_sys; NUMA balancing off. 0 or -errno. */
int cf_env_init(int fd);

/* An anonymous mapping of @c (unmapped by cf_case_free()), or NULL. */
void *cf_map(struct cf_case *c, size_t len, int prot, int flags);
/* mbind(2) [p, p + len) to @node: 0 or -errno. */
long cf_mbind(void *p, size_t len, int node);
/*
 * @npages pages bound to @node (MAP_SHARED when @shared), THP-aligned
 * and THP-backed when @thp, written when @touch. NULL on failure.
 */
char *cf_pages_on(struct cf_case *c, size_t npages, int node, int shared,
		  int thp, int touch);
/* 1 when the 2 MiB at @p are one THP (AnonHugePages of its VMA). */
int cf_thp_backed(const void *p);
/* pages[] and nodes[] (nodes only when @move) for @n entries. */
int cf_arrays(struct cf_case *c, unsigned long n, int move);
/* Entries @first.. of pages[] are the pages of @p, every @step bytes. */
void cf_fill(struct cf_case *c, unsigned long first, unsigned long n,
	     char *p, size_t step, int node);
/* The syscall's status[@i] LTP expects. */
void cf_want(struct cf_case *c, unsigned long i, int st);
/* LTP expects the call to succeed, status[@i] @st: a build's 0. */
int cf_passes(struct cf_case *c, unsigned long i, int st);
/* LTP expects the call to fail with @err (-1, errno @err): a build's 0. */
int cf_fails(struct cf_case *c, int err);
/*
 * The call with @flags on @pid, a process with no memory to look at
 * (gone, a zombie): it fails with @err and leaves no placement to
 * compare. A build's 0.
 */
int cf_fails_on(struct cf_case *c, pid_t pid, int flags, int err);
/* A child of @c that touches [p, p + len) and waits to be killed. */
pid_t cf_sharer(struct cf_case *c, char *p, size_t len);
/*
 * A child of @c that becomes @uid (0: stays), dumpable or not, builds
 * @npages pages on @node and waits to be killed; *@base gets their
 * address. Its pid, or -1.
 */
pid_t cf_target(struct cf_case *c, uid_t uid, int dumpable, size_t npages,
		int node, char **base);
/* Kills and reaps @c's children, unmaps its memory, zeroes it. */
void cf_case_free(struct cf_case *c);

void cf_result_free(struct cf_result *r, unsigned long nst);
/* Run @c through the syscall (@lib 0) or the library. 0 or -errno. */
int cf_run(int lib, const struct cf_case *c, struct cf_result *r);
/* strerrorname_np(), "0" for 0. */
const char *cf_errname(int err);
/*
 * The syscall's answer and the library's, entry by entry. Returns the
 * number of differences; the accepted ones are counted in *@accepted.
 */
int cf_compare(const struct cf_case *c, const struct cf_result *s,
	       const struct cf_result *l, int *accepted);
/*
 * Build the case with @build, run it through the syscall, build it again
 * (a query: reuse it), run it through the library, compare. Returns the
 * number of differences, or -1 with *@skip set when the case cannot be
 * built here.
 */
int cf_check(const char *what, cf_build_fn build, long arg,
	     const char **skip);

#define CF_NEED_B(e)							\
	do {								\
		if ((e)->b < 0)						\
			return -EOPNOTSUPP;				\
	} while (0)

/* A fixture's setup: the device open in self->fd, cf_env filled in. */
#define CF_SETUP()							\
	do {								\
		self->fd = np_open();					\
		if (self->fd == -ENOENT)				\
			SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)"); \
		ASSERT_GE(self->fd, 0);					\
		ASSERT_EQ(0, cf_env_init(self->fd));			\
	} while (0)

#endif /* CF_LIB_H */
