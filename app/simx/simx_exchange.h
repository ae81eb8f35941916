/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_SIMX_EXCHANGE_H
#define TICKWIRE_SIMX_EXCHANGE_H

/**
 * @file
 * The simulated exchange of tickwire-replay: the matching core (simx.h)
 * behind an iLink 3 gateway (app/ilink-sim/tw_gateway.h) on 127.0.0.1 and
 * an ephemeral port, in the replay's process and on its thread. Order-out's
 * lib/ilink3 session connects to it as it would to CME; the strategy's
 * orders come in as NewOrderSingle and OrderCancelRequest, and the core's
 * reports go back as ExecutionReportNew, ExecutionReportTradeOutright,
 * ExecutionReportReject, ExecutionReportCancel and OrderCancelReject, which
 * order-out relays to the strategy (TW_MSG_EXEC) as in production.
 *
 * Clock: the replay's. The owner sets it (simx_exchange_set_now()) before
 * every call; the gateway's timers and every timestamp it writes, and the
 * session's (the owner passes the same clock to order-out), come from it.
 * A request's decision time is its SendingTimeEpoch, so when the bytes
 * happen to cross the socket does not matter: the owner only has to let
 * both ends read everything before the clock passes a due time
 * (simx_exchange_in_sync()).
 *
 * The credentials (a fixed key: nothing secret, loopback only) and the
 * session's journal live in a directory made for the run and removed by
 * simx_exchange_destroy(), so every run starts at SeqNum 1 and ClOrdID 1.
 *
 * Threads: one thread (the replay's).
 */

#include <stdint.h>
#include <stdio.h>

#include "ilink3.h"
#include "simx.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Fills kept for the session result. */
#define SIMX_EXCHANGE_MAX_FILLS 65536

struct simx_exchange_config {
	uint64_t latency_ns;          /**< decision -> the exchange */
	uint64_t return_ns;           /**< the exchange -> order-out */
	simx_book_fn book;            /**< the recorded books (the chain's) */
	void *book_ctx;
};

/** One fill, for the session result. */
struct simx_exchange_fill {
	uint32_t client_order_id;     /**< the strategy's id (0: not known) */
	int32_t security_id;
	uint8_t side;
	uint32_t qty, leaves_qty;
	int64_t price;
	uint64_t time_ns;             /**< when the exchange filled it (replay clock) */
};

/** Latency on the replay's clock, ns, per log2 bucket (as tw_result.h). */
struct simx_exchange_latency {
	uint64_t order_to_ack[64];    /**< decision -> ExecutionReportNew reaches order-out */
	uint64_t order_to_fill[64];   /**< decision -> each fill reaches order-out */
};

struct simx_exchange;

/**
 * Make the directory, the credentials, the gateway (listening) and the core.
 * @return the exchange or NULL with errno.
 */
struct simx_exchange *simx_exchange_create(const struct simx_exchange_config *cfg);

/** Close, remove the run's files, free. NULL accepted. */
void simx_exchange_destroy(struct simx_exchange *ex);

/**
 * The session order-out must run (journal, credentials, 127.0.0.1 and the
 * port; strings owned by @p ex).
 */
void simx_exchange_session(const struct simx_exchange *ex, struct il3_session_config *out);

/** The replay's clock, ns (never moves back). */
void simx_exchange_set_now(struct simx_exchange *ex, uint64_t now_ns);

/**
 * Read and write what the socket allows, without blocking (@p wait_ms > 0:
 * first wait that long for it to be ready); requests read go to the core.
 */
void simx_exchange_pump(struct simx_exchange *ex, int wait_ms);

/**
 * True when the gateway has applied @p client_sent application messages
 * (what order-out wrote) and the client has read all the gateway sent
 * (@p client_received application messages).
 */
bool simx_exchange_in_sync(const struct simx_exchange *ex, uint64_t client_sent,
			   uint64_t client_received);

/** When the next arrival or report is due (UINT64_MAX: none). */
uint64_t simx_exchange_next_ns(const struct simx_exchange *ex);

/** Handle one arrival or report due before @p until_ns. @return 1 done, 0 none. */
int simx_exchange_step(struct simx_exchange *ex, uint64_t until_ns);

/** The books changed at @p now_ns (a frame was delivered). */
void simx_exchange_market(struct simx_exchange *ex, uint64_t now_ns);

/**
 * Order-out's order frames (tw_msg.h, through its order sink): the
 * strategy's client_order_id of each NewOrderSingle, in the order they are
 * written. Cancel frames are ignored.
 */
void simx_exchange_order_frame(struct simx_exchange *ex, const uint8_t *frame, uint32_t length);

/** Write every execution report the gateway sends to @p log (raw iLink 3
 *  frames, SOFH first, one after the other); NULL: none. */
void simx_exchange_set_log(struct simx_exchange *ex, FILE *log);

/** The core (counters, positions; simx_mark() at the end). */
struct simx *simx_exchange_core(struct simx_exchange *ex);

/** The fills so far (@return their count). */
uint32_t simx_exchange_fills(const struct simx_exchange *ex,
			     const struct simx_exchange_fill **fills);

/** The latency histograms. */
const struct simx_exchange_latency *simx_exchange_latency(const struct simx_exchange *ex);

/** Requests that named an order the exchange's tables no longer held, and
 *  order frames that did not match the request read (0 in a sound run). */
uint64_t simx_exchange_mismatches(const struct simx_exchange *ex);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_SIMX_EXCHANGE_H */
