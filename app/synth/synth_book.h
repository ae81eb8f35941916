/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Market-by-price books of tickwire-synth, and the MDP 3.0 book rules the
 * generator writes by (the same rules a receiver applies).  Levels are
 * 1-based; bids descend, offers ascend; prices are PRICE9 mantissas.
 *
 *   New (0) at L        insert at L, shift L.. down; a level pushed past the
 *                       depth falls off (CME sends no delete for it).
 *   Change (1) at L     new size / order count at L; the price stays.
 *   Delete (2) at L     remove L, shift the levels below up.
 *   DeleteThru (3)      clear the whole side (sent with level 1).
 *   DeleteFrom (4) at L remove levels 1..L, shift the rest up.
 *   Overlay (5) at L    replace the price (and size) at L.
 *
 * Single-threaded; no allocation.
 */
#ifndef SYNTH_BOOK_H
#define SYNTH_BOOK_H

#include <stdbool.h>
#include <stdint.h>

/** Deepest book (outright) the generator builds. */
#define SYNTH_MAX_DEPTH 10
/** Depth of the implied book (GBI). */
#define SYNTH_IMPLIED_DEPTH 2

enum synth_side_id {
	SYNTH_SIDE_BID,
	SYNTH_SIDE_OFFER,
	SYNTH_SIDE_IMPLIED_BID,
	SYNTH_SIDE_IMPLIED_OFFER,
	SYNTH_SIDE_COUNT,
};

struct synth_level {
	int64_t px;
	int32_t size;
	int32_t orders;           /**< 0 for implied levels (sent as null) */
};

struct synth_side {
	uint8_t count;
	struct synth_level level[SYNTH_MAX_DEPTH];
};

/** What a receiver knows of one instrument. */
struct synth_book {
	int32_t security_id;
	uint8_t depth;            /**< outright depth (GBX MarketDepth) */
	uint32_t rpt_seq;         /**< last RptSeq applied (0: none since a reset) */
	uint8_t status;           /**< SecurityTradingStatus */
	bool has_trade;
	int64_t trade_px;
	int32_t trade_size;
	uint64_t transact_time;   /**< TransactTime of the last entry applied */
	struct synth_side side[SYNTH_SIDE_COUNT];
};

/** One book entry as sent in MDIncrementalRefreshBook46. */
struct synth_book_op {
	uint8_t action;           /**< MDUpdateAction */
	uint8_t side;             /**< enum synth_side_id */
	uint8_t level;            /**< MDPriceLevel, 1-based */
	int64_t px;
	int32_t size;
	int32_t orders;
};

/** Depth of a side of book (outright depth or SYNTH_IMPLIED_DEPTH). */
static inline unsigned int
synth_book_side_depth(const struct synth_book *book, unsigned int side)
{
	return side >= SYNTH_SIDE_IMPLIED_BID ? SYNTH_IMPLIED_DEPTH : book->depth;
}

/** Whether side id is a bid side (outright or implied). */
static inline bool
synth_side_is_bid(unsigned int side)
{
	return side == SYNTH_SIDE_BID || side == SYNTH_SIDE_IMPLIED_BID;
}

/**
 * Apply one entry by the rules above.
 * @return 0; -EINVAL if the level is out of range for the action (the book
 *         is then unchanged).
 */
int synth_book_apply(struct synth_book *book, const struct synth_book_op *op);

/** Empty every side, forget the last trade; RptSeq back to 0. */
void synth_book_clear(struct synth_book *book);

/** Whether two books hold the same levels, RptSeq, status and last trade. */
bool synth_book_equal(const struct synth_book *a, const struct synth_book *b);

#endif /* SYNTH_BOOK_H */
