/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * What act.h's inline calls need to be inline in the caller
 * (act_fast_send_edge()): the actor and per-thread structures, the
 * uncontended acquire and release of an actor's lock, the call chain, the
 * synchronous delivery context. Included at the end of act.h, like DPDK's
 * rte_ring_core.h: the structures are visible so that the call compiles
 * into the caller, and they are not API; nothing outside lib/actor reads or
 * writes them but through act.h's calls. The algorithms, and why each
 * access has the order it has, are in actor.c's header.
 */
#ifndef TICKWIRE_ACT_FAST_PVT_H
#define TICKWIRE_ACT_FAST_PVT_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "act.h"

#define act__likely(x) __builtin_expect(!!(x), 1)
#define act__unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Thread-local storage of the runtime. lib/actor is a static library linked
 * into executables, so the initial-exec model is always valid; it turns
 * every access into one %fs-relative load. Under -fPIC (meson's default for
 * static libraries) the default model is global-dynamic: a __tls_get_addr
 * call that the linker later relaxes, but that the compiler has already
 * treated as a call clobbering every caller-saved register (callgrind:
 * act_fast_send to a group-private actor, 122 -> 114 instructions a call).
 */
#define ACT__TLS __thread __attribute__((tls_model("initial-exec")))

#define ACT__CACHE_LINE 64
#define act__cache_aligned _Alignas(ACT__CACHE_LINE)

/* act_msg.flags_ bits (framework-private). */
#define ACT__F_SYNC 0x1u    /* delivered by the fast_send family */
#define ACT__F_REPLIED 0x2u /* a reply was made */
#define ACT__F_POOLED 0x4u  /* from act_msg_alloc(); class in ACT__F_CLASS */
#define ACT__F_VOID 0x8u    /* sync via fast_send_void: a reply is discarded */
#define ACT__F_TRUNC 0x10u  /* the sync reply did not fit the buffer */
#define ACT__F_SPILL 0x20u  /* sent for the lane, queued in the mailbox (group.c) */
#define ACT__F_SENDER_REF 0x40u /* a lane message holds a reference on m->sender (actor.c, Sender) */
#define ACT__F_CLASS_SHIFT 8
#define ACT__F_CLASS_MASK (0xfu << ACT__F_CLASS_SHIFT)

/*
 * The lock word: 0 free, else the owner's thread id (actor.c, Lock).
 * ACT__LOCK_WAITERS: a sleeper under the exchange release. Biased lock
 * (act_actor_opts.lock_bias): the word is BIAS | id while the lock is biased
 * to thread id, and BIAS | REVOKING | id while one thread revokes that bias.
 * No WAITERS bit is ever set on a biased word.
 */
#define ACT__LOCK_WAITERS 0x80000000u
#define ACT__LOCK_BIAS 0x40000000u
#define ACT__LOCK_REVOKING 0x20000000u
#define ACT__LOCK_ID_MASK 0x1fffffffu

/*
 * A thread of the runtime: its registry id (the lock word stores it) and
 * its call chain, the actors whose handlers it runs synchronously, the
 * first the one whose mailbox message it dequeued (DESIGN.md 2, "Cycle
 * detection"). Only its thread reads or writes the chain.
 */
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
	/*
	 * Group whose full mailbox this thread waits on for space (a blocking
	 * send, ACT_OVERFLOW_BLOCK), NULL otherwise: the other kind of edge of
	 * the wait-for graph (actor.c, Deadlock walk). Same access rules as
	 * waiting_on.
	 */
	_Atomic(struct act_group *) waiting_space;
	unsigned last_cycle_len;
	struct act_chain_entry last_cycle[ACT_CHAIN_MAX + 1];
};

extern ACT__TLS struct act__thread act__tls_thread;

enum act__actor_state {
	ACT__ACTOR_CREATED = 0,
	ACT__ACTOR_RUNNING,
	ACT__ACTOR_STOPPED,
	ACT__ACTOR_DEAD,
};

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
	_Atomic uint8_t cycle_policy; /* enum act_cycle_policy; relaxed */
	bool own_group; /* group created for this actor alone */
	/* lock release: a store-release with the sleeper protocol (true), or
	 * the exchange (false: membarrier unavailable); fixed at creation */
	bool release_store;
	uint32_t handler_count;
	act_handler_fn *handlers;
	void *state_ptr;
	struct act_group *group;
	/*
	 * Declared fast_send edges (act_group_edge()): this actor's bit in its
	 * group's edge index (0: in no edge), and the bits of the members its
	 * handlers may call with act_fast_send_edge(). Written only before the
	 * group first runs, read-only after.
	 */
	uint64_t edge_bit;
	uint64_t edges;
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
	/* messages sent naming this actor as their sender (actor.c, Sender):
	 * written only under its exclusive access (plain load and store) */
	_Atomic int64_t sent;
	/* one reference per message queued in the mailbox, one for the
	 * creator, and after destroy one while messages naming it as their
	 * sender are still queued (actor.c, Sender; messages on the lane hold
	 * none for their receiver: lane_queued) */
	act__cache_aligned _Atomic uint32_t refs;
	/* messages for this actor on its group's lane (group.c, Lane): written
	 * by the group's thread alone (relaxed load and store, no RMW); read by
	 * act_actor_destroy(), which takes one reference for each */
	_Atomic uint32_t lane_queued;
	/* of those sent, the ones that left their queue (any consumer, RMW);
	 * minus those still queued once act_actor_destroy() subtracted sent */
	act__cache_aligned _Atomic int64_t released;

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
	/* asynchronous replies refused: the sender had stopped or was
	 * destroyed (act_reply(), -ESHUTDOWN) */
	_Atomic uint64_t orphan_replies;
};

/*
 * Relaxed counter bump by the only writer (a thread holding the lock that
 * guards the counter, or the group's thread): a plain load and store, no
 * locked instruction. Readers on other threads use a relaxed load.
 */
static inline void act__stat_inc_owned(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* ------------------------------------------------------------------------ */
/* Lock: the uncontended paths (actor.c has the rest and the proofs)        */
/* ------------------------------------------------------------------------ */

/* How a lock is held: through its word, or through the bias. */
enum act__hold {
	ACT__HOLD_WORD = 1,
	ACT__HOLD_BIAS = 2,
};

/* Wake one sleeper on @a's lock word (actor.c). */
void act__lock_wake(struct act_actor *a);

/* Release a lock held through its word: O1-O3, or the exchange (actor.c). */
static inline void act__lock_release(struct act_actor *a)
{
	if (act__likely(a->release_store)) {
		/* O1 release: pairs with the acquire of the next owner's CAS. */
		atomic_store_explicit(&a->lock, 0, memory_order_release);
		/* O2: the compiler must not hoist O3 above O1; the CPU may, and
		 * the sleeper's membarrier (S2) covers that (actor.c). */
		atomic_signal_fence(memory_order_seq_cst);
		/* O3 relaxed: pairs with S1 through S2, not through the model. */
		if (act__unlikely(atomic_load_explicit(&a->sleepers, memory_order_relaxed) != 0))
			act__lock_wake(a);
		return;
	}
	/* release: pairs with the acquire of the next owner's CAS. */
	if (act__unlikely(atomic_exchange_explicit(&a->lock, 0, memory_order_release) &
			  ACT__LOCK_WAITERS))
		act__lock_wake(a);
}

/*
 * Biased lock: the bias owner's side. Called with the word read as
 * BIAS | id. B1 bias_in = 1; B2 compiler barrier; B3 re-read the word: still
 * BIAS | id means no revoker got in first (actor.c), and the handler may
 * run; else B4 bias_in = 0 and the caller retries on the general path.
 */
static inline bool act__bias_enter(struct act_actor *a, uint32_t id)
{
	/* B1 relaxed: pairs with R3 through R2, not through the model. */
	atomic_store_explicit(&a->bias_in, 1, memory_order_relaxed);
	/* B2: the compiler must not hoist B3 above B1; the CPU may, and the
	 * revoker's membarrier (R2) covers that. */
	atomic_signal_fence(memory_order_seq_cst);
	/* B3 relaxed: only this thread ever ran the handlers while the word
	 * stayed biased to it, so there is nothing to acquire. */
	if (act__likely(atomic_load_explicit(&a->lock, memory_order_relaxed) ==
			(ACT__LOCK_BIAS | id)))
		return true;
	/* B4 release: a revoker's R3 acquires what we did before. */
	atomic_store_explicit(&a->bias_in, 0, memory_order_release);
	return false;
}

static inline void act__lock_release_hold(struct act_actor *a, int hold)
{
	if (hold == ACT__HOLD_BIAS)
		/* B5 release: the next owner is this thread again, or a revoker
		 * whose R3 acquires it. */
		atomic_store_explicit(&a->bias_in, 0, memory_order_release);
	else
		act__lock_release(a);
}

/*
 * The uncontended acquire of a lockable actor by registered thread @t: its
 * own bias (plain accesses, act__bias_enter()) or one CAS of a free word.
 * ACT__HOLD_BIAS / ACT__HOLD_WORD, or 0 for anything else (a free word of a
 * biased lock, someone else's bias or a revoked one, a held word, an
 * unregistered thread), which the caller leaves to the general path before
 * any side effect.
 */
static inline __attribute__((always_inline)) int
act__lock_try_fast(struct act_actor *a, const struct act__thread *t)
{
	uint32_t expected = 0;

	if (atomic_load_explicit(&a->lock_bias, memory_order_relaxed)) {
		if (act__unlikely(atomic_load_explicit(&a->lock, memory_order_relaxed) !=
					  (ACT__LOCK_BIAS | t->id) ||
				  !act__bias_enter(a, t->id)))
			return 0;
		return ACT__HOLD_BIAS;
	}
	/* seq_cst: as actor.c's lock_take_free() (pairs with the release in
	 * act__lock_release()). */
	if (act__unlikely(t->id == 0 ||
			  !atomic_compare_exchange_strong_explicit(&a->lock, &expected, t->id,
								   memory_order_seq_cst,
								   memory_order_relaxed)))
		return 0;
	return ACT__HOLD_WORD;
}

/* ------------------------------------------------------------------------ */
/* Call chain and synchronous delivery                                      */
/* ------------------------------------------------------------------------ */

/* Whether @to is on @t's chain of @depth entries (O(1): actor.c, Cycle
 * detection). */
static inline bool act__on_chain(const struct act__thread *t, struct act_actor *to,
				 uint32_t depth)
{
	uint32_t pos = atomic_load_explicit(&to->chain_pos, memory_order_relaxed);

	return pos < depth && t->chain[pos].actor == to;
}

/* Write the synchronous delivery context into @m (receiver transparency and
 * unified reply: act_reply() routes by it). */
static inline __attribute__((always_inline)) void
act__sync_context(struct act_msg *m, struct act_actor *to, struct act_actor *sender,
		  void *reply, uint32_t reply_cap, uint32_t extra_flags)
{
	m->flags_ = (m->flags_ & (ACT__F_POOLED | ACT__F_CLASS_MASK)) | ACT__F_SYNC | extra_flags;
	m->sender = sender;
	m->reply_buf_ = reply;
	m->reply_cap_ = reply_cap;
	m->reply_len_ = 0;
	m->dest = to;
	m->qdepth = 0;
	m->mailbox_was_empty = 0;
	m->enqueue_tsc = 0;
}

int act__sync_result_trunc(const struct act_msg *m);

static inline int act__sync_result(const struct act_msg *m)
{
	/* a reply did not fit: out of line, so the common case tests the
	 * flags in memory */
	if (act__unlikely(m->flags_ & ACT__F_TRUNC))
		return act__sync_result_trunc(m);
	return (int)m->reply_len_;
}

/*
 * The critical section of a synchronous call whose checks passed and whose
 * lock (@hold, 0 for a group-private receiver) is held: push @to on @t's
 * chain at @depth (its index into chain_pos first, so that a call it makes
 * finds it), run @fn, pop, count the completion (single writer: the lock
 * holder), release. Returns the call's result.
 */
static inline __attribute__((always_inline)) int
act__sync_run(struct act__thread *t, struct act_actor *to, act_handler_fn fn, struct act_msg *m,
	      uint32_t depth, int hold)
{
	atomic_store_explicit(&to->chain_pos, depth, memory_order_relaxed);
	t->chain[depth].actor = to;
	t->chain[depth].type = m->type;
	t->depth = depth + 1;
	fn(to, to->state_ptr, m);
	t->depth = depth;
	act__stat_inc_owned(&to->sync_completions);
	if (hold != 0)
		act__lock_release_hold(to, hold);
	return act__sync_result(m);
}

/* act_fast_send_edge() when its fast path does not apply (actor.c). */
int act__fast_send_edge_slow(struct act_actor *to, struct act_msg *req, void *reply,
			     uint32_t reply_cap);

/*
 * The fast path: a declared edge from the actor running on this thread
 * (the top of the chain) to @to in the same group, @to running with a
 * handler for the type, not on the chain (an edge never closes a cycle of
 * edges, but a chain that a dynamic call entered may hold @to), and either
 * group-private with a group-private caller (which runs on the group's
 * thread only, so this thread is that thread: no load of the group, no
 * atomic) or lockable with its lock free or biased to this thread.
 * Anything else goes to act__fast_send_edge_slow() before any side effect
 * but the context written into the caller's own message. Always inline:
 * the call is the point (the slow path is out of line, so it stays small).
 */
static inline __attribute__((always_inline)) int
act_fast_send_edge(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap)
{
	struct act__thread *t = &act__tls_thread;
	uint32_t depth = t->depth;
	uint32_t type = req->type;
	struct act_actor *from;
	act_handler_fn fn;
	int hold = 0;

	/* depth 0 (no caller) or ACT_CHAIN_MAX (no room): the slow path */
	if (act__unlikely(depth - 1u >= ACT_CHAIN_MAX - 1u))
		goto slow;
	from = t->chain[depth - 1].actor;
	if (act__unlikely(!(from->edges & to->edge_bit) || from->group != to->group ||
			  atomic_load_explicit(&to->state, memory_order_relaxed) !=
				  ACT__ACTOR_RUNNING ||
			  type >= to->handler_count))
		goto slow;
	fn = to->handlers[type];
	if (act__unlikely(fn == NULL || act__on_chain(t, to, depth)))
		goto slow;
	act__sync_context(req, to, from, reply, reply_cap, 0);
	if (act__likely(to->group_private)) {
		if (act__unlikely(!from->group_private))
			goto slow; /* the caller may run on any thread: check it there */
	} else {
		hold = act__lock_try_fast(to, t);
		if (act__unlikely(hold == 0))
			goto slow;
	}
	return act__sync_run(t, to, fn, req, depth, hold);
slow:
	return act__fast_send_edge_slow(to, req, reply, reply_cap);
}

#endif /* TICKWIRE_ACT_FAST_PVT_H */
