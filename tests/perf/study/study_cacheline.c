/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * study_cacheline: the cost of one cache-line round trip between cpu 0 and
 * cpu 1, the yardstick of the latency study's two-stage target (the
 * hand-off from a capture lcore to the decode lcore is at least one line
 * going over and its acknowledgement coming back).
 *
 *   study_cacheline [ROUND_TRIPS] [CPU_A CPU_B]
 *
 * Two threads pinned to the two cpus pass a counter back and forth in one
 * cache line (each waits for the other's value, then writes its own). The
 * elapsed TSC of batches of 64 round trips gives one sample each; prints
 * the median and the 10th percentile in ns (TSC rate measured against
 * CLOCK_MONOTONIC over the run), one "key value" per line.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#define BATCH 64

static _Alignas(64) _Atomic uint64_t line;

struct side {
	int cpu;
	uint64_t trips;
	uint64_t *samples;       /* ticks per batch (side A only) */
};

static void
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* B answers every odd value with the next even one. */
static void *
side_b(void *arg)
{
	struct side *s = arg;

	pin(s->cpu);
	for (uint64_t i = 0; i < s->trips; i++) {
		const uint64_t want = 2 * i + 1;

		while (atomic_load_explicit(&line, memory_order_acquire) != want)
			_mm_pause();
		atomic_store_explicit(&line, want + 1, memory_order_release);
	}
	return NULL;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	uint64_t trips = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000;
	struct side b = {.cpu = argc > 3 ? atoi(argv[3]) : 1};
	int cpu_a = argc > 3 ? atoi(argv[2]) : 0;
	uint64_t n = trips / BATCH, ns0, tsc0;
	uint64_t *samples;
	pthread_t tb;
	double tsc_per_ns;

	if (n == 0 || (samples = calloc(n, sizeof(*samples))) == NULL) {
		fprintf(stderr, "study_cacheline: want at least %d round trips\n", BATCH);
		return 2;
	}
	b.trips = n * BATCH;
	pin(cpu_a);
	if (pthread_create(&tb, NULL, side_b, &b) != 0) {
		perror("study_cacheline: pthread_create");
		return 1;
	}
	ns0 = mono_ns();
	tsc0 = __rdtsc();
	for (uint64_t k = 0; k < n; k++) {
		const uint64_t t = __rdtsc();

		for (uint64_t j = 0; j < BATCH; j++) {
			const uint64_t i = k * BATCH + j;

			atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
			while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2)
				_mm_pause();
		}
		samples[k] = __rdtsc() - t;
	}
	tsc_per_ns = (double)(__rdtsc() - tsc0) / (double)(mono_ns() - ns0);
	pthread_join(tb, NULL);
	qsort(samples, n, sizeof(*samples), cmp_u64);
	printf("cacheline_rt_p50_ns %.1f\n", (double)samples[n / 2] / BATCH / tsc_per_ns);
	printf("cacheline_rt_p10_ns %.1f\n", (double)samples[n / 10] / BATCH / tsc_per_ns);
	printf("round_trips %llu\ncpus %d %d\n", (unsigned long long)(n * BATCH), cpu_a, b.cpu);
	free(samples);
	return 0;
}
