/* SPDX-License-Identifier: BSD-3-Clause
 * Cross-thread deadlock detection: two threads cross A->B and B->A; one of
 * them must get -EDEADLK instead of sleeping forever, for every wait mode.
 * The same cycle formed by mailbox handlers on two started group threads,
 * with the default lock, a biased lock (lock_bias) and a lock released by
 * a plain store (lock_release_store). A cycle that is not detected hangs
 * those threads: a watchdog aborts the test after WATCHDOG_S, saying so.
 * The lock's options are read back through act_fast_pvt.h (not API).
 */
#include <stdlib.h>
#include <unistd.h>

#include "act_fixture.h"

/* Bound of the group-thread cycles, in seconds: far above their run time. */
#define WATCHDOG_S 10.0

/*
 * Watchdog: armed around a part of a test that hangs if the runtime misses
 * a cycle; aborts the process with @what if not disarmed within WATCHDOG_S.
 * No cmocka assertion may run between arm and disarm (a failed one would
 * leave it armed).
 */
struct watchdog {
	pthread_t thread;
	_Atomic int disarmed;
	double deadline;
	const char *what;
};

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;

	while (!atomic_load(&w->disarmed)) {
		if (tw_now_s() > w->deadline) {
			fprintf(stderr, "watchdog: %s after %.0f s\n", w->what, WATCHDOG_S);
			abort();
		}
		usleep(10000);
	}
	return NULL;
}

static void watchdog_arm(struct watchdog *w, const char *what)
{
	atomic_store(&w->disarmed, 0);
	w->deadline = tw_now_s() + WATCHDOG_S;
	w->what = what;
	assert_int_equal(pthread_create(&w->thread, NULL, watchdog_main, w), 0);
}

static void watchdog_disarm(struct watchdog *w)
{
	atomic_store(&w->disarmed, 1);
	pthread_join(w->thread, NULL);
}

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

/*
 * The cycle formed by mailbox handlers on two group threads. A is a member
 * of group GA, B of GB, both started. A's handler runs on GA's thread
 * holding A, B's on GB's thread holding B; they meet (each holds its own
 * lock), then A's calls B and B's calls A in mode @wait. At least one call
 * returns -EDEADLK (both may, when they walk at the same time); the other
 * gets the lock once the refused handler returned, runs and returns 0.
 * Counters: a refused call counts in its target's deadlocks, a completed one
 * in its target's sync_completions. Without detection both threads wait
 * for good: the watchdog aborts.
 */
enum { G_CROSS, G_LEAF, G_COUNT };

struct gcross {
	enum act_wait wait;
	_Atomic int inside;  /* handlers holding their own lock */
	_Atomic int done;    /* G_CROSS handlers returned */
	_Atomic int met_timeout;
};

struct gst {
	struct gcross *c;
	struct act_actor *other;
	int rc;              /* of the inner call to other */
	int biased_inside;   /* our lock word was biased while G_CROSS ran */
	_Atomic int overlaps;
	_Atomic int running;
};

static void g_enter(struct gst *s)
{
	if (atomic_fetch_add(&s->running, 1) != 0)
		atomic_fetch_add(&s->overlaps, 1);
}

static void h_gcross(struct act_actor *self, void *state, struct act_msg *m)
{
	struct gst *s = state;
	double t0 = tw_now_s();

	(void)m;
	g_enter(s);
	s->biased_inside = (atomic_load(&self->lock) & ACT__LOCK_BIAS) != 0;
	/* meet: both threads hold their own lock (bounded: the watchdog's
	 * message says more than a hang here would) */
	atomic_fetch_add(&s->c->inside, 1);
	while (atomic_load(&s->c->inside) < 2) {
		if (tw_now_s() - t0 > WATCHDOG_S / 2) {
			atomic_store(&s->c->met_timeout, 1);
			break;
		}
		usleep(50);
	}
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, G_LEAF, sizeof(int));
	s->rc = act_fast_send_opt(s->other, &req.hdr, NULL, 0, s->c->wait, 0);
	atomic_fetch_sub(&s->running, 1);
	atomic_fetch_add(&s->c->done, 1);
}

static void h_gleaf(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)m;
	g_enter(state);
	atomic_fetch_sub(&((struct gst *)state)->running, 1);
}

static const act_handler_fn ghandlers[G_COUNT] = {h_gcross, h_gleaf};

enum lock_kind { LOCK_DEFAULT, LOCK_BIAS, LOCK_RELEASE_STORE };

static struct act_actor *cross_member(const char *name, struct act_group *g, struct gst *s,
				      enum lock_kind kind)
{
	struct act_actor_opts o = {
		.name = name,
		.handlers = ghandlers,
		.handler_count = G_COUNT,
		.state = s,
		.group = g,
		.lock_bias = kind == LOCK_BIAS,
		.lock_release_store = kind == LOCK_RELEASE_STORE,
	};
	struct act_actor *a = act_actor_create(&o);

	assert_non_null(a);
	assert_int_equal(act_actor_start(a), 0);
	return a;
}

static void group_cross(enum act_wait wait, enum lock_kind kind)
{
	struct act_group_opts oa = {.name = "GA", .cpu = -1}, ob = {.name = "GB", .cpu = -1};
	struct act_group *ga = act_group_create(&oa), *gb = act_group_create(&ob);
	struct gcross c = {.wait = wait};
	struct gst sa = {.c = &c, .rc = 1}, sb = {.c = &c, .rc = 1};
	struct act_actor_stats st_a, st_b;
	struct act_actor *a, *b;
	struct watchdog w;

	assert_non_null(ga);
	assert_non_null(gb);
	a = cross_member("A", ga, &sa, kind);
	b = cross_member("B", gb, &sb, kind);
	sa.other = b;
	sb.other = a;
	if (kind == LOCK_BIAS && !atomic_load(&a->lock_bias)) {
		fprintf(stderr, "# skipped: membarrier(PRIVATE_EXPEDITED) unavailable, "
			"lock_bias is ignored here\n");
		goto out;
	}
	if (kind == LOCK_RELEASE_STORE && !a->release_store) {
		fprintf(stderr, "# skipped: membarrier(PRIVATE_EXPEDITED) unavailable, "
			"lock_release_store is ignored here\n");
		goto out;
	}
	assert_int_equal(act_group_start(ga), 0);
	assert_int_equal(act_group_start(gb), 0);

	watchdog_arm(&w, "group threads: the cross-thread lock cycle A <-> B was not "
		     "detected (no -EDEADLK), both group threads still wait");
	if (act_send_copy(a, G_CROSS, &(int){0}, sizeof(int)) == 0 &&
	    act_send_copy(b, G_CROSS, &(int){0}, sizeof(int)) == 0) {
		while (atomic_load(&c.done) < 2)
			usleep(100);
	}
	watchdog_disarm(&w);
	assert_int_equal(atomic_load(&c.done), 2);
	assert_int_equal(act_group_stop(ga), 0);
	assert_int_equal(act_group_stop(gb), 0);

	assert_false(atomic_load(&c.met_timeout));
	assert_true(sa.rc == -EDEADLK || sb.rc == -EDEADLK);
	assert_true(sa.rc == 0 || sa.rc == -EDEADLK);
	assert_true(sb.rc == 0 || sb.rc == -EDEADLK);
	assert_int_equal(atomic_load(&sa.overlaps) + atomic_load(&sb.overlaps), 0);
	act_actor_stats(a, &st_a);
	act_actor_stats(b, &st_b);
	/* A's call went to B, B's to A */
	assert_int_equal(st_b.deadlocks, sa.rc == -EDEADLK);
	assert_int_equal(st_a.deadlocks, sb.rc == -EDEADLK);
	assert_int_equal(st_b.sync_completions, sa.rc == 0);
	assert_int_equal(st_a.sync_completions, sb.rc == 0);
	assert_int_equal(st_a.async_runs, 1);
	assert_int_equal(st_b.async_runs, 1);
	if (kind == LOCK_BIAS) {
		/* each group thread held its own actor through the bias; a
		 * completed call revoked its target's bias, a refused one did not */
		assert_true(sa.biased_inside);
		assert_true(sb.biased_inside);
		assert_int_equal(st_b.bias_revocations, sa.rc == 0);
		assert_int_equal(st_a.bias_revocations, sb.rc == 0);
	} else {
		assert_false(sa.biased_inside);
		assert_false(sb.biased_inside);
	}
out:
	act_actor_stop(a);
	act_actor_stop(b);
	act_group_stop(ga);
	act_group_stop(gb);
	act_actor_destroy(a);
	act_actor_destroy(b);
	act_group_destroy(ga);
	act_group_destroy(gb);
}

static void groups_cross_sleep(void **unused)
{
	(void)unused;
	group_cross(ACT_WAIT_SLEEP, LOCK_DEFAULT);
}

static void groups_cross_spin(void **unused)
{
	(void)unused;
	group_cross(ACT_WAIT_SPIN, LOCK_DEFAULT);
}

static void groups_cross_adaptive(void **unused)
{
	(void)unused;
	group_cross(ACT_WAIT_ADAPTIVE, LOCK_DEFAULT);
}

static void groups_cross_bias_sleep(void **unused)
{
	(void)unused;
	group_cross(ACT_WAIT_SLEEP, LOCK_BIAS);
}

static void groups_cross_bias_spin(void **unused)
{
	(void)unused;
	group_cross(ACT_WAIT_SPIN, LOCK_BIAS);
}

static void groups_cross_release_store_sleep(void **unused)
{
	(void)unused;
	group_cross(ACT_WAIT_SLEEP, LOCK_RELEASE_STORE);
}

static void groups_cross_release_store_adaptive(void **unused)
{
	(void)unused;
	group_cross(ACT_WAIT_ADAPTIVE, LOCK_RELEASE_STORE);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cross_sleep),
		cmocka_unit_test(cross_spin),
		cmocka_unit_test(cross_adaptive),
		cmocka_unit_test(cross_three),
		cmocka_unit_test(groups_cross_sleep),
		cmocka_unit_test(groups_cross_spin),
		cmocka_unit_test(groups_cross_adaptive),
		cmocka_unit_test(groups_cross_bias_sleep),
		cmocka_unit_test(groups_cross_bias_spin),
		cmocka_unit_test(groups_cross_release_store_sleep),
		cmocka_unit_test(groups_cross_release_store_adaptive),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
