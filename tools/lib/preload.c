// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace-preload.so: numaplace for programs that were never told
 * about it.
 *
 *   LD_PRELOAD=/usr/lib/libnumaplace-preload.so program ...
 *
 * takes over the three ways a program asks move_pages(2), and the same
 * three for migrate_pages(2):
 *
 *  - move_pages(), libnuma's wrapper declared in <numaif.h> (glibc has
 *    none);
 *  - numa_move_pages(), libnuma's <numa.h> entry point (libnuma calls its
 *    own move_pages() through the PLT; taking both over makes the shim
 *    independent of that detail);
 *  - syscall(SYS_move_pages, ...), glibc's generic syscall() with that
 *    number. Every other number goes straight to glibc's syscall();
 *  - migrate_pages() (<numaif.h>), numa_migrate_pages() (<numa.h>, which
 *    takes struct bitmask and passes numa_num_possible_nodes() + 1 as
 *    maxnode, as libnuma does) and syscall(SYS_migrate_pages, ...).
 *
 * The move_pages entry points become numaplace_move_pages(), the
 * migrate_pages ones numaplace_migrate_pages(), which answer through
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
	NP_PRELOAD_MIGRATE_PAGES,
	NP_PRELOAD_NUMA_MIGRATE_PAGES,
	NP_PRELOAD_SYSCALL_MIGRATE,
	NP_PRELOAD_NR_ENTRIES,
};

static const char *const np_preload_names[NP_PRELOAD_NR_ENTRIES] = {
	[NP_PRELOAD_MOVE_PAGES] = "move_pages",
	[NP_PRELOAD_NUMA_MOVE_PAGES] = "numa_move_pages",
	[NP_PRELOAD_SYSCALL] = "syscall(SYS_move_pages)",
	[NP_PRELOAD_MIGRATE_PAGES] = "migrate_pages",
	[NP_PRELOAD_NUMA_MIGRATE_PAGES] = "numa_migrate_pages",
	[NP_PRELOAD_SYSCALL_MIGRATE] = "syscall(SYS_migrate_pages)",
};

/* Calls routed per entry point (relaxed: statistics only). */
static atomic_ulong np_preload_calls[NP_PRELOAD_NR_ENTRIES];

typedef long (*np_syscall_fn)(long number, ...);

/* glibc's syscall(), found with RTLD_NEXT at the first call. */
static _Atomic(np_syscall_fn) np_real_syscall;

/*
 * Set while this thread is inside numaplace_move_pages() or
 * numaplace_migrate_pages(): the library falls back to
 * syscall(SYS_move_pages) / syscall(SYS_migrate_pages), which must then
 * reach glibc and not come back here.
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

static long np_preload_migrate(enum np_preload_entry entry, int pid,
			       unsigned long maxnode,
			       const unsigned long *old_nodes,
			       const unsigned long *new_nodes)
{
	long ret;

	atomic_fetch_add_explicit(&np_preload_calls[entry], 1,
				  memory_order_relaxed);
	np_in_shim++;
	ret = numaplace_migrate_pages(pid, maxnode, old_nodes, new_nodes);
	np_in_shim--;
	return ret;
}

NP_EXPORT long migrate_pages(int pid, unsigned long maxnode,
			     const unsigned long *old_nodes,
			     const unsigned long *new_nodes)
{
	return np_preload_migrate(NP_PRELOAD_MIGRATE_PAGES, pid, maxnode,
				  old_nodes, new_nodes);
}

/* libnuma's struct bitmask, <numa.h>: the shim does not need libnuma. */
struct bitmask {
	unsigned long size;	/* bits */
	unsigned long *maskp;
};

typedef int (*np_possible_nodes_fn)(void);

/*
 * libnuma's numa_migrate_pages() is migrate_pages(pid,
 * numa_num_possible_nodes() + 1, from->maskp, to->maskp); a program that
 * calls it has libnuma loaded, whose numa_num_possible_nodes() is asked
 * the same. Without it (a program with its own numa_migrate_pages()?),
 * the bitmask's size stands in for it.
 */
NP_EXPORT int numa_migrate_pages(int pid, struct bitmask *from,
				 struct bitmask *to)
{
	np_possible_nodes_fn nodes;
	unsigned long maxnode;

	nodes = (np_possible_nodes_fn)dlsym(RTLD_DEFAULT,
					    "numa_num_possible_nodes");
	maxnode = (nodes ? (unsigned long)nodes() : from->size) + 1;
	return np_preload_migrate(NP_PRELOAD_NUMA_MIGRATE_PAGES, pid, maxnode,
				  from->maskp, to->maskp);
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
	if (number == SYS_migrate_pages && !np_in_shim)
		return np_preload_migrate(NP_PRELOAD_SYSCALL_MIGRATE, (int)a[0],
					  (unsigned long)a[1],
					  (const unsigned long *)a[2],
					  (const unsigned long *)a[3]);
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
