/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internals of the feed shared by its translation units.  Not an interface.
 *
 *   book_feed.c           the hot path: packets (begin / message / end, the
 *                         arbiter's deliveries), dispatch, RptSeq gate, book,
 *                         trade, statistics and volume entries, events
 *   book_feed_table.c     memory layout, init, the instrument table
 *                         (create, remove; the probe is inline below),
 *                         queries, hash, counters
 *   book_feed_recovery.c  recovery buffer and replay, snapshots (38, 52, 69,
 *                         TCP 61, 68), order-book snapshot aggregation (44, 53)
 *   book_feed_refdata.c   definitions, security status, channel reset
 *
 * Everything on the hot path stays in book_feed.c (and inline here), so it
 * compiles as one unit as before; the other files are reached through the
 * dispatch switch (rare templates) or slow paths that were out of line
 * already, declared BOOK__COLD where they are rare (measured: without it the
 * split moved the A+B arm of bench_feed by about 1 ns a message on code
 * placement alone, at the same instruction count).
 */
#ifndef BOOK_FEED_PVT_H
#define BOOK_FEED_PVT_H

#include <stdint.h>

#include "mdp3.h"

#include "book.h"
#include "book_pvt.h"

/* Off the hot path: callers lay their calls out as unlikely, the code goes
 * to .text.unlikely, away from the hot path's lines. */
#define BOOK__COLD __attribute__((cold))

#define BOOK__FEED_ALIGN 64u
#define BOOK__SLOT_EMPTY UINT32_MAX

/*
 * Internal dirty bits (struct book_instrument.dirty).  BOOK__DIRTY_TOP: a
 * level 1 (outright or implied) changed since the instrument's last event,
 * so the consolidated top may differ from the one that event published
 * (struct book_instrument.published); clear means it is equal, and an event
 * needs no top computed.  Set by every change of a level 1 that no event
 * with a full compare follows (book_feed.c, definitions); it survives the
 * resets of the other bits and is cleared only where the top is compared.
 */
#define BOOK__DIRTY_OUTRIGHT BOOK_CHANGED_OUTRIGHT
#define BOOK__DIRTY_IMPLIED BOOK_CHANGED_IMPLIED
#define BOOK__DIRTY_RESET (1u << 4)
#define BOOK__DIRTY_TOP (1u << 5)
#define BOOK__DIRTY_LISTED (1u << 7)   /* on the dirty list (at most once) */
#define BOOK__DIRTY_CHANGES (BOOK__DIRTY_OUTRIGHT | BOOK__DIRTY_IMPLIED | BOOK__DIRTY_RESET)

struct book__table_slot {
	int32_t key;
	uint32_t index;   /* BOOK__SLOT_EMPTY: free */
};

/*
 * The lookup cache: entry i holds a SecurityID whose low bits are i, or an
 * "empty" marker whose low bits are not i (so no SecurityID matches it), so
 * a hit costs one compare.
 */
#define BOOK__LOOKUP_WAYS 64u
#define BOOK__LOOKUP_EMPTY(i) ((int32_t)((i) ^ 1u))

struct book__lookup_entry {
	int32_t sid;
	uint32_t mbo;   /* in->mbo, kept in step by set_mbo() (book_mbo.c) */
	struct book_instrument *in;
};

struct book__recovery_slot {
	uint64_t rx_ns;
	uint32_t seq;
	uint32_t length;
	uint8_t feed;
};

/* What is being walked: the walker's ctx. */
struct book__walk_ctx {
	struct book_feed *feed;
	uint64_t rx_ns;
	uint64_t transact_time;
	uint32_t seq;
	int32_t replay_sid;
	uint8_t stream;
	uint8_t feed_id;
	bool replay;
	bool replay_mbo;  /* a replay for the MBO book of replay_sid only */
	bool check_rpt;
};

/* An order-book snapshot (44, 53) being aggregated into price levels. */
struct book__mbo_scratch {
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

/* ---- market by order (book_mbo.c) ---- */

#define BOOK__NIL UINT32_MAX
/* book_instrument.mbo of an instrument refused a book: a book it gets later
 * cannot start valid (orders were missed meanwhile). */
#define BOOK__MBO_REFUSED (UINT32_MAX - 1)

struct book__mbo_order {
	uint64_t id;
	uint64_t priority;
	int64_t price;
	int64_t qty;
	uint32_t prev;    /* in its level, by priority; BOOK__NIL at the ends */
	uint32_t next;
	uint8_t side;
};

/* A price level of an MBO side.  Each side is an array sorted worst to best
 * (bids ascending, asks descending), so the best level is the last one and
 * most inserts and removals (near the top) move few entries. */
struct book__mbo_level {
	int64_t price;
	int64_t qty;
	uint32_t orders;
	uint32_t head;    /* first by priority */
	uint32_t tail;
	uint32_t reserved;
};

struct book_mbo {
	int32_t security_id;
	uint32_t instrument;     /* slot of the instrument */
	uint8_t state;           /* enum book_mbo_state */
	bool loading;            /* snapshot chunks being applied (state STALE) */
	bool listed;             /* on the feed's oracle check list */
	/* a price-level snapshot (52) put the instrument's levels as of packet
	 * mbp_ahead_seq: until the incrementals are past it the orders lag */
	bool mbp_ahead;
	uint8_t check_sides;     /* 1 << enum book_side: the sides to compare */
	uint32_t mbp_ahead_seq;
	uint32_t order_count;
	uint32_t free_top;       /* free order slots on free_stack */
	uint32_t fresh;          /* slots from here up never used since the last clear */
	uint32_t nlevels[2];
	uint32_t table_mask;     /* the table in use: table_mask + 1 entries */
	uint32_t table_shift;
	uint32_t grow_at;        /* order_count at which an insert doubles the table first */
	uint32_t snap_next_chunk;
	uint32_t snap_chunks;
	uint32_t snap_last_seq;
	struct book__mbo_order *orders;
	uint32_t *free_stack;
	uint32_t *table;         /* open addressing by OrderID: order slot or BOOK__NIL */
	struct book__mbo_level *levels[2];
};

struct book_feed {
	struct book_feed_config config;
	struct book_feed_counters counters;
	struct book_instrument *instruments;
	struct book__table_slot *table;
	uint32_t *free_stack;
	uint32_t *dirty;
	struct book__recovery_slot *rec;
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
	struct book__lookup_entry lookup_cache[BOOK__LOOKUP_WAYS];
	bool has_events;
	bool heap;
	/* What the live incremental stream delivered, for order-book snapshots. */
	bool any_applied;
	bool any_lost;
	bool any_unbuffered;
	uint32_t last_applied_seq;
	uint32_t last_lost_seq;
	uint32_t last_unbuffered_seq;
	struct book__mbo_scratch mbo;
	struct book__walk_ctx live;
	struct book__walk_ctx replay;
	struct mdp3_walker walker;
	struct mdp3_walker replay_walker;
	/* book_feed_apply() and the arbiter: begin, this walker, end. */
	struct mdp3_walker apply_walker;
	struct book_packet_ctx *open_ctx;  /* the packet apply_walker is walking */
	uint32_t open_serial;              /* packets begun; pairs ctx with feed */
	/* Market by order (config.mbo; all NULL / 0 without it). */
	bool mbo_on;
	bool mbo_clean;          /* a ChannelReset and no gap since: new books start valid */
	bool mbo_avx2;           /* the oracle compares with AVX2 (config.max_simd_bits 256) */
	uint32_t mbo_free_top;
	uint32_t mbo_check_count;
	uint32_t mbo_diff_count;
	struct book_mbo *mbo_books;
	uint32_t *mbo_free;      /* free book numbers */
	uint32_t *mbo_check;     /* books to compare at the next EndOfEvent */
	struct book_mbo_diff *mbo_diffs;
};

/* ---- instrument table (book_feed_table.c; the probe inline) ---- */

static inline uint32_t
book__home_of(const struct book_feed *f, int32_t sid)
{
	return ((uint32_t)sid * UINT32_C(0x9e3779b1)) >> f->table_shift & f->table_mask;
}

static inline struct book__lookup_entry *
book__lookup_way(struct book_feed *f, int32_t sid)
{
	return &f->lookup_cache[(uint32_t)sid & (BOOK__LOOKUP_WAYS - 1)];
}

/* The table probe behind a lookup cache miss (way: the SecurityID's way,
 * filled when found); NULL when the instrument is unknown. */
static inline struct book_instrument *
book__probe(struct book_feed *f, int32_t sid, struct book__lookup_entry *way)
{
	uint32_t h;

	for (h = book__home_of(f, sid);; h = (h + 1) & f->table_mask) {
		const struct book__table_slot *s = &f->table[h];

		if (s->index == BOOK__SLOT_EMPTY)
			return NULL;
		if (s->key == sid) {
			way->sid = sid;
			way->in = &f->instruments[s->index];
			way->mbo = way->in->mbo;
			return way->in;
		}
	}
}

/* The instrument of a SecurityID (through the lookup cache), or NULL. */
static inline struct book_instrument *
book__lookup(struct book_feed *f, int32_t sid)
{
	struct book__lookup_entry *way = book__lookup_way(f, sid);

	if (__builtin_expect(way->sid == sid, 1))
		return way->in;
	return book__probe(f, sid, way);
}

/* A new instrument; NULL (counted) when the table is full.  synced: known
 * from a snapshot or definition, so valid even under BOOK_JOIN_RECOVER. */
BOOK__COLD struct book_instrument *book__create(struct book_feed *f, int32_t sid, bool synced);

/* Remove an instrument from the table (its slot is reused). */
BOOK__COLD void book__remove(struct book_feed *f, struct book_instrument *in);

static inline void
book__set_stale_count(struct book_feed *f, uint64_t n)
{
	f->counters.stale_books = n;
}

static inline void
book__become_valid(struct book_feed *f, struct book_instrument *in)
{
	if (in->state == BOOK_STATE_STALE)
		book__set_stale_count(f, f->counters.stale_books - 1);
	in->state = BOOK_STATE_OK;
	in->flags &= (uint8_t)~BOOK_INSTRUMENT_NEVER_SYNCED;
}

/* ---- pipeline and events (book_feed.c) ---- */

/* The feed's walkers and arbiter, wired to the handlers of book_feed.c. */
void book__pipeline_init(struct book_feed *f);

/*
 * An immediate event about one instrument (or a group when in is NULL); its
 * top is compared at once.  Nothing when the feed has no on_event handler.
 */
BOOK__COLD void book__publish(const struct book__walk_ctx *c, struct book_instrument *in,
		uint32_t what);

/* A BOOK_EVENT_STATUS about in (NULL: unknown SecurityID sid, or the group,
 * sid 0).  Not cold: a group's status is an event per instrument of it. */
void book__publish_status(const struct book__walk_ctx *c, struct book_instrument *in,
		int32_t sid, const struct book_status *status);

/* Publish pending book changes (of one instrument only when only != NULL). */
void book__flush_events(const struct book__walk_ctx *c, struct book_instrument *only);

/* The instrument went stale: state, gauge, BOOK_EVENT_STALE. */
BOOK__COLD void book__go_stale(const struct book__walk_ctx *c, struct book_instrument *in);

/* ---- recovery (book_feed_recovery.c) ---- */

static inline void
book__recovery_clear(struct book_feed *f)
{
	f->rec_head = 0;
	f->rec_count = 0;
}

/* Copy an applied incremental packet into the recovery buffer. */
BOOK__COLD void book__recovery_append(struct book_feed *f, const struct book_packet_ctx *p);

/* Replay the buffered packets after last_seq for one instrument (its MBO
 * book only when mbo). */
BOOK__COLD void book__replay(struct book_feed *f, int32_t sid, uint32_t last_seq, bool mbo);

/* Whether every incremental packet after last_seq is in the buffer. */
bool book__buffer_complete_after(const struct book_feed *f, uint32_t last_seq);

/* Whether the recovery buffer must keep packets (a book stale somewhere). */
static inline bool
book__buffering(const struct book_feed *f)
{
	return (f->counters.stale_books | f->counters.mbo_stale_books) != 0;
}

/* Snapshots 38, 52, 69, 44, 53 and TCP 61, 68 (nothing during a replay). */
BOOK__COLD void book__on_snapshot(struct book__walk_ctx *c, const struct mdp3_msg *msg);

/* ---- reference data and channel state (book_feed_refdata.c) ---- */

/* Definitions 27, 29, 41, 54, 55, 56, 57, 58, 63 (nothing during a replay). */
BOOK__COLD void book__on_definition(struct book__walk_ctx *c, const struct mdp3_msg *msg);
BOOK__COLD void book__on_channel_reset(struct book__walk_ctx *c, const struct mdp3_msg *msg);
/* Not cold: a group's status scans every instrument (ch320 has 198 of them). */
void book__on_security_status(struct book__walk_ctx *c, const struct mdp3_msg *msg);

/* An entry's price (px_rc: its accessor's result) at exponent, or false
 * (counted in bad_entries) for a null or unrepresentable one. */
static inline bool
book__entry_price(struct book_feed *f, int px_rc, const struct mdp3_decimal *px, int exponent,
		int64_t *out)
{
	if (px_rc != 0 || book__price_normalize(px->mantissa, px->exponent, exponent, out) < 0) {
		f->counters.bad_entries++;
		return false;
	}
	return true;
}

/* MDEntrySize of either width as a quantity (UInt64 clamped, never negative). */
static inline int64_t
book__clamp_u64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}


/* ---- market by order (book_mbo.c) ---- */

/* The vector width (bits) a feed runs for a configured max_simd_bits
 * (0, 128 or 256): what the CPU has, at most the configured width. */
uint16_t book__simd_bits(uint16_t max);
/* Bytes of the MBO memory after the feed's other regions (0 without mbo). */
size_t book__mbo_memsize(const struct book_feed_config *c);
/* Lay the MBO books out at mem (book__mbo_memsize() bytes). */
void book__mbo_init(struct book_feed *f, uint8_t *mem);

/* Template 47 (live or an MBO replay); returns its MatchEventIndicator. */
uint8_t book__mbo_on_order_book47(struct book__walk_ctx *c, const struct mdp3_msg *msg);
/* The NoOrderIDEntries of a template 46, and its EmptyBook entries when
 * resets (its price-level pass saw one). */
void book__mbo_on_book46(struct book__walk_ctx *c, const struct mdp3_msg *msg, bool resets);
/* Snapshot 53 into the MBO book (after the price-level fallback). */
BOOK__COLD void book__mbo_on_snapshot53(struct book__walk_ctx *c, const struct mdp3_msg *msg);

/* The instrument went stale (its MBO book follows); in a ChannelReset. */
BOOK__COLD void book__mbo_instrument_stale(struct book_feed *f, struct book_instrument *in);
/* Every MBO book stale: a loss, a MsgSeqNum jump. */
BOOK__COLD void book__mbo_all_stale(struct book_feed *f);
/* ChannelReset: every MBO book empty and valid. */
BOOK__COLD void book__mbo_channel_reset(struct book_feed *f);
/* The instrument is being removed: its book goes back to the pool. */
BOOK__COLD void book__mbo_release(struct book_feed *f, struct book_instrument *in);
/* Compare the listed books with their price levels (live EndOfEvent). */
void book__mbo_check(const struct book__walk_ctx *c);

/* Both sides of a book, for book__mbo_list(). */
#define BOOK__MBO_SIDES ((1u << BOOK_BID) | (1u << BOOK_ASK))

/* Book b changed on @p sides (1 << enum book_side): compare them at the
 * next EndOfEvent (listed at most once). */
static inline void
book__mbo_list(struct book_feed *f, uint32_t b, unsigned int sides)
{
	struct book_mbo *m = &f->mbo_books[b];

	m->check_sides |= (uint8_t)sides;
	if (!m->listed) {
		m->listed = true;
		f->mbo_check[f->mbo_check_count++] = b;
	}
}

/* The price-level book of in changed on @p sides: compare at the next
 * EndOfEvent. */
static inline void
book__mbo_touch(struct book_feed *f, const struct book_instrument *in, unsigned int sides)
{
	uint32_t b = in->mbo;

	if (b < BOOK__MBO_REFUSED)
		book__mbo_list(f, b, sides);
}

/* A snapshot 52 set in's price levels as of incremental packet last_seq. */
static inline void
book__mbo_mbp_snapshot(struct book_feed *f, const struct book_instrument *in, uint32_t last_seq)
{
	uint32_t b = in->mbo;

	if (b >= BOOK__MBO_REFUSED)
		return;
	f->mbo_books[b].mbp_ahead = true;
	f->mbo_books[b].mbp_ahead_seq = last_seq;
	book__mbo_list(f, b, BOOK__MBO_SIDES);
}

#endif /* BOOK_FEED_PVT_H */
