/* SPDX-License-Identifier: BSD-3-Clause
 * bench_feed: cost of the feed pipeline on the real CME captures, replayed
 * from memory on one pinned core.
 *
 * Each capture's UDP payloads are copied once into one buffer (capture
 * order).  A repetition replays them all into a fresh feed (created before
 * the clock starts); the time of the whole replay divided by the messages
 * (and packets) decoded gives amortized ns per message and per packet.
 * Several repetitions, the median is reported (min and max beside it).
 *
 * Arms, each on the same data in the same run (ratios are to "walk"); every
 * arm but walk runs app/feed's path (tw_feed.h), the one the appliance and
 * tickwire-replay run through their actors:
 *   walk          decode only: mdp3_walk_packet() with a handler that reads
 *                 each message's template id (the floor: validation + dispatch)
 *   book A        feed A through the path by direct calls: arbiter (in
 *                 sequence, zero copy) -> walk -> book_feed_message() (RptSeq,
 *                 book updates); no events
 *   book A+B      both feeds arbitrated (every packet twice; duplicates dropped)
 *   book A+B+ev   the same with a book-event callback (what a signal reads
 *                 first: the consolidated top)
 *   chain direct  the appliance's decode group (tw_chain, both feeds through
 *                 tw_chain_rx_direct(), the sample strategy as the signal)
 *                 with its stages calling each other's functions
 *                 (TW_HOPS_DIRECT): the same work without hops
 *   chain dynamic the same four actors calling each other with act_fast_send
 *                 (TW_HOPS_DYNAMIC: the runtime's checks on every call)
 *   chain         the same along the edges declared when the group is built
 *                 (TW_HOPS_EDGE, act_fast_send_edge), as in the appliance
 * Per message and per packet figures use the messages and packets decoded
 * (one copy each), so A+B includes the cost of dropping duplicates.
 * Headline ratios, same run: book A+B / walk, book A+B+ev / walk (issue 15:
 * <= 2.0 and <= 2.5) and chain / chain direct (<= 1.10).
 *
 * MBO arms (issue 17), on a synthetic capture with market-by-order entries
 * (tickwire-synth --mbo, generated at build time beside this program, or
 * --mbo-capture FILE: feed A of such a capture; the CME captures carry
 * almost none), feed A through the same path:
 *   mbp           config.mbo off: the price-level books (47 counted, skipped)
 *   mbo+mbp       config.mbo on, same capture: the MBO books, the oracle's
 *                 bookkeeping and the price-level books (a combined channel)
 *   mbo+mbp pre   with --mbo-presize only: the same with config.mbo_presize
 *                 (OrderID tables laid out at their bound's size, never
 *                 doubled); its ratio to mbo+mbp is printed for reference
 * Ratios, same run: "MBO update / price-level update, per message" =
 * ((mbo+mbp - mbp) / messages carrying order entries) / (mbp / messages)
 * (issue 17: <= 1.5), and "MBO+MBP / MBP alone" per message (<= 2.0); the
 * ns per order entry ((mbo+mbp - mbp) / order entries) and per price-level
 * entry (mbp / outright 46 entries) are printed beside them.
 *
 * usage: bench_feed [--data DIR] [--cpu N] [--reps R] [--arm NAME] [--capture 340|320|mbo]
 *                   [--mbo-capture FILE|none] [--mbo-presize] [--json FILE]
 * (--capture and --reps 1 make a short run for valgrind --tool=callgrind.)
 * Target (issue 4): <= 40 ns per message for decode + book update.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"
#include "book.h"
#include "feed_bench.h"
#include "mdp3.h"
#include "tw_chain.h"
#include "tw_feed.h"
#include "tw_pcap.h"

#define MAX_REPS 1001
#define CAPTURE_V6 "pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.pcap"
#define CAPTURE_V8 "pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.pcap"

struct dgram {
	uint32_t offset;
	uint32_t length;
	uint64_t time_ns;
	uint8_t feed;
};

struct capture {
	const char *name;
	uint8_t *bytes;
	struct dgram *d;
	size_t n;
	uint64_t packets_a;
	uint64_t messages_a;   /* messages in feed A's packets */
};

enum arm {
	ARM_WALK,
	ARM_BOOK_A,
	ARM_BOOK_AB,
	ARM_BOOK_AB_EVENTS,
	ARM_CHAIN_DIRECT,
	ARM_CHAIN_DYNAMIC,
	ARM_CHAIN,
	ARM_COUNT
};

static const char *const arm_names[ARM_COUNT] = {
	"walk", "book A", "book A+B", "book A+B+ev", "chain direct", "chain dynamic", "chain",
};

struct result {
	double ns_per_msg[MAX_REPS];
	double ns_per_pkt[MAX_REPS];
	unsigned int reps;
	uint64_t messages;
	uint64_t packets;
	uint64_t check;   /* something the work produced, so it is not optimised away */
};

static int
load(struct capture *cap, const char *dir, const char *rel, const char *name)
{
	struct mdp3_routes routes;
	struct tw_pcap_frame fr;
	struct tw_pcap_l4 l4;
	struct mdp3_route r;
	struct mdp3_walker w;
	struct tw_pcap *pcap;
	size_t cap_d = 0, cap_b = 0, used = 0;
	char path[1024];
	int rc;

	memset(cap, 0, sizeof(*cap));
	cap->name = name;
	snprintf(path, sizeof(path), "%s%s%s", dir, *dir != '\0' ? "/" : "", rel);
	pcap = tw_pcap_open(path);
	if (pcap == NULL) {
		fprintf(stderr, "bench_feed: %s: %s\n", path, strerror(errno));
		return -1;
	}
	mdp3_routes_init(&routes, true);
	mdp3_walker_init(&w, NULL, NULL);
	while ((rc = tw_pcap_next(pcap, &fr)) == 1) {
		if (tw_pcap_parse_frame(fr.data, fr.caplen, fr.linktype, &l4, NULL) < 0 ||
				l4.protocol != 17 ||
				mdp3_routes_match(&routes, l4.dst_ip, l4.dst_port, &r) < 0 ||
				r.stream != MDP3_STREAM_INCREMENTAL)
			continue;
		if (cap->n == cap_d) {
			cap_d = cap_d == 0 ? 16384 : 2 * cap_d;
			cap->d = realloc(cap->d, cap_d * sizeof(*cap->d));
		}
		while (used + l4.payload_length > cap_b) {
			cap_b = cap_b == 0 ? 1u << 22 : 2 * cap_b;
			cap->bytes = realloc(cap->bytes, cap_b);
		}
		if (cap->d == NULL || cap->bytes == NULL) {
			fprintf(stderr, "bench_feed: out of memory\n");
			return -1;
		}
		memcpy(cap->bytes + used, l4.payload, l4.payload_length);
		cap->d[cap->n].offset = (uint32_t)used;
		cap->d[cap->n].length = l4.payload_length;
		cap->d[cap->n].time_ns = fr.time_ns;
		cap->d[cap->n].feed = r.feed;
		used += l4.payload_length;
		if (r.feed == MDP3_FEED_A) {
			uint64_t before = w.counters.messages + w.counters.messages_skipped;

			mdp3_walk_packet(&w, l4.payload, l4.payload_length);
			cap->messages_a += w.counters.messages + w.counters.messages_skipped -
				before;
			cap->packets_a++;
		}
		cap->n++;
	}
	tw_pcap_close(pcap);
	if (rc < 0 || cap->n == 0) {
		fprintf(stderr, "bench_feed: %s: no incremental datagrams\n", path);
		return -1;
	}
	return 0;
}

/* ---- MBO arms ---- */

enum mbo_arm { MBO_ARM_MBP, MBO_ARM_COMBINED, MBO_ARM_PRESIZED, MBO_ARM_COUNT };

static const char *const mbo_arm_names[MBO_ARM_COUNT] = { "mbp", "mbo+mbp", "mbo+mbp pre" };

/* Entry counts of the MBO capture (feed A), from one walk. */
struct mbo_census {
	uint64_t messages;
	uint64_t order_messages;   /* 46 with order entries, and 47 */
	uint64_t order_entries;    /* 46 NoOrderIDEntries + 47 NoMDEntries */
	uint64_t level_entries;    /* 46 NoMDEntries (outright and implied) */
};

static int
census_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	struct mbo_census *c = ctx;
	struct mdp3_group g;

	(void)pkt;
	c->messages++;
	if (msg->template_id == 46) {
		if (mdp3_md_incremental_refresh_book46_no_md_entries(msg, &g) == 0)
			c->level_entries += g.count;
		if (mdp3_md_incremental_refresh_book46_no_order_id_entries(msg, &g) == 0 &&
				g.count > 0) {
			c->order_entries += g.count;
			c->order_messages++;
		}
	} else if (msg->template_id == 47 &&
			mdp3_md_incremental_refresh_order_book47_no_md_entries(msg, &g) == 0) {
		c->order_entries += g.count;
		c->order_messages++;
	}
	return 0;
}

/* The oracle's comparisons in the last combined repetition. */
static uint64_t mbo_checks;

static double
mbo_rep(const struct capture *cap, enum mbo_arm arm, uint64_t *check, uint64_t *messages)
{
	const struct book_feed_counters *fc;
	struct tw_feed_config c;
	struct tw_feed *path;
	uint64_t t0, t1;
	size_t i;

	memset(&c, 0, sizeof(c));
	c.book.max_instruments = 1024;
	c.book.mbo = arm != MBO_ARM_MBP;
	c.book.mbo_presize = arm == MBO_ARM_PRESIZED;
	path = tw_feed_create(&c);
	if (path == NULL) {
		fprintf(stderr, "bench_feed: tw_feed_create: %s\n", strerror(errno));
		exit(1);
	}
	t0 = fb_now_ns();
	for (i = 0; i < cap->n; i++) {
		const struct dgram *d = &cap->d[i];

		if (d->feed == MDP3_FEED_A)
			tw_feed_arbitrate(path, MDP3_FEED_A, cap->bytes + d->offset, d->length,
					d->time_ns);
	}
	t1 = fb_now_ns();
	fc = book_feed_counters(path->book);
	*messages = fc->messages + fc->messages_unknown;
	*check += book_feed_hash(path->book) + fc->mbo_checks;
	if (arm == MBO_ARM_COMBINED)
		mbo_checks = fc->mbo_checks;
	if (fc->stale_books != 0 || fc->lost_packets != 0 || fc->mbo_mismatches != 0 ||
			(arm != MBO_ARM_MBP && fc->mbo_checks == 0)) {
		fprintf(stderr, "bench_feed: MBO capture: loss, stale book, no oracle check or "
				"an MBO mismatch in a full replay\n");
		exit(1);
	}
	tw_feed_destroy(path);
	return (double)(t1 - t0);
}

static int
walk_message(void *ctx, const struct mdp3_packet *pkt, const struct mdp3_msg *msg)
{
	uint64_t *sum = ctx;

	(void)pkt;
	*sum += msg->template_id;
	return 0;
}

static void
on_event(void *ctx, const struct book_event *e)
{
	uint64_t *sum = ctx;
	struct book_top top = book_event_consolidated(e);

	/* what a signal stage reads first: the top of book */
	*sum += (uint64_t)top.bid_price ^ (uint64_t)top.ask_qty;
}

/* The decode group of the appliance, as tickwire-replay builds it. */
static struct tw_chain *
chain_create(enum tw_chain_hops hops)
{
	struct tw_chain_opts o;
	struct tw_chain *c;

	memset(&o, 0, sizeof(o));
	o.decode_mailbox.name = "decode";
	o.decode_mailbox.cpu = -1;
	o.order_mailbox.name = "order_out";
	o.order_mailbox.cpu = -1;
	o.max_instruments = 1024;
	o.hops = (uint8_t)hops;
	/* the sample strategy, no instrument listed: it reads every top and
	 * sends no order */
	o.strategy_enabled = true;
	o.strategy.ratio_numerator = 3;
	o.strategy.ratio_denominator = 1;
	o.strategy.order_qty = 1;
	c = tw_chain_create(&o);
	if (c == NULL) {
		fprintf(stderr, "bench_feed: tw_chain_create: %s\n", strerror(errno));
		exit(1);
	}
	act_group_bind(tw_chain_decode_group(c));
	return c;
}

static double
chain_rep(const struct capture *cap, enum tw_chain_hops hops, uint64_t *check, uint64_t *messages,
	  uint64_t *packets)
{
	struct tw_chain *c = chain_create(hops);
	struct tw_chain_channel_stats cs;
	struct tw_chain_stats st;
	struct tw_rx rx;
	uint64_t t0, t1;

	memset(&rx, 0, sizeof(rx));
	t0 = fb_now_ns();
	for (size_t i = 0; i < cap->n; i++) {
		const struct dgram *d = &cap->d[i];

		rx.payload = cap->bytes + d->offset;
		rx.length = d->length;
		rx.side = d->feed;
		rx.rx_ns = d->time_ns;
		tw_chain_rx_direct(c, &rx);
	}
	t1 = fb_now_ns();
	tw_chain_tick(c, 0, false);  /* refreshes the per-channel copies; expires nothing */
	tw_chain_stats(c, &st);
	tw_chain_channel_stats(c, &cs, 1);
	*messages = cap->messages_a;
	*packets = cs.packets_applied;
	*check += st.tops;
	if (cs.lost_packets != 0 || cs.stale_books != 0 || st.signal_errors != 0 ||
	    cs.packets_applied != cap->packets_a) {
		fprintf(stderr, "bench_feed: the chain lost packets or tops in a full replay\n");
		exit(1);
	}
	tw_chain_destroy(c);
	return (double)(t1 - t0);
}

static double
one_rep(const struct capture *cap, enum arm arm, uint64_t *check, uint64_t *messages,
		uint64_t *packets)
{
	struct tw_feed_config c;
	struct mdp3_handler h = { .on_message = walk_message, .ctx = check };
	bool both = arm != ARM_BOOK_A;
	struct tw_feed *path = NULL;
	struct mdp3_walker w;
	uint64_t t0, t1;
	size_t i;

	if (arm == ARM_CHAIN_DIRECT)
		return chain_rep(cap, TW_HOPS_DIRECT, check, messages, packets);
	if (arm == ARM_CHAIN_DYNAMIC)
		return chain_rep(cap, TW_HOPS_DYNAMIC, check, messages, packets);
	if (arm == ARM_CHAIN)
		return chain_rep(cap, TW_HOPS_EDGE, check, messages, packets);
	memset(&c, 0, sizeof(c));
	c.book.max_instruments = 1024;
	if (arm == ARM_BOOK_AB_EVENTS) {
		c.book.handler.on_event = on_event;
		c.book.handler.ctx = check;
	}
	if (arm == ARM_WALK) {
		mdp3_walker_init(&w, NULL, &h);
	} else {
		path = tw_feed_create(&c);
		if (path == NULL) {
			fprintf(stderr, "bench_feed: tw_feed_create: %s\n", strerror(errno));
			exit(1);
		}
	}
	t0 = fb_now_ns();
	if (arm == ARM_WALK) {
		for (i = 0; i < cap->n; i++)
			if (cap->d[i].feed == MDP3_FEED_A)
				mdp3_walk_packet(&w, cap->bytes + cap->d[i].offset,
						cap->d[i].length);
	} else {
		for (i = 0; i < cap->n; i++) {
			const struct dgram *d = &cap->d[i];

			if (!both && d->feed != MDP3_FEED_A)
				continue;
			tw_feed_arbitrate(path, (enum mdp3_feed_id)d->feed, cap->bytes + d->offset,
					  d->length, d->time_ns);
		}
	}
	t1 = fb_now_ns();
	if (arm == ARM_WALK) {
		*messages = w.counters.messages + w.counters.messages_skipped;
		*packets = w.counters.packets;
	} else {
		const struct book_feed_counters *fc = book_feed_counters(path->book);

		*messages = fc->messages + fc->messages_unknown;
		*packets = fc->packets_applied;
		*check += book_feed_hash(path->book);
		if (fc->stale_books != 0 || fc->lost_packets != 0) {
			fprintf(stderr, "bench_feed: unexpected loss in a full replay\n");
			exit(1);
		}
		tw_feed_destroy(path);
	}
	return (double)(t1 - t0);
}

static int
compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(const double *v, unsigned int n, double *min, double *max)
{
	double s[MAX_REPS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), compare_double);
	*min = s[0];
	*max = s[n - 1];
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double
arm_median(const struct result *x)
{
	double mn, mx;

	return x->reps == 0 ? 0 : median(x->ns_per_msg, x->reps, &mn, &mx);
}

/* Ratio of two arms' medians (0 when either did not run). */
static double
ratio(const struct result *res, enum arm num, enum arm den)
{
	double n = arm_median(&res[num]), d = arm_median(&res[den]);

	return n == 0 || d == 0 ? 0 : n / d;
}

static const struct target {
	const char *what;
	enum arm num, den;
	double max;
} targets[] = {
	{ "book A+B / walk", ARM_BOOK_AB, ARM_WALK, 2.0 },
	{ "book A+B+ev / walk", ARM_BOOK_AB_EVENTS, ARM_WALK, 2.5 },
	{ "chain / chain direct", ARM_CHAIN, ARM_CHAIN_DIRECT, 1.10 },
	{ "chain dynamic / chain direct", ARM_CHAIN_DYNAMIC, ARM_CHAIN_DIRECT, 0 },
};

static void
headline(const struct capture *cap, const struct result *res)
{
	(void)cap;
	printf("  targets (issue 15), ratios of medians in this run (load average %.2f):\n",
	       fb_load1());
	for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++) {
		double r = ratio(res, targets[t].num, targets[t].den);

		if (r == 0)
			continue;
		if (targets[t].max == 0)   /* a reference ratio, no target */
			printf("    [ ref  ] %-28s        %.2f\n", targets[t].what, r);
		else
			printf("    [%s] %-28s <= %.2f: %.2f\n",
			       r <= targets[t].max ? " met  " : "MISSED", targets[t].what,
			       targets[t].max, r);
	}
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: bench_feed [--data DIR] [--cpu N] [--reps R] [--arm NAME] [--capture C] [--json FILE]\n"
		"  --data DIR   CME data directory (default ../shared/data/cme from the\n"
		"               source tree, as configured)\n"
		"  --cpu N      pin to this CPU (default: the last one)\n"
		"  --reps R     repetitions per arm (default 31, at most %d)\n"
		"  --arm NAME   run only this arm (and walk): \"book A\", \"book A+B\" ...\n"
		"  --capture C  run only channel C's capture: 340 (v6) or 320 (v8), or mbo:\n"
		"               only the MBO arms (a short run for callgrind with --reps 1)\n"
		"  --mbo-capture FILE  feed A of a tickwire-synth --mbo capture for the MBO\n"
		"               arms (default: the one built beside this program; none: skip)\n"
		"  --mbo-presize  also an MBO arm with presized OrderID tables (mbo_presize)\n"
		"  --json FILE  also write the results as JSON (default bench_feed.json)\n",
		MAX_REPS);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "data", required_argument, NULL, 'd' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "reps", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "arm", required_argument, NULL, 'a' },
		{ "capture", required_argument, NULL, 'C' },
		{ "mbo-capture", required_argument, NULL, 'M' },
		{ "mbo-presize", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct capture caps[2];
	static struct result res[2][ARM_COUNT];
	const char *data = TW_BENCH_CME_DATA, *json = "bench_feed.json";
	const char *mbo_path = TW_BENCH_MBO_CAPTURE;
	static struct capture mbo_cap;
	static struct result mbo_res[MBO_ARM_COUNT];
	struct mbo_census census = { 0 };
	double mbo_ratio_update = 0, mbo_ratio_combined = 0, mbo_ns_order = 0, mbo_ns_level = 0;
	bool mbo_ran = false;
	unsigned int mbo_arms = MBO_ARM_PRESIZED;  /* MBO_ARM_COUNT with --mbo-presize */
	unsigned int reps = 31, r, k, a, only = ARM_COUNT;
	int only_capture = -1;
	long cpu = -1;
	cpu_set_t set;
	FILE *jf;
	int opt;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			data = optarg;
			break;
		case 'c':
			cpu = strtol(optarg, NULL, 10);
			break;
		case 'r':
			reps = (unsigned int)strtoul(optarg, NULL, 10);
			if (reps == 0 || reps > MAX_REPS) {
				usage(stderr);
				return 2;
			}
			break;
		case 'j':
			json = optarg;
			break;
		case 'a':
			for (only = 0; only < ARM_COUNT; only++)
				if (strcmp(optarg, arm_names[only]) == 0)
					break;
			if (only == ARM_COUNT) {
				usage(stderr);
				return 2;
			}
			break;
		case 'C':
			if (strcmp(optarg, "340") == 0) {
				only_capture = 0;
			} else if (strcmp(optarg, "320") == 0) {
				only_capture = 1;
			} else if (strcmp(optarg, "mbo") == 0) {
				only_capture = 2;
			} else {
				usage(stderr);
				return 2;
			}
			break;
		case 'M':
			mbo_path = strcmp(optarg, "none") == 0 ? NULL : optarg;
			break;
		case 'P':
			mbo_arms = MBO_ARM_COUNT;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (cpu < 0) {
		if (sched_getaffinity(0, sizeof(set), &set) != 0) {
			perror("sched_getaffinity");
			return 1;
		}
		for (k = 0; k < CPU_SETSIZE; k++)
			if (CPU_ISSET(k, &set))
				cpu = k;
	}
	if (fb_pin_cpu(cpu) != 0) {
		fprintf(stderr, "bench_feed: cannot pin to cpu %ld: %s\n", cpu, strerror(errno));
		return 1;
	}
	if (load(&caps[0], data, CAPTURE_V6, "ch340 v6") < 0 ||
			load(&caps[1], data, CAPTURE_V8, "ch320 v8") < 0)
		return 1;

	printf("bench_feed: cpu %ld, %u repetitions per arm, median [min .. max]\n", cpu, reps);
	for (k = 0; k < 2; k++) {
		uint64_t check = 0, msgs, pkts;

		if (only_capture >= 0 && (int)k != only_capture)
			continue;
		printf("\n%s: %" PRIu64 " packets, %" PRIu64 " messages per feed "
				"(%.2f per packet)\n", caps[k].name, caps[k].packets_a,
				caps[k].messages_a,
				(double)caps[k].messages_a / (double)caps[k].packets_a);
		printf("  %-12s %10s %22s %10s %22s %8s\n", "arm", "ns/msg", "[min .. max]",
				"ns/pkt", "[min .. max]", "x walk");
		/* warm-up of every arm that runs, then the arms interleaved rep by rep */
		for (a = 0; a < ARM_COUNT; a++)
			if (only == ARM_COUNT || a == only || a == ARM_WALK)
				one_rep(&caps[k], (enum arm)a, &check, &msgs, &pkts);
		for (r = 0; r < reps; r++) {
			for (a = 0; a < ARM_COUNT; a++) {
				struct result *x = &res[k][a];

				if (only != ARM_COUNT && a != only && a != ARM_WALK)
					continue;
				double ns = one_rep(&caps[k], (enum arm)a, &check, &msgs, &pkts);

				x->ns_per_msg[r] = ns / (double)msgs;
				x->ns_per_pkt[r] = ns / (double)pkts;
				x->messages = msgs;
				x->packets = pkts;
				x->reps = r + 1;
			}
		}
		for (a = 0; a < ARM_COUNT; a++) {
			struct result *x = &res[k][a];
			double mn, mx, pn, px, m, p, base, bmin, bmax;

			if (x->reps == 0)
				continue;
			x->check = check;
			m = median(x->ns_per_msg, x->reps, &mn, &mx);
			p = median(x->ns_per_pkt, x->reps, &pn, &px);
			base = median(res[k][ARM_WALK].ns_per_msg, res[k][ARM_WALK].reps, &bmin,
					&bmax);
			printf("  %-12s %10.1f   [%7.1f .. %7.1f] %10.1f   [%7.1f .. %7.1f]"
					" %8.2f\n", arm_names[a], m, mn, mx, p, pn, px, m / base);
		}
		if (check == 0)
			printf("  (check 0)\n");
		headline(&caps[k], res[k]);
	}
	if (mbo_path != NULL && only == ARM_COUNT && (only_capture < 0 || only_capture == 2)) {
		struct mdp3_handler h = { .on_message = census_message, .ctx = &census };
		uint64_t check = 0, msgs;
		struct mdp3_walker w;
		double m[MBO_ARM_COUNT], mn, mx;
		size_t i;

		/* load() keeps the incremental datagrams; the path is absolute */
		if (load(&mbo_cap, "", mbo_path, "synthetic MBO") < 0)
			return 1;
		mdp3_walker_init(&w, NULL, &h);
		for (i = 0; i < mbo_cap.n; i++)
			if (mbo_cap.d[i].feed == MDP3_FEED_A)
				mdp3_walk_packet(&w, mbo_cap.bytes + mbo_cap.d[i].offset,
						mbo_cap.d[i].length);
		printf("\n%s (%s): %" PRIu64 " packets, %" PRIu64 " messages; %" PRIu64
				" price-level entries, %" PRIu64 " order entries in %" PRIu64
				" messages\n", mbo_cap.name, mbo_path, mbo_cap.packets_a,
				census.messages, census.level_entries, census.order_entries,
				census.order_messages);
		for (a = 0; a < mbo_arms; a++)
			mbo_rep(&mbo_cap, (enum mbo_arm)a, &check, &msgs);
		for (r = 0; r < reps; r++) {
			for (a = 0; a < mbo_arms; a++) {
				double ns = mbo_rep(&mbo_cap, (enum mbo_arm)a, &check, &msgs);

				mbo_res[a].ns_per_msg[r] = ns / (double)msgs;
				mbo_res[a].ns_per_pkt[r] = ns / (double)mbo_cap.packets_a;
				mbo_res[a].messages = msgs;
				mbo_res[a].packets = mbo_cap.packets_a;
				mbo_res[a].reps = r + 1;
			}
		}
		for (a = 0; a < mbo_arms; a++) {
			double p, pn, px;

			m[a] = median(mbo_res[a].ns_per_msg, mbo_res[a].reps, &mn, &mx);
			p = median(mbo_res[a].ns_per_pkt, mbo_res[a].reps, &pn, &px);
			mbo_res[a].check = check;
			printf("  %-12s %10.1f   [%7.1f .. %7.1f] %10.1f   [%7.1f .. %7.1f] ns/msg, "
					"ns/pkt\n", mbo_arm_names[a], m[a], mn, mx, p, pn, px);
		}
		/* per message totals -> per entry / per message-with-orders costs */
		mbo_ns_level = m[MBO_ARM_MBP] * (double)census.messages /
			(double)census.level_entries;
		mbo_ns_order = (m[MBO_ARM_COMBINED] - m[MBO_ARM_MBP]) * (double)census.messages /
			(double)census.order_entries;
		mbo_ratio_update = (m[MBO_ARM_COMBINED] - m[MBO_ARM_MBP]) *
			(double)census.messages / (double)census.order_messages / m[MBO_ARM_MBP];
		mbo_ratio_combined = m[MBO_ARM_COMBINED] / m[MBO_ARM_MBP];
		printf("  ns per price-level entry (mbp) %.1f, per order entry (mbo+mbp - mbp) %.1f\n",
				mbo_ns_level, mbo_ns_order);
		printf("  oracle: %" PRIu64 " comparisons (book, end of event) per pass over the "
				"capture\n", mbo_checks);
		printf("  targets (issue 17), ratios of medians in this run (load average %.2f):\n"
				"    [%s] %-36s <= 1.50: %.2f\n    [%s] %-36s <= 2.00: %.2f\n", fb_load1(),
				mbo_ratio_update <= 1.5 ? " met  " : "MISSED",
				"MBO update / price-level update", mbo_ratio_update,
				mbo_ratio_combined <= 2.0 ? " met  " : "MISSED",
				"MBO+MBP / MBP alone (per message)", mbo_ratio_combined);
		if (mbo_arms > MBO_ARM_PRESIZED)
			printf("    [ ref  ] %-36s         %.2f\n", "mbo+mbp pre / mbo+mbp",
			       m[MBO_ARM_PRESIZED] / m[MBO_ARM_COMBINED]);
		mbo_ran = true;
	}
	jf = fopen(json, "w");
	if (jf == NULL) {
		fprintf(stderr, "bench_feed: %s: %s\n", json, strerror(errno));
		return 1;
	}
	fprintf(jf, "{\"benchmark\":\"bench_feed\",\"cpu\":%ld,\"reps\":%u,"
		"\"statistic\":\"median\",\"loadavg\":%.2f,\"captures\":[", cpu, reps, fb_load1());
	for (k = 0; k < 2; k++) {
		fprintf(jf, "%s{\"name\":\"%s\",\"packets_per_feed\":%" PRIu64
				",\"messages_per_feed\":%" PRIu64 ",\"arms\":[", k ? "," : "",
				caps[k].name, caps[k].packets_a, caps[k].messages_a);
		for (a = 0; a < ARM_COUNT; a++) {
			const struct result *x = &res[k][a];
			double mn, mx, pn, px, m, p;

			if (x->reps == 0)
				continue;
			m = median(x->ns_per_msg, x->reps, &mn, &mx);
			p = median(x->ns_per_pkt, x->reps, &pn, &px);
			fprintf(jf, "%s{\"arm\":\"%s\",\"messages\":%" PRIu64
					",\"packets\":%" PRIu64 ",\"ns_per_message\":"
					"{\"median\":%.2f,\"min\":%.2f,\"max\":%.2f},"
					"\"ns_per_packet\":"
					"{\"median\":%.2f,\"min\":%.2f,\"max\":%.2f}}",
					a ? "," : "", arm_names[a], x->messages, x->packets,
					m, mn, mx, p, pn, px);
		}
		fprintf(jf, "],\"ratios\":[");
		for (size_t t = 0; t < sizeof(targets) / sizeof(targets[0]); t++)
			fprintf(jf, "%s{\"what\":\"%s\",\"target\":%.2f,\"measured\":%.3f}",
				t ? "," : "", targets[t].what, targets[t].max,
				ratio(res[k], targets[t].num, targets[t].den));
		fprintf(jf, "]}");
	}
	fprintf(jf, "]");
	if (mbo_ran) {
		fprintf(jf, ",\"mbo\":{\"capture\":\"%s\",\"packets\":%" PRIu64 ",\"messages\":%"
				PRIu64 ",\"level_entries\":%" PRIu64 ",\"order_entries\":%" PRIu64
				",\"order_messages\":%" PRIu64 ",\"arms\":[", mbo_path,
				mbo_cap.packets_a, census.messages, census.level_entries,
				census.order_entries, census.order_messages);
		for (a = 0; a < mbo_arms; a++) {
			double mn, mx, m = median(mbo_res[a].ns_per_msg, mbo_res[a].reps, &mn, &mx);

			fprintf(jf, "%s{\"arm\":\"%s\",\"ns_per_message\":{\"median\":%.2f,"
					"\"min\":%.2f,\"max\":%.2f}}", a ? "," : "", mbo_arm_names[a],
					m, mn, mx);
		}
		fprintf(jf, "],\"ns_per_level_entry\":%.2f,\"ns_per_order_entry\":%.2f,"
				"\"ratios\":[{\"what\":\"MBO update / price-level update\","
				"\"target\":1.50,\"measured\":%.3f},{\"what\":\"MBO+MBP / MBP alone\","
				"\"target\":2.00,\"measured\":%.3f}]}", mbo_ns_level, mbo_ns_order,
				mbo_ratio_update, mbo_ratio_combined);
	}
	fprintf(jf, "}\n");
	fclose(jf);
	printf("\nwrote %s\n", json);
	for (k = 0; k < 2; k++) {
		free(caps[k].bytes);
		free(caps[k].d);
	}
	free(mbo_cap.bytes);
	free(mbo_cap.d);
	return 0;
}
