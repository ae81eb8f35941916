/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Sample strategy: top-of-book imbalance (the rule is stated in
 * tw_strategy.h). Uses the actor API and tw_msg.h only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tw_msg.h"
#include "tw_strategy.h"

enum position_signal {
	SIGNAL_NEUTRAL = 0,
	SIGNAL_BUY,
	SIGNAL_SELL,
};

/* What the latest top said of an instrument's last order (its queue). */
struct queue_seen {
	uint8_t side;                 /* enum tw_order_side of the last order; 0 none */
	uint8_t state;                /* enum tw_queue_state */
	int64_t qty_ahead;
};

struct tw_strategy {
	struct tw_strategy_params params;
	struct act_actor *order_out;
	uint8_t signal[TW_STRATEGY_MAX_INSTRUMENTS];
	struct queue_seen queue[TW_STRATEGY_MAX_INSTRUMENTS];
	uint32_t next_order_id;
	struct tw_strategy_stats stats;
};

static int
instrument_slot(const struct tw_strategy *s, int32_t security_id)
{
	for (uint32_t i = 0; i < s->params.n_instruments; i++)
		if (s->params.instruments[i] == security_id)
			return (int)i;
	return -1;
}

/* The queue rule (tw_strategy.h): the last order on this side is still
 * more than queue_max_ahead contracts from the front. */
static bool
queue_holds(struct tw_strategy *s, int slot, enum tw_order_side side)
{
	const struct queue_seen *q = &s->queue[slot];

	return s->params.queue_max_ahead != 0 && q->side == side &&
	       q->state == TW_QUEUE_KNOWN && q->qty_ahead > (int64_t)s->params.queue_max_ahead;
}

static void
send_order(struct tw_strategy *s, struct act_msg *msg, const struct tw_top *top, int slot,
	   enum tw_order_side side)
{
	struct tw_queue_join join;
	struct tw_order order;

	if (s->stats.orders >= s->params.max_orders) {
		s->stats.capped++;
		return;
	}
	if (queue_holds(s, slot, side)) {
		s->stats.queue_held++;
		return;
	}
	memset(&order, 0, sizeof(order));
	order.client_order_id = s->next_order_id;
	order.security_id = top->security_id;
	order.side = (uint8_t)side;
	order.qty = s->params.order_qty;
	order.price = side == TW_ORDER_BUY ? top->bid_price : top->ask_price;
	order.trigger_seq = top->msg_seq_num;
	order.mid = (top->bid_price + top->ask_price) / 2;
	order.tick = top->tick;
	order.t0 = top->t0;
	order.t1 = top->t1;
	order.t2 = s->params.clock != NULL ? s->params.clock() : 0;
	if (act_send_copy(s->order_out, TW_MSG_ORDER, &order, sizeof(order)) != 0) {
		s->stats.missed++;
		return;
	}
	/* the order rests at the back of its price's queue: ask the book
	 * stage to follow its place (tw_msg.h, struct tw_queue_join) */
	memset(&join, 0, sizeof(join));
	join.security_id = order.security_id;
	join.side = order.side;
	join.price = order.price;
	join.client_order_id = order.client_order_id;
	if (act_reply_sync(msg, TW_MSG_TOP, &join, sizeof(join)) == 0)
		s->stats.queue_joins++;
	else
		s->stats.queue_join_failed++;
	s->queue[slot].side = (uint8_t)side;
	s->queue[slot].state = TW_QUEUE_UNKNOWN;
	s->queue[slot].qty_ahead = 0;
	s->next_order_id++;
	s->stats.orders++;
}

/* What a top says of the instrument's last order. */
static void
queue_note(struct tw_strategy *s, int slot, const struct tw_top *top)
{
	struct queue_seen *q = &s->queue[slot];

	if (top->queue == TW_QUEUE_NONE)
		return;
	q->state = top->queue;
	q->qty_ahead = top->queue_qty_ahead;
	if (top->queue == TW_QUEUE_KNOWN) {
		s->stats.queue_known++;
		if ((uint64_t)top->queue_qty_ahead > s->stats.queue_qty_ahead_max)
			s->stats.queue_qty_ahead_max = (uint64_t)top->queue_qty_ahead;
	} else {
		s->stats.queue_unknown++;
	}
}

static void
on_top(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct tw_strategy *s = state;
	const struct tw_top *top = ACT_PAYLOAD(msg, const struct tw_top);
	enum position_signal now = SIGNAL_NEUTRAL;
	int slot;

	(void)self;
	s->stats.events++;
	if (msg->size < sizeof(*top))
		return;
	if (top->kind == TW_TOP_STATE) {
		/* stale, silent or reset: forget the signal, so trading starts
		 * afresh from the book as it is after recovery */
		s->stats.states[top->ok ? 1 : 0]++;
		slot = instrument_slot(s, top->security_id);
		if (slot >= 0)
			s->signal[slot] = SIGNAL_NEUTRAL;
		return;
	}
	slot = instrument_slot(s, top->security_id);
	if (slot < 0)
		return;
	queue_note(s, slot, top);
	if (top->kind != TW_TOP_BOOK)
		return;
	if (!top->ok || top->bid_qty <= 0 || top->ask_qty <= 0) {
		s->signal[slot] = SIGNAL_NEUTRAL;
		return;
	}
	s->stats.considered++;

	/* Quantities are contracts (< 2^31 in practice), the ratio terms < 2^32:
	 * the products fit in 64 bits. */
	const int64_t numerator = s->params.ratio_numerator;
	const int64_t denominator = s->params.ratio_denominator;
	if (top->bid_qty * denominator >= top->ask_qty * numerator)
		now = SIGNAL_BUY;
	else if (top->ask_qty * denominator >= top->bid_qty * numerator)
		now = SIGNAL_SELL;

	if (now != SIGNAL_NEUTRAL && now != s->signal[slot])
		send_order(s, msg, top, slot, now == SIGNAL_BUY ? TW_ORDER_BUY : TW_ORDER_SELL);
	s->signal[slot] = (uint8_t)now;
}

static void
on_order_reply(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct tw_strategy *s = state;
	const struct tw_order_reply *r = ACT_PAYLOAD(msg, const struct tw_order_reply);

	(void)self;
	if (msg->size < sizeof(*r))
		return;
	if (r->reason == TW_ORDER_SENT) {
		s->stats.replies_sent++;
		return;
	}
	s->stats.replies_refused++;
	s->stats.refused[r->reason < TW_ORDER_REASON_MAX_ ? r->reason : 0]++;
}

static void
on_exec(struct act_actor *self, void *state, struct act_msg *msg)
{
	struct tw_strategy *s = state;
	const struct tw_exec *e = ACT_PAYLOAD(msg, const struct tw_exec);

	(void)self;
	if (msg->size < sizeof(*e) || e->kind >= TW_EXEC_KIND_COUNT_)
		return;
	s->stats.exec[e->kind]++;
	if (e->kind == TW_EXEC_FILL)
		s->stats.filled_qty += e->last_qty;
}

static const act_handler_fn strategy_handler_table[TW_MSG_COUNT_] = {
	[TW_MSG_TOP] = on_top,
	[TW_MSG_ORDER_REPLY] = on_order_reply,
	[TW_MSG_EXEC] = on_exec,
};

const act_handler_fn *
tw_strategy_handlers(uint32_t *count)
{
	*count = TW_MSG_COUNT_;
	return strategy_handler_table;
}

struct tw_strategy *
tw_strategy_create(const struct tw_strategy_params *params, struct act_actor *order_out)
{
	struct tw_strategy *s;

	if (params == NULL || order_out == NULL || params->ratio_denominator == 0 ||
	    params->ratio_numerator <= params->ratio_denominator ||
	    params->n_instruments > TW_STRATEGY_MAX_INSTRUMENTS) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->params = *params;
	s->order_out = order_out;
	s->next_order_id = 1;
	return s;
}

void
tw_strategy_destroy(struct tw_strategy *s)
{
	free(s);
}

void
tw_strategy_stats(const struct tw_strategy *s, struct tw_strategy_stats *st)
{
	*st = s->stats;
}
