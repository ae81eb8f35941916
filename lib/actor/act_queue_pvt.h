/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Mailbox queues of the actor runtime: bounded MPSC queues of non-NULL
 * `void *` items. Internal to lib/actor, not installed, not stable.
 *
 * Four implementations behind one tag (enum act_queue_type); the hot calls
 * (act__queue_push(), act__queue_pop_burst()) are inline and dispatch with a
 * switch. Algorithms, bounds and the wake-up proofs are in queue.c.
 *
 * Which calls may run concurrently:
 *  - act__queue_push(), act__queue_kick(), act__queue_close() and
 *    act__queue_count(), and for LOCKFREE act__lf_claim() followed by
 *    act__lf_publish(): any number of threads, at any time between init
 *    and fini.
 *  - act__queue_pop_burst() and act__queue_wait(), and for LOCKFREE
 *    act__lf_head(), act__lf_release() and act__lf_advance(): the
 *    consumer, one thread at a time (a new consumer thread must be ordered
 *    after the old one by the caller, e.g. by a join). They run
 *    concurrently with the above.
 *  - act__queue_init() and act__queue_fini(): alone (no other call on the
 *    queue may be running or start before init returns / after fini starts).
 *
 * Memory: struct act__queue is cache-line aligned (_Alignas(64)); a struct
 * that embeds it must be allocated with aligned_alloc()/posix_memalign()
 * (or live in static or automatic storage).
 */
#ifndef TICKWIRE_ACT_QUEUE_PVT_H
#define TICKWIRE_ACT_QUEUE_PVT_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "act.h"
#include "act_pvt.h"

/** Largest capacity act__queue_init() accepts (before rounding). */
#define ACT__QUEUE_MAX_CAPACITY (1u << 31)
/** Lanes of an ACT_QUEUE_SHARDED queue when @c shards is 0. */
#define ACT__QUEUE_DEFAULT_SHARDS 4u
/** Largest lane count of an ACT_QUEUE_SHARDED queue (after rounding). */
#define ACT__QUEUE_MAX_SHARDS 64u
/** Polls (cpu_relax) of a full queue before a blocking producer sleeps. */
#define ACT__QUEUE_PUSH_SPIN 256u

/** What act__queue_push() saw; instrumentation only. */
struct act__push_info {
	uint32_t depth;   /**< items queued after this push (approximate: SHARDED, LOCKFREE) */
	bool was_empty;   /**< the queue was empty before this push (same caveat) */
	bool waited;      /**< the producer found the queue full and waited for space */
};

/* ------------------------------------------------------------------------ */
/* Implementations (fields are private to act_queue_pvt.h and queue.c)     */
/* ------------------------------------------------------------------------ */

/*
 * Consumer states, the futex word of every queue's consumer sleep (BQUEUE*:
 * act__bqueue.consumer_state; SHARDED, LOCKFREE: act__queue_signal).
 */
enum {
	ACT__CONSUMER_RUNNING = 0,
	ACT__CONSUMER_SLEEPING = 1,
};

/** Data bytes of an inline entry, beside its two pointer words. */
#define ACT__QCELL_DATA 32

/*
 * A ring cell of LOCKFREE and BQUEUE*, one cache line. An entry is a pointer
 * item (kind == 0: act__queue_push()) or an inline entry (kind != 0): two
 * pointer words and ACT__QCELL_DATA bytes written in place, with kind and
 * word free for the writer. An inline entry moves this one line from
 * producer to consumer and nothing else (no message block behind a
 * pointer). seq is LOCKFREE's: pos (free for pos), pos + 1 (holds the entry
 * of pos); the BQUEUE* mutex orders the cells instead and leaves it unused.
 */
struct act__qcell {
	_Atomic uint64_t seq;
	uint32_t kind;          /* 0: pointer item; else an inline entry */
	uint32_t word;          /* inline: free for the writer */
	union {
		void *item;
		struct {
			void *ptr[2];
			_Alignas(16) unsigned char data[ACT__QCELL_DATA];
		} inl;
	} u;
} __attribute__((aligned(ACT__CACHE_LINE)));

_Static_assert(sizeof(struct act__qcell) == ACT__CACHE_LINE, "one cell, one line");

/*
 * ACT_QUEUE_BQUEUE and ACT_QUEUE_BQUEUE_BATCHED: a ring of cells under one
 * mutex (64 bytes a slot, so that an entry can travel inline). head and
 * tail are written only under @c lock; they are atomics so that
 * act__queue_count() and the spin phases can poll them without the lock.
 * They sit on separate lines so a spinning poller of one side never pulls
 * the line that holds the lock or the other side's index. The consumer
 * sleeps on the futex word consumer_state, producers on the condvar
 * not_full (queue.c, W1 and W2).
 */
struct act__bqueue {
	struct act__qcell *ring;
	uint32_t mask;                  /* capacity - 1 */
	_Atomic uint32_t closed;        /* set under lock; polled relaxed */
	pthread_mutex_t lock;

	act__cache_aligned _Atomic uint32_t tail; /* producer index (under lock) */
	uint32_t producers_waiting;     /* producers in cond_wait(not_full), under lock */

	act__cache_aligned _Atomic uint32_t head; /* consumer index (under lock) */
	/* futex word: written only under lock (SLEEPING by the consumer, RUNNING
	 * by the consumer or by the one waker); the kernel reads it unlocked */
	_Atomic uint32_t consumer_state;
	_Atomic uint32_t kicked;        /* set/cleared under lock; polled relaxed */

	act__cache_aligned pthread_cond_t not_full; /* producers sleep here */
};

/*
 * Sleep/wake words shared by SHARDED and LOCKFREE (futex based). One line:
 * every push reads consumer_state, every non-empty burst reads
 * producers_waiting; both are written only on the slow paths.
 */
struct act__queue_signal {
	_Atomic uint32_t consumer_state;    /* futex word of the consumer's sleep */
	_Atomic uint32_t kicked;            /* pending act__queue_kick() */
	_Atomic uint32_t producers_waiting; /* producers announced asleep on space_seq */
	_Atomic uint32_t space_seq;         /* futex word of producers waiting for space */
};

/* One lane of a SHARDED queue: a ring under its own mutex. */
struct act__lane {
	act__cache_aligned pthread_mutex_t lock;
	void **ring;                              /* lane_capacity slots */
	act__cache_aligned _Atomic uint32_t tail; /* producer index (under lock) */
	act__cache_aligned _Atomic uint32_t head; /* consumer index (under lock) */
};

struct act__sharded {
	struct act__lane *lanes;
	uint32_t lane_count;                /* power of two */
	uint32_t lane_mask;                 /* lane_count - 1 */
	uint32_t slot_mask;                 /* lane capacity - 1 */
	_Atomic uint32_t closed;
	act__cache_aligned _Atomic uint32_t cursor; /* next lane the consumer visits */
	act__cache_aligned struct act__queue_signal sig;
};

struct act__lfqueue {
	struct act__qcell *cells;
	uint64_t mask;                              /* capacity - 1 */
	_Atomic uint32_t closed;
	act__cache_aligned _Atomic uint64_t enqueue_pos; /* producers: one CAS per push */
	act__cache_aligned _Atomic uint64_t dequeue_pos; /* consumer's only; others read */
	act__cache_aligned struct act__queue_signal sig;
};

/** A mailbox queue. Fields are private; use the act__queue_* calls. */
struct act__queue {
	enum act_queue_type type;
	/* the group whose mailbox this is (group.c sets it after init), NULL
	 * for a bare queue: a producer blocked for space publishes it for the
	 * deadlock walk (actor.c) */
	struct act_group *owner;
	union {
		struct act__bqueue bq;   /* BQUEUE, BQUEUE_BATCHED */
		struct act__sharded sh;  /* SHARDED */
		struct act__lfqueue lf;  /* LOCKFREE */
	} u;
};

/* ------------------------------------------------------------------------ */
/* Cold API (queue.c)                                                       */
/* ------------------------------------------------------------------------ */

/**
 * Initialise @p q. @p capacity is rounded up to a power of two (minimum 2,
 * maximum ACT__QUEUE_MAX_CAPACITY before rounding). @p shards is used only by
 * ACT_QUEUE_SHARDED: 0 means ACT__QUEUE_DEFAULT_SHARDS (fewer if the capacity
 * is smaller), otherwise rounded up to a power of two; each lane holds
 * capacity / shards items. Not thread-safe against other calls on @p q.
 * Allocates the ring (malloc), so call it off the hot path.
 * @return 0; -EINVAL (NULL @p q, unknown @p type, capacity too large, shards
 *         above ACT__QUEUE_MAX_SHARDS or above the rounded capacity);
 *         -ENOMEM; or a negative errno from pthread_*_init.
 */
int act__queue_init(struct act__queue *q, enum act_queue_type type, uint32_t capacity,
		     uint32_t shards);

/**
 * Release what act__queue_init() allocated. Items still queued are not
 * touched (pop them first if they own memory). No other call may be running.
 * Calling it twice, or on a queue whose init failed, is harmless.
 */
void act__queue_fini(struct act__queue *q);

/**
 * Consumer only. Return 0 as soon as the queue has an item ready for
 * act__queue_pop_burst(), polling @p spin times (cpu_relax) before sleeping;
 * or 0 when act__queue_kick() ends the wait (a kick issued while no wait runs
 * ends the next one at once; every wait that returns 0 consumes a pending
 * kick). Items take precedence over close: a closed queue still returns 0
 * while it holds items, so the consumer can drain it. (SHARDED, LOCKFREE: a
 * push that overlapped the close may still land after -ESHUTDOWN; a last
 * pop_burst once producers have returned collects it.)
 * @param timeout_ns relative timeout, 0 = none
 * @return 0, -ETIMEDOUT, -ESHUTDOWN (closed and empty).
 */
int act__queue_wait(struct act__queue *q, uint32_t spin, uint64_t timeout_ns);

/** Any thread: end the consumer's current wait, or its next one. */
void act__queue_kick(struct act__queue *q);

/**
 * Any thread: later pushes, and pushes waiting for space, return -ESHUTDOWN;
 * a sleeping act__queue_wait() on an empty queue returns -ESHUTDOWN. Items
 * already queued stay poppable. Idempotent.
 */
void act__queue_close(struct act__queue *q);

/** Any thread: items queued, approximate while other threads run. */
uint32_t act__queue_count(const struct act__queue *q);

/* Slow paths of the inline calls; not for direct use. */
/* actor.c: the deadlock walk of a producer waiting for space in @g's
 * mailbox (NULL: a bare queue, nothing to do); queue.c's waits call them */
struct act_group;
bool act__space_wait(struct act_group *g, bool first);
void act__space_wait_end(struct act_group *g);

int act__bq_wait_space(struct act__bqueue *bq, bool block);
int act__sh_wait_space(struct act__sharded *sh, struct act__lane *lane, bool block);
int act__lf_wait_space(struct act__lfqueue *lf, bool block);
void act__queue_wake_producers(struct act__queue_signal *sig);
uint32_t act__queue_assign_lane(void);
uint32_t act__sh_depth_except(const struct act__sharded *sh, const struct act__lane *skip);

/*
 * Producer's lane ticket for SHARDED queues, assigned round-robin on the
 * thread's first push (0 = not yet assigned). One definition in queue.c so
 * a thread keeps its lane whichever file pushes.
 */
extern ACT__TLS uint32_t act__queue_tls_lane_ticket;

/* ------------------------------------------------------------------------ */
/* Hot path                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Full barrier of the Dekker-style "announce, fence, re-check" handshakes
 * (see queue.c, "No lost wake-ups"). ThreadSanitizer does not model
 * standalone fences (gcc warns with -Wtsan); the fence is still emitted, and
 * no plain data is published through it, only the decision to wake.
 */
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
static inline void act__queue_fence(void)
{
	atomic_thread_fence(memory_order_seq_cst);
}
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/*
 * Producer side of the consumer handshake (SHARDED, LOCKFREE), called after
 * the item was published. The fence is F2; it pairs with F1 in
 * act__queue_wait() (queue.c). Only a producer that reads SLEEPING and wins
 * the exchange back to RUNNING makes the wake system call: at most one per
 * consumer sleep.
 */
static inline void act__queue_signal_consumer(struct act__queue_signal *sig)
{
	act__queue_fence(); /* F2: pairs with F1 (consumer: store SLEEPING; F1; re-check) */
	/* relaxed: ordered by F2; exchange is the single winner among wakers */
	if (act__unlikely(atomic_load_explicit(&sig->consumer_state, memory_order_relaxed) ==
			  ACT__CONSUMER_SLEEPING) &&
	    atomic_exchange_explicit(&sig->consumer_state, ACT__CONSUMER_RUNNING,
				     memory_order_relaxed) == ACT__CONSUMER_SLEEPING)
		act__futex_wake(&sig->consumer_state, 1);
}

/* ---- BQUEUE / BQUEUE_BATCHED -------------------------------------------- */

/*
 * Waker side of W1 (queue.c), called under bq->lock after the change the
 * consumer waits for (item, kick, close): true if the consumer sleeps or is
 * about to, and then the caller, the only waker of this sleep, must call
 * act__futex_wake(&bq->consumer_state, 1) once it has unlocked.
 */
static inline bool act__bq_take_sleeper(struct act__bqueue *bq)
{
	/* relaxed: the lock orders both with the consumer's accesses */
	if (atomic_load_explicit(&bq->consumer_state, memory_order_relaxed) !=
	    ACT__CONSUMER_SLEEPING)
		return false;
	atomic_store_explicit(&bq->consumer_state, ACT__CONSUMER_RUNNING, memory_order_relaxed);
	return true;
}

/*
 * Take bq->lock and the cell at the tail: 0 with *cell_out set, or -EAGAIN
 * (full, !block), -ESHUTDOWN, with the lock released. The caller writes the
 * cell's entry, then calls act__bq_publish(), holding the lock throughout
 * (so nothing but the copy may run in between).
 */
static inline int act__bq_claim(struct act__bqueue *bq, bool block, struct act__qcell **cell_out,
				bool *waited)
{
	uint32_t tail;

	pthread_mutex_lock(&bq->lock);
	/* relaxed: every access to closed/head/tail that matters is under lock */
	if (act__unlikely(atomic_load_explicit(&bq->closed, memory_order_relaxed) != 0)) {
		pthread_mutex_unlock(&bq->lock);
		return -ESHUTDOWN;
	}
	tail = atomic_load_explicit(&bq->tail, memory_order_relaxed);
	if (act__unlikely(tail - atomic_load_explicit(&bq->head, memory_order_relaxed) >
			  bq->mask)) {
		int rc = act__bq_wait_space(bq, block); /* lock held on entry and return */

		if (rc != 0) {
			pthread_mutex_unlock(&bq->lock);
			return rc;
		}
		*waited = true;
		tail = atomic_load_explicit(&bq->tail, memory_order_relaxed);
	}
	*cell_out = &bq->ring[tail & bq->mask];
	return 0;
}

/*
 * Make the entry written into the claimed cell ready, unlock and wake a
 * sleeping consumer. Returns the new tail (for the push's info).
 */
static inline uint32_t act__bq_publish(struct act__bqueue *bq)
{
	/* relaxed: under the lock we hold */
	uint32_t tail = atomic_load_explicit(&bq->tail, memory_order_relaxed) + 1;
	bool wake;

	/* release: the consumer reads the cells it publishes without the lock
	 * (act__bq_ready()); a plain store on x86, as before */
	atomic_store_explicit(&bq->tail, tail, memory_order_release);
	/*
	 * Only the first push after the consumer announced its sleep finds it
	 * SLEEPING (it saw an empty ring), so BATCHED's "wake on the empty ->
	 * non-empty transition" holds for both types. Wake after unlocking: the
	 * woken consumer then finds the lock free (queue.c, W1).
	 */
	wake = act__bq_take_sleeper(bq);
	pthread_mutex_unlock(&bq->lock);
	if (wake)
		act__futex_wake(&bq->consumer_state, 1);
	return tail;
}

static inline int act__bq_push(struct act__bqueue *bq, void *item, bool block,
			       struct act__push_info *info)
{
	struct act__qcell *cell = NULL;
	uint32_t tail, head;
	bool waited = false;
	int rc = act__bq_claim(bq, block, &cell, &waited);

	if (act__unlikely(rc != 0))
		return rc;
	cell->kind = 0;
	cell->u.item = item;
	/* relaxed: read under the lock, before publish releases it */
	head = atomic_load_explicit(&bq->head, memory_order_relaxed);
	tail = act__bq_publish(bq);
	if (info != NULL) {
		info->depth = tail - head;
		info->was_empty = tail - 1 == head;
		info->waited = waited;
	}
	return 0;
}

/*
 * Consumer: the entries ready, without the lock. Read (copy) them with
 * act__bq_cell(), then free them with act__bq_release(), which takes the
 * lock for the head's move alone: the copy runs outside it, so producers
 * never wait for a consumer's copy-out. Safe because a producer writes a
 * cell only at the tail, after checking under the lock that the head has
 * moved past it, and only the consumer moves the head: the cells between
 * head and the tail read here stay as they are until act__bq_release().
 */
static inline uint32_t act__bq_ready(struct act__bqueue *bq)
{
	/* acquire: pairs with act__bq_publish() (the cells' contents); relaxed
	 * head: only this thread, the consumer, writes it */
	return atomic_load_explicit(&bq->tail, memory_order_acquire) -
	       atomic_load_explicit(&bq->head, memory_order_relaxed);
}

/* Consumer: the cell @p i entries after the head (i < act__bq_ready()). */
static inline struct act__qcell *act__bq_cell(struct act__bqueue *bq, uint32_t i)
{
	return &bq->ring[(atomic_load_explicit(&bq->head, memory_order_relaxed) + i) & bq->mask];
}

/*
 * Consumer, after copying them out: free the @p n entries after the head
 * (one lock acquisition; the cells' reads happen before its unlock, hence
 * before any producer's rewrite). *to_wake counts the producers waiting for
 * space that the caller signals on not_full once its burst is over
 * (act__bq_wake_producers()): at most one per freed slot and at most as
 * many as wait (read under lock: W2 in queue.c).
 */
static inline void act__bq_release(struct act__bqueue *bq, uint32_t n, uint32_t *to_wake)
{
	uint32_t head, w = *to_wake + n;

	pthread_mutex_lock(&bq->lock);
	/* relaxed: head is written only under the lock we hold */
	head = atomic_load_explicit(&bq->head, memory_order_relaxed);
	atomic_store_explicit(&bq->head, head + n, memory_order_relaxed);
	*to_wake = w < bq->producers_waiting ? w : bq->producers_waiting;
	pthread_mutex_unlock(&bq->lock);
}

/* Signal @p to_wake producers (act__bq_release()); BATCHED broadcasts. */
static inline void act__bq_wake_producers(struct act__bqueue *bq, uint32_t to_wake,
					  bool broadcast)
{
	if (to_wake != 0 && broadcast) {
		pthread_cond_broadcast(&bq->not_full);
		return;
	}
	while (to_wake-- > 0)
		pthread_cond_signal(&bq->not_full);
}

/*
 * Pointer items only: a queue that carries inline entries is consumed with
 * act__bq_ready() / act__bq_cell() / act__bq_release(); these pops stop
 * at an inline entry.
 *
 * BQUEUE: one lock acquisition per item, so producers interleave with the
 * drain. Producers waiting for space are signalled once per freed slot (at
 * most as many as wait), after the burst: one wake-up per slot, not one
 * context switch per item while the burst runs.
 */
static inline uint32_t act__bq_pop_each(struct act__bqueue *bq, void **items, uint32_t max)
{
	uint32_t n = 0, to_wake = 0;

	while (n < max && act__bq_ready(bq) != 0) {
		const struct act__qcell *cell = act__bq_cell(bq, 0);

		if (cell->kind != 0)
			break;
		items[n++] = cell->u.item;
		act__bq_release(bq, 1, &to_wake);
	}
	act__bq_wake_producers(bq, to_wake, false);
	return n;
}

/* BQUEUE_BATCHED: everything available, up to max, with one acquisition. */
static inline uint32_t act__bq_pop_batch(struct act__bqueue *bq, void **items, uint32_t max)
{
	uint32_t avail = act__bq_ready(bq);
	uint32_t n = 0, to_wake = 0;

	if (avail == 0)
		return 0;
	while (n < avail && n < max && act__bq_cell(bq, n)->kind == 0) {
		items[n] = act__bq_cell(bq, n)->u.item;
		n++;
	}
	act__bq_release(bq, n, &to_wake);
	act__bq_wake_producers(bq, to_wake, true); /* n slots freed */
	return n;
}

/* ---- SHARDED ------------------------------------------------------------ */

static inline int act__sh_push(struct act__sharded *sh, void *item, bool block,
			       struct act__push_info *info)
{
	uint32_t ticket = act__queue_tls_lane_ticket;
	struct act__lane *lane;
	uint32_t head, tail;
	bool waited = false;

	if (act__unlikely(ticket == 0))
		ticket = act__queue_assign_lane();
	lane = &sh->lanes[ticket & sh->lane_mask];

	pthread_mutex_lock(&lane->lock);
	/* relaxed: a push that misses a concurrent close is ordered before it */
	if (act__unlikely(atomic_load_explicit(&sh->closed, memory_order_relaxed) != 0)) {
		pthread_mutex_unlock(&lane->lock);
		return -ESHUTDOWN;
	}
	/* relaxed: head and tail are written only under the lane lock we hold */
	tail = atomic_load_explicit(&lane->tail, memory_order_relaxed);
	head = atomic_load_explicit(&lane->head, memory_order_relaxed);
	if (act__unlikely(tail - head > sh->slot_mask)) {
		int rc = act__sh_wait_space(sh, lane, block); /* lane lock held on entry/return */

		if (rc != 0) {
			pthread_mutex_unlock(&lane->lock);
			return rc;
		}
		waited = true;
		tail = atomic_load_explicit(&lane->tail, memory_order_relaxed);
		head = atomic_load_explicit(&lane->head, memory_order_relaxed);
	}
	lane->ring[tail & sh->slot_mask] = item;
	/*
	 * relaxed: the lane lock orders the slot for the consumer's pop; the
	 * consumer's lock-free emptiness re-check in act__queue_wait() is ordered
	 * by F1/F2 (act__queue_signal_consumer()).
	 */
	atomic_store_explicit(&lane->tail, tail + 1, memory_order_relaxed);
	pthread_mutex_unlock(&lane->lock);
	act__queue_signal_consumer(&sh->sig);
	if (info != NULL) {
		uint32_t others = act__sh_depth_except(sh, lane);

		info->depth = tail + 1 - head + others;
		info->was_empty = tail == head && others == 0;
		info->waited = waited;
	}
	return 0;
}

static inline uint32_t act__sh_pop_burst(struct act__sharded *sh, void **items, uint32_t max)
{
	/* relaxed: cursor is the consumer's own; atomic only to be readable anywhere */
	uint32_t start = atomic_load_explicit(&sh->cursor, memory_order_relaxed);
	uint32_t next = start + 1;
	uint32_t n = 0;
	uint32_t i;

	for (i = 0; i < sh->lane_count && n < max; i++) {
		struct act__lane *lane = &sh->lanes[(start + i) & sh->lane_mask];
		uint32_t head, avail, k, j;

		/* relaxed peek to skip empty lanes without their lock; a stale
		 * "empty" only delays the item to the next burst (wait re-checks) */
		if (atomic_load_explicit(&lane->tail, memory_order_relaxed) ==
		    atomic_load_explicit(&lane->head, memory_order_relaxed))
			continue;
		pthread_mutex_lock(&lane->lock);
		/* relaxed: head and tail are written only under the lane lock we hold */
		head = atomic_load_explicit(&lane->head, memory_order_relaxed);
		avail = atomic_load_explicit(&lane->tail, memory_order_relaxed) - head;
		k = avail < max - n ? avail : max - n;
		for (j = 0; j < k; j++)
			items[n + j] = lane->ring[(head + j) & sh->slot_mask];
		/* relaxed: under the lane lock */
		atomic_store_explicit(&lane->head, head + k, memory_order_relaxed);
		pthread_mutex_unlock(&lane->lock);
		n += k;
		next = start + i + 1;
	}
	atomic_store_explicit(&sh->cursor, next & sh->lane_mask, memory_order_relaxed);
	/*
	 * relaxed: a producer increments producers_waiting inside its lane's
	 * critical section; this load follows our critical section on that lane,
	 * so the lane lock orders the pair (queue.c, W4).
	 */
	if (n != 0 && act__unlikely(atomic_load_explicit(&sh->sig.producers_waiting,
							 memory_order_relaxed) != 0))
		act__queue_wake_producers(&sh->sig);
	return n;
}

/* ---- LOCKFREE ----------------------------------------------------------- */

/*
 * Claim the cell of the next position: 0 with *pos_out set, or -EAGAIN
 * (full, !block), -ESHUTDOWN. The caller writes the cell's entry, then calls
 * act__lf_publish(); until then the entries behind it are not ready (the
 * design's known limit, queue.c), so nothing may run in between but the copy.
 */
static inline int act__lf_claim(struct act__lfqueue *lf, bool block, uint64_t *pos_out,
				bool *waited)
{
	uint64_t pos;

	/* relaxed: a push that misses a concurrent close is ordered before it */
	if (act__unlikely(atomic_load_explicit(&lf->closed, memory_order_relaxed) != 0))
		return -ESHUTDOWN;
	/* relaxed: the position is only a guess, validated by the cell's seq */
	pos = atomic_load_explicit(&lf->enqueue_pos, memory_order_relaxed);
	for (;;) {
		struct act__qcell *cell = &lf->cells[pos & lf->mask];
		int64_t dif;

		/* acquire: pairs with the consumer's release store seq = pos (cell freed),
		 * so its reads of the old entry happen before our writes */
		dif = (int64_t)(atomic_load_explicit(&cell->seq, memory_order_acquire) - pos);
		if (act__likely(dif == 0)) {
			/* relaxed: the cell's seq, not the position, carries the data */
			if (atomic_compare_exchange_weak_explicit(&lf->enqueue_pos, &pos, pos + 1,
								  memory_order_relaxed,
								  memory_order_relaxed))
				break;
		} else if (dif < 0) {
			int rc = act__lf_wait_space(lf, block);

			if (rc != 0)
				return rc;
			*waited = true;
			pos = atomic_load_explicit(&lf->enqueue_pos, memory_order_relaxed);
		} else {
			pos = atomic_load_explicit(&lf->enqueue_pos, memory_order_relaxed);
		}
	}
	*pos_out = pos;
	return 0;
}

/* Make the entry of claimed position @p pos ready and wake a sleeping consumer. */
static inline void act__lf_publish(struct act__lfqueue *lf, uint64_t pos)
{
	/* release: pairs with the consumer's acquire load of seq (act__lf_head(),
	 * the wait's re-check): the entry written before it is visible after */
	atomic_store_explicit(&lf->cells[pos & lf->mask].seq, pos + 1, memory_order_release);
	act__queue_signal_consumer(&lf->sig);
}

static inline int act__lf_push(struct act__lfqueue *lf, void *item, bool block,
			       struct act__push_info *info)
{
	struct act__qcell *cell;
	uint64_t pos = 0, deq;
	bool waited = false;
	int rc = act__lf_claim(lf, block, &pos, &waited);

	if (act__unlikely(rc != 0))
		return rc;
	cell = &lf->cells[pos & lf->mask];
	cell->kind = 0;
	cell->u.item = item;
	act__lf_publish(lf, pos);
	if (info != NULL) {
		/* relaxed: instrumentation; may be stale in either direction */
		deq = atomic_load_explicit(&lf->dequeue_pos, memory_order_relaxed);
		uint64_t depth = deq <= pos ? pos + 1 - deq : 1;

		info->depth = (uint32_t)(depth <= lf->mask + 1 ? depth : lf->mask + 1);
		info->was_empty = deq >= pos;
		info->waited = waited;
	}
	return 0;
}

/*
 * Consumer: the cell @p i entries after the head if its entry is ready, else
 * NULL (entries 0 .. i-1 must have been ready). The entry stays valid until
 * act__lf_release() of the same @p i; read (copy) it before.
 */
static inline struct act__qcell *act__lf_head(struct act__lfqueue *lf, uint32_t i)
{
	/* relaxed: the consumer is the only writer of dequeue_pos */
	uint64_t pos = atomic_load_explicit(&lf->dequeue_pos, memory_order_relaxed) + i;
	struct act__qcell *cell = &lf->cells[pos & lf->mask];

	/* acquire: pairs with the producer's release store in act__lf_publish() */
	if (atomic_load_explicit(&cell->seq, memory_order_acquire) != pos + 1)
		return NULL;
	return cell;
}

/* Consumer: free the cell @p i entries after the head, once its entry was read. */
static inline void act__lf_release(struct act__lfqueue *lf, uint32_t i)
{
	uint64_t pos = atomic_load_explicit(&lf->dequeue_pos, memory_order_relaxed) + i;

	/* release: pairs with the next lap's producer acquire load of seq
	 * (act__lf_claim()), so our reads of the entry precede its writes */
	atomic_store_explicit(&lf->cells[pos & lf->mask].seq, pos + lf->mask + 1,
			      memory_order_release);
}

/*
 * Consumer: move the head past @p n released entries and wake producers
 * waiting for space. Once per burst: each call may wake every waiting
 * producer (measured: a call every 16 entries cut fan-in of 32 producers on
 * 2 cpus to a quarter, RESULTS.md).
 */
static inline void act__lf_advance(struct act__lfqueue *lf, uint32_t n)
{
	uint64_t pos = atomic_load_explicit(&lf->dequeue_pos, memory_order_relaxed);

	/* relaxed: single writer; readers (count, push info) are approximate */
	atomic_store_explicit(&lf->dequeue_pos, pos + n, memory_order_relaxed);
	act__queue_fence(); /* F4: pairs with F3 in act__lf_wait_space() (queue.c, W6) */
	if (act__unlikely(atomic_load_explicit(&lf->sig.producers_waiting,
					       memory_order_relaxed) != 0))
		act__queue_wake_producers(&lf->sig);
}

/* Pointer items only: a queue that carries inline entries is consumed with
 * act__lf_head() / act__lf_release() / act__lf_advance(); this stops at an
 * inline entry. */
static inline uint32_t act__lf_pop_burst(struct act__lfqueue *lf, void **items, uint32_t max)
{
	struct act__qcell *cell;
	uint32_t n = 0;

	while (n < max && (cell = act__lf_head(lf, n)) != NULL && cell->kind == 0) {
		items[n] = cell->u.item;
		act__lf_release(lf, n);
		n++;
	}
	if (n != 0)
		act__lf_advance(lf, n);
	return n;
}

/* ---- Dispatch ----------------------------------------------------------- */

/**
 * Enqueue @p item (never NULL). Any thread, concurrently.
 * @param block  on a full queue (SHARDED: the caller's lane), wait for space:
 *               spin ACT__QUEUE_PUSH_SPIN polls, then sleep
 * @param info   filled on success; may be NULL
 * @return 0; -EAGAIN (full and !block); -ESHUTDOWN (closed, also while
 *         waiting); -EINVAL (init failed, or after fini).
 */
static inline int act__queue_push(struct act__queue *q, void *item, bool block,
				  struct act__push_info *info)
{
	switch (q->type) {
	case ACT_QUEUE_BQUEUE:
	case ACT_QUEUE_BQUEUE_BATCHED:
		return act__bq_push(&q->u.bq, item, block, info);
	case ACT_QUEUE_SHARDED:
		return act__sh_push(&q->u.sh, item, block, info);
	case ACT_QUEUE_LOCKFREE:
		return act__lf_push(&q->u.lf, item, block, info);
	default:
		return -EINVAL;
	}
}

/**
 * Dequeue up to @p max items into @p items, FIFO per producer. Consumer only;
 * never sleeps (the locked queues may briefly wait for their mutex). Wakes
 * producers blocked on a full queue when it frees space.
 * @return items written (0..max).
 */
static inline uint32_t act__queue_pop_burst(struct act__queue *q, void **items, uint32_t max)
{
	switch (q->type) {
	case ACT_QUEUE_BQUEUE: /* an empty ring costs no lock (act__bq_ready()) */
		return act__bq_pop_each(&q->u.bq, items, max);
	case ACT_QUEUE_BQUEUE_BATCHED:
		return act__bq_pop_batch(&q->u.bq, items, max);
	case ACT_QUEUE_SHARDED:
		return act__sh_pop_burst(&q->u.sh, items, max);
	case ACT_QUEUE_LOCKFREE:
		return act__lf_pop_burst(&q->u.lf, items, max);
	default:
		return 0;
	}
}

#endif /* TICKWIRE_ACT_QUEUE_PVT_H */
