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

/* act_msg.flags_ bits (framework-private). */
#define ACT__F_SYNC 0x1u    /* delivered by the fast_send family */
#define ACT__F_REPLIED 0x2u /* a reply was made */
#define ACT__F_POOLED 0x4u  /* from act_msg_alloc(); class in ACT__F_CLASS */
#define ACT__F_VOID 0x8u    /* sync via fast_send_void: a reply is discarded */
#define ACT__F_TRUNC 0x10u  /* the sync reply did not fit the buffer */
#define ACT__F_CLASS_SHIFT 8
#define ACT__F_CLASS_MASK (0xfu << ACT__F_CLASS_SHIFT)

/*
 * Thread registry. Every thread that takes an actor lock gets a small id
 * (1 .. ACT__MAX_THREADS-1); the lock word stores the owner's id so that a
 * waiter can walk owner -> the lock that owner waits on -> ... without any
 * extra store on the uncontended path.
 */
#define ACT__MAX_THREADS 1024u
#define ACT__LOCK_WAITERS 0x80000000u
/* Biased lock (act_actor_opts.lock_bias, actor.c): the word is BIAS | id
 * while the lock is biased to thread id, and BIAS | REVOKING | id while one
 * thread revokes that bias. No WAITERS bit is ever set on a biased word. */
#define ACT__LOCK_BIAS 0x40000000u
#define ACT__LOCK_REVOKING 0x20000000u
#define ACT__LOCK_ID_MASK 0x1fffffffu

struct act__thread {
	uint32_t id;    /* 0 until registered */
	uint32_t depth; /* entries used in chain[] */
	struct act_chain_entry chain[ACT_CHAIN_MAX];
	/*
	 * Actor whose lock this thread is blocked on, NULL otherwise. Written
	 * by this thread only (seq_cst), read by other threads' deadlock walks
	 * (seq_cst); the pairing is described at act__lock_contended().
	 */
	_Atomic(struct act_actor *) waiting_on;
	unsigned last_cycle_len;
	struct act_chain_entry last_cycle[ACT_CHAIN_MAX + 1];
};

extern ACT__TLS struct act__thread act__tls_thread;
extern _Atomic(struct act__thread *) act__threads[ACT__MAX_THREADS];

void act__thread_register(struct act__thread *t);

static inline struct act__thread *act__self_thread(void)
{
	struct act__thread *t = &act__tls_thread;

	if (act__unlikely(t->id == 0))
		act__thread_register(t);
	return t;
}

enum act__actor_state {
	ACT__ACTOR_CREATED = 0,
	ACT__ACTOR_RUNNING,
	ACT__ACTOR_STOPPED,
	ACT__ACTOR_DEAD,
};

struct act_group;

/*
 * Layout: the read-mostly fields every delivery reads share one line; the
 * lock word (written by every lock owner) and the reference count (written
 * by every async sender and the consumer) have a line each, so a sender
 * reading `state` does not pull the line the receiver's lock writes
 * (measured: spinning cross-thread round trip -12% to -21%).
 */
struct act_actor {
	/* read by every delivery */
	_Atomic uint32_t state; /* enum act__actor_state */
	bool group_private;
	uint8_t cycle_policy;  /* enum act_cycle_policy */
	uint32_t handler_count;
	act_handler_fn *handlers;
	void *state_ptr;
	struct act_group *group;
	bool own_group; /* group created for this actor alone */
	/* lock release: a store-release with the sleeper protocol (true), or
	 * the exchange (false: membarrier unavailable); fixed at creation */
	bool release_store;
	/* the next acquire of a free word may bias the lock to its thread:
	 * set at creation (lock_bias and membarrier), cleared for good by the
	 * first revocation (relaxed; a stale true only re-biases once) */
	_Atomic bool lock_bias;
	char name[32];

	/*
	 * The lock word: 0 free, else the owner's id; with the exchange release
	 * also ACT__LOCK_WAITERS once someone sleeps. sleepers: threads between
	 * their decision to sleep and their acquire (store release only); on
	 * the lock's line, which the releasing owner already holds.
	 */
	act__cache_aligned _Atomic uint32_t lock;
	_Atomic uint32_t sleepers;
	/* 1 while the bias owner runs a handler through the bias (its only
	 * writer), 0 otherwise; read by a revoker after its membarrier */
	_Atomic uint32_t bias_in;
	/* The chain index at which the last thread to push this actor pushed
	 * it: the cycle check's O(1) hint (actor.c, Cycle detection). Written
	 * only by a thread with exclusive access, just before its push; a
	 * reader trusts it only if its own chain holds this actor there. On
	 * the lock line: a lockable caller reads it just before its CAS. */
	_Atomic uint32_t chain_pos;
	/* one reference per queued message plus one for the creator */
	act__cache_aligned _Atomic uint32_t refs;

	/* counters written under the lock (act__stat_inc_owned) */
	act__cache_aligned _Atomic uint64_t sync_completions;
	_Atomic uint64_t async_runs;
	/* counters written by any thread (act__stat_inc_shared) */
	_Atomic uint64_t async_fallbacks;
	_Atomic uint64_t busy_returns;
	_Atomic uint64_t cycles;
	_Atomic uint64_t deadlocks;
	/* futex waits on the lock (internal, read by the tests) */
	_Atomic uint64_t lock_sleeps;
	/* biases revoked (at most one per lock_bias actor, give or take a
	 * re-bias on a stale read) */
	_Atomic uint64_t bias_revocations;
};

enum act__group_state {
	ACT__GROUP_IDLE = 0,
	ACT__GROUP_RUNNING,
	ACT__GROUP_STOPPING,
};

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

	/* consumer-owned counters */
	act__cache_aligned _Atomic uint64_t dequeued;
	/* producer counters (any thread) */
	act__cache_aligned _Atomic uint64_t full_fails;
	_Atomic uint64_t dropped;
	_Atomic uint64_t blocked;
	_Atomic uint64_t max_depth;
	_Atomic uint64_t discarded;
};

/*
 * Inline messages (LOCKFREE and BQUEUE* mailboxes, whose ring cells are
 * struct act__qcell; not SHARDED). An asynchronous message of
 * at most ACT__INLINE_MAX payload bytes, sent while the mailbox is not
 * instrumented, is copied into its ring cell instead of travelling as a
 * pool block: cell kind = 1 + size, word = type, ptr[0] = destination,
 * ptr[1] = sender, data = payload. The consumer copies the cell into an
 * act__inline_msg on its stack and frees the cell before it runs the
 * handler, so the cell is never read after its release and the handler's
 * message lives until the handler returns (act.h: handlers do not own it).
 */
#define ACT__INLINE_MAX ACT__QCELL_DATA

ACT__NO_VLA_NOT_AT_END_BEGIN
struct act__inline_msg {
	struct act_msg hdr;
	unsigned char payload[ACT__INLINE_MAX];
} ACT__NO_VLA_NOT_AT_END_END;

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
void act__actor_unref(struct act_actor *a);
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

/* Whether a send of @len payload bytes to @g's mailbox travels inline. */
static inline bool act__group_takes_inline(struct act_group *g, uint32_t len)
{
	/* relaxed: as in act__group_enqueue(); an instrumented send needs the
	 * header fields that only a pool message carries */
	return g->queue.type != ACT_QUEUE_SHARDED && len <= ACT__INLINE_MAX &&
	       !atomic_load_explicit(&g->instrument, memory_order_relaxed);
}

#endif /* TICKWIRE_ACTOR_PVT_H */
