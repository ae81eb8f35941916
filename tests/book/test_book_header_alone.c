/* SPDX-License-Identifier: BSD-3-Clause
 * Each public header of the feed compiles on its own: book.h is the first
 * include of this file, mdp3_feed.h of header_mdp3_feed_alone.c.
 */
#include "book.h"

#include "tw_test.h"

int header_mdp3_feed_alone(void);

static void
test_book_header_alone(void **state)
{
	struct book_instrument in;

	(void)state;
	assert_int_equal(book_instrument_init(&in, 42, BOOK_MAX_DEPTH, BOOK_IMPLIED_DEPTH,
				BOOK_DEFAULT_PRICE_EXPONENT), 0);
	assert_int_equal(in.security_id, 42);
	assert_int_equal(header_mdp3_feed_alone(), MDP3_FEED_COUNT);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_book_header_alone),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
