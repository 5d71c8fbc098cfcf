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
 * MADV_DONTNEED / FREE / PAGEOUT, MADV_DONTNEED of the whole aligned 2 MiB
 * (7.3 frees its page table), mprotect, mlock, THP split and collapse,
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

#include "race_lib.h"
#include "kselftest_harness.h"

static long psz;

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


/* Nothing left isolated (after NP_RC_SETTLE_MS at most), refcount back. */
static void np_rc_settled(struct __test_metadata *_metadata,
			  FIXTURE_DATA(race) *self)
{
	long anon, file;

	ASSERT_EQ(0, np_isolated_settle(self->iso_anon, self->iso_file,
					NP_RC_SETTLE_MS, &anon, &file));
	EXPECT_LE(anon, self->iso_anon);
	EXPECT_LE(file, self->iso_file);
	EXPECT_EQ(self->refcnt, np_read_long(NP_RC_REFCNT));
}

/*
 * The race: the writer, the disturber @step (or none), the main thread
 * migrating the region back and forth. Then every check.
 */
static void np_rc_run(struct __test_metadata *_metadata,
		      FIXTURE_DATA(race) *self, np_rc_step_fn step, int thp)
{
	struct np_rc *x = self->x;
	__s32 *st = calloc(NP_RC_PAGES + 1, sizeof(*st));
	long rounds = 0, moved = 0, odd = 0, t0;
	__u32 engines = 0;	/* NUMAPLACE_ENGINE_* that moved pages */
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
		__u32 flags = np_rc_flags(x);
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
		engines |= m.engines;
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
	 * pages every time). Written once more first: the last disturbance
	 * may have zapped the whole region (dontneed_pmd).
	 */
	np_rc_fill(x);
	for (int r = 0; r < 2; r++) {
		struct numaplace_migrate m;

		ASSERT_EQ(0, np_migrate_node(self->fd, 0, np_rc_flags(x),
					     (uintptr_t)x->buf, x->n * psz, r,
					     NULL, &m));
		moved += m.nr_moved_pages;
	}
	{
		long errors = atomic_load(&x->errors);

		EXPECT_EQ(0, odd);
		EXPECT_LT(0, moved);
		EXPECT_EQ(0, errors);
		/*
		 * The variant's engine ran, not only the ones it falls to.
		 * Not asked of a PMD THP region: a PMD-mapped THP, and on 6.1
		 * any large folio, is the kernel engine's (design.md), and
		 * whether a race leaves small folios in it is chance (the
		 * 6.1 guest of a CI run moved all by the kernel engine).
		 */
		if (x->eflags == NUMAPLACE_MIGRATE_ENGINE_PT && thp != 1)
			EXPECT_TRUE(engines & NUMAPLACE_ENGINE_PT)
				TH_LOG("engines that moved pages: %#x", engines);
	}
	/* 3. Nothing left isolated, the module's references back. */
	np_rc_settled(_metadata, self);
	free(st);
}

TEST_F_TIMEOUT(race, writers_only, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, NULL, 0);
}

TEST_F_TIMEOUT(race, munmap, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_munmap, 0);
}

TEST_F_TIMEOUT(race, mremap, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_mremap, 0);
}

TEST_F_TIMEOUT(race, fork_cow, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_fork, 0);
}

TEST_F_TIMEOUT(race, madvise, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_madvise, 0);
}

/* The whole region zapped at once: its page table freed (7.3). */
TEST_F_TIMEOUT(race, dontneed_pmd, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_dontneed_pmd, 0);
}

TEST_F_TIMEOUT(race, mprotect, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_mprotect, 0);
}

TEST_F_TIMEOUT(race, mlock, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_mlock, 0);
}

TEST_F_TIMEOUT(race, thp_split_collapse, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_thp, 1);
}

TEST_F_TIMEOUT(race, two_migrations, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_migrate2, 0);
}

TEST_F_TIMEOUT(race, with_move_pages, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_run(_metadata, self, np_rc_move_pages, 0);
}

/*
 * mTHP (6.12): 64 KiB anonymous folios, split by the thp disturber's
 * partial mprotect and zap, while they migrate under the writer.
 */
TEST_F_TIMEOUT(race, mthp, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	int ret;

	/* Keep the selected settings ("" when none: not put back). */
	ret = np_thp_setting(NP_RC_MTHP, self->mthp_old,
			     sizeof(self->mthp_old));
	if (ret && ret != -EINVAL)
		SKIP(return, "no mTHP on this kernel");
	ret = np_thp_setting(NP_RC_PMDTHP, self->pmd_old,
			     sizeof(self->pmd_old));
	ASSERT_TRUE(!ret || ret == -EINVAL);
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
	long calls = 0, ok = 0;

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
	np_rc_settled(_metadata, self);
	free(st);
}

TEST_F_TIMEOUT(race, target_exits, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_targets(_metadata, self, 0);
}

TEST_F_TIMEOUT(race, target_execs, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	np_rc_targets(_metadata, self, 1);
}

/*
 * A page pinned by another reference (vmsplice() into a pipe holds it)
 * does not move: -EBUSY, its bytes intact, the pipe reads them; once the
 * pipe is drained it moves.
 */
TEST_F_TIMEOUT(race, pinned_vmsplice, NP_TIMEOUT(60))
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
