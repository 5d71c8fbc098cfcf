// SPDX-License-Identifier: GPL-2.0
/*
 * bench/query: how long does it take to learn where 256 MiB of anonymous
 * memory lives? move_pages(2) with a NULL node list, /proc/self/pagemap,
 * numaplace's runs and totals, and numaplace_move_pages() as a drop-in,
 * on 4 KiB pages and on THPs.
 *
 * TCG timings are noisy: every round runs the methods in A B .. B A order
 * and the best time of NP_ROUNDS rounds is kept. The drop-in's status[]
 * (and the runs' nodes) are checked against the syscall's on the same
 * buffer: any difference prints MISMATCH and exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "numaplace.h"
#include "bench.h"
#include "watches.h"

/* The size of a pinned RDMA / KV-cache buffer. */
#define NP_BUF_SIZE	(256UL << 20)
/* x86-64 PMD (THP) size: the THP variant is aligned to it. */
#define NP_PMD_SIZE	(2UL << 20)
/* TCG timings are noisy: keep the best of this many rounds. */
#define NP_ROUNDS	5
/* Runs per ioctl: a 96 KiB buffer. */
#define NP_RUNS_CAP	4096
/* status[] fill values: a slot the syscall / numaplace did not write. */
#define NP_SENTINEL_SYS	0x5a5a5a5a
#define NP_SENTINEL_NP	0x3c3c3c3c


/* One buffer under test and the arrays each method fills. */
struct np_bench {
	const char *variant;
	char *map, *buf;		/* the mmap, its 2 MiB aligned part */
	size_t map_len, nr_pages, page_size;
	void *arrays;			/* pages[] and status[], one block */
	void **pages;			/* move_pages' pages[] of buf */
	int *status;			/* scratch status[] */
	__u64 *pagemap;			/* one entry per page */
	int pagemap_fd;
	struct numaplace_run *runs;
	__u64 *node_pages;		/* nr_nodes entries */
	size_t nr_nodes;
	size_t nr_runs;			/* runs the last runs pass saw */
};

enum np_method_id {
	NP_M_MOVE_PAGES,
	NP_M_PAGEMAP,
	NP_M_RUNS,
	NP_M_TOTALS,
	NP_M_DROPIN,
	NP_M_ACCESS,
	NP_M_ACCESS_CLEAR,
	NP_NR_METHODS,
};

struct np_method {
	const char *name;
	int (*fn)(struct np_bench *b);
	int needs_device;
	void (*prep)(struct np_bench *b);	/* before the timing, or NULL */
};

/* What one variant measured, for the table. */
struct np_result {
	const char *variant;
	double best_ms[NP_NR_METHODS];
	int err[NP_NR_METHODS];
	long thp_pages;			/* -1: unknown */
	const char *thp_source;
	size_t nr_runs;
	char nodes[128];		/* "0:65536 1:0" from move_pages */
};

static int np_have_device;
/* INFO's nr_node_ids: the node totals buffer needs no more. */
static unsigned int np_nr_node_ids = 1;

static int np_m_move_pages(struct np_bench *b)
{
	if (syscall(SYS_move_pages, 0, b->nr_pages, b->pages, NULL,
		    b->status, 0))
		return -errno;
	return 0;
}

static int np_m_pagemap(struct np_bench *b)
{
	size_t want = b->nr_pages * sizeof(__u64), got = 0;
	off_t off = (uintptr_t)b->buf / b->page_size * sizeof(__u64);
	ssize_t n;

	while (got < want) {
		n = pread(b->pagemap_fd, (char *)b->pagemap + got, want - got,
			  off + got);
		if (n < 0)
			return -errno;
		if (!n)
			return -EIO;
		got += n;
	}
	return 0;
}

/*
 * The buffer's runs through a runs buffer of NP_RUNS_CAP, resumed:
 * QUERY's (@access -1: counted in b->nr_runs) or the access scan's with
 * @access as its flags.
 */
static int np_runs_pass(struct np_bench *b, int access)
{
	size_t off = 0, nr, done;
	void *at;
	size_t len;
	int ret;

	if (access < 0)
		b->nr_runs = 0;
	while (off < b->nr_pages) {
		at = b->buf + off * b->page_size;
		len = (b->nr_pages - off) * b->page_size;
		if (access < 0)
			ret = numaplace_query_runs(0, at, len, b->runs,
						   NP_RUNS_CAP, &nr, &done);
		else
			ret = numaplace_access_runs(0, at, len, access, b->runs,
						    NP_RUNS_CAP, &nr, &done,
						    NULL);
		if (ret)
			return ret;
		if (!done)
			return -EIO;
		if (access < 0)
			b->nr_runs += nr;
		off += done;
	}
	return 0;
}

static int np_m_runs(struct np_bench *b)
{
	return np_runs_pass(b, -1);
}

static int np_m_access(struct np_bench *b)
{
	return np_runs_pass(b, 0);
}

/*
 * Every page young when the clearing pass starts, as a tiering daemon
 * finds a busy buffer: each page is read first, outside the timing (the
 * last pass flushed the TLB, so the read sets the bit).
 */
static void np_touch_all(struct np_bench *b)
{
	for (size_t i = 0; i < b->nr_pages; i++)
		(void)*(volatile char *)(b->buf + i * b->page_size);
}

static int np_m_access_clear(struct np_bench *b)
{
	return np_runs_pass(b, NUMAPLACE_QUERY_CLEAR_ACCESS |
			       NUMAPLACE_QUERY_FLUSH_TLB);
}

static int np_m_totals(struct np_bench *b)
{
	return numaplace_query_totals(0, b->buf, b->nr_pages * b->page_size,
				      b->node_pages, b->nr_nodes, NULL);
}

static int np_m_dropin(struct np_bench *b)
{
	if (numaplace_move_pages(0, b->nr_pages, b->pages, NULL, b->status,
				 0))
		return -errno;
	return 0;
}

static const struct np_method np_methods[NP_NR_METHODS] = {
	[NP_M_MOVE_PAGES] = { "move_pages(2), nodes=NULL", np_m_move_pages, 0 },
	[NP_M_PAGEMAP] = { "/proc/self/pagemap pread", np_m_pagemap, 0 },
	[NP_M_RUNS] = { "numaplace runs", np_m_runs, 1 },
	[NP_M_TOTALS] = { "numaplace totals only", np_m_totals, 1 },
	[NP_M_DROPIN] = { "numaplace_move_pages()", np_m_dropin, 1 },
	[NP_M_ACCESS] = { "numaplace access scan, read", np_m_access, 1 },
	[NP_M_ACCESS_CLEAR] = { "access scan, clear+flush", np_m_access_clear, 1,
				np_touch_all },
};

static void np_time_one(struct np_bench *b, struct np_result *res, int m)
{
	double t0, ms;
	int ret;

	if (res->err[m] || (np_methods[m].needs_device && !np_have_device))
		return;
	if (np_methods[m].prep)
		np_methods[m].prep(b);
	t0 = np_bench_now_ms();
	ret = np_methods[m].fn(b);
	ms = np_bench_now_ms() - t0;
	if (ret) {
		res->err[m] = -ret;
		fprintf(stderr, "bench %s: %s: %s\n", b->variant,
			np_methods[m].name, strerror(-ret));
		return;
	}
	if (ms < res->best_ms[m])
		res->best_ms[m] = ms;
}

/* A B C D E, then E D C B A: drift and warm-up hit every method alike. */
static void np_time_all(struct np_bench *b, struct np_result *res)
{
	int r, m;

	for (m = 0; m < NP_NR_METHODS; m++)
		res->best_ms[m] = INFINITY;
	for (r = 0; r < NP_ROUNDS; r++) {
		for (m = 0; m < NP_NR_METHODS; m++)
			np_time_one(b, res, m);
		for (m = NP_NR_METHODS - 1; m >= 0; m--)
			np_time_one(b, res, m);
	}
}

/*
 * The oracle: the syscall's status[] against numaplace_move_pages' and
 * against the runs' nodes, on the same buffer. Also counts THP pages and
 * pages per node. Returns the number of mismatches.
 */
static long np_verify(struct np_bench *b, struct np_result *res)
{
	int *st_sys = calloc(b->nr_pages, sizeof(int));
	int *st_np = calloc(b->nr_pages, sizeof(int));
	long bad = 0, ret_sys, ret_np, thp = 0;
	static size_t per_node[NUMAPLACE_MAX_NODES];
	size_t i, off = 0, nr, done, k;
	int len = 0, err_sys, err_np, ret;

	if (!st_sys || !st_np) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	for (i = 0; i < b->nr_pages; i++) {
		st_sys[i] = NP_SENTINEL_SYS;
		st_np[i] = NP_SENTINEL_NP;
	}
	errno = 0;
	ret_sys = syscall(SYS_move_pages, 0, b->nr_pages, b->pages, NULL,
			  st_sys, 0);
	err_sys = ret_sys < 0 ? errno : 0;
	memset(per_node, 0, sizeof(per_node));
	for (i = 0; i < b->nr_pages; i++)
		if (st_sys[i] >= 0 && st_sys[i] < (int)NP_ARRAY_SIZE(per_node))
			per_node[st_sys[i]]++;
	for (k = 0; k < NP_ARRAY_SIZE(per_node); k++)
		if (per_node[k] && len < (int)sizeof(res->nodes) - 1)
			len += snprintf(res->nodes + len,
					sizeof(res->nodes) - len, "%s%zu:%zu",
					len ? " " : "", k, per_node[k]);
	if (!np_have_device)
		goto out;

	errno = 0;
	ret_np = numaplace_move_pages(0, b->nr_pages, b->pages, NULL, st_np,
				      0);
	err_np = ret_np < 0 ? errno : 0;
	if (ret_np != ret_sys || err_np != err_sys) {
		printf("MISMATCH %s: move_pages returned %ld (%s), numaplace_move_pages %ld (%s)\n",
		       b->variant, ret_sys,
		       strerror(err_sys), ret_np, strerror(err_np));
		bad++;
	}
	for (i = 0; i < b->nr_pages; i++) {
		if (st_np[i] == st_sys[i])
			continue;
		if (bad++ < 8)
			printf("MISMATCH %s: page %zu (%p): move_pages status %d, numaplace_move_pages %d\n",
			       b->variant, i,
			       b->pages[i], st_sys[i], st_np[i]);
	}

	/* The runs, page by page, against the syscall (no NUMA hinting). */
	while (off < b->nr_pages) {
		ret = numaplace_query_runs(0, b->buf + off * b->page_size,
					   (b->nr_pages - off) * b->page_size,
					   b->runs, NP_RUNS_CAP, &nr, &done);
		if (ret || !done) {
			printf("MISMATCH %s: runs query failed at page %zu: %s\n",
			       b->variant, off,
			       strerror(ret ? -ret : EIO));
			bad++;
			break;
		}
		for (k = 0; k < nr; k++) {
			const struct numaplace_run *r = &b->runs[k];
			size_t first = ((uintptr_t)r->start -
					(uintptr_t)b->buf) / b->page_size;

			if (r->kind & NUMAPLACE_KIND_PMD)
				thp += r->nr_pages;
			for (i = first; i < first + r->nr_pages &&
			     i < b->nr_pages; i++) {
				if (r->node == st_sys[i])
					continue;
				if (bad++ < 8)
					printf("MISMATCH %s: page %zu: move_pages status %d, run node %d kind %#x\n",
					       b->variant, i, st_sys[i],
					       r->node, r->kind);
			}
		}
		off += done;
	}
	res->thp_pages = thp;
	res->thp_source = "runs";
out:
	if (res->thp_pages < 0) {
		res->thp_pages = np_bench_smaps_thp_pages(b->buf, b->page_size);
		res->thp_source = "smaps";
	}
	if (bad > 8)
		printf("MISMATCH %s: %ld differences in all\n", b->variant,
		       bad);
	free(st_sys);
	free(st_np);
	return bad;
}

static int np_bench_setup(struct np_bench *b, const char *variant, int thp)
{
	int **const ints[] = { &b->status };
	size_t i;

	memset(b, 0, sizeof(*b));
	b->variant = variant;
	b->pagemap_fd = -1;
	b->buf = np_bench_map(NP_BUF_SIZE, NP_PMD_SIZE, thp, variant, &b->map,
			      &b->map_len);
	if (!b->buf)
		return -1;
	memset(b->buf, 1, NP_BUF_SIZE);

	b->arrays = np_bench_pages_alloc(NP_BUF_SIZE, "bench", &b->page_size,
					 &b->nr_pages, &b->pages, ints,
					 NP_ARRAY_SIZE(ints));
	if (!b->arrays)
		return -1;
	b->pagemap = calloc(b->nr_pages, sizeof(*b->pagemap));
	b->runs = calloc(NP_RUNS_CAP, sizeof(*b->runs));
	b->nr_nodes = np_nr_node_ids;
	b->node_pages = calloc(b->nr_nodes, sizeof(*b->node_pages));
	if (!b->pagemap || !b->runs || !b->node_pages) {
		fprintf(stderr, "bench: out of memory\n");
		return -1;
	}
	for (i = 0; i < b->nr_pages; i++)
		b->pages[i] = b->buf + i * b->page_size;
	b->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (b->pagemap_fd < 0)
		fprintf(stderr, "bench: /proc/self/pagemap: %s\n",
			strerror(errno));
	return 0;
}

static void np_bench_teardown(struct np_bench *b)
{
	if (b->pagemap_fd >= 0)
		close(b->pagemap_fd);
	if (b->map)
		munmap(b->map, b->map_len);
	free(b->arrays);
	free(b->pagemap);
	free(b->runs);
	free(b->node_pages);
}

static long np_bench_variant(const char *variant, int thp,
			     struct np_result *res)
{
	struct np_bench b;
	long bad;

	memset(res, 0, sizeof(*res));
	res->variant = variant;
	res->thp_pages = -1;
	res->thp_source = "unknown";
	if (np_bench_setup(&b, variant, thp)) {
		np_bench_teardown(&b);
		return -1;
	}
	if (b.pagemap_fd < 0)
		res->err[NP_M_PAGEMAP] = EBADF;
	np_time_all(&b, res);
	res->nr_runs = b.nr_runs;
	bad = np_verify(&b, res);
	np_bench_teardown(&b);
	return bad;
}

static void np_print_ms(const struct np_result *res, int m)
{
	if (np_methods[m].needs_device && !np_have_device)
		printf(" %12s", "no device");
	else if (res->err[m])
		printf(" %12s", "error");
	else
		printf(" %12.3f", res->best_ms[m]);
}

static void np_print_ratio(const struct np_result *res, int num, int den)
{
	if (res->err[num] || res->err[den] || isinf(res->best_ms[num]) ||
	    isinf(res->best_ms[den]) || res->best_ms[den] <= 0)
		printf(" %12s", "-");
	else
		printf(" %11.1fx", res->best_ms[num] / res->best_ms[den]);
}

static void np_print_table(const struct np_result *res, int nr)
{
	static const struct {
		const char *name;
		int num, den;
	} ratios[] = {
		{ "move_pages / numaplace runs", NP_M_MOVE_PAGES, NP_M_RUNS },
		{ "pagemap / numaplace runs", NP_M_PAGEMAP, NP_M_RUNS },
		{ "move_pages / drop-in", NP_M_MOVE_PAGES, NP_M_DROPIN },
		{ "pagemap / drop-in", NP_M_PAGEMAP, NP_M_DROPIN },
		{ "access read / runs", NP_M_ACCESS, NP_M_RUNS },
		{ "access clear / runs", NP_M_ACCESS_CLEAR, NP_M_RUNS },
	};
	size_t i;
	int m, v;

	for (v = 0; v < nr; v++) {
		printf("variant %-4s %zu pages, THP-backed: ", res[v].variant,
		       NP_BUF_SIZE / sysconf(_SC_PAGESIZE));
		if (res[v].thp_pages < 0)
			printf("unknown");
		else
			printf("%ld (%s)", res[v].thp_pages,
			       res[v].thp_source);
		if (np_have_device)
			printf(", %zu runs", res[v].nr_runs);
		printf(", pages per node: %s\n", res[v].nodes);
	}
	np_bench_best_of(30, NP_ROUNDS, "ms");
	for (v = 0; v < nr; v++)
		printf(" %12s", res[v].variant);
	printf("\n");
	for (m = 0; m < NP_NR_METHODS; m++) {
		printf("%-30s", np_methods[m].name);
		for (v = 0; v < nr; v++)
			np_print_ms(&res[v], m);
		printf("\n");
	}
	if (!np_have_device)
		return;
	for (i = 0; i < NP_ARRAY_SIZE(ratios); i++) {
		printf("%-30s", ratios[i].name);
		for (v = 0; v < nr; v++)
			np_print_ratio(&res[v], ratios[i].num, ratios[i].den);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	struct numaplace_info info;
	struct np_result res[2];
	struct utsname uts;
	char balancing[16];
	long bad = 0, ret;
	int err, failed = 0, v, m, watches = 0, a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (a = 1; a < argc; a++) {
		if (np_bench_watches_arg(argc, argv, &a, &watches) != 1) {
			fprintf(stderr, "usage: query [--watches N]\n");
			return 2;
		}
	}
	uname(&uts);
	printf("numaplace query bench: kernel %s, %lu MiB anonymous, best of %d rounds (A B .. B A)\n",
	       uts.release,
	       NP_BUF_SIZE >> 20, NP_ROUNDS);
	np_have_device = !!np_bench_probe(&info, NUMAPLACE_CMD_QUERY,
					  NUMAPLACE_FEAT_QUERY, "has no query",
					  "the syscall and pagemap rows", &err);
	if (np_have_device && info.nr_node_ids)
		np_nr_node_ids = info.nr_node_ids;
	np_bench_balancing_say(balancing, sizeof(balancing));
	if (np_bench_watches_open(watches)) {
		np_bench_balancing_restore(balancing);
		return 1;
	}

	ret = np_bench_variant("4k", 0, &res[0]);
	if (ret >= 0) {
		bad += ret;
		ret = np_bench_variant("thp", 1, &res[1]);
	}
	np_bench_balancing_restore(balancing);
	if (ret < 0)
		return 1;
	bad += ret;
	printf("\n");
	np_print_table(res, 2);
	for (v = 0; v < 2; v++)
		for (m = 0; m < NP_NR_METHODS; m++)
			failed |= res[v].err[m];
	if (failed)
		printf("ERROR: a method failed (see above)\n");
	if (bad) {
		printf("MISMATCH: %ld differences between move_pages(2) and numaplace\n",
		       bad);
		return 1;
	}
	if (failed)
		return 1;
	if (np_have_device)
		printf("verify: numaplace_move_pages status[] and runs match move_pages(2) on both variants\n");
	return 0;
}
