// SPDX-License-Identifier: GPL-2.0
/*
 * The queriers of the NUMAPLACE_IOC_QUERY races (qrace.h) and the rules
 * every answer must keep, whatever the timing (query_race.c's comment
 * lists them).
 */
#include <limits.h>
#include <stdarg.h>

#include "qrace.h"

long qr_psz;

const enum qr_qtype qr_all_q[QR_NQ] = {
	QR_Q_RANGE, QR_Q_RESUME, QR_Q_ARRAY, QR_Q_HUGE,
};

long qr_race_ms(void)
{
	const char *e = getenv("NP_RACE_MS");
	long ms = e ? strtol(e, NULL, 0) : 0;

	return ms > 0 ? ms : QR_RACE_MS;
}

int qr_stopped(struct qr_ctx *x)
{
	return __atomic_load_n(&x->stop, __ATOMIC_RELAXED);
}

void qr_log(struct qr_ctx *x, unsigned long *counter, const char *fmt,
	    ...)
{
	unsigned long n = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
	char buf[320];
	va_list ap;

	if (n >= QR_LOG_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# %s\n", buf);
}


/* ---- checks ------------------------------------------------------- */

/* Why run @r breaks a rule, or NULL. @legacy: 6.1's AS_SYSCALL answers. */
static const char *qr_run_rule(const struct qr_ctx *x,
			       const struct numaplace_run *r, int legacy)
{
	__u32 k = r->kind, s = k & QR_STATES;
	int node = r->node;

	if (k & ~QR_KINDS)
		return "unknown kind bit";
	if (__builtin_popcount(s) > 1)
		return "two page states in one run";
	/* Only 6.1's PROT_NONE answers take PRESENT away with no state. */
	if (!s && !(legacy && (k & NUMAPLACE_KIND_PROTNONE)))
		return "no page state";
	if (!!(k & NUMAPLACE_KIND_PRESENT) != (node >= 0))
		return "PRESENT and a node disagree";
	if (node >= 0 && ((__u32)node >= x->nr_nodes ||
			  !np_node_isset(x->node_memory, node)))
		return "a node without memory";
	if (node < 0 && node != -ENOENT && node != -EFAULT)
		return "status neither a node, -ENOENT nor -EFAULT";
	if ((k & NUMAPLACE_KIND_NOVMA) &&
	    (k != NUMAPLACE_KIND_NOVMA || node != -EFAULT))
		return "NOVMA with other kinds, or not -EFAULT";
	if (!(k & NUMAPLACE_KIND_NOVMA) &&
	    __builtin_popcount(k & (NUMAPLACE_KIND_ANON | NUMAPLACE_KIND_FILE)) != 1)
		return "in a VMA but not one of ANON / FILE";
	if ((k & NUMAPLACE_KIND_HUGETLB) && !(k & NUMAPLACE_KIND_FILE))
		return "HUGETLB not FILE";
	if ((k & NUMAPLACE_KIND_PMD) && (k & NUMAPLACE_KIND_PUD))
		return "PMD and PUD";
	if ((k & (NUMAPLACE_KIND_PMD | NUMAPLACE_KIND_PUD)) &&
	    (k & (NUMAPLACE_KIND_NONE | NUMAPLACE_KIND_NOVMA)))
		return "a huge entry on a hole";
	if ((k & (NUMAPLACE_KIND_YOUNG | NUMAPLACE_KIND_DIRTY)) &&
	    (!(k & NUMAPLACE_KIND_PRESENT) || (k & NUMAPLACE_KIND_PROTNONE)))
		return "access bits on no present page, or on a PROT_NONE one";
	if (legacy)
		return NULL;
	if ((k & NUMAPLACE_KIND_ZERO) && node != -EFAULT)
		return "zero page not -EFAULT";
	if (node == -EFAULT &&
	    !(k & (NUMAPLACE_KIND_NOVMA | NUMAPLACE_KIND_ZERO)))
		return "-EFAULT in a VMA for no zero page";
	if ((k & (NUMAPLACE_KIND_NONE | NUMAPLACE_KIND_SWAP |
		  NUMAPLACE_KIND_MIGRATION | NUMAPLACE_KIND_OTHER |
		  NUMAPLACE_KIND_SPECIAL)) && node != -ENOENT)
		return "nothing there but not -ENOENT";
	return NULL;
}

static int qr_status_ok(const struct qr_ctx *x, __s32 s)
{
	if (s >= 0)
		return (__u32)s < x->nr_nodes && np_node_isset(x->node_memory, s);
	return s == -ENOENT || s == -EFAULT;
}

/* The node a stable page must answer, or INT_MIN if @addr is not one. */
static int qr_stable_node(const struct qr_ctx *x, unsigned long addr)
{
	unsigned long i = (addr - x->stable) / x->psz;

	if (!x->stable_ok || addr < x->stable || i >= QR_STABLE)
		return INT_MIN;
	return x->stable_node[i];
}

/* THPs split so far (/proc/vmstat thp_split_page), or -1. */
long qr_thp_splits(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/vmstat", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "thp_split_page %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/*
 * The runs of one range call from @start: structure, rules, each page's
 * status, stable pages, no zero page where none can be. 0 or 1.
 */
int qr_check_runs(struct qr_ctx *x, const char *what,
		  const struct numaplace_query *q,
		  const struct numaplace_run *runs, __u32 cap,
		  unsigned long start, const __s32 *st, int legacy)
{
	unsigned long at = start, page = 0;
	const char *why;

	if (q->nr_runs > cap) {
		qr_bad(x, "%s: nr_runs %u > cap %u", what, q->nr_runs, cap);
		return 1;
	}
	for (__u32 r = 0; r < q->nr_runs; r++) {
		const struct numaplace_run *y = &runs[r];
		unsigned long end;

		if (y->start != at || !y->nr_pages ||
		    y->nr_pages > q->done - page) {
			qr_bad(x, "%s: run %u {%#llx, %llu} at page %lu of %llu (%#lx)",
			       what, r, (unsigned long long)y->start,
			       (unsigned long long)y->nr_pages, page,
			       (unsigned long long)q->done, at);
			return 1;
		}
		if (r && y->node == y[-1].node && y->kind == y[-1].kind) {
			qr_bad(x, "%s: runs %u, %u both node %d kind %#x", what,
			       r - 1, r, y->node, y->kind);
			return 1;
		}
		why = qr_run_rule(x, y, legacy);
		if (why) {
			qr_bad(x, "%s: run %u {%#llx, %llu pages} node %d kind %#x: %s",
			       what, r, (unsigned long long)y->start,
			       (unsigned long long)y->nr_pages, y->node,
			       y->kind, why);
			return 1;
		}
		end = at + y->nr_pages * x->psz;
		if ((y->kind & NUMAPLACE_KIND_ZERO) && at < x->zhi &&
		    end > x->zlo && qr_thp_splits() == x->splits0) {
			qr_bad(x, "%s: run %u {%#llx, %llu pages} kind %#x: the zero page in memory only ever written",
			       what, r, (unsigned long long)y->start,
			       (unsigned long long)y->nr_pages, y->kind);
			return 1;
		}
		for (__u64 i = 0; i < y->nr_pages; i++, page++) {
			unsigned long a = at + i * x->psz;
			int sn = qr_stable_node(x, a);

			if (st && st[page] != y->node) {
				qr_bad(x, "%s: page %lu (%#lx): run %u node %d, status %d",
				       what, page, a, r, y->node, st[page]);
				return 1;
			}
			/* Compaction may migrate it: a migration entry. */
			if (sn != INT_MIN && y->node != sn &&
			    !(y->kind & NUMAPLACE_KIND_MIGRATION)) {
				qr_bad(x, "%s: stable page %#lx: node %d kind %#x, it is on node %d",
				       what, a, y->node, y->kind, sn);
				return 1;
			}
		}
		at = end;
	}
	if (page != q->done) {
		qr_bad(x, "%s: runs cover %lu pages, done %llu", what, page,
		       (unsigned long long)q->done);
		return 1;
	}
	return 0;
}

/* Totals against @n statuses, or (@st NULL) against done. 0 or 1. */
int qr_check_totals(struct qr_ctx *x, const char *what,
		    const struct numaplace_query *q, const __s32 *st,
		    size_t n, const __u64 *np)
{
	__u64 cnt[NUMAPLACE_MAX_NODES] = { 0 }, unplaced = 0, sum = 0;

	if (np[x->nr_nodes] != NP_NODE_FILL) {
		qr_bad(x, "%s: node_pages written past node_pages_len", what);
		return 1;
	}
	if (!st) {
		for (__u32 i = 0; i < x->nr_nodes; i++) {
			sum += np[i];
			if (np[i] && !np_node_isset(x->node_memory, i)) {
				qr_bad(x, "%s: %llu pages on node %u without memory",
				       what, (unsigned long long)np[i], i);
				return 1;
			}
		}
		if (sum + q->nr_unplaced != q->done) {
			qr_bad(x, "%s: node pages %llu + unplaced %llu != done %llu",
			       what, (unsigned long long)sum,
			       (unsigned long long)q->nr_unplaced,
			       (unsigned long long)q->done);
			return 1;
		}
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (st[i] < 0)
			unplaced++;
		else if ((__u32)st[i] < x->nr_nodes)
			cnt[st[i]]++;
	}
	if (q->nr_unplaced != unplaced) {
		qr_bad(x, "%s: nr_unplaced %llu, statuses say %llu", what,
		       (unsigned long long)q->nr_unplaced,
		       (unsigned long long)unplaced);
		return 1;
	}
	for (__u32 i = 0; i < x->nr_nodes; i++) {
		if (np[i] != cnt[i]) {
			qr_bad(x, "%s: node_pages[%u] %llu, statuses say %llu",
			       what, i, (unsigned long long)np[i],
			       (unsigned long long)cnt[i]);
			return 1;
		}
	}
	return 0;
}

/* ---- queriers ----------------------------------------------------- */

static int qr_pid(struct qr_q *qq)
{
	struct qr_ctx *x = qq->x;
	int pid = __atomic_load_n(&x->pid, __ATOMIC_RELAXED);

	/* Self by pid 0 and by its own pid (the ptrace path). */
	if (!pid && !x->child && (qq->calls & 2))
		return x->self_pid;
	return pid;
}

static __u32 qr_flags(struct qr_q *qq)
{
	return qq->calls & 1 ? NUMAPLACE_QUERY_AS_SYSCALL : 0;
}

/* Range mode: also the access scan, clearing, every other pair of calls. */
static __u32 qr_range_flags(struct qr_q *qq)
{
	return qr_flags(qq) | (qq->calls & 4 ? qq->x->access_flags : 0);
}

/* 1 when the call may go on to the checks. */
static int qr_ret(struct qr_q *qq, const char *what, int ret)
{
	struct qr_ctx *x = qq->x;

	if (!ret)
		return 1;
	if (x->child && (ret == -ESRCH || ret == -EINVAL))
		return 0;
	qr_bad(x, "%s: ioctl %d (%s)", what, ret, strerror(-ret));
	return 0;
}

static void qr_fill_np(struct qr_ctx *x, __u64 *np)
{
	for (__u32 i = 0; i <= x->nr_nodes; i++)
		np[i] = NP_NODE_FILL;
}

static void qr_one_range(struct qr_q *qq)
{
	struct qr_ctx *x = qq->x;
	size_t n = x->qpages;
	__u32 flags = qr_range_flags(qq);
	int legacy = (flags & NUMAPLACE_QUERY_AS_SYSCALL) && !x->new_kernel;
	struct numaplace_query q;
	const char *what = flags & NUMAPLACE_QUERY_AS_SYSCALL ?
			   "range as_syscall" : "range";
	int ret;

	for (size_t i = 0; i <= n; i++)
		qq->st[i] = NP_SENTINEL;
	qr_fill_np(x, qq->np);
	memset(qq->runs, 0xa5, (n + 1) * sizeof(*qq->runs));
	ret = np_query_range(x->fd, qr_pid(qq), flags, x->qstart, n * x->psz,
			     qq->runs, n, qq->st, qq->np, x->nr_nodes, &q);
	if (!qr_ret(qq, what, ret))
		return;
	if (q.done != n) {
		qr_bad(x, "%s: done %llu of %zu", what,
		       (unsigned long long)q.done, n);
		return;
	}
	if (qq->st[n] != NP_SENTINEL ||
	    !np_all_bytes(&qq->runs[q.nr_runs], sizeof(*qq->runs), 0xa5)) {
		qr_bad(x, "%s: a status or run written past the end", what);
		return;
	}
	if (qr_check_runs(x, what, &q, qq->runs, n, x->qstart, qq->st, legacy))
		return;
	qr_check_totals(x, what, &q, qq->st, n, qq->np);
	qq->answered += q.done;
}

static void qr_one_resume(struct qr_q *qq)
{
	static const __u32 caps[] = { 1, 2, 3, 7, 16, 17 };
	struct qr_ctx *x = qq->x;
	__u32 cap = caps[rand_r(&qq->seed) % 6];
	size_t n = x->qpages, done = 0, calls = 0;
	__u32 flags = qr_range_flags(qq);
	int legacy = (flags & NUMAPLACE_QUERY_AS_SYSCALL) && !x->new_kernel;
	int pid = qr_pid(qq), ret;
	struct numaplace_query q;
	char what[64];

	for (size_t i = 0; i <= n; i++)
		qq->st[i] = NP_SENTINEL;
	while (done < n && !qr_stopped(x)) {
		unsigned long at = x->qstart + done * x->psz;

		snprintf(what, sizeof(what), "resume cap %u%s call %zu", cap,
			 flags & NUMAPLACE_QUERY_AS_SYSCALL ? " as_syscall" : "", calls);
		if (++calls > n + 1) {
			qr_bad(x, "%s: no end", what);
			return;
		}
		qr_fill_np(x, qq->np);
		memset(qq->runs, 0xa5, (cap + 1) * sizeof(*qq->runs));
		ret = np_query_range(x->fd, pid, flags, at, (n - done) * x->psz,
				     qq->runs, cap, qq->st + done, qq->np,
				     x->nr_nodes, &q);
		if (!qr_ret(qq, what, ret))
			return;
		if (!q.done || q.done > n - done ||
		    (q.done < n - done && q.nr_runs != cap)) {
			qr_bad(x, "%s: done %llu of %zu with %u of %u runs", what,
			       (unsigned long long)q.done, n - done, q.nr_runs,
			       cap);
			return;
		}
		if (qq->st[done + q.done] != NP_SENTINEL) {
			qr_bad(x, "%s: status written past done %llu", what,
			       (unsigned long long)q.done);
			return;
		}
		if (!np_all_bytes(&qq->runs[cap], sizeof(*qq->runs), 0xa5)) {
			qr_bad(x, "%s: run written past runs_cap", what);
			return;
		}
		if (qr_check_runs(x, what, &q, qq->runs, cap, at, qq->st + done,
				  legacy) ||
		    qr_check_totals(x, what, &q, qq->st + done, q.done, qq->np))
			return;
		done += q.done;
		qq->answered += q.done;
	}
}

static void qr_one_array(struct qr_q *qq)
{
	static const __u64 nowhere[] = {
		0, 4096, 0xffff800000000000ULL, 0xfffffffffffff000ULL,
		0xffffffffff600000ULL, 1ULL << 47, ~0ULL,
	};
	struct qr_ctx *x = qq->x;
	size_t m = QR_ARRAY_N, nn = ARRAY_SIZE(nowhere);
	__u32 flags = qr_flags(qq);
	const char *what = flags ? "array as_syscall" : "array";
	struct numaplace_query q;
	__u64 *a = qq->addrs;
	int ret;

	for (size_t i = 0; i < m; i++) {
		unsigned int r = rand_r(&qq->seed) % 100;
		unsigned long off = rand_r(&qq->seed) % x->psz;

		if (r < 4)
			a[i] = nowhere[rand_r(&qq->seed) % nn];
		else if (r < 14 && i)
			a[i] = a[rand_r(&qq->seed) % i];
		else if (r < 24 && x->stable_ok)
			a[i] = x->stable +
			       (rand_r(&qq->seed) % QR_STABLE) * x->psz + off;
		else if (r < 60 && i && a[i - 1] >= x->qstart &&
			 a[i - 1] < x->qstart + (x->qpages - 1) * x->psz)
			a[i] = (a[i - 1] & ~(__u64)(x->psz - 1)) + x->psz + off;
		else
			a[i] = x->qstart +
			       (rand_r(&qq->seed) % x->qpages) * x->psz + off;
	}
	for (size_t i = 0; i <= m; i++)
		qq->st[i] = NP_SENTINEL;
	qr_fill_np(x, qq->np);
	ret = np_query_array(x->fd, qr_pid(qq), flags, a, m, qq->st, qq->np,
			     x->nr_nodes, &q);
	if (!qr_ret(qq, what, ret))
		return;
	if (q.done != m || qq->st[m] != NP_SENTINEL) {
		qr_bad(x, "%s: done %llu of %zu, or a status past the end",
		       what, (unsigned long long)q.done, m);
		return;
	}
	for (size_t i = 0; i < m; i++) {
		int sn = qr_stable_node(x, a[i]);

		if (!qr_status_ok(x, qq->st[i])) {
			qr_bad(x, "%s: [%zu] %#llx: status %d", what, i,
			       (unsigned long long)a[i], qq->st[i]);
			return;
		}
		if (a[i] < 65536 || a[i] >= (1ULL << 47)) {
			if (qq->st[i] != -EFAULT) {
				qr_bad(x, "%s: [%zu] %#llx (no VMA there): status %d",
				       what, i, (unsigned long long)a[i],
				       qq->st[i]);
				return;
			}
		} else if (sn != INT_MIN && qq->st[i] != sn) {
			qr_bad(x, "%s: [%zu] stable page %#llx: status %d, it is on node %d",
			       what, i, (unsigned long long)a[i], qq->st[i], sn);
			return;
		}
	}
	qr_check_totals(x, what, &q, qq->st, m, qq->np);
	qq->answered += q.done;
}

static void qr_one_huge(struct qr_q *qq)
{
	struct qr_ctx *x = qq->x;
	__u32 flags = qr_range_flags(qq);
	const char *what = flags & NUMAPLACE_QUERY_AS_SYSCALL ?
			   "huge range as_syscall" : "huge range";
	struct numaplace_query q;
	int ret;

	qr_fill_np(x, qq->np);
	ret = np_query_range(x->fd, qr_pid(qq), flags, QR_HUGE_START,
			     QR_HUGE_LEN, NULL, 0, NULL, qq->np, x->nr_nodes,
			     &q);
	if (!qr_ret(qq, what, ret))
		return;
	if (q.done != QR_HUGE_LEN / x->psz || q.nr_runs) {
		qr_bad(x, "%s: done %llu, nr_runs %u", what,
		       (unsigned long long)q.done, q.nr_runs);
		return;
	}
	qr_check_totals(x, what, &q, NULL, 0, qq->np);
	qq->answered += q.done;
}

void *qr_querier(void *arg)
{
	struct qr_q *qq = arg;

	while (!qr_stopped(qq->x)) {
		switch (qq->type) {
		case QR_Q_RANGE:
			qr_one_range(qq);
			break;
		case QR_Q_RESUME:
			qr_one_resume(qq);
			break;
		case QR_Q_ARRAY:
			qr_one_array(qq);
			break;
		case QR_Q_HUGE:
			qr_one_huge(qq);
			break;
		}
		qq->calls++;
	}
	return NULL;
}

int qr_q_alloc(struct qr_q *qq, struct qr_ctx *x, enum qr_qtype type,
	       unsigned int seed)
{
	size_t n = x->qpages > QR_ARRAY_N ? x->qpages : QR_ARRAY_N;

	memset(qq, 0, sizeof(*qq));
	qq->x = x;
	qq->type = type;
	qq->seed = seed;
	qq->runs = calloc(n + 2, sizeof(*qq->runs));
	qq->st = calloc(n + 2, sizeof(*qq->st));
	qq->np = calloc(NUMAPLACE_MAX_NODES + 1, sizeof(*qq->np));
	qq->addrs = calloc(QR_ARRAY_N + 1, sizeof(*qq->addrs));
	return qq->runs && qq->st && qq->np && qq->addrs ? 0 : -ENOMEM;
}

void qr_q_free(struct qr_q *qq)
{
	free(qq->runs);
	free(qq->st);
	free(qq->np);
	free(qq->addrs);
}
