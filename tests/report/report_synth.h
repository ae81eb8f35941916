/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Synthetic latency record files with a known answer, for the tests of
 * tickwire-report's estimators (tests/report).
 *
 * Capture time runs 0 .. seconds. Every capture second s holds 60 background
 * packets at s + (j + 0.5) / 60, alternating:
 *   - multi-message packets: n_msgs 2..8, latency floor + slope x idx +
 *     noise; 60 % of them queued (ahead > 0: qlen, or qlen 0 and a flagged
 *     rxq), which adds 3000 + 800 x ahead ns; of the unqueued, one in four
 *     carries an rxq without the record flag (it must not count as ahead)
 *   - single-message packets (n_msgs 1), all queued, 3 x floor + 1000 x ahead
 * and the dense seconds (10, 25, 40) add REPORT_SYNTH_BURST single-message
 * packets each, unqueued, latency floor + noise, released four to a t0 over
 * [s + 0.05, s + 0.95). Noise is uniform in [-50, 50) ns from a fixed LCG.
 * Orders follow some packets: t1 - t0 = 1000, t2 - t1 = 500, t3 - t2 = 300 ns.
 *
 * So: with the ahead filter, the per-idx medians are floor + slope x idx;
 * without it, every rung's median is a queued record's (more than half are),
 * thousands of ns above. The idx-0 median with ahead == 0 is floor; the
 * median of single-message packets in the densest windows is floor.
 */
#ifndef TW_REPORT_SYNTH_H
#define TW_REPORT_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#define REPORT_SYNTH_BACKGROUND 60     /* packets per capture second */
#define REPORT_SYNTH_BURST 400         /* extra packets in each dense second */
#define REPORT_SYNTH_N_DENSE 3
#define REPORT_SYNTH_ORDER_NS 1800.0   /* t3 - t0 of every order, without noise */
static const uint32_t report_synth_dense_s[REPORT_SYNTH_N_DENSE] = {10, 25, 40};

struct report_synth {
	const char *label;
	bool paced;                    /* paced at speed_milli, else unpaced */
	uint64_t speed_milli;
	uint64_t tsc_hz;
	double floor_ns;
	double slope_ns;
	uint32_t seconds;              /* capture length, > 40 */
	bool empty;                    /* header only */
};

/** What the generator wrote, for exact checks. */
struct report_synth_counts {
	uint64_t records;              /* book/trade */
	uint64_t orders;
	uint64_t ahead_zero;           /* book/trade records with ahead == 0 */
	uint64_t packets;
};

/**
 * Write the file @p path for @p cfg; @p counts (may be NULL) says what
 * went in. @return 0 or a negative errno.
 */
int report_synth_write(const char *path, const struct report_synth *cfg,
		       struct report_synth_counts *counts);

#endif /* TW_REPORT_SYNTH_H */
