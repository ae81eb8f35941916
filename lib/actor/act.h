/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_ACT_H
#define TICKWIRE_ACT_H

/**
 * @file
 * tickwire actor runtime.
 *
 * An actor is private state, a table of handlers indexed by message type, an
 * exclusive-access lock and a mailbox (its own or its group's). A handler
 * sees one message at a time, under the actor's lock, whether the message
 * arrived through the mailbox (act_send()) or synchronously on the sender's
 * thread (act_fast_send() and family). See DESIGN.md section 2.
 *
 * Error convention: constructors return a pointer or NULL with errno set;
 * operations return 0 (or a non-negative count) or a negative errno value.
 *
 * Errors used throughout:
 *  - -ELOOP     a synchronous call would re-enter an actor already on this
 *               thread's call chain (see act_last_cycle()); no lock taken.
 *  - -EDEADLK   a blocking acquire, or a send blocked on a full mailbox,
 *               found a cross-thread wait-for cycle.
 *  - -EBUSY     act_fast_send_x() found the receiver's lock held; also
 *               act_group_edge() once the group ran, and an
 *               act_group_step() or act_group_drain() called from
 *               inside a handler.
 *  - -EPERM     a synchronous delivery to a group-private actor from a
 *               thread other than its group's.
 *  - -EAGAIN    mailbox full under ACT_OVERFLOW_FAIL.
 *  - -ESHUTDOWN the receiver is not running (not started, or stopped); an
 *               asynchronous reply to a sender stopped or destroyed.
 *  - -ENOTSUP   no handler for the message type.
 *  - -EMSGSIZE  payload or reply larger than what the buffer or pool holds.
 *  - -ENOMEM    the message pool is exhausted.
 *  - -EALREADY  a second reply to the same message.
 *  - -EPROTO    act_reply_sync() on a message delivered asynchronously.
 *  - -ENOTCONN  an asynchronous reply to a message that has no sender actor.
 *  - -ENOSPC    act_group_edge(): the group's edge index is full.
 *  - -EINVAL    bad arguments.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct act_actor;
struct act_group;
struct act_pool;

/* ------------------------------------------------------------------------ */
/* Messages                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * Message header; the payload follows it, 16-byte aligned.
 *
 * Handlers read @c type, @c size, @c sender and the payload. The fields
 * marked "framework-private" must not be read or written by handlers: they
 * carry the delivery context that the runtime uses to route act_reply().
 * The fields marked "instrumentation" differ by delivery mode and exist for
 * latency study only; handler logic must not depend on them (DESIGN.md 2.2).
 */
struct act_msg {
	uint32_t type;             /**< message type: index into the handler table */
	uint32_t size;             /**< payload size in bytes */
	struct act_actor *sender;  /**< actor that sent it, NULL from a non-actor thread */

	/* framework-private */
	uint32_t flags_;           /**< delivery flag (sync/async), replied, pool class */
	uint32_t reply_type_;      /**< type of the reply written into the sync slot */
	void *reply_buf_;          /**< sync: the blocked sender's return buffer */
	uint32_t reply_cap_;       /**< sync: capacity of reply_buf_ */
	uint32_t reply_len_;       /**< sync: bytes written into reply_buf_ */

	/*
	 * instrumentation only: values depend on the delivery mode. qdepth,
	 * mailbox_was_empty and enqueue_tsc are stamped by act_send() only
	 * when the receiving group's instrumentation is on
	 * (act_group_opts::instrument, act_group_set_instrument()); they are
	 * 0 otherwise, and always 0 for synchronous delivery. The depth is
	 * what act_group_queued() counts: the mailbox, the lane and the
	 * messages taken from the mailbox but not yet run.
	 */
	uint32_t qdepth;           /**< group depth at enqueue (0: sync, not instrumented) */
	uint8_t mailbox_was_empty; /**< 1 if that depth was 0 (instrumented) */
	uint8_t pad_[3];
	struct act_actor *dest;    /**< destination actor */
	uint64_t enqueue_tsc;      /**< TSC at enqueue (0: sync, or not instrumented) */

	_Alignas(16) unsigned char payload[];
};

/** Pointer to a message's payload, cast to @p T. */
#define ACT_PAYLOAD(msg, T) ((T *)(void *)(msg)->payload)

/**
 * Declare a synchronous request on the caller's stack: a header followed by
 * a payload of type @p T, named @p var. Use &var.hdr as the message.
 * act_msg_init() must be called before use.
 */
#define ACT_STACK_MSG(var, T)                                                 \
	ACT__NO_VLA_NOT_AT_END_BEGIN                                              \
	struct {                                                                  \
		struct act_msg hdr;                                                   \
		T body;                                                               \
	} var ACT__NO_VLA_NOT_AT_END_END

/*
 * The header's flexible payload member is followed by the body here, which
 * GCC accepts silently and clang flags as a GNU extension; the layout is the
 * point (body == payload), so clang is told so for this declaration only.
 */
#ifdef __clang__
#define ACT__NO_VLA_NOT_AT_END_BEGIN                                          \
	_Pragma("clang diagnostic push")                                          \
	_Pragma("clang diagnostic ignored \"-Wgnu-variable-sized-type-not-at-end\"")
#define ACT__NO_VLA_NOT_AT_END_END _Pragma("clang diagnostic pop")
#else
#define ACT__NO_VLA_NOT_AT_END_BEGIN
#define ACT__NO_VLA_NOT_AT_END_END
#endif

/**
 * Initialise a header for a stack request (or any caller-owned buffer).
 * Thread-safe (touches only @p m).
 */
void act_msg_init(struct act_msg *m, uint32_t type, uint32_t size);

/**
 * Allocate a message with @p size payload bytes from the runtime's pool.
 * Any thread. Never calls malloc after act_init() except to grow the pool by
 * a chunk (bounded by the pool's max_blocks).
 * @return the message (type and size set, payload uninitialised) or NULL
 *         with errno ENOMEM (pool exhausted) or EMSGSIZE (size too large).
 */
struct act_msg *act_msg_alloc(uint32_t type, uint32_t size);

/** Return a pool message to the pool. Any thread. NULL is ignored. */
void act_msg_free(struct act_msg *m);

/**
 * True if @p m came from act_msg_alloc() (as opposed to a stack request).
 * In a handler: false for a message that travelled inline in its mailbox
 * (ACT_QUEUE_LOCKFREE, ACT_QUEUE_BQUEUE, ACT_QUEUE_BQUEUE_BATCHED) or in its
 * group's lane, which the runtime hands over in its own memory (a copy, or
 * the lane's slot).
 */
bool act_msg_is_pooled(const struct act_msg *m);

/** After a synchronous call: true if the handler replied. */
bool act_msg_replied(const struct act_msg *m);

/** After a synchronous call that was replied: the reply's type. */
uint32_t act_msg_reply_type(const struct act_msg *m);

/* ------------------------------------------------------------------------ */
/* Runtime                                                                  */
/* ------------------------------------------------------------------------ */

/** Cycle-detection policy (DESIGN.md 2, "Cycle detection"). */
enum act_cycle_policy {
	ACT_CYCLE_DEFAULT = 0,     /**< inherit: call -> actor -> system */
	ACT_CYCLE_CONSERVATIVE,    /**< key = actor: any re-entry is a cycle */
	ACT_CYCLE_PERMISSIVE,      /**< key = (actor, type): re-entry with another type runs */
};

/** Runtime-wide settings; all zero means the defaults. */
struct act_runtime_opts {
	enum act_cycle_policy cycle_policy; /**< system default; DEFAULT = conservative */
	uint32_t pool_max_blocks;           /**< per size class; 0 = 1 << 20 */
	uint32_t pool_prealloc_blocks;      /**< per size class, touched at init; 0 = 4096 */
};

/**
 * Initialise the runtime (message pools, default policy). Optional: the
 * first use initialises it with defaults. Call once, before other threads
 * use the runtime. @return 0, -EALREADY if already initialised, -ENOMEM.
 */
int act_init(const struct act_runtime_opts *opts);

/**
 * Set the system-wide cycle policy (DEFAULT: conservative). Any thread;
 * takes effect for later calls (a relaxed store: a call racing with it uses
 * the old or the new policy). @return 0, -EINVAL (not a policy).
 */
int act_set_cycle_policy(enum act_cycle_policy policy);

/** Largest payload act_msg_alloc() accepts. */
uint32_t act_msg_max_payload(void);

/* ------------------------------------------------------------------------ */
/* Mailboxes and groups                                                     */
/* ------------------------------------------------------------------------ */

/** Mailbox queue implementations (DESIGN.md 2, "Mailbox queues"). */
enum act_queue_type {
	/**
	 * Ring of one-cache-line cells under a mutex; default. Small messages
	 * travel inline as in ACT_QUEUE_LOCKFREE (below). Memory: 64 bytes per
	 * slot of capacity (the default 1024 slots: 64 KiB).
	 */
	ACT_QUEUE_BQUEUE = 0,
	/** As ACT_QUEUE_BQUEUE; drain all under one lock (up to 64 messages
	 * per acquisition); wake on empty->non-empty */
	ACT_QUEUE_BQUEUE_BATCHED,
	ACT_QUEUE_SHARDED,         /**< N locked lanes joined by an atomic cursor */
	/**
	 * Bounded Vyukov MPSC ring of one-cache-line cells. An asynchronous
	 * message of at most 32 payload bytes sent while the mailbox is not
	 * instrumented travels inline: copied into its cell, no pool block
	 * (act_send() from another thread frees the caller's block at once,
	 * act_send_copy() and an asynchronous act_reply() allocate nothing);
	 * larger or instrumented messages, and act_send() of a pool block from
	 * the group's own thread, travel as pool blocks, in the same order. Memory: 64 bytes
	 * per slot of capacity.
	 */
	ACT_QUEUE_LOCKFREE,
	ACT_QUEUE_COUNT_
};

/** What act_send() does when the mailbox is full. */
enum act_overflow {
	ACT_OVERFLOW_BLOCK = 0,    /**< wait for space (never from the group's own thread: -EAGAIN) */
	ACT_OVERFLOW_FAIL,         /**< return -EAGAIN; the caller keeps the message */
	ACT_OVERFLOW_DROP_NEWEST,  /**< free the message, count it, return 0 */
};

/** Group (and own-mailbox actor) settings; zero means default. */
struct act_group_opts {
	const char *name;
	enum act_queue_type queue;     /**< mailbox queue */
	uint32_t capacity;             /**< mailbox slots, rounded up to a power of 2; 0 = 1024 */
	uint32_t shards;               /**< ACT_QUEUE_SHARDED lanes; 0 = 4 */
	enum act_overflow overflow;
	uint32_t batch;                /**< max messages per run-loop turn; 0 = 64 */
	uint32_t spin;                 /**< empty polls before sleeping; 0 = sleep at once */
	int cpu;                       /**< pin the group thread to this cpu; -1 = no pin */
	/**
	 * Injected clock for deterministic runs: act_now() on this group's
	 * actors returns clock(clock_ctx). NULL = CLOCK_MONOTONIC in ns.
	 */
	uint64_t (*clock)(void *clock_ctx);
	void *clock_ctx;
	/**
	 * Per-send instrumentation, off by default: when true, every
	 * asynchronous send into this mailbox stamps act_msg::qdepth,
	 * act_msg::mailbox_was_empty and act_msg::enqueue_tsc, and
	 * act_mailbox_stats::max_depth is maintained. It costs a read of the
	 * consumer's queue index (a cache line written by another thread) and
	 * an rdtsc per send; on a mailbox with inline cells (ACT_QUEUE_LOCKFREE,
	 * ACT_QUEUE_BQUEUE, ACT_QUEUE_BQUEUE_BATCHED) it also sends
	 * small messages as pool blocks instead of inline (the stamped fields
	 * live in the block's header); so does the lane. Also
	 * act_group_set_instrument().
	 */
	bool instrument;
	/**
	 * Slots of the same-thread lane (see "Same-thread lane" below),
	 * rounded up to a power of 2; 0 = 256. 128 bytes a slot. A send that
	 * finds the lane full goes to the mailbox instead (counted in
	 * act_mailbox_stats::lane_full), so size it for the most messages
	 * the handlers of one mailbox message send, directly and through the
	 * messages they cause, to their own group.
	 */
	uint32_t lane_capacity;
};

/**
 * Mailbox counters. Read at any time; values are individually consistent.
 * Messages that travel on the group's lane count like mailbox messages in
 * every field (enqueued, dequeued, max_depth, discarded, and the depth of
 * act_group_queued()); @c lane says how many of them took it. For every
 * queue kind: enqueued = dequeued + discarded + act_group_queued() once
 * the group is idle.
 */
struct act_mailbox_stats {
	uint64_t enqueued;     /**< messages accepted (mailbox and lane) */
	uint64_t dequeued;     /**< messages the group's loop ran (or dropped: dead receiver) */
	uint64_t full_fails;   /**< -EAGAIN returns (FAIL policy, or BLOCK from own thread) */
	uint64_t dropped;      /**< DROP_NEWEST drops */
	uint64_t blocked;      /**< times a producer waited for space */
	/** blocking sends refused with -EDEADLK: waiting for space would
	 *  have closed a wait-for cycle (see act_send()) */
	uint64_t deadlocks;
	uint64_t max_depth;    /**< largest depth seen at enqueue; 0 unless instrumented */
	uint64_t discarded;    /**< left in the mailbox, the lane or a batch at destroy */
	uint64_t lane;         /**< of those enqueued, messages that took the lane */
	/** sends that qualified for the lane but went to the mailbox: the lane
	 *  was full, or an earlier such send was still queued there */
	uint64_t lane_full;
	/** of those enqueued, messages that took the control queue
	 *  (act_send_control()) */
	uint64_t control;
};

/*
 * Same-thread lane. An asynchronous send (act_send(), act_send_copy(), an
 * act_reply() routed as a response message, the fallback of
 * act_fast_send_void()) made on the thread that runs the receiver's group,
 * from inside a handler (typically: a member sending to a member of its
 * own group), goes to the group's lane instead of its mailbox: a ring that
 * only that thread writes and reads, with no lock, no atomic
 * read-modify-write, no fence and no reference count (plain stores and
 * loads; the indices are relaxed atomics only so that other threads may
 * read the depth). Small messages
 * (at most 32 payload bytes, instrumentation off) are copied into the slot
 * and allocate nothing; others travel as pool blocks. Sends from other
 * threads, and sends from the group's thread outside any handler (a
 * feeder, a DPDK lcore polling its rx queue), use the mailbox as before.
 *
 * Order. The group's loop (its thread, act_group_step(), act_group_drain())
 * runs one message at a time and always takes the lane's oldest message
 * while the lane holds any; it takes the next mailbox message only when the
 * lane is empty. So each mailbox message runs, then everything that it and
 * the lane messages it caused send within the group, breadth first in the
 * order sent, and only then the next mailbox message. What one thread sends
 * from its handlers to one group stays FIFO (it all takes the lane, or all
 * goes to the mailbox while the lane spills, below); a lockable member that
 * also runs on another thread (called there with fast_send) sends from there
 * through the mailbox, and those messages may run after what it later sends
 * on the group's thread. fast_send keeps its priority: it runs at
 * once, ahead of the lane and the mailbox. The order of execution is
 * therefore a function of the mailbox's order alone, not of timing, as long
 * as the lane does not overflow: a group fed from a recorded sequence
 * reproduces its outputs whatever the batch size, step sizes or thread.
 * A cascade that never ends keeps the next mailbox message waiting, as a
 * fast_send loop would; each turn of the loop still returns after its
 * batch, so act_group_stop() works.
 *
 * Bound. A lane-eligible send that finds the lane full goes to the mailbox
 * with the mailbox's overflow policy (from the group's own thread BLOCK
 * returns -EAGAIN) and is counted in act_mailbox_stats::lane_full; while
 * such a message waits in the mailbox, later lane-eligible sends follow it
 * there (FIFO), and they run in mailbox order, among other senders'
 * messages: size the lane (act_group_opts::lane_capacity) so that it does
 * not overflow where the order must not depend on timing.
 *
 * Stop and destroy: act_group_stop() leaves lane messages where they are
 * (the next start or step runs them first); act_group_destroy() frees and
 * counts them as discarded, like the mailbox's.
 */

/*
 * Control queue. Every group has a second, unbounded queue that
 * act_send_control() fills from any thread. The loop runs its oldest
 * message ahead of the mailbox: between any two mailbox messages (and
 * before the rest of a batch already taken from the mailbox), once the
 * lane is empty. So lane, then control, then mailbox: a control message
 * waits for the message running and the lane messages it caused, never
 * for market data queued in the mailbox. Control messages from one thread
 * run in the order sent; relative to the mailbox, their place depends on
 * when they arrive (as any cross-thread send). They count in every field of
 * act_mailbox_stats like mailbox messages, and in act_group_queued();
 * act_mailbox_stats::control says how many took the queue. Stop keeps them,
 * destroy discards and counts them.
 */

/**
 * Create a group: one mailbox, one thread (act_group_start()) or a
 * caller-driven step function (act_group_step()). Any thread.
 * @return the group, or NULL with errno EINVAL or ENOMEM.
 */
struct act_group *act_group_create(const struct act_group_opts *opts);

/**
 * Start the group's thread, which drains the mailbox and runs handlers.
 * @return 0, -EALREADY (started or bound), -errno from pthread_create.
 */
int act_group_start(struct act_group *g);

/**
 * Stop the group's thread: it finishes the message it is running and exits;
 * messages still queued stay queued (a later start or step runs them).
 * Must not be called from the group's own thread. @return 0, -EINVAL.
 */
int act_group_stop(struct act_group *g);

/**
 * Bind the calling thread as the group's thread without starting one (for a
 * DPDK lcore or a simulation). Group-private members then accept synchronous
 * calls from this thread only. @return 0, -EALREADY if started or bound to
 * another thread.
 */
int act_group_bind(struct act_group *g);

/**
 * Caller-driven run: run up to @p max messages (0 = the group's batch),
 * lane first (see "Same-thread lane"), without sleeping. Binds the calling
 * thread on first use.
 * Not from inside a handler (of any group, in either delivery mode): the
 * loop runs with an empty call chain, so that the locks it takes cannot
 * close a cycle and a member never runs inside its own handler.
 * @return messages run (>= 0), -EALREADY if the group has its own thread or
 *         is bound to another one, -EBUSY if called from inside a handler
 *         (act_chain_depth() != 0; nothing run).
 */
int act_group_step(struct act_group *g, uint32_t max);

/**
 * Run steps until the mailbox and the lane are empty. Same thread rules as
 * act_group_step().
 * @return messages run, or a negative errno from act_group_step().
 */
int act_group_drain(struct act_group *g);

/**
 * Destroy a stopped group; its members must have been destroyed first.
 * Messages left in the mailbox are freed and counted as discarded.
 * NULL is ignored.
 */
void act_group_destroy(struct act_group *g);

/**
 * Turn the per-send instrumentation of @p g's mailbox on or off (see
 * act_group_opts::instrument). Any thread, at any time; sends that start
 * after the call observe it. Latency studies that read act_msg::qdepth
 * (the appliance's qlen) or act_msg::enqueue_tsc need it on; with it off
 * those fields read 0 in handlers and max_depth stays 0.
 */
void act_group_set_instrument(struct act_group *g, bool on);

/** Whether @p g's mailbox instrumentation is on. Any thread. */
bool act_group_instrumented(const struct act_group *g);

/** Mailbox counters of a group. Any thread. */
void act_group_mailbox_stats(const struct act_group *g, struct act_mailbox_stats *st);

/**
 * Messages currently queued: the mailbox, the lane, and messages the loop
 * took from the mailbox but has not run yet (approximate under
 * concurrency). Any thread.
 */
uint32_t act_group_queued(const struct act_group *g);

/**
 * Declare that handlers of @p from may call @p to with act_fast_send_edge().
 * Both must be members of @p g. The declared edges of a group must form a
 * directed acyclic graph: an edge that would close a cycle (@p to reaches
 * @p from through declared edges, or @p from == @p to) is refused. Declare
 * every edge before the group first runs: from the thread that builds the
 * group, before act_group_start(), act_group_bind() or act_group_step()
 * (and not concurrently with them); once any of these was called, the set
 * is sealed for the group's life. At most 64 members of a group take part
 * in edges. Declaring an edge twice is harmless.
 * @return 0, -ELOOP (the edge would close a cycle; nothing changed),
 *         -EBUSY (the group has run: started, bound or stepped),
 *         -ENOSPC (a 65th member would take part in edges),
 *         -EINVAL (NULL, or an actor that is not a member of @p g).
 */
int act_group_edge(struct act_group *g, struct act_actor *from, struct act_actor *to);

/** The group's clock (injected or monotonic ns). Any thread. */
uint64_t act_group_now(const struct act_group *g);

/* ------------------------------------------------------------------------ */
/* Actors                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * Handler: runs under the actor's lock, one message at a time. @p state is
 * the state pointer given at creation. The handler may call act_reply(),
 * act_send() and the act_fast_send() family. It does not own @p msg: the
 * runtime frees pooled messages after the handler returns, and a message
 * delivered inline (ACT_QUEUE_LOCKFREE, the lane) lives in the runtime's
 * memory until then; neither may be kept, forwarded with act_send() or
 * referenced after the handler returns (copy what must outlive it).
 */
typedef void (*act_handler_fn)(struct act_actor *self, void *state, struct act_msg *msg);

/** Actor settings. */
struct act_actor_opts {
	const char *name;
	const act_handler_fn *handlers; /**< table indexed by message type (copied) */
	uint32_t handler_count;
	void *state;                   /**< private state, passed to handlers */
	/** Group to join; NULL = own mailbox and thread, configured by @c mailbox. */
	struct act_group *group;
	const struct act_group_opts *mailbox; /**< own mailbox settings (NULL = defaults) */
	/**
	 * Private to its group: only the group's thread may deliver
	 * synchronously; exclusive access then uses no atomic instruction.
	 */
	bool group_private;
	enum act_cycle_policy cycle_policy; /**< DEFAULT = system policy */
	/**
	 * Release the lock with a plain store instead of an atomic exchange
	 * (uncontended fast_send to a lockable actor ~0.6x the time). The price
	 * is on the contended path: a caller that has to sleep on the lock
	 * issues membarrier(2) first, an IPI to every CPU running a thread of
	 * the process, busy-polling lcores included, and sleeping callers'
	 * throughput fell to 0.2-0.3x in tests/perf (RESULTS.md). For actors
	 * whose contended callers spin or try (ACT_WAIT_SPIN, act_fast_send_x),
	 * not those callers sleep on. Ignored (exchange) without membarrier.
	 */
	bool lock_release_store;
	/**
	 * Bias the lock to the first thread that takes it: that thread then
	 * acquires and releases with plain loads and stores, no atomic
	 * read-modify-write (uncontended fast_send ~0.3x the time of the
	 * default lock, tests/perf/RESULTS.md). The first delivery from any
	 * other thread revokes the bias for good, which costs that delivery one
	 * membarrier(2) (an IPI to every CPU running a thread of the process,
	 * microseconds in a VM) and a wait until the bias owner's handler in
	 * progress, if any, returns; from then on the lock is the default one.
	 * For actors that one thread calls and others call rarely or never.
	 * Ignored without membarrier (old kernel, seccomp filter).
	 */
	bool lock_bias;
};

/** Per-actor counters. */
struct act_actor_stats {
	uint64_t sync_completions; /**< handlers run synchronously (fast_send family) */
	uint64_t async_runs;       /**< handlers run from the mailbox */
	uint64_t async_fallbacks;  /**< act_fast_send_void() that enqueued instead */
	uint64_t busy_returns;     /**< act_fast_send_x() -EBUSY returns */
	uint64_t cycles;           /**< -ELOOP returns for calls to this actor */
	uint64_t deadlocks;        /**< -EDEADLK returns for calls to this actor */
	uint64_t bias_revocations; /**< lock_bias: biases revoked (normally 0 or 1) */
	/** act_reply() to an asynchronous message whose sender had stopped or
	 *  been destroyed: refused (-ESHUTDOWN), counted on the replier */
	uint64_t orphan_replies;
};

/**
 * Create an actor (not yet running: deliveries return -ESHUTDOWN until
 * act_actor_start()). Any thread.
 * @return the actor, or NULL with errno EINVAL or ENOMEM.
 */
struct act_actor *act_actor_create(const struct act_actor_opts *opts);

/**
 * Start accepting messages. For an own-mailbox actor this also starts its
 * thread. @return 0, -EALREADY, or an error from act_group_start().
 */
int act_actor_start(struct act_actor *a);

/**
 * Stop accepting messages: later deliveries return -ESHUTDOWN. A handler in
 * progress finishes. For an own-mailbox actor, its thread is stopped too,
 * as act_group_stop() does; called from that thread (its own handler) it
 * cannot be joined: deliveries are refused from now on, the thread keeps
 * running, and the call returns act_group_stop()'s -EINVAL (stop it again
 * from another thread).
 * @return 0, -EINVAL (own-mailbox actor, from its own thread).
 */
int act_actor_stop(struct act_actor *a);

/**
 * Destroy a stopped actor. Its group must be idle: not started, stopped, or
 * driven by the calling thread between steps (act_group_step(),
 * act_group_drain()); and no delivery call to it (the fast_send family) may
 * still be running on any thread: a caller whose handler run has finished
 * may still be releasing the actor's lock until its call returns. NULL is
 * ignored.
 *
 * Messages in flight. A message queued for the actor is dropped when its
 * group's loop reaches it (counted in act_mailbox_stats::dequeued) or when
 * the group is destroyed (discarded). A message the actor sent that is
 * still queued anywhere (a mailbox, a lane, a control queue) keeps the
 * actor's memory until it leaves its queue, so its receiver may still read
 * act_msg::sender; an act_reply() to it returns -ESHUTDOWN, counted in the
 * replier's act_actor_stats::orphan_replies. The memory goes with the last
 * such message.
 */
void act_actor_destroy(struct act_actor *a);

/** The actor's group (its own implicit one for own-mailbox actors). */
struct act_group *act_actor_group(const struct act_actor *a);

/** The actor's name. */
const char *act_actor_name(const struct act_actor *a);

/** The actor's state pointer. */
void *act_actor_state(const struct act_actor *a);

/** Counters of an actor. Any thread. */
void act_actor_stats(const struct act_actor *a, struct act_actor_stats *st);

/**
 * Set the actor's cycle policy (DEFAULT = follow the system), as
 * act_actor_opts::cycle_policy does at create. Any thread; takes effect
 * for later calls (a relaxed atomic store: a call racing with it uses the
 * old or the new policy). @return 0, -EINVAL (NULL actor or not a policy;
 * nothing changed).
 */
int act_actor_set_cycle_policy(struct act_actor *a, enum act_cycle_policy p);

/** Time for handlers: the clock of the actor's group. */
static inline uint64_t act_now(const struct act_actor *self)
{
	return act_group_now(act_actor_group(self));
}

/* ------------------------------------------------------------------------ */
/* Delivery                                                                 */
/* ------------------------------------------------------------------------ */

/**
 * Asynchronous send: enqueue pooled message @p m (from act_msg_alloc()) on
 * @p to's mailbox. m->sender is set to the actor running on this thread (or
 * NULL). Any thread.
 *
 * Ownership: on 0 the runtime owns @p m (a message that travels inline,
 * see ACT_QUEUE_LOCKFREE, is copied into the mailbox and @p m freed before
 * the call returns; sent from the mailbox's own group thread, @p m travels
 * as it is). On -EAGAIN, -ESHUTDOWN, -EINVAL the caller still owns
 * it. Under ACT_OVERFLOW_DROP_NEWEST a full mailbox frees @p m, counts it and
 * returns 0.
 *
 * A full mailbox under ACT_OVERFLOW_BLOCK makes the caller wait for space.
 * That wait is an edge of the wait-for graph the deadlock walk follows
 * (DESIGN.md 2, "Cycles across threads"; lib/actor/README.md): the caller
 * waits for the thread that runs the receiving group. If the wait would
 * close a cycle (that thread waits, directly or along a chain, for a lock
 * this caller holds or for space in a mailbox this caller's thread runs),
 * the send returns -EDEADLK instead of waiting for ever: the caller keeps
 * the message, counted in act_mailbox_stats::deadlocks. Either side of
 * such a cycle may be the one refused (a fast_send waiting for the lock
 * gets -EDEADLK too): at least one is, and both are when each walked after
 * the other had published its wait.
 * @return 0, -EAGAIN, -ESHUTDOWN, -ENOTSUP, -EDEADLK, -EINVAL (not a pooled
 *         message).
 */
int act_send(struct act_actor *to, struct act_msg *m);

/**
 * Allocate, copy @p len bytes of @p payload and send; frees on failure.
 * A message that travels inline (ACT_QUEUE_LOCKFREE) is copied straight
 * into the mailbox, with no allocation.
 * @return as act_send(), plus -ENOMEM, -EMSGSIZE.
 */
int act_send_copy(struct act_actor *to, uint32_t type, const void *payload, uint32_t len);

/**
 * Control send: copy @p len bytes of @p payload into a pool message and
 * queue it on the control queue of @p to's group, which the group's loop
 * runs ahead of its mailbox (see "Control queue" above act_group_create()).
 * For the few messages that must not wait behind a stream: replies,
 * execution reports, telemetry queries. Any thread, inside a handler or
 * not. The queue has no bound but the pool's: it never blocks, never fails
 * full and never drops; a full pool refuses the message (-ENOMEM, the
 * caller keeps nothing). No inline cells and no instrumentation stamps
 * (qdepth, enqueue_tsc are 0): each send takes a pool block and one
 * atomic exchange, plus a wake of the group's loop.
 * @return 0, -ESHUTDOWN (receiver stopped), -ENOTSUP (no handler for
 *         @p type), -EINVAL, -ENOMEM (pool exhausted), -EMSGSIZE.
 */
int act_send_control(struct act_actor *to, uint32_t type, const void *payload, uint32_t len);

/** Extra flags for act_fast_send_opt(). */
enum act_call_flags {
	ACT_CALL_CONSERVATIVE = 1u << 0, /**< per-call cycle policy override */
	ACT_CALL_PERMISSIVE = 1u << 1,
};

/** How a synchronous call waits for a held lock. */
enum act_wait {
	ACT_WAIT_SLEEP = 0,  /**< act_fast_send */
	ACT_WAIT_SPIN,       /**< act_fast_send_spin */
	ACT_WAIT_ADAPTIVE,   /**< act_fast_send_adaptive */
	ACT_WAIT_NONE,       /**< act_fast_send_x: -EBUSY */
};

/**
 * Synchronous send: run @p to's handler for @p req on the calling thread,
 * ahead of anything queued in its mailbox, and return its reply. @p req may
 * live on the caller's stack. Before any lock is taken, the call is checked
 * against this thread's call chain (-ELOOP). A held lock is waited for by
 * sleeping; the wait first walks the cross-thread wait-for chain (-EDEADLK).
 * Allocates nothing. Any thread (group-private targets: their group's thread).
 *
 * @param reply     buffer for the reply payload (may be NULL if cap is 0)
 * @param reply_cap its capacity
 * @return reply length in bytes (0 if the handler sent none or an empty one;
 *         see act_msg_replied()), -ELOOP, -EDEADLK, -EPERM, -ESHUTDOWN,
 *         -ENOTSUP, -EMSGSIZE (the handler's reply did not fit), -EINVAL.
 */
int act_fast_send(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap);

/** As act_fast_send(), but busy-waits (cpu pause) on a held lock. */
int act_fast_send_spin(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap);

/** As act_fast_send(), but spins a bounded count, then sleeps. */
int act_fast_send_adaptive(struct act_actor *to, struct act_msg *req, void *reply,
			   uint32_t reply_cap);

/** As act_fast_send(), but returns -EBUSY at once on a held lock. */
int act_fast_send_x(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap);

/**
 * The general form: @p wait selects the family member, @p flags the per-call
 * cycle policy (at most one of enum act_call_flags; other bits: -EINVAL).
 */
int act_fast_send_opt(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap,
		      enum act_wait wait, enum act_call_flags flags);

/**
 * Synchronous send along a declared edge (act_group_edge()): inline in the
 * caller, and the same call as act_fast_send() for the handler (receiver
 * transparency: the same context, reply slot, reply rules and counters).
 * Call it from a handler of the edge's @c from actor; @p to must be the
 * edge's @c to. Where the fast path applies - the declared edge, @p to
 * running and not already on this thread's call chain, and either
 * group-private with a group-private caller (no lock, no atomic
 * instruction) or lockable with its lock free (one CAS) or biased to this
 * thread (lock_bias: plain accesses) - the call costs the checks, the chain
 * push and the handler. Otherwise it behaves exactly as act_fast_send():
 * a held lock is waited for (sleeping, after the deadlock walk), a
 * group-private @p to called from another thread returns -EPERM, and so on.
 * The call chain is kept as for act_fast_send(), so a dynamic call made
 * inside the callee still finds the actors held along the edges.
 *
 * A call from no handler, or along an edge that was not declared, is
 * refused like a detected cycle: -ELOOP, recorded for act_last_cycle()
 * and counted in @p to's act_actor_stats::cycles; nothing runs.
 * Any thread (group-private targets: their group's thread). Allocates
 * nothing.
 * @return as act_fast_send(): the reply length, or -ELOOP (undeclared edge,
 *         no caller, a cycle, or the chain full), -EDEADLK, -EPERM,
 *         -ESHUTDOWN, -ENOTSUP, -EMSGSIZE.
 */
#ifndef __cplusplus
static inline int act_fast_send_edge(struct act_actor *to, struct act_msg *req, void *reply,
				     uint32_t reply_cap);
#endif

/**
 * Synchronous if possible, else asynchronous: runs the handler now if the
 * lock is free and no cycle is detected; otherwise copies @p req (stack or
 * pool) into a pool message, or inline (ACT_QUEUE_LOCKFREE), and enqueues
 * the copy. The caller keeps @p req in every case; a handler may pass the
 * message it is running on. A reply from the handler goes
 * nowhere in the synchronous case (no buffer) and to the sender's mailbox in
 * the asynchronous case. Counts sync completions and async fallbacks on @p to.
 * @return 0 ran synchronously, 1 enqueued, or an error from act_send() or
 *         act_msg_alloc() (-ENOMEM, -EMSGSIZE), -ESHUTDOWN, -ENOTSUP.
 */
int act_fast_send_void(struct act_actor *to, struct act_msg *req);

/**
 * Unified reply: routes by how @p m was delivered. Synchronous: copies into
 * the blocked sender's return buffer (no allocation). Asynchronous: sends a
 * message of type @p type to the sender as act_send_copy() does (its
 * mailbox, or its group's lane from that group's thread). Call from the
 * handler that received @p m.
 *
 * One reply per message: the first reply that returns 0 uses it up, and
 * later ones return -EALREADY. A reply that returns an error was not made
 * and may be retried (a shorter one after -EMSGSIZE, say). A synchronous
 * caller whose handler ended after a reply that did not fit, without one
 * that did, gets -EMSGSIZE from its fast_send.
 * An asynchronous reply to a sender that has stopped or been destroyed
 * returns -ESHUTDOWN, counted in act_actor_stats::orphan_replies (see
 * act_actor_destroy(): the message keeps the sender's memory).
 * @return 0, -EALREADY (already replied), -EMSGSIZE, -ESHUTDOWN, -ENOTCONN (async and no
 *         sender), -ENOMEM, or an error from act_send().
 */
int act_reply(struct act_msg *m, uint32_t type, const void *data, uint32_t len);

/**
 * Sync-only reply: never allocates; fails on an asynchronous message.
 * Same one-reply rule as act_reply(): an error does not use the reply up.
 * @return 0, -EPROTO (delivered asynchronously), -EALREADY, -EMSGSIZE.
 */
int act_reply_sync(struct act_msg *m, uint32_t type, const void *data, uint32_t len);

/* ------------------------------------------------------------------------ */
/* Introspection of the calling thread                                      */
/* ------------------------------------------------------------------------ */

/** One link of a call chain. */
struct act_chain_entry {
	struct act_actor *actor;
	uint32_t type;
};

/** Maximum synchronous nesting depth per thread (deeper calls: -ELOOP). */
#define ACT_CHAIN_MAX 32

/**
 * The last cycle detected on this thread: out[0] is the target (with the
 * message type of the refused call), then the chain from its first entry to
 * the caller. @return entries written (0 if no cycle was ever detected).
 */
unsigned act_last_cycle(struct act_chain_entry *out, unsigned max);

/** Depth of this thread's synchronous call chain (0 outside handlers). */
unsigned act_chain_depth(void);

/** The actor whose handler is running on this thread, or NULL. */
struct act_actor *act_self(void);

/**
 * Count of allocations the runtime made on this thread (pool and malloc
 * paths it controls), for tests that prove the synchronous path allocates
 * nothing. This thread only.
 */
uint64_t act_thread_alloc_count(void);

/* ------------------------------------------------------------------------ */
/* Memory pool                                                              */
/* ------------------------------------------------------------------------ */

/** Pool settings. */
struct act_pool_opts {
	const char *name;
	uint32_t block_size;        /**< bytes per block; rounded up to 16 */
	uint32_t prealloc_blocks;   /**< blocks allocated and touched at create */
	uint32_t chunk_blocks;      /**< blocks added per growth step; 0 = 1024 */
	uint32_t max_blocks;        /**< hard bound; 0 = prealloc_blocks (no growth) */
	/**
	 * Per-thread cache target; 0 = 64, at most 512. A thread's cache
	 * holds up to 2 * cache_size free blocks that only that thread
	 * allocates from: with max_blocks reached, act_pool_alloc() fails
	 * (ENOMEM, counted in failures) while up to threads * 2 * cache_size
	 * blocks sit free in other threads' caches. Size max_blocks for the
	 * blocks live at once plus that; a pool whose max_blocks is at most
	 * 2 * cache_size can be emptied into one thread's cache.
	 */
	uint32_t cache_size;
};

/** Pool statistics (sum over threads; approximate while threads run). */
struct act_pool_stats {
	uint64_t blocks_total;   /**< blocks carved from chunks */
	uint64_t blocks_free;    /**< in the shared free list (not in caches) */
	uint64_t allocs;
	uint64_t frees;
	uint64_t refills;        /**< bulk transfers shared list -> thread cache */
	uint64_t flushes;        /**< bulk transfers thread cache -> shared list */
	uint64_t grows;          /**< chunks added after creation */
	uint64_t failures;       /**< allocations refused at max_blocks */
};

/**
 * Create a fixed-size block pool. Any thread. The address range for
 * max_blocks is reserved at once and committed chunk by chunk.
 * @return the pool, or NULL with errno EINVAL (bad options, cache_size > 512)
 *         or ENOMEM (no memory, or 64 pools already live).
 */
struct act_pool *act_pool_create(const struct act_pool_opts *opts);

/**
 * Destroy a pool. All blocks must have been freed; blocks still held in
 * other threads' caches are discarded with the pool. NULL is ignored.
 */
void act_pool_destroy(struct act_pool *p);

/**
 * Allocate a block. Any thread; lock-free on the cache hit, one bulk refill
 * per cache_size/2 allocations otherwise.
 * @return the block or NULL with errno ENOMEM (max_blocks reached).
 */
void *act_pool_alloc(struct act_pool *p);

/** Free a block, on any thread (not only the allocating one). NULL ignored. */
void act_pool_free(struct act_pool *p, void *block);

/** Block size of the pool. */
uint32_t act_pool_block_size(const struct act_pool *p);

/** Statistics. Any thread. */
void act_pool_stats(const struct act_pool *p, struct act_pool_stats *st);

#ifdef __cplusplus
}
#endif

/* The inline calls' internals (act_fast_send_edge()); C only. */
#ifndef __cplusplus
#include "act_fast_pvt.h"
#endif

#endif /* TICKWIRE_ACT_H */
