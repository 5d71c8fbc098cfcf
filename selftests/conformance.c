// SPDX-License-Identifier: GPL-2.0
/*
 * Conformance: the situations of LTP's move_pages01..12 and
 * migrate_pages01..03, each run through the system call and through
 * libnumaplace, results compared field by field.
 *
 * move_pages(2): every case is built twice, identically; one copy goes to
 * cf_sys(SYS_move_pages), the other to numaplace_move_pages() (what
 * libnumaplace-preload.so calls for an unmodified program). Compared: the
 * return value, errno, every status[] entry (pre-filled with a sentinel,
 * with a few slots past the end, so that an entry written by one and not
 * the other shows) and, after the call, where every page is (asked of
 * the syscall). A query (nodes == NULL) changes nothing, so both run on
 * the same copy. The syscall's answer is also checked against what LTP
 * expects, so that a case that did not build its situation fails as a
 * test bug rather than passing as "equal".
 *
 * The one accepted difference (Documentation/abi.md): when a THP moves
 * whole, the syscall answers -EBUSY for the entry right after the one
 * that took it (the second 4 KiB of the THP); numaplace answers the node.
 * Anything else that differs fails the test with the input, the
 * syscall's answer and the library's.
 *
 * migrate_pages(2) moves every page of a process that is on the old
 * nodes: numaplace's counterpart is NUMAPLACE_IOC_MIGRATE in range mode,
 * over the runs of every VMA of the process that are on the old node
 * (cf_emulate_migrate_pages()). Final placement is compared; its
 * return value (pages not migrated) counts differently from MIGRATE's
 * nr_failed_pages (shared pages are skipped silently by the syscall) and
 * is only logged. Errors compare where both have the input: pid, another
 * user's process, an unreadable node array. Not comparable, checked each
 * against its own contract: a bad maxnode (MIGRATE has no mask size) and
 * a node that is offline or has no memory (the syscall says EINVAL,
 * MIGRATE answers as move_pages(2): ENODEV).
 *
 * The syscall is glibc's syscall() taken from libc.so.6 by dlsym(), so
 * that no interposed syscall() (libnumaplace-preload.so) can stand in for
 * the kernel.
 *
 * Beyond LTP: a THP moved naming every 4 KiB (the accepted case), another
 * process (root's, a nobody's, a non-dumpable one's), processes without an
 * mm (kthreadd, a zombie), [vvar] (VM_PFNMAP: cannot move), NULL arrays,
 * and a query over every kind of page.
 *
 * Not reproduced: move_pages12's race of move_pages against hugetlb
 * freeing (a crash regression; races are migrate_integrity.c's), a node
 * outside the cpuset (migrate.c), E2BIG (gone since 2.6.29: the huge
 * count case checks the EFAULT that replaced it, with the entries before
 * the unreadable one answered).
 */
#include <dlfcn.h>
#include <grp.h>
#include <limits.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "numaplace.h"
#include "np_test.h"
#include "kselftest_harness.h"

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
#define CF_SKIPPED()							\
	do {								\
		if (_metadata->skip)					\
			return;						\
	} while (0)

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
	/*
	 * Entries where the documented difference is accepted: 1, the
	 * syscall's -EBUSY for a page of a THP it moved whole; 2, the same for
	 * a hugetlb page, or 6.1's -EACCES for a hugetlb tail address
	 * (Documentation/abi.md); numaplace answers the node.
	 */
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

static struct cf_env cf_env;

/*
 * The oracle is the kernel: glibc's own syscall(), taken from libc.so.6
 * itself, so that no interposed syscall() (libnumaplace-preload.so, or a
 * libnumaplace.so that wrongly carried it) can stand in for the kernel.
 */
typedef long (*cf_syscall_fn)(long number, ...);
static cf_syscall_fn cf_sys;

static int cf_sys_init(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	cf_sys = libc ? (cf_syscall_fn)dlsym(libc, "syscall") : NULL;
	return cf_sys ? 0 : -ENOENT;
}

/* ---- memory ------------------------------------------------------------ */

static void *cf_map(struct cf_case *c, size_t len, int prot, int flags)
{
	void *p;

	if (c->nr_maps == CF_MAX_MAPS)
		return NULL;
	p = mmap(NULL, len, prot, flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	c->maps[c->nr_maps].p = p;
	c->maps[c->nr_maps++].len = len;
	return p;
}

static long cf_mbind(void *p, size_t len, int node)
{
	unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };

	mask[node / 64] = 1UL << (node % 64);
	return syscall(SYS_mbind, p, len, MPOL_BIND, mask,
		       NUMAPLACE_MAX_NODES + 1, 0) ? -errno : 0;
}

/*
 * @npages pages bound to @node (MAP_SHARED when @shared), THP-aligned
 * and THP-backed when @thp, written when @touch. NULL on failure.
 */
static char *cf_pages_on(struct cf_case *c, size_t npages, int node,
			 int shared, int thp, int touch)
{
	size_t len = npages * cf_env.psz;
	char *raw, *p;

	raw = cf_map(c, len + (thp ? CF_PMD : 0), PROT_READ | PROT_WRITE,
		     (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS);
	if (!raw)
		return NULL;
	p = thp ? (char *)(((uintptr_t)raw + CF_PMD - 1) & ~(CF_PMD - 1)) :
		  raw;
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	if (node >= 0 && cf_mbind(p, len, node))
		return NULL;
	if (touch)
		memset(p, 0x3c, len);
	return p;
}

/* 1 when the 2 MiB at @p are one THP (AnonHugePages of its VMA). */
static int cf_thp_backed(const void *p)
{
	unsigned long s, t;
	char line[256];
	long kb = 0;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &t) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = s <= (uintptr_t)p && (uintptr_t)p < t;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kb * 1024 >= (long)CF_PMD;
}

/* pages[] and nodes[] (nodes only when @move) for @n entries. */
static int cf_arrays(struct cf_case *c, unsigned long n, int move)
{
	c->pages = c->pages_alloc = calloc(n + 1, sizeof(*c->pages));
	c->nodes = c->nodes_alloc = move ? calloc(n + 1, sizeof(*c->nodes)) :
				    NULL;
	c->thp_second = calloc(n + 1, 1);
	c->count = c->nst = n;
	return !c->pages || (move && !c->nodes) || !c->thp_second ? -ENOMEM :
	       0;
}

/* Entries @first.. of pages[] are the pages of @p, every @step bytes. */
static void cf_fill(struct cf_case *c, unsigned long first, unsigned long n,
		    char *p, size_t step, int node)
{
	for (unsigned long i = 0; i < n; i++) {
		c->pages[first + i] = p + i * step;
		if (c->nodes)
			c->nodes[first + i] = node;
	}
}

static void cf_want(struct cf_case *c, unsigned long i, int st)
{
	if (c->nr_want < CF_MAX_WANT) {
		c->want[c->nr_want].i = i;
		c->want[c->nr_want++].st = st;
	}
}

/* A child that touches [p, p + len) and waits to be killed. */
static pid_t cf_sharer(struct cf_case *c, char *p, size_t len)
{
	int pfd[2];
	pid_t pid;
	char x;

	if (c->nr_kids == CF_MAX_KIDS || pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (size_t off = 0; off < len; off += cf_env.psz)
			(void)((volatile char *)p)[off];
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	c->kids[c->nr_kids++] = pid;
	x = read(pfd[0], &x, 1) == 1;
	close(pfd[0]);
	return x ? pid : -1;
}

static int cf_drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/*
 * A child that becomes @uid (0: stays), dumpable or not, builds @npages
 * pages on @node and
 * waits to be killed; *@base gets their address (the child's layout is
 * the parent's, so pages[] can name them). Its pid, or -1.
 */
static pid_t cf_target(struct cf_case *c, uid_t uid, int dumpable,
		       size_t npages, int node, char **base)
{
	char **shared = mmap(NULL, sizeof(char *), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int pfd[2];
	pid_t pid;
	char x;

	if (shared == MAP_FAILED || c->nr_kids == CF_MAX_KIDS || pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		struct cf_case own = { 0 };
		char *p;

		if (uid && cf_drop_to(uid))
			_exit(1);
		/* After the uid change, which clears both. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (prctl(PR_SET_DUMPABLE, dumpable))
			_exit(1);
		p = cf_pages_on(&own, npages, node, 0, 0, 1);
		if (!p)
			_exit(1);
		*shared = p;
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	c->kids[c->nr_kids++] = pid;
	x = read(pfd[0], &x, 1) == 1;
	close(pfd[0]);
	*base = *shared;
	munmap(shared, sizeof(char *));
	return x ? pid : -1;
}

static void cf_case_free(struct cf_case *c)
{
	for (int i = 0; i < c->nr_kids; i++) {
		kill(c->kids[i], SIGKILL);
		waitpid(c->kids[i], NULL, 0);
	}
	for (int i = 0; i < c->nr_maps; i++)
		munmap(c->maps[i].p, c->maps[i].len);
	free(c->pages_alloc);
	free(c->nodes_alloc);
	free(c->thp_second);
	free(c->layout);
	free(c->ent_page);
	memset(c, 0, sizeof(*c));
}

/* ---- one call, both ways ------------------------------------------------ */

static long cf_call(int lib, const struct cf_case *c, int *status)
{
	if (c->null_status)
		status = NULL;
	if (lib)
		return numaplace_move_pages(c->pid, c->count, c->pages,
					    c->nodes, status, c->flags);
	return cf_sys(SYS_move_pages, c->pid, c->count, c->pages, c->nodes,
		       status, c->flags);
}

static void cf_result_free(struct cf_result *r, unsigned long nst)
{
	if (r->status)
		munmap(r->status, (nst + CF_ROOM) * sizeof(int));
	free(r->place);
	memset(r, 0, sizeof(*r));
}

/* Run @c through the syscall (@lib 0) or the library. 0 or -errno. */
static int cf_run(int lib, const struct cf_case *c, struct cf_result *r)
{
	size_t room = (c->nst + CF_ROOM) * sizeof(int);
	struct { long ret; int err; } *sh;
	int status, ret = 0;
	pid_t kid;

	memset(r, 0, sizeof(*r));
	r->status = mmap(NULL, room, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	r->place = calloc(c->nst + 1, sizeof(int));
	if (r->status == MAP_FAILED || sh == MAP_FAILED || !r->place) {
		if (r->status == MAP_FAILED)
			r->status = NULL;
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->nst + CF_ROOM; i++)
		r->status[i] = CF_SENTINEL;

	if (c->as_uid && !c->use_seteuid) {
		kid = fork();
		if (kid < 0) {
			ret = -errno;
			goto out;
		}
		if (!kid) {
			if (cf_drop_to(c->as_uid))
				_exit(1);
			errno = 0;
			sh->ret = cf_call(lib, c, r->status);
			sh->err = sh->ret < 0 ? errno : 0;
			_exit(0);
		}
		if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			ret = -ECHILD;
			goto out;
		}
	} else {
		if (c->use_seteuid && seteuid(c->as_uid)) {
			ret = -errno;
			goto out;
		}
		errno = 0;
		sh->ret = cf_call(lib, c, r->status);
		sh->err = sh->ret < 0 ? errno : 0;
		if (c->use_seteuid && seteuid(0)) {
			ret = -errno;
			goto out;
		}
	}
	r->ret = sh->ret;
	r->err = sh->err;

	for (size_t i = 0; i < c->nst; i++)
		r->place[i] = CF_SENTINEL;
	if (!c->no_place && c->nst &&
	    cf_sys(SYS_move_pages, c->pid, c->nst, c->pages, NULL, r->place,
		    0) < 0)
		ret = -errno;
out:
	if (sh != MAP_FAILED)
		munmap(sh, sizeof(*sh));
	return ret;
}

static const char *cf_errname(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "?";
}

/*
 * The syscall's answer and the library's, entry by entry. Returns the
 * number of differences; the accepted ones are counted in *@accepted.
 */
static int cf_compare(const struct cf_case *c, const struct cf_result *s,
		      const struct cf_result *l, int *accepted)
{
	int bad = 0, logged = 0;

	if (s->ret != l->ret || s->err != l->err) {
		bad++;
		fprintf(stderr, "# %s: syscall returned %ld (errno %s), library %ld (errno %s)\n",
			c->what, s->ret, cf_errname(s->err), l->ret,
			cf_errname(l->err));
	}
	for (unsigned long i = 0; i < c->nst + CF_TAIL; i++) {
		int sys = s->status[i], lib = l->status[i];

		if (sys == lib)
			continue;
		if (i < c->nst && c->thp_second[i] && c->nodes &&
		    lib == c->nodes[i] &&
		    (sys == -EBUSY ||
		     (c->thp_second[i] == 2 && sys == -EACCES))) {
			++*accepted;
			continue;
		}
		if (!bad++ && c->layout)
			fprintf(stderr, "# %s: layout: %s\n", c->what, c->layout);
		if (logged++ < CF_LOG_MAX)
			fprintf(stderr, "# %s: status[%lu] (%p%s%s%d, layout page %d): syscall %d, library %d\n",
				c->what, i, i < c->nst ? c->pages[i] : NULL,
				i >= c->nst ? ", past the end" : "",
				c->nodes && i < c->nst ? ", to node " : ", node ",
				c->nodes && i < c->nst ? c->nodes[i] : -1,
				c->ent_page && i < c->nst ?
				(int)c->ent_page[i] : -1, sys, lib);
	}
	for (unsigned long i = 0; !c->no_place && i < c->nst; i++) {
		if (s->place[i] == l->place[i])
			continue;
		if (!bad++ && c->layout)
			fprintf(stderr, "# %s: layout: %s\n", c->what, c->layout);
		if (logged++ < CF_LOG_MAX)
			fprintf(stderr, "# %s: page %lu (%p, layout page %d, to node %d) after the call: on %d via the syscall, on %d via the library\n",
				c->what, i, c->pages[i],
				c->ent_page ? (int)c->ent_page[i] : -1,
				c->nodes ? c->nodes[i] : -1, s->place[i],
				l->place[i]);
	}
	if (logged > CF_LOG_MAX)
		fprintf(stderr, "# %s: %d differences in all\n", c->what, bad);
	return bad;
}

/* The syscall against what LTP expects: a miss is a test bug. */
static int cf_check_want(const struct cf_case *c, const struct cf_result *s)
{
	int bad = 0;

	if (c->want_ret != INT_MIN &&
	    (s->ret != c->want_ret || s->err != c->want_err)) {
		bad++;
		fprintf(stderr, "# %s: the syscall returned %ld (errno %s), the case expects %d (errno %s): a test bug\n",
			c->what, s->ret, cf_errname(s->err), c->want_ret,
			cf_errname(c->want_err));
	}
	for (int k = 0; k < c->nr_want; k++) {
		if (s->status[c->want[k].i] == c->want[k].st)
			continue;
		bad++;
		fprintf(stderr, "# %s: the syscall's status[%lu] is %d, the case expects %d: a test bug\n",
			c->what, c->want[k].i, s->status[c->want[k].i],
			c->want[k].st);
	}
	return bad;
}

/* The layout, and what the syscall answered by kind: the coverage. */
static void cf_histogram(const struct cf_case *c, const struct cf_result *s)
{
	static const int errs[] = { EFAULT, ENOENT, EBUSY, EACCES, ENOMEM };
	unsigned long node = 0, other = 0, err[5] = { 0 };

	for (unsigned long i = 0; i < c->nst; i++) {
		int st = s->status[i], k;

		for (k = 0; k < 5 && st != -errs[k]; k++)
			;
		if (st >= 0)
			node++;
		else if (k < 5)
			err[k]++;
		else
			other++;
	}
	fprintf(stderr, "# %s: %s\n", c->what, c->layout);
	fprintf(stderr, "# %s: the syscall answered: node %lu, EFAULT %lu, ENOENT %lu, EBUSY %lu, EACCES %lu, ENOMEM %lu, other %lu\n",
		c->what, node, err[0], err[1], err[2], err[3], err[4], other);
}

/*
 * Build the case with @build, run it through the syscall, build it again
 * (a query: reuse it), run it through the library, compare. Returns the
 * number of differences, or -1 with *@skip set when the case cannot be
 * built here.
 */
static int cf_check(const char *what, cf_build_fn build, long arg,
		    const char **skip)
{
	struct cf_case c = { 0 };
	struct cf_result s = { 0 }, l = { 0 };
	int bad = 0, accepted = 0, ret, query;

	c.want_ret = INT_MIN;
	ret = build(&c, &cf_env, arg);
	if (ret) {
		*skip = ret == -EOPNOTSUPP ? "not on this machine" :
			"setup failed";
		fprintf(stderr, "# %s: %s (%s)\n", what, *skip,
			strerror(-ret));
		cf_case_free(&c);
		return ret == -EOPNOTSUPP ? -1 : 1;
	}
	c.what = what;
	query = !c.nodes;
	ret = cf_run(0, &c, &s);
	if (!ret && !query) {
		unsigned long nst = c.nst;

		cf_case_free(&c);
		c.want_ret = INT_MIN;
		ret = build(&c, &cf_env, arg);
		c.what = what;
		if (!ret && c.nst != nst)
			ret = -EINVAL;
	}
	if (!ret)
		ret = cf_run(1, &c, &l);
	if (ret) {
		fprintf(stderr, "# %s: run failed: %s\n", what, strerror(-ret));
		bad = 1;
	} else {
		bad = cf_check_want(&c, &s) + cf_compare(&c, &s, &l, &accepted);
		fprintf(stderr, "# %s: %s %lu entries; syscall %ld (errno %s)%s",
			what, query ? "query" : "move", c.nst, s.ret,
			cf_errname(s.err), bad ? ", DIFFERENT" : ", identical");
		if (accepted)
			fprintf(stderr, " but for %d THP second-page -EBUSY (accepted)",
				accepted);
		fprintf(stderr, "\n");
		if (c.layout)
			cf_histogram(&c, &s);
		if (c.nst >= 2)
			fprintf(stderr, "# %s: status[0..1]: syscall %d %d, library %d %d\n",
				what, s.status[0], s.status[1], l.status[0],
				l.status[1]);
	}
	cf_result_free(&s, c.nst);
	cf_result_free(&l, c.nst);
	cf_case_free(&c);
	return bad;
}

/* ---- the move_pages(2) cases ------------------------------------------- */

#define CF_NEED_B(e)							\
	do {								\
		if ((e)->b < 0)						\
			return -EOPNOTSUPP;				\
	} while (0)

/* move_pages01: nodes == NULL answers the node of each page. */
static int cf_mp01_query(struct cf_case *c, const struct cf_env *e, long arg)
{
	char *p = cf_pages_on(c, 8, e->a, 0, 0, 1);
	char *q = cf_pages_on(c, 8, e->b >= 0 ? e->b : e->a, 0, 0, 1);

	if (!p || !q || cf_arrays(c, 16, 0))
		return -ENOMEM;
	cf_fill(c, 0, 8, p, e->psz, 0);
	cf_fill(c, 8, 8, q, e->psz, 0);
	c->want_ret = 0;
	cf_want(c, 0, e->a);
	return 0;
}

/* move_pages02: pages on A move to B. */
static int cf_mp02_move(struct cf_case *c, const struct cf_env *e, long arg)
{
	char *p;

	CF_NEED_B(e);
	p = cf_pages_on(c, 16, e->a, 0, 0, 1);
	if (!p || cf_arrays(c, 16, 1))
		return -ENOMEM;
	cf_fill(c, 0, 16, p, e->psz, e->b);
	c->flags = MPOL_MF_MOVE;
	c->want_ret = 0;
	cf_want(c, 15, e->b);
	return 0;
}

/*
 * move_pages03 (@arg 1, MOVE_ALL as root: moved) and move_pages05
 * (@arg 0, MOVE: the shared page -EACCES, the private one moves).
 */
static int cf_mp_shared(struct cf_case *c, const struct cf_env *e, long arg)
{
	char *sh, *priv;

	CF_NEED_B(e);
	if (arg && !e->root)
		return -EOPNOTSUPP;
	sh = cf_pages_on(c, 4, e->a, 1, 0, 1);
	if (!sh || cf_sharer(c, sh, 4 * e->psz) < 0)
		return -ENOMEM;
	/* After the fork: this page is mapped by this process alone. */
	priv = cf_pages_on(c, 1, e->a, 0, 0, 1);
	if (!priv || cf_arrays(c, 5, 1))
		return -ENOMEM;
	cf_fill(c, 0, 4, sh, e->psz, e->b);
	cf_fill(c, 4, 1, priv, e->psz, e->b);
	c->flags = arg ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE;
	c->want_ret = 0;
	cf_want(c, 0, arg ? e->b : -EACCES);
	cf_want(c, 4, e->b);
	return 0;
}

/*
 * move_pages04: a page never touched (-ENOENT; 6.1: -EFAULT in private
 * anonymous memory) and the zero page (-EFAULT) next to a touched page;
 * @arg: 1 move, 0 query.
 */
static int cf_mp04_absent(struct cf_case *c, const struct cf_env *e, long arg)
{
	char *p = cf_pages_on(c, 3, e->a, 0, 0, 0);

	if (arg)
		CF_NEED_B(e);
	if (!p || cf_arrays(c, 3, arg))
		return -ENOMEM;
	p[0] = 1;
	(void)((volatile char *)p)[2 * e->psz];
	cf_fill(c, 0, 3, p, e->psz, arg ? e->b : 0);
	c->flags = arg ? MPOL_MF_MOVE : 0;
	c->want_ret = 0;
	cf_want(c, 0, arg ? e->b : e->a);
	cf_want(c, 2, -EFAULT);
	return 0;
}

/*
 * move_pages06: a target node that cannot take pages: ENODEV. @arg picks
 * the node: 0 -1, 1 nr_node_ids (numa_max_node() + 1), 2 a node id that
 * is not online, 3 MAX_NUMNODES - 1 (1023), 4 1024, 5 INT_MAX, 6 a
 * memoryless node, 7 a bad node in the middle (the entries before it
 * move, as the syscall does them).
 */
static int cf_mp06_bad_node(struct cf_case *c, const struct cf_env *e,
			    long arg)
{
	const int bad[] = { -1, e->info.nr_node_ids, e->offline, 1023, 1024,
			    INT_MAX, e->memless, 1024 };
	char *p;

	if (arg == 7)
		CF_NEED_B(e);
	if (bad[arg] < 0 && arg)
		return -EOPNOTSUPP;
	p = cf_pages_on(c, 4, e->a, 0, 0, 1);
	if (!p || cf_arrays(c, 4, 1))
		return -ENOMEM;
	cf_fill(c, 0, 4, p, e->psz, bad[arg]);
	if (arg == 7) {
		c->nodes[0] = c->nodes[1] = c->nodes[3] = e->b;
		cf_want(c, 0, e->b);
	}
	c->flags = MPOL_MF_MOVE;
	c->want_ret = -1;
	c->want_err = ENODEV;
	return 0;
}

/*
 * move_pages07: no such process: ESRCH. @arg: 0 a reaped child (move),
 * 1 the same (query), 2 pid -1.
 */
static int cf_mp07_bad_pid(struct cf_case *c, const struct cf_env *e,
			   long arg)
{
	char *p = cf_pages_on(c, 2, e->a, 0, 0, 1);
	pid_t pid;

	if (!p || cf_arrays(c, 2, arg != 1))
		return -ENOMEM;
	cf_fill(c, 0, 2, p, e->psz, e->a);
	if (arg == 2) {
		pid = -1;
	} else {
		pid = fork();
		if (pid < 0)
			return -errno;
		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
	}
	c->pid = pid;
	c->flags = MPOL_MF_MOVE;
	c->no_place = 1;
	c->want_ret = -1;
	c->want_err = ESRCH;
	return 0;
}

/*
 * move_pages08 (E2BIG before 2.6.29): a huge count over arrays that end
 * at an unreadable page. The syscall answers the entries it could read
 * (queries: whole 16-entry chunks) and returns EFAULT. @arg: 0 query
 * count ULONG_MAX, 1 query count 2^40, 2 move count ULONG_MAX.
 */
static int cf_mp08_huge_count(struct cf_case *c, const struct cf_env *e,
			      long arg)
{
	const unsigned long n = CF_GUARD_ENTRIES;
	size_t arr = ((n * 8 + e->psz - 1) / e->psz) * e->psz;
	char *p, *pg, *nd;

	if (arg == 2)
		CF_NEED_B(e);
	p = cf_pages_on(c, n, e->a, 0, 0, 1);
	/* Each array: its entries end where a PROT_NONE page starts. */
	pg = cf_map(c, arr + e->psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS);
	nd = cf_map(c, arr + e->psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS);
	if (!p || !pg || !nd || cf_arrays(c, n, 0))
		return -ENOMEM;
	mprotect(pg + arr, e->psz, PROT_NONE);
	mprotect(nd + arr, e->psz, PROT_NONE);
	c->pages = (void **)(pg + arr - n * sizeof(void *));
	c->count = arg == 1 ? 1UL << 40 : ULONG_MAX;
	cf_fill(c, 0, n, p, e->psz, 0);
	if (arg == 2) {
		c->nodes = (int *)(nd + arr - n * sizeof(int));
		for (unsigned long i = 0; i < n; i++)
			c->nodes[i] = e->b;
		c->flags = MPOL_MF_MOVE;
	}
	c->want_ret = -1;
	c->want_err = EFAULT;
	return 0;
}

/* move_pages09: every page already on its target: 0, status the node. */
static int cf_mp09_in_place(struct cf_case *c, const struct cf_env *e,
			    long arg)
{
	char *p = cf_pages_on(c, 4, e->a, 0, 0, 1);

	if (!p || cf_arrays(c, 4, 1))
		return -ENOMEM;
	cf_fill(c, 0, 4, p, e->psz, e->a);
	c->flags = MPOL_MF_MOVE;
	c->want_ret = 0;
	cf_want(c, 0, e->a);
	return 0;
}

/*
 * move_pages10: flags move_pages(2) does not take: EINVAL. @arg: 0
 * MPOL_MF_STRICT (LTP), 1 bit 3, 2 MOVE | bit 4, 3 MPOL_MF_STRICT in a
 * query.
 */
static int cf_mp10_bad_flags(struct cf_case *c, const struct cf_env *e,
			     long arg)
{
	const int flags[] = { MPOL_MF_STRICT, 1 << 3,
			      MPOL_MF_MOVE | (1 << 4), MPOL_MF_STRICT };
	char *p = cf_pages_on(c, 2, e->a, 0, 0, 1);

	if (!p || cf_arrays(c, 2, arg != 3))
		return -ENOMEM;
	cf_fill(c, 0, 2, p, e->psz, e->b >= 0 ? e->b : e->a);
	c->flags = flags[arg];
	c->want_ret = -1;
	c->want_err = EINVAL;
	return 0;
}

/*
 * move_pages11: MOVE_ALL without CAP_SYS_NICE (effective uid nobody, as
 * LTP's seteuid()): EPERM, before any page is looked at. @arg: 0 move,
 * 1 query.
 */
static int cf_mp11_move_all_nocap(struct cf_case *c, const struct cf_env *e,
				  long arg)
{
	char *p;

	if (!e->root)
		return -EOPNOTSUPP;
	p = cf_pages_on(c, 2, e->a, 1, 0, 1);
	if (!p || cf_sharer(c, p, 2 * e->psz) < 0 || cf_arrays(c, 2, !arg))
		return -ENOMEM;
	cf_fill(c, 0, 2, p, e->psz, e->b >= 0 ? e->b : e->a);
	c->flags = MPOL_MF_MOVE_ALL;
	c->as_uid = CF_NOBODY;
	c->use_seteuid = 1;
	c->want_ret = -1;
	c->want_err = EPERM;
	return 0;
}

/*
 * move_pages12: hugetlb pages (2 MiB) on A. @arg: 0 move to B naming
 * every 4 KiB of them (LTP's pages[]), 1 move naming the heads only,
 * 2 query every 4 KiB.
 */
static int cf_mp12_hugetlb(struct cf_case *c, const struct cf_env *e,
			   long arg)
{
	const unsigned long per = CF_PMD / e->psz;
	unsigned long n = arg == 1 ? 2 : 2 * per;
	char *p;

	if (arg != 2)
		CF_NEED_B(e);
	p = cf_map(c, 2 * CF_PMD, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB);
	if (!p)
		return -EOPNOTSUPP;
	if (cf_mbind(p, 2 * CF_PMD, e->a))
		return -EOPNOTSUPP;
	memset(p, 0x11, 2 * CF_PMD);
	if (cf_arrays(c, n, arg != 2))
		return -ENOMEM;
	cf_fill(c, 0, n, p, arg == 1 ? CF_PMD : e->psz,
		e->b >= 0 ? e->b : e->a);
	if (arg == 0)
		for (unsigned long i = 0; i < n; i++)
			c->thp_second[i] = i % per ? 2 : 0;
	c->flags = arg == 2 ? 0 : MPOL_MF_MOVE;
	c->want_ret = 0;
	cf_want(c, 0, arg == 2 ? e->a : e->b);
	return 0;
}

/* A THP on A moved whole to B, every 4 KiB named: the accepted case. */
static int cf_thp_move(struct cf_case *c, const struct cf_env *e, long arg)
{
	const unsigned long per = CF_PMD / e->psz;
	char *p;

	CF_NEED_B(e);
	p = cf_pages_on(c, per, e->a, 0, 1, 1);
	if (!p)
		return -ENOMEM;
	if (!cf_thp_backed(p))
		return -EOPNOTSUPP;
	if (cf_arrays(c, per, 1))
		return -ENOMEM;
	cf_fill(c, 0, per, p, e->psz, e->b);
	for (unsigned long i = 1; i < per; i++)
		c->thp_second[i] = 1;
	c->flags = MPOL_MF_MOVE;
	c->want_ret = 0;
	cf_want(c, 0, e->b);
	return 0;
}

/*
 * Another process. @arg: 0 nobody moves root's process's pages: EPERM;
 * 1 the same, a query; 2 nobody moves a (dumpable) nobody process's
 * pages; 3 nobody queries them; 4 root moves a child's pages; 5 nobody
 * moves a non-dumpable nobody process's pages: EPERM; 6 the same, a
 * query.
 */
static int cf_other(struct cf_case *c, const struct cf_env *e, long arg)
{
	uid_t target_uid = arg == 0 || arg == 1 || arg == 4 ? 0 : CF_NOBODY;
	int move = arg == 0 || arg == 2 || arg == 4 || arg == 5;
	int eperm = arg < 2 || arg > 4;
	char *p;
	pid_t pid;

	if (!e->root || (move && e->b < 0 && !eperm))
		return -EOPNOTSUPP;
	pid = cf_target(c, target_uid, arg < 5, 8, e->a, &p);
	if (pid < 0 || cf_arrays(c, 8, move))
		return -ENOMEM;
	cf_fill(c, 0, 8, p, e->psz, e->b >= 0 ? e->b : e->a);
	c->pid = pid;
	c->flags = move ? MPOL_MF_MOVE : 0;
	c->as_uid = arg == 4 ? 0 : CF_NOBODY;
	c->want_ret = eperm ? -1 : 0;
	c->want_err = eperm ? EPERM : 0;
	return 0;
}

/*
 * A process without an mm: EINVAL. @arg: 0 kthreadd (pid 2), 1 a zombie;
 * 2, 3 the same as queries.
 */
static int cf_no_mm(struct cf_case *c, const struct cf_env *e, long arg)
{
	char comm[32] = "";
	char *p = cf_pages_on(c, 2, e->a, 0, 0, 1);
	pid_t pid;

	if (!p || cf_arrays(c, 2, arg < 2))
		return -ENOMEM;
	cf_fill(c, 0, 2, p, e->psz, e->a);
	if (arg % 2 == 0) {
		if (np_read_str("/proc/2/comm", comm, sizeof(comm)) ||
		    strcmp(comm, "kthreadd"))
			return -EOPNOTSUPP;
		pid = 2;
	} else {
		if (c->nr_kids == CF_MAX_KIDS)
			return -ENOMEM;
		pid = fork();
		if (pid < 0)
			return -errno;
		if (!pid)
			_exit(0);
		c->kids[c->nr_kids++] = pid;
		/* A zombie once it has exited and is not reaped. */
		for (int i = 0; i < 200; i++) {
			char path[64], st[256] = "";

			snprintf(path, sizeof(path), "/proc/%d/stat", pid);
			np_read_str(path, st, sizeof(st));
			if (strstr(st, ") Z "))
				break;
			usleep(10000);
		}
	}
	c->pid = pid;
	c->flags = arg < 2 ? MPOL_MF_MOVE : 0;
	c->no_place = 1;
	c->want_ret = -1;
	c->want_err = EINVAL;
	return 0;
}

/*
 * Memory that cannot move: [vvar] is VM_IO | VM_PFNMAP up to 6.12
 * (-EFAULT on the move path; a query answers as each kernel does). @arg: 1 move, 0 query.
 */
static int cf_unmovable(struct cf_case *c, const struct cf_env *e, long arg)
{
	unsigned long s = 0, t = 0;
	char line[256];
	FILE *f = fopen("/proc/self/maps", "re");
	char *p = cf_pages_on(c, 1, e->a, 0, 0, 1);

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vvar]\n") &&
		    sscanf(line, "%lx-%lx", &s, &t) == 2)
			break;
	if (f)
		fclose(f);
	if (!s || !p)
		return -EOPNOTSUPP;
	if (arg)
		CF_NEED_B(e);
	if (cf_arrays(c, 2, arg))
		return -ENOMEM;
	cf_fill(c, 0, 1, (char *)s, e->psz, arg ? e->b : 0);
	cf_fill(c, 1, 1, p, e->psz, arg ? e->b : 0);
	c->flags = arg ? MPOL_MF_MOVE : 0;
	c->want_ret = 0;
	/* 7.x: [vvar] is VM_MIXEDMAP (lib/vdso/datastore.c), migratable. */
	if (arg && np_addr_is_pfnmap(s))
		cf_want(c, 0, -EFAULT);
	return 0;
}

/*
 * Arrays the call cannot use: @arg 0 status NULL (EFAULT), 1 pages NULL
 * (EFAULT), 2 count 0 with NULL arrays (0), 3 status NULL in a move.
 */
static int cf_null(struct cf_case *c, const struct cf_env *e, long arg)
{
	char *p = cf_pages_on(c, 1, e->a, 0, 0, 1);

	if (!p || cf_arrays(c, 1, arg == 3))
		return -ENOMEM;
	cf_fill(c, 0, 1, p, e->psz, e->a);
	c->want_ret = arg == 2 ? 0 : -1;
	c->want_err = arg == 2 ? 0 : EFAULT;
	c->no_place = 1;
	if (arg == 3)
		c->flags = MPOL_MF_MOVE;
	if (arg == 0 || arg == 3)
		c->null_status = 1;
	if (arg == 1) {
		c->pages = NULL;
		c->nst = 0;
	}
	if (arg == 2) {
		c->count = 0;
		c->nst = 0;
	}
	return 0;
}

/* A query over pages of every kind, in both kernels' answers. */
static int cf_query_kinds(struct cf_case *c, const struct cf_env *e,
			  long arg)
{
	const unsigned long per = CF_PMD / e->psz;
	char *anon = cf_pages_on(c, 8, e->a, 0, 0, 0);
	char *thp = cf_pages_on(c, per, e->a, 0, 1, 1);
	char *shm = cf_pages_on(c, 4, e->a, 1, 0, 0);
	unsigned long n = 8 + 16 + 4 + 2, k = 0;

	if (!anon || !thp || !shm || cf_arrays(c, n, 0))
		return -ENOMEM;
	/* written, never touched, zero page, PROT_NONE written/untouched. */
	anon[0] = anon[e->psz] = 1;
	(void)((volatile char *)anon)[3 * e->psz];
	anon[5 * e->psz] = 1;
	mprotect(anon + 5 * e->psz, 2 * e->psz, PROT_NONE);
	shm[0] = 1;
	cf_fill(c, k, 8, anon, e->psz, 0);
	k += 8;
	/* The THP's first and last 8 pages, inside-page offsets. */
	cf_fill(c, k, 8, thp + 123, e->psz, 0);
	cf_fill(c, k + 8, 8, thp + (per - 8) * e->psz + 7, e->psz, 0);
	k += 16;
	cf_fill(c, k, 4, shm, e->psz, 0);
	k += 4;
	/* No VMA: below mmap_min_addr, and the [vsyscall] gate. */
	c->pages[k++] = (void *)(uintptr_t)e->psz;
	c->pages[k++] = (void *)0xffffffffff600000UL;
	c->want_ret = 0;
	cf_want(c, 0, e->a);
	cf_want(c, n - 1, -EFAULT);
	return 0;
}

/* ---- random layouts, random per-page targets ----------------------------- */

/*
 * The oracle, at random: CF_RND_ROUNDS layouts of CF_RND_SLOTS 2 MiB
 * slots, each slot one kind (cf_rnd_kind), and an array of entries over
 * their pages with random per-page targets: runs of equal targets, changes
 * inside a THP, repeats of a page. Built twice from the same seed, one
 * copy moved by the syscall, the other by numaplace_move_pages()
 * (MIGRATE_AS_SYSCALL); statuses and final placement must be the same but
 * for the documented difference (Documentation/abi.md): a folio named again
 * inside one batch, the syscall -EBUSY, numaplace the node.
 */
#define CF_RND_ROUNDS	16
#define CF_RND_SLOTS	4
#define CF_RND_MIN	64	/* entries per round: CF_RND_MIN .. + CF_RND_VAR */
#define CF_RND_VAR	448
#define CF_RND_RUN	8	/* longest run of one target */

enum cf_rnd_kind {
	CF_RND_THP,		/* MADV_HUGEPAGE, written whole */
	CF_RND_THP_ONE,		/* MADV_HUGEPAGE, one page written (a THP) */
	CF_RND_THP_NONE,	/* MADV_HUGEPAGE, never touched: pmd_none */
	CF_RND_THP_ZERO,	/* MADV_HUGEPAGE, read: the huge zero page */
	CF_RND_THP_HOLE,	/* a THP written, a hole unmapped in it */
	CF_RND_THP_ZAP,		/* a THP written, a run MADV_DONTNEED'd */
	CF_RND_HVMA_4K,		/* MADV_HUGEPAGE VMA without a whole PMD */
	CF_RND_4K,		/* MADV_NOHUGEPAGE, pages of every kind */
	CF_RND_NR_KINDS
};

static const char *const cf_rnd_names[CF_RND_NR_KINDS] = {
	"thp", "thp-one-write", "thp-never-touched", "thp-zero", "thp-hole",
	"thp-zapped",
	"hugepage-vma-4k", "4k-mixed",
};

static unsigned long long cf_rnd_seed;

/* splitmix64: the round's stream from the seed and the round. */
static unsigned long long cf_rnd(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int cf_rnd_below(unsigned long long *s, unsigned int n)
{
	return cf_rnd(s) % n;
}

/* Per 4 KiB page of a 4k-mixed or hugepage-vma-4k slot. */
static void cf_rnd_page(unsigned long long *s, char *pg, int allow_hole,
			char *tag)
{
	switch (cf_rnd_below(s, allow_hole ? 4 : 3)) {
	case 0:
		*pg = 1;		/* written */
		*tag = 'w';
		break;
	case 1:
		(void)*(volatile char *)pg;	/* the zero page */
		*tag = 'z';
		break;
	case 2:
		*tag = '.';		/* never touched */
		break;
	default:
		munmap(pg, cf_env.psz);
		*tag = 'h';
		break;
	}
}

/* Slot @i at @p, kind @k; its description appended to @d. */
static int cf_rnd_slot(unsigned long long *s, char *p, enum cf_rnd_kind k,
		       int node, char *d, size_t dlen)
{
	const unsigned long per = CF_PMD / cf_env.psz;
	size_t psz = cf_env.psz, off = strlen(d);
	unsigned long at, n;
	char tags[24] = "";

	madvise(p, CF_PMD, k == CF_RND_4K ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
	if (node >= 0 && cf_mbind(p, CF_PMD, node))
		return -ENOMEM;
	switch (k) {
	case CF_RND_THP:
		memset(p, 0x3c, CF_PMD);
		break;
	case CF_RND_THP_ONE:
		at = cf_rnd_below(s, per);
		p[at * psz] = 1;
		snprintf(tags, sizeof(tags), "@%lu", at);
		break;
	case CF_RND_THP_NONE:
		break;
	case CF_RND_THP_ZERO:
		(void)((volatile char *)p)[cf_rnd_below(s, per) * psz];
		break;
	case CF_RND_THP_HOLE:
	case CF_RND_THP_ZAP:
		memset(p, 0x3c, CF_PMD);
		at = 1 + cf_rnd_below(s, per - 2);
		n = 1 + cf_rnd_below(s, per - at - 1 < 32 ? per - at - 1 : 32);
		if (k == CF_RND_THP_HOLE)
			munmap(p + at * psz, n * psz);
		else	/* splits the PMD: never-touched PTEs in a THP VMA */
			madvise(p + at * psz, n * psz, MADV_DONTNEED);
		snprintf(d + off, dlen - off, " [%s %lu+%lu on %d]",
			 cf_rnd_names[k], at, n, node);
		return 0;
	case CF_RND_HVMA_4K:
	case CF_RND_4K: {
		/* 32 pages of random kinds, then a PROT_NONE or RO run. */
		char map[33];
		unsigned int prot = cf_rnd_below(s, 3);

		if (k == CF_RND_HVMA_4K)	/* no whole PMD: 4 KiB pages */
			madvise(p, psz, MADV_NOHUGEPAGE);
		for (unsigned long i = 0; i < 32; i++)
			cf_rnd_page(s, p + (i + 1) * psz, k == CF_RND_4K,
				    &map[i]);
		map[32] = 0;
		memset(p + 40 * psz, 1, 8 * psz);
		if (prot)
			mprotect(p + 40 * psz, 8 * psz,
				 prot == 1 ? PROT_NONE : PROT_READ);
		snprintf(d + off, dlen - off, " [%s on %d 1..32:%s 40..47:%s, rest never touched]",
			 cf_rnd_names[k], node, map,
			 prot == 0 ? "rw" : prot == 1 ? "none" : "ro");
		return 0;
	}
	default:
		break;
	}
	snprintf(d + off, dlen - off, " [%s%s on %d]", cf_rnd_names[k], tags,
		 node);
	return 0;
}

/*
 * Entries over the pages of the slots: mostly on from the last page,
 * sometimes a repeat of it, a jump inside its slot or anywhere; targets in
 * runs of 1..CF_RND_RUN, each run's node at random.
 */
static int cf_rnd_build(struct cf_case *c, const struct cf_env *e, long arg)
{
	const unsigned long per = CF_PMD / e->psz;
	const unsigned long total = CF_RND_SLOTS * per;
	unsigned long long s = cf_rnd_seed * 1000003ULL + arg;
	int kinds[CF_RND_SLOTS], node = e->a, run = 0;
	unsigned long n, cur;
	char *raw, *p;

	CF_NEED_B(e);
	raw = cf_map(c, (CF_RND_SLOTS + 1) * CF_PMD, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
	if (!raw)
		return -ENOMEM;
	p = (char *)(((uintptr_t)raw + CF_PMD - 1) & ~(CF_PMD - 1));
	c->layout = calloc(1, 1024);
	if (!c->layout)
		return -ENOMEM;
	snprintf(c->layout, 1024, "seed %llu round %ld, slots of %lu pages:",
		 cf_rnd_seed, arg, per);
	for (int i = 0; i < CF_RND_SLOTS; i++) {
		int at = cf_rnd_below(&s, 3);

		kinds[i] = cf_rnd_below(&s, CF_RND_NR_KINDS);
		if (cf_rnd_slot(&s, p + i * CF_PMD, kinds[i],
				at == 2 ? -1 : at ? e->b : e->a, c->layout,
				1024))
			return -ENOMEM;
	}
	n = CF_RND_MIN + cf_rnd_below(&s, CF_RND_VAR);
	if (cf_arrays(c, n, 1))
		return -ENOMEM;
	c->ent_page = calloc(n, sizeof(*c->ent_page));
	if (!c->ent_page)
		return -ENOMEM;
	cur = cf_rnd_below(&s, total);
	for (unsigned long i = 0; i < n; i++) {
		unsigned int r = cf_rnd_below(&s, 100);

		if (i && r < 60)
			cur = (cur + 1) % total;
		else if (i && r < 72)
			;		/* the same page again */
		else if (i && r < 88)
			cur = cur / per * per + cf_rnd_below(&s, per);
		else
			cur = cf_rnd_below(&s, total);
		if (!run--) {
			run = cf_rnd_below(&s, CF_RND_RUN);
			node = cf_rnd_below(&s, 2) ? e->b : e->a;
		}
		c->ent_page[i] = cur;
		c->pages[i] = p + cur * e->psz + cf_rnd_below(&s, e->psz);
		c->nodes[i] = node;
	}
	/*
	 * The accepted difference: an entry whose folio (a THP slot's, or
	 * the page) an earlier entry of its run of one target named.
	 */
	for (unsigned long i = 1; i < n; i++) {
		unsigned long pg = c->ent_page[i], sl = pg / per;
		int thp = kinds[sl] <= CF_RND_THP_ONE ||
			  kinds[sl] == CF_RND_THP_HOLE ||
			  kinds[sl] == CF_RND_THP_ZAP;

		for (unsigned long j = i; j-- > 0;) {
			if (c->nodes[j] != c->nodes[i])
				break;
			if (c->ent_page[j] == pg ||
			    (thp && c->ent_page[j] / per == sl)) {
				c->thp_second[i] = 1;
				break;
			}
		}
	}
	c->flags = MPOL_MF_MOVE;
	c->want_ret = 0;
	return 0;
}

/* ---- migrate_pages(2) ----------------------------------------------- */

static long cf_sys_migrate_pages(int pid, int from, int to)
{
	unsigned long old[NUMAPLACE_NODE_WORDS] = { 0 };
	unsigned long new[NUMAPLACE_NODE_WORDS] = { 0 };

	old[from / 64] |= 1UL << (from % 64);
	new[to / 64] |= 1UL << (to % 64);
	return cf_sys(SYS_migrate_pages, pid, NUMAPLACE_MAX_NODES + 1, old,
		       new);
}

/*
 * migrate_pages(pid, {from}, {to}) through numaplace: every VMA of the
 * process, its runs on @from moved to @to in range mode (MOVE_ALL when
 * the caller has CAP_SYS_NICE, as the syscall decides). 0 or -errno;
 * *@failed gets MIGRATE's nr_failed_pages.
 */
static int cf_emulate_migrate_pages(int pid, int from, int to, int move_all,
				    unsigned long *failed)
{
	struct numaplace_run runs[256];
	unsigned long (*vma)[2] = NULL;
	size_t nr = 0, cap = 0;
	char path[64], line[512];
	int ret = 0;
	FILE *f;

	*failed = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid ? pid : getpid());
	f = fopen(path, "re");
	if (!f) {
		/*
		 * The maps of a process the caller may not read (the ptrace
		 * check again): the module's own answer for one page says
		 * why, as the syscall would.
		 */
		size_t got, done;

		ret = -errno;
		return numaplace_query_runs(pid, (void *)cf_env.psz,
					    cf_env.psz, runs, 1, &got, &done) ?:
		       ret;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, t;

		/* [vsyscall] is above user space: no VMA to walk. */
		if (sscanf(line, "%lx-%lx", &s, &t) != 2 || s >= CF_USER_END)
			continue;
		if (nr == cap) {
			void *v = realloc(vma, (cap = cap * 2 + 16) *
					  sizeof(*vma));

			if (!v) {
				fclose(f);
				free(vma);
				return -ENOMEM;
			}
			vma = v;
		}
		vma[nr][0] = s;
		vma[nr++][1] = t;
	}
	fclose(f);

	for (size_t v = 0; v < nr && !ret; v++) {
		unsigned long at = vma[v][0], end = vma[v][1];

		while (at < end && !ret) {
			size_t got = 0, done = 0;

			ret = numaplace_query_runs(pid, (void *)at, end - at,
						   runs, 256, &got, &done);
			if (ret)
				break;
			for (size_t r = 0; r < got && !ret; r++) {
				struct numaplace_migrate m;

				if (runs[r].node != from)
					continue;
				ret = numaplace_migrate_range(pid,
						(void *)(uintptr_t)runs[r].start,
						runs[r].nr_pages * cf_env.psz,
						to, move_all ?
						NUMAPLACE_MIGRATE_MOVE_ALL : 0,
						&m);
				*failed += m.nr_failed_pages;
			}
			if (!done)
				break;
			at += done * cf_env.psz;
		}
	}
	free(vma);
	return ret;
}

/* Where @n pages of @pid from @p (every psz) are: the syscall's query. */
static void cf_where(int pid, char *p, unsigned long n, int *place)
{
	void **pages = calloc(n, sizeof(*pages));

	for (unsigned long i = 0; i < n; i++) {
		place[i] = CF_SENTINEL;
		if (pages)
			pages[i] = p + i * cf_env.psz;
	}
	if (pages)
		cf_sys(SYS_move_pages, pid, n, pages, NULL, place, 0);
	free(pages);
}

/* Every page of [p, p + n pages) back on @node (MOVE_ALL as root). */
static void cf_move_back(int pid, char *p, unsigned long n, int node)
{
	void **pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(int)), *st = calloc(n, sizeof(int));

	if (pages && nodes && st) {
		for (unsigned long i = 0; i < n; i++) {
			pages[i] = p + i * cf_env.psz;
			nodes[i] = node;
		}
		cf_sys(SYS_move_pages, pid, n, pages, nodes, st,
			cf_env.root ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE);
	}
	free(pages);
	free(nodes);
	free(st);
}

static int cf_cmp_place(const char *what, const int *sys, const int *np,
			unsigned long n)
{
	int bad = 0;

	for (unsigned long i = 0; i < n; i++) {
		if (sys[i] == np[i])
			continue;
		if (bad++ < CF_LOG_MAX)
			fprintf(stderr, "# %s: page %lu: on %d after migrate_pages(2), on %d after numaplace\n",
				what, i, sys[i], np[i]);
	}
	if (bad > CF_LOG_MAX)
		fprintf(stderr, "# %s: %d differences in all\n", what, bad);
	return bad;
}

/* One side of cf_migrate_both(): the syscall (@lib 0) or numaplace. */
static long cf_mig_call(int lib, int pid, int from, int to, int move_all,
			int *err, unsigned long *failed)
{
	long ret;

	errno = 0;
	*failed = 0;
	if (!lib) {
		ret = cf_sys_migrate_pages(pid, from, to);
		*err = ret < 0 ? errno : 0;
		return ret;
	}
	ret = cf_emulate_migrate_pages(pid, from, to, move_all, failed);
	*err = ret < 0 ? (int)-ret : 0;
	return ret;
}

/*
 * cf_mig_call() with the credentials of @uid (0: the test's own): for
 * this process by seteuid() (its pages must stay its own), for another
 * by a child that becomes @uid entirely (the ptrace check reads the real
 * ids).
 */
static long cf_mig_as(int lib, int pid, int from, int to, uid_t uid,
		      int *err, unsigned long *failed)
{
	struct { long ret; int err; unsigned long failed; } *sh;
	int status;
	long ret;
	pid_t kid;

	if (!uid)
		return cf_mig_call(lib, pid, from, to, cf_env.root, err,
				   failed);
	if (!pid) {
		if (seteuid(uid))
			return -1;
		ret = cf_mig_call(lib, pid, from, to, 0, err, failed);
		if (seteuid(0))
			return -1;
		return ret;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	sh->ret = -1;
	sh->err = ECHILD;
	kid = fork();
	if (!kid) {
		if (cf_drop_to(uid))
			_exit(1);
		sh->ret = cf_mig_call(lib, pid, from, to, 0, &sh->err,
				      &sh->failed);
		_exit(0);
	}
	if (kid > 0)
		waitpid(kid, &status, 0);
	ret = sh->ret;
	*err = sh->err;
	*failed = sh->failed;
	munmap(sh, sizeof(*sh));
	return ret;
}

/*
 * migrate_pages(pid, A -> B) and its numaplace counterpart on the same
 * pages (put back on A in between), with the credentials of @uid (0:
 * the test's). Final placement of [p, p + n pages) compared; both must
 * fail with @want_err when it is not 0.
 */
static int cf_migrate_both(const char *what, int pid, char *p,
			   unsigned long n, int from, int to, uid_t uid,
			   int want_err)
{
	int *sys = calloc(n, sizeof(int)), *np = calloc(n, sizeof(int));
	unsigned long failed = 0, unused;
	int serr, nerr, bad = 0;
	long sret, nret;

	if (!sys || !np) {
		free(sys);
		free(np);
		return 1;
	}
	sret = cf_mig_as(0, pid, from, to, uid, &serr, &unused);
	cf_where(pid, p, n, sys);
	cf_move_back(pid, p, n, from);
	nret = cf_mig_as(1, pid, from, to, uid, &nerr, &failed);
	cf_where(pid, p, n, np);
	cf_move_back(pid, p, n, from);
	if (want_err ? sret >= 0 || nret >= 0 || serr != want_err ||
		       nerr != want_err : sret < 0 || nret < 0) {
		bad++;
		fprintf(stderr, "# %s: migrate_pages(2) %ld (errno %s), numaplace %ld (errno %s)\n",
			what, sret, cf_errname(serr), nret, cf_errname(nerr));
	}
	bad += cf_cmp_place(what, sys, np, n);
	fprintf(stderr, "# %s: %lu pages, migrate_pages(2) returned %ld (%s), numaplace %ld (%s), MIGRATE failed %lu pages; %s\n",
		what, n, sret, cf_errname(serr), nret, cf_errname(nerr),
		failed, bad ? "DIFFERENT" : "identical");
	free(sys);
	free(np);
	return bad;
}

/* ---- the fixture ------------------------------------------------------ */

FIXTURE(conformance)
{
	int fd;
	char hp_saved[2][32];	/* nr_hugepages of nodes a and b */
	int hp_changed;
	char ksm_saved[3][32];
	int ksm_changed;
};

static const char *const cf_ksm[] = {
	"/sys/kernel/mm/ksm/run",
	"/sys/kernel/mm/ksm/sleep_millisecs",
	"/sys/kernel/mm/ksm/pages_to_scan",
};

FIXTURE_SETUP(conformance)
{
	__u64 online[NUMAPLACE_NODE_WORDS], memory[NUMAPLACE_NODE_WORDS];

	self->fd = -1;
	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &cf_env.info));
	ASSERT_EQ(0, cf_sys_init());
	cf_env.psz = sysconf(_SC_PAGESIZE);
	cf_env.root = !geteuid();
	cf_env.a = cf_env.b = cf_env.memless = cf_env.offline = -1;
	memcpy(online, cf_env.info.node_online, sizeof(online));
	memcpy(memory, cf_env.info.node_memory, sizeof(memory));
	for (int n = 0; n < NUMAPLACE_MAX_NODES; n++) {
		if (np_node_isset(memory, n)) {
			if (cf_env.a < 0)
				cf_env.a = n;
			else if (cf_env.b < 0)
				cf_env.b = n;
		} else if (np_node_isset(online, n)) {
			if (cf_env.memless < 0)
				cf_env.memless = n;
		} else if (cf_env.offline < 0 &&
			   n < (int)cf_env.info.nr_node_ids) {
			cf_env.offline = n;
		}
	}
	ASSERT_GE(cf_env.a, 0);
	/* Its scanner would move pages and set PROT_NONE hints mid-case. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
}

FIXTURE_TEARDOWN(conformance)
{
	char path[128];
	int nodes[2] = { cf_env.a, cf_env.b };

	for (int i = 0; self->hp_changed && i < 2; i++) {
		if (nodes[i] < 0)
			continue;
		snprintf(path, sizeof(path), CF_HP_PATH, nodes[i]);
		np_write_str(path, self->hp_saved[i]);
	}
	for (int i = 2; self->ksm_changed && i >= 0; i--)
		np_write_str(cf_ksm[i], self->ksm_saved[i]);
	if (self->fd >= 0)
		close(self->fd);
}

/* Run @build for each @arg in [0, nargs): every one must be identical. */
static int cf_cases(struct __test_metadata *_metadata, const char *name,
		    cf_build_fn build, int first, int nargs)
{
	const char *skip = NULL;
	int bad = 0, ran = 0, ret;
	char what[96];

	for (int arg = first; arg < first + nargs; arg++) {
		snprintf(what, sizeof(what), "%s/%d", name, arg);
		ret = cf_check(what, build, arg, &skip);
		if (ret < 0)
			continue;
		ran++;
		bad += ret;
	}
	if (!ran)
		SKIP(return 0, "%s: %s", name, skip ? skip : "nothing ran");
	return bad;
}

TEST_F(conformance, move_pages01_query_node)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages01", cf_mp01_query, 0, 1));
}

TEST_F(conformance, move_pages02_move)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages02", cf_mp02_move, 0, 1));
}

TEST_F(conformance, move_pages03_shared_move_all)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages03", cf_mp_shared, 1, 1));
}

TEST_F(conformance, move_pages05_shared_without_move_all)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages05", cf_mp_shared, 0, 1));
}

TEST_F(conformance, move_pages04_not_present)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages04", cf_mp04_absent, 0, 2));
}

TEST_F(conformance, move_pages06_bad_node)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages06", cf_mp06_bad_node, 0, 8));
}

TEST_F(conformance, move_pages07_bad_pid)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages07", cf_mp07_bad_pid, 0, 3));
}

TEST_F(conformance, move_pages08_huge_count)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages08", cf_mp08_huge_count, 0, 3));
}

TEST_F(conformance, move_pages09_already_there)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages09", cf_mp09_in_place, 0, 1));
}

TEST_F(conformance, move_pages10_bad_flags)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages10", cf_mp10_bad_flags, 0, 4));
}

TEST_F(conformance, move_pages11_move_all_without_cap)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages11", cf_mp11_move_all_nocap, 0, 2));
}

TEST_F_TIMEOUT(conformance, move_pages12_hugetlb, 60)
{
	CF_SKIPPED();
	int nodes[2] = { cf_env.a, cf_env.b };
	char path[128], val[32];

	if (!cf_env.root)
		SKIP(return, "needs root (nr_hugepages)");
	for (int i = 0; i < 2; i++) {
		long have;

		if (nodes[i] < 0)
			continue;
		snprintf(path, sizeof(path), CF_HP_PATH, nodes[i]);
		have = np_read_long(path);
		if (have < 0)
			SKIP(return, "no %s", path);
		snprintf(self->hp_saved[i], sizeof(self->hp_saved[i]), "%ld",
			 have);
		self->hp_changed = 1;
		snprintf(val, sizeof(val), "%ld", have + CF_HP_PER_NODE);
		np_write_str(path, val);
		if (np_read_long(path) < have + CF_HP_PER_NODE)
			SKIP(return, "no free 2 MiB huge pages on node %d",
			     nodes[i]);
	}
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages12", cf_mp12_hugetlb, 0, 3));
}

TEST_F(conformance, thp_move_second_page)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "thp_move", cf_thp_move, 0, 1));
}

TEST_F(conformance, other_process)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "other_process", cf_other, 0, 7));
}

TEST_F(conformance, no_mm)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "no_mm", cf_no_mm, 0, 4));
}

TEST_F(conformance, unmovable_pfnmap)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "unmovable", cf_unmovable, 0, 2));
}

TEST_F(conformance, null_arrays)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "null_arrays", cf_null, 0, 4));
}

TEST_F(conformance, query_page_kinds)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "query_kinds", cf_query_kinds, 0, 1));
}

/*
 * Does the syscall give the same answers twice over round @arg, built
 * twice? 1 yes, 0 no (it differs from itself: the layout is not one the
 * kernel answers deterministically), -1 when it could not run.
 */
static int cf_rnd_stable(const char *what, long arg)
{
	struct cf_result r[2] = { 0 };
	struct cf_case c = { 0 };
	int bad = 0, accepted = 0, ret = 0;
	char w[128];

	snprintf(w, sizeof(w), "%s (syscall vs syscall)", what);
	for (int k = 0; k < 2 && !ret; k++) {
		cf_case_free(&c);
		ret = cf_rnd_build(&c, &cf_env, arg);
		c.what = w;
		if (!ret)
			ret = cf_run(0, &c, &r[k]);
	}
	if (!ret) {
		/* The second run as "library": no -EBUSY is accepted. */
		memset(c.thp_second, 0, c.nst);
		bad = cf_compare(&c, &r[0], &r[1], &accepted);
	}
	cf_result_free(&r[0], c.nst);
	cf_result_free(&r[1], c.nst);
	cf_case_free(&c);
	return ret ? -1 : !bad;
}

/* khugepaged collapses of this boot (/proc/vmstat), or -1. */
static long cf_collapses(void)
{
	char line[128];
	long v, sum = -1;
	FILE *f = fopen("/proc/vmstat", "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "thp_collapse_alloc %ld", &v) == 1 ||
		    sscanf(line, "thp_collapse_alloc_failed %ld", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + v;
	}
	if (f)
		fclose(f);
	return sum;
}

#define CF_KHP_SLEEP	"/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"
/* A round khugepaged collapsed into (it moves pages) is built again. */
#define CF_RND_RETRIES	3

/*
 * Random layouts and per-page targets (cf_rnd_build()); the seed is
 * printed, NP_ORACLE_SEED replays it. khugepaged would collapse a
 * PTE-mapped range of a MADV_HUGEPAGE VMA into a THP on a node of its
 * choosing between the call and the placement query, in one copy and not
 * the other: it is put to sleep for the test, and a round during which a
 * collapse was tried anyway is built and run again. So is a round that
 * differs where the syscall, run twice on two builds, differs from itself
 * (seen on 6.12 with partly zapped THPs: one page's final node, one
 * -EBUSY more or less): there the kernel is no oracle. A difference that
 * lasts CF_RND_RETRIES tries fails the test.
 */
TEST_F_TIMEOUT(conformance, move_pages_random_targets, 120)
{
	CF_SKIPPED();
	const char *env = getenv("NP_ORACLE_SEED");
	const char *skip = NULL;
	int bad = 0, ran = 0, ret, tries, unstable = 0;
	char what[64], sleep_ms[32] = "";
	long before;

	cf_rnd_seed = env ? strtoull(env, NULL, 0) :
		      (unsigned long long)time(NULL) << 16 ^ getpid();
	fprintf(stderr, "# move_pages_random_targets: seed %llu (NP_ORACLE_SEED=%llu replays it)\n",
		cf_rnd_seed, cf_rnd_seed);
	if (!np_read_str(CF_KHP_SLEEP, sleep_ms, sizeof(sleep_ms)))
		np_write_str(CF_KHP_SLEEP, "4000000000");
	for (int arg = 0; arg < CF_RND_ROUNDS; arg++) {
		snprintf(what, sizeof(what), "random_targets/%d", arg);
		for (tries = 0; tries < CF_RND_RETRIES; tries++) {
			before = cf_collapses();
			ret = cf_check(what, cf_rnd_build, arg, &skip);
			if (before >= 0 && cf_collapses() != before) {
				fprintf(stderr, "# %s: khugepaged collapsed during the round: again\n",
					what);
				continue;
			}
			if (ret <= 0 || cf_rnd_stable(what, arg))
				break;
			fprintf(stderr, "# %s: the syscall differs from itself on this layout: not comparable, again\n",
				what);
			unstable++;
		}
		if (ret < 0)
			continue;
		ran++;
		bad += ret;
	}
	if (sleep_ms[0])
		np_write_str(CF_KHP_SLEEP, sleep_ms);
	if (!ran)
		SKIP(return, "random_targets: %s", skip ? skip : "nothing ran");
	fprintf(stderr, "# move_pages_random_targets: %d differences in %d rounds, seed %llu (%d runs the syscall did not repeat, run again)\n",
		bad, CF_RND_ROUNDS, cf_rnd_seed, unstable);
	EXPECT_EQ(0, bad);
}

/*
 * migrate_pages01: the errors. Compared: pid -1 and pid_max + 1 (ESRCH),
 * another user's process (EPERM), an unreadable node array (EFAULT:
 * MIGRATE's nodes_ptr). Each on its own: a bad maxnode, offline and
 * memoryless target nodes.
 */
TEST_F(conformance, migrate_pages01_errors)
{
	CF_SKIPPED();
	struct cf_case c = { 0 };
	struct numaplace_migrate m;
	char *p = cf_pages_on(&c, 4, cf_env.a, 0, 0, 1);
	unsigned long old[NUMAPLACE_NODE_WORDS] = { 0 };
	long pid_max = np_read_long("/proc/sys/kernel/pid_max");
	const int pids[] = { -1, (int)pid_max + 1 };
	int *shared, status, ret;
	pid_t kid;
	long sret;

	ASSERT_NE(NULL, p);
	old[cf_env.a / 64] = 1UL << (cf_env.a % 64);

	/* Sane: A -> A moves nothing, both succeed. */
	sret = cf_sys_migrate_pages(0, cf_env.a, cf_env.a);
	EXPECT_LE(0, sret);
	EXPECT_EQ(0, numaplace_migrate_range(0, p, 4 * cf_env.psz, cf_env.a,
					     0, NULL));

	for (int i = 0; i < 2; i++) {
		errno = 0;
		sret = cf_sys_migrate_pages(pids[i], cf_env.a, cf_env.a);
		EXPECT_EQ(-1, sret);
		EXPECT_EQ(ESRCH, errno);
		ret = numaplace_migrate_range(pids[i], p, 4 * cf_env.psz,
					      cf_env.a, 0, NULL);
		EXPECT_EQ(-ESRCH, ret) TH_LOG("pid %d: syscall ESRCH, MIGRATE %d",
					      pids[i], ret);
	}

	/* Not comparable: MIGRATE has no mask size. */
	errno = 0;
	EXPECT_EQ(-1, cf_sys(SYS_migrate_pages, 0, -1L, old, old));
	EXPECT_EQ(EINVAL, errno);

	/* An unreadable node array: the masks, MIGRATE's nodes_ptr. */
	errno = 0;
	EXPECT_EQ(-1, cf_sys(SYS_migrate_pages, 0, NUMAPLACE_MAX_NODES + 1,
			      (void *)-1L, (void *)-1L));
	EXPECT_EQ(EFAULT, errno);
	memset(&m, 0, sizeof(m));
	m.policy = NUMAPLACE_POLICY_PER_PAGE;
	m.start = (uintptr_t)p;
	m.len = 4 * cf_env.psz;
	m.nodes_ptr = (__u64)-1LL;
	EXPECT_EQ(-EFAULT, numaplace_migrate(&m));

	/*
	 * Offline / memoryless targets: the syscall EINVAL, MIGRATE as
	 * move_pages(2) ENODEV (Documentation/abi.md).
	 */
	for (int i = 0; i < 2; i++) {
		int node = i ? cf_env.memless : cf_env.offline;

		if (node < 0)
			continue;
		errno = 0;
		EXPECT_EQ(-1, cf_sys_migrate_pages(0, cf_env.a, node));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-ENODEV, numaplace_migrate_range(0, p, 4 * cf_env.psz,
							   node, 0, NULL));
	}

	/* Another user's process: EPERM both ways. */
	if (cf_env.root) {
		shared = mmap(NULL, 2 * sizeof(int), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, shared);
		kid = fork();
		ASSERT_LE(0, kid);
		if (!kid) {
			if (cf_drop_to(CF_NOBODY))
				_exit(1);
			errno = 0;
			shared[0] = cf_sys_migrate_pages(getppid(), cf_env.a,
							 cf_env.a) < 0 ?
				    errno : 0;
			shared[1] = -numaplace_migrate_range(getppid(), p,
							     4 * cf_env.psz,
							     cf_env.a, 0,
							     NULL);
			_exit(0);
		}
		ASSERT_EQ(kid, waitpid(kid, &status, 0));
		EXPECT_EQ(EPERM, shared[0]);
		EXPECT_EQ(EPERM, shared[1]);
		munmap(shared, 2 * sizeof(int));
	}
	cf_case_free(&c);
}

/*
 * migrate_pages02: this process's pages and another process's (as root;
 * as nobody on a nobody process), A -> B: the same placement after the
 * syscall and after numaplace over the VMAs. A THP is in the buffer.
 */
TEST_F_TIMEOUT(conformance, migrate_pages02_migrate, 120)
{
	CF_SKIPPED();
	const unsigned long per = CF_PMD / cf_env.psz;
	struct cf_case c = { 0 };
	char *p, *q, *thp;
	pid_t pid;

	if (cf_env.b < 0)
		SKIP(return, "one node with memory");
	p = cf_pages_on(&c, 32, cf_env.a, 0, 0, 1);
	thp = cf_pages_on(&c, per, cf_env.a, 0, 1, 1);
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, thp);
	EXPECT_EQ(0, cf_migrate_both("migrate_pages02 self", 0, p, 32,
				     cf_env.a, cf_env.b, 0, 0));
	if (!cf_thp_backed(thp))
		TH_LOG("no THP at %p: the THP row moves 4 KiB pages", thp);
	EXPECT_EQ(0, cf_migrate_both("migrate_pages02 self thp", 0, thp, per,
				     cf_env.a, cf_env.b, 0, 0));
	if (!cf_env.root) {
		cf_case_free(&c);
		return;
	}
	pid = cf_target(&c, 0, 1, 32, cf_env.a, &q);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, cf_migrate_both("migrate_pages02 other", pid, q, 32,
				     cf_env.a, cf_env.b, 0, 0));
	pid = cf_target(&c, CF_NOBODY, 1, 32, cf_env.a, &q);
	ASSERT_LT(0, pid);
	/* The caller as nobody: same user, no CAP_SYS_NICE, MOVE only. */
	EXPECT_EQ(0, cf_migrate_both("migrate_pages02 other as nobody", pid,
				     q, 32, cf_env.a, cf_env.b, CF_NOBODY, 0));
	/* Not dumpable: the ptrace check fails, EPERM both ways. */
	pid = cf_target(&c, CF_NOBODY, 0, 32, cf_env.a, &q);
	ASSERT_LT(0, pid);
	EXPECT_EQ(0, cf_migrate_both("migrate_pages02 non-dumpable as nobody",
				     pid, q, 32, cf_env.a, cf_env.b,
				     CF_NOBODY, EPERM));
	cf_case_free(&c);
}

/*
 * migrate_pages03: KSM-merged pages moved back and forth, as nobody (no
 * CAP_SYS_NICE: a merged page mapped many times stays) and as root
 * (MOVE_ALL: it moves).
 */
TEST_F_TIMEOUT(conformance, migrate_pages03_ksm, 120)
{
	CF_SKIPPED();
	struct cf_case c = { 0 };
	unsigned long merged = 0;
	char *p;
	int bad = 0;

	if (cf_env.b < 0)
		SKIP(return, "one node with memory");
	if (!cf_env.root || access(cf_ksm[0], W_OK))
		SKIP(return, "no KSM control (%s)", cf_ksm[0]);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, np_read_str(cf_ksm[i], self->ksm_saved[i],
					 sizeof(self->ksm_saved[i])));
	self->ksm_changed = 1;
	p = cf_pages_on(&c, CF_KSM_PAGES, cf_env.a, 0, 0, 0);
	ASSERT_NE(NULL, p);
	memset(p, 0x5a, CF_KSM_PAGES * cf_env.psz);
	ASSERT_EQ(0, madvise(p, CF_KSM_PAGES * cf_env.psz, MADV_MERGEABLE));
	ASSERT_EQ(0, np_write_str(cf_ksm[2], "1000"));
	ASSERT_EQ(0, np_write_str(cf_ksm[1], "10"));
	ASSERT_EQ(0, np_write_str(cf_ksm[0], "1"));
	for (int ms = 0; ms < CF_KSM_WAIT_MS; ms += 50) {
		merged = np_read_long("/sys/kernel/mm/ksm/pages_sharing");
		if (merged + 1 >= CF_KSM_PAGES)
			break;
		usleep(50000);
	}
	if (merged + 1 < CF_KSM_PAGES)
		SKIP(return, "KSM merged %lu of %d pages in %d ms", merged,
		     CF_KSM_PAGES, CF_KSM_WAIT_MS);
	for (int loop = 0; loop < CF_KSM_LOOPS; loop++) {
		uid_t uid = loop % 2 ? 0 : CF_NOBODY;
		char what[64];

		snprintf(what, sizeof(what), "migrate_pages03 ksm %s",
			 uid ? "nobody" : "root");
		bad += cf_migrate_both(what, 0, p, CF_KSM_PAGES, cf_env.a,
				       cf_env.b, uid, 0);
	}
	EXPECT_EQ(0, bad);
	cf_case_free(&c);
}

NP_HARNESS_MAIN
