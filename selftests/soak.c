// SPDX-License-Identifier: GPL-2.0
/*
 * The soak: random mixes of queries and migrations for a while, on memory
 * that is being written, remapped, forked and advised at the same time.
 *
 * Stamped buffers (private anon 4 KiB, THPs, MAP_SHARED anon shared with a
 * forked child, a memfd) are written continuously by one writer thread
 * each (the fork child writes half of its buffer): every 64-bit word of a
 * page is a function of (buffer, page index, generation, word index), and
 * a writer checks the page still holds its previous stamp before it writes
 * the next. Migrator threads pick random operations: range and array
 * queries (runs, status, totals, as-syscall answers) and migrations with
 * every engine flag the module offers (default, KERNEL, VMA, BATCH; an
 * engine that answers -EOPNOTSUPP is dropped), every policy but CPU,
 * range and array mode, with and without MOVE_ALL and SPLIT_OK, and check
 * each answer's consistency. A churn thread keeps remapping scratch
 * regions (mmap, munmap, mremap MAYMOVE/FIXED/DONTUNMAP, fork, madvise
 * DONTNEED/FREE/PAGEOUT/HUGEPAGE/COLLAPSE, mprotect) which the migrators
 * also query and move, and checks their bytes after each step; it also
 * splits the THP buffer's PMDs (a VMA boundary made inside one by
 * MADV_NOHUGEPAGE or mlock of a page, and undone) and collapses them again
 * (MADV_COLLAPSE) while the migrators move them with every engine, the
 * page-table engine (ENGINE_PT and the default) among them.
 *
 * At the end every stamped byte is the last value written (in both
 * processes' views of the shared buffer), the buffers can all be moved to
 * node 0 and are there, nr_isolated_anon/file are back to their baseline
 * and the module's reference count too.
 *
 * NP_SOAK_SECONDS sets the duration (default NP_SOAK_DEFAULT_S, short
 * enough for `make check`; `make check-debug` runs 600 s), NP_SOAK_SEED the
 * seed (default: the time); the seed is printed.
 */
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "soak_lib.h"
#include "kselftest_harness.h"

/* ---- the migrators ---------------------------------------------------- */

struct np_migrator {
	pthread_t th;
	int fd;
	__u64 rs;
	struct np_ctx c;
	const struct numaplace_info *info;
	int nodes[NUMAPLACE_MAX_NODES];	/* nodes with memory */
	int nr_nodes;
	atomic_uint *engines_ok;	/* NUMAPLACE_MIGRATE_ENGINE_* flags */
};

/* A target: a stamped buffer's random stretch, or a scratch region. */
struct np_target {
	int b;			/* NP_SB_* or -1 for scratch */
	uintptr_t start;
	size_t n;		/* pages */
};

static void np_pick(struct np_migrator *mg, struct np_target *t)
{
	size_t first;

	if (np_rand_below(&mg->rs, 5) == 0) {
		t->b = -1;
		t->start = atomic_load(&np_soak_slots[np_rand_below(&mg->rs,
							     NP_SOAK_SLOTS)].addr);
		if (!t->start)		/* unmapped now: the text's neighbourhood */
			t->start = (uintptr_t)&np_soak_slots & ~(np_soak_psz - 1);
		t->n = 1 + np_rand_below(&mg->rs, NP_SOAK_SLOT_PAGES);
		return;
	}
	t->b = np_rand_below(&mg->rs, NP_SB_NR);
	first = np_rand_below(&mg->rs, np_soak_sh->n[t->b]);
	t->n = 1 + np_rand_below(&mg->rs, np_soak_sh->n[t->b] - first);
	t->start = (uintptr_t)np_soak_sh->buf[t->b] + first * np_soak_psz;
}

static int np_node_has_memory(struct np_migrator *mg, int node)
{
	return np_node_isset(mg->info->node_memory, node);
}

/* A query of @t with random buffers and mode; checks its consistency. */
static void np_soak_query(struct np_migrator *mg, const struct np_target *t)
{
	__u32 flags = np_rand_below(&mg->rs, 2) ? NUMAPLACE_QUERY_AS_SYSCALL : 0;
	int array = np_rand_below(&mg->rs, 2), ret;
	size_t n = t->n, cap = 0;
	__u64 *addrs = calloc(n + 1, sizeof(*addrs));
	__s32 *st = malloc((n + 1) * sizeof(*st));
	__u64 *np = calloc(mg->c.nr_nodes + 1, sizeof(*np));
	struct numaplace_run *runs = NULL;
	struct numaplace_query q;
	__u64 placed = 0, unplaced = 0;

	if (!addrs || !st || !np)
		goto out;
	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	if (array) {
		for (size_t i = 0; i < n; i++)
			addrs[i] = t->start + np_rand_below(&mg->rs, n) * np_soak_psz +
				   np_rand_below(&mg->rs, np_soak_psz);
		ret = np_query_array(mg->fd, 0, flags, addrs, n, st, np,
				     mg->c.nr_nodes, &q);
	} else {
		/* Without a runs buffer or with one big enough: one call. */
		if (np_rand_below(&mg->rs, 2)) {
			cap = n + 1;
			runs = calloc(cap, sizeof(*runs));
		}
		ret = np_query_range(mg->fd, 0, flags, t->start, n * np_soak_psz, runs,
				     cap, st, np, mg->c.nr_nodes, &q);
	}
	atomic_fetch_add(&np_soak_count.queries, 1);
	if (ret) {
		np_fail("query %s %zu pages%s: %s", array ? "array" : "range",
			n, flags ? " as_syscall" : "", strerror(-ret));
		goto out;
	}
	if (q.done != n || st[n] != NP_SENTINEL ||
	    np[mg->c.nr_nodes] != 0) {
		np_fail("query: done %llu of %zu, or a write past a buffer",
			(unsigned long long)q.done, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (st[i] >= 0 && np_node_has_memory(mg, st[i])) {
			continue;
		} else if (st[i] == -ENOENT || (st[i] == -EFAULT &&
			   (t->b < 0 || flags))) {
			/* Under migration (or swapped, or no VMA: scratch). */
			unplaced++;
			continue;
		}
		np_fail("query %s of %s page %zu: status %d",
			array ? "array" : "range",
			t->b < 0 ? "scratch" : np_sb_name[t->b], i, st[i]);
		goto out;
	}
	for (__u32 k = 0; k < mg->c.nr_nodes; k++)
		placed += np[k];
	if (q.nr_unplaced != unplaced || placed + unplaced != n)
		np_fail("query: nr_unplaced %llu (status says %llu), %llu placed of %zu",
			(unsigned long long)q.nr_unplaced,
			(unsigned long long)unplaced,
			(unsigned long long)placed, n);
out:
	free(addrs);
	free(st);
	free(np);
	free(runs);
}

/* A random engine flag this module takes, or -1 if none is left. */
static int np_pick_engine(struct np_migrator *mg, int b)
{
	static const __u32 flag[] = { 0, NUMAPLACE_MIGRATE_ENGINE_KERNEL,
				      NUMAPLACE_MIGRATE_ENGINE_VMA,
				      NUMAPLACE_MIGRATE_ENGINE_BATCH,
				      NUMAPLACE_MIGRATE_ENGINE_PT };
	unsigned int ok = atomic_load(mg->engines_ok);

	for (int tries = 0; tries < 16; tries++) {
		__u32 f = flag[np_rand_below(&mg->rs, ARRAY_SIZE(flag))];

		/* migrate_vma moves private anon only; shared would be -EBUSY. */
		if (f == NUMAPLACE_MIGRATE_ENGINE_VMA && b != NP_SB_ANON &&
		    b != NP_SB_THP && b >= 0)
			continue;
		if (!f || (ok & f))
			return f;
	}
	return 0;
}

/*
 * @s, the node page @i is on, is a target the call could have had for it:
 * NODE: the node; INTERLEAVE: one of the set; PER_PAGE: its node, another
 * entry's node for the same page (array mode names pages twice), any node
 * for a THP (the folio goes whole to the target of its first page).
 */
static int np_status_target(struct np_migrator *mg, const struct np_target *t,
			    int policy, const struct numaplace_migrate *m,
			    const __u64 *addrs, const __s32 *nodes,
			    const __u64 *set, size_t i, size_t n, int s)
{
	switch (policy) {
	case NUMAPLACE_POLICY_NODE:
		return s == m->node;
	case NUMAPLACE_POLICY_INTERLEAVE:
		return np_node_isset(set, s);
	}
	if (s == nodes[i])
		return 1;
	if (t->b == NP_SB_THP)
		return np_node_has_memory(mg, s);
	for (size_t j = 0; j < n; j++)
		if (addrs[j] / np_soak_psz == addrs[i] / np_soak_psz && nodes[j] == s)
			return 1;
	return 0;
}

/*
 * A MIGRATE call's counters against its statuses: what holds even when
 * another call moves the same pages at the same time. (Not "folios <=
 * pages" nor "engines set iff pages moved": a page this call moved can be
 * moved on by the other before this call answers, and the other's move
 * can land a page on this call's target.)
 */
static void np_soak_counters(const char *what, const struct numaplace_migrate *m,
			     const __s32 *st, size_t n, int range, __u32 allowed)
{
	__u64 fail[NUMAPLACE_FAIL_MAX] = { 0 }, sum = 0;
	__u64 nfail = np_count_fails(st, n, fail);

	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++) {
		sum += m->nr_failed[r];
		if (m->nr_failed[r] != fail[r])
			np_fail("%s: nr_failed[%d] %llu, status says %llu", what,
				r, (unsigned long long)m->nr_failed[r],
				(unsigned long long)fail[r]);
	}
	if (sum != m->nr_failed_pages || nfail != m->nr_failed_pages)
		np_fail("%s: nr_failed_pages %llu, nr_failed[] %llu, status %llu",
			what, (unsigned long long)m->nr_failed_pages,
			(unsigned long long)sum, (unsigned long long)nfail);
	if (range && m->nr_moved_pages + m->nr_in_place_pages +
		     m->nr_failed_pages != m->done)
		np_fail("%s: moved %llu + in place %llu + failed %llu != done %llu",
			what, (unsigned long long)m->nr_moved_pages,
			(unsigned long long)m->nr_in_place_pages,
			(unsigned long long)m->nr_failed_pages,
			(unsigned long long)m->done);
	if (m->engines & ~allowed)
		np_fail("%s: engines %#x, may be %#x", what, m->engines, allowed);
}

static void np_soak_migrate(struct np_migrator *mg, const struct np_target *t)
{
	int array = np_rand_below(&mg->rs, 2), policy = np_rand_below(&mg->rs, 3);
	int engine = np_pick_engine(mg, t->b), ret;
	__u32 flags = engine;
	size_t n = t->n;
	__u64 *addrs = calloc(n + 1, sizeof(*addrs));
	__s32 *st = malloc((n + 1) * sizeof(*st));
	__s32 *nodes = calloc(n + 1, sizeof(*nodes));
	__u64 set[NUMAPLACE_NODE_WORDS] = { 0 };
	struct numaplace_migrate m;
	char what[96];

	if (!addrs || !st || !nodes)
		goto out;
	if (np_rand_below(&mg->rs, 2) || t->b == NP_SB_FORK)
		flags |= NUMAPLACE_MIGRATE_MOVE_ALL;
	if (np_rand_below(&mg->rs, 2))
		flags |= NUMAPLACE_MIGRATE_SPLIT_OK;
	if (array)
		flags |= NUMAPLACE_MIGRATE_PAGES;
	for (size_t i = 0; i <= n; i++)
		st[i] = NP_SENTINEL;
	for (size_t i = 0; i < n; i++) {
		addrs[i] = t->start + (array ? np_rand_below(&mg->rs, n) : i) * np_soak_psz;
		nodes[i] = mg->nodes[np_rand_below(&mg->rs, mg->nr_nodes)];
	}
	np_migrate_init(&m, 0, flags, policy);
	if (array) {
		m.pages_ptr = (uintptr_t)addrs;
		m.count = n;
	} else {
		m.start = t->start;
		m.len = n * np_soak_psz;
	}
	m.status_ptr = (uintptr_t)st;
	m.node = nodes[0];
	if (policy == NUMAPLACE_POLICY_PER_PAGE)
		m.nodes_ptr = (uintptr_t)nodes;
	for (int k = 0; k < mg->nr_nodes; k++)
		if (k == 0 || np_rand_below(&mg->rs, 2))
			set[mg->nodes[k] / 64] |= 1ULL << (mg->nodes[k] % 64);
	if (policy == NUMAPLACE_POLICY_INTERLEAVE)
		memcpy(m.node_set, set, sizeof(set));
	ret = np_migrate(mg->fd, &m);
	atomic_fetch_add(&np_soak_count.migrations, 1);
	snprintf(what, sizeof(what), "migrate %s of %s, %zu pages, flags %#x policy %d",
		 array ? "array" : "range",
		 t->b < 0 ? "scratch" : np_sb_name[t->b], n, flags, policy);
	if (ret == -EOPNOTSUPP && engine) {
		/* This engine is not built yet: leave it out from now on. */
		atomic_fetch_and(mg->engines_ok, ~(unsigned int)engine);
		np_msg("engine flag %#x: EOPNOTSUPP, left out\n", engine);
		goto out;
	}
	if (ret) {
		np_fail("%s: %s", what, strerror(-ret));
		goto out;
	}
	if (m.done != n || st[n] != NP_SENTINEL) {
		np_fail("%s: done %llu, or a write past status", what,
			(unsigned long long)m.done);
		goto out;
	}
	np_soak_counters(what, &m, st, n, !array,
			 np_engines_allowed(mg->info, flags));
	for (size_t i = 0; i < n; i++) {
		int s = st[i];

		if (s >= 0) {
			if (np_status_target(mg, t, policy, &m, addrs, nodes,
					     set, i, n, s))
				continue;
		} else if (s == -EBUSY || s == -ENOMEM || s == -ENOENT ||
			   (s == -EACCES && !(flags & NUMAPLACE_MIGRATE_MOVE_ALL)) ||
			   (s == -EFAULT && t->b < 0)) {
			atomic_fetch_add(&np_soak_count.busy, s == -EBUSY);
			continue;
		}
		np_fail("%s: page %zu status %d", what, i, s);
		break;
	}
	atomic_fetch_add(&np_soak_count.moved, m.nr_moved_pages);
out:
	free(addrs);
	free(st);
	free(nodes);
}

static void *np_migrator_run(void *arg)
{
	struct np_migrator *mg = arg;
	struct np_target t;

	while (!atomic_load(&np_soak_stop)) {
		np_pick(mg, &t);
		if (np_rand_below(&mg->rs, 5) < 2)
			np_soak_query(mg, &t);
		else
			np_soak_migrate(mg, &t);
	}
	return NULL;
}

/* ---- the test ---------------------------------------------------------- */

FIXTURE(soak)
{
	int fd;
	long refcnt;
	struct numaplace_info info;
	struct np_ctx c;
	size_t slen;
	pid_t kid;
	int mfd;
};

FIXTURE_SETUP(soak)
{
	self->kid = -1;
	self->mfd = -1;
	self->fd = -1;
	np_soak_sh = MAP_FAILED;
	self->refcnt = np_read_long("/sys/module/numaplace/refcnt");
	self->fd = np_open();
	if (self->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, np_get_info(self->fd, &self->info));
	if (!(self->info.features & (NUMAPLACE_FEAT_MIGRATE_KERNEL |
				     NUMAPLACE_FEAT_MIGRATE_VMA)))
		SKIP(return, "no migration engine (features %#llx)",
		     (unsigned long long)self->info.features);
	if (geteuid())
		SKIP(return, "needs root (MOVE_ALL, /proc/vmstat refresh)");
	if (!np_node_isset(self->info.node_memory, 0) ||
	    !np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs memory on nodes 0 and 1");
	ASSERT_EQ(0, np_ctx_init(&self->c, self->fd, 0));
	np_soak_psz = self->c.psz;
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
}

FIXTURE_TEARDOWN(soak)
{
	if (np_soak_sh != MAP_FAILED)
		atomic_store(&np_soak_sh->stop, 1);
	if (self->kid > 0) {
		kill(self->kid, SIGKILL);
		waitpid(self->kid, NULL, 0);
	}
	if (self->mfd >= 0)
		close(self->mfd);
	if (self->fd >= 0)
		close(self->fd);
}

/* The buffer @b, its first stamps written on node 0. */
static char *np_soak_buf(FIXTURE_DATA(soak) *self, int b, size_t n)
{
	size_t len = n * np_soak_psz;
	char *p;

	switch (b) {
	case NP_SB_ANON:
	case NP_SB_THP:
		return np_pmd_map(len, b == NP_SB_THP);
	case NP_SB_FORK:
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	default:
		self->mfd = memfd_create("np-soak", MFD_CLOEXEC);
		if (self->mfd < 0 || ftruncate(self->mfd, len))
			return NULL;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->mfd, 0);
		return p == MAP_FAILED ? NULL : p;
	}
}

static long np_env_long(const char *name, long dflt, long max)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return dflt;
	x = strtol(v, &end, 0);
	if (*end || x < 0)
		return dflt;
	return x > max ? max : x;
}

/* Pages of buffer @b not on @node (move_pages(2) of @pid). */
static long np_not_on(int pid, int b, int node, long *first, int *where)
{
	return np_pages_not_on(pid, np_soak_sh->buf[b], np_soak_sh->n[b], node, first, where);
}

TEST_F_TIMEOUT(soak, mix, NP_TIMEOUT(NP_SOAK_MAX_S + NP_SOAK_END_S))
{
	long secs = np_env_long("NP_SOAK_SECONDS", NP_SOAK_DEFAULT_S, NP_SOAK_MAX_S);
	__u64 seed = np_env_long("NP_SOAK_SEED", 0, LONG_MAX);
	struct np_migrator mg[NP_SOAK_MIGRATORS];
	atomic_uint engines_ok = NP_MIG_ENGINE_FLAGS;
	pthread_t wr[NP_SB_NR], churn;
	struct np_churn_arg ca;
	long iso_anon0, iso_file0, iso_anon, iso_file, t0, first, refcnt;
	int status, nodes[NUMAPLACE_MAX_NODES], nr_nodes = 0, where;
	size_t gen_off = 0;
	char *gens;

	NP_SKIPPED();
	if (!seed)
		seed = (__u64)time(NULL) ^ (__u64)getpid() << 32;
	np_msg("soak: %ld s, seed %llu (NP_SOAK_SEED to repeat)\n",
		       secs, (unsigned long long)seed);
	for (int k = 0; k < NUMAPLACE_MAX_NODES; k++)
		if (np_node_isset(self->info.node_memory, k))
			nodes[nr_nodes++] = k;
	if (!(self->info.features & NUMAPLACE_FEAT_MIGRATE_KERNEL))
		engines_ok &= ~NUMAPLACE_MIGRATE_ENGINE_KERNEL;
	if (!(self->info.features & NUMAPLACE_FEAT_MIGRATE_VMA))
		engines_ok &= ~NUMAPLACE_MIGRATE_ENGINE_VMA;
	if (!(self->info.features & NUMAPLACE_FEAT_MIGRATE_BATCH))
		engines_ok &= ~NUMAPLACE_MIGRATE_ENGINE_BATCH;
	if (!(self->info.features & NUMAPLACE_FEAT_MIGRATE_PT))
		engines_ok &= ~NUMAPLACE_MIGRATE_ENGINE_PT;
	np_msg("engine flags in the mix: %#x (+ default)\n", engines_ok);
	ASSERT_EQ(0, np_isolated(&iso_anon0, &iso_file0));

	/* Shared state and generations, then the buffers on node 0. */
	self->slen = sizeof(*np_soak_sh);
	for (int b = 0; b < NP_SB_NR; b++)
		self->slen += (b == NP_SB_THP ? NP_SOAK_THP_PAGES : NP_SOAK_PAGES) *
			      sizeof(atomic_ullong);
	np_soak_sh = mmap(NULL, self->slen, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, np_soak_sh);
	gens = (char *)(np_soak_sh + 1);
	np_mempolicy(MPOL_BIND, 0);
	for (int b = 0; b < NP_SB_NR; b++) {
		np_soak_sh->n[b] = b == NP_SB_THP ? NP_SOAK_THP_PAGES : NP_SOAK_PAGES;
		np_soak_sh->gen[b] = (atomic_ullong *)(gens + gen_off);
		gen_off += np_soak_sh->n[b] * sizeof(atomic_ullong);
		np_soak_sh->buf[b] = np_soak_buf(self, b, np_soak_sh->n[b]);
		ASSERT_NE(NULL, np_soak_sh->buf[b]) TH_LOG("buffer %s", np_sb_name[b]);
		for (size_t i = 0; i < np_soak_sh->n[b]; i++)
			np_page_stamp(np_soak_sh->buf[b] + i * np_soak_psz, b, i, 0);
	}
	np_mempolicy(MPOL_DEFAULT, -1);

	self->kid = fork();
	ASSERT_GE(self->kid, 0);
	if (self->kid == 0)
		np_soak_child();
	while (!atomic_load(&np_soak_sh->child_ready)) {
		ASSERT_EQ(0, waitpid(self->kid, &status, WNOHANG))
			TH_LOG("the child died: status %#x", status);
		usleep(1000);
	}
	for (int b = 0; b < NP_SB_NR; b++)
		ASSERT_EQ(0, pthread_create(&wr[b], NULL, np_writer,
					    (void *)(intptr_t)b));
	ca.seed = seed ^ 0x5bd1e995;
	ASSERT_EQ(0, pthread_create(&churn, NULL, np_churn, &ca));
	for (int i = 0; i < NP_SOAK_MIGRATORS; i++) {
		memset(&mg[i], 0, sizeof(mg[i]));
		mg[i].fd = np_open();
		ASSERT_GE(mg[i].fd, 0);
		ASSERT_EQ(0, np_ctx_init(&mg[i].c, mg[i].fd, 0));
		mg[i].rs = seed * (i + 3) + 0x9e3779b97f4a7c15ULL;
		mg[i].info = &self->info;
		memcpy(mg[i].nodes, nodes, sizeof(nodes));
		mg[i].nr_nodes = nr_nodes;
		mg[i].engines_ok = &engines_ok;
		ASSERT_EQ(0, pthread_create(&mg[i].th, NULL, np_migrator_run,
					    &mg[i]));
	}

	t0 = np_mono_ms();
	while (np_mono_ms() - t0 < secs * 1000) {
		if (waitpid(self->kid, &status, WNOHANG)) {
			np_fail("the fork child died: status %#x", status);
			break;
		}
		usleep(100000);
	}
	atomic_store(&np_soak_stop, 1);
	for (int i = 0; i < NP_SOAK_MIGRATORS; i++) {
		pthread_join(mg[i].th, NULL);
		close(mg[i].fd);
	}
	pthread_join(churn, NULL);
	atomic_store(&np_soak_sh->stop, 1);
	for (int b = 0; b < NP_SB_NR; b++)
		pthread_join(wr[b], NULL);
	while (!atomic_load(&np_soak_sh->child_done)) {
		ASSERT_EQ(0, waitpid(self->kid, &status, WNOHANG))
			TH_LOG("the child died: status %#x", status);
		usleep(1000);
	}
	np_msg("%ld queries, %ld migrations (%ld pages moved, %ld -EBUSY), "
		       "%ld churn steps, %ld pages stamped in %ld ms\n",
		       (long)np_soak_count.queries, (long)np_soak_count.migrations, (long)np_soak_count.moved,
		       (long)np_soak_count.busy, (long)np_soak_count.churn, (long)np_soak_sh->writes,
		       np_mono_ms() - t0);
	EXPECT_EQ(0, atomic_load(&np_soak_sh->errors));

	/* 1. Every byte the last value written, in both views. */
	for (int b = 0; b < NP_SB_NR; b++) {
		first = -1;
		EXPECT_EQ(0, np_bad_pages(b, &first))
			TH_LOG("%s: first bad page %ld", np_sb_name[b], first);
	}
	NP_KID_VERIFY(self->kid, &np_soak_sh->verify, &np_soak_sh->child_bad);

	/* 2. Everything can go home to node 0, and is there. */
	for (int b = 0; b < NP_SB_NR; b++) {
		struct numaplace_migrate m;

		for (int tries = 0; tries < NP_SOAK_FINAL_TRIES; tries++) {
			ASSERT_EQ(0, np_migrate_node(self->fd, 0,
						     NUMAPLACE_MIGRATE_MOVE_ALL,
						     (uintptr_t)np_soak_sh->buf[b],
						     np_soak_sh->n[b] * np_soak_psz, 0, NULL, &m));
			if (!m.nr_failed_pages)
				break;
			usleep(10000);
		}
		EXPECT_EQ(0, m.nr_failed_pages) TH_LOG("%s", np_sb_name[b]);
		first = -1;
		where = 0;
		EXPECT_EQ(0, np_not_on(0, b, 0, &first, &where))
			TH_LOG("%s: page %ld on %d", np_sb_name[b], first, where);
		first = -1;
		EXPECT_EQ(0, np_bad_pages(b, &first))
			TH_LOG("%s after the last move: first bad page %ld",
			       np_sb_name[b], first);
	}

	/* 3. Nothing left isolated. */
	ASSERT_EQ(0, np_isolated_settle(iso_anon0, iso_file0,
					NP_SOAK_ISO_WAIT_MS, &iso_anon,
					&iso_file));
	EXPECT_LE(iso_anon, iso_anon0);
	EXPECT_LE(iso_file, iso_file0);

	/* 4. The module's references: only the fixture's fd is left. */
	for (int b = 0; b < NP_SB_NR; b++)
		munmap(np_soak_sh->buf[b], np_soak_sh->n[b] * np_soak_psz);
	close(self->fd);
	self->fd = -1;
	refcnt = np_read_long("/sys/module/numaplace/refcnt");
	if (self->refcnt >= 0)
		EXPECT_EQ(self->refcnt, refcnt);
	munmap(np_soak_sh, self->slen);
	np_soak_sh = MAP_FAILED;
}

NP_HARNESS_MAIN
