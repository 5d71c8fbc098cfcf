// SPDX-License-Identifier: GPL-2.0
/*
 * bench: the helpers every benchmark links (bench.h). Not a benchmark
 * itself: the Makefile builds it once, outside build/bench.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/mempolicy.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "numaplace.h"

#define NP_BALANCING	"/proc/sys/kernel/numa_balancing"
/* "LD_PRELOAD=" and a path. */
#define NP_BENCH_LD_MAX	(sizeof("LD_PRELOAD=") + PATH_MAX)
/* getopt(3) letters of one bench, each with its ':'. */
#define NP_BENCH_MAX_OPTS	16

extern char **environ;

uint64_t np_bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

double np_bench_now_ms(void)
{
	return np_bench_now_ns() / 1e6;
}

int np_bench_balancing_off(char *old, size_t len)
{
	ssize_t n;
	int fd;

	old[0] = 0;
	fd = open(NP_BALANCING, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, old, len - 1);
	old[n > 0 ? n : 0] = 0;
	old[strcspn(old, "\n")] = 0;
	if (pwrite(fd, "0\n", 2, 0) != 2) {
		n = -errno;
		close(fd);
		old[0] = 0;
		return n;
	}
	close(fd);
	return 0;
}

int np_bench_bind(int node)
{
	unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };

	if (node < 0)
		return syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0) ?
		       -errno : 0;
	mask[node / (8 * sizeof(long))] = 1UL << (node % (8 * sizeof(long)));
	return syscall(SYS_set_mempolicy, MPOL_BIND, mask,
		       NUMAPLACE_MAX_NODES + 1) ? -errno : 0;
}

void np_bench_bind_say(int node, const char *who)
{
	int ret = np_bench_bind(node);

	if (ret)
		fprintf(stderr, "%s: set_mempolicy(MPOL_BIND, node %d): %s\n",
			who, node, strerror(-ret));
}

size_t np_bench_off_node(void **pages, size_t n, int *status,
			 const int *want, int node, const char *tag,
			 const char *variant, const char *what)
{
	size_t i, off = 0;

	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		fprintf(stderr, "%s: move_pages query: %s\n",
			program_invocation_short_name, strerror(errno));
		return n;
	}
	for (i = 0; i < n; i++) {
		int w = want ? want[i] : node;

		if (status[i] == w)
			continue;
		if (what && off < NP_BENCH_REPORTS)
			printf("%s %s %s: page %zu (%p) is on %d, want node %d\n",
			       tag, variant, what, i, pages[i], status[i], w);
		off++;
	}
	return off;
}

int np_bench_verdict(long mismatches, int failed)
{
	if (mismatches) {
		printf("MISMATCH: %ld problems (see above)\n", mismatches);
		return 1;
	}
	if (failed) {
		printf("ERROR: a method failed (see above)\n");
		return 1;
	}
	return 0;
}

int np_bench_balancing_say(char *old, size_t len)
{
	int err = np_bench_balancing_off(old, len);

	printf("numa_balancing: %s\n", err ? strerror(-err) : "0 for the run");
	return err;
}

int np_bench_balancing_set(const char *mode)
{
	int fd, ret = 0;

	fd = open(NP_BALANCING, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, mode, strlen(mode)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

void np_bench_balancing_restore(const char *old)
{
	int err;

	if (!old[0])
		return;
	err = np_bench_balancing_set(old);
	if (err)
		fprintf(stderr, "bench: restore %s: %s\n", NP_BALANCING,
			strerror(-err));
}

long np_bench_smaps_thp_pages(const void *addr, size_t page_size)
{
	static const char key[] = "AnonHugePages:";
	unsigned long long start, end;
	char line[512];
	long kb = -1;
	int in = 0;
	FILE *f;

	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -1;
	/*
	 * A VMA is a line "start-end perms ..." and then its "Key: N kB"
	 * lines (no key parses as "hex-hex"): the key in the VMA that
	 * holds @addr ends the read.
	 */
	while (kb < 0 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &start, &end) == 2)
			in = start <= (uintptr_t)addr && (uintptr_t)addr < end;
		else if (in && !strncmp(line, key, sizeof(key) - 1))
			kb = strtol(line + sizeof(key) - 1, NULL, 10);
	}
	fclose(f);
	return kb < 0 ? -1 : kb * 1024 / (long)page_size;
}

char *np_bench_map(size_t len, size_t align, int thp, const char *what,
		   char **map, size_t *map_len)
{
	char *buf;

	*map_len = len + align;
	*map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*map == MAP_FAILED) {
		*map = NULL;
		perror("bench: mmap");
		return NULL;
	}
	buf = (char *)(((uintptr_t)*map + align - 1) & ~(uintptr_t)(align - 1));
	if (thp >= 0 && madvise(buf, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		fprintf(stderr, "bench %s: madvise: %s\n", what,
			strerror(errno));
	return buf;
}

void *np_bench_pages_alloc(size_t len, const char *who, size_t *page_size,
			   size_t *nr_pages, void ***pages, int **const ints[],
			   size_t nr_ints)
{
	size_t n, i;
	void **block;

	*page_size = sysconf(_SC_PAGESIZE);
	n = len / *page_size;
	*nr_pages = n;
	/* pages[] first: an int's alignment is a pointer's or less. */
	block = calloc(n, sizeof(*block) + nr_ints * sizeof(int));
	if (!block) {
		fprintf(stderr, "%s: out of memory\n", who);
		return NULL;
	}
	*pages = block;
	for (i = 0; i < nr_ints; i++)
		*ints[i] = (int *)(block + n) + i * n;
	return block;
}

char **np_bench_env(const char *const *extra)
{
	size_t n = 0, nr_extra = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	while (extra && extra[nr_extra])
		nr_extra++;
	env = calloc(n + nr_extra + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
		    strncmp(environ[i], "NUMAPLACE_PRELOAD_STATS=", 24))
			env[k++] = environ[i];
	for (size_t i = 0; i < nr_extra; i++)
		env[k++] = (char *)extra[i];
	return env;
}

/* Read all of @fd into @buf (NUL-terminated), to EOF or a full buffer. */
static void np_bench_slurp(int fd, char *buf, size_t size)
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

int np_bench_run(const char *path, char *const argv[], const char *shim,
		 int stats, char *out, size_t out_size, char *err,
		 size_t err_size, int *status, uint64_t *ns)
{
	const char *extra[3] = { NULL, NULL, NULL };
	int opipe[2] = { -1, -1 }, epipe[2];
	char ld[NP_BENCH_LD_MAX], **env;
	int k = 0, ret = -1;
	uint64_t t0;
	pid_t pid;

	snprintf(ld, sizeof(ld), "LD_PRELOAD=%s", shim ? shim : "");
	if (shim)
		extra[k++] = ld;
	if (stats)
		extra[k++] = "NUMAPLACE_PRELOAD_STATS=1";
	env = np_bench_env(extra);
	if (!env)
		return -1;
	if (out && pipe(opipe))
		goto out_env;
	if (pipe(epipe))
		goto out_opipe;
	t0 = np_bench_now_ns();
	pid = fork();
	if (pid < 0)
		goto out_epipe;
	if (!pid) {
		if (out) {
			dup2(opipe[1], STDOUT_FILENO);
			close(opipe[0]);
		}
		dup2(epipe[1], STDERR_FILENO);
		close(epipe[0]);
		execve(path, argv, env);
		dprintf(STDERR_FILENO, "exec %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	if (out) {
		close(opipe[1]);
		opipe[1] = -1;
		np_bench_slurp(opipe[0], out, out_size);
	}
	close(epipe[1]);
	epipe[1] = -1;
	np_bench_slurp(epipe[0], err, err_size);
	if (waitpid(pid, status, 0) == pid)
		ret = 0;
	if (ns)
		*ns = np_bench_now_ns() - t0;
out_epipe:
	close(epipe[0]);
	if (epipe[1] >= 0)
		close(epipe[1]);
out_opipe:
	if (opipe[0] >= 0)
		close(opipe[0]);
	if (opipe[1] >= 0)
		close(opipe[1]);
out_env:
	free(env);
	return ret;
}

int np_bench_getopt(int argc, char **argv, const struct np_bench_opt *opts,
		    size_t nr_opts, const char *usage)
{
	char letters[2 * NP_BENCH_MAX_OPTS + 1], *s = letters;
	size_t i;
	int opt;

	for (i = 0; i < nr_opts && i < NP_BENCH_MAX_OPTS; i++) {
		*s++ = opts[i].letter;
		if (!opts[i].flag)
			*s++ = ':';
	}
	*s = 0;
	while ((opt = getopt(argc, argv, letters)) != -1) {
		for (i = 0; i < nr_opts; i++)
			if (opts[i].letter == opt)
				break;
		if (i == nr_opts) {
			fprintf(stderr, "%s\n", usage);
			return 2;
		}
		if (opts[i].num)
			*opts[i].num = strtoul(optarg, NULL, 0);
		else if (opts[i].str)
			*opts[i].str = optarg;
		else
			*opts[i].flag = 1;
	}
	return 0;
}

int np_bench_abba(struct np_bench_side side[2], const char *name_a,
		  const char *name_b, unsigned long rounds,
		  int (*run)(void *data, const struct np_bench_side *s,
			     uint64_t *ns),
		  void *data)
{
	/* A B B A: drift and warm-up hit both sides alike. */
	static const int order[] = { 0, 1, 1, 0 };
	uint64_t ns;
	int ret;

	for (int k = 0; k < 2; k++) {
		side[k].name = k ? name_b : name_a;
		side[k].preload = k;
		side[k].best_ns = UINT64_MAX;
		side[k].runs = 0;
	}
	for (unsigned long i = 0; i < rounds; i++) {
		for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
			struct np_bench_side *s = &side[order[k]];

			ret = run(data, s, &ns);
			if (ret)
				return ret;
			s->runs++;
			if (ns < s->best_ns)
				s->best_ns = ns;
		}
	}
	return 0;
}

void np_bench_best_of(int width, int rounds, const char *unit)
{
	char cell[64];

	snprintf(cell, sizeof(cell), "best of %d rounds, %s", rounds, unit);
	printf("\n%-*s", width, cell);
}

void np_bench_abba_print(const struct np_bench_side side[2],
			 unsigned long nr_pages)
{
	printf("\n%-34s %12s %12s %6s\n", "best of A B B A rounds", "ms",
	       "ns/page", "runs");
	for (int k = 0; k < 2; k++)
		printf("%-34s %12.3f %12.1f %6lu\n", side[k].name,
		       side[k].best_ns / 1e6,
		       (double)side[k].best_ns / nr_pages, side[k].runs);
	printf("%-34s %11.2fx\n", "speed-up (A / B)",
	       side[1].best_ns ? (double)side[0].best_ns / side[1].best_ns :
	       0.0);
}
