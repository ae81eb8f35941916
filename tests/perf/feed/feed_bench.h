/* SPDX-License-Identifier: BSD-3-Clause
 * Shared by the feed benchmarks (bench_feed, bench_mbo_table): the clock of
 * their t0/t1 pairs, the load average printed beside every figure, and
 * pinning to one cpu.
 * Internal to tests/perf/feed.
 */
#ifndef TW_FEED_BENCH_H
#define TW_FEED_BENCH_H

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns (a vDSO read, no system call). */
static inline uint64_t
fb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The 1-minute load average (0 when unknown), printed beside the figures. */
static inline double
fb_load1(void)
{
	double load[3] = { 0, 0, 0 };

	getloadavg(load, 3);
	return load[0];
}

/* Pin the calling thread to cpu: 0, or -1 with errno set. */
static inline int
fb_pin_cpu(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

#endif /* TW_FEED_BENCH_H */
