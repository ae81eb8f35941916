/* SPDX-License-Identifier: BSD-3-Clause
 * The control queue (issue 16 item 2; act.h, "Control queue"): what
 * act_send_control() queues runs ahead of the group's mailbox. Checked here,
 * each ordering test once per mailbox queue kind:
 *  - a control message runs before every mailbox message queued before it,
 *    on a stepped group and on a running group thread (a message blocked in
 *    a handler while the mailbox fills behind it), and before the rest of a
 *    batch the loop already took from the mailbox;
 *  - the lane still runs first: a handler's own cascade, then control;
 *  - it never fails full: a full mailbox under FAIL refuses act_send_copy()
 *    while thousands of control messages are accepted and run in order;
 *  - several producers on other threads: every message runs once, each
 *    producer's in its order, and a sleeping group thread is woken;
 *  - counters (control, enqueued, dequeued, depth) and destroy (discarded,
 *    references dropped, blocks back in the pool);
 *  - errors: stopped receiver, no handler, bad arguments, oversize.
 */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "act_fixture.h"
#include "actor_pvt.h"

enum { T_LOG, T_BLOCK, T_CASCADE, T_SEQ, T_COUNT };

#define LOG_MAX 8192

struct st {
	struct act_actor *self;
	_Atomic uint32_t n;
	int log[LOG_MAX];
	_Atomic int entered;      /* T_BLOCK: running */
	_Atomic int release;      /* T_BLOCK: may return */
	/* T_SEQ: per producer, the next sequence number expected */
	uint32_t next_seq[8];
	uint32_t out_of_order;
};

static void logit(struct st *s, int tag)
{
	uint32_t n = atomic_load_explicit(&s->n, memory_order_relaxed);

	if (n < LOG_MAX)
		s->log[n] = tag;
	atomic_store_explicit(&s->n, n + 1, memory_order_release);
}

/* T_LOG: log the tag; tag 33 also sends control 300 to itself (from inside
 * a handler, on the group's thread). */
static void h_log(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	int tag = *ACT_PAYLOAD(m, const int);

	logit(s, tag);
	if (tag == 33) {
		int c = 300;

		assert_int_equal(act_send_control(self, T_LOG, &c, sizeof(c)), 0);
	}
}

/* T_BLOCK: wait (bounded) until the test releases it. */
static void h_block(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	double t0 = tw_now_s();

	(void)self;
	(void)m;
	atomic_store(&s->entered, 1);
	while (!atomic_load(&s->release) && tw_now_s() - t0 < 10)
		sched_yield();
}

/* T_CASCADE: lane 1, control 2, lane 3 to itself: runs 1, 3, then 2. */
static void h_cascade(struct act_actor *self, void *state, struct act_msg *m)
{
	int tags[3] = {1, 2, 3};

	(void)state;
	(void)m;
	assert_int_equal(act_send_copy(self, T_LOG, &tags[0], sizeof(int)), 0);
	assert_int_equal(act_send_control(self, T_LOG, &tags[1], sizeof(int)), 0);
	assert_int_equal(act_send_copy(self, T_LOG, &tags[2], sizeof(int)), 0);
}

/* T_SEQ: {producer, seq}: checks each producer's order. */
static void h_seq(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	const uint32_t *p = ACT_PAYLOAD(m, const uint32_t);

	(void)self;
	if (p[1] != s->next_seq[p[0]])
		s->out_of_order++;
	s->next_seq[p[0]] = p[1] + 1;
	atomic_fetch_add(&s->n, 1);
}

static const act_handler_fn handlers[T_COUNT] = {
	[T_LOG] = h_log, [T_BLOCK] = h_block, [T_CASCADE] = h_cascade, [T_SEQ] = h_seq,
};

struct world {
	struct act_group *g;
	struct act_actor *a;
	struct st s;
};

static struct world *world_open(enum act_queue_type q, uint32_t capacity, bool thread)
{
	struct world *w = calloc(1, sizeof(*w));
	struct act_group_opts o = {
		.name = "ctl", .queue = q, .overflow = ACT_OVERFLOW_FAIL,
		.capacity = capacity, .cpu = -1,
	};

	assert_non_null(w);
	w->g = act_group_create(&o);
	assert_non_null(w->g);
	w->a = fx_actor("a", w->g, handlers, T_COUNT, &w->s, false);
	w->s.self = w->a;
	if (thread)
		assert_int_equal(act_group_start(w->g), 0);
	return w;
}

static void world_close(struct world *w)
{
	act_actor_stop(w->a);
	act_actor_destroy(w->a);
	act_group_destroy(w->g);
	free(w);
}

static void send_log(struct act_actor *to, int tag)
{
	assert_int_equal(act_send_copy(to, T_LOG, &tag, sizeof(tag)), 0);
}

static void send_ctl(struct act_actor *to, int tag)
{
	assert_int_equal(act_send_control(to, T_LOG, &tag, sizeof(tag)), 0);
}

static void expect_log(const struct st *s, const int *want, uint32_t n)
{
	assert_int_equal(atomic_load(&s->n), n);
	for (uint32_t i = 0; i < n; i++)
		if (s->log[i] != want[i])
			fail_msg("log[%u] = %d, expected %d", i, s->log[i], want[i]);
}

/* Wait (bounded) until @s logged @n messages. */
static void wait_n(const struct st *s, uint32_t n)
{
	double t0 = tw_now_s();

	while (atomic_load_explicit(&s->n, memory_order_acquire) < n && tw_now_s() - t0 < 20)
		sched_yield();
	assert_int_equal(atomic_load(&s->n), n);
}

/* ------------------------------------------------------------------------ */

/* Stepped: mailbox 31..36 queued, then control 100, 101: the control ones
 * run first; tag 33's control 300 runs before 34, although 34..36 were
 * already taken from the mailbox with 33 (one batch). */
static void ahead_of_mailbox_stepped(void **unused)
{
	struct world *w = world_open(fx_queue(), 64, false);
	const int want[] = {100, 101, 31, 32, 33, 300, 34, 35, 36};
	struct act_mailbox_stats st;

	(void)unused;
	for (int i = 31; i <= 36; i++)
		send_log(w->a, i);
	send_ctl(w->a, 100);
	send_ctl(w->a, 101);
	assert_int_equal(act_group_queued(w->g), 8);
	assert_int_equal(act_group_step(w->g, 4), 4);   /* 100, 101, 31, 32 */
	assert_int_equal(act_group_drain(w->g), 5);
	expect_log(&w->s, want, 9);
	act_group_mailbox_stats(w->g, &st);
	assert_int_equal(st.control, 3);
	assert_int_equal(st.enqueued, 9);
	assert_int_equal(st.dequeued, 9);
	assert_int_equal(act_group_queued(w->g), 0);
	world_close(w);
}

/* Running thread: T_BLOCK runs; 200 mailbox messages queue behind it; a
 * control message sent last runs right after it, first of all. */
static void ahead_of_mailbox_running(void **unused)
{
	struct world *w = world_open(fx_queue(), 1024, true);
	double t0 = tw_now_s();

	(void)unused;
	assert_int_equal(act_send_copy(w->a, T_BLOCK, &(int){0}, sizeof(int)), 0);
	while (!atomic_load(&w->s.entered) && tw_now_s() - t0 < 10)
		sched_yield();
	assert_true(atomic_load(&w->s.entered));
	for (int i = 1; i <= 200; i++)
		send_log(w->a, 1000 + i);
	send_ctl(w->a, 999);
	atomic_store(&w->s.release, 1);
	wait_n(&w->s, 201);
	assert_int_equal(w->s.log[0], 999);
	for (int i = 1; i <= 200; i++)
		assert_int_equal(w->s.log[i], 1000 + i);
	world_close(w);
}

/* The lane first: a handler's own cascade (lane) before its control send. */
static void lane_before_control(void **unused)
{
	struct world *w = world_open(fx_queue(), 64, false);
	const int want[] = {1, 3, 2, 7};

	(void)unused;
	assert_int_equal(act_send_copy(w->a, T_CASCADE, &(int){0}, sizeof(int)), 0);
	send_log(w->a, 7);
	assert_int_equal(act_group_drain(w->g), 5);
	expect_log(&w->s, want, 4);
	world_close(w);
}

/* A full mailbox (FAIL) refuses; the control queue takes 5000 more, which
 * all run, in order, before the mailbox's (16; fewer for SHARDED, whose
 * lanes share the capacity). */
static void never_full(void **unused)
{
	struct world *w = world_open(fx_queue(), 16, false);
	struct act_mailbox_stats st;
	int tag = 0;
	int rc;

	(void)unused;
	while ((rc = act_send_copy(w->a, T_LOG, &tag, sizeof(tag))) == 0)
		tag++;
	assert_int_equal(rc, -EAGAIN);
	assert_true(tag == 16 || (fx_queue() == ACT_QUEUE_SHARDED && tag > 0));
	for (int i = 0; i < 5000; i++)
		send_ctl(w->a, 10000 + i);
	assert_int_equal(act_group_queued(w->g), 5000 + tag);
	assert_int_equal(act_group_drain(w->g), 5000 + tag);
	for (int i = 0; i < 5000; i++)
		assert_int_equal(w->s.log[i], 10000 + i);
	for (int i = 0; i < tag; i++)
		assert_int_equal(w->s.log[5000 + i], i);
	act_group_mailbox_stats(w->g, &st);
	assert_int_equal(st.control, 5000);
	assert_int_equal(st.full_fails, 1);
	assert_int_equal(st.enqueued, st.dequeued);
	world_close(w);
}

struct producer {
	struct act_actor *to;
	uint32_t id;
	uint32_t n;
	int failures;
};

static void *produce(void *arg)
{
	struct producer *p = arg;

	for (uint32_t i = 0; i < p->n; i++) {
		const uint32_t body[2] = {p->id, i};

		if (act_send_control(p->to, T_SEQ, body, sizeof(body)) != 0)
			p->failures++;
		if ((i & 1023) == 0)
			usleep(200);   /* let the group thread fall asleep now and then */
	}
	return NULL;
}

/* Four producers, a group thread that sleeps when idle (spin 0): every
 * message runs once, each producer's in order. */
static void many_producers_wake(void **unused)
{
	struct world *w = world_open(fx_queue(), 64, true);
	struct producer p[4];
	pthread_t th[4];
	struct act_mailbox_stats st;

	(void)unused;
	for (uint32_t i = 0; i < 4; i++) {
		p[i] = (struct producer){.to = w->a, .id = i, .n = 20000};
		assert_int_equal(pthread_create(&th[i], NULL, produce, &p[i]), 0);
	}
	for (uint32_t i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(p[i].failures, 0);
	}
	wait_n(&w->s, 80000);
	act_group_stop(w->g);
	assert_int_equal(w->s.out_of_order, 0);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(w->s.next_seq[i], 20000);
	act_group_mailbox_stats(w->g, &st);
	assert_int_equal(st.control, 80000);
	assert_int_equal(st.dequeued, 80000);
	/* and a lone message to an idle, sleeping thread still runs */
	assert_int_equal(act_group_start(w->g), 0);
	usleep(20000);
	{
		const uint32_t body[2] = {0, 20000};

		assert_int_equal(act_send_control(w->a, T_SEQ, body, sizeof(body)), 0);
	}
	wait_n(&w->s, 80001);
	world_close(w);
}

/* Destroy with control messages queued: discarded, counted, the receiver's
 * references dropped, the blocks back in the pool. */
static void destroy_discards(void **unused)
{
	struct world *w = world_open(fx_queue(), 64, false);
	struct act_actor *a = w->a;
	struct act_mailbox_stats st;

	(void)unused;
	for (int i = 0; i < 5; i++)
		send_ctl(a, i);
	send_log(a, 50);
	atomic_fetch_add(&a->refs, 1);
	act_actor_stop(a);
	act_actor_destroy(a);
	assert_int_equal(atomic_load(&a->refs), 1 + 6);  /* ours, the queued */
	act__queue_close(&w->g->queue);
	assert_int_equal(act__group_discard(w->g), 6);
	act_group_mailbox_stats(w->g, &st);
	assert_int_equal(st.discarded, 6);
	assert_int_equal(st.control, 5);
	assert_int_equal(st.enqueued, st.dequeued + st.discarded);
	assert_int_equal(act_group_queued(w->g), 0);
	assert_int_equal(atomic_load(&a->refs), 1);
	assert_int_equal(atomic_load(&w->s.n), 0);
	act_group_destroy(w->g);
	act__actor_unref(a);
	free(w);
}

static void errors(void **unused)
{
	struct world *w = world_open(ACT_QUEUE_LOCKFREE, 64, false);
	int tag = 1;

	(void)unused;
	assert_int_equal(act_send_control(w->a, T_COUNT, &tag, sizeof(tag)), -ENOTSUP);
	assert_int_equal(act_send_control(w->a, T_LOG, NULL, 4), -EINVAL);
	assert_int_equal(act_send_control(NULL, T_LOG, &tag, sizeof(tag)), -EINVAL);
	{
		uint32_t big = act_msg_max_payload() + 1;
		void *p = calloc(1, big);

		assert_non_null(p);
		assert_int_equal(act_send_control(w->a, T_LOG, p, big), -EMSGSIZE);
		free(p);
	}
	assert_int_equal(act_group_queued(w->g), 0);
	act_actor_stop(w->a);
	assert_int_equal(act_send_control(w->a, T_LOG, &tag, sizeof(tag)), -ESHUTDOWN);
	act_actor_destroy(w->a);
	act_group_destroy(w->g);
	free(w);
}

#define PER_QUEUE(fn)                                                                \
	FX_PER_INLINE_QUEUE(fn),                                                     \
	{ "sharded/" #fn, fn, fx_set_queue, NULL, &(enum act_queue_type){ACT_QUEUE_SHARDED} }

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		PER_QUEUE(ahead_of_mailbox_stepped),
		PER_QUEUE(ahead_of_mailbox_running),
		PER_QUEUE(lane_before_control),
		PER_QUEUE(never_full),
		PER_QUEUE(many_producers_wake),
		PER_QUEUE(destroy_discards),
		cmocka_unit_test(errors),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
