/* SPDX-License-Identifier: BSD-3-Clause
 * The same-thread lane (issue 15 item 4; act.h, "Same-thread lane"): what a
 * group's handlers send to their own group, on its thread, skips the
 * mailbox. Every test runs once per mailbox queue kind. Checked here:
 *  - the order rule: lane first, one message at a time, so each mailbox
 *    message's cascade runs before the next mailbox message, the same
 *    whatever the step size, and on the group's own thread while another
 *    thread feeds it (timing cannot change it);
 *  - no shared state on the lane path: the mailbox's queue and the
 *    receiver's reference count are untouched (the lane path has no lock
 *    and no atomic read-modify-write; a test cannot see instructions, so
 *    this is checked through the state those would change);
 *  - the counters of every queue kind count lane messages (enqueued,
 *    dequeued, depth, max_depth, lane) and the instrumentation stamps them;
 *  - a full lane spills to the mailbox under its overflow policy, counted,
 *    and per-sender FIFO holds across the spill;
 *  - a bounded step leaves lane and batch messages in order for the next;
 *    destroy discards what is left (counted) and drops the references;
 *  - senders on other threads, or outside handlers, use the mailbox;
 *  - a step nested in the group's own handler is refused (-EBUSY);
 *  - the lane allocates nothing for small messages.
 */
#include <sched.h>
#include <unistd.h>

#include "act_fixture.h"
#include "actor_pvt.h"

#ifdef TW_WRAP_MALLOC
#include "tw_alloc_count.h"
#define MALLOCS() tw_allocations
#else
#define MALLOCS() 0ul
#endif

enum { T_FAN, T_LOG, T_STEP, T_RELAY, T_COUNT };

/*
 * T_FAN: log, then send @fan T_LOG of @size bytes (4..40: above 32 they
 * travel as pool blocks) to the peer, tags tag * 10 + start + k; then check
 * that its own message is intact. T_LOG: log; a tag ending in one 0 (10,
 * 20, not 100) replies tag + 5 (to the sender: an asynchronous act_reply).
 * T_RELAY: log, send the peer T_FAN with tag + 1. The command is 32 bytes,
 * so it travels in the lane's slot.
 */
struct cmd {
	int tag;
	int fan;
	int size;
	int start;
	int pad[4];
};

_Static_assert(sizeof(struct cmd) == 32, "a command travels inline");

#define LOG_MAX 256

struct world;

struct st {
	int id;
	struct world *w;
	struct act_actor *peer;
	int rc[16];          /* T_FAN: each send's result */
	int step_rc, drain_rc;
};

struct world {
	struct act_group *g;
	struct act_actor *a, *b;
	struct st sa, sb;
	int log[LOG_MAX];
	unsigned n;
	/* seen inside handlers */
	uint32_t mailbox_count_max; /* act__queue_count() while the lane held messages */
	uint32_t refs_b_max;
	struct {
		uint32_t qdepth;
		bool pooled, tsc, was_empty;
		struct act_actor *sender, *dest;
	} seen[LOG_MAX];
	_Atomic unsigned done;
};

static void record(struct st *s, const struct act_msg *m, int tag)
{
	struct world *w = s->w;
	unsigned i = w->n;
	uint32_t c = act__queue_count(&w->g->queue);
	uint32_t r = atomic_load(&w->b->refs);

	assert_true(i < LOG_MAX);
	w->log[i] = s->id * 1000 + tag;
	w->seen[i].qdepth = m->qdepth;
	w->seen[i].pooled = act_msg_is_pooled(m);
	w->seen[i].tsc = m->enqueue_tsc != 0;
	w->seen[i].was_empty = m->mailbox_was_empty != 0;
	w->seen[i].sender = m->sender;
	w->seen[i].dest = m->dest;
	w->n = i + 1;
	if (c > w->mailbox_count_max)
		w->mailbox_count_max = c;
	if (r > w->refs_b_max)
		w->refs_b_max = r;
	atomic_store(&w->done, w->n);
}

static void h_fan(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct cmd c = *ACT_PAYLOAD(m, struct cmd);
	int k;

	(void)self;
	record(s, m, c.tag);
	assert_true(c.fan <= 16 && c.size >= 4 && c.size <= 40);
	for (k = 0; k < c.fan; k++) {
		unsigned char out[40] = {0};
		int tag = c.tag * 10 + c.start + k;

		memcpy(out, &tag, sizeof(tag));
		s->rc[k] = act_send_copy(s->peer, T_LOG, out, (uint32_t)c.size);
	}
	/* what the sends wrote did not land on this message (its slot) */
	assert_int_equal(m->type, T_FAN);
	assert_int_equal(m->size, sizeof(c));
	assert_memory_equal(m->payload, &c, sizeof(c));
}

static void h_relay(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct cmd c = *ACT_PAYLOAD(m, struct cmd);

	(void)self;
	record(s, m, c.tag);
	c.tag++;
	assert_int_equal(act_send_copy(s->peer, T_FAN, &c, sizeof(c)), 0);
}

static void h_log(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	int tag = *ACT_PAYLOAD(m, int);

	(void)self;
	record(s, m, tag);
	if (tag % 10 == 0 && tag % 100 != 0) {
		int back = tag + 5;

		assert_int_equal(act_reply(m, T_LOG, &back, sizeof(back)), 0);
	}
}

/* A step nested in the group's own handler: refused. */
static void h_step(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	record(s, m, 0);
	s->step_rc = act_group_step(s->w->g, 0);
	s->drain_rc = act_group_drain(s->w->g);
}

static const act_handler_fn handlers[T_COUNT] = {h_fan, h_log, h_step, h_relay};

static struct world *world_open(enum act_queue_type q, enum act_overflow ov, uint32_t capacity,
				uint32_t lane_capacity)
{
	struct act_group_opts go = {.name = "lane", .queue = q, .overflow = ov,
				    .capacity = capacity, .lane_capacity = lane_capacity,
				    .cpu = -1};
	struct world *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	w->g = act_group_create(&go);
	assert_non_null(w->g);
	w->sa = (struct st){.id = 1, .w = w};
	w->sb = (struct st){.id = 2, .w = w};
	w->a = fx_actor("a", w->g, handlers, T_COUNT, &w->sa, false);
	w->b = fx_actor("b", w->g, handlers, T_COUNT, &w->sb, false);
	w->sa.peer = w->b;
	w->sb.peer = w->a;
	return w;
}

static void world_close(struct world *w)
{
	act_group_drain(w->g);
	act_actor_stop(w->a);
	act_actor_stop(w->b);
	act_actor_destroy(w->a);
	act_actor_destroy(w->b);
	act_group_destroy(w->g);
	free(w);
}

static void send_fan(struct act_actor *to, int tag, int fan, int size)
{
	struct cmd c = {.tag = tag, .fan = fan, .size = size};

	assert_int_equal(act_send_copy(to, T_FAN, &c, sizeof(c)), 0);
}

static void send_log(struct act_actor *to, int tag)
{
	assert_int_equal(act_send_copy(to, T_LOG, &tag, sizeof(tag)), 0);
}

static void stats(struct world *w, struct act_mailbox_stats *st)
{
	act_group_mailbox_stats(w->g, st);
}

/* ------------------------------------------------------------------------ */
/* Order                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Mailbox: A/fan 1, A/fan 2, B/3 (fan: two 8-byte sends to B; B replies to
 * a tag ending in 0). The lane rule gives exactly this order; a runtime
 * without the lane (everything through the mailbox) would run B/3 third.
 */
static const int expected_order[] = {
	1001, 2010, 2011, 1015, /* A/fan 1, its cascade, the reply to A */
	1002, 2020, 2021, 1025,
	2003,
};
#define N_EXPECTED (sizeof(expected_order) / sizeof(expected_order[0]))

static void feed_order(struct world *w)
{
	send_fan(w->a, 1, 2, 8);
	send_fan(w->a, 2, 2, 8);
	send_log(w->b, 3);
}

/* The log holds exactly @order, @n entries. */
static void expect_log(const struct world *w, const int *order, unsigned n)
{
	unsigned i;

	assert_int_equal(w->n, n);
	for (i = 0; i < n; i++)
		assert_int_equal(w->log[i], order[i]);
}

static void check_order(const struct world *w)
{
	expect_log(w, expected_order, N_EXPECTED);
}

/* Every step size gives the same order: drain, and steps of 1, 2, 3, 5. */
static void order_rule_any_step(void **unused)
{
	static const uint32_t steps[] = {0, 1, 2, 3, 5};
	unsigned k;

	(void)unused;
	for (k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 0);
		struct act_mailbox_stats st;
		int n, total = 0;

		feed_order(w);
		assert_int_equal(act_group_bind(w->g), 0);
		if (steps[k] == 0) {
			total = act_group_drain(w->g);
		} else {
			while ((n = act_group_step(w->g, steps[k])) > 0) {
				assert_true(n <= (int)steps[k]);
				total += n;
			}
			assert_int_equal(n, 0);
		}
		assert_int_equal(total, N_EXPECTED);
		check_order(w);
		/* replies and cascades took the lane, the fed messages the mailbox */
		stats(w, &st);
		assert_int_equal(st.lane, 6);
		assert_int_equal(st.lane_full, 0);
		assert_int_equal(st.enqueued, N_EXPECTED);
		assert_int_equal(st.dequeued, N_EXPECTED);
		assert_int_equal(act_group_queued(w->g), 0);
		/* replies: sender and destination as through the mailbox */
		assert_ptr_equal(w->seen[3].sender, w->b);
		assert_ptr_equal(w->seen[3].dest, w->a);
		assert_false(w->seen[1].pooled); /* 8 bytes: copied into the slot */
		world_close(w);
	}
}

/*
 * On the group's own thread, fed by this thread while it runs: the same
 * order, whatever the timing (a cascade never interleaves with later
 * mailbox messages). Repeated so that several interleavings are tried.
 */
static void order_rule_on_group_thread(void **unused)
{
	unsigned rep;

	(void)unused;
	for (rep = 0; rep < 20; rep++) {
		struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 0);
		double t0 = tw_now_s();

		assert_int_equal(act_group_start(w->g), 0);
		feed_order(w);
		while (atomic_load(&w->done) < N_EXPECTED && tw_now_s() - t0 < 5)
			sched_yield();
		assert_int_equal(act_group_stop(w->g), 0);
		check_order(w);
		world_close(w);
	}
}

/* ------------------------------------------------------------------------ */
/* No shared state on the lane path; counters; instrumentation             */
/* ------------------------------------------------------------------------ */

/*
 * While A's cascade is on the lane, the mailbox's queue holds nothing (no
 * push: no lock, no CAS, no index written) and B's reference count never
 * moves (no atomic increment per message); small messages allocate
 * nothing. Large ones travel as pool blocks, still on the lane.
 */
static void lane_touches_no_shared_state(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 0);
	struct act_mailbox_stats st;
	unsigned long m0;
	uint64_t p0;
	unsigned i;

	(void)unused;
	assert_int_equal(act_group_bind(w->g), 0);
	send_fan(w->a, 1, 8, 8); /* warm-up: registration, first touches */
	assert_int_equal(act_group_drain(w->g), 1 + 8 + 1);
	w->n = 0;
	w->mailbox_count_max = 0;
	w->refs_b_max = 0;
	send_fan(w->a, 2, 12, 24);
#ifdef TW_WRAP_MALLOC
	tw_alloc_counting = 1;
#endif
	m0 = MALLOCS();
	p0 = act_thread_alloc_count();
	assert_int_equal(act_group_drain(w->g), 1 + 12 + 2);
	assert_int_equal(act_thread_alloc_count() - p0, 0);
	assert_int_equal(MALLOCS() - m0, 0);
#ifdef TW_WRAP_MALLOC
	tw_alloc_counting = 0;
#endif
	assert_int_equal(w->mailbox_count_max, 0);
	assert_int_equal(w->refs_b_max, 1); /* the creator's, nothing else */
	for (i = 1; i < w->n; i++)
		assert_false(w->seen[i].pooled);
	/* 40 bytes: a pool block each, on the lane all the same */
	w->n = 0;
	send_fan(w->a, 3, 4, 40);
	p0 = act_thread_alloc_count();
	assert_int_equal(act_group_drain(w->g), 1 + 4 + 1);
	assert_int_equal(act_thread_alloc_count() - p0, 4); /* the 4 sends */
	assert_int_equal(w->mailbox_count_max, 0);
	assert_int_equal(w->refs_b_max, 1);
	assert_true(w->seen[1].pooled);
	stats(w, &st);
	assert_int_equal(st.lane, 8 + 1 + 12 + 2 + 4 + 1);
	assert_int_equal(st.enqueued, st.dequeued);
	world_close(w);
}

/*
 * The counters of every queue kind count lane messages, in the middle of a
 * run too (act_group_queued() inside a handler counts the lane, the rest of
 * the batch and the mailbox); the instrumentation stamps lane messages with
 * that depth, and max_depth follows.
 */
static struct world *probe_world;
static uint32_t probe_queued[LOG_MAX];

static void h_probe(struct act_actor *self, void *state, struct act_msg *m)
{
	probe_queued[probe_world->n] = act_group_queued(probe_world->g);
	h_log(self, state, m);
}

static void counters_and_instrumentation(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 0);
	struct act_mailbox_stats st;
	unsigned i;

	(void)unused;
	w->b->handlers[T_LOG] = h_probe; /* B's copy of the table */
	probe_world = w;
	assert_int_equal(act_group_bind(w->g), 0);
	act_group_set_instrument(w->g, true);
	send_fan(w->a, 1, 3, 4);
	send_log(w->b, 7);
	stats(w, &st);
	assert_int_equal(st.enqueued, 2);
	assert_int_equal(act_group_queued(w->g), 2);
	assert_int_equal(act_group_drain(w->g), 2 + 3 + 1);
	/* A/1; B/10 B/11 B/12 (lane); B/7 (mailbox); A's reply 15 (lane) */
	static const int order[] = {1001, 2010, 2011, 2012, 1015, 2007};
	expect_log(w, order, 6);
	/* B/10 ran with B/11, B/12 on the lane and B/7 behind: 3 queued */
	assert_int_equal(probe_queued[1], 3);
	assert_int_equal(probe_queued[3], 2); /* B/7; A/15 */
	/* stamped at enqueue: the group's depth (B/7 queued, then the lane) */
	assert_int_equal(w->seen[0].qdepth, 0); /* A/1, first in the mailbox */
	assert_true(w->seen[0].was_empty);
	assert_int_equal(w->seen[1].qdepth, 1); /* B/7 in the batch */
	assert_int_equal(w->seen[2].qdepth, 2);
	assert_int_equal(w->seen[3].qdepth, 3);
	assert_false(w->seen[3].was_empty);
	for (i = 0; i < 6; i++) {
		assert_true(w->seen[i].tsc);
		assert_true(w->seen[i].pooled); /* instrumented: pool blocks */
	}
	stats(w, &st);
	assert_int_equal(st.max_depth, 4);
	assert_int_equal(st.lane, 4);
	assert_int_equal(st.enqueued, 6);
	assert_int_equal(st.dequeued, 6);
	assert_int_equal(st.discarded, 0);
	assert_int_equal(st.full_fails + st.dropped + st.lane_full, 0);
	/* off again: the lane copies small messages into its slots */
	act_group_set_instrument(w->g, false);
	w->n = 0;
	send_fan(w->a, 2, 1, 4);
	assert_int_equal(act_group_drain(w->g), 3);
	assert_false(w->seen[1].pooled);
	assert_false(w->seen[1].tsc);
	assert_int_equal(w->seen[1].qdepth, 0);
	world_close(w);
}

/* ------------------------------------------------------------------------ */
/* Spill                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * A lane of 4: A/fan sends B ten messages; four take the lane, six go to
 * the mailbox (counted), behind B/99 which was queued before. Per-sender
 * FIFO holds: 0..9 in order. Once they ran, the lane takes sends again.
 */
static void spill_keeps_fifo(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 4);
	struct act_mailbox_stats st;
	unsigned i;

	(void)unused;
	assert_int_equal(act_group_bind(w->g), 0);
	send_fan(w->a, 1, 10, 4);
	send_log(w->b, 99);
	assert_int_equal(act_group_step(w->g, 1), 1); /* A/1 alone */
	for (i = 0; i < 10; i++)
		assert_int_equal(w->sa.rc[i], 0);
	stats(w, &st);
	assert_int_equal(st.lane, 4);
	assert_int_equal(st.lane_full, 6);
	assert_int_equal(act_group_queued(w->g), 4 + 1 + 6);
	assert_int_equal(act_group_drain(w->g), 4 + 1 + 6 + 1); /* and B/10's reply */
	{
		static const int order[] = {1001, 2010, 2011, 2012, 2013, 2099, 2014,
					    2015, 2016, 2017, 2018, 2019, 1015};
		expect_log(w, order, 13);
	}
	/* B/10's reply to A found the lane empty but the spill pending: it
	 * followed the spilled ones (FIFO) */
	stats(w, &st);
	assert_int_equal(st.lane_full, 7);
	assert_int_equal(w->g->lane_spilled, 0);
	/* nothing waits in the mailbox any more: the lane again */
	w->n = 0;
	send_fan(w->a, 2, 2, 4);
	assert_int_equal(act_group_drain(w->g), 1 + 2 + 1);
	stats(w, &st);
	assert_int_equal(st.lane, 4 + 3);
	assert_int_equal(st.lane_full, 7);
	assert_int_equal(st.enqueued, st.dequeued);
	world_close(w);
}

/*
 * While a spilled message waits in the mailbox, later lane-eligible sends
 * follow it there even when the lane has room again: a lane of 8, A/fan
 * sends B/13..B/22; B/21, B/22 spill; B/20, the last on the lane, replies
 * A/25 with 7 free slots, and the reply runs after B/21, B/22.
 */
static void spill_holds_the_lane_until_run(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 8);
	static const int order[] = {1001, 2013, 2014, 2015, 2016, 2017, 2018, 2019, 2020,
				    2021, 2022, 1025};
	struct cmd c = {.tag = 1, .fan = 10, .size = 4, .start = 3};
	struct act_mailbox_stats st;

	(void)unused;
	assert_int_equal(act_group_bind(w->g), 0);
	assert_int_equal(act_send_copy(w->a, T_FAN, &c, sizeof(c)), 0);
	assert_int_equal(act_group_drain(w->g), 12);
	expect_log(w, order, 12);
	stats(w, &st);
	assert_int_equal(st.lane, 8);
	assert_int_equal(st.lane_full, 3);
	world_close(w);
}

/*
 * A lane message's slot is not reused while its handler runs: a lane of 2;
 * A/relay sends B/fan (on the lane), whose handler sends A two messages;
 * the first takes the free slot, the second would take B/fan's own slot
 * and spills instead (h_fan checks its message after its sends).
 */
static void running_slot_not_reused(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 2);
	static const int order[] = {1001, 2002, 1020, 1021, 2025};
	struct cmd c = {.tag = 1, .fan = 2, .size = 4};
	struct act_mailbox_stats st;

	(void)unused;
	assert_int_equal(act_group_bind(w->g), 0);
	assert_int_equal(act_send_copy(w->a, T_RELAY, &c, sizeof(c)), 0);
	assert_int_equal(act_group_drain(w->g), 5);
	expect_log(w, order, 5);
	assert_false(w->seen[1].pooled); /* B/fan ran in its slot */
	stats(w, &st);
	assert_int_equal(st.lane, 2);
	assert_int_equal(st.lane_full, 2); /* A/21, then B/25 behind it */
	world_close(w);
}

/* A spill into a full mailbox: the overflow policy, counted. */
static void spill_meets_overflow_policy(void **unused)
{
	static const enum act_overflow pol[] = {ACT_OVERFLOW_FAIL, ACT_OVERFLOW_DROP_NEWEST,
						ACT_OVERFLOW_BLOCK};
	unsigned p, i;

	(void)unused;
	for (p = 0; p < 3; p++) {
		/* mailbox of 2 (sharded: 2 lanes of 1, this thread's holds 1) */
		struct world *w = world_open(fx_queue(), pol[p], 2, 2);
		struct act_mailbox_stats st;
		int accepted = 0, refused = 0, seen = 0, last = -1;

		assert_int_equal(act_group_bind(w->g), 0);
		send_fan(w->a, 10, 8, 4); /* tags 100..107: no replies */
		assert_int_equal(act_group_step(w->g, 1), 1);
		for (i = 0; i < 8; i++) {
			if (w->sa.rc[i] == 0)
				accepted++;
			else
				assert_int_equal(w->sa.rc[i], -EAGAIN);
			refused += w->sa.rc[i] != 0;
		}
		stats(w, &st);
		assert_int_equal(st.lane, 2);
		assert_int_equal(st.lane_full, 6);
		if (pol[p] == ACT_OVERFLOW_DROP_NEWEST) {
			assert_int_equal(refused, 0);
			assert_true(st.dropped >= 4);
			assert_int_equal(st.full_fails, 0);
		} else {
			/* FAIL, and BLOCK from the group's own thread */
			assert_int_equal(st.full_fails, (uint64_t)refused);
			assert_true(refused >= 4);
			assert_int_equal(st.dropped, 0);
		}
		act_group_drain(w->g);
		/* B got the lane's two and the spilled ones that fit, in order */
		for (i = 1; i < w->n; i++) {
			int tag = w->log[i] % 1000;

			if (w->log[i] / 1000 != 2)
				continue;
			assert_true(tag > last);
			last = tag;
			seen++;
		}
		if (pol[p] != ACT_OVERFLOW_DROP_NEWEST)
			assert_int_equal(seen, accepted);
		stats(w, &st);
		assert_int_equal(st.enqueued, st.dequeued);
		world_close(w);
	}
}

/* ------------------------------------------------------------------------ */
/* Bounded steps, destroy, other senders                                    */
/* ------------------------------------------------------------------------ */

/*
 * A step of 2 takes A/fan and B/big as its batch, runs A/fan and the first
 * lane message; the rest stays for the next step, or for destroy, which
 * discards and counts it and drops every reference it held.
 */
static void destroy_with_lane_and_batch(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 0);
	struct act_group *g = w->g;
	struct act_actor *b = w->b;
	struct act_mailbox_stats st;
	int big[10] = {50};

	(void)unused;
	assert_int_equal(act_group_bind(g), 0);
	send_fan(w->a, 1, 3, 8);
	assert_int_equal(act_send_copy(b, T_LOG, big, sizeof(big)), 0); /* a pool block */
	send_log(b, 60);
	assert_int_equal(act_group_step(g, 2), 2);
	assert_int_equal(w->n, 2);
	assert_int_equal(w->log[1], 2010);
	/* lane: B/11, B/12, A/15 (B/10's reply); batch: B/50; mailbox: B/60 */
	assert_int_equal(act_group_queued(g), 5);
	stats(w, &st);
	assert_int_equal(st.enqueued, 3 + 4);
	assert_int_equal(st.dequeued, 2);
	/* the next step goes on where this one stopped: the lane first */
	assert_int_equal(act_group_step(g, 1), 1);
	assert_int_equal(w->log[2], 2011);
	/* B destroyed with B/12 on the lane and B/50, B/60 queued: those hold a
	 * reference each (lane: taken by destroy), and so does A/15, B's reply
	 * on the lane, for its sender B (taken by destroy's sweep), plus ours */
	atomic_fetch_add(&b->refs, 1);
	act_actor_stop(b);
	act_actor_destroy(b);
	assert_int_equal(atomic_load(&b->refs), 1 + 4);
	act__queue_close(&g->queue);
	assert_int_equal(act__group_discard(g), 4); /* B/12, A/15, B/50, B/60 */
	stats(w, &st);
	assert_int_equal(st.discarded, 4);
	assert_int_equal(st.enqueued, st.dequeued + st.discarded);
	assert_int_equal(act_group_queued(g), 0);
	assert_int_equal(atomic_load(&b->refs), 1);
	assert_int_equal(atomic_load(&b->lane_queued), 0);
	act_actor_stop(w->a);
	act_actor_destroy(w->a);
	act_group_destroy(g);
	act__actor_unref(b);
	free(w);
}

/* A receiver destroyed with lane messages, then the group drained: they do
 * not run, and the last one frees it (ASan: no leak, no use after free). */
static void dead_receiver_on_the_lane(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 0);

	(void)unused;
	assert_int_equal(act_group_bind(w->g), 0);
	send_fan(w->a, 3, 5, 8);
	assert_int_equal(act_group_step(w->g, 1), 1);
	assert_int_equal(atomic_load(&w->b->lane_queued), 5);
	act_actor_stop(w->b);
	act_actor_destroy(w->b);
	assert_int_equal(act_group_drain(w->g), 5);
	assert_int_equal(w->n, 1); /* none of B's ran */
	act_actor_stop(w->a);
	act_actor_destroy(w->a);
	act_group_destroy(w->g);
	free(w);
}

/* Sends from another thread, or from the group's thread outside any
 * handler, take the mailbox; a step nested in a handler is refused. */
static void *other_thread_sends(void *arg)
{
	struct world *w = arg;

	send_log(w->b, 4);
	send_fan(w->a, 5, 0, 4);
	return NULL;
}

static void other_senders_use_the_mailbox(void **unused)
{
	struct world *w = world_open(fx_queue(), ACT_OVERFLOW_FAIL, 64, 0);
	struct act_mailbox_stats st;

	(void)unused;
	assert_int_equal(act_group_bind(w->g), 0);
	fx_on_thread(other_thread_sends, w);
	send_log(w->b, 6); /* this thread, bound, outside a handler */
	stats(w, &st);
	assert_int_equal(st.lane, 0);
	assert_int_equal(act__queue_count(&w->g->queue), 3);
	assert_int_equal(act_group_drain(w->g), 3);
	stats(w, &st);
	assert_int_equal(st.lane, 0);
	/* nested step */
	assert_int_equal(act_send_copy(w->a, T_STEP, &w, sizeof(int)), 0);
	assert_int_equal(act_group_drain(w->g), 1);
	assert_int_equal(w->sa.step_rc, -EBUSY);
	assert_int_equal(w->sa.drain_rc, -EBUSY);
	world_close(w);
}

/* Own-mailbox actors have a lane too: an actor sending to itself from its
 * own thread, and its destroy with the lane full of those. */
static void own_mailbox_actor(void **unused)
{
	struct st s = {.id = 3};
	struct world w = {0};
	struct act_actor_opts o = {.name = "own", .handlers = handlers, .handler_count = T_COUNT,
				   .state = &s};
	struct act_mailbox_stats st;
	struct act_actor *a;
	double t0 = tw_now_s();

	(void)unused;
	s.w = &w;
	a = act_actor_create(&o);
	assert_non_null(a);
	w.g = act_actor_group(a);
	w.b = a;
	s.peer = a;
	assert_int_equal(act_actor_start(a), 0);
	send_fan(a, 1, 3, 4);
	while (atomic_load(&w.done) < 5 && tw_now_s() - t0 < 5)
		sched_yield();
	assert_int_equal(atomic_load(&w.done), 5); /* 1, 10, 11, 12, 15 */
	act_group_mailbox_stats(w.g, &st);
	assert_int_equal(st.lane, 4);
	act_actor_stop(a);
	act_actor_destroy(a);
}

#define PER_QUEUE(fn)                                                                \
	FX_PER_INLINE_QUEUE(fn),                                                     \
	{ "sharded/" #fn, fn, fx_set_queue, NULL, &(enum act_queue_type){ACT_QUEUE_SHARDED} }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		PER_QUEUE(order_rule_any_step),
		PER_QUEUE(order_rule_on_group_thread),
		PER_QUEUE(lane_touches_no_shared_state),
		PER_QUEUE(counters_and_instrumentation),
		PER_QUEUE(spill_keeps_fifo),
		PER_QUEUE(spill_holds_the_lane_until_run),
		PER_QUEUE(running_slot_not_reused),
		PER_QUEUE(spill_meets_overflow_policy),
		PER_QUEUE(destroy_with_lane_and_batch),
		PER_QUEUE(dead_receiver_on_the_lane),
		PER_QUEUE(other_senders_use_the_mailbox),
		cmocka_unit_test(own_mailbox_actor),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
