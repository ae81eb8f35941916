/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_CHAIN_H
#define TICKWIRE_TW_CHAIN_H

/**
 * @file
 * The actors of the appliance, without DPDK (DESIGN.md section 1): the
 * decode group and the order-out actor (its own group). The DPDK appliance
 * and the library-only replay build the same chain; only the outside
 * differs (who delivers TW_MSG_RX, what releases a datagram, where an
 * order's frame is written).
 *
 * The decode group is four actors on one thread behind one mailbox, each
 * calling the next with act_fast_send() (no queue, no context switch). Each
 * runs one stage of app/feed's path of a channel (tw_feed.h), the functions
 * tickwire-book and bench_feed call directly:
 *
 *   arbiter --TW_MSG_PACKET--> decoder --TW_MSG_BOOK_BATCH--> book --TW_MSG_TOP--> signal
 *
 *  - arbiter: one lib/mdp3 A/B arbiter (struct mdp3_arb) per MDP channel; a
 *    datagram goes to the arbiter of its channel (struct tw_rx.channel).
 *    In-sequence packets go to the decoder, declared losses to the book;
 *    snapshot and definition packets go straight to the book. It releases
 *    the datagram (the mbuf) when mdp3_arb_push() returns: by then the
 *    decoder and the book are done with its bytes (or the arbiter copied it
 *    into its hold ring, or dropped it as a duplicate).
 *  - decoder: walks the packet with lib/mdp3's walker (bounds-checked SBE)
 *    and hands its decoded messages to the book in one TW_MSG_BOOK_BATCH
 *    (more for a packet of over TW_FEED_BATCH messages), which applies
 *    them between lib/book's book_feed_packet_begin and _end.
 *  - book: one lib/book feed (RptSeq, recovery, books) per channel; its
 *    events go to the signal.
 *  - signal: the strategy (tw_strategy.h).
 *
 * The four stages are private to the group: only the decode thread (which
 * must have called act_group_bind()) delivers to them synchronously,
 * without atomics; other threads reach them through the group's mailbox
 * (act_send): datagrams for the arbiter, order-out's replies for the
 * signal, telemetry queries for the book (tw_chain_query()).
 *
 * Threads: the decode group is stepped by one thread (the decode lcore, or
 * the replay's main thread); the order-out group by one thread. Counters
 * are written by their actor's thread and read with relaxed loads.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "act.h"
#include "ilink3.h"
#include "tw_latency.h"
#include "tw_msg.h"
#include "tw_strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most channels of one chain (ports.ini holds at most 16 feeds). */
#define TW_CHAIN_MAX_CHANNELS 16

/** Hands a frame of @p length bytes to the wire (or a file). */
typedef void (*tw_frame_sink_fn)(void *ctx, const uint8_t *frame, uint32_t length);
/** Releases what TW_MSG_RX's cookie names (an mbuf). */
typedef void (*tw_release_fn)(void *ctx, void *cookie);
/** Reads the clock of t1 (the TSC in the appliance). */
typedef uint64_t (*tw_ticks_fn)(void);

/** Chain settings. */
struct tw_chain_opts {
	/* decode group mailbox (capture -> decode hand-off through lib/actor) */
	struct act_group_opts decode_mailbox;
	/* order-out mailbox (signal -> order-out) */
	struct act_group_opts order_mailbox;
	/* arbitration */
	uint32_t gap_wait_packets;
	uint32_t gap_wait_us;
	/* channels: one arbiter and one book feed each; none: one for all */
	uint32_t n_channels;
	uint16_t channels[TW_CHAIN_MAX_CHANNELS];
	/* books and recovery (0: lib/book's defaults) */
	uint8_t join;                 /**< enum book_join: 0 trust, 1 recover */
	uint8_t publish;              /**< enum book_publish: 0 end of event, 1 packet */
	uint8_t loss_policy;          /**< enum book_loss_policy: 0 RptSeq, 1 stale all */
	bool skip_snapshots;          /**< recovery.mode "none": snapshot packets not applied */
	uint32_t recovery_packets;    /**< recovery buffer per channel */
	uint32_t max_instruments;     /**< instruments per channel */
	/** market by order (book.mbo): MBO books on channels[i] when mbo[i]
	 *  (lib/book's config.mbo; the bounds below, 0: lib/book's defaults);
	 *  the signal's queue joins are reported from them (tw_msg.h) */
	bool mbo[TW_CHAIN_MAX_CHANNELS];
	uint32_t mbo_instruments;     /**< MBO books per channel */
	uint32_t mbo_orders;          /**< resting orders per MBO book */
	uint32_t mbo_levels;          /**< price levels per side of an MBO book */
	uint32_t mbo_diffs;           /**< MBO/MBP differences kept per channel */
	bool mbo_presize;             /**< OrderID tables at full size from the start */
	/** How the decode group's stages call each other (enum tw_chain_hops;
	 *  0: TW_HOPS_EDGE, what the appliance runs). */
	uint8_t hops;
	/*
	 * Stale means stop (dpdk-config/README.md): what the chain does when a
	 * book goes stale or its channel silent. Every such change reaches the
	 * signal as a TW_TOP_STATE; the instrument is halted (order-out refuses
	 * its orders, TW_ORDER_STALE_BOOK) until it recovers.
	 */
	bool cancel_on_stale;         /**< cancel the instrument's working orders */
	bool resume;                  /**< trade again after recovery (else halted for good) */
	bool kill_on_alarm;           /**< the alarm also engages the kill switch */
	uint64_t max_stale_ns;        /**< halted longer than this: alarm; 0: never */
	uint64_t silence_ns;          /**< no packet on a channel this long: silent; 0: off */
	/** the alarm, once per halt longer than max_stale_ns (decode thread;
	 *  the appliance logs it); may be NULL */
	void (*on_alarm)(void *ctx, int32_t security_id, uint32_t why, uint64_t stale_ns);
	void *alarm_ctx;
	/* strategy */
	bool strategy_enabled;
	struct tw_strategy_params strategy;
	/* outside */
	tw_frame_sink_fn order_sink;
	void *order_sink_ctx;
	tw_release_fn release;        /**< may be NULL */
	void *release_ctx;
	/**
	 * May be NULL. Called first for every datagram the arbiter stage takes
	 * that is not TW_RX_MERGED; true: the callee keeps it (a copy of the
	 * struct, and the cookie) and hands it back later through
	 * tw_chain_rx_direct() with TW_RX_MERGED set (the paced replay's
	 * release order, tw_merge.h). Runs on the decode group's thread.
	 */
	bool (*rx_hold)(void *ctx, const struct tw_rx *rx);
	void *rx_hold_ctx;
	tw_ticks_fn ticks;            /**< clock of t1; NULL: no latency records */
	struct tw_lat_recorder *latency; /**< book events (decode thread); may be NULL */
	/** orders: tick-to-trade, t3 read when the order was handed to the sink
	 *  or the session (order-out thread); may be NULL */
	struct tw_lat_recorder *order_latency;
	/* order-out: pre-trade risk and the iLink 3 session (lib/ilink3) */
	bool risk_enabled;            /**< run il3_risk_check_new() on every order */
	struct il3_risk_limits risk;  /**< price_band is set per order, see below */
	/** price band around the order's mid, in ticks of its instrument; when
	 *  the tick is unknown a tick counts as 1/10000 of the mid (one basis
	 *  point), at least 1 */
	uint32_t price_band_ticks;
	/** the iLink 3 session (copied); NULL: order frames go to order_sink */
	const struct il3_session_config *session;
	/** with a session, also hand every order and cancel frame to
	 *  order_sink once the session has written it (tickwire-replay's
	 *  orders pcap in a backtest against the simulated exchange) */
	bool sink_with_session;
	tw_ticks_fn now_ns;           /**< wall clock, ns (risk window, session); NULL: 0 */
};

/** How the stages of the decode group call each other. */
enum tw_chain_hops {
	/** act_fast_send_edge() along the edges the chain declares when it
	 *  builds the group (arbiter -> decoder, arbiter -> book, decoder ->
	 *  book, book -> signal; checked acyclic once): no per-call cycle
	 *  search beyond the chain's own depth, inlined. The default. */
	TW_HOPS_EDGE = 0,
	/** act_fast_send(): the runtime's dynamic checks on every call. */
	TW_HOPS_DYNAMIC = 1,
	/** The stages call each other's functions, no runtime between them
	 *  (the group's actors are still built and entered through the
	 *  arbiter): the same work without the hops, for benchmarks
	 *  (bench_feed's "chain direct"). The signal then runs outside the
	 *  runtime: what the strategy sends names the arbiter as its sender, so
	 *  order-out's replies do not reach it, and its own replies (queue
	 *  joins, tw_msg.h) reach nobody. Not for trading. */
	TW_HOPS_DIRECT = 2,
};

/** Counters of the chain. */
struct tw_chain_stats {
	uint64_t rx_packets;          /**< TW_MSG_RX handled */
	uint64_t rx_bytes;
	uint64_t verdict[5];          /**< by enum mdp3_arb_verdict */
	uint64_t feed_errors;         /**< malformed snapshot/definition packets, bad pushes */
	uint64_t unknown_channel;     /**< datagrams of a channel the chain has no feed for */
	uint64_t snapshots_skipped;   /**< snapshot packets not applied (recovery "none") */
	uint64_t decoded;             /**< packets the decoder walked */
	uint64_t malformed;           /**< packets the decoder's walker refused */
	uint64_t events;              /**< book events seen */
	uint64_t tops;                /**< TW_MSG_TOP delivered to the signal */
	uint64_t signal_errors;       /**< act_fast_send() to the signal failed */
	/* stale means stop (decode thread) */
	uint64_t state_events;        /**< TW_TOP_STATE delivered to the signal */
	uint64_t halts;               /**< instruments halted (stale, reset, silent) */
	uint64_t resumes;             /**< halted instruments trading again */
	uint64_t halted;              /**< gauge: instruments halted now */
	uint64_t cancel_requests;     /**< TW_MSG_CANCEL sent to order-out */
	uint64_t cancel_failed;       /**< TW_MSG_CANCEL refused (pool exhausted) */
	uint64_t alarms;              /**< halts longer than max_stale_ns */
	uint64_t alarm_active;        /**< gauge: instruments in alarm now */
	uint64_t halt_table_full;     /**< a halt not recorded: table full (orders not refused) */
	uint64_t silences;            /**< channels gone silent */
	/* queue joins of the signal (struct tw_queue_join; decode thread) */
	uint64_t queue_joins;         /**< joins at a known place (a valid MBO book) */
	uint64_t queue_joins_unknown; /**< joins without a valid MBO book: no position */
	uint64_t queue_join_refused;  /**< joins not kept: TW_QUEUE_JOINS instruments */
	uint64_t orders_written;      /**< order frames handed to the sink */
	/* order-out (written on the order-out lcore) */
	uint64_t orders_in;           /**< TW_MSG_ORDER handled */
	uint64_t orders_sent;         /**< NewOrderSingle written to the session */
	uint64_t orders_refused;      /**< refused before any byte was written */
	uint64_t refused[TW_ORDER_REASON_MAX_]; /**< by enum tw_order_reason */
	uint64_t replies_failed;      /**< TW_MSG_ORDER_REPLY refused: message pool exhausted */
	uint64_t exec[TW_EXEC_KIND_COUNT_]; /**< execution reports by enum tw_exec_kind */
	uint64_t exec_other;          /**< other application messages of the gateway */
	uint64_t exec_relay_failed;   /**< TW_MSG_EXEC refused: message pool exhausted */
	uint64_t cancels_sent;        /**< cancels written: OrderCancelRequest, or cancel frames */
	uint64_t cancels_on_stale;    /**< of those, for a stale book (TW_MSG_CANCEL) */
	uint64_t kill_engaged;        /**< 1 while the kill switch is engaged */
	uint64_t kill_events;         /**< times it was engaged */
	uint64_t session_state;       /**< enum il3_state */
	uint64_t session_connects;    /**< connection attempts */
	uint64_t session_established; /**< times ESTABLISHED was reached */
};

/** Counters of one channel (relaxed copies, refreshed at every TW_MSG_TICK
 *  and TW_MSG_FLUSH; rx_packets and events after every datagram). */
struct tw_chain_channel_stats {
	uint32_t channel;             /**< CME channel id (0: the one feed of a chain
	                                   built without channels) */
	uint64_t rx_packets;          /**< datagrams of the channel */
	uint64_t packets_a;           /**< incremental copies pushed, feed A */
	uint64_t packets_b;           /**< incremental copies pushed, feed B */
	uint64_t duplicates;
	uint64_t gaps;
	uint64_t lost_packets;        /**< sequence numbers declared lost */
	uint64_t packets_applied;     /**< incremental packets applied to the books */
	uint64_t rpt_seq_gaps;
	uint64_t stale_books;         /**< gauge */
	uint64_t recoveries;
	uint64_t snapshots;           /**< snapshot messages applied */
	uint64_t events;              /**< book events of the channel */
	uint64_t instruments;
	uint64_t silent;              /**< gauge: 1 while no packet arrives (silence_ns) */
	uint64_t silences;            /**< times it went silent */
	/* market by order (book.mbo; 0 on a channel without it) */
	uint64_t mbo_orders_added;    /**< orders added to its MBO books */
	uint64_t mbo_stale_books;     /**< gauge: MBO books stale, loading or overflowed */
	uint64_t mbo_snapshots;       /**< MBO books made valid by a snapshot */
	uint64_t mbo_checks;          /**< MBO/MBP comparisons at an end of event */
	uint64_t mbo_mismatches;      /**< of them, with a level different */
	uint64_t mbo_level_diffs;     /**< levels that differed, over all comparisons */
	uint64_t mbo_unknown_orders;  /**< change/delete of an order a book does not hold */
	uint64_t mbo_bad_entries;     /**< order entries with a null or impossible field */
	uint64_t mbo_books_refused;   /**< instruments refused a book (book.mbo.instruments) */
	uint64_t mbo_order_overflows; /**< books emptied at book.mbo.orders */
	uint64_t mbo_level_overflows; /**< books emptied at book.mbo.levels */
	uint64_t mbo_table_grows;     /**< OrderID tables doubled (a rehash: a latency step) */
};

struct tw_chain;

/**
 * Build the chain: groups, actors, lib/book feed, strategy. Nothing runs
 * until the groups are stepped.
 * @return the chain or NULL with errno set.
 */
struct tw_chain *tw_chain_create(const struct tw_chain_opts *opts);

struct tw_cfg;

/**
 * The settings a profile gives the chain (lib/config's struct tw_cfg):
 * arbitration, the channels (every channel of an incremental feed of
 * ports.ini, in file order), recovery and books, strategy. Mailboxes, the
 * outside (sinks, release, clocks) and the order session are the caller's.
 * Any thread.
 */
void tw_chain_opts_from_cfg(struct tw_chain_opts *opts, const struct tw_cfg *cfg);

struct tw_cfg_handoff;

/**
 * The runtime's overflow policy for a hand-off of tickwire.cfg: "drop" ->
 * ACT_OVERFLOW_DROP_NEWEST, "fail" -> ACT_OVERFLOW_FAIL; for the capture
 * hand-off (@p capture) always FAIL: the capture frees the refused
 * datagram's mbuf and counts the drop itself.
 */
enum act_overflow tw_chain_overflow(const struct tw_cfg_handoff *h, bool capture);

/** Name of an enum tw_state_why ("rpt_seq_gap", "silent", ...); "?" out of range. */
const char *tw_state_why_name(uint32_t why);

/** Stop and destroy everything (no thread may be stepping the groups). */
void tw_chain_destroy(struct tw_chain *c);

struct act_group *tw_chain_decode_group(struct tw_chain *c);
struct act_group *tw_chain_order_group(struct tw_chain *c);
/** The actor TW_MSG_RX, TW_MSG_TICK and TW_MSG_FLUSH go to (the arbiter). */
struct act_actor *tw_chain_feed(struct tw_chain *c);
/** The actor TW_MSG_ORDER goes to (order-out, its own group). */
struct act_actor *tw_chain_order_out(struct tw_chain *c);
/** The book actor (private to the decode group, like the other stages). */
struct act_actor *tw_chain_book(struct tw_chain *c);

struct book_instrument;
struct book_mbo;

/**
 * Read-only: the lib/book instrument @p security_id of the first channel
 * that has it, and (when @p mbo is not NULL) its market-by-order book
 * (NULL without one). For tickwire-replay's simulated exchange, which
 * matches against the recorded books between the frames it delivers.
 * Thread: the decode thread, or while the decode group is idle.
 * @return the instrument, or NULL (unknown).
 */
const struct book_instrument *tw_chain_instrument(const struct tw_chain *c, int32_t security_id,
						  const struct book_mbo **mbo);

/**
 * Telemetry: a copy of one book's top levels, from any thread but the
 * decode thread. The book is private to the decode group (its thread alone
 * touches the books, so the copy is never torn): the query waits in a slot
 * of the chain that the decode thread serves between messages
 * (tw_chain_serve_queries()), not in its mailbox, so market data queued
 * there never holds it back. The caller waits up to @p timeout_ns. Queries
 * from several threads take turns. A late answer (after a timeout) is
 * dropped. Not for the hot path: it takes a mutex.
 * @return 0 (r->found says whether the instrument is known); -ETIMEDOUT
 *         when the decode thread did not serve it in time.
 */
int tw_chain_query(struct tw_chain *c, int32_t security_id, struct tw_query_reply *r,
		   uint64_t timeout_ns);

/**
 * On the decode thread, outside any handler (its poll loop, beside
 * act_group_step()): answer the telemetry query waiting, if any. One
 * relaxed load when none waits.
 * @return 1 when one was answered, 0 when none waited, -1 on an error.
 */
int tw_chain_serve_queries(struct tw_chain *c);

/**
 * Counters of each channel, in the order of tw_chain_opts.channels (any
 * thread; relaxed). @return the number of channels (may exceed @p cap:
 * only @p cap are written).
 */
uint32_t tw_chain_channel_stats(const struct tw_chain *c, struct tw_chain_channel_stats *out,
				uint32_t cap);

/** Deliver one datagram synchronously on the calling (decode) thread. */
int tw_chain_rx_direct(struct tw_chain *c, const struct tw_rx *rx);

/** TW_MSG_TICK / TW_MSG_FLUSH synchronously on the decode thread. */
int tw_chain_tick(struct tw_chain *c, uint64_t now_ns, bool flush);

/**
 * A replay's time step (ns of capture time). In a replay - tickwire-replay
 * and the paced appliance, one clock (issue 18, item 0) - time passes in
 * steps: the chain ticks at multiples of it, never at the time of a read
 * clock, so both tick at the same instants before each datagram.
 */
#define TW_CHAIN_STEP_NS UINT64_C(100000)

/**
 * A replay's tick: at the last step strictly before @p before_ns, if that
 * is later than *@p last_ns (then updated). Before each datagram with
 * before_ns its capture time; when idle, the replay's clock + 1 (or the
 * next datagram's capture time, if earlier). Decode thread.
 * @return true if it ticked.
 */
bool tw_chain_replay_tick(struct tw_chain *c, uint64_t *last_ns, uint64_t before_ns);

/**
 * Step the order session on the order-out thread (TW_MSG_POLL by
 * act_fast_send): (re)connect when disconnected (at most once a second),
 * read, run timers, flush. @return the session state (enum il3_state), or
 * -ENOENT without a session, or the act_fast_send() error.
 */
int tw_chain_order_poll(struct tw_chain *c, uint64_t now_ns);

/**
 * End of orders, on the order-out thread: Terminate the session (then keep
 * calling tw_chain_order_poll() until it reports disconnected).
 * @return 0, -ENOENT without a session, or the act_fast_send() error.
 */
int tw_chain_order_terminate(struct tw_chain *c, uint64_t now_ns);

/**
 * Engage or release the kill switch: order-out refuses every new order
 * and cancels its open orders. Engaging takes effect at once, ahead of
 * orders already queued for order-out (they are refused with
 * TW_ORDER_KILL_SWITCH); the cancellations and a release travel as a
 * message. Any thread.
 * @return 0 or the act_send_copy() error.
 */
int tw_chain_kill(struct tw_chain *c, bool engaged);

/** Counters (any thread; relaxed). */
void tw_chain_stats(const struct tw_chain *c, struct tw_chain_stats *st);

/**
 * Print the final state: counters of the chain, of the arbiters and the
 * books (summed over the channels, then "channel.ID.KEY VALUE" per
 * channel), of the strategy, then up to @p max_books books (by SecurityID,
 * 5 levels). The format is the same in the appliance and in the replay, so
 * outputs compare with diff. Call when the decode group is idle.
 */
void tw_chain_print(const struct tw_chain *c, FILE *out, uint32_t max_books);

/** Name of an enum tw_order_reason ("max_order_qty", "not_connected", ...). */
const char *tw_order_reason_name(uint32_t reason);

/** Build the order frame (Ethernet/IPv4/UDP to loopback). @return its length. */
uint32_t tw_order_frame(const struct tw_order *order, uint8_t *frame, uint32_t cap);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_CHAIN_H */
