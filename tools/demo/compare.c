// SPDX-License-Identifier: GPL-2.0
/*
 * np-demo-compare: the demo's side-by-side lines, numaplace against the
 * running kernel's own syscall, measured here and now in one boot.
 *
 *   np-demo-compare query PID ADDR LEN   the node of every page of a range
 *   np-demo-compare migrate MIB          MIB of 4 KiB pages, node 0 -> 1
 *
 * query: move_pages(2) with nodes == NULL against numaplace_move_pages()
 * on the same pages, best of NP_ROUNDS each, and the answers compared.
 * migrate: a fresh buffer on node 0 moved to node 1 by move_pages(2),
 * then (back on node 0) by numaplace_migrate_range(); placement and every
 * byte checked after each.
 */
#include <errno.h>
#include <numaplace.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

/* Rounds of each query, best kept: the guest's clock is noisy. */
#define NP_ROUNDS 3

static double np_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long np_sys_move_pages(int pid, unsigned long n, void **pages,
			      const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, n, pages, nodes, status, flags);
}

static int np_query(int pid, unsigned long addr, unsigned long len)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long n = len / page, i, diff = 0;
	double t, best_sys = 1e9, best_np = 1e9;
	int *st_sys, *st_np;
	void **pages;

	pages = calloc(n, sizeof(*pages));
	st_sys = calloc(n, sizeof(*st_sys));
	st_np = calloc(n, sizeof(*st_np));
	if (!pages || !st_sys || !st_np || !n)
		return 1;
	for (i = 0; i < n; i++)
		pages[i] = (void *)(addr + i * page);
	for (int r = 0; r < NP_ROUNDS; r++) {
		t = np_now();
		if (np_sys_move_pages(pid, n, pages, NULL, st_sys, 0))
			return perror("move_pages"), 1;
		t = np_now() - t;
		best_sys = t < best_sys ? t : best_sys;
		t = np_now();
		if (numaplace_move_pages(pid, n, pages, NULL, st_np, 0))
			return perror("numaplace_move_pages"), 1;
		t = np_now() - t;
		best_np = t < best_np ? t : best_np;
	}
	for (i = 0; i < n; i++)
		diff += st_sys[i] != st_np[i];
	printf("node of %lu pages: move_pages(2) %.2f ms, numaplace %.2f ms (%.1fx); answers %s\n",
	       n, best_sys * 1e3, best_np * 1e3, best_sys / best_np,
	       diff ? "DIFFER" : "identical");
	return diff != 0;
}

/* Every page of @p on @node and still holding its stamp. */
static int np_check(char *p, unsigned long n, long page, void **pages,
		    int *status, int node)
{
	if (np_sys_move_pages(0, n, pages, NULL, status, 0))
		return -1;
	for (unsigned long i = 0; i < n; i++)
		if (status[i] != node || p[i * page] != (char)i)
			return -1;
	return 0;
}

static int np_migrate(unsigned long mib)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long len = mib << 20, n = len / page, i;
	int *nodes, *status, ret;
	double t_sys, t_np;
	void **pages;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pages = calloc(n, sizeof(*pages));
	nodes = calloc(n, sizeof(*nodes));
	status = calloc(n, sizeof(*status));
	if (p == MAP_FAILED || !pages || !nodes || !status)
		return 1;
	/* 4 KiB pages: the per-page case the syscall is slowest at. */
	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < n; i++) {
		p[i * page] = (char)i;
		pages[i] = p + i * page;
	}
	/* Start on node 0 (untimed). */
	if (np_sys_move_pages(0, n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		return perror("move_pages"), 1;
	for (i = 0; i < n; i++)
		nodes[i] = 1;
	t_sys = np_now();
	if (np_sys_move_pages(0, n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		return perror("move_pages"), 1;
	t_sys = np_now() - t_sys;
	if (np_check(p, n, page, pages, status, 1))
		return fprintf(stderr, "move_pages(2): pages not all on node 1\n"), 1;
	memset(nodes, 0, n * sizeof(*nodes));
	if (np_sys_move_pages(0, n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		return perror("move_pages"), 1;
	t_np = np_now();
	ret = numaplace_migrate_range(0, p, len, 1, 0, NULL);
	t_np = np_now() - t_np;
	if (ret)
		return fprintf(stderr, "numaplace: %s\n", strerror(-ret)), 1;
	if (np_check(p, n, page, pages, status, 1))
		return fprintf(stderr, "numaplace: pages not all on node 1\n"), 1;
	printf("%lu MiB (%lu pages of 4 KiB) node 0 -> 1: move_pages(2) %.0f ms (%.2f GB/s), numaplace %.0f ms (%.2f GB/s): %.2fx, data checked\n",
	       mib, n, t_sys * 1e3, len / t_sys / 1e9, t_np * 1e3,
	       len / t_np / 1e9, t_sys / t_np);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "query"))
		return np_query(atoi(argv[2]), strtoul(argv[3], NULL, 16),
				strtoul(argv[4], NULL, 16));
	if (argc == 3 && !strcmp(argv[1], "migrate"))
		return np_migrate(strtoul(argv[2], NULL, 0));
	fprintf(stderr, "usage: np-demo-compare query PID ADDR LEN | migrate MIB\n");
	return 2;
}
