// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of libnumaplace's tier step, run on the build host (no
 * module, no guest; tools/vm/check --unit, in make check): the step
 * works a stretch of pages with one state out once and stores and counts
 * it whole (tier.c, np_tier_scan_pages()). Its answers must be those of
 * the policy applied page by page: each page's class, the step's counts
 * of young, hot, cold and held pages, and exactly which pages it moves
 * (the hot ones of the slow node that no earlier move holds).
 *
 * The kernel is stood in for: the access scan, the moves, INFO and the
 * sysfs readers of tier_nodes.c are this file's (the link wraps them,
 * UNIT_WRAP_tier_scan in mk/tools.mk); /proc/self/maps and stat are the
 * real ones. The buffer is this process's, never touched: the test draws
 * its pages' nodes and young bits, in stretches of 1 to 9 pages, so that
 * their ends fall on every offset of the step's four-state compares.
 * Not covered here: demotion (every fast node has room) and THP runs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/types.h>

#include "kselftest_harness.h"
#include "tier.h"

/* The buffer: 8 MiB, four chunks of state of 2 MiB. */
#define NR_PAGES	2048
/* Node 2 is slow, nodes 0 and 1 are fast. */
#define SLOW_NODE	2
#define NR_NODES	3
/* Steps a draw is scanned; a page's history fills in 9. */
#define NR_STEPS	24

static struct {
	char *buf;
	long psz;
	int node[NR_PAGES];
	bool young[NR_PAGES];
	bool moved[NR_PAGES];	/* asked of the last step's moves */
	unsigned int nr_moved;
} fake;

int __wrap_numaplace_info(struct numaplace_info *info)
{
	memset(info, 0, sizeof(*info));
	return 0;
}

int __wrap_numaplace_supports(const struct numaplace_info *info, __u64 cmds,
			      __u64 features)
{
	return 1;
}

/* Every move succeeds: the page is on its target, the ask recorded. */
long __wrap_numaplace_move_pages(int pid, unsigned long count, void **pages,
				 const int *nodes, int *status, int flags)
{
	unsigned long k;
	size_t i;

	for (k = 0; k < count; k++) {
		i = ((uintptr_t)pages[k] - (uintptr_t)fake.buf) / fake.psz;
		if (i >= NR_PAGES || fake.moved[i])
			abort();	/* not the buffer's, or asked twice */
		fake.moved[i] = true;
		fake.nr_moved++;
		fake.node[i] = nodes[k];
		status[k] = nodes[k];
	}
	return 0;
}

static struct numaplace_run fake_run(__u64 start, __u64 nr, int node,
				     __u32 kind)
{
	return (struct numaplace_run){ start, nr, node, kind };
}

/*
 * The access scan of [start, start + len): the buffer's pages in runs of
 * one node and one young bit, what lies outside it one run of nothing.
 */
int __wrap_numaplace_access_runs(int pid, const void *start, size_t len,
				 unsigned int flags,
				 struct numaplace_run *runs, size_t cap,
				 size_t *nr_runs, size_t *done,
				 size_t *nr_young)
{
	__u64 s = (uintptr_t)start, e = s + len;
	__u64 lo = (uintptr_t)fake.buf, hi = lo + NR_PAGES * fake.psz;
	size_t n = 0, i, j, end;
	__u32 kind;

	if (e <= lo || s >= hi) {
		runs[0] = fake_run(s, len / fake.psz, -1, NUMAPLACE_KIND_NONE);
		*nr_runs = 1;
		*done = len / fake.psz;
		return 0;
	}
	*done = 0;
	if (s < lo) {
		runs[n++] = fake_run(s, (lo - s) / fake.psz, -1,
				     NUMAPLACE_KIND_NONE);
		*done = (lo - s) / fake.psz;
		s = lo;
	}
	i = (s - lo) / fake.psz;
	end = ((e < hi ? e : hi) - lo) / fake.psz;
	while (i < end && n < cap) {
		for (j = i + 1; j < end && fake.node[j] == fake.node[i] &&
				fake.young[j] == fake.young[i]; j++)
			;
		kind = NUMAPLACE_KIND_PRESENT | NUMAPLACE_KIND_ANON;
		if (fake.young[i])
			kind |= NUMAPLACE_KIND_YOUNG;
		runs[n++] = fake_run(lo + i * fake.psz, j - i, fake.node[i],
				     kind);
		*done += j - i;
		i = j;
	}
	*nr_runs = n;
	if (nr_young)
		*nr_young = 0;
	return 0;
}

int __wrap_np_tier_read_node_masks(__u64 *memory, __u64 *cpus)
{
	memset(memory, 0, NP_TIER_WORDS * sizeof(*memory));
	memset(cpus, 0, NP_TIER_WORDS * sizeof(*cpus));
	memory[0] = (1U << NR_NODES) - 1;
	cpus[0] = memory[0] & ~(1U << SLOW_NODE);
	return 0;
}

/* Every node 4 GiB with 3 free: room for any promotion, no demotion. */
int __wrap_np_tier_read_node_mem(int node, long page_size, __u64 *total,
				 __u64 *free)
{
	*total = (4ULL << 30) / page_size;
	*free = (3ULL << 30) / page_size;
	return 0;
}

/* One CPU, on node 0. */
int __wrap_np_tier_read_cpu_nodes(int **cpu_node, int *nr_cpus)
{
	*cpu_node = calloc(1, sizeof(**cpu_node));
	if (!*cpu_node)
		return -ENOMEM;
	*nr_cpus = 1;
	return 0;
}

int __wrap_np_tier_read_task_nodes(int pid, const int *cpu_node,
				   int nr_cpus, __u64 *mems, __u64 *local)
{
	memset(mems, 0, NP_TIER_WORDS * sizeof(*mems));
	memset(local, 0, NP_TIER_WORDS * sizeof(*local));
	mems[0] = (1U << NR_NODES) - 1;
	local[0] = 1;
	return 0;
}

/* Stretches of 1 to 9 pages, each a node and a young bit of its own. */
static void draw(unsigned int *seed, bool nodes_too)
{
	size_t i = 0, k, n;
	bool young;
	int node;

	while (i < NR_PAGES) {
		n = 1 + rand_r(seed) % 9;
		young = rand_r(seed) % 3 == 0;
		node = rand_r(seed) % NR_NODES;
		for (k = 0; k < n && i < NR_PAGES; k++, i++) {
			fake.young[i] = young;
			if (nodes_too)
				fake.node[i] = node;
		}
	}
}

FIXTURE(scan)
{
	struct numaplace_tier *t;
	void *map;
	size_t map_len;
	__u16 st[NR_PAGES];	/* the reference: the policy page by page */
	int node0[NR_PAGES];	/* each page's node when a step scans it */
	unsigned char cls[NR_PAGES];
};

FIXTURE_SETUP(scan)
{
	struct numaplace_tier_params p;
	uintptr_t a;

	/* Readable (the step skips PROT_NONE), never touched. */
	fake.psz = sysconf(_SC_PAGESIZE);
	self->map_len = (NR_PAGES + 512) * fake.psz;
	self->map = mmap(NULL, self->map_len, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	/* Chunk-aligned, so that its chunks are the four of it alone. */
	a = ((uintptr_t)self->map + 512 * fake.psz - 1) &
	    ~(512 * fake.psz - 1);
	fake.buf = (char *)a;
	memset(self->st, 0, sizeof(self->st));
	numaplace_tier_params_init(&p);
	p.fast_nodes[0] = (1U << NR_NODES) - 1 - (1U << SLOW_NODE);
	p.slow_nodes[0] = 1U << SLOW_NODE;
	ASSERT_EQ(0, numaplace_tier_new(&p, &self->t));
	ASSERT_EQ(0, numaplace_tier_add(self->t, getpid()));
}

FIXTURE_TEARDOWN(scan)
{
	numaplace_tier_free(self->t);
	munmap(self->map, self->map_len);
}

/*
 * Each step against the policy applied page by page: every class, the
 * counts, and the pages moved: the hot pages of the slow node but those
 * a move of the last hold scans holds (every fast node has room and
 * there is no rate limit, so all of them).
 */
TEST_F(scan, stretches_as_pages)
{
	struct numaplace_tier_params p;
	struct numaplace_tier_period out;
	unsigned int seed = 32, s, nr_young, nr_hot, nr_cold, nr_held, nr_up;
	unsigned int all_up = 0, all_held = 0;
	bool ping_pong, third, up;
	enum np_tier_class want;
	size_t i;

	numaplace_tier_params_init(&p);
	for (s = 0; s < NR_STEPS; s++) {
		/*
		 * New nodes every 3 steps: pages a step moved come back to
		 * the slow node while their move still holds them.
		 */
		draw(&seed, s % 3 == 0);
		memcpy(self->node0, fake.node, sizeof(self->node0));
		memset(fake.moved, 0, sizeof(fake.moved));
		fake.nr_moved = 0;
		ASSERT_EQ(0, numaplace_tier_step(self->t, &out));
		nr_young = nr_hot = nr_cold = nr_held = nr_up = 0;
		for (i = 0; i < NR_PAGES; i++) {
			self->st[i] = np_tier_page_scan(self->st[i],
							fake.young[i], &p,
							&want);
			nr_young += fake.young[i];
			nr_hot += want == NP_TIER_HOT;
			nr_cold += want == NP_TIER_COLD;
			up = false;
			if (want == NP_TIER_HOT &&
			    self->node0[i] == SLOW_NODE) {
				if (np_tier_page_held(self->st[i],
						      p.hold_scans))
					nr_held++;
				else
					up = true;
			}
			ASSERT_EQ(up, fake.moved[i])
				TH_LOG("step %u, page %zu", s, i);
			if (up)
				self->st[i] = np_tier_page_moved(self->st[i],
								 &ping_pong,
								 &third);
			nr_up += up;
		}
		ASSERT_EQ(NR_PAGES, out.nr_scanned);
		ASSERT_EQ(nr_young, out.nr_young);
		ASSERT_EQ(nr_hot, out.nr_hot) TH_LOG("step %u", s);
		ASSERT_EQ(nr_cold, out.nr_cold) TH_LOG("step %u", s);
		ASSERT_EQ(nr_held, out.nr_held) TH_LOG("step %u", s);
		ASSERT_EQ(nr_up, fake.nr_moved) TH_LOG("step %u", s);
		ASSERT_EQ(0, numaplace_tier_classes(self->t, getpid(),
						    fake.buf, NR_PAGES,
						    self->cls));
		for (i = 0; i < NR_PAGES; i++)
			ASSERT_EQ(np_tier_page_class(self->st[i], &p),
				  self->cls[i])
				TH_LOG("step %u, page %zu", s, i);
		all_up += nr_up;
		all_held += nr_held;
	}
	/* The draw made each case: the comparisons above were not empty. */
	ASSERT_NE(0, nr_hot);
	ASSERT_NE(0, nr_cold);
	ASSERT_NE(0, all_up);
	ASSERT_NE(0, all_held);
}

TEST_HARNESS_MAIN
