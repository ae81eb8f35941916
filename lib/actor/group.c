/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Groups: one mailbox, one consumer thread (its own, or a caller that steps
 * it), any number of member actors. The run loop takes at most `batch`
 * messages per turn, delivers each under its actor's lock, and sleeps on the
 * queue after `spin` empty polls. The single queue fixes one total order on
 * everything entering the group, which is what makes a group deterministic
 * when it is fed from a recorded sequence and an injected clock.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor_pvt.h"

#define ACT__GROUP_BATCH_MAX 1024u

struct act_group *act_group_create(const struct act_group_opts *o)
{
	struct act_group_opts d = {.cpu = -1};
	struct act_group *g;
	int rc;

	if (o == NULL)
		o = &d;
	if ((unsigned)o->queue >= ACT_QUEUE_COUNT_ || o->overflow > ACT_OVERFLOW_DROP_NEWEST ||
	    o->batch > ACT__GROUP_BATCH_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (act__init_once() != 0) {
		errno = ENOMEM;
		return NULL;
	}
	g = aligned_alloc(ACT__CACHE_LINE, sizeof(*g));
	if (g == NULL)
		return NULL;
	memset(g, 0, sizeof(*g));
	rc = act__queue_init(&g->queue, o->queue, o->capacity != 0 ? o->capacity : 1024,
			     o->shards);
	if (rc != 0) {
		free(g);
		errno = -rc;
		return NULL;
	}
	g->overflow = o->overflow;
	atomic_init(&g->instrument, o->instrument);
	g->batch = o->batch != 0 ? o->batch : 64;
	g->spin = o->spin;
	g->cpu = o->cpu;
	g->clock = o->clock;
	g->clock_ctx = o->clock_ctx;
	snprintf(g->name, sizeof(g->name), "%s", o->name != NULL ? o->name : "group");
	return g;
}

uint64_t act_group_now(const struct act_group *g)
{
	if (g->clock != NULL)
		return g->clock(g->clock_ctx);
	return act__mono_ns();
}

/*
 * The entry of a head cell (LOCKFREE, BQUEUE*) as a message: the pool
 * message of a pointer entry, or the inline entry copied into @local (the
 * cell is freed right after, before the handler runs).
 */
static inline struct act_msg *cell_take(const struct act__qcell *cell,
					struct act__inline_msg *local)
{
	if (cell->kind == 0)
		return cell->u.item;
	local->hdr = (struct act_msg){
		.type = cell->word,
		.size = cell->kind - 1,
		.sender = cell->u.inl.ptr[1],
		.dest = cell->u.inl.ptr[0],
	};
	/* the whole data area: a fixed-size copy, no length dispatch */
	memcpy(local->payload, cell->u.inl.data, ACT__INLINE_MAX);
	return &local->hdr;
}

/*
 * Messages copied out per turn of the cell queues (LOCKFREE, BQUEUE*): the
 * default batch, and the stack of inline copies it needs (6 KiB).
 */
#define ACT__TAKE 64u

/*
 * LOCKFREE, BQUEUE*: copy out up to @want (<= ACT__TAKE) entries, free
 * their cells and wake producers waiting for space before any handler runs
 * (a handler may block on another mailbox whose consumer waits for ours).
 * BQUEUE takes one lock acquisition per entry, BQUEUE_BATCHED one for all;
 * the copies run outside the lock (act__bq_ready()).
 */
static uint32_t take_cells(struct act__queue *q, struct act_msg **msgs,
			   struct act__inline_msg *local, uint32_t want)
{
	struct act__bqueue *bq = &q->u.bq;
	const struct act__qcell *cell;
	uint32_t n = 0, avail, to_wake = 0;

	switch (q->type) {
	case ACT_QUEUE_LOCKFREE:
		while (n < want && (cell = act__lf_head(&q->u.lf, n)) != NULL) {
			msgs[n] = cell_take(cell, &local[n]);
			act__lf_release(&q->u.lf, n);
			n++;
		}
		if (n != 0)
			act__lf_advance(&q->u.lf, n);
		return n;
	case ACT_QUEUE_BQUEUE:
		while (n < want && act__bq_ready(bq) != 0) {
			msgs[n] = cell_take(act__bq_cell(bq, 0), &local[n]);
			n++;
			act__bq_release(bq, 1, &to_wake);
		}
		act__bq_wake_producers(bq, to_wake, false);
		return n;
	case ACT_QUEUE_BQUEUE_BATCHED:
		avail = act__bq_ready(bq);
		if (avail == 0)
			return 0;
		for (n = 0; n < avail && n < want; n++)
			msgs[n] = cell_take(act__bq_cell(bq, n), &local[n]);
		act__bq_release(bq, n, &to_wake);
		act__bq_wake_producers(bq, to_wake, true);
		return n;
	default:
		return 0;
	}
}

static uint32_t run_batch_cells(struct act_group *g, uint32_t max)
{
	struct act__inline_msg local[ACT__TAKE];
	struct act_msg *msgs[ACT__TAKE];
	uint32_t total = 0;

	while (total < max) {
		uint32_t want = max - total < ACT__TAKE ? max - total : ACT__TAKE;
		uint32_t n, i;

		n = take_cells(&g->queue, msgs, local, want);
		for (i = 0; i < n; i++)
			act__deliver_async(g, msgs[i]);
		total += n;
		if (n < want)
			break;
	}
	return total;
}

/* Runs up to @max messages; the caller is the group's thread. */
static uint32_t run_batch(struct act_group *g, uint32_t max)
{
	void *items[ACT__GROUP_BATCH_MAX];
	uint32_t n, i;

	if (max > ACT__GROUP_BATCH_MAX)
		max = ACT__GROUP_BATCH_MAX;
	if (g->queue.type != ACT_QUEUE_SHARDED) {
		n = run_batch_cells(g, max);
	} else {
		n = act__queue_pop_burst(&g->queue, items, max);
		for (i = 0; i < n; i++)
			act__deliver_async(g, items[i]);
	}
	if (n != 0)
		atomic_store_explicit(&g->dequeued,
				      atomic_load_explicit(&g->dequeued, memory_order_relaxed) + n,
				      memory_order_relaxed);
	return n;
}

static void *group_thread(void *arg)
{
	struct act_group *g = arg;
	struct act__thread *t = act__self_thread();

	if (g->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(g->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	pthread_setname_np(pthread_self(), g->name);
	atomic_store(&g->bound, t);
	/* acquire: pairs with the release store of STOPPING in act_group_stop(). */
	while (atomic_load_explicit(&g->run_state, memory_order_acquire) == ACT__GROUP_RUNNING) {
		if (run_batch(g, g->batch) == 0)
			act__queue_wait(&g->queue, g->spin, 0);
	}
	return NULL;
}

int act_group_start(struct act_group *g)
{
	uint32_t expected = ACT__GROUP_IDLE;
	int rc;

	if (atomic_load(&g->bound) != NULL)
		return -EALREADY;
	if (!atomic_compare_exchange_strong(&g->run_state, &expected, ACT__GROUP_RUNNING))
		return -EALREADY;
	rc = pthread_create(&g->thread, NULL, group_thread, g);
	if (rc != 0) {
		atomic_store(&g->run_state, ACT__GROUP_IDLE);
		return -rc;
	}
	g->has_thread = true;
	return 0;
}

int act_group_stop(struct act_group *g)
{
	uint32_t expected = ACT__GROUP_RUNNING;

	if (!g->has_thread)
		return 0;
	if (pthread_equal(pthread_self(), g->thread))
		return -EINVAL;
	/* release: pairs with the acquire load in the run loop. */
	if (atomic_compare_exchange_strong(&g->run_state, &expected, ACT__GROUP_STOPPING))
		act__queue_kick(&g->queue);
	pthread_join(g->thread, NULL);
	g->has_thread = false;
	atomic_store(&g->bound, NULL);
	atomic_store(&g->run_state, ACT__GROUP_IDLE);
	return 0;
}

int act_group_bind(struct act_group *g)
{
	struct act__thread *t = act__self_thread();
	struct act__thread *expected = NULL;

	if (g->has_thread)
		return -EALREADY;
	if (!atomic_compare_exchange_strong(&g->bound, &expected, t) && expected != t)
		return -EALREADY;
	return 0;
}

int act_group_step(struct act_group *g, uint32_t max)
{
	/* Already bound to this thread (every step after the first): no CAS. */
	if (atomic_load_explicit(&g->bound, memory_order_relaxed) != &act__tls_thread ||
	    g->has_thread) {
		int rc = act_group_bind(g);

		if (rc != 0)
			return rc;
	}
	return (int)run_batch(g, max != 0 ? max : g->batch);
}

int act_group_drain(struct act_group *g)
{
	int total = 0;
	int n;

	do {
		n = act_group_step(g, 0);
		if (n < 0)
			return n;
		total += n;
	} while (n > 0);
	return total;
}

/* Drop a message that will not run: its block, and its reference to @to. */
static void discard(struct act_msg *m)
{
	struct act_actor *to = m->dest;

	act_msg_free(m); /* a no-op for an inline copy */
	/* The own group of an actor being destroyed holds the last
	 * references but the actor itself frees after us. */
	act__actor_unref(to);
}

void act_group_destroy(struct act_group *g)
{
	struct act__inline_msg local[ACT__TAKE];
	struct act_msg *msgs[ACT__TAKE];
	void *items[ACT__TAKE];
	uint32_t n, i;

	if (g == NULL)
		return;
	act_group_stop(g);
	act__queue_close(&g->queue);
	for (;;) {
		if (g->queue.type != ACT_QUEUE_SHARDED) {
			n = take_cells(&g->queue, msgs, local, ACT__TAKE);
			for (i = 0; i < n; i++)
				discard(msgs[i]);
		} else {
			n = act__queue_pop_burst(&g->queue, items, ACT__TAKE);
			for (i = 0; i < n; i++)
				discard(items[i]);
		}
		if (n == 0)
			break;
		atomic_fetch_add(&g->discarded, n);
	}
	act__queue_fini(&g->queue);
	free(g);
}

/* A refused push: apply the overflow policy's accounting. -ENOBUFS: dropped. */
static int enqueue_failed(struct act_group *g, int rc)
{
	if (rc == -EAGAIN) {
		if (g->overflow == ACT_OVERFLOW_DROP_NEWEST) {
			act__stat_inc_shared(&g->dropped);
			return -ENOBUFS;
		}
		act__stat_inc_shared(&g->full_fails);
	}
	return rc;
}

/*
 * Copy a message into a cell of the mailbox (LOCKFREE, BQUEUE*;
 * act__group_takes_inline() said yes). Same policy and counters as
 * act__group_enqueue(); the mailbox is not instrumented, so there are no
 * header fields to stamp.
 */
int act__group_enqueue_inline(struct act_group *g, struct act_actor *to,
			      struct act_actor *sender, uint32_t type, const void *payload,
			      uint32_t len)
{
	bool own_thread = atomic_load_explicit(&g->bound, memory_order_relaxed) ==
			  &act__tls_thread;
	bool block = g->overflow == ACT_OVERFLOW_BLOCK && !own_thread;
	struct act__lfqueue *lf = &g->queue.u.lf;
	struct act__qcell *cell = NULL;
	bool waited = false;
	uint64_t pos = 0;
	int rc;

	/* claim: LOCKFREE reserves a position, BQUEUE* takes the lock */
	if (g->queue.type == ACT_QUEUE_LOCKFREE) {
		rc = act__lf_claim(lf, block, &pos, &waited);
		cell = &lf->cells[pos & lf->mask];
	} else {
		rc = act__bq_claim(&g->queue.u.bq, block, &cell, &waited);
	}
	if (act__unlikely(rc != 0))
		return enqueue_failed(g, rc);
	cell->kind = len + 1;
	cell->word = type;
	cell->u.inl.ptr[0] = to;
	cell->u.inl.ptr[1] = sender;
	act__copy_small(cell->u.inl.data, payload, len);
	if (g->queue.type == ACT_QUEUE_LOCKFREE)
		act__lf_publish(lf, pos);
	else
		(void)act__bq_publish(&g->queue.u.bq);
	if (act__unlikely(waited))
		act__stat_inc_shared(&g->blocked);
	return 0;
}

int act__group_enqueue(struct act_group *g, struct act_msg *m)
{
	struct act__push_info info = {0};
	bool own_thread = atomic_load_explicit(&g->bound, memory_order_relaxed) ==
			  &act__tls_thread;
	bool block = g->overflow == ACT_OVERFLOW_BLOCK && !own_thread;
	/* relaxed: a switch, not a publication; later sends see it eventually */
	bool instrument = atomic_load_explicit(&g->instrument, memory_order_relaxed);
	uint32_t depth = 0;
	int rc;

	if (act__unlikely(instrument)) {
		/* Written before the push: once pushed, the consumer may already
		 * have run and freed the message. The depth is the count just
		 * before, which concurrent producers may change. */
		depth = act__queue_count(&g->queue);
		m->qdepth = depth;
		m->mailbox_was_empty = depth == 0;
		m->enqueue_tsc = act__rdtsc();
	} else {
		m->qdepth = 0;
		m->mailbox_was_empty = 0;
		m->enqueue_tsc = 0;
	}
	/* Only a blocking push can report a wait; without info the sharded
	 * queue skips summing the depth of every lane. */
	rc = act__queue_push(&g->queue, m, block, block ? &info : NULL);
	if (act__unlikely(rc != 0))
		return enqueue_failed(g, rc);
	if (act__unlikely(info.waited))
		act__stat_inc_shared(&g->blocked);
	if (act__unlikely(instrument) &&
	    depth + 1 > atomic_load_explicit(&g->max_depth, memory_order_relaxed))
		atomic_store_explicit(&g->max_depth, depth + 1, memory_order_relaxed);
	return 0;
}

void act_group_set_instrument(struct act_group *g, bool on)
{
	atomic_store_explicit(&g->instrument, on, memory_order_relaxed);
}

bool act_group_instrumented(const struct act_group *g)
{
	return atomic_load_explicit(&g->instrument, memory_order_relaxed);
}

void act_group_mailbox_stats(const struct act_group *g, struct act_mailbox_stats *st)
{
	st->dequeued = atomic_load_explicit(&g->dequeued, memory_order_relaxed);
	st->discarded = atomic_load_explicit(&g->discarded, memory_order_relaxed);
	st->enqueued = st->dequeued + st->discarded + act__queue_count(&g->queue);
	st->full_fails = atomic_load_explicit(&g->full_fails, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&g->dropped, memory_order_relaxed);
	st->blocked = atomic_load_explicit(&g->blocked, memory_order_relaxed);
	st->max_depth = atomic_load_explicit(&g->max_depth, memory_order_relaxed);
}

uint32_t act_group_queued(const struct act_group *g)
{
	return act__queue_count(&g->queue);
}
