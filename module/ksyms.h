/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: the unexported internals resolved by module/ksyms.c, typed
 * from the kernel headers' own prototypes (or compat.h's copies of
 * mm/internal.h ones). A NULL pointer: missing or unsafe to call.
 */
#ifndef _NUMAPLACE_KSYMS_H
#define _NUMAPLACE_KSYMS_H

#include <linux/cpuset.h>
#include <linux/huge_mm.h>
#include <linux/hugetlb.h>
#include <linux/migrate.h>
#include <linux/mmu_notifier.h>
#include <linux/ptrace.h>
#include <linux/rmap.h>
#include <linux/security.h>
#include <linux/swap.h>

#include "compat.h"

struct np_ksyms {
	/* permission checks (target.c) */
	typeof(&ptrace_may_access) ptrace_may_access;
	typeof(&security_task_movememory) security_task_movememory;
	typeof(&cpuset_mems_allowed) cpuset_mems_allowed;
	/* the kernel migration engine (engine_kernel.c, collect.c) */
	typeof(&migrate_pages) migrate_pages;
	typeof(&alloc_migration_target) alloc_migration_target;
	typeof(&putback_movable_pages) putback_movable_pages;
	np_isolate_lru_t *folio_isolate_lru;
	typeof(&NP_HUGETLB_ISOLATE) hugetlb_isolate;
	NP_LRU_CACHE_DISABLE_PTR lru_cache_disable;
	/* data: lru_cache_enable() is an inline atomic_dec() of it */
	atomic_t *lru_disable_count;
	/* the page-table engine (engine_pt.c) */
	typeof(&NP_RMAP_REMOVE) rmap_remove;
	typeof(&NP_RMAP_ADD_ANON) rmap_add_anon;
	np_flush_tlb_mm_range_t *flush_tlb_mm_range;
	typeof(&__mmu_notifier_invalidate_range_start) mmu_range_start;
	typeof(&__mmu_notifier_invalidate_range_end) mmu_range_end;
	/* the access scan's clear of secondary MMUs' young bits (access.c) */
	typeof(&__mmu_notifier_clear_young) mmu_clear_young;
#ifdef CONFIG_LOCKDEP
	/* data: what mmu_notifier_invalidate_range_start() tells lockdep */
	struct lockdep_map *mmu_range_start_map;
#endif
	/* data: the kernel's migration entries keep the A/D bits */
	bool *swap_migration_ad_supported;
#ifdef NP_HAVE_PT_PMD
	/* its PMD-mapped THPs (engine_pt.c) */
	typeof(&folio_remove_rmap_pmd) rmap_remove_pmd;
	typeof(&folio_add_anon_rmap_pmd) rmap_add_anon_pmd;
	typeof(&deferred_split_folio) deferred_split;
#endif
};

extern struct np_ksyms np_ksyms;
int np_ksyms_init(void);

#endif /* _NUMAPLACE_KSYMS_H */
