/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * The latency study's estimators (contracts in tw_study.h). Every statistic
 * sorts a copy of the values it needs: O(n log n) per table, no state kept.
 * Not a hot path; doubles throughout, long double where a rank is rounded.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tw_study.h"

const double tw_study_pct[TW_STUDY_N_PCT] = {50, 90, 99, 99.9, 99.99, 100};
const char *const tw_study_pct_name[TW_STUDY_N_PCT] = {
	"p50", "p90", "p99", "p99.9", "p99.99", "max"};
const char *const tw_study_pct_key[TW_STUDY_N_PCT] = {
	"p50", "p90", "p99", "p99_9", "p99_99", "max"};
const uint32_t tw_study_ahead_lo[TW_STUDY_N_AHEAD] = {0, 1, 2, 3, 4, 8, 16, 64};

/* Windows of one series or one window list; more means bogus stamps. */
#define WINDOWS_MAX (UINT64_C(1) << 26)
/* The agreement threshold of the three floors. */
#define FLOOR_AGREE_SPREAD 0.10

struct packet {
	uint64_t t0;
	uint32_t msg_seq_num;
};

struct keyed {
	uint64_t key;
	double ns;
};

bool
tw_study_is_missing(double v)
{
	return isnan(v);
}

static bool
is_feed(const struct tw_lat_record *r)
{
	return r->stream == TW_LAT_BOOK || r->stream == TW_LAT_TRADE;
}

static bool
kind_matches(int kind, const struct tw_lat_record *r)
{
	if (kind == TW_STUDY_ALL)
		return true;
	if (kind == TW_STUDY_FEED)
		return is_feed(r);
	return r->stream == kind;
}

static double
ticks_to_ns(const struct tw_lat_header *h, uint64_t ticks)
{
	return (double)((long double)ticks * 1e9L / (long double)h->tsc_hz);
}

double
tw_study_latency_ns(const struct tw_lat_header *h, const struct tw_lat_record *r)
{
	uint64_t end = r->stream == TW_LAT_ORDER ? r->t3 : r->t1;

	return ticks_to_ns(h, end > r->t0 ? end - r->t0 : 0);
}

uint64_t
tw_study_ahead(const struct tw_lat_record *r)
{
	uint64_t ahead = r->qlen;

	if (r->flags & TW_LAT_REC_RXQ)
		ahead += r->rxq;
	return ahead;
}

unsigned int
tw_study_ahead_bucket(uint64_t ahead)
{
	unsigned int b = 0;

	while (b + 1 < TW_STUDY_N_AHEAD && ahead >= tw_study_ahead_lo[b + 1])
		b++;
	return b;
}

double
tw_study_capture_s(const struct tw_lat_header *h, uint64_t t0, uint64_t first_t0)
{
	long double ticks;

	if ((h->flags & TW_LAT_FLAG_PACED) && h->speed_milli > 0) {
		ticks = t0 >= h->start_tsc ? (long double)(t0 - h->start_tsc) :
			-(long double)(h->start_tsc - t0);
		return (double)(ticks / h->tsc_hz * h->speed_milli / 1000.0L);
	}
	ticks = t0 >= first_t0 ? (long double)(t0 - first_t0) : 0;
	return (double)(ticks / h->tsc_hz);
}

double
tw_study_percentile(const double *sorted, uint64_t n, double pct)
{
	long double x;
	uint64_t rank;

	if (n == 0)
		return NAN;
	/* ceil(pct / 100 x n); the epsilon absorbs 99.9 not being exact in
	 * binary (every pct used has at most 5 decimals, so a true fraction
	 * is far larger than 1e-7). */
	x = (long double)pct * (long double)n / 100.0L - 1e-7L;
	rank = x <= 1 ? 1 : (uint64_t)ceill(x);
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->ns > y->ns) - (x->ns < y->ns);
}

static int
cmp_packet(const void *a, const void *b)
{
	const struct packet *x = a, *y = b;

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return (x->msg_seq_num > y->msg_seq_num) - (x->msg_seq_num < y->msg_seq_num);
}

/* The next run of equal keys of k[*at .. n) (sorted by cmp_keyed): its
 * values, sorted, into vals; its key into *key; *at moves past it.
 * @return the run's length, 0 at the end. */
static uint64_t
next_group(const struct keyed *k, uint64_t n, uint64_t *at, double *vals, uint64_t *key)
{
	uint64_t start = *at, end = *at;

	if (start >= n)
		return 0;
	while (end < n && k[end].key == k[start].key) {
		vals[end - start] = k[end].ns;
		end++;
	}
	*key = k[start].key;
	*at = end;
	return end - start;
}

void
tw_study_row_of(double *vals, uint64_t n, struct tw_study_row *row)
{
	row->count = n;
	if (n > 1)
		qsort(vals, n, sizeof(*vals), cmp_double);
	for (unsigned int i = 0; i < TW_STUDY_N_PCT; i++)
		row->v[i] = tw_study_percentile(vals, n, tw_study_pct[i]);
}

static double *
alloc_values(uint64_t n)
{
	return malloc((n != 0 ? n : 1) * sizeof(double));
}

static uint64_t
first_t0_of(const struct tw_study *s)
{
	uint64_t first = UINT64_MAX;

	for (uint64_t i = 0; i < s->count; i++)
		if (s->records[i].t0 < first)
			first = s->records[i].t0;
	return first;
}

int
tw_study_open(struct tw_study *s, const struct tw_lat_header *h,
	      const struct tw_lat_record *records, uint64_t count)
{
	uint64_t first_t0;

	memset(s, 0, sizeof(*s));
	if (h->tsc_hz == 0)
		return -EINVAL;
	s->header = h;
	s->records = records;
	s->count = count;
	s->ns = alloc_values(count);
	s->capture_s = alloc_values(count);
	if (s->ns == NULL || s->capture_s == NULL) {
		tw_study_close(s);
		return -ENOMEM;
	}
	first_t0 = first_t0_of(s);
	for (uint64_t i = 0; i < count; i++) {
		s->ns[i] = tw_study_latency_ns(h, &records[i]);
		s->capture_s[i] = tw_study_capture_s(h, records[i].t0, first_t0);
	}
	return 0;
}

void
tw_study_close(struct tw_study *s)
{
	free(s->ns);
	free(s->capture_s);
	s->ns = NULL;
	s->capture_s = NULL;
}

int
tw_study_select(const struct tw_study *s, int kind, bool any_instrument, int32_t instrument,
		struct tw_study_row *row)
{
	double *vals = alloc_values(s->count);
	uint64_t n = 0;

	if (vals == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->count; i++) {
		if (!kind_matches(kind, &s->records[i]))
			continue;
		if (!any_instrument && s->records[i].instrument != instrument)
			continue;
		vals[n++] = s->ns[i];
	}
	tw_study_row_of(vals, n, row);
	free(vals);
	return 0;
}

static int
cmp_stream_key(const void *a, const void *b)
{
	const struct tw_study_stream *x = a, *y = b;

	if (x->instrument != y->instrument)
		return x->instrument < y->instrument ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static int
cmp_stream_busiest(const void *a, const void *b)
{
	const struct tw_study_stream *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return cmp_stream_key(a, b);
}

int64_t
tw_study_streams(const struct tw_study *s, struct tw_study_stream **out)
{
	struct tw_study_stream *all;
	uint64_t n = 0;

	*out = NULL;
	if (s->count == 0)
		return 0;
	all = malloc(s->count * sizeof(*all));
	if (all == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->count; i++)
		all[i] = (struct tw_study_stream){s->records[i].instrument, s->records[i].stream, 1};
	qsort(all, s->count, sizeof(*all), cmp_stream_key);
	for (uint64_t i = 0; i < s->count; i++) {
		if (n > 0 && cmp_stream_key(&all[n - 1], &all[i]) == 0)
			all[n - 1].count++;
		else
			all[n++] = all[i];
	}
	qsort(all, n, sizeof(*all), cmp_stream_busiest);
	*out = all;
	return (int64_t)n;
}

static void
fit_line(struct tw_study_model *m)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0, mean_y, ss_tot = 0, ss_res = 0, den;
	double n = m->points;

	m->floor_ns = NAN;
	m->slope_ns = NAN;
	m->r2 = NAN;
	for (uint32_t i = 0; i < m->n_rungs; i++) {
		const struct tw_study_rung *r = &m->rungs[i];

		if (!r->used)
			continue;
		sx += r->idx;
		sy += r->median_ns;
		sxx += (double)r->idx * r->idx;
		sxy += (double)r->idx * r->median_ns;
	}
	if (m->points == 1) {
		/* one rung: it is the floor only if it is idx 0 */
		for (uint32_t i = 0; i < m->n_rungs; i++)
			if (m->rungs[i].used && m->rungs[i].idx == 0)
				m->floor_ns = m->rungs[i].median_ns;
		return;
	}
	den = n * sxx - sx * sx;
	if (m->points == 0 || den == 0)
		return;
	m->slope_ns = (n * sxy - sx * sy) / den;
	m->floor_ns = (sy - m->slope_ns * sx) / n;
	if (m->points < 3)
		return;
	mean_y = sy / n;
	for (uint32_t i = 0; i < m->n_rungs; i++) {
		const struct tw_study_rung *r = &m->rungs[i];
		double e;

		if (!r->used)
			continue;
		e = r->median_ns - (m->floor_ns + m->slope_ns * r->idx);
		ss_res += e * e;
		ss_tot += (r->median_ns - mean_y) * (r->median_ns - mean_y);
	}
	if (ss_tot > 0)
		m->r2 = 1.0 - ss_res / ss_tot;
}

int
tw_study_model(const struct tw_study *s, uint64_t min_count, bool ahead_zero_only,
	       struct tw_study_model *m)
{
	struct keyed *k = malloc((s->count != 0 ? s->count : 1) * sizeof(*k));
	double *vals = alloc_values(s->count);
	uint64_t n = 0, at = 0, count, idx;

	memset(m, 0, sizeof(*m));
	m->min_count = min_count;
	m->floor_ns = m->slope_ns = m->r2 = NAN;
	/* idx is 16 bits: at most 65536 rungs */
	m->rungs = calloc(s->count > 0 && s->count < 65536 ? s->count : 65536, sizeof(*m->rungs));
	if (k == NULL || vals == NULL || m->rungs == NULL) {
		free(k);
		free(vals);
		tw_study_model_free(m);
		return -ENOMEM;
	}
	for (uint64_t j = 0; j < s->count; j++) {
		const struct tw_lat_record *r = &s->records[j];

		if (!is_feed(r) || (ahead_zero_only && tw_study_ahead(r) != 0))
			continue;
		k[n++] = (struct keyed){r->idx, s->ns[j]};
	}
	qsort(k, n, sizeof(*k), cmp_keyed);
	while ((count = next_group(k, n, &at, vals, &idx)) != 0) {
		struct tw_study_rung *r = &m->rungs[m->n_rungs++];

		r->idx = (uint32_t)idx;
		r->count = count;
		r->median_ns = tw_study_percentile(vals, count, 50);
		r->p99_ns = tw_study_percentile(vals, count, 99);
		r->used = count >= min_count;
		if (r->used)
			m->points++;
	}
	free(k);
	free(vals);
	fit_line(m);
	return 0;
}

void
tw_study_model_free(struct tw_study_model *m)
{
	free(m->rungs);
	m->rungs = NULL;
	m->n_rungs = 0;
}

/* The distinct packets of the feed records, by t0. */
static int64_t
packets_of(const struct tw_study *s, struct packet **out)
{
	struct packet *p = malloc((s->count != 0 ? s->count : 1) * sizeof(*p));
	uint64_t n = 0, u = 0;

	*out = NULL;
	if (p == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->count; i++)
		if (is_feed(&s->records[i]))
			p[n++] = (struct packet){s->records[i].t0, s->records[i].msg_seq_num};
	qsort(p, n, sizeof(*p), cmp_packet);
	for (uint64_t i = 0; i < n; i++)
		if (u == 0 || cmp_packet(&p[u - 1], &p[i]) != 0)
			p[u++] = p[i];
	*out = p;
	return (int64_t)u;
}

/* The window grid: windows of length_s from floor(min / length_s). */
struct grid {
	double length_s;
	int64_t first;
	uint64_t n;
};

static int
grid_of(double min_s, double max_s, double length_s, struct grid *g)
{
	double last = floor(max_s / length_s);

	g->length_s = length_s;
	g->first = (int64_t)floor(min_s / length_s);
	if (!(last - (double)g->first < (double)WINDOWS_MAX))
		return -ERANGE;
	g->n = (uint64_t)((int64_t)last - g->first) + 1;
	return 0;
}

static uint64_t
grid_slot(const struct grid *g, double t_s)
{
	int64_t w = (int64_t)floor(t_s / g->length_s) - g->first;

	if (w < 0)
		return 0;
	return (uint64_t)w < g->n ? (uint64_t)w : g->n - 1;
}

/* Packets and their capture times; *min_s, *max_s over them. */
static int64_t
packet_times(const struct tw_study *s, double **times, double *min_s, double *max_s)
{
	struct packet *p;
	int64_t n = packets_of(s, &p);
	uint64_t first_t0 = first_t0_of(s);

	*times = NULL;
	*min_s = *max_s = 0;
	if (n < 0)
		return n;
	*times = alloc_values((uint64_t)n);
	if (*times == NULL) {
		free(p);
		return -ENOMEM;
	}
	for (int64_t i = 0; i < n; i++) {
		double t = tw_study_capture_s(s->header, p[i].t0, first_t0);

		(*times)[i] = t;
		if (i == 0 || t < *min_s)
			*min_s = t;
		if (i == 0 || t > *max_s)
			*max_s = t;
	}
	free(p);
	return n;
}

int64_t
tw_study_windows(const struct tw_study *s, double length_s, struct tw_study_window **out)
{
	double *times, min_s, max_s;
	int64_t n = packet_times(s, &times, &min_s, &max_s);
	struct tw_study_window *w;
	struct grid g;

	*out = NULL;
	if (n <= 0) {
		free(times);
		return n;
	}
	if (grid_of(min_s, max_s, length_s, &g) != 0) {
		free(times);
		return -ERANGE;
	}
	w = calloc(g.n, sizeof(*w));
	if (w == NULL) {
		free(times);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < g.n; i++)
		w[i].start_s = (double)(g.first + (int64_t)i) * length_s;
	for (int64_t i = 0; i < n; i++)
		w[grid_slot(&g, times[i])].packets++;
	free(times);
	*out = w;
	return (int64_t)g.n;
}

static int
cmp_window_densest(const void *a, const void *b)
{
	const struct tw_study_window *x = a, *y = b;

	if (x->packets != y->packets)
		return x->packets < y->packets ? 1 : -1;
	return (x->start_s > y->start_s) - (x->start_s < y->start_s);
}

static bool
in_dense(const struct tw_study_floors *f, double t_s)
{
	for (uint32_t i = 0; i < f->n_dense; i++)
		if (t_s >= f->dense[i].start_s && t_s < f->dense[i].start_s + 1.0)
			return true;
	return false;
}

static void
floors_agree(struct tw_study_floors *f)
{
	double v[3] = {f->fit_ns, f->idx0_ns, f->dense_ns};
	double lo = v[0], hi = v[0];

	f->spread = NAN;
	f->agree = -1;
	for (int i = 0; i < 3; i++) {
		if (isnan(v[i]) || v[i] <= 0)
			return;
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	f->spread = hi / lo - 1.0;
	f->agree = f->spread <= FLOOR_AGREE_SPREAD;
}

int
tw_study_floors(const struct tw_study *s, const struct tw_study_model *m, uint32_t k,
		struct tw_study_floors *f)
{
	struct tw_study_window *w;
	int64_t n_w;
	double *vals;
	uint64_t n0 = 0, n1 = 0;

	memset(f, 0, sizeof(*f));
	f->fit_ns = m->floor_ns;
	vals = alloc_values(s->count);
	if (vals == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->count; i++) {
		const struct tw_lat_record *r = &s->records[i];

		if (is_feed(r) && r->idx == 0 && tw_study_ahead(r) == 0)
			vals[n0++] = s->ns[i];
	}
	qsort(vals, n0, sizeof(*vals), cmp_double);
	f->idx0_ns = tw_study_percentile(vals, n0, 50);
	f->idx0_count = n0;

	n_w = tw_study_windows(s, 1.0, &w);
	if (n_w < 0 && n_w != -ERANGE) {
		free(vals);
		return (int)n_w;
	}
	if (n_w > 0) {
		qsort(w, (size_t)n_w, sizeof(*w), cmp_window_densest);
		f->n_dense = (uint32_t)((uint64_t)n_w < k ? (uint64_t)n_w : k);
		/* an empty window is not dense */
		while (f->n_dense > 0 && w[f->n_dense - 1].packets == 0)
			f->n_dense--;
		f->dense = w;
	}
	for (uint64_t i = 0; i < s->count; i++) {
		const struct tw_lat_record *r = &s->records[i];

		if (is_feed(r) && r->n_msgs == 1 && in_dense(f, s->capture_s[i]))
			vals[n1++] = s->ns[i];
	}
	qsort(vals, n1, sizeof(*vals), cmp_double);
	f->dense_ns = tw_study_percentile(vals, n1, 50);
	f->dense_count = n1;
	free(vals);
	floors_agree(f);
	return 0;
}

void
tw_study_floors_free(struct tw_study_floors *f)
{
	free(f->dense);
	f->dense = NULL;
	f->n_dense = 0;
}

int
tw_study_ahead_table(const struct tw_study *s, struct tw_study_ahead_row rows[TW_STUDY_N_AHEAD],
		     double *share_zero)
{
	struct keyed *k = malloc((s->count != 0 ? s->count : 1) * sizeof(*k));
	uint64_t n = 0, at = 0, count, bucket;
	double *vals;

	if (k == NULL)
		return -ENOMEM;
	vals = alloc_values(s->count);
	if (vals == NULL) {
		free(k);
		return -ENOMEM;
	}
	for (unsigned int b = 0; b < TW_STUDY_N_AHEAD; b++) {
		rows[b] = (struct tw_study_ahead_row){
			.lo = tw_study_ahead_lo[b],
			.hi = b + 1 < TW_STUDY_N_AHEAD ? tw_study_ahead_lo[b + 1] - 1 : UINT32_MAX,
			.median_ns = NAN, .p99_ns = NAN};
	}
	for (uint64_t j = 0; j < s->count; j++)
		if (is_feed(&s->records[j]))
			k[n++] = (struct keyed){tw_study_ahead_bucket(tw_study_ahead(&s->records[j])),
						s->ns[j]};
	qsort(k, n, sizeof(*k), cmp_keyed);
	while ((count = next_group(k, n, &at, vals, &bucket)) != 0) {
		struct tw_study_ahead_row *row = &rows[bucket];

		row->count = count;
		row->median_ns = tw_study_percentile(vals, count, 50);
		row->p99_ns = tw_study_percentile(vals, count, 99);
	}
	*share_zero = n != 0 ? (double)rows[0].count / (double)n : NAN;
	free(vals);
	free(k);
	return 0;
}

int
tw_study_tick_to_trade(const struct tw_study *s, struct tw_study_t2t *t)
{
	double *vals[4];
	uint64_t n[4] = {0};
	int rc = 0;

	for (int p = 0; p < 4; p++)
		vals[p] = alloc_values(s->count);
	for (int p = 0; p < 4; p++)
		if (vals[p] == NULL)
			rc = -ENOMEM;
	for (uint64_t i = 0; rc == 0 && i < s->count; i++) {
		const struct tw_lat_record *r = &s->records[i];
		const uint64_t stamp[4] = {r->t0, r->t1, r->t2, r->t3};

		if (r->stream != TW_LAT_ORDER)
			continue;
		vals[0][n[0]++] = s->ns[i];
		for (int p = 0; p < 3; p++)
			if (stamp[p] != 0 && stamp[p + 1] != 0 && stamp[p + 1] >= stamp[p])
				vals[p + 1][n[p + 1]++] = ticks_to_ns(s->header,
								     stamp[p + 1] - stamp[p]);
	}
	if (rc == 0) {
		tw_study_row_of(vals[0], n[0], &t->total);
		for (int p = 0; p < 3; p++)
			tw_study_row_of(vals[p + 1], n[p + 1], &t->part[p]);
	}
	for (int p = 0; p < 4; p++)
		free(vals[p]);
	return rc;
}

int
tw_study_parts(const struct tw_study *s, struct tw_study_parts *out)
{
	struct tw_study_row *rows[4] = {&out->total, &out->to_decode, &out->decode, &out->signal};
	double *vals[4];
	uint64_t n[4] = {0};
	int rc = 0;

	for (int p = 0; p < 4; p++)
		if ((vals[p] = alloc_values(s->count)) == NULL)
			rc = -ENOMEM;
	for (uint64_t i = 0; rc == 0 && i < s->count; i++) {
		const struct tw_lat_record *r = &s->records[i];
		const uint64_t total = r->t1 > r->t0 ? r->t1 - r->t0 : 0;

		if (r->stream == TW_LAT_ORDER || tw_study_ahead(r) != 0)
			continue;
		vals[0][n[0]++] = s->ns[i];
		vals[1][n[1]++] = ticks_to_ns(s->header, r->wait);
		vals[2][n[2]++] = ticks_to_ns(s->header, total > r->wait ? total - r->wait : 0);
		if (r->t2 >= r->t1 && r->t1 != 0)
			vals[3][n[3]++] = ticks_to_ns(s->header, r->t2 - r->t1);
	}
	for (int p = 0; p < 4; p++) {
		if (rc == 0)
			tw_study_row_of(vals[p], n[p], rows[p]);
		free(vals[p]);
	}
	return rc;
}

int64_t
tw_study_quantiles(const struct tw_study *s, int kind, const double *p, uint32_t n, double *ns)
{
	double *vals = alloc_values(s->count);
	uint64_t m = 0;

	if (vals == NULL)
		return -ENOMEM;
	for (uint64_t i = 0; i < s->count; i++)
		if (kind_matches(kind, &s->records[i]))
			vals[m++] = s->ns[i];
	qsort(vals, m, sizeof(*vals), cmp_double);
	for (uint32_t i = 0; i < n; i++)
		ns[i] = tw_study_percentile(vals, m, p[i] * 100.0);
	free(vals);
	return (int64_t)m;
}

/* The largest 1, 2 or 5 x 10^k not above x (x > 0). */
static double
nice_floor(double x)
{
	double decade = pow(10.0, floor(log10(x)));

	if (x >= 5 * decade)
		return 5 * decade;
	if (x >= 2 * decade)
		return 2 * decade;
	return decade;
}

int
tw_study_series(const struct tw_study *s, uint32_t min_windows, struct tw_study_series *out)
{
	double *times, min_s, max_s, *vals;
	int64_t n = packet_times(s, &times, &min_s, &max_s);
	struct keyed *k;
	struct grid g;
	uint64_t m = 0, at = 0, count, slot;

	memset(out, 0, sizeof(*out));
	if (n <= 0) {
		free(times);
		return n < 0 ? (int)n : 0;
	}
	out->packets = (uint64_t)n;
	out->span_s = max_s - min_s;
	out->length_s = 1.0;
	if (min_windows > 0 && out->span_s > 0 && out->span_s < min_windows)
		out->length_s = nice_floor(out->span_s / min_windows);
	if (grid_of(min_s, max_s, out->length_s, &g) != 0) {
		free(times);
		return -ERANGE;
	}
	out->slices = calloc(g.n, sizeof(*out->slices));
	k = malloc((s->count != 0 ? s->count : 1) * sizeof(*k));
	vals = alloc_values(s->count);
	if (out->slices == NULL || k == NULL || vals == NULL) {
		free(times);
		free(k);
		free(vals);
		tw_study_series_free(out);
		return -ENOMEM;
	}
	out->n_slices = (uint32_t)g.n;
	for (uint64_t w = 0; w < g.n; w++) {
		out->slices[w].start_s = (double)(g.first + (int64_t)w) * g.length_s;
		out->slices[w].p99_ns = NAN;
	}
	for (int64_t j = 0; j < n; j++)
		out->slices[grid_slot(&g, times[j])].packets++;
	for (uint64_t w = 0; w < g.n; w++)
		out->slices[w].packets_per_s = (double)out->slices[w].packets / g.length_s;
	for (uint64_t j = 0; j < s->count; j++)
		if (is_feed(&s->records[j]))
			k[m++] = (struct keyed){grid_slot(&g, s->capture_s[j]), s->ns[j]};
	qsort(k, m, sizeof(*k), cmp_keyed);
	while ((count = next_group(k, m, &at, vals, &slot)) != 0) {
		out->slices[slot].records = count;
		out->slices[slot].p99_ns = tw_study_percentile(vals, count, 99);
	}
	free(times);
	free(k);
	free(vals);
	return 0;
}

void
tw_study_series_free(struct tw_study_series *out)
{
	free(out->slices);
	out->slices = NULL;
	out->n_slices = 0;
}
