/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Groups: one mailbox, one consumer thread (its own, or a caller that steps
 * it), any number of member actors. The run loop takes at most `batch`
 * messages per turn, delivers each under its actor's lock, and sleeps on the
 * queue after `spin` empty polls. The single queue fixes one total order on
 * everything entering the group, which is what makes a group deterministic
 * when it is fed from a recorded sequence and an injected clock.
 *
 * Lane. What the group's own handlers send to the group (act.h, "Same-thread
 * lane") does not enter the mailbox: it goes to the lane, a ring of
 * lane_mask + 1 slots (struct act__lane_slot) that the group's thread alone
 * writes and reads. Its indices only grow; lane_tail - lane_head is the
 * depth. A send reserves the slot at the tail if the lane is not full and
 * nothing spilled waits (act__lane_reserve()), writes the message into it
 * (a copy of up to ACT__INLINE_MAX bytes behind a header, or the pointer to
 * a pool block), then moves the tail and the receiver's lane_queued: plain
 * loads and stores, no lock, no RMW, no fence. Other threads read the
 * indices (relaxed) for the depth and the counters only; they never write
 * them, and never push: a send from another thread, or from outside a
 * handler, takes the mailbox.
 *
 * The loop (run_batch()) runs one message at a time: the lane's oldest
 * while the lane is not empty, else the next of the batch it took from
 * the mailbox (take[], up to ACT__TAKE, refilled when used up). The batch
 * lives in the group, not on the stack, so that a batch interrupted by lane
 * messages when the step's bound runs out resumes at the next step, in
 * order: the rule "lane first" holds between any two mailbox messages and
 * the step still runs at most its bound. A lane message runs in its slot
 * (no copy); the head moves past it as it starts (the depth no longer counts
 * it) but its slot is freed (lane_free) only after its handler returned, so
 * it is not reused under it (a step does not nest: no step inside a
 * handler, -EBUSY; every handler runs with a call chain). A lane
 * message holds no reference to its receiver: act_actor_destroy() takes
 * one for each that is still queued (lane_queued), and act__lane_done()
 * drops it.
 *
 * Spill. A lane-eligible send that finds the lane full goes to the mailbox
 * marked ACT__F_SPILL (an inline cell: ACT__CELL_SPILL in its kind), and
 * lane_spilled counts those queued there; while it is not 0, every
 * lane-eligible send takes the mailbox too, behind them, so what the
 * group's thread sends never overtakes what it sent before. Running a marked message decrements
 * the count.
 *
 * Control queue (act_send_control()). An intrusive multi-producer,
 * single-consumer list of pool messages (D. Vyukov's algorithm, written
 * from its description), linked through the header's reply_buf_, which an
 * asynchronous message does not otherwise use. A producer exchanges the
 * tail with its message, then links the previous tail to it (release); it
 * never waits and the list has no bound but the pool's, so a control
 * message is refused only when the pool is exhausted (-ENOMEM). The
 * consumer (the group's thread) pops from ctl_head; a stub node keeps the
 * list non-empty, and a push caught between its exchange and its link
 * reads as "not yet" (the producer's kick of the mailbox brings the loop
 * back). The loop checks the list between any two mailbox messages, after
 * the lane: a control message never waits behind the mailbox. Empty costs
 * two loads of lines the consumer owns unless a push just touched them.
 *
 * Edges (act_group_edge()). Each member that takes part in an edge gets a
 * bit (edge_bit, index into edge_members[]); a member's `edges` holds the
 * bits of the members it may call with act_fast_send_edge(). A new edge
 * from -> to is refused if `from` is reachable from `to` (a breadth-first
 * walk over the masks, at most 64 steps), so the declared edges stay a DAG.
 * The first start, bind or step seals them (`sealed`): after it they are
 * read-only, read with plain loads by the fast path.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor_pvt.h"

#define ACT__GROUP_BATCH_MAX 1024u
/* Lane slots by default, and at most (act_group_opts::lane_capacity). */
#define ACT__LANE_DEFAULT 256u
#define ACT__LANE_MAX (1u << 20)

static uint32_t round_up_pow2(uint32_t v)
{
	if (v <= 2)
		return 2;
	return 1u << (32 - __builtin_clz(v - 1));
}

struct act_group *act_group_create(const struct act_group_opts *o)
{
	struct act_group_opts d = {.cpu = -1};
	struct act_group *g;
	uint32_t lane_slots;
	int rc;

	if (o == NULL)
		o = &d;
	if ((unsigned)o->queue >= ACT_QUEUE_COUNT_ || o->overflow > ACT_OVERFLOW_DROP_NEWEST ||
	    o->batch > ACT__GROUP_BATCH_MAX || o->lane_capacity > ACT__LANE_MAX) {
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
	g->ctl_stub = aligned_alloc(ACT__CACHE_LINE, ACT__CACHE_LINE);
	if (g->ctl_stub == NULL) {
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	memset(g->ctl_stub, 0, ACT__CACHE_LINE);
	g->ctl_head = g->ctl_stub;
	atomic_init(&g->ctl_tail, g->ctl_stub);
	lane_slots = round_up_pow2(o->lane_capacity != 0 ? o->lane_capacity : ACT__LANE_DEFAULT);
	g->lane = aligned_alloc(ACT__CACHE_LINE, lane_slots * sizeof(*g->lane));
	if (g->lane == NULL) {
		free(g->ctl_stub);
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	/* touched now, not on the first sends */
	memset(g->lane, 0, lane_slots * sizeof(*g->lane));
	g->lane_mask = lane_slots - 1;
	rc = act__queue_init(&g->queue, o->queue, o->capacity != 0 ? o->capacity : 1024,
			     o->shards);
	if (rc != 0) {
		free(g->lane);
		free(g->ctl_stub);
		free(g);
		errno = -rc;
		return NULL;
	}
	g->queue.owner = g;
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
		.size = (cell->kind & ~ACT__CELL_SPILL) - 1,
		.sender = cell->u.inl.ptr[1],
		.flags_ = cell->kind & ACT__CELL_SPILL ? ACT__F_SPILL : 0,
		.dest = cell->u.inl.ptr[0],
	};
	/* the whole data area: a fixed-size copy, no length dispatch */
	memcpy(local->payload, cell->u.inl.data, ACT__INLINE_MAX);
	return &local->hdr;
}

/*
 * LOCKFREE, BQUEUE*: copy out up to @want (<= ACT__TAKE) entries, free
 * their cells and wake producers waiting for space before any handler runs
 * (a handler may block on another mailbox whose consumer waits for ours).
 * BQUEUE takes one lock acquisition per entry, BQUEUE_BATCHED one for all;
 * the copies run outside the lock (act__bq_ready()).
 */
static uint32_t take_cells(struct act__queue *q, void **msgs, struct act__inline_msg *local,
			   uint32_t want)
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

/*
 * Take the next batch from the mailbox: up to @want (<= ACT__TAKE)
 * messages into take[] (inline ones copied into take_local[]). Returns how
 * many.
 */
static uint32_t take_batch(struct act_group *g, uint32_t want)
{
	uint32_t n;

	if (g->queue.type != ACT_QUEUE_SHARDED)
		n = take_cells(&g->queue, g->take, g->take_local, want);
	else
		n = act__queue_pop_burst(&g->queue, g->take, want);
	g->take_n = n;
	g->take_i = 0;
	atomic_store_explicit(&g->take_left, n, memory_order_relaxed);
	return n;
}

/* Run the lane's oldest message, in its slot, which is free again only once
 * its handler returned (sends from the handler cannot overwrite it). */
static inline void run_lane_head(struct act_group *g)
{
	uint64_t head = atomic_load_explicit(&g->lane_head, memory_order_relaxed);

	atomic_store_explicit(&g->lane_head, head + 1, memory_order_relaxed);
	act__deliver_lane(g->lane[head & g->lane_mask].msg);
	g->lane_free = head + 1;
}

static inline bool lane_empty(const struct act_group *g)
{
	return atomic_load_explicit(&g->lane_head, memory_order_relaxed) ==
	       atomic_load_explicit(&g->lane_tail, memory_order_relaxed);
}

/* Control queue (file header). The link of node @m to the next one. */
static inline struct act_msg *ctl_next(struct act_msg *m)
{
	return __atomic_load_n((struct act_msg **)&m->reply_buf_, __ATOMIC_ACQUIRE);
}

static void ctl_link(struct act_group *g, struct act_msg *m)
{
	struct act_msg *prev;

	__atomic_store_n((struct act_msg **)&m->reply_buf_, NULL, __ATOMIC_RELAXED);
	prev = atomic_exchange_explicit(&g->ctl_tail, m, memory_order_acq_rel);
	__atomic_store_n((struct act_msg **)&prev->reply_buf_, m, __ATOMIC_RELEASE);
}

/* Any thread: queue pool message @m (dest, sender and a reference on dest
 * already set) on @g's control queue and end the consumer's wait. */
void act__group_ctl_push(struct act_group *g, struct act_msg *m)
{
	atomic_fetch_add_explicit(&g->ctl_enqueued, 1, memory_order_relaxed);
	ctl_link(g, m);
	act__queue_kick(&g->queue);
}

static inline bool ctl_empty(const struct act_group *g)
{
	return g->ctl_head == g->ctl_stub && ctl_next(g->ctl_stub) == NULL;
}

/* The consumer: the oldest control message, or NULL (empty, or its push
 * not linked yet). */
static struct act_msg *ctl_pop(struct act_group *g)
{
	struct act_msg *head = g->ctl_head;
	struct act_msg *next = ctl_next(head);

	if (head == g->ctl_stub) {
		if (next == NULL)
			return NULL;
		g->ctl_head = head = next;
		next = ctl_next(head);
	}
	if (next == NULL) {
		/* head is the last node: put the stub behind it first */
		if (atomic_load_explicit(&g->ctl_tail, memory_order_acquire) != head)
			return NULL;
		ctl_link(g, g->ctl_stub);
		next = ctl_next(head);
		if (next == NULL)
			return NULL;
	}
	g->ctl_head = next;
	head->reply_buf_ = NULL;
	atomic_store_explicit(&g->ctl_dequeued,
			      atomic_load_explicit(&g->ctl_dequeued, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return head;
}

/*
 * Runs up to @max messages, lane first (file header); the caller is the
 * group's thread, outside any handler of the group.
 */
static uint32_t run_batch(struct act_group *g, uint32_t max)
{
	uint32_t total = 0;

	if (max > ACT__GROUP_BATCH_MAX)
		max = ACT__GROUP_BATCH_MAX;
	while (total < max) {
		struct act_msg *m;

		if (!lane_empty(g)) {
			run_lane_head(g);
			total++;
			continue;
		}
		if (act__unlikely(!ctl_empty(g)) && (m = ctl_pop(g)) != NULL) {
			act__deliver_async(g, m);
			total++;
			continue;
		}
		if (g->take_i == g->take_n &&
		    take_batch(g, max - total < ACT__TAKE ? max - total : ACT__TAKE) == 0)
			break;
		m = g->take[g->take_i++];
		/* relaxed, single writer: the depth other threads may read */
		atomic_store_explicit(&g->take_left, g->take_n - g->take_i, memory_order_relaxed);
		if (act__unlikely(m->flags_ & ACT__F_SPILL))
			g->lane_spilled--;
		act__deliver_async(g, m);
		total++;
	}
	if (total != 0)
		atomic_store_explicit(&g->dequeued,
				      atomic_load_explicit(&g->dequeued, memory_order_relaxed) +
					      total,
				      memory_order_relaxed);
	return total;
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
	atomic_store(&g->sealed, true);
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
	if (!atomic_load_explicit(&g->sealed, memory_order_relaxed))
		atomic_store(&g->sealed, true);
	return 0;
}

int act_group_step(struct act_group *g, uint32_t max)
{
	/* Not from a handler: the loop runs with an empty call chain (it
	 * takes locks without a cycle check, and would run a group-private
	 * member inside its own handler). This also refuses a step nested in
	 * the group's own run: its handlers run with a chain. */
	if (act__unlikely(act__tls_thread.depth != 0))
		return -EBUSY;
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

/*
 * act_actor_destroy() of member @a, the group idle (act.h): the lane
 * messages that name @a as their sender hold no reference on it (actor.c,
 * Sender); give each one now. Returns how many. Plain accesses: no thread
 * runs the group.
 */
uint32_t act__lane_sweep_sender(struct act_group *g, struct act_actor *a)
{
	uint64_t head = atomic_load_explicit(&g->lane_head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&g->lane_tail, memory_order_relaxed);
	uint32_t n = 0;

	for (; head != tail; head++) {
		struct act_msg *m = g->lane[head & g->lane_mask].msg;

		if (m->sender == a && !(m->flags_ & ACT__F_SENDER_REF)) {
			m->flags_ |= ACT__F_SENDER_REF;
			n++;
		}
	}
	return n;
}

/* Drop a message that will not run: its block, and its reference to @to. */
static void discard(struct act_msg *m)
{
	act__msg_discard(m);
}

/*
 * Drop every message still queued in @g, closed and not running: the rest
 * of a batch, the lane, the mailbox. Counted as discarded; returns how
 * many. (act_group_destroy(); tests.)
 */
uint64_t act__group_discard(struct act_group *g)
{
	uint64_t head, tail, total;
	uint32_t n, i;

	total = g->take_n - g->take_i;
	for (i = g->take_i; i < g->take_n; i++)
		discard(g->take[i]);
	g->take_i = g->take_n = 0;
	head = atomic_load_explicit(&g->lane_head, memory_order_relaxed);
	tail = atomic_load_explicit(&g->lane_tail, memory_order_relaxed);
	total += tail - head;
	for (; head != tail; head++)
		act__lane_done(g->lane[head & g->lane_mask].msg);
	atomic_store_explicit(&g->lane_head, head, memory_order_relaxed);
	g->lane_free = head;
	do {
		n = take_batch(g, ACT__TAKE);
		for (i = 0; i < n; i++)
			discard(g->take[i]);
		g->take_i = g->take_n = 0;
		total += n;
	} while (n != 0);
	atomic_store_explicit(&g->take_left, 0, memory_order_relaxed);
	for (struct act_msg *m; (m = ctl_pop(g)) != NULL; total++)
		discard(m);
	if (total != 0)
		atomic_fetch_add(&g->discarded, total);
	return total;
}

void act_group_destroy(struct act_group *g)
{
	if (g == NULL)
		return;
	act_group_stop(g);
	act__queue_close(&g->queue);
	act__group_discard(g);
	act__queue_fini(&g->queue);
	free(g->lane);
	free(g->ctl_stub);
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
	return act__group_enqueue_cell(g, to, sender, type, payload, len, 0);
}

/* act__group_enqueue_inline() with @mark (0 or ACT__CELL_SPILL) in the
 * cell's kind. */
int act__group_enqueue_cell(struct act_group *g, struct act_actor *to,
			    struct act_actor *sender, uint32_t type, const void *payload,
			    uint32_t len, uint32_t mark)
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
	cell->kind = (len + 1) | mark;
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

/*
 * The instrumentation fields of pool message @m sent to @g now: stamped when
 * @instrument, zero otherwise. Returns the depth stamped: the count just
 * before, which concurrent producers may change.
 */
static inline uint32_t stamp(struct act_group *g, struct act_msg *m, bool instrument)
{
	uint32_t depth = 0;

	if (act__unlikely(instrument)) {
		depth = act__group_depth(g);
		m->qdepth = depth;
		m->mailbox_was_empty = depth == 0;
		m->enqueue_tsc = act__rdtsc();
	} else {
		m->qdepth = 0;
		m->mailbox_was_empty = 0;
		m->enqueue_tsc = 0;
	}
	return depth;
}

/* A message was queued behind @depth others: max_depth follows (relaxed, any
 * thread: a lost update only under-reports by a race). */
static inline void note_depth(struct act_group *g, uint32_t depth)
{
	if (depth + 1 > atomic_load_explicit(&g->max_depth, memory_order_relaxed))
		atomic_store_explicit(&g->max_depth, depth + 1, memory_order_relaxed);
}

int act__group_enqueue(struct act_group *g, struct act_msg *m)
{
	struct act__push_info info = {0};
	bool own_thread = atomic_load_explicit(&g->bound, memory_order_relaxed) ==
			  &act__tls_thread;
	bool block = g->overflow == ACT_OVERFLOW_BLOCK && !own_thread;
	/* relaxed: a switch, not a publication; later sends see it eventually */
	bool instrument = atomic_load_explicit(&g->instrument, memory_order_relaxed);
	uint32_t depth;
	int rc;

	/* Written before the push: once pushed, the consumer may already have
	 * run and freed the message. */
	depth = stamp(g, m, instrument);
	/* Only a blocking push can report a wait; without info the sharded
	 * queue skips summing the depth of every lane. */
	rc = act__queue_push(&g->queue, m, block, block ? &info : NULL);
	if (act__unlikely(rc != 0))
		return enqueue_failed(g, rc);
	if (act__unlikely(info.waited))
		act__stat_inc_shared(&g->blocked);
	if (act__unlikely(instrument))
		note_depth(g, depth);
	return 0;
}

/*
 * The instrumentation fields of pool message @m about to take @g's lane:
 * stamped as act__group_enqueue() does when the group is instrumented,
 * zero otherwise. The group's thread.
 */
void act__lane_stamp(struct act_group *g, struct act_msg *m)
{
	/* relaxed: as in act__group_enqueue() */
	bool instrument = atomic_load_explicit(&g->instrument, memory_order_relaxed);
	uint32_t depth = stamp(g, m, instrument);

	if (act__unlikely(instrument))
		note_depth(g, depth);
}

/*
 * A lane-eligible send went to the mailbox with result @rc (0 queued,
 * -ENOBUFS dropped, else refused): count it, and count a queued one as
 * spilled until it runs (file header, Spill). The group's thread.
 */
void act__lane_spilled(struct act_group *g, int rc)
{
	act__stat_inc_owned(&g->lane_full);
	if (rc == 0)
		g->lane_spilled++;
}

/* Messages queued in @g: the mailbox, the lane, a batch's rest. Any thread. */
uint32_t act__group_depth(const struct act_group *g)
{
	/* relaxed, head first: the tail only grows */
	uint64_t head = atomic_load_explicit(&g->lane_head, memory_order_relaxed);
	uint64_t lane = atomic_load_explicit(&g->lane_tail, memory_order_relaxed) - head;

	/* dequeued first: enqueued only grows */
	uint64_t ctl = atomic_load_explicit(&g->ctl_dequeued, memory_order_relaxed);

	ctl = atomic_load_explicit(&g->ctl_enqueued, memory_order_relaxed) - ctl;
	return act__queue_count(&g->queue) + (uint32_t)lane + (uint32_t)ctl +
	       atomic_load_explicit(&g->take_left, memory_order_relaxed);
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
	st->enqueued = st->dequeued + st->discarded + act__group_depth(g);
	st->full_fails = atomic_load_explicit(&g->full_fails, memory_order_relaxed);
	st->dropped = atomic_load_explicit(&g->dropped, memory_order_relaxed);
	st->blocked = atomic_load_explicit(&g->blocked, memory_order_relaxed);
	st->deadlocks = atomic_load_explicit(&g->deadlocks, memory_order_relaxed);
	st->max_depth = atomic_load_explicit(&g->max_depth, memory_order_relaxed);
	st->lane = atomic_load_explicit(&g->lane_tail, memory_order_relaxed);
	st->lane_full = atomic_load_explicit(&g->lane_full, memory_order_relaxed);
	st->control = atomic_load_explicit(&g->ctl_enqueued, memory_order_relaxed);
}

uint32_t act_group_queued(const struct act_group *g)
{
	return act__group_depth(g);
}

/* ------------------------------------------------------------------------ */
/* Declared edges                                                           */
/* ------------------------------------------------------------------------ */

/* The members reachable from the bits of @start through declared edges,
 * @start included. */
static uint64_t edge_reach(const struct act_group *g, uint64_t start)
{
	uint64_t reach = 0, frontier = start;

	while (frontier != 0) {
		unsigned i = (unsigned)__builtin_ctzll(frontier);
		const struct act_actor *a = g->edge_members[i];

		frontier &= frontier - 1;
		reach |= 1ull << i;
		if (a != NULL)
			frontier |= a->edges & ~reach;
	}
	return reach;
}

/* Give @a a bit in @g's edge index, if it has none. */
static void edge_index(struct act_group *g, struct act_actor *a)
{
	if (a->edge_bit != 0)
		return;
	a->edge_bit = 1ull << g->edge_count;
	g->edge_members[g->edge_count++] = a;
}

int act_group_edge(struct act_group *g, struct act_actor *from, struct act_actor *to)
{
	uint32_t need;

	if (g == NULL || from == NULL || to == NULL || from->group != g || to->group != g)
		return -EINVAL;
	if (atomic_load(&g->sealed))
		return -EBUSY;
	if (from == to)
		return -ELOOP;
	if (from->edges & to->edge_bit)
		return 0;
	/* An actor without a bit is in no edge: no path through it yet. */
	if (from->edge_bit != 0 && to->edge_bit != 0 &&
	    (edge_reach(g, to->edge_bit) & from->edge_bit) != 0)
		return -ELOOP;
	need = (from->edge_bit == 0) + (to->edge_bit == 0);
	if (g->edge_count + need > ACT__EDGE_MAX)
		return -ENOSPC;
	edge_index(g, from);
	edge_index(g, to);
	from->edges |= to->edge_bit;
	return 0;
}

/* @a is being destroyed: the edge walk no longer reads it (its bit stays
 * taken, so no later member inherits its edges). */
void act__group_forget(struct act_actor *a)
{
	if (a->edge_bit != 0)
		a->group->edge_members[__builtin_ctzll(a->edge_bit)] = NULL;
}
