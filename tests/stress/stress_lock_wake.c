/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * No lost wake-up on an actor's lock (DESIGN 2: fast_send "sleeps until
 * free"). Caller threads hit one lockable actor in rounds, meeting at a
 * barrier after every round, in two shapes:
 *
 *  traffic  6 callers (3x the cpus of the CI machine), 64 calls a round,
 *           mixing act_fast_send, _adaptive, _spin and _x; every 8th
 *           handler run yields the cpu while holding the lock, so that the
 *           sleeping members of the family really sleep.
 *  handoff  2 callers on cpus of their own, one act_fast_send each a
 *           round: one takes the lock and holds it for a random time (about
 *           log-uniform, up to ~100 us) while the other goes to sleep on
 *           it, so the release races the sleeper's registration round
 *           after round, with nothing after it to repair a miss.
 *
 * The lock's futex waits are made untimed (act__test_lock_wait_untimed, an
 * internal knob): in production a lost wake-up costs the 50 ms timeout of
 * the wait and goes unseen, and any later release repairs it. Here a
 * sleeper missed by the last release of a round never returns, its round
 * never ends, the others wait at the barrier with the lock free, and no call
 * completes anywhere. A watchdog in the main thread ends the process with a
 * failure naming a lost wake-up when no call has completed for WATCHDOG_S
 * seconds. The test also fails if too few calls slept to mean anything.
 *
 * Both release protocols run: the store release with membarrier sleepers
 * (the default where membarrier works; skipped, and said so, where it does
 * not) and the exchange release (act__test_lock_release_exchange).
 *
 * Time: TW_STRESS_SECONDS (default 10), 90 % split over the four runs.
 */
#include <sched.h>
#include <unistd.h>

#include "act_fixture.h"
#include "actor_pvt.h"
#include "tw_cpu.h"

#define MAX_CALLERS 6
#define WATCHDOG_S 5.0
#define MIN_SLEEPS 100
#define HOLDER 0x80000000u /* payload flag: handoff's holding call */

struct shape {
	const char *name;
	unsigned callers;
	unsigned round_calls;
	unsigned yield_every; /* handler yields every Nth run; 0: never */
	unsigned spin_mask;   /* handler spins (payload & mask) iterations */
	bool handoff;         /* caller 0 holds, caller 1 sleeps on it */
};

static const struct shape traffic = {"traffic", 6, 64, 8, 63, false};
static const struct shape handoff = {"handoff", 2, 1, 0, 0x3ffff, true};

enum { T_HIT, T_COUNT };

struct hot {
	_Atomic int inside;
	_Atomic uint64_t overlaps;
	uint64_t handled; /* plain: written under the actor's lock only */
	unsigned yield_every; /* 0: never yield in the handler */
	unsigned spin_mask;
	_Atomic bool held;   /* handoff: the holder's handler is running */
	_Atomic bool coming; /* handoff: the other caller is calling now */
};

/* Handoff callers run on cpus of their own where there are two. */
static _Atomic bool pinned;

/* One step of a wait: a pause on a cpu of one's own, else a yield. */
static unsigned relax(unsigned n)
{
	if (atomic_load_explicit(&pinned, memory_order_relaxed) && ++n % 4096 != 0)
		act__cpu_relax();
	else
		sched_yield();
	return n;
}

static void wait_for(_Atomic bool *flag)
{
	unsigned n = 0;

	while (!atomic_load(flag))
		n = relax(n);
}

static void h_hit(struct act_actor *self, void *state, struct act_msg *m)
{
	struct hot *h = state;
	unsigned body = *ACT_PAYLOAD(m, unsigned);
	/* about log-uniform in 0 .. spin_mask: short and long holds alike */
	unsigned spin = (body & h->spin_mask) >> ((body >> 24) % 16);

	(void)self;
	if (atomic_exchange(&h->inside, 1) != 0)
		atomic_fetch_add(&h->overlaps, 1);
	if (body & HOLDER) {
		/* Let the other caller come, and release at a random point
		 * of its way to sleep: before, during or after it. */
		atomic_store(&h->held, true);
		wait_for(&h->coming);
	}
	if (++h->handled % (h->yield_every != 0 ? h->yield_every : UINT64_MAX) == 0)
		sched_yield(); /* hold the lock off-cpu: contenders go to sleep */
	while (spin-- > 0)
		__asm__ volatile("" ::: "memory");
	atomic_store(&h->inside, 0);
}

static const act_handler_fn handlers[T_COUNT] = {h_hit};

struct shared {
	struct act_actor *hot;
	struct hot *h;
	_Atomic unsigned arrived; /* round barrier: callers in it */
	_Atomic unsigned round;   /* round barrier: generation */
	_Atomic bool stop;        /* set by the main thread */
	_Atomic bool go_on;       /* the serial thread's decision for all */
	_Atomic uint64_t progress; /* calls completed, all callers */
	_Atomic unsigned in_call; /* callers between round start and barrier */
	_Atomic unsigned finished; /* callers that returned */
};

struct caller {
	struct shared *sh;
	const struct shape *shape;
	unsigned id;
	uint64_t delivered;
	uint64_t busy;
};

/*
 * Handoff: put the two callers on different cpus where there are two, so
 * that the release really runs while the other caller registers as a
 * sleeper (on one cpu the scheduler serialises them and the race is gone).
 */
static bool pin_to_own_cpu(unsigned id)
{
	cpu_set_t allowed;

	return sched_getaffinity(0, sizeof(allowed), &allowed) == 0 && tw_pin_nth(&allowed, id);
}

/*
 * The end of a round: a barrier (spinning where the callers have cpus of
 * their own, else yielding). The last caller in decides, for all, whether
 * there is another round and resets the handoff flags.
 */
static void round_end(struct shared *sh, unsigned callers)
{
	unsigned round = atomic_load(&sh->round);
	unsigned n = 0;

	if (atomic_fetch_add(&sh->arrived, 1) == callers - 1) {
		atomic_store(&sh->arrived, 0);
		atomic_store(&sh->go_on, !atomic_load(&sh->stop));
		atomic_store(&sh->h->held, false);
		atomic_store(&sh->h->coming, false);
		atomic_fetch_add(&sh->round, 1); /* releases the others */
		return;
	}
	while (atomic_load(&sh->round) == round)
		n = relax(n);
}

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	struct shared *sh = c->sh;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (c->id + 1);
	unsigned i;
	int rc;

	ACT_STACK_MSG(req, unsigned);
	if (c->shape->handoff && !pin_to_own_cpu(c->id))
		atomic_store(&pinned, false); /* then wait_for() yields */
	do {
		atomic_fetch_add(&sh->in_call, 1);
		for (i = 0; i < c->shape->round_calls;) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			act_msg_init(&req.hdr, T_HIT, sizeof(unsigned));
			req.body = (unsigned)(rng >> 32) & ~HOLDER;
			if (c->shape->handoff && c->id == 0) {
				req.body |= HOLDER;
			} else if (c->shape->handoff) {
				/* Arrive while the holder's handler runs. */
				wait_for(&sh->h->held);
				atomic_store(&sh->h->coming, true);
			}
			switch (c->shape->handoff ? 0 : rng % 8) {
			case 0:
			case 1:
			case 2:
			case 3:
				rc = act_fast_send(sh->hot, &req.hdr, NULL, 0);
				break;
			case 4:
			case 5:
				rc = act_fast_send_adaptive(sh->hot, &req.hdr, NULL, 0);
				break;
			case 6:
				rc = act_fast_send_spin(sh->hot, &req.hdr, NULL, 0);
				break;
			default:
				rc = act_fast_send_x(sh->hot, &req.hdr, NULL, 0);
				if (rc == -EBUSY) {
					c->busy++;
					continue; /* not delivered; try again */
				}
				break;
			}
			assert_int_equal(rc, 0);
			c->delivered++;
			i++;
			atomic_fetch_add_explicit(&sh->progress, 1, memory_order_relaxed);
		}
		atomic_fetch_sub(&sh->in_call, 1);
		/* One thread decides whether there is another round, for all. */
		round_end(sh, c->shape->callers);
	} while (atomic_load(&sh->go_on));
	atomic_fetch_add(&sh->finished, 1);
	return NULL;
}

static void lock_wake(const struct shape *shape, bool exchange)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct hot h = {.yield_every = shape->yield_every, .spin_mask = shape->spin_mask};
	struct shared sh = {.go_on = true};
	struct caller c[MAX_CALLERS];
	pthread_t th[MAX_CALLERS];
	struct act_actor *a;
	double until = tw_now_s() + tw_stress_seconds() * 0.9 / 4;
	double last_change;
	uint64_t last, total = 0, busy = 0, sleeps;
	unsigned i;

	if (!exchange && !act__membarrier_ok) {
		printf("# membarrier(PRIVATE_EXPEDITED) unavailable: the runtime uses the "
		       "exchange release; store release not tested here\n");
		skip();
	}
	atomic_store(&act__test_lock_release_exchange, exchange);
	{
		struct act_actor_opts o = {.name = "hot", .handlers = handlers,
					   .handler_count = T_COUNT, .state = &h, .group = g,
					   .lock_release_store = true};

		a = act_actor_create(&o);
		assert_non_null(a);
		assert_int_equal(act_actor_start(a), 0);
	}
	atomic_store(&act__test_lock_release_exchange, false);
	assert_true(a->release_store == !exchange);

	sh.hot = a;
	sh.h = &h;
	atomic_store(&pinned, shape->handoff);
	for (i = 0; i < shape->callers; i++) {
		c[i] = (struct caller){.sh = &sh, .shape = shape, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, caller_main, &c[i]), 0);
	}

	last = atomic_load(&sh.progress);
	last_change = tw_now_s();
	while (atomic_load(&sh.finished) != shape->callers) {
		uint64_t now_progress;
		double now;

		usleep(20 * 1000);
		now = tw_now_s();
		now_progress = atomic_load(&sh.progress);
		if (now >= until)
			atomic_store(&sh.stop, true);
		if (now_progress != last) {
			last = now_progress;
			last_change = now;
		} else if (now - last_change > WATCHDOG_S) {
			/* The stuck callers cannot be recovered (they use this
			 * frame): report and end the process. */
			print_error("lost wake-up (%s release, %s): no fast_send completed "
				    "for %.0f s with %u of %u callers inside a round, the "
				    "lock word %#x, sleepers %u, %llu futex sleeps so far\n",
				    exchange ? "exchange" : "store", shape->name, WATCHDOG_S,
				    atomic_load(&sh.in_call), shape->callers, atomic_load(&a->lock),
				    atomic_load(&a->sleepers),
				    (unsigned long long)atomic_load(&a->lock_sleeps));
			fflush(NULL);
			_exit(1);
		}
	}
	for (i = 0; i < shape->callers; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		total += c[i].delivered;
		busy += c[i].busy;
	}

	sleeps = atomic_load(&a->lock_sleeps);
	printf("# %s release, %s: %llu calls, %llu busy returns, %llu futex sleeps, "
	       "sleepers left %u\n",
	       exchange ? "exchange" : "store", shape->name, (unsigned long long)total,
	       (unsigned long long)busy, (unsigned long long)sleeps, atomic_load(&a->sleepers));
	assert_int_equal(atomic_load(&h.overlaps), 0);
	assert_int_equal(h.handled, total);
	assert_int_equal(atomic_load(&a->sleepers), 0);
	assert_int_equal(atomic_load(&a->lock), 0);
	/* The test is void if nobody slept. */
	assert_true(sleeps >= MIN_SLEEPS);

	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

struct lock_case {
	const struct shape *shape;
	bool exchange;
};

static struct lock_case cases[] = {
	{&traffic, false},
	{&handoff, false},
	{&traffic, true},
	{&handoff, true},
};

static void lock_case(void **state)
{
	const struct lock_case *c = *state;

	lock_wake(c->shape, c->exchange);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		{"store_traffic", lock_case, NULL, NULL, &cases[0]},
		{"store_handoff", lock_case, NULL, NULL, &cases[1]},
		{"exchange_traffic", lock_case, NULL, NULL, &cases[2]},
		{"exchange_handoff", lock_case, NULL, NULL, &cases[3]},
	};

	/* Before any actor exists; read by every lock wait. */
	atomic_store(&act__test_lock_wait_untimed, true);
	TW_RUN_TESTS(argc, argv, tests);
}
