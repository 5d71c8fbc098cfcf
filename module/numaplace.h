/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: internal declarations shared by the module's files.
 */
#ifndef _NUMAPLACE_INTERNAL_H
#define _NUMAPLACE_INTERNAL_H

#include <linux/types.h>
#include <linux/numaplace.h>

#define NP_NAME "numaplace"

/**
 * struct np_ioctl_op - one row of the ioctl table (module/dev.c)
 * @cmd: the full ioctl number
 * @handler: does the work on a kernel copy of the struct; returns 0 or
 *	-errno; on 0 the struct is copied back to the caller
 * @size: sizeof() the struct as this module knows it
 * @min_size: the first published size (*_SIZE_VER0): shorter is -EINVAL
 * @valid_flags: the flags the command knows: others are -EINVAL
 */
struct np_ioctl_op {
	unsigned int cmd;
	int (*handler)(void *arg);
	size_t size;
	size_t min_size;
	u32 valid_flags;
};

/* module/info.c */
int np_info(void *arg);
u64 np_features(void);

/* module/dev.c */
int np_dev_init(void);
void np_dev_exit(void);
u64 np_ioctl_mask(void);

#endif /* _NUMAPLACE_INTERNAL_H */
