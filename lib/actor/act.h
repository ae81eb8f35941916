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
 *  - -EDEADLK   a blocking acquire found a cross-thread wait-for cycle.
 *  - -EBUSY     act_fast_send_x() found the receiver's lock held.
 *  - -EPERM     a synchronous delivery to a group-private actor from a
 *               thread other than its group's.
 *  - -EAGAIN    mailbox full under ACT_OVERFLOW_FAIL.
 *  - -ESHUTDOWN the receiver is not running (not started, or stopped).
 *  - -ENOTSUP   no handler for the message type.
 *  - -EMSGSIZE  payload or reply larger than what the buffer or pool holds.
 *  - -ENOMEM    the message pool is exhausted.
 *  - -EALREADY  a second reply to the same message.
 *  - -EPROTO    act_reply_sync() on a message delivered asynchronously.
 *  - -ENOTCONN  an asynchronous reply to a message that has no sender actor.
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
	 * 0 otherwise, and always 0 for synchronous delivery.
	 */
	uint32_t qdepth;           /**< mailbox depth at enqueue (0: sync, not instrumented) */
	uint8_t mailbox_was_empty; /**< 1 if the mailbox was empty at enqueue (instrumented) */
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
 * (ACT_QUEUE_LOCKFREE, ACT_QUEUE_BQUEUE, ACT_QUEUE_BQUEUE_BATCHED), which the
 * runtime hands over as a copy on the group thread's stack.
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

/** Set the system-wide cycle policy. Any thread; takes effect for later calls. */
void act_set_cycle_policy(enum act_cycle_policy policy);

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
	 * live in the block's header). Also act_group_set_instrument().
	 */
	bool instrument;
};

/** Mailbox counters. Read at any time; values are individually consistent. */
struct act_mailbox_stats {
	uint64_t enqueued;     /**< messages accepted */
	uint64_t dequeued;     /**< messages taken by the consumer */
	uint64_t full_fails;   /**< -EAGAIN returns (FAIL policy, or BLOCK from own thread) */
	uint64_t dropped;      /**< DROP_NEWEST drops */
	uint64_t blocked;      /**< times a producer waited for space */
	uint64_t max_depth;    /**< largest depth seen at enqueue; 0 unless instrumented */
	uint64_t discarded;    /**< left in the mailbox at destroy */
};

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
 * Caller-driven run: dequeue and run up to @p max messages (0 = the group's
 * batch), without sleeping. Binds the calling thread on first use.
 * @return messages run (>= 0), -EALREADY if the group has its own thread or
 *         is bound to another one.
 */
int act_group_step(struct act_group *g, uint32_t max);

/**
 * Run steps until the mailbox is empty. Same thread rules as act_group_step().
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

/** Messages currently queued (approximate under concurrency). Any thread. */
uint32_t act_group_queued(const struct act_group *g);

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
 * delivered inline (ACT_QUEUE_LOCKFREE) lives on the group thread's stack
 * until then; neither may be kept, forwarded with act_send() or referenced
 * after the handler returns (copy what must outlive it).
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
 * progress finishes. For an own-mailbox actor, its thread is stopped too.
 * @return 0.
 */
int act_actor_stop(struct act_actor *a);

/**
 * Destroy a stopped actor. Its group must not be running it (stop the group
 * or drain it first), and no delivery call to it (the fast_send family) may
 * still be running on any thread: a caller whose handler run has finished
 * may still be releasing the actor's lock until its call returns. NULL is
 * ignored.
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

/** Set the actor's cycle policy (DEFAULT = follow the system). */
void act_actor_set_cycle_policy(struct act_actor *a, enum act_cycle_policy p);

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
 * @return 0, -EAGAIN, -ESHUTDOWN, -ENOTSUP, -EINVAL (not a pooled message).
 */
int act_send(struct act_actor *to, struct act_msg *m);

/**
 * Allocate, copy @p len bytes of @p payload and send; frees on failure.
 * A message that travels inline (ACT_QUEUE_LOCKFREE) is copied straight
 * into the mailbox, with no allocation.
 * @return as act_send(), plus -ENOMEM, -EMSGSIZE.
 */
int act_send_copy(struct act_actor *to, uint32_t type, const void *payload, uint32_t len);

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
 * cycle policy (enum act_call_flags).
 */
int act_fast_send_opt(struct act_actor *to, struct act_msg *req, void *reply, uint32_t reply_cap,
		      enum act_wait wait, unsigned flags);

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
 * the blocked sender's return buffer (no allocation). Asynchronous: enqueues
 * a pool message of type @p type on the sender's mailbox. Call from the
 * handler that received @p m.
 * @return 0, -EALREADY (already replied), -EMSGSIZE, -ENOTCONN (async and no
 *         sender), -ENOMEM, or an error from act_send().
 */
int act_reply(struct act_msg *m, uint32_t type, const void *data, uint32_t len);

/**
 * Sync-only reply: never allocates; fails on an asynchronous message.
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
	uint32_t cache_size;        /**< per-thread cache target; 0 = 64, at most 512 */
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

#endif /* TICKWIRE_ACT_H */
