/* SPDX-License-Identifier: BSD-3-Clause
 * Nested repeating groups, 16-bit numInGroup and a group added in a later
 * version, on a test-only schema (nested_test_schema.xml) generated at build
 * time: MDP3 schemas have none of these, the generator and walker must.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "mdp3.h"
#include "mdp3nt_nested_gen.h"

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

/* Outer1: Stamp; NoOuter = [{OuterValue=10, NoInner=[]},
 * {OuterValue=-20, NoInner=[7, null, 9]}]; NoTail (since 2) = [{TailValue=5}]. */
static size_t
build(uint8_t *p, uint16_t version, uint16_t inner_block_length)
{
	size_t o = MDP3_PACKET_HEADER_SIZE, msg;
	unsigned int i;

	memset(p, 0, 256);
	put32(p, 77);
	msg = o;
	put16(p + o + 2, 8);
	put16(p + o + 4, 1);
	put16(p + o + 6, 99);
	put16(p + o + 8, version);
	o += MDP3_MESSAGE_HEADER_SIZE;
	put32(p + o, 123456);
	o += 8;
	put16(p + o, 4); /* NoOuter: blockLength 4, 2 entries */
	p[o + 2] = 2;
	o += 3;
	put32(p + o, 10);
	o += 4;
	put16(p + o, inner_block_length); /* NoInner: empty */
	put16(p + o + 2, 0);
	o += 4;
	put32(p + o, (uint32_t)-20);
	o += 4;
	put16(p + o, inner_block_length); /* NoInner: 3 entries */
	put16(p + o + 2, 3);
	o += 4;
	for (i = 0; i < 3; i++) {
		put16(p + o, i == 1 ? 0xffff : (uint16_t)(7 + i));
		o += inner_block_length;
	}
	if (version >= 2) {
		put16(p + o, 1); /* NoTail */
		p[o + 2] = 1;
		o += 3;
		p[o++] = 5;
	}
	put16(p + msg, (uint16_t)(o - msg));
	return o;
}

struct result {
	int calls;
	int32_t outer[2];
	uint16_t inner[3];
	int inner_rc[3];
	unsigned int inner_counts[2];
	int tail_rc;
	uint8_t tail;
};

static int
on_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct result *r = ctx;
	struct mdp3_group outer, inner, tail;
	unsigned int k = 0, n;
	uint64_t stamp;

	(void)pkt;
	r->calls++;
	assert_int_equal(msg->template_id, MDP3NT_TEMPLATE_OUTER1);
	assert_int_equal(mdp3nt_outer1_stamp(msg, &stamp), 0);
	assert_true(stamp == 123456);
	assert_int_equal(mdp3nt_outer1_no_outer(msg, &outer), 0);
	assert_int_equal(outer.count, 2);
	while (mdp3_group_next(&outer)) {
		assert_int_equal(mdp3nt_outer1_no_outer_outer_value(&outer,
				&r->outer[outer.index - 1]), 0);
		assert_int_equal(mdp3nt_outer1_no_outer_no_inner(&outer, &inner), 0);
		n = 0;
		while (mdp3_group_next(&inner)) {
			assert_true(k < 3);
			r->inner_rc[k] = mdp3nt_outer1_no_outer_no_inner_inner_value(&inner,
					&r->inner[k]);
			k++;
			n++;
		}
		r->inner_counts[outer.index - 1] = n;
	}
	r->tail_rc = mdp3nt_outer1_no_tail(msg, &tail);
	if (r->tail_rc == 0) {
		assert_true(mdp3_group_next(&tail));
		assert_int_equal(mdp3nt_outer1_no_tail_tail_value(&tail, &r->tail), 0);
	}
	return 0;
}

static void
walk(const uint8_t *p, size_t n, struct result *r, int expect)
{
	struct mdp3_walker w;
	struct mdp3_handler h = { .on_message = on_message, .ctx = r };
	uint8_t *buf = malloc(n > 0 ? n : 1);

	assert_non_null(buf);
	memcpy(buf, p, n);
	memset(r, 0, sizeof(*r));
	assert_int_equal(mdp3_walker_init(&w, &mdp3nt_dictionary_nested, &h), 0);
	assert_int_equal(mdp3_walk_packet(&w, buf, n), expect);
	free(buf);
}

static void
test_nested_groups(void **state)
{
	uint8_t p[256];
	struct result r;
	size_t n;

	(void)state;
	n = build(p, 2, 2);
	walk(p, n, &r, 0);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.outer[0], 10);
	assert_int_equal(r.outer[1], -20);
	assert_int_equal(r.inner_counts[0], 0);
	assert_int_equal(r.inner_counts[1], 3);
	assert_int_equal(r.inner[0], 7);
	assert_int_equal(r.inner_rc[1], -ENODATA);
	assert_int_equal(r.inner[2], 9);
	assert_int_equal(r.tail_rc, 0);
	assert_int_equal(r.tail, 5);
}

static void
test_nested_longer_blocks_and_old_version(void **state)
{
	uint8_t p[256];
	struct result r;
	size_t n;

	(void)state;
	/* Inner entries of 6 bytes (4 unknown): skipped by blockLength. */
	n = build(p, 2, 6);
	walk(p, n, &r, 0);
	assert_int_equal(r.inner[2], 9);
	assert_int_equal(r.tail, 5);
	/* Version 1 has no NoTail group on the wire. */
	n = build(p, 1, 2);
	walk(p, n, &r, 0);
	assert_int_equal(r.tail_rc, -ENOENT);
	assert_int_equal(r.inner[0], 7);
	/* Inner blockLength below its field. */
	n = build(p, 2, 1);
	walk(p, n, &r, -EBADMSG);
	assert_int_equal(r.calls, 0);
}

static void
test_nested_truncated_every_offset(void **state)
{
	uint8_t p[256];
	struct result r;
	size_t n, len;

	(void)state;
	n = build(p, 2, 2);
	for (len = 0; len < n; len++)
		walk(p, len, &r, len == MDP3_PACKET_HEADER_SIZE ? 0 : -EBADMSG);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_groups),
		cmocka_unit_test(test_nested_longer_blocks_and_old_version),
		cmocka_unit_test(test_nested_truncated_every_offset),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
