/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * bench_actor: benchmarks of the actor runtime (issue 3). A program, not a
 * test: it prints six tables and writes them as JSON.
 *
 *   1. dispatch without reply, identical work in every arm
 *   2. round trips, against the raw floors (cache line, futex) and CAF
 *   3. allocation: none on the synchronous path; pool against malloc
 *   4. the four mailbox queues in three regimes
 *   5. asynchronous throughput: batching and the pool
 *   6. saturated evaluation: contention, chain depth, message size, and
 *      the cost of the cycle check and deadlock walk
 *
 * Method. Threads are pinned to cpus 0 and 1. Every arm runs --rounds
 * times, the arms of a table interleaved, so that drift on a shared machine
 * hits all of them alike; headline figures are ratios of two arms measured in
 * the same round, and the median over rounds is reported. Two clocks:
 * per-sample percentiles from rdtsc (lfence/rdtscp bracketed; the step of the
 * TSC here is about 10 ns and an empty sample costs the "pair" overhead
 * printed at the start), and amortized ns per operation from one clock pair
 * around N operations, which resolves far below one tick.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "act.h"
#include "bench.h"

#ifndef TW_BENCH_CAF_PEER
#define TW_BENCH_CAF_PEER "" /* meson passes the built peer's path when CAF is found */
#endif

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [--table N[,N...]] [--quick] [--rounds R] [--json FILE]\n"
		"          [--caf PATH | --no-caf] [--release store|exchange]\n"
		"  --table N   run only table N (1..6); a comma list runs several\n"
		"  --quick     a smoke run, under a minute (fewer iterations, 3 rounds)\n"
		"  --rounds R  repetitions of every arm (default 7, --quick 3)\n"
		"  --json FILE where to write the results (default bench_actor.json)\n"
		"  --caf PATH  the CAF peer program for table 2 (default: the one built\n"
		"              beside this program when libcaf-dev was found)\n"
		"  --no-caf    skip the CAF peer\n"
		"  --release store|exchange\n"
		"              how lockable actors release their lock (default exchange, the\n"
		"              runtime's default; store: act_actor_opts.lock_release_store)\n"
		"Tables: 1 dispatch, 2 round trips, 3 allocation, 4 mailbox queues,\n"
		"5 async throughput, 6 saturated evaluation. Full run: under 10 minutes\n"
		"on 2 cores. Threads are pinned to cpus 0 and 1.\n",
		prog);
}

static int parse_tables(const char *arg, bool *want)
{
	const char *p = arg;

	memset(want, 0, 7 * sizeof(*want));
	while (*p != '\0') {
		char *end;
		long n = strtol(p, &end, 10);

		if (end == p || n < 1 || n > 6 || (*end != ',' && *end != '\0'))
			return -1;
		want[n] = true;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

static void print_header(void)
{
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256], model[128] = "unknown";

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
			colon[2 + strcspn(colon + 2, "\n")] = '\0';
			snprintf(model, sizeof(model), "%s", colon + 2);
			break;
		}
	}
	if (f != NULL)
		fclose(f);
	if (uname(&u) != 0)
		snprintf(u.release, sizeof(u.release), "unknown");
	printf("bench_actor: tickwire actor runtime benchmarks (issue 3), %s run, %u rounds, "
	       "lockable actors release by %s\n", bench_opts.quick ? "quick" : "full",
	       bench_opts.rounds, bench_opts.release_store ? "store" : "exchange");
	printf("machine: %s, %ld cpus online, kernel %s; threads pinned to cpus 0 and 1\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN), u.release);
	printf("clock: TSC %.4f ticks/ns (calibrated against CLOCK_MONOTONIC); rdtsc step "
	       "%.1f ns here,\n       so per-sample percentiles are quantised to ~%.0f ns and "
	       "include ~%.0f ns of\n       lfence/rdtscp overhead; 'amort' is one clock pair "
	       "around N operations.\n",
	       bench_clock.ticks_per_ns, bench_clock.step_ns, bench_clock.step_ns,
	       bench_clock.pair_ns);
	printf("columns: n samples; p50..max per sample (ns); amort = amortized ns/op; "
	       "spread%% = (max-min)/median\n         of the per-round values; ratios are "
	       "medians of per-round ratios.\n");
	printf("noise: this machine is shared; compare ratios, not absolute times, and re-run "
	       "a table\n       (--table N) whose spread%% is large.\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{"table", required_argument, NULL, 't'},
		{"quick", no_argument, NULL, 'q'},
		{"rounds", required_argument, NULL, 'r'},
		{"json", required_argument, NULL, 'j'},
		{"caf", required_argument, NULL, 'c'},
		{"no-caf", no_argument, NULL, 'n'},
		{"release", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *json = "bench_actor.json";
	const char *caf = TW_BENCH_CAF_PEER;
	bool want[7] = {false, true, true, true, true, true, true};
	long rounds = 0;
	int c, rc;

	while ((c = getopt_long(argc, argv, "t:qr:j:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_tables(optarg, want) != 0) {
				fprintf(stderr, "bench_actor: --table %s: want numbers 1..6, e.g. "
					"--table 2 or --table 1,3 (try --help)\n", optarg);
				return 2;
			}
			break;
		case 'q':
			bench_opts.quick = true;
			break;
		case 'r':
			rounds = strtol(optarg, NULL, 10);
			if (rounds < 1 || rounds > 50) {
				fprintf(stderr, "bench_actor: --rounds %s: want 1..50 (odd numbers give "
					"a true median)\n", optarg);
				return 2;
			}
			break;
		case 'j':
			json = optarg;
			break;
		case 'c':
			caf = optarg;
			break;
		case 'n':
			caf = "";
			break;
		case 'R':
			if (strcmp(optarg, "store") != 0 && strcmp(optarg, "exchange") != 0) {
				fprintf(stderr, "bench_actor: --release %s: want store or exchange "
					"(act_actor_opts.lock_release_store)\n", optarg);
				return 2;
			}
			bench_opts.release_store = strcmp(optarg, "store") == 0;
			break;
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "bench_actor: unexpected argument '%s' (try --help)\n", argv[optind]);
		return 2;
	}
	bench_opts.rounds = rounds != 0 ? (unsigned)rounds : bench_opts.quick ? 3 : 7;
	bench_opts.scale = bench_opts.quick ? 0.15 : 1.0;
	bench_opts.caf_peer = caf[0] != '\0' ? caf : NULL;

	rc = act_init(NULL);
	if (rc != 0 && rc != -EALREADY)
		bench_die(-rc, "act_init", "the runtime could not create its message pools");
	bench_pin(0);
	bench_clock_calibrate();
	print_header();

	if (want[1])
		bench_table1_dispatch();
	if (want[2])
		bench_table2_round_trip();
	if (want[3])
		bench_table3_alloc();
	if (want[4])
		bench_table4_queues();
	if (want[5])
		bench_table5_throughput();
	if (want[6])
		bench_table6_saturated();

	bench_report_print_summary();
	rc = bench_report_write_json(json, argc, argv);
	if (rc != 0) {
		fprintf(stderr, "bench_actor: cannot write %s: %s (hint: --json FILE in a writable "
			"directory)\n", json, strerror(-rc));
		return 1;
	}
	printf("results written to %s\n", json);
	return 0;
}
