/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-report: every table of every run, computed once (tw_report.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tw_report.h"

const char *const tw_report_kind_name[TW_REPORT_N_KINDS] = {
	"overall", "book (all)", "trade (all)", "order (all)"};
const int tw_report_kind[TW_REPORT_N_KINDS] = {
	TW_STUDY_FEED, TW_LAT_BOOK, TW_LAT_TRADE, TW_LAT_ORDER};

/* The tail of the CDF past 0.995, ending at the max. */
static const double cdf_tail[] = {0.998, 0.999, 0.9995, 0.9999, 0.99999, 1.0};
#define CDF_BODY (TW_REPORT_CDF_POINTS - (int)(sizeof(cdf_tail) / sizeof(cdf_tail[0])))

double
tw_report_cdf_p(unsigned int i)
{
	if (i < CDF_BODY)
		return (double)(i + 1) / (CDF_BODY + 1);
	return cdf_tail[i - CDF_BODY];
}

double
tw_report_ratio(double one, double two)
{
	if (tw_study_is_missing(one) || tw_study_is_missing(two) || one == 0)
		return NAN;
	return two / one;
}

double
tw_report_load(const struct tw_report_run *run)
{
	if (run->series.span_s <= 0)
		return NAN;
	return (double)run->series.packets / run->series.span_s;
}

const char *
tw_report_speed(const struct tw_report_run *run, char *buf, size_t size)
{
	if (run->h.speed_milli == 0)
		snprintf(buf, size, "max");
	else
		snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, run->h.speed_milli / 1000,
			 run->h.speed_milli % 1000);
	return buf;
}

void
tw_report_stream_label(const struct tw_study_stream *st, char *buf, size_t size)
{
	static const char *const kind[3] = {"book", "trade", "order"};

	snprintf(buf, size, "%s %" PRId32, st->kind < 3 ? kind[st->kind] : "kind?",
		 st->instrument);
}

static int
study_run(struct tw_report *rep, struct tw_report_run *run)
{
	double p[TW_REPORT_CDF_POINTS];
	int rc;

	rc = tw_study_open(&run->s, &run->h, run->rec, run->h.count);
	for (int k = 0; rc == 0 && k < TW_REPORT_N_KINDS; k++)
		rc = tw_study_select(&run->s, tw_report_kind[k], true, 0, &run->kinds[k]);
	if (rc == 0) {
		run->stream_rows = calloc(rep->shown != 0 ? rep->shown : 1,
					  sizeof(*run->stream_rows));
		if (run->stream_rows == NULL)
			rc = -ENOMEM;
	}
	for (uint64_t i = 0; rc == 0 && i < rep->shown; i++)
		rc = tw_study_select(&run->s, rep->streams[i].kind, false,
				     rep->streams[i].instrument, &run->stream_rows[i]);
	if (rc == 0)
		rc = tw_study_model(&run->s, rep->opt.min_count, true, &run->model);
	if (rc == 0)
		rc = tw_study_floors(&run->s, &run->model, rep->opt.windows, &run->floors);
	if (rc == 0)
		rc = tw_study_ahead_table(&run->s, run->ahead, &run->share_zero);
	if (rc == 0)
		rc = tw_study_tick_to_trade(&run->s, &run->t2t);
	if (rc == 0)
		rc = tw_study_parts(&run->s, &run->parts);
	if (rc == 0)
		rc = tw_study_series(&run->s, TW_REPORT_MIN_WINDOWS, &run->series);
	for (unsigned int i = 0; i < TW_REPORT_CDF_POINTS; i++)
		p[i] = tw_report_cdf_p(i);
	for (int k = 0; rc == 0 && k < 3; k++) {
		int64_t n = tw_study_quantiles(&run->s, k, p, TW_REPORT_CDF_POINTS, run->cdf[k]);

		rc = n < 0 ? (int)n : 0;
	}
	return rc;
}

int
tw_report_study(struct tw_report *rep)
{
	struct tw_study first;
	int64_t n;
	int rc;

	/* the streams shown are run 1's busiest, looked up in both runs */
	rc = tw_study_open(&first, &rep->runs[0].h, rep->runs[0].rec, rep->runs[0].h.count);
	if (rc != 0)
		return rc;
	n = tw_study_streams(&first, &rep->streams);
	tw_study_close(&first);
	if (n < 0)
		return (int)n;
	rep->n_streams = (uint64_t)n;
	rep->shown = rep->n_streams < rep->opt.streams ? rep->n_streams : rep->opt.streams;
	for (int r = 0; r < rep->n_runs; r++) {
		rc = study_run(rep, &rep->runs[r]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void
tw_report_free(struct tw_report *rep)
{
	for (int r = 0; r < rep->n_runs; r++) {
		struct tw_report_run *run = &rep->runs[r];

		tw_study_model_free(&run->model);
		tw_study_floors_free(&run->floors);
		tw_study_series_free(&run->series);
		tw_study_close(&run->s);
		free(run->stream_rows);
		free(run->rec);
		run->stream_rows = NULL;
		run->rec = NULL;
	}
	free(rep->streams);
	rep->streams = NULL;
}
