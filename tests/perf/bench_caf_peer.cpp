/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * bench_caf_peer: the CAF 0.17 side of bench_actor's peer comparison.
 *
 * One ping actor sends `request(pong, infinite, ping, seq).then(...)` and
 * starts the next request from inside the response handler, so exactly one
 * round trip is in flight, as in bench_actor's grouped and cross-thread
 * round trips. Each configuration (scheduler.max-threads = 1, then 2) runs
 * in its own actor system; the pair is repeated --repeat times, alternating,
 * so that drift on a shared machine hits both alike.
 *
 * Output, one line per run, parsed by bench_actor:
 *   caf_rt threads=T rounds=N p50_ns=.. p90_ns=.. p99_ns=.. p999_ns=..
 *          max_ns=.. amortized_ns=..
 *
 * Usage: bench_caf_peer [--rounds N] [--repeat R] [--tsc-per-ns X]
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <future>
#include <vector>

#include <caf/all.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace {

using ping_atom = caf::atom_constant<caf::atom("ping")>;

uint64_t tsc_now()
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

uint64_t mono_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double calibrate_tsc_per_ns()
{
	struct timespec pause = {0, 100 * 1000 * 1000};
	uint64_t n0 = mono_ns();
	uint64_t t0 = tsc_now();

	nanosleep(&pause, nullptr);
	return (double)(tsc_now() - t0) / (double)(mono_ns() - n0);
}

struct ping_state {
	caf::actor pong;
	uint64_t rounds = 0;
	uint64_t done = 0;
	uint64_t sent_tsc = 0;
	uint64_t first_tsc = 0;
	std::vector<uint64_t> *samples = nullptr;
	std::promise<uint64_t> *finished = nullptr; /* total ticks */
};

using ping_actor = caf::stateful_actor<ping_state>;

caf::behavior pong_fn(caf::event_based_actor *)
{
	return {
		[](ping_atom, uint64_t seq) { return seq + 1; },
	};
}

void ping_next(ping_actor *self)
{
	self->state.sent_tsc = tsc_now();
	self->request(self->state.pong, caf::infinite, ping_atom::value, self->state.done)
		.then([self](uint64_t) {
			ping_state &s = self->state;
			uint64_t now = tsc_now();

			(*s.samples)[s.done++] = now - s.sent_tsc;
			if (s.done == s.rounds) {
				s.finished->set_value(now - s.first_tsc);
				self->quit();
				return;
			}
			ping_next(self);
		});
}

caf::behavior ping_fn(ping_actor *self, caf::actor pong, uint64_t rounds,
		      std::vector<uint64_t> *samples, std::promise<uint64_t> *finished)
{
	self->state.pong = pong;
	self->state.rounds = rounds;
	self->state.samples = samples;
	self->state.finished = finished;
	self->state.first_tsc = tsc_now();
	ping_next(self);
	/* Kept alive by the pending response; nothing else arrives. */
	return {
		[](uint64_t) {},
	};
}

double pct(const std::vector<uint64_t> &sorted, double p, double tsc_per_ns)
{
	size_t n = sorted.size();
	size_t rank = (size_t)(p * (double)n + 0.999999);

	if (rank == 0)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)sorted[rank - 1] / tsc_per_ns;
}

void run_one(size_t threads, uint64_t rounds, double tsc_per_ns)
{
	std::vector<uint64_t> samples(rounds);
	std::promise<uint64_t> finished;
	std::future<uint64_t> total = finished.get_future();
	uint64_t ticks;

	{
		caf::actor_system_config cfg;

		cfg.set("scheduler.max-threads", threads);
		caf::actor_system sys{cfg};
		caf::actor pong = sys.spawn(pong_fn);

		sys.spawn(ping_fn, pong, rounds, &samples, &finished);
		ticks = total.get();
		caf::anon_send_exit(pong, caf::exit_reason::user_shutdown);
	} /* the system's destructor waits for both actors */

	std::sort(samples.begin(), samples.end());
	printf("caf_rt threads=%zu rounds=%llu p50_ns=%.1f p90_ns=%.1f p99_ns=%.1f "
	       "p999_ns=%.1f max_ns=%.1f amortized_ns=%.1f\n",
	       threads, (unsigned long long)rounds, pct(samples, 0.50, tsc_per_ns),
	       pct(samples, 0.90, tsc_per_ns), pct(samples, 0.99, tsc_per_ns),
	       pct(samples, 0.999, tsc_per_ns), (double)samples[rounds - 1] / tsc_per_ns,
	       (double)ticks / tsc_per_ns / (double)rounds);
	fflush(stdout);
}

int usage(int rc)
{
	fprintf(rc == 0 ? stdout : stderr,
		"usage: bench_caf_peer [--rounds N] [--repeat R] [--tsc-per-ns X]\n"
		"  CAF request/then ping-pong round trips with 1 and 2 scheduler threads.\n"
		"  Normally started by bench_actor (table 2); runs alone as well.\n");
	return rc;
}

} /* namespace */

int main(int argc, char **argv)
{
	uint64_t rounds = 100000;
	unsigned long repeat = 3;
	double tsc_per_ns = 0;
	cpu_set_t set;

	for (int i = 1; i < argc; i += 2) {
		const char *arg = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : nullptr;

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
			return usage(0);
		if (val == nullptr) {
			fprintf(stderr, "bench_caf_peer: %s needs a value (try --help)\n", arg);
			return 2;
		}
		if (strcmp(arg, "--rounds") == 0) {
			rounds = strtoull(val, nullptr, 10);
		} else if (strcmp(arg, "--repeat") == 0) {
			repeat = strtoul(val, nullptr, 10);
		} else if (strcmp(arg, "--tsc-per-ns") == 0) {
			tsc_per_ns = strtod(val, nullptr);
		} else {
			fprintf(stderr, "bench_caf_peer: unknown option %s (try --help)\n", arg);
			return 2;
		}
	}
	if (rounds < 10 || rounds > 100000000 || repeat < 1 || repeat > 100) {
		fprintf(stderr, "bench_caf_peer: want --rounds 10..1e8 and --repeat 1..100\n");
		return 2;
	}
	/* The scheduler's threads inherit this mask: cpus 0 and 1, as bench_actor. */
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	CPU_SET(1, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		fprintf(stderr, "bench_caf_peer: cannot pin to cpus 0-1; running unpinned\n");
	if (tsc_per_ns <= 0)
		tsc_per_ns = calibrate_tsc_per_ns();
	for (unsigned long r = 0; r < repeat; r++) {
		run_one(1, rounds, tsc_per_ns);
		run_one(2, rounds, tsc_per_ns);
	}
	return 0;
}
