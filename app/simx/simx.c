/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The matching core of the simulated exchange (simx.h states the rules).
 * Arrivals and reports wait in two queues kept in time order (insertion
 * from the tail: the latencies are constant, so it is nearly always an
 * append). Resting orders are a flat table scanned at every simx_market():
 * O(orders) per frame, bounded by SIMX_MAX_ORDERS. Positions keep their
 * open lots first in, first out, so realised PnL is exact in integers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "simx.h"

enum order_state {
	ORDER_FREE = 0,
	ORDER_LIVE,
	ORDER_FILLED,
	ORDER_CANCELED,
};

struct order {
	uint8_t state;           /* enum order_state */
	uint8_t side;
	bool mbo;                /* queue from the MBO book (priority) */
	uint64_t ref, order_id, decided_ns, done_seq;
	int32_t security_id;
	uint32_t qty, cum;
	int64_t price;
	int64_t ahead;           /* displayed quantity ahead of it */
	uint64_t priority;       /* mbo: the MDOrderPriority it joined behind */
	uint64_t trade_key;      /* the last trade it has seen */
	int64_t cross_seen;      /* opposite quantity at or through its price, last seen */
};

enum pending_kind {
	ARRIVE_NEW = 0,
	ARRIVE_CANCEL,
};

struct pending {
	uint8_t kind;
	uint8_t side;
	uint64_t at_ns, ref, decided_ns, target_ref, order_id;
	int32_t security_id;
	uint32_t qty;
	int64_t price;
};

struct lot {
	int64_t qty;             /* signed: the position's sign */
	int64_t cost;            /* price x qty, signed */
};

struct position {
	int32_t security_id;
	bool used;
	int64_t position, cash, mark;
	uint64_t bought, sold;
	uint32_t first, count;   /* lots ring */
	struct lot lots[SIMX_MAX_LOTS];
};

struct simx {
	struct simx_config cfg;
	struct simx_stats stats;
	uint64_t next_order_id, done_seq;
	struct order orders[SIMX_MAX_ORDERS];
	/* queues in time order: [head, head + n) of a ring */
	struct pending arrivals[SIMX_MAX_PENDING];
	uint32_t a_head, a_n;
	struct simx_report reports[SIMX_MAX_PENDING];
	uint32_t r_head, r_n;
	struct position positions[SIMX_MAX_INSTRUMENTS];
	uint32_t n_positions;
};

struct simx *
simx_create(const struct simx_config *cfg)
{
	struct simx *x;

	if (cfg == NULL || cfg->book == NULL || cfg->report == NULL) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return NULL;
	x->cfg = *cfg;
	return x;
}

void
simx_destroy(struct simx *x)
{
	free(x);
}

/* -- queues ------------------------------------------------------------------ */

static bool
arrival_push(struct simx *x, const struct pending *p)
{
	uint32_t i;

	if (x->a_n == SIMX_MAX_PENDING)
		return false;
	/* after every item due at or before it: ties keep submission order */
	for (i = x->a_n; i > 0; i--) {
		const struct pending *q = &x->arrivals[(x->a_head + i - 1) % SIMX_MAX_PENDING];

		if (q->at_ns <= p->at_ns)
			break;
		x->arrivals[(x->a_head + i) % SIMX_MAX_PENDING] = *q;
	}
	x->arrivals[(x->a_head + i) % SIMX_MAX_PENDING] = *p;
	x->a_n++;
	return true;
}

static void
report_push(struct simx *x, const struct simx_report *r)
{
	uint32_t i;

	if (x->r_n == SIMX_MAX_PENDING) {
		x->stats.overflows++;
		return;
	}
	for (i = x->r_n; i > 0; i--) {
		const struct simx_report *q = &x->reports[(x->r_head + i - 1) % SIMX_MAX_PENDING];

		if (q->due_ns <= r->due_ns)
			break;
		x->reports[(x->r_head + i) % SIMX_MAX_PENDING] = *q;
	}
	x->reports[(x->r_head + i) % SIMX_MAX_PENDING] = *r;
	x->r_n++;
}

/* -- positions ----------------------------------------------------------------- */

static struct position *
position_of(struct simx *x, int32_t security_id)
{
	for (uint32_t i = 0; i < x->n_positions; i++)
		if (x->positions[i].security_id == security_id)
			return &x->positions[i];
	if (x->n_positions == SIMX_MAX_INSTRUMENTS)
		return NULL;
	x->positions[x->n_positions] = (struct position){ .security_id = security_id,
							  .used = true };
	return &x->positions[x->n_positions++];
}

static int64_t
sign_of(int64_t v)
{
	return v > 0 ? 1 : v < 0 ? -1 : 0;
}

/* A fill of @p q (signed: bought > 0) at @p price: close the oldest lots
 * first, open a lot with what is left. */
static void
position_fill(struct simx *x, int32_t security_id, int64_t q, int64_t price)
{
	struct position *p = position_of(x, security_id);

	if (p == NULL) {
		x->stats.overflows++;
		return;
	}
	p->cash -= q * price;
	if (q > 0)
		p->bought += (uint64_t)q;
	else
		p->sold += (uint64_t)-q;
	while (q != 0 && p->count != 0 && sign_of(p->position) == -sign_of(q)) {
		struct lot *l = &p->lots[p->first];
		const int64_t lot_qty = llabs(l->qty);
		const int64_t take = llabs(q) < lot_qty ? llabs(q) : lot_qty;
		/* exact for a lot of one price; a merged lot rounds */
		const int64_t cost = take == lot_qty ? l->cost : l->cost / lot_qty * take;

		l->cost -= cost;
		l->qty -= sign_of(l->qty) * take;
		p->position += sign_of(q) * take;
		q -= sign_of(q) * take;
		if (l->qty == 0) {
			p->first = (p->first + 1) % SIMX_MAX_LOTS;
			p->count--;
		}
	}
	if (q == 0)
		return;
	if (p->count == SIMX_MAX_LOTS) {
		/* full: merge into the newest lot (its cost stays exact in sum) */
		struct lot *l = &p->lots[(p->first + p->count - 1) % SIMX_MAX_LOTS];

		l->qty += q;
		l->cost += q * price;
	} else {
		p->lots[(p->first + p->count) % SIMX_MAX_LOTS] = (struct lot){ q, q * price };
		p->count++;
	}
	p->position += q;
}

static int64_t
position_open_cost(const struct position *p)
{
	int64_t cost = 0;

	for (uint32_t i = 0; i < p->count; i++)
		cost += p->lots[(p->first + i) % SIMX_MAX_LOTS].cost;
	return cost;
}

/* -- reports ---------------------------------------------------------------------- */

static void
report(struct simx *x, const struct order *o, uint8_t kind, uint64_t ref, uint64_t now,
       int64_t last_price, uint32_t last_qty, const char *text)
{
	struct simx_report r = {
		.kind = kind, .side = o->side, .ref = ref, .order_ref = o->ref,
		.order_id = o->order_id, .security_id = o->security_id, .price = o->price,
		.order_qty = o->qty, .last_price = last_price, .last_qty = last_qty,
		.cum_qty = o->cum, .leaves_qty = o->state == ORDER_LIVE ? o->qty - o->cum : 0,
		.decided_ns = o->decided_ns, .event_ns = now, .due_ns = now + x->cfg.return_ns,
		.text = text,
	};

	report_push(x, &r);
}

static void
fill(struct simx *x, struct order *o, uint32_t qty, int64_t price, uint64_t now, bool passive)
{
	if (qty == 0)
		return;
	o->cum += qty;
	if (o->cum == o->qty) {
		o->state = ORDER_FILLED;
		o->done_seq = ++x->done_seq;
		x->stats.resting -= passive ? 1 : 0;
	}
	x->stats.fills++;
	x->stats.filled_qty += qty;
	if (passive)
		x->stats.passive_fills++;
	else
		x->stats.aggressive_fills++;
	position_fill(x, o->security_id, o->side == 2 ? -(int64_t)qty : (int64_t)qty, price);
	report(x, o, SIMX_FILL, o->ref, now, price, qty, NULL);
}

/* -- arrivals --------------------------------------------------------------------- */

static struct order *
order_slot(struct simx *x)
{
	struct order *oldest = NULL;

	for (uint32_t i = 0; i < SIMX_MAX_ORDERS; i++) {
		struct order *o = &x->orders[i];

		if (o->state == ORDER_FREE)
			return o;
		if (o->state != ORDER_LIVE && (oldest == NULL || o->done_seq < oldest->done_seq))
			oldest = o;
	}
	return oldest;  /* forget the oldest done order */
}

static struct order *
order_find(struct simx *x, uint64_t ref, uint64_t order_id)
{
	for (uint32_t i = 0; i < SIMX_MAX_ORDERS; i++) {
		struct order *o = &x->orders[i];

		if (o->state == ORDER_FREE)
			continue;
		if (order_id != 0 ? o->order_id == order_id : o->ref == ref)
			return o;
	}
	return NULL;
}

static bool
crosses(uint8_t side, int64_t level_price, int64_t limit)
{
	return side == 2 ? level_price >= limit : level_price <= limit;
}

static int64_t
own_level_qty(const struct simx_book *b, uint8_t side, int64_t price)
{
	for (uint32_t i = 0; i < b->depth && i < SIMX_MAX_LEVELS; i++) {
		const int64_t p = side == 2 ? b->ask[i].price : b->bid[i].price;
		const int64_t q = side == 2 ? b->ask[i].qty : b->bid[i].qty;

		if (q > 0 && p == price)
			return q;
	}
	return 0;
}

static enum book_side
book_side_of(uint8_t side)
{
	return side == 2 ? BOOK_ASK : BOOK_BID;
}

/* The opposite side's quantity at (with nothing ahead) or through its price. */
static int64_t
crossing_qty(const struct order *o, const struct simx_book *b)
{
	int64_t cross = 0;

	for (uint32_t i = 0; i < b->depth && i < SIMX_MAX_LEVELS; i++) {
		const int64_t lp = o->side == 2 ? b->bid[i].price : b->ask[i].price;
		const int64_t lq = o->side == 2 ? b->bid[i].qty : b->ask[i].qty;

		if (lq > 0 && crosses(o->side, lp, o->price) && (lp != o->price || o->ahead == 0))
			cross += lq;
	}
	return cross;
}

/* Join the queue at the order's price: behind every order resting there. */
static void
join_queue(struct simx *x, struct order *o, const struct simx_book *b)
{
	struct book_mbo_queue q;

	o->ahead = own_level_qty(b, o->side, o->price);
	o->trade_key = b->trade_key;
	o->mbo = false;
	if (b->mbo != NULL &&
	    book_mbo_queue_back(b->mbo, book_side_of(o->side), o->price, &o->priority) == 0 &&
	    book_mbo_queue_by_priority(b->mbo, book_side_of(o->side), o->price, o->priority,
				       &q) == 0) {
		o->mbo = true;
		o->ahead = q.qty_ahead;
		x->stats.mbo_joins++;
	}
	o->cross_seen = crossing_qty(o, b);
}

static void
arrive_new(struct simx *x, const struct pending *p)
{
	struct order tmp = {
		.state = ORDER_CANCELED, .side = p->side, .ref = p->ref,
		.decided_ns = p->decided_ns, .security_id = p->security_id, .qty = p->qty,
		.price = p->price,
	};
	const char *why = NULL;
	struct simx_book b;
	struct order *o;

	x->stats.news++;
	memset(&b, 0, sizeof(b));
	if (x->cfg.book(x->cfg.ctx, p->security_id, &b) != 0)
		why = "unknown instrument";
	else if (!b.ok)
		why = "stale book";
	else if (p->price <= 0)
		why = "price must be positive";
	else if (p->qty == 0)
		why = "quantity must be positive";
	else if ((o = order_slot(x)) == NULL)
		why = "order table full";
	if (why != NULL) {
		x->stats.rejects++;
		report(x, &tmp, SIMX_REJECT, p->ref, p->at_ns, 0, 0, why);
		return;
	}
	*o = tmp;
	o->state = ORDER_LIVE;
	o->order_id = ++x->next_order_id;
	x->stats.acks++;
	report(x, o, SIMX_NEW, p->ref, p->at_ns, 0, 0, NULL);
	/* marketable: against the opposite levels at their prices, best first */
	for (uint32_t i = 0; i < b.depth && i < SIMX_MAX_LEVELS && o->state == ORDER_LIVE; i++) {
		const int64_t lp = o->side == 2 ? b.bid[i].price : b.ask[i].price;
		const int64_t lq = o->side == 2 ? b.bid[i].qty : b.ask[i].qty;
		const uint32_t leaves = o->qty - o->cum;

		if (lq <= 0)
			continue;
		if (!crosses(o->side, lp, o->price))
			break;
		fill(x, o, lq < (int64_t)leaves ? (uint32_t)lq : leaves, lp, p->at_ns, false);
	}
	if (o->state == ORDER_LIVE) {
		join_queue(x, o, &b);
		x->stats.resting++;
	}
}

static void
arrive_cancel(struct simx *x, const struct pending *p)
{
	struct order *o = order_find(x, p->target_ref, p->order_id);
	struct order tmp = { .ref = p->target_ref, .order_id = p->order_id,
			     .decided_ns = p->decided_ns };

	x->stats.cancels++;
	if (o == NULL || o->state != ORDER_LIVE) {
		x->stats.cancel_rejects++;
		if (o != NULL && o->state == ORDER_FILLED)
			x->stats.too_late++;
		report(x, o != NULL ? o : &tmp, SIMX_CANCEL_REJECT, p->ref, p->at_ns, 0, 0,
		       o == NULL ? "unknown order" : o->state == ORDER_FILLED ?
		       "too late to cancel" : "order not working");
		return;
	}
	o->state = ORDER_CANCELED;
	o->done_seq = ++x->done_seq;
	x->stats.canceled++;
	x->stats.resting--;
	report(x, o, SIMX_CANCELED, p->ref, p->at_ns, 0, 0, NULL);
}

static int
submit(struct simx *x, struct pending *p)
{
	p->at_ns = p->decided_ns + x->cfg.latency_ns;
	if (arrival_push(x, p))
		return 0;
	x->stats.overflows++;
	if (p->kind == ARRIVE_NEW) {
		struct order tmp = { .side = p->side, .ref = p->ref, .decided_ns = p->decided_ns,
				     .security_id = p->security_id, .qty = p->qty,
				     .price = p->price };

		x->stats.rejects++;
		report(x, &tmp, SIMX_REJECT, p->ref, p->at_ns, 0, 0, "exchange busy");
	} else {
		struct order tmp = { .ref = p->target_ref, .order_id = p->order_id };

		x->stats.cancel_rejects++;
		report(x, &tmp, SIMX_CANCEL_REJECT, p->ref, p->at_ns, 0, 0, "exchange busy");
	}
	return -ENOSPC;
}

int
simx_submit_new(struct simx *x, uint64_t ref, uint64_t decided_ns, int32_t security_id,
		uint8_t side, uint32_t qty, int64_t price)
{
	struct pending p = { .kind = ARRIVE_NEW, .side = side, .ref = ref,
			     .decided_ns = decided_ns, .security_id = security_id, .qty = qty,
			     .price = price };

	return submit(x, &p);
}

int
simx_submit_cancel(struct simx *x, uint64_t ref, uint64_t decided_ns, uint64_t target_ref,
		   uint64_t order_id)
{
	struct pending p = { .kind = ARRIVE_CANCEL, .ref = ref, .decided_ns = decided_ns,
			     .target_ref = target_ref, .order_id = order_id };

	return submit(x, &p);
}

uint64_t
simx_next_ns(const struct simx *x)
{
	uint64_t t = UINT64_MAX;

	if (x->a_n != 0)
		t = x->arrivals[x->a_head].at_ns;
	if (x->r_n != 0 && x->reports[x->r_head].due_ns < t)
		t = x->reports[x->r_head].due_ns;
	return t;
}

uint32_t
simx_run_until(struct simx *x, uint64_t until_ns, uint32_t max)
{
	uint32_t done = 0;

	while (max == 0 || done < max) {
		const uint64_t a = x->a_n != 0 ? x->arrivals[x->a_head].at_ns : UINT64_MAX;
		const uint64_t r = x->r_n != 0 ? x->reports[x->r_head].due_ns : UINT64_MAX;

		if (a == UINT64_MAX && r == UINT64_MAX)
			break;
		if (a <= r && a < until_ns) {
			struct pending p = x->arrivals[x->a_head];

			x->a_head = (x->a_head + 1) % SIMX_MAX_PENDING;
			x->a_n--;
			if (p.kind == ARRIVE_NEW)
				arrive_new(x, &p);
			else
				arrive_cancel(x, &p);
		} else if (r < a && r < until_ns) {
			struct simx_report rep = x->reports[x->r_head];

			x->r_head = (x->r_head + 1) % SIMX_MAX_PENDING;
			x->r_n--;
			x->cfg.report(x->cfg.ctx, &rep);
		} else {
			break;
		}
		done++;
	}
	return done;
}

/* -- the market moves ------------------------------------------------------------ */

static void
match_resting(struct simx *x, struct order *o, const struct simx_book *b, uint64_t now)
{
	uint32_t leaves = o->qty - o->cum, qty = 0;
	int64_t cross = 0;
	struct book_mbo_queue q;

	/* a new trade: through the price fills all, at the price after the queue */
	if (b->has_trade && b->trade_key != o->trade_key) {
		o->trade_key = b->trade_key;
		const bool through = o->side == 2 ? b->trade_price > o->price :
					  b->trade_price < o->price;

		if (through) {
			qty = leaves;
			o->ahead = 0;
		} else if (b->trade_price == o->price && b->trade_qty > 0) {
			const int64_t consumed = b->trade_qty < o->ahead ? b->trade_qty : o->ahead;
			const int64_t rest = b->trade_qty - consumed;

			o->ahead -= consumed;
			qty = rest < (int64_t)leaves ? (uint32_t)rest : leaves;
		}
	}
	/* the queue ahead: its real place, or the level falling below the estimate */
	if (o->mbo && b->mbo != NULL &&
	    book_mbo_queue_by_priority(b->mbo, book_side_of(o->side), o->price, o->priority,
				       &q) == 0) {
		o->ahead = q.qty_ahead;
	} else {
		const int64_t level = own_level_qty(b, o->side, o->price);

		if (level < o->ahead)
			o->ahead = level;
	}
	/* the opposite side at (with nothing ahead) or through the price: only
	 * what came since it last looked (what it took on arrival, or was
	 * filled by, is still in the recorded book) */
	cross = crossing_qty(o, b) - o->cross_seen;
	o->cross_seen += cross;
	if (cross < 0)
		cross = 0;
	if (cross > (int64_t)(leaves - qty))
		cross = leaves - qty;
	qty += (uint32_t)cross;
	fill(x, o, qty, o->price, now, true);
}

void
simx_market(struct simx *x, uint64_t now_ns)
{
	int32_t last_id = 0;
	struct simx_book b;
	bool have = false;

	if (x->stats.resting == 0)
		return;
	for (uint32_t i = 0; i < SIMX_MAX_ORDERS; i++) {
		struct order *o = &x->orders[i];

		if (o->state != ORDER_LIVE)
			continue;
		if (!have || o->security_id != last_id) {
			memset(&b, 0, sizeof(b));
			have = x->cfg.book(x->cfg.ctx, o->security_id, &b) == 0;
			last_id = o->security_id;
			if (!have)
				continue;
		}
		if (b.ok)
			match_resting(x, o, &b, now_ns);
	}
}

void
simx_mark(struct simx *x)
{
	for (uint32_t i = 0; i < x->n_positions; i++) {
		struct position *p = &x->positions[i];
		struct simx_book b;

		memset(&b, 0, sizeof(b));
		if (x->cfg.book(x->cfg.ctx, p->security_id, &b) != 0)
			continue;
		if (b.has_trade)
			p->mark = b.trade_price;
		else if (b.depth > 0 && b.bid[0].qty > 0 && b.ask[0].qty > 0)
			p->mark = (b.bid[0].price + b.ask[0].price) / 2;
	}
}

uint32_t
simx_positions(const struct simx *x, struct simx_position *out, uint32_t cap)
{
	for (uint32_t i = 0; i < x->n_positions && i < cap; i++) {
		const struct position *p = &x->positions[i];
		const int64_t open = position_open_cost(p);

		out[i] = (struct simx_position){
			.security_id = p->security_id, .position = p->position,
			.realised = p->cash + open,
			.unrealised = p->mark != 0 ? p->position * p->mark - open : 0,
			.mark = p->mark, .bought = p->bought, .sold = p->sold,
		};
	}
	return x->n_positions;
}

void
simx_stats(const struct simx *x, struct simx_stats *out)
{
	*out = x->stats;
}
