// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: pid -> mm with move_pages(2)'s permission checks, in the
 * kernel's order (find_mm_struct()): pid, ptrace READ_REALCREDS check with
 * the caller's credentials now, the LSM movememory hook, then the mm.
 */
#include <linux/cpuset.h>
#include <linux/nodemask.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>

#include "numaplace.h"
#include "ksyms.h"

/* The exact check needs two internals; without both, be stricter. */
bool np_target_exact(void)
{
	return np_ksyms.ptrace_may_access && np_ksyms.security_task_movememory;
}

static int np_target_allowed(struct task_struct *task)
{
	int ret;

	if (np_target_exact()) {
		if (!np_ksyms.ptrace_may_access(task,
						PTRACE_MODE_READ_REALCREDS))
			return -EPERM;
		ret = np_ksyms.security_task_movememory(task);
		return ret;
	}
	/*
	 * Fallback, never looser than the syscall: the caller's own thread
	 * group only. A capability alone is not enough: the LSM hooks the
	 * exact check runs (ptrace_access_check, task_movememory) may refuse
	 * a capable caller, and without them the module cannot ask.
	 */
	return same_thread_group(task, current) ? 0 : -EPERM;
}

/* The nodes the task's cpuset lets its pages go to, as the syscall reads them. */
static void np_target_mems(struct task_struct *task, nodemask_t *mems)
{
	if (np_ksyms.cpuset_mems_allowed) {
		*mems = np_ksyms.cpuset_mems_allowed(task);
		return;
	}
	/* The task's own copy of its cpuset's mems, kept under task_lock(). */
	task_lock(task);
	*mems = task->mems_allowed;
	task_unlock(task);
	nodes_and(*mems, *mems, node_states[N_MEMORY]);
}

/**
 * np_target_get - the mm (and cpuset mems) of process @pid (0: the
 * caller), checked as move_pages(2) checks it
 * @pid: a pid in the caller's pid namespace, or 0
 * @t: out: @t->mm with a reference (np_target_put() it), @t->mems
 *
 * Return: 0, -ESRCH for no such process, -EPERM when the caller may not
 * look at it, the LSM's error, or -EINVAL for a process without an mm
 * (kernel thread, zombie).
 */
int np_target_get(pid_t pid, struct np_target *t)
{
	struct task_struct *task;
	int ret;

	if (pid < 0)
		return -ESRCH;
	if (!pid) {
		task = current;
		get_task_struct(task);
	} else {
		rcu_read_lock();
		task = get_pid_task(find_vpid(pid), PIDTYPE_PID);
		rcu_read_unlock();
		if (!task)
			return -ESRCH;
		ret = np_target_allowed(task);
		if (ret)
			goto put_task;
	}
	np_target_mems(task, &t->mems);
	t->mm = get_task_mm(task);
	ret = t->mm ? 0 : -EINVAL;
put_task:
	put_task_struct(task);
	return ret;
}

void np_target_put(struct np_target *t)
{
	mmput(t->mm);
}

/* The mm of @pid for a query: np_target_get() without the mems. */
struct mm_struct *np_target_mm(pid_t pid)
{
	struct np_target t;
	int ret = np_target_get(pid, &t);

	return ret ? ERR_PTR(ret) : t.mm;
}
