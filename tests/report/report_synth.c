/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Synthetic latency record files with a known answer (report_synth.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_synth.h"
#include "tw_latency.h"

#define INSTRUMENTS 3
#define ORDER_EVERY 10                 /* an order after every 10th multi packet */

struct synth_state {
	const struct report_synth *cfg;
	struct tw_lat_recorder feed, orders;
	struct report_synth_counts counts;
	uint64_t lcg;
	uint64_t origin;                   /* TSC of capture time 0 */
	uint32_t seq;
	uint32_t order_id;
};

/* Knuth's MMIX constants: deterministic across platforms. */
static uint64_t
next_random(struct synth_state *st)
{
	st->lcg = st->lcg * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return st->lcg >> 33;
}

static double
noise_ns(struct synth_state *st)
{
	return (double)(next_random(st) % 100) - 50.0;
}

static uint64_t
ticks(const struct synth_state *st, double ns)
{
	return (uint64_t)llround(ns * (double)st->cfg->tsc_hz / 1e9);
}

static uint64_t
t0_of(const struct synth_state *st, double capture_s)
{
	double speed = st->cfg->paced ? (double)st->cfg->speed_milli / 1000.0 : 1.0;

	return st->origin + ticks(st, capture_s / speed * 1e9);
}

static int
add_record(struct synth_state *st, const struct tw_lat_record *rec)
{
	if (tw_lat_add(&st->feed, rec) == NULL)
		return -ENOSPC;
	st->counts.records++;
	if (rec->qlen == 0 && !((rec->flags & TW_LAT_REC_RXQ) && rec->rxq != 0))
		st->counts.ahead_zero++;
	return 0;
}

/* A packet of n_msgs messages, each publishing one record. */
static int
add_packet(struct synth_state *st, uint64_t t0, uint16_t n_msgs, uint32_t ahead, bool rxq_path,
	   double base_ns, double per_idx_ns)
{
	uint32_t seq = ++st->seq;

	st->counts.packets++;
	for (uint16_t idx = 0; idx < n_msgs; idx++) {
		double ns = base_ns + per_idx_ns * idx + noise_ns(st);
		struct tw_lat_record r = {
			.t0 = t0, .t1 = t0 + ticks(st, ns), .instrument = 100 + (int32_t)(seq %
			INSTRUMENTS), .stream = (seq % 5 == 0) ? TW_LAT_TRADE : TW_LAT_BOOK,
			.idx = idx, .n_msgs = n_msgs, .event = idx, .msg_seq_num = seq,
		};
		int rc;

		r.t2 = r.t1 + ticks(st, 100);
		if (ahead != 0 && rxq_path) {
			r.rxq = ahead;
			r.flags = TW_LAT_REC_RXQ;
		} else if (ahead != 0) {
			r.qlen = ahead;
		} else if (seq % 4 == 0) {
			r.rxq = 7;            /* not flagged: not ahead */
		}
		rc = add_record(st, &r);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
add_order(struct synth_state *st, uint64_t t0)
{
	struct tw_lat_record o = {.t0 = t0, .stream = TW_LAT_ORDER, .instrument = 100,
				  .msg_seq_num = st->seq, .order_id = ++st->order_id};

	o.t1 = t0 + ticks(st, 1000);
	o.t2 = o.t1 + ticks(st, 500);
	o.t3 = o.t2 + ticks(st, REPORT_SYNTH_ORDER_NS - 1500);
	if (tw_lat_add(&st->orders, &o) == NULL)
		return -ENOSPC;
	st->counts.orders++;
	return 0;
}

static int
add_second(struct synth_state *st, uint32_t s)
{
	const struct report_synth *cfg = st->cfg;
	int rc = 0;

	for (uint32_t j = 0; rc == 0 && j < REPORT_SYNTH_BACKGROUND; j++) {
		uint64_t t0 = t0_of(st, s + (j + 0.5) / REPORT_SYNTH_BACKGROUND);
		uint32_t ahead = 1 + (uint32_t)(next_random(st) % 40);
		bool rxq_path = next_random(st) % 2 == 0;

		if (j % 2 == 0) {
			uint16_t n = (uint16_t)(2 + next_random(st) % 7);
			bool queued = next_random(st) % 10 < 6;

			if (!queued)
				ahead = 0;
			rc = add_packet(st, t0, n, ahead, rxq_path,
					cfg->floor_ns + (queued ? 3000.0 + 800.0 * ahead : 0),
					cfg->slope_ns);
			if (rc == 0 && j % (2 * ORDER_EVERY) == 0)
				rc = add_order(st, t0);
		} else {
			rc = add_packet(st, t0, 1, ahead, rxq_path,
					3 * cfg->floor_ns + 1000.0 * ahead, 0);
		}
	}
	for (uint32_t d = 0; d < REPORT_SYNTH_N_DENSE; d++) {
		if (report_synth_dense_s[d] != s)
			continue;
		for (uint32_t j = 0; rc == 0 && j < REPORT_SYNTH_BURST; j++) {
			/* four packets to a t0: one rx burst */
			double at = s + 0.05 + 0.9 * (double)(j / 4 * 4) / REPORT_SYNTH_BURST;

			rc = add_packet(st, t0_of(st, at), 1, 0, false, cfg->floor_ns, 0);
		}
	}
	return rc;
}

int
report_synth_write(const char *path, const struct report_synth *cfg,
		   struct report_synth_counts *counts)
{
	struct synth_state st = {.cfg = cfg, .lcg = 42, .origin = UINT64_C(5000000000)};
	const struct tw_lat_recorder *both[2] = {&st.feed, &st.orders};
	uint64_t capacity = (uint64_t)cfg->seconds * REPORT_SYNTH_BACKGROUND * 8 +
			    REPORT_SYNTH_N_DENSE * REPORT_SYNTH_BURST + 1;
	struct tw_lat_header h = {
		.flags = cfg->paced ? TW_LAT_FLAG_PACED : TW_LAT_FLAG_ONE_THREAD,
		.tsc_hz = cfg->tsc_hz, .speed_milli = cfg->paced ? cfg->speed_milli : 0,
		.start_tsc = cfg->paced ? st.origin : 0,
		.player_err_ns = {120, 900, 2500, 8000},
		.player_packets = 0, .rx_drops = 3,
	};
	int rc;

	snprintf(h.label, sizeof(h.label), "%s", cfg->label);
	if (tw_lat_init(&st.feed, capacity) != 0)
		return -ENOMEM;
	if (tw_lat_init(&st.orders, capacity / 10 + 1) != 0) {
		tw_lat_fini(&st.feed);
		return -ENOMEM;
	}
	rc = 0;
	for (uint32_t s = 0; !cfg->empty && rc == 0 && s < cfg->seconds; s++)
		rc = add_second(&st, s);
	h.player_packets = cfg->paced ? st.counts.packets : 0;
	if (rc == 0)
		rc = tw_lat_write(both, 2, path, &h);
	tw_lat_fini(&st.feed);
	tw_lat_fini(&st.orders);
	if (counts != NULL)
		*counts = st.counts;
	return rc;
}
