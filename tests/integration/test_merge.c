/* SPDX-License-Identifier: BSD-3-Clause
 * tw_merge: the paced appliance's release order (issue 18, item 0). Two
 * inputs whose datagrams reach the decode lcore in another interleaving
 * come out in release order, and a datagram waits while another input may
 * still bring an older one: released to it and neither arrived nor dropped
 * by its poller (taken off the ring, or still in the hand-off queue), or
 * released after the caller's snapshot.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tw_merge.h"

static void
push(struct tw_merge *m, uint32_t input, uint64_t g)
{
	struct tw_rx rx;

	memset(&rx, 0, sizeof(rx));
	rx.release = g;
	rx.rx_ns = 1000 + g;
	assert_int_equal(tw_merge_push(m, input, &rx, g), 0);
}

/* Deliver what @p pr lets go into @p out. @return how many. */
static unsigned int
drain(struct tw_merge *m, const struct tw_merge_progress *pr, uint64_t *out, unsigned int cap)
{
	const struct tw_rx *rx;
	unsigned int n = 0;

	while ((rx = tw_merge_next(m, pr)) != NULL) {
		assert_true(n < cap);
		out[n++] = rx->release;
		tw_merge_pop(m);
	}
	return n;
}

/* Feed B's datagrams reach the merge before A's older ones. */
static void
test_interleaving_restored(void **state)
{
	struct tw_merge *m = tw_merge_create(2, 16);
	/* releases 0..5: A 0, B 1, A 2, B 3, A 4, B 5, all arrived */
	const struct tw_merge_progress pr = {
		.next = 6, .released = {3, 3}, .gone = {0, 0},
	};
	uint64_t out[8];

	(void)state;
	assert_non_null(m);
	push(m, 1, 1);
	push(m, 1, 3);
	push(m, 1, 5);
	push(m, 0, 0);
	push(m, 0, 2);
	push(m, 0, 4);
	assert_int_equal(drain(m, &pr, out, 8), 6);
	for (unsigned int i = 0; i < 6; i++)
		assert_int_equal(out[i], i);
	assert_true(tw_merge_settled(m, &pr));
	tw_merge_destroy(m);
}

/* Input A has a release on its way (on its ring, or handed over behind
 * another producer's unfinished enqueue): B waits until it arrives. */
static void
test_waits_for_consumer(void **state)
{
	struct tw_merge *m = tw_merge_create(2, 16);
	struct tw_merge_progress pr = {
		.next = 2, .released = {1, 1}, .gone = {0, 0},
	};
	uint64_t out[4];

	(void)state;
	push(m, 1, 1);
	assert_int_equal(drain(m, &pr, out, 4), 0);
	assert_false(tw_merge_settled(m, &pr));
	/* it arrives */
	push(m, 0, 0);
	assert_int_equal(drain(m, &pr, out, 4), 2);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 1);
	tw_merge_destroy(m);
}

/* A datagram released after the snapshot (g >= next) waits for the next
 * one; a frame its poller dropped (gone, never pushed) does not hold
 * anything up. */
static void
test_snapshot_bound_and_drops(void **state)
{
	struct tw_merge *m = tw_merge_create(2, 16);
	struct tw_merge_progress pr = {
		.next = 1, .released = {1, 0}, .gone = {0, 0},
	};
	uint64_t out[4];

	(void)state;
	push(m, 1, 1);                  /* released after the snapshot */
	assert_int_equal(drain(m, &pr, out, 4), 0);
	/* release 0 (A) was dropped by its poller: B goes */
	pr = (struct tw_merge_progress){ .next = 2, .released = {1, 1}, .gone = {1, 1} };
	assert_int_equal(drain(m, &pr, out, 4), 1);
	assert_int_equal(out[0], 1);
	assert_true(tw_merge_settled(m, &pr));
	tw_merge_destroy(m);
}

/* Bounded: a full FIFO refuses (counted), the creation checks its arguments. */
static void
test_bounds(void **state)
{
	struct tw_merge *m = tw_merge_create(1, 3);   /* 4 slots */
	struct tw_merge_stats st;
	struct tw_rx rx;

	(void)state;
	memset(&rx, 0, sizeof(rx));
	for (uint64_t g = 0; g < 4; g++)
		assert_int_equal(tw_merge_push(m, 0, &rx, g), 0);
	assert_int_equal(tw_merge_push(m, 0, &rx, 4), -ENOBUFS);
	assert_int_equal(tw_merge_held(m), 4);
	tw_merge_stats(m, &st);
	assert_int_equal(st.overflow, 1);
	assert_int_equal(st.pushed, 4);
	tw_merge_destroy(m);
	assert_null(tw_merge_create(0, 4));
	assert_null(tw_merge_create(TW_MERGE_MAX_INPUTS + 1, 4));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaving_restored),
		cmocka_unit_test(test_waits_for_consumer),
		cmocka_unit_test(test_snapshot_bound_and_drops),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
