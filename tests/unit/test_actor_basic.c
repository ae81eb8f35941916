/* SPDX-License-Identifier: BSD-3-Clause
 * Actor lifecycle, send, the fast_send family, priority, overflow policies,
 * counters and instrumentation fields.
 */
#include <unistd.h>

#include "act_fixture.h"

enum { T_LOG, T_ECHO, T_HOLD, T_COUNT };

struct st {
	struct fx_log log;
	struct {                   /* header fields of the last message */
		uint32_t qdepth;
		uint8_t mailbox_was_empty;
		struct act_actor *dest, *sender;
		uint64_t enqueue_tsc;
	} seen;
	pthread_barrier_t *hold_in; /* T_HOLD: meet the test, then wait for release */
	_Atomic int release;
};

static void h_log(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	s->seen.qdepth = m->qdepth;
	s->seen.mailbox_was_empty = m->mailbox_was_empty;
	s->seen.dest = m->dest;
	s->seen.sender = m->sender;
	s->seen.enqueue_tsc = m->enqueue_tsc;
	fx_log_add(&s->log, *ACT_PAYLOAD(m, int));
}

static void h_echo(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)state;
	act_reply(m, T_ECHO, m->payload, m->size);
}

static void h_hold(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	(void)m;
	pthread_barrier_wait(s->hold_in);
	while (!atomic_load(&s->release))
		usleep(100);
}

static const act_handler_fn handlers[T_COUNT] = {h_log, h_echo, h_hold};

static void create_rejects_bad_options(void **unused)
{
	struct act_actor_opts o = {.name = "x"};

	(void)unused;
	errno = 0;
	assert_null(act_actor_create(&o));
	assert_int_equal(errno, EINVAL);
	assert_null(act_actor_create(NULL));
	o.handlers = handlers;
	o.handler_count = T_COUNT;
	o.group_private = true; /* private needs a group */
	assert_null(act_actor_create(&o));
	assert_int_equal(errno, EINVAL);
}

static void lifecycle_and_send(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct act_actor_opts o = {.name = "a", .handlers = handlers, .handler_count = T_COUNT,
				   .state = &s, .group = g};
	struct act_actor *a = act_actor_create(&o);
	int v = 7;

	(void)unused;
	assert_non_null(a);
	assert_string_equal(act_actor_name(a), "a");
	assert_ptr_equal(act_actor_state(a), &s);
	assert_ptr_equal(act_actor_group(a), g);
	/* not started: refused */
	assert_int_equal(act_send_copy(a, T_LOG, &v, sizeof(v)), -ESHUTDOWN);
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 1;
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), -ESHUTDOWN);

	assert_int_equal(act_actor_start(a), 0);
	assert_int_equal(act_actor_start(a), -EALREADY);
	fx_send_int(a, T_LOG, 41);
	assert_int_equal(s.log.n, 0); /* queued, not run */
	assert_int_equal(act_group_queued(g), 1);
	assert_int_equal(act_group_drain(g), 1);
	assert_int_equal(s.log.n, 1);
	assert_int_equal(s.log.v[0], 41);

	/* unknown type */
	act_msg_init(&req.hdr, T_COUNT + 3, sizeof(int));
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), -ENOTSUP);
	assert_int_equal(act_send_copy(a, T_COUNT + 3, &v, sizeof(v)), -ENOTSUP);
	/* a stack message cannot be sent asynchronously */
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	assert_int_equal(act_send(a, &req.hdr), -EINVAL);

	assert_int_equal(act_actor_stop(a), 0);
	assert_int_equal(act_send_copy(a, T_LOG, &v, sizeof(v)), -ESHUTDOWN);
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), -ESHUTDOWN);
	/* restart after stop */
	assert_int_equal(act_actor_start(a), 0);
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

/* DESIGN 2.4: m1, m2, m3 queued, then fast_send(m4): m4 runs first. */
static void fast_send_runs_ahead_of_queued(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	int i;

	(void)unused;
	for (i = 1; i <= 3; i++)
		fx_send_int(a, T_LOG, i);
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 4;
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(s.log.n, 1);
	assert_int_equal(act_group_drain(g), 3);
	assert_int_equal(s.log.n, 4);
	assert_int_equal(s.log.v[0], 4);
	assert_int_equal(s.log.v[1], 1);
	assert_int_equal(s.log.v[2], 2);
	assert_int_equal(s.log.v[3], 3);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

static void instrumentation_fields(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_LOCKFREE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	struct act_mailbox_stats ms;

	(void)unused;
	/* off by default: the send stamps nothing */
	assert_false(act_group_instrumented(g));
	fx_send_int(a, T_LOG, 0);
	fx_send_int(a, T_LOG, 0);
	assert_int_equal(act_group_step(g, 2), 2);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.mailbox_was_empty, 0);
	assert_int_equal(s.seen.enqueue_tsc, 0);
	assert_ptr_equal(s.seen.dest, a);
	act_group_mailbox_stats(g, &ms);
	assert_int_equal(ms.max_depth, 0);

	act_group_set_instrument(g, true);
	assert_true(act_group_instrumented(g));
	fx_send_int(a, T_LOG, 1);
	fx_send_int(a, T_LOG, 2);
	assert_int_equal(act_group_step(g, 1), 1);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.mailbox_was_empty, 1);
	assert_ptr_equal(s.seen.dest, a);
	assert_null(s.seen.sender);
	assert_true(s.seen.enqueue_tsc != 0);
	assert_int_equal(act_group_step(g, 1), 1);
	assert_int_equal(s.seen.qdepth, 1);
	assert_int_equal(s.seen.mailbox_was_empty, 0);
	act_group_mailbox_stats(g, &ms);
	assert_int_equal(ms.max_depth, 2);

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 3;
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.enqueue_tsc, 0);
	assert_ptr_equal(s.seen.dest, a);

	/* and off again */
	act_group_set_instrument(g, false);
	fx_send_int(a, T_LOG, 4);
	fx_send_int(a, T_LOG, 5);
	assert_int_equal(act_group_step(g, 2), 2);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.enqueue_tsc, 0);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

static void overflow_fail_and_drop(void **unused)
{
	struct act_group *gf = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 2);
	struct act_group *gd = fx_group(ACT_QUEUE_BQUEUE_BATCHED, ACT_OVERFLOW_DROP_NEWEST, 2);
	struct st sf = {0}, sd = {0};
	struct act_actor *af = fx_actor("f", gf, handlers, T_COUNT, &sf, false);
	struct act_actor *ad = fx_actor("d", gd, handlers, T_COUNT, &sd, false);
	struct act_mailbox_stats ms;
	struct act_msg *m;

	(void)unused;
	act_group_set_instrument(gd, true); /* max_depth is kept only when instrumented */
	fx_send_int(af, T_LOG, 1);
	fx_send_int(af, T_LOG, 2);
	m = act_msg_alloc(T_LOG, sizeof(int));
	assert_non_null(m);
	*ACT_PAYLOAD(m, int) = 3;
	assert_int_equal(act_send(af, m), -EAGAIN);
	/* the caller still owns it: it can retry after a drain */
	assert_int_equal(act_group_drain(gf), 2);
	assert_int_equal(act_send(af, m), 0);
	assert_int_equal(act_group_drain(gf), 1);
	assert_int_equal(sf.log.v[2], 3);
	act_group_mailbox_stats(gf, &ms);
	assert_int_equal(ms.full_fails, 1);
	assert_int_equal(ms.dequeued, 3);
	assert_int_equal(ms.enqueued, 3);
	assert_int_equal(ms.dropped, 0);

	fx_send_int(ad, T_LOG, 1);
	fx_send_int(ad, T_LOG, 2);
	fx_send_int(ad, T_LOG, 3); /* dropped, returns 0 */
	fx_send_int(ad, T_LOG, 4);
	assert_int_equal(act_group_drain(gd), 2);
	act_group_mailbox_stats(gd, &ms);
	assert_int_equal(ms.dropped, 2);
	assert_int_equal(sd.log.n, 2);
	assert_int_equal(sd.log.v[1], 2);
	assert_true(ms.max_depth >= 1);

	act_actor_stop(af);
	act_actor_stop(ad);
	act_actor_destroy(af);
	act_actor_destroy(ad);
	act_group_destroy(gf);
	act_group_destroy(gd);
}

struct blocker {
	struct act_actor *to;
	int sent;
};

static void *send_many(void *arg)
{
	struct blocker *b = arg;
	int i;

	for (i = 0; i < 64; i++) {
		int v = i;

		if (act_send_copy(b->to, T_LOG, &v, sizeof(v)) == 0)
			b->sent++;
	}
	return NULL;
}

/* BLOCK: a producer on another thread waits for space; the consumer's own
 * thread gets -EAGAIN instead of waiting on itself. */
static void overflow_block(void **unused)
{
	struct act_group_opts go = {.name = "blk", .queue = ACT_QUEUE_BQUEUE, .capacity = 4,
				    .overflow = ACT_OVERFLOW_BLOCK, .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct st s = {0};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	struct blocker b = {.to = a};
	struct act_mailbox_stats ms;
	pthread_t th;
	int v = 0;

	(void)unused;
	assert_int_equal(pthread_create(&th, NULL, send_many, &b), 0);
	while (s.log.n < 64) {
		if (act_group_step(g, 1) == 0)
			usleep(50);
	}
	pthread_join(th, NULL);
	assert_int_equal(b.sent, 64);
	for (v = 0; v < 64; v++)
		assert_int_equal(s.log.v[v], v);
	act_group_mailbox_stats(g, &ms);
	assert_true(ms.blocked >= 1);
	/* this thread is now the group's thread: a full mailbox is -EAGAIN */
	for (v = 0; v < 4; v++)
		fx_send_int(a, T_LOG, v);
	assert_int_equal(act_send_copy(a, T_LOG, &v, sizeof(v)), -EAGAIN);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g); /* frees the 4 left and counts them */
}

struct holder {
	struct act_actor *a;
	pthread_barrier_t in;
};

static void *hold_lock(void *arg)
{
	struct holder *h = arg;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_HOLD, sizeof(int));
	act_fast_send(h->a, &req.hdr, NULL, 0);
	return NULL;
}

/* fast_send_x, fast_send_void, spin, adaptive and sleep against a held lock. */
static void fast_send_family_on_held_lock(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct holder h;
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	struct act_actor_stats st;
	pthread_t th;
	int out = 0;

	(void)unused;
	h.a = a;
	pthread_barrier_init(&h.in, NULL, 2);
	s.hold_in = &h.in;
	assert_int_equal(pthread_create(&th, NULL, hold_lock, &h), 0);
	pthread_barrier_wait(&h.in); /* the other thread is inside a's handler */

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_ECHO, sizeof(int));
	req.body = 5;
	assert_int_equal(act_fast_send_x(a, &req.hdr, &out, sizeof(out)), -EBUSY);
	act_actor_stats(a, &st);
	assert_int_equal(st.busy_returns, 1);

	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 99;
	assert_int_equal(act_fast_send_void(a, &req.hdr), 1); /* fell back */
	req.body = -1; /* the queued copy must not see this */
	act_actor_stats(a, &st);
	assert_int_equal(st.async_fallbacks, 1);
	assert_int_equal(act_group_queued(g), 1);
	/* a pool request is copied too: the caller keeps it and may free it */
	struct act_msg *pm = act_msg_alloc(T_LOG, sizeof(int));
	int v = 98;

	assert_non_null(pm);
	memcpy(pm->payload, &v, sizeof(v));
	assert_int_equal(act_fast_send_void(a, pm), 1);
	v = -1;
	memcpy(pm->payload, &v, sizeof(v));
	act_msg_free(pm);
	assert_int_equal(act_group_queued(g), 2);

	atomic_store(&s.release, 1);
	/* blocking forms now wait for the holder and then run */
	act_msg_init(&req.hdr, T_ECHO, sizeof(int));
	req.body = 6;
	assert_int_equal(act_fast_send_spin(a, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(out, 6);
	pthread_join(th, NULL);

	assert_int_equal(act_group_drain(g), 2);
	assert_int_equal(s.log.v[0], 99);
	assert_int_equal(s.log.v[1], 98);

	/* held again, now the sleeping and adaptive forms */
	atomic_store(&s.release, 0);
	assert_int_equal(pthread_create(&th, NULL, hold_lock, &h), 0);
	pthread_barrier_wait(&h.in);
	atomic_store(&s.release, 1);
	req.body = 7;
	assert_int_equal(act_fast_send(a, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(out, 7);
	pthread_join(th, NULL);
	atomic_store(&s.release, 0);
	assert_int_equal(pthread_create(&th, NULL, hold_lock, &h), 0);
	pthread_barrier_wait(&h.in);
	atomic_store(&s.release, 1);
	req.body = 8;
	assert_int_equal(act_fast_send_adaptive(a, &req.hdr, &out, sizeof(out)),
			 (int)sizeof(int));
	assert_int_equal(out, 8);
	pthread_join(th, NULL);

	/* free lock: void completes synchronously */
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 100;
	assert_int_equal(act_fast_send_void(a, &req.hdr), 0);
	assert_int_equal(s.log.v[2], 100);
	act_actor_stats(a, &st);
	assert_int_equal(st.async_fallbacks, 2);
	assert_int_equal(st.async_runs, 2);
	/* T_HOLD x3, echo x3 (spin, sleep, adaptive), void x1 */
	assert_int_equal(st.sync_completions, 7);
	assert_int_equal(act_fast_send_opt(a, &req.hdr, NULL, 0, ACT_WAIT_NONE + 1, 0), -EINVAL);

	pthread_barrier_destroy(&h.in);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

/* Own-mailbox actor: its own thread runs the handler. */
struct own_st {
	_Atomic int count;
	pthread_t thread;
};

static void h_own(struct act_actor *self, void *state, struct act_msg *m)
{
	struct own_st *s = state;

	(void)self;
	(void)m;
	s->thread = pthread_self();
	atomic_fetch_add(&s->count, 1);
}

static void own_mailbox_actor_has_its_thread(void **unused)
{
	static const act_handler_fn hs[1] = {h_own};
	struct act_group_opts mb = {.queue = ACT_QUEUE_BQUEUE_BATCHED, .capacity = 64, .cpu = -1};
	struct own_st s = {0};
	struct act_actor_opts o = {.name = "own", .handlers = hs, .handler_count = 1,
				   .state = &s, .mailbox = &mb};
	struct act_actor *a = act_actor_create(&o);
	int i;

	(void)unused;
	assert_non_null(a);
	assert_int_equal(act_actor_start(a), 0);
	for (i = 0; i < 50; i++)
		assert_int_equal(act_send_copy(a, 0, &i, sizeof(i)), 0);
	for (i = 0; i < 5000 && atomic_load(&s.count) < 50; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&s.count), 50);
	assert_false(pthread_equal(s.thread, pthread_self()));
	assert_int_equal(act_actor_stop(a), 0);
	act_actor_destroy(a);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create_rejects_bad_options),
		cmocka_unit_test(lifecycle_and_send),
		cmocka_unit_test(fast_send_runs_ahead_of_queued),
		cmocka_unit_test(instrumentation_fields),
		cmocka_unit_test(overflow_fail_and_drop),
		cmocka_unit_test(overflow_block),
		cmocka_unit_test(fast_send_family_on_held_lock),
		cmocka_unit_test(own_mailbox_actor_has_its_thread),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
