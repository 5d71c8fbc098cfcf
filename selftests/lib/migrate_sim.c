// SPDX-License-Identifier: GPL-2.0
/*
 * The move_pages(2) oracle of the migrate suites (migrate_lib.h): page
 * states before a call, what the syscall and the module must answer from
 * them, and one call of each compared. Compiled once into the tests'
 * library.
 */
#include "kselftest.h"
#include "migrate_lib.h"

static long psz;

static void __attribute__((constructor)) np_sim_init(void)
{
	psz = sysconf(_SC_PAGESIZE);
}

static int np_cmp_folio(const void *x, const void *y, void *arg)
{
	const struct np_pre *pre = arg;
	const size_t *a = x, *b = y;

	if (pre[*a].folio != pre[*b].folio)
		return pre[*a].folio < pre[*b].folio ? -1 : 1;
	return *a < *b ? -1 : *a > *b;
}

int np_pre_read(int pid, const __u64 *addrs, size_t n,
		struct np_pre *pre)
{
	int kpc = open("/proc/kpagecount", O_RDONLY | O_CLOEXEC), ret;
	size_t *ord = calloc(n + 1, sizeof(*ord)), j;
	struct np_model m;

	if (kpc < 0 || !ord) {
		ret = kpc < 0 ? -errno : -ENOMEM;
		goto out;
	}
	ret = np_model_open(&m, pid);
	if (ret)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct np_pre *p = &pre[i];
		__u64 cnt = 0;

		memset(p, 0, sizeof(*p));
		np_model_page(&m, addrs[i], &p->pg);
		p->rep = i;
		if (!(p->pg.what & NPW_PRESENT) || (p->pg.what & NPW_ZERO) ||
		    p->pg.node < 0)
			continue;
		p->large = !!(p->pg.what & (NPW_THP | NPW_HUGETLB));
		p->nr = p->large ? NP_SEG_PAGES : 1;
		p->folio = p->large ? p->pg.pfn & ~(NP_SEG_PAGES - 1UL) :
			   p->pg.pfn;
		p->hugetlb_tail = (p->pg.what & NPW_HUGETLB) &&
				  p->pg.pfn % NP_SEG_PAGES;
		if (pread(kpc, &cnt, 8, p->pg.pfn * 8) != 8)
			ret = -EIO;
		p->shared = cnt > 1;
	}
	np_model_close(&m);
	/* Each folio's entries name the first of them. */
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, n, sizeof(*ord), np_cmp_folio, pre);
	for (size_t i = 0; i < n; i = j) {
		for (j = i + 1; j < n && pre[ord[j]].folio == pre[ord[i]].folio;
		     j++)
			if (pre[ord[i]].folio)
				pre[ord[j]].rep = ord[i];
	}
out:
	if (kpc >= 0)
		close(kpc);
	free(ord);
	return ret;
}

/* The lookup's verdict: 0 for a page to handle, else its status. */
static int np_sim_lookup(const struct np_pre *p, int old)
{
	int st = old ? p->pg.st_old : p->pg.st_new;

	/* !vma_migratable(): VM_IO | VM_PFNMAP. */
	if (p->pg.what & (NPW_PFNMAP | NPW_NOVMA))
		return -EFAULT;
	return st < 0 ? st : 0;
}

/*
 * What the migrate_vma engine moves (abi.md): private anonymous pages
 * mapped once, a PMD-mapped THP only when SPLIT_OK lets it split it;
 * the rest (file, shmem, hugetlb, mapped twice) stays with -EBUSY.
 */
static int np_vma_takes(const struct np_pre *p, const struct np_sim *o)
{
	if (!(p->pg.what & NPW_ANON) || (p->pg.what & NPW_HUGETLB) ||
	    p->shared)
		return 0;
	return !p->large || (o->split_ok && (p->pg.what & NPW_PMD));
}

/*
 * Expected statuses @exp of a call on entries @pre with targets @tgt;
 * node[rep] is each folio's node before the call (pre[].pg.node) and
 * after it.
 *
 * The syscall (do_pages_move(), kernel-facts 2.1-2.3): entries go one by
 * one; consecutive entries with one target that were isolated form a
 * batch, migrated (and answered with the target) when the target
 * changes, after an entry that was not isolated (answered first), and at
 * the end. An entry whose folio waits in the batch fails isolation:
 * -EBUSY. 6.1: a hugetlb tail address is -EACCES.
 *
 * The module: each folio is handled once and every entry is answered
 * with the node its page is on at the end.
 */
/* The syscall's batch goes: its entries are answered with its target. */
static void np_sim_flush(size_t *pend, size_t *npend, int *exp, int *node,
			 const struct np_pre *pre, int cur)
{
	while (*npend) {
		size_t j = pend[--*npend];

		exp[j] = node[pre[j].rep] = cur;
	}
}

void np_simulate(struct np_sim *o, const struct np_pre *pre,
		 const int *tgt, size_t n, int *exp, int *node)
{
	size_t *pend = calloc(n + 1, sizeof(*pend)), npend = 0;
	unsigned int *inb = calloc(n + 1, sizeof(*inb)), batch = 1;
	char *moved = calloc(n + 1, 1);
	int cur = NP_NO_NODE;

	o->moved_pages = o->moved_folios = o->in_place = 0;
	o->engines = 0;
	for (size_t i = 0; i < n && (!pend || !inb || !moved); i++)
		exp[i] = INT_MIN;	/* no memory: nothing can match */
	for (size_t i = 0; i < n && pend && inb && moved; i++) {
		const struct np_pre *p = &pre[i];
		int t = tgt[i], st = np_sim_lookup(p, o->old);
		size_t r = p->rep;

		if (!o->syscall) {
			if (!st) {
				if (node[r] == t) {
					st = t;
					o->in_place += !moved[r];
				} else if (p->shared && !o->move_all) {
					st = -EACCES;
				} else if (o->vma_only && !np_vma_takes(p, o)) {
					st = -EBUSY;
				} else {
					node[r] = st = t;
					moved[r] = 1;
					o->moved_folios++;
					o->moved_pages += p->nr;
					/* abi.md: the VMA engine's pages, and the rest. */
					if (o->vma_only ||
					    (!o->kernel_only && o->vma_engine &&
					     np_vma_takes(p, o)))
						o->engines |= o->vma_engine;
					else
						o->engines |= NUMAPLACE_ENGINE_KERNEL;
				}
			}
			exp[i] = st;
			continue;
		}
		if (cur != NP_NO_NODE && t != cur) {
			np_sim_flush(pend, &npend, exp, node, pre, cur);
			batch++;
		}
		cur = t;
		if (!st) {
			if (node[r] == t)
				st = t;
			else if (p->shared && !o->move_all)
				st = -EACCES;
			else if (o->old && p->hugetlb_tail)
				st = -EACCES;
			else if (inb[r] == batch)
				st = -EBUSY;
			else {
				inb[r] = batch;
				pend[npend++] = i;
				continue;
			}
		}
		/* Not isolated: answered, then the batch goes. */
		exp[i] = st;
		np_sim_flush(pend, &npend, exp, node, pre, cur);
		batch++;
		cur = NP_NO_NODE;
	}
	if (pend)
		np_sim_flush(pend, &npend, exp, node, pre, cur);
	free(pend);
	free(inb);
	free(moved);
}

/* Where @addr lies in layout @l, for a log line. */
static const char *np_where(const struct np_lay *l, __u64 addr, char *buf,
			    size_t size)
{
	uintptr_t b = l ? (uintptr_t)l->base : 0;

	if (l && addr >= b && addr < b + l->npages * psz)
		snprintf(buf, size, "%s page %zu",
			 np_seg_names[l->seg[(addr - b) / NP_PMD]],
			 (size_t)((addr - b) / psz % NP_SEG_PAGES));
	else
		snprintf(buf, size, "outside the layout");
	return buf;
}

/* Statuses against the simulation; mismatches logged, counted. */
static int np_cmp_sim(struct np_ctx *c, const char *what,
		      const struct np_lay *l, const __u64 *addrs,
		      const int *exp, const __s32 *got, const int *tgt,
		      const struct np_pre *pre, size_t n)
{
	int bad = 0, per[NP_SEG_MAX + 1] = { 0 };
	uintptr_t b = l ? (uintptr_t)l->base : 0;
	char b1[200], b2[64];

	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		if (exp[i] == got[i])
			continue;
		bad++;
		if (l && addrs[i] >= b && addrs[i] < b + l->npages * psz)
			per[l->seg[(addrs[i] - b) / NP_PMD]]++;
		else
			per[NP_SEG_MAX]++;
		np_log(c, "%s: [%zu] %#llx (%s) target %d: expected %d, got %d; before: shared %d %s",
		       what, i, (unsigned long long)addrs[i],
		       np_where(l, addrs[i], b2, sizeof(b2)), tgt[i], exp[i],
		       got[i], pre[i].shared,
		       np_page_str(&pre[i].pg, b1, sizeof(b1)));
	}
	for (int k = 0; bad && k <= NP_SEG_MAX; k++)
		if (per[k])
			ksft_print_msg("%s: %d mismatches in %s\n", what, per[k],
				       k < NP_SEG_MAX ? np_seg_names[k] :
				       "addresses outside the layout");
	return np_log_end(c, what, bad);
}

/*
 * Placement after the call: every page that had a node is on the one the
 * simulation says (node[rep]); the fork child (@kid), if any, maps the
 * same pages where it shares them.
 */
static int np_cmp_placement(struct np_ctx *c, const char *what,
			    const struct np_lay *l, const __u64 *addrs,
			    const struct np_pre *pre, const int *node,
			    size_t n, pid_t kid)
{
	struct np_page *post = calloc(n + 1, sizeof(*post));
	struct np_model m, km;
	char b1[200], b2[64];
	int bad = 0, have_kid;

	if (!post || np_model_open(&m, 0)) {
		free(post);
		return 1;
	}
	have_kid = kid > 0 && !np_model_open(&km, kid);
	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		np_model_page(&m, addrs[i], &post[i]);
		if (pre[i].pg.node < 0 || !pre[i].folio)
			continue;
		if (post[i].node != node[pre[i].rep]) {
			bad++;
			np_log(c, "%s: [%zu] %#llx (%s): on node %d, expected %d; before: %s",
			       what, i, (unsigned long long)addrs[i],
			       np_where(l, addrs[i], b2, sizeof(b2)),
			       post[i].node, node[pre[i].rep],
			       np_page_str(&pre[i].pg, b1, sizeof(b1)));
		}
		if (have_kid && pre[i].shared) {
			struct np_page kp;

			np_model_page(&km, addrs[i], &kp);
			if (kp.pfn != post[i].pfn &&
			    (kp.what & NPW_PRESENT)) {
				bad++;
				np_log(c, "%s: [%zu] %#llx (%s): the child maps pfn %#lx, the caller %#lx",
				       what, i, (unsigned long long)addrs[i],
				       np_where(l, addrs[i], b2, sizeof(b2)),
				       kp.pfn, post[i].pfn);
			}
		}
	}
	np_model_close(&m);
	if (have_kid)
		np_model_close(&km);
	free(post);
	return np_log_end(c, what, bad);
}

/*
 * One check of np_compare(): a failed one is logged and counted. On
 * stderr, as the harness's TH_LOG: a test's stdout is buffered and lost
 * when its process _exit()s.
 */
#define NP_CMP_CHECK(cond, fmt, ...)					\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "# %s:%d: %s: " fmt "\n",	\
				__FILE__, __LINE__, k->name,		\
				##__VA_ARGS__);				\
			bad++;						\
		}							\
	} while (0)

int np_compare(struct np_ctx *c, const struct np_call *k, const __u64 *aa,
	       const __u64 *ab, const int *tgt, size_t n)
{
	int *sys = calloc(n + 1, sizeof(*sys));
	int *expa = calloc(n + 1, sizeof(*expa));
	int *expb = calloc(n + 1, sizeof(*expb));
	int *nodea = calloc(n + 1, sizeof(*nodea));
	int *nodeb = calloc(n + 1, sizeof(*nodeb));
	struct np_pre *prea = calloc(n + 1, sizeof(*prea));
	struct np_pre *preb = calloc(n + 1, sizeof(*preb));
	__s32 *st = calloc(n + 1, sizeof(*st));
	struct np_sim sa = { 0 }, sb = { 0 };
	struct numaplace_migrate m;
	char what[128];
	int bad = 0;
	long ret;

	NP_CMP_CHECK(sys && expa && expb && nodea && nodeb && prea && preb &&
		     st, "out of memory");
	if (bad)
		goto out_free;
	ret = np_pre_read(0, aa, n, prea);
	NP_CMP_CHECK(!ret, "copy A's page states: %s", strerror(-ret));
	ret = np_pre_read(0, ab, n, preb);
	NP_CMP_CHECK(!ret, "copy B's page states: %s", strerror(-ret));
	if (bad)
		goto out_free;
	for (size_t i = 0; i < n; i++) {
		nodea[i] = prea[i].pg.node;
		nodeb[i] = preb[i].pg.node;
	}
	sa.syscall = 1;
	sa.old = !c->new_kernel;
	sa.move_all = sb.move_all = !!(k->flags & NUMAPLACE_MIGRATE_MOVE_ALL);
	sb.old = !c->new_kernel && (k->flags & NUMAPLACE_MIGRATE_AS_SYSCALL);
	sb.avail = k->avail;
	sb.vma_only = k->vma_only ||
		      (!(k->flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL) &&
		       !(k->avail & NUMAPLACE_ENGINE_KERNEL));
	sb.kernel_only = !!(k->flags & NUMAPLACE_MIGRATE_ENGINE_KERNEL);
	sb.vma_engine = np_vma_engine(k->flags, k->avail);
	sb.split_ok = !!(k->flags & NUMAPLACE_MIGRATE_SPLIT_OK);
	np_simulate(&sa, prea, tgt, n, expa, nodea);
	np_simulate(&sb, preb, tgt, n, expb, nodeb);

	/* Copy A: the syscall. */
	for (size_t i = 0; i < n; i++)
		sys[i] = NP_SENTINEL;
	ret = np_sys_move_pages(0, n, aa, tgt, sys,
				sa.move_all ? NP_MF_MOVE_ALL : NP_MF_MOVE);
	NP_CMP_CHECK(!ret, "move_pages(2) returned %ld, left folios behind: the oracle is void",
		     ret);
	if (bad)
		goto out_free;
	snprintf(what, sizeof(what), "%s: syscall vs simulation (a test bug)",
		 k->name);
	NP_CMP_CHECK(!np_cmp_sim(c, what, k->la, aa, expa, sys, tgt, prea, n),
		     "syscall vs simulation");

	/* Copy B: the module. */
	np_migrate_init(&m, 0, k->flags, k->policy);
	if (k->array) {
		m.flags |= NUMAPLACE_MIGRATE_PAGES;
		m.pages_ptr = (uintptr_t)ab;
		m.count = n;
	} else {
		m.start = k->len ? k->start : ab[0];
		m.len = k->len ? k->len : n * c->psz;
	}
	if (k->policy == NUMAPLACE_POLICY_PER_PAGE)
		m.nodes_ptr = (uintptr_t)tgt;
	m.node = tgt[0];
	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	m.status_ptr = (uintptr_t)st;
	ret = np_migrate(c->fd, &m);
	NP_CMP_CHECK(!ret, "MIGRATE: %s", strerror(-ret));
	if (bad)
		goto out_free;
	NP_CMP_CHECK(m.done == n, "done %llu, expected %zu",
		     (unsigned long long)m.done, n);
	NP_CMP_CHECK(st[n] == NP_SENTINEL, "status[%zu] written past the end: %d",
		     n, st[n]);
	snprintf(what, sizeof(what), "%s: module vs simulation", k->name);
	NP_CMP_CHECK(!np_cmp_sim(c, what, k->lb, ab, expb, st, tgt, preb, n),
		     "module vs simulation");
	snprintf(what, sizeof(what), "%s: counters", k->name);
	NP_CMP_CHECK(!np_check_mig_counters(c, what, &m, st, n, 1, k->allowed),
		     "counters");
	NP_CMP_CHECK(sb.engines == m.engines, "engines %#x, expected %#x",
		     m.engines, sb.engines);
	if (!k->array) {
		NP_CMP_CHECK(sb.moved_pages == m.nr_moved_pages,
			     "moved pages %llu, expected %llu",
			     (unsigned long long)m.nr_moved_pages,
			     (unsigned long long)sb.moved_pages);
		NP_CMP_CHECK(sb.in_place == m.nr_in_place_pages,
			     "pages in place %llu, expected %llu",
			     (unsigned long long)m.nr_in_place_pages,
			     (unsigned long long)sb.in_place);
		if (!sb.vma_only || !sb.split_ok)
			NP_CMP_CHECK(sb.moved_folios == m.nr_moved_folios,
				     "moved folios %llu, expected %llu",
				     (unsigned long long)m.nr_moved_folios,
				     (unsigned long long)sb.moved_folios);
	}

	snprintf(what, sizeof(what), "%s: syscall placement", k->name);
	NP_CMP_CHECK(!np_cmp_placement(c, what, k->la, aa, prea, nodea, n,
				       k->kid), "syscall placement");
	snprintf(what, sizeof(what), "%s: module placement", k->name);
	NP_CMP_CHECK(!np_cmp_placement(c, what, k->lb, ab, preb, nodeb, n,
				       k->kid), "module placement");
out_free:
	free(sys);
	free(expa);
	free(expb);
	free(nodea);
	free(nodeb);
	free(prea);
	free(preb);
	free(st);
	return bad;
}
