/* SPDX-License-Identifier: BSD-3-Clause
 * app/synth internals: fixed-point exp/log against libm, decimal parsing, the
 * PRNG streams, the Hawkes process's mean rate, the book rules, the SBE
 * encoder read back by lib/mdp3's walker and typed accessors (v9 and v13),
 * encoder errors, the manifest printer, the pcap writer read back by
 * lib/pcap, and feed impairments at probability 0 and 1.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mdp3.h"
#include "synth_book.h"
#include "synth_feed.h"
#include "synth_layout_gen.h"
#include "synth_pcap.h"
#include "synth_random.h"
#include "synth_sbe.h"
#include "tw_pcap.h"

#include "tw_test.h"

#define Q32 4294967296.0
#define NEW SYNTH_V_MD_UPDATE_ACTION_NEW
#define BID SYNTH_SIDE_BID
#define IBID SYNTH_SIDE_IMPLIED_BID

static void
test_fx_exp_ln(void **state)
{
	double x, err, max_exp = 0, max_ln = 0;
	uint64_t q, u;

	(void)state;
	for (x = 0; x < 43; x += 0.00731) {
		q = (uint64_t)(x * Q32);
		err = fabs(synth_fx_exp_neg(q) / Q32 - exp(-(double)q / Q32));
		if (err > max_exp)
			max_exp = err;
	}
	for (u = 1; u <= SYNTH_FX_ONE; u += u < 4096 ? 1 : u / 613 + 1) {
		err = fabs(synth_fx_neg_ln(u) / Q32 + log((double)u / Q32));
		if (err > max_ln)
			max_ln = err;
	}
	assert_true(max_exp < 1e-9);
	assert_true(max_ln < 1e-9);
	assert_int_equal(synth_fx_exp_neg(0), SYNTH_FX_ONE);
	assert_int_equal(synth_fx_exp_neg(UINT64_C(50) << 32), 0);
	assert_int_equal(synth_fx_neg_ln(SYNTH_FX_ONE), 0);
	assert_true(synth_fx_neg_ln(0) > 0); /* taken as 2^-32, not infinite */
}

static void
test_fx_parse(void **state)
{
	static const char *const bad[] = { "", ".", "-1", "1e-3", "0x10", "1.5x", " 1", "1 " };
	uint64_t v;
	unsigned int i;

	(void)state;
	assert_int_equal(synth_fx_parse("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(synth_fx_parse("1", &v), 0);
	assert_int_equal(v, SYNTH_FX_ONE);
	assert_int_equal(synth_fx_parse("0.25", &v), 0);
	assert_int_equal(v, SYNTH_FX_ONE / 4);
	assert_int_equal(synth_fx_parse("10000.5", &v), 0);
	assert_int_equal(v, (UINT64_C(10000) << 32) + SYNTH_FX_ONE / 2);
	assert_int_equal(synth_fx_parse(".5", &v), 0);
	assert_int_equal(v, SYNTH_FX_ONE / 2);
	assert_int_equal(synth_fx_parse("2147483648", &v), -ERANGE);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(synth_fx_parse(bad[i], &v), -EINVAL);
}

static void
test_rng_streams(void **state)
{
	struct synth_rng a, b, c, d;
	unsigned int i, hits = 0;
	int64_t y;
	uint64_t x;

	(void)state;
	synth_rng_seed(&a, 42, 1);
	synth_rng_seed(&b, 42, 1);
	synth_rng_seed(&c, 42, 2);
	synth_rng_seed(&d, 43, 1);
	for (i = 0; i < 1000; i++) {
		x = synth_rng_next(&a);
		assert_int_equal(x, synth_rng_next(&b));
		hits += x == synth_rng_next(&c);
		hits += x == synth_rng_next(&d);
		assert_true(synth_rng_below(&d, 7) < 7);
		y = synth_rng_range(&d, -3, 3);
		assert_true(y >= -3 && y <= 3);
		assert_false(synth_rng_chance(&d, 0));
		assert_true(synth_rng_chance(&d, SYNTH_FX_ONE));
		x = synth_rng_unit(&d);
		assert_true(x >= 1 && x <= SYNTH_FX_ONE);
	}
	assert_int_equal(hits, 0);
}

static double
hawkes_rate(uint64_t mu, uint64_t alpha, uint64_t beta, unsigned int n)
{
	struct synth_hawkes h;
	uint64_t t = 0, prev = 0;
	unsigned int i;

	assert_int_equal(synth_hawkes_init(&h, mu << 32, alpha << 32, beta << 32, 1000, 3), 0);
	for (i = 0; i < n; i++) {
		t = synth_hawkes_next(&h);
		assert_true(t > prev);
		prev = t;
	}
	return n / ((t - 1000) / 1e9);
}

static void
test_hawkes_rate(void **state)
{
	struct synth_hawkes h;
	double rate;

	(void)state;
	rate = hawkes_rate(5000, 0, 10000, 100000);
	assert_true(fabs(rate - 5000) < 0.03 * 5000);
	rate = hawkes_rate(1000, 8000, 10000, 200000);
	assert_true(fabs(rate - 5000) < 0.15 * 5000);
	assert_int_equal(synth_hawkes_init(&h, 0, 0, 1, 0, 1), -EINVAL);
	assert_int_equal(synth_hawkes_init(&h, 1, 5, 5, 0, 1), -EINVAL);
}

/* ---- book rules ---- */

static int
op(struct synth_book *b, uint8_t action, uint8_t side, uint8_t level, int64_t px, int32_t size)
{
	struct synth_book_op o = { action, side, level, px, size, 1 };

	return synth_book_apply(b, &o);
}

static void
assert_prices(const struct synth_side *s, unsigned int n, const int64_t *px)
{
	unsigned int i;

	assert_int_equal(s->count, n);
	for (i = 0; i < n; i++)
		assert_int_equal(s->level[i].px, px[i]);
}

static void
test_book_rules(void **state)
{
	struct synth_book b = { .security_id = 1, .depth = 3 };
	struct synth_side *bid = &b.side[SYNTH_SIDE_BID];
	struct synth_side *ibid = &b.side[SYNTH_SIDE_IMPLIED_BID];

	(void)state;
	assert_int_equal(op(&b, NEW, BID, 1, 100, 5), 0);
	assert_int_equal(op(&b, NEW, BID, 2, 90, 5), 0);
	assert_int_equal(op(&b, NEW, BID, 1, 110, 5), 0);
	assert_prices(bid, 3, (const int64_t[]){ 110, 100, 90 });
	/* Full book: a New pushes the last level out. */
	assert_int_equal(op(&b, NEW, BID, 2, 105, 5), 0);
	assert_prices(bid, 3, (const int64_t[]){ 110, 105, 100 });
	assert_int_equal(op(&b, NEW, BID, 4, 80, 5), -EINVAL);
	/* Change keeps the price; a wrong price is refused. */
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_CHANGE, SYNTH_SIDE_BID, 2, 105, 9), 0);
	assert_int_equal(bid->level[1].size, 9);
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_CHANGE, SYNTH_SIDE_BID, 2, 104, 9),
			-EINVAL);
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_OVERLAY, SYNTH_SIDE_BID, 3, 101, 2), 0);
	assert_prices(bid, 3, (const int64_t[]){ 110, 105, 101 });
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_DELETE, BID, 1, 110, 5), 0);
	assert_prices(bid, 2, (const int64_t[]){ 105, 101 });
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_DELETE, BID, 3, 0, 0), -EINVAL);
	/* DeleteFrom n removes the top n levels. */
	assert_int_equal(op(&b, NEW, BID, 3, 95, 5), 0);
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_DELETE_FROM, SYNTH_SIDE_BID, 2, 101, 5),
			0);
	assert_prices(bid, 1, (const int64_t[]){ 95 });
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_DELETE_FROM, SYNTH_SIDE_BID, 2, 0, 0),
			-EINVAL);
	/* DeleteThru clears the side. */
	assert_int_equal(op(&b, SYNTH_V_MD_UPDATE_ACTION_DELETE_THRU, BID, 1, 95, 5), 0);
	assert_int_equal(bid->count, 0);
	/* The implied book is two deep. */
	assert_int_equal(op(&b, NEW, IBID, 1, 50, 1), 0);
	assert_int_equal(op(&b, NEW, IBID, 2, 40, 1), 0);
	assert_int_equal(op(&b, NEW, IBID, 3, 30, 1),
			-EINVAL);
	assert_int_equal(op(&b, NEW, IBID, 1, 60, 1), 0);
	assert_prices(ibid, 2, (const int64_t[]){ 60, 50 });
	assert_int_equal(op(&b, 9, SYNTH_SIDE_BID, 1, 1, 1), -EINVAL);
	assert_int_equal(op(&b, NEW, BID, 0, 1, 1), -EINVAL);
	synth_book_clear(&b);
	assert_int_equal(ibid->count, 0);
	assert_int_equal(b.rpt_seq, 0);
}

/* ---- SBE encoder against lib/mdp3 ---- */

#define ENTRY(f) mdp3_md_incremental_refresh_book46_no_md_entries_##f

struct seen {
	unsigned int messages;
	unsigned int entries;
	int tradeable_rc[4];
	int32_t tradeable[4];
	int orders_rc[4];
	struct mdp3_decimal px[4];
	uint32_t rpt[4];
	uint8_t level[4], action[4];
	char type[4];
	uint64_t transact_time;
	uint8_t mei;
};

static int
on_book46(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct seen *s = ctx;
	struct mdp3_group g;
	int32_t orders;
	unsigned int i;

	(void)pkt;
	s->messages++;
	assert_int_equal(msg->template_id, MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_BOOK46);
	mdp3_md_incremental_refresh_book46_transact_time(msg, &s->transact_time);
	mdp3_md_incremental_refresh_book46_match_event_indicator(msg, &s->mei);
	assert_int_equal(mdp3_md_incremental_refresh_book46_no_md_entries(msg, &g), 0);
	while (mdp3_group_next(&g) && s->entries < 4) {
		i = s->entries++;
		assert_int_equal(ENTRY(md_entry_px)(&g, &s->px[i]), 0);
		ENTRY(rpt_seq)(&g, &s->rpt[i]);
		ENTRY(md_price_level)(&g, &s->level[i]);
		ENTRY(md_update_action)(&g, &s->action[i]);
		ENTRY(md_entry_type)(&g, &s->type[i]);
		s->orders_rc[i] = ENTRY(number_of_orders)(&g, &orders);
		s->tradeable_rc[i] = ENTRY(tradeable_size)(&g, &s->tradeable[i]);
	}
	assert_int_equal(mdp3_md_incremental_refresh_book46_no_order_id_entries(msg, &g), 0);
	assert_int_equal(g.count, 0);
	return 0;
}

static void
encode_book46(uint16_t version, struct seen *s)
{
	struct synth_msg *m = malloc(sizeof(*m));
	struct mdp3_handler h = { .on_message = on_book46, .ctx = s };
	struct mdp3_walker w;
	struct synth_value *e;
	uint8_t pkt[256] = { 0 };
	int n;

	assert_non_null(m);
	assert_int_equal(synth_msg_init(m, SYNTH_T_BOOK46, version), 0);
	synth_set_uint(&m->root[SYNTH_F_BOOK46_TRANSACT_TIME], UINT64_C(1709562600123456789));
	synth_set_uint(&m->root[SYNTH_F_BOOK46_MATCH_EVENT_INDICATOR],
			SYNTH_B_MATCH_EVENT_INDICATOR_END_OF_EVENT);
	e = synth_msg_add_entry(m, SYNTH_G_BOOK46_NO_MD_ENTRIES);
	assert_non_null(e);
	synth_set_int(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_ENTRY_PX], INT64_C(5025250000000));
	synth_set_int(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_ENTRY_SIZE], 7);
	synth_set_int(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_SECURITY_ID], 100000);
	synth_set_uint(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_RPT_SEQ], 41);
	synth_set_int(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_NUMBER_OF_ORDERS], 3);
	synth_set_uint(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_PRICE_LEVEL], 2);
	synth_set_uint(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_UPDATE_ACTION],
			SYNTH_V_MD_UPDATE_ACTION_OVERLAY);
	synth_set_uint(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_ENTRY_TYPE],
			(uint8_t)SYNTH_V_MD_ENTRY_TYPE_BOOK_OFFER);
	e = synth_msg_add_entry(m, SYNTH_G_BOOK46_NO_MD_ENTRIES);
	assert_non_null(e);
	synth_set_int(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_ENTRY_PX], -INT64_C(250000000));
	synth_set_int(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_ENTRY_SIZE], 1);
	synth_set_uint(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_RPT_SEQ], 42);
	synth_set_uint(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_PRICE_LEVEL], 1);
	synth_set_uint(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_MD_ENTRY_TYPE],
			(uint8_t)SYNTH_V_MD_ENTRY_TYPE_BOOK_IMPLIED_BID);
	synth_set_int(&e[SYNTH_F_BOOK46_NO_MD_ENTRIES_TRADEABLE_SIZE], 1);
	/* 10 header + 11 root + 3 + 2 * 32 entries + 8 (empty order group). */
	assert_int_equal(synth_msg_size(m), 96);
	assert_int_equal(synth_msg_encode(m, pkt + 12, 95), -ENOSPC);
	n = synth_msg_encode(m, pkt + 12, sizeof(pkt) - 12);
	assert_int_equal(n, 96);
	pkt[0] = 7; /* MsgSeqNum 7 */
	mdp3_walker_init(&w, NULL, &h);
	memset(s, 0, sizeof(*s));
	assert_int_equal(mdp3_walk_packet(&w, pkt, 12 + (size_t)n), 0);
	assert_int_equal(w.counters.messages, 1);
	free(m);
}

static void
test_encoder_v9_v13(void **state)
{
	struct seen s;

	(void)state;
	encode_book46(9, &s);
	assert_int_equal(s.entries, 2);
	assert_int_equal(s.transact_time, UINT64_C(1709562600123456789));
	assert_int_equal(s.mei, 0x80);
	assert_int_equal(s.px[0].mantissa, INT64_C(5025250000000));
	assert_int_equal(s.px[0].exponent, -9);
	assert_int_equal(s.px[1].mantissa, -INT64_C(250000000));
	assert_int_equal(s.rpt[1], 42);
	assert_int_equal(s.level[0], 2);
	assert_int_equal(s.action[0], MDP3_MD_UPDATE_ACTION_OVERLAY);
	assert_int_equal(s.type[0], '1');
	assert_int_equal(s.type[1], 'E');
	assert_int_equal(s.orders_rc[0], 0);
	assert_int_equal(s.orders_rc[1], -ENODATA); /* left at its null value */
	assert_int_equal(s.tradeable_rc[0], -ENOENT); /* not in version 9 */
	encode_book46(13, &s);
	assert_int_equal(s.entries, 2);
	assert_int_equal(s.tradeable_rc[0], -ENODATA);
	assert_int_equal(s.tradeable_rc[1], 0);
	assert_int_equal(s.tradeable[1], 1);
}

static void
test_encoder_errors(void **state)
{
	struct synth_msg *m = malloc(sizeof(*m));
	unsigned int i;

	(void)state;
	assert_non_null(m);
	assert_int_equal(synth_msg_init(m, 46, 12), -ENOENT);
	assert_int_equal(synth_msg_init(m, 49, 9), -ENOENT); /* 47 is generated (--mbo) */
	assert_null(synth_layout_find(52, 5));
	assert_int_equal(synth_msg_init(m, SYNTH_T_SNAPSHOT52, 9), 0);
	errno = 0;
	assert_null(synth_msg_add_entry(m, 1));
	assert_int_equal(errno, ENOENT);
	for (i = 0; i < SYNTH_MAX_ENTRIES; i++)
		assert_non_null(synth_msg_add_entry(m, SYNTH_G_SNAPSHOT52_NO_MD_ENTRIES));
	errno = 0;
	assert_null(synth_msg_add_entry(m, SYNTH_G_SNAPSHOT52_NO_MD_ENTRIES));
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(synth_msg_init(m, SYNTH_T_HEARTBEAT12, 13), 0);
	assert_int_equal(synth_msg_size(m), 10);
	free(m);
}

static void
test_manifest_printer(void **state)
{
	struct synth_msg *m = malloc(sizeof(*m));
	struct synth_value *r;
	char *text = NULL;
	size_t size = 0;
	FILE *f;

	(void)state;
	assert_non_null(m);
	assert_int_equal(synth_msg_init(m, SYNTH_T_FUTURE54, 13), 0);
	r = m->root;
	synth_set_text(&r[SYNTH_F_FUTURE54_SYMBOL], "ESH5\"x");
	r[SYNTH_F_FUTURE54_MATURITY_MONTH_YEAR].raw[0] = 2025;
	r[SYNTH_F_FUTURE54_MATURITY_MONTH_YEAR].raw[1] = 3;
	synth_set_uint(&r[SYNTH_F_FUTURE54_SECURITY_UPDATE_ACTION], 'A');
	synth_set_uint(&r[SYNTH_F_FUTURE54_SETTL_PRICE_TYPE], 3);
	synth_set_int(&r[SYNTH_F_FUTURE54_MIN_PRICE_INCREMENT], 250000000);
	synth_set_uint(&r[SYNTH_F_FUTURE54_MATCH_ALGORITHM], 'F');
	f = open_memstream(&text, &size);
	assert_non_null(f);
	synth_msg_print_fields(f, m);
	fclose(f);
	assert_non_null(strstr(text, "\"TotNumReports\":null,"));
	assert_non_null(strstr(text, "\"SecurityUpdateAction\":{\"value\":\"A\","
				"\"name\":\"Add\"}"));
	assert_non_null(strstr(text, "\"Symbol\":\"ESH5\\\"x\""));
	assert_non_null(strstr(text, "\"SecurityIDSource\":\"8\""));
	assert_non_null(strstr(text, "\"MaturityMonthYear\":{\"year\":2025,\"month\":3,"
				"\"day\":null,\"week\":null}"));
	assert_non_null(strstr(text, "\"SettlPriceType\":{\"value\":3,\"choices\":"
				"[\"FinalDaily\",\"Actual\"]}"));
	assert_non_null(strstr(text, "\"MinPriceIncrement\":{\"mantissa\":250000000,"
				"\"exponent\":-9}"));
	assert_non_null(strstr(text, "\"MatchAlgorithm\":\"F\""));
	assert_non_null(strstr(text, "\"InstrumentGUID\":null"));
	assert_non_null(strstr(text, "\"NoEvents\":[],\"NoMDFeedTypes\":[]"));
	free(text);
	free(m);
}

/* ---- pcap writer and feeds ---- */

static void
test_pcap_writer(void **state)
{
	char path[] = "/tmp/test_synth_pcap_XXXXXX";
	struct synth_flow flow = {
		.src_mac = { 2, 0, 0, 0, 0, 1 }, .src_ip = 0xcdd1dd47, .dst_ip = 0xe0001f01,
		.src_port = 14310, .dst_port = 14310,
	};
	struct synth_pcap w;
	struct tw_pcap_frame frame;
	struct tw_pcap_l4 l4;
	struct tw_pcap *r;
	uint8_t payload[33];
	uint32_t sum;
	unsigned int i;
	int fd;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(synth_pcap_open(&w, path), 0);
	assert_int_equal(synth_pcap_write_udp(&w, UINT64_C(1709562600000000123), &flow, payload,
			sizeof(payload)), 0);
	assert_int_equal(synth_pcap_write_udp(&w, UINT64_C(1709562600000000999), &flow, payload,
			0), 0);
	assert_int_equal(synth_pcap_write_udp(&w, 0, &flow, payload, SYNTH_PCAP_MAX_PAYLOAD + 1),
			-EMSGSIZE);
	assert_int_equal(synth_pcap_close(&w), 0);
	r = tw_pcap_open(path);
	assert_non_null(r);
	assert_int_equal(tw_pcap_format(r), TW_PCAP_FORMAT_CLASSIC_NSEC);
	assert_int_equal(tw_pcap_next(r, &frame), 1);
	assert_int_equal(frame.time_ns, UINT64_C(1709562600000000123));
	assert_int_equal(frame.data[0], 0x01);
	assert_int_equal(frame.data[5], 0x01); /* 01:00:5e:00:1f:01 */
	assert_int_equal(tw_pcap_parse_frame(frame.data, frame.caplen, frame.linktype, &l4, NULL),
			0);
	assert_int_equal(l4.protocol, 17);
	assert_int_equal(l4.dst_ip, 0xe0001f01);
	assert_int_equal(l4.dst_port, 14310);
	assert_int_equal(l4.payload_length, sizeof(payload));
	assert_memory_equal(l4.payload, payload, sizeof(payload));
	/* IPv4 header checksum: the one's complement sum over the header is 0xffff. */
	for (sum = 0, i = 14; i < 34; i += 2)
		sum += (uint32_t)frame.data[i] << 8 | frame.data[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	assert_int_equal(sum, 0xffff);
	assert_int_equal(tw_pcap_next(r, &frame), 1);
	assert_int_equal(tw_pcap_parse_frame(frame.data, frame.caplen, frame.linktype, &l4, NULL),
			0);
	assert_int_equal(l4.payload_length, 0);
	assert_int_equal(tw_pcap_next(r, &frame), 0);
	tw_pcap_close(r);
	unlink(path);
}

static uint64_t
feed_records(uint64_t drop, uint64_t dup, uint64_t reorder, uint32_t *order, unsigned int n)
{
	char path[] = "/tmp/test_synth_feed_XXXXXX";
	struct synth_feed *feed = calloc(1, sizeof(*feed));
	struct tw_pcap_frame frame;
	struct tw_pcap_l4 l4;
	struct tw_pcap *r;
	uint8_t payload[16] = { 0 };
	uint64_t records;
	unsigned int i, k = 0;
	int fd;

	assert_non_null(feed);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	feed->path = path;
	feed->flow.dst_ip = 0xe0002001;
	feed->drop = drop;
	feed->dup = dup;
	feed->reorder = reorder;
	assert_int_equal(synth_feed_open(feed, 1, 0xb), 0);
	for (i = 1; i <= n; i++) {
		payload[0] = (uint8_t)i;
		assert_int_equal(synth_feed_send(feed, 1000 * i, payload, sizeof(payload), i == 3),
				0);
	}
	assert_int_equal(synth_feed_close(feed), 0);
	records = feed->counters.records;
	assert_int_equal(feed->counters.gap_dropped, 1);
	r = tw_pcap_open(path);
	assert_non_null(r);
	while (tw_pcap_next(r, &frame) == 1 && k < 64) {
		assert_int_equal(tw_pcap_parse_frame(frame.data, frame.caplen, frame.linktype, &l4,
				NULL), 0);
		order[k++] = l4.payload[0];
	}
	tw_pcap_close(r);
	unlink(path);
	free(feed);
	return records;
}

static void
test_feed_extremes(void **state)
{
	unsigned int i, inversions = 0;
	uint32_t order[64];
	uint64_t seen;

	(void)state;
	assert_int_equal(feed_records(0, 0, 0, order, 10), 9);
	for (i = 0; i < 9; i++)
		assert_int_equal(order[i], i < 2 ? i + 1 : i + 2); /* 3 is the forced drop */
	assert_int_equal(feed_records(SYNTH_FX_ONE, 0, 0, order, 10), 0);
	/* Every packet twice; the copy follows after at most two later packets. */
	assert_int_equal(feed_records(0, SYNTH_FX_ONE, 0, order, 10), 18);
	for (i = 0; i < 18; i++) {
		unsigned int j, copies = 0;
		uint64_t later = 0;

		for (j = 0; j < 18; j++)
			copies += order[j] == order[i];
		assert_int_equal(copies, 2);
		for (j = 0; j < i && order[j] != order[i]; j++)
			;
		if (j < i)
			continue; /* the copy itself */
		for (j = i + 1; j < 18 && order[j] != order[i]; j++)
			if (order[j] > order[i])
				later |= UINT64_C(1) << order[j];
		assert_true(__builtin_popcountll(later) <= 2);
	}
	/* Half held back: still every packet once, some after a later one. */
	assert_int_equal(feed_records(0, 0, SYNTH_FX_ONE / 2, order, 40), 39);
	for (i = 0, seen = 0; i < 39; i++) {
		assert_int_equal(seen & (UINT64_C(1) << order[i]), 0);
		seen |= UINT64_C(1) << order[i];
		inversions += i > 0 && order[i] < order[i - 1];
	}
	assert_true(inversions > 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fx_exp_ln),
		cmocka_unit_test(test_fx_parse),
		cmocka_unit_test(test_rng_streams),
		cmocka_unit_test(test_hawkes_rate),
		cmocka_unit_test(test_book_rules),
		cmocka_unit_test(test_encoder_v9_v13),
		cmocka_unit_test(test_encoder_errors),
		cmocka_unit_test(test_manifest_printer),
		cmocka_unit_test(test_pcap_writer),
		cmocka_unit_test(test_feed_extremes),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
