/* SPDX-License-Identifier: BSD-3-Clause
 * The inlined fast path of the fast_send family (lib/actor/actor.c,
 * fast_send_fast()): a group-private receiver called from its group's thread
 * (no lock), and a lockable receiver whose lock is free (one CAS). Each case
 * checks that the fast path keeps the guarantees of DESIGN 2 that the general
 * path gives: the reply slot and its errors, the call chain (act_self,
 * depth, sender), cycle detection through a private actor with both
 * policies, the chain depth bound, -EPERM from a foreign thread, -ESHUTDOWN,
 * -ENOTSUP, and the counters.
 */
#include "act_fixture.h"

enum { T_ECHO, T_NEST, T_TWICE, T_BIG, T_SELF, T_DEEP, T_COUNT };

struct st {
	struct act_actor *next;  /* T_NEST: forward to it with next_type */
	uint32_t next_type;
	unsigned next_flags;     /* per-call cycle policy of the forward */
	int next_rc;
	int second_rc;           /* T_TWICE: the second reply */
	int reply_rc;            /* T_ECHO: its reply */
	bool seen_self_ok;       /* T_ECHO: act_self() was the receiver */
	struct act_actor *seen_self, *seen_sender;
	unsigned seen_depth;
	int runs;
};

static void h_echo(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	s->runs++;
	s->seen_self = act_self();
	s->seen_sender = m->sender;
	s->seen_depth = act_chain_depth();
	s->seen_self_ok = act_self() == self;
	s->reply_rc = act_reply(m, T_ECHO, m->payload, m->size);
}

static void h_nest(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	(void)m;
	s->runs++;
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, s->next_type, 0); /* echo: an empty reply fits no buffer */
	s->next_rc = act_fast_send_opt(s->next, &req.hdr, NULL, 0, ACT_WAIT_SLEEP, s->next_flags);
}

static void h_twice(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	int v = 1;

	(void)self;
	s->runs++;
	assert_int_equal(act_reply_sync(m, T_TWICE, &v, sizeof(v)), 0);
	s->second_rc = act_reply(m, T_TWICE, &v, sizeof(v));
}

static void h_big(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	char big[64] = {0};

	(void)self;
	s->runs++;
	s->second_rc = act_reply(m, T_BIG, big, sizeof(big));
}

/* Calls itself: a cycle of one. */
static void h_self(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)m;
	s->runs++;
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_ECHO, sizeof(int));
	s->next_rc = act_fast_send(self, &req.hdr, NULL, 0);
}

static const act_handler_fn handlers[T_COUNT] = {h_echo, h_nest, h_twice, h_big, h_self, NULL};

struct fx {
	struct act_group *g;
	struct st sp, sq, sl;
	struct act_actor *p, *q; /* group-private */
	struct act_actor *l;     /* lockable, same group */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
	f->g = fx_group(ACT_QUEUE_LOCKFREE, ACT_OVERFLOW_FAIL, 64);
	f->p = fx_actor("P", f->g, handlers, T_COUNT, &f->sp, true);
	f->q = fx_actor("Q", f->g, handlers, T_COUNT, &f->sq, true);
	f->l = fx_actor("L", f->g, handlers, T_COUNT, &f->sl, false);
	assert_int_equal(act_group_bind(f->g), 0); /* this thread runs the group */
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	act_group_drain(f->g);
	act_actor_stop(f->p);
	act_actor_stop(f->q);
	act_actor_stop(f->l);
	act_actor_destroy(f->p);
	act_actor_destroy(f->q);
	act_actor_destroy(f->l);
	act_group_destroy(f->g);
	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
	free(f);
	return 0;
}

static int call(struct act_actor *to, uint32_t type, int body, void *reply, uint32_t cap)
{
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, type, sizeof(int));
	req.body = body;
	return act_fast_send(to, &req.hdr, reply, cap);
}

/* Reply into the caller's slot, from the top and from inside a handler. */
static void private_reply_and_chain(void **state)
{
	struct fx *f = *state;
	struct act_actor_stats st;
	int out = 0;
	unsigned i;

	for (i = 0; i < 3; i++) { /* repeated: the same stack request is reused */
		ACT_STACK_MSG(req, int);
		act_msg_init(&req.hdr, T_ECHO, sizeof(int));
		req.body = 41 + (int)i;
		assert_int_equal(act_fast_send(f->p, &req.hdr, &out, sizeof(out)), sizeof(int));
		assert_int_equal(out, 41 + (int)i);
		assert_true(act_msg_replied(&req.hdr));
		assert_int_equal(act_msg_reply_type(&req.hdr), T_ECHO);
		assert_int_equal(req.hdr.qdepth, 0);
		assert_int_equal(req.hdr.enqueue_tsc, 0);
		assert_ptr_equal(req.hdr.dest, f->p);
	}
	assert_ptr_equal(f->sp.seen_self, f->p);
	assert_true(f->sp.seen_self_ok);
	assert_int_equal(f->sp.reply_rc, 0);
	assert_null(f->sp.seen_sender);
	assert_int_equal(f->sp.seen_depth, 1);
	assert_int_equal(act_chain_depth(), 0);
	assert_null(act_self());

	/* P -> Q, both private: Q sees P as sender, depth 2 */
	f->sp.next = f->q;
	f->sp.next_type = T_ECHO;
	assert_int_equal(call(f->p, T_NEST, 0, NULL, 0), 0);
	assert_int_equal(f->sp.next_rc, 0);
	assert_int_equal(f->sq.reply_rc, 0);
	assert_ptr_equal(f->sq.seen_sender, f->p);
	assert_int_equal(f->sq.seen_depth, 2);
	assert_int_equal(act_chain_depth(), 0);

	/* every member of the family takes the same path */
	assert_int_equal(act_fast_send_spin(f->q, &(struct act_msg){.type = T_ECHO}, NULL, 0), 0);
	assert_int_equal(act_fast_send_adaptive(f->q, &(struct act_msg){.type = T_ECHO}, NULL, 0),
			 0);
	assert_int_equal(act_fast_send_x(f->q, &(struct act_msg){.type = T_ECHO}, NULL, 0), 0);
	assert_int_equal(act_fast_send_void(f->q, &(struct act_msg){.type = T_ECHO}), 0);
	act_actor_stats(f->q, &st);
	assert_int_equal(st.sync_completions, 5);
	assert_int_equal(st.async_fallbacks, 0);
	act_actor_stats(f->p, &st);
	assert_int_equal(st.sync_completions, 4);
}

/* The reply's errors on the fast path: a second reply, a reply too large. */
static void private_reply_errors(void **state)
{
	struct fx *f = *state;
	int out = 0;
	char small[8];

	assert_int_equal(call(f->p, T_TWICE, 0, &out, sizeof(out)), sizeof(int));
	assert_int_equal(out, 1);
	assert_int_equal(f->sp.second_rc, -EALREADY);
	assert_int_equal(call(f->p, T_BIG, 0, small, sizeof(small)), -EMSGSIZE);
	assert_int_equal(f->sp.second_rc, -EMSGSIZE);
	/* the same on a lockable receiver, whose lock must be free afterwards */
	assert_int_equal(call(f->l, T_BIG, 0, small, sizeof(small)), -EMSGSIZE);
	assert_int_equal(call(f->l, T_TWICE, 0, &out, sizeof(out)), sizeof(int));
	assert_int_equal(f->sl.second_rc, -EALREADY);
}

/* P -> L -> P and P -> P are cycles, caught before anything runs. */
static void cycle_through_private(void **state)
{
	struct fx *f = *state;
	struct act_chain_entry c[8];
	int v = 0;

	f->sp.next = f->l;
	f->sp.next_type = T_NEST;
	f->sl.next = f->p;
	f->sl.next_type = T_ECHO;
	f->sp.runs = 0;
	assert_int_equal(call(f->p, T_NEST, 0, NULL, 0), 0);
	assert_int_equal(f->sp.next_rc, 0);
	assert_int_equal(f->sl.next_rc, -ELOOP);
	assert_int_equal(f->sp.runs, 1); /* P/echo never ran */
	assert_int_equal(act_last_cycle(c, 8), 3);
	assert_ptr_equal(c[0].actor, f->p);
	assert_int_equal(c[0].type, T_ECHO);
	assert_ptr_equal(c[1].actor, f->p);
	assert_ptr_equal(c[2].actor, f->l);

	/* L -> P -> L: a cycle through the lockable one, entered from private */
	f->sl.next = f->p;
	f->sl.next_type = T_NEST;
	f->sp.next = f->l;
	f->sp.next_type = T_ECHO;
	assert_int_equal(call(f->l, T_NEST, 0, NULL, 0), 0);
	assert_int_equal(f->sl.next_rc, 0);
	assert_int_equal(f->sp.next_rc, -ELOOP);

	/* a private actor calling itself */
	assert_int_equal(call(f->q, T_SELF, 0, NULL, 0), 0);
	assert_int_equal(f->sq.next_rc, -ELOOP);
	assert_int_equal(act_chain_depth(), 0);
	/* and the lock of L was released on every path */
	assert_int_equal(call(f->l, T_ECHO, 3, &v, sizeof(v)), sizeof(v));
	assert_int_equal(v, 3);
}

/* Permissive: P/nest -> L -> P/echo re-enters P (another type) and runs;
 * P/nest -> L -> P/nest is still refused. */
static void permissive_reentry_of_private(void **state)
{
	struct fx *f = *state;
	int runs;

	act_set_cycle_policy(ACT_CYCLE_PERMISSIVE);
	f->sp.next = f->l;
	f->sp.next_type = T_NEST;
	f->sl.next = f->p;
	f->sl.next_type = T_ECHO;
	runs = f->sp.runs;
	assert_int_equal(call(f->p, T_NEST, 0, NULL, 0), 0);
	assert_int_equal(f->sl.next_rc, 0);
	assert_int_equal(f->sp.runs, runs + 2);
	assert_ptr_equal(f->sp.seen_sender, f->l);
	assert_int_equal(f->sp.seen_depth, 3);

	f->sl.next_type = T_NEST;
	f->sp.next_rc = 1;
	assert_int_equal(call(f->p, T_NEST, 0, NULL, 0), 0);
	assert_int_equal(f->sl.next_rc, -ELOOP);
	/* a per-call override forces the conservative key on the same route */
	f->sl.next_type = T_ECHO;
	f->sl.next_flags = ACT_CALL_CONSERVATIVE;
	assert_int_equal(call(f->p, T_NEST, 0, NULL, 0), 0);
	assert_int_equal(f->sl.next_rc, -ELOOP);
}

/* The chain bound applies on the fast path too: ACT_CHAIN_MAX + 1 distinct
 * private actors, each forwarding to the next; the last call is refused. */
#define DEEP (ACT_CHAIN_MAX + 1)
static struct act_actor *deep[DEEP];
static int deep_index[DEEP];
static int deep_rc[DEEP];

static void h_deep(struct act_actor *self, void *state, struct act_msg *m)
{
	int i = *(int *)state;

	(void)self;
	(void)m;
	assert_int_equal(act_chain_depth(), (unsigned)i + 1);
	if (i + 1 >= DEEP)
		return;
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_DEEP, sizeof(int));
	deep_rc[i] = act_fast_send(deep[i + 1], &req.hdr, NULL, 0);
}

static void chain_bound_on_private_path(void **state)
{
	struct fx *f = *state;
	static act_handler_fn h[T_COUNT];
	struct act_chain_entry c[DEEP + 1];
	int i;

	h[T_DEEP] = h_deep;
	for (i = 0; i < DEEP; i++) {
		deep_index[i] = i;
		deep_rc[i] = 1;
		deep[i] = fx_actor("deep", f->g, h, T_COUNT, &deep_index[i], true);
	}
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_DEEP, sizeof(int));
	assert_int_equal(act_fast_send(deep[0], &req.hdr, NULL, 0), 0);
	for (i = 0; i < ACT_CHAIN_MAX - 1; i++)
		assert_int_equal(deep_rc[i], 0);
	assert_int_equal(deep_rc[ACT_CHAIN_MAX - 1], -ELOOP); /* depth 32 calls a 33rd */
	assert_int_equal(act_last_cycle(c, DEEP + 1), ACT_CHAIN_MAX + 1);
	assert_ptr_equal(c[0].actor, deep[ACT_CHAIN_MAX]);
	assert_int_equal(act_chain_depth(), 0);
	for (i = 0; i < DEEP; i++) {
		act_actor_stop(deep[i]);
		act_actor_destroy(deep[i]);
	}
}

static void *foreign_thread(void *arg)
{
	struct fx *f = arg;
	ACT_STACK_MSG(req, int);

	act_msg_init(&req.hdr, T_ECHO, 0);
	assert_int_equal(act_fast_send(f->p, &req.hdr, NULL, 0), -EPERM);
	assert_int_equal(act_fast_send_spin(f->p, &req.hdr, NULL, 0), -EPERM);
	assert_int_equal(act_fast_send_x(f->p, &req.hdr, NULL, 0), -EPERM);
	assert_int_equal(act_fast_send_opt(f->p, &req.hdr, NULL, 0, ACT_WAIT_ADAPTIVE, 0), -EPERM);
	assert_false(act_msg_replied(&req.hdr));
	/* the lockable member is open to any thread */
	assert_int_equal(act_fast_send(f->l, &req.hdr, NULL, 0), 0);
	return NULL;
}

/* Only the group's thread may call a private member, whatever the member. */
static void foreign_thread_gets_eperm(void **state)
{
	struct fx *f = *state;
	struct act_actor_stats st;
	int runs = f->sp.runs;

	fx_on_thread(foreign_thread, f);
	assert_int_equal(f->sp.runs, runs);
	act_actor_stats(f->p, &st);
	assert_int_equal(st.sync_completions, 0);
	/* and an unbound group's private member refuses everyone */
	{
		struct act_group *g2 = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 8);
		struct st s2 = {0};
		struct act_actor *p2 = fx_actor("P2", g2, handlers, T_COUNT, &s2, true);

		assert_int_equal(call(p2, T_ECHO, 0, NULL, 0), -EPERM);
		assert_int_equal(s2.runs, 0);
		act_actor_stop(p2);
		act_actor_destroy(p2);
		act_group_destroy(g2);
	}
}

/* Errors a fast path must not skip: stopped receiver, missing handler. */
static void shutdown_and_missing_handler(void **state)
{
	struct fx *f = *state;
	int v;

	assert_int_equal(call(f->p, T_DEEP, 0, NULL, 0), -ENOTSUP); /* NULL handler */
	assert_int_equal(call(f->p, T_COUNT, 0, NULL, 0), -ENOTSUP); /* out of range */
	assert_int_equal(call(f->l, T_DEEP, 0, NULL, 0), -ENOTSUP);
	act_actor_stop(f->p);
	act_actor_stop(f->l);
	assert_int_equal(call(f->p, T_ECHO, 0, NULL, 0), -ESHUTDOWN);
	assert_int_equal(call(f->l, T_ECHO, 0, NULL, 0), -ESHUTDOWN);
	assert_int_equal(act_actor_start(f->p), 0);
	assert_int_equal(act_actor_start(f->l), 0);
	assert_int_equal(call(f->p, T_TWICE, 0, &v, sizeof(v)), sizeof(v));
	assert_int_equal(call(f->l, T_TWICE, 0, &v, sizeof(v)), sizeof(v));
}

/* A private actor's handler run from the mailbox calls private peers on the
 * fast path; the asynchronous reply of the peer's own mailbox message still
 * goes to the sender's mailbox. */
static void private_from_mailbox_delivery(void **state)
{
	struct fx *f = *state;
	int v = 9;

	f->sp.next = f->q;
	f->sp.next_type = T_ECHO;
	f->sp.next_flags = 0;
	f->sq.seen_sender = NULL;
	assert_int_equal(act_send_copy(f->p, T_NEST, &v, sizeof(v)), 0);
	assert_int_equal(act_group_step(f->g, 1), 1);
	assert_int_equal(f->sp.next_rc, 0);
	assert_ptr_equal(f->sq.seen_sender, f->p);
	assert_int_equal(f->sq.seen_depth, 2);
	assert_int_equal(act_chain_depth(), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(private_reply_and_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(private_reply_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(cycle_through_private, setup, teardown),
		cmocka_unit_test_setup_teardown(permissive_reentry_of_private, setup, teardown),
		cmocka_unit_test_setup_teardown(chain_bound_on_private_path, setup, teardown),
		cmocka_unit_test_setup_teardown(foreign_thread_gets_eperm, setup, teardown),
		cmocka_unit_test_setup_teardown(shutdown_and_missing_handler, setup, teardown),
		cmocka_unit_test_setup_teardown(private_from_mailbox_delivery, setup, teardown),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
