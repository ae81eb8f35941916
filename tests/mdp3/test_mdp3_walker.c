/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the MDP 3.0 walker and the generated accessors: real packets,
 * truncation at every byte offset (run under ASan: every prefix lives in a
 * heap block of exactly its size), wrong schema / template, blockLength
 * shorter and longer than the schema's, nulls, absent fields, conflated TCP.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "mdp3.h"
#include "mdp3_test_packets.h"

/* Short names for the generated accessors used below. */
#define TS48(name) mdp3_md_incremental_refresh_trade_summary48_##name
#define BOOK46(name) mdp3_md_incremental_refresh_book46_##name
#define TS42(name) mdp3_md_incremental_refresh_trade_summary42_##name
#define SNAP68(name) mdp3_snapshot_full_refresh_tcp_long_qty68_##name

/* Message layout of pkt_v9: MsgSize of each message (packet header 12). */
static const uint16_t v9_sizes[] = { 112, 40, 104, 64, 64 };
static const uint16_t v9_templates[] = { 48, 37, 47, 46, 46 };

struct seen {
	unsigned int messages;
	unsigned int skips;
	uint16_t templates[16];
	enum mdp3_reason skip_reason;
	uint16_t skip_index;
	int stop_after;        /* >0: return -ECANCELED after that many messages */
	uint32_t seq;
	uint64_t sending_time;
};

static int
count_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct seen *s = ctx;

	if (s->messages < 16)
		s->templates[s->messages] = msg->template_id;
	s->messages++;
	s->seq = pkt->msg_seq_num;
	s->sending_time = pkt->sending_time;
	if (s->stop_after > 0 && (int)s->messages >= s->stop_after)
		return -ECANCELED;
	return 0;
}

static void
count_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct seen *s = ctx;

	(void)pkt;
	s->skips++;
	s->skip_reason = skip->reason;
	s->skip_index = skip->index;
}

static void
walker_for(struct mdp3_walker *w, struct seen *s)
{
	struct mdp3_handler h = { .on_message = count_message, .on_skip = count_skip, .ctx = s };

	memset(s, 0, sizeof(*s));
	assert_int_equal(mdp3_walker_init(w, NULL, &h), 0);
}

/* A heap copy of exactly n bytes, so that ASan flags any read past it. */
static uint8_t *
exact_copy(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n > 0 ? n : 1);

	assert_non_null(q);
	if (n > 0)
		memcpy(q, p, n);
	return q;
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* Offset of message i of pkt_v9 in the packet. */
static size_t
v9_offset(unsigned int i)
{
	size_t off = MDP3_PACKET_HEADER_SIZE;
	unsigned int k;

	for (k = 0; k < i; k++)
		off += v9_sizes[k];
	return off;
}

struct v9_check {
	int checked;
};

/* Reads the real packet through the generated accessors. */
static int
check_v9_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct v9_check *c = ctx;
	struct mdp3_group g;
	struct mdp3_decimal px;
	uint64_t u64;
	uint32_t u32;
	int32_t i32;
	uint8_t u8;
	char ch;

	assert_int_equal(pkt->msg_seq_num, 884140);
	assert_true(pkt->sending_time == UINT64_C(1536760535682568739));
	assert_int_equal(pkt->message_count, 5);
	switch (msg->index) {
	case 0:
		assert_int_equal(msg->template_id,
				MDP3_TEMPLATE_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY48);
		assert_string_equal(msg->info->name, "MDIncrementalRefreshTradeSummary48");
		assert_int_equal(TS48(transact_time)(msg, &u64), 0);
		assert_true(u64 == UINT64_C(1536760535670166278));
		assert_int_equal(TS48(match_event_indicator)(msg, &u8), 0);
		assert_int_equal(u8, MDP3_MATCH_EVENT_INDICATOR_LAST_TRADE_MSG);
		assert_int_equal(TS48(no_md_entries)(msg, &g), 0);
		assert_int_equal(g.count, 1);
		assert_true(mdp3_group_next(&g));
		assert_int_equal(TS48(no_md_entries_md_entry_px)(&g, &px), 0);
		assert_true(px.mantissa == INT64_C(12952000000000));
		assert_int_equal(px.exponent, -9);
		assert_int_equal(TS48(no_md_entries_security_id)(&g, &i32), 0);
		assert_int_equal(i32, 170506);
		assert_int_equal(TS48(no_md_entries_rpt_seq)(&g, &u32), 0);
		assert_int_equal(u32, 20185);
		assert_int_equal(TS48(no_md_entries_aggressor_side)(&g, &u8), 0);
		assert_int_equal(u8, MDP3_AGGRESSOR_SIDE_SELL);
		assert_int_equal(TS48(no_md_entries_md_entry_type)(&g, &ch), 0);
		assert_int_equal(ch, '2'); /* constant MDEntryTypeTrade */
		assert_int_equal(TS48(no_md_entries_md_trade_entry_id)(&g, &u32), 0);
		assert_int_equal(u32, 341412);
		assert_false(mdp3_group_next(&g));
		assert_int_equal(TS48(no_order_id_entries)(msg, &g), 0);
		assert_int_equal(g.count, 3);
		assert_true(mdp3_group_next(&g));
		assert_int_equal(TS48(no_order_id_entries_order_id)(&g, &u64), 0);
		assert_true(u64 == UINT64_C(88463941745));
		assert_true(mdp3_group_next(&g));
		assert_true(mdp3_group_next(&g));
		assert_int_equal(TS48(no_order_id_entries_last_qty)(&g, &i32), 0);
		assert_int_equal(i32, 1);
		assert_false(mdp3_group_next(&g));
		break;
	case 4:
		assert_int_equal(msg->template_id, 46);
		assert_int_equal(BOOK46(no_md_entries)(msg, &g), 0);
		assert_true(mdp3_group_next(&g));
		/* NumberOfOrders is Int32NULL 2147483647 on the wire: null. */
		assert_int_equal(BOOK46(no_md_entries_number_of_orders)(&g, &i32), -ENODATA);
		assert_int_equal(i32, INT32_MAX);
		assert_int_equal(BOOK46(no_md_entries_md_entry_type)(&g, &ch), 0);
		assert_int_equal(ch, MDP3_MD_ENTRY_TYPE_BOOK_IMPLIED_BID);
		/* TradeableSize is since version 10: absent on a version 9 wire. */
		assert_int_equal(BOOK46(no_md_entries_tradeable_size)(&g, &i32), -ENOENT);
		assert_int_equal(BOOK46(no_order_id_entries)(msg, &g), 0);
		assert_int_equal(g.count, 0);
		assert_false(mdp3_group_next(&g));
		break;
	default:
		assert_int_equal(msg->template_id, v9_templates[msg->index]);
		break;
	}
	c->checked++;
	return 0;
}

static void
test_real_packet_accessors(void **state)
{
	struct mdp3_walker w;
	struct v9_check c = { 0 };
	struct mdp3_handler h = { .on_message = check_v9_message, .ctx = &c };
	uint8_t *buf = exact_copy(pkt_v9, sizeof(pkt_v9));

	(void)state;
	assert_int_equal(mdp3_walker_init(&w, NULL, &h), 0);
	assert_int_equal(mdp3_walk_packet(&w, buf, sizeof(pkt_v9)), 0);
	assert_int_equal(c.checked, 5);
	assert_int_equal(w.counters.packets, 1);
	assert_int_equal(w.counters.messages, 5);
	assert_int_equal(w.counters.packets_dropped, 0);
	assert_int_equal(w.counters.version_fallbacks, 0);
	free(buf);
}

/* Every prefix of the real packet: a prefix that ends on a message boundary
 * is a valid shorter packet; any other is dropped, nothing delivered, counted. */
static void
test_truncated_every_offset(void **state)
{
	struct mdp3_walker w;
	struct seen s;
	struct mdp3_error err;
	size_t len, boundary;
	unsigned int k, expect_msgs;
	uint64_t drops_before;
	uint8_t *buf;
	int rc;
	bool valid;

	(void)state;
	walker_for(&w, &s);
	for (len = 0; len < sizeof(pkt_v9); len++) {
		buf = exact_copy(pkt_v9, len);
		valid = false;
		expect_msgs = 0;
		for (k = 0; k <= 5; k++) {
			boundary = v9_offset(k);
			if (len == boundary) {
				valid = true;
				expect_msgs = k;
			}
		}
		s.messages = 0;
		drops_before = w.counters.packets_dropped;
		rc = mdp3_walk_packet(&w, buf, len);
		if (valid) {
			assert_int_equal(rc, 0);
			assert_int_equal(s.messages, expect_msgs);
			assert_int_equal(mdp3_packet_validate(NULL, buf, len, &err), 0);
		} else {
			assert_int_equal(rc, -EBADMSG);
			assert_int_equal(s.messages, 0);
			assert_int_equal(w.counters.packets_dropped, drops_before + 1);
			if (len < MDP3_PACKET_HEADER_SIZE)
				assert_int_equal(w.last_error.reason, MDP3_REASON_SHORT_PACKET);
			else
				assert_true(
					w.last_error.reason == MDP3_REASON_SHORT_MESSAGE_HEADER ||
					w.last_error.reason == MDP3_REASON_MSG_SIZE_TOO_LARGE);
			assert_true(w.last_error.offset <= len);
			assert_int_equal(mdp3_packet_validate(NULL, buf, len, &err), -EBADMSG);
			assert_int_equal(err.reason, w.last_error.reason);
		}
		free(buf);
	}
	assert_int_equal(w.counters.reason[MDP3_REASON_SHORT_PACKET], MDP3_PACKET_HEADER_SIZE);
	assert_int_equal(w.counters.packets, sizeof(pkt_v9));
}

/* Corrupting a MsgSize inside the packet, at every value, never reads out. */
static void
test_corrupt_msg_size_every_value(void **state)
{
	struct mdp3_walker w;
	struct seen s;
	uint8_t *buf;
	unsigned int v;
	size_t at = v9_offset(2);
	int rc;

	(void)state;
	walker_for(&w, &s);
	buf = exact_copy(pkt_v9, sizeof(pkt_v9));
	for (v = 0; v < 65536; v += (v < 512 ? 1 : 97)) {
		put16(buf + at, (uint16_t)v);
		s.messages = 0;
		rc = mdp3_walk_packet(&w, buf, sizeof(pkt_v9));
		if (rc == 0)
			assert_true(s.messages >= 2);
		else
			assert_int_equal(s.messages, 0);
		if (v < MDP3_MESSAGE_HEADER_SIZE)
			assert_int_equal(w.last_error.reason, MDP3_REASON_MSG_SIZE_TOO_SMALL);
		if (v > sizeof(pkt_v9) - at)
			assert_int_equal(w.last_error.reason, MDP3_REASON_MSG_SIZE_TOO_LARGE);
	}
	free(buf);
}

/* Corrupting any single byte to any value never reads out of the packet. */
static void
test_corrupt_every_byte(void **state)
{
	struct mdp3_walker w;
	struct seen s;
	uint8_t *buf;
	size_t i;
	unsigned int v;

	(void)state;
	walker_for(&w, &s);
	buf = exact_copy(pkt_v9, sizeof(pkt_v9));
	for (i = 0; i < sizeof(pkt_v9); i++) {
		for (v = 0; v < 256; v += 17) {
			buf[i] = (uint8_t)v;
			(void)mdp3_walk_packet(&w, buf, sizeof(pkt_v9));
		}
		buf[i] = pkt_v9[i];
	}
	free(buf);
	assert_true(w.counters.packets == sizeof(pkt_v9) * 16);
}

static void
test_unknown_schema_and_template(void **state)
{
	struct mdp3_walker w;
	struct seen s;
	uint8_t *buf = exact_copy(pkt_v9, sizeof(pkt_v9));
	size_t at = v9_offset(2);

	(void)state;
	walker_for(&w, &s);
	put16(buf + at + 6, 7); /* schemaId 7 */
	assert_int_equal(mdp3_walk_packet(&w, buf, sizeof(pkt_v9)), 0);
	assert_int_equal(s.messages, 4);
	assert_int_equal(s.skips, 1);
	assert_int_equal(s.skip_reason, MDP3_REASON_UNKNOWN_SCHEMA);
	assert_int_equal(s.skip_index, 2);
	assert_int_equal(w.counters.reason[MDP3_REASON_UNKNOWN_SCHEMA], 1);
	assert_int_equal(w.counters.messages_skipped, 1);

	put16(buf + at + 6, 1);
	put16(buf + at + 4, 99); /* templateId 99 */
	assert_int_equal(mdp3_walk_packet(&w, buf, sizeof(pkt_v9)), 0);
	assert_int_equal(s.skip_reason, MDP3_REASON_UNKNOWN_TEMPLATE);
	assert_int_equal(w.counters.reason[MDP3_REASON_UNKNOWN_TEMPLATE], 1);

	/* Template 47 exists from version 9 on: unknown to a version 3 wire. */
	put16(buf + at + 4, 47);
	put16(buf + at + 8, 3); /* version 3 < sinceVersion 9 of template 47 */
	assert_int_equal(mdp3_walk_packet(&w, buf, sizeof(pkt_v9)), 0);
	assert_int_equal(s.skip_reason, MDP3_REASON_UNKNOWN_TEMPLATE);
	assert_int_equal(w.counters.packets_dropped, 0);
	free(buf);
}

static void
test_version_fallback(void **state)
{
	struct mdp3_walker w;
	struct seen s;
	uint8_t *buf = exact_copy(pkt_v9, sizeof(pkt_v9));
	const struct mdp3_message_info *info;

	(void)state;
	walker_for(&w, &s);
	put16(buf + v9_offset(3) + 8, 10); /* 46 claimed by a version 10 encoder */
	assert_int_equal(mdp3_walk_packet(&w, buf, sizeof(pkt_v9)), 0);
	assert_int_equal(s.messages, 5);
	assert_int_equal(w.counters.version_fallbacks, 1);
	info = mdp3_lookup(NULL, 1, 10, 46);
	assert_non_null(info);
	assert_int_equal(info->schema_version, 12);
	info = mdp3_lookup(NULL, 1, 40, 46); /* newer than any: newest */
	assert_non_null(info);
	assert_int_equal(info->schema_version, 13);
	info = mdp3_lookup(NULL, 1, 12, 32); /* removed in 12: newest older */
	assert_non_null(info);
	assert_int_equal(info->schema_version, 9);
	info = mdp3_lookup(NULL, 1, 7, 42);  /* between 6 and 8: the newer one */
	assert_non_null(info);
	assert_int_equal(info->schema_version, 8);
	errno = 0;
	assert_null(mdp3_lookup(NULL, 3, 9, 46));
	assert_int_equal(errno, EPROTONOSUPPORT);
	assert_null(mdp3_lookup(NULL, 1, 9, 1000));
	assert_int_equal(errno, ENOENT);
	free(buf);
}

static void
test_callback_stops_walk(void **state)
{
	struct mdp3_walker w;
	struct seen s;

	(void)state;
	walker_for(&w, &s);
	s.stop_after = 2;
	assert_int_equal(mdp3_walk_packet(&w, pkt_v9, sizeof(pkt_v9)), -ECANCELED);
	assert_int_equal(s.messages, 2);
}

/*
 * A packet longer than the walker keeps views of (32 messages): pkt_v9's
 * five messages nine times (45 messages), one made unknown past the 32nd.
 * Every message arrives once, in order, with its index; a fault in the
 * last message (every byte offset of a cut, a bad MsgSize) delivers nothing.
 */
#define LONG_REPEAT 9
#define LONG_MESSAGES (LONG_REPEAT * 5)

struct order {
	unsigned int calls;
	uint16_t index[LONG_MESSAGES];
	uint16_t template_id[LONG_MESSAGES];
	bool skipped[LONG_MESSAGES];
};

static int
order_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct order *o = ctx;

	assert_true(o->calls < LONG_MESSAGES);
	assert_int_equal(pkt->message_count, LONG_MESSAGES);
	o->index[o->calls] = msg->index;
	o->template_id[o->calls] = msg->template_id;
	o->skipped[o->calls] = false;
	o->calls++;
	return 0;
}

static void
order_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct order *o = ctx;

	(void)pkt;
	assert_true(o->calls < LONG_MESSAGES);
	o->index[o->calls] = skip->index;
	o->template_id[o->calls] = skip->template_id;
	o->skipped[o->calls] = true;
	o->calls++;
}

static void
test_packet_longer_than_batch(void **state)
{
	const size_t body = sizeof(pkt_v9) - MDP3_PACKET_HEADER_SIZE;
	const size_t length = MDP3_PACKET_HEADER_SIZE + LONG_REPEAT * body;
	const unsigned int unknown = 38; /* a template 46 (index 3 of the 8th copy) */
	struct order o;
	struct mdp3_handler h = { .on_message = order_message, .on_skip = order_skip, .ctx = &o };
	struct mdp3_walker w;
	struct mdp3_error e;
	uint8_t *p = malloc(length), *cut;
	size_t off, n;
	unsigned int i;

	(void)state;
	assert_non_null(p);
	memcpy(p, pkt_v9, MDP3_PACKET_HEADER_SIZE);
	for (i = 0; i < LONG_REPEAT; i++)
		memcpy(p + MDP3_PACKET_HEADER_SIZE + i * body, pkt_v9 + MDP3_PACKET_HEADER_SIZE,
				body);
	off = MDP3_PACKET_HEADER_SIZE + (unknown / 5) * body + v9_offset(unknown % 5) -
		MDP3_PACKET_HEADER_SIZE;
	assert_int_equal(p[off + 4] | p[off + 5] << 8, 46);
	put16(p + off + 4, 999);

	memset(&o, 0, sizeof(o));
	assert_int_equal(mdp3_walker_init(&w, NULL, &h), 0);
	assert_int_equal(mdp3_walk_packet(&w, p, length), 0);
	assert_int_equal(o.calls, LONG_MESSAGES);
	for (i = 0; i < LONG_MESSAGES; i++) {
		assert_int_equal(o.index[i], i);
		assert_int_equal(o.skipped[i], i == unknown);
		assert_int_equal(o.template_id[i], i == unknown ? 999 : v9_templates[i % 5]);
	}
	assert_int_equal(w.counters.messages, LONG_MESSAGES - 1);
	assert_int_equal(w.counters.messages_skipped, 1);
	assert_int_equal(w.counters.reason[MDP3_REASON_UNKNOWN_TEMPLATE], 1);
	assert_int_equal(mdp3_packet_validate(NULL, p, length, &e), 0);

	/* Cut anywhere inside the last message: nothing at all is delivered. */
	for (n = length - v9_sizes[4] + 1; n < length; n++) {
		cut = exact_copy(p, n);
		memset(&o, 0, sizeof(o));
		assert_int_equal(mdp3_walk_packet(&w, cut, n), -EBADMSG);
		assert_int_equal(o.calls, 0);
		assert_int_equal(w.last_error.msg_index, LONG_MESSAGES - 1);
		assert_int_equal(mdp3_packet_validate(NULL, cut, n, &e), -EBADMSG);
		assert_int_equal(e.msg_index, LONG_MESSAGES - 1);
		free(cut);
	}
	/* MsgSize of the last message one past the end. */
	put16(p + length - v9_sizes[4], v9_sizes[4] + 1);
	memset(&o, 0, sizeof(o));
	assert_int_equal(mdp3_walk_packet(&w, p, length), -EBADMSG);
	assert_int_equal(o.calls, 0);
	assert_int_equal(w.last_error.reason, MDP3_REASON_MSG_SIZE_TOO_LARGE);
	assert_int_equal(w.last_error.offset, length - v9_sizes[4]);
	free(p);
}

/* ---- synthetic messages (layouts from the v8/v9 schemas) ---- */

/* A packet with one v8 MDIncrementalRefreshTradeSummary42 message whose entry
 * blockLength is entry_bl (schema: 32; MDTradeEntryID at 26..29, since 7). */
static size_t
build_v8_trade42(uint8_t *p, uint16_t root_bl, uint16_t entry_bl, uint16_t version)
{
	size_t o = 0, msg;

	put32(p, 4242);
	put64(p + 4, UINT64_C(1475013600006187074));
	o = MDP3_PACKET_HEADER_SIZE;
	msg = o;
	put16(p + o + 2, root_bl);
	put16(p + o + 4, 42);
	put16(p + o + 6, 1);
	put16(p + o + 8, version);
	o += MDP3_MESSAGE_HEADER_SIZE;
	memset(p + o, 0, root_bl);
	put64(p + o, UINT64_C(1475013600000000000)); /* TransactTime */
	p[o + 8] = 0x81;                               /* MatchEventIndicator */
	o += root_bl;
	put16(p + o, entry_bl);                        /* groupSize */
	p[o + 2] = 1;
	o += 3;
	memset(p + o, 0xee, entry_bl);
	put64(p + o, (uint64_t)INT64_C(75800000000)); /* MDEntryPx 7580 (PRICE, -7) */
	put32(p + o + 8, 5);                            /* MDEntrySize */
	put32(p + o + 12, 174969);                      /* SecurityID */
	put32(p + o + 16, 1721561);                     /* RptSeq */
	put32(p + o + 20, 0x7fffffff);                  /* NumberOfOrders: null */
	p[o + 24] = 255;                                /* AggressorSide: null */
	p[o + 25] = 0;                                  /* MDUpdateAction New */
	if (entry_bl >= 30)
		put32(p + o + 26, 987654);                /* MDTradeEntryID */
	o += entry_bl;
	put16(p + o, 16);                              /* groupSize8Byte, 0 entries */
	memset(p + o + 2, 0, 5);
	p[o + 7] = 0;
	o += 8;
	put16(p + msg, (uint16_t)(o - msg));
	return o;
}

struct trade42 {
	int rc_entry_id;
	uint32_t entry_id;
	int rc_orders;
	int rc_aggressor;
	int32_t security_id;
	int64_t px;
	uint16_t block_length;
	int calls;
};

static int
read_trade42(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct trade42 *t = ctx;
	struct mdp3_group g;
	struct mdp3_decimal px;
	int32_t i32;
	uint8_t u8;

	(void)pkt;
	t->calls++;
	t->block_length = msg->block_length;
	assert_int_equal(TS42(no_md_entries)(msg, &g), 0);
	assert_true(mdp3_group_next(&g));
	assert_int_equal(TS42(no_md_entries_md_entry_px)(&g, &px), 0);
	t->px = px.mantissa;
	assert_int_equal(px.exponent, -7);
	assert_int_equal(TS42(no_md_entries_security_id)(&g, &t->security_id), 0);
	t->rc_orders = TS42(no_md_entries_number_of_orders)(
			&g, &i32);
	t->rc_aggressor =
		TS42(no_md_entries_aggressor_side)(&g, &u8);
	t->rc_entry_id =
		TS42(no_md_entries_md_trade_entry_id)(&g,
				&t->entry_id);
	return 0;
}

static void
walk_trade42(uint16_t root_bl, uint16_t entry_bl, uint16_t version, struct trade42 *t,
		int expect_rc, enum mdp3_reason expect_reason)
{
	struct mdp3_walker w;
	struct mdp3_handler h = { .on_message = read_trade42, .ctx = t };
	uint8_t tmp[256];
	uint8_t *buf;
	size_t n;

	memset(t, 0, sizeof(*t));
	n = build_v8_trade42(tmp, root_bl, entry_bl, version);
	buf = exact_copy(tmp, n);
	assert_int_equal(mdp3_walker_init(&w, NULL, &h), 0);
	assert_int_equal(mdp3_walk_packet(&w, buf, n), expect_rc);
	if (expect_rc < 0) {
		assert_int_equal(w.last_error.reason, expect_reason);
		assert_int_equal(w.counters.reason[expect_reason], 1);
		assert_int_equal(t->calls, 0);
	}
	free(buf);
}

/*
 * A packet of exactly one message takes the walker's single-message path.
 * Cut it at every length with MsgSize patched to the bytes left (so that path
 * is taken), and compare with mdp3_packet_validate(), which always checks
 * through the general loop: the same fault, nothing delivered, counted once.
 */
static void
test_single_message_packet(void **state)
{
	struct seen s;
	struct mdp3_walker w;
	struct mdp3_error e;
	uint8_t tmp[256];
	uint8_t *buf;
	size_t n, k;
	uint64_t dropped = 0;

	(void)state;
	n = build_v8_trade42(tmp, 11, 32, 8);
	walker_for(&w, &s);
	buf = exact_copy(tmp, n);
	assert_int_equal(mdp3_walk_packet(&w, buf, n), 0);
	assert_int_equal(s.messages, 1);
	assert_int_equal(s.templates[0], 42);
	assert_int_equal(s.seq, 4242);
	assert_int_equal(w.counters.messages, 1);
	assert_int_equal(w.counters.trailing_bytes, 0);
	free(buf);

	for (k = MDP3_PACKET_HEADER_SIZE + MDP3_MESSAGE_HEADER_SIZE; k < n; k++) {
		uint8_t cut[256];

		memcpy(cut, tmp, k);
		put16(cut + MDP3_PACKET_HEADER_SIZE, (uint16_t)(k - MDP3_PACKET_HEADER_SIZE));
		buf = exact_copy(cut, k);
		s.messages = 0;
		assert_int_equal(mdp3_walk_packet(&w, buf, k), -EBADMSG);
		dropped++;
		assert_int_equal(s.messages, 0);
		assert_int_equal(w.counters.packets_dropped, dropped);
		assert_int_equal(mdp3_packet_validate(NULL, buf, k, &e), -EBADMSG);
		assert_int_not_equal(e.reason, MDP3_REASON_NONE);
		assert_int_equal(w.last_error.reason, e.reason);
		assert_int_equal(w.last_error.offset, e.offset);
		assert_int_equal(w.last_error.msg_index, 0);
		assert_int_equal(w.last_error.template_id, 42);
		assert_int_equal(e.template_id, 42);
		free(buf);
	}
	/* Every fault was counted under its reason. */
	{
		uint64_t sum = 0;
		unsigned int r;

		for (r = 0; r < MDP3_REASON_COUNT; r++)
			sum += w.counters.reason[r];
		assert_int_equal(sum, dropped);
	}

	/* MsgSize one past the packet: not the single path, still dropped. */
	buf = exact_copy(tmp, n);
	put16(buf + MDP3_PACKET_HEADER_SIZE, (uint16_t)(n - MDP3_PACKET_HEADER_SIZE + 1));
	assert_int_equal(mdp3_walk_packet(&w, buf, n), -EBADMSG);
	assert_int_equal(w.last_error.reason, MDP3_REASON_MSG_SIZE_TOO_LARGE);
	assert_int_equal(w.last_error.offset, MDP3_PACKET_HEADER_SIZE);
	free(buf);

	/* Bytes past the last group (a newer version's extension): counted. */
	memset(tmp + n, 0x5a, 4);
	put16(tmp + MDP3_PACKET_HEADER_SIZE, (uint16_t)(n + 4 - MDP3_PACKET_HEADER_SIZE));
	buf = exact_copy(tmp, n + 4);
	s.messages = 0;
	assert_int_equal(mdp3_walk_packet(&w, buf, n + 4), 0);
	assert_int_equal(s.messages, 1);
	assert_int_equal(w.counters.trailing_bytes, 1);
	free(buf);

	/* An unknown template alone in its packet: skipped, counted, delivered as a skip. */
	put16(tmp + MDP3_PACKET_HEADER_SIZE + 4, 999);
	buf = exact_copy(tmp, n + 4);
	s.messages = 0;
	assert_int_equal(mdp3_walk_packet(&w, buf, n + 4), 0);
	assert_int_equal(s.messages, 0);
	assert_int_equal(s.skips, 1);
	assert_int_equal(s.skip_reason, MDP3_REASON_UNKNOWN_TEMPLATE);
	assert_int_equal(s.skip_index, 0);
	assert_int_equal(w.counters.messages_skipped, 1);
	assert_int_equal(w.counters.reason[MDP3_REASON_UNKNOWN_TEMPLATE], 1);
	/* ... and an unknown schema */
	put16(tmp + MDP3_PACKET_HEADER_SIZE + 4, 42);
	put16(tmp + MDP3_PACKET_HEADER_SIZE + 6, 77);
	memcpy(buf, tmp, n + 4);
	assert_int_equal(mdp3_walk_packet(&w, buf, n + 4), 0);
	assert_int_equal(s.skips, 2);
	assert_int_equal(s.skip_reason, MDP3_REASON_UNKNOWN_SCHEMA);
	free(buf);
	assert_int_equal(w.counters.packets, dropped + 5);
}

static void
test_block_length_shorter(void **state)
{
	struct trade42 t;

	(void)state;
	/* Schema blockLength: the field is there. */
	walk_trade42(11, 32, 8, &t, 0, MDP3_REASON_NONE);
	assert_int_equal(t.rc_entry_id, 0);
	assert_int_equal(t.entry_id, 987654);
	assert_int_equal(t.security_id, 174969);
	assert_true(t.px == INT64_C(75800000000));
	/* Entry blockLength 26: MDTradeEntryID (since 7, offset 26) absent. */
	walk_trade42(11, 26, 8, &t, 0, MDP3_REASON_NONE);
	assert_int_equal(t.calls, 1);
	assert_int_equal(t.rc_entry_id, -ENOENT);
	assert_int_equal(t.security_id, 174969);
	/* Wire version 6 (before sinceVersion 7): absent although bytes exist. */
	walk_trade42(11, 32, 6, &t, 0, MDP3_REASON_NONE);
	assert_int_equal(t.rc_entry_id, -ENOENT);
	/* Shorter than the fields every version has: malformed. */
	walk_trade42(11, 25, 8, &t, -EBADMSG, MDP3_REASON_GROUP_BLOCK_TOO_SHORT);
	walk_trade42(8, 32, 8, &t, -EBADMSG, MDP3_REASON_BLOCK_TOO_SHORT);
	/* Root blockLength 9 still holds both root fields (padding cut). */
	walk_trade42(9, 32, 8, &t, 0, MDP3_REASON_NONE);
	assert_int_equal(t.block_length, 9);
	assert_int_equal(t.security_id, 174969);
}

static void
test_block_length_longer(void **state)
{
	struct trade42 t;

	(void)state;
	/* A newer encoder appended fields: read at schema offsets, skip the rest. */
	walk_trade42(20, 48, 8, &t, 0, MDP3_REASON_NONE);
	assert_int_equal(t.block_length, 20);
	assert_int_equal(t.security_id, 174969);
	assert_int_equal(t.rc_entry_id, 0);
	assert_int_equal(t.entry_id, 987654);
	assert_true(t.px == INT64_C(75800000000));
}

static void
test_nulls(void **state)
{
	struct trade42 t;

	(void)state;
	walk_trade42(11, 32, 8, &t, 0, MDP3_REASON_NONE);
	assert_int_equal(t.rc_orders, -ENODATA);    /* Int32NULL */
	assert_int_equal(t.rc_aggressor, -ENODATA); /* enum on uInt8NULL */
}

static int
read_v5_trade(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	int *rc = ctx;
	struct mdp3_group g;
	uint32_t u32;

	(void)pkt;
	assert_int_equal(msg->version, 5);
	assert_int_equal(msg->info->schema_version, 5);
	assert_int_equal(TS42(no_md_entries)(msg, &g), 0);
	assert_true(mdp3_group_next(&g));
	*rc = TS42(no_md_entries_md_trade_entry_id)(&g,
			&u32);
	return 0;
}

static void
test_real_v5_field_absent(void **state)
{
	struct mdp3_walker w;
	int rc = 1;
	struct mdp3_handler h = { .on_message = read_v5_trade, .ctx = &rc };

	(void)state;
	assert_int_equal(mdp3_walker_init(&w, NULL, &h), 0);
	assert_int_equal(mdp3_walk_packet(&w, pkt_v5_trade, sizeof(pkt_v5_trade)), 0);
	assert_int_equal(rc, -ENOENT);
}

static void
test_group_errors(void **state)
{
	struct mdp3_walker w;
	struct seen s;
	uint8_t tmp[256];
	uint8_t *buf;
	size_t n;

	(void)state;
	walker_for(&w, &s);
	/* numInGroup larger than the bytes left. */
	n = build_v8_trade42(tmp, 11, 32, 8);
	tmp[MDP3_PACKET_HEADER_SIZE + MDP3_MESSAGE_HEADER_SIZE + 11 + 2] = 9;
	buf = exact_copy(tmp, n);
	assert_int_equal(mdp3_walk_packet(&w, buf, n), -EBADMSG);
	assert_int_equal(w.last_error.reason, MDP3_REASON_GROUP_PAST_END);
	free(buf);
	/* MsgSize ends inside the second group's dimension header. */
	n = build_v8_trade42(tmp, 11, 32, 8);
	put16(tmp + MDP3_PACKET_HEADER_SIZE, (uint16_t)(n - MDP3_PACKET_HEADER_SIZE - 4));
	buf = exact_copy(tmp, n - 4);
	assert_int_equal(mdp3_walk_packet(&w, buf, n - 4), -EBADMSG);
	assert_int_equal(w.last_error.reason, MDP3_REASON_GROUP_HEADER_PAST_END);
	free(buf);
	/* Root blockLength past MsgSize. */
	n = build_v8_trade42(tmp, 11, 32, 8);
	put16(tmp + MDP3_PACKET_HEADER_SIZE + 2, 200);
	buf = exact_copy(tmp, n);
	assert_int_equal(mdp3_walk_packet(&w, buf, n), -EBADMSG);
	assert_int_equal(w.last_error.reason, MDP3_REASON_BLOCK_PAST_END);
	free(buf);
	/* MsgSize below the header size. */
	n = build_v8_trade42(tmp, 11, 32, 8);
	put16(tmp + MDP3_PACKET_HEADER_SIZE, 9);
	buf = exact_copy(tmp, n);
	assert_int_equal(mdp3_walk_packet(&w, buf, n), -EBADMSG);
	assert_int_equal(w.last_error.reason, MDP3_REASON_MSG_SIZE_TOO_SMALL);
	free(buf);
	assert_int_equal(s.messages, 0);
	assert_int_equal(w.counters.packets_dropped, 4);
	assert_string_equal(mdp3_reason_name(MDP3_REASON_GROUP_PAST_END), "group_past_end");
	assert_string_equal(mdp3_reason_name(MDP3_REASON_COUNT), "unknown");
}

static int
read_tcp(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct seen *s = ctx;
	struct mdp3_group g;
	struct mdp3_decimal px;
	uint64_t size;
	int32_t sec;

	assert_int_equal(pkt->framing, MDP3_FRAMING_TCP);
	if (msg->template_id == 68) {
		assert_int_equal(pkt->msg_seq_num, 8);
		assert_int_equal(SNAP68(security_id)(msg, &sec), 0);
		assert_int_equal(sec, 11827320);
		assert_int_equal(SNAP68(high_limit_price)(msg, &px), -ENODATA);
		assert_int_equal(SNAP68(low_limit_price)(msg, &px), 0);
		assert_true(px.mantissa == 50000 && px.exponent == -9);
		assert_int_equal(SNAP68(no_md_entries)(msg, &g), 0);
		assert_int_equal(g.count, 10);
		assert_true(mdp3_group_next(&g));
		assert_int_equal(SNAP68(no_md_entries_md_entry_size)(&g, &size), 0);
		assert_true(size == 1000000);
	} else {
		assert_int_equal(msg->template_id, MDP3_TEMPLATE_REQUEST_ACK206);
		assert_int_equal(msg->schema_id, 2);
	}
	return count_message(s, pkt, msg);
}

static void
test_tcp_frames(void **state)
{
	struct mdp3_walker w;
	struct seen s;
	struct mdp3_handler h = { .on_message = read_tcp, .ctx = &s };
	uint8_t two[sizeof(seg_tcp_v12) + sizeof(seg_tcp_ack)];
	uint8_t *buf;
	size_t len;
	int rc;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(mdp3_walker_init(&w, NULL, &h), 0);
	memcpy(two, seg_tcp_v12, sizeof(seg_tcp_v12));
	memcpy(two + sizeof(seg_tcp_v12), seg_tcp_ack, sizeof(seg_tcp_ack));
	buf = exact_copy(two, sizeof(two));
	assert_int_equal(mdp3_walk_tcp(&w, buf, sizeof(two)), 0);
	assert_int_equal(s.messages, 2);
	assert_int_equal(w.counters.packets, 2);
	free(buf);
	/* Every truncation of one frame. */
	for (len = 1; len < sizeof(seg_tcp_v12); len++) {
		buf = exact_copy(seg_tcp_v12, len);
		s.messages = 0;
		rc = mdp3_walk_tcp(&w, buf, len);
		assert_int_equal(rc, -EBADMSG);
		assert_int_equal(s.messages, 0);
		if (len < MDP3_TCP_HEADER_SIZE) {
			assert_int_equal(w.last_error.reason, MDP3_REASON_SHORT_PACKET);
		} else if (len < MDP3_TCP_HEADER_SIZE + MDP3_MESSAGE_HEADER_SIZE) {
			assert_int_equal(w.last_error.reason, MDP3_REASON_SHORT_MESSAGE_HEADER);
		} else {
			assert_int_equal(w.last_error.reason, MDP3_REASON_MSG_SIZE_TOO_LARGE);
		}
		free(buf);
	}
	/* Not 0xCAFE (an iLink 3 SOFH starts with the length). */
	memcpy(two, seg_tcp_v12, sizeof(seg_tcp_v12));
	two[0] = 0x1a;
	assert_int_equal(mdp3_walk_tcp(&w, two, sizeof(seg_tcp_v12)), -EBADMSG);
	assert_int_equal(w.last_error.reason, MDP3_REASON_BAD_ENCODING_TYPE);
	/* Second frame bad: first delivered, offset points at the second. */
	memcpy(two, seg_tcp_v12, sizeof(seg_tcp_v12));
	memcpy(two + sizeof(seg_tcp_v12), seg_tcp_ack, sizeof(seg_tcp_ack));
	two[sizeof(seg_tcp_v12)] = 0;
	s.messages = 0;
	assert_int_equal(mdp3_walk_tcp(&w, two, sizeof(two)), -EBADMSG);
	assert_int_equal(s.messages, 1);
	assert_int_equal(w.last_error.offset, sizeof(seg_tcp_v12));
}

static void
test_generic_metadata(void **state)
{
	const struct mdp3_message_info *info = mdp3_lookup(NULL, 1, 9, 46);
	const struct mdp3_block_info *g;
	const struct mdp3_field_info *f;

	(void)state;
	assert_non_null(info);
	assert_string_equal(info->name, "MDIncrementalRefreshBook46");
	assert_int_equal(info->root.group_count, 2);
	g = &info->root.groups[0];
	assert_string_equal(g->name, "NoMDEntries");
	assert_int_equal(g->dim_size, 3);
	assert_int_equal(info->root.groups[1].dim_size, 8); /* groupSize8Byte */
	assert_int_equal(info->root.groups[1].dim_num_in_group_offset, 7);
	f = &g->fields[0];
	assert_string_equal(f->name, "MDEntryPx");
	assert_string_equal(f->type->name, "PRICENULL9");
	assert_true(f->type->is_decimal);
	assert_int_equal(f->type->members[1].type->constant_value, -9);
	assert_true(mdp3_type_is_null(f->type->members[0].type,
			(uint64_t)INT64_C(9223372036854775807)));
	f = &g->fields[g->field_count - 1];
	assert_string_equal(f->name, "MDEntryType");
	assert_string_equal(mdp3_enum_name(f->type, 'E'), "ImpliedBid");
	assert_null(mdp3_enum_name(f->type, 'Z'));
	assert_int_equal(errno, ENOENT);
	assert_true(mdp3_load((const uint8_t *)"\xff\xff", MDP3_PRIM_INT16) == UINT64_MAX);
	assert_true(mdp3_dictionary_cme.message_count > 100);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_packet_accessors),
		cmocka_unit_test(test_truncated_every_offset),
		cmocka_unit_test(test_corrupt_msg_size_every_value),
		cmocka_unit_test(test_corrupt_every_byte),
		cmocka_unit_test(test_unknown_schema_and_template),
		cmocka_unit_test(test_version_fallback),
		cmocka_unit_test(test_callback_stops_walk),
		cmocka_unit_test(test_block_length_shorter),
		cmocka_unit_test(test_block_length_longer),
		cmocka_unit_test(test_nulls),
		cmocka_unit_test(test_real_v5_field_absent),
		cmocka_unit_test(test_group_errors),
		cmocka_unit_test(test_tcp_frames),
		cmocka_unit_test(test_generic_metadata),
		cmocka_unit_test(test_packet_longer_than_batch),
		cmocka_unit_test(test_single_message_packet),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
