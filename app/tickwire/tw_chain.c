/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The decode group (arbiter -> decoder -> book -> signal, by act_fast_send
 * on one thread) and the order-out actor, shared by the DPDK appliance and
 * the library-only replay. See tw_chain.h.
 *
 * Cost: per datagram one act_fast_send to the decoder per in-sequence packet
 * (held packets released by it included), and per packet 2 + messages
 * act_fast_send calls from the decoder to the book; every one is a lock
 * acquisition without queueing. Nothing allocates after tw_chain_create().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "mdp3.h"
#include "tw_chain.h"

/* -- stage messages (TW_MSG_PACKET ... TW_MSG_BOOK_DIRECT) ------------------ */

/* arbiter -> decoder; reply: int, the walker's result (< 0: copy refused) */
struct stage_packet {
	const uint8_t *data;
	uint32_t length;
	uint16_t channel;        /* index into the chain's channels */
	uint8_t feed;            /* enum mdp3_feed_id */
	uint8_t held;
	uint64_t rx_ns;
	uint64_t t0;             /* rx TSC of the datagram in hand; 0 from a timer */
	uint32_t qlen;
	uint32_t rxq;
	uint32_t rx_flags;       /* TW_RX_RXQ */
	uint32_t burst_idx;
	uint32_t wait;           /* ticks from t0 to the arbiter taking the datagram */
};

/* decoder -> book */
struct stage_begin {
	const struct stage_packet *packet;
};

struct stage_message {
	const struct mdp3_msg *msg; /* NULL: a message the walker skipped */
};

struct stage_end {
	int32_t walk_rc;
};

/* arbiter -> book */
struct stage_loss {
	uint16_t channel;
	uint32_t first_seq;
	uint32_t count;
	uint64_t now_ns;
};

struct stage_direct {
	const struct tw_rx *rx;
	uint16_t channel;
};

/* -- state ------------------------------------------------------------------- */

struct tw_chain;

struct arb_channel {
	struct arbiter_state *arbiter;
	struct mdp3_arb *arb;
	uint16_t index;
};

struct arbiter_state {
	struct tw_chain *chain;
	struct arb_channel ch[TW_CHAIN_MAX_CHANNELS];
	/* the datagram being pushed: what its deliveries carry */
	uint64_t cur_t0;
	uint32_t cur_qlen;
	uint32_t cur_rxq;
	uint32_t cur_rx_flags;
	uint32_t cur_burst_idx;
	uint32_t cur_wait;
};

struct decoder_state {
	struct tw_chain *chain;
	struct mdp3_walker walker;
};

struct book_stage {
	struct tw_chain *chain;
	struct book_feed *feed[TW_CHAIN_MAX_CHANNELS];
	struct book_packet_ctx pc;     /* the open packet */
	struct book_feed *open;        /* its feed, NULL between packets */
	uint16_t cur_channel;
	/* what latency records of the current events carry */
	uint64_t cur_t0;
	uint32_t cur_qlen;
	uint32_t cur_rxq;
	uint32_t cur_rx_flags;
	uint8_t cur_burst_idx;
	uint32_t cur_wait;
	uint16_t cur_event_idx;
	uint16_t cur_msg_idx;          /* SBE message of the packet being applied */
	uint64_t first_record;         /* the packet's first latency record */
};

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
	uint8_t side;
	uint8_t used;
	uint8_t cancel_sent;
};

#define TW_PENDING_EXECS 256

struct order_state {
	struct tw_chain *chain;
	struct il3_session *session;   /* NULL: frames to the sink */
	struct il3_risk risk;
	bool killed;
	bool closing;                  /* terminated: do not reconnect */
	uint64_t next_connect_ns;
	struct open_order open[TW_OPEN_ORDERS];
	/*
	 * Execution reports the decode group's mailbox could not take (it is
	 * shared with the market-data hand-off and may be full during a burst):
	 * kept in order and retried on every poll, so a report is late, never
	 * lost, unless this bounded ring overflows too (then counted).
	 */
	struct pending_msg {
		uint32_t type;             /* TW_MSG_EXEC or TW_MSG_ORDER_REPLY */
		uint32_t size;
		union {
			struct tw_exec exec;
			struct tw_order_reply reply;
		} u;
	} pending[TW_PENDING_EXECS];
	uint32_t pending_head, pending_count;
};

_Static_assert((int)TW_ORDER_BAD_ORDER == (int)IL3_RISK_BAD_ORDER &&
	       (int)TW_ORDER_KILL_SWITCH == (int)IL3_RISK_KILL_SWITCH &&
	       (int)IL3_RISK_REASON_COUNT <= (int)TW_ORDER_NOT_CONNECTED,
	       "enum tw_order_reason numbers the risk checks as enum il3_risk_reason");

struct tw_chain {
	struct tw_chain_opts opts;
	uint32_t n_channels;           /* at least 1 */
	struct act_group *decode;
	struct act_group *orders;
	struct act_actor *arbiter;
	struct act_actor *decoder;
	struct act_actor *book;
	struct act_actor *signal;
	struct act_actor *order_out;
	struct tw_strategy *strategy;
	struct arbiter_state arbiter_state;
	struct decoder_state decoder_state;
	struct book_stage book_state;
	struct order_state order_state;
	struct tw_chain_stats stats;
	struct tw_chain_channel_stats channel_stats[TW_CHAIN_MAX_CHANNELS];
};

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

/* -- arbiter actor ------------------------------------------------------------ */

static int
on_arb_deliver(void *ctx, const struct mdp3_arb_packet *p)
{
	struct arb_channel *ch = ctx;
	struct arbiter_state *as = ch->arbiter;
	ACT_STACK_MSG(m, struct stage_packet);
	int32_t rc = 0;
	int n;

	act_msg_init(&m.hdr, TW_MSG_PACKET, sizeof(m.body));
	m.body = (struct stage_packet){
		.data = p->data, .length = p->length, .channel = ch->index, .feed = p->feed,
		.held = p->held, .rx_ns = p->rx_ns, .t0 = as->cur_t0, .qlen = as->cur_qlen,
		.rxq = as->cur_rxq, .rx_flags = as->cur_rx_flags, .burst_idx = as->cur_burst_idx,
		.wait = as->cur_wait,
	};
	n = act_fast_send(as->chain->decoder, &m.hdr, &rc, sizeof(rc));
	return n < 0 ? n : rc;
}

static void
on_arb_loss(void *ctx, uint32_t first_seq, uint32_t count_, uint64_t now_ns)
{
	struct arb_channel *ch = ctx;
	ACT_STACK_MSG(m, struct stage_loss);

	act_msg_init(&m.hdr, TW_MSG_BOOK_LOSS, sizeof(m.body));
	m.body = (struct stage_loss){
		.channel = ch->index, .first_seq = first_seq, .count = count_, .now_ns = now_ns,
	};
	act_fast_send(ch->arbiter->chain->book, &m.hdr, NULL, 0);
}

static uint32_t
channel_index(const struct tw_chain *c, uint16_t channel)
{
	if (channel == 0 || c->opts.n_channels == 0)
		return 0;
	for (uint32_t i = 0; i < c->n_channels; i++)
		if (c->opts.channels[i] == channel)
			return i;
	return UINT32_MAX;
}

static void
mirror_arb(struct tw_chain *c, uint32_t index)
{
	const struct mdp3_arb_counters *ac = mdp3_arb_counters(c->arbiter_state.ch[index].arb);
	struct tw_chain_channel_stats *cs = &c->channel_stats[index];

	mirror(&cs->packets_a, ac->packets[MDP3_FEED_A]);
	mirror(&cs->packets_b, ac->packets[MDP3_FEED_B]);
	mirror(&cs->duplicates, ac->duplicates[MDP3_FEED_A] + ac->duplicates[MDP3_FEED_B]);
	mirror(&cs->gaps, ac->gaps);
	mirror(&cs->lost_packets, ac->lost_packets);
}

/* Ticks from @p t0 to now, the decode group taking a datagram (records only). */
static inline uint32_t
wait_of(const struct tw_chain *c, uint64_t t0)
{
	uint64_t now;

	if (c->opts.latency == NULL || c->opts.ticks == NULL || t0 == 0)
		return 0;
	now = c->opts.ticks();
	return now <= t0 ? 0 : now - t0 > UINT32_MAX ? UINT32_MAX : (uint32_t)(now - t0);
}

static void
on_rx(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct arbiter_state *as = state;
	struct tw_chain *c = as->chain;
	const struct tw_rx *rx = ACT_PAYLOAD(msg, const struct tw_rx);
	const uint32_t index = channel_index(c, rx->channel);
	int rc;

	(void)self;
	count(&c->stats.rx_packets, 1);
	count(&c->stats.rx_bytes, rx->length);
	if (index == UINT32_MAX) {
		count(&c->stats.unknown_channel, 1);
	} else if (rx->stream == MDP3_STREAM_INCREMENTAL) {
		as->cur_t0 = rx->t0;
		/* Instrumentation only: through the mailbox, the runtime's depth at
		 * enqueue; through an rte_ring or a direct call, what the sender saw. */
		as->cur_qlen = msg->qdepth != 0 ? msg->qdepth : rx->qlen;
		as->cur_rxq = rx->rxq;
		as->cur_rx_flags = rx->rx_flags;
		as->cur_burst_idx = rx->burst_idx;
		as->cur_wait = wait_of(c, rx->t0);
		rc = mdp3_arb_push(as->ch[index].arb, rx->side == TW_SIDE_B ? MDP3_FEED_B :
				   MDP3_FEED_A, rx->payload, rx->length, rx->rx_ns);
		as->cur_t0 = 0;
		if (rc < 0)
			count(&c->stats.feed_errors, 1);
		else if (rc < 5)
			count(&c->stats.verdict[rc], 1);
		mirror_arb(c, index);
	} else if (rx->stream == MDP3_STREAM_SNAPSHOT && c->opts.skip_snapshots) {
		count(&c->stats.snapshots_skipped, 1);
	} else if (rx->stream < MDP3_STREAM_COUNT) {
		ACT_STACK_MSG(m, struct stage_direct);

		act_msg_init(&m.hdr, TW_MSG_BOOK_DIRECT, sizeof(m.body));
		m.body.rx = rx;
		m.body.channel = (uint16_t)index;
		if (act_fast_send(c->book, &m.hdr, NULL, 0) < 0)
			count(&c->stats.feed_errors, 1);
	} else {
		count(&c->stats.feed_errors, 1);
	}
	if (index != UINT32_MAX)
		count(&c->channel_stats[index].rx_packets, 1);
	/* The decoder and the book are done with the bytes (or the arbiter
	 * copied them into its hold ring): the datagram can go. */
	if (c->opts.release != NULL && rx->cookie != NULL)
		c->opts.release(c->opts.release_ctx, rx->cookie);
}

static void
on_tick(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct arbiter_state *as = state;
	struct tw_chain *c = as->chain;
	const struct tw_tick *t = ACT_PAYLOAD(msg, const struct tw_tick);

	(void)self;
	as->cur_t0 = 0;
	as->cur_qlen = 0;
	for (uint32_t i = 0; i < c->n_channels; i++) {
		if (msg->type == TW_MSG_FLUSH)
			mdp3_arb_flush(as->ch[i].arb, t->now_ns);
		else
			mdp3_arb_poll(as->ch[i].arb, t->now_ns);
		mirror_arb(c, i);
	}
	if (msg->type == TW_MSG_FLUSH) {
		ACT_STACK_MSG(m, struct tw_tick);

		act_msg_init(&m.hdr, TW_MSG_FLUSH, sizeof(m.body));
		m.body = *t;
		act_fast_send(c->book, &m.hdr, NULL, 0);
	}
}

static const act_handler_fn arbiter_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_RX] = on_rx,
	[TW_MSG_TICK] = on_tick,
	[TW_MSG_FLUSH] = on_tick,
};

/* -- decoder actor ------------------------------------------------------------ */

static int
on_walk_message(void *ctx, const struct mdp3_packet *packet, const struct mdp3_msg *msg)
{
	struct decoder_state *ds = ctx;
	ACT_STACK_MSG(m, struct stage_message);

	(void)packet;
	act_msg_init(&m.hdr, TW_MSG_BOOK_MESSAGE, sizeof(m.body));
	m.body.msg = msg;
	act_fast_send(ds->chain->book, &m.hdr, NULL, 0);
	return 0;
}

static void
on_walk_skip(void *ctx, const struct mdp3_packet *packet, const struct mdp3_skip *skip)
{
	(void)skip;
	on_walk_message(ctx, packet, NULL);
}

static void
on_packet(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct decoder_state *ds = state;
	struct tw_chain *c = ds->chain;
	const struct stage_packet *p = ACT_PAYLOAD(msg, const struct stage_packet);
	ACT_STACK_MSG(begin, struct stage_begin);
	ACT_STACK_MSG(end, struct stage_end);
	int32_t rc;

	(void)self;
	act_msg_init(&begin.hdr, TW_MSG_BOOK_BEGIN, sizeof(begin.body));
	begin.body.packet = p;
	act_fast_send(c->book, &begin.hdr, NULL, 0);
	/* The walker checks the whole packet before its first message, so a
	 * malformed copy reaches the book as no message and an END < 0. */
	rc = mdp3_walk_packet(&ds->walker, p->data, p->length);
	count(&c->stats.decoded, 1);
	if (rc < 0)
		count(&c->stats.malformed, 1);
	act_msg_init(&end.hdr, TW_MSG_BOOK_END, sizeof(end.body));
	end.body.walk_rc = rc;
	act_fast_send(c->book, &end.hdr, NULL, 0);
	act_reply(msg, TW_MSG_PACKET, &rc, sizeof(rc));
}

static const act_handler_fn decoder_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_PACKET] = on_packet,
};

/* -- book actor --------------------------------------------------------------- */

static void
on_book_event(void *ctx, const struct book_event *ev)
{
	struct book_stage *bs = ctx;
	struct tw_chain *c = bs->chain;
	ACT_STACK_MSG(m, struct tw_top);
	struct tw_lat_record *kept = NULL;
	int rc;

	count(&c->stats.events, 1);
	count(&c->channel_stats[bs->cur_channel].events, 1);
	if ((ev->what & (BOOK_EVENT_BOOK | BOOK_EVENT_TRADE)) == 0 || ev->security_id == 0)
		return;
	act_msg_init(&m.hdr, TW_MSG_TOP, sizeof(m.body));
	memset(&m.body, 0, sizeof(m.body));
	m.body.security_id = ev->security_id;
	m.body.kind = (ev->what & BOOK_EVENT_BOOK) ? TW_TOP_BOOK : TW_TOP_TRADE;
	m.body.ok = ev->state == BOOK_STATE_OK;
	m.body.idx = bs->cur_event_idx;
	m.body.msg_seq_num = ev->msg_seq_num;
	m.body.bid_price = ev->consolidated.bid_price;
	m.body.bid_qty = ev->consolidated.bid_qty;
	m.body.ask_price = ev->consolidated.ask_price;
	m.body.ask_qty = ev->consolidated.ask_qty;
	if (ev->instrument != NULL)
		m.body.tick = ev->instrument->tick;
	if (ev->what & BOOK_EVENT_TRADE) {
		m.body.trade_price = ev->trade.price;
		m.body.trade_qty = ev->trade.qty;
	}
	if (c->opts.latency != NULL && c->opts.ticks != NULL && bs->cur_t0 != 0) {
		struct tw_lat_record rec = {
			.t0 = bs->cur_t0,
			.t1 = c->opts.ticks(),
			.instrument = ev->security_id,
			.stream = m.body.kind == TW_TOP_BOOK ? TW_LAT_BOOK : TW_LAT_TRADE,
			.burst_idx = bs->cur_burst_idx,
			.idx = bs->cur_msg_idx,
			.event = bs->cur_event_idx,
			.qlen = bs->cur_qlen,
			.rxq = bs->cur_rxq,
			.msg_seq_num = ev->msg_seq_num,
			.wait = bs->cur_wait,
			.flags = (bs->cur_rx_flags & TW_RX_RXQ) ? TW_LAT_REC_RXQ : 0,
		};

		m.body.t0 = rec.t0;
		m.body.t1 = rec.t1;
		kept = tw_lat_add(c->opts.latency, &rec);
	}
	bs->cur_event_idx++;
	if (c->signal == NULL)
		return;
	rc = act_fast_send(c->signal, &m.hdr, NULL, 0);
	if (kept != NULL)
		kept->t2 = c->opts.ticks();  /* the signal has decided */
	if (rc < 0)
		count(&c->stats.signal_errors, 1);
	else
		count(&c->stats.tops, 1);
}

static void
mirror_book(struct tw_chain *c, uint32_t index)
{
	const struct book_feed *feed = c->book_state.feed[index];
	const struct book_feed_counters *fc = book_feed_counters(feed);
	struct tw_chain_channel_stats *cs = &c->channel_stats[index];

	mirror(&cs->packets_applied, fc->packets_applied);
	mirror(&cs->rpt_seq_gaps, fc->rpt_seq_gaps);
	mirror(&cs->stale_books, fc->stale_books);
	mirror(&cs->recoveries, fc->recoveries);
	mirror(&cs->snapshots, fc->snapshots);
	mirror(&cs->instruments, book_feed_instrument_count(feed));
}

static void
on_book_begin(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;
	const struct stage_packet *p = ACT_PAYLOAD(msg, const struct stage_begin)->packet;

	(void)self;
	bs->cur_channel = p->channel;
	bs->cur_t0 = p->t0;
	bs->cur_qlen = p->qlen;
	bs->cur_rxq = p->rxq;
	bs->cur_rx_flags = p->rx_flags;
	bs->cur_burst_idx = p->burst_idx > UINT8_MAX ? UINT8_MAX : (uint8_t)p->burst_idx;
	bs->cur_wait = p->wait;
	bs->cur_event_idx = 0;
	bs->cur_msg_idx = 0;
	if (bs->chain->opts.latency != NULL)
		bs->first_record = bs->chain->opts.latency->count;
	bs->open = bs->feed[p->channel];
	book_feed_packet_begin(bs->open, (enum mdp3_feed_id)p->feed, p->data, p->length,
			       p->rx_ns, &bs->pc);
	bs->pc.held = p->held != 0;
}

static void
on_book_message(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;

	(void)self;
	book_feed_message(bs->open, &bs->pc, ACT_PAYLOAD(msg, const struct stage_message)->msg);
	bs->cur_msg_idx++;
}

static void
on_book_end(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;
	struct tw_lat_recorder *lat = bs->chain->opts.latency;
	const uint16_t n_msgs = bs->cur_msg_idx;

	(void)self;
	/* what the end of the packet publishes belongs to its last message */
	if (n_msgs != 0)
		bs->cur_msg_idx = (uint16_t)(n_msgs - 1);
	book_feed_packet_end(bs->open, &bs->pc, ACT_PAYLOAD(msg, const struct stage_end)->walk_rc);
	bs->open = NULL;
	bs->cur_t0 = 0;
	/* the packet's message count, now known, into its records */
	if (lat != NULL)
		for (uint64_t i = bs->first_record; i < lat->count; i++)
			lat->records[i].n_msgs = n_msgs;
	mirror_book(bs->chain, bs->cur_channel);
}

static void
on_book_loss(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;
	const struct stage_loss *l = ACT_PAYLOAD(msg, const struct stage_loss);

	(void)self;
	bs->cur_channel = l->channel;
	bs->cur_t0 = 0;
	book_feed_loss(bs->feed[l->channel], l->first_seq, l->count, l->now_ns);
	mirror_book(bs->chain, l->channel);
}

static void
on_book_direct(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;
	struct tw_chain *c = bs->chain;
	const struct stage_direct *d = ACT_PAYLOAD(msg, const struct stage_direct);
	const struct tw_rx *rx = d->rx;

	(void)self;
	bs->cur_channel = d->channel;
	bs->cur_t0 = rx->t0;
	bs->cur_qlen = msg->qdepth != 0 ? msg->qdepth : rx->qlen;
	bs->cur_rxq = rx->rxq;
	bs->cur_rx_flags = rx->rx_flags;
	bs->cur_burst_idx = rx->burst_idx > UINT8_MAX ? UINT8_MAX : (uint8_t)rx->burst_idx;
	bs->cur_wait = wait_of(c, rx->t0);
	bs->cur_event_idx = 0;
	bs->cur_msg_idx = 0;
	if (book_feed_packet(bs->feed[d->channel], (enum mdp3_stream)rx->stream,
			     rx->side == TW_SIDE_B ? MDP3_FEED_B : MDP3_FEED_A, rx->payload,
			     rx->length, rx->rx_ns) < 0)
		count(&c->stats.feed_errors, 1);
	bs->cur_t0 = 0;
	mirror_book(c, d->channel);
}

static void
on_book_flush(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;
	const struct tw_tick *t = ACT_PAYLOAD(msg, const struct tw_tick);

	(void)self;
	bs->cur_t0 = 0;
	for (uint32_t i = 0; i < bs->chain->n_channels; i++) {
		bs->cur_channel = (uint16_t)i;
		book_feed_flush(bs->feed[i], t->now_ns);   /* publishes pending changes */
		mirror_book(bs->chain, i);
	}
}

static void
on_query(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;
	const struct tw_query *q = ACT_PAYLOAD(msg, const struct tw_query);
	const struct book_instrument *in = NULL;
	struct tw_query_reply r;

	(void)self;
	for (uint32_t i = 0; i < bs->chain->n_channels && in == NULL; i++)
		in = book_feed_find(bs->feed[i], q->security_id);
	memset(&r, 0, sizeof(r));
	if (in != NULL) {
		r.found = 1;
		r.state = in->state;
		r.rpt_seq = in->rpt_seq;
		r.depth = in->depth;
		for (unsigned int i = 0; i < 5 && i < BOOK_MAX_DEPTH; i++) {
			r.bid_price[i] = in->bid[i].price;
			r.bid_qty[i] = in->bid[i].qty;
			r.ask_price[i] = in->ask[i].price;
			r.ask_qty[i] = in->ask[i].qty;
		}
	}
	act_reply(msg, TW_MSG_QUERY, &r, sizeof(r));
}

static const act_handler_fn book_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_BOOK_BEGIN] = on_book_begin,
	[TW_MSG_BOOK_MESSAGE] = on_book_message,
	[TW_MSG_BOOK_END] = on_book_end,
	[TW_MSG_BOOK_LOSS] = on_book_loss,
	[TW_MSG_BOOK_DIRECT] = on_book_direct,
	[TW_MSG_FLUSH] = on_book_flush,
	[TW_MSG_QUERY] = on_query,
};

/* -- order-out actor -------------------------------------------------------- */

static uint16_t
ipv4_checksum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (unsigned int i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void
put_le(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t
tw_order_frame(const struct tw_order *o, uint8_t *f, uint32_t cap)
{
	const uint32_t len = 14 + 20 + 8 + TW_ORDER_WIRE_SIZE;
	uint8_t *ip = f + 14, *udp = ip + 20, *p = udp + 8;
	uint16_t csum;

	if (cap < len)
		return 0;
	memset(f, 0, len);
	f[12] = 0x08;                           /* IPv4; MACs zero: loopback */
	ip[0] = 0x45;
	ip[2] = (uint8_t)((len - 14) >> 8);
	ip[3] = (uint8_t)(len - 14);
	ip[6] = 0x40;                           /* DF */
	ip[8] = 64;
	ip[9] = 17;
	ip[12] = 127; ip[15] = 1;               /* 127.0.0.1 -> 127.0.0.1 */
	ip[16] = 127; ip[19] = 1;
	csum = ipv4_checksum(ip);
	ip[10] = (uint8_t)(csum >> 8);
	ip[11] = (uint8_t)csum;
	udp[0] = TW_ORDER_UDP_PORT >> 8; udp[1] = TW_ORDER_UDP_PORT & 0xff;
	udp[2] = TW_ORDER_UDP_PORT >> 8; udp[3] = TW_ORDER_UDP_PORT & 0xff;
	udp[4] = (uint8_t)((8 + TW_ORDER_WIRE_SIZE) >> 8);
	udp[5] = (uint8_t)(8 + TW_ORDER_WIRE_SIZE);
	memcpy(p, TW_ORDER_WIRE_MAGIC, 4);
	put_le(p + 4, o->client_order_id, 4);
	put_le(p + 8, (uint32_t)o->security_id, 4);
	p[12] = o->side;
	put_le(p + 16, o->qty, 4);
	put_le(p + 20, o->trigger_seq, 4);
	put_le(p + 24, (uint64_t)o->price, 8);
	return len;
}

static uint64_t
order_now(const struct tw_chain *c)
{
	return c->opts.now_ns != NULL ? c->opts.now_ns() : 0;
}

static struct open_order *
open_find(struct order_state *os, uint64_t clordid)
{
	for (unsigned int i = 0; i < TW_OPEN_ORDERS; i++)
		if (os->open[i].used && os->open[i].clordid == clordid)
			return &os->open[i];
	return NULL;
}

static struct open_order *
open_free_slot(struct order_state *os)
{
	for (unsigned int i = 0; i < TW_OPEN_ORDERS; i++)
		if (!os->open[i].used)
			return &os->open[i];
	return NULL;
}

/* The price band of one order: price_band_ticks of its instrument's tick. */
static int64_t
price_band(const struct tw_chain *c, const struct tw_order *o)
{
	int64_t tick = o->tick;

	if (tick <= 0)
		tick = (o->mid < 0 ? -o->mid : o->mid) / 10000;
	if (tick <= 0)
		tick = 1;
	return tick * (int64_t)c->opts.price_band_ticks;
}

/* Tick-to-trade: the order's record, t3 read now (order-out's recorder). */
static void
record_order(const struct tw_chain *c, const struct tw_order *o)
{
	struct tw_lat_record rec;

	if (c->opts.order_latency == NULL || c->opts.ticks == NULL || o->t0 == 0)
		return;
	rec = (struct tw_lat_record){
		.t0 = o->t0, .t1 = o->t1, .t2 = o->t2, .t3 = c->opts.ticks(),
		.instrument = o->security_id, .stream = TW_LAT_ORDER,
		.msg_seq_num = o->trigger_seq, .order_id = o->client_order_id,
	};
	tw_lat_add(c->opts.order_latency, &rec);
}

/* Risk, then the session (or the frame sink). @return enum tw_order_reason. */
static uint32_t
place_order(struct order_state *os, const struct tw_order *o, uint64_t *clordid)
{
	struct tw_chain *c = os->chain;
	const uint64_t now = order_now(c);
	struct il3_order io = {
		.security_id = o->security_id,
		.side = o->side == TW_ORDER_SELL ? IL3_SIDE_REQ_SELL : IL3_SIDE_REQ_BUY,
		.quantity = o->qty,
		.price_mantissa = o->price,
		.time_in_force = IL3_TIME_IN_FORCE_DAY,
	};
	struct open_order *slot = NULL;
	enum il3_risk_reason r;

	if (os->killed)
		return TW_ORDER_KILL_SWITCH;
	if (os->session != NULL && (slot = open_free_slot(os)) == NULL)
		return TW_ORDER_TABLE_FULL;
	if (c->opts.risk_enabled) {
		if (o->mid != 0 && il3_risk_set_mid(&os->risk, o->security_id, o->mid) != 0)
			return TW_ORDER_UNKNOWN_INSTRUMENT;
		os->risk.limits.price_band = price_band(c, o);
		r = il3_risk_check_new(&os->risk, &io, now);
		if (r != IL3_RISK_OK)
			return (uint32_t)r;
	}
	if (os->session == NULL) {
		uint8_t frame[128];
		uint32_t len = tw_order_frame(o, frame, sizeof(frame));

		if (len != 0 && c->opts.order_sink != NULL) {
			c->opts.order_sink(c->opts.order_sink_ctx, frame, len);
			record_order(c, o);
			count(&c->stats.orders_written, 1);
		}
		return TW_ORDER_SENT;
	}
	if (il3_session_state(os->session) != IL3_STATE_ESTABLISHED ||
	    il3_session_send_new_order(os->session, &io, now, clordid) != 0) {
		const uint32_t why = il3_session_state(os->session) != IL3_STATE_ESTABLISHED ?
				     TW_ORDER_NOT_CONNECTED : TW_ORDER_SEND_FAILED;

		/* nothing was written: release what risk counted as open */
		if (c->opts.risk_enabled)
			il3_risk_on_order_closed(&os->risk, io.security_id, io.side, io.quantity);
		return why;
	}
	record_order(c, o);
	*slot = (struct open_order){
		.clordid = *clordid, .client_order_id = o->client_order_id,
		.security_id = o->security_id, .leaves = o->qty, .side = io.side, .used = 1,
	};
	count(&c->stats.orders_sent, 1);
	return TW_ORDER_SENT;
}

static bool flush_pending_execs(struct order_state *os);
static bool pend(struct order_state *os, uint32_t type, const void *body, uint32_t size);

static void
on_order(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct order_state *os = state;
	struct tw_chain *c = os->chain;
	const struct tw_order *o = ACT_PAYLOAD(msg, const struct tw_order);
	struct tw_order_reply reply;

	(void)self;
	if (msg->size < sizeof(*o))
		return;
	count(&c->stats.orders_in, 1);
	memset(&reply, 0, sizeof(reply));
	reply.client_order_id = o->client_order_id;
	reply.reason = place_order(os, o, &reply.clordid);
	if (reply.reason != TW_ORDER_SENT) {
		count(&c->stats.orders_refused, 1);
		count(&c->stats.refused[reply.reason < TW_ORDER_REASON_MAX_ ? reply.reason : 0], 1);
	}
	/* Asynchronous reply: queued on the strategy's (decode group's) mailbox. */
	/* Behind any execution report still waiting, so the strategy sees
	 * them in order; a full mailbox delays the reply, never loses it
	 * (unless the retry ring overflows too). */
	if ((os->pending_count != 0 && !flush_pending_execs(os)) ||
	    act_reply(msg, TW_MSG_ORDER_REPLY, &reply, sizeof(reply)) != 0) {
		/* retried by on_poll, which runs only with a session */
		if (os->session == NULL || msg->sender != c->signal ||
		    !pend(os, TW_MSG_ORDER_REPLY, &reply, sizeof(reply)))
			count(&c->stats.replies_failed, 1);
	}
}

static uint64_t
clordid_number(const char *chars, size_t length)
{
	uint64_t v = 0;

	for (size_t i = 0; i < length && chars[i] >= '0' && chars[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(chars[i] - '0');
	return v;
}

/* Retry queued execution reports in order; false if some remain. */
static bool
flush_pending_execs(struct order_state *os)
{
	struct tw_chain *c = os->chain;

	while (os->pending_count != 0) {
		const struct pending_msg *p = &os->pending[os->pending_head];

		if (act_send_copy(c->signal, p->type, &p->u, p->size) != 0)
			return false;
		os->pending_head = (os->pending_head + 1) % TW_PENDING_EXECS;
		os->pending_count--;
	}
	return true;
}

/* Queue a message for the strategy behind the ones already waiting;
 * false if the ring is full. */
static bool
pend(struct order_state *os, uint32_t type, const void *body, uint32_t size)
{
	struct pending_msg *p;

	if (os->pending_count == TW_PENDING_EXECS)
		return false;
	p = &os->pending[(os->pending_head + os->pending_count) % TW_PENDING_EXECS];
	p->type = type;
	p->size = size;
	memcpy(&p->u, body, size);
	os->pending_count++;
	return true;
}

static void
relay_exec(struct order_state *os, const struct tw_exec *e)
{
	struct tw_chain *c = os->chain;

	if (c->signal == NULL)
		return;
	if (flush_pending_execs(os) && act_send_copy(c->signal, TW_MSG_EXEC, e, sizeof(*e)) == 0)
		return;
	if (!pend(os, TW_MSG_EXEC, e, sizeof(*e)))
		count(&c->stats.exec_relay_failed, 1);
}

/* An application message of the gateway (inside il3_session_step(), so
 * inside on_poll(), under order-out's lock). */
static void
on_app_message(void *ctx, const struct il3_msg *msg, bool retransmitted)
{
	struct order_state *os = ctx;
	struct tw_chain *c = os->chain;
	struct open_order *oo;
	struct il3_decimal px;
	struct tw_exec e;
	const char *id = NULL;
	size_t id_len = 0;
	uint32_t qty = 0;

	memset(&e, 0, sizeof(e));
	e.retransmitted = retransmitted;
	switch (msg->template_id) {
	case IL3_TEMPLATE_EXECUTION_REPORT_NEW522:
		e.kind = TW_EXEC_NEW;
		il3_execution_report_new522_cl_ord_id(msg, &id, &id_len);
		break;
	case IL3_TEMPLATE_EXECUTION_REPORT_TRADE_OUTRIGHT525:
		e.kind = TW_EXEC_FILL;
		il3_execution_report_trade_outright525_cl_ord_id(msg, &id, &id_len);
		il3_execution_report_trade_outright525_last_qty(msg, &e.last_qty);
		il3_execution_report_trade_outright525_leaves_qty(msg, &e.leaves_qty);
		il3_execution_report_trade_outright525_last_px(msg, &px);
		e.last_price = px.mantissa;
		break;
	case IL3_TEMPLATE_EXECUTION_REPORT_REJECT523:
		e.kind = TW_EXEC_REJECT;
		il3_execution_report_reject523_cl_ord_id(msg, &id, &id_len);
		break;
	case IL3_TEMPLATE_EXECUTION_REPORT_CANCEL534:
		e.kind = TW_EXEC_CANCELED;
		il3_execution_report_cancel534_cl_ord_id(msg, &id, &id_len);
		break;
	case IL3_TEMPLATE_ORDER_CANCEL_REJECT535:
		e.kind = TW_EXEC_CANCEL_REJECT;
		il3_order_cancel_reject535_cl_ord_id(msg, &id, &id_len);
		break;
	default:
		count(&c->stats.exec_other, 1);
		return;
	}
	count(&c->stats.exec[e.kind], 1);
	oo = open_find(os, clordid_number(id, id_len));
	if (oo != NULL) {
		e.client_order_id = oo->client_order_id;
		e.security_id = oo->security_id;
		e.side = oo->side == IL3_SIDE_REQ_SELL ? TW_ORDER_SELL : TW_ORDER_BUY;
		qty = oo->leaves;
		switch (e.kind) {
		case TW_EXEC_NEW:
			if (msg->template_id == IL3_TEMPLATE_EXECUTION_REPORT_NEW522)
				il3_execution_report_new522_order_id(msg, &oo->order_id);
			e.leaves_qty = oo->leaves;
			break;
		case TW_EXEC_FILL:
			if (c->opts.risk_enabled)
				il3_risk_on_fill(&os->risk, oo->security_id, oo->side, e.last_qty,
						 e.leaves_qty == 0);
			oo->leaves = e.leaves_qty;
			oo->used = e.leaves_qty != 0;
			break;
		case TW_EXEC_REJECT:
		case TW_EXEC_CANCELED:
			if (c->opts.risk_enabled)
				il3_risk_on_order_closed(&os->risk, oo->security_id, oo->side, qty);
			oo->used = 0;
			break;
		default:
			break;
		}
	}
	relay_exec(os, &e);
}

static void
on_session_state(void *ctx, enum il3_state from, enum il3_state to, enum il3_event why)
{
	struct order_state *os = ctx;

	(void)from;
	(void)why;
	__atomic_store_n(&os->chain->stats.session_state, (uint64_t)to, __ATOMIC_RELAXED);
	if (to == IL3_STATE_ESTABLISHED)
		count(&os->chain->stats.session_established, 1);
}

static void
cancel_open_orders(struct order_state *os, uint64_t now)
{
	struct tw_chain *c = os->chain;

	if (os->session == NULL || il3_session_state(os->session) != IL3_STATE_ESTABLISHED)
		return;
	for (unsigned int i = 0; i < TW_OPEN_ORDERS; i++) {
		struct open_order *oo = &os->open[i];
		uint64_t request;

		if (!oo->used || oo->cancel_sent)
			continue;
		if (c->opts.risk_enabled && il3_risk_check_modify(&os->risk, true, now) != IL3_RISK_OK)
			return;  /* rate limited: the next poll tries again */
		if (il3_session_send_cancel(os->session, oo->clordid, oo->order_id, oo->security_id,
					    oo->side, now, &request) != 0)
			return;
		oo->cancel_sent = 1;
		count(&c->stats.cancels_sent, 1);
	}
}

static void
on_kill(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct order_state *os = state;
	struct tw_chain *c = os->chain;
	const struct tw_kill *k = ACT_PAYLOAD(msg, const struct tw_kill);
	const bool engaged = msg->size >= sizeof(*k) && k->engaged != 0;

	(void)self;
	if (engaged && !os->killed)
		count(&c->stats.kill_events, 1);
	os->killed = engaged;
	if (c->opts.risk_enabled)
		il3_risk_kill(&os->risk, engaged);
	__atomic_store_n(&c->stats.kill_engaged, engaged ? 1u : 0u, __ATOMIC_RELAXED);
	if (engaged)
		cancel_open_orders(os, order_now(c));
}

static void
on_poll(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct order_state *os = state;
	struct tw_chain *c = os->chain;
	const uint64_t now = ACT_PAYLOAD(msg, const struct tw_tick)->now_ns;

	(void)self;
	if (os->session == NULL)
		return;
	if (!flush_pending_execs(os) && msg->type == TW_MSG_FLUSH) {
		/* shutting down: what cannot be relayed now never will be */
		count(&c->stats.exec_relay_failed, os->pending_count);
		os->pending_count = 0;
	}
	if (msg->type == TW_MSG_FLUSH) {
		os->closing = true;
		if (il3_session_state(os->session) == IL3_STATE_ESTABLISHED)
			il3_session_terminate(os->session, 0, now);
		else
			il3_session_disconnect(os->session);
		return;
	}
	if (il3_session_state(os->session) == IL3_STATE_DISCONNECTED) {
		if (os->closing || now < os->next_connect_ns)
			return;
		os->next_connect_ns = now + RECONNECT_NS;
		count(&c->stats.session_connects, 1);
		if (il3_session_connect(os->session, now, false) != 0)
			return;
	}
	il3_session_step(os->session, now);
	if (os->killed)
		cancel_open_orders(os, now);   /* those the rate limit held back */
}

static const act_handler_fn order_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_ORDER] = on_order,
	[TW_MSG_POLL] = on_poll,
	[TW_MSG_FLUSH] = on_poll,
	[TW_MSG_KILL] = on_kill,
};

/* -- construction ------------------------------------------------------------ */

/* A private stage of the decode group. */
static struct act_actor *
stage_create(struct tw_chain *c, const char *name, const act_handler_fn *handlers,
	     uint32_t count_, void *state, bool group_private)
{
	struct act_actor_opts ao;

	memset(&ao, 0, sizeof(ao));
	ao.name = name;
	ao.handlers = handlers;
	ao.handler_count = count_;
	ao.state = state;
	ao.group = c->decode;
	ao.group_private = group_private;
	return act_actor_create(&ao);
}

static int
channels_create(struct tw_chain *c)
{
	const struct tw_chain_opts *opts = &c->opts;
	struct book_feed_config bcfg;
	struct mdp3_arb_config acfg;

	c->n_channels = opts->n_channels != 0 ? opts->n_channels : 1;
	if (c->n_channels > TW_CHAIN_MAX_CHANNELS)
		return -EINVAL;
	memset(&acfg, 0, sizeof(acfg));
	acfg.wait_packets = opts->gap_wait_packets;
	acfg.wait_ns = (uint64_t)opts->gap_wait_us * 1000u;
	if (acfg.wait_packets == 0 && acfg.wait_ns == 0)
		acfg.wait_packets = MDP3_ARB_DEFAULT_WAIT_PACKETS;
	memset(&bcfg, 0, sizeof(bcfg));
	bcfg.max_instruments = opts->max_instruments;
	bcfg.recovery_packets = opts->recovery_packets;
	bcfg.join = opts->join;
	bcfg.publish = opts->publish;
	bcfg.loss_policy = opts->loss_policy;
	bcfg.arb = acfg;  /* sizes the recovery slots; the feed's own arbiter stays idle */
	bcfg.handler.on_event = on_book_event;
	bcfg.handler.ctx = &c->book_state;
	for (uint32_t i = 0; i < c->n_channels; i++) {
		const struct mdp3_arb_handler ah = {
			.deliver = on_arb_deliver, .loss = on_arb_loss,
			.ctx = &c->arbiter_state.ch[i],
		};

		c->channel_stats[i].channel = opts->n_channels != 0 ? opts->channels[i] : 0;
		c->arbiter_state.ch[i].arbiter = &c->arbiter_state;
		c->arbiter_state.ch[i].index = (uint16_t)i;
		c->arbiter_state.ch[i].arb = mdp3_arb_create(&acfg, &ah);
		c->book_state.feed[i] = book_feed_create(&bcfg);
		if (c->arbiter_state.ch[i].arb == NULL || c->book_state.feed[i] == NULL)
			return -(errno != 0 ? errno : ENOMEM);
	}
	return 0;
}

struct tw_chain *
tw_chain_create(const struct tw_chain_opts *opts)
{
	const struct mdp3_handler wh = {
		.on_message = on_walk_message, .on_skip = on_walk_skip,
	};
	struct act_actor_opts ao;
	struct tw_chain *c = calloc(1, sizeof(*c));
	int saved;

	if (c == NULL)
		return NULL;
	c->opts = *opts;
	c->arbiter_state.chain = c;
	c->decoder_state.chain = c;
	c->book_state.chain = c;
	c->order_state.chain = c;
	if (channels_create(c) != 0) {
		if (errno == 0)
			errno = EINVAL;
		goto fail;
	}
	mdp3_walker_init(&c->decoder_state.walker, NULL, &wh);
	c->decoder_state.walker.handler.ctx = &c->decoder_state;

	if (opts->risk_enabled && il3_risk_init(&c->order_state.risk, &opts->risk) != 0) {
		errno = EINVAL;
		goto fail;
	}
	if (opts->session != NULL) {
		const struct il3_session_handlers h = {
			.on_app_message = on_app_message,
			.on_state = on_session_state,
			.ctx = &c->order_state,
		};

		c->order_state.session = il3_session_create(opts->session, &h);
		if (c->order_state.session == NULL)
			goto fail;
		c->opts.session = NULL;  /* the caller's config need not outlive this call */
	}

	c->decode = act_group_create(&opts->decode_mailbox);
	c->orders = act_group_create(&opts->order_mailbox);
	if (c->decode == NULL || c->orders == NULL)
		goto fail;

	memset(&ao, 0, sizeof(ao));
	ao.name = "order_out";
	ao.handlers = order_handlers;
	ao.handler_count = TW_MSG_COUNT_;
	ao.state = &c->order_state;
	ao.group = c->orders;
	c->order_out = act_actor_create(&ao);
	if (c->order_out == NULL)
		goto fail;

	if (opts->strategy_enabled) {
		const act_handler_fn *sh;
		uint32_t n;

		struct tw_strategy_params sp = opts->strategy;

		/* t2 of the orders, on the clock of the other stamps */
		if (opts->latency != NULL || opts->order_latency != NULL)
			sp.clock = opts->ticks;
		c->strategy = tw_strategy_create(&sp, c->order_out);
		if (c->strategy == NULL)
			goto fail;
		sh = tw_strategy_handlers(&n);
		/* private: only the book (on the decode thread) calls it; order-out's
		 * replies and reports come through the group's mailbox */
		c->signal = stage_create(c, "signal", sh, n, c->strategy, true);
		if (c->signal == NULL)
			goto fail;
	}
	c->book = stage_create(c, "book", book_handlers, TW_MSG_COUNT_, &c->book_state, false);
	c->decoder = stage_create(c, "decoder", decoder_handlers, TW_MSG_COUNT_,
				  &c->decoder_state, true);
	/* private too: captures reach it through the group's mailbox (act_send),
	 * the decode thread directly */
	c->arbiter = stage_create(c, "arbiter", arbiter_handlers, TW_MSG_COUNT_,
				  &c->arbiter_state, true);
	if (c->book == NULL || c->decoder == NULL || c->arbiter == NULL)
		goto fail;

	if (act_actor_start(c->order_out) < 0 ||
	    (c->signal != NULL && act_actor_start(c->signal) < 0) ||
	    act_actor_start(c->book) < 0 || act_actor_start(c->decoder) < 0 ||
	    act_actor_start(c->arbiter) < 0) {
		errno = EINVAL;
		goto fail;
	}
	return c;
fail:
	saved = errno;
	tw_chain_destroy(c);
	errno = saved != 0 ? saved : ENOMEM;
	return NULL;
}

static void
actor_end(struct act_actor *a)
{
	if (a == NULL)
		return;
	act_actor_stop(a);
	act_actor_destroy(a);
}

void
tw_chain_destroy(struct tw_chain *c)
{
	if (c == NULL)
		return;
	actor_end(c->arbiter);
	actor_end(c->decoder);
	actor_end(c->book);
	actor_end(c->signal);
	actor_end(c->order_out);
	act_group_destroy(c->decode);
	act_group_destroy(c->orders);
	il3_session_destroy(c->order_state.session);
	tw_strategy_destroy(c->strategy);
	for (uint32_t i = 0; i < TW_CHAIN_MAX_CHANNELS; i++) {
		mdp3_arb_destroy(c->arbiter_state.ch[i].arb);
		book_feed_destroy(c->book_state.feed[i]);
	}
	free(c);
}

struct act_group *
tw_chain_decode_group(struct tw_chain *c)
{
	return c->decode;
}

struct act_group *
tw_chain_order_group(struct tw_chain *c)
{
	return c->orders;
}

struct act_actor *
tw_chain_feed(struct tw_chain *c)
{
	return c->arbiter;
}

struct act_actor *
tw_chain_book(struct tw_chain *c)
{
	return c->book;
}

uint32_t
tw_chain_channel_stats(const struct tw_chain *c, struct tw_chain_channel_stats *out,
		       uint32_t cap)
{
	for (uint32_t i = 0; i < c->n_channels && i < cap; i++) {
		const uint64_t *src = (const uint64_t *)&c->channel_stats[i];
		uint64_t *dst = (uint64_t *)&out[i];

		/* the struct is 64-bit words after channel (constant) */
		out[i].channel = c->channel_stats[i].channel;
		for (size_t w = 1; w < sizeof(out[i]) / sizeof(uint64_t); w++)
			dst[w] = __atomic_load_n(&src[w], __ATOMIC_RELAXED);
	}
	return c->n_channels;
}

int
tw_chain_rx_direct(struct tw_chain *c, const struct tw_rx *rx)
{
	ACT_STACK_MSG(m, struct tw_rx);

	act_msg_init(&m.hdr, TW_MSG_RX, sizeof(m.body));
	m.body = *rx;
	return act_fast_send(c->arbiter, &m.hdr, NULL, 0);
}

int
tw_chain_order_poll(struct tw_chain *c, uint64_t now_ns)
{
	ACT_STACK_MSG(m, struct tw_tick);
	int rc;

	if (c->order_state.session == NULL)
		return -ENOENT;
	act_msg_init(&m.hdr, TW_MSG_POLL, sizeof(m.body));
	m.body.now_ns = now_ns;
	rc = act_fast_send(c->order_out, &m.hdr, NULL, 0);
	return rc < 0 ? rc : (int)il3_session_state(c->order_state.session);
}

int
tw_chain_order_terminate(struct tw_chain *c, uint64_t now_ns)
{
	ACT_STACK_MSG(m, struct tw_tick);
	int rc;

	if (c->order_state.session == NULL)
		return -ENOENT;
	act_msg_init(&m.hdr, TW_MSG_FLUSH, sizeof(m.body));
	m.body.now_ns = now_ns;
	rc = act_fast_send(c->order_out, &m.hdr, NULL, 0);
	return rc < 0 ? rc : 0;
}

int
tw_chain_kill(struct tw_chain *c, bool engaged)
{
	const struct tw_kill k = { .engaged = engaged ? 1u : 0u };

	return act_send_copy(c->order_out, TW_MSG_KILL, &k, sizeof(k));
}

int
tw_chain_tick(struct tw_chain *c, uint64_t now_ns, bool flush)
{
	ACT_STACK_MSG(m, struct tw_tick);

	act_msg_init(&m.hdr, flush ? TW_MSG_FLUSH : TW_MSG_TICK, sizeof(m.body));
	m.body.now_ns = now_ns;
	return act_fast_send(c->arbiter, &m.hdr, NULL, 0);
}

void
tw_chain_stats(const struct tw_chain *c, struct tw_chain_stats *st)
{
	const uint64_t *src = (const uint64_t *)&c->stats;
	uint64_t *dst = (uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static const char *const exec_kind_names[TW_EXEC_KIND_COUNT_] = {
	"new", "fill", "reject", "canceled", "cancel_reject",
};

const char *
tw_order_reason_name(uint32_t reason)
{
	switch (reason) {
	case TW_ORDER_SENT: return "sent";
	case TW_ORDER_NOT_CONNECTED: return "not_connected";
	case TW_ORDER_SEND_FAILED: return "send_failed";
	case TW_ORDER_TABLE_FULL: return "table_full";
	default:
		return reason < IL3_RISK_REASON_COUNT ?
		       il3_risk_reason_name((enum il3_risk_reason)reason) : "unknown";
	}
}

static int
cmp_instrument(const void *a, const void *b)
{
	const struct book_instrument *x = *(const struct book_instrument *const *)a;
	const struct book_instrument *y = *(const struct book_instrument *const *)b;

	return (x->security_id > y->security_id) - (x->security_id < y->security_id);
}

static void
print_level(FILE *out, const struct book_level *l)
{
	if (l->price == BOOK_PRICE_NONE)
		fprintf(out, " %24s", "-");
	else
		fprintf(out, " %6" PRId64 " @ %-15" PRId64, l->qty, l->price);
}

/* The counters of every channel, added. */
static void
sum_counters(const struct tw_chain *c, struct book_feed_counters *fc,
	     struct mdp3_arb_counters *ac, uint64_t *hash, uint64_t *instruments)
{
	memset(fc, 0, sizeof(*fc));
	memset(ac, 0, sizeof(*ac));
	*hash = 0;
	*instruments = 0;
	for (uint32_t i = 0; i < c->n_channels; i++) {
		const uint64_t *f = (const uint64_t *)book_feed_counters(c->book_state.feed[i]);
		const struct mdp3_arb *arb = c->arbiter_state.ch[i].arb;
		const uint64_t *a = (const uint64_t *)mdp3_arb_counters(arb);

		for (size_t w = 0; w < sizeof(*fc) / sizeof(uint64_t); w++)
			((uint64_t *)fc)[w] += f[w];
		for (size_t w = 0; w < sizeof(*ac) / sizeof(uint64_t); w++)
			((uint64_t *)ac)[w] += a[w];
		*hash += book_feed_hash(c->book_state.feed[i]);
		*instruments += book_feed_instrument_count(c->book_state.feed[i]);
	}
}

static void
print_channels(const struct tw_chain *c, FILE *out)
{
	for (uint32_t i = 0; i < c->n_channels; i++) {
		const struct book_feed *feed = c->book_state.feed[i];
		const struct book_feed_counters *fc = book_feed_counters(feed);
		const struct mdp3_arb_counters *ac = mdp3_arb_counters(c->arbiter_state.ch[i].arb);
		const char *p = "channel";
		const uint32_t id = c->channel_stats[i].channel;

		fprintf(out, "%s.%u.rx_packets %" PRIu64 "\n", p, id,
			__atomic_load_n(&c->channel_stats[i].rx_packets, __ATOMIC_RELAXED));
		fprintf(out, "%s.%u.arb.packets_a %" PRIu64 "\n", p, id, ac->packets[0]);
		fprintf(out, "%s.%u.arb.packets_b %" PRIu64 "\n", p, id, ac->packets[1]);
		fprintf(out, "%s.%u.arb.duplicates %" PRIu64 "\n", p, id,
			ac->duplicates[0] + ac->duplicates[1]);
		fprintf(out, "%s.%u.arb.gaps %" PRIu64 "\n", p, id, ac->gaps);
		fprintf(out, "%s.%u.arb.lost_packets %" PRIu64 "\n", p, id, ac->lost_packets);
		fprintf(out, "%s.%u.book.packets_applied %" PRIu64 "\n", p, id,
			fc->packets_applied);
		fprintf(out, "%s.%u.book.messages %" PRIu64 "\n", p, id, fc->messages);
		fprintf(out, "%s.%u.book.rpt_seq_gaps %" PRIu64 "\n", p, id, fc->rpt_seq_gaps);
		fprintf(out, "%s.%u.book.stale_books %" PRIu64 "\n", p, id, fc->stale_books);
		fprintf(out, "%s.%u.book.recoveries %" PRIu64 "\n", p, id, fc->recoveries);
		fprintf(out, "%s.%u.book.snapshots %" PRIu64 "\n", p, id, fc->snapshots);
		fprintf(out, "%s.%u.book.instruments %" PRIu32 "\n", p, id,
			book_feed_instrument_count(feed));
		fprintf(out, "%s.%u.book.hash 0x%016" PRIx64 "\n", p, id, book_feed_hash(feed));
	}
}

void
tw_chain_print(const struct tw_chain *c, FILE *out, uint32_t max_books)
{
	struct book_feed_counters fcs;
	struct mdp3_arb_counters acs;
	const struct book_feed_counters *fc = &fcs;
	const struct mdp3_arb_counters *ac = &acs;
	struct tw_chain_stats st;
	uint64_t hash, instruments, cap = 0, n = 0;
	const struct book_instrument **list;

	sum_counters(c, &fcs, &acs, &hash, &instruments);
	tw_chain_stats(c, &st);
	fprintf(out, "== counters\n");
	fprintf(out, "chain.rx_packets %" PRIu64 "\n", st.rx_packets);
	fprintf(out, "chain.rx_bytes %" PRIu64 "\n", st.rx_bytes);
	fprintf(out, "chain.delivered %" PRIu64 "\n", st.verdict[0]);
	fprintf(out, "chain.held %" PRIu64 "\n", st.verdict[1]);
	fprintf(out, "chain.duplicates %" PRIu64 "\n", st.verdict[2]);
	fprintf(out, "chain.rejected %" PRIu64 "\n", st.verdict[3]);
	fprintf(out, "chain.dropped %" PRIu64 "\n", st.verdict[4]);
	fprintf(out, "chain.feed_errors %" PRIu64 "\n", st.feed_errors);
	fprintf(out, "chain.unknown_channel %" PRIu64 "\n", st.unknown_channel);
	fprintf(out, "chain.snapshots_skipped %" PRIu64 "\n", st.snapshots_skipped);
	fprintf(out, "chain.decoded %" PRIu64 "\n", st.decoded);
	fprintf(out, "chain.malformed %" PRIu64 "\n", st.malformed);
	fprintf(out, "chain.events %" PRIu64 "\n", st.events);
	fprintf(out, "chain.tops %" PRIu64 "\n", st.tops);
	fprintf(out, "chain.signal_errors %" PRIu64 "\n", st.signal_errors);
	fprintf(out, "chain.orders_written %" PRIu64 "\n", st.orders_written);
	fprintf(out, "arb.packets_a %" PRIu64 "\n", ac->packets[0]);
	fprintf(out, "arb.packets_b %" PRIu64 "\n", ac->packets[1]);
	fprintf(out, "arb.accepted %" PRIu64 "\n", ac->accepted[0] + ac->accepted[1]);
	fprintf(out, "arb.duplicates %" PRIu64 "\n", ac->duplicates[0] + ac->duplicates[1]);
	fprintf(out, "arb.gaps %" PRIu64 "\n", ac->gaps);
	fprintf(out, "arb.lost_packets %" PRIu64 "\n", ac->lost_packets);
	fprintf(out, "book.packets_applied %" PRIu64 "\n", fc->packets_applied);
	fprintf(out, "book.malformed %" PRIu64 "\n", fc->malformed);
	fprintf(out, "book.messages %" PRIu64 "\n", fc->messages);
	fprintf(out, "book.messages_ignored %" PRIu64 "\n", fc->messages_ignored);
	fprintf(out, "book.messages_unknown %" PRIu64 "\n", fc->messages_unknown);
	fprintf(out, "book.entries %" PRIu64 "\n", fc->entries);
	fprintf(out, "book.book_updates %" PRIu64 "\n", fc->book_updates);
	fprintf(out, "book.trades %" PRIu64 "\n", fc->trades);
	fprintf(out, "book.rpt_seq_gaps %" PRIu64 "\n", fc->rpt_seq_gaps);
	fprintf(out, "book.stale_books %" PRIu64 "\n", fc->stale_books);
	fprintf(out, "book.stale_entries %" PRIu64 "\n", fc->stale_entries);
	fprintf(out, "book.stale_marked_on_loss %" PRIu64 "\n", fc->stale_marked_on_loss);
	fprintf(out, "book.recoveries %" PRIu64 "\n", fc->recoveries);
	fprintf(out, "book.snapshots %" PRIu64 "\n", fc->snapshots);
	fprintf(out, "book.declared_losses %" PRIu64 "\n", fc->declared_losses);
	fprintf(out, "book.events %" PRIu64 "\n", fc->events);
	fprintf(out, "book.instruments %" PRIu64 "\n", instruments);
	fprintf(out, "book.hash 0x%016" PRIx64 "\n", hash);
	print_channels(c, out);
	if (c->strategy != NULL) {
		struct tw_strategy_stats ss;

		tw_strategy_stats(c->strategy, &ss);
		fprintf(out, "strategy.events %" PRIu64 "\n", ss.events);
		fprintf(out, "strategy.considered %" PRIu64 "\n", ss.considered);
		fprintf(out, "strategy.orders %" PRIu64 "\n", ss.orders);
		fprintf(out, "strategy.missed %" PRIu64 "\n", ss.missed);
		fprintf(out, "strategy.capped %" PRIu64 "\n", ss.capped);
		fprintf(out, "strategy.replies_sent %" PRIu64 "\n", ss.replies_sent);
		fprintf(out, "strategy.replies_refused %" PRIu64 "\n", ss.replies_refused);
		for (unsigned int i = 0; i < TW_ORDER_REASON_MAX_; i++)
			if (ss.refused[i] != 0)
				fprintf(out, "strategy.refused.%s %" PRIu64 "\n",
					tw_order_reason_name(i), ss.refused[i]);
		for (unsigned int i = 0; i < TW_EXEC_KIND_COUNT_; i++)
			fprintf(out, "strategy.exec.%s %" PRIu64 "\n", exec_kind_names[i],
				ss.exec[i]);
		fprintf(out, "strategy.filled_qty %" PRIu64 "\n", ss.filled_qty);
	}
	fprintf(out, "order.in %" PRIu64 "\n", st.orders_in);
	fprintf(out, "order.sent %" PRIu64 "\n", st.orders_sent);
	fprintf(out, "order.refused %" PRIu64 "\n", st.orders_refused);
	for (unsigned int i = 0; i < TW_ORDER_REASON_MAX_; i++)
		if (st.refused[i] != 0)
			fprintf(out, "order.refused.%s %" PRIu64 "\n", tw_order_reason_name(i),
				st.refused[i]);
	fprintf(out, "order.replies_failed %" PRIu64 "\n", st.replies_failed);
	if (c->order_state.session != NULL) {
		const struct il3_session_counters *sc = il3_session_counters(c->order_state.session);

		for (unsigned int i = 0; i < TW_EXEC_KIND_COUNT_; i++)
			fprintf(out, "order.exec.%s %" PRIu64 "\n", exec_kind_names[i], st.exec[i]);
		fprintf(out, "order.exec_other %" PRIu64 "\n", st.exec_other);
		fprintf(out, "order.exec_relay_failed %" PRIu64 "\n", st.exec_relay_failed);
		fprintf(out, "order.cancels_sent %" PRIu64 "\n", st.cancels_sent);
		fprintf(out, "order.kill_events %" PRIu64 "\n", st.kill_events);
		fprintf(out, "session.state %s\n", il3_state_name(
				il3_session_state(c->order_state.session)));
		fprintf(out, "session.connects %" PRIu64 "\n", st.session_connects);
		fprintf(out, "session.established %" PRIu64 "\n", st.session_established);
		fprintf(out, "session.app_out %" PRIu64 "\n", sc->app_out);
		fprintf(out, "session.app_in %" PRIu64 "\n", sc->app_in);
	}
	if (max_books == 0)
		return;
	for (uint32_t i = 0; i < c->n_channels; i++)
		cap += book_feed_capacity(c->book_state.feed[i]);
	list = calloc(cap ? cap : 1, sizeof(*list));
	if (list == NULL)
		return;
	for (uint32_t i = 0; i < c->n_channels; i++)
		for (uint32_t s = 0; s < book_feed_capacity(c->book_state.feed[i]); s++) {
			const struct book_instrument *in =
				book_feed_instrument(c->book_state.feed[i], s);

			if (in != NULL)
				list[n++] = in;
		}
	qsort(list, n, sizeof(*list), cmp_instrument);
	fprintf(out, "== books (%" PRIu64 " of %" PRIu64 ")\n", n < max_books ? n : max_books, n);
	for (uint64_t i = 0; i < n && i < max_books; i++) {
		const struct book_instrument *in = list[i];

		fprintf(out, "book %" PRId32 " %s state=%s rpt_seq=%" PRIu32 " hash=0x%016" PRIx64
			"\n", in->security_id, in->symbol[0] ? in->symbol : "-",
			book_state_name((enum book_state)in->state), in->rpt_seq,
			book_instrument_hash(in));
		for (unsigned int l = 0; l < in->depth && l < 5; l++) {
			fprintf(out, "  %u", l + 1);
			print_level(out, &in->bid[l]);
			fprintf(out, " |");
			print_level(out, &in->ask[l]);
			fprintf(out, "\n");
		}
	}
	free(list);
}
