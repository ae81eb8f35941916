/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Internals shared by the lib/actor sources. Not installed, not stable.
 */
#ifndef TICKWIRE_ACT_PVT_H
#define TICKWIRE_ACT_PVT_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "act.h"

/*
 * act__likely(), act__unlikely(), ACT__TLS, ACT__CACHE_LINE,
 * act__cache_aligned and act__stat_inc_owned() come with act.h, from
 * act_fast_pvt.h (its inline calls need them).
 */

static inline void act__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

static inline uint64_t act__rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static inline uint64_t act__mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * futex on a 32-bit atomic word. Private futexes: all waiters share one
 * address space. Spurious returns (EINTR, EAGAIN) are expected by callers,
 * which always re-check their condition.
 */
static inline void act__futex_wait(_Atomic uint32_t *word, uint32_t expected,
				   const struct timespec *rel_timeout)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, rel_timeout, NULL, 0);
}

static inline void act__futex_wake(_Atomic uint32_t *word, int count)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/*
 * membarrier(2): @cmd on this process. MEMBARRIER_CMD_PRIVATE_EXPEDITED
 * returns after every CPU that runs a thread of this process has executed a
 * full memory barrier (an IPI), so each of those threads' accesses is
 * ordered either wholly before or wholly after the caller's accesses
 * around the call (actor.c, lock). 0 or -1 with errno.
 */
static inline int act__membarrier(int cmd)
{
	return (int)syscall(SYS_membarrier, cmd, 0u, 0);
}

/*
 * Allocation counter of the calling thread: every allocation the runtime
 * makes (pool blocks, malloc on its behalf) adds one. Tests read it through
 * act_thread_alloc_count() to prove the synchronous path allocates nothing.
 * A plain thread-local: only its own thread writes or reads it.
 */
extern ACT__TLS uint64_t act__tls_alloc_count;

static inline void act__count_alloc(void)
{
	act__tls_alloc_count++;
}

/* Counter bump by any thread. */
static inline void act__stat_inc_shared(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

#endif /* TICKWIRE_ACT_PVT_H */
