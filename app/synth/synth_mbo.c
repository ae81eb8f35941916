/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Market by order of tickwire-synth (see synth_mbo.h for the model and the
 * rules).  A price-level entry is applied to the order model by mutating the
 * level (orders cancelled, added, resized, moved to the tail, filled from the
 * front), then the order entries are the difference between the level before
 * and after: Deletes first, then New / Update in priority order.  Costs are
 * O(orders of the level squared) per entry, at most 40 x 40.
 *
 * Calibration (tests/synth/mbo_rates.py, unique packets).  The v9.1 example
 * capture (Cme.Mdp3.Sbe.v9.1.Example.pcap, 9 channels) is tiny: 52 unique
 * packets, 306 outright price-level entries of template 46 (152 New, 139
 * Delete, 15 Change) carrying 213 order entries (69 New, 92 Update, 52
 * Delete) and 6 template-47 entries: 0.72 order entries per price-level
 * entry, 2.7% of them in 47, actions New 32% / Update 42% / Delete 26%.
 * Those are the targets of the test synth_mbo_rates (mbo_rates.py --check:
 * +-15% relative for the entries per level entry, +-2 points for the 47
 * share, +-8 points per action).  To reach them --mbo drives the outright
 * book events by orders (synth_market.c book_event_mbo, MBO_ROLL_*): an
 * order moved to another price (synth_mbo_take: the level it leaves, a
 * Delete when it was the only order, which lets a deep level into view with
 * no order entry, then the New or Change it joins, one Update), an order at
 * a new level, one order cancelled (a Delete, or a Change of a level that
 * keeps others), few in-place quantity Changes, DeleteThru / DeleteFrom /
 * Overlay rarer; the deep book changes alone less often
 * (DEEP_EVENT_PER_MILLE).  tickwire-synth --mbo --reset-first --seed 17
 * --instruments 8 --events 50000 (the bench_feed capture): 68,481 outright
 * price-level entries (40% New, 36% Change, 23% Delete), 52,578 order
 * entries: 0.77 per price-level entry, 2.9% in 47, New 28% / Update 44% /
 * Delete 28% (was 1.39, 2.4%, 35/30/35 with the generator's Change-heavy
 * level mix).  Without --mbo the market model draws as before.
 */
#include <errno.h>
#include <string.h>

#include "synth_gen.h"
#include "synth_layout_gen.h"

#define O46(f) SYNTH_F_BOOK46_NO_ORDER_ID_ENTRIES_##f
#define O47(f) SYNTH_F_ORDER_BOOK47_NO_MD_ENTRIES_##f
#define S53(f) SYNTH_F_SNAPSHOT53_##f
#define S53E(f) SYNTH_F_SNAPSHOT53_NO_MD_ENTRIES_##f

enum { ORDER_NEW = 0, ORDER_UPDATE = 1, ORDER_DELETE = 2 };

/* Chance (per mille) that an event is followed by a change of the deep book
 * (template 47 alone), and that a Change also moves one order to the back of
 * its queue (a priority change). */
#define DEEP_EVENT_PER_MILLE 40
#define PRIORITY_CHANGE_PER_MILLE 30
/* A new price level has one order, two with this chance (per mille). */
#define NEW_LEVEL_TWO_PER_MILLE 50

static const char order_entry_type[2] = {
	SYNTH_V_MD_ENTRY_TYPE_BOOK_BID, SYNTH_V_MD_ENTRY_TYPE_BOOK_OFFER,
};

/* ---- the model ---- */

static bool
better(unsigned int side, int64_t a, int64_t b)
{
	return side == SYNTH_SIDE_BID ? a > b : a < b;
}

static int32_t
level_qty(const struct synth_order_level *lv)
{
	int32_t q = 0;
	unsigned int k;

	for (k = 0; k < lv->count; k++)
		q += lv->order[k].qty;
	return q;
}

static void
remove_level(struct synth_order_side *s, unsigned int at)
{
	memmove(&s->level[at], &s->level[at + 1], (s->count - at - 1u) * sizeof(s->level[0]));
	s->count--;
}

static void
remove_order(struct synth_order_level *lv, unsigned int at)
{
	memmove(&lv->order[at], &lv->order[at + 1], (lv->count - at - 1u) * sizeof(lv->order[0]));
	lv->count--;
}

/* The order at k loses its priority: new (highest) value, back of the queue. */
static void
to_back(struct synth_order_book *ob, struct synth_order_level *lv, unsigned int k)
{
	struct synth_order o = lv->order[k];

	remove_order(lv, k);
	o.priority = ob->next_priority++;
	lv->order[lv->count++] = o;
}

static void
append_order(struct synth_order_book *ob, struct synth_order_level *lv, int32_t qty)
{
	struct synth_order *o = &lv->order[lv->count++];

	o->id = ob->next_id++;
	o->priority = ob->next_priority++;
	o->qty = qty;
}

static bool
plan_push(struct synth_mbo *m, uint8_t action, unsigned int i, unsigned int side, bool deep,
		const struct synth_order *o, int64_t px)
{
	struct synth_mbo_op *op;

	if (m->plan_count >= SYNTH_MBO_PLAN_MAX)
		return false;
	op = &m->plan[m->plan_count++];
	op->action = action;
	op->side = (uint8_t)side;
	op->deep = deep;
	op->instrument = (uint16_t)i;
	op->id = o->id;
	op->priority = o->priority;
	op->px = px;
	op->qty = o->qty;
	m->counters.actions[action]++;
	return true;
}

/* Deletes for every order of a level. */
static int
plan_cancel_level(struct synth_mbo *m, unsigned int i, unsigned int side, bool deep,
		const struct synth_order_level *lv)
{
	unsigned int k;

	for (k = 0; k < lv->count; k++)
		if (!plan_push(m, ORDER_DELETE, i, side, deep, &lv->order[k], lv->px))
			return -ENOSPC;
	return 0;
}

/* The order entries turning level before into level after. */
static int
plan_diff(struct synth_mbo *m, unsigned int i, unsigned int side, bool deep,
		const struct synth_order_level *before, const struct synth_order_level *after)
{
	const struct synth_order *o, *p;
	unsigned int k, j;

	for (k = 0; k < before->count; k++) {
		o = &before->order[k];
		for (j = 0; j < after->count && after->order[j].id != o->id; j++)
			;
		if (j == after->count && !plan_push(m, ORDER_DELETE, i, side, deep, o, before->px))
			return -ENOSPC;
	}
	for (j = 0; j < after->count; j++) {
		p = &after->order[j];
		for (k = 0; k < before->count && before->order[k].id != p->id; k++)
			;
		if (k == before->count) {
			if (!plan_push(m, ORDER_NEW, i, side, deep, p, after->px))
				return -ENOSPC;
			continue;
		}
		o = &before->order[k];
		if (o->qty == p->qty && o->priority == p->priority && before->px == after->px)
			continue;
		if (!plan_push(m, ORDER_UPDATE, i, side, deep, p, after->px))
			return -ENOSPC;
		if (before->px != after->px)
			m->counters.price_changes++;
		else if (p->qty > o->qty)
			m->counters.qty_up++;
		else if (p->qty == o->qty)
			m->counters.priority_changes++;
	}
	return 0;
}

/* Orders of a new level: count orders sharing qty, each at least 1. */
static void
fill_new_level(struct synth_mbo *m, struct synth_order_book *ob, struct synth_order_level *lv,
		int32_t qty, int32_t count)
{
	int32_t rest = qty - count, k, x;

	lv->count = 0;
	for (k = 0; k < count; k++) {
		x = 0;
		if (k + 1 == count)
			x = rest;
		else if (rest > 0)
			x = (int32_t)synth_rng_below(&m->rng, (uint64_t)(rest / (count - k)) * 2 + 1);
		if (x > rest)
			x = rest;
		rest -= x;
		append_order(ob, lv, 1 + x);
	}
}

/* Orders added or cancelled and quantities changed until the level holds
 * count orders and qty in total (count <= qty). */
static void
transform(struct synth_mbo *m, struct synth_order_book *ob, struct synth_order_level *lv,
		int32_t qty, int32_t count)
{
	unsigned int added = 0, k, n;
	int32_t d, r;

	while (lv->count > count)
		remove_order(lv, (unsigned int)synth_rng_below(&m->rng, lv->count));
	while (lv->count < count) {
		append_order(ob, lv, 1);
		added++;
	}
	d = qty - level_qty(lv);
	n = lv->count;
	if (d > 0) {
		if (added > 0 && synth_rng_below(&m->rng, 4) != 0) {
			lv->order[n - 1].qty += d;   /* the new order brings it */
		} else {
			k = (unsigned int)synth_rng_below(&m->rng, n);
			lv->order[k].qty += d;
			if (k + added < n)           /* an old order raised: new priority */
				to_back(ob, lv, k);
		}
	} else if (d < 0) {
		k = (unsigned int)synth_rng_below(&m->rng, n);
		while (d < 0) {
			r = lv->order[k].qty - 1 < -d ? lv->order[k].qty - 1 : -d;
			lv->order[k].qty -= r;       /* down: the priority stays */
			d += r;
			k = (k + 1) % n;
		}
	}
	if (n > 1 + added && synth_rng_below(&m->rng, 1000) < PRIORITY_CHANGE_PER_MILLE)
		to_back(ob, lv, (unsigned int)synth_rng_below(&m->rng, n - 1 - added));
}

/* A Change of the level's quantity to qty as one order event, as most are:
 * more: a new order (one time in three) or an order raised (new priority); less: an
 * order of exactly that quantity cancelled, else one reduced (priority kept),
 * else orders cancelled from the back until one can be reduced.  Then now and
 * then a priority change.  The level's order count follows. */
static void
change_qty(struct synth_mbo *m, struct synth_order_book *ob, struct synth_order_level *lv,
		int32_t qty)
{
	int32_t d = qty - level_qty(lv);
	unsigned int k, n = lv->count, start;

	if (d > 0) {
		if (n < SYNTH_MBO_LEVEL_ORDERS && synth_rng_below(&m->rng, 3) == 0) {
			append_order(ob, lv, d);
			return;
		}
		k = (unsigned int)synth_rng_below(&m->rng, n);
		lv->order[k].qty += d;
		to_back(ob, lv, k);
		return;
	}
	start = (unsigned int)synth_rng_below(&m->rng, n);
	for (k = 0; k < n && lv->order[(start + k) % n].qty != -d; k++)
		;
	if (k < n && n > 1) {
		remove_order(lv, (start + k) % n);
	} else {
		while (lv->count > 1 && level_qty(lv) - lv->order[lv->count - 1].qty >= qty &&
				lv->order[lv->count - 1].qty <= -d) {
			d += lv->order[lv->count - 1].qty;
			lv->count--;
		}
		for (k = 0; d < 0; k = (k + 1) % lv->count) {
			int32_t r = lv->order[k].qty - 1 < -d ? lv->order[k].qty - 1 : -d;

			lv->order[k].qty -= r;
			d += r;
		}
	}
	n = lv->count;
	if (n > 1 && synth_rng_below(&m->rng, 1000) < PRIORITY_CHANGE_PER_MILLE)
		to_back(ob, lv, (unsigned int)synth_rng_below(&m->rng, n - 1));
}

/* A trade takes qty from the front of the queue. */
static void
fill_front(struct synth_mbo *m, struct synth_order_level *lv, int32_t qty)
{
	while (qty > 0 && lv->count > 0) {
		m->counters.fills++;
		if (lv->order[0].qty <= qty) {
			qty -= lv->order[0].qty;
			remove_order(lv, 0);
		} else {
			lv->order[0].qty -= qty;
			qty = 0;
		}
	}
}

static int32_t
new_level_orders(struct synth_mbo *m, int32_t qty)
{
	int32_t n = synth_rng_below(&m->rng, 1000) < NEW_LEVEL_TWO_PER_MILLE ? 2 : 1;

	return n > qty ? qty : n;
}

int32_t
synth_mbo_take(struct synth_gen *gen, unsigned int i, unsigned int side, unsigned int at,
		bool move)
{
	struct synth_mbo *m = gen->mbo;
	const struct synth_order_side *s = &m->book[i].side[side];
	const struct synth_order_level *lv;
	unsigned int k;

	if (at >= s->count || s->level[at].count == 0)
		return 0;
	lv = &s->level[at];
	k = (unsigned int)synth_rng_below(&m->rng, lv->count);
	m->take = move ? SYNTH_MBO_TAKE_MOVE : SYNTH_MBO_TAKE_CANCEL;
	m->take_instrument = (uint16_t)i;
	m->take_side = (uint8_t)side;
	m->take_id = lv->order[k].id;
	return lv->order[k].qty;
}

/* The entry removes the taken order from level at (cancelled: its Delete;
 * moved: held, no entry). */
static int
plan_take(struct synth_mbo *m, unsigned int i, unsigned int side, unsigned int at,
		struct synth_book_op *bop)
{
	struct synth_order_side *s = &m->book[i].side[side];
	struct synth_order_level *lv = &s->level[at];
	struct synth_order o;
	unsigned int k;
	int64_t px = lv->px;

	for (k = 0; k < lv->count && lv->order[k].id != m->take_id; k++)
		;
	if (k == lv->count)
		return -EPROTO;
	o = lv->order[k];
	remove_order(lv, k);
	if (bop->action == SYNTH_V_MD_UPDATE_ACTION_DELETE) {
		if (lv->count != 0)
			return -EPROTO;
		remove_level(s, at);
	} else if (lv->count == 0 || level_qty(lv) != bop->size) {
		return -EPROTO;
	} else {
		bop->orders = lv->count;
	}
	if (m->take == SYNTH_MBO_TAKE_MOVE) {
		m->held = o;
		m->take = SYNTH_MBO_TAKE_HELD;
		m->counters.moves++;
		return 0;
	}
	m->take = SYNTH_MBO_TAKE_NONE;
	m->counters.cancels++;
	return plan_push(m, ORDER_DELETE, i, side, false, &o, px) ? 0 : -ENOSPC;
}

/* The entry places the held order at lv (its new price): new priority, back
 * of the queue, one Update. */
static int
plan_place(struct synth_mbo *m, struct synth_order_book *ob, unsigned int i, unsigned int side,
		struct synth_order_level *lv, struct synth_book_op *bop)
{
	struct synth_order *o;

	if (lv->count >= SYNTH_MBO_LEVEL_ORDERS)
		return -EPROTO;
	o = &lv->order[lv->count++];
	*o = m->held;
	o->priority = ob->next_priority++;
	if (level_qty(lv) != bop->size)
		return -EPROTO;
	bop->orders = lv->count;
	m->take = SYNTH_MBO_TAKE_NONE;
	m->counters.price_changes++;
	return plan_push(m, ORDER_UPDATE, i, side, false, o, lv->px) ? 0 : -ENOSPC;
}

int
synth_mbo_plan(struct synth_gen *gen, unsigned int i, struct synth_book_op *bop)
{
	struct synth_mbo *m = gen->mbo;
	struct synth_order_book *ob = &m->book[i];
	struct synth_order_side *s = &ob->side[bop->side];
	unsigned int depth = gen->inst[i].book.depth, at = bop->level - 1u, k;
	struct synth_order_level before, *lv;
	int32_t count;
	bool taken;
	int rc = 0;

	m->plan_count = 0;
	m->counters.level_entries++;
	taken = m->take != SYNTH_MBO_TAKE_NONE && m->take_instrument == i &&
		m->take_side == bop->side;
	if (taken && m->take != SYNTH_MBO_TAKE_HELD &&
			(bop->action == SYNTH_V_MD_UPDATE_ACTION_CHANGE ||
			 bop->action == SYNTH_V_MD_UPDATE_ACTION_DELETE)) {
		if (at >= s->count)
			return -EPROTO;
		return plan_take(m, i, bop->side, at, bop);
	}
	switch (bop->action) {
	case SYNTH_V_MD_UPDATE_ACTION_NEW:
		if (at < s->count && s->level[at].px == bop->px) {
			/* the best deep level comes into view: no order entry */
			bop->size = level_qty(&s->level[at]);
			bop->orders = s->level[at].count;
			return 0;
		}
		if (at > s->count || bop->size < 1)
			return -EPROTO;
		if (s->count >= SYNTH_MBO_LEVELS) {
			rc = plan_cancel_level(m, i, bop->side, true, &s->level[s->count - 1u]);
			s->count--;
		}
		memmove(&s->level[at + 1], &s->level[at], (s->count - at) * sizeof(s->level[0]));
		s->count++;
		lv = &s->level[at];
		lv->px = bop->px;
		if (taken) {
			lv->count = 0;
			return rc < 0 ? rc : plan_place(m, ob, i, bop->side, lv, bop);
		}
		count = gen->origin != NULL && strcmp(gen->origin, "event") == 0 ?
			new_level_orders(m, bop->size) : bop->orders;
		if (count > SYNTH_MBO_LEVEL_ORDERS)
			count = SYNTH_MBO_LEVEL_ORDERS;
		fill_new_level(m, ob, lv, bop->size, count);
		bop->orders = count;
		before.count = 0;
		before.px = lv->px;
		return rc < 0 ? rc : plan_diff(m, i, bop->side, false, &before, lv);
	case SYNTH_V_MD_UPDATE_ACTION_CHANGE:
	case SYNTH_V_MD_UPDATE_ACTION_OVERLAY:
		if (at >= s->count || bop->size < 1)
			return -EPROTO;
		lv = &s->level[at];
		if (taken && bop->action == SYNTH_V_MD_UPDATE_ACTION_CHANGE)
			return plan_place(m, ob, i, bop->side, lv, bop);
		before = *lv;
		if (bop->action == SYNTH_V_MD_UPDATE_ACTION_CHANGE && m->fill > 0) {
			fill_front(m, lv, m->fill);
			m->fill = 0;
			if (level_qty(lv) != bop->size)
				return -EPROTO;
			bop->orders = lv->count;
		} else {
			count = bop->orders < 1 ? 1 : bop->orders;
			if (count > SYNTH_MBO_LEVEL_ORDERS)
				count = SYNTH_MBO_LEVEL_ORDERS;
			if (count > bop->size)
				count = bop->size;
			if (bop->action == SYNTH_V_MD_UPDATE_ACTION_OVERLAY) {
				/* the orders that stay move to the new price (new priority) */
				lv->px = bop->px;
				for (k = 0; k < lv->count; k++)
					lv->order[k].priority = ob->next_priority++;
				transform(m, ob, lv, bop->size, count);
			} else {
				change_qty(m, ob, lv, bop->size);
			}
			bop->orders = lv->count;
		}
		return plan_diff(m, i, bop->side, false, &before, lv);
	case SYNTH_V_MD_UPDATE_ACTION_DELETE:
		if (at >= s->count)
			return -EPROTO;
		rc = plan_cancel_level(m, i, bop->side, false, &s->level[at]);
		remove_level(s, at);
		return rc;
	case SYNTH_V_MD_UPDATE_ACTION_DELETE_FROM:
		if (bop->level > s->count)
			return -EPROTO;
		for (k = 0; rc == 0 && k < bop->level; k++)
			rc = plan_cancel_level(m, i, bop->side, false, &s->level[k]);
		memmove(&s->level[0], &s->level[bop->level],
				(s->count - bop->level) * sizeof(s->level[0]));
		s->count = (uint8_t)(s->count - bop->level);
		return rc;
	case SYNTH_V_MD_UPDATE_ACTION_DELETE_THRU:
		/* the visible levels are cancelled; the deep ones then come into view */
		for (k = 0; rc == 0 && k < s->count && k < depth; k++)
			rc = plan_cancel_level(m, i, bop->side, false, &s->level[k]);
		k = s->count < depth ? s->count : depth;
		memmove(&s->level[0], &s->level[k], (s->count - k) * sizeof(s->level[0]));
		s->count = (uint8_t)(s->count - k);
		return rc;
	default:
		return -EPROTO;
	}
}

/* ---- writing the entries ---- */

static struct synth_op *
truth_op(struct synth_gen *gen, const struct synth_mbo_op *mop)
{
	struct synth_op *op;

	if (gen->msg_op_count >= sizeof(gen->msg_ops) / sizeof(gen->msg_ops[0]))
		return NULL;
	op = &gen->msg_ops[gen->msg_op_count++];
	memset(op, 0, sizeof(*op));
	op->kind = SYNTH_OP_ORDER;
	op->instrument = mop->instrument;
	op->transact_time = gen->event_time;
	op->order_id = mop->id;
	op->priority = mop->priority;
	op->book.action = mop->action;
	op->book.side = mop->side;
	op->book.px = mop->px;
	op->book.size = mop->qty;
	return op;
}

static uint16_t
group_block_length(const struct synth_msg *msg, unsigned int group)
{
	unsigned int k;

	for (k = 0; k < msg->layout->root.group_count; k++)
		if (msg->layout->root.groups[k].index == group)
			return msg->layout->root.groups[k].block_length;
	return UINT16_MAX;
}

static bool
room(const struct synth_gen *gen, unsigned int group)
{
	return gen->msg->count[group] < SYNTH_MAX_ENTRIES &&
		gen->msg_op_count < sizeof(gen->msg_ops) / sizeof(gen->msg_ops[0]) &&
		synth_msg_size(gen->msg) + group_block_length(gen->msg, group) +
		SYNTH_PACKET_HEADER_SIZE <= gen->max_payload;
}

int
synth_mbo_write(struct synth_gen *gen, unsigned int reference)
{
	struct synth_mbo *m = gen->mbo;
	const struct synth_mbo_op *mop;
	struct synth_value *e;
	unsigned int k;

	for (k = 0; k < m->plan_count; k++) {
		mop = &m->plan[k];
		if (mop->deep || !room(gen, SYNTH_G_BOOK46_NO_ORDER_ID_ENTRIES)) {
			if (m->spill_count >= SYNTH_MBO_SPILL_MAX)
				return -ENOSPC;
			m->spill[m->spill_count++] = *mop;
			continue;
		}
		e = synth_msg_add_entry(gen->msg, SYNTH_G_BOOK46_NO_ORDER_ID_ENTRIES);
		if (e == NULL || truth_op(gen, mop) == NULL)
			return -ENOSPC;
		synth_set_uint(&e[O46(ORDER_ID)], mop->id);
		synth_set_uint(&e[O46(MD_ORDER_PRIORITY)], mop->priority);
		synth_set_int(&e[O46(MD_DISPLAY_QTY)], mop->qty);
		synth_set_uint(&e[O46(REFERENCE_ID)], reference);
		synth_set_uint(&e[O46(ORDER_UPDATE_ACTION)], mop->action);
		m->counters.order_entries_46++;
	}
	m->plan_count = 0;
	return 0;
}

int
synth_mbo_flush(struct synth_gen *gen, unsigned int match_event_indicator)
{
	struct synth_mbo *m = gen->mbo;
	const struct synth_mbo_op *mop;
	struct synth_value *e;
	unsigned int k = 0;
	int rc;

	while (k < m->spill_count) {
		rc = synth_msg_init(gen->msg, SYNTH_T_ORDER_BOOK47, gen->opt->version);
		if (rc < 0)
			return rc;
		gen->msg_op_count = 0;
		synth_set_uint(&gen->msg->root[SYNTH_F_ORDER_BOOK47_TRANSACT_TIME], gen->event_time);
		while (k < m->spill_count && room(gen, SYNTH_G_ORDER_BOOK47_NO_MD_ENTRIES)) {
			mop = &m->spill[k++];
			e = synth_msg_add_entry(gen->msg, SYNTH_G_ORDER_BOOK47_NO_MD_ENTRIES);
			if (e == NULL || truth_op(gen, mop) == NULL)
				return -ENOSPC;
			synth_set_uint(&e[O47(ORDER_ID)], mop->id);
			synth_set_uint(&e[O47(MD_ORDER_PRIORITY)], mop->priority);
			synth_set_int(&e[O47(MD_ENTRY_PX)], mop->px);
			synth_set_int(&e[O47(MD_DISPLAY_QTY)], mop->qty);
			synth_set_int(&e[O47(SECURITY_ID)], gen->inst[mop->instrument].book.security_id);
			synth_set_uint(&e[O47(MD_UPDATE_ACTION)], mop->action);
			synth_set_uint(&e[O47(MD_ENTRY_TYPE)], (uint8_t)order_entry_type[mop->side]);
			m->counters.order_entries_47++;
		}
		if (gen->msg->count[SYNTH_G_ORDER_BOOK47_NO_MD_ENTRIES] == 0)
			return -EMSGSIZE;
		synth_set_uint(&gen->msg->root[SYNTH_F_ORDER_BOOK47_MATCH_EVENT_INDICATOR],
				k == m->spill_count ? match_event_indicator : 0);
		rc = synth_gen_emit(gen);
		if (rc < 0)
			return rc;
	}
	m->spill_count = 0;
	return 0;
}

int
synth_mbo_deep_event(struct synth_gen *gen)
{
	struct synth_mbo *m = gen->mbo;
	unsigned int i, side, depth, at, k;
	struct synth_order_level before, *lv;
	struct synth_order_book *ob;
	struct synth_order_side *s;
	int rc;

	if (synth_rng_below(&m->rng, 1000) >= DEEP_EVENT_PER_MILLE)
		return 0;
	i = (unsigned int)synth_rng_below(&m->rng, gen->instrument_count);
	side = (unsigned int)synth_rng_below(&m->rng, 2);
	ob = &m->book[i];
	s = &ob->side[side];
	depth = gen->inst[i].book.depth;
	if (s->count <= depth)
		return 0;
	at = depth + (unsigned int)synth_rng_below(&m->rng, s->count - depth);
	lv = &s->level[at];
	before = *lv;
	switch (synth_rng_below(&m->rng, 3)) {
	case 0:
		if (lv->count < SYNTH_MBO_LEVEL_ORDERS) {
			append_order(ob, lv, (int32_t)synth_rng_range(&m->rng, 1, 12));
			break;
		}
		/* fall through */
	case 1:
		if (lv->count > 1) {
			remove_order(lv, (unsigned int)synth_rng_below(&m->rng, lv->count));
			break;
		}
		/* fall through */
	default:
		k = (unsigned int)synth_rng_below(&m->rng, lv->count);
		if (lv->order[k].qty > 1) {
			lv->order[k].qty--;
		} else {
			lv->order[k].qty++;
			to_back(ob, lv, k);
		}
		break;
	}
	m->plan_count = 0;
	rc = plan_diff(m, i, side, true, &before, lv);
	if (rc == 0)
		rc = synth_mbo_write(gen, 0);
	return rc < 0 ? rc : synth_mbo_flush(gen, SYNTH_B_MATCH_EVENT_INDICATOR_LAST_QUOTE_MSG |
			SYNTH_B_MATCH_EVENT_INDICATOR_END_OF_EVENT);
}

int64_t
synth_mbo_level_px(const struct synth_gen *gen, unsigned int i, unsigned int side,
		unsigned int at, int64_t none)
{
	const struct synth_order_side *s = &gen->mbo->book[i].side[side];

	return at < s->count ? s->level[at].px : none;
}

/* ---- the truth ---- */

static bool
find(struct synth_order_book *ob, uint64_t id, unsigned int *side, unsigned int *at,
		unsigned int *k)
{
	struct synth_order_level *lv;

	for (*side = 0; *side < 2; (*side)++)
		for (*at = 0; *at < ob->side[*side].count; (*at)++)
			for (lv = &ob->side[*side].level[*at], *k = 0; *k < lv->count; (*k)++)
				if (lv->order[*k].id == id)
					return true;
	return false;
}

int
synth_mbo_apply(struct synth_order_book *ob, const struct synth_op *op)
{
	unsigned int side, at, k;
	struct synth_order_side *s;
	struct synth_order_level *lv;
	struct synth_order o;
	bool found = find(ob, op->order_id, &side, &at, &k);

	if (found) {
		lv = &ob->side[side].level[at];
		remove_order(lv, k);
		if (lv->count == 0)
			remove_level(&ob->side[side], at);
	}
	if (op->book.action == ORDER_DELETE)
		return found ? 0 : -EPROTO;
	if (found != (op->book.action == ORDER_UPDATE) || op->book.side > 1)
		return -EPROTO;
	s = &ob->side[op->book.side];
	for (at = 0; at < s->count && better(op->book.side, s->level[at].px, op->book.px); at++)
		;
	if (at == s->count || s->level[at].px != op->book.px) {
		if (s->count >= SYNTH_MBO_LEVELS + 2)
			return -ENOSPC;
		memmove(&s->level[at + 1], &s->level[at], (s->count - at) * sizeof(s->level[0]));
		s->count++;
		s->level[at].px = op->book.px;
		s->level[at].count = 0;
	}
	lv = &s->level[at];
	if (lv->count >= SYNTH_MBO_LEVEL_ORDERS + 8)
		return -ENOSPC;
	for (k = lv->count; k > 0 && lv->order[k - 1].priority > op->priority; k--)
		;
	memmove(&lv->order[k + 1], &lv->order[k], (lv->count - k) * sizeof(lv->order[0]));
	lv->count++;
	o.id = op->order_id;
	o.priority = op->priority;
	o.qty = op->book.size;
	lv->order[k] = o;
	return 0;
}

void
synth_mbo_clear(struct synth_order_book *ob)
{
	ob->side[0].count = 0;
	ob->side[1].count = 0;
}

bool
synth_mbo_equal(const struct synth_order_book *a, const struct synth_order_book *b)
{
	const struct synth_order_level *x, *y;
	unsigned int side, at, k;

	for (side = 0; side < 2; side++) {
		if (a->side[side].count != b->side[side].count)
			return false;
		for (at = 0; at < a->side[side].count; at++) {
			x = &a->side[side].level[at];
			y = &b->side[side].level[at];
			if (x->px != y->px || x->count != y->count)
				return false;
			for (k = 0; k < x->count; k++)
				if (x->order[k].id != y->order[k].id ||
						x->order[k].priority != y->order[k].priority ||
						x->order[k].qty != y->order[k].qty)
					return false;
		}
	}
	return true;
}

/* ---- snapshot 53 ---- */

int
synth_mbo_snapshot(struct synth_gen *gen, struct synth_msg *msg, unsigned int i,
		uint32_t last_seq, uint32_t reports, uint32_t chunk, uint32_t *chunks)
{
	const struct synth_order_book *ob = &gen->mbo->truth[i];
	const struct synth_book *t = &gen->inst[i].truth;
	const struct synth_order_level *lv;
	uint32_t total = 0, per, first, n = 0;
	unsigned int side, at, k;
	struct synth_value *e;
	size_t empty;
	int rc = synth_msg_init(msg, SYNTH_T_SNAPSHOT53, gen->opt->version);

	if (rc < 0)
		return rc;
	for (side = 0; side < 2; side++)
		for (at = 0; at < ob->side[side].count; at++)
			total += ob->side[side].level[at].count;
	empty = synth_msg_size(msg) + SYNTH_PACKET_HEADER_SIZE;
	per = (uint32_t)((gen->max_payload - empty) /
			group_block_length(msg, SYNTH_G_SNAPSHOT53_NO_MD_ENTRIES));
	if (per > SYNTH_MAX_ENTRIES)
		per = SYNTH_MAX_ENTRIES;
	*chunks = total == 0 ? 1 : (total + per - 1) / per;
	synth_set_uint(&msg->root[S53(LAST_MSG_SEQ_NUM_PROCESSED)], last_seq);
	synth_set_uint(&msg->root[S53(TOT_NUM_REPORTS)], reports);
	synth_set_int(&msg->root[S53(SECURITY_ID)], t->security_id);
	synth_set_uint(&msg->root[S53(NO_CHUNKS)], *chunks);
	synth_set_uint(&msg->root[S53(CURRENT_CHUNK)], chunk);
	synth_set_uint(&msg->root[S53(TRANSACT_TIME)], t->transact_time != 0 ?
			t->transact_time : gen->opt->start_ns);
	first = (chunk - 1) * per;
	for (side = 0; side < 2; side++) {
		for (at = 0; at < ob->side[side].count; at++) {
			lv = &ob->side[side].level[at];
			for (k = 0; k < lv->count; k++, n++) {
				if (n < first || n >= first + per)
					continue;
				e = synth_msg_add_entry(msg, SYNTH_G_SNAPSHOT53_NO_MD_ENTRIES);
				if (e == NULL)
					return -ENOSPC;
				synth_set_uint(&e[S53E(ORDER_ID)], lv->order[k].id);
				synth_set_uint(&e[S53E(MD_ORDER_PRIORITY)], lv->order[k].priority);
				synth_set_int(&e[S53E(MD_ENTRY_PX)], lv->px);
				synth_set_int(&e[S53E(MD_DISPLAY_QTY)], lv->order[k].qty);
				synth_set_uint(&e[S53E(MD_ENTRY_TYPE)], (uint8_t)order_entry_type[side]);
			}
		}
	}
	gen->mbo->counters.snapshot53++;
	return 0;
}
