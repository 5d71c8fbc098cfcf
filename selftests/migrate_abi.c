// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE's ABI (fixture "migrate"): the ABI, bad-input and
 * permission rows of reliability.md (who may move whose pages, counts,
 * ranges, tagged and bad pointers, struct sizes, flags, reserved fields,
 * policies, nodes), policies CPU and INTERLEAVE, and the cpuset check.
 * The small comparisons (count_edges, unaligned_range, tagged_addresses)
 * run the move_pages(2) oracle of migrate.c (np_compare(),
 * migrate_lib.h) on one layout of 4 KiB pages. The engines against the
 * oracle are migrate.c.
 *
 * NP_ONLY=word,word runs only the tests whose names contain one of the
 * words (the harness has no filter): NP_ONLY=cpuset.
 */
#include <grp.h>
#include <limits.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "migrate_lib.h"
#include "kselftest_harness.h"

#define NP_NOBODY	65534
#define NP_HUGE_COUNT	(1ULL << 40)

static long psz;

#define NP_PROBE_PAGES	16

/* What a probe in another process saw, in memory shared with the test. */
struct np_res {
	unsigned long base;	/* the last target's pages */
	long sys;		/* move_pages(2) */
	int mod;		/* the ioctl */
	int mod_self;		/* the ioctl on the prober's own page */
	__u64 done;
	__s32 st[NP_PROBE_PAGES];
	int sys_st[NP_PROBE_PAGES];
};

#define NP_MAX_KIDS	4

FIXTURE(migrate)
{
	int fd;
	struct np_ctx c;
	struct numaplace_info info;
	__u32 allowed;
	struct np_res *res;
	pid_t kids[NP_MAX_KIDS];
	int nr_kids;
	struct np_lay a, b;
	char cg[128];		/* a cgroup this test made, "" for none */
	char cg_mnt[64];	/* cgroup2 mounted here by this test, or "" */
	long t0;		/* setup's CLOCK_MONOTONIC ms */
};

FIXTURE_SETUP(migrate)
{
	self->t0 = np_mono_ms();
	self->res = MAP_FAILED;
	if (NP_MIG_SETUP(&self->fd, &self->c, &self->info))
		return;
	psz = self->c.psz;
	self->allowed = np_engines_allowed(&self->info, 0);
	self->res = mmap(NULL, sizeof(*self->res), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
}

FIXTURE_TEARDOWN(migrate)
{
	if (!_metadata->skip)
		ksft_print_msg("took %ld ms\n", np_mono_ms() - self->t0);
	for (int i = 0; i < self->nr_kids; i++) {
		kill(self->kids[i], SIGKILL);
		waitpid(self->kids[i], NULL, 0);
	}
	if (self->cg[0])
		rmdir(self->cg);
	if (self->cg_mnt[0]) {
		umount(self->cg_mnt);
		rmdir(self->cg_mnt);
	}
	np_lay_free(&self->a);
	np_lay_free(&self->b);
	if (self->fd >= 0)
		close(self->fd);
	if (self->res != MAP_FAILED)
		munmap(self->res, sizeof(*self->res));
}

/* @n written pages on node 0, PMD-aligned, no THP. */
static char *np_pages_on0(size_t n)
{
	char *p = np_pmd_map(n * psz, 0);

	if (!p)
		return NULL;
	np_mempolicy(MPOL_BIND, 0);
	np_fill(p, n, 3);
	np_mempolicy(MPOL_DEFAULT, -1);
	return p;
}

/*
 * A child that becomes @uid (0: stays root), sets PR_SET_DUMPABLE to
 * @dumpable, writes NP_PROBE_PAGES pages on node 0 (start in res->base)
 * and waits to be killed.
 */
static pid_t np_kid(FIXTURE_DATA(migrate) *self, uid_t uid, int dumpable)
{
	int pfd[2];
	pid_t pid;
	char c;

	if (self->nr_kids == NP_MAX_KIDS || pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *p;

		close(pfd[0]);
		if (uid && np_drop_to(uid))
			_exit(1);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (prctl(PR_SET_DUMPABLE, dumpable))
			_exit(1);
		p = np_pages_on0(NP_PROBE_PAGES);
		if (!p)
			_exit(1);
		self->res->base = (uintptr_t)p;
		if (write(pfd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	} else {
		self->kids[self->nr_kids++] = pid;
	}
	close(pfd[0]);
	return pid;
}

struct np_probe_args {
	int pid;
	__u64 base;		/* NP_PROBE_PAGES pages of @pid */
	int node;
	__u32 flags;		/* the ioctl's */
	int sysflags;		/* the syscall's */
};

/*
 * In a child that becomes @uid (0: stays root): the ioctl (array mode,
 * POLICY_NODE), then move_pages(2), on the pages; then the ioctl on a
 * page of its own. Results in self->res; 0 when the child ran.
 */
static int np_probe_fd(FIXTURE_DATA(migrate) *self, uid_t uid, int fd,
			const struct np_probe_args *a);

static int np_probe(FIXTURE_DATA(migrate) *self, uid_t uid,
		    const struct np_probe_args *a)
{
	return np_probe_fd(self, uid, -1, a);
}

/* As np_probe(), on @fd (opened by the test) when @fd >= 0. */
static int np_probe_fd(FIXTURE_DATA(migrate) *self, uid_t uid, int fd,
		       const struct np_probe_args *a)
{
	struct np_res *r = self->res;
	int status;
	pid_t kid = fork();

	if (kid < 0)
		return -1;
	if (kid == 0) {
		__u64 addrs[NP_PROBE_PAGES], own;
		int nodes[NP_PROBE_PAGES];
		struct numaplace_migrate m;
		__s32 st;

		if (uid && np_drop_to(uid))
			_exit(2);
		if (fd < 0)
			fd = np_open();
		if (fd < 0)
			_exit(3);
		np_range_addrs(addrs, a->base, NP_PROBE_PAGES);
		for (int i = 0; i < NP_PROBE_PAGES; i++) {
			nodes[i] = a->node;
			r->st[i] = r->sys_st[i] = NP_SENTINEL;
		}
		np_migrate_init(&m, a->pid, a->flags | NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = NP_PROBE_PAGES;
		m.node = a->node;
		m.status_ptr = (uintptr_t)r->st;
		r->mod = np_migrate(fd, &m);
		r->done = m.done;
		r->sys = np_sys_move_pages(a->pid, NP_PROBE_PAGES, addrs, nodes,
					   r->sys_st, a->sysflags);
		own = (uintptr_t)&m;
		np_migrate_init(&m, 0, a->flags | NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)&own;
		m.count = 1;
		m.node = a->node;
		m.status_ptr = (uintptr_t)&st;
		r->mod_self = np_migrate(fd, &m);
		_exit(0);
	}
	if (waitpid(kid, &status, 0) != kid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Nodes of @n pages of @pid from @base into @nodes; 0 or -errno. */
static int np_where_pages(int pid, uintptr_t base, size_t n, int *nodes)
{
	__u64 *a = calloc(n, sizeof(*a));
	int ret;

	if (!a)
		return -ENOMEM;
	np_range_addrs(a, base, n);
	ret = np_nodes_of(pid, a, n, nodes);
	free(a);
	return ret;
}

/* Count of @n ints equal to @v. */
static size_t np_count(const int *a, size_t n, int v)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += a[i] == v;
	return c;
}

static size_t np_count_s32(const __s32 *a, size_t n, __s32 v)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += a[i] == v;
	return c;
}

/* Move the caller's pages by pid 0, own pid and a thread's id. */
struct np_thread {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	int stop;
};

static void *np_thread_fn(void *arg)
{
	struct np_thread *t = arg;

	pthread_mutex_lock(&t->lock);
	t->tid = gettid();
	pthread_cond_broadcast(&t->cond);
	while (!t->stop)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

TEST_F(migrate, pid0_self_thread)
{
	NP_SKIPPED_OR_FILTERED();
	struct np_thread t = {
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0,
	};
	const size_t n = 32;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	int nodes[32], pids[3];
	__s32 st[32];
	pthread_t th;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, pthread_create(&th, NULL, np_thread_fn, &t));
	pthread_mutex_lock(&t.lock);
	while (!t.tid)
		pthread_cond_wait(&t.cond, &t.lock);
	pthread_mutex_unlock(&t.lock);
	pids[0] = 0;
	pids[1] = getpid();
	pids[2] = t.tid;
	for (int i = 0; i < 3; i++) {
		int node = (i + 1) % 2;

		ASSERT_EQ(0, np_migrate_node(self->fd, pids[i], 0, (uintptr_t)p,
					     n * psz, node, st, &m))
			TH_LOG("pid %d", pids[i]);
		EXPECT_EQ(n, np_count_s32(st, n, node)) TH_LOG("pid %d", pids[i]);
		EXPECT_EQ(n, m.nr_moved_pages) TH_LOG("pid %d", pids[i]);
		ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
		EXPECT_EQ(n, np_count(nodes, n, node)) TH_LOG("pid %d", pids[i]);
	}
	pthread_mutex_lock(&t.lock);
	t.stop = 1;
	pthread_cond_broadcast(&t.cond);
	pthread_mutex_unlock(&t.lock);
	pthread_join(th, NULL);
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/* Root moves a child's pages, and a nobody's (dumpable or not). */
TEST_F(migrate, root_moves_others)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { uid_t uid; int dumpable; } who[] = {
		{ 0, 1 }, { NP_NOBODY, 1 }, { NP_NOBODY, 0 },
	};
	struct np_probe_args a = { 0, 0, 1, 0, NP_MF_MOVE };
	struct numaplace_migrate m;
	int nodes[NP_PROBE_PAGES];
	__s32 st[NP_PROBE_PAGES];

	for (size_t w = 0; w < ARRAY_SIZE(who); w++) {
		pid_t pid = np_kid(self, who[w].uid, who[w].dumpable);

		ASSERT_GT(pid, 0);
		ASSERT_EQ(0, np_migrate_node(self->fd, pid, 0, self->res->base,
					     NP_PROBE_PAGES * psz, 1, st, &m))
			TH_LOG("uid %u dumpable %d", who[w].uid, who[w].dumpable);
		EXPECT_EQ(NP_PROBE_PAGES, np_count_s32(st, NP_PROBE_PAGES, 1));
		ASSERT_EQ(0, np_where_pages(pid, self->res->base,
					    NP_PROBE_PAGES, nodes));
		EXPECT_EQ(NP_PROBE_PAGES, np_count(nodes, NP_PROBE_PAGES, 1));
		/* The syscall agrees (the pages are there already). */
		a.pid = pid;
		a.base = self->res->base;
		ASSERT_EQ(0, np_probe(self, 0, &a));
		EXPECT_EQ(0, self->res->sys);
		EXPECT_EQ(0, self->res->mod);
		EXPECT_EQ(1, self->res->sys_st[0]);
		EXPECT_EQ(1, self->res->st[0]);
	}
}

/* nobody may not move root's pages: -EPERM, as the syscall says. */
TEST_F(migrate, other_user_denied)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_kid(self, 0, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int nodes[NP_PROBE_PAGES];

	ASSERT_GT(pid, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(NP_SENTINEL, self->res->st[0]);
	EXPECT_EQ(0, self->res->mod_self);
	ASSERT_EQ(0, np_where_pages(pid, a.base, NP_PROBE_PAGES, nodes));
	EXPECT_EQ(NP_PROBE_PAGES, np_count(nodes, NP_PROBE_PAGES, 0));
	/* The ptrace check comes before the targets. */
	a.node = -1;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	a.node = 1;
	/* The first process, too. */
	a.pid = 1;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(self->res->sys, self->res->mod);
}

/* Opened by root, used after setuid(nobody): nobody's rights count. */
TEST_F(migrate, creds_at_ioctl_time)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_kid(self, 0, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int fd = np_open();

	ASSERT_GT(pid, 0);
	ASSERT_GE(fd, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe_fd(self, NP_NOBODY, fd, &a));
	close(fd);
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(0, self->res->mod_self);
	/* And MOVE_ALL without CAP_SYS_NICE, on a root-opened fd. */
	fd = np_open();
	ASSERT_GE(fd, 0);
	a.pid = 0;
	a.base = (uintptr_t)self->res;
	a.flags = NUMAPLACE_MIGRATE_MOVE_ALL;
	a.sysflags = NP_MF_MOVE_ALL;
	ASSERT_EQ(0, np_probe_fd(self, NP_NOBODY, fd, &a));
	close(fd);
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
}

/* nobody moving another dumpable nobody process: as the query's rule. */
TEST_F(migrate, same_uid_unprivileged)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_kid(self, NP_NOBODY, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int exact = !!(self->info.features & NUMAPLACE_FEAT_PTRACE_EXACT);

	ASSERT_GT(pid, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(0, self->res->sys);
	EXPECT_EQ(exact ? 0 : -EPERM, self->res->mod);
	EXPECT_EQ(0, self->res->mod_self);
	/* Not dumpable: refused by both. */
	pid = np_kid(self, NP_NOBODY, 0);
	ASSERT_GT(pid, 0);
	a.pid = pid;
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
}

/* No such pid: -ESRCH; pid errors come before node errors. */
TEST_F(migrate, nonexistent_pid)
{
	NP_SKIPPED_OR_FILTERED();
	long max = np_read_long("/proc/sys/kernel/pid_max");
	int pids[] = { 0, -1, INT_MIN, INT_MAX };
	struct numaplace_migrate m;
	__u64 a = (uintptr_t)&m;
	int node = 1, sys;
	__s32 st;

	ASSERT_GT(max, 300);
	for (pids[0] = max - 1; pids[0] > 300; pids[0]--)
		if (kill(pids[0], 0) && errno == ESRCH)
			break;
	for (size_t i = 0; i < ARRAY_SIZE(pids); i++) {
		long sret = np_sys_move_pages(pids[i], 1, &a, &node, &sys,
					      NP_MF_MOVE);

		if (i == 0) {
			EXPECT_EQ(-ESRCH, sret);
		}
		EXPECT_EQ(sret, np_migrate_node(self->fd, pids[i], 0, a, 1, 1,
						&st, &m))
			TH_LOG("pid %d", pids[i]);
		/* With a bad node: the pid is looked at first. */
		EXPECT_EQ(sret, np_migrate_node(self->fd, pids[i], 0, a, 1, -1,
						&st, &m))
			TH_LOG("pid %d", pids[i]);
	}
}

/* kthreadd and a zombie have no mm: -EINVAL, as the syscall. */
TEST_F(migrate, no_mm)
{
	NP_SKIPPED_OR_FILTERED();
	struct np_probe_args a = { 2, 0x10000, 1, 0, NP_MF_MOVE };
	char comm[32];
	pid_t z;

	ASSERT_EQ(0, np_read_str("/proc/2/comm", comm, sizeof(comm)));
	ASSERT_STREQ("kthreadd", comm);
	ASSERT_EQ(0, np_probe(self, 0, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(self->res->sys, self->res->mod);

	z = fork();
	ASSERT_GE(z, 0);
	if (z == 0)
		_exit(0);
	for (int i = 0; i < 200 && np_proc_state(z) != 'Z'; i++)
		usleep(10000);
	ASSERT_EQ('Z', np_proc_state(z));
	a.pid = z;
	ASSERT_EQ(0, np_probe(self, 0, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	waitpid(z, NULL, 0);
}

/*
 * MOVE_ALL needs CAP_SYS_NICE: -EPERM for nobody, before the pid is
 * looked at; unknown flags are refused before that.
 */
TEST_F(migrate, move_all_needs_cap)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(NP_PROBE_PAGES);
	struct np_probe_args a = {
		0, (uintptr_t)p, 1, NUMAPLACE_MIGRATE_MOVE_ALL, NP_MF_MOVE_ALL,
	};
	struct numaplace_migrate m;
	__s32 st[NP_PROBE_PAGES];

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(-EPERM, self->res->mod_self);
	/* Capability before pid. */
	a.pid = INT_MAX;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	/* Flags before capability. */
	a.pid = 0;
	a.flags |= 1U << 20;
	a.sysflags |= 1 << 5;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	/* Without MOVE_ALL nobody moves its own pages. */
	a.flags = 0;
	a.sysflags = NP_MF_MOVE;
	ASSERT_EQ(0, np_probe(self, NP_NOBODY, &a));
	EXPECT_EQ(0, self->res->mod_self);
	/* Root may. */
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, NUMAPLACE_MIGRATE_MOVE_ALL,
				     (uintptr_t)p, NP_PROBE_PAGES * psz, 1, st,
				     &m));
	EXPECT_EQ(NP_PROBE_PAGES, np_count_s32(st, NP_PROBE_PAGES, 1));
}

/* len 0 and count 0 move nothing, successfully. */
TEST_F(migrate, zero_len_and_count)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(2);
	struct numaplace_migrate m;
	__u64 a;
	__s32 st[2] = { NP_SENTINEL, NP_SENTINEL };
	int node = 1;

	ASSERT_NE(NULL, p);
	a = (uintptr_t)p;
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, 0, a, 0, 1, st, &m));
	EXPECT_EQ(0, m.done);
	EXPECT_EQ(0, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines);
	EXPECT_EQ(NP_SENTINEL, st[0]);
	np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES, NUMAPLACE_POLICY_NODE);
	m.node = 1;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.done);
	np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)&a;
	m.nodes_ptr = (uintptr_t)&node;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.done);
	EXPECT_EQ(NP_SENTINEL, st[0]);
	EXPECT_EQ(0, np_sys_move_pages(0, 0, NULL, NULL, NULL, NP_MF_MOVE));
	EXPECT_EQ(0, np_sys_query(0, 1, &a, &node));
	EXPECT_EQ(0, node);
}

/* Two copies of a 4k layout for the small comparisons. */
static void np_two_4k(struct __test_metadata *_metadata,
		      FIXTURE_DATA(migrate) *self)
{
	static const enum np_seg k[] = { NP_SEG_4K };

	ASSERT_EQ(0, np_lay_build(&self->a, k, 1, 11));
	ASSERT_EQ(0, np_lay_build(&self->b, k, 1, 11));
}

static struct np_call np_call_of(FIXTURE_DATA(migrate) *self,
				 const char *name, int array, __u32 flags)
{
	struct np_call k = {
		.name = name, .array = array,
		.policy = NUMAPLACE_POLICY_PER_PAGE, .flags = flags,
		.allowed = self->allowed,
		.avail = np_engines_available(&self->info),
		.la = &self->a, .lb = &self->b,
	};

	return k;
}

/* Counts around the syscall's 16-entry chunks; range and array mode. */
TEST_F(migrate, count_edges)
{
	NP_SKIPPED_OR_FILTERED();
	static const size_t counts[] = { 1, 15, 16, 17, 33 };
	__u64 aa[64], ab[64];
	int tgt[64];
	char name[64];

	np_two_4k(_metadata, self);
	for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
		size_t n = counts[c];
		struct np_call k;

		for (size_t i = 0; i < n; i++) {
			size_t pg = (i * 7 + c * 64) % 192;
			__u64 off = pg * psz + (i * 97) % psz;

			aa[i] = (uintptr_t)self->a.base + off;
			ab[i] = (uintptr_t)self->b.base + off;
			tgt[i] = self->a.target[pg];
		}
		snprintf(name, sizeof(name), "array count %zu", n);
		k = np_call_of(self, name, 1, NUMAPLACE_MIGRATE_AS_SYSCALL);
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, n));
		np_range_addrs(aa, (uintptr_t)self->a.base + (250 + 40 * c) * psz,
			       n);
		np_range_addrs(ab, (uintptr_t)self->b.base + (250 + 40 * c) * psz,
			       n);
		for (size_t i = 0; i < n; i++)
			tgt[i] = self->a.target[250 + 40 * c + i];
		snprintf(name, sizeof(name), "range count %zu", n);
		k = np_call_of(self, name, 0, NUMAPLACE_MIGRATE_AS_SYSCALL);
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, n));
	}
}

/* An unaligned start and len move every page they touch. */
TEST_F(migrate, unaligned_range)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { size_t off, len, pages; } cases[] = {
		{ 100, 3 * 4096, 4 }, { 4095, 2, 2 }, { 1, 1, 1 },
		{ 0, 4097, 2 }, { 4095, 1, 1 },
	};
	__u64 aa[8], ab[8];
	int tgt[8];
	char name[64];

	np_two_4k(_metadata, self);
	for (size_t c = 0; c < ARRAY_SIZE(cases); c++) {
		size_t first = 16 + 16 * c, n = cases[c].pages;
		struct np_call k;

		np_range_addrs(aa, (uintptr_t)self->a.base + first * psz, n);
		np_range_addrs(ab, (uintptr_t)self->b.base + first * psz, n);
		for (size_t i = 0; i < n; i++)
			tgt[i] = 1;
		snprintf(name, sizeof(name), "unaligned case %zu", c);
		k = np_call_of(self, name, 0, NUMAPLACE_MIGRATE_AS_SYSCALL);
		k.start = ab[0] + cases[c].off;
		k.len = cases[c].len;
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, n));
	}
}

/* Tagged addresses are not untagged: no VMA, -EFAULT, as the syscall. */
TEST_F(migrate, tagged_addresses)
{
	NP_SKIPPED_OR_FILTERED();
	__u64 aa[16], ab[16];
	int tgt[16];
	struct np_call k;

	np_two_4k(_metadata, self);
	for (int bit = 48; bit < 64; bit += 5) {
		np_range_addrs(aa, (uintptr_t)self->a.base | 1ULL << bit, 4);
		np_range_addrs(ab, (uintptr_t)self->b.base | 1ULL << bit, 4);
		for (int i = 0; i < 4; i++)
			tgt[i] = 1;
		k = np_call_of(self, "tagged range", 0,
			       NUMAPLACE_MIGRATE_AS_SYSCALL);
		EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, 4));
	}
	for (int i = 0; i < 16; i++) {
		aa[i] = ((uintptr_t)self->a.base + i * psz + i) |
			(i % 2 ? 1ULL << (56 + i / 2) : 0);
		ab[i] = ((uintptr_t)self->b.base + i * psz + i) |
			(i % 2 ? 1ULL << (56 + i / 2) : 0);
		tgt[i] = 1;
	}
	k = np_call_of(self, "tagged array", 1, NUMAPLACE_MIGRATE_AS_SYSCALL);
	EXPECT_EQ(0, np_compare(&self->c, &k, aa, ab, tgt, 16));
}

/* start + len that wraps: -EINVAL. */
TEST_F(migrate, len_overflow)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { __u64 start, len; } wrap[] = {
		{ -4096ULL, 8192 }, { 4096, ~0ULL }, { 1ULL << 63, 1ULL << 63 },
		{ -4096ULL, 4096 }, { ~0ULL, 1 },
	};
	struct numaplace_migrate m;
	__s32 st[4];

	for (size_t i = 0; i < ARRAY_SIZE(wrap); i++) {
		EXPECT_EQ(-EINVAL, np_migrate_node(self->fd, 0, 0, wrap[i].start,
						   wrap[i].len, 1, st, &m))
			TH_LOG("start %#llx len %#llx",
			       (unsigned long long)wrap[i].start,
			       (unsigned long long)wrap[i].len);
	}
}

enum np_ptr { NP_PTR_NULL, NP_PTR_KERNEL, NP_PTR_UNMAPPED, NP_PTR_PROTNONE,
	      NP_PTR_RDONLY, NP_PTR_MAX };

static const char *const np_ptr_names[] = {
	"NULL", "kernel", "unmapped", "PROT_NONE", "read-only",
};

/* A pointer of kind @k to @len bytes holding @src (read-only: a copy). */
static void *np_bad_ptr(enum np_ptr k, const void *src, size_t len)
{
	char *m;

	switch (k) {
	case NP_PTR_NULL:
		return NULL;
	case NP_PTR_KERNEL:
		return (void *)0xffff888000001000UL;
	default:
		break;
	}
	m = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (src)
		memcpy(m, src, len);
	if (k == NP_PTR_UNMAPPED)
		munmap(m, 4 * psz);
	else
		mprotect(m, 4 * psz, k == NP_PTR_PROTNONE ? PROT_NONE :
			 PROT_READ);
	return m;
}

/* Every user buffer, each kind of bad pointer: -EFAULT or "not asked". */
TEST_F(migrate, bad_pointers)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(8);
	struct numaplace_migrate m, *mp;
	__u64 addrs[8];
	int nodes[8], sys[8];
	__s32 st[8];

	ASSERT_NE(NULL, p);
	np_range_addrs(addrs, (uintptr_t)p, 8);
	for (int i = 0; i < 8; i++)
		nodes[i] = i % 2;
	for (int k = 0; k < NP_PTR_MAX; k++) {
		const char *name = np_ptr_names[k];
		int want = k == NP_PTR_RDONLY ? 0 : -EFAULT;
		void *bad;

		/* The struct (read-only: the answer cannot go back). */
		np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);
		m.start = (uintptr_t)p;
		m.len = 8 * psz;
		m.node = k % 2;
		mp = np_bad_ptr(k, &m, sizeof(m));
		EXPECT_EQ(-EFAULT, np_migrate(self->fd, mp)) TH_LOG("struct %s", name);

		/* pages[]: read-only is fine. */
		bad = np_bad_ptr(k, addrs, sizeof(addrs));
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)bad;
		m.count = 8;
		m.node = k % 2;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(want, np_migrate(self->fd, &m)) TH_LOG("pages %s", name);
		if (want) {
			EXPECT_EQ(0, m.done) TH_LOG("pages %s", name);
		}
		EXPECT_EQ(want, np_sys_move_pages(0, 8, bad, nodes, sys,
						  NP_MF_MOVE))
			TH_LOG("syscall pages %s", name);

		/* nodes[], array and range mode. */
		bad = np_bad_ptr(k, nodes, sizeof(nodes));
		for (int r = 0; r < 2; r++) {
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)addrs;
			m.count = r ? 0 : 8;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? 8 * psz : 0;
			m.nodes_ptr = (uintptr_t)bad;
			m.status_ptr = (uintptr_t)st;
			/* abi.md: PER_PAGE without nodes_ptr is -EINVAL. */
			EXPECT_EQ(k == NP_PTR_NULL ? -EINVAL : want,
				  np_migrate(self->fd, &m))
				TH_LOG("nodes %s (%s mode)", name,
				       r ? "range" : "array");
		}
		/* (NULL nodes is the syscall's query mode.) */
		if (k != NP_PTR_NULL) {
			EXPECT_EQ(want, np_sys_move_pages(0, 8, addrs, bad, sys,
							  NP_MF_MOVE))
				TH_LOG("syscall nodes %s", name);
		}

		/* status[]: NULL is "not asked", the rest -EFAULT. */
		bad = np_bad_ptr(k, NULL, 0);
		want = k == NP_PTR_NULL ? 0 : -EFAULT;
		for (int r = 0; r < 2; r++) {
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)addrs;
			m.count = r ? 0 : 8;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? 8 * psz : 0;
			m.nodes_ptr = (uintptr_t)nodes;
			m.status_ptr = (uintptr_t)bad;
			EXPECT_EQ(want, np_migrate(self->fd, &m))
				TH_LOG("status %s (%s mode)", name,
				       r ? "range" : "array");
		}
		if (k != NP_PTR_NULL) {
			EXPECT_EQ(-EFAULT, np_sys_move_pages(0, 8, addrs, nodes,
							     bad, NP_MF_MOVE))
				TH_LOG("syscall status %s", name);
		}
		for (int i = 0; i < 8; i++)
			nodes[i] ^= 1;
	}
	/* All well again; the data never changed. */
	EXPECT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)p, 8 * psz, 0,
				     st, &m));
	EXPECT_EQ(8, np_count_s32(st, 8, 0));
	EXPECT_EQ(0, np_fill_bad(p, 8, 3, NULL));
}

/*
 * A guarded buffer: @nb bytes ending exactly at a PROT_NONE page.
 * Returns the start of the bytes.
 */
static void *np_guarded(size_t nb)
{
	size_t len = ((nb + psz - 1) / psz + 1) * psz;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + len - psz, psz, PROT_NONE)) {
		munmap(m, len);
		return NULL;
	}
	return m + len - psz - nb;
}

/*
 * After an -EFAULT for an array entry: done says how far the call got,
 * and the statuses of those entries are written (the rest are not).
 */
static int np_partial_ok(const struct numaplace_migrate *m, const __s32 *st,
			 size_t n)
{
	if (m->done > n)
		return 0;
	for (size_t i = 0; st && i < m->done; i++)
		if (st[i] == NP_SENTINEL)
			return 0;
	return 1;
}

/* Arrays that end on an unmapped page: exact fits work, one more faults. */
TEST_F(migrate, arrays_end_on_unmapped)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 20;
	char *p = np_pages_on0(n);
	__u64 *pages = np_guarded(n * 8), big[32];
	int *nodes = np_guarded(n * 4), bnodes[32], sys[32];
	__s32 *gst = np_guarded(n * 4), st[32];
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(pages && nodes && gst);
	for (size_t i = 0; i < 32; i++) {
		big[i] = (uintptr_t)p + (i % n) * psz;
		bnodes[i] = 1;
	}
	memcpy(pages, big, n * 8);
	memcpy(nodes, bnodes, n * 4);

	/* pages[] */
	for (size_t c = n; c <= n + 1; c++) {
		for (size_t i = 0; i < 32; i++)
			st[i] = NP_SENTINEL;
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)pages;
		m.count = c;
		m.node = 1;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
			TH_LOG("pages count %zu", c);
		EXPECT_TRUE(np_partial_ok(&m, st, n));
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, pages, bnodes, sys, NP_MF_MOVE));
	}
	/* nodes[], array and range mode */
	for (size_t c = n; c <= n + 1; c++) {
		for (int r = 0; r < 2; r++) {
			for (size_t i = 0; i < 32; i++)
				st[i] = NP_SENTINEL;
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)big;
			m.count = r ? 0 : c;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? c * psz : 0;
			m.nodes_ptr = (uintptr_t)nodes;
			m.status_ptr = (uintptr_t)st;
			EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
				TH_LOG("nodes count %zu %s", c, r ? "range" : "array");
			EXPECT_TRUE(np_partial_ok(&m, st, n));
		}
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, big, nodes, sys, NP_MF_MOVE));
	}
	/* status[], array and range mode */
	for (size_t c = n; c <= n + 1; c++) {
		for (int r = 0; r < 2; r++) {
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_NODE);
			m.pages_ptr = r ? 0 : (uintptr_t)big;
			m.count = r ? 0 : c;
			m.start = r ? (uintptr_t)p : 0;
			m.len = r ? c * psz : 0;
			m.node = 0;
			m.status_ptr = (uintptr_t)gst;
			EXPECT_EQ(c == n ? 0 : -EFAULT, np_migrate(self->fd, &m))
				TH_LOG("status count %zu %s", c, r ? "range" : "array");
			EXPECT_LE(m.done, c);
		}
		EXPECT_EQ(c == n ? 0 : -EFAULT,
			  np_sys_move_pages(0, c, big, bnodes, gst, NP_MF_MOVE));
	}
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/* A count far past the arrays: -EFAULT, like the syscall, no stray write. */
TEST_F(migrate, count_huge)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 40, canary = 8;
	static const __u64 counts[] = { NP_HUGE_COUNT, 1ULL << 61, ~0ULL };
	char *p = np_pages_on0(16);
	__u64 *pages = np_guarded(n * 8);
	int *nodes = np_guarded(n * 4), sys[64];
	__s32 *st = np_guarded((n + canary) * 4);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	ASSERT_TRUE(pages && nodes && st);
	for (size_t i = 0; i < n; i++) {
		pages[i] = (uintptr_t)p + (i % 16) * psz;
		nodes[i] = i % 2;
	}
	for (size_t c = 0; c < ARRAY_SIZE(counts); c++) {
		for (int pol = 0; pol < 2; pol++) {
			int ret;

			for (size_t i = 0; i < n + canary; i++)
				st[i] = NP_SENTINEL;
			np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
					pol ? NUMAPLACE_POLICY_PER_PAGE :
					NUMAPLACE_POLICY_NODE);
			m.pages_ptr = (uintptr_t)pages;
			m.count = counts[c];
			m.nodes_ptr = pol ? (uintptr_t)nodes : 0;
			m.node = 1;
			m.status_ptr = (uintptr_t)st;
			ret = np_migrate(self->fd, &m);
			/* count * 8 wraps past 1 << 61: -EINVAL is fair. */
			if (counts[c] >= 1ULL << 61 && ret == -EINVAL)
				ret = -EFAULT;
			EXPECT_EQ(-EFAULT, ret) TH_LOG("count %#llx policy %d",
						       (unsigned long long)counts[c], pol);
			EXPECT_LE(m.done, n);
			for (size_t i = n; i < n + canary; i++) {
				EXPECT_EQ(NP_SENTINEL, st[i])
					TH_LOG("count %#llx: status[%zu] written",
					       (unsigned long long)counts[c], i);
			}
		}
		EXPECT_EQ(-EFAULT, np_sys_move_pages(0, counts[c], pages, nodes,
						     sys, NP_MF_MOVE));
	}
	/* A long range: the status buffer ends first. */
	st = np_guarded(n * 4);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(-EFAULT, np_migrate_node(self->fd, 0, 0, (uintptr_t)p,
					   NP_HUGE_COUNT * psz, 1, st, &m));
	EXPECT_LE(m.done, n);
	EXPECT_EQ(0, np_fill_bad(p, 16, 3, NULL));
}

/* Struct sizes: short -EINVAL, long with a zero tail fine, else -E2BIG. */
TEST_F(migrate, struct_size)
{
	NP_SKIPPED_OR_FILTERED();
	static const __u32 shorts[] = { 0, 4, 8, 16, 64,
					NUMAPLACE_MIGRATE_SIZE_VER0 - 8,
					NUMAPLACE_MIGRATE_SIZE_VER0 - 1 };
	/* Longer than the module knows, within a page (larger is -E2BIG). */
	size_t len = sizeof(struct numaplace_migrate) + 1024;
	char *buf = calloc(1, len + 64);
	struct numaplace_migrate *m = (void *)buf;
	char *p = np_pages_on0(4);
	__s32 st[4];

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(NUMAPLACE_MIGRATE_SIZE_VER0, sizeof(*m));
	for (size_t i = 0; i < ARRAY_SIZE(shorts); i++) {
		np_migrate_init(m, 0, 0, NUMAPLACE_POLICY_NODE);
		m->size = shorts[i];
		m->start = (uintptr_t)p;
		m->len = 4 * psz;
		m->node = 1;
		EXPECT_EQ(-EINVAL, np_migrate(self->fd, m))
			TH_LOG("size %u", shorts[i]);
	}

	/* VER0 exactly: done, nothing written past it. */
	memset(buf, 0xa5, len + 64);
	memset(buf, 0, NUMAPLACE_MIGRATE_SIZE_VER0);
	m->size = NUMAPLACE_MIGRATE_SIZE_VER0;
	m->start = (uintptr_t)p;
	m->len = 4 * psz;
	m->node = 1;
	m->status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(4, m->done);
	EXPECT_EQ(4, m->nr_moved_pages);
	EXPECT_EQ(4, np_count_s32(st, 4, 1));
	EXPECT_EQ(NUMAPLACE_MIGRATE_SIZE_VER0, m->size);
	EXPECT_TRUE(np_all_bytes(buf + NUMAPLACE_MIGRATE_SIZE_VER0, 64, 0xa5));

	/* Longer, zero tail: fine, and the module says its own size. */
	memset(buf, 0, len);
	m->size = len;
	m->start = (uintptr_t)p;
	m->len = 4 * psz;
	m->node = 0;
	ASSERT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(sizeof(*m), m->size);
	EXPECT_EQ(4, m->done);
	EXPECT_EQ(4, m->nr_moved_pages);
	EXPECT_TRUE(np_all_bytes(buf + sizeof(*m), len - sizeof(*m), 0));

	/* Non-zero tail: -E2BIG, nothing moved. */
	for (size_t at = sizeof(*m); at < len; at += 127) {
		memset(buf, 0, len);
		m->size = len;
		m->start = (uintptr_t)p;
		m->len = 4 * psz;
		m->node = 1;
		buf[at] = 1;
		EXPECT_EQ(-E2BIG, np_migrate(self->fd, m)) TH_LOG("byte %zu", at);
	}
	free(buf);

	/* Larger than a page is no newer version (clone3): -E2BIG. */
	buf = calloc(1, 2 * psz);
	ASSERT_NE(NULL, buf);
	m = (void *)buf;
	m->start = (uintptr_t)p;
	m->len = 4 * psz;
	m->node = 1;
	m->size = psz + 8;
	EXPECT_EQ(-E2BIG, np_migrate(self->fd, m));
	m->size = psz;
	EXPECT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(4, m->nr_moved_pages);
	m->size = psz;
	m->node = 0;
	EXPECT_EQ(0, np_migrate(self->fd, m));
	EXPECT_EQ(0, np_sys_query(0, 1, (__u64[]){ (uintptr_t)p }, (int *)st));
	EXPECT_EQ(0, st[0]);
	free(buf);
}

/* Flags the ABI does not know: -EINVAL, nothing moved. */
TEST_F(migrate, unknown_flags)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(2);
	struct numaplace_migrate m;
	int node;

	ASSERT_NE(NULL, p);
	for (int bit = 7; bit < 32; bit++) {
		EXPECT_EQ(-EINVAL, np_migrate_node(self->fd, 0, 1U << bit,
						   (uintptr_t)p, 2 * psz, 1,
						   NULL, &m))
			TH_LOG("bit %d", bit);
	}
	ASSERT_EQ(0, np_sys_query(0, 1, (__u64[]){ (uintptr_t)p }, &node));
	EXPECT_EQ(0, node);
	EXPECT_EQ(0, np_migrate_node(self->fd, 0,
				     NUMAPLACE_MIGRATE_AS_SYSCALL |
				     NUMAPLACE_MIGRATE_SPLIT_OK, (uintptr_t)p,
				     2 * psz, 1, NULL, &m));
	EXPECT_EQ(2, m.nr_moved_pages);
}

TEST_F(migrate, reserved_nonzero)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
#define NP_RESERVED_CASE(field, val)					\
	do {								\
		np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);	\
		m.start = (uintptr_t)p;					\
		m.len = psz;						\
		m.node = 1;						\
		m.field = val;						\
		EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m))		\
			TH_LOG(#field);					\
	} while (0)
	NP_RESERVED_CASE(reserved0, 1);
	NP_RESERVED_CASE(reserved0, 1U << 31);
	NP_RESERVED_CASE(reserved[0], 1);
	NP_RESERVED_CASE(reserved[1], 1ULL << 63);
	NP_RESERVED_CASE(reserved[2], 1);
	NP_RESERVED_CASE(reserved[3], 1ULL << 32);
#undef NP_RESERVED_CASE
	EXPECT_EQ(0, np_migrate_node(self->fd, 0, 0, (uintptr_t)p, psz, 1,
				     NULL, &m));
	EXPECT_EQ(1, m.nr_moved_pages);
}

TEST_F(migrate, bad_policy)
{
	NP_SKIPPED_OR_FILTERED();
	static const __u32 bad[] = { NUMAPLACE_POLICY_MAX, 5, 255, 1U << 31,
				     ~0U };
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		np_migrate_init(&m, 0, 0, bad[i]);
		m.start = (uintptr_t)p;
		m.len = psz;
		m.node = 1;
		EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m)) TH_LOG("policy %u", bad[i]);
	}
}

/* Forcing an engine INFO does not list: -EOPNOTSUPP. */
TEST_F(migrate, engine_unavailable)
{
	NP_SKIPPED_OR_FILTERED();
	static const struct { __u32 flag; __u64 feat; } e[] = {
		{ NUMAPLACE_MIGRATE_ENGINE_KERNEL, NUMAPLACE_FEAT_MIGRATE_KERNEL },
		{ NUMAPLACE_MIGRATE_ENGINE_VMA, NUMAPLACE_FEAT_MIGRATE_VMA },
		{ NUMAPLACE_MIGRATE_ENGINE_BATCH, NUMAPLACE_FEAT_MIGRATE_BATCH },
	};
	char *p = np_pages_on0(1);
	struct numaplace_migrate m;
	int tried = 0;

	ASSERT_NE(NULL, p);
	for (size_t i = 0; i < ARRAY_SIZE(e); i++) {
		int ret = np_migrate_node(self->fd, 0, e[i].flag, (uintptr_t)p,
					  psz, i % 2 ? 0 : 1, NULL, &m);

		if (self->info.features & e[i].feat) {
			EXPECT_EQ(0, ret) TH_LOG("engine flag %#x", e[i].flag);
		} else {
			tried++;
			EXPECT_EQ(-EOPNOTSUPP, ret) TH_LOG("engine flag %#x", e[i].flag);
		}
	}
	if (!tried)
		ksft_print_msg("every engine is available: no -EOPNOTSUPP case\n");
}

/* A node that is not, or has no memory: -ENODEV, nothing moved. */
TEST_F(migrate, bad_nodes)
{
	NP_SKIPPED_OR_FILTERED();
	int bad[] = { -1, NUMAPLACE_MAX_NODES, INT_MAX, INT_MIN,
		      NUMAPLACE_MAX_NODES - 1, (int)self->info.nr_node_ids, -2 };
	char *p = np_pages_on0(4);
	struct numaplace_migrate m;
	__u64 addrs[4];
	int nodes[4], sys[4], memless = -1;
	__s32 st[4];

	ASSERT_NE(NULL, p);
	np_range_addrs(addrs, (uintptr_t)p, 4);
	for (int n = 0; n < (int)self->info.nr_node_ids; n++)
		if (np_node_isset(self->info.node_online, n) &&
		    !np_node_isset(self->info.node_memory, n))
			memless = n;
	if (memless >= 0)
		bad[ARRAY_SIZE(bad) - 1] = memless;
	else
		ksft_print_msg("no memoryless node in this guest\n");
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		int node = bad[b];

		for (int i = 0; i < 4; i++) {
			nodes[i] = node;
			st[i] = NP_SENTINEL;
		}
		EXPECT_EQ(-ENODEV, np_sys_move_pages(0, 4, addrs, nodes, sys,
						     NP_MF_MOVE))
			TH_LOG("syscall node %d", node);
		EXPECT_EQ(-ENODEV, np_migrate_node(self->fd, 0, 0, (uintptr_t)p,
						   4 * psz, node, st, &m))
			TH_LOG("range node %d", node);
		EXPECT_EQ(0, m.done);
		EXPECT_EQ(0, m.nr_moved_pages);
		np_migrate_init(&m, 0, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_PER_PAGE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = 4;
		m.nodes_ptr = (uintptr_t)nodes;
		m.status_ptr = (uintptr_t)st;
		EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m)) TH_LOG("array node %d", node);
		EXPECT_EQ(0, m.done);
		EXPECT_EQ(NP_SENTINEL, st[0]);
		if (node >= 0 && node < NUMAPLACE_MAX_NODES) {
			np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
			m.start = (uintptr_t)p;
			m.len = 4 * psz;
			m.node_set[0] = 1;
			m.node_set[node / 64] |= 1ULL << (node % 64);
			EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m))
				TH_LOG("interleave over 0 and %d", node);
		}
	}
	ASSERT_EQ(0, np_nodes_of(0, addrs, 4, sys));
	EXPECT_EQ(4, np_count(sys, 4, 0));
}

/*
 * A bad node in the middle of PER_PAGE targets: the entries before it are
 * moved and answered, as the syscall does; then -ENODEV, done = its index.
 */
TEST_F(migrate, bad_node_mid_array)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 8, at = 3;
	int bad[] = { -1, NUMAPLACE_MAX_NODES, -2 };
	struct numaplace_migrate m;
	__u64 aa[8], ab[8];
	int nodes[8], sys[8], wa[8], wb[8];
	__s32 st[8];

	for (int n2 = 0; n2 < (int)self->info.nr_node_ids; n2++)
		if (np_node_isset(self->info.node_online, n2) &&
		    !np_node_isset(self->info.node_memory, n2))
			bad[2] = n2;
	for (size_t b = 0; b < ARRAY_SIZE(bad); b++) {
		for (int r = 0; r < 2; r++) {
			char *pa = np_pages_on0(n), *pb = np_pages_on0(n);
			int ret;

			ASSERT_TRUE(pa && pb);
			np_range_addrs(aa, (uintptr_t)pa, n);
			np_range_addrs(ab, (uintptr_t)pb, n);
			for (size_t i = 0; i < n; i++) {
				nodes[i] = i == at ? bad[b] : 1;
				sys[i] = st[i] = NP_SENTINEL;
			}
			EXPECT_EQ(-ENODEV, np_sys_move_pages(0, n, aa, nodes, sys,
							     NP_MF_MOVE));
			np_migrate_init(&m, 0, r ? 0 : NUMAPLACE_MIGRATE_PAGES,
					NUMAPLACE_POLICY_PER_PAGE);
			m.pages_ptr = r ? 0 : (uintptr_t)ab;
			m.count = r ? 0 : n;
			m.start = r ? (uintptr_t)pb : 0;
			m.len = r ? n * psz : 0;
			m.nodes_ptr = (uintptr_t)nodes;
			m.status_ptr = (uintptr_t)st;
			ret = np_migrate(self->fd, &m);
			EXPECT_EQ(-ENODEV, ret) TH_LOG("node %d %s", bad[b],
						       r ? "range" : "array");
			EXPECT_EQ(at, m.done) TH_LOG("node %d %s", bad[b],
						     r ? "range" : "array");
			EXPECT_EQ(at, m.nr_moved_pages);
			ASSERT_EQ(0, np_nodes_of(0, aa, n, wa));
			ASSERT_EQ(0, np_nodes_of(0, ab, n, wb));
			for (size_t i = 0; i < n; i++) {
				EXPECT_EQ(sys[i], st[i]) TH_LOG("node %d %s: status %zu",
								bad[b], r ? "range" : "array", i);
				EXPECT_EQ(wa[i], wb[i]) TH_LOG("node %d %s: page %zu",
							       bad[b], r ? "range" : "array", i);
			}
			munmap(pa, n * psz);
			munmap(pb, n * psz);
		}
	}
}

/* POLICY_CPU: the node of the CPU; a CPU of a memoryless node -ENODEV. */
TEST_F(migrate, policy_cpu)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 16;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	int cpu1 = np_cpu_of_node(1), cpu0 = np_cpu_of_node(0), nodes[16];
	__s32 st[16];

	ASSERT_NE(NULL, p);
	if (cpu1 < 0 || cpu0 < 0)
		SKIP(return, "no CPU on node 0 or 1");
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_CPU);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.cpu = cpu1;
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, np_count_s32(st, n, 1));
	EXPECT_EQ(n, m.nr_moved_pages);
	ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 1));
	m.cpu = cpu0;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, np_count_s32(st, n, 0));

	for (int nd = 0; nd < (int)self->info.nr_node_ids; nd++) {
		int cpu = np_cpu_of_node(nd);

		if (np_node_isset(self->info.node_memory, nd) || cpu < 0)
			continue;
		m.cpu = cpu;
		EXPECT_EQ(-ENODEV, np_migrate(self->fd, &m))
			TH_LOG("cpu %d of memoryless node %d", cpu, nd);
		EXPECT_EQ(0, m.done);
	}
	m.cpu = 1U << 20;
	EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m));
	ASSERT_EQ(0, np_where_pages(0, (uintptr_t)p, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 0));
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/*
 * POLICY_INTERLEAVE over {0, 1} on THPs and 4 KiB pages: every folio
 * whole on one node, the nodes alternate folio by folio (in address
 * order), as many folios on each.
 */
TEST_F_TIMEOUT(migrate, interleave, 60)
{
	NP_SKIPPED_OR_FILTERED();
	/* 1: THP, 0: 4k, every other page written */
	static const int thp[] = { 1, 0, 1, 0, 1, 1 };
	const size_t nch = ARRAY_SIZE(thp), n = nch * NP_SEG_PAGES;
	char *p = np_pmd_map(nch * NP_PMD, 0);
	__u64 *addrs = calloc(n, sizeof(*addrs));
	struct np_pre *pre = calloc(n, sizeof(*pre));
	struct np_page *post = calloc(n, sizeof(*post));
	__s32 *st = calloc(n + 1, sizeof(*st));
	__u64 moved = 0, in_place = 0, folios[2] = { 0, 0 }, holes = 0;
	unsigned long last = 0;
	int last_node = -1, bad = 0;
	struct numaplace_migrate m;
	struct np_model md;

	ASSERT_TRUE(p && addrs && pre && post && st);
	np_mempolicy(MPOL_BIND, 0);
	for (size_t c = 0; c < nch; c++) {
		char *q = p + c * NP_PMD;

		if (thp[c]) {
			madvise(q, NP_PMD, MADV_HUGEPAGE);
			memset(q, 0x40 + c, NP_PMD);
			madvise(q, NP_PMD, MADV_NOHUGEPAGE);
		} else {
			for (size_t i = 0; i < NP_SEG_PAGES; i += 2)
				np_touch_w(q, i);
		}
	}
	np_mempolicy(MPOL_DEFAULT, -1);
	np_range_addrs(addrs, (uintptr_t)p, n);
	ASSERT_EQ(0, np_pre_read(0, addrs, n, pre));
	if (!(pre[0].pg.what & NPW_PMD))
		SKIP(return, "no PMD-mapped THP (THP disabled?)");

	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.node_set[0] = 3;
	m.status_ptr = (uintptr_t)st;
	st[n] = NP_SENTINEL;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(NP_SENTINEL, st[n]);
	ASSERT_EQ(0, np_model_open(&md, 0));
	for (size_t i = 0; i < n; i++)
		np_model_page(&md, addrs[i], &post[i]);
	np_model_close(&md);

	self->c.logged = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pre[i].folio) {
			holes++;
			if (st[i] != -ENOENT) {
				bad++;
				np_log(&self->c, "page %zu: never touched, status %d",
				       i, st[i]);
			}
			continue;
		}
		if (post[i].node != st[i] || st[i] < 0 || st[i] > 1) {
			bad++;
			np_log(&self->c, "page %zu: status %d, on node %d", i,
			       st[i], post[i].node);
		}
		if (pre[i].folio == last) {
			if (st[i] != last_node) {
				bad++;
				np_log(&self->c, "page %zu: status %d, its folio went to %d",
				       i, st[i], last_node);
			}
			continue;
		}
		/* A new folio. */
		if (st[i] == last_node) {
			bad++;
			np_log(&self->c, "page %zu: folio to node %d after a folio to %d",
			       i, st[i], last_node);
		}
		last = pre[i].folio;
		last_node = st[i];
		if (st[i] == 0 || st[i] == 1) {
			folios[st[i]]++;
			if (st[i] == 1)
				moved += pre[i].nr;
			else
				in_place += pre[i].nr;
		}
	}
	np_log_end(&self->c, "interleave", bad);
	EXPECT_EQ(0, bad);
	ksft_print_msg("folios: %llu on node 0, %llu on node 1\n",
		       (unsigned long long)folios[0],
		       (unsigned long long)folios[1]);
	EXPECT_LE(folios[0], folios[1] + 1);
	EXPECT_LE(folios[1], folios[0] + 1);
	EXPECT_EQ(moved, m.nr_moved_pages);
	EXPECT_EQ(in_place, m.nr_in_place_pages);
	EXPECT_EQ(holes, m.nr_failed[NUMAPLACE_FAIL_ENOENT]);
	EXPECT_EQ(folios[1], m.nr_moved_folios);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "interleave", &m, st, n, 1,
					   self->allowed));
	/* THPs stay whole (PMD-mapped), data intact. */
	for (size_t c = 0; c < nch; c++) {
		char *q = p + c * NP_PMD;

		if (!thp[c])
			continue;
		EXPECT_TRUE(post[c * NP_SEG_PAGES].what & NPW_PMD) TH_LOG("chunk %zu", c);
		EXPECT_TRUE(np_all_bytes(q, NP_PMD, 0x40 + c)) TH_LOG("chunk %zu", c);
	}

	/* One node in the set: everything there. */
	memset(m.node_set, 0, sizeof(m.node_set));
	m.node_set[0] = 2;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n - holes, np_count_s32(st, n, 1));
	free(addrs);
	free(pre);
	free(post);
	free(st);
}

/* An empty node set for INTERLEAVE: -EINVAL. */
TEST_F(migrate, interleave_empty_set)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(4);
	struct numaplace_migrate m;

	ASSERT_NE(NULL, p);
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_INTERLEAVE);
	m.start = (uintptr_t)p;
	m.len = 4 * psz;
	EXPECT_EQ(-EINVAL, np_migrate(self->fd, &m));
	EXPECT_EQ(0, m.nr_moved_pages);
}

/* status_ptr is optional; outputs that come in are ignored. */
TEST_F(migrate, status_optional_outputs_ignored)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = 32;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	__s32 st[32];

	ASSERT_NE(NULL, p);
	np_migrate_init(&m, 0, 0, NUMAPLACE_POLICY_NODE);
	m.start = (uintptr_t)p;
	m.len = n * psz;
	m.node = 1;
	m.done = ~0ULL;
	m.nr_moved_pages = m.nr_moved_folios = 12345;
	m.nr_in_place_pages = m.nr_failed_pages = 777;
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++)
		m.nr_failed[r] = r + 1;
	m.engines = ~0U;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.done);
	EXPECT_EQ(n, m.nr_moved_pages);
	EXPECT_EQ(n, m.nr_moved_folios);
	EXPECT_EQ(0, m.nr_in_place_pages);
	EXPECT_EQ(0, m.nr_failed_pages);
	EXPECT_EQ(0, np_check_mig_counters(&self->c, "no status", &m, NULL, n,
					   1, self->allowed));
	for (int r = 0; r < NUMAPLACE_FAIL_MAX; r++) {
		EXPECT_EQ(0, m.nr_failed[r]) TH_LOG("reason %d", r);
	}
	/* Again: all in place, no engine. */
	m.status_ptr = (uintptr_t)st;
	ASSERT_EQ(0, np_migrate(self->fd, &m));
	EXPECT_EQ(n, m.nr_in_place_pages);
	EXPECT_EQ(0, m.nr_moved_pages);
	EXPECT_EQ(0, m.engines);
	EXPECT_EQ(n, np_count_s32(st, n, 1));
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/*
 * A cpuset cgroup whose cpuset.mems is @mems, on a cgroup2 mount of the
 * test's own (self->cg, self->cg_mnt: the teardown removes both). 0,
 * -ENOENT (no cgroup2 or no cpuset controller) or -errno.
 */
static int np_cpuset_make(FIXTURE_DATA(migrate) *self, const char *mems)
{
	char path[256];

	snprintf(self->cg_mnt, sizeof(self->cg_mnt), "/tmp/np-cg-%d", getpid());
	if (mkdir(self->cg_mnt, 0700))
		return -errno;
	if (mount("none", self->cg_mnt, "cgroup2", 0, NULL)) {
		rmdir(self->cg_mnt);
		self->cg_mnt[0] = 0;
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", self->cg_mnt);
	if (np_write_str(path, "+cpuset"))
		return -ENOENT;
	snprintf(self->cg, sizeof(self->cg), "%s/np-migrate", self->cg_mnt);
	if (mkdir(self->cg, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/cpuset.mems", self->cg);
	return np_write_str(path, mems);
}

/*
 * A node outside the target's cpuset (cgroup2 cpuset.mems): -EACCES as
 * the syscall; in the middle of PER_PAGE targets after the entries
 * before it; a memoryless node is still -ENODEV.
 */
TEST_F(migrate, cpuset_outside)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t n = NP_PROBE_PAGES, at = 5;
	int ret;
	struct np_probe_args a = { 0, 0, 1, 0, NP_MF_MOVE };
	struct numaplace_migrate m;
	char path[256], val[32];
	__u64 addrs[NP_PROBE_PAGES];
	int nodes[NP_PROBE_PAGES], sys[NP_PROBE_PAGES];
	__s32 st[NP_PROBE_PAGES];
	pid_t pid;

	ret = np_cpuset_make(self, "0");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 cpuset controller");
	ASSERT_EQ(0, ret);
	pid = np_kid(self, 0, 1);
	ASSERT_GT(pid, 0);
	snprintf(path, sizeof(path), "%s/cgroup.procs", self->cg);
	snprintf(val, sizeof(val), "%d", pid);
	ASSERT_EQ(0, np_write_str(path, val));

	a.pid = pid;
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self, 0, &a));
	EXPECT_EQ(-EACCES, self->res->sys);
	EXPECT_EQ(-EACCES, self->res->mod);
	EXPECT_EQ(0, self->res->done);
	EXPECT_EQ(NP_SENTINEL, self->res->st[0]);

	/* In the middle: entries before it answered (in place here). */
	np_range_addrs(addrs, a.base, n);
	for (size_t i = 0; i < n; i++) {
		nodes[i] = i == at ? 1 : 0;
		sys[i] = st[i] = NP_SENTINEL;
	}
	EXPECT_EQ(-EACCES, np_sys_move_pages(pid, n, addrs, nodes, sys,
					     NP_MF_MOVE));
	np_migrate_init(&m, pid, NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m.pages_ptr = (uintptr_t)addrs;
	m.count = n;
	m.nodes_ptr = (uintptr_t)nodes;
	m.status_ptr = (uintptr_t)st;
	EXPECT_EQ(-EACCES, np_migrate(self->fd, &m));
	EXPECT_EQ(at, m.done);
	for (size_t i = 0; i < n; i++) {
		EXPECT_EQ(sys[i], st[i]) TH_LOG("entry %zu", i);
	}
	/* Node checks before the cpuset. */
	for (int nd = 0; nd < (int)self->info.nr_node_ids; nd++) {
		if (np_node_isset(self->info.node_memory, nd))
			continue;
		EXPECT_EQ(-ENODEV, np_migrate_node(self->fd, pid, 0, a.base,
						   n * psz, nd, NULL, &m));
	}
	ASSERT_EQ(0, np_where_pages(pid, a.base, n, nodes));
	EXPECT_EQ(n, np_count(nodes, n, 0));
}

/*
 * A target node inside the target's cpuset but outside the caller's:
 * move_pages(2) allocates in the caller's context, so nothing moves and
 * the call fails with ENOMEM (its way of saying the node is full).
 * numaplace moves nothing either and answers each such page -ENOMEM (as
 * for a full node, abi.md), also when its copy workers (kworkers, outside
 * any cpuset) allocate. (41261ae passes too here: the caller's own share
 * fails first and stops the workers; the check up front makes it so by
 * construction.) The caller is a child in a cpuset of node 0; the target
 * is the test, outside it.
 */
#define NP_CPUSET_SMALL	512

TEST_F(migrate, cpuset_caller)
{
	NP_SKIPPED_OR_FILTERED();
	const size_t nt = 2 * NP_SEG_PAGES, n = NP_CPUSET_SMALL + nt;
	char *small = np_pmd_map(NP_CPUSET_SMALL * psz, 0);
	char *thp = np_pmd_map(nt * psz, 1);
	size_t bytes = (2 * n + 1) * sizeof(int);
	int *sh = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int *mod = sh, *sys = sh + n, now[NP_CPUSET_SMALL + 2 * NP_SEG_PAGES];
	__u64 *addrs = calloc(n, sizeof(*addrs));
	int bad = 0, ret, status;
	pid_t pid;

	ASSERT_TRUE(small && thp && sh != MAP_FAILED && addrs);
	if (!np_node_isset(self->info.node_memory, 1))
		SKIP(return, "needs node 1 with memory");
	ret = np_cpuset_make(self, "0");
	if (ret == -ENOENT)
		SKIP(return, "no cgroup2 cpuset controller");
	ASSERT_EQ(0, ret);
	np_range_addrs(addrs, (uintptr_t)small, NP_CPUSET_SMALL);
	np_range_addrs(addrs + NP_CPUSET_SMALL, (uintptr_t)thp, nt);
	np_mempolicy(MPOL_BIND, 0);
	np_fill(small, NP_CPUSET_SMALL, 1);
	np_fill(thp, nt, 2);
	np_mempolicy(MPOL_DEFAULT, -1);
	/* Not shared with the caller (else -EACCES without MOVE_ALL). */
	ASSERT_EQ(0, madvise(small, NP_CPUSET_SMALL * psz, MADV_DONTFORK));
	ASSERT_EQ(0, madvise(thp, nt * psz, MADV_DONTFORK));
	/* Workers that allocate outside the caller's context. */
	if (system("numaplace config copy_workers=2 >/dev/null 2>&1"))
		TH_LOG("could not set copy_workers=2: only the caller copies");

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char procs[256];
		pid_t target = getppid();
		struct numaplace_migrate m;
		int nodes[NP_CPUSET_SMALL + 2 * NP_SEG_PAGES];

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", self->cg);
		if (np_write_str(procs, "0"))
			_exit(2);
		for (size_t i = 0; i < n; i++) {
			nodes[i] = 1;
			mod[i] = sys[i] = NP_SENTINEL;
		}
		np_migrate_init(&m, target, NUMAPLACE_MIGRATE_PAGES,
				NUMAPLACE_POLICY_NODE);
		m.pages_ptr = (uintptr_t)addrs;
		m.count = n;
		m.node = 1;
		m.status_ptr = (uintptr_t)mod;
		if (np_migrate(self->fd, &m))
			_exit(3);
		sys[n] = np_sys_move_pages(target, n, addrs, nodes, sys,
					   NP_MF_MOVE);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	system("numaplace config copy_workers=0 >/dev/null 2>&1");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOMEM, sys[n]);
	for (size_t i = 0; i < n; i++)
		bad += mod[i] != -ENOMEM;
	EXPECT_EQ(0, bad) TH_LOG("page 0: %d; last: %d", mod[0], mod[n - 1]);
	ASSERT_EQ(0, np_nodes_of(0, addrs, n, now));
	bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += now[i] != 0;
	EXPECT_EQ(0, bad) TH_LOG("pages moved out of the caller's cpuset");
	munmap(sh, bytes);
	free(addrs);
}

NP_HARNESS_MAIN
