// SPDX-License-Identifier: GPL-2.0
/*
 * What the MIGRATE ABI tests share (migrate_lib.h): migrate_abi.c (bad
 * input and the struct), migrate_perm.c (whose pages a caller may move)
 * and migrate_policy.c (policies, nodes, cpusets). Pages on node 0,
 * target children and the probe that calls the ioctl and move_pages(2)
 * from another process.
 */
#include <linux/mempolicy.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "migrate_lib.h"

char *np_pages_on0(size_t n)
{
	char *p = np_pmd_map(n * sysconf(_SC_PAGESIZE), 0);

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
struct np_abi_kid_arg {
	uid_t uid;
	int dumpable;
	struct np_res *res;
};

static int np_abi_kid_build(void *arg)
{
	const struct np_abi_kid_arg *k = arg;
	char *p;

	if (np_become(k->uid, k->dumpable))
		return 1;
	p = np_pages_on0(NP_PROBE_PAGES);
	if (!p)
		return 1;
	k->res->base = (uintptr_t)p;
	return 0;
}

pid_t np_abi_kid(struct np_kids *kids, struct np_res *res, uid_t uid,
		 int dumpable)
{
	struct np_abi_kid_arg k = {
		.uid = uid, .dumpable = dumpable, .res = res,
	};
	pid_t pid;

	if (kids->nr == NP_MAX_KIDS)
		return -1;
	pid = np_fork_ready(np_abi_kid_build, &k);
	if (pid > 0)
		kids->pid[kids->nr++] = pid;
	return pid;
}

void np_kids_kill(struct np_kids *kids)
{
	for (int i = 0; i < kids->nr; i++) {
		kill(kids->pid[i], SIGKILL);
		waitpid(kids->pid[i], NULL, 0);
	}
	kids->nr = 0;
}

int np_probe(struct np_res *r, uid_t uid, const struct np_probe_args *a)
{
	return np_probe_fd(r, uid, -1, a);
}

/* As np_probe(), on @fd (opened by the test) when @fd >= 0. */
int np_probe_fd(struct np_res *r, uid_t uid, int fd,
		const struct np_probe_args *a)
{
	int status;
	pid_t kid = fork();

	if (kid < 0)
		return -1;
	if (kid == 0) {
		__u64 addrs[NP_PROBE_PAGES], own;
		int nodes[NP_PROBE_PAGES];
		struct numaplace_migrate m;
		__s32 st;

		fd = np_child_device(uid, fd);
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
int np_where_pages(int pid, uintptr_t base, size_t n, int *nodes)
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
size_t np_count(const int *a, size_t n, int v)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += a[i] == v;
	return c;
}

size_t np_count_s32(const __s32 *a, size_t n, __s32 v)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += a[i] == v;
	return c;
}


void np_per_page_init(struct numaplace_migrate *m, int range,
		      const __u64 *addrs, uintptr_t base, size_t n,
		      const void *nodes, void *st)
{
	np_migrate_init(m, 0, range ? 0 : NUMAPLACE_MIGRATE_PAGES,
			NUMAPLACE_POLICY_PER_PAGE);
	m->pages_ptr = range ? 0 : (uintptr_t)addrs;
	m->count = range ? 0 : n;
	m->start = range ? base : 0;
	m->len = range ? n * sysconf(_SC_PAGESIZE) : 0;
	m->nodes_ptr = (uintptr_t)nodes;
	m->status_ptr = (uintptr_t)st;
}
