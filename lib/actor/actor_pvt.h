/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Internal structures shared by actor.c, group.c and runtime.c.
 */
#ifndef TICKWIRE_ACTOR_PVT_H
#define TICKWIRE_ACTOR_PVT_H

#include <pthread.h>

#include "act_pvt.h"
#include "act_queue_pvt.h"

/*
 * The message flags, the lock word's bits, struct act__thread and struct
 * act_actor are in act_fast_pvt.h (act.h's inline calls need them).
 *
 * Thread registry. Every thread that takes an actor lock gets a small id
 * (1 .. ACT__MAX_THREADS-1); the lock word stores the owner's id so that a
 * waiter can walk owner -> the lock that owner waits on -> ... without any
 * extra store on the uncontended path.
 */
#define ACT__MAX_THREADS 1024u

extern _Atomic(struct act__thread *) act__threads[ACT__MAX_THREADS];

void act__thread_register(struct act__thread *t);

static inline struct act__thread *act__self_thread(void)
{
	struct act__thread *t = &act__tls_thread;

	if (act__unlikely(t->id == 0))
		act__thread_register(t);
	return t;
}

/*
 * Inline messages (LOCKFREE and BQUEUE* mailboxes, whose ring cells are
 * struct act__qcell; not SHARDED). An asynchronous message of
 * at most ACT__INLINE_MAX payload bytes, sent while the mailbox is not
 * instrumented, is copied into its ring cell instead of travelling as a
 * pool block: cell kind = 1 + size (| ACT__CELL_SPILL), word = type,
 * ptr[0] = destination, ptr[1] = sender, data = payload. The consumer
 * copies the cell into an act__inline_msg of its batch (act_group's
 * take_local[]) and frees the cell before it runs the handler, so the cell
 * is never read after its release and the handler's message lives until
 * the handler returns (act.h: handlers do not own it). The lane's slots
 * hold the same struct, written in place by the sender (group.c, Lane).
 */
#define ACT__INLINE_MAX ACT__QCELL_DATA

ACT__NO_VLA_NOT_AT_END_BEGIN
struct act__inline_msg {
	struct act_msg hdr;
	unsigned char payload[ACT__INLINE_MAX];
} ACT__NO_VLA_NOT_AT_END_END;

struct act_group;

enum act__group_state {
	ACT__GROUP_IDLE = 0,
	ACT__GROUP_RUNNING,
	ACT__GROUP_STOPPING,
};

/* Messages taken from the mailbox per refill of the loop's batch (group.c). */
#define ACT__TAKE 64u
/* Members of a group that may take part in declared edges (edge_bit). */
#define ACT__EDGE_MAX 64u
/* Bit of an inline cell's kind: the message was sent for the lane and
 * spilled into the mailbox (ACT__F_SPILL of a pool message). */
#define ACT__CELL_SPILL 0x100u

/*
 * A slot of the lane (group.c, Lane): msg is the message, either copied
 * into the slot (msg == &inl.hdr; handlers see it there, so it is never
 * copied again) or a pool block. Two cache lines.
 */
struct act__lane_slot {
	struct act_msg *msg;
	struct act__inline_msg inl;
} __attribute__((aligned(ACT__CACHE_LINE)));

struct act_group {
	struct act__queue queue;
	enum act_overflow overflow;
	/* act_group_set_instrument(): relaxed, read by every send */
	_Atomic bool instrument;
	uint32_t batch;
	uint32_t spin;
	int cpu;
	uint64_t (*clock)(void *ctx);
	void *clock_ctx;
	char name[32];

	_Atomic uint32_t run_state;
	bool has_thread;
	pthread_t thread;
	/* thread that runs the group: its own, or the one that bound/stepped it */
	_Atomic(struct act__thread *) bound;
	/* the lane's ring, fixed at creation */
	struct act__lane_slot *lane;
	uint32_t lane_mask;        /* slots - 1 */
	/* set for good by the first start, bind or step: no edge after it */
	_Atomic bool sealed;
	/* members with an edge_bit, by bit index; before sealing only */
	uint32_t edge_count;
	struct act_actor *edge_members[ACT__EDGE_MAX];

	/*
	 * Owned by the group's thread: the consumer, and the lane's only
	 * producer. The atomics are relaxed single-writer fields (plain loads
	 * and stores) that other threads only read, for the counters.
	 */
	act__cache_aligned _Atomic uint64_t dequeued;
	_Atomic uint64_t lane_head;   /* next lane slot to run */
	_Atomic uint64_t lane_tail;   /* next lane slot to fill; messages that took the lane */
	uint64_t lane_free;           /* slots before it are free (the one running is not) */
	_Atomic uint64_t lane_full;   /* lane-eligible sends that went to the mailbox */
	uint32_t lane_spilled;        /* of those, queued in the mailbox and not yet run */
	uint32_t take_n, take_i;      /* the batch taken from the mailbox: size, next to run */
	_Atomic uint32_t take_left;   /* take_n - take_i when the loop last returned */
	_Atomic uint64_t ctl_dequeued;/* control messages run or discarded */
	void *take[ACT__TAKE];        /* its messages (struct act_msg *) */

	/* control queue, consumer side (group.c, Control queue) */
	struct act_msg *ctl_head;     /* oldest linked node (the stub when empty) */
	struct act_msg *ctl_stub;     /* the list's stub node (header only) */

	/* control queue, producer side: every act_send_control() */
	act__cache_aligned _Atomic(struct act_msg *) ctl_tail;
	_Atomic uint64_t ctl_enqueued; /* messages pushed (RMW, any thread) */

	/* producer counters (any thread) */
	act__cache_aligned _Atomic uint64_t full_fails;
	_Atomic uint64_t dropped;
	_Atomic uint64_t blocked;
	_Atomic uint64_t max_depth;
	_Atomic uint64_t discarded;
	_Atomic uint64_t deadlocks;

	/* the batch's inline messages, copied out of their cells (group.c) */
	struct act__inline_msg take_local[ACT__TAKE];
};

/* Whether an asynchronous send to @g by thread @t takes the lane: made from
 * inside a handler on the group's own thread (group.c, Lane). */
static inline bool act__lane_eligible(const struct act_group *g, const struct act__thread *t)
{
	return t->depth != 0 && atomic_load_explicit(&g->bound, memory_order_relaxed) == t;
}

/*
 * Lane, the group's thread only: the slot a lane-eligible send may fill,
 * or NULL when it must go to the mailbox instead: the lane is full, or an
 * earlier lane-eligible send waits there (per-sender FIFO). Plain loads.
 */
static inline struct act__lane_slot *act__lane_reserve(struct act_group *g)
{
	uint64_t tail = atomic_load_explicit(&g->lane_tail, memory_order_relaxed);

	if (act__unlikely(tail - g->lane_free > g->lane_mask || g->lane_spilled != 0))
		return NULL;
	return &g->lane[tail & g->lane_mask];
}

/* Publish the slot act__lane_reserve() gave, now holding a message for
 * @to. Plain loads and stores: no other thread writes these fields. */
static inline void act__lane_commit(struct act_group *g, struct act_actor *to)
{
	atomic_store_explicit(&g->lane_tail,
			      atomic_load_explicit(&g->lane_tail, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&to->lane_queued,
			      atomic_load_explicit(&to->lane_queued, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/*
 * Copy @len bytes, mostly a few words: up to 32 bytes are moved with two
 * overlapping fixed-size copies each (inline loads and stores) instead of a
 * call to memcpy, whose size dispatch costs more than the copy (measured:
 * fast_send round trip with a 24-byte reply, see tests/perf/RESULTS.md).
 */
static inline void act__copy_small(void *dst, const void *src, uint32_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (len >= 16 && len <= 32) {
		unsigned char a[16], b[16];

		__builtin_memcpy(a, s, 16);
		__builtin_memcpy(b, s + len - 16, 16);
		__builtin_memcpy(d, a, 16);
		__builtin_memcpy(d + len - 16, b, 16);
	} else if (len >= 8 && len < 16) {
		uint64_t a, b;

		__builtin_memcpy(&a, s, 8);
		__builtin_memcpy(&b, s + len - 8, 8);
		__builtin_memcpy(d, &a, 8);
		__builtin_memcpy(d + len - 8, &b, 8);
	} else if (len >= 4 && len < 8) {
		uint32_t a, b;

		__builtin_memcpy(&a, s, 4);
		__builtin_memcpy(&b, s + len - 4, 4);
		__builtin_memcpy(d, &a, 4);
		__builtin_memcpy(d + len - 4, &b, 4);
	} else if (len != 0) {
		__builtin_memcpy(d, s, len);
	}
}

/* actor.c */
void act__deliver_async(struct act_group *g, struct act_msg *m);
void act__deliver_lane(struct act_msg *m);
void act__lane_done(struct act_msg *m);
void act__actor_unref(struct act_actor *a);
void act__msg_discard(struct act_msg *m);
void act__sender_left(struct act_actor *sender);
int act__init_once(void);

/*
 * Knobs for tests/stress/stress_lock_wake.c only; not API, never set by the
 * runtime. untimed: the lock's futex waits have no timeout, so a lost
 * wake-up hangs instead of costing 50 ms. exchange: actors created while
 * it is set use the exchange release even where membarrier works.
 */
extern _Atomic bool act__test_lock_wait_untimed;
extern _Atomic bool act__test_lock_release_exchange;
/* tests/stress/stress_bias.c, run by hand to see the test fail: a revoker
 * skips its membarrier (R2), which breaks exclusion. */
extern _Atomic bool act__test_bias_skip_membarrier;

/* runtime.c: membarrier(PRIVATE_EXPEDITED) registered at init; written
 * once before the runtime is published as initialised. */
extern bool act__membarrier_ok;

/* group.c */
int act__group_enqueue(struct act_group *g, struct act_msg *m);
int act__group_enqueue_inline(struct act_group *g, struct act_actor *to,
			      struct act_actor *sender, uint32_t type, const void *payload,
			      uint32_t len);
int act__group_enqueue_cell(struct act_group *g, struct act_actor *to,
			    struct act_actor *sender, uint32_t type, const void *payload,
			    uint32_t len, uint32_t mark);
void act__lane_stamp(struct act_group *g, struct act_msg *m);
void act__lane_spilled(struct act_group *g, int rc);
uint32_t act__group_depth(const struct act_group *g);
uint64_t act__group_discard(struct act_group *g);
void act__group_ctl_push(struct act_group *g, struct act_msg *m);
void act__group_forget(struct act_actor *a);
uint32_t act__lane_sweep_sender(struct act_group *g, struct act_actor *a);

/* Whether a send of @len payload bytes to @g's mailbox travels inline. */
static inline bool act__group_takes_inline(struct act_group *g, uint32_t len)
{
	/* relaxed: as in act__group_enqueue(); an instrumented send needs the
	 * header fields that only a pool message carries */
	return g->queue.type != ACT_QUEUE_SHARDED && len <= ACT__INLINE_MAX &&
	       !atomic_load_explicit(&g->instrument, memory_order_relaxed);
}

#endif /* TICKWIRE_ACTOR_PVT_H */
