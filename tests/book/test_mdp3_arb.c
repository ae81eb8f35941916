/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of A/B arbitration (lib/mdp3 mdp3_arb) and routes: first copy
 * wins, duplicates, a gap filled by the other feed, a gap declared lost
 * after N arrivals or T ns (push and poll), reordering within the window,
 * window overflow, a rejected copy refilled by the other feed, flush,
 * sequence resets, oversize and short packets, wraparound, configuration
 * errors; route matching and parsing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tw_test.h"

#include "mdp3_feed.h"

#define MAX_LOG 256

struct log {
	uint32_t seq[MAX_LOG];
	uint8_t feed[MAX_LOG];
	bool held[MAX_LOG];
	unsigned int n;
	uint32_t loss_first[MAX_LOG];
	uint32_t loss_count[MAX_LOG];
	unsigned int losses;
	/* order of events: 'd' delivery, 'l' loss */
	char order[2 * MAX_LOG];
	unsigned int events;
	uint32_t reject_seq;      /* reject this seq ... */
	int reject_feed;          /* ... from this feed (-1: none) */
	unsigned int reject_times;
};

static int
deliver(void *ctx, const struct mdp3_arb_packet *p)
{
	struct log *l = ctx;

	assert_true(p->length >= 4);
	assert_int_equal(p->data[0] | p->data[1] << 8 | p->data[2] << 16 |
			(uint32_t)p->data[3] << 24, p->seq);
	if (l->reject_feed >= 0 && p->seq == l->reject_seq && p->feed == l->reject_feed &&
			l->reject_times > 0) {
		l->reject_times--;
		return -EBADMSG;
	}
	assert_true(l->n < MAX_LOG);
	l->seq[l->n] = p->seq;
	l->feed[l->n] = p->feed;
	l->held[l->n] = p->held;
	l->n++;
	l->order[l->events++] = 'd';
	return 0;
}

static void
loss(void *ctx, uint32_t first, uint32_t count, uint64_t now)
{
	struct log *l = ctx;

	(void)now;
	assert_true(l->losses < MAX_LOG);
	l->loss_first[l->losses] = first;
	l->loss_count[l->losses] = count;
	l->losses++;
	l->order[l->events++] = 'l';
}

static struct mdp3_arb *
make(struct log *l, uint32_t window, uint32_t wait_packets, uint64_t wait_ns)
{
	struct mdp3_arb_config c = {
		.window = window, .wait_packets = wait_packets, .wait_ns = wait_ns,
	};
	struct mdp3_arb_handler h = { .deliver = deliver, .loss = loss, .ctx = l };
	struct mdp3_arb *arb;

	memset(l, 0, sizeof(*l));
	l->reject_feed = -1;
	arb = mdp3_arb_create(&c, &h);
	assert_non_null(arb);
	return arb;
}

static int
push(struct mdp3_arb *arb, enum mdp3_feed_id feed, uint32_t seq, uint64_t t)
{
	uint8_t p[16] = { 0 };

	p[0] = (uint8_t)seq;
	p[1] = (uint8_t)(seq >> 8);
	p[2] = (uint8_t)(seq >> 16);
	p[3] = (uint8_t)(seq >> 24);
	p[12] = 0xab;
	return mdp3_arb_push(arb, feed, p, sizeof(p), t);
}

static void
expect_delivered(const struct log *l, uint32_t first, uint32_t last)
{
	uint32_t s;

	assert_int_equal(l->n, last - first + 1);
	for (s = first; s <= last; s++)
		assert_int_equal(l->seq[s - first], s);
}

static void
test_in_order_and_duplicates(void **state)
{
	struct log l;
	struct mdp3_arb *arb = make(&l, 64, 8, 0);
	const struct mdp3_arb_counters *c = mdp3_arb_counters(arb);
	uint32_t s, next;

	(void)state;
	assert_false(mdp3_arb_next_seq(arb, &next));
	for (s = 100; s < 110; s++) {
		/* B first on even numbers, A first on odd ones */
		enum mdp3_feed_id first = s % 2 == 0 ? MDP3_FEED_B : MDP3_FEED_A;

		assert_int_equal(push(arb, first, s, s), MDP3_ARB_DELIVERED);
		assert_int_equal(push(arb, (enum mdp3_feed_id)(1 - first), s, s),
				MDP3_ARB_DUPLICATE);
	}
	expect_delivered(&l, 100, 109);
	for (s = 0; s < 10; s++) {
		assert_int_equal(l.feed[s], (100 + s) % 2 == 0 ? MDP3_FEED_B : MDP3_FEED_A);
		assert_false(l.held[s]);
	}
	assert_int_equal(c->packets[MDP3_FEED_A], 10);
	assert_int_equal(c->packets[MDP3_FEED_B], 10);
	assert_int_equal(c->accepted[MDP3_FEED_A], 5);
	assert_int_equal(c->accepted[MDP3_FEED_B], 5);
	assert_int_equal(c->duplicates[MDP3_FEED_A] + c->duplicates[MDP3_FEED_B], 10);
	assert_int_equal(c->gaps, 0);
	assert_int_equal(c->held, 0);
	assert_int_equal(c->losses, 0);
	assert_true(mdp3_arb_next_seq(arb, &next));
	assert_int_equal(next, 110);
	/* An old number is a duplicate too. */
	assert_int_equal(push(arb, MDP3_FEED_A, 50, 200), MDP3_ARB_DUPLICATE);
	mdp3_arb_destroy(arb);
}

static void
test_gap_filled_by_other_feed(void **state)
{
	struct log l;
	struct mdp3_arb *arb = make(&l, 64, 100, 1000000);
	const struct mdp3_arb_counters *c = mdp3_arb_counters(arb);

	(void)state;
	assert_int_equal(push(arb, MDP3_FEED_A, 1, 1000), MDP3_ARB_DELIVERED);
	assert_int_equal(push(arb, MDP3_FEED_A, 2, 2000), MDP3_ARB_DELIVERED);
	/* A lost 3; 4 and 5 wait for B's 3 */
	assert_int_equal(push(arb, MDP3_FEED_A, 4, 4000), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 5, 5000), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 5, 5001), MDP3_ARB_DUPLICATE);
	assert_int_equal(c->held_now, 2);
	assert_int_equal(push(arb, MDP3_FEED_B, 3, 7000), MDP3_ARB_DELIVERED);
	expect_delivered(&l, 1, 5);
	assert_int_equal(l.feed[2], MDP3_FEED_B);
	assert_false(l.held[2]);
	assert_true(l.held[3] && l.held[4]);
	assert_int_equal(push(arb, MDP3_FEED_B, 4, 7100), MDP3_ARB_DUPLICATE);
	assert_int_equal(c->gaps, 1);
	assert_int_equal(c->gaps_filled, 1);
	assert_int_equal(c->held, 2);
	assert_int_equal(c->max_held, 2);
	assert_int_equal(c->held_now, 0);
	assert_int_equal(c->max_hold_ns, 3000); /* 4 waited from 4000 to 7000 */
	assert_int_equal(c->losses, 0);
	assert_int_equal(l.losses, 0);
	mdp3_arb_destroy(arb);
}

static void
test_gap_lost_after_n_packets(void **state)
{
	struct log l;
	struct mdp3_arb *arb = make(&l, 64, 3, 0);
	const struct mdp3_arb_counters *c = mdp3_arb_counters(arb);

	(void)state;
	push(arb, MDP3_FEED_A, 1, 0);
	assert_int_equal(push(arb, MDP3_FEED_A, 3, 0), MDP3_ARB_HELD); /* wait starts */
	assert_int_equal(push(arb, MDP3_FEED_B, 3, 0), MDP3_ARB_DUPLICATE);
	assert_int_equal(push(arb, MDP3_FEED_A, 4, 0), MDP3_ARB_HELD);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.losses, 0);
	/* third arrival after the first held packet: 2 is declared lost */
	assert_int_equal(push(arb, MDP3_FEED_B, 4, 0), MDP3_ARB_DUPLICATE);
	assert_int_equal(l.losses, 1);
	assert_int_equal(l.loss_first[0], 2);
	assert_int_equal(l.loss_count[0], 1);
	assert_memory_equal(l.order, "dldd", 4); /* the loss comes before 3 */
	assert_int_equal(l.n, 3);
	assert_int_equal(l.seq[1], 3);
	assert_int_equal(l.seq[2], 4);
	assert_int_equal(c->losses, 1);
	assert_int_equal(c->lost_packets, 1);
	/* A late copy of a lost number is dropped. */
	assert_int_equal(push(arb, MDP3_FEED_B, 2, 0), MDP3_ARB_DUPLICATE);
	assert_int_equal(push(arb, MDP3_FEED_A, 5, 0), MDP3_ARB_DELIVERED);
	mdp3_arb_destroy(arb);
}

static void
test_gap_lost_after_t_ns(void **state)
{
	struct log l;
	struct mdp3_arb *arb = make(&l, 64, 0, 1000);

	(void)state;
	push(arb, MDP3_FEED_A, 1, 0);
	assert_int_equal(push(arb, MDP3_FEED_A, 3, 100), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 4, 500), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 5, 1099), MDP3_ARB_HELD);
	assert_int_equal(l.n, 1);
	/* no traffic: time alone expires the gap */
	assert_int_equal(mdp3_arb_poll(arb, 1099), 0);
	assert_int_equal(l.losses, 0);
	assert_int_equal(mdp3_arb_poll(arb, 1100), 3);
	assert_int_equal(l.losses, 1);
	assert_int_equal(l.loss_first[0], 2);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.seq[1], 3);
	assert_int_equal(l.seq[3], 5);
	/* expiry by the time of an arriving packet */
	assert_int_equal(push(arb, MDP3_FEED_A, 7, 2000), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 8, 2999), MDP3_ARB_HELD);
	assert_int_equal(l.losses, 1);
	assert_int_equal(push(arb, MDP3_FEED_A, 9, 3000), MDP3_ARB_HELD);
	assert_int_equal(l.losses, 2);
	assert_int_equal(l.loss_first[1], 6);
	assert_int_equal(l.n, 7);
	assert_int_equal(l.seq[6], 9);
	assert_int_equal(mdp3_arb_counters(arb)->max_hold_ns, 1000);
	mdp3_arb_destroy(arb);
}

/*
 * One clock (issue 18): a copy that arrives after its gap's wait ran out
 * cannot fill it, whether a poll ran in between or not; one that arrives
 * at the deadline itself still does. So the verdicts depend on rx times
 * alone, not on when the caller polled.
 */
static void
test_late_copy_cannot_fill(void **state)
{
	struct log l;
	struct mdp3_arb *arb;

	(void)state;
	for (int polled = 0; polled < 2; polled++) {
		arb = make(&l, 64, 0, 1000);
		push(arb, MDP3_FEED_A, 1, 0);
		assert_int_equal(push(arb, MDP3_FEED_A, 3, 100), MDP3_ARB_HELD);
		if (polled)
			assert_int_equal(mdp3_arb_poll(arb, 1100), 1);
		/* the wait of 2 ran out at 1100: B's copy at 1101 is too late */
		assert_int_equal(push(arb, MDP3_FEED_B, 2, 1101), MDP3_ARB_DUPLICATE);
		assert_int_equal(l.losses, 1);
		assert_int_equal(l.loss_first[0], 2);
		assert_int_equal(l.n, 2);
		assert_int_equal(l.seq[1], 3);
		mdp3_arb_destroy(arb);
	}
	/* at the deadline itself the copy fills the gap */
	arb = make(&l, 64, 0, 1000);
	push(arb, MDP3_FEED_A, 1, 0);
	assert_int_equal(push(arb, MDP3_FEED_A, 3, 100), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_B, 2, 1100), MDP3_ARB_DELIVERED);
	assert_int_equal(l.losses, 0);
	expect_delivered(&l, 1, 3);
	mdp3_arb_destroy(arb);
}

static void
test_reordering_within_window(void **state)
{
	static const uint32_t arrivals[] = { 1, 3, 2, 6, 5, 4, 7, 9, 8, 10 };
	struct log l;
	struct mdp3_arb *arb = make(&l, 8, 100, 0);
	const struct mdp3_arb_counters *c = mdp3_arb_counters(arb);
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(arrivals) / sizeof(arrivals[0]); i++)
		push(arb, MDP3_FEED_A, arrivals[i], i);
	expect_delivered(&l, 1, 10);
	assert_int_equal(c->losses, 0);
	assert_int_equal(c->held, 4); /* 3, 6, 5, 9 */
	assert_int_equal(c->max_held, 2);
	assert_int_equal(c->gaps, 3);  /* 2 behind 3, 4-5 behind 6 (5 shrinks it), 8 */
	assert_int_equal(c->held_now, 0);
	mdp3_arb_destroy(arb);
}

static void
test_window_overflow(void **state)
{
	struct log l;
	struct mdp3_arb *arb = make(&l, 4, 1000, 0);
	const struct mdp3_arb_counters *c = mdp3_arb_counters(arb);

	(void)state;
	push(arb, MDP3_FEED_A, 1, 0);
	assert_int_equal(push(arb, MDP3_FEED_A, 3, 0), MDP3_ARB_HELD);
	/* 10 is 8 ahead of 2 with a 4-slot window: 2..6 must be settled */
	assert_int_equal(push(arb, MDP3_FEED_A, 10, 0), MDP3_ARB_HELD);
	assert_int_equal(c->window_overflows, 1);
	assert_int_equal(l.losses, 2);
	assert_int_equal(l.loss_first[0], 2);
	assert_int_equal(l.loss_count[0], 1);
	assert_int_equal(l.loss_first[1], 4);
	assert_int_equal(l.loss_count[1], 3);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.seq[1], 3);
	/* 7..9 still wait; 8 arrives, then the end of input */
	assert_int_equal(push(arb, MDP3_FEED_B, 8, 0), MDP3_ARB_HELD);
	assert_int_equal(mdp3_arb_flush(arb, 0), 2);
	assert_int_equal(l.losses, 4);
	assert_int_equal(l.loss_first[2], 7);
	assert_int_equal(l.loss_count[2], 1);
	assert_int_equal(l.loss_first[3], 9);
	assert_int_equal(l.seq[2], 8);
	assert_int_equal(l.seq[3], 10);
	assert_int_equal(c->lost_packets, 6);
	/* a jump far beyond the window: one range, no slot walk beyond */
	assert_int_equal(push(arb, MDP3_FEED_A, 1000011, 0), MDP3_ARB_HELD);
	assert_int_equal(l.loss_first[4], 11);
	assert_int_equal(l.loss_count[4], 1000011 - 3 - 11);
	assert_int_equal(mdp3_arb_flush(arb, 0), 1);
	mdp3_arb_destroy(arb);
}

static void
test_rejected_copy_refilled(void **state)
{
	struct log l;
	struct mdp3_arb *arb = make(&l, 16, 100, 0);
	const struct mdp3_arb_counters *c = mdp3_arb_counters(arb);

	(void)state;
	push(arb, MDP3_FEED_A, 1, 0);
	l.reject_feed = MDP3_FEED_A;
	l.reject_seq = 2;
	l.reject_times = 1;
	assert_int_equal(push(arb, MDP3_FEED_A, 2, 0), MDP3_ARB_REJECTED);
	assert_int_equal(c->rejected[MDP3_FEED_A], 1);
	assert_int_equal(push(arb, MDP3_FEED_A, 3, 0), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_B, 2, 0), MDP3_ARB_DELIVERED);
	expect_delivered(&l, 1, 3);
	assert_int_equal(l.feed[1], MDP3_FEED_B);
	/* a held copy rejected on release: the other feed's copy fills it */
	l.reject_seq = 5;
	l.reject_times = 1;
	assert_int_equal(push(arb, MDP3_FEED_A, 5, 0), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 6, 0), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 4, 0), MDP3_ARB_DELIVERED);
	assert_int_equal(l.n, 4);
	assert_int_equal(c->rejected[MDP3_FEED_A], 2);
	assert_int_equal(c->held_now, 1);
	assert_int_equal(push(arb, MDP3_FEED_B, 5, 0), MDP3_ARB_DELIVERED);
	expect_delivered(&l, 1, 6);
	assert_int_equal(c->losses, 0);
	mdp3_arb_destroy(arb);
}

static void
test_resets_and_initial_seq(void **state)
{
	struct mdp3_arb_config cfg = { .initial_seq = 10, .reset_distance = 1000 };
	struct mdp3_arb_handler h = { .deliver = deliver, .loss = loss };
	struct log l;
	struct mdp3_arb *arb;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.reject_feed = -1;
	h.ctx = &l;
	arb = mdp3_arb_create(&cfg, &h);
	assert_non_null(arb);
	assert_int_equal(push(arb, MDP3_FEED_A, 9, 0), MDP3_ARB_DUPLICATE);
	assert_int_equal(push(arb, MDP3_FEED_A, 11, 0), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_B, 10, 0), MDP3_ARB_DELIVERED);
	expect_delivered(&l, 10, 11);
	push(arb, MDP3_FEED_A, 5000, 0);
	assert_int_equal(push(arb, MDP3_FEED_A, 5002, 0), MDP3_ARB_HELD);
	/* far behind: the exchange restarted at 1; 5001 lost, 5002 released first */
	assert_int_equal(push(arb, MDP3_FEED_A, 1, 0), MDP3_ARB_DELIVERED);
	assert_int_equal(mdp3_arb_counters(arb)->seq_resets, 1);
	assert_int_equal(l.seq[l.n - 1], 1);
	assert_int_equal(l.seq[l.n - 2], 5002);
	assert_int_equal(push(arb, MDP3_FEED_B, 2, 0), MDP3_ARB_DELIVERED);
	/* manual reset: the next packet sets the sequence */
	mdp3_arb_reset(arb);
	assert_false(mdp3_arb_next_seq(arb, NULL));
	assert_int_equal(push(arb, MDP3_FEED_A, 77, 0), MDP3_ARB_DELIVERED);
	assert_int_equal(mdp3_arb_counters(arb)->seq_resets, 2);
	mdp3_arb_destroy(arb);
}

static void
test_oversize_short_wraparound(void **state)
{
	struct mdp3_arb_config cfg = { .max_packet_size = 64 };
	struct mdp3_arb_handler h = { .deliver = deliver, .loss = loss };
	uint8_t big[100] = { 0 };
	struct log l;
	struct mdp3_arb *arb;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.reject_feed = -1;
	h.ctx = &l;
	arb = mdp3_arb_create(&cfg, &h);
	assert_non_null(arb);
	big[0] = 1;
	assert_int_equal(mdp3_arb_push(arb, MDP3_FEED_A, big, sizeof(big), 0), MDP3_ARB_DELIVERED);
	big[0] = 3;
	assert_int_equal(mdp3_arb_push(arb, MDP3_FEED_A, big, sizeof(big), 0), MDP3_ARB_DROPPED);
	assert_int_equal(mdp3_arb_counters(arb)->oversize, 1);
	assert_int_equal(mdp3_arb_push(arb, MDP3_FEED_A, big, 3, 0), MDP3_ARB_DROPPED);
	assert_int_equal(mdp3_arb_counters(arb)->short_packets, 1);
	assert_int_equal(mdp3_arb_push(arb, MDP3_FEED_A, NULL, 3, 0), -EINVAL);
	assert_int_equal(mdp3_arb_push(arb, (enum mdp3_feed_id)2, big, 3, 0), -EINVAL);
	assert_int_equal(mdp3_arb_push(NULL, MDP3_FEED_A, big, 3, 0), -EINVAL);
	mdp3_arb_destroy(arb);

	/* MsgSeqNum wraps around 2^32 */
	arb = make(&l, 8, 100, 0);
	assert_int_equal(push(arb, MDP3_FEED_A, 0xfffffffeu, 0), MDP3_ARB_DELIVERED);
	assert_int_equal(push(arb, MDP3_FEED_A, 0, 0), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_A, 1, 0), MDP3_ARB_HELD);
	assert_int_equal(push(arb, MDP3_FEED_B, 0xffffffffu, 0), MDP3_ARB_DELIVERED);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.seq[1], 0xffffffffu);
	assert_int_equal(l.seq[2], 0);
	assert_int_equal(l.seq[3], 1);
	assert_int_equal(push(arb, MDP3_FEED_B, 0xfffffffeu, 0), MDP3_ARB_DUPLICATE);
	mdp3_arb_destroy(arb);
}

static int
deliver_nothing(void *ctx, const struct mdp3_arb_packet *p)
{
	(void)ctx;
	(void)p;
	return 0;
}

static void
test_config_errors(void **state)
{
	struct mdp3_arb_handler h = { .deliver = deliver_nothing };
	struct mdp3_arb_config c = { .window = 3 };
	struct mdp3_arb *arb;
	size_t size;
	void *mem;

	(void)state;
	errno = 0;
	assert_int_equal(mdp3_arb_memsize(&c), 0);
	assert_int_equal(errno, EINVAL);
	c.window = MDP3_ARB_WINDOW_MAX * 2;
	assert_int_equal(mdp3_arb_memsize(&c), 0);
	c.window = 1;
	assert_int_equal(mdp3_arb_memsize(&c), 0);
	c.window = 0;
	c.max_packet_size = 70000;
	assert_int_equal(mdp3_arb_memsize(&c), 0);
	size = mdp3_arb_memsize(NULL);
	assert_true(size > MDP3_ARB_DEFAULT_WINDOW * MDP3_ARB_DEFAULT_MAX_PACKET);
	mem = aligned_alloc(64, size + 64);
	assert_non_null(mem);
	assert_null(mdp3_arb_init(mem, size - 1, NULL, &h));
	assert_int_equal(errno, ENOSPC);
	assert_null(mdp3_arb_init((uint8_t *)mem + 8, size, NULL, &h));
	assert_int_equal(errno, EINVAL);
	assert_null(mdp3_arb_init(mem, size, NULL, NULL));
	assert_int_equal(errno, EINVAL);
	arb = mdp3_arb_init(mem, size, NULL, &h);
	assert_non_null(arb);
	assert_int_equal(mdp3_arb_config(arb)->window, MDP3_ARB_DEFAULT_WINDOW);
	assert_int_equal(mdp3_arb_config(arb)->wait_packets, MDP3_ARB_DEFAULT_WAIT_PACKETS);
	assert_int_equal(mdp3_arb_config(arb)->wait_ns, MDP3_ARB_DEFAULT_WAIT_NS);
	mdp3_arb_destroy(arb); /* not from create: no free, no crash */
	free(mem);
	assert_int_equal(mdp3_arb_poll(NULL, 0), -EINVAL);
	assert_int_equal(mdp3_arb_flush(NULL, 0), -EINVAL);
	assert_null(mdp3_arb_counters(NULL));
	assert_string_equal(mdp3_feed_name(MDP3_FEED_B), "B");
	assert_string_equal(mdp3_stream_name(MDP3_STREAM_SNAPSHOT), "snapshot");
	assert_string_equal(mdp3_stream_name((enum mdp3_stream)7), "?");
}

static uint32_t
ip(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
}

static void
test_routes(void **state)
{
	struct mdp3_routes routes;
	struct mdp3_route r;
	int i;

	(void)state;
	assert_int_equal(mdp3_routes_init(&routes, true), 0);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 31, 64), 14340, &r), 0);
	assert_int_equal(r.stream, MDP3_STREAM_INCREMENTAL);
	assert_int_equal(r.feed, MDP3_FEED_A);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 32, 11), 15320, &r), 0);
	assert_int_equal(r.feed, MDP3_FEED_B);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 28, 3), 14312, &r), -ENOENT);
	/* The snapshot group of channel 310 sits inside the A /24: /32 wins. */
	assert_int_equal(mdp3_route_parse("224.0.31.22", &r), 0);
	assert_int_equal(r.prefix_len, 32);
	assert_int_equal(r.port, 0);
	r.stream = MDP3_STREAM_SNAPSHOT;
	r.feed = MDP3_FEED_A;
	assert_int_equal(mdp3_routes_add(&routes, &r), 0);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 31, 22), 14310, &r), 0);
	assert_int_equal(r.stream, MDP3_STREAM_SNAPSHOT);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 31, 1), 14310, &r), 0);
	assert_int_equal(r.stream, MDP3_STREAM_INCREMENTAL);
	/* A port-specific route beats a route for any port of the same prefix. */
	assert_int_equal(mdp3_route_parse("224.0.31.0/24:14999", &r), 0);
	r.stream = MDP3_STREAM_DEFINITION;
	r.feed = MDP3_FEED_A;
	assert_int_equal(mdp3_routes_add(&routes, &r), 0);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 31, 9), 14999, &r), 0);
	assert_int_equal(r.stream, MDP3_STREAM_DEFINITION);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 31, 9), 14998, &r), 0);
	assert_int_equal(r.stream, MDP3_STREAM_INCREMENTAL);
	/* Override feed A: remove its routes, add the v9.1 example groups. */
	assert_int_equal(mdp3_routes_remove(&routes, MDP3_STREAM_INCREMENTAL, MDP3_FEED_A), 1);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 31, 9), 14998, &r), -ENOENT);
	assert_int_equal(mdp3_route_parse("224.0.28.0/25", &r), 0);
	assert_int_equal(r.group, ip(224, 0, 28, 0));
	r.stream = MDP3_STREAM_INCREMENTAL;
	r.feed = MDP3_FEED_A;
	assert_int_equal(mdp3_routes_add(&routes, &r), 0);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 28, 20), 14361, &r), 0);
	assert_int_equal(r.feed, MDP3_FEED_A);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 28, 146), 15360, &r), -ENOENT);
	/* Same group/prefix/port replaces. */
	r.feed = MDP3_FEED_B;
	r.group = ip(224, 0, 28, 0);
	r.prefix_len = 25;
	r.port = 0;
	assert_int_equal(mdp3_routes_add(&routes, &r), 0);
	assert_int_equal(mdp3_routes_match(&routes, ip(224, 0, 28, 20), 1, &r), 0);
	assert_int_equal(r.feed, MDP3_FEED_B);
	/* parse errors */
	assert_int_equal(mdp3_route_parse("224.0.31", &r), -EINVAL);
	assert_int_equal(mdp3_route_parse("224.0.31.256", &r), -EINVAL);
	assert_int_equal(mdp3_route_parse("224.0.31.1/33", &r), -EINVAL);
	assert_int_equal(mdp3_route_parse("224.0.31.1:0", &r), -EINVAL);
	assert_int_equal(mdp3_route_parse("224.0.31.1:65536", &r), -EINVAL);
	assert_int_equal(mdp3_route_parse("224.0.31.1x", &r), -EINVAL);
	assert_int_equal(mdp3_route_parse("", &r), -EINVAL);
	assert_int_equal(mdp3_route_parse(NULL, &r), -EINVAL);
	/* bounds */
	r.prefix_len = 33;
	assert_int_equal(mdp3_routes_add(&routes, &r), -EINVAL);
	r.prefix_len = 32;
	r.stream = MDP3_STREAM_COUNT;
	assert_int_equal(mdp3_routes_add(&routes, &r), -EINVAL);
	r.stream = 0;
	mdp3_routes_init(&routes, false);
	for (i = 0; i < MDP3_ROUTES_MAX; i++) {
		r.group = (uint32_t)i;
		assert_int_equal(mdp3_routes_add(&routes, &r), 0);
	}
	r.group = 9999;
	assert_int_equal(mdp3_routes_add(&routes, &r), -ENOSPC);
	assert_int_equal(mdp3_routes_match(NULL, 0, 0, &r), -EINVAL);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_and_duplicates),
		cmocka_unit_test(test_gap_filled_by_other_feed),
		cmocka_unit_test(test_gap_lost_after_n_packets),
		cmocka_unit_test(test_gap_lost_after_t_ns),
		cmocka_unit_test(test_late_copy_cannot_fill),
		cmocka_unit_test(test_reordering_within_window),
		cmocka_unit_test(test_window_overflow),
		cmocka_unit_test(test_rejected_copy_refilled),
		cmocka_unit_test(test_resets_and_initial_seq),
		cmocka_unit_test(test_oversize_short_wraparound),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_routes),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
