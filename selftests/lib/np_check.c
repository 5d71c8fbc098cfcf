// SPDX-License-Identifier: GPL-2.0
/*
 * The checks of a numaplace answer against the oracles (np_test.h,
 * "Comparisons"): statuses, totals, runs, kinds, the array modes and the
 * resumption of a range, each returning its number of mismatches. Part
 * of the tests' library, like np_test.c.
 */
#include <sys/mman.h>

#include "np_test.h"

int np_all_bytes(const void *p, size_t len, unsigned char b)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < len; i++)
		if (c[i] != b)
			return 0;
	return 1;
}

void np_log_start(struct np_ctx *c)
{
	c->logged = 0;
}

int np_log_end(struct np_ctx *c, const char *what, int bad)
{
	if (c->logged > NP_LOG_MAX)
		fprintf(stderr, "# %s: %d mismatches in all\n", what, bad);
	c->logged = 0;
	return bad;
}

int np_cmp_status(struct np_ctx *c, const char *what,
		  const __u64 *addrs, const int *exp,
		  const __s32 *got, size_t n,
		  const struct np_page *pg)
{
	char buf[200];
	int bad = 0;

	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		if (exp[i] == got[i] ||
		    (exp[i] == NP_ANY && (got[i] == -EFAULT ||
					  got[i] == -ENOENT)))
			continue;
		bad++;
		np_log(c, "%s: [%zu] %#llx: expected %d, got %d %s", what, i,
		       (unsigned long long)addrs[i], exp[i], got[i],
		       pg ? np_page_str(&pg[i], buf, sizeof(buf)) : "");
	}
	return np_log_end(c, what, bad);
}

int np_check_totals(struct np_ctx *c, const char *what,
		    const struct numaplace_query *q,
		    const __s32 *status, size_t n,
		    const __u64 *node_pages)
{
	__u64 unplaced = 0, *cnt = calloc(c->nr_nodes + 1, sizeof(*cnt));
	int bad = 0;

	if (!cnt)
		return 1;
	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		if (status[i] < 0)
			unplaced++;
		else if ((__u32)status[i] < c->nr_nodes)
			cnt[status[i]]++;
		else
			cnt[c->nr_nodes]++;
	}
	if (cnt[c->nr_nodes]) {
		bad++;
		np_log(c, "%s: %llu statuses name a node >= nr_node_ids %u",
		       what, (unsigned long long)cnt[c->nr_nodes], c->nr_nodes);
	}
	if (q->nr_unplaced != unplaced) {
		bad++;
		np_log(c, "%s: nr_unplaced %llu, status says %llu", what,
		       (unsigned long long)q->nr_unplaced,
		       (unsigned long long)unplaced);
	}
	for (__u32 nd = 0; node_pages && nd < c->nr_nodes; nd++) {
		if (node_pages[nd] == cnt[nd])
			continue;
		bad++;
		np_log(c, "%s: node_pages[%u] %#llx, status says %llu", what,
		       nd, (unsigned long long)node_pages[nd],
		       (unsigned long long)cnt[nd]);
	}
	free(cnt);
	return np_log_end(c, what, bad);
}

int np_check_runs(struct np_ctx *c, const char *what,
		  const struct numaplace_query *q,
		  const struct numaplace_run *runs, __u64 start,
		  const __s32 *status, __u32 *kinds)
{
	__u64 at = start & ~(__u64)(c->psz - 1), page = 0;
	int bad = 0;

	np_log_start(c);
	if (q->nr_runs > q->runs_cap) {
		np_log(c, "%s: nr_runs %u > runs_cap %u", what, q->nr_runs,
		       q->runs_cap);
		return 1;
	}
	for (__u32 r = 0; r < q->nr_runs; r++) {
		const struct numaplace_run *x = &runs[r];

		if (x->start != at || !x->nr_pages ||
		    x->nr_pages > q->done - page) {
			np_log(c, "%s: run %u {%#llx, %llu pages} after %llu of %llu pages at %#llx",
			       what, r, (unsigned long long)x->start,
			       (unsigned long long)x->nr_pages,
			       (unsigned long long)page,
			       (unsigned long long)q->done,
			       (unsigned long long)at);
			return np_log_end(c, what, bad + 1);
		}
		if (r && x->node == x[-1].node && x->kind == x[-1].kind) {
			bad++;
			np_log(c, "%s: runs %u and %u both node %d kind %#x",
			       what, r - 1, r, x->node, x->kind);
		}
		for (__u64 i = 0; i < x->nr_pages; i++, page++) {
			if (kinds)
				kinds[page] = x->kind;
			if (status && status[page] != x->node) {
				bad++;
				np_log(c, "%s: page %llu: run %u node %d, status %d",
				       what, (unsigned long long)page, r,
				       x->node, status[page]);
			}
		}
		at += x->nr_pages * c->psz;
	}
	if (page != q->done) {
		bad++;
		np_log(c, "%s: runs cover %llu pages, done %llu", what,
		       (unsigned long long)page, (unsigned long long)q->done);
	}
	return np_log_end(c, what, bad);
}

int np_check_kinds(struct np_ctx *c, const char *what,
		   const __u64 *addrs, const struct np_page *pg,
		   const __u32 *kinds, const __s32 *status,
		   size_t n)
{
	static const struct { __u32 w, k; } need[] = {
		{ NPW_NOVMA, NUMAPLACE_KIND_NOVMA },
		{ NPW_HOLE, NUMAPLACE_KIND_NONE },
		{ NPW_SWAP, NUMAPLACE_KIND_SWAP },
		{ NPW_ZERO, NUMAPLACE_KIND_ZERO },
		{ NPW_PMD, NUMAPLACE_KIND_PMD },
		{ NPW_PROTNONE, NUMAPLACE_KIND_PROTNONE },
		{ NPW_SPECIAL, NUMAPLACE_KIND_SPECIAL },
		{ NPW_HUGETLB, NUMAPLACE_KIND_HUGETLB },
		{ NPW_ANON, NUMAPLACE_KIND_ANON },
		{ NPW_FILE, NUMAPLACE_KIND_FILE },
	};
	char buf[200];
	int bad = 0;

	np_log_start(c);
	for (size_t i = 0; i < n; i++) {
		__u32 w = pg[i].what, k = kinds[i], miss = 0, extra = 0;

		for (size_t j = 0; j < sizeof(need) / sizeof(need[0]); j++)
			if ((w & need[j].w) && !(k & need[j].k))
				miss |= need[j].k;
		/* A PFN map: a special entry or none, the model can't see. */
		if ((w & NPW_PFNMAP) &&
		    !(k & (NUMAPLACE_KIND_SPECIAL | NUMAPLACE_KIND_NONE)))
			miss |= NUMAPLACE_KIND_SPECIAL;
		/* Kinds that would claim what is not there. */
		if (!(w & NPW_NOVMA))
			extra |= k & NUMAPLACE_KIND_NOVMA;
		if (!(w & (NPW_HOLE | NPW_PFNMAP)))
			extra |= k & NUMAPLACE_KIND_NONE;
		if (!(w & NPW_PMD))
			extra |= k & NUMAPLACE_KIND_PMD;
		if (w & (NPW_HOLE | NPW_NOVMA | NPW_SWAP))
			extra |= k & (NUMAPLACE_KIND_PRESENT |
				      NUMAPLACE_KIND_ZERO |
				      NUMAPLACE_KIND_PMD);
		if (status[i] >= 0 && !(k & NUMAPLACE_KIND_PRESENT))
			miss |= NUMAPLACE_KIND_PRESENT;
		if (!miss && !extra)
			continue;
		bad++;
		np_log(c, "%s: [%zu] %#llx: kind %#x lacks %#x, has wrong %#x %s",
		       what, i, (unsigned long long)addrs[i], k, miss, extra,
		       np_page_str(&pg[i], buf, sizeof(buf)));
	}
	snprintf(buf, sizeof(buf), "%s kinds", what);
	return np_log_end(c, buf, bad);
}

int np_expect(const struct np_ctx *c, const struct np_page *pg,
	      const int *sys, __u32 flags)
{
	if (flags & NUMAPLACE_QUERY_AS_SYSCALL)
		return *sys;
	return pg->st_new;
}

/*
 * Before a query of @n entries: the sentinels in status[0..@n] and
 * node_pages[0..nr_nodes], one past each end, that np_done_in_bounds()
 * looks for.
 */
static void np_fill_sentinels(const struct np_ctx *c, __s32 *st, size_t n,
			      __u64 *np)
{
	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	for (__u32 i = 0; i <= c->nr_nodes; i++)
		np[i] = NP_NODE_FILL;
}

/*
 * 1 (logged) unless the query answered all @n entries and wrote neither
 * status[@n] nor node_pages[nr_nodes], the sentinels past the ends.
 */
static int np_done_in_bounds(struct np_ctx *c, const char *what,
			     const struct numaplace_query *q, size_t n,
			     const __s32 *st, const __u64 *np)
{
	if (q->done == n && st[n] == NP_SENTINEL &&
	    np[c->nr_nodes] == NP_NODE_FILL)
		return 0;
	np_log(c, "%s: done %llu of %zu, or a write past a buffer", what,
	       (unsigned long long)q->done, n);
	return 1;
}

int np_check_array_modes(struct np_ctx *c, const char *label,
			 const __u64 *addrs, size_t n,
			 const struct np_page *pg,
			 const int *sys)
{
	static const __u32 modes[] = { 0, NUMAPLACE_QUERY_AS_SYSCALL };
	__u64 *np = malloc((c->nr_nodes + 1) * sizeof(*np));
	__s32 *st = malloc((n + 1) * sizeof(*st));
	int *exp = malloc((n + 1) * sizeof(*exp));
	struct numaplace_query q;
	char what[96];
	int bad = 0, ret;

	if (!np || !st || !exp) {
		free(np);
		free(st);
		free(exp);
		return 1;
	}
	for (size_t m = 0; m < 2; m++) {
		snprintf(what, sizeof(what), "%s array%s", label,
			 modes[m] ? " as_syscall" : "");
		np_fill_sentinels(c, st, n, np);
		ret = np_query_array(c->fd, c->pid, modes[m], addrs, n, st, np,
				     c->nr_nodes, &q);
		if (ret) {
			np_log(c, "%s: ioctl %d (%s)", what, ret, strerror(-ret));
			bad++;
			continue;
		}
		bad += np_done_in_bounds(c, what, &q, n, st, np);
		for (size_t i = 0; i < n; i++)
			exp[i] = np_expect(c, &pg[i], &sys[i], modes[m]);
		bad += np_cmp_status(c, what, addrs, exp, st, n, pg);
		bad += np_check_totals(c, what, &q, st, n, np);
	}
	free(np);
	free(st);
	free(exp);
	return bad;
}

int np_oracles(struct np_ctx *c, const __u64 *addrs, size_t n,
	       struct np_page *pg, int *sys)
{
	struct np_model m;
	long ret;

	ret = np_model_open(&m, c->pid);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++)
		np_model_page(&m, addrs[i], &pg[i]);
	np_model_close(&m);
	ret = np_sys_query(c->pid, n, addrs, sys);
	return ret > 0 ? -EIO : ret;
}

int np_check_model(struct np_ctx *c, const char *label,
		   const __u64 *addrs, size_t n,
		   const struct np_page *pg, const int *sys)
{
	int *exp = malloc(n * sizeof(*exp) + 1), bad;
	char what[96];

	if (!exp)
		return 1;
	for (size_t i = 0; i < n; i++)
		exp[i] = c->new_kernel ? pg[i].st_new : pg[i].st_old;
	snprintf(what, sizeof(what), "%s: syscall vs model (a test bug)",
		 label);
	bad = np_cmp_status(c, what, addrs, exp, sys, n, pg);
	free(exp);
	return bad;
}

int np_check_addrs(struct np_ctx *c, const char *label,
		   const __u64 *addrs, size_t n)
{
	struct np_page *pg = calloc(n + 1, sizeof(*pg));
	int *sys = calloc(n + 1, sizeof(*sys)), bad, ret;

	if (!pg || !sys) {
		free(pg);
		free(sys);
		return 1;
	}
	ret = np_oracles(c, addrs, n, pg, sys);
	if (ret) {
		np_log(c, "%s: oracle failed: %d (%s)", label, ret,
		       strerror(-ret));
		free(pg);
		free(sys);
		return 1;
	}
	bad = np_check_model(c, label, addrs, n, pg, sys);
	bad += np_check_array_modes(c, label, addrs, n, pg, sys);
	free(pg);
	free(sys);
	return bad;
}

int np_check_range(struct np_ctx *c, const char *label,
		   unsigned long base, size_t npages,
		   __s32 *dflt)
{
	static const __u32 modes[] = { 0, NUMAPLACE_QUERY_AS_SYSCALL };
	size_t n = npages;
	__u64 *addrs = calloc(n + 1, sizeof(*addrs));
	__u64 *np = malloc((c->nr_nodes + 1) * sizeof(*np));
	struct numaplace_run *runs = calloc(n + 2, sizeof(*runs));
	struct np_page *pg = calloc(n + 1, sizeof(*pg));
	__s32 *st = malloc((n + 1) * sizeof(*st));
	__u32 *kinds = calloc(n + 1, sizeof(*kinds));
	int *sys = calloc(n + 1, sizeof(*sys));
	int *exp = calloc(n + 1, sizeof(*exp));
	struct numaplace_query q;
	int bad = 0, ret;
	char what[96];

	if (!addrs || !np || !runs || !pg || !st || !kinds || !sys || !exp) {
		bad = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		addrs[i] = base + i * c->psz;
	ret = np_oracles(c, addrs, n, pg, sys);
	if (ret) {
		np_log(c, "%s: oracle failed: %d (%s)", label, ret,
		       strerror(-ret));
		bad = 1;
		goto out;
	}
	bad += np_check_model(c, label, addrs, n, pg, sys);

	for (size_t m = 0; m < 2; m++) {
		snprintf(what, sizeof(what), "%s range%s", label,
			 modes[m] ? " as_syscall" : "");
		np_fill_sentinels(c, st, n, np);
		memset(runs, 0xa5, (n + 2) * sizeof(*runs));
		ret = np_query_range(c->fd, c->pid, modes[m], base,
				     n * c->psz, runs, n + 1, st, np,
				     c->nr_nodes, &q);
		if (ret) {
			np_log(c, "%s: ioctl %d (%s)", what, ret, strerror(-ret));
			bad++;
			continue;
		}
		if (np_done_in_bounds(c, what, &q, n, st, np)) {
			bad++;
			continue;
		}
		for (size_t i = 0; i < n; i++)
			exp[i] = np_expect(c, &pg[i], &sys[i], modes[m]);
		bad += np_cmp_status(c, what, addrs, exp, st, n, pg);
		bad += np_check_runs(c, what, &q, runs, base, st, kinds);
		bad += np_check_totals(c, what, &q, st, n, np);
		if (q.nr_runs <= n + 1 &&
		    !np_all_bytes(&runs[q.nr_runs], sizeof(*runs), 0xa5)) {
			np_log(c, "%s: a run written past nr_runs %u", what,
			       q.nr_runs);
			bad++;
		}
		bad += np_check_kinds(c, what, addrs, pg, kinds, st, n);
		if (!modes[m] && dflt)
			memcpy(dflt, st, n * sizeof(*st));
	}

	/* Array mode on the same pages, each address inside its page. */
	for (size_t i = 0; i < n; i++)
		addrs[i] += (i * 2654435761UL) % c->psz;
	bad += np_check_array_modes(c, label, addrs, n, pg, sys);
out:
	free(addrs);
	free(np);
	free(runs);
	free(pg);
	free(st);
	free(kinds);
	free(sys);
	free(exp);
	return bad;
}

int np_check_resume(struct np_ctx *c, const char *label,
		    unsigned long base, size_t npages,
		    __u32 cap, __u32 flags, const __s32 *exp)
{
	struct numaplace_run *runs = calloc(cap + 1, sizeof(*runs));
	__u64 *np = malloc((c->nr_nodes + 1) * sizeof(*np));
	__s32 *st = malloc((npages + 1) * sizeof(*st));
	__u64 *addrs = malloc((npages + 1) * sizeof(*addrs));
	size_t done = 0, calls = 0;
	struct numaplace_query q;
	int bad = 0, ret;
	char what[96];

	if (!runs || !np || !st || !addrs) {
		bad = 1;
		goto out;
	}
	for (size_t i = 0; i <= npages; i++) {
		st[i] = NP_SENTINEL;
		addrs[i] = base + i * c->psz;
	}
	while (done < npages) {
		unsigned long at = base + done * c->psz;

		snprintf(what, sizeof(what), "%s resume cap %u%s call %zu",
			 label, cap,
			 flags & NUMAPLACE_QUERY_AS_SYSCALL ? " as_syscall" :
			 "", calls);
		if (++calls > npages + 1) {
			np_log(c, "%s: no end after %zu calls", what, calls);
			bad++;
			break;
		}
		for (__u32 i = 0; i <= c->nr_nodes; i++)
			np[i] = NP_NODE_FILL;
		memset(runs, 0xa5, (cap + 1) * sizeof(*runs));
		ret = np_query_range(c->fd, c->pid, flags, at,
				     (npages - done) * c->psz, runs, cap,
				     st + done, np, c->nr_nodes, &q);
		if (ret) {
			np_log(c, "%s: ioctl %d (%s)", what, ret,
			       strerror(-ret));
			bad++;
			break;
		}
		if (!q.done || q.done > npages - done ||
		    (q.done < npages - done && q.nr_runs != cap)) {
			np_log(c, "%s: done %llu of %zu with %u of %u runs",
			       what, (unsigned long long)q.done,
			       npages - done, q.nr_runs, cap);
			bad++;
			break;
		}
		bad += np_check_runs(c, what, &q, runs, at, st + done, NULL);
		bad += np_check_totals(c, what, &q, st + done, q.done, np);
		if (!np_all_bytes(&runs[cap], sizeof(*runs), 0xa5)) {
			np_log(c, "%s: wrote past runs_cap", what);
			bad++;
		}
		done += q.done;
	}
	if (done == npages) {
		snprintf(what, sizeof(what), "%s resume cap %u%s", label, cap,
			 flags & NUMAPLACE_QUERY_AS_SYSCALL ? " as_syscall" :
			 "");
		bad += np_cmp_status(c, what, addrs, exp, st, npages, NULL);
	}
out:
	free(runs);
	free(np);
	free(st);
	free(addrs);
	return bad;
}

int np_ctx_init(struct np_ctx *c, int fd, int pid)
{
	struct numaplace_info info;
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->pid = pid;
	c->psz = sysconf(_SC_PAGESIZE);
	c->new_kernel = np_kernel_is_new();
	ret = np_get_info(fd, &info);
	if (ret)
		return ret;
	c->nr_nodes = info.nr_node_ids;
	return c->new_kernel < 0 ? -EINVAL : 0;
}
