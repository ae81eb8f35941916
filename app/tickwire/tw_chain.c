/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The decode group of the chain (arbiter -> decoder -> book -> signal on one
 * thread) over app/feed's path of each channel, and the chain's
 * construction; shared by the DPDK appliance and the library-only replay.
 * See tw_chain.h.
 *
 * Every stage runs the function of app/feed that tickwire-book and
 * bench_feed call directly (tw_feed.h); the chain only puts an actor around
 * each, and its hops (struct tw_feed_hops) are act_fast_send calls to the
 * next stage's actor along an edge declared when the group is built
 * (opts.hops: TW_HOPS_EDGE; or the dynamic act_fast_send, or no runtime at
 * all: the next stage's function).
 *
 * Cost: per datagram one hop to the decoder per in-sequence packet (held
 * packets released by it included), per packet one hop from the decoder to
 * the book (a batch of its decoded messages; one more per TW_FEED_BATCH
 * messages beyond the first batch), and one per top to the signal. Nothing allocates
 * after tw_chain_create().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "book.h"
#include "mdp3.h"
#include "tw_chain_pvt.h"

_Static_assert(TW_PRICE_NONE == BOOK_PRICE_NONE, "tw_query_reply's empty level is lib/book's");

/* -- stage messages (TW_MSG_PACKET ... TW_MSG_BOOK_DIRECT) ------------------ */

/* decoder -> book: decoded messages of a packet (the decoder's stack) */
struct stage_batch {
	const struct tw_feed_batch *batch;
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

static inline uint16_t
channel_of(const struct tw_feed *f)
{
	return (uint16_t)(uintptr_t)f->user;
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
	const struct mdp3_arb_counters *ac = mdp3_arb_counters(c->path[index]->arb);
	struct tw_chain_channel_stats *cs = &c->channel_stats[index];

	mirror(&cs->packets_a, ac->packets[MDP3_FEED_A]);
	mirror(&cs->packets_b, ac->packets[MDP3_FEED_B]);
	mirror(&cs->duplicates, ac->duplicates[MDP3_FEED_A] + ac->duplicates[MDP3_FEED_B]);
	mirror(&cs->gaps, ac->gaps);
	mirror(&cs->lost_packets, ac->lost_packets);
}

static void
mirror_book(struct tw_chain *c, uint32_t index)
{
	const struct book_feed *feed = c->path[index]->book;
	const struct book_feed_counters *fc = book_feed_counters(feed);
	struct tw_chain_channel_stats *cs = &c->channel_stats[index];

	mirror(&cs->packets_applied, fc->packets_applied);
	mirror(&cs->rpt_seq_gaps, fc->rpt_seq_gaps);
	mirror(&cs->stale_books, fc->stale_books);
	mirror(&cs->recoveries, fc->recoveries);
	mirror(&cs->snapshots, fc->snapshots);
	mirror(&cs->instruments, book_feed_instrument_count(feed));
	mirror(&cs->mbo_orders_added, fc->mbo_new);
	mirror(&cs->mbo_stale_books, fc->mbo_stale_books);
	mirror(&cs->mbo_snapshots, fc->mbo_snapshots);
	mirror(&cs->mbo_checks, fc->mbo_checks);
	mirror(&cs->mbo_mismatches, fc->mbo_mismatches);
	mirror(&cs->mbo_level_diffs, fc->mbo_level_diffs);
	mirror(&cs->mbo_unknown_orders, fc->mbo_unknown_orders);
	mirror(&cs->mbo_bad_entries, fc->mbo_bad_entries);
	mirror(&cs->mbo_books_refused, fc->mbo_books_refused);
	mirror(&cs->mbo_order_overflows, fc->mbo_order_overflows);
	mirror(&cs->mbo_level_overflows, fc->mbo_level_overflows);
	mirror(&cs->mbo_table_grows, fc->mbo_table_grows);
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

static inline void
rx_context_of(const struct tw_chain *c, const struct tw_rx *rx, uint32_t qdepth,
	      struct rx_context *out)
{
	out->t0 = rx->t0;
	/* Instrumentation only: through the mailbox, the runtime's depth at
	 * enqueue; through an rte_ring or a direct call, what the sender saw. */
	out->qlen = qdepth != 0 ? qdepth : rx->qlen;
	out->rxq = rx->rxq;
	out->rx_flags = rx->rx_flags;
	out->burst_idx = rx->burst_idx;
	out->wait = wait_of(c, rx->t0);
}

/* -- book stage --------------------------------------------------------------- */

static void
book_begin(struct book_stage *bs, const struct stage_packet *p)
{
	bs->cur_channel = p->channel;
	bs->cur = p->rx;
	if (bs->cur.burst_idx > UINT8_MAX)
		bs->cur.burst_idx = UINT8_MAX;
	bs->cur_event_idx = 0;
	bs->cur_msg_idx = 0;
	if (bs->chain->opts.latency != NULL)
		bs->first_record = bs->chain->opts.latency->count;
	bs->open = bs->chain->path[p->channel];
	bs->watch[p->channel].last_seq = p->arb.seq;
	tw_feed_book_begin(bs->open, &p->arb);
}

static void book_end(struct book_stage *bs, int walk_rc);

/* The batch's packet is the decoder's stage_packet (hop_packet). */
static void
book_batch(struct book_stage *bs, const struct tw_feed_batch *b)
{
	if (b->first)
		book_begin(bs, (const struct stage_packet *)
			   ((const char *)b->packet - offsetof(struct stage_packet, arb)));
	for (uint16_t i = 0; i < b->n; i++) {
		tw_feed_book_message(bs->open, &b->msg[i]);
		bs->cur_msg_idx++;
	}
	if (b->last)
		book_end(bs, b->walk_rc);
}

static void
book_end(struct book_stage *bs, int walk_rc)
{
	struct tw_lat_recorder *lat = bs->chain->opts.latency;
	const uint16_t n_msgs = bs->cur_msg_idx;

	/* what the end of the packet publishes belongs to its last message */
	if (n_msgs != 0)
		bs->cur_msg_idx = (uint16_t)(n_msgs - 1);
	tw_feed_book_end(bs->open, walk_rc);
	bs->open = NULL;
	bs->cur.t0 = 0;
	/* the packet's message count, now known, into its records */
	if (lat != NULL)
		for (uint64_t i = bs->first_record; i < lat->count; i++)
			lat->records[i].n_msgs = n_msgs;
}

static void
book_loss(struct book_stage *bs, uint16_t channel, uint32_t first_seq, uint32_t count_,
	  uint64_t now_ns)
{
	bs->cur_channel = channel;
	bs->cur.t0 = 0;
	bs->in_loss = true;
	tw_feed_book_loss(bs->chain->path[channel], first_seq, count_, now_ns);
	bs->in_loss = false;
}

static void
book_direct(struct book_stage *bs, const struct tw_rx *rx, uint16_t channel, uint32_t qdepth)
{
	struct tw_chain *c = bs->chain;

	bs->cur_channel = channel;
	rx_context_of(c, rx, qdepth, &bs->cur);
	if (bs->cur.burst_idx > UINT8_MAX)
		bs->cur.burst_idx = UINT8_MAX;
	bs->cur_event_idx = 0;
	bs->cur_msg_idx = 0;
	if (tw_feed_book_stream(c->path[channel], (enum mdp3_stream)rx->stream,
				rx->side == TW_SIDE_B ? MDP3_FEED_B : MDP3_FEED_A, rx->payload,
				rx->length, rx->rx_ns) < 0)
		count(&c->stats.feed_errors, 1);
	bs->cur.t0 = 0;
}

static void
book_flush(struct book_stage *bs, uint64_t now_ns)
{
	bs->cur.t0 = 0;
	for (uint32_t i = 0; i < bs->chain->n_channels; i++) {
		bs->cur_channel = (uint16_t)i;
		tw_feed_book_publish(bs->chain->path[i], now_ns);
		mirror_book(bs->chain, i);
	}
}

/* -- stale means stop (tw_chain.h, dpdk-config/README.md) ------------------- */

/* Tell order-out (its control queue: ahead of the orders queued there). */
static void
halt_notice(struct tw_chain *c, int32_t id, bool halted, uint8_t why, uint32_t cut_seq)
{
	const struct tw_halt_msg h = {
		.security_id = id, .halted = halted, .why = why, .cut_seq = cut_seq,
		.cancel = halted && c->opts.cancel_on_stale,
	};

	if (act_send_control(c->order_out, TW_MSG_HALT, &h, sizeof(h)) != 0)
		count(&c->stats.cancel_failed, 1);
	else if (h.cancel)
		count(&c->stats.cancel_requests, 1);
}

static void
resume(struct book_stage *bs, struct halt_entry *e)
{
	struct tw_chain *c = bs->chain;

	e->halted = 0;
	bs->n_halted--;
	mirror(&c->stats.halted, bs->n_halted);
	if (e->alarmed) {
		e->alarmed = 0;
		mirror(&c->stats.alarm_active, c->stats.alarm_active - 1);
	}
	count(&c->stats.resumes, 1);
	halt_notice(c, e->security_id, false, TW_STATE_NONE, 0);
}

/*
 * A change of an instrument's state (book stage, decode thread): halt or
 * resume it, then tell the signal (TW_TOP_STATE). @p in: its book (NULL
 * when unknown); @p seq: the channel's MsgSeqNum at the change.
 */
static void
state_change(struct book_stage *bs, int32_t id, uint8_t why, const struct book_instrument *in,
	     uint32_t seq)
{
	struct tw_chain *c = bs->chain;
	const bool stop = why == TW_STATE_GAP || why == TW_STATE_LOSS || why == TW_STATE_RESET ||
			  why == TW_STATE_SILENT;
	const bool ok = in != NULL && in->state == BOOK_STATE_OK &&
			!bs->watch[bs->cur_channel].silent;
	struct halt_entry *e = halt_find(bs->halts, id, stop);
	ACT_STACK_MSG(m, struct tw_top);
	struct book_top top;

	if (stop && e == NULL) {
		count(&c->stats.halt_table_full, 1);
	} else if (stop && !e->halted) {
		*e = (struct halt_entry){ .security_id = id, .halted = 1, .why = why };
		bs->n_halted++;
		count(&c->stats.halts, 1);
		mirror(&c->stats.halted, bs->n_halted);
		halt_notice(c, id, true, why, seq);
	}
	/* a reset leaves a valid (empty) book: trading on it may go on at
	 * once, orders decided before it are refused by the cut */
	if (e != NULL && e->halted && ok && c->opts.resume && why != TW_STATE_GAP &&
	    why != TW_STATE_LOSS && why != TW_STATE_SILENT)
		resume(bs, e);
	if (c->signal == NULL)
		return;
	act_msg_init(&m.hdr, TW_MSG_TOP, sizeof(m.body));
	memset(&m.body, 0, sizeof(m.body));
	m.body.security_id = id;
	m.body.kind = TW_TOP_STATE;
	m.body.ok = ok && !(e != NULL && e->halted);
	m.body.why = why;
	m.body.msg_seq_num = seq;
	if (in != NULL) {
		top = in->published;
		m.body.bid_price = top.bid_price;
		m.body.bid_qty = top.bid_qty;
		m.body.ask_price = top.ask_price;
		m.body.ask_qty = top.ask_qty;
		m.body.tick = in->tick;
	}
	if (c->opts.hops == TW_HOPS_DIRECT)
		c->signal_handlers[TW_MSG_TOP](c->signal, c->strategy, &m.hdr);
	else if (stage_send(c, c->signal, &m.hdr, NULL, 0) < 0)
		count(&c->stats.signal_errors, 1);
	count(&c->stats.state_events, 1);
}

/* Every instrument of channel @p index: state_change(). */
static void
channel_change(struct book_stage *bs, uint32_t index, uint8_t why)
{
	const struct book_feed *feed = bs->chain->path[index]->book;
	const uint32_t cap = book_feed_capacity(feed);

	bs->cur_channel = (uint16_t)index;
	for (uint32_t i = 0; i < cap; i++) {
		const struct book_instrument *in = book_feed_instrument(feed, i);

		if (in == NULL)
			continue;
		/* alive: only books that are valid resume; stale ones wait for
		 * their snapshot */
		if (why == TW_STATE_ALIVE && in->state != BOOK_STATE_OK)
			continue;
		state_change(bs, in->security_id, why, in, bs->watch[index].last_seq);
	}
}

/*
 * At every tick (book stage): channels silent or alive again, and the
 * alarm of halts older than max_stale_ns. One clock: the tick's.
 */
static void
book_watch(struct book_stage *bs, uint64_t now_ns)
{
	struct tw_chain *c = bs->chain;

	for (uint32_t i = 0; i < c->n_channels; i++) {
		const struct mdp3_arb_counters *ac = mdp3_arb_counters(c->path[i]->arb);
		const uint64_t n = ac->packets[MDP3_FEED_A] + ac->packets[MDP3_FEED_B];
		struct channel_watch *w = &bs->watch[i];

		if (n != w->packets) {
			w->packets = n;
			w->alive_ns = now_ns;
			if (w->silent) {
				w->silent = false;
				mirror(&c->channel_stats[i].silent, 0);
				channel_change(bs, i, TW_STATE_ALIVE);
			}
		} else if (c->opts.silence_ns != 0 && !w->silent && w->alive_ns != 0 &&
			   now_ns - w->alive_ns > c->opts.silence_ns) {
			w->silent = true;
			mirror(&c->channel_stats[i].silent, 1);
			count(&c->channel_stats[i].silences, 1);
			count(&c->stats.silences, 1);
			channel_change(bs, i, TW_STATE_SILENT);
		}
	}
	if (bs->n_halted == 0 || c->opts.max_stale_ns == 0 ||
	    now_ns - bs->last_scan_ns < UINT64_C(10000000))
		return;
	bs->last_scan_ns = now_ns;
	for (uint32_t i = 0; i < TW_HALT_SLOTS; i++) {
		struct halt_entry *e = &bs->halts->e[i];

		if (!e->halted || e->alarmed)
			continue;
		if (e->since_ns == 0) {
			e->since_ns = now_ns;
			continue;
		}
		if (now_ns - e->since_ns <= c->opts.max_stale_ns)
			continue;
		e->alarmed = 1;
		count(&c->stats.alarms, 1);
		mirror(&c->stats.alarm_active, c->stats.alarm_active + 1);
		if (c->opts.on_alarm != NULL)
			c->opts.on_alarm(c->opts.alarm_ctx, e->security_id, e->why,
					 now_ns - e->since_ns);
		if (c->opts.kill_on_alarm)
			tw_chain_kill(c, true);
	}
}

static void
on_book_tick(struct act_actor *self, void *state, struct act_msg *msg)
{
	(void)self;
	book_watch(state, ACT_PAYLOAD(msg, const struct tw_tick)->now_ns);
}

/* -- queue joins (market by order) ---------------------------------------------- */

static struct queue_join *
join_find(struct book_stage *bs, int32_t security_id)
{
	for (uint32_t i = 0; i < bs->n_joins; i++)
		if (bs->joins[i].security_id == security_id)
			return &bs->joins[i];
	return NULL;
}

/* The signal joined the queue at (side, price) of an instrument of the
 * current channel: note where, behind every order resting there now. */
static void
queue_join(struct book_stage *bs, const struct tw_queue_join *j)
{
	struct tw_chain *c = bs->chain;
	struct queue_join *q = join_find(bs, j->security_id);
	const struct book_mbo *mbo;

	if (q == NULL) {
		if (bs->n_joins == TW_QUEUE_JOINS) {
			count(&c->stats.queue_join_refused, 1);
			return;
		}
		q = &bs->joins[bs->n_joins++];
	}
	q->security_id = j->security_id;
	q->channel = bs->cur_channel;
	q->order_side = j->side;
	q->side = j->side == TW_ORDER_SELL ? BOOK_ASK : BOOK_BID;
	q->price = j->price;
	mbo = book_feed_mbo(c->path[bs->cur_channel]->book, j->security_id);
	q->known = mbo != NULL && book_mbo_queue_back(mbo, q->side, q->price, &q->priority) == 0;
	count(q->known ? &c->stats.queue_joins : &c->stats.queue_joins_unknown, 1);
}

/* The position of the instrument's joined order, into its top. */
static void
queue_report(struct book_stage *bs, struct tw_top *t)
{
	const struct queue_join *q = join_find(bs, t->security_id);
	struct book_mbo_queue pos;

	if (q == NULL)
		return;
	t->queue_side = q->order_side;
	t->queue = TW_QUEUE_UNKNOWN;
	if (!q->known ||
	    book_mbo_queue_by_priority(book_feed_mbo(bs->chain->path[q->channel]->book,
						     q->security_id),
				       q->side, q->price, q->priority, &pos) != 0)
		return;
	t->queue = TW_QUEUE_KNOWN;
	t->queue_price = q->price;
	t->queue_qty_ahead = pos.qty_ahead;
	t->queue_orders_ahead = pos.orders_ahead;
	t->queue_level_orders = pos.level_orders;
}

/* The signal's input: a top of book or a trade (book -> signal). */
static void
on_book_event(void *ctx, const struct book_event *ev)
{
	struct book_stage *bs = ctx;
	struct tw_chain *c = bs->chain;
	ACT_STACK_MSG(m, struct tw_top);
	struct tw_lat_record *kept = NULL;
	struct tw_queue_join join;
	struct book_top top;
	int rc;

	count(&c->stats.events, 1);
	count(&c->channel_stats[bs->cur_channel].events, 1);
	if (__builtin_expect((ev->what & (BOOK_EVENT_STALE | BOOK_EVENT_RECOVERED |
					  BOOK_EVENT_RESET)) != 0, 0) && ev->security_id != 0)
		state_change(bs, ev->security_id,
			     (ev->what & BOOK_EVENT_STALE) ? (bs->in_loss ? TW_STATE_LOSS : TW_STATE_GAP) :
			     (ev->what & BOOK_EVENT_RESET) ? TW_STATE_RESET : TW_STATE_RECOVERED,
			     ev->instrument, ev->msg_seq_num);
	if ((ev->what & (BOOK_EVENT_BOOK | BOOK_EVENT_TRADE)) == 0 || ev->security_id == 0)
		return;
	act_msg_init(&m.hdr, TW_MSG_TOP, sizeof(m.body));
	memset(&m.body, 0, sizeof(m.body));
	m.body.security_id = ev->security_id;
	m.body.kind = (ev->what & BOOK_EVENT_BOOK) ? TW_TOP_BOOK : TW_TOP_TRADE;
	m.body.ok = ev->state == BOOK_STATE_OK;
	m.body.idx = bs->cur_event_idx;
	m.body.msg_seq_num = ev->msg_seq_num;
	top = book_event_consolidated(ev);
	m.body.bid_price = top.bid_price;
	m.body.bid_qty = top.bid_qty;
	m.body.ask_price = top.ask_price;
	m.body.ask_qty = top.ask_qty;
	if (ev->instrument != NULL)
		m.body.tick = ev->instrument->tick;
	if (ev->what & BOOK_EVENT_TRADE) {
		m.body.trade_price = ev->trade->price;
		m.body.trade_qty = ev->trade->qty;
	}
	if (bs->n_joins != 0)
		queue_report(bs, &m.body);
	if (c->opts.latency != NULL && c->opts.ticks != NULL && bs->cur.t0 != 0) {
		struct tw_lat_record rec = {
			.t0 = bs->cur.t0,
			.t1 = c->opts.ticks(),
			.instrument = ev->security_id,
			.stream = m.body.kind == TW_TOP_BOOK ? TW_LAT_BOOK : TW_LAT_TRADE,
			.burst_idx = (uint8_t)bs->cur.burst_idx,
			.idx = bs->cur_msg_idx,
			.event = bs->cur_event_idx,
			.qlen = bs->cur.qlen,
			.rxq = bs->cur.rxq,
			.msg_seq_num = ev->msg_seq_num,
			.wait = bs->cur.wait,
			.flags = (bs->cur.rx_flags & TW_RX_RXQ) ? TW_LAT_REC_RXQ : 0,
		};

		m.body.t0 = rec.t0;
		m.body.t1 = rec.t1;
		kept = tw_lat_add(c->opts.latency, &rec);
	}
	bs->cur_event_idx++;
	if (c->signal == NULL)
		return;
	if (c->opts.hops == TW_HOPS_DIRECT) {
		c->signal_handlers[TW_MSG_TOP](c->signal, c->strategy, &m.hdr);
		rc = 0;
	} else {
		rc = stage_send(c, c->signal, &m.hdr, &join, sizeof(join));
	}
	if (kept != NULL)
		kept->t2 = c->opts.ticks();  /* the signal has decided */
	if (rc < 0) {
		count(&c->stats.signal_errors, 1);
		return;
	}
	count(&c->stats.tops, 1);
	if (__builtin_expect(rc == (int)sizeof(join), 0))
		queue_join(bs, &join);
}

static void
on_book_batch(struct act_actor *self, void *state, struct act_msg *msg)
{
	(void)self;
	book_batch(state, ACT_PAYLOAD(msg, const struct stage_batch)->batch);
}

static void
on_book_loss(struct act_actor *self, void *state, struct act_msg *msg)
{
	const struct stage_loss *l = ACT_PAYLOAD(msg, const struct stage_loss);

	(void)self;
	book_loss(state, l->channel, l->first_seq, l->count, l->now_ns);
}

static void
on_book_direct(struct act_actor *self, void *state, struct act_msg *msg)
{
	const struct stage_direct *d = ACT_PAYLOAD(msg, const struct stage_direct);

	(void)self;
	book_direct(state, d->rx, d->channel, msg->qdepth);
}

static void
on_book_flush(struct act_actor *self, void *state, struct act_msg *msg)
{
	(void)self;
	book_flush(state, ACT_PAYLOAD(msg, const struct tw_tick)->now_ns);
}

/* The MBO part of a query's answer: the best levels and their first orders. */
static void
query_mbo(const struct book_mbo *mbo, struct tw_query_reply *r)
{
	struct book_level lv[5];
	struct book_order o[TW_QUERY_MBO_ORDERS];

	r->mbo_state = mbo != NULL ? (int32_t)book_mbo_state(mbo) : -1;
	r->mbo_order_count = book_mbo_order_count(mbo);
	for (unsigned int side = 0; mbo != NULL && side < 2; side++) {
		struct tw_query_mbo_level *out = side == BOOK_BID ? r->mbo_bid : r->mbo_ask;
		int n = book_mbo_levels(mbo, (enum book_side)side, lv, 5);

		for (int l = 0; l < n; l++) {
			int k = book_mbo_level_orders(mbo, (enum book_side)side, lv[l].price, o,
						      TW_QUERY_MBO_ORDERS);

			out[l].price = lv[l].price;
			out[l].qty = lv[l].qty;
			out[l].orders = (uint32_t)lv[l].orders;
			for (int i = 0; i < k; i++) {
				out[l].order[i].order_id = o[i].order_id;
				out[l].order[i].priority = o[i].priority;
				out[l].order[i].qty = o[i].qty;
			}
			out[l].shown = k > 0 ? (uint32_t)k : 0;
		}
		r->mbo_levels[side] = n > 0 ? (uint32_t)n : 0;
	}
}

static void
on_query(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct book_stage *bs = state;
	const struct tw_query *q = ACT_PAYLOAD(msg, const struct tw_query);
	const struct book_instrument *in = NULL;
	const struct book_mbo *mbo = NULL;
	struct tw_query_reply r;

	(void)self;
	for (uint32_t i = 0; i < bs->chain->n_channels && in == NULL; i++) {
		in = book_feed_find(bs->chain->path[i]->book, q->security_id);
		if (in != NULL)
			mbo = book_feed_mbo(bs->chain->path[i]->book, q->security_id);
	}
	memset(&r, 0, sizeof(r));
	query_mbo(mbo, &r);
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
	/* the asker waits for this number; an older one timed out */
	pthread_mutex_lock(&bs->chain->query.mu);
	if (q->serial == bs->chain->query.asked) {
		bs->chain->query.reply = r;
		bs->chain->query.answered = q->serial;
		pthread_cond_broadcast(&bs->chain->query.cv);
	}
	pthread_mutex_unlock(&bs->chain->query.mu);
}

static const act_handler_fn book_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_BOOK_BATCH] = on_book_batch,
	[TW_MSG_TICK] = on_book_tick,
	[TW_MSG_BOOK_LOSS] = on_book_loss,
	[TW_MSG_BOOK_DIRECT] = on_book_direct,
	[TW_MSG_FLUSH] = on_book_flush,
	[TW_MSG_QUERY] = on_query,
};

/* -- decoder stage ------------------------------------------------------------ */

static int
decoder_packet(struct decoder_state *ds, const struct stage_packet *p)
{
	struct tw_chain *c = ds->chain;
	int rc = tw_feed_decode(c->path[p->channel], &p->arb);

	count(&c->stats.decoded, 1);
	if (rc < 0)
		count(&c->stats.malformed, 1);
	return rc;
}

static void
on_packet(struct act_actor *self, void *state, struct act_msg *msg)
{
	int32_t rc = decoder_packet(state, ACT_PAYLOAD(msg, const struct stage_packet));

	(void)self;
	act_reply(msg, TW_MSG_PACKET, &rc, sizeof(rc));
}

static const act_handler_fn decoder_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_PACKET] = on_packet,
};

/* -- hops: tw_feed's stages to the next stage's actor ------------------------- */

/* arbiter -> decoder */
static int
hop_packet(void *ctx, struct tw_feed *f, const struct mdp3_arb_packet *p)
{
	struct tw_chain *c = ctx;
	ACT_STACK_MSG(m, struct stage_packet);
	int32_t rc = 0;
	int n;

	m.body.arb = *p;
	m.body.channel = channel_of(f);
	m.body.rx = c->arbiter_state.cur;
	if (c->opts.hops == TW_HOPS_DIRECT)
		return decoder_packet(&c->decoder_state, &m.body);
	act_msg_init(&m.hdr, TW_MSG_PACKET, sizeof(m.body));
	n = stage_send(c, c->decoder, &m.hdr, &rc, sizeof(rc));
	return n < 0 ? n : rc;
}

/* arbiter -> book */
static void
hop_loss(void *ctx, struct tw_feed *f, uint32_t first_seq, uint32_t count_, uint64_t now_ns)
{
	struct tw_chain *c = ctx;
	ACT_STACK_MSG(m, struct stage_loss);

	if (c->opts.hops == TW_HOPS_DIRECT) {
		book_loss(&c->book_state, channel_of(f), first_seq, count_, now_ns);
		return;
	}
	act_msg_init(&m.hdr, TW_MSG_BOOK_LOSS, sizeof(m.body));
	m.body = (struct stage_loss){
		.channel = channel_of(f), .first_seq = first_seq, .count = count_, .now_ns = now_ns,
	};
	stage_send(c, c->book, &m.hdr, NULL, 0);
}

/* decoder -> book */
static void
hop_batch(void *ctx, struct tw_feed *f, const struct tw_feed_batch *b)
{
	struct tw_chain *c = ctx;
	ACT_STACK_MSG(m, struct stage_batch);

	(void)f;
	if (c->opts.hops == TW_HOPS_DIRECT) {
		book_batch(&c->book_state, b);
		return;
	}
	act_msg_init(&m.hdr, TW_MSG_BOOK_BATCH, sizeof(m.body));
	m.body.batch = b;
	stage_send(c, c->book, &m.hdr, NULL, 0);
}

/* -- arbiter stage ------------------------------------------------------------ */

static void
on_rx(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct arbiter_state *as = state;
	struct tw_chain *c = as->chain;
	const struct tw_rx *rx = ACT_PAYLOAD(msg, const struct tw_rx);
	const uint32_t index = channel_index(c, rx->channel);
	int rc;

	(void)self;
	if (c->opts.rx_hold != NULL && !(rx->rx_flags & TW_RX_MERGED)) {
		struct tw_rx held = *rx;

		if (msg->qdepth != 0)
			held.qlen = msg->qdepth;  /* the mailbox's depth, kept for the record */
		if (c->opts.rx_hold(c->opts.rx_hold_ctx, &held))
			return;
	}
	count(&c->stats.rx_packets, 1);
	count(&c->stats.rx_bytes, rx->length);
	if (index == UINT32_MAX) {
		count(&c->stats.unknown_channel, 1);
	} else if (rx->stream == MDP3_STREAM_INCREMENTAL) {
		rx_context_of(c, rx, msg->qdepth, &as->cur);
		rc = tw_feed_arbitrate(c->path[index], rx->side == TW_SIDE_B ? MDP3_FEED_B :
				       MDP3_FEED_A, rx->payload, rx->length, rx->rx_ns);
		as->cur.t0 = 0;
		if (rc < 0)
			count(&c->stats.feed_errors, 1);
		else if (rc < 5)
			count(&c->stats.verdict[rc], 1);
	} else if (rx->stream == MDP3_STREAM_SNAPSHOT && c->opts.skip_snapshots) {
		count(&c->stats.snapshots_skipped, 1);
	} else if (rx->stream < MDP3_STREAM_COUNT) {
		ACT_STACK_MSG(m, struct stage_direct);

		if (c->opts.hops == TW_HOPS_DIRECT) {
			book_direct(&c->book_state, rx, (uint16_t)index, msg->qdepth);
		} else {
			act_msg_init(&m.hdr, TW_MSG_BOOK_DIRECT, sizeof(m.body));
			m.body.rx = rx;
			m.body.channel = (uint16_t)index;
			if (stage_send(c, c->book, &m.hdr, NULL, 0) < 0)
				count(&c->stats.feed_errors, 1);
		}
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
	memset(&as->cur, 0, sizeof(as->cur));
	for (uint32_t i = 0; i < c->n_channels; i++) {
		if (msg->type == TW_MSG_FLUSH)
			tw_feed_flush(c->path[i], t->now_ns);
		else
			tw_feed_poll(c->path[i], t->now_ns);
		/* the per-channel copies for other threads, at every tick (not
		 * every packet: ~60 instructions a packet saved); the books'
		 * counters are read on their own thread, between packets */
		mirror_arb(c, i);
		mirror_book(c, i);
	}
	{
		ACT_STACK_MSG(m, struct tw_tick);

		if (c->opts.hops == TW_HOPS_DIRECT) {
			if (msg->type == TW_MSG_FLUSH)
				book_flush(&c->book_state, t->now_ns);
			else
				book_watch(&c->book_state, t->now_ns);
			return;
		}
		/* the book stage: publish at the end, else its watch */
		act_msg_init(&m.hdr, msg->type, sizeof(m.body));
		m.body = *t;
		stage_send(c, c->book, &m.hdr, NULL, 0);
	}
}

static const act_handler_fn arbiter_handlers[TW_MSG_COUNT_] = {
	[TW_MSG_RX] = on_rx,
	[TW_MSG_TICK] = on_tick,
	[TW_MSG_FLUSH] = on_tick,
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
	struct tw_feed_config fcfg;

	c->n_channels = opts->n_channels != 0 ? opts->n_channels : 1;
	if (c->n_channels > TW_CHAIN_MAX_CHANNELS)
		return -EINVAL;
	memset(&fcfg, 0, sizeof(fcfg));
	fcfg.arb.wait_packets = opts->gap_wait_packets;
	fcfg.arb.wait_ns = (uint64_t)opts->gap_wait_us * 1000u;
	if (fcfg.arb.wait_packets == 0 && fcfg.arb.wait_ns == 0)
		fcfg.arb.wait_packets = MDP3_ARB_DEFAULT_WAIT_PACKETS;
	fcfg.book.max_instruments = opts->max_instruments;
	fcfg.book.recovery_packets = opts->recovery_packets;
	fcfg.book.join = opts->join;
	fcfg.book.publish = opts->publish;
	fcfg.book.loss_policy = opts->loss_policy;
	fcfg.book.handler.on_event = on_book_event;
	fcfg.book.handler.ctx = &c->book_state;
	/* every hop goes through the chain, which keeps the latency context
	 * and puts the next stage's actor (or, TW_HOPS_DIRECT, its function)
	 * around the next stage */
	fcfg.hops = (struct tw_feed_hops){
		.packet = hop_packet, .loss = hop_loss, .batch = hop_batch, .ctx = c,
	};
	fcfg.book.mbo_instruments = opts->mbo_instruments;
	fcfg.book.mbo_orders = opts->mbo_orders;
	fcfg.book.mbo_levels = opts->mbo_levels;
	fcfg.book.mbo_diffs = opts->mbo_diffs;
	fcfg.book.mbo_presize = opts->mbo_presize;
	for (uint32_t i = 0; i < c->n_channels; i++) {
		c->channel_stats[i].channel = opts->n_channels != 0 ? opts->channels[i] : 0;
		fcfg.book.mbo = opts->mbo[i];
		c->path[i] = tw_feed_create(&fcfg);
		if (c->path[i] == NULL)
			return -(errno != 0 ? errno : ENOMEM);
		c->path[i]->user = (void *)(uintptr_t)i;
	}
	return 0;
}

static int query_init(struct query_slot *q);
static void query_fini(struct query_slot *q);

struct tw_chain *
tw_chain_create(const struct tw_chain_opts *opts)
{
	struct act_actor_opts ao;
	struct tw_chain *c = calloc(1, sizeof(*c));
	int saved;

	if (c == NULL)
		return NULL;
	c->opts = *opts;
	if (query_init(&c->query) != 0) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->query_ready = true;
	c->arbiter_state.chain = c;
	c->decoder_state.chain = c;
	c->book_state.chain = c;
	c->book_state.halts = calloc(1, sizeof(struct halt_table));
	c->order_state.halts = calloc(1, sizeof(struct halt_table));
	if (c->book_state.halts == NULL || c->order_state.halts == NULL) {
		errno = ENOMEM;
		goto fail;
	}
	if (channels_create(c) != 0) {
		if (errno == 0)
			errno = EINVAL;
		goto fail;
	}
	if (tw_order_out_init(c) != 0)
		goto fail;

	c->decode = act_group_create(&opts->decode_mailbox);
	c->orders = act_group_create(&opts->order_mailbox);
	if (c->decode == NULL || c->orders == NULL)
		goto fail;

	memset(&ao, 0, sizeof(ao));
	ao.name = "order_out";
	ao.handlers = tw_order_handlers;
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
		c->signal_handlers = sh;
		/* private: only the book (on the decode thread) calls it; order-out's
		 * replies and reports come through the group's control queue */
		c->signal = stage_create(c, "signal", sh, n, c->strategy, true);
		if (c->signal == NULL)
			goto fail;
	}
	/* private: telemetry reaches it through the group's mailbox */
	c->book = stage_create(c, "book", book_handlers, TW_MSG_COUNT_, &c->book_state, true);
	c->decoder = stage_create(c, "decoder", decoder_handlers, TW_MSG_COUNT_,
				  &c->decoder_state, true);
	/* private too: captures reach it through the group's mailbox (act_send),
	 * the decode thread directly */
	c->arbiter = stage_create(c, "arbiter", arbiter_handlers, TW_MSG_COUNT_,
				  &c->arbiter_state, true);
	if (c->book == NULL || c->decoder == NULL || c->arbiter == NULL)
		goto fail;
	/* the hops, declared once: a DAG the runtime checks here, so a call
	 * along one needs no cycle search (act_fast_send_edge()) */
	if (act_group_edge(c->decode, c->arbiter, c->decoder) != 0 ||
	    act_group_edge(c->decode, c->arbiter, c->book) != 0 ||
	    act_group_edge(c->decode, c->decoder, c->book) != 0 ||
	    (c->signal != NULL && act_group_edge(c->decode, c->book, c->signal) != 0)) {
		errno = EINVAL;
		goto fail;
	}

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
	tw_order_out_fini(c);
	if (c->query_ready)
		query_fini(&c->query);
	tw_strategy_destroy(c->strategy);
	for (uint32_t i = 0; i < TW_CHAIN_MAX_CHANNELS; i++)
		tw_feed_destroy(c->path[i]);
	free(c->book_state.halts);
	free(c->order_state.halts);
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
tw_chain_order_out(struct tw_chain *c)
{
	return c->order_out;
}

struct act_actor *
tw_chain_book(struct tw_chain *c)
{
	return c->book;
}

const struct book_instrument *
tw_chain_instrument(const struct tw_chain *c, int32_t security_id, const struct book_mbo **mbo)
{
	for (uint32_t i = 0; i < c->n_channels; i++) {
		const struct book_instrument *in = book_feed_find(c->path[i]->book, security_id);

		if (in != NULL) {
			if (mbo != NULL)
				*mbo = book_feed_mbo(c->path[i]->book, security_id);
			return in;
		}
	}
	return NULL;
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

/* -- telemetry queries -------------------------------------------------------- */

static int
query_init(struct query_slot *q)
{
	pthread_condattr_t ca;
	int rc;

	if (pthread_condattr_init(&ca) != 0)
		return -1;
	rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (rc == 0)
		rc = pthread_cond_init(&q->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (rc != 0)
		return -1;
	if (pthread_mutex_init(&q->mu, NULL) != 0) {
		pthread_cond_destroy(&q->cv);
		return -1;
	}
	if (pthread_mutex_init(&q->turn, NULL) != 0) {
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->cv);
		return -1;
	}
	return 0;
}

static void
query_fini(struct query_slot *q)
{
	pthread_mutex_destroy(&q->turn);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
}

int
tw_chain_query(struct tw_chain *c, int32_t security_id, struct tw_query_reply *r,
	       uint64_t timeout_ns)
{
	struct query_slot *qs = &c->query;
	struct timespec deadline;
	uint64_t serial;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)(timeout_ns / 1000000000u);
	deadline.tv_nsec += (long)(timeout_ns % 1000000000u);
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&qs->turn);
	pthread_mutex_lock(&qs->mu);
	serial = ++qs->asked;
	qs->security_id = security_id;
	/* the decode thread sees it at its next tw_chain_serve_queries() */
	atomic_store_explicit(&qs->pending, serial, memory_order_release);
	while (qs->answered != serial && rc == 0)
		if (pthread_cond_timedwait(&qs->cv, &qs->mu, &deadline) == ETIMEDOUT)
			rc = -ETIMEDOUT;
	if (qs->answered == serial) {
		*r = qs->reply;
		rc = 0;
	} else {
		/* withdraw it; if the decode thread took it already, its answer
		 * finds another number asked (or none) and is dropped */
		uint64_t expected = serial;

		atomic_compare_exchange_strong_explicit(&qs->pending, &expected, 0,
							memory_order_relaxed, memory_order_relaxed);
	}
	pthread_mutex_unlock(&qs->mu);
	pthread_mutex_unlock(&qs->turn);
	return rc;
}

int
tw_chain_serve_queries(struct tw_chain *c)
{
	struct query_slot *qs = &c->query;
	ACT_STACK_MSG(m, struct tw_query);
	uint64_t serial = atomic_load_explicit(&qs->pending, memory_order_relaxed);

	if (__builtin_expect(serial == 0, 1))
		return 0;
	if (!atomic_compare_exchange_strong_explicit(&qs->pending, &serial, 0,
						     memory_order_acquire, memory_order_relaxed))
		return 0;
	act_msg_init(&m.hdr, TW_MSG_QUERY, sizeof(m.body));
	memset(&m.body, 0, sizeof(m.body));
	m.body.serial = serial;
	pthread_mutex_lock(&qs->mu);
	m.body.security_id = qs->security_id;
	pthread_mutex_unlock(&qs->mu);
	/* on the decode thread, between messages: the book's own actor copies it */
	return act_fast_send(c->book, &m.hdr, NULL, 0) < 0 ? -1 : 1;
}

bool
tw_chain_replay_tick(struct tw_chain *c, uint64_t *last_ns, uint64_t before_ns)
{
	const uint64_t step = before_ns == 0 ? 0 :
			      (before_ns - 1) / TW_CHAIN_STEP_NS * TW_CHAIN_STEP_NS;

	if (step <= *last_ns)
		return false;
	*last_ns = step;
	tw_chain_tick(c, step, false);
	return true;
}

int
tw_chain_tick(struct tw_chain *c, uint64_t now_ns, bool flush)
{
	ACT_STACK_MSG(m, struct tw_tick);

	act_msg_init(&m.hdr, flush ? TW_MSG_FLUSH : TW_MSG_TICK, sizeof(m.body));
	m.body.now_ns = now_ns;
	return act_fast_send(c->arbiter, &m.hdr, NULL, 0);
}

