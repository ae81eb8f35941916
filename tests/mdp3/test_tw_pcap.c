/* SPDX-License-Identifier: BSD-3-Clause
 * lib/pcap: classic pcap (usec/nsec, both byte orders), pcapng (tsresol,
 * tsoffset, EPB/SPB/PB, two sections of different byte order, skipped
 * blocks), corrupt files, and the L2-L4 parser (VLAN, QinQ, padding,
 * fragments, TCP).  tw_pcap.h is the first include: it compiles alone.
 */
#include "tw_pcap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tw_test.h"

struct buf {
	uint8_t data[4096];
	size_t len;
	int big_endian;
};

static void
b_put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->data));
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void
b_u8(struct buf *b, uint8_t v)
{
	b_put(b, &v, 1);
}

static void
b_u16(struct buf *b, uint16_t v)
{
	uint8_t x[2];

	if (b->big_endian) {
		x[0] = (uint8_t)(v >> 8);
		x[1] = (uint8_t)v;
	} else {
		x[0] = (uint8_t)v;
		x[1] = (uint8_t)(v >> 8);
	}
	b_put(b, x, 2);
}

static void
b_u32(struct buf *b, uint32_t v)
{
	if (b->big_endian) {
		b_u16(b, (uint16_t)(v >> 16));
		b_u16(b, (uint16_t)v);
	} else {
		b_u16(b, (uint16_t)v);
		b_u16(b, (uint16_t)(v >> 16));
	}
}

static void
b_set32(struct buf *b, size_t at, uint32_t v)
{
	size_t save = b->len;

	b->len = at;
	b_u32(b, v);
	b->len = save;
}

static const uint8_t frame_a[] = { 1, 2, 3, 4, 5 };
static const uint8_t frame_b[] = { 9, 8, 7 };

static void
classic(struct buf *b, uint32_t magic, int big_endian)
{
	memset(b, 0, sizeof(*b));
	b->big_endian = big_endian;
	b_u32(b, magic);
	b_u16(b, 2);
	b_u16(b, 4);
	b_u32(b, 0);
	b_u32(b, 0);
	b_u32(b, 65535);
	b_u32(b, 1);
	b_u32(b, 1000);
	b_u32(b, 500);
	b_u32(b, sizeof(frame_a));
	b_u32(b, 60);
	b_put(b, frame_a, sizeof(frame_a));
	b_u32(b, 1001);
	b_u32(b, 0);
	b_u32(b, sizeof(frame_b));
	b_u32(b, sizeof(frame_b));
	b_put(b, frame_b, sizeof(frame_b));
}

static void
test_classic_variants(void **state)
{
	static const struct {
		uint32_t magic;
		int be;
		uint64_t frac_ns;
		enum tw_pcap_format fmt;
	} v[] = {
		{ 0xa1b2c3d4u, 0, 500000, TW_PCAP_FORMAT_CLASSIC_USEC },
		{ 0xa1b2c3d4u, 1, 500000, TW_PCAP_FORMAT_CLASSIC_USEC },
		{ 0xa1b23c4du, 0, 500, TW_PCAP_FORMAT_CLASSIC_NSEC },
		{ 0xa1b23c4du, 1, 500, TW_PCAP_FORMAT_CLASSIC_NSEC },
	};
	struct tw_pcap_frame f;
	struct tw_pcap *p;
	struct buf b;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		classic(&b, v[i].magic, v[i].be);
		p = tw_pcap_open_memory(b.data, b.len);
		assert_non_null(p);
		assert_int_equal(tw_pcap_format(p), v[i].fmt);
		assert_int_equal(tw_pcap_next(p, &f), 1);
		assert_int_equal(f.number, 1);
		assert_true(f.time_ns == UINT64_C(1000) * 1000000000u + v[i].frac_ns);
		assert_int_equal(f.caplen, sizeof(frame_a));
		assert_int_equal(f.origlen, 60);
		assert_int_equal(f.linktype, TW_PCAP_LINKTYPE_ETHERNET);
		assert_memory_equal(f.data, frame_a, sizeof(frame_a));
		assert_int_equal(tw_pcap_next(p, &f), 1);
		assert_int_equal(f.number, 2);
		assert_memory_equal(f.data, frame_b, sizeof(frame_b));
		assert_int_equal(tw_pcap_next(p, &f), 0);
		assert_string_equal(tw_pcap_error(p), "");
		tw_pcap_close(p);
	}
}

static void
test_classic_corrupt(void **state)
{
	struct tw_pcap_frame f;
	struct tw_pcap *p;
	struct buf b;
	size_t cut;

	(void)state;
	classic(&b, 0xa1b2c3d4u, 0);
	/* Cut inside the second record: frame 1 reads, then -EPROTO. */
	for (cut = 24 + 16 + sizeof(frame_a) + 1; cut < b.len; cut++) {
		p = tw_pcap_open_memory(b.data, cut);
		assert_non_null(p);
		assert_int_equal(tw_pcap_next(p, &f), 1);
		assert_int_equal(tw_pcap_next(p, &f), -EPROTO);
		assert_non_null(strstr(tw_pcap_error(p), "file offset 45"));
		assert_int_equal(tw_pcap_next(p, &f), -EPROTO);
		tw_pcap_close(p);
	}
	/* Bad magic, short header. */
	errno = 0;
	assert_null(tw_pcap_open_memory("NOTAPCAPFILEATALL.......", 24));
	assert_int_equal(errno, EPROTO);
	assert_null(tw_pcap_open_memory(b.data, 20));
	assert_int_equal(errno, EPROTO);
	/* Microsecond fraction out of range. */
	classic(&b, 0xa1b2c3d4u, 0);
	b_set32(&b, 24 + 4, 1000000);
	p = tw_pcap_open_memory(b.data, b.len);
	assert_int_equal(tw_pcap_next(p, &f), -EPROTO);
	tw_pcap_close(p);
}

/* pcapng helpers: a block is type, total length, body, total length. */
static size_t
ng_begin(struct buf *b, uint32_t type)
{
	size_t at = b->len;

	b_u32(b, type);
	b_u32(b, 0);
	return at;
}

static void
ng_end(struct buf *b, size_t at)
{
	uint32_t total;

	while (b->len % 4)
		b_u8(b, 0);
	total = (uint32_t)(b->len - at + 4);
	b_u32(b, total);
	b_set32(b, at + 4, total);
}

static void
ng_shb(struct buf *b)
{
	size_t at;

	if (b->big_endian) {
		const uint8_t t[] = { 0x0a, 0x0d, 0x0d, 0x0a };

		at = b->len;
		b_put(b, t, 4);
		b_u32(b, 0);
	} else {
		at = ng_begin(b, 0x0A0D0D0Au);
	}
	b_u32(b, 0x1A2B3C4Du);
	b_u16(b, 1);
	b_u16(b, 0);
	b_u32(b, 0xffffffffu);
	b_u32(b, 0xffffffffu);
	ng_end(b, at);
}

static void
ng_idb(struct buf *b, uint16_t linktype, int tsresol, int64_t tsoffset)
{
	size_t at = ng_begin(b, 1);

	b_u16(b, linktype);
	b_u16(b, 0);
	b_u32(b, 0);
	if (tsresol >= 0) {
		b_u16(b, 9);
		b_u16(b, 1);
		b_u8(b, (uint8_t)tsresol);
		b_u8(b, 0);
		b_u16(b, 0);
	}
	if (tsoffset != 0) {
		b_u16(b, 14);
		b_u16(b, 8);
		b_u32(b, (uint32_t)(uint64_t)tsoffset);
		b_u32(b, (uint32_t)((uint64_t)tsoffset >> 32));
	}
	b_u16(b, 0);
	b_u16(b, 0);
	ng_end(b, at);
}

static void
ng_epb(struct buf *b, uint32_t ifid, uint64_t ts, const uint8_t *d, uint32_t n)
{
	size_t at = ng_begin(b, 6);

	b_u32(b, ifid);
	b_u32(b, (uint32_t)(ts >> 32));
	b_u32(b, (uint32_t)ts);
	b_u32(b, n);
	b_u32(b, n + 10);
	b_put(b, d, n);
	ng_end(b, at);
}

static void
test_pcapng(void **state)
{
	struct tw_pcap_frame f;
	struct tw_pcap *p;
	struct buf b;
	size_t at;

	(void)state;
	memset(&b, 0, sizeof(b));
	ng_shb(&b);
	ng_idb(&b, 1, -1, 0);          /* interface 0: default microseconds */
	ng_idb(&b, 101, 9, 0);         /* interface 1: nanoseconds, raw IP */
	ng_idb(&b, 1, 0x80 | 20, 100); /* interface 2: 2^-20 s, offset 100 s */
	at = ng_begin(&b, 4);          /* a name resolution block: skipped */
	b_u32(&b, 0);
	ng_end(&b, at);
	ng_epb(&b, 0, UINT64_C(1500000000123456), frame_a, sizeof(frame_a));
	ng_epb(&b, 1, UINT64_C(1500000000123456789), frame_b, sizeof(frame_b));
	ng_epb(&b, 2, (UINT64_C(7) << 20) | (1u << 19), frame_a, 2);
	at = ng_begin(&b, 3);          /* simple packet block, interface 0 */
	b_u32(&b, sizeof(frame_b));
	b_put(&b, frame_b, sizeof(frame_b));
	ng_end(&b, at);
	/* A second section, big-endian, resets the interfaces. */
	b.big_endian = 1;
	ng_shb(&b);
	ng_idb(&b, 1, 9, 0);
	ng_epb(&b, 0, 42, frame_b, sizeof(frame_b));

	p = tw_pcap_open_memory(b.data, b.len);
	assert_non_null(p);
	assert_int_equal(tw_pcap_format(p), TW_PCAP_FORMAT_PCAPNG);
	assert_int_equal(tw_pcap_next(p, &f), 1);
	assert_true(f.time_ns == UINT64_C(1500000000123456000));
	assert_int_equal(f.caplen, sizeof(frame_a));
	assert_int_equal(f.origlen, sizeof(frame_a) + 10);
	assert_memory_equal(f.data, frame_a, sizeof(frame_a));
	assert_int_equal(tw_pcap_next(p, &f), 1);
	assert_true(f.time_ns == UINT64_C(1500000000123456789));
	assert_int_equal(f.linktype, TW_PCAP_LINKTYPE_RAW);
	assert_int_equal(f.interface_id, 1);
	assert_int_equal(tw_pcap_next(p, &f), 1);
	assert_true(f.time_ns == UINT64_C(107500000000));
	assert_int_equal(f.caplen, 2);
	assert_int_equal(tw_pcap_next(p, &f), 1);
	assert_int_equal(f.caplen, sizeof(frame_b));
	assert_memory_equal(f.data, frame_b, sizeof(frame_b));
	assert_int_equal(tw_pcap_next(p, &f), 1);
	assert_int_equal(f.number, 5);
	assert_true(f.time_ns == 42);
	assert_memory_equal(f.data, frame_b, sizeof(frame_b));
	assert_int_equal(tw_pcap_next(p, &f), 0);
	tw_pcap_close(p);

	/* Every truncation either ends cleanly at a block boundary or fails. */
	for (at = 4; at < b.len; at++) {
		int rc;

		p = tw_pcap_open_memory(b.data, at);
		if (p == NULL)
			continue;
		while ((rc = tw_pcap_next(p, &f)) == 1)
			assert_true(f.data + f.caplen <= b.data + at);
		assert_true(rc == 0 || rc == -EPROTO);
		tw_pcap_close(p);
	}
}

static void
test_open_file(void **state)
{
	char path[] = "/tmp/tw_pcap_test_XXXXXX";
	struct tw_pcap_frame f;
	struct tw_pcap *p;
	struct buf b;
	int fd;

	(void)state;
	classic(&b, 0xa1b23c4du, 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
	close(fd);
	p = tw_pcap_open(path);
	assert_non_null(p);
	assert_int_equal(tw_pcap_next(p, &f), 1);
	assert_int_equal(tw_pcap_next(p, &f), 1);
	assert_int_equal(tw_pcap_next(p, &f), 0);
	tw_pcap_close(p);
	unlink(path);
	errno = 0;
	assert_null(tw_pcap_open(path));
	assert_int_equal(errno, ENOENT);
	assert_null(tw_pcap_open(NULL));
	assert_int_equal(errno, EINVAL);
	tw_pcap_close(NULL);
}

/* Ethernet frame: vlans tags (TPIDs given), IPv4, UDP or TCP, payload, pad. */
static size_t
eth_frame(uint8_t *f, const uint16_t *tpids, unsigned int ntags, uint8_t proto,
		uint16_t frag, const uint8_t *payload, uint16_t plen, unsigned int pad)
{
	size_t o = 12, ip, l4len = (proto == 6 ? 20u : 8u) + plen;
	unsigned int i;

	memset(f, 0xab, 12);
	for (i = 0; i < ntags; i++) {
		f[o] = (uint8_t)(tpids[i] >> 8);
		f[o + 1] = (uint8_t)tpids[i];
		f[o + 2] = 0x20;
		f[o + 3] = (uint8_t)(10 + i);
		o += 4;
	}
	f[o] = 0x08;
	f[o + 1] = 0x00;
	o += 2;
	ip = o;
	memset(f + ip, 0, 20);
	f[ip] = 0x45;
	f[ip + 2] = (uint8_t)((20 + l4len) >> 8);
	f[ip + 3] = (uint8_t)(20 + l4len);
	f[ip + 6] = (uint8_t)(frag >> 8);
	f[ip + 7] = (uint8_t)frag;
	f[ip + 8] = 64;
	f[ip + 9] = proto;
	f[ip + 12] = 205;
	f[ip + 13] = 209;
	f[ip + 14] = 221;
	f[ip + 15] = 71;
	f[ip + 16] = 224;
	f[ip + 17] = 0;
	f[ip + 18] = 31;
	f[ip + 19] = 64;
	o = ip + 20;
	memset(f + o, 0, proto == 6 ? 20 : 8);
	f[o] = 0x37;
	f[o + 1] = 0xe4;
	f[o + 2] = 0x37;
	f[o + 3] = 0xe4; /* 14308 -> 14308 */
	if (proto == 6) {
		f[o + 7] = 99;
		f[o + 12] = 0x50;
		f[o + 13] = 0x18;
		o += 20;
	} else {
		f[o + 4] = (uint8_t)((8 + plen) >> 8);
		f[o + 5] = (uint8_t)(8 + plen);
		o += 8;
	}
	memcpy(f + o, payload, plen);
	o += plen;
	memset(f + o, 0, pad);
	return o + pad;
}

static void
test_l4_parser(void **state)
{
	static const uint16_t one_vlan[] = { 0x8100 };
	static const uint16_t qinq[] = { 0x88a8, 0x8100 };
	static const uint16_t five[] = { 0x8100, 0x8100, 0x8100, 0x8100, 0x8100 };
	static const uint8_t pl[] = { 0xde, 0xad, 0xbe, 0xef };
	struct tw_pcap_l4_counters c;
	struct tw_pcap_l4 l4;
	uint8_t f[256];
	size_t n, cut;

	(void)state;
	memset(&c, 0, sizeof(c));
	/* Plain UDP with Ethernet padding: payload trimmed to the UDP length. */
	n = eth_frame(f, NULL, 0, 17, 0, pl, sizeof(pl), 14);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), 0);
	assert_int_equal(l4.protocol, 17);
	assert_int_equal(l4.dst_ip, 0xe0001f40u);
	assert_int_equal(l4.src_ip, 0xcdd1dd47u);
	assert_int_equal(l4.dst_port, 14308);
	assert_int_equal(l4.payload_length, sizeof(pl));
	assert_memory_equal(l4.payload, pl, sizeof(pl));
	/* 802.1Q and QinQ. */
	n = eth_frame(f, one_vlan, 1, 17, 0, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), 0);
	assert_int_equal(l4.vlan_count, 1);
	assert_int_equal(l4.vlan[0], 0x200a);
	n = eth_frame(f, qinq, 2, 17, 0, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), 0);
	assert_int_equal(l4.vlan_count, 2);
	assert_int_equal(l4.vlan[1], 0x200b);
	assert_memory_equal(l4.payload, pl, sizeof(pl));
	n = eth_frame(f, five, 5, 17, 0, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), -ENOMSG);
	assert_int_equal(l4.reason, TW_PCAP_L4_TOO_MANY_VLANS);
	/* Fragments: more-fragments flag, or an offset. */
	n = eth_frame(f, NULL, 0, 17, 0x2000, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), -ENOMSG);
	assert_int_equal(l4.reason, TW_PCAP_L4_IPV4_FRAGMENT);
	n = eth_frame(f, NULL, 0, 17, 0x0010, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), -ENOMSG);
	assert_int_equal(c.reason[TW_PCAP_L4_IPV4_FRAGMENT], 2);
	/* TCP. */
	n = eth_frame(f, one_vlan, 1, 6, 0x4000, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), 0);
	assert_int_equal(l4.protocol, 6);
	assert_int_equal(l4.tcp_seq, 99);
	assert_int_equal(l4.tcp_flags, 0x18);
	assert_int_equal(l4.payload_length, sizeof(pl));
	/* Another IP protocol (PIM). */
	n = eth_frame(f, NULL, 0, 103, 0, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), -ENOMSG);
	assert_int_equal(l4.reason, TW_PCAP_L4_NOT_UDP_OR_TCP);
	assert_int_equal(l4.protocol, 103);
	/* ARP. */
	n = eth_frame(f, NULL, 0, 17, 0, pl, sizeof(pl), 0);
	f[12] = 0x08;
	f[13] = 0x06;
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 1, &l4, &c), -ENOMSG);
	assert_int_equal(l4.reason, TW_PCAP_L4_NOT_IPV4);
	/* Every cut of a QinQ UDP frame is refused, never read past. */
	n = eth_frame(f, qinq, 2, 17, 0, pl, sizeof(pl), 0);
	for (cut = 0; cut < n; cut++) {
		uint8_t *q = malloc(cut > 0 ? cut : 1);

		assert_non_null(q);
		memcpy(q, f, cut);
		assert_int_equal(tw_pcap_parse_frame(q, (uint32_t)cut, 1, &l4, &c), -ENOMSG);
		free(q);
	}
	/* Raw IPv4 link type and an unknown one. */
	n = eth_frame(f, NULL, 0, 17, 0, pl, sizeof(pl), 0);
	assert_int_equal(tw_pcap_parse_frame(f + 14, (uint32_t)n - 14, TW_PCAP_LINKTYPE_RAW,
			&l4, &c), 0);
	assert_int_equal(tw_pcap_parse_frame(f, (uint32_t)n, 999, &l4, &c), -ENOMSG);
	assert_int_equal(l4.reason, TW_PCAP_L4_UNSUPPORTED_LINKTYPE);
	assert_string_equal(tw_pcap_l4_reason_name(TW_PCAP_L4_IPV4_FRAGMENT), "ipv4_fragment");
	assert_int_equal(tw_pcap_parse_frame(NULL, 0, 1, &l4, &c), -EINVAL);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classic_variants),
		cmocka_unit_test(test_classic_corrupt),
		cmocka_unit_test(test_pcapng),
		cmocka_unit_test(test_open_file),
		cmocka_unit_test(test_l4_parser),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
