/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hot path of a feed: an incremental packet in sequence (begin, the
 * walker's messages, end: book_feed_apply(), the arbiter's deliveries and
 * the stage-split API) -> dispatch -> RptSeq gate -> book, trade,
 * statistics and volume entries -> events.  One translation unit, so that
 * the path inlines into the walker's callbacks; the cold templates
 * (snapshots, definitions, status, channel reset) and the instrument table
 * live in the other book_feed_*.c files (book_feed_pvt.h says which).
 *
 * Events copy nothing the book holds.  Book changes mark the instrument
 * dirty (once, onto a list of slot numbers) and the list is published at
 * EndOfEvent; an event is a few words (ids, times, what changed) and a
 * pointer to the instrument, whose tops the consumer reads in place
 * (book.h).  BOOK_CHANGED_TOP needs the consolidated top compared with the
 * one of the instrument's previous event: the apply path marks the
 * instrument when an operation touches a level 1, outright or implied
 * (BOOK__DIRTY_TOP), and only then is the top computed and compared (58 %
 * of the book events on capture ch340); otherwise it is equal by
 * construction, which debug builds check at every event.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "book_feed_pvt.h"

/* ------------------------------------------------------------------------ */
/* Events                                                                     */
/* ------------------------------------------------------------------------ */

/*
 * BOOK_CHANGED_TOP for an event about in, whose published member holds the
 * consolidated top of its previous event; published is then this event's.
 * top_touched: a level 1 may have changed since (BOOK__DIRTY_TOP, or a rare
 * event that always compares).  The compare and the store take no branch:
 * whether the top changed follows the market (half the book events on the
 * captures) and would mispredict.
 */
BOOK__ALWAYS_INLINE uint32_t
top_changed(struct book_instrument *in, bool top_touched)
{
	struct book_top top, *p = &in->published;
	uint64_t diff;

	if (!top_touched) {
#ifndef NDEBUG
		top = book_instrument_consolidated_top(in);
		assert(memcmp(&top, p, sizeof(top)) == 0);
#endif
		return 0;
	}
	in->dirty &= (uint8_t)~BOOK__DIRTY_TOP;
	top = book_instrument_consolidated_top(in);
	diff = (uint64_t)(top.bid_price ^ p->bid_price) | (uint64_t)(top.bid_qty ^ p->bid_qty) |
		(uint64_t)(top.ask_price ^ p->ask_price) | (uint64_t)(top.ask_qty ^ p->ask_qty) |
		(uint32_t)(top.bid_orders ^ p->bid_orders) |
		(uint32_t)(top.ask_orders ^ p->ask_orders);
	*p = top;
	return diff != 0 ? BOOK_CHANGED_TOP : 0;
}

/* Every member is set: trade and status NULL unless the caller sets them. */
BOOK__ALWAYS_INLINE void
event_init(const struct book__walk_ctx *c, struct book_event *e,
		const struct book_instrument *in, int32_t sid, uint32_t what)
{
	e->what = what;
	e->changed = 0;
	e->security_id = sid;
	e->state = in != NULL ? in->state : BOOK_STATE_OK;
	e->replay = c->replay;
	e->msg_seq_num = c->seq;
	e->rx_ns = c->rx_ns;
	e->transact_time = c->transact_time;
	e->instrument = in;
	e->trade = NULL;
	e->status = NULL;
}

static inline void
emit(struct book_feed *f, const struct book_event *e)
{
	f->counters.events++;
	f->config.handler.on_event(f->config.handler.ctx, e);
}

void
book__publish(const struct book__walk_ctx *c, struct book_instrument *in, uint32_t what)
{
	struct book_event e;

	if (!c->feed->has_events)
		return;
	event_init(c, &e, in, in != NULL ? in->security_id : 0, what);
	if (in != NULL)
		e.changed = top_changed(in, true);
	emit(c->feed, &e);
}

void
book__publish_status(const struct book__walk_ctx *c, struct book_instrument *in, int32_t sid,
		const struct book_status *status)
{
	struct book_event e;

	if (!c->feed->has_events)
		return;
	event_init(c, &e, in, sid, BOOK_EVENT_STATUS);
	if (in != NULL)
		e.changed = top_changed(in, true);
	e.status = status;
	emit(c->feed, &e);
}

/* A trade just applied (in->last_trade). */
static void
publish_trade(const struct book__walk_ctx *c, struct book_instrument *in)
{
	struct book_event e;

	event_init(c, &e, in, in->security_id, BOOK_EVENT_TRADE);
	e.changed = top_changed(in, in->dirty & BOOK__DIRTY_TOP);
	e.trade = &in->last_trade;
	emit(c->feed, &e);
}

/*
 * The book event of a listed instrument, into e (the flush's template:
 * packet, times and replay set once): its changes are taken off in->dirty
 * (listed and top kept: the caller delists, top_changed() clears top).
 */
BOOK__ALWAYS_INLINE void
publish_book(struct book_feed *f, struct book_event *e, struct book_instrument *in)
{
	uint8_t d = in->dirty;

	in->dirty = d & (uint8_t)(BOOK__DIRTY_LISTED | BOOK__DIRTY_TOP);
	e->what = BOOK_EVENT_BOOK | ((d & BOOK__DIRTY_RESET) ? BOOK_EVENT_RESET : 0);
	e->security_id = in->security_id;
	e->state = in->state;
	e->instrument = in;
	e->changed = (d & (BOOK_CHANGED_OUTRIGHT | BOOK_CHANGED_IMPLIED)) |
		top_changed(in, d & BOOK__DIRTY_TOP);
	emit(f, e);
}

/*
 * Whether a level operation that applied may have changed level 1: any at
 * level 1, DeleteThru and DeleteFrom (which remove level 1 whatever n is).
 * New, Change, Overlay, Delete deeper leave level 1 as it was.
 */
static inline uint8_t
touches_top(uint8_t action, uint8_t level)
{
	return (uint8_t)((level == 1) | ((uint8_t)(action - BOOK_ACTION_DELETE_THRU) <= 1)) << 5;
}
_Static_assert(BOOK__DIRTY_TOP == 1u << 5, "touches_top() shifts into BOOK__DIRTY_TOP");

/*
 * Note changes of an instrument for the next publication.  No branch on
 * whether it is listed already (every entry of an event after the first):
 * the slot past the list is written either way (the list has one spare).
 */
static inline void
mark_dirty(struct book_feed *f, struct book_instrument *in, uint8_t bits)
{
	uint8_t d = in->dirty;

	f->dirty[f->dirty_count] = in->index;
	f->dirty_count += !(d & BOOK__DIRTY_LISTED);
	in->dirty = d | bits | BOOK__DIRTY_LISTED;
}

void
book__flush_events(const struct book__walk_ctx *c, struct book_instrument *only)
{
	struct book_feed *f = c->feed;
	struct book_event e;
	uint32_t i;

	if (f->dirty_count == 0)
		return;
	event_init(c, &e, NULL, 0, BOOK_EVENT_BOOK);
	if (only != NULL) {
		if ((only->flags & BOOK_INSTRUMENT_IN_USE) && (only->dirty & BOOK__DIRTY_CHANGES))
			publish_book(f, &e, only);
		return;
	}
	for (i = 0; i < f->dirty_count; i++) {
		struct book_instrument *in = &f->instruments[f->dirty[i]];

		if (__builtin_expect((in->flags & BOOK_INSTRUMENT_IN_USE) &&
					(in->dirty & BOOK__DIRTY_CHANGES), 1))
			publish_book(f, &e, in);
		in->dirty &= BOOK__DIRTY_TOP;
	}
	f->dirty_count = 0;
}

static inline void
end_of_message(const struct book__walk_ctx *c, uint8_t match_event_indicator)
{
	if (__builtin_expect(c->feed->mbo_check_count != 0, 0) && !c->replay &&
			(match_event_indicator & MDP3_MATCH_EVENT_INDICATOR_END_OF_EVENT))
		book__mbo_check(c);
	if (c->feed->dirty_count != 0 &&
			(match_event_indicator & MDP3_MATCH_EVENT_INDICATOR_END_OF_EVENT))
		book__flush_events(c, c->replay ? book__lookup(c->feed, c->replay_sid) : NULL);
}

/* ------------------------------------------------------------------------ */
/* RptSeq gate                                                                */
/* ------------------------------------------------------------------------ */

void
book__go_stale(const struct book__walk_ctx *c, struct book_instrument *in)
{
	struct book_feed *f = c->feed;

	in->state = BOOK_STATE_STALE;
	in->flags &= (uint8_t)~BOOK_INSTRUMENT_COMPLETE;
	book__set_stale_count(f, f->counters.stale_books + 1);
	if (f->mbo_on)
		book__mbo_instrument_stale(f, in);
	book__publish(c, in, BOOK_EVENT_STALE);
}

/* gate() when the entry is not simply the next of a valid instrument. */
static __attribute__((noinline)) struct book_instrument *
gate_slow(const struct book__walk_ctx *c, struct book_instrument *in, uint32_t rpt)
{
	struct book_feed *f = c->feed;
	int32_t ahead;

	if (!c->check_rpt) {
		in->last_msg_seq = c->seq;
		return in;
	}
	if (in->state != BOOK_STATE_OK) {
		if (!(in->flags & BOOK_INSTRUMENT_NEVER_SYNCED) || rpt != 1) {
			f->counters.stale_entries++;
			return NULL;
		}
		/* First update of a new instrument: nothing was missed. */
		book__become_valid(c->feed, in);
		in->rpt_seq = 0;
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN | BOOK_INSTRUMENT_COMPLETE;
		book__publish(c, in, BOOK_EVENT_RECOVERED);
	}
	if (!(in->flags & BOOK_INSTRUMENT_RPT_KNOWN)) {
		in->rpt_seq = rpt - 1;
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN;
		if (rpt == 1)  /* its first update: nothing was missed */
			in->flags |= BOOK_INSTRUMENT_COMPLETE;
	}
	ahead = (int32_t)(rpt - in->rpt_seq);
	if (ahead == 1) {
		in->rpt_seq = rpt;
		in->last_msg_seq = c->seq;
		return in;
	}
	if (ahead <= 0) {
		f->counters.rpt_seq_duplicates++;
		return NULL;
	}
	f->counters.rpt_seq_gaps++;
	book__go_stale(c, in);
	return NULL;
}

/*
 * The instrument an entry applies to, or NULL when it must not be applied:
 * replay of another instrument, table full, stale, RptSeq already applied,
 * or a RptSeq gap (which makes the instrument stale).  The common case (a
 * valid instrument, RptSeq known and this entry its next) stays inline.
 * live: c is the live context of an incremental packet (book_feed_apply, the
 * arbiter, the stage-split API), which is never a replay and always checks
 * RptSeq (packet_begin() sets check_rpt): those two tests fold away.
 */
BOOK__ALWAYS_INLINE struct book_instrument *
gate(const struct book__walk_ctx *c, int32_t sid, uint32_t rpt, bool live)
{
	struct book_feed *f = c->feed;
	struct book__lookup_entry *way;
	struct book_instrument *in;

	f->counters.entries++;
	if (!live && __builtin_expect(c->replay, 0) && (sid != c->replay_sid || c->replay_mbo))
		return NULL;
	/* A cache hit is never NULL: the cache holds instruments in use only.
	 * A miss probes the table inline; only a new instrument is a call. */
	way = book__lookup_way(f, sid);
	if (__builtin_expect(way->sid == sid, 1)) {
		in = way->in;
	} else {
		in = book__probe(f, sid, way);
		if (in == NULL && (in = book__create(f, sid, false)) == NULL)
			return NULL;
	}
	if (__builtin_expect((live || c->check_rpt) && in->state == BOOK_STATE_OK &&
				(in->flags & BOOK_INSTRUMENT_RPT_KNOWN) &&
				rpt - in->rpt_seq == 1, 1)) {
		in->rpt_seq = rpt;
		in->last_msg_seq = c->seq;
		return in;
	}
	return gate_slow(c, in, rpt);
}

/* ------------------------------------------------------------------------ */
/* Book, trade and statistics entries                                         */
/* ------------------------------------------------------------------------ */

/* Where an entry type's levels and depth are in struct book_instrument. */
struct side_layout {
	uint16_t levels;  /* offsetof the level array */
	uint8_t depth;    /* offsetof its depth (uint8_t) */
	uint8_t bit;      /* dirty bit; 0: not a book side */
};

#define SIDE_LAYOUT(type, array, depth_field, dirty)                               \
	[MDP3_MD_ENTRY_TYPE_BOOK_##type - MDP3_MD_ENTRY_TYPE_BOOK_BID] = {         \
		offsetof(struct book_instrument, array),                           \
		offsetof(struct book_instrument, depth_field), dirty }
#define SIDE_TYPES                                                                 \
	(MDP3_MD_ENTRY_TYPE_BOOK_IMPLIED_OFFER - MDP3_MD_ENTRY_TYPE_BOOK_BID + 1)

static const struct side_layout side_layouts[SIDE_TYPES] = {
	SIDE_LAYOUT(BID, bid, depth, BOOK__DIRTY_OUTRIGHT),
	SIDE_LAYOUT(OFFER, ask, depth, BOOK__DIRTY_OUTRIGHT),
	SIDE_LAYOUT(IMPLIED_BID, implied_bid, implied_depth, BOOK__DIRTY_IMPLIED),
	SIDE_LAYOUT(IMPLIED_OFFER, implied_ask, implied_depth, BOOK__DIRTY_IMPLIED),
};

_Static_assert(sizeof(struct book_instrument) <= UINT16_MAX, "offsets fit side_layout");
_Static_assert(BOOK__DIRTY_OUTRIGHT != 0 && BOOK__DIRTY_IMPLIED != 0 &&
		(BOOK__DIRTY_OUTRIGHT | BOOK__DIRTY_IMPLIED) <= UINT8_MAX,
		"side bits are non-zero bytes");
_Static_assert(sizeof(((struct book_instrument *)0)->depth) == 1 &&
		sizeof(((struct book_instrument *)0)->implied_depth) == 1, "depths are bytes");

/* One book entry as read from the wire. */
struct book_entry {
	struct mdp3_decimal px;
	int64_t qty;
	int32_t orders;
	int px_rc;
	uint8_t action;
	uint8_t level;
	char type;
};

BOOK__ALWAYS_INLINE void
apply_book_entry(const struct book__walk_ctx *c, struct book_instrument *in,
		const struct book_entry *e)
{
	struct book_feed *f = c->feed;
	struct book_level v, *levels;
	unsigned int depth, side;
	uint8_t bit;
	int rc;

	/*
	 * The four book sides by a table, not by branches: on the captures the
	 * entries mix bids, offers, implied bids and implied offers in no
	 * predictable order (ch340: 17 / 21 / 34 / 29 %), and a mispredicted
	 * side cost more than the table load (bench_feed).
	 */
	side = (uint8_t)(e->type - MDP3_MD_ENTRY_TYPE_BOOK_BID);
	if (__builtin_expect(side < SIDE_TYPES && side_layouts[side].bit != 0, 1)) {
		levels = (struct book_level *)((char *)in + side_layouts[side].levels);
		depth = *((const uint8_t *)in + side_layouts[side].depth);
		bit = side_layouts[side].bit;
	} else switch (e->type) {
	case MDP3_MD_ENTRY_TYPE_BOOK_BOOK_RESET:
		book_instrument_clear(in);
		in->flags |= BOOK_INSTRUMENT_COMPLETE;
		f->counters.book_resets++;
		if (f->mbo_on)
			book__mbo_touch(f, in, BOOK__MBO_SIDES);
		if (f->has_events)
			mark_dirty(f, in, BOOK__DIRTY_CHANGES | BOOK__DIRTY_TOP);
		return;
	default:
		/* Market best bid/offer (w, x) and the like: no book of ours. */
		return;
	}
	v.price = BOOK_PRICE_NONE;
	v.qty = e->qty;
	v.orders = e->orders;
	v.reserved = 0;
	if (e->action <= BOOK_ACTION_CHANGE || e->action == BOOK_ACTION_OVERLAY) {
		if (__builtin_expect(e->px_rc != 0, 0) ||
				book__price_normalize(e->px.mantissa, e->px.exponent,
					in->price_exponent, &v.price) < 0) {
			f->counters.bad_entries++;
			return;
		}
	}
	if (__builtin_expect(depth == 0, 0)) {
		f->counters.level_out_of_range++;
		return;
	}
	rc = book__levels_apply(levels, depth, (enum book_action)e->action, e->level, &v);
	if (__builtin_expect(rc != 0, 0)) {
		if (rc == -ERANGE)
			f->counters.level_out_of_range++;
		else if (rc < 0)
			f->counters.bad_entries++;
		if (rc < 0)
			return;
		f->counters.level_missing++;
	}
	f->counters.book_updates++;
	/* the MBO books hold outright orders: implied levels are not compared */
	if (__builtin_expect(f->mbo_on, 0) && side <= BOOK_ASK)
		book__mbo_touch(f, in, 1u << side);
	if (f->has_events)
		mark_dirty(f, in, bit | touches_top(e->action, e->level));
}

/* MDEntrySize of either width as a quantity (UInt64 clamped, never negative). */
#define int32_t_to_qty(v) ((int64_t)(v))
#define uint64_t_to_qty(v) book__clamp_u64(v)

/*
 * Book messages: 32 (PRICENULL, Int32 sizes), 46 (PRICENULL9), 64 (UInt64
 * sizes).  SZ is the C type of MDEntrySize.
 */
#define BOOK_HANDLER(NAME, P, SZ, MBO)                                             \
BOOK__ALWAYS_INLINE void                                                           \
NAME##_body(struct book__walk_ctx *c, const struct mdp3_msg *msg, bool live)       \
{                                                                                  \
	struct book_instrument *in;                                                \
	struct book_entry e;                                                       \
	struct mdp3_group g;                                                       \
	int32_t sid;                                                               \
	uint32_t rpt;                                                              \
	uint8_t mei;                                                               \
	bool resets = false;                                                       \
	SZ size;                                                                   \
                                                                                   \
	P##transact_time(msg, &c->transact_time);                                  \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next_flat(&g)) {                                 \
			P##no_md_entries_security_id(&g, &sid);                    \
			P##no_md_entries_rpt_seq(&g, &rpt);                        \
			P##no_md_entries_md_entry_type(&g, &e.type);               \
			/* an EmptyBook entry, whatever the gate says of it */     \
			resets |= e.type == MDP3_MD_ENTRY_TYPE_BOOK_BOOK_RESET;    \
			in = gate(c, sid, rpt, live);                              \
			if (in == NULL)                                            \
				continue;                                          \
			P##no_md_entries_md_update_action(&g, &e.action);          \
			P##no_md_entries_md_price_level(&g, &e.level);             \
			e.px_rc = P##no_md_entries_md_entry_px(&g, &e.px);         \
			if (P##no_md_entries_md_entry_size(&g, &size) != 0)        \
				size = 0;                                          \
			e.qty = SZ##_to_qty(size);                                 \
			if (P##no_md_entries_number_of_orders(&g, &e.orders) != 0) \
				e.orders = 0;                                      \
			apply_book_entry(c, in, &e);                               \
		}                                                                  \
	}                                                                          \
	if (MBO && __builtin_expect(c->feed->mbo_on, 0))                           \
		book__mbo_on_book46(c, msg, resets);                               \
	P##match_event_indicator(msg, &mei);                                       \
	end_of_message(c, mei);                                                    \
}                                                                                  \
                                                                                   \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                         \
{                                                                                  \
	NAME##_body(c, msg, false);                                                \
}                                                                                  \
                                                                                   \
static void                                                                        \
NAME##_live(struct book__walk_ctx *c, const struct mdp3_msg *msg)                  \
{                                                                                  \
	NAME##_body(c, msg, true);                                                 \
}

BOOK_HANDLER(on_book32, mdp3_md_incremental_refresh_book32_, int32_t, 0)
BOOK_HANDLER(on_book46, mdp3_md_incremental_refresh_book46_, int32_t, 1)
BOOK_HANDLER(on_book64, mdp3_md_incremental_refresh_book_long_qty64_, uint64_t, 0)

static void
apply_trade(const struct book__walk_ctx *c, struct book_instrument *in, int px_rc,
		const struct mdp3_decimal *px, int64_t qty, int32_t orders, uint32_t trade_id,
		uint8_t aggressor, uint8_t action)
{
	struct book_feed *f = c->feed;
	struct book_trade t;

	if (!book__entry_price(f, px_rc, px, in->price_exponent, &t.price))
		return;
	t.qty = qty;
	t.orders = orders;
	t.trade_id = trade_id;
	t.aggressor = aggressor;
	t.action = action;
	t.transact_time = c->transact_time;
	in->last_trade = t;
	f->counters.trades++;
	if (f->has_events)
		publish_trade(c, in);
}

/* TradeSummary 42 / 48 (Int32 sizes) and 65 (UInt64 sizes). */
#define TRADE_HANDLER(NAME, P, SZ)                                                 \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                         \
{                                                                                  \
	struct book_instrument *in;                                                \
	struct mdp3_decimal px;                                                    \
	struct mdp3_group g;                                                       \
	uint8_t mei, aggressor, action;                                            \
	int32_t sid, orders;                                                       \
	uint32_t rpt, trade_id;                                                    \
	int px_rc;                                                                 \
	SZ size;                                                                   \
                                                                                   \
	P##transact_time(msg, &c->transact_time);                                  \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next_flat(&g)) {                                 \
			P##no_md_entries_security_id(&g, &sid);                    \
			P##no_md_entries_rpt_seq(&g, &rpt);                        \
			in = gate(c, sid, rpt, false);                             \
			if (in == NULL)                                            \
				continue;                                          \
			px_rc = P##no_md_entries_md_entry_px(&g, &px);             \
			if (P##no_md_entries_md_entry_size(&g, &size) != 0)        \
				size = 0;                                          \
			if (P##no_md_entries_number_of_orders(&g, &orders) != 0)   \
				orders = 0;                                        \
			if (P##no_md_entries_md_trade_entry_id(&g, &trade_id) != 0) \
				trade_id = 0;                                      \
			P##no_md_entries_aggressor_side(&g, &aggressor);           \
			P##no_md_entries_md_update_action(&g, &action);            \
			apply_trade(c, in, px_rc, &px, book__clamp_u64((uint64_t)size), \
					orders, trade_id, aggressor, action);      \
		}                                                                  \
	}                                                                          \
	P##match_event_indicator(msg, &mei);                                       \
	end_of_message(c, mei);                                                    \
}

TRADE_HANDLER(on_trade42, mdp3_md_incremental_refresh_trade_summary42_, int32_t)
TRADE_HANDLER(on_trade48, mdp3_md_incremental_refresh_trade_summary48_, int32_t)
TRADE_HANDLER(on_trade65, mdp3_md_incremental_refresh_trade_summary_long_qty65_, uint64_t)

/* Trade36 (schema versions 5-8; superseded by TradeSummary42). */
static void
on_trade36(struct book__walk_ctx *c, const struct mdp3_msg *msg)
{
#define T36(f) mdp3_md_incremental_refresh_trade36_##f
	struct book_instrument *in;
	struct mdp3_decimal px;
	struct mdp3_group g;
	uint8_t mei, aggressor, action;
	int32_t sid, orders, size, trade_id;
	uint32_t rpt;
	int px_rc;

	T36(transact_time)(msg, &c->transact_time);
	if (T36(no_md_entries)(msg, &g) == 0) {
		while (mdp3_group_next_flat(&g)) {
			T36(no_md_entries_security_id)(&g, &sid);
			T36(no_md_entries_rpt_seq)(&g, &rpt);
			in = gate(c, sid, rpt, false);
			if (in == NULL)
				continue;
			px_rc = T36(no_md_entries_md_entry_px)(&g, &px);
			T36(no_md_entries_md_entry_size)(&g, &size);
			if (T36(no_md_entries_number_of_orders)(&g, &orders) != 0)
				orders = 0;
			T36(no_md_entries_trade_id)(&g, &trade_id);
			T36(no_md_entries_aggressor_side)(&g, &aggressor);
			T36(no_md_entries_md_update_action)(&g, &action);
			apply_trade(c, in, px_rc, &px, size, orders, (uint32_t)trade_id, aggressor,
					action);
		}
	}
	T36(match_event_indicator)(msg, &mei);
	end_of_message(c, mei);
#undef T36
}

/* Statistics, limits: only the RptSeq is kept. */
#define SEQ_ONLY_HANDLER(NAME, P)                                                  \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                         \
{                                                                                  \
	struct mdp3_group g;                                                       \
	int32_t sid;                                                               \
	uint32_t rpt;                                                              \
	uint8_t mei;                                                               \
                                                                                   \
	P##transact_time(msg, &c->transact_time);                                  \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next_flat(&g)) {                                 \
			P##no_md_entries_security_id(&g, &sid);                    \
			P##no_md_entries_rpt_seq(&g, &rpt);                        \
			gate(c, sid, rpt, false);                                  \
		}                                                                  \
	}                                                                          \
	P##match_event_indicator(msg, &mei);                                       \
	end_of_message(c, mei);                                                    \
}

SEQ_ONLY_HANDLER(on_stats33, mdp3_md_incremental_refresh_daily_statistics33_)
SEQ_ONLY_HANDLER(on_limits34, mdp3_md_incremental_refresh_limits_banding34_)
SEQ_ONLY_HANDLER(on_stats35, mdp3_md_incremental_refresh_session_statistics35_)
SEQ_ONLY_HANDLER(on_stats49, mdp3_md_incremental_refresh_daily_statistics49_)
SEQ_ONLY_HANDLER(on_limits50, mdp3_md_incremental_refresh_limits_banding50_)
SEQ_ONLY_HANDLER(on_stats51, mdp3_md_incremental_refresh_session_statistics51_)
SEQ_ONLY_HANDLER(on_stats67, mdp3_md_incremental_refresh_session_statistics_long_qty67_)

/* Volume 37 (Int32) and 66 (UInt64): RptSeq and the session volume. */
#define VOLUME_HANDLER(NAME, P, SZ)                                                \
static void                                                                        \
NAME(struct book__walk_ctx *c, const struct mdp3_msg *msg)                         \
{                                                                                  \
	struct book_instrument *in;                                                \
	struct mdp3_group g;                                                       \
	int32_t sid;                                                               \
	uint32_t rpt;                                                              \
	uint8_t mei;                                                               \
	SZ size;                                                                   \
                                                                                   \
	P##transact_time(msg, &c->transact_time);                                  \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next_flat(&g)) {                                 \
			P##no_md_entries_security_id(&g, &sid);                    \
			P##no_md_entries_rpt_seq(&g, &rpt);                        \
			in = gate(c, sid, rpt, false);                             \
			if (in != NULL && P##no_md_entries_md_entry_size(&g, &size) == 0) \
				in->volume = book__clamp_u64((uint64_t)size);      \
		}                                                                  \
	}                                                                          \
	P##match_event_indicator(msg, &mei);                                       \
	end_of_message(c, mei);                                                    \
}

VOLUME_HANDLER(on_volume37, mdp3_md_incremental_refresh_volume37_, int32_t)
VOLUME_HANDLER(on_volume66, mdp3_md_incremental_refresh_volume_long_qty66_, uint64_t)

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                   */
/* ------------------------------------------------------------------------ */

/* live: see gate(). */
BOOK__ALWAYS_INLINE void
dispatch(struct book__walk_ctx *c, const struct mdp3_msg *msg, bool live)
{
	struct book_feed *f = c->feed;

	if (live || !c->replay)
		f->counters.messages++;
	if (msg->schema_id != 1) {
		f->counters.messages_ignored++;
		return;
	}
	switch (msg->template_id) {
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_BOOK32:
		if (live)
			on_book32_live(c, msg);
		else
			on_book32(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_BOOK46:
		if (live)
			on_book46_live(c, msg);
		else
			on_book46(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_BOOK_LONG_QTY64:
		if (live)
			on_book64_live(c, msg);
		else
			on_book64(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_ORDER_BOOK47:
		if (!f->mbo_on) {
			if (live || !c->replay)
				f->counters.messages_ignored++;
			break;
		}
		end_of_message(c, book__mbo_on_order_book47(c, msg));
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY42:
		on_trade42(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY48:
		on_trade48(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY_LONG_QTY65:
		on_trade65(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_TRADE36:
		on_trade36(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_DAILY_STATISTICS33:
		on_stats33(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_LIMITS_BANDING34:
		on_limits34(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_SESSION_STATISTICS35:
		on_stats35(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_VOLUME37:
		on_volume37(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_DAILY_STATISTICS49:
		on_stats49(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_LIMITS_BANDING50:
		on_limits50(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_SESSION_STATISTICS51:
		on_stats51(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_VOLUME_LONG_QTY66:
		on_volume66(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_SESSION_STATISTICS_LONG_QTY67:
		on_stats67(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH38:
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH52:
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_LONG_QTY69:
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_ORDER_BOOK44:
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53:
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_TCP61:
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_TCP_LONG_QTY68:
		book__on_snapshot(c, msg);
		break;
	case MDP3_TEMPLATE_CHANNEL_RESET4:
		book__on_channel_reset(c, msg);
		break;
	case MDP3_TEMPLATE_SECURITY_STATUS30:
		book__on_security_status(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FUTURE27:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_SPREAD29:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_OPTION41:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FUTURE54:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_OPTION55:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_SPREAD56:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FIXED_INCOME57:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_REPO58:
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FX63:
		book__on_definition(c, msg);
		break;
	default:
		/* Heartbeats, MBO (43, 47), order-book snapshots, quotes ... */
		if (live || !c->replay)
			f->counters.messages_ignored++;
		break;
	}
}

/* Snapshot and definition streams, TCP, replay: the seq is the frame's. */
static int
on_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct book__walk_ctx *c = ctx;

	c->seq = pkt->msg_seq_num;
	dispatch(c, msg, false);
	return 0;
}

static void
on_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct book__walk_ctx *c = ctx;

	(void)pkt;
	(void)skip;
	if (!c->replay)
		c->feed->counters.messages_unknown++;
}

/* ------------------------------------------------------------------------ */
/* Packets                                                                    */
/* ------------------------------------------------------------------------ */

/* MsgSeqNum from the binary packet header (0 for a runt, which the walker refuses). */
static inline uint32_t
packet_seq(const uint8_t *data, size_t length)
{
	return length >= 4 ? mdp3__load_uint32(data) : 0;
}

/* The live context of an in-sequence incremental packet. */
BOOK__ALWAYS_INLINE void
packet_begin(struct book_feed *f, uint8_t id, const uint8_t *data, uint32_t length,
		uint64_t rx_ns, struct book_packet_ctx *pc)
{
	struct book__walk_ctx *c = &f->live;

	pc->data = data;
	pc->length = length;
	pc->seq = packet_seq(data, length);
	pc->rx_ns = rx_ns;
	pc->feed = id;
	pc->held = false;
	pc->messages = 0;
	pc->open = ++f->open_serial;
	/* Template 47 carries no RptSeq: a packet missed is seen only here (or
	 * in book_feed_loss()), and every MBO book may have lost orders. */
	if (__builtin_expect(f->mbo_on, 0) && f->any_applied && length >= MDP3_PACKET_HEADER_SIZE &&
			(int32_t)(pc->seq - f->last_applied_seq) > 1) {
		f->any_lost = true;
		f->last_lost_seq = pc->seq - 1;
		book__mbo_all_stale(f);
	}
	c->seq = pc->seq;
	c->rx_ns = rx_ns;
	c->feed_id = id;
	c->stream = MDP3_STREAM_INCREMENTAL;
	c->check_rpt = true;
	c->transact_time = 0;
}

BOOK__ALWAYS_INLINE int
feed_packet_begin(struct book_feed *feed, enum mdp3_feed_id id, const uint8_t *data,
		size_t length, uint64_t rx_ns, struct book_packet_ctx *ctx)
{
	if (feed == NULL || data == NULL || ctx == NULL || (unsigned int)id >= MDP3_FEED_COUNT)
		return -EINVAL;
	feed->counters.packets[MDP3_STREAM_INCREMENTAL][id]++;
	packet_begin(feed, (uint8_t)id, data, length > UINT32_MAX ? UINT32_MAX : (uint32_t)length,
			rx_ns, ctx);
	return 0;
}

int
book_feed_packet_begin(struct book_feed *feed, enum mdp3_feed_id id, const uint8_t *data,
		size_t length, uint64_t rx_ns, struct book_packet_ctx *ctx)
{
	return feed_packet_begin(feed, id, data, length, rx_ns, ctx);
}

BOOK__ALWAYS_INLINE void
packet_message(struct book_feed *f, struct book_packet_ctx *pc, const struct mdp3_msg *msg)
{
	assert(pc->open == f->open_serial);
	if (__builtin_expect(msg == NULL, 0)) {
		f->counters.messages_unknown++;
		return;
	}
	pc->messages++;
	dispatch(&f->live, msg, true);
}

int
book_feed_message(struct book_feed *feed, struct book_packet_ctx *ctx, const struct mdp3_msg *msg)
{
	if (feed == NULL || ctx == NULL)
		return -EINVAL;
	packet_message(feed, ctx, msg);
	return 0;
}

static int
on_apply_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct book_feed *f = ctx;

	(void)pkt;
	packet_message(f, f->open_ctx, msg);
	return 0;
}

static void
on_apply_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct book_feed *f = ctx;

	(void)pkt;
	(void)skip;
	packet_message(f, f->open_ctx, NULL);
}

BOOK__ALWAYS_INLINE int
feed_packet_end(struct book_feed *feed, struct book_packet_ctx *ctx, int walk_rc)
{
	struct book_feed *f = feed;

	if (feed == NULL || ctx == NULL)
		return -EINVAL;
	assert(ctx->open == f->open_serial);
	if (__builtin_expect(walk_rc < 0, 0)) {
		f->counters.malformed++;
		return -EBADMSG;
	}
	f->counters.packets_applied++;
	f->any_applied = true;
	f->last_applied_seq = ctx->seq;
	if (f->config.publish == BOOK_PUBLISH_PACKET)
		book__flush_events(&f->live, NULL);
	if (book__buffering(f))
		book__recovery_append(f, ctx);
	if (f->config.handler.on_packet != NULL) {
		struct book_packet_info info = {
			.seq = ctx->seq, .length = ctx->length, .rx_ns = ctx->rx_ns,
			.feed = ctx->feed, .held = ctx->held, .messages = ctx->messages,
		};

		f->config.handler.on_packet(f->config.handler.ctx, &info);
	}
	return 0;
}

int
book_feed_packet_end(struct book_feed *feed, struct book_packet_ctx *ctx, int walk_rc)
{
	return feed_packet_end(feed, ctx, walk_rc);
}

/*
 * begin, walk, end: book_feed_apply()'s path.
 * The same inline bodies as book_feed_packet_begin / book_feed_message /
 * book_feed_packet_end, so the split and the whole path cannot diverge.
 */
BOOK__ALWAYS_INLINE int
apply_packet(struct book_feed *f, struct book_packet_ctx *pc)
{
	int rc;

	f->open_ctx = pc;
	rc = mdp3_walk_packet(&f->apply_walker, pc->data, pc->length);
	f->open_ctx = NULL;
	return feed_packet_end(f, pc, rc);
}

int
book_feed_loss(struct book_feed *f, uint32_t first_seq, uint32_t count, uint64_t now_ns)
{
	struct book__walk_ctx *c;
	uint32_t i;

	if (f == NULL || count == 0)
		return -EINVAL;
	c = &f->live;

	f->counters.declared_losses++;
	f->counters.lost_packets += count;
	f->any_lost = true;
	f->last_lost_seq = first_seq + count - 1;
	book__flush_events(c, NULL);
	if (f->mbo_on)
		book__mbo_all_stale(f);
	c->seq = first_seq;
	c->rx_ns = now_ns;
	if (f->config.loss_policy == BOOK_LOSS_STALE_ALL) {
		for (i = 0; i < f->high_water; i++) {
			struct book_instrument *in = &f->instruments[i];

			if (!(in->flags & BOOK_INSTRUMENT_IN_USE) || in->state != BOOK_STATE_OK)
				continue;
			f->counters.stale_marked_on_loss++;
			book__go_stale(c, in);
		}
	}
	if (f->config.handler.on_loss != NULL)
		f->config.handler.on_loss(f->config.handler.ctx, first_seq, count, now_ns);
	return 0;
}

static int
walk_direct(struct book_feed *f, enum mdp3_stream stream, enum mdp3_feed_id id,
		const uint8_t *data, size_t length, uint64_t rx_ns)
{
	struct book__walk_ctx *c = &f->live;
	int rc;

	c->seq = packet_seq(data, length);
	c->rx_ns = rx_ns;
	c->feed_id = (uint8_t)id;
	c->stream = (uint8_t)stream;
	c->check_rpt = true;
	c->transact_time = 0;
	rc = mdp3_walk_packet(&f->walker, data, length);
	if (rc < 0) {
		f->counters.malformed++;
		return -EBADMSG;
	}
	return 0;
}

int
book_feed_stream_packet(struct book_feed *feed, enum mdp3_stream stream, enum mdp3_feed_id id,
		const uint8_t *data, size_t length, uint64_t rx_ns)
{
	if (feed == NULL || data == NULL || stream == MDP3_STREAM_INCREMENTAL ||
			(unsigned int)stream >= MDP3_STREAM_COUNT ||
			(unsigned int)id >= MDP3_FEED_COUNT)
		return -EINVAL;
	feed->counters.packets[stream][id]++;
	return walk_direct(feed, stream, id, data, length, rx_ns);
}

int
book_feed_apply(struct book_feed *feed, enum mdp3_feed_id id, const uint8_t *data,
		size_t length, uint64_t rx_ns)
{
	struct book_packet_ctx pc;
	int rc;

	rc = feed_packet_begin(feed, id, data, length, rx_ns, &pc);
	if (__builtin_expect(rc < 0, 0))
		return rc;
	return apply_packet(feed, &pc);
}

int
book_feed_tcp(struct book_feed *feed, const uint8_t *data, size_t length, uint64_t rx_ns)
{
	struct book__walk_ctx *c;
	int rc;

	if (feed == NULL || (data == NULL && length > 0))
		return -EINVAL;
	feed->counters.tcp_segments++;
	c = &feed->live;
	c->seq = 0;
	c->rx_ns = rx_ns;
	c->feed_id = MDP3_FEED_A;
	c->stream = MDP3_STREAM_INCREMENTAL;
	c->check_rpt = false;
	c->transact_time = 0;
	rc = mdp3_walk_tcp(&feed->walker, data, length);
	c->check_rpt = true;
	book__flush_events(c, NULL);
	if (rc < 0) {
		feed->counters.malformed++;
		return rc == -EBADMSG ? -EBADMSG : rc;
	}
	return 0;
}

int
book_feed_sequence_reset(struct book_feed *feed)
{
	if (feed == NULL)
		return -EINVAL;
	book__recovery_clear(feed);
	feed->any_applied = false;
	feed->any_lost = false;
	feed->any_unbuffered = false;
	feed->mbo.next_chunk = 0;
	return 0;
}

int
book_feed_flush(struct book_feed *feed, uint64_t now_ns)
{
	(void)now_ns;
	if (feed == NULL)
		return -EINVAL;
	book__flush_events(&feed->live, NULL);
	return 0;
}

void
book__pipeline_init(struct book_feed *f)
{
	struct mdp3_handler wh = { .on_message = on_message, .on_skip = on_skip };

	f->live.feed = f;
	f->live.check_rpt = true;
	f->replay.feed = f;
	f->replay.replay = true;
	f->replay.check_rpt = true;
	wh.ctx = &f->live;
	mdp3_walker_init(&f->walker, NULL, &wh);
	wh.ctx = &f->replay;
	mdp3_walker_init(&f->replay_walker, NULL, &wh);
	wh.on_message = on_apply_message;
	wh.on_skip = on_apply_skip;
	wh.ctx = f;
	mdp3_walker_init(&f->apply_walker, NULL, &wh);
}
