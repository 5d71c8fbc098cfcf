// SPDX-License-Identifier: GPL-2.0
/*
 * The migrate suites' helpers and page layouts (migrate_lib.h), compiled
 * once into the tests' library.
 */
#include <grp.h>
#include <linux/mempolicy.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "migrate_lib.h"

static long psz;

static void __attribute__((constructor)) np_lay_init(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

int np_filtered(const char *name)
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

size_t np_rnd_below(__u64 *s, size_t n)
{
	return n ? np_rnd(s) % n : 0;
}

char *np_pmd_map(size_t len, int thp)
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

void np_fill(char *p, size_t n, __u64 g)
{
	for (size_t i = 0; i < n; i++) {
		__u64 *w = (__u64 *)(p + i * psz), v = np_stamp(i, g);

		for (size_t k = 0; k < psz / 8; k++)
			w[k] = v + k;
	}
}

size_t np_fill_bad(const char *p, size_t n, __u64 g, size_t *first)
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

int np_nodes_of(int pid, const __u64 *addrs, size_t n, int *st)
{
	long ret = np_sys_query(pid, n, addrs, st);

	return ret > 0 ? -EIO : (int)ret;
}

void np_range_addrs(__u64 *a, uintptr_t base, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = base + i * psz;
}

int np_cpu_of_node(int node)
{
	char path[96], buf[256];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		 node);
	if (np_read_str(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	return atoi(buf);
}

long np_node_kb(int node, const char *keys)
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

int np_have_swap(void)
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

int np_vvar(unsigned long *s, unsigned long *e)
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

int np_drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

int np_become(uid_t uid, int dumpable)
{
	int ret = uid ? np_drop_to(uid) : 0;

	if (ret)
		return ret;
	/* After the uid change, which clears it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	return prctl(PR_SET_DUMPABLE, dumpable) ? -errno : 0;
}

int np_child_device(uid_t uid, int fd)
{
	if (uid && np_drop_to(uid))
		_exit(2);
	if (fd < 0)
		fd = np_open();
	if (fd < 0)
		_exit(3);
	return fd;
}

int np_proc_state(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (np_read_str(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

pid_t np_zombie(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(0);
	for (int i = 0; i < 200 && np_proc_state(pid) != 'Z'; i++)
		usleep(10000);
	if (np_proc_state(pid) != 'Z') {
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* ------------------------------------------------------------------ */
/* Layouts of every page kind, built twice identically.               */
/* ------------------------------------------------------------------ */

const char *const np_seg_names[] = {
	"anon 4k", "thp", "thp on node 1", "thp pte-mapped", "thp protnone",
	"huge zero", "fork 4k", "fork thp", "swap", "shared anon", "memfd",
	"tmpfs file", "hugetlb",
};

void np_lay_free(struct np_lay *l)
{
	for (int i = 0; i < l->nseg; i++)
		if (l->fds[i] >= 0)
			close(l->fds[i]);
	if (l->base)
		munmap(l->base, l->npages * psz);
	free(l->target);
	memset(l, 0, sizeof(*l));
}

void np_touch_w(char *p, size_t i)
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

/*
 * Every page of the segment at @c written but each fourth (never
 * touched), and those with i % @every == @at moved to node 1.
 */
static void np_seg_3of4(char *c, size_t every, size_t at)
{
	for (size_t i = 0; i < NP_SEG_PAGES; i++) {
		if (i % 4 != 3)
			np_touch_w(c, i);
		if (i % every == at)
			np_move1(c + i * psz, 1);
	}
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
		np_seg_3of4(c, 4, 2);
		break;
	case NP_SEG_SWAP:
		for (size_t i = 0; i < NP_SEG_PAGES; i++)
			np_touch_w(c, i);
		madvise(c, NP_PMD / 2, MADV_PAGEOUT);
		break;
	case NP_SEG_SHARED_ANON:
		np_seg_3of4(c, 8, 1);
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

int np_lay_build(struct np_lay *l, const enum np_seg *kinds, int nseg,
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

static int np_lay_share(void *arg)
{
	const struct np_lay *const *l = arg;

	/* The child maps the first half of the shared anon pages. */
	for (int j = 0; j < 2; j++)
		for (int k = 0; l[j] && k < l[j]->nseg; k++)
			if (l[j]->seg[k] == NP_SEG_SHARED_ANON)
				for (size_t i = 0; i < NP_SEG_PAGES / 2; i++)
					np_touch_r(l[j]->base + k * NP_PMD, i);
	return 0;
}

pid_t np_lay_fork(const struct np_lay *a, const struct np_lay *b)
{
	const struct np_lay *l[2] = { a, b };

	return np_fork_ready(np_lay_share, l);
}

/* nr_hugepages of nodes 0 and 1 before a test changed them ("n0 n1"). */

void np_hp_write(int node, long val)
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

void np_hp_restore(long *orig)
{
	for (int n = 0; n < 2; n++) {
		if (orig[n] < 0)
			continue;
		np_hp_write(n, orig[n]);
		orig[n] = -1;
	}
	unlink(NP_HP_SAVED);
}

void np_hp_save(const long *orig)
{
	FILE *f = fopen(NP_HP_SAVED, "we");

	if (!f)
		return;
	fprintf(f, "%ld %ld\n", orig[0], orig[1]);
	fclose(f);
}

long np_hp_fill_node(int node, long *orig)
{
	char path[128];
	long got;

	snprintf(path, sizeof(path), NP_HP_PATH, node);
	orig[node] = np_read_long(path);
	if (orig[node] < 0)
		return -ENOENT;
	np_hp_save(orig);
	np_hp_write(node, NP_HP_FILL_ASK);
	got = np_read_long(path);
	if (got < orig[node] + NP_HP_FILL_ROOM)
		return -ENOMEM;
	np_hp_write(node, got - NP_HP_FILL_ROOM);
	got = np_read_long(path);
	return got < 0 ? -EIO : got;
}

char *np_full_src(size_t n, __u64 g)
{
	char *p = np_pmd_map(n * psz, 0);
	int err;

	if (!p)
		return NULL;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, g);
	np_mempolicy(MPOL_DEFAULT, -1);
	if (mlock(p, n * psz)) {
		err = errno;
		munmap(p, n * psz);
		errno = err;
		return NULL;
	}
	return p;
}

size_t np_full_src_free(char *p, size_t n, __u64 g, size_t *first)
{
	size_t bad = np_fill_bad(p, n, g, first);

	munlock(p, n * psz);
	munmap(p, n * psz);
	return bad;
}

int np_mig_open(int *fd, struct np_ctx *c, struct numaplace_info *info,
		char *why, size_t len)
{
	const __u64 feats = NUMAPLACE_FEAT_MIGRATE_KERNEL |
			    NUMAPLACE_FEAT_MIGRATE_VMA |
			    NUMAPLACE_FEAT_MIGRATE_BATCH;
	int ret;

	ret = np_open_info(fd, info, why, len);
	if (ret)
		return ret;
	if (!(info->ioctls & (1ULL << NUMAPLACE_CMD_MIGRATE)) ||
	    !(info->features & feats)) {
		snprintf(why, len, "module has no NUMAPLACE_IOC_MIGRATE (features %#llx)",
			 (unsigned long long)info->features);
		return 1;
	}
	if (geteuid()) {
		snprintf(why, len, "needs root (pagemap PFNs, uids, MOVE_ALL)");
		return 1;
	}
	if (!np_node_isset(info->node_memory, 0) ||
	    !np_node_isset(info->node_memory, 1)) {
		snprintf(why, len, "needs memory on nodes 0 and 1");
		return 1;
	}
	ret = np_ctx_ready(c, *fd, why, len);
	if (ret)
		return ret;
	np_hp_recover();
	return 0;
}
