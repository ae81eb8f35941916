/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tickwire-book: replay MDP 3.0 captures through the feed pipeline
 * (A/B arbitration -> decode -> RptSeq -> books) and print the final books
 * of every instrument and the counters.
 *
 * Frames of all FILEs are merged by capture time.  Each UDP datagram is
 * routed by destination (see usage: default 224.0.31.0/24 = incremental
 * feed A, 224.0.32.0/24 = incremental feed B) and demultiplexed by channel:
 * CME ports are 14ccc (feed A) and 15ccc (feed B) for channel ccc, so the
 * channel is the port modulo 1000 for ports 14000-15999, else the port.
 * --drop-a/--drop-b drop incremental packets of a feed at random, each feed
 * with its own generator seeded from --seed, to exercise arbitration.
 * --mbo keeps lib/book's market-by-order books too and prints, per
 * instrument, the MBO state and the best levels aggregated from the orders
 * with the first orders of each in priority order; per channel the mbo_*
 * counters and the oracle's first differences (MBO aggregate against the
 * price-level book).  Without --mbo the output is what it was before it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "book.h"
#include "tw_feed.h"
#include "tw_pcap.h"

#define EXIT_USAGE 2
#define MAX_FILES 64
#define MAX_CHANNELS 64
#define PPM 1000000u
#define MBO_ORDERS_SHOWN_DEFAULT 3u
#define MBO_ORDERS_SHOWN_MAX 1000u
#define MBO_DIFFS_MAX 4096u

struct options {
	bool use_feed[MDP3_FEED_COUNT];
	uint32_t drop_ppm[MDP3_FEED_COUNT];
	uint64_t seed;
	unsigned int levels;
	bool json;
	bool tcp;
	bool one_channel;
	bool quiet_books;
	bool mbo;                            /* config.book.mbo, kept for the output */
	unsigned int mbo_orders_shown;       /* orders printed per MBO level */
	struct mdp3_routes routes;
	struct tw_feed_config config;   /* arbiter and books of each channel */
};

/* Per sequence number of the incremental stream: which copies came, dropped. */
#define SEQ_SEEN_A 1u
#define SEQ_SEEN_B 2u
#define SEQ_KEPT 4u

struct seq_map {
	uint32_t *keys;
	uint8_t *marks;
	size_t size;   /* power of two */
	size_t used;
};

struct channel {
	uint32_t id;
	struct tw_feed *path;
	struct seq_map seqs;
	uint32_t min_seq_kept;
	uint32_t max_seq_kept;
	bool any_kept;
	uint64_t dropped[MDP3_FEED_COUNT];
};

struct run {
	struct options *opt;
	struct channel channels[MAX_CHANNELS];
	unsigned int channel_count;
	struct book_feed *tcp_feed;
	uint64_t rng[MDP3_FEED_COUNT];
	uint64_t frames;
	uint64_t not_udp;
	uint64_t unrouted;
	uint64_t feed_filtered;
	uint64_t last_time_ns;
};

/* ---- helpers ---- */

static uint64_t
splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* "5", "0.5", "12.25%": a percentage with up to 4 decimals, in ppm. */
static int
parse_percent(const char *s, uint32_t *ppm)
{
	uint64_t whole = 0, frac = 0, scale = 10000;
	int digits = 0, decimals = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++)
		if ((whole = whole * 10 + (uint64_t)(*s - '0')) > 100)
			return -EINVAL;
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
			if (++decimals > 4)
				return -EINVAL;
			scale /= 10;
			frac += (uint64_t)(*s - '0') * scale;
		}
	}
	if (*s == '%')
		s++;
	if (*s != '\0' || digits == 0)
		return -EINVAL;
	whole = whole * 10000 + frac;
	if (whole > 1000000)
		return -EINVAL;
	*ppm = (uint32_t)whole;
	return 0;
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno != 0 || end == s || *end != '\0' || *s == '-') ? -EINVAL : 0;
}

static int
seq_map_init(struct seq_map *m)
{
	m->size = 1u << 14;
	m->used = 0;
	m->keys = calloc(m->size, sizeof(*m->keys));
	m->marks = calloc(m->size, sizeof(*m->marks));
	return m->keys != NULL && m->marks != NULL ? 0 : -ENOMEM;
}

static void
seq_map_free(struct seq_map *m)
{
	free(m->keys);
	free(m->marks);
}

static uint8_t *
seq_map_slot(struct seq_map *m, uint32_t seq)
{
	size_t i;

	if (2 * (m->used + 1) > m->size) {
		struct seq_map bigger = { .size = m->size * 2 };
		size_t j;

		bigger.keys = calloc(bigger.size, sizeof(*bigger.keys));
		bigger.marks = calloc(bigger.size, sizeof(*bigger.marks));
		if (bigger.keys == NULL || bigger.marks == NULL) {
			seq_map_free(&bigger);
			return NULL;
		}
		for (j = 0; j < m->size; j++) {
			if (m->marks[j] == 0)
				continue;
			i = (m->keys[j] * 2654435761u) & (bigger.size - 1);
			while (bigger.marks[i] != 0)
				i = (i + 1) & (bigger.size - 1);
			bigger.keys[i] = m->keys[j];
			bigger.marks[i] = m->marks[j];
			bigger.used++;
		}
		seq_map_free(m);
		*m = bigger;
	}
	for (i = (seq * 2654435761u) & (m->size - 1); m->marks[i] != 0;
			i = (i + 1) & (m->size - 1))
		if (m->keys[i] == seq)
			return &m->marks[i];
	m->keys[i] = seq;
	m->used++;
	return &m->marks[i];
}

static uint32_t
channel_of_port(const struct options *opt, uint16_t port)
{
	if (opt->one_channel)
		return 0;
	return port >= 14000 && port < 16000 ? port % 1000u : port;
}

static struct channel *
get_channel(struct run *r, uint32_t id)
{
	struct channel *ch;
	unsigned int i;

	for (i = 0; i < r->channel_count; i++)
		if (r->channels[i].id == id)
			return &r->channels[i];
	if (r->channel_count == MAX_CHANNELS)
		return NULL;
	ch = &r->channels[r->channel_count];
	memset(ch, 0, sizeof(*ch));
	ch->id = id;
	ch->path = tw_feed_create(&r->opt->config);
	if (ch->path == NULL || seq_map_init(&ch->seqs) < 0) {
		int err = errno;

		fprintf(stderr, "tickwire-book: cannot create the feed of channel %" PRIu32
				": %s\n", id, strerror(err));
		if (err == ENOMEM && r->opt->mbo)
			fprintf(stderr, "tickwire-book: the books of a channel need %zu bytes "
					"with these MBO bounds; lower --mbo-instruments, "
					"--mbo-orders or --mbo-levels\n",
					book_feed_memsize(&r->opt->config.book));
		tw_feed_destroy(ch->path);
		seq_map_free(&ch->seqs);
		return NULL;
	}
	r->channel_count++;
	return ch;
}

/* ---- replay ---- */

static int
feed_udp(struct run *r, const struct tw_pcap_frame *frame, const struct tw_pcap_l4 *l4)
{
	struct mdp3_route route;
	struct channel *ch;
	uint8_t *mark;
	uint32_t seq;
	int rc;

	if (mdp3_routes_match(&r->opt->routes, l4->dst_ip, l4->dst_port, &route) < 0) {
		r->unrouted++;
		return 0;
	}
	if (!r->opt->use_feed[route.feed]) {
		r->feed_filtered++;
		return 0;
	}
	ch = get_channel(r, channel_of_port(r->opt, l4->dst_port));
	if (ch == NULL)
		return -1;
	if (route.stream == MDP3_STREAM_INCREMENTAL && l4->payload_length >= 4) {
		seq = (uint32_t)l4->payload[0] | (uint32_t)l4->payload[1] << 8 |
			(uint32_t)l4->payload[2] << 16 | (uint32_t)l4->payload[3] << 24;
		mark = seq_map_slot(&ch->seqs, seq);
		if (mark == NULL) {
			fprintf(stderr, "tickwire-book: out of memory\n");
			return -1;
		}
		*mark |= route.feed == MDP3_FEED_A ? SEQ_SEEN_A : SEQ_SEEN_B;
		uint32_t ppm = r->opt->drop_ppm[route.feed];

		if (ppm != 0 && splitmix64(&r->rng[route.feed]) % PPM < ppm) {
			ch->dropped[route.feed]++;
			return 0;
		}
		*mark |= SEQ_KEPT;
		if (!ch->any_kept || (int32_t)(seq - ch->max_seq_kept) > 0)
			ch->max_seq_kept = seq;
		if (!ch->any_kept || (int32_t)(seq - ch->min_seq_kept) < 0)
			ch->min_seq_kept = seq;
		ch->any_kept = true;
	}
	rc = tw_feed_packet(ch->path, (enum mdp3_stream)route.stream,
			(enum mdp3_feed_id)route.feed, l4->payload, l4->payload_length,
			frame->time_ns);
	(void)rc; /* malformed packets are counted by the feed */
	return 0;
}

static int
feed_frame(struct run *r, const struct tw_pcap_frame *frame)
{
	struct tw_pcap_l4 l4;

	r->frames++;
	r->last_time_ns = frame->time_ns;
	if (tw_pcap_parse_frame(frame->data, frame->caplen, frame->linktype, &l4, NULL) < 0) {
		r->not_udp++;
		return 0;
	}
	if (l4.protocol == 6) {
		if (!r->opt->tcp || l4.payload_length == 0) {
			r->not_udp++;
			return 0;
		}
		if (r->tcp_feed == NULL) {
			r->tcp_feed = book_feed_create(&r->opt->config.book);
			if (r->tcp_feed == NULL) {
				fprintf(stderr, "tickwire-book: cannot create the TCP feed: %s\n",
						strerror(errno));
				return -1;
			}
		}
		book_feed_tcp(r->tcp_feed, l4.payload, l4.payload_length, frame->time_ns);
		return 0;
	}
	return feed_udp(r, frame, &l4);
}

/* Merge the frames of every file by capture time (stable: file order on ties). */
static int
replay_files(struct run *r, char **paths, int count)
{
	struct tw_pcap *pcap[MAX_FILES];
	struct tw_pcap_frame next[MAX_FILES];
	bool have[MAX_FILES];
	int i, rc, status = 0;

	for (i = 0; i < count; i++) {
		pcap[i] = tw_pcap_open(paths[i]);
		if (pcap[i] == NULL) {
			fprintf(stderr, "tickwire-book: %s: %s\n", paths[i],
					errno == EPROTO ? "not a pcap or pcapng capture" :
					strerror(errno));
			while (--i >= 0)
				tw_pcap_close(pcap[i]);
			return 1;
		}
	}
	for (i = 0; i < count; i++) {
		rc = tw_pcap_next(pcap[i], &next[i]);
		have[i] = rc == 1;
		if (rc < 0) {
			fprintf(stderr, "tickwire-book: %s: %s\n", paths[i],
					tw_pcap_error(pcap[i]));
			status = 1;
		}
	}
	for (;;) {
		int best = -1;

		for (i = 0; i < count; i++)
			if (have[i] && (best < 0 || next[i].time_ns < next[best].time_ns))
				best = i;
		if (best < 0)
			break;
		if (feed_frame(r, &next[best]) < 0) {
			status = 1;
			break;
		}
		rc = tw_pcap_next(pcap[best], &next[best]);
		have[best] = rc == 1;
		if (rc < 0) {
			fprintf(stderr, "tickwire-book: %s: frame %" PRIu64 ": %s (frames "
					"before it were replayed)\n", paths[best],
					next[best].number, tw_pcap_error(pcap[best]));
			status = 1;
		}
	}
	for (i = 0; i < count; i++)
		tw_pcap_close(pcap[i]);
	return status;
}

/* ---- output ---- */

/* mantissa * 10^exponent as exact decimal text. */
static void
format_price(char *buf, size_t size, int64_t mantissa, int exponent)
{
	uint64_t mag = mantissa < 0 ? (uint64_t)0 - (uint64_t)mantissa : (uint64_t)mantissa;
	char digits[24];
	int n, point, end, i;
	size_t o = 0;

	if (mantissa == BOOK_PRICE_NONE) {
		snprintf(buf, size, "-");
		return;
	}
	n = snprintf(digits, sizeof(digits), "%" PRIu64, mag);
	if (mantissa < 0)
		buf[o++] = '-';
	if (exponent >= 0) {
		snprintf(buf + o, size - o, "%s%.*s", digits, mag == 0 ? 0 : exponent,
				"000000000000000000");
		return;
	}
	point = n + exponent;  /* digits left of the point */
	end = n;
	while (end > 0 && end > point && digits[end - 1] == '0')
		end--;
	if (point <= 0) {
		o += (size_t)snprintf(buf + o, size - o, "0");
		if (end > 0) {
			buf[o++] = '.';
			for (i = point; i < 0 && o + 1 < size; i++)
				buf[o++] = '0';
			for (i = 0; i < end && o + 1 < size; i++)
				buf[o++] = digits[i];
		}
		buf[o] = '\0';
		return;
	}
	for (i = 0; i < point && o + 1 < size; i++)
		buf[o++] = digits[i];
	if (end > point) {
		buf[o++] = '.';
		for (i = point; i < end && o + 1 < size; i++)
			buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

static int
compare_instruments(const void *a, const void *b)
{
	const struct book_instrument *x = *(const struct book_instrument *const *)a;
	const struct book_instrument *y = *(const struct book_instrument *const *)b;

	return x->security_id < y->security_id ? -1 : x->security_id > y->security_id;
}

static void
json_string(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void
json_levels(const struct book_level *levels, unsigned int n, int exponent)
{
	char price[48];
	unsigned int i;

	putchar('[');
	for (i = 0; i < n; i++) {
		format_price(price, sizeof(price), levels[i].price, exponent);
		printf("%s{\"level\":%u,", i > 0 ? "," : "", i + 1);
		if (levels[i].price == BOOK_PRICE_NONE)
			printf("\"price\":null,\"mantissa\":null,");
		else
			printf("\"price\":\"%s\",\"mantissa\":%" PRId64 ",", price,
					levels[i].price);
		printf("\"qty\":%" PRId64 ",\"orders\":%" PRId32 "}", levels[i].qty,
				levels[i].orders);
	}
	putchar(']');
}

static unsigned int
min_u(unsigned int a, unsigned int b)
{
	return a < b ? a : b;
}

static void
json_book(const char *name, const struct book_level *bid, const struct book_level *ask,
		unsigned int n, int exponent, bool first)
{
	printf("%s\"%s\":{\"bid\":", first ? "" : ",", name);
	json_levels(bid, n, exponent);
	printf(",\"ask\":");
	json_levels(ask, n, exponent);
	putchar('}');
}

/* --mbo output, below */
static void json_mbo_instrument(const struct options *opt, const struct book_feed *feed,
		const struct book_instrument *in);
static void text_mbo_instrument(const struct options *opt, const struct book_feed *feed,
		const struct book_instrument *in);

static void
print_instrument_json(const struct options *opt, const struct book_feed *feed,
		const struct book_instrument *in, bool first)
{
	struct book_level cb[BOOK_CONSOLIDATED_DEPTH], ca[BOOK_CONSOLIDATED_DEPTH];
	unsigned int nc = min_u(opt->levels, BOOK_CONSOLIDATED_DEPTH);
	int nb, na;
	char price[48];

	nb = book_consolidated(in, BOOK_BID, cb, nc);
	na = book_consolidated(in, BOOK_ASK, ca, nc);
	printf("%s{\"security_id\":%" PRId32 ",\"symbol\":", first ? "" : ",", in->security_id);
	json_string(in->symbol);
	printf(",\"group\":");
	json_string(in->security_group);
	printf(",\"state\":\"%s\",\"rpt_seq\":%" PRIu32 ",\"last_msg_seq\":%" PRIu32
			",\"depth\":%u,\"implied_depth\":%u,\"price_exponent\":%d,\"hash\":\"%016"
			PRIx64 "\",", book_state_name((enum book_state)in->state), in->rpt_seq,
			in->last_msg_seq, in->depth, in->implied_depth, in->price_exponent,
			book_instrument_hash(in));
	json_book("outright", in->bid, in->ask, min_u(opt->levels, in->depth), in->price_exponent,
			true);
	json_book("implied", in->implied_bid, in->implied_ask,
			min_u(opt->levels, in->implied_depth), in->price_exponent, false);
	printf(",\"consolidated\":{\"bid\":");
	json_levels(cb, nb > 0 ? (unsigned int)nb : 0, in->price_exponent);
	printf(",\"ask\":");
	json_levels(ca, na > 0 ? (unsigned int)na : 0, in->price_exponent);
	printf("},\"last_trade\":");
	if (in->last_trade.price == BOOK_PRICE_NONE) {
		printf("null");
	} else {
		format_price(price, sizeof(price), in->last_trade.price, in->price_exponent);
		printf("{\"price\":\"%s\",\"qty\":%" PRId64 ",\"aggressor\":%u}", price,
				in->last_trade.qty, in->last_trade.aggressor);
	}
	if (opt->mbo)
		json_mbo_instrument(opt, feed, in);
	printf("}");
}

static void
text_side(const struct book_level *l, int exponent)
{
	char price[48];

	if (l == NULL || l->price == BOOK_PRICE_NONE) {
		printf("  %28s", "-");
		return;
	}
	format_price(price, sizeof(price), l->price, exponent);
	printf("  %8" PRId64 " @ %-12s (%3" PRId32 ")", l->qty, price, l->orders);
}

static void
text_book(const char *name, const struct book_level *bid, unsigned int nbid,
		const struct book_level *ask, unsigned int nask, unsigned int levels, int exponent)
{
	unsigned int i, n = nbid > nask ? nbid : nask;

	if (n > levels)
		n = levels;
	for (i = 0; i < n; i++) {
		printf("    %-12s L%-2u", i == 0 ? name : "", i + 1);
		text_side(i < nbid ? &bid[i] : NULL, exponent);
		printf("  |");
		text_side(i < nask ? &ask[i] : NULL, exponent);
		putchar('\n');
	}
	if (n == 0)
		printf("    %-12s (empty)\n", name);
}

static void
print_instrument_text(const struct options *opt, const struct book_feed *feed,
		const struct book_instrument *in)
{
	struct book_level cb[BOOK_CONSOLIDATED_DEPTH], ca[BOOK_CONSOLIDATED_DEPTH];
	int nb = book_consolidated(in, BOOK_BID, cb, BOOK_CONSOLIDATED_DEPTH);
	int na = book_consolidated(in, BOOK_ASK, ca, BOOK_CONSOLIDATED_DEPTH);

	printf("  instrument %" PRId32 " %s%s%s state=%s rpt_seq=%" PRIu32 " depth=%u/%u"
			" exponent=%d\n", in->security_id, in->symbol[0] != '\0' ? "\"" : "",
			in->symbol, in->symbol[0] != '\0' ? "\"" : "",
			book_state_name((enum book_state)in->state), in->rpt_seq, in->depth,
			in->implied_depth, in->price_exponent);
	printf("    %-12s %-3s  %28s  |  %28s\n", "", "", "bid qty @ price (orders)",
			"ask qty @ price (orders)");
	text_book("outright", in->bid, in->depth, in->ask, in->depth, opt->levels,
			in->price_exponent);
	text_book("implied", in->implied_bid, in->implied_depth, in->implied_ask,
			in->implied_depth, opt->levels, in->price_exponent);
	text_book("consolidated", cb, nb > 0 ? (unsigned int)nb : 0, ca,
			na > 0 ? (unsigned int)na : 0, opt->levels, in->price_exponent);
	if (opt->mbo)
		text_mbo_instrument(opt, feed, in);
}

/* ---- market by order (--mbo) ---- */

static const char *
side_name(unsigned int side)
{
	return side == BOOK_BID ? "bid" : "ask";
}

/* One MBO level's first orders (at most opt->mbo_orders_shown); the count not shown. */
static int
mbo_level_orders(const struct options *opt, const struct book_mbo *mbo, enum book_side side,
		const struct book_level *level, struct book_order *orders, uint32_t *more)
{
	int n = 0;

	if (opt->mbo_orders_shown > 0) {
		n = book_mbo_level_orders(mbo, side, level->price, orders, opt->mbo_orders_shown);
		if (n < 0)
			n = 0;
	}
	*more = level->orders > n ? (uint32_t)(level->orders - n) : 0;
	return n;
}

static void
json_priority(uint64_t priority)
{
	if (priority == UINT64_MAX)
		printf("null");
	else
		printf("%" PRIu64, priority);
}

static void
json_mbo_side(const struct options *opt, const struct book_mbo *mbo, enum book_side side,
		int exponent)
{
	struct book_level levels[BOOK_CONSOLIDATED_DEPTH];
	struct book_order orders[MBO_ORDERS_SHOWN_MAX];
	char price[48];
	uint32_t more;
	int n, k, i, j;

	n = book_mbo_levels(mbo, side, levels, min_u(opt->levels, BOOK_CONSOLIDATED_DEPTH));
	putchar('[');
	for (i = 0; i < n; i++) {
		format_price(price, sizeof(price), levels[i].price, exponent);
		printf("%s{\"level\":%d,\"price\":\"%s\",\"mantissa\":%" PRId64 ",\"qty\":%"
				PRId64 ",\"orders\":%" PRId32 ",\"top\":[", i > 0 ? "," : "",
				i + 1, price, levels[i].price, levels[i].qty, levels[i].orders);
		k = mbo_level_orders(opt, mbo, side, &levels[i], orders, &more);
		for (j = 0; j < k; j++) {
			printf("%s{\"order_id\":%" PRIu64 ",\"priority\":", j > 0 ? "," : "",
					orders[j].order_id);
			json_priority(orders[j].priority);
			printf(",\"qty\":%" PRId64 "}", orders[j].qty);
		}
		printf("],\"more\":%" PRIu32 "}", more);
	}
	putchar(']');
}

/* ,"mbo":null or ,"mbo":{state, orders, bid, ask} of one instrument. */
static void
json_mbo_instrument(const struct options *opt, const struct book_feed *feed,
		const struct book_instrument *in)
{
	const struct book_mbo *mbo = book_feed_mbo(feed, in->security_id);

	if (mbo == NULL) {
		printf(",\"mbo\":null");
		return;
	}
	printf(",\"mbo\":{\"state\":\"%s\",\"orders\":%" PRIu32 ",\"bid\":",
			book_mbo_state_name(book_mbo_state(mbo)), book_mbo_order_count(mbo));
	json_mbo_side(opt, mbo, BOOK_BID, in->price_exponent);
	printf(",\"ask\":");
	json_mbo_side(opt, mbo, BOOK_ASK, in->price_exponent);
	putchar('}');
}

static void
text_mbo_side(const struct options *opt, const struct book_mbo *mbo, enum book_side side,
		int exponent)
{
	struct book_level levels[BOOK_CONSOLIDATED_DEPTH];
	struct book_order orders[MBO_ORDERS_SHOWN_MAX];
	uint32_t more;
	int n, k, i, j;

	n = book_mbo_levels(mbo, side, levels, min_u(opt->levels, BOOK_CONSOLIDATED_DEPTH));
	if (n <= 0) {
		printf("      %s (empty)\n", side_name(side));
		return;
	}
	for (i = 0; i < n; i++) {
		printf("      %s L%-2d", side_name(side), i + 1);
		text_side(&levels[i], exponent);
		putchar('\n');
		k = mbo_level_orders(opt, mbo, side, &levels[i], orders, &more);
		for (j = 0; j < k; j++) {
			printf("        order %" PRIu64 " priority ", orders[j].order_id);
			if (orders[j].priority == UINT64_MAX)
				printf("null");
			else
				printf("%" PRIu64, orders[j].priority);
			printf(" qty %" PRId64 "\n", orders[j].qty);
		}
		if (more > 0)
			printf("        +%" PRIu32 " more\n", more);
	}
}

static void
text_mbo_instrument(const struct options *opt, const struct book_feed *feed,
		const struct book_instrument *in)
{
	const struct book_mbo *mbo = book_feed_mbo(feed, in->security_id);
	enum book_mbo_state state;

	if (mbo == NULL)
		return;
	state = book_mbo_state(mbo);
	printf("    mbo          state=%s orders=%" PRIu32 "%s\n", book_mbo_state_name(state),
			book_mbo_order_count(mbo), state <= BOOK_MBO_PARTIAL ? "" :
			" (not readable until a snapshot or a reset)");
	if (state > BOOK_MBO_PARTIAL)
		return;
	text_mbo_side(opt, mbo, BOOK_BID, in->price_exponent);
	text_mbo_side(opt, mbo, BOOK_ASK, in->price_exponent);
}

/* Sorted instruments of a feed; caller frees. */
static const struct book_instrument **
sorted_instruments(const struct book_feed *feed, uint32_t *count)
{
	uint32_t cap = book_feed_capacity(feed), i, n = 0;
	const struct book_instrument **v = calloc(cap + 1, sizeof(*v));

	if (v == NULL)
		return NULL;
	for (i = 0; i < cap; i++) {
		const struct book_instrument *in = book_feed_instrument(feed, i);

		if (in != NULL)
			v[n++] = in;
	}
	qsort(v, n, sizeof(*v), compare_instruments);
	*count = n;
	return v;
}

/* Counters as (name, value) pairs, for both output modes. */
struct counter {
	const char *name;
	uint64_t value;
};

static unsigned int
collect_counters(const struct channel *ch, const struct book_feed *feed, struct counter *out)
{
	static const struct mdp3_arb_counters no_arbiter;
	const struct book_feed_counters *c = book_feed_counters(feed);
	/* the TCP feed has no arbiter: its counters print as zeros */
	const struct mdp3_arb_counters *a = ch != NULL ? mdp3_arb_counters(ch->path->arb) :
		&no_arbiter;
	unsigned int n = 0;

#define C(nm, v) do { out[n].name = (nm); out[n].value = (v); n++; } while (0)
	/* copies pushed to the arbiter (the books count only the copy applied) */
	C("packets_a", a->packets[MDP3_FEED_A]);
	C("packets_b", a->packets[MDP3_FEED_B]);
	C("snapshot_packets", c->packets[MDP3_STREAM_SNAPSHOT][MDP3_FEED_A] +
			c->packets[MDP3_STREAM_SNAPSHOT][MDP3_FEED_B]);
	C("definition_packets", c->packets[MDP3_STREAM_DEFINITION][MDP3_FEED_A] +
			c->packets[MDP3_STREAM_DEFINITION][MDP3_FEED_B]);
	C("tcp_segments", c->tcp_segments);
	if (ch != NULL) {
		C("dropped_by_tool_a", ch->dropped[MDP3_FEED_A]);
		C("dropped_by_tool_b", ch->dropped[MDP3_FEED_B]);
	}
	C("accepted_a", a->accepted[MDP3_FEED_A]);
	C("accepted_b", a->accepted[MDP3_FEED_B]);
	C("duplicates", a->duplicates[MDP3_FEED_A] + a->duplicates[MDP3_FEED_B]);
	C("gaps", a->gaps);
	C("gaps_filled", a->gaps_filled);
	C("held", a->held);
	C("max_held", a->max_held);
	C("max_hold_ns", a->max_hold_ns);
	C("declared_losses", a->losses);
	C("lost_packets", a->lost_packets);
	C("window_overflows", a->window_overflows);
	C("packets_applied", c->packets_applied);
	C("malformed", c->malformed);
	C("messages", c->messages);
	C("messages_ignored", c->messages_ignored);
	C("messages_unknown", c->messages_unknown);
	C("entries", c->entries);
	C("book_updates", c->book_updates);
	C("trades", c->trades);
	C("status_updates", c->status_updates);
	C("rpt_seq_gaps", c->rpt_seq_gaps);
	C("rpt_seq_duplicates", c->rpt_seq_duplicates);
	C("stale_entries", c->stale_entries);
	C("stale_books", c->stale_books);
	C("recoveries", c->recoveries);
	C("snapshots", c->snapshots);
	C("snapshots_ignored", c->snapshots_ignored);
	C("channel_resets", c->channel_resets);
	C("book_resets", c->book_resets);
	C("definitions", c->definitions);
	C("level_out_of_range", c->level_out_of_range);
	C("level_missing", c->level_missing);
	C("bad_entries", c->bad_entries);
	C("table_full", c->table_full);
	C("recovery_buffered", c->recovery_buffered);
	C("recovery_overflows", c->recovery_overflows);
	C("replayed_packets", c->replayed_packets);
#undef C
	return n;
}

/* The mbo_* counters of a feed (--mbo). */
static unsigned int
collect_mbo_counters(const struct book_feed *feed, struct counter *out)
{
	const struct book_feed_counters *c = book_feed_counters(feed);
	unsigned int n = 0;

#define C(field) do { out[n].name = #field; out[n].value = c->field; n++; } while (0)
	C(mbo_entries_47);
	C(mbo_entries_46);
	C(mbo_new);
	C(mbo_changes);
	C(mbo_deletes);
	C(mbo_unknown_orders);
	C(mbo_bad_entries);
	C(mbo_not_applied);
	C(mbo_replayed);
	C(mbo_books_refused);
	C(mbo_order_overflows);
	C(mbo_level_overflows);
	C(mbo_stale_marked);
	C(mbo_stale_books);
	C(mbo_snapshots);
	C(mbo_snapshots_ignored);
	C(mbo_resets);
	C(mbo_table_grows);
	C(mbo_checks);
	C(mbo_mismatches);
	C(mbo_level_diffs);
	C(mbo_checks_ahead);
#undef C
	return n;
}

#define MBO_STATE_COUNT 4

/* MBO books of the instruments, counted by state. */
static void
count_mbo_books(const struct book_feed *feed, const struct book_instrument *const *v,
		uint32_t n, uint32_t *by_state)
{
	uint32_t j;

	memset(by_state, 0, MBO_STATE_COUNT * sizeof(*by_state));
	for (j = 0; j < n; j++) {
		const struct book_mbo *mbo = book_feed_mbo(feed, v[j]->security_id);
		unsigned int state = (unsigned int)book_mbo_state(mbo);

		if (mbo != NULL && state < MBO_STATE_COUNT)
			by_state[state]++;
	}
}

/* Exponent for a difference's prices: its instrument's, else the feed's. */
static int
diff_exponent(const struct book_feed *feed, int32_t security_id)
{
	const struct book_instrument *in = book_feed_find(feed, security_id);

	return in != NULL ? in->price_exponent : book_feed_config(feed)->price_exponent;
}

static void
json_diff_level(const struct book_level *l, int exponent)
{
	char price[48];

	if (l->price == BOOK_PRICE_NONE) {
		printf("null");
		return;
	}
	format_price(price, sizeof(price), l->price, exponent);
	printf("{\"price\":\"%s\",\"mantissa\":%" PRId64 ",\"qty\":%" PRId64 ",\"orders\":%"
			PRId32 "}", price, l->price, l->qty, l->orders);
}

static void
text_diff_level(const char *name, const struct book_level *l, int exponent)
{
	char price[48];

	if (l->price == BOOK_PRICE_NONE) {
		printf("%s none", name);
		return;
	}
	format_price(price, sizeof(price), l->price, exponent);
	printf("%s %" PRId64 " @ %s (%" PRId32 ")", name, l->qty, price, l->orders);
}

/*
 * The channel's MBO part: bounds, books by state, mbo_* counters and the
 * oracle's first differences.  JSON: the value of "mbo"; text: a block.
 */
static int
print_mbo_feed(const struct options *opt, const struct book_feed *feed,
		const struct book_instrument *const *v, uint32_t n)
{
	const struct book_feed_config *cfg = book_feed_config(feed);
	struct counter counters[32];
	uint32_t by_state[MBO_STATE_COUNT];
	struct book_mbo_diff *diffs;
	unsigned int nc, i;
	int nd;

	diffs = calloc(cfg->mbo_diffs + 1, sizeof(*diffs));
	if (diffs == NULL)
		return -ENOMEM;
	nd = book_feed_mbo_diffs(feed, diffs, cfg->mbo_diffs);
	if (nd < 0)
		nd = 0;
	nc = collect_mbo_counters(feed, counters);
	count_mbo_books(feed, v, n, by_state);
	if (opt->json) {
		printf("\"mbo\":{\"bounds\":{\"instruments\":%" PRIu32 ",\"orders\":%" PRIu32
				",\"levels\":%" PRIu32 ",\"diffs\":%" PRIu32 ",\"presize\":%s},"
				"\"books\":{", cfg->mbo_instruments, cfg->mbo_orders, cfg->mbo_levels,
				cfg->mbo_diffs, cfg->mbo_presize ? "true" : "false");
		for (i = 0; i < MBO_STATE_COUNT; i++)
			printf("%s\"%s\":%" PRIu32, i > 0 ? "," : "",
					book_mbo_state_name((enum book_mbo_state)i), by_state[i]);
		printf("},\"counters\":{");
		for (i = 0; i < nc; i++)
			printf("%s\"%s\":%" PRIu64, i > 0 ? "," : "", counters[i].name,
					counters[i].value);
		printf("},\"diffs\":[");
		for (i = 0; i < (unsigned int)nd; i++) {
			int exponent = diff_exponent(feed, diffs[i].security_id);

			printf("%s{\"security_id\":%" PRId32 ",\"msg_seq_num\":%" PRIu32
					",\"side\":\"%s\",\"level\":%u,\"mbo\":", i > 0 ? "," : "",
					diffs[i].security_id, diffs[i].msg_seq_num,
					side_name(diffs[i].side), diffs[i].level);
			json_diff_level(&diffs[i].mbo, exponent);
			printf(",\"mbp\":");
			json_diff_level(&diffs[i].mbp, exponent);
			putchar('}');
		}
		printf("]},");
	} else {
		printf("  mbo: books");
		for (i = 0; i < MBO_STATE_COUNT; i++)
			printf(" %s=%" PRIu32, book_mbo_state_name((enum book_mbo_state)i),
					by_state[i]);
		printf(" (bounds: %" PRIu32 " books, %" PRIu32 " orders per book, %" PRIu32
				" levels per side%s)", cfg->mbo_instruments, cfg->mbo_orders,
				cfg->mbo_levels, cfg->mbo_presize ? "; OrderID tables presized" : "");
		for (i = 0; i < nc; i++)
			printf("%s%s=%" PRIu64, i % 5 == 0 ? "\n    " : " ", counters[i].name,
					counters[i].value);
		printf("\n  mbo oracle: checks=%" PRIu64 " mismatches=%" PRIu64 " level_diffs=%"
				PRIu64 ", first %d difference%s%s\n",
				book_feed_counters(feed)->mbo_checks,
				book_feed_counters(feed)->mbo_mismatches,
				book_feed_counters(feed)->mbo_level_diffs, nd, nd == 1 ? "" : "s",
				nd > 0 ? ":" : "");
		for (i = 0; i < (unsigned int)nd; i++) {
			int exponent = diff_exponent(feed, diffs[i].security_id);

			printf("    instrument %" PRId32 " seq %" PRIu32 " %s L%u: ",
					diffs[i].security_id, diffs[i].msg_seq_num,
					side_name(diffs[i].side), diffs[i].level);
			text_diff_level("mbo", &diffs[i].mbo, exponent);
			printf(" | ");
			text_diff_level("mbp", &diffs[i].mbp, exponent);
			putchar('\n');
		}
	}
	free(diffs);
	return 0;
}

/*
 * Sequence numbers every copy of which was dropped, between the first and
 * the last kept ones (the arbiter cannot know of others).
 */
static uint64_t
lost_on_both(const struct channel *ch)
{
	uint64_t n = 0;
	size_t i;

	if (!ch->any_kept)
		return 0;
	for (i = 0; i < ch->seqs.size; i++) {
		uint8_t m = ch->seqs.marks[i];

		if (m != 0 && !(m & SEQ_KEPT) &&
				(int32_t)(ch->seqs.keys[i] - ch->max_seq_kept) < 0 &&
				(int32_t)(ch->seqs.keys[i] - ch->min_seq_kept) > 0)
			n++;
	}
	return n;
}

static int
print_feed(const struct options *opt, const struct channel *ch, const struct book_feed *feed,
		const char *label, bool first)
{
	struct counter counters[64];
	const struct book_instrument **v;
	unsigned int nc, i;
	uint32_t n, j;

	v = sorted_instruments(feed, &n);
	if (v == NULL)
		return -ENOMEM;
	nc = collect_counters(ch, feed, counters);
	if (opt->json) {
		printf("%s{\"channel\":%s,\"instrument_count\":%" PRIu32 ",", first ? "" : ",",
				label, n);
		if (ch != NULL)
			printf("\"lost_on_both\":%" PRIu64 ",", lost_on_both(ch));
		printf("\"book_hash\":\"%016" PRIx64 "\",\"counters\":{", book_feed_hash(feed));
		for (i = 0; i < nc; i++)
			printf("%s\"%s\":%" PRIu64, i > 0 ? "," : "", counters[i].name,
					counters[i].value);
		printf("},");
		if (opt->mbo && print_mbo_feed(opt, feed, v, n) < 0) {
			free(v);
			return -ENOMEM;
		}
		printf("\"instruments\":[");
		for (j = 0; !opt->quiet_books && j < n; j++)
			print_instrument_json(opt, feed, v[j], j == 0);
		printf("]}");
	} else {
		printf("channel %s: %" PRIu32 " instruments, book hash %016" PRIx64 "\n", label, n,
				book_feed_hash(feed));
		for (j = 0; !opt->quiet_books && j < n; j++)
			print_instrument_text(opt, feed, v[j]);
		printf("  counters:");
		for (i = 0; i < nc; i++)
			printf("%s%s=%" PRIu64, i % 6 == 0 ? "\n    " : " ", counters[i].name,
					counters[i].value);
		if (ch != NULL)
			printf("\n    lost_on_both=%" PRIu64, lost_on_both(ch));
		printf("\n");
		if (opt->mbo && print_mbo_feed(opt, feed, v, n) < 0) {
			free(v);
			return -ENOMEM;
		}
	}
	free(v);
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: tickwire-book [options] FILE...\n"
		"Replay MDP 3.0 captures (pcap/pcapng; frames of all files merged by time)\n"
		"through A/B arbitration, decoding and the books; print the final books of\n"
		"every instrument (outright, implied, consolidated) and the counters.\n"
		"\n"
		"Routing (destination group -> stream, feed; most specific match wins):\n"
		"  default         224.0.31.0/24 = incremental feed A,\n"
		"                  224.0.32.0/24 = incremental feed B (CME's convention;\n"
		"                  e.g. channel 340: A 224.0.31.64:14340, B 224.0.32.64:15340)\n"
		"  --a-group G     incremental feed A is G[/LEN][:PORT] (replaces the default A\n"
		"                  route; repeat to add more)\n"
		"  --b-group G     the same for feed B\n"
		"  --snapshot-a G, --snapshot-b G       market-recovery (snapshot) groups\n"
		"  --definition-a G, --definition-b G   instrument-replay groups\n"
		"  channels        datagrams are split by channel: port 14ccc / 15ccc -> ccc,\n"
		"                  any other port -> the port; --one-channel: no split\n"
		"  --tcp           also apply MDP conflated-TCP segments (separate feed)\n"
		"\n"
		"Arbitration and loss:\n"
		"  --feed A|B|both use feed A only, B only, or both (default both)\n"
		"  --drop-a P      drop incremental packets of feed A with probability P, a\n"
		"                  PERCENT with up to 4 decimals (\"1\", \"0.5\", \"20%%\")\n"
		"  --drop-b P      the same for feed B (independent generator)\n"
		"  --seed S        seed of the drop generators (default 1)\n"
		"  --window N      arbiter hold window, packets (power of two, default 64)\n"
		"  --wait-packets N  declare a gap lost after N arrivals (default 32)\n"
		"  --wait-us N     ... or after N microseconds of capture time (default 1000)\n"
		"  --join trust|recover  instruments first seen mid-stream: valid at once\n"
		"                  (default) or stale until a snapshot\n"
		"\n"
		"Output:\n"
		"  --levels N      levels printed per book (default 5)\n"
		"  --json          one JSON document\n"
		"  --counters-only print no books\n"
		"\n"
		"Market by order (lib/book's MBO books; off by default):\n"
		"  --mbo           keep MBO books and print, per instrument, the MBO state,\n"
		"                  order count and the best --levels levels aggregated from\n"
		"                  the orders with their first orders in priority order;\n"
		"                  per channel the mbo_* counters and the oracle's result\n"
		"                  (MBO aggregate against the price-level book)\n"
		"  --mbo-orders-per-level N  orders printed per level (0..%u, default %u;\n"
		"                  \"+K more\" when there are more)\n"
		"  --mbo-instruments N  MBO books per channel (1..%u, default %u)\n"
		"  --mbo-orders N  resting orders per MBO book (1..%u, default %u)\n"
		"  --mbo-levels N  price levels per side of an MBO book (1..%u, default %u)\n"
		"  --mbo-diffs N   oracle differences kept and printed (1..%u, default %u)\n"
		"  --mbo-presize   OrderID tables at their full size from the start: no\n"
		"                  doubling (mbo_table_grows stays 0), a larger cache footprint\n"
		"Exit: 0 done; 1 a file could not be read; 2 usage.\n",
		MBO_ORDERS_SHOWN_MAX, MBO_ORDERS_SHOWN_DEFAULT,
		BOOK_MAX_MBO_INSTRUMENTS, BOOK_DEFAULT_MBO_INSTRUMENTS,
		BOOK_MAX_MBO_ORDERS, BOOK_DEFAULT_MBO_ORDERS,
		BOOK_MAX_MBO_LEVELS, BOOK_DEFAULT_MBO_LEVELS,
		MBO_DIFFS_MAX, BOOK_DEFAULT_MBO_DIFFS);
}

/* An MBO bound: 1..max (0..max when zero_ok); errors name the option. */
static int
parse_mbo_bound(const char *option, const char *text, uint32_t max, bool zero_ok,
		const char *what, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(text, &v) < 0 || v > max || (v == 0 && !zero_ok)) {
		fprintf(stderr, "tickwire-book: %s wants %u..%" PRIu32 " (%s), got '%s'\n",
				option, zero_ok ? 0u : 1u, max, what, text);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

static int
add_route(struct options *opt, const char *text, enum mdp3_stream stream,
		enum mdp3_feed_id feed, bool *replaced)
{
	struct mdp3_route r;

	if (mdp3_route_parse(text, &r) < 0) {
		fprintf(stderr, "tickwire-book: bad group '%s' (want A.B.C.D[/LEN][:PORT])\n",
				text);
		return -1;
	}
	if (replaced != NULL && !*replaced) {
		mdp3_routes_remove(&opt->routes, stream, feed);
		*replaced = true;
	}
	r.stream = (uint8_t)stream;
	r.feed = (uint8_t)feed;
	if (mdp3_routes_add(&opt->routes, &r) < 0) {
		fprintf(stderr, "tickwire-book: too many routes (at most %d)\n", MDP3_ROUTES_MAX);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	enum {
		OPT_FEED = 256, OPT_DROP_A, OPT_DROP_B, OPT_SEED, OPT_LEVELS, OPT_JSON,
		OPT_A_GROUP, OPT_B_GROUP, OPT_SNAP_A, OPT_SNAP_B, OPT_DEF_A, OPT_DEF_B, OPT_TCP,
		OPT_ONE, OPT_WINDOW, OPT_WAIT_PACKETS, OPT_WAIT_US, OPT_JOIN, OPT_QUIET,
		OPT_MBO, OPT_MBO_SHOWN, OPT_MBO_INSTRUMENTS, OPT_MBO_ORDERS, OPT_MBO_LEVELS,
		OPT_MBO_DIFFS, OPT_MBO_PRESIZE, OPT_HELP,
	};
	static const struct option longopts[] = {
		{ "feed", required_argument, NULL, OPT_FEED },
		{ "drop-a", required_argument, NULL, OPT_DROP_A },
		{ "drop-b", required_argument, NULL, OPT_DROP_B },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "levels", required_argument, NULL, OPT_LEVELS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "a-group", required_argument, NULL, OPT_A_GROUP },
		{ "b-group", required_argument, NULL, OPT_B_GROUP },
		{ "snapshot-a", required_argument, NULL, OPT_SNAP_A },
		{ "snapshot-b", required_argument, NULL, OPT_SNAP_B },
		{ "definition-a", required_argument, NULL, OPT_DEF_A },
		{ "definition-b", required_argument, NULL, OPT_DEF_B },
		{ "tcp", no_argument, NULL, OPT_TCP },
		{ "one-channel", no_argument, NULL, OPT_ONE },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "wait-packets", required_argument, NULL, OPT_WAIT_PACKETS },
		{ "wait-us", required_argument, NULL, OPT_WAIT_US },
		{ "join", required_argument, NULL, OPT_JOIN },
		{ "counters-only", no_argument, NULL, OPT_QUIET },
		{ "mbo", no_argument, NULL, OPT_MBO },
		{ "mbo-orders-per-level", required_argument, NULL, OPT_MBO_SHOWN },
		{ "mbo-instruments", required_argument, NULL, OPT_MBO_INSTRUMENTS },
		{ "mbo-orders", required_argument, NULL, OPT_MBO_ORDERS },
		{ "mbo-levels", required_argument, NULL, OPT_MBO_LEVELS },
		{ "mbo-diffs", required_argument, NULL, OPT_MBO_DIFFS },
		{ "mbo-presize", no_argument, NULL, OPT_MBO_PRESIZE },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	static struct options opt;
	static struct run r;
	bool replaced_a = false, replaced_b = false;
	const char *mbo_option = NULL;   /* an --mbo-* option given (needs --mbo) */
	uint32_t u32;
	enum mdp3_feed_id feed;
	uint64_t v;
	unsigned int i;
	int c, status;

	opt.use_feed[MDP3_FEED_A] = opt.use_feed[MDP3_FEED_B] = true;
	opt.seed = 1;
	opt.levels = 5;
	opt.mbo_orders_shown = MBO_ORDERS_SHOWN_DEFAULT;
	mdp3_routes_init(&opt.routes, true);
	opt.config.arb.wait_packets = MDP3_ARB_DEFAULT_WAIT_PACKETS;
	opt.config.arb.wait_ns = MDP3_ARB_DEFAULT_WAIT_NS;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FEED:
			if (strcmp(optarg, "A") == 0 || strcmp(optarg, "a") == 0) {
				opt.use_feed[MDP3_FEED_B] = false;
			} else if (strcmp(optarg, "B") == 0 || strcmp(optarg, "b") == 0) {
				opt.use_feed[MDP3_FEED_A] = false;
			} else if (strcmp(optarg, "both") != 0) {
				fprintf(stderr, "tickwire-book: --feed wants A, B or both\n");
				return EXIT_USAGE;
			}
			break;
		case OPT_DROP_A:
		case OPT_DROP_B:
			feed = c == OPT_DROP_A ? MDP3_FEED_A : MDP3_FEED_B;
			if (parse_percent(optarg, &opt.drop_ppm[feed]) < 0) {
				fprintf(stderr, "tickwire-book: --drop-a/--drop-b want a "
						"percentage 0..100 with up to 4 decimals, got "
						"'%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &opt.seed) < 0) {
				fprintf(stderr, "tickwire-book: bad --seed '%s'\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_LEVELS:
			if (parse_u64(optarg, &v) < 0 || v == 0 || v > BOOK_CONSOLIDATED_DEPTH) {
				fprintf(stderr, "tickwire-book: --levels wants 1..%d\n",
						BOOK_CONSOLIDATED_DEPTH);
				return EXIT_USAGE;
			}
			opt.levels = (unsigned int)v;
			break;
		case OPT_JSON:
			opt.json = true;
			break;
		case OPT_A_GROUP:
		case OPT_B_GROUP:
			feed = c == OPT_A_GROUP ? MDP3_FEED_A : MDP3_FEED_B;
			if (add_route(&opt, optarg, MDP3_STREAM_INCREMENTAL, feed,
						c == OPT_A_GROUP ? &replaced_a : &replaced_b) < 0)
				return EXIT_USAGE;
			break;
		case OPT_SNAP_A:
		case OPT_SNAP_B:
			feed = c == OPT_SNAP_A ? MDP3_FEED_A : MDP3_FEED_B;
			if (add_route(&opt, optarg, MDP3_STREAM_SNAPSHOT, feed, NULL) < 0)
				return EXIT_USAGE;
			break;
		case OPT_DEF_A:
		case OPT_DEF_B:
			feed = c == OPT_DEF_A ? MDP3_FEED_A : MDP3_FEED_B;
			if (add_route(&opt, optarg, MDP3_STREAM_DEFINITION, feed, NULL) < 0)
				return EXIT_USAGE;
			break;
		case OPT_TCP:
			opt.tcp = true;
			break;
		case OPT_ONE:
			opt.one_channel = true;
			break;
		case OPT_WINDOW:
			if (parse_u64(optarg, &v) < 0 || v < 2 || v > MDP3_ARB_WINDOW_MAX ||
					(v & (v - 1)) != 0) {
				fprintf(stderr, "tickwire-book: --window wants a power of two "
						"2..%u\n", MDP3_ARB_WINDOW_MAX);
				return EXIT_USAGE;
			}
			opt.config.arb.window = (uint32_t)v;
			break;
		case OPT_WAIT_PACKETS:
			if (parse_u64(optarg, &v) < 0 || v > UINT32_MAX) {
				fprintf(stderr, "tickwire-book: bad --wait-packets '%s'\n",
						optarg);
				return EXIT_USAGE;
			}
			opt.config.arb.wait_packets = (uint32_t)v;
			break;
		case OPT_WAIT_US:
			if (parse_u64(optarg, &v) < 0 || v > UINT64_MAX / 1000) {
				fprintf(stderr, "tickwire-book: bad --wait-us '%s'\n", optarg);
				return EXIT_USAGE;
			}
			opt.config.arb.wait_ns = v * 1000;
			break;
		case OPT_JOIN:
			if (strcmp(optarg, "trust") == 0) {
				opt.config.book.join = BOOK_JOIN_TRUST;
			} else if (strcmp(optarg, "recover") == 0) {
				opt.config.book.join = BOOK_JOIN_RECOVER;
			} else {
				fprintf(stderr, "tickwire-book: --join wants trust or recover\n");
				return EXIT_USAGE;
			}
			break;
		case OPT_QUIET:
			opt.quiet_books = true;
			break;
		case OPT_MBO:
			opt.mbo = true;
			opt.config.book.mbo = true;
			break;
		case OPT_MBO_SHOWN:
			mbo_option = "--mbo-orders-per-level";
			if (parse_mbo_bound(mbo_option, optarg, MBO_ORDERS_SHOWN_MAX, true,
						"orders printed per level", &u32) < 0)
				return EXIT_USAGE;
			opt.mbo_orders_shown = u32;
			break;
		case OPT_MBO_INSTRUMENTS:
			mbo_option = "--mbo-instruments";
			if (parse_mbo_bound(mbo_option, optarg, BOOK_MAX_MBO_INSTRUMENTS, false,
						"MBO books per channel",
						&opt.config.book.mbo_instruments) < 0)
				return EXIT_USAGE;
			break;
		case OPT_MBO_ORDERS:
			mbo_option = "--mbo-orders";
			if (parse_mbo_bound(mbo_option, optarg, BOOK_MAX_MBO_ORDERS, false,
						"resting orders per MBO book",
						&opt.config.book.mbo_orders) < 0)
				return EXIT_USAGE;
			break;
		case OPT_MBO_LEVELS:
			mbo_option = "--mbo-levels";
			if (parse_mbo_bound(mbo_option, optarg, BOOK_MAX_MBO_LEVELS, false,
						"price levels per side of an MBO book",
						&opt.config.book.mbo_levels) < 0)
				return EXIT_USAGE;
			break;
		case OPT_MBO_DIFFS:
			mbo_option = "--mbo-diffs";
			if (parse_mbo_bound(mbo_option, optarg, MBO_DIFFS_MAX, false,
						"oracle differences kept", &u32) < 0)
				return EXIT_USAGE;
			opt.config.book.mbo_diffs = u32;
			break;
		case OPT_MBO_PRESIZE:
			mbo_option = "--mbo-presize";
			opt.config.book.mbo_presize = true;
			break;
		case OPT_HELP:
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "tickwire-book: no capture file given\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (argc - optind > MAX_FILES) {
		fprintf(stderr, "tickwire-book: at most %d files\n", MAX_FILES);
		return EXIT_USAGE;
	}
	if (opt.config.arb.wait_packets == 0 && opt.config.arb.wait_ns == 0) {
		fprintf(stderr, "tickwire-book: --wait-packets and --wait-us cannot both be 0\n");
		return EXIT_USAGE;
	}
	if (mbo_option != NULL && !opt.mbo) {
		fprintf(stderr, "tickwire-book: %s needs --mbo (market-by-order books are off "
				"without it)\n", mbo_option);
		return EXIT_USAGE;
	}
	r.opt = &opt;
	r.rng[MDP3_FEED_A] = opt.seed ^ UINT64_C(0xa0a0a0a0a0a0a0a0);
	r.rng[MDP3_FEED_B] = opt.seed ^ UINT64_C(0x0b0b0b0b0b0b0b0b);
	status = replay_files(&r, argv + optind, argc - optind);
	for (i = 0; i < r.channel_count; i++)
		tw_feed_finish(r.channels[i].path, r.last_time_ns);
	if (opt.json)
		printf("{\"frames\":%" PRIu64 ",\"not_udp\":%" PRIu64 ",\"unrouted\":%"
				PRIu64 ",\"feed_filtered\":%" PRIu64 ",\"channels\":[", r.frames,
				r.not_udp, r.unrouted, r.feed_filtered);
	else
		printf("frames=%" PRIu64 " not_udp=%" PRIu64 " unrouted=%" PRIu64
				" feed_filtered=%" PRIu64 "\n", r.frames, r.not_udp, r.unrouted,
				r.feed_filtered);
	for (i = 0; i < r.channel_count; i++) {
		char label[16];

		snprintf(label, sizeof(label), "%" PRIu32, r.channels[i].id);
		if (print_feed(&opt, &r.channels[i], r.channels[i].path->book, label, i == 0) < 0)
			status = 1;
	}
	if (r.tcp_feed != NULL && print_feed(&opt, NULL, r.tcp_feed, opt.json ? "\"tcp\"" : "tcp",
				r.channel_count == 0) < 0)
		status = 1;
	if (opt.json)
		printf("]}\n");
	for (i = 0; i < r.channel_count; i++) {
		tw_feed_destroy(r.channels[i].path);
		seq_map_free(&r.channels[i].seqs);
	}
	book_feed_destroy(r.tcp_feed);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "tickwire-book: writing the output failed: %s\n", strerror(errno));
		return 1;
	}
	return status;
}
