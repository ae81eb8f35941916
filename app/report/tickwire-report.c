/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-report: the latency study of tickwire's record files
 * (format: app/tickwire/tw_latency.h; estimators: tw_study.h).
 *
 *   tickwire-report [--streams N] [--json FILE] [--windows K] [--min-count N]
 *                   FILE [FILE2]
 *
 * Prints, per file (with FILE2: the two topologies on the same input side by
 * side, with the ratio FILE2 / FILE1 where it makes sense):
 *   1. the header facts: topology, pacing and speed, records, drops, and the
 *      player's error (the floor of the measurement itself)
 *   2. percentiles p50 .. p99.99 and max per stream kind (overall = book and
 *      trade, t1 - t0; order = tick-to-trade, t3 - t0) and of the N busiest
 *      (instrument, kind) streams
 *   3. the per-message model: median by idx over records with ahead == 0,
 *      and its least-squares line median = floor + slope x idx
 *   4. the floor three ways and a parseable line saying whether they agree
 *   5. latency against ahead (packets ahead on the path)
 *   6. tick-to-trade and its parts
 * and with --json FILE all of it plus the data of tickwire-plots.py.
 * Exit 0; 1 when a file cannot be read, is not a version-2 latency file, or
 * its t0 is a capture time (header flag bit 3: t1 - t0 is no latency);
 * 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tw_report.h"

#define DEFAULT_STREAMS 10
#define DEFAULT_WINDOWS 5
#define DEFAULT_MIN_COUNT 20

static const char usage[] =
	"usage: tickwire-report [--streams N] [--json FILE] [--windows K] [--min-count N]\n"
	"                       FILE [FILE2]\n"
	"The latency study of tickwire --latency-out files: percentiles per stream,\n"
	"the per-message model median = floor + slope x idx (ahead == 0), the floor\n"
	"three ways, latency against packets ahead, tick-to-trade. With FILE2 (the\n"
	"other topology on the same input) both side by side, ratio FILE2/FILE1.\n"
	"  --streams N    the N busiest (instrument, kind) streams (10)\n"
	"  --json FILE    everything, and the plot data of tickwire-plots.py\n"
	"  --windows K    the K densest one-second windows for the floor (5)\n"
	"  --min-count N  records an idx needs to be a point of the fit (20)\n";

/* Why tw_lat_read() refused a file, for the error line. */
static void
diagnose(const char *path, char *why, size_t size, const char **hint)
{
	unsigned char h[TW_LAT_HEADER_SIZE];
	struct stat st;
	FILE *f = fopen(path, "rb");
	size_t got = 0;
	uint32_t version, header_size, record_size;
	uint64_t count, held;

	*hint = "give it a file written by tickwire --latency-out";
	snprintf(why, size, "unreadable");
	if (f == NULL)
		return;
	got = fread(h, 1, sizeof(h), f);
	if (fstat(fileno(f), &st) != 0)
		st.st_size = (off_t)got;
	fclose(f);
	if (got < 8 || memcmp(h, TW_LAT_MAGIC, 5) != 0) {
		snprintf(why, size, "no TWLAT magic");
		return;
	}
	if (got < 24) {
		snprintf(why, size, "%zu bytes, shorter than the %d-byte header", got,
			 TW_LAT_HEADER_SIZE);
		return;
	}
	version = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 |
		  (uint32_t)h[11] << 24;
	header_size = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 |
		      (uint32_t)h[15] << 24;
	record_size = (uint32_t)h[16] | (uint32_t)h[17] << 8 | (uint32_t)h[18] << 16 |
		      (uint32_t)h[19] << 24;
	if (version != TW_LAT_VERSION || memcmp(h, TW_LAT_MAGIC, 8) != 0) {
		snprintf(why, size, "version %" PRIu32 ", this report reads version %d",
			 version, TW_LAT_VERSION);
		*hint = "record it again with this tickwire (--latency-out)";
		return;
	}
	if (header_size != TW_LAT_HEADER_SIZE || record_size != TW_LAT_RECORD_SIZE) {
		snprintf(why, size, "header %" PRIu32 " / record %" PRIu32
			 " bytes, expected %d / %d", header_size, record_size,
			 TW_LAT_HEADER_SIZE, TW_LAT_RECORD_SIZE);
		return;
	}
	if (got < TW_LAT_HEADER_SIZE) {
		snprintf(why, size, "%zu bytes, shorter than the %d-byte header", got,
			 TW_LAT_HEADER_SIZE);
		*hint = "was tickwire stopped before it wrote the file?";
		return;
	}
	count = 0;
	for (int i = 7; i >= 0; i--)
		count = count << 8 | h[32 + i];
	held = ((uint64_t)st.st_size - TW_LAT_HEADER_SIZE) / TW_LAT_RECORD_SIZE;
	snprintf(why, size, "truncated: the header says %" PRIu64 " records, the file holds %"
		 PRIu64, count, held);
	*hint = "was tickwire stopped before it wrote the file?";
}

static int
load(struct tw_report_run *run, const char *path)
{
	int rc = tw_lat_read(path, &run->h, &run->rec);

	run->path = path;
	if (rc == -EPROTO) {
		char why[160];
		const char *hint;

		diagnose(path, why, sizeof(why), &hint);
		fprintf(stderr, "tickwire-report: %s: not a version-2 latency file (%s); hint: %s\n",
			path, why, hint);
		return -1;
	}
	if (rc != 0) {
		fprintf(stderr, "tickwire-report: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	if (run->h.flags & TW_LAT_FLAG_CAPTURE_T0) {
		fprintf(stderr, "tickwire-report: %s: t0 is a capture time (--rx-clock nic on "
			"net_pcap), not a clock: t1 - t0 is no latency; hint: record with "
			"--rx-clock tsc\n", path);
		return -1;
	}
	if (run->h.tsc_hz == 0) {
		fprintf(stderr, "tickwire-report: %s: not a version-2 latency file (tsc_hz is 0); "
			"hint: the recording tickwire did not know its clock rate\n", path);
		return -1;
	}
	return 0;
}

/* A number for the tables: "-" when missing. */
static const char *
num(char *buf, size_t size, double v, int decimals)
{
	if (tw_study_is_missing(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.*f", decimals, v);
	return buf;
}

static const char *
ratio_text(char *buf, size_t size, double one, double two)
{
	return num(buf, size, tw_report_ratio(one, two), 2);
}

static void
print_facts(const struct tw_report *rep)
{
	for (int r = 0; r < rep->n_runs; r++) {
		const struct tw_report_run *run = &rep->runs[r];
		const struct tw_lat_header *h = &run->h;
		char speed[32], load[32], peak[32];
		double peak_pps = run->floors.n_dense > 0 ? (double)run->floors.dense[0].packets : NAN;

		printf("file %d: %s: %" PRIu64 " records (%" PRIu64 " dropped), %s, tsc %" PRIu64
		       " Hz\n", r + 1, run->path, h->count, h->dropped,
		       h->label[0] ? h->label : "-", h->tsc_hz);
		printf("  topology %s, %s, speed %s, t0 from the %s; rx drops %" PRIu64
		       ", player packets %" PRIu64 "\n", h->label[0] ? h->label : "-",
		       (h->flags & TW_LAT_FLAG_PACED) ? "paced" : "unpaced",
		       tw_report_speed(run, speed, sizeof(speed)),
		       (h->flags & TW_LAT_FLAG_NIC_T0) ? "nic" : "tsc", h->rx_drops,
		       h->player_packets);
		if (h->flags & TW_LAT_FLAG_PACED)
			printf("  player error ns (the floor of the measurement): p50 %" PRIu64
			       ", p99 %" PRIu64 ", p99.9 %" PRIu64 ", max %" PRIu64 "\n",
			       h->player_err_ns[0], h->player_err_ns[1], h->player_err_ns[2],
			       h->player_err_ns[3]);
		else
			printf("  unpaced: the replay handed over whole captures at once, so the "
			       "latencies hold replay backlog (run with --pace SPEED)\n");
		printf("  capture %.3f s, %" PRIu64 " packets, load %s packets/s, densest second %s"
		       " packets\n", run->series.span_s, run->series.packets,
		       num(load, sizeof(load), tw_report_load(run), 0),
		       num(peak, sizeof(peak), peak_pps, 0));
	}
}

static void
print_pct_header(const char *title, int runs)
{
	printf("%-22s", title);
	for (int r = 0; r < runs; r++) {
		printf(" %9s", "count");
		for (int i = 0; i < TW_STUDY_N_PCT; i++)
			printf(" %9s", tw_study_pct_name[i]);
		if (r + 1 < runs)
			printf(" |");
	}
	if (runs == 2)
		printf(" | %7s %7s", "p50 2/1", "p99 2/1");
	printf("\n");
}

static void
print_pct_row(const char *label, const struct tw_study_row *const rows[2], int runs)
{
	char b[32], c[32];

	printf("%-22s", label);
	for (int r = 0; r < runs; r++) {
		printf(" %9" PRIu64, rows[r]->count);
		for (int i = 0; i < TW_STUDY_N_PCT; i++)
			printf(" %9s", num(b, sizeof(b), rows[r]->v[i], 0));
		if (r + 1 < runs)
			printf(" |");
	}
	if (runs == 2)
		printf(" | %7s %7s", ratio_text(b, sizeof(b), rows[0]->v[0], rows[1]->v[0]),
		       ratio_text(c, sizeof(c), rows[0]->v[2], rows[1]->v[2]));
	printf("\n");
}

static void
print_percentiles(const struct tw_report *rep)
{
	const struct tw_study_row *rows[2];

	printf("\nlatency, ns (book, trade: t1 - t0; order: t3 - t0; overall: book and trade)\n");
	print_pct_header("stream", rep->n_runs);
	for (int k = 0; k < TW_REPORT_N_KINDS; k++) {
		for (int r = 0; r < rep->n_runs; r++)
			rows[r] = &rep->runs[r].kinds[k];
		print_pct_row(tw_report_kind_name[k], rows, rep->n_runs);
	}
	for (uint64_t i = 0; i < rep->shown; i++) {
		char label[40];

		tw_report_stream_label(&rep->streams[i], label, sizeof(label));
		for (int r = 0; r < rep->n_runs; r++)
			rows[r] = &rep->runs[r].stream_rows[i];
		print_pct_row(label, rows, rep->n_runs);
	}
	if (rep->n_streams > rep->shown)
		printf("(%" PRIu64 " more streams; --streams N shows more)\n",
		       rep->n_streams - rep->shown);
}

static const struct tw_study_rung *
rung_of(const struct tw_study_model *m, uint32_t idx)
{
	uint32_t lo = 0, hi = m->n_rungs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->rungs[mid].idx == idx)
			return &m->rungs[mid];
		if (m->rungs[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void
print_model(const struct tw_report *rep)
{
	uint32_t max_idx = 0;
	uint64_t unused = 0;

	printf("\nper-message model: median latency by idx over book/trade records with "
	       "ahead == 0; fit over idx with >= %" PRIu64 " records\n", rep->opt.min_count);
	printf("%5s", "idx");
	for (int r = 0; r < rep->n_runs; r++)
		printf(" %9s %9s %9s%s", "count", "median", "fit", r + 1 < rep->n_runs ? " |" : "");
	printf("\n");
	for (int r = 0; r < rep->n_runs; r++) {
		const struct tw_study_model *m = &rep->runs[r].model;

		if (m->n_rungs > 0 && m->rungs[m->n_rungs - 1].idx > max_idx)
			max_idx = m->rungs[m->n_rungs - 1].idx;
	}
	for (uint32_t idx = 0; idx <= max_idx; idx++) {
		const struct tw_study_rung *g[2] = {NULL, NULL};
		bool any_used = false;

		for (int r = 0; r < rep->n_runs; r++) {
			g[r] = rung_of(&rep->runs[r].model, idx);
			any_used |= g[r] != NULL && g[r]->used;
			unused += g[r] != NULL && !g[r]->used;
		}
		if (!any_used)
			continue;
		printf("%5" PRIu32, idx);
		for (int r = 0; r < rep->n_runs; r++) {
			const struct tw_study_model *m = &rep->runs[r].model;
			char b[32], c[32];

			if (g[r] == NULL || !g[r]->used)
				printf(" %9" PRIu64 " %9s %9s", g[r] != NULL ? g[r]->count : 0, "-",
				       "-");
			else
				printf(" %9" PRIu64 " %9s %9s", g[r]->count,
				       num(b, sizeof(b), g[r]->median_ns, 0),
				       num(c, sizeof(c), m->floor_ns + m->slope_ns * idx, 0));
			if (r + 1 < rep->n_runs)
				printf(" |");
		}
		printf("\n");
	}
	if (unused > 0)
		printf("(%" PRIu64 " idx rungs with fewer than %" PRIu64
		       " records are not points of the fit; the JSON has them all)\n",
		       unused, rep->opt.min_count);
	for (int r = 0; r < rep->n_runs; r++) {
		const struct tw_study_model *m = &rep->runs[r].model;
		char b[32], c[32], d[32];

		printf("file %d: floor %s ns, slope %s ns/idx, R^2 %s, %" PRIu32 " points\n",
		       r + 1, num(b, sizeof(b), m->floor_ns, 0), num(c, sizeof(c), m->slope_ns, 1),
		       num(d, sizeof(d), m->r2, 4), m->points);
	}
}

static void
print_floors(const struct tw_report *rep)
{
	static const char *const name[3] = {
		"(a) fit intercept", "(b) ahead 0, idx 0", "(c) dense n_msgs 1"};

	printf("\nthe floor three ways, ns (medians; n = records, for (a) the points of the fit)\n");
	printf("%-22s", "estimate");
	for (int r = 0; r < rep->n_runs; r++)
		printf(" %9s %9s%s", "ns", "n", r + 1 < rep->n_runs ? " |" : "");
	if (rep->n_runs == 2)
		printf(" | %7s", "2/1");
	printf("\n");
	for (int e = 0; e < 3; e++) {
		double v[2] = {NAN, NAN};
		char b[32];

		printf("%-22s", name[e]);
		for (int r = 0; r < rep->n_runs; r++) {
			const struct tw_study_floors *f = &rep->runs[r].floors;
			uint64_t n = e == 0 ? rep->runs[r].model.points :
				     e == 1 ? f->idx0_count : f->dense_count;

			v[r] = e == 0 ? f->fit_ns : e == 1 ? f->idx0_ns : f->dense_ns;
			printf(" %9s %9" PRIu64 "%s", num(b, sizeof(b), v[r], 0), n,
			       r + 1 < rep->n_runs ? " |" : "");
		}
		if (rep->n_runs == 2)
			printf(" | %7s", ratio_text(b, sizeof(b), v[0], v[1]));
		printf("\n");
	}
	for (int r = 0; r < rep->n_runs; r++) {
		const struct tw_study_floors *f = &rep->runs[r].floors;

		printf("file %d dense windows (capture s: packets):", r + 1);
		if (f->n_dense == 0)
			printf(" -");
		for (uint32_t w = 0; w < f->n_dense; w++)
			printf(" %.0f: %" PRIu64, f->dense[w].start_s, f->dense[w].packets);
		if (!(rep->runs[r].h.flags & TW_LAT_FLAG_PACED) || rep->runs[r].h.speed_milli == 0)
			printf(" (unpaced: capture time is arrival time, the windows hold backlog)");
		printf("\n");
	}
	for (int r = 0; r < rep->n_runs; r++) {
		const struct tw_study_floors *f = &rep->runs[r].floors;
		char a[32], b[32], c[32], d[32];

		printf("floor_agreement file=%d fit_ns=%s idx0_ns=%s dense_ns=%s spread=%s agree=%s\n",
		       r + 1, num(a, sizeof(a), f->fit_ns, 0), num(b, sizeof(b), f->idx0_ns, 0),
		       num(c, sizeof(c), f->dense_ns, 0), num(d, sizeof(d), f->spread, 3),
		       f->agree < 0 ? "unknown" : f->agree ? "yes" : "no");
	}
}

static void
print_ahead(const struct tw_report *rep)
{
	printf("\nlatency against ahead (packets ahead on the path), book and trade, ns\n");
	printf("%-8s", "ahead");
	for (int r = 0; r < rep->n_runs; r++)
		printf(" %9s %9s %9s%s", "count", "p50", "p99", r + 1 < rep->n_runs ? " |" : "");
	if (rep->n_runs == 2)
		printf(" | %7s %7s", "p50 2/1", "p99 2/1");
	printf("\n");
	for (unsigned int b = 0; b < TW_STUDY_N_AHEAD; b++) {
		const struct tw_study_ahead_row *a = &rep->runs[0].ahead[b];
		char label[24], x[32], y[32];

		if (a->hi == UINT32_MAX)
			snprintf(label, sizeof(label), "%" PRIu32 "+", a->lo);
		else if (a->hi == a->lo)
			snprintf(label, sizeof(label), "%" PRIu32, a->lo);
		else
			snprintf(label, sizeof(label), "%" PRIu32 "-%" PRIu32, a->lo, a->hi);
		printf("%-8s", label);
		for (int r = 0; r < rep->n_runs; r++) {
			a = &rep->runs[r].ahead[b];
			printf(" %9" PRIu64 " %9s %9s%s", a->count, num(x, sizeof(x), a->median_ns, 0),
			       num(y, sizeof(y), a->p99_ns, 0), r + 1 < rep->n_runs ? " |" : "");
		}
		if (rep->n_runs == 2)
			printf(" | %7s %7s",
			       ratio_text(x, sizeof(x), rep->runs[0].ahead[b].median_ns,
					  rep->runs[1].ahead[b].median_ns),
			       ratio_text(y, sizeof(y), rep->runs[0].ahead[b].p99_ns,
					  rep->runs[1].ahead[b].p99_ns));
		printf("\n");
	}
	printf("found the hand-off empty (ahead == 0):");
	for (int r = 0; r < rep->n_runs; r++) {
		char b[32];

		printf(" file %d %s%%", r + 1,
		       num(b, sizeof(b), rep->runs[r].share_zero * 100.0, 1));
	}
	printf("\n");
}

/* A table of named rows, one column group per run. */
static void
print_rows(const char *title, const char *const *name, int n_rows,
	   const struct tw_study_row *(*row)(const struct tw_report_run *run, int i),
	   const struct tw_report *rep)
{
	const struct tw_study_row *rows[2];

	printf("\n%s\n", title);
	print_pct_header("part", rep->n_runs);
	for (int p = 0; p < n_rows; p++) {
		for (int r = 0; r < rep->n_runs; r++)
			rows[r] = row(&rep->runs[r], p);
		print_pct_row(name[p], rows, rep->n_runs);
	}
}

static const struct tw_study_row *
parts_row(const struct tw_report_run *run, int i)
{
	const struct tw_study_parts *t = &run->parts;

	return i == 0 ? &t->total : i == 1 ? &t->to_decode : i == 2 ? &t->decode : &t->signal;
}

static const struct tw_study_row *
t2t_row(const struct tw_report_run *run, int i)
{
	return i == 0 ? &run->t2t.total : &run->t2t.part[i - 1];
}

static void
print_parts(const struct tw_report *rep)
{
	static const char *const name[4] = {
		"t1-t0 total", "t0->decode group", "decode group->t1", "t2-t1 signal"};

	print_rows("where the time goes (book and trade, ahead == 0), ns: t0 -> the decode "
		   "group takes the packet (rx path, hand-off) -> t1 published -> t2 decided",
		   name, 4, parts_row, rep);
}

static void
print_tick_to_trade(const struct tw_report *rep)
{
	static const char *const name[4] = {
		"t3-t0 tick-to-trade", "t1-t0 book", "t2-t1 signal", "t3-t2 order out"};

	print_rows("tick-to-trade (orders), ns", name, 4, t2t_row, rep);
}

static int
parse_count(const char *opt, const char *arg, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || v > max) {
		fprintf(stderr, "tickwire-report: %s: bad number '%s'\n", opt, arg);
		return -1;
	}
	*out = v;
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"streams", required_argument, NULL, 's'},
		{"json", required_argument, NULL, 'j'},
		{"windows", required_argument, NULL, 'w'},
		{"min-count", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct tw_report rep;
	uint64_t v;
	int c, rc;

	memset(&rep, 0, sizeof(rep));
	rep.opt.streams = DEFAULT_STREAMS;
	rep.opt.windows = DEFAULT_WINDOWS;
	rep.opt.min_count = DEFAULT_MIN_COUNT;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_count("--streams", optarg, UINT32_MAX, &rep.opt.streams) != 0)
				return 2;
			break;
		case 'j':
			rep.opt.json = optarg;
			break;
		case 'w':
			if (parse_count("--windows", optarg, 100000, &v) != 0)
				return 2;
			rep.opt.windows = (uint32_t)v;
			break;
		case 'm':
			if (parse_count("--min-count", optarg, UINT32_MAX, &rep.opt.min_count) != 0)
				return 2;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind < 1 || argc - optind > 2) {
		fputs(usage, stderr);
		return 2;
	}
	for (; optind < argc; optind++) {
		if (load(&rep.runs[rep.n_runs++], argv[optind]) != 0) {
			tw_report_free(&rep);
			return 1;
		}
	}
	rc = tw_report_study(&rep);
	if (rc != 0) {
		fprintf(stderr, "tickwire-report: %s\n", strerror(-rc));
		tw_report_free(&rep);
		return 1;
	}
	if (rep.n_runs == 2)
		printf("two runs on the same input; ratios are file 2 / file 1\n");
	print_facts(&rep);
	print_percentiles(&rep);
	print_model(&rep);
	print_floors(&rep);
	print_ahead(&rep);
	print_parts(&rep);
	print_tick_to_trade(&rep);
	if (rep.opt.json != NULL) {
		rc = tw_report_json(&rep, rep.opt.json);
		if (rc != 0) {
			fprintf(stderr, "tickwire-report: %s: %s\n", rep.opt.json, strerror(-rc));
			tw_report_free(&rep);
			return 1;
		}
	}
	tw_report_free(&rep);
	return 0;
}
