/* SPDX-License-Identifier: BSD-3-Clause
 * Groups: one mailbox for all members, one thread or a caller-driven step,
 * group-private members, the injected clock, every queue type.
 */
#include <unistd.h>

#include "act_fixture.h"

enum { T_LOG, T_CALL_PEER, T_NOW, T_COUNT };

struct st {
	int id;
	struct fx_log *log; /* shared by the members: one total order */
	struct act_actor *peer;
	int peer_rc;
	uint64_t now;
	pthread_t ran_on;
};

static void h_log(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	s->ran_on = pthread_self();
	fx_log_add(s->log, s->id * 1000 + *ACT_PAYLOAD(m, int));
}

static void h_call_peer(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	(void)m;
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 7;
	s->peer_rc = act_fast_send(s->peer, &req.hdr, NULL, 0);
}

static void h_now(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)m;
	s->now = act_now(self);
}

static const act_handler_fn handlers[T_COUNT] = {h_log, h_call_peer, h_now};

static void members_share_one_order(void **unused)
{
	enum act_queue_type q;

	(void)unused;
	for (q = ACT_QUEUE_BQUEUE; q < ACT_QUEUE_COUNT_; q++) {
		/* sharded: one producer uses one lane of capacity / shards */
		struct act_group *g = fx_group(q, ACT_OVERFLOW_FAIL, 256);
		struct fx_log log = {0};
		struct st sa = {.id = 1, .log = &log}, sb = {.id = 2, .log = &log};
		struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &sa, false);
		struct act_actor *b = fx_actor("b", g, handlers, T_COUNT, &sb, false);
		int i;

		for (i = 0; i < 20; i++)
			fx_send_int(i % 3 == 0 ? a : b, T_LOG, i);
		assert_int_equal(act_group_queued(g), 20);
		assert_int_equal(act_group_drain(g), 20);
		for (i = 0; i < 20; i++)
			assert_int_equal(log.v[i], (i % 3 == 0 ? 1000 : 2000) + i);
		act_actor_stop(a);
		act_actor_stop(b);
		act_actor_destroy(a);
		act_actor_destroy(b);
		act_group_destroy(g);
	}
}

static void group_thread_start_stop(void **unused)
{
	struct act_group_opts go = {.name = "gt", .queue = ACT_QUEUE_LOCKFREE, .capacity = 256,
				    .spin = 100, .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct fx_log log = {0};
	struct st sa = {.id = 1, .log = &log};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &sa, false);
	int i;

	(void)unused;
	assert_non_null(g);
	assert_int_equal(act_group_start(g), 0);
	assert_int_equal(act_group_start(g), -EALREADY);
	assert_int_equal(act_group_step(g, 0), -EALREADY); /* it has a thread */
	for (i = 0; i < 100; i++)
		fx_send_int(a, T_LOG, i);
	for (i = 0; i < 5000 && atomic_load(&log.n) < 100; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&log.n), 100);
	assert_false(pthread_equal(sa.ran_on, pthread_self()));
	assert_int_equal(act_group_stop(g), 0);
	/* stopped: messages stay queued until stepped */
	fx_send_int(a, T_LOG, 500);
	usleep(2000);
	assert_int_equal(atomic_load(&log.n), 100);
	assert_int_equal(act_group_step(g, 0), 1);
	assert_true(pthread_equal(sa.ran_on, pthread_self()));
	assert_int_equal(log.v[100], 1500);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

struct priv_fx {
	struct act_group *g;
	struct act_actor *priv, *caller;
	int rc;
};

static void *call_private_from_other_thread(void *arg)
{
	struct priv_fx *p = arg;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 1;
	p->rc = act_fast_send(p->priv, &req.hdr, NULL, 0);
	assert_int_equal(p->rc, -EPERM);
	/* void falls back to the mailbox */
	assert_int_equal(act_fast_send_void(p->priv, &req.hdr), 1);
	/* and a plain send is the way in */
	fx_send_int(p->priv, T_LOG, 2);
	return NULL;
}

static void private_member(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 64);
	struct fx_log log = {0};
	struct st sp = {.id = 1, .log = &log}, sc = {.id = 2, .log = &log};
	struct priv_fx p = {.g = g};

	(void)unused;
	p.priv = fx_actor("priv", g, handlers, T_COUNT, &sp, true);
	p.caller = fx_actor("caller", g, handlers, T_COUNT, &sc, false);
	sc.peer = p.priv;
	assert_int_equal(act_group_bind(g), 0); /* this thread runs the group */
	fx_on_thread(call_private_from_other_thread, &p);
	assert_int_equal(act_group_drain(g), 2);
	assert_int_equal(log.v[0], 1001);
	assert_int_equal(log.v[1], 1002);
	/* from the group's thread, directly and from a member's handler */
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 3;
	assert_int_equal(act_fast_send(p.priv, &req.hdr, NULL, 0), 0);
	fx_send_int(p.caller, T_CALL_PEER, 0);
	assert_int_equal(act_group_drain(g), 1);
	assert_int_equal(sc.peer_rc, 0);
	assert_int_equal(log.n, 4);
	assert_int_equal(log.v[3], 1007);
	act_actor_stop(p.priv);
	act_actor_stop(p.caller);
	act_actor_destroy(p.priv);
	act_actor_destroy(p.caller);
	act_group_destroy(g);
}

static void *step_from_other(void *arg)
{
	struct act_group *g = arg;

	assert_int_equal(act_group_step(g, 0), -EALREADY);
	assert_int_equal(act_group_bind(g), -EALREADY);
	return NULL;
}

static void bound_to_one_thread(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_SHARDED, ACT_OVERFLOW_FAIL, 64);

	(void)unused;
	assert_int_equal(act_group_step(g, 0), 0); /* binds */
	assert_int_equal(act_group_bind(g), 0);    /* same thread: fine */
	fx_on_thread(step_from_other, g);
	assert_int_equal(act_group_start(g), -EALREADY);
	act_group_destroy(g);
}

static uint64_t fake_clock(void *ctx)
{
	return *(uint64_t *)ctx;
}

static void injected_clock(void **unused)
{
	uint64_t t = 123456789;
	struct act_group_opts go = {.name = "clk", .clock = fake_clock, .clock_ctx = &t, .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct st s = {0};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);

	(void)unused;
	fx_send_int(a, T_NOW, 0);
	act_group_drain(g);
	assert_int_equal(s.now, 123456789);
	t = 5;
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_NOW, sizeof(int));
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(s.now, 5);
	assert_int_equal(act_group_now(g), 5);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

static void bad_group_options(void **unused)
{
	struct act_group_opts go = {.queue = ACT_QUEUE_COUNT_, .cpu = -1};

	(void)unused;
	errno = 0;
	assert_null(act_group_create(&go));
	assert_int_equal(errno, EINVAL);
	go.queue = ACT_QUEUE_BQUEUE;
	go.overflow = ACT_OVERFLOW_DROP_NEWEST + 1;
	assert_null(act_group_create(&go));
	go.overflow = ACT_OVERFLOW_BLOCK;
	go.batch = 100000;
	assert_null(act_group_create(&go));
}

/* Destroying an actor with messages still queued: they are discarded when
 * the group is destroyed, and nothing leaks (ASan checks the latter). */
static void destroy_with_queued_messages(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE_BATCHED, ACT_OVERFLOW_FAIL, 64);
	struct fx_log log = {0};
	struct st s = {.log = &log};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	struct act_mailbox_stats ms;
	int i;

	(void)unused;
	for (i = 0; i < 5; i++)
		fx_send_int(a, T_LOG, i);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_mailbox_stats(g, &ms);
	assert_int_equal(ms.enqueued, 5);
	/* a dead actor's messages are dropped when the group runs */
	assert_int_equal(act_group_step(g, 2), 2);
	assert_int_equal(log.n, 0);
	act_group_destroy(g);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(members_share_one_order),
		cmocka_unit_test(group_thread_start_stop),
		cmocka_unit_test(private_member),
		cmocka_unit_test(bound_to_one_thread),
		cmocka_unit_test(injected_clock),
		cmocka_unit_test(bad_group_options),
		cmocka_unit_test(destroy_with_queued_messages),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
