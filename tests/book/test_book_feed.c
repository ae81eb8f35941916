/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the feed pipeline on packets built from the schema
 * metadata: book updates and coalesced events at EndOfEvent, RptSeq gap ->
 * stale, snapshot recovery with buffered incrementals (discard up to
 * LastMsgSeqNumProcessed, replay the rest; a gap during replay; an older
 * snapshot ignored), order-book snapshot (53) recovery, ChannelReset,
 * EmptyBook, definitions (depth, tick,
 * symbol, delete), join policies, security status by instrument and by
 * group, the loss policy, a malformed copy replaced by the other feed,
 * PRICE vs PRICE9 exponents, trades, conflated-TCP snapshots, buffer
 * overflow, table full and instrument removal.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "book.h"
#include "book_test_packets.h"
#include "tw_feed.h"

#define V9 9
#define EOE 0x80
#define PX(units) ((int64_t)(units) * 1000000000) /* PRICE9 mantissa of a whole price */

#define MAX_EVENTS 512

struct recorded {
	uint32_t what;
	uint32_t changed;
	int32_t sid;
	uint8_t state;
	bool replay;
	uint32_t seq;
	struct book_top consolidated;
	struct book_trade trade;
	struct book_status status;
	bool has_instrument;
};

struct recorder {
	struct recorded e[MAX_EVENTS];
	unsigned int n;
	uint32_t loss_first;
	uint32_t loss_count;
	unsigned int losses;
	unsigned int packets;
};

static void
on_event(void *ctx, const struct book_event *ev)
{
	struct recorder *r = ctx;
	struct recorded *e;

	assert_true(r->n < MAX_EVENTS);
	e = &r->e[r->n++];
	e->what = ev->what;
	e->changed = ev->changed;
	e->sid = ev->security_id;
	e->state = ev->state;
	e->replay = ev->replay;
	e->seq = ev->msg_seq_num;
	e->consolidated = book_event_consolidated(ev);
	/* trade and status point into the feed: set exactly for their events */
	assert_true((ev->trade != NULL) == ((ev->what & BOOK_EVENT_TRADE) != 0));
	assert_true((ev->status != NULL) == ((ev->what & BOOK_EVENT_STATUS) != 0));
	memset(&e->trade, 0, sizeof(e->trade));
	memset(&e->status, 0, sizeof(e->status));
	if (ev->trade != NULL)
		e->trade = *ev->trade;
	if (ev->status != NULL)
		e->status = *ev->status;
	e->has_instrument = ev->instrument != NULL;
	if (ev->instrument != NULL) {
		struct book_top top = book_instrument_consolidated_top(ev->instrument);

		assert_int_equal(ev->instrument->security_id, ev->security_id);
		assert_memory_equal(&top, &e->consolidated, sizeof(top));
	}
}

static void
on_loss(void *ctx, uint32_t first, uint32_t count, uint64_t now)
{
	struct recorder *r = ctx;

	(void)now;
	r->loss_first = first;
	r->loss_count = count;
	r->losses++;
}

static void
on_packet(void *ctx, const struct book_packet_info *info)
{
	struct recorder *r = ctx;

	(void)info;
	r->packets++;
}

static struct recorder rec;

/*
 * The books of a test sit in app/feed's path of one channel (lib/mdp3's
 * arbiter -> walker -> these books), as in every program: A/B arbitration
 * is not lib/book's. One path at a time; the helpers below reach it from
 * its books.
 */
static struct tw_feed *path;

static struct tw_feed *
path_of(struct book_feed *f)
{
	assert_non_null(path);
	assert_ptr_equal(path->book, f);
	return path;
}

static struct book_feed *
make_feed(struct book_feed_config *c)
{
	struct tw_feed_config fc;

	memset(&fc, 0, sizeof(fc));
	if (c != NULL)
		fc.book = *c;
	if (fc.book.max_instruments == 0)
		fc.book.max_instruments = 64;
	if (fc.book.recovery_packets == 0)
		fc.book.recovery_packets = 32;
	fc.arb.wait_packets = 1;
	fc.book.handler.on_event = on_event;
	fc.book.handler.on_loss = on_loss;
	fc.book.handler.on_packet = on_packet;
	fc.book.handler.ctx = &rec;
	memset(&rec, 0, sizeof(rec));
	tw_feed_destroy(path);  /* left by a test that failed */
	path = tw_feed_create(&fc);
	assert_non_null(path);
	return path->book;
}

static void
feed_destroy(struct book_feed *f)
{
	tw_feed_destroy(path_of(f));
	path = NULL;
}

/* A datagram of any stream through the path (incremental: the arbiter). */
static int
feed_packet(struct book_feed *f, enum mdp3_stream stream, enum mdp3_feed_id id,
	    const uint8_t *data, size_t length, uint64_t rx_ns)
{
	return tw_feed_packet(path_of(f), stream, id, data, length, rx_ns);
}

static const struct mdp3_arb_counters *
arb_counters(struct book_feed *f)
{
	return mdp3_arb_counters(path_of(f)->arb);
}

/* One MDP entry of a book message. */
struct be {
	int32_t sid;
	uint32_t rpt;
	uint8_t action;
	char type;
	uint8_t level;
	int64_t px;     /* PRICE9 mantissa */
	int32_t size;
	int32_t orders;
};

static void
add_book46(struct tp *p, const struct be *e, unsigned int n, uint8_t mei)
{
	unsigned int i;

	tp_msg(p, 46, V9);
	tp_set(p, "TransactTime", 1000);
	tp_set(p, "MatchEventIndicator", mei);
	tp_group(p, "NoMDEntries");
	for (i = 0; i < n; i++) {
		tp_entry(p);
		tp_set(p, "SecurityID", e[i].sid);
		tp_set(p, "RptSeq", e[i].rpt);
		tp_set(p, "MDUpdateAction", e[i].action);
		tp_set(p, "MDEntryType", e[i].type);
		tp_set(p, "MDPriceLevel", e[i].level);
		tp_set(p, "MDEntryPx", e[i].px);
		tp_set(p, "MDEntrySize", e[i].size);
		tp_set(p, "NumberOfOrders", e[i].orders);
	}
}

/* A TradeSummary 48 of one entry (sets its fields after it with tp_set). */
static void
add_trade48(struct tp *p, int32_t sid, uint32_t rpt, int64_t px, int32_t size,
		uint8_t aggressor, uint64_t transact_time, uint8_t mei)
{
	tp_msg(p, 48, V9);
	tp_set(p, "TransactTime", transact_time);
	tp_set(p, "MatchEventIndicator", mei);
	tp_group(p, "NoMDEntries");
	tp_entry(p);
	tp_set(p, "MDEntryPx", px);
	tp_set(p, "MDEntrySize", size);
	tp_set(p, "SecurityID", sid);
	tp_set(p, "RptSeq", rpt);
	tp_set(p, "AggressorSide", aggressor);
	tp_set(p, "MDUpdateAction", 0);
}

/* A packet of one 46 message (EndOfEvent) on feed A at time seq. */
static int
send46(struct book_feed *f, uint32_t seq, const struct be *e, unsigned int n)
{
	struct tp p;

	tp_packet(&p, seq, seq);
	add_book46(&p, e, n, EOE);
	return feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf, tp_end(&p), seq);
}

static void
send_both(struct book_feed *f, uint32_t seq, const struct be *e, unsigned int n)
{
	struct tp p;
	size_t len;

	tp_packet(&p, seq, seq);
	add_book46(&p, e, n, EOE);
	len = tp_end(&p);
	assert_true(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf, len,
				seq) >= 0);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_B, p.buf, len,
				seq), MDP3_ARB_DUPLICATE);
}

/* A snapshot 52 of one instrument: bids then asks, prices whole units. */
static void
send_snapshot52(struct book_feed *f, enum mdp3_feed_id id, uint32_t last_seq, int32_t sid,
		uint32_t rpt, const int64_t *bids, unsigned int nb, const int64_t *asks,
		unsigned int na)
{
	struct tp p;
	unsigned int i;

	tp_packet(&p, 1, 0);
	tp_msg(&p, 52, V9);
	tp_set(&p, "LastMsgSeqNumProcessed", last_seq);
	tp_set(&p, "TotNumReports", 1);
	tp_set(&p, "SecurityID", sid);
	tp_set(&p, "RptSeq", rpt);
	tp_set(&p, "MDSecurityTradingStatus", 17);
	tp_group(&p, "NoMDEntries");
	for (i = 0; i < nb + na; i++) {
		tp_entry(&p);
		tp_set(&p, "MDEntryType", i < nb ? '0' : '1');
		tp_set(&p, "MDPriceLevel", i < nb ? i + 1 : i - nb + 1);
		tp_set(&p, "MDEntryPx", PX(i < nb ? bids[i] : asks[i - nb]));
		tp_set(&p, "MDEntrySize", 10);
		tp_set(&p, "NumberOfOrders", 1);
	}
	/* statistics and a trade ride along in real snapshots */
	tp_entry(&p);
	tp_set(&p, "MDEntryType", '2');
	tp_set(&p, "MDEntryPx", PX(77));
	tp_set(&p, "MDEntrySize", 3);
	tp_entry(&p);
	tp_set(&p, "MDEntryType", '7');
	tp_set(&p, "MDEntryPx", PX(99));
	assert_int_equal(feed_packet(f, MDP3_STREAM_SNAPSHOT, id, p.buf, tp_end(&p), 0), 0);
}

static const struct book_instrument *
find(struct book_feed *f, int32_t sid)
{
	const struct book_instrument *in = book_feed_find(f, sid);

	assert_non_null(in);
	return in;
}

static unsigned int
count_events(uint32_t what, int32_t sid)
{
	unsigned int i, n = 0;

	for (i = 0; i < rec.n; i++)
		if ((rec.e[i].what & what) && rec.e[i].sid == sid)
			n++;
	return n;
}

static void
test_updates_and_coalesced_events(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct book_instrument *in;
	const struct be first[] = {
		{ 1, 1, BOOK_ACTION_NEW, '0', 1, PX(100), 5, 2 },
		{ 1, 2, BOOK_ACTION_NEW, '1', 1, PX(101), 6, 3 },
	};
	const struct be second[] = {
		{ 1, 3, BOOK_ACTION_NEW, '0', 1, PX(100) + 500000000, 1, 1 },
		{ 1, 4, BOOK_ACTION_NEW, 'E', 1, PX(100) + 500000000, 4, 0 },
		{ 2, 1, BOOK_ACTION_NEW, 'F', 1, PX(7), 9, 0 },
	};
	struct tp p;
	size_t len;

	(void)state;
	/* Two messages in one packet; only the second ends the event. */
	tp_packet(&p, 10, 0);
	add_book46(&p, first, 2, 0x04);
	add_book46(&p, second, 3, EOE);
	len = tp_end(&p);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf, len, 5),
			MDP3_ARB_DELIVERED);
	assert_int_equal(rec.packets, 1);
	assert_int_equal(count_events(BOOK_EVENT_BOOK, 1), 1);
	assert_int_equal(count_events(BOOK_EVENT_BOOK, 2), 1);
	assert_int_equal(rec.n, 2);
	assert_int_equal(rec.e[0].sid, 1);
	assert_int_equal(rec.e[0].changed, BOOK_CHANGED_OUTRIGHT | BOOK_CHANGED_IMPLIED |
			BOOK_CHANGED_TOP);
	assert_int_equal(rec.e[0].seq, 10);
	/* consolidated best bid: 100.5 outright 1 + implied 4 */
	assert_int_equal(rec.e[0].consolidated.bid_price, PX(100) + 500000000);
	assert_int_equal(rec.e[0].consolidated.bid_qty, 5);
	assert_int_equal(rec.e[0].consolidated.ask_price, PX(101));
	assert_int_equal(rec.e[1].sid, 2);
	assert_int_equal(rec.e[1].changed, BOOK_CHANGED_IMPLIED | BOOK_CHANGED_TOP);
	in = find(f, 1);
	assert_int_equal(in->bid[0].price, PX(100) + 500000000);
	assert_int_equal(in->bid[1].price, PX(100));
	assert_int_equal(in->bid[1].qty, 5);
	assert_int_equal(in->bid[1].orders, 2);
	assert_int_equal(in->ask[0].qty, 6);
	assert_int_equal(in->implied_bid[0].qty, 4);
	assert_int_equal(in->rpt_seq, 4);
	assert_int_equal(in->last_msg_seq, 10);
	assert_int_equal(in->state, BOOK_STATE_OK);
	assert_int_equal(in->price_exponent, -9);
	assert_int_equal(book_feed_counters(f)->book_updates, 5);
	assert_int_equal(book_feed_counters(f)->messages, 2);

	/* Change, Delete, DeleteThru, DeleteFrom, Overlay through the feed. */
	{
		const struct be ops[] = {
			{ 1, 5, BOOK_ACTION_CHANGE, '0', 2, PX(100), 50, 7 },
			{ 1, 6, BOOK_ACTION_DELETE, '0', 1, PX(100) + 500000000, 0, 0 },
			{ 1, 7, BOOK_ACTION_OVERLAY, '1', 1, PX(102), 8, 1 },
			{ 1, 8, BOOK_ACTION_DELETE_THRU, 'E', 0, 0, 0, 0 },
		};

		assert_int_equal(send46(f, 11, ops, 4), MDP3_ARB_DELIVERED);
	}
	in = find(f, 1);
	assert_int_equal(in->bid[0].price, PX(100));
	assert_int_equal(in->bid[0].qty, 50);
	assert_int_equal(in->bid[0].orders, 7);
	assert_true(in->bid[1].price == BOOK_PRICE_NONE);
	assert_int_equal(in->ask[0].price, PX(102));
	assert_true(in->implied_bid[0].price == BOOK_PRICE_NONE);
	{
		const struct be ops[] = {
			{ 1, 9, BOOK_ACTION_NEW, '1', 2, PX(103), 1, 1 },
			{ 1, 10, BOOK_ACTION_NEW, '1', 3, PX(104), 1, 1 },
			{ 1, 11, BOOK_ACTION_DELETE_FROM, '1', 2, PX(103), 0, 0 },
			{ 1, 12, BOOK_ACTION_NEW, '0', 11, PX(1), 1, 1 },  /* beyond depth 10 */
			{ 1, 13, BOOK_ACTION_CHANGE, '0', 9, PX(1), 1, 1 }, /* empty level */
		};

		assert_int_equal(send46(f, 12, ops, 5), MDP3_ARB_DELIVERED);
	}
	in = find(f, 1);
	assert_int_equal(in->ask[0].price, PX(104));
	assert_true(in->ask[1].price == BOOK_PRICE_NONE);
	assert_int_equal(book_feed_counters(f)->level_out_of_range, 1);
	assert_int_equal(book_feed_counters(f)->level_missing, 1);
	assert_int_equal(in->rpt_seq, 13);
	feed_destroy(f);
}

/*
 * BOOK_CHANGED_TOP is computed only when an operation touched a level 1
 * (outright or implied): an operation deeper leaves it clear, one at level
 * 1 that keeps the consolidated top as it was leaves it clear too, and a
 * trade between a level-1 change and the end of the event carries it (the
 * book event that follows does not).  Tops read through the accessors.
 */
static void
test_top_changed_only_at_level_one(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct be init[] = {
		{ 1, 1, BOOK_ACTION_NEW, '0', 1, PX(100), 5, 1 },
		{ 1, 2, BOOK_ACTION_NEW, '0', 2, PX(99), 5, 1 },
		{ 1, 3, BOOK_ACTION_NEW, '1', 1, PX(101), 5, 1 },
		{ 1, 4, BOOK_ACTION_NEW, 'E', 1, PX(98), 3, 0 },  /* implied, behind */
	};
	const struct be deeper[] = { { 1, 5, BOOK_ACTION_CHANGE, '0', 2, PX(99), 7, 2 } };
	const struct be same[] = { { 1, 6, BOOK_ACTION_OVERLAY, '0', 1, PX(100), 5, 1 } };
	const struct be behind[] = { { 1, 7, BOOK_ACTION_CHANGE, 'E', 1, PX(98), 4, 0 } };
	const struct be equal_px[] = { { 1, 8, BOOK_ACTION_CHANGE, 'E', 1, PX(100), 2, 0 } };
	const struct be from[] = { { 1, 9, BOOK_ACTION_DELETE_FROM, '1', 3, 0, 0, 0 } };
	struct tp p;

	(void)state;
	assert_int_equal(send46(f, 1, init, 4), MDP3_ARB_DELIVERED);
	assert_int_equal(rec.n, 1);
	assert_true(rec.e[0].changed & BOOK_CHANGED_TOP);
	assert_int_equal(send46(f, 2, deeper, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(rec.e[1].changed, BOOK_CHANGED_OUTRIGHT);
	assert_int_equal(send46(f, 3, same, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(rec.e[2].changed, BOOK_CHANGED_OUTRIGHT);
	assert_int_equal(send46(f, 4, behind, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(rec.e[3].changed, BOOK_CHANGED_IMPLIED);
	assert_int_equal(send46(f, 5, equal_px, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(rec.e[4].changed, BOOK_CHANGED_IMPLIED | BOOK_CHANGED_TOP);
	assert_int_equal(rec.e[4].consolidated.bid_price, PX(100));
	assert_int_equal(rec.e[4].consolidated.bid_qty, 7);
	assert_int_equal(rec.e[4].consolidated.bid_orders, 1);
	/* DeleteFrom 3 removes level 1 whatever its n */
	assert_int_equal(send46(f, 6, from, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(rec.e[5].changed, BOOK_CHANGED_OUTRIGHT | BOOK_CHANGED_TOP);
	assert_true(rec.e[5].consolidated.ask_price == BOOK_PRICE_NONE);
	assert_int_equal(rec.e[5].consolidated.ask_qty, 0);

	/* a level-1 change, then a trade in the same event: the trade has TOP */
	tp_packet(&p, 7, 7);
	{
		const struct be up[] = { { 1, 10, BOOK_ACTION_CHANGE, '0', 1, PX(100), 9, 3 } };

		add_book46(&p, up, 1, 0);
	}
	add_trade48(&p, 1, 11, PX(100), 1, 2, 1001, EOE);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf,
				tp_end(&p), 7), MDP3_ARB_DELIVERED);
	assert_int_equal(rec.n, 8);
	assert_int_equal(rec.e[6].what, BOOK_EVENT_TRADE);
	assert_int_equal(rec.e[6].changed, BOOK_CHANGED_TOP);
	assert_int_equal(rec.e[6].trade.price, PX(100));
	assert_int_equal(rec.e[6].consolidated.bid_qty, 11);
	assert_int_equal(rec.e[7].what, BOOK_EVENT_BOOK);
	assert_int_equal(rec.e[7].changed, BOOK_CHANGED_OUTRIGHT);
	assert_int_equal(book_feed_counters(f)->events, 8);
	feed_destroy(f);
}

/* Snapshot and definition packets straight to the books, no arbiter. */
static void
test_stream_packet(void **state)
{
	struct book_feed *f = make_feed(NULL);
	struct tp p;
	size_t len;

	(void)state;
	tp_packet(&p, 3, 0);
	tp_msg(&p, 52, V9);
	tp_set(&p, "LastMsgSeqNumProcessed", 0);
	tp_set(&p, "TotNumReports", 1);
	tp_set(&p, "SecurityID", 5);
	tp_set(&p, "RptSeq", 4);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "MDEntryType", '0');
	tp_set(&p, "MDPriceLevel", 1);
	tp_set(&p, "MDEntryPx", PX(20));
	tp_set(&p, "MDEntrySize", 2);
	len = tp_end(&p);
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf,
				len, 0), -EINVAL);
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_COUNT, MDP3_FEED_A, p.buf, len,
				0), -EINVAL);
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_COUNT, p.buf,
				len, 0), -EINVAL);
	assert_int_equal(book_feed_stream_packet(NULL, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, p.buf,
				len, 0), -EINVAL);
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, NULL, len,
				0), -EINVAL);
	assert_int_equal(book_feed_counters(f)->packets[MDP3_STREAM_INCREMENTAL][MDP3_FEED_A], 0);
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_B, p.buf,
				len - 3, 0), -EBADMSG);
	assert_int_equal(book_feed_counters(f)->malformed, 1);
	assert_null(book_feed_find(f, 5));
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_B, p.buf,
				len, 0), 0);
	assert_int_equal(book_feed_counters(f)->packets[MDP3_STREAM_SNAPSHOT][MDP3_FEED_B], 2);
	assert_int_equal(book_feed_counters(f)->snapshots, 1);
	assert_int_equal(find(f, 5)->bid[0].price, PX(20));
	assert_int_equal(find(f, 5)->rpt_seq, 4);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.e[0].what, BOOK_EVENT_SNAPSHOT | BOOK_EVENT_BOOK);
	assert_int_equal(rec.e[0].consolidated.bid_price, PX(20));
	/* the other copy: ignored by its RptSeq, counted */
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, p.buf,
				len, 0), 0);
	assert_int_equal(book_feed_counters(f)->snapshots_ignored, 1);
	assert_int_equal(book_feed_counters(f)->packets[MDP3_STREAM_SNAPSHOT][MDP3_FEED_A], 1);
	/* a definition packet: nothing in it is valid here, so it is refused */
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_DEFINITION, MDP3_FEED_A, p.buf,
				2, 0), -EBADMSG);
	assert_int_equal(book_feed_counters(f)->packets[MDP3_STREAM_DEFINITION][MDP3_FEED_A], 1);
	feed_destroy(f);
}

static void
test_rpt_seq_gap_marks_stale(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct be a[] = {
		{ 1, 1, 0, '0', 1, PX(10), 1, 1 },
		{ 2, 1, 0, '0', 1, PX(20), 1, 1 },
	};
	const struct be b[] = { { 1, 2, 0, '0', 1, PX(11), 1, 1 } };
	const struct be gap[] = {
		{ 1, 4, 0, '0', 1, PX(12), 1, 1 },
		{ 2, 2, 0, '0', 1, PX(21), 1, 1 },
	};
	const struct be after[] = { { 1, 5, 0, '0', 1, PX(13), 1, 1 } };
	const struct be dup[] = { { 2, 1, 0, '0', 1, PX(99), 1, 1 } };

	(void)state;
	send46(f, 1, a, 2);
	send46(f, 2, b, 1);
	send46(f, 3, gap, 2);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_STALE);
	assert_int_equal(find(f, 1)->rpt_seq, 2);
	assert_int_equal(find(f, 1)->bid[0].price, PX(11)); /* not applied */
	assert_int_equal(find(f, 2)->state, BOOK_STATE_OK);
	assert_int_equal(find(f, 2)->bid[0].price, PX(21));
	assert_int_equal(count_events(BOOK_EVENT_STALE, 1), 1);
	assert_int_equal(book_feed_counters(f)->rpt_seq_gaps, 1);
	assert_int_equal(book_feed_counters(f)->stale_books, 1);
	send46(f, 4, after, 1);
	assert_int_equal(find(f, 1)->bid[0].price, PX(11));
	assert_int_equal(book_feed_counters(f)->stale_entries, 1);
	/* a repeated RptSeq is skipped, not a gap */
	send46(f, 5, dup, 1);
	assert_int_equal(find(f, 2)->bid[0].price, PX(21));
	assert_int_equal(book_feed_counters(f)->rpt_seq_duplicates, 1);
	assert_int_equal(find(f, 2)->state, BOOK_STATE_OK);
	/* while stale, packets are kept for replay */
	assert_int_equal(book_feed_counters(f)->recovery_buffered, 3);
	feed_destroy(f);
}

static void
test_snapshot_recovery_replays_buffer(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct be p1[] = {
		{ 1, 1, 0, '0', 1, PX(100), 1, 1 },
		{ 2, 1, 0, '1', 1, PX(200), 1, 1 },
	};
	const struct be p2[] = { { 1, 2, 0, '0', 1, PX(101), 1, 1 } };               /* lost */
	const struct be p3[] = {
		{ 1, 3, 0, '0', 1, PX(102), 1, 1 },
		{ 2, 2, 0, '1', 1, PX(199), 1, 1 },
	};
	const struct be p4[] = { { 1, 4, BOOK_ACTION_CHANGE, '0', 1, PX(102), 40, 4 } };
	const struct be p5[] = {
		{ 1, 5, 0, '1', 1, PX(105), 2, 1 },
		{ 2, 3, 0, '1', 1, PX(198), 1, 1 },
	};
	const int64_t snap_bids[] = { 102, 101, 100 };
	const int64_t snap_asks[] = { 106 };
	const struct book_instrument *in;

	(void)state;
	(void)p2;
	send_both(f, 1, p1, 2);
	send46(f, 3, p3, 2);          /* held: 2 is missing on both feeds */
	send46(f, 4, p4, 1);          /* 2 declared lost; 3, 4 applied: 1 goes stale at 3 */
	assert_int_equal(rec.losses, 1);
	assert_int_equal(rec.loss_first, 2);
	assert_int_equal(rec.loss_count, 1);
	send46(f, 5, p5, 2);
	in = find(f, 1);
	assert_int_equal(in->state, BOOK_STATE_STALE);
	assert_int_equal(find(f, 2)->rpt_seq, 3);
	assert_int_equal(book_feed_counters(f)->recovery_buffered, 3); /* 3, 4, 5 */
	assert_int_equal(book_feed_counters(f)->declared_losses, 1);

	/* An older snapshot (RptSeq 1 <= the last applied 1) cannot help. */
	send_snapshot52(f, MDP3_FEED_A, 1, 1, 1, snap_bids, 3, snap_asks, 1);
	assert_int_equal(book_feed_counters(f)->snapshots_ignored, 1);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_STALE);

	/* Snapshot as of packet 3 (RptSeq 3): packet 3 is discarded, 4 and 5 replayed. */
	rec.n = 0;
	send_snapshot52(f, MDP3_FEED_A, 3, 1, 3, snap_bids, 3, snap_asks, 1);
	in = find(f, 1);
	assert_int_equal(in->state, BOOK_STATE_OK);
	assert_int_equal(in->rpt_seq, 5);
	assert_int_equal(in->bid[0].price, PX(102));
	assert_int_equal(in->bid[0].qty, 40);      /* p4's Change */
	assert_int_equal(in->bid[0].orders, 4);
	assert_int_equal(in->bid[1].price, PX(101));
	assert_int_equal(in->bid[2].price, PX(100));
	assert_int_equal(in->ask[0].price, PX(105)); /* p5's New at level 1 */
	assert_int_equal(in->ask[1].price, PX(106));
	assert_int_equal(in->last_trade.price, PX(77));
	assert_int_equal(in->trading_status, 17);
	assert_int_equal(book_feed_counters(f)->replayed_packets, 2);
	assert_int_equal(book_feed_counters(f)->recoveries, 1);
	assert_int_equal(book_feed_counters(f)->snapshots, 1);
	assert_int_equal(book_feed_counters(f)->stale_books, 0);
	/* instrument 2 was never stale: the replay did not apply its entries twice */
	assert_int_equal(find(f, 2)->ask[0].price, PX(198));
	assert_int_equal(find(f, 2)->ask[1].price, PX(199));
	assert_int_equal(find(f, 2)->ask[2].price, PX(200));
	assert_int_equal(find(f, 2)->ask[3].price, BOOK_PRICE_NONE);
	/* events: snapshot + recovered first, then the replayed book change */
	assert_true(rec.n >= 2);
	assert_int_equal(rec.e[0].what, BOOK_EVENT_SNAPSHOT | BOOK_EVENT_BOOK |
			BOOK_EVENT_RECOVERED);
	assert_int_equal(rec.e[0].sid, 1);
	assert_true(rec.e[rec.n - 1].replay);
	assert_int_equal(rec.e[rec.n - 1].sid, 1);
	/* The B copy of the same snapshot is now old. */
	send_snapshot52(f, MDP3_FEED_B, 3, 1, 3, snap_bids, 3, snap_asks, 1);
	assert_int_equal(book_feed_counters(f)->snapshots_ignored, 2);
	/* Nothing stale: the buffer was dropped and live packets are not kept. */
	{
		const struct be p6[] = { { 1, 6, 0, '1', 1, PX(104), 1, 1 } };

		send46(f, 6, p6, 1);
	}
	assert_int_equal(book_feed_counters(f)->recovery_buffered, 3);
	assert_int_equal(find(f, 1)->ask[0].price, PX(104));
	feed_destroy(f);
}

static void
test_snapshot_replay_finds_another_gap(void **state)
{
	struct book_feed_config c = { .recovery_packets = 2 };
	struct book_feed *f = make_feed(&c);
	const struct be p1[] = { { 1, 1, 0, '0', 1, PX(100), 1, 1 } };
	const struct be p3[] = { { 1, 3, 0, '0', 1, PX(102), 1, 1 } };
	const struct be p4[] = { { 1, 4, 0, '0', 1, PX(103), 1, 1 } };
	const struct be p5[] = { { 1, 5, 0, '0', 1, PX(104), 1, 1 } };
	const struct be p6[] = { { 1, 6, 0, '0', 1, PX(105), 1, 1 } };
	const int64_t bids[] = { 102 };

	(void)state;
	send46(f, 1, p1, 1);
	send46(f, 3, p3, 1);  /* 2 lost: stale at 3 */
	send46(f, 4, p4, 1);
	send46(f, 5, p5, 1);
	send46(f, 6, p6, 1);  /* buffer of 2 keeps 5, 6; 3 and 4 overwritten */
	send46(f, 7, p6, 0);  /* an empty packet releases 6 from the arbiter */
	assert_int_equal(book_feed_counters(f)->recovery_overflows, 3);
	/* snapshot at RptSeq 3 (packet 3): RptSeq 4 is gone from the buffer */
	send_snapshot52(f, MDP3_FEED_A, 3, 1, 3, bids, 1, NULL, 0);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_STALE);
	assert_int_equal(find(f, 1)->rpt_seq, 3);
	assert_int_equal(book_feed_counters(f)->rpt_seq_gaps, 2);
	assert_int_equal(book_feed_counters(f)->stale_books, 1);
	/* a later snapshot (RptSeq 6, packet 6) recovers */
	send_snapshot52(f, MDP3_FEED_B, 6, 1, 6, bids, 1, NULL, 0);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_OK);
	assert_int_equal(find(f, 1)->rpt_seq, 6);
	assert_int_equal(book_feed_counters(f)->recoveries, 2);
	feed_destroy(f);
}

static void
send_channel_reset(struct book_feed *f, uint32_t seq)
{
	struct tp p;

	tp_packet(&p, seq, 0);
	tp_msg(&p, 4, V9);
	tp_set(&p, "MatchEventIndicator", EOE);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "ApplID", 340);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf,
				tp_end(&p), seq), MDP3_ARB_DELIVERED);
}

static void
test_channel_reset_and_empty_book(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct be a[] = {
		{ 1, 10, 0, '0', 1, PX(10), 1, 1 }, { 2, 20, 0, '1', 1, PX(20), 1, 1 },
		{ 2, 21, 0, 'E', 1, PX(19), 1, 0 },
	};
	const struct be gap[] = { { 1, 12, 0, '0', 1, PX(11), 1, 1 } };
	const struct be after[] = {
		{ 1, 1, 0, '0', 1, PX(5), 1, 1 },
		{ 2, 5, 0, '0', 1, PX(6), 1, 1 },
	};
	const struct be reset[] = { { 1, 2, 0, 'J', 0, 0, 0, 0 } };

	(void)state;
	send46(f, 1, a, 3);
	send46(f, 2, gap, 1);
	assert_int_equal(book_feed_counters(f)->stale_books, 1);
	rec.n = 0;
	send_channel_reset(f, 3);
	assert_int_equal(book_feed_counters(f)->channel_resets, 1);
	assert_int_equal(book_feed_counters(f)->stale_books, 0);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_OK);
	assert_true(find(f, 1)->bid[0].price == BOOK_PRICE_NONE);
	assert_true(find(f, 2)->ask[0].price == BOOK_PRICE_NONE);
	assert_true(find(f, 2)->implied_bid[0].price == BOOK_PRICE_NONE);
	assert_int_equal(count_events(BOOK_EVENT_RESET, 1), 1);
	assert_int_equal(count_events(BOOK_EVENT_RESET, 2), 1);
	/* RptSeq restarts at 1: instrument 1 applies, instrument 2 at 5 is a gap */
	send46(f, 4, after, 2);
	assert_int_equal(find(f, 1)->bid[0].price, PX(5));
	assert_int_equal(find(f, 1)->rpt_seq, 1);
	assert_int_equal(find(f, 2)->state, BOOK_STATE_STALE);
	/* EmptyBook entry (type J) empties one instrument */
	send46(f, 5, reset, 1);
	assert_true(find(f, 1)->bid[0].price == BOOK_PRICE_NONE);
	assert_int_equal(find(f, 1)->rpt_seq, 2);
	assert_int_equal(book_feed_counters(f)->book_resets, 1);
	assert_true(rec.e[rec.n - 1].what & BOOK_EVENT_RESET);
	feed_destroy(f);
}

static void
send_definition54(struct book_feed *f, int32_t sid, char action, const char *symbol,
		const char *group, int gbx, int gbi)
{
	struct tp p;

	tp_packet(&p, 1, 0);
	tp_msg(&p, 54, V9);
	tp_set(&p, "SecurityUpdateAction", action);
	tp_set(&p, "MDSecurityTradingStatus", 21);
	tp_set_str(&p, "SecurityGroup", group);
	tp_set_str(&p, "Symbol", symbol);
	tp_set(&p, "SecurityID", sid);
	tp_set(&p, "MinPriceIncrement", 250000000);  /* 0.25 */
	tp_set(&p, "DisplayFactor", 10000000);       /* 0.01 at 10^-9 */
	tp_group(&p, "NoMDFeedTypes");
	if (gbx > 0) {
		tp_entry(&p);
		tp_set_str(&p, "MDFeedType", "GBX");
		tp_set(&p, "MarketDepth", gbx);
	}
	if (gbi > 0) {
		tp_entry(&p);
		tp_set_str(&p, "MDFeedType", "GBI");
		tp_set(&p, "MarketDepth", gbi);
	}
	assert_int_equal(feed_packet(f, MDP3_STREAM_DEFINITION, MDP3_FEED_A, p.buf,
				tp_end(&p), 0), 0);
}

static void
test_definitions(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct book_instrument *in;
	const struct be deep[] = {
		{ 5, 1, 0, '0', 5, PX(1), 1, 1 }, { 5, 2, 0, '0', 6, PX(1), 1, 1 },
		{ 5, 3, 0, 'E', 1, PX(1), 1, 0 },
	};

	(void)state;
	send_definition54(f, 5, 'A', "ESZ6", "ES", 5, 0);
	in = find(f, 5);
	assert_int_equal(in->depth, 5);
	assert_int_equal(in->implied_depth, 0);   /* no GBI: not implied-eligible */
	assert_int_equal(in->tick, 250000000);
	assert_int_equal(in->display_factor_mantissa, 10000000);
	assert_int_equal(in->display_factor_exponent, -9);
	assert_string_equal(in->symbol, "ESZ6");
	assert_string_equal(in->security_group, "ES");
	assert_int_equal(in->trading_status, 21);
	assert_true(in->flags & BOOK_INSTRUMENT_DEFINED);
	assert_int_equal(count_events(BOOK_EVENT_DEFINITION, 5), 1);
	/* the same definition again (instrument replay loop): no new event */
	send_definition54(f, 5, 'A', "ESZ6", "ES", 5, 0);
	assert_int_equal(count_events(BOOK_EVENT_DEFINITION, 5), 1);
	assert_int_equal(book_feed_counters(f)->definitions, 2);
	send46(f, 1, deep, 3);
	in = find(f, 5);
	assert_int_equal(in->bid[4].price, PX(1));
	assert_int_equal(book_feed_counters(f)->level_out_of_range, 2); /* level 6, implied */
	/* depth change (and GBI added) */
	send_definition54(f, 5, 'M', "ESZ6", "ES", 3, 2);
	in = find(f, 5);
	assert_int_equal(in->depth, 3);
	assert_int_equal(in->implied_depth, 2);
	assert_true(in->bid[4].price == BOOK_PRICE_NONE);
	assert_int_equal(count_events(BOOK_EVENT_DEFINITION, 5), 2);
	/* deeper than we can hold: clamped */
	send_definition54(f, 6, 'A', "NQZ6", "NQ", 20, 2);
	assert_int_equal(find(f, 6)->depth, BOOK_MAX_DEPTH);
	assert_int_equal(book_feed_counters(f)->depth_clamped, 1);
	/* delete removes it */
	assert_int_equal(book_feed_instrument_count(f), 2);
	send_definition54(f, 5, 'D', "ESZ6", "ES", 3, 2);
	assert_null(book_feed_find(f, 5));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(count_events(BOOK_EVENT_DELETED, 5), 1);
	assert_int_equal(book_feed_instrument_count(f), 1);
	assert_int_equal(book_feed_counters(f)->definitions_deleted, 1);
	assert_non_null(book_feed_find(f, 6));
	feed_destroy(f);
}

static void
test_definition_v5_and_exponents(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct book_instrument *in;
	struct tp p;

	(void)state;
	/* MDInstrumentDefinitionFuture27, schema version 5: PRICE (10^-7) tick */
	tp_packet(&p, 1, 0);
	tp_msg(&p, 27, 5);
	tp_set(&p, "SecurityUpdateAction", 'A');
	tp_set_str(&p, "Symbol", "ESU6");
	tp_set(&p, "SecurityID", 2615);
	tp_set(&p, "MinPriceIncrement", 250000000);   /* 25 at 10^-7 */
	tp_set(&p, "DisplayFactor", 100000);          /* 0.01 at 10^-7 */
	tp_group(&p, "NoMDFeedTypes");
	tp_entry(&p);
	tp_set_str(&p, "MDFeedType", "GBX");
	tp_set(&p, "MarketDepth", 10);
	assert_int_equal(feed_packet(f, MDP3_STREAM_DEFINITION, MDP3_FEED_B, p.buf,
				tp_end(&p), 0), 0);
	in = find(f, 2615);
	assert_int_equal(in->tick, INT64_C(25000000000));   /* 25 at 10^-9 */
	assert_int_equal(in->display_factor_exponent, -7);
	assert_int_equal(in->implied_depth, 0);
	/* Book32 (v8, PRICE 10^-7) then Book46 (v9, PRICE9): same scale in the book */
	tp_packet(&p, 1, 0);
	tp_msg(&p, 32, 8);
	tp_set(&p, "MatchEventIndicator", EOE);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "SecurityID", 2615);
	tp_set(&p, "RptSeq", 1);
	tp_set(&p, "MDUpdateAction", 0);
	tp_set(&p, "MDEntryType", '0');
	tp_set(&p, "MDPriceLevel", 1);
	tp_set(&p, "MDEntryPx", INT64_C(21005000000));  /* 2100.5 */
	tp_set(&p, "MDEntrySize", 3);
	tp_set(&p, "NumberOfOrders", 1);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf,
				tp_end(&p), 0), MDP3_ARB_DELIVERED);
	{
		const struct be e[] = { { 2615, 2, 0, '0', 2, INT64_C(2100250000000), 1, 1 } };

		send46(f, 2, e, 1);
	}
	in = find(f, 2615);
	assert_int_equal(in->bid[0].price, INT64_C(2100500000000));
	assert_int_equal(in->bid[1].price, INT64_C(2100250000000));
	feed_destroy(f);
}

static void
send_mbo53(struct book_feed *f, uint32_t last_seq, int32_t sid, uint32_t chunk, uint32_t chunks,
		const int64_t *bids, unsigned int nb, const int64_t *asks, unsigned int na)
{
	struct tp p;
	unsigned int i;

	tp_packet(&p, chunk, 0);
	tp_msg(&p, 53, V9);
	tp_set(&p, "LastMsgSeqNumProcessed", last_seq);
	tp_set(&p, "TotNumReports", 1);
	tp_set(&p, "SecurityID", sid);
	tp_set(&p, "NoChunks", chunks);
	tp_set(&p, "CurrentChunk", chunk);
	tp_group(&p, "NoMDEntries");
	for (i = 0; i < nb + na; i++) {
		tp_entry(&p);
		tp_set(&p, "OrderID", 1000 + i);
		tp_set(&p, "MDOrderPriority", i);
		tp_set(&p, "MDEntryPx", PX(i < nb ? bids[i] : asks[i - nb]));
		tp_set(&p, "MDDisplayQty", 1 + (int64_t)i);
		tp_set(&p, "MDEntryType", i < nb ? '0' : '1');
	}
	assert_int_equal(feed_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, p.buf, tp_end(&p),
				0), 0);
}

static void
test_order_book_snapshot_recovery(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct book_instrument *in;
	const struct be p1[] = { { 5, 1, 0, '0', 1, PX(90), 1, 1 } };
	const struct be p3[] = { { 5, 3, BOOK_ACTION_CHANGE, '1', 1, PX(101), 50, 5 } };
	const struct be p5[] = { { 5, 5, 0, '0', 1, PX(91), 1, 1 } };
	const int64_t bids1[] = { 99, 100, 97 };   /* chunk 1: orders in any price order */
	const int64_t bids2[] = { 100, 98 };      /* chunk 2 */
	const int64_t asks2[] = { 101 };

	(void)state;
	send_definition54(f, 5, 'A', "ZNZ6", "ZN", 3, 0);   /* depth 3, no implied book */
	send46(f, 1, p1, 1);
	send46(f, 3, p3, 1);  /* 2 lost (RptSeq 2): stale at 3 */
	send46(f, 4, p3, 0);
	assert_int_equal(find(f, 5)->state, BOOK_STATE_STALE);
	/* a snapshot as of packet 1 cannot be used: packet 2 is lost for good */
	send_mbo53(f, 1, 5, 1, 1, bids1, 3, NULL, 0);
	assert_int_equal(book_feed_counters(f)->snapshots_ignored, 1);
	assert_int_equal(find(f, 5)->state, BOOK_STATE_STALE);
	/* as of packet 2, in two chunks; a chunk out of order is dropped first */
	send_mbo53(f, 2, 5, 2, 2, bids2, 2, asks2, 1);
	assert_int_equal(find(f, 5)->state, BOOK_STATE_STALE);
	send_mbo53(f, 2, 5, 1, 2, bids1, 3, NULL, 0);
	send_mbo53(f, 2, 5, 2, 2, bids2, 2, asks2, 1);
	in = find(f, 5);
	assert_int_equal(in->state, BOOK_STATE_OK);
	assert_int_equal(book_feed_counters(f)->recoveries, 1);
	/* best 3 prices: 100 (two orders, qty 2 + 1), 99, 98; 97 fell off */
	assert_int_equal(in->bid[0].price, PX(100));
	assert_int_equal(in->bid[0].orders, 2);
	assert_int_equal(in->bid[0].qty, 3);
	assert_int_equal(in->bid[1].price, PX(99));
	assert_int_equal(in->bid[2].price, PX(98));
	/* packet 3 replayed: its RptSeq (3) is the baseline */
	assert_int_equal(in->ask[0].price, PX(101));
	assert_int_equal(in->ask[0].qty, 50);
	assert_int_equal(in->rpt_seq, 3);
	assert_true(in->flags & BOOK_INSTRUMENT_RPT_KNOWN);
	/* and RptSeq is checked again afterwards: 5 after 3 is a gap */
	send46(f, 5, p5, 1);
	assert_int_equal(find(f, 5)->state, BOOK_STATE_STALE);
	feed_destroy(f);
}

static void
test_join_recover(void **state)
{
	struct book_feed_config c = { .join = BOOK_JOIN_RECOVER };
	struct book_feed *f = make_feed(&c);
	const struct be mid[] = {
		{ 1, 57, 0, '0', 1, PX(10), 1, 1 },
		{ 2, 1, 0, '0', 1, PX(20), 1, 1 },
	};
	const struct be more[] = {
		{ 1, 58, 0, '0', 1, PX(11), 1, 1 },
		{ 2, 2, 0, '0', 1, PX(21), 1, 1 },
	};
	const int64_t bids[] = { 9 };

	(void)state;
	send46(f, 1, mid, 2);
	/* joined mid-session: 1 waits for a snapshot; 2 starts at RptSeq 1 */
	assert_int_equal(find(f, 1)->state, BOOK_STATE_STALE);
	assert_true(find(f, 1)->flags & BOOK_INSTRUMENT_NEVER_SYNCED);
	assert_int_equal(find(f, 2)->state, BOOK_STATE_OK);
	assert_int_equal(find(f, 2)->bid[0].price, PX(20));
	send46(f, 2, more, 2);
	assert_true(find(f, 1)->bid[0].price == BOOK_PRICE_NONE);
	send_snapshot52(f, MDP3_FEED_A, 1, 1, 57, bids, 1, NULL, 0);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_OK);
	assert_int_equal(find(f, 1)->rpt_seq, 58);       /* packet 2 replayed */
	assert_int_equal(find(f, 1)->bid[0].price, PX(11));
	assert_int_equal(find(f, 1)->bid[1].price, PX(9));
	/* a snapshot of an instrument never seen creates it, valid */
	send_snapshot52(f, MDP3_FEED_A, 2, 3, 4, bids, 1, NULL, 0);
	assert_int_equal(find(f, 3)->state, BOOK_STATE_OK);
	assert_int_equal(find(f, 3)->rpt_seq, 4);
	assert_int_equal(book_feed_counters(f)->stale_books, 0);
	feed_destroy(f);
}

static void
send_status(struct book_feed *f, uint32_t seq, int32_t sid, const char *group, uint8_t status)
{
	struct tp p;

	tp_packet(&p, seq, 0);
	tp_msg(&p, 30, V9);
	tp_set_str(&p, "SecurityGroup", group);
	if (sid != 0)
		tp_set(&p, "SecurityID", sid);
	tp_set(&p, "SecurityTradingStatus", status);
	tp_set(&p, "HaltReason", 0);
	tp_set(&p, "SecurityTradingEvent", 1);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf,
				tp_end(&p), seq), MDP3_ARB_DELIVERED);
}

static void
test_security_status(void **state)
{
	struct book_feed *f = make_feed(NULL);

	(void)state;
	send_definition54(f, 5, 'A', "ESZ6", "ES", 10, 2);
	send_definition54(f, 6, 'A', "ESH7", "ES", 10, 2);
	send_definition54(f, 7, 'A', "NQZ6", "NQ", 10, 2);
	rec.n = 0;
	send_status(f, 1, 7, "NQ", 17);
	assert_int_equal(find(f, 7)->trading_status, 17);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.e[0].what, BOOK_EVENT_STATUS);
	assert_int_equal(rec.e[0].status.trading_status, 17);
	/* group-wide: SecurityID null */
	rec.n = 0;
	send_status(f, 2, 0, "ES", 21);
	assert_int_equal(find(f, 5)->trading_status, 21);
	assert_int_equal(find(f, 6)->trading_status, 21);
	assert_int_equal(find(f, 7)->trading_status, 17);
	assert_int_equal(rec.n, 3);    /* 5, 6 and the group event */
	assert_int_equal(rec.e[2].sid, 0);
	assert_false(rec.e[2].has_instrument);
	assert_string_equal(rec.e[2].status.security_group, "ES");
	assert_int_equal(book_feed_counters(f)->status_updates, 2);
	feed_destroy(f);
}

static void
test_trade_and_volume(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct book_instrument *in;
	struct tp p;

	(void)state;
	tp_packet(&p, 1, 0);
	add_trade48(&p, 9, 1, PX(50), 7, 1, 1234, 0x01);
	tp_set(&p, "NumberOfOrders", 2);
	tp_set(&p, "MDTradeEntryID", 4242);
	tp_msg(&p, 37, V9);
	tp_set(&p, "MatchEventIndicator", EOE);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "MDEntrySize", 1007);
	tp_set(&p, "SecurityID", 9);
	tp_set(&p, "RptSeq", 2);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf,
				tp_end(&p), 0), MDP3_ARB_DELIVERED);
	in = find(f, 9);
	assert_int_equal(in->last_trade.price, PX(50));
	assert_int_equal(in->last_trade.qty, 7);
	assert_int_equal(in->last_trade.aggressor, 1);
	assert_int_equal(in->last_trade.trade_id, 4242);
	assert_int_equal(in->last_trade.transact_time, 1234);
	assert_int_equal(in->volume, 1007);
	assert_int_equal(in->rpt_seq, 2);
	assert_int_equal(rec.n, 1);
	assert_int_equal(rec.e[0].what, BOOK_EVENT_TRADE);
	assert_int_equal(rec.e[0].trade.qty, 7);
	assert_int_equal(book_feed_counters(f)->trades, 1);
	feed_destroy(f);
}

static void
test_loss_policy_stale_all(void **state)
{
	struct book_feed_config c = { .loss_policy = BOOK_LOSS_STALE_ALL };
	struct book_feed *f = make_feed(&c);
	const struct be a[] = {
		{ 1, 1, 0, '0', 1, PX(10), 1, 1 },
		{ 2, 1, 0, '0', 1, PX(20), 1, 1 },
	};
	const struct be b[] = { { 3, 1, 0, '0', 1, PX(30), 1, 1 } };

	(void)state;
	send46(f, 1, a, 2);
	send46(f, 3, b, 1);
	send46(f, 4, b, 0);   /* 2 declared lost: every book goes stale */
	assert_int_equal(rec.losses, 1);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_STALE);
	assert_int_equal(find(f, 2)->state, BOOK_STATE_STALE);
	/* 3 first appears after the loss, in packet 3: valid */
	assert_int_equal(find(f, 3)->state, BOOK_STATE_OK);
	assert_int_equal(book_feed_counters(f)->stale_marked_on_loss, 2);
	assert_int_equal(book_feed_counters(f)->stale_books, 2);
	feed_destroy(f);
}

static void
test_malformed_copy_replaced_by_other_feed(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct be a[] = { { 1, 1, 0, '0', 1, PX(10), 1, 1 } };
	struct tp p;
	size_t len;

	(void)state;
	tp_packet(&p, 1, 0);
	add_book46(&p, a, 1, EOE);
	len = tp_end(&p);
	/* feed A's copy is cut short: the walker refuses it, B's copy wins */
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf, len - 3,
				0), MDP3_ARB_REJECTED);
	assert_int_equal(book_feed_counters(f)->malformed, 1);
	assert_null(book_feed_find(f, 1));
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_B, p.buf, len, 0),
			MDP3_ARB_DELIVERED);
	assert_int_equal(find(f, 1)->bid[0].price, PX(10));
	assert_int_equal(arb_counters(f)->rejected[MDP3_FEED_A], 1);
	assert_int_equal(arb_counters(f)->accepted[MDP3_FEED_B], 1);
	/* a malformed snapshot packet */
	assert_int_equal(feed_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, p.buf, len - 3, 0),
			-EBADMSG);
	feed_destroy(f);
}

static void
test_tcp_snapshot_and_incremental(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct book_instrument *in;
	uint8_t frame[TP_SIZE + 2];
	struct tp p;
	size_t len;

	(void)state;
	tp_packet(&p, 8, 0);
	tp_msg(&p, 68, 12);
	tp_set(&p, "SecurityID", 11827320);
	tp_set(&p, "MatchEventIndicator", EOE);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "MDEntryPx", 1183650000);      /* 1.18365 */
	tp_set(&p, "MDEntrySize", 1000000);
	tp_set(&p, "MDPriceLevel", 1);
	tp_set(&p, "MDEntryType", '0');
	tp_entry(&p);
	tp_set(&p, "MDEntryPx", 1183750000);
	tp_set(&p, "MDEntrySize", INT64_C(6000000000));
	tp_set(&p, "MDPriceLevel", 1);
	tp_set(&p, "MDEntryType", '1');
	len = tp_end(&p);
	frame[0] = 0xfe;
	frame[1] = 0xca;
	memcpy(frame + 2, p.buf, len);
	assert_int_equal(book_feed_tcp(f, frame, len + 2, 0), 0);
	in = find(f, 11827320);
	assert_int_equal(in->bid[0].price, 1183650000);
	assert_int_equal(in->ask[0].qty, INT64_C(6000000000));
	assert_int_equal(in->state, BOOK_STATE_OK);
	assert_int_equal(book_feed_counters(f)->snapshots, 1);
	/* conflated-TCP incrementals carry RptSeq 0: applied without the check */
	tp_packet(&p, 9, 0);
	tp_msg(&p, 64, 12);
	tp_set(&p, "MatchEventIndicator", EOE);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "MDEntryPx", 1208150000);
	tp_set(&p, "MDEntrySize", 6000000);
	tp_set(&p, "SecurityID", 11827320);
	tp_set(&p, "RptSeq", 0);
	tp_set(&p, "MDPriceLevel", 2);
	tp_set(&p, "MDUpdateAction", BOOK_ACTION_NEW);
	tp_set(&p, "MDEntryType", '1');
	len = tp_end(&p);
	memcpy(frame + 2, p.buf, len);
	assert_int_equal(book_feed_tcp(f, frame, len + 2, 0), 0);
	in = find(f, 11827320);
	assert_int_equal(in->ask[1].price, 1208150000);
	assert_int_equal(book_feed_counters(f)->rpt_seq_gaps, 0);
	assert_int_equal(book_feed_tcp(f, frame, len + 1, 0), -EBADMSG);
	feed_destroy(f);
}

static void
test_table_full_and_removal(void **state)
{
	struct book_feed_config c = { .max_instruments = 48 };
	struct book_feed *f = make_feed(&c);
	struct be e = { 0, 1, 0, '0', 1, PX(1), 1, 1 };
	int32_t sid;
	uint32_t seq = 1;

	(void)state;
	for (sid = 1; sid <= 50; sid++) {
		e.sid = sid * 7919;
		send46(f, seq++, &e, 1);
	}
	assert_int_equal(book_feed_instrument_count(f), 48);
	assert_int_equal(book_feed_counters(f)->table_full, 2);
	/* remove every other instrument; the rest stay reachable (backward shift) */
	for (sid = 1; sid <= 48; sid += 2)
		send_definition54(f, sid * 7919, 'D', "X", "X", 10, 2);
	assert_int_equal(book_feed_instrument_count(f), 24);
	for (sid = 1; sid <= 48; sid++) {
		if (sid % 2 == 1)
			assert_null(book_feed_find(f, sid * 7919));
		else
			assert_int_equal(find(f, sid * 7919)->security_id, sid * 7919);
	}
	/* slots are reused */
	e.sid = 1;
	send46(f, seq++, &e, 1);
	assert_int_equal(find(f, 1)->bid[0].price, PX(1));
	assert_int_equal(book_feed_instrument_count(f), 25);
	feed_destroy(f);
}

/*
 * SecurityIDs 64 apart share a way of the lookup cache: alternating entries
 * evict each other, and a removed instrument's way must not lead to the slot
 * a later instrument reuses.
 */
static void
test_lookup_cache_ways(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const int32_t a = 5, b = 5 + 64, c = 5 + 128, d = 5 + 192;
	struct be e = { 0, 0, 0, '0', 1, 0, 1, 1 };
	uint32_t seq = 1, rpt_a = 0, rpt_b = 0, rpt_c = 0;
	unsigned int i;

	(void)state;
	for (i = 0; i < 30; i++) {
		int32_t sid = i % 3 == 0 ? a : i % 3 == 1 ? b : c;
		uint32_t *rpt = sid == a ? &rpt_a : sid == b ? &rpt_b : &rpt_c;

		e.sid = sid;
		e.rpt = ++*rpt;
		e.action = *rpt == 1 ? 0 : 1;    /* New, then Change */
		e.px = PX(sid * 1000 + (int32_t)i);
		assert_int_equal(send46(f, seq++, &e, 1), MDP3_ARB_DELIVERED);
	}
	assert_int_equal(find(f, a)->bid[0].price, PX(a * 1000 + 27));
	assert_int_equal(find(f, b)->bid[0].price, PX(b * 1000 + 28));
	assert_int_equal(find(f, c)->bid[0].price, PX(c * 1000 + 29));
	assert_int_equal(find(f, a)->rpt_seq, 10);
	assert_int_equal(book_feed_counters(f)->rpt_seq_gaps, 0);
	/* b is the last one cached in its way: removing it must empty the way */
	e.sid = b;
	e.rpt = ++rpt_b;
	e.action = 1;
	e.px = PX(7);
	assert_int_equal(send46(f, seq++, &e, 1), MDP3_ARB_DELIVERED);
	send_definition54(f, b, 'D', "X", "X", 10, 2);
	assert_null(book_feed_find(f, b));
	/* b again: created anew (in the table, RptSeq from 1) */
	e.rpt = 1;
	e.action = 0;
	e.px = PX(22);
	assert_int_equal(send46(f, seq++, &e, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(find(f, b)->bid[0].price, PX(22));
	assert_int_equal(find(f, b)->bid[1].price, BOOK_PRICE_NONE);
	assert_int_equal(find(f, b)->rpt_seq, 1);
	/* remove b again, d takes its slot; b's next entry must not reach d */
	send_definition54(f, b, 'D', "X", "X", 10, 2);
	e.sid = d;
	e.px = PX(44);
	assert_int_equal(send46(f, seq++, &e, 1), MDP3_ARB_DELIVERED);
	e.sid = b;
	e.px = PX(33);
	assert_int_equal(send46(f, seq++, &e, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(find(f, d)->bid[0].price, PX(44));
	assert_int_equal(find(f, d)->bid[1].price, BOOK_PRICE_NONE);
	assert_int_equal(find(f, b)->bid[0].price, PX(33));
	assert_true(find(f, b) != find(f, d));
	assert_int_equal(book_feed_instrument_count(f), 4);
	feed_destroy(f);
}

static void
test_sequence_reset(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct be a[] = { { 1, 1, 0, '0', 1, PX(10), 1, 1 } };
	const struct be b[] = { { 1, 2, 0, '0', 1, PX(11), 1, 1 } };

	(void)state;
	assert_int_equal(send46(f, 1000, a, 1), MDP3_ARB_DELIVERED);
	/* the exchange restarts at 1: old numbers until told */
	assert_int_equal(send46(f, 1, b, 1), MDP3_ARB_DUPLICATE);
	assert_int_equal(tw_feed_sequence_reset(path_of(f)), 0);
	assert_int_equal(send46(f, 1, b, 1), MDP3_ARB_DELIVERED);
	assert_int_equal(find(f, 1)->bid[0].price, PX(11));
	assert_int_equal(find(f, 1)->rpt_seq, 2);
	assert_int_equal(arb_counters(f)->seq_resets, 1);
	feed_destroy(f);
}

static void
test_apply_without_arbiter(void **state)
{
	struct book_feed *f = make_feed(NULL);
	const struct be a[] = { { 1, 1, 0, '0', 1, PX(10), 1, 1 } };
	const struct be b[] = { { 1, 3, 0, '0', 1, PX(11), 1, 1 } };
	struct tp p;
	size_t len;

	(void)state;
	tp_packet(&p, 7, 0);
	add_book46(&p, a, 1, EOE);
	len = tp_end(&p);
	assert_int_equal(book_feed_apply(f, MDP3_FEED_B, p.buf, len, 0), 0);
	assert_int_equal(find(f, 1)->bid[0].price, PX(10));
	assert_int_equal(rec.packets, 1);
	assert_int_equal(book_feed_apply(f, MDP3_FEED_B, p.buf, len - 1, 0), -EBADMSG);
	/* no arbiter: a skipped sequence number is not seen, RptSeq still is */
	tp_packet(&p, 9, 0);
	add_book46(&p, b, 1, EOE);
	assert_int_equal(book_feed_apply(f, MDP3_FEED_B, p.buf, tp_end(&p), 0), 0);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_STALE);
	assert_int_equal(arb_counters(f)->packets[MDP3_FEED_B], 0);
	assert_int_equal(book_feed_counters(f)->packets[MDP3_STREAM_INCREMENTAL][MDP3_FEED_B], 3);
	assert_int_equal(book_feed_apply(NULL, MDP3_FEED_B, p.buf, 1, 0), -EINVAL);
	feed_destroy(f);
}

/* The path's own arguments and routing (app/feed). */
static void
test_path_arguments(void **state)
{
	struct book_feed *f = make_feed(NULL);
	struct mdp3_routes routes;
	uint8_t buf[4] = { 0 };

	(void)state;
	mdp3_routes_init(&routes, true);
	assert_int_equal(tw_feed_packet(path, MDP3_STREAM_COUNT, MDP3_FEED_A, buf, 0, 0), -EINVAL);
	assert_int_equal(tw_feed_packet(path, MDP3_STREAM_SNAPSHOT, MDP3_FEED_COUNT, buf, 0, 0),
			 -EINVAL);
	assert_int_equal(tw_feed_datagram(path, NULL, 0, 0, buf, 0, 0), -EINVAL);
	assert_int_equal(tw_feed_datagram(path, &routes, 0x0a000001, 1, buf, 0, 0), -ENOENT);
	/* too short for a MsgSeqNum: the arbiter drops it, the books never see it */
	assert_int_equal(tw_feed_packet(path, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, buf, 2, 0),
			 MDP3_ARB_DROPPED);
	assert_int_equal(book_feed_counters(f)->packets[MDP3_STREAM_INCREMENTAL][MDP3_FEED_A], 0);
	assert_int_equal(tw_feed_poll(path, 0), 0);
	assert_int_equal(tw_feed_finish(path, 0), 0);
	feed_destroy(f);
}

/*
 * A packet of more messages than one decoder -> book batch (TW_FEED_BATCH):
 * the book gets them in order across batches, one packet opened and closed,
 * the same books as one message at a time through book_feed_apply().
 */
static void
test_path_batches(void **state)
{
	const unsigned int n = TW_FEED_BATCH + 5;
	struct book_feed_config oc = { .max_instruments = 64, .recovery_packets = 32 };
	struct book_feed *f = make_feed(NULL), *one;
	struct tp p;
	size_t len;

	(void)state;
	tp_packet(&p, 1, 0);
	for (unsigned int i = 0; i < n; i++) {
		/* instrument 1 in every message, RptSeq 1, 2, ...: out of
		 * order or lost across batches, it would go stale */
		const struct be e[] = { { 1, i + 1, i == 0 ? 0 : 1, '0', 1, PX(10 + i), 1, 1 } };

		add_book46(&p, e, 1, i + 1 == n ? EOE : 0);
	}
	len = tp_end(&p);
	assert_int_equal(feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, p.buf, len, 0),
			 MDP3_ARB_DELIVERED);
	assert_int_equal(rec.packets, 1);
	assert_int_equal(book_feed_counters(f)->messages, n);
	assert_int_equal(book_feed_counters(f)->packets_applied, 1);
	assert_int_equal(book_feed_counters(f)->rpt_seq_gaps, 0);
	assert_int_equal(find(f, 1)->state, BOOK_STATE_OK);
	assert_int_equal(find(f, 1)->bid[0].price, PX(10 + n - 1));
	assert_int_equal(find(f, 1)->rpt_seq, n);
	one = book_feed_create(&oc);
	assert_non_null(one);
	assert_int_equal(book_feed_apply(one, MDP3_FEED_A, p.buf, len, 0), 0);
	assert_true(book_feed_hash(one) == book_feed_hash(f));
	book_feed_destroy(one);
	feed_destroy(f);
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Consistent state whatever the input: bounds, normalised empty levels, gauges. */
static void
check_invariants(const struct book_feed *f)
{
	uint32_t i, n = 0, stale = 0;
	unsigned int k;

	for (i = 0; i < book_feed_capacity(f); i++) {
		const struct book_instrument *in = book_feed_instrument(f, i);

		if (in == NULL)
			continue;
		n++;
		assert_ptr_equal(book_feed_find(f, in->security_id), in);
		assert_true(in->depth >= 1 && in->depth <= BOOK_MAX_DEPTH);
		assert_true(in->implied_depth <= BOOK_IMPLIED_DEPTH);
		stale += in->state == BOOK_STATE_STALE;
		for (k = 0; k < BOOK_MAX_DEPTH; k++) {
			const struct book_level *l[2] = { &in->bid[k], &in->ask[k] };
			unsigned int j;

			for (j = 0; j < 2; j++) {
				if (l[j]->price == BOOK_PRICE_NONE || k >= in->depth) {
					assert_true(l[j]->price == BOOK_PRICE_NONE);
					assert_int_equal(l[j]->qty, 0);
					assert_int_equal(l[j]->orders, 0);
				}
			}
		}
	}
	assert_int_equal(n, book_feed_instrument_count(f));
	assert_int_equal(stale, book_feed_counters(f)->stale_books);
}

/* Random but well-formed messages of every kind the feed handles. */
static void
test_random_messages(void **state)
{
	static const uint16_t kinds[] = { 46, 46, 46, 32, 48, 37, 52, 53, 4, 30, 54 };
	struct book_feed_config c = { .max_instruments = 16, .recovery_packets = 8,
		.join = BOOK_JOIN_RECOVER };
	struct book_feed *f = make_feed(&c);
	uint64_t r = 0x9e3779b97f4a7c15u;
	unsigned int i, e, n;
	uint32_t seq = 1;
	struct tp p;

	(void)state;
	for (i = 0; i < 3000; i++) {
		uint16_t t = kinds[rnd(&r) % (sizeof(kinds) / sizeof(kinds[0]))];
		enum mdp3_stream stream = MDP3_STREAM_INCREMENTAL;
		uint16_t v = t == 32 ? 8 : V9;

		tp_packet(&p, seq, 0);
		tp_msg(&p, t, v);
		switch (t) {
		case 46:
		case 32:
		case 48:
		case 37:
			tp_set(&p, "MatchEventIndicator", rnd(&r) % 2 ? EOE : 0);
			tp_group(&p, "NoMDEntries");
			n = (unsigned int)(rnd(&r) % 4);
			for (e = 0; e < n; e++) {
				tp_entry(&p);
				tp_set(&p, "SecurityID", (int64_t)(rnd(&r) % 24) - 2);
				tp_set(&p, "RptSeq", (int64_t)(rnd(&r) % 6));
				tp_set(&p, "MDEntrySize", (int64_t)(rnd(&r) % 100));
				if (t == 37)
					continue;
				tp_set(&p, "MDEntryPx", (int64_t)(rnd(&r) % 2000) - 1000);
				if (t == 48)
					continue;
				tp_set(&p, "MDUpdateAction", (int64_t)(rnd(&r) % 7));
				tp_set(&p, "MDEntryType", "01EFJwx2"[rnd(&r) % 8]);
				tp_set(&p, "MDPriceLevel", (int64_t)(rnd(&r) % 13));
				tp_set(&p, "NumberOfOrders", (int64_t)(rnd(&r) % 5));
				if (rnd(&r) % 16 == 0)
					tp_set_null(&p, "MDEntryPx");
			}
			break;
		case 52:
		case 53:
			stream = MDP3_STREAM_SNAPSHOT;
			tp_set(&p, "LastMsgSeqNumProcessed", seq - (uint32_t)(rnd(&r) % 4));
			tp_set(&p, "SecurityID", (int64_t)(rnd(&r) % 24));
			if (t == 52) {
				tp_set(&p, "RptSeq", (int64_t)(rnd(&r) % 8));
			} else {
				tp_set(&p, "NoChunks", 1 + (int64_t)(rnd(&r) % 2));
				tp_set(&p, "CurrentChunk", 1 + (int64_t)(rnd(&r) % 2));
			}
			tp_group(&p, "NoMDEntries");
			n = (unsigned int)(rnd(&r) % 14);
			for (e = 0; e < n; e++) {
				tp_entry(&p);
				tp_set(&p, "MDEntryPx", (int64_t)(rnd(&r) % 2000) - 1000);
				tp_set(&p, "MDEntryType", "01EF27J"[rnd(&r) % 7]);
				if (t == 52) {
					tp_set(&p, "MDPriceLevel", (int64_t)(rnd(&r) % 14) - 1);
					tp_set(&p, "MDEntrySize", (int64_t)(rnd(&r) % 100));
				} else {
					tp_set(&p, "MDDisplayQty", (int64_t)(rnd(&r) % 100));
				}
			}
			break;
		case 30:
			tp_set_str(&p, "SecurityGroup", rnd(&r) % 2 ? "ES" : "NQ");
			if (rnd(&r) % 2)
				tp_set(&p, "SecurityID", (int64_t)(rnd(&r) % 24));
			tp_set(&p, "SecurityTradingStatus", 17);
			break;
		case 54:
			stream = MDP3_STREAM_DEFINITION;
			tp_set(&p, "SecurityUpdateAction", "AMD"[rnd(&r) % 3]);
			tp_set(&p, "SecurityID", (int64_t)(rnd(&r) % 24));
			tp_set_str(&p, "SecurityGroup", rnd(&r) % 2 ? "ES" : "NQ");
			tp_group(&p, "NoMDFeedTypes");
			tp_entry(&p);
			tp_set_str(&p, "MDFeedType", rnd(&r) % 2 ? "GBX" : "GBI");
			tp_set(&p, "MarketDepth", (int64_t)(rnd(&r) % 14) - 1);
			break;
		default:
			break;
		}
		if (stream == MDP3_STREAM_INCREMENTAL) {
			/* sometimes skip, repeat or swap a sequence number */
			uint64_t x = rnd(&r) % 16;

			seq += x == 0 ? 2 : x == 1 ? 0 : 1;
		}
		rec.n = 0;
		feed_packet(f, stream, (enum mdp3_feed_id)(rnd(&r) % 2), p.buf, tp_end(&p), i);
		check_invariants(f);
	}
	tw_feed_finish(path_of(f), UINT64_MAX);
	check_invariants(f);
	assert_true(book_feed_counters(f)->book_updates > 0);
	assert_true(book_feed_counters(f)->recoveries > 0);
	feed_destroy(f);
}

static void
test_config_and_queries(void **state)
{
	struct book_feed_config c = { .default_depth = 11 };
	struct book_feed *f;
	size_t size;
	void *mem;

	(void)state;
	assert_int_equal(book_feed_memsize(&c), 0);
	c.default_depth = 0;
	c.max_instruments = BOOK_MAX_INSTRUMENTS + 1;
	assert_int_equal(book_feed_memsize(&c), 0);
	c.max_instruments = 0;
	c.join = 2;
	assert_int_equal(book_feed_memsize(&c), 0);
	assert_int_equal(errno, EINVAL);
	c.join = 0;
	size = book_feed_memsize(NULL);
	assert_true(size > 0);
	mem = aligned_alloc(64, size + 64);
	assert_non_null(mem);
	assert_null(book_feed_init(mem, size - 1, NULL));
	assert_int_equal(errno, ENOSPC);
	assert_null(book_feed_init((uint8_t *)mem + 16, size, NULL));
	assert_int_equal(errno, EINVAL);
	f = book_feed_init(mem, size, NULL);
	assert_non_null(f);
	assert_int_equal(book_feed_capacity(f), BOOK_DEFAULT_MAX_INSTRUMENTS);
	assert_int_equal(book_feed_config(f)->default_depth, BOOK_MAX_DEPTH);
	assert_int_equal(book_feed_config(f)->default_implied_depth, BOOK_IMPLIED_DEPTH);
	assert_int_equal(book_feed_config(f)->price_exponent, BOOK_DEFAULT_PRICE_EXPONENT);
	assert_int_equal(book_feed_config(f)->max_packet_size, MDP3_ARB_DEFAULT_MAX_PACKET);
	assert_null(book_feed_instrument(f, 0));
	assert_null(book_feed_instrument(f, 1u << 30));
	assert_int_equal(book_feed_hash(f), 0);
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_COUNT, MDP3_FEED_A, mem, 0, 0),
			-EINVAL);
	assert_int_equal(book_feed_stream_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_COUNT, mem, 0,
				0), -EINVAL);
	assert_int_equal(book_feed_stream_packet(NULL, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, mem, 0,
				0), -EINVAL);
	assert_int_equal(book_feed_loss(NULL, 1, 1, 0), -EINVAL);
	assert_int_equal(book_feed_loss(f, 1, 0, 0), -EINVAL);
	assert_int_equal(book_feed_sequence_reset(NULL), -EINVAL);
	assert_int_equal(book_feed_sequence_reset(f), 0);
	assert_int_equal(book_feed_flush(NULL, 0), -EINVAL);
	assert_int_equal(book_feed_flush(f, 0), 0);
	book_feed_destroy(f); /* not from create: nothing freed */
	free(mem);
	assert_null(book_feed_counters(NULL));
	assert_int_equal(book_feed_capacity(NULL), 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_updates_and_coalesced_events),
		cmocka_unit_test(test_top_changed_only_at_level_one),
		cmocka_unit_test(test_path_arguments),
		cmocka_unit_test(test_path_batches),
		cmocka_unit_test(test_stream_packet),
		cmocka_unit_test(test_rpt_seq_gap_marks_stale),
		cmocka_unit_test(test_snapshot_recovery_replays_buffer),
		cmocka_unit_test(test_snapshot_replay_finds_another_gap),
		cmocka_unit_test(test_channel_reset_and_empty_book),
		cmocka_unit_test(test_definitions),
		cmocka_unit_test(test_definition_v5_and_exponents),
		cmocka_unit_test(test_order_book_snapshot_recovery),
		cmocka_unit_test(test_join_recover),
		cmocka_unit_test(test_security_status),
		cmocka_unit_test(test_trade_and_volume),
		cmocka_unit_test(test_loss_policy_stale_all),
		cmocka_unit_test(test_malformed_copy_replaced_by_other_feed),
		cmocka_unit_test(test_tcp_snapshot_and_incremental),
		cmocka_unit_test(test_table_full_and_removal),
		cmocka_unit_test(test_lookup_cache_ways),
		cmocka_unit_test(test_sequence_reset),
		cmocka_unit_test(test_apply_without_arbiter),
		cmocka_unit_test(test_random_messages),
		cmocka_unit_test(test_config_and_queries),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
