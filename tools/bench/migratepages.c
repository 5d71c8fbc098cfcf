// SPDX-License-Identifier: GPL-2.0
/*
 * bench/migratepages: is numactl's unmodified migratepages(8) faster with
 * LD_PRELOAD=libnumaplace-preload.so? A target process holds a 256 MiB
 * buffer of 4 KiB pages (MADV_NOHUGEPAGE; -H: THP) written on node A;
 * "migratepages PID A B" moves it, without the shim (A) and with it (B),
 * A B B A for each of NP_ROUNDS rounds, one boot, a fresh target each run.
 * The time is migratepages' whole run (fork to exit: exec, libnuma, the
 * migrate_pages(2) call). After each run every page of the buffer is
 * asked where it is (move_pages(2) with no nodes, the kernel itself) and
 * the per-node counts and a hash of the answers must be the same in every
 * run: the shim changes the speed, never the placement (a difference
 * prints MISMATCH and exits 1).
 *
 *   migratepages [-r ROUNDS] [-s MIB] [-H] [-m MIGRATEPAGES] [-l SHIM]
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "numaplace.h"
#include "bench.h"

#define NP_MIGRATEPAGES	"/usr/bin/migratepages"
#define NP_SHIM		"/usr/lib/libnumaplace-preload.so"
/* Rounds of A B B A: TCG timings are noisy, the best run counts. */
#define NP_ROUNDS	3
/* The size of the workload the issue names. */
#define NP_DEFAULT_MIB	256
/* Its stderr (the shim's statistics line) is short. */
#define NP_OUT_MAX	4096
/* A full node mask for mbind(2). */
#define NP_MAXNODE	(NUMAPLACE_MAX_NODES + 1)

static const char *np_mp = NP_MIGRATEPAGES, *np_shim = NP_SHIM;
static size_t np_len, np_psz;
static int np_thp, np_node_a = -1, np_node_b = -1;

/* A target with the buffer on node A, waiting; its pid and address. */
static pid_t np_target(char **addr)
{
	char **where = mmap(NULL, sizeof(char *), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int pfd[2];
	pid_t pid;
	char x;

	if (where == MAP_FAILED || pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		unsigned long mask[NUMAPLACE_NODE_WORDS] = { 0 };
		char *p = mmap(NULL, np_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		mask[np_node_a / 64] = 1UL << (np_node_a % 64);
		if (p == MAP_FAILED ||
		    madvise(p, np_len, np_thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) ||
		    syscall(SYS_mbind, p, np_len, MPOL_BIND, mask, NP_MAXNODE, 0))
			_exit(1);
		memset(p, 0x5a, np_len);
		*where = p;
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	x = read(pfd[0], &x, 1) == 1;
	close(pfd[0]);
	*addr = *where;
	munmap(where, sizeof(char *));
	if (!x) {
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/*
 * Where every page of the target's buffer is: the count on A and on B
 * (*@on) and an FNV-1a hash of the answers. 0 or -1.
 */
static int np_placement(pid_t pid, char *addr, unsigned long on[2],
			uint64_t *hash)
{
	size_t n = np_len / np_psz;
	void **pages = calloc(n, sizeof(*pages));
	int *st = calloc(n, sizeof(*st));
	int ret = -1;

	if (!pages || !st)
		goto out;
	for (size_t i = 0; i < n; i++)
		pages[i] = addr + i * np_psz;
	if (syscall(SYS_move_pages, pid, n, pages, NULL, st, 0))
		goto out;
	*hash = 0xcbf29ce484222325ULL;
	on[0] = on[1] = 0;
	for (size_t i = 0; i < n; i++) {
		on[0] += st[i] == np_node_a;
		on[1] += st[i] == np_node_b;
		*hash = (*hash ^ (uint32_t)st[i]) * 0x100000001b3ULL;
	}
	ret = 0;
out:
	free(pages);
	free(st);
	return ret;
}

/*
 * One migratepages run on a fresh target: its time in *@ns, placement in
 * @on and *@hash, its stderr in @err. 0 or -1.
 */
static int np_run(int preload, int stats, uint64_t *ns, unsigned long on[2],
		  uint64_t *hash, char *err, size_t errlen)
{
	char spid[16], sa[16], sb[16], *addr;
	char *argv[] = { (char *)np_mp, spid, sa, sb, NULL };
	int status, ret = -1;
	pid_t target;

	target = np_target(&addr);
	if (target < 0)
		goto out;
	snprintf(spid, sizeof(spid), "%d", target);
	snprintf(sa, sizeof(sa), "%d", np_node_a);
	snprintf(sb, sizeof(sb), "%d", np_node_b);
	/* The shim's statistics line comes in several writes: read to EOF. */
	if (np_bench_run(np_mp, argv, preload ? np_shim : NULL, stats, NULL,
			 0, err, errlen, &status, ns))
		goto out;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "migratepages bench: %s%s failed (%s %d): %s\n",
			np_mp, preload ? " (preloaded)" : "",
			WIFEXITED(status) ? "exit" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) :
			WTERMSIG(status), err);
		goto out;
	}
	ret = np_placement(target, addr, on, hash);
out:
	if (target > 0) {
		kill(target, SIGKILL);
		waitpid(target, NULL, 0);
	}
	return ret;
}

/* The placement of the first run, which every timed run must repeat. */
struct np_mp_ctx {
	unsigned long on0[2];
	uint64_t hash0;
	int mismatch;
};

static int np_mp_run(void *data, const struct np_bench_side *s, uint64_t *ns)
{
	struct np_mp_ctx *ctx = data;
	char err[NP_OUT_MAX];
	unsigned long on[2];
	uint64_t hash;

	if (np_run(s->preload, 0, ns, on, &hash, err, sizeof(err)))
		return 1;
	if (hash != ctx->hash0 || on[0] != ctx->on0[0] || on[1] != ctx->on0[1]) {
		printf("MISMATCH: %s: %lu on %d, %lu on %d (hash %#" PRIx64 "), first run %lu, %lu (%#" PRIx64 ")\n",
		       s->name, on[0], np_node_a, on[1], np_node_b, hash,
		       ctx->on0[0], ctx->on0[1], ctx->hash0);
		ctx->mismatch = 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long rounds = NP_ROUNDS, mib = NP_DEFAULT_MIB;
	const struct np_bench_opt opts[] = {
		{ 'r', .num = &rounds },
		{ 's', .num = &mib },
		{ 'H', .flag = &np_thp },
		{ 'm', .str = &np_mp },
		{ 'l', .str = &np_shim },
	};
	char err[NP_OUT_MAX], balancing[16] = "";
	struct np_mp_ctx ctx = { .mismatch = 0 };
	struct numaplace_info info;
	struct np_bench_side side[2];
	struct utsname uts;
	uint64_t ns;
	int bad = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (np_bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
			    "usage: migratepages [-r ROUNDS] [-s MIB] [-H] [-m MIGRATEPAGES] [-l SHIM]"))
		return 2;
	if (!rounds)
		rounds = 1;
	np_psz = sysconf(_SC_PAGESIZE);
	np_len = (mib ? mib : NP_DEFAULT_MIB) << 20;
	if (access(np_shim, R_OK) || access(np_mp, X_OK)) {
		fprintf(stderr, "migratepages bench: %s or %s missing\n",
			np_shim, np_mp);
		return 1;
	}
	if (numaplace_info(&info)) {
		fprintf(stderr, "migratepages bench: no module\n");
		return 1;
	}
	for (int n = 0; n < NUMAPLACE_MAX_NODES; n++) {
		if (!numaplace_node_isset(info.node_memory, n))
			continue;
		if (np_node_a < 0)
			np_node_a = n;
		else if (np_node_b < 0)
			np_node_b = n;
	}
	if (np_node_b < 0) {
		fprintf(stderr, "migratepages bench: one node with memory\n");
		return 1;
	}
	uname(&uts);
	np_bench_balancing_off(balancing, sizeof(balancing));

	/* The shim's route, and the placement every run must reach. */
	if (np_run(1, 1, &ns, ctx.on0, &ctx.hash0, err, sizeof(err)))
		return 1;
	printf("numaplace migratepages bench: kernel %s, %lu MiB of %s pages, node %d -> %d\n",
	       uts.release, np_len >> 20, np_thp ? "THP" : "4 KiB", np_node_a,
	       np_node_b);
	printf("shim: %s", err[0] ? err : "(no statistics)\n");
	if (!strstr(err, "numa_migrate_pages 1")) {
		printf("ERROR: the shim did not take numa_migrate_pages over\n");
		bad = 1;
	}
	if (np_bench_abba(side, "migratepages",
			  "migratepages + preload shim", rounds,
			  np_mp_run, &ctx))
		return 1;
	np_bench_balancing_restore(balancing);

	np_bench_abba_print(side, np_len / np_psz);
	printf("placement identical in all %lu runs: %s (%lu pages on %d, %lu on %d, hash %#" PRIx64 ")\n",
	       side[0].runs + side[1].runs + 1, ctx.mismatch ? "NO" : "yes",
	       ctx.on0[0], np_node_a, ctx.on0[1], np_node_b, ctx.hash0);
	return bad || ctx.mismatch;
}
