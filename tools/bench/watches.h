/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench: --watches N, placement watches held open in the benchmark's own
 * process on a buffer of their own, so that the benchmark's calls pay
 * whatever an mm with watches costs (its mmu notifier interval tree) while
 * no watch covers the benchmarked memory.
 */
#ifndef NP_BENCH_WATCHES_H
#define NP_BENCH_WATCHES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "numaplace.h"

/* Pages per watched piece: a small registered buffer. */
#define NP_BENCH_WATCH_PAGES	16
/* --watches takes at most this many (file descriptors, memory). */
#define NP_BENCH_WATCHES_MAX	4096

/* Parse "--watches N" at argv[*i]; 1 if it was that option, -1 if bad. */
static inline int np_bench_watches_arg(int argc, char **argv, int *i, int *n)
{
	char *end;
	long v;

	if (strcmp(argv[*i], "--watches"))
		return 0;
	if (*i + 1 >= argc)
		return -1;
	v = strtol(argv[++*i], &end, 10);
	if (*end || v < 0 || v > NP_BENCH_WATCHES_MAX)
		return -1;
	*n = v;
	return 1;
}

/*
 * Open @n watches, each on its own piece of a new buffer; they stay open
 * until the process exits. 0, or -errno (printed).
 */
static inline int np_bench_watches_open(int n)
{
	size_t psz = sysconf(_SC_PAGESIZE), piece = NP_BENCH_WATCH_PAGES * psz;
	char *buf;
	int i, fd;

	if (!n)
		return 0;
	buf = mmap(NULL, n * piece, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("bench: watches: mmap");
		return -1;
	}
	memset(buf, 1, n * piece);
	for (i = 0; i < n; i++) {
		fd = numaplace_watch_open(0, buf + i * piece, piece, i,
					  NUMAPLACE_WATCH_CLOEXEC, NULL, 0);
		if (fd < 0) {
			fprintf(stderr, "bench: watch %d: %s\n", i, strerror(-fd));
			return fd;
		}
	}
	printf("watches: %d active, %d pages each, on a buffer of their own\n",
	       n, NP_BENCH_WATCH_PAGES);
	return 0;
}

#endif /* NP_BENCH_WATCHES_H */
