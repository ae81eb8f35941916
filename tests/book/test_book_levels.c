/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the positional books: every MDUpdateAction with CME's
 * semantics and its edge cases (level 0, level beyond depth, operations on
 * empty levels, DeleteFrom past the depth), the implied book and the
 * consolidated view, tops, exact price scaling and the book hash.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tw_test.h"

#include "book.h"

static struct book_level
lv(int64_t price, int64_t qty, int32_t orders)
{
	struct book_level l = { .price = price, .qty = qty, .orders = orders };

	return l;
}

/* Levels as expected prices (0 = empty) */
static void
expect_prices(const struct book_level *levels, unsigned int n, const int64_t *prices)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (prices[i] == 0) {
			assert_true(levels[i].price == BOOK_PRICE_NONE);
			assert_int_equal(levels[i].qty, 0);
			assert_int_equal(levels[i].orders, 0);
		} else {
			assert_int_equal(levels[i].price, prices[i]);
		}
	}
}

static void
fill5(struct book_level *l)
{
	struct book_level v;
	int i;

	book_levels_clear(l, 5);
	for (i = 0; i < 5; i++) {
		v = lv(100 - i, 10 + i, 1 + i);
		assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_CHANGE, (unsigned int)i + 1,
					&v), 1);
	}
}

static void
test_new_shifts_down_and_drops_beyond_depth(void **state)
{
	struct book_level l[5], v = lv(99, 7, 2);
	const int64_t at3[] = { 100, 99, 99, 98, 97 };
	const int64_t at1[] = { 101, 100, 99, 99, 98 };
	const int64_t at5[] = { 101, 100, 99, 99, 50 };

	(void)state;
	fill5(l);
	v.price = 99;
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_NEW, 3, &v), 0);
	expect_prices(l, 5, at3);
	assert_int_equal(l[2].qty, 7);
	assert_int_equal(l[2].orders, 2);
	assert_int_equal(l[3].qty, 12); /* old level 3 moved to 4 */
	v.price = 101;
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_NEW, 1, &v), 0);
	expect_prices(l, 5, at1);   /* old level 5 (97) fell off */
	v.price = 50;
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_NEW, 5, &v), 0);
	expect_prices(l, 5, at5);   /* New at the last level replaces it */
}

static void
test_level_zero_and_beyond_depth(void **state)
{
	struct book_level l[BOOK_MAX_DEPTH], before[BOOK_MAX_DEPTH], v = lv(1, 1, 1);
	enum book_action a;

	(void)state;
	fill5(l);
	memcpy(before, l, sizeof(l));
	for (a = BOOK_ACTION_NEW; a <= BOOK_ACTION_OVERLAY; a++) {
		if (a == BOOK_ACTION_DELETE_THRU)
			continue;
		assert_int_equal(book_levels_apply(l, 5, a, 0, &v), -ERANGE);
		if (a != BOOK_ACTION_DELETE_FROM)
			assert_int_equal(book_levels_apply(l, 5, a, 6, &v), -ERANGE);
		assert_memory_equal(l, before, 5 * sizeof(l[0]));
	}
	assert_int_equal(book_levels_apply(l, 5, (enum book_action)6, 1, &v), -EINVAL);
	assert_int_equal(book_levels_apply(l, 0, BOOK_ACTION_NEW, 1, &v), -EINVAL);
	assert_int_equal(book_levels_apply(l, BOOK_MAX_DEPTH + 1, BOOK_ACTION_NEW, 1, &v),
			-EINVAL);
	assert_int_equal(book_levels_apply(NULL, 5, BOOK_ACTION_NEW, 1, &v), -EINVAL);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_NEW, 1, NULL), -EINVAL);
	assert_memory_equal(l, before, 5 * sizeof(l[0]));
}

static void
test_change_and_overlay(void **state)
{
	struct book_level l[5], v = lv(99, 42, 3);

	(void)state;
	fill5(l);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_CHANGE, 2, &v), 0);
	assert_int_equal(l[1].qty, 42);
	assert_int_equal(l[1].orders, 3);
	assert_int_equal(l[0].price, 100);
	assert_int_equal(l[2].price, 98);
	v = lv(95, 5, 1); /* overlay replaces price too, no shift */
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_OVERLAY, 4, &v), 0);
	assert_int_equal(l[3].price, 95);
	assert_int_equal(l[3].qty, 5);
	assert_int_equal(l[4].price, 96);
	/* On an empty level: applied, reported as missing. */
	book_levels_clear(&l[4], 1);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_CHANGE, 5, &v), 1);
	assert_int_equal(l[4].price, 95);
	book_levels_clear(&l[4], 1);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_OVERLAY, 5, &v), 1);
}

static void
test_delete_shifts_up(void **state)
{
	struct book_level l[5];
	const int64_t d2[] = { 100, 98, 97, 96, 0 };
	const int64_t d4[] = { 100, 98, 97, 0, 0 };
	const int64_t d5[] = { 100, 98, 97, 0, 0 };

	(void)state;
	fill5(l);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE, 2, NULL), 0);
	expect_prices(l, 5, d2);
	assert_int_equal(l[1].qty, 12);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE, 4, NULL), 0);
	expect_prices(l, 5, d4);
	/* Delete of a missing level: the positions still shift (none below). */
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE, 5, NULL), 1);
	expect_prices(l, 5, d5);
}

static void
test_delete_missing_level_in_middle(void **state)
{
	struct book_level l[5];
	const int64_t after[] = { 100, 99, 97, 96, 0 };

	(void)state;
	fill5(l);
	book_levels_clear(&l[2], 1); /* a hole at level 3 (book joined late) */
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE, 3, NULL), 1);
	expect_prices(l, 5, after);
}

static void
test_delete_thru_and_from(void **state)
{
	struct book_level l[5];
	const int64_t empty[] = { 0, 0, 0, 0, 0 };
	const int64_t from2[] = { 98, 97, 96, 0, 0 };

	(void)state;
	fill5(l);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE_THRU, 0, NULL), 0);
	expect_prices(l, 5, empty);
	fill5(l);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE_FROM, 2, NULL), 0);
	expect_prices(l, 5, from2);
	assert_int_equal(l[0].qty, 12);
	fill5(l);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE_FROM, 5, NULL), 0);
	expect_prices(l, 5, empty);
	fill5(l);
	assert_int_equal(book_levels_apply(l, 5, BOOK_ACTION_DELETE_FROM, 9, NULL), 0);
	expect_prices(l, 5, empty);
}

static void
test_instrument_implied_and_consolidated(void **state)
{
	struct book_instrument in;
	struct book_level v, out[BOOK_CONSOLIDATED_DEPTH];
	struct book_top o, i, c;
	int n;

	(void)state;
	assert_int_equal(book_instrument_init(&in, 7, 3, 2, -2), 0);
	book_instrument_top(&in, &o, &i, &c);
	assert_true(o.bid_price == BOOK_PRICE_NONE && c.ask_price == BOOK_PRICE_NONE);
	/* outright bids 100, 99, 98; implied bids 100, 97 */
	v = lv(100, 5, 2);
	assert_int_equal(book_instrument_apply(&in, false, BOOK_BID, BOOK_ACTION_NEW, 1, &v), 0);
	v = lv(99, 6, 1);
	assert_int_equal(book_instrument_apply(&in, false, BOOK_BID, BOOK_ACTION_NEW, 2, &v), 0);
	v = lv(98, 7, 1);
	assert_int_equal(book_instrument_apply(&in, false, BOOK_BID, BOOK_ACTION_NEW, 3, &v), 0);
	v = lv(100, 3, 0);
	assert_int_equal(book_instrument_apply(&in, true, BOOK_BID, BOOK_ACTION_NEW, 1, &v), 0);
	v = lv(97, 4, 0);
	assert_int_equal(book_instrument_apply(&in, true, BOOK_BID, BOOK_ACTION_NEW, 2, &v), 0);
	/* Implied depth is 2: level 3 is out of range, outright untouched. */
	assert_int_equal(book_instrument_apply(&in, true, BOOK_BID, BOOK_ACTION_NEW, 3, &v),
			-ERANGE);
	/* asks: outright 102; implied 101 */
	v = lv(102, 1, 1);
	assert_int_equal(book_instrument_apply(&in, false, BOOK_ASK, BOOK_ACTION_NEW, 1, &v), 0);
	v = lv(101, 2, 0);
	assert_int_equal(book_instrument_apply(&in, true, BOOK_ASK, BOOK_ACTION_NEW, 1, &v), 0);

	n = book_consolidated(&in, BOOK_BID, out, BOOK_CONSOLIDATED_DEPTH);
	assert_int_equal(n, 4);
	assert_int_equal(out[0].price, 100);
	assert_int_equal(out[0].qty, 8);     /* 5 outright + 3 implied */
	assert_int_equal(out[0].orders, 2);
	assert_int_equal(out[1].price, 99);
	assert_int_equal(out[2].price, 98);
	assert_int_equal(out[3].price, 97);
	assert_int_equal(out[3].qty, 4);
	n = book_consolidated(&in, BOOK_ASK, out, BOOK_CONSOLIDATED_DEPTH);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].price, 101);
	assert_int_equal(out[1].price, 102);
	assert_int_equal(book_consolidated(&in, BOOK_BID, out, 2), 2);

	book_instrument_top(&in, &o, &i, &c);
	assert_int_equal(o.bid_price, 100);
	assert_int_equal(o.bid_qty, 5);
	assert_int_equal(i.bid_price, 100);
	assert_int_equal(i.bid_qty, 3);
	assert_int_equal(c.bid_qty, 8);
	assert_int_equal(o.ask_price, 102);
	assert_int_equal(i.ask_price, 101);
	assert_int_equal(c.ask_price, 101);
	assert_int_equal(c.ask_qty, 2);

	/* A smaller depth empties the levels beyond it. */
	assert_int_equal(book_instrument_set_depth(&in, 2, 1), 0);
	assert_true(in.bid[2].price == BOOK_PRICE_NONE);
	assert_true(in.implied_bid[1].price == BOOK_PRICE_NONE);
	assert_int_equal(book_consolidated(&in, BOOK_BID, out, BOOK_CONSOLIDATED_DEPTH), 2);
	assert_int_equal(book_instrument_set_depth(&in, 0, 1), -EINVAL);
	assert_int_equal(book_instrument_set_depth(&in, 11, 1), -EINVAL);
	assert_int_equal(book_instrument_set_depth(&in, 2, 3), -EINVAL);
	/* No implied book at all. */
	assert_int_equal(book_instrument_set_depth(&in, 2, 0), 0);
	assert_int_equal(book_instrument_apply(&in, true, BOOK_BID, BOOK_ACTION_NEW, 1, &v),
			-ERANGE);
	book_instrument_clear(&in);
	assert_int_equal(book_consolidated(&in, BOOK_ASK, out, BOOK_CONSOLIDATED_DEPTH), 0);
}

static void
test_hash_sees_every_level(void **state)
{
	struct book_instrument a, b;
	struct book_level v = lv(100, 5, 2);
	uint64_t h0;

	(void)state;
	book_instrument_init(&a, 1, 10, 2, -9);
	book_instrument_init(&b, 1, 10, 2, -9);
	assert_true(book_instrument_hash(&a) == book_instrument_hash(&b));
	h0 = book_instrument_hash(&a);
	book_instrument_apply(&a, false, BOOK_ASK, BOOK_ACTION_NEW, 10, &v);
	assert_true(book_instrument_hash(&a) != h0);
	book_instrument_apply(&b, false, BOOK_ASK, BOOK_ACTION_NEW, 10, &v);
	assert_true(book_instrument_hash(&a) == book_instrument_hash(&b));
	v.orders = 3;
	book_instrument_apply(&b, false, BOOK_ASK, BOOK_ACTION_CHANGE, 10, &v);
	assert_true(book_instrument_hash(&a) != book_instrument_hash(&b));
	v.orders = 2;
	book_instrument_apply(&b, false, BOOK_ASK, BOOK_ACTION_CHANGE, 10, &v);
	b.rpt_seq = 5;
	assert_true(book_instrument_hash(&a) != book_instrument_hash(&b));
	b.rpt_seq = 0;
	b.state = BOOK_STATE_STALE;
	assert_true(book_instrument_hash(&a) != book_instrument_hash(&b));
	b.state = BOOK_STATE_OK;
	book_instrument_apply(&b, true, BOOK_BID, BOOK_ACTION_NEW, 2, &v);
	assert_true(book_instrument_hash(&a) != book_instrument_hash(&b));
	/* Bid and ask with the same level are different books. */
	book_instrument_init(&a, 1, 10, 2, -9);
	book_instrument_init(&b, 1, 10, 2, -9);
	book_instrument_apply(&a, false, BOOK_BID, BOOK_ACTION_NEW, 1, &v);
	book_instrument_apply(&b, false, BOOK_ASK, BOOK_ACTION_NEW, 1, &v);
	assert_true(book_instrument_hash(&a) != book_instrument_hash(&b));
}

static void
test_price_normalize(void **state)
{
	int64_t out;

	(void)state;
	assert_int_equal(book_price_normalize(4027500000, -7, -9, &out), 0);
	assert_int_equal(out, 402750000000);
	assert_int_equal(book_price_normalize(402750000000, -9, -7, &out), 0);
	assert_int_equal(out, 4027500000);
	assert_int_equal(book_price_normalize(402750000001, -9, -7, &out), -ERANGE);
	assert_int_equal(book_price_normalize(-25, -2, -9, &out), 0);
	assert_int_equal(out, -250000000);
	assert_int_equal(book_price_normalize(INT64_MAX / 10 + 1, -8, -9, &out), -ERANGE);
	assert_int_equal(book_price_normalize(INT64_MIN / 10 - 1, -8, -9, &out), -ERANGE);
	assert_int_equal(book_price_normalize(BOOK_PRICE_NONE, -9, -9, &out), -ERANGE);
	assert_int_equal(book_price_normalize(1, 0, -19, &out), -ERANGE);
	assert_int_equal(book_price_normalize(0, 10, -30, &out), 0);
	assert_int_equal(out, 0);
	assert_int_equal(book_price_normalize(123, 5, 5, &out), 0);
	assert_int_equal(out, 123);
	assert_int_equal(book_price_normalize(1, 0, 0, NULL), -EINVAL);
}

static void
test_names(void **state)
{
	struct book_instrument tmp;

	(void)state;
	assert_string_equal(book_action_name(BOOK_ACTION_DELETE_FROM), "delete_from");
	assert_string_equal(book_action_name((enum book_action)9), "?");
	assert_string_equal(book_state_name(BOOK_STATE_STALE), "stale");
	assert_int_equal(book_instrument_init(NULL, 1, 1, 0, -9), -EINVAL);
	assert_int_equal(book_instrument_init(&tmp, 1, 0, 0, -9), -EINVAL);
	assert_int_equal(book_instrument_init(&tmp, 1, 1, 3, -9), -EINVAL);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_shifts_down_and_drops_beyond_depth),
		cmocka_unit_test(test_level_zero_and_beyond_depth),
		cmocka_unit_test(test_change_and_overlay),
		cmocka_unit_test(test_delete_shifts_up),
		cmocka_unit_test(test_delete_missing_level_in_middle),
		cmocka_unit_test(test_delete_thru_and_from),
		cmocka_unit_test(test_instrument_implied_and_consolidated),
		cmocka_unit_test(test_hash_sees_every_level),
		cmocka_unit_test(test_price_normalize),
		cmocka_unit_test(test_names),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
