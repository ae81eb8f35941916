/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MDP 3.0 feed pipeline of one channel: arbitration (lib/mdp3 arbiter)
 * -> walker -> per-template handlers -> RptSeq gate -> books -> events, plus
 * recovery (buffer, snapshots, replay), channel reset and definitions.
 *
 * Instruments sit in a slab of max_instruments slots; an open-addressing
 * table (linear probing, load <= 1/2, backward-shift deletion) maps a
 * SecurityID to its slot, with a direct-mapped cache of LOOKUP_WAYS entries
 * (indexed by the low bits of the SecurityID) in front: on the captures a
 * one-entry cache hit 38-60 % of book entries, 64 entries hit 87-95 %.
 * Book changes mark the instrument dirty (once, onto a list of slot numbers); the list is
 * published at EndOfEvent.  While an instrument is stale, every incremental
 * packet is copied into a ring of recovery_packets slots; a snapshot replays
 * the ring for its instrument through a second walker, so the RptSeq gate
 * decides what applies and a replay never re-applies what was applied live.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mdp3.h"

#include "book.h"
#include "book_pvt.h"

#define FEED_ALIGN 64u
#define SLOT_EMPTY UINT32_MAX

/* Internal dirty bits (struct book_instrument.dirty). */
#define DIRTY_OUTRIGHT BOOK_CHANGED_OUTRIGHT
#define DIRTY_IMPLIED BOOK_CHANGED_IMPLIED
#define DIRTY_RESET (1u << 4)
#define DIRTY_LISTED (1u << 7)   /* on the dirty list (at most once) */
#define DIRTY_CHANGES (DIRTY_OUTRIGHT | DIRTY_IMPLIED | DIRTY_RESET)

struct table_slot {
	int32_t key;
	uint32_t index;   /* SLOT_EMPTY: free */
};

/*
 * The lookup cache: entry i holds a SecurityID whose low bits are i, or an
 * "empty" marker whose low bits are not i (so no SecurityID matches it), so
 * a hit costs one compare.
 */
#define LOOKUP_WAYS 64u
#define LOOKUP_EMPTY(i) ((int32_t)((i) ^ 1u))

struct lookup_entry {
	int32_t sid;
	struct book_instrument *in;
};

struct recovery_slot {
	uint64_t rx_ns;
	uint32_t seq;
	uint32_t length;
	uint8_t feed;
};

/* What is being walked: the walker's ctx. */
struct walk_ctx {
	struct book_feed *feed;
	uint64_t rx_ns;
	uint64_t transact_time;
	uint32_t seq;
	int32_t replay_sid;
	uint8_t stream;
	uint8_t feed_id;
	bool replay;
	bool check_rpt;
};

/* An order-book snapshot (44, 53) being aggregated into price levels. */
struct mbo_scratch {
	struct book_level bid[BOOK_MAX_DEPTH];
	struct book_level ask[BOOK_MAX_DEPTH];
	int32_t sid;
	uint32_t next_chunk;   /* 0: idle */
	uint32_t chunks;
	uint32_t last_seq;
	uint8_t depth;
	uint8_t nbid;
	uint8_t nask;
};

struct book_feed {
	struct book_feed_config config;
	struct book_feed_counters counters;
	struct book_instrument *instruments;
	struct table_slot *table;
	uint32_t *free_stack;
	uint32_t *dirty;
	struct mdp3_arb *arb;
	struct recovery_slot *rec;
	uint8_t *rec_data;
	size_t rec_stride;
	uint32_t table_mask;
	uint32_t table_shift;
	uint32_t capacity;
	uint32_t high_water;   /* every slot in use is below it (scans stop there) */
	uint32_t free_top;
	uint32_t count;
	uint32_t dirty_count;
	uint32_t rec_cap;
	uint32_t rec_head;
	uint32_t rec_count;
	struct lookup_entry lookup_cache[LOOKUP_WAYS];
	bool has_events;
	bool heap;
	/* What the live incremental stream delivered, for order-book snapshots. */
	bool any_applied;
	bool any_lost;
	bool any_unbuffered;
	uint32_t last_applied_seq;
	uint32_t last_lost_seq;
	uint32_t last_unbuffered_seq;
	struct mbo_scratch mbo;
	struct walk_ctx live;
	struct walk_ctx replay;
	struct mdp3_walker walker;
	struct mdp3_walker replay_walker;
	/* book_feed_apply() and the arbiter: begin, this walker, end. */
	struct mdp3_walker apply_walker;
	struct book_packet_ctx *open_ctx;  /* the packet apply_walker is walking */
	uint32_t open_serial;              /* packets begun; pairs ctx with feed */
};

static size_t
round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

/* ------------------------------------------------------------------------ */
/* Configuration and memory layout                                            */
/* ------------------------------------------------------------------------ */

struct feed_layout {
	size_t instruments, table, free_stack, dirty, arb, rec, rec_data, total;
	size_t arb_size, rec_stride;
	uint32_t table_size;
};

static int
fill_config(const struct book_feed_config *in, struct book_feed_config *out)
{
	if (in != NULL)
		*out = *in;
	else
		memset(out, 0, sizeof(*out));
	if (out->max_instruments == 0)
		out->max_instruments = BOOK_DEFAULT_MAX_INSTRUMENTS;
	if (out->recovery_packets == 0)
		out->recovery_packets = BOOK_DEFAULT_RECOVERY_PACKETS;
	if (out->default_depth == 0)
		out->default_depth = BOOK_MAX_DEPTH;
	if (out->default_implied_depth == 0 && !out->implied_none)
		out->default_implied_depth = BOOK_IMPLIED_DEPTH;
	if (out->implied_none)
		out->default_implied_depth = 0;
	if (out->price_exponent == 0)
		out->price_exponent = BOOK_DEFAULT_PRICE_EXPONENT;
	if (out->arb.max_packet_size == 0)
		out->arb.max_packet_size = MDP3_ARB_DEFAULT_MAX_PACKET;
	if (out->max_instruments > BOOK_MAX_INSTRUMENTS ||
			out->recovery_packets > BOOK_MAX_RECOVERY_PACKETS ||
			out->default_depth > BOOK_MAX_DEPTH ||
			out->default_implied_depth > BOOK_IMPLIED_DEPTH ||
			out->join > BOOK_JOIN_RECOVER || out->publish > BOOK_PUBLISH_PACKET ||
			out->loss_policy > BOOK_LOSS_STALE_ALL)
		return -EINVAL;
	return 0;
}

static int
compute_layout(const struct book_feed_config *c, struct feed_layout *l)
{
	size_t off;

	l->arb_size = mdp3_arb_memsize(&c->arb);
	if (l->arb_size == 0)
		return -EINVAL;
	l->table_size = 2;
	while (l->table_size < 2 * c->max_instruments)
		l->table_size <<= 1;
	l->rec_stride = round_up(c->arb.max_packet_size, FEED_ALIGN);
	off = round_up(sizeof(struct book_feed), FEED_ALIGN);
	l->instruments = off;
	off = round_up(off + (size_t)c->max_instruments * sizeof(struct book_instrument),
			FEED_ALIGN);
	l->table = off;
	off = round_up(off + (size_t)l->table_size * sizeof(struct table_slot), FEED_ALIGN);
	l->free_stack = off;
	off = round_up(off + (size_t)c->max_instruments * sizeof(uint32_t), FEED_ALIGN);
	l->dirty = off;
	off = round_up(off + (size_t)c->max_instruments * sizeof(uint32_t), FEED_ALIGN);
	l->arb = off;
	off = round_up(off + l->arb_size, FEED_ALIGN);
	l->rec = off;
	off = round_up(off + (size_t)c->recovery_packets * sizeof(struct recovery_slot),
			FEED_ALIGN);
	l->rec_data = off;
	l->total = off + (size_t)c->recovery_packets * l->rec_stride;
	return 0;
}

size_t
book_feed_memsize(const struct book_feed_config *config)
{
	struct book_feed_config c;
	struct feed_layout l;

	if (fill_config(config, &c) < 0 || compute_layout(&c, &l) < 0) {
		errno = EINVAL;
		return 0;
	}
	return l.total;
}

static void lookup_cache_clear(struct book_feed *f);
static int on_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg);
static void on_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip);
static int on_apply_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg);
static void on_apply_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip);
static int on_arb_deliver(void *ctx, const struct mdp3_arb_packet *packet);
static void on_arb_loss(void *ctx, uint32_t first_seq, uint32_t count, uint64_t now_ns);

struct book_feed *
book_feed_init(void *mem, size_t size, const struct book_feed_config *config)
{
	struct mdp3_arb_handler ah = { .deliver = on_arb_deliver, .loss = on_arb_loss };
	struct mdp3_handler wh = { .on_message = on_message, .on_skip = on_skip };
	struct book_feed_config c;
	struct book_feed *f = mem;
	struct feed_layout l;
	uint8_t *base = mem;
	uint32_t i;

	if (mem == NULL || ((uintptr_t)mem % FEED_ALIGN) != 0 || fill_config(config, &c) < 0 ||
			compute_layout(&c, &l) < 0) {
		errno = EINVAL;
		return NULL;
	}
	if (size < l.total) {
		errno = ENOSPC;
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	f->config = c;
	f->instruments = (struct book_instrument *)(base + l.instruments);
	f->table = (struct table_slot *)(base + l.table);
	f->free_stack = (uint32_t *)(base + l.free_stack);
	f->dirty = (uint32_t *)(base + l.dirty);
	f->rec = (struct recovery_slot *)(base + l.rec);
	f->rec_data = base + l.rec_data;
	f->rec_stride = l.rec_stride;
	f->rec_cap = c.recovery_packets;
	f->capacity = c.max_instruments;
	f->table_mask = l.table_size - 1;
	f->table_shift = 32;
	for (i = l.table_size; i > 1; i >>= 1)
		f->table_shift--;
	for (i = 0; i < l.table_size; i++) {
		f->table[i].key = 0;
		f->table[i].index = SLOT_EMPTY;
	}
	/* Pop order 0, 1, 2 ...: slots fill in order of creation. */
	for (i = 0; i < c.max_instruments; i++) {
		f->free_stack[i] = c.max_instruments - 1 - i;
		f->instruments[i].flags = 0;
	}
	f->free_top = c.max_instruments;
	lookup_cache_clear(f);
	f->has_events = c.handler.on_event != NULL;
	ah.ctx = f;
	f->arb = mdp3_arb_init(base + l.arb, l.arb_size, &c.arb, &ah);
	if (f->arb == NULL)
		return NULL;
	f->config.arb = *mdp3_arb_config(f->arb);
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
	return f;
}

struct book_feed *
book_feed_create(const struct book_feed_config *config)
{
	size_t size = book_feed_memsize(config);
	struct book_feed *f;
	void *mem;

	if (size == 0)
		return NULL;
	mem = aligned_alloc(FEED_ALIGN, round_up(size, FEED_ALIGN));
	if (mem == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	f = book_feed_init(mem, size, config);
	if (f == NULL) {
		int e = errno;

		free(mem);
		errno = e;
		return NULL;
	}
	f->heap = true;
	return f;
}

void
book_feed_destroy(struct book_feed *feed)
{
	if (feed != NULL && feed->heap)
		free(feed);
}

/* ------------------------------------------------------------------------ */
/* Instrument table                                                           */
/* ------------------------------------------------------------------------ */

static inline uint32_t
home_of(const struct book_feed *f, int32_t sid)
{
	return ((uint32_t)sid * UINT32_C(0x9e3779b1)) >> f->table_shift & f->table_mask;
}

static inline struct lookup_entry *
lookup_way(struct book_feed *f, int32_t sid)
{
	return &f->lookup_cache[(uint32_t)sid & (LOOKUP_WAYS - 1)];
}

static void
lookup_cache_clear(struct book_feed *f)
{
	uint32_t i;

	for (i = 0; i < LOOKUP_WAYS; i++) {
		f->lookup_cache[i].sid = LOOKUP_EMPTY(i);
		f->lookup_cache[i].in = NULL;
	}
}

static inline struct book_instrument *
lookup(struct book_feed *f, int32_t sid)
{
	struct lookup_entry *way = lookup_way(f, sid);
	uint32_t h;

	if (__builtin_expect(way->sid == sid, 1))
		return way->in;
	for (h = home_of(f, sid);; h = (h + 1) & f->table_mask) {
		const struct table_slot *s = &f->table[h];

		if (s->index == SLOT_EMPTY)
			return NULL;
		if (s->key == sid) {
			way->sid = sid;
			way->in = &f->instruments[s->index];
			return way->in;
		}
	}
}

static void
set_stale_count(struct book_feed *f, uint64_t n)
{
	f->counters.stale_books = n;
}

/* A new instrument; NULL (counted) when the table is full. */
static struct book_instrument *
create(struct book_feed *f, int32_t sid, bool synced)
{
	struct lookup_entry *way;
	struct book_instrument *in;
	uint32_t h, index;

	if (f->free_top == 0) {
		f->counters.table_full++;
		return NULL;
	}
	index = f->free_stack[--f->free_top];
	if (index >= f->high_water)
		f->high_water = index + 1;
	in = &f->instruments[index];
	book_instrument_init(in, sid, f->config.default_depth, f->config.default_implied_depth,
			f->config.price_exponent);
	in->index = index;
	in->flags = BOOK_INSTRUMENT_IN_USE;
	if (!synced && f->config.join == BOOK_JOIN_RECOVER) {
		in->state = BOOK_STATE_STALE;
		in->flags |= BOOK_INSTRUMENT_NEVER_SYNCED;
		set_stale_count(f, f->counters.stale_books + 1);
	}
	for (h = home_of(f, sid); f->table[h].index != SLOT_EMPTY; h = (h + 1) & f->table_mask)
		;
	f->table[h].key = sid;
	f->table[h].index = index;
	f->count++;
	way = lookup_way(f, sid);
	way->sid = sid;
	way->in = in;
	return in;
}

static void
remove_instrument(struct book_feed *f, struct book_instrument *in)
{
	struct lookup_entry *way;
	uint32_t i, j, k;

	for (i = home_of(f, in->security_id); f->table[i].index != in->index;
			i = (i + 1) & f->table_mask)
		;
	f->table[i].index = SLOT_EMPTY;
	for (j = (i + 1) & f->table_mask; f->table[j].index != SLOT_EMPTY;
			j = (j + 1) & f->table_mask) {
		k = home_of(f, f->table[j].key);
		/* Move j into the hole i unless its home lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		f->table[i] = f->table[j];
		f->table[j].index = SLOT_EMPTY;
		i = j;
	}
	if (in->state == BOOK_STATE_STALE)
		set_stale_count(f, f->counters.stale_books - 1);
	in->flags = 0;
	in->dirty = 0;
	f->free_stack[f->free_top++] = in->index;
	f->count--;
	way = lookup_way(f, in->security_id);
	if (way->sid == in->security_id)
		way->sid = LOOKUP_EMPTY((uint32_t)(way - f->lookup_cache));
}

/* ------------------------------------------------------------------------ */
/* Events                                                                     */
/* ------------------------------------------------------------------------ */

static bool
top_equal(const struct book_top *a, const struct book_top *b)
{
	return a->bid_price == b->bid_price && a->bid_qty == b->bid_qty &&
		a->ask_price == b->ask_price && a->ask_qty == b->ask_qty &&
		a->bid_orders == b->bid_orders && a->ask_orders == b->ask_orders;
}

static void
event_base(const struct walk_ctx *c, struct book_event *e, struct book_instrument *in,
		uint32_t what)
{
	static const struct book_top no_top = {
		.bid_price = BOOK_PRICE_NONE, .ask_price = BOOK_PRICE_NONE,
	};

	/* Every member is set; trade and status only matter for their events. */
	e->what = what;
	e->changed = 0;
	e->msg_seq_num = c->seq;
	e->rx_ns = c->rx_ns;
	e->transact_time = c->transact_time;
	e->replay = c->replay;
	e->instrument = in;
	memset(&e->trade, 0, sizeof(e->trade));
	memset(&e->status, 0, sizeof(e->status));
	if (in == NULL) {
		e->security_id = 0;
		e->state = BOOK_STATE_OK;
		e->outright = e->implied = e->consolidated = no_top;
		return;
	}
	e->security_id = in->security_id;
	e->state = in->state;
	book__top(in, &e->outright, &e->implied, &e->consolidated);
	if (!top_equal(&e->consolidated, &in->published)) {
		e->changed |= BOOK_CHANGED_TOP;
		in->published = e->consolidated;
	}
}

static void
emit(struct book_feed *f, const struct book_event *e)
{
	f->counters.events++;
	f->config.handler.on_event(f->config.handler.ctx, e);
}

/* An immediate event about one instrument (or a group when in is NULL). */
static void
publish(const struct walk_ctx *c, struct book_instrument *in, uint32_t what)
{
	struct book_event e;

	if (!c->feed->has_events)
		return;
	event_base(c, &e, in, what);
	emit(c->feed, &e);
}

static void
publish_book(const struct walk_ctx *c, struct book_instrument *in)
{
	struct book_event e;
	uint8_t d = in->dirty;

	in->dirty &= DIRTY_LISTED;
	event_base(c, &e, in, BOOK_EVENT_BOOK | ((d & DIRTY_RESET) ? BOOK_EVENT_RESET : 0));
	e.changed |= d & (BOOK_CHANGED_OUTRIGHT | BOOK_CHANGED_IMPLIED);
	emit(c->feed, &e);
}

static inline void
mark_dirty(struct book_feed *f, struct book_instrument *in, uint8_t bits)
{
	if (!f->has_events)
		return;
	if (!(in->dirty & DIRTY_LISTED))
		f->dirty[f->dirty_count++] = in->index;
	in->dirty |= bits | DIRTY_LISTED;
}

/* Publish pending book changes (of one instrument only when only != NULL). */
static void
flush_events(const struct walk_ctx *c, struct book_instrument *only)
{
	struct book_feed *f = c->feed;
	uint32_t i;

	if (f->dirty_count == 0)
		return;
	if (only != NULL) {
		if ((only->flags & BOOK_INSTRUMENT_IN_USE) && (only->dirty & DIRTY_CHANGES))
			publish_book(c, only);
		return;
	}
	for (i = 0; i < f->dirty_count; i++) {
		struct book_instrument *in = &f->instruments[f->dirty[i]];

		if ((in->flags & BOOK_INSTRUMENT_IN_USE) && (in->dirty & DIRTY_CHANGES))
			publish_book(c, in);
		in->dirty = 0;
	}
	f->dirty_count = 0;
}

static inline void
end_of_message(const struct walk_ctx *c, uint8_t match_event_indicator)
{
	if (c->feed->dirty_count != 0 &&
			(match_event_indicator & MDP3_MATCH_EVENT_INDICATOR_END_OF_EVENT))
		flush_events(c, c->replay ? lookup(c->feed, c->replay_sid) : NULL);
}

/* ------------------------------------------------------------------------ */
/* RptSeq gate, stale, recovery buffer                                        */
/* ------------------------------------------------------------------------ */

static void
go_stale(const struct walk_ctx *c, struct book_instrument *in)
{
	struct book_feed *f = c->feed;

	in->state = BOOK_STATE_STALE;
	set_stale_count(f, f->counters.stale_books + 1);
	publish(c, in, BOOK_EVENT_STALE);
}

static void
become_valid(const struct walk_ctx *c, struct book_instrument *in)
{
	struct book_feed *f = c->feed;

	if (in->state == BOOK_STATE_STALE)
		set_stale_count(f, f->counters.stale_books - 1);
	in->state = BOOK_STATE_OK;
	in->flags &= (uint8_t)~BOOK_INSTRUMENT_NEVER_SYNCED;
}

/* gate() when the entry is not simply the next of a valid instrument. */
static __attribute__((noinline)) struct book_instrument *
gate_slow(const struct walk_ctx *c, struct book_instrument *in, uint32_t rpt)
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
		become_valid(c, in);
		in->rpt_seq = 0;
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN;
		publish(c, in, BOOK_EVENT_RECOVERED);
	}
	if (!(in->flags & BOOK_INSTRUMENT_RPT_KNOWN)) {
		in->rpt_seq = rpt - 1;
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN;
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
	go_stale(c, in);
	return NULL;
}

/* The instrument of a book entry on a lookup cache miss: found or created. */
static __attribute__((noinline)) struct book_instrument *
lookup_or_create(struct book_feed *f, int32_t sid)
{
	struct book_instrument *in = lookup(f, sid);

	return in != NULL ? in : create(f, sid, false);
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
gate(const struct walk_ctx *c, int32_t sid, uint32_t rpt, bool live)
{
	struct book_feed *f = c->feed;
	struct lookup_entry *way;
	struct book_instrument *in;

	f->counters.entries++;
	if (!live && __builtin_expect(c->replay, 0) && sid != c->replay_sid)
		return NULL;
	/* A cache hit is never NULL: the cache holds instruments in use only. */
	way = lookup_way(f, sid);
	if (__builtin_expect(way->sid == sid, 1)) {
		in = way->in;
	} else {
		in = lookup_or_create(f, sid);
		if (in == NULL)
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

static void
recovery_clear(struct book_feed *f)
{
	f->rec_head = 0;
	f->rec_count = 0;
}

static void
recovery_append(struct book_feed *f, const struct book_packet_ctx *p)
{
	struct recovery_slot *s;
	uint32_t i;

	if (p->length > f->rec_stride) {
		f->counters.recovery_oversize++;
		f->any_unbuffered = true;
		f->last_unbuffered_seq = p->seq;
		return;
	}
	if (f->rec_count == f->rec_cap) {
		f->rec_head = f->rec_head + 1 == f->rec_cap ? 0 : f->rec_head + 1;
		f->rec_count--;
		f->counters.recovery_overflows++;
	}
	i = f->rec_head + f->rec_count;
	if (i >= f->rec_cap)
		i -= f->rec_cap;
	s = &f->rec[i];
	s->seq = p->seq;
	s->length = p->length;
	s->rx_ns = p->rx_ns;
	s->feed = p->feed;
	memcpy(f->rec_data + (size_t)i * f->rec_stride, p->data, p->length);
	f->rec_count++;
	f->counters.recovery_buffered++;
}

/* Replay the buffered packets after last_seq for one instrument. */
static void
replay(struct book_feed *f, int32_t sid, uint32_t last_seq)
{
	struct walk_ctx *c = &f->replay;
	struct book_instrument *in;
	uint32_t k, i;

	c->replay_sid = sid;
	for (k = 0; k < f->rec_count; k++) {
		i = f->rec_head + k;
		if (i >= f->rec_cap)
			i -= f->rec_cap;
		if ((int32_t)(f->rec[i].seq - last_seq) <= 0)
			continue;
		c->seq = f->rec[i].seq;
		c->rx_ns = f->rec[i].rx_ns;
		c->feed_id = f->rec[i].feed;
		c->transact_time = 0;
		mdp3_walk_packet(&f->replay_walker, f->rec_data + (size_t)i * f->rec_stride,
				f->rec[i].length);
		f->counters.replayed_packets++;
		in = lookup(f, sid);
		if (in == NULL || in->state != BOOK_STATE_OK)
			break;
	}
	in = lookup(f, sid);
	if (in != NULL)
		flush_events(c, in);
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
	SIDE_LAYOUT(BID, bid, depth, DIRTY_OUTRIGHT),
	SIDE_LAYOUT(OFFER, ask, depth, DIRTY_OUTRIGHT),
	SIDE_LAYOUT(IMPLIED_BID, implied_bid, implied_depth, DIRTY_IMPLIED),
	SIDE_LAYOUT(IMPLIED_OFFER, implied_ask, implied_depth, DIRTY_IMPLIED),
};

_Static_assert(sizeof(struct book_instrument) <= UINT16_MAX, "offsets fit side_layout");
_Static_assert(DIRTY_OUTRIGHT != 0 && DIRTY_IMPLIED != 0 &&
		(DIRTY_OUTRIGHT | DIRTY_IMPLIED) <= UINT8_MAX, "side bits are non-zero bytes");
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
apply_book_entry(const struct walk_ctx *c, struct book_instrument *in,
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
		f->counters.book_resets++;
		mark_dirty(f, in, DIRTY_OUTRIGHT | DIRTY_IMPLIED | DIRTY_RESET);
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
	mark_dirty(f, in, bit);
}

static inline int64_t
clamp_u64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* MDEntrySize of either width as a quantity (UInt64 clamped, never negative). */
#define int32_t_to_qty(v) ((int64_t)(v))
#define uint64_t_to_qty(v) clamp_u64(v)

/*
 * Book messages: 32 (PRICENULL, Int32 sizes), 46 (PRICENULL9), 64 (UInt64
 * sizes).  SZ is the C type of MDEntrySize.
 */
#define BOOK_HANDLER(NAME, P, SZ)                                                  \
BOOK__ALWAYS_INLINE void                                                           \
NAME##_body(struct walk_ctx *c, const struct mdp3_msg *msg, bool live)             \
{                                                                                  \
	struct book_instrument *in;                                                \
	struct book_entry e;                                                       \
	struct mdp3_group g;                                                       \
	int32_t sid;                                                               \
	uint32_t rpt;                                                              \
	uint8_t mei;                                                               \
	SZ size;                                                                   \
                                                                                   \
	P##transact_time(msg, &c->transact_time);                                 \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next_flat(&g)) {                                 \
			P##no_md_entries_security_id(&g, &sid);                    \
			P##no_md_entries_rpt_seq(&g, &rpt);                        \
			in = gate(c, sid, rpt, live);                              \
			if (in == NULL)                                            \
				continue;                                          \
			P##no_md_entries_md_update_action(&g, &e.action);          \
			P##no_md_entries_md_entry_type(&g, &e.type);               \
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
	P##match_event_indicator(msg, &mei);                                       \
	end_of_message(c, mei);                                                    \
}                                                                                  \
                                                                                   \
static void                                                                        \
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
{                                                                                  \
	NAME##_body(c, msg, false);                                                \
}                                                                                  \
                                                                                   \
static void                                                                        \
NAME##_live(struct walk_ctx *c, const struct mdp3_msg *msg)                        \
{                                                                                  \
	NAME##_body(c, msg, true);                                                 \
}

BOOK_HANDLER(on_book32, mdp3_md_incremental_refresh_book32_, int32_t)
BOOK_HANDLER(on_book46, mdp3_md_incremental_refresh_book46_, int32_t)
BOOK_HANDLER(on_book64, mdp3_md_incremental_refresh_book_long_qty64_, uint64_t)

static void
apply_trade(const struct walk_ctx *c, struct book_instrument *in, int px_rc,
		const struct mdp3_decimal *px, int64_t qty, int32_t orders, uint32_t trade_id,
		uint8_t aggressor, uint8_t action)
{
	struct book_feed *f = c->feed;
	struct book_trade t;
	struct book_event e;

	if (px_rc != 0 || book__price_normalize(px->mantissa, px->exponent, in->price_exponent,
				&t.price) < 0) {
		f->counters.bad_entries++;
		return;
	}
	t.qty = qty;
	t.orders = orders;
	t.trade_id = trade_id;
	t.aggressor = aggressor;
	t.action = action;
	t.transact_time = c->transact_time;
	in->last_trade = t;
	f->counters.trades++;
	if (!f->has_events)
		return;
	event_base(c, &e, in, BOOK_EVENT_TRADE);
	e.trade = t;
	emit(f, &e);
}

/* TradeSummary 42 / 48 (Int32 sizes) and 65 (UInt64 sizes). */
#define TRADE_HANDLER(NAME, P, SZ)                                                 \
static void                                                                        \
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
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
	P##transact_time(msg, &c->transact_time);                                 \
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
			apply_trade(c, in, px_rc, &px, clamp_u64((uint64_t)size),  \
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
on_trade36(struct walk_ctx *c, const struct mdp3_msg *msg)
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
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
{                                                                                  \
	struct mdp3_group g;                                                       \
	int32_t sid;                                                               \
	uint32_t rpt;                                                              \
	uint8_t mei;                                                               \
                                                                                   \
	P##transact_time(msg, &c->transact_time);                                 \
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
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
{                                                                                  \
	struct book_instrument *in;                                                \
	struct mdp3_group g;                                                       \
	int32_t sid;                                                               \
	uint32_t rpt;                                                              \
	uint8_t mei;                                                               \
	SZ size;                                                                   \
                                                                                   \
	P##transact_time(msg, &c->transact_time);                                 \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next_flat(&g)) {                                 \
			P##no_md_entries_security_id(&g, &sid);                    \
			P##no_md_entries_rpt_seq(&g, &rpt);                        \
			in = gate(c, sid, rpt, false);                             \
			if (in != NULL && P##no_md_entries_md_entry_size(&g, &size) == 0) \
				in->volume = clamp_u64((uint64_t)size);            \
		}                                                                  \
	}                                                                          \
	P##match_event_indicator(msg, &mei);                                       \
	end_of_message(c, mei);                                                    \
}

VOLUME_HANDLER(on_volume37, mdp3_md_incremental_refresh_volume37_, int32_t)
VOLUME_HANDLER(on_volume66, mdp3_md_incremental_refresh_volume_long_qty66_, uint64_t)

/* ------------------------------------------------------------------------ */
/* Snapshots                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * The instrument a MBP snapshot (RptSeq rpt, as of incremental packet
 * last_seq) should replace, or NULL when it brings nothing new.
 */
static struct book_instrument *
snapshot_target(const struct walk_ctx *c, int32_t sid, uint32_t rpt)
{
	struct book_feed *f = c->feed;
	struct book_instrument *in = lookup(f, sid);

	if (in == NULL)
		return create(f, sid, true);
	if ((in->flags & BOOK_INSTRUMENT_RPT_KNOWN) && !(in->flags & BOOK_INSTRUMENT_NEVER_SYNCED)
			&& (int32_t)(rpt - in->rpt_seq) <= 0) {
		f->counters.snapshots_ignored++;
		return NULL;
	}
	return in;
}

/* One snapshot entry into the books being rebuilt. */
static void
snapshot_entry(const struct walk_ctx *c, struct book_instrument *in, char type, int level_rc,
		int level, int px_rc, const struct mdp3_decimal *px, int64_t qty, int32_t orders)
{
	struct book_feed *f = c->feed;
	struct book_level v, *levels;
	unsigned int depth;

	switch (type) {
	case MDP3_MD_ENTRY_TYPE_BID:
		levels = in->bid;
		depth = in->depth;
		break;
	case MDP3_MD_ENTRY_TYPE_OFFER:
		levels = in->ask;
		depth = in->depth;
		break;
	case MDP3_MD_ENTRY_TYPE_IMPLIED_BID:
		levels = in->implied_bid;
		depth = in->implied_depth;
		break;
	case MDP3_MD_ENTRY_TYPE_IMPLIED_OFFER:
		levels = in->implied_ask;
		depth = in->implied_depth;
		break;
	case MDP3_MD_ENTRY_TYPE_TRADE:
		if (px_rc == 0 && book__price_normalize(px->mantissa, px->exponent,
					in->price_exponent, &in->last_trade.price) == 0) {
			in->last_trade.qty = qty;
			in->last_trade.orders = orders;
			in->last_trade.transact_time = c->transact_time;
		}
		return;
	default:
		return; /* statistics, market best: not kept */
	}
	if (level_rc != 0 || level < 1 || (unsigned int)level > depth) {
		f->counters.level_out_of_range++;
		return;
	}
	if (px_rc != 0 || book__price_normalize(px->mantissa, px->exponent, in->price_exponent,
				&v.price) < 0) {
		f->counters.bad_entries++;
		return;
	}
	v.qty = qty;
	v.orders = orders;
	v.reserved = 0;
	book__level_set(&levels[level - 1], &v);
}

/* After the entries: the instrument is valid at rpt; replay what followed. */
static void
snapshot_done(const struct walk_ctx *c, struct book_instrument *in, uint32_t rpt,
		uint32_t last_seq, bool rpt_valid, bool replay_after, int status_rc,
		uint8_t status)
{
	struct book_feed *f = c->feed;
	bool was_stale = in->state == BOOK_STATE_STALE;
	int32_t sid = in->security_id;

	become_valid(c, in);
	in->rpt_seq = rpt;
	if (rpt_valid)
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN;
	else
		in->flags &= (uint8_t)~BOOK_INSTRUMENT_RPT_KNOWN;
	in->last_msg_seq = last_seq;
	in->last_transact_time = c->transact_time;
	if (status_rc == 0)
		in->trading_status = status;
	in->dirty &= (uint8_t)~DIRTY_CHANGES;
	f->counters.snapshots++;
	if (was_stale)
		f->counters.recoveries++;
	publish(c, in, BOOK_EVENT_SNAPSHOT | BOOK_EVENT_BOOK |
			(was_stale ? BOOK_EVENT_RECOVERED : 0));
	if (replay_after && f->rec_count > 0)
		replay(f, sid, last_seq);
	if (f->counters.stale_books == 0)
		recovery_clear(f);
}

/* SnapshotFullRefresh 38 (PRICENULL), 52 (PRICENULL9), 69 (UInt64 sizes). */
#define SNAPSHOT_HANDLER(NAME, P, SZ, LV)                                          \
static void                                                                        \
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
{                                                                                  \
	struct book_instrument *in;                                                \
	struct mdp3_decimal px;                                                    \
	struct mdp3_group g;                                                       \
	uint32_t rpt, last_seq;                                                    \
	int32_t sid, orders;                                                       \
	int px_rc, level_rc, status_rc;                                            \
	uint8_t status;                                                            \
	char type;                                                                 \
	LV level;                                                                  \
	SZ size;                                                                   \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &sid);                                                 \
	P##rpt_seq(msg, &rpt);                                                     \
	P##last_msg_seq_num_processed(msg, &last_seq);                             \
	P##transact_time(msg, &c->transact_time);                                 \
	status_rc = P##md_security_trading_status(msg, &status);                   \
	in = snapshot_target(c, sid, rpt);                                         \
	if (in == NULL)                                                            \
		return;                                                            \
	book_instrument_clear(in);                                                 \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next(&g)) {                                      \
			P##no_md_entries_md_entry_type(&g, &type);                 \
			level_rc = P##no_md_entries_md_price_level(&g, &level);    \
			px_rc = P##no_md_entries_md_entry_px(&g, &px);             \
			if (P##no_md_entries_md_entry_size(&g, &size) != 0)        \
				size = 0;                                          \
			if (P##no_md_entries_number_of_orders(&g, &orders) != 0)   \
				orders = 0;                                        \
			snapshot_entry(c, in, type, level_rc, level, px_rc, &px,   \
					clamp_u64((uint64_t)size), orders);        \
		}                                                                  \
	}                                                                          \
	snapshot_done(c, in, rpt, last_seq, true, true, status_rc, status);        \
}

SNAPSHOT_HANDLER(on_snapshot38, mdp3_snapshot_full_refresh38_, int32_t, int8_t)
SNAPSHOT_HANDLER(on_snapshot52, mdp3_snapshot_full_refresh52_, int32_t, int8_t)
SNAPSHOT_HANDLER(on_snapshot69, mdp3_snapshot_full_refresh_long_qty69_, uint64_t, uint8_t)

/* Conflated-TCP snapshots 61 (Int32 sizes) and 68 (UInt64): no RptSeq. */
#define TCP_SNAPSHOT_HANDLER(NAME, P, SZ, LV)                                      \
static void                                                                        \
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
{                                                                                  \
	struct book_instrument *in;                                                \
	struct mdp3_decimal px;                                                    \
	struct mdp3_group g;                                                       \
	int32_t sid, orders;                                                       \
	int px_rc, level_rc;                                                       \
	char type;                                                                 \
	LV level;                                                                  \
	SZ size;                                                                   \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &sid);                                                 \
	P##transact_time(msg, &c->transact_time);                                 \
	in = lookup(c->feed, sid);                                                 \
	if (in == NULL && (in = create(c->feed, sid, true)) == NULL)               \
		return;                                                            \
	book_instrument_clear(in);                                                 \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next(&g)) {                                      \
			P##no_md_entries_md_entry_type(&g, &type);                 \
			level_rc = P##no_md_entries_md_price_level(&g, &level);    \
			px_rc = P##no_md_entries_md_entry_px(&g, &px);             \
			if (P##no_md_entries_md_entry_size(&g, &size) != 0)        \
				size = 0;                                          \
			if (P##no_md_entries_number_of_orders(&g, &orders) != 0)   \
				orders = 0;                                        \
			snapshot_entry(c, in, type, level_rc, level, px_rc, &px,   \
					clamp_u64((uint64_t)size), orders);        \
		}                                                                  \
	}                                                                          \
	snapshot_done(c, in, 0, c->seq, false, false, -ENOENT, 0);                 \
}

TCP_SNAPSHOT_HANDLER(on_tcp_snapshot61, mdp3_snapshot_full_refresh_tcp61_, int32_t, int8_t)
TCP_SNAPSHOT_HANDLER(on_tcp_snapshot68, mdp3_snapshot_full_refresh_tcp_long_qty68_, uint64_t,
		uint8_t)

/*
 * Order-book (MBO) snapshots 44 and 53 as a fallback recovery of the
 * outright market-by-price book: orders are aggregated into the best
 * `depth` price levels per side (a price dropped as worse than a full set
 * never comes back, since the kept set only improves), over every chunk of
 * the instrument.  They carry no RptSeq, so they are applied only when
 * every incremental packet after LastMsgSeqNumProcessed is in the recovery
 * buffer (no loss, overflow or oversize packet since), the instrument is
 * stale or unknown, and it has no implied book (an MBO snapshot cannot
 * restore one).  The replay then takes the RptSeq of the instrument's first
 * replayed entry as its baseline.
 */
static void
mbo_add(struct book_level *levels, uint8_t *n, unsigned int depth, bool bid, int64_t price,
		int64_t qty)
{
	unsigned int i, j;

	for (i = 0; i < *n; i++) {
		if (levels[i].price == price) {
			levels[i].qty += qty;
			levels[i].orders++;
			return;
		}
		if (bid ? price > levels[i].price : price < levels[i].price)
			break;
	}
	if (i >= depth)
		return;
	j = *n < depth ? *n : depth - 1;
	for (; j > i; j--)
		levels[j] = levels[j - 1];
	levels[i].price = price;
	levels[i].qty = qty;
	levels[i].orders = 1;
	levels[i].reserved = 0;
	if (*n < depth)
		(*n)++;
}

/* Whether every incremental packet after last_seq is in the buffer. */
static bool
buffer_complete_after(const struct book_feed *f, uint32_t last_seq)
{
	if (f->any_lost && (int32_t)(f->last_lost_seq - last_seq) > 0)
		return false;
	if (f->any_unbuffered && (int32_t)(f->last_unbuffered_seq - last_seq) > 0)
		return false;
	if (f->rec_count > 0)
		return (int32_t)(f->rec[f->rec_head].seq - (last_seq + 1)) <= 0;
	return !f->any_applied || (int32_t)(f->last_applied_seq - last_seq) <= 0;
}

static void
mbo_apply(const struct walk_ctx *c)
{
	struct book_feed *f = c->feed;
	struct mbo_scratch *m = &f->mbo;
	struct book_instrument *in = lookup(f, m->sid);
	unsigned int i;

	if ((in != NULL && in->state == BOOK_STATE_OK) ||
			(in != NULL ? in->implied_depth : f->config.default_implied_depth) > 0 ||
			!buffer_complete_after(f, m->last_seq)) {
		f->counters.snapshots_ignored++;
		return;
	}
	if (in == NULL && (in = create(f, m->sid, true)) == NULL)
		return;
	book_instrument_clear(in);
	for (i = 0; i < m->nbid && i < in->depth; i++)
		book__level_set(&in->bid[i], &m->bid[i]);
	for (i = 0; i < m->nask && i < in->depth; i++)
		book__level_set(&in->ask[i], &m->ask[i]);
	snapshot_done(c, in, 0, m->last_seq, false, true, -ENOENT, 0);
}

#define MBO_SNAPSHOT_HANDLER(NAME, P)                                              \
static void                                                                        \
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
{                                                                                  \
	struct mbo_scratch *m = &c->feed->mbo;                                     \
	const struct book_instrument *in;                                          \
	uint32_t chunk, chunks, last_seq;                                          \
	struct mdp3_decimal px;                                                    \
	struct mdp3_group g;                                                       \
	int32_t sid, qty;                                                          \
	int64_t price;                                                             \
	char type;                                                                 \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &sid);                                                 \
	P##no_chunks(msg, &chunks);                                                \
	P##current_chunk(msg, &chunk);                                             \
	P##last_msg_seq_num_processed(msg, &last_seq);                             \
	P##transact_time(msg, &c->transact_time);                                 \
	if (chunk == 1) {                                                          \
		in = lookup(c->feed, sid);                                         \
		m->sid = sid;                                                      \
		m->chunks = chunks;                                                \
		m->last_seq = last_seq;                                            \
		m->depth = in != NULL ? in->depth : c->feed->config.default_depth; \
		m->nbid = m->nask = 0;                                             \
		m->next_chunk = 1;                                                 \
	}                                                                          \
	if (m->next_chunk == 0 || chunk != m->next_chunk || sid != m->sid ||       \
			chunks != m->chunks || last_seq != m->last_seq) {          \
		m->next_chunk = 0; /* a chunk went missing: wait for the next loop */ \
		return;                                                            \
	}                                                                          \
	if (P##no_md_entries(msg, &g) == 0) {                                      \
		while (mdp3_group_next(&g)) {                                      \
			P##no_md_entries_md_entry_type(&g, &type);                 \
			if (P##no_md_entries_md_entry_px(&g, &px) != 0 ||          \
					P##no_md_entries_md_display_qty(&g, &qty) != 0 || \
					book__price_normalize(px.mantissa, px.exponent, \
						c->feed->config.price_exponent,    \
						&price) < 0)                       \
				continue;                                          \
			if (type == MDP3_MD_ENTRY_TYPE_BOOK_BID)                   \
				mbo_add(m->bid, &m->nbid, m->depth, true, price, qty); \
			else if (type == MDP3_MD_ENTRY_TYPE_BOOK_OFFER)            \
				mbo_add(m->ask, &m->nask, m->depth, false, price, qty); \
		}                                                                  \
	}                                                                          \
	if (chunk < chunks) {                                                      \
		m->next_chunk++;                                                   \
		return;                                                            \
	}                                                                          \
	m->next_chunk = 0;                                                         \
	mbo_apply(c);                                                              \
}

MBO_SNAPSHOT_HANDLER(on_mbo_snapshot44, mdp3_snapshot_full_refresh_order_book44_)
MBO_SNAPSHOT_HANDLER(on_mbo_snapshot53, mdp3_snapshot_full_refresh_order_book53_)

/* ------------------------------------------------------------------------ */
/* Channel reset, security status, definitions                                */
/* ------------------------------------------------------------------------ */

static void
on_channel_reset(struct walk_ctx *c, const struct mdp3_msg *msg)
{
	struct book_feed *f = c->feed;
	uint32_t i;

	if (c->replay)
		return;
	mdp3_channel_reset4_transact_time(msg, &c->transact_time);
	flush_events(c, NULL);
	for (i = 0; i < f->high_water; i++) {
		struct book_instrument *in = &f->instruments[i];

		if (!(in->flags & BOOK_INSTRUMENT_IN_USE))
			continue;
		book_instrument_clear(in);
		in->state = BOOK_STATE_OK;
		in->rpt_seq = 0;
		in->flags |= BOOK_INSTRUMENT_RPT_KNOWN;
		in->flags &= (uint8_t)~BOOK_INSTRUMENT_NEVER_SYNCED;
		in->last_trade.price = BOOK_PRICE_NONE;
		in->volume = -1;
		in->dirty = 0;
		publish(c, in, BOOK_EVENT_RESET | BOOK_EVENT_BOOK);
	}
	set_stale_count(f, 0);
	recovery_clear(f);
	f->mbo.next_chunk = 0;
	f->counters.channel_resets++;
}

/*
 * An instrument's security_group is NUL-padded to BOOK_GROUP_SIZE (zeroed by
 * book_instrument_init, written by copy_chars) and so is a status's (zeroed,
 * then at most BOOK_GROUP_SIZE - 1 bytes without a NUL): the strings are
 * equal exactly when all BOOK_GROUP_SIZE bytes are, a fixed-size compare the
 * compiler does in registers (a status scans every instrument).
 */
static inline bool
group_equal(const char a[BOOK_GROUP_SIZE], const char b[BOOK_GROUP_SIZE])
{
	return memcmp(a, b, BOOK_GROUP_SIZE) == 0;
}

static void
on_security_status(struct walk_ctx *c, const struct mdp3_msg *msg)
{
#define SS30(f) mdp3_security_status30_##f
	struct book_feed *f = c->feed;
	struct book_instrument *in;
	struct book_status st;
	const char *group;
	struct book_event e;
	size_t glen = 0;
	int32_t sid;
	uint32_t i;

	if (c->replay)
		return;
	f->counters.status_updates++;
	SS30(transact_time)(msg, &c->transact_time);
	memset(&st, 0, sizeof(st));
	SS30(security_trading_status)(msg, &st.trading_status);
	SS30(halt_reason)(msg, &st.halt_reason);
	SS30(security_trading_event)(msg, &st.trading_event);
	if (SS30(security_group)(msg, &group, &glen) == 0 && glen < BOOK_GROUP_SIZE)
		memcpy(st.security_group, group, glen);
	else
		glen = 0;
	if (SS30(security_id)(msg, &sid) == 0) {
		in = lookup(f, sid);
		if (in != NULL)
			in->trading_status = st.trading_status;
		if (!f->has_events)
			return;
		event_base(c, &e, in, BOOK_EVENT_STATUS);
		e.security_id = sid;
		e.status = st;
		emit(f, &e);
		return;
	}
	for (i = 0; glen > 0 && i < f->high_water; i++) {
		in = &f->instruments[i];
		if (!(in->flags & BOOK_INSTRUMENT_IN_USE) ||
				!group_equal(in->security_group, st.security_group))
			continue;
		in->trading_status = st.trading_status;
		if (!f->has_events)
			continue;
		event_base(c, &e, in, BOOK_EVENT_STATUS);
		e.status = st;
		emit(f, &e);
	}
	if (!f->has_events)
		return;
	event_base(c, &e, NULL, BOOK_EVENT_STATUS);
	e.status = st;
	emit(f, &e);
#undef SS30
}

static void
copy_chars(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

/* What a definition says about an instrument. */
struct definition {
	int32_t sid;
	char action;
	int status_rc;
	uint8_t status;
	int depth;          /* GBX MarketDepth; -1 absent */
	int implied_depth;  /* GBI MarketDepth; -1 absent */
	int tick_rc;
	struct mdp3_decimal tick;
	int factor_rc;
	struct mdp3_decimal factor;
	const char *symbol;
	size_t symbol_len;
	const char *group;
	size_t group_len;
};

static void
apply_definition(struct walk_ctx *c, const struct definition *d)
{
	struct book_feed *f = c->feed;
	struct book_instrument *in = lookup(f, d->sid);
	struct book_instrument before;
	unsigned int depth, implied;
	bool created = false;
	int64_t tick;

	if (d->action == MDP3_SECURITY_UPDATE_ACTION_DELETE) {
		if (in == NULL)
			return;
		flush_events(c, NULL);
		publish(c, in, BOOK_EVENT_DELETED);
		remove_instrument(f, in);
		f->counters.definitions_deleted++;
		return;
	}
	if (in == NULL) {
		in = create(f, d->sid, false);
		if (in == NULL)
			return;
		created = true;
	}
	before = *in;
	depth = d->depth > 0 ? (unsigned int)d->depth : f->config.default_depth;
	if (depth > BOOK_MAX_DEPTH) {
		depth = BOOK_MAX_DEPTH;
		f->counters.depth_clamped++;
	}
	implied = d->implied_depth > 0 ? (unsigned int)d->implied_depth : 0;
	if (d->implied_depth < 0 && d->depth < 0)
		implied = f->config.default_implied_depth;
	if (implied > BOOK_IMPLIED_DEPTH) {
		implied = BOOK_IMPLIED_DEPTH;
		f->counters.depth_clamped++;
	}
	book_instrument_set_depth(in, depth, implied);
	if (d->tick_rc == 0 && book__price_normalize(d->tick.mantissa, d->tick.exponent,
				in->price_exponent, &tick) == 0)
		in->tick = tick;
	if (d->factor_rc == 0) {
		in->display_factor_mantissa = d->factor.mantissa;
		in->display_factor_exponent = d->factor.exponent;
	}
	if (d->symbol != NULL)
		copy_chars(in->symbol, sizeof(in->symbol), d->symbol, d->symbol_len);
	if (d->group != NULL)
		copy_chars(in->security_group, sizeof(in->security_group), d->group, d->group_len);
	if (d->status_rc == 0)
		in->trading_status = d->status;
	in->flags |= BOOK_INSTRUMENT_DEFINED;
	f->counters.definitions++;
	if (created || before.depth != in->depth || before.implied_depth != in->implied_depth ||
			before.tick != in->tick || before.flags != in->flags ||
			before.display_factor_mantissa != in->display_factor_mantissa ||
			before.display_factor_exponent != in->display_factor_exponent ||
			strcmp(before.symbol, in->symbol) != 0 ||
			strcmp(before.security_group, in->security_group) != 0)
		publish(c, in, BOOK_EVENT_DEFINITION);
}

#define DEFINITION_HANDLER(NAME, P)                                                \
static void                                                                        \
NAME(struct walk_ctx *c, const struct mdp3_msg *msg)                               \
{                                                                                  \
	struct definition d = { .depth = -1, .implied_depth = -1 };                \
	struct mdp3_group g;                                                       \
	const char *type;                                                          \
	size_t type_len;                                                           \
	int8_t depth;                                                              \
                                                                                   \
	if (c->replay)                                                             \
		return;                                                            \
	P##security_id(msg, &d.sid);                                               \
	P##security_update_action(msg, &d.action);                                 \
	d.status_rc = P##md_security_trading_status(msg, &d.status);               \
	d.tick_rc = P##min_price_increment(msg, &d.tick);                          \
	d.factor_rc = P##display_factor(msg, &d.factor);                           \
	if (P##symbol(msg, &d.symbol, &d.symbol_len) != 0)                         \
		d.symbol = NULL;                                                   \
	if (P##security_group(msg, &d.group, &d.group_len) != 0)                   \
		d.group = NULL;                                                    \
	if (P##no_md_feed_types(msg, &g) == 0) {                                   \
		while (mdp3_group_next(&g)) {                                      \
			if (P##no_md_feed_types_md_feed_type(&g, &type, &type_len) != 0 \
					|| P##no_md_feed_types_market_depth(&g, &depth) != 0) \
				continue;                                          \
			if (type_len == 3 && memcmp(type, "GBX", 3) == 0)          \
				d.depth = depth;                                   \
			else if (type_len == 3 && memcmp(type, "GBI", 3) == 0)     \
				d.implied_depth = depth;                           \
		}                                                                  \
	}                                                                          \
	apply_definition(c, &d);                                                   \
}

DEFINITION_HANDLER(on_def27, mdp3_md_instrument_definition_future27_)
DEFINITION_HANDLER(on_def29, mdp3_md_instrument_definition_spread29_)
DEFINITION_HANDLER(on_def41, mdp3_md_instrument_definition_option41_)
DEFINITION_HANDLER(on_def54, mdp3_md_instrument_definition_future54_)
DEFINITION_HANDLER(on_def55, mdp3_md_instrument_definition_option55_)
DEFINITION_HANDLER(on_def56, mdp3_md_instrument_definition_spread56_)
DEFINITION_HANDLER(on_def57, mdp3_md_instrument_definition_fixed_income57_)
DEFINITION_HANDLER(on_def58, mdp3_md_instrument_definition_repo58_)
DEFINITION_HANDLER(on_def63, mdp3_md_instrument_definition_fx63_)

/* ------------------------------------------------------------------------ */
/* Dispatch                                                                   */
/* ------------------------------------------------------------------------ */

/* live: see gate(). */
BOOK__ALWAYS_INLINE void
dispatch(struct walk_ctx *c, const struct mdp3_msg *msg, bool live)
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
		on_snapshot38(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH52:
		on_snapshot52(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_LONG_QTY69:
		on_snapshot69(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_ORDER_BOOK44:
		on_mbo_snapshot44(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53:
		on_mbo_snapshot53(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_TCP61:
		on_tcp_snapshot61(c, msg);
		break;
	case MDP3_TEMPLATE_SNAPSHOT_FULL_REFRESH_TCP_LONG_QTY68:
		on_tcp_snapshot68(c, msg);
		break;
	case MDP3_TEMPLATE_CHANNEL_RESET4:
		on_channel_reset(c, msg);
		break;
	case MDP3_TEMPLATE_SECURITY_STATUS30:
		on_security_status(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FUTURE27:
		on_def27(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_SPREAD29:
		on_def29(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_OPTION41:
		on_def41(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FUTURE54:
		on_def54(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_OPTION55:
		on_def55(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_SPREAD56:
		on_def56(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FIXED_INCOME57:
		on_def57(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_REPO58:
		on_def58(c, msg);
		break;
	case MDP3_TEMPLATE_MD_INSTRUMENT_DEFINITION_FX63:
		on_def63(c, msg);
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
	struct walk_ctx *c = ctx;

	c->seq = pkt->msg_seq_num;
	dispatch(c, msg, false);
	return 0;
}

static void
on_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct walk_ctx *c = ctx;

	(void)pkt;
	(void)skip;
	if (!c->replay)
		c->feed->counters.messages_unknown++;
}

/* ------------------------------------------------------------------------ */
/* Packets                                                                    */
/* ------------------------------------------------------------------------ */

/* The live context of an in-sequence incremental packet. */
BOOK__ALWAYS_INLINE void
packet_begin(struct book_feed *f, uint8_t id, const uint8_t *data, uint32_t length,
		uint64_t rx_ns, struct book_packet_ctx *pc)
{
	struct walk_ctx *c = &f->live;

	pc->data = data;
	pc->length = length;
	pc->seq = length >= 4 ? mdp3__load_uint32(data) : 0;
	pc->rx_ns = rx_ns;
	pc->feed = id;
	pc->held = false;
	pc->messages = 0;
	pc->open = ++f->open_serial;
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
		flush_events(&f->live, NULL);
	if (f->counters.stale_books > 0)
		recovery_append(f, ctx);
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
 * begin, walk, end: the one incremental path (book_feed_apply, the arbiter).
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

static int
on_arb_deliver(void *ctx, const struct mdp3_arb_packet *p)
{
	struct book_feed *f = ctx;
	struct book_packet_ctx pc;

	packet_begin(f, p->feed, p->data, p->length, p->rx_ns, &pc);
	pc.held = p->held;
	return apply_packet(f, &pc);
}

static void
on_arb_loss(void *ctx, uint32_t first_seq, uint32_t count, uint64_t now_ns)
{
	struct book_feed *f = ctx;
	struct walk_ctx *c = &f->live;

	if (count == 0)
		return;
	uint32_t i;

	f->counters.declared_losses++;
	f->counters.lost_packets += count;
	f->any_lost = true;
	f->last_lost_seq = first_seq + count - 1;
	flush_events(c, NULL);
	c->seq = first_seq;
	c->rx_ns = now_ns;
	if (f->config.loss_policy == BOOK_LOSS_STALE_ALL) {
		for (i = 0; i < f->high_water; i++) {
			struct book_instrument *in = &f->instruments[i];

			if (!(in->flags & BOOK_INSTRUMENT_IN_USE) || in->state != BOOK_STATE_OK)
				continue;
			f->counters.stale_marked_on_loss++;
			go_stale(c, in);
		}
	}
	if (f->config.handler.on_loss != NULL)
		f->config.handler.on_loss(f->config.handler.ctx, first_seq, count, now_ns);
}

int
book_feed_loss(struct book_feed *feed, uint32_t first_seq, uint32_t count, uint64_t now_ns)
{
	if (feed == NULL || count == 0)
		return -EINVAL;
	on_arb_loss(feed, first_seq, count, now_ns);
	return 0;
}

static int
walk_direct(struct book_feed *f, enum mdp3_stream stream, enum mdp3_feed_id id,
		const uint8_t *data, size_t length, uint64_t rx_ns)
{
	struct walk_ctx *c = &f->live;
	int rc;

	c->seq = length >= 4 ? (uint32_t)data[0] | (uint32_t)data[1] << 8 |
		(uint32_t)data[2] << 16 | (uint32_t)data[3] << 24 : 0;
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
book_feed_packet(struct book_feed *feed, enum mdp3_stream stream, enum mdp3_feed_id id,
		const uint8_t *data, size_t length, uint64_t rx_ns)
{
	if (feed == NULL || data == NULL || (unsigned int)stream >= MDP3_STREAM_COUNT ||
			(unsigned int)id >= MDP3_FEED_COUNT)
		return -EINVAL;
	feed->counters.packets[stream][id]++;
	if (stream == MDP3_STREAM_INCREMENTAL)
		return mdp3_arb_push(feed->arb, id, data, length, rx_ns);
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
book_feed_datagram(struct book_feed *feed, const struct mdp3_routes *routes, uint32_t dst_ip,
		uint16_t dst_port, const uint8_t *data, size_t length, uint64_t rx_ns)
{
	struct mdp3_route r;
	int rc;

	if (feed == NULL || routes == NULL)
		return -EINVAL;
	rc = mdp3_routes_match(routes, dst_ip, dst_port, &r);
	if (rc < 0)
		return rc;
	return book_feed_packet(feed, (enum mdp3_stream)r.stream, (enum mdp3_feed_id)r.feed,
			data, length, rx_ns);
}

int
book_feed_tcp(struct book_feed *feed, const uint8_t *data, size_t length, uint64_t rx_ns)
{
	struct walk_ctx *c;
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
	flush_events(c, NULL);
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
	mdp3_arb_reset(feed->arb);
	recovery_clear(feed);
	feed->any_applied = false;
	feed->any_lost = false;
	feed->any_unbuffered = false;
	feed->mbo.next_chunk = 0;
	return 0;
}

int
book_feed_poll(struct book_feed *feed, uint64_t now_ns)
{
	if (feed == NULL)
		return -EINVAL;
	return mdp3_arb_poll(feed->arb, now_ns);
}

int
book_feed_flush(struct book_feed *feed, uint64_t now_ns)
{
	int n;

	if (feed == NULL)
		return -EINVAL;
	n = mdp3_arb_flush(feed->arb, now_ns);
	flush_events(&feed->live, NULL);
	return n;
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                    */
/* ------------------------------------------------------------------------ */

const struct book_instrument *
book_feed_find(const struct book_feed *feed, int32_t security_id)
{
	uint32_t h;

	if (feed == NULL) {
		errno = EINVAL;
		return NULL;
	}
	for (h = home_of(feed, security_id);; h = (h + 1) & feed->table_mask) {
		const struct table_slot *s = &feed->table[h];

		if (s->index == SLOT_EMPTY)
			break;
		if (s->key == security_id)
			return &feed->instruments[s->index];
	}
	errno = ENOENT;
	return NULL;
}

uint32_t
book_feed_capacity(const struct book_feed *feed)
{
	return feed != NULL ? feed->capacity : 0;
}

uint32_t
book_feed_instrument_count(const struct book_feed *feed)
{
	return feed != NULL ? feed->count : 0;
}

const struct book_instrument *
book_feed_instrument(const struct book_feed *feed, uint32_t index)
{
	if (feed == NULL || index >= feed->capacity ||
			!(feed->instruments[index].flags & BOOK_INSTRUMENT_IN_USE))
		return NULL;
	return &feed->instruments[index];
}

uint64_t
book_feed_hash(const struct book_feed *feed)
{
	uint64_t h = 0;
	uint32_t i;

	if (feed == NULL)
		return 0;
	for (i = 0; i < feed->high_water; i++)
		if (feed->instruments[i].flags & BOOK_INSTRUMENT_IN_USE)
			h += book_instrument_hash(&feed->instruments[i]);
	return h;
}

const struct book_feed_counters *
book_feed_counters(const struct book_feed *feed)
{
	return feed != NULL ? &feed->counters : NULL;
}

const struct mdp3_arb_counters *
book_feed_arb_counters(const struct book_feed *feed)
{
	return feed != NULL ? mdp3_arb_counters(feed->arb) : NULL;
}

const struct book_feed_config *
book_feed_config(const struct book_feed *feed)
{
	return feed != NULL ? &feed->config : NULL;
}
