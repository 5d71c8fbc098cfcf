// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: pfn -> node without touching struct page.
 *
 * A sorted table of the pfn ranges that are both inside a populated zone's
 * span (ZONE_DEVICE excluded) and inside a "System RAM" resource, merged
 * per node, is built at load and rebuilt from a memory-hotplug notifier. A
 * pfn inside a range is on that range's node. A zone's span includes the
 * holes between its RAM ranges, and a hole can hold device memory (a
 * legacy pmem region, memmap=nn!ss, inside node 0's ZONE_DMA32): hence the
 * intersection with System RAM, which no ZONE_DEVICE range is part of
 * (memremap_pages() refuses a range that intersects it). Where ranges of
 * different nodes overlap, the table is not used at all and every lookup
 * reads the node from struct page (page_to_nid()), which is authoritative;
 * so is any pfn outside the table.
 */
#include <linux/ioport.h>
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "numaplace.h"

/*
 * Ranges in the table at most. The table is sized from the count, which is
 * firmware's (e820 RAM entries) plus one per hot-added block: a few per
 * node in practice. The bound keeps the allocation at 24 KiB (order 3,
 * kzalloc); a machine with more ranges uses struct page for every lookup,
 * which is correct, only slower.
 */
#define NP_NODEMAP_SPANS_MAX 1024

/* One pass over the zones' System RAM: count (span NULL) or fill. */
struct np_nodemap_walk {
	struct np_pfn_span *span;
	unsigned int n, max;
	int nid;
};

struct np_nodemap {
	struct rcu_head rcu;
	unsigned int nr;	/* spans in use; 0: always use struct page */
	struct np_pfn_span span[];
};

static struct np_nodemap __rcu *np_nodemap;
static DEFINE_MUTEX(np_nodemap_mutex);	/* serialises rebuilds */

static int np_span_cmp(const void *a, const void *b)
{
	const struct np_pfn_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool np_zone_counts(struct zone *zone)
{
#ifdef CONFIG_ZONE_DEVICE
	if (zone_idx(zone) == ZONE_DEVICE)
		return false;
#endif
	return zone->spanned_pages != 0;
}

static int np_nodemap_add(struct resource *res, void *arg)
{
	struct np_nodemap_walk *w = arg;
	/* Clipped to the zone by the walk; only whole pages of RAM count. */
	unsigned long start = PFN_UP(res->start), end = PFN_DOWN(res->end + 1);

	if (start >= end)
		return 0;
	if (w->span) {
		if (w->n == w->max)
			return -ENOSPC;
		w->span[w->n].start = start;
		w->span[w->n].end = end;
		w->span[w->n].nid = w->nid;
	}
	w->n++;
	return 0;
}

/*
 * The System RAM inside every counted zone's span. Hot-added memory's
 * resource is registered (add_memory_resource()) before its zone span
 * grows (online_pages()), so by the notifier's events both are in place.
 */
static int np_nodemap_walk_ram(struct np_nodemap_walk *w)
{
	struct zone *zone;
	int ret;

	w->n = 0;
	for_each_online_node(w->nid) {
		for (zone = NODE_DATA(w->nid)->node_zones;
		     zone < NODE_DATA(w->nid)->node_zones + MAX_NR_ZONES;
		     zone++) {
			if (!np_zone_counts(zone))
				continue;
			ret = walk_iomem_res_desc(IORES_DESC_NONE,
						  IORESOURCE_SYSTEM_RAM |
						  IORESOURCE_BUSY,
						  PFN_PHYS(zone->zone_start_pfn),
						  PFN_PHYS(zone_end_pfn(zone)) - 1,
						  w, np_nodemap_add);
			/* Other errors: no RAM in the zone, nothing to add. */
			if (ret == -ENOSPC)
				return ret;
		}
	}
	return 0;
}

static struct np_nodemap *np_nodemap_build(void)
{
	struct np_nodemap_walk w = { };
	struct np_nodemap *map;
	struct np_pfn_span *s;
	unsigned int i, n;

	np_nodemap_walk_ram(&w);
	w.max = w.n;
	map = kzalloc(struct_size(map, span, min_t(unsigned int, w.max,
						   NP_NODEMAP_SPANS_MAX)),
		      GFP_KERNEL);
	if (!map)
		return NULL;
	if (w.max > NP_NODEMAP_SPANS_MAX)
		goto unusable;
	/*
	 * RAM added between the passes does not fit: no table until the
	 * hotplug notifier's own rebuild, which waits for our mutex.
	 */
	w.span = map->span;
	if (np_nodemap_walk_ram(&w))
		goto unusable;
	n = w.n;
	sort(map->span, n, sizeof(*s), np_span_cmp, NULL);
	/* Merge touching spans of one node; any overlap between nodes: no table. */
	for (i = 1, s = map->span; i < n; i++) {
		struct np_pfn_span *t = &map->span[i];

		if (t->start < s->end && t->nid != s->nid)
			goto unusable;
		if (t->nid == s->nid && t->start <= s->end)
			s->end = max(s->end, t->end);
		else
			*++s = *t;
	}
	map->nr = n ? s - map->span + 1 : 0;
	return map;
unusable:
	map->nr = 0;
	return map;
}

/*
 * Build and publish under the mutex: of two rebuilds racing (load and a
 * hotplug event), the one that read the spans last publishes last.
 */
static int np_nodemap_rebuild(void)
{
	struct np_nodemap *map, *old;

	mutex_lock(&np_nodemap_mutex);
	map = np_nodemap_build();
	if (!map) {
		mutex_unlock(&np_nodemap_mutex);
		return -ENOMEM;
	}
	old = rcu_replace_pointer(np_nodemap, map,
				  lockdep_is_held(&np_nodemap_mutex));
	mutex_unlock(&np_nodemap_mutex);
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

/* Slow path of np_pfn_to_nid(): the table, then struct page. Under RCU. */
int np_nodemap_lookup(struct np_nodemap_cache *c, unsigned long pfn)
{
	struct np_nodemap *map = rcu_dereference(np_nodemap);
	unsigned int lo = 0, hi = map ? map->nr : 0, mid;
	struct page *page;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pfn < map->span[mid].start) {
			hi = mid;
		} else if (pfn >= map->span[mid].end) {
			lo = mid + 1;
		} else {
			c->span = map->span[mid];
			return c->span.nid;
		}
	}
	if (!pfn_valid(pfn))
		return NP_NID_NOPAGE;
	page = pfn_to_page(pfn);
	if (is_zone_device_page(page))
		return NP_NID_DEVICE;
	return page_to_nid(page);
}

static int np_nodemap_notify(struct notifier_block *nb, unsigned long action,
			     void *arg)
{
	/*
	 * Spans have moved at GOING_ONLINE (pages still isolated) and again
	 * by ONLINE. At OFFLINE they still cover the block: harmless, an
	 * offline pfn is mapped by no one, and onlining it again rebuilds.
	 */
	switch (action) {
	case MEM_GOING_ONLINE:
	case MEM_ONLINE:
	case MEM_OFFLINE:
	case MEM_CANCEL_ONLINE:
	case MEM_CANCEL_OFFLINE:
		if (np_nodemap_rebuild())
			pr_warn(NP_NAME ": pfn->node table not rebuilt\n");
		break;
	}
	return NOTIFY_OK;
}

static struct notifier_block np_nodemap_nb = {
	.notifier_call = np_nodemap_notify,
};

/* The notifier first: no hotplug event can fall between build and it. */
int np_nodemap_init(void)
{
	int ret = register_memory_notifier(&np_nodemap_nb);

	if (ret)
		return ret;
	ret = np_nodemap_rebuild();
	if (ret)
		goto unregister;
	return 0;
unregister:
	unregister_memory_notifier(&np_nodemap_nb);
	return ret;
}

void np_nodemap_exit(void)
{
	unregister_memory_notifier(&np_nodemap_nb);
	/* kfree_rcu() callbacks in flight must finish before the module goes. */
	rcu_barrier();
	kfree(rcu_replace_pointer(np_nodemap, NULL, true));
}
