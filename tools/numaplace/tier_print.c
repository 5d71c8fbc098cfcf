// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace tier: a line per period through the output layer (output.h),
 * text or JSON, and the totals since the start as a node_exporter
 * textfile (--prometheus): written to FILE.tmp in the same directory,
 * then renamed over FILE, so a scrape never reads half a file. (The
 * layer's Prometheus format prints counters only, to stdout; this file
 * has gauges too.)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "tier.h"

/* The families of the Prometheus file, in the order they print. */
enum {
	NP_TF_PROMOTED, NP_TF_DEMOTED, NP_TF_FAILED, NP_TF_HELD, NP_TF_LIMITED,
	NP_TF_NO_ROOM, NP_TF_PING_PONG, NP_TF_MOVED_3, NP_TF_SCANNED,
	NP_TF_YOUNG, NP_TF_PERIODS, NP_TF_SCAN_S, NP_TF_MOVE_S, NP_TF_HOT,
	NP_TF_COLD, NP_TF_TARGETS, NP_TF_TRACKED, NP_TF_STATE, NP_TF_NR
};

/* What node_exporter's textfile collector reads. */
#define NP_PROM_EXT		".prom"
#define NP_PROM_EXT_LEN		(sizeof(NP_PROM_EXT) - 1)

struct np_tier_family {
	const char *name;
	const char *type;	/* "counter" or "gauge" */
	const char *help;
};

static const struct np_tier_family np_tier_fams[NP_TF_NR] = {
	[NP_TF_PROMOTED] = { "numaplace_tier_promoted_pages_total", "counter",
			     "Pages promoted onto a fast node, by that node." },
	[NP_TF_DEMOTED] = { "numaplace_tier_demoted_pages_total", "counter",
			    "Pages demoted onto a slow node, by that node." },
	[NP_TF_FAILED] = { "numaplace_tier_failed_pages_total", "counter",
			   "Pages a move was asked for that did not move (busy, shared, no memory)." },
	[NP_TF_HELD] = { "numaplace_tier_held_pages_total", "counter",
			 "Pages not moved in a period because they moved in the last hold scans." },
	[NP_TF_LIMITED] = { "numaplace_tier_limited_pages_total", "counter",
			    "Pages not moved in a period because of the rate limit." },
	[NP_TF_NO_ROOM] = { "numaplace_tier_no_room_pages_total", "counter",
			    "Hot pages not promoted in a period because no fast node had room." },
	[NP_TF_PING_PONG] = { "numaplace_tier_ping_pong_total", "counter",
			      "Moves of a page that had moved before." },
	[NP_TF_MOVED_3] = { "numaplace_tier_moved_3_pages_total", "counter",
			    "Pages that reached their third move." },
	[NP_TF_SCANNED] = { "numaplace_tier_scanned_pages_total", "counter",
			    "Present pages scanned, summed over the periods." },
	[NP_TF_YOUNG] = { "numaplace_tier_young_pages_total", "counter",
			  "Scanned pages accessed since the scan before, summed over the periods." },
	[NP_TF_PERIODS] = { "numaplace_tier_periods_total", "counter",
			    "Periods done." },
	[NP_TF_SCAN_S] = { "numaplace_tier_scan_seconds_total", "counter",
			   "Time spent scanning access bits." },
	[NP_TF_MOVE_S] = { "numaplace_tier_move_seconds_total", "counter",
			   "Time spent moving pages." },
	[NP_TF_HOT] = { "numaplace_tier_hot_pages", "gauge",
			"Hot pages at the last period, on any node." },
	[NP_TF_COLD] = { "numaplace_tier_cold_pages", "gauge",
			 "Cold pages at the last period, on any node." },
	[NP_TF_TARGETS] = { "numaplace_tier_targets", "gauge",
			    "Processes tracked." },
	[NP_TF_TRACKED] = { "numaplace_tier_tracked_pages", "gauge",
			    "Pages with hotness state." },
	[NP_TF_STATE] = { "numaplace_tier_state_bytes", "gauge",
			  "Memory the hotness state takes." },
};

const char *np_tier_node_list(const __u64 *mask, char *buf, size_t size)
{
	unsigned int n, end;
	size_t len = 0;

	buf[0] = 0;
	for (n = 0; n < NUMAPLACE_TIER_NODES && len < size; n = end + 1) {
		end = n;
		if (!numaplace_node_isset(mask, n))
			continue;
		while (end + 1 < NUMAPLACE_TIER_NODES &&
		       numaplace_node_isset(mask, end + 1))
			end++;
		if (end > n)
			len += snprintf(buf + len, size - len, "%s%u-%u",
					len ? "," : "", n, end);
		else
			len += snprintf(buf + len, size - len, "%s%u",
					len ? "," : "", n);
	}
	return buf[0] ? buf : "(none)";
}

/* A counter: " KEY N" as text, "KEY": N in JSON. */
static void np_tier_print_count(struct np_out *o, const char *key,
				unsigned long long v)
{
	np_print_text(o, " %s", key);
	np_print_uint(o, NP_PRINT_ANY, key, " %llu", v);
}

void np_tier_print(struct np_tier_out *out, unsigned long nr,
		   const struct numaplace_tier_period *p)
{
	struct timeval tv;
	struct np_out o;

	if (np_out_begin(&o, out->json ? NP_FMT_JSON : NP_FMT_TEXT))
		return;
	gettimeofday(&tv, NULL);
	np_print_uint(&o, NP_PRINT_JSON, "period", NULL, nr);
	np_print_time(&o, NP_PRINT_ANY, "time", "%s", &tv);
	np_print_uint(&o, NP_PRINT_TEXT, NULL, " period %llu", nr);
	np_tier_print_count(&o, "targets", p->nr_targets);
	np_tier_print_count(&o, "scanned", p->nr_scanned);
	np_tier_print_count(&o, "young", p->nr_young);
	np_tier_print_count(&o, "hot", p->nr_hot);
	np_tier_print_count(&o, "cold", p->nr_cold);
	/* Per node: "promoted 0:12,1:0" as text, {"0":12,"1":0} as JSON. */
	np_print_text(&o, " promoted");
	np_print_nodes(&o, "promoted", " ", out->fast, NUMAPLACE_TIER_NODES,
		       p->nr_promoted);
	np_print_text(&o, " demoted");
	np_print_nodes(&o, "demoted", " ", out->slow, NUMAPLACE_TIER_NODES,
		       p->nr_demoted);
	np_tier_print_count(&o, "failed", p->nr_failed);
	np_tier_print_count(&o, "held", p->nr_held);
	np_tier_print_count(&o, "limited", p->nr_limited);
	np_tier_print_count(&o, "no_room", p->nr_no_room);
	np_tier_print_count(&o, "scan_failed", p->nr_scan_failed);
	if (p->scan_error)
		np_print_str(&o, NP_PRINT_ANY, "scan_error", " (%s)",
			     strerror(-p->scan_error));
	np_tier_print_count(&o, "ping_pong", p->nr_ping_pong);
	np_tier_print_count(&o, "moved_3", p->nr_moved_3);
	np_tier_print_count(&o, "tracked", p->nr_tracked);
	np_tier_print_count(&o, "state_bytes", p->state_bytes);
	np_print_float(&o, NP_PRINT_ANY, "scan_ms", " scan_ms %.1f", 3,
		       p->scan_ns / 1e6);
	np_print_float(&o, NP_PRINT_ANY, "move_ms", " move_ms %.1f\n", 3,
		       p->move_ns / 1e6);
	np_out_end(&o);
	fflush(stdout);
}

void np_tier_count(struct np_tier_out *out,
		   const struct numaplace_tier_period *p)
{
	out->periods++;
	numaplace_tier_period_add(&out->tot, p);
	out->last = *p;
}

int np_tier_prom_init(struct np_tier_out *out, const char *file)
{
	const char *name = strrchr(file, '/');
	size_t len, i, j = 0;

	name = name ? name + 1 : file;
	len = strlen(name);
	if (!len || len > NAME_MAX)
		return -EINVAL;
	if (len > NP_PROM_EXT_LEN &&
	    !strcmp(name + len - NP_PROM_EXT_LEN, NP_PROM_EXT))
		len -= NP_PROM_EXT_LEN;
	/* A label value escapes '\', '"' and newlines ("\x2d" of systemd). */
	for (i = 0; i < len; i++) {
		if (name[i] == '\\' || name[i] == '"' || name[i] == '\n')
			out->tier[j++] = '\\';
		out->tier[j++] = name[i] == '\n' ? 'n' : name[i];
	}
	out->tier[j] = 0;
	out->prom = file;
	return 0;
}

/* The HELP and TYPE lines of family @fam. */
static void np_tier_prom_head(FILE *f, unsigned int fam)
{
	const struct np_tier_family *tf = &np_tier_fams[fam];

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", tf->name, tf->help,
		tf->name, tf->type);
}

static void np_tier_prom_u64(FILE *f, const struct np_tier_out *out,
			     unsigned int fam, __u64 v)
{
	np_tier_prom_head(f, fam);
	fprintf(f, "%s{tier=\"%s\"} %llu\n", np_tier_fams[fam].name,
		out->tier, (unsigned long long)v);
}

static void np_tier_prom_seconds(FILE *f, const struct np_tier_out *out,
				 unsigned int fam, __u64 ns)
{
	np_tier_prom_head(f, fam);
	fprintf(f, "%s{tier=\"%s\"} %.9f\n", np_tier_fams[fam].name,
		out->tier, ns / 1e9);
}

/* A sample per node of @mask, zero or not: a series never vanishes. */
static void np_tier_prom_nodes(FILE *f, const struct np_tier_out *out,
			       unsigned int fam, const __u64 *mask,
			       const __u64 *v)
{
	unsigned int n;

	np_tier_prom_head(f, fam);
	for (n = 0; n < NUMAPLACE_TIER_NODES; n++)
		if (numaplace_node_isset(mask, n))
			fprintf(f, "%s{tier=\"%s\",node=\"%u\"} %llu\n",
				np_tier_fams[fam].name, out->tier, n,
				(unsigned long long)v[n]);
}

static void np_tier_prom_print(FILE *f, const struct np_tier_out *out)
{
	const struct numaplace_tier_period *p = &out->last;
	const struct numaplace_tier_period *s = &out->tot;

	np_tier_prom_nodes(f, out, NP_TF_PROMOTED, out->fast, s->nr_promoted);
	np_tier_prom_nodes(f, out, NP_TF_DEMOTED, out->slow, s->nr_demoted);
	np_tier_prom_u64(f, out, NP_TF_FAILED, s->nr_failed);
	np_tier_prom_u64(f, out, NP_TF_HELD, s->nr_held);
	np_tier_prom_u64(f, out, NP_TF_LIMITED, s->nr_limited);
	np_tier_prom_u64(f, out, NP_TF_NO_ROOM, s->nr_no_room);
	np_tier_prom_u64(f, out, NP_TF_PING_PONG, s->nr_ping_pong);
	np_tier_prom_u64(f, out, NP_TF_MOVED_3, s->nr_moved_3);
	np_tier_prom_u64(f, out, NP_TF_SCANNED, s->nr_scanned);
	np_tier_prom_u64(f, out, NP_TF_YOUNG, s->nr_young);
	np_tier_prom_u64(f, out, NP_TF_PERIODS, out->periods);
	np_tier_prom_seconds(f, out, NP_TF_SCAN_S, s->scan_ns);
	np_tier_prom_seconds(f, out, NP_TF_MOVE_S, s->move_ns);
	np_tier_prom_u64(f, out, NP_TF_HOT, p->nr_hot);
	np_tier_prom_u64(f, out, NP_TF_COLD, p->nr_cold);
	np_tier_prom_u64(f, out, NP_TF_TARGETS, p->nr_targets);
	np_tier_prom_u64(f, out, NP_TF_TRACKED, p->nr_tracked);
	np_tier_prom_u64(f, out, NP_TF_STATE, p->state_bytes);
}

/* The file into @tmp, then renamed over it. 0 or -errno. */
static int np_tier_prom_replace(const struct np_tier_out *out,
				const char *tmp)
{
	int fd, ret = 0;
	FILE *f;

	/*
	 * A file of our own, never one planted there: whoever may write the
	 * directory could leave a symlink named FILE.tmp, which a plain
	 * open would follow, as root, and truncate.
	 */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		ret = -errno;
		close(fd);
		goto remove_tmp;
	}
	np_tier_prom_print(f, out);
	if (ferror(f))
		ret = -EIO;
	/* fclose() writes what is buffered: ENOSPC shows here. */
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		goto remove_tmp;
	if (rename(tmp, out->prom)) {
		ret = -errno;
		goto remove_tmp;
	}
	return 0;

remove_tmp:
	unlink(tmp);
	return ret;
}

int np_tier_prom_write(struct np_tier_out *out)
{
	char tmp[PATH_MAX];
	int ret;

	if (!out->prom)
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", out->prom) >=
	    (int)sizeof(tmp))
		ret = -ENAMETOOLONG;
	else
		ret = np_tier_prom_replace(out, tmp);
	if (ret && !out->prom_failing)
		fprintf(stderr, "numaplace tier: %s: %s\n", out->prom,
			strerror(-ret));
	else if (!ret && out->prom_failing)
		fprintf(stderr, "numaplace tier: %s: written again\n",
			out->prom);
	out->prom_failing = !!ret;
	return ret;
}
