// SPDX-License-Identifier: GPL-2.0
/*
 * bench: what the benchmarks that call libnumaplace share (not kvquery,
 * which knows nothing of numaplace): what the module offers here, and
 * whether the nodes a benchmark moves between have memory.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "numaplace.h"

uint64_t np_bench_probe(struct numaplace_info *info, unsigned int cmd,
			uint64_t features, const char *what, const char *rows,
			int *err)
{
	uint64_t have = 0;

	*err = numaplace_info(info);	/* zeroes @info first */
	if (!*err && numaplace_supports(info, 1ULL << cmd, 0))
		have = info->features & features;
	if (*err)
		printf("numaplace: %s: %s: only %s\n", NUMAPLACE_DEVICE,
		       strerror(-*err), rows);
	else if (!have)
		printf("numaplace: the module %s on this kernel: only %s\n",
		       what, rows);
	return have;
}

int np_bench_nodes_missing(const struct numaplace_info *info, int src,
			   int dst, const char *name)
{
	if (info->nr_node_ids > (unsigned int)dst &&
	    numaplace_node_isset(info->node_memory, src) &&
	    numaplace_node_isset(info->node_memory, dst))
		return 0;
	printf("%s: nodes %d and %d need memory\n", name, src, dst);
	return 1;
}

void np_bench_engines(unsigned int engines, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < 32 && off < len; i++)
		if ((engines & 1U << i) && numaplace_engine_name(1U << i))
			off += snprintf(buf + off, len - off, "%s%s",
					off ? "+" : "",
					numaplace_engine_name(1U << i));
	if (!off)
		snprintf(buf, len, "-");
}
