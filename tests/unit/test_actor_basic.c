/* SPDX-License-Identifier: BSD-3-Clause
 * Actor lifecycle, send, the fast_send family, priority, overflow policies,
 * counters and instrumentation fields.
 *
 * The waits on a held lock are checked through the actor's internal
 * counter lock_sleeps and the caller's published wait (waiting_on), both
 * visible in act_fast_pvt.h; not API.
 */
#include <unistd.h>

#include "act_fixture.h"

enum { T_LOG, T_ECHO, T_HOLD, T_PARK, T_HOLD_TIMED, T_COUNT };

/* Bound of every "eventually" wait of these tests, in seconds. */
#define WAIT_MAX_S 10.0

/* Wait until *flag != 0, at most @seconds. True if it was seen set. */
static bool wait_flag(_Atomic int *flag, double seconds)
{
	double t0 = tw_now_s();

	while (atomic_load(flag) == 0) {
		if (tw_now_s() - t0 > seconds)
			return false;
		usleep(100);
	}
	return true;
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

/*
 * T_HOLD_TIMED: the plan of a timed hold of the lock (see
 * check_wait_on_held_lock()). The holder's handler keeps the lock until the
 * caller under test is seen waiting for it (its published waiting_on) and,
 * for a sleeping wait, asleep (lock_sleeps moved), then HOLD_MS more; each
 * wait bounded by WAIT_MAX_S. Order stamps come from one counter.
 */
#define HOLD_MS 60

struct timed_hold {
	struct act_actor *a;
	struct act__thread *waiter; /* the caller's thread record */
	bool until_asleep;          /* also wait for lock_sleeps to move */
	uint64_t sleeps_before;
	_Atomic int inside;         /* the holder's handler is running */
	_Atomic uint64_t seq;       /* order stamps */
	uint64_t hold_end_seq;      /* the holder's handler returns */
	uint64_t call_seq;          /* the caller's handler runs */
	int inside_at_call;         /* holder inside while the caller's handler ran */
	bool saw_waiter;            /* the holder saw the caller wait */
};

struct st {
	struct fx_log log;
	struct {                   /* header fields of the last message */
		uint32_t qdepth;
		uint8_t mailbox_was_empty;
		struct act_actor *dest, *sender;
		uint64_t enqueue_tsc;
	} seen;
	pthread_barrier_t *hold_in; /* T_HOLD: meet the test, then wait for release */
	_Atomic int release;        /* T_HOLD, T_PARK: may return */
	_Atomic int parked;         /* T_PARK: the handler is running */
	_Atomic int park_timed_out; /* T_PARK: gave up waiting for release */
	struct timed_hold *timed;   /* T_HOLD_TIMED; T_ECHO stamps its order */
};

static void h_log(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	s->seen.qdepth = m->qdepth;
	s->seen.mailbox_was_empty = m->mailbox_was_empty;
	s->seen.dest = m->dest;
	s->seen.sender = m->sender;
	s->seen.enqueue_tsc = m->enqueue_tsc;
	fx_log_add(&s->log, *ACT_PAYLOAD(m, int));
}

static void h_echo(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	if (s != NULL && s->timed != NULL) {
		s->timed->call_seq = atomic_fetch_add(&s->timed->seq, 1) + 1;
		s->timed->inside_at_call = atomic_load(&s->timed->inside);
	}
	act_reply(m, T_ECHO, m->payload, m->size);
}

static void h_hold(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	(void)m;
	pthread_barrier_wait(s->hold_in);
	while (!atomic_load(&s->release))
		usleep(100);
}

/* T_PARK: keep the running thread inside this handler until released
 * (at most 3 * WAIT_MAX_S, so that a failed test cannot park it for good). */
static void h_park(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	double t0 = tw_now_s();

	(void)self;
	(void)m;
	atomic_store(&s->parked, 1);
	while (!atomic_load(&s->release)) {
		if (tw_now_s() - t0 > 3 * WAIT_MAX_S) {
			atomic_store(&s->park_timed_out, 1);
			break;
		}
		usleep(100);
	}
}

static double elapsed_ms(double since)
{
	return (tw_now_s() - since) * 1e3;
}

static void h_hold_timed(struct act_actor *self, void *state, struct act_msg *m)
{
	struct timed_hold *h = ((struct st *)state)->timed;
	double t0 = tw_now_s(), seen;

	(void)m;
	atomic_store(&h->inside, 1);
	for (;;) {
		h->saw_waiter = atomic_load(&h->waiter->waiting_on) == self;
		if (h->saw_waiter || elapsed_ms(t0) > WAIT_MAX_S * 1e3)
			break;
		usleep(50);
	}
	seen = tw_now_s();
	while (h->until_asleep && atomic_load(&self->lock_sleeps) == h->sleeps_before &&
	       elapsed_ms(seen) < WAIT_MAX_S * 1e3)
		usleep(50);
	while (elapsed_ms(seen) < HOLD_MS)
		usleep(1000);
	atomic_store(&h->inside, 0);
	h->hold_end_seq = atomic_fetch_add(&h->seq, 1) + 1;
}

static const act_handler_fn handlers[T_COUNT] = {h_log, h_echo, h_hold, h_park, h_hold_timed};

static void create_rejects_bad_options(void **unused)
{
	struct act_actor_opts o = {.name = "x"};

	(void)unused;
	errno = 0;
	assert_null(act_actor_create(&o));
	assert_int_equal(errno, EINVAL);
	assert_null(act_actor_create(NULL));
	o.handlers = handlers;
	o.handler_count = T_COUNT;
	o.group_private = true; /* private needs a group */
	assert_null(act_actor_create(&o));
	assert_int_equal(errno, EINVAL);
}

static void lifecycle_and_send(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct act_actor_opts o = {.name = "a", .handlers = handlers, .handler_count = T_COUNT,
				   .state = &s, .group = g};
	struct act_actor *a = act_actor_create(&o);
	int v = 7;

	(void)unused;
	assert_non_null(a);
	assert_string_equal(act_actor_name(a), "a");
	assert_ptr_equal(act_actor_state(a), &s);
	assert_ptr_equal(act_actor_group(a), g);
	/* not started: refused */
	assert_int_equal(act_send_copy(a, T_LOG, &v, sizeof(v)), -ESHUTDOWN);
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 1;
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), -ESHUTDOWN);

	assert_int_equal(act_actor_start(a), 0);
	assert_int_equal(act_actor_start(a), -EALREADY);
	fx_send_int(a, T_LOG, 41);
	assert_int_equal(s.log.n, 0); /* queued, not run */
	assert_int_equal(act_group_queued(g), 1);
	assert_int_equal(act_group_drain(g), 1);
	assert_int_equal(s.log.n, 1);
	assert_int_equal(s.log.v[0], 41);

	/* unknown type */
	act_msg_init(&req.hdr, T_COUNT + 3, sizeof(int));
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), -ENOTSUP);
	assert_int_equal(act_send_copy(a, T_COUNT + 3, &v, sizeof(v)), -ENOTSUP);
	/* a stack message cannot be sent asynchronously */
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	assert_int_equal(act_send(a, &req.hdr), -EINVAL);

	assert_int_equal(act_actor_stop(a), 0);
	assert_int_equal(act_send_copy(a, T_LOG, &v, sizeof(v)), -ESHUTDOWN);
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), -ESHUTDOWN);
	/* restart after stop */
	assert_int_equal(act_actor_start(a), 0);
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

/* DESIGN 2.4: m1, m2, m3 queued, then fast_send(m4): m4 runs first. */
static void fast_send_runs_ahead_of_queued(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	int i;

	(void)unused;
	for (i = 1; i <= 3; i++)
		fx_send_int(a, T_LOG, i);
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 4;
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(s.log.n, 1);
	assert_int_equal(act_group_drain(g), 3);
	assert_int_equal(s.log.n, 4);
	assert_int_equal(s.log.v[0], 4);
	assert_int_equal(s.log.v[1], 1);
	assert_int_equal(s.log.v[2], 2);
	assert_int_equal(s.log.v[3], 3);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

/*
 * DESIGN 2.4 with a running consumer: the group's thread is parked inside a
 * handler of member P, and X's messages 1, 2, 3 are queued behind it. An
 * act_fast_send(X, 4) from another thread must run and return while the
 * group's thread is still parked, with 1, 2, 3 still queued and not run. A
 * fast_send that queued behind the mailbox (or waited for the group's
 * thread) could not return before P's handler does: the test gives it
 * WAIT_MAX_S, then releases P and fails.
 */
struct prio_call {
	struct act_actor *x;
	struct act_group *g;
	struct st *xs;
	_Atomic int done;
	int rc;
	uint32_t queued_after;  /* act_group_queued() when the call returned */
	unsigned logged_after;  /* X's handler runs when the call returned */
};

static void *prio_fast_send(void *arg)
{
	struct prio_call *c = arg;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 4;
	c->rc = act_fast_send(c->x, &req.hdr, NULL, 0);
	c->queued_after = act_group_queued(c->g);
	c->logged_after = atomic_load(&c->xs->log.n);
	atomic_store(&c->done, 1);
	return NULL;
}

static void fast_send_overtakes_busy_group_thread(void **unused)
{
	struct act_group_opts go = {.name = "busy", .queue = ACT_QUEUE_BQUEUE, .capacity = 16,
				    .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct st ps = {0}, xs = {0};
	struct act_actor *p, *x;
	struct prio_call c = {.g = g, .xs = &xs};
	struct act_actor_stats st;
	bool parked, returned, p_still_parked;
	pthread_t th;
	int i;

	(void)unused;
	assert_non_null(g);
	p = fx_actor("p", g, handlers, T_COUNT, &ps, false);
	x = fx_actor("x", g, handlers, T_COUNT, &xs, false);
	c.x = x;
	assert_int_equal(act_group_start(g), 0);
	fx_send_int(p, T_PARK, 0);
	parked = wait_flag(&ps.parked, WAIT_MAX_S);
	if (!parked)
		atomic_store(&ps.release, 1);
	assert_true(parked);
	for (i = 1; i <= 3; i++)
		fx_send_int(x, T_LOG, i);
	assert_int_equal(act_group_queued(g), 3);

	assert_int_equal(pthread_create(&th, NULL, prio_fast_send, &c), 0);
	returned = wait_flag(&c.done, WAIT_MAX_S);
	/* P never returns on its own before 3 * WAIT_MAX_S: still parked */
	p_still_parked = !atomic_load(&ps.park_timed_out);
	atomic_store(&ps.release, 1);
	if (!returned) {
		/* released: a fast_send queued behind the mailbox finishes now */
		wait_flag(&c.done, WAIT_MAX_S);
		fail_msg("act_fast_send(X) did not return within %.0f s while the group's thread "
			 "was busy in another member's handler: it waited behind the mailbox "
			 "(returned %s once that handler was released)",
			 WAIT_MAX_S, atomic_load(&c.done) ? "only" : "not even");
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(p_still_parked);
	assert_int_equal(c.rc, 0);
	/* it ran on the caller's thread, ahead of 1, 2, 3, which were all still queued */
	assert_int_equal(c.logged_after, 1);
	assert_int_equal(c.queued_after, 3);

	/* released: the group's thread runs 1, 2, 3 after it */
	assert_true(wait_count(&xs.log.n, 4, WAIT_MAX_S));
	assert_int_equal(act_group_stop(g), 0);
	assert_int_equal(xs.log.n, 4);
	assert_int_equal(xs.log.v[0], 4);
	assert_int_equal(xs.log.v[1], 1);
	assert_int_equal(xs.log.v[2], 2);
	assert_int_equal(xs.log.v[3], 3);
	act_actor_stats(x, &st);
	assert_int_equal(st.sync_completions, 1);
	assert_int_equal(st.async_runs, 3);
	act_actor_stop(p);
	act_actor_stop(x);
	act_actor_destroy(p);
	act_actor_destroy(x);
	act_group_destroy(g);
}

static void instrumentation_fields(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_LOCKFREE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	struct act_mailbox_stats ms;

	(void)unused;
	/* off by default: the send stamps nothing */
	assert_false(act_group_instrumented(g));
	fx_send_int(a, T_LOG, 0);
	fx_send_int(a, T_LOG, 0);
	assert_int_equal(act_group_step(g, 2), 2);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.mailbox_was_empty, 0);
	assert_int_equal(s.seen.enqueue_tsc, 0);
	assert_ptr_equal(s.seen.dest, a);
	act_group_mailbox_stats(g, &ms);
	assert_int_equal(ms.max_depth, 0);

	act_group_set_instrument(g, true);
	assert_true(act_group_instrumented(g));
	fx_send_int(a, T_LOG, 1);
	fx_send_int(a, T_LOG, 2);
	assert_int_equal(act_group_step(g, 1), 1);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.mailbox_was_empty, 1);
	assert_ptr_equal(s.seen.dest, a);
	assert_null(s.seen.sender);
	assert_true(s.seen.enqueue_tsc != 0);
	assert_int_equal(act_group_step(g, 1), 1);
	assert_int_equal(s.seen.qdepth, 1);
	assert_int_equal(s.seen.mailbox_was_empty, 0);
	act_group_mailbox_stats(g, &ms);
	assert_int_equal(ms.max_depth, 2);

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 3;
	assert_int_equal(act_fast_send(a, &req.hdr, NULL, 0), 0);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.enqueue_tsc, 0);
	assert_ptr_equal(s.seen.dest, a);

	/* and off again */
	act_group_set_instrument(g, false);
	fx_send_int(a, T_LOG, 4);
	fx_send_int(a, T_LOG, 5);
	assert_int_equal(act_group_step(g, 2), 2);
	assert_int_equal(s.seen.qdepth, 0);
	assert_int_equal(s.seen.enqueue_tsc, 0);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

static void overflow_fail_and_drop(void **unused)
{
	struct act_group *gf = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 2);
	struct act_group *gd = fx_group(ACT_QUEUE_BQUEUE_BATCHED, ACT_OVERFLOW_DROP_NEWEST, 2);
	struct st sf = {0}, sd = {0};
	struct act_actor *af = fx_actor("f", gf, handlers, T_COUNT, &sf, false);
	struct act_actor *ad = fx_actor("d", gd, handlers, T_COUNT, &sd, false);
	struct act_mailbox_stats ms;
	struct act_msg *m;

	(void)unused;
	act_group_set_instrument(gd, true); /* max_depth is kept only when instrumented */
	fx_send_int(af, T_LOG, 1);
	fx_send_int(af, T_LOG, 2);
	m = act_msg_alloc(T_LOG, sizeof(int));
	assert_non_null(m);
	*ACT_PAYLOAD(m, int) = 3;
	assert_int_equal(act_send(af, m), -EAGAIN);
	/* the caller still owns it: it can retry after a drain */
	assert_int_equal(act_group_drain(gf), 2);
	assert_int_equal(act_send(af, m), 0);
	assert_int_equal(act_group_drain(gf), 1);
	assert_int_equal(sf.log.v[2], 3);
	act_group_mailbox_stats(gf, &ms);
	assert_int_equal(ms.full_fails, 1);
	assert_int_equal(ms.dequeued, 3);
	assert_int_equal(ms.enqueued, 3);
	assert_int_equal(ms.dropped, 0);

	fx_send_int(ad, T_LOG, 1);
	fx_send_int(ad, T_LOG, 2);
	fx_send_int(ad, T_LOG, 3); /* dropped, returns 0 */
	fx_send_int(ad, T_LOG, 4);
	assert_int_equal(act_group_drain(gd), 2);
	act_group_mailbox_stats(gd, &ms);
	assert_int_equal(ms.dropped, 2);
	assert_int_equal(sd.log.n, 2);
	assert_int_equal(sd.log.v[1], 2);
	assert_true(ms.max_depth >= 1);

	act_actor_stop(af);
	act_actor_stop(ad);
	act_actor_destroy(af);
	act_actor_destroy(ad);
	act_group_destroy(gf);
	act_group_destroy(gd);
}

struct blocker {
	struct act_actor *to;
	int sent;
};

static void *send_many(void *arg)
{
	struct blocker *b = arg;
	int i;

	for (i = 0; i < 64; i++) {
		int v = i;

		if (act_send_copy(b->to, T_LOG, &v, sizeof(v)) == 0)
			b->sent++;
	}
	return NULL;
}

/* BLOCK: a producer on another thread waits for space; the consumer's own
 * thread gets -EAGAIN instead of waiting on itself. */
static void overflow_block(void **unused)
{
	struct act_group_opts go = {.name = "blk", .queue = ACT_QUEUE_BQUEUE, .capacity = 4,
				    .overflow = ACT_OVERFLOW_BLOCK, .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct st s = {0};
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	struct blocker b = {.to = a};
	struct act_mailbox_stats ms;
	pthread_t th;
	int v = 0;

	(void)unused;
	assert_int_equal(pthread_create(&th, NULL, send_many, &b), 0);
	while (s.log.n < 64) {
		if (act_group_step(g, 1) == 0)
			usleep(50);
	}
	pthread_join(th, NULL);
	assert_int_equal(b.sent, 64);
	for (v = 0; v < 64; v++)
		assert_int_equal(s.log.v[v], v);
	act_group_mailbox_stats(g, &ms);
	assert_true(ms.blocked >= 1);
	/* this thread is now the group's thread: a full mailbox is -EAGAIN */
	for (v = 0; v < 4; v++)
		fx_send_int(a, T_LOG, v);
	assert_int_equal(act_send_copy(a, T_LOG, &v, sizeof(v)), -EAGAIN);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g); /* frees the 4 left and counts them */
}

struct holder {
	struct act_actor *a;
	pthread_barrier_t in;
};

static void *hold_lock(void *arg)
{
	struct holder *h = arg;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_HOLD, sizeof(int));
	act_fast_send(h->a, &req.hdr, NULL, 0);
	return NULL;
}

static void *hold_lock_timed(void *arg)
{
	struct timed_hold *h = arg;

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_HOLD_TIMED, sizeof(int));
	act_fast_send(h->a, &req.hdr, NULL, 0);
	return NULL;
}

static const char *wait_name(enum act_wait wait)
{
	return wait == ACT_WAIT_SLEEP ? "act_fast_send" :
	       wait == ACT_WAIT_ADAPTIVE ? "act_fast_send_adaptive" : "act_fast_send_spin";
}

/*
 * Another thread holds @a's lock and releases it itself, HOLD_MS after it
 * saw this thread wait for it (and, for the sleeping forms, saw it asleep).
 * The call in mode @wait must return only after that release: it took at
 * least HOLD_MS, and its handler ran after the holder's had returned (order
 * stamps; never both inside). The sleeping forms (act_fast_send,
 * act_fast_send_adaptive once its spins are used up) slept: lock_sleeps
 * moved; the spinning form did not: lock_sleeps unchanged.
 */
static void check_wait_on_held_lock(struct act_actor *a, struct st *s, enum act_wait wait)
{
	struct timed_hold h = {.a = a, .waiter = &act__tls_thread,
			       .until_asleep = wait != ACT_WAIT_SPIN};
	uint64_t sleeps_after;
	double t0, took_ms;
	pthread_t th;
	int out = 0, rc;

	h.sleeps_before = atomic_load(&a->lock_sleeps);
	s->timed = &h;
	assert_int_equal(pthread_create(&th, NULL, hold_lock_timed, &h), 0);
	assert_true(wait_flag(&h.inside, WAIT_MAX_S));
	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_ECHO, sizeof(int));
	req.body = 70 + (int)wait;
	t0 = tw_now_s();
	rc = act_fast_send_opt(a, &req.hdr, &out, sizeof(out), wait, 0);
	took_ms = elapsed_ms(t0);
	assert_int_equal(pthread_join(th, NULL), 0);
	s->timed = NULL;
	sleeps_after = atomic_load(&a->lock_sleeps);

	assert_int_equal(rc, (int)sizeof(int));
	assert_int_equal(out, 70 + (int)wait);
	if (!h.saw_waiter)
		fail_msg("%s: the holder never saw the caller wait for the lock", wait_name(wait));
	/* it waited for the release, which came HOLD_MS after it started waiting */
	if (took_ms < HOLD_MS - 1)
		fail_msg("%s returned after %.1f ms, before the holder released the lock "
			 "(held %d ms after the caller began to wait)", wait_name(wait), took_ms,
			 HOLD_MS);
	if (!(h.call_seq > h.hold_end_seq && h.inside_at_call == 0))
		fail_msg("%s: its handler ran (stamp %llu) before the holder's returned "
			 "(stamp %llu, holder inside: %d)", wait_name(wait),
			 (unsigned long long)h.call_seq, (unsigned long long)h.hold_end_seq,
			 h.inside_at_call);
	if (wait == ACT_WAIT_SPIN && sleeps_after != h.sleeps_before)
		fail_msg("act_fast_send_spin slept on the lock (lock_sleeps %llu -> %llu)",
			 (unsigned long long)h.sleeps_before, (unsigned long long)sleeps_after);
	if (wait != ACT_WAIT_SPIN && !(sleeps_after > h.sleeps_before))
		fail_msg("%s did not sleep on the held lock (lock_sleeps %llu -> %llu; the holder "
			 "waited %.0f s for it)", wait_name(wait),
			 (unsigned long long)h.sleeps_before, (unsigned long long)sleeps_after,
			 WAIT_MAX_S);
}

/* fast_send_x, fast_send_void, spin, adaptive and sleep against a held lock. */
static void fast_send_family_on_held_lock(void **unused)
{
	struct act_group *g = fx_group(ACT_QUEUE_BQUEUE, ACT_OVERFLOW_FAIL, 16);
	struct st s = {0};
	struct holder h;
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, &s, false);
	struct act_actor_stats st;
	pthread_t th;
	int out = 0;

	(void)unused;
	h.a = a;
	pthread_barrier_init(&h.in, NULL, 2);
	s.hold_in = &h.in;
	assert_int_equal(pthread_create(&th, NULL, hold_lock, &h), 0);
	pthread_barrier_wait(&h.in); /* the other thread is inside a's handler */

	ACT_STACK_MSG(req, int);
	act_msg_init(&req.hdr, T_ECHO, sizeof(int));
	req.body = 5;
	assert_int_equal(act_fast_send_x(a, &req.hdr, &out, sizeof(out)), -EBUSY);
	act_actor_stats(a, &st);
	assert_int_equal(st.busy_returns, 1);

	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 99;
	assert_int_equal(act_fast_send_void(a, &req.hdr), 1); /* fell back */
	req.body = -1; /* the queued copy must not see this */
	act_actor_stats(a, &st);
	assert_int_equal(st.async_fallbacks, 1);
	assert_int_equal(act_group_queued(g), 1);
	/* a pool request is copied too: the caller keeps it and may free it */
	struct act_msg *pm = act_msg_alloc(T_LOG, sizeof(int));
	int v = 98;

	assert_non_null(pm);
	memcpy(pm->payload, &v, sizeof(v));
	assert_int_equal(act_fast_send_void(a, pm), 1);
	v = -1;
	memcpy(pm->payload, &v, sizeof(v));
	act_msg_free(pm);
	assert_int_equal(act_group_queued(g), 2);

	atomic_store(&s.release, 1);
	/* blocking forms now wait for the holder and then run */
	act_msg_init(&req.hdr, T_ECHO, sizeof(int));
	req.body = 6;
	assert_int_equal(act_fast_send_spin(a, &req.hdr, &out, sizeof(out)), (int)sizeof(int));
	assert_int_equal(out, 6);
	pthread_join(th, NULL);

	assert_int_equal(act_group_drain(g), 2);
	assert_int_equal(s.log.v[0], 99);
	assert_int_equal(s.log.v[1], 98);

	/* held again, for a known time: the sleeping, adaptive and spinning
	 * forms each wait for the release (check_wait_on_held_lock()) */
	check_wait_on_held_lock(a, &s, ACT_WAIT_SLEEP);
	check_wait_on_held_lock(a, &s, ACT_WAIT_ADAPTIVE);
	check_wait_on_held_lock(a, &s, ACT_WAIT_SPIN);

	/* free lock: void completes synchronously */
	act_msg_init(&req.hdr, T_LOG, sizeof(int));
	req.body = 100;
	assert_int_equal(act_fast_send_void(a, &req.hdr), 0);
	assert_int_equal(s.log.v[2], 100);
	act_actor_stats(a, &st);
	assert_int_equal(st.async_fallbacks, 2);
	assert_int_equal(st.async_runs, 2);
	/* T_HOLD x1, T_HOLD_TIMED x3, echo x4 (spin; sleep, adaptive, spin), void x1 */
	assert_int_equal(st.sync_completions, 9);
	assert_int_equal(act_fast_send_opt(a, &req.hdr, NULL, 0, ACT_WAIT_NONE + 1, 0), -EINVAL);

	/* the same waits on a lock released by a plain store (the sleepers'
	 * protocol S1-S4 of actor.c; the exchange where membarrier is refused) */
	{
		struct st sr = {0};
		struct act_actor_opts o = {.name = "store", .handlers = handlers,
					   .handler_count = T_COUNT, .state = &sr, .group = g,
					   .lock_release_store = true};
		struct act_actor *r = act_actor_create(&o);

		assert_non_null(r);
		assert_int_equal(act_actor_start(r), 0);
		if (!r->release_store)
			fprintf(stderr, "# membarrier unavailable: lock_release_store falls back "
				"to the exchange release\n");
		check_wait_on_held_lock(r, &sr, ACT_WAIT_SLEEP);
		check_wait_on_held_lock(r, &sr, ACT_WAIT_ADAPTIVE);
		check_wait_on_held_lock(r, &sr, ACT_WAIT_SPIN);
		act_actor_stop(r);
		act_actor_destroy(r);
	}

	pthread_barrier_destroy(&h.in);
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
}

/* Own-mailbox actor: its own thread runs the handler. */
struct own_st {
	_Atomic int count;
	pthread_t thread;
};

static void h_own(struct act_actor *self, void *state, struct act_msg *m)
{
	struct own_st *s = state;

	(void)self;
	(void)m;
	s->thread = pthread_self();
	atomic_fetch_add(&s->count, 1);
}

static void own_mailbox_actor_has_its_thread(void **unused)
{
	static const act_handler_fn hs[1] = {h_own};
	struct act_group_opts mb = {.queue = ACT_QUEUE_BQUEUE_BATCHED, .capacity = 64, .cpu = -1};
	struct own_st s = {0};
	struct act_actor_opts o = {.name = "own", .handlers = hs, .handler_count = 1,
				   .state = &s, .mailbox = &mb};
	struct act_actor *a = act_actor_create(&o);
	int i;

	(void)unused;
	assert_non_null(a);
	assert_int_equal(act_actor_start(a), 0);
	for (i = 0; i < 50; i++)
		assert_int_equal(act_send_copy(a, 0, &i, sizeof(i)), 0);
	for (i = 0; i < 5000 && atomic_load(&s.count) < 50; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&s.count), 50);
	assert_false(pthread_equal(s.thread, pthread_self()));
	assert_int_equal(act_actor_stop(a), 0);
	act_actor_destroy(a);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(create_rejects_bad_options),
		cmocka_unit_test(lifecycle_and_send),
		cmocka_unit_test(fast_send_runs_ahead_of_queued),
		cmocka_unit_test(fast_send_overtakes_busy_group_thread),
		cmocka_unit_test(instrumentation_fields),
		cmocka_unit_test(overflow_fail_and_drop),
		cmocka_unit_test(overflow_block),
		cmocka_unit_test(fast_send_family_on_held_lock),
		cmocka_unit_test(own_mailbox_actor_has_its_thread),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
