/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Table 3: allocation.
 *
 *  1. Allocations on the synchronous path, counted by the runtime itself
 *     (act_thread_alloc_count()) around N calls of each synchronous form:
 *     must be 0. The asynchronous round trip is counted for contrast.
 *  2. Grouped round trip with two extra allocations carried across it (ping
 *     allocates a 128-byte block and sends it, pong frees it and allocates
 *     the one it replies with, ping frees that): pool blocks against malloc.
 *     The runtime has no malloc mode for its messages, so this is how a
 *     malloc-backed round trip is measured: the difference to the plain
 *     round trip is the allocator's share.
 *  3. alloc + free, timed one pair at a time, pool against malloc, in three
 *     patterns: pairs (alloc then free at once); FIFO with 4096 live blocks
 *     (free the oldest, allocate a new one); the same FIFO with malloc sizes
 *     drawn at random from 16 B to 4 KiB (the pool serves them all from a
 *     4 KiB block). Pool and malloc alternate in chunks so that noise hits
 *     both alike. Every new block is written once. No warm-up: the pool is
 *     preallocated at create, as in production; malloc starts as the earlier
 *     tables left it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ------------------------------------------------------------------------ */
/* 1. Synchronous path allocation count                                     */
/* ------------------------------------------------------------------------ */

enum { SY_CALL, SY_CALL_SYNC_ONLY, SY_TYPES };

#define SY_CHAIN 4

struct sy_state {
	struct act_actor *next; /* chain: the next stage, NULL at the end */
	uint64_t acc;
	uint64_t errors;
};

static void sy_on_call(struct act_actor *self, void *state, struct act_msg *m)
{
	struct sy_state *s = state;
	uint64_t v = *ACT_PAYLOAD(m, uint64_t);

	(void)self;
	if (s->next != NULL) {
		uint64_t r = 0;

		ACT_STACK_MSG(req, uint64_t);
		act_msg_init(&req.hdr, m->type, sizeof(uint64_t));
		req.body = v + 1;
		if (act_fast_send(s->next, &req.hdr, &r, sizeof(r)) != (int)sizeof(r))
			s->errors++;
		v = r;
	}
	s->acc += v;
	if (m->type == SY_CALL_SYNC_ONLY) {
		if (act_reply_sync(m, SY_CALL, &v, sizeof(v)) != 0)
			s->errors++;
	} else if (act_reply(m, SY_CALL, &v, sizeof(v)) != 0) {
		s->errors++;
	}
}

struct sy_ctx {
	struct act_group *group;
	struct act_actor *lockable, *private_actor;
	struct act_actor *chain[SY_CHAIN];
	struct sy_state state, private_state, chain_state[SY_CHAIN];
};

static struct act_actor *sy_actor(struct act_group *g, struct sy_state *s, bool private_actor)
{
	static const act_handler_fn h[SY_TYPES] = {
		[SY_CALL] = sy_on_call,
		[SY_CALL_SYNC_ONLY] = sy_on_call,
	};

	return bench_actor("sync", h, SY_TYPES, s, g, NULL, private_actor);
}

/* Allocations made on this thread by @n calls of one synchronous form. */
static uint64_t sy_count(struct sy_ctx *c, int form, uint64_t n)
{
	uint64_t before = act_thread_alloc_count();
	uint64_t i, r;
	int rc = 0;

	for (i = 0; i < n; i++) {
		ACT_STACK_MSG(req, uint64_t);
		act_msg_init(&req.hdr, form == 3 ? SY_CALL_SYNC_ONLY : SY_CALL, sizeof(uint64_t));
		req.body = i;
		switch (form) {
		case 0:
			rc = act_fast_send(c->lockable, &req.hdr, &r, sizeof(r)) != (int)sizeof(r);
			break;
		case 1:
			rc = act_fast_send(c->private_actor, &req.hdr, &r, sizeof(r)) !=
			     (int)sizeof(r);
			break;
		case 2:
			rc = act_fast_send(c->chain[0], &req.hdr, &r, sizeof(r)) != (int)sizeof(r);
			break;
		case 3:
			rc = act_fast_send_spin(c->lockable, &req.hdr, &r, sizeof(r)) !=
			     (int)sizeof(r);
			break;
		case 4:
			rc = act_fast_send_void(c->lockable, &req.hdr) != 0;
			break;
		default:
			rc = act_fast_send_x(c->private_actor, &req.hdr, &r, sizeof(r)) !=
			     (int)sizeof(r);
			break;
		}
		if (rc != 0)
			bench_die(0, "synchronous call failed", "run the unit tests");
	}
	return act_thread_alloc_count() - before;
}

static void sync_alloc_section(struct bench_table *t)
{
	static const char *const names[] = {
		"fast_send + act_reply, lockable",
		"fast_send + act_reply, group-private",
		"fast_send chain of 4 stages, each replies",
		"fast_send_spin + act_reply_sync",
		"fast_send_void (synchronous completions)",
		"fast_send_x + act_reply, group-private",
	};
	static const struct bench_col cols[] = {
		{"calls", "calls", 0},
		{"allocations", "allocations", 0},
		{"per_call", "per call", 3},
	};
	struct sy_ctx *c = bench_alloc(sizeof(*c));
	struct bench_rt_opts rt = {.mode = BENCH_RT_GROUPED, .queue = ACT_QUEUE_BQUEUE};
	struct bench_samples s;
	struct bench_section *sec;
	uint64_t n = bench_iters(1000000, 100000), total = 0, before, async_allocs;
	struct act_actor_stats st;
	unsigned i, form;
	double vals[3];

	c->group = bench_bound_group("sync_alloc", ACT_QUEUE_BQUEUE);
	c->lockable = sy_actor(c->group, &c->state, false);
	c->private_actor = sy_actor(c->group, &c->private_state, true);
	for (i = SY_CHAIN; i-- > 0;) {
		c->chain_state[i].next = i + 1 < SY_CHAIN ? c->chain[i + 1] : NULL;
		c->chain[i] = sy_actor(c->group, &c->chain_state[i], false);
	}
	sec = bench_section(t, "allocations counted by the runtime on the calling thread "
			    "(act_thread_alloc_count)", cols, 3);
	for (form = 0; form < 6; form++) {
		uint64_t k = sy_count(c, (int)form, n);

		total += k;
		vals[0] = (double)n;
		vals[1] = (double)k;
		vals[2] = (double)k / (double)n;
		bench_row(sec, names[form], vals, k == 0 ? "none" : "ALLOCATES");
	}
	act_actor_stats(c->lockable, &st);
	if (st.async_fallbacks != 0)
		bench_note(t, "fast_send_void fell back to the mailbox %llu times (unexpected on "
			   "an uncontended actor)", (unsigned long long)st.async_fallbacks);

	bench_samples_init(&s, 20001);
	before = act_thread_alloc_count();
	bench_rt_run(&rt, 20000, &s);
	async_allocs = act_thread_alloc_count() - before;
	bench_samples_free(&s);
	vals[0] = 20000;
	vals[1] = (double)async_allocs;
	vals[2] = (double)async_allocs / 20000.0;
	bench_row(sec, "contrast: grouped async round trip", vals, "(request + reply)");
	bench_target(t, "allocations on the synchronous path (all forms above)", (double)total, 0,
		     false);

	for (i = 0; i < SY_CHAIN; i++)
		act_actor_stop(c->chain[i]);
	act_actor_stop(c->lockable);
	act_actor_stop(c->private_actor);
	act_group_drain(c->group);
	for (i = 0; i < SY_CHAIN; i++)
		act_actor_destroy(c->chain[i]);
	act_actor_destroy(c->lockable);
	act_actor_destroy(c->private_actor);
	act_group_destroy(c->group);
	for (i = 0; i < SY_CHAIN; i++)
		c->state.errors += c->chain_state[i].errors;
	if (c->state.errors + c->private_state.errors != 0)
		bench_die(0, "synchronous reply failed", "run the unit tests");
	free(c);
}

/* ------------------------------------------------------------------------ */
/* 2. Grouped round trip with two allocations                               */
/* ------------------------------------------------------------------------ */

static void rt_alloc_section(struct bench_table *t)
{
	static const char *const names[3] = {
		"grouped RT, runtime only",
		"grouped RT + 2 pool blocks",
		"grouped RT + 2 malloc blocks",
	};
	struct bench_samples s[3];
	double amort[3][BENCH_MAX_ROUNDS];
	double share_pool[BENCH_MAX_ROUNDS], share_malloc[BENCH_MAX_ROUNDS];
	uint64_t n = bench_iters(200000, 20000);
	unsigned rounds = bench_opts.rounds, r, k;
	struct bench_section *sec;
	double ratio;

	for (k = 0; k < 3; k++)
		bench_samples_init(&s[k], (n + 1) * rounds);
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < 3; k++) {
			struct bench_rt_opts o = {
				.mode = BENCH_RT_GROUPED,
				.queue = ACT_QUEUE_BQUEUE,
				.extra = (enum bench_rt_extra)k,
			};
			amort[k][r] = bench_rt_run(&o, n, &s[k]);
		}
		share_pool[r] = amort[1][r] - amort[0][r];
		share_malloc[r] = amort[2][r] - amort[0][r];
	}
	sec = bench_section(t, "grouped round trip (bqueue) with two 128-byte allocations carried "
			    "across it, ns; ratio = RT / plain RT", bench_latr_cols,
			    BENCH_LATR_NCOLS);
	for (k = 0; k < 3; k++) {
		struct bench_pct p;
		double vals[BENCH_LATR_NCOLS];

		bench_samples_pct(&s[k], &p);
		bench_lat_vals(vals, &p, bench_median(amort[k], rounds),
			       bench_spread_pct(amort[k], rounds));
		vals[8] = bench_ratio_median(amort[k], amort[0], rounds);
		bench_row(sec, names[k], vals, NULL);
		bench_samples_free(&s[k]);
	}
	ratio = bench_ratio_median(amort[2], amort[1], rounds);
	bench_note(t, "two allocations per round trip cost %.1f ns from the pool and %.1f ns from "
		   "malloc (median over rounds of RT - plain RT); malloc RT / pool RT = %.3f",
		   bench_median(share_pool, rounds), bench_median(share_malloc, rounds), ratio);
	bench_note(t, "the runtime itself already makes two pool allocations per grouped round "
		   "trip (request and reply)");
}

/* ------------------------------------------------------------------------ */
/* 3. alloc + free tails                                                    */
/* ------------------------------------------------------------------------ */

enum al_kind { AL_POOL, AL_MALLOC };
enum al_pattern { AL_PAIRS, AL_FIFO, AL_RANDOM, AL_PATTERNS };

#define AL_LIVE 4096u
#define AL_SMALL 128u
#define AL_LARGE 4096u
#define AL_CHUNK 4096u

struct al_ctx {
	struct act_pool *pool;
	void *ring[2][AL_LIVE];
	uint32_t *sizes; /* AL_LIVE random sizes, 16 B .. 4 KiB */
	unsigned slot[2];
	uint64_t errors;
};

BENCH_INLINE void *al_alloc(struct al_ctx *c, enum al_kind k, enum al_pattern pat, unsigned i)
{
	void *p;

	if (k == AL_POOL)
		p = act_pool_alloc(c->pool);
	else
		p = malloc(pat == AL_RANDOM ? c->sizes[i & (AL_LIVE - 1)] : AL_SMALL);
	if (p == NULL)
		c->errors++;
	else
		*(volatile uint8_t *)p = (uint8_t)i;
	return p;
}

BENCH_INLINE void al_free(struct al_ctx *c, enum al_kind k, void *p)
{
	if (k == AL_POOL)
		act_pool_free(c->pool, p);
	else
		free(p);
}

BENCH_INLINE void al_op(struct al_ctx *c, enum al_kind k, enum al_pattern pat, unsigned i)
{
	if (pat == AL_PAIRS) {
		al_free(c, k, al_alloc(c, k, pat, i));
	} else {
		unsigned slot = c->slot[k];

		al_free(c, k, c->ring[k][slot]);
		c->ring[k][slot] = al_alloc(c, k, pat, i);
		c->slot[k] = (slot + 1) & (AL_LIVE - 1);
	}
}

BENCH_INLINE uint64_t al_loop(struct al_ctx *c, enum al_kind k, enum al_pattern pat,
			      unsigned n, struct bench_samples *s)
{
	uint64_t start = bench_tsc_begin();
	unsigned i;

	for (i = 0; i < n; i++) {
		if (s != NULL) {
			uint64_t t0 = bench_tsc_begin();

			al_op(c, k, pat, i);
			bench_samples_add(s, bench_tsc_end() - t0);
		} else {
			al_op(c, k, pat, i);
		}
	}
	return bench_tsc_end() - start;
}

static __attribute__((noinline)) uint64_t al_run(struct al_ctx *c, enum al_kind k,
						 enum al_pattern pat, unsigned n,
						 struct bench_samples *s)
{
	/* constant kind and pattern: one specialised loop each */
	if (k == AL_POOL)
		return pat == AL_PAIRS ? al_loop(c, AL_POOL, AL_PAIRS, n, s)
		       : pat == AL_FIFO ? al_loop(c, AL_POOL, AL_FIFO, n, s)
					: al_loop(c, AL_POOL, AL_RANDOM, n, s);
	return pat == AL_PAIRS ? al_loop(c, AL_MALLOC, AL_PAIRS, n, s)
	       : pat == AL_FIFO ? al_loop(c, AL_MALLOC, AL_FIFO, n, s)
				: al_loop(c, AL_MALLOC, AL_RANDOM, n, s);
}

static void al_pattern_run(struct bench_table *t, struct bench_section *sec, struct al_ctx *c,
			   enum al_pattern pat, uint64_t samples)
{
	static const char *const pat_names[AL_PATTERNS] = {
		"pairs", "FIFO, 4096 live", "FIFO, 4096 live, random sizes",
	};
	struct act_pool_opts po = {
		.name = "bench",
		.block_size = pat == AL_RANDOM ? AL_LARGE : AL_SMALL,
		.prealloc_blocks = 2 * AL_LIVE + 1024,
		.chunk_blocks = 1024,
		.max_blocks = 8 * AL_LIVE,
	};
	struct bench_samples s[2];
	struct bench_pct p[2];
	double amort[2] = {0, 0};
	uint64_t done;
	unsigned k, i;
	char name[96];

	c->pool = act_pool_create(&po);
	if (c->pool == NULL)
		bench_die(errno, "act_pool_create", "needs ~40 MiB of memory");
	for (k = 0; k < 2; k++) {
		bench_samples_init(&s[k], samples);
		c->slot[k] = 0;
		if (pat != AL_PAIRS)
			for (i = 0; i < AL_LIVE; i++)
				c->ring[k][i] = al_alloc(c, (enum al_kind)k, pat, i);
	}
	for (done = 0; done < samples; done += AL_CHUNK) {
		for (k = 0; k < 2; k++) {
			amort[k] += bench_ns(al_run(c, (enum al_kind)k, pat, AL_CHUNK / 4, NULL));
			al_run(c, (enum al_kind)k, pat, AL_CHUNK, &s[k]);
		}
	}
	for (k = 0; k < 2; k++) {
		double vals[7];

		bench_samples_pct(&s[k], &p[k]);
		vals[0] = (double)p[k].n;
		vals[1] = p[k].p50;
		vals[2] = p[k].p99;
		vals[3] = p[k].p9999;
		vals[4] = p[k].max;
		vals[5] = amort[k] / (double)(done / 4);
		vals[6] = k == AL_POOL ? NAN : p[0].p9999 / p[1].p9999;
		snprintf(name, sizeof(name), "%s: %s", pat_names[pat],
			 k == AL_POOL ? "act_pool" : "malloc");
		bench_row(sec, name, vals, NULL);
		if (pat != AL_PAIRS)
			for (i = 0; i < AL_LIVE; i++)
				al_free(c, (enum al_kind)k, c->ring[k][i]);
		bench_samples_free(&s[k]);
	}
	act_pool_destroy(c->pool);
	c->pool = NULL;
	snprintf(name, sizeof(name), "pool p99.99 / malloc p99.99, %s", pat_names[pat]);
	bench_target(t, name, p[0].p9999 / p[1].p9999, 1.0 / 3.0, false);
}

static void tail_section(struct bench_table *t)
{
	static const struct bench_col cols[] = {
		{"n", "n", 0},
		{"p50_ns", "p50", 1},
		{"p99_ns", "p99", 1},
		{"p9999_ns", "p99.99", 1},
		{"max_ns", "max", 0},
		{"amortized_ns", "amort", 2},
		{"ratio_p9999", "pool/malloc p99.99", 3},
	};
	struct al_ctx *c = bench_alloc(sizeof(*c));
	uint64_t samples = bench_iters(2000000, 300000);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct bench_section *sec;
	unsigned i, pat;

	c->sizes = bench_alloc(AL_LIVE * sizeof(*c->sizes));
	for (i = 0; i < AL_LIVE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		c->sizes[i] = 16 + (uint32_t)(x % (AL_LARGE - 16 + 1));
	}
	sec = bench_section(t, "alloc + free, one timed pair per sample, ns (pool and malloc "
			    "alternate in chunks of 4096)", cols, 7);
	for (pat = 0; pat < AL_PATTERNS; pat++)
		al_pattern_run(t, sec, c, (enum al_pattern)pat, samples);
	if (c->errors != 0)
		bench_die(0, "an allocation failed", "free memory on this machine");
	bench_note(t, "sizes: 128 B for pairs and FIFO (the runtime's smallest message class); "
		   "random sizes 16 B - 4 KiB for malloc, served by a 4 KiB-block pool");
	bench_note(t, "p99.99 of %llu samples is the %lluth largest; the timer adds ~%.0f ns to "
		   "every sample", (unsigned long long)samples,
		   (unsigned long long)(samples / 10000), bench_clock.pair_ns);
	free(c->sizes);
	free(c);
}

void bench_table3_alloc(void)
{
	struct bench_table *t = bench_table_begin(3, "Allocation");

	bench_pin(0);
	sync_alloc_section(t);
	rt_alloc_section(t);
	tail_section(t);
	bench_table_end(t);
}
