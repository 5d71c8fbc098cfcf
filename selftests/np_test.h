/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by numaplace's selftests (kselftest harness).
 */
#ifndef NP_TEST_H
#define NP_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/numaplace.h>

/* One wrapper for every ioctl: retries EINTR, returns 0 or -errno. */
static inline int np_ioctl(int fd, unsigned long cmd, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, cmd, arg);
	} while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/* Open the device, or -errno. */
static inline int np_open(void)
{
	int fd = open(NUMAPLACE_DEVICE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * Parse a sysfs node list ("0-1,3") into a NUMAPLACE_NODE_WORDS bitmap;
 * returns the highest node + 1 or -errno.
 */
static inline int np_read_nodelist(const char *path, __u64 *mask)
{
	char buf[4096], *p, *end;
	unsigned long lo, hi, n;
	int fd, len, top = 0;

	memset(mask, 0, NUMAPLACE_NODE_WORDS * sizeof(__u64));
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = 0;
	for (p = buf; *p && *p != '\n';) {
		lo = strtoul(p, &end, 10);
		if (end == p)
			return -EINVAL;
		hi = lo;
		if (*end == '-')
			hi = strtoul(end + 1, &end, 10);
		if (hi >= NUMAPLACE_MAX_NODES || lo > hi)
			return -ERANGE;
		for (n = lo; n <= hi; n++)
			mask[n / 64] |= 1ULL << (n % 64);
		if ((int)hi + 1 > top)
			top = hi + 1;
		p = *end == ',' ? end + 1 : end;
	}
	return top;
}

#endif /* NP_TEST_H */
