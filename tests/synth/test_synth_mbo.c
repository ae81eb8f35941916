/* SPDX-License-Identifier: BSD-3-Clause
 * Market by order (lib/book, config.mbo) on tickwire-synth --mbo captures.
 *
 * The captures (feed A, feed B, snapshot channel) are replayed merged by
 * capture time through app/feed's path of one channel, as
 * test_synth_recovery does, with the MBO books on: lib/book's oracle then
 * compares, at every EndOfEvent, each valid MBO book aggregated (price, sum
 * of MDDisplayQty, order count of the best `depth` levels) with the
 * price-level book of the same channel.  Checks:
 *   always          the oracle made at least --min-checks comparisons and
 *                   found no difference; no bad, unknown or refused entry,
 *                   no overflow; at the end every MBO book is valid;
 *   --feeds LIST    one run per feed set (a, b, ab; default ab): the MBO
 *                   books (every order: side, price, OrderID, priority,
 *                   quantity, in queue order) hash the same in every run;
 *   --expect-clean  no MBO book ever went stale;
 *   --expect-recovery  MBO books went stale (a loss on both feeds), snapshots
 *                   53 made them valid again (mbo_snapshots > 0), and the
 *                   oracle went on comparing after the last one.
 *
 * usage: test_synth_mbo --a A.pcap --b B.pcap [--snapshot S.pcap]
 *        [--feeds a,b,ab] [--min-checks N] [--expect-clean] [--expect-recovery]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "mdp3_feed.h"
#include "tw_feed.h"
#include "tw_pcap.h"
#include "synth_replay.h"

#define MAX_ORDERS 4096

struct run {
	struct tw_feed *path;
	struct book_feed *feed;
	uint64_t snapshots_seen;
	uint64_t checks_at_last_snapshot;
	unsigned int failures;
};

static struct book_order orders[MAX_ORDERS];
static struct book_level levels[1024];

static void
on_packet(void *ctx, const struct book_packet_info *p)
{
	struct run *r = ctx;
	const struct book_feed_counters *c = book_feed_counters(r->feed);

	(void)p;
	if (c->mbo_snapshots != r->snapshots_seen) {
		r->snapshots_seen = c->mbo_snapshots;
		r->checks_at_last_snapshot = c->mbo_checks;
	}
}

static uint64_t
fnv(uint64_t h, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* Hash of every order of every MBO book; 0 and a failure if one is not valid. */
static uint64_t
hash_books(struct run *r, const char *feeds, uint64_t *order_count)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const struct book_instrument *in;
	const struct book_mbo *m;
	uint32_t i, cap = book_feed_capacity(r->feed);
	int side, n, k, j, got;

	*order_count = 0;
	for (i = 0; i < cap; i++) {
		in = book_feed_instrument(r->feed, i);
		if (in == NULL)
			continue;
		m = book_feed_mbo(r->feed, in->security_id);
		if (m == NULL || book_mbo_state(m) != BOOK_MBO_VALID) {
			printf("FAIL: feeds %s: SecurityID %" PRId32 ": MBO book %s\n", feeds,
					in->security_id, m == NULL ? "missing" :
					book_mbo_state_name(book_mbo_state(m)));
			r->failures++;
			return 0;
		}
		h = fnv(h, (uint64_t)(uint32_t)in->security_id);
		for (side = BOOK_BID; side <= BOOK_ASK; side++) {
			n = book_mbo_levels(m, (enum book_side)side, levels, 1024);
			for (k = 0; k < n; k++) {
				got = book_mbo_level_orders(m, (enum book_side)side, levels[k].price,
						orders, MAX_ORDERS);
				if (got < 0 || got != levels[k].orders) {
					printf("FAIL: feeds %s: SecurityID %" PRId32 ": level %d: %d "
							"orders read, %" PRId32 " counted\n", feeds,
							in->security_id, k + 1, got, levels[k].orders);
					r->failures++;
					return 0;
				}
				h = fnv(h, (uint64_t)side);
				h = fnv(h, (uint64_t)levels[k].price);
				for (j = 0; j < got; j++) {
					h = fnv(h, orders[j].order_id);
					h = fnv(h, orders[j].priority);
					h = fnv(h, (uint64_t)orders[j].qty);
				}
				*order_count += (uint64_t)got;
			}
		}
	}
	return h;
}

/* One replay of the captures through a fresh path with the feeds asked. */
static int
run_feeds(const char *const paths[3], const char *feeds, uint64_t min_checks,
		bool expect_clean, bool expect_recovery, uint64_t *hash)
{
	bool use_a = strchr(feeds, 'a') != NULL, use_b = strchr(feeds, 'b') != NULL;
	struct mdp3_route snap_route = { 0 };
	const struct book_feed_counters *c;
	struct book_mbo_diff diffs[4];
	struct tw_feed_config config;
	struct mdp3_routes routes;
	struct synth_source src[3];
	unsigned int n = 0, i;
	uint64_t last_ns = 0, order_count;
	struct run r;
	int rc, d;

	memset(&r, 0, sizeof(r));
	mdp3_routes_init(&routes, true);
	if (mdp3_route_parse("224.0.31.22/32", &snap_route) < 0)
		return -EINVAL;
	snap_route.stream = MDP3_STREAM_SNAPSHOT;
	snap_route.feed = MDP3_FEED_A;
	mdp3_routes_add(&routes, &snap_route);
	memset(&config, 0, sizeof(config));
	config.book.mbo = true;
	config.book.handler.on_packet = on_packet;
	config.book.handler.ctx = &r;
	r.path = tw_feed_create(&config);
	if (r.path == NULL) {
		printf("FAIL: tw_feed_create: %s\n", strerror(errno));
		return -errno;
	}
	r.feed = r.path->book;
	rc = synth_sources_open(paths, 3, src);
	if (rc < 0)
		return -EIO;
	n = (unsigned int)rc;
	if (synth_replay(r.path, src, n, &routes, use_a, use_b, &last_ns, &r.failures) < 0)
		return -EIO;
	tw_feed_finish(r.path, last_ns + 1000000000u);
	c = book_feed_counters(r.feed);
	if (c->mbo_checks < min_checks || c->mbo_mismatches != 0) {
		printf("FAIL: feeds %s: oracle: %" PRIu64 " checks (at least %" PRIu64 " wanted), %"
				PRIu64 " mismatches, %" PRIu64 " levels\n", feeds, c->mbo_checks,
				min_checks, c->mbo_mismatches, c->mbo_level_diffs);
		r.failures++;
		d = book_feed_mbo_diffs(r.feed, diffs, 4);
		for (i = 0; d > 0 && i < (unsigned int)d; i++)
			printf("  SecurityID %" PRId32 " seq %" PRIu32 " %s level %u: mbo %" PRId64
					" x %" PRId64 " (%" PRId32 "), mbp %" PRId64 " x %" PRId64
					" (%" PRId32 ")\n", diffs[i].security_id, diffs[i].msg_seq_num,
					diffs[i].side == BOOK_BID ? "bid" : "ask", diffs[i].level,
					diffs[i].mbo.price, diffs[i].mbo.qty, diffs[i].mbo.orders,
					diffs[i].mbp.price, diffs[i].mbp.qty, diffs[i].mbp.orders);
	}
	if (c->mbo_bad_entries != 0 || c->mbo_unknown_orders != 0 || c->mbo_books_refused != 0 ||
			c->mbo_order_overflows != 0 || c->mbo_level_overflows != 0 ||
			c->mbo_stale_books != 0) {
		printf("FAIL: feeds %s: %" PRIu64 " bad entries, %" PRIu64 " unknown orders, %"
				PRIu64 " books refused, %" PRIu64 "+%" PRIu64 " overflows, %" PRIu64
				" stale at the end\n", feeds, c->mbo_bad_entries,
				c->mbo_unknown_orders, c->mbo_books_refused, c->mbo_order_overflows,
				c->mbo_level_overflows, c->mbo_stale_books);
		r.failures++;
	}
	if (c->mbo_entries_46 == 0 || c->mbo_entries_47 == 0 || c->mbo_new == 0 ||
			c->mbo_changes == 0 || c->mbo_deletes == 0) {
		printf("FAIL: feeds %s: entries 46 %" PRIu64 ", 47 %" PRIu64 ": new %" PRIu64
				", changes %" PRIu64 ", deletes %" PRIu64 " (each wanted)\n", feeds,
				c->mbo_entries_46, c->mbo_entries_47, c->mbo_new, c->mbo_changes,
				c->mbo_deletes);
		r.failures++;
	}
	if (expect_clean && (c->mbo_stale_marked != 0 || c->mbo_not_applied != 0)) {
		printf("FAIL: feeds %s: expected no stale MBO book: %" PRIu64 " marked, %"
				PRIu64 " entries not applied\n", feeds, c->mbo_stale_marked,
				c->mbo_not_applied);
		r.failures++;
	}
	if (expect_recovery && (c->mbo_stale_marked == 0 || c->mbo_snapshots == 0 ||
			c->mbo_checks <= r.checks_at_last_snapshot)) {
		printf("FAIL: feeds %s: expected MBO recovery: %" PRIu64 " marked stale, %" PRIu64
				" snapshots applied, %" PRIu64 " checks after the last one\n", feeds,
				c->mbo_stale_marked, c->mbo_snapshots,
				c->mbo_checks - r.checks_at_last_snapshot);
		r.failures++;
	}
	*hash = hash_books(&r, feeds, &order_count);
	printf("%s feeds %-2s: MBO entries 46 %" PRIu64 ", 47 %" PRIu64 " (new %" PRIu64
			", changes %" PRIu64 ", deletes %" PRIu64 ", replayed %" PRIu64 "); oracle "
			"checks %" PRIu64 ", mismatches %" PRIu64 "; stale marked %" PRIu64
			", snapshots 53 applied %" PRIu64 " (checks after the last %" PRIu64
			"); %" PRIu64 " orders at the end, hash %016" PRIx64 "\n",
			r.failures == 0 ? "ok  " : "FAIL", feeds, c->mbo_entries_46,
			c->mbo_entries_47, c->mbo_new, c->mbo_changes, c->mbo_deletes,
			c->mbo_replayed, c->mbo_checks, c->mbo_mismatches, c->mbo_stale_marked,
			c->mbo_snapshots, c->mbo_checks - r.checks_at_last_snapshot, order_count,
			*hash);
	synth_sources_close(src, n);
	tw_feed_destroy(r.path);
	return r.failures == 0 ? 0 : -EPROTO;
}

static void
usage(void)
{
	fprintf(stderr, "usage: test_synth_mbo --a A.pcap --b B.pcap [--snapshot S.pcap] "
			"[--feeds a,b,ab] [--min-checks N] [--expect-clean] [--expect-recovery]\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "a", required_argument, NULL, 'a' },
		{ "b", required_argument, NULL, 'b' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "feeds", required_argument, NULL, 'f' },
		{ "min-checks", required_argument, NULL, 'm' },
		{ "expect-clean", no_argument, NULL, 'C' },
		{ "expect-recovery", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	const char *paths[3] = { NULL, NULL, NULL };
	char feeds[32] = "ab", *save = NULL, *set;
	bool expect_clean = false, expect_recovery = false;
	uint64_t min_checks = 1000, hash, first_hash = 0;
	unsigned int runs = 0, failures = 0;
	int opt;

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			paths[0] = optarg;
			break;
		case 'b':
			paths[1] = optarg;
			break;
		case 's':
			paths[2] = optarg;
			break;
		case 'f':
			snprintf(feeds, sizeof(feeds), "%s", optarg);
			break;
		case 'm':
			min_checks = strtoull(optarg, NULL, 10);
			break;
		case 'C':
			expect_clean = true;
			break;
		case 'R':
			expect_recovery = true;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (paths[0] == NULL || paths[1] == NULL) {
		usage();
		return 2;
	}
	for (set = strtok_r(feeds, ",", &save); set != NULL; set = strtok_r(NULL, ",", &save)) {
		if (run_feeds(paths, set, min_checks, expect_clean, expect_recovery, &hash) < 0)
			failures++;
		if (runs++ == 0)
			first_hash = hash;
		else if (hash != first_hash) {
			printf("FAIL: feeds %s: MBO books differ from the first run's\n", set);
			failures++;
		}
	}
	printf("%s %u runs, %u failed\n", failures == 0 ? "ok  " : "FAIL", runs, failures);
	return failures == 0 ? 0 : 1;
}
