/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Positional price-level books: CME MDUpdateAction on 1-based levels, the
 * consolidated (outright + implied) view, book hashes and exact price
 * scaling.  Integers only; each operation moves at most BOOK_MAX_DEPTH
 * levels.
 */
#include <errno.h>
#include <string.h>

#include "book.h"
#include "book_pvt.h"

static const struct book_level empty_level = { .price = BOOK_PRICE_NONE };

void
book_levels_clear(struct book_level *levels, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		levels[i] = empty_level;
}

int
book_levels_apply(struct book_level *levels, unsigned int depth, enum book_action action,
		unsigned int level, const struct book_level *value)
{
	if (levels == NULL || depth == 0 || depth > BOOK_MAX_DEPTH)
		return -EINVAL;
	return book__levels_apply(levels, depth, action, level, value);
}

int
book_instrument_init(struct book_instrument *instrument, int32_t security_id,
		unsigned int depth, unsigned int implied_depth, int8_t price_exponent)
{
	if (instrument == NULL || depth == 0 || depth > BOOK_MAX_DEPTH ||
			implied_depth > BOOK_IMPLIED_DEPTH)
		return -EINVAL;
	memset(instrument, 0, sizeof(*instrument));
	instrument->security_id = security_id;
	instrument->depth = (uint8_t)depth;
	instrument->implied_depth = (uint8_t)implied_depth;
	instrument->price_exponent = price_exponent;
	instrument->volume = -1;
	instrument->last_trade.price = BOOK_PRICE_NONE;
	instrument->published.bid_price = BOOK_PRICE_NONE;
	instrument->published.ask_price = BOOK_PRICE_NONE;
	book_instrument_clear(instrument);
	return 0;
}

int
book_instrument_apply(struct book_instrument *instrument, bool implied, enum book_side side,
		enum book_action action, unsigned int level, const struct book_level *value)
{
	struct book_level *levels;
	unsigned int depth;

	if (instrument == NULL)
		return -EINVAL;
	if (implied) {
		levels = side == BOOK_BID ? instrument->implied_bid : instrument->implied_ask;
		depth = instrument->implied_depth;
	} else {
		levels = side == BOOK_BID ? instrument->bid : instrument->ask;
		depth = instrument->depth;
	}
	if (depth == 0)
		return -ERANGE;
	return book__levels_apply(levels, depth, action, level, value);
}

void
book_instrument_clear(struct book_instrument *instrument)
{
	if (instrument == NULL)
		return;
	book_levels_clear(instrument->bid, BOOK_MAX_DEPTH);
	book_levels_clear(instrument->ask, BOOK_MAX_DEPTH);
	book_levels_clear(instrument->implied_bid, BOOK_IMPLIED_DEPTH);
	book_levels_clear(instrument->implied_ask, BOOK_IMPLIED_DEPTH);
}

int
book_instrument_set_depth(struct book_instrument *instrument, unsigned int depth,
		unsigned int implied_depth)
{
	if (instrument == NULL || depth == 0 || depth > BOOK_MAX_DEPTH ||
			implied_depth > BOOK_IMPLIED_DEPTH)
		return -EINVAL;
	if (depth < instrument->depth) {
		book_levels_clear(instrument->bid + depth, BOOK_MAX_DEPTH - depth);
		book_levels_clear(instrument->ask + depth, BOOK_MAX_DEPTH - depth);
	}
	if (implied_depth < instrument->implied_depth) {
		book_levels_clear(instrument->implied_bid + implied_depth,
				BOOK_IMPLIED_DEPTH - implied_depth);
		book_levels_clear(instrument->implied_ask + implied_depth,
				BOOK_IMPLIED_DEPTH - implied_depth);
	}
	instrument->depth = (uint8_t)depth;
	instrument->implied_depth = (uint8_t)implied_depth;
	return 0;
}

void
book_instrument_top(const struct book_instrument *instrument, struct book_top *outright,
		struct book_top *implied, struct book_top *consolidated)
{
	if (outright != NULL)
		*outright = book_instrument_outright_top(instrument);
	if (implied != NULL)
		*implied = book_instrument_implied_top(instrument);
	if (consolidated != NULL)
		*consolidated = book_instrument_consolidated_top(instrument);
}

/* a before b on this side? */
static bool
better(enum book_side side, int64_t a, int64_t b)
{
	return side == BOOK_BID ? a > b : a < b;
}

int
book_consolidated(const struct book_instrument *instrument, enum book_side side,
		struct book_level *out, unsigned int max)
{
	const struct book_level *o, *im;
	unsigned int no, ni, io = 0, ii = 0, n = 0;

	if (instrument == NULL || (out == NULL && max > 0))
		return -EINVAL;
	o = side == BOOK_BID ? instrument->bid : instrument->ask;
	im = side == BOOK_BID ? instrument->implied_bid : instrument->implied_ask;
	no = instrument->depth;
	ni = instrument->implied_depth;
	while (n < max) {
		while (io < no && o[io].price == BOOK_PRICE_NONE)
			io++;
		while (ii < ni && im[ii].price == BOOK_PRICE_NONE)
			ii++;
		if (io >= no && ii >= ni)
			break;
		if (ii >= ni || (io < no && better(side, o[io].price, im[ii].price))) {
			out[n] = o[io++];
		} else if (io >= no || better(side, im[ii].price, o[io].price)) {
			out[n] = im[ii++];
		} else {
			out[n] = o[io++];
			out[n].qty += im[ii].qty;
			out[n].orders += im[ii].orders;
			ii++;
		}
		out[n].reserved = 0;
		n++;
	}
	return (int)n;
}


static uint64_t
hash_levels(uint64_t h, const struct book_level *levels, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		h = book__mix(h, (uint64_t)levels[i].price);
		h = book__mix(h, (uint64_t)levels[i].qty);
		h = book__mix(h, (uint64_t)(uint32_t)levels[i].orders);
	}
	return h;
}

uint64_t
book_instrument_hash(const struct book_instrument *instrument)
{
	uint64_t h = UINT64_C(0x6a09e667f3bcc908);

	if (instrument == NULL)
		return 0;
	h = book__mix(h, (uint64_t)(uint32_t)instrument->security_id);
	h = book__mix(h, instrument->state);
	h = book__mix(h, instrument->rpt_seq);
	h = book__mix(h, (uint64_t)instrument->depth << 8 | instrument->implied_depth);
	h = hash_levels(h, instrument->bid, instrument->depth);
	h = hash_levels(h, instrument->ask, instrument->depth);
	h = hash_levels(h, instrument->implied_bid, instrument->implied_depth);
	h = hash_levels(h, instrument->implied_ask, instrument->implied_depth);
	return book__hash_finish(h);
}

int
book_price_normalize(int64_t mantissa, int exponent, int target_exponent, int64_t *out)
{
	if (out == NULL)
		return -EINVAL;
	return book__price_normalize(mantissa, exponent, target_exponent, out);
}

const int64_t book__pow10[19] = {
	INT64_C(1), INT64_C(10), INT64_C(100), INT64_C(1000), INT64_C(10000), INT64_C(100000),
	INT64_C(1000000), INT64_C(10000000), INT64_C(100000000), INT64_C(1000000000),
	INT64_C(10000000000), INT64_C(100000000000), INT64_C(1000000000000),
	INT64_C(10000000000000), INT64_C(100000000000000), INT64_C(1000000000000000),
	INT64_C(10000000000000000), INT64_C(100000000000000000),
	INT64_C(1000000000000000000),
};

int
book__price_scale(int64_t mantissa, int exponent, int target_exponent, int64_t *out)
{
	int64_t v;
	int d;

	if (mantissa == BOOK_PRICE_NONE)
		return -ERANGE;
	if (mantissa == 0) {
		*out = 0;
		return 0;
	}
	if (exponent > target_exponent) {
		/* 10^19 overflows int64: any non-zero mantissa would too. */
		d = exponent - target_exponent;
		if (d > 18 || __builtin_mul_overflow(mantissa, book__pow10[d], &v) ||
				v == BOOK_PRICE_NONE)
			return -ERANGE;
	} else {
		d = target_exponent - exponent;
		if (d > 18 || mantissa % book__pow10[d] != 0)
			return -ERANGE;
		v = mantissa / book__pow10[d];
	}
	*out = v;
	return 0;
}

const char *
book_state_name(enum book_state state)
{
	switch (state) {
	case BOOK_STATE_OK:
		return "ok";
	case BOOK_STATE_STALE:
		return "stale";
	default:
		return "?";
	}
}

const char *
book_action_name(enum book_action action)
{
	switch (action) {
	case BOOK_ACTION_NEW:
		return "new";
	case BOOK_ACTION_CHANGE:
		return "change";
	case BOOK_ACTION_DELETE:
		return "delete";
	case BOOK_ACTION_DELETE_THRU:
		return "delete_thru";
	case BOOK_ACTION_DELETE_FROM:
		return "delete_from";
	case BOOK_ACTION_OVERLAY:
		return "overlay";
	default:
		return "?";
	}
}
