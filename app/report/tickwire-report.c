/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-report: latency tables from tickwire's record files
 * (format: app/tickwire/tw_latency.h).
 *
 *   tickwire-report [--streams N] FILE [FILE2]
 *
 * For one file: p50/p90/p99/p99.9/p99.99/max of t1 - t0 in ns, overall, per
 * kind (book, trade) and per stream (instrument and kind; the N busiest),
 * and the least-squares fit of the per-idx median: median ~ floor + slope x
 * idx (idx = the event's position in its packet). With two files (the two
 * topologies on the same input), the rows side by side with the ratio
 * FILE2 / FILE1. Percentiles are nearest-rank. Not a hot path: doubles.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tw_latency.h"

#define N_PCT 6
static const double pct[N_PCT] = {50, 90, 99, 99.9, 99.99, 100};
static const char *const pct_name[N_PCT] = {"p50", "p90", "p99", "p99.9", "p99.99", "max"};

struct run {
	const char *path;
	struct tw_lat_header h;
	struct tw_lat_record *rec;
	double *ns;          /* latency of each record, ns */
};

struct row {
	uint64_t n;
	double v[N_PCT];
};

struct fit {
	double floor, slope;
	uint32_t points;
	uint64_t max_idx;
};

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void
row_of(double *vals, uint64_t n, struct row *r)
{
	memset(r, 0, sizeof(*r));
	r->n = n;
	if (n == 0)
		return;
	qsort(vals, n, sizeof(*vals), cmp_double);
	for (int i = 0; i < N_PCT; i++) {
		uint64_t rank = (uint64_t)(pct[i] / 100.0 * (double)n + 0.999999);

		if (rank < 1)
			rank = 1;
		if (rank > n)
			rank = n;
		r->v[i] = vals[rank - 1];
	}
}

/* filter: kind (-1 any), instrument (0 any) */
static void
row_select(const struct run *run, int kind, int32_t instrument, struct row *r)
{
	double *tmp = malloc((run->h.count ? run->h.count : 1) * sizeof(double));
	uint64_t n = 0;

	if (tmp == NULL) {
		memset(r, 0, sizeof(*r));
		return;
	}
	for (uint64_t i = 0; i < run->h.count; i++) {
		if (kind >= 0 && run->rec[i].stream != kind)
			continue;
		if (instrument != 0 && run->rec[i].instrument != instrument)
			continue;
		tmp[n++] = run->ns[i];
	}
	row_of(tmp, n, r);
	free(tmp);
}

static void
fit_of(const struct run *run, struct fit *f)
{
	uint64_t max_idx = 0;
	double sx = 0, sy = 0, sxx = 0, sxy = 0;

	memset(f, 0, sizeof(*f));
	for (uint64_t i = 0; i < run->h.count; i++)
		if (run->rec[i].idx > max_idx)
			max_idx = run->rec[i].idx;
	f->max_idx = max_idx;
	for (uint64_t idx = 0; idx <= max_idx; idx++) {
		struct row r;
		double *tmp = malloc((run->h.count ? run->h.count : 1) * sizeof(double));
		uint64_t n = 0;

		if (tmp == NULL)
			return;
		for (uint64_t i = 0; i < run->h.count; i++)
			if (run->rec[i].idx == idx)
				tmp[n++] = run->ns[i];
		row_of(tmp, n, &r);
		free(tmp);
		if (n == 0)
			continue;
		sx += (double)idx;
		sy += r.v[0];
		sxx += (double)idx * (double)idx;
		sxy += (double)idx * r.v[0];
		f->points++;
	}
	if (f->points == 0)
		return;
	if (f->points == 1 || f->points * sxx - sx * sx == 0) {
		f->floor = sy / f->points;
		return;
	}
	f->slope = (f->points * sxy - sx * sy) / (f->points * sxx - sx * sx);
	f->floor = (sy - f->slope * sx) / f->points;
}

struct stream_count {
	int32_t instrument;
	uint8_t kind;
	uint64_t n;
};

static int
cmp_stream(const void *a, const void *b)
{
	const struct stream_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	if (x->instrument != y->instrument)
		return x->instrument < y->instrument ? -1 : 1;
	return x->kind - y->kind;
}

/* The distinct (instrument, kind) streams of a run, busiest first. */
static uint64_t
streams_of(const struct run *run, struct stream_count **out)
{
	struct stream_count *s = NULL;
	uint64_t n = 0, cap = 0;

	for (uint64_t i = 0; i < run->h.count; i++) {
		uint64_t j;

		for (j = 0; j < n; j++)
			if (s[j].instrument == run->rec[i].instrument &&
			    s[j].kind == run->rec[i].stream)
				break;
		if (j == n) {
			if (n == cap) {
				struct stream_count *g;

				cap = cap ? 2 * cap : 64;
				g = realloc(s, cap * sizeof(*s));
				if (g == NULL)
					break;
				s = g;
			}
			s[n++] = (struct stream_count){run->rec[i].instrument, run->rec[i].stream, 0};
		}
		s[j].n++;
	}
	if (n > 0)
		qsort(s, n, sizeof(*s), cmp_stream);
	*out = s;
	return n;
}

static void
print_header(int runs)
{
	printf("%-22s", "stream");
	for (int r = 0; r < runs; r++) {
		printf(" %9s", "count");
		for (int i = 0; i < N_PCT; i++)
			printf(" %9s", pct_name[i]);
		if (r + 1 < runs)
			printf(" |");
	}
	if (runs == 2)
		printf(" | %7s %7s", "p50 2/1", "p99 2/1");
	printf("\n");
}

static void
print_row(const char *label, const struct row *rows, int runs)
{
	printf("%-22s", label);
	for (int r = 0; r < runs; r++) {
		printf(" %9" PRIu64, rows[r].n);
		for (int i = 0; i < N_PCT; i++)
			printf(" %9.0f", rows[r].v[i]);
		if (r + 1 < runs)
			printf(" |");
	}
	if (runs == 2)
		printf(" | %7.2f %7.2f", rows[0].v[0] > 0 ? rows[1].v[0] / rows[0].v[0] : 0.0,
		       rows[0].v[2] > 0 ? rows[1].v[2] / rows[0].v[2] : 0.0);
	printf("\n");
}

static int
load(struct run *run, const char *path)
{
	int rc = tw_lat_read(path, &run->h, &run->rec);

	run->path = path;
	if (rc != 0) {
		fprintf(stderr, "tickwire-report: %s: %s\n", path,
			rc == -EPROTO ? "not a tickwire latency file" : strerror(-rc));
		return -1;
	}
	if (run->h.tsc_hz == 0) {
		fprintf(stderr, "tickwire-report: %s: tsc_hz is 0\n", path);
		return -1;
	}
	run->ns = malloc((run->h.count ? run->h.count : 1) * sizeof(double));
	if (run->ns == NULL)
		return -1;
	for (uint64_t i = 0; i < run->h.count; i++) {
		uint64_t d = run->rec[i].t1 > run->rec[i].t0 ? run->rec[i].t1 - run->rec[i].t0 : 0;

		run->ns[i] = (double)d * 1e9 / (double)run->h.tsc_hz;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct run runs[2];
	struct stream_count *streams = NULL;
	uint64_t n_streams, max_streams = 10;
	int nruns = 0, argi = 1;

	memset(runs, 0, sizeof(runs));
	if (argi + 1 < argc && strcmp(argv[argi], "--streams") == 0) {
		max_streams = strtoull(argv[argi + 1], NULL, 10);
		argi += 2;
	}
	if (argc - argi < 1 || argc - argi > 2 || strcmp(argv[argi], "--help") == 0) {
		fprintf(stderr, "usage: tickwire-report [--streams N] FILE [FILE2]\n"
			"Latency (t1 - t0, ns) percentiles per stream and overall, the fit\n"
			"median = floor + slope x idx; with FILE2, both side by side.\n");
		return 2;
	}
	for (; argi < argc; argi++)
		if (load(&runs[nruns++], argv[argi]) != 0)
			return 1;

	for (int r = 0; r < nruns; r++)
		printf("file %d: %s: %" PRIu64 " records (%" PRIu64 " dropped), %s, tsc %" PRIu64
		       " Hz\n", r + 1, runs[r].path, runs[r].h.count, runs[r].h.dropped,
		       runs[r].h.label[0] ? runs[r].h.label : "-", runs[r].h.tsc_hz);
	printf("latency t1 - t0, ns\n");
	print_header(nruns);
	{
		struct row rows[2] = {0};

		for (int r = 0; r < nruns; r++)
			row_select(&runs[r], -1, 0, &rows[r]);
		print_row("overall", rows, nruns);
		for (int r = 0; r < nruns; r++)
			row_select(&runs[r], TW_LAT_BOOK, 0, &rows[r]);
		print_row("book (all)", rows, nruns);
		for (int r = 0; r < nruns; r++)
			row_select(&runs[r], TW_LAT_TRADE, 0, &rows[r]);
		print_row("trade (all)", rows, nruns);
	}
	n_streams = streams_of(&runs[0], &streams);
	for (uint64_t s = 0; s < n_streams && s < max_streams; s++) {
		struct row rows[2] = {0};
		char label[40];

		snprintf(label, sizeof(label), "%s %" PRId32,
			 streams[s].kind == TW_LAT_TRADE ? "trade" : "book", streams[s].instrument);
		for (int r = 0; r < nruns; r++)
			row_select(&runs[r], streams[s].kind, streams[s].instrument, &rows[r]);
		print_row(label, rows, nruns);
	}
	if (n_streams > max_streams)
		printf("(%" PRIu64 " more streams; --streams N shows more)\n",
		       n_streams - max_streams);
	printf("fit of the per-idx median: median = floor + slope x idx\n");
	for (int r = 0; r < nruns; r++) {
		struct fit f;

		fit_of(&runs[r], &f);
		printf("file %d: floor %.0f ns, slope %.1f ns/idx, %u idx values (max idx %" PRIu64
		       ")\n", r + 1, f.floor, f.slope, f.points, f.max_idx);
	}
	free(streams);
	for (int r = 0; r < nruns; r++) {
		free(runs[r].rec);
		free(runs[r].ns);
	}
	return 0;
}
