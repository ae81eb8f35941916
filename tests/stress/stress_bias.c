/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Exclusive access on a biased lock while the bias is revoked (DESIGN 2.1,
 * act_actor_opts.lock_bias). Round after round, on a fresh actor:
 *
 *   owner    (this thread) takes the bias with a first call, then calls in
 *            a tight loop until the foreign thread's first call returned,
 *            then a few more;
 *   foreign  (a thread on the other cpu where there are two) waits a random
 *            number of pauses, then calls: act_fast_send, _spin, _adaptive
 *            or act_fast_send_x retried on -EBUSY, by round; that first
 *            call revokes the bias while the owner enters and leaves the
 *            handler every few nanoseconds.
 *
 * The handler writes the caller's tag, spins a little (long enough for two
 * handlers let in together to overlap in time), and counts an overlap
 * if the tag changed under it; it also bumps a plain counter, which a second
 * thread inside would lose updates of (and ThreadSanitizer would flag).
 * Every round must end with no overlap, every call counted, one revocation,
 * and the word free and unbiased.
 *
 * Proof that it can fail: TW_BIAS_BREAK=1 sets act__test_bias_skip_membarrier
 * (the revoker skips R2 of the protocol in lib/actor/actor.c); the result of
 * such runs is in tests/perf/RESULTS.md.
 *
 * Time: TW_STRESS_SECONDS (default 10).
 */
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "act_fixture.h"
#include "actor_pvt.h"
#include "tw_cpu.h"

enum { T_HIT, T_COUNT };

#define OWNER_TAG 1u
#define FOREIGN_TAG 2u
#define FOREIGN_CALLS 8u
#define OWNER_TAIL 32u

struct bst {
	_Atomic uint32_t who;
	_Atomic uint64_t overlaps;
	uint64_t count; /* plain: written under the actor's lock only */
};

static void h_hit(struct act_actor *self, void *state, struct act_msg *m)
{
	struct bst *s = state;
	uint32_t me = *ACT_PAYLOAD(m, uint32_t);
	unsigned i;

	(void)self;
	atomic_store_explicit(&s->who, me, memory_order_relaxed);
	for (i = 0; i < 64; i++)
		__asm__ volatile("" ::: "memory");
	if (atomic_load_explicit(&s->who, memory_order_relaxed) != me)
		atomic_fetch_add(&s->overlaps, 1);
	s->count++;
}

static const act_handler_fn handlers[T_COUNT] = {h_hit};

struct shared {
	struct act_actor *a;
	_Atomic unsigned gen;      /* bumped by the owner: a round starts */
	_Atomic unsigned done;     /* the foreign thread finished round gen */
	_Atomic bool first_done;   /* the foreign thread's first call returned */
	_Atomic bool stop;
	unsigned delay;            /* pauses before the foreign thread's first call */
	enum act_wait wait;        /* the foreign thread's wait mode this round */
	uint64_t busy;             /* foreign: -EBUSY returns, all rounds */
	uint64_t foreign_calls;
};

/* The cpus this process may use, read once before any thread pins itself
 * (a thread created after a pin would inherit the one cpu). */
static cpu_set_t allowed;

static bool pin(unsigned nth)
{
	return tw_pin_nth(&allowed, nth);
}

static int hit(struct act_actor *a, uint32_t tag, enum act_wait wait)
{
	ACT_STACK_MSG(req, uint32_t);
	act_msg_init(&req.hdr, T_HIT, sizeof(uint32_t));
	req.body = tag;
	return act_fast_send_opt(a, &req.hdr, NULL, 0, wait, 0);
}

/* One step of a wait: a pause on a cpu of one's own, else a yield. */
static void relax(bool pinned)
{
	if (pinned)
		act__cpu_relax();
	else
		sched_yield();
}

static void *foreign_main(void *arg)
{
	struct shared *sh = arg;
	bool pinned = pin(1);
	unsigned seen = 0;
	unsigned i;
	int rc;

	for (;;) {
		while (atomic_load(&sh->gen) == seen) {
			if (atomic_load(&sh->stop))
				return NULL;
			relax(pinned);
		}
		seen = atomic_load(&sh->gen);
		for (i = 0; i < sh->delay; i++)
			act__cpu_relax();
		for (i = 0; i < FOREIGN_CALLS; i++) {
			while ((rc = hit(sh->a, FOREIGN_TAG, sh->wait)) == -EBUSY)
				sh->busy++;
			assert_int_equal(rc, 0);
			sh->foreign_calls++;
			if (i == 0)
				atomic_store(&sh->first_done, true);
		}
		atomic_store(&sh->done, seen);
	}
}

static void revoke_under_traffic(void **unused)
{
	static const enum act_wait modes[] = {ACT_WAIT_SLEEP, ACT_WAIT_SPIN, ACT_WAIT_ADAPTIVE,
					      ACT_WAIT_NONE};
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct shared sh = {0};
	double until = tw_now_s() + tw_stress_seconds() * 0.9;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	uint64_t rounds = 0, owner_calls = 0, overlaps = 0, bad_rounds = 0;
	pthread_t th;
	bool pinned;

	(void)unused;
	if (!act__membarrier_ok) {
		printf("# membarrier(PRIVATE_EXPEDITED) unavailable: lock_bias is ignored; "
		       "nothing to test here\n");
		skip();
	}
	if (getenv("TW_BIAS_BREAK") != NULL && atoi(getenv("TW_BIAS_BREAK")) != 0) {
		printf("# TW_BIAS_BREAK: revokers skip their membarrier (R2); this run "
		       "should fail\n");
		atomic_store(&act__test_bias_skip_membarrier, true);
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		CPU_ZERO(&allowed);
	pinned = pin(0);
	assert_int_equal(pthread_create(&th, NULL, foreign_main, &sh), 0);
	while (tw_now_s() < until) {
		struct bst s = {0};
		struct act_actor_opts o = {.name = "biased", .handlers = handlers,
					   .handler_count = T_COUNT, .state = &s, .group = g,
					   .lock_bias = true};
		struct act_actor_stats st;
		uint64_t mine = 0;
		unsigned i, spins = 0;

		sh.a = act_actor_create(&o);
		assert_non_null(sh.a);
		assert_int_equal(act_actor_start(sh.a), 0);
		assert_int_equal(hit(sh.a, OWNER_TAG, ACT_WAIT_SLEEP), 0); /* takes the bias */
		mine++;
		assert_true(atomic_load(&sh.a->lock) == (ACT__LOCK_BIAS | act__tls_thread.id));
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		sh.delay = (unsigned)(rng >> 54); /* 0 .. 1023 pauses */
		sh.wait = modes[(rng >> 8) % 4];
		atomic_store(&sh.first_done, false);
		atomic_fetch_add(&sh.gen, 1);
		/* The owner keeps entering and leaving until the revocation is
		 * through, then some more on the ordinary lock. */
		while (!atomic_load(&sh.first_done)) {
			assert_int_equal(hit(sh.a, OWNER_TAG, ACT_WAIT_SLEEP), 0);
			mine++;
			if (!pinned && ++spins % 64 == 0)
				sched_yield();
			/* a trying caller needs the lock free now and then */
			for (i = 0; sh.wait == ACT_WAIT_NONE && i < 256; i++)
				act__cpu_relax();
		}
		for (i = 0; i < OWNER_TAIL; i++) {
			assert_int_equal(hit(sh.a, OWNER_TAG, ACT_WAIT_SLEEP), 0);
			mine++;
		}
		while (atomic_load(&sh.done) != atomic_load(&sh.gen))
			relax(pinned);
		act_actor_stats(sh.a, &st);
		overlaps += atomic_load(&s.overlaps);
		if (atomic_load(&s.overlaps) != 0 || s.count != mine + FOREIGN_CALLS ||
		    st.bias_revocations != 1 || atomic_load(&sh.a->lock) != 0 ||
		    atomic_load(&sh.a->lock_bias))
			bad_rounds++;
		owner_calls += mine;
		rounds++;
		act_actor_stop(sh.a);
		act_actor_destroy(sh.a);
	}
	atomic_store(&sh.stop, true);
	assert_int_equal(pthread_join(th, NULL), 0);
	printf("# %llu rounds (%s), owner %llu calls, foreign %llu calls and %llu -EBUSY; "
	       "%llu overlaps, %llu bad rounds\n",
	       (unsigned long long)rounds, pinned ? "two cpus" : "one cpu",
	       (unsigned long long)owner_calls, (unsigned long long)sh.foreign_calls,
	       (unsigned long long)sh.busy, (unsigned long long)overlaps,
	       (unsigned long long)bad_rounds);
	atomic_store(&act__test_bias_skip_membarrier, false);
	assert_int_equal(overlaps, 0);
	assert_int_equal(bad_rounds, 0);
	assert_true(rounds >= 100);
	act_group_destroy(g);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(revoke_under_traffic),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
