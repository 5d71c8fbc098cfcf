/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: one NUMAPLACE_IOC_MIGRATE call, shared by collect.c (runs ->
 * folios grouped by target node), the engines and migrate.c (the ioctl).
 */
#ifndef _NUMAPLACE_MIGRATE_H
#define _NUMAPLACE_MIGRATE_H

#include <linux/list.h>
#include <linux/mm_inline.h>
#include <linux/vmstat.h>

#include "ksyms.h"
#include "seen.h"
#include "walk.h"

/**
 * struct np_collect_prev - what collect remembers of the pages before
 * @folio: the folio the previous page belonged to, if it went to an
 *	engine (a large folio is handed over once)
 * @target: its target
 * @to_vma: it went to the migrate_vma engine
 * @vma_idx: chunk index of the last page marked for the batched or
 *	migrate_vma engine
 * @vma: its VMA (NULL: none yet in this stretch)
 */
struct np_collect_prev {
	struct folio *folio;
	int target;
	bool to_vma;
	unsigned int vma_idx;
	struct vm_area_struct *vma;
};

/**
 * struct np_collect_held - the batched engine's: folios collect locks to
 *	keep them out of its migrate_vma ranges (np_collect_hold())
 * @folios: the folios, in chunk index order, unlocked once no range still
 *	to come covers them (NULL: the call's engine holds none; the batched
 *	engine carves this and @idx from its own block)
 * @idx: the chunk index of each
 * @nr: how many
 * @nr_unlocked: how many of the first of them are unlocked already
 */
struct np_collect_held {
	struct folio **folios;
	unsigned int *idx;
	unsigned int nr;
	unsigned int nr_unlocked;
};

/**
 * struct np_mig_busy - pages left busy, and the passes over them again
 * @pages: a retry pass's chunk indexes: pages an engine of the
 *	page-table, batched or migrate_vma path left busy in the pass before
 * @retry: this pass goes over @pages only; each page keeps its target
 * @wait_us: microseconds this call waited before retry passes
 * @distinct: the round names each page once (np_migrate_distinct()), so
 *	its busy pages may be passed over again
 * @distinct_known: @distinct is known (a range, an ascending array, or
 *	found out this round)
 */
struct np_mig_busy {
	unsigned long *pages;
	bool retry;
	unsigned int wait_us;
	bool distinct;
	bool distinct_known;
};

/**
 * struct np_mig - one MIGRATE call
 * @w: the walk (collect, then resolve)
 * @a: the caller's request, kernel copy; its counters are updated here
 * @mems: nodes the target task's cpuset allows
 * @caller_mems: nodes the caller's cpuset lets it allocate on (its
 *	mems_allowed when the call started): the syscall allocates in the
 *	caller's context, so a target outside them is -ENOMEM; the copy
 *	workers allocate as kworkers, so it is checked once, up front
 * @engines: NUMAPLACE_ENGINE_* this call may use
 * @chunk: pages (range mode) or addresses (array mode) per round: what is
 *	collected, migrated and answered before the next signal check
 *	(np_config.batch_pages when the call started, or the call's pages
 *	where fewer: np_migrate_chunk())
 * @base: address of chunk index @idx0 (the stretch being walked)
 * @idx0: chunk index of the first page of that stretch
 * @status: per chunk index: the answer, final unless @pending says not
 * @target: per chunk index: the page's target node
 * @busy: the pages left busy, and the passes over them again
 * @pending: chunk indexes handed to an engine: answered after it ran
 * @vma_pending: of those, the ones for the migrate_vma engine
 * @again: of those, pages of a folio an engine has from an earlier entry
 *	of this pass (np_seen_span()): no engine takes them, resolve
 *	answers where they are
 * @gap_ok: chunk indexes a migrate_vma range may cover without moving
 *	them (np_range_spans_ok()): collect holds the folio locked
 *	(np_collect_hold(), until np_collect_release()), or saw no page
 *	there that setup would take
 * @prev: collect's memory of the pages before this one
 * @next_node: POLICY_INTERLEAVE: the node the next folio goes to
 * @lists: per node, folios isolated for the kernel engine
 * @nr_listed: per node, how many folios @lists holds
 * @node_err: per node, the error of this pass's migration to it;
 *	-ENOMEM (the node ran out) for the rest of the call
 * @head_order: the batched engine's: per chunk index, 1 + the order of a
 *	folio for that engine whose first page in the round is there, else 0
 *	(np_mig_pending(); the destinations it reserves before unmapping;
 *	carved from its own block)
 * @hold: the batched engine's folios collect holds locked
 * @ascending: the round names its pages in strictly ascending order:
 *	range mode, or an address array whose pages strictly ascend (no page
 *	named twice). Collect holds folios only then (none held is wanted
 *	again further on); the round's busy pages may be passed over again
 *	(@busy), and @seen may keep large folios only
 * @arrays: the block np_migrate_alloc() carves @lists, @nr_listed,
 *	@node_err, the bitmaps, @status and @target from (np_carve())
 * @mapped: the engine of this call that runs under the mmap lock
 *	(np_engines_steps()), or NULL
 * @unlocked: the engine of this call that runs with no lock held
 *	(np_engines_steps()), or NULL
 * @priv: its per-call state, private to it (its begin step makes it)
 * @seen: the pages this call has answered with a node, or handed to an
 *	engine in this pass, by address (module/seen.c)
 * @seen_on: the call keeps @seen: its targets may differ from folio to
 *	folio (PER_PAGE, INTERLEAVE)
 * @seen_small: @seen holds order-0 folios too, not only large ones: an
 *	address array that may name a page twice (np_migrate_array())
 */
struct np_mig {
	struct np_walk w;
	struct numaplace_migrate *a;
	nodemask_t mems;
	nodemask_t caller_mems;
	unsigned int engines;
	unsigned int chunk;
	unsigned long base;
	unsigned int idx0;
	s32 *status;
	s32 *target;
	struct np_mig_busy busy;
	unsigned long *pending;
	unsigned long *vma_pending;
	unsigned long *again;
	unsigned long *gap_ok;
	struct np_collect_prev prev;
	int next_node;
	struct list_head *lists;
	unsigned int *nr_listed;
	int *node_err;
	u8 *head_order;
	struct np_collect_held hold;
	bool ascending;
	void *arrays;
	const struct np_engine_ops *mapped;
	const struct np_engine_ops *unlocked;
	void *priv;
	struct np_seen seen;
	bool seen_on;
	bool seen_small;
};

/*
 * The batched engine unmaps from the first to the last page it moves in a
 * VMA with one migrate_vma_setup(); a run of more than NP_BATCH_GAP pages
 * it does not move (in place, the kernel engine's, holes) ends a range: a
 * PMD-mapped THP (512 pages) never falls inside one, so it is never split.
 */
#define NP_BATCH_GAP		32

/**
 * struct np_engine_ops - a migration engine, in module/engine.c's table
 * @name: its name, the netlink spec's "engine" entry (make engine-check)
 * @engine: its NUMAPLACE_ENGINE_* bit (MIGRATE's engines, the stats)
 * @flag: the NUMAPLACE_MIGRATE_ENGINE_* flag that asks for it
 * @feature: the NUMAPLACE_FEAT_MIGRATE_* bit INFO sets where it runs
 * @config: its NUMAPLACE_CONFIG_ENGINE_* value; 0 (AUTO) where CONFIG_SET
 *	cannot name it alone
 * @needs: the engines it runs inside: it runs only where they do
 * @with: the engines that take what it leaves, in a call that asks for it
 *	(MIGRATE's flag or CONFIG_SET)
 * @available: can it run on this kernel: its internals resolved, its
 *	kernel options built (the engines of @needs are probed apart)
 * @features: further INFO features it has on this kernel, or NULL
 * @begin: allocate the call's state, a round's worth (m->priv); an
 *	error ends the call before it moves anything
 * @end: free it
 * @run_mapped: move what collect marked for it in a pass, under the mmap
 *	lock (read), outside RCU. The first engine of the call in the
 *	table's order that has one is the call's (m->mapped,
 *	np_engines_steps()); only it begins and ends
 * @run: move what collect isolated for it in a pass, no lock held
 *
 * Collect decides which engine takes a page (collect.c; the page-table
 * engine's choices np_pt_takes_vma() and np_pt_takes_large()).
 */
struct np_engine_ops {
	const char *name;
	unsigned int engine;
	u32 flag;
	u64 feature;
	u32 config;
	unsigned int needs;
	unsigned int with;
	bool (*available)(void);
	u64 (*features)(void);
	int (*begin)(struct np_mig *m);
	void (*end)(struct np_mig *m);
	void (*run_mapped)(struct np_mig *m, const struct np_stretch *st,
			   unsigned int nr);
	void (*run)(struct np_mig *m);
};

/*
 * An engine's name and the uapi constants of that name, spelt once: the
 * bit, the flag and the feature cannot name different engines.
 */
#define NP_ENGINE(_name, _NAME)					\
	.name = #_name,						\
	.engine = NUMAPLACE_ENGINE_##_NAME,			\
	.flag = NUMAPLACE_MIGRATE_ENGINE_##_NAME,		\
	.feature = NUMAPLACE_FEAT_MIGRATE_##_NAME

extern const struct np_engine_ops np_engine_kernel_ops;
extern const struct np_engine_ops np_engine_vma_ops;
extern const struct np_engine_ops np_engine_batch_ops;
extern const struct np_engine_ops np_engine_pt_ops;

/* module/engine.c */
int np_engines_pick(u32 flags, u32 config);
void np_engines_steps(unsigned int engines,
		      const struct np_engine_ops **mapped,
		      const struct np_engine_ops **unlocked);

/* module/collect.c */
typedef void (*np_part_fn)(struct np_mig *m, unsigned long start,
			   unsigned int idx0, unsigned int nr_pages);
void np_mig_parts(struct np_mig *m, const struct np_stretch *st,
		  unsigned int nr, np_part_fn fn);
void np_collect_begin(struct np_mig *m);
void np_collect_stretch(struct np_mig *m, unsigned long start,
			unsigned int idx0, unsigned int nr_pages);
void np_resolve_stretch(struct np_mig *m, unsigned long start,
			unsigned int idx0, unsigned int nr_pages);
int np_mig_node_check(const struct np_mig *m, int nid);
void np_mig_fail(struct np_mig *m, unsigned int i, unsigned int n, int err);
bool np_range_spans_ok(const struct np_mig *m, unsigned int from,
		       unsigned int to);
void np_collect_release_below(struct np_mig *m, unsigned int idx);
void np_collect_release(struct np_mig *m);

/* module/engine_kernel.c */
bool np_engine_kernel_isolate(struct folio *folio, struct list_head *list);
bool np_lru_disable(void);
void np_lru_enable(void);

/*
 * Take @folio off the LRU, with a reference, and count it isolated
 * (NR_ISOLATED_*, which migrate_folio_done() or np_lru_isolated_end()
 * counts back). false: busy (racing, pinned, in flight). Inline: the
 * page-table engine takes a page at a time.
 */
static inline bool np_lru_isolate(struct folio *folio)
{
	if (!NP_ISOLATE_LRU_OK(np_ksyms.folio_isolate_lru(folio)))
		return false;
	node_stat_mod_folio(folio, NR_ISOLATED_ANON + folio_is_file_lru(folio),
			    folio_nr_pages(folio));
	return true;
}

/* @folio, isolated by np_lru_isolate(), is no longer counted isolated. */
static inline void np_lru_isolated_end(struct folio *folio)
{
	node_stat_mod_folio(folio, NR_ISOLATED_ANON + folio_is_file_lru(folio),
			    -folio_nr_pages(folio));
}

/* module/engine_pt.c */
struct migrate_vma;
bool np_pt_takes_vma(const struct np_mig *m, struct vm_area_struct *vma);
void np_pt_unmap(struct migrate_vma *args, s32 *target);
bool np_pt_takes_large(const struct np_mig *m, struct folio *folio,
		       struct page *page, unsigned long n, bool pmd);
void np_pt_restore(struct np_mig *m, struct migrate_vma *args,
		   unsigned int idx0);

#endif /* _NUMAPLACE_MIGRATE_H */
