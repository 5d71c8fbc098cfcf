// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: pfn -> node without touching struct page.
 *
 * A sorted table of the pfn spans of every populated zone (ZONE_DEVICE
 * excluded), merged per node, is built at load and rebuilt from a
 * memory-hotplug notifier. A pfn inside a span is on that span's node.
 * Where spans of different nodes overlap, the table is not used at all and
 * every lookup reads the node from struct page (page_to_nid()), which is
 * authoritative; so is any pfn outside the table.
 */
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "numaplace.h"

/*
 * Spans in the table at most. A node has a few zones, and a merged node
 * usually one span: 4 per possible node covers holes between zones.
 */
#define NP_NODEMAP_SPANS_PER_NODE 4

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

static struct np_nodemap *np_nodemap_build(void)
{
	unsigned int max = nr_node_ids * NP_NODEMAP_SPANS_PER_NODE, i, n = 0;
	struct np_nodemap *map;
	struct np_pfn_span *s;
	struct zone *zone;
	int nid;

	map = kzalloc(struct_size(map, span, max), GFP_KERNEL);
	if (!map)
		return NULL;
	for_each_online_node(nid) {
		for (i = 0; i < MAX_NR_ZONES; i++) {
			zone = &NODE_DATA(nid)->node_zones[i];
			if (!np_zone_counts(zone))
				continue;
			if (n == max)
				goto unusable;
			map->span[n].start = zone->zone_start_pfn;
			map->span[n].end = zone_end_pfn(zone);
			map->span[n].nid = nid;
			n++;
		}
	}
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
