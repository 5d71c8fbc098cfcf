// SPDX-License-Identifier: GPL-2.0
/*
 * numaplace: the output layer (output.h): one call per value, rendered
 * as text, JSON or the Prometheus text exposition format.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "output.h"

static void np_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/*
 * Per second from @pv to @v over @dt seconds; NAN without a previous
 * value or for a counter that went back (the module was reloaded).
 */
static double np_out_rate(__u64 v, const __u64 *pv, double dt)
{
	if (!pv || v < *pv || dt <= 0)
		return NAN;
	return (v - *pv) / dt;
}

/* "1.5 GiB" */
static const char *np_human_bytes(double b, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned int u = 0;

	while (b >= 1024 && u + 1 < NP_ARRAY_SIZE(units)) {
		b /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", b, units[u]);
	return buf;
}

int np_out_init(struct np_out *o, enum np_fmt fmt, int has_prev, double dt,
		const struct np_family *fams, size_t nr_fams,
		const struct np_section *secs, size_t nr_secs)
{
	size_t i, nr = fmt == NP_FMT_PROM ? nr_fams :
		       fmt == NP_FMT_TEXT ? nr_secs : 0;

	*o = (struct np_out){ .fmt = fmt, .has_prev = has_prev, .dt = dt,
			      .fams = fams, .nr_fams = nr_fams,
			      .secs = secs, .nr_secs = nr_secs };
	if (nr_fams > NP_OUT_GROUPS || nr_secs > NP_OUT_GROUPS)
		return -EINVAL;
	/* Text sections and Prometheus families fill out of order. */
	for (i = 0; i < nr; i++) {
		o->grp[i].f = open_memstream(&o->grp[i].buf, &o->grp[i].len);
		if (!o->grp[i].f)
			goto close_groups;
	}
	if (fmt != NP_FMT_JSON)
		return 0;
	o->json.f = stdout;
	if (has_prev) {
		o->rates.f = open_memstream(&o->rates_buf, &o->rates_len);
		if (!o->rates.f)
			goto close_groups;
		fputc('{', o->rates.f);
		o->rates.close[++o->rates.depth] = '}';
	}
	fputc('{', o->json.f);
	o->json.close[++o->json.depth] = '}';
	return 0;

close_groups:
	while (i--) {
		fclose(o->grp[i].f);
		free(o->grp[i].buf);
	}
	return -ENOMEM;
}

/* ---- JSON -------------------------------------------------------------- */

/* The separator and key of a member at the current depth. */
static void np_json_member(struct np_out_json *j, const char *key)
{
	if (j->sep[j->depth])
		fputc(',', j->f);
	j->sep[j->depth] = 1;
	if (key) {
		np_json_str(j->f, key);
		fputc(':', j->f);
	}
}

static void np_json_open(struct np_out_json *j, const char *key, char open)
{
	if (j->depth + 1 >= NP_OUT_DEPTH)
		return;
	np_json_member(j, key);
	fputc(open, j->f);
	j->depth++;
	j->sep[j->depth] = 0;
	j->close[j->depth] = open == '{' ? '}' : ']';
}

static void np_json_close(struct np_out_json *j)
{
	if (j->depth <= 1)
		return;
	fputc(j->close[j->depth], j->f);
	j->depth--;
}

static void np_out_open(struct np_out *o, const char *key, char open,
			unsigned int flags)
{
	if (o->fmt != NP_FMT_JSON)
		return;
	np_json_open(&o->json, key, open);
	o->mirror &= ~(1U << o->json.depth);
	if ((flags & NP_OUT_RATES) && o->rates.f) {
		np_json_open(&o->rates, key, open);
		o->mirror |= 1U << o->json.depth;
	}
}

void np_out_obj_open(struct np_out *o, const char *key, unsigned int flags)
{
	np_out_open(o, key, '{', flags);
}

void np_out_arr_open(struct np_out *o, const char *key, unsigned int flags)
{
	np_out_open(o, key, '[', flags);
}

void np_out_close(struct np_out *o)
{
	if (o->fmt != NP_FMT_JSON)
		return;
	if (o->mirror & (1U << o->json.depth))
		np_json_close(&o->rates);
	o->mirror &= ~(1U << o->json.depth);
	np_json_close(&o->json);
}

void np_out_json_uint(struct np_out *o, const char *key,
		      unsigned long long v, unsigned int flags)
{
	if (o->fmt != NP_FMT_JSON)
		return;
	np_json_member(&o->json, key);
	fprintf(o->json.f, "%llu", v);
	if ((flags & NP_OUT_RATES) && o->rates.f) {
		np_json_member(&o->rates, key);
		fprintf(o->rates.f, "%llu", v);
	}
}

void np_out_json_str(struct np_out *o, const char *key, const char *s,
		     unsigned int flags)
{
	if (o->fmt != NP_FMT_JSON)
		return;
	np_json_member(&o->json, key);
	np_json_str(o->json.f, s);
	if ((flags & NP_OUT_RATES) && o->rates.f) {
		np_json_member(&o->rates, key);
		np_json_str(o->rates.f, s);
	}
}

void np_out_json_double(struct np_out *o, const char *key, const char *fmt,
			double v)
{
	if (o->fmt != NP_FMT_JSON)
		return;
	np_json_member(&o->json, key);
	fprintf(o->json.f, fmt, v);
}

static void np_json_value(struct np_out *o, const struct np_metric *m,
			  const struct np_label *labels, unsigned int nr,
			  __u64 v, const __u64 *pv)
{
	const char *key = m->json ? m->json : nr ? labels[nr - 1].value : "?";
	double r;

	np_json_member(&o->json, key);
	fprintf(o->json.f, "%llu", (unsigned long long)v);
	if (!m->json_rate || !o->rates.f)
		return;
	r = np_out_rate(v, pv, o->dt);
	np_json_member(&o->rates, key);
	if (isnan(r))
		fprintf(o->rates.f, "null");
	else
		fprintf(o->rates.f, "%.3f", r);
}

/* ---- text -------------------------------------------------------------- */

static void np_text_row_end(struct np_out_grp *g)
{
	if (!g->row[0])
		return;
	fprintf(g->f, "%s\n", g->rates);
	g->row[0] = 0;
	g->rates[0] = 0;
}

static void np_text_value(struct np_out *o, const struct np_metric *m,
			  const struct np_label *labels, unsigned int nr,
			  __u64 v, const __u64 *pv)
{
	const char *l[NP_OUT_LABELS] = { "", "", "" };
	struct np_out_grp *g;
	char name[NP_OUT_ROW], b[32];
	size_t len;
	unsigned int i;
	double r;

	if (m->section >= o->nr_secs)
		return;
	g = &o->grp[m->section];
	if (m->text) {
		l[0] = m->text;
	} else {
		for (i = 0; i < nr && i < NP_OUT_LABELS; i++)
			l[i] = labels[i].value;
	}
	snprintf(name, sizeof(name), o->secs[m->section].prefix, l[0], l[1],
		 l[2]);
	if (strcmp(name, g->row) || m->text) {
		np_text_row_end(g);
		snprintf(g->row, sizeof(g->row), "%s", name);
		fputs(name, g->f);
		g->rows++;
	}
	if (m->unit == NP_UNIT_NS)
		fprintf(g->f, " %16.6f", v / 1e9);
	else
		fprintf(g->f, " %16llu", (unsigned long long)v);

	len = strlen(g->rates);
	if (!o->has_prev) {
		if (m->unit == NP_UNIT_BYTES)
			snprintf(g->rates + len, sizeof(g->rates) - len, "  (%s)",
				 np_human_bytes(v, b, sizeof(b)));
		return;
	}
	r = np_out_rate(v, pv, o->dt);
	if (isnan(r))
		snprintf(g->rates + len, sizeof(g->rates) - len, "  %12s", "-");
	else if (m->unit == NP_UNIT_BYTES)
		snprintf(g->rates + len, sizeof(g->rates) - len, "  %10s/s",
			 np_human_bytes(r, b, sizeof(b)));
	else if (m->unit == NP_UNIT_NS)
		snprintf(g->rates + len, sizeof(g->rates) - len, "  %12.4f",
			 r / 1e9);
	else
		snprintf(g->rates + len, sizeof(g->rates) - len, "  %10.1f/s",
			 r);
}

/* ---- Prometheus -------------------------------------------------------- */

static void np_prom_value(struct np_out *o, const struct np_metric *m,
			  const struct np_label *labels, unsigned int nr,
			  __u64 v)
{
	const char *sep = "{";
	unsigned int i;
	FILE *f;

	if (m->family >= o->nr_fams)
		return;
	f = o->grp[m->family].f;
	fputs(o->fams[m->family].name, f);
	for (i = 0; i < nr; i++, sep = ",")
		fprintf(f, "%s%s=\"%s\"", sep, labels[i].name, labels[i].value);
	if (m->label) {
		fprintf(f, "%s%s=\"%s\"", sep, m->label, m->label_value);
		sep = ",";
	}
	if (*sep == ',')
		fputc('}', f);
	if (m->unit == NP_UNIT_NS)
		fprintf(f, " %.9f\n", v / 1e9);
	else
		fprintf(f, " %llu\n", (unsigned long long)v);
}

void np_print_u64(struct np_out *o, const struct np_metric *m,
		  const struct np_label *labels, unsigned int nr, __u64 v,
		  const __u64 *pv, unsigned int flags)
{
	if (o->fmt == NP_FMT_PROM) {
		np_prom_value(o, m, labels, nr, v);
		return;
	}
	if (flags & NP_OUT_PROM_ONLY)
		return;
	if (o->fmt == NP_FMT_JSON)
		np_json_value(o, m, labels, nr, v, pv);
	else
		np_text_value(o, m, labels, nr, v, pv);
}

/* ---- fields ------------------------------------------------------------ */

int np_out_begin(struct np_out *o, enum np_fmt fmt)
{
	return np_out_init(o, fmt, 0, 0, NULL, 0, NULL, 0);
}

/* The field shows as text: print its @fmt (of the value that follows). */
static int np_field_text(const struct np_out *o, enum np_print t,
			 const char *fmt)
{
	return o->fmt == NP_FMT_TEXT && (t & NP_PRINT_TEXT) && fmt;
}

/* The field is a JSON member: its separator and key are written. */
static int np_field_json(struct np_out *o, enum np_print t, const char *key)
{
	if (o->fmt != NP_FMT_JSON || !(t & NP_PRINT_JSON))
		return 0;
	np_json_member(&o->json, key);
	return 1;
}

/* An unsigned field: text by @fmt, JSON by @jfmt. */
static void np_print_u(struct np_out *o, enum np_print t, const char *key,
		       const char *fmt, const char *jfmt, unsigned long long v)
{
	if (np_field_text(o, t, fmt))
		printf(fmt, v);
	else if (np_field_json(o, t, key))
		fprintf(o->json.f, jfmt, v);
}

void np_print_uint(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt, unsigned long long v)
{
	np_print_u(o, t, key, fmt, "%llu", v);
}

void np_print_int(struct np_out *o, enum np_print t, const char *key,
		  const char *fmt, long long v)
{
	if (np_field_text(o, t, fmt))
		printf(fmt, v);
	else if (np_field_json(o, t, key))
		fprintf(o->json.f, "%lld", v);
}

void np_print_hex(struct np_out *o, enum np_print t, const char *key,
		  const char *fmt, unsigned long long v)
{
	np_print_u(o, t, key, fmt, "\"%#llx\"", v);
}

void np_print_float(struct np_out *o, enum np_print t, const char *key,
		    const char *fmt, int prec, double v)
{
	if (np_field_text(o, t, fmt))
		printf(fmt, v);
	else if (np_field_json(o, t, key)) {
		if (isfinite(v))
			fprintf(o->json.f, "%.*f", prec, v);
		else
			fputs("null", o->json.f);
	}
}

void np_print_str(struct np_out *o, enum np_print t, const char *key,
		  const char *fmt, const char *s)
{
	if (np_field_text(o, t, fmt))
		printf(fmt, s);
	else if (np_field_json(o, t, key))
		np_json_str(o->json.f, s);
}

void np_print_bool(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt, int v)
{
	if (np_field_text(o, t, fmt))
		printf(fmt, v ? "yes" : "no");
	else if (np_field_json(o, t, key))
		fputs(v ? "true" : "false", o->json.f);
}

void np_print_null(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt)
{
	if (np_field_text(o, t, fmt))
		fputs(fmt, stdout);
	else if (np_field_json(o, t, key))
		fputs("null", o->json.f);
}

void np_print_time(struct np_out *o, enum np_print t, const char *key,
		   const char *fmt, const struct timeval *tv)
{
	char hms[16], when[32];
	struct tm tm;

	if (np_field_text(o, t, fmt)) {
		localtime_r(&tv->tv_sec, &tm);
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		snprintf(when, sizeof(when), "%s.%03d", hms,
			 (int)(tv->tv_usec / 1000));
		printf(fmt, when);
	} else if (np_field_json(o, t, key)) {
		fprintf(o->json.f, "%ld.%03ld", (long)tv->tv_sec,
			(long)tv->tv_usec / 1000);
	}
}

void np_print_text(struct np_out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->fmt != NP_FMT_TEXT)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

void np_print_nodes(struct np_out *o, const char *key, const char *first,
		    const __u64 *mask, unsigned int nr, const __u64 *v)
{
	const char *sep = first;
	char name[16];
	unsigned int n;

	np_out_open(o, key, v ? '{' : '[', 0);
	for (n = 0; n < nr; n++) {
		if (!numaplace_node_isset(mask, n))
			continue;
		np_print_text(o, "%s", sep);
		sep = ",";
		if (!v) {
			np_print_uint(o, NP_PRINT_ANY, NULL, "%llu", n);
			continue;
		}
		snprintf(name, sizeof(name), "%u", n);
		np_print_text(o, "%u:", n);
		np_print_uint(o, NP_PRINT_ANY, name, "%llu", v[n]);
	}
	np_out_close(o);
}

/*
 * The name of the first bit of *@mask that has one, taken out of *@mask;
 * then, if the table says so, the bits left as one hex number (in @hex);
 * NULL at the end.
 */
static const char *np_names_next(const struct np_bits *b,
				 unsigned long long *mask, char *hex,
				 size_t size)
{
	size_t i;

	for (i = 0; i < b->nr_names; i++) {
		if (*mask & b->names[i].bit) {
			*mask &= ~b->names[i].bit;
			return b->names[i].name;
		}
	}
	if (!*mask || !b->unknown)
		return NULL;
	snprintf(hex, size, "%#llx", *mask);
	*mask = 0;
	return hex;
}

void np_print_names(struct np_out *o, enum np_print t, const char *key,
		    const char *fmt, const struct np_bits *b,
		    unsigned long long mask)
{
	char buf[NP_OUT_ROW], hex[24];
	const char *name;
	size_t len = 0;

	if (np_field_text(o, t, fmt)) {
		buf[0] = 0;
		while ((name = np_names_next(b, &mask, hex, sizeof(hex))) &&
		       len < sizeof(buf))
			len += snprintf(buf + len, sizeof(buf) - len, "%s%s",
					len ? b->sep : "", name);
		printf(fmt, buf[0] ? buf : b->none);
		return;
	}
	if (o->fmt != NP_FMT_JSON || !(t & NP_PRINT_JSON))
		return;
	np_out_arr_open(o, key, 0);
	while ((name = np_names_next(b, &mask, hex, sizeof(hex))))
		np_out_json_str(o, NULL, name, 0);
	np_out_close(o);
}

/* ---- the end ----------------------------------------------------------- */

static void np_out_flush_grp(struct np_out_grp *g)
{
	fclose(g->f);
	if (g->len)
		fwrite(g->buf, 1, g->len, stdout);
	free(g->buf);
	g->f = NULL;
	g->buf = NULL;
}

void np_out_end(struct np_out *o)
{
	const struct np_section *s;
	size_t i;

	switch (o->fmt) {
	case NP_FMT_TEXT:
		for (i = 0; i < o->nr_secs; i++) {
			s = &o->secs[i];
			np_text_row_end(&o->grp[i]);
			if (o->grp[i].rows || !s->head_if_any)
				fputs(o->has_prev && s->head_rates ?
				      s->head_rates : s->head, stdout);
			if (!o->grp[i].rows)
				fputs(s->empty, stdout);
			np_out_flush_grp(&o->grp[i]);
		}
		break;
	case NP_FMT_PROM:
		for (i = 0; i < o->nr_fams; i++) {
			printf("# HELP %s %s\n# TYPE %s counter\n",
			       o->fams[i].name, o->fams[i].help, o->fams[i].name);
			np_out_flush_grp(&o->grp[i]);
		}
		break;
	case NP_FMT_JSON:
		while (o->json.depth > 1)
			np_out_close(o);
		if (o->rates.f) {
			fputc('}', o->rates.f);
			fclose(o->rates.f);
			np_out_json_double(o, "interval", "%.3f", o->dt);
			np_json_member(&o->json, "rates");
			fwrite(o->rates_buf, 1, o->rates_len, stdout);
			free(o->rates_buf);
			o->rates.f = NULL;
		}
		fputs("}\n", stdout);
		break;
	}
}
