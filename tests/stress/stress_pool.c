/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Stress test of the block pool, for tw_stress_seconds():
 *  - producers allocate blocks and pass them through a locked queue to
 *    consumers, which free them (every block is freed on another thread);
 *  - a thread allocates and frees in pairs;
 *  - a thread keeps a FIFO window of 4096 live blocks;
 *  - a thread creates pools, runs short-lived threads on them and destroys
 *    each pool while those threads exit (stale caches, id reuse);
 *  - the main thread reads statistics meanwhile.
 * Every block is filled with a pattern naming its owner and sequence number
 * and checked before it is freed: a block handed out twice is overwritten by
 * its second owner and fails the check of the first. At the end every block
 * is back in the pool.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tw_test.h"

#include "act.h"

enum {
	PRODUCERS = 2,
	CONSUMERS = 2,
	QUEUE_CAP = 1024,
	FIFO_WINDOW = 4096,
	BLOCK_SIZE = 200,
	CACHE_SIZE = 32,
	CHURN_WORKERS = 2,
};

/* Owner tags: one per thread role instance. */
enum {
	TAG_PRODUCER = 1, /* + producer index */
	TAG_PAIRS = 16,
	TAG_FIFO = 17,
	TAG_CHURN = 32,   /* + worker index */
};

static atomic_bool stop;
static atomic_uint errors;
static char first_error[256];
static atomic_flag first_error_taken = ATOMIC_FLAG_INIT;

/* Record an error seen on any thread; x and y are context for the message. */
static void report(const char *what, uint64_t x, uint64_t y)
{
	atomic_fetch_add(&errors, 1);
	if (!atomic_flag_test_and_set(&first_error_taken))
		snprintf(first_error, sizeof(first_error), "%s (%llu, %llu)", what,
			 (unsigned long long)x, (unsigned long long)y);
}

struct stamp {
	uint64_t tag;
	uint64_t seq;
};

static unsigned char fill_byte(uint64_t tag, uint64_t seq, size_t i)
{
	return (unsigned char)(tag * 131 + seq * 7 + i);
}

static void stamp_block(void *block, uint32_t size, uint64_t tag, uint64_t seq)
{
	struct stamp *s = block;
	unsigned char *b = block;

	s->tag = tag;
	s->seq = seq;
	for (size_t i = sizeof(*s); i < size; i++)
		b[i] = fill_byte(tag, seq, i);
}

/* True if the block still holds exactly what its owner wrote. */
static bool check_block(const void *block, uint32_t size, uint64_t tag, uint64_t seq)
{
	const struct stamp *s = block;
	const unsigned char *b = block;

	if (s->tag != tag || s->seq != seq) {
		report("block header overwritten: handed out twice? (tag, seq)", tag, seq);
		return false;
	}
	for (size_t i = sizeof(*s); i < size; i++) {
		if (b[i] != fill_byte(tag, seq, i)) {
			report("block body overwritten: handed out twice? (tag, seq)", tag, seq);
			return false;
		}
	}
	return true;
}

static bool aligned(const void *block)
{
	if ((uintptr_t)block % 16 != 0) {
		report("block not 16-byte aligned", 0, 0);
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------------ */
/* A plain locked queue between producers and consumers                     */
/* ------------------------------------------------------------------------ */

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	void *slots[QUEUE_CAP];
	unsigned head, count;
};

static struct queue queue = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.not_empty = PTHREAD_COND_INITIALIZER,
	.not_full = PTHREAD_COND_INITIALIZER,
};

static void queue_push(void *item)
{
	pthread_mutex_lock(&queue.lock);
	while (queue.count == QUEUE_CAP)
		pthread_cond_wait(&queue.not_full, &queue.lock);
	queue.slots[(queue.head + queue.count) % QUEUE_CAP] = item;
	queue.count++;
	pthread_cond_signal(&queue.not_empty);
	pthread_mutex_unlock(&queue.lock);
}

static void *queue_pop(void)
{
	void *item;

	pthread_mutex_lock(&queue.lock);
	while (queue.count == 0)
		pthread_cond_wait(&queue.not_empty, &queue.lock);
	item = queue.slots[queue.head];
	queue.head = (queue.head + 1) % QUEUE_CAP;
	queue.count--;
	pthread_cond_signal(&queue.not_full);
	pthread_mutex_unlock(&queue.lock);
	return item;
}

/* ------------------------------------------------------------------------ */
/* Workers on the main pool                                                 */
/* ------------------------------------------------------------------------ */

struct worker {
	struct act_pool *pool;
	uint32_t size;
	unsigned index;
	uint64_t allocs, frees, alloc_failures;
};

static void *producer(void *arg)
{
	struct worker *w = arg;
	uint64_t tag = TAG_PRODUCER + w->index;

	for (uint64_t seq = 0; !atomic_load_explicit(&stop, memory_order_relaxed); seq++) {
		void *b = act_pool_alloc(w->pool);

		if (b == NULL) {
			w->alloc_failures++;
			continue;
		}
		w->allocs++;
		aligned(b);
		stamp_block(b, w->size, tag, seq);
		queue_push(b);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct worker *w = arg;
	void *b;

	while ((b = queue_pop()) != NULL) {
		const struct stamp *s = b;

		/* The producer's tag and seq are in the block; check the rest against them. */
		if (s->tag < TAG_PRODUCER || s->tag >= TAG_PRODUCER + PRODUCERS)
			report("queued block with a foreign tag", s->tag, s->seq);
		else
			check_block(b, w->size, s->tag, s->seq);
		act_pool_free(w->pool, b);
		w->frees++;
	}
	return NULL;
}

static void *pairs(void *arg)
{
	struct worker *w = arg;

	for (uint64_t seq = 0; !atomic_load_explicit(&stop, memory_order_relaxed); seq++) {
		void *b = act_pool_alloc(w->pool);

		if (b == NULL) {
			w->alloc_failures++;
			continue;
		}
		w->allocs++;
		aligned(b);
		stamp_block(b, w->size, TAG_PAIRS, seq);
		if ((seq & 63) == 0)
			sched_yield(); /* let others hand the block out twice, if they could */
		check_block(b, w->size, TAG_PAIRS, seq);
		act_pool_free(w->pool, b);
		w->frees++;
	}
	return NULL;
}

static void *fifo(void *arg)
{
	struct worker *w = arg;
	void **window = calloc(FIFO_WINDOW, sizeof(*window));
	uint64_t *seqs = calloc(FIFO_WINDOW, sizeof(*seqs));
	uint64_t seq = 0;
	unsigned head = 0, count = 0;

	if (window == NULL || seqs == NULL) {
		report("fifo: out of memory", 0, 0);
		free(window);
		free(seqs);
		return NULL;
	}
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		void *b;

		if (count == FIFO_WINDOW) {
			check_block(window[head], w->size, TAG_FIFO, seqs[head]);
			act_pool_free(w->pool, window[head]);
			w->frees++;
			head = (head + 1) % FIFO_WINDOW;
			count--;
		}
		b = act_pool_alloc(w->pool);
		if (b == NULL) {
			w->alloc_failures++;
			continue;
		}
		w->allocs++;
		aligned(b);
		stamp_block(b, w->size, TAG_FIFO, seq);
		window[(head + count) % FIFO_WINDOW] = b;
		seqs[(head + count) % FIFO_WINDOW] = seq;
		count++;
		seq++;
	}
	for (; count > 0; count--, head = (head + 1) % FIFO_WINDOW) {
		check_block(window[head], w->size, TAG_FIFO, seqs[head]);
		act_pool_free(w->pool, window[head]);
		w->frees++;
	}
	free(window);
	free(seqs);
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Pool churn: destroy pools while their threads exit                       */
/* ------------------------------------------------------------------------ */

struct churn_worker {
	struct act_pool *pool;
	unsigned index;
	atomic_uint *done;
	long exit_delay_ns; /* spreads the exit over the destroy and the next create */
	uint64_t allocs, frees;
};

static void *churn_worker(void *arg)
{
	struct churn_worker *w = arg;
	uint32_t size = act_pool_block_size(w->pool);
	uint64_t tag = TAG_CHURN + w->index;
	void *held[40];

	for (uint64_t seq = 0; seq < 400; seq++) {
		unsigned n = 1 + (unsigned)(seq % 40);
		unsigned got = 0;

		for (; got < n; got++) {
			held[got] = act_pool_alloc(w->pool);
			if (held[got] == NULL)
				break;
			stamp_block(held[got], size, tag, seq * 64 + got);
		}
		if (got < n)
			report("churn pool exhausted", tag, seq);
		for (unsigned i = 0; i < got; i++) {
			check_block(held[i], size, tag, seq * 64 + i);
			act_pool_free(w->pool, held[i]);
		}
		w->allocs += got;
		w->frees += got;
	}
	/* Release pairs with the churn thread's acquire: our counters are final. */
	atomic_fetch_add_explicit(w->done, 1, memory_order_release);
	if (w->exit_delay_ns > 0) {
		struct timespec nap = { 0, w->exit_delay_ns };

		nanosleep(&nap, NULL);
	}
	return NULL; /* the exit flush now races with the pool's destruction */
}

struct churn_result {
	uint64_t rounds;
	uint64_t allocs;
	uint64_t grows;
};

/*
 * The successor pool is larger in every mapping than the small one, so none
 * of its mappings lands where the small one's caches were: a stale cache
 * pointer faults instead of reading fresh zeroes.
 */
static struct act_pool *churn_pool(bool successor)
{
	struct act_pool_opts opts = {
		.name = "churn",
		.block_size = 48,
		/* The small pool grows by small chunks while its two workers run. */
		.prealloc_blocks = successor ? 256 : 32,
		.chunk_blocks = successor ? 128 : 16,
		.max_blocks = successor ? 1u << 18 : 1024,
		.cache_size = successor ? 128 : 8,
	};
	struct act_pool *p = act_pool_create(&opts);

	if (p == NULL)
		report("churn: pool create failed", 0, 0);
	return p;
}

static void *churn(void *arg)
{
	struct churn_result *res = arg;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct churn_worker workers[CHURN_WORKERS];
		pthread_t threads[CHURN_WORKERS];
		struct act_pool_stats st;
		struct act_pool *p = churn_pool(false), *next;
		atomic_uint done = 0;
		uint64_t allocs = 0;
		void *b;

		if (p == NULL)
			break;
		for (unsigned i = 0; i < CHURN_WORKERS; i++) {
			workers[i] = (struct churn_worker){
				.pool = p,
				.index = i,
				.done = &done,
				.exit_delay_ns = (long)((res->rounds + i) % 4) * 100 * 1000,
			};
			if (pthread_create(&threads[i], NULL, churn_worker, &workers[i]) != 0) {
				report("churn: pthread_create failed", 0, 0);
				atomic_fetch_add(&done, 1);
				threads[i] = pthread_self();
			}
		}
		while (atomic_load_explicit(&done, memory_order_acquire) < CHURN_WORKERS)
			sched_yield();
		for (unsigned i = 0; i < CHURN_WORKERS; i++)
			allocs += workers[i].allocs;
		act_pool_stats(p, &st);
		if (st.allocs != allocs || st.frees != allocs || st.failures != 0)
			report("churn: pool counters disagree with the workers", st.allocs, allocs);
		res->grows += st.grows;
		/* The workers hold caches of p and are exiting right now. */
		act_pool_destroy(p);
		/* Likely the same id: a stale exit flush would land here. */
		next = churn_pool(true);
		if (next == NULL)
			break;
		b = act_pool_alloc(next);
		if (b != NULL) {
			stamp_block(b, act_pool_block_size(next), TAG_CHURN + 9, res->rounds);
			act_pool_free(next, b);
		}
		for (unsigned i = 0; i < CHURN_WORKERS; i++)
			if (!pthread_equal(threads[i], pthread_self()))
				pthread_join(threads[i], NULL);
		act_pool_stats(next, &st);
		/* This thread's cache holds what is not free; nobody else's may add. */
		if (st.blocks_free > st.blocks_total || st.frees != 1 || st.flushes != 0 ||
		    st.blocks_total - st.blocks_free > 2 * 128)
			report("churn: a stale cache reached a new pool", st.blocks_free,
			       st.blocks_total);
		act_pool_destroy(next);
		res->rounds++;
		res->allocs += allocs;
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */

static void test_pool_stress(void **state)
{
	struct act_pool_opts opts = {
		.name = "stress",
		.block_size = BLOCK_SIZE,
		.prealloc_blocks = 1024,
		.chunk_blocks = 1024,
		.max_blocks = 1u << 16, /* far above what can be live: no failures */
		.cache_size = CACHE_SIZE,
	};
	struct worker producers[PRODUCERS], consumers[CONSUMERS], pair_worker, fifo_worker;
	pthread_t producer_threads[PRODUCERS], consumer_threads[CONSUMERS];
	pthread_t pair_thread, fifo_thread, churn_thread;
	struct churn_result churn_res = { 0 };
	struct act_pool_stats st, prev = { 0 };
	uint64_t allocs = 0, frees = 0, alloc_failures = 0;
	double budget = tw_stress_seconds() * 0.9, start = tw_now_s();
	struct act_pool *p;
	uint32_t size;
	uint64_t polls = 0;

	(void)state;
	p = act_pool_create(&opts);
	assert_non_null(p);
	size = act_pool_block_size(p);
	assert_true(size >= BLOCK_SIZE);

	for (unsigned i = 0; i < PRODUCERS; i++) {
		producers[i] = (struct worker){ .pool = p, .size = size, .index = i };
		assert_int_equal(pthread_create(&producer_threads[i], NULL, producer, &producers[i]), 0);
	}
	for (unsigned i = 0; i < CONSUMERS; i++) {
		consumers[i] = (struct worker){ .pool = p, .size = size, .index = i };
		assert_int_equal(pthread_create(&consumer_threads[i], NULL, consumer, &consumers[i]), 0);
	}
	pair_worker = (struct worker){ .pool = p, .size = size };
	fifo_worker = (struct worker){ .pool = p, .size = size };
	assert_int_equal(pthread_create(&pair_thread, NULL, pairs, &pair_worker), 0);
	assert_int_equal(pthread_create(&fifo_thread, NULL, fifo, &fifo_worker), 0);
	assert_int_equal(pthread_create(&churn_thread, NULL, churn, &churn_res), 0);

	/* Read statistics while the pool runs: each counter only grows. */
	while (tw_now_s() - start < budget && atomic_load(&errors) == 0) {
		struct timespec nap = { 0, 20 * 1000 * 1000 };

		nanosleep(&nap, NULL);
		act_pool_stats(p, &st);
		if (st.allocs < prev.allocs || st.frees < prev.frees || st.refills < prev.refills ||
		    st.flushes < prev.flushes || st.grows < prev.grows ||
		    st.blocks_total < prev.blocks_total || st.blocks_free > st.blocks_total)
			report("statistics went backwards", st.allocs, prev.allocs);
		prev = st;
		polls++;
	}
	atomic_store(&stop, true);

	for (unsigned i = 0; i < PRODUCERS; i++)
		pthread_join(producer_threads[i], NULL);
	for (unsigned i = 0; i < CONSUMERS; i++)
		queue_push(NULL); /* one end marker per consumer, after every block */
	for (unsigned i = 0; i < CONSUMERS; i++)
		pthread_join(consumer_threads[i], NULL);
	pthread_join(pair_thread, NULL);
	pthread_join(fifo_thread, NULL);
	pthread_join(churn_thread, NULL);

	if (atomic_load(&errors) != 0)
		fail_msg("%u errors; first: %s", atomic_load(&errors), first_error);

	for (unsigned i = 0; i < PRODUCERS; i++) {
		allocs += producers[i].allocs;
		alloc_failures += producers[i].alloc_failures;
	}
	for (unsigned i = 0; i < CONSUMERS; i++)
		frees += consumers[i].frees;
	allocs += pair_worker.allocs + fifo_worker.allocs;
	frees += pair_worker.frees + fifo_worker.frees;
	alloc_failures += pair_worker.alloc_failures + fifo_worker.alloc_failures;

	act_pool_stats(p, &st);
	printf("# %.1f s: %llu allocs (%llu cross-thread), %llu refills, %llu flushes, "
	       "%llu grows, %llu blocks, %llu churn rounds (%llu grows), %llu stats polls\n",
	       tw_now_s() - start, (unsigned long long)st.allocs,
	       (unsigned long long)(producers[0].allocs + producers[1].allocs),
	       (unsigned long long)st.refills, (unsigned long long)st.flushes,
	       (unsigned long long)st.grows, (unsigned long long)st.blocks_total,
	       (unsigned long long)churn_res.rounds, (unsigned long long)churn_res.grows,
	       (unsigned long long)polls);

	/* Every block came back; every worker's count is in the statistics. */
	assert_int_equal(alloc_failures, 0);
	assert_int_equal(st.failures, 0);
	assert_int_equal(st.allocs, allocs);
	assert_int_equal(st.frees, frees);
	assert_int_equal(st.allocs, st.frees);
	/* All users have exited, so their caches were flushed to the shared list. */
	assert_int_equal(st.blocks_free, st.blocks_total);
	/* The run did exercise what it claims to. */
	assert_true(producers[0].allocs > 0 && producers[1].allocs > 0);
	assert_true(pair_worker.allocs > 0);
	assert_true(fifo_worker.allocs > FIFO_WINDOW);
	assert_true(st.grows > 0);
	assert_true(st.refills > 0 && st.flushes > 0);
	assert_true(churn_res.rounds > 0);
	assert_true(churn_res.grows > 0);
	act_pool_destroy(p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_stress),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
