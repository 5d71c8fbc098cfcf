// SPDX-License-Identifier: GPL-2.0
/*
 * bench/calls: what one small call costs. A tiering daemon moves a few
 * pages at a time, where the module's fixed cost per call (its state,
 * its arrays, the LRU drain, the walk) counts as much as the pages.
 *
 * For each size N (pages; -p, default 1,16,512), N pages of a private
 * anonymous buffer (4 KiB pages, no THP) go back and forth between nodes
 * 0 and 1, NP_CALLS_DEFAULT calls a run (-c): move_pages(2) with a
 * nodes[] array (A) against numaplace's MIGRATE on the range (B; -d:
 * libnumaplace's drop-in numaplace_move_pages() with the same arrays), in
 * A B B A order (-r rounds), best run kept; printed in microseconds a
 * call, and A / B. After every run each page must be on the node the
 * last call named, and every call must have moved every page: anything
 * else prints MISMATCH and the bench exits 1. An untimed warm-up goes
 * first (NP_WARMUP_MIB).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "numaplace.h"
#include "bench.h"

/* Calls a run: enough that one run is milliseconds, even under TCG. */
#define NP_CALLS_DEFAULT	200
#define NP_ROUNDS_DEFAULT	3
/* A call's pages: at most one page table's worth, as the syscall's batch. */
#define NP_CALL_PAGES_MAX	512
#define NP_SIZES_DEFAULT	"1,16,512"
#define NP_SRC_NODE		0
#define NP_DST_NODE		1
/*
 * Before the first size, NP_WARMUP_MIB move to node 1 and back, twice by
 * each kind of call, untimed. A fresh 6.12 or 7.3 guest makes small
 * calls of either kind up to twice as dear, and by a different amount
 * each boot, until a large move went through its page allocator (6.12,
 * icount, 1 page, best of 3: move_pages(2) 17.3 to 36.3 us, MIGRATE 40.5
 * to 45.5 us; after one 64 MiB move of each kind, 16.7 and 24.3 us in
 * every boot); 6.1 does not show it.
 */
#define NP_WARMUP_MIB		64
#define NP_WARMUP_MOVES		2

struct np_calls {
	int fd;
	char *buf;
	long psz;
	unsigned long nr_pages, nr_calls;
	void *pages[NP_CALL_PAGES_MAX];
	int nodes[2][NP_CALL_PAGES_MAX];	/* all 0, all 1 */
	int status[NP_CALL_PAGES_MAX];
	int dropin;			/* -d: B is numaplace_move_pages() */
};

/* Call @i of a run moves the pages to node 1 (@i even) or back to 0. */
static int np_calls_node(unsigned long i)
{
	return i % 2 ? NP_SRC_NODE : NP_DST_NODE;
}

static int np_calls_syscall(struct np_calls *c, int node)
{
	long ret = syscall(SYS_move_pages, 0, c->nr_pages, c->pages,
			   c->nodes[node], c->status, 0);

	if (ret) {
		printf("MISMATCH: move_pages(2) of %lu pages: %ld (%s)\n",
		       c->nr_pages, ret, ret < 0 ? strerror(errno) : "left");
		return -1;
	}
	return 0;
}

/* MIGRATE @c's buffer to @node; @all: every page must move. */
static int np_calls_ioctl(struct np_calls *c, int node, int all)
{
	struct numaplace_migrate m = {
		.size = sizeof(m),
		.policy = NUMAPLACE_POLICY_NODE,
		.start = (uintptr_t)c->buf,
		.len = c->nr_pages * c->psz,
		.node = node,
	};
	int ret = ioctl(c->fd, NUMAPLACE_IOC_MIGRATE, &m);

	if (ret || (all && m.nr_moved_pages != c->nr_pages)) {
		printf("MISMATCH: MIGRATE of %lu pages: %s, moved %llu\n",
		       c->nr_pages, ret ? strerror(errno) : "done",
		       (unsigned long long)m.nr_moved_pages);
		return -1;
	}
	return 0;
}

/* The drop-in: libnumaplace's move_pages(2), which may choose the syscall. */
static int np_calls_dropin(struct np_calls *c, int node)
{
	long ret = numaplace_move_pages(0, c->nr_pages, c->pages,
					c->nodes[node], c->status,
					MPOL_MF_MOVE);

	if (ret) {
		printf("MISMATCH: numaplace_move_pages() of %lu pages: %ld (%s)\n",
		       c->nr_pages, ret, ret < 0 ? strerror(errno) : "left");
		return -1;
	}
	return 0;
}

/* Every page on @node, asked of the kernel (move_pages(2) with no nodes). */
static int np_calls_check(struct np_calls *c, int node)
{
	unsigned long k;

	if (syscall(SYS_move_pages, 0, c->nr_pages, c->pages, NULL, c->status,
		    0)) {
		printf("MISMATCH: move_pages(2) query: %s\n", strerror(errno));
		return -1;
	}
	for (k = 0; k < c->nr_pages; k++)
		if (c->status[k] != node) {
			printf("MISMATCH: page %lu on %d, not %d\n", k,
			       c->status[k], node);
			return -1;
		}
	return 0;
}

static int np_calls_run(void *data, const struct np_bench_side *s,
			uint64_t *ns)
{
	struct np_calls *c = data;
	uint64_t t0 = np_bench_now_ns();
	unsigned long i;
	int node, ret;

	for (i = 0; i < c->nr_calls; i++) {
		node = np_calls_node(i);
		if (!s->preload)
			ret = np_calls_syscall(c, node);
		else if (c->dropin)
			ret = np_calls_dropin(c, node);
		else
			ret = np_calls_ioctl(c, node, 1);
		if (ret)
			return 1;
	}
	*ns = (np_bench_now_ns() - t0) / c->nr_calls;
	/* An even count: the last call took the pages back to the source. */
	return np_calls_check(c, NP_SRC_NODE) ? 1 : 0;
}

/* @c's buffer of c->nr_pages pages, written, on the source node. */
static int np_calls_map(struct np_calls *c, char **map, size_t *map_len)
{
	size_t len = c->nr_pages * c->psz;
	unsigned long k;

	c->buf = np_bench_map(len, c->psz, 0, "calls", map, map_len);
	if (!c->buf)
		return 1;
	memset(c->buf, 1, len);
	for (k = 0; k < c->nr_pages; k++)
		c->pages[k] = c->buf + k * c->psz;
	return np_calls_syscall(c, NP_SRC_NODE) ? 1 : 0;
}

/*
 * The warm-up: NP_WARMUP_MIB to node 1 and back, NP_WARMUP_MOVES times
 * with MIGRATE on the range, then as often with move_pages(2),
 * NP_CALL_PAGES_MAX pages a call.
 */
static int np_calls_warm(struct np_calls *c)
{
	size_t map_len, len = (size_t)NP_WARMUP_MIB << 20;
	unsigned long nr = len / c->psz, i, k;
	int ret = 0, move;
	char *map, *buf;

	buf = np_bench_map(len, c->psz, 0, "warm-up", &map, &map_len);
	if (!buf)
		return 1;
	memset(buf, 1, len);
	/* Where the first touch put them: each page on the source node. */
	c->buf = buf;
	c->nr_pages = nr;
	ret = np_calls_ioctl(c, NP_SRC_NODE, 0);
	for (move = 0; !ret && move < 4 * NP_WARMUP_MOVES; move++) {
		c->nr_pages = nr;
		if (move < 2 * NP_WARMUP_MOVES) {
			ret = np_calls_ioctl(c, np_calls_node(move), 1);
			continue;
		}
		c->nr_pages = NP_CALL_PAGES_MAX;
		for (i = 0; !ret && i < nr; i += NP_CALL_PAGES_MAX) {
			for (k = 0; k < NP_CALL_PAGES_MAX; k++)
				c->pages[k] = buf + (i + k) * c->psz;
			ret = np_calls_syscall(c, np_calls_node(move));
		}
	}
	munmap(map, map_len);
	c->buf = NULL;
	return ret ? 1 : 0;
}

static const char *np_calls_b(const struct np_calls *c)
{
	return c->dropin ? "numaplace_move_pages()" : "MIGRATE";
}

static int np_calls_size(struct np_calls *c, unsigned long rounds)
{
	struct np_bench_side side[2];
	size_t map_len;
	char *map;
	int ret;

	ret = np_calls_map(c, &map, &map_len);
	if (!ret)
		ret = np_bench_abba(side, "move_pages(2), nodes[]", np_calls_b(c),
				    rounds, np_calls_run, c);
	if (!ret) {
		printf("%4lu pages: move_pages(2) %9.1f us a call, %s %9.1f us a call, move_pages / %s %5.2fx\n",
		       c->nr_pages, side[0].best_ns / 1e3, np_calls_b(c),
		       side[1].best_ns / 1e3, np_calls_b(c),
		       (double)side[0].best_ns / side[1].best_ns);
	}
	if (c->buf)
		munmap(map, map_len);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long rounds = NP_ROUNDS_DEFAULT, calls = NP_CALLS_DEFAULT;
	const char *sizes = NP_SIZES_DEFAULT;
	int dropin = 0;
	const struct np_bench_opt opts[] = {
		{ 'r', &rounds, NULL, NULL },
		{ 'c', &calls, NULL, NULL },
		{ 'p', NULL, &sizes, NULL },
		{ 'd', NULL, NULL, &dropin },
	};
	struct np_calls *c = calloc(1, sizeof(*c));
	char balancing[16], *list, *tok, *save;
	struct utsname uts;
	int ret = 0, k;

	if (!c)
		return 1;
	ret = np_bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
			      "usage: calls [-d] [-r ROUNDS] [-c CALLS] [-p PAGES[,PAGES]]\n");
	if (ret) {
		free(c);
		return ret;
	}
	c->dropin = dropin;
	/* Whole back-and-forth pairs: each run ends where it started. */
	calls += calls % 2;
	c->nr_calls = calls ?: 2;
	c->psz = sysconf(_SC_PAGESIZE);
	for (k = 0; k < NP_CALL_PAGES_MAX; k++) {
		c->nodes[0][k] = NP_SRC_NODE;
		c->nodes[1][k] = NP_DST_NODE;
	}
	c->fd = open(NUMAPLACE_DEVICE, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		printf("calls: %s: %s\n", NUMAPLACE_DEVICE, strerror(errno));
		return 1;
	}
	uname(&uts);
	printf("numaplace calls bench: kernel %s, node %d <-> %d, %lu calls a run, best of %lu rounds (A B B A), microseconds a call\n",
	       uts.release, NP_SRC_NODE, NP_DST_NODE, c->nr_calls, rounds);
	np_bench_balancing_say(balancing, sizeof(balancing));
	list = strdup(sizes);
	ret = !list;
	if (!ret)
		ret = np_calls_warm(c);
	for (tok = list ? strtok_r(list, ",", &save) : NULL; tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		c->nr_pages = strtoul(tok, NULL, 0);
		if (!c->nr_pages || c->nr_pages > NP_CALL_PAGES_MAX) {
			fprintf(stderr, "calls: -p takes 1 to %d pages\n",
				NP_CALL_PAGES_MAX);
			ret = 2;
			break;
		}
		ret = np_calls_size(c, rounds);
	}
	free(list);
	np_bench_balancing_restore(balancing);
	close(c->fd);
	free(c);
	return ret;
}
