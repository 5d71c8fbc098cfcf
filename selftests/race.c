// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE under races: nothing lost.
 *
 * A writer thread stamps every page of a private anonymous region (each
 * 64-bit word from the page index, a generation and its position): before
 * it writes a page it checks the page still holds what it wrote last. The
 * main thread moves the region between nodes 0 and 1 in a loop, and a
 * disturber changes the memory under both at the same time: munmap and
 * mmap again, mremap (MAYMOVE | FIXED, DONTUNMAP) away and back, fork with
 * a child that checks its copy and writes its own (copy-on-write),
 * MADV_DONTNEED / FREE / PAGEOUT, mprotect, mlock, THP split and collapse,
 * a second numaplace migration, move_pages(2). The disturber takes the
 * per-page locks of what it changes and records what the page must hold
 * afterwards (the same stamp, zeroes, either). Other tests migrate a
 * target that exits or execs mid-call, and a page pinned by vmsplice().
 *
 * "Nothing lost" (shared/docs/reliability.md):
 *  1. every page holds its last stamp (or the zeroes the disturber made);
 *  2. no SIGBUS/SIGSEGV in the process, fork children exit 0;
 *  3. (shared mappings: migrate_integrity.c shared_fork, memfd, tmpfs)
 *  4. nr_isolated_anon/file back to their baseline, module refcount back;
 *  5. the guest's kernel log stays clean (tools/vm/run fails the run).
 * Every call returns 0, every status is the target node or an errno the
 * race explains, and the counters add up.
 *
 * Each race runs NP_RC_MS (NP_RACE_MS in the environment changes it), once
 * per migration engine (a variant whose engine is missing or answers
 * EOPNOTSUPP is skipped).
 */
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "np_test.h"
#include "kselftest_harness.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif

#define NP_PMD			(2UL << 20)
/* Pages of the region: one PMD (a THP in the thp race). */
#define NP_RC_PAGES		512
/* Pages one disturber step changes at most. */
#define NP_RC_SLICE		32
/* Pages one madvise step changes at most (see np_rc_madvise()). */
#define NP_RC_PAGEOUT_MAX	8
/* One race's length (under TCG: a few dozen migrations). */
#define NP_RC_MS		1500
/* Migrations of the region at least, however long they take. */
#define NP_RC_MIN_ROUNDS	3
/* The disturber's pause between steps, at most. */
#define NP_RC_PAUSE_US		2000
/* A fork child checks its copy for this long while we migrate. */
#define NP_RC_CHILD_MS		200
/* Targets that exit or exec, one after the other. */
#define NP_RC_TARGETS		6
/* Wait this long for nr_isolated_* to settle back. */
#define NP_RC_SETTLE_MS		3000
/* Mismatch lines printed before they are only counted. */
#define NP_RC_LOG_MAX		8
/* A migration call this long is reported with every thread's stack. */
#define NP_RC_STUCK_MS		20000

/* Generation values with a meaning (the rest are stamps). */
#define NP_RC_ZERO		0ULL		/* the page reads all zeroes */
#define NP_RC_GONE		(~0ULL)		/* not mapped: not checked */
#define NP_RC_OR_ZERO		(1ULL << 62)	/* this stamp, or zeroes */

static long psz;

struct np_rc;
typedef void (*np_rc_step_fn)(struct np_rc *x, __u64 *rng);

/* One race. */
struct np_rc {
	int fd;
	__u32 eflags;		/* the variant's engine flag */
	__u32 allowed;		/* engines it may report */
	char *buf;		/* the region */
	char *spare;		/* where mremap moves a slice meanwhile */
	size_t n;
	atomic_int stop;
	atomic_int *lock;	/* per page: the writer or the disturber */
	_Atomic __u64 *gen;	/* per page: what it must hold */
	atomic_ullong next_gen;
	atomic_long errors;
	atomic_long writes;
	atomic_long steps;
	atomic_long logged;
	atomic_int kid;		/* fork child being checked, or 0 */
	atomic_long kids_bad;	/* children that did not exit 0 */
	atomic_int move_all;	/* the main thread adds MOVE_ALL */
	atomic_long call_ms;	/* when the main thread's call began, or 0 */
	np_rc_step_fn step;
};

static __u64 np_rc_rand(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}


static void np_rc_log(struct np_rc *x, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(&x->errors, 1);
	if (atomic_fetch_add(&x->logged, 1) >= NP_RC_LOG_MAX)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "# ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* 1 if page @i holds what generation value @g says. */
static int np_rc_ok(const struct np_rc *x, size_t i, __u64 g)
{
	const volatile __u64 *w = (const __u64 *)(x->buf + i * psz);
	int stamp = 1, zero = 1;

	if (g == NP_RC_GONE)
		return 1;
	for (size_t k = 0; k < psz / 8 && (stamp || zero); k++) {
		__u64 v = w[k];

		zero &= v == 0;
		stamp &= g != NP_RC_ZERO &&
			 v == np_stamp_word(i, g & ~NP_RC_OR_ZERO, k);
	}
	if (g == NP_RC_ZERO)
		return zero;
	return stamp || ((g & NP_RC_OR_ZERO) && zero);
}

static void np_rc_lock(struct np_rc *x, size_t i)
{
	int free = 0;

	while (!atomic_compare_exchange_weak(&x->lock[i], &free, 1)) {
		free = 0;
		sched_yield();
	}
}

static void np_rc_unlock(struct np_rc *x, size_t i)
{
	atomic_store(&x->lock[i], 0);
}

static void np_rc_lock_range(struct np_rc *x, size_t i, size_t k)
{
	for (size_t j = i; j < i + k; j++)
		np_rc_lock(x, j);
}

static void np_rc_unlock_range(struct np_rc *x, size_t i, size_t k)
{
	for (size_t j = i; j < i + k; j++)
		np_rc_unlock(x, j);
}

static void np_rc_mark(struct np_rc *x, size_t i, size_t k, __u64 g)
{
	for (size_t j = i; j < i + k; j++)
		atomic_store(&x->gen[j], g);
}

/* Check page @i, then stamp a new generation. The caller holds its lock. */
static void np_rc_write_page(struct np_rc *x, size_t i)
{
	__u64 g = atomic_load(&x->gen[i]), ng;
	volatile __u64 *w = (__u64 *)(x->buf + i * psz);

	if (g == NP_RC_GONE)
		return;
	if (!np_rc_ok(x, i, g))
		np_rc_log(x, "page %zu: not generation %#llx (word 0: %#llx)",
			  i, (unsigned long long)g, (unsigned long long)w[0]);
	ng = atomic_fetch_add(&x->next_gen, 1);
	for (size_t k = 0; k < psz / 8; k++)
		w[k] = np_stamp_word(i, ng, k);
	atomic_store(&x->gen[i], ng);
	atomic_fetch_add(&x->writes, 1);
}

static void *np_rc_writer(void *arg)
{
	struct np_rc *x = arg;

	while (!atomic_load(&x->stop)) {
		for (size_t i = 0; i < x->n && !atomic_load(&x->stop); i++) {
			np_rc_lock(x, i);
			np_rc_write_page(x, i);
			np_rc_unlock(x, i);
		}
	}
	return NULL;
}

static void *np_rc_disturber(void *arg)
{
	struct np_rc *x = arg;
	__u64 rng = 0x5eed ^ (uintptr_t)x->buf;

	while (!atomic_load(&x->stop)) {
		x->step(x, &rng);
		atomic_fetch_add(&x->steps, 1);
		usleep(np_rc_rand(&rng) % NP_RC_PAUSE_US);
	}
	return NULL;
}

/* Print every thread's kernel stack (root): where a stuck call waits. */
static void np_rc_dump_stacks(void)
{
	char path[300], buf[4096];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stack",
			 d->d_name);
		if (np_read_str(path, buf, sizeof(buf)))
			continue;
		/* np_read_str() keeps the first line; read it whole. */
		{
			FILE *f = fopen(path, "re");
			size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

			buf[len] = 0;
			if (f)
				fclose(f);
		}
		fprintf(stderr, "# task %s:\n%s", d->d_name, buf);
	}
	if (dir)
		closedir(dir);
}

static void *np_rc_watchdog(void *arg)
{
	struct np_rc *x = arg;

	while (!atomic_load(&x->stop)) {
		long since = atomic_load(&x->call_ms);

		if (since && np_mono_ms() - since > NP_RC_STUCK_MS) {
			np_rc_log(x, "a migration call is stuck for %d ms",
				  NP_RC_STUCK_MS);
			np_rc_dump_stacks();
			/* Running tasks show no stack there: every CPU's. */
			np_write_str("/proc/sysrq-trigger", "l");
			return NULL;
		}
		usleep(100000);
	}
	return NULL;
}

/* A random slice [*i, *i + *k) of the region. */
static void np_rc_slice(struct np_rc *x, __u64 *rng, size_t *i, size_t *k)
{
	*k = 1 + np_rc_rand(rng) % NP_RC_SLICE;
	*i = np_rc_rand(rng) % (x->n - *k + 1);
}

/* ---- disturbers ---------------------------------------------------- */

static void np_rc_munmap(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p;

	np_rc_slice(x, rng, &i, &k);
	p = x->buf + i * psz;
	np_rc_lock_range(x, i, k);
	munmap(p, k * psz);
	np_rc_mark(x, i, k, NP_RC_GONE);
	usleep(np_rc_rand(rng) % NP_RC_PAUSE_US);
	if (mmap(p, k * psz, PROT_READ | PROT_WRITE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == p)
		np_rc_mark(x, i, k, NP_RC_ZERO);
	np_rc_unlock_range(x, i, k);
}

static void np_rc_mremap(struct np_rc *x, __u64 *rng)
{
	int dontunmap = np_rc_rand(rng) & 1;
	size_t i, k, len;
	void *q;
	char *p;

	np_rc_slice(x, rng, &i, &k);
	p = x->buf + i * psz;
	len = k * psz;
	np_rc_lock_range(x, i, k);
	q = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED |
		   (dontunmap ? MREMAP_DONTUNMAP : 0), x->spare);
	if (q == x->spare) {
		usleep(np_rc_rand(rng) % NP_RC_PAUSE_US);
		/* Back over the hole (or the empty DONTUNMAP mapping). */
		if (mremap(x->spare, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   p) != p) {
			np_rc_log(x, "mremap back: %s", strerror(errno));
			np_rc_mark(x, i, k, NP_RC_GONE);
		}
		/* The spare area stays ours. */
		mmap(x->spare, NP_RC_SLICE * psz, PROT_NONE,
		     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		     -1, 0);
	}
	np_rc_unlock_range(x, i, k);
}

/* The fork child: its copy holds what the parent had; then it writes. */
static void np_rc_child(struct np_rc *x, __u64 seed)
{
	long bad = 0, t0 = np_mono_ms();

	/* No PR_SET_PDEATHSIG: it fires when the forking thread ends. */
	atomic_store(&x->stop, 1);	/* our copy: no threads here */
	do {
		for (size_t i = 0; i < x->n; i++) {
			__u64 g = atomic_load(&x->gen[i]);

			if (!np_rc_ok(x, i, g)) {
				if (!bad++)
					fprintf(stderr, "# child: page %zu not %#llx\n",
						i, (unsigned long long)g);
			}
			/* Our own stamps on some pages: copy-on-write. */
			if (g != NP_RC_GONE && (i + seed) % 3 == 0)
				np_rc_write_page(x, i);
		}
	} while (np_mono_ms() - t0 < NP_RC_CHILD_MS);
	_exit(bad || atomic_load(&x->errors) ? 1 : 0);
}

static void np_rc_reap(struct np_rc *x, int wait)
{
	pid_t kid = atomic_load(&x->kid);
	int status;

	if (!kid || waitpid(kid, &status, wait ? 0 : WNOHANG) != kid)
		return;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		np_rc_log(x, "fork child %d: status %#x", kid, status);
	atomic_store(&x->kid, 0);
}

static void np_rc_fork(struct np_rc *x, __u64 *rng)
{
	__u64 seed = np_rc_rand(rng);
	pid_t kid;

	np_rc_reap(x, 1);
	np_rc_lock_range(x, 0, x->n);	/* a consistent copy */
	kid = fork();
	if (kid == 0)
		np_rc_child(x, seed);
	np_rc_unlock_range(x, 0, x->n);
	if (kid < 0) {
		np_rc_log(x, "fork: %s", strerror(errno));
		return;
	}
	atomic_store(&x->kid, kid);
	atomic_fetch_xor(&x->move_all, 1);
}

static void np_rc_madvise(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p;

	np_rc_slice(x, rng, &i, &k);
	/*
	 * Reclaim walks the rmap and flushes TLBs page by page: on an
	 * overcommitted TCG host 32 pages at a time stalled vCPUs for 20 s
	 * (soft lockups) while a migration waited for their IPIs.
	 */
	k = k > NP_RC_PAGEOUT_MAX ? NP_RC_PAGEOUT_MAX : k;
	p = x->buf + i * psz;
	np_rc_lock_range(x, i, k);
	switch (np_rc_rand(rng) % 3) {
	case 0:
		if (!madvise(p, k * psz, MADV_DONTNEED))
			np_rc_mark(x, i, k, NP_RC_ZERO);
		break;
	case 1:
		if (!madvise(p, k * psz, MADV_FREE))
			for (size_t j = i; j < i + k; j++)
				atomic_fetch_or(&x->gen[j], NP_RC_OR_ZERO);
		break;
	default:
		madvise(p, k * psz, MADV_PAGEOUT);
		break;
	}
	np_rc_unlock_range(x, i, k);
}

static void np_rc_mprotect(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p;

	np_rc_slice(x, rng, &i, &k);
	p = x->buf + i * psz;
	np_rc_lock_range(x, i, k);
	mprotect(p, k * psz, np_rc_rand(rng) & 1 ? PROT_NONE : PROT_READ);
	usleep(np_rc_rand(rng) % NP_RC_PAUSE_US);
	if (mprotect(p, k * psz, PROT_READ | PROT_WRITE))
		np_rc_log(x, "mprotect back: %s", strerror(errno));
	np_rc_unlock_range(x, i, k);
}

static void np_rc_mlock(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p;

	np_rc_slice(x, rng, &i, &k);
	p = x->buf + i * psz;
	mlock(p, k * psz);
	usleep(np_rc_rand(rng) % NP_RC_PAUSE_US);
	munlock(p, k * psz);
}

/* THPs split (a page made read-only, a page zapped) and collapsed. */
static void np_rc_thp(struct np_rc *x, __u64 *rng)
{
	size_t i = np_rc_rand(rng) % x->n;
	char *p = x->buf + i * psz;

	switch (np_rc_rand(rng) % 3) {
	case 0:
		np_rc_lock(x, i);
		mprotect(p, psz, PROT_READ);
		if (mprotect(p, psz, PROT_READ | PROT_WRITE))
			np_rc_log(x, "mprotect back: %s", strerror(errno));
		np_rc_unlock(x, i);
		break;
	case 1:
		np_rc_lock(x, i);
		if (!madvise(p, psz, MADV_DONTNEED))
			np_rc_mark(x, i, 1, NP_RC_ZERO);
		np_rc_unlock(x, i);
		break;
	default:
		/* Not on every kernel: EINVAL is fine. */
		madvise(x->buf + (i & ~511UL) * psz, NP_PMD, MADV_COLLAPSE);
		break;
	}
}

/* A second numaplace migration of the same memory. */
static void np_rc_migrate2(struct np_rc *x, __u64 *rng)
{
	struct numaplace_migrate m;
	size_t i, k;
	int ret;

	np_rc_slice(x, rng, &i, &k);
	/*
	 * The whole region one time in eight: a second migration of all of
	 * it back to back with the first (whose in-place pages each holds
	 * locked, whose moving pages each has under migration entries) left
	 * the first no page to move in a whole test on 6.12.
	 */
	if (!(np_rc_rand(rng) & 7)) {
		i = 0;
		k = x->n;
	}
	ret = np_migrate_node(x->fd, 0, x->eflags | NUMAPLACE_MIGRATE_SPLIT_OK,
			      (uintptr_t)x->buf + i * psz, k * psz,
			      np_rc_rand(rng) & 1, NULL, &m);
	if (ret)
		np_rc_log(x, "second migration: %s", strerror(-ret));
}

/* move_pages(2) on pages of the region at the same time. */
static void np_rc_move_pages(struct np_rc *x, __u64 *rng)
{
	__u64 pages[NP_RC_SLICE];
	int nodes[NP_RC_SLICE], status[NP_RC_SLICE];
	size_t k = 1 + np_rc_rand(rng) % NP_RC_SLICE;
	long ret;

	for (size_t j = 0; j < k; j++) {
		pages[j] = (uintptr_t)x->buf + np_rc_rand(rng) % x->n * psz;
		nodes[j] = np_rc_rand(rng) & 1;
	}
	ret = np_sys_move_pages(0, k, pages, nodes, status, NP_MF_MOVE);
	if (ret < 0)
		np_rc_log(x, "move_pages: %s", strerror(-ret));
}

/* ---- the fixture ------------------------------------------------------ */

FIXTURE(race)
{
	int fd;
	struct numaplace_info info;
	struct np_ctx c;
	struct np_rc *x;
	size_t xlen;
	long refcnt;
	long iso_anon, iso_file;
	char mthp_old[64], pmd_old[64];	/* THP knobs to restore, or "" */
};

NP_ENGINE_VARIANTS(race);

#define NP_RC_REFCNT	"/sys/module/numaplace/refcnt"

FIXTURE_SETUP(race)
{
	struct numaplace_migrate m;
	int ret;

	self->x = NULL;
	self->mthp_old[0] = self->pmd_old[0] = 0;
	psz = sysconf(_SC_PAGESIZE);
	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &self->info));
	if (variant->feature && !(self->info.features & variant->feature))
		SKIP(return, "engine not available (features %#llx)",
		     (unsigned long long)self->info.features);
	if (!np_node_isset(self->info.node_memory, 0) ||
	    !np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs memory on nodes 0 and 1");
	if (geteuid())
		SKIP(return, "needs root (MOVE_ALL, vm.stat_refresh)");
	ret = np_migrate_node(self->fd, 0, variant->flags, (uintptr_t)&m,
			      sizeof(m), 0, NULL, &m);
	if (ret == -EOPNOTSUPP)
		SKIP(return, "the engine answers EOPNOTSUPP");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, np_ctx_init(&self->c, self->fd, 0));
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	self->refcnt = np_read_long(NP_RC_REFCNT);
	ASSERT_EQ(0, np_isolated(&self->iso_anon, &self->iso_file));

	self->xlen = sizeof(*self->x);
	self->x = mmap(NULL, self->xlen, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->x);
	self->x->fd = self->fd;
	self->x->eflags = variant->flags;
	self->x->allowed = np_engines_allowed(&self->info, variant->flags);
}

#define NP_RC_MTHP	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"
#define NP_RC_PMDTHP	"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled"

FIXTURE_TEARDOWN(race)
{
	if (self->mthp_old[0])
		np_write_str(NP_RC_MTHP, self->mthp_old);
	if (self->pmd_old[0])
		np_write_str(NP_RC_PMDTHP, self->pmd_old);
	if (self->x && self->x != MAP_FAILED) {
		atomic_store(&self->x->stop, 1);
		if (atomic_load(&self->x->kid) > 0)
			kill(atomic_load(&self->x->kid), SIGKILL);
	}
	if (self->fd >= 0)
		close(self->fd);
}

static long np_rc_ms(void)
{
	const char *e = getenv("NP_RACE_MS");

	return e ? strtol(e, NULL, 10) : NP_RC_MS;
}

/* The region: @thp for THPs, stamped on node 0. */
static int np_rc_setup(struct np_rc *x, int thp)
{
	size_t len = NP_RC_PAGES * psz;
	char *raw;

	x->n = NP_RC_PAGES;
	x->lock = calloc(x->n, sizeof(*x->lock));
	x->gen = calloc(x->n, sizeof(*x->gen));
	raw = mmap(NULL, len + NP_PMD, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	x->spare = mmap(NULL, NP_RC_SLICE * psz, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!x->lock || !x->gen || raw == MAP_FAILED || x->spare == MAP_FAILED)
		return -ENOMEM;
	x->buf = (char *)(((uintptr_t)raw + NP_PMD - 1) & ~(NP_PMD - 1));
	if (thp != 2)	/* mTHP: the 64 KiB knob says "always" */
		madvise(x->buf, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	np_mempolicy(MPOL_BIND, 0);
	memset(x->buf, 0, len);
	np_mempolicy(MPOL_DEFAULT, -1);
	atomic_store(&x->next_gen, 1);
	for (size_t i = 0; i < x->n; i++)
		np_rc_write_page(x, i);
	return 0;
}

/* The 8 bytes at @off of a /proc file, or 0. */
static __u64 np_rc_pread64(const char *path, __u64 off)
{
	__u64 v = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (pread(fd, &v, 8, off) != 8)
			v = 0;
		close(fd);
	}
	return v;
}

/* 1 if @p starts a 16-page (64 KiB) folio: head, then tails to the next. */
static int np_rc_is_mthp(const char *p)
{
	const __u64 head = 1ULL << 15, tail = 1ULL << 16;
	__u64 pfn[17], f[17];

	for (int i = 0; i < 17; i++) {
		pfn[i] = np_rc_pread64("/proc/self/pagemap",
				       ((uintptr_t)p / psz + i) * 8) &
			 NP_PM_PFN_MASK;
		f[i] = pfn[i] ? np_rc_pread64("/proc/kpageflags", pfn[i] * 8) : 0;
	}
	for (int i = 1; i < 16; i++)
		if (!(f[i] & tail))
			return 0;
	return (f[0] & head) && (f[16] & head);
}

/*
 * np_check_mig_counters() less the rules that tie folios to pages: the
 * engines count a folio when they migrate it; a page counts when it is on
 * its target as the call answers it. A racing munmap, move_pages(2) or
 * second migration can take a moved page off again in between (more
 * folios than pages, the status then says -EBUSY), or put a page on its
 * target for this call (pages with no folio or engine of this call).
 */
static int np_rc_counters(struct np_ctx *c, const char *what,
			  struct numaplace_migrate *m, const __s32 *st,
			  size_t n, __u32 allowed)
{
	struct numaplace_migrate copy = *m;

	if (copy.nr_moved_folios > copy.nr_moved_pages)
		copy.nr_moved_folios = copy.nr_moved_pages;
	if (!copy.nr_moved_pages)
		copy.engines = 0;
	if (!copy.nr_moved_folios && copy.nr_moved_pages) {
		copy.nr_moved_folios = copy.nr_moved_pages;
		if (!copy.engines)
			copy.engines = allowed & -allowed;
	}
	return np_check_mig_counters(c, what, &copy, st, n, 1, allowed);
}

/* Statuses a race may explain, besides the target node. */
static int np_rc_status_ok(int st)
{
	return st == -EBUSY || st == -EFAULT || st == -ENOENT ||
	       st == -EACCES;
}

/*
 * The race: the writer, the disturber @step (or none), the main thread
 * migrating the region back and forth. Then every check.
 */
/* NP_RACE_ONLY=TEST and NP_RACE_FLAGS=ENGINE_FLAGS: run just that one. */
static int np_rc_filtered(const char *name, __u32 eflags)
{
	const char *only = getenv("NP_RACE_ONLY");
	const char *fl = getenv("NP_RACE_FLAGS");

	return (only && strcmp(only, name)) ||
	       (fl && strtoul(fl, NULL, 0) != eflags);
}

static void np_rc_run(struct __test_metadata *_metadata,
		      FIXTURE_DATA(race) *self, np_rc_step_fn step, int thp)
{
	struct np_rc *x = self->x;
	__s32 *st = calloc(NP_RC_PAGES + 1, sizeof(*st));
	long rounds = 0, moved = 0, odd = 0, t0, anon, file;
	pthread_t wr, dist, dog;
	int node = 0;
	char what[64];

	if (np_rc_filtered(_metadata->name, x->eflags))
		SKIP(return, "NP_RACE_ONLY / NP_RACE_FLAGS");
	ASSERT_NE(NULL, st);
	ASSERT_EQ(0, np_rc_setup(x, thp));
	if (thp == 2 && !np_rc_is_mthp(x->buf))
		SKIP(return, "no 64 KiB folios at the start of the region");
	x->step = step;
	ASSERT_EQ(0, pthread_create(&wr, NULL, np_rc_writer, x));
	ASSERT_EQ(0, pthread_create(&dog, NULL, np_rc_watchdog, x));
	if (step)
		ASSERT_EQ(0, pthread_create(&dist, NULL, np_rc_disturber, x));

	for (t0 = np_mono_ms();
	     np_mono_ms() - t0 < np_rc_ms() || rounds < NP_RC_MIN_ROUNDS;) {
		struct numaplace_migrate m;
		__u32 flags = x->eflags | NUMAPLACE_MIGRATE_SPLIT_OK;
		int ret;

		if (atomic_load(&x->move_all))
			flags |= NUMAPLACE_MIGRATE_MOVE_ALL;
		node ^= 1;
		for (size_t i = 0; i <= x->n; i++)
			st[i] = NP_SENTINEL;
		atomic_store(&x->call_ms, np_mono_ms());
		ret = np_migrate_node(self->fd, 0, flags, (uintptr_t)x->buf,
				      x->n * psz, node, st, &m);
		atomic_store(&x->call_ms, 0);
		rounds++;
		ASSERT_EQ(0, ret) TH_LOG("round %ld: %s", rounds, strerror(-ret));
		EXPECT_EQ(x->n, m.done);
		EXPECT_EQ(NP_SENTINEL, st[x->n]);
		snprintf(what, sizeof(what), "round %ld", rounds);
		EXPECT_EQ(0, np_rc_counters(&self->c, what, &m, st, x->n,
					    x->allowed));
		moved += m.nr_moved_pages;
		for (size_t i = 0; i < x->n; i++) {
			if (st[i] == node || np_rc_status_ok(st[i]))
				continue;
			if (odd++ < NP_RC_LOG_MAX)
				ksft_print_msg("round %ld page %zu: status %d, target %d\n",
					       rounds, i, st[i], node);
		}
		np_rc_reap(x, 0);
	}
	atomic_store(&x->stop, 1);
	pthread_join(wr, NULL);
	pthread_join(dog, NULL);
	if (step)
		pthread_join(dist, NULL);
	np_rc_reap(x, 1);

	/* 1. Every page holds what was last written (or zeroes). */
	for (size_t i = 0; i < x->n; i++)
		if (!np_rc_ok(x, i, atomic_load(&x->gen[i])))
			np_rc_log(x, "at the end: page %zu not %#llx", i,
				  (unsigned long long)atomic_load(&x->gen[i]));
	ksft_print_msg("%ld rounds, %ld pages moved, %ld writes, %ld disturbances\n",
		       rounds, moved, (long)atomic_load(&x->writes),
		       (long)atomic_load(&x->steps));
	/*
	 * 2. The region still migrates once the race is over: to each node
	 * in turn, undisturbed (a race may leave the call nothing to move in
	 * all its rounds on a loaded host: a second migration holding the
	 * pages every time).
	 */
	for (int r = 0; r < 2; r++) {
		struct numaplace_migrate m;

		ASSERT_EQ(0, np_migrate_node(self->fd, 0,
					     x->eflags | NUMAPLACE_MIGRATE_SPLIT_OK,
					     (uintptr_t)x->buf, x->n * psz, r,
					     NULL, &m));
		moved += m.nr_moved_pages;
	}
	{
		long errors = atomic_load(&x->errors);

		EXPECT_EQ(0, odd);
		EXPECT_LT(0, moved);
		EXPECT_EQ(0, errors);
	}
	/* 3. Nothing left isolated, the module's references back. */
	for (t0 = np_mono_ms();; usleep(100000)) {
		ASSERT_EQ(0, np_isolated(&anon, &file));
		if ((anon <= self->iso_anon && file <= self->iso_file) ||
		    np_mono_ms() - t0 > NP_RC_SETTLE_MS)
			break;
	}
	EXPECT_LE(anon, self->iso_anon);
	EXPECT_LE(file, self->iso_file);
	EXPECT_EQ(self->refcnt, np_read_long(NP_RC_REFCNT));
	free(st);
}

TEST_F_TIMEOUT(race, writers_only, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, NULL, 0);
}

TEST_F_TIMEOUT(race, munmap, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_munmap, 0);
}

TEST_F_TIMEOUT(race, mremap, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_mremap, 0);
}

TEST_F_TIMEOUT(race, fork_cow, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_fork, 0);
}

TEST_F_TIMEOUT(race, madvise, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_madvise, 0);
}

TEST_F_TIMEOUT(race, mprotect, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_mprotect, 0);
}

TEST_F_TIMEOUT(race, mlock, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_mlock, 0);
}

TEST_F_TIMEOUT(race, thp_split_collapse, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_thp, 1);
}

TEST_F_TIMEOUT(race, two_migrations, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_migrate2, 0);
}

TEST_F_TIMEOUT(race, with_move_pages, 60)
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_move_pages, 0);
}

/*
 * mTHP (6.12): 64 KiB anonymous folios, split by the thp disturber's
 * partial mprotect and zap, while they migrate under the writer.
 */
TEST_F_TIMEOUT(race, mthp, 60)
{
	NP_SKIPPED();
	char buf[64];

	if (np_read_str(NP_RC_MTHP, buf, sizeof(buf)))
		SKIP(return, "no mTHP on this kernel");
	/* "always [inherit] madvise never": keep the selected one. */
	if (sscanf(strchr(buf, '[') ? strchr(buf, '[') + 1 : buf, "%63[a-z]",
		   self->mthp_old) != 1)
		self->mthp_old[0] = 0;
	ASSERT_EQ(0, np_read_str(NP_RC_PMDTHP, buf, sizeof(buf)));
	if (sscanf(strchr(buf, '[') ? strchr(buf, '[') + 1 : buf, "%63[a-z]",
		   self->pmd_old) != 1)
		self->pmd_old[0] = 0;
	ASSERT_EQ(0, np_write_str(NP_RC_MTHP, "always"));
	ASSERT_EQ(0, np_write_str(NP_RC_PMDTHP, "never"));
	np_rc_run(_metadata, self, np_rc_thp, 2);
}

/*
 * Targets that exit, or exec, while we migrate them: every call answers
 * 0, -ESRCH or -EINVAL (no mm any more), nothing stays isolated.
 */
static void np_rc_targets(struct __test_metadata *_metadata,
			  FIXTURE_DATA(race) *self, int exec)
{
	__s32 *st = calloc(NP_RC_PAGES, sizeof(*st));
	long calls = 0, ok = 0, t0, anon, file;

	if (np_rc_filtered(_metadata->name, self->x->eflags))
		SKIP(return, "NP_RACE_ONLY / NP_RACE_FLAGS");
	ASSERT_NE(NULL, st);
	for (int t = 0; t < NP_RC_TARGETS; t++) {
		int ready[2], status, node = 0;
		char *p, c;
		pid_t kid;

		ASSERT_EQ(0, pipe(ready));
		p = mmap(NULL, NP_RC_PAGES * psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, p);
		kid = fork();
		ASSERT_GE(kid, 0);
		if (kid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			memset(p, 0x77, NP_RC_PAGES * psz);
			if (write(ready[1], "r", 1) != 1)
				_exit(2);
			usleep(20000 + 30000 * t);
			if (exec) {
				execl("/bin/sh", "sh", "-c", "exit 0", NULL);
				execl("/bin/busybox", "true", NULL);
			}
			_exit(0);
		}
		close(ready[1]);
		ASSERT_EQ(1, read(ready[0], &c, 1));
		close(ready[0]);
		for (;;) {
			struct numaplace_migrate m;
			int ret;

			node ^= 1;
			ret = np_migrate_node(self->fd, kid, self->x->eflags,
					      (uintptr_t)p, NP_RC_PAGES * psz,
					      node, st, &m);
			calls++;
			ok += ret == 0;
			if (ret == -ESRCH)
				break;
			EXPECT_TRUE(ret == 0 || ret == -EINVAL)
				TH_LOG("target %d: %s", t, strerror(-ret));
			if (ret && ret != -EINVAL)
				break;
			/* A zombie: no mm (-EINVAL) until it is reaped. */
			if (waitpid(kid, &status, WNOHANG) == kid) {
				EXPECT_TRUE(WIFEXITED(status) &&
					    !WEXITSTATUS(status));
				kid = -1;
				break;
			}
		}
		if (kid > 0) {
			ASSERT_EQ(kid, waitpid(kid, &status, 0));
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
				TH_LOG("target %d: status %#x", t, status);
		}
		munmap(p, NP_RC_PAGES * psz);
	}
	ksft_print_msg("%ld calls, %ld answered 0\n", calls, ok);
	EXPECT_LT(0, ok);
	for (t0 = np_mono_ms();; usleep(100000)) {
		ASSERT_EQ(0, np_isolated(&anon, &file));
		if ((anon <= self->iso_anon && file <= self->iso_file) ||
		    np_mono_ms() - t0 > NP_RC_SETTLE_MS)
			break;
	}
	EXPECT_LE(anon, self->iso_anon);
	EXPECT_LE(file, self->iso_file);
	EXPECT_EQ(self->refcnt, np_read_long(NP_RC_REFCNT));
	free(st);
}

TEST_F_TIMEOUT(race, target_exits, 60)
{
	NP_SKIPPED();
	np_rc_targets(_metadata, self, 0);
}

TEST_F_TIMEOUT(race, target_execs, 60)
{
	NP_SKIPPED();
	np_rc_targets(_metadata, self, 1);
}

/*
 * A page pinned by another reference (vmsplice() into a pipe holds it)
 * does not move: -EBUSY, its bytes intact, the pipe reads them; once the
 * pipe is drained it moves.
 */
TEST_F_TIMEOUT(race, pinned_vmsplice, 60)
{
	NP_SKIPPED();
	const size_t n = 16;
	struct numaplace_migrate m;
	__s32 st[16];
	struct iovec iov;
	char *p, *back;
	int pfd[2], where[16];
	__u64 pages[16];

	p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	back = malloc(psz);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_NE(NULL, back);
	madvise(p, n * psz, MADV_NOHUGEPAGE);
	np_mempolicy(MPOL_BIND, 0);
	for (size_t i = 0; i < n * psz; i++)
		p[i] = (char)(i * 7 + i / psz);
	np_mempolicy(MPOL_DEFAULT, -1);
	ASSERT_EQ(0, pipe(pfd));
	/* Page 3 goes into the pipe by reference. */
	iov.iov_base = p + 3 * psz;
	iov.iov_len = psz;
	ASSERT_EQ(psz, vmsplice(pfd[1], &iov, 1, 0));

	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->x->eflags,
				     (uintptr_t)p, n * psz, 1, st, &m));
	for (size_t i = 0; i < n; i++) {
		if (i != 3) {
			EXPECT_EQ(1, st[i]) TH_LOG("page %zu", i);
		}
	}
	EXPECT_EQ(-EBUSY, st[3]);
	for (size_t i = 0; i < n; i++)
		pages[i] = (uintptr_t)p + i * psz;
	ASSERT_EQ(0, np_sys_query(0, n, pages, where));
	EXPECT_EQ(0, where[3]);
	for (size_t i = 0; i < n * psz; i++) {
		if (p[i] != (char)(i * 7 + i / psz)) {
			EXPECT_EQ((char)(i * 7 + i / psz), p[i])
				TH_LOG("byte %zu", i);
			break;
		}
	}
	/* The pipe reads the page's bytes (the same page). */
	ASSERT_EQ(psz, read(pfd[0], back, psz));
	EXPECT_EQ(0, memcmp(back, p + 3 * psz, psz));
	close(pfd[0]);
	close(pfd[1]);
	/* Unpinned, it moves. */
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, self->x->eflags,
				     (uintptr_t)p, n * psz, 1, st, &m));
	EXPECT_EQ(1, st[3]);
	EXPECT_EQ(0, memcmp(back, p + 3 * psz, psz));
	free(back);
	munmap(p, n * psz);
}

NP_HARNESS_MAIN
