/* SPDX-License-Identifier: BSD-3-Clause
 * Per-thread cycle detection before any lock is taken (DESIGN 2).
 */
#include "act_fixture.h"

/* Message types. Each handler forwards to the next hop of a route. */
enum { T_FOO, T_BAR, T_COMPUTE, T_VALIDATE, T_VALIDATED, T_COUNT };

#define FX_VOID (1u << 8) /* forward with act_fast_send_void */

struct hop {
	struct act_actor *to;
	uint32_t type;
	unsigned flags; /* per-call policy */
};

struct st {
	struct hop next[T_COUNT]; /* where each type forwards, if anywhere */
	int rc[T_COUNT];          /* rc of the forward */
	unsigned depth_after[T_COUNT];
	int probe_rc[T_COUNT];    /* fast_send_x to an unrelated actor after the forward */
	struct act_actor *probe;
	int ran[T_COUNT];
};

static void h_any(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct hop *h = &s->next[m->type];

	(void)self;
	s->ran[m->type]++;
	if (h->to == NULL)
		return;
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, h->type, sizeof(int));
	if (h->flags & FX_VOID)
		s->rc[m->type] = act_fast_send_void(h->to, &req.hdr);
	else
		s->rc[m->type] = act_fast_send_opt(h->to, &req.hdr, NULL, 0, ACT_WAIT_SLEEP,
						   h->flags);
	s->depth_after[m->type] = act_chain_depth();
	if (s->probe != NULL) {
		act_msg_init(&req.hdr, T_FOO, sizeof(int));
		s->probe_rc[m->type] = act_fast_send_x(s->probe, &req.hdr, NULL, 0);
	}
}

static void h_probe(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)state;
	(void)m;
}

static const act_handler_fn handlers[T_COUNT] = {h_any, h_any, h_any, h_any, h_any};
static const act_handler_fn probe_handlers[1] = {h_probe};

struct fx {
	struct act_group *g;
	struct st sa, sb;
	struct act_actor *a, *b, *probe;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
	f->g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	f->a = fx_actor("A", f->g, handlers, T_COUNT, &f->sa, false);
	f->b = fx_actor("B", f->g, handlers, T_COUNT, &f->sb, false);
	f->probe = fx_actor("P", f->g, probe_handlers, 1, NULL, false);
	f->sa.probe = f->probe;
	f->sb.probe = f->probe;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	act_actor_stop(f->a);
	act_actor_stop(f->b);
	act_actor_stop(f->probe);
	act_actor_destroy(f->a);
	act_actor_destroy(f->b);
	act_actor_destroy(f->probe);
	act_group_destroy(f->g);
	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
	free(f);
	return 0;
}

static int call(struct act_actor *to, uint32_t type)
{
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, type, sizeof(int));
	return act_fast_send(to, &req.hdr, NULL, 0);
}

/* Both actors free, from another thread's point of view. */
static void *check_unlocked(void *arg)
{
	struct fx *f = arg;
	ACT_STACK_MSG(req, int);

	act_msg_init(&req.hdr, T_BAR, sizeof(int)); /* B/bar forwards nowhere */
	f->sb.next[T_BAR].to = NULL;
	assert_int_equal(act_fast_send_x(f->b, &req.hdr, NULL, 0), 0);
	f->sa.next[T_BAR].to = NULL;
	assert_int_equal(act_fast_send_x(f->a, &req.hdr, NULL, 0), 0);
	return NULL;
}

static void conservative_catches_a_b_a(void **state)
{
	struct fx *f = *state;
	struct act_chain_entry chain[8];
	struct act_actor_stats st;

	f->sa.next[T_FOO] = (struct hop){f->b, T_BAR, 0};
	f->sb.next[T_BAR] = (struct hop){f->a, T_VALIDATED, 0};
	assert_int_equal(call(f->a, T_FOO), 0);
	assert_int_equal(f->sb.rc[T_BAR], -ELOOP);
	assert_int_equal(f->sa.rc[T_FOO], 0);
	assert_int_equal(f->sa.ran[T_VALIDATED], 0); /* the handler never ran */
	/* the chain: target, then each actor and type in order */
	assert_int_equal(act_last_cycle(chain, 8), 3);
	assert_ptr_equal(chain[0].actor, f->a);
	assert_int_equal(chain[0].type, T_VALIDATED);
	assert_ptr_equal(chain[1].actor, f->a);
	assert_int_equal(chain[1].type, T_FOO);
	assert_ptr_equal(chain[2].actor, f->b);
	assert_int_equal(chain[2].type, T_BAR);
	/* detection changed nothing on this thread, took no lock */
	assert_int_equal(f->sb.depth_after[T_BAR], 2);
	assert_int_equal(f->sb.probe_rc[T_BAR], 0);
	assert_int_equal(act_chain_depth(), 0);
	act_actor_stats(f->a, &st);
	assert_int_equal(st.cycles, 1);
	fx_on_thread(check_unlocked, f);
}

static void permissive_admits_callback(void **state)
{
	struct fx *f = *state;

	act_set_cycle_policy(ACT_CYCLE_PERMISSIVE);
	f->sa.next[T_COMPUTE] = (struct hop){f->b, T_VALIDATE, 0};
	f->sb.next[T_VALIDATE] = (struct hop){f->a, T_VALIDATED, 0};
	assert_int_equal(call(f->a, T_COMPUTE), 0);
	assert_int_equal(f->sb.rc[T_VALIDATE], 0);
	assert_int_equal(f->sa.ran[T_VALIDATED], 1);
	fx_on_thread(check_unlocked, f);
}

static void permissive_catches_same_type(void **state)
{
	struct fx *f = *state;
	struct act_chain_entry chain[8];

	act_set_cycle_policy(ACT_CYCLE_PERMISSIVE);
	f->sa.next[T_FOO] = (struct hop){f->b, T_BAR, 0};
	f->sb.next[T_BAR] = (struct hop){f->a, T_FOO, 0};
	assert_int_equal(call(f->a, T_FOO), 0);
	assert_int_equal(f->sb.rc[T_BAR], -ELOOP);
	assert_int_equal(f->sa.ran[T_FOO], 1);
	assert_int_equal(act_last_cycle(chain, 8), 3);
	assert_ptr_equal(chain[0].actor, f->a);
	assert_int_equal(chain[0].type, T_FOO);
	fx_on_thread(check_unlocked, f);
}

/* Policy per actor beats the system; per call beats the actor. */
static void policy_precedence(void **state)
{
	struct fx *f = *state;

	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
	f->sa.next[T_COMPUTE] = (struct hop){f->b, T_VALIDATE, 0};
	f->sb.next[T_VALIDATE] = (struct hop){f->a, T_VALIDATED, 0};
	assert_int_equal(call(f->a, T_COMPUTE), 0);
	assert_int_equal(f->sb.rc[T_VALIDATE], -ELOOP); /* system: conservative */

	act_actor_set_cycle_policy(f->a, ACT_CYCLE_PERMISSIVE);
	assert_int_equal(call(f->a, T_COMPUTE), 0);
	assert_int_equal(f->sb.rc[T_VALIDATE], 0); /* actor: permissive */

	f->sb.next[T_VALIDATE].flags = ACT_CALL_CONSERVATIVE;
	assert_int_equal(call(f->a, T_COMPUTE), 0);
	assert_int_equal(f->sb.rc[T_VALIDATE], -ELOOP); /* call: conservative */

	act_actor_set_cycle_policy(f->a, ACT_CYCLE_CONSERVATIVE);
	f->sb.next[T_VALIDATE].flags = ACT_CALL_PERMISSIVE;
	assert_int_equal(call(f->a, T_COMPUTE), 0);
	assert_int_equal(f->sb.rc[T_VALIDATE], 0); /* call: permissive */
	assert_int_equal(f->sa.ran[T_VALIDATED], 2);
	fx_on_thread(check_unlocked, f);
}

/* A self-call, and fast_send_void falling back to the mailbox on a cycle. */
static void self_call_and_void_fallback(void **state)
{
	struct fx *f = *state;
	struct act_actor_stats st;

	f->sa.next[T_FOO] = (struct hop){f->a, T_BAR, 0};
	assert_int_equal(call(f->a, T_FOO), 0);
	assert_int_equal(f->sa.rc[T_FOO], -ELOOP);
	assert_int_equal(f->sa.ran[T_BAR], 0);

	f->sa.next[T_FOO] = (struct hop){f->b, T_BAR, 0};
	f->sb.next[T_BAR] = (struct hop){f->a, T_VALIDATED, FX_VOID};
	assert_int_equal(call(f->a, T_FOO), 0);
	assert_int_equal(f->sb.rc[T_BAR], 1); /* enqueued */
	assert_int_equal(f->sa.ran[T_VALIDATED], 0);
	assert_int_equal(act_group_drain(f->g), 1);
	assert_int_equal(f->sa.ran[T_VALIDATED], 1);
	act_actor_stats(f->a, &st);
	assert_int_equal(st.async_fallbacks, 1);
	assert_int_equal(st.async_runs, 1);
}

/* A chain deeper than ACT_CHAIN_MAX is refused like a cycle. */
struct link {
	struct act_actor *next;
	int rc;
};

static void h_link(struct act_actor *self, void *state, struct act_msg *m)
{
	struct link *l = state;

	(void)self;
	if (l->next == NULL)
		return;
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, m->type, sizeof(int));
	l->rc = act_fast_send(l->next, &req.hdr, NULL, 0);
}

static void chain_depth_is_bounded(void **state)
{
	static const act_handler_fn hl[1] = {h_link};
	struct fx *f = *state;
	struct act_actor *chain[ACT_CHAIN_MAX + 1];
	struct link links[ACT_CHAIN_MAX + 1] = {0};
	int i;

	for (i = ACT_CHAIN_MAX; i >= 0; i--) {
		links[i].next = i == ACT_CHAIN_MAX ? NULL : chain[i + 1];
		chain[i] = fx_actor("L", f->g, hl, 1, &links[i], false);
	}
	assert_int_equal(call(chain[0], 0), 0);
	/* calls 0..31 run (depth 32); the 33rd is refused */
	assert_int_equal(links[ACT_CHAIN_MAX - 2].rc, 0);
	assert_int_equal(links[ACT_CHAIN_MAX - 1].rc, -ELOOP);
	for (i = 0; i <= ACT_CHAIN_MAX; i++) {
		act_actor_stop(chain[i]);
		act_actor_destroy(chain[i]);
	}
}

/*
 * The O(1) chain check (lib/actor/actor.c, Cycle detection): each push
 * records its chain index in the actor, and a caller trusts only its own
 * chain at that index; a hit is confirmed by scanning the chain. The cases
 * fail if an index is not written on a push of the fast path (the cycle
 * closes at index 3, never at the zeroed field's 0), or not put back after
 * a permissive re-entry (the outer entry must be caught again), or if a
 * stale index inside the chain were taken for a cycle without that scan.
 * (An index trusted without comparing the actor only sends the call to the
 * general path, whose scan finds no cycle: slower, not wrong.)
 * Every case runs with lockable and with group-private links: for a
 * private actor a missed cycle runs its handler re-entrantly.
 */
#define RING 6

struct ring {
	struct act_group *g;
	struct act_actor *l[RING];
	struct link links[RING];
};

static void ring_make(struct ring *r, bool priv)
{
	static const act_handler_fn hl[1] = {h_link};
	int i;

	memset(r, 0, sizeof(*r));
	r->g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	if (priv)
		assert_int_equal(act_group_bind(r->g), 0);
	for (i = 0; i < RING; i++)
		r->l[i] = fx_actor("R", r->g, hl, 1, &r->links[i], priv);
}

static void ring_free(struct ring *r)
{
	int i;

	for (i = 0; i < RING; i++) {
		act_actor_stop(r->l[i]);
		act_actor_destroy(r->l[i]);
	}
	act_group_destroy(r->g);
}

/* R0 -> R1 -> ... -> R5 -> R3: the cycle closes at chain index 3. */
static void deep_cycle(bool priv)
{
	struct act_chain_entry chain[RING + 2];
	struct ring r;
	int i;

	ring_make(&r, priv);
	/* a first, shallow visit leaves R3's index at 0 */
	assert_int_equal(call(r.l[3], 0), 0);
	for (i = 0; i < RING - 1; i++)
		r.links[i].next = r.l[i + 1];
	r.links[RING - 1].next = r.l[3];
	assert_int_equal(call(r.l[0], 0), 0);
	assert_int_equal(r.links[RING - 1].rc, -ELOOP);
	for (i = 0; i < RING - 1; i++)
		assert_int_equal(r.links[i].rc, 0);
	assert_int_equal(act_last_cycle(chain, RING + 2), RING + 1);
	assert_ptr_equal(chain[0].actor, r.l[3]);
	assert_ptr_equal(chain[4].actor, r.l[3]);
	assert_int_equal(act_chain_depth(), 0);
	ring_free(&r);
}

static void cycle_found_deep_in_chain(void **state)
{
	deep_cycle(*(const bool *)*state);
}

/* A stale index that falls inside the chain on another actor is a miss. */
static void stale_index(bool priv)
{
	struct ring r;

	ring_make(&r, priv);
	r.links[0].next = r.l[1]; /* R0 -> R1: R1's index is 1 */
	assert_int_equal(call(r.l[0], 0), 0);
	r.links[0].next = NULL;
	r.links[3].next = r.l[4]; /* R3 -> R4 -> R1: index 1 holds R4 */
	r.links[4].next = r.l[1];
	r.links[1].next = NULL;
	r.links[4].rc = 1;
	assert_int_equal(call(r.l[3], 0), 0);
	assert_int_equal(r.links[3].rc, 0);
	assert_int_equal(r.links[4].rc, 0); /* R1 ran: no cycle */
	ring_free(&r);
}

static void stale_index_is_a_miss(void **state)
{
	stale_index(*(const bool *)*state);
}

/*
 * Permissive: A/compute -> B/validate -> A/validated (re-entry, A pushed
 * again at index 2), and then, from B still, A/compute again: the outer
 * entry at index 0 must still be found.
 */
struct reenter {
	struct act_actor *a, *b;
	int rc_validated, rc_compute;
	int ran_validated, ran_compute;
};

static void h_reenter(struct act_actor *self, void *state, struct act_msg *m)
{
	struct reenter *x = *(struct reenter **)state;

	ACT_STACK_MSG(req, int);
	if (self == x->a && m->type == T_COMPUTE) {
		x->ran_compute++;
		act_msg_init(&req.hdr, T_VALIDATE, sizeof(int));
		assert_int_equal(act_fast_send(x->b, &req.hdr, NULL, 0), 0);
	} else if (self == x->a && m->type == T_VALIDATED) {
		x->ran_validated++;
	} else if (self == x->b && m->type == T_VALIDATE) {
		act_msg_init(&req.hdr, T_VALIDATED, sizeof(int));
		x->rc_validated = act_fast_send(x->a, &req.hdr, NULL, 0);
		act_msg_init(&req.hdr, T_COMPUTE, sizeof(int));
		x->rc_compute = act_fast_send(x->a, &req.hdr, NULL, 0);
	}
}

static void reentry(bool priv)
{
	static const act_handler_fn hr[T_COUNT] = {h_reenter, h_reenter, h_reenter, h_reenter,
						   h_reenter};
	struct reenter x = {0};
	struct reenter *px = &x;
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);

	act_set_cycle_policy(ACT_CYCLE_PERMISSIVE);
	if (priv)
		assert_int_equal(act_group_bind(g), 0);
	x.a = fx_actor("A", g, hr, T_COUNT, &px, priv);
	x.b = fx_actor("B", g, hr, T_COUNT, &px, priv);
	assert_int_equal(call(x.a, T_COMPUTE), 0);
	assert_int_equal(x.rc_validated, 0);
	assert_int_equal(x.ran_validated, 1);
	assert_int_equal(x.rc_compute, -ELOOP);
	assert_int_equal(x.ran_compute, 1);
	assert_int_equal(act_chain_depth(), 0);
	act_actor_stop(x.a);
	act_actor_stop(x.b);
	act_actor_destroy(x.a);
	act_actor_destroy(x.b);
	act_group_destroy(g);
	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
}

static void permissive_reentry_keeps_outer_entry(void **state)
{
	reentry(*(const bool *)*state);
}

/* prestates: the links are lockable, or private to a group this thread runs */
static bool lockable = false, group_private = true;

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(conservative_catches_a_b_a, setup, teardown),
		cmocka_unit_test_setup_teardown(permissive_admits_callback, setup, teardown),
		cmocka_unit_test_setup_teardown(permissive_catches_same_type, setup, teardown),
		cmocka_unit_test_setup_teardown(policy_precedence, setup, teardown),
		cmocka_unit_test_setup_teardown(self_call_and_void_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(chain_depth_is_bounded, setup, teardown),
		cmocka_unit_test_prestate(cycle_found_deep_in_chain, &lockable),
		cmocka_unit_test_prestate(cycle_found_deep_in_chain, &group_private),
		cmocka_unit_test_prestate(stale_index_is_a_miss, &lockable),
		cmocka_unit_test_prestate(stale_index_is_a_miss, &group_private),
		cmocka_unit_test_prestate(permissive_reentry_keeps_outer_entry, &lockable),
		cmocka_unit_test_prestate(permissive_reentry_keeps_outer_entry, &group_private),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
