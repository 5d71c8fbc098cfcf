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
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numaplace.h"
#include "env.h"

#define NP_KVQUERY	"/usr/libexec/numaplace/bench/kvquery"
#define NP_SHIM		"/usr/lib/libnumaplace-preload.so"
/* Rounds of A B B A: TCG timings are noisy, the best run counts. */
#define NP_ROUNDS	5
/* One kvquery line is short; its stderr (shim statistics) too. */
#define NP_OUT_MAX	4096
#define NP_BALANCING	"/proc/sys/kernel/numa_balancing"

/* What one kvquery run printed. */
struct np_kvq {
	unsigned long pages, calls;
	uint64_t best_ns;
	char nodes[256];
	char hash[32];
	char err[NP_OUT_MAX];		/* its stderr */
};

/* One side of the comparison. */
struct np_side {
	const char *name;
	int preload;
	uint64_t best_ns;
	unsigned long runs;
};

static const char *np_kvquery = NP_KVQUERY, *np_shim = NP_SHIM;
static char **np_kvq_args;
static int np_nr_kvq_args;

/* Read all of @fd into @buf (NUL-terminated). */
static void np_slurp(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len < size - 1 &&
	       (n = read(fd, buf + len, size - 1 - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += n;
	}
	buf[len] = 0;
}

/*
 * Run kvquery once, with the shim when @preload (and its statistics when
 * @stats). 0 and the parsed line in *@r, or -1.
 */
static int np_run_kvquery(int preload, int stats, struct np_kvq *r)
{
	char ld[4200], out[NP_OUT_MAX], *line;
	const char *extra[3] = { NULL, NULL, NULL };
	int opipe[2], epipe[2], status, k = 0;
	char **argv, **env;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	snprintf(ld, sizeof(ld), "LD_PRELOAD=%s", np_shim);
	if (preload)
		extra[k++] = ld;
	if (stats)
		extra[k++] = "NUMAPLACE_PRELOAD_STATS=1";
	env = np_bench_env(extra);
	argv = calloc(np_nr_kvq_args + 2, sizeof(*argv));
	if (!env || !argv || pipe(opipe) || pipe(epipe))
		return -1;
	argv[0] = (char *)np_kvquery;
	for (int i = 0; i < np_nr_kvq_args; i++)
		argv[i + 1] = np_kvq_args[i];
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(opipe[1], STDOUT_FILENO);
		dup2(epipe[1], STDERR_FILENO);
		close(opipe[0]);
		close(epipe[0]);
		execve(np_kvquery, argv, env);
		dprintf(STDERR_FILENO, "exec %s: %s\n", np_kvquery,
			strerror(errno));
		_exit(127);
	}
	close(opipe[1]);
	close(epipe[1]);
	/* kvquery writes one short line to each: no pipe fills up. */
	np_slurp(opipe[0], out, sizeof(out));
	np_slurp(epipe[0], r->err, sizeof(r->err));
	close(opipe[0]);
	close(epipe[0]);
	free(env);
	free(argv);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
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

/* NUMA hinting faults would change placement between runs. */
static void np_balancing(const char *val, char *old, size_t len)
{
	int fd = open(NP_BALANCING, O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	if (old) {
		n = read(fd, old, len - 1);
		old[n > 0 ? n : 0] = 0;
	}
	if (val && *val && pwrite(fd, val, strlen(val), 0) < 0)
		fprintf(stderr, "preload bench: %s: %s\n", NP_BALANCING,
			strerror(errno));
	close(fd);
}

int main(int argc, char **argv)
{
	struct np_side side[2] = {
		{ "numa_move_pages (libnuma)", 0, UINT64_MAX, 0 },
		{ "numa_move_pages + preload shim", 1, UINT64_MAX, 0 },
	};
	/* A B B A: drift and warm-up hit both sides alike. */
	static const int order[] = { 0, 1, 1, 0 };
	unsigned long rounds = NP_ROUNDS;
	char hash[32] = "", balancing[16] = "";
	struct np_kvq r, stats;
	struct utsname uts;
	int opt, bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "r:k:l:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'k':
			np_kvquery = optarg;
			break;
		case 'l':
			np_shim = optarg;
			break;
		default:
			fprintf(stderr, "usage: preload [-r ROUNDS] [-k KVQUERY] [-l SHIM] [-- KVQUERY-ARGS...]\n");
			return 2;
		}
	}
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
	np_balancing("0", balancing, sizeof(balancing));

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

	for (unsigned long i = 0; i < rounds; i++) {
		for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
			struct np_side *s = &side[order[k]];

			if (np_run_kvquery(s->preload, 0, &r))
				return 1;
			s->runs++;
			if (r.best_ns < s->best_ns)
				s->best_ns = r.best_ns;
			if (strcmp(r.hash, hash)) {
				printf("MISMATCH: %s: status[] hash %s, first run %s (nodes %s)\n",
				       s->name, r.hash, hash, r.nodes);
				bad = 1;
			}
		}
	}
	np_balancing(balancing, NULL, 0);

	printf("\n%-34s %12s %12s %6s\n", "best of A B B A rounds", "ms",
	       "ns/page", "runs");
	for (int k = 0; k < 2; k++)
		printf("%-34s %12.3f %12.1f %6lu\n", side[k].name,
		       side[k].best_ns / 1e6,
		       (double)side[k].best_ns / stats.pages, side[k].runs);
	printf("%-34s %11.1fx\n", "speed-up (A / B)",
	       side[1].best_ns ? (double)side[0].best_ns / side[1].best_ns :
	       0.0);
	printf("status[] identical in all %lu runs: %s (hash %s, nodes %s)\n",
	       side[0].runs + side[1].runs + 1, bad ? "NO" : "yes", hash,
	       stats.nodes);
	return bad;
}
