/* SPDX-License-Identifier: BSD-3-Clause
 * The feed path (lib/mdp3 A/B arbitration, lib/book) on tickwire-synth captures, against the
 * generator's truth.
 *
 * The captures (feed A, feed B, snapshot channel) are replayed merged by
 * capture time through app/feed's path of one channel (the appliance's
 * arbiter -> decoder -> books, by direct calls), routed by destination group
 * like the appliance (mdp3_routes defaults + a /32 route for the snapshot
 * group).  Checks, as the options ask:
 *   --per-seq        after every incremental packet the books it touched
 *                    equal the truth of that MsgSeqNum (a book a snapshot
 *                    already moved past that packet is skipped and counted);
 *   --expect-stale   books went stale (a run of packets lost on both feeds)
 *                    and every one was recovered from the snapshot channel;
 *   --expect-clean   no book ever went stale, no packet was lost;
 *   --expect-reset   a ChannelReset was seen and, right after its packet,
 *                    every book was empty (outright, implied, last trade);
 * and always: at the end every instrument of the truth is valid and equal
 * to its final truth (levels, quantities, order counts, RptSeq, trading
 * status, last trade), and no other instrument exists.
 *
 * usage: test_synth_recovery --truth T.jsonl --a A.pcap --b B.pcap
 *        [--snapshot S.pcap] [--feeds ab|a|b] [--stale-all] [--per-seq]
 *        [--expect-stale] [--expect-clean] [--expect-reset]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "mdp3_feed.h"
#include "tw_feed.h"
#include "tw_pcap.h"
#include "synth_replay.h"

#define MAX_LEVELS 10
#define SIDES 4

/* One line of the truth file. */
struct truth {
	uint32_t seq;
	bool final;
	bool reset;
	int32_t security_id;
	uint32_t rpt_seq;
	uint32_t status;
	unsigned int count[SIDES];
	int64_t px[SIDES][MAX_LEVELS];
	int64_t qty[SIDES][MAX_LEVELS];
	int64_t orders[SIDES][MAX_LEVELS];
	bool has_trade;
	int64_t trade_px;
	int64_t trade_qty;
};

struct run {
	struct truth *truth;
	size_t truth_count;
	size_t next;               /* first per-seq truth line not yet reached */
	struct tw_feed *path;     /* app/feed: arbiter -> decoder -> books */
	struct book_feed *feed;   /* path->book */
	bool per_seq;
	unsigned int failures;
	uint64_t compared;
	uint64_t skipped_ahead;
	uint64_t packets;
	uint64_t stale_events;
	uint64_t recovered_events;
	uint64_t reset_events;
	uint64_t snapshot_events;
	uint64_t losses;
	uint32_t reset_seq;        /* from the truth; 0 if none */
	bool reset_checked;
};

static void
failure(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
failure(struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failures++ < 20) {
		va_start(ap, fmt);
		fputs("FAIL: ", stdout);
		vprintf(fmt, ap);
		fputc('\n', stdout);
		va_end(ap);
	}
}

/* ---- the truth file (fixed layout written by tickwire-synth) ---- */

static const char *
after_key(const char *line, const char *key)
{
	char pattern[64];
	const char *p;

	snprintf(pattern, sizeof(pattern), "\"%s\":", key);
	p = strstr(line, pattern);
	return p == NULL ? NULL : p + strlen(pattern);
}

static bool
int_key(const char *line, const char *key, int64_t *out)
{
	const char *p = after_key(line, key);
	char *end;

	if (p == NULL)
		return false;
	*out = strtoll(p, &end, 10);
	return end != p;
}

/* [[a,b(,c)],...] -> levels; returns false if malformed. */
static bool
levels_key(const char *line, const char *key, struct truth *t, unsigned int side)
{
	const char *p = after_key(line, key);
	int64_t v[3];
	unsigned int n, k;
	char *end;

	if (p == NULL || *p++ != '[')
		return false;
	for (n = 0; *p == '['; n++) {
		p++;
		for (k = 0; k < 3 && *p != ']'; k++) {
			v[k] = strtoll(p, &end, 10);
			if (end == p)
				return false;
			p = *end == ',' ? end + 1 : end;
		}
		if (*p++ != ']' || n >= MAX_LEVELS || k < 2)
			return false;
		t->px[side][n] = v[0];
		t->qty[side][n] = v[1];
		t->orders[side][n] = k == 3 ? v[2] : 0;
		if (*p == ',')
			p++;
	}
	t->count[side] = n;
	return *p == ']';
}

static int
parse_truth_line(const char *line, struct truth *t)
{
	static const char *const sides[SIDES] = { "bids", "offers", "implied_bids",
		"implied_offers" };
	const char *p;
	int64_t v;
	unsigned int s;

	memset(t, 0, sizeof(*t));
	if (!int_key(line, "seq", &v))
		return -EINVAL;
	t->seq = (uint32_t)v;
	if (strstr(line, "\"channel_reset\":true") != NULL) {
		t->reset = true;
		return 0;
	}
	t->final = strstr(line, "\"final\":true") != NULL;
	if (!int_key(line, "security_id", &v))
		return -EINVAL;
	t->security_id = (int32_t)v;
	if (!int_key(line, "rpt_seq", &v))
		return -EINVAL;
	t->rpt_seq = (uint32_t)v;
	if (!int_key(line, "status", &v))
		return -EINVAL;
	t->status = (uint32_t)v;
	for (s = 0; s < SIDES; s++)
		if (!levels_key(line, sides[s], t, s))
			return -EINVAL;
	p = after_key(line, "last_trade");
	if (p == NULL)
		return -EINVAL;
	if (*p == '[') {
		t->has_trade = true;
		if (sscanf(p, "[%" SCNd64 ",%" SCNd64 "]", &t->trade_px, &t->trade_qty) != 2)
			return -EINVAL;
	}
	return 0;
}

static int
load_truth(struct run *r, const char *path)
{
	size_t cap = 0, len = 0;
	char *line = NULL;
	unsigned int lineno = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		printf("FAIL: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (len == r->truth_count) {
			size_t n = r->truth_count == 0 ? 1024 : r->truth_count * 2;
			struct truth *t = realloc(r->truth, n * sizeof(*t));

			if (t == NULL)
				return -ENOMEM;
			r->truth = t;
			r->truth_count = n;
		}
		if (parse_truth_line(line, &r->truth[len]) < 0) {
			printf("FAIL: %s:%u: not a truth line\n", path, lineno);
			fclose(f);
			free(line);
			return -EINVAL;
		}
		if (r->truth[len].reset)
			r->reset_seq = r->truth[len].seq;
		len++;
	}
	free(line);
	fclose(f);
	r->truth_count = len;
	return 0;
}

/* ---- comparison ---- */

static const struct book_level *
side_levels(const struct book_instrument *in, unsigned int side, unsigned int *depth)
{
	switch (side) {
	case 0:
		*depth = in->depth;
		return in->bid;
	case 1:
		*depth = in->depth;
		return in->ask;
	case 2:
		*depth = in->implied_depth;
		return in->implied_bid;
	default:
		*depth = in->implied_depth;
		return in->implied_ask;
	}
}

static bool
same_book(const struct book_instrument *in, const struct truth *t, char *why, size_t size)
{
	static const char *const names[SIDES] = { "bid", "ask", "implied bid", "implied ask" };
	const struct book_level *l;
	unsigned int s, i, depth;

	if (in->state != BOOK_STATE_OK) {
		snprintf(why, size, "state %s", book_state_name((enum book_state)in->state));
		return false;
	}
	if (in->rpt_seq != t->rpt_seq) {
		snprintf(why, size, "RptSeq %" PRIu32 ", truth %" PRIu32, in->rpt_seq, t->rpt_seq);
		return false;
	}
	if (in->trading_status != t->status) {
		snprintf(why, size, "status %u, truth %" PRIu32, in->trading_status, t->status);
		return false;
	}
	for (s = 0; s < SIDES; s++) {
		l = side_levels(in, s, &depth);
		if (t->count[s] > depth) {
			snprintf(why, size, "%s: truth has %u levels, book depth %u", names[s],
					t->count[s], depth);
			return false;
		}
		for (i = 0; i < depth; i++) {
			bool want = i < t->count[s];

			if (!want && l[i].price == BOOK_PRICE_NONE)
				continue;
			if (!want || l[i].price != t->px[s][i] || l[i].qty != t->qty[s][i] ||
					l[i].orders != t->orders[s][i]) {
				snprintf(why, size, "%s level %u: book %" PRId64 " x %" PRId64
						" (%" PRId32 "), truth %s%" PRId64 " x %" PRId64
						" (%" PRId64 ")", names[s], i + 1, l[i].price,
						l[i].qty, l[i].orders, want ? "" : "empty, not ",
						want ? t->px[s][i] : 0, want ? t->qty[s][i] : 0,
						want ? t->orders[s][i] : 0);
				return false;
			}
		}
	}
	if (t->has_trade != (in->last_trade.price != BOOK_PRICE_NONE) ||
			(t->has_trade && (in->last_trade.price != t->trade_px ||
					  in->last_trade.qty != t->trade_qty))) {
		snprintf(why, size, "last trade %" PRId64 " x %" PRId64 ", truth %s%" PRId64 " x %"
				PRId64, in->last_trade.price, in->last_trade.qty,
				t->has_trade ? "" : "none, not ", t->trade_px, t->trade_qty);
		return false;
	}
	return true;
}

static bool
book_empty(const struct book_instrument *in)
{
	unsigned int s, i, depth;
	const struct book_level *l;

	for (s = 0; s < SIDES; s++) {
		l = side_levels(in, s, &depth);
		for (i = 0; i < depth; i++)
			if (l[i].price != BOOK_PRICE_NONE)
				return false;
	}
	return in->last_trade.price == BOOK_PRICE_NONE;
}

/* ---- feed callbacks ---- */

static void
on_event(void *ctx, const struct book_event *e)
{
	struct run *r = ctx;

	r->stale_events += (e->what & BOOK_EVENT_STALE) != 0;
	r->recovered_events += (e->what & BOOK_EVENT_RECOVERED) != 0;
	r->reset_events += (e->what & BOOK_EVENT_RESET) != 0;
	r->snapshot_events += (e->what & BOOK_EVENT_SNAPSHOT) != 0;
}

static void
on_loss(void *ctx, uint32_t first, uint32_t count, uint64_t now_ns)
{
	struct run *r = ctx;

	(void)first;
	(void)now_ns;
	r->losses += count;
}

static void
on_packet(void *ctx, const struct book_packet_info *p)
{
	struct run *r = ctx;
	const struct book_instrument *in;
	const struct truth *t;
	uint32_t i, cap;
	char why[256];

	r->packets++;
	if (p->seq == r->reset_seq && !r->reset_checked) {
		r->reset_checked = true;
		cap = book_feed_capacity(r->feed);
		for (i = 0; i < cap; i++) {
			in = book_feed_instrument(r->feed, i);
			if (in != NULL && !book_empty(in))
				failure(r, "seq %" PRIu32 ": SecurityID %" PRId32
						" not empty after ChannelReset", p->seq,
						in->security_id);
		}
	}
	if (!r->per_seq)
		return;
	while (r->next < r->truth_count && !r->truth[r->next].final &&
			r->truth[r->next].seq < p->seq)
		r->next++;
	for (; r->next < r->truth_count && !r->truth[r->next].final &&
			r->truth[r->next].seq == p->seq; r->next++) {
		t = &r->truth[r->next];
		if (t->reset)
			continue;
		in = book_feed_find(r->feed, t->security_id);
		if (in == NULL) {
			failure(r, "seq %" PRIu32 ": SecurityID %" PRId32 " unknown to the feed",
					p->seq, t->security_id);
			continue;
		}
		if (in->last_msg_seq > p->seq) {
			r->skipped_ahead++; /* a snapshot already took it past this packet */
			continue;
		}
		if (!same_book(in, t, why, sizeof(why)))
			failure(r, "seq %" PRIu32 " SecurityID %" PRId32 ": %s", p->seq,
					t->security_id, why);
		r->compared++;
	}
}

static void
usage(void)
{
	fprintf(stderr, "usage: test_synth_recovery --truth T.jsonl --a A.pcap --b B.pcap "
			"[--snapshot S.pcap] [--feeds ab|a|b] [--stale-all] [--per-seq] "
			"[--expect-stale] [--expect-clean] [--expect-reset]\n");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "truth", required_argument, NULL, 't' },
		{ "a", required_argument, NULL, 'a' },
		{ "b", required_argument, NULL, 'b' },
		{ "snapshot", required_argument, NULL, 's' },
		{ "feeds", required_argument, NULL, 'f' },
		{ "stale-all", no_argument, NULL, 'L' },
		{ "per-seq", no_argument, NULL, 'p' },
		{ "expect-stale", no_argument, NULL, 'S' },
		{ "expect-clean", no_argument, NULL, 'C' },
		{ "expect-reset", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	const char *paths[3] = { NULL, NULL, NULL }, *truth_path = NULL, *feeds = "ab";
	bool stale_all = false, expect_stale = false, expect_clean = false, expect_reset = false;
	struct mdp3_route snap_route = { 0 };
	const struct book_feed_counters *c;
	const struct book_instrument *in;
	struct tw_feed_config config;
	struct synth_source src[3];
	struct mdp3_routes routes;
	struct run r;
	unsigned int n = 0, i, finals = 0;
	uint64_t last_ns = 0;
	char why[256];
	int opt, rc;

	memset(&r, 0, sizeof(r));
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			truth_path = optarg;
			break;
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
			feeds = optarg;
			break;
		case 'L':
			stale_all = true;
			break;
		case 'p':
			r.per_seq = true;
			break;
		case 'S':
			expect_stale = true;
			break;
		case 'C':
			expect_clean = true;
			break;
		case 'R':
			expect_reset = true;
			break;
		default:
			usage();
			return 2;
		}
	}
	if (truth_path == NULL || paths[0] == NULL || paths[1] == NULL) {
		usage();
		return 2;
	}
	if (load_truth(&r, truth_path) < 0)
		return 1;
	mdp3_routes_init(&routes, true);
	if (mdp3_route_parse("224.0.31.22/32", &snap_route) < 0)
		return 1;
	snap_route.stream = MDP3_STREAM_SNAPSHOT;
	snap_route.feed = MDP3_FEED_A;
	mdp3_routes_add(&routes, &snap_route);
	memset(&config, 0, sizeof(config));
	config.book.loss_policy = stale_all ? BOOK_LOSS_STALE_ALL : BOOK_LOSS_RPTSEQ;
	config.book.handler.on_event = on_event;
	config.book.handler.on_packet = on_packet;
	config.book.handler.on_loss = on_loss;
	config.book.handler.ctx = &r;
	r.path = tw_feed_create(&config);
	r.feed = r.path != NULL ? r.path->book : NULL;
	if (r.path == NULL) {
		printf("FAIL: tw_feed_create: %s\n", strerror(errno));
		return 1;
	}
	rc = synth_sources_open(paths, 3, src);
	if (rc < 0)
		return 1;
	n = (unsigned int)rc;
	if (synth_replay(r.path, src, n, &routes, strchr(feeds, 'a') != NULL,
			 strchr(feeds, 'b') != NULL, &last_ns, &r.failures) < 0)
		return 1;
	tw_feed_finish(r.path, last_ns + 1000000000u);
	c = book_feed_counters(r.feed);
	for (i = 0; i < r.truth_count; i++) {
		if (!r.truth[i].final)
			continue;
		finals++;
		in = book_feed_find(r.feed, r.truth[i].security_id);
		if (in == NULL)
			failure(&r, "final: SecurityID %" PRId32 " unknown to the feed",
					r.truth[i].security_id);
		else if (!same_book(in, &r.truth[i], why, sizeof(why)))
			failure(&r, "final: SecurityID %" PRId32 ": %s", r.truth[i].security_id,
					why);
	}
	if (finals == 0 || book_feed_instrument_count(r.feed) != finals)
		failure(&r, "%u final truth books, the feed holds %" PRIu32, finals,
				book_feed_instrument_count(r.feed));
	if (c->stale_books != 0)
		failure(&r, "%" PRIu64 " books still stale at the end", c->stale_books);
	if (expect_stale && (r.stale_events == 0 || c->recoveries == 0 || r.losses == 0))
		failure(&r, "expected stale books recovered from snapshots: %" PRIu64
				" stale events, %" PRIu64 " recoveries, %" PRIu64 " packets lost",
				r.stale_events, c->recoveries, r.losses);
	if (expect_clean && (r.stale_events != 0 || r.losses != 0 || c->rpt_seq_gaps != 0))
		failure(&r, "expected no loss: %" PRIu64 " stale events, %" PRIu64 " lost, %"
				PRIu64 " RptSeq gaps", r.stale_events, r.losses, c->rpt_seq_gaps);
	if (expect_reset && (r.reset_events == 0 || !r.reset_checked || c->channel_resets != 1))
		failure(&r, "expected a ChannelReset: %" PRIu64 " reset events, %" PRIu64
				" resets, checked %d", r.reset_events, c->channel_resets,
				r.reset_checked);
	if (r.per_seq && r.compared == 0)
		failure(&r, "no per-packet comparison made");
	printf("%s packets %" PRIu64 ", lost %" PRIu64 ", stale events %" PRIu64
			", recoveries %" PRIu64 ", snapshots applied %" PRIu64 ", resets %" PRIu64
			", per-packet books compared %" PRIu64 " (skipped ahead %" PRIu64
			"), final books %u, failures %u\n", r.failures == 0 ? "ok  " : "FAIL",
			r.packets, r.losses, r.stale_events, c->recoveries, c->snapshots,
			c->channel_resets, r.compared, r.skipped_ahead, finals, r.failures);
	synth_sources_close(src, n);
	tw_feed_destroy(r.path);
	free(r.truth);
	return r.failures == 0 ? 0 : 1;
}
