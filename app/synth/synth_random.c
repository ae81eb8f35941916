/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PRNG (xoshiro256**, seeded through splitmix64), Q32.32 fixed-point
 * exp(-x) and -ln(u), and Hawkes arrivals by thinning; integers only.
 *
 * exp(-x): x = k ln2 + r with 0 <= r < ln2, Taylor series of exp(-r) in Q60,
 * then shifted right by k.  -ln(u): u = m 2^-k with m in [1/2, 1), and
 * -ln(m) = 2 atanh((1 - m) / (1 + m)) whose argument is at most 1/3, so the
 * odd series converges by a factor 9 per term.
 */
#include <errno.h>
#include <stddef.h>

#include "synth_random.h"

__extension__ typedef unsigned __int128 synth_u128;
__extension__ typedef __int128 synth_i128;

#define Q60_ONE (UINT64_C(1) << 60)
/* ln 2 in Q60, rounded. */
#define LN2_Q60 UINT64_C(799144290325165979)
#define NS_PER_S UINT64_C(1000000000)

static uint64_t
splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void
synth_rng_seed(struct synth_rng *rng, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * UINT64_C(0xd1b54a32d192ed03));
	unsigned int i;

	for (i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&x);
}

static inline uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t
synth_rng_next(struct synth_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t
synth_rng_below(struct synth_rng *rng, uint64_t bound)
{
	return (uint64_t)(((synth_u128)synth_rng_next(rng) * bound) >> 64);
}

int64_t
synth_rng_range(struct synth_rng *rng, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;

	if (span == 0) /* the whole 64-bit range */
		return (int64_t)synth_rng_next(rng);
	return (int64_t)((uint64_t)lo + synth_rng_below(rng, span));
}

bool
synth_rng_chance(struct synth_rng *rng, uint64_t p)
{
	return (synth_rng_next(rng) >> 32) < p;
}

uint64_t
synth_rng_unit(struct synth_rng *rng)
{
	return (synth_rng_next(rng) >> 32) + 1;
}

uint64_t
synth_fx_exp_neg(uint64_t x)
{
	synth_u128 x60, term;
	synth_i128 sum;
	uint64_t k, r;
	unsigned int n;

	if (x == 0)
		return SYNTH_FX_ONE;
	if ((x >> 32) >= 44)
		return 0; /* below 2^-63 */
	x60 = (synth_u128)x << 28;
	k = (uint64_t)(x60 / LN2_Q60);
	r = (uint64_t)(x60 - (synth_u128)k * LN2_Q60);
	sum = Q60_ONE;
	term = Q60_ONE;
	for (n = 1; n < 40; n++) {
		term = ((term * r) >> 60) / n;
		if (term == 0)
			break;
		if (n & 1)
			sum -= (synth_i128)term;
		else
			sum += (synth_i128)term;
	}
	/* Q60 -> Q32 with rounding, divided by 2^k. */
	return (uint64_t)(((synth_u128)sum + ((synth_u128)1 << (27 + k))) >> (28 + k));
}

uint64_t
synth_fx_neg_ln(uint64_t u)
{
	synth_u128 z, z2, power, sum, result;
	uint64_t m;
	unsigned int k, n;

	if (u >= SYNTH_FX_ONE)
		return 0;
	if (u == 0)
		u = 1;
	k = (unsigned int)__builtin_clzll(u) - 32; /* u << k in [2^31, 2^32) */
	m = u << k;
	z = ((synth_u128)(SYNTH_FX_ONE - m) << 60) / (SYNTH_FX_ONE + m);
	z2 = (z * z) >> 60;
	sum = 0;
	power = z;
	for (n = 0; n < 40 && power != 0; n++) {
		sum += power / (2 * n + 1);
		power = (power * z2) >> 60;
	}
	result = (synth_u128)k * LN2_Q60 + 2 * sum;
	return (uint64_t)((result + ((synth_u128)1 << 27)) >> 28);
}

int
synth_fx_parse(const char *text, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = text;
	unsigned int digits = 0, frac_digits = 0;

	if (text == NULL || out == NULL)
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole >= (UINT64_C(1) << 31))
			return -ERANGE;
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (frac_digits < 18) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
				frac_digits++;
			}
			p++;
			digits++;
		}
	}
	if (digits == 0 || *p != '\0')
		return -EINVAL;
	*out = (whole << 32) + (uint64_t)(((synth_u128)frac << 32) / scale);
	return 0;
}

int
synth_hawkes_init(struct synth_hawkes *h, uint64_t mu, uint64_t alpha, uint64_t beta,
		uint64_t start_ns, uint64_t seed)
{
	if (h == NULL || mu == 0 || alpha >= beta)
		return -EINVAL;
	h->mu = mu;
	h->kernels = 1;
	h->alpha[0] = alpha;
	h->beta[0] = beta;
	h->excitation[0] = 0;
	h->now_ns = start_ns;
	h->candidates = 0;
	h->events = 0;
	synth_rng_seed(&h->rng, seed, 0x4a77);
	return 0;
}

uint64_t
synth_hawkes_branching(const struct synth_hawkes *h)
{
	synth_u128 sum = 0;
	unsigned int k;

	for (k = 0; k < h->kernels; k++)
		sum += ((synth_u128)h->alpha[k] << 32) / h->beta[k];
	return sum > UINT64_MAX ? UINT64_MAX : (uint64_t)sum;
}

int
synth_hawkes_add_kernel(struct synth_hawkes *h, uint64_t alpha, uint64_t beta)
{
	if (h == NULL || beta == 0)
		return -EINVAL;
	if (h->kernels >= SYNTH_HAWKES_KERNELS)
		return -ENOSPC;
	if (synth_hawkes_branching(h) + (((synth_u128)alpha << 32) / beta) >= SYNTH_FX_ONE)
		return -EINVAL;
	h->alpha[h->kernels] = alpha;
	h->beta[h->kernels] = beta;
	h->excitation[h->kernels] = 0;
	h->kernels++;
	return 0;
}

uint64_t
synth_hawkes_next(struct synth_hawkes *h)
{
	synth_u128 wait, x;
	uint64_t bound, intensity, decay, wait_ns;
	unsigned int k;

	for (;;) {
		bound = h->mu;
		for (k = 0; k < h->kernels; k++)
			bound += h->excitation[k];
		wait = ((synth_u128)synth_fx_neg_ln(synth_rng_unit(&h->rng)) * NS_PER_S) / bound;
		wait_ns = wait > (UINT64_C(1) << 50) ? (UINT64_C(1) << 50) : (uint64_t)wait;
		if (wait_ns == 0)
			wait_ns = 1;
		h->now_ns += wait_ns;
		h->candidates++;
		intensity = h->mu;
		for (k = 0; k < h->kernels; k++) {
			x = ((synth_u128)h->beta[k] * wait_ns) / NS_PER_S;
			decay = x >= ((synth_u128)44 << 32) ? 0 : synth_fx_exp_neg((uint64_t)x);
			h->excitation[k] = (uint64_t)(((synth_u128)h->excitation[k] * decay) >> 32);
			intensity += h->excitation[k];
		}
		if (((synth_u128)(synth_rng_next(&h->rng) >> 32) * bound >> 32) < intensity) {
			for (k = 0; k < h->kernels; k++)
				h->excitation[k] += h->alpha[k];
			h->events++;
			return h->now_ns;
		}
	}
}
