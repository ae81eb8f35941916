/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Market model of tickwire-synth: instruments drawn from a few CME-like
 * products, and random events turned into MDP 3.0 messages.
 *
 * Invariants kept on the generator's book after every entry (and checked by
 * tests on the truth): prices are multiples of the instrument's tick and
 * positive; bids strictly descend and offers strictly ascend; no bid (outright
 * or implied) is at or above any offer (outright or implied); an outright side
 * holds at most the instrument's depth, an implied side at most 2 levels.
 *
 * Event mix per Hawkes arrival (instrument chosen by weight, front months
 * busier): change a level's size 38%, new level 20%, delete a level (and
 * usually add one at the bottom, as CME does) 14%, trade 12% (trade summary,
 * then Delete / DeleteFrom / Change of the levels it took, then new levels),
 * implied book update 11%, overlay 2.5%, DeleteThru and rebuild of a side 1.5%,
 * DeleteFrom (top levels pulled) 0.5%, security status (halt / resume) 0.5%.
 * A book event sometimes carries an implied update of another instrument in
 * the same message.  A side with fewer than two levels is refilled first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "synth_gen.h"
#include "synth_layout_gen.h"

#define NS_PER_S UINT64_C(1000000000)
#define NS_PER_DAY (UINT64_C(86400) * NS_PER_S)
#define PRICE9 INT64_C(1000000000)

/* code, exchange, CFI, unit, currency, tick, start price, display factor,
 * unit qty, tick value, depth, segment, underlying product, algorithm, max vol */
static const struct synth_product products[] = {
	{ "ES", "XCME", "FFIXSX", "IPNT", "USD", 250000000, 5025 * PRICE9, PRICE9,
		50 * PRICE9, 12500000000, 10, 64, 5, 'F', 3000 },
	{ "ZN", "XCBT", "FFDXSX", "USD", "USD", 15625000, 110 * PRICE9 + 500000000, PRICE9,
		100000 * PRICE9, 15625000000, 10, 82, 14, 'K', 5000 },
	{ "CL", "XNYM", "FCEPSX", "BBL", "USD", 10000000, 78 * PRICE9 + 500000000, PRICE9,
		1000 * PRICE9, 10 * PRICE9, 10, 80, 16, 'F', 2000 },
	{ "GC", "XCEC", "FCMPSX", "OZTR", "USD", 100000000, 2050 * PRICE9, PRICE9,
		100 * PRICE9, 10 * PRICE9, 10, 76, 17, 'F', 1000 },
	{ "6E", "XCME", "FFCPSX", "EUR", "USD", 50000, 1085000000, PRICE9,
		125000 * PRICE9, 6250000000, 10, 68, 4, 'F', 5000 },
	{ "NQ", "XCME", "FFIXSX", "IPNT", "USD", 250000000, 18000 * PRICE9, PRICE9,
		20 * PRICE9, 5 * PRICE9, 10, 64, 5, 'F', 2000 },
	{ "ZC", "XCBT", "FCAPSX", "BU", "USD", 250000000, 450 * PRICE9, 10000000,
		5000 * PRICE9, 12500000000, 5, 74, 2, 'K', 5000 },
	{ "SR3", "XCME", "FFDXSX", "USD", "USD", 5000000, 95 * PRICE9, PRICE9,
		2500 * PRICE9, 12500000000, 5, 82, 14, 'K', 5000 },
};
#define PRODUCT_COUNT (sizeof(products) / sizeof(products[0]))

static const char month_code[] = { 'H', 'M', 'U', 'Z' };
static const uint8_t month_number[] = { 3, 6, 9, 12 };

#define STATUS_READY SYNTH_V_SECURITY_TRADING_STATUS_READY_TO_TRADE
#define STATUS_HALT SYNTH_V_SECURITY_TRADING_STATUS_TRADING_HALT
#define STATUS_PRE_OPEN SYNTH_V_SECURITY_TRADING_STATUS_PRE_OPEN

#define MEI_END SYNTH_B_MATCH_EVENT_INDICATOR_END_OF_EVENT
#define MEI_QUOTE SYNTH_B_MATCH_EVENT_INDICATOR_LAST_QUOTE_MSG
#define MEI_IMPLIED SYNTH_B_MATCH_EVENT_INDICATOR_LAST_IMPLIED_MSG
#define MEI_TRADE SYNTH_B_MATCH_EVENT_INDICATOR_LAST_TRADE_MSG

#define BOOK_E(f) SYNTH_F_BOOK46_NO_MD_ENTRIES_##f
#define TRADE_E(f) SYNTH_F_TRADE48_NO_MD_ENTRIES_##f
#define TRADE_O(f) SYNTH_F_TRADE48_NO_ORDER_ID_ENTRIES_##f
#define SNAP(f) SYNTH_F_SNAPSHOT52_##f
#define SNAP_E(f) SYNTH_F_SNAPSHOT52_NO_MD_ENTRIES_##f
#define DEF(f) SYNTH_F_FUTURE54_##f

/* --mbo: the outright book events as order events (book_event_mbo), by roll
 * out of 765: in-place quantity change, order moved to another price, order
 * at a new level, order cancelled, Overlay, DeleteThru, DeleteFrom.  Tuned
 * to the v9.1 sample's order-entry rates (synth_mbo.c). */
#define MBO_ROLL_CHANGE 30
#define MBO_ROLL_MOVE 300
#define MBO_ROLL_NEW 580
#define MBO_ROLL_CANCEL 755
#define MBO_ROLL_OVERLAY 758
#define MBO_ROLL_DELETE_THRU 760
/* A moved order joins an existing level (else a new one) with this chance. */
#define MBO_MOVE_JOIN_PER_MILLE 100
#define STATUS(f) SYNTH_F_SECURITY_STATUS30_##f

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t
days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static uint16_t
trade_date(const struct synth_gen *gen)
{
	return (uint16_t)(gen->opt->start_ns / NS_PER_DAY);
}

void
synth_market_init(struct synth_gen *gen)
{
	struct synth_instrument *inst;
	const struct synth_product *p;
	unsigned int i, month;
	int64_t band;

	gen->total_weight = 0;
	for (i = 0; i < gen->instrument_count; i++) {
		inst = &gen->inst[i];
		memset(inst, 0, sizeof(*inst));
		p = &products[i % PRODUCT_COUNT];
		month = i / PRODUCT_COUNT;
		inst->product = p;
		inst->maturity_month = month_number[month % 4];
		inst->maturity_year = (uint16_t)(2024 + month / 4);
		snprintf(inst->symbol, sizeof(inst->symbol), "%s%c%u", p->code,
				month_code[month % 4], (inst->maturity_year % 10));
		inst->weight = 1000 / (1 + month) * (i % PRODUCT_COUNT == 0 ? 3 : 1);
		gen->total_weight += inst->weight;
		inst->ref_px = p->ref_px + (int64_t)month * 4 * p->tick;
		band = inst->ref_px / 14 / p->tick * p->tick;
		inst->high_limit = inst->ref_px + band;
		inst->low_limit = inst->ref_px - band;
		inst->max_variation = 40 * p->tick;
		inst->next_order_id = (uint64_t)(100000 + i) * 1000000u;
		inst->last_update_time = gen->opt->start_ns - NS_PER_DAY;
		inst->book.security_id = (int32_t)(100000 + (i % PRODUCT_COUNT) * 1000 + month);
		inst->book.depth = p->depth;
		inst->book.status = STATUS_PRE_OPEN;
		inst->truth = inst->book;
	}
}

/* ---- message building ---- */

static int
begin_msg(struct synth_gen *gen, uint16_t template_id)
{
	int rc = synth_msg_init(gen->msg, template_id, gen->opt->version);

	gen->msg_op_count = 0;
	return rc;
}

static int
end_msg(struct synth_gen *gen, unsigned int match_event_indicator)
{
	struct synth_value *root = gen->msg->root;
	int rc;

	switch (gen->msg->layout->template_id) {
	case SYNTH_T_BOOK46:
		if (gen->msg->count[SYNTH_G_BOOK46_NO_MD_ENTRIES] == 0)
			return 0; /* nothing could be done: no empty message */
		if (gen->mbo != NULL && gen->mbo->spill_count > 0) {
			/* order entries follow in 47: the event ends with them */
			synth_set_uint(&root[SYNTH_F_BOOK46_MATCH_EVENT_INDICATOR],
					match_event_indicator & ~(unsigned int)(MEI_END | MEI_QUOTE));
			rc = synth_gen_emit(gen);
			return rc < 0 ? rc : synth_mbo_flush(gen, match_event_indicator);
		}
		synth_set_uint(&root[SYNTH_F_BOOK46_MATCH_EVENT_INDICATOR], match_event_indicator);
		break;
	case SYNTH_T_TRADE48:
		synth_set_uint(&root[SYNTH_F_TRADE48_MATCH_EVENT_INDICATOR],
				match_event_indicator);
		break;
	case SYNTH_T_SECURITY_STATUS30:
		synth_set_uint(&root[STATUS(MATCH_EVENT_INDICATOR)], match_event_indicator);
		break;
	case SYNTH_T_CHANNEL_RESET4:
		synth_set_uint(&root[SYNTH_F_CHANNEL_RESET4_MATCH_EVENT_INDICATOR],
				match_event_indicator);
		break;
	case SYNTH_T_FUTURE54:
		synth_set_uint(&root[DEF(MATCH_EVENT_INDICATOR)], match_event_indicator);
		break;
	default:
		break;
	}
	return synth_gen_emit(gen);
}

static struct synth_op *
add_op(struct synth_gen *gen, uint8_t kind, unsigned int i)
{
	struct synth_op *op;

	if (gen->msg_op_count >= sizeof(gen->msg_ops) / sizeof(gen->msg_ops[0]))
		return NULL;
	op = &gen->msg_ops[gen->msg_op_count++];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->instrument = (uint16_t)i;
	op->transact_time = gen->event_time;
	return op;
}

static const char book_entry_type[SYNTH_SIDE_COUNT] = {
	SYNTH_V_MD_ENTRY_TYPE_BOOK_BID, SYNTH_V_MD_ENTRY_TYPE_BOOK_OFFER,
	SYNTH_V_MD_ENTRY_TYPE_BOOK_IMPLIED_BID, SYNTH_V_MD_ENTRY_TYPE_BOOK_IMPLIED_OFFER,
};

static const char snapshot_entry_type[SYNTH_SIDE_COUNT] = {
	SYNTH_V_MD_ENTRY_TYPE_BID, SYNTH_V_MD_ENTRY_TYPE_OFFER,
	SYNTH_V_MD_ENTRY_TYPE_IMPLIED_BID, SYNTH_V_MD_ENTRY_TYPE_IMPLIED_OFFER,
};

static int begin_book_msg(struct synth_gen *gen);

/* Write one Book46 entry and apply it to the generator's book. */
static int
book_entry(struct synth_gen *gen, unsigned int i, uint8_t action, unsigned int side,
		unsigned int level, int64_t px, int32_t size, int32_t orders)
{
	struct synth_instrument *inst = &gen->inst[i];
	struct synth_book_op bop = {
		.action = action, .side = (uint8_t)side, .level = (uint8_t)level,
		.px = px, .size = size, .orders = side >= SYNTH_SIDE_IMPLIED_BID ? 0 : orders,
	};
	bool mbo = gen->mbo != NULL && side < SYNTH_SIDE_IMPLIED_BID;
	struct synth_value *e;
	struct synth_op *op;
	int64_t deep_px;
	int rc;

	/* A message that would not fit a packet goes out, the event goes on in another. */
	if (synth_msg_size(gen->msg) + gen->msg->layout->root.groups[0].block_length +
			SYNTH_PACKET_HEADER_SIZE > gen->max_payload ||
			gen->msg->count[SYNTH_G_BOOK46_NO_MD_ENTRIES] >= SYNTH_MAX_ENTRIES) {
		rc = end_msg(gen, 0);
		if (rc == 0)
			rc = begin_book_msg(gen);
		if (rc < 0)
			return rc;
	}
	if (mbo && synth_mbo_plan(gen, i, &bop) < 0)
		return -EPROTO; /* a generator bug: the entry does not fit the orders */
	if (synth_book_apply(&inst->book, &bop) < 0)
		return -EPROTO; /* a generator bug: the entry breaks the book rules */
	e = synth_msg_add_entry(gen->msg, SYNTH_G_BOOK46_NO_MD_ENTRIES);
	op = add_op(gen, SYNTH_OP_BOOK, i);
	if (e == NULL || op == NULL)
		return -ENOSPC;
	inst->book.rpt_seq++;
	inst->book.transact_time = gen->event_time;
	synth_set_int(&e[BOOK_E(MD_ENTRY_PX)], px);
	synth_set_int(&e[BOOK_E(MD_ENTRY_SIZE)], bop.size);
	synth_set_int(&e[BOOK_E(SECURITY_ID)], inst->book.security_id);
	synth_set_uint(&e[BOOK_E(RPT_SEQ)], inst->book.rpt_seq);
	if (side < SYNTH_SIDE_IMPLIED_BID)
		synth_set_int(&e[BOOK_E(NUMBER_OF_ORDERS)], bop.orders);
	else
		synth_set_int(&e[BOOK_E(TRADEABLE_SIZE)], size);
	synth_set_uint(&e[BOOK_E(MD_PRICE_LEVEL)], level);
	synth_set_uint(&e[BOOK_E(MD_UPDATE_ACTION)], action);
	synth_set_uint(&e[BOOK_E(MD_ENTRY_TYPE)], (uint8_t)book_entry_type[side]);
	op->rpt_seq = inst->book.rpt_seq;
	op->book = bop;
	gen->counters.actions[action < 6 ? action : 0]++;
	gen->counters.implied_entries += side >= SYNTH_SIDE_IMPLIED_BID;
	if (!mbo)
		return 0;
	rc = synth_mbo_write(gen, gen->msg->count[SYNTH_G_BOOK46_NO_MD_ENTRIES]);
	/* A level gone from view lets the best deep one in (a New, no order entry). */
	while (rc == 0 && (action == SYNTH_V_MD_UPDATE_ACTION_DELETE ||
			action == SYNTH_V_MD_UPDATE_ACTION_DELETE_FROM ||
			action == SYNTH_V_MD_UPDATE_ACTION_DELETE_THRU) &&
			inst->book.side[side].count < inst->book.depth &&
			(deep_px = synth_mbo_level_px(gen, i, side, inst->book.side[side].count,
					0)) != 0)
		rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_NEW, side,
				inst->book.side[side].count + 1u, deep_px, 0, 0);
	return rc;
}

static int
begin_book_msg(struct synth_gen *gen)
{
	int rc = begin_msg(gen, SYNTH_T_BOOK46);

	if (rc == 0)
		synth_set_uint(&gen->msg->root[SYNTH_F_BOOK46_TRANSACT_TIME], gen->event_time);
	return rc;
}

/* ---- prices and sizes ---- */

static int64_t
best_px(const struct synth_side *s, int64_t none)
{
	return s->count > 0 ? s->level[0].px : none;
}

/* Highest price a new bid (outright or implied) may take. */
static int64_t
bid_cap(const struct synth_instrument *inst)
{
	const struct synth_book *b = &inst->book;
	int64_t tick = inst->product->tick;
	int64_t cap = best_px(&b->side[SYNTH_SIDE_OFFER], INT64_MAX);
	int64_t implied = best_px(&b->side[SYNTH_SIDE_IMPLIED_OFFER], INT64_MAX);

	if (implied < cap)
		cap = implied;
	if (cap == INT64_MAX)
		cap = inst->ref_px + tick;
	return cap - tick;
}

/* Lowest price a new offer may take. */
static int64_t
offer_floor(const struct synth_instrument *inst)
{
	const struct synth_book *b = &inst->book;
	int64_t tick = inst->product->tick;
	int64_t floor = best_px(&b->side[SYNTH_SIDE_BID], INT64_MIN);
	int64_t implied = best_px(&b->side[SYNTH_SIDE_IMPLIED_BID], INT64_MIN);

	if (implied > floor)
		floor = implied;
	if (floor == INT64_MIN)
		floor = inst->ref_px;
	return floor + tick;
}

/* A price in ticks between inner (best allowed) and outer (worst), inclusive. */
static bool
pick_price(struct synth_gen *gen, const struct synth_instrument *inst, bool bid,
		int64_t inner, int64_t outer, int64_t *px)
{
	int64_t tick = inst->product->tick, lo, hi, n;

	lo = bid ? outer : inner;
	hi = bid ? inner : outer;
	if (lo < tick)
		lo = tick;
	if (lo > hi)
		return false;
	n = (hi - lo) / tick;
	/* Prefer prices near the inner end (a book is denser near the touch). */
	n = synth_rng_range(&gen->market_rng, 0, synth_rng_range(&gen->market_rng, 0, n));
	*px = bid ? hi - n * tick : lo + n * tick;
	return true;
}

/* Price for a New at level (1-based) of side; false when no tick is free. */
static bool
new_price(struct synth_gen *gen, const struct synth_instrument *inst, unsigned int side,
		unsigned int level, int64_t *px)
{
	const struct synth_side *s = &inst->book.side[side];
	int64_t tick = inst->product->tick, inner, outer;
	bool bid = synth_side_is_bid(side);
	int64_t step = bid ? -tick : tick;

	if (level == 1)
		inner = bid ? bid_cap(inst) : offer_floor(inst);
	else
		inner = s->level[level - 2].px + step;
	if (level <= s->count)
		outer = s->level[level - 1].px - step;
	else if (s->count == 0)
		outer = inner + 4 * step;
	else
		outer = s->level[s->count - 1].px + 3 * step;
	return pick_price(gen, inst, bid, inner, outer, px);
}

static int32_t
random_size(struct synth_gen *gen)
{
	int32_t size = (int32_t)synth_rng_range(&gen->market_rng, 1, 12);

	if (synth_rng_below(&gen->market_rng, 5) == 0)
		size += (int32_t)synth_rng_range(&gen->market_rng, 0, 250);
	return size;
}

static int32_t
random_orders(struct synth_gen *gen, int32_t size)
{
	return (int32_t)synth_rng_range(&gen->market_rng, 1, size < 25 ? size : 25);
}

/* Level index biased to the top of a side of count levels (1-based). */
static unsigned int
pick_level(struct synth_gen *gen, unsigned int count)
{
	uint64_t a = synth_rng_below(&gen->market_rng, count);
	uint64_t b = synth_rng_below(&gen->market_rng, count);

	return 1 + (unsigned int)(a < b ? a : b);
}

/* ---- book events (entries in the Book46 being built) ---- */

static int add_change(struct synth_gen *gen, unsigned int i, unsigned int side);
static int book_event_mbo(struct synth_gen *gen, unsigned int i, unsigned int side,
		unsigned int roll);

static int
add_new_level(struct synth_gen *gen, unsigned int i, unsigned int side, unsigned int level)
{
	struct synth_instrument *inst = &gen->inst[i];
	int32_t size = random_size(gen);
	int64_t px;

	if (!new_price(gen, inst, side, level, &px))
		return -EAGAIN;
	return book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_NEW, side, level, px, size,
			random_orders(gen, size));
}

/* Append levels at the bottom of a side (up to n, while depth allows). */
static int
append_levels(struct synth_gen *gen, unsigned int i, unsigned int side, unsigned int n)
{
	struct synth_book *b = &gen->inst[i].book;
	unsigned int k;
	int rc;

	for (k = 0; k < n && b->side[side].count < synth_book_side_depth(b, side); k++) {
		rc = add_new_level(gen, i, side, b->side[side].count + 1u);
		if (rc == -EAGAIN)
			return 0;
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
add_new(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_book *b = &gen->inst[i].book;
	unsigned int count = b->side[side].count, depth = synth_book_side_depth(b, side);
	unsigned int level = pick_level(gen, count < depth ? count + 1 : depth);
	int rc;

	rc = add_new_level(gen, i, side, level);
	if (rc == -EAGAIN && count < depth)
		rc = add_new_level(gen, i, side, count + 1);
	if (rc == -EAGAIN)
		rc = count > 0 ? add_change(gen, i, side) : 0;
	return rc;
}

static int
add_change(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_side *s = &gen->inst[i].book.side[side];
	struct synth_level *l;
	unsigned int level;
	int32_t size, orders;

	if (s->count == 0)
		return add_new(gen, i, side);
	level = pick_level(gen, s->count);
	l = &s->level[level - 1];
	size = l->size + (int32_t)synth_rng_range(&gen->market_rng, -(l->size / 2),
			l->size / 2 > 3 ? l->size / 2 : 3);
	if (size < 1)
		size = 1;
	if (size == l->size)
		size++;
	orders = l->orders + (int32_t)synth_rng_range(&gen->market_rng, -1, 1);
	if (orders < 1)
		orders = 1;
	if (orders > size)
		orders = size;
	return book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_CHANGE, side, level, l->px, size,
			orders);
}

static int
add_delete(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_book *b = &gen->inst[i].book;
	struct synth_side *s = &b->side[side];
	struct synth_level l;
	unsigned int level;
	int rc;

	if (s->count <= 1)
		return add_new(gen, i, side);
	level = 1 + (unsigned int)synth_rng_below(&gen->market_rng, s->count);
	l = s->level[level - 1];
	rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_DELETE, side, level, l.px, l.size,
			l.orders);
	/* CME fills the bottom level back when one is available. */
	if (rc == 0 && synth_rng_below(&gen->market_rng, 10) < 6)
		rc = append_levels(gen, i, side, 1);
	return rc;
}

static int
add_overlay(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_instrument *inst = &gen->inst[i];
	struct synth_side *s = &inst->book.side[side];
	int64_t tick = inst->product->tick, inner, outer, lo, hi, px, n;
	bool bid = synth_side_is_bid(side);
	int64_t step = bid ? -tick : tick;
	unsigned int level;
	int32_t size;

	if (s->count == 0)
		return add_new(gen, i, side);
	level = pick_level(gen, s->count);
	inner = level == 1 ? (bid ? bid_cap(inst) : offer_floor(inst)) :
		s->level[level - 2].px + step;
	outer = level == s->count ? s->level[level - 1].px + 3 * step : s->level[level].px - step;
	if (gen->mbo != NULL && level == s->count) {
		/* not at or past the best deep level (--mbo) */
		px = synth_mbo_level_px(gen, i, side, level, 0);
		if (px != 0 && (bid ? px - step > outer : px - step < outer))
			outer = px - step;
	}
	lo = bid ? outer : inner;
	hi = bid ? inner : outer;
	if (lo < tick)
		lo = tick;
	n = hi >= lo ? (hi - lo) / tick + 1 : 0;
	if (n <= 1 || s->level[level - 1].px < lo || s->level[level - 1].px > hi)
		return add_change(gen, i, side);
	/* Any other free price between the neighbours (the current one excluded). */
	px = lo + synth_rng_range(&gen->market_rng, 0, n - 2) * tick;
	if (px >= s->level[level - 1].px)
		px += tick;
	size = random_size(gen);
	return book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_OVERLAY, side, level, px, size,
			random_orders(gen, size));
}

static int
add_delete_thru(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_book *b = &gen->inst[i].book;
	struct synth_level l;
	int rc;

	if (b->side[side].count == 0)
		return add_new(gen, i, side);
	l = b->side[side].level[0];
	rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_DELETE_THRU, side, 1, l.px, l.size,
			l.orders);
	if (rc == 0)
		rc = append_levels(gen, i, side,
				1 + (unsigned int)synth_rng_below(&gen->market_rng, b->depth));
	return rc;
}

static int
add_delete_from(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_side *s = &gen->inst[i].book.side[side];
	struct synth_level l;
	unsigned int n;
	int rc;

	if (s->count < 3)
		return add_new(gen, i, side);
	n = s->count - 1u < 3 ? s->count - 1u : 3;
	n = 1 + (unsigned int)synth_rng_below(&gen->market_rng, n);
	l = s->level[n - 1];
	rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_DELETE_FROM, side, n, l.px, l.size,
			l.orders);
	if (rc == 0)
		rc = append_levels(gen, i, side, n);
	return rc;
}

/* --mbo: one order of a visible level cancelled (the level deleted if it was
 * its only order). */
static int
add_cancel(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_side *s = &gen->inst[i].book.side[side];
	struct synth_level l;
	unsigned int level;
	int32_t qty;

	if (s->count <= 1)
		return add_new(gen, i, side);
	level = pick_level(gen, s->count);
	l = s->level[level - 1];
	qty = synth_mbo_take(gen, i, side, level - 1u, false);
	if (qty < 1)
		return -EPROTO;
	if (l.orders <= 1)
		return book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_DELETE, side, level, l.px,
				l.size, l.orders);
	return book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_CHANGE, side, level, l.px,
			l.size - qty, l.orders - 1);
}

/* --mbo: one order moved to another visible price (a new level or another
 * level): the level it leaves, the level it joins, one Update. */
static int
add_move(struct synth_gen *gen, unsigned int i, unsigned int side)
{
	struct synth_instrument *inst = &gen->inst[i];
	struct synth_book *b = &inst->book;
	struct synth_side *s = &b->side[side];
	unsigned int level, depth = synth_book_side_depth(b, side), k;
	struct synth_level l;
	int64_t from, px;
	int32_t qty;
	int rc;

	if (s->count < 2)
		return add_change(gen, i, side);
	level = pick_level(gen, s->count);
	l = s->level[level - 1];
	from = l.px;
	qty = synth_mbo_take(gen, i, side, level - 1u, true);
	if (qty < 1)
		return -EPROTO;
	if (l.orders <= 1)
		rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_DELETE, side, level, l.px,
				l.size, l.orders);
	else
		rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_CHANGE, side, level, l.px,
				l.size - qty, l.orders - 1);
	if (rc < 0)
		return rc;
	if (synth_rng_below(&gen->market_rng, 1000) >= MBO_MOVE_JOIN_PER_MILLE) {
		level = pick_level(gen, s->count < depth ? s->count + 1u : depth);
		if (new_price(gen, inst, side, level, &px) && px != from)
			return book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_NEW, side, level,
					px, qty, 1);
	}
	/* joins a level (the one picked, else the first that can take it) */
	level = pick_level(gen, s->count);
	for (k = 0; k < s->count; k++, level = level % s->count + 1u)
		if (s->level[level - 1].px != from &&
				s->level[level - 1].orders < SYNTH_MBO_LEVEL_ORDERS)
			return book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_CHANGE, side, level,
					s->level[level - 1].px, s->level[level - 1].size + qty,
					s->level[level - 1].orders + 1);
	return -EPROTO;
}

static int
add_implied(struct synth_gen *gen, unsigned int i)
{
	unsigned int side = synth_rng_below(&gen->market_rng, 2) == 0 ?
		SYNTH_SIDE_IMPLIED_BID : SYNTH_SIDE_IMPLIED_OFFER;
	struct synth_side *s = &gen->inst[i].book.side[side];
	int rc;

	if (s->count == 0)
		return add_new(gen, i, side);
	switch (synth_rng_below(&gen->market_rng, 4)) {
	case 0:
	case 1:
		return add_change(gen, i, side);
	case 2:
		rc = add_delete(gen, i, side);
		if (rc == 0 && s->count == 0)
			rc = add_new(gen, i, side);
		return rc;
	default:
		return add_new(gen, i, side);
	}
}

/* ---- whole events ---- */

static unsigned int
pick_instrument(struct synth_gen *gen)
{
	uint64_t r = synth_rng_below(&gen->market_rng, gen->total_weight);
	unsigned int i;

	for (i = 0; i + 1 < gen->instrument_count; i++) {
		if (r < gen->inst[i].weight)
			return i;
		r -= gen->inst[i].weight;
	}
	return i;
}

static int
status_event(struct synth_gen *gen, unsigned int i, uint8_t status, uint8_t reason)
{
	struct synth_instrument *inst = &gen->inst[i];
	struct synth_value *root;
	struct synth_op *op;
	int rc = begin_msg(gen, SYNTH_T_SECURITY_STATUS30);

	if (rc < 0)
		return rc;
	root = gen->msg->root;
	synth_set_uint(&root[STATUS(TRANSACT_TIME)], gen->event_time);
	synth_set_text(&root[STATUS(SECURITY_GROUP)], inst->product->code);
	synth_set_text(&root[STATUS(ASSET)], inst->product->code);
	synth_set_int(&root[STATUS(SECURITY_ID)], inst->book.security_id);
	synth_set_uint(&root[STATUS(TRADE_DATE)], trade_date(gen));
	synth_set_uint(&root[STATUS(SECURITY_TRADING_STATUS)], status);
	synth_set_uint(&root[STATUS(HALT_REASON)], reason);
	synth_set_uint(&root[STATUS(SECURITY_TRADING_EVENT)],
			SYNTH_V_SECURITY_TRADING_EVENT_NO_EVENT);
	op = add_op(gen, SYNTH_OP_STATUS, i);
	if (op == NULL)
		return -ENOSPC;
	op->status = status;
	inst->book.status = status;
	return end_msg(gen, MEI_END);
}

struct fill {
	int64_t px;
	int32_t qty;
	int32_t passive_orders;   /* orders of the level that traded */
};

static int
trade_event(struct synth_gen *gen, unsigned int i)
{
	struct synth_instrument *inst = &gen->inst[i];
	bool buy = synth_rng_below(&gen->market_rng, 2) == 0;
	unsigned int side = buy ? SYNTH_SIDE_OFFER : SYNTH_SIDE_BID;
	struct synth_side *s = &inst->book.side[side];
	struct fill fills[3];
	struct synth_value *e, *o;
	unsigned int n = 0, full = 0, k, m, r;
	struct synth_op *op;
	int32_t left, q;
	int rc;

	if (s->count == 0 || inst->book.status != STATUS_READY)
		return -EAGAIN;
	r = (unsigned int)synth_rng_below(&gen->market_rng, 100);
	if (r < 70) {           /* part of the first level */
		q = (int32_t)synth_rng_range(&gen->market_rng, 1, s->level[0].size);
		fills[n++] = (struct fill){ s->level[0].px, q, s->level[0].orders };
		full = q == s->level[0].size;
	} else if (r < 90 || s->count < 3) { /* the whole first level */
		fills[n++] = (struct fill){ s->level[0].px, s->level[0].size, s->level[0].orders };
		full = 1;
	} else {                /* a sweep: two levels, maybe part of a third */
		for (k = 0; k < 2; k++)
			fills[n++] = (struct fill){ s->level[k].px, s->level[k].size,
				s->level[k].orders };
		full = 2;
		if (synth_rng_below(&gen->market_rng, 2) == 0) {
			q = (int32_t)synth_rng_range(&gen->market_rng, 1, s->level[2].size);
			fills[n++] = (struct fill){ s->level[2].px, q, s->level[2].orders };
			full += q == s->level[2].size;
		}
	}
	rc = begin_msg(gen, SYNTH_T_TRADE48);
	if (rc < 0)
		return rc;
	synth_set_uint(&gen->msg->root[SYNTH_F_TRADE48_TRANSACT_TIME], gen->event_time);
	for (k = 0; k < n; k++) {
		m = (unsigned int)(fills[k].passive_orders < 3 ? fills[k].passive_orders : 3);
		if ((int32_t)m > fills[k].qty)
			m = (unsigned int)fills[k].qty;
		e = synth_msg_add_entry(gen->msg, SYNTH_G_TRADE48_NO_MD_ENTRIES);
		op = add_op(gen, SYNTH_OP_TRADE, i);
		if (e == NULL || op == NULL)
			return -ENOSPC;
		inst->book.rpt_seq++;
		inst->book.transact_time = gen->event_time;
		synth_set_int(&e[TRADE_E(MD_ENTRY_PX)], fills[k].px);
		synth_set_int(&e[TRADE_E(MD_ENTRY_SIZE)], fills[k].qty);
		synth_set_int(&e[TRADE_E(SECURITY_ID)], inst->book.security_id);
		synth_set_uint(&e[TRADE_E(RPT_SEQ)], inst->book.rpt_seq);
		synth_set_int(&e[TRADE_E(NUMBER_OF_ORDERS)], 1 + (int32_t)m);
		synth_set_uint(&e[TRADE_E(AGGRESSOR_SIDE)], buy ? SYNTH_V_AGGRESSOR_SIDE_BUY :
				SYNTH_V_AGGRESSOR_SIDE_SELL);
		synth_set_uint(&e[TRADE_E(MD_UPDATE_ACTION)], SYNTH_V_MD_UPDATE_ACTION_NEW);
		synth_set_uint(&e[TRADE_E(MD_TRADE_ENTRY_ID)], ++inst->trade_entry_id);
		op->rpt_seq = inst->book.rpt_seq;
		op->book.px = fills[k].px;
		op->book.size = fills[k].qty;
		inst->book.has_trade = true;
		inst->book.trade_px = fills[k].px;
		inst->book.trade_size = fills[k].qty;
		gen->counters.trade_entries++;
		/* The aggressor's order, then the passive orders it matched. */
		o = synth_msg_add_entry(gen->msg, SYNTH_G_TRADE48_NO_ORDER_ID_ENTRIES);
		if (o == NULL)
			return -ENOSPC;
		synth_set_uint(&o[TRADE_O(ORDER_ID)], ++inst->next_order_id);
		synth_set_int(&o[TRADE_O(LAST_QTY)], fills[k].qty);
		left = fills[k].qty;
		for (r = 0; r < m; r++) {
			q = r + 1 == m ? left : (int32_t)synth_rng_range(&gen->market_rng, 1,
					left - (int32_t)(m - r - 1));
			left -= q;
			o = synth_msg_add_entry(gen->msg, SYNTH_G_TRADE48_NO_ORDER_ID_ENTRIES);
			if (o == NULL)
				return -ENOSPC;
			synth_set_uint(&o[TRADE_O(ORDER_ID)], inst->next_order_id -
					1 - synth_rng_below(&gen->market_rng, 5000));
			synth_set_int(&o[TRADE_O(LAST_QTY)], q);
		}
	}
	inst->ref_px = fills[n - 1].px;
	rc = end_msg(gen, MEI_TRADE);
	if (rc < 0)
		return rc;
	/* The book entries the trade causes. */
	rc = begin_book_msg(gen);
	if (rc == 0 && full == 1)
		rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_DELETE, side, 1, s->level[0].px,
				s->level[0].size, s->level[0].orders);
	else if (rc == 0 && full > 1)
		rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_DELETE_FROM, side, full,
				s->level[full - 1].px, s->level[full - 1].size,
				s->level[full - 1].orders);
	if (rc == 0 && full < n) {
		struct synth_level l = s->level[0];
		int32_t orders = l.orders - (int32_t)synth_rng_range(&gen->market_rng, 0, 1);

		l.size -= fills[n - 1].qty;
		if (orders < 1)
			orders = 1;
		if (orders > l.size)
			orders = l.size;
		if (gen->mbo != NULL)
			gen->mbo->fill = fills[n - 1].qty; /* the front of the queue trades */
		rc = book_entry(gen, i, SYNTH_V_MD_UPDATE_ACTION_CHANGE, side, 1, l.px, l.size,
				orders);
	}
	for (k = 0; rc == 0 && k < full; k++)
		if (synth_rng_below(&gen->market_rng, 10) < 7)
			rc = append_levels(gen, i, side, 1);
	if (rc < 0)
		return rc;
	return end_msg(gen, MEI_QUOTE | MEI_END);
}

/* --mbo: the outright book events as order events (rolls 0-719 and 950-994
 * of book_event): mostly orders added at new levels, cancelled and moved to
 * other prices; fewer in-place quantity changes, and the multi-level deletes
 * rarer. */
static int
book_event_mbo(struct synth_gen *gen, unsigned int i, unsigned int side, unsigned int roll)
{
	if (roll >= 950)
		roll = roll - 950u + 720u; /* 720-764 */
	if (roll < MBO_ROLL_CHANGE)
		return add_change(gen, i, side);
	if (roll < MBO_ROLL_MOVE)
		return add_move(gen, i, side);
	if (roll < MBO_ROLL_NEW)
		return add_new(gen, i, side);
	if (roll < MBO_ROLL_CANCEL)
		return add_cancel(gen, i, side);
	if (roll < MBO_ROLL_OVERLAY)
		return add_overlay(gen, i, side);
	if (roll < MBO_ROLL_DELETE_THRU)
		return add_delete_thru(gen, i, side);
	return add_delete_from(gen, i, side);
}

/* A book event: entries for instrument i, maybe an implied entry of another. */
static int
book_event(struct synth_gen *gen, unsigned int i, unsigned int roll)
{
	unsigned int side = synth_rng_below(&gen->market_rng, 2) == 0 ?
		SYNTH_SIDE_BID : SYNTH_SIDE_OFFER;
	unsigned int mei = MEI_QUOTE | MEI_END, other;
	int rc = begin_book_msg(gen);

	if (rc < 0)
		return rc;
	if (gen->mbo != NULL && (roll < 720 || roll >= 950))
		rc = book_event_mbo(gen, i, side, roll);
	else if (roll < 380)
		rc = add_change(gen, i, side);
	else if (roll < 580)
		rc = add_new(gen, i, side);
	else if (roll < 720)
		rc = add_delete(gen, i, side);
	else if (roll < 950) {
		rc = add_implied(gen, i);
		mei |= MEI_IMPLIED;
	} else if (roll < 975)
		rc = add_overlay(gen, i, side);
	else if (roll < 990)
		rc = add_delete_thru(gen, i, side);
	else
		rc = add_delete_from(gen, i, side);
	if (rc == 0 && gen->instrument_count > 1 && synth_rng_below(&gen->market_rng, 100) < 15) {
		other = (i + 1 + (unsigned int)synth_rng_below(&gen->market_rng,
				gen->instrument_count - 1)) % gen->instrument_count;
		rc = add_implied(gen, other);
		mei |= MEI_IMPLIED;
	}
	if (rc < 0)
		return rc;
	return end_msg(gen, mei);
}

static int market_event(struct synth_gen *gen);

int
synth_market_event(struct synth_gen *gen)
{
	int rc = market_event(gen);

	return rc < 0 || gen->mbo == NULL ? rc : synth_mbo_deep_event(gen);
}

static int
market_event(struct synth_gen *gen)
{
	unsigned int i = pick_instrument(gen), side, roll;
	struct synth_book *b = &gen->inst[i].book;
	int rc;

	for (side = SYNTH_SIDE_BID; side <= SYNTH_SIDE_OFFER; side++) {
		if (b->side[side].count < 2) {
			rc = begin_book_msg(gen);
			if (rc == 0)
				rc = add_new(gen, i, side);
			return rc < 0 ? rc : end_msg(gen, MEI_QUOTE | MEI_END);
		}
	}
	roll = (unsigned int)synth_rng_below(&gen->market_rng, 1000);
	if (roll >= 995)
		return status_event(gen, i, b->status == STATUS_READY ? STATUS_HALT : STATUS_READY,
				b->status == STATUS_READY ?
				SYNTH_V_HALT_REASON_SURVEILLANCE_INTERVENTION :
				SYNTH_V_HALT_REASON_GROUP_SCHEDULE);
	if (roll >= 720 && roll < 840) {
		rc = trade_event(gen, i);
		if (rc != -EAGAIN)
			return rc;
		roll = 0; /* no trade possible (halted, empty side): change a level */
	}
	return book_event(gen, i, roll);
}

/* ---- start of day, reset ---- */

static int
definition(struct synth_gen *gen, unsigned int i, bool last)
{
	struct synth_instrument *inst = &gen->inst[i];
	const struct synth_product *p = inst->product;
	struct synth_value *r, *e;
	int64_t expiry_day;
	int rc = begin_msg(gen, SYNTH_T_FUTURE54);

	if (rc < 0)
		return rc;
	r = gen->msg->root;
	synth_set_uint(&r[DEF(SECURITY_UPDATE_ACTION)], SYNTH_V_SECURITY_UPDATE_ACTION_ADD);
	synth_set_uint(&r[DEF(LAST_UPDATE_TIME)], inst->last_update_time);
	synth_set_uint(&r[DEF(MD_SECURITY_TRADING_STATUS)], STATUS_PRE_OPEN);
	synth_set_int(&r[DEF(APPL_ID)], gen->opt->channel);
	synth_set_uint(&r[DEF(MARKET_SEGMENT_ID)], p->market_segment);
	synth_set_uint(&r[DEF(UNDERLYING_PRODUCT)], p->underlying_product);
	synth_set_text(&r[DEF(SECURITY_EXCHANGE)], p->exchange);
	synth_set_text(&r[DEF(SECURITY_GROUP)], p->code);
	synth_set_text(&r[DEF(ASSET)], p->code);
	synth_set_text(&r[DEF(SYMBOL)], inst->symbol);
	synth_set_int(&r[DEF(SECURITY_ID)], inst->book.security_id);
	synth_set_text(&r[DEF(SECURITY_TYPE)], "FUT");
	synth_set_text(&r[DEF(CFI_CODE)], p->cfi);
	r[DEF(MATURITY_MONTH_YEAR)].raw[0] = inst->maturity_year;
	r[DEF(MATURITY_MONTH_YEAR)].raw[1] = inst->maturity_month;
	synth_set_text(&r[DEF(CURRENCY)], p->currency);
	synth_set_text(&r[DEF(SETTL_CURRENCY)], p->currency);
	synth_set_uint(&r[DEF(MATCH_ALGORITHM)], (uint8_t)p->match_algorithm);
	synth_set_uint(&r[DEF(MIN_TRADE_VOL)], 1);
	synth_set_uint(&r[DEF(MAX_TRADE_VOL)], p->max_trade_vol);
	synth_set_int(&r[DEF(MIN_PRICE_INCREMENT)], p->tick);
	synth_set_int(&r[DEF(DISPLAY_FACTOR)], p->display_factor);
	synth_set_uint(&r[DEF(PRICE_DISPLAY_FORMAT)], 2);
	synth_set_text(&r[DEF(UNIT_OF_MEASURE)], p->unit);
	synth_set_int(&r[DEF(UNIT_OF_MEASURE_QTY)], p->unit_qty);
	synth_set_int(&r[DEF(TRADING_REFERENCE_PRICE)], inst->ref_px);
	synth_set_uint(&r[DEF(SETTL_PRICE_TYPE)], SYNTH_B_SETTL_PRICE_TYPE_FINAL_DAILY |
			SYNTH_B_SETTL_PRICE_TYPE_ACTUAL);
	synth_set_int(&r[DEF(OPEN_INTEREST_QTY)],
			synth_rng_range(&gen->market_rng, 1000, 2000000));
	synth_set_int(&r[DEF(CLEARED_VOLUME)], synth_rng_range(&gen->market_rng, 100, 900000));
	synth_set_int(&r[DEF(HIGH_LIMIT_PRICE)], inst->high_limit);
	synth_set_int(&r[DEF(LOW_LIMIT_PRICE)], inst->low_limit);
	synth_set_int(&r[DEF(MAX_PRICE_VARIATION)], inst->max_variation);
	synth_set_int(&r[DEF(MIN_PRICE_INCREMENT_AMOUNT)], p->tick_value);
	synth_set_uint(&r[DEF(USER_DEFINED_INSTRUMENT)], 'N');
	synth_set_uint(&r[DEF(TRADING_REFERENCE_DATE)], trade_date(gen) - 1u);
	synth_set_uint(&r[DEF(INSTRUMENT_GUID)], UINT64_C(0x5e000000) + (uint64_t)i);
	e = synth_msg_add_entry(gen->msg, SYNTH_G_FUTURE54_NO_EVENTS);
	if (e == NULL)
		return -ENOSPC;
	synth_set_uint(&e[SYNTH_F_FUTURE54_NO_EVENTS_EVENT_TYPE], SYNTH_V_EVENT_TYPE_ACTIVATION);
	synth_set_uint(&e[SYNTH_F_FUTURE54_NO_EVENTS_EVENT_TIME],
			gen->opt->start_ns - 400 * NS_PER_DAY);
	e = synth_msg_add_entry(gen->msg, SYNTH_G_FUTURE54_NO_EVENTS);
	if (e == NULL)
		return -ENOSPC;
	expiry_day = days_from_civil(inst->maturity_year, inst->maturity_month, 15);
	synth_set_uint(&e[SYNTH_F_FUTURE54_NO_EVENTS_EVENT_TYPE],
			SYNTH_V_EVENT_TYPE_LAST_ELIGIBLE_TRADE_DATE);
	synth_set_uint(&e[SYNTH_F_FUTURE54_NO_EVENTS_EVENT_TIME],
			(uint64_t)expiry_day * NS_PER_DAY + UINT64_C(14) * 3600 * NS_PER_S);
	e = synth_msg_add_entry(gen->msg, SYNTH_G_FUTURE54_NO_MD_FEED_TYPES);
	if (e == NULL)
		return -ENOSPC;
	synth_set_text(&e[SYNTH_F_FUTURE54_NO_MD_FEED_TYPES_MD_FEED_TYPE], "GBX");
	synth_set_int(&e[SYNTH_F_FUTURE54_NO_MD_FEED_TYPES_MARKET_DEPTH], p->depth);
	e = synth_msg_add_entry(gen->msg, SYNTH_G_FUTURE54_NO_MD_FEED_TYPES);
	if (e == NULL)
		return -ENOSPC;
	synth_set_text(&e[SYNTH_F_FUTURE54_NO_MD_FEED_TYPES_MD_FEED_TYPE], "GBI");
	synth_set_int(&e[SYNTH_F_FUTURE54_NO_MD_FEED_TYPES_MARKET_DEPTH], SYNTH_IMPLIED_DEPTH);
	e = synth_msg_add_entry(gen->msg, SYNTH_G_FUTURE54_NO_INST_ATTRIB);
	if (e == NULL)
		return -ENOSPC;
	/* Electronic match, order cross, EFP, negative price, GT orders, implied matching. */
	synth_set_uint(&e[SYNTH_F_FUTURE54_NO_INST_ATTRIB_INST_ATTRIB_VALUE],
			(1u << 0) | (1u << 1) | (1u << 3) | (1u << 10) | (1u << 18) | (1u << 19));
	e = synth_msg_add_entry(gen->msg, SYNTH_G_FUTURE54_NO_LOT_TYPE_RULES);
	if (e == NULL)
		return -ENOSPC;
	synth_set_int(&e[SYNTH_F_FUTURE54_NO_LOT_TYPE_RULES_LOT_TYPE], 1);
	synth_set_int(&e[SYNTH_F_FUTURE54_NO_LOT_TYPE_RULES_MIN_LOT_SIZE], 10000);
	return end_msg(gen, last ? MEI_END : 0);
}

/* An initial book: New entries for both sides and the implied book. */
static int
build_book_event(struct synth_gen *gen, unsigned int i)
{
	struct synth_book *b = &gen->inst[i].book;
	unsigned int half = b->depth / 2u;
	int rc = begin_book_msg(gen);

	if (rc == 0)
		rc = append_levels(gen, i, SYNTH_SIDE_BID,
				half + (unsigned int)synth_rng_below(&gen->market_rng, half + 1));
	if (rc == 0)
		rc = append_levels(gen, i, SYNTH_SIDE_OFFER,
				half + (unsigned int)synth_rng_below(&gen->market_rng, half + 1));
	if (rc == 0)
		rc = append_levels(gen, i, SYNTH_SIDE_IMPLIED_BID,
				1 + (unsigned int)synth_rng_below(&gen->market_rng, 2));
	if (rc == 0)
		rc = append_levels(gen, i, SYNTH_SIDE_IMPLIED_OFFER,
				1 + (unsigned int)synth_rng_below(&gen->market_rng, 2));
	if (rc < 0)
		return rc;
	return end_msg(gen, MEI_QUOTE | MEI_IMPLIED | MEI_END);
}

int
synth_market_setup(struct synth_gen *gen)
{
	uint64_t t = gen->opt->start_ns;
	unsigned int i;
	int rc;

	rc = synth_gen_begin_event(gen, t, "setup", -1);
	for (i = 0; rc == 0 && i < gen->instrument_count; i++)
		rc = definition(gen, i, i + 1 == gen->instrument_count);
	for (i = 0; rc == 0 && i < gen->instrument_count; i++) {
		rc = synth_gen_begin_event(gen, t + 1000 + i * 100u, "setup", -1);
		if (rc == 0)
			rc = status_event(gen, i, STATUS_READY,
					SYNTH_V_HALT_REASON_GROUP_SCHEDULE);
	}
	for (i = 0; rc == 0 && i < gen->instrument_count; i++) {
		rc = synth_gen_begin_event(gen, t + 100000 + i * 100u, "setup", -1);
		if (rc == 0)
			rc = build_book_event(gen, i);
	}
	return rc;
}

int
synth_market_reset_message(struct synth_gen *gen)
{
	struct synth_value *e;
	int rc = begin_msg(gen, SYNTH_T_CHANNEL_RESET4);

	if (rc < 0)
		return rc;
	synth_set_uint(&gen->msg->root[SYNTH_F_CHANNEL_RESET4_TRANSACT_TIME], gen->event_time);
	e = synth_msg_add_entry(gen->msg, SYNTH_G_CHANNEL_RESET4_NO_MD_ENTRIES);
	if (e == NULL || add_op(gen, SYNTH_OP_RESET, 0) == NULL)
		return -ENOSPC;
	synth_set_int(&e[SYNTH_F_CHANNEL_RESET4_NO_MD_ENTRIES_APPL_ID], gen->opt->channel);
	rc = end_msg(gen, MEI_END);
	return rc == 0 ? synth_gen_flush(gen) : rc; /* the reset travels alone */
}

int
synth_market_reset(struct synth_gen *gen)
{
	uint64_t t = gen->event_time;
	unsigned int i;
	int rc = synth_market_reset_message(gen);

	for (i = 0; i < gen->instrument_count; i++) {
		synth_book_clear(&gen->inst[i].book);
		if (gen->mbo != NULL)
			synth_mbo_clear(&gen->mbo->book[i]);
	}
	for (i = 0; rc == 0 && i < gen->instrument_count; i++) {
		rc = synth_gen_begin_event(gen, t + 1000 + i * 100u, "rebuild", -1);
		if (rc == 0)
			rc = build_book_event(gen, i);
	}
	return rc;
}

/* ---- snapshot ---- */

static int
snapshot_entry(struct synth_msg *msg, char type, int64_t px, int32_t size, int32_t orders,
		int level)
{
	struct synth_value *e = synth_msg_add_entry(msg, SYNTH_G_SNAPSHOT52_NO_MD_ENTRIES);

	if (e == NULL)
		return -ENOSPC;
	synth_set_int(&e[SNAP_E(MD_ENTRY_PX)], px);
	synth_set_int(&e[SNAP_E(MD_ENTRY_SIZE)], size);
	if (orders > 0)
		synth_set_int(&e[SNAP_E(NUMBER_OF_ORDERS)], orders);
	if (level > 0)
		synth_set_int(&e[SNAP_E(MD_PRICE_LEVEL)], level);
	synth_set_uint(&e[SNAP_E(MD_ENTRY_TYPE)], (uint8_t)type);
	return 0;
}

int
synth_market_snapshot(struct synth_gen *gen, struct synth_msg *msg, unsigned int i,
		uint32_t last_seq, uint32_t reports)
{
	struct synth_instrument *inst = &gen->inst[i];
	const struct synth_book *t = &inst->truth;
	struct synth_value *r;
	unsigned int side, l;
	int rc = synth_msg_init(msg, SYNTH_T_SNAPSHOT52, gen->opt->version);

	if (rc < 0)
		return rc;
	r = msg->root;
	synth_set_uint(&r[SNAP(LAST_MSG_SEQ_NUM_PROCESSED)], last_seq);
	synth_set_uint(&r[SNAP(TOT_NUM_REPORTS)], reports);
	synth_set_int(&r[SNAP(SECURITY_ID)], t->security_id);
	synth_set_uint(&r[SNAP(RPT_SEQ)], t->rpt_seq);
	synth_set_uint(&r[SNAP(TRANSACT_TIME)], t->transact_time != 0 ? t->transact_time :
			gen->opt->start_ns);
	synth_set_uint(&r[SNAP(LAST_UPDATE_TIME)], inst->last_update_time);
	synth_set_uint(&r[SNAP(TRADE_DATE)], trade_date(gen));
	synth_set_uint(&r[SNAP(MD_SECURITY_TRADING_STATUS)], t->status);
	synth_set_int(&r[SNAP(HIGH_LIMIT_PRICE)], inst->high_limit);
	synth_set_int(&r[SNAP(LOW_LIMIT_PRICE)], inst->low_limit);
	synth_set_int(&r[SNAP(MAX_PRICE_VARIATION)], inst->max_variation);
	for (side = 0; rc == 0 && side < SYNTH_SIDE_COUNT; side++)
		for (l = 0; rc == 0 && l < t->side[side].count; l++)
			rc = snapshot_entry(msg, snapshot_entry_type[side],
					t->side[side].level[l].px, t->side[side].level[l].size,
					t->side[side].level[l].orders, (int)l + 1);
	if (rc == 0 && t->has_trade)
		rc = snapshot_entry(msg, SYNTH_V_MD_ENTRY_TYPE_TRADE, t->trade_px,
				t->trade_size, 0, 0);
	return rc;
}
