/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Shared parts of bench_actor: the clock (TSC calibrated against
 * CLOCK_MONOTONIC), sample sets and percentiles, thread pinning, and the
 * report (aligned text tables printed as each table finishes, and one JSON
 * file at the end). Internal to tests/perf.
 */
#ifndef TW_BENCH_H
#define TW_BENCH_H

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "act.h"

/*
 * ACT_STACK_MSG puts struct act_msg (which ends in a flexible array) before
 * the payload: a GNU extension that clang reports. GCC, the CI compiler,
 * accepts it; keep clang builds of the benchmarks clean too.
 */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
#endif

/* ------------------------------------------------------------------------ */
/* Compiler and timing primitives                                           */
/* ------------------------------------------------------------------------ */

/*
 * A function whose call the compiler may neither inline, clone, merge with an
 * identical twin, nor analyse from its callers: the work in every arm of
 * table 1 goes through such a function.
 */
#if defined(__clang__)
#define BENCH_OPAQUE __attribute__((noinline)) /* clang merges no functions by default */
#else
#define BENCH_OPAQUE __attribute__((noipa, noinline))
#endif
#define BENCH_INLINE static inline __attribute__((always_inline))

/* The compiler must assume any memory may have been read or written. */
BENCH_INLINE void bench_clobber(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The compiler must assume @p v is used: its computation stays. */
BENCH_INLINE void bench_keep(uint64_t v)
{
	__asm__ volatile("" : : "r"(v) : "memory");
}

BENCH_INLINE void bench_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

uint64_t bench_mono_ns(void);

/* Plain TSC read, for a clock pair around N operations (amortized). */
BENCH_INLINE uint64_t bench_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return bench_mono_ns();
#endif
}

/* Start of one timed sample: earlier instructions retire before the read. */
BENCH_INLINE uint64_t bench_tsc_begin(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("lfence" ::: "memory");
	return __builtin_ia32_rdtsc();
#else
	return bench_mono_ns();
#endif
}

/* End of one timed sample: the timed instructions retire before the read. */
BENCH_INLINE uint64_t bench_tsc_end(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int aux;
	uint64_t t = __builtin_ia32_rdtscp(&aux);

	__asm__ volatile("lfence" ::: "memory");
	return t;
#else
	return bench_mono_ns();
#endif
}

/** What the clock calibration found. */
struct bench_clock {
	double ticks_per_ns;  /**< TSC ticks per CLOCK_MONOTONIC ns */
	double step_ns;       /**< smallest non-zero difference of two reads */
	double pair_ns;       /**< median cost of an empty begin/end sample */
};

extern struct bench_clock bench_clock;

/** Calibrate the TSC (about 0.3 s). Exits with a hint if the clock is unusable. */
void bench_clock_calibrate(void);

static inline double bench_ns(uint64_t ticks)
{
	return (double)ticks / bench_clock.ticks_per_ns;
}

/* ------------------------------------------------------------------------ */
/* Options, threads                                                         */
/* ------------------------------------------------------------------------ */

/** Run settings shared by every table. */
struct bench_opts {
	bool quick;            /**< --quick: a smoke run, under a minute */
	unsigned rounds;       /**< repetitions of every arm, interleaved */
	double scale;          /**< multiplies iteration counts (quick < 1) */
	const char *caf_peer;  /**< path of bench_caf_peer, NULL = none */
	/** --release store: lockable actors with lock_release_store (default:
	 *  the runtime's default, the exchange) */
	bool release_store;
};

extern struct bench_opts bench_opts;

/** Iterations for a full run of @p full, scaled for --quick (at least @p min). */
uint64_t bench_iters(uint64_t full, uint64_t min);

/** Pin the calling thread to @p cpu; warns once (not fatal) on failure. */
void bench_pin(int cpu);

/** Allow the calling thread on cpus 0 and 1 again. */
void bench_unpin(void);

/** Start a thread that pins itself to @p cpu and runs @p fn. Exits on failure. */
void bench_thread_start(pthread_t *th, int cpu, void *(*fn)(void *), void *arg);

/** Join; exits on failure. */
void bench_thread_join(pthread_t th);

/**
 * Create and start an actor: in group @p g (NULL: a mailbox of its own,
 * configured by @p own, NULL for the defaults), group-private if
 * @p group_private. Exits on failure.
 */
struct act_actor *bench_actor(const char *name, const act_handler_fn *handlers,
			      uint32_t handler_count, void *state, struct act_group *g,
			      const struct act_group_opts *own, bool group_private);

/** bench_actor() with act_actor_opts.lock_bias set (a lockable actor whose
 * lock is biased to the first thread that takes it). */
struct act_actor *bench_actor_biased(const char *name, const act_handler_fn *handlers,
				     uint32_t handler_count, void *state, struct act_group *g);

/** A manual group of queue @p q, bound to the calling thread. Exits on failure. */
struct act_group *bench_bound_group(const char *name, enum act_queue_type q);

/** Print "bench_actor: <what>: <strerror(err)>" and a hint, then exit(1). */
void bench_die(int err, const char *what, const char *hint) __attribute__((noreturn));

/** malloc that exits with a hint on failure. */
void *bench_alloc(size_t bytes);

/* ------------------------------------------------------------------------ */
/* Samples                                                                  */
/* ------------------------------------------------------------------------ */

/** Per-sample durations in TSC ticks. */
struct bench_samples {
	uint64_t *ticks;
	size_t n;
	size_t cap;
};

/** Percentiles in ns (nearest rank). */
struct bench_pct {
	size_t n;
	double p50, p90, p99, p999, p9999, max;
};

void bench_samples_init(struct bench_samples *s, size_t cap);
void bench_samples_free(struct bench_samples *s);

static inline void bench_samples_add(struct bench_samples *s, uint64_t ticks)
{
	if (s->n < s->cap)
		s->ticks[s->n++] = ticks;
}

/** Sort the samples in place and compute percentiles (all zero if empty). */
void bench_samples_pct(struct bench_samples *s, struct bench_pct *out);

/** p50 in ns of @p n raw samples (sorts a copy). NAN if n == 0. */
double bench_p50_ns(const uint64_t *ticks, size_t n);

/** Median of @p n doubles (sorts a copy). NAN if n == 0. */
double bench_median(const double *v, unsigned n);

/** (max - min) / median of @p n doubles, in percent: the round-to-round spread. */
double bench_spread_pct(const double *v, unsigned n);

/* ------------------------------------------------------------------------ */
/* Report                                                                   */
/* ------------------------------------------------------------------------ */

#define BENCH_MAX_COLS 12

/** One column of a section: JSON key, text header, digits after the point. */
struct bench_col {
	const char *key;
	const char *header;
	int precision;
};

/* Column sets used by several tables. */
extern const struct bench_col bench_lat_cols[];   /* n p50 p90 p99 p99.9 max amort spread */
#define BENCH_LAT_NCOLS 8
extern const struct bench_col bench_latr_cols[];  /* the above plus ratio */
#define BENCH_LATR_NCOLS 9

struct bench_table;
struct bench_section;

/** Begin table @p id (1..6); its title is printed at once. */
struct bench_table *bench_table_begin(int id, const char *title);

/** Finish: print the sections not yet printed, targets and notes. */
void bench_table_end(struct bench_table *t);

/** Start a section with its own columns (at most BENCH_MAX_COLS). */
struct bench_section *bench_section(struct bench_table *t, const char *title,
				    const struct bench_col *cols, unsigned ncols);

/**
 * Add a row. @p vals has one value per column; NAN prints as "-".
 * @p tag (may be NULL) is printed after the values ("best", "seed" ...).
 */
void bench_row(struct bench_section *s, const char *name, const double *vals, const char *tag);

/** Fill the first BENCH_LAT_NCOLS values of a latency row. */
void bench_lat_vals(double *vals, const struct bench_pct *p, double amortized_ns,
		    double spread_pct);

/**
 * Record a target: met when @p value <= @p limit (or >= when @p at_least).
 * @return whether it was met. A NAN value counts as not measured (missed).
 */
bool bench_target(struct bench_table *t, const char *what, double value, double limit,
		  bool at_least);

/** Add a note line to the table (printed under it, stored in the JSON). */
void bench_note(struct bench_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Write every finished table to @p path as JSON. @return 0 or -errno. */
int bench_report_write_json(const char *path, int argc, char **argv);

/** Print the one-screen summary of all targets. */
void bench_report_print_summary(void);

/* ------------------------------------------------------------------------ */
/* Dispatch arms (bench_dispatch.c), shared by tables 1 and 6               */
/* ------------------------------------------------------------------------ */

/*
 * One operation each, all doing the same handler body (a few integer
 * operations on the state, through a function the compiler cannot see
 * into), except EMPTY (nothing) and RDTSC (one TSC read, what the runtime
 * pays per act_send to stamp enqueue_tsc when the group is instrumented).
 */
enum bench_arm {
	BENCH_ARM_EMPTY,
	BENCH_ARM_DIRECT,          /* direct call of the handler */
	BENCH_ARM_FNPTR,           /* through a function pointer, always the same target */
	BENCH_ARM_FNPTR_RANDOM,    /* through one of 8 pointers, chosen at random */
	BENCH_ARM_FAST_PRIVATE,    /* act_fast_send to a group-private actor */
	BENCH_ARM_FAST_LOCKABLE,   /* act_fast_send to a lockable actor */
	BENCH_ARM_FAST_BIASED,     /* act_fast_send to a lockable actor, lock_bias */
	BENCH_ARM_EDGE_PRIVATE,    /* act_fast_send_edge to a group-private actor (issue 15) */
	BENCH_ARM_EDGE_BIASED,     /* act_fast_send_edge to a lockable actor, lock_bias */
	BENCH_ARM_SEND_BQUEUE,     /* alloc + act_send + act_group_step(1), bqueue */
	BENCH_ARM_SEND_LOCKFREE,   /* the same through a lockfree mailbox */
	BENCH_ARM_SEND_BQUEUE_INSTR, /* SEND_BQUEUE with the mailbox instrumentation on */
	BENCH_ARM_RAW_LOCK_XCHG,   /* CAS lock + call via the table + exchange release */
	BENCH_ARM_RAW_LOCK_STORE,  /* CAS lock + call via the table + store release */
	BENCH_ARM_RDTSC,
	BENCH_ARM_COUNT_
};

#define BENCH_MAX_ROUNDS 50

struct bench_arm_result {
	struct bench_pct pct;
	double amort_ns;                    /**< median over rounds */
	double spread_pct;
	double round_ns[BENCH_MAX_ROUNDS];  /**< amortized ns/op of each round */
	unsigned rounds;
};

const char *bench_arm_name(enum bench_arm arm);

/**
 * Measure @p n arms, interleaved, bench_opts.rounds times: per round one
 * amortized pass lasting about @p pass_ms (the count is calibrated per arm)
 * and one pass of at most @p samples individually timed operations.
 * Main thread, pinned to cpu 0.
 */
void bench_measure_arms(const enum bench_arm *arms, unsigned n, double pass_ms,
			uint64_t samples, struct bench_arm_result *out);

/** Median over rounds of a.round_ns / b.round_ns (same-round pairs). */
double bench_paired_ratio(const struct bench_arm_result *a, const struct bench_arm_result *b);

/** Median over @p n rounds of a[i] / b[i]. */
double bench_ratio_median(const double *a, const double *b, unsigned n);

/* ------------------------------------------------------------------------ */
/* Round trips (bench_roundtrip.c), shared by tables 2, 3, 4 and 6          */
/* ------------------------------------------------------------------------ */

enum bench_rt_mode {
	BENCH_RT_GROUPED,  /* ping and pong in one group, stepped by the calling thread */
	BENCH_RT_CROSS,    /* each in its own mailbox and thread, on cpus 0 and 1 */
};

/* Extra allocations per round trip (table 3): none, or 2 pool / 2 malloc blocks. */
enum bench_rt_extra {
	BENCH_RT_EXTRA_NONE,
	BENCH_RT_EXTRA_POOL,
	BENCH_RT_EXTRA_MALLOC,
};

struct bench_rt_opts {
	enum bench_rt_mode mode;
	enum act_queue_type queue;
	uint32_t spin;             /* group spin before sleeping (cross-thread) */
	enum bench_rt_extra extra;
};

/**
 * Run @p count ping -> pong -> reply round trips, one in flight, through
 * act_send_copy() and act_reply(). Appends one sample per round trip to
 * @p s. @return amortized ns per round trip (first send to last reply).
 */
double bench_rt_run(const struct bench_rt_opts *o, uint64_t count, struct bench_samples *s);

/** Name of a queue type as in the config: bqueue, batched, sharded, lockfree. */
const char *bench_queue_name(enum act_queue_type q);

/* ------------------------------------------------------------------------ */
/* The tables (one file each)                                               */
/* ------------------------------------------------------------------------ */

void bench_table1_dispatch(void);    /* bench_dispatch.c */
void bench_table2_round_trip(void);  /* bench_roundtrip.c */
void bench_table3_alloc(void);       /* bench_alloc.c */
void bench_table4_queues(void);      /* bench_queue.c */
void bench_table5_throughput(void);  /* bench_queue.c */
void bench_table6_saturated(void);   /* bench_saturated.c */

#endif /* TW_BENCH_H */
