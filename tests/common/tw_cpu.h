/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Pinning for the stress tests that need two callers on distinct cpus.
 */
#ifndef TW_CPU_H
#define TW_CPU_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

/*
 * Pin the calling thread to the @nth cpu of @allowed (0-based). False when
 * @allowed has fewer than two cpus or no @nth one. Read @allowed before any
 * thread of the test pins itself: a thread inherits its creator's affinity,
 * so a set read after a pin would hold the one cpu.
 */
static inline bool tw_pin_nth(const cpu_set_t *allowed, unsigned nth)
{
	cpu_set_t one;
	unsigned cpu, seen = 0;

	if (CPU_COUNT(allowed) < 2)
		return false;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, allowed) || seen++ != nth)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		return pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
	}
	return false;
}

#endif
