// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace migrate: move a process's pages to a node, over a set of nodes
 * or to a CPU's node, a chunk per ioctl, with a progress bar on a terminal
 * and a summary at the end.
 *
 *   numaplace migrate -p PID (--to NODE | --interleave N,M,... | --cpu CPU)
 *                     [RANGE | --all] [--move-all] [--engine ENGINE]
 *                     [--split-ok] [--json]
 *
 * Addresses and lengths are hex, as in /proc/PID/maps and numaplace query.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "numaplace.h"

/*
 * Bytes of address space per ioctl: short enough for the progress bar to
 * move (about a second of migration in a TCG guest), long enough that the
 * per-call cost is noise. A power of two, so chunk edges fall on PMD (THP)
 * boundaries and never cut a huge page in two.
 */
#define NP_CHUNK		(64ULL << 20)
/* The progress bar is redrawn at most this often. */
#define NP_PROGRESS_MS		100
/* Cells of the progress bar. */
#define NP_BAR_WIDTH		30

#define NP_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* A piece of address space to migrate, or one skipped, with its name. */
struct np_piece {
	unsigned long long start, end;	/* [start, end), page aligned */
	char *name;
};

struct np_pieces {
	struct np_piece *v;
	size_t nr, cap;
};

struct np_migrate_cmd {
	int pid;
	unsigned int policy;		/* NUMAPLACE_POLICY_* */
	int node;			/* --to */
	unsigned int cpu;		/* --cpu */
	__u64 node_set[NUMAPLACE_NODE_WORDS];	/* --interleave */
	const char *target_arg;		/* the target as given */
	unsigned int flags;		/* NUMAPLACE_MIGRATE_* */
	const char *engine;		/* --engine, or NULL */
	int all, json, has_range;
	unsigned long long start, end;	/* the range, when has_range */
	struct numaplace_info info;
	struct np_pieces todo;		/* what goes to the module */
	struct np_pieces skipped;	/* special mappings left alone */
	unsigned long long nr_novma_pages;	/* range pages in no VMA */
	unsigned long long total_bytes, done_bytes;	/* of todo */
	struct numaplace_migrate sum;	/* counters over every chunk */
	double t0, elapsed;		/* seconds */
	int progress;			/* stderr is a terminal */
	double last_draw;
};

static const struct {
	unsigned int flag;
	unsigned long long feature;
	const char *name;
} np_engines[] = {
	{ NUMAPLACE_MIGRATE_ENGINE_KERNEL, NUMAPLACE_FEAT_MIGRATE_KERNEL, "kernel" },
	{ NUMAPLACE_MIGRATE_ENGINE_VMA, NUMAPLACE_FEAT_MIGRATE_VMA, "vma" },
	{ NUMAPLACE_MIGRATE_ENGINE_BATCH, NUMAPLACE_FEAT_MIGRATE_BATCH, "batch" },
};

/* Bits of numaplace_migrate.engines, in np_engines' order. */
static const unsigned int np_engine_bits[] = {
	NUMAPLACE_ENGINE_KERNEL, NUMAPLACE_ENGINE_VMA, NUMAPLACE_ENGINE_BATCH,
};

/* numaplace_migrate.nr_failed[] by index. */
static const char *const np_fail_names[NUMAPLACE_FAIL_MAX] = {
	[NUMAPLACE_FAIL_ENOMEM] = "ENOMEM",
	[NUMAPLACE_FAIL_EBUSY] = "EBUSY",
	[NUMAPLACE_FAIL_EACCES] = "EACCES",
	[NUMAPLACE_FAIL_EFAULT] = "EFAULT",
	[NUMAPLACE_FAIL_ENOENT] = "ENOENT",
	[NUMAPLACE_FAIL_OTHER] = "OTHER",
};

/*
 * The kernel's special mappings: their pages are the kernel's own (vDSO
 * text, vvar data, the uprobes slot), a PFN map, or no VMA at all
 * ([vsyscall] is the gate area). None of them can move.
 */
static const char *const np_unmovable[] = {
	"[vvar]", "[vvar_vclock]", "[vdso]", "[vsyscall]", "[uprobes]",
};

static void np_migrate_usage(FILE *out)
{
	fprintf(out,
		"usage: numaplace migrate -p PID (--to NODE | --interleave N,M,... | --cpu CPU)\n"
		"                         [RANGE | --all] [--move-all] [--engine ENGINE]\n"
		"                         [--split-ok] [--json]\n"
		"\n"
		"  -p, --pid PID         the process whose pages move\n"
		"  -t, --to NODE         every page to NODE\n"
		"  -i, --interleave LIST round-robin over the nodes of LIST (0,1 or 0-3),\n"
		"                        a folio at a time\n"
		"  -c, --cpu CPU         to the node of CPU\n"
		"  RANGE                 START-END or START+LEN, in hex as /proc/PID/maps\n"
		"  --all                 every VMA of the process (the default); the\n"
		"                        kernel's special mappings ([vdso], [vvar], ...)\n"
		"                        are skipped\n"
		"  --move-all            also pages other processes map (CAP_SYS_NICE)\n"
		"  --engine ENGINE       only this engine: kernel, vma or batch\n"
		"  --split-ok            large folios may be split to move\n"
		"  --json                print the summary as JSON\n"
		"\n"
		"exit status: %d ok, %d failed, %d usage, %d no device or no migration\n"
		"support, %d permission denied, %d no such process, %d bad target node,\n"
		"%d some pages could not move (busy, shared, no memory on the node)\n",
		NP_EXIT_OK, NP_EXIT_FAIL, NP_EXIT_USAGE, NP_EXIT_NODEV,
		NP_EXIT_PERM, NP_EXIT_NOPROC, NP_EXIT_NODE, NP_EXIT_PARTIAL);
}

static double np_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* START-END or START+LEN (util.c). */
static int np_parse_cmd_range(struct np_migrate_cmd *c, const char *s)
{
	int ret = np_parse_range(s, &c->start, &c->end);

	if (!ret)
		c->has_range = 1;
	return ret;
}

/* A decimal number in [0, max]. */
static int np_parse_uint(const char *s, char **end, unsigned long max,
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

/* "0,1" or "0-3,5" into c->node_set; at least one node. */
static int np_parse_nodes(struct np_migrate_cmd *c, const char *s)
{
	unsigned long lo, hi, n;
	char *end;
	int any = 0;

	memset(c->node_set, 0, sizeof(c->node_set));
	while (*s) {
		if (np_parse_uint(s, &end, NUMAPLACE_MAX_NODES - 1, &lo))
			return -EINVAL;
		hi = lo;
		if (*end == '-' &&
		    np_parse_uint(end + 1, &end, NUMAPLACE_MAX_NODES - 1, &hi))
			return -EINVAL;
		if (hi < lo || (*end && *end != ','))
			return -EINVAL;
		for (n = lo; n <= hi; n++)
			c->node_set[n / 64] |= 1ULL << (n % 64);
		any = 1;
		s = *end ? end + 1 : end;
		if (*end && !*s)
			return -EINVAL;	/* a trailing comma */
	}
	return any ? 0 : -EINVAL;
}

static int np_set_target(struct np_migrate_cmd *c, int opt, const char *arg)
{
	unsigned long v;
	char *end;

	if (c->target_arg) {
		fprintf(stderr, "numaplace migrate: give one of --to, --interleave, --cpu\n");
		return NP_EXIT_USAGE;
	}
	c->target_arg = arg;
	switch (opt) {
	case 't':
		if (np_parse_uint(arg, &end, NUMAPLACE_MAX_NODES - 1, &v) ||
		    *end) {
			fprintf(stderr, "numaplace migrate: bad node '%s'\n",
				arg);
			return NP_EXIT_USAGE;
		}
		c->policy = NUMAPLACE_POLICY_NODE;
		c->node = v;
		break;
	case 'i':
		if (np_parse_nodes(c, arg)) {
			fprintf(stderr, "numaplace migrate: bad node list '%s': want N,M,... or N-M (below %d)\n",
				arg, NUMAPLACE_MAX_NODES);
			return NP_EXIT_USAGE;
		}
		c->policy = NUMAPLACE_POLICY_INTERLEAVE;
		break;
	case 'c':
		if (np_parse_uint(arg, &end, 0xffffffffUL, &v) || *end) {
			fprintf(stderr, "numaplace migrate: bad CPU '%s'\n",
				arg);
			return NP_EXIT_USAGE;
		}
		c->policy = NUMAPLACE_POLICY_CPU;
		c->cpu = v;
		break;
	}
	return NP_EXIT_OK;
}

static int np_set_engine(struct np_migrate_cmd *c, const char *arg)
{
	size_t i;

	for (i = 0; i < NP_ARRAY_SIZE(np_engines); i++) {
		if (!strcmp(arg, np_engines[i].name)) {
			c->flags |= np_engines[i].flag;
			c->engine = np_engines[i].name;
			return NP_EXIT_OK;
		}
	}
	fprintf(stderr, "numaplace migrate: unknown engine '%s': want kernel, vma or batch\n",
		arg);
	return NP_EXIT_USAGE;
}

static int np_migrate_args(struct np_migrate_cmd *c, int argc, char **argv)
{
	enum { OPT_ALL = 256, OPT_JSON, OPT_MOVE_ALL, OPT_ENGINE, OPT_SPLIT };
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "to", required_argument, NULL, 't' },
		{ "interleave", required_argument, NULL, 'i' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "move-all", no_argument, NULL, OPT_MOVE_ALL },
		{ "engine", required_argument, NULL, OPT_ENGINE },
		{ "split-ok", no_argument, NULL, OPT_SPLIT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long pid;
	char *end;
	int opt, ret;

	opterr = 0;	/* our messages name the command */
	while ((opt = getopt_long(argc, argv, ":p:t:i:c:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (np_parse_uint(optarg, &end, 0x7fffffff, &pid) ||
			    *end || !pid) {
				fprintf(stderr,
					"numaplace migrate: bad pid '%s'\n",
					optarg);
				return NP_EXIT_USAGE;
			}
			c->pid = pid;
			break;
		case 't':
		case 'i':
		case 'c':
			ret = np_set_target(c, opt, optarg);
			if (ret)
				return ret;
			break;
		case OPT_ALL:
			c->all = 1;
			break;
		case OPT_JSON:
			c->json = 1;
			break;
		case OPT_MOVE_ALL:
			c->flags |= NUMAPLACE_MIGRATE_MOVE_ALL;
			break;
		case OPT_ENGINE:
			if (c->engine) {
				fprintf(stderr, "numaplace migrate: give --engine once\n");
				return NP_EXIT_USAGE;
			}
			ret = np_set_engine(c, optarg);
			if (ret)
				return ret;
			break;
		case OPT_SPLIT:
			c->flags |= NUMAPLACE_MIGRATE_SPLIT_OK;
			break;
		case 'h':
			np_migrate_usage(stdout);
			return -1;
		default:
			if (opt == ':')
				fprintf(stderr, "numaplace migrate: '%s' needs an argument\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "numaplace migrate: unknown option '%s'\n",
					argv[optind - 1]);
			np_migrate_usage(stderr);
			return NP_EXIT_USAGE;
		}
	}
	if (!c->pid || !c->target_arg) {
		fprintf(stderr, "numaplace migrate: %s\n",
			!c->pid ? "-p PID is required" :
			"give a target: --to NODE, --interleave N,M,... or --cpu CPU");
		np_migrate_usage(stderr);
		return NP_EXIT_USAGE;
	}
	if (optind < argc - 1 || (optind < argc && c->all)) {
		fprintf(stderr, "numaplace migrate: give one RANGE or --all\n");
		np_migrate_usage(stderr);
		return NP_EXIT_USAGE;
	}
	if (optind < argc && np_parse_cmd_range(c, argv[optind])) {
		fprintf(stderr, "numaplace migrate: bad range '%s': want START-END or START+LEN in hex\n",
			argv[optind]);
		return NP_EXIT_USAGE;
	}
	return NP_EXIT_OK;
}

static int np_pieces_add(struct np_pieces *p, unsigned long long start,
			 unsigned long long end, const char *name)
{
	if (p->nr == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct np_piece *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->nr].name = strdup(name);
	if (!p->v[p->nr].name)
		return -ENOMEM;
	p->v[p->nr].start = start;
	p->v[p->nr].end = end;
	p->nr++;
	return 0;
}

static void np_pieces_free(struct np_pieces *p)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		free(p->v[i].name);
	free(p->v);
}

static int np_unmovable_name(const char *name)
{
	size_t i;

	for (i = 0; i < NP_ARRAY_SIZE(np_unmovable); i++)
		if (!strcmp(name, np_unmovable[i]))
			return 1;
	return 0;
}

/*
 * One VMA of /proc/PID/maps: with a range, only its part in the range
 * (the pages between VMAs are counted as in no VMA); special mappings go
 * to the skipped list.
 */
static int np_add_vma(struct np_migrate_cmd *c, unsigned long long start,
		      unsigned long long end, const char *name,
		      unsigned long long *cursor)
{
	if (c->has_range) {
		if (end <= c->start || start >= c->end)
			return 0;
		if (start < c->start)
			start = c->start;
		if (end > c->end)
			end = c->end;
		if (start > *cursor)
			c->nr_novma_pages += (start - *cursor) /
					     c->info.page_size;
	}
	*cursor = end;
	if (np_unmovable_name(name))
		return np_pieces_add(&c->skipped, start, end, name);
	c->total_bytes += end - start;
	return np_pieces_add(&c->todo, start, end, name);
}

static int np_read_maps(struct np_migrate_cmd *c)
{
	unsigned long long start, end, cursor = c->start;
	char path[64], *line = NULL;
	size_t line_cap = 0;
	int ret = 0, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", c->pid);
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		if (ret == -ENOENT)
			ret = -ESRCH;
		return ret;
	}
	while (!ret && getline(&line, &line_cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		n = 0;
		if (sscanf(line, "%llx-%llx %*7s %*x %*x:%*x %*u %n", &start,
			   &end, &n) < 2 || !n) {
			fprintf(stderr, "numaplace migrate: %s: cannot parse '%s'\n",
				path, line);
			ret = -EIO;
			break;
		}
		ret = np_add_vma(c, start, end, line + n, &cursor);
	}
	if (!ret && ferror(f))
		ret = -EIO;
	if (!ret && c->has_range && cursor < c->end)
		c->nr_novma_pages += (c->end - cursor) / c->info.page_size;
	free(line);
	fclose(f);
	return ret;
}

/* The handshake: the device, its migration support and the engine. */
static int np_migrate_open(struct np_migrate_cmd *c)
{
	unsigned long long any = NUMAPLACE_FEAT_MIGRATE_KERNEL |
				 NUMAPLACE_FEAT_MIGRATE_VMA |
				 NUMAPLACE_FEAT_MIGRATE_BATCH;
	size_t i;
	int ret;

	ret = numaplace_info(&c->info);
	if (ret) {
		fprintf(stderr, "numaplace: %s: %s\n", NUMAPLACE_DEVICE,
			strerror(-ret));
		return NP_EXIT_NODEV;
	}
	if (!numaplace_supports(&c->info, 1ULL << NUMAPLACE_CMD_MIGRATE, 0) ||
	    !(c->info.features & any)) {
		fprintf(stderr, "numaplace: the module (ABI %u) cannot migrate pages on this kernel\n",
			c->info.abi_version);
		return NP_EXIT_NODEV;
	}
	if (!c->info.page_size ||
	    (c->info.page_size & (c->info.page_size - 1))) {
		fprintf(stderr, "numaplace: bad page size %u from the module\n",
			c->info.page_size);
		return NP_EXIT_NODEV;
	}
	for (i = 0; c->engine && i < NP_ARRAY_SIZE(np_engines); i++) {
		if (strcmp(c->engine, np_engines[i].name))
			continue;
		if (!(c->info.features & np_engines[i].feature)) {
			fprintf(stderr, "numaplace: the %s engine does not work on this kernel (see numaplace info)\n",
				c->engine);
			return NP_EXIT_NODEV;
		}
	}
	return NP_EXIT_OK;
}

static void np_progress_draw(struct np_migrate_cmd *c, int final)
{
	double now = np_now(), el = now - c->t0, frac, rate, eta;
	unsigned long long moved = c->sum.nr_moved_pages * c->info.page_size;
	char bar[NP_BAR_WIDTH + 1];
	int i, fill;

	if (!c->progress)
		return;
	if (final) {
		/* The summary replaces the bar, if one was drawn. */
		if (c->last_draw != c->t0)
			fprintf(stderr, "\r\033[K");
		fflush(stderr);
		return;
	}
	if ((now - c->last_draw) * 1000 < NP_PROGRESS_MS)
		return;
	c->last_draw = now;
	frac = c->total_bytes ? (double)c->done_bytes / c->total_bytes : 1;
	fill = frac * NP_BAR_WIDTH;
	for (i = 0; i < NP_BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[NP_BAR_WIDTH] = 0;
	rate = el > 0 ? moved / el / (1 << 20) : 0;
	fprintf(stderr, "\r[%s] %3.0f%%  %8.1f MiB/s", bar, frac * 100, rate);
	if (frac > 0 && frac < 1) {
		eta = el / frac - el;
		fprintf(stderr, "  ETA %d:%02d", (int)eta / 60, (int)eta % 60);
	}
	fprintf(stderr, "\033[K");
	fflush(stderr);
}

/* Add one call's counters to the totals. */
static void np_sum_add(struct numaplace_migrate *sum,
		       const struct numaplace_migrate *m)
{
	int i;

	sum->nr_moved_pages += m->nr_moved_pages;
	sum->nr_moved_folios += m->nr_moved_folios;
	sum->nr_in_place_pages += m->nr_in_place_pages;
	sum->nr_failed_pages += m->nr_failed_pages;
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++)
		sum->nr_failed[i] += m->nr_failed[i];
	sum->engines |= m->engines;
}

/*
 * The nodes of --interleave that INFO says have no memory (@exist set) or
 * do not exist (@exist clear), as "2,5"; the number of them.
 */
static int np_bad_nodes(const struct np_migrate_cmd *c, int exist, char *buf,
			size_t len)
{
	unsigned int n;
	size_t off = 0;
	int nr = 0;

	buf[0] = 0;
	for (n = 0; n < NUMAPLACE_MAX_NODES && off < len; n++) {
		if (!numaplace_node_isset(c->node_set, n) ||
		    numaplace_node_isset(c->info.node_memory, n) ||
		    (n < c->info.nr_node_ids) != exist)
			continue;
		off += snprintf(buf + off, len - off, "%s%u", off ? "," : "",
				n);
		nr++;
	}
	return nr;
}

/* The node of @cpu from sysfs, or -1. */
static int np_cpu_node(unsigned int cpu)
{
	char path[64];
	unsigned int n;

	for (n = 0; n < NUMAPLACE_MAX_NODES; n++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%u/node%u", cpu, n);
		if (!access(path, F_OK))
			return n;
	}
	return -1;
}

/* Say why a chunk failed, in the words of what was asked; the exit code. */
static int np_report_error(const struct np_migrate_cmd *c, int err,
			   unsigned long long addr)
{
	char nodes[128];
	int nr, node;

	switch (err) {
	case ESRCH:
		fprintf(stderr, "numaplace migrate: no process %d\n", c->pid);
		return NP_EXIT_NOPROC;
	case EPERM:
		fprintf(stderr, "numaplace migrate: not allowed to move the pages of process %d%s\n",
			c->pid, c->flags & NUMAPLACE_MIGRATE_MOVE_ALL ?
			" (--move-all needs CAP_SYS_NICE)" :
			" (needs the right to ptrace it)");
		return NP_EXIT_PERM;
	case ENODEV:
		if (c->policy == NUMAPLACE_POLICY_CPU) {
			node = np_cpu_node(c->cpu);
			if (node >= 0)
				fprintf(stderr, "numaplace migrate: CPU %u is on node %d, which has no memory\n",
					c->cpu, node);
			else
				fprintf(stderr, "numaplace migrate: CPU %u is not online or its node has no memory\n",
					c->cpu);
		} else if (c->policy == NUMAPLACE_POLICY_NODE) {
			fprintf(stderr, "numaplace migrate: node %d %s\n",
				c->node, c->node >= (int)c->info.nr_node_ids ?
				"does not exist" : "has no memory");
		} else if ((nr = np_bad_nodes(c, 0, nodes, sizeof(nodes)))) {
			fprintf(stderr, "numaplace migrate: node%s %s of --interleave %s do%s not exist\n",
				nr > 1 ? "s" : "", nodes, c->target_arg,
				nr > 1 ? "" : "es");
		} else if ((nr = np_bad_nodes(c, 1, nodes, sizeof(nodes)))) {
			fprintf(stderr, "numaplace migrate: node%s %s of --interleave %s ha%s no memory\n",
				nr > 1 ? "s" : "", nodes, c->target_arg,
				nr > 1 ? "ve" : "s");
		} else {
			fprintf(stderr, "numaplace migrate: a node of --interleave %s has no memory\n",
				c->target_arg);
		}
		return NP_EXIT_NODE;
	case EACCES:
		if (c->policy == NUMAPLACE_POLICY_NODE)
			fprintf(stderr, "numaplace migrate: node %d is not allowed by the cpuset of process %d\n",
				c->node, c->pid);
		else if (c->policy == NUMAPLACE_POLICY_CPU)
			fprintf(stderr, "numaplace migrate: the node of CPU %u is not allowed by the cpuset of process %d\n",
				c->cpu, c->pid);
		else
			fprintf(stderr, "numaplace migrate: a node of %s is not allowed by the cpuset of process %d\n",
				c->target_arg, c->pid);
		return NP_EXIT_NODE;
	case EINVAL:
		if (c->policy == NUMAPLACE_POLICY_CPU) {
			fprintf(stderr, "numaplace migrate: CPU %u does not exist or is not online\n",
				c->cpu);
			return NP_EXIT_NODE;
		}
		break;
	case ENOTTY:
	case EOPNOTSUPP:
		fprintf(stderr, "numaplace migrate: the module cannot migrate %s on this kernel: %s\n",
			c->engine ? "with this engine" : "these pages",
			strerror(err));
		return NP_EXIT_NODEV;
	}
	fprintf(stderr, "numaplace migrate: at %llx: %s\n", addr,
		strerror(err));
	return NP_EXIT_FAIL;
}

/* Every piece, a chunk per ioctl; the first error stops the run. */
static int np_migrate_pieces(struct np_migrate_cmd *c)
{
	unsigned long long addr, next;
	struct numaplace_migrate m;
	size_t i;
	int ret;

	c->t0 = np_now();
	/* No bar off a terminal, nor for a call done within a redraw. */
	c->progress = isatty(STDERR_FILENO);
	c->last_draw = c->t0;
	for (i = 0; i < c->todo.nr; i++) {
		for (addr = c->todo.v[i].start; addr < c->todo.v[i].end;
		     addr = next) {
			next = (addr + NP_CHUNK) & ~(NP_CHUNK - 1);
			if (next > c->todo.v[i].end || next <= addr)
				next = c->todo.v[i].end;
			memset(&m, 0, sizeof(m));
			m.flags = c->flags;
			m.pid = c->pid;
			m.policy = c->policy;
			m.start = addr;
			m.len = next - addr;
			m.node = c->node;
			m.cpu = c->cpu;
			memcpy(m.node_set, c->node_set, sizeof(m.node_set));
			ret = numaplace_migrate(&m);
			np_sum_add(&c->sum, &m);
			if (ret) {
				c->done_bytes += m.done * c->info.page_size;
				c->elapsed = np_now() - c->t0;
				np_progress_draw(c, 1);
				return np_report_error(c, -ret,
					addr + m.done * c->info.page_size);
			}
			c->done_bytes += next - addr;
			np_progress_draw(c, 0);
		}
	}
	c->elapsed = np_now() - c->t0;
	np_progress_draw(c, 1);
	return NP_EXIT_OK;
}

static void np_print_engines(unsigned int engines, int json)
{
	const char *sep = "";
	size_t i;

	for (i = 0; i < NP_ARRAY_SIZE(np_engines); i++) {
		if (!(engines & np_engine_bits[i]))
			continue;
		printf(json ? "%s\"%s\"" : "%s%s", sep, np_engines[i].name);
		sep = json ? ", " : " ";
		engines &= ~np_engine_bits[i];
	}
	if (engines)
		printf(json ? "%s\"%#x\"" : "%s%#x", sep, engines);
	else if (!json && !*sep)
		printf("(none)");
}

static const char *np_fail_name(int i, char *buf, size_t len)
{
	if (np_fail_names[i])
		return np_fail_names[i];
	snprintf(buf, len, "reason%d", i);
	return buf;
}

static void np_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void np_print_target(const struct np_migrate_cmd *c, int json)
{
	static const char *const names[] = {
		[NUMAPLACE_POLICY_NODE] = "node",
		[NUMAPLACE_POLICY_INTERLEAVE] = "interleave",
		[NUMAPLACE_POLICY_CPU] = "cpu",
	};
	const char *sep = "";
	unsigned int n;

	if (!json) {
		printf("%-12s %s %s\n", "target", names[c->policy],
		       c->target_arg);
		return;
	}
	printf("  \"policy\": \"%s\",\n", names[c->policy]);
	if (c->policy == NUMAPLACE_POLICY_NODE) {
		printf("  \"node\": %d,\n", c->node);
	} else if (c->policy == NUMAPLACE_POLICY_CPU) {
		printf("  \"cpu\": %u,\n", c->cpu);
	} else {
		printf("  \"nodes\": [");
		for (n = 0; n < NUMAPLACE_MAX_NODES; n++) {
			if (!numaplace_node_isset(c->node_set, n))
				continue;
			printf("%s%u", sep, n);
			sep = ", ";
		}
		printf("],\n");
	}
}

static void np_print_json(const struct np_migrate_cmd *c, int status)
{
	const struct numaplace_migrate *s = &c->sum;
	double mib = (double)s->nr_moved_pages * c->info.page_size / (1 << 20);
	char buf[16];
	size_t i;

	printf("{\n  \"pid\": %d,\n", c->pid);
	np_print_target(c, 1);
	printf("  \"complete\": %s,\n", status == NP_EXIT_OK ||
	       status == NP_EXIT_PARTIAL ? "true" : "false");
	printf("  \"bytes\": %llu,\n  \"bytes_done\": %llu,\n",
	       c->total_bytes, c->done_bytes);
	printf("  \"moved_pages\": %llu,\n  \"moved_folios\": %llu,\n"
	       "  \"in_place_pages\": %llu,\n  \"failed_pages\": %llu,\n",
	       (unsigned long long)s->nr_moved_pages,
	       (unsigned long long)s->nr_moved_folios,
	       (unsigned long long)s->nr_in_place_pages,
	       (unsigned long long)s->nr_failed_pages);
	printf("  \"failed\": {");
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++) {
		if (!np_fail_names[i] && !s->nr_failed[i])
			continue;
		printf("%s \"%s\": %llu", i ? "," : "",
		       np_fail_name(i, buf, sizeof(buf)),
		       (unsigned long long)s->nr_failed[i]);
	}
	printf(" },\n");
	if (c->has_range)
		printf("  \"novma_pages\": %llu,\n", c->nr_novma_pages);
	printf("  \"moved_mib\": %.1f,\n  \"elapsed_s\": %.3f,\n"
	       "  \"gb_per_s\": %.3f,\n",
	       mib, c->elapsed, c->elapsed > 0 ?
	       s->nr_moved_pages * (double)c->info.page_size / c->elapsed / 1e9 :
	       0.0);
	printf("  \"engines\": [");
	np_print_engines(s->engines, 1);
	printf("],\n  \"skipped\": [");
	for (i = 0; i < c->skipped.nr; i++) {
		printf("%s\n    { \"start\": \"%#llx\", \"end\": \"%#llx\", \"name\": ",
		       i ? "," : "", c->skipped.v[i].start,
		       c->skipped.v[i].end);
		np_json_str(c->skipped.v[i].name);
		printf(" }");
	}
	printf("%s]\n}\n", c->skipped.nr ? "\n  " : "");
}

static void np_print_text(const struct np_migrate_cmd *c)
{
	const struct numaplace_migrate *s = &c->sum;
	double mib = (double)s->nr_moved_pages * c->info.page_size / (1 << 20);
	const char *sep = ": ";
	char buf[16];
	size_t i;

	printf("%-12s %d\n", "process", c->pid);
	np_print_target(c, 0);
	printf("%-12s %12llu pages  %10.1f MiB  %llu folios\n", "moved",
	       (unsigned long long)s->nr_moved_pages, mib,
	       (unsigned long long)s->nr_moved_folios);
	printf("%-12s %12llu pages\n", "in place",
	       (unsigned long long)s->nr_in_place_pages);
	printf("%-12s %12llu pages", "failed",
	       (unsigned long long)s->nr_failed_pages);
	for (i = 0; i < NUMAPLACE_FAIL_MAX; i++) {
		if (!s->nr_failed[i])
			continue;
		printf("%s%s %llu", sep, np_fail_name(i, buf, sizeof(buf)),
		       (unsigned long long)s->nr_failed[i]);
		sep = ", ";
	}
	printf("\n");
	if (c->engine && !strcmp(c->engine, "vma") &&
	    !(c->flags & NUMAPLACE_MIGRATE_SPLIT_OK) &&
	    s->nr_failed[NUMAPLACE_FAIL_EBUSY])
		printf("%-12s the vma engine moves base pages only: large folios (THPs) need --split-ok\n",
		       "");
	if (c->has_range && c->nr_novma_pages)
		printf("%-12s %12llu pages (no VMA there, not asked)\n",
		       "unmapped", c->nr_novma_pages);
	printf("%-12s %12.3f s  %10.3f GB/s\n", "elapsed", c->elapsed,
	       c->elapsed > 0 ? s->nr_moved_pages * (double)c->info.page_size /
				c->elapsed / 1e9 : 0.0);
	printf("%-12s ", "engines");
	np_print_engines(s->engines, 0);
	printf("\n");
	for (i = 0; i < c->skipped.nr; i++)
		printf("%-12s %llx-%llx %s (a kernel mapping: cannot move)\n",
		       i ? "" : "skipped", c->skipped.v[i].start,
		       c->skipped.v[i].end, c->skipped.v[i].name);
}

/* Pages that did not move although they could have, one day. */
static int np_partial(const struct numaplace_migrate *s)
{
	return s->nr_failed[NUMAPLACE_FAIL_ENOMEM] ||
	       s->nr_failed[NUMAPLACE_FAIL_EBUSY] ||
	       s->nr_failed[NUMAPLACE_FAIL_EACCES] ||
	       s->nr_failed[NUMAPLACE_FAIL_OTHER] ||
	       s->nr_failed[6] || s->nr_failed[7];
}

/* /proc/PID/maps could not be read: the exit code. */
static int np_maps_error(const struct np_migrate_cmd *c, int err)
{
	switch (err) {
	case ESRCH:
		fprintf(stderr, "numaplace migrate: no process %d\n", c->pid);
		return NP_EXIT_NOPROC;
	case EACCES:
	case EPERM:
		fprintf(stderr, "numaplace migrate: not allowed to read /proc/%d/maps\n",
			c->pid);
		return NP_EXIT_PERM;
	case ENOMEM:
		fprintf(stderr, "numaplace: out of memory\n");
		return NP_EXIT_FAIL;
	case EIO:
		return NP_EXIT_FAIL;	/* said where it happened */
	}
	fprintf(stderr, "numaplace migrate: /proc/%d/maps: %s\n", c->pid,
		strerror(err));
	return NP_EXIT_FAIL;
}

int np_cmd_migrate(int argc, char **argv)
{
	struct np_migrate_cmd c;
	int ret;

	memset(&c, 0, sizeof(c));
	ret = np_migrate_args(&c, argc, argv);
	if (ret)
		return ret < 0 ? NP_EXIT_OK : ret;
	ret = np_migrate_open(&c);
	if (ret)
		goto out;
	ret = np_read_maps(&c);
	if (ret) {
		ret = np_maps_error(&c, -ret);
		goto out;
	}
	ret = np_migrate_pieces(&c);
	if (!ret && np_partial(&c.sum))
		ret = NP_EXIT_PARTIAL;
	/* After an error the text summary says what had been done. */
	if (c.json)
		np_print_json(&c, ret);
	else if (ret == NP_EXIT_OK || ret == NP_EXIT_PARTIAL || c.done_bytes)
		np_print_text(&c);
	fflush(stdout);
out:
	np_pieces_free(&c.todo);
	np_pieces_free(&c.skipped);
	return ret;
}
