/* SPDX-License-Identifier: BSD-3-Clause
 * Cross-thread deadlock detection under repetition: two threads cross
 * A->B and B->A behind a barrier, 10,000 rounds. No round may hang; every
 * round either completes on both sides or reports -EDEADLK on at least one.
 * On some rounds one side skips the barrier, so the calls also interleave
 * without a cycle and must then complete.
 */
#include "act_fixture.h"

#define ROUNDS 10000

enum { T_CROSS, T_LEAF, T_COUNT };

struct shared {
	pthread_barrier_t start, inside;
	struct act_actor *a, *b;
	enum act_wait wait;
	_Atomic int use_inside; /* this round: meet inside the first handler */
};

struct st {
	struct shared *sh;
	struct act_actor *other;
	int rc;
};

static void h_cross(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	(void)m;
	if (atomic_load(&s->sh->use_inside))
		pthread_barrier_wait(&s->sh->inside);
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LEAF, sizeof(int));
	s->rc = act_fast_send_opt(s->other, &req.hdr, NULL, 0, s->sh->wait, 0);
}

static void h_leaf(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)state;
	(void)m;
}

static const act_handler_fn handlers[T_COUNT] = {h_cross, h_leaf};

struct side {
	struct shared *sh;
	struct act_actor *first;
	unsigned rounds;
};

static void *side_main(void *arg)
{
	struct side *sd = arg;
	unsigned r;

	ACT_STACK_MSG(req, int);
	for (r = 0; r < sd->rounds; r++) {
		pthread_barrier_wait(&sd->sh->start);
		act_msg_init(&req.hdr, T_CROSS, sizeof(int));
		assert_int_equal(act_fast_send(sd->first, &req.hdr, NULL, 0), 0);
		pthread_barrier_wait(&sd->sh->start); /* round done on both sides */
	}
	return NULL;
}


static void run(enum act_wait wait, unsigned rounds)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct shared sh = {.wait = wait};
	struct st sa = {.sh = &sh}, sb = {.sh = &sh};
	struct side s1 = {.sh = &sh, .rounds = rounds}, s2 = {.sh = &sh, .rounds = rounds};
	unsigned r, completed = 0, detected = 0;
	pthread_t t1, t2;
	uint64_t rng = 88172645463325252ull;

	pthread_barrier_init(&sh.start, NULL, 3);
	pthread_barrier_init(&sh.inside, NULL, 2);
	sh.a = fx_actor("A", g, handlers, T_COUNT, &sa, false);
	sh.b = fx_actor("B", g, handlers, T_COUNT, &sb, false);
	sa.other = sh.b;
	sb.other = sh.a;
	s1.first = sh.a;
	s2.first = sh.b;
	assert_int_equal(pthread_create(&t1, NULL, side_main, &s1), 0);
	assert_int_equal(pthread_create(&t2, NULL, side_main, &s2), 0);
	for (r = 0; r < rounds; r++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		atomic_store(&sh.use_inside, (rng & 3) != 0); /* 3 rounds in 4 cross */
		sa.rc = sb.rc = 1;
		pthread_barrier_wait(&sh.start);
		pthread_barrier_wait(&sh.start);
		assert_true(sa.rc == 0 || sa.rc == -EDEADLK);
		assert_true(sb.rc == 0 || sb.rc == -EDEADLK);
		if (sa.rc == 0 && sb.rc == 0)
			completed++;
		else
			detected++;
		/* behind the barrier both hold their first lock: a cycle */
		if (atomic_load(&sh.use_inside))
			assert_true(sa.rc == -EDEADLK || sb.rc == -EDEADLK);
	}
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("# wait mode %d: %u rounds, %u completed, %u with -EDEADLK\n", wait, rounds,
	       completed, detected);
	assert_true(detected > 0);
	act_actor_stop(sh.a);
	act_actor_stop(sh.b);
	act_actor_destroy(sh.a);
	act_actor_destroy(sh.b);
	act_group_destroy(g);
	pthread_barrier_destroy(&sh.start);
	pthread_barrier_destroy(&sh.inside);
}

static void crossing_10000_rounds_sleep(void **unused)
{
	(void)unused;
	run(ACT_WAIT_SLEEP, ROUNDS);
}

static void crossing_rounds_spin_and_adaptive(void **unused)
{
	(void)unused;
	run(ACT_WAIT_SPIN, ROUNDS / 4);
	run(ACT_WAIT_ADAPTIVE, ROUNDS / 4);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(crossing_10000_rounds_sleep),
		cmocka_unit_test(crossing_rounds_spin_and_adaptive),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
