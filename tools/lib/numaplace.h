/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * libnumaplace: user-space access to /dev/numaplace.
 *
 * Every function returns 0 (or a count) on success and -errno on failure,
 * unless it documents the syscall convention (-1 and errno) instead.
 */
#ifndef NUMAPLACE_LIB_H
#define NUMAPLACE_LIB_H

#include <linux/numaplace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The module's device, opened once per process (O_CLOEXEC); -errno if
 * missing.
 */
int numaplace_fd(void);

/* 1 when /dev/numaplace answers INFO with a compatible ABI, else 0. */
int numaplace_available(void);

/* Fill @info by the handshake ioctl. 0 or -errno. */
int numaplace_info(struct numaplace_info *info);

/* Issue one numaplace ioctl, retrying EINTR; 0 or -errno. */
int numaplace_ioctl(unsigned long cmd, void *arg);

/* 1 if bit @node is set in a numaplace node mask. */
static inline int numaplace_node_isset(const __u64 *mask, unsigned int node)
{
	return node < NUMAPLACE_MAX_NODES &&
	       (mask[node / 64] >> (node % 64)) & 1;
}

#ifdef __cplusplus
}
#endif
#endif /* NUMAPLACE_LIB_H */
