// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: pid -> mm with move_pages(2)'s permission checks, in the
 * kernel's order (find_mm_struct()): pid, ptrace READ_REALCREDS check with
 * the caller's credentials now, the LSM movememory hook, then the mm.
 */
#include <linux/cpuset.h>
#include <linux/cred.h>
#include <linux/nodemask.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/security.h>

#include "numaplace.h"
#include "ksyms.h"
#include "compat.h"

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

/*
 * Who owns the task's /proc/PID files: task_dump_owner() (fs/proc/base.c,
 * unexported), for a regular file: the euid and egid, or the mm's user
 * namespace's root when the mm is not dumpable by its user (setuid,
 * PR_SET_DUMPABLE 0).
 */
static void np_target_proc_owner(struct task_struct *task, kuid_t *uid,
				 kgid_t *gid)
{
	const struct cred *cred;
	struct user_namespace *ns;

	rcu_read_lock();
	cred = __task_cred(task);
	*uid = cred->euid;
	*gid = cred->egid;
	ns = np_task_proc_root_ns(task);
	if (ns) {
		*uid = make_kuid(ns, 0);
		*gid = make_kgid(ns, 0);
		if (!uid_valid(*uid))
			*uid = GLOBAL_ROOT_UID;
		if (!gid_valid(*gid))
			*gid = GLOBAL_ROOT_GID;
	}
	rcu_read_unlock();
}

/*
 * What opening the task's /proc/PID/pagemap (mode 0400) for reading, and
 * with @clear also its clear_refs (mode 0200) for writing, asks of the
 * caller: mm_access(PTRACE_MODE_READ_FSCREDS) (proc_mem_open(), pagemap
 * only: clear_refs asks nothing more of the task, so asking it of both is
 * stricter), then generic_permission() on a file only its owner may open:
 * the owner, or CAP_DAC_READ_SEARCH (read) or CAP_DAC_OVERRIDE (read and
 * write) over a uid and gid mapped into the caller's namespace.
 */
static int np_target_proc_allowed(struct task_struct *task, bool clear)
{
	struct user_namespace *ns = current_user_ns();
	kuid_t uid;
	kgid_t gid;

	if (task != current) {
		if (!np_ksyms.ptrace_may_access)
			return same_thread_group(task, current) ? 0 : -EACCES;
		if (!np_ksyms.ptrace_may_access(task, PTRACE_MODE_READ_FSCREDS))
			return -EACCES;
	}
	np_target_proc_owner(task, &uid, &gid);
	if (uid_eq(current_fsuid(), uid))
		return 0;
	if (!kuid_has_mapping(ns, uid) || !kgid_has_mapping(ns, gid))
		return -EACCES;
	if (ns_capable(ns, CAP_DAC_OVERRIDE))
		return 0;
	if (!clear && ns_capable(ns, CAP_DAC_READ_SEARCH))
		return 0;
	return -EACCES;
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
	return np_target_get_proc(pid, NP_TARGET_MOVE, t);
}

/**
 * np_target_get_proc - np_target_get(), and for @need other than
 * NP_TARGET_MOVE what the /proc files it stands for ask
 * @pid: a pid in the caller's pid namespace, or 0
 * @need: NP_TARGET_MOVE, NP_TARGET_PAGEMAP (read the young bits: what
 *	reading /proc/PID/pagemap needs) or NP_TARGET_CLEAR_REFS (clear
 *	them: that and what writing /proc/PID/clear_refs needs)
 * @t: out, as np_target_get()
 *
 * Return: as np_target_get(), or -EACCES when the /proc file's check
 * refuses (the caller itself too: a non-dumpable process's files are
 * root's).
 */
int np_target_get_proc(pid_t pid, enum np_target_need need,
		       struct np_target *t)
{
	struct rw_semaphore *exec_lock = NULL;
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
	}
	/*
	 * The /proc checks, as mm_access() makes them: with the task's
	 * exec_update_lock held from the check until the mm is taken, so
	 * that an execve() of a setuid program in between cannot hand over
	 * the new, privileged mm. (move_pages(2) itself takes no such lock.)
	 */
	if (need != NP_TARGET_MOVE) {
		exec_lock = &task->signal->exec_update_lock;
		ret = down_read_killable(exec_lock);
		if (ret)
			goto put_task;
	}
	if (pid) {
		ret = np_target_allowed(task);
		if (ret)
			goto unlock_exec;
	}
	if (need != NP_TARGET_MOVE) {
		ret = np_target_proc_allowed(task, need == NP_TARGET_CLEAR_REFS);
		if (ret)
			goto unlock_exec;
	}
	np_target_mems(task, &t->mems);
	t->mm = get_task_mm(task);
	ret = t->mm ? 0 : -EINVAL;
unlock_exec:
	if (exec_lock)
		up_read(exec_lock);
put_task:
	put_task_struct(task);
	return ret;
}

void np_target_put(struct np_target *t)
{
	mmput(t->mm);
}

/* The mm of @pid for a query: np_target_get_proc() without the mems. */
struct mm_struct *np_target_mm(pid_t pid, enum np_target_need need)
{
	struct np_target t;
	int ret = np_target_get_proc(pid, need, &t);

	return ret ? ERR_PTR(ret) : t.mm;
}
