/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_STRATEGY_H
#define TICKWIRE_TW_STRATEGY_H

/**
 * @file
 * The sample strategy: a top-of-book imbalance rule, written only against
 * the actor API (lib/actor/act.h) and the messages of tw_msg.h. It is the
 * example users copy to write their own signal actor.
 *
 * Rule, for each instrument of the list, on every TW_MSG_TOP of kind
 * TW_TOP_BOOK with a valid book and both sides present
 * (B = best bid qty, A = best ask qty, N/D = the configured ratio, N > D):
 *   - buy  order_qty at the best bid when B * D >= A * N;
 *   - sell order_qty at the best ask when A * D >= B * N;
 *   - otherwise the instrument is neutral.
 * A TW_TOP_STATE (the book went stale, its channel silent, a reset, or
 * valid again) makes the instrument neutral; the chain itself refuses orders
 * on a halted instrument and cancels its working orders (tw_chain.h), so a
 * strategy cannot trade on a stale book even if it tried.
 * An order is sent only when an instrument's state changes from neutral (or
 * the other side) to buy or sell, so a persistent imbalance yields one
 * order, not one per update. At most max_orders orders in the whole run.
 *
 * Queue position (market by order, tickwire.cfg book.mbo): with every order
 * the strategy answers the TW_MSG_TOP that triggered it with a struct
 * tw_queue_join (its order joins the back of the queue at its price), and
 * the instrument's later tops say how many orders and how much displayed
 * quantity are still ahead of it (struct tw_top.queue*). The rule that uses
 * it: with queue_max_ahead > 0, a new order on the side of the instrument's
 * last one is held (not sent, counted in queue_held) while that last order
 * still has more than queue_max_ahead contracts ahead of it: a second order
 * would only queue behind the first. The next change of signal may send
 * again. Without a known position (no MBO on the channel, a gap) the rule
 * does not hold anything.
 * Integer arithmetic only; no clock in any decision (params.clock only
 * stamps t2 for the latency records), no randomness: the same sequence of
 * TW_MSG_TOP messages yields the same orders, byte for byte.
 *
 * Orders go to the order-out actor with act_send(); a refused send
 * (mailbox full) is counted in missed, never retried. Each order carries
 * the book mid and tick, which order-out's price-band check uses.
 *
 * Order-out answers every order asynchronously (TW_MSG_ORDER_REPLY: sent,
 * or refused by pre-trade risk / the session, with the reason) and relays
 * the exchange's execution reports (TW_MSG_EXEC). The sample only counts
 * them; a real strategy would track its working orders and position here.
 */

#include <stdbool.h>
#include <stdint.h>

#include "act.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TW_STRATEGY_MAX_INSTRUMENTS 64

/** Parameters (tickwire.cfg strategy { }). */
struct tw_strategy_params {
	uint32_t n_instruments;
	int32_t instruments[TW_STRATEGY_MAX_INSTRUMENTS];
	uint32_t ratio_numerator;     /**< N, > D */
	uint32_t ratio_denominator;   /**< D, > 0 */
	uint32_t order_qty;
	uint32_t max_orders;
	/** hold a new order while the last one on that side still has more
	 *  than this many contracts ahead (see above); 0: never hold */
	uint32_t queue_max_ahead;
	/** clock of the latency stamp t2 (the decision) of each order; NULL: 0.
	 *  Only stamped into the order, never an input to a decision, so the
	 *  orders stay the same bytes whatever the clock says. */
	uint64_t (*clock)(void);
};

/** Counters of the strategy (read when the decode group is idle). */
struct tw_strategy_stats {
	uint64_t events;              /**< TW_MSG_TOP seen */
	uint64_t states[2];           /**< TW_TOP_STATE: [0] stale/silent/reset, [1] valid again */
	uint64_t considered;          /**< of a listed instrument, valid, two-sided */
	uint64_t orders;              /**< orders sent */
	uint64_t missed;              /**< act_send() refused */
	uint64_t capped;              /**< signals after max_orders */
	uint64_t replies_sent;        /**< TW_MSG_ORDER_REPLY: sent to the exchange */
	uint64_t replies_refused;     /**< TW_MSG_ORDER_REPLY: refused (any reason) */
	uint64_t refused[32];         /**< refused by enum tw_order_reason */
	uint64_t exec[5];             /**< TW_MSG_EXEC by enum tw_exec_kind */
	uint64_t filled_qty;          /**< sum of last_qty of fills */
	/* queue position (market by order) */
	uint64_t queue_joins;         /**< orders answered with a struct tw_queue_join */
	uint64_t queue_join_failed;   /**< the answer could not be made (not a
	                                   synchronous delivery) */
	uint64_t queue_known;         /**< tops of a listed instrument with a known position */
	uint64_t queue_unknown;       /**< tops with a join but no known position */
	uint64_t queue_held;          /**< orders held by the queue rule */
	uint64_t queue_qty_ahead_max; /**< largest quantity ahead seen */
};

struct tw_strategy;

/**
 * Create the strategy state. @p order_out receives the orders.
 * @return the state, or NULL with errno EINVAL (ratio not N > D > 0, too
 *         many instruments) or ENOMEM.
 */
struct tw_strategy *tw_strategy_create(const struct tw_strategy_params *params,
				       struct act_actor *order_out);

/** Free the state (after its actor was destroyed). NULL is ignored. */
void tw_strategy_destroy(struct tw_strategy *s);

/**
 * The handler table of the strategy actor: pass it, its count and the
 * state to act_actor_create().
 */
const act_handler_fn *tw_strategy_handlers(uint32_t *count);

/** Counters. */
void tw_strategy_stats(const struct tw_strategy *s, struct tw_strategy_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_STRATEGY_H */
