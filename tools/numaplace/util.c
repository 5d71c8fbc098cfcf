// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: helpers the commands share (cli.h): the errno-to-exit
 * mapping, number and range parsing, the INFO handshake, /proc/PID/maps,
 * clocks and signals.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int np_exit_of(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return NP_EXIT_OK;
	case ESRCH:
		return NP_EXIT_NOPROC;
	case EPERM:
	case EACCES:
		return NP_EXIT_PERM;
	case ENOENT:		/* no device, or no netlink family */
	case ENOTTY:		/* an ioctl the module does not have */
	case EOPNOTSUPP:	/* a feature this kernel does not allow */
		return NP_EXIT_NODEV;
	}
	return NP_EXIT_FAIL;
}

static int np_parse_hex(const char *s, char **end, unsigned long long *val)
{
	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*val = strtoull(s, end, 16);
	return errno ? -errno : 0;
}

/*
 * START-END or START+LEN, hex (as /proc/PID/maps), widened to whole pages.
 * An end in the top page (as in 0-ffffffffffffffff) stops below it.
 * 0, -EINVAL for a malformed range, -ERANGE for an empty or wrapping one.
 */
int np_parse_range(const char *s, unsigned long long *start,
		   unsigned long long *end)
{
	unsigned long long a, b, mask = sysconf(_SC_PAGESIZE) - 1;
	char *p, sep;

	if (np_parse_hex(s, &p, &a) || (*p != '-' && *p != '+'))
		return -EINVAL;
	sep = *p;
	if (np_parse_hex(p + 1, &p, &b) || *p)
		return -EINVAL;
	if (sep == '+') {
		if (b > ~0ULL - a)
			return -ERANGE;
		b += a;
	}
	if (b <= a)
		return -ERANGE;
	*start = a & ~mask;
	*end = b > (~0ULL & ~mask) ? ~0ULL & ~mask : (b + mask) & ~mask;
	return *end <= *start ? -ERANGE : 0;
}

int np_parse_uint(const char *s, char **end, unsigned long max,
		  unsigned long *val)
{
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*val = strtoul(s, end, 10);
	if (errno || *val > max)
		return -ERANGE;
	return 0;
}

int np_parse_pid(const char *s, int *pid)
{
	unsigned long v;
	char *end;

	if (np_parse_uint(s, &end, 0x7fffffff, &v) || *end || !v)
		return -EINVAL;
	*pid = v;
	return 0;
}

int np_handshake(const char *who, struct numaplace_info *info,
		 unsigned long long cmd_bit, unsigned long long features,
		 const char *what)
{
	int ret = numaplace_info(info);

	if (ret) {
		fprintf(stderr, "%s: %s: %s\n", who, NUMAPLACE_DEVICE,
			strerror(-ret));
		return NP_EXIT_NODEV;
	}
	if (!cmd_bit)
		return NP_EXIT_OK;
	if (!numaplace_supports(info, cmd_bit, 0) ||
	    (features && !(info->features & features))) {
		fprintf(stderr, "%s: the module (ABI %u) cannot %s on this kernel\n",
			who, info->abi_version, what);
		return NP_EXIT_NODEV;
	}
	if (!info->page_size || (info->page_size & (info->page_size - 1))) {
		fprintf(stderr, "%s: bad page size %u from the module\n", who,
			info->page_size);
		return NP_EXIT_NODEV;
	}
	return NP_EXIT_OK;
}

int np_read_maps(const char *who, int pid, np_maps_cb cb, void *data)
{
	unsigned long long start, end;
	char path[64], perms[8], *line = NULL;
	size_t line_cap = 0;
	int ret = 0, n;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	f = fopen(path, "re");
	if (!f)	/* the process is gone or never was: say so, as the ioctl */
		return errno == ENOENT ? -ESRCH : -errno;
	while (!ret && getline(&line, &line_cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		n = 0;
		if (sscanf(line, "%llx-%llx %7s %*x %*x:%*x %*u %n", &start,
			   &end, perms, &n) < 3 || !n) {
			fprintf(stderr, "%s: %s: cannot parse '%s'\n", who, path,
				line);
			ret = -EIO;
			break;
		}
		ret = cb(data, start, end, perms, line + n);
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(line);
	fclose(f);
	return ret;
}

double np_clock(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

volatile sig_atomic_t np_stop;

static void np_on_signal(int sig)
{
	np_stop = 1;
}

/*
 * SIGINT and SIGTERM set np_stop instead of killing the command; a blocked
 * call returns EINTR (no SA_RESTART), so loops see it at once.
 */
void np_stop_on_signals(void)
{
	struct sigaction sa = { .sa_handler = np_on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}
