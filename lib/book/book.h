/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Market-by-price order books of CME MDP 3.0 instruments, and the book
 * stage of the feed path that keeps them: per-instrument RptSeq check ->
 * book update -> book events, for packets an arbiter (lib/mdp3,
 * mdp3_feed.h) put in sequence and lib/mdp3's walker decodes.  app/feed
 * composes arbiter -> walker -> this.
 *
 * Books.  Each instrument has an outright book (MarketDepth levels per side,
 * at most BOOK_MAX_DEPTH) and an implied book (BOOK_IMPLIED_DEPTH levels,
 * entry types E/F), both positional: level n (1-based) is array slot n-1,
 * and CME's MDUpdateAction works on positions:
 *   New n         insert at n, levels n.. shift down, the last one falls off;
 *   Change n      replace quantity (and price, orders) at n;
 *   Delete n      remove n, levels below shift up, the last becomes empty;
 *   DeleteThru    empty the side;
 *   DeleteFrom n  remove levels 1..n, the rest shift up by n;
 *   Overlay n     replace the level at n (price, quantity, orders).
 * A slot may be empty (price BOOK_PRICE_NONE): a book joined mid-session only
 * holds the levels updated since.  The consolidated view merges outright and
 * implied levels by price (equal prices add quantities) and is computed on
 * demand.  Prices are integers: mantissa * 10^price_exponent, one exponent
 * per instrument (the feed's configured exponent, default -9, so PRICE
 * (10^-7) and PRICE9 (10^-9) prices compare directly).
 *
 * Feed.  A struct book_feed is one MDP channel: its incremental stream
 * (arbitrated A/B before it reaches the feed), its market-recovery (snapshot) stream and its
 * instrument-replay (definition) stream, its instruments and books.  Rules:
 *  - RptSeq: each instrument's entries (book, trade, statistics, volume)
 *    must come with RptSeq = last + 1.  Lower: already applied, skipped.
 *    Higher: a gap, the instrument becomes stale (BOOK_EVENT_STALE) and its
 *    entries are no longer applied until recovery.
 *  - While any instrument is stale, every incremental packet is copied into
 *    a bounded recovery buffer (oldest overwritten, counted).
 *  - A SnapshotFullRefresh (38, 52, 69) of a stale or unknown instrument, or
 *    one newer than its RptSeq, replaces its books and RptSeq; then the
 *    buffered packets after the snapshot's LastMsgSeqNumProcessed are
 *    replayed for that instrument (its entries with RptSeq > the snapshot's
 *    apply; a gap makes it stale again).  BOOK_EVENT_RECOVERED.
 *  - Conflated-TCP snapshots (61, 68) replace the books; TCP carries no
 *    RptSeq, so instruments fed by book_feed_tcp() are not RptSeq-checked.
 *  - ChannelReset (4) empties every book of the channel, RptSeq restarts
 *    at 1, stale instruments become valid (empty) and the buffer is cleared.
 *    An EmptyBook entry (type J) empties one instrument.
 *  - Instrument definitions (27, 29, 41, 54, 55, 56, 57, 58, 63) set depth
 *    (MDFeedType GBX MarketDepth), implied depth (GBI), tick
 *    (MinPriceIncrement), display factor, symbol and security group;
 *    SecurityUpdateAction D removes the instrument.
 *  - A declared packet loss (both copies missing) does not by itself mark
 *    books stale (BOOK_LOSS_RPTSEQ): the next entry of each affected
 *    instrument reveals its RptSeq gap.  BOOK_LOSS_STALE_ALL marks every
 *    book stale at once instead.
 *  - Events: book changes are coalesced per instrument and published when a
 *    message carries MatchEventIndicator EndOfEvent (or after every packet,
 *    BOOK_PUBLISH_PACKET); trades, status, stale, recovered, reset and
 *    definition events are published at once.
 *
 * Bounds and cost: instruments live in a preallocated open-addressing table
 * of at most max_instruments; the recovery buffer and event list are
 * preallocated by book_feed_init(); the update path allocates
 * nothing and uses no floating point.  A level operation moves at most
 * BOOK_MAX_DEPTH levels; a replay walks at most recovery_packets packets.
 *
 * Threads: a feed and its books belong to one thread (the decode lcore).
 * Callbacks run on it, inside book_feed_message() and friends, and must not
 * call into the same feed except its read-only queries.  The level and
 * instrument functions touch only their arguments.
 *
 * Error convention: constructors return a pointer or NULL with errno set;
 * operations return a non-negative value or a negative errno.
 */
#ifndef BOOK_H
#define BOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mdp3_feed.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most outright levels per side (CME's market-by-price depth is at most 10). */
#define BOOK_MAX_DEPTH 10
/** Implied levels per side (CME sends a 2-deep implied book). */
#define BOOK_IMPLIED_DEPTH 2
/** Most levels of one side of the consolidated view. */
#define BOOK_CONSOLIDATED_DEPTH (BOOK_MAX_DEPTH + BOOK_IMPLIED_DEPTH)
/** Price of an empty level (no value). */
#define BOOK_PRICE_NONE INT64_MIN
/** Default price exponent of every instrument (PRICE9). */
#define BOOK_DEFAULT_PRICE_EXPONENT (-9)
/** Bytes of a symbol, NUL included (CME Symbol is 20 characters). */
#define BOOK_SYMBOL_SIZE 21
/** Bytes of a security group, NUL included (6 characters). */
#define BOOK_GROUP_SIZE 7

/** Book side. */
enum book_side {
	BOOK_BID = 0,
	BOOK_ASK = 1,
};

/** Level operation; values are CME's MDUpdateAction. */
enum book_action {
	BOOK_ACTION_NEW = 0,
	BOOK_ACTION_CHANGE = 1,
	BOOK_ACTION_DELETE = 2,
	BOOK_ACTION_DELETE_THRU = 3,
	BOOK_ACTION_DELETE_FROM = 4,
	BOOK_ACTION_OVERLAY = 5,
};

/** Whether a book can be used. */
enum book_state {
	BOOK_STATE_OK = 0,    /**< every update applied in RptSeq order */
	BOOK_STATE_STALE = 1, /**< an update was missed: waiting for a snapshot */
};

/** One price level (empty: price == BOOK_PRICE_NONE, qty 0, orders 0). */
struct book_level {
	int64_t price;    /**< mantissa at the instrument's price_exponent */
	int64_t qty;      /**< MDEntrySize */
	int32_t orders;   /**< NumberOfOrders; 0 when not sent (implied levels) */
	int32_t reserved;
};

/** Best levels of a book: price BOOK_PRICE_NONE when the side is empty. */
struct book_top {
	int64_t bid_price;
	int64_t bid_qty;
	int64_t ask_price;
	int64_t ask_qty;
	int32_t bid_orders;
	int32_t ask_orders;
};

/** The last trade of an instrument (TradeSummary). */
struct book_trade {
	int64_t price;            /**< at the instrument's price_exponent */
	int64_t qty;
	uint64_t transact_time;   /**< TransactTime of the message, ns */
	int32_t orders;           /**< NumberOfOrders, 0 if null */
	uint32_t trade_id;        /**< MDTradeEntryID, 0 if absent */
	uint8_t aggressor;        /**< AggressorSide: 0 none, 1 buy, 2 sell */
	uint8_t action;           /**< MDUpdateAction: 0 new, 2 delete (trade bust) */
};

/** Instrument flags (struct book_instrument.flags). */
#define BOOK_INSTRUMENT_DEFINED (1u << 0)      /**< a definition was received */
#define BOOK_INSTRUMENT_RPT_KNOWN (1u << 1)    /**< rpt_seq holds a real value */
#define BOOK_INSTRUMENT_NEVER_SYNCED (1u << 2) /**< stale since creation (join: recover) */
#define BOOK_INSTRUMENT_IN_USE (1u << 3)       /**< table slot holds an instrument */
/** The outright book holds every level (valid since a snapshot, a ChannelReset,
 *  an EmptyBook entry or a first RptSeq of 1), not only the levels updated
 *  since a BOOK_JOIN_TRUST join; cleared when the book goes stale.  The
 *  market-by-order oracle compares only such books. */
#define BOOK_INSTRUMENT_COMPLETE (1u << 4)

/**
 * An instrument and its books.  Read-only for users of a feed (the feed
 * owns it); valid until the instrument is removed (definition delete) or
 * the feed destroyed.
 */
struct book_instrument {
	int32_t security_id;
	uint32_t rpt_seq;          /**< RptSeq of the last entry applied */
	uint8_t state;             /**< enum book_state */
	uint8_t depth;             /**< outright levels per side in use */
	uint8_t implied_depth;     /**< implied levels per side in use (0: none) */
	int8_t price_exponent;     /**< prices are mantissa * 10^price_exponent */
	uint8_t flags;             /**< BOOK_INSTRUMENT_* */
	uint8_t trading_status;    /**< SecurityTradingStatus; 0 unknown */
	uint8_t dirty;             /**< internal: changes not yet published */
	uint8_t reserved;
	uint32_t last_msg_seq;     /**< MsgSeqNum of the packet of the last entry applied */
	uint32_t index;            /**< slot in the feed (book_feed_instrument()) */
	uint32_t mbo;              /**< internal: its market-by-order book (config.mbo) */
	uint32_t reserved2;
	uint64_t last_transact_time;
	struct book_level bid[BOOK_MAX_DEPTH];
	struct book_level ask[BOOK_MAX_DEPTH];
	struct book_level implied_bid[BOOK_IMPLIED_DEPTH];
	struct book_level implied_ask[BOOK_IMPLIED_DEPTH];
	struct book_trade last_trade; /**< price BOOK_PRICE_NONE before the first */
	int64_t volume;            /**< last MDIncrementalRefreshVolume size; -1 unknown */
	int64_t tick;              /**< MinPriceIncrement at price_exponent; 0 unknown */
	int64_t display_factor_mantissa; /**< DisplayFactor; 0 unknown */
	int8_t display_factor_exponent;
	char symbol[BOOK_SYMBOL_SIZE];         /**< "" until a definition */
	char security_group[BOOK_GROUP_SIZE];  /**< "" until a definition */
	/** Consolidated top as of the last event about the instrument (kept only
	 *  when the feed has an on_event handler); read it with
	 *  book_event_consolidated() inside a callback. */
	struct book_top published;
};

/* ------------------------------------------------------------------------ */
/* Levels and instruments (no feed)                                           */
/* ------------------------------------------------------------------------ */

/**
 * Apply one operation to one side of a positional book.
 *
 * @param levels  depth slots of one side (slot 0 = level 1).
 * @param depth   slots in use, 1..BOOK_MAX_DEPTH.
 * @param action  operation.
 * @param level   1-based level (ignored by DeleteThru).
 * @param value   price, qty, orders for New / Change / Overlay (else unused,
 *                may be NULL).
 * @return 0 when applied; 1 when applied to an empty slot (Change, Overlay
 *         or Delete of a level the book did not hold); -ERANGE when level is
 *         0 or beyond depth (DeleteFrom clamps instead: it empties the side);
 *         -EINVAL for a NULL levels/value, depth out of range or an unknown
 *         action.  Nothing is changed on error.
 * Thread safety: touches only levels.  No allocation.
 */
int book_levels_apply(struct book_level *levels, unsigned int depth, enum book_action action,
		unsigned int level, const struct book_level *value);

/**
 * Empty n levels (price BOOK_PRICE_NONE, qty 0, orders 0).
 * Thread safety: touches only levels.  No allocation.
 */
void book_levels_clear(struct book_level *levels, unsigned int n);

/**
 * Initialise an instrument with empty books.
 *
 * @param instrument     to initialise.
 * @param security_id    SecurityID.
 * @param depth          outright depth, 1..BOOK_MAX_DEPTH.
 * @param implied_depth  implied depth, 0..BOOK_IMPLIED_DEPTH.
 * @param price_exponent exponent of every price of the instrument.
 * @return 0, or -EINVAL (NULL, depth out of range).
 * Thread safety: touches only *instrument.
 */
int book_instrument_init(struct book_instrument *instrument, int32_t security_id,
		unsigned int depth, unsigned int implied_depth, int8_t price_exponent);

/**
 * Apply one operation to the outright or implied book of an instrument
 * (book_levels_apply() on the right side and depth).
 *
 * @return as book_levels_apply(); -EINVAL for a NULL instrument.
 * Thread safety: touches only *instrument.  No allocation.
 */
int book_instrument_apply(struct book_instrument *instrument, bool implied, enum book_side side,
		enum book_action action, unsigned int level, const struct book_level *value);

/**
 * Empty the outright and implied books (not the definition, RptSeq or
 * state).  NULL is accepted.
 * Thread safety: touches only *instrument.  No allocation.
 */
void book_instrument_clear(struct book_instrument *instrument);

/**
 * Change the depths (a new definition): levels beyond the new depth are
 * emptied.
 * @return 0, or -EINVAL (NULL, depth 0 or over BOOK_MAX_DEPTH, implied
 *         depth over BOOK_IMPLIED_DEPTH).
 * Thread safety: touches only *instrument.
 */
int book_instrument_set_depth(struct book_instrument *instrument, unsigned int depth,
		unsigned int implied_depth);

/**
 * Best levels: slot 0 of the outright and of the implied book, and their
 * consolidation (the better price per side; equal prices add quantities and
 * orders).  Any output may be NULL.
 * Thread safety: reads only *instrument.
 */
void book_instrument_top(const struct book_instrument *instrument, struct book_top *outright,
		struct book_top *implied, struct book_top *consolidated);

/**
 * Consolidated view of one side: non-empty outright and implied levels
 * merged by price (bids descending, asks ascending), equal prices added.
 *
 * @param out  room for max levels (BOOK_CONSOLIDATED_DEPTH is always enough).
 * @return levels written, or -EINVAL for NULL arguments.
 * Thread safety: reads only *instrument.
 */
int book_consolidated(const struct book_instrument *instrument, enum book_side side,
		struct book_level *out, unsigned int max);

/**
 * 64-bit hash of the state that defines a book: security id, state,
 * RptSeq, depths and every level in use (outright and implied).  Equal books
 * hash equal; used to compare books built from different inputs.
 * Thread safety: reads only *instrument.
 */
uint64_t book_instrument_hash(const struct book_instrument *instrument);

/**
 * Convert mantissa * 10^exponent to a mantissa at target_exponent, exactly.
 *
 * @return 0 with *out set; -ERANGE if the value does not fit an int64 or is
 *         not a whole multiple of 10^target_exponent (or is BOOK_PRICE_NONE);
 *         -EINVAL for a NULL out.
 * Thread safety: reentrant.  No floating point.
 */
int book_price_normalize(int64_t mantissa, int exponent, int target_exponent, int64_t *out);

/* ------------------------------------------------------------------------ */
/* Events                                                                     */
/* ------------------------------------------------------------------------ */

/** What an event reports (struct book_event.what, a mask). */
#define BOOK_EVENT_BOOK (1u << 0)       /**< outright and/or implied levels changed */
#define BOOK_EVENT_TRADE (1u << 1)      /**< a trade (trade valid) */
#define BOOK_EVENT_STATUS (1u << 2)     /**< security status (status valid) */
#define BOOK_EVENT_STALE (1u << 3)      /**< the book went stale (RptSeq gap or loss policy) */
#define BOOK_EVENT_RECOVERED (1u << 4)  /**< a snapshot made the book valid again */
#define BOOK_EVENT_RESET (1u << 5)      /**< books emptied (ChannelReset or EmptyBook) */
#define BOOK_EVENT_DEFINITION (1u << 6) /**< instrument added or definition changed */
#define BOOK_EVENT_DELETED (1u << 7)    /**< instrument removed (sent before removal) */
#define BOOK_EVENT_SNAPSHOT (1u << 8)   /**< books replaced by a snapshot */

/** What changed (struct book_event.changed, a mask). */
#define BOOK_CHANGED_OUTRIGHT (1u << 0) /**< outright levels */
#define BOOK_CHANGED_IMPLIED (1u << 1)  /**< implied levels */
#define BOOK_CHANGED_TOP (1u << 2)      /**< consolidated top differs from the one of the
                                             instrument's previous event (any kind) */

/** Security status carried by a BOOK_EVENT_STATUS. */
struct book_status {
	uint8_t trading_status;   /**< SecurityTradingStatus */
	uint8_t halt_reason;      /**< HaltReason */
	uint8_t trading_event;    /**< SecurityTradingEvent */
	char security_group[BOOK_GROUP_SIZE]; /**< the group, when the status names one */
};

/**
 * A book event.  Valid only during the callback, like everything it points
 * to.  It copies nothing the book holds: the tops are read from the
 * instrument through book_event_outright(), book_event_implied() and
 * book_event_consolidated() (inline, a few loads), the trade is the
 * instrument's last_trade.
 */
struct book_event {
	uint32_t what;             /**< BOOK_EVENT_* */
	uint32_t changed;          /**< BOOK_CHANGED_* */
	int32_t security_id;       /**< 0 for a group-wide status */
	uint8_t state;             /**< enum book_state of the book after the event */
	bool replay;               /**< published while replaying buffered packets */
	uint32_t msg_seq_num;      /**< MsgSeqNum of the packet that caused it */
	uint64_t rx_ns;            /**< rx time of that packet */
	uint64_t transact_time;    /**< TransactTime of the message */
	/** The instrument (read-only, may be read in full); NULL for a group
	 *  status and for the status of an unknown SecurityID. */
	const struct book_instrument *instrument;
	/** BOOK_EVENT_TRADE: the trade (&instrument->last_trade); else NULL. */
	const struct book_trade *trade;
	/** BOOK_EVENT_STATUS: the security status; else NULL. */
	const struct book_status *status;
};

/*
 * The better of two best levels of one side, outright (o*) and implied
 * (i*): equal prices add quantities and orders; an empty side (price
 * BOOK_PRICE_NONE) gives way to the other, both empty give the implied one.
 * Internal to the tops below.  Selects, not branches (which side wins
 * follows the market and would mispredict): the better price is the larger
 * bid (BOOK_PRICE_NONE, INT64_MIN, loses by itself) or the smaller ask,
 * compared with BOOK_PRICE_NONE moved to the top of the unsigned order.
 */
static inline void
book__top_merge(int64_t op, int64_t oq, int32_t oo, int64_t ip, int64_t iq, int32_t io,
		bool bid, int64_t *price, int64_t *qty, int32_t *orders)
{
	uint64_t ok = (uint64_t)op - (uint64_t)BOOK_PRICE_NONE - 1;
	uint64_t ik = (uint64_t)ip - (uint64_t)BOOK_PRICE_NONE - 1;
	int64_t p = bid ? (op >= ip ? op : ip) : (ok <= ik ? op : ip);
	/* all ones when the side is used: masks, which compilers keep branch-free */
	int64_t use_o = -(int64_t)((op == p) & (op != BOOK_PRICE_NONE));
	int64_t use_i = -(int64_t)(ip == p);

	*price = p;
	*qty = (oq & use_o) + (iq & use_i);
	*orders = (int32_t)((oo & (int32_t)use_o) + (io & (int32_t)use_i));
}

/** Top of two best levels (empty levels: price BOOK_PRICE_NONE, qty 0). */
static inline struct book_top
book_top_of(const struct book_level *bid, const struct book_level *ask)
{
	struct book_top t = {
		.bid_price = bid->price, .bid_qty = bid->qty,
		.ask_price = ask->price, .ask_qty = ask->qty,
		.bid_orders = bid->orders, .ask_orders = ask->orders,
	};

	return t;
}

/** An empty top (both prices BOOK_PRICE_NONE). */
static inline struct book_top
book_top_empty(void)
{
	struct book_top t = { .bid_price = BOOK_PRICE_NONE, .ask_price = BOOK_PRICE_NONE };

	return t;
}

/**
 * Outright top of an instrument, read in place (level 1 of each side).
 * Thread safety: reads only *instrument.
 */
static inline struct book_top
book_instrument_outright_top(const struct book_instrument *instrument)
{
	return book_top_of(&instrument->bid[0], &instrument->ask[0]);
}

/**
 * Implied top of an instrument (empty without an implied book).
 * Thread safety: reads only *instrument.
 */
static inline struct book_top
book_instrument_implied_top(const struct book_instrument *instrument)
{
	struct book_top t = book_top_of(&instrument->implied_bid[0], &instrument->implied_ask[0]);
	/* all ones with an implied book: masks, as in book__top_merge() */
	int64_t keep = -(int64_t)(instrument->implied_depth != 0);

	t.bid_price = (t.bid_price & keep) | (BOOK_PRICE_NONE & ~keep);
	t.bid_qty &= keep;
	t.bid_orders &= (int32_t)keep;
	t.ask_price = (t.ask_price & keep) | (BOOK_PRICE_NONE & ~keep);
	t.ask_qty &= keep;
	t.ask_orders &= (int32_t)keep;
	return t;
}

/**
 * Consolidated top of an instrument, computed from level 1 of its outright
 * and implied books (what book_instrument_top() gives).
 * Thread safety: reads only *instrument.
 */
static inline struct book_top
book_instrument_consolidated_top(const struct book_instrument *instrument)
{
	struct book_top o = book_instrument_outright_top(instrument);
	struct book_top i = book_instrument_implied_top(instrument);
	struct book_top c;

	book__top_merge(o.bid_price, o.bid_qty, o.bid_orders, i.bid_price, i.bid_qty,
			i.bid_orders, true, &c.bid_price, &c.bid_qty, &c.bid_orders);
	book__top_merge(o.ask_price, o.ask_qty, o.ask_orders, i.ask_price, i.ask_qty,
			i.ask_orders, false, &c.ask_price, &c.ask_qty, &c.ask_orders);
	return c;
}

/**
 * Outright top of the event's instrument as of the event (empty for an
 * event without an instrument).  Call inside the callback only.
 */
static inline struct book_top
book_event_outright(const struct book_event *event)
{
	if (event->instrument == NULL)
		return book_top_empty();
	return book_instrument_outright_top(event->instrument);
}

/**
 * Implied top of the event's instrument as of the event (empty without an
 * instrument or an implied book).  Call inside the callback only.
 */
static inline struct book_top
book_event_implied(const struct book_event *event)
{
	if (event->instrument == NULL)
		return book_top_empty();
	return book_instrument_implied_top(event->instrument);
}

/**
 * Consolidated top of the event's instrument as of the event (empty for an
 * event without an instrument): the value BOOK_CHANGED_TOP compared, which
 * the feed keeps in the instrument (published), so nothing is computed
 * here.  Equal to book_instrument_consolidated_top() during the callback.
 * Call inside the callback only.
 */
static inline struct book_top
book_event_consolidated(const struct book_event *event)
{
	if (event->instrument == NULL)
		return book_top_empty();
	return event->instrument->published;
}

/** Book event callback (the signal stage). */
typedef void (*book_event_fn)(void *ctx, const struct book_event *event);

/** An incremental packet applied in sequence (book_packet_fn). */
struct book_packet_info {
	uint32_t seq;              /**< MsgSeqNum */
	uint32_t length;
	uint64_t rx_ns;
	uint8_t feed;              /**< enum mdp3_feed_id of the copy used */
	bool held;                 /**< it waited in the arbiter's ring */
	uint16_t messages;         /**< messages in the packet */
};

/** Called after each incremental packet was applied (optional). */
typedef void (*book_packet_fn)(void *ctx, const struct book_packet_info *packet);

/** Called when the arbiter declares sequence numbers lost (optional). */
typedef void (*book_loss_fn)(void *ctx, uint32_t first_seq, uint32_t count, uint64_t now_ns);

/** Consumers of a feed; every member may be NULL. */
struct book_feed_handler {
	book_event_fn on_event;
	book_packet_fn on_packet;
	book_loss_fn on_loss;
	void *ctx;
};

/* ------------------------------------------------------------------------ */
/* Feed                                                                       */
/* ------------------------------------------------------------------------ */

/** How an instrument first seen on the incremental stream starts. */
enum book_join {
	/** Valid at once, RptSeq taken from its first entry (books hold what
	 *  was updated since the join: captures, tests, a start before the
	 *  open). */
	BOOK_JOIN_TRUST = 0,
	/** Stale until a snapshot (CME late-join rule), unless its first entry
	 *  has RptSeq 1. */
	BOOK_JOIN_RECOVER = 1,
};

/** When book changes are published. */
enum book_publish {
	BOOK_PUBLISH_END_OF_EVENT = 0, /**< at MatchEventIndicator EndOfEvent */
	BOOK_PUBLISH_PACKET = 1,       /**< at EndOfEvent and after every packet */
};

/** What a declared packet loss does to the books. */
enum book_loss_policy {
	BOOK_LOSS_RPTSEQ = 0,    /**< nothing: each instrument's RptSeq gap shows */
	BOOK_LOSS_STALE_ALL = 1, /**< every valid book goes stale */
};

/** Default instrument capacity. */
#define BOOK_DEFAULT_MAX_INSTRUMENTS 1024u
/** Largest instrument capacity. */
#define BOOK_MAX_INSTRUMENTS (1u << 20)
/** Default packets of the recovery buffer. */
#define BOOK_DEFAULT_RECOVERY_PACKETS 1024u
/** Largest recovery buffer. */
#define BOOK_MAX_RECOVERY_PACKETS (1u << 20)
/** Default MBO books per channel, orders per book, levels per side, differences kept. */
#define BOOK_DEFAULT_MBO_INSTRUMENTS 64u
#define BOOK_DEFAULT_MBO_ORDERS 4096u
#define BOOK_DEFAULT_MBO_LEVELS 1024u
#define BOOK_DEFAULT_MBO_DIFFS 16u
/** Largest MBO bounds (books, orders per book, levels per side). */
#define BOOK_MAX_MBO_INSTRUMENTS (1u << 16)
#define BOOK_MAX_MBO_ORDERS (1u << 24)
#define BOOK_MAX_MBO_LEVELS (1u << 20)

/** Feed configuration; zero fields take the defaults. */
struct book_feed_config {
	uint32_t max_instruments;      /**< table capacity (default 1024) */
	uint32_t recovery_packets;     /**< recovery buffer slots (default 1024) */
	uint8_t default_depth;         /**< outright depth without a definition (10) */
	uint8_t default_implied_depth; /**< implied depth without a definition (2); see
	                                    implied_none */
	bool implied_none;             /**< no implied book without a definition */
	int8_t price_exponent;         /**< exponent of every price (-9; 0 means default) */
	uint8_t join;                  /**< enum book_join */
	uint8_t publish;               /**< enum book_publish */
	uint8_t loss_policy;           /**< enum book_loss_policy */
	/** Largest incremental packet kept in the recovery buffer (bytes; 0:
	 *  MDP3_ARB_DEFAULT_MAX_PACKET, the arbiter's default): the size of a
	 *  recovery slot. app/feed sets it to its arbiter's max_packet_size. */
	uint32_t max_packet_size;
	/** Keep market-by-order books (see "Market by order" below); false: MBO
	 *  messages are counted in messages_ignored and nothing is allocated. */
	bool mbo;
	uint32_t mbo_instruments;  /**< MBO books of the channel (default 64) */
	uint32_t mbo_orders;       /**< resting orders per MBO book (default 4096) */
	uint32_t mbo_levels;       /**< price levels per side of an MBO book (default 1024) */
	uint32_t mbo_diffs;        /**< oracle differences kept (default 16) */
	/** Start every MBO book's OrderID table at the size mbo_orders needs
	 *  (2 × mbo_orders entries, a power of two) instead of 32 entries: no
	 *  doubling (a rehash of the book's orders on the market-data path,
	 *  mbo_table_grows) ever, for a table spread over its whole size while
	 *  the book is small (more cache misses per order entry) and a clear
	 *  (first use, ChannelReset, snapshot) that writes all of it
	 *  (bench_mbo_table, bench_feed --mbo-presize: tests/perf/RESULTS.md). */
	bool mbo_presize;
	/** Widest vector code the feed may run, in bits (today only the MBO
	 *  oracle's level comparison has a 256-bit AVX2 version): 0 (default)
	 *  the widest this CPU and build have, 128 SSE only (tests of that
	 *  path; a host policy like DPDK's --force-max-simd-bitwidth), 256
	 *  AVX2 if the CPU has it.  book_feed_config() gives the width chosen:
	 *  256 or 128 on x86-64, 0 elsewhere.  Other values: -EINVAL. */
	uint16_t max_simd_bits;
	struct book_feed_handler handler;
};

/** Feed counters (monotonic, except stale_books). */
struct book_feed_counters {
	uint64_t packets[MDP3_STREAM_COUNT][MDP3_FEED_COUNT]; /**< datagrams received */
	uint64_t tcp_segments;        /**< conflated-TCP segments received */
	uint64_t packets_applied;     /**< incremental packets decoded in sequence */
	uint64_t malformed;           /**< packets the walker refused (copy rejected) */
	uint64_t messages;            /**< SBE messages decoded */
	uint64_t messages_ignored;    /**< known templates without book effect (MBO, admin ...) */
	uint64_t messages_unknown;    /**< unknown schema/template, skipped */
	uint64_t entries;             /**< instrument entries examined */
	uint64_t book_updates;        /**< level operations applied */
	uint64_t trades;              /**< trade entries applied */
	uint64_t status_updates;      /**< SecurityStatus messages */
	uint64_t rpt_seq_gaps;        /**< instruments made stale by a RptSeq gap */
	uint64_t rpt_seq_duplicates;  /**< entries skipped: RptSeq already applied */
	uint64_t stale_entries;       /**< entries of stale instruments not applied */
	uint64_t stale_books;         /**< instruments stale now (gauge) */
	uint64_t stale_marked_on_loss; /**< books made stale by BOOK_LOSS_STALE_ALL */
	uint64_t recoveries;          /**< stale instruments made valid by a snapshot */
	uint64_t snapshots;           /**< snapshot messages applied */
	uint64_t snapshots_ignored;   /**< snapshot messages not needed or not newer */
	uint64_t channel_resets;      /**< ChannelReset messages */
	uint64_t book_resets;         /**< EmptyBook entries */
	uint64_t definitions;         /**< definition messages applied */
	uint64_t definitions_deleted; /**< instruments removed */
	uint64_t declared_losses;     /**< loss ranges declared by the arbiter */
	uint64_t lost_packets;        /**< sequence numbers declared lost */
	uint64_t level_out_of_range;  /**< operations at level 0 or beyond depth, ignored */
	uint64_t level_missing;       /**< Change/Overlay/Delete of an empty level */
	uint64_t bad_entries;         /**< null or unrepresentable price, unknown type */
	uint64_t depth_clamped;       /**< definitions deeper than BOOK_MAX_DEPTH */
	uint64_t table_full;          /**< entries dropped: no room for a new instrument */
	uint64_t recovery_buffered;   /**< packets copied into the recovery buffer */
	uint64_t recovery_overflows;  /**< buffered packets overwritten while still needed */
	uint64_t recovery_oversize;   /**< packets too large for a recovery slot */
	uint64_t replayed_packets;    /**< buffered packets replayed after snapshots */
	uint64_t events;              /**< events published */
	/* Market by order (config.mbo).  Every order entry examined live ends in
	 * exactly one of mbo_new, mbo_changes, mbo_deletes, mbo_unknown_orders,
	 * mbo_bad_entries, mbo_not_applied. */
	uint64_t mbo_entries_47;      /**< order entries of MDIncrementalRefreshOrderBook47 */
	uint64_t mbo_entries_46;      /**< NoOrderIDEntries of MDIncrementalRefreshBook46 */
	uint64_t mbo_new;             /**< orders added */
	uint64_t mbo_changes;         /**< orders changed (quantity, price, priority) */
	uint64_t mbo_deletes;         /**< orders deleted */
	uint64_t mbo_unknown_orders;  /**< change/delete of an order the book does not hold (a
	                                   partial book inserts the change; a valid one goes stale) */
	uint64_t mbo_bad_entries;     /**< null order id, price, quantity or reference; not a bid
	                                   or offer (a valid book goes stale) */
	uint64_t mbo_not_applied;     /**< entries of a book that is stale, loading a snapshot,
	                                   overflowed, or refused a book */
	uint64_t mbo_replayed;        /**< order entries applied from the recovery buffer */
	uint64_t mbo_books_refused;   /**< instruments refused an MBO book (mbo_instruments hit) */
	uint64_t mbo_order_overflows; /**< books emptied and marked overflow: mbo_orders hit */
	uint64_t mbo_level_overflows; /**< books emptied and marked overflow: mbo_levels hit */
	uint64_t mbo_stale_marked;    /**< MBO books made stale (RptSeq gap, loss, sequence jump,
	                                   unknown order or bad entry in a valid book) */
	uint64_t mbo_stale_books;     /**< MBO books stale, loading or overflowed now (gauge) */
	uint64_t mbo_snapshots;       /**< order-book snapshots (53) that made a book valid */
	uint64_t mbo_snapshots_ignored; /**< 53 not needed (book valid), chunk missing, or the
	                                   buffer lacks a packet after LastMsgSeqNumProcessed */
	uint64_t mbo_resets;          /**< MBO books emptied by ChannelReset or EmptyBook */
	uint64_t mbo_table_grows;     /**< OrderID tables doubled in place (a rehash of the
	                                   book's orders; at most log2(mbo_orders / 16) a book
	                                   between clears) */
	uint64_t mbo_checks;          /**< oracle comparisons (book, end of event) */
	uint64_t mbo_mismatches;      /**< comparisons with at least one level different */
	uint64_t mbo_level_diffs;     /**< levels that differed, over all comparisons */
	/** comparisons put off: a snapshot 52 set the price levels as of a
	 *  packet the incrementals (and so the MBO book) have not passed yet;
	 *  compared at the first end of event after it */
	uint64_t mbo_checks_ahead;
};

/** A feed (opaque). */
struct book_feed;

/**
 * Bytes a feed with this configuration needs (for book_feed_init()).
 * @return the size, or 0 with errno = EINVAL for an invalid configuration
 *         (capacities over the maxima, depths out of range, enums out of
 *         range).
 * Thread safety: any thread.
 */
size_t book_feed_memsize(const struct book_feed_config *config);

/**
 * Build a feed in caller memory (e.g. hugepages on the NUMA node of the rx
 * queues).  Everything the feed will ever use is laid out in it.
 *
 * @param mem     at least book_feed_memsize() bytes, 64-byte aligned.
 * @param size    bytes at mem.
 * @param config  configuration (copied); NULL for all defaults.
 * Every byte of the feed's layout is written here (zeroed), so the pages
 * are faulted in now and not on the first packet that reaches a book.
 * @return the feed, or NULL with errno = EINVAL (bad configuration or
 *         alignment) or ENOSPC (size too small).
 * Thread safety: touches only mem.
 */
struct book_feed *book_feed_init(void *mem, size_t size, const struct book_feed_config *config);

/**
 * Allocate and build a feed (book_feed_init() in aligned heap memory).
 * @return the feed, or NULL with errno = EINVAL or ENOMEM.
 * Thread safety: any thread.
 */
struct book_feed *book_feed_create(const struct book_feed_config *config);

/**
 * Free a feed from book_feed_create() (a feed from book_feed_init() lives in
 * the caller's memory and is left alone); NULL is accepted.
 * Thread safety: the feed's thread, once it is no longer used.
 */
void book_feed_destroy(struct book_feed *feed);

/**
 * One snapshot (market recovery) or definition (instrument replay) packet
 * applied to the books at once: counted in packets[stream][id], decoded,
 * snapshots and definitions applied (both feeds may be given: a second copy
 * of a snapshot is ignored by its RptSeq).  Incremental packets go through
 * book_feed_apply() or book_feed_packet_begin() / book_feed_message() /
 * book_feed_packet_end().  Events run before it returns.
 *
 * @param feed    feed.
 * @param stream  MDP3_STREAM_SNAPSHOT or MDP3_STREAM_DEFINITION.
 * @param id      MDP3_FEED_A or MDP3_FEED_B.
 * @param data    UDP payload (binary packet header first); only read, not
 *                kept after the call.
 * @param length  bytes at data.
 * @param rx_ns   rx time, ns.
 * @return 0; -EBADMSG for a malformed packet (counted in malformed, nothing
 *         applied); -EINVAL for NULL feed/data, id out of range, stream out
 *         of range or MDP3_STREAM_INCREMENTAL.
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_stream_packet(struct book_feed *feed, enum mdp3_stream stream,
		enum mdp3_feed_id id, const uint8_t *data, size_t length, uint64_t rx_ns);

/**
 * Apply one incremental packet that is already in sequence (arbitrated
 * elsewhere, or a single feed trusted as is: lib/book has no arbiter; A/B
 * arbitration is lib/mdp3's, composed with the books in app/feed): begin,
 * decode with the feed's own walker, end (decode, RptSeq, books, recovery
 * buffer, events, on_packet).
 *
 * @return 0; -EBADMSG for a malformed packet (counted, nothing applied);
 *         -EINVAL for NULL feed/data or id out of range.
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_apply(struct book_feed *feed, enum mdp3_feed_id id, const uint8_t *data,
		size_t length, uint64_t rx_ns);

/* ------------------------------------------------------------------------ */
/* Stage-split incremental path: decoder stage -> book stage                  */
/* ------------------------------------------------------------------------ */

struct mdp3_msg;

/**
 * One in-sequence incremental packet travelling from the decoder stage to
 * the book stage.  book_feed_packet_begin() fills it; the decoder hands a
 * pointer to it with every message (book_feed_message()); book_feed_packet_end()
 * closes it.  Caller storage (the decoder's stack or actor state); the
 * members are read-only for the caller except held.
 */
struct book_packet_ctx {
	const uint8_t *data;   /**< the packet: must stay valid and unchanged until
	                            book_feed_packet_end() returns (it may be
	                            copied into the recovery buffer there) */
	uint32_t length;       /**< bytes at data */
	uint32_t seq;          /**< MsgSeqNum (from the binary packet header) */
	uint64_t rx_ns;        /**< rx time given to begin */
	uint8_t feed;          /**< enum mdp3_feed_id of the copy */
	bool held;             /**< caller may set it between begin and end: the
	                            copy waited in an arbiter (reported by on_packet) */
	uint16_t messages;     /**< messages handed to the book stage so far */
	uint32_t open;         /**< internal: packet number of the feed, checks pairing */
};

/**
 * Decoder/book split of book_feed_apply(), for a pipeline whose decoder and
 * book are separate stages (actors chained with fast_send on one lcore):
 *
 * @code
 * struct book_packet_ctx pc;              // travels with every message
 *
 * book_feed_packet_begin(feed, MDP3_FEED_A, data, length, rx_ns, &pc);
 * rc = mdp3_walk_packet(&decoder_walker, data, length);
 *         // decoder on_message(ctx, pkt, msg): hand (&pc, msg) to the book
 *         //   stage, which calls book_feed_message(feed, &pc, msg);
 *         // decoder on_skip (optional): book_feed_message(feed, &pc, NULL)
 * book_feed_packet_end(feed, &pc, rc);    // rc: the walker's result
 * @endcode
 *
 * book_feed_apply() is exactly this composition (begin, the feed's own
 * walker calling book_feed_message(), end), so both paths give the same
 * books, events and counters.  All-or-nothing is the walker's guarantee:
 * mdp3_walk_packet() checks the whole packet before it delivers the first
 * message, so a malformed packet reaches the book stage as no message and
 * an end with -EBADMSG.  The three calls run on the feed's thread, in order,
 * one packet open at a time; snapshot and definition packets go through
 * book_feed_stream_packet(), TCP through book_feed_tcp().
 */

/**
 * Open an incremental packet that is already in sequence (arbitrated by the
 * caller, e.g. an arbiter stage with its own struct mdp3_arb): counts the
 * datagram, reads MsgSeqNum and prepares the RptSeq/event context.  Does
 * not validate or decode (the decoder's walker does) and applies nothing.
 *
 * @param feed    feed.
 * @param id      MDP3_FEED_A or MDP3_FEED_B (the copy used).
 * @param data    the UDP payload, binary packet header first; must stay
 *                valid until book_feed_packet_end() returns.
 * @param length  bytes at data.
 * @param rx_ns   rx time, ns.
 * @param ctx     filled (held = false, messages = 0).
 * @return 0; -EINVAL for NULL feed/data/ctx or id out of range.
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_packet_begin(struct book_feed *feed, enum mdp3_feed_id id, const uint8_t *data,
		size_t length, uint64_t rx_ns, struct book_packet_ctx *ctx);

/**
 * Apply one decoded SBE message of the open packet: RptSeq gate, books,
 * trades, statistics, status, definitions, channel reset; events published
 * at once or, for book changes, at the message's EndOfEvent.
 *
 * @param feed  feed.
 * @param ctx   the open packet (from book_feed_packet_begin()).
 * @param msg   a message as the mdp3 walker delivered it, for this packet's
 *              bytes (views valid during the call only); NULL for a message
 *              the walker skipped (unknown schema/template: counted only).
 * @return 0; -EINVAL for NULL feed/ctx (and, in debug builds, a ctx that
 *         is not the feed's open packet: assert).
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_message(struct book_feed *feed, struct book_packet_ctx *ctx,
		const struct mdp3_msg *msg);

/**
 * Close the open packet.  When walk_rc is 0: the packet counts as applied,
 * pending book changes are published (BOOK_PUBLISH_PACKET), it is copied
 * into the recovery buffer while a book is stale, on_packet runs.  When
 * walk_rc is negative (-EBADMSG: the walker refused the packet and
 * delivered nothing): counted as malformed, nothing else.
 *
 * @param feed     feed.
 * @param ctx      the open packet.
 * @param walk_rc  the decoder walker's result for the packet.
 * @return 0; -EBADMSG when walk_rc < 0 (as book_feed_apply()); -EINVAL for
 *         NULL feed/ctx.
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_packet_end(struct book_feed *feed, struct book_packet_ctx *ctx, int walk_rc);

/**
 * Sequence numbers first_seq .. first_seq + count - 1 were declared lost by
 * the arbiter (lib/mdp3's, outside the feed): counted, pending events
 * published, the loss policy applied, on_loss called.  Call between
 * packets, not inside one.
 *
 * @return 0; -EINVAL for NULL feed or count 0.
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_loss(struct book_feed *feed, uint32_t first_seq, uint32_t count, uint64_t now_ns);

/**
 * One TCP segment payload of an MDP conflated-TCP session (0xCAFE frames):
 * snapshots 61/68 replace books, incrementals apply without RptSeq checks
 * (TCP is ordered and lossless).
 * @return 0, -EBADMSG for a malformed frame (earlier frames applied), -EINVAL.
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_tcp(struct book_feed *feed, const uint8_t *data, size_t length, uint64_t rx_ns);

/**
 * The exchange restarted the incremental sequence (weekly start, failover):
 * the recovery buffer is emptied (the caller resets its arbiter too,
 * mdp3_arb_reset(); app/feed's tw_feed_sequence_reset() does both).  Books,
 * RptSeq and states are kept.
 * @return 0, or -EINVAL for NULL.
 * Thread safety: the feed's thread only.
 */
int book_feed_sequence_reset(struct book_feed *feed);

/**
 * Publish pending book changes now (end of input; the arbiter's flush comes
 * first, app/feed's tw_feed_finish()).
 * @return 0, or -EINVAL for NULL.
 * Thread safety: the feed's thread only.  No allocation.
 */
int book_feed_flush(struct book_feed *feed, uint64_t now_ns);

/**
 * Instrument by SecurityID.
 * @return the instrument, or NULL with errno = ENOENT (or EINVAL for NULL).
 * Thread safety: the feed's thread (or while it is idle).
 */
const struct book_instrument *book_feed_find(const struct book_feed *feed, int32_t security_id);

/**
 * Instrument slots (max_instruments); iterate with book_feed_instrument().
 * @return the capacity, 0 for NULL.
 * Thread safety: any thread (constant after init).
 */
uint32_t book_feed_capacity(const struct book_feed *feed);

/**
 * Instruments held now.
 * @return the count, 0 for NULL.
 * Thread safety: the feed's thread (or while it is idle).
 */
uint32_t book_feed_instrument_count(const struct book_feed *feed);

/**
 * Instrument in a slot.  Slots are filled in order of creation; a removed
 * instrument's slot is reused.
 * @return the instrument, or NULL when the slot is free, index is out of
 *         range or feed is NULL.
 * Thread safety: the feed's thread (or while it is idle).
 */
const struct book_instrument *book_feed_instrument(const struct book_feed *feed, uint32_t index);

/**
 * Hash of every book of the feed: the sum of book_instrument_hash() over
 * its instruments (independent of their order in the table).
 * @return the hash, 0 for NULL or no instrument.
 * Thread safety: the feed's thread (or while it is idle).  O(instruments).
 */
uint64_t book_feed_hash(const struct book_feed *feed);

/**
 * Counters of the feed.
 * @return a pointer valid while the feed lives, NULL for NULL.
 * Thread safety: read on the feed's thread or while it is idle (plain
 * 64-bit counters, no atomics).
 */
const struct book_feed_counters *book_feed_counters(const struct book_feed *feed);

/**
 * The configuration in use, defaults filled in.
 * @return a pointer valid while the feed lives, NULL for NULL.
 * Thread safety: any thread (constant after init).
 */
const struct book_feed_config *book_feed_config(const struct book_feed *feed);

/** Name of a state ("ok", "stale"), "?" out of range.  Any thread. */
const char *book_state_name(enum book_state state);

/** Name of an action ("new", "change", ...), "?" out of range.  Any thread. */
const char *book_action_name(enum book_action action);


/* ------------------------------------------------------------------------ */
/* Market by order (config.mbo)                                               */
/* ------------------------------------------------------------------------ */

/*
 * With config.mbo the feed keeps, per instrument, every resting outright
 * order: from MDIncrementalRefreshOrderBook47 entries (MDUpdateAction
 * New/Change/Delete), from the NoOrderIDEntries of
 * MDIncrementalRefreshBook46 (OrderUpdateAction; price, side and instrument
 * taken from the level entry named by ReferenceID), and from order-book
 * snapshots 53.  Within a price level orders are kept by MDOrderPriority
 * (lower first; equal priorities in arrival order).  Memory is fixed at
 * init: mbo_instruments books of mbo_orders orders and mbo_levels levels per
 * side; a bound hit is refused and counted, never a wrong book (see the
 * states).  lib/book/README.md, "Market by order", has the rules.
 */

/** State of an MBO book. */
enum book_mbo_state {
	/** Complete: every order since an order-book snapshot, a ChannelReset or
	 *  an EmptyBook entry; the oracle compares it with the price levels. */
	BOOK_MBO_VALID = 0,
	/** Joined mid-stream (BOOK_JOIN_TRUST): the orders seen since; orders
	 *  resting from before are missing.  Readable, never compared. */
	BOOK_MBO_PARTIAL = 1,
	/** A gap (RptSeq gap of the instrument, declared loss, MsgSeqNum jump,
	 *  unknown order in a valid book), or loading a snapshot: entries are
	 *  not applied until a snapshot or a reset; not readable. */
	BOOK_MBO_STALE = 2,
	/** mbo_orders or mbo_levels was hit: emptied, not applied until a
	 *  snapshot that fits or a reset; not readable. */
	BOOK_MBO_OVERFLOW = 3,
};

/** One resting order. */
struct book_order {
	uint64_t order_id;   /**< OrderID */
	uint64_t priority;   /**< MDOrderPriority (UINT64_MAX when sent null) */
	int64_t price;       /**< at the instrument's price_exponent */
	int64_t qty;         /**< MDDisplayQty */
	uint8_t side;        /**< enum book_side */
};

/** Where an order (or a priority) stands in its price level's queue. */
struct book_mbo_queue {
	int64_t price;
	int64_t qty_ahead;      /**< displayed quantity of the orders ahead */
	int64_t level_qty;      /**< displayed quantity of the whole level */
	uint32_t orders_ahead;  /**< orders ahead (better priority) */
	uint32_t level_orders;  /**< orders at the level */
};

/** One level where the MBO aggregate and the price-level book differ. */
struct book_mbo_diff {
	int32_t security_id;
	uint32_t msg_seq_num;     /**< packet of the end of event where it was seen */
	uint8_t side;             /**< enum book_side */
	uint8_t level;            /**< 1-based level */
	struct book_level mbo;    /**< aggregated from the orders (empty: none) */
	struct book_level mbp;    /**< the price-level book's */
};

/** An MBO book (opaque; read through the functions below). */
struct book_mbo;

/**
 * The MBO book of an instrument.
 * @return the book, or NULL with errno = ENOENT (no book: MBO off, never
 *         seen, or refused for want of a free book) or EINVAL (NULL feed).
 * Thread safety: the feed's thread (or while it is idle).
 */
const struct book_mbo *book_feed_mbo(const struct book_feed *feed, int32_t security_id);

/** State of an MBO book (enum book_mbo_state); BOOK_MBO_STALE for NULL. */
enum book_mbo_state book_mbo_state(const struct book_mbo *mbo);

/** Orders held (0 unless valid or partial, or for NULL). */
uint32_t book_mbo_order_count(const struct book_mbo *mbo);

/**
 * One order by OrderID.
 * @return 0 with *out set; -ENOENT (not held); -ESTALE (book stale or
 *         overflowed); -EINVAL (NULL).
 * Thread safety: the feed's thread (or while it is idle).
 */
int book_mbo_order(const struct book_mbo *mbo, uint64_t order_id, struct book_order *out);

/**
 * Price levels of one side aggregated from the orders, best first (price,
 * sum of displayed quantities, order count): the view the oracle compares
 * with the price-level book.
 * @return levels written (at most max); -ESTALE (book stale or
 *         overflowed); -EINVAL (NULL mbo or out with max > 0).
 * Thread safety: the feed's thread (or while it is idle).  O(max).
 */
int book_mbo_levels(const struct book_mbo *mbo, enum book_side side, struct book_level *out,
		unsigned int max);

/**
 * The orders of one price level in priority order (first = next to fill).
 * @return orders written (at most max); -ENOENT (no such level); -ESTALE;
 *         -EINVAL.
 * Thread safety: the feed's thread (or while it is idle).  O(orders written).
 */
int book_mbo_level_orders(const struct book_mbo *mbo, enum book_side side, int64_t price,
		struct book_order *out, unsigned int max);

/**
 * Queue position of a resting order: the orders and displayed quantity
 * ahead of it at its level.
 * @return 0 with *out set; -ENOENT (no such order at that side and price);
 *         -ESTALE (the book is not BOOK_MBO_VALID: a position in a partial
 *         book would be a guess); -EINVAL.
 * Thread safety: the feed's thread (or while it is idle).  O(orders ahead).
 */
int book_mbo_queue_by_order(const struct book_mbo *mbo, enum book_side side, int64_t price,
		uint64_t order_id, struct book_mbo_queue *out);

/**
 * Queue position an order of this MDOrderPriority has or would have at a
 * level: the orders with a lower priority value are ahead (an equal one
 * too: it arrived first).  A price without a level gives zeros.
 * @return 0 with *out set; -ESTALE (not BOOK_MBO_VALID); -EINVAL.
 * Thread safety: the feed's thread (or while it is idle).  O(orders ahead).
 */
int book_mbo_queue_by_priority(const struct book_mbo *mbo, enum book_side side, int64_t price,
		uint64_t priority, struct book_mbo_queue *out);

/**
 * Where an order joining a level now would stand: the MDOrderPriority of
 * the level's last order (0 when the price has no level).  Passed later to
 * book_mbo_queue_by_priority(), it counts the orders that were ahead of the
 * joiner and are still there (a later order, or one that lost its priority,
 * has a higher value and is behind).
 * @return 0 with *priority set; -ESTALE (not BOOK_MBO_VALID); -EINVAL.
 * Thread safety: the feed's thread (or while it is idle).  O(log levels).
 */
int book_mbo_queue_back(const struct book_mbo *mbo, enum book_side side, int64_t price,
		uint64_t *priority);

/**
 * The first differences the oracle found (price levels aggregated from the
 * MBO book against the price-level book, compared at every EndOfEvent for
 * instruments whose MBO book is BOOK_MBO_VALID and whose price-level book
 * is valid and BOOK_INSTRUMENT_COMPLETE); the first mbo_diffs are kept, the
 * rest only counted (mbo_mismatches, mbo_level_diffs).
 * @return differences written (at most max); -EINVAL (NULL feed, or NULL
 *         out with max > 0).
 * Thread safety: the feed's thread (or while it is idle).
 */
int book_feed_mbo_diffs(const struct book_feed *feed, struct book_mbo_diff *out,
		unsigned int max);

/**
 * Hash of an MBO book: security id, state, and for a readable book every
 * level (best first) and its orders in priority (OrderID, MDOrderPriority,
 * MDDisplayQty).  Two runs that built the same book give the same value.
 * O(orders).  0 for NULL.
 */
uint64_t book_mbo_hash(const struct book_mbo *mbo);

/** Sum of book_mbo_hash() over the channel's MBO books (0 without config.mbo). */
uint64_t book_feed_mbo_hash(const struct book_feed *feed);

/** Name of an MBO state ("valid", "partial", "stale", "overflow"), "?" out of range. */
const char *book_mbo_state_name(enum book_mbo_state state);

#ifdef __cplusplus
}
#endif

#endif /* BOOK_H */
