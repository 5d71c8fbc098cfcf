/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * libnumaplace internals shared by its source files; not installed.
 */
#ifndef NUMAPLACE_LIB_PRIV_H
#define NUMAPLACE_LIB_PRIV_H

#include <linux/types.h>

/* The library is built with -fvisibility=hidden: this marks its API. */
#define NP_EXPORT __attribute__((visibility("default")))

/*
 * 1 when move_pages(2) and migrate_pages(2) move the pages of process
 * @pid (0: the caller) with fewer TLB flushes than a module with INFO's
 * @features can: it has no engine that flushes once per batch, and the
 * mm may be live on another CPU (another process, or a caller with more
 * than one thread). flush.c.
 */
int np_syscall_flushes_less(int pid, __u64 features);

/* INFO's features when the device answers MIGRATE, else 0. query.c. */
__u64 np_lib_migrate_features(void);

/*
 * numaplace_migrate_range()'s request @m (range mode, POLICY_NODE, no
 * engine flag) through move_pages(2), its outputs counted as MIGRATE
 * counts them. 0; -errno after some pages (m->done says how many); 1 when
 * nothing was done and MIGRATE must answer instead (a QUERY the module
 * refuses, a range it would refuse, a call the syscall refused).
 * migrate_syscall.c.
 */
struct numaplace_migrate;
int np_migrate_range_syscall(struct numaplace_migrate *m);

#endif /* NUMAPLACE_LIB_PRIV_H */
