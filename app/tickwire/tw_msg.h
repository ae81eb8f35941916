/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_MSG_H
#define TICKWIRE_TW_MSG_H

/**
 * @file
 * Messages between the actors of the appliance (DESIGN.md section 1), and
 * the wire format of the orders the order-out actor writes. No DPDK here:
 * the same actors run inside the DPDK appliance (app/tickwire) and inside
 * the library-only replay (app/replay), which is how a strategy's orders in
 * backtest and live are the same bytes.
 *
 * Actors and the message types each handles:
 *  - "arbiter" (decode group): TW_MSG_RX (a received datagram, from a capture
 *    by act_send or from the decode lcore itself by act_fast_send),
 *    TW_MSG_TICK (time passes), TW_MSG_FLUSH (end of input). One lib/mdp3
 *    arbiter per channel; in-sequence packets go on to the decoder.
 *  - "decoder" (decode group, private): TW_MSG_PACKET (one in-sequence
 *    packet: walked, its decoded messages handed to the book in a batch).
 *  - "book" (decode group): TW_MSG_BOOK_BATCH (a packet's decoded messages,
 *    from the decoder), TW_MSG_BOOK_LOSS (from
 *    the arbiter), TW_MSG_BOOK_DIRECT (snapshot and definition packets, from
 *    the arbiter), TW_MSG_FLUSH, TW_MSG_QUERY (telemetry: a copy of one
 *    book's top, from any thread through the group's mailbox,
 *    tw_chain_query()).
 *  - "signal" (decode group, private): TW_MSG_TOP (a published top of book,
 *    a trade, or a change of the book's state: stale, recovered, silent;
 *    the signal's reply, if any, is a struct tw_queue_join),
 *    TW_MSG_ORDER_REPLY (order-out's asynchronous reply to each TW_MSG_ORDER:
 *    sent, or refused and why), TW_MSG_EXEC (an execution report of the
 *    exchange, relayed by order-out).
 *  - "order_out" (its own group, on the order-out lcore): TW_MSG_ORDER,
 *    TW_MSG_POLL (step the iLink 3 session; sent by the order-out lcore
 *    itself with act_fast_send), TW_MSG_KILL (kill switch, from telemetry
 *    or the SIGUSR1 flag on the main lcore), TW_MSG_HALT (an instrument
 *    halted or resumed by the decode group, "stale means stop", on
 *    order-out's control queue: ahead of the orders already queued).
 * Order-out's replies and execution reports reach the signal on the decode
 * group's control queue (act_send_control()), ahead of the market data
 * queued in its mailbox; they never wait behind it and are never dropped.
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Message types; one handler table index space shared by all actors. */
enum tw_msg_type {
	TW_MSG_RX = 0,   /**< struct tw_rx: a received datagram */
	TW_MSG_TICK,     /**< struct tw_tick: let time-bounded gaps expire */
	TW_MSG_FLUSH,    /**< struct tw_tick: end of input, release everything held */
	TW_MSG_TOP,      /**< struct tw_top: a book event for the signal */
	TW_MSG_ORDER,    /**< struct tw_order: an order for the order-out actor */
	TW_MSG_QUERY,    /**< struct tw_query: request; reply struct tw_query_reply */
	TW_MSG_ORDER_REPLY, /**< struct tw_order_reply: order-out -> signal */
	TW_MSG_EXEC,     /**< struct tw_exec: execution report, order-out -> signal */
	TW_MSG_POLL,     /**< struct tw_tick: step the order session */
	TW_MSG_KILL,     /**< struct tw_kill: engage or release the kill switch */
	/* the stages of the decode group (payloads in tw_chain.c: they carry
	 * lib/mdp3 and lib/book types; only the chain sends them) */
	TW_MSG_PACKET,       /**< arbiter -> decoder: an in-sequence packet */
	TW_MSG_BOOK_BATCH,   /**< decoder -> book: a packet's decoded messages */
	TW_MSG_BOOK_LOSS,    /**< arbiter -> book: sequence numbers declared lost */
	TW_MSG_BOOK_DIRECT,  /**< arbiter -> book: a snapshot or definition packet */
	TW_MSG_HALT,         /**< decode group -> order-out: halt or resume an instrument */
	TW_MSG_COUNT_
};

/** Which copy of the channel a datagram came on (enum mdp3_feed_id values). */
enum tw_side {
	TW_SIDE_A = 0,
	TW_SIDE_B = 1,
};

/**
 * A received datagram. @c frame is the whole Ethernet frame (an mbuf's data
 * in the appliance, a pcap record in the replay); the payload is the UDP
 * payload inside it, already located by the sender's feed filter.
 * @c cookie is handed back to the release function of the chain once the
 * feed is done with the bytes (rte_pktmbuf_free() in the appliance).
 */
struct tw_rx {
	void *cookie;             /**< what to release (the mbuf), may be NULL */
	const uint8_t *payload;   /**< UDP payload: MDP binary packet header first */
	uint32_t length;          /**< bytes of payload */
	uint8_t side;             /**< enum tw_side */
	uint8_t stream;           /**< enum mdp3_stream: 0 incremental, 1 snapshot, 2 definition */
	uint16_t channel;         /**< CME channel of the feed it came on; 0: the chain's first */
	uint64_t t0;              /**< rx time, TSC ticks (latency) */
	uint64_t rx_ns;           /**< rx time, ns (arbiter gap waits) */
	uint32_t qlen;            /**< hand-off queue depth seen at enqueue (0: direct) */
	uint32_t burst_idx;       /**< index of the packet in its rx burst */
	uint32_t rxq;             /**< packets ahead of it in the rx queue at arrival */
	uint32_t rx_flags;        /**< TW_RX_RXQ: rxq is known (paced replay) */
	uint64_t release;         /**< paced replay: the player's release number */
};

/** struct tw_rx.rx_flags */
#define TW_RX_RXQ (1u << 0)
/** paced replay: release is set */
#define TW_RX_RELEASE (1u << 1)
/** paced replay: put in release order already (tw_merge.h): not held again */
#define TW_RX_MERGED (1u << 2)

/** Time passing (TW_MSG_TICK, TW_MSG_FLUSH). */
struct tw_tick {
	uint64_t now_ns;
};

/** What a TW_MSG_TOP reports. */
enum tw_top_kind {
	TW_TOP_BOOK = 0,          /**< the consolidated top of book changed */
	TW_TOP_TRADE = 1,         /**< a trade */
	/** the book's state changed (ok: valid again, or stale; why: enum
	 *  tw_state_why). The prices are the book's top at that moment. */
	TW_TOP_STATE = 2,
};

/**
 * Why a TW_TOP_STATE (struct tw_top.why). The first four stop trading on
 * the instrument (the chain refuses its orders in order-out and, with
 * recovery.cancel_on_stale, cancels its working orders); the last two end
 * that (with recovery.resume; dpdk-config/README.md, "Stale means stop").
 */
enum tw_state_why {
	TW_STATE_NONE = 0,
	TW_STATE_GAP = 1,         /**< RptSeq gap: the book missed an update (stale) */
	TW_STATE_LOSS = 2,        /**< packets declared lost on both feeds (stale) */
	TW_STATE_RESET = 3,       /**< channel reset: the book was emptied (valid, empty) */
	TW_STATE_SILENT = 4,      /**< both feeds silent past recovery.silence_ms */
	TW_STATE_RECOVERED = 5,   /**< a snapshot made the book valid again */
	TW_STATE_ALIVE = 6,       /**< the channel's packets flow again after silence */
	TW_STATE_WHY_COUNT_
};

/**
 * Queue position of the order the signal last joined on an instrument
 * (struct tw_top.queue), from the channel's market-by-order book
 * (tickwire.cfg book.mbo).
 */
enum tw_queue_state {
	TW_QUEUE_NONE = 0,        /**< no join on this instrument (or no MBO for the chain) */
	/** queue_* below are the orders and displayed quantity still ahead of
	 *  it at its price: those that rested there when it joined and have
	 *  neither filled nor been cancelled nor lost their priority since */
	TW_QUEUE_KNOWN = 1,
	/** joined, but the instrument's MBO book was not valid when it joined
	 *  or is not now (a gap, a channel without book.mbo): no position */
	TW_QUEUE_UNKNOWN = 2,
};

/**
 * A book event as the signal sees it: only what a strategy needs, so a
 * strategy depends on this header and the actor API, not on lib/book.
 * Prices are mantissas at exponent -9; a missing side has qty 0.
 */
struct tw_top {
	int32_t security_id;
	uint8_t kind;             /**< enum tw_top_kind */
	uint8_t ok;               /**< 1: book valid; 0: stale, do not trade on it */
	uint16_t idx;             /**< index of this event in its packet */
	uint32_t msg_seq_num;     /**< MsgSeqNum of the packet that caused it */
	uint8_t why;              /**< TW_TOP_STATE: enum tw_state_why; else 0 */
	uint8_t queue;            /**< TW_TOP_BOOK, TW_TOP_TRADE: enum tw_queue_state */
	uint8_t queue_side;       /**< enum tw_order_side of the joined order; 0 none */
	uint8_t pad_;
	int64_t bid_price;
	int64_t bid_qty;
	int64_t ask_price;
	int64_t ask_qty;
	int64_t trade_price;      /**< TW_TOP_TRADE */
	int64_t trade_qty;        /**< TW_TOP_TRADE */
	int64_t tick;             /**< minimum price increment (same exponent); 0 unknown */
	/* latency stamps (tw_latency.h), carried into the orders it causes;
	 * never an input to a decision */
	uint64_t t0;              /**< arrival of the packet */
	uint64_t t1;              /**< this event was published */
	/* market by order (queue: TW_QUEUE_KNOWN; else 0) */
	int64_t queue_price;      /**< price of the joined order */
	int64_t queue_qty_ahead;  /**< displayed quantity ahead of it */
	uint32_t queue_orders_ahead; /**< orders ahead of it */
	uint32_t queue_level_orders; /**< orders at its price now */
};

/**
 * The signal's reply to a TW_MSG_TOP on which it decided an order that
 * rests (act_reply_sync(), type TW_MSG_TOP): the book stage notes where an
 * order at this side and price joins the queue now (behind every order
 * resting there) and reports that position in the instrument's later
 * tops (struct tw_top.queue). One join per instrument; a new one replaces
 * it. The join is the signal's own estimate, made when it decided: it does
 * not wait for order-out or the exchange, whose answers arrive at times the
 * feed does not decide, so the positions stay a function of the feed.
 */
struct tw_queue_join {
	int32_t security_id;
	uint8_t side;             /**< enum tw_order_side */
	uint8_t pad_[3];
	int64_t price;            /**< mantissa at exponent -9 */
	uint32_t client_order_id;
	uint32_t pad2_;
};

/** Order side (wire values). */
enum tw_order_side {
	TW_ORDER_BUY = 1,
	TW_ORDER_SELL = 2,
};

/** An order, from the signal to order-out. */
struct tw_order {
	uint32_t client_order_id; /**< 1, 2, ... per run */
	int32_t security_id;
	uint8_t side;             /**< enum tw_order_side */
	uint8_t pad_[3];
	uint32_t qty;
	int64_t price;            /**< limit price, mantissa at exponent -9 */
	uint32_t trigger_seq;     /**< MsgSeqNum of the packet that triggered it */
	uint32_t reserved;
	int64_t mid;              /**< book mid when decided (risk price band); 0 unknown */
	int64_t tick;             /**< minimum price increment; 0 unknown */
	/* latency stamps (tw_latency.h), not on the wire */
	uint64_t t0;              /**< arrival of the triggering packet */
	uint64_t t1;              /**< the triggering event was published */
	uint64_t t2;              /**< the strategy decided (handed it to order-out) */
};

/**
 * Why order-out refused an order (struct tw_order_reply.reason). 1 to 9
 * are the pre-trade risk checks, numbered as lib/ilink3's enum
 * il3_risk_reason (a strategy needs not include ilink3.h).
 */
enum tw_order_reason {
	TW_ORDER_SENT = 0,             /**< accepted by risk, written */
	TW_ORDER_KILL_SWITCH = 1,
	TW_ORDER_MAX_ORDER_QTY = 2,
	TW_ORDER_NO_REFERENCE_PRICE = 3,
	TW_ORDER_PRICE_BAND = 4,
	TW_ORDER_MAX_POSITION = 5,
	TW_ORDER_MAX_OPEN_ORDERS = 6,
	TW_ORDER_RATE_LIMIT = 7,
	TW_ORDER_UNKNOWN_INSTRUMENT = 8,
	TW_ORDER_BAD_ORDER = 9,
	TW_ORDER_NOT_CONNECTED = 16,   /**< the session is not established */
	TW_ORDER_SEND_FAILED = 17,     /**< the session refused it (buffer, journal) */
	TW_ORDER_TABLE_FULL = 18,      /**< too many open orders to track */
	TW_ORDER_STALE_BOOK = 19,      /**< the instrument's book is stale or its feeds silent */
	TW_ORDER_REASON_MAX_ = 32,
};

/** Order-out's reply to a TW_MSG_ORDER (TW_MSG_ORDER_REPLY). */
struct tw_order_reply {
	uint32_t client_order_id;
	uint32_t reason;          /**< enum tw_order_reason; TW_ORDER_SENT if sent */
	uint64_t clordid;         /**< iLink 3 ClOrdID number; 0 if not sent */
};

/** Kind of an execution report (TW_MSG_EXEC). */
enum tw_exec_kind {
	TW_EXEC_NEW = 0,          /**< acknowledged, working */
	TW_EXEC_FILL,             /**< a (partial) fill; leaves_qty 0 when done */
	TW_EXEC_REJECT,           /**< the exchange refused the order */
	TW_EXEC_CANCELED,         /**< cancelled (kill switch, or the exchange) */
	TW_EXEC_CANCEL_REJECT,    /**< a cancel was refused */
	TW_EXEC_KIND_COUNT_
};

/** An execution report, as a strategy sees it. */
struct tw_exec {
	uint32_t client_order_id; /**< the strategy's id; 0 if the order is unknown */
	int32_t security_id;
	uint8_t kind;             /**< enum tw_exec_kind */
	uint8_t side;             /**< enum tw_order_side */
	uint8_t retransmitted;    /**< 1: a report delivered again after reconnect */
	uint8_t pad_;
	uint32_t last_qty;        /**< TW_EXEC_FILL */
	int64_t last_price;       /**< TW_EXEC_FILL, exponent -9 */
	uint32_t leaves_qty;
	uint32_t pad2_;
};

/** TW_MSG_KILL */
struct tw_kill {
	uint32_t engaged;         /**< 1: refuse new orders, cancel open ones; 0: release */
};

/** Telemetry query of one book (TW_MSG_QUERY, through the decode group's
 *  mailbox; tw_chain_query() sends it and waits for the answer). */
struct tw_query {
	int32_t security_id;
	uint32_t pad_;
	uint64_t serial;          /**< the chain's query number (a late answer is dropped) */
};

/** Price of an empty level in struct tw_query_reply (lib/book's BOOK_PRICE_NONE). */
#define TW_PRICE_NONE INT64_MIN

/** Orders of a level in struct tw_query_reply (the first by priority). */
#define TW_QUERY_MBO_ORDERS 5

/** One level of an MBO book in struct tw_query_reply. */
struct tw_query_mbo_level {
	int64_t price;
	int64_t qty;              /**< sum of the displayed quantities */
	uint32_t orders;          /**< orders at the level */
	uint32_t shown;           /**< of them in order[] (at most TW_QUERY_MBO_ORDERS) */
	struct {
		uint64_t order_id;
		uint64_t priority;
		int64_t qty;
	} order[TW_QUERY_MBO_ORDERS];
};

/** Answer to TW_MSG_QUERY (tw_chain_query()); an empty level has price TW_PRICE_NONE. */
struct tw_query_reply {
	int32_t found;            /**< 1 if the instrument is known */
	int32_t state;            /**< enum book_state */
	uint32_t rpt_seq;
	uint32_t depth;
	int64_t bid_price[5];
	int64_t bid_qty[5];
	int64_t ask_price[5];
	int64_t ask_qty[5];
	/* market by order (book.mbo) */
	int32_t mbo_state;        /**< enum book_mbo_state; -1: no MBO book */
	uint32_t mbo_order_count; /**< orders the book holds */
	uint32_t mbo_levels[2];   /**< levels in mbo_bid, mbo_ask (readable books) */
	struct tw_query_mbo_level mbo_bid[5];
	struct tw_query_mbo_level mbo_ask[5];
};

/**
 * Order wire format: the UDP payload the order-out actor writes until the
 * iLink 3 session is integrated. Fixed 40 bytes, little-endian, no
 * timestamps (so two runs on the same input write the same bytes):
 *
 *   off size field
 *     0    4 magic "TWO1"
 *     4    4 client_order_id
 *     8    4 security_id (int32)
 *    12    1 side (1 buy, 2 sell)
 *    13    3 zero
 *    16    4 qty
 *    20    4 trigger MsgSeqNum
 *    24    8 price mantissa, exponent -9 (int64)
 *    32    8 zero
 */
#define TW_ORDER_WIRE_SIZE 40
#define TW_ORDER_WIRE_MAGIC "TWO1"
/**
 * Cancel frame, the same 40 bytes (written without an iLink session when an
 * open order is cancelled: kill switch, stale book): magic "TWX1", the
 * cancelled order's client_order_id, security_id, side, price and the qty
 * left; byte 13 says why (enum tw_state_why; 0: the kill switch); the
 * trigger MsgSeqNum is 0. The order is closed once its cancel is written.
 */
#define TW_CANCEL_WIRE_MAGIC "TWX1"

/** UDP destination of order packets: loopback, this machine only. */
#define TW_ORDER_UDP_PORT 9340

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_MSG_H */
