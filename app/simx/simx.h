/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_SIMX_H
#define TICKWIRE_SIMX_H

/**
 * @file
 * The matching core of tickwire-replay's simulated exchange (issue 18,
 * item 1): orders matched against the recorded books, on the replay's
 * clock, with no socket and no wall clock (simx_exchange.h puts it behind
 * an iLink 3 gateway).
 *
 * Time. A request decided at replay time t (its SendingTimeEpoch) arrives
 * at t + latency_ns; a report made at time e is due at e + return_ns.
 * simx_run_until(T) applies, in time order, every arrival and hands over
 * every report due strictly before T: the books read then are those of all
 * frames captured up to the event. The owner calls simx_market(T) after
 * each frame captured at T: resting orders are matched against what the
 * frame changed.
 *
 * Matching (the recorded books are never changed by our orders):
 *  - on arrival: unknown instrument, a stale book, price <= 0 or qty 0 are
 *    rejected. A buy fills against the ask levels priced at or below its
 *    limit, best first, at their prices, up to their displayed quantities
 *    (partial fills); the rest rests at its limit (and a sell likewise).
 *  - a resting order has a queue ahead: with a valid MBO book its real
 *    place (book_mbo_queue_back() when it joins, book_mbo_queue_by_priority()
 *    since); otherwise the level's displayed quantity when it joined, which
 *    shrinks by the trades at its price and by the level's quantity falling
 *    below it (the price-level estimate).
 *  - a trade at its price consumes the queue ahead, then fills it; a trade
 *    through its price (a buy: below it) fills it all; the opposite side at
 *    or through its price fills it up to the crossing quantity. Passive
 *    fills are at the order's price.
 *  - a cancel takes effect when it arrives: a fill that happened before
 *    wins (a filled order's cancel is rejected "too late to cancel").
 *
 * Bounds: SIMX_MAX_ORDERS orders remembered (done ones are forgotten first),
 * SIMX_MAX_PENDING arrivals and reports waiting (beyond: the request is
 * rejected, counted in overflows), SIMX_MAX_INSTRUMENTS positions.
 *
 * Threads: one simx is used by one thread.
 */

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMX_MAX_ORDERS 4096
#define SIMX_MAX_PENDING 8192
#define SIMX_MAX_INSTRUMENTS 64
#define SIMX_MAX_LEVELS 10
#define SIMX_MAX_LOTS 256

struct book_mbo;

/** What the exchange reads of one instrument's recorded book. */
struct simx_book {
	bool ok;                  /**< valid (not stale) */
	uint32_t depth;           /**< levels in bid[] and ask[] (an empty one: qty 0) */
	struct { int64_t price, qty; } bid[SIMX_MAX_LEVELS], ask[SIMX_MAX_LEVELS];
	bool has_trade;           /**< a last trade is known */
	int64_t trade_price;
	int64_t trade_qty;
	/** changes with every new trade (0 before the first) */
	uint64_t trade_key;
	/** the instrument's market-by-order book; NULL: none */
	const struct book_mbo *mbo;
};

/** Reads the recorded book of @p security_id. @return 0, or -ENOENT (unknown). */
typedef int (*simx_book_fn)(void *ctx, int32_t security_id, struct simx_book *out);

/** Report kinds. */
enum simx_report_kind {
	SIMX_NEW = 0,             /**< accepted, working */
	SIMX_FILL,                /**< a (partial) fill */
	SIMX_REJECT,              /**< the new order was refused */
	SIMX_CANCELED,            /**< the rest of the order is cancelled */
	SIMX_CANCEL_REJECT,       /**< the cancel was refused */
};

/** A report, due at @c due_ns. */
struct simx_report {
	uint8_t kind;             /**< enum simx_report_kind */
	uint8_t side;             /**< 1 buy, 2 sell */
	uint64_t ref;             /**< the request it answers (a fill: the order's new request) */
	uint64_t order_ref;       /**< the order's new request (= ref except for cancels) */
	uint64_t order_id;        /**< the exchange's OrderID; 0 for a reject */
	int32_t security_id;
	int64_t price;            /**< the order's limit */
	uint32_t order_qty;
	int64_t last_price;       /**< SIMX_FILL */
	uint32_t last_qty;        /**< SIMX_FILL */
	uint32_t cum_qty;
	uint32_t leaves_qty;
	uint64_t decided_ns;      /**< when the order (its new request) was decided */
	uint64_t event_ns;        /**< when the exchange made it */
	uint64_t due_ns;          /**< when it reaches the client */
	const char *text;         /**< reject reasons */
};

/** Hands a due report over (inside simx_run_until()). */
typedef void (*simx_report_fn)(void *ctx, const struct simx_report *r);

struct simx_config {
	uint64_t latency_ns;      /**< decision -> arrival at the exchange */
	uint64_t return_ns;       /**< report made -> reaches the client */
	simx_book_fn book;
	simx_report_fn report;
	void *ctx;
};

/** Counters. */
struct simx_stats {
	uint64_t news, cancels;   /**< requests arrived */
	uint64_t acks, rejects, fills, filled_qty, canceled, cancel_rejects;
	uint64_t too_late;        /**< of the cancel rejects: the order had filled */
	uint64_t aggressive_fills, passive_fills;
	uint64_t mbo_joins;       /**< orders that joined at their place in a valid MBO book */
	uint64_t overflows;       /**< requests or reports refused: tables full */
	uint64_t resting;         /**< gauge: orders resting */
};

/** Position and PnL of one instrument (price mantissa x qty). */
struct simx_position {
	int32_t security_id;
	int64_t position;         /**< bought minus sold */
	int64_t realised;
	int64_t unrealised;       /**< position x mark - cost of the open lots */
	int64_t mark;             /**< last trade, else mid, else 0 (simx_mark()) */
	uint64_t bought, sold;    /**< quantities */
};

struct simx;

/** @return the exchange or NULL with errno (EINVAL, ENOMEM). */
struct simx *simx_create(const struct simx_config *cfg);
void simx_destroy(struct simx *x);

/**
 * A new order decided at @p decided_ns (arrives at decided + latency).
 * @p ref names it in the reports (the caller's, unique).
 * @return 0, -ENOSPC (too many pending: rejected at once, reported).
 */
int simx_submit_new(struct simx *x, uint64_t ref, uint64_t decided_ns, int32_t security_id,
		    uint8_t side, uint32_t qty, int64_t price);

/**
 * A cancel of the order whose new request was @p target_ref (or whose
 * OrderID is @p order_id when not 0), decided at @p decided_ns.
 * @return 0, -ENOSPC.
 */
int simx_submit_cancel(struct simx *x, uint64_t ref, uint64_t decided_ns, uint64_t target_ref,
		       uint64_t order_id);

/** When the next arrival or report is due; UINT64_MAX: none. */
uint64_t simx_next_ns(const struct simx *x);

/**
 * Apply every arrival and hand over every report due before @p until_ns
 * (at most @p max items; 0: no limit), in time order. @return items done.
 */
uint32_t simx_run_until(struct simx *x, uint64_t until_ns, uint32_t max);

/** The books changed at @p now_ns (a frame): match the resting orders. */
void simx_market(struct simx *x, uint64_t now_ns);

/** Mark every position at its book (last trade, else mid): unrealised PnL. */
void simx_mark(struct simx *x);

/** Positions (@return how many; only @p cap written). */
uint32_t simx_positions(const struct simx *x, struct simx_position *out, uint32_t cap);

void simx_stats(const struct simx *x, struct simx_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_SIMX_H */
