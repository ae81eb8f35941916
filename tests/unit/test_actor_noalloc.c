/* SPDX-License-Identifier: BSD-3-Clause
 * The whole synchronous path, reply included, allocates nothing: neither a
 * pool block (act_thread_alloc_count) nor malloc (counted by wrapping the
 * allocator at link time when no sanitizer owns it).
 */
#include "act_fixture.h"

#ifdef TW_WRAP_MALLOC
#include "tw_alloc_count.h"
#define MALLOCS() tw_allocations
#else
#define MALLOCS() 0ul
#endif

enum { T_ASK, T_ASK_SYNC, T_LEAF, T_COUNT };

struct st {
	struct act_actor *next;
	long sum;
};

static void forward_and_reply(struct act_actor *self, struct st *s, struct act_msg *m, bool sync_only)
{
	long v = *ACT_PAYLOAD(m, long) + 1;

	(void)self;
	if (s->next != NULL) {
		long r = 0;

		ACT_STACK_MSG(req, long);
		act_msg_init(&req.hdr, m->type, sizeof(long));
		req.body = v;
		assert_int_equal(act_fast_send(s->next, &req.hdr, &r, sizeof(r)), (int)sizeof(r));
		v = r;
	}
	s->sum += v;
	if (sync_only)
		assert_int_equal(act_reply_sync(m, T_ASK, &v, sizeof(v)), 0);
	else
		assert_int_equal(act_reply(m, T_ASK, &v, sizeof(v)), 0);
}

static void h_ask(struct act_actor *self, void *state, struct act_msg *m)
{
	forward_and_reply(self, state, m, false);
}

static void h_ask_sync(struct act_actor *self, void *state, struct act_msg *m)
{
	forward_and_reply(self, state, m, true);
}

static void h_leaf(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	s->sum += *ACT_PAYLOAD(m, long);
}

static const act_handler_fn handlers[T_COUNT] = {h_ask, h_ask_sync, h_leaf};

static void sync_path_allocates_nothing(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_LOCKFREE, ACT_OVERFLOW_FAIL, 64);
	struct st sa = {0}, sb = {0}, sc = {0};
	struct act_actor *a, *b, *c;
	unsigned long m0;
	uint64_t p0;
	long i, r;

	(void)unused;
	c = fx_actor("c", g, handlers, T_COUNT, &sc, true); /* group-private */
	b = fx_actor("b", g, handlers, T_COUNT, &sb, false);
	a = fx_actor("a", g, handlers, T_COUNT, &sa, false);
	sa.next = b;
	sb.next = c;
	assert_int_equal(act_group_bind(g), 0);

	ACT_STACK_MSG(req, long);
	/* warm-up: thread registration and lazy runtime set-up happen here */
	act_msg_init(&req.hdr, T_ASK, sizeof(long));
	req.body = 0;
	assert_int_equal(act_fast_send(a, &req.hdr, &r, sizeof(r)), (int)sizeof(r));

#ifdef TW_WRAP_MALLOC
	tw_alloc_counting = 1;
#endif
	m0 = MALLOCS();
	p0 = act_thread_alloc_count();
	for (i = 0; i < 10000; i++) {
		act_msg_init(&req.hdr, i & 1 ? T_ASK : T_ASK_SYNC, sizeof(long));
		req.body = i;
		switch (i % 4) {
		case 0:
			assert_int_equal(act_fast_send(a, &req.hdr, &r, sizeof(r)), (int)sizeof(r));
			break;
		case 1:
			assert_int_equal(act_fast_send_spin(a, &req.hdr, &r, sizeof(r)),
					 (int)sizeof(r));
			break;
		case 2:
			assert_int_equal(act_fast_send_adaptive(a, &req.hdr, &r, sizeof(r)),
					 (int)sizeof(r));
			break;
		default:
			assert_int_equal(act_fast_send_x(a, &req.hdr, &r, sizeof(r)), (int)sizeof(r));
			break;
		}
		assert_int_equal(r, i + 3);
		act_msg_init(&req.hdr, T_LEAF, sizeof(long));
		assert_int_equal(act_fast_send_void(b, &req.hdr), 0);
	}
	assert_int_equal(act_thread_alloc_count() - p0, 0);
	assert_int_equal(MALLOCS() - m0, 0);

	/* a small async send to a lockfree mailbox travels inline in its ring
	 * cell: no pool block either */
	assert_int_equal(act_send_copy(a, T_LEAF, &i, sizeof(i)), 0);
	assert_int_equal(act_thread_alloc_count() - p0, 0);
	/* the counters do see allocations: a send too large to travel inline
	 * takes a pool block */
	{
		long big[8] = {i};

		assert_int_equal(act_send_copy(a, T_LEAF, big, sizeof(big)), 0);
	}
	assert_int_equal(act_thread_alloc_count() - p0, 1);
#ifdef TW_WRAP_MALLOC
	{
		void *volatile probe = malloc(16); /* volatile: not elided */

		free(probe);
		assert_int_equal(MALLOCS() - m0, 1);
	}
#endif
	act_group_drain(g);
	act_actor_stop(a);
	act_actor_stop(b);
	act_actor_stop(c);
	act_actor_destroy(a);
	act_actor_destroy(b);
	act_actor_destroy(c);
	act_group_destroy(g);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sync_path_allocates_nothing),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
