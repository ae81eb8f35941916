/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Actors, their exclusive-access lock, the fast_send family and reply.
 *
 * Lock. One 32-bit word: 0 when free, else the owner's thread id.
 * Uncontended acquire is one seq_cst CAS; uncontended release is one
 * exchange (the default), or one store-release for an actor created with
 * act_actor_opts.lock_release_store where membarrier works (below). The
 * store release is opt-in because of its cost on the sleeping path (Cost).
 *
 * Release by a plain store: an asymmetric Dekker between owner and sleeper.
 * The word carries no waiter bit; a separate count `sleepers`, on the lock's
 * cache line, counts the threads that decided to sleep and have not yet
 * acquired. With a thread-id owner word O, the two sides are
 *
 *   owner (release)                     sleeper (lock_contended)
 *   O1 store lock = 0 (release)         S1 sleepers += 1 (once per wait)
 *   O2 compiler barrier only            S2 membarrier(PRIVATE_EXPEDITED)
 *   O3 if (load sleepers != 0)          S3 v = load lock; v == 0: retry CAS
 *   O4     futex_wake(lock, 1)          S4 futex_wait(lock, v): the kernel
 *                                          re-reads lock == v atomically
 *                                          with queueing; then back to S2
 *
 * S2 precedes every S3/S4, and the count is dropped only after acquiring
 * (or giving up with -EDEADLK). Why no wake-up is lost: say S is queued at
 * S4 after the kernel read v != 0, and let R be the release that stores 0
 * after v (only an owner writes a held word, so R exists and its O1 is
 * coherence-later than that read). membarrier returns only after every CPU
 * running a thread of this process has executed a full barrier, and a
 * thread not running has passed the scheduler's barriers: so for R's O2
 * either (a) O1 is visible to everything S does after S2, or (b) S1 is
 * visible to everything R does after O2. (a) would make the kernel's read
 * at S4 see O1 or later, which it did not; hence (b): O3 sees S's count,
 * not yet dropped since S sleeps, and calls futex_wake, which by the futex
 * contract wakes a waiter queued before it, or S's S4 saw the word change
 * and returned. The same holds for every later release while S is queued,
 * so each release wakes one sleeper; the woken one acquires (its release
 * wakes the next) or finds the word held again and sleeps on a holder that
 * has yet to release. (On x86, O3 can pass O1 while O1 waits in the
 * store buffer; the IPI's barrier drains it.)
 *
 * Cost. The owner pays a load of a line it holds (uncontended lockable
 * fast_send 0.63x the exchange release's time, tests/perf/RESULTS.md). The
 * fence is paid on the sleeping path: one membarrier per sleep, an IPI to
 * every CPU running a thread of this process - the lock holder's, and any
 * busy-polling core's - which interrupts them (a VM exit in a guest: 5-18 us
 * a call here). The holder, interrupted, holds longer, so more callers
 * sleep: with 2-4 fast_send callers sleeping on one hot actor, handler
 * throughput fell to 0.19-0.34x the exchange release's on a quiet 2-vCPU
 * guest (0.45-0.58x at load 3), and the callers' p99 from ~4 us to ~57 us.
 * Spinning waits do not sleep and do not pay it.
 *
 * tests/stress/stress_lock_wake.c makes the wait untimed and fails on a lost
 * wake-up. It catches, in seconds, a release that does not wake, a sleeper
 * that is not counted while it sleeps, and an owner that reads the count
 * early by a few microseconds. A missing S2 alone leaves a window of a
 * store-buffer drain against a whole system call before the kernel's
 * re-read and was never seen in testing: that part rests on the argument
 * above, not on the test.
 *
 * Lifetime: the releasing owner reads `sleepers` after it freed the word,
 * so an actor may be destroyed only once no delivery call to it is still
 * running (act.h, act_actor_destroy()); seeing its handler finish is not
 * enough.
 *
 * Exchange release (the default; also the fallback for lock_release_store
 * actors, decided once at init when membarrier or its registration is
 * refused, e.g. by an old kernel or a seccomp filter;
 * valgrind 3.19 passes it through): Drepper's futex mutex with the owner in
 * the word. A sleeper sets ACT__LOCK_WAITERS with a CAS; the exchange reads
 * it atomically with freeing the word and wakes one; after sleeping, a
 * thread acquires with WAITERS set, as it cannot know whether others sleep.
 *
 * Biased lock (act_actor_opts.lock_bias, needs membarrier). The first
 * thread b to take a free word stores BIAS | b in it, and from then on
 * enters and leaves with plain accesses to a flag bias_in on the lock's
 * line, of which it is the only writer. Another thread revokes the bias
 * once, and the lock is an ordinary one after that:
 *
 *   bias owner b (bias_enter, release)    revoker r (bias_revoke)
 *   B1 store bias_in = 1                  R1 CAS word BIAS|b -> BIAS|REVOKING|b
 *   B2 compiler barrier only              R2 membarrier(PRIVATE_EXPEDITED)
 *   B3 load word == BIAS|b ? enter        R3 wait until load bias_in == 0
 *   B4    : else store bias_in = 0, retry R4 lock_bias = false; word = r
 *   B5 leave: store bias_in = 0 (release)    (r holds the lock by its word)
 *
 * Exclusion is the same asymmetric Dekker as the sleeper protocol above:
 * for b's B2, either B1 is visible to r's R3 (r waits for b's B4/B5), or R1
 * is visible to b's B3 (b does not enter). So when R3 sees 0 after R2, b is
 * out and stays out: any later B3 of b sees the word no longer BIAS|b. A
 * thread other than b never runs a handler while the word is biased; it
 * revokes (one wins R1) or polls a REVOKING word until the revoker owns
 * it. Nobody sleeps on a biased word (b does not know it is waited for):
 * the revoker and the pollers spin, then poll every 20 us, and walk the
 * wait-for chain, in which a biased word's owner is b while bias_in is 1.
 * A revoker that finds a cycle, or a trying caller (act_fast_send_x) that
 * finds b inside, puts BIAS | b back (nobody else writes a REVOKING word).
 * A lock is biased at most once: R4 clears lock_bias before it publishes
 * r's word, and lock_take_free() re-reads lock_bias after the CAS that
 * took a free word (the word was freed by an owner after r, whose CAS
 * acquired R4), so plain words, with their WAITERS bit and sleeper count,
 * never turn biased under a sleeper.
 * Cost: b's uncontended acquire and release are two plain stores and two
 * loads of a line it holds (no lock prefix, no fence); the revoking call
 * pays one membarrier and a wait for b's handler in progress. Memory: b's
 * handlers happen before r's (R3 acquires B4/B5); r's before b's later ones
 * through the ordinary word. ThreadSanitizer sees those same release /
 * acquire pairs; it does not see R2, which only decides who waits. A thread
 * that registers under the id of an exited bias owner inherits the bias;
 * the registry's release of the slot at exit and acquire at registration
 * order the two threads' handlers.
 *
 * ThreadSanitizer does not model membarrier, and need not: no data is
 * published through `sleepers` (it only decides whether to wake), and the
 * protected data is handed over by the CAS-acquire / store-release pair on
 * the word, which TSan does model. The TSan build therefore runs the store
 * release unchanged, without annotations (the actor suite is clean).
 *
 * Cycle detection (same thread). Before any lock is taken, the target is
 * looked up in this thread's call chain (a thread-local array). Conservative
 * policy: the actor alone is the key. Permissive policy: (actor, message
 * type); a re-entry with another type runs without re-acquiring the lock,
 * which this thread already holds.
 * The lookup is O(1) whatever the depth: a thread that pushes an actor
 * first stores the index in chain_pos, and a caller checks only its own
 * chain at that index (in bounds, same actor). A miss is exact: if the
 * actor is on this thread's chain at index p, this thread stored p, and no
 * other thread can have stored since (it would have needed exclusive
 * access, which this thread has held since); a nested permissive re-entry
 * stores a deeper index and restores p when it pops. So a hit in the
 * thread's own array is the only way to find it, and a stale or foreign
 * index can only point at an entry that is out of bounds or another actor.
 * No pop writes the field and nothing orders other threads' stores: the
 * check never trusts the field, only this thread's array. A hit scans the
 * array, for the permissive key and the cycle report.
 *
 * Deadlock detection (across threads). Only a contended blocking acquire
 * pays for it: the waiter publishes the lock it wants (waiting_on, seq_cst)
 * and then walks owner -> owner's waiting_on -> that lock's owner ... with
 * seq_cst loads, at most ACT__MAX_THREADS hops. If the walk reaches the
 * waiter, it returns -EDEADLK instead of sleeping. Of the threads in a cycle,
 * the one whose waiting_on store comes last in the seq_cst order sees every
 * other edge (their stores precede its loads; every acquire CAS is seq_cst
 * and precedes its thread's waiting_on store), so at least one of them
 * detects the cycle; none sleeps forever.
 *
 * Group-private actors take no lock: only their group's thread may deliver
 * to them, checked with a plain load of the group's bound thread.
 *
 * Fast path. Every member of the fast_send family inlines fast_send_fast():
 * the checks, the O(1) chain check, the reply context, the chain push, the
 * handler call and, for a lockable receiver, one CAS and the release (or,
 * biased to this thread, act__bias_enter() and a store), with no call but
 * the handler's. Anything else goes to fast_send_general() before any
 * shared side effect. The uncontended lock paths, the context and the
 * critical section live in act_fast_pvt.h, shared with act_fast_send_edge(),
 * which is inline in its caller; that header is the code the proofs above
 * speak of as O1-O3 and B1-B5.
 *
 * Declared edges (act_fast_send_edge(), act_group_edge() in group.c). Along
 * a declared edge the fast path skips the load of the receiver's group (a
 * group-private caller runs on its group's thread, hence so does a
 * group-private callee of the same group) and the call into this file, but
 * keeps every check a handler could observe: state, handler, context,
 * chain push, counters. It keeps the O(1) chain check too: the declared
 * edges are a DAG, yet a chain that a dynamic call entered can hold the
 * callee already (A -edge-> B -dynamic-> C -edge-> A). An undeclared edge
 * is refused by act__fast_send_edge_slow() like a cycle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor_pvt.h"

extern _Atomic uint32_t act__system_cycle_policy;

/* Spins of act_fast_send_adaptive before it sleeps. */
#define ACT__ADAPTIVE_SPINS 2000u
/* Spins between deadlock walks while busy-waiting. */
#define ACT__SPIN_WALK_EVERY 4096u

/* ------------------------------------------------------------------------ */
/* Lock                                                                     */
/* ------------------------------------------------------------------------ */

/* The slow part of act__lock_release() (act_fast_pvt.h: O1-O3, or the
 * exchange that found WAITERS): wake one sleeper. */
void act__lock_wake(struct act_actor *a)
{
	act__futex_wake(&a->lock, 1);
}

/*
 * The thread that holds @a per its word, 0 if none or unknown: the word's
 * owner, or a biased word's owner while it is inside (bias_in). A revoker
 * between its CAS and its store of its own id is not named (it holds
 * nothing yet).
 */
static uint32_t lock_owner(struct act_actor *a)
{
	uint32_t w = atomic_load(&a->lock);

	if (w & ACT__LOCK_BIAS)
		return atomic_load(&a->bias_in) != 0 ? (w & ACT__LOCK_ID_MASK) : 0;
	return w & ~ACT__LOCK_WAITERS;
}

/*
 * Deadlock walk. The wait-for graph has two kinds of edges, each published
 * by the waiting thread before it walks and cleared when it stops waiting:
 *  - waiting_on: the thread waits for an actor's lock; it waits for the
 *    lock's owner (lock_owner());
 *  - waiting_space: the thread waits for space in a group's full mailbox
 *    (a blocking send); it waits for the thread that runs the group, the
 *    only one that frees slots (act_group::bound; none while nobody runs
 *    it, and then there is no cycle through it).
 * The thread @t waits for, or NULL.
 */
static struct act__thread *waits_for(const struct act__thread *t)
{
	struct act_actor *a = atomic_load(&t->waiting_on);
	struct act_group *g;
	uint32_t owner;

	if (a != NULL) {
		owner = lock_owner(a);
		return owner != 0 ? atomic_load(&act__threads[owner]) : NULL;
	}
	g = atomic_load(&t->waiting_space);
	return g != NULL ? atomic_load(&g->bound) : NULL;
}

/*
 * True if following the waits from @self (whose own wait is published)
 * leads back to @self. seq_cst loads: pair with the seq_cst publications,
 * so of two threads that close a cycle the later one to publish sees it.
 */
static bool deadlock_walk(const struct act__thread *self)
{
	const struct act__thread *t = self;
	uint32_t hops;

	for (hops = 0; hops < ACT__MAX_THREADS; hops++) {
		t = waits_for(t);
		if (t == NULL)
			return false;
		if (t == self)
			return true;
	}
	return false;
}

/*
 * A producer about to sleep on @g's full mailbox (queue.c, the waits for
 * space): publish the edge when @first, then walk. True: a cycle, the send
 * must fail with -EDEADLK. Outside groups (a bare queue) nothing to do.
 */
bool act__space_wait(struct act_group *g, bool first)
{
	struct act__thread *self;

	if (g == NULL)
		return false;
	self = act__self_thread();
	if (first)
		atomic_store(&self->waiting_space, g);
	if (!deadlock_walk(self))
		return false;
	act__stat_inc_shared(&g->deadlocks);
	return true;
}

/* The producer stopped waiting for space (any outcome). */
void act__space_wait_end(struct act_group *g)
{
	if (g != NULL)
		atomic_store(&act__tls_thread.waiting_space, NULL);
}

/*
 * The wait of a mailbox delivery (run_async()): adaptive, and it never
 * gives up. The group's loop holds no lock there, so the cycle its wait
 * closes always runs through another waiter's edge, which that waiter's
 * walk reports (a blocking send's timed re-walk, act__space_wait()); the
 * loop keeps its edge published and sleeps instead of walking.
 */
#define ACT__WAIT_MUST ((enum act_wait)(ACT_WAIT_NONE + 1))

/* A wait in mode @wait gives up here: a cycle, unless it must not. */
static inline bool cycle_closed(const struct act__thread *self, enum act_wait wait)
{
	return wait != ACT__WAIT_MUST && deadlock_walk(self);
}

/* Test knobs (actor_pvt.h). */
_Atomic bool act__test_lock_wait_untimed;
_Atomic bool act__test_lock_release_exchange;
_Atomic bool act__test_bias_skip_membarrier;

/*
 * CAS a free word to @id's value: BIAS | id while the actor may be biased,
 * else @plain (id, with WAITERS for a former sleeper under the exchange
 * release). ACT__HOLD_WORD or ACT__HOLD_BIAS on success; 0 if the word was
 * not free, or a revoker got in before the bias could be entered (re-read
 * the word).
 */
static inline int lock_take_free(struct act_actor *a, uint32_t id, uint32_t plain)
{
	uint32_t want = atomic_load_explicit(&a->lock_bias, memory_order_relaxed)
				? (ACT__LOCK_BIAS | id)
				: plain;
	uint32_t expected = 0;

	/* seq_cst: the acquire edge pairs with the release in act__lock_release();
	 * seq_cst also orders it before our own later waiting_on store, which
	 * the deadlock walk relies on (see the file header). */
	if (!atomic_compare_exchange_strong_explicit(&a->lock, &expected, want,
						     memory_order_seq_cst, memory_order_relaxed))
		return 0;
	if (!(want & ACT__LOCK_BIAS))
		return ACT__HOLD_WORD;
	/* Read again after the CAS: a word freed after a revocation was freed
	 * by an owner that acquired after the revoker's R4, so the CAS's
	 * acquire makes R4's lock_bias = false visible here, and a revoked
	 * lock is never biased again (its sleepers rely on the WAITERS bit or
	 * the sleeper count, which a biased word does not carry). */
	if (act__unlikely(!atomic_load_explicit(&a->lock_bias, memory_order_relaxed))) {
		expected = want;
		if (atomic_compare_exchange_strong_explicit(&a->lock, &expected, plain,
							    memory_order_relaxed,
							    memory_order_relaxed))
			return ACT__HOLD_WORD;
		/* a revoker's R1 came first: act__bias_enter() fails, we retry */
	}
	return act__bias_enter(a, id) ? ACT__HOLD_BIAS : 0;
}

/*
 * One step of a wait on a biased word, where nobody will wake us: a pause
 * (ACT_WAIT_SPIN, and the first ACT__ADAPTIVE_SPINS steps otherwise) or a
 * ~20 us sleep; the wait-for chain is walked every ACT__SPIN_WALK_EVERY
 * pauses and after each sleep. -EDEADLK on a cycle, else 0.
 */
static int bias_wait_step(struct act_actor *a, struct act__thread *self, enum act_wait wait,
			  uint32_t *spins)
{
	const struct timespec poll = {0, 20 * 1000};

	(void)a;
	if (wait == ACT_WAIT_SPIN || *spins < ACT__ADAPTIVE_SPINS) {
		act__cpu_relax();
		if (++*spins % ACT__SPIN_WALK_EVERY == 0 && cycle_closed(self, wait))
			return -EDEADLK;
		return 0;
	}
	nanosleep(&poll, NULL);
	return cycle_closed(self, wait) ? -EDEADLK : 0;
}

/*
 * Biased lock: the revoker's side, for a word @v = BIAS | b read by a thread
 * other than b. R1 CAS the word to BIAS | REVOKING | b (seq_cst; only one
 * revoker wins, and nobody else changes a REVOKING word); R2
 * membarrier(PRIVATE_EXPEDITED); R3 wait until bias_in == 0 (acquire);
 * R4 clear lock_bias and store our own id: we hold the lock through its
 * word, the bias is gone for good. Returns ACT__HOLD_WORD, 0 to retry (lost
 * the R1 race), -EBUSY (ACT_WAIT_NONE and b inside), -EDEADLK (the walk from
 * b comes back to us) or -EAGAIN (membarrier failed, which it does not once
 * registered at init); on an error the word is BIAS | b again.
 * Waiting, it spins (ACT_WAIT_SPIN, and the first ACT__ADAPTIVE_SPINS
 * rounds otherwise) or polls every ~20 us: the owner does not know that
 * someone waits, so nobody would wake a futex sleeper.
 */
static int bias_revoke(struct act_actor *a, struct act__thread *self, uint32_t v,
		       enum act_wait wait)
{
	uint32_t spins = 0;

	/* Trying (ACT_WAIT_NONE): an owner seen inside would make us wait. */
	if (wait == ACT_WAIT_NONE && atomic_load_explicit(&a->bias_in, memory_order_relaxed))
		return -EBUSY;
	/* R1 */
	if (!atomic_compare_exchange_strong_explicit(&a->lock, &v, v | ACT__LOCK_REVOKING,
						     memory_order_seq_cst, memory_order_relaxed))
		return wait == ACT_WAIT_NONE ? -EBUSY : 0;
	/* R2: after it, either b's B1 is visible to our R3, or our R1 is
	 * visible to b's B3 (file header). */
	if (act__unlikely(atomic_load_explicit(&act__test_bias_skip_membarrier,
					       memory_order_relaxed))) {
		/* test knob: no R2 (actor_pvt.h) */
	} else if (act__unlikely(act__membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)) {
		atomic_store_explicit(&a->lock, v, memory_order_release);
		return -EAGAIN;
	}
	/* R3 acquire: pairs with b's B4/B5, so b's handler happens before ours. */
	while (atomic_load_explicit(&a->bias_in, memory_order_acquire) != 0) {
		int rc = wait == ACT_WAIT_NONE ? -EBUSY : bias_wait_step(a, self, wait, &spins);

		if (rc != 0) {
			/* Nobody changes a REVOKING word but its revoker. */
			atomic_store_explicit(&a->lock, v, memory_order_release);
			return rc;
		}
	}
	/* R4: lock_bias first; lock_take_free() relies on the order. */
	atomic_store_explicit(&a->lock_bias, false, memory_order_relaxed);
	atomic_store(&a->lock, self->id);
	act__stat_inc_shared(&a->bias_revocations);
	return ACT__HOLD_WORD;
}

/*
 * A biased word @v seen by @self while acquiring: enter our own bias,
 * revoke another thread's, or wait for a revocation in progress. Returns
 * ACT__HOLD_BIAS / ACT__HOLD_WORD when held, 0 to re-read the word, or an
 * error (bias_revoke()).
 */
static int lock_biased_word(struct act_actor *a, struct act__thread *self, uint32_t v,
			    enum act_wait wait, uint32_t *spins)
{
	if (v == (ACT__LOCK_BIAS | self->id))
		return act__bias_enter(a, self->id) ? ACT__HOLD_BIAS : 0;
	if (!(v & ACT__LOCK_REVOKING))
		return bias_revoke(a, self, v, wait);
	/* Another thread revokes: it will own the word in a moment. */
	return wait == ACT_WAIT_NONE ? -EBUSY : bias_wait_step(a, self, wait, spins);
}

/*
 * Contended acquire. ACT_WAIT_SPIN busy-waits; ACT_WAIT_ADAPTIVE spins, then
 * sleeps; ACT_WAIT_SLEEP sleeps at once. Every mode walks the wait-for chain
 * after publishing waiting_on and before each sleep. A sleeper follows S1-S4
 * of the file header (store release) or sets ACT__LOCK_WAITERS (exchange).
 * A biased word is handled by lock_biased_word() (never slept on).
 * Returns ACT__HOLD_WORD / ACT__HOLD_BIAS, or -EDEADLK / -EAGAIN.
 */
static int lock_contended(struct act_actor *a, struct act__thread *self, enum act_wait wait)
{
	/* The timeout bounds the time a cycle formed by a racing third party
	 * stays unseen before the next walk; the lock's wake-up needs none. */
	const struct timespec timeout = {0, 50 * 1000 * 1000};
	const bool store_release = a->release_store;
	const bool untimed =
		atomic_load_explicit(&act__test_lock_wait_untimed, memory_order_relaxed);
	bool counted = false; /* in a->sleepers */
	uint32_t spins = 0;
	int rc = 0;

	/* seq_cst: pairs with the seq_cst loads of other threads' walks. */
	atomic_store(&self->waiting_on, a);
	if (cycle_closed(self, wait)) {
		rc = -EDEADLK;
		goto out;
	}
	for (;;) {
		uint32_t v = atomic_load_explicit(&a->lock, memory_order_relaxed);

		if (v & ACT__LOCK_BIAS) {
			rc = lock_biased_word(a, self, v, wait, &spins);
			if (rc != 0)
				goto out;
			continue;
		}
		if (v == 0) {
			/* Exchange release: having slept, we cannot know whether
			 * others still sleep; keep WAITERS so that our release
			 * wakes the next one. */
			uint32_t plain = store_release || wait == ACT_WAIT_SPIN ||
						 spins < ACT__ADAPTIVE_SPINS
						 ? self->id
						 : (self->id | ACT__LOCK_WAITERS);

			rc = lock_take_free(a, self->id, plain);
			if (rc != 0)
				goto out;
			continue;
		}
		if (wait == ACT_WAIT_SPIN ||
		    ((wait == ACT_WAIT_ADAPTIVE || wait == ACT__WAIT_MUST) &&
		     spins < ACT__ADAPTIVE_SPINS)) {
			act__cpu_relax();
			if (++spins % ACT__SPIN_WALK_EVERY == 0 && cycle_closed(self, wait)) {
				rc = -EDEADLK;
				goto out;
			}
			continue;
		}
		spins = ACT__ADAPTIVE_SPINS; /* from now on we are a sleeper */
		if (store_release) {
			bool fenced;

			if (!counted) {
				/* S1 seq_cst (a locked RMW on x86 anyway): pairs
				 * with the owner's O3 through S2. */
				atomic_fetch_add_explicit(&a->sleepers, 1, memory_order_seq_cst);
				counted = true;
			}
			/* S2: orders S1 before S3/S4 against every running
			 * owner's O1/O3 (file header). Registered at init, so
			 * it cannot fail; if it did, the timed wait below still
			 * ends a lost wake-up. */
			fenced = act__membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
			/* S3: the final re-check, after S2. */
			v = atomic_load_explicit(&a->lock, memory_order_relaxed);
			if (v == 0)
				continue;
			if (cycle_closed(self, wait)) {
				rc = -EDEADLK;
				goto out;
			}
			act__stat_inc_shared(&a->lock_sleeps);
			/* S4: the kernel re-reads lock == v atomically with
			 * queueing us (a release between S3 and here makes it
			 * return at once). */
			act__futex_wait(&a->lock, v, fenced && untimed ? NULL : &timeout);
			continue;
		}
		if (!(v & ACT__LOCK_WAITERS)) {
			if (!atomic_compare_exchange_weak_explicit(&a->lock, &v,
								   v | ACT__LOCK_WAITERS,
								   memory_order_relaxed,
								   memory_order_relaxed))
				continue;
			v |= ACT__LOCK_WAITERS;
		}
		if (cycle_closed(self, wait)) {
			rc = -EDEADLK;
			goto out;
		}
		act__stat_inc_shared(&a->lock_sleeps);
		/* The kernel re-checks lock == v atomically with queueing us, so a
		 * release between our load and the wait is not lost. */
		act__futex_wait(&a->lock, v, untimed ? NULL : &timeout);
	}
out:
	/* relaxed: a count read late only costs the owner a spurious wake. */
	if (counted)
		atomic_fetch_sub_explicit(&a->sleepers, 1, memory_order_relaxed);
	atomic_store(&self->waiting_on, NULL);
	return rc;
}

/*
 * Acquire @a for @self: ACT__HOLD_WORD or ACT__HOLD_BIAS, or -EBUSY
 * (ACT_WAIT_NONE and held), -EDEADLK, -EAGAIN. The uncontended cases first, then
 * lock_contended(), which publishes what the deadlock walk needs.
 */
static int lock_acquire(struct act_actor *a, struct act__thread *self, enum act_wait wait)
{
	uint32_t v = atomic_load_explicit(&a->lock, memory_order_relaxed);
	int rc;

	if (v == 0) {
		rc = lock_take_free(a, self->id, self->id);
		if (rc != 0)
			return rc;
	} else if (v == (ACT__LOCK_BIAS | self->id)) {
		if (act__bias_enter(a, self->id))
			return ACT__HOLD_BIAS;
	} else if (wait == ACT_WAIT_NONE &&
		   (v & (ACT__LOCK_BIAS | ACT__LOCK_REVOKING)) == ACT__LOCK_BIAS) {
		/* Another thread's bias, not held by it right now: take it. */
		return bias_revoke(a, self, v, ACT_WAIT_NONE);
	}
	if (wait == ACT_WAIT_NONE)
		return -EBUSY;
	return lock_contended(a, self, wait);
}

/* ------------------------------------------------------------------------ */
/* Actors                                                                   */
/* ------------------------------------------------------------------------ */

struct act_actor *act_actor_create(const struct act_actor_opts *o)
{
	struct act_actor *a;

	if (o == NULL || o->handlers == NULL || o->handler_count == 0 ||
	    o->cycle_policy > ACT_CYCLE_PERMISSIVE || (o->group_private && o->group == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	if (act__init_once() != 0) {
		errno = ENOMEM;
		return NULL;
	}
	a = aligned_alloc(ACT__CACHE_LINE, sizeof(*a));
	if (a == NULL)
		return NULL;
	memset(a, 0, sizeof(*a));
	a->handlers = malloc(o->handler_count * sizeof(*a->handlers));
	if (a->handlers == NULL) {
		free(a);
		return NULL;
	}
	memcpy(a->handlers, o->handlers, o->handler_count * sizeof(*a->handlers));
	a->handler_count = o->handler_count;
	a->state_ptr = o->state;
	a->group_private = o->group_private;
	atomic_init(&a->cycle_policy, (uint8_t)o->cycle_policy);
	a->release_store = o->lock_release_store && act__membarrier_ok &&
			   !atomic_load_explicit(&act__test_lock_release_exchange,
						 memory_order_relaxed);
	atomic_init(&a->lock_bias, o->lock_bias && act__membarrier_ok && !o->group_private);
	atomic_init(&a->refs, 1);
	snprintf(a->name, sizeof(a->name), "%s", o->name != NULL ? o->name : "actor");
	if (o->group != NULL) {
		a->group = o->group;
	} else {
		struct act_group_opts go = o->mailbox != NULL ? *o->mailbox
							      : (struct act_group_opts){.cpu = -1};
		if (go.name == NULL)
			go.name = a->name;
		a->group = act_group_create(&go);
		if (a->group == NULL) {
			int e = errno;

			free(a->handlers);
			free(a);
			errno = e;
			return NULL;
		}
		a->own_group = true;
	}
	return a;
}

int act_actor_start(struct act_actor *a)
{
	uint32_t expected = ACT__ACTOR_CREATED;

	if (!atomic_compare_exchange_strong(&a->state, &expected, ACT__ACTOR_RUNNING)) {
		if (expected != ACT__ACTOR_STOPPED)
			return -EALREADY;
		atomic_store(&a->state, ACT__ACTOR_RUNNING);
	}
	if (a->own_group) {
		int rc = act_group_start(a->group);

		if (rc != 0 && rc != -EALREADY) {
			atomic_store(&a->state, ACT__ACTOR_STOPPED);
			return rc;
		}
	}
	return 0;
}

int act_actor_stop(struct act_actor *a)
{
	atomic_store(&a->state, ACT__ACTOR_STOPPED);
	/* an own-mailbox actor from its own thread: -EINVAL (act.h) */
	return a->own_group ? act_group_stop(a->group) : 0;
}

static void actor_free(struct act_actor *a)
{
	if (a->own_group)
		act_group_destroy(a->group);
	free(a->handlers);
	free(a);
}

void act__actor_unref(struct act_actor *a)
{
	/* acq_rel: the last holder sees every earlier holder's writes. */
	if (atomic_fetch_sub_explicit(&a->refs, 1, memory_order_acq_rel) == 1)
		actor_free(a);
}

void act_actor_destroy(struct act_actor *a)
{
	uint32_t lane_queued;
	int64_t sent;

	if (a == NULL)
		return;
	atomic_store(&a->state, ACT__ACTOR_DEAD);
	/* Messages still on the lane hold no reference; now that nothing new
	 * can be queued for it (act.h: no delivery call may still run), take
	 * one for each, dropped when it leaves the lane (act__lane_done()). */
	lane_queued = atomic_load_explicit(&a->lane_queued, memory_order_relaxed);
	if (lane_queued != 0)
		atomic_fetch_add_explicit(&a->refs, lane_queued, memory_order_relaxed);
	/* The messages that name it as sender (Sender below): those on its
	 * group's lane are counted now; one reference for all that are still
	 * queued, dropped by the last to leave (act__sender_left()). */
	sent = atomic_load_explicit(&a->sent, memory_order_relaxed) +
	       act__lane_sweep_sender(a->group, a);
	atomic_store_explicit(&a->sent, sent, memory_order_relaxed);
	atomic_fetch_add_explicit(&a->refs, 1, memory_order_relaxed);
	if (atomic_fetch_sub_explicit(&a->released, sent, memory_order_acq_rel) == sent)
		atomic_fetch_sub_explicit(&a->refs, 1, memory_order_relaxed); /* none */
	act__group_forget(a);
	if (a->own_group) {
		/* Own mailbox: nobody else consumes it; stop its thread, close
		 * it and discard what is left so the references it holds are
		 * dropped. The group's memory goes with the actor's
		 * (actor_free()): a reply racing with this destroy, from a
		 * message that still holds the actor, reads both. */
		act_group_stop(a->group);
		act__queue_close(&a->group->queue);
		act__group_discard(a->group);
	}
	act__actor_unref(a);
}

struct act_group *act_actor_group(const struct act_actor *a)
{
	return a->group;
}

const char *act_actor_name(const struct act_actor *a)
{
	return a->name;
}

void *act_actor_state(const struct act_actor *a)
{
	return a->state_ptr;
}

int act_actor_set_cycle_policy(struct act_actor *a, enum act_cycle_policy p)
{
	if (a == NULL || (unsigned)p > ACT_CYCLE_PERMISSIVE)
		return -EINVAL;
	/* relaxed: a switch, not a publication (act.h) */
	atomic_store_explicit(&a->cycle_policy, (uint8_t)p, memory_order_relaxed);
	return 0;
}

void act_actor_stats(const struct act_actor *a, struct act_actor_stats *st)
{
	st->sync_completions = atomic_load_explicit(&a->sync_completions, memory_order_relaxed);
	st->async_runs = atomic_load_explicit(&a->async_runs, memory_order_relaxed);
	st->async_fallbacks = atomic_load_explicit(&a->async_fallbacks, memory_order_relaxed);
	st->busy_returns = atomic_load_explicit(&a->busy_returns, memory_order_relaxed);
	st->cycles = atomic_load_explicit(&a->cycles, memory_order_relaxed);
	st->deadlocks = atomic_load_explicit(&a->deadlocks, memory_order_relaxed);
	st->bias_revocations = atomic_load_explicit(&a->bias_revocations, memory_order_relaxed);
	st->orphan_replies = atomic_load_explicit(&a->orphan_replies, memory_order_relaxed);
}

/* ------------------------------------------------------------------------ */
/* Delivery                                                                 */
/* ------------------------------------------------------------------------ */

static inline struct act_actor *chain_top(const struct act__thread *t)
{
	return t->depth != 0 ? t->chain[t->depth - 1].actor : NULL;
}

static void record_cycle(struct act__thread *t, struct act_actor *to, uint32_t type)
{
	unsigned i;

	t->last_cycle[0].actor = to;
	t->last_cycle[0].type = type;
	for (i = 0; i < t->depth; i++)
		t->last_cycle[i + 1] = t->chain[i];
	t->last_cycle_len = t->depth + 1;
	act__stat_inc_shared(&to->cycles);
}

static inline enum act_cycle_policy resolve_policy(const struct act_actor *to, unsigned flags)
{
	if (flags & ACT_CALL_CONSERVATIVE)
		return ACT_CYCLE_CONSERVATIVE;
	if (flags & ACT_CALL_PERMISSIVE)
		return ACT_CYCLE_PERMISSIVE;
	enum act_cycle_policy own = (enum act_cycle_policy)atomic_load_explicit(
		&to->cycle_policy, memory_order_relaxed);

	if (own != ACT_CYCLE_DEFAULT)
		return own;
	return (enum act_cycle_policy)atomic_load_explicit(&act__system_cycle_policy,
							   memory_order_relaxed);
}

/*
 * Check @to against the call chain. Returns 0 and sets *held when this
 * thread already holds @to (permissive re-entry), or -ELOOP.
 */
static inline int chain_check(struct act__thread *t, struct act_actor *to, uint32_t type,
			      unsigned flags, bool *held)
{
	enum act_cycle_policy policy = ACT_CYCLE_DEFAULT;
	unsigned i;

	*held = false;
	if (act__likely(!act__on_chain(t, to, t->depth)))
		goto bound;
	for (i = 0; i < t->depth; i++) {
		if (t->chain[i].actor != to)
			continue;
		if (policy == ACT_CYCLE_DEFAULT)
			policy = resolve_policy(to, flags);
		if (policy == ACT_CYCLE_CONSERVATIVE || t->chain[i].type == type) {
			record_cycle(t, to, type);
			return -ELOOP;
		}
		*held = true;
	}
bound:
	if (act__unlikely(t->depth == ACT_CHAIN_MAX)) {
		record_cycle(t, to, type);
		return -ELOOP;
	}
	return 0;
}

/* Run @to's handler for @m on this thread; the caller holds the lock. */
static inline void run_handler(struct act__thread *t, struct act_actor *to, struct act_msg *m)
{
	/* restored on the pop: a permissive re-entry leaves the outer entry's
	 * index behind (nothing else needs it, see Cycle detection) */
	uint32_t prev = atomic_load_explicit(&to->chain_pos, memory_order_relaxed);

	atomic_store_explicit(&to->chain_pos, t->depth, memory_order_relaxed);
	t->chain[t->depth].actor = to;
	t->chain[t->depth].type = m->type;
	t->depth++;
	to->handlers[m->type](to, to->state_ptr, m);
	t->depth--;
	atomic_store_explicit(&to->chain_pos, prev, memory_order_relaxed);
}

/*
 * The general synchronous path shared by the family: every check, the
 * permissive re-entry, the contended wait, the error counters. On a held
 * lock: wait per @wait, or return -EBUSY for ACT_WAIT_NONE. Allocates
 * nothing. Out of line: the common cases take fast_send_fast() below and
 * come here only for what it does not handle, before any shared side
 * effect (the context it may have written into the caller's own message is
 * rewritten here).
 */
static __attribute__((noinline)) int fast_send_general(struct act_actor *to, struct act_msg *m,
							void *reply, uint32_t reply_cap,
							enum act_wait wait, unsigned flags,
							uint32_t extra_flags)
{
	struct act__thread *t = act__self_thread();
	bool held;
	int hold = 0;
	int rc;

	if (act__unlikely(atomic_load_explicit(&to->state, memory_order_relaxed) !=
			  ACT__ACTOR_RUNNING))
		return -ESHUTDOWN;
	if (act__unlikely(m->type >= to->handler_count || to->handlers[m->type] == NULL))
		return -ENOTSUP;
	rc = chain_check(t, to, m->type, flags, &held);
	if (act__unlikely(rc != 0))
		return rc;

	if (to->group_private) {
		/* Only the group's thread delivers: a plain load, no atomic RMW. */
		if (act__unlikely(atomic_load_explicit(&to->group->bound, memory_order_relaxed) != t))
			return -EPERM;
	} else if (!held) {
		hold = lock_acquire(to, t, wait);
		if (act__unlikely(hold < 0)) {
			if (hold == -EBUSY && !(extra_flags & ACT__F_VOID))
				act__stat_inc_shared(&to->busy_returns);
			else if (hold == -EDEADLK)
				act__stat_inc_shared(&to->deadlocks);
			return hold;
		}
	}

	act__sync_context(m, to, chain_top(t), reply, reply_cap, extra_flags);
	run_handler(t, to, m);
	act__stat_inc_owned(&to->sync_completions);
	if (hold != 0)
		act__lock_release_hold(to, hold);
	return act__sync_result(m);
}

/*
 * The common case, inlined into every entry point: a running receiver with
 * a handler for the type, not on this thread's call chain, and either
 * group-private to a group this thread runs (no lock, no atomic: the bound
 * thread is the only one that ever runs its handlers) or lockable with its
 * lock free (one CAS). Everything else - a registration, a cycle or a
 * permissive re-entry, a foreign thread, a held lock, an error - goes to
 * fast_send_general() before any shared side effect (no lock taken, no
 * chain entry, no counter), so it sees the call afresh.
 * Only this thread reads or writes its chain, hence the plain accesses.
 */
static inline __attribute__((always_inline)) int
fast_send_fast(struct act_actor *to, struct act_msg *m, void *reply, uint32_t reply_cap,
	       enum act_wait wait, unsigned flags, uint32_t extra_flags)
{
	struct act__thread *t = &act__tls_thread;
	uint32_t type = m->type;
	uint32_t depth = t->depth;
	act_handler_fn fn;
	int hold = 0;

	if (act__unlikely(atomic_load_explicit(&to->state, memory_order_relaxed) !=
				  ACT__ACTOR_RUNNING ||
			  type >= to->handler_count || depth >= ACT_CHAIN_MAX))
		goto general;
	fn = to->handlers[type];
	if (act__unlikely(fn == NULL))
		goto general;
	/* Cycle check: chain membership, O(1) (Cycle detection above). */
	if (act__unlikely(act__on_chain(t, to, depth)))
		goto general;
	/* The context goes into the caller's own message, so it needs no lock:
	 * written before the acquire, it stays out of the critical section. If
	 * the fast path gives up below, fast_send_general() rewrites it. */
	act__sync_context(m, to, depth != 0 ? t->chain[depth - 1].actor : NULL, reply,
			  reply_cap, extra_flags);
	if (act__likely(to->group_private)) {
		/* A thread is bound only after it registered, so t->id != 0 here. */
		const struct act__thread *bound =
			atomic_load_explicit(&to->group->bound, memory_order_relaxed);

		if (act__unlikely(bound != t))
			goto general;
	} else {
		/* Its own bias (plain accesses) or one CAS of a free word; a
		 * free word of a biased lock, someone else's bias, a revoked
		 * one or a held word: the general path. */
		hold = act__lock_try_fast(to, t);
		if (act__unlikely(hold == 0))
			goto general;
	}
	/* Critical section (lockable): the chain push, the handler, the
	 * completion counter (single writer: the lock holder), the release. */
	return act__sync_run(t, to, fn, m, depth, hold);
general:
	return fast_send_general(to, m, reply, reply_cap, wait, flags, extra_flags);
}

int act_fast_send(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap)
{
	return fast_send_fast(to, req, reply, reply_cap, ACT_WAIT_SLEEP, 0, 0);
}

int act_fast_send_spin(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap)
{
	return fast_send_fast(to, req, reply, reply_cap, ACT_WAIT_SPIN, 0, 0);
}

int act_fast_send_adaptive(struct act_actor *to, struct act_msg *req, void *reply,
			   uint32_t reply_cap)
{
	return fast_send_fast(to, req, reply, reply_cap, ACT_WAIT_ADAPTIVE, 0, 0);
}

int act_fast_send_x(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap)
{
	return fast_send_fast(to, req, reply, reply_cap, ACT_WAIT_NONE, 0, 0);
}

/*
 * act_fast_send_edge() off its inline path. With no caller, or no declared
 * edge from the caller to @to in @to's group, the call is refused like a
 * cycle (recorded, counted); with the edge declared, it is act_fast_send()
 * from here on, whose checks see why the fast path did not apply.
 */
int act__fast_send_edge_slow(struct act_actor *to, struct act_msg *req, void *reply,
			     uint32_t reply_cap)
{
	struct act__thread *t = act__self_thread();
	struct act_actor *from = chain_top(t);

	if (from == NULL || !(from->edges & to->edge_bit) || from->group != to->group) {
		record_cycle(t, to, req->type);
		return -ELOOP;
	}
	return fast_send_general(to, req, reply, reply_cap, ACT_WAIT_SLEEP, 0, 0);
}

int act_fast_send_opt(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap,
		      enum act_wait wait, enum act_call_flags flags)
{
	if (act__unlikely((unsigned)wait > ACT_WAIT_NONE ||
			  ((unsigned)flags & ~(unsigned)(ACT_CALL_CONSERVATIVE |
							 ACT_CALL_PERMISSIVE)) != 0 ||
			  (flags & (ACT_CALL_CONSERVATIVE | ACT_CALL_PERMISSIVE)) ==
				  (ACT_CALL_CONSERVATIVE | ACT_CALL_PERMISSIVE)))
		return -EINVAL;
	return fast_send_fast(to, req, reply, reply_cap, wait, flags, 0);
}

/* The checks of every asynchronous send, before any side effect. */
static inline int send_check(const struct act_actor *to, uint32_t type)
{
	if (act__unlikely(atomic_load_explicit(&to->state, memory_order_relaxed) !=
			  ACT__ACTOR_RUNNING))
		return -ESHUTDOWN;
	if (act__unlikely(type >= to->handler_count || to->handlers[type] == NULL))
		return -ENOTSUP;
	return 0;
}

static inline struct act_actor *send_sender(void)
{
	const struct act__thread *t = &act__tls_thread;

	return t->depth != 0 ? t->chain[t->depth - 1].actor : NULL;
}

/*
 * Sender. An asynchronous message names its sender (act_msg::sender), to
 * which act_reply() sends the answer and which its handler may read; the
 * sender may be stopped and destroyed while the message waits. So every
 * queued message that names a sender keeps it allocated until the message
 * leaves its queue (run, or discarded). Two counters on the sender, so
 * that neither side shares a written line with the other:
 *  - sent: messages sent naming it, counted by the send. Sends name the
 *    actor whose handler makes them, so only the thread running that
 *    handler writes it, under the actor's exclusive access (its lock, or
 *    its group's thread): a plain increment, no atomic RMW, on the lock's
 *    line that this thread already holds;
 *  - released: such messages that left their queue, counted by the thread
 *    that ran or discarded them (one atomic increment, on a line only the
 *    consumers write).
 * act_actor_destroy() subtracts sent from released: from then on released
 * is minus the number still queued, and the consumer whose increment
 * brings it to 0 drops the reference destroy took for them
 * (sender_left()). Which messages count:
 *  - mailbox and control queue: every message with a sender;
 *  - lane, sender of another group (a lockable actor run on this group's
 *    thread by fast_send): marked ACT__F_SENDER_REF;
 *  - lane, sender of the same group: none when sent (the lane has no
 *    atomics and no shared writes); the group's thread is the only one
 *    that runs the sender's handlers there and act_actor_destroy() requires
 *    the group idle, so destroy marks and counts the lane messages still
 *    naming it then (act__lane_sweep_sender()).
 * Sends from outside any handler name no sender and count nothing.
 * A destroyed (or stopped) sender refuses the reply: -ESHUTDOWN, counted
 * in the replier's act_actor_stats::orphan_replies.
 */
static inline void sender_sent(struct act_actor *sender, int64_t n)
{
	atomic_store_explicit(&sender->sent,
			      atomic_load_explicit(&sender->sent, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Undo sender_sent() on a send that failed (the same thread). */
static inline void sender_unsent(struct act_actor *sender)
{
	if (sender != NULL)
		sender_sent(sender, -1);
}

/* A message naming @sender left its queue (run or discarded). acq_rel: the
 * thread that frees sees every earlier consumer's accesses. */
void act__sender_left(struct act_actor *sender)
{
	if (atomic_fetch_add_explicit(&sender->released, 1, memory_order_acq_rel) == -1)
		act__actor_unref(sender); /* the last one after destroy */
}

/* A lane message that leaves the lane: its count on its sender, if any
 * (read before the message is freed). */
static inline void sender_release(struct act_actor *sender, uint32_t flags)
{
	if (act__unlikely(flags & ACT__F_SENDER_REF))
		act__sender_left(sender);
}

/*
 * An inline send into the mailbox's cell (act__group_takes_inline() said
 * yes); checks done. @mark: ACT__CELL_SPILL for a lane send spilled here.
 * Returns 0, -ENOBUFS (dropped under DROP_NEWEST: counted, consumed) or an
 * error from the enqueue.
 */
static int send_inline(struct act_actor *to, uint32_t type, const void *payload, uint32_t len,
		       uint32_t mark)
{
	struct act_actor *sender = send_sender();
	int rc;

	/* One reference per queued message, dropped after its delivery; one
	 * on its sender (Sender above). */
	atomic_fetch_add_explicit(&to->refs, 1, memory_order_relaxed);
	if (sender != NULL)
		sender_sent(sender, 1);
	rc = act__group_enqueue_cell(to->group, to, sender, type, payload, len, mark);
	if (rc != 0) {
		atomic_fetch_sub_explicit(&to->refs, 1, memory_order_relaxed);
		sender_unsent(sender);
	}
	return rc;
}

/*
 * Pool message @m to the mailbox; checks done, m->flags_ carries only
 * POOLED, the class and perhaps ACT__F_SPILL. Returns as send_inline(); on
 * -ENOBUFS @m was freed.
 */
static inline __attribute__((always_inline)) int send_pointer(struct act_actor *to,
								struct act_msg *m)
{
	int rc;

	struct act_actor *sender = send_sender();

	m->sender = sender;
	m->dest = to;
	/* One reference per queued message, dropped after its delivery; one
	 * on its sender (Sender above). */
	atomic_fetch_add_explicit(&to->refs, 1, memory_order_relaxed);
	if (sender != NULL)
		sender_sent(sender, 1);
	rc = act__group_enqueue(to->group, m);
	if (rc != 0) {
		atomic_fetch_sub_explicit(&to->refs, 1, memory_order_relaxed);
		sender_unsent(sender);
		if (rc == -ENOBUFS) /* dropped under DROP_NEWEST: consumed */
			act_msg_free(m);
	}
	return rc;
}

/* Errors of the mailbox paths as the send calls return them. */
static inline int send_result(int rc)
{
	return rc == -ENOBUFS ? 0 : rc;
}

/* A lane message's hold on @sender (Sender above): a reference for a
 * sender of another group, none (0) for one of @g's members. */
static inline uint32_t lane_sender_ref(struct act_group *g, struct act_actor *sender)
{
	if (act__likely(sender == NULL || sender->group == g))
		return 0;
	sender_sent(sender, 1);
	return ACT__F_SENDER_REF;
}

/*
 * Lane sends (group.c, Lane): the caller is on @to's group's thread inside
 * a handler (act__lane_eligible()), checks done. The lane's part is plain
 * loads and stores of memory only this thread touches; a full lane, or a
 * spill still waiting, sends to the mailbox with the SPILL mark instead.
 */
static int lane_send_pointer(struct act_group *g, struct act_actor *to, struct act_msg *m)
{
	struct act__lane_slot *slot = act__lane_reserve(g);
	int rc;

	m->flags_ &= ACT__F_POOLED | ACT__F_CLASS_MASK;
	if (act__likely(slot != NULL)) {
		m->sender = send_sender();
		m->flags_ |= lane_sender_ref(g, m->sender);
		m->dest = to;
		act__lane_stamp(g, m);
		slot->msg = m;
		act__lane_commit(g, to);
		return 0;
	}
	m->flags_ |= ACT__F_SPILL;
	rc = send_pointer(to, m);
	act__lane_spilled(g, rc);
	return send_result(rc);
}

static int lane_send_copy(struct act_group *g, struct act_actor *to, uint32_t type,
			  const void *payload, uint32_t len)
{
	struct act__lane_slot *slot = act__lane_reserve(g);
	struct act_msg *m;
	int rc;

	if (act__likely(slot != NULL)) {
		/* every field, as cell_take() (group.c) does: a handler sees
		 * the same header bytes whatever the slot held before */
		struct act_actor *sender = send_sender();

		slot->inl.hdr = (struct act_msg){
			.type = type,
			.size = len,
			.sender = sender,
			.flags_ = lane_sender_ref(g, sender),
			.dest = to,
		};
		act__copy_small(slot->inl.payload, payload, len);
		slot->msg = &slot->inl.hdr;
		act__lane_commit(g, to);
		return 0;
	}
	if (act__group_takes_inline(g, len)) {
		rc = send_inline(to, type, payload, len, ACT__CELL_SPILL);
	} else {
		m = act_msg_alloc(type, len);
		if (m == NULL)
			return -errno;
		act__copy_small(m->payload, payload, len);
		m->flags_ |= ACT__F_SPILL;
		rc = send_pointer(to, m);
		if (rc != 0 && rc != -ENOBUFS)
			act_msg_free(m);
	}
	act__lane_spilled(g, rc);
	return send_result(rc);
}

int act_send(struct act_actor *to, struct act_msg *m)
{
	struct act_group *g = to->group;
	int rc;

	if (act__unlikely(!(m->flags_ & ACT__F_POOLED)))
		return -EINVAL;
	rc = send_check(to, m->type);
	if (act__unlikely(rc != 0))
		return rc;
	if (act__lane_eligible(g, &act__tls_thread))
		return lane_send_pointer(g, to, m);
	if (act__group_takes_inline(g, m->size) &&
	    atomic_load_explicit(&g->bound, memory_order_relaxed) != &act__tls_thread) {
		/* The block stays on this thread: it goes back to this thread's
		 * cache instead of crossing to the consumer's. From the consumer's
		 * own thread there is no line to save, and the pointer is cheaper
		 * than two copies (callgrind: 429 against 500 instructions a send
		 * and dispatch). */
		rc = send_inline(to, m->type, m->payload, m->size, 0);
		if (rc == 0 || rc == -ENOBUFS) /* copied, or dropped: consumed */
			act_msg_free(m);
		return send_result(rc);
	}
	m->flags_ &= ACT__F_POOLED | ACT__F_CLASS_MASK;
	return send_result(send_pointer(to, m));
}

int act_send_copy(struct act_actor *to, uint32_t type, const void *payload, uint32_t len)
{
	struct act_group *g = to->group;
	struct act_msg *m;
	int rc;

	if (act__lane_eligible(g, &act__tls_thread) && len <= ACT__INLINE_MAX &&
	    !atomic_load_explicit(&g->instrument, memory_order_relaxed)) {
		rc = send_check(to, type);
		return act__likely(rc == 0) ? lane_send_copy(g, to, type, payload, len) : rc;
	}
	if (act__group_takes_inline(g, len)) {
		rc = send_check(to, type);
		return act__likely(rc == 0) ? send_result(send_inline(to, type, payload, len, 0))
					    : rc;
	}
	m = act_msg_alloc(type, len);
	if (m == NULL)
		return -errno;
	if (len != 0)
		memcpy(m->payload, payload, len);
	rc = act_send(to, m);
	if (rc != 0)
		act_msg_free(m);
	return rc;
}

int act_send_control(struct act_actor *to, uint32_t type, const void *payload, uint32_t len)
{
	struct act_msg *m;
	int rc;

	if (act__unlikely(to == NULL || (len != 0 && payload == NULL)))
		return -EINVAL;
	rc = send_check(to, type);
	if (act__unlikely(rc != 0))
		return rc;
	m = act_msg_alloc(type, len);
	if (m == NULL)
		return -errno;
	if (len != 0)
		memcpy(m->payload, payload, len);
	m->flags_ &= ACT__F_POOLED | ACT__F_CLASS_MASK;
	m->sender = send_sender();
	if (m->sender != NULL)
		sender_sent(m->sender, 1);
	m->dest = to;
	m->qdepth = 0;
	m->mailbox_was_empty = 0;
	m->enqueue_tsc = 0;
	/* One reference per queued message, dropped after its delivery. */
	atomic_fetch_add_explicit(&to->refs, 1, memory_order_relaxed);
	act__group_ctl_push(to->group, m);
	return 0;
}

int act_fast_send_void(struct act_actor *to, struct act_msg *req)
{
	int rc = fast_send_fast(to, req, NULL, 0, ACT_WAIT_NONE, 0, ACT__F_VOID);

	if (rc >= 0)
		return 0;
	if (rc != -EBUSY && rc != -ELOOP && rc != -EPERM)
		return rc;
	/* Fall back to the mailbox with a copy (inline, or a pool message),
	 * stack and pool requests alike: the caller keeps @req whatever the
	 * outcome (act.h). Sending a pool request itself made its ownership
	 * depend on the return value, and a handler passing on the message it
	 * was given had it queued and then freed by the runtime. */
	rc = act_send_copy(to, req->type, req->payload, req->size);
	if (rc != 0)
		return rc;
	act__stat_inc_shared(&to->async_fallbacks);
	return 1;
}

/* Run @to's handler for asynchronous message @m, if @to is alive and has
 * one; on the group's thread, outside any handler of the group. */
static inline void run_async(struct act__thread *t, struct act_actor *to, struct act_msg *m)
{
	int hold = 0;

	if (atomic_load_explicit(&to->state, memory_order_relaxed) == ACT__ACTOR_DEAD ||
	    m->type >= to->handler_count || to->handlers[m->type] == NULL)
		return;
	if (!to->group_private) {
		/* The uncontended acquire inline, the rest out of line. This
		 * thread holds no actor lock here (no step or drain inside a
		 * handler), so its wait never gives up (ACT__WAIT_MUST); the
		 * loop only covers a revocation lost to a racing revoker. */
		hold = act__lock_try_fast(to, t);
		while (act__unlikely(hold <= 0))
			hold = lock_acquire(to, t, ACT__WAIT_MUST);
	}
	run_handler(t, to, m);
	act__stat_inc_owned(&to->async_runs);
	if (hold != 0)
		act__lock_release_hold(to, hold);
}

/* Mailbox delivery, on the group's thread. Consumes @m. */
void act__deliver_async(struct act_group *g, struct act_msg *m)
{
	struct act_actor *to = m->dest;

	(void)g;
	run_async(act__self_thread(), to, m);
	/* its count on its sender (Sender above) */
	if (m->sender != NULL)
		act__sender_left(m->sender);
	act_msg_free(m);
	act__actor_unref(to);
}

/* A mailbox or control message that will not run leaves its queue:
 * its block, its reference on its sender and on @m->dest (group.c). */
void act__msg_discard(struct act_msg *m)
{
	struct act_actor *to = m->dest;

	if (m->sender != NULL) /* its count on its sender (Sender above) */
		act__sender_left(m->sender);
	act_msg_free(m); /* a no-op for an inline copy */
	/* The own group of an actor being destroyed holds the last
	 * references but the actor itself frees after us. */
	act__actor_unref(to);
}

/*
 * A lane message leaves the lane (run or discarded): its block, if any, and
 * its count on the receiver. It holds no reference, unless the receiver was
 * destroyed while it waited: act_actor_destroy() then took one for it.
 * Plain loads and stores: the group's thread is the only writer.
 */
static inline void lane_done(struct act_msg *m)
{
	struct act_actor *to = m->dest;
	struct act_actor *sender = m->sender;
	uint32_t flags = m->flags_;

	if (act__unlikely(flags & ACT__F_POOLED)) /* not a message in its slot */
		act_msg_free(m);
	sender_release(sender, flags);
	atomic_store_explicit(&to->lane_queued,
			      atomic_load_explicit(&to->lane_queued, memory_order_relaxed) - 1,
			      memory_order_relaxed);
	if (act__unlikely(atomic_load_explicit(&to->state, memory_order_relaxed) ==
			  ACT__ACTOR_DEAD))
		act__actor_unref(to);
}

void act__lane_done(struct act_msg *m)
{
	lane_done(m);
}

/* Lane delivery, on the group's thread (registered: it runs the group).
 * Consumes @m. */
void act__deliver_lane(struct act_msg *m)
{
	run_async(&act__tls_thread, m->dest, m);
	lane_done(m);
}

/* ------------------------------------------------------------------------ */
/* Reply                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * One rule for every reply call (act.h): a reply that returns an error was
 * not made, so the handler may still reply (a shorter one, say). A
 * synchronous one that did not fit marks the call (ACT__F_TRUNC: the caller
 * gets -EMSGSIZE) until a later reply fits.
 */
static inline int reply_sync(struct act_msg *m, uint32_t type, const void *data, uint32_t len)
{
	m->flags_ |= ACT__F_REPLIED;
	if (m->flags_ & ACT__F_VOID)
		return 0; /* fast_send_void: nobody waits for a value */
	if (act__unlikely(len > m->reply_cap_)) {
		/* not made (TRUNC counts only while no reply was made:
		 * act__sync_result()) */
		m->flags_ = (m->flags_ & ~ACT__F_REPLIED) | ACT__F_TRUNC;
		return -EMSGSIZE;
	}
	act__copy_small(m->reply_buf_, data, len);
	m->reply_len_ = len;
	m->reply_type_ = type;
	return 0;
}

int act_reply(struct act_msg *m, uint32_t type, const void *data, uint32_t len)
{
	if (act__unlikely(m->flags_ & ACT__F_REPLIED))
		return -EALREADY;
	if (m->flags_ & ACT__F_SYNC)
		return reply_sync(m, type, data, len);
	if (m->sender == NULL)
		return -ENOTCONN;
	/* The message holds the sender (Sender above): its memory is there,
	 * its group perhaps not (destroyed with it), so check before routing. */
	if (act__unlikely(atomic_load_explicit(&m->sender->state, memory_order_relaxed) !=
			  ACT__ACTOR_RUNNING)) {
		if (m->dest != NULL)
			act__stat_inc_shared(&m->dest->orphan_replies);
		return -ESHUTDOWN;
	}
	{
		int rc = act_send_copy(m->sender, type, data, len);

		if (rc == 0)
			m->flags_ |= ACT__F_REPLIED;
		else if (rc == -ESHUTDOWN && m->dest != NULL)
			/* stopped between the check above and the send */
			act__stat_inc_shared(&m->dest->orphan_replies);
		return rc;
	}
}

/* act__sync_result() of a call whose handler made a reply that did not
 * fit: -EMSGSIZE, unless a reply that fitted came after it. */
__attribute__((cold, noinline)) int act__sync_result_trunc(const struct act_msg *m)
{
	return m->flags_ & ACT__F_REPLIED ? (int)m->reply_len_ : -EMSGSIZE;
}

int act_reply_sync(struct act_msg *m, uint32_t type, const void *data, uint32_t len)
{
	if (act__unlikely(m->flags_ & ACT__F_REPLIED))
		return -EALREADY;
	if (act__unlikely(!(m->flags_ & ACT__F_SYNC)))
		return -EPROTO;
	return reply_sync(m, type, data, len);
}
