/* SPDX-License-Identifier: BSD-3-Clause
 * Unified reply (DESIGN 2.3) and receiver transparency (DESIGN 2.2).
 */
#include "act_fixture.h"

enum { T_ASK, T_ANSWER, T_TWICE, T_SYNC_ONLY, T_BIG, T_START, T_COUNT };

/* What a handler can observe about a message, recorded per delivery. */
struct view {
	uint32_t type, size;
	struct act_actor *sender;
	int payload;
	int reply_rc, second_rc;
};

struct st {
	struct view v[8];
	int n;
	struct act_actor *peer; /* for T_START: ask this actor asynchronously */
	int answer;
	struct act_actor *answer_from;
	int answers;
};

/* The receiver: identical code for both delivery modes. */
static void h_ask(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct view *v = &s->v[s->n++];
	int doubled = *ACT_PAYLOAD(m, int) * 2;

	(void)self;
	v->type = m->type;
	v->size = m->size;
	v->sender = m->sender;
	v->payload = *ACT_PAYLOAD(m, int);
	v->reply_rc = act_reply(m, T_ANSWER, &doubled, sizeof(doubled));
}

static void h_answer(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	s->answer = *ACT_PAYLOAD(m, int);
	s->answer_from = m->sender;
	s->answers++;
}

static void h_twice(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct view *v = &s->v[s->n++];
	int x = 1;

	(void)self;
	v->reply_rc = act_reply(m, T_ANSWER, &x, sizeof(x));
	v->second_rc = act_reply(m, T_ANSWER, &x, sizeof(x));
}

static void h_sync_only(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct view *v = &s->v[s->n++];
	int x = 3;

	(void)self;
	v->reply_rc = act_reply_sync(m, T_ANSWER, &x, sizeof(x));
	v->second_rc = act_reply_sync(m, T_ANSWER, &x, sizeof(x));
}

static void h_big(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct view *v = &s->v[s->n++];
	char big[64] = {0};

	(void)self;
	v->reply_rc = act_reply(m, T_ANSWER, big, sizeof(big));
}

/* Ask the peer asynchronously from inside a handler (so we are the sender). */
static void h_start(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	assert_int_equal(act_send_copy(s->peer, T_ASK, m->payload, sizeof(int)), 0);
}

static const act_handler_fn handlers[T_COUNT] = {h_ask, h_answer, h_twice, h_sync_only,
						 h_big, h_start};

struct pair {
	struct act_group *g;
	struct st sa, sb;
	struct act_actor *a, *b;
};

static int setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));

	p->g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 64);
	p->a = fx_actor("a", p->g, handlers, T_COUNT, &p->sa, false);
	p->b = fx_actor("b", p->g, handlers, T_COUNT, &p->sb, false);
	p->sa.peer = p->b;
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	act_actor_stop(p->a);
	act_actor_stop(p->b);
	act_actor_destroy(p->a);
	act_actor_destroy(p->b);
	act_group_destroy(p->g);
	free(p);
	return 0;
}

static void sync_reply_into_return_buffer(void **state)
{
	struct pair *p = *state;
	int out = 0;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_ASK, sizeof(int));
	req.body = 21;
	assert_int_equal(act_fast_send(p->b, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(out, 42);
	assert_true(act_msg_replied(&req.hdr));
	assert_int_equal(act_msg_reply_type(&req.hdr), T_ANSWER);
	assert_int_equal(p->sb.v[0].reply_rc, 0);
	/* nothing was enqueued anywhere */
	assert_int_equal(act_group_queued(p->g), 0);
}

static void async_reply_goes_to_sender_mailbox(void **state)
{
	struct pair *p = *state;

	fx_send_int(p->a, T_START, 10); /* a sends T_ASK to b from its handler */
	assert_int_equal(act_group_step(p->g, 1), 1);
	assert_int_equal(act_group_step(p->g, 1), 1); /* b runs, replies to a */
	assert_int_equal(p->sb.v[0].reply_rc, 0);
	assert_ptr_equal(p->sb.v[0].sender, p->a);
	assert_int_equal(p->sa.answers, 0);
	assert_int_equal(act_group_step(p->g, 1), 1); /* a gets the answer */
	assert_int_equal(p->sa.answers, 1);
	assert_int_equal(p->sa.answer, 20);
	assert_ptr_equal(p->sa.answer_from, p->b);
}

/* DESIGN 2.2: the handler sees the same thing in both modes. */
static void receiver_is_transparent(void **state)
{
	struct pair *p = *state;
	int out = 0;

	/* synchronous, from inside a's handler so that a is the sender */
	p->sa.peer = p->b;
	fx_send_int(p->a, T_START, 5);
	assert_int_equal(act_group_drain(p->g), 3);
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_ASK, sizeof(int));
	req.body = 5;
	/* sync from a non-actor thread: sender NULL, so compare the rest and
	 * check the async one's sender separately */
	assert_int_equal(act_fast_send(p->b, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(p->sb.n, 2);
	assert_int_equal(p->sb.v[0].type, p->sb.v[1].type);
	assert_int_equal(p->sb.v[0].size, p->sb.v[1].size);
	assert_int_equal(p->sb.v[0].payload, p->sb.v[1].payload);
	assert_int_equal(p->sb.v[0].reply_rc, p->sb.v[1].reply_rc);
	assert_ptr_equal(p->sb.v[0].sender, p->a);
	assert_null(p->sb.v[1].sender);
	assert_int_equal(out, p->sa.answer);
}

static void second_reply_is_an_error(void **state)
{
	struct pair *p = *state;
	struct act_msg *m;
	int out = 0;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_TWICE, sizeof(int));
	assert_int_equal(act_fast_send(p->b, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(p->sb.v[0].reply_rc, 0);
	assert_int_equal(p->sb.v[0].second_rc, -EALREADY);

	/* async from a non-actor thread: no sender to reply to; a failed
	 * reply does not count as the one reply */
	m = act_msg_alloc(T_TWICE, sizeof(int));
	assert_non_null(m);
	assert_int_equal(act_send(p->b, m), 0);
	assert_int_equal(act_group_drain(p->g), 1);
	assert_int_equal(p->sb.v[1].reply_rc, -ENOTCONN);
	assert_int_equal(p->sb.v[1].second_rc, -ENOTCONN);
}

static void twice_from_actor(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)state;
	(void)m;
	act_send_copy(((struct pair *)act_actor_state(self))->b, T_TWICE, NULL, 0);
}

static void ignore(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)state;
	(void)m;
}

static void second_async_reply_is_an_error(void **state)
{
	struct pair *p = *state;
	static const act_handler_fn hs[2] = {[0] = twice_from_actor, [T_ANSWER] = ignore};
	struct act_actor *c = fx_actor("c", p->g, hs, 2, p, false);

	fx_send_int(c, 0, 0);
	act_group_drain(p->g);
	assert_int_equal(p->sb.v[p->sb.n - 1].reply_rc, 0);
	assert_int_equal(p->sb.v[p->sb.n - 1].second_rc, -EALREADY);
	act_actor_stop(c);
	act_actor_destroy(c);
}

static void sync_only_reply(void **state)
{
	struct pair *p = *state;
	int out = 0;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_SYNC_ONLY, sizeof(int));
	assert_int_equal(act_fast_send(p->b, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(out, 3);
	assert_int_equal(p->sb.v[0].reply_rc, 0);
	assert_int_equal(p->sb.v[0].second_rc, -EALREADY);

	fx_send_int(p->b, T_SYNC_ONLY, 0);
	act_group_drain(p->g);
	assert_int_equal(p->sb.v[1].reply_rc, -EPROTO);
}

static void reply_too_large(void **state)
{
	struct pair *p = *state;
	int out = 0;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_BIG, sizeof(int));
	assert_int_equal(act_fast_send(p->b, &req.hdr, &out, sizeof(out)), -EMSGSIZE);
	assert_int_equal(p->sb.v[0].reply_rc, -EMSGSIZE);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(sync_reply_into_return_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(async_reply_goes_to_sender_mailbox, setup,
						teardown),
		cmocka_unit_test_setup_teardown(receiver_is_transparent, setup, teardown),
		cmocka_unit_test_setup_teardown(second_reply_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(second_async_reply_is_an_error, setup, teardown),
		cmocka_unit_test_setup_teardown(sync_only_reply, setup, teardown),
		cmocka_unit_test_setup_teardown(reply_too_large, setup, teardown),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
