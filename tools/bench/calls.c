// SPDX-License-Identifier: GPL-2.0
/*
 * bench/calls: what one small call costs. A tiering daemon moves a few
 * pages at a time, where the module's fixed cost per call (its state,
 * its arrays, the LRU drain, the walk) counts as much as the pages.
 *
 * For each size N (pages; -p, default 1,16,512), N pages of a private
 * anonymous buffer (4 KiB pages, no THP) go back and forth between nodes
 * 0 and 1, NP_CALLS_DEFAULT calls a run (-c): move_pages(2) with a
 * nodes[] array (A) against numaplace's MIGRATE on the range (B), in
 * A B B A order (-r rounds), best run kept; printed in microseconds a
 * call, and A / B. After every run each page must be on the node the
 * last call named, and every call must have moved every page: anything
 * else prints MISMATCH and the bench exits 1.
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

struct np_calls {
	int fd;
	char *buf;
	long psz;
	unsigned long nr_pages, nr_calls;
	void *pages[NP_CALL_PAGES_MAX];
	int nodes[2][NP_CALL_PAGES_MAX];	/* all 0, all 1 */
	int status[NP_CALL_PAGES_MAX];
	int last_node;
	int bad;
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

static int np_calls_ioctl(struct np_calls *c, int node)
{
	struct numaplace_migrate m = {
		.size = sizeof(m),
		.policy = NUMAPLACE_POLICY_NODE,
		.start = (uintptr_t)c->buf,
		.len = c->nr_pages * c->psz,
		.node = node,
	};

	if (ioctl(c->fd, NUMAPLACE_IOC_MIGRATE, &m) ||
	    m.nr_moved_pages != c->nr_pages) {
		printf("MISMATCH: MIGRATE of %lu pages: %s, moved %llu\n",
		       c->nr_pages, strerror(errno),
		       (unsigned long long)m.nr_moved_pages);
		return -1;
	}
	return 0;
}

/* Every page on @node, asked of the kernel (move_pages(2) with no nodes). */
static int np_calls_check(struct np_calls *c, int node)
{
	unsigned long k;

	if (syscall(SYS_move_pages, 0, c->nr_pages, c->pages, NULL, c->status,
		    0))
		return -1;
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
	int node = c->last_node;
	unsigned long i;

	for (i = 0; i < c->nr_calls; i++) {
		node = np_calls_node(i);
		if (s->preload ? np_calls_ioctl(c, node) :
				 np_calls_syscall(c, node))
			return 1;
	}
	*ns = (np_bench_now_ns() - t0) / c->nr_calls;
	c->last_node = node;
	return np_calls_check(c, node) ? 1 : 0;
}

static int np_calls_size(struct np_calls *c, unsigned long rounds)
{
	struct np_bench_side side[2];
	char *map;
	size_t map_len, len = c->nr_pages * c->psz;
	unsigned long k;
	int ret;

	c->buf = np_bench_map(len, c->psz, 0, "calls", &map, &map_len);
	if (!c->buf)
		return 1;
	memset(c->buf, 1, len);
	for (k = 0; k < c->nr_pages; k++)
		c->pages[k] = c->buf + k * c->psz;
	/* Start on the source node, as each run ends (an even count). */
	c->last_node = NP_SRC_NODE;
	ret = np_calls_syscall(c, NP_SRC_NODE);
	if (!ret)
		ret = np_bench_abba(side, "move_pages(2), nodes[]",
				    "numaplace MIGRATE", rounds, np_calls_run,
				    c);
	if (!ret) {
		printf("%4lu pages: move_pages(2) %9.1f us a call, MIGRATE %9.1f us a call, move_pages / MIGRATE %5.2fx\n",
		       c->nr_pages, side[0].best_ns / 1e3,
		       side[1].best_ns / 1e3,
		       (double)side[0].best_ns / side[1].best_ns);
	}
	munmap(map, map_len);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long rounds = NP_ROUNDS_DEFAULT, calls = NP_CALLS_DEFAULT;
	const char *sizes = NP_SIZES_DEFAULT;
	const struct np_bench_opt opts[] = {
		{ 'r', &rounds, NULL, NULL },
		{ 'c', &calls, NULL, NULL },
		{ 'p', NULL, &sizes, NULL },
	};
	struct np_calls *c = calloc(1, sizeof(*c));
	char balancing[16], *list, *tok, *save;
	struct utsname uts;
	int ret = 0, k;

	if (!c)
		return 1;
	ret = np_bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
			      "usage: calls [-r ROUNDS] [-c CALLS] [-p PAGES[,PAGES]]\n");
	if (ret)
		return ret;
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
	ret = np_bench_balancing_off(balancing, sizeof(balancing));
	printf("numa_balancing: %s\n", ret ? strerror(-ret) : "0 for the run");
	list = strdup(sizes);
	ret = !list;
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
