// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE against move_pages(2).
 *
 * Fixture "mig" runs once per engine (default: the module's choice; kernel:
 * NUMAPLACE_MIGRATE_ENGINE_KERNEL; vma: NUMAPLACE_MIGRATE_ENGINE_VMA,
 * skipped when INFO lacks the feature):
 *  - oracle_*: two identical copies of a layout of every page kind
 *    (anon written/untouched/zero/PROT_NONE/read-only/moved, holes, PMD
 *    THP, THP on the target, PTE-mapped THP, PROT_NONE THP, huge zero
 *    page, private anon and THP shared with a child by fork(), MAP_SHARED
 *    anon shared with the child, memfd, tmpfs file, swapped out, hugetlb,
 *    [vvar]). One goes through move_pages(2), one through the ioctl, with
 *    the same targets. Both are checked against a simulation of the
 *    syscall (do_pages_move()'s batches) over the page states read from
 *    /proc before the call (np_model_page(), /proc/kpagecount): the
 *    syscall against it proves the simulation, the ioctl against the
 *    module's column of it proves the module. Statuses, final placement
 *    (from pagemap, the child's too) and counters are compared.
 *    The module's column differs from the syscall's only where the ABI
 *    says so: without NUMAPLACE_MIGRATE_AS_SYSCALL the answers are 6.12's
 *    on both kernels (6.1: untouched anon -EFAULT and PROT_NONE -ENOENT
 *    only with the flag); an entry whose folio the call already took is
 *    answered with the node, where the syscall says -EBUSY (the second
 *    4 KiB of a THP, kernel-facts 2.3; a repeated address); a hugetlb
 *    tail address moves the page, where 6.1's syscall says -EACCES
 *    (kernel-facts 2.2). With ENGINE_VMA only private anonymous pages
 *    mapped once move; the rest (large folios without
 *    NUMAPLACE_MIGRATE_SPLIT_OK, file, shmem, hugetlb, pages mapped by
 *    two processes under MOVE_ALL) stays with -EBUSY (abi.md, Engines).
 *  - target_node_full, sigkill_bounded, thp_split_ok: -ENOMEM per page
 *    with data intact, a killed caller, large folios per engine.
 * Fixture "migrate" holds the ABI, bad-input and permission rows of
 * reliability.md, policies CPU and INTERLEAVE, and the cpuset check.
 * Data integrity under concurrent writers is migrate_integrity.c.
 *
 * NP_ONLY=word,word runs only the tests whose names contain one of the
 * words (the harness has no filter): NP_ONLY=oracle,cpuset.
 */
#include <grp.h>
#include <limits.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "np_test.h"
#include "kselftest_harness.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

#define NP_PMD		(2UL << 20)
#define NP_SEG_PAGES	512		/* pages of one 2 MiB layout segment */
#define NP_NOBODY	65534
#define NP_HUGE_COUNT	(1ULL << 40)
#define NP_HP_PATH	"/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages"
/* A killed caller must be gone this fast (times np_time_scale()). */
#define NP_KILL_MS	2000
/* A migration to a full node takes no longer than this. */
#define NP_FULL_MS	10000
/* Pages of the SIGKILL test's buffer: 256 MiB. */
#define NP_KILL_PAGES	(65536UL)
/* No batch yet (the syscall's NUMA_NO_NODE). */
#define NP_NO_NODE	(-1)

static long psz;

/* NP_SKIPPED(), and a test NP_ONLY leaves out is skipped too. */
#define NP_SKIPPED_OR_FILTERED()						\
	do {								\
		NP_SKIPPED();						\
		if (np_filtered(_metadata->name))			\
			SKIP(return, "not in NP_ONLY");			\
	} while (0)

/* NP_ONLY=a,b runs only the tests whose name contains a or b. */
static int np_filtered(const char *name)
{
	const char *only = getenv("NP_ONLY"), *p;
	size_t len;

	for (p = only; p && *p; p += len + !!p[len]) {
		char pat[64];

		len = strcspn(p, ",");
		snprintf(pat, sizeof(pat), "%.*s", (int)len, p);
		if (len && strstr(name, pat))
			return 0;
	}
	return !!only;
}

static __u64 np_rnd(__u64 *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static size_t np_rnd_below(__u64 *s, size_t n)
{
	return n ? np_rnd(s) % n : 0;
}

/* Private anonymous memory aligned to a PMD, THP asked for or refused. */
static char *np_pmd_map(size_t len, int thp)
{
	char *raw, *p;

	raw = mmap(NULL, len + NP_PMD, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + NP_PMD - 1) & ~(NP_PMD - 1));
	if (p > raw)
		munmap(raw, p - raw);
	munmap(p + len, raw + NP_PMD - p);
	if (madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/* The first word of page @i as np_fill() writes it in generation @g. */
static __u64 np_stamp(size_t i, __u64 g)
{
	return (i * 0x9e3779b97f4a7c15ULL) ^ (g << 48) ^ 0x5a5a;
}

/* Stamp every 64-bit word of pages [0, n) of @p with np_stamp(i, g) + k. */
static void np_fill(char *p, size_t n, __u64 g)
{
	for (size_t i = 0; i < n; i++) {
		__u64 *w = (__u64 *)(p + i * psz), v = np_stamp(i, g);

		for (size_t k = 0; k < psz / 8; k++)
			w[k] = v + k;
	}
}

/* Pages of [0, n) of @p that do not hold np_fill(p, n, g). */
static size_t np_fill_bad(const char *p, size_t n, __u64 g, size_t *first)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		const __u64 *w = (const __u64 *)(p + i * psz);
		__u64 v = np_stamp(i, g);

		for (size_t k = 0; k < psz / 8; k++) {
			if (w[k] != v + k) {
				if (!bad && first)
					*first = i;
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* The node of each page of the caller's @n addresses (query), or errno. */
static int np_nodes_of(int pid, const __u64 *addrs, size_t n, int *st)
{
	long ret = np_sys_query(pid, n, addrs, st);

	return ret > 0 ? -EIO : (int)ret;
}

static void np_range_addrs(__u64 *a, uintptr_t base, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = base + i * psz;
}

/* The first online CPU of @node, or -1. */
static int np_cpu_of_node(int node)
{
	char path[96], buf[256];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		 node);
	if (np_read_str(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	return atoi(buf);
}

/*
 * kB of @node's meminfo lines named in @keys (comma-separated, e.g.
 * "MemFree:"), added up; -1 if none is there.
 */
static long np_node_kb(int node, const char *keys)
{
	char path[96], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
		 node);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char key[64], *p;

		/* "Node 1 MemFree:        123 kB" */
		if (sscanf(line, "Node %*d %63s", key) != 1)
			continue;
		p = strstr(keys, key);
		if (!p || (p > keys && p[-1] != ',') ||
		    (p[strlen(key)] && p[strlen(key)] != ','))
			continue;
		p = strstr(line, key) + strlen(key);
		kb = (kb < 0 ? 0 : kb) + strtol(p, NULL, 10);
	}
	fclose(f);
	return kb;
}

static int np_have_swap(void)
{
	char line[256];
	int lines = 0;
	FILE *f = fopen("/proc/swaps", "re");

	while (f && fgets(line, sizeof(line), f))
		lines++;
	if (f)
		fclose(f);
	return lines > 1;
}

/* [vvar]'s range of the caller; 0 or -ENOENT. */
static int np_vvar(unsigned long *s, unsigned long *e)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int ret = -ENOENT;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vvar]\n") &&
		    sscanf(line, "%lx-%lx", s, e) == 2) {
			ret = 0;
			break;
		}
	if (f)
		fclose(f);
	return ret;
}

static int np_drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* Read @pid's stat state letter, or 0. */
static int np_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (np_read_str(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* ------------------------------------------------------------------ */
/* Layouts of every page kind, built twice identically.               */
/* ------------------------------------------------------------------ */

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

static const char *const np_seg_names[] = {
	"anon 4k", "thp", "thp on node 1", "thp pte-mapped", "thp protnone",
	"huge zero", "fork 4k", "fork thp", "swap", "shared anon", "memfd",
	"tmpfs file", "hugetlb",
};

struct np_lay {
	char *base;
	size_t npages;
	int nseg;
	enum np_seg seg[NP_SEG_MAX];
	int fds[NP_SEG_MAX];
	int *target;		/* per page */
};

static void np_lay_free(struct np_lay *l)
{
	for (int i = 0; i < l->nseg; i++)
		if (l->fds[i] >= 0)
			close(l->fds[i]);
	if (l->base)
		munmap(l->base, l->npages * psz);
	free(l->target);
	memset(l, 0, sizeof(*l));
}

static void np_touch_w(char *p, size_t i)
{
	((volatile char *)p)[i * psz] = (char)(i | 1);
}

static void np_touch_r(char *p, size_t i)
{
	(void)((volatile char *)p)[i * psz];
}

static int np_move1(char *p, int node)
{
	__u64 a = (uintptr_t)p;
	int st = NP_SENTINEL;

	return np_sys_move_pages(0, 1, &a, &node, &st, NP_MF_MOVE) ?: st;
}

/* A file of one segment with a quarter of its pages in the page cache. */
static int np_seg_file(int memfd)
{
	char path[] = "/tmp/np-migrate-XXXXXX", buf[64];
	int fd = memfd ? memfd_create("np-migrate", MFD_CLOEXEC) :
		 mkstemp(path);

	if (fd < 0)
		return -1;
	if (!memfd)
		unlink(path);
	if (ftruncate(fd, NP_PMD)) {
		close(fd);
		return -1;
	}
	for (size_t i = 3; i < NP_SEG_PAGES; i += 4) {
		memset(buf, (int)i, sizeof(buf));
		if (pwrite(fd, buf, sizeof(buf), i * psz) != sizeof(buf)) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Build one segment at @c; its targets into @t. 0 or -errno. */
static int np_seg_build(struct np_lay *l, int k, char *c, int *t, __u64 *s)
{
	const int prot = PROT_READ | PROT_WRITE;
	const int anon = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
	enum np_seg kind = l->seg[k];
	int thp = (kind >= NP_SEG_THP && kind <= NP_SEG_HUGE_ZERO) ||
		  kind == NP_SEG_FORK_THP;
	char *m;

	for (size_t i = 0; i < NP_SEG_PAGES; i++)
		t[i] = thp || kind == NP_SEG_HUGETLB ? 1 :
		       (int)np_rnd_below(s, 2);
	switch (kind) {
	case NP_SEG_SHARED_ANON:
		m = mmap(c, NP_PMD, prot, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0);
		break;
	case NP_SEG_MEMFD:
	case NP_SEG_FILE:
		l->fds[k] = np_seg_file(kind == NP_SEG_MEMFD);
		if (l->fds[k] < 0)
			return -errno;
		m = mmap(c, NP_PMD, prot, MAP_SHARED | MAP_FIXED, l->fds[k], 0);
		break;
	case NP_SEG_HUGETLB:
		m = mmap(c, NP_PMD, prot, anon | MAP_HUGETLB, -1, 0);
		break;
	default:
		m = mmap(c, NP_PMD, prot, anon, -1, 0);
		if (m != MAP_FAILED &&
		    madvise(c, NP_PMD, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
			return -errno;
		break;
	}
	if (m == MAP_FAILED)
		return -errno;

	switch (kind) {
	case NP_SEG_4K:
		for (size_t i = 0; i < NP_SEG_PAGES; i++) {
			size_t r = i % 16;

			if (r == 6 || r == 9)
				np_touch_r(c, i);
			else if (r != 7 && r != 10)
				np_touch_w(c, i);
			if (r == 11 || r == 12)
				np_move1(c + i * psz, 1);
		}
		for (size_t i = 0; i < NP_SEG_PAGES; i++) {
			size_t r = i % 16;

			if (r == 8 || r == 9 || r == 10 || r == 12)
				mprotect(c + i * psz, psz, PROT_NONE);
			else if (r == 15)
				mprotect(c + i * psz, psz, PROT_READ);
		}
		/* A hole: smaller than any mmap() the checks make. */
		munmap(c + 200 * psz, 16 * psz);
		break;
	case NP_SEG_THP:
	case NP_SEG_THP_ON1:
	case NP_SEG_THP_PTE:
	case NP_SEG_THP_PROTNONE:
	case NP_SEG_FORK_THP:
		memset(c, 0x11 + kind, NP_PMD);
		/* No khugepaged: it would re-collapse what an engine split. */
		madvise(c, NP_PMD, MADV_NOHUGEPAGE);
		if (kind == NP_SEG_THP_ON1)
			np_move1(c, 1);
		else if (kind == NP_SEG_THP_PTE)
			mprotect(c + 100 * psz, 100 * psz, PROT_READ);
		else if (kind == NP_SEG_THP_PROTNONE)
			mprotect(c, NP_PMD, PROT_NONE);
		break;
	case NP_SEG_HUGE_ZERO:
		np_touch_r(c, 7);
		break;
	case NP_SEG_FORK_4K:
		for (size_t i = 0; i < NP_SEG_PAGES; i++) {
			if (i % 4 != 3)
				np_touch_w(c, i);
			if (i % 4 == 2)
				np_move1(c + i * psz, 1);
		}
		break;
	case NP_SEG_SWAP:
		for (size_t i = 0; i < NP_SEG_PAGES; i++)
			np_touch_w(c, i);
		madvise(c, NP_PMD / 2, MADV_PAGEOUT);
		break;
	case NP_SEG_SHARED_ANON:
		for (size_t i = 0; i < NP_SEG_PAGES; i++) {
			if (i % 4 != 3)
				np_touch_w(c, i);
			if (i % 8 == 1)
				np_move1(c + i * psz, 1);
		}
		break;
	case NP_SEG_MEMFD:
	case NP_SEG_FILE:
		for (size_t i = 0; i < NP_SEG_PAGES; i++) {
			if (i % 4 == 0)
				np_touch_w(c, i);
			else if (i % 4 == 1)
				np_touch_r(c, i);
			if (i % 8 == 4)
				np_move1(c + i * psz, 1);
		}
		break;
	case NP_SEG_HUGETLB:
		memset(c, 0x77, NP_PMD);
		break;
	case NP_SEG_MAX:
		break;
	}
	/* Only what is meant to be shared goes to the child. */
	if (kind != NP_SEG_FORK_4K && kind != NP_SEG_FORK_THP &&
	    kind != NP_SEG_SHARED_ANON)
		madvise(c, NP_PMD, MADV_DONTFORK);
	return 0;
}

/*
 * Lay out @nseg segments of @kinds (pages faulted in on node 0), targets
 * from @seed. 0 or -errno.
 */
static int np_lay_build(struct np_lay *l, const enum np_seg *kinds, int nseg,
			__u64 seed)
{
	__u64 s = seed;
	int ret = 0;

	memset(l, 0, sizeof(*l));
	for (int k = 0; k < NP_SEG_MAX; k++)
		l->fds[k] = -1;
	l->nseg = nseg;
	memcpy(l->seg, kinds, nseg * sizeof(*kinds));
	l->npages = nseg * NP_SEG_PAGES;
	l->target = calloc(l->npages, sizeof(int));
	l->base = np_pmd_map(nseg * NP_PMD, 0);
	if (!l->target || !l->base)
		return -ENOMEM;
	np_mempolicy(MPOL_BIND, 0);
	for (int k = 0; k < nseg && !ret; k++)
		ret = np_seg_build(l, k, l->base + k * NP_PMD,
				   l->target + k * NP_SEG_PAGES, &s);
	np_mempolicy(MPOL_DEFAULT, -1);
	return ret;
}

/* The fork() child: maps the shared segments of @a and @b, waits. */
static pid_t np_lay_fork(const struct np_lay *a, const struct np_lay *b)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		const struct np_lay *l[2] = { a, b };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		/* The child maps the first half of the shared anon pages. */
		for (int j = 0; j < 2; j++)
			for (int k = 0; l[j] && k < l[j]->nseg; k++)
				if (l[j]->seg[k] == NP_SEG_SHARED_ANON)
					for (size_t i = 0; i < NP_SEG_PAGES / 2; i++)
						np_touch_r(l[j]->base + k * NP_PMD, i);
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pfd[0]);
	return pid;
}

/* ------------------------------------------------------------------ */
/* Page states before a call, and what each side must answer.         */
/* ------------------------------------------------------------------ */

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

static int np_cmp_folio(const void *x, const void *y, void *arg)
{
	const struct np_pre *pre = arg;
	const size_t *a = x, *b = y;

	if (pre[*a].folio != pre[*b].folio)
		return pre[*a].folio < pre[*b].folio ? -1 : 1;
	return *a < *b ? -1 : *a > *b;
}

/* The model's state of @n addresses of @pid. 0 or -errno. */
static int np_pre_read(int pid, const __u64 *addrs, size_t n,
		       struct np_pre *pre)
{
	int kpc = open("/proc/kpagecount", O_RDONLY | O_CLOEXEC), ret;
	size_t *ord = calloc(n + 1, sizeof(*ord)), j;
	struct np_model m;

	if (kpc < 0 || !ord) {
		ret = kpc < 0 ? -errno : -ENOMEM;
		goto out;
	}
	ret = np_model_open(&m, pid);
	if (ret)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct np_pre *p = &pre[i];
		__u64 cnt = 0;

		memset(p, 0, sizeof(*p));
		np_model_page(&m, addrs[i], &p->pg);
		p->rep = i;
		if (!(p->pg.what & NPW_PRESENT) || (p->pg.what & NPW_ZERO) ||
		    p->pg.node < 0)
			continue;
		p->large = !!(p->pg.what & (NPW_THP | NPW_HUGETLB));
		p->nr = p->large ? NP_SEG_PAGES : 1;
		p->folio = p->large ? p->pg.pfn & ~(NP_SEG_PAGES - 1UL) :
			   p->pg.pfn;
		p->hugetlb_tail = (p->pg.what & NPW_HUGETLB) &&
				  p->pg.pfn % NP_SEG_PAGES;
		if (pread(kpc, &cnt, 8, p->pg.pfn * 8) != 8)
			ret = -EIO;
		p->shared = cnt > 1;
	}
	np_model_close(&m);
	/* Each folio's entries name the first of them. */
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), np_cmp_folio, pre);
	for (size_t i = 0; i < n; i = j) {
		for (j = i + 1; j < n && pre[ord[j]].folio == pre[ord[i]].folio;
		     j++)
			if (pre[ord[i]].folio)
				pre[ord[j]].rep = ord[i];
	}
out:
	if (kpc >= 0)
		close(kpc);
	free(ord);
	return ret;
}

/* The lookup's verdict: 0 for a page to handle, else its status. */
static int np_sim_lookup(const struct np_pre *p, int old)
{
	int st = old ? p->pg.st_old : p->pg.st_new;

	/* !vma_migratable(): VM_IO | VM_PFNMAP. */
	if (p->pg.what & (NPW_PFNMAP | NPW_NOVMA))
		return -EFAULT;
	return st < 0 ? st : 0;
}

/*
 * What the migrate_vma engine moves (abi.md): private anonymous pages
 * mapped once, a PMD-mapped THP only when SPLIT_OK lets it split it;
 * the rest (file, shmem, hugetlb, mapped twice) stays with -EBUSY.
 */
static int np_vma_takes(const struct np_pre *p, const struct np_sim *o)
{
	if (!(p->pg.what & NPW_ANON) || (p->pg.what & NPW_HUGETLB) ||
	    p->shared)
		return 0;
	return !p->large || (o->split_ok && (p->pg.what & NPW_PMD));
}

/*
 * Expected statuses @exp of a call on entries @pre with targets @tgt;
 * node[rep] is each folio's node before the call (pre[].pg.node) and
 * after it.
 *
 * The syscall (do_pages_move(), kernel-facts 2.1-2.3): entries go one by
 * one; consecutive entries with one target that were isolated form a
 * batch, migrated (and answered with the target) when the target
 * changes, after an entry that was not isolated (answered first), and at
 * the end. An entry whose folio waits in the batch fails isolation:
 * -EBUSY. 6.1: a hugetlb tail address is -EACCES.
 *
 * The module: each folio is handled once and every entry is answered
 * with the node its page is on at the end.
 */
/* The syscall's batch goes: its entries are answered with its target. */
static void np_sim_flush(size_t *pend, size_t *npend, int *exp, int *node,
			 const struct np_pre *pre, int cur)
{
	while (*npend) {
		size_t j = pend[--*npend];

		exp[j] = node[pre[j].rep] = cur;
	}
}

static void np_simulate(struct np_sim *o, const struct np_pre *pre,
			const int *tgt, size_t n, int *exp, int *node)
{
	size_t *pend = calloc(n + 1, sizeof(*pend)), npend = 0;
	unsigned int *inb = calloc(n + 1, sizeof(*inb)), batch = 1;
	char *moved = calloc(n + 1, 1);
	int cur = NP_NO_NODE;

	o->moved_pages = o->moved_folios = o->in_place = 0;
	o->engines = 0;
	for (size_t i = 0; i < n && (!pend || !inb || !moved); i++)
		exp[i] = INT_MIN;	/* no memory: nothing can match */
	for (size_t i = 0; i < n && pend && inb && moved; i++) {
		const struct np_pre *p = &pre[i];
		int t = tgt[i], st = np_sim_lookup(p, o->old);
		size_t r = p->rep;

		if (!o->syscall) {
			if (!st) {
				if (node[r] == t) {
					st = t;
					o->in_place += !moved[r];
				} else if (p->shared && !o->move_all) {
					st = -EACCES;
				} else if (o->vma_only && !np_vma_takes(p, o)) {
					st = -EBUSY;
				} else {
					node[r] = st = t;
					moved[r] = 1;
					o->moved_folios++;
					o->moved_pages += p->nr;
					/* abi.md: the VMA engine's pages, and the rest. */
					if (o->vma_only ||
					    (!o->kernel_only && o->vma_engine &&
					     np_vma_takes(p, o)))
						o->engines |= o->vma_engine;
					else
						o->engines |= NUMAPLACE_ENGINE_KERNEL;
				}
			}
			exp[i] = st;
			continue;
		}
		if (cur != NP_NO_NODE && t != cur) {
			np_sim_flush(pend, &npend, exp, node, pre, cur);
			batch++;
		}
		cur = t;
		if (!st) {
			if (node[r] == t)
				st = t;
			else if (p->shared && !o->move_all)
				st = -EACCES;
			else if (o->old && p->hugetlb_tail)
				st = -EACCES;
			else if (inb[r] == batch)
				st = -EBUSY;
			else {
				inb[r] = batch;
				pend[npend++] = i;
				continue;
			}
		}
		/* Not isolated: answered, then the batch goes. */
		exp[i] = st;
		np_sim_flush(pend, &npend, exp, node, pre, cur);
		batch++;
		cur = NP_NO_NODE;
	}
	if (pend)
		np_sim_flush(pend, &npend, exp, node, pre, cur);
	free(pend);
	free(inb);
	free(moved);
}

/* ------------------------------------------------------------------ */
/* Fixture "mig": every test once per engine.                         */
/* ------------------------------------------------------------------ */

FIXTURE(mig)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	__u32 eflags;		/* the variant's NUMAPLACE_MIGRATE_ENGINE_* */
	__u32 allowed;		/* NUMAPLACE_ENGINE_* it may report */
	int vma_only;
	pid_t kid;
	struct np_lay a, b;
	long hp_orig[2];	/* nr_hugepages of nodes 0, 1; -1: untouched */
	long t0;		/* setup's CLOCK_MONOTONIC ms */
};

NP_ENGINE_VARIANTS(mig);

/* nr_hugepages of nodes 0 and 1 before a test changed them ("n0 n1"). */
#define NP_HP_SAVED	"/tmp/np-migrate-hugepages"

static void np_hp_write(int node, long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), NP_HP_PATH, node);
	snprintf(buf, sizeof(buf), "%ld", val);
	np_write_str(path, buf);
}

/* Put back what a test killed by a timeout left changed. */
static void np_hp_recover(void)
{
	long v[2];
	FILE *f = fopen(NP_HP_SAVED, "re");

	if (!f)
		return;
	if (fscanf(f, "%ld %ld", &v[0], &v[1]) == 2)
		for (int n = 0; n < 2; n++)
			if (v[n] >= 0)
				np_hp_write(n, v[n]);
	fclose(f);
	unlink(NP_HP_SAVED);
}

static void np_hp_save(const long *orig)
{
	FILE *f = fopen(NP_HP_SAVED, "we");

	if (!f)
		return;
	fprintf(f, "%ld %ld\n", orig[0], orig[1]);
	fclose(f);
}

/* The device, MIGRATE, root, nodes 0 and 1. 0, or -1 after a SKIP(). */
static int np_mig_setup(struct __test_metadata *_metadata, int *fd,
			struct np_ctx *c, struct numaplace_info *info)
{
	const __u64 feats = NUMAPLACE_FEAT_MIGRATE_KERNEL |
			    NUMAPLACE_FEAT_MIGRATE_VMA |
			    NUMAPLACE_FEAT_MIGRATE_BATCH;

	*fd = np_open();
	if (*fd == -ENOENT)
		SKIP(return -1, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(*fd, 0);
	ASSERT_EQ(0, np_get_info(*fd, info));
	if (!(info->ioctls & (1ULL << NUMAPLACE_CMD_MIGRATE)) ||
	    !(info->features & feats))
		SKIP(return -1, "module has no NUMAPLACE_IOC_MIGRATE (features %#llx)",
		     (unsigned long long)info->features);
	if (geteuid())
		SKIP(return -1, "needs root (pagemap PFNs, uids, MOVE_ALL)");
	if (!np_node_isset(info->node_memory, 0) ||
	    !np_node_isset(info->node_memory, 1))
		SKIP(return -1, "needs memory on nodes 0 and 1");
	ASSERT_EQ(0, np_ctx_init(c, *fd, 0));
	psz = c->psz;
	np_hp_recover();
	/* Its scanner would make PROT_NONE hints at random moments. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	return 0;
}

FIXTURE_SETUP(mig)
{
	self->t0 = np_mono_ms();
	self->kid = -1;
	self->hp_orig[0] = self->hp_orig[1] = -1;
	self->a.base = self->b.base = NULL;
	if (np_mig_setup(_metadata, &self->fd, &self->c, &self->info))
		return;
	if (variant->feature && !(self->info.features & variant->feature))
		SKIP(return, "engine not available (features %#llx)",
		     (unsigned long long)self->info.features);
	self->eflags = variant->flags;
	self->allowed = np_engines_allowed(&self->info, variant->flags);
	/* The batched engine hands what it does not move to the kernel's. */
	self->vma_only = variant->flags == NUMAPLACE_MIGRATE_ENGINE_VMA ||
			 (variant->flags == NUMAPLACE_MIGRATE_ENGINE_BATCH &&
			  !(self->info.features & NUMAPLACE_FEAT_MIGRATE_KERNEL));
}

static void np_hp_restore(long *orig)
{
	for (int n = 0; n < 2; n++) {
		if (orig[n] < 0)
			continue;
		np_hp_write(n, orig[n]);
		orig[n] = -1;
	}
	unlink(NP_HP_SAVED);
}

FIXTURE_TEARDOWN(mig)
{
	if (!_metadata->skip)
		ksft_print_msg("took %ld ms\n", np_mono_ms() - self->t0);
	if (self->kid > 0) {
		kill(self->kid, SIGKILL);
		waitpid(self->kid, NULL, 0);
	}
	np_lay_free(&self->a);
	np_lay_free(&self->b);
	np_hp_restore(self->hp_orig);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * @want more free 2 MiB huge pages on nodes 0 and 1 (originals saved for
 * the teardown). 1 if they are there.
 */
static int np_hp_reserve(long *orig, const int *want)
{
	char path[128], val[32];

	for (int n = 0; n < 2; n++) {
		long have;

		snprintf(path, sizeof(path), NP_HP_PATH, n);
		have = np_read_long(path);
		if (have < 0)
			return 0;
		if (orig[n] < 0) {
			orig[n] = have;
			np_hp_save(orig);
		}
		snprintf(val, sizeof(val), "%ld", orig[n] + want[n]);
		np_write_str(path, val);
		if (np_read_long(path) < orig[n] + want[n])
			return 0;
	}
	return 1;
}

/* The segments this guest can build (swap, hugetlb only if there). */
static int np_mig_kinds(FIXTURE_DATA(mig) *self, enum np_seg *kinds)
{
	static const int hp[2] = { 3, 3 };
	int n = 0;

	for (int k = 0; k < NP_SEG_MAX; k++) {
		if (k == NP_SEG_SWAP && !np_have_swap())
			continue;
		if (k == NP_SEG_HUGETLB && !np_hp_reserve(self->hp_orig, hp)) {
			ksft_print_msg("no free hugetlb pages: no hugetlb segment\n");
			continue;
		}
		kinds[n++] = k;
	}
	return n;
}

/* Where @addr lies in layout @l, for a log line. */
static const char *np_where(const struct np_lay *l, __u64 addr, char *buf,
			    size_t size)
{
	uintptr_t b = l ? (uintptr_t)l->base : 0;

	if (l && addr >= b && addr < b + l->npages * psz)
		snprintf(buf, size, "%s page %zu",
			 np_seg_names[l->seg[(addr - b) / NP_PMD]],
			 (size_t)((addr - b) / psz % NP_SEG_PAGES));
	else
		snprintf(buf, size, "outside the layout");
	return buf;
}

/* Statuses against the simulation; mismatches logged, counted. */
static int np_cmp_sim(struct np_ctx *c, const char *what,
		      const struct np_lay *l, const __u64 *addrs,
		      const int *exp, const __s32 *got, const int *tgt,
		      const struct np_pre *pre, size_t n)
{
	int bad = 0, per[NP_SEG_MAX + 1] = { 0 };
	uintptr_t b = l ? (uintptr_t)l->base : 0;
	char b1[200], b2[64];

	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		if (exp[i] == got[i])
			continue;
		bad++;
		if (l && addrs[i] >= b && addrs[i] < b + l->npages * psz)
			per[l->seg[(addrs[i] - b) / NP_PMD]]++;
		else
			per[NP_SEG_MAX]++;
		np_log(c, "%s: [%zu] %#llx (%s) target %d: expected %d, got %d; before: shared %d %s",
		       what, i, (unsigned long long)addrs[i],
		       np_where(l, addrs[i], b2, sizeof(b2)), tgt[i], exp[i],
		       got[i], pre[i].shared,
		       np_page_str(&pre[i].pg, b1, sizeof(b1)));
	}
	for (int k = 0; bad && k <= NP_SEG_MAX; k++)
		if (per[k])
			ksft_print_msg("%s: %d mismatches in %s\n", what, per[k],
				       k < NP_SEG_MAX ? np_seg_names[k] :
				       "addresses outside the layout");
	return np_log_end(c, what, bad);
}

/*
 * Placement after the call: every page that had a node is on the one the
 * simulation says (node[rep]); the fork child (@kid), if any, maps the
 * same pages where it shares them.
 */
static int np_cmp_placement(struct np_ctx *c, const char *what,
			    const struct np_lay *l, const __u64 *addrs,
			    const struct np_pre *pre, const int *node,
			    size_t n, pid_t kid)
{
	struct np_page *post = calloc(n + 1, sizeof(*post));
	struct np_model m, km;
	char b1[200], b2[64];
	int bad = 0, have_kid;

	if (!post || np_model_open(&m, 0)) {
		free(post);
		return 1;
	}
	have_kid = kid > 0 && !np_model_open(&km, kid);
	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		np_model_page(&m, addrs[i], &post[i]);
		if (pre[i].pg.node < 0 || !pre[i].folio)
			continue;
		if (post[i].node != node[pre[i].rep]) {
			bad++;
			np_log(c, "%s: [%zu] %#llx (%s): on node %d, expected %d; before: %s",
			       what, i, (unsigned long long)addrs[i],
			       np_where(l, addrs[i], b2, sizeof(b2)),
			       post[i].node, node[pre[i].rep],
			       np_page_str(&pre[i].pg, b1, sizeof(b1)));
		}
		if (have_kid && pre[i].shared) {
			struct np_page kp;

			np_model_page(&km, addrs[i], &kp);
			if (kp.pfn != post[i].pfn &&
			    (kp.what & NPW_PRESENT)) {
				bad++;
				np_log(c, "%s: [%zu] %#llx (%s): the child maps pfn %#lx, the caller %#lx",
				       what, i, (unsigned long long)addrs[i],
				       np_where(l, addrs[i], b2, sizeof(b2)),
				       kp.pfn, post[i].pfn);
			}
		}
	}
	np_model_close(&m);
	if (have_kid)
		np_model_close(&km);
	free(post);
	return np_log_end(c, what, bad);
}

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

/*
 * Copy A's addresses @aa through move_pages(2), copy B's @ab through the
 * ioctl, targets @tgt; each against the simulation over its own state.
 */
static void np_compare(struct __test_metadata *_metadata, struct np_ctx *c,
		       const struct np_call *k, const __u64 *aa,
		       const __u64 *ab, const int *tgt, size_t n)
{
	int *sys = calloc(n + 1, sizeof(*sys));
	int *expa = calloc(n + 1, sizeof(*expa));
	int *expb = calloc(n + 1, sizeof(*expb));
	int *nodea = calloc(n + 1, sizeof(*nodea));
	int *nodeb = calloc(n + 1, sizeof(*nodeb));
	struct np_pre *prea = calloc(n + 1, sizeof(*prea));
	struct np_pre *preb = calloc(n + 1, sizeof(*preb));
	__s32 *st = calloc(n + 1, sizeof(*st));
	struct np_sim sa = { 0 }, sb = { 0 };
	struct numaplace_migrate m;
	char what[128];
	long ret;

	ASSERT_TRUE(sys && expa && expb && nodea && nodeb && prea && preb &&
		    st);
	ASSERT_EQ(0, np_pre_read(0, aa, n, prea));
	ASSERT_EQ(0, np_pre_read(0, ab, n, preb));
	for (size_t i = 0; i < n; i++) {
		nodea[i] = prea[i].pg.node;
		nodeb[i] = preb[i].pg.node;
	}
	sa.syscall = 1;
	sa.old = !c->new_kernel;
	sa.move_all = sb.move_all = !!(k->flags & NUMAPLACE_MIGRATE_MOVE_ALL);
	sb.old = !c->new_kernel && (k->flags & NUMAPLACE_MIGRATE_AS_SYSCALL);
	sb.avail = k->avail;
	sb.vma_only = k->vma_only ||
		      (!(k->flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL) &&
		       !(k->avail & NUMAPLACE_ENGINE_KERNEL));
	sb.kernel_only = !!(k->flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL);
	sb.vma_engine = np_vma_engine(k->flags, k->avail);
	sb.split_ok = !!(k->flags & NUMAPLACE_MIGRATE_SPLIT_OK);
	np_simulate(&sa, prea, tgt, n, expa, nodea);
	np_simulate(&sb, preb, tgt, n, expb, nodeb);

	/* Copy A: the syscall. */
	for (size_t i = 0; i < n; i++)
		sys[i] = NP_SENTINEL;
	ret = np_sys_move_pages(0, n, aa, tgt, sys,
				sa.move_all ? NP_MF_MOVE_ALL : NP_MF_MOVE);
	ASSERT_EQ(0, ret) TH_LOG("%s: move_pages(2) left folios behind: the oracle is void",
				 k->name);
	snprintf(what, sizeof(what), "%s: syscall vs simulation (a test bug)",
		 k->name);
	EXPECT_EQ(0, np_cmp_sim(c, what, k->la, aa, expa, sys, tgt, prea, n));

	/* Copy B: the module. */
	np_migrate_init(&m, 0, k->flags, k->policy);
	if (k->array) {
		m.flags |= NUMAPLACE_MIGRATE_PAGES;
		m.pages_ptr = (uintptr_t)ab;
		m.count = n;
	} else {
		m.start = k->len ? k->start : ab[0];
		m.len = k->len ? k->len : n * c->psz;
	}
	if (k->policy == NUMAPLACE_POLICY_PER_PAGE)
		m.nodes_ptr = (uintptr_t)tgt;
	m.node = tgt[0];
	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	m.status_ptr = (uintptr_t)st;
	ret = np_migrate(c->fd, &m);
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", k->name, strerror(-ret));
	EXPECT_EQ(n, m.done) TH_LOG("%s", k->name);
	EXPECT_EQ(NP_SENTINEL, st[n]) TH_LOG("%s", k->name);
	snprintf(what, sizeof(what), "%s: module vs simulation", k->name);
	EXPECT_EQ(0, np_cmp_sim(c, what, k->lb, ab, expb, st, tgt, preb, n));
	snprintf(what, sizeof(what), "%s: counters", k->name);
	EXPECT_EQ(0, np_check_mig_counters(c, what, &m, st, n, 1, k->allowed));
	EXPECT_EQ(sb.engines, m.engines) TH_LOG("%s", k->name);
	if (!k->array) {
		EXPECT_EQ(sb.moved_pages, m.nr_moved_pages) TH_LOG("%s", k->name);
		EXPECT_EQ(sb.in_place, m.nr_in_place_pages) TH_LOG("%s", k->name);
		if (!sb.vma_only || !sb.split_ok) {
			EXPECT_EQ(sb.moved_folios, m.nr_moved_folios)
				TH_LOG("%s", k->name);
		}
	}

	snprintf(what, sizeof(what), "%s: syscall placement", k->name);
	EXPECT_EQ(0, np_cmp_placement(c, what, k->la, aa, prea, nodea, n,
				      k->kid));
	snprintf(what, sizeof(what), "%s: module placement", k->name);
	EXPECT_EQ(0, np_cmp_placement(c, what, k->lb, ab, preb, nodeb, n,
				      k->kid));
	free(sys);
	free(expa);
	free(expb);
	free(nodea);
	free(nodeb);
	free(prea);
	free(preb);
	free(st);
}

/* How an oracle run calls the module. */
struct np_orc {
	const char *name;
	int array;		/* array mode, shuffled, repeated addresses */
	__u32 policy;		/* NUMAPLACE_POLICY_PER_PAGE or _NODE */
	__u32 flags;		/* NUMAPLACE_MIGRATE_AS_SYSCALL, _MOVE_ALL */
	__u64 seed;
};

/* Extra array-mode addresses: no VMA, kernel, tagged, low, [vvar]. */
#define NP_ORC_EXTRA	24

/*
 * Array mode: every page of the layout at an offset, then repeats of
 * some, and addresses that are no page of it, shuffled. @a for copy @la,
 * @b the same entries in copy @lb, @tgt their targets.
 */
static size_t np_orc_addrs(const struct np_lay *la, const struct np_lay *lb,
			   __u64 *a, __u64 *b, int *tgt, __u64 *s)
{
	size_t n = 0, np = la->npages;
	unsigned long vs = 0, ve = 0;

	for (size_t i = 0; i < np; i++, n++) {
		__u64 off = i * psz + np_rnd_below(s, psz);

		a[n] = (uintptr_t)la->base + off;
		b[n] = (uintptr_t)lb->base + off;
		tgt[n] = la->target[i];
	}
	for (size_t r = 0; r < np / 16; r++, n++) {
		size_t j = np_rnd_below(s, np);

		a[n] = a[j];
		b[n] = b[j];
		tgt[n] = tgt[j];
	}
	np_vvar(&vs, &ve);
	for (size_t x = 0; x < NP_ORC_EXTRA; x++, n++) {
		size_t j = np_rnd_below(s, np);

		switch (x % 6) {
		case 0:	/* tagged: no VMA, as the syscall does not untag */
			a[n] = a[j] | 1ULL << (57 + x % 5);
			b[n] = b[j] | 1ULL << (57 + x % 5);
			break;
		case 1:
			a[n] = b[n] = 0xffff888000000000ULL + x * psz;
			break;
		case 2:
			a[n] = b[n] = x * 64;
			break;
		case 3:
			a[n] = b[n] = vs ? vs + x / 6 % ((ve - vs) / psz) * psz :
				      x;
			break;
		default:
			a[n] = a[j];
			b[n] = b[j];
			break;
		}
		tgt[n] = x % 6 < 4 ? (int)np_rnd_below(s, 2) : tgt[j];
	}
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = np_rnd_below(s, i + 1);
		__u64 t1 = a[i], t2 = b[i];
		int t3 = tgt[i];

		a[i] = a[j];
		b[i] = b[j];
		tgt[i] = tgt[j];
		a[j] = t1;
		b[j] = t2;
		tgt[j] = t3;
	}
	return n;
}

/*
 * One oracle run: two copies of the variant's layout (and a child that
 * shares parts of both), one through the syscall, one through the ioctl.
 */
static void np_oracle(struct __test_metadata *_metadata,
		      FIXTURE_DATA(mig) *self, const struct np_orc *o)
{
	enum np_seg kinds[NP_SEG_MAX];
	int nk = np_mig_kinds(self, kinds);
	struct np_lay *la = &self->a, *lb = &self->b;
	struct np_call k = {
		.name = o->name, .array = o->array, .policy = o->policy,
		.flags = o->flags | self->eflags, .vma_only = self->vma_only,
		.allowed = self->allowed,
		.avail = np_engines_available(&self->info), .la = la, .lb = lb,
	};
	__u64 *aa, *ab, s = o->seed;
	size_t cap, n;
	int *tgt;

	ASSERT_EQ(0, np_lay_build(la, kinds, nk, o->seed));
	ASSERT_EQ(0, np_lay_build(lb, kinds, nk, o->seed));
	self->kid = np_lay_fork(la, lb);
	ASSERT_GT(self->kid, 0);
	k.kid = self->kid;

	cap = la->npages + la->npages / 16 + NP_ORC_EXTRA + 1;
	aa = calloc(cap, sizeof(*aa));
	ab = calloc(cap, sizeof(*ab));
	tgt = calloc(cap, sizeof(*tgt));
	ASSERT_TRUE(aa && ab && tgt);
	if (o->array) {
		n = np_orc_addrs(la, lb, aa, ab, tgt, &s);
	} else {
		n = la->npages;
		np_range_addrs(aa, (uintptr_t)la->base, n);
		np_range_addrs(ab, (uintptr_t)lb->base, n);
		memcpy(tgt, la->target, n * sizeof(*tgt));
	}
	if (o->policy == NUMAPLACE_POLICY_NODE)
		for (size_t i = 0; i < n; i++)
			tgt[i] = 1;
	np_compare(_metadata, &self->c, &k, aa, ab, tgt, n);
	free(aa);
	free(ab);
	free(tgt);
}

/* Per-page targets over the range, this kernel's answers. */
TEST_F_TIMEOUT(mig, oracle_range_as_syscall, 90)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct np_orc o = {
		"range as_syscall", 0, NUMAPLACE_POLICY_PER_PAGE,
		NUMAPLACE_MIGRATE_AS_SYSCALL, 1,
	};

	np_oracle(_metadata, self, &o);
}

/* Per-page targets over the range, 6.12's answers on every kernel. */
TEST_F_TIMEOUT(mig, oracle_range, 90)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct np_orc o = {
		"range", 0, NUMAPLACE_POLICY_PER_PAGE, 0, 2,
	};

	np_oracle(_metadata, self, &o);
}

/* Shuffled addresses, repeats and strangers, this kernel's answers. */
TEST_F_TIMEOUT(mig, oracle_array_as_syscall, 90)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct np_orc o = {
		"array as_syscall", 1, NUMAPLACE_POLICY_PER_PAGE,
		NUMAPLACE_MIGRATE_AS_SYSCALL, 3,
	};

	np_oracle(_metadata, self, &o);
}

TEST_F_TIMEOUT(mig, oracle_array, 90)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct np_orc o = {
		"array", 1, NUMAPLACE_POLICY_PER_PAGE, 0, 4,
	};

	np_oracle(_metadata, self, &o);
}

/* POLICY_NODE: everything to node 1. */
TEST_F_TIMEOUT(mig, oracle_node, 90)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct np_orc o = {
		"node", 0, NUMAPLACE_POLICY_NODE, NUMAPLACE_MIGRATE_AS_SYSCALL, 5,
	};

	np_oracle(_metadata, self, &o);
}

/* MOVE_ALL (root has CAP_SYS_NICE): pages shared with the child move. */
TEST_F_TIMEOUT(mig, oracle_move_all, 90)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct np_orc o = {
		"move_all", 0, NUMAPLACE_POLICY_PER_PAGE,
		NUMAPLACE_MIGRATE_AS_SYSCALL | NUMAPLACE_MIGRATE_MOVE_ALL, 6,
	};

	np_oracle(_metadata, self, &o);
}

/*
 * Array mode names a folio as often as it likes, in any order: every
 * entry is answered with the node the page is on at the end (where the
 * syscall says -EBUSY for an entry whose folio waits in its batch).
 */
TEST_F(mig, array_repeats)
{
	NP_SKIPPED_OR_FILTERED();
	char *a = np_pmd_map(NP_PMD, 0), *t = np_pmd_map(NP_PMD, 1), *f;
	int mfd = memfd_create("np-repeats", MFD_CLOEXEC);
	struct numaplace_migrate m;
	__u64 e[16];
	__s32 st[16];
	size_t n = 0;

	ASSERT_TRUE(a && t && mfd >= 0);
	ASSERT_EQ(0, ftruncate(mfd, 4 * psz));
	f = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	ASSERT_NE(MAP_FAILED, f);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(a, 2, 5);
	memset(t, 0x33, NP_PMD);
	madvise(t, NP_PMD, MADV_NOHUGEPAGE);
	memset(f, 0x44, 2 * psz);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* anon 4 KiB: A B A, then A A */
	e[n++] = (uintptr_t)a;
	e[n++] = (uintptr_t)a + psz;
	e[n++] = (uintptr_t)a + 100;
	e[n++] = (uintptr_t)a + psz + 8;
	e[n++] = (uintptr_t)a + psz + 16;
	if (!self->vma_only) {
		/* a THP by three of its addresses; a memfd page twice */
		e[n++] = (uintptr_t)t;
		e[n++] = (uintptr_t)f;
		e[n++] = (uintptr_t)t + 77 * psz;
		e[n++] = (uintptr_t)f + 5;
		e[n++] = (uintptr_t)t + NP_PMD - 1;
	}
	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	np_migrate_init(&m, 0, self->eflags | NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_NODE);
	m.pages_ptr = (uintptr_t)e;
	m.count = n;
	m.node = 1;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(1, st[i]) TH_LOG("entry %zu (%#llx)", i,
					   (unsigned long long)e[i]);
	}
	EXPECT_EQ(NP_SENTINEL, st[n]);
	EXPECT_EQ(0, m.nr_failed_pages);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "repeats", &m, st, n, 1,
					   self->allowed));
	ASSERT_EQ(0, np_nodes_of(0, e, n, (int *)st));
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(1, st[i]) TH_LOG("entry %zu: on node %d", i, st[i]);
	}
	EXPECT_EQ(0, np_fill_bad(a, 2, 5, NULL));
	EXPECT_TRUE(np_all_bytes(t, NP_PMD, 0x33));
	EXPECT_TRUE(np_all_bytes(f, 2 * psz, 0x44));
	munmap(f, 4 * psz);
	close(mfd);
}

/* MIGRATE @n addresses of @e to nodes[] in array mode, statuses in @st. */
static int np_migrate_per_page(int fd, __u32 eflags, const __u64 *e,
			       const __s32 *nodes, size_t n, __s32 *st,
			       struct numaplace_migrate *m)
{
	for (size_t i = 0; i < n; i++)
		st[i] = NP_SENTINEL;
	np_migrate_init(m, 0, eflags | NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m->pages_ptr = (uintptr_t)e;
	m->nodes_ptr = (uintptr_t)nodes;
	m->count = n;
	m->status_ptr = (uintptr_t)st;
	return np_migrate(fd, m);
}

/*
 * Per-page targets in array mode: a page first named where it is (in
 * place), then named again to move, moves. The batched engine keeps
 * in-place pages out of its unmap by holding them locked, which it may do
 * only when no page is named twice (the addresses strictly ascend):
 * held here, the page would stay behind. With ascending addresses the
 * in-place pages are held and the others still move.
 */
TEST_F(mig, array_in_place_then_moved)
{
	NP_SKIPPED_OR_FILTERED();
	char *a = np_pmd_map(NP_PMD, 0);
	struct numaplace_migrate m;
	__u64 e[8];
	__s32 nodes[8], st[8];
	int on[8];
	size_t n = 0, i;

	ASSERT_NE(NULL, a);
	np_mempolicy(MPOL_BIND, 0);
	madvise(a, NP_PMD, MADV_NOHUGEPAGE);
	np_fill(a, 8, 7);
	np_mempolicy(MPOL_DEFAULT, -1);
	/*
	 * Page 1 to move, page 2 in place right after it (where a hold
	 * would keep it out of the unmap), page 2 again to move, then pages
	 * 3..7 alternating move / in place.
	 */
	e[n] = (uintptr_t)a + psz, nodes[n++] = 1;
	e[n] = (uintptr_t)a + 2 * psz, nodes[n++] = 0;
	e[n] = (uintptr_t)a + 2 * psz + 8, nodes[n++] = 1;
	for (i = 3; i < 8; i++)
		e[n] = (uintptr_t)a + i * psz, nodes[n++] = i & 1;
	ASSERT_EQ(0, np_migrate_per_page(self->fd, self->eflags, e, nodes, n,
					 st, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(0, m.nr_failed_pages);
	ASSERT_EQ(0, np_nodes_of(0, e, n, on));
	for (i = 0; i < n; i++) {
		if (i == 1) {
			/* Named in place first: where it was then, or went. */
			EXPECT_TRUE(st[i] == 0 || st[i] == 1)
				TH_LOG("entry 1: %d", st[i]);
			EXPECT_EQ(1, on[i]) TH_LOG("entry 1: on node %d", on[i]);
			continue;
		}
		EXPECT_EQ(nodes[i], st[i]) TH_LOG("entry %zu", i);
		EXPECT_EQ(nodes[i], on[i]) TH_LOG("entry %zu: on node %d", i,
						  on[i]);
	}
	EXPECT_EQ(0, np_fill_bad(a, 8, 7, NULL));
	/*
	 * Strictly ascending, pages 2..7 (on 1 1 0 1 0 1 now), to 0 0 0 1 1
	 * 1: 2, 3 and 6 move; 4, 5 and 7, in place near them, are held.
	 */
	n = 0;
	for (i = 2; i < 8; i++)
		e[n] = (uintptr_t)a + i * psz, nodes[n++] = i < 5 ? 0 : 1;
	ASSERT_EQ(0, np_migrate_per_page(self->fd, self->eflags, e, nodes, n,
					 st, &m));
	EXPECT_EQ(3, m.nr_moved_pages);
	EXPECT_EQ(3, m.nr_in_place_pages);
	ASSERT_EQ(0, np_nodes_of(0, e, n, on));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(nodes[i], st[i]) TH_LOG("entry %zu", i);
		EXPECT_EQ(nodes[i], on[i]) TH_LOG("entry %zu", i);
	}
	EXPECT_EQ(0, np_fill_bad(a, 8, 7, NULL));
}

/* [vvar] is VM_IO | VM_PFNMAP up to 6.12: not migratable, -EFAULT in range mode too. */
TEST_F(mig, pfnmap_vvar)
{
	NP_SKIPPED_OR_FILTERED();
	unsigned long vs = 0, ve = 0;
	struct numaplace_migrate m;
	struct timespec ts;
	__u64 addrs[64];
	int nodes[64], sys[64];
	__s32 st[65];
	size_t n;

	bool pfnmap;

	if (np_vvar(&vs, &ve))
		SKIP(return, "no [vvar] mapping");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/*
	 * 7.x maps [vvar] VM_MIXEDMAP with the vDSO data pages
	 * (lib/vdso/datastore.c): migratable VMA, pages that cannot move;
	 * the module must still answer as the syscall, page by page.
	 */
	pfnmap = np_addr_is_pfnmap(vs);
	n = (ve - vs) / psz;
	ASSERT_LE(n, 64);
	np_range_addrs(addrs, vs, n);
	for (size_t i = 0; i < n; i++)
		nodes[i] = 1;
	ASSERT_EQ(0, np_sys_move_pages(0, n, addrs, nodes, sys, NP_MF_MOVE));
	for (__u32 f = 0; f <= NUMAPLACE_MIGRATE_AS_SYSCALL;
	     f += NUMAPLACE_MIGRATE_AS_SYSCALL) {
		for (size_t i = 0; i <= n; i++)
			st[i] = NP_SENTINEL;
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, f | self->eflags, vs,
					     ve - vs, 1, st, &m));
		EXPECT_EQ(n, m.done);
		EXPECT_EQ(NP_SENTINEL, st[n]);
		for (size_t i = 0; i < n; i++) {
			if (pfnmap)
				EXPECT_EQ(-EFAULT, sys[i]) TH_LOG("page %zu", i);
			EXPECT_EQ(sys[i], st[i]) TH_LOG("page %zu", i);
		}
		if (pfnmap)
			EXPECT_EQ(n, m.nr_failed[NUMAPLACE_FAIL_EFAULT]);
		EXPECT_EQ(0, np_check_mig_counters(&self->c, "vvar", &m, st, n,
						   1, self->allowed));
	}
}

/*
 * @n pages of PMD-mapped THPs at @p on node 0, each page stamped with
 * generation 1, khugepaged kept away (it would re-collapse what an engine
 * split), @addrs their addresses. 0, or -ENOENT: no THP (THP disabled?).
 */
static int np_thp_on0(char *p, __u64 *addrs, size_t n)
{
	struct np_pre pre;

	np_range_addrs(addrs, (uintptr_t)p, n);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 1);
	np_mempolicy(MPOL_DEFAULT, -1);
	madvise(p, n * psz, MADV_NOHUGEPAGE);
	if (np_pre_read(0, addrs, 1, &pre) || !(pre.pg.what & NPW_PMD))
		return -ENOENT;
	return 0;
}

/*
 * THPs: whole through the kernel engine; with ENGINE_VMA they stay in
 * place (-EBUSY) unless SPLIT_OK lets the engine split them. Data intact.
 */
TEST_F(mig, thp_split_ok)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 2 * NP_SEG_PAGES;
	char *p = np_pmd_map(2 * NP_PMD, 1);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	__s32 *st = calloc(n + 1, sizeof(*st));
	int *now = calloc(n, sizeof(*now));
	struct numaplace_migrate m;
	struct np_pre pre;
	int t2, bad = 0;
	size_t first = 0;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(addrs && st && now);
	if (np_thp_on0(p, addrs, n))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");

	/* Without SPLIT_OK. */
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
				     n * psz, 1, st, &m));
	EXPECT_EQ(n, m.done);
	for (size_t i = 0; i < n; i++)
		bad += st[i] != (self->vma_only ? -EBUSY : 1);
	EXPECT_EQ(0, bad) TH_LOG("first status %d", st[0]);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "thp", &m, st, n, 1,
					   self->allowed));
	if (!self->vma_only) {
		EXPECT_EQ(2, m.nr_moved_folios);
	}
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != (self->vma_only ? 0 : 1);
	EXPECT_EQ(0, bad) TH_LOG("page 0 on %d", now[0]);
	ASSERT_EQ(0, np_pre_read(0, addrs, 1, &pre));
	/* A THP moves whole (and the VMA engine leaves it alone). */
	if (self->eflags) {
		EXPECT_TRUE(pre.pg.what & NPW_PMD) TH_LOG("the THP was split");
	}
	EXPECT_EQ(0, np_fill_bad(p, n, 1, &first)) TH_LOG("page %zu", first);

	/* SPLIT_OK: the VMA engine may split them to move them. */
	t2 = self->vma_only ? 1 : 0;
	ASSERT_EQ(0, np_migrate_node(self->fd, 0,
				     self->eflags | NUMAPLACE_MIGRATE_SPLIT_OK,
				     (uintptr_t)p, n * psz, t2, st, &m));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += st[i] != t2;
	EXPECT_EQ(0, bad) TH_LOG("first status %d", st[0]);
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "thp split_ok", &m, st,
					   n, 1, self->allowed));
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != t2;
	EXPECT_EQ(0, bad) TH_LOG("page 0 on %d", now[0]);
	EXPECT_EQ(0, np_fill_bad(p, n, 1, &first)) TH_LOG("page %zu", first);
	free(addrs);
	free(st);
	free(now);
}

/*
 * A PTE-mapped THP (a PMD split by mprotect(), the folio still large) with
 * SPLIT_OK: migrate_vma_*() skips such a folio, so only an engine that
 * moves it whole may take it: the kernel engine moves it (still large),
 * without one it stays with -EBUSY. Data intact either way. (Fails on a
 * module that gives SPLIT_OK's large folios to the VMA engines without
 * asking how they are mapped: every page -EBUSY.)
 */
TEST_F(mig, thp_pte_mapped_split_ok)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_SEG_PAGES;
	char *p = np_pmd_map(NP_PMD, 1);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	__s32 *st = calloc(n + 1, sizeof(*st));
	int *now = calloc(n, sizeof(*now));
	int want = self->allowed & NUMAPLACE_ENGINE_KERNEL ? 1 : -EBUSY;
	struct numaplace_migrate m;
	struct np_pre pre;
	size_t first = 0;
	int bad = 0;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(addrs && st && now);
	if (np_thp_on0(p, addrs, n))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");
	/*
	 * Split the PMD, keep the folio: PTE-mapped, still large. The page
	 * stays read-only, so the VMA stays split and the model (which cannot
	 * see how a page is mapped) knows the PMD is gone.
	 */
	ASSERT_EQ(0, mprotect(p + psz, psz, PROT_READ));
	ASSERT_EQ(0, np_pre_read(0, addrs, 1, &pre));
	ASSERT_EQ(NPW_THP, pre.pg.what & (NPW_THP | NPW_PMD));

	ASSERT_EQ(0, np_migrate_node(self->fd, 0,
				     self->eflags | NUMAPLACE_MIGRATE_SPLIT_OK,
				     (uintptr_t)p, n * psz, 1, st, &m));
	EXPECT_EQ(n, m.done);
	for (size_t i = 0; i < n; i++)
		bad += st[i] != want;
	EXPECT_EQ(0, bad) TH_LOG("first status %d, want %d", st[0], want);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "pte-mapped thp", &m, st,
					   n, 1, self->allowed));
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != (want == 1 ? 1 : 0);
	EXPECT_EQ(0, bad) TH_LOG("page 0 on %d", now[0]);
	if (want == 1) {
		/* Moved whole: one folio, still large. */
		EXPECT_EQ(1, m.nr_moved_folios);
		ASSERT_EQ(0, np_pre_read(0, addrs, 1, &pre));
		EXPECT_TRUE(pre.pg.what & NPW_THP) TH_LOG("the folio was split");
	}
	EXPECT_EQ(0, np_fill_bad(p, n, 1, &first)) TH_LOG("page %zu", first);
	free(addrs);
	free(st);
	free(now);
}

/*
 * AS_SYSCALL with per-page targets that change inside a THP: move_pages(2)
 * migrates its batch at each change of target (do_pages_move()), so the
 * folio moves at each change and ends on the last one's node, and each
 * entry's status is its batch's node. numaplace must answer and place
 * exactly so. On 41261ae it moved each THP once, to the first entry's
 * node: statuses [1, 1, 1, 1] and both THPs on node 1, against the
 * syscall's [1, 0, 1, 0] and node 0.
 */
TEST_F(mig, thp_targets_as_syscall)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 2 * NP_SEG_PAGES;
	/* Two entries in each THP, the second to another node. */
	const size_t at[] = { 0, 1, NP_SEG_PAGES, NP_SEG_PAGES + 9 };
	const int to[] = { 1, 0, 1, 0 };
	const size_t k = sizeof(at) / sizeof(at[0]);
	char *a = np_pmd_map(n * psz, 1), *b = np_pmd_map(n * psz, 1);
	__u64 *aa = calloc(n, sizeof(*aa)), *ba = calloc(n, sizeof(*ba));
	__u64 pa[4], pb[4];
	int sys[4], nodes[4], now_a[4], now_b[4];
	__s32 st[4];
	struct numaplace_migrate m;

	ASSERT_TRUE(a && b && aa && ba);
	if (!(self->allowed & NUMAPLACE_ENGINE_KERNEL))
		SKIP(return, "no engine here moves a THP whole");
	if (np_thp_on0(a, aa, n) || np_thp_on0(b, ba, n))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");
	for (size_t i = 0; i < k; i++) {
		pa[i] = aa[at[i]];
		pb[i] = ba[at[i]];
		nodes[i] = to[i];
		sys[i] = st[i] = NP_SENTINEL;
	}
	ASSERT_EQ(0, np_sys_move_pages(0, k, pa, nodes, sys, NP_MF_MOVE));
	np_migrate_init(&m, 0, self->eflags | NUMAPLACE_MIGRATE_PAGES |
			NUMAPLACE_MIGRATE_AS_SYSCALL, NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)pb;
	m.count = k;
	m.nodes_ptr = (uintptr_t)nodes;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(k, m.done);
	ASSERT_EQ(0, np_nodes_of(0, pa, k, now_a));
	ASSERT_EQ(0, np_nodes_of(0, pb, k, now_b));
	for (size_t i = 0; i < k; i++) {
		EXPECT_EQ(sys[i], st[i]) TH_LOG("entry %zu", i);
		EXPECT_EQ(now_a[i], now_b[i]) TH_LOG("entry %zu's page", i);
	}
	EXPECT_EQ(0, np_fill_bad(b, n, 1, (size_t[]){ 0 }));
	free(aa);
	free(ba);
}

/*
 * A page shared with another process (after fork, not written since) in
 * the middle of a range of private pages: the call answers it -EACCES
 * and must not touch it, in either process. migrate_vma_setup() unmaps
 * every page it can lock in its range, in every mm that maps it; a range
 * that covered the shared page put migration entries into the other
 * process meanwhile. The other process (the child) samples its own
 * pagemap entry of that page while the test migrates the range back and
 * forth: it must always be present. On 41261ae the VMA engine's ranges
 * spanned it: the child saw it unmapped.
 */
#define NP_COW_PAGES	64
#define NP_COW_SHARED	32	/* the page the child shares */
#define NP_COW_ROUNDS	100

struct np_cow {
	volatile int started, stop;
	long samples, unmapped;
};

static void np_cow_child(const char *p, struct np_cow *x)
{
	uintptr_t va = (uintptr_t)(p + NP_COW_SHARED * psz);
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	__u64 e;

	if (pm < 0)
		_exit(2);
	x->started = 1;
	while (!x->stop) {
		if (pread(pm, &e, 8, va / psz * 8) != 8)
			_exit(3);
		x->samples++;
		x->unmapped += !(e & NP_PM_PRESENT);
	}
	_exit(0);
}

TEST_F_TIMEOUT(mig, cow_shared_untouched, 120)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_COW_PAGES;
	char *p = np_pmd_map(n * psz, 0);
	struct np_cow *x = mmap(NULL, sizeof(*x), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	__s32 st[NP_COW_PAGES];
	struct numaplace_migrate m;
	int status, bad = 0;
	pid_t pid;

	ASSERT_NE(NULL, p);
	ASSERT_NE(MAP_FAILED, x);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 1);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		np_cow_child(p, x);
	/* Every page the test's own (copy on write) but the shared one. */
	for (size_t i = 0; i < n; i++)
		if (i != NP_COW_SHARED)
			((volatile char *)p)[i * psz] = p[i * psz];
	np_mempolicy(MPOL_DEFAULT, -1);
	while (!x->started)
		usleep(1000);
	for (int r = 0; r < NP_COW_ROUNDS; r++) {
		ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags,
					     (uintptr_t)p, n * psz, (r + 1) % 2,
					     st, &m));
		/* Where it already is, the answer is its node. */
		bad += st[NP_COW_SHARED] != ((r + 1) % 2 ? -EACCES : 0);
	}
	x->stop = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	TH_LOG("the child sampled its page %ld times, %ld unmapped",
	       x->samples, x->unmapped);
	EXPECT_EQ(0, bad) TH_LOG("the shared page's answers");
	EXPECT_LT(NP_COW_ROUNDS, x->samples);
	EXPECT_EQ(0, x->unmapped);
	munmap(x, sizeof(*x));
}

/*
 * What a call holds beyond its sources is bounded, and charged where the
 * kernel would charge it: a child in a memcg whose memory.max is its
 * working set plus NP_EXTRA_MAX_MB (no swap) moves 64 MiB of 4 KiB pages
 * and 64 MiB of THPs to node 1, one call each: the memcg's memory.peak
 * stays within memory.max, no OOM kill, every page moved and intact. On
 * 41261ae the batched engine unmapped and allocated a whole round (64 MiB)
 * before restoring any of it, and 6.1 charges each destination by force
 * when it is moved (mem_cgroup_migrate()) while the sources wait for the
 * round's finalize: the peak went 44 MiB past memory.max. The host's free
 * memory is sampled and logged: it is no bound (freed pages reach the
 * free lists late, by tens of MiB either way), so the kernel engine's
 * preallocation window has no assertion here.
 */
#define NP_EXTRA_MB		64	/* each of the two regions */
#define NP_EXTRA_MAX_MB		24	/* the engines' 8 MiB window, plus slack */

struct np_extra {
	volatile int stop;
	long min_free_kb;
};

static void *np_extra_sampler(void *arg)
{
	struct np_extra *x = arg;

	while (!x->stop) {
		long kb = np_meminfo_kb("MemFree");

		if (kb >= 0 && kb < x->min_free_kb)
			x->min_free_kb = kb;
		usleep(500);
	}
	return NULL;
}

struct np_extra_args {
	__u32 eflags;
	int fd;
	long *extra_kb;		/* shared with the test */
};

/* The child's part: in @cg, map, fill and move both regions. */
static int np_extra_child(const char *cg, void *arg)
{
	const struct np_extra_args *args = arg;
	__u32 eflags = args->eflags;
	long *extra_kb = args->extra_kb;
	int fd = args->fd;
	const size_t n = NP_EXTRA_MB << 8;
	char *small = np_pmd_map(n * psz, 0), *thp = np_pmd_map(n * psz, 1);
	struct numaplace_migrate m;
	struct np_extra x;
	size_t first;
	pthread_t th;
	char max[32];
	long cur;

	if (!small || !thp)
		return 20;
	/* Faulted in the memcg: charged to it. */
	if (np_memcg_enter(cg))
		return 21;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(small, n, 3);
	np_fill(thp, n, 4);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Its limit: what it has now, plus the slack. */
	cur = np_memcg_long(cg, "memory.current");
	snprintf(max, sizeof(max), "%ld", cur + ((long)NP_EXTRA_MAX_MB << 20));
	if (cur <= 0 || np_memcg_set(cg, "memory.swap.max", "0") ||
	    np_memcg_set(cg, "memory.max", max))
		return 22;
	for (int r = 0; r < 2; r++) {
		char *p = r ? thp : small;

		x.stop = 0;
		x.min_free_kb = np_meminfo_kb("MemFree");
		extra_kb[r] = x.min_free_kb;
		if (pthread_create(&th, NULL, np_extra_sampler, &x))
			return 23;
		if (np_migrate_node(fd, 0, eflags, (uintptr_t)p, n * psz, 1,
				    NULL, &m))
			return 24;
		x.stop = 1;
		pthread_join(th, NULL);
		extra_kb[r] -= x.min_free_kb;
		if (m.nr_moved_pages != n)
			return 25 + r;
		if (np_fill_bad(p, n, r ? 4 : 3, &first))
			return 27;
	}
	return 0;
}

TEST_F_TIMEOUT(mig, extra_memory_bounded, 180)
{
	NP_SKIPPED_OR_FILTERED();
	long *extra = mmap(NULL, 2 * sizeof(long), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct np_extra_args args = { self->eflags, self->fd, extra };
	char cg[128];
	long peak, lim;
	int status;

	ASSERT_NE(MAP_FAILED, extra);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	if (self->vma_only)
		SKIP(return, "the VMA engine does not move THPs");
	status = np_memcg_fork("np-extra", cg, sizeof(cg), np_extra_child,
			       &args);
	if (status == -ENOENT)
		SKIP(return, "no cgroup2 memory controller");
	ASSERT_LE(0, status);
	peak = np_memcg_long(cg, "memory.peak");
	lim = np_memcg_long(cg, "memory.max");
	TH_LOG("beyond free memory: 4 KiB %ld KiB, THP %ld KiB; memcg peak %ld of %ld",
	       extra[0], extra[1], peak, lim);
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, np_memcg_key(cg, "memory.events", "oom_kill"));
	EXPECT_LT(0, peak);
	EXPECT_LE(peak, lim);
	EXPECT_EQ(0, np_memcg_remove(cg));
	munmap(extra, 2 * sizeof(long));
}

/*
 * Node 1 full (its memory held as hugetlb pages): the pages that do not
 * fit stay where they are with -ENOMEM, counted in
 * nr_failed[NUMAPLACE_FAIL_ENOMEM], their data intact; the others move.
 */
TEST_F_TIMEOUT(mig, target_node_full, 30)
{
	NP_SKIPPED_OR_FILTERED();
	char path[128], val[32];
	long got, free_kb, lru_kb, nomem = 0, moved = 0, other = 0, t0;
	struct numaplace_migrate m;
	size_t n, first = 0;
	__u64 *addrs;
	__s32 *st;
	int *now;
	char *p;

	snprintf(path, sizeof(path), NP_HP_PATH, 1);
	self->hp_orig[1] = np_read_long(path);
	if (self->hp_orig[1] < 0)
		SKIP(return, "no %s", path);
	np_hp_save(self->hp_orig);
	/* As many huge pages as node 1 gives, then 4 MiB back. */
	ASSERT_EQ(0, np_write_str(path, "1000000"));
	got = np_read_long(path);
	ASSERT_GT(got, self->hp_orig[1] + 2);
	snprintf(val, sizeof(val), "%ld", got - 2);
	ASSERT_EQ(0, np_write_str(path, val));
	free_kb = np_node_kb(1, "MemFree:");
	lru_kb = np_node_kb(1, "Active(anon):,Inactive(anon):,Active(file):,"
			       "Inactive(file):,KReclaimable:");
	ASSERT_GE(free_kb, 0);
	ASSERT_GE(lru_kb, 0);
	/*
	 * More than fits: what is free, what reclaim could free (LRU pages,
	 * the guest's tmpfs root goes to swap; reclaimable slab), plus
	 * 64 MiB.
	 */
	n = (free_kb + lru_kb + 65536) * 1024 / psz;
	ksft_print_msg("node 1: %ld huge pages, %ld kB free, %ld kB reclaimable; moving %zu pages\n",
		       got - 2, free_kb, lru_kb, n);
	p = np_pmd_map(n * psz, 0);
	addrs = calloc(n, sizeof(*addrs));
	st = calloc(n + 1, sizeof(*st));
	now = calloc(n, sizeof(*now));
	ASSERT_TRUE(p && addrs && st && now);
	np_range_addrs(addrs, (uintptr_t)p, n);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 7);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Unevictable: reclaim on node 1 cannot swap the moved ones out. */
	ASSERT_EQ(0, mlock(p, n * psz));

	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	t0 = np_mono_ms();
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
				     n * psz, 1, st, &m));
	t0 = np_mono_ms() - t0;
	ksft_print_msg("the call took %ld ms\n", t0);
	/* No room is no reason to take long (move_pages(2) gives up). */
	EXPECT_LT(t0, NP_FULL_MS);
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(NP_SENTINEL, st[n]);
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	for (size_t i = 0; i < n; i++) {
		if (st[i] == -ENOMEM && now[i] == 0)
			nomem++;
		else if (st[i] == 1 && now[i] == 1)
			moved++;
		else if (other++ < NP_LOG_MAX)
			ksft_print_msg("page %zu: status %d, on node %d\n", i,
				       st[i], now[i]);
	}
	ksft_print_msg("%ld moved, %ld -ENOMEM; node 1 now: %ld huge pages, %ld kB free\n",
		       moved, nomem, np_read_long(path), np_node_kb(1, "MemFree:"));
	EXPECT_EQ(0, other);
	EXPECT_GT(nomem, 0);
	EXPECT_EQ(nomem, m.nr_failed[NUMAPLACE_FAIL_ENOMEM]);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "node full", &m, st, n,
					   1, self->allowed));
	EXPECT_EQ(0, np_fill_bad(p, n, 7, &first)) TH_LOG("page %zu", first);
	munlock(p, n * psz);
	munmap(p, n * psz);
	np_hp_restore(self->hp_orig);
	free(addrs);
	free(st);
	free(now);
}

/*
 * SIGKILL of a caller inside a 256 MiB migration: it is gone within
 * NP_KILL_MS, and nothing stays isolated.
 */
TEST_F_TIMEOUT(mig, sigkill_bounded, 90)
{
	NP_SKIPPED_OR_FILTERED();
	long anon0, file0, anon, file, t0, waited = -1;
	struct { volatile int in, calls, ms; } *sh;
	int status = 0;
	pid_t pid;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_EQ(0, np_isolated(&anon0, &file0));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		size_t len = NP_KILL_PAGES * psz;
		char *p = np_pmd_map(len, 0);
		struct numaplace_migrate m;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!p)
			_exit(1);
		np_mempolicy(MPOL_BIND, 0);
		memset(p, 0x3c, len);
		np_mempolicy(MPOL_DEFAULT, -1);
		for (int node = 1;; node ^= 1) {
			long t = np_mono_ms();

			sh->in = 1;
			np_migrate_node(self->fd, 0, self->eflags, (uintptr_t)p,
					len, node, NULL, &m);
			sh->in = 0;
			sh->ms = np_mono_ms() - t;
			sh->calls++;
		}
	}
	/* After one whole call, kill it inside the next. */
	t0 = np_mono_ms();
	while ((sh->calls < 1 || !sh->in) && np_mono_ms() - t0 < 60000)
		usleep(1000);
	ASSERT_TRUE(sh->calls >= 1 && sh->in) TH_LOG("the child never called");
	usleep(100000);
	t0 = np_mono_ms();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	while (np_mono_ms() - t0 < 10 * NP_KILL_MS * np_time_scale()) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			waited = np_mono_ms() - t0;
			break;
		}
		usleep(5000);
	}
	if (waited < 0)
		waitpid(pid, &status, 0);
	ksft_print_msg("a whole call took %d ms; the killed caller was gone after %ld ms\n",
		       sh->ms, waited);
	EXPECT_GE(waited, 0);
	EXPECT_LT(waited, NP_KILL_MS * np_time_scale());
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	/* Isolated pages go back (allow the per-CPU counters a moment). */
	for (int i = 0; i < 100; i++) {
		ASSERT_EQ(0, np_isolated(&anon, &file));
		if (anon <= anon0 && file <= file0)
			break;
		usleep(20000);
	}
	EXPECT_LE(anon, anon0);
	EXPECT_LE(file, file0);
	munmap(sh, sizeof(*sh));
}

/* ------------------------------------------------------------------ */
/* Fixture "migrate": the ABI, bad input, permissions, policies.      */
/* ------------------------------------------------------------------ */

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

FIXTURE(migrate)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	__u32 allowed;
	struct np_res *res;
	pid_t kids[NP_MAX_KIDS];
	int nr_kids;
	struct np_lay a, b;
	char cg[128];		/* a cgroup this test made, "" for none */
	char cg_mnt[64];	/* cgroup2 mounted here by this test, or "" */
	long t0;		/* setup's CLOCK_MONOTONIC ms */
};

FIXTURE_SETUP(migrate)
{
	self->t0 = np_mono_ms();
	self->res = MAP_FAILED;
	if (np_mig_setup(_metadata, &self->fd, &self->c, &self->info))
		return;
	self->allowed = np_engines_allowed(&self->info, 0);
	self->res = mmap(NULL, sizeof(*self->res), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
}

FIXTURE_TEARDOWN(migrate)
{
	if (!_metadata->skip)
		ksft_print_msg("took %ld ms\n", np_mono_ms() - self->t0);
	for (int i = 0; i < self->nr_kids; i++) {
		kill(self->kids[i], SIGKILL);
		waitpid(self->kids[i], NULL, 0);
	}
	if (self->cg[0])
		rmdir(self->cg);
	if (self->cg_mnt[0]) {
		umount(self->cg_mnt);
		rmdir(self->cg_mnt);
	}
	np_lay_free(&self->a);
	np_lay_free(&self->b);
	if (self->fd >= 0)
		close(self->fd);
	if (self->res != MAP_FAILED)
		munmap(self->res, sizeof(*self->res));
}

/* @n written pages on node 0, PMD-aligned, no THP. */
static char *np_pages_on0(size_t n)
{
	char *p = np_pmd_map(n * psz, 0);

	if (!p)
		return NULL;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 3);
	np_mempolicy(MPOL_DEFAULT, -1);
	return p;
}

/*
 * A child that becomes @uid (0: stays root), sets PR_SET_DUMPABLE to
 * @dumpable, writes NP_PROBE_PAGES pages on node 0 (start in res->base)
 * and waits to be killed.
 */
static pid_t np_kid(FIXTURE_DATA(migrate) *self, uid_t uid, int dumpable)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (self->nr_kids == NP_MAX_KIDS || pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *p;

		close(pfd[0]);
		if (uid && np_drop_to(uid))
			_exit(1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (prctl(PR_SET_DUMPABLE, dumpable))
			_exit(1);
		p = np_pages_on0(NP_PROBE_PAGES);
		if (!p)
			_exit(1);
		self->res->base = (uintptr_t)p;
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	} else {
		self->kids[self->nr_kids++] = pid;
	}
	close(pfd[0]);
	return pid;
}

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
 * page of its own. Results in self->res; 0 when the child ran.
 */
static int np_probe_fd(FIXTURE_DATA(migrate) *self, uid_t uid, int fd,
			const struct np_probe_args *a);

static int np_probe(FIXTURE_DATA(migrate) *self, uid_t uid,
		    const struct np_probe_args *a)
{
	return np_probe_fd(self, uid, -1, a);
}

/* As np_probe(), on @fd (opened by the test) when @fd >= 0. */
static int np_probe_fd(FIXTURE_DATA(migrate) *self, uid_t uid, int fd,
		       const struct np_probe_args *a)
{
	struct np_res *r = self->res;
	int status;
	pid_t kid = fork();

	if (kid < 0)
		return -1;
	if (kid == 0) {
		__u64 addrs[NP_PROBE_PAGES], own;
		int nodes[NP_PROBE_PAGES];
		struct numaplace_migrate m;
		__s32 st;

		if (uid && np_drop_to(uid))
			_exit(2);
		if (fd < 0)
			fd = np_open();
		if (fd < 0)
			_exit(3);
		np_range_addrs(addrs, a->base, NP_PROBE_PAGES);
		for (int i = 0; i < NP_PROBE_PAGES; i++) {
			nodes[i] = a->node;
			r->st[i] = r->sys_st[i] = NP_SENTINEL;
		}
		np_migrate_init(&m, a->pid, a->flags | NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = NP_PROBE_PAGES;
		m.node = a->node;
		m.status_ptr = (uintptr_t)r->st;
		r->mod = np_migrate(fd, &m);
		r->done = m.done;
		r->sys = np_sys_move_pages(a->pid, NP_PROBE_PAGES, addrs, nodes,
					   r->sys_st, a->sysflags);
		own = (uintptr_t)&m;
		np_migrate_init(&m, 0, a->flags | NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)&own;
		m.count = 1;
		m.node = a->node;
		m.status_ptr = (uintptr_t)&st;
		r->mod_self = np_migrate(fd, &m);
		_exit(0);
	}
	if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Nodes of @n pages of @pid from @base into @nodes; 0 or -errno. */
static int np_where_pages(int pid, uintptr_t base, size_t n, int *nodes)
{
	__u64 *a = calloc(n, sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	np_range_addrs(a, base, n);
	ret = np_nodes_of(pid, a, n, nodes);
	free(a);
	return ret;
}

/* Count of @n ints equal to @v. */
static size_t np_count(const int *a, size_t n, int v)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += a[i] == v;
	return c;
}

static size_t np_count_s32(const __s32 *a, size_t n, __s32 v)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += a[i] == v;
	return c;
}

/* Move the caller's pages by pid 0, own pid and a thread's id. */
struct np_thread {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	int stop;
};

static void *np_thread_fn(void *arg)
{
	struct np_thread *t = arg;

	pthread_mutex_lock(&t->lock);
	t->tid = gettid();
	pthread_cond_broadcast(&t->cond);
	while (!t->stop)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

TEST_F(migrate, pid0_self_thread)
{
	NP_SKIPPED_OR_FILTERED();
	struct np_thread t = {
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0,
	};
	const size_t n = 32;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	int nodes[32], pids[3];
	__s32 st[32];
	pthread_t th;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, pthread_create(&th, NULL, np_thread_fn, &t));
	pthread_mutex_lock(&t.lock);
	while (!t.tid)
		pthread_cond_wait(&t.cond, &t.lock);
	pthread_mutex_unlock(&t.lock);
	pids[0] = 0;
	pids[1] = getpid();
	pids[2] = t.tid;
	for (int i = 0; i < 3; i++) {
		int node = (i + 1) % 2;

		ASSERT_EQ(0, np_migrate_node(self->fd, pids[i], 0, (uintptr_t)p,
					     n * psz, node, st, &m))
			TH_LOG("pid %d", pids[i]);
		EXPECT_EQ(n, np_count_s32(st, n, node)) TH_LOG("pid %d", pids[i]);
		EXPECT_EQ(n, m.nr_moved_pages) TH_LOG("pid %d", pids[i]);
		ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
		EXPECT_EQ(n, np_count(nodes, n, node)) TH_LOG("pid %d", pids[i]);
	}
	pthread_mutex_lock(&t.lock);
	t.stop = 1;
	pthread_cond_broadcast(&t.cond);
	pthread_mutex_unlock(&t.lock);
	pthread_join(th, NULL);
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/* Root moves a child's pages, and a nobody's (dumpable or not). */
TEST_F(migrate, root_moves_others)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { uid_t uid; int dumpable; } who[] = {
		{ 0, 1 }, { NP_NOBODY, 1 }, { NP_NOBODY, 0 },
	};
	struct np_probe_args a = { 0, 0, 1, 0, NP_MF_MOVE };
	struct numaplace_migrate m;
	int nodes[NP_PROBE_PAGES];
	__s32 st[NP_PROBE_PAGES];

	for (size_t w = 0; w < ARRAY_SIZE(who); w++) {
		pid_t pid = np_kid(self, who[w].uid, who[w].dumpable);

		ASSERT_GT(pid, 0);
		ASSERT_EQ(0, np_migrate_node(self->fd, pid, 0, self->res->base,
					     NP_PROBE_PAGES * psz, 1, st, &m))
			TH_LOG("uid %u dumpable %d", who[w].uid, who[w].dumpable);
		EXPECT_EQ(NP_PROBE_PAGES, np_count_s32(st, NP_PROBE_PAGES, 1));
		ASSERT_EQ(0, np_where_pages(pid, self->res->base,
					    NP_PROBE_PAGES, nodes));
		EXPECT_EQ(NP_PROBE_PAGES, np_count(nodes, NP_PROBE_PAGES, 1));
		/* The syscall agrees (the pages are there already). */
		a.pid = pid;
		a.base = self->res->base;
		ASSERT_EQ(0, np_probe(self, 0, &a));
		EXPECT_EQ(0, self->res->sys);
		EXPECT_EQ(0, self->res->mod);
		EXPECT_EQ(1, self->res->sys_st[0]);
		EXPECT_EQ(1, self->res->st[0]);
	}
}

/* nobody may not move root's pages: -EPERM, as the syscall says. */
TEST_F(migrate, other_user_denied)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_kid(self, 0, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int nodes[NP_PROBE_PAGES];

	ASSERT_GT(pid, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(NP_SENTINEL, self->res->st[0]);
	EXPECT_EQ(0, self->res->mod_self);
	ASSERT_EQ(0, np_where_pages(pid, a.base, NP_PROBE_PAGES, nodes));
	EXPECT_EQ(NP_PROBE_PAGES, np_count(nodes, NP_PROBE_PAGES, 0));
	/* The ptrace check comes before the targets. */
	a.node = -1;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	a.node = 1;
	/* The first process, too. */
	a.pid = 1;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(self->res->sys, self->res->mod);
}

/* Opened by root, used after setuid(nobody): nobody's rights count. */
TEST_F(migrate, creds_at_ioctl_time)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_kid(self, 0, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int fd = np_open();

	ASSERT_GT(pid, 0);
	ASSERT_GE(fd, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe_fd(self, NP_NOBODY, fd, &a));
	close(fd);
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(0, self->res->mod_self);
	/* And MOVE_ALL without CAP_SYS_NICE, on a root-opened fd. */
	fd = np_open();
	ASSERT_GE(fd, 0);
	a.pid = 0;
	a.base = (uintptr_t)self->res;
	a.flags = NUMAPLACE_MIGRATE_MOVE_ALL;
	a.sysflags = NP_MF_MOVE_ALL;
	ASSERT_EQ(0, np_probe_fd(self, NP_NOBODY, fd, &a));
	close(fd);
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
}

/* nobody moving another dumpable nobody process: as the query's rule. */
TEST_F(migrate, same_uid_unprivileged)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_kid(self, NP_NOBODY, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int exact = !!(self->info.features & NUMAPLACE_FEAT_PTRACE_EXACT);

	ASSERT_GT(pid, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(0, self->res->sys);
	EXPECT_EQ(exact ? 0 : -EPERM, self->res->mod);
	EXPECT_EQ(0, self->res->mod_self);
	/* Not dumpable: refused by both. */
	pid = np_kid(self, NP_NOBODY, 0);
	ASSERT_GT(pid, 0);
	a.pid = pid;
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
}

/* No such pid: -ESRCH; pid errors come before node errors. */
TEST_F(migrate, nonexistent_pid)
{
	NP_SKIPPED_OR_FILTERED();
	long max = np_read_long("/proc/sys/kernel/pid_max");
	int pids[] = { 0, -1, INT_MIN, INT_MAX };
	struct numaplace_migrate m;
	__u64 a = (uintptr_t)&m;
	int node = 1, sys;
	__s32 st;

	ASSERT_GT(max, 300);
	for (pids[0] = max - 1; pids[0] > 300; pids[0]--)
		if (kill(pids[0], 0) && errno == ESRCH)
			break;
	for (size_t i = 0; i < ARRAY_SIZE(pids); i++) {
		long sret = np_sys_move_pages(pids[i], 1, &a, &node, &sys,
					      NP_MF_MOVE);

		if (i == 0) {
			EXPECT_EQ(-ESRCH, sret);
		}
		EXPECT_EQ(sret, np_migrate_node(self->fd, pids[i], 0, a, 1, 1,
						&st, &m))
			TH_LOG("pid %d", pids[i]);
		/* With a bad node: the pid is looked at first. */
		EXPECT_EQ(sret, np_migrate_node(self->fd, pids[i], 0, a, 1, -1,
						&st, &m))
			TH_LOG("pid %d", pids[i]);
	}
}

/* kthreadd and a zombie have no mm: -EINVAL, as the syscall. */
TEST_F(migrate, no_mm)
{
	NP_SKIPPED_OR_FILTERED();
	struct np_probe_args a = { 2, 0x10000, 1, 0, NP_MF_MOVE };
	char comm[32];
	pid_t z;

	ASSERT_EQ(0, np_read_str("/proc/2/comm", comm, sizeof(comm)));
	ASSERT_STREQ("kthreadd", comm);
	ASSERT_EQ(0, np_probe(self, 0, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(self->res->sys, self->res->mod);

	z = fork();
	ASSERT_GE(z, 0);
	if (z == 0)
		_exit(0);
	for (int i = 0; i < 200 && np_proc_state(z) != 'Z'; i++)
		usleep(10000);
	ASSERT_EQ('Z', np_proc_state(z));
	a.pid = z;
	ASSERT_EQ(0, np_probe(self, 0, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	waitpid(z, NULL, 0);
}

/*
 * MOVE_ALL needs CAP_SYS_NICE: -EPERM for nobody, before the pid is
 * looked at; unknown flags are refused before that.
 */
TEST_F(migrate, move_all_needs_cap)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(NP_PROBE_PAGES);
	struct np_probe_args a = {
		0, (uintptr_t)p, 1, NUMAPLACE_MIGRATE_MOVE_ALL, NP_MF_MOVE_ALL,
	};
	struct numaplace_migrate m;
	__s32 st[NP_PROBE_PAGES];

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(-EPERM, self->res->mod_self);
	/* Capability before pid. */
	a.pid = INT_MAX;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	/* Flags before capability. */
	a.pid = 0;
	a.flags |= 1U << 20;
	a.sysflags |= 1 << 5;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	/* Without MOVE_ALL nobody moves its own pages. */
	a.flags = 0;
	a.sysflags = NP_MF_MOVE;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(0, self->res->mod_self);
	/* Root may. */
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, NUMAPLACE_MIGRATE_MOVE_ALL,
				     (uintptr_t)p, NP_PROBE_PAGES * psz, 1, st,
				     &m));
	EXPECT_EQ(NP_PROBE_PAGES, np_count_s32(st, NP_PROBE_PAGES, 1));
}

/* len 0 and count 0 move nothing, successfully. */
TEST_F(migrate, zero_len_and_count)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(2);
	struct numaplace_migrate m;
	__u64 a;
	__s32 st[2] = { NP_SENTINEL, NP_SENTINEL };
	int node = 1;

	ASSERT_NE(NULL, p);
	a = (uintptr_t)p;
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, 0, a, 0, 1, st, &m));
	EXPECT_EQ(0, m.done);
	EXPECT_EQ(0, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines);
	EXPECT_EQ(NP_SENTINEL, st[0]);
	np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES, NUMAPLACE_POLICY_NODE);
	m.node = 1;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.done);
	np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)&a;
	m.nodes_ptr = (uintptr_t)&node;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.done);
	EXPECT_EQ(NP_SENTINEL, st[0]);
	EXPECT_EQ(0, np_sys_move_pages(0, 0, NULL, NULL, NULL, NP_MF_MOVE));
	EXPECT_EQ(0, np_sys_query(0, 1, &a, &node));
	EXPECT_EQ(0, node);
}

/* Two copies of a 4k layout for the small comparisons. */
static void np_two_4k(struct __test_metadata *_metadata,
		      FIXTURE_DATA(migrate) *self)
{
	static const enum np_seg k[] = { NP_SEG_4K };

	ASSERT_EQ(0, np_lay_build(&self->a, k, 1, 11));
	ASSERT_EQ(0, np_lay_build(&self->b, k, 1, 11));
}

static struct np_call np_call_of(FIXTURE_DATA(migrate) *self,
				 const char *name, int array, __u32 flags)
{
	struct np_call k = {
		.name = name, .array = array,
		.policy = NUMAPLACE_POLICY_PER_PAGE, .flags = flags,
		.allowed = self->allowed,
		.avail = np_engines_available(&self->info),
		.la = &self->a, .lb = &self->b,
	};

	return k;
}

/* Counts around the syscall's 16-entry chunks; range and array mode. */
TEST_F(migrate, count_edges)
{
	NP_SKIPPED_OR_FILTERED();
	static const size_t counts[] = { 1, 15, 16, 17, 33 };
	__u64 aa[64], ab[64];
	int tgt[64];
	char name[64];

	np_two_4k(_metadata, self);
	for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
		size_t n = counts[c];
		struct np_call k;

		for (size_t i = 0; i < n; i++) {
			size_t pg = (i * 7 + c * 64) % 192;
			__u64 off = pg * psz + (i * 97) % psz;

			aa[i] = (uintptr_t)self->a.base + off;
			ab[i] = (uintptr_t)self->b.base + off;
			tgt[i] = self->a.target[pg];
		}
		snprintf(name, sizeof(name), "array count %zu", n);
		k = np_call_of(self, name, 1, NUMAPLACE_MIGRATE_AS_SYSCALL);
		np_compare(_metadata, &self->c, &k, aa, ab, tgt, n);
		np_range_addrs(aa, (uintptr_t)self->a.base + (250 + 40 * c) * psz,
			       n);
		np_range_addrs(ab, (uintptr_t)self->b.base + (250 + 40 * c) * psz,
			       n);
		for (size_t i = 0; i < n; i++)
			tgt[i] = self->a.target[250 + 40 * c + i];
		snprintf(name, sizeof(name), "range count %zu", n);
		k = np_call_of(self, name, 0, NUMAPLACE_MIGRATE_AS_SYSCALL);
		np_compare(_metadata, &self->c, &k, aa, ab, tgt, n);
	}
}

/* An unaligned start and len move every page they touch. */
TEST_F(migrate, unaligned_range)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { size_t off, len, pages; } cases[] = {
		{ 100, 3 * 4096, 4 }, { 4095, 2, 2 }, { 1, 1, 1 },
		{ 0, 4097, 2 }, { 4095, 1, 1 },
	};
	__u64 aa[8], ab[8];
	int tgt[8];
	char name[64];

	np_two_4k(_metadata, self);
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		size_t first = 16 + 16 * c, n = cases[c].pages;
		struct np_call k;

		np_range_addrs(aa, (uintptr_t)self->a.base + first * psz, n);
		np_range_addrs(ab, (uintptr_t)self->b.base + first * psz, n);
		for (size_t i = 0; i < n; i++)
			tgt[i] = 1;
		snprintf(name, sizeof(name), "unaligned case %zu", c);
		k = np_call_of(self, name, 0, NUMAPLACE_MIGRATE_AS_SYSCALL);
		k.start = ab[0] + cases[c].off;
		k.len = cases[c].len;
		np_compare(_metadata, &self->c, &k, aa, ab, tgt, n);
	}
}

/* Tagged addresses are not untagged: no VMA, -EFAULT, as the syscall. */
TEST_F(migrate, tagged_addresses)
{
	NP_SKIPPED_OR_FILTERED();
	__u64 aa[16], ab[16];
	int tgt[16];
	struct np_call k;

	np_two_4k(_metadata, self);
	for (int bit = 48; bit < 64; bit += 5) {
		np_range_addrs(aa, (uintptr_t)self->a.base | 1ULL << bit, 4);
		np_range_addrs(ab, (uintptr_t)self->b.base | 1ULL << bit, 4);
		for (int i = 0; i < 4; i++)
			tgt[i] = 1;
		k = np_call_of(self, "tagged range", 0,
			       NUMAPLACE_MIGRATE_AS_SYSCALL);
		np_compare(_metadata, &self->c, &k, aa, ab, tgt, 4);
	}
	for (int i = 0; i < 16; i++) {
		aa[i] = ((uintptr_t)self->a.base + i * psz + i) |
			(i % 2 ? 1ULL << (56 + i / 2) : 0);
		ab[i] = ((uintptr_t)self->b.base + i * psz + i) |
			(i % 2 ? 1ULL << (56 + i / 2) : 0);
		tgt[i] = 1;
	}
	k = np_call_of(self, "tagged array", 1, NUMAPLACE_MIGRATE_AS_SYSCALL);
	np_compare(_metadata, &self->c, &k, aa, ab, tgt, 16);
}

/* start + len that wraps: -EINVAL. */
TEST_F(migrate, len_overflow)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { __u64 start, len; } wrap[] = {
		{ -4096ULL, 8192 }, { 4096, ~0ULL }, { 1ULL << 63, 1ULL << 63 },
		{ -4096ULL, 4096 }, { ~0ULL, 1 },
	};
	struct numaplace_migrate m;
	__s32 st[4];

	for (size_t i = 0; i < ARRAY_SIZE(wrap); i++) {
		EXPECT_EQ(-EINVAL, np_migrate_node(self->fd, 0, 0, wrap[i].start,
						   wrap[i].len, 1, st, &m))
			TH_LOG("start %#llx len %#llx",
			       (unsigned long long)wrap[i].start,
			       (unsigned long long)wrap[i].len);
	}
}

enum np_ptr { NP_PTR_NULL, NP_PTR_KERNEL, NP_PTR_UNMAPPED, NP_PTR_PROTNONE,
	      NP_PTR_RDONLY, NP_PTR_MAX };

static const char *const np_ptr_names[] = {
	"NULL", "kernel", "unmapped", "PROT_NONE", "read-only",
};

/* A pointer of kind @k to @len bytes holding @src (read-only: a copy). */
static void *np_bad_ptr(enum np_ptr k, const void *src, size_t len)
{
	char *m;

	switch (k) {
	case NP_PTR_NULL:
		return NULL;
	case NP_PTR_KERNEL:
		return (void *)0xffff888000001000UL;
	default:
		break;
	}
	m = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (src)
		memcpy(m, src, len);
	if (k == NP_PTR_UNMAPPED)
		munmap(m, 4 * psz);
	else
		mprotect(m, 4 * psz, k == NP_PTR_PROTNONE ? PROT_NONE :
			 PROT_READ);
	return m;
}

/* Every user buffer, each kind of bad pointer: -EFAULT or "not asked". */
TEST_F(migrate, bad_pointers)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(8);
	struct numaplace_migrate m, *mp;
	__u64 addrs[8];
	int nodes[8], sys[8];
	__s32 st[8];

	ASSERT_NE(NULL, p);
	np_range_addrs(addrs, (uintptr_t)p, 8);
	for (int i = 0; i < 8; i++)
		nodes[i] = i % 2;
	for (int k = 0; k < NP_PTR_MAX; k++) {
		const char *name = np_ptr_names[k];
		int want = k == NP_PTR_RDONLY ? 0 : -EFAULT;
		void *bad;

		/* The struct (read-only: the answer cannot go back). */
		np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);
		m.start = (uintptr_t)p;
		m.len = 8 * psz;
		m.node = k % 2;
		mp = np_bad_ptr(k, &m, sizeof(m));
		EXPECT_EQ(-EFAULT, np_migrate(self->fd, mp)) TH_LOG("struct %s", name);

		/* pages[]: read-only is fine. */
		bad = np_bad_ptr(k, addrs, sizeof(addrs));
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)bad;
		m.count = 8;
		m.node = k % 2;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(want, np_migrate(self->fd, &m)) TH_LOG("pages %s", name);
		if (want) {
			EXPECT_EQ(0, m.done) TH_LOG("pages %s", name);
		}
		EXPECT_EQ(want, np_sys_move_pages(0, 8, bad, nodes, sys,
						  NP_MF_MOVE))
			TH_LOG("syscall pages %s", name);

		/* nodes[], array and range mode. */
		bad = np_bad_ptr(k, nodes, sizeof(nodes));
		for (int r = 0; r < 2; r++) {
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)addrs;
			m.count = r ? 0 : 8;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? 8 * psz : 0;
			m.nodes_ptr = (uintptr_t)bad;
			m.status_ptr = (uintptr_t)st;
			/* abi.md: PER_PAGE without nodes_ptr is -EINVAL. */
			EXPECT_EQ(k == NP_PTR_NULL ? -EINVAL : want,
				  np_migrate(self->fd, &m))
				TH_LOG("nodes %s (%s mode)", name,
				       r ? "range" : "array");
		}
		/* (NULL nodes is the syscall's query mode.) */
		if (k != NP_PTR_NULL) {
			EXPECT_EQ(want, np_sys_move_pages(0, 8, addrs, bad, sys,
							  NP_MF_MOVE))
				TH_LOG("syscall nodes %s", name);
		}

		/* status[]: NULL is "not asked", the rest -EFAULT. */
		bad = np_bad_ptr(k, NULL, 0);
		want = k == NP_PTR_NULL ? 0 : -EFAULT;
		for (int r = 0; r < 2; r++) {
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)addrs;
			m.count = r ? 0 : 8;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? 8 * psz : 0;
			m.nodes_ptr = (uintptr_t)nodes;
			m.status_ptr = (uintptr_t)bad;
			EXPECT_EQ(want, np_migrate(self->fd, &m))
				TH_LOG("status %s (%s mode)", name,
				       r ? "range" : "array");
		}
		if (k != NP_PTR_NULL) {
			EXPECT_EQ(-EFAULT, np_sys_move_pages(0, 8, addrs, nodes,
							     bad, NP_MF_MOVE))
				TH_LOG("syscall status %s", name);
		}
		for (int i = 0; i < 8; i++)
			nodes[i] ^= 1;
	}
	/* All well again; the data never changed. */
	EXPECT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)p, 8 * psz, 0,
				     st, &m));
	EXPECT_EQ(8, np_count_s32(st, 8, 0));
	EXPECT_EQ(0, np_fill_bad(p, 8, 3, NULL));
}

/*
 * A guarded buffer: @nb bytes ending exactly at a PROT_NONE page.
 * Returns the start of the bytes.
 */
static void *np_guarded(size_t nb)
{
	size_t len = ((nb + psz - 1) / psz + 1) * psz;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + len - psz, psz, PROT_NONE)) {
		munmap(m, len);
		return NULL;
	}
	return m + len - psz - nb;
}

/*
 * After an -EFAULT for an array entry: done says how far the call got,
 * and the statuses of those entries are written (the rest are not).
 */
static int np_partial_ok(const struct numaplace_migrate *m, const __s32 *st,
			 size_t n)
{
	if (m->done > n)
		return 0;
	for (size_t i = 0; st && i < m->done; i++)
		if (st[i] == NP_SENTINEL)
			return 0;
	return 1;
}

/* Arrays that end on an unmapped page: exact fits work, one more faults. */
TEST_F(migrate, arrays_end_on_unmapped)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 20;
	char *p = np_pages_on0(n);
	__u64 *pages = np_guarded(n * 8), big[32];
	int *nodes = np_guarded(n * 4), bnodes[32], sys[32];
	__s32 *gst = np_guarded(n * 4), st[32];
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(pages && nodes && gst);
	for (size_t i = 0; i < 32; i++) {
		big[i] = (uintptr_t)p + (i % n) * psz;
		bnodes[i] = 1;
	}
	memcpy(pages, big, n * 8);
	memcpy(nodes, bnodes, n * 4);

	/* pages[] */
	for (size_t c = n; c <= n + 1; c++) {
		for (size_t i = 0; i < 32; i++)
			st[i] = NP_SENTINEL;
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)pages;
		m.count = c;
		m.node = 1;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
			TH_LOG("pages count %zu", c);
		EXPECT_TRUE(np_partial_ok(&m, st, n));
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, pages, bnodes, sys, NP_MF_MOVE));
	}
	/* nodes[], array and range mode */
	for (size_t c = n; c <= n + 1; c++) {
		for (int r = 0; r < 2; r++) {
			for (size_t i = 0; i < 32; i++)
				st[i] = NP_SENTINEL;
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)big;
			m.count = r ? 0 : c;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? c * psz : 0;
			m.nodes_ptr = (uintptr_t)nodes;
			m.status_ptr = (uintptr_t)st;
			EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
				TH_LOG("nodes count %zu %s", c, r ? "range" : "array");
			EXPECT_TRUE(np_partial_ok(&m, st, n));
		}
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, big, nodes, sys, NP_MF_MOVE));
	}
	/* status[], array and range mode */
	for (size_t c = n; c <= n + 1; c++) {
		for (int r = 0; r < 2; r++) {
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_NODE);
			m.pages_ptr = r ? 0 : (uintptr_t)big;
			m.count = r ? 0 : c;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? c * psz : 0;
			m.node = 0;
			m.status_ptr = (uintptr_t)gst;
			EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
				TH_LOG("status count %zu %s", c, r ? "range" : "array");
			EXPECT_LE(m.done, c);
		}
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, big, bnodes, gst, NP_MF_MOVE));
	}
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/* A count far past the arrays: -EFAULT, like the syscall, no stray write. */
TEST_F(migrate, count_huge)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 40, canary = 8;
	static const __u64 counts[] = { NP_HUGE_COUNT, 1ULL << 61, ~0ULL };
	char *p = np_pages_on0(16);
	__u64 *pages = np_guarded(n * 8);
	int *nodes = np_guarded(n * 4), sys[64];
	__s32 *st = np_guarded((n + canary) * 4);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(pages && nodes && st);
	for (size_t i = 0; i < n; i++) {
		pages[i] = (uintptr_t)p + (i % 16) * psz;
		nodes[i] = i % 2;
	}
	for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
		for (int pol = 0; pol < 2; pol++) {
			int ret;

			for (size_t i = 0; i < n + canary; i++)
				st[i] = NP_SENTINEL;
			np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
					pol ? NUMAPLACE_POLICY_PER_PAGE :
					NUMAPLACE_POLICY_NODE);
			m.pages_ptr = (uintptr_t)pages;
			m.count = counts[c];
			m.nodes_ptr = pol ? (uintptr_t)nodes : 0;
			m.node = 1;
			m.status_ptr = (uintptr_t)st;
			ret = np_migrate(self->fd, &m);
			/* count * 8 wraps past 1 << 61: -EINVAL is fair. */
			if (counts[c] >= 1ULL << 61 && ret == -EINVAL)
				ret = -EFAULT;
			EXPECT_EQ(-EFAULT, ret) TH_LOG("count %#llx policy %d",
						       (unsigned long long)counts[c], pol);
			EXPECT_LE(m.done, n);
			for (size_t i = n; i < n + canary; i++) {
				EXPECT_EQ(NP_SENTINEL, st[i])
					TH_LOG("count %#llx: status[%zu] written",
					       (unsigned long long)counts[c], i);
			}
		}
		EXPECT_EQ(-EFAULT, np_sys_move_pages(0, counts[c], pages, nodes,
						     sys, NP_MF_MOVE));
	}
	/* A long range: the status buffer ends first. */
	st = np_guarded(n * 4);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(-EFAULT, np_migrate_node(self->fd, 0, 0, (uintptr_t)p,
					   NP_HUGE_COUNT * psz, 1, st, &m));
	EXPECT_LE(m.done, n);
	EXPECT_EQ(0, np_fill_bad(p, 16, 3, NULL));
}

/* Struct sizes: short -EINVAL, long with a zero tail fine, else -E2BIG. */
TEST_F(migrate, struct_size)
{
	NP_SKIPPED_OR_FILTERED();
	static const __u32 shorts[] = { 0, 4, 8, 16, 64,
					NUMAPLACE_MIGRATE_SIZE_VER0 - 8,
					NUMAPLACE_MIGRATE_SIZE_VER0 - 1 };
	/* Longer than the module knows, within a page (larger is -E2BIG). */
	size_t len = sizeof(struct numaplace_migrate) + 1024;
	char *buf = calloc(1, len + 64);
	struct numaplace_migrate *m = (void *)buf;
	char *p = np_pages_on0(4);
	__s32 st[4];

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(NUMAPLACE_MIGRATE_SIZE_VER0, sizeof(*m));
	for (size_t i = 0; i < ARRAY_SIZE(shorts); i++) {
		np_migrate_init(m, 0, 0, NUMAPLACE_POLICY_NODE);
		m->size = shorts[i];
		m->start = (uintptr_t)p;
		m->len = 4 * psz;
		m->node = 1;
		EXPECT_EQ(-EINVAL, np_migrate(self->fd, m))
			TH_LOG("size %u", shorts[i]);
	}

	/* VER0 exactly: done, nothing written past it. */
	memset(buf, 0xa5, len + 64);
	memset(buf, 0, NUMAPLACE_MIGRATE_SIZE_VER0);
	m->size = NUMAPLACE_MIGRATE_SIZE_VER0;
	m->start = (uintptr_t)p;
	m->len = 4 * psz;
	m->node = 1;
	m->status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(4, m->done);
	EXPECT_EQ(4, m->nr_moved_pages);
	EXPECT_EQ(4, np_count_s32(st, 4, 1));
	EXPECT_EQ(NUMAPLACE_MIGRATE_SIZE_VER0, m->size);
	EXPECT_TRUE(np_all_bytes(buf + NUMAPLACE_MIGRATE_SIZE_VER0, 64, 0xa5));

	/* Longer, zero tail: fine, and the module says its own size. */
	memset(buf, 0, len);
	m->size = len;
	m->start = (uintptr_t)p;
	m->len = 4 * psz;
	m->node = 0;
	ASSERT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(sizeof(*m), m->size);
	EXPECT_EQ(4, m->done);
	EXPECT_EQ(4, m->nr_moved_pages);
	EXPECT_TRUE(np_all_bytes(buf + sizeof(*m), len - sizeof(*m), 0));

	/* Non-zero tail: -E2BIG, nothing moved. */
	for (size_t at = sizeof(*m); at < len; at += 127) {
		memset(buf, 0, len);
		m->size = len;
		m->start = (uintptr_t)p;
		m->len = 4 * psz;
		m->node = 1;
		buf[at] = 1;
		EXPECT_EQ(-E2BIG, np_migrate(self->fd, m)) TH_LOG("byte %zu", at);
	}
	free(buf);

	/* Larger than a page is no newer version (clone3): -E2BIG. */
	buf = calloc(1, 2 * psz);
	ASSERT_NE(NULL, buf);
	m = (void *)buf;
	m->start = (uintptr_t)p;
	m->len = 4 * psz;
	m->node = 1;
	m->size = psz + 8;
	EXPECT_EQ(-E2BIG, np_migrate(self->fd, m));
	m->size = psz;
	EXPECT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(4, m->nr_moved_pages);
	m->size = psz;
	m->node = 0;
	EXPECT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(0, np_sys_query(0, 1, (__u64[]){ (uintptr_t)p }, (int *)st));
	EXPECT_EQ(0, st[0]);
	free(buf);
}

/* Flags the ABI does not know: -EINVAL, nothing moved. */
TEST_F(migrate, unknown_flags)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(2);
	struct numaplace_migrate m;
	int node;

	ASSERT_NE(NULL, p);
	for (int bit = 7; bit < 32; bit++) {
		EXPECT_EQ(-EINVAL, np_migrate_node(self->fd, 0, 1U << bit,
						   (uintptr_t)p, 2 * psz, 1,
						   NULL, &m))
			TH_LOG("bit %d", bit);
	}
	ASSERT_EQ(0, np_sys_query(0, 1, (__u64[]){ (uintptr_t)p }, &node));
	EXPECT_EQ(0, node);
	EXPECT_EQ(0, np_migrate_node(self->fd, 0,
				     NUMAPLACE_MIGRATE_AS_SYSCALL |
				     NUMAPLACE_MIGRATE_SPLIT_OK, (uintptr_t)p,
				     2 * psz, 1, NULL, &m));
	EXPECT_EQ(2, m.nr_moved_pages);
}

TEST_F(migrate, reserved_nonzero)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
#define NP_RESERVED_CASE(field, val)					\
	do {								\
		np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);	\
		m.start = (uintptr_t)p;					\
		m.len = psz;						\
		m.node = 1;						\
		m.field = val;						\
		EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m))		\
			TH_LOG(#field);					\
	} while (0)
	NP_RESERVED_CASE(reserved0, 1);
	NP_RESERVED_CASE(reserved0, 1U << 31);
	NP_RESERVED_CASE(reserved[0], 1);
	NP_RESERVED_CASE(reserved[1], 1ULL << 63);
	NP_RESERVED_CASE(reserved[2], 1);
	NP_RESERVED_CASE(reserved[3], 1ULL << 32);
#undef NP_RESERVED_CASE
	EXPECT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)p, psz, 1,
				     NULL, &m));
	EXPECT_EQ(1, m.nr_moved_pages);
}

TEST_F(migrate, bad_policy)
{
	NP_SKIPPED_OR_FILTERED();
	static const __u32 bad[] = { NUMAPLACE_POLICY_MAX, 5, 255, 1U << 31,
				     ~0U };
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		np_migrate_init(&m, 0, 0, bad[i]);
		m.start = (uintptr_t)p;
		m.len = psz;
		m.node = 1;
		EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m)) TH_LOG("policy %u", bad[i]);
	}
}

/* Forcing an engine INFO does not list: -EOPNOTSUPP. */
TEST_F(migrate, engine_unavailable)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { __u32 flag; __u64 feat; } e[] = {
		{ NUMAPLACE_MIGRATE_ENGINE_KERNEL, NUMAPLACE_FEAT_MIGRATE_KERNEL },
		{ NUMAPLACE_MIGRATE_ENGINE_VMA, NUMAPLACE_FEAT_MIGRATE_VMA },
		{ NUMAPLACE_MIGRATE_ENGINE_BATCH, NUMAPLACE_FEAT_MIGRATE_BATCH },
	};
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;
	int tried = 0;

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < ARRAY_SIZE(e); i++) {
		int ret = np_migrate_node(self->fd, 0, e[i].flag, (uintptr_t)p,
					  psz, i % 2 ? 0 : 1, NULL, &m);

		if (self->info.features & e[i].feat) {
			EXPECT_EQ(0, ret) TH_LOG("engine flag %#x", e[i].flag);
		} else {
			tried++;
			EXPECT_EQ(-EOPNOTSUPP, ret) TH_LOG("engine flag %#x", e[i].flag);
		}
	}
	if (!tried)
		ksft_print_msg("every engine is available: no -EOPNOTSUPP case\n");
}

/* A node that is not, or has no memory: -ENODEV, nothing moved. */
TEST_F(migrate, bad_nodes)
{
	NP_SKIPPED_OR_FILTERED();
	int bad[] = { -1, NUMAPLACE_MAX_NODES, INT_MAX, INT_MIN,
		      NUMAPLACE_MAX_NODES - 1, (int)self->info.nr_node_ids, -2 };
	char *p = np_pages_on0(4);
	struct numaplace_migrate m;
	__u64 addrs[4];
	int nodes[4], sys[4], memless = -1;
	__s32 st[4];

	ASSERT_NE(NULL, p);
	np_range_addrs(addrs, (uintptr_t)p, 4);
	for (int n = 0; n < (int)self->info.nr_node_ids; n++)
		if (np_node_isset(self->info.node_online, n) &&
		    !np_node_isset(self->info.node_memory, n))
			memless = n;
	if (memless >= 0)
		bad[ARRAY_SIZE(bad) - 1] = memless;
	else
		ksft_print_msg("no memoryless node in this guest\n");
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		int node = bad[b];

		for (int i = 0; i < 4; i++) {
			nodes[i] = node;
			st[i] = NP_SENTINEL;
		}
		EXPECT_EQ(-ENODEV, np_sys_move_pages(0, 4, addrs, nodes, sys,
						     NP_MF_MOVE))
			TH_LOG("syscall node %d", node);
		EXPECT_EQ(-ENODEV, np_migrate_node(self->fd, 0, 0, (uintptr_t)p,
						   4 * psz, node, st, &m))
			TH_LOG("range node %d", node);
		EXPECT_EQ(0, m.done);
		EXPECT_EQ(0, m.nr_moved_pages);
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_PER_PAGE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = 4;
		m.nodes_ptr = (uintptr_t)nodes;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m)) TH_LOG("array node %d", node);
		EXPECT_EQ(0, m.done);
		EXPECT_EQ(NP_SENTINEL, st[0]);
		if (node >= 0 && node < NUMAPLACE_MAX_NODES) {
			np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
			m.start = (uintptr_t)p;
			m.len = 4 * psz;
			m.node_set[0] = 1;
			m.node_set[node / 64] |= 1ULL << (node % 64);
			EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m))
				TH_LOG("interleave over 0 and %d", node);
		}
	}
	ASSERT_EQ(0, np_nodes_of(0, addrs, 4, sys));
	EXPECT_EQ(4, np_count(sys, 4, 0));
}

/*
 * A bad node in the middle of PER_PAGE targets: the entries before it are
 * moved and answered, as the syscall does; then -ENODEV, done = its index.
 */
TEST_F(migrate, bad_node_mid_array)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 8, at = 3;
	int bad[] = { -1, NUMAPLACE_MAX_NODES, -2 };
	struct numaplace_migrate m;
	__u64 aa[8], ab[8];
	int nodes[8], sys[8], wa[8], wb[8];
	__s32 st[8];

	for (int n2 = 0; n2 < (int)self->info.nr_node_ids; n2++)
		if (np_node_isset(self->info.node_online, n2) &&
		    !np_node_isset(self->info.node_memory, n2))
			bad[2] = n2;
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		for (int r = 0; r < 2; r++) {
			char *pa = np_pages_on0(n), *pb = np_pages_on0(n);
			int ret;

			ASSERT_TRUE(pa && pb);
			np_range_addrs(aa, (uintptr_t)pa, n);
			np_range_addrs(ab, (uintptr_t)pb, n);
			for (size_t i = 0; i < n; i++) {
				nodes[i] = i == at ? bad[b] : 1;
				sys[i] = st[i] = NP_SENTINEL;
			}
			EXPECT_EQ(-ENODEV, np_sys_move_pages(0, n, aa, nodes, sys,
							     NP_MF_MOVE));
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)ab;
			m.count = r ? 0 : n;
			m.start = r ? (uintptr_t)pb : 0;
			m.len = r ? n * psz : 0;
			m.nodes_ptr = (uintptr_t)nodes;
			m.status_ptr = (uintptr_t)st;
			ret = np_migrate(self->fd, &m);
			EXPECT_EQ(-ENODEV, ret) TH_LOG("node %d %s", bad[b],
						       r ? "range" : "array");
			EXPECT_EQ(at, m.done) TH_LOG("node %d %s", bad[b],
						     r ? "range" : "array");
			EXPECT_EQ(at, m.nr_moved_pages);
			ASSERT_EQ(0, np_nodes_of(0, aa, n, wa));
			ASSERT_EQ(0, np_nodes_of(0, ab, n, wb));
			for (size_t i = 0; i < n; i++) {
				EXPECT_EQ(sys[i], st[i]) TH_LOG("node %d %s: status %zu",
								bad[b], r ? "range" : "array", i);
				EXPECT_EQ(wa[i], wb[i]) TH_LOG("node %d %s: page %zu",
							       bad[b], r ? "range" : "array", i);
			}
			munmap(pa, n * psz);
			munmap(pb, n * psz);
		}
	}
}

/* POLICY_CPU: the node of the CPU; a CPU of a memoryless node -ENODEV. */
TEST_F(migrate, policy_cpu)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 16;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	int cpu1 = np_cpu_of_node(1), cpu0 = np_cpu_of_node(0), nodes[16];
	__s32 st[16];

	ASSERT_NE(NULL, p);
	if (cpu1 < 0 || cpu0 < 0)
		SKIP(return, "no CPU on node 0 or 1");
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_CPU);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.cpu = cpu1;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, np_count_s32(st, n, 1));
	EXPECT_EQ(n, m.nr_moved_pages);
	ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 1));
	m.cpu = cpu0;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, np_count_s32(st, n, 0));

	for (int nd = 0; nd < (int)self->info.nr_node_ids; nd++) {
		int cpu = np_cpu_of_node(nd);

		if (np_node_isset(self->info.node_memory, nd) || cpu < 0)
			continue;
		m.cpu = cpu;
		EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m))
			TH_LOG("cpu %d of memoryless node %d", cpu, nd);
		EXPECT_EQ(0, m.done);
	}
	m.cpu = 1U << 20;
	EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m));
	ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 0));
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/*
 * POLICY_INTERLEAVE over {0, 1} on THPs and 4 KiB pages: every folio
 * whole on one node, the nodes alternate folio by folio (in address
 * order), as many folios on each.
 */
TEST_F_TIMEOUT(migrate, interleave, 60)
{
	NP_SKIPPED_OR_FILTERED();
	/* 1: THP, 0: 4k, every other page written */
	static const int thp[] = { 1, 0, 1, 0, 1, 1 };
	const size_t nch = ARRAY_SIZE(thp), n = nch * NP_SEG_PAGES;
	char *p = np_pmd_map(nch * NP_PMD, 0);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	struct np_pre *pre = calloc(n, sizeof(*pre));
	struct np_page *post = calloc(n, sizeof(*post));
	__s32 *st = calloc(n + 1, sizeof(*st));
	__u64 moved = 0, in_place = 0, folios[2] = { 0, 0 }, holes = 0;
	unsigned long last = 0;
	int last_node = -1, bad = 0;
	struct numaplace_migrate m;
	struct np_model md;

	ASSERT_TRUE(p && addrs && pre && post && st);
	np_mempolicy(MPOL_BIND, 0);
	for (size_t c = 0; c < nch; c++) {
		char *q = p + c * NP_PMD;

		if (thp[c]) {
			madvise(q, NP_PMD, MADV_HUGEPAGE);
			memset(q, 0x40 + c, NP_PMD);
			madvise(q, NP_PMD, MADV_NOHUGEPAGE);
		} else {
			for (size_t i = 0; i < NP_SEG_PAGES; i += 2)
				np_touch_w(q, i);
		}
	}
	np_mempolicy(MPOL_DEFAULT, -1);
	np_range_addrs(addrs, (uintptr_t)p, n);
	ASSERT_EQ(0, np_pre_read(0, addrs, n, pre));
	if (!(pre[0].pg.what & NPW_PMD))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");

	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.node_set[0] = 3;
	m.status_ptr = (uintptr_t)st;
	st[n] = NP_SENTINEL;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(NP_SENTINEL, st[n]);
	ASSERT_EQ(0, np_model_open(&md, 0));
	for (size_t i = 0; i < n; i++)
		np_model_page(&md, addrs[i], &post[i]);
	np_model_close(&md);

	self->c.logged = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pre[i].folio) {
			holes++;
			if (st[i] != -ENOENT) {
				bad++;
				np_log(&self->c, "page %zu: never touched, status %d",
				       i, st[i]);
			}
			continue;
		}
		if (post[i].node != st[i] || st[i] < 0 || st[i] > 1) {
			bad++;
			np_log(&self->c, "page %zu: status %d, on node %d", i,
			       st[i], post[i].node);
		}
		if (pre[i].folio == last) {
			if (st[i] != last_node) {
				bad++;
				np_log(&self->c, "page %zu: status %d, its folio went to %d",
				       i, st[i], last_node);
			}
			continue;
		}
		/* A new folio. */
		if (st[i] == last_node) {
			bad++;
			np_log(&self->c, "page %zu: folio to node %d after a folio to %d",
			       i, st[i], last_node);
		}
		last = pre[i].folio;
		last_node = st[i];
		if (st[i] == 0 || st[i] == 1) {
			folios[st[i]]++;
			if (st[i] == 1)
				moved += pre[i].nr;
			else
				in_place += pre[i].nr;
		}
	}
	np_log_end(&self->c, "interleave", bad);
	EXPECT_EQ(0, bad);
	ksft_print_msg("folios: %llu on node 0, %llu on node 1\n",
		       (unsigned long long)folios[0],
		       (unsigned long long)folios[1]);
	EXPECT_LE(folios[0], folios[1] + 1);
	EXPECT_LE(folios[1], folios[0] + 1);
	EXPECT_EQ(moved, m.nr_moved_pages);
	EXPECT_EQ(in_place, m.nr_in_place_pages);
	EXPECT_EQ(holes, m.nr_failed[NUMAPLACE_FAIL_ENOENT]);
	EXPECT_EQ(folios[1], m.nr_moved_folios);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "interleave", &m, st, n, 1,
					   self->allowed));
	/* THPs stay whole (PMD-mapped), data intact. */
	for (size_t c = 0; c < nch; c++) {
		char *q = p + c * NP_PMD;

		if (!thp[c])
			continue;
		EXPECT_TRUE(post[c * NP_SEG_PAGES].what & NPW_PMD) TH_LOG("chunk %zu", c);
		EXPECT_TRUE(np_all_bytes(q, NP_PMD, 0x40 + c)) TH_LOG("chunk %zu", c);
	}

	/* One node in the set: everything there. */
	memset(m.node_set, 0, sizeof(m.node_set));
	m.node_set[0] = 2;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n - holes, np_count_s32(st, n, 1));
	free(addrs);
	free(pre);
	free(post);
	free(st);
}

/* An empty node set for INTERLEAVE: -EINVAL. */
TEST_F(migrate, interleave_empty_set)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(4);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
	m.start = (uintptr_t)p;
	m.len = 4 * psz;
	EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.nr_moved_pages);
}

/* status_ptr is optional; outputs that come in are ignored. */
TEST_F(migrate, status_optional_outputs_ignored)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 32;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	__s32 st[32];

	ASSERT_NE(NULL, p);
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.node = 1;
	m.done = ~0ULL;
	m.nr_moved_pages = m.nr_moved_folios = 12345;
	m.nr_in_place_pages = m.nr_failed_pages = 777;
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++)
		m.nr_failed[r] = r + 1;
	m.engines = ~0U;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(n, m.nr_moved_folios);
	EXPECT_EQ(0, m.nr_in_place_pages);
	EXPECT_EQ(0, m.nr_failed_pages);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "no status", &m, NULL, n,
					   1, self->allowed));
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++) {
		EXPECT_EQ(0, m.nr_failed[r]) TH_LOG("reason %d", r);
	}
	/* Again: all in place, no engine. */
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.nr_in_place_pages);
	EXPECT_EQ(0, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines);
	EXPECT_EQ(n, np_count_s32(st, n, 1));
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/*
 * A cpuset cgroup whose cpuset.mems is @mems, on a cgroup2 mount of the
 * test's own (self->cg, self->cg_mnt: the teardown removes both). 0,
 * -ENOENT (no cgroup2 or no cpuset controller) or -errno.
 */
static int np_cpuset_make(FIXTURE_DATA(migrate) *self, const char *mems)
{
	char path[256];

	snprintf(self->cg_mnt, sizeof(self->cg_mnt), "/tmp/np-cg-%d", getpid());
	if (mkdir(self->cg_mnt, 0700))
		return -errno;
	if (mount("none", self->cg_mnt, "cgroup2", 0, NULL)) {
		rmdir(self->cg_mnt);
		self->cg_mnt[0] = 0;
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", self->cg_mnt);
	if (np_write_str(path, "+cpuset"))
		return -ENOENT;
	snprintf(self->cg, sizeof(self->cg), "%s/np-migrate", self->cg_mnt);
	if (mkdir(self->cg, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/cpuset.mems", self->cg);
	return np_write_str(path, mems);
}

/*
 * A node outside the target's cpuset (cgroup2 cpuset.mems): -EACCES as
 * the syscall; in the middle of PER_PAGE targets after the entries
 * before it; a memoryless node is still -ENODEV.
 */
TEST_F(migrate, cpuset_outside)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_PROBE_PAGES, at = 5;
	int ret;
	struct np_probe_args a = { 0, 0, 1, 0, NP_MF_MOVE };
	struct numaplace_migrate m;
	char path[256], val[32];
	__u64 addrs[NP_PROBE_PAGES];
	int nodes[NP_PROBE_PAGES], sys[NP_PROBE_PAGES];
	__s32 st[NP_PROBE_PAGES];
	pid_t pid;

	ret = np_cpuset_make(self, "0");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 cpuset controller");
	ASSERT_EQ(0, ret);
	pid = np_kid(self, 0, 1);
	ASSERT_GT(pid, 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", self->cg);
	snprintf(val, sizeof(val), "%d", pid);
	ASSERT_EQ(0, np_write_str(path, val));

	a.pid = pid;
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, 0, &a));
	EXPECT_EQ(-EACCES, self->res->sys);
	EXPECT_EQ(-EACCES, self->res->mod);
	EXPECT_EQ(0, self->res->done);
	EXPECT_EQ(NP_SENTINEL, self->res->st[0]);

	/* In the middle: entries before it answered (in place here). */
	np_range_addrs(addrs, a.base, n);
	for (size_t i = 0; i < n; i++) {
		nodes[i] = i == at ? 1 : 0;
		sys[i] = st[i] = NP_SENTINEL;
	}
	EXPECT_EQ(-EACCES, np_sys_move_pages(pid, n, addrs, nodes, sys,
					     NP_MF_MOVE));
	np_migrate_init(&m, pid, NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)addrs;
	m.count = n;
	m.nodes_ptr = (uintptr_t)nodes;
	m.status_ptr = (uintptr_t)st;
	EXPECT_EQ(-EACCES, np_migrate(self->fd, &m));
	EXPECT_EQ(at, m.done);
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(sys[i], st[i]) TH_LOG("entry %zu", i);
	}
	/* Node checks before the cpuset. */
	for (int nd = 0; nd < (int)self->info.nr_node_ids; nd++) {
		if (np_node_isset(self->info.node_memory, nd))
			continue;
		EXPECT_EQ(-ENODEV, np_migrate_node(self->fd, pid, 0, a.base,
						   n * psz, nd, NULL, &m));
	}
	ASSERT_EQ(0, np_where_pages(pid, a.base, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 0));
}

/*
 * A target node inside the target's cpuset but outside the caller's:
 * move_pages(2) allocates in the caller's context, so nothing moves and
 * the call fails with ENOMEM (its way of saying the node is full).
 * numaplace moves nothing either and answers each such page -ENOMEM (as
 * for a full node, abi.md), also when its copy workers (kworkers, outside
 * any cpuset) allocate. (41261ae passes too here: the caller's own share
 * fails first and stops the workers; the check up front makes it so by
 * construction.) The caller is a child in a cpuset of node 0; the target
 * is the test, outside it.
 */
#define NP_CPUSET_SMALL	512

TEST_F(migrate, cpuset_caller)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t nt = 2 * NP_SEG_PAGES, n = NP_CPUSET_SMALL + nt;
	char *small = np_pmd_map(NP_CPUSET_SMALL * psz, 0);
	char *thp = np_pmd_map(nt * psz, 1);
	size_t bytes = (2 * n + 1) * sizeof(int);
	int *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int *mod = sh, *sys = sh + n, now[NP_CPUSET_SMALL + 2 * NP_SEG_PAGES];
	__u64 *addrs = calloc(n, sizeof(*addrs));
	int bad = 0, ret, status;
	pid_t pid;

	ASSERT_TRUE(small && thp && sh != MAP_FAILED && addrs);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	ret = np_cpuset_make(self, "0");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 cpuset controller");
	ASSERT_EQ(0, ret);
	np_range_addrs(addrs, (uintptr_t)small, NP_CPUSET_SMALL);
	np_range_addrs(addrs + NP_CPUSET_SMALL, (uintptr_t)thp, nt);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(small, NP_CPUSET_SMALL, 1);
	np_fill(thp, nt, 2);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Not shared with the caller (else -EACCES without MOVE_ALL). */
	ASSERT_EQ(0, madvise(small, NP_CPUSET_SMALL * psz, MADV_DONTFORK));
	ASSERT_EQ(0, madvise(thp, nt * psz, MADV_DONTFORK));
	/* Workers that allocate outside the caller's context. */
	if (system("numaplace config copy_workers=2 >/dev/null 2>&1"))
		TH_LOG("could not set copy_workers=2: only the caller copies");

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char procs[256];
		pid_t target = getppid();
		struct numaplace_migrate m;
		int nodes[NP_CPUSET_SMALL + 2 * NP_SEG_PAGES];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", self->cg);
		if (np_write_str(procs, "0"))
			_exit(2);
		for (size_t i = 0; i < n; i++) {
			nodes[i] = 1;
			mod[i] = sys[i] = NP_SENTINEL;
		}
		np_migrate_init(&m, target, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = n;
		m.node = 1;
		m.status_ptr = (uintptr_t)mod;
		if (np_migrate(self->fd, &m))
			_exit(3);
		sys[n] = np_sys_move_pages(target, n, addrs, nodes, sys,
					   NP_MF_MOVE);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	system("numaplace config copy_workers=0 >/dev/null 2>&1");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOMEM, sys[n]);
	for (size_t i = 0; i < n; i++)
		bad += mod[i] != -ENOMEM;
	EXPECT_EQ(0, bad) TH_LOG("page 0: %d; last: %d", mod[0], mod[n - 1]);
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != 0;
	EXPECT_EQ(0, bad) TH_LOG("pages moved out of the caller's cpuset");
	munmap(sh, bytes);
	free(addrs);
}

NP_HARNESS_MAIN
