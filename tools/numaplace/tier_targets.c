// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace tier: the processes it tracks (tier.h). A -p process is added
 * once and tracked until it exits (the context drops it). A --cgroup
 * directory's cgroup.procs is read before every period: its new members
 * are added, and those that left (exited or moved to another cgroup)
 * removed. cgroup.procs lists the cgroup's own processes, not those of
 * its child cgroups. A cgroup whose directory is gone is not read again.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tier.h"

/* Pids a set has room for at first: a few processes, a small service. */
#define NP_PIDS_FIRST		16
/* --cgroup directories there is room for at first. */
#define NP_CGROUPS_FIRST	4

int np_pids_add(struct np_pids *p, int pid)
{
	if (np_array_reserve(p->v, &p->cap, p->nr, NP_PIDS_FIRST))
		return -ENOMEM;
	p->v[p->nr++] = pid;
	return 0;
}

static int np_pid_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Sort @p and drop the pids it has twice. */
static void np_pids_sort(struct np_pids *p)
{
	size_t i, n = 0;

	if (!p->nr)
		return;
	qsort(p->v, p->nr, sizeof(*p->v), np_pid_cmp);
	for (i = 0; i < p->nr; i++)
		if (!n || p->v[n - 1] != p->v[i])
			p->v[n++] = p->v[i];
	p->nr = n;
}

/* @pid is in @p, sorted. */
static int np_pids_has(const struct np_pids *p, int pid)
{
	return p->nr &&
	       bsearch(&pid, p->v, p->nr, sizeof(*p->v), np_pid_cmp);
}

int np_tier_targets_cgroup(struct np_tier_targets *tg, const char *path)
{
	if (np_array_reserve(tg->cgroups, &tg->cap_cgroups, tg->nr_cgroups,
			     NP_CGROUPS_FIRST))
		return -ENOMEM;
	tg->cgroups[tg->nr_cgroups++] = (struct np_tier_cgroup){ path, 0 };
	return 0;
}

int np_tier_oom(void)
{
	fprintf(stderr, "numaplace tier: out of memory\n");
	return NP_EXIT_FAIL;
}

/* Why process @pid cannot be tracked (@err from numaplace_tier_add()). */
static void np_tier_say_add(int pid, int err)
{
	if (err == -EPERM || err == -EACCES)
		fprintf(stderr, "numaplace tier: pid %d: %s (the scan writes /proc/%d/clear_refs: its owner or CAP_DAC_OVERRIDE; another user's process needs CAP_SYS_PTRACE too)\n",
			pid, strerror(-err), pid);
	else if (err == -EOPNOTSUPP)
		fprintf(stderr, "numaplace tier: pid %d: its access bits cannot be cleared here (it has mmu notifiers, as a KVM guest or a watched process, and the module lacks access-notify)\n",
			pid);
	else
		fprintf(stderr, "numaplace tier: pid %d: %s\n", pid,
			strerror(-err));
}

/*
 * The processes of @cg appended to @members. 0, -ENOENT when the
 * directory is gone (or going: a removed cgroup's open file reads
 * ENODEV), or -errno.
 */
static int np_cgroup_read(const struct np_tier_cgroup *cg,
			  struct np_pids *members)
{
	char path[PATH_MAX];
	int pid, ret = 0;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", cg->path) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return errno == ENODEV ? -ENOENT : -errno;
	errno = 0;
	while (!ret && fscanf(f, "%d", &pid) == 1)
		ret = np_pids_add(members, pid);
	if (!ret && ferror(f))
		ret = errno == ENODEV ? -ENOENT : errno ? -errno : -EIO;
	fclose(f);
	return ret;
}

/*
 * Every cgroup's members into tg->members, sorted. A cgroup gone is said
 * and dropped, or at the start (@start) a failure. NP_EXIT_OK or an exit
 * code (said).
 */
static int np_tier_read_cgroups(struct np_tier_targets *tg, int start)
{
	struct np_tier_cgroup *cg;
	size_t i;
	int ret;

	tg->members.nr = 0;
	for (i = 0; i < tg->nr_cgroups; i++) {
		cg = &tg->cgroups[i];
		if (cg->gone)
			continue;
		ret = np_cgroup_read(cg, &tg->members);
		if (ret == -ENOENT && start) {
			fprintf(stderr, "numaplace tier: %s: no such cgroup (no cgroup.procs there)\n",
				cg->path);
			return NP_EXIT_NOPROC;
		}
		if (ret == -ENOENT) {
			fprintf(stderr, "numaplace tier: cgroup %s is gone\n",
				cg->path);
			cg->gone = 1;
			tg->nr_gone++;
			continue;
		}
		if (ret == -ENOMEM)
			return np_tier_oom();
		if (ret) {
			fprintf(stderr, "numaplace tier: %s/cgroup.procs: %s\n",
				cg->path, strerror(-ret));
			return np_exit_of(ret);
		}
	}
	np_pids_sort(&tg->members);
	return NP_EXIT_OK;
}

/* The context's processes into tg->tracked, sorted. 0 or -ENOMEM. */
static int np_tier_read_tracked(const struct numaplace_tier *t,
				struct np_tier_targets *tg)
{
	size_t n;
	int *v;

	while ((n = numaplace_tier_pids(t, tg->tracked.v, tg->tracked.cap)) >
	       tg->tracked.cap) {
		v = realloc(tg->tracked.v, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		tg->tracked.v = v;
		tg->tracked.cap = n;
	}
	tg->tracked.nr = n;
	np_pids_sort(&tg->tracked);
	return 0;
}

/*
 * Track cgroup member @pid. One that exited since the read is skipped;
 * so is one the scan may not touch (a permission, or mmu notifiers where
 * the module cannot clear their bits), said the first period it is refused
 * (tg->refused collects them). At the start (@start) a refused
 * permission is a failure: the daemon runs without the rights it needs.
 * NP_EXIT_OK or an exit code (said).
 */
static int np_tier_add_member(struct numaplace_tier *t,
			      struct np_tier_targets *tg, int pid, int start)
{
	int ret = numaplace_tier_add(t, pid);

	if (!ret || ret == -EEXIST || ret == -ESRCH)
		return NP_EXIT_OK;
	if (ret == -ENOMEM)
		return np_tier_oom();
	if (start && (ret == -EPERM || ret == -EACCES)) {
		np_tier_say_add(pid, ret);
		return NP_EXIT_PERM;
	}
	if (!np_pids_has(&tg->refused_prev, pid))
		np_tier_say_add(pid, ret);
	/* Members are sorted: so is the refused set. */
	return np_pids_add(&tg->refused, pid) ? np_tier_oom() : NP_EXIT_OK;
}

/* The cgroups' members into the context, and only them (and -p's). */
static int np_tier_sync(struct numaplace_tier *t, struct np_tier_targets *tg,
			int start)
{
	struct np_pids swap;
	size_t i;
	int ret, pid;

	if (tg->nr_gone == tg->nr_cgroups)
		return NP_EXIT_OK;
	ret = np_tier_read_cgroups(tg, start);
	if (ret)
		return ret;
	if (np_tier_read_tracked(t, tg))
		return np_tier_oom();
	for (i = 0; i < tg->tracked.nr; i++) {
		pid = tg->tracked.v[i];
		if (!np_pids_has(&tg->members, pid) &&
		    !np_pids_has(&tg->given, pid))
			numaplace_tier_remove(t, pid);
	}
	swap = tg->refused_prev;
	tg->refused_prev = tg->refused;
	tg->refused = swap;
	tg->refused.nr = 0;
	for (i = 0; i < tg->members.nr; i++) {
		pid = tg->members.v[i];
		if (np_pids_has(&tg->tracked, pid))
			continue;
		ret = np_tier_add_member(t, tg, pid, start);
		if (ret)
			return ret;
	}
	return NP_EXIT_OK;
}

int np_tier_targets_start(struct numaplace_tier *t, struct np_tier_targets *tg)
{
	size_t i;
	int ret;

	np_pids_sort(&tg->given);
	for (i = 0; i < tg->given.nr; i++) {
		ret = numaplace_tier_add(t, tg->given.v[i]);
		if (ret) {
			np_tier_say_add(tg->given.v[i], ret);
			return np_exit_of(ret);
		}
	}
	return np_tier_sync(t, tg, 1);
}

int np_tier_targets_update(struct numaplace_tier *t,
			   struct np_tier_targets *tg)
{
	return np_tier_sync(t, tg, 0);
}

int np_tier_targets_done(const struct np_tier_targets *tg, __u64 nr_targets)
{
	return !nr_targets && tg->nr_gone == tg->nr_cgroups;
}

void np_tier_targets_free(struct np_tier_targets *tg)
{
	free(tg->refused_prev.v);
	free(tg->refused.v);
	free(tg->tracked.v);
	free(tg->members.v);
	free(tg->cgroups);
	free(tg->given.v);
}
