/* SPDX-License-Identifier: BSD-3-Clause
 * Small helpers shared by the lib/actor tests.
 */
#ifndef TW_ACT_FIXTURE_H
#define TW_ACT_FIXTURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "act.h"
#include "tw_test.h"

/* Create and start an actor in @g (NULL: own mailbox, not started thread). */
static inline struct act_actor *fx_actor(const char *name, struct act_group *g,
					 const act_handler_fn *handlers, uint32_t n, void *state,
					 bool group_private)
{
	struct act_actor_opts o = {
		.name = name,
		.handlers = handlers,
		.handler_count = n,
		.state = state,
		.group = g,
		.group_private = group_private,
	};
	struct act_actor *a = act_actor_create(&o);

	assert_non_null(a);
	if (g != NULL)
		assert_int_equal(act_actor_start(a), 0);
	return a;
}

/* A manual (caller-stepped) group with the given queue and overflow. */
static inline struct act_group *fx_group(enum act_queue_type q, enum act_overflow ov,
					 uint32_t capacity)
{
	struct act_group_opts o = {
		.name = "fx",
		.queue = q,
		.overflow = ov,
		.capacity = capacity,
		.cpu = -1,
	};
	struct act_group *g = act_group_create(&o);

	assert_non_null(g);
	return g;
}

/*
 * Tests run once per mailbox queue whose cells carry inline messages:
 * register them with FX_PER_INLINE_QUEUE(fn); fx_queue() is the queue of
 * the test running (set by its cmocka setup).
 */
static inline enum act_queue_type *fx_queue_slot(void)
{
	static enum act_queue_type q;

	return &q;
}

static inline enum act_queue_type fx_queue(void)
{
	return *fx_queue_slot();
}

static inline int fx_set_queue(void **state)
{
	*fx_queue_slot() = *(const enum act_queue_type *)*state;
	return 0;
}

#define FX_PER_INLINE_QUEUE(fn)                                                      \
	{ "lockfree/" #fn, fn, fx_set_queue, NULL,                                   \
	  &(enum act_queue_type){ACT_QUEUE_LOCKFREE} },                              \
	{ "bqueue/" #fn, fn, fx_set_queue, NULL, &(enum act_queue_type){ACT_QUEUE_BQUEUE} }, \
	{ "bqueue_batched/" #fn, fn, fx_set_queue, NULL,                             \
	  &(enum act_queue_type){ACT_QUEUE_BQUEUE_BATCHED} }

/* Send a copy of an int payload; asserts success. */
static inline void fx_send_int(struct act_actor *to, uint32_t type, int v)
{
	assert_int_equal(act_send_copy(to, type, &v, sizeof(v)), 0);
}

/* Order log: handlers append values; tests compare sequences. */
struct fx_log {
	int v[256];
	_Atomic unsigned n;
};

static inline void fx_log_add(struct fx_log *l, int v)
{
	unsigned i = atomic_fetch_add(&l->n, 1);

	if (i < 256)
		l->v[i] = v;
}

/* Run @fn on a new thread and join it. */
static inline void fx_on_thread(void *(*fn)(void *), void *arg)
{
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, fn, arg), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
}

#endif
