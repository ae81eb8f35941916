/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-report --json: the study as one JSON object (keys snake_case and
 * stable; a missing statistic is null, never NaN):
 *   format, tool, ratio_of, runs[] (one per file: facts, percentiles,
 *   per_message_model, floors, ahead, tick_to_trade, cdf, windows) and, with
 *   two files, comparison (ratios FILE2 / FILE1).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tw_report.h"

#define JSON_FORMAT 1
#define JSON_DEPTH 16

/* A streaming writer: remembers whether the open container has a member. */
struct json {
	FILE *f;
	int depth;
	bool has_member[JSON_DEPTH];
};

static void
j_string(struct json *j, const char *s)
{
	fputc('"', j->f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(j->f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(j->f, "\\u%04x", c);
		else
			fputc(c, j->f);
	}
	fputc('"', j->f);
}

/* The separator and, inside an object, the key of the next member. */
static void
j_member(struct json *j, const char *key)
{
	if (j->has_member[j->depth])
		fputc(',', j->f);
	j->has_member[j->depth] = true;
	if (key != NULL) {
		j_string(j, key);
		fputc(':', j->f);
	}
}

static void
j_open(struct json *j, const char *key, char bracket)
{
	j_member(j, key);
	fputc(bracket, j->f);
	if (j->depth + 1 < JSON_DEPTH)
		j->depth++;
	j->has_member[j->depth] = false;
}

static void
j_close(struct json *j, char bracket)
{
	fputc(bracket, j->f);
	if (j->depth > 0)
		j->depth--;
}

static void
j_num(struct json *j, const char *key, double v)
{
	j_member(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.10g", v);
}

static void
j_u64(struct json *j, const char *key, uint64_t v)
{
	j_member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

static void
j_str(struct json *j, const char *key, const char *s)
{
	j_member(j, key);
	j_string(j, s);
}

static void
j_bool(struct json *j, const char *key, int v)
{
	j_member(j, key);
	fputs(v < 0 ? "null" : v ? "true" : "false", j->f);
}

static void
j_null(struct json *j, const char *key)
{
	j_member(j, key);
	fputs("null", j->f);
}

static void
j_pct_values(struct json *j, const struct tw_study_row *row)
{
	j_u64(j, "count", row->count);
	for (int i = 0; i < TW_STUDY_N_PCT; i++)
		j_num(j, tw_study_pct_key[i], row->v[i]);
}

static void
j_pct_row(struct json *j, const char *stream, const char *kind, bool has_instrument,
	  int32_t instrument, const struct tw_study_row *row)
{
	j_open(j, NULL, '{');
	j_str(j, "stream", stream);
	j_str(j, "kind", kind);
	if (has_instrument)
		j_u64(j, "instrument", (uint64_t)(int64_t)instrument);
	else
		j_null(j, "instrument");
	j_pct_values(j, row);
	j_close(j, '}');
}

static const char *const kind_key[TW_REPORT_N_KINDS] = {"overall", "book", "trade", "order"};

static void
ahead_label(const struct tw_study_ahead_row *a, char *buf, size_t size)
{
	if (a->hi == UINT32_MAX)
		snprintf(buf, size, "%" PRIu32 "+", a->lo);
	else if (a->hi == a->lo)
		snprintf(buf, size, "%" PRIu32, a->lo);
	else
		snprintf(buf, size, "%" PRIu32 "-%" PRIu32, a->lo, a->hi);
}

static void
json_facts(struct json *j, const struct tw_report_run *run)
{
	const struct tw_lat_header *h = &run->h;
	char speed[32];

	j_str(j, "file", run->path);
	j_str(j, "label", h->label);
	j_str(j, "topology", h->label);
	j_bool(j, "paced", (h->flags & TW_LAT_FLAG_PACED) != 0);
	j_bool(j, "one_thread", (h->flags & TW_LAT_FLAG_ONE_THREAD) != 0);
	j_bool(j, "nic_t0", (h->flags & TW_LAT_FLAG_NIC_T0) != 0);
	j_u64(j, "speed_milli", h->speed_milli);
	if (h->speed_milli == 0)
		j_null(j, "speed");
	else
		j_num(j, "speed", (double)h->speed_milli / 1000.0);
	j_str(j, "speed_text", tw_report_speed(run, speed, sizeof(speed)));
	j_u64(j, "tsc_hz", h->tsc_hz);
	j_u64(j, "records", h->count);
	j_u64(j, "dropped_records", h->dropped);
	j_u64(j, "rx_drops", h->rx_drops);
	j_u64(j, "player_packets", h->player_packets);
	j_open(j, "player_error_ns", '{');
	j_u64(j, "p50", h->player_err_ns[0]);
	j_u64(j, "p99", h->player_err_ns[1]);
	j_u64(j, "p99_9", h->player_err_ns[2]);
	j_u64(j, "max", h->player_err_ns[3]);
	j_close(j, '}');
	j_num(j, "capture_seconds", run->series.span_s);
	j_u64(j, "packets", run->series.packets);
	j_num(j, "load_packets_per_s", tw_report_load(run));
	j_num(j, "peak_packets_per_s",
	      run->floors.n_dense > 0 ? (double)run->floors.dense[0].packets : NAN);
}

static void
json_percentiles(struct json *j, const struct tw_report *rep, const struct tw_report_run *run)
{
	j_open(j, "percentiles", '[');
	for (int k = 0; k < TW_REPORT_N_KINDS; k++)
		j_pct_row(j, kind_key[k], kind_key[k], false, 0, &run->kinds[k]);
	for (uint64_t i = 0; i < rep->shown; i++) {
		char label[40];
		static const char *const kind[3] = {"book", "trade", "order"};

		tw_report_stream_label(&rep->streams[i], label, sizeof(label));
		j_pct_row(j, label, rep->streams[i].kind < 3 ? kind[rep->streams[i].kind] : "?",
			  true, rep->streams[i].instrument, &run->stream_rows[i]);
	}
	j_close(j, ']');
	j_u64(j, "streams_total", rep->n_streams);
}

static void
json_model(struct json *j, const struct tw_study_model *m)
{
	j_open(j, "per_message_model", '{');
	j_u64(j, "min_count", m->min_count);
	j_num(j, "floor_ns", m->floor_ns);
	j_num(j, "slope_ns", m->slope_ns);
	j_num(j, "r2", m->r2);
	j_u64(j, "points", m->points);
	j_open(j, "ladder", '[');
	for (uint32_t i = 0; i < m->n_rungs; i++) {
		const struct tw_study_rung *g = &m->rungs[i];

		j_open(j, NULL, '{');
		j_u64(j, "idx", g->idx);
		j_u64(j, "count", g->count);
		j_num(j, "median_ns", g->median_ns);
		j_num(j, "p99_ns", g->p99_ns);
		j_bool(j, "used", g->used);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_close(j, '}');
}

static void
json_floors(struct json *j, const struct tw_report_run *run)
{
	const struct tw_study_floors *f = &run->floors;

	j_open(j, "floors", '{');
	j_num(j, "fit_ns", f->fit_ns);
	j_u64(j, "fit_points", run->model.points);
	j_num(j, "idx0_ns", f->idx0_ns);
	j_u64(j, "idx0_count", f->idx0_count);
	j_num(j, "dense_ns", f->dense_ns);
	j_u64(j, "dense_count", f->dense_count);
	j_open(j, "dense_windows", '[');
	for (uint32_t w = 0; w < f->n_dense; w++) {
		j_open(j, NULL, '{');
		j_num(j, "start_s", f->dense[w].start_s);
		j_u64(j, "packets", f->dense[w].packets);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_num(j, "spread", f->spread);
	j_num(j, "agree_threshold", 0.10);
	j_bool(j, "agree", f->agree);
	j_close(j, '}');
}

static void
json_ahead(struct json *j, const struct tw_report_run *run)
{
	j_open(j, "ahead", '{');
	j_num(j, "share_ahead_zero", run->share_zero);
	j_open(j, "buckets", '[');
	for (unsigned int b = 0; b < TW_STUDY_N_AHEAD; b++) {
		const struct tw_study_ahead_row *a = &run->ahead[b];
		char label[24];

		ahead_label(a, label, sizeof(label));
		j_open(j, NULL, '{');
		j_str(j, "ahead", label);
		j_u64(j, "lo", a->lo);
		if (a->hi == UINT32_MAX)
			j_null(j, "hi");
		else
			j_u64(j, "hi", a->hi);
		j_u64(j, "count", a->count);
		j_num(j, "p50_ns", a->median_ns);
		j_num(j, "p99_ns", a->p99_ns);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_close(j, '}');
}

static void
json_parts(struct json *j, const struct tw_study_parts *t)
{
	static const char *const name[4] = {"t1_t0", "to_decode", "decode_group", "signal"};
	const struct tw_study_row *rows[4] = {&t->total, &t->to_decode, &t->decode, &t->signal};

	j_open(j, "parts_ahead_zero", '{');
	for (int p = 0; p < 4; p++) {
		j_open(j, name[p], '{');
		j_pct_values(j, rows[p]);
		j_close(j, '}');
	}
	j_close(j, '}');
}

static void
json_tick_to_trade(struct json *j, const struct tw_study_t2t *t)
{
	static const char *const part[3] = {"t1_t0", "t2_t1", "t3_t2"};

	j_open(j, "tick_to_trade", '{');
	j_open(j, "total", '{');
	j_pct_values(j, &t->total);
	j_close(j, '}');
	j_open(j, "parts", '{');
	for (int p = 0; p < 3; p++) {
		j_open(j, part[p], '{');
		j_pct_values(j, &t->part[p]);
		j_close(j, '}');
	}
	j_close(j, '}');
	j_close(j, '}');
}

static void
json_cdf(struct json *j, const struct tw_report_run *run)
{
	j_open(j, "cdf", '{');
	j_open(j, "p", '[');
	for (unsigned int i = 0; i < TW_REPORT_CDF_POINTS; i++)
		j_num(j, NULL, tw_report_cdf_p(i));
	j_close(j, ']');
	for (int k = 0; k < 3; k++) {
		j_open(j, kind_key[k + 1], '{');
		j_u64(j, "count", run->kinds[k + 1].count);
		j_open(j, "ns", '[');
		for (unsigned int i = 0; i < TW_REPORT_CDF_POINTS; i++)
			j_num(j, NULL, run->cdf[k][i]);
		j_close(j, ']');
		j_close(j, '}');
	}
	j_close(j, '}');
}

static void
json_windows(struct json *j, const struct tw_study_series *s)
{
	j_open(j, "windows", '{');
	j_num(j, "length_s", s->length_s);
	j_num(j, "span_s", s->span_s);
	j_open(j, "series", '[');
	for (uint32_t i = 0; i < s->n_slices; i++) {
		const struct tw_study_slice *w = &s->slices[i];

		j_open(j, NULL, '{');
		j_num(j, "start_s", w->start_s);
		j_u64(j, "packets", w->packets);
		j_num(j, "packets_per_s", w->packets_per_s);
		j_u64(j, "records", w->records);
		j_num(j, "p99_ns", w->p99_ns);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_close(j, '}');
}

static void
json_ratio_row(struct json *j, const char *stream, const struct tw_study_row *one,
	       const struct tw_study_row *two)
{
	j_open(j, NULL, '{');
	j_str(j, "stream", stream);
	for (int i = 0; i < TW_STUDY_N_PCT; i++)
		j_num(j, tw_study_pct_key[i], tw_report_ratio(one->v[i], two->v[i]));
	j_close(j, '}');
}

static void
json_comparison(struct json *j, const struct tw_report *rep)
{
	const struct tw_report_run *a = &rep->runs[0], *b = &rep->runs[1];

	j_open(j, "comparison", '{');
	j_str(j, "ratio_of", "file2/file1");
	j_str(j, "file1", a->h.label);
	j_str(j, "file2", b->h.label);
	j_open(j, "percentiles", '[');
	for (int k = 0; k < TW_REPORT_N_KINDS; k++)
		json_ratio_row(j, kind_key[k], &a->kinds[k], &b->kinds[k]);
	for (uint64_t i = 0; i < rep->shown; i++) {
		char label[40];

		tw_report_stream_label(&rep->streams[i], label, sizeof(label));
		json_ratio_row(j, label, &a->stream_rows[i], &b->stream_rows[i]);
	}
	j_close(j, ']');
	j_open(j, "floors", '{');
	j_num(j, "fit", tw_report_ratio(a->floors.fit_ns, b->floors.fit_ns));
	j_num(j, "idx0", tw_report_ratio(a->floors.idx0_ns, b->floors.idx0_ns));
	j_num(j, "dense", tw_report_ratio(a->floors.dense_ns, b->floors.dense_ns));
	j_close(j, '}');
	j_num(j, "slope", tw_report_ratio(a->model.slope_ns, b->model.slope_ns));
	j_num(j, "share_ahead_zero", tw_report_ratio(a->share_zero, b->share_zero));
	j_open(j, "ahead", '[');
	for (unsigned int k = 0; k < TW_STUDY_N_AHEAD; k++) {
		char label[24];

		ahead_label(&a->ahead[k], label, sizeof(label));
		j_open(j, NULL, '{');
		j_str(j, "ahead", label);
		j_num(j, "p50", tw_report_ratio(a->ahead[k].median_ns, b->ahead[k].median_ns));
		j_num(j, "p99", tw_report_ratio(a->ahead[k].p99_ns, b->ahead[k].p99_ns));
		j_close(j, '}');
	}
	j_close(j, ']');
	j_open(j, "tick_to_trade", '{');
	j_num(j, "p50", tw_report_ratio(a->t2t.total.v[0], b->t2t.total.v[0]));
	j_num(j, "p99", tw_report_ratio(a->t2t.total.v[2], b->t2t.total.v[2]));
	j_close(j, '}');
	j_close(j, '}');
}

int
tw_report_json(const struct tw_report *rep, const char *path)
{
	struct json j = {.f = fopen(path, "w")};
	int rc = 0;

	if (j.f == NULL)
		return -errno;
	j_open(&j, NULL, '{');
	j_str(&j, "tool", "tickwire-report");
	j_u64(&j, "format", JSON_FORMAT);
	j_str(&j, "ratio_of", "file2/file1");
	j_u64(&j, "windows_k", rep->opt.windows);
	j_open(&j, "runs", '[');
	for (int r = 0; r < rep->n_runs; r++) {
		const struct tw_report_run *run = &rep->runs[r];

		j_open(&j, NULL, '{');
		json_facts(&j, run);
		json_percentiles(&j, rep, run);
		json_model(&j, &run->model);
		json_floors(&j, run);
		json_ahead(&j, run);
		json_tick_to_trade(&j, &run->t2t);
		json_parts(&j, &run->parts);
		json_cdf(&j, run);
		json_windows(&j, &run->series);
		j_close(&j, '}');
		fputc('\n', j.f);
	}
	j_close(&j, ']');
	if (rep->n_runs == 2)
		json_comparison(&j, rep);
	else
		j_null(&j, "comparison");
	j_close(&j, '}');
	fputc('\n', j.f);
	if (ferror(j.f))
		rc = -EIO;
	if (fclose(j.f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}
