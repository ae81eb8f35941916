/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-report's internals shared by its text (tickwire-report.c) and
 * JSON (tw_report_json.c) output: one run per input file, every table
 * computed once by tw_report_study().
 */
#ifndef TICKWIRE_TW_REPORT_H
#define TICKWIRE_TW_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "tw_latency.h"
#include "tw_study.h"

/** Rows of the kind table: overall (book and trade), book, trade, order. */
#define TW_REPORT_N_KINDS 4

/** Probabilities of the CDF points written to the JSON. */
#define TW_REPORT_CDF_POINTS 205

/** Windows the series over capture time aims at, at least. */
#define TW_REPORT_MIN_WINDOWS 50

struct tw_report_options {
	uint64_t streams;                  /**< --streams: busiest streams shown */
	uint32_t windows;                  /**< --windows: K densest windows */
	uint64_t min_count;                /**< --min-count: records per fitted idx */
	const char *json;                  /**< --json FILE or NULL */
};

struct tw_report_run {
	const char *path;
	struct tw_lat_header h;
	struct tw_lat_record *rec;
	struct tw_study s;
	struct tw_study_row kinds[TW_REPORT_N_KINDS];
	struct tw_study_row *stream_rows;  /**< for the streams chosen from run 1 */
	struct tw_study_model model;
	struct tw_study_floors floors;
	struct tw_study_ahead_row ahead[TW_STUDY_N_AHEAD];
	double share_zero;
	struct tw_study_t2t t2t;
	struct tw_study_parts parts;
	struct tw_study_series series;
	double cdf[3][TW_REPORT_CDF_POINTS]; /**< book, trade, order */
};

/** The run set: one or two files and the streams shown for both. */
struct tw_report {
	struct tw_report_options opt;
	struct tw_report_run runs[2];
	int n_runs;
	struct tw_study_stream *streams;   /**< busiest first, of run 1 */
	uint64_t n_streams;                /**< all of run 1's streams */
	uint64_t shown;                    /**< min(n_streams, opt.streams) */
};

extern const char *const tw_report_kind_name[TW_REPORT_N_KINDS];
extern const int tw_report_kind[TW_REPORT_N_KINDS];

/** Probability of CDF point @p i: 0.005 .. 0.995 by 0.005, then the tail to 1 (max). */
double tw_report_cdf_p(unsigned int i);

/** Compute every table of every run. @return 0 or a negative errno. */
int tw_report_study(struct tw_report *rep);

/** Free what tw_report_study() and the loading allocated. */
void tw_report_free(struct tw_report *rep);

/** FILE2 / FILE1, NaN unless both are numbers and FILE1's is not 0. */
double tw_report_ratio(double one, double two);

/** Mean packets per second of capture time, NaN when not defined. */
double tw_report_load(const struct tw_report_run *run);

/** "max" for unpaced runs, else speed_milli / 1000 as text. */
const char *tw_report_speed(const struct tw_report_run *run, char *buf, size_t size);

/** Label of stream @p i of rep->streams ("book 12345"). */
void tw_report_stream_label(const struct tw_study_stream *st, char *buf, size_t size);

/** Write the JSON document. @return 0 or a negative errno. */
int tw_report_json(const struct tw_report *rep, const char *path);

#endif /* TICKWIRE_TW_REPORT_H */
