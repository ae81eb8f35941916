/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Market by order for tickwire-synth (--mbo): an order-level model behind
 * every outright price level of the generator's book, and the order entries
 * that keep a market-by-order receiver consistent with the price levels.
 *
 * Model.  Per instrument and outright side, up to SYNTH_MBO_LEVELS price
 * levels sorted best first, each a FIFO of at most SYNTH_MBO_LEVEL_ORDERS
 * orders (OrderID, MDOrderPriority ascending, MDDisplayQty >= 1).  Levels
 * 1..depth are the price levels of the generator's book (same price, sum of
 * quantities, order count, after every entry); the levels below them are the
 * deep book, which only template 47 shows.  A level pushed past the depth
 * keeps its orders (deep); a level removed from the price-level book lets
 * the best deep level back in (a New without order entries, as CME does);
 * a level pushed past SYNTH_MBO_LEVELS is cancelled (47 Deletes).
 *
 * Every price-level entry is translated into order entries (CME's rules,
 * lib/book/README.md "Market by order"): New level = new orders; Change =
 * orders added / cancelled, quantity down (priority kept) or up (a new,
 * higher priority), now and then a priority change; Overlay = orders moved
 * to the new price (a price change: new priority); Delete / DeleteFrom /
 * DeleteThru = the orders of the levels removed cancelled; a trade fills the front of the queue
 * (Delete for a full fill, Update with the rest for a partial one).  The
 * market may also take one order (synth_mbo_take): cancelled by the next
 * entry, or moved: removed by it without an entry and placed by the entry
 * after it (a New or a Change at another price) with one Update.  The
 * order entries of a visible level go in the NoOrderIDEntries of the same
 * MDIncrementalRefreshBook46 (ReferenceID = its level entry); those of deep
 * levels, and those that do not fit the message, in
 * MDIncrementalRefreshOrderBook47 messages sent right after it, before the
 * event's EndOfEvent.  The snapshot channel sends, after each
 * SnapshotFullRefresh52, the SnapshotFullRefreshOrderBook53 chunks of the
 * same instrument with the same LastMsgSeqNumProcessed.
 *
 * Draws come from their own PRNG stream (seed, stream 4), made only with
 * --mbo: without it the captures keep their bytes.  Single-threaded.
 */
#ifndef SYNTH_MBO_H
#define SYNTH_MBO_H

#include <stdbool.h>
#include <stdint.h>

#include "synth_random.h"

/** Levels per side of the order model (the price-level depth and the deep book). */
#define SYNTH_MBO_LEVELS 16
/** Orders per level (a price-level entry asking for more is clamped). */
#define SYNTH_MBO_LEVEL_ORDERS 40
/** Order entries one price-level entry may cause (a DeleteThru of a full side). */
#define SYNTH_MBO_PLAN_MAX (SYNTH_MBO_LEVELS * SYNTH_MBO_LEVEL_ORDERS + 64)
/** Order entries waiting for template 47 messages within one message. */
#define SYNTH_MBO_SPILL_MAX 4096

/** State of an order taken by the market (struct synth_mbo take). */
enum {
	SYNTH_MBO_TAKE_NONE = 0,
	SYNTH_MBO_TAKE_CANCEL,    /**< the next entry cancels take_id (one Delete) */
	SYNTH_MBO_TAKE_MOVE,      /**< the next entry removes take_id, held without entry */
	SYNTH_MBO_TAKE_HELD,      /**< the next New or Change places held (one Update) */
};

struct synth_order {
	uint64_t id;
	uint64_t priority;
	int32_t qty;
};

struct synth_order_level {
	int64_t px;
	uint16_t count;
	/* the truth may hold a few more for a moment (see synth_mbo.c) */
	struct synth_order order[SYNTH_MBO_LEVEL_ORDERS + 8];
};

struct synth_order_side {
	uint8_t count;
	struct synth_order_level level[SYNTH_MBO_LEVELS + 2];
};

/** The orders of one instrument (generator's view or the truth). */
struct synth_order_book {
	uint64_t next_id;
	uint64_t next_priority;
	struct synth_order_side side[2];  /**< SYNTH_SIDE_BID, SYNTH_SIDE_OFFER */
};

/** One order entry to write. */
struct synth_mbo_op {
	uint8_t action;           /**< OrderUpdateAction / MDUpdateAction 0 New 1 Update 2 Delete */
	uint8_t side;
	uint8_t deep;             /**< a level beyond the depth: template 47 only */
	uint16_t instrument;
	uint64_t id;
	uint64_t priority;
	int64_t px;
	int32_t qty;
};

struct synth_mbo_counters {
	uint64_t order_entries_46;
	uint64_t order_entries_47;
	uint64_t actions[3];      /**< New, Update, Delete */
	uint64_t qty_up;          /**< Updates that raised the quantity (new priority) */
	uint64_t priority_changes;/**< Updates with the same quantity and price, new priority */
	uint64_t price_changes;   /**< Updates that moved an order to another price */
	uint64_t moves;           /**< order price moves chosen by the market (one Update) */
	uint64_t cancels;         /**< single-order cancels chosen by the market */
	uint64_t fills;           /**< orders filled by trades (partly or fully) */
	uint64_t level_entries;   /**< outright price-level entries (46) */
	uint64_t snapshot53;      /**< 53 messages (chunks) sent */
};

/** State of --mbo, allocated only with it. */
struct synth_mbo {
	struct synth_rng rng;
	struct synth_order_book *book;    /**< [instrument]: generator's view */
	struct synth_order_book *truth;   /**< [instrument]: after the last packet sent */
	int32_t fill;             /**< quantity the next Change fills (trade), 0: none */
	/* One order taken out of a level by the market (synth_mbo_take): the next
	 * outright entry of take_instrument / take_side removes it (cancelled, or
	 * held for a move), and with a move the entry after it places it. */
	uint8_t take;             /**< SYNTH_MBO_TAKE_* */
	uint8_t take_side;
	uint16_t take_instrument;
	uint64_t take_id;
	struct synth_order held;  /**< the order being moved (take == SYNTH_MBO_TAKE_HELD) */
	unsigned int plan_count;
	struct synth_mbo_op plan[SYNTH_MBO_PLAN_MAX];
	unsigned int spill_count;
	struct synth_mbo_op spill[SYNTH_MBO_SPILL_MAX];
	struct synth_mbo_counters counters;
};

#endif /* SYNTH_MBO_H */
