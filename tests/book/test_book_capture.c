/* SPDX-License-Identifier: BSD-3-Clause
 * The feed path (app/feed: lib/mdp3 arbiter -> walker -> lib/book) on the two
 * real 10,000-frame A/B captures (channel 340, schema
 * v6; channel 320, schema v8):
 *
 *  1. books built from feed A only, from feed B only and from both
 *     arbitrated are identical after every sequence number (hash of all
 *     books after each delivered packet);
 *  2. packets dropped at random and independently per feed (rates 1, 5,
 *     20 %, several seeds, three arbiter set-ups: default bounds, time-only
 *     bound, feed B delayed by 8 packets so that gaps are held and filled):
 *     - the sequence numbers declared lost are exactly those dropped on
 *       both feeds (below the last one kept);
 *     - until the first loss, the books equal the full books after every
 *       packet; with no loss, after every packet to the end;
 *     - after a loss, after every packet: an instrument of a lost packet is
 *       stale as soon as a later packet names it, every other instrument
 *       the packet names has exactly the full run's book;
 *     - at the end, the stale set is exactly the instruments of lost
 *       packets named again later, and every other instrument (but those
 *       of lost packets never named again, which no feed handler can
 *       detect) has the full run's book.
 *
 * The capture's first sequence number is never dropped: the stream start
 * is taken as given (books start from what the capture holds).
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
#include "mdp3_feed.h"
#include "tw_feed.h"
#include "tw_pcap.h"

static const char *cme_data;

struct dgram {
	const uint8_t *data;
	uint32_t length;
	uint32_t seq;
	uint64_t time_ns;
	uint8_t feed;
};

struct capture {
	const char *name;
	struct tw_pcap *pcap;
	struct dgram *d;
	size_t n;
	uint32_t first_seq;
	uint32_t nseq;
	/* instruments named (with a RptSeq) by each sequence number */
	uint32_t *sid_off;      /* [nseq + 1] */
	int32_t *sids;          /* flattened */
	/* distinct instruments, sorted */
	int32_t *all;
	uint32_t nall;
};

/* ---- loading and decoding the captures ---- */

struct collect {
	int32_t *sids;
	uint32_t n, cap;
};

static void
add_sid(struct collect *c, int32_t sid)
{
	uint32_t i;

	for (i = 0; i < c->n; i++)
		if (c->sids[i] == sid)
			return;
	if (c->n == c->cap) {
		c->cap = c->cap == 0 ? 64 : c->cap * 2;
		c->sids = realloc(c->sids, c->cap * sizeof(*c->sids));
		assert_non_null(c->sids);
	}
	c->sids[c->n++] = sid;
}

#define COLLECT_ENTRIES(P)                                                         \
	do {                                                                       \
		if (P##no_md_entries(msg, &g) == 0)                                \
			while (mdp3_group_next(&g)) {                              \
				P##no_md_entries_security_id(&g, &sid);            \
				add_sid(c, sid);                                   \
			}                                                          \
	} while (0)

static int
collect_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct collect *c = ctx;
	struct mdp3_group g;
	int32_t sid;

	(void)pkt;
	switch (msg->template_id) {
	case 32:
		COLLECT_ENTRIES(mdp3_md_incremental_refresh_book32_);
		break;
	case 35:
		COLLECT_ENTRIES(mdp3_md_incremental_refresh_session_statistics35_);
		break;
	case 37:
		COLLECT_ENTRIES(mdp3_md_incremental_refresh_volume37_);
		break;
	case 42:
		COLLECT_ENTRIES(mdp3_md_incremental_refresh_trade_summary42_);
		break;
	case 12:
	case 30:
		break;  /* no RptSeq */
	default:
		fail_msg("template %u not expected in the A/B captures", msg->template_id);
	}
	return 0;
}

static int
compare_sid(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

static void
load_capture(struct capture *cap, const char *rel, const char *name)
{
	char path[1024];
	struct tw_pcap_frame fr;
	struct tw_pcap_l4 l4;
	struct mdp3_routes routes;
	struct mdp3_route r;
	struct collect c = { 0 };
	struct collect all = { 0 };
	struct mdp3_walker w;
	struct mdp3_handler h = { .on_message = collect_message, .ctx = &c };
	size_t cap_d = 0, i;
	uint32_t last = 0, s;
	int rc;

	memset(cap, 0, sizeof(*cap));
	cap->name = name;
	snprintf(path, sizeof(path), "%s/%s", cme_data, rel);
	cap->pcap = tw_pcap_open(path);
	if (cap->pcap == NULL)
		fail_msg("%s: %s", path, strerror(errno));
	mdp3_routes_init(&routes, true);
	while ((rc = tw_pcap_next(cap->pcap, &fr)) == 1) {
		assert_int_equal(tw_pcap_parse_frame(fr.data, fr.caplen, fr.linktype, &l4, NULL),
				0);
		assert_int_equal(mdp3_routes_match(&routes, l4.dst_ip, l4.dst_port, &r), 0);
		assert_int_equal(r.stream, MDP3_STREAM_INCREMENTAL);
		assert_true(l4.payload_length >= 12);
		if (cap->n == cap_d) {
			cap_d = cap_d == 0 ? 16384 : cap_d * 2;
			cap->d = realloc(cap->d, cap_d * sizeof(*cap->d));
			assert_non_null(cap->d);
		}
		cap->d[cap->n].data = l4.payload;
		cap->d[cap->n].length = l4.payload_length;
		cap->d[cap->n].seq = (uint32_t)l4.payload[0] | (uint32_t)l4.payload[1] << 8 |
			(uint32_t)l4.payload[2] << 16 | (uint32_t)l4.payload[3] << 24;
		cap->d[cap->n].time_ns = fr.time_ns;
		cap->d[cap->n].feed = r.feed;
		if (cap->n == 0 || cap->d[cap->n].seq < cap->first_seq)
			cap->first_seq = cap->d[cap->n].seq;
		if (cap->d[cap->n].seq > last)
			last = cap->d[cap->n].seq;
		cap->n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(cap->n, 10000);
	/* The stream starts with its lowest number (kept, see the header). */
	assert_int_equal(cap->d[0].seq, cap->first_seq);
	cap->nseq = last - cap->first_seq + 1;
	assert_int_equal(cap->nseq, 5000);
	cap->sid_off = calloc(cap->nseq + 1, sizeof(*cap->sid_off));
	assert_non_null(cap->sid_off);
	/* Instruments per sequence number, from the feed A copies (A has them all). */
	mdp3_walker_init(&w, NULL, &h);
	s = 0;
	for (i = 0; i < cap->n; i++) {
		uint32_t idx, k;

		if (cap->d[i].feed != MDP3_FEED_A)
			continue;
		idx = cap->d[i].seq - cap->first_seq;
		assert_int_equal(idx, s);     /* feed A is in sequence */
		c.n = 0;
		assert_int_equal(mdp3_walk_packet(&w, cap->d[i].data, cap->d[i].length), 0);
		cap->sids = realloc(cap->sids, (cap->sid_off[idx] + c.n + 1) * sizeof(*cap->sids));
		assert_non_null(cap->sids);
		for (k = 0; k < c.n; k++) {
			cap->sids[cap->sid_off[idx] + k] = c.sids[k];
			add_sid(&all, c.sids[k]);
		}
		cap->sid_off[idx + 1] = cap->sid_off[idx] + c.n;
		s++;
	}
	assert_int_equal(s, cap->nseq);
	qsort(all.sids, all.n, sizeof(*all.sids), compare_sid);
	cap->all = all.sids;
	cap->nall = all.n;
	free(c.sids);
}

static void
free_capture(struct capture *cap)
{
	tw_pcap_close(cap->pcap);
	free(cap->d);
	free(cap->sid_off);
	free(cap->sids);
	free(cap->all);
}

static uint32_t
sid_index(const struct capture *cap, int32_t sid)
{
	const int32_t *p = bsearch(&sid, cap->all, cap->nall, sizeof(sid), compare_sid);

	assert_non_null(p);
	return (uint32_t)(p - cap->all);
}

/* ---- runs ---- */

struct run {
	const struct capture *cap;
	const struct run *ref;      /* the full run, or NULL for it */
	struct tw_feed *path;      /* app/feed: arbiter -> decoder -> books */
	struct book_feed *feed;    /* path->book */
	char label[96];
	uint64_t *hash;             /* per sequence index: all books after it */
	uint8_t *delivered;
	uint64_t *inst_hash;        /* per (seq, sid) of cap->sids: book after the packet */
	uint64_t *final_hash;       /* per cap->all: book at the end */
	/* drop runs */
	uint8_t *lost;              /* per sequence index: declared lost */
	uint32_t *affected_at;      /* per cap->all: first lost seq index + 1, 0 = none */
	uint8_t *revealed;          /* per cap->all: named again after a loss */
	uint8_t *seen;              /* per cap->all: named by a delivered packet */
	uint8_t *blind;             /* per cap->all: first named by a lost packet */
	uint64_t losses;
	uint32_t delivered_count;
};

static void
run_alloc(struct run *r, const struct capture *cap, const struct run *ref, const char *label)
{
	memset(r, 0, sizeof(*r));
	r->cap = cap;
	r->ref = ref;
	snprintf(r->label, sizeof(r->label), "%s", label);
	r->hash = calloc(cap->nseq, sizeof(*r->hash));
	r->delivered = calloc(cap->nseq, 1);
	r->inst_hash = calloc(cap->sid_off[cap->nseq] + 1, sizeof(*r->inst_hash));
	r->final_hash = calloc(cap->nall, sizeof(*r->final_hash));
	r->lost = calloc(cap->nseq, 1);
	r->affected_at = calloc(cap->nall, sizeof(*r->affected_at));
	r->revealed = calloc(cap->nall, 1);
	r->seen = calloc(cap->nall, 1);
	r->blind = calloc(cap->nall, 1);
	assert_true(r->seen != NULL && r->blind != NULL &&
			r->hash != NULL && r->delivered != NULL && r->inst_hash != NULL &&
			r->final_hash != NULL && r->lost != NULL && r->affected_at != NULL &&
			r->revealed != NULL);
}

static void
run_free(struct run *r)
{
	tw_feed_destroy(r->path);
	free(r->hash);
	free(r->delivered);
	free(r->inst_hash);
	free(r->final_hash);
	free(r->lost);
	free(r->affected_at);
	free(r->revealed);
	free(r->seen);
	free(r->blind);
}

static void
on_packet(void *ctx, const struct book_packet_info *info)
{
	struct run *r = ctx;
	const struct capture *cap = r->cap;
	uint32_t idx = info->seq - cap->first_seq, k;

	if (idx >= cap->nseq)
		fail_msg("%s: sequence %" PRIu32 " outside the capture", r->label, info->seq);
	if (r->delivered[idx])
		fail_msg("%s: sequence %" PRIu32 " delivered twice", r->label, info->seq);
	r->delivered[idx] = 1;
	r->delivered_count++;
	/* All books are compared until the first loss, then per instrument. */
	if (r->ref == NULL || r->losses == 0)
		r->hash[idx] = book_feed_hash(r->feed);
	if (r->ref != NULL && r->losses == 0 && r->hash[idx] != r->ref->hash[idx])
		fail_msg("%s: books differ from the full run after sequence %" PRIu32
				" (no loss so far)", r->label, info->seq);
	for (k = cap->sid_off[idx]; k < cap->sid_off[idx + 1]; k++) {
		const struct book_instrument *in = book_feed_find(r->feed, cap->sids[k]);
		uint32_t si = sid_index(cap, cap->sids[k]);

		assert_non_null(in);
		r->inst_hash[k] = book_instrument_hash(in);
		r->seen[si] = 1;
		if (r->ref == NULL)
			continue;
		if (r->affected_at[si] != 0) {
			/* It lost an update: its next one reveals the RptSeq gap. */
			if (in->state != BOOK_STATE_STALE)
				fail_msg("%s: instrument %" PRId32 " of lost sequence %" PRIu32
						" is not stale at sequence %" PRIu32, r->label,
						cap->sids[k],
						cap->first_seq + r->affected_at[si] - 1,
						info->seq);
			r->revealed[si] = 1;
		} else if (r->blind[si]) {
			if (in->state != BOOK_STATE_OK)
				fail_msg("%s: instrument %" PRId32 " stale without a lost update "
						"after its first one", r->label, cap->sids[k]);
		} else if (in->state != BOOK_STATE_OK || r->inst_hash[k] != r->ref->inst_hash[k]) {
			fail_msg("%s: instrument %" PRId32 " (in no lost packet) differs from the "
					"full run after sequence %" PRIu32 " (state %s)", r->label,
					cap->sids[k], info->seq,
					book_state_name((enum book_state)in->state));
		}
	}
}

static void
on_loss(void *ctx, uint32_t first, uint32_t count, uint64_t now)
{
	struct run *r = ctx;
	const struct capture *cap = r->cap;
	uint32_t s, k;

	(void)now;
	r->losses++;
	for (s = first; s != first + count; s++) {
		uint32_t idx = s - cap->first_seq;

		if (idx >= cap->nseq || r->lost[idx] || r->delivered[idx])
			fail_msg("%s: bad loss of sequence %" PRIu32, r->label, s);
		r->lost[idx] = 1;
		for (k = cap->sid_off[idx]; k < cap->sid_off[idx + 1]; k++) {
			uint32_t si = sid_index(cap, cap->sids[k]);

			/*
			 * An instrument never seen before has no RptSeq to compare
			 * with (BOOK_JOIN_TRUST adopts its next one): its book lacks
			 * this update, undetectably.
			 */
			if (!r->seen[si])
				r->blind[si] = 1;
			else if (r->affected_at[si] == 0)
				r->affected_at[si] = idx + 1;
		}
	}
}

static void
run_start(struct run *r, const struct mdp3_arb_config *arb)
{
	struct tw_feed_config c = {
		.book = {
			.max_instruments = 512,
			.handler = { .on_packet = on_packet, .on_loss = on_loss, .ctx = r },
		},
	};

	if (arb != NULL)
		c.arb = *arb;
	r->path = tw_feed_create(&c);
	assert_non_null(r->path);
	r->feed = r->path->book;
}

static void
run_finish(struct run *r)
{
	const struct capture *cap = r->cap;
	uint32_t i;

	tw_feed_finish(r->path, UINT64_MAX);
	for (i = 0; i < cap->nall; i++) {
		const struct book_instrument *in = book_feed_find(r->feed, cap->all[i]);

		/* absent only when every packet naming it was lost */
		if (in == NULL && r->seen[i])
			fail_msg("%s: instrument %" PRId32 " vanished", r->label, cap->all[i]);
		r->final_hash[i] = in != NULL ? book_instrument_hash(in) : 0;
	}
}

static void
run_full(struct run *r, const struct capture *cap, const struct run *ref, int only_feed,
		const char *label)
{
	size_t i;

	run_alloc(r, cap, ref, label);
	run_start(r, NULL);
	for (i = 0; i < cap->n; i++) {
		const struct dgram *d = &cap->d[i];

		if (only_feed >= 0 && d->feed != only_feed)
			continue;
		assert_true(tw_feed_packet(r->path, MDP3_STREAM_INCREMENTAL,
					(enum mdp3_feed_id)d->feed, d->data, d->length,
					d->time_ns) >= 0);
	}
	run_finish(r);
	assert_int_equal(r->delivered_count, cap->nseq);
	assert_int_equal(mdp3_arb_counters(r->path->arb)->losses, 0);
	assert_int_equal(book_feed_counters(r->feed)->stale_books, 0);
	assert_int_equal(book_feed_counters(r->feed)->rpt_seq_gaps, 0);
	assert_int_equal(book_feed_counters(r->feed)->malformed, 0);
	assert_int_equal(book_feed_counters(r->feed)->bad_entries, 0);
	assert_int_equal(book_feed_counters(r->feed)->level_out_of_range, 0);
	assert_int_equal(book_feed_instrument_count(r->feed), cap->nall);
}

static void
test_feeds_agree(const struct capture *cap)
{
	struct run both, a, b;
	char label[64];
	uint32_t i;

	snprintf(label, sizeof(label), "%s both", cap->name);
	run_full(&both, cap, NULL, -1, label);
	snprintf(label, sizeof(label), "%s feed A", cap->name);
	run_full(&a, cap, &both, MDP3_FEED_A, label);
	snprintf(label, sizeof(label), "%s feed B", cap->name);
	run_full(&b, cap, &both, MDP3_FEED_B, label);
	for (i = 0; i < cap->nseq; i++) {
		assert_true(both.delivered[i] && a.delivered[i] && b.delivered[i]);
		assert_true(a.hash[i] == both.hash[i]);
		assert_true(b.hash[i] == both.hash[i]);
	}
	assert_true(book_feed_hash(a.feed) == book_feed_hash(both.feed));
	assert_true(book_feed_hash(b.feed) == book_feed_hash(both.feed));
	assert_int_equal(mdp3_arb_counters(both.path->arb)->duplicates[MDP3_FEED_A] +
			mdp3_arb_counters(both.path->arb)->duplicates[MDP3_FEED_B], cap->nseq);
	/* the books change along the way: the per-packet hashes are not constant */
	assert_true(both.hash[0] != both.hash[cap->nseq - 1]);
	run_free(&a);
	run_free(&b);
	run_free(&both);
}

static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

enum setup {
	SETUP_DEFAULT,    /* 32 packets / 1 ms */
	SETUP_TIME_ONLY,  /* 100 us, no packet bound */
	SETUP_B_DELAYED,  /* B arrives 8 packets late; 32 packets, no time bound */
	SETUP_COUNT
};

static const char *const setup_names[SETUP_COUNT] = { "default", "time-only", "B-delayed" };

struct drop_stats {
	unsigned int runs;
	unsigned int loss_runs;     /* runs with a sequence number lost on both feeds */
	uint64_t lost;              /* sequence numbers declared lost */
	uint64_t held;              /* packets held by the arbiter */
	uint64_t filled;            /* gaps filled by the other feed */
	uint64_t stale;             /* instruments stale at the end */
	uint64_t silent;            /* in a lost packet, never named again */
	uint64_t blind;             /* first named by a lost packet */
};

static void
run_drops(const struct capture *cap, const struct run *ref, enum setup setup,
		unsigned int permille_a, unsigned int permille_b, uint64_t seed,
		struct drop_stats *stats)
{
	const unsigned int permille[MDP3_FEED_COUNT] = { permille_a, permille_b };
	struct mdp3_arb_config arb = { 0 };
	uint64_t rng[MDP3_FEED_COUNT] = {
		(seed * 2 + 1) ^ cap->first_seq, (seed * 2 + 2) ^ cap->first_seq,
	};
	uint8_t *dropped = calloc(cap->n, 1), *both = calloc(cap->nseq, 1);
	uint8_t *kept = calloc(cap->nseq, 1);
	size_t *order = calloc(cap->n, sizeof(*order));
	uint32_t i, max_kept = 0, expected = 0, stale = 0;
	size_t j, na = 0, nb = 0, n = 0;
	char label[96];
	struct run r;

	assert_true(dropped != NULL && both != NULL && kept != NULL && order != NULL);
	snprintf(label, sizeof(label), "%s %s drop A %u.%u%% B %u.%u%% seed %" PRIu64,
			cap->name, setup_names[setup], permille_a / 10, permille_a % 10,
			permille_b / 10, permille_b % 10, seed);
	switch (setup) {
	case SETUP_DEFAULT:
		break;
	case SETUP_TIME_ONLY:
		arb.wait_ns = 100000;
		break;
	case SETUP_B_DELAYED:
		arb.wait_packets = 32;
		break;
	default:
		break;
	}
	/* Drop decisions per feed, independent of the other feed's. */
	for (j = 0; j < cap->n; j++) {
		const struct dgram *d = &cap->d[j];

		dropped[j] = d->seq != cap->first_seq &&
			splitmix64(&rng[d->feed]) % 1000 < permille[d->feed];
		if (!dropped[j])
			kept[d->seq - cap->first_seq] = 1;
	}
	for (i = 0; i < cap->nseq; i++)
		if (kept[i])
			max_kept = i;
	for (i = 0; i < cap->nseq; i++) {
		both[i] = !kept[i];
		if (both[i] && i < max_kept)
			expected++;
	}
	/* Arrival order: capture order, or feed B shifted 8 packets later. */
	if (setup == SETUP_B_DELAYED) {
		size_t *a_idx = calloc(cap->n, sizeof(*a_idx));
		size_t *b_idx = calloc(cap->n, sizeof(*b_idx));

		assert_true(a_idx != NULL && b_idx != NULL);
		for (j = 0; j < cap->n; j++) {
			if (cap->d[j].feed == MDP3_FEED_A)
				a_idx[na++] = j;
			else
				b_idx[nb++] = j;
		}
		for (i = 0, j = 0; i < na || j < nb;) {
			if (i < na && (j >= nb || i < j + 8))
				order[n++] = a_idx[i++];
			else
				order[n++] = b_idx[j++];
		}
		free(a_idx);
		free(b_idx);
	} else {
		for (j = 0; j < cap->n; j++)
			order[n++] = j;
	}
	run_alloc(&r, cap, ref, label);
	run_start(&r, &arb);
	for (j = 0; j < n; j++) {
		const struct dgram *d = &cap->d[order[j]];

		if (dropped[order[j]])
			continue;
		assert_true(tw_feed_packet(r.path, MDP3_STREAM_INCREMENTAL,
					(enum mdp3_feed_id)d->feed, d->data, d->length,
					d->time_ns) >= 0);
	}
	run_finish(&r);

	/* Exactly the sequence numbers lost on both feeds were declared lost. */
	for (i = 0; i < cap->nseq; i++) {
		if (both[i] && i < max_kept) {
			if (!r.lost[i])
				fail_msg("%s: sequence %" PRIu32 " lost on both feeds, not "
						"declared", label, cap->first_seq + i);
		} else if (r.lost[i]) {
			fail_msg("%s: sequence %" PRIu32 " declared lost but kept on a feed",
					label, cap->first_seq + i);
		} else if (i <= max_kept && !r.delivered[i]) {
			fail_msg("%s: sequence %" PRIu32 " never delivered", label,
					cap->first_seq + i);
		}
	}
	assert_int_equal(mdp3_arb_counters(r.path->arb)->lost_packets, expected);
	assert_int_equal(book_feed_counters(r.feed)->lost_packets, expected);
	stats->runs++;
	if (expected > 0)
		stats->loss_runs++;
	stats->lost += expected;
	stats->held += mdp3_arb_counters(r.path->arb)->held;
	stats->filled += mdp3_arb_counters(r.path->arb)->gaps_filled;
	/* The stale set is what the RptSeq gaps can reveal; the rest is exact. */
	for (i = 0; i < cap->nall; i++) {
		const struct book_instrument *in = book_feed_find(r.feed, cap->all[i]);

		stats->blind += r.blind[i];
		if (in == NULL) {
			assert_true(r.blind[i] && !r.seen[i]);
			continue;
		}
		if (r.affected_at[i] != 0 && !r.revealed[i])
			stats->silent++;
		if (r.revealed[i]) {
			stale++;
			if (in->state != BOOK_STATE_STALE)
				fail_msg("%s: instrument %" PRId32 " should be stale", label,
						cap->all[i]);
		} else if (in->state != BOOK_STATE_OK) {
			fail_msg("%s: instrument %" PRId32 " stale without a lost update", label,
					cap->all[i]);
		} else if (r.affected_at[i] == 0 && !r.blind[i] &&
				r.final_hash[i] != ref->final_hash[i]) {
			fail_msg("%s: instrument %" PRId32 " differs at the end", label,
					cap->all[i]);
		}
	}
	assert_int_equal(book_feed_counters(r.feed)->stale_books, stale);
	stats->stale += stale;
	assert_int_equal(book_feed_counters(r.feed)->rpt_seq_gaps, stale);
	if (expected == 0)
		assert_true(book_feed_hash(r.feed) == book_feed_hash(ref->feed));
	if (setup == SETUP_B_DELAYED && permille_a > 0)
		assert_true(mdp3_arb_counters(r.path->arb)->gaps_filled > 0);
	run_free(&r);
	free(dropped);
	free(both);
	free(kept);
	free(order);
}

static void
test_drops(const struct capture *cap)
{
	static const unsigned int permille[] = { 10, 50, 200 };
	struct drop_stats stats = { 0 };
	struct run full;
	unsigned int p, s;
	enum setup setup;
	char label[64];

	snprintf(label, sizeof(label), "%s full", cap->name);
	run_full(&full, cap, NULL, -1, label);
	for (setup = SETUP_DEFAULT; setup < SETUP_COUNT; setup++)
		for (p = 0; p < sizeof(permille) / sizeof(permille[0]); p++)
			for (s = 1; s <= 3; s++)
				run_drops(cap, &full, setup, permille[p], permille[p], s,
						&stats);
	/* feed A half gone, B intact (and late): every gap is filled, no loss */
	run_drops(cap, &full, SETUP_DEFAULT, 500, 0, 7, &stats);
	run_drops(cap, &full, SETUP_B_DELAYED, 500, 0, 7, &stats);
	run_drops(cap, &full, SETUP_TIME_ONLY, 0, 500, 8, &stats);
	printf("%s: %u drop runs, %u with double losses: %" PRIu64 " sequence numbers "
			"declared lost, %" PRIu64 " packets held, %" PRIu64 " gaps filled, %"
			PRIu64 " stale books, %" PRIu64 " instruments of lost packets never named "
			"again, %" PRIu64 " first named by a lost packet\n", cap->name, stats.runs,
			stats.loss_runs, stats.lost, stats.held, stats.filled, stats.stale,
			stats.silent, stats.blind);
	/* the matrix did exercise double losses, holds and fills */
	assert_true(stats.loss_runs >= 9);
	assert_true(stats.stale > 0);
	assert_true(stats.filled > 0);
	run_free(&full);
}

static void
test_capture_v6(void **state)
{
	struct capture cap;

	(void)state;
	load_capture(&cap, "pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.pcap",
			"ch340-v6");
	assert_int_equal(cap.first_seq, 5615);
	assert_int_equal(cap.nall, 127);
	test_feeds_agree(&cap);
	test_drops(&cap);
	free_capture(&cap);
}

static void
test_capture_v8(void **state)
{
	struct capture cap;

	(void)state;
	load_capture(&cap,
			"pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.pcap",
			"ch320-v8");
	assert_int_equal(cap.first_seq, 17347815);
	assert_int_equal(cap.nall, 39);
	test_feeds_agree(&cap);
	test_drops(&cap);
	free_capture(&cap);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_v6),
		cmocka_unit_test(test_capture_v8),
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
