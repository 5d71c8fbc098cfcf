// SPDX-License-Identifier: GPL-2.0
/*
 * The placement-watch tests' helpers (watch*.c; np_test.h): a watch
 * opened with libnumaplace, its stream of records checked one by one
 * against the totals it started from, and QUERY's totals as the oracle.
 */
#include <poll.h>
#include <sys/mman.h>

#include "numaplace.h"
#include "np_test.h"

int np_wt_open(int pid, const void *start, size_t len, __u64 cookie,
	       __u32 flags, unsigned int nr_nodes, struct np_wt_stream *s)
{
	long psz = sysconf(_SC_PAGESIZE);
	__u64 sum = 0;
	unsigned int n;
	int fd;

	memset(s, 0, sizeof(*s));
	s->cookie = cookie;
	s->nr_nodes = nr_nodes;
	s->nr_pages = (((uintptr_t)start + len + psz - 1) / psz) -
		      (uintptr_t)start / psz;
	fd = numaplace_watch_open(pid, start, len, cookie,
				  flags | NUMAPLACE_WATCH_CLOEXEC, s->totals,
				  nr_nodes);
	if (fd < 0)
		return fd;
	for (n = 0; n < nr_nodes; n++)
		sum += s->totals[n];
	s->totals[nr_nodes] = s->nr_pages - sum;
	return fd;
}

int np_wt_query(int dev, int pid, const void *start, size_t len,
		unsigned int nr_nodes, __u64 *totals)
{
	struct numaplace_query q;
	int ret;

	ret = np_query_range(dev, pid, 0, (uintptr_t)start, len, NULL, 0, NULL,
			     totals, nr_nodes, &q);
	totals[nr_nodes] = q.nr_unplaced;
	return ret;
}

int np_wt_check_rec(struct np_wt_stream *s,
		    const struct numaplace_watch_record *r)
{
	long psz = sysconf(_SC_PAGESIZE);
	__u64 next = s->seq + (r->reason == NUMAPLACE_WATCH_OVERFLOW ?
			       r->nr_changed : 1);
	__u64 sum_b = r->unplaced_before, sum_a = r->unplaced_after;
	unsigned int n;
	int bad = 0;

	if (r->cookie != s->cookie || r->seq != next ||
	    r->nr_nodes != s->nr_nodes || s->gone) {
		fprintf(stderr, "# record: cookie %#llx seq %llu (want %#llx %llu) nodes %u gone %d\n",
			(unsigned long long)r->cookie, (unsigned long long)r->seq,
			(unsigned long long)s->cookie, (unsigned long long)next,
			r->nr_nodes, s->gone);
		bad++;
	}
	for (n = 0; n < s->nr_nodes && n < NUMAPLACE_WATCH_NODES; n++) {
		sum_b += r->before[n];
		sum_a += r->after[n];
		if (r->before[n] != s->totals[n]) {
			fprintf(stderr, "# seq %llu node %u: before %llu, last after %llu\n",
				(unsigned long long)r->seq, n,
				(unsigned long long)r->before[n],
				(unsigned long long)s->totals[n]);
			bad++;
		}
	}
	if (r->unplaced_before != s->totals[s->nr_nodes] ||
	    sum_b != s->nr_pages ||
	    (r->reason != NUMAPLACE_WATCH_GONE && sum_a != s->nr_pages) ||
	    r->start % psz || r->len % psz || !r->len ||
	    (r->reason != NUMAPLACE_WATCH_OVERFLOW &&
	     r->reason != NUMAPLACE_WATCH_GONE &&
	     (!r->nr_changed || r->nr_changed > r->len / psz))) {
		fprintf(stderr, "# seq %llu: reason %u unplaced %llu->%llu sums %llu->%llu of %llu, [%#llx +%#llx) changed %llu\n",
			(unsigned long long)r->seq, r->reason,
			(unsigned long long)r->unplaced_before,
			(unsigned long long)r->unplaced_after,
			(unsigned long long)sum_b, (unsigned long long)sum_a,
			(unsigned long long)s->nr_pages,
			(unsigned long long)r->start, (unsigned long long)r->len,
			(unsigned long long)r->nr_changed);
		bad++;
	}
	s->seq = r->seq;
	memcpy(s->totals, r->after, s->nr_nodes * sizeof(__u64));
	s->totals[s->nr_nodes] = r->unplaced_after;
	s->nr_recs++;
	s->nr_overflow += r->reason == NUMAPLACE_WATCH_OVERFLOW;
	s->gone |= r->reason == NUMAPLACE_WATCH_GONE;
	s->last = *r;
	return bad;
}

int np_wt_at(const struct np_wt_stream *s, const __u64 *want)
{
	return !memcmp(s->totals, want, (s->nr_nodes + 1) * sizeof(__u64));
}

int np_wt_follow(int fd, struct np_wt_stream *s, const __u64 *want, long ms)
{
	struct numaplace_watch_record r[8];
	long end = np_mono_ms() + ms;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int bad = 0, i;
	ssize_t n;

	while (!(want ? np_wt_at(s, want) : s->gone) && !s->eof) {
		long left = end - np_mono_ms();

		if (left <= 0 || poll(&p, 1, left) <= 0)
			break;
		n = read(fd, r, sizeof(r));
		if (n == 0) {
			s->eof = 1;
			break;
		}
		if (n < 0 || n % sizeof(r[0])) {
			fprintf(stderr, "# read: %zd (%s)\n", n, strerror(errno));
			return bad + 1;
		}
		for (i = 0; i < n / (ssize_t)sizeof(r[0]); i++)
			bad += np_wt_check_rec(s, &r[i]);
	}
	return bad;
}

int np_wt_drain(int fd, struct np_wt_stream *s, long quiet_ms)
{
	struct numaplace_watch_record r[8];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int bad = 0, i;
	ssize_t n;

	while (poll(&p, 1, quiet_ms) > 0) {
		n = read(fd, r, sizeof(r));
		if (n <= 0 || n % sizeof(r[0]))
			return bad + (n != 0);
		for (i = 0; i < n / (ssize_t)sizeof(r[0]); i++)
			bad += np_wt_check_rec(s, &r[i]);
	}
	return bad;
}

int np_wt_quiet(int fd, long ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 0;
}

long np_wt_move_pages(char *start, int n, int node)
{
	long psz = sysconf(_SC_PAGESIZE);
	__u64 *pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(*nodes)), *st = calloc(n, sizeof(*st));
	long ret = -ENOMEM;

	if (pages && nodes && st) {
		for (int i = 0; i < n; i++) {
			pages[i] = (uintptr_t)(start + i * psz);
			nodes[i] = node;
		}
		ret = np_sys_move_pages(0, n, pages, nodes, st, NP_MF_MOVE);
	}
	free(pages);
	free(nodes);
	free(st);
	return ret;
}

void np_wt_dump(const char *what, const struct np_wt_stream *s,
		const __u64 *want)
{
	fprintf(stderr, "# %s: %d records, last seq %llu reason %u; totals n0 %llu n1 %llu unplaced %llu, want %llu %llu %llu\n",
		what, s->nr_recs, (unsigned long long)s->seq, s->last.reason,
		(unsigned long long)s->totals[0], (unsigned long long)s->totals[1],
		(unsigned long long)s->totals[s->nr_nodes],
		(unsigned long long)want[0], (unsigned long long)want[1],
		(unsigned long long)want[s->nr_nodes]);
}


int np_wt_setup(struct np_wt_fix *f, size_t pages)
{
	int ret;

	f->buf = MAP_FAILED;
	f->len = pages * sysconf(_SC_PAGESIZE);
	f->fd = np_open();
	if (f->fd < 0)
		return f->fd == -ENOENT ? -ENODEV : f->fd;
	ret = np_get_info(f->fd, &f->info);
	if (ret)
		return ret;
	if (!(f->info.features & NUMAPLACE_FEAT_WATCH))
		return -EOPNOTSUPP;
	if (!np_node_isset(f->info.node_memory, 0) ||
	    !np_node_isset(f->info.node_memory, 1))
		return -EXDEV;
	if (f->info.nr_node_ids > NUMAPLACE_WATCH_NODES)
		return -E2BIG;
	np_write_str("/proc/sys/kernel/numa_balancing", "0");
	f->buf = mmap(NULL, f->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->buf == MAP_FAILED)
		return -errno;
	memset(f->buf, 0x5a, f->len);
	return 0;
}

void np_wt_teardown(struct np_wt_fix *f)
{
	if (f->buf != MAP_FAILED)
		munmap(f->buf, f->len);
	if (f->fd >= 0)
		close(f->fd);
}
