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
 *  - the kill switch refuses orders already queued for order-out.
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


struct run {
	bool poison;
	uint64_t released;
	uint64_t orders;
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

static void
sink(void *ctx, const uint8_t *frame, uint32_t length)
{
	(void)frame;
	(void)length;
	((struct run *)ctx)->orders++;
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

/* Replay A and B merged by capture time; @return datagrams delivered. */
static uint64_t
replay(struct tw_chain *c, const char *a, const char *b, uint16_t channel, uint64_t skip)
{
	struct tw_pcap *p[2] = {tw_pcap_open(a), tw_pcap_open(b)};
	struct tw_pcap_frame fr[2];
	bool has[2];
	uint64_t n = 0;

	CHECK(p[0] != NULL && p[1] != NULL);
	if (p[0] == NULL || p[1] == NULL)
		exit(1);
	for (int i = 0; i < 2; i++)
		has[i] = tw_pcap_next(p[i], &fr[i]) == 1;
	while (has[0] || has[1]) {
		int i = !has[0] || (has[1] && fr[1].time_ns < fr[0].time_ns);

		if (fr[i].number > skip && deliver(c, p[i], (uint8_t)i, channel, &fr[i]) > 0)
			n++;
		has[i] = tw_pcap_next(p[i], &fr[i]) == 1;
	}
	tw_chain_tick(c, UINT64_MAX / 2, true);
	act_group_drain(tw_chain_order_group(c));
	tw_pcap_close(p[0]);
	tw_pcap_close(p[1]);
	return n;
}

static struct tw_chain *
chain(struct run *r, uint32_t n_channels, uint8_t join)
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
	c = tw_chain_create(&o);
	CHECK(c != NULL);
	if (c == NULL)
		exit(1);
	act_group_bind(tw_chain_decode_group(c));
	act_group_bind(tw_chain_order_group(c));
	return c;
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

int
main(int argc, char **argv)
{
	struct run keep = {.poison = false}, poison = {.poison = true}, recover = {.poison = true};
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
		struct run kill = {.poison = false};

		check_kill_priority(&kill);
	}

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
