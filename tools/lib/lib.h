/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * libnumaplace internals shared by its source files; not installed.
 */
#ifndef NUMAPLACE_LIB_PRIV_H
#define NUMAPLACE_LIB_PRIV_H

/* The library is built with -fvisibility=hidden: this marks its API. */
#define NP_EXPORT __attribute__((visibility("default")))

#endif /* NUMAPLACE_LIB_PRIV_H */
