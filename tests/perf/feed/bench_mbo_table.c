/* SPDX-License-Identifier: BSD-3-Clause
 * bench_mbo_table: what the doubling of an MBO book's OrderID table costs on
 * the market-data path, next to the order entries around it, and what a
 * table laid out at full size from the start (book_feed_config.mbo_presize)
 * costs instead.
 *
 * One instrument, one MBO book of bound --orders (default 4096).  A
 * repetition creates a fresh feed (before any clock), then applies --orders
 * packets one by one through book_feed_apply(), each one template 47 with
 * one new order (CME-like 13-digit OrderIDs with a stride, 64 prices a side,
 * sides alternating, EndOfEvent), and times each packet on its own
 * (clock_gettime around book_feed_apply(): t0 before the call, t1 after it
 * returns; nothing else in between).  The book fills from empty to its
 * bound, so it passes every doubling of its table: 32 -> 64 entries at 16
 * orders, ... up to the bound's size (2 × orders rounded up to a power of
 * two) at a quarter of it.  Arms, interleaved repetition by repetition:
 *   grow      the default: the table starts at 32 entries and doubles
 *   presize   mbo_presize: the table starts at its full size, never doubles
 * Each packet's time is the median over the repetitions of that packet
 * (the same book state every time); the table prints, per arm, the median
 * and the 99th percentile over the packets and the largest, and per
 * doubling the packet that made it.  Headline ratios, same run: the last
 * doubling's packet / the grow arm's median packet, and the presize arm's
 * largest packet / its median (no step: near 1 plus noise).
 *
 * Then what a ChannelReset costs, which empties every MBO book: --books
 * instruments (default 64), each book of the same bound holding 16 orders
 * (applied before any clock), then one ChannelReset (template 4,
 * EndOfEvent) timed alone, t0/t1 around its book_feed_apply().  A grow
 * book's clear writes its first 32 table entries, a presized one its whole
 * table (2 x orders entries rounded up to a power of two, 4 bytes each).
 * Median over the repetitions, arms interleaved; printed per arm and per
 * book, and presize / grow.
 *
 * usage: bench_mbo_table [--cpu N] [--reps R] [--orders N] [--books N] [--json FILE]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "book.h"
#include "feed_bench.h"
#include "mdp3.h"

/* book_test_packets.h reports misuse through this (cmocka's name there) */
#define fail_msg(...) (fprintf(stderr, "bench_mbo_table: " __VA_ARGS__), \
		       fputc('\n', stderr), exit(1))
#include "book_test_packets.h"

#define MAX_REPS 301
#define MAX_ORDERS 65536
#define MAX_BOOKS 1024
#define SID 7001
/* orders each book holds when the channel resets */
#define RESET_ORDERS 16
#define V9 9

enum arm { ARM_GROW, ARM_PRESIZE, ARM_COUNT };

static const char *const arm_names[ARM_COUNT] = { "grow", "presize" };

struct packet {
	uint8_t buf[128];
	size_t len;
};

static int
compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n values, sorted in place. */
static uint64_t
quantile(uint64_t *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), compare_u64);
	return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

/* Close packet p and keep it in out. */
static void
finish(struct packet *out, struct tp *p)
{
	out->len = tp_end(p);
	if (out->len > sizeof(out->buf))
		fail_msg("packet of %zu bytes", out->len);
	memcpy(out->buf, p->buf, out->len);
}

/* Packet MsgSeqNum seq: order i of instrument sid, new. */
static void
build(struct packet *out, uint32_t seq, int32_t sid, uint32_t i)
{
	struct tp p;
	const unsigned int side = i & 1, level = (i / 2) % 64;
	const int64_t tick = 250000000;  /* 0.25 in PRICE9 */
	const int64_t px = side == BOOK_BID ? (int64_t)(4000 * 4 - level) * tick :
		(int64_t)(4000 * 4 + 1 + level) * tick;

	tp_packet(&p, seq, 0);
	tp_msg(&p, 47, V9);
	tp_set(&p, "TransactTime", 1);
	tp_set(&p, "MatchEventIndicator", 0x80);
	tp_group(&p, "NoMDEntries");
	tp_entry(&p);
	tp_set(&p, "OrderID", (int64_t)(UINT64_C(6512000000000) + (uint64_t)i * 7919));
	tp_set(&p, "MDOrderPriority", (int64_t)i + 1);
	tp_set(&p, "MDEntryPx", px);
	tp_set(&p, "MDDisplayQty", 1 + (int64_t)(i % 5));
	tp_set(&p, "SecurityID", sid);
	tp_set(&p, "MDUpdateAction", 0);
	tp_set(&p, "MDEntryType", side == BOOK_BID ? '0' : '1');
	finish(out, &p);
}

/* Packet MsgSeqNum seq: a ChannelReset. */
static void
build_reset(struct packet *out, uint32_t seq)
{
	struct tp p;

	tp_packet(&p, seq, 0);
	tp_msg(&p, 4, V9);
	tp_set(&p, "TransactTime", 1);
	tp_set(&p, "MatchEventIndicator", 0x80);
	finish(out, &p);
}

/* A feed of books MBO books of bound n, laid out as the arm says. */
static struct book_feed *
make_feed(enum arm arm, uint32_t n, uint32_t books)
{
	struct book_feed_config c;
	struct book_feed *f;

	memset(&c, 0, sizeof(c));
	c.max_instruments = 2 * books + 2;
	c.join = BOOK_JOIN_TRUST;  /* the book applies from the first entry */
	c.mbo = true;
	c.mbo_instruments = books;
	c.mbo_orders = n;
	c.mbo_levels = 256;
	c.mbo_presize = arm == ARM_PRESIZE;
	f = book_feed_create(&c);
	if (f == NULL) {
		fprintf(stderr, "bench_mbo_table: book_feed_create: %s\n", strerror(errno));
		exit(1);
	}
	return f;
}

static void
apply(struct book_feed *f, const struct packet *pk, const char *what)
{
	int rc = book_feed_apply(f, MDP3_FEED_A, pk->buf, pk->len, 0);

	if (rc != 0) {
		fprintf(stderr, "bench_mbo_table: %s: book_feed_apply: %d\n", what, rc);
		exit(1);
	}
}

/* One repetition of an arm, a book of bound n filled by its n packets: ns[i]
 * the time of packet i, grew[i] whether it doubled the table. */
static void
one_rep(enum arm arm, const struct packet *pk, uint32_t n, uint64_t *ns, bool *grew)
{
	struct book_feed *f = make_feed(arm, n, 1);
	uint64_t grows = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t t0, t1, g;

		t0 = fb_now_ns();
		apply(f, &pk[i], "fill");
		t1 = fb_now_ns();
		ns[i] = t1 - t0;
		g = book_feed_counters(f)->mbo_table_grows;
		grew[i] = g != grows;
		grows = g;
	}
	if (book_mbo_order_count(book_feed_mbo(f, SID)) != n ||
			book_feed_counters(f)->mbo_not_applied != 0) {
		fprintf(stderr, "bench_mbo_table: %s: the book holds %u orders, not %u\n",
			arm_names[arm], book_mbo_order_count(book_feed_mbo(f, SID)), n);
		exit(1);
	}
	book_feed_destroy(f);
}

/* One repetition of the reset: books books of bound n with RESET_ORDERS
 * orders each (pk: their packets, then the ChannelReset); @return the
 * reset's ns. */
static uint64_t
reset_rep(enum arm arm, const struct packet *pk, uint32_t n, uint32_t books)
{
	struct book_feed *f = make_feed(arm, n, books);
	const uint32_t fills = books * RESET_ORDERS;
	uint64_t t0, t1;
	uint32_t i;

	for (i = 0; i < fills; i++)
		apply(f, &pk[i], "reset fill");
	t0 = fb_now_ns();
	apply(f, &pk[fills], "ChannelReset");
	t1 = fb_now_ns();
	if (book_feed_counters(f)->mbo_resets != books ||
			book_feed_counters(f)->mbo_not_applied != 0) {
		fprintf(stderr, "bench_mbo_table: %s: the ChannelReset emptied %" PRIu64
			" of %u books\n", arm_names[arm], book_feed_counters(f)->mbo_resets, books);
		exit(1);
	}
	for (i = 0; i < books; i++)
		if (book_mbo_order_count(book_feed_mbo(f, SID + (int32_t)i)) != 0) {
			fprintf(stderr, "bench_mbo_table: %s: book %u not empty after the "
				"ChannelReset\n", arm_names[arm], i);
			exit(1);
		}
	book_feed_destroy(f);
	return t1 - t0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_mbo_table [--cpu N] [--reps R] [--orders N] [--books N] "
		"[--json FILE]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cpu", required_argument, NULL, 'c' },
		{ "reps", required_argument, NULL, 'r' },
		{ "orders", required_argument, NULL, 'o' },
		{ "books", required_argument, NULL, 'b' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *json = "bench_mbo_table.json";
	unsigned long reps = 31, orders = 4096, books = 64;
	long cpu = -1;
	struct packet *pk, *rpk;
	uint64_t *rns[ARM_COUNT], reset_med[ARM_COUNT];
	uint64_t *ns[ARM_COUNT], *med[ARM_COUNT], *col, *tmp;
	bool *grew, *doubles;
	uint64_t arm_med[ARM_COUNT], arm_p99[ARM_COUNT], arm_max[ARM_COUNT];
	uint32_t i, n, last = 0, ndoubles = 0, expect;
	unsigned int a, r;
	double load_before, load_after;
	FILE *jf;
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'c':
			cpu = strtol(optarg, &end, 10);
			if (*end != '\0' || cpu < 0)
				usage();
			break;
		case 'r':
			reps = strtoul(optarg, &end, 10);
			if (*end != '\0' || reps < 1 || reps > MAX_REPS)
				usage();
			break;
		case 'o':
			orders = strtoul(optarg, &end, 10);
			if (*end != '\0' || orders < 64 || orders > MAX_ORDERS)
				usage();
			break;
		case 'b':
			books = strtoul(optarg, &end, 10);
			if (*end != '\0' || books < 1 || books > MAX_BOOKS)
				usage();
			break;
		case 'j':
			json = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (cpu >= 0 && fb_pin_cpu(cpu) != 0) {
		perror("bench_mbo_table: sched_setaffinity");
		return 1;
	}
	n = (uint32_t)orders;
	pk = calloc(n, sizeof(*pk));
	rpk = calloc(books * RESET_ORDERS + 1, sizeof(*rpk));
	grew = calloc(n, sizeof(*grew));
	doubles = calloc(n, sizeof(*doubles));
	col = calloc(reps, sizeof(*col));
	tmp = calloc(n, sizeof(*tmp));
	for (a = 0; a < ARM_COUNT; a++) {
		ns[a] = calloc((size_t)n * reps, sizeof(uint64_t));
		med[a] = calloc(n, sizeof(uint64_t));
		rns[a] = calloc(reps, sizeof(uint64_t));
	}
	if (pk == NULL || rpk == NULL || grew == NULL || doubles == NULL || col == NULL ||
			tmp == NULL || ns[ARM_GROW] == NULL || ns[ARM_PRESIZE] == NULL ||
			med[ARM_GROW] == NULL || med[ARM_PRESIZE] == NULL || rns[ARM_GROW] == NULL ||
			rns[ARM_PRESIZE] == NULL) {
		fprintf(stderr, "bench_mbo_table: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		build(&pk[i], i + 1, SID, i);
	/* the reset's books: RESET_ORDERS orders each, book after book */
	for (i = 0; i < books * RESET_ORDERS; i++)
		build(&rpk[i], i + 1, SID + (int32_t)(i / RESET_ORDERS), i % RESET_ORDERS);
	build_reset(&rpk[i], i + 1);

	load_before = fb_load1();
	/* a warm-up of each arm, then the arms interleaved */
	for (a = 0; a < ARM_COUNT; a++)
		one_rep((enum arm)a, pk, n, ns[a], grew);
	for (r = 0; r < reps; r++)
		for (a = 0; a < ARM_COUNT; a++) {
			one_rep((enum arm)a, pk, n, ns[a] + (size_t)r * n, grew);
			for (i = 0; i < n; i++) {
				if (a == ARM_PRESIZE && grew[i]) {
					fprintf(stderr, "bench_mbo_table: the presized table doubled "
						"at packet %u\n", i);
					return 1;
				}
				if (a == ARM_GROW)
					doubles[i] = grew[i];
			}
		}
	for (a = 0; a < ARM_COUNT; a++)
		(void)reset_rep((enum arm)a, rpk, n, (uint32_t)books);
	for (r = 0; r < reps; r++)
		for (a = 0; a < ARM_COUNT; a++)
			rns[a][r] = reset_rep((enum arm)a, rpk, n, (uint32_t)books);
	load_after = fb_load1();
	for (a = 0; a < ARM_COUNT; a++)
		reset_med[a] = quantile(rns[a], reps, 0.5);

	for (a = 0; a < ARM_COUNT; a++) {
		for (i = 0; i < n; i++) {
			for (r = 0; r < reps; r++)
				col[r] = ns[a][(size_t)r * n + i];
			med[a][i] = quantile(col, reps, 0.5);
		}
		memcpy(tmp, med[a], n * sizeof(*tmp));
		arm_med[a] = quantile(tmp, n, 0.5);
		arm_p99[a] = quantile(tmp, n, 0.99);
		arm_max[a] = tmp[n - 1];
	}
	if (cpu >= 0)
		printf("bench_mbo_table: cpu %ld", cpu);
	else
		printf("bench_mbo_table: not pinned (--cpu N, or taskset)");
	printf(", %lu repetitions, one book of bound %u orders filled from empty, one new order "
	       "a packet\n"
	       "  t0/t1: around book_feed_apply() of one packet; per packet the median over "
	       "the repetitions\n  load average %.2f before, %.2f after\n\n",
	       reps, n, load_before, load_after);
	printf("  %-8s %12s %12s %12s\n", "arm", "median ns", "p99 ns", "max ns");
	for (a = 0; a < ARM_COUNT; a++)
		printf("  %-8s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", arm_names[a],
		       arm_med[a], arm_p99[a], arm_max[a]);
	printf("\n  doublings of the grow arm's table (the packet that made it):\n"
	       "  %8s %14s %12s %14s %12s\n", "orders", "table", "ns", "/ median", "presize ns");
	for (i = 0; i < n; i++) {
		if (!doubles[i])
			continue;
		/* the insert of order i + 1 doubles from 4 (i + 1) / 2 entries...: the
		 * load reached 1/2 with i orders held */
		printf("  %8u %6u->%-7u %12" PRIu64 " %14.1f %12" PRIu64 "\n", i, 2 * i, 4 * i,
		       med[ARM_GROW][i], (double)med[ARM_GROW][i] / (double)arm_med[ARM_GROW],
		       med[ARM_PRESIZE][i]);
		last = i;
		ndoubles++;
	}
	/* 32 entries doubling up to the bound's size (the power of two >= 2 x
	 * orders): one step each, no more, no fewer */
	for (expect = 0, i = 64; i / 2 < 2 * n; i *= 2)
		expect++;
	if (ndoubles != expect) {
		fprintf(stderr, "bench_mbo_table: the grow arm's table doubled %u times, not %u\n",
			ndoubles, expect);
		return 1;
	}
	printf("\n  a ChannelReset emptying %lu books of %u orders each (bound %u), t0/t1 around "
	       "its book_feed_apply(), median of %lu:\n  %-8s %12s %14s\n", books,
	       RESET_ORDERS, n, reps, "arm", "reset ns", "ns per book");
	for (a = 0; a < ARM_COUNT; a++)
		printf("  %-8s %12" PRIu64 " %14.1f\n", arm_names[a], reset_med[a],
		       (double)reset_med[a] / (double)books);
	printf("\n  headline ratios, same run (load average %.2f):\n"
	       "    [ ref  ] last doubling (%u orders) / median packet, grow       %8.1f\n"
	       "    [ ref  ] largest packet / median packet, presize              %8.1f\n"
	       "    [ ref  ] median packet presize / grow                         %8.2f\n"
	       "    [ ref  ] ChannelReset of %4lu books presize / grow             %8.1f\n",
	       load_after, last, (double)med[ARM_GROW][last] / (double)arm_med[ARM_GROW],
	       (double)arm_max[ARM_PRESIZE] / (double)arm_med[ARM_PRESIZE],
	       (double)arm_med[ARM_PRESIZE] / (double)arm_med[ARM_GROW], books,
	       (double)reset_med[ARM_PRESIZE] / (double)reset_med[ARM_GROW]);

	jf = fopen(json, "w");
	if (jf == NULL) {
		perror(json);
		return 1;
	}
	fprintf(jf, "{\"bench\":\"bench_mbo_table\",\"cpu\":%ld,\"reps\":%lu,\"orders\":%u,"
		"\"load_before\":%.2f,\"load_after\":%.2f,\"arms\":[", cpu, reps, n, load_before,
		load_after);
	for (a = 0; a < ARM_COUNT; a++)
		fprintf(jf, "%s{\"name\":\"%s\",\"median_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64
			",\"max_ns\":%" PRIu64 "}", a ? "," : "", arm_names[a], arm_med[a],
			arm_p99[a], arm_max[a]);
	fprintf(jf, "],\"doublings\":[");
	for (i = 0, r = 0; i < n; i++)
		if (doubles[i])
			fprintf(jf, "%s{\"orders\":%u,\"from\":%u,\"to\":%u,\"ns\":%" PRIu64
				",\"presize_ns\":%" PRIu64 "}", r++ ? "," : "", i, 2 * i, 4 * i,
				med[ARM_GROW][i], med[ARM_PRESIZE][i]);
	fprintf(jf, "],\"reset\":{\"books\":%lu,\"orders_each\":%u,\"grow_ns\":%" PRIu64
		",\"presize_ns\":%" PRIu64 "}}\n", books, RESET_ORDERS, reset_med[ARM_GROW],
		reset_med[ARM_PRESIZE]);
	fclose(jf);
	printf("\nwrote %s\n", json);
	for (a = 0; a < ARM_COUNT; a++) {
		free(ns[a]);
		free(med[a]);
		free(rns[a]);
	}
	free(pk);
	free(rpk);
	free(grew);
	free(doubles);
	free(col);
	free(tmp);
	return 0;
}
