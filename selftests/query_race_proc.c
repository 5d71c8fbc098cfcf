// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_QUERY of a process that changes under the call in other
 * ways than query_race.c's mutators: a child that exits, is killed or
 * sits as a zombie mid-query; user buffers behind userfaultfd, whose
 * every fault takes the mmap lock for write; SIGKILL inside huge range
 * queries. The queriers and their rules are query_race.c's (qrace.h).
 */
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "qrace.h"
#include "migrate_lib.h"
#include "kselftest_harness.h"

/* ---- the fixture -------------------------------------------------- */

QR_FIXTURE(qproc);

/* ---- another process: a child that exits or dies mid-query --------- */

/*
 * The child's own memory: page tables to walk (a touch every 64 KiB of
 * 64 MiB), so that a query of it takes a while.
 */
static void qr_child_memory(unsigned int seed)
{
	size_t len = 64UL << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return;
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t o = 0; o < len; o += 64 << 10)
		p[o + (rand_r(&seed) % 16) * qr_psz] = 1;
}

/*
 * Query children that exit by themselves, are SIGKILLed, or sit as
 * zombies: -ESRCH and -EINVAL are fine then; answers while their mm
 * lives must be as valid as ever. A zombie must be -EINVAL and a reaped
 * child -ESRCH.
 */
TEST_F_TIMEOUT(qproc, child_exit, NP_TIMEOUT(60))
{
	NP_SKIPPED();
	struct qr_ctx *x = &self->e.x;
	struct qr_q qs[QR_NQ];
	unsigned int seed = 42;
	long t0, ms = qr_race_ms();
	int kids = 0, zombies = 0;

	ASSERT_EQ(0, qr_region_init(x, &self->e.r, 1));
	/* The child inherits the region: written anon THPs. */
	ASSERT_EQ(0, qr_anon(self->e.r.slice[0], QR_SLICE, 1, &seed));
	x->child = 1;
	x->pid = -1;	/* no child yet: -ESRCH */
	for (int i = 0; i < QR_NQ; i++)
		ASSERT_EQ(0, qr_q_alloc(&qs[i], x, qr_all_q[i], 99 + i));
	for (int i = 0; i < QR_NQ; i++)
		ASSERT_EQ(0, pthread_create(&qs[i].th, NULL, qr_querier, &qs[i]));

	t0 = np_mono_ms();
	while (np_mono_ms() - t0 < ms && !x->bad) {
		int pfd, mode = kids % 3, status, ret;
		struct numaplace_query q;
		siginfo_t si;
		char c = 0;
		pid_t pid;

		pid = np_fork_pipe(&pfd);
		ASSERT_GE(pid, 0);
		if (!pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			qr_touch_some(self->e.r.slice[0], QR_SLICE / qr_psz, 64,
				      &seed);
			qr_child_memory(seed + kids);
			if (write(pfd, "r", 1) != 1)
				_exit(2);
			if (mode == 2)
				for (;;)
					pause();
			usleep(rand_r(&seed) % 20000);
			_exit(0);
		}
		EXPECT_EQ(1, read(pfd, &c, 1));
		close(pfd);
		__atomic_store_n(&x->pid, pid, __ATOMIC_RELAXED);
		if (mode == 2) {
			usleep(rand_r(&seed) % 30000);
			kill(pid, SIGKILL);
		}
		/* Exited, not reaped: a zombie has no mm. */
		memset(&si, 0, sizeof(si));
		ASSERT_EQ(0, waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
		ret = np_query_range(self->e.fd, pid, 0, x->qstart, qr_psz, NULL, 0,
				     NULL, NULL, 0, &q);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("zombie %d", pid);
		zombies += ret == -EINVAL;
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (mode == 2) {
			EXPECT_TRUE(WIFSIGNALED(status));
		} else {
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		}
		ret = np_query_range(self->e.fd, pid, 0, x->qstart, qr_psz, NULL, 0,
				     NULL, NULL, 0, &q);
		EXPECT_EQ(-ESRCH, ret) TH_LOG("reaped %d", pid);
		kids++;
	}
	__atomic_store_n(&x->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < QR_NQ; i++) {
		pthread_join(qs[i].th, NULL);
		ksft_print_msg("querier %d (type %d): %lu calls, %lu pages\n",
			       i, qs[i].type, qs[i].calls, qs[i].answered);
		EXPECT_GT(qs[i].calls, 0);
		qr_q_free(&qs[i]);
	}
	ksft_print_msg("%d children, %d zombies checked\n", kids, zombies);
	EXPECT_GT(kids, 0);
	EXPECT_EQ(0, x->bad);
}

/* ---- user buffers behind userfaultfd ------------------------------- */

/*
 * Every user buffer of a query (status, runs, totals, pages[]) in memory
 * registered with userfaultfd: each access faults and waits for the
 * handler thread, which first takes this mm's mmap lock for write
 * (mmap + munmap) and queries the same mm itself. A module that touched
 * user memory under the mmap lock would deadlock here (the harness
 * timeout fails the test).
 */
struct qr_uffd {
	int uffd, fd;
	__u32 nr_nodes;
	char *src;		/* one page: the data each fault gets */
	unsigned long qstart;
	size_t qpages;
	int stop;
	unsigned long faults, bad;
};

static void *qr_uffd_handler(void *arg)
{
	struct qr_uffd *u = arg;
	struct pollfd pfd = { .fd = u->uffd, .events = POLLIN };
	__u64 np[NUMAPLACE_MAX_NODES];
	struct numaplace_query q;

	while (!__atomic_load_n(&u->stop, __ATOMIC_RELAXED)) {
		struct uffdio_copy copy;
		struct uffd_msg msg;
		void *p;
		int ret;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (read(u->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
		    msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		/* The faulting query must hold no mmap lock now. */
		p = mmap(NULL, qr_psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, qr_psz);
		ret = np_query_range(u->fd, 0, 0, u->qstart, u->qpages * qr_psz,
				     NULL, 0, NULL, np, u->nr_nodes, &q);
		if (ret || q.done != u->qpages) {
			fprintf(stderr, "# uffd handler: query %d, done %llu\n",
				ret, (unsigned long long)q.done);
			u->bad++;
		}
		memset(&copy, 0, sizeof(copy));
		copy.dst = msg.arg.pagefault.address & ~(__u64)(qr_psz - 1);
		copy.src = (uintptr_t)u->src;
		copy.len = qr_psz;
		if (ioctl(u->uffd, UFFDIO_COPY, &copy) && errno != EEXIST) {
			fprintf(stderr, "# uffd handler: UFFDIO_COPY: %s\n",
				strerror(errno));
			u->bad++;
		}
		u->faults++;
	}
	return NULL;
}

TEST_F_TIMEOUT(qproc, uffd_buffers, NP_TIMEOUT(90))
{
	NP_SKIPPED();
	struct qr_ctx *x = &self->e.x;
	const size_t upages = 64;
	struct uffdio_register reg;
	struct uffdio_api api;
	__u64 np2[NUMAPLACE_MAX_NODES + 1];
	struct qr_uffd u;
	unsigned int seed = 5;
	size_t n, nstable = QR_STABLE;
	pthread_t th;
	char *ub;

	ASSERT_EQ(0, qr_region_init(x, &self->e.r, 1));
	ASSERT_EQ(0, qr_anon(self->e.r.slice[0], QR_SLICE, 1, &seed));
	ASSERT_TRUE(x->stable_ok);
	n = x->qpages;
	memset(&u, 0, sizeof(u));
	u.fd = self->e.fd;
	u.nr_nodes = x->nr_nodes;
	u.qstart = x->qstart;
	u.qpages = n;
	u.uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (u.uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	memset(&api, 0, sizeof(api));
	api.api = UFFD_API;
	ASSERT_EQ(0, ioctl(u.uffd, UFFDIO_API, &api));
	/* Each fault is filled with addresses of the stable pages. */
	u.src = mmap(NULL, qr_psz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, u.src);
	for (size_t i = 0; i < qr_psz / 8; i++)
		((__u64 *)u.src)[i] = x->stable + (i % nstable) * qr_psz + i % 61;
	ub = mmap(NULL, upages * qr_psz, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ub);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)ub;
	reg.range.len = upages * qr_psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(u.uffd, UFFDIO_REGISTER, &reg));
	ASSERT_EQ(0, pthread_create(&th, NULL, qr_uffd_handler, &u));

	for (int it = 0; it < 24; it++) {
		__s32 *st = (__s32 *)ub;	/* n statuses: 3 pages */
		struct numaplace_run *runs = (void *)(ub + 16 * qr_psz);
		__u64 *np = (__u64 *)(ub + 40 * qr_psz);
		__u64 *pages = (__u64 *)(ub + 48 * qr_psz);
		__u32 cap = 8 * qr_psz / sizeof(*runs);
		size_t m = 2 * qr_psz / 8;
		struct numaplace_query q;
		__u32 flags = it & 4 ? NUMAPLACE_QUERY_AS_SYSCALL : 0;
		int ret;

		/* Every buffer page faults again. */
		ASSERT_EQ(0, madvise(ub, upages * qr_psz, MADV_DONTNEED));
		switch (it % 4) {
		case 0:
			ret = np_query_range(self->e.fd, 0, flags, x->qstart,
					     n * qr_psz, runs, cap, st, np,
					     x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			EXPECT_EQ(n, q.done);
			break;
		case 1:
			/* Resumed through a runs buffer behind the faults. */
			ret = np_query_range(self->e.fd, x->self_pid, flags,
					     x->qstart, n * qr_psz, runs, 3, st,
					     np, x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			EXPECT_LE(q.nr_runs, 3);
			EXPECT_GT(q.done, 0);
			break;
		case 2:
			/* pages[] itself faults in: the stable addresses. */
			ret = np_query_array(self->e.fd, 0, flags, pages, m, st,
					     np, x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			ASSERT_EQ(m, q.done);
			for (size_t i = 0; i < m; i++) {
				EXPECT_EQ(x->stable_node[i % nstable], st[i])
					TH_LOG("pages[%zu] %#llx", i,
					       (unsigned long long)pages[i]);
			}
			break;
		default:
			ret = np_query_range(self->e.fd, 0, flags, QR_HUGE_START,
					     QR_HUGE_LEN, NULL, 0, NULL, np,
					     x->nr_nodes, &q);
			ASSERT_EQ(0, ret);
			break;
		}
		/* Runs against statuses, totals against both, as ever. */
		memcpy(np2, np, x->nr_nodes * sizeof(*np));
		np2[x->nr_nodes] = NP_NODE_FILL;
		if (it % 4 < 2) {
			EXPECT_EQ(0, qr_check_runs(x, "uffd", &q, runs,
						   it % 4 ? 3 : cap, x->qstart,
						   st, flags && !x->new_kernel));
		}
		EXPECT_EQ(0, qr_check_totals(x, "uffd", &q,
					     it % 4 == 3 ? NULL : st, q.done,
					     np2));
	}
	__atomic_store_n(&u.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	ksft_print_msg("%lu faults served\n", u.faults);
	EXPECT_GE(u.faults, 24);
	EXPECT_EQ(0, u.bad);
	EXPECT_EQ(0, x->bad);
	close(u.uffd);
	munmap(ub, upages * qr_psz);
	munmap(u.src, qr_psz);
}

/* ---- SIGKILL inside huge queries ---------------------------------- */

struct qr_killee {
	int fd;
	__u32 nr_nodes;
	char *big, *data;
	size_t big_len, data_len;
};

static void *qr_killee_totals(void *arg)
{
	struct qr_killee *k = arg;
	__u64 np[NUMAPLACE_MAX_NODES];
	struct numaplace_query q;

	for (;;)
		np_query_range(k->fd, 0, 0, QR_HUGE_START, QR_HUGE_LEN, NULL, 0,
			       NULL, np, k->nr_nodes, &q);
	return NULL;
}

static void *qr_killee_runs(void *arg)
{
	struct qr_killee *k = arg;
	static struct numaplace_run runs[4096];
	struct numaplace_query q;
	__u64 at = QR_HUGE_START;

	for (;;) {
		if (np_query_range(k->fd, 0, 0, at,
				   QR_HUGE_START + QR_HUGE_LEN - at, runs, 4096,
				   NULL, NULL, 0, &q) || !q.done)
			at = QR_HUGE_START;
		at += q.done * qr_psz;
		if (at >= QR_HUGE_START + QR_HUGE_LEN)
			at = QR_HUGE_START;
	}
	return NULL;
}

static void *qr_killee_status(void *arg)
{
	struct qr_killee *k = arg;
	size_t n = k->big_len / qr_psz;
	__s32 *st = malloc(n * sizeof(*st));
	struct numaplace_query q;

	if (!st)
		return NULL;
	for (;;) {
		np_query_range(k->fd, 0, 0, (uintptr_t)k->big, k->big_len, NULL,
			       0, st, NULL, 0, &q);
		np_query_range(k->fd, 0, NUMAPLACE_QUERY_AS_SYSCALL,
			       (uintptr_t)k->data, k->data_len, NULL, 0, st,
			       NULL, 0, &q);
	}
	return NULL;
}

/* The killee: huge queries in three threads, mmap lock writers here. */
static void qr_killee(int fd, __u32 nr_nodes, int ready)
{
	static void *(*const fns[])(void *) = {
		qr_killee_totals, qr_killee_runs, qr_killee_status,
	};
	struct qr_killee k = { .fd = fd, .nr_nodes = nr_nodes };
	unsigned int seed = getpid();
	pthread_t th;
	char *piece;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* 4 GiB with a page every 2 MiB: 2048 PTE tables to walk. */
	k.big_len = 4UL << 30;
	k.big = mmap(NULL, k.big_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	k.data_len = 32UL << 20;
	k.data = mmap(NULL, k.data_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	piece = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (k.big == MAP_FAILED || k.data == MAP_FAILED || piece == MAP_FAILED)
		_exit(3);
	madvise(k.big, k.big_len, MADV_NOHUGEPAGE);
	for (size_t o = 0; o < k.big_len; o += QR_PMD)
		k.big[o + (rand_r(&seed) % 512) * qr_psz] = 1;
	memset(k.data, 1, k.data_len);
	for (int i = 0; i < 3; i++)
		if (pthread_create(&th, NULL, fns[i], &k))
			_exit(4);
	if (write(ready, "r", 1) != 1)
		_exit(5);
	/* Writers of the mmap lock: queriers wait for it killably. */
	for (;;) {
		size_t o = (rand_r(&seed) % 2048) * QR_PMD;

		munmap(piece, 1 << 20);
		piece = mmap(piece, 1 << 20, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		madvise(k.big + o, QR_PMD, MADV_DONTNEED);
		k.big[o + (rand_r(&seed) % 512) * qr_psz] = 1;
	}
}

/* A process inside huge queries dies promptly on SIGKILL, every time. */
TEST_F_TIMEOUT(qproc, sigkill, NP_TIMEOUT(120))
{
	NP_SKIPPED();
	long t0 = np_mono_ms(), worst = 0;
	unsigned int seed = 7;
	int kills = 0;

	while (kills < 3 || (np_mono_ms() - t0 < qr_race_ms() && kills < 8)) {
		int pfd, status = 0;
		long k0, dt;
		char c = 0;
		pid_t pid;

		pid = np_fork_pipe(&pfd);
		ASSERT_GE(pid, 0);
		if (!pid) {
			qr_killee(self->e.fd, self->e.c.nr_nodes, pfd);
			_exit(6);
		}
		ASSERT_EQ(1, read(pfd, &c, 1)) TH_LOG("killee setup failed");
		close(pfd);
		usleep(50000 + rand_r(&seed) % 250000);
		k0 = np_mono_ms();
		ASSERT_EQ(0, kill(pid, SIGKILL));
		while (waitpid(pid, &status, WNOHANG) == 0 &&
		       np_mono_ms() - k0 < QR_KILL_WAIT_MS)
			usleep(5000);
		dt = np_mono_ms() - k0;
		worst = dt > worst ? dt : worst;
		EXPECT_LT(dt, QR_KILL_WAIT_MS) TH_LOG("kill %d took %ld ms", kills, dt);
		if (dt >= QR_KILL_WAIT_MS)
			waitpid(pid, &status, 0);
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			TH_LOG("status %#x", status);
		kills++;
	}
	ksft_print_msg("%d kills, the slowest death %ld ms\n", kills, worst);
}

NP_HARNESS_MAIN
