/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_STUDY_H
#define TICKWIRE_TW_STUDY_H

/**
 * @file
 * The estimators of the latency study (DESIGN.md section 7), over the
 * records of one file (app/tickwire/tw_latency.h). No DPDK, no printing:
 * tickwire-report prints, the tests call these directly.
 *
 * Definitions used throughout:
 *   latency  book/trade: t1 - t0; order (tick-to-trade): t3 - t0; in ns
 *            with the header's tsc_hz; 0 when the end stamp is not after t0
 *            (as the live histogram of tw_lat_add() counts it)
 *   ahead    qlen + (rxq if the record's TW_LAT_REC_RXQ flag is set):
 *            packets ahead of this one on its path
 *   capture time  seconds on the capture's clock: paced files (header flag
 *            TW_LAT_FLAG_PACED and speed_milli > 0) (t0 - start_tsc) /
 *            tsc_hz x speed_milli / 1000; otherwise (t0 - first t0) / tsc_hz
 *   packet   the distinct (msg_seq_num, t0) pairs of book/trade records (a
 *            packet gives as many records as it published events)
 *
 * Percentiles are nearest-rank: the p-th percentile of n sorted values is
 * the value of rank ceil(p / 100 x n) (at least 1). A statistic over no
 * values is NaN (tw_study_is_missing()); counts say how many values went in.
 *
 * The per-message model, the floors and the ahead table use the feed path
 * only (book and trade records, t1 - t0); orders are in tick-to-trade.
 *
 * Every function may be called from any thread on its own inputs; none keeps
 * state between calls. Costs: O(n log n) in the records, memory O(n).
 */

#include <stdbool.h>
#include <stdint.h>

#include "tw_latency.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The percentile columns: p50, p90, p99, p99.9, p99.99, max. */
#define TW_STUDY_N_PCT 6
extern const double tw_study_pct[TW_STUDY_N_PCT];
/** Their names for text ("p99.9") and for JSON keys ("p99_9"). */
extern const char *const tw_study_pct_name[TW_STUDY_N_PCT];
extern const char *const tw_study_pct_key[TW_STUDY_N_PCT];

/** Buckets of the ahead table: 0, 1, 2, 3, 4-7, 8-15, 16-63, 64+. */
#define TW_STUDY_N_AHEAD 8
/** Lower bound of each ahead bucket (the upper is the next one's minus 1). */
extern const uint32_t tw_study_ahead_lo[TW_STUDY_N_AHEAD];

/** Filters of tw_study_select(). */
enum tw_study_kind {
	TW_STUDY_FEED = -1,   /**< book and trade records */
	TW_STUDY_ALL = -2,    /**< every record */
	/* 0, 1, 2: one enum tw_lat_stream */
};

/** A percentile row. */
struct tw_study_row {
	uint64_t count;
	double v[TW_STUDY_N_PCT];          /**< ns, NaN when count == 0 */
};

/** One rung of the median ladder: the records of one idx. */
struct tw_study_rung {
	uint32_t idx;
	uint64_t count;
	double median_ns;
	double p99_ns;
	bool used;                         /**< count >= the fit's min_count */
};

/** The median ladder by idx (ahead == 0 only) and its least-squares line. */
struct tw_study_model {
	struct tw_study_rung *rungs;       /**< by idx ascending, every idx seen */
	uint32_t n_rungs;
	uint64_t min_count;
	uint32_t points;                   /**< rungs used by the fit */
	double floor_ns;                   /**< intercept; NaN with no point */
	double slope_ns;                   /**< ns per idx; NaN with < 2 points */
	double r2;                         /**< NaN with < 3 points or no spread */
};

/** A one-second window of capture time and its packets. */
struct tw_study_window {
	double start_s;
	uint64_t packets;
};

/** The floor three ways and whether they agree. */
struct tw_study_floors {
	double fit_ns;                     /**< (a) the model's intercept */
	double idx0_ns;                    /**< (b) median, ahead == 0 and idx == 0 */
	uint64_t idx0_count;
	double dense_ns;                   /**< (c) median, n_msgs == 1 in the dense windows */
	uint64_t dense_count;
	struct tw_study_window *dense;     /**< the K densest windows, densest first */
	uint32_t n_dense;
	double spread;                     /**< max / min - 1; NaN unless all three > 0 */
	int agree;                         /**< 1 spread <= 0.10, 0 not, -1 unknown */
};

/** One row of the ahead table. */
struct tw_study_ahead_row {
	uint32_t lo, hi;                   /**< hi UINT32_MAX for the open bucket */
	uint64_t count;
	double median_ns;
	double p99_ns;
};

/** Tick-to-trade: t3 - t0 of orders and its parts. */
struct tw_study_t2t {
	struct tw_study_row total;         /**< t3 - t0 */
	struct tw_study_row part[3];       /**< t1 - t0, t2 - t1, t3 - t2 */
};

/**
 * Where the time of a book event goes, over book/trade records with
 * nothing ahead: t1 - t0 split at the decode group taking the packet
 * (record field wait), and the signal after it.
 */
struct tw_study_parts {
	struct tw_study_row total;         /**< t1 - t0 */
	struct tw_study_row to_decode;     /**< wait: rx path (and hand-off) */
	struct tw_study_row decode;        /**< t1 - t0 - wait: the decode group */
	struct tw_study_row signal;        /**< t2 - t1 */
};

/** One window of the series over capture time. */
struct tw_study_slice {
	double start_s;
	uint64_t packets;
	double packets_per_s;              /**< packets / window length (capture time) */
	uint64_t records;                  /**< book/trade records */
	double p99_ns;                     /**< of those; NaN with none */
};

/** A series of equal windows covering the capture. */
struct tw_study_series {
	double length_s;                   /**< window length; 0 with no packets */
	double span_s;                     /**< first to last packet, capture time */
	uint64_t packets;
	struct tw_study_slice *slices;
	uint32_t n_slices;
};

/**
 * The records of one file, with their latencies computed once.
 * Build with tw_study_open(), free with tw_study_close().
 */
struct tw_study {
	const struct tw_lat_header *header;
	const struct tw_lat_record *records;
	uint64_t count;
	double *ns;                        /**< latency of each record */
	double *capture_s;                 /**< capture time of each record */
};

/** @return true for a statistic over no values. */
bool tw_study_is_missing(double v);

/**
 * Latency of one record, ns (see the file comment).
 * @param h  its file's header (tsc_hz > 0)
 */
double tw_study_latency_ns(const struct tw_lat_header *h, const struct tw_lat_record *r);

/** Packets ahead of @p r on its path: qlen, plus rxq when flagged. */
uint64_t tw_study_ahead(const struct tw_lat_record *r);

/** Index of the ahead bucket of @p ahead, 0 .. TW_STUDY_N_AHEAD - 1. */
unsigned int tw_study_ahead_bucket(uint64_t ahead);

/**
 * Capture time of @p t0, s (see the file comment).
 * @param first_t0  the smallest t0 of the file (used when unpaced)
 */
double tw_study_capture_s(const struct tw_lat_header *h, uint64_t t0, uint64_t first_t0);

/**
 * Nearest-rank percentile of @p n sorted values.
 * @return the value, NaN when n == 0.
 */
double tw_study_percentile(const double *sorted, uint64_t n, double pct);

/**
 * Sort @p vals in place and fill @p row with its percentiles.
 */
void tw_study_row_of(double *vals, uint64_t n, struct tw_study_row *row);

/**
 * Prepare the study of @p count records read with tw_lat_read().
 * @p h and @p records must outlive the study.
 * @return 0, -EINVAL (tsc_hz is 0), -ENOMEM.
 */
int tw_study_open(struct tw_study *s, const struct tw_lat_header *h,
		  const struct tw_lat_record *records, uint64_t count);

/** Free what tw_study_open() allocated. */
void tw_study_close(struct tw_study *s);

/**
 * Percentiles of the latency of the records of one kind (a enum
 * tw_lat_stream or enum tw_study_kind), of one instrument unless
 * @p any_instrument.
 * @return 0, -ENOMEM.
 */
int tw_study_select(const struct tw_study *s, int kind, bool any_instrument,
		    int32_t instrument, struct tw_study_row *row);

/** A (instrument, kind) stream and its record count. */
struct tw_study_stream {
	int32_t instrument;
	uint8_t kind;
	uint64_t count;
};

/**
 * The distinct (instrument, kind) streams, busiest first (ties: instrument,
 * then kind ascending). @p *out is malloc'd (caller frees), NULL when none.
 * @return the number of streams, or -ENOMEM.
 */
int64_t tw_study_streams(const struct tw_study *s, struct tw_study_stream **out);

/**
 * The per-message model: the median latency of each idx over the feed
 * records with ahead == 0 (every record when @p ahead_zero_only is false,
 * which only tests use, to show the filter matters), and the least-squares
 * line median = floor + slope x idx through the rungs with at least
 * @p min_count records. Free with tw_study_model_free().
 * @return 0, -ENOMEM.
 */
int tw_study_model(const struct tw_study *s, uint64_t min_count, bool ahead_zero_only,
		   struct tw_study_model *m);

/** Free the rungs of a model. */
void tw_study_model_free(struct tw_study_model *m);

/**
 * The windows of @p length_s seconds of capture time and the packets in
 * each (see "packet" in the file comment); windows start at multiples of
 * @p length_s from capture time 0. @p *out is malloc'd (caller frees), by
 * start ascending, empty windows included.
 * @return the number of windows, or -ENOMEM.
 */
int64_t tw_study_windows(const struct tw_study *s, double length_s,
			 struct tw_study_window **out);

/**
 * The floor three ways: (a) the intercept of @p m; (b) the median of the
 * feed records with ahead == 0 and idx == 0; (c) the median of the feed
 * records of single-message packets (n_msgs == 1) inside the @p k densest
 * one-second windows of capture time. Then the spread max/min - 1 and
 * whether it is at most 10%. Free with tw_study_floors_free().
 * @return 0, -ENOMEM.
 */
int tw_study_floors(const struct tw_study *s, const struct tw_study_model *m, uint32_t k,
		    struct tw_study_floors *f);

/** Free the window list of a floors result. */
void tw_study_floors_free(struct tw_study_floors *f);

/**
 * The ahead table over the feed records, and the share of them with
 * ahead == 0 (NaN with no feed record) in @p *share_zero.
 * @return 0, -ENOMEM.
 */
int tw_study_ahead_table(const struct tw_study *s,
			 struct tw_study_ahead_row rows[TW_STUDY_N_AHEAD], double *share_zero);

/**
 * Tick-to-trade over the order records. A part whose two stamps are not
 * both set, or run backwards, is left out of that part.
 * @return 0, -ENOMEM.
 */
int tw_study_tick_to_trade(const struct tw_study *s, struct tw_study_t2t *t);

/** The parts of t1 - t0 at ahead == 0 (struct tw_study_parts). @return 0, -ENOMEM. */
int tw_study_parts(const struct tw_study *s, struct tw_study_parts *out);

/**
 * Latency quantiles of one kind (as tw_study_select()) at the @p n
 * probabilities @p p (each in [0, 1]; 1 is the max): @p ns[i] = the
 * nearest-rank percentile 100 x p[i], NaN when the kind has no record.
 * @return the number of records of the kind, or -ENOMEM.
 */
int64_t tw_study_quantiles(const struct tw_study *s, int kind, const double *p, uint32_t n,
			   double *ns);

/**
 * The series over capture time: windows of 1 s, or shorter when the
 * capture spans less than @p min_windows seconds (length = span /
 * min_windows, rounded down to 1, 2 or 5 x a power of ten), each with
 * packets, packets/s and the p99 latency of its feed records. Free with
 * tw_study_series_free().
 * @return 0, -ENOMEM.
 */
int tw_study_series(const struct tw_study *s, uint32_t min_windows, struct tw_study_series *out);

/** Free the slices of a series. */
void tw_study_series_free(struct tw_study_series *out);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_STUDY_H */
