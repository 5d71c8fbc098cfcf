// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the one place that resolves unexported kernel internals.
 *
 * Only names on the allow-list below are resolved, each into a pointer of
 * the type of the kernel header's own prototype. kallsyms_lookup_name is
 * found through a kprobe. On a kernel built with IBT (Debian 6.12, 7.x) the
 * ENDBR of functions whose address is never taken is sealed at boot: when
 * the CPU enforces IBT (or the simulate_ibt parameter says to behave as if
 * it did), a sealed target is refused, since calling it would be a fatal
 * #CP. A missing or refused symbol leaves its pointer NULL: the feature
 * that needs it reports "unsupported", the rest of the module works.
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/security.h>

#include "numaplace.h"
#include "ksyms.h"

static bool simulate_ibt;
module_param(simulate_ibt, bool, 0444);
MODULE_PARM_DESC(simulate_ibt,
		 "behave as on a CPU with IBT, which a kernel built with IBT enforces (for tests)");

struct np_ksyms np_ksyms;

/* x86 ENDBR64 (the 4-byte NOP that seals it: compat.h np_endbr_seal()). */
#define NP_ENDBR64	0xfa1e0ff3U

/*
 * Only a kernel built with X86_KERNEL_IBT turns enforcement on (Debian
 * 6.12; not 6.1), whatever the CPU: simulate_ibt simulates the CPU.
 */
static bool np_ibt_enforced(void)
{
	return IS_ENABLED(CONFIG_X86_KERNEL_IBT) &&
	       (simulate_ibt || np_cpu_enforces_ibt());
}

static u32 np_text_word(unsigned long addr)
{
	u32 word;

	if (copy_from_kernel_nofault(&word, (void *)addr, sizeof(word)))
		return 0;
	return word;
}

/*
 * Safe to call indirectly: the CPU does not enforce IBT, or the target
 * starts with an ENDBR64 (not sealed, not a function without one).
 */
static bool np_callable(unsigned long addr)
{
	return addr && (!np_ibt_enforced() || np_text_word(addr) == NP_ENDBR64);
}

typedef unsigned long (*np_kallsyms_fn)(const char *name);

static np_kallsyms_fn np_find_kallsyms(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr, word;

	np_kallsyms_fn lookup;

	if (register_kprobe(&kp))
		return NULL;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	/*
	 * On a kernel built with IBT, kprobes step over an ENDBR (or its
	 * seal): arch_adjust_kprobe_addr() adds 4 when is_endbr() holds at
	 * the symbol (6.12, 7.3). Without IBT is_endbr() is false and
	 * kp.addr is the symbol itself (6.1): the 4 bytes before it belong
	 * to another function or its padding, and are never looked at.
	 */
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT)) {
		word = np_text_word(addr - 4);
		if (word == NP_ENDBR64 || word == np_endbr_seal())
			addr -= 4;
	}
	if (!np_callable(addr))
		return NULL;
	/* It must find itself where we found it, or it is not what we think. */
	lookup = (np_kallsyms_fn)addr;
	if (lookup("kallsyms_lookup_name") != addr) {
		pr_info(NP_NAME ": kallsyms_lookup_name at %pS does not find itself\n",
			(void *)addr);
		return NULL;
	}
	return lookup;
}

/* The allow-list: name, where its typed pointer lives, function or data. */
#define NP_KSYM_AS(_name, _slot, _data) { _name, (void **)&np_ksyms._slot, _data }
#define NP_KSYM(_name) NP_KSYM_AS(#_name, _name, false)
static const struct {
	const char *name;
	void **slot;
	bool data;	/* never called: no IBT question */
} np_ksym_list[] = {
	NP_KSYM(ptrace_may_access),
	NP_KSYM(security_task_movememory),
	NP_KSYM(cpuset_mems_allowed),
	NP_KSYM(migrate_pages),
	NP_KSYM(alloc_migration_target),
	NP_KSYM(putback_movable_pages),
	NP_KSYM(folio_isolate_lru),
	NP_KSYM_AS(__stringify(NP_HUGETLB_ISOLATE), hugetlb_isolate, false),
	NP_KSYM(lru_cache_disable),
	NP_KSYM_AS("lru_disable_count", lru_disable_count, true),
	NP_KSYM_AS(__stringify(NP_RMAP_REMOVE), rmap_remove, false),
	NP_KSYM_AS(__stringify(NP_RMAP_ADD_ANON), rmap_add_anon, false),
	NP_KSYM(flush_tlb_mm_range),
	NP_KSYM_AS("__mmu_notifier_invalidate_range_start", mmu_range_start, false),
	NP_KSYM_AS("__mmu_notifier_invalidate_range_end", mmu_range_end, false),
	NP_KSYM_AS("__mmu_notifier_clear_young", mmu_clear_young, false),
#ifdef CONFIG_LOCKDEP
	NP_KSYM_AS("__mmu_notifier_invalidate_range_start_map",
		   mmu_range_start_map, true),
#endif
	NP_KSYM_AS("swap_migration_ad_supported", swap_migration_ad_supported, true),
#ifdef NP_HAVE_PT_PMD
	NP_KSYM_AS("folio_remove_rmap_pmd", rmap_remove_pmd, false),
	NP_KSYM_AS("folio_add_anon_rmap_pmd", rmap_add_anon_pmd, false),
	NP_KSYM_AS("deferred_split_folio", deferred_split, false),
#endif
};

int np_ksyms_init(void)
{
	np_kallsyms_fn lookup = np_find_kallsyms();
	unsigned long addr;
	unsigned int i;

	if (!lookup) {
		pr_info(NP_NAME ": kallsyms_lookup_name %s: internals unsupported\n",
			np_ibt_enforced() ? "sealed under IBT" : "not found");
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(np_ksym_list); i++) {
		addr = lookup(np_ksym_list[i].name);
		if (!addr || (!np_ksym_list[i].data && !np_callable(addr))) {
			pr_info(NP_NAME ": %s %s: unsupported\n",
				np_ksym_list[i].name,
				addr ? "sealed under IBT" : "not found");
			continue;
		}
		*np_ksym_list[i].slot = (void *)addr;
	}
	return 0;
}
