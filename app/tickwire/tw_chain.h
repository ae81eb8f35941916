/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_CHAIN_H
#define TICKWIRE_TW_CHAIN_H

/**
 * @file
 * The actors of the appliance, without DPDK (DESIGN.md section 1): the
 * decode group (feed -> signal, by act_fast_send) and the order-out actor
 * (its own group). The DPDK appliance and the library-only replay build the
 * same chain; only the outside differs (who delivers TW_MSG_RX, what
 * releases a datagram, where an order's frame is written).
 *
 * The "feed" actor runs lib/book's pipeline inline: A/B arbitration by
 * MsgSeqNum, SBE decode, book update (book_feed_packet()). lib/book fuses
 * those three stages behind one call, so they are one actor here; its book
 * event callback calls the "signal" actor with act_fast_send(), on the same
 * thread, under the same call chain.
 *
 * Threads: the decode group is stepped by one thread (the decode lcore, or
 * the replay's main thread); the order-out group by one thread; telemetry
 * may query the feed actor from any thread (act_fast_send, it waits for
 * the actor's lock). Counters are written by the decode thread and read
 * with relaxed loads.
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
	/* strategy */
	bool strategy_enabled;
	struct tw_strategy_params strategy;
	/* outside */
	tw_frame_sink_fn order_sink;
	void *order_sink_ctx;
	tw_release_fn release;        /**< may be NULL */
	void *release_ctx;
	tw_ticks_fn ticks;            /**< clock of t1; NULL: no latency records */
	struct tw_lat_recorder *latency; /**< may be NULL */
	/* order-out: pre-trade risk and the iLink 3 session (lib/ilink3) */
	bool risk_enabled;            /**< run il3_risk_check_new() on every order */
	struct il3_risk_limits risk;  /**< price_band is set per order, see below */
	/** price band around the order's mid, in ticks of its instrument; when
	 *  the tick is unknown a tick counts as 1/10000 of the mid (one basis
	 *  point), at least 1 */
	uint32_t price_band_ticks;
	/** the iLink 3 session (copied); NULL: order frames go to order_sink */
	const struct il3_session_config *session;
	tw_ticks_fn now_ns;           /**< wall clock, ns (risk window, session); NULL: 0 */
};

/** Counters of the chain. */
struct tw_chain_stats {
	uint64_t rx_packets;          /**< TW_MSG_RX handled */
	uint64_t rx_bytes;
	uint64_t verdict[5];          /**< by enum mdp3_arb_verdict */
	uint64_t feed_errors;         /**< book_feed_packet() < 0 */
	uint64_t events;              /**< book events seen */
	uint64_t tops;                /**< TW_MSG_TOP delivered to the signal */
	uint64_t signal_errors;       /**< act_fast_send() to the signal failed */
	uint64_t orders_written;      /**< order frames handed to the sink */
	/* order-out (written on the order-out lcore) */
	uint64_t orders_in;           /**< TW_MSG_ORDER handled */
	uint64_t orders_sent;         /**< NewOrderSingle written to the session */
	uint64_t orders_refused;      /**< refused before any byte was written */
	uint64_t refused[TW_ORDER_REASON_MAX_]; /**< by enum tw_order_reason */
	uint64_t replies_failed;      /**< TW_MSG_ORDER_REPLY could not be delivered */
	uint64_t exec[TW_EXEC_KIND_COUNT_]; /**< execution reports by enum tw_exec_kind */
	uint64_t exec_other;          /**< other application messages of the gateway */
	uint64_t exec_relay_failed;   /**< TW_MSG_EXEC could not be delivered */
	uint64_t cancels_sent;        /**< OrderCancelRequest written (kill switch) */
	uint64_t kill_engaged;        /**< 1 while the kill switch is engaged */
	uint64_t kill_events;         /**< times it was engaged */
	uint64_t session_state;       /**< enum il3_state */
	uint64_t session_connects;    /**< connection attempts */
	uint64_t session_established; /**< times ESTABLISHED was reached */
};

struct tw_chain;

/**
 * Build the chain: groups, actors, lib/book feed, strategy. Nothing runs
 * until the groups are stepped.
 * @return the chain or NULL with errno set.
 */
struct tw_chain *tw_chain_create(const struct tw_chain_opts *opts);

/** Stop and destroy everything (no thread may be stepping the groups). */
void tw_chain_destroy(struct tw_chain *c);

struct act_group *tw_chain_decode_group(struct tw_chain *c);
struct act_group *tw_chain_order_group(struct tw_chain *c);
/** The actor TW_MSG_RX, TW_MSG_TICK, TW_MSG_FLUSH and TW_MSG_QUERY go to. */
struct act_actor *tw_chain_feed(struct tw_chain *c);

/** Deliver one datagram synchronously on the calling (decode) thread. */
int tw_chain_rx_direct(struct tw_chain *c, const struct tw_rx *rx);

/** TW_MSG_TICK / TW_MSG_FLUSH synchronously on the decode thread. */
int tw_chain_tick(struct tw_chain *c, uint64_t now_ns, bool flush);

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
 * and cancels its open orders. Any thread (act_send to order-out).
 * @return 0 or the act_send_copy() error.
 */
int tw_chain_kill(struct tw_chain *c, bool engaged);

/** Counters (any thread; relaxed). */
void tw_chain_stats(const struct tw_chain *c, struct tw_chain_stats *st);

/**
 * Print the final state: counters of the chain, of lib/book's feed and
 * arbiter, of the strategy, then up to @p max_books books (by SecurityID,
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
