/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: every kernel-version difference lives here, each shim naming
 * the version and the change it papers over.
 */
#ifndef _NUMAPLACE_COMPAT_H
#define _NUMAPLACE_COMPAT_H

#include <linux/version.h>
#include <linux/pgtable.h>
#include <linux/highmem.h>
#include <linux/swap.h>
#include <asm/cpufeature.h>
#include <net/genetlink.h>

/*
 * v6.7 "genetlink: add CAP_NET_ADMIN test for multicast bind" (backported
 * to 6.1.66, so a feature test): a multicast group can require a
 * capability to join (GENL_MCAST_CAP_*). Without the flags any user could
 * join the events group, so it sends nothing (np_genl_event_new()).
 */
#ifdef GENL_MCAST_CAP_SYS_ADMIN
#define NP_GENL_MCAST_CAP	GENL_MCAST_CAP_SYS_ADMIN
#define NP_GENL_MCAST_PROTECTED	true
#else
#define NP_GENL_MCAST_CAP	0
#define NP_GENL_MCAST_PROTECTED	false
#endif

/*
 * v6.2 "genetlink: introduce split op representation": genl_split_ops,
 * one per do or dump of a command, is what the spec's generated
 * module/genl_gen.c fills (numaplace_nl_ops). Before it, a genl_ops has
 * the members the table sets (cmd, flags, policy, maxattr, doit, dumpit)
 * and the family takes it as .ops, which wants each command once: the
 * table's commands have a do or a dump, never both. The GENL_CMD_CAP_*
 * flags the generator adds are what 6.1's CTRL_ATTR_OPS reports anyway.
 */
#ifdef NP_HAVE_GENL_SPLIT_OPS
#define NP_GENL_FAMILY_OPS(table) \
	.split_ops = (table), .n_split_ops = ARRAY_SIZE(table)
#else
#define genl_split_ops genl_ops
#define NP_GENL_FAMILY_OPS(table) .ops = (table), .n_ops = ARRAY_SIZE(table)
#endif

/*
 * v6.2 "netlink: make range pointers in policies const": before it an
 * nla_policy points to a non-const netlink_range_validation, and the
 * generated policy's range is const. The kernel only reads it.
 */
#ifndef NP_HAVE_CONST_NLA_RANGE
#undef NLA_POLICY_FULL_RANGE
#define NLA_POLICY_FULL_RANGE(tp, _range) {				\
	.type = NLA_ENSURE_UINT_OR_BINARY_TYPE(tp),		\
	.validation_type = NLA_VALIDATE_RANGE_PTR,			\
	.range = (struct netlink_range_validation *)(_range),		\
}
#endif

/*
 * v6.12 "mm/migrate: convert do_pages_stat_array() from follow_page() to
 * folio_walk": move_pages(nodes == NULL) answers -ENOENT for holes,
 * special PTEs and PROT_NONE/NUMA-hint entries' absence, and the node for
 * PROT_NONE pages. Before it (4.3 .. 6.11) follow_page(FOLL_DUMP) answered
 * -EFAULT for holes in VMAs without ->fault, for special PTEs, and -ENOENT
 * for PROT_NONE pages. NUMAPLACE_QUERY_AS_SYSCALL reproduces the old
 * answers on the old kernels.
 */
#define NP_SYSCALL_QUERY_LEGACY (LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0))

/*
 * v6.5 "mm: add pmdp_get()/pudp_get()..." and later generic p?dp_get():
 * 6.1 has none of them. READ_ONCE() is what they are on x86-64.
 */
#define np_pmdp_get(pmdp) READ_ONCE(*(pmdp))
#define np_pudp_get(pudp) READ_ONCE(*(pudp))
#define np_p4dp_get(p4dp) READ_ONCE(*(p4dp))
#define np_pgdp_get(pgdp) READ_ONCE(*(pgdp))

/*
 * v6.11 "mm: introduce ARCH_SUPPORTS_HUGE_PFNMAP and special bits to
 * pmd/pud": huge PFN maps are marked special; 6.1 has no such bit.
 */
#ifdef CONFIG_ARCH_SUPPORTS_PMD_PFNMAP
#define np_pmd_special(pmd) pmd_special(pmd)
#else
#define np_pmd_special(pmd) false
#endif
#ifdef CONFIG_ARCH_SUPPORTS_PUD_PFNMAP
#define np_pud_special(pud) pud_special(pud)
#else
#define np_pud_special(pud) false
#endif

/*
 * v6.2 "x86/ibt: ..." builds with CONFIG_X86_KERNEL_IBT seal the ENDBR of
 * functions whose address is never taken (Debian 6.12 is one; 6.1 is not
 * built with IBT). An indirect call into a sealed function is a fatal #CP
 * on a CPU that enforces IBT.
 */
#ifdef CONFIG_X86_KERNEL_IBT
#define np_cpu_enforces_ibt() cpu_feature_enabled(X86_FEATURE_IBT)
#else
#define np_cpu_enforces_ibt() false
#endif

/*
 * The 4 bytes a sealed ENDBR becomes, the kernel's own gen_endbr_poison():
 * 0x001f0f66 "osp nopl (%rax)" on 6.1 and 6.12; 0xd6401f0f "nopl
 * -42(%rax)" (a NOP carrying UDB as its immediate) on 7.2 and 7.3. Only a
 * kernel built with IBT seals (and has the helper).
 */
#ifdef CONFIG_X86_KERNEL_IBT
#include <asm/ibt.h>
#define np_endbr_seal() gen_endbr_poison()
#else
#define np_endbr_seal() 0U
#endif

/*
 * Debian builds PARAVIRT_XXL (for Xen PV) in both kernels: pte_val() and
 * pmd_val() are asm call sites, patched at load to a plain move outside a
 * Xen PV guest, one per accessor and opaque to the compiler. Outside Xen PV
 * the raw value is the value: the hot loops read it directly and test the
 * x86 bits themselves (np_*_plain_raw()).
 */
static __always_inline bool np_native_pgtables(void)
{
	return !cpu_feature_enabled(X86_FEATURE_XENPV);
}

/*
 * v6.17 "mm: remove devmap related functions and page table bits": no
 * _PAGE_DEVMAP and no pte/pmd/pud_devmap() (7.x); fsdax/devdax pages are
 * then ordinary (or special) entries whose folio is zone-device, which the
 * pfn -> node map answers (NP_NID_DEVICE). Feature test: the Kconfig
 * symbol the devmap bit came with.
 */
#ifdef CONFIG_ARCH_HAS_PTE_DEVMAP
#define NP_PAGE_DEVMAP _PAGE_DEVMAP
#define np_pte_devmap(pte) pte_devmap(pte)
#define np_pmd_devmap(pmd) pmd_devmap(pmd)
#define np_pud_devmap(pud) pud_devmap(pud)
#else
#define NP_PAGE_DEVMAP 0
#define np_pte_devmap(pte) false
#define np_pmd_devmap(pmd) false
#define np_pud_devmap(pud) false
#endif

/*
 * 7.x (7.2 has it; the first release carrying it not checked here) "mm:
 * introduce leaf entry type and use to simplify leaf
 * entry logic" (include/linux/leafops.h): softleaf_t and softleaf_*()
 * replace pte_to_swp_entry(), pmd_to_swp_entry(), is_migration_entry()
 * and non_swap_entry() for non-present page-table entries. Feature test:
 * the header (Kbuild).
 */
#ifdef NP_HAVE_LEAFOPS_H
#include <linux/leafops.h>
#define np_leaf_t softleaf_t
#define np_leaf_from_pte(pte) softleaf_from_pte(pte)
#define np_leaf_from_pmd(pmd) softleaf_from_pmd(pmd)
#define np_leaf_is_migration(e) softleaf_is_migration(e)
#define np_leaf_is_swap(e) softleaf_is_swap(e)
#else
#include <linux/swapops.h>
#define np_leaf_t swp_entry_t
#define np_leaf_from_pte(pte) pte_to_swp_entry(pte)
#define np_leaf_from_pmd(pmd) pmd_to_swp_entry(pmd)
#define np_leaf_is_migration(e) is_migration_entry(e)
#define np_leaf_is_swap(e) (!non_swap_entry(e))
#endif

/*
 * v6.14 "mm/page_alloc: remove alloc_pages_bulk_array_node()"... renamed
 * to alloc_pages_bulk_node() (same arguments: fills the NULL slots of the
 * array, returns how many are filled). Feature test: the new macro.
 */
#ifdef alloc_pages_bulk_node
#define np_alloc_pages_bulk_node(gfp, nid, nr, pages) \
	alloc_pages_bulk_node(gfp, nid, nr, pages)
#else
#define np_alloc_pages_bulk_node(gfp, nid, nr, pages) \
	alloc_pages_bulk_array_node(gfp, nid, nr, pages)
#endif

/* A present PTE with no special or devmap bit (so not PROT_NONE either). */
#define NP_PTE_PLAIN_MASK (_PAGE_PRESENT | _PAGE_SPECIAL | NP_PAGE_DEVMAP)
/*
 * The bits pte_young() and pte_dirty() test: v6.6 "x86/mm: Start actually
 * marking _PAGE_SAVED_DIRTY" (shadow stacks) made pte_dirty() test
 * _PAGE_DIRTY_BITS, the hardware's dirty bit or the saved one.
 */
#ifdef _PAGE_DIRTY_BITS
#define NP_PTE_ACCESS_MASK (_PAGE_ACCESSED | _PAGE_DIRTY_BITS)
#else
#define NP_PTE_ACCESS_MASK (_PAGE_ACCESSED | _PAGE_DIRTY)
#endif
/* The same for a PMD leaf, writable (never the huge zero page). */
#define NP_PMD_PLAIN_MASK (NP_PTE_PLAIN_MASK | _PAGE_PSE | _PAGE_RW)
#define NP_PMD_PLAIN	  (_PAGE_PRESENT | _PAGE_PSE | _PAGE_RW)

/*
 * Migration internals whose prototypes live in mm/internal.h (not in the
 * installed headers) or changed between the versions.
 *
 * folio_isolate_lru(): v6.4 "mm: change to return bool for
 * folio_isolate_lru()" (Baolin Wang's "change the return value for page
 * isolation functions" series, merged for 6.4, not 6.3; the 6.3 gate here
 * before was a release early). Its prototype is in mm/internal.h, which
 * no headers package has, so this one stays a version test.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
typedef bool np_isolate_lru_t(struct folio *folio);
#define NP_ISOLATE_LRU_OK(ret) (ret)
#else
/* 6.1: 0 on success, -EBUSY otherwise. */
typedef int np_isolate_lru_t(struct folio *folio);
#define NP_ISOLATE_LRU_OK(ret) ((ret) == 0)
#endif

/*
 * migrate_pages()'s callbacks: v6.5 "mm: convert migrate_pages() to work
 * on folios" (4e096ae1801e, committed 2023-05-13, after 6.4-rc1:
 * new_folio_t/free_folio_t; not 6.3 as this gate said before);
 * 6.1 passes pages. Ours are written on folios; these wrap them. Feature
 * test: the typedef in <linux/migrate.h> (Kbuild).
 */
#ifdef NP_HAVE_NEW_FOLIO_T
#define NP_MIGRATE_CALLBACKS(alloc, put)                                  \
	static struct folio *alloc##_cb(struct folio *src, unsigned long p) \
	{                                                                \
		return alloc(src, p);                                    \
	}                                                                \
	static void put##_cb(struct folio *dst, unsigned long p)         \
	{                                                                \
		put(dst, p);                                             \
	}
#define np_alloc_target_call(fn, src, p) ((fn)((src), (p)))
#else
#define NP_MIGRATE_CALLBACKS(alloc, put)                                  \
	static struct page *alloc##_cb(struct page *src, unsigned long p) \
	{                                                                \
		struct folio *dst = alloc(page_folio(src), p);           \
									 \
		return dst ? &dst->page : NULL;                          \
	}                                                                \
	static void put##_cb(struct page *dst, unsigned long p)          \
	{                                                                \
		put(page_folio(dst), p);                                 \
	}
#define np_alloc_target_call(fn, src, p)                                 \
	({                                                               \
		struct page *__dst = (fn)(&(src)->page, (p));            \
		__dst ? page_folio(__dst) : NULL;                        \
	})
#endif

/*
 * Will migrate_pages() split @folio before it tries to move it? v6.10
 * "mm/migrate: split source folio if it is on deferred split list", as
 * narrowed by v6.12 "mm: introduce a pageflag for partially mapped
 * folios": migrate_pages_batch() splits a folio of order above 1 that is
 * on the deferred split queue and flagged partially mapped, and migrates
 * its pieces (6.12.117 mm/migrate.c:1775, 7.3.4 mm/migrate.c:1868; the
 * same racy list read as there). 6.1's migrate_pages() splits no folio
 * for that reason. Feature test: the flag in <linux/page-flags.h>
 * (Kbuild).
 */
#ifdef NP_HAVE_FOLIO_PARTIALLY_MAPPED
/*
 * Is @folio on the deferred split queue? Unlocked, as migrate_pages_batch()
 * and migrate_folio_move() read it: only a hint. (6.1 keeps the list in
 * the third page, and its page-table engine takes no large folio.)
 */
static inline bool np_folio_deferred(struct folio *folio)
{
	/* Unlocked: the queue's lock is the kernel's (split_queue_lock). */
	return !data_race(list_empty(&folio->_deferred_list));
}

static inline bool np_migrate_splits_first(struct folio *folio)
{
	return folio_order(folio) > 1 && np_folio_deferred(folio) &&
	       folio_test_partially_mapped(folio);
}
#define np_folio_partially_mapped(folio) folio_test_partially_mapped(folio)
#else
static inline bool np_folio_deferred(struct folio *folio)
{
	return false;
}

static inline bool np_migrate_splits_first(struct folio *folio)
{
	return false;
}
#define np_folio_partially_mapped(folio) false
#endif

/* mm/internal.h's struct migration_target_control, as each version has it. */
struct np_mtc {
	int nid;
	nodemask_t *nmask;
	gfp_t gfp_mask;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	/* v6.9 "mm: add the migrate reason to struct migration_target_control" */
	enum migrate_reason reason;
#endif
};
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#define np_mtc_set_reason(mtc, r) ((mtc)->reason = (r))
#else
#define np_mtc_set_reason(mtc, r) do { } while (0)
#endif

/*
 * lru_cache_disable(): declared in <linux/swap.h> up to 7.2; 7.3 declares
 * it only in mm/internal.h, so the prototype is copied here (unchanged
 * since v5.13 "mm: disable LRU pagevec during the migration temporarily").
 */
#ifdef NP_HAVE_LRU_CACHE_DISABLE_DECL
#define NP_LRU_CACHE_DISABLE_PTR typeof(&lru_cache_disable)
#else
typedef void np_lru_cache_disable_t(void);
#define NP_LRU_CACHE_DISABLE_PTR np_lru_cache_disable_t *
#endif

/*
 * The hugetlb isolation helper, from the prototype in <linux/hugetlb.h>
 * (Kbuild's header probes, not version numbers: Debian 6.1.192 carries a
 * backported rename):
 *   v6.14 "mm/hugetlb: rename isolate_hugetlb() to folio_isolate_hugetlb()":
 *         bool folio_isolate_hugetlb(folio, list) (7.x);
 *   v6.4  "mm: hugetlb: change to return bool for isolate_hugetlb()":
 *         bool isolate_hugetlb(folio, list) (6.12);
 *   v6.3  "mm/hugetlb: convert isolate_hugetlb to folios":
 *         int isolate_hugetlb(folio, list), 0 on success;
 *   Debian 6.1.192: int folio_isolate_hugetlb(page, list), 0 on success;
 *   up to 6.2: int isolate_hugetlb(page, list), 0 on success.
 */
#if defined(NP_HAVE_FOLIO_ISOLATE_HUGETLB)
#define NP_HUGETLB_ISOLATE folio_isolate_hugetlb
#define np_hugetlb_isolate_call(fn, folio, list) ((fn)((folio), (list)))
#elif defined(NP_HAVE_ISOLATE_HUGETLB_BOOL)
#define NP_HUGETLB_ISOLATE isolate_hugetlb
#define np_hugetlb_isolate_call(fn, folio, list) ((fn)((folio), (list)))
#elif defined(NP_HAVE_ISOLATE_HUGETLB_FOLIO_INT)
#define NP_HUGETLB_ISOLATE isolate_hugetlb
#define np_hugetlb_isolate_call(fn, folio, list) (!(fn)((folio), (list)))
#elif defined(NP_HAVE_FOLIO_ISOLATE_HUGETLB_PAGE)
#define NP_HUGETLB_ISOLATE folio_isolate_hugetlb
#define np_hugetlb_isolate_call(fn, folio, list) (!(fn)(&(folio)->page, (list)))
#else
#define NP_HUGETLB_ISOLATE isolate_hugetlb
#define np_hugetlb_isolate_call(fn, folio, list) (!(fn)(&(folio)->page, (list)))
#endif

/*
 * "Mapped by more than one process", as move_pages(2) asks it: 6.1
 * page_mapcount(page) > 1; v6.8+ folio_likely_mapped_shared(folio).
 */
#if defined(NP_HAVE_FOLIO_MAYBE_MAPPED_SHARED)
/* v6.15 "mm: rename folio_likely_mapped_shared() to folio_maybe_mapped_shared()" */
#define np_mapped_shared(folio, page) folio_maybe_mapped_shared(folio)
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define np_mapped_shared(folio, page) folio_likely_mapped_shared(folio)
#else
#define np_mapped_shared(folio, page) (page_mapcount(page) > 1)
#endif

/*
 * v6.11 "mm: migrate: support poisoned recover from migrate folio": the
 * kernel's own migration copies with folio_mc_copy() (copy_mc_highpage()
 * a page), which fails on a hardware-poisoned source instead of taking a
 * machine check. Before it (Debian's 6.1) migration copies with
 * folio_copy() (copy_highpage()). The engines that copy themselves copy as
 * the kernel they run on does: same safety, same cost. Return: 0, or
 * -EFAULT (the source is poisoned; the page is not moved).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define NP_COPY_PAGE_NAME "copy_mc_highpage"
static inline int np_copy_page(struct page *to, struct page *from)
{
	return copy_mc_highpage(to, from) ? -EFAULT : 0;
}
#else
#define NP_COPY_PAGE_NAME "copy_highpage"
static inline int np_copy_page(struct page *to, struct page *from)
{
	copy_highpage(to, from);
	return 0;
}
#endif

/*
 * The page-table engine's internals (engine_pt.c), resolved by ksyms.c.
 *
 * v6.8 "mm/rmap: introduce folio_remove_rmap_[pte|ptes|pmd]()" and
 * "mm/rmap: introduce folio_add_anon_rmap_[pte|ptes|pmd]()" (David
 * Hildenbrand's rmap interface overhaul; the release not checked here)
 * replace page_remove_rmap(page, vma, compound) and
 * page_add_anon_rmap(page, vma, address, flags) of 6.1. Feature test: the
 * new prototype in <linux/rmap.h> (Kbuild). The engine unmaps an order-0
 * page a call (np_rmap_remove_pte()), a large folio's PTEs in one
 * (np_rmap_remove_ptes(), 6.12+), and maps back each run of a folio's PTEs
 * in one call where the kernel has the ranged shape, a page a call on 6.1.
 */
#ifdef NP_HAVE_FOLIO_RMAP_PTES
#define NP_RMAP_REMOVE		folio_remove_rmap_ptes
#define NP_RMAP_ADD_ANON	folio_add_anon_rmap_ptes
#define np_rmap_remove_pte(fn, folio, page, vma) ((fn)(folio, page, 1, vma))
/*
 * The engine moves a PTE-mapped large folio (mTHP) only where the rmap of
 * all its PTEs goes in one call: folio_remove_rmap_ptes(folio, page, nr,
 * vma) never sees the folio partly mapped, so it is not queued for a
 * deferred split as try_to_migrate_one()'s page-at-a-time removal queues
 * it (design.md, "Large folios"). 6.1's page_remove_rmap() takes one page
 * per call: there large folios stay with the kernel engine.
 */
#define NP_PT_LARGE		true
#define np_rmap_remove_ptes(fn, folio, page, nr, vma) \
	((fn)(folio, page, nr, vma))
#define np_rmap_add_anon_ptes(fn, folio, page, nr, vma, addr, flags) \
	((fn)(folio, page, nr, vma, addr, flags))
#else
#define NP_PT_LARGE		false
/* A page a call: @nr is 1 here (order-0 pages only, NP_PT_LARGE). */
#define np_rmap_add_anon_ptes(fn, folio, page, nr, vma, addr, flags)	\
	do {								\
		VM_WARN_ON_ONCE((nr) != 1);				\
		(fn)(page, vma, addr, flags);				\
	} while (0)
#define NP_RMAP_REMOVE		page_remove_rmap
#define NP_RMAP_ADD_ANON	page_add_anon_rmap
#define np_rmap_remove_pte(fn, folio, page, vma) ((fn)(page, vma, false))
#endif

/*
 * Can the kernel put a migration entry in a PMD (migrate a THP whole)?
 * Between 6.12 and 7.3 (7.3 has it; the commit is not identified here)
 * CONFIG_ARCH_ENABLE_THP_MIGRATION became CONFIG_ARCH_HAS_PMD_SOFTLEAVES
 * (thp_migration_supported() tests the new name); x86-64 selects either.
 */
#if defined(CONFIG_ARCH_ENABLE_THP_MIGRATION) || \
	defined(CONFIG_ARCH_HAS_PMD_SOFTLEAVES)
#define NP_HAVE_PMD_MIGRATION_ENTRY
#endif

/*
 * The page-table engine moves a PMD-mapped THP whole (engine_pt.c) with the
 * same series' folio_remove_rmap_pmd() and folio_add_anon_rmap_pmd(), where
 * the kernel moves THPs (NP_HAVE_PMD_MIGRATION_ENTRY) and, as 6.12's
 * and 7.3's migrate_folio_move() do, requeues the destination of a folio
 * that was on the deferred split queue (deferred_split_folio(folio,
 * partially_mapped), v6.12 "mm: introduce a pageflag for partially mapped
 * folios"; the feature test is that flag, NP_HAVE_FOLIO_PARTIALLY_MAPPED).
 * 6.1 has neither call: its THPs stay with the kernel engine.
 */
#if defined(NP_HAVE_FOLIO_RMAP_PTES) && \
	defined(NP_HAVE_FOLIO_PARTIALLY_MAPPED) && \
	defined(NP_HAVE_PMD_MIGRATION_ENTRY)
#define NP_HAVE_PT_PMD
#define NP_PT_PMD		true
#else
#define NP_PT_PMD		false
#endif

/*
 * x86's flush_tlb_mm_range() (arch/x86/mm/tlb.c): <asm/tlbflush.h> hides
 * its prototype from modules (#ifndef MODULE), so it is copied here; the
 * same in 6.1.192, 6.12.117 and 7.3.4.
 */
typedef void np_flush_tlb_mm_range_t(struct mm_struct *mm, unsigned long start,
				     unsigned long end,
				     unsigned int stride_shift,
				     bool freed_tables);

/*
 * After 6.1 (the commits are not identified here; 6.12 has both changes)
 * struct mmu_notifier_range lost its vma member and
 * mmu_notifier_range_init() its vma argument, and
 * __mmu_notifier_invalidate_range_end() its only_end one (6.1 calls the
 * secondary TLBs' invalidate_range() there too, when only_end is false).
 * Feature tests: the member, the two-argument prototype (Kbuild).
 */
#ifdef NP_HAVE_MMU_NOTIFIER_RANGE_VMA
#define np_mmu_range_init(range, vma, start, end) \
	mmu_notifier_range_init(range, MMU_NOTIFY_CLEAR, \
				MMU_NOTIFIER_RANGE_BLOCKABLE, vma, \
				(vma)->vm_mm, start, end)
#else
#define np_mmu_range_init(range, vma, start, end) \
	mmu_notifier_range_init(range, MMU_NOTIFY_CLEAR, \
				MMU_NOTIFIER_RANGE_BLOCKABLE, (vma)->vm_mm, \
				start, end)
#endif
#ifdef NP_HAVE_MMU_NOTIFIER_ONLY_END
#define np_mmu_range_end_call(fn, range) ((fn)(range, false))
#else
#define np_mmu_range_end_call(fn, range) ((fn)(range))
#endif

/*
 * Between 6.12 and 7.3 (the commit is not identified here) the
 * userfaultfd write-protect PTE helpers were renamed: pte_uffd(),
 * pte_mkuffd(), pte_swp_uffd(), pte_swp_mkuffd() for pte_uffd_wp() and
 * the rest. Feature test: the new name in <asm-generic/pgtable_uffd.h>
 * (Kbuild).
 */
#ifdef NP_HAVE_PTE_UFFD
#define np_pte_uffd(pte)		pte_uffd(pte)
#define np_pte_mkuffd(pte)		pte_mkuffd(pte)
#define np_pte_swp_uffd(pte)		pte_swp_uffd(pte)
#define np_pte_swp_mkuffd(pte)		pte_swp_mkuffd(pte)
#define np_pmd_uffd(pmd)		pmd_uffd(pmd)
#define np_pmd_mkuffd(pmd)		pmd_mkuffd(pmd)
#define np_pmd_swp_uffd(pmd)		pmd_swp_uffd(pmd)
#define np_pmd_swp_mkuffd(pmd)		pmd_swp_mkuffd(pmd)
#else
#define np_pte_uffd(pte)		pte_uffd_wp(pte)
#define np_pte_mkuffd(pte)		pte_mkuffd_wp(pte)
#define np_pte_swp_uffd(pte)		pte_swp_uffd_wp(pte)
#define np_pte_swp_mkuffd(pte)		pte_swp_mkuffd_wp(pte)
#define np_pmd_uffd(pmd)		pmd_uffd_wp(pmd)
#define np_pmd_mkuffd(pmd)		pmd_mkuffd_wp(pmd)
#define np_pmd_swp_uffd(pmd)		pmd_swp_uffd_wp(pmd)
#define np_pmd_swp_mkuffd(pmd)		pmd_swp_mkuffd_wp(pmd)
#endif

/*
 * 7.x userfaultfd read-write protection (userfaultfd_rwp(), the release not
 * checked here) maps protected pages PAGE_NONE, and remove_migration_pte()
 * restores that from the entry's uffd bit. The page-table engine leaves
 * such VMAs to the other engines. Feature test: the helper (Kbuild).
 */
#ifdef NP_HAVE_UFFD_RWP
#define np_uffd_rwp(vma) userfaultfd_rwp(vma)
#else
#define np_uffd_rwp(vma) false
#endif

/*
 * Reading a migration entry: 7.x's softleaf_t API (NP_HAVE_LEAFOPS_H,
 * above) or the swp_entry_t one. Writing one is make_*_migration_entry()
 * and swp_entry_to_pte() on every supported kernel.
 */
#ifdef NP_HAVE_LEAFOPS_H
#define np_leaf_pfn(e)			softleaf_to_pfn(e)
#define np_leaf_is_migration_write(e)	softleaf_is_migration_write(e)
#define np_leaf_is_migration_read(e)	softleaf_is_migration_read(e)
#else
#define np_leaf_pfn(e)			swp_offset_pfn(e)
#define np_leaf_is_migration_write(e)	is_writable_migration_entry(e)
#define np_leaf_is_migration_read(e)	is_readable_migration_entry(e)
#endif

/*
 * The young and dirty bits of a migration entry: the kernel's inline
 * make_migration_entry_young() and the rest read swap_migration_ad_supported,
 * which is not exported (6.1.192, 6.12.117, 7.3.4: include/linux/swapops.h);
 * ksyms.c resolves it as data and these do what they do with its value.
 * The bits (SWP_MIG_YOUNG, SWP_MIG_DIRTY) are the same in all three.
 */
static inline swp_entry_t np_migration_entry_ad(swp_entry_t e, bool ad,
						bool young, bool dirty)
{
	if (!ad)
		return e;
	return swp_entry(swp_type(e), swp_offset(e) |
			 (young ? SWP_MIG_YOUNG : 0) |
			 (dirty ? SWP_MIG_DIRTY : 0));
}
#define np_leaf_is_migration_young(ad, e) ((ad) && (swp_offset(e) & SWP_MIG_YOUNG))
#define np_leaf_is_migration_dirty(ad, e) ((ad) && (swp_offset(e) & SWP_MIG_DIRTY))

/*
 * maybe_mkwrite() without x86's pte_mkwrite(pte, vma), which is out of line
 * and not exported since v6.6 "mm: Make pte_mkwrite() take a VMA" (shadow
 * stacks): for a VMA without VM_SHADOW_STACK (the engine takes no other)
 * it is pte_clear_saveddirty(pte_mkwrite_novma(pte)), both inline (6.12.117,
 * 7.3.4 arch/x86/mm/pgtable.c). 6.1's maybe_mkwrite() is inline. Feature
 * test: pte_mkwrite_novma() in <asm/pgtable.h> (Kbuild).
 */
#ifdef NP_HAVE_PTE_MKWRITE_NOVMA
static inline pte_t np_maybe_mkwrite(pte_t pte, struct vm_area_struct *vma)
{
	if (likely(vma->vm_flags & VM_WRITE))
		pte = pte_clear_saveddirty(pte_mkwrite_novma(pte));
	return pte;
}
#define np_vma_shadow_stack(vma) ((vma)->vm_flags & VM_SHADOW_STACK)
#else
#define np_maybe_mkwrite(pte, vma) maybe_mkwrite(pte, vma)
#define np_vma_shadow_stack(vma) false
#endif

#ifdef NP_HAVE_PT_PMD
/*
 * remove_migration_pmd()'s pmd_mkwrite(pmd, vma), out of line on x86 since
 * v6.6 as pte_mkwrite() is (above): for a VMA without VM_SHADOW_STACK it is
 * pmd_clear_saveddirty(pmd_mkwrite_novma(pmd)), both inline (6.12.117,
 * 7.3.4 arch/x86/mm/pgtable.c).
 */
static inline pmd_t np_pmd_mkwrite(pmd_t pmd)
{
	return pmd_clear_saveddirty(pmd_mkwrite_novma(pmd));
}
#endif

/*
 * Marking an anon-exclusive page possibly shared before it is unmapped
 * (its PTE cleared, the page table lock held): -EBUSY when it may be
 * pinned. v6.8 "mm/rmap: introduce folio_try_share_anon_rmap_pte()"
 * (same series as the rmap calls above) replaces 6.1's
 * page_try_share_anon_rmap(); both are inline.
 */
#ifdef NP_HAVE_FOLIO_RMAP_PTES
#define np_try_share_anon_pte(folio, page) \
	folio_try_share_anon_rmap_pte(folio, page)
#else
#define np_try_share_anon_pte(folio, page) page_try_share_anon_rmap(page)
#endif

/*
 * Whose root owns a task's /proc/PID files when the task is not dumpable
 * by its user (task_dump_owner(), fs/proc/base.c): NULL when its euid
 * owns them. 7.3 "exec_state" (Christian Brauner, 2026) moved the
 * dumpable mode and its user namespace from mm->flags and mm->user_ns to
 * task->exec_state (<linux/sched/exec_state.h>, inline-readable under
 * RCU). Feature test: that header (Kbuild). Called under RCU.
 */
#ifdef NP_HAVE_TASK_EXEC_STATE
#include <linux/sched/exec_state.h>
static inline struct user_namespace *np_task_proc_root_ns(struct task_struct *task)
{
	struct task_exec_state *es = rcu_dereference(task->exec_state);

	if (es && READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER)
		return NULL;
	return es ? es->user_ns : &init_user_ns;
}
#else
#include <linux/sched/coredump.h>
static inline struct user_namespace *np_task_proc_root_ns(struct task_struct *task)
{
	struct user_namespace *ns = &init_user_ns;
	struct mm_struct *mm;

	task_lock(task);
	mm = task->mm;
	if (mm && get_dumpable(mm) == SUID_DUMP_USER)
		ns = NULL;
	else if (mm)
		ns = mm->user_ns;
	task_unlock(task);
	return ns;
}
#endif

#endif /* _NUMAPLACE_COMPAT_H */
