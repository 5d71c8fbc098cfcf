// SPDX-License-Identifier: GPL-2.0
/*
 * bench/preload: does an unmodified program get faster with
 * LD_PRELOAD=libnumaplace-preload.so? Runs bench/kvquery (libnuma's
 * numa_move_pages() over a 256 MiB buffer, one 4 KiB page per entry)
 * without the shim (A) and with it (B), in A B B A order for each of
 * NP_ROUNDS rounds, in one boot, and keeps the best time of each. Every
 * run's status[] hash must be the same: the shim changes the speed, never
 * the answer (a difference prints MISMATCH and exits 1).
 *
 *   preload [-r ROUNDS] [-k KVQUERY] [-l SHIM] [-- KVQUERY-ARGS...]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numaplace.h"
#include "bench.h"

#define NP_KVQUERY	"/usr/libexec/numaplace/bench/kvquery"
#define NP_SHIM		"/usr/lib/libnumaplace-preload.so"
/* Rounds of A B B A: TCG timings are noisy, the best run counts. */
#define NP_ROUNDS	5
/* One kvquery line is short; its stderr (shim statistics) too. */
#define NP_OUT_MAX	4096

/* What one kvquery run printed. */
struct np_kvq {
	unsigned long pages, calls;
	uint64_t best_ns;
	char nodes[256];
	char hash[32];
	char err[NP_OUT_MAX];		/* its stderr */
};

static const char *np_kvquery = NP_KVQUERY, *np_shim = NP_SHIM;
static char **np_kvq_args;
static int np_nr_kvq_args;

/*
 * Run kvquery once, with the shim when @preload (and its statistics when
 * @stats). 0 and the parsed line in *@r, or -1.
 */
static int np_run_kvquery(int preload, int stats, struct np_kvq *r)
{
	char out[NP_OUT_MAX], *line, **argv;
	int status, ret;

	memset(r, 0, sizeof(*r));
	argv = calloc(np_nr_kvq_args + 2, sizeof(*argv));
	if (!argv)
		return -1;
	argv[0] = (char *)np_kvquery;
	for (int i = 0; i < np_nr_kvq_args; i++)
		argv[i + 1] = np_kvq_args[i];
	/* kvquery writes one short line to each: no pipe fills up. */
	ret = np_bench_run(np_kvquery, argv, preload ? np_shim : NULL, stats,
			   out, sizeof(out), r->err, sizeof(r->err), &status,
			   NULL);
	free(argv);
	if (ret)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "preload bench: kvquery%s failed: %s%s",
			preload ? " (preloaded)" : "", r->err, out);
		return -1;
	}
	line = strstr(out, "kvquery: ");
	if (!line ||
	    sscanf(line, "kvquery: pages=%lu calls=%lu best_ns=%" SCNu64
		   " ns_per_page=%*f nodes=%255s status_hash=%31s",
		   &r->pages, &r->calls, &r->best_ns, r->nodes, r->hash) != 5) {
		fprintf(stderr, "preload bench: cannot parse kvquery's output: %s",
			out);
		return -1;
	}
	return 0;
}

/* The first run's answer every timed run must repeat. */
struct np_preload_ctx {
	const char *hash;
	int bad;
};

/* One timed run of side @s: its best time, its hash against the first. */
static int np_preload_run(void *data, const struct np_bench_side *s,
			  uint64_t *ns)
{
	struct np_preload_ctx *ctx = data;
	struct np_kvq r;

	if (np_run_kvquery(s->preload, 0, &r))
		return 1;
	*ns = r.best_ns;
	if (strcmp(r.hash, ctx->hash)) {
		printf("MISMATCH: %s: status[] hash %s, first run %s (nodes %s)\n",
		       s->name, r.hash, ctx->hash, r.nodes);
		ctx->bad = 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long rounds = NP_ROUNDS;
	const struct np_bench_opt opts[] = {
		{ 'r', .num = &rounds },
		{ 'k', .str = &np_kvquery },
		{ 'l', .str = &np_shim },
	};
	char hash[32] = "", balancing[16] = "";
	struct np_preload_ctx ctx = { hash, 0 };
	struct np_kvq stats;
	struct np_bench_side side[2];
	struct utsname uts;
	int bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (np_bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
			    "usage: preload [-r ROUNDS] [-k KVQUERY] [-l SHIM] [-- KVQUERY-ARGS...]"))
		return 2;
	np_kvq_args = argv + optind;
	np_nr_kvq_args = argc - optind;
	if (!rounds)
		rounds = 1;
	if (access(np_shim, R_OK) || access(np_kvquery, X_OK)) {
		fprintf(stderr, "preload bench: %s or %s missing\n", np_shim,
			np_kvquery);
		return 1;
	}
	uname(&uts);
	np_bench_balancing_off(balancing, sizeof(balancing));

	/* Which way the shim routes, and that it is taken at all. */
	if (np_run_kvquery(1, 1, &stats))
		return 1;
	printf("numaplace preload bench: kernel %s, module %s, kvquery %lu pages (%lu MiB) per pass, %lu numa_move_pages call(s) per pass\n",
	       uts.release, numaplace_available() ? "loaded" : "absent",
	       stats.pages, stats.pages * sysconf(_SC_PAGESIZE) >> 20,
	       stats.calls);
	printf("shim: %s", stats.err[0] ? stats.err : "(no statistics)\n");
	if (!strstr(stats.err, "numa_move_pages ") ||
	    strstr(stats.err, "numa_move_pages 0,")) {
		printf("ERROR: the shim did not take numa_move_pages over\n");
		bad = 1;
	}
	snprintf(hash, sizeof(hash), "%s", stats.hash);

	if (np_bench_abba(side, "numa_move_pages (libnuma)",
			  "numa_move_pages + preload shim", rounds,
			  np_preload_run, &ctx))
		return 1;
	np_bench_balancing_restore(balancing);

	np_bench_abba_print(side, stats.pages);
	printf("status[] identical in all %lu runs: %s (hash %s, nodes %s)\n",
	       side[0].runs + side[1].runs + 1, ctx.bad ? "NO" : "yes", hash,
	       stats.nodes);
	return bad || ctx.bad;
}
