/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Deterministic randomness for tickwire-synth: a seeded PRNG with independent
 * streams, Q32.32 fixed-point exp/log, and a self-exciting (Hawkes) arrival
 * process simulated with integers only, so the same seed gives byte-identical
 * captures on every machine and libm.
 *
 * Hawkes process: intensity lambda(t) = mu + sum over past events t_i and
 * kernels k of alpha_k * exp(-beta_k (t - t_i)), all rates per second.  One
 * kernel clusters at one time scale; several (a sum of exponentials, up to
 * SYNTH_HAWKES_KERNELS) approximate the slowly decaying, multi-scale
 * clustering of real market data.  Stationary when the branching ratio
 * n = sum alpha_k / beta_k < 1; the mean rate is then mu / (1 - n).
 * Simulated by Ogata's thinning: the intensity only decays between events,
 * so its value after the last event bounds it until the next one.
 *
 * Single-threaded; nothing allocates, prints or exits.
 */
#ifndef SYNTH_RANDOM_H
#define SYNTH_RANDOM_H

#include <stdbool.h>
#include <stdint.h>

/** 1.0 in Q32.32. */
#define SYNTH_FX_ONE (UINT64_C(1) << 32)

/** xoshiro256** state. */
struct synth_rng {
	uint64_t s[4];
};

/** Seed stream number stream of seed (streams are independent sequences). */
void synth_rng_seed(struct synth_rng *rng, uint64_t seed, uint64_t stream);

/** Next 64 random bits. */
uint64_t synth_rng_next(struct synth_rng *rng);

/** Uniform in [0, bound); 0 when bound is 0. */
uint64_t synth_rng_below(struct synth_rng *rng, uint64_t bound);

/** Uniform in [lo, hi] (inclusive; lo <= hi). */
int64_t synth_rng_range(struct synth_rng *rng, int64_t lo, int64_t hi);

/** True with probability p (Q32.32, SYNTH_FX_ONE = always).  Draws once. */
bool synth_rng_chance(struct synth_rng *rng, uint64_t p);

/** Uniform in (0, 1] as Q32.32. */
uint64_t synth_rng_unit(struct synth_rng *rng);

/** exp(-x) for x >= 0, Q32.32 in and out (absolute error < 2^-31). */
uint64_t synth_fx_exp_neg(uint64_t x);

/** -ln(u) for u in (0, 1], Q32.32 in and out; u = 0 is taken as 2^-32. */
uint64_t synth_fx_neg_ln(uint64_t u);

/**
 * Parse a non-negative decimal ("0.25", "3", "1e-3" is refused) into Q32.32.
 * @return 0; -EINVAL if malformed; -ERANGE if >= 2^31.
 */
int synth_fx_parse(const char *text, uint64_t *out);

/** Most kernels of a Hawkes process. */
#define SYNTH_HAWKES_KERNELS 6

/** Hawkes process state. */
struct synth_hawkes {
	uint64_t mu;          /**< base rate, events/s, Q32.32 */
	unsigned int kernels; /**< kernels in use, 1..SYNTH_HAWKES_KERNELS */
	uint64_t alpha[SYNTH_HAWKES_KERNELS]; /**< intensity jump per event, 1/s, Q32.32 */
	uint64_t beta[SYNTH_HAWKES_KERNELS];  /**< decay rate, 1/s, Q32.32 */
	/** Kernel k's part of lambda(t) - mu at time now_ns, Q32.32. */
	uint64_t excitation[SYNTH_HAWKES_KERNELS];
	uint64_t now_ns;      /**< time of the last event (or the start) */
	uint64_t candidates;  /**< thinning candidates drawn */
	uint64_t events;      /**< events accepted */
	struct synth_rng rng;
};

/**
 * Initialise a process of one kernel (alpha, beta) at time start_ns.
 * @return 0; -EINVAL if mu is 0 or alpha >= beta (not stationary).
 */
int synth_hawkes_init(struct synth_hawkes *h, uint64_t mu, uint64_t alpha, uint64_t beta,
		uint64_t start_ns, uint64_t seed);

/**
 * Add a kernel (before the first synth_hawkes_next()).  A kernel of
 * branching ratio n and mean delay tau seconds is alpha = n / tau, beta = 1 / tau.
 * @return 0; -ENOSPC if the process has SYNTH_HAWKES_KERNELS already;
 *         -EINVAL if beta is 0 or the branching ratios would sum to 1 or more.
 */
int synth_hawkes_add_kernel(struct synth_hawkes *h, uint64_t alpha, uint64_t beta);

/** Sum of the kernels' branching ratios alpha_k / beta_k, Q32.32. */
uint64_t synth_hawkes_branching(const struct synth_hawkes *h);

/** Time (ns) of the next event; strictly after the previous one. */
uint64_t synth_hawkes_next(struct synth_hawkes *h);

#endif /* SYNTH_RANDOM_H */
