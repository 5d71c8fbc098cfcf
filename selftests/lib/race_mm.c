// SPDX-License-Identifier: GPL-2.0
/*
 * race.c's engine (race_lib.h): the writer, the disturbers, the
 * watchdog, the region and the checks of a race's answers.
 */
#include <linux/mempolicy.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "race_lib.h"

/* The page size, set by np_rc_setup() before any thread starts. */
static long psz;


static __u64 np_rc_rand(__u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}


void np_rc_log(struct np_rc *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	np_vfail(&x->errors, &x->logged, NP_RC_LOG_MAX, "", fmt, ap);
	va_end(ap);
}

/* 1 if page @i holds what generation value @g says. */
int np_rc_ok(const struct np_rc *x, size_t i, __u64 g)
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

void *np_rc_writer(void *arg)
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

/*
 * Once the threads have stopped: every page written once more (checked
 * first), so that the region is mapped again however the last
 * disturbance left it (a DONTNEED of the whole region leaves nothing).
 */
void np_rc_fill(struct np_rc *x)
{
	for (size_t i = 0; i < x->n; i++) {
		np_rc_lock(x, i);
		np_rc_write_page(x, i);
		np_rc_unlock(x, i);
	}
}

void *np_rc_disturber(void *arg)
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

void *np_rc_watchdog(void *arg)
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

/* A random slice [*i, *i + *k) of the region: its first page. */
static char *np_rc_slice(struct np_rc *x, __u64 *rng, size_t *i, size_t *k)
{
	*k = 1 + np_rc_rand(rng) % NP_RC_SLICE;
	*i = np_rc_rand(rng) % (x->n - *k + 1);
	return x->buf + *i * psz;
}

/* ---- disturbers ---------------------------------------------------- */

void np_rc_munmap(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p = np_rc_slice(x, rng, &i, &k);

	np_rc_lock_range(x, i, k);
	munmap(p, k * psz);
	np_rc_mark(x, i, k, NP_RC_GONE);
	usleep(np_rc_rand(rng) % NP_RC_PAUSE_US);
	if (mmap(p, k * psz, PROT_READ | PROT_WRITE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == p)
		np_rc_mark(x, i, k, NP_RC_ZERO);
	np_rc_unlock_range(x, i, k);
}

void np_rc_mremap(struct np_rc *x, __u64 *rng)
{
	int dontunmap = np_rc_rand(rng) & 1;
	size_t i, k, len;
	void *q;
	char *p;

	p = np_rc_slice(x, rng, &i, &k);
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

void np_rc_reap(struct np_rc *x, int wait)
{
	pid_t kid = atomic_load(&x->kid);
	int status;

	if (!kid || waitpid(kid, &status, wait ? 0 : WNOHANG) != kid)
		return;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		np_rc_log(x, "fork child %d: status %#x", kid, status);
	atomic_store(&x->kid, 0);
}

void np_rc_fork(struct np_rc *x, __u64 *rng)
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

void np_rc_madvise(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p = np_rc_slice(x, rng, &i, &k);

	/*
	 * Reclaim walks the rmap and flushes TLBs page by page: on an
	 * overcommitted TCG host 32 pages at a time stalled vCPUs for 20 s
	 * (soft lockups) while a migration waited for their IPIs.
	 */
	k = k > NP_RC_PAGEOUT_MAX ? NP_RC_PAGEOUT_MAX : k;
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

/*
 * MADV_DONTNEED over the whole region, one aligned PMD: from 6.14 (7.3
 * here, CONFIG_PT_RECLAIM) a zap that covers a whole page table frees the
 * emptied table itself under the mmap read lock (RCU-freed), while a
 * migration may be walking or unmapping in it: the walker's and the
 * page-table engine's PMD re-check after pte_offset_map_lock(). Smaller
 * zaps (np_rc_madvise()) keep the table. Every other step, so that the
 * writer fills the region again in between.
 */
void np_rc_dontneed_pmd(struct np_rc *x, __u64 *rng)
{
	if (np_rc_rand(rng) & 1)
		return;
	np_rc_lock_range(x, 0, x->n);
	if (!madvise(x->buf, x->n * psz, MADV_DONTNEED))
		np_rc_mark(x, 0, x->n, NP_RC_ZERO);
	np_rc_unlock_range(x, 0, x->n);
}

void np_rc_mprotect(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p = np_rc_slice(x, rng, &i, &k);

	np_rc_lock_range(x, i, k);
	mprotect(p, k * psz, np_rc_rand(rng) & 1 ? PROT_NONE : PROT_READ);
	usleep(np_rc_rand(rng) % NP_RC_PAUSE_US);
	if (mprotect(p, k * psz, PROT_READ | PROT_WRITE))
		np_rc_log(x, "mprotect back: %s", strerror(errno));
	np_rc_unlock_range(x, i, k);
}

void np_rc_mlock(struct np_rc *x, __u64 *rng)
{
	size_t i, k;
	char *p = np_rc_slice(x, rng, &i, &k);

	mlock(p, k * psz);
	usleep(np_rc_rand(rng) % NP_RC_PAUSE_US);
	munlock(p, k * psz);
}

/* THPs split (a page made read-only, a page zapped) and collapsed. */
void np_rc_thp(struct np_rc *x, __u64 *rng)
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
void np_rc_migrate2(struct np_rc *x, __u64 *rng)
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
	ret = np_migrate_node(x->fd, 0, np_rc_flags(x),
			      (uintptr_t)x->buf + i * psz, k * psz,
			      np_rc_rand(rng) & 1, NULL, &m);
	if (ret)
		np_rc_log(x, "second migration: %s", strerror(-ret));
}

/* move_pages(2) on pages of the region at the same time. */
void np_rc_move_pages(struct np_rc *x, __u64 *rng)
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


long np_rc_ms(void)
{
	const char *e = getenv("NP_RACE_MS");

	return e ? strtol(e, NULL, 10) : NP_RC_MS;
}

/* The region: @thp for THPs, stamped on node 0. */
int np_rc_setup(struct np_rc *x, int thp)
{
	size_t len;
	char *raw;

	psz = sysconf(_SC_PAGESIZE);
	len = NP_RC_PAGES * psz;

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
int np_rc_is_mthp(const char *p)
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
int np_rc_counters(struct np_ctx *c, const char *what,
		   struct numaplace_migrate *m, const __s32 *st, size_t n,
		   __u32 allowed)
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
int np_rc_status_ok(int st)
{
	return st == -EBUSY || st == -EFAULT || st == -ENOENT ||
	       st == -EACCES;
}

/* NP_RACE_ONLY=TEST and NP_RACE_FLAGS=ENGINE_FLAGS: run just that one. */
int np_rc_filtered(const char *name, __u32 eflags)
{
	const char *only = getenv("NP_RACE_ONLY");
	const char *fl = getenv("NP_RACE_FLAGS");

	return (only && strcmp(only, name)) ||
	       (fl && strtoul(fl, NULL, 0) != eflags);
}
