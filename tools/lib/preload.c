// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace-preload.so: numaplace for programs that were never told
 * about it.
 *
 *   LD_PRELOAD=/usr/lib/libnumaplace-preload.so program ...
 *
 * takes over the three ways a program asks move_pages(2):
 *
 *  - move_pages(), libnuma's wrapper declared in <numaif.h> (glibc has
 *    none);
 *  - numa_move_pages(), libnuma's <numa.h> entry point (libnuma calls its
 *    own move_pages() through the PLT; taking both over makes the shim
 *    independent of that detail);
 *  - syscall(SYS_move_pages, ...), glibc's generic syscall() with that
 *    number. Every other number goes straight to glibc's syscall().
 *
 * Each one becomes numaplace_move_pages(), which answers through
 * /dev/numaplace when the module is loaded and can answer, and calls the
 * real syscall otherwise: the return value, errno and every status[]
 * entry are the syscall's (Documentation/abi.md lists the one deliberate
 * difference of the move path). Not covered: a program that issues the
 * system call instruction itself (inline assembly, Go's runtime, a
 * statically linked binary), and a call through syscall() from inside
 * glibc.
 *
 * The library's own objects are linked in (its API is not exported from
 * here): the shim is the only file a host needs besides the module.
 *
 * NUMAPLACE_PRELOAD_STATS=1 in the environment prints, at exit, how many
 * calls each entry point routed, on standard error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"
#include "numaplace.h"

/* The entry points the shim takes over, for the exit statistics. */
enum np_preload_entry {
	NP_PRELOAD_MOVE_PAGES,
	NP_PRELOAD_NUMA_MOVE_PAGES,
	NP_PRELOAD_SYSCALL,
	NP_PRELOAD_NR_ENTRIES,
};

static const char *const np_preload_names[NP_PRELOAD_NR_ENTRIES] = {
	[NP_PRELOAD_MOVE_PAGES] = "move_pages",
	[NP_PRELOAD_NUMA_MOVE_PAGES] = "numa_move_pages",
	[NP_PRELOAD_SYSCALL] = "syscall(SYS_move_pages)",
};

/* Calls routed per entry point (relaxed: statistics only). */
static atomic_ulong np_preload_calls[NP_PRELOAD_NR_ENTRIES];

typedef long (*np_syscall_fn)(long number, ...);

/* glibc's syscall(), found with RTLD_NEXT at the first call. */
static _Atomic(np_syscall_fn) np_real_syscall;

/*
 * Set while this thread is inside numaplace_move_pages(): the library
 * falls back to syscall(SYS_move_pages), which must then reach glibc and
 * not come back here.
 */
static __thread int np_in_shim;

static np_syscall_fn np_syscall_next(void)
{
	np_syscall_fn fn = atomic_load_explicit(&np_real_syscall,
						memory_order_acquire);

	if (!fn) {
		fn = (np_syscall_fn)dlsym(RTLD_NEXT, "syscall");
		if (!fn)
			abort();	/* no libc behind us: nothing can work */
		atomic_store_explicit(&np_real_syscall, fn,
				      memory_order_release);
	}
	return fn;
}

static long np_preload_route(enum np_preload_entry entry, int pid,
			     unsigned long count, void **pages,
			     const int *nodes, int *status, int flags)
{
	long ret;

	atomic_fetch_add_explicit(&np_preload_calls[entry], 1,
				  memory_order_relaxed);
	np_in_shim++;
	ret = numaplace_move_pages(pid, count, pages, nodes, status, flags);
	np_in_shim--;
	return ret;
}

NP_EXPORT long move_pages(int pid, unsigned long count, void **pages,
			  const int *nodes, int *status, int flags)
{
	return np_preload_route(NP_PRELOAD_MOVE_PAGES, pid, count, pages,
				nodes, status, flags);
}

/* libnuma's numa_move_pages() returns its move_pages() as an int. */
NP_EXPORT int numa_move_pages(int pid, unsigned long count, void **pages,
			      const int *nodes, int *status, int flags)
{
	return np_preload_route(NP_PRELOAD_NUMA_MOVE_PAGES, pid, count, pages,
				nodes, status, flags);
}

/*
 * glibc's syscall() reads six arguments whatever the number (x86-64:
 * registers and one stack slot), and so does this: forwarding them all
 * is what glibc would have done with them.
 */
NP_EXPORT long syscall(long number, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	if (number == SYS_move_pages && !np_in_shim)
		return np_preload_route(NP_PRELOAD_SYSCALL, (int)a[0],
					(unsigned long)a[1], (void **)a[2],
					(const int *)a[3], (int *)a[4],
					(int)a[5]);
	return np_syscall_next()(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

__attribute__((destructor)) static void np_preload_report(void)
{
	const char *env = getenv("NUMAPLACE_PRELOAD_STATS");
	int saved_errno = errno, i;

	if (!env || !*env || *env == '0')
		return;
	dprintf(STDERR_FILENO, "numaplace-preload: module %s;",
		numaplace_available() ? "present" : "absent");
	for (i = 0; i < NP_PRELOAD_NR_ENTRIES; i++)
		dprintf(STDERR_FILENO, " %s %lu%s", np_preload_names[i],
			atomic_load_explicit(&np_preload_calls[i],
					     memory_order_relaxed),
			i + 1 < NP_PRELOAD_NR_ENTRIES ? "," : "\n");
	errno = saved_errno;
}
