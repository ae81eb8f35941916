/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * bench_actor's shared parts: clock calibration, pinning, percentiles and
 * the report (text as each section completes, JSON at the end).
 *
 * The report lives in fixed arrays: bounded, and nothing to free. A table
 * that outgrows them loses rows with a warning rather than failing a run.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

struct bench_clock bench_clock;
struct bench_opts bench_opts;

uint64_t bench_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void bench_die(int err, const char *what, const char *hint)
{
	fprintf(stderr, "bench_actor: %s: %s\n", what, err != 0 ? strerror(err) : "failed");
	if (hint != NULL)
		fprintf(stderr, "bench_actor: hint: %s\n", hint);
	exit(1);
}

void *bench_alloc(size_t bytes)
{
	void *p = calloc(1, bytes);

	if (p == NULL)
		bench_die(ENOMEM, "allocating sample buffers",
			  "run with --quick, or free memory on this machine");
	return p;
}

/* ------------------------------------------------------------------------ */
/* Clock                                                                    */
/* ------------------------------------------------------------------------ */

/* One TSC/monotonic pair, the TSC read bracketed as tightly as possible. */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	*tsc = *ns = 0;
	for (i = 0; i < 16; i++) {
		uint64_t a = bench_mono_ns();
		uint64_t t = bench_tsc();
		uint64_t b = bench_mono_ns();

		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

static double calibrate_once(void)
{
	struct timespec pause = {0, 150 * 1000 * 1000};
	uint64_t t0, n0, t1, n1;

	clock_pair(&t0, &n0);
	nanosleep(&pause, NULL);
	clock_pair(&t1, &n1);
	return (double)(t1 - t0) / (double)(n1 - n0);
}

void bench_clock_calibrate(void)
{
	double a = calibrate_once();
	double b = calibrate_once();
	uint64_t prev, step = UINT64_MAX;
	double *pairs;
	int i;

	if (!(a > 0) || fabs(a - b) / a > 0.002) {
		/* A third try decides; a VM migrating between hosts may disagree once. */
		a = b;
		b = calibrate_once();
		if (!(a > 0) || fabs(a - b) / a > 0.002)
			bench_die(0, "TSC calibration: two 150 ms measurements disagree by more "
				  "than 0.2 %",
				  "the TSC is not constant on this machine (check 'constant_tsc' "
				  "and 'nonstop_tsc' in /proc/cpuinfo)");
	}
	bench_clock.ticks_per_ns = (a + b) / 2;

	prev = bench_tsc();
	for (i = 0; i < 200000; i++) {
		uint64_t t = bench_tsc();

		if (t != prev && t - prev < step)
			step = t - prev;
		prev = t;
	}
	bench_clock.step_ns = bench_ns(step);

	pairs = bench_alloc(10001 * sizeof(*pairs));
	for (i = 0; i < 10001; i++) {
		uint64_t t0 = bench_tsc_begin();
		uint64_t t1 = bench_tsc_end();

		pairs[i] = bench_ns(t1 - t0);
	}
	bench_clock.pair_ns = bench_median(pairs, 10001);
	free(pairs);
}

/* ------------------------------------------------------------------------ */
/* Options, threads                                                         */
/* ------------------------------------------------------------------------ */

uint64_t bench_iters(uint64_t full, uint64_t min)
{
	uint64_t n = (uint64_t)((double)full * bench_opts.scale);

	return n < min ? min : n;
}

static void set_affinity(const cpu_set_t *set, const char *what)
{
	static int warned;
	int rc = pthread_setaffinity_np(pthread_self(), sizeof(*set), set);

	if (rc != 0 && !warned) {
		warned = 1;
		fprintf(stderr, "bench_actor: warning: cannot pin to %s: %s; running unpinned, "
			"numbers are less stable (the benchmark expects cpus 0 and 1)\n",
			what, strerror(rc));
	}
}

void bench_pin(int cpu)
{
	cpu_set_t set;
	char what[32];

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	snprintf(what, sizeof(what), "cpu %d", cpu);
	set_affinity(&set, what);
}

void bench_unpin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	set_affinity(&set, "cpus 0-1");
}

struct thread_start {
	void *(*fn)(void *);
	void *arg;
	int cpu;
};

static void *thread_trampoline(void *p)
{
	struct thread_start s = *(struct thread_start *)p;

	free(p);
	bench_pin(s.cpu);
	return s.fn(s.arg);
}

void bench_thread_start(pthread_t *th, int cpu, void *(*fn)(void *), void *arg)
{
	struct thread_start *s = bench_alloc(sizeof(*s));
	int rc;

	s->fn = fn;
	s->arg = arg;
	s->cpu = cpu;
	rc = pthread_create(th, NULL, thread_trampoline, s);
	if (rc != 0)
		bench_die(rc, "pthread_create", "lower the thread count (ulimit -u?)");
}

void bench_thread_join(pthread_t th)
{
	int rc = pthread_join(th, NULL);

	if (rc != 0)
		bench_die(rc, "pthread_join", NULL);
}

static struct act_actor *actor_create_start(const struct act_actor_opts *o)
{
	struct act_actor *a = act_actor_create(o);
	int rc;

	if (a == NULL)
		bench_die(errno, "act_actor_create", "too many threads or too little memory?");
	rc = act_actor_start(a);
	if (rc != 0)
		bench_die(-rc, "act_actor_start", NULL);
	return a;
}

struct act_actor *bench_actor(const char *name, const act_handler_fn *handlers,
			      uint32_t handler_count, void *state, struct act_group *g,
			      const struct act_group_opts *own, bool group_private)
{
	struct act_actor_opts o = {
		.name = name,
		.handlers = handlers,
		.handler_count = handler_count,
		.state = state,
		.group = g,
		.mailbox = own,
		.group_private = group_private,
		.lock_release_store = bench_opts.release_store,
	};

	return actor_create_start(&o);
}

struct act_actor *bench_actor_biased(const char *name, const act_handler_fn *handlers,
				     uint32_t handler_count, void *state, struct act_group *g)
{
	struct act_actor_opts o = {.name = name, .handlers = handlers,
				   .handler_count = handler_count, .state = state, .group = g,
				   .lock_bias = true};

	return actor_create_start(&o);
}

struct act_group *bench_bound_group(const char *name, enum act_queue_type q)
{
	struct act_group_opts o = {.name = name, .queue = q, .cpu = -1};
	struct act_group *g = act_group_create(&o);
	int rc;

	if (g == NULL)
		bench_die(errno, "act_group_create", NULL);
	rc = act_group_bind(g);
	if (rc != 0)
		bench_die(-rc, "act_group_bind", NULL);
	return g;
}

/* ------------------------------------------------------------------------ */
/* Samples                                                                  */
/* ------------------------------------------------------------------------ */

void bench_samples_init(struct bench_samples *s, size_t cap)
{
	s->ticks = bench_alloc((cap != 0 ? cap : 1) * sizeof(*s->ticks));
	s->n = 0;
	s->cap = cap;
}

void bench_samples_free(struct bench_samples *s)
{
	free(s->ticks);
	s->ticks = NULL;
	s->n = s->cap = 0;
}

/* LSD radix sort, 16 bits a pass: 2^22 samples sort in tens of ms. */
static void sort_u64(uint64_t *v, size_t n)
{
	uint64_t *tmp, *src = v, *dst;
	size_t *count;
	uint64_t all = 0;
	unsigned shift;

	for (size_t i = 0; i < n; i++)
		all |= v[i];
	tmp = bench_alloc((n != 0 ? n : 1) * sizeof(*tmp));
	count = bench_alloc(65536 * sizeof(*count));
	dst = tmp;
	for (shift = 0; shift < 64 && (all >> shift) != 0; shift += 16) {
		size_t sum = 0;

		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xffff]++;
		for (size_t b = 0; b < 65536; b++) {
			size_t c = count[b];

			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(count);
	free(tmp);
}

static double rank_ns(const uint64_t *sorted, size_t n, double p)
{
	size_t rank = (size_t)ceil(p * (double)n);

	if (rank == 0)
		rank = 1;
	if (rank > n)
		rank = n;
	return bench_ns(sorted[rank - 1]);
}

void bench_samples_pct(struct bench_samples *s, struct bench_pct *out)
{
	memset(out, 0, sizeof(*out));
	if (s->n == 0)
		return;
	sort_u64(s->ticks, s->n);
	out->n = s->n;
	out->p50 = rank_ns(s->ticks, s->n, 0.50);
	out->p90 = rank_ns(s->ticks, s->n, 0.90);
	out->p99 = rank_ns(s->ticks, s->n, 0.99);
	out->p999 = rank_ns(s->ticks, s->n, 0.999);
	out->p9999 = rank_ns(s->ticks, s->n, 0.9999);
	out->max = bench_ns(s->ticks[s->n - 1]);
}

double bench_p50_ns(const uint64_t *ticks, size_t n)
{
	struct bench_samples c;
	struct bench_pct p;

	if (n == 0)
		return NAN;
	bench_samples_init(&c, n);
	memcpy(c.ticks, ticks, n * sizeof(*ticks));
	c.n = n;
	bench_samples_pct(&c, &p);
	bench_samples_free(&c);
	return p.p50;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_median(const double *v, unsigned n)
{
	double *c, m;

	if (n == 0)
		return NAN;
	c = bench_alloc(n * sizeof(*c));
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

double bench_spread_pct(const double *v, unsigned n)
{
	double lo = INFINITY, hi = -INFINITY, m = bench_median(v, n);
	unsigned i;

	if (n < 2 || !(m > 0))
		return NAN;
	for (i = 0; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	return 100.0 * (hi - lo) / m;
}

double bench_ratio_median(const double *a, const double *b, unsigned n)
{
	double r[BENCH_MAX_ROUNDS];
	unsigned i;

	if (n > BENCH_MAX_ROUNDS)
		n = BENCH_MAX_ROUNDS;
	for (i = 0; i < n; i++)
		r[i] = a[i] / b[i];
	return bench_median(r, n);
}

const char *bench_queue_name(enum act_queue_type q)
{
	static const char *const names[ACT_QUEUE_COUNT_] = {
		"bqueue", "batched", "sharded", "lockfree",
	};

	return (unsigned)q < ACT_QUEUE_COUNT_ ? names[q] : "?";
}

/* ------------------------------------------------------------------------ */
/* Report                                                                   */
/* ------------------------------------------------------------------------ */

#define MAX_TABLES 8
#define MAX_SECTIONS 12
#define MAX_ROWS 40
#define MAX_TARGETS 16
#define MAX_NOTES 24

const struct bench_col bench_lat_cols[] = {
	{"n", "n", 0},
	{"p50_ns", "p50", 1},
	{"p90_ns", "p90", 1},
	{"p99_ns", "p99", 1},
	{"p999_ns", "p99.9", 1},
	{"max_ns", "max", 0},
	{"amortized_ns", "amort", 2},
	{"spread_pct", "spread%", 0},
};

const struct bench_col bench_latr_cols[] = {
	{"n", "n", 0},
	{"p50_ns", "p50", 1},
	{"p90_ns", "p90", 1},
	{"p99_ns", "p99", 1},
	{"p999_ns", "p99.9", 1},
	{"max_ns", "max", 0},
	{"amortized_ns", "amort", 2},
	{"spread_pct", "spread%", 0},
	{"ratio", "ratio", 2},
};

struct row_data {
	char name[64];
	char tag[48];
	double vals[BENCH_MAX_COLS];
};

struct bench_section {
	char title[160];
	struct bench_col cols[BENCH_MAX_COLS];
	unsigned ncols;
	struct row_data rows[MAX_ROWS];
	unsigned nrows;
	bool printed;
};

struct target_data {
	char what[200];
	double value, limit;
	bool at_least, met;
};

struct bench_table {
	int id;
	char title[160];
	struct bench_section sections[MAX_SECTIONS];
	unsigned nsections;
	struct target_data targets[MAX_TARGETS];
	unsigned ntargets;
	char notes[MAX_NOTES][320];
	unsigned nnotes;
	double load_start, load_end;
	double seconds;
	long invol_switches;
	uint64_t start_ns;
	long start_invol;
	bool done;
};

static struct bench_table tables[MAX_TABLES];
static unsigned ntables;

static double load_average(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = NAN;

	if (f != NULL) {
		if (fscanf(f, "%lf", &l) != 1)
			l = NAN;
		fclose(f);
	}
	return l;
}

static long invol_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return ru.ru_nivcsw;
}

struct bench_table *bench_table_begin(int id, const char *title)
{
	struct bench_table *t;

	if (ntables == MAX_TABLES)
		bench_die(0, "too many tables", NULL);
	t = &tables[ntables++];
	memset(t, 0, sizeof(*t));
	t->id = id;
	snprintf(t->title, sizeof(t->title), "%s", title);
	t->load_start = load_average();
	t->start_ns = bench_mono_ns();
	t->start_invol = invol_switches();
	printf("\n== Table %d. %s ==\n", id, title);
	fflush(stdout);
	return t;
}

static void format_val(char *buf, size_t len, double v, int precision)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, v > 0 ? "inf" : "-inf");
	else
		snprintf(buf, len, "%.*f", precision, v);
}

static void print_section(struct bench_section *s)
{
	int name_w = 4, w[BENCH_MAX_COLS];
	char buf[64];
	unsigned r, c;

	if (s->printed)
		return;
	s->printed = true;
	for (r = 0; r < s->nrows; r++)
		if ((int)strlen(s->rows[r].name) > name_w)
			name_w = (int)strlen(s->rows[r].name);
	for (c = 0; c < s->ncols; c++) {
		w[c] = (int)strlen(s->cols[c].header);
		for (r = 0; r < s->nrows; r++) {
			format_val(buf, sizeof(buf), s->rows[r].vals[c], s->cols[c].precision);
			if ((int)strlen(buf) > w[c])
				w[c] = (int)strlen(buf);
		}
	}
	printf("\n  %s\n  %-*s", s->title, name_w, "");
	for (c = 0; c < s->ncols; c++)
		printf("  %*s", w[c], s->cols[c].header);
	printf("\n");
	for (r = 0; r < s->nrows; r++) {
		printf("  %-*s", name_w, s->rows[r].name);
		for (c = 0; c < s->ncols; c++) {
			format_val(buf, sizeof(buf), s->rows[r].vals[c], s->cols[c].precision);
			printf("  %*s", w[c], buf);
		}
		if (s->rows[r].tag[0] != '\0')
			printf("  %s", s->rows[r].tag);
		printf("\n");
	}
	fflush(stdout);
}

struct bench_section *bench_section(struct bench_table *t, const char *title,
				    const struct bench_col *cols, unsigned ncols)
{
	struct bench_section *s;

	if (t->nsections > 0)
		print_section(&t->sections[t->nsections - 1]);
	if (t->nsections == MAX_SECTIONS || ncols > BENCH_MAX_COLS)
		bench_die(0, "report: too many sections or columns", NULL);
	s = &t->sections[t->nsections++];
	memset(s, 0, sizeof(*s));
	snprintf(s->title, sizeof(s->title), "%s", title);
	memcpy(s->cols, cols, ncols * sizeof(*cols));
	s->ncols = ncols;
	return s;
}

void bench_row(struct bench_section *s, const char *name, const double *vals, const char *tag)
{
	struct row_data *r;

	if (s->nrows == MAX_ROWS) {
		fprintf(stderr, "bench_actor: warning: section '%s' is full; row '%s' dropped\n",
			s->title, name);
		return;
	}
	r = &s->rows[s->nrows++];
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->tag, sizeof(r->tag), "%s", tag != NULL ? tag : "");
	memcpy(r->vals, vals, s->ncols * sizeof(*vals));
}

void bench_lat_vals(double *vals, const struct bench_pct *p, double amortized_ns,
		    double spread_pct)
{
	vals[0] = (double)p->n;
	vals[1] = p->n != 0 ? p->p50 : NAN;
	vals[2] = p->n != 0 ? p->p90 : NAN;
	vals[3] = p->n != 0 ? p->p99 : NAN;
	vals[4] = p->n != 0 ? p->p999 : NAN;
	vals[5] = p->n != 0 ? p->max : NAN;
	vals[6] = amortized_ns;
	vals[7] = spread_pct;
}

bool bench_target(struct bench_table *t, const char *what, double value, double limit,
		  bool at_least)
{
	struct target_data *d;

	if (t->ntargets == MAX_TARGETS)
		bench_die(0, "report: too many targets", NULL);
	d = &t->targets[t->ntargets++];
	snprintf(d->what, sizeof(d->what), "%s", what);
	d->value = value;
	d->limit = limit;
	d->at_least = at_least;
	d->met = !isnan(value) && (at_least ? value >= limit : value <= limit);
	return d->met;
}

void bench_note(struct bench_table *t, const char *fmt, ...)
{
	va_list ap;

	if (t->nnotes == MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(t->notes[t->nnotes++], sizeof(t->notes[0]), fmt, ap);
	va_end(ap);
}

static void print_target(const struct target_data *d, const char *indent)
{
	char v[32];

	format_val(v, sizeof(v), d->value, 2);
	printf("%s[%s] %s %s %.2f: measured %s\n", indent, d->met ? " met  " : "MISSED", d->what,
	       d->at_least ? ">=" : "<=", d->limit, v);
}

void bench_table_end(struct bench_table *t)
{
	unsigned i;

	for (i = 0; i < t->nsections; i++)
		print_section(&t->sections[i]);
	t->seconds = (double)(bench_mono_ns() - t->start_ns) / 1e9;
	t->load_end = load_average();
	t->invol_switches = invol_switches() - t->start_invol;
	if (t->ntargets != 0)
		printf("\n  targets (issue 3):\n");
	for (i = 0; i < t->ntargets; i++)
		print_target(&t->targets[i], "    ");
	if (t->nnotes != 0)
		printf("\n");
	for (i = 0; i < t->nnotes; i++)
		printf("  note: %s\n", t->notes[i]);
	printf("  (table %d took %.1f s; 1-min load average %.2f -> %.2f; %ld involuntary "
	       "context switches)\n", t->id, t->seconds, t->load_start, t->load_end,
	       t->invol_switches);
	t->done = true;
	fflush(stdout);
}

void bench_report_print_summary(void)
{
	unsigned i, j, met = 0, all = 0;

	printf("\n== Summary of the targets of issue 3 ==\n");
	for (i = 0; i < ntables; i++) {
		for (j = 0; j < tables[i].ntargets; j++) {
			printf("  table %d ", tables[i].id);
			print_target(&tables[i].targets[j], "");
			met += tables[i].targets[j].met;
			all++;
		}
	}
	printf("  %u of %u targets met\n", met, all);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.10g", v);
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
			colon += 2;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
}

static void json_section(FILE *f, const struct bench_section *s)
{
	unsigned r, c;

	fprintf(f, "{\"title\": ");
	json_str(f, s->title);
	fprintf(f, ", \"columns\": [");
	for (c = 0; c < s->ncols; c++) {
		fprintf(f, "%s", c ? ", " : "");
		json_str(f, s->cols[c].key);
	}
	fprintf(f, "],\n       \"rows\": [");
	for (r = 0; r < s->nrows; r++) {
		fprintf(f, "%s\n        {\"name\": ", r ? "," : "");
		json_str(f, s->rows[r].name);
		fprintf(f, ", \"tag\": ");
		json_str(f, s->rows[r].tag);
		for (c = 0; c < s->ncols; c++) {
			fprintf(f, ", ");
			json_str(f, s->cols[c].key);
			fprintf(f, ": ");
			json_num(f, s->rows[r].vals[c]);
		}
		fprintf(f, "}");
	}
	fprintf(f, "]}");
}

static void json_table(FILE *f, const struct bench_table *t)
{
	unsigned i;

	fprintf(f, "{\"id\": %d, \"title\": ", t->id);
	json_str(f, t->title);
	fprintf(f, ", \"seconds\": ");
	json_num(f, t->seconds);
	fprintf(f, ", \"load_start\": ");
	json_num(f, t->load_start);
	fprintf(f, ", \"load_end\": ");
	json_num(f, t->load_end);
	fprintf(f, ", \"involuntary_context_switches\": %ld,\n    \"sections\": [",
		t->invol_switches);
	for (i = 0; i < t->nsections; i++) {
		fprintf(f, "%s\n      ", i ? "," : "");
		json_section(f, &t->sections[i]);
	}
	fprintf(f, "],\n    \"targets\": [");
	for (i = 0; i < t->ntargets; i++) {
		const struct target_data *d = &t->targets[i];

		fprintf(f, "%s\n      {\"what\": ", i ? "," : "");
		json_str(f, d->what);
		fprintf(f, ", \"op\": \"%s\", \"limit\": ", d->at_least ? ">=" : "<=");
		json_num(f, d->limit);
		fprintf(f, ", \"value\": ");
		json_num(f, d->value);
		fprintf(f, ", \"met\": %s}", d->met ? "true" : "false");
	}
	fprintf(f, "],\n    \"notes\": [");
	for (i = 0; i < t->nnotes; i++) {
		fprintf(f, "%s\n      ", i ? "," : "");
		json_str(f, t->notes[i]);
	}
	fprintf(f, "]}");
}

int bench_report_write_json(const char *path, int argc, char **argv)
{
	FILE *f = fopen(path, "w");
	struct utsname u;
	char model[128];
	char date[64];
	time_t now = time(NULL);
	unsigned i;
	int rc = 0;

	if (f == NULL)
		return -errno;
	cpu_model(model, sizeof(model));
	if (uname(&u) != 0)
		snprintf(u.release, sizeof(u.release), "unknown");
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "{\"program\": \"bench_actor\", \"format\": 1, \"date\": ");
	json_str(f, date);
	fprintf(f, ",\n  \"command\": \"");
	for (i = 0; i < (unsigned)argc; i++) {
		fprintf(f, "%s", i ? " " : "");
		for (const char *p = argv[i]; *p != '\0'; p++)
			fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
	}
	fprintf(f, "\",\n  \"machine\": {\"cpu\": ");
	json_str(f, model);
	fprintf(f, ", \"online_cpus\": %ld, \"kernel\": ", sysconf(_SC_NPROCESSORS_ONLN));
	json_str(f, u.release);
	fprintf(f, "},\n  \"mode\": \"%s\", \"rounds\": %u,\n", bench_opts.quick ? "quick" : "full",
		bench_opts.rounds);
	fprintf(f, "  \"clock\": {\"tsc_ticks_per_ns\": ");
	json_num(f, bench_clock.ticks_per_ns);
	fprintf(f, ", \"rdtsc_step_ns\": ");
	json_num(f, bench_clock.step_ns);
	fprintf(f, ", \"sample_pair_overhead_ns\": ");
	json_num(f, bench_clock.pair_ns);
	fprintf(f, "},\n  \"tables\": [");
	for (i = 0; i < ntables; i++) {
		if (!tables[i].done)
			continue;
		fprintf(f, "%s\n    ", i ? "," : "");
		json_table(f, &tables[i]);
	}
	fprintf(f, "]}\n");
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}
