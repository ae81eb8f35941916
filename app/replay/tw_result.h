/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The session result of tickwire-replay (--result FILE): one JSON object per
 * replayed session that a machine reads (tickwire-backtest gathers them).
 * Schema "tickwire-session-result/1", documented in app/backtest/README.md.
 *
 * Deterministic: the same inputs give byte-identical JSON. Nothing in it
 * depends on the wall clock, the process, the host or where the files are:
 * files are named by their basename and identified by their SHA-256, keys
 * are written in a fixed order, and every number is an integer.
 *
 * Latency histograms count per log2 bucket of nanoseconds, so that results
 * merge exactly (add the counts, never average percentiles). Fills,
 * positions and the histograms are written from what the caller gives; the
 * simulated exchange (issue 18, item 1) is to fill them, and until it exists
 * they are empty.
 */
#ifndef TICKWIRE_TW_RESULT_H
#define TICKWIRE_TW_RESULT_H

#include <stdint.h>

struct tw_chain;

/** Schema name written in every result. */
#define TW_RESULT_SCHEMA "tickwire-session-result/1"

/** Buckets of a latency histogram: bucket i holds [2^i, 2^(i+1)) ns, bucket 0
 *  also 0 ns; bucket 63 ends at 2^64 - 1. */
#define TW_RESULT_HIST_BUCKETS 64

/** A latency histogram (counts per log2 bucket of ns). */
struct tw_result_hist {
	uint64_t count[TW_RESULT_HIST_BUCKETS];
};

/** The bucket of @p ns: floor(log2(ns)), 0 for 0 and 1. */
static inline unsigned int
tw_result_hist_bucket(uint64_t ns)
{
	return ns < 2 ? 0u : 63u - (unsigned int)__builtin_clzll(ns);
}

/** Count one sample of @p ns in @p hist. Any thread that owns @p hist. */
static inline void
tw_result_hist_add(struct tw_result_hist *hist, uint64_t ns)
{
	hist->count[tw_result_hist_bucket(ns)]++;
}

/** A fill (execution) of one of the strategy's orders. */
struct tw_result_fill {
	uint32_t client_order_id;
	int32_t security_id;
	uint8_t side;           /**< enum tw_order_side: 1 buy, 2 sell */
	uint32_t qty;           /**< filled by this execution */
	uint32_t leaves_qty;    /**< left open after it */
	int64_t price;          /**< mantissa, exponent -9 */
	uint64_t time_ns;       /**< on the replay's clock (capture time) */
};

/** Position and PnL of one instrument at the end of the session. PnL in
 *  price mantissa (exponent -9) units times quantity. */
struct tw_result_position {
	int32_t security_id;
	int64_t position;       /**< signed: bought minus sold */
	int64_t realised;
	int64_t unrealised;     /**< marked at the final book's mid */
};

/** What a session result is made of, besides the chain's counters. */
struct tw_result_session {
	/** session name; NULL or "": the basename of the first input */
	const char *name;
	const char *ports_path;           /**< the profile's ports.ini */
	const char *config_path;          /**< the profile's tickwire.cfg */
	const char *const *inputs;        /**< the captures replayed, in order */
	uint32_t n_inputs;
	/** the orders pcap the replay wrote (flushed); NULL: "orders" is empty */
	const char *orders_path;
	uint64_t frames, passed, filtered; /**< the replay's own frame counts */
	const struct tw_result_fill *fills;         /**< in execution order */
	uint32_t n_fills;
	const struct tw_result_position *positions; /**< any order; written by id */
	uint32_t n_positions;
	const struct tw_result_hist *order_to_ack;  /**< NULL: all zero */
	const struct tw_result_hist *order_to_fill; /**< NULL: all zero */
};

/**
 * Write the session result of @p s and the final counters of @p chain (the
 * "== counters" block of tw_chain_print()) to @p path as JSON. The file is
 * written beside @p path under a temporary name and renamed, so a reader
 * never sees half a result. Every input and profile file is read again to
 * count its bytes and frames and to hash it (SHA-256).
 *
 * Thread: the thread that owns @p chain, once its groups are drained.
 * @return 0; -EINVAL for a NULL argument; -ENOMEM; the errno of a file that
 *         could not be read (an input, the profile, the orders), or of the
 *         result that could not be written (nothing is left at @p path then).
 */
int tw_result_write(const char *path, const struct tw_result_session *s,
		    const struct tw_chain *chain);

/**
 * The default orders file of a result: @p result_path with ".orders.pcap"
 * appended. Static storage, overwritten by the next call.
 * Thread: the main thread, while parsing options.
 * @return the path, or NULL (errno ENAMETOOLONG) when it does not fit.
 */
const char *tw_result_orders_path(const char *result_path);

#endif /* TICKWIRE_TW_RESULT_H */
