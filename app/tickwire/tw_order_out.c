/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The order-out actor of the chain (its own group, on the order-out lcore):
 * pre-trade risk, the iLink 3 session or the order frames, the open orders
 * and the kill switch. See tw_chain.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include "tw_chain_pvt.h"

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

/* An order or cancel frame: Ethernet, IPv4, UDP to TW_ORDER_UDP_PORT and
 * the 40-byte payload of tw_msg.h. */
static uint32_t
wire_frame(uint8_t *f, uint32_t cap, const char magic[4], uint32_t client_order_id,
	   int32_t security_id, uint8_t side, uint8_t why, uint32_t qty, uint32_t seq,
	   int64_t price)
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
	memcpy(p, magic, 4);
	put_le(p + 4, client_order_id, 4);
	put_le(p + 8, (uint32_t)security_id, 4);
	p[12] = side;
	p[13] = why;
	put_le(p + 16, qty, 4);
	put_le(p + 20, seq, 4);
	put_le(p + 24, (uint64_t)price, 8);
	return len;
}

uint32_t
tw_order_frame(const struct tw_order *o, uint8_t *f, uint32_t cap)
{
	return wire_frame(f, cap, TW_ORDER_WIRE_MAGIC, o->client_order_id, o->security_id,
			  o->side, 0, o->qty, o->trigger_seq, o->price);
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

/* Halted (stale means stop): the instrument is halted, or the order was
 * decided before its last halt (triggered at or before the cut). */
static bool
halted(struct order_state *os, const struct tw_order *o)
{
	const struct halt_entry *e;

	if (os->halts->used == 0)
		return false;
	e = halt_find(os->halts, o->security_id, false);
	return e != NULL && (e->halted || o->trigger_seq <= e->cut_seq);
}

/*
 * Risk, then the session or the frame sink: the same checks, limits and
 * open-order table whatever the output. Without a session an order is open
 * from the moment its frame is written until a cancel frame closes it (no
 * exchange answers it). @return enum tw_order_reason.
 */
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
	struct open_order *slot;
	enum il3_risk_reason r;

	/* the flag the kill switch sets at once, ahead of the orders queued in
	 * this mailbox before its TW_MSG_KILL (which cancels the open ones) */
	if (os->killed || atomic_load_explicit(&os->kill_now, memory_order_acquire))
		return TW_ORDER_KILL_SWITCH;
	if (halted(os, o))
		return TW_ORDER_STALE_BOOK;
	if ((slot = open_free_slot(os)) == NULL)
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
		*clordid = o->client_order_id;
	} else if (il3_session_state(os->session) != IL3_STATE_ESTABLISHED ||
		   il3_session_send_new_order(os->session, &io, now, clordid) != 0) {
		const uint32_t why = il3_session_state(os->session) != IL3_STATE_ESTABLISHED ?
				     TW_ORDER_NOT_CONNECTED : TW_ORDER_SEND_FAILED;

		/* nothing was written: release what risk counted as open */
		if (c->opts.risk_enabled)
			il3_risk_on_order_closed(&os->risk, io.security_id, io.side, io.quantity);
		return why;
	} else {
		record_order(c, o);
		count(&c->stats.orders_sent, 1);
		if (c->opts.sink_with_session && c->opts.order_sink != NULL) {
			uint8_t frame[128];
			uint32_t len = tw_order_frame(o, frame, sizeof(frame));

			if (len != 0)
				c->opts.order_sink(c->opts.order_sink_ctx, frame, len);
		}
	}
	*slot = (struct open_order){
		.clordid = *clordid, .client_order_id = o->client_order_id,
		.security_id = o->security_id, .leaves = o->qty, .price = o->price,
		.side = io.side, .used = 1,
	};
	return TW_ORDER_SENT;
}

/*
 * A message for the strategy (TW_MSG_ORDER_REPLY, TW_MSG_EXEC) on the
 * decode group's control queue: it runs ahead of the market data queued in
 * that group's mailbox, in the order order-out sends, and never finds the
 * queue full. Only an exhausted message pool refuses it (counted in
 * @p failed).
 */
static void
to_strategy(struct tw_chain *c, uint32_t type, const void *body, uint32_t size,
	    uint64_t *failed)
{
	if (c->signal == NULL || act_send_control(c->signal, type, body, size) != 0)
		count(failed, 1);
}

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
	to_strategy(c, TW_MSG_ORDER_REPLY, &reply, sizeof(reply), &c->stats.replies_failed);
}

static uint64_t
clordid_number(const char *chars, size_t length)
{
	uint64_t v = 0;

	for (size_t i = 0; i < length && chars[i] >= '0' && chars[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(chars[i] - '0');
	return v;
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
	to_strategy(c, TW_MSG_EXEC, &e, sizeof(e), &c->stats.exec_relay_failed);
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

/*
 * Cancel one open order: an OrderCancelRequest (closed when the exchange
 * confirms), or without a session a cancel frame ("TWX1"), which closes it
 * at once. @return false when it must wait (session not established, rate
 * limit, session refused): the kill switch's poll tries again.
 */
static bool
cancel_order(struct order_state *os, struct open_order *oo, uint8_t why, uint64_t now)
{
	struct tw_chain *c = os->chain;
	uint64_t request;

	if (c->opts.risk_enabled && il3_risk_check_modify(&os->risk, true, now) != IL3_RISK_OK)
		return false;
	if (os->session == NULL) {
		uint8_t frame[128];
		uint32_t len = wire_frame(frame, sizeof(frame), TW_CANCEL_WIRE_MAGIC,
					  oo->client_order_id, oo->security_id,
					  oo->side == IL3_SIDE_REQ_SELL ? TW_ORDER_SELL : TW_ORDER_BUY,
					  why, oo->leaves, 0, oo->price);

		if (len != 0 && c->opts.order_sink != NULL)
			c->opts.order_sink(c->opts.order_sink_ctx, frame, len);
		if (c->opts.risk_enabled)
			il3_risk_on_order_closed(&os->risk, oo->security_id, oo->side, oo->leaves);
		oo->used = 0;
	} else {
		if (il3_session_state(os->session) != IL3_STATE_ESTABLISHED ||
		    il3_session_send_cancel(os->session, oo->clordid, oo->order_id,
					    oo->security_id, oo->side, now, &request) != 0)
			return false;
		oo->cancel_sent = 1;
		if (c->opts.sink_with_session && c->opts.order_sink != NULL) {
			uint8_t frame[128];
			uint32_t len = wire_frame(frame, sizeof(frame), TW_CANCEL_WIRE_MAGIC,
						  oo->client_order_id, oo->security_id,
						  oo->side == IL3_SIDE_REQ_SELL ? TW_ORDER_SELL :
						  TW_ORDER_BUY, why, oo->leaves, 0, oo->price);

			if (len != 0)
				c->opts.order_sink(c->opts.order_sink_ctx, frame, len);
		}
	}
	count(&c->stats.cancels_sent, 1);
	return true;
}

/* Cancel the open orders of @p security_id (0: all) not cancelled yet. */
static void
cancel_open_orders(struct order_state *os, int32_t security_id, uint8_t why, uint64_t now)
{
	for (unsigned int i = 0; i < TW_OPEN_ORDERS; i++) {
		struct open_order *oo = &os->open[i];

		if (!oo->used || oo->cancel_sent ||
		    (security_id != 0 && oo->security_id != security_id))
			continue;
		if (!cancel_order(os, oo, why, now))
			return;  /* the next poll (kill switch) tries again */
		if (security_id != 0)
			count(&os->chain->stats.cancels_on_stale, 1);
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
	if (!engaged)
		atomic_store_explicit(&os->kill_now, false, memory_order_release);
	if (c->opts.risk_enabled)
		il3_risk_kill(&os->risk, engaged);
	__atomic_store_n(&c->stats.kill_engaged, engaged ? 1u : 0u, __ATOMIC_RELAXED);
	if (engaged)
		cancel_open_orders(os, 0, TW_STATE_NONE, order_now(c));
}

/* TW_MSG_HALT (decode group, control queue): stale means stop. */
static void
on_halt(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct order_state *os = state;
	const struct tw_halt_msg *h = ACT_PAYLOAD(msg, const struct tw_halt_msg);
	struct halt_entry *e;

	(void)self;
	if (msg->size < sizeof(*h))
		return;
	e = halt_find(os->halts, h->security_id, true);
	if (e == NULL) {
		count(&os->chain->stats.halt_table_full, 1);
	} else {
		e->halted = h->halted;
		if (h->halted) {
			e->why = h->why;
			e->cut_seq = h->cut_seq;
		}
	}
	if (h->halted && h->cancel)
		cancel_open_orders(os, h->security_id, h->why, order_now(os->chain));
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
		cancel_open_orders(os, 0, TW_STATE_NONE, now);   /* those held back */
}

const act_handler_fn tw_order_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_ORDER] = on_order,
	[TW_MSG_POLL] = on_poll,
	[TW_MSG_FLUSH] = on_poll,
	[TW_MSG_KILL] = on_kill,
	[TW_MSG_HALT] = on_halt,
};

/* -- setup -------------------------------------------------------------------- */

int
tw_order_out_init(struct tw_chain *c)
{
	const struct tw_chain_opts *opts = &c->opts;

	c->order_state.chain = c;
	if (opts->risk_enabled && il3_risk_init(&c->order_state.risk, &opts->risk) != 0) {
		errno = EINVAL;
		return -1;
	}
	if (opts->session != NULL) {
		const struct il3_session_handlers h = {
			.on_app_message = on_app_message,
			.on_state = on_session_state,
			.ctx = &c->order_state,
		};

		c->order_state.session = il3_session_create(opts->session, &h);
		if (c->order_state.session == NULL)
			return -1;
		c->opts.session = NULL;  /* the caller's config need not outlive this call */
	}
	return 0;
}

void
tw_order_out_fini(struct tw_chain *c)
{
	il3_session_destroy(c->order_state.session);
	c->order_state.session = NULL;
}

/* -- calls of the outside ---------------------------------------------------- */

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

	/* engaged: effective for the next order order-out takes, before the
	 * message reaches it; released: once order-out has run the message */
	if (engaged)
		atomic_store_explicit(&c->order_state.kill_now, true, memory_order_release);
	return act_send_copy(c->order_out, TW_MSG_KILL, &k, sizeof(k));
}

const char *
tw_order_reason_name(uint32_t reason)
{
	switch (reason) {
	case TW_ORDER_SENT: return "sent";
	case TW_ORDER_NOT_CONNECTED: return "not_connected";
	case TW_ORDER_SEND_FAILED: return "send_failed";
	case TW_ORDER_TABLE_FULL: return "table_full";
	case TW_ORDER_STALE_BOOK: return "stale_book";
	default:
		return reason < IL3_RISK_REASON_COUNT ?
		       il3_risk_reason_name((enum il3_risk_reason)reason) : "unknown";
	}
}
