// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: helpers the commands share.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

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
