/* SPDX-License-Identifier: BSD-3-Clause
 * The walk path allocates nothing: malloc and friends are wrapped at link
 * time (-Wl,--wrap=..., non-sanitized builds) and counted while real packets,
 * TCP frames and malformed packets are walked and read through accessors.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "mdp3.h"
#include "mdp3_test_packets.h"

#include "tw_alloc_count.h"

static int
read_all(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	uint64_t *sum = ctx;
	struct mdp3_group g;
	unsigned int i;

	(void)pkt;
	for (i = 0; i < msg->info->root.group_count; i++) {
		if (mdp3_msg_group(msg, i, &g) < 0)
			continue;
		while (mdp3_group_next(&g))
			*sum += g.block_length;
	}
	*sum += msg->template_id;
	return 0;
}

static void
test_walk_allocates_nothing(void **state)
{
	struct mdp3_walker w;
	uint64_t sum = 0;
	struct mdp3_handler h = { .on_message = read_all, .ctx = &sum };
	uint8_t bad[sizeof(pkt_v9)];
	int i;

	(void)state;
	memcpy(bad, pkt_v9, sizeof(bad));
	bad[MDP3_PACKET_HEADER_SIZE + 112 + 40] = 0xff; /* MsgSize of message 2 */
	assert_int_equal(mdp3_walker_init(&w, NULL, &h), 0);
	tw_alloc_counting = 1;
	for (i = 0; i < 1000; i++) {
		assert_int_equal(mdp3_walk_packet(&w, pkt_v9, sizeof(pkt_v9)), 0);
		assert_int_equal(mdp3_walk_packet(&w, pkt_v5_trade, sizeof(pkt_v5_trade)), 0);
		assert_int_equal(mdp3_walk_tcp(&w, seg_tcp_v12, sizeof(seg_tcp_v12)), 0);
		assert_int_equal(mdp3_walk_packet(&w, bad, sizeof(bad)), -EBADMSG);
	}
	tw_alloc_counting = 0;
	assert_int_equal(tw_allocations, 0);
	assert_int_equal(w.counters.messages, 7000);
	assert_true(sum > 0);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_allocates_nothing),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
