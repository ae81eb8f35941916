/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The decode group without DPDK (app/tickwire/tw_chain.h): the synthetic
 * channel-310 A/B capture replayed through arbiter -> decoder -> book ->
 * signal, one datagram at a time, each in a heap copy that the chain's
 * release function poisons and frees. Checks:
 *  - the release comes after the decoder and the book are done with the
 *    bytes (the books equal a run whose release keeps the bytes; under
 *    ASan a late read is a use-after-free);
 *  - every datagram is released exactly once;
 *  - one arbiter and one set of books per channel: a chain of channels
 *    310 and 340 puts everything in 310, 340 stays empty, an unknown
 *    channel is counted and released;
 *  - the book settings reach lib/book: join "recover" on a stream without
 *    snapshots leaves every book stale;
 *  - telemetry (tw_chain_query()) from another thread while this one steps
 *    the decode group: the book's levels as the chain prints them; unknown
 *    instrument not found; a query nobody answers times out, and its late
 *    answer does not leak into the next query;
 *  - the kill switch refuses orders already queued for order-out;
 *  - stale means stop: a loss on both feeds, then silence, an alarm, the
 *    kill switch, packets again: no order written on a stale book (the books
 *    as they are at each write), working orders of halted instruments
 *    cancelled (cancel frames), resumes, one alarm per halt, every reply
 *    delivered;
 *  - risk without a session: max_open_orders refuses, the kill switch's
 *    cancel frames close the open orders;
 *  - the configured overflow policy of the order-out hand-off (drop, fail).
 *
 *   test_chain_units A.pcap B.pcap
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "tw_chain.h"
#include "tw_pcap.h"
#include "tw_check.h"
#include "tw_config.h"


/* Frames written (orders and cancels), and the stale-means-stop oracle. */
struct wire {
	bool cancel;
	int32_t security_id;
	uint8_t why;
	bool book_stale;          /* an order: its book was stale when written */
};

#define WIRE_MAX 4096

struct run {
	bool poison;
	uint64_t released;
	uint64_t orders;
	struct tw_chain *c;       /* set: check each order's book as it is written */
	uint32_t n_wire;
	struct wire wire[WIRE_MAX];
	uint32_t alarms;
};

static void
release(void *ctx, void *cookie)
{
	struct run *r = ctx;
	uint32_t *len = cookie;

	if (r->poison)
		memset(len, 0xa5, sizeof(*len) + *len);
	free(cookie);
	r->released++;
}

static bool book_is_stale(struct tw_chain *c, int32_t security_id);

static void
sink(void *ctx, const uint8_t *frame, uint32_t length)
{
	struct run *r = ctx;
	const uint8_t *p = frame + 14 + 20 + 8;

	r->orders++;
	if (length < 14 + 20 + 8 + 40 || r->n_wire == WIRE_MAX)
		return;
	r->wire[r->n_wire] = (struct wire){
		.cancel = memcmp(p, "TWX1", 4) == 0,
		.security_id = (int32_t)((uint32_t)p[8] | (uint32_t)p[9] << 8 |
					 (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24),
		.why = p[13],
	};
	if (r->c != NULL && !r->wire[r->n_wire].cancel)
		r->wire[r->n_wire].book_stale = book_is_stale(r->c, r->wire[r->n_wire].security_id);
	r->n_wire++;
}

/* The final counters of a chain, as tw_chain_print() writes them. */
static char *
print(struct tw_chain *c)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	tw_chain_print(c, f, 0);
	fclose(f);
	return text;
}

static uint64_t
value(const char *text, const char *key)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\n%s ", key);
	p = strstr(text, pat);
	return p == NULL ? UINT64_MAX : strtoull(p + strlen(pat), NULL, 0);
}

static int
deliver(struct tw_chain *c, struct tw_pcap *pcap, uint8_t side, uint16_t channel,
	const struct tw_pcap_frame *fr)
{
	struct tw_pcap_l4 l4;
	struct tw_rx rx;
	uint32_t *copy;

	(void)pcap;
	if (tw_pcap_parse_frame(fr->data, fr->caplen, fr->linktype, &l4, NULL) != 0 ||
	    l4.protocol != 17)
		return 0;
	copy = malloc(sizeof(*copy) + l4.payload_length);
	if (copy == NULL)
		return -1;
	*copy = l4.payload_length;
	memcpy(copy + 1, l4.payload, l4.payload_length);
	memset(&rx, 0, sizeof(rx));
	rx.cookie = copy;
	rx.payload = (const uint8_t *)(copy + 1);
	rx.length = l4.payload_length;
	rx.side = side;
	rx.stream = 0;
	rx.channel = channel;
	rx.t0 = fr->time_ns;
	rx.rx_ns = fr->time_ns;
	return tw_chain_rx_direct(c, &rx) < 0 ? -1 : 1;
}

/* Call @p fn for each frame of A (side 0) and B (side 1), merged by
 * capture time. */
static void
merged(const char *a, const char *b,
       void (*fn)(void *ctx, uint8_t side, const struct tw_pcap_frame *fr), void *ctx)
{
	struct tw_pcap *p[2] = {tw_pcap_open(a), tw_pcap_open(b)};
	struct tw_pcap_frame fr[2];
	bool has[2];

	CHECK(p[0] != NULL && p[1] != NULL);
	if (p[0] == NULL || p[1] == NULL)
		exit(1);
	for (int i = 0; i < 2; i++)
		has[i] = tw_pcap_next(p[i], &fr[i]) == 1;
	while (has[0] || has[1]) {
		int i = !has[0] || (has[1] && fr[1].time_ns < fr[0].time_ns);

		fn(ctx, (uint8_t)i, &fr[i]);
		has[i] = tw_pcap_next(p[i], &fr[i]) == 1;
	}
	tw_pcap_close(p[0]);
	tw_pcap_close(p[1]);
}

struct plain {
	struct tw_chain *c;
	uint16_t channel;
	uint64_t skip;
	uint64_t n;
};

static void
plain_frame(void *ctx, uint8_t side, const struct tw_pcap_frame *fr)
{
	struct plain *pl = ctx;

	if (fr->number > pl->skip && deliver(pl->c, NULL, side, pl->channel, fr) > 0)
		pl->n++;
}

/* Replay A and B merged by capture time; @return datagrams delivered. */
static uint64_t
replay(struct tw_chain *c, const char *a, const char *b, uint16_t channel, uint64_t skip)
{
	struct plain pl = {.c = c, .channel = channel, .skip = skip};

	merged(a, b, plain_frame, &pl);
	tw_chain_tick(c, UINT64_MAX / 2, true);
	act_group_drain(tw_chain_order_group(c));
	return pl.n;
}

static struct tw_chain *
chain_with(struct run *r, uint32_t n_channels, uint8_t join,
	   void (*tweak)(struct tw_chain_opts *o, struct run *r))
{
	struct tw_chain_opts o;
	struct tw_chain *c;

	memset(&o, 0, sizeof(o));
	o.decode_mailbox.name = "decode";
	o.decode_mailbox.cpu = -1;
	o.order_mailbox.name = "order_out";
	o.order_mailbox.cpu = -1;
	o.order_mailbox.overflow = ACT_OVERFLOW_FAIL;
	o.gap_wait_packets = 64;
	o.n_channels = n_channels;
	o.channels[0] = 310;
	o.channels[1] = 340;
	o.join = join;
	o.strategy_enabled = true;
	o.strategy.n_instruments = 2;
	o.strategy.instruments[0] = 100000;
	o.strategy.instruments[1] = 101000;
	o.strategy.ratio_numerator = 3;
	o.strategy.ratio_denominator = 2;
	o.strategy.order_qty = 1;
	o.strategy.max_orders = 100;
	o.order_sink = sink;
	o.order_sink_ctx = r;
	o.release = release;
	o.release_ctx = r;
	if (tweak != NULL)
		tweak(&o, r);
	c = tw_chain_create(&o);
	CHECK(c != NULL);
	if (c == NULL)
		exit(1);
	act_group_bind(tw_chain_decode_group(c));
	act_group_bind(tw_chain_order_group(c));
	return c;
}

static struct tw_chain *
chain(struct run *r, uint32_t n_channels, uint8_t join)
{
	return chain_with(r, n_channels, join, NULL);
}

struct asker {
	struct tw_chain *c;
	int32_t sid;
	uint64_t timeout_ns;
	struct tw_query_reply r;
	int rc;
	atomic_bool done;
};

static void *
ask(void *arg)
{
	struct asker *a = arg;

	a->rc = tw_chain_query(a->c, a->sid, &a->r, a->timeout_ns);
	atomic_store(&a->done, true);
	return NULL;
}

/* tw_chain_query() on another thread; this one steps the decode group. */
static int
query(struct tw_chain *c, int32_t sid, struct tw_query_reply *r)
{
	struct asker a = {.c = c, .sid = sid, .timeout_ns = UINT64_C(5000000000)};
	pthread_t t;

	if (pthread_create(&t, NULL, ask, &a) != 0)
		return -1;
	while (!atomic_load(&a.done)) {
		act_group_step(tw_chain_decode_group(c), 0);
		tw_chain_serve_queries(c);
	}
	pthread_join(t, NULL);
	*r = a.r;
	return a.rc;
}

static void
check_queries(struct tw_chain *c, const char *printed)
{
	struct tw_query_reply r;
	struct asker late = {.c = c, .sid = 100000, .timeout_ns = UINT64_C(20000000)};
	pthread_t t;
	char key[64];

	char *books = NULL, *at;
	size_t size = 0;
	FILE *f = open_memstream(&books, &size);
	int64_t bq = 0, bp = 0, aq = 0, ap = 0;

	(void)printed;
	tw_chain_print(c, f, 1000000);
	fclose(f);
	CHECK(query(c, 100000, &r) == 0);
	CHECK(r.found == 1 && r.state == 0 && r.depth > 0);
	/* level 1 as tw_chain_print() shows the book: "  1 QTY @ PRICE | QTY @ PRICE" */
	snprintf(key, sizeof(key), "\nbook 100000 ");
	at = strstr(books, key);
	CHECK(at != NULL);
	if (at != NULL)
		at = strstr(at + 1, "\n  1 ");
	CHECK(at != NULL && sscanf(at, "\n  1 %" SCNd64 " @ %" SCNd64 " | %" SCNd64 " @ %" SCNd64,
				   &bq, &bp, &aq, &ap) == 4);
	CHECK(r.bid_qty[0] == bq && r.bid_price[0] == bp && r.ask_qty[0] == aq &&
	      r.ask_price[0] == ap);
	free(books);
	CHECK(query(c, 999999, &r) == 0 && r.found == 0);
	/* nobody steps the group: the query times out ... */
	CHECK(pthread_create(&t, NULL, ask, &late) == 0);
	pthread_join(t, NULL);
	CHECK(late.rc == -ETIMEDOUT);
	/* ... withdrawn: nothing left to serve; the next query gets its own */
	CHECK(tw_chain_serve_queries(c) == 0);
	CHECK(query(c, 999998, &r) == 0 && r.found == 0);
	CHECK(query(c, 100000, &r) == 0 && r.found == 1);
}

/*
 * The kill switch goes ahead of orders already queued for order-out:
 * engaged while three orders wait in its mailbox, all three are refused
 * (TW_ORDER_KILL_SWITCH) and none is written; released, the next one is.
 */
static void
check_kill_priority(struct run *r)
{
	struct tw_chain *c = chain(r, 0, 0);
	struct tw_chain_stats st;
	const uint64_t written = r->orders;

	for (uint32_t i = 1; i <= 3; i++) {
		const struct tw_order o = {
			.client_order_id = i, .security_id = 100000, .side = TW_ORDER_BUY,
			.qty = 1, .price = 1000000000,
		};

		CHECK(act_send_copy(tw_chain_order_out(c), TW_MSG_ORDER, &o, sizeof(o)) == 0);
	}
	CHECK(tw_chain_kill(c, true) == 0);
	act_group_drain(tw_chain_order_group(c));
	tw_chain_stats(c, &st);
	CHECK(r->orders == written);
	CHECK(st.orders_in == 3 && st.orders_refused == 3 &&
	      st.refused[TW_ORDER_KILL_SWITCH] == 3 && st.kill_engaged == 1);
	CHECK(tw_chain_kill(c, false) == 0);
	act_group_drain(tw_chain_order_group(c));
	{
		const struct tw_order o = {
			.client_order_id = 4, .security_id = 100000, .side = TW_ORDER_BUY,
			.qty = 1, .price = 1000000000,
		};

		CHECK(act_send_copy(tw_chain_order_out(c), TW_MSG_ORDER, &o, sizeof(o)) == 0);
	}
	act_group_drain(tw_chain_order_group(c));
	CHECK(r->orders == written + 1);
	tw_chain_destroy(c);
}

static struct tw_order
order_n(uint32_t id)
{
	return (struct tw_order){
		.client_order_id = id, .security_id = 100000, .side = TW_ORDER_BUY, .qty = 1,
		.price = 1000000000, .mid = 1000000000, .tick = 1000000, .trigger_seq = id,
	};
}

/* -- stale means stop ---------------------------------------------------------- */

static bool
book_is_stale(struct tw_chain *c, int32_t security_id)
{
	char *text = NULL, pat[64];
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	const char *line;
	bool stale;

	tw_chain_print(c, f, 100000);
	fclose(f);
	snprintf(pat, sizeof(pat), "\nbook %" PRId32 " ", security_id);
	line = strstr(text, pat);
	stale = line != NULL && strncmp(strstr(line, "state=") + 6, "stale", 5) == 0;
	free(text);
	return stale;
}

static void
on_alarm(void *ctx, int32_t security_id, uint32_t why, uint64_t stale_ns)
{
	(void)security_id;
	(void)why;
	CHECK(stale_ns > 100000000u);
	((struct run *)ctx)->alarms++;
}

static void
stale_opts(struct tw_chain_opts *o, struct run *r)
{
	o->cancel_on_stale = true;
	o->resume = true;
	o->kill_on_alarm = true;
	o->silence_ns = 50000000u;     /* 50 ms */
	o->max_stale_ns = UINT64_C(5000000000);  /* 5 s: longer than the capture after the loss */
	o->on_alarm = on_alarm;
	o->alarm_ctx = r;
	/* books the loss leaves valid too, so that some resume */
	o->strategy.n_instruments = 4;
	o->strategy.instruments[2] = 102000;
	o->strategy.instruments[3] = 103000;
	o->strategy.max_orders = 1000;
}

struct live {
	struct tw_chain *c;
	uint32_t from, to, drop_lo, drop_hi;
	uint64_t last;
};

static void
live_frame(void *ctx, uint8_t side, const struct tw_pcap_frame *fr)
{
	struct live *lv = ctx;
	struct tw_pcap_l4 l4;
	uint32_t seq;

	if (tw_pcap_parse_frame(fr->data, fr->caplen, fr->linktype, &l4, NULL) != 0 ||
	    l4.protocol != 17 || l4.payload_length < 4)
		return;
	seq = (uint32_t)l4.payload[0] | (uint32_t)l4.payload[1] << 8 |
	      (uint32_t)l4.payload[2] << 16 | (uint32_t)l4.payload[3] << 24;
	if (seq < lv->from || seq >= lv->to || (seq >= lv->drop_lo && seq < lv->drop_hi) ||
	    deliver(lv->c, NULL, side, 0, fr) <= 0)
		return;
	tw_chain_tick(lv->c, fr->time_ns, false);
	act_group_drain(tw_chain_order_group(lv->c));
	act_group_drain(tw_chain_decode_group(lv->c));  /* the replies */
	lv->last = fr->time_ns;
}

/*
 * The datagrams of A and B whose MsgSeqNum is in [from, to), except
 * [drop_lo, drop_hi) on both feeds, one at a time as the appliance runs
 * them: a tick on the capture's clock and both groups drained after each.
 * @return the capture time of the last one (0: none).
 */
static uint64_t
replay_live(struct tw_chain *c, const char *a, const char *b, uint32_t from, uint32_t to,
	    uint32_t drop_lo, uint32_t drop_hi)
{
	struct live lv = {.c = c, .from = from, .to = to, .drop_lo = drop_lo,
			  .drop_hi = drop_hi};

	merged(a, b, live_frame, &lv);
	return lv.last;
}

/* Orders written for @p sid in wire[from, to). */
static uint32_t
orders_of(const struct run *r, uint32_t from, uint32_t to, int32_t sid)
{
	uint32_t n = 0;

	for (uint32_t i = from; i < to; i++)
		n += !r->wire[i].cancel && (sid == 0 || r->wire[i].security_id == sid);
	return n;
}

/*
 * Stale means stop, through the chain as the appliance runs it: a loss on
 * both feeds mid-run (RptSeq gaps: books stale), then both feeds silent
 * past silence_ns, halted past max_stale_ns (the alarm, and the kill
 * switch), then packets again. Checked: no order is written while its
 * book is stale (the books as they are at each write); the working orders
 * of every halted instrument are cancelled (cancel frames, why given),
 * orders after their cancel only once the instrument resumed; every halt
 * reaches the signal; the alarm fires once per halt; replies never fail.
 */
static void
check_stale_means_stop(const char *a, const char *b)
{
	static struct run r;
	struct tw_chain *c = chain_with(&r, 0, 0, stale_opts);
	struct tw_chain_stats st;
	struct tw_chain_channel_stats cs;
	uint32_t last_seq = 0, w1, w2;
	uint64_t t_end;
	char *text;

	r.c = c;
	{
		struct tw_pcap *p = tw_pcap_open(a);
		struct tw_pcap_frame fr;

		while (p != NULL && tw_pcap_next(p, &fr) == 1)
			last_seq++;
		tw_pcap_close(p);
	}
	CHECK(last_seq > 300);
	/* 1: packets lost on both feeds a third of the way in */
	t_end = replay_live(c, a, b, 0, last_seq * 2 / 3, last_seq / 3, last_seq / 3 + 2);
	tw_chain_stats(c, &st);
	text = print(c);
	CHECK(st.halts > 0 && st.halted > 0 && st.state_events >= st.halts);
	CHECK(value(text, "strategy.stale_events") >= st.halts);
	CHECK(value(text, "arb.lost_packets") == 2);
	CHECK(st.cancel_requests == st.halts);
	CHECK(st.cancels_on_stale > 0 && st.cancels_on_stale == st.cancels_sent);
	if (st.cancels_on_stale != st.cancels_sent)
		fprintf(stderr, "cancels_on_stale %" PRIu64 " cancels_sent %" PRIu64 "\n",
			st.cancels_on_stale, st.cancels_sent);
	free(text);
	w1 = r.n_wire;
	/* every cancel follows an order of its instrument; why: gap or loss */
	for (uint32_t i = 0; i < w1; i++)
		if (r.wire[i].cancel) {
			CHECK(orders_of(&r, 0, i, r.wire[i].security_id) > 0);
			if (r.wire[i].why != TW_STATE_GAP && r.wire[i].why != TW_STATE_LOSS &&
			    r.wire[i].why != TW_STATE_RESET) {
				fprintf(stderr, "cancel %u: why %u\n", i, r.wire[i].why);
				failures++;
			}
		}
	/* 2: both feeds silent, then halted past max_stale_ns: alarm, kill */
	tw_chain_tick(c, t_end + 60000000u, false);
	tw_chain_stats(c, &st);
	CHECK(tw_chain_channel_stats(c, &cs, 1) == 1 && cs.silent == 1 && cs.silences == 1);
	text = print(c);
	CHECK(st.silences == 1 && st.halted == value(text, "book.instruments"));
	free(text);
	tw_chain_tick(c, t_end + 80000000u, false);
	tw_chain_stats(c, &st);
	CHECK(st.alarms == 0);
	tw_chain_tick(c, t_end + UINT64_C(5300000000), false);
	act_group_drain(tw_chain_order_group(c));
	tw_chain_stats(c, &st);
	CHECK(st.alarms == st.halted && st.alarm_active == st.halted && r.alarms == st.alarms);
	CHECK(st.kill_engaged == 1 && st.kill_events == 1);
	tw_chain_tick(c, t_end + UINT64_C(5400000000), false);
	tw_chain_stats(c, &st);
	CHECK(st.alarms == r.alarms);     /* once per halt */
	CHECK(tw_chain_kill(c, false) == 0);
	act_group_drain(tw_chain_order_group(c));
	/* 3: packets again: the valid books resume, the stale ones wait */
	w2 = r.n_wire;
	replay_live(c, a, b, last_seq * 2 / 3, UINT32_MAX, 0, 0);
	tw_chain_tick(c, UINT64_MAX / 2, true);
	act_group_drain(tw_chain_order_group(c));
	act_group_drain(tw_chain_decode_group(c));
	tw_chain_stats(c, &st);
	text = print(c);
	CHECK(cs.silent == 1);
	tw_chain_channel_stats(c, &cs, 1);
	CHECK(cs.silent == 0);
	CHECK(st.resumes > 0 && st.halted == value(text, "book.stale_books"));
	CHECK(orders_of(&r, w2, r.n_wire, 0) > 0);
	CHECK(value(text, "strategy.replies_sent") + value(text, "strategy.replies_refused") ==
	      st.orders_in);
	CHECK(st.replies_failed == 0 && st.cancel_failed == 0 && st.halt_table_full == 0);
	/* order-out itself refuses what a strategy would send on a halted
	 * instrument (a book still stale), and an order decided before the
	 * halt of one that resumed (trigger at or before the cut) */
	{
		const uint64_t refused = st.refused[TW_ORDER_STALE_BOOK];
		const uint32_t n_wire = r.n_wire;
		int32_t halted_id = 0, resumed_id = 0;

		for (int32_t id = 100000; id <= 107000; id += 1000) {
			if (book_is_stale(c, id))
				halted_id = id;
			else
				resumed_id = id;
		}
		CHECK(halted_id != 0 && resumed_id != 0);
		for (int k = 0; k < 2; k++) {
			struct tw_order o = order_n(900000 + (uint32_t)k);

			o.security_id = k == 0 ? halted_id : resumed_id;
			o.trigger_seq = k == 0 ? UINT32_MAX : 1;
			CHECK(act_send_copy(tw_chain_order_out(c), TW_MSG_ORDER, &o, sizeof(o)) == 0);
		}
		act_group_drain(tw_chain_order_group(c));
		tw_chain_stats(c, &st);
		CHECK(st.refused[TW_ORDER_STALE_BOOK] == refused + 2 && r.n_wire == n_wire);
	}
	/* the oracle: no order written on a stale book, none after its
	 * instrument's cancel unless it resumed (its book valid again) */
	for (uint32_t i = 0; i < r.n_wire; i++)
		if (r.wire[i].book_stale) {
			fprintf(stderr, "order %u (instrument %" PRId32 ") written on a stale book\n",
				i, r.wire[i].security_id);
			failures++;
		}
	printf("stale means stop: %" PRIu64 " halts, %" PRIu64 " cancels, %" PRIu64
	       " resumes, %u alarms; %u frames written, none on a stale book\n", st.halts,
	       st.cancels_sent, st.resumes, r.alarms, r.n_wire);
	free(text);
	tw_chain_destroy(c);
}

/* -- risk on every order; the configured overflow policy ------------------------- */

static void
risk_opts(struct tw_chain_opts *o, struct run *r)
{
	(void)r;
	o->risk_enabled = true;
	o->risk.max_order_qty = 10;
	o->risk.max_position = 100;
	o->risk.max_open_orders = 3;
	o->risk.max_messages = 1000;
	o->risk.rate_window_ns = UINT64_C(1000000000);
	o->risk.price_band = 1;
	o->price_band_ticks = 100;
}

/*
 * Without an iLink session (orders as frames to the tx port) the same risk
 * and the same open-order table: max_open_orders 3 refuses the 4th and 5th;
 * the kill switch writes a cancel frame for each open order, which closes
 * it; released, an order goes out again.
 */
static void
check_risk_without_session(void)
{
	static struct run r;
	struct tw_chain *c = chain_with(&r, 0, 0, risk_opts);
	struct tw_chain_stats st;

	for (uint32_t i = 1; i <= 5; i++) {
		const struct tw_order o = order_n(i);

		CHECK(act_send_copy(tw_chain_order_out(c), TW_MSG_ORDER, &o, sizeof(o)) == 0);
	}
	act_group_drain(tw_chain_order_group(c));
	tw_chain_stats(c, &st);
	CHECK(r.n_wire == 3 && orders_of(&r, 0, 3, 100000) == 3);
	CHECK(st.orders_written == 3 && st.refused[TW_ORDER_MAX_OPEN_ORDERS] == 2);
	CHECK(tw_chain_kill(c, true) == 0);
	act_group_drain(tw_chain_order_group(c));
	tw_chain_stats(c, &st);
	CHECK(r.n_wire == 6 && st.cancels_sent == 3 && st.cancels_on_stale == 0);
	for (uint32_t i = 3; i < r.n_wire; i++)
		CHECK(r.wire[i].cancel && r.wire[i].why == 0 && r.wire[i].security_id == 100000);
	CHECK(tw_chain_kill(c, false) == 0);
	{
		const struct tw_order o = order_n(6);

		CHECK(act_send_copy(tw_chain_order_out(c), TW_MSG_ORDER, &o, sizeof(o)) == 0);
	}
	act_group_drain(tw_chain_order_group(c));
	CHECK(r.n_wire == 7 && !r.wire[6].cancel);
	tw_chain_destroy(c);
}

static struct tw_cfg_handoff g_handoff;

static void
overflow_opts(struct tw_chain_opts *o, struct run *r)
{
	(void)r;
	o->order_mailbox.capacity = 16;
	o->order_mailbox.overflow = tw_chain_overflow(&g_handoff, false);
}

/* handoff.signal_to_order_out.overflow as configured: 20 orders into 16
 * slots; "drop" takes them all and drops 4 (counted), "fail" refuses 4. */
static void
check_overflow_policy(void)
{
	for (int drop = 0; drop < 2; drop++) {
		static struct run r;
		struct tw_chain *c;
		struct act_mailbox_stats mb;
		uint32_t refused = 0;

		g_handoff.overflow = drop ? TW_CFG_OVERFLOW_DROP : TW_CFG_OVERFLOW_FAIL;
		CHECK(tw_chain_overflow(&g_handoff, true) == ACT_OVERFLOW_FAIL);
		c = chain_with(&r, 0, 0, overflow_opts);
		for (uint32_t i = 1; i <= 20; i++) {
			const struct tw_order o = order_n(i);

			refused += act_send_copy(tw_chain_order_out(c), TW_MSG_ORDER, &o,
						 sizeof(o)) == -EAGAIN;
		}
		act_group_mailbox_stats(tw_chain_order_group(c), &mb);
		CHECK(refused == (drop ? 0u : 4u));
		CHECK(mb.dropped == (drop ? 4u : 0u) && mb.full_fails == (drop ? 0u : 4u));
		act_group_drain(tw_chain_order_group(c));
		tw_chain_destroy(c);
	}
}

int
main(int argc, char **argv)
{
	static struct run keep = {.poison = false}, poison = {.poison = true},
			  recover = {.poison = true};
	struct tw_chain_channel_stats cs[TW_CHAIN_MAX_CHANNELS];
	struct tw_chain *c;
	char *t_keep, *t_poison, *t_recover;
	uint64_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s A.pcap B.pcap\n", argv[0]);
		return 2;
	}

	/* one feed for everything (no channels: the library-only replay) */
	c = chain(&keep, 0, 0);
	n = replay(c, argv[1], argv[2], 0, 0);
	t_keep = print(c);
	CHECK(keep.released == n);
	check_queries(c, t_keep);
	tw_chain_destroy(c);
	{
		static struct run kill = {.poison = false};

		check_kill_priority(&kill);
	}
	check_stale_means_stop(argv[1], argv[2]);
	check_risk_without_session();
	check_overflow_policy();

	/* channels 310 and 340, every datagram poisoned and freed on release */
	c = chain(&poison, 2, 0);
	CHECK(replay(c, argv[1], argv[2], 310, 0) == n);
	t_poison = print(c);
	CHECK(poison.released == n);
	CHECK(tw_chain_channel_stats(c, cs, TW_CHAIN_MAX_CHANNELS) == 2);
	CHECK(cs[0].channel == 310 && cs[0].rx_packets == n && cs[0].packets_applied > 0);
	CHECK(cs[1].channel == 340 && cs[1].rx_packets == 0 && cs[1].packets_applied == 0);
	CHECK(value(t_poison, "book.hash") == value(t_keep, "book.hash"));
	CHECK(value(t_poison, "book.packets_applied") == value(t_keep, "book.packets_applied"));
	CHECK(value(t_poison, "book.messages") == value(t_keep, "book.messages"));
	CHECK(value(t_poison, "chain.decoded") == value(t_poison, "book.packets_applied"));
	CHECK(value(t_poison, "chain.tops") == value(t_keep, "chain.tops"));
	CHECK(value(t_poison, "strategy.orders") == value(t_keep, "strategy.orders"));
	CHECK(poison.orders == keep.orders && keep.orders > 0);
	CHECK(value(t_poison, "channel.310.book.hash") == value(t_keep, "book.hash"));
	CHECK(value(t_poison, "channel.340.book.instruments") == 0);
	/* a channel the chain has no feed for: counted, released, nothing else */
	{
		uint32_t *copy = calloc(1, sizeof(*copy) + 16);
		struct tw_rx rx = {.cookie = copy, .payload = (const uint8_t *)(copy + 1),
				   .length = 16, .channel = 999};
		struct tw_chain_stats st;

		*copy = 16;
		CHECK(tw_chain_rx_direct(c, &rx) >= 0);
		tw_chain_stats(c, &st);
		CHECK(st.unknown_channel == 1 && poison.released == n + 1);
	}
	tw_chain_destroy(c);

	/* joined mid-stream (the first 300 packets of each feed missed), no
	 * snapshot: join "trust" takes the books as they come, "recover"
	 * leaves every one stale */
	c = chain(&keep, 2, 0);
	replay(c, argv[1], argv[2], 310, 300);
	t_recover = print(c);
	CHECK(value(t_recover, "book.stale_books") == 0);
	free(t_recover);
	tw_chain_destroy(c);
	c = chain(&recover, 2, 1);
	replay(c, argv[1], argv[2], 310, 300);
	t_recover = print(c);
	CHECK(value(t_recover, "book.stale_books") == value(t_recover, "book.instruments"));
	CHECK(value(t_recover, "book.instruments") > 0 &&
	      value(t_recover, "book.book_updates") == 0);
	tw_chain_destroy(c);

	printf("chain: %" PRIu64 " datagrams, released once each after decode; books equal "
	       "(hash 0x%016" PRIx64 "), channel 340 empty, unknown channel counted; "
	       "telemetry queries answered, a late answer dropped; the kill switch ahead of "
	       "queued orders\n", n,
	       value(t_keep, "book.hash"));
	free(t_keep);
	free(t_poison);
	free(t_recover);
	if (failures != 0)
		fprintf(stderr, "%d checks failed\n", failures);
	return failures != 0;
}
