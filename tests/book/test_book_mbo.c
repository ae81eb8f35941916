/* SPDX-License-Identifier: BSD-3-Clause
 * Market-by-order books (lib/book, config.mbo) against an independent model.
 *
 * The test keeps its own model of every resting order (a plain array per
 * instrument), applies scripted order operations to it and writes the
 * packets an exchange would send for them: one template 46 per event with
 * the price levels that changed (positional Delete / Change / Overlay, RptSeq
 * per entry) and the order entries that reference one of them (ReferenceID),
 * and a template 47 for the order entries without such a level entry (deep
 * levels, emptied levels, changes that leave the aggregate alone).  After
 * every event the feed's MBO book must equal the model order by order, in
 * priority order, and the oracle (price levels aggregated from the orders
 * against the price-level book, at every EndOfEvent) must have compared and
 * found nothing.  Then: an oracle that sees a wrong price level, an event
 * split over two packets, a RptSeq gap and a lost 47-only packet (stale)
 * with recovery from a snapshot 53 mid-stream (buffer replay), ChannelReset,
 * every bound (orders, levels, books), a side kept at its capacity of levels
 * while levels come and go, a mid-stream join, feed A, feed B and
 * both through the arbiter giving identical books, and the v9.1 example
 * capture (argv[1]: the CME data directory).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tw_test.h"

#include "book.h"
#include "book_test_packets.h"
#include "tw_feed.h"
#include "tw_pcap.h"

#define V9 9
#define PX(units) ((int64_t)(units) * INT64_C(1000000000))
#define MAX_ORDERS 64
#define MAX_LOG 256
#define DEPTH 3

static const char *cme_data;
/* book_feed_config.max_simd_bits of every feed of the run (main runs the
 * tests at 0, the widest the CPU has, and at 128) */
static uint16_t simd_bits;
/* levels a side of the price-level books the packets carry: the feed's
 * default_depth (set by setup_feed) */
static unsigned int mbp_depth = DEPTH;

/* ---- the model ---------------------------------------------------------- */

struct morder {
	uint64_t id;
	uint64_t prio;
	int64_t px;
	int32_t qty;
	uint8_t side;
	bool live;
};

struct minst {
	int32_t sid;
	uint32_t rpt;
	struct morder o[MAX_ORDERS];
	unsigned int n;
};

/* One order operation: 'A'dd, 'M'odify (price, quantity, priority), 'D'elete. */
struct op {
	char kind;
	uint64_t id;
	uint8_t side;
	int64_t px;     /* whole units */
	int32_t qty;
	uint64_t prio;
	bool via47;     /* force template 47 */
};

static struct morder *
model_find(struct minst *mi, uint64_t id)
{
	unsigned int i;

	for (i = 0; i < mi->n; i++)
		if (mi->o[i].live && mi->o[i].id == id)
			return &mi->o[i];
	return NULL;
}

/* The model's record of an order, live or deleted (the last with that id). */
static const struct morder *
model_any(const struct minst *mi, uint64_t id)
{
	const struct morder *m = NULL;
	unsigned int k;

	for (k = 0; k < mi->n; k++)
		if (mi->o[k].id == id)
			m = &mi->o[k];
	assert_non_null(m);
	return m;
}

/* OrderUpdateAction / MDUpdateAction of an op. */
static int64_t
op_action(const struct op *op)
{
	return op->kind == 'A' ? 0 : op->kind == 'M' ? 1 : 2;
}

static bool
better(uint8_t side, int64_t a, int64_t b)
{
	return side == BOOK_BID ? a > b : a < b;
}

/* The model's levels of a side, best first, at most max. */
static unsigned int
model_levels(const struct minst *mi, uint8_t side, struct book_level *out, unsigned int max)
{
	struct book_level all[MAX_ORDERS];
	unsigned int n = 0, i, j;

	for (i = 0; i < mi->n; i++) {
		const struct morder *o = &mi->o[i];

		if (!o->live || o->side != side)
			continue;
		for (j = 0; j < n && all[j].price != PX(o->px); j++)
			;
		if (j == n) {
			memset(&all[n], 0, sizeof(all[n]));
			all[n++].price = PX(o->px);
		}
		all[j].qty += o->qty;
		all[j].orders++;
	}
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && better(side, all[j].price, all[j - 1].price); j--) {
			struct book_level t = all[j];

			all[j] = all[j - 1];
			all[j - 1] = t;
		}
	for (i = 0; i < n && i < max; i++)
		out[i] = all[i];
	for (; i < max; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].price = BOOK_PRICE_NONE;
	}
	return n < max ? n : max;
}

static void
model_apply(struct minst *mi, const struct op *op)
{
	struct morder *o = model_find(mi, op->id);

	if (op->kind == 'A') {
		assert_null(o);
		assert_true(mi->n < MAX_ORDERS);
		o = &mi->o[mi->n++];
		o->id = op->id;
		o->side = op->side;
		o->live = true;
	}
	assert_non_null(o);
	if (op->kind == 'D') {
		o->live = false;
		return;
	}
	o->px = op->px;
	o->qty = op->qty;
	o->prio = op->prio;
}

/* ---- the exchange side: packets ------------------------------------------ */

enum sink { SINK_BOOK, SINK_TW_A, SINK_TW_B };

struct t {
	struct book_feed *f;
	uint32_t seq;              /* next incremental MsgSeqNum */
	struct minst ins[3];
	bool drop_next;            /* the next incremental packet is lost */
	/* every packet sent, for the A/B test */
	struct tp log[MAX_LOG];
	size_t len[MAX_LOG];
	uint8_t stream[MAX_LOG];
	unsigned int nlog;
	uint64_t events;           /* events whose oracle check is expected */
	int32_t orders_bias;       /* added to the first level entry's NumberOfOrders */
	bool bias_last;            /* both biases go to the last level entry instead */
};

static struct t T;

static void
deliver(struct t *t, struct tp *p, enum mdp3_stream stream)
{
	size_t len = tp_end(p);

	assert_true(t->nlog < MAX_LOG);
	t->log[t->nlog] = *p;
	t->len[t->nlog] = len;
	t->stream[t->nlog] = (uint8_t)stream;
	t->nlog++;
	if (stream == MDP3_STREAM_INCREMENTAL && t->drop_next) {
		t->drop_next = false;
		return;
	}
	if (t->f == NULL)
		return;
	if (stream == MDP3_STREAM_INCREMENTAL)
		assert_int_equal(book_feed_apply(t->f, MDP3_FEED_A, p->buf, len, 0), 0);
	else
		assert_int_equal(book_feed_stream_packet(t->f, stream, MDP3_FEED_A, p->buf, len,
					0), 0);
}

struct mbp_entry {
	uint8_t action;
	uint8_t side;
	uint8_t level;
	struct book_level v;
};

/* Positional updates that turn the old top mbp_depth levels into the new ones:
 * levels emptied are deleted bottom up (nothing above moves), the rest are
 * overlaid (or changed, same price) where they differ. */
static unsigned int
mbp_diff(const struct book_level *old, const struct book_level *now, uint8_t side,
		struct mbp_entry *out)
{
	struct book_level cur[BOOK_MAX_DEPTH];
	unsigned int n = 0, i;

	memcpy(cur, old, mbp_depth * sizeof(cur[0]));
	for (i = mbp_depth; i-- > 0;)
		if (now[i].price == BOOK_PRICE_NONE && cur[i].price != BOOK_PRICE_NONE) {
			out[n++] = (struct mbp_entry){ BOOK_ACTION_DELETE, side, (uint8_t)(i + 1),
				cur[i] };
			cur[i].price = BOOK_PRICE_NONE;
		}
	for (i = 0; i < mbp_depth; i++) {
		if (now[i].price == BOOK_PRICE_NONE || (now[i].price == cur[i].price &&
					now[i].qty == cur[i].qty && now[i].orders == cur[i].orders))
			continue;
		out[n++] = (struct mbp_entry){ now[i].price == cur[i].price ? BOOK_ACTION_CHANGE :
			BOOK_ACTION_OVERLAY, side, (uint8_t)(i + 1), now[i] };
	}
	return n;
}

static void
put_mbp(struct tp *p, struct minst *mi, const struct mbp_entry *e)
{
	tp_entry(p);
	tp_set(p, "SecurityID", mi->sid);
	tp_set(p, "RptSeq", ++mi->rpt);
	tp_set(p, "MDUpdateAction", e->action);
	tp_set(p, "MDEntryType", e->side == BOOK_BID ? '0' : '1');
	tp_set(p, "MDPriceLevel", e->level);
	tp_set(p, "MDEntryPx", e->v.price);
	tp_set(p, "MDEntrySize", e->v.qty);
	tp_set(p, "NumberOfOrders", e->v.orders);
}

/*
 * One event of one instrument: ops applied to the model, then its packet
 * (46 with the levels and the order entries that can reference one, 47 for
 * the rest).  end: EndOfEvent on the last message; mbp_bias added to the
 * quantity of the first level entry, or of the last with t->bias_last (a
 * wrong price-level book).
 */
static void
event_ex(struct t *t, struct minst *mi, const struct op *ops, unsigned int n, bool end,
		int64_t mbp_bias)
{
	struct book_level old[2][BOOK_MAX_DEPTH], now[2][BOOK_MAX_DEPTH];
	struct mbp_entry e[4 * BOOK_MAX_DEPTH];
	uint8_t ref[16] = { 0 };
	unsigned int ne = 0, i, j, n47 = 0, n46 = 0;
	struct tp p;
	uint8_t side;

	for (side = 0; side < 2; side++)
		model_levels(mi, side, old[side], mbp_depth);
	for (i = 0; i < n; i++) {
		struct op o = ops[i];
		const struct morder *m = model_find(mi, o.id);

		if (o.kind == 'D') {
			assert_non_null(m);
			o.side = m->side;
			o.px = m->px;
		}
		model_apply(mi, &o);
	}
	for (side = 0; side < 2; side++) {
		model_levels(mi, side, now[side], mbp_depth);
		ne += mbp_diff(old[side], now[side], side, &e[ne]);
	}
	if (ne > 0) {
		struct mbp_entry *b = &e[t->bias_last ? ne - 1 : 0];

		b->v.qty += mbp_bias;
		b->v.orders += t->orders_bias;
	}
	/* which order entries can ride in the 46 (a level entry of its price) */
	for (i = 0; i < n; i++) {
		const struct morder *m = model_any(mi, ops[i].id);

		for (j = 0; j < ne && !ops[i].via47; j++)
			if (e[j].side == m->side && e[j].v.price == PX(m->px) &&
					e[j].action != BOOK_ACTION_DELETE)
				break;
		ref[i] = j < ne && !ops[i].via47 ? (uint8_t)(j + 1) : 0;
		n47 += ref[i] == 0;
		n46 += ref[i] != 0;
	}
	tp_packet(&p, t->seq++, 0);
	if (ne > 0 || n46 > 0) {
		tp_msg(&p, 46, V9);
		tp_set(&p, "TransactTime", 1);
		tp_set(&p, "MatchEventIndicator", end && n47 == 0 ? 0x80 : 0);
		tp_group(&p, "NoMDEntries");
		for (j = 0; j < ne; j++)
			put_mbp(&p, mi, &e[j]);
		tp_group(&p, "NoOrderIDEntries");
		for (i = 0; i < n; i++) {
			const struct morder *m = model_any(mi, ops[i].id);

			if (ref[i] == 0)
				continue;
			tp_entry(&p);
			tp_set(&p, "OrderID", (int64_t)ops[i].id);
			tp_set(&p, "MDOrderPriority", (int64_t)m->prio);
			tp_set(&p, "MDDisplayQty", ops[i].kind == 'D' ? 0 : m->qty);
			tp_set(&p, "ReferenceID", ref[i]);
			tp_set(&p, "OrderUpdateAction", op_action(&ops[i]));
		}
	}
	if (n47 > 0) {
		tp_msg(&p, 47, V9);
		tp_set(&p, "TransactTime", 1);
		tp_set(&p, "MatchEventIndicator", end ? 0x80 : 0);
		tp_group(&p, "NoMDEntries");
		for (i = 0; i < n; i++) {
			const struct morder *m = model_any(mi, ops[i].id);

			if (ref[i] != 0)
				continue;
			tp_entry(&p);
			tp_set(&p, "OrderID", (int64_t)ops[i].id);
			tp_set(&p, "MDOrderPriority", (int64_t)m->prio);
			tp_set(&p, "MDEntryPx", PX(m->px));
			tp_set(&p, "MDDisplayQty", ops[i].kind == 'D' ? 0 : m->qty);
			tp_set(&p, "SecurityID", mi->sid);
			tp_set(&p, "MDUpdateAction", op_action(&ops[i]));
			tp_set(&p, "MDEntryType", m->side == BOOK_BID ? '0' : '1');
		}
	}
	deliver(t, &p, MDP3_STREAM_INCREMENTAL);
}

static void
event(struct t *t, struct minst *mi, const struct op *ops, unsigned int n)
{
	event_ex(t, mi, ops, n, true, 0);
}

/* Snapshot 52 of the model (price levels, its RptSeq) as of last_seq. */
static void
snapshot52(struct t *t, struct minst *mi, uint32_t last_seq)
{
	struct book_level lv[BOOK_MAX_DEPTH];
	unsigned int side, i, n;
	struct tp p;

	tp_packet(&p, 1, 0);
	tp_msg(&p, 52, V9);
	tp_set(&p, "LastMsgSeqNumProcessed", last_seq);
	tp_set(&p, "TotNumReports", 1);
	tp_set(&p, "SecurityID", mi->sid);
	tp_set(&p, "RptSeq", mi->rpt);
	tp_group(&p, "NoMDEntries");
	for (side = 0; side < 2; side++) {
		n = model_levels(mi, (uint8_t)side, lv, mbp_depth);
		for (i = 0; i < n; i++) {
			tp_entry(&p);
			tp_set(&p, "MDEntryType", side == BOOK_BID ? '0' : '1');
			tp_set(&p, "MDPriceLevel", i + 1);
			tp_set(&p, "MDEntryPx", lv[i].price);
			tp_set(&p, "MDEntrySize", lv[i].qty);
			tp_set(&p, "NumberOfOrders", lv[i].orders);
		}
	}
	deliver(t, &p, MDP3_STREAM_SNAPSHOT);
}

/* Snapshot 53 of the model as of last_seq, per_chunk orders a chunk;
 * skip_chunk (1-based, 0: none) is not sent. */
static void
snapshot53(struct t *t, struct minst *mi, uint32_t last_seq, unsigned int per_chunk,
		unsigned int skip_chunk)
{
	unsigned int live = 0, i, k = 0, chunks, chunk;
	struct tp p;

	for (i = 0; i < mi->n; i++)
		live += mi->o[i].live;
	chunks = live == 0 ? 1 : (live + per_chunk - 1) / per_chunk;
	i = 0;
	for (chunk = 1; chunk <= chunks; chunk++) {
		tp_packet(&p, chunk, 0);
		tp_msg(&p, 53, V9);
		tp_set(&p, "LastMsgSeqNumProcessed", last_seq);
		tp_set(&p, "TotNumReports", 1);
		tp_set(&p, "SecurityID", mi->sid);
		tp_set(&p, "NoChunks", chunks);
		tp_set(&p, "CurrentChunk", chunk);
		tp_group(&p, "NoMDEntries");
		for (k = 0; k < per_chunk && i < mi->n; i++) {
			const struct morder *o = &mi->o[i];

			if (!o->live)
				continue;
			tp_entry(&p);
			tp_set(&p, "OrderID", (int64_t)o->id);
			tp_set(&p, "MDOrderPriority", (int64_t)o->prio);
			tp_set(&p, "MDEntryPx", PX(o->px));
			tp_set(&p, "MDDisplayQty", o->qty);
			tp_set(&p, "MDEntryType", o->side == BOOK_BID ? '0' : '1');
			k++;
		}
		if (chunk != skip_chunk)
			deliver(t, &p, MDP3_STREAM_SNAPSHOT);
	}
}

static void
channel_reset(struct t *t)
{
	struct tp p;
	unsigned int i;

	tp_packet(&p, t->seq++, 0);
	tp_msg(&p, 4, V9);
	tp_set(&p, "TransactTime", 1);
	tp_set(&p, "MatchEventIndicator", 0x80);
	deliver(t, &p, MDP3_STREAM_INCREMENTAL);
	for (i = 0; i < 3; i++) {
		T.ins[i].n = 0;
		T.ins[i].rpt = 0;
	}
}

/* ---- checks ---------------------------------------------------------------- */

/* The MBO book equals the model, order by order, in priority order. */
static void
check_book(struct book_feed *f, struct minst *mi)
{
	const struct book_mbo *m = book_feed_mbo(f, mi->sid);
	struct book_level want[MAX_ORDERS], got[MAX_ORDERS];
	struct book_order orders[MAX_ORDERS], o;
	unsigned int side, i, k, live = 0, n;
	int rc;

	assert_non_null(m);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_VALID);
	for (i = 0; i < mi->n; i++) {
		const struct morder *mo = &mi->o[i];

		if (!mo->live) {
			assert_int_equal(book_mbo_order(m, mo->id, &o), -ENOENT);
			continue;
		}
		live++;
		assert_int_equal(book_mbo_order(m, mo->id, &o), 0);
		assert_int_equal(o.price, PX(mo->px));
		assert_int_equal(o.qty, mo->qty);
		assert_int_equal(o.priority, mo->prio);
		assert_int_equal(o.side, mo->side);
	}
	assert_int_equal(book_mbo_order_count(m), live);
	for (side = 0; side < 2; side++) {
		n = model_levels(mi, (uint8_t)side, want, MAX_ORDERS);
		rc = book_mbo_levels(m, side, got, MAX_ORDERS);
		assert_int_equal(rc, (int)n);
		for (i = 0; i < n; i++) {
			uint64_t last = 0;

			assert_int_equal(got[i].price, want[i].price);
			assert_int_equal(got[i].qty, want[i].qty);
			assert_int_equal(got[i].orders, want[i].orders);
			rc = book_mbo_level_orders(m, side, got[i].price, orders, MAX_ORDERS);
			assert_int_equal(rc, want[i].orders);
			for (k = 0; k < (unsigned int)rc; k++) {
				assert_true(k == 0 || orders[k].priority >= last);
				last = orders[k].priority;
			}
		}
	}
}

/* The price-level book equals the model's top mbp_depth levels (the packets are right). */
static void
check_mbp(struct book_feed *f, struct minst *mi)
{
	const struct book_instrument *in = book_feed_find(f, mi->sid);
	struct book_level want[BOOK_MAX_DEPTH];
	unsigned int side, i;

	assert_non_null(in);
	for (side = 0; side < 2; side++) {
		model_levels(mi, (uint8_t)side, want, mbp_depth);
		for (i = 0; i < mbp_depth; i++) {
			const struct book_level *l = side == BOOK_BID ? &in->bid[i] : &in->ask[i];

			assert_int_equal(l->price, want[i].price);
			assert_int_equal(l->qty, want[i].qty);
			assert_int_equal(l->orders, want[i].orders);
		}
	}
}

static const struct book_feed_counters *
ctr(void)
{
	return book_feed_counters(T.f);
}

/* The tests' feed: definitions of the given depth, no implied book. */
static struct book_feed_config
feed_config(unsigned int depth)
{
	struct book_feed_config c = {
		.default_depth = depth, .implied_none = true, .mbo = true,
		.mbo_instruments = 4, .mbo_orders = 32, .mbo_levels = 16, .mbo_diffs = 4,
		.recovery_packets = 64,
	};

	return c;
}

/* A fresh feed (feed_config(DEPTH) unless extra) and model. */
static void
setup_feed(const struct book_feed_config *extra)
{
	struct book_feed_config c = feed_config(DEPTH);
	unsigned int i;

	if (extra != NULL)
		c = *extra;
	c.max_simd_bits = simd_bits;
	if (T.f != NULL)
		book_feed_destroy(T.f);
	memset(&T, 0, sizeof(T));
	T.f = book_feed_create(&c);
	assert_non_null(T.f);
	mbp_depth = book_feed_config(T.f)->default_depth;
	T.seq = 1;
	for (i = 0; i < 3; i++)
		T.ins[i].sid = 101 + (int32_t)i;
}

static int
teardown(void **state)
{
	(void)state;
	book_feed_destroy(T.f);
	T.f = NULL;
	return 0;
}

/* The script of the main test: every kind of order operation. */
static const struct op script_open[] = {
	{ 'A', 1, BOOK_BID, 100, 5, 10, false },
	{ 'A', 2, BOOK_BID, 100, 7, 11, false },
	{ 'A', 3, BOOK_BID, 99, 4, 12, false },
	{ 'A', 4, BOOK_ASK, 101, 6, 13, false },
	{ 'A', 5, BOOK_ASK, 102, 8, 14, false },
};

/* Adds, modifies, cancels, fills, a priority change, a level emptied, a
 * level deeper than the price-level book, a price move; checked after each. */
static void
run_script(struct t *t, struct minst *mi, void (*after)(struct minst *mi))
{
	static const struct op steps[][3] = {
		/* adds at an existing level (behind 1 and 2), one in a 47 */
		{ { 'A', 6, BOOK_BID, 100, 3, 20, false }, { 'A', 7, BOOK_BID, 100, 2, 21, true } },
		/* partial fill of 1 (keeps priority), full fill of 7 */
		{ { 'M', 1, BOOK_BID, 100, 2, 10, false }, { 'D', 7, 0, 0, 0, 0, false } },
		/* quantity up: 2 loses its priority (goes behind 6) */
		{ { 'M', 2, BOOK_BID, 100, 9, 30, false } },
		/* priority change alone (aggregate unchanged: only a 47 can say it) */
		{ { 'M', 6, BOOK_BID, 100, 3, 31, false } },
		/* deep levels: 4th and 5th bid, beyond DEPTH */
		{ { 'A', 8, BOOK_BID, 97, 1, 32, false }, { 'A', 9, BOOK_BID, 96, 2, 33, false } },
		/* cancel the only order of 99: the level empties, 97 moves up */
		{ { 'D', 3, 0, 0, 0, 0, false } },
		/* price move of an ask: 102 -> 101 joins the best ask */
		{ { 'M', 5, BOOK_ASK, 101, 8, 34, false } },
		/* the best ask level emptied at once (two cancels) */
		{ { 'D', 4, 0, 0, 0, 0, false }, { 'D', 5, 0, 0, 0, 0, false } },
		/* new asks, one via 47 although a level entry exists */
		{ { 'A', 10, BOOK_ASK, 103, 4, 35, true }, { 'A', 11, BOOK_ASK, 104, 1, 36, false } },
	};
	unsigned int i, n;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		for (n = 0; n < 3 && steps[i][n].kind != 0; n++)
			;
		event(t, mi, steps[i], n);
		if (after != NULL)
			after(mi);
	}
}

static void
check_all(struct minst *mi)
{
	check_mbp(T.f, mi);
	check_book(T.f, mi);
	assert_int_equal(ctr()->mbo_mismatches, 0);
}

/* Snapshot (52 + 53) then the script: the book equals the model after every
 * event, the oracle compared at every EndOfEvent and found nothing. */
static void
test_snapshot_then_script(void **state)
{
	struct minst *mi;
	struct book_mbo_queue q;
	const struct book_mbo *m;
	uint64_t checks;

	(void)state;
	setup_feed(NULL);
	mi = &T.ins[0];
	{
		unsigned int i;

		for (i = 0; i < 5; i++)
			model_apply(mi, &script_open[i]);
		mi->rpt = 40;
	}
	snapshot52(&T, mi, 0);
	snapshot53(&T, mi, 0, 2, 0);     /* three chunks */
	assert_int_equal(ctr()->mbo_snapshots, 1);
	check_book(T.f, mi);
	checks = ctr()->mbo_checks;
	run_script(&T, mi, check_all);
	/* one comparison per event (9), none different */
	assert_int_equal(ctr()->mbo_checks - checks, 9);
	assert_int_equal(ctr()->mbo_mismatches, 0);
	assert_int_equal(ctr()->mbo_unknown_orders + ctr()->mbo_bad_entries +
			ctr()->mbo_not_applied, 0);
	assert_int_equal(ctr()->mbo_new, 6);
	assert_int_equal(ctr()->mbo_changes, 4);
	assert_int_equal(ctr()->mbo_deletes, 4);
	assert_true(ctr()->mbo_entries_46 > 0 && ctr()->mbo_entries_47 > 0);
	assert_int_equal(ctr()->mbo_entries_46 + ctr()->mbo_entries_47, 14);

	/* queue at bid 100: 1 (qty 2, priority 10), 2 (9, 30), 6 (3, 31) */
	m = book_feed_mbo(T.f, mi->sid);
	assert_int_equal(book_mbo_queue_by_order(m, BOOK_BID, PX(100), 1, &q), 0);
	assert_int_equal(q.orders_ahead, 0);
	assert_int_equal(q.qty_ahead, 0);
	assert_int_equal(q.level_orders, 3);
	assert_int_equal(q.level_qty, 2 + 9 + 3);
	assert_int_equal(book_mbo_queue_by_order(m, BOOK_BID, PX(100), 6, &q), 0);
	assert_int_equal(q.orders_ahead, 2);   /* 1 (10), 2 (30) before 6 (31) */
	assert_int_equal(q.qty_ahead, 2 + 9);
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(100), 30, &q), 0);
	assert_int_equal(q.orders_ahead, 2);   /* 10 and an equal 30 came first */
	assert_int_equal(q.qty_ahead, 11);
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(100), 5, &q), 0);
	assert_int_equal(q.orders_ahead, 0);
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(55), 5, &q), 0);
	assert_int_equal(q.level_orders, 0);
	assert_int_equal(book_mbo_queue_by_order(m, BOOK_ASK, PX(100), 1, &q), -ENOENT);
	assert_int_equal(book_mbo_queue_by_order(m, BOOK_BID, PX(100), 77, &q), -ENOENT);
	assert_int_equal(book_mbo_queue_by_order(NULL, BOOK_BID, PX(100), 1, &q), -EINVAL);
}

/* Where a joiner stands (book_mbo_queue_back() then _queue_by_priority(),
 * the appliance's queue joins): ahead of it, the orders that rested at its
 * price when it joined and are still there with their priority; later
 * orders and orders that lost their priority are behind.  And the MBO hash
 * follows the book. */
static void
test_queue_join(void **state)
{
	static const struct op open[] = {
		{ 'A', 1, BOOK_BID, 100, 2, 10, false },
		{ 'A', 2, BOOK_BID, 100, 9, 30, false },
		{ 'A', 3, BOOK_ASK, 101, 5, 31, false },
	};
	const struct op later = { 'A', 4, BOOK_BID, 100, 4, 40, false };
	const struct op up = { 'M', 1, BOOK_BID, 100, 7, 50, false };  /* loses priority */
	const struct op down = { 'M', 2, BOOK_BID, 100, 6, 30, false }; /* keeps it */
	const struct op gone = { 'D', 2, 0, 0, 0, 0, false };
	const struct op lost = { 'A', 5, BOOK_BID, 100, 1, 60, false };
	const struct op after = { 'A', 6, BOOK_BID, 100, 1, 61, false };
	const struct book_mbo *m;
	struct book_mbo_queue q;
	struct minst *mi;
	uint64_t back, none, h;

	(void)state;
	setup_feed(NULL);
	mi = &T.ins[0];
	for (unsigned int i = 0; i < 3; i++)
		model_apply(mi, &open[i]);
	mi->rpt = 5;
	snapshot52(&T, mi, 0);
	snapshot53(&T, mi, 0, 2, 0);
	m = book_feed_mbo(T.f, mi->sid);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_VALID);
	assert_int_equal(book_mbo_queue_back(m, BOOK_BID, PX(100), &back), 0);
	assert_int_equal(back, 30);              /* behind order 2 */
	assert_int_equal(book_mbo_queue_back(m, BOOK_BID, PX(99), &none), 0);
	assert_int_equal(none, 0);               /* no level: first in line */
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(99), none, &q), 0);
	assert_int_equal(q.orders_ahead, 0);
	h = book_feed_mbo_hash(T.f);
	assert_int_not_equal(h, 0);
	assert_int_equal(h, book_mbo_hash(m));   /* the only book */

	event(&T, mi, &later, 1);                /* joins behind */
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(100), back, &q), 0);
	assert_int_equal(q.orders_ahead, 2);
	assert_int_equal(q.qty_ahead, 2 + 9);
	assert_int_equal(q.level_orders, 3);
	assert_int_not_equal(book_feed_mbo_hash(T.f), h);
	event(&T, mi, &up, 1);                   /* 1 goes to the back */
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(100), back, &q), 0);
	assert_int_equal(q.orders_ahead, 1);
	assert_int_equal(q.qty_ahead, 9);
	event(&T, mi, &down, 1);                 /* 2 partly filled or reduced */
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(100), back, &q), 0);
	assert_int_equal(q.qty_ahead, 6);
	event(&T, mi, &gone, 1);                 /* nothing ahead any more */
	assert_int_equal(book_mbo_queue_by_priority(m, BOOK_BID, PX(100), back, &q), 0);
	assert_int_equal(q.orders_ahead, 0);
	assert_int_equal(q.qty_ahead, 0);
	assert_int_equal(q.level_orders, 2);
	assert_int_equal(ctr()->mbo_mismatches, 0);

	/* stale: no position; bad arguments */
	T.drop_next = true;
	event(&T, mi, &lost, 1);
	event(&T, mi, &after, 1);                /* a MsgSeqNum jump */
	assert_int_equal(book_mbo_queue_back(m, BOOK_BID, PX(100), &back), -ESTALE);
	assert_int_equal(book_mbo_queue_back(NULL, BOOK_BID, PX(100), &back), -EINVAL);
	assert_int_equal(book_mbo_queue_back(m, BOOK_BID, PX(100), NULL), -EINVAL);
	assert_int_equal(book_mbo_hash(NULL), 0);
}

/* The oracle fails when the price-level book disagrees, and says where. */
static void
test_oracle_reports_difference(void **state)
{
	/* the instrument's depth: the test's, and the full one (compared
	 * without a mask); the wrong field: quantity, then order count */
	static const struct {
		unsigned int depth;
		int64_t qty_bias;
		int32_t orders_bias;
	} cases[] = {
		{ DEPTH, 3, 0 }, { DEPTH, 0, 1 }, { BOOK_MAX_DEPTH, 3, 0 }, { BOOK_MAX_DEPTH, 0, -1 },
	};
	struct book_mbo_diff d[8];
	struct minst *mi;
	const struct op add = { 'A', 1, BOOK_BID, 100, 5, 1, false };
	const struct op add2 = { 'A', 2, BOOK_BID, 100, 1, 2, false };
	unsigned int k;

	(void)state;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct book_feed_config c = feed_config(cases[k].depth);

		setup_feed(&c);
		mi = &T.ins[1];
		channel_reset(&T);        /* books empty: new books start valid */
		event_ex(&T, mi, &add, 1, true, 0);
		assert_int_equal(ctr()->mbo_checks, 1);
		assert_int_equal(ctr()->mbo_mismatches, 0);
		/* the level entry says qty 6 + qty_bias, 2 + orders_bias orders */
		T.orders_bias = cases[k].orders_bias;
		event_ex(&T, mi, &add2, 1, true, cases[k].qty_bias);
		T.orders_bias = 0;
		assert_int_equal(book_feed_find(T.f, mi->sid)->depth, cases[k].depth);
		assert_int_equal(ctr()->mbo_checks, 2);
		assert_int_equal(ctr()->mbo_mismatches, 1);
		assert_int_equal(ctr()->mbo_level_diffs, 1);
		assert_int_equal(book_feed_mbo_diffs(T.f, d, 8), 1);
		assert_int_equal(d[0].security_id, mi->sid);
		assert_int_equal(d[0].msg_seq_num, 3);
		assert_int_equal(d[0].side, BOOK_BID);
		assert_int_equal(d[0].level, 1);
		assert_int_equal(d[0].mbo.price, PX(100));
		assert_int_equal(d[0].mbo.qty, 6);
		assert_int_equal(d[0].mbo.orders, 2);
		assert_int_equal(d[0].mbp.qty, 6 + cases[k].qty_bias);
		assert_int_equal(d[0].mbp.orders, 2 + cases[k].orders_bias);
	}
	assert_int_equal(book_feed_mbo_diffs(T.f, NULL, 1), -EINVAL);
	assert_int_equal(book_feed_mbo_diffs(NULL, d, 1), -EINVAL);
}

/* An event that changes both sides, the ask's price level wrong: both sides
 * are compared, the difference is the ask's. */
static void
test_oracle_both_sides(void **state)
{
	const struct book_feed_config c = feed_config(BOOK_MAX_DEPTH);
	const struct op ops[] = {
		{ 'A', 1, BOOK_BID, 100, 5, 1, false },
		{ 'A', 2, BOOK_ASK, 101, 4, 2, false },
	};
	struct book_mbo_diff d[8];
	struct minst *mi;

	(void)state;
	setup_feed(&c);
	mi = &T.ins[1];
	channel_reset(&T);
	T.bias_last = true;
	event_ex(&T, mi, ops, 2, true, 2);
	T.bias_last = false;
	assert_int_equal(ctr()->mbo_checks, 1);
	assert_int_equal(ctr()->mbo_mismatches, 1);
	assert_int_equal(ctr()->mbo_level_diffs, 1);
	assert_int_equal(book_feed_mbo_diffs(T.f, d, 8), 1);
	assert_int_equal(d[0].side, BOOK_ASK);
	assert_int_equal(d[0].level, 1);
	assert_int_equal(d[0].mbo.price, PX(101));
	assert_int_equal(d[0].mbo.qty, 4);
	assert_int_equal(d[0].mbp.qty, 6);
}

/* An event of price-level entries alone (a 46 without order entries). */
static void
mbp_event(struct t *t, struct minst *mi, const struct mbp_entry *e, unsigned int n)
{
	struct tp p;
	unsigned int j;

	tp_packet(&p, t->seq++, 0);
	tp_msg(&p, 46, V9);
	tp_set(&p, "TransactTime", 1);
	tp_set(&p, "MatchEventIndicator", 0x80);
	tp_group(&p, "NoMDEntries");
	for (j = 0; j < n; j++)
		put_mbp(&p, mi, &e[j]);
	tp_group(&p, "NoOrderIDEntries");
	deliver(t, &p, MDP3_STREAM_INCREMENTAL);
}

/*
 * A price-level side holding the same levels as the MBO book but in
 * another order (two levels swapped, an empty level above a level) differs
 * at each level so placed: the oracle compares positions, not the set of
 * levels (a cheaper oracle that sums over a side's levels has to keep
 * this).
 */
static void
test_oracle_levels_out_of_order(void **state)
{
	static const unsigned int depths[] = { DEPTH, BOOK_MAX_DEPTH };
	const struct op adds[] = {
		{ 'A', 1, BOOK_BID, 101, 5, 1, false },
		{ 'A', 2, BOOK_BID, 100, 7, 2, false },
		{ 'A', 3, BOOK_ASK, 102, 4, 3, false },
	};
	const struct op mod2 = { 'M', 2, BOOK_BID, 100, 8, 2, false };
	const struct book_level l101 = { PX(101), 5, 1, 0 }, l100 = { PX(100), 8, 1, 0 };
	const struct book_level l102 = { PX(102), 4, 1, 0 };
	struct book_mbo_diff d[8];
	struct minst *mi;
	unsigned int k;

	(void)state;
	for (k = 0; k < 2; k++) {
		const struct book_feed_config c = feed_config(depths[k]);
		struct mbp_entry swap[2] = {
			{ BOOK_ACTION_OVERLAY, BOOK_BID, 1, l100 },
			{ BOOK_ACTION_OVERLAY, BOOK_BID, 2, l101 },
		};
		/* the ask's one level moved down one, an empty level above it */
		const struct mbp_entry hole[2] = {
			{ BOOK_ACTION_DELETE, BOOK_ASK, 1, l102 },
			{ BOOK_ACTION_CHANGE, BOOK_ASK, 2, l102 },
		};

		setup_feed(&c);
		mi = &T.ins[1];
		channel_reset(&T);
		event(&T, mi, &adds[0], 1);
		event(&T, mi, &adds[1], 1);
		event(&T, mi, &adds[2], 1);
		event(&T, mi, &mod2, 1);
		assert_int_equal(ctr()->mbo_checks, 4);
		assert_int_equal(ctr()->mbo_mismatches, 0);

		/* bids 101, 100 become 100, 101: the same levels */
		mbp_event(&T, mi, swap, 2);
		assert_int_equal(ctr()->mbo_checks, 5);
		assert_int_equal(ctr()->mbo_mismatches, 1);
		assert_int_equal(ctr()->mbo_level_diffs, 2);
		assert_int_equal(book_feed_mbo_diffs(T.f, d, 8), 2);
		assert_int_equal(d[0].level, 1);
		assert_int_equal(d[0].mbo.price, PX(101));
		assert_int_equal(d[0].mbp.price, PX(100));
		assert_int_equal(d[1].level, 2);
		assert_int_equal(d[1].mbo.price, PX(100));
		assert_int_equal(d[1].mbp.price, PX(101));
		/* put back in order: they agree again */
		swap[0].v = l101;
		swap[1].v = l100;
		mbp_event(&T, mi, swap, 2);
		assert_int_equal(ctr()->mbo_mismatches, 1);
		event(&T, mi, &mod2, 1);
		assert_int_equal(ctr()->mbo_mismatches, 1);

		/* asks {102, empty...} against {empty, 102, empty...} */
		mbp_event(&T, mi, hole, 2);
		assert_int_equal(ctr()->mbo_mismatches, 2);
		assert_int_equal(ctr()->mbo_level_diffs, 4);
		assert_int_equal(book_feed_mbo_diffs(T.f, d, 8), 4);
		assert_int_equal(d[2].side, BOOK_ASK);
		assert_int_equal(d[2].level, 1);
		assert_int_equal(d[2].mbo.price, PX(102));
		assert_int_equal(d[2].mbp.price, BOOK_PRICE_NONE);
		assert_int_equal(d[3].level, 2);
		assert_int_equal(d[3].mbo.price, BOOK_PRICE_NONE);
		assert_int_equal(d[3].mbp.price, PX(102));
	}
}

/* An event over two packets: compared once, at its EndOfEvent only (the
 * first packet alone holds the level but not yet its orders). */
static void
test_event_split_over_packets(void **state)
{
	struct minst *mi;
	const struct op a = { 'A', 1, BOOK_ASK, 100, 5, 1, true };
	const struct op b = { 'A', 2, BOOK_ASK, 100, 4, 2, true };
	struct tp p;

	(void)state;
	setup_feed(NULL);
	mi = &T.ins[0];
	channel_reset(&T);
	/* packet 1: the level entry with both orders counted, no EndOfEvent */
	model_apply(mi, &a);
	model_apply(mi, &b);
	tp_packet(&p, T.seq++, 0);
	tp_msg(&p, 46, V9);
	tp_set(&p, "MatchEventIndicator", 0);
	tp_group(&p, "NoMDEntries");
	put_mbp(&p, mi, &(struct mbp_entry){ BOOK_ACTION_NEW, BOOK_ASK, 1,
			{ PX(100), 9, 2, 0 } });
	deliver(&T, &p, MDP3_STREAM_INCREMENTAL);
	assert_int_equal(ctr()->mbo_checks, 0);
	/* packet 2: the orders (47), EndOfEvent */
	tp_packet(&p, T.seq++, 0);
	tp_msg(&p, 47, V9);
	tp_set(&p, "MatchEventIndicator", 0x80);
	tp_group(&p, "NoMDEntries");
	for (unsigned int i = 0; i < 2; i++) {
		tp_entry(&p);
		tp_set(&p, "OrderID", (int64_t)mi->o[i].id);
		tp_set(&p, "MDOrderPriority", (int64_t)mi->o[i].prio);
		tp_set(&p, "MDEntryPx", PX(100));
		tp_set(&p, "MDDisplayQty", mi->o[i].qty);
		tp_set(&p, "SecurityID", mi->sid);
		tp_set(&p, "MDUpdateAction", 0);
		tp_set(&p, "MDEntryType", '1');
	}
	deliver(&T, &p, MDP3_STREAM_INCREMENTAL);
	assert_int_equal(ctr()->mbo_checks, 1);
	assert_int_equal(ctr()->mbo_mismatches, 0);
	check_book(T.f, mi);
}

/* A RptSeq gap makes the MBO book stale; a snapshot 53 mid-stream recovers
 * it by replaying the buffer after its LastMsgSeqNumProcessed (a chunk lost
 * first: that loop is dropped); a lost 47-only packet (no RptSeq to show it)
 * is seen by its MsgSeqNum alone. */
static void
test_gap_and_recovery(void **state)
{
	const struct op a1 = { 'A', 1, BOOK_BID, 100, 5, 1, false };
	const struct op a2 = { 'A', 2, BOOK_BID, 99, 5, 2, false };
	const struct op a3 = { 'A', 3, BOOK_BID, 98, 5, 3, false };
	const struct op a4 = { 'M', 1, BOOK_BID, 100, 4, 1, false };
	const struct op a5 = { 'A', 4, BOOK_ASK, 105, 1, 4, false };
	const struct op deep = { 'A', 5, BOOK_BID, 90, 1, 5, false };
	const struct op d2 = { 'A', 6, BOOK_BID, 80, 1, 6, true };
	const struct op d3 = { 'A', 7, BOOK_BID, 79, 1, 7, true };
	const struct op o1 = { 'A', 50, BOOK_ASK, 7, 1, 1, false };
	struct minst *mi, *other, then;
	const struct book_mbo *m;
	struct book_level lv[4];
	struct book_mbo_queue q;
	struct book_order o;
	uint32_t snap_seq;
	uint64_t checks;

	(void)state;
	setup_feed(NULL);
	mi = &T.ins[0];
	other = &T.ins[2];
	channel_reset(&T);
	event(&T, mi, &a1, 1);
	event(&T, other, &o1, 1);
	T.drop_next = true;
	event(&T, mi, &a2, 1);           /* lost */
	event(&T, mi, &a3, 1);           /* MsgSeqNum jump and RptSeq gap: stale */
	m = book_feed_mbo(T.f, mi->sid);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_STALE);
	assert_int_equal(book_feed_find(T.f, mi->sid)->state, BOOK_STATE_STALE);
	assert_int_equal(book_mbo_levels(m, BOOK_BID, lv, 4), -ESTALE);
	assert_int_equal(book_mbo_order(m, 1, &o), -ESTALE);
	assert_int_equal(book_mbo_order_count(m), 0);
	assert_int_equal(book_mbo_queue_by_order(m, BOOK_BID, PX(100), 1, &q), -ESTALE);
	/* the other instrument has no RptSeq gap, but 47 carries no RptSeq:
	 * any MBO book may have lost orders in the packet */
	assert_int_equal(book_mbo_state(book_feed_mbo(T.f, other->sid)), BOOK_MBO_STALE);
	assert_int_equal(book_feed_find(T.f, other->sid)->state, BOOK_STATE_OK);
	assert_int_equal(ctr()->mbo_stale_books, 2);
	assert_int_equal(ctr()->mbo_not_applied, 1);   /* a3's order entry */
	/* the exchange's state after packet snap_seq, for both snapshots */
	snap_seq = T.seq - 1;
	then = *mi;
	snapshot52(&T, mi, snap_seq);    /* price levels recover at once */
	assert_int_equal(book_feed_find(T.f, mi->sid)->state, BOOK_STATE_OK);
	event(&T, mi, &a4, 1);           /* MBO: buffered, not applied */
	assert_int_equal(ctr()->mbo_not_applied, 2);
	checks = ctr()->mbo_checks;
	snapshot53(&T, &then, snap_seq, 1, 2);   /* chunk 2 of 3 lost */
	assert_int_equal(book_mbo_state(m), BOOK_MBO_STALE);
	assert_int_equal(ctr()->mbo_snapshots_ignored, 1);
	snapshot53(&T, &then, snap_seq, 1, 0);
	assert_int_equal(ctr()->mbo_snapshots, 1);
	assert_int_equal(ctr()->mbo_replayed, 1);    /* a4, from the buffer */
	check_book(T.f, mi);
	check_mbp(T.f, mi);
	assert_int_equal(ctr()->mbo_stale_books, 1);
	event(&T, mi, &a5, 1);
	event(&T, mi, &deep, 1);
	check_all(mi);
	assert_int_equal(ctr()->mbo_checks - checks, 2);
	/* a snapshot of a valid book is not needed */
	snapshot53(&T, mi, T.seq - 1, 8, 0);
	assert_int_equal(ctr()->mbo_snapshots_ignored, 2);
	/* the other book: stale (no snapshot for it yet), never compared */
	assert_int_equal(book_mbo_state(book_feed_mbo(T.f, other->sid)), BOOK_MBO_STALE);
	/* a lost packet holding only a 47 (a deep order): no RptSeq gap; the
	 * MsgSeqNum jump alone makes the book stale */
	T.drop_next = true;
	event(&T, mi, &d2, 1);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_VALID);
	event(&T, mi, &d3, 1);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_STALE);
	assert_int_equal(book_feed_find(T.f, mi->sid)->state, BOOK_STATE_OK);
	/* a declared loss (the arbiter's) does the same for every book */
	snapshot53(&T, mi, T.seq - 1, 8, 0);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_VALID);
	check_book(T.f, mi);
	assert_int_equal(book_feed_loss(T.f, T.seq, 1, 0), 0);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_STALE);
}

/* ChannelReset empties every MBO book and makes it valid; EmptyBook (J)
 * empties one. */
static void
test_channel_reset_and_empty_book(void **state)
{
	const struct op a1 = { 'A', 1, BOOK_BID, 100, 5, 1, false };
	const struct op a2 = { 'A', 2, BOOK_ASK, 101, 5, 2, false };
	const struct op a3 = { 'A', 3, BOOK_ASK, 102, 5, 3, false };
	struct minst *mi = &T.ins[0];
	const struct book_mbo *m;
	struct tp p;

	(void)state;
	setup_feed(NULL);
	mi = &T.ins[0];
	event(&T, mi, &a1, 1);           /* joined mid-stream: partial */
	m = book_feed_mbo(T.f, mi->sid);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_PARTIAL);
	assert_int_equal(book_mbo_order_count(m), 1);
	assert_int_equal(ctr()->mbo_checks, 0);
	channel_reset(&T);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_VALID);
	assert_int_equal(book_mbo_order_count(m), 0);
	assert_int_equal(ctr()->mbo_resets, 1);
	event(&T, mi, &a2, 1);
	event(&T, &T.ins[1], &a3, 1);    /* a new instrument after the reset: valid */
	assert_int_equal(book_mbo_state(book_feed_mbo(T.f, T.ins[1].sid)), BOOK_MBO_VALID);
	check_all(mi);
	check_all(&T.ins[1]);
	assert_int_equal(ctr()->mbo_checks, 2);
	/* EmptyBook of instrument 1 */
	tp_packet(&p, T.seq++, 0);
	tp_msg(&p, 46, V9);
	tp_set(&p, "MatchEventIndicator", 0x80);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "SecurityID", mi->sid);
	tp_set(&p, "RptSeq", ++mi->rpt);
	tp_set(&p, "MDUpdateAction", 0);
	tp_set(&p, "MDEntryType", 'J');
	deliver(&T, &p, MDP3_STREAM_INCREMENTAL);
	mi->n = 0;
	assert_int_equal(ctr()->mbo_resets, 2);
	check_all(mi);
	check_book(T.f, &T.ins[1]);
	/* a RptSeq gap alone (MsgSeqNum in sequence): that instrument's MBO
	 * book goes stale with its price levels, the other stays valid */
	T.ins[1].rpt++;
	event(&T, &T.ins[1], &a1, 1);
	assert_int_equal(book_feed_find(T.f, T.ins[1].sid)->state, BOOK_STATE_STALE);
	assert_int_equal(book_mbo_state(book_feed_mbo(T.f, T.ins[1].sid)), BOOK_MBO_STALE);
	assert_int_equal(book_mbo_state(book_feed_mbo(T.f, mi->sid)), BOOK_MBO_VALID);
	assert_int_equal(ctr()->mbo_stale_marked, 1);
}

/* Bounds: orders per book, levels per side, books per channel; each hit is
 * counted, the book is never shown half-built, a snapshot that fits brings
 * it back. */
static void
test_bounds(void **state)
{
	struct book_feed_config c = {
		.default_depth = DEPTH, .implied_none = true, .mbo = true,
		.mbo_instruments = 2, .mbo_orders = 3, .mbo_levels = 2, .recovery_packets = 16,
	};
	const struct op a[] = {
		{ 'A', 1, BOOK_BID, 100, 1, 1, false },
		{ 'A', 2, BOOK_BID, 100, 1, 2, false },
		{ 'A', 3, BOOK_BID, 99, 1, 3, false },
		{ 'A', 4, BOOK_BID, 100, 1, 4, false },   /* the 4th order */
		{ 'A', 5, BOOK_ASK, 101, 1, 5, false },
		{ 'A', 6, BOOK_ASK, 102, 1, 6, false },
		{ 'A', 7, BOOK_ASK, 103, 1, 7, false },   /* the 3rd ask level */
	};
	const struct op later = { 'D', 2, 0, 0, 0, 0, false };
	struct minst *mi;
	const struct book_mbo *m;
	struct book_level lv[4];
	unsigned int i;

	(void)state;
	setup_feed(&c);
	mi = &T.ins[0];
	channel_reset(&T);
	for (i = 0; i < 3; i++)
		event(&T, mi, &a[i], 1);
	m = book_feed_mbo(T.f, mi->sid);
	check_all(mi);
	event(&T, mi, &a[3], 1);
	assert_int_equal(ctr()->mbo_order_overflows, 1);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_OVERFLOW);
	assert_int_equal(book_mbo_levels(m, BOOK_BID, lv, 4), -ESTALE);
	assert_int_equal(ctr()->mbo_not_applied, 1);
	assert_int_equal(ctr()->mbo_stale_books, 1);
	event(&T, mi, &later, 1);         /* not applied: the book overflowed */
	assert_int_equal(ctr()->mbo_not_applied, 2);
	/* a snapshot as of now (1, 3, 4: it fits) brings the book back */
	snapshot53(&T, mi, T.seq - 1, 8, 0);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_VALID);
	check_book(T.f, mi);
	/* levels: a third ask level overflows the side */
	for (i = 4; i < 7; i++)
		event(&T, &T.ins[1], &a[i], 1);
	assert_int_equal(ctr()->mbo_level_overflows, 1);
	assert_int_equal(book_mbo_state(book_feed_mbo(T.f, T.ins[1].sid)), BOOK_MBO_OVERFLOW);
	/* books: a third instrument gets none */
	event(&T, &T.ins[2], &a[0], 1);
	assert_int_equal(ctr()->mbo_books_refused, 1);
	assert_null(book_feed_mbo(T.f, T.ins[2].sid));
	assert_int_equal(errno, ENOENT);
	/* 4 (orders), later (overflowed), 7 (levels), the refused instrument's */
	assert_int_equal(ctr()->mbo_not_applied, 4);
	/* the price levels of all three are fine */
	check_mbp(T.f, &T.ins[2]);
}

/* The OrderID table starts at 32 entries and doubles in place as the book
 * grows (a rehash walked through the levels): every order is found after
 * each doubling and deletions that shift entries back work at every size;
 * a ChannelReset brings the table back to its first size; a snapshot big
 * enough to make it double while it loads is applied whole.  The ids are
 * CME-like (13 digits, a stride), so homes collide and probes wrap. */
static void
test_table_grows(void **state)
{
	struct book_feed_config c = {
		.default_depth = DEPTH, .implied_none = true, .mbo = true,
		.mbo_instruments = 2, .mbo_orders = MAX_ORDERS, .mbo_levels = MAX_ORDERS,
		.recovery_packets = 64,
	};
	const uint64_t base = UINT64_C(6512000000000);
	struct minst *mi;
	struct op op;
	uint64_t prio = 1;
	uint32_t snap_seq;
	unsigned int i;

	(void)state;
	setup_feed(&c);
	mi = &T.ins[0];
	channel_reset(&T);
	/* 56 adds, a cancel after every 7th: 48 live, past 16 and 32 */
	for (i = 0; i < 56; i++) {
		op = (struct op){ 'A', base + (uint64_t)i * 7919, (uint8_t)(i & 1),
				  (i & 1) ? 101 + i % 9 : 99 - i % 9, 1 + (int32_t)(i % 5), prio++,
				  i % 3 == 0 };
		event(&T, mi, &op, 1);
		if (i % 7 == 6) {
			op = (struct op){ 'D', base + (uint64_t)(i - 3) * 7919, 0, 0, 0, 0, false };
			event(&T, mi, &op, 1);
		}
		check_all(mi);
	}
	assert_int_equal(book_mbo_order_count(book_feed_mbo(T.f, mi->sid)), 48);
	/* 32 -> 64 -> 128, the size laid out for 64 orders: no further */
	assert_int_equal(ctr()->mbo_table_grows, 2);
	/* a reset: back to 32 entries, which doubles again past 16 orders */
	channel_reset(&T);
	for (i = 0; i < 20; i++) {
		op = (struct op){ 'A', base + (uint64_t)i * 4096, BOOK_BID, 90 + i % 4, 1, prio++,
				  false };
		event(&T, mi, &op, 1);
	}
	check_all(mi);
	assert_int_equal(ctr()->mbo_table_grows, 3);
	/* a lost packet: stale; a snapshot of 21 orders refills the book from
	 * 32 entries and doubles it on the way */
	T.drop_next = true;
	op = (struct op){ 'A', base + 20 * 4096, BOOK_ASK, 120, 2, prio++, false };
	event(&T, mi, &op, 1);
	op = (struct op){ 'D', base + 3 * 4096, 0, 0, 0, 0, false };
	event(&T, mi, &op, 1);
	assert_int_equal(book_mbo_state(book_feed_mbo(T.f, mi->sid)), BOOK_MBO_STALE);
	snap_seq = T.seq - 1;
	snapshot52(&T, mi, snap_seq);
	snapshot53(&T, mi, snap_seq, 8, 0);
	assert_int_equal(ctr()->mbo_snapshots, 1);
	assert_int_equal(ctr()->mbo_table_grows, 4);
	check_all(mi);
	op = (struct op){ 'M', base + 20 * 4096, BOOK_ASK, 119, 3, prio++, false };
	event(&T, mi, &op, 1);
	check_all(mi);
}

/* mbo_presize: the same orders as test_table_grows, on tables laid out at
 * their bound's size from the start and after a reset: never doubled. */
static void
test_table_presized(void **state)
{
	struct book_feed_config c = {
		.default_depth = DEPTH, .implied_none = true, .mbo = true,
		.mbo_instruments = 2, .mbo_orders = MAX_ORDERS, .mbo_levels = MAX_ORDERS,
		.recovery_packets = 64, .mbo_presize = true,
	};
	const uint64_t base = UINT64_C(6512000000000);
	struct minst *mi;
	struct op op;
	uint64_t prio = 1;
	unsigned int i, round;

	(void)state;
	setup_feed(&c);
	assert_true(book_feed_config(T.f)->mbo_presize);
	mi = &T.ins[0];
	for (round = 0; round < 2; round++) {
		channel_reset(&T);
		for (i = 0; i < 56; i++) {
			op = (struct op){ 'A', base + (uint64_t)i * 7919, (uint8_t)(i & 1),
					  (i & 1) ? 101 + i % 9 : 99 - i % 9, 1 + (int32_t)(i % 5),
					  prio++, i % 3 == 0 };
			event(&T, mi, &op, 1);
			if (i % 7 == 6) {
				op = (struct op){ 'D', base + (uint64_t)(i - 3) * 7919, 0, 0, 0, 0,
						  false };
				event(&T, mi, &op, 1);
			}
			check_all(mi);
		}
		assert_int_equal(book_mbo_order_count(book_feed_mbo(T.f, mi->sid)), 48);
		assert_int_equal(ctr()->mbo_table_grows, 0);
	}
}

/* Many levels a side (more than the level search scans at the top before it
 * searches): seeded adds at prices anywhere in a band, then price moves,
 * quantity changes and cancels at random; the book equals the model level by
 * level and order by order after every event, on both sides. */
static void
test_many_levels(void **state)
{
	struct book_feed_config c = {
		.default_depth = DEPTH, .implied_none = true, .mbo = true,
		.mbo_instruments = 1, .mbo_orders = MAX_ORDERS, .mbo_levels = MAX_ORDERS,
		.recovery_packets = 16,
	};
	const struct book_mbo *m;
	struct minst *mi;
	uint64_t rnd = 0x2545f4914f6cdd1dULL, prio = 1;
	unsigned int i, deepest[2] = { 0, 0 };

	(void)state;
	setup_feed(&c);
	mi = &T.ins[0];
	channel_reset(&T);
	for (i = 0; i < 400; i++) {
		struct op op = { 0 };
		const struct morder *o;
		unsigned int pick, k;

		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		pick = (unsigned int)(rnd >> 33);
		if (i < MAX_ORDERS - 8 && (i < 40 || pick % 3 == 0)) {
			/* bids in 60..99, asks in 101..140: up to 40 levels a side */
			op.kind = 'A';
			op.id = i + 1;
			op.side = (uint8_t)(pick & 1);
			op.px = op.side == BOOK_BID ? 60 + (pick >> 1) % 40 : 101 + (pick >> 1) % 40;
		} else {
			/* a live order at random: moved, resized or cancelled */
			for (k = 0; k < mi->n && !mi->o[(pick + k) % mi->n].live; k++)
				;
			if (k == mi->n)
				continue;
			o = &mi->o[(pick + k) % mi->n];
			op.id = o->id;
			op.side = o->side;
			op.kind = (pick >> 8) % 4 == 0 ? 'D' : 'M';
			op.px = (pick >> 10) % 2 == 0 ? o->px :
				o->side == BOOK_BID ? 60 + (pick >> 11) % 40 : 101 + (pick >> 11) % 40;
		}
		op.qty = 1 + (int32_t)((pick >> 20) % 9);
		op.prio = prio++;
		event(&T, mi, &op, 1);
		check_all(mi);
		m = book_feed_mbo(T.f, mi->sid);
		for (k = 0; k < 2; k++) {
			struct book_level lv[MAX_ORDERS];
			int n = book_mbo_levels(m, k, lv, MAX_ORDERS);

			assert_true(n >= 0);
			if ((unsigned int)n > deepest[k])
				deepest[k] = (unsigned int)n;
		}
	}
	/* both sides went well past the levels scanned at the top (8) */
	assert_true(deepest[BOOK_BID] >= 16);
	assert_true(deepest[BOOK_ASK] >= 16);
	assert_int_equal(ctr()->mbo_mismatches, 0);
}

/* A side at its capacity of levels, more than the level search scans at
 * the top: levels go and come at the best, at the worst and near the best
 * while the side is full or one short of full, and the book must equal the
 * model throughout.  The ask side of the only book lies at the end of the
 * feed's memory: a level move that writes past the side's capacity writes
 * past it (ASan; glibc's heap checks without it: a version that copied a
 * fixed 8 levels into too few spare levels past the capacity failed so). */
static void
full_side(unsigned int side)
{
	enum { FULL = 12 };
	struct book_feed_config c = {
		.default_depth = DEPTH, .implied_none = true, .mbo = true,
		.mbo_instruments = 1, .mbo_orders = MAX_ORDERS, .mbo_levels = FULL,
		.recovery_packets = 16,
	};
	const unsigned int other = side ^ 1u;
	const int64_t better = side == BOOK_BID ? 1 : -1;  /* a better price: + better */
	const int64_t other_px = side == BOOK_BID ? 200 : 5; /* the other side's one order */
	struct minst *mi;
	struct op op;
	uint64_t id = 1, prio = 1, other_id;
	unsigned int step;
	int64_t px;

	setup_feed(&c);
	mi = &T.ins[0];
	channel_reset(&T);
	other_id = id++;
	op = (struct op){ 'A', other_id, (uint8_t)other, other_px, 5, prio++, false };
	event(&T, mi, &op, 1);
	for (px = 20; px < 20 + FULL; px++) {
		op = (struct op){ 'A', id++, (uint8_t)side, px, 1 + (int32_t)(px % 3), prio++, false };
		event(&T, mi, &op, 1);
		check_all(mi);
	}
	for (step = 0; step < 24; step++) {
		struct book_level lv[MAX_ORDERS];
		const unsigned int n = model_levels(mi, (uint8_t)side, lv, MAX_ORDERS);
		const int64_t best = lv[0].price / PX(1), worst = lv[n - 1].price / PX(1);
		unsigned int i, k;

		if (n == FULL) {
			/* a level goes: the best (at the end of the side's
			 * array), the worst (the whole side moves), the third */
			px = step % 3 == 0 ? best : step % 3 == 1 ? worst : lv[2].price / PX(1);
			for (i = 0; !(mi->o[i].live && mi->o[i].side == side && mi->o[i].px == px); i++)
				;
			op = (struct op){ 'D', mi->o[i].id, (uint8_t)side, px, 0, 0, step % 4 == 0 };
		} else {
			/* one comes: better than the best (at the end of the
			 * side's array), worse than the worst, or in the best gap */
			assert_int_equal(n, FULL - 1);
			px = step % 3 == 0 ? best + better : worst - better;
			if (step % 3 == 2) {
				for (px = best - better, k = 1; k < n && lv[k].price == PX(px);
						k++, px -= better)
					;
				if (k == n)
					px = best + better;
			}
			op = (struct op){ 'A', id++, (uint8_t)side, px, 1 + (int32_t)(step % 4), prio++,
					  false };
		}
		event(&T, mi, &op, 1);
		check_all(mi);
		/* the other side changes: compared too */
		op = (struct op){ 'M', other_id, (uint8_t)other, other_px, 1 + (int32_t)(step % 5),
				  model_find(mi, other_id)->prio, false };
		event(&T, mi, &op, 1);
		check_all(mi);
		assert_int_equal(book_mbo_state(book_feed_mbo(T.f, mi->sid)), BOOK_MBO_VALID);
	}
	/* one level more than the capacity overflows the side */
	op = (struct op){ 'A', id++, (uint8_t)side, 100 * better + 50, 1, prio++, false };
	event(&T, mi, &op, 1);
	assert_int_equal(ctr()->mbo_level_overflows, 1);
	assert_int_equal(ctr()->mbo_mismatches, 0);
}

static void
test_full_bid_side(void **state)
{
	(void)state;
	full_side(BOOK_BID);
}

static void
test_full_ask_side(void **state)
{
	(void)state;
	full_side(BOOK_ASK);
}

/* A mid-stream join (BOOK_JOIN_TRUST): the book is partial, changes of
 * orders it never saw are inserted, nothing is compared, no queue position. */
static void
test_partial_join(void **state)
{
	struct book_mbo_queue q;
	const struct book_mbo *m;
	struct book_order o;
	struct tp p;

	(void)state;
	setup_feed(NULL);
	tp_packet(&p, 500, 0);
	tp_msg(&p, 47, V9);
	tp_set(&p, "MatchEventIndicator", 0x80);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);   /* a change of an order resting since before the join */
	tp_set(&p, "OrderID", 9);
	tp_set(&p, "MDOrderPriority", 4);
	tp_set(&p, "MDEntryPx", PX(50));
	tp_set(&p, "MDDisplayQty", 3);
	tp_set(&p, "SecurityID", 77);
	tp_set(&p, "MDUpdateAction", 1);
	tp_set(&p, "MDEntryType", '0');
	tp_entry(&p);   /* a delete of another */
	tp_set(&p, "OrderID", 10);
	tp_set(&p, "MDEntryPx", PX(50));
	tp_set(&p, "SecurityID", 77);
	tp_set(&p, "MDUpdateAction", 2);
	tp_set(&p, "MDEntryType", '0');
	tp_entry(&p);   /* a null price on a New: bad */
	tp_set(&p, "OrderID", 11);
	tp_set(&p, "MDDisplayQty", 3);
	tp_set(&p, "SecurityID", 77);
	tp_set(&p, "MDUpdateAction", 0);
	tp_set(&p, "MDEntryType", '0');
	deliver(&T, &p, MDP3_STREAM_INCREMENTAL);
	m = book_feed_mbo(T.f, 77);
	assert_non_null(m);
	assert_int_equal(book_mbo_state(m), BOOK_MBO_PARTIAL);
	assert_int_equal(ctr()->mbo_unknown_orders, 2);
	assert_int_equal(ctr()->mbo_bad_entries, 1);
	assert_int_equal(book_mbo_order(m, 9, &o), 0);
	assert_int_equal(o.qty, 3);
	assert_int_equal(book_mbo_queue_by_order(m, BOOK_BID, PX(50), 9, &q), -ESTALE);
	assert_int_equal(ctr()->mbo_checks, 0);
	assert_null(book_feed_mbo(T.f, 78));
	assert_string_equal(book_mbo_state_name(BOOK_MBO_OVERFLOW), "overflow");
	assert_string_equal(book_mbo_state_name((enum book_mbo_state)9), "?");
}

/* ---- A, B, both -------------------------------------------------------------- */

/* Every MBO book of a and b, order by order, and the oracle's counters. */
static void
assert_same_books(struct book_feed *a, struct book_feed *b)
{
	const struct book_feed_counters *ca = book_feed_counters(a), *cb = book_feed_counters(b);
	unsigned int i, side, k;

	for (i = 0; i < 3; i++) {
		const struct book_mbo *ma = book_feed_mbo(a, 101 + (int32_t)i);
		const struct book_mbo *mb = book_feed_mbo(b, 101 + (int32_t)i);
		struct book_level la[MAX_ORDERS], lb[MAX_ORDERS];
		struct book_order oa[MAX_ORDERS], ob[MAX_ORDERS];
		int na, nb, j;

		assert_true((ma == NULL) == (mb == NULL));
		if (ma == NULL)
			continue;
		assert_int_equal(book_mbo_state(ma), book_mbo_state(mb));
		for (side = 0; side < 2; side++) {
			na = book_mbo_levels(ma, side, la, MAX_ORDERS);
			nb = book_mbo_levels(mb, side, lb, MAX_ORDERS);
			assert_int_equal(na, nb);
			for (j = 0; j < na; j++) {
				assert_memory_equal(&la[j], &lb[j], sizeof(la[j]));
				assert_int_equal(book_mbo_level_orders(ma, side, la[j].price, oa,
							MAX_ORDERS), la[j].orders);
				assert_int_equal(book_mbo_level_orders(mb, side, lb[j].price, ob,
							MAX_ORDERS), lb[j].orders);
				for (k = 0; k < (unsigned int)la[j].orders; k++) {
					assert_int_equal(oa[k].order_id, ob[k].order_id);
					assert_int_equal(oa[k].priority, ob[k].priority);
					assert_int_equal(oa[k].qty, ob[k].qty);
				}
			}
		}
	}
	assert_int_equal(book_feed_hash(a), book_feed_hash(b));
	assert_int_equal(ca->mbo_checks, cb->mbo_checks);
	assert_int_equal(ca->mbo_mismatches, cb->mbo_mismatches);
	assert_int_equal(ca->mbo_new, cb->mbo_new);
	assert_int_equal(ca->mbo_changes, cb->mbo_changes);
	assert_int_equal(ca->mbo_deletes, cb->mbo_deletes);
}

/* The script's packets (snapshots included) through app/feed: feed A only,
 * feed B only, both (B first for odd packets, A a duplicate): identical books
 * after every packet, each checked by the oracle and equal to the model. */
static void
test_feeds_a_b_both(void **state)
{
	struct tw_feed_config c = {
		.book = {
			.default_depth = DEPTH, .implied_none = true, .mbo = true,
			.mbo_instruments = 4, .mbo_orders = 32, .mbo_levels = 16,
		},
	};
	struct tw_feed *path[3];
	unsigned int i, k;
	struct minst *mi;

	(void)state;
	/* record the packets: model and log only */
	setup_feed(NULL);
	book_feed_destroy(T.f);
	T.f = NULL;
	mi = &T.ins[0];
	for (i = 0; i < 5; i++)
		model_apply(mi, &script_open[i]);
	mi->rpt = 7;
	snapshot52(&T, mi, 0);
	snapshot53(&T, mi, 0, 2, 0);
	run_script(&T, mi, NULL);
	for (k = 0; k < 3; k++) {
		path[k] = tw_feed_create(&c);
		assert_non_null(path[k]);
	}
	for (i = 0; i < T.nlog; i++) {
		const uint8_t *d = T.log[i].buf;
		size_t len = T.len[i];
		enum mdp3_stream st = (enum mdp3_stream)T.stream[i];

		assert_true(tw_feed_packet(path[0], st, MDP3_FEED_A, d, len, i) >= 0);
		assert_true(tw_feed_packet(path[1], st, MDP3_FEED_B, d, len, i) >= 0);
		if (st != MDP3_STREAM_INCREMENTAL) {
			assert_true(tw_feed_packet(path[2], st, i % 2 ? MDP3_FEED_B : MDP3_FEED_A,
						d, len, i) >= 0);
		} else {
			assert_true(tw_feed_packet(path[2], st, i % 2 ? MDP3_FEED_B : MDP3_FEED_A,
						d, len, i) >= 0);
			assert_int_equal(tw_feed_packet(path[2], st, i % 2 ? MDP3_FEED_A :
						MDP3_FEED_B, d, len, i), MDP3_ARB_DUPLICATE);
		}
		assert_same_books(path[0]->book, path[1]->book);
		assert_same_books(path[0]->book, path[2]->book);
	}
	for (k = 0; k < 3; k++) {
		check_book(path[k]->book, mi);
		check_mbp(path[k]->book, mi);
		assert_int_equal(book_feed_counters(path[k]->book)->mbo_checks, 9);
		assert_int_equal(book_feed_counters(path[k]->book)->mbo_mismatches, 0);
		tw_feed_destroy(path[k]);
	}
}

/* ---- the v9.1 example capture -------------------------------------------------- */

struct count47 {
	uint64_t e47, e46;
};

static int
count_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct count47 *n = ctx;
	struct mdp3_group g;

	(void)pkt;
	if (msg->template_id == 47 && mdp3_msg_group(msg, 0, &g) == 0)
		n->e47 += g.count;
	if (msg->template_id == 46 && mdp3_msg_group(msg, 1, &g) == 0)
		n->e46 += g.count;
	return 0;
}

/*
 * The capture starts mid-stream on 9 channels (A and B each) without
 * snapshots, so no MBO book is ever valid: what is checked is that every
 * order entry is decoded and applied without refusal (no bad entry, no book
 * refused, no overflow, nothing unapplied: the arbiter fills each feed's
 * gaps from the other), that the entries counted equal an independent count
 * of template-47 entries and 46 NoOrderIDEntries over the unique packets,
 * that every entry ends in one outcome, that the books are partial, and that
 * the oracle compared nothing (it is undefined there) and found nothing.
 */
static void
test_capture_v91(void **state)
{
	/* ch361 (options) has more instruments with orders than the default 64 books */
	struct tw_feed_config c = {
		.book = { .mbo = true, .mbo_instruments = 256, .mbo_orders = 64, .mbo_levels = 64 },
	};
	struct tw_feed *path[1000] = { NULL };
	struct count47 want = { 0 };
	struct mdp3_handler h = { .on_message = count_message, .ctx = &want };
	struct mdp3_walker w;
	char path_name[1024];
	struct tw_pcap *pcap;
	struct tw_pcap_frame fr;
	struct tw_pcap_l4 l4;
	uint64_t seen[64];
	unsigned int nseen = 0, ch, i, frames = 0, partial = 0;
	uint64_t got47 = 0, got46 = 0, applied = 0, checks = 0, mism = 0, refused = 0;
	int rc;

	(void)state;
	snprintf(path_name, sizeof(path_name), "%s/%s", cme_data,
			"pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.9/Cme.Mdp3.Sbe.v9.1.Example.pcap");
	pcap = tw_pcap_open(path_name);
	assert_non_null(pcap);
	mdp3_walker_init(&w, NULL, &h);
	while ((rc = tw_pcap_next(pcap, &fr)) == 1) {
		uint32_t seq;
		uint64_t key;
		bool dup = false;

		/* one frame of the 100 is not MDP (224.0.0.13, PIM) */
		if (tw_pcap_parse_frame(fr.data, fr.caplen, fr.linktype, &l4, NULL) != 0 ||
				l4.protocol != 17 || l4.dst_port < 14000 || l4.dst_port >= 16000)
			continue;
		frames++;
		ch = l4.dst_port % 1000;
		seq = (uint32_t)l4.payload[0] | (uint32_t)l4.payload[1] << 8 |
			(uint32_t)l4.payload[2] << 16 | (uint32_t)l4.payload[3] << 24;
		key = (uint64_t)ch << 32 | seq;
		for (i = 0; i < nseen; i++)
			dup |= seen[i] == key;
		if (!dup) {
			assert_true(nseen < 64);
			seen[nseen++] = key;
			assert_int_equal(mdp3_walk_packet(&w, l4.payload, l4.payload_length), 0);
		}
		if (path[ch] == NULL)
			assert_non_null(path[ch] = tw_feed_create(&c));
		assert_true(tw_feed_packet(path[ch], MDP3_STREAM_INCREMENTAL,
					l4.dst_port / 1000 == 14 ? MDP3_FEED_A : MDP3_FEED_B,
					l4.payload, l4.payload_length, fr.time_ns) >= 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(frames, 99);
	for (ch = 0; ch < 1000; ch++) {
		const struct book_feed_counters *k;

		if (path[ch] == NULL)
			continue;
		assert_int_equal(tw_feed_finish(path[ch], UINT64_MAX / 2), 0);
		k = book_feed_counters(path[ch]->book);
		assert_int_equal(k->lost_packets, 0);
		got47 += k->mbo_entries_47;
		got46 += k->mbo_entries_46;
		applied += k->mbo_new + k->mbo_changes + k->mbo_deletes + k->mbo_unknown_orders;
		refused += k->mbo_bad_entries + k->mbo_not_applied + k->mbo_books_refused +
			k->mbo_order_overflows + k->mbo_level_overflows + k->mbo_stale_marked;
		checks += k->mbo_checks;
		mism += k->mbo_mismatches;
		for (i = 0; i < book_feed_capacity(path[ch]->book); i++) {
			const struct book_instrument *in = book_feed_instrument(path[ch]->book, i);
			const struct book_mbo *m;

			if (in == NULL || (m = book_feed_mbo(path[ch]->book, in->security_id)) == NULL)
				continue;
			assert_int_equal(book_mbo_state(m), BOOK_MBO_PARTIAL);
			partial++;
		}
		tw_feed_destroy(path[ch]);
	}
	tw_pcap_close(pcap);
	print_message("v9.1: %u frames, %u unique packets, %llu 47 entries, %llu 46 order "
			"entries, %u partial MBO books, %llu oracle checks\n", frames, nseen,
			(unsigned long long)want.e47, (unsigned long long)want.e46, partial,
			(unsigned long long)checks);
	assert_true(want.e47 > 0 && want.e46 > 0);
	assert_int_equal(got47, want.e47);
	assert_int_equal(got46, want.e46);
	assert_int_equal(applied, want.e47 + want.e46);
	assert_int_equal(refused, 0);
	assert_true(partial > 0);
	assert_int_equal(checks, 0);
	assert_int_equal(mism, 0);
}

/* Configuration: bounds over the maxima are refused; MBO off keeps 47 ignored. */
static void
test_config(void **state)
{
	struct book_feed_config c = { .mbo = true, .mbo_orders = BOOK_MAX_MBO_ORDERS + 1 };
	struct book_feed_config off = { 0 };

	(void)state;
	assert_int_equal(book_feed_memsize(&c), 0);
	assert_int_equal(errno, EINVAL);
	c.mbo_orders = 0;
	assert_true(book_feed_memsize(&c) > book_feed_memsize(&off));
	setup_feed(&off);
	{
		struct tp p;

		tp_packet(&p, 1, 0);
		tp_msg(&p, 47, V9);
		tp_set(&p, "MatchEventIndicator", 0x80);
		deliver(&T, &p, MDP3_STREAM_INCREMENTAL);
	}
	assert_int_equal(ctr()->messages_ignored, 1);
	assert_null(book_feed_mbo(T.f, 1));
	assert_null(book_feed_mbo(NULL, 1));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(book_mbo_state(NULL), BOOK_MBO_STALE);
	/* vector widths: what the CPU has, at most the one asked for */
	c = (struct book_feed_config){ .mbo = true, .max_simd_bits = 64 };
	assert_int_equal(book_feed_memsize(&c), 0);
	assert_int_equal(errno, EINVAL);
#if defined(__x86_64__)
	assert_int_equal(book_feed_config(T.f)->max_simd_bits,
			 simd_bits == 128 || !__builtin_cpu_supports("avx2") ? 128 : 256);
#endif
}

/* A difference at the 10th level of a full-depth side, on either side:
 * the comparisons that load more than a level at a time (the AVX2 pass
 * reads 8 bytes past the level, still inside the instrument) see it, and
 * nothing they mask out (the MBO level's links, what follows the level)
 * makes a difference where there is none. */
static void
test_oracle_tenth_level(void **state)
{
	const struct book_feed_config c = feed_config(BOOK_MAX_DEPTH);
	struct book_mbo_diff d[4];
	struct minst *mi;
	unsigned int side, k;
	uint64_t id = 1;

	(void)state;
	for (side = 0; side < 2; side++) {
		struct book_level lv[BOOK_MAX_DEPTH];
		struct mbp_entry e;
		const int64_t px = side == BOOK_BID ? 90 : 110;

		setup_feed(&c);
		mi = &T.ins[0];
		channel_reset(&T);
		/* 12 levels of two orders on this side, one on the other */
		for (k = 0; k < 12; k++) {
			const int64_t at = side == BOOK_BID ? px - (int64_t)k : px + (int64_t)k;
			const struct op two[2] = {
				{ 'A', id, (uint8_t)side, at, 1 + (int32_t)k, id, false },
				{ 'A', id + 1, (uint8_t)side, at, 2, id + 1, k % 2 == 0 },
			};

			id += 2;
			event(&T, mi, two, 2);
		}
		{
			const struct op other = { 'A', id, (uint8_t)(side ^ 1u),
						  side == BOOK_BID ? 120 : 80, 3, id, false };

			id++;
			event(&T, mi, &other, 1);
		}
		check_all(mi);
		assert_int_equal(model_levels(mi, (uint8_t)side, lv, BOOK_MAX_DEPTH),
				 BOOK_MAX_DEPTH);
		/* the price-level book's 10th level alone says one order more */
		e = (struct mbp_entry){ BOOK_ACTION_CHANGE, (uint8_t)side, BOOK_MAX_DEPTH,
					lv[BOOK_MAX_DEPTH - 1] };
		e.v.orders++;
		mbp_event(&T, mi, &e, 1);
		assert_int_equal(ctr()->mbo_mismatches, 1);
		assert_int_equal(ctr()->mbo_level_diffs, 1);
		assert_int_equal(book_feed_mbo_diffs(T.f, d, 4), 1);
		assert_int_equal(d[0].side, side);
		assert_int_equal(d[0].level, BOOK_MAX_DEPTH);
		assert_int_equal(d[0].mbo.orders, 2);
		assert_int_equal(d[0].mbp.orders, 3);
		/* put right: no difference, then its price alone wrong */
		e.v.orders--;
		mbp_event(&T, mi, &e, 1);
		assert_int_equal(ctr()->mbo_mismatches, 1);
		e = (struct mbp_entry){ BOOK_ACTION_OVERLAY, (uint8_t)side, BOOK_MAX_DEPTH,
					lv[BOOK_MAX_DEPTH - 1] };
		e.v.price += side == BOOK_BID ? -PX(1) : PX(1);
		mbp_event(&T, mi, &e, 1);
		assert_int_equal(ctr()->mbo_mismatches, 2);
		assert_int_equal(book_feed_mbo_diffs(T.f, d, 4), 2);
		assert_int_equal(d[1].level, BOOK_MAX_DEPTH);
		assert_int_equal(d[1].mbo.price, lv[BOOK_MAX_DEPTH - 1].price);
	}
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_snapshot_then_script, teardown),
		cmocka_unit_test_teardown(test_queue_join, teardown),
		cmocka_unit_test_teardown(test_oracle_reports_difference, teardown),
		cmocka_unit_test_teardown(test_oracle_both_sides, teardown),
		cmocka_unit_test_teardown(test_oracle_levels_out_of_order, teardown),
		cmocka_unit_test_teardown(test_oracle_tenth_level, teardown),
		cmocka_unit_test_teardown(test_event_split_over_packets, teardown),
		cmocka_unit_test_teardown(test_gap_and_recovery, teardown),
		cmocka_unit_test_teardown(test_channel_reset_and_empty_book, teardown),
		cmocka_unit_test_teardown(test_bounds, teardown),
		cmocka_unit_test_teardown(test_table_grows, teardown),
		cmocka_unit_test_teardown(test_table_presized, teardown),
		cmocka_unit_test_teardown(test_many_levels, teardown),
		cmocka_unit_test_teardown(test_full_bid_side, teardown),
		cmocka_unit_test_teardown(test_full_ask_side, teardown),
		cmocka_unit_test_teardown(test_partial_join, teardown),
		cmocka_unit_test_teardown(test_feeds_a_b_both, teardown),
		cmocka_unit_test_teardown(test_config, teardown),
		cmocka_unit_test(test_capture_v91),
	};
	struct stat st;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CME_DATA_DIR [test filter]\n", argv[0]);
		return 2;
	}
	cme_data = argv[1];
	if (argc > 2)
		cmocka_set_test_filter(argv[2]);
	if (stat(cme_data, &st) != 0 || !S_ISDIR(st.st_mode))
		cmocka_set_skip_filter("test_capture_v91");
	rc = cmocka_run_group_tests_name("max_simd_bits 0 (the CPU's widest)", tests, NULL, NULL);
	simd_bits = 128;
	return rc | cmocka_run_group_tests_name("max_simd_bits 128", tests, NULL, NULL);
}
