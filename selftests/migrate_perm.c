// SPDX-License-Identifier: GPL-2.0
/*
 * NUMAPLACE_IOC_MIGRATE's permission rows of reliability.md (fixture
 * "migrate_perm"): whose pages a caller may move, by pid 0, its own pid
 * or a thread's id, root and other users, dumpable or not, credentials
 * taken at ioctl time, a pid without a process or without an mm, and
 * MOVE_ALL. Each compared with what move_pages(2) answers the same
 * caller (np_probe(), migrate_abi_lib.c). The bad input is
 * migrate_abi.c's, policies and cpusets migrate_policy.c's.
 *
 * NP_ONLY=word,word runs only the tests whose names contain one of the
 * words (the harness has no filter).
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

static long psz;

NP_ABI_FIXTURE(migrate_perm)

/* Move the caller's pages by pid 0, own pid and a thread's id. */
NP_TEST_F(migrate_perm, pid0_self_thread)
{
	NP_SKIPPED_OR_FILTERED();
	struct np_idle t;
	const size_t n = 32;
	char *p = np_pages_on0(n);
	struct numaplace_migrate m;
	int nodes[32], pids[3];
	__s32 st[32];

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_idle_start(&t));
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
	np_idle_stop(&t);
	EXPECT_EQ(0, np_fill_bad(p, n, 3, NULL));
}

/* Root moves a child's pages, and a nobody's (dumpable or not). */
NP_TEST_F(migrate_perm, root_moves_others)
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
		pid_t pid = np_abi_kid(&self->kids, self->res, who[w].uid,
				       who[w].dumpable);

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
		ASSERT_EQ(0, np_probe(self->res, 0, &a));
		EXPECT_EQ(0, self->res->sys);
		EXPECT_EQ(0, self->res->mod);
		EXPECT_EQ(1, self->res->sys_st[0]);
		EXPECT_EQ(1, self->res->st[0]);
	}
}

/* nobody may not move root's pages: -EPERM, as the syscall says. */
NP_TEST_F(migrate_perm, other_user_denied)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_abi_kid(&self->kids, self->res, 0, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int nodes[NP_PROBE_PAGES];

	ASSERT_GT(pid, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(NP_SENTINEL, self->res->st[0]);
	EXPECT_EQ(0, self->res->mod_self);
	ASSERT_EQ(0, np_where_pages(pid, a.base, NP_PROBE_PAGES, nodes));
	EXPECT_EQ(NP_PROBE_PAGES, np_count(nodes, NP_PROBE_PAGES, 0));
	/* The ptrace check comes before the targets. */
	a.node = -1;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	a.node = 1;
	/* The first process, too. */
	a.pid = 1;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(self->res->sys, self->res->mod);
}

/* Opened by root, used after setuid(nobody): nobody's rights count. */
NP_TEST_F(migrate_perm, creds_at_ioctl_time)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_abi_kid(&self->kids, self->res, 0, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int fd = np_open();

	ASSERT_GT(pid, 0);
	ASSERT_GE(fd, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe_fd(self->res, NP_NOBODY, fd, &a));
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
	ASSERT_EQ(0, np_probe_fd(self->res, NP_NOBODY, fd, &a));
	close(fd);
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
}

/* nobody moving another dumpable nobody process: as the query's rule. */
NP_TEST_F(migrate_perm, same_uid_unprivileged)
{
	NP_SKIPPED_OR_FILTERED();
	pid_t pid = np_abi_kid(&self->kids, self->res, NP_NOBODY, 1);
	struct np_probe_args a = { pid, 0, 1, 0, NP_MF_MOVE };
	int exact = !!(self->info.features & NUMAPLACE_FEAT_PTRACE_EXACT);

	ASSERT_GT(pid, 0);
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(0, self->res->sys);
	EXPECT_EQ(exact ? 0 : -EPERM, self->res->mod);
	EXPECT_EQ(0, self->res->mod_self);
	/* Not dumpable: refused by both. */
	pid = np_abi_kid(&self->kids, self->res, NP_NOBODY, 0);
	ASSERT_GT(pid, 0);
	a.pid = pid;
	a.base = self->res->base;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
}

/* No such pid: -ESRCH; pid errors come before node errors. */
NP_TEST_F(migrate_perm, nonexistent_pid)
{
	NP_SKIPPED_OR_FILTERED();
	int pids[NP_BAD_PIDS];
	struct numaplace_migrate m;
	__u64 a = (uintptr_t)&m;
	int node = 1, sys;
	__s32 st;

	ASSERT_EQ(0, np_bad_pids(pids)) TH_LOG("pid_max 300 or less");
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
NP_TEST_F(migrate_perm, no_mm)
{
	NP_SKIPPED_OR_FILTERED();
	struct np_probe_args a = { 2, 0x10000, 1, 0, NP_MF_MOVE };
	char comm[32];
	pid_t z;

	ASSERT_EQ(0, np_read_str("/proc/2/comm", comm, sizeof(comm)));
	ASSERT_STREQ("kthreadd", comm);
	ASSERT_EQ(0, np_probe(self->res, 0, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(self->res->sys, self->res->mod);

	z = np_zombie();
	ASSERT_LT(0, z);
	a.pid = z;
	ASSERT_EQ(0, np_probe(self->res, 0, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	waitpid(z, NULL, 0);
}

/*
 * MOVE_ALL needs CAP_SYS_NICE: -EPERM for nobody, before the pid is
 * looked at; unknown flags are refused before that.
 */
NP_TEST_F(migrate_perm, move_all_needs_cap)
{
	NP_SKIPPED_OR_FILTERED();
	char *p = np_pages_on0(NP_PROBE_PAGES);
	struct np_probe_args a = {
		0, (uintptr_t)p, 1, NUMAPLACE_MIGRATE_MOVE_ALL, NP_MF_MOVE_ALL,
	};
	struct numaplace_migrate m;
	__s32 st[NP_PROBE_PAGES];

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	EXPECT_EQ(-EPERM, self->res->mod_self);
	/* Capability before pid. */
	a.pid = INT_MAX;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(-EPERM, self->res->sys);
	EXPECT_EQ(-EPERM, self->res->mod);
	/* Flags before capability. */
	a.pid = 0;
	a.flags |= 1U << 20;
	a.sysflags |= 1 << 5;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(-EINVAL, self->res->sys);
	EXPECT_EQ(-EINVAL, self->res->mod);
	/* Without MOVE_ALL nobody moves its own pages. */
	a.flags = 0;
	a.sysflags = NP_MF_MOVE;
	ASSERT_EQ(0, np_probe(self->res, NP_NOBODY, &a));
	EXPECT_EQ(0, self->res->mod_self);
	/* Root may. */
	ASSERT_EQ(0, np_migrate_node(self->fd, 0, NUMAPLACE_MIGRATE_MOVE_ALL,
				     (uintptr_t)p, NP_PROBE_PAGES * psz, 1, st,
				     &m));
	EXPECT_EQ(NP_PROBE_PAGES, np_count_s32(st, NP_PROBE_PAGES, 1));
}

/* len 0 and count 0 move nothing, successfully. */

NP_HARNESS_MAIN
