// SPDX-License-Identifier: GPL-2.0
/*
 * bench/stall: how long does a thread of the target wait while its memory
 * moves? (issue 35)
 *
 * T target threads (-t, default NP_THREADS_DEFAULT) touch a buffer of
 * NP_MIB_DEFAULT MiB (-m) without pause, one access a 4 KiB page (a read
 * and a write of the thread's own word of the page), page after page,
 * cycling; each access is timed with CLOCK_MONOTONIC. Meanwhile the main
 * thread, the mover, moves the whole buffer from node 0 to node 1 and back
 * with each method in turn: move_pages(2) with a nodes[] array (the
 * reference), numaplace's MIGRATE with the page-table engine
 * (NUMAPLACE_MIGRATE_ENGINE_PT), the batched engine and the module's
 * default choice. Per method, over every move: the best move time, the
 * longest single access of any target thread (the stall), the 99.9th
 * percentile of the accesses made during the moves and how many took
 * longer than -s microseconds (default NP_SLOW_US_DEFAULT). A row
 * "no move" records the same for a quiet stretch as long as the last
 * move, the mover asleep: what the scheduler alone costs the threads.
 *
 * Variants (-v): 4k (MADV_NOHUGEPAGE) and thp (MADV_HUGEPAGE, 2 MiB
 * aligned); both by default. Methods run A B C D / D C B A (-r rounds),
 * each round a move 0 -> 1 and a move 1 -> 0, both measured.
 *
 * Every access checks that the thread's word holds what it wrote there
 * one sweep before (a write a move lost, or a page's stale copy, shows as
 * another value); after every move every page must be on its target.
 * Anything else prints MISMATCH and the bench exits 1.
 *
 * With one vCPU (tools/vm/run --accel icount) the threads run only when
 * the mover sleeps or is preempted: what they measure is how long the
 * move keeps them off the CPU, and the migration entries they meet then.
 * With a vCPU each (tools/vm/run --cpus N, wall clock) they run beside
 * the mover and wait on its migration entries. With enough CPUs the mover
 * is pinned to the first allowed CPU and thread k to the (k + 2)-th.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "numaplace.h"
#include "bench.h"

/* The size: a 64 MiB move. */
#define NP_MIB_DEFAULT		64
/* -m: at least one PMD, at most what a 1 GiB guest node holds with room. */
#define NP_MIB_MAX		512
/* Two threads: the guest has a CPU per node (and one on node 2). */
#define NP_THREADS_DEFAULT	2
/* Each thread owns a word of every page: far below a page's 512 words. */
#define NP_THREADS_MAX		16
/* A B C D / D C B A: drift and warm-up hit every method alike. */
#define NP_ROUNDS_DEFAULT	2
/* "Slow": a tenth of a millisecond, far above an access (< 1 us). */
#define NP_SLOW_US_DEFAULT	100
#define NP_NSEC_PER_USEC	1000ULL
#define NP_NSEC_PER_MSEC	1000000ULL
/* x86-64 PMD (THP) size: the buffer is aligned to it. */
#define NP_PMD_SIZE		(2UL << 20)
#define NP_SRC_NODE		0
#define NP_DST_NODE		1
/* The "no move" stretch when no move ran yet (then: the last move's). */
#define NP_QUIET_MS_DEFAULT	100
/* The 99.9th percentile: per mille. */
#define NP_PERMILLE		1000
#define NP_PCTL_PERMILLE	999
/* x86-64's cache line: a thread's acknowledgement shares none. */
#define NP_CACHELINE		64


/*
 * Access times go to a log-linear histogram: below NP_HIST_SUB ns one
 * bucket a nanosecond, above it NP_HIST_SUB buckets per power of two
 * (a percentile is then at most 1 / NP_HIST_SUB = 6% above the truth:
 * the bucket's upper end is printed). Times of 2^NP_HIST_POW ns (18
 * minutes, longer than any run) and more share the last bucket.
 */
#define NP_HIST_SUB_BITS	4
#define NP_HIST_SUB		(1U << NP_HIST_SUB_BITS)
#define NP_HIST_POW		40
#define NP_HIST_BUCKETS		((NP_HIST_POW - NP_HIST_SUB_BITS + 1) * NP_HIST_SUB)

/* What the threads record an access into: its phase's kind. */
enum np_kind {
	NP_K_NONE,		/* between moves: not recorded */
	NP_K_MOVE,		/* a move is running */
	NP_K_QUIET,		/* the mover sleeps: the "no move" row */
	NP_NR_KINDS,
};
/* The phase word: a generation (bumped at every change) and a kind. */
#define NP_PHASE_KIND_BITS	2
#define NP_PHASE_KIND_MASK	((1U << NP_PHASE_KIND_BITS) - 1)

/* Accesses of one stretch (a move, a quiet stretch, or all of a method's). */
struct np_stats {
	uint64_t hist[NP_HIST_BUCKETS];
	uint64_t nr;		/* accesses */
	uint64_t nr_slow;	/* of them longer than np_slow_ns */
	uint64_t max_ns;	/* the longest */
	/*
	 * Slow accesses in which the thread slept (a voluntary context
	 * switch since its last slow access: a wait on a migration entry,
	 * or a lock), and the longest of them; the others were preempted.
	 */
	uint64_t nr_blocked, max_blocked_ns;
	/* Page faults and voluntary switches of the threads (getrusage). */
	uint64_t nr_faults, nr_vcsw;
};

/*
 * A target thread. Its stats are its own while the phase is a recorded
 * kind; the mover reads and clears them once the thread acknowledged the
 * next phase (@ack, stored after the last access of the old one).
 */
struct np_toucher {
	alignas(NP_CACHELINE) pthread_t thread;
	struct np_stall *s;
	int k;			/* its word of every page, its start page */
	int cpu;		/* pinned to, or -1 */
	atomic_uint ack;	/* the last phase it saw */
	uint64_t nr_bad;	/* words that were not what it wrote */
	struct rusage ru;	/* at its last look (phase or slow access) */
	struct np_stats st;
};

/* One buffer under test, its threads and the mover's arrays. */
struct np_stall {
	char *map, *buf;
	size_t map_len, len, nr_pages, page_size;
	int thp;
	void *arrays;		/* the per-page arrays' block */
	void **pages;		/* move_pages' pages[] of buf */
	int *to_dst, *to_src;	/* nodes[]: every page to one node */
	int *status;
	long thp_pages;		/* THP-backed base pages after populating */
	atomic_uint phase;
	atomic_int stop;
	int nr_threads;
	struct np_toucher *t;
};

/* A method: how the buffer moves to @node. 0 or -errno. */
struct np_method {
	const char *name;
	int (*fn)(struct np_stall *s, int node, unsigned int flags);
	unsigned int engine_flag;	/* NUMAPLACE_MIGRATE_ENGINE_* */
	unsigned long long feature;	/* INFO feature it needs, or 0 */
};

/* What one method measured over all its moves, for the table. */
struct np_result {
	struct np_stats st;
	double best_ms, sum_ms;
	unsigned int moves;
	unsigned int engines;	/* NUMAPLACE_ENGINE_* of its calls */
	int err;		/* errno of a failed move, or EIO */
};

static uint64_t np_slow_ns = NP_SLOW_US_DEFAULT * NP_NSEC_PER_USEC;
static unsigned long long np_features;
static long np_mismatches;

static int np_m_move_pages(struct np_stall *s, int node, unsigned int flags)
{
	long ret = syscall(SYS_move_pages, 0, s->nr_pages, s->pages,
			   node == NP_DST_NODE ? s->to_dst : s->to_src,
			   s->status, MPOL_MF_MOVE);

	if (ret < 0)
		return -errno;
	/* A positive return: pages that did not move. */
	return ret ? -EAGAIN : 0;
}

static unsigned int np_last_engines;

static int np_m_migrate(struct np_stall *s, int node, unsigned int flags)
{
	struct numaplace_migrate r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.flags = flags;
	r.start = (uintptr_t)s->buf;
	r.len = s->len;
	r.policy = NUMAPLACE_POLICY_NODE;
	r.node = node;
	ret = numaplace_migrate(&r);
	np_last_engines = r.engines;
	if (ret)
		return ret;
	if (r.done != s->nr_pages || r.nr_failed_pages)
		return -EAGAIN;
	return 0;
}

enum np_method_id {
	NP_M_MOVE_PAGES,
	NP_M_PT,
	NP_M_BATCH,
	NP_M_DEFAULT,
	NP_NR_METHODS,
};

static const struct np_method np_methods[NP_NR_METHODS] = {
	[NP_M_MOVE_PAGES] = { "move_pages(2)", np_m_move_pages, 0, 0 },
	[NP_M_PT] = { "MIGRATE engine pt", np_m_migrate,
		      NUMAPLACE_MIGRATE_ENGINE_PT, NUMAPLACE_FEAT_MIGRATE_PT },
	[NP_M_BATCH] = { "MIGRATE engine batch", np_m_migrate,
			 NUMAPLACE_MIGRATE_ENGINE_BATCH,
			 NUMAPLACE_FEAT_MIGRATE_BATCH },
	[NP_M_DEFAULT] = { "MIGRATE default", np_m_migrate, 0, ~0ULL },
};

static int np_method_available(int m)
{
	unsigned long long f = np_methods[m].feature;

	if (!f)
		return 1;
	return f == ~0ULL ? np_features != 0 : (np_features & f) != 0;
}

static unsigned int np_hist_bucket(uint64_t ns)
{
	unsigned int p;

	if (ns < NP_HIST_SUB)
		return ns;
	if (ns >> NP_HIST_POW)
		return NP_HIST_BUCKETS - 1;
	p = 63 - __builtin_clzll(ns);
	return (p - NP_HIST_SUB_BITS + 1) * NP_HIST_SUB +
	       ((ns >> (p - NP_HIST_SUB_BITS)) & (NP_HIST_SUB - 1));
}

/* The largest time bucket @b holds. */
static uint64_t np_hist_upper(unsigned int b)
{
	unsigned int p, sub;

	if (b < NP_HIST_SUB)
		return b;
	p = b / NP_HIST_SUB + NP_HIST_SUB_BITS - 1;
	sub = b % NP_HIST_SUB;
	return (((uint64_t)NP_HIST_SUB + sub + 1) << (p - NP_HIST_SUB_BITS)) - 1;
}

static void np_stats_add(struct np_stats *to, const struct np_stats *from)
{
	unsigned int b;

	for (b = 0; b < NP_HIST_BUCKETS; b++)
		to->hist[b] += from->hist[b];
	to->nr += from->nr;
	to->nr_slow += from->nr_slow;
	if (from->max_ns > to->max_ns)
		to->max_ns = from->max_ns;
	to->nr_blocked += from->nr_blocked;
	if (from->max_blocked_ns > to->max_blocked_ns)
		to->max_blocked_ns = from->max_blocked_ns;
	to->nr_faults += from->nr_faults;
	to->nr_vcsw += from->nr_vcsw;
}

/* The time that @permille of the accesses took at most (bucket's top). */
static uint64_t np_stats_pctl(const struct np_stats *st, unsigned int permille)
{
	uint64_t want, seen = 0;
	unsigned int b;

	if (!st->nr)
		return 0;
	/* The rank of the percentile, rounded up: at least one access. */
	want = (st->nr * permille + NP_PERMILLE - 1) / NP_PERMILLE;
	for (b = 0; b < NP_HIST_BUCKETS; b++) {
		seen += st->hist[b];
		if (seen >= want)
			break;
	}
	if (b == NP_HIST_BUCKETS)
		b--;
	/* Never above the longest, which is exact. */
	return np_hist_upper(b) < st->max_ns ? np_hist_upper(b) : st->max_ns;
}

/* The data of page @p's word @k before any thread wrote it. */
static inline uint64_t np_pattern(size_t p, int k)
{
	return ((uint64_t)p << 8 | (uint64_t)k) * 0x9e3779b97f4a7c15ULL;
}

/* Thread @k's word of page @p after its sweep @sweep (1, 2, ...). */
static inline uint64_t np_word(size_t p, int k, uint64_t sweep)
{
	return sweep ? np_pattern(p, k) ^ (sweep << 1 | 1) : np_pattern(p, k);
}

static unsigned int np_phase_kind(unsigned int phase)
{
	return phase & NP_PHASE_KIND_MASK;
}

static int np_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * The thread's faults and voluntary switches since its last look, into
 * its stats when @record; 1 when it slept since (a voluntary switch).
 */
static int np_rusage(struct np_toucher *t, int record)
{
	struct rusage ru;
	int slept;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	slept = ru.ru_nvcsw != t->ru.ru_nvcsw;
	if (record) {
		t->st.nr_faults += ru.ru_minflt + ru.ru_majflt -
				   t->ru.ru_minflt - t->ru.ru_majflt;
		t->st.nr_vcsw += ru.ru_nvcsw - t->ru.ru_nvcsw;
	}
	t->ru = ru;
	return slept;
}

/* An access longer than np_slow_ns: did the thread sleep in it? */
static void np_slow(struct np_toucher *t, uint64_t ns)
{
	t->st.nr_slow++;
	if (!np_rusage(t, 1))
		return;
	t->st.nr_blocked++;
	if (ns > t->st.max_blocked_ns)
		t->st.max_blocked_ns = ns;
}

/*
 * A target thread: from its own start page, one timed access a page,
 * cycling, until told to stop. It records only accesses that began in a
 * recorded phase, and acknowledges a phase after its first access in it.
 */
static void *np_toucher(void *arg)
{
	struct np_toucher *t = arg;
	struct np_stall *s = t->s;
	size_t per_page = s->page_size / sizeof(uint64_t);
	size_t p = (size_t)t->k * s->nr_pages / s->nr_threads;
	uint64_t *words = (uint64_t *)s->buf, *w, sweep = 1, t0, ns, v;
	unsigned int phase, seen = NP_K_NONE;	/* np_threads_start()'s */
	size_t left = s->nr_pages;

	np_pin(t->cpu);
	np_rusage(t, 0);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
		phase = atomic_load_explicit(&s->phase, memory_order_acquire);
		w = &words[p * per_page + t->k];
		t0 = np_bench_now_ns();
		/* Relaxed atomics: a load and a store the compiler keeps. */
		v = __atomic_load_n(w, __ATOMIC_RELAXED);
		__atomic_store_n(w, np_word(p, t->k, sweep), __ATOMIC_RELAXED);
		ns = np_bench_now_ns() - t0;
		if (v != np_word(p, t->k, sweep - 1) &&
		    t->nr_bad++ < NP_BENCH_REPORTS)
			printf("MISMATCH thread %d page %zu (%p): %#llx, it wrote %#llx\n",
			       t->k, p, (void *)w, (unsigned long long)v,
			       (unsigned long long)np_word(p, t->k, sweep - 1));
		if (np_phase_kind(phase) != NP_K_NONE) {
			t->st.hist[np_hist_bucket(ns)]++;
			t->st.nr++;
			if (ns > t->st.max_ns)
				t->st.max_ns = ns;
			if (ns > np_slow_ns)
				np_slow(t, ns);
		}
		if (phase != seen) {
			np_rusage(t, np_phase_kind(seen) != NP_K_NONE);
			seen = phase;
			atomic_store_explicit(&t->ack, phase,
					      memory_order_release);
		}
		if (++p == s->nr_pages)
			p = 0;
		if (!--left) {
			left = s->nr_pages;
			sweep++;
		}
	}
	return NULL;
}

/* The mover while it waits for the threads: off the CPU they may share. */
static void np_yield(void)
{
	sched_yield();
}

/*
 * Enter a phase of kind @kind and wait until every thread saw it: after
 * that, the stats of the phase before are complete and the mover's.
 */
static void np_phase(struct np_stall *s, unsigned int kind)
{
	unsigned int phase = atomic_load(&s->phase);
	int k;

	phase = ((phase >> NP_PHASE_KIND_BITS) + 1) << NP_PHASE_KIND_BITS | kind;
	atomic_store_explicit(&s->phase, phase, memory_order_release);
	for (k = 0; k < s->nr_threads; k++)
		while (atomic_load_explicit(&s->t[k].ack,
					    memory_order_acquire) != phase)
			np_yield();
}

/* Take the threads' stats of the phase that ended into @to, and clear them. */
static void np_collect(struct np_stall *s, struct np_stats *to)
{
	int k;

	memset(to, 0, sizeof(*to));
	for (k = 0; k < s->nr_threads; k++) {
		np_stats_add(to, &s->t[k].st);
		memset(&s->t[k].st, 0, sizeof(s->t[k].st));
	}
}

/* The buffer on NP_SRC_NODE, every word its pattern. 0 or -1. */
static int np_stall_setup(struct np_stall *s, size_t len, int thp,
			  int nr_threads)
{
	int **const ints[] = { &s->to_dst, &s->to_src, &s->status };
	uint64_t *words;
	size_t i, per_page;

	memset(s, 0, sizeof(*s));
	s->len = len;
	s->thp = thp;
	s->nr_threads = nr_threads;
	s->arrays = np_bench_pages_alloc(len, "stall", &s->page_size,
					 &s->nr_pages, &s->pages, ints,
					 NP_ARRAY_SIZE(ints));
	if (!s->arrays)
		return -1;
	s->t = calloc(nr_threads, sizeof(*s->t));
	if (!s->t) {
		fprintf(stderr, "stall: out of memory\n");
		return -1;
	}
	s->buf = np_bench_map(len, NP_PMD_SIZE, thp, thp ? "thp" : "4k",
			      &s->map, &s->map_len);
	if (!s->buf)
		return -1;
	np_bench_bind_say(NP_SRC_NODE, "stall");
	words = (uint64_t *)s->buf;
	per_page = s->page_size / sizeof(*words);
	for (i = 0; i < len / sizeof(*words); i++)
		words[i] = np_pattern(i / per_page, i % per_page);
	np_bench_bind(-1);
	for (i = 0; i < s->nr_pages; i++) {
		s->pages[i] = s->buf + i * s->page_size;
		s->to_dst[i] = NP_DST_NODE;
		s->to_src[i] = NP_SRC_NODE;
	}
	s->thp_pages = np_bench_smaps_thp_pages(s->buf, s->page_size);
	return 0;
}

static void np_stall_teardown(struct np_stall *s)
{
	if (s->map)
		munmap(s->map, s->map_len);
	free(s->arrays);
	free(s->t);
}

/*
 * The allowed CPUs, in order, into @cpus (at most @max); their number.
 * The mover takes the first and thread k the (k + 2)-th when there are
 * more than the threads; otherwise nobody is pinned.
 */
static int np_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int c, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

static int np_threads_start(struct np_stall *s, const int *cpus, int nr_cpus)
{
	int k, ret;

	atomic_store(&s->stop, 0);
	atomic_store(&s->phase, NP_K_NONE);
	for (k = 0; k < s->nr_threads; k++) {
		s->t[k].s = s;
		s->t[k].k = k;
		s->t[k].cpu = nr_cpus > s->nr_threads ? cpus[k + 1] : -1;
		atomic_store(&s->t[k].ack, ~0U);
		ret = -pthread_create(&s->t[k].thread, NULL, np_toucher,
				      &s->t[k]);
		if (ret) {
			atomic_store(&s->stop, 1);
			while (k--)
				pthread_join(s->t[k].thread, NULL);
			return ret;
		}
	}
	/* Every thread runs before the first measurement. */
	np_phase(s, NP_K_NONE);
	return 0;
}

static void np_threads_stop(struct np_stall *s)
{
	int k;

	atomic_store(&s->stop, 1);
	for (k = 0; k < s->nr_threads; k++)
		pthread_join(s->t[k].thread, NULL);
}

/* Pages not on @node by the syscall's query; the first few printed. */
static size_t np_off_node(struct np_stall *s, int node, const char *what)
{
	return np_bench_off_node(s->pages, s->nr_pages, s->status, NULL, node,
				 "MISMATCH", s->thp ? "thp" : "4k", what);
}

static void np_print_stats_line(const char *what, const char *dir,
				double ms, const struct np_stats *st)
{
	printf("  %-20s %-6s %7.1f ms  longest %8.1f us (slept %8.1f)  p99.9 %6.1f us  > %llu us %5llu (slept %5llu)  of %8llu, %6llu faults\n",
	       what, dir, ms, st->max_ns / 1e3, st->max_blocked_ns / 1e3,
	       np_stats_pctl(st, NP_PCTL_PERMILLE) / 1e3,
	       (unsigned long long)(np_slow_ns / NP_NSEC_PER_USEC),
	       (unsigned long long)st->nr_slow,
	       (unsigned long long)st->nr_blocked,
	       (unsigned long long)st->nr,
	       (unsigned long long)st->nr_faults);
}

/* A quiet stretch of @ms with the mover asleep, into @res. */
static void np_quiet(struct np_stall *s, double ms, struct np_result *res)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ms / 1e3),
		.tv_nsec = (long)((ms - (time_t)(ms / 1e3) * 1e3) * 1e6),
	};
	struct np_stats st;
	uint64_t t0 = np_bench_now_ns();

	np_phase(s, NP_K_QUIET);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	np_phase(s, NP_K_NONE);
	np_collect(s, &st);
	ms = (double)(np_bench_now_ns() - t0) / NP_NSEC_PER_MSEC;
	np_print_stats_line("no move", "-", ms, &st);
	np_stats_add(&res->st, &st);
	res->sum_ms += ms;
	res->moves++;
	if (!res->best_ms || ms < res->best_ms)
		res->best_ms = ms;
}

/* One timed move with method @m to @node, into @res. */
static void np_move(struct np_stall *s, int m, int node, struct np_result *res)
{
	const struct np_method *me = &np_methods[m];
	const char *dir = node == NP_DST_NODE ? "0 -> 1" : "1 -> 0";
	struct np_stats st;
	uint64_t t0, ns;
	size_t off;
	double ms;
	int ret;

	np_last_engines = 0;
	np_phase(s, NP_K_MOVE);
	t0 = np_bench_now_ns();
	ret = me->fn(s, node, me->engine_flag);
	ns = np_bench_now_ns() - t0;
	np_phase(s, NP_K_NONE);
	np_collect(s, &st);
	ms = (double)ns / NP_NSEC_PER_MSEC;
	if (ret) {
		printf("stall %s: %s %s: %s\n", s->thp ? "thp" : "4k",
		       me->name, dir, strerror(-ret));
		res->err = -ret;
	}
	np_print_stats_line(me->name, dir, ms, &st);
	off = np_off_node(s, node, me->name);
	if (off) {
		printf("MISMATCH %s %s %s: %zu pages not on node %d\n",
		       s->thp ? "thp" : "4k", me->name, dir, off, node);
		if (m != NP_M_MOVE_PAGES)
			np_mismatches++;
		res->err = EIO;
	}
	np_stats_add(&res->st, &st);
	res->engines |= np_last_engines;
	res->sum_ms += ms;
	res->moves++;
	if (!res->best_ms || ms < res->best_ms)
		res->best_ms = ms;
}

static void np_print_row(const char *name, const struct np_result *r)
{
	char eng[32];

	np_bench_engines(r->engines, eng, sizeof(eng));
	if (r->err) {
		printf("%-22s %s\n", name, strerror(r->err));
		return;
	}
	printf("%-22s %8.1f %8.1f %11.1f %11.1f %8.1f %7llu %6.1f %7llu %9llu %7llu  %s\n",
	       name, r->best_ms, r->moves ? r->sum_ms / r->moves : 0,
	       r->st.max_ns / 1e3, r->st.max_blocked_ns / 1e3,
	       np_stats_pctl(&r->st, NP_PCTL_PERMILLE) / 1e3,
	       (unsigned long long)r->st.nr_slow,
	       r->moves ? (double)r->st.nr_slow / r->moves : 0,
	       (unsigned long long)r->st.nr_blocked,
	       (unsigned long long)r->st.nr,
	       (unsigned long long)r->st.nr_faults, eng);
}

/* One variant: every method, A B C D / D C B A, -r rounds. 0 or -1. */
static int np_variant(size_t len, int thp, int nr_threads,
		      unsigned long rounds)
{
	struct np_result res[NP_NR_METHODS], quiet;
	int cpus[NP_THREADS_MAX + 1], nr_cpus, i, m, ret;
	const char *name = thp ? "thp" : "4k";
	struct np_stall s;
	uint64_t nr_bad = 0;
	double last_ms = NP_QUIET_MS_DEFAULT;
	unsigned long r;

	memset(res, 0, sizeof(res));
	memset(&quiet, 0, sizeof(quiet));
	if (np_stall_setup(&s, len, thp, nr_threads)) {
		np_stall_teardown(&s);
		return -1;
	}
	nr_cpus = np_cpus(cpus, NP_ARRAY_SIZE(cpus));
	printf("variant %s: %zu pages, THP-backed after populating: %ld; %d threads, %d CPUs: %s\n",
	       name, s.nr_pages, s.thp_pages, nr_threads, nr_cpus,
	       nr_cpus > nr_threads ? "mover and threads pinned, a CPU each" :
	       "not pinned (fewer CPUs than threads + mover)");
	if (nr_cpus > nr_threads)
		np_pin(cpus[0]);
	ret = np_threads_start(&s, cpus, nr_cpus);
	if (ret) {
		printf("stall: threads: %s\n", strerror(-ret));
		np_stall_teardown(&s);
		return -1;
	}
	for (r = 0; r < rounds; r++) {
		np_quiet(&s, last_ms, &quiet);
		for (i = 0; i < NP_NR_METHODS; i++) {
			m = r & 1 ? NP_NR_METHODS - 1 - i : i;
			if (!np_method_available(m) || res[m].err)
				continue;
			np_move(&s, m, NP_DST_NODE, &res[m]);
			if (res[m].err)
				continue;
			np_move(&s, m, NP_SRC_NODE, &res[m]);
			last_ms = res[m].best_ms;
		}
		printf("  THP-backed pages after round %lu: %ld\n", r + 1,
		       np_bench_smaps_thp_pages(s.buf, s.page_size));
	}
	/* The buffer back home whatever failed, for the next variant. */
	if (np_off_node(&s, NP_SRC_NODE, "end"))
		syscall(SYS_move_pages, 0, s.nr_pages, s.pages, s.to_src,
			s.status, MPOL_MF_MOVE);
	np_threads_stop(&s);
	for (i = 0; i < nr_threads; i++)
		nr_bad += s.t[i].nr_bad;

	printf("\n%s, %zu MiB, %d threads, %u moves a method (0 -> 1 and back, %lu rounds):\n",
	       name, len >> 20, nr_threads, res[NP_M_MOVE_PAGES].moves, rounds);
	printf("%-22s %8s %8s %11s %11s %8s %7s %6s %7s %9s %7s  %s\n",
	       "method", "best ms", "mean ms", "longest us", "slept us",
	       "p99.9 us", "> slow", "/move", "slept", "accesses", "faults",
	       "engines");
	for (m = 0; m < NP_NR_METHODS; m++)
		if (np_method_available(m))
			np_print_row(np_methods[m].name, &res[m]);
	np_print_row("no move (asleep)", &quiet);
	printf("(longest: of any thread's accesses during the moves, \"slept\" of those in which it slept, the others were preempted;\n"
	       " \"> slow\": accesses longer than %llu us, all moves, and of them \"slept\"; p99.9 of the accesses during the moves)\n\n",
	       (unsigned long long)(np_slow_ns / NP_NSEC_PER_USEC));
	if (nr_bad) {
		printf("MISMATCH %s: %llu accesses found another value than the thread wrote\n",
		       name, (unsigned long long)nr_bad);
		np_mismatches += nr_bad;
	}
	np_stall_teardown(&s);
	for (m = 0; m < NP_NR_METHODS; m++)
		if (np_method_available(m) && res[m].err)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long any = NUMAPLACE_FEAT_MIGRATE_KERNEL |
				 NUMAPLACE_FEAT_MIGRATE_VMA |
				 NUMAPLACE_FEAT_MIGRATE_BATCH |
				 NUMAPLACE_FEAT_MIGRATE_PT;
	unsigned long mib = NP_MIB_DEFAULT, threads = NP_THREADS_DEFAULT,
		      rounds = NP_ROUNDS_DEFAULT, slow_us = NP_SLOW_US_DEFAULT;
	const char *variant = NULL;
	const struct np_bench_opt opts[] = {
		{ 'm', &mib, NULL, NULL },
		{ 't', &threads, NULL, NULL },
		{ 'r', &rounds, NULL, NULL },
		{ 's', &slow_us, NULL, NULL },
		{ 'v', NULL, &variant, NULL },
	};
	struct numaplace_info info;
	struct utsname uts;
	char balancing[16];
	int err, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	err = np_bench_getopt(argc, argv, opts, NP_ARRAY_SIZE(opts),
			      "usage: stall [-m MIB] [-t THREADS] [-r ROUNDS] [-s SLOW_US] [-v 4k|thp]\n");
	if (err)
		return err;
	if (mib < NP_PMD_SIZE >> 20 || mib > NP_MIB_MAX || !threads ||
	    threads > NP_THREADS_MAX || !rounds ||
	    (variant && strcmp(variant, "4k") && strcmp(variant, "thp"))) {
		fprintf(stderr, "stall: -m %lu..%d, -t 1..%d, -r 1.., -v 4k|thp\n",
			NP_PMD_SIZE >> 20, NP_MIB_MAX, NP_THREADS_MAX);
		return 2;
	}
	np_slow_ns = slow_us * NP_NSEC_PER_USEC;
	uname(&uts);
	printf("numaplace stall bench: kernel %s, %lu MiB anonymous, %lu threads touch it, node %d <-> %d, %lu rounds (A B .. / .. B A), %ld online CPUs\n",
	       uts.release, mib, threads, NP_SRC_NODE, NP_DST_NODE, rounds,
	       sysconf(_SC_NPROCESSORS_ONLN));
	np_features = np_bench_probe(&info, NUMAPLACE_CMD_MIGRATE, any,
				     "cannot migrate", "the syscall's row", &err);
	if (!err && np_bench_nodes_missing(&info, NP_SRC_NODE, NP_DST_NODE,
					   "stall"))
		return 1;
	np_bench_balancing_say(balancing, sizeof(balancing));
	if (!variant || !strcmp(variant, "4k"))
		failed |= np_variant(mib << 20, 0, threads, rounds);
	if (!variant || !strcmp(variant, "thp"))
		failed |= np_variant(mib << 20, 1, threads, rounds);
	np_bench_balancing_restore(balancing);
	if (np_bench_verdict(np_mismatches, failed))
		return 1;
	printf("verify: every access found what its thread last wrote; after every move each page was on its target\n");
	return 0;
}
