// SPDX-License-Identifier: GPL-2.0
/*
 * Page-level helpers of the NUMAPLACE_IOC_QUERY tests (query.c,
 * query_random.c, query_abi.c, query_walk.c, query_race*.c, target.c):
 * writing, reading and moving single pages, one address's answer from
 * the syscall, the module and the model, tmpfs files, the device opened
 * for QUERY. In the tests' library: no kselftest harness here.
 */
#include <sys/mman.h>

#include "np_test.h"
#include "migrate_lib.h"

static long np_psz(void)
{
	return sysconf(_SC_PAGESIZE);
}

int np_query_open(int *fd, struct np_ctx *c, struct numaplace_info *info,
		  char *why, size_t len)
{
	int ret = np_open_info(fd, info, why, len);

	if (ret)
		return ret;
	if (!(info->features & NUMAPLACE_FEAT_QUERY)) {
		snprintf(why, len, "module has no NUMAPLACE_FEAT_QUERY");
		return 1;
	}
	return np_ctx_ready(c, *fd, why, len);
}

int np_other_node(const struct numaplace_info *info, int node)
{
	for (int n = 0; n < (int)info->nr_node_ids; n++)
		if (n != node && np_node_isset(info->node_memory, n))
			return n;
	return -1;
}

void np_write_page(char *base, size_t i)
{
	((volatile char *)base)[i * np_psz()] = (char)(i | 1);
}

void np_write_pages(char *base, size_t first, size_t n, size_t step)
{
	for (size_t i = 0; i < n; i++)
		np_write_page(base, first + i * step);
}

char *np_written_pages(size_t n)
{
	char *p = np_pmd_map(n * np_psz(), 0);

	if (p)
		np_write_pages(p, 0, n, 1);
	return p;
}

char *np_written_thps(size_t n)
{
	char *p = np_pmd_map(n * NP_PMD, 1);

	if (p)
		memset(p, 1, n * NP_PMD);
	return p;
}

void np_read_page(char *base, size_t i)
{
	(void)((volatile char *)base)[i * np_psz()];
}

void np_fill_addrs(__u64 *addrs, const char *base, size_t n)
{
	long psz = np_psz();

	for (size_t i = 0; i < n; i++)
		addrs[i] = (uintptr_t)base + i * psz;
}

int np_sys_one(const void *addr)
{
	__u64 a = (uintptr_t)addr;
	int st = NP_SENTINEL;
	long ret = np_sys_query(0, 1, &a, &st);

	return ret ? (int)ret : st;
}

int np_expect_kind(int fd, unsigned long start, size_t n, __u32 kinds,
		   int status)
{
	struct numaplace_run runs[64];
	struct numaplace_query q;
	size_t bad = n, pages = 0;

	if (np_query_range(fd, 0, 0, start, n * np_psz(), runs, 64, NULL,
			   NULL, 0, &q) || q.done != n)
		return n;
	for (__u32 r = 0; r < q.nr_runs; r++) {
		pages += runs[r].nr_pages;
		if ((runs[r].kind & kinds) == kinds && runs[r].node == status)
			bad -= runs[r].nr_pages;
		else
			fprintf(stderr, "# run %u: %llu pages node %d kind %#x\n",
				r, (unsigned long long)runs[r].nr_pages,
				runs[r].node, runs[r].kind);
	}
	return pages == n ? bad : n;
}

unsigned int np_what(const void *addr)
{
	struct np_model m;
	struct np_page pg;

	if (np_model_open(&m, 0))
		return 0;
	np_model_page(&m, (uintptr_t)addr, &pg);
	np_model_close(&m);
	return pg.what;
}

int np_thp_on(void)
{
	char buf[128];

	if (np_read_str("/sys/kernel/mm/transparent_hugepage/enabled", buf,
			sizeof(buf)))
		return 0;
	return !strstr(buf, "[never]");
}

int np_move(char *base, size_t first, size_t n, size_t step, int node)
{
	__u64 *addrs = calloc(n, sizeof(*addrs));
	int *nodes = calloc(n, sizeof(int)), *st = calloc(n, sizeof(int));
	long psz = np_psz();
	int left = 0;
	long ret;

	for (size_t i = 0; i < n; i++) {
		addrs[i] = (uintptr_t)base + (first + i * step) * psz;
		nodes[i] = node;
	}
	ret = np_sys_move_pages(0, n, addrs, nodes, st, 0);
	for (size_t i = 0; i < n; i++)
		left += ret < 0 || st[i] != node;
	free(addrs);
	free(nodes);
	free(st);
	return left;
}

int np_hp_grow(int node, long more, char *path, size_t len, long *orig)
{
	char val[32];
	long have;

	snprintf(path, len,
		 "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/nr_hugepages",
		 node);
	have = np_read_long(path);
	if (have < 0)
		return -ENOENT;
	*orig = have;
	snprintf(val, sizeof(val), "%ld", have + more);
	np_write_str(path, val);
	return np_read_long(path) < have + more ? -ENOMEM : 0;
}

int np_tmpfile(size_t pages)
{
	char path[] = "/tmp/np-query-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	if (ftruncate(fd, pages * np_psz())) {
		close(fd);
		return -1;
	}
	return fd;
}

int np_pwrite_page(int fd, size_t i)
{
	char buf[64];

	memset(buf, (int)(i | 1), sizeof(buf));
	return pwrite(fd, buf, sizeof(buf), i * np_psz()) == sizeof(buf) ?
	       0 : -1;
}

char *np_mixed_region(size_t *npages, int other)
{
	long psz = np_psz();
	size_t n = NP_PMD / psz + 64;
	char *p = np_pmd_map(2 * NP_PMD, 0);

	if (!p)
		return NULL;
	/* 64 pages of 4k, then a THP-able aligned block. */
	munmap(p, NP_PMD - 64 * psz);
	p += NP_PMD - 64 * psz;
	madvise(p + 64 * psz, NP_PMD, MADV_HUGEPAGE);
	memset(p + 64 * psz, 3, NP_PMD);
	for (size_t i = 0; i < 64; i++) {
		if (i % 4 == 0 || i % 7 == 0)
			np_write_page(p, i);
		else if (i % 5 == 0)
			np_read_page(p, i);
	}
	if (other >= 0)
		np_move(p, 0, 4, 8, other);
	mprotect(p + 40 * psz, 3 * psz, PROT_NONE);
	munmap(p + 50 * psz, 4 * psz);
	*npages = n;
	return p;
}
