/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_GATEWAY_H
#define TICKWIRE_TW_GATEWAY_H

/**
 * @file
 * The FIXP server side of an iLink 3 gateway on loopback TCP (127.0.0.1),
 * shared by tickwire-ilink-sim (its order rule, faults and control on
 * stdin) and tickwire-replay's simulated exchange (app/simx: matching
 * against the recorded books). One client connection at a time.
 *
 * What the gateway does itself (lib/ilink3/README.md, "Gateway simulator"):
 * Negotiate and Establish (HMAC-SHA256 signatures, UUID, NextSeqNo,
 * keep-alive), inbound sequencing (NotApplied and its gap fill, duplicates
 * ignored), Sequence heartbeats and lapse detection, Terminate,
 * RetransmitRequest from a store of the last TW_GW_STORE_SIZE application
 * messages, the audit of every session UUID, and the faults the simulator
 * drives (silence, drop-after, delay, withheld sequence numbers, ignored
 * retransmit requests). What it leaves to its owner: the application rule.
 * Every NewOrderSingle, OrderCancelRequest and OrderCancelReplaceRequest
 * that is applied (in sequence, once) is handed to tw_gw_ops.on_app, which
 * answers with the tw_gw_report_*() functions, at once or later.
 *
 * Time comes from the owner (tw_gw_ops.now_ns for the timers, epoch_ns for
 * the timestamps written), so a gateway stepped on a replay's clock writes
 * the same bytes on every run. Nothing prints: event lines go to
 * tw_gw_ops.trace (the simulator prints them on stdout).
 *
 * Threads: one gateway is used by one thread.
 */

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "ilink3.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TW_GW_STORE_SIZE 4096     /**< application messages kept for retransmission */
#define TW_GW_STORE_FRAME 512
#define TW_GW_OUT_CAPACITY (1024 * 1024)
#define TW_GW_AUDIT_SESSIONS 16   /**< UUIDs audited per run */
#define TW_GW_AUDIT_IDS 65536     /**< ClOrdIDs + OrderRequestIDs remembered (power of two) */

/** An application message the gateway applied, as its owner sees it. */
struct tw_gw_app {
	uint32_t seq;
	uint16_t template_id;     /**< IL3_TEMPLATE_NEW_ORDER_SINGLE514, _CANCEL_REQUEST516, ... */
	char clordid[21];
	uint64_t request_id;      /**< OrderRequestID */
	uint64_t order_id;        /**< cancel, replace: OrderID (0: by ClOrdID) */
	int32_t security_id;
	uint8_t side;
	uint32_t quantity;
	int64_t price;            /**< mantissa, exponent -9 */
	uint64_t sending_time_ns; /**< SendingTimeEpoch: when the client sent it */
};

struct tw_gw;

/** What the owner provides. */
struct tw_gw_ops {
	uint64_t (*now_ns)(void *ctx);      /**< monotonic time of the timers, ns */
	uint64_t (*epoch_ns)(void *ctx);    /**< time written in messages, ns since 1970 */
	/** one event line (no newline); NULL: none */
	void (*trace)(void *ctx, const char *line);
	/** an application message applied: answer it with tw_gw_report_*() */
	void (*on_app)(void *ctx, struct tw_gw *gw, const struct tw_gw_app *in);
	/** every application message sequenced (SOFH frame), before it is
	 *  sent (not retransmissions); NULL: none */
	void (*on_sent)(void *ctx, const uint8_t *frame, size_t length);
	void *ctx;
};

struct tw_gw_stored {
	uint32_t seq;
	bool owed;                   /* the client must ask for it again (audit) */
	uint16_t length;
	uint8_t frame[TW_GW_STORE_FRAME];
};

/* What one session UUID's client did, across its connections. */
struct tw_gw_audit {
	uint64_t uuid;
	uint32_t establishes;
	uint32_t next_in, next_out;  /* the gateway's numbers, as of the last audit_sync() */
	uint32_t applied;            /* application messages applied (fills included) */
	uint32_t fills;              /* of them, numbers of a NotApplied range */
	uint32_t duplicate_seq;      /* a SeqNum received again: reused */
	uint32_t duplicate_clordid;  /* a NewOrderSingle ClOrdID applied before */
	uint32_t duplicate_request;  /* an OrderRequestID applied before */
	uint32_t retransmitted;      /* messages sent again on RetransmitRequest */
	uint32_t retransmit_rejects;
	uint32_t unrequested;        /* owed messages that left the store unasked */
};

/* One identifier applied on a UUID: kind 'C' ClOrdID, 'R' OrderRequestID. */
struct tw_gw_audit_id {
	uint64_t uuid;               /* 0: free slot */
	char kind;
	char id[21];
};

/**
 * The gateway. The fields under "faults" are the simulator's controls (its
 * stdin commands set them); the rest are read-only for the owner.
 */
struct tw_gw {
	struct tw_gw_ops ops;
	struct il3_credentials creds;
	int listen_fd, fd;
	/* faults */
	uint32_t drop_after;         /* 0: off; the application message count that drops */
	uint32_t delay_ms;           /* sleep before each reply (real time) */
	uint32_t skip_seq[8];        /* outbound SeqNums to withhold; 0: free slot */
	bool ignore_rr;
	bool silent;
	uint32_t owed_pending;       /* from "owed-from", for the next Establish; 0: none */
	/* session */
	uint64_t uuid, last_uuid;
	bool negotiated, established;
	uint32_t next_in, next_out;
	uint32_t gap_from, gap_to;   /* open NotApplied range [from, to) */
	uint16_t keep_alive_ms;
	uint64_t last_rx_ns, last_tx_ns;
	uint32_t app_received;       /* application messages applied */
	uint64_t app_sent;           /* application messages sent (not retransmissions) */
	bool drop_now;
	uint64_t next_exec_id;
	struct il3_stream stream;
	size_t out_length, out_sent;
	uint8_t out[TW_GW_OUT_CAPACITY];
	struct tw_gw_stored store[TW_GW_STORE_SIZE];
	/* audit */
	struct tw_gw_audit audits[TW_GW_AUDIT_SESSIONS];
	struct tw_gw_audit *audit;   /* the current UUID's; NULL: none or untracked */
	uint32_t audit_count;
	uint64_t audit_untracked;    /* UUIDs and identifiers the tables had no room for */
	uint32_t ids_used;
	struct tw_gw_audit_id ids[TW_GW_AUDIT_IDS];
};

/**
 * Create a gateway listening on 127.0.0.1:@p port (0: ephemeral; the port
 * bound in *@p bound). @p creds is copied (and wiped by tw_gw_destroy()).
 * @return the gateway, or NULL with errno (socket errors, ENOMEM, EINVAL).
 */
struct tw_gw *tw_gw_create(const struct il3_credentials *creds, const struct tw_gw_ops *ops,
			   uint16_t port, uint16_t *bound);

/** Close the sockets, wipe the key, free. NULL accepted. */
void tw_gw_destroy(struct tw_gw *gw);

/** The descriptor to poll now (the client, else the listener) and its events. */
struct pollfd tw_gw_pollfd(const struct tw_gw *gw);

/**
 * Handle what poll() reported for tw_gw_pollfd() (@p revents; 0: nothing
 * ready, only timers), then run the keep-alive timers and flush output.
 * Applied application messages reach tw_gw_ops.on_app inside this call.
 */
void tw_gw_step(struct tw_gw *gw, short revents);

/** Send what is queued (non-blocking). */
void tw_gw_flush(struct tw_gw *gw);

/** Close the client connection (event "disconnect @p why"). */
void tw_gw_close_client(struct tw_gw *gw, const char *why);

/** Send Terminate to the client. */
void tw_gw_terminate(struct tw_gw *gw);

/** Withhold outbound SeqNum @p seq once. @return false when 8 are pending. */
bool tw_gw_skip_at(struct tw_gw *gw, uint32_t seq);

/** The audit lines, now. @return violations + untracked. */
uint64_t tw_gw_audit_report(struct tw_gw *gw);

/*
 * Execution reports, answering @p in (its ClOrdID, OrderRequestID,
 * instrument and side): each takes the next outbound SeqNum, is stored for
 * retransmission and sent.
 */
void tw_gw_report_new(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id);
/** A (partial) fill: @p last_qty at @p last_px; @p cum_qty done, @p leaves_qty open. */
void tw_gw_report_fill(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id,
		       int64_t last_px, uint32_t last_qty, uint32_t cum_qty, uint32_t leaves_qty);
void tw_gw_report_reject(struct tw_gw *gw, const struct tw_gw_app *in, const char *text);
/** The order (@p price, @p order_qty, @p cum_qty done) is cancelled. */
void tw_gw_report_cancel(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id,
			 int64_t price, uint32_t order_qty, uint32_t cum_qty);
void tw_gw_report_modify(struct tw_gw *gw, const struct tw_gw_app *in, uint64_t order_id,
			 int64_t price, uint32_t qty);
/** OrderCancelReject (or OrderCancelReplaceReject with @p replace). */
void tw_gw_report_cancel_reject(struct tw_gw *gw, const struct tw_gw_app *in, bool replace,
				const char *text);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_GATEWAY_H */
