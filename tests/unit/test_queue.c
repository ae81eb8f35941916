/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Unit tests of the mailbox queues (lib/actor/act_queue_pvt.h, queue.c).
 * Every behavioural test runs once per queue type ("<type>/<test>").
 *
 * Tests of wake-ups first wait until the thread to be woken has announced
 * its sleep (white-box probes of the queue's sleep flags), so they test the
 * wake path and not a race the sleeper happened to win; a lost wake-up shows
 * as a wait that runs into its timeout or a thread that does not finish.
 *
 * Tests that start threads keep the queue and the thread's arguments on the
 * heap and, when an assertion fails, leak them rather than free memory a
 * stuck thread may still use.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act_queue_pvt.h"
#include "tw_test.h"

#define ITEM(i) ((void *)(uintptr_t)(i))
#define VAL(p) ((uintptr_t)(p))
#define SEC 1000000000ull
#define MS 1000000ull

static enum act_queue_type types[] = {
	ACT_QUEUE_BQUEUE,
	ACT_QUEUE_BQUEUE_BATCHED,
	ACT_QUEUE_SHARDED,
	ACT_QUEUE_LOCKFREE,
};

static enum act_queue_type type_of(void **state)
{
	return *(enum act_queue_type *)*state;
}

/*
 * SHARDED with one lane behaves as a single ring for capacity and blocking
 * tests (a producer only sees its own lane); lane behaviour is tested on its
 * own in sharded_lanes.
 */
static struct act__queue *new_queue(enum act_queue_type type, uint32_t capacity, uint32_t shards)
{
	struct act__queue *q = aligned_alloc(ACT__CACHE_LINE, sizeof(*q));

	assert_non_null(q);
	assert_int_equal(act__queue_init(q, type, capacity, shards), 0);
	return q;
}

static void free_queue(struct act__queue *q)
{
	act__queue_fini(q);
	free(q);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static bool join_within(pthread_t t, double seconds)
{
	struct timespec ts;
	double whole;

	clock_gettime(CLOCK_REALTIME, &ts);
	whole = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + seconds;
	ts.tv_sec = (time_t)whole;
	ts.tv_nsec = (long)((whole - (double)ts.tv_sec) * 1e9);
	return pthread_timedjoin_np(t, NULL, &ts) == 0;
}

/* ---- white-box probes: is a thread asleep in the queue? ---------------- */

/* The consumer announced that it sleeps (or is about to, after its re-check). */
static bool consumer_sleeping(struct act__queue *q)
{
	bool v;

	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		pthread_mutex_lock(&q->u.bq.lock);
		v = atomic_load(&q->u.bq.consumer_state) == ACT__CONSUMER_SLEEPING;
		pthread_mutex_unlock(&q->u.bq.lock);
		return v;
	case ACT_QUEUE_SHARDED:
		return atomic_load(&q->u.sh.sig.consumer_state) == ACT__CONSUMER_SLEEPING;
	case ACT_QUEUE_LOCKFREE:
		return atomic_load(&q->u.lf.sig.consumer_state) == ACT__CONSUMER_SLEEPING;
	default:
		return false;
	}
}

/* Producers that announced they sleep waiting for space. */
static uint32_t producers_sleeping(struct act__queue *q)
{
	uint32_t v;

	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		pthread_mutex_lock(&q->u.bq.lock);
		v = q->u.bq.producers_waiting;
		pthread_mutex_unlock(&q->u.bq.lock);
		return v;
	case ACT_QUEUE_SHARDED:
		return atomic_load(&q->u.sh.sig.producers_waiting);
	case ACT_QUEUE_LOCKFREE:
		return atomic_load(&q->u.lf.sig.producers_waiting);
	default:
		return 0;
	}
}

/* Poll (up to 5 s) until the consumer sleeps; false if it never did. */
static bool await_consumer_sleeping(struct act__queue *q)
{
	double until = tw_now_s() + 5.0;

	while (!consumer_sleeping(q)) {
		if (tw_now_s() > until)
			return false;
		sleep_ms(1);
	}
	return true;
}

/* Poll (up to 5 s) until @p n producers sleep on the full queue. */
static bool await_producers_sleeping(struct act__queue *q, uint32_t n)
{
	double until = tw_now_s() + 5.0;

	while (producers_sleeping(q) < n) {
		if (tw_now_s() > until)
			return false;
		sleep_ms(1);
	}
	return true;
}

/* ---- helper threads ----------------------------------------------------- */

/* Pushes one item; with after_sleeper, only once the consumer sleeps. */
struct pusher {
	struct act__queue *q;
	void *item;
	bool block;
	bool after_sleeper;
	bool saw_sleeper;
	int rc;
	struct act__push_info info;
	_Atomic int done;
};

static void *pusher_main(void *arg)
{
	struct pusher *p = arg;

	if (p->after_sleeper)
		p->saw_sleeper = await_consumer_sleeping(p->q);
	p->rc = act__queue_push(p->q, p->item, p->block, &p->info);
	atomic_store(&p->done, 1);
	return NULL;
}

static struct pusher *start_pusher(pthread_t *t, struct act__queue *q, uintptr_t item,
				   bool block, bool after_sleeper)
{
	struct pusher *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->q = q;
	p->item = ITEM(item);
	p->block = block;
	p->after_sleeper = after_sleeper;
	assert_int_equal(pthread_create(t, NULL, pusher_main, p), 0);
	return p;
}

/* Kicks once the consumer sleeps. */
struct kicker {
	struct act__queue *q;
	bool saw_sleeper;
};

static void *kicker_main(void *arg)
{
	struct kicker *k = arg;

	k->saw_sleeper = await_consumer_sleeping(k->q);
	act__queue_kick(k->q);
	return NULL;
}

struct waiter {
	struct act__queue *q;
	uint64_t timeout_ns;
	int rc;
	double elapsed;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	double t0 = tw_now_s();

	w->rc = act__queue_wait(w->q, 0, w->timeout_ns);
	w->elapsed = tw_now_s() - t0;
	return NULL;
}

/* Pop exactly the values first..last, in order, and nothing more. */
static void expect_items(struct act__queue *q, uintptr_t first, uintptr_t last)
{
	void *items[64];
	uintptr_t want = first;

	while (want <= last) {
		uint32_t n = act__queue_pop_burst(q, items, 64);
		uint32_t i;

		assert_true(n > 0);
		for (i = 0; i < n; i++)
			assert_int_equal(VAL(items[i]), want++);
	}
	assert_int_equal(act__queue_pop_burst(q, items, 64), 0);
}

/* ---- per-type tests ----------------------------------------------------- */

/* One producer, many wraps of the ring, pushes and bursts of varying sizes. */
static void fifo_single_producer(void **state)
{
	/* SHARDED keeps its default 4 lanes: one producer uses one lane of 16 */
	struct act__queue *q = new_queue(type_of(state), 64, 0);
	uintptr_t next_push = 1, next_pop = 1;
	void *items[16];
	unsigned round;

	for (round = 0; round < 400; round++) {
		uint32_t k = 1 + round % 13, max = 1 + round % 7, i, n;

		for (i = 0; i < k; i++)
			assert_int_equal(act__queue_push(q, ITEM(next_push++), false, NULL), 0);
		assert_int_equal(act__queue_count(q), (uint32_t)(next_push - next_pop));
		while ((n = act__queue_pop_burst(q, items, max)) != 0) {
			assert_true(n <= max);
			for (i = 0; i < n; i++)
				assert_int_equal(VAL(items[i]), next_pop++);
		}
		assert_int_equal(next_pop, next_push);
		assert_int_equal(act__queue_count(q), 0);
	}
	free_queue(q);
}

/* Capacity rounds up to a power of two (min 2); a full queue gives -EAGAIN at once. */
static void capacity_and_full(void **state)
{
	static const uint32_t asked[] = { 0, 1, 2, 3, 5, 64, 100 };
	static const uint32_t rounded[] = { 2, 2, 2, 4, 8, 64, 128 };
	unsigned c;

	for (c = 0; c < sizeof(asked) / sizeof(asked[0]); c++) {
		struct act__queue *q = new_queue(type_of(state), asked[c], 1);
		void *item;
		uint32_t n = 0;
		double t0;
		int rc;

		while ((rc = act__queue_push(q, ITEM(n + 1), false, NULL)) == 0) {
			n++;
			assert_true(n <= rounded[c]);
		}
		assert_int_equal(rc, -EAGAIN);
		assert_int_equal(n, rounded[c]);
		assert_int_equal(act__queue_count(q), rounded[c]);

		t0 = tw_now_s();
		assert_int_equal(act__queue_push(q, ITEM(999), false, NULL), -EAGAIN);
		assert_true(tw_now_s() - t0 < 0.5);

		/* one slot freed: exactly one more push fits */
		assert_int_equal(act__queue_pop_burst(q, &item, 1), 1);
		assert_int_equal(VAL(item), 1);
		assert_int_equal(act__queue_push(q, ITEM(n + 1), false, NULL), 0);
		assert_int_equal(act__queue_push(q, ITEM(999), false, NULL), -EAGAIN);
		expect_items(q, 2, n + 1);
		free_queue(q);
	}
}

static void push_info(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 8, 1);
	struct act__push_info info = { 0 };
	void *items[8];
	uintptr_t i;

	memset(&info, 0xff, sizeof(info));
	assert_int_equal(act__queue_push(q, ITEM(1), false, &info), 0);
	assert_int_equal(info.depth, 1);
	assert_true(info.was_empty);
	assert_false(info.waited);
	for (i = 2; i <= 8; i++) {
		assert_int_equal(act__queue_push(q, ITEM(i), true, &info), 0);
		assert_int_equal(info.depth, i);
		assert_false(info.was_empty);
		assert_false(info.waited); /* block, but there was room */
	}
	assert_int_equal(act__queue_pop_burst(q, items, 3), 3);
	assert_int_equal(act__queue_push(q, ITEM(9), false, &info), 0);
	assert_int_equal(info.depth, 6);
	assert_false(info.was_empty);
	assert_int_equal(act__queue_pop_burst(q, items, 8), 6);
	assert_int_equal(act__queue_push(q, ITEM(10), false, &info), 0);
	assert_int_equal(info.depth, 1);
	assert_true(info.was_empty);
	/* info is optional */
	assert_int_equal(act__queue_push(q, ITEM(11), false, NULL), 0);
	expect_items(q, 10, 11);
	free_queue(q);
}

static void pop_burst_max(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 16, 1);
	void *items[17];
	uint32_t i;

	for (i = 1; i <= 10; i++)
		assert_int_equal(act__queue_push(q, ITEM(i), false, NULL), 0);
	for (i = 0; i < 17; i++)
		items[i] = ITEM(0xdead);
	assert_int_equal(act__queue_pop_burst(q, items, 3), 3);
	assert_int_equal(VAL(items[0]), 1);
	assert_int_equal(VAL(items[2]), 3);
	for (i = 3; i < 17; i++)
		assert_int_equal(VAL(items[i]), 0xdead); /* nothing written past max */
	assert_int_equal(act__queue_pop_burst(q, items, 0), 0);
	assert_int_equal(act__queue_count(q), 7);
	assert_int_equal(act__queue_pop_burst(q, items, 4), 4);
	assert_int_equal(VAL(items[0]), 4);
	assert_int_equal(VAL(items[3]), 7);
	assert_int_equal(act__queue_pop_burst(q, items, 16), 3);
	assert_int_equal(VAL(items[2]), 10);
	assert_int_equal(act__queue_pop_burst(q, items, 16), 0);
	free_queue(q);
}

/*
 * A consumer that sleeps (after spin 0, or after spinning) wakes on another
 * thread's push; the pusher waits until the consumer announced its sleep.
 */
static void wait_wakes_on_push(void **state)
{
	static const uint32_t spins[] = { 0, 100000 };
	unsigned s;

	for (s = 0; s < 2; s++) {
		struct act__queue *q = new_queue(type_of(state), 16, 0);
		struct pusher *p;
		pthread_t t;
		void *item;
		double t0, dt;
		int rc;

		t0 = tw_now_s();
		p = start_pusher(&t, q, 42, false, true);
		rc = act__queue_wait(q, spins[s], 10 * SEC);
		dt = tw_now_s() - t0;
		assert_true(join_within(t, 5.0));
		assert_true(p->saw_sleeper);
		assert_int_equal(p->rc, 0);
		assert_true(p->info.was_empty);
		assert_int_equal(rc, 0);
		assert_true(dt < 9.0); /* not ended by the timeout: a lost wake-up */
		assert_int_equal(act__queue_pop_burst(q, &item, 1), 1);
		assert_int_equal(VAL(item), 42);
		free(p);
		free_queue(q);
	}
}

/* Items already queued: wait returns at once and leaves them queued. */
static void wait_nonempty_returns_at_once(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 16, 0);
	double t0;

	assert_int_equal(act__queue_push(q, ITEM(1), false, NULL), 0);
	t0 = tw_now_s();
	assert_int_equal(act__queue_wait(q, 0, 5 * SEC), 0);
	assert_int_equal(act__queue_wait(q, 0, 0), 0);
	assert_true(tw_now_s() - t0 < 1.0);
	assert_int_equal(act__queue_count(q), 1);
	expect_items(q, 1, 1);
	free_queue(q);
}

static void wait_kick_before(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 16, 0);
	double t0;

	act__queue_kick(q);
	t0 = tw_now_s();
	assert_int_equal(act__queue_wait(q, 0, 5 * SEC), 0);
	assert_true(tw_now_s() - t0 < 1.0);
	/* consumed by the wait it ended */
	assert_int_equal(act__queue_wait(q, 0, 20 * MS), -ETIMEDOUT);
	assert_int_equal(act__queue_wait(q, 1000, 20 * MS), -ETIMEDOUT);
	/* a wait that returns because of an item also consumes a pending kick */
	act__queue_kick(q);
	assert_int_equal(act__queue_push(q, ITEM(1), false, NULL), 0);
	assert_int_equal(act__queue_wait(q, 0, 5 * SEC), 0);
	expect_items(q, 1, 1);
	assert_int_equal(act__queue_wait(q, 0, 20 * MS), -ETIMEDOUT);
	free_queue(q);
}

static void wait_kick_during(void **state)
{
	static const uint32_t spins[] = { 0, 100000 };
	unsigned s;

	for (s = 0; s < 2; s++) {
		struct act__queue *q = new_queue(type_of(state), 16, 0);
		struct kicker *k = calloc(1, sizeof(*k));
		pthread_t t;
		double t0, dt;
		int rc;

		assert_non_null(k);
		k->q = q;
		t0 = tw_now_s();
		assert_int_equal(pthread_create(&t, NULL, kicker_main, k), 0);
		rc = act__queue_wait(q, spins[s], 10 * SEC);
		dt = tw_now_s() - t0;
		assert_true(join_within(t, 5.0));
		assert_true(k->saw_sleeper);
		assert_int_equal(rc, 0);
		assert_true(dt < 9.0);
		assert_int_equal(act__queue_count(q), 0);
		assert_int_equal(act__queue_wait(q, 0, 20 * MS), -ETIMEDOUT); /* consumed */
		free(k);
		free_queue(q);
	}
}

static void wait_timeout(void **state)
{
	static const uint32_t spins[] = { 0, 1000 };
	unsigned s;

	for (s = 0; s < 2; s++) {
		struct act__queue *q = new_queue(type_of(state), 16, 0);
		double t0 = tw_now_s(), dt;

		assert_int_equal(act__queue_wait(q, spins[s], 30 * MS), -ETIMEDOUT);
		dt = tw_now_s() - t0;
		assert_true(dt >= 0.029);
		assert_true(dt < 2.0);
		free_queue(q);
	}
}

/* Close: pushes fail, queued items stay poppable, then wait reports shutdown. */
static void close_semantics(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 16, 0);

	assert_int_equal(act__queue_push(q, ITEM(1), false, NULL), 0);
	assert_int_equal(act__queue_push(q, ITEM(2), true, NULL), 0);
	act__queue_close(q);
	assert_int_equal(act__queue_push(q, ITEM(3), false, NULL), -ESHUTDOWN);
	assert_int_equal(act__queue_push(q, ITEM(3), true, NULL), -ESHUTDOWN);
	assert_int_equal(act__queue_wait(q, 0, 5 * SEC), 0); /* items win */
	expect_items(q, 1, 2);
	assert_int_equal(act__queue_wait(q, 0, 5 * SEC), -ESHUTDOWN);
	act__queue_kick(q);
	assert_int_equal(act__queue_wait(q, 0, 0), -ESHUTDOWN);
	act__queue_close(q); /* idempotent */
	assert_int_equal(act__queue_push(q, ITEM(4), false, NULL), -ESHUTDOWN);
	free_queue(q);
}

static void close_wakes_consumer(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 16, 0);
	struct waiter *w = calloc(1, sizeof(*w));
	pthread_t t;

	assert_non_null(w);
	w->q = q;
	w->timeout_ns = 5 * SEC;
	assert_int_equal(pthread_create(&t, NULL, waiter_main, w), 0);
	assert_true(await_consumer_sleeping(q));
	act__queue_close(q);
	assert_true(join_within(t, 5.0));
	assert_int_equal(w->rc, -ESHUTDOWN);
	assert_true(w->elapsed < 4.0);
	free(w);
	free_queue(q);
}

static void close_wakes_blocked_producer(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 2, 1);
	struct pusher *p;
	pthread_t t;

	assert_int_equal(act__queue_push(q, ITEM(1), false, NULL), 0);
	assert_int_equal(act__queue_push(q, ITEM(2), false, NULL), 0);
	p = start_pusher(&t, q, 3, true, false);
	assert_true(await_producers_sleeping(q, 1)); /* asleep, waiting for space */
	assert_int_equal(atomic_load(&p->done), 0);
	act__queue_close(q);
	assert_true(join_within(t, 5.0));
	assert_int_equal(p->rc, -ESHUTDOWN);
	expect_items(q, 1, 2); /* close discards nothing */
	free(p);
	free_queue(q);
}

static void blocked_producer_resumes(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 4, 1);
	struct pusher *p;
	pthread_t t;
	void *item;
	uintptr_t i;

	for (i = 1; i <= 4; i++)
		assert_int_equal(act__queue_push(q, ITEM(i), false, NULL), 0);
	p = start_pusher(&t, q, 5, true, false);
	assert_true(await_producers_sleeping(q, 1));
	assert_int_equal(atomic_load(&p->done), 0);
	assert_int_equal(act__queue_pop_burst(q, &item, 1), 1);
	assert_int_equal(VAL(item), 1);
	assert_true(join_within(t, 5.0)); /* a hang here means a lost producer wake-up */
	assert_int_equal(p->rc, 0);
	assert_true(p->info.waited);
	assert_int_equal(p->info.depth, 4);
	expect_items(q, 2, 5);
	free(p);
	free_queue(q);
}

/* k slots freed by one burst wake k blocked producers. */
static void two_blocked_producers_resume(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 2, 1);
	struct pusher *a, *b;
	pthread_t ta, tb;
	void *items[4];
	uint32_t n;

	assert_int_equal(act__queue_push(q, ITEM(1), false, NULL), 0);
	assert_int_equal(act__queue_push(q, ITEM(2), false, NULL), 0);
	a = start_pusher(&ta, q, 10, true, false);
	b = start_pusher(&tb, q, 20, true, false);
	assert_true(await_producers_sleeping(q, 2));
	assert_int_equal(atomic_load(&a->done) + atomic_load(&b->done), 0);
	assert_int_equal(act__queue_pop_burst(q, items, 2), 2);
	assert_int_equal(VAL(items[0]), 1);
	assert_int_equal(VAL(items[1]), 2);
	assert_true(join_within(ta, 5.0));
	assert_true(join_within(tb, 5.0));
	assert_int_equal(a->rc, 0);
	assert_int_equal(b->rc, 0);
	assert_true(a->info.waited && b->info.waited);
	n = act__queue_pop_burst(q, items, 4);
	assert_int_equal(n, 2);
	assert_int_equal(VAL(items[0]) + VAL(items[1]), 30);
	free(a);
	free(b);
	free_queue(q);
}

/* ---- type-independent tests --------------------------------------------- */

static void init_errors(void **state)
{
	struct act__queue *q = aligned_alloc(ACT__CACHE_LINE, sizeof(*q));
	void *item;

	(void)state;
	assert_non_null(q);
	assert_int_equal(act__queue_init(NULL, ACT_QUEUE_BQUEUE, 16, 0), -EINVAL);
	assert_int_equal(act__queue_init(q, ACT_QUEUE_COUNT_, 16, 0), -EINVAL);
	assert_int_equal(act__queue_init(q, (enum act_queue_type)99, 16, 0), -EINVAL);
	assert_int_equal(act__queue_init(q, (enum act_queue_type)-1, 16, 0), -EINVAL);
	/* a queue whose init failed rejects the hot calls and fini is harmless */
	assert_int_equal(act__queue_push(q, ITEM(1), false, NULL), -EINVAL);
	assert_int_equal(act__queue_pop_burst(q, &item, 1), 0);
	assert_int_equal(act__queue_wait(q, 0, MS), -EINVAL);
	assert_int_equal(act__queue_count(q), 0);
	act__queue_fini(q);
	assert_int_equal(act__queue_init(q, ACT_QUEUE_LOCKFREE, ACT__QUEUE_MAX_CAPACITY + 1, 0),
			 -EINVAL);
	assert_int_equal(act__queue_init(q, ACT_QUEUE_BQUEUE, UINT32_MAX, 0), -EINVAL);
	assert_int_equal(act__queue_init(q, ACT_QUEUE_SHARDED, 1024, ACT__QUEUE_MAX_SHARDS + 1),
			 -EINVAL);
	assert_int_equal(act__queue_init(q, ACT_QUEUE_SHARDED, 4, 8), -EINVAL); /* lanes > slots */
	/* shards 0 on a tiny queue: fewer lanes, not an error */
	assert_int_equal(act__queue_init(q, ACT_QUEUE_SHARDED, 2, 0), 0);
	act__queue_fini(q);
	act__queue_fini(q); /* twice is harmless */
	assert_int_equal(act__queue_push(q, ITEM(1), false, NULL), -EINVAL);
	free(q);
}

/*
 * SHARDED: shards round up to a power of two, each lane holds
 * capacity/lanes, a full lane is full for its producers only, info.depth
 * sums the lanes, and each producer's items come out in its order.
 */
static void sharded_lanes(void **state)
{
	struct act__queue *q = new_queue(ACT_QUEUE_SHARDED, 16, 3); /* 4 lanes of 4 */
	uint32_t saved_ticket = act__queue_tls_lane_ticket;
	struct act__push_info info = { 0 };
	uintptr_t next[4];
	void *items[32];
	uint32_t lane, i, n, total = 0;

	(void)state;
	for (lane = 0; lane < 4; lane++) {
		act__queue_tls_lane_ticket = 4 + lane; /* lane (4 + lane) mod 4 */
		for (i = 0; i < 4; i++) {
			void *item = ITEM((lane << 8) | (i + 1));

			assert_int_equal(act__queue_push(q, item, false, &info), 0);
			assert_int_equal(info.depth, lane * 4 + i + 1);
			assert_int_equal(info.was_empty, lane == 0 && i == 0);
		}
		assert_int_equal(act__queue_push(q, ITEM(999), false, NULL), -EAGAIN);
	}
	assert_int_equal(act__queue_count(q), 16);
	act__queue_tls_lane_ticket = 9; /* lane 1 again: full */
	assert_int_equal(act__queue_push(q, ITEM(999), false, NULL), -EAGAIN);
	act__queue_tls_lane_ticket = saved_ticket;

	for (lane = 0; lane < 4; lane++)
		next[lane] = 1;
	while ((n = act__queue_pop_burst(q, items, 3)) != 0) {
		for (i = 0; i < n; i++) {
			uintptr_t v = VAL(items[i]);

			assert_true((v >> 8) < 4);
			assert_int_equal(v & 0xff, next[v >> 8]++);
		}
		total += n;
	}
	assert_int_equal(total, 16);
	free_queue(q);
}

/* ---- LOCKFREE inline entries ------------------------------------------ */

/* An inline entry of value @v: every field and data byte a function of it. */
static void fill_cell(struct act__qcell *cell, uint32_t v)
{
	cell->kind = 1;
	cell->word = v;
	cell->u.inl.ptr[0] = ITEM(v);
	cell->u.inl.ptr[1] = ITEM(~(uintptr_t)v);
	memset(cell->u.inl.data, (int)(v & 0xff), ACT__QCELL_DATA);
}

/* @v even: the pointer item ITEM(v); odd: fill_cell()'s inline entry. */
static void check_cell(const struct act__qcell *cell, uint32_t v)
{
	if (v % 2 == 0) {
		assert_int_equal(cell->kind, 0);
		assert_int_equal(VAL(cell->u.item), v);
	} else {
		unsigned char want[ACT__QCELL_DATA];

		assert_int_equal(cell->kind, 1);
		assert_int_equal(cell->word, v);
		assert_int_equal(VAL(cell->u.inl.ptr[0]), v);
		assert_int_equal(VAL(cell->u.inl.ptr[1]), ~(uintptr_t)v);
		memset(want, (int)(v & 0xff), sizeof(want));
		assert_memory_equal(cell->u.inl.data, want, sizeof(want));
	}
}

static void put_inline(struct act__lfqueue *lf, uint32_t v, int expect_rc)
{
	uint64_t pos = 0;
	bool waited = false;

	assert_int_equal(act__lf_claim(lf, false, &pos, &waited), expect_rc);
	if (expect_rc != 0)
		return;
	assert_false(waited);
	fill_cell(&lf->cells[pos & lf->mask], v);
	act__lf_publish(lf, pos);
}

/*
 * Inline entries and pointer items share one ring and one order; claimed
 * cells are invisible until published; the ring wraps many times; a full
 * ring refuses a claim; pop_burst (pointer items only) stops at an inline
 * entry; count and wait see inline entries.
 */
static void lockfree_inline_cells(void **state)
{
	struct act__queue *q = new_queue(ACT_QUEUE_LOCKFREE, 4, 0);
	struct act__lfqueue *lf = &q->u.lf;
	uint32_t next = 2, expect = 2, lap, k; /* even: pointer item */
	void *items[4];
	uint64_t pos = 0;
	bool waited = false;

	(void)state;
	assert_int_equal(sizeof(struct act__qcell), ACT__CACHE_LINE);
	/* claimed, not yet published: not ready, and it holds back nothing else */
	assert_int_equal(act__lf_claim(lf, false, &pos, &waited), 0);
	assert_null(act__lf_head(lf, 0));
	assert_int_equal(act__queue_wait(q, 0, MS), -ETIMEDOUT);
	lf->cells[pos & lf->mask].kind = 0;
	lf->cells[pos & lf->mask].u.item = ITEM(next);
	act__lf_publish(lf, pos);
	next++;
	assert_int_equal(act__queue_wait(q, 0, MS), 0);
	for (lap = 0; lap < 100; lap++) {
		/* fill the ring: pointer items at even values, inline at odd */
		while (act__queue_count(q) < 4) {
			if (next % 2 == 0)
				assert_int_equal(act__queue_push(q, ITEM(next), false, NULL), 0);
			else
				put_inline(lf, next, 0);
			next++;
		}
		put_inline(lf, 999, -EAGAIN);
		assert_int_equal(act__queue_push(q, ITEM(999), false, NULL), -EAGAIN);
		/* look-ahead: the four entries are ready, nothing behind them */
		for (k = 0; k < 4; k++)
			assert_non_null(act__lf_head(lf, k));
		assert_null(act__lf_head(lf, 4));
		for (k = 0; k < 4; k++) {
			const struct act__qcell *cell = act__lf_head(lf, 0);

			assert_non_null(cell);
			check_cell(cell, expect);
			/* the pointer-only pop leaves an inline entry alone */
			if (expect % 2 != 0)
				assert_int_equal(act__queue_pop_burst(q, items, 4), 0);
			act__lf_release(lf, 0);
			act__lf_advance(lf, 1);
			expect++;
		}
		assert_null(act__lf_head(lf, 0));
		assert_int_equal(act__queue_count(q), 0);
	}
	assert_int_equal(expect, next);
	free_queue(q);
}

/* ---- BQUEUE* inline entries --------------------------------------------- */

static int bq_put_inline(struct act__bqueue *bq, uint32_t v, bool block, bool *waited)
{
	struct act__qcell *cell = NULL;
	int rc = act__bq_claim(bq, block, &cell, waited);

	if (rc != 0)
		return rc;
	fill_cell(cell, v);
	(void)act__bq_publish(bq);
	return 0;
}

/* Take the head entry (one acquisition, to free it), check it is @v. */
static void bq_take_one(struct act__bqueue *bq, uint32_t v)
{
	uint32_t to_wake = 0;

	assert_true(act__bq_ready(bq) != 0);
	check_cell(act__bq_cell(bq, 0), v);
	act__bq_release(bq, 1, &to_wake);
	act__bq_wake_producers(bq, to_wake, false);
}

struct bq_blocker {
	struct act__bqueue *bq;
	uint32_t v;
	bool waited;
	int rc;
};

static void *bq_blocker_main(void *arg)
{
	struct bq_blocker *b = arg;

	b->rc = bq_put_inline(b->bq, b->v, true, &b->waited);
	return NULL;
}

/*
 * BQUEUE and BQUEUE_BATCHED: inline entries and pointer items share one
 * ring and one order across 100 laps; a full ring refuses an inline claim
 * and a pointer push alike; pop_burst (pointer items only) stops at an inline
 * entry and takes the pointer items before it; acquire/cell/release see
 * every entry; a blocking inline claim on a full ring sleeps and resumes
 * when the consumer frees a cell; after close, claims fail and the queued
 * inline entries stay readable, then wait reports the close.
 */
static void bqueue_inline_cells(void **state)
{
	struct act__queue *q = new_queue(type_of(state), 4, 0);
	struct act__bqueue *bq = &q->u.bq;
	uint32_t next = 2, expect = 2, lap, k, n; /* even: pointer item */
	struct bq_blocker b = {.bq = bq};
	void *items[4];
	bool waited = false;
	pthread_t th;

	assert_int_equal(act__queue_wait(q, 0, MS), -ETIMEDOUT);
	for (lap = 0; lap <= 100; lap++) { /* ends on an even lap: empty */
		/* odd laps: one entry through alone, so the head's kind alternates */
		while (act__queue_count(q) < 4 - lap % 2) {
			if (next % 2 == 0)
				assert_int_equal(act__queue_push(q, ITEM(next), false, NULL), 0);
			else
				assert_int_equal(bq_put_inline(bq, next, false, &waited), 0);
			next++;
		}
		if (lap % 2 != 0) {
			bq_take_one(bq, expect++);
			continue;
		}
		assert_int_equal(bq_put_inline(bq, 999, false, &waited), -EAGAIN);
		assert_int_equal(act__queue_push(q, ITEM(999), false, NULL), -EAGAIN);
		assert_false(waited);
		assert_int_equal(act__queue_wait(q, 0, MS), 0);
		/* the head alternates: a pointer item first on even laps */
		if (expect % 2 == 0) {
			assert_int_equal(act__queue_pop_burst(q, items, 4), 1);
			assert_int_equal(VAL(items[0]), expect);
			expect++;
			k = 1;
		} else {
			k = 0;
		}
		/* an inline entry at the head: the pointer-only pop takes nothing */
		assert_int_equal(act__queue_pop_burst(q, items, 4), 0);
		/* look-ahead without the lock, then take them one by one */
		assert_int_equal(act__bq_ready(bq), 4 - k);
		for (n = 0; n < 4 - k; n++)
			check_cell(act__bq_cell(bq, n), expect + n);
		for (; k < 4; k++)
			bq_take_one(bq, expect++);
		assert_int_equal(act__queue_count(q), 0);
	}
	assert_int_equal(expect, next);

	/* blocking inline claim on a full ring */
	while (act__queue_count(q) < 4 || next % 2 == 0) {
		if (act__queue_count(q) == 4)
			bq_take_one(bq, expect++);
		if (next % 2 == 0)
			assert_int_equal(act__queue_push(q, ITEM(next), false, NULL), 0);
		else
			assert_int_equal(bq_put_inline(bq, next, false, &waited), 0);
		next++;
	}
	b.v = next++; /* odd: inline */
	assert_int_equal(pthread_create(&th, NULL, bq_blocker_main, &b), 0);
	assert_true(await_producers_sleeping(q, 1));
	bq_take_one(bq, expect++);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(b.rc, 0);
	assert_true(b.waited);

	/* close with inline entries queued: they stay, later claims fail */
	act__queue_close(q);
	assert_int_equal(bq_put_inline(bq, 999, false, &waited), -ESHUTDOWN);
	assert_int_equal(bq_put_inline(bq, 999, true, &waited), -ESHUTDOWN);
	assert_int_equal(act__queue_count(q), 4);
	while (act__queue_count(q) != 0) {
		assert_int_equal(act__queue_wait(q, 0, 5 * SEC), 0); /* entries win */
		bq_take_one(bq, expect++);
	}
	assert_int_equal(expect, next);
	assert_int_equal(act__queue_wait(q, 0, 5 * SEC), -ESHUTDOWN);
	free_queue(q);
}

/* ---- registration ------------------------------------------------------- */

#define PER_TYPE(fn)                                                          \
	{ "bqueue/" #fn, fn, NULL, NULL, &types[0] },                             \
	{ "bqueue_batched/" #fn, fn, NULL, NULL, &types[1] },                     \
	{ "sharded/" #fn, fn, NULL, NULL, &types[2] },                            \
	{ "lockfree/" #fn, fn, NULL, NULL, &types[3] }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		PER_TYPE(fifo_single_producer),
		PER_TYPE(capacity_and_full),
		PER_TYPE(push_info),
		PER_TYPE(pop_burst_max),
		PER_TYPE(wait_wakes_on_push),
		PER_TYPE(wait_nonempty_returns_at_once),
		PER_TYPE(wait_kick_before),
		PER_TYPE(wait_kick_during),
		PER_TYPE(wait_timeout),
		PER_TYPE(close_semantics),
		PER_TYPE(close_wakes_consumer),
		PER_TYPE(close_wakes_blocked_producer),
		PER_TYPE(blocked_producer_resumes),
		PER_TYPE(two_blocked_producers_resume),
		cmocka_unit_test(init_errors),
		cmocka_unit_test(sharded_lanes),
		cmocka_unit_test(lockfree_inline_cells),
		{ "bqueue/bqueue_inline_cells", bqueue_inline_cells, NULL, NULL, &types[0] },
		{ "bqueue_batched/bqueue_inline_cells", bqueue_inline_cells, NULL, NULL,
		  &types[1] },
	};

	TW_RUN_TESTS(argc, argv, tests);
}
