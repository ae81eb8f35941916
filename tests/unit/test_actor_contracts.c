/* SPDX-License-Identifier: BSD-3-Clause
 * The runtime's edge contracts (issue 20; act.h, lib/actor/README.md
 * "Contracts"), each a case that failed, hung or was undefined before:
 *  1. a message keeps its sender: a reply to a sender destroyed while the
 *     message waited is refused (-ESHUTDOWN, orphan_replies), whatever
 *     route the message took (inline cell, pool block, control queue, lane
 *     from the same group, lane from another group);
 *  2. a send blocked on a full mailbox is an edge of the wait-for graph:
 *     lock <-> mailbox and mailbox <-> mailbox cycles end in -EDEADLK on
 *     one side (or both) instead of a hang, on every queue kind;
 *  3. act_group_step() and act_group_drain() from inside a handler: -EBUSY,
 *     nothing run (lockable, group-private, another group);
 *  4. one rule per contract: a failed reply does not use up the reply;
 *     cycle policies validated and set atomically; act_actor_stop() from
 *     its own thread reports -EINVAL; act_fast_send_opt() flags validated;
 *     pool blocks stranded in another thread's cache (documented bound).
 * What would otherwise hang is bounded by a watchdog thread in the test
 * (abort with a message after WATCHDOG_S), never by meson's timeout.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "act_fixture.h"

#define WATCHDOG_S 20

enum {
	T_SEND,    /* S: send T_ASK to the peer by the route in the payload */
	T_ASK,     /* R: record the sender's name, reply, record the result */
	T_ANSWER,  /* S: count answers */
	T_CALL_S,  /* R0: fast_send T_SEND to S (S runs on R0's thread) */
	T_NOP,     /* count */
	T_STEP,    /* step and drain groups from inside the handler */
	T_COUNT_
};

enum route { R_INLINE, R_POOL, R_CONTROL };

struct st {
	struct act_actor *peer, *s;
	enum route route;
	char sender_name[32];
	_Atomic int reply_rc;
	_Atomic int asks, answers, nops;
	_Atomic int replies_ok, replies_refused;
	unsigned spin; /* T_ASK: work before the reply (a backlog builds) */
	/* T_STEP */
	struct act_group *step_groups[2];
	int step_rc[4];
	int nops_seen;
};

static void h_send(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	char big[48] = "big";
	int v = 7;
	int rc;

	(void)self;
	(void)m;
	switch (s->route) {
	case R_POOL: /* more than an inline cell holds: a pool block */
		rc = act_send_copy(s->peer, T_ASK, big, sizeof(big));
		break;
	case R_CONTROL:
		rc = act_send_control(s->peer, T_ASK, &v, sizeof(v));
		break;
	default:
		rc = act_send_copy(s->peer, T_ASK, &v, sizeof(v));
		break;
	}
	assert_int_equal(rc, 0);
}

static void h_ask(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	int v = 1;

	int rc;
	volatile unsigned i;

	(void)self;
	for (i = 0; i < s->spin; i++)
		;
	/* the sender's memory is still there: the message holds it */
	snprintf(s->sender_name, sizeof(s->sender_name), "%s",
		 m->sender != NULL ? act_actor_name(m->sender) : "(none)");
	rc = act_reply(m, T_ANSWER, &v, sizeof(v));
	atomic_store(&s->reply_rc, rc);
	atomic_fetch_add(rc == 0 ? &s->replies_ok : &s->replies_refused, 1);
	atomic_fetch_add(&s->asks, 1);
}

static void h_answer(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)m;
	atomic_fetch_add(&((struct st *)state)->answers, 1);
}

static void h_call_s(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	ACT_STACK_MSG(req, int);

	(void)self;
	(void)m;
	act_msg_init(&req.hdr, T_SEND, sizeof(int));
	assert_int_equal(act_fast_send(s->s, &req.hdr, NULL, 0), 0);
}

static void h_nop(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)m;
	atomic_fetch_add(&((struct st *)state)->nops, 1);
}

static void h_step(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	int i;

	(void)self;
	(void)m;
	for (i = 0; i < 2; i++) {
		if (s->step_groups[i] == NULL)
			continue;
		s->step_rc[2 * i] = act_group_step(s->step_groups[i], 0);
		s->step_rc[2 * i + 1] = act_group_drain(s->step_groups[i]);
	}
	s->nops_seen = atomic_load(&s->nops);
}

static const act_handler_fn handlers[T_COUNT_] = {
	[T_SEND] = h_send, [T_ASK] = h_ask, [T_ANSWER] = h_answer,
	[T_CALL_S] = h_call_s, [T_NOP] = h_nop, [T_STEP] = h_step,
};

/* ------------------------------------------------------------------------ */
/* Watchdog                                                                 */
/* ------------------------------------------------------------------------ */

struct watchdog {
	pthread_t th;
	_Atomic bool done;
	const char *what;
};

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	const struct timespec tick = {0, 10 * 1000 * 1000};
	int i;

	for (i = 0; i < WATCHDOG_S * 100; i++) {
		if (atomic_load(&w->done))
			return NULL;
		nanosleep(&tick, NULL);
	}
	fprintf(stderr, "watchdog: %s: still blocked after %d s (a hang the runtime "
			"must refuse)\n", w->what, WATCHDOG_S);
	abort();
}

static void watchdog_arm(struct watchdog *w, const char *what)
{
	atomic_init(&w->done, false);
	w->what = what;
	assert_int_equal(pthread_create(&w->th, NULL, watchdog_main, w), 0);
}

static void watchdog_disarm(struct watchdog *w)
{
	atomic_store(&w->done, true);
	assert_int_equal(pthread_join(w->th, NULL), 0);
}

/* Wait (bounded) until *flag != 0. */
static void wait_flag(_Atomic int *flag, const char *what)
{
	const struct timespec tick = {0, 100 * 1000};
	int i;

	for (i = 0; i < WATCHDOG_S * 10000 && atomic_load(flag) == 0; i++)
		nanosleep(&tick, NULL);
	if (atomic_load(flag) == 0)
		fail_msg("%s did not happen within %d s", what, WATCHDOG_S);
}

/* ------------------------------------------------------------------------ */
/* 1. A message keeps its sender                                            */
/* ------------------------------------------------------------------------ */

/* S (group gs) sends to R (group gr) by @route, then S is stopped and
 * destroyed before R runs: R still reads S's name, and its reply is
 * refused and counted. */
static void reply_to_destroyed_sender_route(enum route route)
{
	struct act_group *gs = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct act_group *gr = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct st sst = {.route = route}, rst = {0};
	struct act_actor *s = fx_actor("S", gs, handlers, T_COUNT_, &sst, false);
	struct act_actor *r = fx_actor("R", gr, handlers, T_COUNT_, &rst, false);
	struct act_actor_stats ast;

	sst.peer = r;
	assert_int_equal(act_send_copy(s, T_SEND, NULL, 0), 0);
	assert_int_equal(act_group_drain(gs), 1);
	assert_int_equal(act_group_queued(gr), 1);
	assert_int_equal(act_actor_stop(s), 0);
	act_actor_destroy(s); /* gs idle: drained, stepped by this thread */
	assert_int_equal(act_group_drain(gr), 1);
	assert_int_equal(atomic_load(&rst.asks), 1);
	assert_string_equal(rst.sender_name, "S");
	assert_int_equal(atomic_load(&rst.reply_rc), -ESHUTDOWN);
	act_actor_stats(r, &ast);
	assert_int_equal(ast.orphan_replies, 1);
	act_actor_stop(r);
	act_actor_destroy(r);
	act_group_destroy(gr);
	act_group_destroy(gs);
}

static void reply_to_destroyed_sender_inline(void **unused)
{
	(void)unused;
	reply_to_destroyed_sender_route(R_INLINE);
}

static void reply_to_destroyed_sender_pool(void **unused)
{
	(void)unused;
	reply_to_destroyed_sender_route(R_POOL);
}

static void reply_to_destroyed_sender_control(void **unused)
{
	(void)unused;
	reply_to_destroyed_sender_route(R_CONTROL);
}

/* Lane, same group: S's handler sends to R on the lane; a step of one
 * leaves R's message there; S is destroyed between steps. */
static void reply_to_destroyed_sender_lane(void **unused)
{
	struct act_group *g = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct st sst = {.route = R_INLINE}, rst = {0};
	struct act_actor *s = fx_actor("S", g, handlers, T_COUNT_, &sst, false);
	struct act_actor *r = fx_actor("R", g, handlers, T_COUNT_, &rst, false);
	struct act_mailbox_stats mst;
	struct act_actor_stats ast;

	(void)unused;
	sst.peer = r;
	assert_int_equal(act_send_copy(s, T_SEND, NULL, 0), 0);
	assert_int_equal(act_group_step(g, 1), 1);
	act_group_mailbox_stats(g, &mst);
	assert_int_equal(mst.lane, 1); /* R's message took the lane */
	assert_int_equal(act_group_queued(g), 1);
	assert_int_equal(act_actor_stop(s), 0);
	act_actor_destroy(s);
	assert_int_equal(act_group_drain(g), 1);
	assert_string_equal(rst.sender_name, "S");
	assert_int_equal(atomic_load(&rst.reply_rc), -ESHUTDOWN);
	act_actor_stats(r, &ast);
	assert_int_equal(ast.orphan_replies, 1);
	act_actor_stop(r);
	act_actor_destroy(r);
	act_group_destroy(g);
}

/* Lane, sender of another group: R0's handler (group g, this thread)
 * fast_sends S (group gs, lockable, never run by its own loop), whose
 * handler sends to R on g's lane. */
static void reply_to_destroyed_sender_lane_foreign(void **unused)
{
	struct act_group *g = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct act_group *gs = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct st sst = {.route = R_INLINE}, rst = {0}, r0st = {0};
	struct act_actor *s = fx_actor("S", gs, handlers, T_COUNT_, &sst, false);
	struct act_actor *r = fx_actor("R", g, handlers, T_COUNT_, &rst, false);
	struct act_actor *r0 = fx_actor("R0", g, handlers, T_COUNT_, &r0st, false);
	struct act_mailbox_stats mst;
	struct act_actor_stats ast;

	(void)unused;
	sst.peer = r;
	r0st.s = s;
	assert_int_equal(act_send_copy(r0, T_CALL_S, NULL, 0), 0);
	assert_int_equal(act_group_step(g, 1), 1);
	act_group_mailbox_stats(g, &mst);
	assert_int_equal(mst.lane, 1);
	assert_int_equal(act_actor_stop(s), 0);
	act_actor_destroy(s);
	assert_int_equal(act_group_drain(g), 1);
	assert_string_equal(rst.sender_name, "S");
	assert_int_equal(atomic_load(&rst.reply_rc), -ESHUTDOWN);
	act_actor_stats(r, &ast);
	assert_int_equal(ast.orphan_replies, 1);
	act_actor_stop(r);
	act_actor_stop(r0);
	act_actor_destroy(r);
	act_actor_destroy(r0);
	act_group_destroy(g);
	act_group_destroy(gs);
}

/* A message discarded with its group also lets its destroyed sender go
 * (LeakSanitizer in the sanitizer builds; the reference count here). */
static void discarded_message_releases_sender(void **unused)
{
	struct act_group *gs = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct act_group *gr = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct st sst = {.route = R_POOL}, rst = {0};
	struct act_actor *s = fx_actor("S", gs, handlers, T_COUNT_, &sst, false);
	struct act_actor *r = fx_actor("R", gr, handlers, T_COUNT_, &rst, false);
	struct act_mailbox_stats mst;

	(void)unused;
	sst.peer = r;
	assert_int_equal(act_send_copy(s, T_SEND, NULL, 0), 0);
	assert_int_equal(act_send_copy(s, T_SEND, NULL, 0), 0);
	assert_int_equal(act_group_drain(gs), 2);
	act_actor_stop(s);
	act_actor_destroy(s);
	act_actor_stop(r);
	act_actor_destroy(r);
	act_group_mailbox_stats(gr, &mst);
	assert_int_equal(mst.enqueued, 2);
	act_group_destroy(gr); /* discards both; the last one frees S */
	assert_int_equal(atomic_load(&rst.asks), 0);
	act_group_destroy(gs);
}

/*
 * The same across threads: S, an own-mailbox actor (its own thread takes
 * the answers), sends 2000 asks to R, whose group thread works through
 * them while S is stopped and destroyed. Every ask is answered or refused
 * (-ESHUTDOWN, counted); none reads freed memory (ASan), races on the
 * counters (TSan) or leaks S or its group (LeakSanitizer): the last
 * message to leave frees them.
 */
static void sender_destroyed_while_consumer_runs(void **unused)
{
	struct act_group_opts ro = {.name = "gr", .queue = fx_queue(), .capacity = 4096,
				    .cpu = -1};
	struct act_group_opts so = {.name = "S", .queue = fx_queue(), .capacity = 4096,
				    .cpu = -1};
	struct act_group *gr = act_group_create(&ro);
	struct st sst = {.route = R_INLINE}, rst = {.spin = 2000};
	struct act_actor_opts o = {.name = "S", .handlers = handlers, .handler_count = T_COUNT_,
				   .state = &sst, .mailbox = &so};
	struct act_actor *s, *r;
	struct act_actor_stats ast;
	ACT_STACK_MSG(req, int);
	int i;

	(void)unused;
	assert_non_null(gr);
	r = fx_actor("R", gr, handlers, T_COUNT_, &rst, false);
	s = act_actor_create(&o);
	assert_non_null(s);
	assert_int_equal(act_actor_start(s), 0);
	sst.peer = r;
	assert_int_equal(act_group_start(gr), 0);
	act_msg_init(&req.hdr, T_SEND, sizeof(int));
	for (i = 0; i < 2000; i++)
		assert_int_equal(act_fast_send(s, &req.hdr, NULL, 0), 0);
	assert_int_equal(act_actor_stop(s), 0);
	act_actor_destroy(s);
	for (i = 0; i < WATCHDOG_S * 1000 && atomic_load(&rst.asks) < 2000; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&rst.asks), 2000);
	assert_int_equal(atomic_load(&rst.replies_ok) + atomic_load(&rst.replies_refused), 2000);
	/* how the race went (refused: the asks still queued at the destroy) */
	print_message("      %d replies delivered, %d refused\n", atomic_load(&rst.replies_ok),
		      atomic_load(&rst.replies_refused));
	act_actor_stats(r, &ast);
	assert_int_equal(ast.orphan_replies, (uint64_t)atomic_load(&rst.replies_refused));
	assert_int_equal(act_group_stop(gr), 0);
	act_actor_stop(r);
	act_actor_destroy(r);
	act_group_destroy(gr);
}

/* ------------------------------------------------------------------------ */
/* 2. Waits for mailbox space are in the wait-for graph                     */
/* ------------------------------------------------------------------------ */

enum { D_BLOCK_SEND, D_CALL_A, D_NOP, D_COUNT_ };

struct dl {
	struct act_actor *a, *c, *target; /* target: where D_BLOCK_SEND sends */
	_Atomic int a_in, c_in, go;
	_Atomic int send_rc, call_rc, nops;
	_Atomic int send_done, call_done;
};

static struct dl *dl_of(void *state)
{
	return *(struct dl **)state;
}

/* A's (or B's) handler: announce, wait for go, send to a full mailbox. */
static void d_block_send(struct act_actor *self, void *state, struct act_msg *m)
{
	struct dl *d = dl_of(state);
	int v = 0;

	(void)m;
	atomic_store(self == d->a ? &d->a_in : &d->c_in, 1);
	wait_flag(&d->go, "go");
	atomic_store(&d->send_rc, act_send_copy(self == d->a ? d->target : d->a, D_NOP, &v,
						sizeof(v)));
	atomic_store(&d->send_done, 1);
}

/* C's handler: wait until A's handler holds A, then fast_send A. */
static void d_call_a(struct act_actor *self, void *state, struct act_msg *m)
{
	struct dl *d = dl_of(state);
	ACT_STACK_MSG(req, int);

	(void)self;
	(void)m;
	atomic_store(&d->c_in, 1);
	wait_flag(&d->a_in, "A's handler");
	wait_flag(&d->go, "go");
	act_msg_init(&req.hdr, D_NOP, sizeof(int));
	atomic_store(&d->call_rc, act_fast_send(d->a, &req.hdr, NULL, 0));
	atomic_store(&d->call_done, 1);
}

static void d_nop(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)m;
	atomic_fetch_add(&dl_of(state)->nops, 1);
}

static const act_handler_fn dl_handlers[D_COUNT_] = {
	[D_BLOCK_SEND] = d_block_send, [D_CALL_A] = d_call_a, [D_NOP] = d_nop,
};

static struct act_group *dl_group(const char *name, uint32_t capacity)
{
	struct act_group_opts o = {
		.name = name,
		.queue = fx_queue(),
		.overflow = ACT_OVERFLOW_BLOCK,
		.capacity = capacity,
		.shards = 1,
		.cpu = -1,
	};
	struct act_group *g = act_group_create(&o);

	assert_non_null(g);
	return g;
}

/* Fill @to's mailbox: exactly its capacity of D_NOP (no handler of its
 * group is taking any: it is parked in a handler). */
static void dl_fill(struct act_actor *to, uint32_t capacity)
{
	uint32_t i;
	int v = 0;

	for (i = 0; i < capacity; i++)
		assert_int_equal(act_send_copy(to, D_NOP, &v, sizeof(v)), 0);
	assert_int_equal(act_group_queued(act_actor_group(to)), capacity);
}

struct caller {
	struct act_actor *to;
	uint32_t type;
	int rc;
};

static void *call_thread(void *arg)
{
	struct caller *c = arg;
	ACT_STACK_MSG(req, int);

	act_msg_init(&req.hdr, c->type, sizeof(int));
	c->rc = act_fast_send(c->to, &req.hdr, NULL, 0);
	return NULL;
}

/*
 * The issue's case: thread X runs A's handler (holding A) and sends to C's
 * full mailbox (BLOCK); C's group thread is inside C's handler, calling
 * fast_send(A). X waits for C's thread, which waits for X: one of the two
 * must get -EDEADLK, and then the other completes.
 */
static void lock_and_mailbox_cycle(void **unused)
{
	const uint32_t cap = 2;
	struct dl d = {0};
	struct dl *dp = &d;
	struct act_group *ga = dl_group("ga", 16), *gc = dl_group("gc", cap);
	struct act_actor *a = fx_actor("A", ga, dl_handlers, D_COUNT_, &dp, false);
	struct act_actor *c = fx_actor("C", gc, dl_handlers, D_COUNT_, &dp, false);
	struct caller x = {.to = a, .type = D_BLOCK_SEND};
	struct act_mailbox_stats mst;
	struct act_actor_stats ast;
	struct watchdog w;
	pthread_t th;
	int v = 0;

	(void)unused;
	d.a = a;
	d.c = c;
	d.target = c;
	watchdog_arm(&w, "lock <-> mailbox cycle");
	assert_int_equal(act_group_start(gc), 0);
	assert_int_equal(act_send_copy(c, D_CALL_A, &v, sizeof(v)), 0);
	wait_flag(&d.c_in, "C's handler");
	dl_fill(c, cap);
	assert_int_equal(pthread_create(&th, NULL, call_thread, &x), 0);
	wait_flag(&d.a_in, "A's handler");
	atomic_store(&d.go, 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	wait_flag(&d.call_done, "C's fast_send");
	watchdog_disarm(&w);

	assert_int_equal(x.rc, 0); /* A's handler itself ran */
	act_group_mailbox_stats(gc, &mst);
	act_actor_stats(a, &ast);
	/* one side refused, each refusal counted where it happened */
	assert_true(atomic_load(&d.send_rc) == -EDEADLK || atomic_load(&d.call_rc) == -EDEADLK);
	assert_int_equal(mst.deadlocks, atomic_load(&d.send_rc) == -EDEADLK);
	assert_int_equal(ast.deadlocks, atomic_load(&d.call_rc) == -EDEADLK);
	/* the other completed, or was refused too (both walks saw it) */
	assert_true(atomic_load(&d.send_rc) == 0 || atomic_load(&d.send_rc) == -EDEADLK);
	assert_true(atomic_load(&d.call_rc) == 0 || atomic_load(&d.call_rc) == -EDEADLK);
	assert_int_equal(act_group_stop(gc), 0);
	act_actor_stop(a);
	act_actor_stop(c);
	act_actor_destroy(a);
	act_actor_destroy(c);
	act_group_destroy(ga);
	act_group_destroy(gc);
}

/*
 * Two group threads, each inside a handler, each sending to the other's
 * full mailbox: A's thread waits for B's thread and B's for A's. One send
 * gets -EDEADLK; its handler returns, its loop frees a slot, the other's
 * send completes.
 */
static void mailbox_and_mailbox_cycle(void **unused)
{
	const uint32_t cap = 2;
	struct dl d = {0};
	struct dl *dp = &d;
	struct dl e = {0}; /* B's view: its d->a is B */
	struct dl *ep = &e;
	struct act_group *ga = dl_group("ga", cap), *gb = dl_group("gb", cap);
	struct act_actor *a = fx_actor("A", ga, dl_handlers, D_COUNT_, &dp, false);
	struct act_actor *b = fx_actor("B", gb, dl_handlers, D_COUNT_, &ep, false);
	struct act_mailbox_stats sa, sb;
	struct watchdog w;
	int v = 0;

	(void)unused;
	d.a = a;
	d.target = b;
	e.a = b;
	e.target = a;
	watchdog_arm(&w, "mailbox <-> mailbox cycle");
	assert_int_equal(act_group_start(ga), 0);
	assert_int_equal(act_group_start(gb), 0);
	assert_int_equal(act_send_copy(a, D_BLOCK_SEND, &v, sizeof(v)), 0);
	assert_int_equal(act_send_copy(b, D_BLOCK_SEND, &v, sizeof(v)), 0);
	wait_flag(&d.a_in, "A's handler");
	wait_flag(&e.a_in, "B's handler");
	dl_fill(a, cap);
	dl_fill(b, cap);
	atomic_store(&d.go, 1);
	atomic_store(&e.go, 1);
	wait_flag(&d.send_done, "A's send");
	wait_flag(&e.send_done, "B's send");
	watchdog_disarm(&w);

	act_group_mailbox_stats(ga, &sa);
	act_group_mailbox_stats(gb, &sb);
	assert_true(atomic_load(&d.send_rc) == -EDEADLK || atomic_load(&e.send_rc) == -EDEADLK);
	assert_int_equal(sb.deadlocks, atomic_load(&d.send_rc) == -EDEADLK);
	assert_int_equal(sa.deadlocks, atomic_load(&e.send_rc) == -EDEADLK);
	/* both walks may see the cycle (each published before the other
	 * walked): then both are refused; otherwise the other completed */
	assert_true(atomic_load(&d.send_rc) == 0 || atomic_load(&d.send_rc) == -EDEADLK);
	assert_true(atomic_load(&e.send_rc) == 0 || atomic_load(&e.send_rc) == -EDEADLK);
	assert_int_equal(act_group_stop(ga), 0);
	assert_int_equal(act_group_stop(gb), 0);
	act_actor_stop(a);
	act_actor_stop(b);
	act_actor_destroy(a);
	act_actor_destroy(b);
	act_group_destroy(ga);
	act_group_destroy(gb);
}

/* ------------------------------------------------------------------------ */
/* 3. No step or drain from inside a handler                                */
/* ------------------------------------------------------------------------ */

static void step_inside_handler_case(bool group_private)
{
	struct act_group *g = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct act_group *other = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct st st = {0}, ost = {0};
	struct act_actor *a = fx_actor("A", g, handlers, T_COUNT_, &st, group_private);
	struct act_actor *o = fx_actor("O", other, handlers, T_COUNT_, &ost, false);
	struct watchdog w;
	ACT_STACK_MSG(req, int);
	int i;

	assert_int_equal(act_group_bind(g), 0); /* this thread runs g */
	assert_int_equal(act_send_copy(a, T_NOP, NULL, 0), 0); /* queued for A */
	assert_int_equal(act_send_copy(o, T_NOP, NULL, 0), 0); /* and for O */
	st.step_groups[0] = g;
	st.step_groups[1] = other;
	act_msg_init(&req.hdr, T_STEP, sizeof(int));
	watchdog_arm(&w, "act_group_step inside a handler");
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	watchdog_disarm(&w);
	for (i = 0; i < 4; i++)
		assert_int_equal(st.step_rc[i], -EBUSY);
	assert_int_equal(st.nops_seen, 0); /* A's queued message did not run inside */
	assert_int_equal(atomic_load(&ost.nops), 0);
	/* outside any handler both run */
	assert_int_equal(act_group_drain(g), 1);
	assert_int_equal(act_group_drain(other), 1);
	assert_int_equal(atomic_load(&st.nops), 1);
	assert_int_equal(atomic_load(&ost.nops), 1);
	act_actor_stop(a);
	act_actor_stop(o);
	act_actor_destroy(a);
	act_actor_destroy(o);
	act_group_destroy(g);
	act_group_destroy(other);
}

static void step_inside_handler_lockable(void **unused)
{
	(void)unused;
	step_inside_handler_case(false);
}

static void step_inside_handler_private(void **unused)
{
	(void)unused;
	step_inside_handler_case(true);
}

/* ------------------------------------------------------------------------ */
/* 4. One rule per contract                                                 */
/* ------------------------------------------------------------------------ */

enum { C_SYNC_RETRY, C_SYNC_BIG, C_ASYNC_RETRY, C_ANSWER, C_STOP_SELF, C_PING, C_BACK,
       C_KICK, C_COUNT_ };

struct cst {
	int rc[4];
	_Atomic int answers, done, pings;
	struct act_actor *peer;
};

/* Too big, then one that fits: the second is the reply. */
static void c_sync_retry(struct act_actor *self, void *state, struct act_msg *m)
{
	struct cst *s = state;
	char big[64] = {0};
	int v = 42;

	(void)self;
	s->rc[0] = act_reply_sync(m, C_ANSWER, big, sizeof(big));
	s->rc[1] = act_reply_sync(m, C_ANSWER, &v, sizeof(v));
	s->rc[2] = act_reply_sync(m, C_ANSWER, &v, sizeof(v));
}

/* Too big only: the caller gets -EMSGSIZE. */
static void c_sync_big(struct act_actor *self, void *state, struct act_msg *m)
{
	struct cst *s = state;
	char big[64] = {0};

	(void)self;
	s->rc[0] = act_reply(m, C_ANSWER, big, sizeof(big));
}

/* Asynchronous: larger than any pool message, then one that fits. */
static void c_async_retry(struct act_actor *self, void *state, struct act_msg *m)
{
	struct cst *s = state;
	static char huge[1 << 20];
	int v = 5;

	(void)self;
	assert_true(act_msg_max_payload() < sizeof(huge));
	s->rc[0] = act_reply(m, C_ANSWER, huge, act_msg_max_payload() + 1);
	s->rc[1] = act_reply(m, C_ANSWER, &v, sizeof(v));
	s->rc[2] = act_reply(m, C_ANSWER, &v, sizeof(v));
	atomic_store(&s->done, 1);
}

static void c_answer(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)m;
	atomic_fetch_add(&((struct cst *)state)->answers, 1);
}

static void c_stop_self(struct act_actor *self, void *state, struct act_msg *m)
{
	struct cst *s = state;

	(void)m;
	s->rc[0] = act_actor_stop(self);
	atomic_store(&s->done, 1);
}

/* A/C_PING -> B/C_BACK -> A/C_ANSWER: a callback into A with another type,
 * run under the permissive policy, refused (-ELOOP) under conservative. */
static void c_ping(struct act_actor *self, void *state, struct act_msg *m)
{
	struct cst *s = state;
	ACT_STACK_MSG(req, int);

	(void)self;
	(void)m;
	act_msg_init(&req.hdr, C_BACK, sizeof(int));
	assert_int_equal(act_fast_send(s->peer, &req.hdr, NULL, 0), 0);
}

static void c_back(struct act_actor *self, void *state, struct act_msg *m)
{
	struct cst *s = state;
	ACT_STACK_MSG(req, int);

	(void)self;
	(void)m;
	act_msg_init(&req.hdr, C_ANSWER, sizeof(int));
	s->rc[3] = act_fast_send(s->peer, &req.hdr, NULL, 0);
	atomic_fetch_add(&s->pings, 1);
}

/* The client: ask the peer asynchronously (so the reply comes back). */
static void c_kick(struct act_actor *self, void *state, struct act_msg *m)
{
	struct cst *s = state;

	(void)self;
	(void)m;
	assert_int_equal(act_send_copy(s->peer, C_ASYNC_RETRY, NULL, 0), 0);
}

static const act_handler_fn c_handlers[C_COUNT_] = {
	[C_SYNC_RETRY] = c_sync_retry, [C_SYNC_BIG] = c_sync_big,
	[C_ASYNC_RETRY] = c_async_retry, [C_ANSWER] = c_answer,
	[C_STOP_SELF] = c_stop_self, [C_PING] = c_ping, [C_BACK] = c_back,
	[C_KICK] = c_kick,
};

/* A reply that returns an error is not made: the handler may reply again;
 * the same rule for act_reply_sync(), act_reply() sync and async. */
static void failed_reply_does_not_count(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct cst s = {0}, cs = {0};
	struct act_actor *a = fx_actor("A", g, c_handlers, C_COUNT_, &s, false);
	struct act_actor *client = fx_actor("client", g, c_handlers, C_COUNT_, &cs, false);
	ACT_STACK_MSG(req, int);
	int out = 0;

	(void)unused;
	act_msg_init(&req.hdr, C_SYNC_RETRY, sizeof(int));
	assert_int_equal(act_fast_send(a, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(s.rc[0], -EMSGSIZE);
	assert_int_equal(s.rc[1], 0);
	assert_int_equal(s.rc[2], -EALREADY);
	assert_int_equal(out, 42);
	assert_true(act_msg_replied(&req.hdr));

	act_msg_init(&req.hdr, C_SYNC_BIG, sizeof(int));
	assert_int_equal(act_fast_send(a, &req.hdr, &out, sizeof(out)), -EMSGSIZE);
	assert_int_equal(s.rc[0], -EMSGSIZE);
	assert_false(act_msg_replied(&req.hdr));

	memset(s.rc, 0, sizeof(s.rc));
	cs.peer = a;
	assert_int_equal(act_send_copy(client, C_KICK, NULL, 0), 0);
	assert_int_equal(act_group_drain(g), 3); /* kick, ask, answer */
	assert_int_equal(s.rc[0], -EMSGSIZE);
	assert_int_equal(s.rc[1], 0);
	assert_int_equal(s.rc[2], -EALREADY);
	assert_int_equal(atomic_load(&cs.answers), 1);
	act_actor_stop(a);
	act_actor_stop(client);
	act_actor_destroy(a);
	act_actor_destroy(client);
	act_group_destroy(g);
}

/* Cycle policies: a bad value is refused and changes nothing; a valid one
 * takes effect for the next call. */
static void cycle_policy_validated(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct cst as = {0}, bs = {0};
	struct act_actor *a = fx_actor("A", g, c_handlers, C_COUNT_, &as, false);
	struct act_actor *b = fx_actor("B", g, c_handlers, C_COUNT_, &bs, false);
	ACT_STACK_MSG(req, int);

	(void)unused;
	as.peer = b;
	bs.peer = a;
	assert_int_equal(act_set_cycle_policy((enum act_cycle_policy)7), -EINVAL);
	assert_int_equal(act_actor_set_cycle_policy(a, (enum act_cycle_policy)3), -EINVAL);
	assert_int_equal(act_actor_set_cycle_policy(NULL, ACT_CYCLE_PERMISSIVE), -EINVAL);
	assert_int_equal(act_actor_set_cycle_policy(a, ACT_CYCLE_PERMISSIVE), 0);
	act_msg_init(&req.hdr, C_PING, sizeof(int));
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(bs.rc[3], 0); /* the callback ran */
	assert_int_equal(act_actor_set_cycle_policy(a, (enum act_cycle_policy)-1), -EINVAL);
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(bs.rc[3], 0); /* still permissive */
	assert_int_equal(act_actor_set_cycle_policy(a, ACT_CYCLE_CONSERVATIVE), 0);
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(bs.rc[3], -ELOOP);
	assert_int_equal(act_set_cycle_policy(ACT_CYCLE_CONSERVATIVE), 0);
	act_actor_stop(a);
	act_actor_stop(b);
	act_actor_destroy(a);
	act_actor_destroy(b);
	act_group_destroy(g);
}

struct toggler {
	struct act_actor *a;
	_Atomic int stop;
};

static void *toggle_main(void *arg)
{
	struct toggler *t = arg;
	unsigned i;

	for (i = 0; !atomic_load(&t->stop); i++)
		assert_int_equal(act_actor_set_cycle_policy(t->a, i & 1 ? ACT_CYCLE_PERMISSIVE
									 : ACT_CYCLE_CONSERVATIVE),
				 0);
	return NULL;
}

/* The policy may change while calls read it (ThreadSanitizer in the tsan
 * build: the store and the reads are atomic). */
static void cycle_policy_set_while_calls_run(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct cst as = {0}, bs = {0};
	struct act_actor *a = fx_actor("A", g, c_handlers, C_COUNT_, &as, false);
	struct act_actor *b = fx_actor("B", g, c_handlers, C_COUNT_, &bs, false);
	struct toggler t = {.a = a};
	ACT_STACK_MSG(req, int);
	pthread_t th;
	int i;

	(void)unused;
	as.peer = b;
	bs.peer = a;
	assert_int_equal(pthread_create(&th, NULL, toggle_main, &t), 0);
	act_msg_init(&req.hdr, C_PING, sizeof(int));
	for (i = 0; i < 2000; i++) {
		assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
		assert_true(bs.rc[3] == 0 || bs.rc[3] == -ELOOP);
	}
	atomic_store(&t.stop, 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	act_actor_stop(a);
	act_actor_stop(b);
	act_actor_destroy(a);
	act_actor_destroy(b);
	act_group_destroy(g);
}

/* act_actor_stop() from an own-mailbox actor's own thread: deliveries are
 * refused from then on, the thread cannot join itself: -EINVAL, as
 * act_group_stop() says; a stop from another thread then succeeds. */
static void stop_from_own_thread(void **unused)
{
	struct act_group_opts mo = {.name = "own", .cpu = -1};
	struct cst s = {0};
	struct act_actor_opts o = {
		.name = "own", .handlers = c_handlers, .handler_count = C_COUNT_,
		.state = &s, .mailbox = &mo,
	};
	struct act_actor *a = act_actor_create(&o);

	(void)unused;
	assert_non_null(a);
	assert_int_equal(act_actor_start(a), 0);
	assert_int_equal(act_send_copy(a, C_STOP_SELF, NULL, 0), 0);
	wait_flag(&s.done, "the stop handler");
	assert_int_equal(s.rc[0], -EINVAL);
	assert_int_equal(act_send_copy(a, C_ANSWER, NULL, 0), -ESHUTDOWN);
	assert_int_equal(act_actor_stop(a), 0);
	act_actor_destroy(a);
}

/* act_fast_send_opt(): the wait and the flags are validated. */
static void fast_send_opt_validated(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct cst s = {0};
	struct act_actor *a = fx_actor("A", g, c_handlers, C_COUNT_, &s, false);
	ACT_STACK_MSG(req, int);

	(void)unused;
	act_msg_init(&req.hdr, C_ANSWER, sizeof(int));
	assert_int_equal(act_fast_send_opt(a, &req.hdr, NULL, 0, ACT_WAIT_SLEEP,
					   (enum act_call_flags)(ACT_CALL_CONSERVATIVE |
								 ACT_CALL_PERMISSIVE)),
			 -EINVAL);
	assert_int_equal(act_fast_send_opt(a, &req.hdr, NULL, 0, ACT_WAIT_SLEEP,
					   (enum act_call_flags)(1u << 5)),
			 -EINVAL);
	assert_int_equal(act_fast_send_opt(a, &req.hdr, NULL, 0, (enum act_wait)9,
					   ACT_CALL_PERMISSIVE),
			 -EINVAL);
	assert_int_equal(atomic_load(&s.answers), 0);
	assert_int_equal(act_fast_send_opt(a, &req.hdr, NULL, 0, ACT_WAIT_SPIN,
					   ACT_CALL_PERMISSIVE),
			 0);
	assert_int_equal(atomic_load(&s.answers), 1);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

/* act_pool_opts::cache_size: blocks free in another thread's cache are
 * not available here (the documented bound), and come back when that
 * thread exits. */
struct strander {
	struct act_pool *p;
	uint32_t n;
	_Atomic int cached, release;
};

static void *strand_main(void *arg)
{
	struct strander *s = arg;
	void *b[8];
	uint32_t i;

	for (i = 0; i < s->n; i++)
		assert_non_null(b[i] = act_pool_alloc(s->p));
	for (i = 0; i < s->n; i++)
		act_pool_free(s->p, b[i]);
	atomic_store(&s->cached, 1);
	wait_flag(&s->release, "release");
	return NULL; /* the exit flushes the cache */
}

static void pool_blocks_stranded_in_a_cache(void **unused)
{
	struct act_pool_opts o = {.name = "strand", .block_size = 64, .prealloc_blocks = 8,
				  .max_blocks = 8, .cache_size = 4};
	struct act_pool *p = act_pool_create(&o);
	struct strander s = {.p = p, .n = 8};
	struct act_pool_stats st;
	pthread_t th;
	void *b;

	(void)unused;
	assert_non_null(p);
	assert_int_equal(pthread_create(&th, NULL, strand_main, &s), 0);
	wait_flag(&s.cached, "the other thread's frees");
	/* all 8 (<= 2 * cache_size) sit in the other thread's cache */
	errno = 0;
	assert_null(act_pool_alloc(p));
	assert_int_equal(errno, ENOMEM);
	act_pool_stats(p, &st);
	assert_int_equal(st.failures, 1);
	atomic_store(&s.release, 1);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_non_null(b = act_pool_alloc(p));
	act_pool_free(p, b);
	act_pool_destroy(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		FX_PER_INLINE_QUEUE(reply_to_destroyed_sender_inline),
		FX_PER_INLINE_QUEUE(reply_to_destroyed_sender_pool),
		FX_PER_INLINE_QUEUE(reply_to_destroyed_sender_control),
		FX_PER_INLINE_QUEUE(reply_to_destroyed_sender_lane),
		FX_PER_INLINE_QUEUE(reply_to_destroyed_sender_lane_foreign),
		FX_PER_INLINE_QUEUE(discarded_message_releases_sender),
		FX_PER_INLINE_QUEUE(sender_destroyed_while_consumer_runs),
		FX_PER_INLINE_QUEUE(lock_and_mailbox_cycle),
		FX_PER_INLINE_QUEUE(mailbox_and_mailbox_cycle),
		{ "sharded/lock_and_mailbox_cycle", lock_and_mailbox_cycle, fx_set_queue, NULL,
		  &(enum act_queue_type){ACT_QUEUE_SHARDED} },
		{ "sharded/mailbox_and_mailbox_cycle", mailbox_and_mailbox_cycle, fx_set_queue,
		  NULL, &(enum act_queue_type){ACT_QUEUE_SHARDED} },
		FX_PER_INLINE_QUEUE(step_inside_handler_lockable),
		FX_PER_INLINE_QUEUE(step_inside_handler_private),
		cmocka_unit_test(failed_reply_does_not_count),
		cmocka_unit_test(cycle_policy_validated),
		cmocka_unit_test(cycle_policy_set_while_calls_run),
		cmocka_unit_test(stop_from_own_thread),
		cmocka_unit_test(fast_send_opt_validated),
		cmocka_unit_test(pool_blocks_stranded_in_a_cache),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
