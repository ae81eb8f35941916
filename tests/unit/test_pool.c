/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Unit tests of the fixed-size block pool (act_pool_*).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tw_test.h"

#include "act.h"
#include "act_pvt.h"

static struct act_pool *make_pool(uint32_t block_size, uint32_t prealloc, uint32_t chunk,
				  uint32_t max, uint32_t cache)
{
	struct act_pool_opts opts = {
		.name = "test",
		.block_size = block_size,
		.prealloc_blocks = prealloc,
		.chunk_blocks = chunk,
		.max_blocks = max,
		.cache_size = cache,
	};
	struct act_pool *p = act_pool_create(&opts);

	assert_non_null(p);
	return p;
}

/* For tests that expect creation to fail: no assertion inside. */
static struct act_pool *make_pool_quiet(int seed)
{
	struct act_pool_opts opts = {
		.block_size = 16 + (uint32_t)(seed % 4) * 16,
		.prealloc_blocks = 8,
		.cache_size = 4,
	};

	return act_pool_create(&opts);
}

static void stats_of(struct act_pool *p, struct act_pool_stats *st)
{
	act_pool_stats(p, st);
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

/* Sorted copy; fails if any two pointers are equal. */
static void assert_distinct(void **blocks, size_t n)
{
	void **sorted = malloc(n * sizeof(*sorted));

	assert_non_null(sorted);
	memcpy(sorted, blocks, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_ptr);
	for (size_t i = 1; i < n; i++)
		assert_true(sorted[i - 1] != sorted[i]);
	free(sorted);
}

static void expect_create_fails(const struct act_pool_opts *opts, int err)
{
	errno = 0;
	assert_null(act_pool_create(opts));
	assert_int_equal(errno, err);
}

static void test_create_bad_opts(void **state)
{
	struct act_pool_opts opts;
	struct act_pool *p;

	(void)state;
	expect_create_fails(NULL, EINVAL);

	opts = (struct act_pool_opts){ .block_size = 0, .prealloc_blocks = 16 };
	expect_create_fails(&opts, EINVAL);

	/* No block at all: neither prealloc nor growth. */
	opts = (struct act_pool_opts){ .block_size = 64 };
	expect_create_fails(&opts, EINVAL);

	opts = (struct act_pool_opts){ .block_size = 64, .prealloc_blocks = 100, .max_blocks = 50 };
	expect_create_fails(&opts, EINVAL);

	opts = (struct act_pool_opts){ .block_size = 64, .prealloc_blocks = 16, .cache_size = 100000 };
	expect_create_fails(&opts, EINVAL);

	opts = (struct act_pool_opts){ .block_size = UINT32_MAX, .prealloc_blocks = 1 };
	expect_create_fails(&opts, EINVAL);

	/* Address space of max_blocks * block_size beyond any sane machine. */
	opts = (struct act_pool_opts){ .block_size = 1u << 30, .max_blocks = UINT32_MAX };
	expect_create_fails(&opts, ENOMEM);

	act_pool_destroy(NULL);

	/* Block size rounded up to 16. */
	p = make_pool(1, 4, 0, 0, 0);
	assert_int_equal(act_pool_block_size(p), 16);
	act_pool_destroy(p);
	p = make_pool(17, 4, 0, 0, 0);
	assert_int_equal(act_pool_block_size(p), 32);
	act_pool_destroy(p);
	p = make_pool(48, 4, 0, 0, 0);
	assert_int_equal(act_pool_block_size(p), 48);
	act_pool_destroy(p);
}

static void test_alloc_until_max(void **state)
{
	enum { N = 100 };
	struct act_pool *p = make_pool(64, N, 0, 0, 8); /* max 0: no growth */
	struct act_pool_stats st;
	void *blocks[N];

	(void)state;
	for (int i = 0; i < N; i++) {
		blocks[i] = act_pool_alloc(p);
		assert_non_null(blocks[i]);
	}
	errno = 0;
	assert_null(act_pool_alloc(p));
	assert_int_equal(errno, ENOMEM);
	errno = 0;
	assert_null(act_pool_alloc(p));
	assert_int_equal(errno, ENOMEM);
	stats_of(p, &st);
	assert_int_equal(st.failures, 2);
	assert_int_equal(st.allocs, N);
	assert_int_equal(st.grows, 0);
	assert_int_equal(st.blocks_total, N);
	assert_int_equal(st.blocks_free, 0);
	assert_distinct(blocks, N);

	for (int i = 0; i < N; i++)
		act_pool_free(p, blocks[i]);
	act_pool_free(p, NULL); /* ignored */
	stats_of(p, &st);
	assert_int_equal(st.frees, N);
	assert_int_equal(st.allocs, N);
	/* All of them can be had again. */
	for (int i = 0; i < N; i++)
		assert_non_null(blocks[i] = act_pool_alloc(p));
	assert_null(act_pool_alloc(p));
	for (int i = 0; i < N; i++)
		act_pool_free(p, blocks[i]);
	act_pool_destroy(p);
}

static void test_blocks_distinct_aligned_full_size(void **state)
{
	enum { N = 2000 };
	struct act_pool *p = make_pool(40, 1000, 100, N, 0);
	uint32_t size = act_pool_block_size(p);
	void **blocks = calloc(N, sizeof(*blocks));
	void **sorted = calloc(N, sizeof(*sorted));

	(void)state;
	assert_non_null(blocks);
	assert_non_null(sorted);
	assert_true(size >= 40);
	for (uint32_t i = 0; i < N; i++) {
		blocks[i] = act_pool_alloc(p);
		assert_non_null(blocks[i]);
		assert_int_equal((uintptr_t)blocks[i] % 16, 0);
		memset(blocks[i], (int)(i * 7 + 1) & 0xff, size);
	}
	assert_null(act_pool_alloc(p));
	/* Any overlap would have overwritten a neighbour's fill. */
	for (uint32_t i = 0; i < N; i++) {
		const unsigned char *b = blocks[i];

		for (uint32_t j = 0; j < size; j++)
			assert_int_equal(b[j], (i * 7 + 1) & 0xff);
	}
	memcpy(sorted, blocks, N * sizeof(*sorted));
	qsort(sorted, N, sizeof(*sorted), cmp_ptr);
	for (uint32_t i = 1; i < N; i++)
		assert_true((uintptr_t)sorted[i] - (uintptr_t)sorted[i - 1] >= size);
	for (uint32_t i = 0; i < N; i++)
		act_pool_free(p, blocks[i]);
	free(sorted);
	free(blocks);
	act_pool_destroy(p);
}

static void test_free_then_alloc_reuses(void **state)
{
	enum { N = 10 };
	struct act_pool *p = make_pool(32, 1024, 0, 0, 16);
	void *first[N], *again[N];
	void *a, *b;

	(void)state;
	a = act_pool_alloc(p);
	assert_non_null(a);
	act_pool_free(p, a);
	b = act_pool_alloc(p);
	assert_ptr_equal(a, b); /* the cache is a stack: the warmest block comes back */
	act_pool_free(p, b);

	for (int i = 0; i < N; i++)
		first[i] = act_pool_alloc(p);
	for (int i = 0; i < N; i++)
		act_pool_free(p, first[i]);
	for (int i = 0; i < N; i++)
		again[i] = act_pool_alloc(p);
	qsort(first, N, sizeof(void *), cmp_ptr);
	qsort(again, N, sizeof(void *), cmp_ptr);
	assert_memory_equal(first, again, sizeof(first));
	for (int i = 0; i < N; i++)
		act_pool_free(p, again[i]);
	act_pool_destroy(p);
}

static void test_growth_by_chunks(void **state)
{
	enum { MAX = 200 };
	struct act_pool *p = make_pool(64, 64, 32, MAX, 8);
	struct act_pool_stats st;
	void *blocks[MAX + 1];
	int n = 0;

	(void)state;
	stats_of(p, &st);
	assert_int_equal(st.blocks_total, 64);
	assert_int_equal(st.blocks_free, 64);
	assert_int_equal(st.grows, 0);
	for (; n < 64; n++)
		assert_non_null(blocks[n] = act_pool_alloc(p));
	stats_of(p, &st);
	assert_int_equal(st.grows, 0);
	assert_non_null(blocks[n++] = act_pool_alloc(p));
	stats_of(p, &st);
	assert_int_equal(st.grows, 1);
	assert_int_equal(st.blocks_total, 96);
	while ((blocks[n] = act_pool_alloc(p)) != NULL)
		n++;
	assert_int_equal(n, MAX);
	stats_of(p, &st);
	/* 64 -> 96 -> 128 -> 160 -> 192 -> 200 (the last chunk is cut at max). */
	assert_int_equal(st.grows, 5);
	assert_int_equal(st.blocks_total, MAX);
	assert_int_equal(st.blocks_free, 0);
	assert_int_equal(st.failures, 1);
	assert_distinct(blocks, MAX);
	for (int i = 0; i < n; i++)
		act_pool_free(p, blocks[i]);
	act_pool_destroy(p);

	/* Nothing preallocated: the first allocation grows. */
	p = make_pool(64, 0, 10, 10, 4);
	stats_of(p, &st);
	assert_int_equal(st.blocks_total, 0);
	blocks[0] = act_pool_alloc(p);
	assert_non_null(blocks[0]);
	stats_of(p, &st);
	assert_int_equal(st.grows, 1);
	assert_int_equal(st.blocks_total, 10);
	act_pool_free(p, blocks[0]);
	act_pool_destroy(p);
}

static void test_stats_consistent(void **state)
{
	enum { N = 3000, CACHE = 16 };
	struct act_pool *p = make_pool(24, 512, 256, N, CACHE);
	struct act_pool_stats st;
	void **live = calloc(N, sizeof(*live));
	uint64_t allocs = 0, frees = 0, rng = 12345;
	size_t nlive = 0;

	(void)state;
	assert_non_null(live);
	for (int step = 0; step < 200000; step++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		/* Biased walk: long runs up and down force refills and flushes. */
		bool up = ((rng >> 33) % 100) < (step / 20000 % 2 == 0 ? 60u : 40u);

		if ((up || nlive == 0) && nlive < N) {
			void *b = act_pool_alloc(p);

			assert_non_null(b);
			live[nlive++] = b;
			allocs++;
		} else if (nlive > 0) {
			size_t i = (rng >> 17) % nlive;

			act_pool_free(p, live[i]);
			live[i] = live[--nlive];
			frees++;
		}
		if (step % 997 == 0) {
			stats_of(p, &st);
			assert_int_equal(st.allocs, allocs);
			assert_int_equal(st.frees, frees);
			assert_int_equal(st.allocs - st.frees, nlive);
			/* What is neither live nor shared sits in this thread's cache. */
			assert_true(st.blocks_total >= st.blocks_free + nlive);
			assert_true(st.blocks_total - st.blocks_free - nlive <= 2 * CACHE);
		}
	}
	stats_of(p, &st);
	assert_true(st.refills > 0);
	assert_true(st.flushes > 0);
	assert_int_equal(st.failures, 0);
	while (nlive > 0)
		act_pool_free(p, live[--nlive]);
	stats_of(p, &st);
	assert_int_equal(st.allocs, st.frees);
	free(live);
	act_pool_destroy(p);
}

struct count_arg {
	struct act_pool *pool;
	uint64_t before, after;
};

static void *count_thread(void *arg)
{
	struct count_arg *a = arg;
	void *b[3];

	a->before = act__tls_alloc_count;
	for (int i = 0; i < 3; i++)
		b[i] = act_pool_alloc(a->pool);
	a->after = act__tls_alloc_count;
	for (int i = 0; i < 3; i++)
		act_pool_free(a->pool, b[i]);
	return NULL;
}

static void test_thread_alloc_counter(void **state)
{
	struct act_pool *p = make_pool(64, 5, 0, 0, 4);
	struct act_pool *other = make_pool(64, 8, 0, 0, 4);
	struct count_arg arg = { .pool = other };
	uint64_t before = act__tls_alloc_count;
	pthread_t th;
	void *b[5];

	(void)state;
	for (int i = 0; i < 5; i++)
		assert_non_null(b[i] = act_pool_alloc(p));
	assert_int_equal(act__tls_alloc_count - before, 5);
	assert_null(act_pool_alloc(p)); /* a failure is not an allocation */
	assert_int_equal(act__tls_alloc_count - before, 5);
	for (int i = 0; i < 3; i++)
		act_pool_free(p, b[i]); /* nor is a free */
	assert_int_equal(act__tls_alloc_count - before, 5);

	/* Another thread counts its own allocations only. */
	assert_int_equal(pthread_create(&th, NULL, count_thread, &arg), 0);
	pthread_join(th, NULL);
	assert_int_equal(arg.before, 0);
	assert_int_equal(arg.after, 3);
	assert_int_equal(act__tls_alloc_count - before, 5);
	act_pool_free(p, b[3]);
	act_pool_free(p, b[4]);
	act_pool_destroy(p);
	act_pool_destroy(other);
}

enum { XN = 512, XCACHE = 16 };

struct cross_arg {
	struct act_pool *pool;
	void **blocks;
	pthread_barrier_t freed;
	pthread_barrier_t release;
};

static void *cross_free_thread(void *arg)
{
	struct cross_arg *a = arg;

	for (int i = 0; i < XN; i++)
		act_pool_free(a->pool, a->blocks[i]);
	pthread_barrier_wait(&a->freed);
	pthread_barrier_wait(&a->release); /* exit only when told: its cache stays put */
	return NULL;
}

static bool contains(void *const *set, size_t n, const void *x)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == x)
			return true;
	return false;
}

static void test_free_on_other_thread(void **state)
{
	struct act_pool *p = make_pool(64, XN, 0, 0, XCACHE);
	struct cross_arg arg = { .pool = p };
	void *first[XN], *again[XN + 1]; /* room for the NULL that ends a loop */
	struct act_pool_stats st;
	pthread_t th;
	int n = 0;

	(void)state;
	for (int i = 0; i < XN; i++)
		assert_non_null(first[i] = act_pool_alloc(p));
	assert_null(act_pool_alloc(p));
	arg.blocks = first;
	pthread_barrier_init(&arg.freed, NULL, 2);
	pthread_barrier_init(&arg.release, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, cross_free_thread, &arg), 0);
	pthread_barrier_wait(&arg.freed);

	/* What the other thread flushed is ours to allocate; its cache is not. */
	while ((again[n] = act_pool_alloc(p)) != NULL) {
		assert_true(contains(first, XN, again[n]));
		n++;
	}
	assert_true(n >= XN - 2 * XCACHE);
	assert_true(n < XN);
	stats_of(p, &st);
	assert_true(st.flushes >= (XN - 2 * XCACHE) / XCACHE);

	/* When it exits, the rest comes back. */
	pthread_barrier_wait(&arg.release);
	pthread_join(th, NULL);
	while ((again[n] = act_pool_alloc(p)) != NULL) {
		assert_true(contains(first, XN, again[n]));
		n++;
	}
	assert_int_equal(n, XN);
	assert_distinct(again, XN);
	for (int i = 0; i < XN; i++)
		act_pool_free(p, again[i]);
	stats_of(p, &st);
	assert_int_equal(st.allocs, 2 * XN);
	assert_int_equal(st.frees, 2 * XN);
	pthread_barrier_destroy(&arg.freed);
	pthread_barrier_destroy(&arg.release);
	act_pool_destroy(p);
}

struct exit_arg {
	struct act_pool *pool;
	pthread_barrier_t cached;
	pthread_barrier_t release;
};

static void *cache_then_exit_thread(void *arg)
{
	struct exit_arg *a = arg;
	void *b[10];

	for (int i = 0; i < 10; i++)
		b[i] = act_pool_alloc(a->pool);
	for (int i = 0; i < 10; i++)
		act_pool_free(a->pool, b[i]);
	pthread_barrier_wait(&a->cached);
	pthread_barrier_wait(&a->release);
	return NULL;
}

static void test_thread_exit_flushes(void **state)
{
	enum { N = 256, CACHE = 32 };
	struct act_pool *p = make_pool(64, N, 0, 0, CACHE);
	struct exit_arg arg = { .pool = p };
	struct act_pool_stats st;
	pthread_t th;

	(void)state;
	pthread_barrier_init(&arg.cached, NULL, 2);
	pthread_barrier_init(&arg.release, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, cache_then_exit_thread, &arg), 0);
	pthread_barrier_wait(&arg.cached);
	stats_of(p, &st);
	/* One refill of cache_size blocks, all back in the thread's cache now. */
	assert_int_equal(st.refills, 1);
	assert_int_equal(st.blocks_free, N - CACHE);
	assert_int_equal(st.allocs, 10);
	assert_int_equal(st.frees, 10);
	pthread_barrier_wait(&arg.release);
	pthread_join(th, NULL);
	stats_of(p, &st);
	assert_int_equal(st.blocks_free, N);
	assert_int_equal(st.flushes, 1);
	pthread_barrier_destroy(&arg.cached);
	pthread_barrier_destroy(&arg.release);
	act_pool_destroy(p);
}

/*
 * A pool to replace a destroyed small one: it takes the same id, but every
 * mapping of it is larger than all of the old pool's together, so none lands
 * where the old caches were. A stale cache pointer then faults instead of
 * reading fresh zeroes that look like an empty cache.
 */
static struct act_pool *make_successor_pool(void)
{
	return make_pool(64, 64, 0, 1u << 20, 256);
}

struct stale_arg {
	struct act_pool *old_pool;
	struct act_pool *new_pool; /* set by the main thread before go */
	void *foreign;             /* if set: a block of new_pool to free first */
	pthread_barrier_t cached;
	pthread_barrier_t go;
	void *block;
};

static void *stale_cache_thread(void *arg)
{
	struct stale_arg *a = arg;
	void *x = act_pool_alloc(a->old_pool);

	act_pool_free(a->old_pool, x); /* this thread's cache of old_pool is not empty */
	pthread_barrier_wait(&a->cached);
	pthread_barrier_wait(&a->go);
	/* The first operation on the new pool: an alloc, or a free. */
	if (a->foreign != NULL) {
		act_pool_free(a->new_pool, a->foreign);
		return NULL;
	}
	a->block = act_pool_alloc(a->new_pool);
	if (a->block != NULL) {
		memset(a->block, 0x5a, act_pool_block_size(a->new_pool));
		act_pool_free(a->new_pool, a->block);
	}
	return NULL;
}

/* A thread's cache of a destroyed pool is not used for the pool taking its id. */
static void run_stale_cache(bool free_first, struct act_pool_stats *st)
{
	struct stale_arg arg = { .old_pool = make_pool(32, 64, 0, 0, 8) };
	pthread_t th;

	pthread_barrier_init(&arg.cached, NULL, 2);
	pthread_barrier_init(&arg.go, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, stale_cache_thread, &arg), 0);
	pthread_barrier_wait(&arg.cached);
	act_pool_destroy(arg.old_pool);
	arg.new_pool = make_successor_pool(); /* the lowest free id: the old one's */
	if (free_first) {
		arg.foreign = act_pool_alloc(arg.new_pool);
		assert_non_null(arg.foreign);
	}
	pthread_barrier_wait(&arg.go);
	pthread_join(th, NULL);
	if (!free_first)
		assert_non_null(arg.block);
	stats_of(arg.new_pool, st);
	pthread_barrier_destroy(&arg.cached);
	pthread_barrier_destroy(&arg.go);
	act_pool_destroy(arg.new_pool);
}

static void test_stale_cache_not_used(void **state)
{
	struct act_pool_stats st;

	(void)state;
	run_stale_cache(false, &st);
	assert_int_equal(st.allocs, 1);
	assert_int_equal(st.frees, 1);
	assert_int_equal(st.refills, 1); /* a hit in the old cache would not refill */
	assert_int_equal(st.flushes, 1); /* the thread's exit, into the new pool */
	assert_int_equal(st.blocks_free, 64);

	/* The main thread's cache holds the other 63 blocks. */
	run_stale_cache(true, &st);
	assert_int_equal(st.allocs, 1);
	assert_int_equal(st.frees, 1);
	assert_int_equal(st.flushes, 1);
	assert_int_equal(st.blocks_free, 1);
}

static void test_exit_after_pool_destroyed(void **state)
{
	struct act_pool *a = make_pool(32, 64, 0, 0, 8);
	struct exit_arg arg = { .pool = a };
	struct act_pool_stats st;
	struct act_pool *b;
	pthread_t th;

	(void)state;
	pthread_barrier_init(&arg.cached, NULL, 2);
	pthread_barrier_init(&arg.release, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, cache_then_exit_thread, &arg), 0);
	pthread_barrier_wait(&arg.cached);
	/* The thread holds a non-empty cache of a; a goes, b takes its id. */
	act_pool_destroy(a);
	b = make_successor_pool();
	pthread_barrier_wait(&arg.release);
	pthread_join(th, NULL);
	/* The exiting thread must not have flushed a's blocks into b. */
	stats_of(b, &st);
	assert_int_equal(st.blocks_free, 64);
	assert_int_equal(st.flushes, 0);
	assert_int_equal(st.frees, 0);
	pthread_barrier_destroy(&arg.cached);
	pthread_barrier_destroy(&arg.release);
	act_pool_destroy(b);
}

static void test_pool_count_bounded(void **state)
{
	enum { TRY = 1000 };
	struct act_pool **pools = calloc(TRY, sizeof(*pools));
	int n = 0;

	(void)state;
	assert_non_null(pools);
	for (; n < TRY; n++) {
		errno = 0;
		pools[n] = make_pool_quiet(n);
		if (pools[n] == NULL)
			break;
	}
	assert_true(n < TRY);
	assert_true(n >= 8);
	assert_int_equal(errno, ENOMEM);
	/* A slot freed is a slot to reuse. */
	act_pool_destroy(pools[n / 2]);
	pools[n / 2] = make_pool_quiet(0);
	assert_non_null(pools[n / 2]);
	assert_null(make_pool_quiet(0));
	for (int i = 0; i < n; i++)
		act_pool_destroy(pools[i]);
	free(pools);
}

enum { MANY = 72 };

struct many_arg {
	struct act_pool *pool;
	pthread_barrier_t *holding;
	void *block;
};

static void *hold_one_thread(void *arg)
{
	struct many_arg *a = arg;

	a->block = act_pool_alloc(a->pool);
	if (a->block != NULL)
		memset(a->block, 0x11, act_pool_block_size(a->pool));
	pthread_barrier_wait(a->holding); /* all threads use the pool at once */
	act_pool_free(a->pool, a->block);
	return NULL;
}

/* More threads than a pool has caches: the rest work uncached, correctly. */
static void test_more_threads_than_caches(void **state)
{
	struct act_pool *p = make_pool(64, 4096, 0, 0, 8);
	struct many_arg args[MANY];
	pthread_t th[MANY];
	void *blocks[MANY];
	pthread_barrier_t holding;
	struct act_pool_stats st;

	(void)state;
	pthread_barrier_init(&holding, NULL, MANY);
	for (int i = 0; i < MANY; i++) {
		args[i] = (struct many_arg){ .pool = p, .holding = &holding };
		assert_int_equal(pthread_create(&th[i], NULL, hold_one_thread, &args[i]), 0);
	}
	for (int i = 0; i < MANY; i++) {
		pthread_join(th[i], NULL);
		blocks[i] = args[i].block;
		assert_non_null(blocks[i]);
	}
	assert_distinct(blocks, MANY);
	stats_of(p, &st);
	assert_int_equal(st.allocs, MANY);
	assert_int_equal(st.frees, MANY);
	assert_true(st.refills < MANY); /* some threads found no cache */
	assert_int_equal(st.blocks_free, 4096); /* every exit flushed */
	pthread_barrier_destroy(&holding);
	act_pool_destroy(p);
}

#ifndef NDEBUG
/* Value of every byte of a free block; must match ACT__POOL_POISON in pool.c. */
#define POOL_POISON 0x6b

static void test_debug_poison_after_free(void **state)
{
	struct act_pool *p = make_pool(100, 16, 0, 0, 4);
	uint32_t size = act_pool_block_size(p);
	unsigned char *b = act_pool_alloc(p);

	(void)state;
	assert_non_null(b);
	memset(b, 0, size);
	act_pool_free(p, b);
	for (uint32_t i = 0; i < size; i++)
		assert_int_equal(b[i], POOL_POISON);
	act_pool_destroy(p);
}

enum misuse {
	MISUSE_NONE,
	MISUSE_DOUBLE_FREE,
	MISUSE_FOREIGN,
	MISUSE_INTERIOR,
	MISUSE_OTHER_POOL,
	MISUSE_WRITE_AFTER_FREE,
};

static void misuse(enum misuse what)
{
	struct act_pool *p = make_pool(32, 16, 0, 0, 4);
	struct act_pool *q = make_pool(32, 16, 0, 0, 4);
	char *b = act_pool_alloc(p);
	char *c = act_pool_alloc(q);
	char local[64];

	switch (what) {
	case MISUSE_NONE:
		act_pool_free(p, b);
		act_pool_free(q, c);
		b = act_pool_alloc(p);
		act_pool_free(p, b);
		break;
	case MISUSE_DOUBLE_FREE:
		act_pool_free(p, b);
		act_pool_free(p, b);
		break;
	case MISUSE_FOREIGN:
		act_pool_free(p, local);
		break;
	case MISUSE_INTERIOR:
		act_pool_free(p, b + 16);
		break;
	case MISUSE_OTHER_POOL:
		act_pool_free(p, c);
		break;
	case MISUSE_WRITE_AFTER_FREE:
		act_pool_free(p, b);
		b[5] = 1;
		(void)act_pool_alloc(p); /* the same block comes back: the check fires */
		break;
	}
}

/* Runs the misuse in a child; returns its wait status. */
static int run_child(enum misuse what)
{
	int status = -1;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO); /* the assert message is expected */
		misuse(what);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void expect_abort(enum misuse what)
{
	int status = run_child(what);

	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

static void test_debug_detects_misuse(void **state)
{
	int status;

	(void)state;
	/* The harness itself: correct use exits cleanly. */
	status = run_child(MISUSE_NONE);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	expect_abort(MISUSE_DOUBLE_FREE);
	expect_abort(MISUSE_FOREIGN);
	expect_abort(MISUSE_INTERIOR);
	expect_abort(MISUSE_OTHER_POOL);
	expect_abort(MISUSE_WRITE_AFTER_FREE);
}
#endif

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#ifndef NDEBUG
		/* First: fork while the process has no other threads. */
		cmocka_unit_test(test_debug_detects_misuse),
		cmocka_unit_test(test_debug_poison_after_free),
#endif
		cmocka_unit_test(test_create_bad_opts),
		cmocka_unit_test(test_alloc_until_max),
		cmocka_unit_test(test_blocks_distinct_aligned_full_size),
		cmocka_unit_test(test_free_then_alloc_reuses),
		cmocka_unit_test(test_growth_by_chunks),
		cmocka_unit_test(test_stats_consistent),
		cmocka_unit_test(test_thread_alloc_counter),
		cmocka_unit_test(test_free_on_other_thread),
		cmocka_unit_test(test_thread_exit_flushes),
		cmocka_unit_test(test_stale_cache_not_used),
		cmocka_unit_test(test_exit_after_pool_destroyed),
		cmocka_unit_test(test_more_threads_than_caches),
		cmocka_unit_test(test_pool_count_bounded),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
