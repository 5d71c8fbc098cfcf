// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the copy ceiling for the migration benchmark. Reading
 * /sys/kernel/debug/numaplace/copy_limit copies NP_LIMIT_PAGES pages from
 * node 0 to node 1 (or within the only node) with np_copy_page(), the
 * batched engine's routine and the kernel's own migration copy
 * (compat.h), on every online CPU at once (the copy workers,
 * one share each), then zeroes the destination pages the same way with
 * clear_highpage() (what the allocator does to every new page when
 * init_on_alloc is on, as on Debian's kernels), and prints
 * "<bytes> <copy nanoseconds> <cpus> <zero nanoseconds> <copy routine>":
 * what this kernel on this machine can copy and zero at best, allocation
 * not counted. Root only (debugfs). Built only where asked for
 * (Kbuild NP_COPY_LIMIT=y, which make bench sets): not in the production
 * module.
 */
#include <linux/debugfs.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "compat.h"
#include "copy.h"

/* 256 MiB of 4 KiB pages: the benchmark's buffer. */
#define NP_LIMIT_PAGES	65536

static struct dentry *np_debugfs;

struct np_limit {
	struct page **src, **dst;
};

static void np_limit_zero_share(void *ctx, unsigned int share,
				unsigned int from, unsigned int to)
{
	struct np_limit *l = ctx;
	unsigned int j;

	for (j = from; j < to; j++) {
		clear_highpage(l->dst[j]);
		if (!(j & (NP_COPY_RESCHED - 1)))
			cond_resched();
	}
}

static void np_limit_share(void *ctx, unsigned int share, unsigned int from,
			   unsigned int to)
{
	struct np_limit *l = ctx;
	unsigned int j;

	for (j = from; j < to; j++) {
		np_copy_page(l->dst[j], l->src[j]);	/* fresh pages: no poison */
		if (!(j & (NP_COPY_RESCHED - 1)))
			cond_resched();
	}
}

static void np_limit_free(struct page **pages, unsigned int n)
{
	while (n--)
		if (pages[n])
			__free_page(pages[n]);
}

static int np_limit_alloc(struct page **pages, unsigned int n, int nid)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		pages[i] = alloc_pages_node(nid, GFP_HIGHUSER | __GFP_THISNODE |
					    __GFP_NOWARN, 0);
		if (!pages[i])
			return -ENOMEM;
		cond_resched();
	}
	return 0;
}

static int np_limit_show(struct seq_file *s, void *unused)
{
	int from = first_node(node_states[N_MEMORY]);
	int to = next_node_in(from, node_states[N_MEMORY]);
	unsigned int cpus = min_t(unsigned int, num_online_cpus(),
				  NUMAPLACE_COPY_WORKERS_MAX);
	struct np_limit l;
	u64 t0, ns, zero_ns;
	int ret;

	l.src = kvcalloc(NP_LIMIT_PAGES, sizeof(*l.src), GFP_KERNEL);
	l.dst = kvcalloc(NP_LIMIT_PAGES, sizeof(*l.dst), GFP_KERNEL);
	ret = -ENOMEM;
	if (!l.src || !l.dst)
		goto free_arrays;
	ret = np_limit_alloc(l.src, NP_LIMIT_PAGES, from);
	if (!ret)
		ret = np_limit_alloc(l.dst, NP_LIMIT_PAGES, to);
	if (ret)
		goto free_pages;
	t0 = ktime_get_ns();
	np_par_run(NP_LIMIT_PAGES, cpus, NUMA_NO_NODE, np_limit_share, &l);
	ns = ktime_get_ns() - t0;
	t0 = ktime_get_ns();
	np_par_run(NP_LIMIT_PAGES, cpus, NUMA_NO_NODE, np_limit_zero_share, &l);
	zero_ns = ktime_get_ns() - t0;
	seq_printf(s, "%lu %llu %u %llu %s\n",
		   (unsigned long)NP_LIMIT_PAGES << PAGE_SHIFT, ns, cpus, zero_ns,
		   NP_COPY_PAGE_NAME);
free_pages:
	np_limit_free(l.dst, NP_LIMIT_PAGES);
	np_limit_free(l.src, NP_LIMIT_PAGES);
free_arrays:
	kvfree(l.dst);
	kvfree(l.src);
	return ret;
}
DEFINE_SHOW_ATTRIBUTE(np_limit);

void np_copy_limit_init(void)
{
	np_debugfs = debugfs_create_dir(NP_NAME, NULL);
	debugfs_create_file("copy_limit", 0400, np_debugfs, NULL,
			    &np_limit_fops);
}

void np_copy_limit_exit(void)
{
	debugfs_remove(np_debugfs);
}
