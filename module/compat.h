/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: every kernel-version difference lives here, each shim naming
 * the version and the change it papers over.
 */
#ifndef _NUMAPLACE_COMPAT_H
#define _NUMAPLACE_COMPAT_H

#include <linux/version.h>
#include <linux/pgtable.h>
#include <asm/cpufeature.h>

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

/* A present PTE with no special or devmap bit (so not PROT_NONE either). */
#define NP_PTE_PLAIN_MASK (_PAGE_PRESENT | _PAGE_SPECIAL | _PAGE_DEVMAP)
/* The same for a PMD leaf, writable (never the huge zero page). */
#define NP_PMD_PLAIN_MASK (NP_PTE_PLAIN_MASK | _PAGE_PSE | _PAGE_RW)
#define NP_PMD_PLAIN	  (_PAGE_PRESENT | _PAGE_PSE | _PAGE_RW)

#endif /* _NUMAPLACE_COMPAT_H */
