/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Runtime-wide state: the thread registry used by the deadlock walk, the
 * message pools (one act_pool per size class), the system cycle policy and
 * the per-thread introspection calls.
 *
 * Message size classes (header included): 128, 256, 1024 and 4096 + header
 * bytes, so that payloads of 16 B to 4 KiB each fit one block.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "actor_pvt.h"

ACT__TLS uint64_t act__tls_alloc_count;
ACT__TLS struct act__thread act__tls_thread;
_Atomic(struct act__thread *) act__threads[ACT__MAX_THREADS];

#define ACT__CLASS_COUNT 4
static const uint32_t class_block[ACT__CLASS_COUNT] = {
	128, 256, 1024, 4096 + sizeof(struct act_msg),
};

static struct act_pool *msg_pools[ACT__CLASS_COUNT];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;
static _Atomic bool initialised;
static struct act_runtime_opts init_opts;
static bool init_opts_set;

_Atomic uint32_t act__system_cycle_policy = ACT_CYCLE_CONSERVATIVE;
bool act__membarrier_ok;

static pthread_key_t thread_key;

static void thread_exit(void *arg)
{
	struct act__thread *t = arg;

	if (t->id != 0) {
		/* release: pairs with the acquire load in act__thread_register()
		 * of a thread that reuses the slot. */
		atomic_store_explicit(&act__threads[t->id], NULL, memory_order_release);
		t->id = 0;
	}
}

/*
 * Register for membarrier(PRIVATE_EXPEDITED), which the sleepers of a lock
 * released by a plain store need (actor.c). Decided once: where the kernel,
 * a seccomp filter or a tool refuses, every actor uses the exchange release.
 */
static bool membarrier_register(void)
{
	int cmds = act__membarrier(MEMBARRIER_CMD_QUERY);

	return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	       (cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) &&
	       act__membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

static void init_runtime(void)
{
	struct act_runtime_opts o = init_opts_set ? init_opts : (struct act_runtime_opts){0};
	uint32_t max = o.pool_max_blocks != 0 ? o.pool_max_blocks : 1u << 20;
	uint32_t pre = o.pool_prealloc_blocks != 0 ? o.pool_prealloc_blocks : 4096;
	unsigned i;

	if (pre > max)
		pre = max;
	if (pthread_key_create(&thread_key, thread_exit) != 0) {
		init_result = -ENOMEM;
		return;
	}
	if (o.cycle_policy != ACT_CYCLE_DEFAULT)
		atomic_store(&act__system_cycle_policy, o.cycle_policy);
	/* Published by the seq_cst store of initialised below (and by
	 * pthread_once); read only after act__init_once(). */
	act__membarrier_ok = membarrier_register();
	for (i = 0; i < ACT__CLASS_COUNT; i++) {
		struct act_pool_opts po = {
			.name = "act_msg",
			.block_size = class_block[i],
			/* the large class is rare: keep its resident set small */
			.prealloc_blocks = i == ACT__CLASS_COUNT - 1 ? pre / 8 + 1 : pre,
			.chunk_blocks = 1024,
			.max_blocks = i == ACT__CLASS_COUNT - 1 ? max / 8 + 1 : max,
			.cache_size = 64,
		};
		msg_pools[i] = act_pool_create(&po);
		if (msg_pools[i] == NULL) {
			while (i-- > 0)
				act_pool_destroy(msg_pools[i]);
			init_result = -ENOMEM;
			return;
		}
	}
	atomic_store(&initialised, true);
}

int act__init_once(void)
{
	if (act__likely(atomic_load_explicit(&initialised, memory_order_acquire)))
		return 0;
	pthread_once(&init_once, init_runtime);
	return init_result;
}

int act_init(const struct act_runtime_opts *opts)
{
	if (atomic_load(&initialised))
		return -EALREADY;
	if (opts != NULL) {
		init_opts = *opts;
		init_opts_set = true;
	}
	return act__init_once();
}

int act_set_cycle_policy(enum act_cycle_policy policy)
{
	if ((unsigned)policy > ACT_CYCLE_PERMISSIVE)
		return -EINVAL;
	if (policy == ACT_CYCLE_DEFAULT)
		policy = ACT_CYCLE_CONSERVATIVE;
	atomic_store_explicit(&act__system_cycle_policy, policy, memory_order_relaxed);
	return 0;
}

void act__thread_register(struct act__thread *t)
{
	uint32_t i;

	bool keyed = act__init_once() == 0; /* else no slot release at exit */

	for (;;) {
		for (i = 1; i < ACT__MAX_THREADS; i++) {
			struct act__thread *expected = NULL;

			if (atomic_load_explicit(&act__threads[i], memory_order_acquire) != NULL)
				continue;
			if (atomic_compare_exchange_strong(&act__threads[i], &expected, t)) {
				t->id = i;
				if (keyed)
					pthread_setspecific(thread_key, t);
				return;
			}
		}
		/* More than ACT__MAX_THREADS-1 live actor threads: wait for one
		 * to exit. A configuration error; never seen in practice. */
		sched_yield();
	}
}

uint32_t act_msg_max_payload(void)
{
	return class_block[ACT__CLASS_COUNT - 1] - (uint32_t)sizeof(struct act_msg);
}

void act_msg_init(struct act_msg *m, uint32_t type, uint32_t size)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->size = size;
}

struct act_msg *act_msg_alloc(uint32_t type, uint32_t size)
{
	uint32_t need = (uint32_t)sizeof(struct act_msg) + size;
	struct act_msg *m;
	unsigned c;

	if (act__unlikely(act__init_once() != 0)) {
		errno = ENOMEM;
		return NULL;
	}
	if (act__unlikely(size > act_msg_max_payload())) {
		errno = EMSGSIZE;
		return NULL;
	}
	for (c = 0; class_block[c] < need; c++)
		;
	m = act_pool_alloc(msg_pools[c]);
	if (act__unlikely(m == NULL))
		return NULL; /* errno set by the pool */
	act_msg_init(m, type, size);
	m->flags_ = ACT__F_POOLED | (c << ACT__F_CLASS_SHIFT);
	return m;
}

void act_msg_free(struct act_msg *m)
{
	unsigned c;

	if (m == NULL || !(m->flags_ & ACT__F_POOLED))
		return;
	c = (m->flags_ & ACT__F_CLASS_MASK) >> ACT__F_CLASS_SHIFT;
	act_pool_free(msg_pools[c], m);
}

bool act_msg_is_pooled(const struct act_msg *m)
{
	return (m->flags_ & ACT__F_POOLED) != 0;
}

bool act_msg_replied(const struct act_msg *m)
{
	return (m->flags_ & ACT__F_REPLIED) != 0;
}

uint32_t act_msg_reply_type(const struct act_msg *m)
{
	return m->reply_type_;
}

unsigned act_last_cycle(struct act_chain_entry *out, unsigned max)
{
	const struct act__thread *t = &act__tls_thread;
	unsigned n = t->last_cycle_len < max ? t->last_cycle_len : max;

	memcpy(out, t->last_cycle, n * sizeof(*out));
	return n;
}

unsigned act_chain_depth(void)
{
	return act__tls_thread.depth;
}

struct act_actor *act_self(void)
{
	const struct act__thread *t = &act__tls_thread;

	return t->depth != 0 ? t->chain[t->depth - 1].actor : NULL;
}

uint64_t act_thread_alloc_count(void)
{
	return act__tls_alloc_count;
}
