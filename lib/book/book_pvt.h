/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline internals of lib/book shared by book.c and the feed: the level
 * operation (hot path), price scaling.  Not an interface (the tops are
 * public inline functions of book.h).
 */
#ifndef BOOK_PVT_H
#define BOOK_PVT_H

#include <errno.h>
#include <string.h>

#include "book.h"

#define BOOK__ALWAYS_INLINE static inline __attribute__((always_inline))

/* Slow path of price scaling (down-scaling, exponents far apart). */
int book__price_scale(int64_t mantissa, int exponent, int target_exponent, int64_t *out);

/* 10^0 .. 10^18 */
extern const int64_t book__pow10[19];

/*
 * Exact mantissa at target_exponent.  The common cases stay inline: the
 * same exponent (PRICE9 books) and a coarser one (PRICE, 10^-7, into
 * 10^-9 books: one checked multiply, by a constant for that pair).
 * Up-scaling needs no test of BOOK_PRICE_NONE (INT64_MIN) on either side:
 * INT64_MIN times 10^d (d >= 1) overflows, and a product of 10^d is a
 * multiple of 5 and so never INT64_MIN (= -2^63); both are -ERANGE as in
 * book__price_scale().
 */
BOOK__ALWAYS_INLINE int
book__price_normalize(int64_t mantissa, int exponent, int target_exponent, int64_t *out)
{
	int d = exponent - target_exponent;

	if (__builtin_expect(d == 0, 1)) {
		if (__builtin_expect(mantissa == BOOK_PRICE_NONE, 0))
			return -ERANGE;
		*out = mantissa;
		return 0;
	}
	if (d == 2) {
		/* PRICE (10^-7) into the default 10^-9: a constant multiply */
		if (__builtin_mul_overflow(mantissa, (int64_t)100, out))
			return -ERANGE;
		return 0;
	}
	if (d > 0 && d <= 18) {
		if (__builtin_mul_overflow(mantissa, book__pow10[d], out))
			return -ERANGE;
		return 0;
	}
	return book__price_scale(mantissa, exponent, target_exponent, out);
}

static inline void
book__level_set(struct book_level *l, const struct book_level *v)
{
	l->price = v->price;
	l->qty = v->qty;
	l->orders = v->orders;
	l->reserved = 0;
}

static inline void
book__level_empty(struct book_level *l)
{
	l->price = BOOK_PRICE_NONE;
	l->qty = 0;
	l->orders = 0;
	l->reserved = 0;
}

/*
 * Level moves are short (at most BOOK_MAX_DEPTH - 1 levels of 24 bytes).
 * memmove (vector moves in libc) against a struct-copy loop, bench_feed
 * 2026-12-02: 1-3 % fewer instructions per message, time within noise.
 */
static inline void
book__levels_down(struct book_level *levels, unsigned int from, unsigned int depth)
{
	if (from + 1 < depth)
		memmove(&levels[from + 1], &levels[from],
				(size_t)(depth - 1 - from) * sizeof(*levels));
}

static inline void
book__levels_up(struct book_level *levels, unsigned int to, unsigned int by,
		unsigned int depth)
{
	if (to + by < depth)
		memmove(&levels[to], &levels[to + by],
				(size_t)(depth - by - to) * sizeof(*levels));
}

/*
 * depth in 1..BOOK_MAX_DEPTH (checked by callers).  Tests in order of
 * frequency rather than a switch: a jump table's indirect branch mispredicted
 * more on the captures' mix of New, Change and Delete (bench_feed).
 */
BOOK__ALWAYS_INLINE int
book__levels_apply(struct book_level *levels, unsigned int depth, enum book_action action,
		unsigned int level, const struct book_level *value)
{
	unsigned int i = level - 1, n;
	int was_empty;

	if (action == BOOK_ACTION_CHANGE || action == BOOK_ACTION_OVERLAY) {
		if (level == 0 || level > depth)
			return -ERANGE;
		if (value == NULL)
			return -EINVAL;
		was_empty = levels[i].price == BOOK_PRICE_NONE;
		book__level_set(&levels[i], value);
		return was_empty;
	}
	if (action == BOOK_ACTION_NEW) {
		if (level == 0 || level > depth)
			return -ERANGE;
		if (value == NULL)
			return -EINVAL;
		book__levels_down(levels, i, depth);
		book__level_set(&levels[i], value);
		return 0;
	}
	if (action == BOOK_ACTION_DELETE) {
		if (level == 0 || level > depth)
			return -ERANGE;
		was_empty = levels[i].price == BOOK_PRICE_NONE;
		book__levels_up(levels, i, 1, depth);
		book__level_empty(&levels[depth - 1]);
		return was_empty;
	}
	if (action == BOOK_ACTION_DELETE_THRU) {
		for (i = 0; i < depth; i++)
			book__level_empty(&levels[i]);
		return 0;
	}
	if (action == BOOK_ACTION_DELETE_FROM) {
		if (level == 0)
			return -ERANGE;
		n = level < depth ? level : depth;
		book__levels_up(levels, 0, n, depth);
		for (i = depth - n; i < depth; i++)
			book__level_empty(&levels[i]);
		return 0;
	}
	return -EINVAL;
}

/* The last step of a book hash: spread the value so that sums over books
 * stay distinct. */
static inline uint64_t
book__hash_finish(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	return h ^ (h >> 29);
}

/* One step of the book hashes (book_instrument_hash(), book_mbo_hash()). */
static inline uint64_t
book__mix(uint64_t h, uint64_t v)
{
	h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	h *= UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 32);
}

#endif /* BOOK_PVT_H */
