/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Mailbox queues: bounded MPSC queues of non-NULL `void *` items (DESIGN.md
 * section 2, "Mailbox queues"). Inline hot paths in act_queue_pvt.h; this
 * file holds init/fini, the waits, kick/close and the slow paths.
 *
 * Concurrency (same text as act_queue_pvt.h): push, kick, close and count
 * from any number of threads; pop_burst and wait from one consumer thread at
 * a time; init and fini alone.
 *
 * Algorithms and bounds (C = capacity, a power of two; n = items returned):
 *
 *  BQUEUE   Ring of C cells (struct act__qcell, one line each: a pointer
 *           item or an inline entry written under the lock between
 *           act__bq_claim() and act__bq_publish()) under one pthread mutex
 *           (adaptive); the consumer sleeps on the futex word
 *           consumer_state, producers on the condvar not_full. Push: one
 *           lock acquisition, O(1); the first push (or kick, or close)
 *           after the consumer announced its sleep - so the empty ->
 *           non-empty transition - wakes it, with one futex_wake after
 *           unlocking; later ones make no call. The consumer reads the
 *           published cells without the lock (tail: release store under the
 *           lock, acquire load; only the consumer moves head, and producers
 *           write only behind it) and takes the lock only to move head, so
 *           no producer waits for a copy-out.
 *           pop_burst: one acquisition per item, O(n); after the burst, one
 *           not_full signal per freed slot, at most one per waiting
 *           producer. Why a futex word and not a condvar for the consumer:
 *           pthread_cond_wait re-takes the mutex marked contended (glibc
 *           cannot know whether others wait), so the consumer's next unlock
 *           made a FUTEX_WAKE system call after every wake-up, on the round
 *           trip's critical path (measured: three futex calls per hop of a
 *           ping-pong with sleeping consumers; now a wait and a wake).
 *  BQUEUE_BATCHED
 *           Same ring, lock and wake-up. pop_burst takes min(available, max)
 *           with a single acquisition (O(n) copies, outside it) and
 *           broadcasts not_full once.
 *  SHARDED  L lanes (a power of two), each a ring of C/L slots under its own
 *           mutex (PTHREAD_MUTEX_ADAPTIVE_NP: spins briefly, then sleeps). A
 *           producer thread takes a lane ticket from a global atomic counter
 *           on its first push and always uses lane ticket mod L, so
 *           per-producer FIFO holds and producers on different lanes never
 *           share a lock. A full lane is full for its producers even if other
 *           lanes have room. pop_burst visits lanes round-robin from an atomic
 *           cursor, taking as many as it may from each lane under one lock,
 *           O(L + n); the next burst starts after the last lane served. Push
 *           is O(1) plus O(L) relaxed reads when the caller asks for info.
 *           Order between producers of different lanes is not preserved.
 *  LOCKFREE Vyukov's bounded MPMC array queue used as MPSC: C cells, each
 *           with a sequence number (seq == pos: free for position pos;
 *           seq == pos + 1: holds the entry of pos). Push: one CAS on
 *           enqueue_pos when uncontended (retried only when another producer
 *           won the same position), plain stores of the entry and a release
 *           store of seq; lock-free, not wait-free. pop_burst: no RMW at all,
 *           acquire loads of seq and release stores freeing cells, O(n), plus
 *           one seq_cst fence per non-empty burst for the producers'
 *           wake-up. A cell is one cache line (C x 64 bytes): beside a
 *           pointer item it can hold an inline entry (two pointers and 32
 *           bytes, written between act__lf_claim() and act__lf_publish(),
 *           read between act__lf_head() and act__lf_release()), so that an
 *           entry moves one line from producer to consumer; the actor
 *           runtime puts small messages there (actor_pvt.h). The consumer
 *           polls the cell's seq, never the producers' enqueue_pos. Known
 *           limit of the design: a producer preempted between its CAS and
 *           its seq store hides the items behind it until it resumes (they
 *           count in act__queue_count() but are not ready).
 *
 *  SHARDED and LOCKFREE share a futex sleep protocol (struct
 *  act__queue_signal): the consumer sleeps on consumer_state; producers
 *  waiting for space sleep on the counter space_seq. BQUEUE* use the same
 *  consumer states, but the mutex, not fences, orders the word (W1).
 *
 *  Waits are bounded by their timeout (act__queue_wait) or by close (pushes
 *  blocked on a full queue). Producer spin before sleeping:
 *  ACT__QUEUE_PUSH_SPIN polls; consumer spin: the caller's count.
 *
 * No lost wake-ups. Each sleep below names the access that must see the
 * sleeper, and why it does.
 *
 *  W1 (BQUEUE*, consumer on consumer_state). Every write of the word is
 *     made under the mutex:
 *       consumer: lock; [A] test "empty, not kicked, not closed"; store
 *                 state = SLEEPING; unlock; futex_wait(state, SLEEPING);
 *                 lock; [B] store state = RUNNING; re-test (and, if it
 *                 sleeps again, B is the next A: same critical section)
 *       waker (push, kick, close): lock; make the change; if state is
 *                 SLEEPING: store RUNNING, and after unlock futex_wake
 *                 (act__bq_take_sleeper()).
 *     Take a sleep, from A to B, and a waker's critical section W. If W
 *     precedes A, A's test sees its change and this sleep does not begin;
 *     if W follows B, it concerns a later sleep, if any. Otherwise W lies
 *     between A and B. In that span only A and waker sections write the
 *     word, so the first waker section after A reads SLEEPING, stores
 *     RUNNING and wakes; the later ones read RUNNING and make no call, and
 *     their changes, W's among them, precede B, whose re-test sees them.
 *     It remains that the consumer reaches B. The first waker's store
 *     precedes its futex_wake, and the kernel compares the word with
 *     SLEEPING atomically with queueing the waiter: the consumer's
 *     futex_wait either returns at once (the word is already RUNNING) or is
 *     queued before the wake and woken by it. A wake that arrives late, in
 *     a later sleep, is spurious: B re-tests and sleeps again. A timeout or
 *     EINTR also leads to B, which retracts SLEEPING itself.
 *     Waking after unlock lets the woken consumer find the mutex free; the
 *     waker still runs inside its call, so the queue cannot be finalised
 *     under it (fini runs alone). BATCHED: same protocol; the first waker
 *     after A saw the empty ring A tested.
 *  W2 (BQUEUE*, producer on not_full). The producer tests "full and not
 *     closed" and counts itself in producers_waiting under the mutex, and
 *     pthread_cond_wait releases the mutex atomically with becoming a
 *     waiter, so a pop or close that follows the test in lock order finds
 *     it counted and a waiter. Pop reads producers_waiting under the mutex
 *     after freeing each slot and, before pop_burst returns, signals once
 *     per slot freed while the count was non-zero (BQUEUE) or broadcasts
 *     (BATCHED); close broadcasts. Each signal unblocks a thread still
 *     blocked in cond_wait, so k freed slots unblock k waiters (or all of
 *     them, if fewer); a woken waiter re-tests under the mutex, and if
 *     another producer took the slot first, the queue is full again and the
 *     next pop signals.
 *  W3 (SHARDED, LOCKFREE, consumer on consumer_state). Dekker handshake:
 *       consumer: store state = SLEEPING; F1 (seq_cst fence);
 *                 re-check ready/closed/kicked; futex_wait(state, SLEEPING)
 *       producer: publish (lane tail / cell seq; or kicked; or closed);
 *                 F2 (seq_cst fence); load state; if SLEEPING and the
 *                 exchange to RUNNING returns SLEEPING: futex_wake.
 *     F1 and F2 are totally ordered. If F2 precedes F1, the re-check sees the
 *     publication and the consumer does not sleep. If F1 precedes F2, the
 *     producer's load sees that SLEEPING (or a later value; only an exchange
 *     by another waker writes RUNNING after it, and that waker wakes), so
 *     exactly one waker swaps it to RUNNING and calls futex_wake; the kernel
 *     checks the word against SLEEPING atomically with queueing the waiter,
 *     so the consumer either returns at once (word already RUNNING) or is
 *     queued before the wake.
 *  W4 (SHARDED, producer on space_seq, woken by pop). Under its lane's lock
 *     the producer sees the lane full, increments producers_waiting, reads
 *     space_seq, unlocks and futex-waits on that value. The consumer frees
 *     lane slots under the same lock and reads producers_waiting after
 *     unlocking. If the consumer's critical section came after the
 *     producer's, the lock orders the increment before that read, and the
 *     producer's read of space_seq before the consumer's bump (so the futex
 *     word differs or the wake finds the waiter). Otherwise the producer saw
 *     the freed slots and did not sleep. No fence needed.
 *  W5 (SHARDED, LOCKFREE, producer on space_seq, woken by close). Close
 *     stores closed, then bumps space_seq with release and wakes all. The
 *     producer reads space_seq with acquire before it re-checks closed: if
 *     that read saw the bump (or a later bump in its release sequence) it
 *     also sees closed; if not, the futex word has changed by the time the
 *     bump lands, so futex_wait returns or is woken.
 *  W6 (LOCKFREE, producer on space_seq, woken by pop). Dekker handshake:
 *       producer: read space_seq (acquire); producers_waiting += 1;
 *                 F3; re-check closed and the cell at enqueue_pos;
 *                 futex_wait(space_seq, value read)
 *       consumer: free cells (release stores of seq); F4;
 *                 load producers_waiting; if non-zero: bump space_seq
 *                 (release), futex_wake all.
 *     If F4 precedes F3, the re-check sees the freed cells. If F3 precedes
 *     F4, the consumer sees the increment and bumps; the producer's read of
 *     space_seq did not see that bump (had it, acquire would have made the
 *     freed cells visible to the re-check), so the futex word differs or the
 *     wake finds the waiter.
 *  Kick: W1 (under the mutex) or W3 (kicked is published before F2).
 *
 * ThreadSanitizer does not model standalone fences: under TSan the fences
 * still run but TSan cannot reason about W3/W6; the stress test's wake-up
 * modes (one producer, so nothing repairs a missed wake) cover them instead.
 * No plain data is published through a fence.
 *
 * Memory: init allocates the ring (cache-line aligned, one block; SHARDED
 * also its lane array; BQUEUE* and LOCKFREE 64 bytes a cell, SHARDED 8 a
 * slot) and nothing else; no call allocates after init.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "act_queue_pvt.h"

ACT__TLS uint32_t act__queue_tls_lane_ticket;

/* relaxed: only uniqueness of the returned tickets matters */
static _Atomic uint32_t lane_ticket_counter;

uint32_t act__queue_assign_lane(void)
{
	uint32_t ticket;

	do
		ticket = atomic_fetch_add_explicit(&lane_ticket_counter, 1,
						   memory_order_relaxed) + 1;
	while (ticket == 0);
	act__queue_tls_lane_ticket = ticket;
	return ticket;
}

static uint32_t round_up_pow2(uint32_t v)
{
	if (v <= 1)
		return 1;
	return 1u << (32 - __builtin_clz(v - 1));
}

static void *alloc_lines(size_t bytes)
{
	void *p = NULL;

	bytes = (bytes + ACT__CACHE_LINE - 1) & ~(size_t)(ACT__CACHE_LINE - 1);
	if (posix_memalign(&p, ACT__CACHE_LINE, bytes) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

static struct timespec ns_to_timespec(uint64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / 1000000000u);
	ts.tv_nsec = (long)(ns % 1000000000u);
	return ts;
}

/* ------------------------------------------------------------------------ */
/* BQUEUE, BQUEUE_BATCHED                                                   */
/* ------------------------------------------------------------------------ */

static int bq_init(struct act__bqueue *bq, uint32_t capacity)
{
	pthread_condattr_t attr;
	int rc;

	bq->ring = alloc_lines((size_t)capacity * sizeof(struct act__qcell));
	if (bq->ring == NULL)
		return -ENOMEM;
	bq->mask = capacity - 1;
	{
		/* Adaptive: a colliding producer spins briefly before it sleeps
		 * in the kernel (measured: 2.2x async send with 2 callers). */
		pthread_mutexattr_t mattr;

		rc = pthread_mutexattr_init(&mattr);
		if (rc != 0)
			goto fail_ring;
		(void)pthread_mutexattr_settype(&mattr, PTHREAD_MUTEX_ADAPTIVE_NP);
		rc = pthread_mutex_init(&bq->lock, &mattr);
		pthread_mutexattr_destroy(&mattr);
	}
	if (rc != 0)
		goto fail_ring;
	rc = pthread_condattr_init(&attr);
	if (rc != 0)
		goto fail_lock;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (rc == 0)
		rc = pthread_cond_init(&bq->not_full, &attr);
	pthread_condattr_destroy(&attr);
	if (rc != 0)
		goto fail_lock;
	return 0;

fail_lock:
	pthread_mutex_destroy(&bq->lock);
fail_ring:
	free(bq->ring);
	bq->ring = NULL;
	return -rc;
}

static void bq_fini(struct act__bqueue *bq)
{
	pthread_cond_destroy(&bq->not_full);
	pthread_mutex_destroy(&bq->lock);
	free(bq->ring);
	bq->ring = NULL;
}

/*
 * A producer waiting for space is an edge of the wait-for graph (actor.c,
 * Deadlock walk): before its first sleep it publishes the mailbox's group
 * and walks, and it walks again after every wake, so a cycle closed while
 * it sleeps is found within one timeout. -EDEADLK ends the wait.
 */
#define ACT__SPACE_WAIT_NS (50 * 1000 * 1000)

/* The group of the queue that holds union member @u (bq, sh or lf). */
static inline struct act_group *queue_owner(const void *u)
{
	return ((const struct act__queue *)(const void *)((const char *)u -
							    offsetof(struct act__queue, u)))
		->owner;
}

/* Before each sleep for space: true if waiting would close a cycle. */
static bool space_wait_cycle(struct act_group *owner, bool *first)
{
	bool cycle = act__space_wait(owner, *first);

	*first = false;
	return cycle;
}

/* Lock held on entry and on return. */
int act__bq_wait_space(struct act__bqueue *bq, bool block)
{
	struct act_group *owner = queue_owner(bq);
	bool first = true;
	uint32_t i;
	int rc;

	if (!block)
		return -EAGAIN;
	pthread_mutex_unlock(&bq->lock);
	for (i = 0; i < ACT__QUEUE_PUSH_SPIN; i++) {
		act__cpu_relax();
		/* relaxed polls: a hint only, the decision is taken under the lock */
		if (atomic_load_explicit(&bq->tail, memory_order_relaxed) -
			    atomic_load_explicit(&bq->head, memory_order_relaxed) <= bq->mask ||
		    atomic_load_explicit(&bq->closed, memory_order_relaxed) != 0)
			break;
	}
	pthread_mutex_lock(&bq->lock);
	for (;;) {
		struct timespec until;

		if (atomic_load_explicit(&bq->closed, memory_order_relaxed) != 0) {
			rc = -ESHUTDOWN;
			break;
		}
		if (atomic_load_explicit(&bq->tail, memory_order_relaxed) -
			    atomic_load_explicit(&bq->head, memory_order_relaxed) <= bq->mask) {
			rc = 0;
			break;
		}
		if (space_wait_cycle(owner, &first)) {
			rc = -EDEADLK;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &until); /* the condvar's clock */
		until.tv_nsec += ACT__SPACE_WAIT_NS;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		bq->producers_waiting++; /* W2 */
		pthread_cond_timedwait(&bq->not_full, &bq->lock, &until);
		bq->producers_waiting--;
	}
	if (!first)
		act__space_wait_end(owner);
	return rc;
}

static bool bq_has_event(const struct act__bqueue *bq)
{
	/* relaxed polls: a hint only, the decision is taken under the lock */
	return atomic_load_explicit(&bq->tail, memory_order_relaxed) !=
		       atomic_load_explicit(&bq->head, memory_order_relaxed) ||
	       atomic_load_explicit(&bq->kicked, memory_order_relaxed) != 0 ||
	       atomic_load_explicit(&bq->closed, memory_order_relaxed) != 0;
}

static int bq_wait(struct act__bqueue *bq, uint32_t spin, uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns != 0 ? act__mono_ns() + timeout_ns : 0;
	uint32_t i;
	int rc;

	for (i = 0; i < spin && !bq_has_event(bq); i++)
		act__cpu_relax();
	/*
	 * An item seen without the lock stays there for pop_burst (only the
	 * consumer moves head). With no kick to consume, return without taking
	 * the lock that the pop takes right after: one acquisition less a
	 * message for a spinning consumer. (relaxed: as bq_has_event())
	 */
	if (atomic_load_explicit(&bq->tail, memory_order_relaxed) !=
		    atomic_load_explicit(&bq->head, memory_order_relaxed) &&
	    atomic_load_explicit(&bq->kicked, memory_order_relaxed) == 0)
		return 0;

	pthread_mutex_lock(&bq->lock);
	for (;;) {
		struct timespec rel = { 0, 0 };

		if (atomic_load_explicit(&bq->tail, memory_order_relaxed) !=
		    atomic_load_explicit(&bq->head, memory_order_relaxed)) {
			rc = 0;
			break;
		}
		if (atomic_load_explicit(&bq->closed, memory_order_relaxed) != 0) {
			rc = -ESHUTDOWN;
			break;
		}
		if (atomic_load_explicit(&bq->kicked, memory_order_relaxed) != 0) {
			rc = 0;
			break;
		}
		if (timeout_ns != 0) {
			uint64_t now = act__mono_ns();

			if (now >= deadline) {
				rc = -ETIMEDOUT;
				break;
			}
			rel = ns_to_timespec(deadline - now);
		}
		/* W1: announce under the lock, sleep outside it */
		atomic_store_explicit(&bq->consumer_state, ACT__CONSUMER_SLEEPING,
				      memory_order_relaxed); /* under lock */
		pthread_mutex_unlock(&bq->lock);
		act__futex_wait(&bq->consumer_state, ACT__CONSUMER_SLEEPING,
				timeout_ns != 0 ? &rel : NULL);
		pthread_mutex_lock(&bq->lock);
		/* woken, timed out or spurious: retract the announcement (a waker
		 * may already have), then re-test */
		atomic_store_explicit(&bq->consumer_state, ACT__CONSUMER_RUNNING,
				      memory_order_relaxed); /* under lock */
	}
	if (rc == 0) /* under lock, like the kicker's store */
		atomic_store_explicit(&bq->kicked, 0, memory_order_relaxed);
	pthread_mutex_unlock(&bq->lock);
	return rc;
}

static void bq_kick(struct act__bqueue *bq)
{
	bool wake;

	pthread_mutex_lock(&bq->lock);
	atomic_store_explicit(&bq->kicked, 1, memory_order_relaxed); /* under lock: W1 */
	wake = act__bq_take_sleeper(bq);
	pthread_mutex_unlock(&bq->lock);
	if (wake)
		act__futex_wake(&bq->consumer_state, 1);
}

static void bq_close(struct act__bqueue *bq)
{
	bool wake;

	pthread_mutex_lock(&bq->lock);
	atomic_store_explicit(&bq->closed, 1, memory_order_relaxed); /* under lock: W1, W2 */
	pthread_cond_broadcast(&bq->not_full);
	wake = act__bq_take_sleeper(bq);
	pthread_mutex_unlock(&bq->lock);
	if (wake)
		act__futex_wake(&bq->consumer_state, 1);
}

/* ------------------------------------------------------------------------ */
/* Shared futex protocol (SHARDED, LOCKFREE)                                */
/* ------------------------------------------------------------------------ */

void act__queue_wake_producers(struct act__queue_signal *sig)
{
	/* release: pairs with the acquire read of space_seq by a producer about
	 * to sleep (W5, W6); the futex word changes before the wake */
	atomic_fetch_add_explicit(&sig->space_seq, 1, memory_order_release);
	act__futex_wake(&sig->space_seq, INT_MAX);
}

/* Consumer's view: is an item ready for pop_burst? */
static bool sh_ready(const struct act__sharded *sh)
{
	uint32_t i;

	for (i = 0; i < sh->lane_count; i++) {
		const struct act__lane *lane = &sh->lanes[i];

		/* relaxed: after F1 this pairs with the producer's tail store
		 * before F2 (W3); the pop itself takes the lane lock */
		if (atomic_load_explicit(&lane->tail, memory_order_relaxed) !=
		    atomic_load_explicit(&lane->head, memory_order_relaxed))
			return true;
	}
	return false;
}

static bool lf_ready(const struct act__lfqueue *lf)
{
	/* relaxed: consumer's own index */
	uint64_t pos = atomic_load_explicit(&lf->dequeue_pos, memory_order_relaxed);

	/* acquire: pairs with the producer's release store of seq (W3) */
	return atomic_load_explicit(&lf->cells[pos & lf->mask].seq, memory_order_acquire) ==
	       pos + 1;
}

static bool queue_ready(const struct act__queue *q)
{
	if (q->type == ACT_QUEUE_SHARDED)
		return sh_ready(&q->u.sh);
	return lf_ready(&q->u.lf);
}

/* Consume a pending kick on a 0 return. */
static void take_kick(struct act__queue_signal *sig)
{
	/* acquire: pairs with the kicker's release store, so whatever the kicker
	 * wrote before kicking is visible to the consumer after the wait */
	if (atomic_load_explicit(&sig->kicked, memory_order_relaxed) != 0)
		(void)atomic_exchange_explicit(&sig->kicked, 0, memory_order_acquire);
}

static int futex_queue_wait(struct act__queue *q, struct act__queue_signal *sig,
			    _Atomic uint32_t *closed, uint32_t spin, uint64_t timeout_ns)
{
	uint64_t deadline = timeout_ns != 0 ? act__mono_ns() + timeout_ns : 0;
	uint32_t i;

	for (i = 0; i < spin; i++) {
		if (queue_ready(q) ||
		    atomic_load_explicit(&sig->kicked, memory_order_relaxed) != 0 ||
		    atomic_load_explicit(closed, memory_order_relaxed) != 0)
			break;
		act__cpu_relax();
	}
	for (;;) {
		struct timespec rel = { 0, 0 };
		bool sleep;

		if (queue_ready(q)) {
			take_kick(sig);
			return 0;
		}
		/* acquire: pairs with the release store in act__queue_close(); items
		 * pushed before the close are then visible, and win over it */
		if (atomic_load_explicit(closed, memory_order_acquire) != 0) {
			if (queue_ready(q)) {
				take_kick(sig);
				return 0;
			}
			return -ESHUTDOWN;
		}
		/* acquire: pairs with the kicker's release store */
		if (atomic_load_explicit(&sig->kicked, memory_order_relaxed) != 0 &&
		    atomic_exchange_explicit(&sig->kicked, 0, memory_order_acquire) != 0)
			return 0;
		if (timeout_ns != 0) {
			uint64_t now = act__mono_ns();

			if (now >= deadline)
				return -ETIMEDOUT;
			rel = ns_to_timespec(deadline - now);
		}

		/* W3: announce, fence, re-check, sleep */
		atomic_store_explicit(&sig->consumer_state, ACT__CONSUMER_SLEEPING,
				      memory_order_relaxed); /* ordered by F1 */
		act__queue_fence(); /* F1: pairs with F2 in act__queue_signal_consumer() */
		sleep = !queue_ready(q) &&
			atomic_load_explicit(closed, memory_order_relaxed) == 0 &&
			atomic_load_explicit(&sig->kicked, memory_order_relaxed) == 0;
		if (sleep)
			act__futex_wait(&sig->consumer_state, ACT__CONSUMER_SLEEPING,
					timeout_ns != 0 ? &rel : NULL);
		/* relaxed: no waker needs to see this; a waker that still reads
		 * SLEEPING only makes a spare wake call */
		atomic_store_explicit(&sig->consumer_state, ACT__CONSUMER_RUNNING,
				      memory_order_relaxed);
	}
}

static void futex_queue_kick(struct act__queue_signal *sig)
{
	/* release: pairs with the consumer's acquire exchange (take_kick) */
	atomic_store_explicit(&sig->kicked, 1, memory_order_release);
	act__queue_signal_consumer(sig); /* F2 after the store: W3 */
}

static void futex_queue_close(struct act__queue_signal *sig, _Atomic uint32_t *closed)
{
	/* release: pairs with the consumer's acquire load in futex_queue_wait(),
	 * and via the release bump of space_seq with waiting producers (W5) */
	atomic_store_explicit(closed, 1, memory_order_release);
	act__queue_signal_consumer(sig); /* F2 after the store: W3 */
	act__queue_wake_producers(sig); /* W5 */
}

/* ------------------------------------------------------------------------ */
/* SHARDED                                                                  */
/* ------------------------------------------------------------------------ */

static int sh_init(struct act__sharded *sh, uint32_t capacity, uint32_t shards)
{
	pthread_mutexattr_t attr;
	uint32_t lanes, lane_capacity, stride, i;
	void **slots;
	int rc;

	if (shards == 0)
		lanes = capacity < ACT__QUEUE_DEFAULT_SHARDS ? capacity
							     : ACT__QUEUE_DEFAULT_SHARDS;
	else if (shards > ACT__QUEUE_MAX_SHARDS)
		return -EINVAL;
	else
		lanes = round_up_pow2(shards);
	if (lanes > capacity)
		return -EINVAL;
	lane_capacity = capacity / lanes;
	/* each lane's slots start on their own cache line */
	stride = (uint32_t)((((size_t)lane_capacity * sizeof(void *) + ACT__CACHE_LINE - 1) /
			     ACT__CACHE_LINE) * ACT__CACHE_LINE / sizeof(void *));

	sh->lanes = alloc_lines((size_t)lanes * sizeof(struct act__lane));
	if (sh->lanes == NULL)
		return -ENOMEM;
	slots = alloc_lines((size_t)lanes * stride * sizeof(void *));
	if (slots == NULL) {
		free(sh->lanes);
		sh->lanes = NULL;
		return -ENOMEM;
	}
	rc = pthread_mutexattr_init(&attr);
	if (rc != 0)
		goto fail;
#if defined(_GNU_SOURCE)
	(void)pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	for (i = 0; i < lanes; i++) {
		rc = pthread_mutex_init(&sh->lanes[i].lock, &attr);
		if (rc != 0) {
			while (i-- > 0)
				pthread_mutex_destroy(&sh->lanes[i].lock);
			pthread_mutexattr_destroy(&attr);
			goto fail;
		}
		sh->lanes[i].ring = slots + (size_t)i * stride;
	}
	pthread_mutexattr_destroy(&attr);
	sh->lane_count = lanes;
	sh->lane_mask = lanes - 1;
	sh->slot_mask = lane_capacity - 1;
	return 0;

fail:
	free(slots);
	free(sh->lanes);
	sh->lanes = NULL;
	return -rc;
}

static void sh_fini(struct act__sharded *sh)
{
	uint32_t i;

	if (sh->lanes == NULL)
		return;
	for (i = 0; i < sh->lane_count; i++)
		pthread_mutex_destroy(&sh->lanes[i].lock);
	free(sh->lanes[0].ring);
	free(sh->lanes);
	sh->lanes = NULL;
}

static uint32_t lane_count_of(const struct act__lane *lane, uint32_t lane_capacity)
{
	/* relaxed, head first: tail only grows, so tail - head cannot underflow */
	uint32_t head = atomic_load_explicit(&lane->head, memory_order_relaxed);
	uint32_t n = atomic_load_explicit(&lane->tail, memory_order_relaxed) - head;

	return n < lane_capacity ? n : lane_capacity;
}

uint32_t act__sh_depth_except(const struct act__sharded *sh, const struct act__lane *skip)
{
	uint32_t i, n = 0;

	for (i = 0; i < sh->lane_count; i++)
		if (&sh->lanes[i] != skip)
			n += lane_count_of(&sh->lanes[i], sh->slot_mask + 1);
	return n;
}

static bool lane_has_space(const struct act__sharded *sh, const struct act__lane *lane)
{
	return atomic_load_explicit(&lane->tail, memory_order_relaxed) -
		       atomic_load_explicit(&lane->head, memory_order_relaxed) <= sh->slot_mask;
}

/* Lane lock held on entry and on return. */
int act__sh_wait_space(struct act__sharded *sh, struct act__lane *lane, bool block)
{
	const struct timespec timeout = {0, ACT__SPACE_WAIT_NS};
	struct act_group *owner = queue_owner(sh);
	bool first = true;
	uint32_t i;
	int rc;

	if (!block)
		return -EAGAIN;
	pthread_mutex_unlock(&lane->lock);
	for (i = 0; i < ACT__QUEUE_PUSH_SPIN; i++) {
		act__cpu_relax();
		/* relaxed polls: a hint only, the decision is taken under the lock */
		if (lane_has_space(sh, lane) ||
		    atomic_load_explicit(&sh->closed, memory_order_relaxed) != 0)
			break;
	}
	pthread_mutex_lock(&lane->lock);
	for (;;) {
		uint32_t seq;

		if (atomic_load_explicit(&sh->closed, memory_order_relaxed) != 0) {
			rc = -ESHUTDOWN;
			break;
		}
		if (lane_has_space(sh, lane)) { /* exact: under the lane lock */
			rc = 0;
			break;
		}
		if (space_wait_cycle(owner, &first)) {
			rc = -EDEADLK;
			break;
		}
		/* relaxed: the lane lock orders it before the consumer's read (W4) */
		atomic_fetch_add_explicit(&sh->sig.producers_waiting, 1, memory_order_relaxed);
		/* acquire: pairs with the release bump in act__queue_wake_producers (W5) */
		seq = atomic_load_explicit(&sh->sig.space_seq, memory_order_acquire);
		/* after the read of space_seq (W5) */
		if (atomic_load_explicit(&sh->closed, memory_order_relaxed) != 0) {
			atomic_fetch_sub_explicit(&sh->sig.producers_waiting, 1,
						  memory_order_relaxed);
			rc = -ESHUTDOWN;
			break;
		}
		pthread_mutex_unlock(&lane->lock);
		act__futex_wait(&sh->sig.space_seq, seq, &timeout);
		pthread_mutex_lock(&lane->lock);
		atomic_fetch_sub_explicit(&sh->sig.producers_waiting, 1, memory_order_relaxed);
	}
	if (!first)
		act__space_wait_end(owner);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* LOCKFREE                                                                 */
/* ------------------------------------------------------------------------ */

static int lf_init(struct act__lfqueue *lf, uint32_t capacity)
{
	uint32_t i;

	lf->cells = alloc_lines((size_t)capacity * sizeof(struct act__qcell));
	if (lf->cells == NULL)
		return -ENOMEM;
	for (i = 0; i < capacity; i++) /* before publication by init's caller */
		atomic_init(&lf->cells[i].seq, i);
	lf->mask = capacity - 1;
	return 0;
}

static void lf_fini(struct act__lfqueue *lf)
{
	free(lf->cells);
	lf->cells = NULL;
}

static bool lf_has_space(const struct act__lfqueue *lf)
{
	/* relaxed: a stale (smaller) position finds a published cell and reports
	 * space, which only costs a retry of the push */
	uint64_t pos = atomic_load_explicit(&lf->enqueue_pos, memory_order_relaxed);
	/* acquire: pairs with the consumer's release store freeing the cell */
	uint64_t seq = atomic_load_explicit(&lf->cells[pos & lf->mask].seq, memory_order_acquire);

	return (int64_t)(seq - pos) >= 0;
}

/* Returns 0 when the push should retry, -EAGAIN or -ESHUTDOWN otherwise. */
int act__lf_wait_space(struct act__lfqueue *lf, bool block)
{
	const struct timespec timeout = {0, ACT__SPACE_WAIT_NS};
	struct act_group *owner = queue_owner(lf);
	bool first = true;
	uint32_t i;
	int rc;

	if (!block)
		return -EAGAIN;
	for (i = 0; i < ACT__QUEUE_PUSH_SPIN; i++) {
		act__cpu_relax();
		if (atomic_load_explicit(&lf->closed, memory_order_relaxed) != 0)
			return -ESHUTDOWN;
		if (lf_has_space(lf))
			return 0;
	}
	for (;;) {
		/* acquire: pairs with the release bump in act__queue_wake_producers
		 * (W5, W6); read before announcing */
		uint32_t seq = atomic_load_explicit(&lf->sig.space_seq, memory_order_acquire);
		bool closed, space;

		/* relaxed: ordered by F3 */
		atomic_fetch_add_explicit(&lf->sig.producers_waiting, 1, memory_order_relaxed);
		act__queue_fence(); /* F3: pairs with F4 in act__lf_pop_burst() (W6) */
		closed = atomic_load_explicit(&lf->closed, memory_order_relaxed) != 0;
		space = lf_has_space(lf);
		if (!closed && !space && space_wait_cycle(owner, &first)) {
			atomic_fetch_sub_explicit(&lf->sig.producers_waiting, 1,
						  memory_order_relaxed);
			rc = -EDEADLK;
			break;
		}
		if (!closed && !space)
			act__futex_wait(&lf->sig.space_seq, seq, &timeout);
		atomic_fetch_sub_explicit(&lf->sig.producers_waiting, 1, memory_order_relaxed);
		if (closed || space) {
			rc = closed ? -ESHUTDOWN : 0;
			break;
		}
	}
	if (!first)
		act__space_wait_end(owner);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Public (internal) API                                                    */
/* ------------------------------------------------------------------------ */

int act__queue_init(struct act__queue *q, enum act_queue_type type, uint32_t capacity,
		     uint32_t shards)
{
	int rc;

	if (q == NULL)
		return -EINVAL;
	memset(q, 0, sizeof(*q));
	q->type = ACT_QUEUE_COUNT_; /* fini and the hot calls reject it until done */
	if ((unsigned)type >= ACT_QUEUE_COUNT_ || capacity > ACT__QUEUE_MAX_CAPACITY)
		return -EINVAL;
	capacity = capacity < 2 ? 2 : round_up_pow2(capacity);

	switch (type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		rc = bq_init(&q->u.bq, capacity);
		break;
	case ACT_QUEUE_SHARDED:
		rc = sh_init(&q->u.sh, capacity, shards);
		break;
	case ACT_QUEUE_LOCKFREE:
		rc = lf_init(&q->u.lf, capacity);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	if (rc == 0)
		q->type = type;
	return rc;
}

void act__queue_fini(struct act__queue *q)
{
	if (q == NULL)
		return;
	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		bq_fini(&q->u.bq);
		break;
	case ACT_QUEUE_SHARDED:
		sh_fini(&q->u.sh);
		break;
	case ACT_QUEUE_LOCKFREE:
		lf_fini(&q->u.lf);
		break;
	default:
		return;
	}
	q->type = ACT_QUEUE_COUNT_;
}

int act__queue_wait(struct act__queue *q, uint32_t spin, uint64_t timeout_ns)
{
	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		return bq_wait(&q->u.bq, spin, timeout_ns);
	case ACT_QUEUE_SHARDED:
		return futex_queue_wait(q, &q->u.sh.sig, &q->u.sh.closed, spin, timeout_ns);
	case ACT_QUEUE_LOCKFREE:
		return futex_queue_wait(q, &q->u.lf.sig, &q->u.lf.closed, spin, timeout_ns);
	default:
		return -EINVAL;
	}
}

void act__queue_kick(struct act__queue *q)
{
	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		bq_kick(&q->u.bq);
		break;
	case ACT_QUEUE_SHARDED:
		futex_queue_kick(&q->u.sh.sig);
		break;
	case ACT_QUEUE_LOCKFREE:
		futex_queue_kick(&q->u.lf.sig);
		break;
	default:
		break;
	}
}

void act__queue_close(struct act__queue *q)
{
	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		bq_close(&q->u.bq);
		break;
	case ACT_QUEUE_SHARDED:
		futex_queue_close(&q->u.sh.sig, &q->u.sh.closed);
		break;
	case ACT_QUEUE_LOCKFREE:
		futex_queue_close(&q->u.lf.sig, &q->u.lf.closed);
		break;
	default:
		break;
	}
}

uint32_t act__queue_count(const struct act__queue *q)
{
	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED: {
		/* relaxed, head first: tail only grows, so tail - head cannot underflow */
		uint32_t head = atomic_load_explicit(&q->u.bq.head, memory_order_relaxed);
		uint32_t n = atomic_load_explicit(&q->u.bq.tail, memory_order_relaxed) - head;

		return n <= q->u.bq.mask ? n : q->u.bq.mask + 1;
	}
	case ACT_QUEUE_SHARDED:
		return act__sh_depth_except(&q->u.sh, NULL);
	case ACT_QUEUE_LOCKFREE: {
		/* relaxed, dequeue first: a position is dequeued only after it was
		 * claimed, so enqueue - dequeue cannot underflow */
		const struct act__lfqueue *lf = &q->u.lf;
		uint64_t head = atomic_load_explicit(&lf->dequeue_pos, memory_order_relaxed);
		uint64_t n = atomic_load_explicit(&lf->enqueue_pos, memory_order_relaxed) - head;

		return n <= lf->mask ? (uint32_t)n : (uint32_t)(lf->mask + 1);
	}
	default:
		return 0;
	}
}
