// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of libnumaplace's tier step, run on the build host (no
 * module, no guest; tools/vm/check --unit, in make check): the step
 * works a stretch of pages with one state out once and stores and counts
 * it whole (tier.c, np_tier_scan_pages()). Its answers must be those of
 * the policy applied page by page: each page's class, and the step's
 * counts of young, hot and cold pages and of promotions.
 *
 * The kernel is stood in for: the access scan, INFO and the sysfs and
 * /proc readers of tier_nodes.c are this file's (the link wraps them,
 * mk/tools.mk), over a buffer of this process's whose pages' nodes and
 * young bits the test draws: stretches of 1 to 9 pages, so that their
 * ends fall on every offset of the step's four-state compares.
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

/* A move is never asked of this test's context: it is a dry run. */
long __wrap_numaplace_move_pages(int pid, unsigned long count, void **pages,
				 const int *nodes, int *status, int flags)
{
	abort();
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
	p.flags |= NUMAPLACE_TIER_DRY_RUN;
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
 * counts, and the promotions a dry run plans (the hot pages of the slow
 * node: nothing is held, every fast node has room, no rate limit).
 */
TEST_F(scan, stretches_as_pages)
{
	struct numaplace_tier_params p;
	struct numaplace_tier_period out;
	unsigned int seed = 32, s, nr_young, nr_hot, nr_cold, nr_up;
	enum np_tier_class want;
	__u64 promoted;
	size_t i;

	numaplace_tier_params_init(&p);
	for (s = 0; s < NR_STEPS; s++) {
		/* New nodes every 8 steps: the same pages change stretches. */
		draw(&seed, s % 8 == 0);
		nr_young = nr_hot = nr_cold = nr_up = 0;
		for (i = 0; i < NR_PAGES; i++) {
			self->st[i] = np_tier_page_scan(self->st[i],
							fake.young[i], &p,
							&want);
			nr_young += fake.young[i];
			nr_hot += want == NP_TIER_HOT;
			nr_cold += want == NP_TIER_COLD;
			nr_up += want == NP_TIER_HOT &&
				 fake.node[i] == SLOW_NODE;
		}
		ASSERT_EQ(0, numaplace_tier_step(self->t, &out));
		ASSERT_EQ(NR_PAGES, out.nr_scanned);
		ASSERT_EQ(nr_young, out.nr_young);
		ASSERT_EQ(nr_hot, out.nr_hot) TH_LOG("step %u", s);
		ASSERT_EQ(nr_cold, out.nr_cold) TH_LOG("step %u", s);
		for (i = 0, promoted = 0; i < NUMAPLACE_TIER_NODES; i++)
			promoted += out.nr_promoted[i];
		ASSERT_EQ(nr_up, promoted) TH_LOG("step %u", s);
		ASSERT_EQ(0, numaplace_tier_classes(self->t, getpid(),
						    fake.buf, NR_PAGES,
						    self->cls));
		for (i = 0; i < NR_PAGES; i++)
			ASSERT_EQ(np_tier_page_class(self->st[i], &p),
				  self->cls[i])
				TH_LOG("step %u, page %zu", s, i);
	}
	/* The draw made every class: the comparison above was not empty. */
	ASSERT_NE(0, nr_hot);
	ASSERT_NE(0, nr_cold);
	ASSERT_NE(0, nr_up);
}

TEST_HARNESS_MAIN
