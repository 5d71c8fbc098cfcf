// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace: placement watches (NUMAPLACE_IOC_WATCH) and their records.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib.h"
#include "numaplace.h"

NP_EXPORT int numaplace_watch_open(int pid, const void *start, size_t len,
				   __u64 cookie, unsigned int flags,
				   __u64 *node_pages, size_t nr_nodes)
{
	struct numaplace_watch w;
	int dev = numaplace_fd(), fd;

	if (dev < 0)
		return dev;
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.flags = flags;
	w.pid = pid;
	w.start = (uintptr_t)start;
	w.len = len;
	w.cookie = cookie;
	if (node_pages && nr_nodes) {
		if (nr_nodes > NUMAPLACE_MAX_NODES)
			nr_nodes = NUMAPLACE_MAX_NODES;
		w.node_pages_ptr = (uintptr_t)node_pages;
		w.node_pages_len = nr_nodes;
	}
	do {
		fd = ioctl(dev, NUMAPLACE_IOC_WATCH, &w);
	} while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

NP_EXPORT ssize_t numaplace_watch_read(int fd,
				       struct numaplace_watch_record *recs,
				       size_t max)
{
	ssize_t n;

	if (!max)
		return -EINVAL;
	do {
		n = read(fd, recs, max * sizeof(*recs));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n % sizeof(*recs))
		return -EPROTO;		/* a record size this library does not know */
	return n / sizeof(*recs);
}

NP_EXPORT int numaplace_watch_wait(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	n = poll(&p, 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) ? 1 : 0;
}

NP_EXPORT int numaplace_watch_close(int fd)
{
	return close(fd) ? -errno : 0;
}
