// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * libnumaplace tiering: what sysfs and /proc say of the nodes and of a
 * process. The kernel's memory tiers, each node's memory, the node of
 * each CPU, and a process's allowed nodes and the nodes it runs on.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tier.h"

#define NP_SYS_NODE	"/sys/devices/system/node"
#define NP_SYS_TIERS	"/sys/devices/virtual/memory_tiering"
/* A line of a node list, meminfo or a task's stat: long enough for each. */
#define NP_TIER_LINE	4096
/*
 * Threads whose CPU is read for a process's local nodes: enough to learn
 * which nodes it runs on, and a bounded cost per period for one with
 * thousands of threads.
 */
#define NP_TIER_MAX_THREADS	1024

/*
 * A node list into @mask: with @past (the kernel's lists), nodes past
 * NUMAPLACE_TIER_NODES are left out; without (a caller's), -ERANGE.
 */
static int np_tier_parse_list(const char *s, __u64 *mask, bool past)
{
	unsigned long a, b;
	char *end;

	memset(mask, 0, NP_TIER_WORDS * sizeof(*mask));
	while (*s && *s != '\n') {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		a = strtoul(s, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			b = strtoul(end + 1, &end, 10);
		}
		if (b < a)
			return -EINVAL;
		if (b >= NUMAPLACE_TIER_NODES && !past)
			return -ERANGE;
		for (; a <= b && a < NUMAPLACE_TIER_NODES; a++)
			np_tier_set(mask, a);
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -EINVAL;
		s = end;
	}
	return 0;
}

int np_tier_parse_nodes(const char *s, __u64 *mask)
{
	return np_tier_parse_list(s, mask, false);
}

/* The first line of @path into @buf. 0 or -errno. */
static int np_tier_read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, size, f))
		ret = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	return ret;
}

static int np_tier_read_nodes(const char *path, __u64 *mask)
{
	char line[NP_TIER_LINE];
	int ret = np_tier_read_line(path, line, sizeof(line));

	if (ret == -ENODATA) {		/* an empty list */
		memset(mask, 0, NP_TIER_WORDS * sizeof(*mask));
		return 0;
	}
	return ret ? ret : np_tier_parse_list(line, mask, true);
}

int np_tier_read_tiers(__u64 *fast, __u64 *slow)
{
	char path[512];
	__u64 nodes[NP_TIER_WORDS];
	struct dirent *d;
	long id, top = -1;
	int i, ret = 0, nr = 0;
	DIR *dir;

	memset(fast, 0, NP_TIER_WORDS * sizeof(*fast));
	memset(slow, 0, NP_TIER_WORDS * sizeof(*slow));
	dir = opendir(NP_SYS_TIERS);
	if (!dir)
		return -ENOENT;
	/* The lowest tier id is the top tier (the least abstract distance). */
	while ((d = readdir(dir))) {
		if (sscanf(d->d_name, "memory_tier%ld", &id) != 1)
			continue;
		snprintf(path, sizeof(path), NP_SYS_TIERS "/%s/nodelist",
			 d->d_name);
		ret = np_tier_read_nodes(path, nodes);
		if (ret)
			break;
		nr++;
		for (i = 0; i < NP_TIER_WORDS; i++) {
			if (top < 0 || id < top) {
				slow[i] |= fast[i];
				fast[i] = nodes[i];
			} else {
				slow[i] |= nodes[i];
			}
		}
		if (top < 0 || id < top)
			top = id;
	}
	closedir(dir);
	if (ret)
		return ret;
	return nr ? 0 : -ENOENT;
}

int np_tier_read_node_masks(__u64 *memory, __u64 *cpus)
{
	int ret = np_tier_read_nodes(NP_SYS_NODE "/has_memory", memory);

	return ret ? ret : np_tier_read_nodes(NP_SYS_NODE "/has_cpu", cpus);
}

int np_tier_read_node_mem(int node, long page_size, __u64 *total,
			  __u64 *free)
{
	char path[128], line[NP_TIER_LINE], key[64];
	unsigned long long kb;
	int found = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), NP_SYS_NODE "/node%d/meminfo", node);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* "Node 0 MemTotal:       1015636 kB" */
	while (found != 3 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d %63s %llu", &n, key, &kb) != 3)
			continue;
		if (!strcmp(key, "MemTotal:")) {
			*total = kb * 1024 / page_size;
			found |= 1;
		} else if (!strcmp(key, "MemFree:")) {
			*free = kb * 1024 / page_size;
			found |= 2;
		}
	}
	fclose(f);
	return found == 3 ? 0 : -EIO;
}

int np_tier_read_cpu_nodes(int **cpu_node, int *nr_cpus)
{
	char path[128], line[NP_TIER_LINE];
	__u64 memory[NP_TIER_WORDS], cpus[NP_TIER_WORDS];
	int node, cpu, ret, max = 0, *map = NULL, *grown;
	unsigned long a, b;
	char *s, *end;

	ret = np_tier_read_node_masks(memory, cpus);
	if (ret)
		return ret;
	for (node = 0; node < NUMAPLACE_TIER_NODES; node++) {
		if (!np_tier_isset(cpus, node))
			continue;
		snprintf(path, sizeof(path), NP_SYS_NODE "/node%d/cpulist", node);
		if (np_tier_read_line(path, line, sizeof(line)))
			continue;
		for (s = line; isdigit((unsigned char)*s); s = end) {
			a = strtoul(s, &end, 10);
			b = *end == '-' ? strtoul(end + 1, &end, 10) : a;
			if (*end == ',')
				end++;
			/* CPU ids are below the kernel's NR_CPUS (8192 in Debian) */
			if (b >= 65536 || b < a)
				break;
			if ((int)b >= max) {
				grown = realloc(map, (b + 1) * sizeof(*map));
				if (!grown) {
					free(map);
					return -ENOMEM;
				}
				map = grown;
				for (cpu = max; cpu <= (int)b; cpu++)
					map[cpu] = -1;
				max = b + 1;
			}
			for (cpu = a; cpu <= (int)b; cpu++)
				map[cpu] = node;
		}
	}
	*cpu_node = map;
	*nr_cpus = max;
	return 0;
}

FILE *np_tier_proc_open(int pid, const char *name)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	f = fopen(path, "re");
	if (!f && errno == ENOENT)
		errno = ESRCH;
	return f;
}

/* "Mems_allowed_list:\t0-1" of /proc/PID/status into @mems. */
static int np_tier_read_mems(int pid, __u64 *mems)
{
	char line[NP_TIER_LINE];
	int ret = -EIO;
	FILE *f;

	f = np_tier_proc_open(pid, "status");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Mems_allowed_list:", 18))
			continue;
		/* A node past the context's nodes is not one of its nodes. */
		ret = np_tier_parse_list(line + 18 + strspn(line + 18, " \t"),
					 mems, true);
		break;
	}
	fclose(f);
	return ret;
}

/*
 * Field @field (from 3) of a stat line of /proc: the command name, field
 * 2, may hold spaces and parentheses, so fields count after its last ')'.
 */
static const char *np_tier_stat_field(const char *line, int field)
{
	const char *s = strrchr(line, ')');
	int i;

	for (i = 2; s && i < field; i++)
		s = strchr(s + 1, ' ');
	return s ? s + 1 : NULL;
}

/* The CPU a thread last ran on: field 39 of /proc/PID/task/TID/stat. */
static int np_tier_read_task_cpu(int pid, const char *tid)
{
	char path[128], line[NP_TIER_LINE];
	const char *s;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, tid);
	if (np_tier_read_line(path, line, sizeof(line)))
		return -1;
	s = np_tier_stat_field(line, 39);
	return s ? atoi(s) : -1;
}

int np_tier_read_identity(int pid, __u64 *start, __u64 *code)
{
	char path[64], line[NP_TIER_LINE];
	const char *state, *s;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	ret = np_tier_read_line(path, line, sizeof(line));
	if (ret)
		return ret == -ENOENT ? -ESRCH : ret;
	state = np_tier_stat_field(line, 3);
	/* A zombie's memory is gone: as good as exited. */
	if (state && (*state == 'Z' || *state == 'X'))
		return -ESRCH;
	s = np_tier_stat_field(line, 22);
	if (!s)
		return -EIO;
	*start = strtoull(s, NULL, 10);
	s = np_tier_stat_field(line, 26);
	*code = s ? strtoull(s, NULL, 10) : 0;
	return 0;
}

int np_tier_read_task_nodes(int pid, const int *cpu_node, int nr_cpus,
			    __u64 *mems, __u64 *local)
{
	char path[64];
	struct dirent *d;
	int cpu, ret, nr = 0;
	DIR *dir;

	ret = np_tier_read_mems(pid, mems);
	if (ret)
		return ret;
	memset(local, 0, NP_TIER_WORDS * sizeof(*local));
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while (nr < NP_TIER_MAX_THREADS && (d = readdir(dir))) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		nr++;
		cpu = np_tier_read_task_cpu(pid, d->d_name);
		if (cpu >= 0 && cpu < nr_cpus && cpu_node[cpu] >= 0)
			np_tier_set(local, cpu_node[cpu]);
	}
	closedir(dir);
	return 0;
}
