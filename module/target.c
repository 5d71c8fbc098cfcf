// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: pid -> mm with move_pages(2)'s permission checks, in the
 * kernel's order (find_mm_struct()): pid, ptrace READ_REALCREDS check with
 * the caller's credentials now, the LSM movememory hook, then the mm.
 */
#include <linux/capability.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>

#include "numaplace.h"

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
	/* Fallback, never looser than the syscall: own process or CAP_SYS_PTRACE. */
	if (same_thread_group(task, current) || capable(CAP_SYS_PTRACE))
		return 0;
	return -EPERM;
}

/**
 * np_target_mm - the mm of process @pid (0: the caller), checked as
 * move_pages(2) checks it
 * @pid: a pid in the caller's pid namespace, or 0
 *
 * Return: the mm with a reference (mmput() it), or ERR_PTR(-ESRCH) for no
 * such process, -EPERM when the caller may not look at it, the LSM's
 * error, or -EINVAL for a process without an mm (kernel thread, zombie).
 */
struct mm_struct *np_target_mm(pid_t pid)
{
	struct task_struct *task;
	struct mm_struct *mm;
	int ret;

	if (!pid) {
		mm = get_task_mm(current);
		return mm ?: ERR_PTR(-EINVAL);
	}
	if (pid < 0)
		return ERR_PTR(-ESRCH);

	rcu_read_lock();
	task = get_pid_task(find_vpid(pid), PIDTYPE_PID);
	rcu_read_unlock();
	if (!task)
		return ERR_PTR(-ESRCH);

	ret = np_target_allowed(task);
	if (ret) {
		mm = ERR_PTR(ret);
		goto put_task;
	}
	mm = get_task_mm(task) ?: ERR_PTR(-EINVAL);
put_task:
	put_task_struct(task);
	return mm;
}
