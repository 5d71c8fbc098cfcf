/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench: what the benchmarks share (bench.c, compiled once and linked
 * into each, kvquery too: it calls nothing of libnumaplace): clocks, the
 * NUMA balancing switch, THP counts, buffers and their per-page arrays,
 * option letters, and running a program with and without the LD_PRELOAD
 * shim in A B B A order.
 */
#ifndef NP_BENCH_H
#define NP_BENCH_H

#include <stddef.h>
#include <stdint.h>

#define NP_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* CLOCK_MONOTONIC, in nanoseconds and in milliseconds. */
uint64_t np_bench_now_ns(void);
double np_bench_now_ms(void);

/*
 * NUMA hinting faults would move pages (and mark PTEs protnone) mid-run:
 * set kernel.numa_balancing to 0, its old value (newline cut) in @old.
 * 0 or -errno (@old is then ""). Restore puts @old back, if not "".
 */
int np_bench_balancing_off(char *old, size_t len);
/* The same, and a line "numa_balancing: " saying what was done. */
int np_bench_balancing_say(char *old, size_t len);
void np_bench_balancing_restore(const char *old);
/* kernel.numa_balancing set to @mode ("2": memory tiering). 0 or -errno. */
int np_bench_balancing_set(const char *mode);

/*
 * set_mempolicy(2) without libnuma (kvquery links none of numaplace's or
 * libnuma's helpers but this file): bind to @node, or back to the default
 * policy with a negative @node. 0 or -errno.
 */
int np_bench_bind(int node);
/*
 * np_bench_bind(@node) for a buffer about to be faulted in there: a
 * failure is said ("@who: set_mempolicy(MPOL_BIND, ...)") and the run
 * goes on, its pages wherever the kernel puts them.
 */
void np_bench_bind_say(int node, const char *who);

/*
 * Where the @n @pages are, by move_pages(2)'s query into @status: how
 * many are not on their node (@want[i], or @node where @want is NULL);
 * all @n when the query fails (a line says why). With @what, the first
 * NP_BENCH_REPORTS print a line "@tag @variant @what: page ...".
 */
#define NP_BENCH_REPORTS	8
size_t np_bench_off_node(void **pages, size_t n, int *status,
			 const int *want, int node, const char *tag,
			 const char *variant, const char *what);

/*
 * A benchmark's verdict: 1 after a "MISMATCH: N problems" line for
 * @mismatches, or an "ERROR: a method failed" line for @failed; else 0
 * (the caller says what held).
 */
int np_bench_verdict(long mismatches, int failed);

/* AnonHugePages of the VMA holding @addr, in base pages; -1 if unknown. */
long np_bench_smaps_thp_pages(const void *addr, size_t page_size);

/*
 * An anonymous private mapping of @len bytes and @align more (*@map,
 * *@map_len): its @align-aligned @len bytes, advised MADV_HUGEPAGE when
 * @thp > 0, MADV_NOHUGEPAGE when 0 (which would keep mTHP out too), not
 * advised when < 0 (a failed madvise is said, naming @what).
 * NULL, said, when the mmap fails.
 */
char *np_bench_map(size_t len, size_t align, int thp, const char *what,
		   char **map, size_t *map_len);

/*
 * The per-page arrays of a buffer of @len bytes, zeroed, in one calloc()ed
 * block (returned: one free() frees them all): move_pages' pages[] into
 * *@pages and an int a page (a nodes[] or a status[]) into each *@ints[i]
 * of the @nr_ints. The page size (sysconf) into *@page_size, the number
 * of pages into *@nr_pages. NULL after a line "@who: out of memory".
 */
void *np_bench_pages_alloc(size_t len, const char *who, size_t *page_size,
			   size_t *nr_pages, void ***pages, int **const ints[],
			   size_t nr_ints);

/*
 * This process's environment without LD_PRELOAD and the shim's
 * NUMAPLACE_PRELOAD_STATS, plus @extra (NULL-terminated; NULL for none).
 * calloc()ed, NULL-terminated; the strings are not copied.
 */
char **np_bench_env(const char *const *extra);

/*
 * Run @path with @argv in np_bench_env(), plus LD_PRELOAD=@shim when
 * @shim is not NULL and NUMAPLACE_PRELOAD_STATS=1 when @stats. Its
 * stdout is read into @out (NULL: inherited) and its stderr into @err,
 * to EOF or a full buffer (NUL-terminated): each must stay short, as a
 * bench's line and the shim's statistics are. Its wait status in
 * *@status and, if @ns is not NULL, the time from fork to its exit.
 * 0, or -1 when it could not be started or waited for.
 */
int np_bench_run(const char *path, char *const argv[], const char *shim,
		 int stats, char *out, size_t out_size, char *err,
		 size_t err_size, int *status, uint64_t *ns);

/* One option letter of a bench, what it sets: one of the three. */
struct np_bench_opt {
	int letter;
	unsigned long *num;	/* -X N (strtoul, any base) */
	const char **str;	/* -X STRING */
	int *flag;		/* -X: 1 */
};

/*
 * getopt(3) over @opts; optind is the first operand after. 0, or 2 (the
 * exit code) after @usage went to stderr for an unknown letter.
 */
int np_bench_getopt(int argc, char **argv, const struct np_bench_opt *opts,
		    size_t nr_opts, const char *usage);

/* One side of an A B B A comparison: without (A) or with (B) the shim. */
struct np_bench_side {
	const char *name;
	int preload;		/* 0: A, 1: B */
	uint64_t best_ns;	/* UINT64_MAX until a run */
	unsigned long runs;
};

/*
 * @rounds rounds of A B B A over @side[0], A named @name_a, and @side[1],
 * B named @name_b (both set up here): @run runs one, its time in *@ns; a
 * non-zero return stops everything and is returned. Each side keeps its
 * best time and its number of runs.
 */
int np_bench_abba(struct np_bench_side side[2], const char *name_a,
		  const char *name_b, unsigned long rounds,
		  int (*run)(void *data, const struct np_bench_side *s,
			     uint64_t *ns),
		  void *data);

/*
 * A table's first cell, after a blank line: "best of @rounds rounds,
 * @unit" padded to @width (the rows' name column).
 */
void np_bench_best_of(int width, int rounds, const char *unit);

/* The best times of both sides, per page of @nr_pages, and A / B. */
void np_bench_abba_print(const struct np_bench_side side[2],
			 unsigned long nr_pages);

/*
 * bench_np.c, for the benchmarks that call libnumaplace (not kvquery).
 *
 * What the module offers for its command @cmd (NUMAPLACE_CMD_*): the
 * features of @features it has (0: the module @what here, e.g. "cannot
 * migrate", or there is no device; a line says so, and that the
 * benchmark shows only @rows).
 * *@err gets numaplace_info()'s answer, @info the module's.
 */
struct numaplace_info;
uint64_t np_bench_probe(struct numaplace_info *info, unsigned int cmd,
			uint64_t features, const char *what, const char *rows,
			int *err);
/* The engines of NUMAPLACE_ENGINE_* bits @engines as "kernel+pt", or "-". */
void np_bench_engines(unsigned int engines, char *buf, size_t len);
/* 1, after a line starting "@name: ", if node @src or @dst has no memory. */
int np_bench_nodes_missing(const struct numaplace_info *info, int src,
			   int dst, const char *name);

#endif /* NP_BENCH_H */
