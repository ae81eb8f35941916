/* SPDX-License-Identifier: BSD-3-Clause
 * The stage-split incremental path (book_feed_packet_begin / book_feed_message
 * / book_feed_packet_end, book.h) against book_feed_apply() on the real
 * captures (channel 340 schema v6, channel 320 schema v8), feed A in
 * sequence:
 *
 *  - a "decoder stage" with its own mdp3 walker hands every message to the
 *    "book stage" of a second feed, either at once (fast_send inline) or
 *    after the walk as copied struct mdp3_msg values (a queued hand-off);
 *  - after every packet both feeds have the same return value, book hash,
 *    every counter (struct book_feed_counters compared whole), the same
 *    on_packet reports and the same event stream (every event member but
 *    the instrument pointer, compared as it is published);
 *  - set-ups: join trust with events at EndOfEvent; join recover with
 *    per-packet publication (books stay stale, so every packet also goes
 *    through the recovery buffer);
 *  - malformed copies (truncated, MsgSize corrupted) give -EBADMSG on both
 *    paths, the split path's book stage sees no message, and nothing
 *    changes but the malformed counter;
 *  - book_feed_loss() refuses a NULL feed and an empty range (the loss
 *    itself is checked through app/feed in test_book_capture).
 *
 * argv[1]: the cme_data directory.  Exit 77 when it is missing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tw_test.h"

#include "book.h"
#include "mdp3.h"
#include "tw_pcap.h"

#define CAPTURE_V6 "pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.pcap"
#define CAPTURE_V8 "pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.pcap"
#define MAX_QUEUED 256

static const char *cme_data;

struct dgram {
	const uint8_t *data;
	uint32_t length;
	uint64_t time_ns;
};

struct capture {
	struct tw_pcap *pcap;
	struct dgram *d;   /* feed A copies, in sequence */
	size_t n;
};

/* What a feed's consumers saw, folded so two runs can be compared. */
struct observed {
	uint64_t events;
	uint64_t event_hash;
	uint64_t packets;
	uint64_t packet_hash;
	uint64_t losses;
	uint64_t loss_hash;
};

static uint64_t
mix(uint64_t h, uint64_t v)
{
	h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	return h * UINT64_C(0xff51afd7ed558ccd);
}

static uint64_t
mix_top(uint64_t h, const struct book_top *t)
{
	h = mix(h, (uint64_t)t->bid_price);
	h = mix(h, (uint64_t)t->bid_qty);
	h = mix(h, (uint64_t)t->ask_price);
	h = mix(h, (uint64_t)t->ask_qty);
	h = mix(h, (uint64_t)(uint32_t)t->bid_orders << 32 | (uint32_t)t->ask_orders);
	return h;
}

static void
on_event(void *ctx, const struct book_event *e)
{
	struct observed *o = ctx;
	uint64_t h = o->event_hash;
	struct book_status status = { 0 };
	struct book_trade trade = { 0 };
	struct book_top top;

	o->events++;
	h = mix(h, (uint64_t)e->what << 32 | e->changed);
	h = mix(h, (uint64_t)(uint32_t)e->security_id << 32 | (uint64_t)e->state << 8 |
			e->replay);
	h = mix(h, e->msg_seq_num);
	h = mix(h, e->rx_ns);
	h = mix(h, e->transact_time);
	h = mix(h, e->instrument != NULL ? book_instrument_hash(e->instrument) : 0);
	top = book_event_outright(e);
	h = mix_top(h, &top);
	top = book_event_implied(e);
	h = mix_top(h, &top);
	top = book_event_consolidated(e);
	h = mix_top(h, &top);
	if (e->trade != NULL)
		trade = *e->trade;
	if (e->status != NULL)
		status = *e->status;
	h = mix(h, (uint64_t)trade.price);
	h = mix(h, (uint64_t)trade.qty);
	h = mix(h, trade.transact_time);
	h = mix(h, (uint64_t)(uint32_t)trade.orders << 32 | trade.trade_id);
	h = mix(h, (uint64_t)trade.aggressor << 8 | trade.action);
	h = mix(h, (uint64_t)status.trading_status << 16 |
			(uint64_t)status.halt_reason << 8 | status.trading_event);
	o->event_hash = h;
}

static void
on_packet(void *ctx, const struct book_packet_info *p)
{
	struct observed *o = ctx;
	uint64_t h = o->packet_hash;

	o->packets++;
	h = mix(h, (uint64_t)p->seq << 32 | p->length);
	h = mix(h, p->rx_ns);
	h = mix(h, (uint64_t)p->feed << 24 | (uint64_t)p->held << 16 | p->messages);
	o->packet_hash = h;
}

static void
on_loss(void *ctx, uint32_t first_seq, uint32_t count, uint64_t now_ns)
{
	struct observed *o = ctx;

	o->losses++;
	o->loss_hash = mix(mix(mix(o->loss_hash, first_seq), count), now_ns);
}

/* ---- the decoder stage of the split path ---- */

enum handoff {
	HANDOFF_INLINE,   /* book_feed_message() from inside the walk */
	HANDOFF_QUEUED,   /* struct mdp3_msg copied, handed over after the walk */
};

struct decoder {
	struct mdp3_walker walker;
	struct book_feed *book;        /* the book stage */
	struct book_packet_ctx *pc;    /* travels with every message */
	enum handoff handoff;
	struct mdp3_msg queue[MAX_QUEUED];
	bool unknown[MAX_QUEUED];
	unsigned int queued;
	unsigned int delivered;        /* messages (and skips) the book stage got */
};

static int
decoder_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct decoder *d = ctx;

	(void)pkt;
	d->delivered++;
	if (d->handoff == HANDOFF_INLINE)
		return book_feed_message(d->book, d->pc, msg);
	assert_true(d->queued < MAX_QUEUED);
	d->unknown[d->queued] = false;
	d->queue[d->queued++] = *msg;
	return 0;
}

static void
decoder_skip(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_skip *skip)
{
	struct decoder *d = ctx;

	(void)pkt;
	(void)skip;
	d->delivered++;
	if (d->handoff == HANDOFF_INLINE) {
		assert_int_equal(book_feed_message(d->book, d->pc, NULL), 0);
		return;
	}
	assert_true(d->queued < MAX_QUEUED);
	d->unknown[d->queued++] = true;
}

static int
split_apply(struct decoder *d, const uint8_t *data, size_t length, uint64_t rx_ns)
{
	struct book_packet_ctx pc;
	unsigned int i;
	int rc;

	rc = book_feed_packet_begin(d->book, MDP3_FEED_A, data, length, rx_ns, &pc);
	if (rc < 0)
		return rc;
	d->pc = &pc;
	d->queued = 0;
	rc = mdp3_walk_packet(&d->walker, data, length);
	for (i = 0; i < d->queued; i++)
		assert_int_equal(book_feed_message(d->book, &pc,
					d->unknown[i] ? NULL : &d->queue[i]), 0);
	d->pc = NULL;
	return book_feed_packet_end(d->book, &pc, rc);
}

/* ---- comparing the two feeds ---- */

struct pair {
	struct book_feed *whole;       /* book_feed_apply() */
	struct book_feed *split;       /* begin / message / end */
	struct observed seen_whole;
	struct observed seen_split;
	struct decoder dec;
};

static void
pair_init(struct pair *p, const struct book_feed_config *base, enum handoff handoff)
{
	struct mdp3_handler h = { .on_message = decoder_message, .on_skip = decoder_skip };
	struct book_feed_config c = *base;

	memset(p, 0, sizeof(*p));
	c.handler.on_event = on_event;
	c.handler.on_packet = on_packet;
	c.handler.on_loss = on_loss;
	c.handler.ctx = &p->seen_whole;
	p->whole = book_feed_create(&c);
	assert_non_null(p->whole);
	c.handler.ctx = &p->seen_split;
	p->split = book_feed_create(&c);
	assert_non_null(p->split);
	h.ctx = &p->dec;
	assert_int_equal(mdp3_walker_init(&p->dec.walker, NULL, &h), 0);
	p->dec.book = p->split;
	p->dec.handoff = handoff;
}

static void
pair_free(struct pair *p)
{
	book_feed_destroy(p->whole);
	book_feed_destroy(p->split);
}

static void
assert_same(const struct pair *p, size_t packet)
{
	const struct book_feed_counters *a = book_feed_counters(p->whole);
	const struct book_feed_counters *b = book_feed_counters(p->split);

	if (memcmp(a, b, sizeof(*a)) != 0 ||
			book_feed_hash(p->whole) != book_feed_hash(p->split) ||
			book_feed_instrument_count(p->whole) !=
			book_feed_instrument_count(p->split) ||
			memcmp(&p->seen_whole, &p->seen_split, sizeof(p->seen_whole)) != 0)
		fail_msg("packet %zu: split path differs (hash %016" PRIx64 " vs %016" PRIx64
				", messages %" PRIu64 " vs %" PRIu64 ", events %" PRIu64
				" vs %" PRIu64 ")", packet, book_feed_hash(p->whole),
				book_feed_hash(p->split), a->messages, b->messages,
				p->seen_whole.events, p->seen_split.events);
}

static void
load_capture(struct capture *cap, const char *rel)
{
	struct tw_pcap_frame fr;
	struct mdp3_routes routes;
	struct tw_pcap_l4 l4;
	struct mdp3_route r;
	size_t cap_d = 0;
	char path[1024];
	int rc;

	memset(cap, 0, sizeof(*cap));
	snprintf(path, sizeof(path), "%s/%s", cme_data, rel);
	cap->pcap = tw_pcap_open(path);
	if (cap->pcap == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	mdp3_routes_init(&routes, true);
	while ((rc = tw_pcap_next(cap->pcap, &fr)) == 1) {
		assert_int_equal(tw_pcap_parse_frame(fr.data, fr.caplen, fr.linktype, &l4, NULL),
				0);
		assert_int_equal(mdp3_routes_match(&routes, l4.dst_ip, l4.dst_port, &r), 0);
		if (r.stream != MDP3_STREAM_INCREMENTAL || r.feed != MDP3_FEED_A)
			continue;
		if (cap->n == cap_d) {
			cap_d = cap_d == 0 ? 8192 : cap_d * 2;
			cap->d = realloc(cap->d, cap_d * sizeof(*cap->d));
			assert_non_null(cap->d);
		}
		cap->d[cap->n].data = l4.payload;
		cap->d[cap->n].length = l4.payload_length;
		cap->d[cap->n].time_ns = fr.time_ns;
		cap->n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(cap->n, 5000);
}

static void
free_capture(struct capture *cap)
{
	tw_pcap_close(cap->pcap);
	free(cap->d);
}

/* Every packet through both paths; every 97th packet first as a malformed copy. */
static void
replay_both(const struct capture *cap, const struct book_feed_config *config,
		enum handoff handoff)
{
	static uint8_t bad[65536];
	struct pair p;
	size_t i;
	int rw, rs;

	pair_init(&p, config, handoff);
	for (i = 0; i < cap->n; i++) {
		const struct dgram *d = &cap->d[i];

		if (i % 97 == 5 && d->length > 22) {
			unsigned int delivered = p.dec.delivered;
			uint64_t malformed = book_feed_counters(p.whole)->malformed;

			/* cut inside the last message, then a MsgSize past the end */
			memcpy(bad, d->data, d->length);
			rw = book_feed_apply(p.whole, MDP3_FEED_A, bad, d->length - 1, d->time_ns);
			rs = split_apply(&p.dec, bad, d->length - 1, d->time_ns);
			assert_int_equal(rw, -EBADMSG);
			assert_int_equal(rs, -EBADMSG);
			bad[12] = 0xff;
			bad[13] = 0xff;
			rw = book_feed_apply(p.whole, MDP3_FEED_A, bad, d->length, d->time_ns);
			rs = split_apply(&p.dec, bad, d->length, d->time_ns);
			assert_int_equal(rw, -EBADMSG);
			assert_int_equal(rs, -EBADMSG);
			assert_int_equal(p.dec.delivered, delivered);
			assert_int_equal(book_feed_counters(p.whole)->malformed, malformed + 2);
			assert_same(&p, i);
		}
		rw = book_feed_apply(p.whole, MDP3_FEED_A, d->data, d->length, d->time_ns);
		rs = split_apply(&p.dec, d->data, d->length, d->time_ns);
		assert_int_equal(rw, 0);
		assert_int_equal(rs, rw);
		assert_same(&p, i);
	}
	assert_int_equal(book_feed_counters(p.split)->packets_applied, cap->n);
	if (config->join == BOOK_JOIN_TRUST) {
		assert_true(book_feed_counters(p.split)->book_updates > 0);
		assert_true(p.seen_split.events > 0);
	} else {
		/* never synced: entries are stale ones, packets go to the buffer */
		assert_true(book_feed_counters(p.split)->stale_entries > 0);
		assert_true(book_feed_counters(p.split)->recovery_buffered > cap->n / 2);
	}
	/* book_feed_loss(): arguments */
	assert_int_equal(book_feed_loss(p.split, 1, 0, 0), -EINVAL);
	assert_int_equal(book_feed_loss(NULL, 1, 1, 0), -EINVAL);
	book_feed_flush(p.whole, cap->d[cap->n - 1].time_ns);
	book_feed_flush(p.split, cap->d[cap->n - 1].time_ns);
	assert_same(&p, cap->n);
	pair_free(&p);
}

static void
test_capture(const char *rel)
{
	struct book_feed_config trust = {
		.max_instruments = 1024, .join = BOOK_JOIN_TRUST,
		.publish = BOOK_PUBLISH_END_OF_EVENT,
	};
	struct book_feed_config recover = {
		.max_instruments = 1024, .join = BOOK_JOIN_RECOVER,
		.publish = BOOK_PUBLISH_PACKET, .loss_policy = BOOK_LOSS_STALE_ALL,
	};
	struct capture cap;

	load_capture(&cap, rel);
	replay_both(&cap, &trust, HANDOFF_INLINE);
	replay_both(&cap, &trust, HANDOFF_QUEUED);
	replay_both(&cap, &recover, HANDOFF_INLINE);
	replay_both(&cap, &recover, HANDOFF_QUEUED);
	free_capture(&cap);
}

static void
test_split_ch340(void **state)
{
	(void)state;
	test_capture(CAPTURE_V6);
}

static void
test_split_ch320(void **state)
{
	(void)state;
	test_capture(CAPTURE_V8);
}

static void
test_errors(void **state)
{
	static const uint8_t pkt[12];
	struct book_packet_ctx pc;
	struct book_feed *f = book_feed_create(NULL);

	(void)state;
	assert_non_null(f);
	assert_int_equal(book_feed_packet_begin(NULL, MDP3_FEED_A, pkt, 12, 0, &pc), -EINVAL);
	assert_int_equal(book_feed_packet_begin(f, MDP3_FEED_A, NULL, 12, 0, &pc), -EINVAL);
	assert_int_equal(book_feed_packet_begin(f, MDP3_FEED_A, pkt, 12, 0, NULL), -EINVAL);
	assert_int_equal(book_feed_packet_begin(f, MDP3_FEED_COUNT, pkt, 12, 0, &pc), -EINVAL);
	assert_int_equal(book_feed_packet_begin(f, MDP3_FEED_B, pkt, 12, 7, &pc), 0);
	assert_int_equal(pc.feed, MDP3_FEED_B);
	assert_int_equal(pc.rx_ns, 7);
	assert_int_equal(book_feed_message(NULL, &pc, NULL), -EINVAL);
	assert_int_equal(book_feed_message(f, NULL, NULL), -EINVAL);
	assert_int_equal(book_feed_packet_end(NULL, &pc, 0), -EINVAL);
	assert_int_equal(book_feed_packet_end(f, NULL, 0), -EINVAL);
	/* an empty packet (header only) applies */
	assert_int_equal(book_feed_packet_end(f, &pc, 0), 0);
	assert_int_equal(book_feed_counters(f)->packets_applied, 1);
	assert_int_equal(book_feed_counters(f)->packets[MDP3_STREAM_INCREMENTAL][MDP3_FEED_B], 1);
	book_feed_destroy(f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_split_ch340),
		cmocka_unit_test(test_split_ch320),
	};
	struct stat st;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CME_DATA_DIR [test filter]\n", argv[0]);
		return 2;
	}
	cme_data = argv[1];
	if (stat(cme_data, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: no CME data directory, skipping\n", cme_data);
		return 77;
	}
	if (argc > 2)
		cmocka_set_test_filter(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
