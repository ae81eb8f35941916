/* SPDX-License-Identifier: BSD-3-Clause
 * Cross-thread deadlock detection: two threads cross A->B and B->A; one of
 * them must get -EDEADLK instead of sleeping forever, for every wait mode.
 */
#include "act_fixture.h"

enum { T_CROSS, T_LEAF, T_COUNT };

struct cross {
	struct act_actor *a, *b;
	pthread_barrier_t inside;
	enum act_wait wait;
	int rc_a, rc_b; /* rc of the inner call made by the handler of a / b */
};

struct st {
	struct cross *c;
	struct act_actor *other;
	int *rc;
};

static void h_cross(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	(void)m;
	pthread_barrier_wait(&s->c->inside); /* both threads hold their first lock */
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LEAF, sizeof(int));
	*s->rc = act_fast_send_opt(s->other, &req.hdr, NULL, 0, s->c->wait, 0);
}

static void h_leaf(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)state;
	(void)m;
}

static const act_handler_fn handlers[T_COUNT] = {h_cross, h_leaf};

static void *enter(void *arg)
{
	struct act_actor *a = arg;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_CROSS, sizeof(int));
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	return NULL;
}

static void cross(enum act_wait wait)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct cross c = {.wait = wait};
	struct st sa = {.c = &c, .rc = &c.rc_a}, sb = {.c = &c, .rc = &c.rc_b};
	struct act_actor_stats st_a, st_b;
	pthread_t t1, t2;

	pthread_barrier_init(&c.inside, NULL, 2);
	c.a = fx_actor("A", g, handlers, T_COUNT, &sa, false);
	c.b = fx_actor("B", g, handlers, T_COUNT, &sb, false);
	sa.other = c.b;
	sb.other = c.a;
	c.rc_a = c.rc_b = 1;
	assert_int_equal(pthread_create(&t1, NULL, enter, c.a), 0);
	assert_int_equal(pthread_create(&t2, NULL, enter, c.b), 0);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	/* at least one side saw the cycle (both may, when they walk at the
	 * same time); a side that did not got the lock and completed */
	assert_true(c.rc_a == -EDEADLK || c.rc_b == -EDEADLK);
	assert_true(c.rc_a == 0 || c.rc_a == -EDEADLK);
	assert_true(c.rc_b == 0 || c.rc_b == -EDEADLK);
	act_actor_stats(c.a, &st_a);
	act_actor_stats(c.b, &st_b);
	assert_int_equal(st_a.deadlocks + st_b.deadlocks,
			 (uint64_t)(c.rc_a == -EDEADLK) + (uint64_t)(c.rc_b == -EDEADLK));
	act_actor_stop(c.a);
	act_actor_stop(c.b);
	act_actor_destroy(c.a);
	act_actor_destroy(c.b);
	act_group_destroy(g);
	pthread_barrier_destroy(&c.inside);
}

static void cross_sleep(void **unused)
{
	(void)unused;
	cross(ACT_WAIT_SLEEP);
}

static void cross_spin(void **unused)
{
	(void)unused;
	cross(ACT_WAIT_SPIN);
}

static void cross_adaptive(void **unused)
{
	(void)unused;
	cross(ACT_WAIT_ADAPTIVE);
}

/* A three-thread cycle A->B->C->A is found as well. */
struct tri {
	struct act_actor *x[3];
	pthread_barrier_t inside;
	int rc[3];
	struct st s[3];
};

static void cross_three(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct tri t;
	struct cross c = {.wait = ACT_WAIT_SLEEP};
	pthread_t th[3];
	int i, deadlocks = 0, done = 0;

	(void)unused;
	pthread_barrier_init(&c.inside, NULL, 3);
	for (i = 0; i < 3; i++) {
		t.rc[i] = 1;
		t.s[i] = (struct st){.c = &c, .rc = &t.rc[i]};
		t.x[i] = fx_actor("T", g, handlers, T_COUNT, &t.s[i], false);
	}
	for (i = 0; i < 3; i++)
		t.s[i].other = t.x[(i + 1) % 3];
	for (i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, enter, t.x[i]), 0);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 3; i++) {
		deadlocks += t.rc[i] == -EDEADLK;
		done += t.rc[i] == 0;
	}
	assert_true(deadlocks >= 1);
	assert_int_equal(deadlocks + done, 3);
	for (i = 0; i < 3; i++) {
		act_actor_stop(t.x[i]);
		act_actor_destroy(t.x[i]);
	}
	act_group_destroy(g);
	pthread_barrier_destroy(&c.inside);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cross_sleep),
		cmocka_unit_test(cross_spin),
		cmocka_unit_test(cross_adaptive),
		cmocka_unit_test(cross_three),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
