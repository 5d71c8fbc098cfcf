// SPDX-License-Identifier: GPL-2.0
/*
 * kvquery: a program that knows nothing of numaplace. It does what a
 * KV-cache or RDMA store does to learn where its buffer lives: one
 * libnuma numa_move_pages() call with a NULL node list and one entry per
 * 4 KiB page. It is built against libnuma only (and the benches'
 * bench.c, which calls nothing of numaplace); bench/preload runs it with
 * and without LD_PRELOAD=libnumaplace-preload.so.
 *
 *   kvquery [-s MIB] [-r ROUNDS] [-b PAGES]
 *
 * The buffer is interleaved over the nodes with memory (libnuma's
 * numa_interleave_memory()) and kept at 4 KiB pages (MADV_NOHUGEPAGE). The best of ROUNDS calls is
 * printed as one line of key=value pairs, with a hash of status[] so that
 * runs can be compared:
 *
 *   kvquery: pages=65536 calls=1 best_ns=... ns_per_page=... nodes=0:32768,1:32768 status_hash=0x...
 */
#include <errno.h>
#include <inttypes.h>
#include <numa.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"

/* The size of a pinned KV-cache / RDMA buffer. */
#define KVQ_DEFAULT_MIB		256
/* Calls timed: the best one is reported (TCG timings are noisy). */
#define KVQ_DEFAULT_ROUNDS	3
/* Nodes counted in the nodes= field. */
#define KVQ_MAX_NODES		64
/*
 * Where the buffer is asked to go (a hint, 2 MiB aligned): interleaving
 * follows the page's address, so a fixed address gives every run the
 * same placement, with or without a preloaded library shifting the
 * layout.
 */
#define KVQ_ADDR_HINT		((void *)0x200000000000UL)

#define KVQ_USAGE	"usage: kvquery [-s MIB] [-r ROUNDS] [-b PAGES]"

int main(int argc, char **argv)
{
	unsigned long mib = KVQ_DEFAULT_MIB, rounds = KVQ_DEFAULT_ROUNDS;
	unsigned long batch = 0, nr_pages, i, per_node[KVQ_MAX_NODES] = { 0 };
	uint64_t best = UINT64_MAX, hash = 1469598103934665603ULL, t0, t;
	const struct np_bench_opt opts[] = {
		{ 's', .num = &mib },
		{ 'r', .num = &rounds },
		{ 'b', .num = &batch },
	};
	long psz = sysconf(_SC_PAGESIZE);
	int *status, len = 0;
	unsigned long calls = 0;
	char nodes[512] = "";
	void **pages;
	size_t size;
	char *buf;

	if (np_bench_getopt(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
			    KVQ_USAGE))
		return 2;
	if (!mib || !rounds) {
		fprintf(stderr, "%s\n", KVQ_USAGE);
		return 2;
	}
	if (numa_available() < 0) {
		fprintf(stderr, "kvquery: no NUMA support\n");
		return 1;
	}
	size = mib << 20;
	nr_pages = size / psz;
	if (!batch || batch > nr_pages)
		batch = nr_pages;

	buf = mmap(KVQ_ADDR_HINT, size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pages = calloc(nr_pages, sizeof(*pages));
	status = calloc(nr_pages, sizeof(*status));
	if (buf == MAP_FAILED || !pages || !status) {
		fprintf(stderr, "kvquery: out of memory\n");
		return 1;
	}
	madvise(buf, size, MADV_NOHUGEPAGE);
	numa_interleave_memory(buf, size, numa_all_nodes_ptr);
	memset(buf, 0x6b, size);
	for (i = 0; i < nr_pages; i++)
		pages[i] = buf + i * psz;

	for (unsigned long r = 0; r < rounds; r++) {
		t0 = np_bench_now_ns();
		for (i = 0; i < nr_pages; i += batch) {
			unsigned long n = nr_pages - i < batch ?
					  nr_pages - i : batch;

			if (numa_move_pages(0, n, pages + i, NULL, status + i,
					    0)) {
				fprintf(stderr, "kvquery: numa_move_pages: %s\n",
					strerror(errno));
				return 1;
			}
			if (!r)
				calls++;
		}
		t = np_bench_now_ns() - t0;
		if (t < best)
			best = t;
	}

	/* FNV-1a over status[]: equal answers give equal hashes. */
	for (i = 0; i < nr_pages; i++) {
		const unsigned char *b = (const unsigned char *)&status[i];

		for (size_t k = 0; k < sizeof(status[i]); k++)
			hash = (hash ^ b[k]) * 1099511628211ULL;
		if (status[i] >= 0 && status[i] < KVQ_MAX_NODES)
			per_node[status[i]]++;
	}
	for (i = 0; i < KVQ_MAX_NODES; i++)
		if (per_node[i] && len < (int)sizeof(nodes) - 32)
			len += snprintf(nodes + len, sizeof(nodes) - len,
					"%s%lu:%lu", len ? "," : "", i,
					per_node[i]);
	printf("kvquery: pages=%lu calls=%lu best_ns=%" PRIu64
	       " ns_per_page=%.1f nodes=%s status_hash=%#" PRIx64 "\n",
	       nr_pages, calls, best, (double)best / nr_pages,
	       len ? nodes : "none", hash);
	munmap(buf, size);
	free(pages);
	free(status);
	return 0;
}
