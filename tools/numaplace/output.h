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

#include <linux/types.h>

enum np_fmt { NP_FMT_TEXT, NP_FMT_JSON, NP_FMT_PROM };

enum np_unit {
	NP_UNIT_COUNT,		/* a number of things */
	NP_UNIT_BYTES,		/* text: also "(1.5 GiB)", rates in B/s */
	NP_UNIT_NS,		/* text and Prometheus: in seconds */
};

/* Sections (text) and families (Prometheus) a command may have. */
#define NP_OUT_GROUPS		16
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

/* @s as a JSON string, quoted and escaped. */
void np_json_str(FILE *f, const char *s);

#endif /* NP_OUTPUT_H */
