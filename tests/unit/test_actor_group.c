/* SPDX-License-Identifier: BSD-3-Clause
 * Groups: one mailbox for all members, one thread or a caller-driven step,
 * group-private members, the injected clock, every queue type.
 *
 * Destroy is checked through internals (actor_pvt.h, not API): the discard
 * that act_group_destroy() runs (act__group_discard()), and the actor's
 * reference count. The runtime's message pool has no statistics a test can
 * reach, so main() caps it (act_init()) and a probe allocates every block
 * of the small class to prove none was lost (assert_pool_all_free()).
 */
#include <unistd.h>

#include "act_fixture.h"
#include "actor_pvt.h"

/* Blocks of each size class of the runtime's message pool (main()). */
#define POOL_BLOCKS 1024u
/* Bound of every "eventually" wait of these tests, in seconds. */
#define WAIT_MAX_S 10.0

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

/* Wait until *n >= @want, at most @seconds. */
static bool wait_count(_Atomic unsigned *n, unsigned want, double seconds)
{
	double t0 = tw_now_s();

	while (atomic_load(n) < want) {
		if (tw_now_s() - t0 > seconds)
			return false;
		usleep(100);
	}
	return true;
}

static void assert_mailbox(const struct act_group *g, uint64_t enqueued, uint64_t dequeued,
			   uint32_t queued)
{
	struct act_mailbox_stats ms;

	act_group_mailbox_stats(g, &ms);
	assert_int_equal(act_group_queued(g), queued);
	assert_int_equal(ms.enqueued, enqueued);
	assert_int_equal(ms.dequeued, dequeued);
	assert_int_equal(ms.discarded, 0);
}

/*
 * A group's thread exists only between act_group_start() and
 * act_group_stop(), and nothing else runs the group's messages meanwhile:
 *  - sent to a group created but never started, all messages stay queued
 *    (no thread: act_group_queued() counts them all, nothing dequeued);
 *  - once started, all run, in order, on the group's thread (waited for
 *    with a deadline, then checked after the stop joined the thread);
 *  - stopped (the thread joined), what is sent stays queued, for a second
 *    start, then for a step on the caller's thread;
 *  - a stopped actor refuses sends: nothing is queued.
 * Every "nothing ran" is read from the counters while no thread exists.
 */
static void group_thread_start_stop(void **unused)
{
	struct act_group_opts go = {.name = "gt", .queue = ACT_QUEUE_LOCKFREE, .capacity = 256,
				    .spin = 100, .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct fx_log log = {0};
	struct st sa = {.id = 1, .log = &log};
	struct act_actor *a;
	int i, v = 502;

	(void)unused;
	assert_non_null(g);
	a = fx_actor("a", g, handlers, T_COUNT, &sa, false);
	/* created, not started: no thread, so everything stays queued */
	for (i = 0; i < 100; i++)
		fx_send_int(a, T_LOG, i);
	assert_mailbox(g, 100, 0, 100);
	assert_int_equal(atomic_load(&log.n), 0);

	assert_int_equal(act_group_start(g), 0);
	assert_int_equal(act_group_start(g), -EALREADY);
	assert_int_equal(act_group_step(g, 0), -EALREADY); /* it has a thread */
	assert_true(wait_count(&log.n, 100, WAIT_MAX_S));
	assert_int_equal(act_group_stop(g), 0);
	/* the thread is joined: its writes are visible, nothing runs now */
	assert_mailbox(g, 100, 100, 0);
	for (i = 0; i < 100; i++)
		assert_int_equal(log.v[i], 1000 + i);
	assert_false(pthread_equal(sa.ran_on, pthread_self()));

	/* stopped: messages stay queued until the next start */
	fx_send_int(a, T_LOG, 500);
	assert_mailbox(g, 101, 100, 1);
	assert_int_equal(atomic_load(&log.n), 100);
	assert_int_equal(act_group_start(g), 0);
	assert_true(wait_count(&log.n, 101, WAIT_MAX_S));
	assert_int_equal(act_group_stop(g), 0);
	assert_mailbox(g, 101, 101, 0);
	assert_int_equal(log.v[100], 1500);
	assert_false(pthread_equal(sa.ran_on, pthread_self()));

	/* stopped again: queued until stepped, then run on this thread */
	fx_send_int(a, T_LOG, 501);
	assert_mailbox(g, 102, 101, 1);
	assert_int_equal(atomic_load(&log.n), 101);
	assert_int_equal(act_group_step(g, 0), 1);
	assert_true(pthread_equal(sa.ran_on, pthread_self()));
	assert_int_equal(log.v[101], 1501);
	assert_mailbox(g, 102, 102, 0);
	assert_int_equal(act_group_start(g), -EALREADY); /* bound to this thread now */

	/* a stopped actor refuses sends: nothing queued, nothing counted */
	act_actor_stop(a);
	assert_int_equal(act_send_copy(a, T_LOG, &v, sizeof(v)), -ESHUTDOWN);
	assert_mailbox(g, 102, 102, 0);
	assert_int_equal(act_group_step(g, 0), 0);
	assert_int_equal(atomic_load(&log.n), 102);
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

/*
 * Every block of the small class of the runtime's message pool can be
 * allocated: none was lost. main() caps the class at POOL_BLOCKS blocks;
 * blocks freed on this thread sit in its cache, which it allocates from
 * first, and the threads of earlier tests flushed theirs when they exited.
 */
static void assert_pool_all_free(void)
{
	static struct act_msg *held[POOL_BLOCKS];
	uint32_t n, i;

	for (n = 0; n < POOL_BLOCKS; n++) {
		held[n] = act_msg_alloc(T_LOG, sizeof(int));
		if (held[n] == NULL)
			break;
	}
	for (i = 0; i < n; i++)
		act_msg_free(held[i]);
	if (n != POOL_BLOCKS)
		fail_msg("message pool: only %u of its %u blocks could be allocated, %u never "
			 "came back", n, POOL_BLOCKS, POOL_BLOCKS - n);
}

/* A payload too large to travel inline, small enough for the small class. */
struct big {
	int v;
	char pad[44];
};

_Static_assert(sizeof(struct big) > ACT__INLINE_MAX, "struct big travels inline");
_Static_assert(sizeof(struct act_msg) + sizeof(struct big) <= 128,
	       "struct big leaves the pool's small class");

/* Queue @n messages for @a: even ones small (inline where the queue has
 * cells), odd ones struct big (pool blocks). Returns the blocks taken. */
static uint64_t send_mixed(struct act_actor *a, int n)
{
	uint64_t allocs = act_thread_alloc_count();
	int i;

	for (i = 0; i < n; i++) {
		struct big b = {.v = i};

		if (i % 2 == 0)
			fx_send_int(a, T_LOG, i);
		else
			assert_int_equal(act_send_copy(a, T_LOG, &b, sizeof(b)), 0);
	}
	return act_thread_alloc_count() - allocs;
}

/*
 * Destroying with messages still queued, for every queue kind. Six messages
 * (pool blocks among them) for an actor that is then destroyed: the two the
 * group's step takes are dropped (dequeued, no handler runs); the four
 * still queued are discarded when the group is destroyed: discarded == 4,
 * enqueued == 6 == dequeued + discarded + queued, each drops its reference
 * to the actor, and every pool block is back in the runtime's pool.
 * act_group_destroy() closes the queue and runs act__group_discard(),
 * whose count is read here before the group is freed; then the same
 * destroy in one call, checked by the references and the pool.
 */
static void destroy_with_queued_messages(void **unused)
{
	enum act_queue_type q;

	(void)unused;
	for (q = ACT_QUEUE_BQUEUE; q < ACT_QUEUE_COUNT_; q++) {
		struct act_group *g = fx_group(q, ACT_OVERFLOW_FAIL, 64);
		struct fx_log log = {0};
		struct st s = {.log = &log};
		struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
		struct act_mailbox_stats ms;
		/* sharded mailboxes have no inline cells: every message is a block */
		uint64_t blocks = q == ACT_QUEUE_SHARDED ? 6 : 3;

		/* keep the actor's memory past its destroy, to read its references */
		atomic_fetch_add(&a->refs, 1);
		assert_int_equal(send_mixed(a, 6), blocks);
		assert_int_equal(atomic_load(&a->refs), 2 + 6); /* creator, ours, queued */
		act_actor_stop(a);
		act_actor_destroy(a);
		act_group_mailbox_stats(g, &ms);
		assert_int_equal(ms.enqueued, 6);
		assert_int_equal(act_group_queued(g), 6);
		/* a dead actor's messages are dropped when the group runs */
		assert_int_equal(act_group_step(g, 2), 2);
		assert_int_equal(log.n, 0);
		assert_int_equal(atomic_load(&a->refs), 1 + 4);
		/* destroy: close, then discard and count what is left */
		act__queue_close(&g->queue);
		assert_int_equal(act__group_discard(g), 4);
		act_group_mailbox_stats(g, &ms);
		assert_int_equal(ms.discarded, 4);
		assert_int_equal(ms.dequeued, 2);
		assert_int_equal(ms.enqueued, 6);
		assert_int_equal(act_group_queued(g), 0);
		assert_int_equal(ms.enqueued, ms.dequeued + ms.discarded + act_group_queued(g));
		assert_int_equal(atomic_load(&a->refs), 1);
		assert_int_equal(log.n, 0);
		act_group_destroy(g);
		act__actor_unref(a);
		assert_pool_all_free();

		/* act_group_destroy() with the six still queued */
		g = fx_group(q, ACT_OVERFLOW_FAIL, 64);
		a = fx_actor("a", g, handlers, T_COUNT, &s, false);
		atomic_fetch_add(&a->refs, 1);
		assert_int_equal(send_mixed(a, 6), blocks);
		act_actor_stop(a);
		act_actor_destroy(a);
		assert_int_equal(atomic_load(&a->refs), 1 + 6);
		act_group_destroy(g);
		assert_int_equal(atomic_load(&a->refs), 1);
		act__actor_unref(a);
		assert_int_equal(log.n, 0);
		assert_pool_all_free();
	}
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

	/* a small pool, so that assert_pool_all_free() can take all of it */
	const struct act_runtime_opts ro = {.pool_max_blocks = POOL_BLOCKS,
					    .pool_prealloc_blocks = POOL_BLOCKS};

	if (act_init(&ro) != 0) {
		fprintf(stderr, "act_init failed\n");
		return 1;
	}
	TW_RUN_TESTS(argc, argv, tests);
}
