/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NUMAPLACE_IOC_QUERY race engine that query_race.c (the region's
 * mutators) and query_race_proc.c (other processes, user buffers,
 * SIGKILL) share: querier threads and the rules every answer must keep
 * (qrace_query.c), the region and its mutator threads (qrace_mut.c), and
 * the fixture's state (qr_env). Both are compiled once, into the tests'
 * library, and use no kselftest harness: what needs a test's _metadata
 * is a macro here.
 */
#ifndef NP_QRACE_H
#define NP_QRACE_H

#include <pthread.h>

#include "np_test.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
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
		   NUMAPLACE_KIND_FILE | NUMAPLACE_KIND_PROTNONE |	\
		   NUMAPLACE_KIND_YOUNG | NUMAPLACE_KIND_DIRTY)

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
	/* The access scan's flags the range queriers add every other call. */
	__u32 access_flags;
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

/* The fixture's state: the device, the race's context, the region. */
struct qr_env {
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	struct qr_ctx x;
	struct qr_region r;
	struct qr_saved saved[12];
	int nsaved;
};

/* The page size, set by qr_env_open(). */
extern long qr_psz;

/* Every querier type, for a race that runs them all. */
#define QR_NQ		4
extern const enum qr_qtype qr_all_q[QR_NQ];

/* ---- queriers and their checks (qrace_query.c) ------------------------ */

/* One race's length: NP_RACE_MS of the environment, or QR_RACE_MS. */
long qr_race_ms(void);

/* Count a broken rule in *@counter; the first QR_LOG_MAX are printed. */
void qr_log(struct qr_ctx *x, unsigned long *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define qr_bad(x, fmt, ...)  qr_log(x, &(x)->bad, fmt, ##__VA_ARGS__)
#define qr_hard(x, fmt, ...) qr_log(x, &(x)->hard, "mutator: " fmt, ##__VA_ARGS__)

int qr_stopped(struct qr_ctx *x);

/* THPs split so far (/proc/vmstat thp_split_page), or -1. */
long qr_thp_splits(void);

/*
 * The runs of one range-mode answer (a buffer of @cap) against every
 * rule; @st may be NULL. 0, or 1 after a broken rule was counted.
 */
int qr_check_runs(struct qr_ctx *x, const char *what,
		  const struct numaplace_query *q,
		  const struct numaplace_run *runs, __u32 cap,
		  unsigned long start, const __s32 *st, int legacy);

/* Totals against @n statuses, or (@st NULL) against done. 0 or 1. */
int qr_check_totals(struct qr_ctx *x, const char *what,
		    const struct numaplace_query *q, const __s32 *st,
		    size_t n, const __u64 *np);

/* A querier thread's buffers for @type, seeded @seed. 0 or -ENOMEM. */
int qr_q_alloc(struct qr_q *qq, struct qr_ctx *x, enum qr_qtype type,
	       unsigned int seed);

void qr_q_free(struct qr_q *qq);

/* The querier thread: asks in a loop until x->stop. */
void *qr_querier(void *arg);

/* ---- the region and the mutators (qrace_mut.c) ------------------------ */

/* Touch up to @max random pages of [p, p + pages). */
void qr_touch_some(char *p, size_t pages, size_t max, unsigned int *seed);

/* Anonymous private memory at @p, THP asked for, every page written. */
int qr_anon(char *p, size_t len, int thp, unsigned int *seed);

/* Each mutator's step, and the first state of its slice (0 or -errno). */
void qr_step_mmap(struct qr_mut *m);
void qr_step_mremap(struct qr_mut *m);
int qr_init_mremap(struct qr_mut *m);
void qr_step_mprotect(struct qr_mut *m);
void qr_step_rozap(struct qr_mut *m);
void qr_step_dontneed(struct qr_mut *m);
void qr_step_pageout(struct qr_mut *m);
void qr_step_collapse(struct qr_mut *m);
int qr_init_collapse(struct qr_mut *m);
void qr_step_shmem(struct qr_mut *m);
int qr_init_shmem(struct qr_mut *m);
void qr_step_fork(struct qr_mut *m);
void qr_step_hugetlb(struct qr_mut *m);
int qr_init_hugetlb(struct qr_mut *m);
int qr_init_anon(struct qr_mut *m);

/* The mutator thread: steps until x->stop. */
void *qr_mutator(void *arg);

/* A mutator of slice @i of the region. */
void qr_mut_init(struct qr_mut *m, struct qr_ctx *x, struct qr_region *r,
		 int i, const char *name, qr_step_fn step);

/* The stable pages, @nslices slices and the tail, mapped. 0 or -errno. */
int qr_region_init(struct qr_ctx *x, struct qr_region *r, int nslices);

/* Half the tail becomes a hole: no VMA. Call when nothing else maps. */
void qr_region_hole(struct qr_region *r);

void qr_region_free(struct qr_region *r);

/* ---- the fixture's state ---------------------------------------------- */

/*
 * The device, QUERY, the race's context; NUMA balancing off. 0; 1 with
 * the reason to skip in @why; or -errno with the step that failed.
 */
int qr_env_open(struct qr_env *e, char *why, size_t len);

void qr_env_close(struct qr_env *e);

/* Set a knob for this test; qr_env_close() puts the old value back. */
int qr_set(struct qr_env *e, const char *path, const char *val);

/* qr_env_open() in a fixture's setup: SKIP() or a failed assertion. */
#define QR_ENV_SETUP(e)							\
	do {								\
		char _why[160] = "";						\
		int _ret = qr_env_open(e, _why, sizeof(_why));		\
									\
		if (_ret > 0)						\
			SKIP(return, "%s", _why);			\
		ASSERT_EQ(0, _ret) TH_LOG("%s", _why);			\
	} while (0)

/* A fixture @name whose state is a qr_env (self->e). */
#define QR_FIXTURE(name)						\
	FIXTURE(name)							\
	{								\
		struct qr_env e;					\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		QR_ENV_SETUP(&self->e);					\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		qr_env_close(&self->e);					\
	}

#endif /* NP_QRACE_H */
