// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: helpers the commands share (cli.h): the errno-to-exit
 * mapping, number and range parsing, the INFO handshake, /proc/PID/maps,
 * growing arrays, masks as names, clocks and signals.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
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

int np_parse_whole_uint(const char *s, unsigned long max, unsigned long *val)
{
	char *end;
	int ret = np_parse_uint(s, &end, max, val);

	return ret ? ret : *end ? -EINVAL : 0;
}

int np_parse_pid(const char *s, int *pid)
{
	unsigned long v;

	if (np_parse_whole_uint(s, 0x7fffffff, &v) || !v)
		return -EINVAL;
	*pid = v;
	return 0;
}

int np_parse_node_list(const char *s, unsigned int nr, __u64 *mask)
{
	unsigned long lo, hi, n;
	char *end;
	int any = 0;

	memset(mask, 0, (nr + 63) / 64 * sizeof(*mask));
	while (*s) {
		if (np_parse_uint(s, &end, nr - 1, &lo))
			return -EINVAL;
		hi = lo;
		if (*end == '-' && np_parse_uint(end + 1, &end, nr - 1, &hi))
			return -EINVAL;
		if (hi < lo || (*end && *end != ','))
			return -EINVAL;
		for (n = lo; n <= hi; n++)
			mask[n / 64] |= 1ULL << (n % 64);
		any = 1;
		s = *end ? end + 1 : end;
		if (*end && !*s)
			return -EINVAL;	/* a trailing comma */
	}
	return any ? 0 : -EINVAL;
}

int np_range_arg(const struct np_cmd_desc *desc, const char *s,
		 struct np_range *r)
{
	if (np_parse_range(s, &r->start, &r->end)) {
		fprintf(stderr, "numaplace %s: bad range '%s': want START-END or START+LEN in hex\n",
			desc->name, s);
		return NP_EXIT_USAGE;
	}
	r->set = 1;
	return NP_EXIT_OK;
}

int np_range_operand(const struct np_cmd_desc *desc, int argc, char **argv,
		     int all, struct np_range *r)
{
	if (optind < argc - 1 || (optind < argc && all))
		return np_usage_error(desc, "give one RANGE or --all");
	return optind < argc ? np_range_arg(desc, argv[optind], r) : NP_EXIT_OK;
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

/* np_read_range_maps(): the range, the caller's callback, the cursor. */
struct np_range_walk {
	const struct np_range *r;
	np_maps_cb cb;
	void *data;
	unsigned long long cursor;	/* where the VMAs seen so far end */
};

static int np_range_vma(void *data, unsigned long long start,
			unsigned long long end, const char *perms,
			const char *name)
{
	struct np_range_walk *w = data;
	int ret;

	if (w->r->set) {
		if (end <= w->r->start || start >= w->r->end)
			return 0;
		if (start < w->r->start)
			start = w->r->start;
		if (end > w->r->end)
			end = w->r->end;
		if (start > w->cursor) {
			ret = w->cb(w->data, w->cursor, start, NULL, NULL);
			if (ret)
				return ret;
		}
	}
	w->cursor = end;
	return w->cb(w->data, start, end, perms, name);
}

int np_read_range_maps(const char *who, int pid, const struct np_range *r,
		       np_maps_cb cb, void *data)
{
	struct np_range_walk w = { r, cb, data, r->start };
	int ret = np_read_maps(who, pid, np_range_vma, &w);

	if (!ret && r->set && w.cursor < r->end)
		ret = cb(data, w.cursor, r->end, NULL, NULL);
	return ret;
}

const struct np_bit_name np_engine_bit_names[NP_NR_ENGINES] = {
	{ NUMAPLACE_ENGINE_KERNEL, "kernel" },
	{ NUMAPLACE_ENGINE_VMA, "vma" },
	{ NUMAPLACE_ENGINE_BATCH, "batch" },
	{ NUMAPLACE_ENGINE_PT, "pt" },
};

const struct np_bits np_engine_bits = {
	np_engine_bit_names, NP_ARRAY_SIZE(np_engine_bit_names), " ", "(none)", 1,
};

const char *np_engine_name(unsigned int e, char *buf, size_t size)
{
	const char *name = e < 32 ? numaplace_engine_name(1U << e) : NULL;

	if (name)
		return name;
	snprintf(buf, size, "engine%u", e);
	return buf;
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
