// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_QUERY under races. Querier threads ask about one region
 * in a loop (range mode with runs, status and totals, range mode resumed
 * through tiny runs buffers, array mode, whole-address-space totals)
 * while mutator threads change the region under them: mmap/munmap of its
 * pieces, mremap (MAYMOVE | FIXED, DONTUNMAP, in-place shrink and grow),
 * mprotect toggling PROT_NONE, MADV_DONTNEED / FREE, MADV_PAGEOUT (the
 * suite runs with zram swap), MADV_COLLAPSE and khugepaged on anonymous
 * memory and on shmem mapped twice (6.12 frees the PTE tables of both
 * under RCU), THP splits by partial mprotect / munmap / hole punching,
 * hugetlb faults and zaps, fork with children that write and exit. Other
 * tests query a child that exits or is killed mid-query, and SIGKILL a
 * process inside huge range queries.
 *
 * Every answer is checked for what must hold whatever the timing:
 *  - the call returns 0 (for a dying child also -ESRCH or -EINVAL);
 *  - every status is a node with memory, -ENOENT or -EFAULT, and a run's
 *    kind agrees with its status (PRESENT exactly when it is a node, one
 *    page state per run, -EFAULT only for no VMA or the zero page in the
 *    default mode, NOVMA alone, ANON or FILE in a VMA);
 *  - runs tile the answered pages, neighbours differ, each page's status
 *    is its run's node; nothing is written past done, nr_runs or any
 *    buffer; a resumed call always makes progress;
 *  - node totals and nr_unplaced count exactly the statuses answered;
 *  - pages nobody touches (mlocked, written once) always answer their
 *    node; the zero page never shows in memory that is only ever written.
 * The guest's kernel log must stay clean (tools/vm/run fails the run on
 * any WARN, BUG or lockdep report). Each race runs a few seconds
 * (NP_RACE_MS in the environment changes it).
 */
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "np_test.h"
#include "kselftest_harness.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif
#ifndef MAP_HUGETLB
#define MAP_HUGETLB		0x40000
#endif

/* x86-64, 4 KiB pages: the PMD size (THP, 2 MiB hugetlb). */
#define QR_PMD			(2UL << 20)
/* One mutator's piece of the region: two PMDs. */
#define QR_SLICE		(2 * QR_PMD)
/* Slices of the largest race (mixed: one per kind of mutator). */
#define QR_MAX_SLICES		8
/* Pages written once and mlocked at the start of the region. */
#define QR_STABLE		64
/* Pages queried past the region: half reservation, half no VMA. */
#define QR_TAIL			16
/* Addresses per array-mode call: not a multiple of the module's chunk. */
#define QR_ARRAY_N		1536
/* Querier threads of one race at most. */
#define QR_MAX_Q		6
/* Broken rules printed per race; the rest are only counted. */
#define QR_LOG_MAX		8
/* One race's length: a few hundred calls each under TCG. */
#define QR_RACE_MS		2500
/* A fatal signal must end a querier this fast, even under TCG. */
#define QR_KILL_WAIT_MS		10000
/* The huge range: [2^46, 2^47), the top half of 4-level user space. */
#define QR_HUGE_START		(1ULL << 46)
#define QR_HUGE_LEN		(1ULL << 46)

#define QR_STATES (NUMAPLACE_KIND_PRESENT | NUMAPLACE_KIND_ZERO |	\
		   NUMAPLACE_KIND_NONE | NUMAPLACE_KIND_SWAP |		\
		   NUMAPLACE_KIND_MIGRATION | NUMAPLACE_KIND_OTHER |	\
		   NUMAPLACE_KIND_SPECIAL | NUMAPLACE_KIND_NOVMA)
#define QR_KINDS  (QR_STATES | NUMAPLACE_KIND_PMD | NUMAPLACE_KIND_PUD |	\
		   NUMAPLACE_KIND_HUGETLB | NUMAPLACE_KIND_ANON |	\
		   NUMAPLACE_KIND_FILE | NUMAPLACE_KIND_PROTNONE)

/* What a querier thread asks. */
enum qr_qtype {
	QR_Q_RANGE,	/* the whole region: runs, status, totals */
	QR_Q_RESUME,	/* the same through a runs buffer of 1..17 */
	QR_Q_ARRAY,	/* random addresses, duplicates, no-VMA addresses */
	QR_Q_HUGE,	/* [2^46, 2^47): totals only */
};

/* Shared by the queriers and the mutators of one race. */
struct qr_ctx {
	int fd;
	long psz;
	__u32 nr_nodes;
	__u64 node_memory[NUMAPLACE_NODE_WORDS];
	int new_kernel;
	int self_pid;
	/* The target: 0 (its own pid on half the calls), or a child. */
	int pid;
	int child;		/* the target may die: -ESRCH, -EINVAL too */
	/*
	 * The region queried, and where no zero page may show while no THP
	 * has been split since the race began (thp_split_page of
	 * /proc/vmstat at its start): splitting an anonymous THP maps its
	 * zero-filled subpages to the shared zero page (6.12
	 * mm/huge_memory.c:__split_huge_page() remap_page(...,
	 * RMP_USE_SHARED_ZEROPAGE); 7.3 __folio_split(),
	 * TTU_USE_SHARED_ZEROPAGE), so a THP written in one place and split
	 * shows the zero page in memory only ever written.
	 */
	unsigned long qstart;
	size_t qpages;
	unsigned long zlo, zhi;
	long splits0;
	/* Pages nobody touches: their node, from move_pages(2). */
	unsigned long stable;
	int stable_node[QR_STABLE];
	int stable_ok;
	int stop;
	unsigned long bad;	/* answers that break a rule */
	unsigned long hard;	/* mutator steps that failed unexpectedly */
};

struct qr_q {
	struct qr_ctx *x;
	enum qr_qtype type;
	unsigned int seed;
	pthread_t th;
	struct numaplace_run *runs;
	__s32 *st;
	__u64 *np;
	__u64 *addrs;
	unsigned long calls, answered;
};

struct qr_mut;
typedef void (*qr_step_fn)(struct qr_mut *m);

/* One mutator: a thread that owns its slice(s) of the region. */
struct qr_mut {
	struct qr_ctx *x;
	const char *name;
	qr_step_fn step;
	char *lo, *lo2;		/* its slice; a second one for shmem */
	size_t len;
	int memfd;
	unsigned char *state;	/* mremap: per page, QR_DATA or QR_RES */
	unsigned int seed;
	unsigned long iters, done;	/* steps; steps that did their job */
	pthread_t th;
};

/* A region: the stable pages, then the slices, then the tail. */
struct qr_region {
	char *raw;
	size_t raw_len;
	char *base;
	size_t len;
	char *slice[QR_MAX_SLICES];
	int nslices;
};

/* Sysfs/procfs values a test changed, restored in the teardown. */
struct qr_saved {
	char path[128];
	char val[64];
};

static long psz;

static long qr_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long qr_race_ms(void)
{
	const char *e = getenv("NP_RACE_MS");
	long ms = e ? strtol(e, NULL, 0) : 0;

	return ms > 0 ? ms : QR_RACE_MS;
}

static int qr_stopped(struct qr_ctx *x)
{
	return __atomic_load_n(&x->stop, __ATOMIC_RELAXED);
}

static void qr_log(struct qr_ctx *x, unsigned long *counter, const char *fmt,
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

#define qr_bad(x, fmt, ...)  qr_log(x, &(x)->bad, fmt, ##__VA_ARGS__)
#define qr_hard(x, fmt, ...) qr_log(x, &(x)->hard, "mutator: " fmt, ##__VA_ARGS__)

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
static long qr_thp_splits(void)
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
static int qr_check_runs(struct qr_ctx *x, const char *what,
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
static int qr_check_totals(struct qr_ctx *x, const char *what,
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
	__u32 flags = qr_flags(qq);
	int legacy = (flags & NUMAPLACE_QUERY_AS_SYSCALL) && !x->new_kernel;
	struct numaplace_query q;
	const char *what = flags ? "range as_syscall" : "range";
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
	__u32 flags = qr_flags(qq);
	int legacy = (flags & NUMAPLACE_QUERY_AS_SYSCALL) && !x->new_kernel;
	int pid = qr_pid(qq), ret;
	struct numaplace_query q;
	char what[64];

	for (size_t i = 0; i <= n; i++)
		qq->st[i] = NP_SENTINEL;
	while (done < n && !qr_stopped(x)) {
		unsigned long at = x->qstart + done * x->psz;

		snprintf(what, sizeof(what), "resume cap %u%s call %zu", cap,
			 flags ? " as_syscall" : "", calls);
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
	__u32 flags = qr_flags(qq);
	const char *what = flags ? "huge range as_syscall" : "huge range";
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

static void *qr_querier(void *arg)
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

static int qr_q_alloc(struct qr_q *qq, struct qr_ctx *x, enum qr_qtype type,
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

static void qr_q_free(struct qr_q *qq)
{
	free(qq->runs);
	free(qq->st);
	free(qq->np);
	free(qq->addrs);
}

/* ---- the region and the mutators ---------------------------------- */

static void qr_touch(char *p, size_t pages, unsigned int *seed)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)p)[i * psz + rand_r(seed) % psz] = (char)(i | 1);
}

/* Touch up to @max random pages of [p, p + pages). */
static void qr_touch_some(char *p, size_t pages, size_t max,
			  unsigned int *seed)
{
	size_t k = 1 + rand_r(seed) % max;

	for (size_t i = 0; i < k; i++)
		qr_touch(p + (rand_r(seed) % pages) * psz, 1, seed);
}

/* A random length in pages for a piece of a slice of @npg pages. */
static size_t qr_piece(size_t npg, unsigned int *seed)
{
	static const size_t sizes[] = { 1, 2, 3, 16, 64, 511, 512, 513 };
	unsigned int r = rand_r(seed) % 10;
	size_t l;

	if (r < 7)
		l = sizes[rand_r(seed) % 8];
	else
		l = 1 + rand_r(seed) % npg;
	return l > npg ? npg : l;
}

/* Start of a piece of @l pages: PMD-aligned one time in three. */
static size_t qr_where(size_t npg, size_t l, unsigned int *seed)
{
	size_t ppmd = QR_PMD / psz, o = rand_r(seed) % (npg - l + 1);

	if (!(rand_r(seed) % 3) && o >= ppmd && o - o % ppmd + l <= npg)
		o -= o % ppmd;
	return o;
}

static void *qr_map_fixed(void *p, size_t len, int prot, int flags, int fd,
			  off_t off)
{
	return mmap(p, len, prot, flags | MAP_FIXED, fd, off);
}

/* Anonymous private memory at @p, THP asked for, every page written. */
static int qr_anon(char *p, size_t len, int thp, unsigned int *seed)
{
	if (qr_map_fixed(p, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != p)
		return -errno;
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	qr_touch(p, len / psz, seed);
	return 0;
}

/* A PROT_NONE placeholder at @p where nothing is mapped. 0 or -errno. */
static int qr_reserve(char *p, size_t len)
{
	void *q = mmap(p, len, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		       MAP_FIXED_NOREPLACE, -1, 0);

	if (q == p)
		return 0;
	if (q != MAP_FAILED)
		munmap(q, len);
	return -EEXIST;
}

/* mmap / munmap of pieces: every kind of VMA comes and goes. */
static void qr_step_mmap(struct qr_mut *m)
{
	size_t npg = m->len / psz, l = qr_piece(npg, &m->seed);
	size_t o = qr_where(npg, l, &m->seed);
	char *p = m->lo + o * psz;
	size_t len = l * psz;
	void *q = p;

	switch (rand_r(&m->seed) % 7) {
	case 0:
	case 1:
		if (qr_anon(p, len, rand_r(&m->seed) & 1, &m->seed))
			q = MAP_FAILED;
		break;
	case 2:
		q = qr_map_fixed(p, len, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (q == p)
			qr_touch(p, l, &m->seed);
		break;
	case 3:
		q = qr_map_fixed(p, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				 m->memfd, o * psz);
		if (q == p)
			qr_touch(p, l, &m->seed);
		break;
	case 4:
		/* A private file mapping: written pages are anon COW pages. */
		q = qr_map_fixed(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
				 m->memfd, o * psz);
		if (q == p)
			qr_touch_some(p, l, 8, &m->seed);
		break;
	case 5:
		/* A real hole for a moment, then anon memory again. */
		if (munmap(p, len)) {
			q = MAP_FAILED;
			break;
		}
		q = mmap(p, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (q == p)
			qr_touch(p, l, &m->seed);
		break;
	default:
		q = qr_map_fixed(p, len, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		break;
	}
	if (q != p)
		qr_hard(m->x, "%s: mmap of %zu pages at %p: %s", m->name, l, p,
			strerror(errno));
	else
		m->done++;
}

#define QR_DATA 1
#define QR_RES	0

static int qr_all(const unsigned char *s, size_t o, size_t l, int v)
{
	for (size_t i = 0; i < l; i++)
		if (s[o + i] != v)
			return 0;
	return 1;
}

/*
 * mremap: pieces move between data and placeholders (MAYMOVE | FIXED,
 * sometimes DONTUNMAP), shrink and grow in place. Page tables, THPs and
 * whole PMDs move under the queriers.
 */
static void qr_step_mremap(struct qr_mut *m)
{
	size_t npg = m->len / psz, l = qr_piece(npg / 2, &m->seed), o, p;
	unsigned char *s = m->state;
	unsigned int op = rand_r(&m->seed) % 10;
	char *from, *to;
	void *r;
	int tries;

	if (op < 6) {
		int dontunmap = op == 5;

		for (tries = 0; tries < 32; tries++) {
			o = qr_where(npg, l, &m->seed);
			p = qr_where(npg, l, &m->seed);
			if (qr_all(s, o, l, QR_DATA) && qr_all(s, p, l, QR_RES))
				break;
		}
		if (tries == 32)
			return;
		from = m->lo + o * psz;
		to = m->lo + p * psz;
		r = mremap(from, l * psz, l * psz,
			   MREMAP_MAYMOVE | MREMAP_FIXED |
			   (dontunmap ? MREMAP_DONTUNMAP : 0), to);
		if (r == MAP_FAILED)
			return;	/* over two VMAs, or DONTUNMAP refused */
		if (r != to) {
			qr_hard(m->x, "mremap: moved to %p, not %p", r, to);
			return;
		}
		memset(s + p, QR_DATA, l);
		if (!dontunmap) {
			if (qr_reserve(from, l * psz)) {
				qr_hard(m->x, "mremap: %p taken under us", from);
				return;
			}
			memset(s + o, QR_RES, l);
		}
		qr_touch_some(to, l, 4, &m->seed);
		m->done++;
		return;
	}
	if (op < 8) {
		/* Shrink [o, o + 2l) to [o, o + l), or grow [o, o + l) to it. */
		l = l > npg / 2 ? npg / 2 : l;
		for (tries = 0; tries < 32; tries++) {
			o = rand_r(&m->seed) % (npg - 2 * l + 1);
			if (qr_all(s, o, l, QR_DATA))
				break;
		}
		if (tries == 32)
			return;
		from = m->lo + o * psz;
		to = from + l * psz;
		if (qr_all(s, o + l, l, QR_DATA)) {
			r = mremap(from, 2 * l * psz, l * psz, 0);
			if (r == MAP_FAILED)
				return;
			if (qr_reserve(to, l * psz)) {
				qr_hard(m->x, "mremap shrink: %p taken", to);
				return;
			}
			memset(s + o + l, QR_RES, l);
			m->done++;
		} else if (qr_all(s, o + l, l, QR_RES)) {
			if (munmap(to, l * psz)) {
				qr_hard(m->x, "munmap %p: %s", to, strerror(errno));
				return;
			}
			r = mremap(from, l * psz, 2 * l * psz, 0);
			if (r == MAP_FAILED) {
				if (qr_reserve(to, l * psz))
					qr_hard(m->x, "mremap grow: %p taken", to);
				return;
			}
			memset(s + o + l, QR_DATA, l);
			qr_touch_some(to, l, 4, &m->seed);
			m->done++;
		}
		return;
	}
	/* Fault and zap data pages. */
	for (tries = 0; tries < 32; tries++) {
		o = rand_r(&m->seed) % (npg - l + 1);
		if (qr_all(s, o, l, QR_DATA))
			break;
	}
	if (tries == 32)
		return;
	if (op == 8)
		qr_touch(m->lo + o * psz, l, &m->seed);
	else
		madvise(m->lo + o * psz, l * psz, MADV_DONTNEED);
	m->done++;
}

static int qr_init_mremap(struct qr_mut *m)
{
	size_t npg = m->len / psz;

	m->state = calloc(npg, 1);
	if (!m->state)
		return -ENOMEM;
	/* First half data (THP-able), second half placeholders. */
	if (qr_anon(m->lo, m->len / 2, 1, &m->seed) ||
	    qr_map_fixed(m->lo + m->len / 2, m->len / 2, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			 0) == MAP_FAILED)
		return -errno;
	memset(m->state, QR_DATA, npg / 2);
	return 0;
}

/* mprotect: PROT_NONE and read-only pieces (THPs split), then back. */
static void qr_step_mprotect(struct qr_mut *m)
{
	size_t npg = m->len / psz;
	int k = 1 + rand_r(&m->seed) % 3;

	for (int i = 0; i < k; i++) {
		size_t l = qr_piece(npg, &m->seed), o = qr_where(npg, l, &m->seed);
		int prot = rand_r(&m->seed) % 3 ? PROT_NONE : PROT_READ;

		if (mprotect(m->lo + o * psz, l * psz, prot))
			qr_hard(m->x, "mprotect: %s", strerror(errno));
	}
	if (rand_r(&m->seed) & 1)
		sched_yield();
	if (mprotect(m->lo, m->len, PROT_READ | PROT_WRITE)) {
		qr_hard(m->x, "mprotect back: %s", strerror(errno));
		return;
	}
	qr_touch_some(m->lo, npg, 16, &m->seed);
	if (!(rand_r(&m->seed) % 8)) {
		/* A whole PMD again: a fresh THP to split next time. */
		char *p = m->lo + (rand_r(&m->seed) % 2) * QR_PMD;

		madvise(p, QR_PMD, MADV_DONTNEED);
		qr_touch(p, QR_PMD / psz, &m->seed);
	}
	m->done++;
}

/*
 * A whole THP made read-only or PROT_NONE (its PMD stays, not writable),
 * zapped (the folio is freed), then faulted again. A walker that looks at
 * the struct page of a PMD it read without the PMD lock sees a freed page
 * here: such a page must not be taken for the huge zero page.
 */
static void qr_step_rozap(struct qr_mut *m)
{
	char *p = m->lo + (rand_r(&m->seed) % 2) * QR_PMD;
	int prot = rand_r(&m->seed) & 1 ? PROT_READ : PROT_NONE;

	if (mprotect(p, QR_PMD, prot)) {
		qr_hard(m->x, "rozap: mprotect: %s", strerror(errno));
		return;
	}
	if (rand_r(&m->seed) & 1)
		sched_yield();
	madvise(p, QR_PMD, MADV_DONTNEED);
	if (mprotect(p, QR_PMD, PROT_READ | PROT_WRITE)) {
		qr_hard(m->x, "rozap: mprotect back: %s", strerror(errno));
		return;
	}
	qr_touch(p, 1 + rand_r(&m->seed) % 4, &m->seed);
	m->done++;
}

/* MADV_DONTNEED / MADV_FREE and refaults, partial and whole THPs. */
static void qr_step_dontneed(struct qr_mut *m)
{
	size_t npg = m->len / psz, l = qr_piece(npg, &m->seed);
	size_t o = qr_where(npg, l, &m->seed);
	char *p = m->lo + o * psz;

	switch (rand_r(&m->seed) % 4) {
	case 0:
	case 1:
		madvise(p, l * psz, MADV_DONTNEED);
		break;
	case 2:
		madvise(p, l * psz, MADV_FREE);
		break;
	default:
		qr_touch(p, l, &m->seed);
		break;
	}
	qr_touch_some(m->lo, npg, 8, &m->seed);
	m->done++;
}

/* MADV_PAGEOUT to zram, swap-in by writes, swap entries zapped. */
static void qr_step_pageout(struct qr_mut *m)
{
	size_t npg = m->len / psz, l = qr_piece(npg, &m->seed);
	size_t o = qr_where(npg, l, &m->seed);
	char *p = m->lo + o * psz;

	switch (rand_r(&m->seed) % 5) {
	case 0:
	case 1:
		if (!madvise(p, l * psz, MADV_PAGEOUT))
			m->done++;
		break;
	case 2:
		madvise(p, l * psz, MADV_DONTNEED);
		break;
	default:
		qr_touch(p, l, &m->seed);
		break;
	}
}

/* MADV_COLLAPSE of anon memory, split again by mprotect, munmap, zap. */
static void qr_step_collapse(struct qr_mut *m)
{
	size_t ppmd = QR_PMD / psz;
	char *pmd = m->lo + (rand_r(&m->seed) % 2) * QR_PMD;
	size_t o = 1 + rand_r(&m->seed) % (ppmd - 20);
	size_t l = 1 + rand_r(&m->seed) % 16;

	switch (rand_r(&m->seed) % 5) {
	case 0:
	case 1:
		if (!madvise(m->lo, m->len, MADV_COLLAPSE))
			m->done++;
		break;
	case 2:
		/* A partial mprotect splits the PMD mapping. */
		mprotect(pmd + o * psz, l * psz, PROT_READ);
		if (mprotect(m->lo, m->len, PROT_READ | PROT_WRITE))
			qr_hard(m->x, "collapse: mprotect back: %s",
				strerror(errno));
		break;
	case 3:
		/* A partial munmap splits the THP; map the hole again. */
		if (munmap(pmd + o * psz, l * psz)) {
			qr_hard(m->x, "collapse: munmap: %s", strerror(errno));
			break;
		}
		if (mmap(pmd + o * psz, l * psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) != pmd + o * psz) {
			qr_hard(m->x, "collapse: hole taken");
			break;
		}
		madvise(m->lo, m->len, MADV_HUGEPAGE);
		qr_touch(pmd + o * psz, l, &m->seed);
		break;
	default:
		madvise(pmd + o * psz, l * psz, MADV_DONTNEED);
		qr_touch(pmd + o * psz, rand_r(&m->seed) % (l + 1), &m->seed);
		break;
	}
}

static int qr_init_collapse(struct qr_mut *m)
{
	/* 4 KiB pages first, so there is something to collapse. */
	if (qr_anon(m->lo, m->len, 0, &m->seed))
		return -errno;
	madvise(m->lo, m->len, MADV_HUGEPAGE);
	return 0;
}

/*
 * One memfd (shmem) mapped twice: MADV_COLLAPSE through either mapping
 * collapses the page cache and retracts the other mapping's PTE tables
 * (6.12: no mmap lock, freed under RCU); hole punches split the THP,
 * zaps and partial mprotects split the PMD mappings.
 */
static void qr_step_shmem(struct qr_mut *m)
{
	size_t npg = m->len / psz, l = 1 + rand_r(&m->seed) % 16;
	size_t o = rand_r(&m->seed) % (npg - l + 1);
	char *a = rand_r(&m->seed) & 1 ? m->lo : m->lo2;

	switch (rand_r(&m->seed) % 7) {
	case 0:
	case 1:
		if (!madvise(a, m->len, MADV_COLLAPSE))
			m->done++;
		break;
	case 2:
		fallocate(m->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			  o * psz, l * psz);
		qr_touch(a + o * psz, l, &m->seed);
		break;
	case 3:
		madvise(a + o * psz, l * psz, MADV_DONTNEED);
		break;
	case 4:
		mprotect(a + o * psz, l * psz, PROT_READ);
		if (mprotect(a, m->len, PROT_READ | PROT_WRITE))
			qr_hard(m->x, "shmem: mprotect back: %s",
				strerror(errno));
		break;
	default:
		qr_touch_some(a, npg, 32, &m->seed);
		break;
	}
}

static int qr_init_shmem(struct qr_mut *m)
{
	m->memfd = memfd_create("np-race-shmem", MFD_CLOEXEC);
	if (m->memfd < 0 || ftruncate(m->memfd, m->len))
		return -errno;
	if (qr_map_fixed(m->lo, m->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 m->memfd, 0) != m->lo ||
	    qr_map_fixed(m->lo2, m->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 m->memfd, 0) != m->lo2)
		return -errno;
	madvise(m->lo, m->len, MADV_HUGEPAGE);
	madvise(m->lo2, m->len, MADV_HUGEPAGE);
	qr_touch(m->lo, m->len / psz, &m->seed);
	return 0;
}

/* fork: page tables copied and write-protected; children write, exit. */
static void qr_step_fork(struct qr_mut *m)
{
	size_t npg = m->len / psz;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		qr_hard(m->x, "fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		qr_touch_some(m->lo, npg, 16, &m->seed);
		if (rand_r(&m->seed) & 1)
			madvise(m->lo, QR_PMD, MADV_DONTNEED);
		_exit(0);
	}
	/* The parent breaks COW on some, THPs among them. */
	qr_touch_some(m->lo, npg, 16, &m->seed);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		qr_hard(m->x, "fork: child %d status %#x", pid, status);
	else
		m->done++;
	if (!(rand_r(&m->seed) % 4)) {
		madvise(m->lo + QR_PMD, QR_PMD, MADV_DONTNEED);
		qr_touch(m->lo + QR_PMD, QR_PMD / psz, &m->seed);
	}
}

/* hugetlb: faults, zaps, PROT_NONE, unmap and map again. */
static void qr_step_hugetlb(struct qr_mut *m)
{
	char *p = m->lo + (rand_r(&m->seed) % 2) * QR_PMD;
	int shared = rand_r(&m->seed) & 1;

	switch (rand_r(&m->seed) % 5) {
	case 0:
		madvise(p, QR_PMD, MADV_DONTNEED);
		break;
	case 1:
		if (mprotect(p, QR_PMD, PROT_NONE) ||
		    mprotect(p, QR_PMD, PROT_READ | PROT_WRITE))
			qr_hard(m->x, "hugetlb: mprotect: %s", strerror(errno));
		break;
	case 2:
		if (qr_map_fixed(p, QR_PMD, PROT_READ | PROT_WRITE,
				 (shared ? MAP_SHARED : MAP_PRIVATE) |
				 MAP_ANONYMOUS | MAP_HUGETLB, -1, 0) != p) {
			qr_hard(m->x, "hugetlb: mmap: %s", strerror(errno));
			return;
		}
		break;
	default:
		break;
	}
	((volatile char *)p)[rand_r(&m->seed) % QR_PMD] = 1;
	m->done++;
}

static int qr_init_hugetlb(struct qr_mut *m)
{
	if (qr_map_fixed(m->lo, m->len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1,
			 0) != m->lo)
		return -errno;
	memset(m->lo, 1, m->len);
	return 0;
}

/* The default mutators' first state: THP-able anon memory, written. */
static int qr_init_anon(struct qr_mut *m)
{
	return qr_anon(m->lo, m->len, 1, &m->seed);
}

static void *qr_mutator(void *arg)
{
	struct qr_mut *m = arg;

	while (!qr_stopped(m->x)) {
		m->step(m);
		m->iters++;
	}
	return NULL;
}

/*
 * The region: the stable pages (mlocked, written once) in the first PMD,
 * @nslices slices of two PMDs, QR_TAIL pages after it. All of it a
 * PROT_NONE reservation until the mutators map their slices.
 */
static int qr_region_init(struct qr_ctx *x, struct qr_region *r, int nslices)
{
	__u64 addrs[QR_STABLE];
	int st[QR_STABLE];
	unsigned int seed = 1;
	char *stable;

	memset(r, 0, sizeof(*r));
	r->nslices = nslices;
	r->len = QR_PMD * (1 + 2 * nslices);
	r->raw_len = r->len + 2 * QR_PMD;
	r->raw = mmap(NULL, r->raw_len, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r->raw == MAP_FAILED) {
		r->raw = NULL;
		return -errno;
	}
	r->base = (char *)(((uintptr_t)r->raw + QR_PMD - 1) & ~(QR_PMD - 1));
	for (int i = 0; i < nslices; i++)
		r->slice[i] = r->base + QR_PMD * (1 + 2 * i);

	stable = r->base;
	if (qr_anon(stable, QR_STABLE * psz, 0, &seed))
		return -errno;
	x->stable = (uintptr_t)stable;
	x->stable_ok = !mlock(stable, QR_STABLE * psz);
	for (int i = 0; i < QR_STABLE; i++)
		addrs[i] = (uintptr_t)stable + i * psz;
	if (np_sys_query(0, QR_STABLE, addrs, st))
		x->stable_ok = 0;
	for (int i = 0; i < QR_STABLE; i++) {
		x->stable_node[i] = st[i];
		if (st[i] < 0)
			x->stable_ok = 0;
	}
	x->qstart = (uintptr_t)r->base;
	x->qpages = r->len / psz + QR_TAIL;
	x->zlo = (uintptr_t)r->base;
	x->zhi = (uintptr_t)r->base + r->len;
	x->splits0 = qr_thp_splits();
	return 0;
}

/* Half the tail becomes a hole: no VMA. Call when nothing else maps. */
static void qr_region_hole(struct qr_region *r)
{
	munmap(r->base + r->len + QR_TAIL / 2 * psz, QR_TAIL / 2 * psz);
}

static void qr_region_free(struct qr_region *r)
{
	if (r->raw)
		munmap(r->raw, r->raw_len);
	r->raw = NULL;
}

static int qr_thp_on(void)
{
	char buf[128];

	if (np_read_str("/sys/kernel/mm/transparent_hugepage/enabled", buf,
			sizeof(buf)))
		return 0;
	return !strstr(buf, "[never]");
}

/* ---- the fixture -------------------------------------------------- */

FIXTURE(qrace)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	struct qr_ctx x;
	struct qr_region r;
	struct qr_saved saved[12];
	int nsaved;
};

/* Set a knob for this test; the teardown puts the old value back. */
static int qr_set(FIXTURE_DATA(qrace) *self, const char *path, const char *val)
{
	struct qr_saved *s;

	if (self->nsaved == (int)ARRAY_SIZE(self->saved))
		return -ENOSPC;
	s = &self->saved[self->nsaved];
	if (np_read_str(path, s->val, sizeof(s->val)))
		return -ENOENT;
	/* "always [madvise] never" style files: keep the selected word. */
	if (strchr(s->val, '[')) {
		char *b = strchr(s->val, '['), *e = strchr(b, ']');

		if (e) {
			*e = 0;
			memmove(s->val, b + 1, strlen(b + 1) + 1);
		}
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	self->nsaved++;
	return np_write_str(path, val);
}

FIXTURE_SETUP(qrace)
{
	struct qr_ctx *x = &self->x;

	self->fd = -1;
	self->nsaved = 0;
	memset(&self->r, 0, sizeof(self->r));
	memset(x, 0, sizeof(*x));
	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &self->info));
	if (!(self->info.features & NUMAPLACE_FEAT_QUERY))
		SKIP(return, "module has no NUMAPLACE_FEAT_QUERY");
	ASSERT_EQ(0, np_ctx_init(&self->c, self->fd, 0));
	psz = self->c.psz;
	x->fd = self->fd;
	x->psz = psz;
	x->nr_nodes = self->c.nr_nodes;
	ASSERT_LE(x->nr_nodes, NUMAPLACE_MAX_NODES);
	memcpy(x->node_memory, self->info.node_memory, sizeof(x->node_memory));
	x->new_kernel = self->c.new_kernel;
	x->self_pid = getpid();
	/* Its scanner would make PROT_NONE hints at random moments. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	/* The stable pages are mlocked: compaction leaves them alone. */
	qr_set(self, "/proc/sys/vm/compact_unevictable_allowed", "0");
}

FIXTURE_TEARDOWN(qrace)
{
	qr_region_free(&self->r);
	for (int i = self->nsaved - 1; i >= 0; i--)
		np_write_str(self->saved[i].path, self->saved[i].val);
	if (self->fd >= 0)
		close(self->fd);
}

/* A mutator of slice @i of the region. */
static void qr_mut_init(struct qr_mut *m, struct qr_ctx *x,
			struct qr_region *r, int i, const char *name,
			qr_step_fn step)
{
	memset(m, 0, sizeof(*m));
	m->x = x;
	m->name = name;
	m->step = step;
	m->lo = r->slice[i];
	m->len = QR_SLICE;
	m->memfd = -1;
	m->seed = 0x9e3779b9u * (i + 1);
}

/*
 * Run the queriers of @qtypes and the mutators for @ms, then check. The
 * mutators are already initialised (their slices mapped).
 */
static void qr_race(struct __test_metadata *_metadata, struct qr_ctx *x,
		    struct qr_region *r, struct qr_mut *muts, int nmuts,
		    const enum qr_qtype *qtypes, int nq, long ms)
{
	struct qr_q qs[QR_MAX_Q];
	long t0;
	int i;

	ASSERT_LE(nq, QR_MAX_Q);
	for (i = 0; i < nq; i++)
		ASSERT_EQ(0, qr_q_alloc(&qs[i], x, qtypes[i], 1234 + 77 * i));
	if (r)
		qr_region_hole(r);
	x->stop = 0;
	for (i = 0; i < nmuts; i++)
		ASSERT_EQ(0, pthread_create(&muts[i].th, NULL, qr_mutator,
					    &muts[i]));
	for (i = 0; i < nq; i++)
		ASSERT_EQ(0, pthread_create(&qs[i].th, NULL, qr_querier,
					    &qs[i]));
	t0 = qr_ms();
	while (qr_ms() - t0 < ms && !__atomic_load_n(&x->bad, __ATOMIC_RELAXED))
		usleep(20000);
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nq; i++)
		pthread_join(qs[i].th, NULL);
	for (i = 0; i < nmuts; i++)
		pthread_join(muts[i].th, NULL);

	for (i = 0; i < nq; i++) {
		ksft_print_msg("querier %d (type %d): %lu calls, %lu pages\n",
			       i, qs[i].type, qs[i].calls, qs[i].answered);
		EXPECT_GT(qs[i].calls, 0);
		qr_q_free(&qs[i]);
	}
	for (i = 0; i < nmuts; i++) {
		ksft_print_msg("mutator %s: %lu steps, %lu did their job\n",
			       muts[i].name, muts[i].iters, muts[i].done);
		EXPECT_GT(muts[i].iters, 0);
	}
	EXPECT_EQ(0, x->bad);
	EXPECT_EQ(0, x->hard);
	EXPECT_TRUE(x->stable_ok) TH_LOG("the stable pages could not be mlocked");
}

static const enum qr_qtype qr_all_q[] = {
	QR_Q_RANGE, QR_Q_RESUME, QR_Q_ARRAY, QR_Q_HUGE,
};
#define QR_NQ ((int)ARRAY_SIZE(qr_all_q))

/* Set up the region and @n mutators of one kind on slices 0 .. n - 1. */
#define QR_SETUP(n, name, step, init)					\
	do {								\
		ASSERT_EQ(0, qr_region_init(&self->x, &self->r, (n)));	\
		for (int _i = 0; _i < (n); _i++) {			\
			qr_mut_init(&muts[_i], &self->x, &self->r, _i,	\
				    name, step);			\
			ASSERT_EQ(0, init(&muts[_i]));			\
		}							\
	} while (0)

static int qr_init_memfd(struct qr_mut *m)
{
	m->memfd = memfd_create("np-race", MFD_CLOEXEC);
	if (m->memfd < 0 || ftruncate(m->memfd, m->len))
		return -errno;
	return qr_init_anon(m);
}

static void qr_close_memfds(struct qr_mut *muts, int n)
{
	for (int i = 0; i < n; i++)
		if (muts[i].memfd >= 0)
			close(muts[i].memfd);
}

/* Pieces unmapped and mapped again as anon, shmem, file, PROT_NONE. */
TEST_F(qrace, mmap_munmap)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_SETUP(2, "mmap", qr_step_mmap, qr_init_memfd);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
	qr_close_memfds(muts, 2);
}

/* mremap: MAYMOVE | FIXED, DONTUNMAP, shrink and grow in place. */
TEST_F(qrace, mremap)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_SETUP(2, "mremap", qr_step_mremap, qr_init_mremap);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
	for (int i = 0; i < 2; i++)
		free(muts[i].state);
}

/* PROT_NONE and read-only pieces toggled, THPs split by them. */
TEST_F(qrace, mprotect)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_SETUP(2, "mprotect", qr_step_mprotect, qr_init_anon);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
}

/* MADV_DONTNEED / MADV_FREE and refaults, THPs zapped whole and split. */
TEST_F(qrace, dontneed)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	QR_SETUP(2, "dontneed", qr_step_dontneed, qr_init_anon);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
}

/* Read-only and PROT_NONE THPs zapped and faulted again, three times longer. */
TEST_F_TIMEOUT(qrace, thp_readonly_zap, 60)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	if (!qr_thp_on())
		SKIP(return, "THP is disabled");
	QR_SETUP(2, "rozap", qr_step_rozap, qr_init_anon);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		3 * qr_race_ms());
}

static int qr_have_swap(void)
{
	char line[256];
	int n = 0;
	FILE *f = fopen("/proc/swaps", "re");

	while (f && fgets(line, sizeof(line), f))
		n++;
	if (f)
		fclose(f);
	return n > 1;
}

/* MADV_PAGEOUT to swap, swap-ins, swap entries zapped. */
TEST_F(qrace, pageout)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	if (!qr_have_swap())
		SKIP(return, "no swap in the guest (tools/vm/run --swap MB)");
	QR_SETUP(2, "pageout", qr_step_pageout, qr_init_anon);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
	EXPECT_GT(muts[0].done + muts[1].done, 0);
}

/* khugepaged as fast as it goes, for the collapse tests. */
static void qr_khugepaged_fast(FIXTURE_DATA(qrace) *self)
{
	static const char *const k = "/sys/kernel/mm/transparent_hugepage/khugepaged/";
	char path[160];

	snprintf(path, sizeof(path), "%sscan_sleep_millisecs", k);
	qr_set(self, path, "1");
	snprintf(path, sizeof(path), "%salloc_sleep_millisecs", k);
	qr_set(self, path, "1");
	snprintf(path, sizeof(path), "%spages_to_scan", k);
	qr_set(self, path, "8192");
}

/* MADV_COLLAPSE and khugepaged on anon memory; splits in between. */
TEST_F(qrace, collapse_anon)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	if (!qr_thp_on())
		SKIP(return, "THP is disabled");
	qr_khugepaged_fast(self);
	QR_SETUP(2, "collapse", qr_step_collapse, qr_init_collapse);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
	ksft_print_msg("%lu collapses\n", muts[0].done + muts[1].done);
}

/* shmem mapped twice: collapse, retract, punch holes, split. */
TEST_F(qrace, collapse_shmem)
{
	NP_SKIPPED();
	struct qr_mut muts[2];

	if (!qr_thp_on())
		SKIP(return, "THP is disabled");
	qr_khugepaged_fast(self);
	qr_set(self, "/sys/kernel/mm/transparent_hugepage/shmem_enabled",
	       "advise");
	ASSERT_EQ(0, qr_region_init(&self->x, &self->r, 4));
	for (int i = 0; i < 2; i++) {
		qr_mut_init(&muts[i], &self->x, &self->r, 2 * i, "shmem",
			    qr_step_shmem);
		muts[i].lo2 = self->r.slice[2 * i + 1];
		ASSERT_EQ(0, qr_init_shmem(&muts[i]));
	}
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
	ksft_print_msg("%lu collapses\n", muts[0].done + muts[1].done);
	qr_close_memfds(muts, 2);
}

/* fork: page tables copied, write-protected, COW broken; children exit. */
TEST_F(qrace, fork)
{
	NP_SKIPPED();
	struct qr_mut muts[3];

	QR_SETUP(3, "fork", qr_step_fork, qr_init_anon);
	/* And zaps next to them, while children come and go. */
	muts[2].name = "dontneed";
	muts[2].step = qr_step_dontneed;
	qr_race(_metadata, &self->x, &self->r, muts, 3, qr_all_q, QR_NQ,
		qr_race_ms());
}

/* hugetlb: 2 MiB pages faulted, zapped, PROT_NONE, remapped. */
TEST_F(qrace, hugetlb)
{
	NP_SKIPPED();
	const char *nr = "/proc/sys/vm/nr_hugepages";
	const char *fr = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
	struct qr_mut muts[2];
	long have = np_read_long(nr);
	char val[32];

	if (have < 0)
		SKIP(return, "no hugetlb");
	snprintf(val, sizeof(val), "%ld", have + 12);
	qr_set(self, nr, val);
	if (np_read_long(fr) < 10)
		SKIP(return, "fewer than 10 free 2 MiB huge pages");
	QR_SETUP(2, "hugetlb", qr_step_hugetlb, qr_init_hugetlb);
	qr_race(_metadata, &self->x, &self->r, muts, 2, qr_all_q, QR_NQ,
		qr_race_ms());
}

/*
 * hugetlb PMD sharing: a 1 GiB-aligned MAP_SHARED hugetlb mapping (few
 * pages faulted, MAP_NORESERVE) shared with a child after fork: both
 * processes fault, zap (huge_pmd_unshare()), split and merge the VMA and
 * map it again, so the PMD table the queriers walk is shared, unshared
 * and freed by the other process under them.
 */
#define QR_PUD		(1UL << 30)
#define QR_HS_PAGES	8	/* huge pages ever faulted */

static void qr_hshare_op(char *base, int memfd, unsigned int *seed)
{
	char *p = base + (rand_r(seed) % QR_HS_PAGES) * QR_PMD;

	switch (rand_r(seed) % 8) {
	case 0:
	case 1:
	case 2:
		((volatile char *)p)[rand_r(seed) % QR_PMD] = 1;
		break;
	case 3:
	case 4:
		madvise(p, QR_PMD, MADV_DONTNEED);
		break;
	case 5:
		/* A split VMA cannot share: unshared, merged again. */
		mprotect(p, QR_PMD, PROT_READ);
		mprotect(base, QR_PUD, PROT_READ | PROT_WRITE);
		break;
	case 6:
		/* Drop this mm's share of the table; the next fault shares again. */
		if (mmap(base, QR_PUD, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED | MAP_NORESERVE, memfd, 0) != base)
			_exit(9);
		break;
	default:
		break;
	}
}

static void qr_step_hshare(struct qr_mut *m)
{
	qr_hshare_op(m->lo, m->memfd, &m->seed);
	m->done++;
}

TEST_F_TIMEOUT(qrace, hugetlb_shared_pmd, 60)
{
	NP_SKIPPED();
	const char *nr = "/proc/sys/vm/nr_hugepages";
	const char *fr = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages";
	struct qr_ctx *x = &self->x;
	long have = np_read_long(nr);
	struct qr_mut mut;
	unsigned int seed = 3;
	char val[32], *raw, *base;
	int memfd, status;
	pid_t child;

	if (have < 0)
		SKIP(return, "no hugetlb");
	snprintf(val, sizeof(val), "%ld", have + QR_HS_PAGES + 4);
	qr_set(self, nr, val);
	if (np_read_long(fr) < QR_HS_PAGES + 2)
		SKIP(return, "fewer than %d free 2 MiB huge pages",
		     QR_HS_PAGES + 2);
	/* The stable pages; the region queried is the hugetlb one. */
	ASSERT_EQ(0, qr_region_init(x, &self->r, 0));
	memfd = memfd_create("np-race-hshare", MFD_CLOEXEC | MFD_HUGETLB);
	if (memfd < 0)
		SKIP(return, "no hugetlb memfd: %s", strerror(errno));
	ASSERT_EQ(0, ftruncate(memfd, QR_PUD));
	raw = mmap(NULL, 2 * QR_PUD, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	base = (char *)(((uintptr_t)raw + QR_PUD - 1) & ~(QR_PUD - 1));
	ASSERT_EQ(base, mmap(base, QR_PUD, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED | MAP_NORESERVE, memfd, 0));
	for (int i = 0; i < QR_HS_PAGES; i += 2)
		base[i * QR_PMD] = 1;
	x->qstart = (uintptr_t)base;
	x->qpages = QR_PUD / psz;
	x->zlo = (uintptr_t)base;
	x->zhi = (uintptr_t)base + QR_PUD;
	x->splits0 = qr_thp_splits();

	/* fork() shares the PMD table with the child. */
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		seed = getpid();
		for (;;)
			qr_hshare_op(base, memfd, &seed);
	}
	memset(&mut, 0, sizeof(mut));
	mut.x = x;
	mut.name = "hshare";
	mut.step = qr_step_hshare;
	mut.lo = base;
	mut.len = QR_PUD;
	mut.memfd = memfd;
	mut.seed = 11;
	qr_race(_metadata, x, NULL, &mut, 1, qr_all_q, QR_NQ, qr_race_ms());
	kill(child, SIGKILL);
	EXPECT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child status %#x", status);
	munmap(raw, 2 * QR_PUD);
	close(memfd);
}

/* Everything at once, twice as long. */
TEST_F_TIMEOUT(qrace, mixed, 60)
{
	NP_SKIPPED();
	static const qr_step_fn steps[] = {
		qr_step_mmap, qr_step_mremap, qr_step_mprotect,
		qr_step_dontneed, qr_step_pageout, qr_step_collapse,
		qr_step_fork,
	};
	static const char *const names[] = {
		"mmap", "mremap", "mprotect", "dontneed", "pageout",
		"collapse", "fork", "shmem",
	};
	struct qr_mut muts[8];
	int n = 8;

	if (qr_thp_on())
		qr_khugepaged_fast(self);
	ASSERT_EQ(0, qr_region_init(&self->x, &self->r, 8));
	for (int i = 0; i < 7; i++) {
		int ret;

		qr_mut_init(&muts[i], &self->x, &self->r, i, names[i], steps[i]);
		if (steps[i] == qr_step_mmap)
			ret = qr_init_memfd(&muts[i]);
		else if (steps[i] == qr_step_mremap)
			ret = qr_init_mremap(&muts[i]);
		else if (steps[i] == qr_step_collapse)
			ret = qr_init_collapse(&muts[i]);
		else
			ret = qr_init_anon(&muts[i]);
		ASSERT_EQ(0, ret) TH_LOG("%s", names[i]);
	}
	/* shmem: its first mapping in slice 7, its second in the tail. */
	qr_mut_init(&muts[7], &self->x, &self->r, 7, names[7], qr_step_shmem);
	muts[7].len = QR_PMD;
	muts[7].lo2 = self->r.slice[7] + QR_PMD;
	ASSERT_EQ(0, qr_init_shmem(&muts[7]));
	qr_race(_metadata, &self->x, &self->r, muts, n, qr_all_q, QR_NQ,
		2 * qr_race_ms());
	qr_close_memfds(muts, n);
	for (int i = 0; i < n; i++)
		free(muts[i].state);
}

/* ---- another process: a child that exits or dies mid-query --------- */

/*
 * The child's own memory: page tables to walk (a touch every 64 KiB of
 * 64 MiB), so that a query of it takes a while.
 */
static void qr_child_memory(unsigned int seed)
{
	size_t len = 64UL << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t o = 0; o < len; o += 64 << 10)
		p[o + (rand_r(&seed) % 16) * psz] = 1;
}

/*
 * Query children that exit by themselves, are SIGKILLed, or sit as
 * zombies: -ESRCH and -EINVAL are fine then; answers while their mm
 * lives must be as valid as ever. A zombie must be -EINVAL and a reaped
 * child -ESRCH.
 */
TEST_F_TIMEOUT(qrace, child_exit, 60)
{
	NP_SKIPPED();
	struct qr_ctx *x = &self->x;
	struct qr_q qs[QR_NQ];
	unsigned int seed = 42;
	long t0, ms = qr_race_ms();
	int kids = 0, zombies = 0;

	ASSERT_EQ(0, qr_region_init(x, &self->r, 1));
	/* The child inherits the region: written anon THPs. */
	ASSERT_EQ(0, qr_anon(self->r.slice[0], QR_SLICE, 1, &seed));
	x->child = 1;
	x->pid = -1;	/* no child yet: -ESRCH */
	for (int i = 0; i < QR_NQ; i++)
		ASSERT_EQ(0, qr_q_alloc(&qs[i], x, qr_all_q[i], 99 + i));
	for (int i = 0; i < QR_NQ; i++)
		ASSERT_EQ(0, pthread_create(&qs[i].th, NULL, qr_querier, &qs[i]));

	t0 = qr_ms();
	while (qr_ms() - t0 < ms && !x->bad) {
		int pfd[2], mode = kids % 3, status, ret;
		struct numaplace_query q;
		siginfo_t si;
		char c = 0;
		pid_t pid;

		ASSERT_EQ(0, pipe(pfd));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(pfd[0]);
			qr_touch_some(self->r.slice[0], QR_SLICE / psz, 64,
				      &seed);
			qr_child_memory(seed + kids);
			if (write(pfd[1], "r", 1) != 1)
				_exit(2);
			if (mode == 2)
				for (;;)
					pause();
			usleep(rand_r(&seed) % 20000);
			_exit(0);
		}
		close(pfd[1]);
		EXPECT_EQ(1, read(pfd[0], &c, 1));
		close(pfd[0]);
		__atomic_store_n(&x->pid, pid, __ATOMIC_RELAXED);
		if (mode == 2) {
			usleep(rand_r(&seed) % 30000);
			kill(pid, SIGKILL);
		}
		/* Exited, not reaped: a zombie has no mm. */
		memset(&si, 0, sizeof(si));
		ASSERT_EQ(0, waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
		ret = np_query_range(self->fd, pid, 0, x->qstart, psz, NULL, 0,
				     NULL, NULL, 0, &q);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("zombie %d", pid);
		zombies += ret == -EINVAL;
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (mode == 2) {
			EXPECT_TRUE(WIFSIGNALED(status));
		} else {
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		}
		ret = np_query_range(self->fd, pid, 0, x->qstart, psz, NULL, 0,
				     NULL, NULL, 0, &q);
		EXPECT_EQ(-ESRCH, ret) TH_LOG("reaped %d", pid);
		kids++;
	}
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < QR_NQ; i++) {
		pthread_join(qs[i].th, NULL);
		ksft_print_msg("querier %d (type %d): %lu calls, %lu pages\n",
			       i, qs[i].type, qs[i].calls, qs[i].answered);
		EXPECT_GT(qs[i].calls, 0);
		qr_q_free(&qs[i]);
	}
	ksft_print_msg("%d children, %d zombies checked\n", kids, zombies);
	EXPECT_GT(kids, 0);
	EXPECT_EQ(0, x->bad);
}

/* ---- user buffers behind userfaultfd ------------------------------- */

/*
 * Every user buffer of a query (status, runs, totals, pages[]) in memory
 * registered with userfaultfd: each access faults and waits for the
 * handler thread, which first takes this mm's mmap lock for write
 * (mmap + munmap) and queries the same mm itself. A module that touched
 * user memory under the mmap lock would deadlock here (the harness
 * timeout fails the test).
 */
struct qr_uffd {
	int uffd, fd;
	__u32 nr_nodes;
	char *src;		/* one page: the data each fault gets */
	unsigned long qstart;
	size_t qpages;
	int stop;
	unsigned long faults, bad;
};

static void *qr_uffd_handler(void *arg)
{
	struct qr_uffd *u = arg;
	struct pollfd pfd = { .fd = u->uffd, .events = POLLIN };
	__u64 np[NUMAPLACE_MAX_NODES];
	struct numaplace_query q;

	while (!__atomic_load_n(&u->stop, __ATOMIC_RELAXED)) {
		struct uffdio_copy copy;
		struct uffd_msg msg;
		void *p;
		int ret;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(u->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		/* The faulting query must hold no mmap lock now. */
		p = mmap(NULL, psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, psz);
		ret = np_query_range(u->fd, 0, 0, u->qstart, u->qpages * psz,
				     NULL, 0, NULL, np, u->nr_nodes, &q);
		if (ret || q.done != u->qpages) {
			fprintf(stderr, "# uffd handler: query %d, done %llu\n",
				ret, (unsigned long long)q.done);
			u->bad++;
		}
		memset(&copy, 0, sizeof(copy));
		copy.dst = msg.arg.pagefault.address & ~(__u64)(psz - 1);
		copy.src = (uintptr_t)u->src;
		copy.len = psz;
		if (ioctl(u->uffd, UFFDIO_COPY, &copy) && errno != EEXIST) {
			fprintf(stderr, "# uffd handler: UFFDIO_COPY: %s\n",
				strerror(errno));
			u->bad++;
		}
		u->faults++;
	}
	return NULL;
}

TEST_F_TIMEOUT(qrace, uffd_buffers, 90)
{
	NP_SKIPPED();
	struct qr_ctx *x = &self->x;
	const size_t upages = 64;
	struct uffdio_register reg;
	struct uffdio_api api;
	__u64 np2[NUMAPLACE_MAX_NODES + 1];
	struct qr_uffd u;
	unsigned int seed = 5;
	size_t n, nstable = QR_STABLE;
	pthread_t th;
	char *ub;

	ASSERT_EQ(0, qr_region_init(x, &self->r, 1));
	ASSERT_EQ(0, qr_anon(self->r.slice[0], QR_SLICE, 1, &seed));
	ASSERT_TRUE(x->stable_ok);
	n = x->qpages;
	memset(&u, 0, sizeof(u));
	u.fd = self->fd;
	u.nr_nodes = x->nr_nodes;
	u.qstart = x->qstart;
	u.qpages = n;
	u.uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u.uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	ASSERT_EQ(0, ioctl(u.uffd, UFFDIO_API, &api));
	/* Each fault is filled with addresses of the stable pages. */
	u.src = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, u.src);
	for (size_t i = 0; i < psz / 8; i++)
		((__u64 *)u.src)[i] = x->stable + (i % nstable) * psz + i % 61;
	ub = mmap(NULL, upages * psz, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ub);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)ub;
	reg.range.len = upages * psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(u.uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(0, pthread_create(&th, NULL, qr_uffd_handler, &u));

	for (int it = 0; it < 24; it++) {
		__s32 *st = (__s32 *)ub;	/* n statuses: 3 pages */
		struct numaplace_run *runs = (void *)(ub + 16 * psz);
		__u64 *np = (__u64 *)(ub + 40 * psz);
		__u64 *pages = (__u64 *)(ub + 48 * psz);
		__u32 cap = 8 * psz / sizeof(*runs);
		size_t m = 2 * psz / 8;
		struct numaplace_query q;
		__u32 flags = it & 4 ? NUMAPLACE_QUERY_AS_SYSCALL : 0;
		int ret;

		/* Every buffer page faults again. */
		ASSERT_EQ(0, madvise(ub, upages * psz, MADV_DONTNEED));
		switch (it % 4) {
		case 0:
			ret = np_query_range(self->fd, 0, flags, x->qstart,
					     n * psz, runs, cap, st, np,
					     x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			EXPECT_EQ(n, q.done);
			break;
		case 1:
			/* Resumed through a runs buffer behind the faults. */
			ret = np_query_range(self->fd, x->self_pid, flags,
					     x->qstart, n * psz, runs, 3, st,
					     np, x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			EXPECT_LE(q.nr_runs, 3);
			EXPECT_GT(q.done, 0);
			break;
		case 2:
			/* pages[] itself faults in: the stable addresses. */
			ret = np_query_array(self->fd, 0, flags, pages, m, st,
					     np, x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			ASSERT_EQ(m, q.done);
			for (size_t i = 0; i < m; i++) {
				EXPECT_EQ(x->stable_node[i % nstable], st[i])
					TH_LOG("pages[%zu] %#llx", i,
					       (unsigned long long)pages[i]);
			}
			break;
		default:
			ret = np_query_range(self->fd, 0, flags, QR_HUGE_START,
					     QR_HUGE_LEN, NULL, 0, NULL, np,
					     x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			break;
		}
		/* Runs against statuses, totals against both, as ever. */
		memcpy(np2, np, x->nr_nodes * sizeof(*np));
		np2[x->nr_nodes] = NP_NODE_FILL;
		if (it % 4 < 2) {
			EXPECT_EQ(0, qr_check_runs(x, "uffd", &q, runs,
						   it % 4 ? 3 : cap, x->qstart,
						   st, flags && !x->new_kernel));
		}
		EXPECT_EQ(0, qr_check_totals(x, "uffd", &q,
					     it % 4 == 3 ? NULL : st, q.done,
					     np2));
	}
	__atomic_store_n(&u.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	ksft_print_msg("%lu faults served\n", u.faults);
	EXPECT_GE(u.faults, 24);
	EXPECT_EQ(0, u.bad);
	EXPECT_EQ(0, x->bad);
	close(u.uffd);
	munmap(ub, upages * psz);
	munmap(u.src, psz);
}

/* ---- SIGKILL inside huge queries ---------------------------------- */

struct qr_killee {
	int fd;
	__u32 nr_nodes;
	char *big, *data;
	size_t big_len, data_len;
};

static void *qr_killee_totals(void *arg)
{
	struct qr_killee *k = arg;
	__u64 np[NUMAPLACE_MAX_NODES];
	struct numaplace_query q;

	for (;;)
		np_query_range(k->fd, 0, 0, QR_HUGE_START, QR_HUGE_LEN, NULL, 0,
			       NULL, np, k->nr_nodes, &q);
	return NULL;
}

static void *qr_killee_runs(void *arg)
{
	struct qr_killee *k = arg;
	static struct numaplace_run runs[4096];
	struct numaplace_query q;
	__u64 at = QR_HUGE_START;

	for (;;) {
		if (np_query_range(k->fd, 0, 0, at,
				   QR_HUGE_START + QR_HUGE_LEN - at, runs, 4096,
				   NULL, NULL, 0, &q) || !q.done)
			at = QR_HUGE_START;
		at += q.done * psz;
		if (at >= QR_HUGE_START + QR_HUGE_LEN)
			at = QR_HUGE_START;
	}
	return NULL;
}

static void *qr_killee_status(void *arg)
{
	struct qr_killee *k = arg;
	size_t n = k->big_len / psz;
	__s32 *st = malloc(n * sizeof(*st));
	struct numaplace_query q;

	if (!st)
		return NULL;
	for (;;) {
		np_query_range(k->fd, 0, 0, (uintptr_t)k->big, k->big_len, NULL,
			       0, st, NULL, 0, &q);
		np_query_range(k->fd, 0, NUMAPLACE_QUERY_AS_SYSCALL,
			       (uintptr_t)k->data, k->data_len, NULL, 0, st,
			       NULL, 0, &q);
	}
	return NULL;
}

/* The killee: huge queries in three threads, mmap lock writers here. */
static void qr_killee(int fd, __u32 nr_nodes, int ready)
{
	static void *(*const fns[])(void *) = {
		qr_killee_totals, qr_killee_runs, qr_killee_status,
	};
	struct qr_killee k = { .fd = fd, .nr_nodes = nr_nodes };
	unsigned int seed = getpid();
	pthread_t th;
	char *piece;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* 4 GiB with a page every 2 MiB: 2048 PTE tables to walk. */
	k.big_len = 4UL << 30;
	k.big = mmap(NULL, k.big_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	k.data_len = 32UL << 20;
	k.data = mmap(NULL, k.data_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	piece = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k.big == MAP_FAILED || k.data == MAP_FAILED || piece == MAP_FAILED)
		_exit(3);
	madvise(k.big, k.big_len, MADV_NOHUGEPAGE);
	for (size_t o = 0; o < k.big_len; o += QR_PMD)
		k.big[o + (rand_r(&seed) % 512) * psz] = 1;
	memset(k.data, 1, k.data_len);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th, NULL, fns[i], &k))
			_exit(4);
	if (write(ready, "r", 1) != 1)
		_exit(5);
	/* Writers of the mmap lock: queriers wait for it killably. */
	for (;;) {
		size_t o = (rand_r(&seed) % 2048) * QR_PMD;

		munmap(piece, 1 << 20);
		piece = mmap(piece, 1 << 20, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		madvise(k.big + o, QR_PMD, MADV_DONTNEED);
		k.big[o + (rand_r(&seed) % 512) * psz] = 1;
	}
}

/* A process inside huge queries dies promptly on SIGKILL, every time. */
TEST_F_TIMEOUT(qrace, sigkill, 120)
{
	NP_SKIPPED();
	long t0 = qr_ms(), worst = 0;
	unsigned int seed = 7;
	int kills = 0;

	while (kills < 3 || (qr_ms() - t0 < qr_race_ms() && kills < 8)) {
		int pfd[2], status = 0;
		long k0, dt;
		char c = 0;
		pid_t pid;

		ASSERT_EQ(0, pipe(pfd));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid) {
			close(pfd[0]);
			qr_killee(self->fd, self->c.nr_nodes, pfd[1]);
			_exit(6);
		}
		close(pfd[1]);
		ASSERT_EQ(1, read(pfd[0], &c, 1)) TH_LOG("killee setup failed");
		close(pfd[0]);
		usleep(50000 + rand_r(&seed) % 250000);
		k0 = qr_ms();
		ASSERT_EQ(0, kill(pid, SIGKILL));
		while (waitpid(pid, &status, WNOHANG) == 0 &&
		       qr_ms() - k0 < QR_KILL_WAIT_MS)
			usleep(5000);
		dt = qr_ms() - k0;
		worst = dt > worst ? dt : worst;
		EXPECT_LT(dt, QR_KILL_WAIT_MS) TH_LOG("kill %d took %ld ms", kills, dt);
		if (dt >= QR_KILL_WAIT_MS)
			waitpid(pid, &status, 0);
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			TH_LOG("status %#x", status);
		kills++;
	}
	ksft_print_msg("%d kills, the slowest death %ld ms\n", kills, worst);
}

NP_HARNESS_MAIN
