/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Fixed-size block pool (act_pool_*), built for the latency tail.
 *
 * Memory. At create the pool reserves the address range of all max_blocks
 * blocks with one mmap(PROT_NONE) and makes the first prealloc_blocks of it
 * usable and resident (mprotect, then MADV_POPULATE_WRITE or touching each
 * page). Growth makes the next chunk_blocks of the range usable the same
 * way. Blocks are never returned to the kernel before act_pool_destroy().
 * Block i lives at base + i * stride, stride = block_size rounded up to 16,
 * so every block is 16-byte aligned and a pointer maps to its index in O(1).
 *
 * Free blocks live in three places:
 *  - per-thread caches: an array of at most 2 * cache_size pointers, used as
 *    a stack by the owning thread only (no lock, no atomic RMW);
 *  - the shared stack: an array of pointers under the pool lock;
 *  - the frontier: blocks [carved, ready) of the committed chunks that were
 *    never handed out (no pointer was ever stored for them).
 *
 * Operations and their worst case (N = cache_size <= ACT__POOL_CACHE_MAX):
 *  - alloc, cache hit: pop one pointer. O(1), no lock, no atomic RMW.
 *  - alloc, cache empty: one acquisition of the pool lock, a move of at
 *    most N pointers from the shared stack and the frontier into the cache.
 *  - alloc, shared stack and frontier empty too: the above, then under the
 *    grow lock (not the pool lock, so other threads keep refilling and
 *    flushing) a second look at the shared stack, else one chunk growth:
 *    mprotect + prefault of chunk_blocks * stride bytes and of the matching
 *    slice of the shared-stack array (debug builds: poison fill too), then
 *    one acquisition that publishes the chunk and takes N blocks of it. So
 *    at most three acquisitions of the pool lock and one chunk growth, plus
 *    the wait for the grow lock while another thread grows; never a retry
 *    loop. Once max_blocks are carved: NULL/ENOMEM, counted in failures.
 *  - free, cache not full: push one pointer. O(1), no lock, no atomic RMW.
 *  - free, cache full (2 * N): one acquisition of the pool lock, a move of
 *    the N oldest pointers to the shared stack, then a memmove of at most N
 *    pointers outside the lock.
 *  - first alloc or free of a pool on a thread: claiming a cache happens in
 *    the same acquisition; the first claim of any pool on a thread adds one
 *    pthread_setspecific() (arming the exit flush).
 * The pool lock is held only for a copy of at most N pointers (or a bitmap
 * update), never across a system call. It is an adaptive mutex: the bound
 * is on the work done under it; a contended acquisition may still sleep.
 *
 * Thread caches. Each pool owns ACT__POOL_CACHES cache descriptors, carved
 * at create. A thread claims one under the pool lock on its first alloc or
 * free and keeps it until it exits; a pthread key destructor then moves its
 * blocks to the shared stack and returns the descriptor. A thread that finds
 * no descriptor free works uncached (one lock acquisition and one block per
 * call) and retries the claim on each slow call. Threads find their caches through a
 * thread-local array indexed by the pool id (at most ACT__POOL_MAX_POOLS
 * live pools) and tagged with the pool's generation, unique per create, so
 * a cache of a destroyed pool is never used, even when the id is reused.
 * A block freed on another thread than the one that allocated it simply
 * enters the freeing thread's cache.
 *
 * Blocks sitting in other threads' caches are not visible to an allocating
 * thread: with max_blocks reached, an allocation may fail while up to
 * (threads * 2 * cache_size) blocks are free in caches.
 *
 * Statistics. blocks_free counts the shared stack and the frontier, not the
 * caches. allocs, frees, refills and flushes are kept per cache
 * descriptor, written by the owning thread only (act__stat_inc_owned) and
 * summed by act_pool_stats(); a descriptor keeps its counters when it passes
 * to another thread, so nothing is folded or lost. The shared counters are
 * written under a lock or with relaxed atomics. Every counter read is exact
 * for itself; the sum over threads is a snapshot taken while threads run,
 * so e.g. allocs - frees may be off by the operations in flight.
 *
 * Debug builds (NDEBUG not defined): a side table holds one state byte per
 * block (free / live); a freed block is filled with ACT__POOL_POISON and the
 * fill is checked when the block is handed out again. A double free, a
 * pointer outside the pool or not at a block start, and a write to a freed
 * block fail an assert(). Release builds compile none of this.
 */

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "act.h"
#include "act_pvt.h"

#define ACT__POOL_MAX_POOLS 64        /* live pools in the process */
#define ACT__POOL_CACHES 64           /* thread caches per pool */
#define ACT__POOL_CACHE_DEFAULT 64
#define ACT__POOL_CACHE_MAX 512       /* bounds the pointers moved under the lock */
#define ACT__POOL_CHUNK_DEFAULT 1024
#define ACT__POOL_ALIGN 16
#define ACT__POOL_MAX_BLOCK_SIZE (1u << 30)
#define ACT__POOL_MAX_RESERVE ((size_t)1 << 42) /* address space of one pool */

#ifndef NDEBUG
#define ACT__POOL_POISON 0x6b         /* every byte of a free block */
#define ACT__POOL_STATE_FREE 0xf5
#define ACT__POOL_STATE_LIVE 0xa1
#endif

/* A reserved address range whose prefix [0, committed) is usable. */
struct region {
	char *base;
	size_t reserved;
	size_t committed;
};

struct act__pool_cache {
	uint32_t count;       /* pointers in slots; owner thread only */
	uint32_t index;       /* bit in act_pool.caches_used */
	/* Written by the owner only, read by act_pool_stats() on any thread. */
	_Atomic uint64_t allocs;
	_Atomic uint64_t frees;
	_Atomic uint64_t refills;
	_Atomic uint64_t flushes;
	void *slots[];        /* 2 * cache_size */
};

struct act_pool {
	/* Read-only after create; read by every fast path. */
	act__cache_aligned uint64_t gen;
	uint32_t id;
	uint32_t stride;
	uint32_t cache_target;   /* cache_size; also the size of a bulk move */
	uint32_t cache_capacity; /* 2 * cache_size */
	uint32_t chunk_blocks;
	uint32_t max_blocks;
	size_t page;
	size_t cache_stride;     /* bytes per cache descriptor */
	struct region blocks;    /* max_blocks * stride */
	struct region stack;     /* max_blocks pointers: the shared stack */
	struct region caches;    /* ACT__POOL_CACHES descriptors */
#ifndef NDEBUG
	struct region states;    /* max_blocks state bytes */
#endif
	char name[32];           /* for telemetry and debuggers */

	/*
	 * Under lock. free_count and carved are written only by the lock
	 * holder and read with relaxed loads by act_pool_stats(). ready is
	 * written by the holder of both locks; its release store pairs with
	 * the acquire load in debug_block_index(), which then sees the state
	 * bytes of the new chunk initialised.
	 */
	act__cache_aligned pthread_mutex_t lock;
	_Atomic uint32_t free_count; /* pointers in the shared stack */
	_Atomic uint32_t carved;     /* blocks ever handed out of the frontier */
	_Atomic uint32_t ready;      /* blocks in usable chunks */
	uint64_t caches_used;        /* bitmap of claimed descriptors */
	_Atomic uint64_t grows;      /* act__stat_inc_owned by the lock holder */
	/* act__stat_inc_shared: bumped with no lock held. */
	_Atomic uint64_t uncached_allocs;
	_Atomic uint64_t uncached_frees;
	_Atomic uint64_t failures;

	/* Serialises growth; never held together with a thread's fast path. */
	act__cache_aligned pthread_mutex_t grow_lock;
};

/* One entry per pool id; valid for the pool of that id only if gen matches. */
struct tls_slot {
	uint64_t gen;
	struct act__pool_cache *cache;
};

static ACT__TLS struct tls_slot tls_slots[ACT__POOL_MAX_POOLS];
static ACT__TLS bool tls_key_set;

/*
 * Live pools by id. The lock orders pool destruction against the flush a
 * thread does at exit: a thread flushes into a pool only while holding it
 * and seeing the pool's generation registered. Lock order: registry_lock,
 * then a pool's lock.
 */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct act_pool *registry_pools[ACT__POOL_MAX_POOLS];
static uint64_t registry_gens[ACT__POOL_MAX_POOLS];
static uint64_t registry_next_gen = 1;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_key;
static int key_error;

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

static int region_reserve(struct region *r, size_t bytes, size_t page)
{
	void *m;

	r->reserved = round_up(bytes > 0 ? bytes : 1, page);
	r->committed = 0;
	/* PROT_NONE costs no commit charge; region_commit's mprotect is charged. */
	m = mmap(NULL, r->reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		r->base = NULL;
		return -ENOMEM;
	}
	r->base = m;
	return 0;
}

/*
 * Make [0, bytes) usable and resident. mprotect rather than mmap(MAP_FIXED):
 * a failed MAP_FIXED may leave a hole in the reservation that another
 * mapping could take.
 */
static int region_commit(struct region *r, size_t bytes, size_t page)
{
	size_t end = round_up(bytes, page);
	char *at;
	size_t len;

	if (end <= r->committed)
		return 0;
	if (end > r->reserved)
		return -ENOMEM;
	at = r->base + r->committed;
	len = end - r->committed;
	if (mprotect(at, len, PROT_READ | PROT_WRITE) != 0)
		return -ENOMEM;
#ifdef MADV_POPULATE_WRITE
	/* One call instead of a fault per page; older kernels say EINVAL. */
	if (madvise(at, len, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
		mprotect(at, len, PROT_NONE);
		return -ENOMEM;
	}
#endif
	for (size_t off = 0; off < len; off += page)
		((volatile char *)at)[off] = 0;
	r->committed = end;
	return 0;
}

static void region_release(struct region *r)
{
	if (r->base != NULL)
		munmap(r->base, r->reserved);
	r->base = NULL;
}

static inline char *block_at(const struct act_pool *p, uint32_t index)
{
	return p->blocks.base + (size_t)index * p->stride;
}

static inline void **stack_slots(const struct act_pool *p)
{
	return (void **)(void *)p->stack.base;
}

static inline struct act__pool_cache *cache_at(const struct act_pool *p, uint32_t index)
{
	return (struct act__pool_cache *)(void *)(p->caches.base + (size_t)index * p->cache_stride);
}

/* ------------------------------------------------------------------------ */
/* Debug checks                                                             */
/* ------------------------------------------------------------------------ */

#ifndef NDEBUG
static _Atomic unsigned char *debug_state(const struct act_pool *p, size_t index)
{
	return (_Atomic unsigned char *)(void *)(p->states.base + index);
}

static size_t debug_block_index(const struct act_pool *p, const void *block)
{
	size_t offset = (size_t)((uintptr_t)block - (uintptr_t)p->blocks.base);
	uint32_t ready = atomic_load_explicit(&p->ready, memory_order_acquire);

	/* A pointer below base wraps to a huge offset and fails here too. */
	assert(offset < (size_t)ready * p->stride && "act_pool: pointer not from this pool");
	assert(offset % p->stride == 0 && "act_pool: pointer not at a block start");
	return offset / p->stride;
}

static void debug_on_alloc(const struct act_pool *p, void *block)
{
	size_t index = debug_block_index(p, block);
	const uint64_t *word = block;
	uint64_t poison;
	unsigned char old;

	memset(&poison, ACT__POOL_POISON, sizeof(poison));
	for (size_t i = 0; i < p->stride / sizeof(*word); i++)
		assert(word[i] == poison && "act_pool: block written after it was freed");
	old = atomic_exchange_explicit(debug_state(p, index), ACT__POOL_STATE_LIVE,
				       memory_order_relaxed);
	assert(old == ACT__POOL_STATE_FREE && "act_pool: free block handed out twice");
	(void)old;
}

static void debug_on_free(const struct act_pool *p, void *block)
{
	size_t index = debug_block_index(p, block);
	unsigned char old;

	/* An RMW, so that of two racing frees of one block exactly one fails. */
	old = atomic_exchange_explicit(debug_state(p, index), ACT__POOL_STATE_FREE,
				       memory_order_relaxed);
	assert(old == ACT__POOL_STATE_LIVE && "act_pool: double free");
	(void)old;
	memset(block, ACT__POOL_POISON, p->stride);
}

static void debug_init_blocks(struct act_pool *p, uint32_t first, uint32_t end)
{
	memset(block_at(p, first), ACT__POOL_POISON, (size_t)(end - first) * p->stride);
	memset(p->states.base + first, ACT__POOL_STATE_FREE, end - first);
}
#endif

/* ------------------------------------------------------------------------ */
/* Shared stack and frontier (p->lock held)                                 */
/* ------------------------------------------------------------------------ */

static uint32_t take_locked(struct act_pool *p, void **out, uint32_t want)
{
	uint32_t free_count = atomic_load_explicit(&p->free_count, memory_order_relaxed);
	uint32_t carved = atomic_load_explicit(&p->carved, memory_order_relaxed);
	uint32_t ready = atomic_load_explicit(&p->ready, memory_order_relaxed);
	uint32_t n = want < free_count ? want : free_count;

	memcpy(out, stack_slots(p) + (free_count - n), (size_t)n * sizeof(*out));
	atomic_store_explicit(&p->free_count, free_count - n, memory_order_relaxed);
	if (n < want && carved < ready) {
		uint32_t more = want - n < ready - carved ? want - n : ready - carved;

		for (uint32_t i = 0; i < more; i++)
			out[n + i] = block_at(p, carved + i);
		atomic_store_explicit(&p->carved, carved + more, memory_order_relaxed);
		n += more;
	}
	return n;
}

static void put_locked(struct act_pool *p, void *const *in, uint32_t n)
{
	uint32_t free_count = atomic_load_explicit(&p->free_count, memory_order_relaxed);

	/* More free pointers than blocks handed out: a double free got past us. */
	assert(free_count + n <= atomic_load_explicit(&p->carved, memory_order_relaxed));
	memcpy(stack_slots(p) + free_count, in, (size_t)n * sizeof(*in));
	atomic_store_explicit(&p->free_count, free_count + n, memory_order_relaxed);
}

/* ------------------------------------------------------------------------ */
/* Thread caches                                                            */
/* ------------------------------------------------------------------------ */

static void thread_exit_flush(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&registry_lock);
	for (uint32_t id = 0; id < ACT__POOL_MAX_POOLS; id++) {
		struct tls_slot *t = &tls_slots[id];
		struct act__pool_cache *c = t->cache;
		struct act_pool *p = registry_pools[id];

		if (c == NULL)
			continue;
		/* A destroyed pool took its caches with it: c is dangling then. */
		if (p != NULL && registry_gens[id] == t->gen) {
			pthread_mutex_lock(&p->lock);
			if (c->count > 0) {
				put_locked(p, c->slots, c->count);
				act__stat_inc_owned(&c->flushes);
				c->count = 0;
			}
			p->caches_used &= ~((uint64_t)1 << c->index);
			pthread_mutex_unlock(&p->lock);
		}
		t->cache = NULL;
		t->gen = 0;
	}
	pthread_mutex_unlock(&registry_lock);
	tls_key_set = false;
}

static void key_create(void)
{
	key_error = pthread_key_create(&thread_key, thread_exit_flush);
}

/* Claim a cache descriptor for the calling thread, or NULL if none is free. */
static struct act__pool_cache *cache_claim_locked(struct act_pool *p, struct tls_slot *t)
{
	struct act__pool_cache *c;
	uint32_t index;

	if (p->caches_used == UINT64_MAX)
		return NULL;
	index = (uint32_t)__builtin_ctzll(~p->caches_used);
	p->caches_used |= (uint64_t)1 << index;
	c = cache_at(p, index);
	c->count = 0;
	t->cache = c;
	t->gen = p->gen;
	return c;
}

/* After a claim: make sure this thread's exit flushes its caches. */
static void key_arm(void)
{
	/* Any non-NULL value: the destructor walks tls_slots. */
	if (!tls_key_set && pthread_setspecific(thread_key, tls_slots) == 0)
		tls_key_set = true;
}

/*
 * Called with the shared stack and the frontier found empty. Under the grow
 * lock: take what may have come back meanwhile, else commit one chunk and
 * publish it and take from it in one acquisition of the pool lock, so the
 * caller never has to come back. Returns the blocks written to @out, 0 when
 * max_blocks is reached or the kernel refuses memory.
 */
static uint32_t grow_and_take(struct act_pool *p, void **out, uint32_t want)
{
	uint32_t ready, end, n;

	pthread_mutex_lock(&p->grow_lock);
	pthread_mutex_lock(&p->lock);
	n = take_locked(p, out, want);
	pthread_mutex_unlock(&p->lock);
	/* Only growth writes ready, and growth holds grow_lock. */
	ready = atomic_load_explicit(&p->ready, memory_order_relaxed);
	if (n > 0 || ready >= p->max_blocks)
		goto out;
	end = ready + (p->chunk_blocks < p->max_blocks - ready ? p->chunk_blocks
							       : p->max_blocks - ready);
	if (region_commit(&p->blocks, (size_t)end * p->stride, p->page) != 0 ||
	    region_commit(&p->stack, (size_t)end * sizeof(void *), p->page) != 0)
		goto out;
#ifndef NDEBUG
	if (region_commit(&p->states, end, p->page) != 0)
		goto out;
	debug_init_blocks(p, ready, end);
#endif
	pthread_mutex_lock(&p->lock);
	atomic_store_explicit(&p->ready, end, memory_order_release);
	act__stat_inc_owned(&p->grows);
	n = take_locked(p, out, want);
	pthread_mutex_unlock(&p->lock);
out:
	pthread_mutex_unlock(&p->grow_lock);
	return n;
}

/* Out of line: the fast path then needs no callee-saved registers. */
__attribute__((noinline, cold))
static void *alloc_slow(struct act_pool *p)
{
	struct tls_slot *t = &tls_slots[p->id];
	/* Matching generation here means the cache is empty. */
	struct act__pool_cache *c = t->gen == p->gen ? t->cache : NULL;
	bool claimed = false;
	void *block = NULL;
	void **dest;
	uint32_t want, n;

	pthread_mutex_lock(&p->lock);
	if (c == NULL) {
		c = cache_claim_locked(p, t);
		claimed = c != NULL;
	}
	dest = c != NULL ? c->slots : &block;
	want = c != NULL ? p->cache_target : 1;
	n = take_locked(p, dest, want);
	pthread_mutex_unlock(&p->lock);
	if (claimed)
		key_arm();
	if (n == 0)
		n = grow_and_take(p, dest, want);
	if (n == 0) {
		act__stat_inc_shared(&p->failures);
		errno = ENOMEM;
		return NULL;
	}
	if (c == NULL) {
		act__stat_inc_shared(&p->uncached_allocs);
		return block;
	}
	c->count = n - 1;
	act__stat_inc_owned(&c->refills);
	act__stat_inc_owned(&c->allocs);
	return c->slots[n - 1];
}

__attribute__((noinline, cold))
static void free_slow(struct act_pool *p, void *block)
{
	struct tls_slot *t = &tls_slots[p->id];
	struct act__pool_cache *c = t->gen == p->gen ? t->cache : NULL;
	bool claimed = false;
	bool flushed = false;

	pthread_mutex_lock(&p->lock);
	if (c == NULL) {
		c = cache_claim_locked(p, t);
		claimed = c != NULL;
	}
	if (c == NULL) {
		put_locked(p, &block, 1);
		pthread_mutex_unlock(&p->lock);
		act__stat_inc_shared(&p->uncached_frees);
		return;
	}
	if (c->count >= p->cache_capacity) {
		/* The oldest half: the newest stay in the cache, still warm. */
		put_locked(p, c->slots, p->cache_target);
		flushed = true;
	}
	pthread_mutex_unlock(&p->lock);
	if (claimed)
		key_arm();
	if (flushed) {
		c->count -= p->cache_target;
		memmove(c->slots, c->slots + p->cache_target, (size_t)c->count * sizeof(void *));
		act__stat_inc_owned(&c->flushes);
	}
	c->slots[c->count++] = block;
	act__stat_inc_owned(&c->frees);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                               */
/* ------------------------------------------------------------------------ */

void *act_pool_alloc(struct act_pool *p)
{
	struct tls_slot *t = &tls_slots[p->id];
	void *block;

	if (act__likely(t->gen == p->gen && t->cache->count > 0)) {
		struct act__pool_cache *c = t->cache;

		block = c->slots[--c->count];
		act__stat_inc_owned(&c->allocs);
	} else {
		block = alloc_slow(p);
		if (block == NULL)
			return NULL;
	}
#ifndef NDEBUG
	debug_on_alloc(p, block);
#endif
	act__count_alloc();
	return block;
}

void act_pool_free(struct act_pool *p, void *block)
{
	struct tls_slot *t;

	if (block == NULL)
		return;
#ifndef NDEBUG
	debug_on_free(p, block);
#endif
	t = &tls_slots[p->id];
	if (act__likely(t->gen == p->gen && t->cache->count < p->cache_capacity)) {
		struct act__pool_cache *c = t->cache;

		c->slots[c->count++] = block;
		act__stat_inc_owned(&c->frees);
		return;
	}
	free_slow(p, block);
}

uint32_t act_pool_block_size(const struct act_pool *p)
{
	return p->stride;
}

void act_pool_stats(const struct act_pool *p, struct act_pool_stats *st)
{
	/* carved before ready: ready only grows, so ready >= carved holds. */
	uint32_t carved = atomic_load_explicit(&p->carved, memory_order_relaxed);
	uint32_t ready = atomic_load_explicit(&p->ready, memory_order_relaxed);

	memset(st, 0, sizeof(*st));
	st->blocks_total = ready;
	st->blocks_free = atomic_load_explicit(&p->free_count, memory_order_relaxed) +
			  (uint64_t)(ready - carved);
	st->allocs = atomic_load_explicit(&p->uncached_allocs, memory_order_relaxed);
	st->frees = atomic_load_explicit(&p->uncached_frees, memory_order_relaxed);
	st->grows = atomic_load_explicit(&p->grows, memory_order_relaxed);
	st->failures = atomic_load_explicit(&p->failures, memory_order_relaxed);
	for (uint32_t i = 0; i < ACT__POOL_CACHES; i++) {
		const struct act__pool_cache *c = cache_at(p, i);

		st->allocs += atomic_load_explicit(&c->allocs, memory_order_relaxed);
		st->frees += atomic_load_explicit(&c->frees, memory_order_relaxed);
		st->refills += atomic_load_explicit(&c->refills, memory_order_relaxed);
		st->flushes += atomic_load_explicit(&c->flushes, memory_order_relaxed);
	}
}

static void pool_release(struct act_pool *p)
{
	region_release(&p->blocks);
	region_release(&p->stack);
	region_release(&p->caches);
#ifndef NDEBUG
	region_release(&p->states);
#endif
	pthread_mutex_destroy(&p->lock);
	pthread_mutex_destroy(&p->grow_lock);
	free(p);
}

static int pool_init_locks(struct act_pool *p)
{
	pthread_mutexattr_t attr;
	int rc;

	/* Adaptive: the lock is held for a copy of at most cache_size pointers. */
	if (pthread_mutexattr_init(&attr) != 0)
		return -ENOMEM;
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	rc = pthread_mutex_init(&p->lock, &attr);
	if (rc == 0) {
		rc = pthread_mutex_init(&p->grow_lock, &attr);
		if (rc != 0)
			pthread_mutex_destroy(&p->lock);
	}
	pthread_mutexattr_destroy(&attr);
	return rc == 0 ? 0 : -ENOMEM;
}

/* Reserve and commit everything create needs; -ENOMEM on any failure. */
static int pool_map(struct act_pool *p, uint32_t prealloc)
{
	size_t max = p->max_blocks;

	if (region_reserve(&p->blocks, max * p->stride, p->page) != 0 ||
	    region_reserve(&p->stack, max * sizeof(void *), p->page) != 0 ||
	    region_reserve(&p->caches, ACT__POOL_CACHES * p->cache_stride, p->page) != 0)
		return -ENOMEM;
	if (region_commit(&p->caches, ACT__POOL_CACHES * p->cache_stride, p->page) != 0 ||
	    region_commit(&p->blocks, (size_t)prealloc * p->stride, p->page) != 0 ||
	    region_commit(&p->stack, (size_t)prealloc * sizeof(void *), p->page) != 0)
		return -ENOMEM;
#ifndef NDEBUG
	if (region_reserve(&p->states, max, p->page) != 0 ||
	    region_commit(&p->states, prealloc, p->page) != 0)
		return -ENOMEM;
	debug_init_blocks(p, 0, prealloc);
#endif
	for (uint32_t i = 0; i < ACT__POOL_CACHES; i++)
		cache_at(p, i)->index = i;
	return 0;
}

/*
 * Errors: EINVAL for bad options; ENOMEM when memory or address space runs
 * out, and also when ACT__POOL_MAX_POOLS pools are already live (the header
 * documents EINVAL and ENOMEM only; ENOSPC would say it better).
 */
struct act_pool *act_pool_create(const struct act_pool_opts *opts)
{
	struct act_pool *p;
	uint32_t prealloc, max_blocks, cache_size, id;
	size_t stride, size;
	long page;

	if (opts == NULL || opts->block_size == 0 || opts->block_size > ACT__POOL_MAX_BLOCK_SIZE ||
	    opts->cache_size > ACT__POOL_CACHE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	prealloc = opts->prealloc_blocks;
	max_blocks = opts->max_blocks != 0 ? opts->max_blocks : prealloc;
	cache_size = opts->cache_size != 0 ? opts->cache_size : ACT__POOL_CACHE_DEFAULT;
	if (max_blocks == 0 || max_blocks < prealloc) {
		errno = EINVAL;
		return NULL;
	}
	stride = round_up(opts->block_size, ACT__POOL_ALIGN);
	if ((size_t)max_blocks * stride > ACT__POOL_MAX_RESERVE) {
		errno = ENOMEM;
		return NULL;
	}
	page = sysconf(_SC_PAGESIZE);
	if (pthread_once(&key_once, key_create) != 0 || key_error != 0) {
		errno = ENOMEM;
		return NULL;
	}

	size = round_up(sizeof(*p), ACT__CACHE_LINE);
	p = aligned_alloc(ACT__CACHE_LINE, size);
	if (p == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(p, 0, size);
	p->stride = (uint32_t)stride;
	p->cache_target = cache_size;
	p->cache_capacity = 2 * cache_size;
	p->chunk_blocks = opts->chunk_blocks != 0 ? opts->chunk_blocks : ACT__POOL_CHUNK_DEFAULT;
	p->max_blocks = max_blocks;
	p->page = page > 0 ? (size_t)page : 4096;
	p->cache_stride = round_up(sizeof(struct act__pool_cache) +
					   (size_t)p->cache_capacity * sizeof(void *),
				   ACT__CACHE_LINE);
	if (opts->name != NULL)
		strncpy(p->name, opts->name, sizeof(p->name) - 1);
	if (pool_init_locks(p) != 0) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	if (pool_map(p, prealloc) != 0) {
		pool_release(p);
		errno = ENOMEM;
		return NULL;
	}
	atomic_store_explicit(&p->ready, prealloc, memory_order_relaxed);

	pthread_mutex_lock(&registry_lock);
	for (id = 0; id < ACT__POOL_MAX_POOLS && registry_pools[id] != NULL; id++)
		;
	if (id < ACT__POOL_MAX_POOLS) {
		p->id = id;
		p->gen = registry_next_gen++;
		registry_pools[id] = p;
		registry_gens[id] = p->gen;
	}
	pthread_mutex_unlock(&registry_lock);
	if (id == ACT__POOL_MAX_POOLS) {
		pool_release(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void act_pool_destroy(struct act_pool *p)
{
	if (p == NULL)
		return;
	/* After this, no thread exit flushes into p (see thread_exit_flush). */
	pthread_mutex_lock(&registry_lock);
	registry_pools[p->id] = NULL;
	registry_gens[p->id] = 0;
	pthread_mutex_unlock(&registry_lock);
	if (tls_slots[p->id].gen == p->gen) {
		tls_slots[p->id].gen = 0;
		tls_slots[p->id].cache = NULL;
	}
	pool_release(p);
}
