// SPDX-License-Identifier: GPL-2.0
/*
 * An ioctl fuzzer for /dev/numaplace.
 *
 * Several threads call random ioctls (random numbers, valid numbers with a
 * size or direction encoded, INFO, QUERY and MIGRATE) with random struct
 * sizes (0, short, exact, longer with a zero or non-zero tail, larger than
 * a page), flags, reserved fields, pointers (NULL, unmapped, PROT_NONE,
 * read-only, kernel addresses, straddling into a guard page), counts,
 * lengths, pids (0, self, a thread, a child, a zombie, 1, a kernel thread,
 * nonexistent) and nodes (-1, memoryless, MAX_NUMNODES, valid), while a
 * churn thread keeps changing the memory map they point into (mmap,
 * munmap, mremap, mprotect, madvise, mlock, fork).
 *
 * What can trip:
 *  - every return is 0 or an errno of the documented set for that ioctl
 *    (Documentation/abi.md); where the dispatch alone decides (number,
 *    size, tail, flags, unreadable struct) exactly the errno it must be;
 *  - the module writes nothing of the struct buffer but the struct, and
 *    at most min(caller's size, its own size) of it; nothing at all when
 *    the dispatch refuses the call; on success size says what it wrote;
 *  - a canary buffer, never passed as an output (but passed as input
 *    arrays and as pages to query and migrate), keeps its bytes;
 *  - no call takes longer than NP_FZ_CALL_MAX_MS;
 *  - the process survives (no SIGSEGV/SIGBUS); the runner checks the
 *    guest's kernel log.
 *
 * NP_FUZZ_SECONDS (default 20) bounds the run, NP_FUZZ_SEED replays a
 * seed (the thread interleaving is not replayed).
 */
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "fuzz_lib.h"
#include "kselftest_harness.h"

/* What this thread is (for the fatal-signal report). */
static __thread const char *np_fz_who = "main";
static __thread struct np_fz_thread *np_fz_self;

/* A SIGSEGV/SIGBUS: say where and in which thread, then die of it. */
static void np_fz_fatal(int sig, siginfo_t *si, void *uc)
{
	char msg[256];
	int len;

	len = snprintf(msg, sizeof(msg),
		       "# FUZZ FATAL: signal %d code %d addr %p in %s%s%s\n",
		       sig, si->si_code, si->si_addr, np_fz_who,
		       np_fz_self ? " during " : "",
		       np_fz_self ? np_fz_self->last : "");
	if (write(2, msg, len) < 0)
		_exit(4);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- the memory map churn --------------------------------------------- */

static void np_fz_churn_step(struct np_fz *z, __u64 *s)
{
	size_t n = 1 + np_fz_below(s, 64), i = np_fz_below(s, NP_FZ_WIN_PAGES);
	char *p, *q;
	pid_t kid;

	if (i + n > NP_FZ_WIN_PAGES)
		n = NP_FZ_WIN_PAGES - i;
	p = z->win + i * np_fz_psz;
	switch (np_fz_below(s, 16)) {
	case 0:
		munmap(p, n * np_fz_psz);
		break;
	case 1:
	case 2:
		mmap(p, n * np_fz_psz, PROT_READ | PROT_WRITE,
		     MAP_FIXED | MAP_ANONYMOUS |
		     (np_fz_chance(s, 30) ? MAP_SHARED : MAP_PRIVATE), -1, 0);
		memset(p, 0x11, n * np_fz_psz);
		break;
	case 3:
		/* A THP where it fits. */
		i &= ~511UL;
		if (i + 512 > NP_FZ_WIN_PAGES)
			break;
		p = z->win + i * np_fz_psz;
		mmap(p, 512 * np_fz_psz, PROT_READ | PROT_WRITE,
		     MAP_FIXED | MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
		madvise(p, 512 * np_fz_psz, MADV_HUGEPAGE);
		memset(p, 0x22, 512 * np_fz_psz);
		break;
	case 4:
		q = z->win + np_fz_below(s, NP_FZ_WIN_PAGES - n) * np_fz_psz;
		mremap(p, n * np_fz_psz, n * np_fz_psz, MREMAP_MAYMOVE | MREMAP_FIXED, q);
		break;
	case 5:
		q = z->win + np_fz_below(s, NP_FZ_WIN_PAGES - n) * np_fz_psz;
		q = mremap(p, n * np_fz_psz, n * np_fz_psz,
			   MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, q);
		break;
	case 6:
		mprotect(p, n * np_fz_psz, np_fz_pick(s, ((const int[]){ PROT_NONE,
			PROT_READ, PROT_READ | PROT_WRITE })));
		break;
	case 7:
	case 8:
		madvise(p, n * np_fz_psz, np_fz_pick(s, ((const int[]){
			MADV_DONTNEED, MADV_FREE, 21 /* PAGEOUT */,
			25 /* COLLAPSE */, MADV_WILLNEED, MADV_NOHUGEPAGE,
			MADV_HUGEPAGE, 20 /* COLD */ })));
		break;
	case 9:
		if (np_fz_chance(s, 50))
			mlock(p, n * np_fz_psz);
		else
			munlock(p, n * np_fz_psz);
		break;
	case 10:
		/* fork: the child writes some pages (COW) and lives a bit. */
		kid = fork();
		if (kid == 0) {
			for (size_t k = 0; k < n; k++)
				if (mprotect(p + k * np_fz_psz, np_fz_psz,
					     PROT_READ | PROT_WRITE) == 0)
					p[k * np_fz_psz] = 3;
			usleep(np_fz_below(s, 20000));
			_exit(0);
		}
		if (kid > 0) {
			pid_t old = atomic_exchange(&z->churn_kid, kid);

			if (old > 0)
				waitpid(old, NULL, 0);
		}
		break;
	default:
		/* Fault pages in for writing (no signal where we may not). */
		madvise(p, n * np_fz_psz, np_fz_chance(s, 80) ? 23 /* POPULATE_WRITE */ :
			22 /* POPULATE_READ */);
		break;
	}
	atomic_fetch_add(&z->churn_ops, 1);
}

static void *np_fz_churn(void *arg)
{
	struct np_fz *z = arg;
	__u64 s = z->seed ^ 0x6368757276ULL;

	np_fz_who = "churn";

	while (!atomic_load(&z->stop))
		np_fz_churn_step(z, &s);
	return NULL;
}

static void *np_fz_thread(void *arg)
{
	struct np_fz_thread *t = arg;

	np_fz_who = "ioctl thread";
	np_fz_self = t;
	while (!atomic_load(&t->z->stop))
		np_fz_call(t);
	return NULL;
}

/* ---- the test ---------------------------------------------------------- */

FIXTURE(fuzz)
{
	struct np_fz *z;
	struct np_fz_thread t[NP_FZ_THREADS];
	size_t zlen;
};

FIXTURE_VARIANT(fuzz)
{
	int nobody;
};

FIXTURE_VARIANT_ADD(fuzz, root)
{
	.nobody = 0,
};

FIXTURE_VARIANT_ADD(fuzz, nobody)
{
	.nobody = 1,
};

static char *np_fz_map(size_t len, int prot)
{
	char *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A region of @pages read-write pages followed by a PROT_NONE guard. */
static char *np_fz_guarded(size_t pages)
{
	char *p = np_fz_map((pages + 1) * np_fz_psz, PROT_READ | PROT_WRITE);

	if (p)
		mprotect(p + pages * np_fz_psz, np_fz_psz, PROT_NONE);
	return p;
}

static pid_t np_fz_kid(int sleep_s)
{
	pid_t kid = fork();

	if (kid == 0) {
		char *m = np_fz_map(64 * np_fz_psz, PROT_READ | PROT_WRITE);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (m)
			memset(m, 7, 64 * np_fz_psz);
		if (sleep_s)
			sleep(sleep_s);
		_exit(0);
	}
	return kid;
}

static void *np_fz_idle(void *arg)
{
	struct np_fz *z = arg;

	z->tid = syscall(SYS_gettid);
	while (!atomic_load(&z->stop))
		usleep(10000);
	return NULL;
}

FIXTURE_SETUP(fuzz)
{
	struct np_fz *z;

	self->z = NULL;
	np_fz_psz = sysconf(_SC_PAGESIZE);
	self->zlen = sizeof(*z);
	z = self->z = (struct np_fz *)np_fz_map(self->zlen,
						 PROT_READ | PROT_WRITE);
	ASSERT_NE(NULL, z);
	z->fd = np_open();
	if (z->fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(z->fd, 0);
	ASSERT_EQ(0, np_get_info(z->fd, &z->info));
	z->nobody = variant->nobody;
	if (z->nobody && geteuid())
		SKIP(return, "needs root to become nobody");
}

FIXTURE_TEARDOWN(fuzz)
{
	struct np_fz *z = self->z;

	if (!z)
		return;
	atomic_store(&z->stop, 1);
	if (z->child > 0)
		kill(z->child, SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (z->fd >= 0)
		close(z->fd);
}

static long np_fz_seconds(int nobody)
{
	const char *e = getenv("NP_FUZZ_SECONDS");
	long sec = e ? strtol(e, NULL, 10) : NP_FZ_SECONDS;

	if (sec < 1)
		sec = 1;
	/* The unprivileged variant gets a share; root the rest. */
	if (nobody)
		return sec / NP_FZ_NOBODY_SHARE ?: 1;
	return sec - sec / NP_FZ_NOBODY_SHARE ?: 1;
}

TEST_F_TIMEOUT(fuzz, ioctls, NP_TIMEOUT(7200))
{
	NP_SKIPPED();
	struct np_fz *z = self->z;
	const char *e = getenv("NP_FUZZ_SEED");
	long sec = np_fz_seconds(z->nobody), t0, last_check;
	pthread_t churn, idle;
	int status;

	z->seed = e ? strtoull(e, NULL, 0) : (__u64)time(NULL) * 2654435761ULL;
	if (!z->seed)
		z->seed = 1;
	ksft_print_msg("seed %#llx (NP_FUZZ_SEED to replay), %ld s, %s\n",
		       (unsigned long long)z->seed, sec,
		       z->nobody ? "as nobody" : "as root");

	{
		struct sigaction sa = { .sa_sigaction = np_fz_fatal,
					.sa_flags = SA_SIGINFO };

		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
	}
	np_write_str("/sys/kernel/mm/transparent_hugepage/enabled", "madvise");
	/* The memory the calls point into. */
	z->win = np_fz_map(NP_FZ_WIN_PAGES * np_fz_psz, PROT_READ | PROT_WRITE);
	z->canary = np_fz_map(NP_FZ_CANARY_PAGES * np_fz_psz, PROT_READ | PROT_WRITE);
	z->ro = np_fz_map(np_fz_psz, PROT_READ | PROT_WRITE);
	z->protnone = np_fz_map(np_fz_psz, PROT_NONE);
	/* Below mmap_min_addr: nothing is ever mapped there. */
	z->unmapped = (char *)(uintptr_t)(0x10000 - np_fz_psz);
	ASSERT_NE(NULL, z->win);
	ASSERT_NE(NULL, z->canary);
	ASSERT_NE(NULL, z->ro);
	ASSERT_NE(NULL, z->protnone);
	memset(z->win, 0x33, NP_FZ_WIN_PAGES * np_fz_psz);
	madvise(z->canary, NP_FZ_CANARY_PAGES * np_fz_psz, MADV_HUGEPAGE);
	{
		__u64 cs = z->seed;

		for (size_t i = 0; i < NP_FZ_CANARY_PAGES * np_fz_psz / 8; i++)
			((__u64 *)z->canary)[i] = np_fz_next(&cs);
	}
	z->canary_sum = np_fz_sum(z->canary, NP_FZ_CANARY_PAGES * np_fz_psz);
	for (size_t i = 0; i < np_fz_psz / 8; i++)
		((__u64 *)z->ro)[i] = (uintptr_t)z->canary + (i % 64) * np_fz_psz;
	mprotect(z->ro, np_fz_psz, PROT_READ);

	if (z->nobody) {
		ASSERT_EQ(0, setresgid(65534, 65534, 65534));
		ASSERT_EQ(0, setresuid(65534, 65534, 65534));
	}
	/* Pids: a sleeping child, a zombie, one that is gone. */
	z->child = np_fz_kid(3600);
	z->zombie = np_fz_kid(0);
	z->gone = np_fz_kid(0);
	ASSERT_GT(z->child, 0);
	ASSERT_GT(z->zombie, 0);
	ASSERT_GT(z->gone, 0);
	ASSERT_EQ(z->gone, waitpid(z->gone, &status, 0));
	ASSERT_EQ(0, pthread_create(&idle, NULL, np_fz_idle, z));
	while (!z->tid)
		usleep(1000);

	for (int i = 0; i < NP_FZ_THREADS; i++) {
		struct np_fz_thread *t = &self->t[i];

		t->z = z;
		t->id = i;
		t->rng = z->seed + 0x9e3779b97f4a7c15ULL * (i + 1);
		t->sbuf = np_fz_guarded(NP_FZ_SBUF_PAGES);
		t->obuf = np_fz_guarded(NP_FZ_SCRATCH_PAGES);
		t->ibuf = np_fz_guarded(NP_FZ_SCRATCH_PAGES);
		t->before = malloc(NP_FZ_SBUF_PAGES * np_fz_psz);
		ASSERT_NE(NULL, t->before);
		ASSERT_NE(NULL, t->sbuf);
		ASSERT_NE(NULL, t->obuf);
		ASSERT_NE(NULL, t->ibuf);
	}
	ASSERT_EQ(0, pthread_create(&churn, NULL, np_fz_churn, z));
	for (int i = 0; i < NP_FZ_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&self->t[i].th, NULL, np_fz_thread,
					    &self->t[i]));

	t0 = last_check = np_mono_ms();
	while (np_mono_ms() - t0 < sec * 1000) {
		usleep(100000);
		/* The zombie stays a zombie (nobody reaps it but us). */
		if (np_mono_ms() - last_check >= 1000) {
			last_check = np_mono_ms();
			if (np_fz_sum(z->canary, NP_FZ_CANARY_PAGES * np_fz_psz) !=
			    z->canary_sum)
				np_fz_fail(z, "the canary changed");
		}
	}
	atomic_store(&z->stop, 1);

	/* Every thread returns from its call within the grace period. */
	for (long tw = np_mono_ms();;) {
		int busy = 0;

		for (int i = 0; i < NP_FZ_THREADS; i++)
			busy += atomic_load(&self->t[i].in_call) != 0;
		if (!busy)
			break;
		if (np_mono_ms() - tw > NP_FZ_GRACE_MS) {
			for (int i = 0; i < NP_FZ_THREADS; i++)
				if (atomic_load(&self->t[i].in_call))
					ksft_print_msg("thread %d stuck in %s\n",
						       i, self->t[i].last);
			ASSERT_EQ(0, busy);
		}
		usleep(100000);
	}
	for (int i = 0; i < NP_FZ_THREADS; i++)
		pthread_join(self->t[i].th, NULL);
	pthread_join(churn, NULL);
	pthread_join(idle, NULL);

	ksft_print_msg("%ld calls, %ld churn ops, slowest %ld ms; 0: %ld, EINVAL %ld, E2BIG %ld, EFAULT %ld, ENOTTY %ld, ESRCH %ld, EPERM %ld, ENODEV %ld, EACCES %ld, EOPNOTSUPP %ld\n",
		       (long)atomic_load(&z->calls),
		       (long)atomic_load(&z->churn_ops),
		       (long)atomic_load(&z->max_ms),
		       (long)atomic_load(&z->by_errno[0]),
		       (long)atomic_load(&z->by_errno[EINVAL]),
		       (long)atomic_load(&z->by_errno[E2BIG]),
		       (long)atomic_load(&z->by_errno[EFAULT]),
		       (long)atomic_load(&z->by_errno[ENOTTY]),
		       (long)atomic_load(&z->by_errno[ESRCH]),
		       (long)atomic_load(&z->by_errno[EPERM]),
		       (long)atomic_load(&z->by_errno[ENODEV]),
		       (long)atomic_load(&z->by_errno[EACCES]),
		       (long)atomic_load(&z->by_errno[EOPNOTSUPP]));
	EXPECT_EQ(z->canary_sum, np_fz_sum(z->canary, NP_FZ_CANARY_PAGES * np_fz_psz))
		TH_LOG("the canary changed");
	/* The fuzzing reached past the dispatch. */
	{
		long ok = atomic_load(&z->by_errno[0]);
		long errors = atomic_load(&z->errors);

		EXPECT_LT(0, ok);
		EXPECT_EQ(0, errors);
	}
	/* The device still answers, as before. */
	{
		struct numaplace_info info;

		ASSERT_EQ(0, np_get_info(z->fd, &info));
		EXPECT_EQ(0, memcmp(&info, &z->info, sizeof(info)));
	}
}

/*
 * The largest range there is, without a status array: the holes between
 * VMAs must not cost a round of work per 64 MiB (that took tens of minutes
 * under TCG). Bounded by the harness timeout; the counters add up.
 */
FIXTURE(whole) {};
FIXTURE_SETUP(whole) {}
FIXTURE_TEARDOWN(whole) {}

TEST_F_TIMEOUT(whole, migrate_address_space, NP_TIMEOUT(TEST_TIMEOUT_DEFAULT))
{
	const __u64 len = 1ULL << 47;	/* x86-64 user address space */
	struct numaplace_info info;
	struct numaplace_migrate m;
	__u64 failed = 0;
	long t0;
	int fd = np_open(), ret;

	if (fd == -ENOENT)
		SKIP(return, "no " NUMAPLACE_DEVICE " (module not loaded)");
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, np_get_info(fd, &info));
	if (!np_node_isset(info.node_memory, 1))
		SKIP(return, "needs memory on node 1");
	for (int e = 0; e < 3; e++) {
		__u32 flags = e == 0 ? 0 : e == 1 ?
			      NUMAPLACE_MIGRATE_ENGINE_KERNEL :
			      NUMAPLACE_MIGRATE_ENGINE_VMA;

		t0 = np_mono_ms();
		ret = np_migrate_node(fd, 0, flags, 0, len, e & 1, NULL, &m);
		if (ret == -EOPNOTSUPP)
			continue;
		ASSERT_EQ(0, ret);
		ksft_print_msg("engine flags %#x: %llu pages, %llu moved, %llu failed, %ld ms\n",
			       flags, (unsigned long long)m.done,
			       (unsigned long long)m.nr_moved_pages,
			       (unsigned long long)m.nr_failed_pages,
			       np_mono_ms() - t0);
		EXPECT_EQ(len / np_fz_psz, m.done);
		EXPECT_EQ(m.done, m.nr_moved_pages + m.nr_in_place_pages +
				  m.nr_failed_pages);
		failed = 0;
		for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++)
			failed += m.nr_failed[r];
		EXPECT_EQ(failed, m.nr_failed_pages);
		/* Nearly all of it is holes. */
		EXPECT_LT(len / np_fz_psz / 2, m.nr_failed[NUMAPLACE_FAIL_EFAULT]);
	}
	close(fd);
}

NP_HARNESS_MAIN
