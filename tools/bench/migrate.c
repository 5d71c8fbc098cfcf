// SPDX-License-Identifier: GPL-2.0
/*
 * bench/migrate: how fast do 256 MiB of anonymous memory move from node 0
 * to node 1? move_pages(2) with a node list against numaplace's MIGRATE
 * (the default engine choice and each engine alone), the library's
 * numaplace_migrate_range() and the numaplace_move_pages() drop-in (both
 * may choose the syscall: tools/lib/flush.c), on 4 KiB pages, on THPs, on 64 KiB mTHP
 * (where the kernel has hugepages-64kB: 6.8+) and on 4 KiB pages with
 * per-page interleaved targets (0,1,0,1,...). A memcpy of the same
 * buffer in this process is the reference. --mib N moves N MiB instead.
 *
 * --writers N (1 or 2): N threads keep writing the buffer while each
 * timed run moves it, as a live service's would (every page's word k is
 * writer k's; it sweeps the buffer storing its sweep count there, and
 * stops at the end of a sweep). The times are wall clock: each write to
 * a page being moved waits for it. Afterwards every word of every page
 * is checked: writer k's must hold its last sweep's count on every page
 * (a write the move lost shows as an older count), the others the
 * pattern.
 *
 * The mthp variant turns hugepages-64kB/enabled to "always" and PMD THP
 * off for its runs (both put back), makes its buffer anew before every
 * run (the kernel's migrate_pages() splits a 64 KiB folio it moved once
 * when it moves it again, for the syscall as for numaplace:
 * Documentation/design.md, "Large folios") and prints the kernel's
 * hugepages-64kB/stats/split counter before and after each run.
 *
 * Before every timed run the buffer goes back to node 0 (untimed, and
 * checked), so every run moves the same pages. Runs alternate between
 * A B .. and .. B A order and the best of NP_ROUNDS is kept. After every
 * run each page must be on its target and hold its data: anything else
 * prints MISMATCH and the bench exits 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "numaplace.h"
#include "bench.h"
#include "watches.h"

/* The size of a pinned RDMA / KV-cache buffer; --mib N changes it. */
#define NP_BUF_SIZE_DEFAULT	(256UL << 20)
static size_t np_buf_size = NP_BUF_SIZE_DEFAULT;
#define NP_BUF_SIZE	np_buf_size
/* --mib: at least one PMD, at most what two 1 GiB guest nodes can hold. */
#define NP_BUF_MIB_MAX	512
/* x86-64 PMD (THP) size: every buffer is aligned to it. */
#define NP_PMD_SIZE	(2UL << 20)
/* A 256 MiB migration takes seconds in TCG: 3 rounds keep a kernel's
 * bench within minutes.
 */
#define NP_ROUNDS	3
/* Rounds of this run: NP_ROUNDS, or --rounds N. */
static int np_rounds = NP_ROUNDS;
/* --method WORD[,WORD] / --variant NAME: only the methods whose name
 * has one of the words, only that variant (to read the module's phase
 * counters around one).
 */
static const char *np_only_method, *np_only_variant;
/* The pages start on this node and move to the other one. */
#define NP_SRC_NODE	0
#define NP_DST_NODE	1
/* --writers: at most this many (the guest has a CPU per node). */
#define NP_WRITERS_MAX	2
static int np_nr_writers;


enum np_variant_id {
	NP_V_4K,
	NP_V_THP,
	NP_V_MTHP,
	NP_V_INTERLEAVE,
	NP_NR_VARIANTS,
};

static const struct {
	const char *name;
	int thp, interleave, mthp;
} np_variants[NP_NR_VARIANTS] = {
	[NP_V_4K] = { "4k", 0, 0, 0 },
	[NP_V_THP] = { "thp", 1, 0, 0 },
	[NP_V_MTHP] = { "mthp", 0, 0, 1 },
	[NP_V_INTERLEAVE] = { "4k-ilv", 0, 1, 0 },
};

/* 64 KiB mTHP (the mthp variant) and PMD THP, per size. */
#define NP_MTHP_ENABLED	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"
#define NP_MTHP_SPLIT	"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/split"
#define NP_MTHP_SIZE	(64UL << 10)
#define NP_PMD_ENABLED	"/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled"

enum np_method_id {
	NP_M_MEMCPY,
	NP_M_MOVE_PAGES,
	NP_M_DROPIN,
	NP_M_MIGRATE,
	NP_M_RANGE,
	NP_M_KERNEL,
	NP_M_VMA,
	NP_M_BATCH,
	NP_M_BATCH1,
	NP_M_BATCH2,
	NP_M_PT,
	NP_M_PT1,
	NP_M_PT2,
	NP_NR_METHODS,
};

/*
 * A --writers thread: word @k of every page is its own, @sweeps the count
 * of its last whole sweep (0: none since the buffer was filled).
 */
struct np_writer {
	pthread_t thread;
	struct np_bench *b;
	int k;
	uint64_t sweeps;
};

/* One buffer under test and the arrays the methods use. */
struct np_bench {
	int variant;
	char *map, *buf;		/* the mmap, its 2 MiB aligned part */
	size_t map_len, nr_pages, page_size;
	char *dst;			/* memcpy's destination */
	void *arrays;			/* the per-page arrays' block */
	void **pages;			/* move_pages' pages[] of buf */
	int *targets;			/* nodes[]: where each page goes */
	int *home;			/* nodes[] of NP_SRC_NODE */
	int *status;			/* scratch status[] */
	int *st_sys, *st_dropin;	/* the last runs' status[] */
	long ret_sys, ret_dropin;	/* and return values */
	int err_sys, err_dropin;
	int have_sys, have_dropin;	/* set once such a run finished */
	int noted_thp_second;		/* the THP -EBUSY note was printed */
	size_t nr_moving;		/* pages whose target is not home */
	long thp_pages;			/* after populating; -1 unknown */
	long thp_min;			/* fewest before a run; -1 unknown */
	struct numaplace_migrate last;	/* counters of the last MIGRATE */
	/* --writers: the threads and when to stop */
	struct np_writer writer[NP_WRITERS_MAX];
	atomic_int writers_stop;
};

struct np_method {
	const char *name;
	int (*fn)(struct np_bench *b, int m);
	unsigned int engine_flag;	/* NUMAPLACE_MIGRATE_ENGINE_* */
	unsigned long long feature;	/* INFO feature it needs, or 0 */
	int migrates;			/* moves pages: set up and verify */
	int workers;			/* copy_workers it runs with, 0: auto */
};

/* What one variant measured, for the table. */
struct np_result {
	double best_ms[NP_NR_METHODS];
	int err[NP_NR_METHODS];		/* errno, or EIO for a bad result */
	unsigned int engines;		/* reported by default MIGRATE runs */
	long splits[NP_NR_METHODS];	/* 64 KiB splits over its runs (mthp) */
	size_t nr_moving;
	long thp_pages, thp_min;
	int skipped;			/* the kernel has no such folios */
};

/* A number from a sysfs file, or -1. */
static long np_read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * Write @val to THP setting @path, its old setting (the bracketed word)
 * into @old (empty if it could not be read). 0 or -errno.
 */
static int np_thp_set(const char *path, const char *val, char *old,
		      size_t len)
{
	char buf[128], *l, *r;
	ssize_t n;
	int fd, ret = 0;

	old[0] = 0;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (r && (size_t)(r - l) < len) {
		memcpy(old, l + 1, r - l - 1);
		old[r - l - 1] = 0;
	}
	if (pwrite(fd, val, strlen(val), 0) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Put a THP setting back (np_thp_set()'s @old). */
static void np_thp_restore(const char *path, const char *old)
{
	char ignored[32];

	if (old[0] && np_thp_set(path, old, ignored, sizeof(ignored)))
		fprintf(stderr, "bench: restore %s: %s\n", path, strerror(errno));
}

/* INFO's features when the module can migrate, else 0. */
static unsigned long long np_migrate_features;
static long np_mismatches;

static int np_m_memcpy(struct np_bench *b, int m)
{
	memcpy(b->dst, b->buf, NP_BUF_SIZE);
	/* Keep the copy from being optimised away. */
	__asm__ volatile("" : : "r"(b->dst) : "memory");
	return 0;
}

static int np_m_move_pages(struct np_bench *b, int m)
{
	errno = 0;
	b->ret_sys = syscall(SYS_move_pages, 0, b->nr_pages, b->pages,
			     b->targets, b->st_sys, MPOL_MF_MOVE);
	b->err_sys = b->ret_sys < 0 ? errno : 0;
	b->have_sys = 1;
	return b->ret_sys < 0 ? -b->err_sys : 0;
}

static int np_m_dropin(struct np_bench *b, int m)
{
	errno = 0;
	b->ret_dropin = numaplace_move_pages(0, b->nr_pages, b->pages,
					     b->targets, b->st_dropin,
					     MPOL_MF_MOVE);
	b->err_dropin = b->ret_dropin < 0 ? errno : 0;
	b->have_dropin = 1;
	return b->ret_dropin < 0 ? -b->err_dropin : 0;
}

static const struct np_method np_methods[NP_NR_METHODS];

/* The vma engine runs THP variants with NUMAPLACE_MIGRATE_SPLIT_OK. */
static int np_vma_splits(int variant, int m)
{
	return m == NP_M_VMA && np_variants[variant].thp;
}

/* MIGRATE over the range: one node, or page i to targets[i]. */
static int np_m_migrate(struct np_bench *b, int m)
{
	struct numaplace_migrate *r = &b->last;

	memset(r, 0, sizeof(*r));
	r->flags = np_methods[m].engine_flag;
	/* migrate_vma moves base pages: a THP must be split to go. */
	if (np_vma_splits(b->variant, m))
		r->flags |= NUMAPLACE_MIGRATE_SPLIT_OK;
	r->start = (uintptr_t)b->buf;
	r->len = NP_BUF_SIZE;
	if (np_variants[b->variant].interleave) {
		r->policy = NUMAPLACE_POLICY_PER_PAGE;
		r->nodes_ptr = (uintptr_t)b->targets;
	} else {
		r->policy = NUMAPLACE_POLICY_NODE;
		r->node = NP_DST_NODE;
	}
	return numaplace_migrate(r);
}

/*
 * numaplace_migrate_range(): MIGRATE's default choice, or move_pages(2)
 * where the library finds the syscall flushes less (tools/lib/flush.c).
 * One target: not the interleaved variants.
 */
static int np_m_range(struct np_bench *b, int m)
{
	return numaplace_migrate_range(0, b->buf, NP_BUF_SIZE, NP_DST_NODE, 0,
				       &b->last);
}

/* A method whose counters are MIGRATE's (np_verify() checks them). */
static int np_counts(int m)
{
	return np_methods[m].fn == np_m_migrate || np_methods[m].fn == np_m_range;
}

/*
 * The batched or page-table engine (they share the copy, module/copy.c)
 * with a given number of copy workers: the knob is module-wide (netlink
 * CONFIG_SET, through the numaplace CLI).
 */
static int np_set_workers(int n)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd),
		 "numaplace config copy_workers=%d >/dev/null 2>&1", n);
	return system(cmd) == 0 ? 0 : -EOPNOTSUPP;
}

static const struct np_method np_methods[NP_NR_METHODS] = {
	[NP_M_MEMCPY] = { "memcpy 256 MiB (user space)", np_m_memcpy, 0, 0, 0 },
	[NP_M_MOVE_PAGES] = { "move_pages(2), nodes[]", np_m_move_pages, 0, 0, 1 },
	[NP_M_DROPIN] = { "numaplace_move_pages()", np_m_dropin, 0, ~0ULL, 1 },
	[NP_M_MIGRATE] = { "numaplace MIGRATE", np_m_migrate, 0, ~0ULL, 1 },
	[NP_M_RANGE] = { "numaplace_migrate_range()", np_m_range, 0, ~0ULL, 1 },
	[NP_M_KERNEL] = { "numaplace engine kernel", np_m_migrate,
			  NUMAPLACE_MIGRATE_ENGINE_KERNEL,
			  NUMAPLACE_FEAT_MIGRATE_KERNEL, 1 },
	[NP_M_VMA] = { "numaplace engine vma", np_m_migrate,
		       NUMAPLACE_MIGRATE_ENGINE_VMA,
		       NUMAPLACE_FEAT_MIGRATE_VMA, 1 },
	[NP_M_BATCH] = { "numaplace engine batch", np_m_migrate,
			 NUMAPLACE_MIGRATE_ENGINE_BATCH,
			 NUMAPLACE_FEAT_MIGRATE_BATCH, 1 },
	[NP_M_BATCH1] = { "numaplace batch, 1 worker",
			  np_m_migrate, NUMAPLACE_MIGRATE_ENGINE_BATCH,
			  NUMAPLACE_FEAT_MIGRATE_BATCH, 1, 1 },
	[NP_M_BATCH2] = { "numaplace batch, 2 workers",
			  np_m_migrate, NUMAPLACE_MIGRATE_ENGINE_BATCH,
			  NUMAPLACE_FEAT_MIGRATE_BATCH, 1, 2 },
	[NP_M_PT] = { "numaplace engine pt", np_m_migrate,
		      NUMAPLACE_MIGRATE_ENGINE_PT, NUMAPLACE_FEAT_MIGRATE_PT, 1 },
	[NP_M_PT1] = { "numaplace pt, 1 worker", np_m_migrate,
		       NUMAPLACE_MIGRATE_ENGINE_PT, NUMAPLACE_FEAT_MIGRATE_PT, 1, 1 },
	[NP_M_PT2] = { "numaplace pt, 2 workers", np_m_migrate,
		       NUMAPLACE_MIGRATE_ENGINE_PT, NUMAPLACE_FEAT_MIGRATE_PT, 1, 2 },
};

#define NP_COPY_LIMIT	"/sys/kernel/debug/numaplace/copy_limit"

/*
 * The ceiling: the guest kernel copying 256 MiB with every online CPU
 * (the module's debugfs copy_limit), GB/s; -1 when it cannot be read.
 * @zero: how fast the same CPUs zero those pages (what init_on_alloc
 * makes the allocator do to every destination), GB/s, or -1.
 */
static double np_copy_limit(unsigned int *cpus, double *zero, char *routine)
{
	unsigned long long bytes, ns, zero_ns;
	double gbps = -1;
	FILE *f;
	int n;

	if (access(NP_COPY_LIMIT, R_OK))
		(void)system("mount -t debugfs none /sys/kernel/debug 2>/dev/null");
	f = fopen(NP_COPY_LIMIT, "r");
	if (!f)
		return -1;
	*zero = -1;
	strcpy(routine, "copy_highpage");
	n = fscanf(f, "%llu %llu %u %llu %31s", &bytes, &ns, cpus, &zero_ns,
		   routine);
	if (n >= 3 && ns)
		gbps = (double)bytes / ns;
	if (n >= 4 && zero_ns)
		*zero = (double)bytes / zero_ns;
	fclose(f);
	return gbps;
}

/* @name has one of the comma-separated words of --method. */
static int np_method_named(const char *name)
{
	const char *w = np_only_method, *end;
	char word[64];
	size_t len;

	for (; *w; w = *end ? end + 1 : end) {
		end = strchr(w, ',');
		if (!end)
			end = w + strlen(w);
		len = end - w;
		if (!len || len >= sizeof(word))
			continue;
		memcpy(word, w, len);
		word[len] = 0;
		if (strstr(name, word))
			return 1;
	}
	return 0;
}

/* The module can run method @m ("~0": any migration engine will do). */
static int np_method_available(int m)
{
	unsigned long long f = np_methods[m].feature;

	if (np_only_method && !np_method_named(np_methods[m].name))
		return 0;
	if (!f)
		return 1;
	return f == ~0ULL ? np_migrate_features != 0 :
	       (np_migrate_features & f) != 0;
}

static int np_is_numaplace(int m)
{
	return np_methods[m].feature != 0;
}

/* The knob as this run last set it; -1: not yet (the module's own). */
static int np_workers_now = -1;

/*
 * Set copy_workers for method @m before its timed run: outside the
 * timing (the CLI takes milliseconds under TCG), only when it changes,
 * and back to auto for the module's other methods, which must not run
 * with a worker row's count. 0 or -errno.
 */
static int np_workers_for(int m)
{
	int n = np_methods[m].workers;

	if (!np_is_numaplace(m) || n == np_workers_now ||
	    (np_workers_now < 0 && !n))
		return 0;
	np_workers_now = n;
	return np_set_workers(n);
}

/* The data of word @i of the buffer: a page's words say where it was. */
static inline uint64_t np_pattern(size_t i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

/* Writer @k's word of page @p after sweep @sweep (1, 2, ...). */
static inline uint64_t np_writer_word(size_t p, int k, uint64_t sweep)
{
	return np_pattern(p) ^ (sweep << 8 | (uint64_t)k << 1 | 1);
}

/* What word @i of the buffer must hold now. */
static uint64_t np_expected(const struct np_bench *b, size_t i)
{
	size_t per_page = b->page_size / sizeof(uint64_t);
	size_t k = i % per_page;

	if (k < (size_t)np_nr_writers && b->writer[k].sweeps)
		return np_writer_word(i / per_page, k, b->writer[k].sweeps);
	return np_pattern(i);
}

/* One writer: whole sweeps over the buffer until told to stop. */
static void *np_writer(void *arg)
{
	struct np_writer *w = arg;
	const struct np_bench *b = w->b;
	size_t per_page = b->page_size / sizeof(uint64_t), p;
	uint64_t *buf = (uint64_t *)b->buf;
	uint64_t sweep = w->sweeps;

	do {
		sweep++;
		for (p = 0; p < b->nr_pages; p++)
			__atomic_store_n(&buf[p * per_page + w->k],
					 np_writer_word(p, w->k, sweep),
					 __ATOMIC_RELAXED);
	} while (!atomic_load(&b->writers_stop));
	w->sweeps = sweep;
	return NULL;
}

/* Start the --writers threads. 0 or -errno (none left running). */
static int np_writers_start(struct np_bench *b)
{
	int k, ret;

	atomic_store(&b->writers_stop, 0);
	for (k = 0; k < np_nr_writers; k++) {
		b->writer[k].b = b;
		b->writer[k].k = k;
		ret = -pthread_create(&b->writer[k].thread, NULL, np_writer,
				      &b->writer[k]);
		if (ret)
			goto stop_started;
	}
	return 0;

stop_started:
	atomic_store(&b->writers_stop, 1);
	while (k--)
		pthread_join(b->writer[k].thread, NULL);
	return ret;
}

/* Stop them: each finishes its sweep and records it. */
static void np_writers_stop(struct np_bench *b)
{
	atomic_store(&b->writers_stop, 1);
	for (int k = 0; k < np_nr_writers; k++)
		pthread_join(b->writer[k].thread, NULL);
}

static void np_fill(struct np_bench *b)
{
	uint64_t *w = (uint64_t *)b->buf;
	size_t i, n = NP_BUF_SIZE / sizeof(*w);

	for (i = 0; i < n; i++)
		w[i] = np_pattern(i);
	for (i = 0; i < NP_WRITERS_MAX; i++)
		b->writer[i].sweeps = 0;
}

/* Pages whose data is not theirs; the first few are printed. */
static size_t np_check_data(struct np_bench *b, const char *what)
{
	const uint64_t *w = (const uint64_t *)b->buf;
	size_t per_page = b->page_size / sizeof(*w), bad = 0, p, i;

	for (p = 0; p < b->nr_pages; p++) {
		for (i = p * per_page; i < (p + 1) * per_page; i++)
			if (w[i] != np_expected(b, i))
				break;
		if (i == (p + 1) * per_page)
			continue;
		if (bad++ < NP_BENCH_REPORTS)
			printf("MISMATCH %s %s: page %zu (%p): word %zu is %#llx, want %#llx\n",
			       np_variants[b->variant].name, what, p,
			       b->pages[p], i - p * per_page,
			       (unsigned long long)w[i],
			       (unsigned long long)np_expected(b, i));
	}
	return bad;
}

/*
 * A fresh buffer on NP_SRC_NODE, filled with its pattern: mapped, advised
 * (THP or not) and faulted in under a bind policy.
 */
static int np_buffer_create(struct np_bench *b)
{
	size_t i;

	if (b->map)
		munmap(b->map, b->map_len);
	/* MADV_NOHUGEPAGE would keep 64 KiB mTHP out too: none for mthp. */
	b->buf = np_bench_map(NP_BUF_SIZE, NP_PMD_SIZE,
			      np_variants[b->variant].mthp ? -1 :
			      np_variants[b->variant].thp,
			      np_variants[b->variant].name, &b->map,
			      &b->map_len);
	if (!b->buf)
		return -1;
	np_bench_bind_say(NP_SRC_NODE, "bench");
	np_fill(b);
	np_bench_bind(-1);
	for (i = 0; i < b->nr_pages; i++)
		b->pages[i] = b->buf + i * b->page_size;
	b->thp_pages = np_bench_smaps_thp_pages(b->buf, b->page_size);
	return 0;
}

static int np_bench_setup(struct np_bench *b, int variant)
{
	int **const ints[] = { &b->targets, &b->home, &b->status,
			       &b->st_sys, &b->st_dropin };
	size_t i;

	memset(b, 0, sizeof(*b));
	b->variant = variant;
	b->thp_min = -1;
	b->arrays = np_bench_pages_alloc(NP_BUF_SIZE, "bench", &b->page_size,
					 &b->nr_pages, &b->pages, ints,
					 NP_ARRAY_SIZE(ints));
	if (!b->arrays)
		return -1;
	for (i = 0; i < b->nr_pages; i++) {
		b->home[i] = NP_SRC_NODE;
		b->targets[i] = np_variants[variant].interleave && !(i & 1) ?
				NP_SRC_NODE : NP_DST_NODE;
		b->nr_moving += b->targets[i] != NP_SRC_NODE;
	}
	/* memcpy's destination, faulted in so the copy takes no faults. */
	b->dst = mmap(NULL, NP_BUF_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->dst == MAP_FAILED) {
		b->dst = NULL;
		perror("bench: mmap");
		return -1;
	}
	madvise(b->dst, NP_BUF_SIZE, np_variants[variant].thp ?
		MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(b->dst, 0, NP_BUF_SIZE);
	return np_buffer_create(b);
}

static void np_bench_teardown(struct np_bench *b)
{
	if (b->map)
		munmap(b->map, b->map_len);
	if (b->dst)
		munmap(b->dst, NP_BUF_SIZE);
	free(b->arrays);
}

/*
 * Where the pages are, by the syscall's query: the number of pages not on
 * @want (one node per page); the first few are printed when @what is set.
 */
static size_t np_off_target(struct np_bench *b, const int *want,
			    const char *what, const char *tag)
{
	return np_bench_off_node(b->pages, b->nr_pages, b->status, want, -1,
				 tag, np_variants[b->variant].name, what);
}

/*
 * Untimed: every page back on NP_SRC_NODE, THPs still THPs. numaplace
 * moves them back when it can (it is the fastest), the syscall otherwise
 * or when pages stay behind; a THP buffer that lost huge pages is made
 * anew. 0, or -1 when the buffer cannot be put back.
 */
static int np_reset(struct np_bench *b)
{
	struct numaplace_migrate m;
	long thp;

	/* Fresh 64 KiB folios: a moved one is split when moved again. */
	if (np_variants[b->variant].mthp && np_buffer_create(b))
		return -1;
	if (np_variants[b->variant].thp && b->thp_pages > 0) {
		thp = np_bench_smaps_thp_pages(b->buf, b->page_size);
		if (thp >= 0 && thp < b->thp_pages &&
		    np_buffer_create(b))
			return -1;
	}
	if (!np_off_target(b, b->home, NULL, NULL))
		goto done;
	if (np_migrate_features)
		numaplace_migrate_range(0, b->buf, NP_BUF_SIZE, NP_SRC_NODE, 0,
					&m);
	if (np_off_target(b, b->home, NULL, NULL)) {
		syscall(SYS_move_pages, 0, b->nr_pages, b->pages, b->home,
			b->status, MPOL_MF_MOVE);
		if (np_off_target(b, b->home, "reset", "ERROR")) {
			printf("bench %s: cannot put the buffer back on node %d\n",
			       np_variants[b->variant].name, NP_SRC_NODE);
			return -1;
		}
	}
done:
	thp = np_bench_smaps_thp_pages(b->buf, b->page_size);
	if (thp >= 0 && (b->thp_min < 0 || thp < b->thp_min))
		b->thp_min = thp;
	return 0;
}

/*
 * Every status[] entry of the drop-in as the syscall's, and its return.
 * One documented difference (Documentation/abi.md): the syscall answers
 * -EBUSY for the second 4 KiB address of a THP it moved whole (that
 * address found the THP already isolated), numaplace the node.
 */
static size_t np_compare_status(struct np_bench *b)
{
	size_t i, bad = 0, thp_second = 0;
	/* Pages of one large folio of the variant, 0: base pages. */
	size_t per_folio = np_variants[b->variant].thp ?
			   NP_PMD_SIZE / b->page_size :
			   np_variants[b->variant].mthp ?
			   NP_MTHP_SIZE / b->page_size : 0;

	if (b->ret_sys != b->ret_dropin || b->err_sys != b->err_dropin) {
		printf("MISMATCH %s numaplace_move_pages(): returned %ld (%s), move_pages(2) %ld (%s)\n",
		       np_variants[b->variant].name, b->ret_dropin,
		       strerror(b->err_dropin), b->ret_sys,
		       strerror(b->err_sys));
		bad++;
	}
	for (i = 0; i < b->nr_pages; i++) {
		if (b->st_sys[i] == b->st_dropin[i])
			continue;
		if (per_folio && i % per_folio == 1 &&
		    b->st_sys[i] == -EBUSY && b->st_dropin[i] == b->targets[i]) {
			thp_second++;
			continue;
		}
		if (bad++ < NP_BENCH_REPORTS)
			printf("MISMATCH %s numaplace_move_pages(): status[%zu] (%p) %d, move_pages(2) %d\n",
			       np_variants[b->variant].name, i, b->pages[i],
			       b->st_dropin[i], b->st_sys[i]);
	}
	if (thp_second && !b->noted_thp_second) {
		printf("  note: %zu second addresses of a large folio: move_pages(2) -EBUSY, numaplace the node (documented)\n",
		       thp_second);
		b->noted_thp_second = 1;
	}
	return bad;
}

/* The module's counters of the last MIGRATE, for a MISMATCH report. */
static void np_print_counters(const struct np_bench *b, int m)
{
	const struct numaplace_migrate *r = &b->last;
	int i;

	printf("  %s counters: done %llu moved %llu pages %llu folios, in place %llu, failed %llu (",
	       np_methods[m].name, (unsigned long long)r->done,
	       (unsigned long long)r->nr_moved_pages,
	       (unsigned long long)r->nr_moved_folios,
	       (unsigned long long)r->nr_in_place_pages,
	       (unsigned long long)r->nr_failed_pages);
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++)
		printf("%s%llu", i ? " " : "",
		       (unsigned long long)r->nr_failed[i]);
	printf("), engines %#x\n", r->engines);
}

/*
 * After a run of @m: pages on their targets, data intact, the drop-in's
 * answers the syscall's and MIGRATE's counters adding up. Returns the
 * number of problems.
 */
static long np_verify(struct np_bench *b, int m)
{
	const char *what = np_methods[m].name;
	const char *tag = np_is_numaplace(m) ? "MISMATCH" : "ERROR";
	size_t off, bad_data = 0, bad = 0;
	const struct numaplace_migrate *r = &b->last;

	off = np_off_target(b, b->targets, what, tag);
	if (np_is_numaplace(m))
		bad_data = np_check_data(b, what);
	if (off)
		printf("%s %s %s: %zu pages not on their target\n", tag,
		       np_variants[b->variant].name, what, off);
	if (bad_data)
		printf("MISMATCH %s %s: %zu pages with wrong data\n",
		       np_variants[b->variant].name, what, bad_data);
	if (m == NP_M_DROPIN && b->have_sys)
		bad += np_compare_status(b);
	if (np_counts(m) &&
	    (r->done != b->nr_pages || r->nr_moved_pages != b->nr_moving ||
	     r->nr_in_place_pages != b->nr_pages - b->nr_moving ||
	     r->nr_failed_pages)) {
		printf("MISMATCH %s %s: counters, want done %zu moved %zu in place %zu failed 0\n",
		       np_variants[b->variant].name, what, b->nr_pages,
		       b->nr_moving, b->nr_pages - b->nr_moving);
		bad++;
	}
	if ((off || bad_data || bad) && np_counts(m))
		np_print_counters(b, m);
	return off + bad_data + bad;
}

static void np_run_one(struct np_bench *b, struct np_result *res, int m,
		       int round)
{
	double t0, ms;
	long bad, split;
	int ret;

	if (res->err[m] || !np_method_available(m))
		return;
	/* migrate_vma leaves PTE-mapped large folios: -EBUSY by design. */
	if (np_variants[b->variant].mthp && m == NP_M_VMA)
		return;
	if (np_variants[b->variant].interleave && m == NP_M_RANGE)
		return;
	if (np_methods[m].migrates && np_reset(b)) {
		res->err[m] = EIO;
		return;
	}
	ret = np_workers_for(m);
	if (ret) {
		res->err[m] = -ret;
		return;
	}
	split = np_variants[b->variant].mthp ? np_read_long(NP_MTHP_SPLIT) : -1;
	ret = np_writers_start(b);
	if (ret) {
		res->err[m] = -ret;
		printf("bench: writer threads: %s\n", strerror(-ret));
		return;
	}
	t0 = np_bench_now_ms();
	ret = np_methods[m].fn(b, m);
	ms = np_bench_now_ms() - t0;
	np_writers_stop(b);
	if (split >= 0) {
		long after = np_read_long(NP_MTHP_SPLIT);

		printf("  %-6s round %d  %-28s 64 KiB split counter %ld -> %ld\n",
		       np_variants[b->variant].name, round + 1,
		       np_methods[m].name, split, after);
		res->splits[m] += after - split;
	}
	if (ret) {
		res->err[m] = -ret;
		printf("bench %s: %s: %s\n", np_variants[b->variant].name,
		       np_methods[m].name, strerror(-ret));
		if (np_counts(m))
			np_print_counters(b, m);
		return;
	}
	printf("  %-6s round %d  %-28s %9.1f ms %7.3f GB/s\n",
	       np_variants[b->variant].name, round + 1, np_methods[m].name,
	       ms, (m == NP_M_MEMCPY ? NP_BUF_SIZE :
		    b->nr_moving * b->page_size) / ms / 1e6);
	if (np_methods[m].fn == np_m_migrate && !np_methods[m].engine_flag)
		res->engines |= b->last.engines;
	if (np_methods[m].migrates) {
		bad = np_verify(b, m);
		if (bad) {
			/* The syscall's own answers are not numaplace's fault. */
			if (np_is_numaplace(m))
				np_mismatches += bad;
			res->err[m] = EIO;
			return;
		}
	}
	if (ms < res->best_ms[m])
		res->best_ms[m] = ms;
}

static int np_bench_variant(int variant, struct np_result *res)
{
	char mthp_was[32] = "", pmd_was[32] = "";
	struct np_bench b;
	int r, i, m, ret = 0;

	memset(res, 0, sizeof(*res));
	for (m = 0; m < NP_NR_METHODS; m++)
		res->best_ms[m] = INFINITY;
	if (np_variants[variant].mthp) {
		if (access(NP_MTHP_ENABLED, F_OK)) {
			printf("variant %s: no %s on this kernel: skipped\n",
			       np_variants[variant].name, NP_MTHP_ENABLED);
			res->skipped = 1;
			return 0;
		}
		/* Only 64 KiB folios: PMD THP off for the variant. */
		if (np_thp_set(NP_MTHP_ENABLED, "always", mthp_was,
			       sizeof(mthp_was)) ||
		    np_thp_set(NP_PMD_ENABLED, "never", pmd_was,
			       sizeof(pmd_was))) {
			fprintf(stderr, "bench: mTHP settings: %s\n",
				strerror(errno));
			ret = -1;
			goto out_thp;
		}
	}
	if (np_bench_setup(&b, variant)) {
		ret = -1;
		goto out;
	}
	res->nr_moving = b.nr_moving;
	printf("variant %s: %zu pages, %zu move, THP-backed after populating: %ld\n",
	       np_variants[variant].name, b.nr_pages, b.nr_moving,
	       b.thp_pages);
	/* Rounds alternate A B .. and .. B A: drift hits every method. */
	for (r = 0; r < np_rounds; r++) {
		for (i = 0; i < NP_NR_METHODS; i++) {
			m = r & 1 ? NP_NR_METHODS - 1 - i : i;
			np_run_one(&b, res, m, r);
		}
	}
	res->thp_pages = b.thp_pages;
	res->thp_min = b.thp_min;
out:
	np_bench_teardown(&b);
out_thp:
	np_thp_restore(NP_PMD_ENABLED, pmd_was);
	np_thp_restore(NP_MTHP_ENABLED, mthp_was);
	return ret;
}

static double np_gbps(const struct np_result *res, int m)
{
	size_t bytes = m == NP_M_MEMCPY ? NP_BUF_SIZE :
		       res->nr_moving * sysconf(_SC_PAGESIZE);

	if (res->err[m] || isinf(res->best_ms[m]) || res->best_ms[m] <= 0)
		return -1;
	return bytes / res->best_ms[m] / 1e6;
}

static void np_print_table(const struct np_result *res)
{
	char hdr[40], eng[32];
	double num, den;
	int m, v;

	printf("\n");
	for (v = 0; v < NP_NR_VARIANTS; v++)
		printf("variant %-6s %zu MiB move 0 -> 1, THP-backed: %ld after populating, %ld fewest before a run\n",
		       np_variants[v].name,
		       res[v].nr_moving * sysconf(_SC_PAGESIZE) >> 20,
		       res[v].thp_pages, res[v].thp_min);
	np_bench_best_of(32, np_rounds, "GB/s");
	/* Columns: 11 characters, numbers end on the 10th (a mark after). */
	for (v = 0; v < NP_NR_VARIANTS; v++)
		printf(" %9s ", np_variants[v].name);
	printf("\n");
	for (m = 0; m < NP_NR_METHODS; m++) {
		if (!np_method_available(m))
			continue;
		printf("%-32s", np_methods[m].name);
		for (v = 0; v < NP_NR_VARIANTS; v++) {
			num = np_gbps(&res[v], m);
			if (num < 0)
				printf(" %9s ", res[v].err[m] ? "error" : "-");
			else
				printf(" %9.3f%c", num,
				       np_vma_splits(v, m) ? '*' : ' ');
		}
		printf("\n");
	}
	for (m = NP_M_DROPIN; m < NP_NR_METHODS; m++) {
		if (!np_method_available(m))
			continue;
		snprintf(hdr, sizeof(hdr), "%s / move_pages",
			 np_methods[m].name + (m == NP_M_DROPIN ||
					       m == NP_M_RANGE ? 0 :
					       strlen("numaplace ")));
		printf("%-32s", hdr);
		for (v = 0; v < NP_NR_VARIANTS; v++) {
			num = np_gbps(&res[v], m);
			den = np_gbps(&res[v], NP_M_MOVE_PAGES);
			if (num < 0 || den <= 0)
				printf(" %9s ", "-");
			else
				printf(" %9.2fx", num / den);
		}
		printf("\n");
	}
	if (!res[NP_V_MTHP].skipped &&
	    (!np_only_variant || !strcmp(np_only_variant, "mthp"))) {
		printf("64 KiB splits (mthp, all runs):");
		for (m = 0; m < NP_NR_METHODS; m++)
			if (np_method_available(m) && np_methods[m].migrates &&
			    m != NP_M_VMA)
				printf(" %s %ld;", np_methods[m].name,
				       res[NP_V_MTHP].splits[m]);
		printf("\n");
	}
	if (!np_migrate_features)
		return;
	printf("%-32s", "engines of MIGRATE (default)");
	for (v = 0; v < NP_NR_VARIANTS; v++) {
		np_bench_engines(res[v].engines, eng, sizeof(eng));
		printf(" %9s ", eng);
	}
	printf("\n");
	if (np_method_available(NP_M_VMA))
		printf("* with NUMAPLACE_MIGRATE_SPLIT_OK: the vma engine moves base pages, THPs end split\n");
}

int main(int argc, char **argv)
{
	unsigned long long any = NUMAPLACE_FEAT_MIGRATE_KERNEL |
				 NUMAPLACE_FEAT_MIGRATE_VMA |
				 NUMAPLACE_FEAT_MIGRATE_BATCH |
				 NUMAPLACE_FEAT_MIGRATE_PT;
	struct np_result res[NP_NR_VARIANTS];
	struct numaplace_info info;
	struct utsname uts;
	char balancing[16];
	int err, failed = 0, v, m;
	double t0 = np_bench_now_ms();

	int watches = 0, a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--rounds") && a + 1 < argc) {
			a++;
			np_rounds = atoi(argv[a]) > 0 ? atoi(argv[a]) : NP_ROUNDS;
		} else if (!strcmp(argv[a], "--method") && a + 1 < argc) {
			np_only_method = argv[++a];
		} else if (!strcmp(argv[a], "--variant") && a + 1 < argc) {
			np_only_variant = argv[++a];
		} else if (!strcmp(argv[a], "--mib") && a + 1 < argc) {
			long mib = atol(argv[++a]);

			if (mib < (long)(NP_PMD_SIZE >> 20) || mib > NP_BUF_MIB_MAX) {
				fprintf(stderr, "migrate: --mib takes %lu to %d\n",
					NP_PMD_SIZE >> 20, NP_BUF_MIB_MAX);
				return 2;
			}
			np_buf_size = (size_t)mib << 20;
		} else if (!strcmp(argv[a], "--writers") && a + 1 < argc) {
			np_nr_writers = atoi(argv[++a]);
			if (np_nr_writers < 0 || np_nr_writers > NP_WRITERS_MAX) {
				fprintf(stderr, "migrate: --writers takes 0 to %d\n",
					NP_WRITERS_MAX);
				return 2;
			}
		} else if (np_bench_watches_arg(argc, argv, &a, &watches) != 1) {
			fprintf(stderr, "usage: migrate [--rounds N] [--watches N] [--method WORD[,WORD]] [--variant 4k|thp|mthp|4k-ilv] [--mib N] [--writers N]\n");
			return 2;
		}
	}
	uname(&uts);
	printf("numaplace migrate bench: kernel %s, %lu MiB anonymous, node %d -> %d, best of %d rounds (A B .. / .. B A)\n",
	       uts.release, NP_BUF_SIZE >> 20, NP_SRC_NODE, NP_DST_NODE,
	       np_rounds);
	if (np_nr_writers)
		printf("%d writer thread(s) write every page during each timed run; every word checked after\n",
		       np_nr_writers);
	np_migrate_features = np_bench_probe(&info, NUMAPLACE_CMD_MIGRATE, any,
					     "cannot migrate",
					     "the syscall and memcpy rows", &err);
	if (!err && np_bench_nodes_missing(&info, NP_SRC_NODE, NP_DST_NODE,
					   "bench"))
		return 1;
	np_bench_balancing_say(balancing, sizeof(balancing));
	if (np_bench_watches_open(watches)) {
		np_bench_balancing_restore(balancing);
		return 1;
	}

	for (v = 0; v < NP_NR_VARIANTS; v++) {
		if (np_only_variant && strcmp(np_only_variant, np_variants[v].name)) {
			memset(&res[v], 0, sizeof(res[v]));
			for (m = 0; m < NP_NR_METHODS; m++)
				res[v].best_ms[m] = INFINITY;
			continue;
		}
		if (np_bench_variant(v, &res[v])) {
			np_bench_balancing_restore(balancing);
			return 1;
		}
	}
	np_bench_balancing_restore(balancing);
	if (np_workers_now > 0)
		np_set_workers(0);
	np_print_table(res);
	if (np_migrate_features && !np_only_method && !np_only_variant) {
		unsigned int cpus = 0;
		char routine[32];
		double zero, zero_best,
		       lim = np_copy_limit(&cpus, &zero_best, routine), best;

		/* Best of 3, like the methods. */
		for (v = 1; v < 3 && lim > 0; v++) {
			best = np_copy_limit(&cpus, &zero, routine);
			lim = best > lim ? best : lim;
			zero_best = zero > zero_best ? zero : zero_best;
		}
		if (lim > 0) {
			printf("%-32s %9.3f GB/s (%u CPUs, %s, best of 3)\n",
			       "kernel copy limit", lim, cpus, routine);
			if (zero_best > 0)
				printf("%-32s %9.3f GB/s (%u CPUs, clear_highpage, best of 3)\n",
				       "kernel zeroing limit", zero_best, cpus);
			printf("%-32s", "MIGRATE / kernel copy limit");
			for (v = 0; v < NP_NR_VARIANTS; v++) {
				double num = np_gbps(&res[v], NP_M_MIGRATE);

				if (num < 0)
					printf(" %9s ", "-");
				else
					printf(" %9.0f%%", 100 * num / lim);
			}
			printf("\n");
		} else {
			printf("kernel copy limit: %s unreadable\n", NP_COPY_LIMIT);
		}
	}
	printf("\nelapsed: %.0f s\n", (np_bench_now_ms() - t0) / 1e3);
	for (v = 0; v < NP_NR_VARIANTS; v++)
		for (m = 0; m < NP_NR_METHODS; m++)
			failed |= res[v].err[m] && np_method_available(m);
	if (np_bench_verdict(np_mismatches, failed))
		return 1;
	printf("verify: after every run each page is on its target and holds its data%s\n",
	       np_migrate_features ?
	       "; numaplace_move_pages() answers as move_pages(2)" : "");
	return 0;
}
