/* SPDX-License-Identifier: BSD-3-Clause
 * Declared fast_send edges (act_group_edge(), act_fast_send_edge(); issue 15
 * item 2): the declared edges of a group form a DAG, checked when declared
 * (-ELOOP) and sealed once the group ran (-EBUSY); a call along a declared
 * edge is a fast_send the handler cannot tell from act_fast_send() (reply
 * slot, at-most-once, sync-only reply, context, counters); a call along an
 * undeclared edge is refused like a cycle and counted; the call chain stays
 * exact, so a dynamic fast_send inside an edge callee finds every actor held
 * along the edges, and so does an edge call after a dynamic one; a lockable
 * edge target keeps exclusive access against another thread (plain and
 * lock_bias); a group-private target called from a lockable caller on
 * another thread gets -EPERM; the edge path allocates nothing.
 */
#include <sched.h>

#include "act_fixture.h"
#include "actor_pvt.h"

#ifdef TW_WRAP_MALLOC
#include "tw_alloc_count.h"
#define MALLOCS() tw_allocations
#else
#define MALLOCS() 0ul
#endif

enum {
	T_ECHO,    /* record what the handler sees, reply the payload */
	T_TWICE,   /* reply_sync, then reply again */
	T_BIG,     /* a reply larger than any buffer here */
	T_EDGE,    /* act_fast_send_edge(next, next_type) */
	T_DYN,     /* act_fast_send(next, next_type) */
	T_LOOP,    /* T_EDGE edge_loops times (the contention test) */
	T_COUNT
};

/* What a handler can observe about its message (receiver transparency). */
struct view {
	uint32_t type, size;
	struct act_actor *sender, *dest, *self;
	uint32_t qdepth;
	uint8_t was_empty;
	uint64_t tsc;
	bool pooled;
	unsigned depth;
	int payload;
};

struct st {
	struct view v;
	int runs;
	int reply_rc, second_rc;
	/* T_EDGE / T_DYN / T_LOOP */
	struct act_actor *next;
	uint32_t next_type;
	unsigned next_flags;
	int next_rc;
	int next_reply;
	unsigned loops;
	/* exclusive access */
	_Atomic int inside;
	_Atomic uint64_t overlaps;
	uint64_t work;
};

static void see(struct st *s, struct act_actor *self, const struct act_msg *m)
{
	s->runs++;
	s->v = (struct view){
		.type = m->type,
		.size = m->size,
		.sender = m->sender,
		.dest = m->dest,
		.self = act_self(),
		.qdepth = m->qdepth,
		.was_empty = m->mailbox_was_empty,
		.tsc = m->enqueue_tsc,
		.pooled = act_msg_is_pooled(m),
		.depth = act_chain_depth(),
		.payload = m->size >= sizeof(int) ? *ACT_PAYLOAD(m, const int) : -1,
	};
	(void)self;
}

static void view_equal(const struct view *a, const struct view *b)
{
	assert_int_equal(a->type, b->type);
	assert_int_equal(a->size, b->size);
	assert_ptr_equal(a->sender, b->sender);
	assert_ptr_equal(a->dest, b->dest);
	assert_ptr_equal(a->self, b->self);
	assert_int_equal(a->qdepth, b->qdepth);
	assert_int_equal(a->was_empty, b->was_empty);
	assert_int_equal(a->tsc, b->tsc);
	assert_int_equal(a->pooled, b->pooled);
	assert_int_equal(a->depth, b->depth);
	assert_int_equal(a->payload, b->payload);
}

static void h_echo(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	int v;

	if (atomic_fetch_add(&s->inside, 1) != 0)
		atomic_fetch_add(&s->overlaps, 1);
	see(s, self, m);
	v = s->v.payload + 1;
	s->work = s->work * 31 + (uint64_t)v;
	s->reply_rc = act_reply(m, T_ECHO, &v, sizeof(v));
	atomic_fetch_sub(&s->inside, 1);
}

static void h_twice(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	int v = 5;

	see(s, self, m);
	s->reply_rc = act_reply_sync(m, T_TWICE, &v, sizeof(v));
	s->second_rc = act_reply(m, T_TWICE, &v, sizeof(v));
}

static void h_big(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	char big[64] = {0};

	see(s, self, m);
	s->reply_rc = act_reply(m, T_BIG, big, sizeof(big));
}

static int forward(struct st *s, bool edge)
{
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, s->next_type, sizeof(int));
	req.body = 41;
	s->next_reply = 0;
	if (edge)
		return act_fast_send_edge(s->next, &req.hdr, &s->next_reply,
					  sizeof(s->next_reply));
	return act_fast_send_opt(s->next, &req.hdr, &s->next_reply, sizeof(s->next_reply),
				 ACT_WAIT_SLEEP, s->next_flags);
}

static void h_edge(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	see(s, self, m);
	s->next_rc = forward(s, true);
}

static void h_dyn(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	see(s, self, m);
	s->next_rc = forward(s, false);
}

static void h_loop(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	unsigned i;

	see(s, self, m);
	s->next_rc = 0;
	for (i = 0; i < s->loops; i++) {
		int rc = forward(s, true);

		if (rc < 0 && s->next_rc == 0)
			s->next_rc = rc;
	}
}

static const act_handler_fn handlers[T_COUNT] = {h_echo, h_twice, h_big, h_edge, h_dyn, h_loop};

/* A group bound to this thread after @edges; actors a..e, @private mask. */
#define N_ACT 5
struct fx {
	struct act_group *g;
	struct act_actor *a[N_ACT];
	struct st s[N_ACT];
};

static struct act_actor *make(struct act_group *g, struct st *s, bool private_actor, bool bias)
{
	struct act_actor_opts o = {
		.name = "edge",
		.handlers = handlers,
		.handler_count = T_COUNT,
		.state = s,
		.group = g,
		.group_private = private_actor,
		.lock_bias = bias,
	};
	struct act_actor *a = act_actor_create(&o);

	assert_non_null(a);
	assert_int_equal(act_actor_start(a), 0);
	return a;
}

/* Actors 0..N_ACT-1; those in @private_mask group-private, @bias_mask lock_bias. */
static struct fx *fx_open(unsigned private_mask, unsigned bias_mask)
{
	struct fx *f = calloc(1, sizeof(*f));
	unsigned i;

	assert_non_null(f);
	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
	f->g = fx_group(ACT_QUEUE_LOCKFREE, ACT_OVERFLOW_FAIL, 64);
	for (i = 0; i < N_ACT; i++)
		f->a[i] = make(f->g, &f->s[i], (private_mask >> i) & 1, (bias_mask >> i) & 1);
	return f;
}

static void fx_close(struct fx *f)
{
	unsigned i;

	act_group_drain(f->g);
	for (i = 0; i < N_ACT; i++) {
		act_actor_stop(f->a[i]);
		act_actor_destroy(f->a[i]);
	}
	act_group_destroy(f->g);
	act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE);
	free(f);
}

/* Actor @i's T_EDGE / T_DYN / T_LOOP forwards to actor @j with @type. */
static void route(struct fx *f, unsigned i, unsigned j, uint32_t type)
{
	f->s[i].next = f->a[j];
	f->s[i].next_type = type;
}

static void edge(struct fx *f, unsigned from, unsigned to)
{
	assert_int_equal(act_group_edge(f->g, f->a[from], f->a[to]), 0);
}

/* An edge or a route: actor @from -> actor @to (a route: with @type). */
struct hop {
	unsigned from, to;
	uint32_t type;
};

/* Declare @edges, bind the group to this thread, set three routes. */
static void wire(struct fx *f, const struct hop edges[2], const struct hop routes[3])
{
	unsigned i;

	for (i = 0; i < 2; i++)
		edge(f, edges[i].from, edges[i].to);
	assert_int_equal(act_group_bind(f->g), 0);
	for (i = 0; i < 3; i++)
		route(f, routes[i].from, routes[i].to, routes[i].type);
}

/* A dynamic call into actor @i from no handler (the root of the chain). */
static int call(struct fx *f, unsigned i, uint32_t type, int *reply)
{
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, type, sizeof(int));
	req.body = 7;
	return act_fast_send(f->a[i], &req.hdr, reply, reply != NULL ? sizeof(*reply) : 0);
}

static uint64_t cycles_of(struct act_actor *a)
{
	struct act_actor_stats st;

	act_actor_stats(a, &st);
	return st.cycles;
}

static uint64_t sync_of(struct act_actor *a)
{
	struct act_actor_stats st;

	act_actor_stats(a, &st);
	return st.sync_completions;
}

/* ------------------------------------------------------------------------ */

/* A -> B -> C declared; C -> A, B -> A, A -> A would close cycles. */
static void cyclic_declaration_refused(void **unused)
{
	struct fx *f = fx_open(0x1f, 0);

	(void)unused;
	edge(f, 0, 1);
	edge(f, 1, 2);
	assert_int_equal(act_group_edge(f->g, f->a[2], f->a[0]), -ELOOP);
	assert_int_equal(act_group_edge(f->g, f->a[1], f->a[0]), -ELOOP);
	assert_int_equal(act_group_edge(f->g, f->a[2], f->a[1]), -ELOOP);
	assert_int_equal(act_group_edge(f->g, f->a[0], f->a[0]), -ELOOP);
	/* a shortcut and a diamond keep it acyclic; a repeat is harmless */
	edge(f, 0, 2);
	edge(f, 0, 3);
	edge(f, 3, 2);
	edge(f, 0, 1);
	assert_int_equal(act_group_edge(f->g, f->a[2], f->a[3]), -ELOOP);
	/* a member in no edge yet: no path through it */
	edge(f, 4, 0);
	assert_int_equal(act_group_edge(f->g, f->a[2], f->a[4]), -ELOOP);
	assert_int_equal(act_group_bind(f->g), 0);
	/* the refused edges were not declared: C -> A along an "edge" is refused */
	route(f, 2, 0, T_ECHO);
	f->s[0].runs = 0;
	assert_int_equal(call(f, 2, T_EDGE, NULL), 0);
	assert_int_equal(f->s[2].next_rc, -ELOOP);
	assert_int_equal(f->s[0].runs, 0);
	/* and the declared ones work */
	route(f, 0, 2, T_ECHO);
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, sizeof(int));
	assert_int_equal(f->s[0].next_reply, 42);
	fx_close(f);
}

/* Declaring after the group ran: -EBUSY, whichever way it first ran. */
static void declaration_after_run_refused(void **unused)
{
	struct fx *f;
	struct act_group *g2;
	struct act_actor *x;
	struct st sx = {0};

	(void)unused;
	/* bound */
	f = fx_open(0x1f, 0);
	edge(f, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	assert_int_equal(act_group_edge(f->g, f->a[1], f->a[2]), -EBUSY);
	assert_int_equal(act_group_edge(f->g, f->a[0], f->a[1]), -EBUSY);
	fx_close(f);
	/* stepped */
	f = fx_open(0x1f, 0);
	assert_int_equal(act_group_step(f->g, 0), 0);
	assert_int_equal(act_group_edge(f->g, f->a[0], f->a[1]), -EBUSY);
	fx_close(f);
	/* started, and still after a stop */
	f = fx_open(0, 0);
	assert_int_equal(act_group_start(f->g), 0);
	assert_int_equal(act_group_edge(f->g, f->a[0], f->a[1]), -EBUSY);
	assert_int_equal(act_group_stop(f->g), 0);
	assert_int_equal(act_group_edge(f->g, f->a[0], f->a[1]), -EBUSY);
	fx_close(f);
	/* bad arguments */
	f = fx_open(0x1f, 0);
	g2 = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 8);
	x = make(g2, &sx, false, false);
	assert_int_equal(act_group_edge(f->g, f->a[0], x), -EINVAL);
	assert_int_equal(act_group_edge(f->g, x, f->a[0]), -EINVAL);
	assert_int_equal(act_group_edge(g2, f->a[0], f->a[1]), -EINVAL);
	assert_int_equal(act_group_edge(NULL, f->a[0], f->a[1]), -EINVAL);
	assert_int_equal(act_group_edge(f->g, NULL, f->a[1]), -EINVAL);
	act_actor_stop(x);
	act_actor_destroy(x);
	act_group_destroy(g2);
	fx_close(f);
}

/* At most 64 members of a group take part in edges. */
static void edge_index_bound(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 8);
	struct act_actor *a[66];
	struct st s = {0};
	unsigned i;

	(void)unused;
	for (i = 0; i < 66; i++)
		a[i] = make(g, &s, true, false);
	for (i = 1; i < 64; i++)
		assert_int_equal(act_group_edge(g, a[0], a[i]), 0);
	assert_int_equal(act_group_edge(g, a[0], a[64]), -ENOSPC);
	assert_int_equal(act_group_edge(g, a[64], a[65]), -ENOSPC);
	/* between members that have their bits: still fine */
	assert_int_equal(act_group_edge(g, a[1], a[2]), 0);
	for (i = 0; i < 66; i++) {
		act_actor_stop(a[i]);
		act_actor_destroy(a[i]);
	}
	act_group_destroy(g);
}

/*
 * The handler cannot tell an edge call from act_fast_send(): the same view,
 * the reply into the caller's slot, at most once, sync-only reply, the
 * reply's size check, the counters.
 */
static void edge_call_is_a_fast_send(void **unused)
{
	struct fx *f = fx_open(0x1f, 0);
	struct view by_edge, by_dyn;
	uint64_t before;

	(void)unused;
	edge(f, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	route(f, 0, 1, T_ECHO);
	before = sync_of(f->a[1]);
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, sizeof(int));
	assert_int_equal(f->s[0].next_reply, 42);
	assert_int_equal(f->s[1].reply_rc, 0);
	by_edge = f->s[1].v;
	assert_int_equal(sync_of(f->a[1]), before + 1);
	assert_int_equal(call(f, 0, T_DYN, NULL), 0);
	assert_int_equal(f->s[0].next_rc, sizeof(int));
	by_dyn = f->s[1].v;
	view_equal(&by_edge, &by_dyn);
	assert_ptr_equal(by_edge.sender, f->a[0]);
	assert_ptr_equal(by_edge.dest, f->a[1]);
	assert_ptr_equal(by_edge.self, f->a[1]);
	assert_int_equal(by_edge.depth, 2);
	assert_int_equal(by_edge.qdepth, 0);
	assert_int_equal(by_edge.tsc, 0);
	assert_false(by_edge.pooled);
	assert_int_equal(act_chain_depth(), 0);
	/* act_reply_sync, then a second reply: -EALREADY */
	f->s[0].next_type = T_TWICE;
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, sizeof(int));
	assert_int_equal(f->s[0].next_reply, 5);
	assert_int_equal(f->s[1].reply_rc, 0);
	assert_int_equal(f->s[1].second_rc, -EALREADY);
	/* a reply that does not fit: -EMSGSIZE to both */
	f->s[0].next_type = T_BIG;
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, -EMSGSIZE);
	assert_int_equal(f->s[1].reply_rc, -EMSGSIZE);
	/* the same on a lockable target, whose lock is free afterwards */
	fx_close(f);
	f = fx_open(0x01, 0);
	edge(f, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	route(f, 0, 1, T_ECHO);
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, sizeof(int));
	assert_int_equal(f->s[0].next_reply, 42);
	assert_int_equal(f->s[1].v.type, by_edge.type);
	assert_int_equal(f->s[1].v.size, by_edge.size);
	assert_int_equal(f->s[1].v.depth, by_edge.depth);
	assert_int_equal(atomic_load(&f->a[1]->lock), 0);
	f->s[0].next_type = T_BIG;
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, -EMSGSIZE);
	assert_int_equal(atomic_load(&f->a[1]->lock), 0);
	fx_close(f);
}

/* A call along an undeclared edge, or from no handler: -ELOOP, counted,
 * recorded, nothing run. */
static void undeclared_edge_refused_and_counted(void **unused)
{
	struct fx *f = fx_open(0x0f, 0);
	struct fx *other = fx_open(0x1f, 0);
	struct act_chain_entry c[4];
	int r = 0;

	(void)unused;
	edge(f, 0, 1);
	/* in another group the same bit indices: 0 -> 1 there too */
	edge(other, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	assert_int_equal(act_group_bind(other->g), 0);
	/* 0 -> 2: not declared */
	route(f, 0, 2, T_ECHO);
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, -ELOOP);
	assert_int_equal(f->s[2].runs, 0);
	assert_int_equal(cycles_of(f->a[2]), 1);
	assert_int_equal(act_last_cycle(c, 4), 2);
	assert_ptr_equal(c[0].actor, f->a[2]);
	assert_int_equal(c[0].type, T_ECHO);
	assert_ptr_equal(c[1].actor, f->a[0]);
	/* the reverse of a declared edge */
	route(f, 1, 0, T_ECHO);
	assert_int_equal(call(f, 1, T_EDGE, NULL), 0);
	assert_int_equal(f->s[1].next_rc, -ELOOP);
	assert_int_equal(cycles_of(f->a[0]), 1);
	/* into another group whose member has the bit of a declared target */
	f->s[0].next = other->a[1];
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, -ELOOP);
	assert_int_equal(other->s[1].runs, 0);
	assert_int_equal(cycles_of(other->a[1]), 1);
	/* the lockable member 4, in no edge */
	f->s[0].next = f->a[4];
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, -ELOOP);
	assert_int_equal(f->s[4].runs, 0);
	/* from no handler at all */
	{
		ACT_STACK_MSG(req, int);
		act_msg_init(&req.hdr, T_ECHO, sizeof(int));
		assert_int_equal(act_fast_send_edge(f->a[1], &req.hdr, &r, sizeof(r)), -ELOOP);
		assert_false(act_msg_replied(&req.hdr));
	}
	assert_int_equal(f->s[1].runs, 1); /* only the T_EDGE above */
	assert_int_equal(cycles_of(f->a[1]), 1);
	assert_int_equal(act_chain_depth(), 0);
	fx_close(other);
	fx_close(f);
}

/*
 * 0 -> 1 -> 2 along edges; 2 then calls back dynamically: to 1 and to 0
 * (held along the edges) it is a cycle, with the whole chain reported.
 * Lockable members held along edges too. Permissive policy: a re-entry with
 * another type runs (the type was recorded by the edge push).
 */
static void dynamic_cycle_through_edge_held(void **unused)
{
	unsigned masks[2] = {0x1f, 0x00};
	struct act_chain_entry c[8];
	unsigned k;

	(void)unused;
	for (k = 0; k < 2; k++) {
		struct fx *f = fx_open(masks[k], 0);

		wire(f, (const struct hop[2]){{0, 1, 0}, {1, 2, 0}},
		     (const struct hop[3]){{0, 1, T_EDGE}, {1, 2, T_DYN}, {2, 1, T_ECHO}});
		f->s[1].runs = 0;
		assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
		assert_int_equal(f->s[0].next_rc, 0);
		assert_int_equal(f->s[1].next_rc, 0);
		assert_int_equal(f->s[2].next_rc, -ELOOP); /* not -EDEADLK, no hang */
		assert_int_equal(f->s[1].runs, 1);
		assert_int_equal(act_last_cycle(c, 8), 4);
		assert_ptr_equal(c[0].actor, f->a[1]);
		assert_ptr_equal(c[1].actor, f->a[0]);
		assert_ptr_equal(c[2].actor, f->a[1]);
		assert_int_equal(c[2].type, T_EDGE);
		assert_ptr_equal(c[3].actor, f->a[2]);
		/* back to the root */
		f->s[2].next = f->a[0];
		assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
		assert_int_equal(f->s[2].next_rc, -ELOOP);
		/* permissive: 2 -> 1/echo re-enters 1 (held with T_EDGE) and runs */
		f->s[2].next = f->a[1];
		f->s[2].next_flags = ACT_CALL_PERMISSIVE;
		assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
		assert_int_equal(f->s[2].next_rc, sizeof(int));
		assert_int_equal(f->s[1].runs, 4);
		/* ... but 2 -> 1/edge (the held type) is still a cycle */
		f->s[2].next_type = T_EDGE;
		assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
		assert_int_equal(f->s[2].next_rc, -ELOOP);
		assert_int_equal(act_chain_depth(), 0);
		if (k == 1) /* every lock released on every path */
			for (unsigned i = 0; i < 3; i++)
				assert_int_equal(atomic_load(&f->a[i]->lock), 0);
		fx_close(f);
	}
}

/*
 * An edge call that would re-enter an actor entered by a dynamic call: the
 * declared edges are a DAG, but a chain mixing dynamic calls need not be.
 * 0 -edge-> 1 -dyn-> 3 -edge-> 0 (3 -> 0 and 0 -> 1 make no cycle of edges).
 */
static void edge_after_dynamic_call_checks_the_chain(void **unused)
{
	struct fx *f = fx_open(0x1f, 0);

	(void)unused;
	wire(f, (const struct hop[2]){{0, 1, 0}, {3, 0, 0}},
	     (const struct hop[3]){{0, 1, T_DYN}, {1, 3, T_EDGE}, {3, 0, T_ECHO}});
	f->s[0].runs = 0;
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[1].next_rc, 0);
	assert_int_equal(f->s[3].next_rc, -ELOOP);
	assert_int_equal(f->s[0].runs, 1);
	assert_int_equal(act_chain_depth(), 0);
	fx_close(f);
}

/* A group-private target reached through a lockable caller running on
 * another thread: -EPERM, as act_fast_send(); from the group's thread it
 * runs. */
static void *foreign_call(void *arg)
{
	struct fx *f = arg;

	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	return NULL;
}

static void private_target_from_foreign_thread(void **unused)
{
	struct fx *f = fx_open(0x02, 0); /* 0 lockable, 1 private */

	(void)unused;
	edge(f, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	route(f, 0, 1, T_ECHO);
	fx_on_thread(foreign_call, f);
	assert_int_equal(f->s[0].next_rc, -EPERM);
	assert_int_equal(f->s[1].runs, 0);
	assert_int_equal(cycles_of(f->a[1]), 0);
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, sizeof(int));
	assert_int_equal(f->s[1].runs, 1);
	fx_close(f);
}

/* Errors the edge path must not skip: a stopped target, a missing handler. */
static void shutdown_and_missing_handler(void **unused)
{
	struct fx *f = fx_open(0x1f, 0);

	(void)unused;
	edge(f, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	f->s[0].next = f->a[1];
	f->s[0].next_type = T_COUNT; /* no such type */
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, -ENOTSUP);
	f->s[0].next_type = T_ECHO;
	act_actor_stop(f->a[1]);
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, -ESHUTDOWN);
	assert_int_equal(act_actor_start(f->a[1]), 0);
	assert_int_equal(call(f, 0, T_EDGE, NULL), 0);
	assert_int_equal(f->s[0].next_rc, sizeof(int));
	assert_int_equal(f->s[1].runs, 1);
	fx_close(f);
}

/*
 * Exclusive access (DESIGN 2.1) of a lockable edge target: the group's
 * thread calls it along the edge in a loop while another thread
 * fast_sends to it; no two handlers overlap and every call completed.
 * Plain lock, and lock_bias (the other thread revokes the bias).
 */
struct hammer {
	struct act_actor *to;
	_Atomic bool stop;
	uint64_t calls;
	int bad;
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;

	while (!atomic_load(&h->stop)) {
		int r = 0;

		ACT_STACK_MSG(req, int);
		act_msg_init(&req.hdr, T_ECHO, sizeof(int));
		req.body = 1;
		if (act_fast_send(h->to, &req.hdr, &r, sizeof(r)) != (int)sizeof(r) || r != 2)
			h->bad++;
		h->calls++;
	}
	return NULL;
}

static void contended_lockable_target(bool bias)
{
	struct fx *f = fx_open(0x01, bias ? 0x02 : 0); /* 0 private driver, 1 lockable */
	struct hammer h = {.to = NULL};
	struct act_actor_stats st;
	uint64_t edge_calls = 0;
	pthread_t th;
	double t0;

	edge(f, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	route(f, 0, 1, T_ECHO);
	f->s[0].loops = 2000;
	if (bias) /* biased to this thread first */
		assert_int_equal(call(f, 0, T_LOOP, NULL), 0);
	h.to = f->a[1];
	assert_int_equal(pthread_create(&th, NULL, hammer_main, &h), 0);
	t0 = tw_now_s();
	while (tw_now_s() - t0 < 0.25) {
		assert_int_equal(call(f, 0, T_LOOP, NULL), 0);
		assert_int_equal(f->s[0].next_rc, 0);
		edge_calls += f->s[0].loops;
	}
	atomic_store(&h.stop, true);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(h.bad, 0);
	assert_true(h.calls > 0);
	assert_int_equal(atomic_load(&f->s[1].overlaps), 0);
	act_actor_stats(f->a[1], &st);
	assert_int_equal(st.sync_completions,
			 edge_calls + h.calls + (bias ? f->s[0].loops : 0));
	if (bias && atomic_load(&f->a[1]->lock_bias) == false)
		assert_int_equal(st.bias_revocations, 1);
	fx_close(f);
}

static void contended_lockable_edge_target(void **unused)
{
	(void)unused;
	contended_lockable_target(false);
}

static void contended_biased_edge_target(void **unused)
{
	(void)unused;
	contended_lockable_target(true);
}

/* The lock_bias target stays biased to the group's thread when uncontended:
 * the edge path enters through the bias (no atomic RMW on the word). */
static void biased_edge_target_keeps_its_bias(void **unused)
{
	struct fx *f = fx_open(0x01, 0x02);
	uint32_t word;

	(void)unused;
	if (!atomic_load(&f->a[1]->lock_bias)) {
		fprintf(stderr, "# skipped: lock_bias unavailable (no membarrier)\n");
		fx_close(f);
		return;
	}
	edge(f, 0, 1);
	assert_int_equal(act_group_bind(f->g), 0);
	route(f, 0, 1, T_ECHO);
	f->s[0].loops = 100;
	assert_int_equal(call(f, 0, T_LOOP, NULL), 0);
	assert_int_equal(f->s[0].next_rc, 0);
	word = atomic_load(&f->a[1]->lock);
	assert_int_equal(word, ACT__LOCK_BIAS | act__tls_thread.id);
	assert_int_equal(atomic_load(&f->a[1]->bias_in), 0);
	fx_close(f);
}

/* The edge path allocates nothing: no pool block, no malloc. */
static void edge_path_allocates_nothing(void **unused)
{
	struct fx *f = fx_open(0x03, 0x04); /* 0, 1 private; 2 lockable biased */
	unsigned long m0;
	uint64_t p0;

	(void)unused;
	edge(f, 0, 1);
	edge(f, 1, 2);
	assert_int_equal(act_group_bind(f->g), 0);
	route(f, 0, 1, T_LOOP);
	route(f, 1, 2, T_ECHO);
	f->s[1].loops = 100;
	f->s[0].loops = 1;
	assert_int_equal(call(f, 0, T_LOOP, NULL), 0); /* warm-up */
#ifdef TW_WRAP_MALLOC
	tw_alloc_counting = 1;
#endif
	m0 = MALLOCS();
	p0 = act_thread_alloc_count();
	f->s[0].loops = 100;
	assert_int_equal(call(f, 0, T_LOOP, NULL), 0);
	assert_int_equal(f->s[0].next_rc, 0);
	assert_int_equal(f->s[1].next_rc, 0);
	assert_int_equal(act_thread_alloc_count() - p0, 0);
	assert_int_equal(MALLOCS() - m0, 0);
#ifdef TW_WRAP_MALLOC
	tw_alloc_counting = 0;
#endif
	assert_int_equal(sync_of(f->a[2]), 100 + 100 * 100);
	fx_close(f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cyclic_declaration_refused),
		cmocka_unit_test(declaration_after_run_refused),
		cmocka_unit_test(edge_index_bound),
		cmocka_unit_test(edge_call_is_a_fast_send),
		cmocka_unit_test(undeclared_edge_refused_and_counted),
		cmocka_unit_test(dynamic_cycle_through_edge_held),
		cmocka_unit_test(edge_after_dynamic_call_checks_the_chain),
		cmocka_unit_test(private_target_from_foreign_thread),
		cmocka_unit_test(shutdown_and_missing_handler),
		cmocka_unit_test(contended_lockable_edge_target),
		cmocka_unit_test(contended_biased_edge_target),
		cmocka_unit_test(biased_edge_target_keeps_its_bias),
		cmocka_unit_test(edge_path_allocates_nothing),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
