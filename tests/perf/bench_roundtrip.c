/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Table 2: round trips ping -> pong -> reply, and the harness that the
 * other tables reuse (bench_rt_run).
 *
 * Asynchronous round trip: ping's handler stamps t0 and act_send_copy()s a
 * 24-byte request to pong; pong's handler does the table-1 work and
 * act_reply()s the payload back; the reply runs ping's handler, which
 * records now - t0 and sends the next request. One round trip in flight.
 * Grouped: both actors in one group that the calling thread steps; the
 * start message enters through the mailbox, and from then on every request
 * and reply is sent by a handler of the group on its own thread, so they
 * travel on the group's same-thread lane (act.h; issue 15), whatever the
 * mailbox's queue kind (one row per kind).
 * Cross-thread: each actor has its own mailbox and thread, ping on cpu 0,
 * pong on cpu 1; "spinning" consumers poll their queue before sleeping
 * (group spin), "sleeping" ones sleep at once. With the lockfree mailbox
 * both 24-byte messages travel inline in the ring cell (one cache line a
 * leg, no pool block); with bqueue they are pool blocks behind a pointer.
 *
 * Synchronous round trip: act_fast_send() of a stack request with a reply
 * buffer; pong's handler is the same function. Its baseline is a direct
 * call of a non-inlined function doing the same work and copying the same
 * 24 bytes back.
 *
 * Floors, in the same run: one cache line bounced between the two cores
 * (each side spins with pause until the other's store lands), and a futex
 * ping-pong (each side FUTEX_WAKEs the other and FUTEX_WAITs, never spins).
 *
 * Peer: bench_caf_peer (CAF 0.17 request/then), when built and found.
 */
#include <errno.h>
#include <linux/futex.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

enum { RT_START, RT_PING, RT_PONG, RT_TYPES };

struct rt_payload {
	uint64_t seq;
	uint64_t value;
	void *extra; /* table 3: a block carried across the round trip */
};

struct rt_ping {
	struct act_actor *peer;
	enum bench_rt_extra extra;
	struct act_pool *pool;
	uint64_t count, done;
	uint64_t t0, first, last;
	struct bench_samples *samples;
	_Atomic int finished; /* 1 done, -1 failed */
	sem_t finished_sem;
	bool post;            /* cross-thread: post finished_sem */
};

struct rt_pong {
	enum bench_rt_extra extra;
	struct act_pool *pool;
	uint64_t acc, count, errors;
};

#define RT_EXTRA_BYTES 128

static void *extra_alloc(enum bench_rt_extra e, struct act_pool *pool)
{
	void *p = NULL;

	if (e == BENCH_RT_EXTRA_POOL)
		p = act_pool_alloc(pool);
	else if (e == BENCH_RT_EXTRA_MALLOC)
		p = malloc(RT_EXTRA_BYTES);
	if (p != NULL)
		*(volatile uint8_t *)p = 1; /* touch it, as a message would be written */
	return p;
}

static void extra_free(enum bench_rt_extra e, struct act_pool *pool, void *p)
{
	if (e == BENCH_RT_EXTRA_POOL)
		act_pool_free(pool, p);
	else if (e == BENCH_RT_EXTRA_MALLOC)
		free(p);
}

static void rt_finish(struct rt_ping *p, int how)
{
	atomic_store(&p->finished, how);
	if (p->post)
		sem_post(&p->finished_sem);
}

static void rt_ping_send(struct rt_ping *p)
{
	struct rt_payload req = {.seq = p->done};

	req.extra = extra_alloc(p->extra, p->pool);
	if (p->samples != NULL)
		p->t0 = bench_tsc();
	if (act_send_copy(p->peer, RT_PING, &req, sizeof(req)) != 0)
		rt_finish(p, -1);
}

static void rt_ping_on_start(struct act_actor *self, void *state, struct act_msg *m)
{
	struct rt_ping *p = state;

	(void)self;
	(void)m;
	p->first = bench_tsc();
	rt_ping_send(p);
}

static void rt_ping_on_pong(struct act_actor *self, void *state, struct act_msg *m)
{
	struct rt_ping *p = state;
	/* without samples (an amortized pass) the clock is read at the ends only */
	uint64_t now = p->samples != NULL ? bench_tsc() : 0;
	const struct rt_payload *r = ACT_PAYLOAD(m, const struct rt_payload);

	(void)self;
	if (p->samples != NULL)
		bench_samples_add(p->samples, now - p->t0);
	extra_free(p->extra, p->pool, r->extra);
	if (++p->done == p->count) {
		p->last = p->samples != NULL ? now : bench_tsc();
		rt_finish(p, 1);
		return;
	}
	rt_ping_send(p);
}

/* pong's handler, for every round trip of this file (sync and async). */
static void rt_pong_on_ping(struct act_actor *self, void *state, struct act_msg *m)
{
	struct rt_pong *s = state;
	struct rt_payload *r = ACT_PAYLOAD(m, struct rt_payload);

	(void)self;
	s->acc = (s->acc ^ r->seq) * 0x9e3779b97f4a7c15ull + (r->seq >> 7);
	s->count++;
	r->value = s->acc;
	if (s->extra != BENCH_RT_EXTRA_NONE) {
		extra_free(s->extra, s->pool, r->extra);
		r->extra = extra_alloc(s->extra, s->pool);
	}
	if (act_reply(m, RT_PONG, r, sizeof(*r)) != 0)
		s->errors++;
}

static const act_handler_fn rt_ping_handlers[RT_TYPES] = {
	[RT_START] = rt_ping_on_start,
	[RT_PONG] = rt_ping_on_pong,
};
static const act_handler_fn rt_pong_handlers[RT_TYPES] = {
	[RT_PING] = rt_pong_on_ping,
};

double bench_rt_run(const struct bench_rt_opts *o, uint64_t count, struct bench_samples *s)
{
	struct rt_ping ping = {.count = count, .samples = s, .extra = o->extra};
	struct rt_pong pong = {.extra = o->extra};
	struct act_group *g = NULL;
	struct act_actor *a_ping, *a_pong;
	struct act_pool *pool = NULL;

	if (o->extra == BENCH_RT_EXTRA_POOL) {
		struct act_pool_opts po = {
			.name = "rt_extra",
			.block_size = RT_EXTRA_BYTES,
			.prealloc_blocks = 1024,
			.max_blocks = 4096,
		};

		pool = act_pool_create(&po);
		if (pool == NULL)
			bench_die(errno, "act_pool_create", NULL);
	}
	ping.pool = pong.pool = pool;
	if (o->mode == BENCH_RT_GROUPED) {
		struct act_group_opts go = {.name = "rt", .queue = o->queue, .cpu = -1};

		g = act_group_create(&go);
		if (g == NULL)
			bench_die(errno, "act_group_create", NULL);
		a_pong = bench_actor("pong", rt_pong_handlers, RT_TYPES, &pong, g, NULL, false);
		ping.peer = a_pong;
		a_ping = bench_actor("ping", rt_ping_handlers, RT_TYPES, &ping, g, NULL, false);
		if (act_send_copy(a_ping, RT_START, NULL, 0) != 0)
			bench_die(0, "act_send_copy(start)", NULL);
		while (atomic_load_explicit(&ping.finished, memory_order_relaxed) == 0)
			if (act_group_step(g, 0) < 0)
				bench_die(0, "act_group_step", NULL);
	} else {
		struct act_group_opts on0 = {.name = "ping", .queue = o->queue, .spin = o->spin,
					     .cpu = 0};
		struct act_group_opts on1 = on0;

		on1.name = "pong";
		on1.cpu = 1;
		ping.post = true;
		if (sem_init(&ping.finished_sem, 0, 0) != 0)
			bench_die(errno, "sem_init", NULL);
		a_pong = bench_actor("pong", rt_pong_handlers, RT_TYPES, &pong, NULL, &on1, false);
		ping.peer = a_pong;
		a_ping = bench_actor("ping", rt_ping_handlers, RT_TYPES, &ping, NULL, &on0, false);
		if (act_send_copy(a_ping, RT_START, NULL, 0) != 0)
			bench_die(0, "act_send_copy(start)", NULL);
		while (sem_wait(&ping.finished_sem) != 0 && errno == EINTR)
			;
		sem_destroy(&ping.finished_sem);
	}
	act_actor_stop(a_ping);
	act_actor_stop(a_pong);
	if (g != NULL)
		act_group_drain(g);
	act_actor_destroy(a_ping);
	act_actor_destroy(a_pong);
	act_group_destroy(g);
	act_pool_destroy(pool);
	if (atomic_load(&ping.finished) != 1 || pong.errors != 0)
		bench_die(0, "round trip: a send or reply failed", "run the unit tests");
	return bench_ns(ping.last - ping.first) / (double)count;
}

/* ------------------------------------------------------------------------ */
/* Synchronous round trips                                                  */
/* ------------------------------------------------------------------------ */

enum sync_kind { SYNC_DIRECT, SYNC_FAST_LOCKABLE, SYNC_FAST_BIASED, SYNC_FAST_PRIVATE };

struct sync_ctx {
	struct act_group *group;
	struct act_actor *lockable, *biased, *private_actor;
	struct rt_pong pong;
	uint64_t errors;
};

/* The direct-call baseline: pong's work and a 24-byte reply, no runtime. */
BENCH_OPAQUE static void rt_pong_direct(struct rt_pong *s, const struct act_msg *m,
					struct rt_payload *reply)
{
	const struct rt_payload *r = ACT_PAYLOAD(m, const struct rt_payload);

	s->acc = (s->acc ^ r->seq) * 0x9e3779b97f4a7c15ull + (r->seq >> 7);
	s->count++;
	memcpy(reply, r, sizeof(*reply));
	reply->value = s->acc;
}

BENCH_INLINE uint64_t sync_loop(struct sync_ctx *c, enum sync_kind k, uint64_t n,
				struct bench_samples *s)
{
	struct act_actor *to = k == SYNC_FAST_PRIVATE  ? c->private_actor
			       : k == SYNC_FAST_BIASED ? c->biased
							: c->lockable;
	struct rt_payload back;
	uint64_t i, t0 = 0, start;

	ACT_STACK_MSG(req, struct rt_payload);
	act_msg_init(&req.hdr, RT_PING, sizeof(struct rt_payload));
	start = bench_tsc_begin();
	for (i = 0; i < n; i++) {
		if (s != NULL)
			t0 = bench_tsc_begin();
		req.body.seq = i;
		if (k == SYNC_DIRECT)
			rt_pong_direct(&c->pong, &req.hdr, &back);
		else
			c->errors += act_fast_send(to, &req.hdr, &back, sizeof(back)) !=
				     (int)sizeof(back);
		bench_keep(back.value);
		if (s != NULL)
			bench_samples_add(s, bench_tsc_end() - t0);
	}
	return bench_tsc_end() - start;
}

static __attribute__((noinline)) double sync_run(struct sync_ctx *c, enum sync_kind k,
						 uint64_t n, struct bench_samples *s)
{
	uint64_t ticks;

	/* Constant arguments: each call below is a loop of its own. */
	if (s == NULL) {
		if (k == SYNC_DIRECT)
			ticks = sync_loop(c, SYNC_DIRECT, n, NULL);
		else if (k == SYNC_FAST_LOCKABLE)
			ticks = sync_loop(c, SYNC_FAST_LOCKABLE, n, NULL);
		else if (k == SYNC_FAST_BIASED)
			ticks = sync_loop(c, SYNC_FAST_BIASED, n, NULL);
		else
			ticks = sync_loop(c, SYNC_FAST_PRIVATE, n, NULL);
	} else {
		if (k == SYNC_DIRECT)
			ticks = sync_loop(c, SYNC_DIRECT, n, s);
		else if (k == SYNC_FAST_LOCKABLE)
			ticks = sync_loop(c, SYNC_FAST_LOCKABLE, n, s);
		else if (k == SYNC_FAST_BIASED)
			ticks = sync_loop(c, SYNC_FAST_BIASED, n, s);
		else
			ticks = sync_loop(c, SYNC_FAST_PRIVATE, n, s);
	}
	return bench_ns(ticks) / (double)n;
}

static void sync_setup(struct sync_ctx *c)
{
	c->group = bench_bound_group("sync", ACT_QUEUE_BQUEUE);
	c->lockable = bench_actor("pong", rt_pong_handlers, RT_TYPES, &c->pong, c->group, NULL,
				  false);
	c->private_actor = bench_actor("pong", rt_pong_handlers, RT_TYPES, &c->pong, c->group,
				       NULL, true);
	c->biased = bench_actor_biased("pong", rt_pong_handlers, RT_TYPES, &c->pong, c->group);
}

static void sync_teardown(struct sync_ctx *c)
{
	act_actor_stop(c->lockable);
	act_actor_stop(c->biased);
	act_actor_stop(c->private_actor);
	act_actor_destroy(c->biased);
	act_actor_destroy(c->lockable);
	act_actor_destroy(c->private_actor);
	act_group_destroy(c->group);
	if (c->errors != 0 || c->pong.errors != 0)
		bench_die(0, "fast_send round trip failed", "run the unit tests");
}

/* ------------------------------------------------------------------------ */
/* Floors                                                                   */
/* ------------------------------------------------------------------------ */

struct floor_ctx {
	_Alignas(64) _Atomic uint64_t line;   /* cache-line floor */
	_Alignas(64) _Atomic uint32_t to_b;   /* futex floor: A -> B */
	_Alignas(64) _Atomic uint32_t to_a;   /* futex floor: B -> A */
	uint64_t count;
};

/* True if the thread slept and was woken (not: the word had changed). */
static bool futex_wait(_Atomic uint32_t *w, uint32_t expected)
{
	return syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0) == 0;
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *line_side_b(void *arg)
{
	struct floor_ctx *c = arg;
	uint64_t i;

	for (i = 0; i < c->count; i++) {
		/* acquire/release: the same pairing a queue handoff needs */
		while (atomic_load_explicit(&c->line, memory_order_acquire) != 2 * i + 1)
			bench_pause();
		atomic_store_explicit(&c->line, 2 * i + 2, memory_order_release);
	}
	return NULL;
}

static double floor_line(uint64_t count, struct bench_samples *s)
{
	struct floor_ctx *c = bench_alloc(sizeof(*c));
	uint64_t i, start, end;
	pthread_t th;

	c->count = count;
	bench_thread_start(&th, 1, line_side_b, c);
	start = bench_tsc();
	for (i = 0; i < count; i++) {
		uint64_t t0 = bench_tsc();

		atomic_store_explicit(&c->line, 2 * i + 1, memory_order_release);
		while (atomic_load_explicit(&c->line, memory_order_acquire) != 2 * i + 2)
			bench_pause();
		bench_samples_add(s, bench_tsc() - t0);
	}
	end = bench_tsc();
	bench_thread_join(th);
	free(c);
	return bench_ns(end - start) / (double)count;
}

static void *futex_side_b(void *arg)
{
	struct floor_ctx *c = arg;
	uint64_t i;

	for (i = 0; i < c->count; i++) {
		bool slept = false;

		while (atomic_load(&c->to_b) == 0)
			slept |= futex_wait(&c->to_b, 0);
		atomic_store(&c->to_b, 0);
		atomic_store(&c->to_a, slept ? 2 : 1); /* tell A whether B slept */
		futex_wake(&c->to_a);
	}
	return NULL;
}

/*
 * Round trips of the futex floor, and those in which both sides slept.
 * When the two threads fall into step (each answers before the other has
 * gone to sleep) a leg costs a system call, not a wake-up: measured, the
 * floor's p50 was 1.3 us in 3 of 6 full runs at load 2-4 against ~20 us in
 * the others, while the sleeping arms stayed at ~20 us. The floor is the
 * wake-up of a sleeping thread on each leg, so only those round trips are
 * sampled (the amortized column keeps them all).
 */
static uint64_t floor_futex_trips, floor_futex_slept;

static double floor_futex(uint64_t count, struct bench_samples *s)
{
	struct floor_ctx *c = bench_alloc(sizeof(*c));
	uint64_t i, start, end;
	pthread_t th;

	c->count = count;
	bench_thread_start(&th, 1, futex_side_b, c);
	start = bench_tsc();
	for (i = 0; i < count; i++) {
		uint64_t t0 = bench_tsc();
		bool slept = false;
		uint32_t v;

		atomic_store(&c->to_b, 1);
		futex_wake(&c->to_b);
		while ((v = atomic_load(&c->to_a)) == 0)
			slept |= futex_wait(&c->to_a, 0);
		atomic_store(&c->to_a, 0);
		if (slept && v == 2) {
			bench_samples_add(s, bench_tsc() - t0);
			floor_futex_slept++;
		}
	}
	end = bench_tsc();
	floor_futex_trips += count;
	bench_thread_join(th);
	free(c);
	return bench_ns(end - start) / (double)count;
}

/* ------------------------------------------------------------------------ */
/* CAF peer                                                                 */
/* ------------------------------------------------------------------------ */

#define CAF_MAX_RUNS 64

struct caf_run {
	unsigned threads;
	double p50, p90, p99, p999, max, amort;
};

/* Run the peer and parse its lines; @return runs parsed, -1 if it failed. */
static int caf_peer_run(uint64_t rounds, unsigned repeat, struct caf_run *runs)
{
	char rounds_arg[32], repeat_arg[32], tsc_arg[32];
	char *argv[] = {
		(char *)bench_opts.caf_peer, "--rounds", rounds_arg, "--repeat", repeat_arg,
		"--tsc-per-ns", tsc_arg, NULL,
	};
	posix_spawn_file_actions_t fa;
	char line[512];
	int fds[2], status, n = 0;
	pid_t pid;
	FILE *f;

	if (access(bench_opts.caf_peer, X_OK) != 0)
		return -1;
	snprintf(rounds_arg, sizeof(rounds_arg), "%llu", (unsigned long long)rounds);
	snprintf(repeat_arg, sizeof(repeat_arg), "%u", repeat);
	snprintf(tsc_arg, sizeof(tsc_arg), "%.6f", bench_clock.ticks_per_ns);
	if (pipe(fds) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	if (posix_spawn(&pid, bench_opts.caf_peer, &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		struct caf_run *r = &runs[n];
		unsigned long long count;

		if (n < CAF_MAX_RUNS &&
		    sscanf(line, "caf_rt threads=%u rounds=%llu p50_ns=%lf p90_ns=%lf p99_ns=%lf "
				 "p999_ns=%lf max_ns=%lf amortized_ns=%lf",
			   &r->threads, &count, &r->p50, &r->p90, &r->p99, &r->p999, &r->max,
			   &r->amort) == 8)
			n++;
	}
	if (f != NULL)
		fclose(f);
	else
		close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return n;
}

static void caf_vs_row(struct bench_section *sec, const char *name, double tw, double caf)
{
	double vals[3] = {tw, caf, tw / caf};

	bench_row(sec, name, vals, NULL);
}

static void caf_section(struct bench_table *t, double grouped_p50, double fast_amort,
			double spin_p50, double sleep_p50)
{
	struct caf_run runs[CAF_MAX_RUNS];
	static const struct bench_col cols[] = {
		{"runs", "runs", 0},
		{"p50_ns", "p50", 1},
		{"p90_ns", "p90", 1},
		{"p99_ns", "p99", 1},
		{"p999_ns", "p99.9", 1},
		{"max_ns", "max", 0},
		{"amortized_ns", "amort", 1},
	};
	static const struct bench_col vs_cols[] = {
		{"tickwire_ns", "tickwire", 1},
		{"caf_ns", "CAF", 1},
		{"ratio", "tickwire/CAF", 3},
	};
	struct bench_section *sec;
	double p50[2][CAF_MAX_RUNS], amort[2][CAF_MAX_RUNS];
	double vals[7];
	unsigned cnt[2] = {0, 0};
	double caf1, caf2;
	int n, i, k;

	if (bench_opts.caf_peer == NULL) {
		bench_note(t, "CAF peer: not built (libcaf-dev was not found when meson configured "
			   "tests/perf); install libcaf-dev and reconfigure, or pass --caf PATH");
		return;
	}
	n = caf_peer_run(bench_iters(100000, 20000), bench_opts.quick ? 1 : 3, runs);
	if (n <= 0) {
		bench_note(t, "CAF peer: %s did not run or printed nothing (hint: run it alone "
			   "to see why, or pass --no-caf)", bench_opts.caf_peer);
		return;
	}
	for (i = 0; i < n; i++) {
		k = runs[i].threads == 1 ? 0 : 1;
		p50[k][cnt[k]] = runs[i].p50;
		amort[k][cnt[k]++] = runs[i].amort;
	}
	sec = bench_section(t, "peer: CAF 0.17 request/then ping-pong (bench_caf_peer, same run), "
			    "ns per round trip", cols, 7);
	for (k = 0; k < 2; k++) {
		struct caf_run *best = NULL;

		for (i = 0; i < n; i++)
			if ((runs[i].threads == 1) == (k == 0) &&
			    (best == NULL || runs[i].p50 < best->p50))
				best = &runs[i];
		if (best == NULL)
			continue;
		/* percentiles of the run with the lowest p50; p50 and amort: medians */
		vals[0] = cnt[k];
		vals[1] = bench_median(p50[k], cnt[k]);
		vals[2] = best->p90;
		vals[3] = best->p99;
		vals[4] = best->p999;
		vals[5] = best->max;
		vals[6] = bench_median(amort[k], cnt[k]);
		bench_row(sec, k == 0 ? "CAF, 1 scheduler thread" : "CAF, 2 scheduler threads", vals,
			  NULL);
	}
	caf1 = cnt[0] ? bench_median(p50[0], cnt[0]) : NAN;
	caf2 = cnt[1] ? bench_median(p50[1], cnt[1]) : NAN;
	sec = bench_section(t, "tickwire against CAF (p50 round trip; fast_send: amortized)",
			    vs_cols, 3);
	caf_vs_row(sec, "grouped (1 thread) vs CAF 1 thread", grouped_p50, caf1);
	caf_vs_row(sec, "fast_send vs CAF 1 thread", fast_amort, caf1);
	caf_vs_row(sec, "cross-thread spinning vs CAF 2 threads", spin_p50, caf2);
	caf_vs_row(sec, "cross-thread sleeping vs CAF 2 threads", sleep_p50, caf2);
	bench_note(t, "CAF's scheduler (work stealing) may run both actors of the 2-thread "
		   "system on one worker; its process is confined to cpus 0-1");
}

/* ------------------------------------------------------------------------ */
/* Table 2                                                                  */
/* ------------------------------------------------------------------------ */

enum t2_arm {
	T2_LINE,
	T2_FUTEX,
	T2_DIRECT,
	T2_FAST_LOCKABLE,
	T2_FAST_BIASED,
	T2_FAST_PRIVATE,
	T2_GROUPED,         /* bqueue mailbox: the table's grouped row since issue 3 */
	T2_GROUPED_BATCHED,
	T2_GROUPED_SHARDED,
	T2_GROUPED_LF,
	T2_SPIN_BQ,
	T2_SPIN_LF,
	T2_SLEEP_BQ,
	T2_SLEEP_LF,
	T2_ARMS
};

static const char *const t2_names[T2_ARMS] = {
	[T2_LINE] = "floor: cache line bounced between cores",
	[T2_FUTEX] = "floor: futex wake ping-pong",
	[T2_DIRECT] = "direct call with reply",
	[T2_FAST_LOCKABLE] = "fast_send, lockable pong",
	[T2_FAST_BIASED] = "fast_send, lockable pong, lock_bias",
	[T2_FAST_PRIVATE] = "fast_send, group-private pong",
	[T2_GROUPED] = "grouped, one thread, lane (bqueue mailbox)",
	[T2_GROUPED_BATCHED] = "grouped, one thread, lane (bqueue_batched mailbox)",
	[T2_GROUPED_SHARDED] = "grouped, one thread, lane (sharded mailbox)",
	[T2_GROUPED_LF] = "grouped, one thread, lane (lockfree mailbox)",
	[T2_SPIN_BQ] = "cross-thread, spinning consumers (bqueue)",
	[T2_SPIN_LF] = "cross-thread, spinning consumers (lockfree)",
	[T2_SLEEP_BQ] = "cross-thread, sleeping consumers (bqueue)",
	[T2_SLEEP_LF] = "cross-thread, sleeping consumers (lockfree)",
};

/* Consumers poll this many times before sleeping: longer than any round trip. */
#define T2_SPIN (1u << 22)

static uint64_t t2_count(enum t2_arm a)
{
	switch (a) {
	case T2_FUTEX:
	case T2_SLEEP_BQ:
	case T2_SLEEP_LF:
		return bench_iters(10000, 2000);
	case T2_LINE:
	case T2_SPIN_BQ:
	case T2_SPIN_LF:
		return bench_iters(100000, 10000);
	case T2_GROUPED:
	case T2_GROUPED_BATCHED:
	case T2_GROUPED_SHARDED:
	case T2_GROUPED_LF:
		return bench_iters(200000, 20000);
	default:
		return bench_iters(2000000, 200000);
	}
}

/* The mailbox queue of a grouped arm. */
static enum act_queue_type t2_grouped_queue(enum t2_arm a)
{
	switch (a) {
	case T2_GROUPED_BATCHED:
		return ACT_QUEUE_BQUEUE_BATCHED;
	case T2_GROUPED_SHARDED:
		return ACT_QUEUE_SHARDED;
	case T2_GROUPED_LF:
		return ACT_QUEUE_LOCKFREE;
	default:
		return ACT_QUEUE_BQUEUE;
	}
}

static double t2_run(enum t2_arm a, struct sync_ctx *sc, struct bench_samples *s)
{
	struct bench_rt_opts o = {.queue = ACT_QUEUE_BQUEUE, .mode = BENCH_RT_CROSS};
	uint64_t n = t2_count(a);

	switch (a) {
	case T2_LINE:
		return floor_line(n, s);
	case T2_FUTEX:
		return floor_futex(n, s);
	case T2_DIRECT:
		sync_run(sc, SYNC_DIRECT, n / 10, s);
		return sync_run(sc, SYNC_DIRECT, n, NULL);
	case T2_FAST_LOCKABLE:
		sync_run(sc, SYNC_FAST_LOCKABLE, n / 10, s);
		return sync_run(sc, SYNC_FAST_LOCKABLE, n, NULL);
	case T2_FAST_BIASED:
		sync_run(sc, SYNC_FAST_BIASED, n / 10, s);
		return sync_run(sc, SYNC_FAST_BIASED, n, NULL);
	case T2_FAST_PRIVATE:
		sync_run(sc, SYNC_FAST_PRIVATE, n / 10, s);
		return sync_run(sc, SYNC_FAST_PRIVATE, n, NULL);
	case T2_GROUPED:
	case T2_GROUPED_BATCHED:
	case T2_GROUPED_SHARDED:
	case T2_GROUPED_LF:
		o.mode = BENCH_RT_GROUPED;
		o.queue = t2_grouped_queue(a);
		/* as the synchronous arms: a sampled pass for the percentiles, an
		 * amortized pass that reads the clock at its ends only */
		bench_rt_run(&o, n / 10, s);
		return bench_rt_run(&o, n, NULL);
	case T2_SPIN_LF:
		o.queue = ACT_QUEUE_LOCKFREE;
		/* fall through */
	case T2_SPIN_BQ:
		o.spin = T2_SPIN;
		break;
	case T2_SLEEP_LF:
		o.queue = ACT_QUEUE_LOCKFREE;
		break;
	default:
		break;
	}
	return bench_rt_run(&o, n, s);
}

void bench_table2_round_trip(void)
{
	struct bench_samples s[T2_ARMS];
	double p50[T2_ARMS][BENCH_MAX_ROUNDS], amort[T2_ARMS][BENCH_MAX_ROUNDS];
	struct sync_ctx sc = {0};
	struct bench_table *t;
	struct bench_section *sec;
	unsigned rounds = bench_opts.rounds, r, a;
	double ratio[T2_ARMS], med_p50[T2_ARMS], med_amort[T2_ARMS];

	t = bench_table_begin(2, "Round trip ping -> pong -> reply, against the raw floors");
	bench_pin(0);
	sync_setup(&sc);
	for (a = 0; a < T2_ARMS; a++)
		bench_samples_init(&s[a], (t2_count(a) + 1) * rounds);
	for (r = 0; r < rounds; r++) {
		for (a = 0; a < T2_ARMS; a++) {
			size_t from = s[a].n;

			amort[a][r] = t2_run(a, &sc, &s[a]);
			p50[a][r] = bench_p50_ns(s[a].ticks + from, s[a].n - from);
		}
	}
	sync_teardown(&sc);

	/* Synchronous arms are ratioed on amortized time (they are below the
	 * TSC step); the others on the per-round median. */
	for (a = 0; a < T2_ARMS; a++) {
		med_p50[a] = bench_median(p50[a], rounds);
		med_amort[a] = bench_median(amort[a], rounds);
	}
	for (a = 0; a < T2_ARMS; a++)
		ratio[a] = NAN;
	ratio[T2_FAST_LOCKABLE] = bench_ratio_median(amort[T2_FAST_LOCKABLE], amort[T2_DIRECT],
						     rounds);
	ratio[T2_FAST_BIASED] = bench_ratio_median(amort[T2_FAST_BIASED], amort[T2_DIRECT], rounds);
	ratio[T2_FAST_PRIVATE] = bench_ratio_median(amort[T2_FAST_PRIVATE], amort[T2_DIRECT],
						    rounds);
	for (a = T2_GROUPED; a <= T2_GROUPED_LF; a++)
		ratio[a] = bench_ratio_median(amort[a], amort[T2_FAST_LOCKABLE], rounds);
	ratio[T2_SPIN_BQ] = bench_ratio_median(p50[T2_SPIN_BQ], p50[T2_LINE], rounds);
	ratio[T2_SPIN_LF] = bench_ratio_median(p50[T2_SPIN_LF], p50[T2_LINE], rounds);
	ratio[T2_SLEEP_BQ] = bench_ratio_median(p50[T2_SLEEP_BQ], p50[T2_FUTEX], rounds);
	ratio[T2_SLEEP_LF] = bench_ratio_median(p50[T2_SLEEP_LF], p50[T2_FUTEX], rounds);

	sec = bench_section(t, "ns per round trip; ratio: fast_send / direct (amort), grouped "
			    "(every queue kind) / fast_send lockable (amort), spinning / "
			    "cache-line floor (p50), sleeping / futex floor (p50)", bench_latr_cols,
			    BENCH_LATR_NCOLS);
	for (a = 0; a < T2_ARMS; a++) {
		struct bench_pct p;
		double vals[BENCH_LATR_NCOLS];

		bench_samples_pct(&s[a], &p);
		bench_lat_vals(vals, &p, med_amort[a], bench_spread_pct(amort[a], rounds));
		vals[8] = ratio[a];
		bench_row(sec, t2_names[a], vals, NULL);
		bench_samples_free(&s[a]);
	}
	bench_target(t, "cross-thread spinning RT (bqueue, the default) / cache-line floor",
		     ratio[T2_SPIN_BQ], 1.5, false);
	bench_target(t, "cross-thread spinning RT (lockfree) / cache-line floor",
		     ratio[T2_SPIN_LF], 1.5, false);
	bench_target(t, "cross-thread sleeping RT (bqueue, the default) / futex floor",
		     ratio[T2_SLEEP_BQ], 1.2, false);
	bench_target(t, "cross-thread sleeping RT (lockfree) / futex floor", ratio[T2_SLEEP_LF],
		     1.2, false);
	bench_target(t, "fast_send RT (lockable) / direct call", ratio[T2_FAST_LOCKABLE], 3.0,
		     false);
	bench_target(t, "fast_send RT (lockable, lock_bias) / direct call", ratio[T2_FAST_BIASED],
		     3.0, false);
	for (a = T2_GROUPED; a <= T2_GROUPED_LF; a++) {
		char what[160];

		snprintf(what, sizeof(what), "issue 15: grouped RT, one thread (%s mailbox) / "
			 "fast_send RT (lockable)", bench_queue_name(t2_grouped_queue(a)));
		bench_target(t, what, ratio[a], 2.5, false);
	}
	bench_note(t, "grouped (bqueue) / fast_send (lockable), amortized: %.2f; grouped / "
		   "fast_send (private): %.2f", ratio[T2_GROUPED],
		   bench_ratio_median(amort[T2_GROUPED], amort[T2_FAST_PRIVATE], rounds));
	bench_note(t, "grouped: ping and pong are lockable members of one group stepped by "
		   "this thread; every request and reply after the start message takes the "
		   "same-thread lane (no lock, no atomic on the send; each delivery takes its "
		   "receiver's lock, one CAS and one exchange)");
	bench_note(t, "grouped and synchronous arms: percentiles from a sampled pass (n/10, "
		   "two TSC reads a round trip), amortized time from a second pass that reads "
		   "the TSC at its ends only; the cross-thread arms' amortized time includes "
		   "their two TSC reads per round trip (table 1's rdtsc row: their cost here)");
	bench_note(t, "spinning consumers poll %u times (pause) before sleeping; sleeping ones "
		   "sleep at once (group spin 0, the default)", T2_SPIN);
	bench_note(t, "grouped and cross-thread: act_send_copy of a 24-byte request, act_reply "
		   "of 24 bytes; sync arms: the same handler via act_fast_send");
	bench_note(t, "cross-thread arms: both messages travel inline in the mailbox's ring "
		   "cell (lockfree: one cache line a leg; bqueue: the cell plus the mutex and "
		   "index lines)");
	bench_note(t, "futex floor: both sides slept in %.1f%% of its round trips; its "
		   "percentiles, and the sleeping ratios, use those only (the others, where the "
		   "two threads fell into step and a leg found the word already changed, are "
		   "in the amortized column)",
		   floor_futex_trips != 0 ? 100.0 * (double)floor_futex_slept /
						    (double)floor_futex_trips
					  : 0.0);
	caf_section(t, med_p50[T2_GROUPED], med_amort[T2_FAST_LOCKABLE], med_p50[T2_SPIN_BQ],
		    med_p50[T2_SLEEP_BQ]);
	bench_table_end(t);
}
