// SPDX-License-Identifier: GPL-2.0
/*
 * Conformance: the situations of LTP's move_pages01..12, each run through
 * the system call and through libnumaplace, results compared field by
 * field (the engine: cf_lib.c). Random layouts are conformance_random.c's,
 * LTP's migrate_pages01..03 conformance_migrate_pages.c's.
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
#include "cf_lib.h"
#include "kselftest_harness.h"

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
	return cf_passes(c, 0, e->a);
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
	return cf_passes(c, 15, e->b);
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
	return cf_fails(c, ENODEV);
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
	return cf_fails_on(c, pid, MPOL_MF_MOVE, ESRCH);
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
	return cf_fails(c, EFAULT);
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
	return cf_passes(c, 0, e->a);
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
	return cf_fails(c, EINVAL);
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
	return cf_fails(c, EPERM);
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
			c->thp_second[i] = i % per ? CF_ACCEPT_HUGETLB : CF_ACCEPT_NONE;
	c->flags = arg == 2 ? 0 : MPOL_MF_MOVE;
	return cf_passes(c, 0, arg == 2 ? e->a : e->b);
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
		c->thp_second[i] = CF_ACCEPT_BUSY;
	c->flags = MPOL_MF_MOVE;
	return cf_passes(c, 0, e->b);
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
	return cf_fails_on(c, pid, arg < 2 ? MPOL_MF_MOVE : 0, EINVAL);
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


/* ---- the fixture ------------------------------------------------------ */

FIXTURE(conformance)
{
	int fd;
	char hp_saved[2][32];	/* nr_hugepages of nodes a and b */
	int hp_changed;
};

FIXTURE_SETUP(conformance)
{
	self->fd = -1;
	CF_SETUP();
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


NP_TEST_F(conformance, move_pages01_query_node)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages01", cf_mp01_query, 0, 1));
}

NP_TEST_F(conformance, move_pages02_move)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages02", cf_mp02_move, 0, 1));
}

NP_TEST_F(conformance, move_pages03_shared_move_all)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages03", cf_mp_shared, 1, 1));
}

NP_TEST_F(conformance, move_pages05_shared_without_move_all)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages05", cf_mp_shared, 0, 1));
}

NP_TEST_F(conformance, move_pages04_not_present)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages04", cf_mp04_absent, 0, 2));
}

NP_TEST_F(conformance, move_pages06_bad_node)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages06", cf_mp06_bad_node, 0, 8));
}

NP_TEST_F(conformance, move_pages07_bad_pid)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages07", cf_mp07_bad_pid, 0, 3));
}

NP_TEST_F(conformance, move_pages08_huge_count)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages08", cf_mp08_huge_count, 0, 3));
}

NP_TEST_F(conformance, move_pages09_already_there)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages09", cf_mp09_in_place, 0, 1));
}

NP_TEST_F(conformance, move_pages10_bad_flags)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages10", cf_mp10_bad_flags, 0, 4));
}

NP_TEST_F(conformance, move_pages11_move_all_without_cap)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "move_pages11", cf_mp11_move_all_nocap, 0, 2));
}

TEST_F_TIMEOUT(conformance, move_pages12_hugetlb, NP_TIMEOUT(60))
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

NP_TEST_F(conformance, thp_move_second_page)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "thp_move", cf_thp_move, 0, 1));
}

NP_TEST_F(conformance, other_process)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "other_process", cf_other, 0, 7));
}

NP_TEST_F(conformance, no_mm)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "no_mm", cf_no_mm, 0, 4));
}

NP_TEST_F(conformance, unmovable_pfnmap)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "unmovable", cf_unmovable, 0, 2));
}

NP_TEST_F(conformance, null_arrays)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "null_arrays", cf_null, 0, 4));
}

NP_TEST_F(conformance, query_page_kinds)
{
	CF_SKIPPED();
	EXPECT_EQ(0, cf_cases(_metadata, "query_kinds", cf_query_kinds, 0, 1));
}

/*
 * Does the syscall give the same answers twice over round @arg, built
 * twice? 1 yes, 0 no (it differs from itself: the layout is not one the
 * kernel answers deterministically), -1 when it could not run.
 */

NP_HARNESS_MAIN
