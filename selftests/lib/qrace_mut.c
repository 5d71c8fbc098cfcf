// SPDX-License-Identifier: GPL-2.0
/*
 * The region of the NUMAPLACE_IOC_QUERY races (qrace.h) and the mutator
 * threads that change it under the queriers, and the fixture's state
 * that query_race.c and query_race_proc.c share.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "qrace.h"

/* ---- the region and the mutators ---------------------------------- */

static void qr_touch(char *p, size_t pages, unsigned int *seed)
{
	for (size_t i = 0; i < pages; i++)
		((volatile char *)p)[i * qr_psz + rand_r(seed) % qr_psz] = (char)(i | 1);
}

/* Touch up to @max random pages of [p, p + pages). */
void qr_touch_some(char *p, size_t pages, size_t max,
		   unsigned int *seed)
{
	size_t k = 1 + rand_r(seed) % max;

	for (size_t i = 0; i < k; i++)
		qr_touch(p + (rand_r(seed) % pages) * qr_psz, 1, seed);
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
	size_t ppmd = QR_PMD / qr_psz, o = rand_r(seed) % (npg - l + 1);

	if (!(rand_r(seed) % 3) && o >= ppmd && o - o % ppmd + l <= npg)
		o -= o % ppmd;
	return o;
}

static void *qr_map_fixed(void *p, size_t len, int prot, int flags, int fd,
			  off_t off)
{
	return mmap(p, len, prot, flags | MAP_FIXED, fd, off);
}

/* A random piece of @m's slice: its start; *npg slice pages, *l piece pages. */
static char *qr_pick(struct qr_mut *m, size_t *npg, size_t *l)
{
	*npg = m->len / qr_psz;
	*l = qr_piece(*npg, &m->seed);
	return m->lo + qr_where(*npg, *l, &m->seed) * qr_psz;
}

/* Anonymous private memory at @p, THP asked for, every page written. */
int qr_anon(char *p, size_t len, int thp, unsigned int *seed)
{
	if (qr_map_fixed(p, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != p)
		return -errno;
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	qr_touch(p, len / qr_psz, seed);
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

/*
 * The piece [p, p + l pages) of @m mapped again over itself and written:
 * @how 0 shared anonymous memory, 1 the memfd shared, 2 the memfd private
 * (its written pages, some of them here, are anon COW pages). The address
 * mmap() answered.
 */
static void *qr_remap(struct qr_mut *m, char *p, size_t l, int how)
{
	static const int flags[] = {
		MAP_SHARED | MAP_ANONYMOUS, MAP_SHARED, MAP_PRIVATE,
	};
	void *q = qr_map_fixed(p, l * qr_psz, PROT_READ | PROT_WRITE,
			       flags[how], how ? m->memfd : -1,
			       how ? p - m->lo : 0);

	if (q == p && how == 2)
		qr_touch_some(p, l, 8, &m->seed);
	else if (q == p)
		qr_touch(p, l, &m->seed);
	return q;
}

/* mmap / munmap of pieces: every kind of VMA comes and goes. */
void qr_step_mmap(struct qr_mut *m)
{
	size_t npg, l;
	char *p = qr_pick(m, &npg, &l);
	size_t len = l * qr_psz;
	void *q = p;
	int how = rand_r(&m->seed) % 7;

	switch (how) {
	case 0:
	case 1:
		if (qr_anon(p, len, rand_r(&m->seed) & 1, &m->seed))
			q = MAP_FAILED;
		break;
	case 2 ... 4:
		q = qr_remap(m, p, l, how - 2);
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
void qr_step_mremap(struct qr_mut *m)
{
	size_t npg = m->len / qr_psz, l = qr_piece(npg / 2, &m->seed), o, p;
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
		from = m->lo + o * qr_psz;
		to = m->lo + p * qr_psz;
		r = mremap(from, l * qr_psz, l * qr_psz,
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
			if (qr_reserve(from, l * qr_psz)) {
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
		from = m->lo + o * qr_psz;
		to = from + l * qr_psz;
		if (qr_all(s, o + l, l, QR_DATA)) {
			r = mremap(from, 2 * l * qr_psz, l * qr_psz, 0);
			if (r == MAP_FAILED)
				return;
			if (qr_reserve(to, l * qr_psz)) {
				qr_hard(m->x, "mremap shrink: %p taken", to);
				return;
			}
			memset(s + o + l, QR_RES, l);
			m->done++;
		} else if (qr_all(s, o + l, l, QR_RES)) {
			if (munmap(to, l * qr_psz)) {
				qr_hard(m->x, "munmap %p: %s", to, strerror(errno));
				return;
			}
			r = mremap(from, l * qr_psz, 2 * l * qr_psz, 0);
			if (r == MAP_FAILED) {
				if (qr_reserve(to, l * qr_psz))
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
		qr_touch(m->lo + o * qr_psz, l, &m->seed);
	else
		madvise(m->lo + o * qr_psz, l * qr_psz, MADV_DONTNEED);
	m->done++;
}

int qr_init_mremap(struct qr_mut *m)
{
	size_t npg = m->len / qr_psz;

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
void qr_step_mprotect(struct qr_mut *m)
{
	size_t npg = m->len / qr_psz;
	int k = 1 + rand_r(&m->seed) % 3;

	for (int i = 0; i < k; i++) {
		size_t l = qr_piece(npg, &m->seed), o = qr_where(npg, l, &m->seed);
		int prot = rand_r(&m->seed) % 3 ? PROT_NONE : PROT_READ;

		if (mprotect(m->lo + o * qr_psz, l * qr_psz, prot))
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
		qr_touch(p, QR_PMD / qr_psz, &m->seed);
	}
	m->done++;
}

/*
 * A whole THP made read-only or PROT_NONE (its PMD stays, not writable),
 * zapped (the folio is freed), then faulted again. A walker that looks at
 * the struct page of a PMD it read without the PMD lock sees a freed page
 * here: such a page must not be taken for the huge zero page.
 */
void qr_step_rozap(struct qr_mut *m)
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

/*
 * Of @ways equal chances w, the first @nr madvise() [p, p + l pages) with
 * advs[w], the others write the pages again. The advice that
 * succeeded, or -1 (written, or madvise() failed).
 */
static int qr_advise_or_touch(struct qr_mut *m, char *p, size_t l,
			      const int *advs, int nr, int ways)
{
	int w = rand_r(&m->seed) % ways;

	if (w >= nr) {
		qr_touch(p, l, &m->seed);
		return -1;
	}
	return madvise(p, l * qr_psz, advs[w]) ? -1 : advs[w];
}

/* MADV_DONTNEED / MADV_FREE and refaults, partial and whole THPs. */
void qr_step_dontneed(struct qr_mut *m)
{
	static const int advs[] = { MADV_DONTNEED, MADV_DONTNEED, MADV_FREE };
	size_t npg, l;
	char *p = qr_pick(m, &npg, &l);

	qr_advise_or_touch(m, p, l, advs, ARRAY_SIZE(advs), 4);
	qr_touch_some(m->lo, npg, 8, &m->seed);
	m->done++;
}

/* MADV_PAGEOUT to zram, swap-in by writes, swap entries zapped. */
void qr_step_pageout(struct qr_mut *m)
{
	static const int advs[] = { MADV_PAGEOUT, MADV_PAGEOUT, MADV_DONTNEED };
	size_t npg, l;
	char *p = qr_pick(m, &npg, &l);

	if (qr_advise_or_touch(m, p, l, advs, ARRAY_SIZE(advs), 5) ==
	    MADV_PAGEOUT)
		m->done++;
}

/* MADV_COLLAPSE of anon memory, split again by mprotect, munmap, zap. */
void qr_step_collapse(struct qr_mut *m)
{
	size_t ppmd = QR_PMD / qr_psz;
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
		mprotect(pmd + o * qr_psz, l * qr_psz, PROT_READ);
		if (mprotect(m->lo, m->len, PROT_READ | PROT_WRITE))
			qr_hard(m->x, "collapse: mprotect back: %s",
				strerror(errno));
		break;
	case 3:
		/* A partial munmap splits the THP; map the hole again. */
		if (munmap(pmd + o * qr_psz, l * qr_psz)) {
			qr_hard(m->x, "collapse: munmap: %s", strerror(errno));
			break;
		}
		if (mmap(pmd + o * qr_psz, l * qr_psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) != pmd + o * qr_psz) {
			qr_hard(m->x, "collapse: hole taken");
			break;
		}
		madvise(m->lo, m->len, MADV_HUGEPAGE);
		qr_touch(pmd + o * qr_psz, l, &m->seed);
		break;
	default:
		madvise(pmd + o * qr_psz, l * qr_psz, MADV_DONTNEED);
		qr_touch(pmd + o * qr_psz, rand_r(&m->seed) % (l + 1), &m->seed);
		break;
	}
}

int qr_init_collapse(struct qr_mut *m)
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
void qr_step_shmem(struct qr_mut *m)
{
	size_t npg = m->len / qr_psz, l = 1 + rand_r(&m->seed) % 16;
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
			  o * qr_psz, l * qr_psz);
		qr_touch(a + o * qr_psz, l, &m->seed);
		break;
	case 3:
		madvise(a + o * qr_psz, l * qr_psz, MADV_DONTNEED);
		break;
	case 4:
		mprotect(a + o * qr_psz, l * qr_psz, PROT_READ);
		if (mprotect(a, m->len, PROT_READ | PROT_WRITE))
			qr_hard(m->x, "shmem: mprotect back: %s",
				strerror(errno));
		break;
	default:
		qr_touch_some(a, npg, 32, &m->seed);
		break;
	}
}

int qr_init_shmem(struct qr_mut *m)
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
	qr_touch(m->lo, m->len / qr_psz, &m->seed);
	return 0;
}

/* fork: page tables copied and write-protected; children write, exit. */
void qr_step_fork(struct qr_mut *m)
{
	size_t npg = m->len / qr_psz;
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
		qr_touch(m->lo + QR_PMD, QR_PMD / qr_psz, &m->seed);
	}
}

/* hugetlb: faults, zaps, PROT_NONE, unmap and map again. */
void qr_step_hugetlb(struct qr_mut *m)
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

int qr_init_hugetlb(struct qr_mut *m)
{
	if (qr_map_fixed(m->lo, m->len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB, -1,
			 0) != m->lo)
		return -errno;
	memset(m->lo, 1, m->len);
	return 0;
}

/* The default mutators' first state: THP-able anon memory, written. */
int qr_init_anon(struct qr_mut *m)
{
	return qr_anon(m->lo, m->len, 1, &m->seed);
}

void *qr_mutator(void *arg)
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
int qr_region_init(struct qr_ctx *x, struct qr_region *r, int nslices)
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
	if (qr_anon(stable, QR_STABLE * qr_psz, 0, &seed))
		return -errno;
	x->stable = (uintptr_t)stable;
	x->stable_ok = !mlock(stable, QR_STABLE * qr_psz);
	for (int i = 0; i < QR_STABLE; i++)
		addrs[i] = (uintptr_t)stable + i * qr_psz;
	if (np_sys_query(0, QR_STABLE, addrs, st))
		x->stable_ok = 0;
	for (int i = 0; i < QR_STABLE; i++) {
		x->stable_node[i] = st[i];
		if (st[i] < 0)
			x->stable_ok = 0;
	}
	x->qstart = (uintptr_t)r->base;
	x->qpages = r->len / qr_psz + QR_TAIL;
	x->zlo = (uintptr_t)r->base;
	x->zhi = (uintptr_t)r->base + r->len;
	x->splits0 = qr_thp_splits();
	return 0;
}

/* Half the tail becomes a hole: no VMA. Call when nothing else maps. */
void qr_region_hole(struct qr_region *r)
{
	munmap(r->base + r->len + QR_TAIL / 2 * qr_psz, QR_TAIL / 2 * qr_psz);
}

void qr_region_free(struct qr_region *r)
{
	if (r->raw)
		munmap(r->raw, r->raw_len);
	r->raw = NULL;
}

void qr_mut_init(struct qr_mut *m, struct qr_ctx *x, struct qr_region *r,
		 int i, const char *name, qr_step_fn step)
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

int qr_set(struct qr_env *e, const char *path, const char *val)
{
	struct qr_saved *s;

	if (e->nsaved == (int)ARRAY_SIZE(e->saved))
		return -ENOSPC;
	s = &e->saved[e->nsaved];
	if (np_read_str(path, s->val, sizeof(s->val)))
		return -ENOENT;
	/* "always [madvise] never" style files: keep the selected word. */
	if (strchr(s->val, '[')) {
		char *b = strchr(s->val, '['), *end = strchr(b, ']');

		if (end) {
			*end = 0;
			memmove(s->val, b + 1, strlen(b + 1) + 1);
		}
	}
	snprintf(s->path, sizeof(s->path), "%s", path);
	e->nsaved++;
	return np_write_str(path, val);
}

int qr_env_open(struct qr_env *e, char *why, size_t len)
{
	struct qr_ctx *x = &e->x;
	int ret;

	memset(e, 0, sizeof(*e));
	e->fd = np_open();
	if (e->fd == -ENOENT) {
		snprintf(why, len, "no " NUMAPLACE_DEVICE " (module not loaded)");
		return 1;
	}
	if (e->fd < 0) {
		snprintf(why, len, "open " NUMAPLACE_DEVICE ": %s",
			 strerror(-e->fd));
		return e->fd;
	}
	ret = np_get_info(e->fd, &e->info);
	if (ret) {
		snprintf(why, len, "INFO: %s", strerror(-ret));
		return ret;
	}
	if (!(e->info.features & NUMAPLACE_FEAT_QUERY)) {
		snprintf(why, len, "module has no NUMAPLACE_FEAT_QUERY");
		return 1;
	}
	ret = np_ctx_init(&e->c, e->fd, 0);
	if (ret) {
		snprintf(why, len, "np_ctx_init: %s", strerror(-ret));
		return ret;
	}
	if (e->c.nr_nodes > NUMAPLACE_MAX_NODES) {
		snprintf(why, len, "nr_node_ids %u > %d", e->c.nr_nodes,
			 NUMAPLACE_MAX_NODES);
		return -ERANGE;
	}
	qr_psz = e->c.psz;
	x->fd = e->fd;
	x->psz = qr_psz;
	x->nr_nodes = e->c.nr_nodes;
	memcpy(x->node_memory, e->info.node_memory, sizeof(x->node_memory));
	x->new_kernel = e->c.new_kernel;
	/* Clearing young bits under every race: a clear takes the locks. */
	if (e->info.features & NUMAPLACE_FEAT_ACCESS)
		x->access_flags = NUMAPLACE_QUERY_ACCESS |
				  NUMAPLACE_QUERY_CLEAR_ACCESS;
	if (e->info.features & NUMAPLACE_FEAT_ACCESS_FLUSH)
		x->access_flags |= NUMAPLACE_QUERY_FLUSH_TLB;
	x->self_pid = getpid();
	/* Its scanner would make PROT_NONE hints at random moments. */
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	/* The stable pages are mlocked: compaction leaves them alone. */
	qr_set(e, "/proc/sys/vm/compact_unevictable_allowed", "0");
	return 0;
}

void qr_env_close(struct qr_env *e)
{
	qr_region_free(&e->r);
	for (int i = e->nsaved - 1; i >= 0; i--)
		np_write_str(e->saved[i].path, e->saved[i].val);
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}
