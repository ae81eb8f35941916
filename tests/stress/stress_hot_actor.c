/* SPDX-License-Identifier: BSD-3-Clause
 * Exclusive access under load (DESIGN 2.1): one hot actor is hit by
 * fast_send (every family member) from several threads and by asynchronous
 * senders at once, while its own group thread drains the mailbox. A flag set
 * inside the handler catches any overlap; counts catch any lost message.
 */
#include <sched.h>
#include <unistd.h>

#include "act_fixture.h"

#define SYNC_THREADS 3
#define ASYNC_THREADS 2

enum { T_HIT, T_COUNT };

struct hot {
	_Atomic int inside;
	_Atomic uint64_t overlaps;
	uint64_t handled;                /* plain: only written under the lock */
	uint64_t per_source[SYNC_THREADS + ASYNC_THREADS];
};

static void h_hit(struct act_actor *self, void *state, struct act_msg *m)
{
	struct hot *h = state;
	unsigned src = *ACT_PAYLOAD(m, unsigned);
	int i;

	(void)self;
	if (atomic_exchange(&h->inside, 1) != 0)
		atomic_fetch_add(&h->overlaps, 1);
	h->handled++;
	h->per_source[src]++;
	for (i = 0; i < 20; i++) /* widen the window a little */
		__asm__ volatile("" ::: "memory");
	atomic_store(&h->inside, 0);
	act_reply(m, T_HIT, &h->handled, sizeof(h->handled));
}

static const act_handler_fn handlers[T_COUNT] = {h_hit};

struct worker {
	struct act_actor *hot;
	unsigned id;
	double until;
	uint64_t delivered; /* messages this thread got accepted */
	uint64_t fallbacks;
};

static void *sync_worker(void *arg)
{
	struct worker *w = arg;
	uint64_t n = 0, reply;
	int rc;

	ACT_STACK_MSG(req, unsigned);
	while (tw_now_s() < w->until) {
		act_msg_init(&req.hdr, T_HIT, sizeof(unsigned));
		req.body = w->id;
		switch (n++ % 5) {
		case 0:
			rc = act_fast_send(w->hot, &req.hdr, &reply, sizeof(reply));
			break;
		case 1:
			rc = act_fast_send_spin(w->hot, &req.hdr, &reply, sizeof(reply));
			break;
		case 2:
			rc = act_fast_send_adaptive(w->hot, &req.hdr, &reply, sizeof(reply));
			break;
		case 3:
			rc = act_fast_send_x(w->hot, &req.hdr, &reply, sizeof(reply));
			if (rc == -EBUSY)
				continue; /* not delivered: do not count */
			break;
		default:
			rc = act_fast_send_void(w->hot, &req.hdr);
			if (rc == 1)
				w->fallbacks++;
			if (rc >= 0)
				rc = 0;
			break;
		}
		if (rc == -EAGAIN)
			continue; /* void fallback into a full mailbox */
		assert_true(rc >= 0);
		w->delivered++;
	}
	return NULL;
}

static void *async_worker(void *arg)
{
	struct worker *w = arg;

	while (tw_now_s() < w->until) {
		int rc = act_send_copy(w->hot, T_HIT, &w->id, sizeof(w->id));

		if (rc == 0)
			w->delivered++;
		else
			assert_int_equal(rc, -EAGAIN);
	}
	return NULL;
}

static void hot_actor(enum act_queue_type q)
{
	struct act_group_opts go = {.name = "hot", .queue = q, .capacity = 1024,
				    .overflow = ACT_OVERFLOW_FAIL, .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct hot h = {0};
	struct act_actor *a = fx_actor("hot", g, handlers, T_COUNT, &h, false);
	struct worker w[SYNC_THREADS + ASYNC_THREADS];
	pthread_t th[SYNC_THREADS + ASYNC_THREADS];
	struct act_actor_stats st;
	double until = tw_now_s() + tw_stress_seconds() / ACT_QUEUE_COUNT_;
	uint64_t total = 0, fallbacks = 0;
	unsigned i;

	assert_non_null(g);
	assert_int_equal(act_group_start(g), 0);
	for (i = 0; i < SYNC_THREADS + ASYNC_THREADS; i++) {
		w[i] = (struct worker){.hot = a, .id = i, .until = until};
		assert_int_equal(pthread_create(&th[i], NULL,
						i < SYNC_THREADS ? sync_worker : async_worker, &w[i]),
				 0);
	}
	for (i = 0; i < SYNC_THREADS + ASYNC_THREADS; i++) {
		pthread_join(th[i], NULL);
		total += w[i].delivered;
		fallbacks += w[i].fallbacks;
	}
	while (act_group_queued(g) != 0)
		usleep(1000);
	assert_int_equal(act_group_stop(g), 0);
	act_group_drain(g);

	assert_int_equal(atomic_load(&h.overlaps), 0);
	assert_int_equal(h.handled, total);
	for (i = 0; i < SYNC_THREADS + ASYNC_THREADS; i++)
		assert_int_equal(h.per_source[i], w[i].delivered);
	act_actor_stats(a, &st);
	assert_int_equal(st.sync_completions + st.async_runs, total);
	assert_int_equal(st.async_fallbacks, fallbacks);
	printf("# %s: %llu messages (%llu sync, %llu async, %llu void fallbacks, %llu busy)\n",
	       go.name, (unsigned long long)total, (unsigned long long)st.sync_completions,
	       (unsigned long long)st.async_runs, (unsigned long long)fallbacks,
	       (unsigned long long)st.busy_returns);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

static void hot_bqueue(void **unused)
{
	(void)unused;
	hot_actor(ACT_QUEUE_BQUEUE);
}

static void hot_batched(void **unused)
{
	(void)unused;
	hot_actor(ACT_QUEUE_BQUEUE_BATCHED);
}

static void hot_sharded(void **unused)
{
	(void)unused;
	hot_actor(ACT_QUEUE_SHARDED);
}

static void hot_lockfree(void **unused)
{
	(void)unused;
	hot_actor(ACT_QUEUE_LOCKFREE);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hot_bqueue),
		cmocka_unit_test(hot_batched),
		cmocka_unit_test(hot_sharded),
		cmocka_unit_test(hot_lockfree),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
