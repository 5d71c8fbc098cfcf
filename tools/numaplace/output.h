/* SPDX-License-Identifier: GPL-2.0 */
/*
 * numaplace: one output layer for the counters (after ethtool's
 * print_u64(PRINT_ANY, ...)): a command emits each value once, with its
 * labels, and the layer renders it as a text table, one JSON object per
 * line or the Prometheus text exposition format.
 *
 * - text: each value is a cell of a row of a section (struct np_section);
 *   the row is named by its labels (the section's prefix format), and its
 *   rate cells follow its value cells. Sections print in their order.
 * - JSON: members in the order emitted, in the objects and arrays the
 *   command opens; with a previous sample the rates of the metrics that
 *   have @json_rate go to a "rates" object at the end, in the containers
 *   opened with NP_OUT_RATES.
 * - Prometheus: each value is a sample of its family (struct np_family),
 *   with the call's labels and the metric's fixed one; families print in
 *   their order, each with its HELP and TYPE lines, samples or not.
 */
#ifndef NP_OUTPUT_H
#define NP_OUTPUT_H

#include <stdio.h>
#include <sys/time.h>

#include <linux/types.h>

enum np_fmt { NP_FMT_TEXT, NP_FMT_JSON, NP_FMT_PROM };

enum np_unit {
	NP_UNIT_COUNT,		/* a number of things */
	NP_UNIT_BYTES,		/* text: also "(1.5 GiB)", rates in B/s */
	NP_UNIT_NS,		/* text and Prometheus: in seconds */
};

/*
 * Sections (text) and families (Prometheus) a command may have: stats has
 * 17 families, and room for a few more (288 bytes of stack each).
 */
#define NP_OUT_GROUPS		24
/* Nesting of JSON containers. */
#define NP_OUT_DEPTH		8
/* Labels of one value. */
#define NP_OUT_LABELS		3
/* Bytes of a text row's name or its pending rate cells. */
#define NP_OUT_ROW		128

struct np_family {
	const char *name;	/* numaplace_query_calls_total */
	const char *help;	/* the HELP line's text */
};

struct np_section {
	const char *head;	/* printed before the rows */
	const char *head_rates;	/* instead of @head, with rates; NULL: @head */
	const char *prefix;	/* a row's name from its labels ("%-6s %5s") */
	const char *empty;	/* printed when there are no rows */
	int head_if_any;	/* @head only when there are rows */
};

/**
 * struct np_metric - how one counter is rendered
 * @json: its JSON key; NULL: the value of the call's last label
 * @text: a row of its own with this name; NULL: a cell of the row the
 *	call's labels name
 * @section: its text section
 * @family: its Prometheus family
 * @label, @label_value: a fixed Prometheus label ("direction", "in"),
 *	after the call's; NULL for none
 * @unit: what the value counts
 * @json_rate: with a previous sample, its rate is in the JSON "rates"
 */
struct np_metric {
	const char *json;
	const char *text;
	unsigned int section;
	unsigned int family;
	const char *label, *label_value;
	enum np_unit unit;
	int json_rate;
};

struct np_label {
	const char *name;	/* Prometheus label name */
	const char *value;
};

/* Flags of the calls below. */
#define NP_OUT_RATES		0x1	/* JSON: mirrored in the "rates" */
#define NP_OUT_PROM_ONLY	0x2	/* a sample text and JSON do not show */

struct np_out_grp {
	FILE *f;
	char *buf;
	size_t len;
	int rows;
	char row[NP_OUT_ROW];		/* text: the open row's name */
	char rates[NP_OUT_ROW];		/* text: its rate cells */
};

struct np_out_json {
	FILE *f;
	int depth;
	int sep[NP_OUT_DEPTH];		/* a member was written at depth */
	char close[NP_OUT_DEPTH];	/* '}' or ']' */
};

struct np_out {
	enum np_fmt fmt;
	int has_prev;			/* rates are drawn */
	double dt;			/* seconds since the previous sample */
	const struct np_family *fams;
	size_t nr_fams;
	const struct np_section *secs;
	size_t nr_secs;
	struct np_out_grp grp[NP_OUT_GROUPS];
	struct np_out_json json, rates;
	char *rates_buf;
	size_t rates_len;
	unsigned int mirror;		/* depths mirrored in the rates */
};

/*
 * Start an output in @fmt; @has_prev: rates over @dt seconds. 0, or
 * -ENOMEM / -EINVAL (too many sections or families).
 */
int np_out_init(struct np_out *o, enum np_fmt fmt, int has_prev, double dt,
		const struct np_family *fams, size_t nr_fams,
		const struct np_section *secs, size_t nr_secs);
/* Print everything (JSON: the rates and the closing brace) and free. */
void np_out_end(struct np_out *o);

/* JSON containers (no-ops otherwise); @key NULL inside an array. */
void np_out_obj_open(struct np_out *o, const char *key, unsigned int flags);
void np_out_arr_open(struct np_out *o, const char *key, unsigned int flags);
void np_out_close(struct np_out *o);
/* JSON-only members (labels, times). */
void np_out_json_uint(struct np_out *o, const char *key,
		      unsigned long long v, unsigned int flags);
void np_out_json_str(struct np_out *o, const char *key, const char *s,
		     unsigned int flags);
void np_out_json_double(struct np_out *o, const char *key, const char *fmt,
			double v);

/*
 * One counter: @v now, *@pv in the previous sample (NULL: none, so no
 * rate), with @nr labels.
 */
void np_print_u64(struct np_out *o, const struct np_metric *m,
		  const struct np_label *labels, unsigned int nr, __u64 v,
		  const __u64 *pv, unsigned int flags);

/*
 * ---- fields ------------------------------------------------------------
 *
 * A command that prints records rather than counters (info, query,
 * migrate, watch, monitor) emits each field once, as iproute2's
 * print_uint(PRINT_ANY, key, fmt, v): @t says where it shows, @key is its
 * JSON member name (NULL inside an array) and @fmt its text, a printf
 * format of the one value (NULL: not shown as text). Text goes to stdout
 * in the order emitted; JSON members go in the containers open.
 * Prometheus shows no fields.
 */
enum np_print {
	NP_PRINT_TEXT = 1,
	NP_PRINT_JSON = 2,
	NP_PRINT_ANY = NP_PRINT_TEXT | NP_PRINT_JSON,
};

/* An output of fields only: np_out_init() without counters or rates. */
int np_out_begin(struct np_out *o, enum np_fmt fmt);

void np_print_uint(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt, unsigned long long v);
void np_print_int(struct np_out *o, enum np_print t, const char *key,
		  const char *fmt, long long v);
/* JSON: a string, "0x7f00" (addresses, masks). */
void np_print_hex(struct np_out *o, enum np_print t, const char *key,
		  const char *fmt, unsigned long long v);
/* JSON: @prec decimals; null when @v is not finite. */
void np_print_float(struct np_out *o, enum np_print t, const char *key,
		    const char *fmt, int prec, double v);
void np_print_str(struct np_out *o, enum np_print t, const char *key,
		  const char *fmt, const char *s);
/* JSON: true or false; text: @fmt of "yes" or "no". */
void np_print_bool(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt, int v);
/* JSON: null; text: @fmt as it is. */
void np_print_null(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt);
/*
 * A wall-clock time: JSON seconds with milliseconds (1764672000.123),
 * text the local time of day by @fmt's one %s ("10:40:26.123").
 */
void np_print_time(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt, const struct timeval *tv);
/* Text only: labels, headings, separators. */
void np_print_text(struct np_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The nodes set in @mask, below @nr: with @v, each node's value, a JSON
 * object {"0":12,"1":0} and text "0:12,1:0"; without, a JSON array of
 * the nodes and text "0,1". Text: @first before the first node.
 */
void np_print_nodes(struct np_out *o, const char *key, const char *first,
		    const __u64 *mask, unsigned int nr, const __u64 *v);

struct np_bits;
/*
 * The names of @mask's bits: a JSON array of strings, or text joined by
 * the table's separator (its "none" without a bit), by @fmt's one %s.
 */
void np_print_names(struct np_out *o, enum np_print t, const char *key,
		    const char *fmt, const struct np_bits *b,
		    unsigned long long mask);

#endif /* NP_OUTPUT_H */
