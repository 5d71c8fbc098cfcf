// SPDX-License-Identifier: GPL-2.0
/*
 * np-workload: a process with memory on every node with memory, for the
 * demo: a THP buffer and a 4 KiB buffer, populated, then their pages spread
 * round-robin over the nodes with move_pages(2) (one call, as a tiering
 * daemon would). Prints its pid and waits until killed.
 *
 *   np-workload [MiB per buffer]
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NP_THP_SIZE (2UL << 20)

static char *np_buffer(size_t len, int advice)
{
	char *p = mmap(NULL, len + NP_THP_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	p = (char *)(((unsigned long)p + NP_THP_SIZE - 1) & ~(NP_THP_SIZE - 1));
	madvise(p, len, advice);
	memset(p, 0x5a, len);
	return p;
}

/*
 * Spread the buffer over the nodes with memory, @block bytes to a node in
 * turn, naming every @step bytes (a THP moves whole from one address).
 */
static int np_spread(char *p, size_t len, size_t block, size_t step,
		     const int *nodes, int nr_nodes)
{
	unsigned long count = len / step, i;
	void **pages = calloc(count, sizeof(*pages));
	int *targets = calloc(count, sizeof(*targets));
	int *status = calloc(count, sizeof(*status));
	long ret;

	if (!pages || !targets || !status)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		pages[i] = p + i * step;
		targets[i] = nodes[(i * step / block) % nr_nodes];
	}
	ret = syscall(SYS_move_pages, 0, count, pages, targets, status,
		      MPOL_MF_MOVE);
	free(pages);
	free(targets);
	free(status);
	return ret < 0 ? -errno : 0;
}

/* The nodes with memory, from sysfs ("0-1,3"). */
static int np_memory_nodes(int *nodes, int max)
{
	FILE *f = fopen("/sys/devices/system/node/has_memory", "r");
	int nr = 0, lo, hi;
	char sep;

	if (!f)
		return 0;
	while (nr < max && fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		sep = fgetc(f);
		if (sep == '-' && fscanf(f, "%d", &hi) == 1)
			sep = fgetc(f);
		while (lo <= hi && nr < max)
			nodes[nr++] = lo++;
		if (sep != ',')
			break;
	}
	fclose(f);
	return nr;
}

int main(int argc, char **argv)
{
	size_t len = (argc > 1 ? strtoul(argv[1], NULL, 0) : 64) << 20;
	int nodes[64], nr_nodes = np_memory_nodes(nodes, 64);
	char *thp, *small;
	thp = np_buffer(len, MADV_HUGEPAGE);
	small = np_buffer(len, MADV_NOHUGEPAGE);
	if (!thp || !small) {
		perror("np-workload: mmap");
		return 1;
	}
	if (nr_nodes > 1 &&
	    (np_spread(thp, len, NP_THP_SIZE, NP_THP_SIZE, nodes, nr_nodes) ||
	     np_spread(small, len, 1UL << 20, 4096, nodes, nr_nodes)))
		fprintf(stderr, "np-workload: move_pages: some pages stayed\n");
	printf("%d %p %p\n", getpid(), (void *)thp, (void *)small);
	fflush(stdout);
	pause();
	return 0;
}
