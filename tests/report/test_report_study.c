/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Unit tests of tickwire-report's estimators (app/report/tw_study.h) on
 * synthetic record files with a known answer (report_synth.h): the
 * per-message model recovers floor and slope, the three floors agree with
 * the one put in, and the small definitions (nearest rank, ahead, capture
 * time, windows) hold exactly.
 *
 * Mutations these checks catch:
 *   - the ahead filter of the model or of the idx-0 floor removed or
 *     inverted: more than half of every rung is queued (+3000 ns and more),
 *     so the intercept and the idx-0 median move by > 100 %
 *     (test_model_filter shows the unfiltered fit is that far off, so the
 *     data really discriminates);
 *   - rxq counted without its record flag, or a flagged rxq ignored:
 *     share_zero and the ahead buckets differ from the generator's counts;
 *   - the dense windows not selected (every single-message packet taken):
 *     the slow queued singles outnumber the burst, the dense floor moves;
 *   - packets counted by t0 alone or by record: the dense windows' packet
 *     counts (460) differ;
 *   - the speed factor of paced capture time dropped: the dense windows
 *     start at 5, 12.5, 20 s instead of 10, 25, 40;
 *   - nearest rank off by one or rounding 99.9 % x 1000 up to rank 1000.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_synth.h"
#include "tw_check.h"
#include "tw_latency.h"
#include "tw_study.h"

#define FLOOR_NS 2000.0
#define SLOPE_NS 150.0

static bool
near(double got, double want, double rel)
{
	return !tw_study_is_missing(got) && fabs(got - want) <= rel * fabs(want);
}

static void
test_nearest_rank(void)
{
	double v[1000];
	struct tw_study_row row;

	for (int i = 0; i < 1000; i++)
		v[i] = 1000 - i;               /* unsorted on purpose */
	tw_study_row_of(v, 1000, &row);
	CHECK(row.count == 1000);
	CHECK(row.v[0] == 500 && row.v[1] == 900 && row.v[2] == 990);
	CHECK(row.v[3] == 999);                /* rank ceil(999.0) */
	CHECK(row.v[4] == 1000 && row.v[5] == 1000);
	tw_study_row_of(v, 3, &row);           /* v is sorted now: 1, 2, 3 */
	CHECK(row.v[0] == 2);                  /* rank ceil(1.5) = 2 */
	CHECK(tw_study_percentile(v, 1, 0) == v[0]);
	CHECK(tw_study_is_missing(tw_study_percentile(v, 0, 50)));
	tw_study_row_of(v, 0, &row);
	CHECK(row.count == 0 && tw_study_is_missing(row.v[5]));
}

static void
test_definitions(void)
{
	struct tw_lat_record r = {.qlen = 3, .rxq = 4};
	struct tw_lat_header paced = {.flags = TW_LAT_FLAG_PACED, .tsc_hz = 1000,
				      .speed_milli = 2500, .start_tsc = 10000};
	struct tw_lat_header unpaced = {.tsc_hz = 1000};
	struct tw_lat_record order = {.t0 = 100, .t1 = 300, .t3 = 1100, .stream = TW_LAT_ORDER};
	struct tw_lat_record late = {.t0 = 100, .t1 = 50};

	CHECK(tw_study_ahead(&r) == 3);        /* rxq unflagged */
	r.flags = TW_LAT_REC_RXQ;
	CHECK(tw_study_ahead(&r) == 7);
	CHECK(tw_study_ahead_bucket(0) == 0 && tw_study_ahead_bucket(3) == 3);
	CHECK(tw_study_ahead_bucket(4) == 4 && tw_study_ahead_bucket(7) == 4);
	CHECK(tw_study_ahead_bucket(8) == 5 && tw_study_ahead_bucket(15) == 5);
	CHECK(tw_study_ahead_bucket(16) == 6 && tw_study_ahead_bucket(63) == 6);
	CHECK(tw_study_ahead_bucket(64) == 7 && tw_study_ahead_bucket(UINT32_MAX) == 7);
	/* paced: (t0 - start) / hz x speed; unpaced: (t0 - first) / hz */
	CHECK(near(tw_study_capture_s(&paced, 12000, 11000), 5.0, 1e-12));
	CHECK(near(tw_study_capture_s(&unpaced, 12000, 11000), 1.0, 1e-12));
	paced.speed_milli = 0;                 /* paced flag without a speed: unpaced */
	CHECK(near(tw_study_capture_s(&paced, 12000, 11000), 1.0, 1e-12));
	CHECK(tw_study_latency_ns(&unpaced, &order) == 1e9);    /* t3 - t0: 1000 ticks */
	CHECK(tw_study_latency_ns(&unpaced, &late) == 0);
}

static int
open_file(const char *path, struct tw_lat_header *h, struct tw_lat_record **rec,
	  struct tw_study *s)
{
	if (tw_lat_read(path, h, rec) != 0)
		return -1;
	if (tw_study_open(s, h, *rec, h->count) != 0) {
		free(*rec);
		return -1;
	}
	return 0;
}

static void
test_model_filter(const struct tw_study *s)
{
	struct tw_study_model m, all;

	CHECK(tw_study_model(s, 20, true, &m) == 0);
	CHECK(m.points == 8);                  /* idx 0 .. 7 */
	CHECK(m.n_rungs == 8);
	CHECK(near(m.floor_ns, FLOOR_NS, 0.03));
	CHECK(near(m.slope_ns, SLOPE_NS, 0.03));
	CHECK(m.r2 > 0.99 && m.r2 <= 1.0);
	for (uint32_t i = 0; i < m.n_rungs; i++)
		CHECK(m.rungs[i].idx == i && m.rungs[i].used && m.rungs[i].count >= 20);
	/* a min count above every rung: no point, no line */
	tw_study_model_free(&m);
	CHECK(tw_study_model(s, UINT32_MAX, true, &m) == 0);
	CHECK(m.points == 0 && tw_study_is_missing(m.floor_ns));
	tw_study_model_free(&m);
	/* The same data without the ahead filter: the fit is far off. This is
	 * what the filtered checks above catch if the filter goes. */
	CHECK(tw_study_model(s, 20, false, &all) == 0);
	CHECK(!near(all.floor_ns, FLOOR_NS, 0.5));
	tw_study_model_free(&all);
}

static void
test_floors(const struct tw_study *s)
{
	struct tw_study_model m;
	struct tw_study_floors f;

	CHECK(tw_study_model(s, 20, true, &m) == 0);
	CHECK(tw_study_floors(s, &m, 5, &f) == 0);
	CHECK(near(f.fit_ns, FLOOR_NS, 0.03));
	CHECK(near(f.idx0_ns, FLOOR_NS, 0.03));
	CHECK(near(f.dense_ns, FLOOR_NS, 0.03));
	CHECK(f.agree == 1 && f.spread >= 0 && f.spread <= 0.10);
	CHECK(f.n_dense == 5);
	for (uint32_t w = 0; w < REPORT_SYNTH_N_DENSE && w < f.n_dense; w++) {
		CHECK(f.dense[w].start_s == report_synth_dense_s[w]);
		CHECK(f.dense[w].packets == REPORT_SYNTH_BACKGROUND + REPORT_SYNTH_BURST);
	}
	CHECK(f.n_dense < 4 || f.dense[3].packets == REPORT_SYNTH_BACKGROUND);
	CHECK(f.dense_count > 3 * REPORT_SYNTH_BURST);
	tw_study_floors_free(&f);
	/* K = 0: no window, no dense floor, agreement unknown */
	CHECK(tw_study_floors(s, &m, 0, &f) == 0);
	CHECK(f.n_dense == 0 && f.dense_count == 0 && tw_study_is_missing(f.dense_ns));
	CHECK(f.agree == -1 && tw_study_is_missing(f.spread));
	tw_study_floors_free(&f);
	tw_study_model_free(&m);
}

static void
test_tables(const struct tw_study *s, const struct report_synth_counts *counts)
{
	struct tw_study_ahead_row rows[TW_STUDY_N_AHEAD];
	struct tw_study_t2t t;
	struct tw_study_series series;
	struct tw_study_stream *streams;
	struct tw_study_row feed;
	double share, p[2] = {0.5, 1.0}, q[2];
	uint64_t sum = 0;
	int64_t n;

	CHECK(tw_study_ahead_table(s, rows, &share) == 0);
	for (unsigned int b = 0; b < TW_STUDY_N_AHEAD; b++)
		sum += rows[b].count;
	CHECK(sum == counts->records);
	CHECK(rows[0].count == counts->ahead_zero);
	CHECK(near(share, (double)counts->ahead_zero / (double)counts->records, 1e-12));
	CHECK(rows[7].count == 0 && tw_study_is_missing(rows[7].median_ns));
	CHECK(rows[6].count > 0 && rows[6].median_ns > FLOOR_NS + 3000 + 800 * 16);
	CHECK(rows[1].median_ns > rows[0].p99_ns / 2);

	CHECK(tw_study_tick_to_trade(s, &t) == 0);
	CHECK(t.total.count == counts->orders);
	CHECK(near(t.total.v[0], REPORT_SYNTH_ORDER_NS, 1e-6));
	CHECK(near(t.part[0].v[0], 1000, 1e-6) && near(t.part[1].v[2], 500, 1e-6));
	CHECK(near(t.part[2].v[5], REPORT_SYNTH_ORDER_NS - 1500, 1e-6));

	CHECK(tw_study_series(s, 50, &series) == 0);
	CHECK(series.length_s == 1.0);         /* 60 s of capture: 1 s windows */
	CHECK(series.packets == counts->packets);
	CHECK(series.n_slices == 60);
	sum = 0;
	for (uint32_t i = 0; i < series.n_slices; i++)
		sum += series.slices[i].packets;
	CHECK(sum == counts->packets);
	CHECK(series.n_slices == 60 && series.slices[10].start_s == 10 &&
	      series.slices[10].packets_per_s == REPORT_SYNTH_BACKGROUND + REPORT_SYNTH_BURST);
	CHECK(series.n_slices == 60 && series.slices[10].p99_ns > FLOOR_NS);
	tw_study_series_free(&series);

	n = tw_study_streams(s, &streams);
	CHECK(n == 7);                         /* 3 instruments x book, trade; orders */
	CHECK(n > 1 && streams[0].count >= streams[1].count);
	free(streams);

	CHECK(tw_study_select(s, TW_STUDY_FEED, true, 0, &feed) == 0);
	CHECK(feed.count == counts->records);
	CHECK(tw_study_quantiles(s, TW_STUDY_FEED, p, 2, q) == (int64_t)counts->records);
	CHECK(q[0] == feed.v[0] && q[1] == feed.v[5]);
}

/* A short capture (2 s): windows shorter than 1 s, at least 50 of them. */
static void
test_short_series(void)
{
	struct tw_lat_header h = {.tsc_hz = 1000000000u};
	struct tw_lat_record rec[100];
	struct tw_study s;
	struct tw_study_series series;

	memset(rec, 0, sizeof(rec));
	for (int i = 0; i < 100; i++) {
		rec[i].t0 = 7000000000u + (uint64_t)i * 20000000u;   /* 20 ms apart */
		rec[i].t1 = rec[i].t0 + 1000;
		rec[i].msg_seq_num = (uint32_t)i;
		rec[i].n_msgs = 1;
	}
	h.count = 100;
	CHECK(tw_study_open(&s, &h, rec, 100) == 0);
	CHECK(tw_study_series(&s, 50, &series) == 0);
	CHECK(near(series.span_s, 1.98, 1e-9));
	CHECK(near(series.length_s, 0.02, 1e-12));
	CHECK(series.n_slices >= 50 && series.packets == 100);
	tw_study_series_free(&series);
	tw_study_close(&s);
}

static void
test_empty(const char *dir)
{
	char path[512];
	struct report_synth cfg = {.label = "empty", .paced = true, .speed_milli = 1000,
				   .tsc_hz = 2000000000u, .floor_ns = FLOOR_NS,
				   .slope_ns = SLOPE_NS, .seconds = 60, .empty = true};
	struct tw_lat_header h;
	struct tw_lat_record *rec;
	struct tw_study s;
	struct tw_study_model m;
	struct tw_study_floors f;
	struct tw_study_ahead_row rows[TW_STUDY_N_AHEAD];
	struct tw_study_series series;
	struct tw_study_t2t t;
	double share;

	snprintf(path, sizeof(path), "%s/empty.bin", dir);
	CHECK(report_synth_write(path, &cfg, NULL) == 0);
	if (open_file(path, &h, &rec, &s) != 0) {
		CHECK(!"empty file read");
		return;
	}
	CHECK(h.count == 0);
	CHECK(tw_study_model(&s, 20, true, &m) == 0 && m.points == 0 && m.n_rungs == 0);
	CHECK(tw_study_floors(&s, &m, 5, &f) == 0 && f.agree == -1 && f.n_dense == 0);
	CHECK(tw_study_ahead_table(&s, rows, &share) == 0 && tw_study_is_missing(share));
	CHECK(tw_study_tick_to_trade(&s, &t) == 0 && t.total.count == 0);
	CHECK(tw_study_series(&s, 50, &series) == 0 && series.n_slices == 0);
	tw_study_floors_free(&f);
	tw_study_model_free(&m);
	tw_study_close(&s);
	free(rec);
}

static void
test_synthetic(const char *dir)
{
	char path[512];
	struct report_synth cfg = {.label = "two-stage", .paced = true, .speed_milli = 2000,
				   .tsc_hz = 3000000000u, .floor_ns = FLOOR_NS,
				   .slope_ns = SLOPE_NS, .seconds = 60};
	struct report_synth_counts counts;
	struct tw_lat_header h;
	struct tw_lat_record *rec;
	struct tw_study s;

	snprintf(path, sizeof(path), "%s/synth.bin", dir);
	CHECK(report_synth_write(path, &cfg, &counts) == 0);
	if (open_file(path, &h, &rec, &s) != 0) {
		CHECK(!"synthetic file read");
		return;
	}
	CHECK(h.count == counts.records + counts.orders);
	/* the data is as described: more than half of the feed queued */
	CHECK(counts.ahead_zero * 2 < counts.records);
	test_model_filter(&s);
	test_floors(&s);
	test_tables(&s, &counts);
	tw_study_close(&s);
	free(rec);
}

int
main(void)
{
	char dir[] = "/tmp/tw-report-study-XXXXXX";
	char cmd[128];

	if (mkdtemp(dir) == NULL)
		return 1;
	test_nearest_rank();
	test_definitions();
	test_short_series();
	test_synthetic(dir);
	test_empty(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		failures++;
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "ok", failures);
	return failures ? 1 : 0;
}
