// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: when the syscall moves pages faster than the module can.
 *
 * The module's kernel engine (migrate_pages()) and page-table engine flush
 * the TLB once per batch. Its other engines go through migrate_vma_setup(),
 * which flushes once per anon-exclusive page: for an mm live on another
 * CPU, an IPI there per page. Where a CPU that enforces IBT seals the first
 * two engines' internals (6.12 and later, kernel-facts.md §8) only those
 * are left, and under two writer threads numaplace moved pages at 0.27x
 * the speed of move_pages(2), which flushes once per batch since 6.3
 * (Documentation/performance.md, "Where the page-table engine is off").
 * The drop-ins then hand such a call to the syscall, whose answers they
 * give anyway.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib.h"
#include "numaplace.h"

/* The engines that flush once per batch, not per page. */
#define NP_FEAT_FLUSH_BATCHED	(NUMAPLACE_FEAT_MIGRATE_KERNEL | \
				 NUMAPLACE_FEAT_MIGRATE_PT)

/*
 * More than one thread in the caller? /proc/self/task has a link for each
 * thread and two more (proc_task_getattr()); 0 if it cannot be read.
 */
static int np_threads_many(void)
{
	int saved_errno = errno;
	struct stat st;
	int ret;

	ret = !stat("/proc/self/task", &st) && st.st_nlink > 3;
	errno = saved_errno;
	return ret;
}

int np_syscall_flushes_less(int pid, __u64 features)
{
	if (features & NP_FEAT_FLUSH_BATCHED)
		return 0;
	/* Another process: any of its threads may run on another CPU. */
	if (pid && pid != getpid())
		return 1;
	/*
	 * The caller alone runs only here. Another thread counts even while
	 * it sleeps: whether it will run during the call is not known here.
	 */
	return np_threads_many();
}
