/* SPDX-License-Identifier: BSD-3-Clause
 * Biased lock (act_actor_opts.lock_bias): the first thread to take the lock
 * owns its bias and enters without an atomic read-modify-write; the first
 * delivery from another thread revokes the bias for good, after the
 * owner's handler in progress returns (exclusive access, DESIGN 2.1); a
 * trying caller gets -EBUSY while the owner is inside, without revoking;
 * a cycle through a biased owner is reported as -EDEADLK; mailbox delivery
 * takes and revokes the bias like fast_send.
 *
 * The lock word is read through actor_pvt.h to check which way the lock is
 * held; where membarrier is unavailable the runtime ignores lock_bias and
 * these tests skip, saying so.
 */
#include <sched.h>
#include <time.h>

#include "act_fixture.h"
#include "actor_pvt.h"

enum { T_QUICK, T_SLOW, T_CALL, T_COUNT };

struct bst {
	_Atomic int inside;        /* a handler of this actor is running */
	_Atomic uint64_t overlaps; /* a handler started while another ran */
	_Atomic uint64_t seq;      /* completion order */
	_Atomic uint64_t slow_done, quick_done;
	_Atomic bool slow_started;
	/* T_SLOW: keep running until this returns true (or 5 s) */
	bool (*hold_until)(struct bst *s);
	struct act_actor *self;
	struct act_actor *other; /* T_CALL: fast_send T_QUICK here */
	pthread_barrier_t *barrier; /* T_CALL: meet before the inner call */
	enum act_wait wait;
	int inner_rc;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void enter_check(struct bst *s)
{
	if (atomic_fetch_add(&s->inside, 1) != 0)
		atomic_fetch_add(&s->overlaps, 1);
}

static void h_quick(struct act_actor *self, void *state, struct act_msg *m)
{
	struct bst *s = state;

	(void)self;
	(void)m;
	enter_check(s);
	atomic_store(&s->quick_done, atomic_fetch_add(&s->seq, 1) + 1);
	atomic_fetch_sub(&s->inside, 1);
}

static void h_slow(struct act_actor *self, void *state, struct act_msg *m)
{
	struct bst *s = state;
	double end = now_s() + 5.0;

	(void)self;
	(void)m;
	enter_check(s);
	atomic_store(&s->slow_started, true);
	while (!s->hold_until(s) && now_s() < end)
		sched_yield();
	atomic_store(&s->slow_done, atomic_fetch_add(&s->seq, 1) + 1);
	atomic_fetch_sub(&s->inside, 1);
}

static void h_call(struct act_actor *self, void *state, struct act_msg *m)
{
	struct bst *s = state;

	(void)self;
	(void)m;
	pthread_barrier_wait(s->barrier); /* both threads are inside their first actor */
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_QUICK, sizeof(int));
	s->inner_rc = act_fast_send_opt(s->other, &req.hdr, NULL, 0, s->wait, 0);
}

static const act_handler_fn handlers[T_COUNT] = {h_quick, h_slow, h_call};

static struct act_actor *bias_actor(struct act_group *g, struct bst *s)
{
	struct act_actor_opts o = {
		.name = "biased",
		.handlers = handlers,
		.handler_count = T_COUNT,
		.state = s,
		.group = g,
		.lock_bias = true,
	};
	struct act_actor *a = act_actor_create(&o);

	assert_non_null(a);
	assert_int_equal(act_actor_start(a), 0);
	s->self = a;
	return a;
}

static uint32_t word(struct act_actor *a)
{
	return atomic_load(&a->lock);
}

static uint32_t my_id(void)
{
	return act__tls_thread.id;
}

static int call(struct act_actor *a, uint32_t type, enum act_wait wait)
{
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, type, sizeof(int));
	return act_fast_send_opt(a, &req.hdr, NULL, 0, wait, 0);
}

static uint64_t revocations(struct act_actor *a)
{
	struct act_actor_stats st;

	act_actor_stats(a, &st);
	return st.bias_revocations;
}

static int setup(void **state)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 64);

	*state = g;
	return 0;
}

static int teardown(void **state)
{
	act_group_destroy(*state);
	return 0;
}

/* The runtime ignores lock_bias without membarrier: nothing to test. */
static bool bias_available(struct act_actor *a)
{
	if (atomic_load(&a->lock_bias))
		return true;
	fprintf(stderr, "# skipped: membarrier(PRIVATE_EXPEDITED) unavailable, "
		"lock_bias is ignored here\n");
	return false;
}

static void owner_uses_the_bias(void **state)
{
	struct bst s = {0};
	struct act_actor *a = bias_actor(*state, &s);
	struct act_actor_stats st;
	int i;

	if (!bias_available(a))
		goto out;
	assert_int_equal(word(a), 0);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(call(a, T_QUICK, ACT_WAIT_SLEEP), 0);
		/* biased to this thread, and left by bias_in alone */
		assert_int_equal(word(a), ACT__LOCK_BIAS | my_id());
		assert_int_equal(atomic_load(&a->bias_in), 0);
	}
	act_actor_stats(a, &st);
	assert_int_equal(st.sync_completions, 1000);
	assert_int_equal(st.bias_revocations, 0);
	assert_int_equal(atomic_load(&s.overlaps), 0);
out:
	act_actor_stop(a);
	act_actor_destroy(a);
}

static void *foreign_quick(void *arg)
{
	struct act_actor *a = arg;

	assert_int_equal(call(a, T_QUICK, ACT_WAIT_SLEEP), 0);
	/* we hold no bias: the word is an ordinary one, free again */
	assert_int_equal(word(a), 0);
	return NULL;
}

static void foreign_call_revokes_for_good(void **state)
{
	struct bst s = {0};
	struct act_actor *a = bias_actor(*state, &s);
	int i;

	if (!bias_available(a))
		goto out;
	assert_int_equal(call(a, T_QUICK, ACT_WAIT_SLEEP), 0);
	assert_int_equal(word(a), ACT__LOCK_BIAS | my_id());
	fx_on_thread(foreign_quick, a);
	assert_int_equal(revocations(a), 1);
	assert_false(atomic_load(&a->lock_bias));
	/* never biased again, whoever calls */
	for (i = 0; i < 3; i++) {
		assert_int_equal(call(a, T_QUICK, ACT_WAIT_SLEEP), 0);
		assert_int_equal(word(a), 0);
		fx_on_thread(foreign_quick, a);
	}
	assert_int_equal(revocations(a), 1);
	assert_int_equal(atomic_load(&s.overlaps), 0);
out:
	act_actor_stop(a);
	act_actor_destroy(a);
}

/* T_SLOW holds on until a revoker is waiting in R3. */
static bool revoking(struct bst *s)
{
	return (word(s->self) & ACT__LOCK_REVOKING) != 0;
}

struct revoker {
	struct bst *s;
	enum act_wait wait;
	int rc;
};

static void *revoke_while_inside(void *arg)
{
	struct revoker *r = arg;

	while (!atomic_load(&r->s->slow_started))
		sched_yield();
	r->rc = call(r->s->self, T_QUICK, r->wait);
	return NULL;
}

/* The revoker waits for the owner's handler in progress, every wait mode. */
static void revoker_waits(void **state, enum act_wait wait)
{
	struct bst s = {.hold_until = revoking};
	struct act_actor *a = bias_actor(*state, &s);
	struct revoker r = {.s = &s, .wait = wait, .rc = 1};
	pthread_t th;

	if (!bias_available(a))
		goto out;
	assert_int_equal(pthread_create(&th, NULL, revoke_while_inside, &r), 0);
	/* biases to this thread and holds it until the revoker is in R3 */
	assert_int_equal(call(a, T_SLOW, ACT_WAIT_SLEEP), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r.rc, 0);
	assert_int_equal(atomic_load(&s.overlaps), 0);
	/* the slow handler saw REVOKING (else it gave up after 5 s and the
	 * ordering below would prove nothing) and finished first */
	assert_true(atomic_load(&s.slow_done) != 0);
	assert_true(atomic_load(&s.quick_done) > atomic_load(&s.slow_done));
	assert_int_equal(revocations(a), 1);
out:
	act_actor_stop(a);
	act_actor_destroy(a);
}

static void revoker_waits_sleep(void **state)
{
	revoker_waits(state, ACT_WAIT_SLEEP);
}

static void revoker_waits_spin(void **state)
{
	revoker_waits(state, ACT_WAIT_SPIN);
}

static void revoker_waits_adaptive(void **state)
{
	revoker_waits(state, ACT_WAIT_ADAPTIVE);
}

/* T_SLOW holds on until the trying caller has its answer. */
static _Atomic int try_rc = 1;

static bool tried(struct bst *s)
{
	(void)s;
	return atomic_load(&try_rc) != 1;
}

static void *try_once(void *arg)
{
	struct bst *s = arg;

	while (!atomic_load(&s->slow_started))
		sched_yield();
	atomic_store(&try_rc, call(s->self, T_QUICK, ACT_WAIT_NONE));
	return NULL;
}

static void *try_free(void *arg)
{
	struct bst *s = arg;

	atomic_store(&try_rc, call(s->self, T_QUICK, ACT_WAIT_NONE));
	return NULL;
}

static void try_does_not_wait_for_the_owner(void **state)
{
	struct bst s = {.hold_until = tried};
	struct act_actor *a = bias_actor(*state, &s);
	struct act_actor_stats st;
	pthread_t th;

	if (!bias_available(a))
		goto out;
	atomic_store(&try_rc, 1);
	assert_int_equal(pthread_create(&th, NULL, try_once, &s), 0);
	assert_int_equal(call(a, T_SLOW, ACT_WAIT_SLEEP), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(atomic_load(&try_rc), -EBUSY);
	/* the bias is intact: the owner was inside, nothing was revoked */
	assert_int_equal(word(a), ACT__LOCK_BIAS | my_id());
	act_actor_stats(a, &st);
	assert_int_equal(st.bias_revocations, 0);
	assert_int_equal(st.busy_returns, 1);
	/* the owner out, a try takes the lock: revoked */
	atomic_store(&try_rc, 1);
	fx_on_thread(try_free, &s);
	assert_int_equal(atomic_load(&try_rc), 0);
	assert_int_equal(revocations(a), 1);
	assert_int_equal(word(a), 0);
	assert_int_equal(atomic_load(&s.overlaps), 0);
out:
	act_actor_stop(a);
	act_actor_destroy(a);
}

/*
 * A cycle through a bias owner: this thread, biased to A and inside A's
 * handler, calls B; the other thread, inside B's handler, calls A (a
 * revocation that has to wait for us). One of the two gets -EDEADLK.
 */
struct cross_arg {
	struct act_actor *b;
};

static void *enter_b(void *arg)
{
	struct cross_arg *c = arg;

	assert_int_equal(call(c->b, T_CALL, ACT_WAIT_SLEEP), 0);
	return NULL;
}

static void deadlock_through_bias(void **state, enum act_wait wait)
{
	struct act_group *g = *state;
	pthread_barrier_t barrier;
	struct bst sa = {.barrier = &barrier, .wait = wait, .inner_rc = 1};
	struct bst sb = {.barrier = &barrier, .wait = wait, .inner_rc = 1};
	struct act_actor *a = bias_actor(g, &sa);
	struct act_actor *b = fx_actor("B", g, handlers, T_COUNT, &sb, false);
	struct cross_arg c = {.b = b};
	pthread_t th;

	if (!bias_available(a))
		goto out;
	sa.other = b;
	sb.other = a;
	pthread_barrier_init(&barrier, NULL, 2);
	assert_int_equal(call(a, T_QUICK, ACT_WAIT_SLEEP), 0); /* biased to us */
	assert_int_equal(pthread_create(&th, NULL, enter_b, &c), 0);
	assert_int_equal(call(a, T_CALL, ACT_WAIT_SLEEP), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	pthread_barrier_destroy(&barrier);
	assert_true(sa.inner_rc == -EDEADLK || sb.inner_rc == -EDEADLK);
	assert_true(sa.inner_rc == 0 || sa.inner_rc == -EDEADLK);
	assert_true(sb.inner_rc == 0 || sb.inner_rc == -EDEADLK);
	if (sb.inner_rc == -EDEADLK) {
		/* the revoker backed out and put the bias back */
		assert_int_equal(word(a), ACT__LOCK_BIAS | my_id());
		assert_int_equal(revocations(a), 0);
	} else {
		assert_int_equal(revocations(a), 1);
	}
	assert_int_equal(atomic_load(&sa.overlaps) + atomic_load(&sb.overlaps), 0);
out:
	act_actor_stop(a);
	act_actor_destroy(a);
	act_actor_stop(b);
	act_actor_destroy(b);
}

static void deadlock_through_bias_sleep(void **state)
{
	deadlock_through_bias(state, ACT_WAIT_SLEEP);
}

static void deadlock_through_bias_spin(void **state)
{
	deadlock_through_bias(state, ACT_WAIT_SPIN);
}

/* Mailbox delivery takes the bias for the thread that steps the group. */
static void *foreign_adaptive_call(void *arg)
{
	struct act_actor *a = arg;

	assert_int_equal(call(a, T_QUICK, ACT_WAIT_ADAPTIVE), 0);
	return NULL;
}

static void mailbox_delivery_and_bias(void **state)
{
	struct act_group *g = *state;
	struct bst s = {0};
	struct act_actor *a = bias_actor(g, &s);
	struct act_actor_stats st;

	if (!bias_available(a))
		goto out;
	fx_send_int(a, T_QUICK, 1);
	assert_int_equal(act_group_step(g, 16), 1);
	assert_int_equal(word(a), ACT__LOCK_BIAS | my_id());
	assert_int_equal(call(a, T_QUICK, ACT_WAIT_SLEEP), 0);
	fx_on_thread(foreign_adaptive_call, a);
	fx_send_int(a, T_QUICK, 2);
	assert_int_equal(act_group_step(g, 16), 1);
	assert_int_equal(word(a), 0);
	act_actor_stats(a, &st);
	assert_int_equal(st.async_runs, 2);
	assert_int_equal(st.sync_completions, 2);
	assert_int_equal(st.bias_revocations, 1);
out:
	act_actor_stop(a);
	act_actor_destroy(a);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(owner_uses_the_bias, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_call_revokes_for_good, setup, teardown),
		cmocka_unit_test_setup_teardown(revoker_waits_sleep, setup, teardown),
		cmocka_unit_test_setup_teardown(revoker_waits_spin, setup, teardown),
		cmocka_unit_test_setup_teardown(revoker_waits_adaptive, setup, teardown),
		cmocka_unit_test_setup_teardown(try_does_not_wait_for_the_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(deadlock_through_bias_sleep, setup, teardown),
		cmocka_unit_test_setup_teardown(deadlock_through_bias_spin, setup, teardown),
		cmocka_unit_test_setup_teardown(mailbox_delivery_and_bias, setup, teardown),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
