/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tickwire-arrivals: the packet arrival process of CME MDP 3.0 captures.
 *
 * For every feed (destination ip:port of the MDP3 UDP packets; A and B are
 * separate feeds) and for the merged incremental stream of every channel
 * (first copy of each MsgSeqNum over A and B), it prints the inter-arrival
 * distribution and its coefficient of variation, the index of dispersion of
 * counts per window next to a Poisson process of the same rate and length,
 * messages per packet, bursts (runs of packets each within --burst-gap-us of
 * the previous one) and, for a channel with both feeds, the A/B skew.
 *
 * Channel and feed follow CME's port convention (14000+N on feed A, 15000+N
 * on feed B); a feed carrying snapshot templates is not merged.  Everything
 * is computed offline in O(packets log packets); doubles are fine here.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mdp3.h"
#include "synth_random.h"
#include "tw_pcap.h"

#define PROG "tickwire-arrivals"
#define EXIT_USAGE 2

#define NS_PER_US 1000.0
#define NS_PER_S 1e9
/* Default burst gap: see usage() and README.md for the reasoning. */
#define DEFAULT_BURST_GAP_US 10.0
/* A window size is reported when the capture holds at least this many. */
#define MIN_WINDOWS 10
/* Poisson samples drawn per stream for the finite-sample band. */
#define POISSON_REPLICAS 20
#define POISSON_SEED UINT64_C(0x7469636b77697265) /* "tickwire" */
/* Messages per packet histogram: 0 .. MSG_BINS - 2, the last bin is "more". */
#define MSG_BINS 65
/* Inter-arrival histogram: bin 0 is a gap of 0 ns, bin k >= 1 is [2^(k-1), 2^k). */
#define LOG2_BINS 65
#define MAX_FEEDS 256

static const double window_ns[] = { 1e5, 1e6, 1e7, 1e8, 1e9, 1e10 };
static const char *const window_name[] = { "100us", "1ms", "10ms", "100ms", "1s", "10s" };
#define WINDOW_COUNT (sizeof(window_ns) / sizeof(window_ns[0]))

static const double percentile_rank[] = { 1, 10, 50, 90, 99, 100 };
static const char *const percentile_name[] = { "p1", "p10", "p50", "p90", "p99", "max" };
#define PERCENTILE_COUNT (sizeof(percentile_rank) / sizeof(percentile_rank[0]))

/* Burst share at these gaps (us) as well, to show how the choice of G matters. */
static const double sweep_gap_us[] = { 1, 10, 100, 1000 };
#define SWEEP_COUNT (sizeof(sweep_gap_us) / sizeof(sweep_gap_us[0]))

struct arrival {
	uint64_t time_ns;
	uint32_t seq;
	uint16_t messages;
	uint16_t feed;       /* index in feeds[] */
};

struct feed {
	uint32_t ip;
	uint16_t port;
	uint16_t channel;
	char letter;         /* 'A', 'B' or '?' */
	bool snapshot;       /* carries snapshot templates: not merged */
	struct arrival *arr;
	size_t count;
	size_t capacity;
};

struct counts {
	uint64_t frames;
	uint64_t not_udp;
	uint64_t not_mdp3;
};

struct window_stat {
	double idc;
	uint64_t windows;
	double poisson_min;
	double poisson_median;
	double poisson_max;
};

struct burst_stat {
	uint64_t bursts;
	uint64_t max;
	double mean;
	double share_in_bursts;  /* packets in bursts of >= 2 / packets */
	uint64_t *hist;          /* [size] bursts of that many packets, size <= max */
};

struct stream_stat {
	uint64_t packets;
	double duration_s;
	double rate;
	double gap_mean_ns;
	double gap_sd_ns;
	double cv;
	double percentile_ns[PERCENTILE_COUNT];
	uint64_t log2_hist[LOG2_BINS];
	struct window_stat window[WINDOW_COUNT];
	bool window_valid[WINDOW_COUNT];
	double poisson_cv;
	uint64_t msg_hist[MSG_BINS];
	double msg_mean;
	uint64_t msg_max;
	struct burst_stat burst;
	double sweep_share[SWEEP_COUNT];
};

struct skew_stat {
	uint64_t pairs;
	uint64_t b_first;
	double percentile_ns[PERCENTILE_COUNT];
	double min_ns;
	double abs_median_ns;
};

struct options {
	const char *json;
	double burst_gap_us;
};

static struct feed feeds[MAX_FEEDS];
static unsigned int feed_count;

/* ---- reading ---- */

static struct feed *
feed_get(uint32_t ip, uint16_t port)
{
	struct feed *f;
	unsigned int i;

	for (i = 0; i < feed_count; i++)
		if (feeds[i].ip == ip && feeds[i].port == port)
			return &feeds[i];
	if (feed_count == MAX_FEEDS)
		return NULL;
	f = &feeds[feed_count++];
	memset(f, 0, sizeof(*f));
	f->ip = ip;
	f->port = port;
	if (port >= 14000 && port < 15000) {
		f->channel = (uint16_t)(port - 14000);
		f->letter = 'A';
	} else if (port >= 15000 && port < 16000) {
		f->channel = (uint16_t)(port - 15000);
		f->letter = 'B';
	} else {
		f->channel = port;
		f->letter = '?';
	}
	return f;
}

static int
feed_push(struct feed *f, const struct arrival *a)
{
	if (f->count == f->capacity) {
		size_t cap = f->capacity ? f->capacity * 2 : 4096;
		struct arrival *p = realloc(f->arr, cap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		f->arr = p;
		f->capacity = cap;
	}
	f->arr[f->count++] = *a;
	return 0;
}

static bool
is_snapshot_template(uint16_t template_id)
{
	/* SnapshotFullRefresh38/52, ...OrderBook53, ...LongQty69 */
	return template_id == 38 || template_id == 52 || template_id == 53 || template_id == 69;
}

struct walk_ctx {
	bool snapshot;
};

static int
on_message(void *ctx, const struct mdp3_packet *packet, const struct mdp3_msg *msg)
{
	struct walk_ctx *w = ctx;

	(void)packet;
	if (is_snapshot_template(msg->template_id))
		w->snapshot = true;
	return 0;
}

static int
read_file(const char *path, struct counts *counts)
{
	struct tw_pcap_frame frame;
	struct mdp3_handler handler;
	struct mdp3_walker walker;
	struct walk_ctx ctx;
	struct tw_pcap *pcap;
	int rc;

	pcap = tw_pcap_open(path);
	if (pcap == NULL) {
		fprintf(stderr, PROG ": %s: cannot open: %s; hint: check the path (pcap or "
				"pcapng)\n", path, errno == EPROTO ? "not a capture" : strerror(errno));
		return -1;
	}
	handler.on_message = on_message;
	handler.on_skip = NULL;
	handler.ctx = &ctx;
	mdp3_walker_init(&walker, NULL, &handler);
	while ((rc = tw_pcap_next(pcap, &frame)) == 1) {
		uint64_t before = walker.counters.messages + walker.counters.messages_skipped;
		struct tw_pcap_l4 l4;
		struct arrival a;
		struct feed *f;

		counts->frames++;
		if (tw_pcap_parse_frame(frame.data, frame.caplen, frame.linktype, &l4, NULL) < 0 ||
				l4.protocol != 17) {
			counts->not_udp++;
			continue;
		}
		ctx.snapshot = false;
		if (l4.payload_length < MDP3_PACKET_HEADER_SIZE ||
				mdp3_walk_packet(&walker, l4.payload, l4.payload_length) < 0) {
			counts->not_mdp3++;
			continue;
		}
		f = feed_get(l4.dst_ip, l4.dst_port);
		if (f == NULL) {
			fprintf(stderr, PROG ": %s: more than %d feeds; hint: filter the capture\n",
					path, MAX_FEEDS);
			tw_pcap_close(pcap);
			return -1;
		}
		f->snapshot |= ctx.snapshot;
		a.time_ns = frame.time_ns;
		a.seq = (uint32_t)l4.payload[0] | (uint32_t)l4.payload[1] << 8 |
				(uint32_t)l4.payload[2] << 16 | (uint32_t)l4.payload[3] << 24;
		a.messages = (uint16_t)(walker.counters.messages + walker.counters.messages_skipped -
				before);
		a.feed = (uint16_t)(f - feeds);
		if (feed_push(f, &a) < 0) {
			fprintf(stderr, PROG ": out of memory\n");
			tw_pcap_close(pcap);
			return -1;
		}
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": %s: frame %" PRIu64 ": %s; hint: the capture is truncated "
				"or corrupt\n", path, counts->frames + 1, tw_pcap_error(pcap));
		tw_pcap_close(pcap);
		return -1;
	}
	tw_pcap_close(pcap);
	return 0;
}

/* ---- statistics ---- */

static int
cmp_time(const void *x, const void *y)
{
	const struct arrival *a = x, *b = y;

	if (a->time_ns != b->time_ns)
		return a->time_ns < b->time_ns ? -1 : 1;
	return a->feed < b->feed ? -1 : a->feed > b->feed;
}

static int
cmp_seq_time(const void *x, const void *y)
{
	const struct arrival *a = x, *b = y;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return cmp_time(x, y);
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/* Nearest rank: the smallest value with at least p% of the sample at or below it. */
static double
percentile(const double *sorted, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return NAN;
	rank = (size_t)ceil(p / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

/*
 * Index of dispersion of counts in windows [t0 + k w, t0 + (k + 1) w),
 * k < floor(duration / w): sample variance / mean.  One pass over the sorted
 * times; empty windows add nothing to the sums.
 */
static double
dispersion(const double *t, size_t n, double w, uint64_t *windows_out)
{
	double duration = t[n - 1] - t[0];
	uint64_t windows = (uint64_t)floor(duration / w), current = UINT64_MAX, index;
	double count = 0, sum = 0, sumsq = 0, mean, var;
	size_t i;

	*windows_out = windows;
	if (windows < MIN_WINDOWS)
		return NAN;
	for (i = 0; i < n; i++) {
		index = (uint64_t)floor((t[i] - t[0]) / w);
		if (index >= windows)
			break;
		if (index != current) {
			sum += count;
			sumsq += count * count;
			count = 0;
			current = index;
		}
		count++;
	}
	sum += count;
	sumsq += count * count;
	mean = sum / (double)windows;
	if (mean == 0)
		return NAN;
	var = (sumsq - (double)windows * mean * mean) / (double)(windows - 1);
	return var / mean;
}

/* Uniform in (0, 1]. */
static double
uniform(struct synth_rng *rng)
{
	return ((double)(synth_rng_next(rng) >> 11) + 1.0) / 9007199254740992.0;
}

/* n arrivals of a Poisson process of rate (n - 1) / duration, from 0. */
static void
poisson_sample(double *t, size_t n, double duration, struct synth_rng *rng)
{
	double mean_gap = duration / (double)(n - 1);
	size_t i;

	t[0] = 0;
	for (i = 1; i < n; i++)
		t[i] = t[i - 1] - mean_gap * log(uniform(rng));
}

static void
gap_moments(const double *t, size_t n, double *mean, double *sd)
{
	double sum = 0, sumsq = 0, m, g;
	size_t i;

	for (i = 1; i < n; i++)
		sum += t[i] - t[i - 1];
	m = sum / (double)(n - 1);
	for (i = 1; i < n; i++) {
		g = t[i] - t[i - 1] - m;
		sumsq += g * g;
	}
	*mean = m;
	*sd = sqrt(sumsq / (double)(n - 1));
}

static unsigned int
log2_bin(double gap_ns)
{
	uint64_t g = (uint64_t)gap_ns;

	return g == 0 ? 0 : 64 - (unsigned int)__builtin_clzll(g);
}

static double
burst_share(const double *t, size_t n, double gap_ns)
{
	uint64_t in_bursts = 0, run = 1;
	size_t i;

	for (i = 1; i <= n; i++) {
		if (i < n && t[i] - t[i - 1] <= gap_ns) {
			run++;
			continue;
		}
		if (run >= 2)
			in_bursts += run;
		run = 1;
	}
	return (double)in_bursts / (double)n;
}

static int
bursts(const double *t, size_t n, double gap_ns, struct burst_stat *b)
{
	uint64_t run = 1;
	size_t i;

	b->hist = calloc(n + 1, sizeof(*b->hist));
	if (b->hist == NULL)
		return -ENOMEM;
	for (i = 1; i <= n; i++) {
		if (i < n && t[i] - t[i - 1] <= gap_ns) {
			run++;
			continue;
		}
		b->hist[run]++;
		b->bursts++;
		if (run > b->max)
			b->max = run;
		run = 1;
	}
	b->mean = (double)n / (double)b->bursts;
	b->share_in_bursts = burst_share(t, n, gap_ns);
	return 0;
}

/* Statistics of arrivals sorted by time; n >= 2. */
static int
stream_compute(const struct arrival *arr, size_t n, const struct options *opt,
		struct stream_stat *s)
{
	double *t = malloc(n * sizeof(*t)), *gaps = malloc(n * sizeof(*gaps));
	double *sim = malloc(n * sizeof(*sim));
	double replica[WINDOW_COUNT][POISSON_REPLICAS];
	struct synth_rng rng;
	uint64_t msg_sum = 0, windows;
	size_t i;
	unsigned int w, r, k;
	int rc = -ENOMEM;

	memset(s, 0, sizeof(*s));
	if (t == NULL || gaps == NULL || sim == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		t[i] = (double)(arr[i].time_ns - arr[0].time_ns);
		s->msg_hist[arr[i].messages < MSG_BINS - 1 ? arr[i].messages : MSG_BINS - 1]++;
		msg_sum += arr[i].messages;
		if (arr[i].messages > s->msg_max)
			s->msg_max = arr[i].messages;
	}
	s->packets = n;
	s->msg_mean = (double)msg_sum / (double)n;
	s->duration_s = t[n - 1] / NS_PER_S;
	s->rate = s->duration_s > 0 ? (double)(n - 1) / s->duration_s : NAN;
	for (i = 1; i < n; i++) {
		gaps[i - 1] = t[i] - t[i - 1];
		s->log2_hist[log2_bin(gaps[i - 1])]++;
	}
	qsort(gaps, n - 1, sizeof(*gaps), cmp_double);
	for (k = 0; k < PERCENTILE_COUNT; k++)
		s->percentile_ns[k] = percentile(gaps, n - 1, percentile_rank[k]);
	gap_moments(t, n, &s->gap_mean_ns, &s->gap_sd_ns);
	s->cv = s->gap_mean_ns > 0 ? s->gap_sd_ns / s->gap_mean_ns : NAN;
	for (w = 0; w < WINDOW_COUNT; w++) {
		s->window[w].idc = dispersion(t, n, window_ns[w], &windows);
		s->window[w].windows = windows;
		s->window_valid[w] = !isnan(s->window[w].idc);
	}
	/* The same replicas for every window size: one band per stream. */
	synth_rng_seed(&rng, POISSON_SEED, 0);
	for (r = 0; r < POISSON_REPLICAS && t[n - 1] > 0; r++) {
		poisson_sample(sim, n, t[n - 1], &rng);
		if (r == 0) {
			double mean, sd;

			gap_moments(sim, n, &mean, &sd);
			s->poisson_cv = sd / mean;
		}
		for (w = 0; w < WINDOW_COUNT; w++)
			if (s->window_valid[w])
				replica[w][r] = dispersion(sim, n, window_ns[w], &windows);
	}
	for (w = 0; w < WINDOW_COUNT; w++) {
		if (!s->window_valid[w])
			continue;
		qsort(replica[w], POISSON_REPLICAS, sizeof(replica[w][0]), cmp_double);
		s->window[w].poisson_min = replica[w][0];
		s->window[w].poisson_median = (replica[w][POISSON_REPLICAS / 2 - 1] +
				replica[w][POISSON_REPLICAS / 2]) / 2;
		s->window[w].poisson_max = replica[w][POISSON_REPLICAS - 1];
	}
	rc = bursts(t, n, opt->burst_gap_us * NS_PER_US, &s->burst);
	for (k = 0; k < SWEEP_COUNT; k++)
		s->sweep_share[k] = burst_share(t, n, sweep_gap_us[k] * NS_PER_US);
out:
	free(sim);
	free(gaps);
	free(t);
	return rc;
}

/* B - A capture time of each MsgSeqNum both feeds carry (first copies). */
static int
skew_compute(const struct feed *a, const struct feed *b, struct skew_stat *k)
{
	struct arrival *x = malloc(a->count * sizeof(*x)), *y = malloc(b->count * sizeof(*y));
	double *d = malloc((a->count < b->count ? a->count : b->count) * sizeof(*d) + 1);
	size_t i = 0, j = 0, n = 0;
	unsigned int p;

	memset(k, 0, sizeof(*k));
	if (x == NULL || y == NULL || d == NULL) {
		free(x);
		free(y);
		free(d);
		return -ENOMEM;
	}
	memcpy(x, a->arr, a->count * sizeof(*x));
	memcpy(y, b->arr, b->count * sizeof(*y));
	qsort(x, a->count, sizeof(*x), cmp_seq_time);
	qsort(y, b->count, sizeof(*y), cmp_seq_time);
	while (i < a->count && j < b->count) {
		if (x[i].seq < y[j].seq) {
			i++;
		} else if (x[i].seq > y[j].seq) {
			j++;
		} else {
			d[n++] = (double)(int64_t)(y[j].time_ns - x[i].time_ns);
			while (i + 1 < a->count && x[i + 1].seq == x[i].seq)
				i++;
			while (j + 1 < b->count && y[j + 1].seq == y[j].seq)
				j++;
			i++;
			j++;
		}
	}
	k->pairs = n;
	for (i = 0; i < n; i++)
		k->b_first += d[i] < 0;
	qsort(d, n, sizeof(*d), cmp_double);
	for (p = 0; p < PERCENTILE_COUNT; p++)
		k->percentile_ns[p] = percentile(d, n, percentile_rank[p]);
	k->min_ns = n > 0 ? d[0] : NAN;
	for (i = 0; i < n; i++)
		d[i] = fabs(d[i]);
	qsort(d, n, sizeof(*d), cmp_double);
	k->abs_median_ns = percentile(d, n, 50);
	free(x);
	free(y);
	free(d);
	return 0;
}

/* ---- output ---- */

static void
json_number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f);
}

/* A key (with its separator) and a number. */
static void
json_put(FILE *f, const char *key, double v)
{
	fputs(key, f);
	json_number(f, v);
}

static void
feed_name(const struct feed *f, char *buf, size_t size)
{
	snprintf(buf, size, "%u.%u.%u.%u:%u", f->ip >> 24, (f->ip >> 16) & 255,
			(f->ip >> 8) & 255, f->ip & 255, f->port);
}

static void
json_stream(FILE *f, const struct stream_stat *s, const struct options *opt)
{
	unsigned int k, w;
	uint64_t i;
	bool first;

	fprintf(f, "\"packets\":%" PRIu64 ",\"duration_s\":", s->packets);
	json_number(f, s->duration_s);
	json_put(f, ",\"rate_per_s\":", s->rate);
	json_put(f, ",\"interarrival\":{\"mean_ns\":", s->gap_mean_ns);
	json_put(f, ",\"sd_ns\":", s->gap_sd_ns);
	json_put(f, ",\"cv\":", s->cv);
	json_put(f, ",\"poisson_sample_cv\":", s->poisson_cv);
	fputs(",\"percentiles_ns\":{", f);
	for (k = 0; k < PERCENTILE_COUNT; k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", percentile_name[k]);
		json_number(f, s->percentile_ns[k]);
	}
	fputs("},\"log2_histogram\":[", f);
	first = true;
	for (k = 0; k < LOG2_BINS; k++) {
		if (s->log2_hist[k] == 0)
			continue;
		fprintf(f, "%s{\"lo_ns\":%" PRIu64 ",\"hi_ns\":%" PRIu64 ",\"count\":%" PRIu64 "}",
				first ? "" : ",", k == 0 ? 0 : UINT64_C(1) << (k - 1),
				k == 0 ? 1 : (k == 64 ? UINT64_MAX : UINT64_C(1) << k), s->log2_hist[k]);
		first = false;
	}
	fputs("]},\"dispersion\":[", f);
	first = true;
	for (w = 0; w < WINDOW_COUNT; w++) {
		const struct window_stat *ws = &s->window[w];

		if (!s->window_valid[w])
			continue;
		fprintf(f, "%s{\"window\":\"%s\",\"window_ns\":%.0f,\"windows\":%" PRIu64
				",\"index\":", first ? "" : ",", window_name[w], window_ns[w],
				ws->windows);
		json_number(f, ws->idc);
		json_put(f, ",\"poisson_theory\":1,\"poisson_sim_min\":", ws->poisson_min);
		json_put(f, ",\"poisson_sim_median\":", ws->poisson_median);
		json_put(f, ",\"poisson_sim_max\":", ws->poisson_max);
		fputc('}', f);
		first = false;
	}
	json_put(f, "],\"messages_per_packet\":{\"mean\":", s->msg_mean);
	fprintf(f, ",\"max\":%" PRIu64 ",\"histogram\":{", s->msg_max);
	first = true;
	for (k = 0; k < MSG_BINS; k++) {
		if (s->msg_hist[k] == 0)
			continue;
		fprintf(f, "%s\"%u%s\":%" PRIu64, first ? "" : ",", k,
				k == MSG_BINS - 1 ? "+" : "", s->msg_hist[k]);
		first = false;
	}
	json_put(f, "}},\"bursts\":{\"gap_us\":", opt->burst_gap_us);
	fprintf(f, ",\"bursts\":%" PRIu64 ",\"mean_packets\":", s->burst.bursts);
	json_number(f, s->burst.mean);
	fprintf(f, ",\"max_packets\":%" PRIu64 ",\"share_in_bursts_ge2\":", s->burst.max);
	json_number(f, s->burst.share_in_bursts);
	fputs(",\"histogram\":{", f);
	first = true;
	for (i = 1; i <= s->burst.max; i++) {
		if (s->burst.hist[i] == 0)
			continue;
		fprintf(f, "%s\"%" PRIu64 "\":%" PRIu64, first ? "" : ",", i, s->burst.hist[i]);
		first = false;
	}
	fputs("},\"share_ge2_by_gap_us\":{", f);
	for (k = 0; k < SWEEP_COUNT; k++) {
		fprintf(f, "%s\"%g\":", k ? "," : "", sweep_gap_us[k]);
		json_number(f, s->sweep_share[k]);
	}
	fputs("}}", f);
}

static void
json_skew(FILE *f, const struct skew_stat *k)
{
	unsigned int p;

	fprintf(f, ",\"ab_skew\":{\"pairs\":%" PRIu64 ",\"b_first\":%" PRIu64
			",\"b_minus_a_ns\":{", k->pairs, k->b_first);
	json_put(f, "\"min\":", k->min_ns);
	for (p = 0; p < PERCENTILE_COUNT; p++) {
		fprintf(f, ",\"%s\":", percentile_name[p]);
		json_number(f, k->percentile_ns[p]);
	}
	json_put(f, "},\"abs_median_ns\":", k->abs_median_ns);
	fputc('}', f);
}

static void
text_stream(FILE *f, const char *title, const struct stream_stat *s, const struct options *opt)
{
	unsigned int k, w;
	uint64_t i;

	fprintf(f, "%s\n  packets %" PRIu64 ", duration %.3f s, mean rate %.3f /s\n", title,
			s->packets, s->duration_s, s->rate);
	fprintf(f, "  inter-arrival (us): mean %.1f, sd %.1f, CV %.3f (Poisson 1; sample %.3f)\n",
			s->gap_mean_ns / NS_PER_US, s->gap_sd_ns / NS_PER_US, s->cv, s->poisson_cv);
	fputs("   ", f);
	for (k = 0; k < PERCENTILE_COUNT; k++)
		fprintf(f, " %s %.1f", percentile_name[k], s->percentile_ns[k] / NS_PER_US);
	fputs("\n  log2 histogram (ns range: gaps):", f);
	for (k = 0; k < LOG2_BINS; k++)
		if (s->log2_hist[k] != 0)
			fprintf(f, " [%" PRIu64 ",%" PRIu64 "):%" PRIu64,
					k == 0 ? 0 : UINT64_C(1) << (k - 1),
					k == 0 ? 1 : (k == 64 ? UINT64_MAX : UINT64_C(1) << k),
					s->log2_hist[k]);
	fputs("\n  index of dispersion  window  windows   index   Poisson sim [min median max]\n",
			f);
	for (w = 0; w < WINDOW_COUNT; w++)
		if (s->window_valid[w])
			fprintf(f, "%29s %8" PRIu64 " %9.3f   [%.3f %.3f %.3f]\n", window_name[w],
					s->window[w].windows, s->window[w].idc,
					s->window[w].poisson_min, s->window[w].poisson_median,
					s->window[w].poisson_max);
	fprintf(f, "  messages per packet: mean %.3f, max %" PRIu64 ";", s->msg_mean, s->msg_max);
	for (k = 0; k < MSG_BINS; k++)
		if (s->msg_hist[k] != 0)
			fprintf(f, " %u%s:%" PRIu64, k, k == MSG_BINS - 1 ? "+" : "", s->msg_hist[k]);
	fprintf(f, "\n  bursts (gap <= %g us): %" PRIu64 ", mean %.3f packets, max %" PRIu64
			", in bursts of >= 2: %.2f%%\n   ", opt->burst_gap_us, s->burst.bursts,
			s->burst.mean, s->burst.max, 100 * s->burst.share_in_bursts);
	for (i = 1; i <= s->burst.max; i++)
		if (s->burst.hist[i] != 0)
			fprintf(f, " %" PRIu64 ":%" PRIu64, i, s->burst.hist[i]);
	fputs("\n    share in bursts >= 2 by gap:", f);
	for (k = 0; k < SWEEP_COUNT; k++)
		fprintf(f, " %g us %.2f%%", sweep_gap_us[k], 100 * s->sweep_share[k]);
	fputc('\n', f);
}

static void
text_skew(FILE *f, const struct skew_stat *k)
{
	fprintf(f, "  A/B skew (B - A, ns) over %" PRIu64 " MsgSeqNums: B first %" PRIu64
			" (%.1f%%), min %.0f p1 %.0f p50 %.0f p99 %.0f max %.0f, |skew| median %.0f\n",
			k->pairs, k->b_first, k->pairs ? 100.0 * (double)k->b_first /
			(double)k->pairs : 0.0, k->min_ns, k->percentile_ns[0], k->percentile_ns[2],
			k->percentile_ns[4], k->percentile_ns[5], k->abs_median_ns);
}

/* ---- driver ---- */

static int
cmp_feed(const void *x, const void *y)
{
	const struct feed *a = x, *b = y;

	if (a->channel != b->channel)
		return a->channel < b->channel ? -1 : 1;
	if (a->letter != b->letter)
		return a->letter < b->letter ? -1 : 1;
	if (a->ip != b->ip)
		return a->ip < b->ip ? -1 : 1;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* First copy of each MsgSeqNum over the channel's incremental feeds, by time. */
static struct arrival *
merge_channel(unsigned int first, unsigned int end, size_t *count)
{
	struct arrival *m;
	size_t n = 0, total = 0, i, kept = 0;
	unsigned int f;

	for (f = first; f < end; f++)
		if (!feeds[f].snapshot)
			total += feeds[f].count;
	m = malloc((total + 1) * sizeof(*m));
	if (m == NULL)
		return NULL;
	for (f = first; f < end; f++) {
		if (feeds[f].snapshot)
			continue;
		memcpy(m + n, feeds[f].arr, feeds[f].count * sizeof(*m));
		n += feeds[f].count;
	}
	qsort(m, n, sizeof(*m), cmp_seq_time);
	for (i = 0; i < n; i++)
		if (kept == 0 || m[i].seq != m[kept - 1].seq)
			m[kept++] = m[i];
	qsort(m, kept, sizeof(*m), cmp_time);
	*count = kept;
	return m;
}

static void
print_stream(FILE *text, FILE *json, bool *first_json, const char *kind, const char *name,
		unsigned int channel, char letter, const struct stream_stat *s,
		const struct skew_stat *skew, const struct options *opt)
{
	char title[160];

	if (letter)
		snprintf(title, sizeof(title), "%s %s (channel %u, feed %c)", kind, name, channel,
				letter);
	else
		snprintf(title, sizeof(title), "%s %s", kind, name);
	text_stream(text, title, s, opt);
	if (skew != NULL)
		text_skew(text, skew);
	fputc('\n', text);
	if (json == NULL)
		return;
	fprintf(json, "%s{\"kind\":\"%s\",\"name\":\"%s\",\"channel\":%u,\"feed\":", *first_json ?
			"" : ",", kind, name, channel);
	if (letter)
		fprintf(json, "\"%c\",", letter);
	else
		fputs("null,", json);
	json_stream(json, s, opt);
	if (skew != NULL)
		json_skew(json, skew);
	fputc('}', json);
	*first_json = false;
}

static int
analyse(const struct options *opt, FILE *text, FILE *json)
{
	struct stream_stat s;
	struct skew_stat skew;
	bool first_json = true;
	unsigned int f, g;
	char name[64];

	qsort(feeds, feed_count, sizeof(feeds[0]), cmp_feed);
	for (f = 0; f < feed_count; f++) {
		qsort(feeds[f].arr, feeds[f].count, sizeof(feeds[f].arr[0]), cmp_time);
		/* Merging relies on feed indexes, which the sort above changed. */
		for (size_t i = 0; i < feeds[f].count; i++)
			feeds[f].arr[i].feed = (uint16_t)f;
	}
	for (f = 0; f < feed_count; f = g) {
		const struct feed *a = NULL, *b = NULL;
		unsigned int incremental = 0;
		struct arrival *m;
		size_t n;

		for (g = f; g < feed_count && feeds[g].channel == feeds[f].channel; g++) {
			feed_name(&feeds[g], name, sizeof(name));
			if (feeds[g].count < 2) {
				fprintf(text, "feed %s: %zu packet(s), too few for statistics\n\n",
						name, feeds[g].count);
				continue;
			}
			if (stream_compute(feeds[g].arr, feeds[g].count, opt, &s) < 0)
				return -ENOMEM;
			print_stream(text, json, &first_json, feeds[g].snapshot ? "snapshot" : "feed",
					name, feeds[g].channel, feeds[g].letter, &s, NULL, opt);
			free(s.burst.hist);
			if (feeds[g].snapshot)
				continue;
			incremental++;
			if (feeds[g].letter == 'A' && a == NULL)
				a = &feeds[g];
			if (feeds[g].letter == 'B' && b == NULL)
				b = &feeds[g];
		}
		if (incremental < 1)
			continue;
		m = merge_channel(f, g, &n);
		if (m == NULL)
			return -ENOMEM;
		if (n >= 2) {
			if (stream_compute(m, n, opt, &s) < 0) {
				free(m);
				return -ENOMEM;
			}
			if (a != NULL && b != NULL && skew_compute(a, b, &skew) < 0) {
				free(s.burst.hist);
				free(m);
				return -ENOMEM;
			}
			snprintf(name, sizeof(name), "channel %u", feeds[f].channel);
			print_stream(text, json, &first_json, "merged", name, feeds[f].channel, 0,
					&s, a != NULL && b != NULL ? &skew : NULL, opt);
			free(s.burst.hist);
		}
		free(m);
	}
	return 0;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--json FILE] [--burst-gap-us G] PCAP...\n"
		"Packet arrival statistics of CME MDP 3.0 captures, per feed (destination\n"
		"ip:port) and for the merged incremental stream of each channel (first copy of\n"
		"each MsgSeqNum on feeds A and B): inter-arrival percentiles, log2 histogram and\n"
		"CV; index of dispersion of counts per window (100 us .. 10 s) next to Poisson\n"
		"samples of the same rate and length; messages per packet; bursts; A/B skew.\n"
		"  --json FILE        also write everything as one JSON object ('-': stdout,\n"
		"                     the text report then goes to stderr)\n"
		"  --burst-gap-us G   a burst is a run of packets each within G us of the\n"
		"                     previous one (default %g: packets closer than that queue\n"
		"                     behind each other in a receiver's per-packet path)\n"
		"Channel: destination port 14000+N (feed A) or 15000+N (feed B), CME's\n"
		"convention; other ports are their own channel.\n"
		"Exit: 0 done; 1 a capture could not be read or the JSON not written; 2 usage.\n",
		DEFAULT_BURST_GAP_US);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "burst-gap-us", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options opt = { .burst_gap_us = DEFAULT_BURST_GAP_US };
	struct counts counts = { 0 };
	FILE *json = NULL, *text = stdout;
	unsigned int f;
	char *end;
	int c, i, status = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = optarg;
			break;
		case 'g':
			errno = 0;
			opt.burst_gap_us = strtod(optarg, &end);
			if (optarg[0] == '\0' || *end != '\0' || errno != 0 ||
					!(opt.burst_gap_us >= 0) || opt.burst_gap_us > 1e9) {
				fprintf(stderr, PROG ": --burst-gap-us '%s': not a number of "
						"microseconds in [0, 1e9]; hint: --burst-gap-us 10\n",
						optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, PROG ": no capture file given\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = optind; i < argc; i++)
		if (read_file(argv[i], &counts) < 0)
			status = 1;
	if (status != 0)
		goto out;
	if (opt.json != NULL) {
		if (strcmp(opt.json, "-") == 0) {
			json = stdout;
			text = stderr;
		} else {
			json = fopen(opt.json, "w");
			if (json == NULL) {
				fprintf(stderr, PROG ": %s: cannot write: %s\n", opt.json,
						strerror(errno));
				status = 1;
				goto out;
			}
		}
		fprintf(json, "{\"tool\":\"" PROG "\",\"format\":1,\"files\":[");
		for (i = optind; i < argc; i++) {
			fputs(i > optind ? ",\"" : "\"", json);
			for (end = argv[i]; *end != '\0'; end++) {
				if (*end == '"' || *end == '\\')
					fputc('\\', json);
				if ((unsigned char)*end < 0x20)
					fprintf(json, "\\u%04x", (unsigned char)*end);
				else
					fputc(*end, json);
			}
			fputc('"', json);
		}
		fprintf(json, "],\"frames\":%" PRIu64 ",\"frames_not_udp\":%" PRIu64
				",\"frames_not_mdp3\":%" PRIu64 ",\"burst_gap_us\":", counts.frames,
				counts.not_udp, counts.not_mdp3);
		json_number(json, opt.burst_gap_us);
		fprintf(json, ",\"poisson_replicas\":%d,\"streams\":[", POISSON_REPLICAS);
	}
	fprintf(text, "%" PRIu64 " frames, %" PRIu64 " not UDP, %" PRIu64 " not MDP3\n\n",
			counts.frames, counts.not_udp, counts.not_mdp3);
	if (analyse(&opt, text, json) < 0) {
		fprintf(stderr, PROG ": out of memory\n");
		status = 1;
	}
	if (json != NULL) {
		fputs("]}\n", json);
		if ((json == stdout ? fflush(json) : fclose(json)) != 0) {
			fprintf(stderr, PROG ": %s: writing failed: %s\n", opt.json, strerror(errno));
			status = 1;
		}
	}
out:
	for (f = 0; f < feed_count; f++)
		free(feeds[f].arr);
	return status;
}
