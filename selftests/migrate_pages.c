// SPDX-License-Identifier: GPL-2.0
/*
 * migrate_pages(2) through the module: numaplace_migrate_pages() and the
 * preload shim's migrate_pages(), numa_migrate_pages() and
 * syscall(SYS_migrate_pages), each against the kernel's migrate_pages(2)
 * (the system call instruction itself, np_raw_syscall6()).
 *
 *  (numaplace_migrate_pages_pairs(), which needs no module, is a unit test
 *  of the library: tools/lib/tests/migrate_pages_pairs.c);
 *  - errors: every errno of the migrate_pages(2) man page (EFAULT for
 *    either mask; EINVAL for maxnode, a node past MAX_NUMNODES in either
 *    mask, targets with no allowed node with memory; EPERM for another
 *    user's process, a non-dumpable one, a target node outside the
 *    task's nodes without CAP_SYS_NICE; ESRCH), through every entry point
 *    and the syscall, as root and as nobody: the same errno, or both a
 *    count of pages left behind (0 or more);
 *  - placement: two target processes build the same layout of every page
 *    kind (private anon, THP, MAP_SHARED anon mapped by a second process,
 *    private anon shared by fork, memfd, a file's page cache, zero page,
 *    PROT_NONE, mlocked, paged out, never touched) on one node; one is
 *    moved by the syscall, the other by an entry point, through the same
 *    sequence of (old, new) masks; after each step the return values and
 *    every page's node (move_pages(2) with no nodes, asked of the kernel)
 *    must be the same. As root (MPOL_MF_MOVE_ALL) and as nobody (MOVE:
 *    pages mapped twice stay).
 */
#include <dlfcn.h>
#include <grp.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "kselftest_harness.h"
#include "np_test.h"
#include "migrate_lib.h"
#include "numaplace.h"

#define MP_NOBODY	65534
#define MP_PMD		(2UL << 20)
/* The shim as tools/vm/run installs it. */
#define MP_SHIM_PATH	"/usr/lib/libnumaplace-preload.so"
/* Pages of each small kind: a few PTEs of one VMA. */
#define MP_PAGES	16
/* A node id no test guest has (bit < MAX_NUMNODES, not possible). */
#define MP_NO_NODE	700
/* Bits a mask here holds: maxnode for a full mask is one more. */
#define MP_BITS		NUMAPLACE_MAX_NODES
#define MP_MAXNODE	(MP_BITS + 1)
/* Words of a mask for maxnode 2 * MP_BITS + 1. */
#define MP_BIG_WORDS	(2 * MP_BITS / 64 + 1)

/* The ways a caller reaches migrate_pages(2). */
enum mp_via {
	MP_LIB,		/* numaplace_migrate_pages() */
	MP_SHIM,	/* the shim's migrate_pages() */
	MP_SHIM_NUMA,	/* the shim's numa_migrate_pages() */
	MP_SHIM_SYSCALL, /* the shim's syscall(SYS_migrate_pages, ...) */
	MP_NR_VIA,
};

static const char *const mp_via_name[MP_NR_VIA] = {
	"numaplace_migrate_pages", "shim migrate_pages",
	"shim numa_migrate_pages", "shim syscall",
};

struct mp_bitmask {		/* libnuma's struct bitmask */
	unsigned long size;
	unsigned long *maskp;
};

typedef long (*mp_migrate_fn)(int, unsigned long, const unsigned long *,
			      const unsigned long *);
typedef int (*mp_numa_fn)(int, struct mp_bitmask *, struct mp_bitmask *);
typedef long (*mp_syscall_fn)(long, ...);

static struct {
	mp_migrate_fn migrate;
	mp_numa_fn numa;
	mp_syscall_fn sys;
	int a, b, c;		/* nodes with memory, -1 if fewer */
	int memless;		/* an online node without memory, or -1 */
	size_t psz;
} mp;

/* The kernel's answer: a count, or -errno. */
static long mp_kernel(int pid, unsigned long maxnode, const unsigned long *o,
		      const unsigned long *n)
{
	return np_raw_syscall6(SYS_migrate_pages, pid, maxnode, (uintptr_t)o,
			       (uintptr_t)n, 0, 0);
}

/* One entry point's answer, as mp_kernel()'s. */
static long mp_call(enum mp_via via, int pid, unsigned long maxnode,
		    const unsigned long *o, const unsigned long *n)
{
	struct mp_bitmask bo = { maxnode ? maxnode - 1 : 0, (unsigned long *)o };
	struct mp_bitmask bn = { maxnode ? maxnode - 1 : 0, (unsigned long *)n };
	long ret;

	errno = 0;
	switch (via) {
	case MP_LIB:
		ret = numaplace_migrate_pages(pid, maxnode, o, n);
		break;
	case MP_SHIM:
		ret = mp.migrate(pid, maxnode, o, n);
		break;
	case MP_SHIM_NUMA:
		ret = mp.numa(pid, &bo, &bn);
		break;
	default:
		ret = mp.sys(SYS_migrate_pages, pid, maxnode, o, n);
		break;
	}
	return ret < 0 ? -errno : ret;
}

static int mp_shim_open(void)
{
	void *h = dlopen(MP_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return -ENOENT;
	mp.migrate = (mp_migrate_fn)dlsym(h, "migrate_pages");
	mp.numa = (mp_numa_fn)dlsym(h, "numa_migrate_pages");
	mp.sys = (mp_syscall_fn)dlsym(h, "syscall");
	return mp.migrate && mp.numa && mp.sys ? 0 : -ENOENT;
}

static void mp_set(unsigned long *m, int node)
{
	m[node / 64] |= 1UL << (node % 64);
}

/* ---- the fixture --------------------------------------------------------- */

FIXTURE(mp)
{
	int fd;
};

FIXTURE_SETUP(mp)
{
	struct numaplace_info info;

	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &info));
	ASSERT_EQ(0, mp_shim_open()) TH_LOG("no shim at %s", MP_SHIM_PATH);
	mp.psz = sysconf(_SC_PAGESIZE);
	mp.a = mp.b = mp.c = mp.memless = -1;
	for (int n = 0; n < NUMAPLACE_MAX_NODES; n++) {
		if (!np_node_isset(info.node_memory, n)) {
			if (np_node_isset(info.node_online, n) && mp.memless < 0)
				mp.memless = n;
			continue;
		}
		if (mp.a < 0)
			mp.a = n;
		else if (mp.b < 0)
			mp.b = n;
		else if (mp.c < 0)
			mp.c = n;
	}
	ASSERT_GE(mp.a, 0);
	/* Its scanner would move pages between the two runs. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
}

FIXTURE_TEARDOWN(mp)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- targets ------------------------------------------------------------- */

enum mp_kind {
	MPK_ANON, MPK_THP, MPK_SHARED, MPK_COW, MPK_MEMFD, MPK_FILE, MPK_ZERO,
	MPK_PROTNONE, MPK_MLOCK, MPK_PAGEOUT, MPK_UNTOUCHED, MPK_NR,
};

static const char *const mp_kind_name[MPK_NR] = {
	"anon", "thp", "shared anon", "cow anon", "memfd", "file", "zero",
	"prot_none", "mlock", "paged out", "untouched",
};

/* What a target tells its parent: where each kind is. */
struct mp_layout {
	int ok;
	int node;		/* the node the target builds on */
	uintptr_t base[MPK_NR];
	unsigned long npages[MPK_NR];
};

static char *mp_map(size_t len, int flags, int fd)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A file of @len bytes written (page cache on the bound node), or memfd. */
static int mp_file(size_t len, int memfd)
{
	char path[] = "/tmp/np-mp-XXXXXX", *buf = malloc(len);
	int fd = memfd ? memfd_create("np-mp", 0) : mkstemp(path);

	if (fd >= 0 && !memfd)
		unlink(path);
	if (fd < 0 || !buf || (memset(buf, 0x6b, len),
			       write(fd, buf, len) != (ssize_t)len)) {
		free(buf);
		return -1;
	}
	free(buf);
	return fd;
}

/* Build every kind on @node; 0 or -1. */
static int mp_build(struct mp_layout *l, int node)
{
	unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };
	size_t len = MP_PAGES * mp.psz;
	char *p;
	int fd;

	mp_set(mask, node);
	if (syscall(SYS_set_mempolicy, MPOL_BIND, mask, MP_MAXNODE))
		return -1;
	for (int k = 0; k < MPK_NR; k++)
		l->npages[k] = MP_PAGES;
	l->npages[MPK_THP] = MP_PMD / mp.psz;

	/*
	 * Mapped twice: the shared mapping and a COW copy, with their second
	 * process forked before the other kinds exist (whose pages it would
	 * share too).
	 */
	p = mp_map(len, MAP_SHARED | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	memset(p, 3, len);
	l->base[MPK_SHARED] = (uintptr_t)p;
	p = mp_map(len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	memset(p, 4, len);
	l->base[MPK_COW] = (uintptr_t)p;
	if (np_fork_sharer((char *)l->base[MPK_SHARED], len) < 0 ||
	    np_fork_sharer((char *)l->base[MPK_COW], len) < 0)
		return -1;

	p = mp_map(len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	memset(p, 1, len);
	l->base[MPK_ANON] = (uintptr_t)p;

	p = mp_map(2 * MP_PMD, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	p = (char *)(((uintptr_t)p + MP_PMD - 1) & ~(MP_PMD - 1));
	madvise(p, MP_PMD, MADV_HUGEPAGE);
	memset(p, 2, MP_PMD);
	l->base[MPK_THP] = (uintptr_t)p;

	for (int memfd = 1; memfd >= 0; memfd--) {
		fd = mp_file(len, memfd);
		/* nobody may not write /tmp: a second memfd stands in. */
		if (fd < 0 && !memfd)
			fd = mp_file(len, 1);
		if (fd < 0)
			return -1;
		p = mp_map(len, memfd ? MAP_SHARED : MAP_PRIVATE, fd);
		close(fd);
		if (!p)
			return -1;
		for (size_t off = 0; off < len; off += mp.psz)
			(void)((volatile char *)p)[off];
		l->base[memfd ? MPK_MEMFD : MPK_FILE] = (uintptr_t)p;
	}

	p = mp_map(len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	for (size_t off = 0; off < len; off += mp.psz)
		(void)((volatile char *)p)[off];
	l->base[MPK_ZERO] = (uintptr_t)p;

	p = mp_map(len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	memset(p, 5, len);
	if (mprotect(p, len, PROT_NONE))
		return -1;
	l->base[MPK_PROTNONE] = (uintptr_t)p;

	p = mp_map(len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	memset(p, 6, len);
	mlock(p, len);		/* may fail as nobody: then plain anon */
	l->base[MPK_MLOCK] = (uintptr_t)p;

	p = mp_map(len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	memset(p, 7, len);
	madvise(p, len, MADV_PAGEOUT);	/* swapped only when there is swap */
	l->base[MPK_PAGEOUT] = (uintptr_t)p;

	p = mp_map(len, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	if (!p)
		return -1;
	l->base[MPK_UNTOUCHED] = (uintptr_t)p;

	return syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0) ? -1 : 0;
}

static int mp_target_build(void *arg)
{
	struct mp_layout *shared = arg;

	/* A caller that dropped to nobody is not dumpable: undo it. */
	prctl(PR_SET_DUMPABLE, 1);
	shared->ok = !mp_build(shared, shared->node);
	return 0;
}

/* A target process with every kind on @node; its pid, or -1. */
static pid_t mp_target(struct mp_layout *shared, int node)
{
	pid_t pid;

	shared->node = node;
	pid = np_fork_ready(mp_target_build, shared);
	if (pid > 0 && !shared->ok) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static void mp_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Every page's node (or -errno) of every kind of @pid, in kind order. */
static int mp_place(pid_t pid, const struct mp_layout *l, int *st,
		    unsigned long n)
{
	__u64 *pages = calloc(n, sizeof(*pages));
	unsigned long i = 0;
	long ret;

	if (!pages)
		return -1;
	for (int k = 0; k < MPK_NR; k++)
		for (unsigned long j = 0; j < l->npages[k]; j++)
			pages[i++] = l->base[k] + j * mp.psz;
	ret = np_sys_move_pages(pid, n, pages, NULL, st, 0);
	free(pages);
	return ret ? -1 : 0;
}

struct mp_step {
	char old[4], new[4];	/* node letters 'a', 'b', 'c' */
};

/* The node of letter @l, or -1 when the guest has no such node. */
static int mp_letter(char l)
{
	return l == 'a' ? mp.a : l == 'b' ? mp.b : mp.c;
}

/* @m gets the nodes of @letters: 0, or -1 when one is missing. */
static int mp_letters(unsigned long *m, const char *letters)
{
	for (; *letters; letters++) {
		if (mp_letter(*letters) < 0)
			return -1;
		mp_set(m, mp_letter(*letters));
	}
	return 0;
}

/* Both children through the same steps: 0 when every step agrees. */
static int mp_compare(enum mp_via via, const char *who)
{
	/* Steps naming node c run only on a guest with three nodes. */
	static const struct mp_step steps[] = {
		{ "a", "b" },		/* A -> B */
		{ "ab", "a" },		/* B -> A (01->0) */
		{ "a", "ab" },		/* nothing (0->01) */
		{ "ab", "b" },		/* A -> B (01->1) */
		{ "b", "a" },		/* B -> A */
		{ "ab", "bc" },		/* B -> C before A -> B: no page twice */
		{ "abc", "a" },		/* weights 3, 1: C -> A, B -> A */
		{ "a", "c" },
		{ "ac", "ab" },		/* A maps to itself, C -> B */
	};
	struct mp_layout *l = mmap(NULL, 2 * sizeof(*l), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long n = 0;
	int *st[2] = { NULL, NULL }, bad = 0;
	pid_t pid[2] = { -1, -1 };

	if (l == MAP_FAILED)
		return 1;
	for (int t = 0; t < 2; t++) {
		pid[t] = mp_target(&l[t], mp.a);
		if (pid[t] < 0) {
			printf("# %s: target %d not built\n", who, t);
			bad = 1;
			goto out;
		}
	}
	for (int k = 0; k < MPK_NR; k++)
		n += l[0].npages[k];
	st[0] = calloc(n, sizeof(int));
	st[1] = calloc(n, sizeof(int));
	if (!st[0] || !st[1]) {
		bad = 1;
		goto out;
	}
	for (size_t s = 0; s < ARRAY_SIZE(steps); s++) {
		unsigned long o[NUMAPLACE_NODE_WORDS] = { 0 };
		unsigned long w[NUMAPLACE_NODE_WORDS] = { 0 };
		long ret[2];

		if (mp_letters(o, steps[s].old) || mp_letters(w, steps[s].new))
			continue;
		ret[0] = mp_kernel(pid[0], MP_MAXNODE, o, w);
		ret[1] = mp_call(via, pid[1], MP_MAXNODE, o, w);
		if (mp_place(pid[0], &l[0], st[0], n) ||
		    mp_place(pid[1], &l[1], st[1], n)) {
			bad = 1;
			goto out;
		}
		if (ret[0] != ret[1]) {
			printf("# %s step %zu: syscall %ld, %s %ld\n", who, s,
			       ret[0], mp_via_name[via], ret[1]);
			bad++;
		}
		for (unsigned long i = 0, k = 0, j = 0; i < n; i++, j++) {
			while (j == l[0].npages[k]) {
				k++;
				j = 0;
			}
			if (st[0][i] == st[1][i])
				continue;
			printf("# %s step %zu: %s page %lu: syscall %d, %s %d\n",
			       who, s, mp_kind_name[k], j, st[0][i],
			       mp_via_name[via], st[1][i]);
			bad++;
		}
	}
out:
	for (int t = 0; t < 2; t++)
		if (pid[t] > 0)
			mp_reap(pid[t]);
	free(st[0]);
	free(st[1]);
	munmap(l, 2 * sizeof(*l));
	return bad;
}

/* mp_compare() in a child that is @uid (0: root); its differences. */
static int mp_compare_as(enum mp_via via, uid_t uid)
{
	char who[96];
	int status;
	pid_t pid;

	snprintf(who, sizeof(who), "%s as %s", mp_via_name[via],
		 uid ? "nobody" : "root");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		if (uid && np_drop_to(uid))
			_exit(1);
		_exit(mp_compare(via, who) ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

TEST_F_TIMEOUT(mp, placement, NP_TIMEOUT(300))
{
	int bad = 0;

	NP_SKIPPED();
	if (mp.b < 0)
		SKIP(return, "one node with memory");
	if (geteuid())
		SKIP(return, "needs root to test both MOVE and MOVE_ALL");
	for (int via = 0; via < MP_NR_VIA; via++)
		for (int nobody = 0; nobody < 2; nobody++)
			bad += mp_compare_as(via, nobody ? MP_NOBODY : 0);
	EXPECT_EQ(0, bad);
}

/* ---- errors -------------------------------------------------------------- */

struct mp_err_case {
	const char *name;
	int pid;		/* 0: the caller; -2: the root target */
	unsigned long maxnode;
	const unsigned long *old, *new;
	int via_mask;		/* entry points that take these arguments */
};

/* Every entry point but numa_migrate_pages(), which sets its own maxnode. */
#define MP_VIA_MAXNODE	((1 << MP_LIB) | (1 << MP_SHIM) | (1 << MP_SHIM_SYSCALL))
#define MP_VIA_ALL	((1 << MP_NR_VIA) - 1)

/* Every case against the kernel; the number of differences. */
static int mp_errors_run(const struct mp_err_case *cases, size_t nr,
			 pid_t root_target, const char *who)
{
	int bad = 0;

	for (size_t c = 0; c < nr; c++) {
		const struct mp_err_case *k = &cases[c];
		int pid = k->pid == -2 ? root_target : k->pid;
		long want = mp_kernel(pid, k->maxnode, k->old, k->new), got;

		for (int via = 0; via < MP_NR_VIA; via++) {
			if (!(k->via_mask & (1 << via)))
				continue;
			got = mp_call(via, pid, k->maxnode, k->old, k->new);
			/*
			 * The errno must match. A count of pages left behind
			 * is not an error and is not comparable here: each
			 * call moves what the one before it left, and a page
			 * busy for one may not be for the next (placement is
			 * the oracle tests' business).
			 */
			if (got == want || (got >= 0 && want >= 0))
				continue;
			printf("# %s, %s: syscall %ld, %s %ld\n", who, k->name,
			       want, mp_via_name[via], got);
			bad++;
		}
	}
	return bad;
}

TEST_F_TIMEOUT(mp, errors, NP_TIMEOUT(120))
{
	/* Room for maxnode 2 * MP_BITS + 1: every word the kernel reads. */
	static unsigned long a[MP_BIG_WORDS], b[MP_BIG_WORDS],
		none[MP_BIG_WORDS], empty[MP_BIG_WORDS], far[MP_BIG_WORDS],
		memless[MP_BIG_WORDS];
	const unsigned long *bad_ptr = (const unsigned long *)-4096L;
	long pid_max = np_read_long("/proc/sys/kernel/pid_max");
	int *shared, status, bad = 0;
	pid_t root_target, kid;

	NP_SKIPPED();
	if (geteuid())
		SKIP(return, "needs root for the other user's process");
	mp_set(a, mp.a);
	mp_set(b, mp.b >= 0 ? mp.b : mp.a);
	mp_set(none, MP_NO_NODE);
	/* Online, no memory (tools/vm/run --memoryless); else none's. */
	mp_set(memless, mp.memless >= 0 ? mp.memless : MP_NO_NODE);
	/* A node past every MAX_NUMNODES: the last bit of a 2049-bit mask. */
	mp_set(far, 2 * MP_BITS - 1);
	{
		const struct mp_err_case cases[] = {
			{ "sane A->B", 0, MP_MAXNODE, a, b, MP_VIA_ALL },
			{ "old empty", 0, MP_MAXNODE, empty, b, MP_VIA_ALL },
			{ "NULL old", 0, MP_MAXNODE, NULL, b, MP_VIA_MAXNODE },
			{ "EFAULT old", 0, MP_MAXNODE, bad_ptr, b, MP_VIA_ALL },
			{ "EFAULT new", 0, MP_MAXNODE, a, bad_ptr, MP_VIA_ALL },
			{ "EFAULT both", 0, MP_MAXNODE, bad_ptr, bad_ptr,
			  MP_VIA_ALL },
			{ "EINVAL maxnode huge", 0, 8 * 4096 + 2, a, b,
			  MP_VIA_MAXNODE },
			{ "EINVAL maxnode 0", 0, 0, a, b, MP_VIA_MAXNODE },
			{ "maxnode 1", 0, 1, a, b, MP_VIA_MAXNODE },
			{ "EINVAL old past MAX_NUMNODES", 0, 2 * MP_BITS + 1,
			  far, b, MP_VIA_MAXNODE },
			{ "EINVAL new past MAX_NUMNODES", 0, 2 * MP_BITS + 1,
			  a, far, MP_VIA_MAXNODE },
			{ "EINVAL new no node (CAP_SYS_NICE)", 0, MP_MAXNODE,
			  a, none, MP_VIA_ALL },
			{ "EINVAL new memoryless", 0, MP_MAXNODE, a, memless,
			  MP_VIA_ALL },
			{ "EINVAL new empty", 0, MP_MAXNODE, a, empty,
			  MP_VIA_ALL },
			{ "ESRCH pid -1", -1, MP_MAXNODE, a, b, MP_VIA_ALL },
			{ "ESRCH pid_max + 1", (int)pid_max + 1, MP_MAXNODE, a,
			  b, MP_VIA_ALL },
			{ "EFAULT before ESRCH", -1, MP_MAXNODE, bad_ptr, b,
			  MP_VIA_ALL },
			{ "root target", -2, MP_MAXNODE, a, b, MP_VIA_ALL },
			{ "EPERM new outside the task's nodes", -2, MP_MAXNODE,
			  a, none, MP_VIA_ALL },
			{ "kthreadd (no mm: EINVAL; nobody: EPERM)", 2, MP_MAXNODE,
			  a, b, MP_VIA_ALL },
		};

		shared = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, shared);
		/* root's process, not dumpable: nobody may not read it. */
		root_target = fork();
		ASSERT_LE(0, root_target);
		if (!root_target) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (;;)
				pause();
		}
		bad += mp_errors_run(cases, ARRAY_SIZE(cases), root_target,
				     "root");
		fflush(stdout);
		kid = fork();
		ASSERT_LE(0, kid);
		if (!kid) {
			if (np_drop_to(MP_NOBODY))
				_exit(1);
			*shared = mp_errors_run(cases, ARRAY_SIZE(cases),
						root_target, "nobody");
			_exit(0);
		}
		ASSERT_EQ(kid, waitpid(kid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		bad += *shared;
		/* Same user, not dumpable: EPERM from the ptrace check. */
		kid = fork();
		ASSERT_LE(0, kid);
		if (!kid) {
			pid_t t;

			if (np_drop_to(MP_NOBODY))
				_exit(1);
			t = fork();
			if (!t) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				prctl(PR_SET_DUMPABLE, 0);
				for (;;)
					pause();
			}
			usleep(100000);
			*shared = mp_errors_run(cases + ARRAY_SIZE(cases) - 3,
						2, t, "nobody, non-dumpable");
			mp_reap(t);
			_exit(0);
		}
		ASSERT_EQ(kid, waitpid(kid, &status, 0));
		bad += *shared;
		mp_reap(root_target);
		munmap(shared, sizeof(int));
	}
	EXPECT_EQ(0, bad);
}

NP_HARNESS_MAIN
