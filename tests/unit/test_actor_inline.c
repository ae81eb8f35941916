/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Inline messages: asynchronous sends of at most ACT__INLINE_MAX payload
 * bytes to a lockfree or bqueue mailbox travel in the ring cell, not as a
 * pool block
 * (actor_pvt.h; act_send() of a pool block from the group's own thread
 * keeps its block). The handler must not be able to tell, except through
 * act_msg_is_pooled(): every field, the payload, the order, the reply, the
 * overflow policies and their counters, instrumentation, the fallback of
 * act_fast_send_void() and destroy with messages queued behave as on the
 * pool path.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "act_fixture.h"
#include "actor_pvt.h"

enum { T_REC, T_ASK, T_ANSWER, T_VOID_SELF, T_SEND_ASK, T_COUNT };

#define MAX_RECS 512

struct rec {
	uint32_t type, size, qdepth;
	bool pooled, was_empty, tsc;
	struct act_actor *sender, *dest;
	unsigned char payload[64];
};

struct st {
	struct rec recs[MAX_RECS];
	unsigned n;
	struct act_actor *peer;
	int reply_rc, second_rc, sync_rc, void_rc;
};

/* Byte i of a test payload of @size bytes, tag @tag. */
static unsigned char pat(uint32_t tag, uint32_t size, uint32_t i)
{
	return (unsigned char)(tag * 31u + size * 7u + i + 1u);
}

static void fill(unsigned char *p, uint32_t tag, uint32_t size)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		p[i] = pat(tag, size, i);
}

static void h_rec(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	struct rec *r;

	(void)self;
	assert_true(s->n < MAX_RECS);
	r = &s->recs[s->n++];
	r->type = m->type;
	r->size = m->size;
	r->pooled = act_msg_is_pooled(m);
	r->sender = m->sender;
	r->dest = m->dest;
	r->qdepth = m->qdepth;
	r->was_empty = m->mailbox_was_empty != 0;
	r->tsc = m->enqueue_tsc != 0;
	assert_true(m->size <= sizeof(r->payload));
	memcpy(r->payload, m->payload, m->size);
}

/* Replies 8 bytes (the request's first byte + 1), then tries twice more. */
static void h_ask(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	uint64_t v = m->payload[0] + 1u;

	(void)self;
	s->reply_rc = act_reply(m, T_ANSWER, &v, sizeof(v));
	s->second_rc = act_reply(m, T_ANSWER, &v, sizeof(v));
	s->sync_rc = act_reply_sync(m, T_ANSWER, &v, sizeof(v));
}

struct bytes24 {
	unsigned char b[24];
};

/* fast_send_void to itself: a cycle, so it falls back to the mailbox. */
static void h_void_self(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	ACT_STACK_MSG(req, struct bytes24);
	(void)m;
	act_msg_init(&req.hdr, T_REC, sizeof(req.body));
	fill(req.body.b, 7, sizeof(req.body));
	s->void_rc = act_fast_send_void(self, &req.hdr);
	/* the queued message must be a copy, not a reference to our stack */
	memset(req.body.b, 0xee, sizeof(req.body));
}

/* Sends the payload to peer as a T_ASK: the request has a sender. */
static void h_send_ask(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;

	(void)self;
	assert_int_equal(act_send_copy(s->peer, T_ASK, m->payload, m->size), 0);
}

static const act_handler_fn handlers[T_COUNT] = {
	[T_REC] = h_rec,
	[T_ASK] = h_ask,
	[T_ANSWER] = h_rec,
	[T_VOID_SELF] = h_void_self,
	[T_SEND_ASK] = h_send_ask,
};

/* One group (fx_queue()), bound to this thread, with one recording actor "a". */
static void one_open(enum act_overflow ov, uint32_t capacity, struct act_group **g,
		     struct st **s, struct act_actor **a)
{
	*g = fx_group(fx_queue(), ov, capacity);
	*s = calloc(1, sizeof(**s));
	assert_non_null(*s);
	*a = fx_actor("a", *g, handlers, T_COUNT, *s, false);
	assert_int_equal(act_group_bind(*g), 0);
}

static void one_close(struct act_group *g, struct st *s, struct act_actor *a)
{
	act_actor_stop(a);
	act_actor_destroy(a);
	act_group_destroy(g);
	free(s);
}

static void check_rec(const struct rec *r, uint32_t type, uint32_t tag, uint32_t size,
		      bool pooled)
{
	uint32_t i;

	assert_int_equal(r->type, type);
	assert_int_equal(r->size, size);
	assert_int_equal(r->pooled, pooled);
	for (i = 0; i < size; i++)
		assert_int_equal(r->payload[i], pat(tag, size, i));
}

struct sender_arg {
	struct act_actor *to;
	uint32_t tag;
};

/* act_send() of a pool block of every size 0..40, from a thread of its own. */
static void *send_sizes_main(void *arg)
{
	const struct sender_arg *sa = arg;
	uint32_t size;

	for (size = 0; size <= 40; size++) {
		struct act_msg *m = act_msg_alloc(T_REC, size);

		assert_non_null(m);
		fill(m->payload, sa->tag, size);
		assert_int_equal(act_send(sa->to, m), 0);
	}
	return NULL;
}

/*
 * Every size 0..40 through act_send_copy() and act_send(): fields and bytes.
 * Inline: up to ACT__INLINE_MAX bytes, except act_send() of a pool block
 * from the group's own thread, which keeps its block.
 */
static void sizes_and_fields(void **unused)
{
	struct act_group *g;
	struct st *s;
	struct act_actor *a;
	struct sender_arg other = {.tag = 3};
	unsigned char buf[64];
	uint32_t size, k = 0;

	(void)unused;
	one_open(ACT_OVERFLOW_FAIL, 128, &g, &s, &a);
	other.to = a;
	for (size = 0; size <= 40; size++) {
		struct act_msg *m = act_msg_alloc(T_REC, size);

		fill(buf, 1, size);
		assert_int_equal(act_send_copy(a, T_REC, buf, size), 0);
		assert_non_null(m);
		fill(m->payload, 2, size);
		assert_int_equal(act_send(a, m), 0);
	}
	assert_int_equal(act_group_drain(g), 82);
	for (size = 0; size <= 40; size++) {
		check_rec(&s->recs[k], T_REC, 1, size, size > ACT__INLINE_MAX);
		assert_null(s->recs[k].sender);
		assert_ptr_equal(s->recs[k].dest, a);
		assert_int_equal(s->recs[k].qdepth, 0);
		k++;
		check_rec(&s->recs[k], T_REC, 2, size, true);
		k++;
	}
	s->n = 0;
	fx_on_thread(send_sizes_main, &other);
	assert_int_equal(act_group_drain(g), 41);
	for (size = 0; size <= 40; size++) {
		check_rec(&s->recs[size], T_REC, 3, size, size > ACT__INLINE_MAX);
		assert_ptr_equal(s->recs[size].dest, a);
	}
	one_close(g, s, a);
}

/*
 * A ring of 8 cells wrapped 200 times by a mix of inline and pool messages:
 * one order, every payload intact.
 */
static void order_across_wraps(void **unused)
{
	struct act_group *g;
	struct st *s;
	struct act_actor *a;
	unsigned char buf[64];
	uint32_t lap, i, tag = 0;

	(void)unused;
	one_open(ACT_OVERFLOW_FAIL, 8, &g, &s, &a);
	for (lap = 0; lap < 200; lap++) {
		s->n = 0;
		for (i = 0; i < 8; i++) {
			uint32_t size = i % 3 == 2 ? 48 : 4 * i;

			fill(buf, tag + i, size);
			assert_int_equal(act_send_copy(a, T_REC, buf, size), 0);
		}
		assert_int_equal(act_send_copy(a, T_REC, buf, 4), -EAGAIN);
		assert_int_equal(act_group_drain(g), 8);
		for (i = 0; i < 8; i++) {
			uint32_t size = i % 3 == 2 ? 48 : 4 * i;

			check_rec(&s->recs[i], T_REC, tag + i, size, size > ACT__INLINE_MAX);
		}
		tag += 8;
	}
	one_close(g, s, a);
}

/* An asynchronous request and its reply both travel inline. */
static void reply_inline(void **unused)
{
	struct act_group *g = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct st *sa = calloc(1, sizeof(*sa)), *sb = calloc(1, sizeof(*sb));
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, sa, false);
	struct act_actor *b = fx_actor("b", g, handlers, T_COUNT, sb, false);
	unsigned char req = 41;
	uint64_t v;

	(void)unused;
	assert_int_equal(act_group_bind(g), 0);
	/* from no actor: nobody to reply to */
	assert_int_equal(act_send_copy(b, T_ASK, &req, 1), 0);
	assert_int_equal(act_group_drain(g), 1);
	assert_int_equal(sb->reply_rc, -ENOTCONN);
	assert_int_equal(sb->sync_rc, -EPROTO);
	/* from a's handler: b's reply is enqueued on a's mailbox */
	sa->peer = b;
	assert_int_equal(act_send_copy(a, T_SEND_ASK, &req, 1), 0);
	assert_int_equal(act_group_drain(g), 3); /* a: send; b: reply; a: answer */
	assert_int_equal(sb->reply_rc, 0);
	assert_int_equal(sb->second_rc, -EALREADY);
	assert_int_equal(sb->sync_rc, -EALREADY);
	assert_int_equal(sa->n, 1);
	assert_int_equal(sa->recs[0].type, T_ANSWER);
	assert_int_equal(sa->recs[0].size, sizeof(v));
	assert_false(sa->recs[0].pooled);
	assert_ptr_equal(sa->recs[0].sender, b);
	assert_ptr_equal(sa->recs[0].dest, a);
	memcpy(&v, sa->recs[0].payload, sizeof(v));
	assert_int_equal(v, 42);
	act_actor_stop(a);
	act_actor_stop(b);
	act_actor_destroy(a);
	act_actor_destroy(b);
	act_group_destroy(g);
	free(sa);
	free(sb);
}

static void overflow_policies(void **unused)
{
	static const enum act_overflow pol[] = {ACT_OVERFLOW_FAIL, ACT_OVERFLOW_DROP_NEWEST,
						ACT_OVERFLOW_BLOCK};
	unsigned p;

	(void)unused;
	for (p = 0; p < 3; p++) {
		struct act_group *g;
		struct st *s;
		struct act_actor *a;
		struct act_mailbox_stats st;
		struct act_msg *m;
		unsigned char buf[16];
		uint32_t i;

		one_open(pol[p], 4, &g, &s, &a);
		for (i = 0; i < 4; i++) {
			fill(buf, i, sizeof(buf));
			assert_int_equal(act_send_copy(a, T_REC, buf, sizeof(buf)), 0);
		}
		fill(buf, 9, sizeof(buf));
		m = act_msg_alloc(T_REC, 8);
		assert_non_null(m);
		if (pol[p] == ACT_OVERFLOW_DROP_NEWEST) {
			assert_int_equal(act_send_copy(a, T_REC, buf, sizeof(buf)), 0);
			assert_int_equal(act_send(a, m), 0); /* freed by the runtime */
		} else {
			/* FAIL, and BLOCK from the group's own (bound) thread */
			assert_int_equal(act_send_copy(a, T_REC, buf, sizeof(buf)), -EAGAIN);
			assert_int_equal(act_send(a, m), -EAGAIN);
			act_msg_free(m); /* still ours */
		}
		act_group_mailbox_stats(g, &st);
		assert_int_equal(st.enqueued, 4);
		assert_int_equal(st.dropped, pol[p] == ACT_OVERFLOW_DROP_NEWEST ? 2 : 0);
		assert_int_equal(st.full_fails, pol[p] == ACT_OVERFLOW_DROP_NEWEST ? 0 : 2);
		assert_int_equal(act_group_queued(g), 4);
		assert_int_equal(act_group_drain(g), 4);
		for (i = 0; i < 4; i++)
			check_rec(&s->recs[i], T_REC, i, sizeof(buf), false);
		act_group_mailbox_stats(g, &st);
		assert_int_equal(st.dequeued, 4);
		one_close(g, s, a);
	}
}

struct blocker {
	struct act_actor *to;
	int rc[8];
};

static void *block_main(void *arg)
{
	struct blocker *b = arg;
	unsigned char buf[16];
	uint32_t i;

	for (i = 0; i < 8; i++) {
		fill(buf, i, sizeof(buf));
		b->rc[i] = act_send_copy(b->to, T_REC, buf, sizeof(buf));
	}
	return NULL;
}

/* BLOCK from another thread: the producer waits for space, counted, in order. */
static void overflow_block_waits(void **unused)
{
	struct act_group *g;
	struct st *s;
	struct act_actor *a;
	struct blocker b = {0};
	struct act_mailbox_stats st;
	pthread_t th;
	uint32_t i, got = 0;
	double t0 = tw_now_s();

	(void)unused;
	one_open(ACT_OVERFLOW_BLOCK, 2, &g, &s, &a);
	b.to = a;
	assert_int_equal(pthread_create(&th, NULL, block_main, &b), 0);
	while (got < 8 && tw_now_s() - t0 < 10) {
		int n = act_group_step(g, 1);

		assert_true(n >= 0);
		got += (uint32_t)n;
		if (n == 0) {
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(got, 8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(b.rc[i], 0);
		check_rec(&s->recs[i], T_REC, i, 16, false);
	}
	act_group_mailbox_stats(g, &st);
	assert_true(st.blocked >= 1);
	one_close(g, s, a);
}

/* Instrumented mailboxes stamp the header, so their sends take the pool. */
static void instrumented_uses_pool(void **unused)
{
	struct act_group *g;
	struct st *s;
	struct act_actor *a;
	unsigned char buf[8];
	uint32_t i;

	(void)unused;
	one_open(ACT_OVERFLOW_FAIL, 16, &g, &s, &a);
	act_group_set_instrument(g, true);
	for (i = 0; i < 3; i++) {
		fill(buf, i, sizeof(buf));
		assert_int_equal(act_send_copy(a, T_REC, buf, sizeof(buf)), 0);
	}
	act_group_set_instrument(g, false);
	fill(buf, 3, sizeof(buf));
	assert_int_equal(act_send_copy(a, T_REC, buf, sizeof(buf)), 0);
	assert_int_equal(act_group_drain(g), 4);
	for (i = 0; i < 3; i++) {
		check_rec(&s->recs[i], T_REC, i, sizeof(buf), true);
		assert_int_equal(s->recs[i].qdepth, i);
		assert_int_equal(s->recs[i].was_empty, i == 0);
		assert_true(s->recs[i].tsc);
	}
	check_rec(&s->recs[3], T_REC, 3, sizeof(buf), false);
	assert_int_equal(s->recs[3].qdepth, 0);
	assert_false(s->recs[3].tsc);
	one_close(g, s, a);
}

/* act_fast_send_void() falling back copies the stack request inline. */
static void void_fallback_copies(void **unused)
{
	struct act_group *g;
	struct st *s;
	struct act_actor *a;
	struct act_actor_stats ast;
	unsigned char none = 0;

	(void)unused;
	one_open(ACT_OVERFLOW_FAIL, 16, &g, &s, &a);
	assert_int_equal(act_send_copy(a, T_VOID_SELF, &none, 1), 0);
	assert_int_equal(act_group_drain(g), 2);
	assert_int_equal(s->void_rc, 1);
	assert_int_equal(s->n, 1);
	check_rec(&s->recs[0], T_REC, 7, 24, false);
	assert_ptr_equal(s->recs[0].sender, a);
	act_actor_stats(a, &ast);
	assert_int_equal(ast.async_fallbacks, 1);
	one_close(g, s, a);
}

/*
 * Messages still queued when their actor is destroyed: the group discards
 * them and drops the references they hold (LeakSanitizer sees a leaked
 * actor, AddressSanitizer a freed one read).
 */
static void destroy_with_inline_queued(void **unused)
{
	struct act_group *g = fx_group(fx_queue(), ACT_OVERFLOW_FAIL, 16);
	struct st *s = calloc(1, sizeof(*s));
	struct act_actor *a = fx_actor("a", g, handlers, T_COUNT, s, false);
	struct act_actor *b = fx_actor("b", g, handlers, T_COUNT, s, false);
	unsigned char buf[40] = {0};
	uint32_t i;

	struct act_mailbox_stats st;

	(void)unused;
	for (i = 0; i < 5; i++)
		assert_int_equal(act_send_copy(a, T_REC, buf, 8), 0);
	assert_int_equal(act_send_copy(a, T_REC, buf, sizeof(buf)), 0); /* pool */
	for (i = 0; i < 3; i++)
		assert_int_equal(act_send_copy(b, T_REC, buf, 8), 0);
	/* one reference per queued message (inline ones too), plus the creator's */
	assert_int_equal(atomic_load(&b->refs), 4);
	act_actor_stop(a);
	act_actor_destroy(a); /* 6 messages to it still queued */
	/* delivering to a destroyed actor runs nothing */
	assert_int_equal(act_group_step(g, 2), 2);
	assert_int_equal(s->n, 0);
	act_actor_stop(b);
	atomic_fetch_add(&b->refs, 1); /* ours: b outlives the group */
	act_actor_destroy(b);
	assert_int_equal(atomic_load(&b->refs), 4);
	/* closed with 7 entries queued: no further send gets in, stats count them */
	act_group_mailbox_stats(g, &st);
	assert_int_equal(st.enqueued, 9);
	act__queue_close(&g->queue);
	assert_int_equal(act__group_enqueue_inline(g, b, NULL, T_REC, buf, 8), -ESHUTDOWN);
	act_group_destroy(g); /* discards 4 for a and 3 for b */
	assert_int_equal(atomic_load(&b->refs), 1); /* the three queued ones dropped */
	act__actor_unref(b);
	free(s);
}

/* Every test runs once per queue with inline cells (act_fixture.h). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		FX_PER_INLINE_QUEUE(sizes_and_fields),
		FX_PER_INLINE_QUEUE(order_across_wraps),
		FX_PER_INLINE_QUEUE(reply_inline),
		FX_PER_INLINE_QUEUE(overflow_policies),
		FX_PER_INLINE_QUEUE(overflow_block_waits),
		FX_PER_INLINE_QUEUE(instrumented_uses_pool),
		FX_PER_INLINE_QUEUE(void_fallback_copies),
		FX_PER_INLINE_QUEUE(destroy_with_inline_queued),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
