// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: the device handle and the handshake.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib.h"
#include "numaplace.h"

static pthread_once_t np_once = PTHREAD_ONCE_INIT;
static int np_dev_fd = -ENOENT;

static void np_open_once(void)
{
	int fd = open(NUMAPLACE_DEVICE, O_RDWR | O_CLOEXEC);

	np_dev_fd = fd < 0 ? -errno : fd;
}

NP_EXPORT int numaplace_fd(void)
{
	pthread_once(&np_once, np_open_once);
	return np_dev_fd;
}

NP_EXPORT int numaplace_ioctl(unsigned long cmd, void *arg)
{
	int fd = numaplace_fd();

	if (fd < 0)
		return fd;
	while (ioctl(fd, cmd, arg) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

NP_EXPORT int numaplace_info(struct numaplace_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return numaplace_ioctl(NUMAPLACE_IOC_INFO, info);
}

NP_EXPORT int numaplace_supports(const struct numaplace_info *info,
				 __u64 cmds, __u64 features)
{
	/* A module writes back at least the first published struct. */
	return info->size >= NUMAPLACE_INFO_SIZE_VER0 &&
	       (info->ioctls & cmds) == cmds &&
	       (info->features & features) == features;
}

NP_EXPORT int numaplace_available(void)
{
	struct numaplace_info info;

	return numaplace_info(&info) == 0 &&
	       numaplace_supports(&info, 1ULL << NUMAPLACE_CMD_INFO, 0);
}
