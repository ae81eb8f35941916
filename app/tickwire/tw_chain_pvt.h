/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Internals of the chain shared by its files: tw_chain.c (the decode group
 * and construction), tw_order_out.c (the order-out actor), tw_chain_print.c
 * (counters and the final report). Not an interface of its own.
 */
#ifndef TICKWIRE_TW_CHAIN_PVT_H
#define TICKWIRE_TW_CHAIN_PVT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "act.h"
#include "ilink3.h"
#include "tw_chain.h"
#include "tw_feed.h"

/* -- decode group ------------------------------------------------------------- */

/* The datagram being pushed to the arbiter: what its deliveries carry
 * (latency records only). */
struct rx_context {
	uint64_t t0;             /* rx TSC of the datagram in hand; 0 from a timer */
	uint32_t qlen;
	uint32_t rxq;
	uint32_t rx_flags;       /* TW_RX_RXQ */
	uint32_t burst_idx;
	uint32_t wait;           /* ticks from t0 to the arbiter taking the datagram */
};

/* arbiter -> decoder (TW_MSG_PACKET); the decoder's begin hands it on to the
 * book, which finds the rest around the arbiter's packet */
struct stage_packet {
	struct mdp3_arb_packet arb;
	uint16_t channel;        /* index into the chain's channels */
	struct rx_context rx;
};

struct arbiter_state {
	struct tw_chain *chain;
	struct rx_context cur;   /* the datagram being pushed */
};

struct decoder_state {
	struct tw_chain *chain;
};

/*
 * Halted instruments (stale means stop). Two tables of this shape, each
 * with one owner and no sharing: the decode thread's (what it halted, since
 * when, alarms) and order-out's (what it refuses), which follows the
 * decode thread's through TW_MSG_HALT on order-out's control queue, in
 * order. Open addressing by security id, fixed size, entries never
 * removed (an instrument is halted and resumed, not forgotten).
 */
#define TW_HALT_SLOTS 4096u

struct halt_entry {
	int32_t security_id;           /* 0: free */
	uint8_t halted;
	uint8_t why;                   /* enum tw_state_why of the halt */
	uint8_t alarmed;               /* decode: the alarm was raised for this halt */
	uint8_t pad_;
	uint32_t cut_seq;              /* order-out: orders triggered at or before it are refused */
	uint64_t since_ns;             /* decode: first tick that saw it halted; 0: not yet */
};

struct halt_table {
	uint32_t used;                 /* entries made */
	struct halt_entry e[TW_HALT_SLOTS];
};

/* The entry of @p id, made if @p make (NULL: not there, or the table is full). */
static inline struct halt_entry *
halt_find(struct halt_table *t, int32_t id, bool make)
{
	uint32_t h = (uint32_t)id * 2654435761u;

	for (uint32_t i = 0; i < TW_HALT_SLOTS; i++) {
		struct halt_entry *e = &t->e[(h + i) & (TW_HALT_SLOTS - 1)];

		if (e->security_id == id)
			return e;
		if (e->security_id == 0) {
			if (!make || id == 0)
				return NULL;
			e->security_id = id;
			t->used++;
			return e;
		}
	}
	return NULL;
}

/* TW_MSG_HALT: decode thread -> order-out (control queue). */
struct tw_halt_msg {
	int32_t security_id;
	uint8_t halted;                /* 1: halt (refuse, maybe cancel); 0: resume */
	uint8_t cancel;                /* halt: cancel its working orders */
	uint8_t why;                   /* enum tw_state_why */
	uint8_t pad_;
	uint32_t cut_seq;              /* halt: the channel's MsgSeqNum at the halt */
};

/* Per channel: is it silent (opts.silence_ns)? Decode thread. */
struct channel_watch {
	uint64_t packets;              /* incremental copies seen at the last tick */
	uint64_t alive_ns;             /* tick time the count last moved; 0: none yet */
	uint32_t last_seq;             /* MsgSeqNum of the last packet applied */
	bool silent;
};

/* Queue joins of the signal (struct tw_queue_join), one per instrument.
 * Linear scans: the sample strategy trades at most
 * TW_STRATEGY_MAX_INSTRUMENTS instruments. */
#define TW_QUEUE_JOINS 64

struct queue_join {
	int32_t security_id;
	uint16_t channel;              /* index of its channel */
	uint8_t side;                  /* enum book_side */
	uint8_t known;                 /* 1: priority is where it joined a valid MBO book */
	uint8_t order_side;            /* enum tw_order_side */
	int64_t price;
	uint64_t priority;             /* book_mbo_queue_back() when it joined */
};

struct book_stage {
	struct tw_chain *chain;
	uint32_t n_joins;
	struct queue_join joins[TW_QUEUE_JOINS];
	bool in_loss;                  /* inside tw_feed_book_loss(): stale means loss */
	struct halt_table *halts;      /* decode thread's */
	uint32_t n_halted;
	uint64_t last_scan_ns;         /* the alarm scan (at most every 10 ms) */
	struct channel_watch watch[TW_CHAIN_MAX_CHANNELS];
	struct tw_feed *open;          /* the open packet's channel, NULL between packets */
	uint16_t cur_channel;
	/* what latency records of the current events carry */
	struct rx_context cur;
	uint16_t cur_event_idx;
	uint16_t cur_msg_idx;          /* SBE message of the packet being applied */
	uint64_t first_record;         /* the packet's first latency record */
};

/* -- order-out ---------------------------------------------------------------- */

/* Open orders order-out tracks (for fills, the kill switch). Linear scans:
 * bounded by TW_OPEN_ORDERS, and risk.max_open_orders is far below it. */
#define TW_OPEN_ORDERS 1024
#define RECONNECT_NS UINT64_C(1000000000)

struct open_order {
	uint64_t clordid;
	uint64_t order_id;             /* exchange OrderID, 0 until acknowledged */
	uint32_t client_order_id;
	int32_t security_id;
	uint32_t leaves;
	int64_t price;                 /* limit price (cancel frames) */
	uint8_t side;                  /* enum il3_side_req */
	uint8_t used;
	uint8_t cancel_sent;
};

struct order_state {
	struct tw_chain *chain;
	struct halt_table *halts;      /* order-out's: what it refuses */
	struct il3_session *session;   /* NULL: frames to the sink */
	struct il3_risk risk;
	bool killed;
	_Atomic bool kill_now;         /* set by tw_chain_kill() at once (any thread) */
	bool closing;                  /* terminated: do not reconnect */
	uint64_t next_connect_ns;
	struct open_order open[TW_OPEN_ORDERS];
};

_Static_assert((int)TW_ORDER_BAD_ORDER == (int)IL3_RISK_BAD_ORDER &&
	       (int)TW_ORDER_KILL_SWITCH == (int)IL3_RISK_KILL_SWITCH &&
	       (int)IL3_RISK_REASON_COUNT <= (int)TW_ORDER_NOT_CONNECTED,
	       "enum tw_order_reason numbers the risk checks as enum il3_risk_reason");

/* Telemetry queries of the book (tw_chain_query()): the caller waits here
 * for the decode thread's answer. */
struct query_slot {
	pthread_mutex_t turn;          /* one query at a time */
	pthread_mutex_t mu;            /* the rest */
	pthread_cond_t cv;
	uint64_t asked;                /* number of the query in flight */
	uint64_t answered;             /* last number answered */
	int32_t security_id;           /* of the query in flight */
	_Atomic uint64_t pending;      /* number for the decode thread to take; 0: none */
	struct tw_query_reply reply;
};

struct tw_chain {
	struct tw_chain_opts opts;
	uint32_t n_channels;           /* at least 1 */
	struct tw_feed *path[TW_CHAIN_MAX_CHANNELS]; /* arbiter, walker, books per channel */
	struct act_group *decode;
	struct act_group *orders;
	struct act_actor *arbiter;
	struct act_actor *decoder;
	struct act_actor *book;
	struct act_actor *signal;
	struct act_actor *order_out;
	struct tw_strategy *strategy;
	const act_handler_fn *signal_handlers; /* TW_HOPS_DIRECT: called without the runtime */
	struct arbiter_state arbiter_state;
	struct decoder_state decoder_state;
	struct book_stage book_state;
	struct order_state order_state;
	struct query_slot query;
	bool query_ready;              /* query initialised (destroy) */
	struct tw_chain_stats stats;
	struct tw_chain_channel_stats channel_stats[TW_CHAIN_MAX_CHANNELS];
};

/* A hop to the next stage's actor on the decode thread (opts.hops). */
static inline int
stage_send(const struct tw_chain *c, struct act_actor *to, struct act_msg *m, void *reply,
	   uint32_t reply_cap)
{
	if (c->opts.hops == TW_HOPS_EDGE)
		return act_fast_send_edge(to, m, reply, reply_cap);
	return act_fast_send(to, m, reply, reply_cap);
}

static inline void
count(uint64_t *counter, uint64_t n)
{
	/* single writer; pairs with the relaxed loads of tw_chain_stats() */
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

static inline void
mirror(uint64_t *copy, uint64_t value)
{
	/* single writer; pairs with the relaxed loads of tw_chain_channel_stats() */
	__atomic_store_n(copy, value, __ATOMIC_RELAXED);
}

/* tw_order_out.c */
extern const act_handler_fn tw_order_handlers[TW_MSG_COUNT_];
/* Pre-trade risk and the iLink 3 session of order-out (tw_chain_create()).
 * @return 0 or -1 with errno set. */
int tw_order_out_init(struct tw_chain *c);
void tw_order_out_fini(struct tw_chain *c);

/* tw_chain_print.c */
extern const char *const tw_exec_kind_names[TW_EXEC_KIND_COUNT_];

#endif /* TICKWIRE_TW_CHAIN_PVT_H */
