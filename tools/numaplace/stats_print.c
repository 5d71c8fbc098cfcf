// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace stats: the counters through the output layer (output.h):
 * each is emitted once, as a text table, one JSON object per line or the
 * Prometheus text exposition format that node_exporter's textfile
 * collector reads.
 */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "stats.h"

static const char *const np_phase_names[NUMAPLACE_PHASE_MAX] = {
	[NUMAPLACE_PHASE_COLLECT] = "collect",
	[NUMAPLACE_PHASE_UNMAP] = "unmap",
	[NUMAPLACE_PHASE_ALLOC] = "alloc",
	[NUMAPLACE_PHASE_COPY] = "copy",
	[NUMAPLACE_PHASE_RESTORE] = "restore",
	[NUMAPLACE_PHASE_MIGRATE] = "migrate",
	[NUMAPLACE_PHASE_RESOLVE] = "resolve",
};

/* Prometheus families, in the order they print. */
enum {
	NP_F_QUERY_CALLS, NP_F_QUERY_PAGES, NP_F_QUERY_RUNS, NP_F_ACCESS_CALLS,
	NP_F_ACCESS_PAGES, NP_F_ACCESS_YOUNG, NP_F_ACCESS_CLEARED,
	NP_F_ACCESS_FLUSHES, NP_F_MIGRATE_CALLS, NP_F_BYTES, NP_F_DMA,
	NP_F_DMA_FALLBACK, NP_F_RETRY_PASSES, NP_F_PAGES, NP_F_FOLIOS,
	NP_F_FAILED, NP_F_PHASE, NP_F_NR
};

static const struct np_family np_st_fams[NP_F_NR] = {
	[NP_F_QUERY_CALLS] = { "numaplace_query_calls_total",
			       "NUMAPLACE_IOC_QUERY calls." },
	[NP_F_QUERY_PAGES] = { "numaplace_query_pages_total",
			       "Pages answered by queries." },
	[NP_F_QUERY_RUNS] = { "numaplace_query_runs_total",
			      "Runs returned by queries." },
	[NP_F_ACCESS_CALLS] = { "numaplace_access_calls_total",
				"Access scans (queries with QUERY_ACCESS)." },
	[NP_F_ACCESS_PAGES] = { "numaplace_access_pages_total",
				"Pages answered by access scans." },
	[NP_F_ACCESS_YOUNG] = { "numaplace_access_young_pages_total",
				"Pages access scans reported young (accessed)." },
	[NP_F_ACCESS_CLEARED] = { "numaplace_access_cleared_pages_total",
				  "Pages whose young bit an access scan cleared." },
	[NP_F_ACCESS_FLUSHES] = { "numaplace_access_tlb_flushes_total",
				  "TLB flushes done for access scans (QUERY_FLUSH_TLB)." },
	[NP_F_MIGRATE_CALLS] = { "numaplace_migrate_calls_total",
				 "NUMAPLACE_IOC_MIGRATE calls." },
	[NP_F_BYTES] = { "numaplace_copied_bytes_total",
			 "Bytes of pages migrated (copied once each)." },
	[NP_F_DMA] = { "numaplace_dma_pages_total",
		       "Pages a DMA engine copied." },
	[NP_F_DMA_FALLBACK] = { "numaplace_dma_fallback_pages_total",
				"Pages the CPU copied after a DMA error." },
	[NP_F_RETRY_PASSES] = { "numaplace_migrate_retry_passes_total",
				"Passes a migration made again over busy pages." },
	[NP_F_PAGES] = { "numaplace_migrated_pages_total",
			 "Base pages migrated onto (in) or off (out) a node." },
	[NP_F_FOLIOS] = { "numaplace_folios_total",
			  "Folios migrated onto (in) or off (out) a node, by folio order." },
	[NP_F_FAILED] = { "numaplace_failed_pages_total",
			  "Pages that did not migrate, by errno (OTHER: any other reason)." },
	[NP_F_PHASE] = { "numaplace_phase_seconds_total",
			 "Time spent migrating, by engine and phase." },
};

/* Text sections, in the order they print. */
enum {
	NP_S_MAIN, NP_S_ACCESS, NP_S_FAIL, NP_S_PHASE, NP_S_NODE, NP_S_FOLIO,
	NP_S_NR
};

static const struct np_section np_st_secs[NP_S_NR] = {
	[NP_S_MAIN] = { "", "                            total          rate\n",
			"%-16s", "", 0 },
	[NP_S_ACCESS] = { "\naccess scan (QUERY_ACCESS)\n", NULL, "  %-14s", "",
			  0 },
	[NP_S_FAIL] = { "\nfailed pages by reason\n", NULL, "  %-14s",
			"  (none)\n", 0 },
	[NP_S_PHASE] = { "\nmigration time by engine and phase (seconds)\n",
			 "\nmigration time by engine and phase (seconds; rate: seconds per second)\n",
			 "  %-6s %-7s", "  (none)\n", 0 },
	[NP_S_NODE] = { "\nnode           pages in        pages out\n",
			"\nnode           pages in        pages out          in/s         out/s\n",
			"%-6s", "", 0 },
	[NP_S_FOLIO] = { "\nnode   order        folios in       folios out\n",
			 "\nnode   order        folios in       folios out          in/s         out/s\n",
			 "%-6s %5s", "\nno folio migrated yet\n", 1 },
};

/* Every counter: its JSON key, text row, section, family and unit. */
enum {
	NP_M_QUERY_CALLS, NP_M_QUERY_PAGES, NP_M_QUERY_RUNS, NP_M_ACCESS_CALLS,
	NP_M_ACCESS_PAGES, NP_M_ACCESS_YOUNG, NP_M_ACCESS_CLEARED,
	NP_M_ACCESS_FLUSHES, NP_M_MIGRATE_CALLS, NP_M_BYTES, NP_M_DMA,
	NP_M_DMA_FALLBACK, NP_M_RETRY_PASSES, NP_M_FAILED, NP_M_PHASE,
	NP_M_PAGES_IN, NP_M_PAGES_OUT, NP_M_FOLIOS_IN, NP_M_FOLIOS_OUT, NP_M_NR
};

static const struct np_metric np_st_metrics[NP_M_NR] = {
	[NP_M_QUERY_CALLS] = { "query_calls", "query calls", NP_S_MAIN,
			       NP_F_QUERY_CALLS, .json_rate = 1 },
	[NP_M_QUERY_PAGES] = { "query_pages", "query pages", NP_S_MAIN,
			       NP_F_QUERY_PAGES, .json_rate = 1 },
	[NP_M_QUERY_RUNS] = { "query_runs", "query runs", NP_S_MAIN,
			      NP_F_QUERY_RUNS, .json_rate = 1 },
	[NP_M_ACCESS_CALLS] = { "access_calls", "calls", NP_S_ACCESS,
				NP_F_ACCESS_CALLS, .json_rate = 1 },
	[NP_M_ACCESS_PAGES] = { "access_pages", "pages", NP_S_ACCESS,
				NP_F_ACCESS_PAGES, .json_rate = 1 },
	[NP_M_ACCESS_YOUNG] = { "access_young", "young pages", NP_S_ACCESS,
				NP_F_ACCESS_YOUNG, .json_rate = 1 },
	[NP_M_ACCESS_CLEARED] = { "access_cleared", "cleared pages",
				  NP_S_ACCESS, NP_F_ACCESS_CLEARED,
				  .json_rate = 1 },
	[NP_M_ACCESS_FLUSHES] = { "access_flushes", "TLB flushes", NP_S_ACCESS,
				  NP_F_ACCESS_FLUSHES, .json_rate = 1 },
	[NP_M_MIGRATE_CALLS] = { "migrate_calls", "migrate calls", NP_S_MAIN,
				 NP_F_MIGRATE_CALLS, .json_rate = 1 },
	[NP_M_BYTES] = { "bytes_copied", "bytes copied", NP_S_MAIN, NP_F_BYTES,
			 .unit = NP_UNIT_BYTES, .json_rate = 1 },
	[NP_M_DMA] = { "dma_pages", "DMA pages", NP_S_MAIN, NP_F_DMA },
	[NP_M_DMA_FALLBACK] = { "dma_fallback", "DMA fallback", NP_S_MAIN,
				NP_F_DMA_FALLBACK },
	[NP_M_RETRY_PASSES] = { "migrate_retry_passes", "retry passes",
				NP_S_MAIN, NP_F_RETRY_PASSES },
	[NP_M_FAILED] = { NULL, NULL, NP_S_FAIL, NP_F_FAILED },
	[NP_M_PHASE] = { "ns", NULL, NP_S_PHASE, NP_F_PHASE,
			 .unit = NP_UNIT_NS },
	[NP_M_PAGES_IN] = { "pages_in", NULL, NP_S_NODE, NP_F_PAGES,
			    "direction", "in", .json_rate = 1 },
	[NP_M_PAGES_OUT] = { "pages_out", NULL, NP_S_NODE, NP_F_PAGES,
			     "direction", "out", .json_rate = 1 },
	[NP_M_FOLIOS_IN] = { "in", NULL, NP_S_FOLIO, NP_F_FOLIOS,
			     "direction", "in" },
	[NP_M_FOLIOS_OUT] = { "out", NULL, NP_S_FOLIO, NP_F_FOLIOS,
			      "direction", "out" },
};

/* A name for phase @p, the number when it has none (engines: util.c). */
static const char *np_phase_name(unsigned int p, char *buf, size_t size)
{
	if (p < NUMAPLACE_PHASE_MAX && np_phase_names[p])
		return np_phase_names[p];
	snprintf(buf, size, "phase%u", p);
	return buf;
}

static const char *np_fail_name(__u32 err, char *buf, size_t size)
{
	const char *name = err ? np_errno_name(err) : "OTHER";

	if (name)
		return name;
	snprintf(buf, size, "E%u", err);
	return buf;
}

static const struct np_st_node *np_st_find_node(const struct np_st *st,
						unsigned int node)
{
	size_t i;

	for (i = 0; st && i < st->nr_nodes; i++)
		if (st->nodes[i].node == node)
			return &st->nodes[i];
	return NULL;
}

static const struct np_st_fail *np_st_find_fail(const struct np_st *st,
						__u32 err)
{
	unsigned int i;

	for (i = 0; st && i < st->nr_fail; i++)
		if (st->fail[i].err == err)
			return &st->fail[i];
	return NULL;
}

/* A counter of @st, and the same one of @prev (NULL: no previous). */
#define NP_PV(prev, field)	((prev) ? &(prev)->field : NULL)

static void np_st_emit(struct np_out *o, unsigned int m, __u64 v,
		       const __u64 *pv, const struct np_label *l, unsigned int nr)
{
	np_print_u64(o, &np_st_metrics[m], l, nr, v, pv, 0);
}

/* A reason the previous sample did not have counted from 0. */
static const __u64 *np_fail_prev(const struct np_st *prev,
				 const struct np_st_fail *pf)
{
	static const __u64 zero;

	return pf ? &pf->pages : prev ? &zero : NULL;
}

/*
 * Failed pages by errno: the module's reasons always (for Prometheus, so
 * that their series never vanish), then any other the module sent.
 */
static void np_st_emit_fails(struct np_out *o, const struct np_st *st,
			     const struct np_st *prev)
{
	const struct np_st_fail *f, *pf;
	struct np_label l = { "errno", NULL };
	char b[32];
	unsigned int i;
	int r;

	/* The errnos the module counts failures for, always exported. */
	np_out_obj_open(o, "failed_pages", 0);
	for (r = 0; r < NUMAPLACE_FAIL_OTHER; r++) {
		f = np_st_find_fail(st, numaplace_fail_errno(r));
		pf = np_st_find_fail(prev, numaplace_fail_errno(r));
		l.value = np_fail_name(numaplace_fail_errno(r), b, sizeof(b));
		np_print_u64(o, &np_st_metrics[NP_M_FAILED], &l, 1,
			     f ? f->pages : 0, np_fail_prev(prev, pf),
			     f ? 0 : NP_OUT_PROM_ONLY);
	}
	for (i = 0; i < st->nr_fail; i++) {
		f = &st->fail[i];
		if (numaplace_fail_reason(-(int)f->err) != NUMAPLACE_FAIL_OTHER)
			continue;
		pf = np_st_find_fail(prev, f->err);
		l.value = np_fail_name(f->err, b, sizeof(b));
		np_st_emit(o, NP_M_FAILED, f->pages, np_fail_prev(prev, pf),
			   &l, 1);
	}
	np_out_close(o);
}

static void np_st_emit_phases(struct np_out *o, const struct np_st *st,
			      const struct np_st *prev)
{
	struct np_label l[2] = { { "engine", NULL }, { "phase", NULL } };
	char b1[32], b2[32];
	unsigned int e, p;

	np_out_arr_open(o, "phase_ns", 0);
	for (e = 0; e < NP_ST_ENGINES; e++) {
		for (p = 0; p < NP_ST_PHASES; p++) {
			if (!st->has_phase[e][p])
				continue;
			l[0].value = np_engine_name(e, b1, sizeof(b1));
			l[1].value = np_phase_name(p, b2, sizeof(b2));
			np_out_obj_open(o, NULL, 0);
			np_out_json_str(o, "engine", l[0].value, 0);
			np_out_json_str(o, "phase", l[1].value, 0);
			np_st_emit(o, NP_M_PHASE, st->phase_ns[e][p],
				   NP_PV(prev, phase_ns[e][p]), l, 2);
			np_out_close(o);
		}
	}
	np_out_close(o);
}

/* The access scan's counters: a section of their own in text. */
static void np_st_emit_access(struct np_out *o, const struct np_st *st,
			      const struct np_st *prev)
{
	np_st_emit(o, NP_M_ACCESS_CALLS, st->access_calls,
		   NP_PV(prev, access_calls), NULL, 0);
	np_st_emit(o, NP_M_ACCESS_PAGES, st->access_pages,
		   NP_PV(prev, access_pages), NULL, 0);
	np_st_emit(o, NP_M_ACCESS_YOUNG, st->access_young,
		   NP_PV(prev, access_young), NULL, 0);
	np_st_emit(o, NP_M_ACCESS_CLEARED, st->access_cleared,
		   NP_PV(prev, access_cleared), NULL, 0);
	np_st_emit(o, NP_M_ACCESS_FLUSHES, st->access_flushes,
		   NP_PV(prev, access_flushes), NULL, 0);
}

static void np_st_emit_node(struct np_out *o, const struct np_st_node *n,
			    const struct np_st_node *pn)
{
	struct np_label l[2] = { { "node", NULL }, { "order", NULL } };
	char node[16], order[16];
	unsigned int i;

	snprintf(node, sizeof(node), "%u", n->node);
	l[0].value = node;
	np_out_obj_open(o, NULL, NP_OUT_RATES);
	np_out_json_uint(o, "node", n->node, NP_OUT_RATES);
	/* A node the previous sample did not have: no rate. */
	np_st_emit(o, NP_M_PAGES_IN, n->pages_in, NP_PV(pn, pages_in), l, 1);
	np_st_emit(o, NP_M_PAGES_OUT, n->pages_out, NP_PV(pn, pages_out), l, 1);
	np_out_arr_open(o, "folios", 0);
	for (i = 0; i < NP_ST_ORDERS; i++) {
		if (!n->has_order[i])
			continue;
		snprintf(order, sizeof(order), "%u", i);
		l[1].value = order;
		np_out_obj_open(o, NULL, 0);
		np_out_json_uint(o, "order", i, 0);
		np_st_emit(o, NP_M_FOLIOS_IN, n->folios_in[i],
			   NP_PV(pn, folios_in[i]), l, 2);
		np_st_emit(o, NP_M_FOLIOS_OUT, n->folios_out[i],
			   NP_PV(pn, folios_out[i]), l, 2);
		np_out_close(o);
	}
	np_out_close(o);
	np_out_close(o);
}

void np_st_print(enum np_fmt fmt, const struct np_st *st,
		 const struct np_st *prev)
{
	struct np_out o;
	size_t i;

	if (np_out_init(&o, fmt, !!prev, prev ? st->t - prev->t : 0,
			np_st_fams, NP_F_NR, np_st_secs, NP_S_NR)) {
		fprintf(stderr, "numaplace stats: out of memory\n");
		return;
	}
	np_out_json_double(&o, "time", "%.3f", st->wall);
	np_st_emit(&o, NP_M_QUERY_CALLS, st->query_calls,
		   NP_PV(prev, query_calls), NULL, 0);
	np_st_emit(&o, NP_M_QUERY_PAGES, st->query_pages,
		   NP_PV(prev, query_pages), NULL, 0);
	np_st_emit(&o, NP_M_QUERY_RUNS, st->query_runs,
		   NP_PV(prev, query_runs), NULL, 0);
	np_st_emit_access(&o, st, prev);
	np_st_emit(&o, NP_M_MIGRATE_CALLS, st->migrate_calls,
		   NP_PV(prev, migrate_calls), NULL, 0);
	np_st_emit(&o, NP_M_BYTES, st->bytes_copied,
		   NP_PV(prev, bytes_copied), NULL, 0);
	np_st_emit(&o, NP_M_DMA, st->dma_pages, NP_PV(prev, dma_pages),
		   NULL, 0);
	np_st_emit(&o, NP_M_DMA_FALLBACK, st->dma_fallback,
		   NP_PV(prev, dma_fallback), NULL, 0);
	np_st_emit(&o, NP_M_RETRY_PASSES, st->migrate_retry_passes,
		   NP_PV(prev, migrate_retry_passes), NULL, 0);
	np_st_emit_fails(&o, st, prev);
	np_st_emit_phases(&o, st, prev);
	np_out_arr_open(&o, "nodes", NP_OUT_RATES);
	for (i = 0; i < st->nr_nodes; i++)
		np_st_emit_node(&o, &st->nodes[i],
				prev ? np_st_find_node(prev, st->nodes[i].node) :
				NULL);
	np_out_close(&o);
	np_out_end(&o);
}
