/* SPDX-License-Identifier: BSD-3-Clause
 * The feed path's update path allocates nothing (app/feed: the arbiter, walker
 * and books): malloc and friends are wrapped
 * at link time (-Wl,--wrap=..., non-sanitized builds) and counted while
 * packets go through arbitration (with holds and declared losses), decoding,
 * books, events, the recovery buffer, a snapshot with replay, a channel
 * reset, definitions and their removal, and the real v6 capture with drops
 * (skipped only when the CME data directory, argv[1], is missing).
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

#include "tw_alloc_count.h"

static const char *cme_data;

static uint64_t events;

static void
on_event(void *ctx, const struct book_event *e)
{
	(void)ctx;
	events += e->what;
}

static void
entry46(struct tp *p, int32_t sid, uint32_t rpt, uint8_t action, char type, uint8_t level,
		int64_t px)
{
	tp_entry(p);
	tp_set(p, "SecurityID", sid);
	tp_set(p, "RptSeq", rpt);
	tp_set(p, "MDUpdateAction", action);
	tp_set(p, "MDEntryType", type);
	tp_set(p, "MDPriceLevel", level);
	tp_set(p, "MDEntryPx", px);
	tp_set(p, "MDEntrySize", 1);
	tp_set(p, "NumberOfOrders", 1);
}

static void
test_update_path_allocates_nothing(void **state)
{
	struct tw_feed_config c = {
		.arb = { .wait_packets = 2 },
		.book = {
			.max_instruments = 64, .recovery_packets = 8,
			.handler = { .on_event = on_event },
		},
	};
	struct tw_feed *f = tw_feed_create(&c);
	/* built before counting: the builder is test code */
	static struct tp pk[12];
	size_t len[12];
	uint32_t seq;
	int i;

	(void)state;
	assert_non_null(f);
	for (seq = 1; seq <= 8; seq++) {
		tp_packet(&pk[seq], seq, 0);
		tp_msg(&pk[seq], 46, 9);
		tp_set(&pk[seq], "MatchEventIndicator", 0x80);
		tp_group(&pk[seq], "NoMDEntries");
		entry46(&pk[seq], 1, seq, 0, '0', 1, (int64_t)seq * 1000000000);
		entry46(&pk[seq], 2, seq, 0, 'E', 1, (int64_t)seq * 1000000000);
		len[seq] = tp_end(&pk[seq]);
	}
	tp_packet(&pk[9], 1, 0);                      /* snapshot of 1, as of packet 4 */
	tp_msg(&pk[9], 52, 9);
	tp_set(&pk[9], "LastMsgSeqNumProcessed", 4);
	tp_set(&pk[9], "SecurityID", 1);
	tp_set(&pk[9], "RptSeq", 4);
	tp_group(&pk[9], "NoMDEntries");
	tp_entry(&pk[9]);
	tp_set(&pk[9], "MDEntryType", '0');
	tp_set(&pk[9], "MDPriceLevel", 1);
	tp_set(&pk[9], "MDEntryPx", 4000000000);
	len[9] = tp_end(&pk[9]);
	tp_packet(&pk[10], 9, 0);                      /* channel reset */
	tp_msg(&pk[10], 4, 9);
	tp_group(&pk[10], "NoMDEntries");
	tp_entry(&pk[10]);
	len[10] = tp_end(&pk[10]);
	tp_packet(&pk[11], 1, 0);                      /* definition, then its delete */
	tp_msg(&pk[11], 54, 9);
	tp_set(&pk[11], "SecurityUpdateAction", 'A');
	tp_set(&pk[11], "SecurityID", 3);
	tp_set_str(&pk[11], "Symbol", "ESZ6");
	len[11] = tp_end(&pk[11]);

	tw_alloc_counting = 1;
	for (i = 0; i < 50; i++) {
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[1].buf, len[1], 0);
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_B, pk[1].buf, len[1], 0);
		/* 2 lost: 3 held, loss declared, 1 and 2 go stale, buffer fills */
		for (seq = 3; seq <= 8; seq++)
			tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[seq].buf,
					len[seq], seq);
		tw_feed_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, pk[9].buf, len[9], 0);
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[10].buf, len[10], 9);
		tw_feed_packet(f, MDP3_STREAM_DEFINITION, MDP3_FEED_A, pk[11].buf, len[11], 0);
		pk[11].buf[MDP3_PACKET_HEADER_SIZE + MDP3_MESSAGE_HEADER_SIZE + 5] = 'D';
		tw_feed_packet(f, MDP3_STREAM_DEFINITION, MDP3_FEED_A, pk[11].buf, len[11], 0);
		pk[11].buf[MDP3_PACKET_HEADER_SIZE + MDP3_MESSAGE_HEADER_SIZE + 5] = 'A';
		tw_feed_poll(f, 100);
		tw_feed_finish(f, 100);
		/* the next round starts from a new feed (created outside the count) */
		tw_alloc_counting = 0;
		tw_feed_destroy(f);
		f = tw_feed_create(&c);
		assert_non_null(f);
		tw_alloc_counting = 1;
	}
	tw_alloc_counting = 0;
	assert_int_equal(tw_allocations, 0);
	assert_true(events != 0);
	tw_feed_destroy(f);
}

static void
test_capture_with_drops_allocates_nothing(void **state)
{
	char path[1024];
	struct tw_pcap_frame fr;
	struct tw_pcap_l4 l4;
	struct mdp3_routes routes;
	struct tw_feed_config c = { .book = { .handler = { .on_event = on_event } } };
	struct tw_feed *f;
	struct tw_pcap *pcap;
	uint64_t rng = 12345;
	struct stat st;

	(void)state;
	if (cme_data == NULL || stat(cme_data, &st) != 0 || !S_ISDIR(st.st_mode))
		skip();
	snprintf(path, sizeof(path), "%s/pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/"
			"Cme.Mdp3.Sbe.v6.1.pcap", cme_data);
	pcap = tw_pcap_open(path);
	if (pcap == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	mdp3_routes_init(&routes, true);
	f = tw_feed_create(&c);
	assert_non_null(f);
	tw_alloc_counting = 1;
	while (tw_pcap_next(pcap, &fr) == 1) {
		if (tw_pcap_parse_frame(fr.data, fr.caplen, fr.linktype, &l4, NULL) < 0)
			continue;
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		if ((rng >> 33) % 100 < 20)
			continue;
		tw_feed_datagram(f, &routes, l4.dst_ip, l4.dst_port, l4.payload,
				l4.payload_length, fr.time_ns);
	}
	tw_feed_finish(f, UINT64_MAX);
	tw_alloc_counting = 0;
	assert_int_equal(tw_allocations, 0);
	assert_true(book_feed_counters(f->book)->stale_books > 0);
	assert_true(book_feed_counters(f->book)->recovery_buffered > 0);
	tw_feed_destroy(f);
	tw_pcap_close(pcap);
}

/* Market by order (config.mbo): order entries of 46 and 47, a MsgSeqNum
 * jump (stale), the recovery buffer, a snapshot 53 with its replay, the
 * oracle at EndOfEvent, a ChannelReset; nothing allocates. */
static void
mbo_order(struct tp *p, uint64_t id, int64_t px, uint8_t action, bool in47)
{
	tp_entry(p);
	tp_set(p, "OrderID", (int64_t)id);
	tp_set(p, "MDOrderPriority", (int64_t)id);
	tp_set(p, "MDDisplayQty", 1);
	if (in47) {
		tp_set(p, "MDEntryPx", px);
		tp_set(p, "SecurityID", 1);
		tp_set(p, "MDUpdateAction", action);
		tp_set(p, "MDEntryType", '0');
	} else {
		tp_set(p, "ReferenceID", 1);
		tp_set(p, "OrderUpdateAction", action);
	}
}

static void
test_mbo_allocates_nothing(void **state)
{
	struct tw_feed_config c = {
		.book = { .mbo = true, .mbo_instruments = 4, .mbo_orders = 16, .mbo_levels = 8,
			.recovery_packets = 8, .handler = { .on_event = on_event } },
	};
	struct tw_feed *f = tw_feed_create(&c);
	static struct tp pk[8];
	size_t len[8];
	uint32_t seq;
	int i;

	(void)state;
	assert_non_null(f);
	tp_packet(&pk[1], 1, 0);                       /* channel reset */
	tp_msg(&pk[1], 4, 9);
	len[1] = tp_end(&pk[1]);
	for (seq = 2; seq <= 5; seq++) {               /* a level and its order, a deep order */
		tp_packet(&pk[seq], seq, 0);
		tp_msg(&pk[seq], 46, 9);
		tp_group(&pk[seq], "NoMDEntries");
		entry46(&pk[seq], 1, seq - 1, 0, '0', 1, (int64_t)seq * 1000000000);
		tp_group(&pk[seq], "NoOrderIDEntries");
		mbo_order(&pk[seq], seq, 0, 0, false);
		tp_msg(&pk[seq], 47, 9);
		tp_set(&pk[seq], "MatchEventIndicator", 0x80);
		tp_group(&pk[seq], "NoMDEntries");
		mbo_order(&pk[seq], 100 + seq, 1000000000, 0, true);
		len[seq] = tp_end(&pk[seq]);
	}
	tp_packet(&pk[6], 1, 0);                       /* snapshot 53 as of packet 4 */
	tp_msg(&pk[6], 53, 9);
	tp_set(&pk[6], "LastMsgSeqNumProcessed", 4);
	tp_set(&pk[6], "SecurityID", 1);
	tp_set(&pk[6], "NoChunks", 1);
	tp_set(&pk[6], "CurrentChunk", 1);
	tp_group(&pk[6], "NoMDEntries");
	tp_entry(&pk[6]);
	tp_set(&pk[6], "OrderID", 2);
	tp_set(&pk[6], "MDEntryPx", 2000000000);
	tp_set(&pk[6], "MDDisplayQty", 1);
	tp_set(&pk[6], "MDEntryType", '0');
	len[6] = tp_end(&pk[6]);

	tw_alloc_counting = 1;
	for (i = 0; i < 20; i++) {
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[1].buf, len[1], 0);
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[2].buf, len[2], 0);
		/* 3 lost for good: 4 and 5 held, then released stale */
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[4].buf, len[4], 0);
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[5].buf, len[5], 0);
		tw_feed_finish(f, 100);
		tw_feed_packet(f, MDP3_STREAM_SNAPSHOT, MDP3_FEED_A, pk[6].buf, len[6], 0);
		tw_feed_packet(f, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A, pk[1].buf, len[1], 0);
		tw_alloc_counting = 0;
		assert_true(book_feed_counters(f->book)->mbo_new > 0);
		assert_true(book_feed_counters(f->book)->mbo_snapshots > 0);
		assert_true(book_feed_counters(f->book)->mbo_checks > 0);
		tw_feed_destroy(f);
		f = tw_feed_create(&c);
		assert_non_null(f);
		tw_alloc_counting = 1;
	}
	tw_alloc_counting = 0;
	assert_int_equal(tw_allocations, 0);
	tw_feed_destroy(f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_update_path_allocates_nothing),
		cmocka_unit_test(test_mbo_allocates_nothing),
		cmocka_unit_test(test_capture_with_drops_allocates_nothing),
	};

	if (argc > 1)
		cme_data = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
