/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Stress of the mailbox queues, every test once per queue type.
 *
 * Each item encodes (producer id << 40) | (sequence + 1). The consumer checks
 * that every producer's items arrive exactly in sequence (no loss, no
 * duplicate, no reordering) and that everything acknowledged (push returned
 * 0) was received.
 *
 *  stress_block / stress_nonblock
 *      4 producers, capacity 64, pushing as fast as they can with block=true,
 *      or block=false retrying on -EAGAIN. The consumer alternates pop_burst
 *      (bursts 1, 7, 32, 64) with act__queue_wait (spin 200 or 0) and pauses
 *      1 ms every 8192 items so the queue fills; the test asserts the full
 *      path was taken (info.waited / -EAGAIN seen). Producer 0 kicks now and
 *      then.
 *  stress_consumer_wakeup
 *      1 producer with one item in flight (push, then wait until the
 *      consumer took it). The consumer goes to sleep (spin 0, sometimes 50)
 *      just as the next push comes: every push must wake it. Traffic hides
 *      a lost wake-up (the next push repairs it); this mode does not.
 *  stress_producer_wakeup
 *      1 producer, capacity 2 (one lane), block=true; the consumer empties
 *      the ring in one burst after a random pause, so its pops land anywhere
 *      in the producer's "full -> announce -> sleep" path, and no later pop
 *      can repair a missed wake: every pop must wake it.
 *  stress_close
 *      4 blocking producers; the consumer pops for 200 ms, stops so they
 *      block on the full queue, then closes: all must return -ESHUTDOWN
 *      within 10 s and every acknowledged item must still be queued, in
 *      order.
 *  stress_untimed_wakeup
 *      The consumer waits as a group thread does: untimed (timeout 0),
 *      spin 0 (sometimes 50). One producer sends one event at a time, an
 *      item (3 in 4) or a kick, after a random delay (about log-uniform, up
 *      to ~4096 pauses) so that it lands anywhere in the consumer's way to
 *      sleep, and waits until the consumer took it; its last event is a
 *      close, which must end the consumer's wait with -ESHUTDOWN. A wake-up
 *      lost on any of the three paths leaves the consumer asleep for good
 *      (no timeout re-tests, nothing else comes): a watchdog in the main
 *      thread ends the process with a failure naming a lost wake-up when no
 *      event was taken for WATCHDOG_S seconds. The test also fails if the
 *      consumer slept fewer than MIN_SLEEPS times (waits of SLEPT_NS or
 *      more), which would make it void.
 *  stress_bq_inline (BQUEUE, BQUEUE_BATCHED only)
 *      Inline entries and pointer items mixed by 4 producers; see the test.
 *
 * Lost wake-ups are failures, not slowdowns: a wait that runs into its 1 s
 * timeout (returning 0 because it re-tests afterwards, or -ETIMEDOUT with an
 * item ready), or three timeouts in a row while producers still run, fail
 * the test (and close the queue so no thread stays stuck); an untimed wait
 * that never returns trips the watchdog.
 *
 * Time: TW_STRESS_SECONDS (default 10), 90 % split over the 20 timed runs
 * (4 types x 5 modes), each also bounded by an item count; the 4 close runs
 * take about 0.25 s each; the 2 stress_bq_inline runs 5 % each.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "act_queue_pvt.h"
#include "tw_test.h"

#define MAX_PRODUCERS 4
#define MAX_PER_PRODUCER 4000000ull
#define SEQ_BITS 40
#define SEQ_MASK ((1ull << SEQ_BITS) - 1)
#define WAIT_TIMEOUT_NS 1000000000ull
#define MAX_STALLS 3
#define WATCHDOG_S 5.0
#define SLEPT_NS 20000ull /* an untimed wait this long counts as a sleep */
#define MIN_SLEEPS 100

enum mode {
	MODE_BLOCK,
	MODE_NONBLOCK,
	MODE_CONSUMER_WAKEUP,
	MODE_PRODUCER_WAKEUP,
	MODE_CLOSE,
};

static const char *type_name(enum act_queue_type t)
{
	static const char *const names[] = { "bqueue", "bqueue_batched", "sharded", "lockfree" };

	return (unsigned)t < ACT_QUEUE_COUNT_ ? names[t] : "?";
}

static const char *mode_name(enum mode m)
{
	static const char *const names[] = { "block", "nonblock", "cons_wake", "prod_wake",
					     "close" };

	return names[m];
}

struct run;

struct producer {
	struct run *run;
	uint64_t id;
	pthread_t thread;
	uint64_t acked;  /* pushes that returned 0 */
	uint64_t eagain; /* -EAGAIN retries (non-blocking mode) */
	uint64_t waited; /* pushes that reported info.waited */
	int last_rc;     /* the return that ended the loop (0: count/time reached) */
	int bad_rc;      /* an unexpected return or info, 0 if none */
};

struct run {
	struct act__queue *q;
	enum mode mode;
	unsigned producers;
	uint32_t capacity;
	bool block;
	bool until_closed;  /* push until -ESHUTDOWN, ignore the deadline */
	bool one_in_flight; /* push, then wait until the consumer took it */
	double deadline;
	uint64_t max_per_producer;
	/* items of each producer the consumer took: consumer's release store,
	 * producer's acquire load (one_in_flight) */
	_Atomic uint64_t taken[MAX_PRODUCERS];
	/* producers done: release increment, consumer's acquire load */
	_Atomic uint32_t finished;
	_Atomic bool abort; /* the consumer failed: producers stop waiting for it */
	struct producer prod[MAX_PRODUCERS];
};

/* Wait until the consumer took this producer's item @p acked (or the run ends). */
static void wait_taken(struct run *r, struct producer *p)
{
	uint32_t spins = 0;

	while (atomic_load_explicit(&r->taken[p->id], memory_order_acquire) < p->acked) {
		if (++spins % 64 == 0) {
			sched_yield();
			/* relaxed: only ends the spin; the consumer gave up after an error */
			if (atomic_load_explicit(&r->abort, memory_order_relaxed))
				return;
		} else {
			act__cpu_relax();
		}
	}
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;
	struct run *r = p->run;
	uint64_t seq;

	for (seq = 0; seq < r->max_per_producer; seq++) {
		void *item = (void *)(uintptr_t)((p->id << SEQ_BITS) | (seq + 1));
		struct act__push_info info;
		int rc;

		if (!r->until_closed && (seq & 63) == 0 && tw_now_s() > r->deadline)
			break;
		for (;;) {
			rc = act__queue_push(r->q, item, r->block, &info);
			if (rc != -EAGAIN || r->block)
				break;
			p->eagain++;
			if ((p->eagain & 63) == 0)
				sched_yield();
			else
				act__cpu_relax();
		}
		if (rc != 0) {
			p->last_rc = rc;
			if (rc != -ESHUTDOWN || !r->until_closed)
				p->bad_rc = rc;
			break;
		}
		p->acked++;
		if (info.waited)
			p->waited++;
		if (info.depth == 0 || info.depth > r->capacity)
			p->bad_rc = -ERANGE;
		if (p->id == 0 && seq % 997 == 0)
			act__queue_kick(r->q);
		if (r->one_in_flight)
			wait_taken(r, p);
	}
	atomic_fetch_add_explicit(&r->finished, 1, memory_order_release);
	act__queue_kick(r->q); /* the consumer may be waiting for an item that will not come */
	return NULL;
}

struct consumer {
	uint64_t next[MAX_PRODUCERS]; /* next expected sequence + 1 per producer */
	uint64_t received;
	uint64_t waits;
	uint64_t empty_returns; /* waits that returned 0 with nothing queued (kicks) */
	uint64_t stalls;
	uint64_t rng;
	char error[160];
};

/* Check one burst; returns false (and records why) on the first bad item. */
static bool check_items(struct run *r, struct consumer *c, void **items, uint32_t n,
			uint32_t max)
{
	uint32_t i;

	if (n > max) {
		snprintf(c->error, sizeof(c->error), "pop_burst returned %u > max %u", n, max);
		return false;
	}
	for (i = 0; i < n; i++) {
		uint64_t v = (uint64_t)(uintptr_t)items[i];
		uint64_t id = v >> SEQ_BITS, seq = v & SEQ_MASK;

		if (id >= r->producers || seq != c->next[id]) {
			snprintf(c->error, sizeof(c->error),
				 "item %#llx: producer %llu expected seq %llu got %llu",
				 (unsigned long long)v, (unsigned long long)id,
				 (unsigned long long)(id < r->producers ? c->next[id] : 0),
				 (unsigned long long)seq);
			return false;
		}
		atomic_store_explicit(&r->taken[id], c->next[id], memory_order_release);
		c->next[id]++;
	}
	c->received += n;
	return true;
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

static struct run *new_run(enum act_queue_type type, enum mode mode, double seconds)
{
	struct run *r = calloc(1, sizeof(*r));
	unsigned i;

	assert_non_null(r);
	r->mode = mode;
	/* the wake-up modes use one producer: with more, the next push or pop
	 * repairs a lost wake-up and hides it */
	if (mode == MODE_PRODUCER_WAKEUP || mode == MODE_CONSUMER_WAKEUP)
		r->producers = 1;
	else
		r->producers = MAX_PRODUCERS;
	r->capacity = mode == MODE_PRODUCER_WAKEUP ? 2 : 64;
	r->block = mode != MODE_NONBLOCK;
	r->until_closed = mode == MODE_CLOSE;
	r->one_in_flight = mode == MODE_CONSUMER_WAKEUP;
	r->deadline = tw_now_s() + seconds;
	r->max_per_producer = mode == MODE_CLOSE ? UINT64_MAX : MAX_PER_PRODUCER;
	r->q = aligned_alloc(ACT__CACHE_LINE, sizeof(*r->q));
	assert_non_null(r->q);
	/* SHARDED: 4 lanes of 16 (producers keep to their lane), or one lane of 2 */
	assert_int_equal(act__queue_init(r->q, type, r->capacity,
					 mode == MODE_PRODUCER_WAKEUP ? 1 : 4), 0);
	for (i = 0; i < r->producers; i++) {
		r->prod[i].run = r;
		r->prod[i].id = i;
		assert_int_equal(pthread_create(&r->prod[i].thread, NULL, producer_main,
						&r->prod[i]), 0);
	}
	return r;
}

/* Join all producers; on a hang, leak the run (threads still use it) and fail. */
static void join_producers(struct run *r)
{
	unsigned i;

	for (i = 0; i < r->producers; i++)
		if (!join_within(r->prod[i].thread, 10.0))
			fail_msg("%s %s: producer %u still running 10 s after the end",
				 type_name(r->q->type), mode_name(r->mode), i);
}

static void free_run(struct run *r)
{
	act__queue_fini(r->q);
	free(r->q);
	free(r);
}

static void consumer_init(struct run *r, struct consumer *c)
{
	unsigned i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < r->producers; i++)
		c->next[i] = 1;
	c->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)r->mode;
}

static uint64_t next_random(struct consumer *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

/* ---- timed runs --------------------------------------------------------- */

static void consume_until_done(struct run *r, struct consumer *c)
{
	static const uint32_t burst_sizes[] = { 1, 7, 32, 64 };
	void *items[64];
	uint64_t iter = 0, next_pause = 8192;
	uint32_t stalls_in_row = 0;

	for (;; iter++) {
		/* prod_wake: empty the ring at once, so only this pop can wake the producer */
		uint32_t max = r->mode == MODE_PRODUCER_WAKEUP ? 2 : burst_sizes[iter & 3];
		uint32_t spin = r->mode == MODE_CONSUMER_WAKEUP ? (iter % 8 == 0 ? 50 : 0)
								: (iter & 1 ? 0 : 200);
		uint32_t n = act__queue_pop_burst(r->q, items, max);
		double t0;
		int rc;

		if (!check_items(r, c, items, n, max))
			return;
		if (r->mode == MODE_PRODUCER_WAKEUP) {
			/* land the next pop anywhere in the producer's sleep path */
			uint32_t k = (uint32_t)(next_random(c) % 3000);

			while (k-- > 0)
				act__cpu_relax();
		} else if (c->received >= next_pause) {
			/* let producers fill the queue: exercises full and blocking paths */
			struct timespec ts = { 0, 1000000 };

			next_pause += 8192;
			nanosleep(&ts, NULL);
		}
		if (n != 0) {
			stalls_in_row = 0;
			continue;
		}
		if (atomic_load_explicit(&r->finished, memory_order_acquire) == r->producers) {
			/* every acknowledged push happened before this load */
			n = act__queue_pop_burst(r->q, items, 64);
			if (!check_items(r, c, items, n, 64))
				return;
			if (n == 0)
				return;
			continue;
		}
		c->waits++;
		t0 = tw_now_s();
		rc = act__queue_wait(r->q, spin, WAIT_TIMEOUT_NS);
		if (rc == 0 && tw_now_s() - t0 >= 0.9 * (double)WAIT_TIMEOUT_NS * 1e-9) {
			/* A wait re-tests after its timeout, so a lost wake-up returns 0
			 * at the timeout; producers running never leave the consumer
			 * idle that long. */
			snprintf(c->error, sizeof(c->error),
				 "wait slept its whole timeout before returning 0 (count %u): "
				 "lost consumer wake-up", act__queue_count(r->q));
			return;
		}
		if (rc == 0) {
			if (act__queue_count(r->q) == 0)
				c->empty_returns++;
			continue;
		}
		if (rc != -ETIMEDOUT) {
			snprintf(c->error, sizeof(c->error), "wait returned %d", rc);
			return;
		}
		n = act__queue_pop_burst(r->q, items, 64);
		if (n != 0) {
			snprintf(c->error, sizeof(c->error),
				 "wait timed out with %u item(s) ready: lost consumer wake-up", n);
			return;
		}
		if (atomic_load_explicit(&r->finished, memory_order_acquire) != r->producers) {
			c->stalls++;
			if (++stalls_in_row >= MAX_STALLS) {
				snprintf(c->error, sizeof(c->error),
					 "no progress for %u s with producers running "
					 "(count %u): lost wake-up",
					 MAX_STALLS, act__queue_count(r->q));
				return;
			}
		}
	}
}

static void timed_run(enum act_queue_type type, enum mode mode, double seconds)
{
	double t0 = tw_now_s();
	struct run *r = new_run(type, mode, seconds);
	uint64_t acked = 0, eagain = 0, waited = 0;
	struct consumer c;
	unsigned i;

	consumer_init(r, &c);
	consume_until_done(r, &c);
	if (c.error[0] != '\0') {
		atomic_store(&r->abort, true);
		act__queue_close(r->q); /* release blocked or retrying producers */
	}
	join_producers(r);
	if (c.error[0] != '\0')
		fail_msg("%s %s: %s", type_name(type), mode_name(mode), c.error);

	for (i = 0; i < r->producers; i++) {
		struct producer *p = &r->prod[i];

		if (p->bad_rc != 0)
			fail_msg("%s %s: producer %u: unexpected return %d", type_name(type),
				 mode_name(mode), i, p->bad_rc);
		/* the consumer saw exactly this producer's acknowledged sequence */
		assert_int_equal(c.next[i] - 1, p->acked);
		acked += p->acked;
		eagain += p->eagain;
		waited += p->waited;
	}
	assert_int_equal(c.received, acked);
	assert_int_equal(act__queue_count(r->q), 0);
	assert_true(acked >= r->producers);
	if (mode == MODE_BLOCK || mode == MODE_PRODUCER_WAKEUP)
		assert_true(waited > 0); /* the blocking path was exercised */
	if (mode == MODE_NONBLOCK)
		assert_true(eagain > 0); /* the -EAGAIN path was exercised */
	if (mode == MODE_CONSUMER_WAKEUP)
		assert_true(c.waits > 0); /* the consumer did go to sleep */

	print_message("%-15s %-9s %9llu items %5.2f s  waited %llu  eagain %llu  waits %llu "
		      "(empty %llu)  stalls %llu\n",
		      type_name(type), mode_name(mode), (unsigned long long)acked,
		      tw_now_s() - t0, (unsigned long long)waited, (unsigned long long)eagain,
		      (unsigned long long)c.waits, (unsigned long long)c.empty_returns,
		      (unsigned long long)c.stalls);
	free_run(r);
}

/* ---- close under load --------------------------------------------------- */

static void close_run(enum act_queue_type type)
{
	struct run *r = new_run(type, MODE_CLOSE, 0);
	struct timespec fill = { 0, 20000000 };
	uint64_t acked = 0;
	struct consumer c;
	void *items[64];
	double until;
	uint32_t n;
	unsigned i;

	consumer_init(r, &c);
	until = tw_now_s() + 0.2;
	while (tw_now_s() < until) {
		n = act__queue_pop_burst(r->q, items, 32);
		if (!check_items(r, &c, items, n, 32))
			break;
		if (n == 0)
			(void)act__queue_wait(r->q, 100, 10000000ull);
	}
	nanosleep(&fill, NULL); /* producers fill the queue and block */
	act__queue_close(r->q);
	join_producers(r);
	if (c.error[0] != '\0')
		fail_msg("%s close: %s", type_name(type), c.error);

	/* drain what was acknowledged before the close */
	while ((n = act__queue_pop_burst(r->q, items, 64)) != 0)
		if (!check_items(r, &c, items, n, 64))
			fail_msg("%s close drain: %s", type_name(type), c.error);
	assert_int_equal(act__queue_wait(r->q, 0, WAIT_TIMEOUT_NS), -ESHUTDOWN);
	for (i = 0; i < r->producers; i++) {
		struct producer *p = &r->prod[i];

		if (p->bad_rc != 0)
			fail_msg("%s close: producer %u: unexpected return %d", type_name(type), i,
				 p->bad_rc);
		assert_int_equal(p->last_rc, -ESHUTDOWN);
		assert_int_equal(c.next[i] - 1, p->acked);
		acked += p->acked;
	}
	assert_int_equal(c.received, acked);
	free_run(r);
}

/* ---- untimed wake-ups --------------------------------------------------- */

struct handoff {
	struct act__queue *q;
	double deadline;
	/* events the consumer took: its release stores, the producer's acquire
	 * loads (one event in flight) and the watchdog's reads */
	_Atomic uint64_t items_taken;
	_Atomic uint64_t kicks_taken;
	/* kicks sent: the producer's release store before each kick, the
	 * consumer's acquire load when a wait returned 0 for nothing queued */
	_Atomic uint64_t kicks_sent;
	_Atomic bool consumer_done;
	_Atomic bool abort; /* the watchdog gave up: the producer stops waiting */
	_Atomic uint64_t items_sent; /* producer's; relaxed: also read by the watchdog */
	int producer_rc;     /* producer's: the push return that ended it, 0 if none */
	uint64_t waits;      /* consumer's */
	uint64_t slept;      /* consumer's: waits of SLEPT_NS or more */
	char error[160];     /* consumer's */
};

/* Producer: wait until the consumer took event @p n of @p taken. */
static void await_taken(struct handoff *h, _Atomic uint64_t *taken, uint64_t n)
{
	uint32_t spins = 0;

	while (atomic_load_explicit(taken, memory_order_acquire) < n) {
		if (++spins % 64 == 0) {
			sched_yield();
			/* relaxed: only ends the spin */
			if (atomic_load_explicit(&h->abort, memory_order_relaxed))
				return;
		} else {
			act__cpu_relax();
		}
	}
}

static void *handoff_producer(void *arg)
{
	struct handoff *h = arg;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	uint64_t seq;

	for (seq = 0; !atomic_load_explicit(&h->abort, memory_order_relaxed); seq++) {
		uint32_t delay;

		if ((seq & 63) == 0 && tw_now_s() > h->deadline)
			break;
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* about log-uniform in 0 .. 4095 pauses: before, during or after
		 * the consumer's way to sleep */
		delay = (uint32_t)(rng & 0xfff) >> ((rng >> 32) % 13);
		while (delay-- > 0)
			act__cpu_relax();
		if ((rng >> 48) % 4 == 0) {
			/* relaxed: the producer is the only writer */
			uint64_t n = atomic_load_explicit(&h->kicks_sent, memory_order_relaxed) + 1;

			atomic_store_explicit(&h->kicks_sent, n, memory_order_release);
			act__queue_kick(h->q);
			await_taken(h, &h->kicks_taken, n);
		} else {
			/* relaxed: the producer is the only writer */
			uint64_t n = atomic_load_explicit(&h->items_sent, memory_order_relaxed) + 1;
			int rc = act__queue_push(h->q, (void *)(uintptr_t)n, true, NULL);

			if (rc != 0) {
				h->producer_rc = rc;
				break;
			}
			atomic_store_explicit(&h->items_sent, n, memory_order_relaxed);
			await_taken(h, &h->items_taken, n);
		}
	}
	act__queue_close(h->q); /* the last event: it must end an untimed wait too */
	return NULL;
}

static void *handoff_consumer(void *arg)
{
	struct handoff *h = arg;
	uint64_t next = 1, kicks = 0, iter;
	bool after_wait = false;
	void *items[4];

	for (iter = 0;; iter++) {
		uint32_t n = act__queue_pop_burst(h->q, items, 4);
		uint64_t t0;
		int rc;

		if (n > 1 || (n == 1 && (uint64_t)(uintptr_t)items[0] != next)) {
			snprintf(h->error, sizeof(h->error),
				 "popped %u item(s), first %#llx, expected one, %#llx", n,
				 (unsigned long long)(uintptr_t)items[0], (unsigned long long)next);
			break;
		}
		if (n == 1) {
			atomic_store_explicit(&h->items_taken, next++, memory_order_release);
			after_wait = false;
			continue;
		}
		if (after_wait) {
			/* a wait returned 0 and nothing is queued: it took a kick */
			if (++kicks > atomic_load_explicit(&h->kicks_sent, memory_order_acquire)) {
				snprintf(h->error, sizeof(h->error),
					 "wait returned 0 with nothing queued and no kick pending");
				break;
			}
			atomic_store_explicit(&h->kicks_taken, kicks, memory_order_release);
			after_wait = false;
		}
		h->waits++;
		t0 = act__mono_ns();
		rc = act__queue_wait(h->q, iter % 8 == 0 ? 50 : 0, 0); /* untimed */
		if (act__mono_ns() - t0 >= SLEPT_NS)
			h->slept++;
		if (rc == -ESHUTDOWN)
			break;
		if (rc != 0) {
			snprintf(h->error, sizeof(h->error), "untimed wait returned %d", rc);
			break;
		}
		after_wait = true;
	}
	atomic_store(&h->consumer_done, true);
	return NULL;
}

static void untimed_run(enum act_queue_type type, double seconds)
{
	double t0 = tw_now_s(), last_change;
	struct handoff *h = calloc(1, sizeof(*h));
	pthread_t producer, consumer;
	uint64_t last = 0;

	assert_non_null(h);
	h->deadline = t0 + seconds;
	h->q = aligned_alloc(ACT__CACHE_LINE, sizeof(*h->q));
	assert_non_null(h->q);
	assert_int_equal(act__queue_init(h->q, type, 64, 4), 0);
	assert_int_equal(pthread_create(&consumer, NULL, handoff_consumer, h), 0);
	assert_int_equal(pthread_create(&producer, NULL, handoff_producer, h), 0);

	last_change = tw_now_s();
	while (!atomic_load(&h->consumer_done)) {
		uint64_t progress;
		double now;

		usleep(20 * 1000);
		now = tw_now_s();
		progress = atomic_load(&h->items_taken) + atomic_load(&h->kicks_taken);
		if (progress != last) {
			last = progress;
			last_change = now;
		} else if (now - last_change > WATCHDOG_S && !atomic_load(&h->consumer_done)) {
			uint64_t items = atomic_load(&h->items_sent);
			uint64_t kicks = atomic_load(&h->kicks_sent);
			bool all = items == atomic_load(&h->items_taken) &&
				   kicks == atomic_load(&h->kicks_taken);

			/* The consumer sleeps for good in an untimed wait, on memory
			 * this run owns: report and end the process. */
			print_error("%s untimed: lost wake-up: no event taken for %.0f s; items "
				    "sent %llu taken %llu, kicks sent %llu taken %llu, count %u%s\n",
				    type_name(type), WATCHDOG_S, (unsigned long long)items,
				    (unsigned long long)atomic_load(&h->items_taken),
				    (unsigned long long)kicks,
				    (unsigned long long)atomic_load(&h->kicks_taken),
				    act__queue_count(h->q),
				    all ? " (all taken: the close was lost)" : "");
			fflush(NULL);
			_exit(1);
		}
	}
	if (!join_within(consumer, 10.0) || !join_within(producer, 10.0)) {
		atomic_store(&h->abort, true);
		fail_msg("%s untimed: a thread still runs after the consumer finished",
			 type_name(type));
	}
	if (h->error[0] != '\0')
		fail_msg("%s untimed: %s", type_name(type), h->error);
	if (h->producer_rc != 0)
		fail_msg("%s untimed: push returned %d", type_name(type), h->producer_rc);
	assert_int_equal(atomic_load(&h->items_taken), atomic_load(&h->items_sent));
	assert_int_equal(atomic_load(&h->kicks_taken), atomic_load(&h->kicks_sent));
	assert_true(atomic_load(&h->items_sent) > 0 && atomic_load(&h->kicks_sent) > 0);
	print_message("%-15s %-9s %9llu items %5.2f s  kicks %llu  waits %llu (slept %llu)\n",
		      type_name(type), "untimed", (unsigned long long)atomic_load(&h->items_sent),
		      tw_now_s() - t0, (unsigned long long)atomic_load(&h->kicks_sent),
		      (unsigned long long)h->waits, (unsigned long long)h->slept);
	/* The test is void if the consumer never slept. */
	assert_true(h->slept >= MIN_SLEEPS);
	act__queue_fini(h->q);
	free(h->q);
	free(h);
}

/* ---- BQUEUE* inline entries --------------------------------------------- */

/*
 * stress_bq_inline (BQUEUE, BQUEUE_BATCHED): 4 producers, capacity 16, each
 * sending entries k = 1, 2, ...: odd k as an inline entry (claim, write 48
 * bytes, publish), even k as a pointer item; producers 0 and 1 block on a
 * full ring, 2 and 3 retry on -EAGAIN. The consumer takes entries as a
 * group does (act__bq_ready / act__bq_cell / act__bq_release: one
 * acquisition per entry for BQUEUE, all of them for BATCHED) and checks each
 * producer's order across both kinds and every byte of every inline entry (a
 * cell published before it was written, or overwritten before it was
 * released, shows as a torn entry). It pauses now and then so the ring fills.
 */
#define BQI_PRODUCERS 4

struct bqi_run {
	struct act__queue *q;
	_Atomic bool stop;
	uint64_t sent[BQI_PRODUCERS];
	uint64_t waits[BQI_PRODUCERS];
};

struct bqi_producer {
	struct bqi_run *r;
	unsigned id;
};

static unsigned char bqi_byte(unsigned p, uint64_t k, unsigned i)
{
	return (unsigned char)(k * 131u + p * 17u + i * 7u);
}

static void *bqi_producer_main(void *arg)
{
	struct bqi_producer *pr = arg;
	struct act__bqueue *bq = &pr->r->q->u.bq;
	bool block = pr->id < 2;
	uint64_t k = 0;

	while (!atomic_load_explicit(&pr->r->stop, memory_order_relaxed)) {
		uint64_t v = ((uint64_t)pr->id << 40) | (k + 1);
		int rc;

		if ((k + 1) % 2 != 0) {
			struct act__qcell *cell = NULL;
			bool waited = false;
			unsigned i;

			rc = act__bq_claim(bq, block, &cell, &waited);
			if (rc == 0) {
				cell->kind = 1 + ACT__QCELL_DATA;
				cell->word = (uint32_t)(k + 1);
				cell->u.inl.ptr[0] = (void *)(uintptr_t)v;
				cell->u.inl.ptr[1] = (void *)(uintptr_t)~v;
				for (i = 0; i < ACT__QCELL_DATA; i++)
					cell->u.inl.data[i] = bqi_byte(pr->id, k + 1, i);
				(void)act__bq_publish(bq);
				pr->r->waits[pr->id] += waited;
			}
		} else {
			struct act__push_info info;

			rc = act__queue_push(pr->r->q, (void *)(uintptr_t)v, block, &info);
			if (rc == 0)
				pr->r->waits[pr->id] += info.waited;
		}
		if (rc == -EAGAIN) {
			act__cpu_relax();
			continue;
		}
		if (rc != 0)
			break; /* closed */
		k++;
	}
	pr->r->sent[pr->id] = k;
	return NULL;
}

/* Check one entry against producer order; returns false on a bad one. */
static bool bqi_check(const struct act__qcell *cell, uint64_t *next)
{
	uint64_t v, k;
	unsigned p, i;

	v = cell->kind == 0 ? (uint64_t)(uintptr_t)cell->u.item
			    : (uint64_t)(uintptr_t)cell->u.inl.ptr[0];
	p = (unsigned)(v >> 40);
	k = v & ((1ull << 40) - 1);
	if (p >= BQI_PRODUCERS || k != next[p] + 1 || (cell->kind != 0) != (k % 2 != 0))
		return false;
	next[p] = k;
	if (cell->kind == 0)
		return true;
	if (cell->kind != 1 + ACT__QCELL_DATA || cell->word != (uint32_t)k ||
	    (uint64_t)(uintptr_t)cell->u.inl.ptr[1] != ~v)
		return false;
	for (i = 0; i < ACT__QCELL_DATA; i++)
		if (cell->u.inl.data[i] != bqi_byte(p, k, i))
			return false;
	return true;
}

static void stress_bq_inline(void **state)
{
	enum act_queue_type type = *(enum act_queue_type *)*state;
	struct bqi_run *r = calloc(1, sizeof(*r));
	struct bqi_producer pr[BQI_PRODUCERS];
	pthread_t th[BQI_PRODUCERS];
	uint64_t next[BQI_PRODUCERS] = {0}, taken = 0, waits = 0;
	double deadline = tw_now_s() + tw_stress_seconds() * 0.05;
	bool ok = true;
	unsigned p;

	assert_non_null(r);
	r->q = aligned_alloc(ACT__CACHE_LINE, sizeof(*r->q));
	assert_non_null(r->q);
	assert_int_equal(act__queue_init(r->q, type, 16, 0), 0);
	for (p = 0; p < BQI_PRODUCERS; p++) {
		pr[p] = (struct bqi_producer){.r = r, .id = p};
		assert_int_equal(pthread_create(&th[p], NULL, bqi_producer_main, &pr[p]), 0);
	}
	while (ok && tw_now_s() < deadline) {
		struct act__bqueue *bq = &r->q->u.bq;
		uint32_t avail, n, i, to_wake = 0;
		int rc = act__queue_wait(r->q, taken % 2 ? 200 : 0, WAIT_TIMEOUT_NS);

		if (rc == -ETIMEDOUT)
			continue;
		assert_int_equal(rc, 0);
		avail = act__bq_ready(bq);
		if (avail == 0)
			continue;
		n = type == ACT_QUEUE_BQUEUE ? 1 : avail;
		for (i = 0; i < n && ok; i++)
			ok = bqi_check(act__bq_cell(bq, i), next);
		act__bq_release(bq, n, &to_wake);
		act__bq_wake_producers(bq, to_wake, type == ACT_QUEUE_BQUEUE_BATCHED);
		taken += n;
		if (taken % 4096 < n)
			usleep(1000); /* let the ring fill and the producers block */
	}
	atomic_store(&r->stop, true);
	act__queue_close(r->q); /* releases blocked producers */
	for (p = 0; p < BQI_PRODUCERS; p++)
		assert_int_equal(pthread_join(th[p], NULL), 0);
	/* entries acknowledged before the close are still queued, in order */
	while (ok && act__queue_wait(r->q, 0, WAIT_TIMEOUT_NS) == 0) {
		uint32_t to_wake = 0;

		assert_true(act__bq_ready(&r->q->u.bq) != 0);
		ok = bqi_check(act__bq_cell(&r->q->u.bq, 0), next);
		act__bq_release(&r->q->u.bq, 1, &to_wake);
		taken++;
	}
	for (p = 0; p < BQI_PRODUCERS; p++) {
		if (ok && next[p] != r->sent[p])
			ok = false;
		waits += r->waits[p];
	}
	printf("  %s: %llu entries, producer waits %llu, %s\n",
	       type == ACT_QUEUE_BQUEUE ? "bqueue" : "bqueue_batched",
	       (unsigned long long)taken, (unsigned long long)waits, ok ? "ok" : "BAD ENTRY");
	assert_true(ok);
	assert_true(taken > 1000);
	assert_true(waits > 0); /* the blocking path was taken */
	act__queue_fini(r->q);
	free(r->q);
	free(r);
}

/* ---- registration ------------------------------------------------------- */

static enum act_queue_type types[] = {
	ACT_QUEUE_BQUEUE,
	ACT_QUEUE_BQUEUE_BATCHED,
	ACT_QUEUE_SHARDED,
	ACT_QUEUE_LOCKFREE,
};

static double run_seconds(void)
{
	return tw_stress_seconds() * 0.9 / 20.0;
}

static enum act_queue_type type_of(void **state)
{
	return *(enum act_queue_type *)*state;
}

static void stress_block(void **state)
{
	timed_run(type_of(state), MODE_BLOCK, run_seconds());
}

static void stress_nonblock(void **state)
{
	timed_run(type_of(state), MODE_NONBLOCK, run_seconds());
}

static void stress_consumer_wakeup(void **state)
{
	timed_run(type_of(state), MODE_CONSUMER_WAKEUP, run_seconds());
}

static void stress_producer_wakeup(void **state)
{
	timed_run(type_of(state), MODE_PRODUCER_WAKEUP, run_seconds());
}

static void stress_close(void **state)
{
	close_run(type_of(state));
}

static void stress_untimed_wakeup(void **state)
{
	untimed_run(type_of(state), run_seconds());
}

#define PER_TYPE(fn)                                                          \
	{ "bqueue/" #fn, fn, NULL, NULL, &types[0] },                             \
	{ "bqueue_batched/" #fn, fn, NULL, NULL, &types[1] },                     \
	{ "sharded/" #fn, fn, NULL, NULL, &types[2] },                            \
	{ "lockfree/" #fn, fn, NULL, NULL, &types[3] }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		PER_TYPE(stress_block),
		PER_TYPE(stress_nonblock),
		PER_TYPE(stress_consumer_wakeup),
		PER_TYPE(stress_producer_wakeup),
		PER_TYPE(stress_close),
		PER_TYPE(stress_untimed_wakeup),
		{ "bqueue/stress_bq_inline", stress_bq_inline, NULL, NULL, &types[0] },
		{ "bqueue_batched/stress_bq_inline", stress_bq_inline, NULL, NULL, &types[1] },
	};

	TW_RUN_TESTS(argc, argv, tests);
}
