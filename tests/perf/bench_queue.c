/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Table 4: the four mailbox queues in three regimes.
 *  - grouped: the one-thread round trip of table 2, per queue (p50);
 *  - bursty single producer: the main thread (cpu 0) sends bursts of 32
 *    8-byte messages to an actor with its own thread (cpu 1, sleeping
 *    consumer), then stays idle for 20 us so the consumer goes back to
 *    sleep; per message: (last handler of the burst - first send) / 32;
 *  - fan-in: P producer threads (cpus 0 and 1 alternately) each send their
 *    share of the messages to one consumer (cpu 1); every act_send is timed
 *    (push percentiles), and throughput is messages over the time from the
 *    start to the last handler.
 *
 * Table 5: asynchronous throughput, round trips per second, 64 requests in
 * flight between ping (cpu 0) and pong (cpu 1), sleeping consumers. The
 * runtime always takes messages from its pool; the rows "+ malloc" add one
 * malloc'd 64-byte buffer per message (allocated by the sender, freed by the
 * receiver: what a malloc-backed mailbox costs), so that the pool's share
 * shows. Producer-side batching packs 16 requests into one message.
 */
#include <semaphore.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { Q_DATA, Q_START, Q_REPLY, Q_TYPES };

static struct act_actor *q_actor(const char *name, const act_handler_fn *h, void *state,
				 enum act_queue_type q, int cpu, uint32_t spin)
{
	struct act_group_opts own = {.name = name, .queue = q, .cpu = cpu, .spin = spin};

	return bench_actor(name, h, Q_TYPES, state, NULL, &own, false);
}

static void q_destroy(struct act_actor *a)
{
	act_actor_stop(a);
	act_actor_destroy(a);
}

static void sem_wait_intr(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------------------ */
/* Consumer shared by the bursty and fan-in regimes                         */
/* ------------------------------------------------------------------------ */

struct sink {
	_Atomic uint64_t received;  /* written by the consumer only */
	_Atomic uint64_t last_tsc;  /* tsc of the handler that reached @target */
	_Atomic uint64_t target;    /* set by the producer side before it sends */
	sem_t reached;
	bool post;
};

static void sink_on_data(struct act_actor *self, void *state, struct act_msg *m)
{
	struct sink *s = state;
	uint64_t n = atomic_load_explicit(&s->received, memory_order_relaxed) + 1;

	(void)self;
	bench_keep(*ACT_PAYLOAD(m, uint64_t));
	if (n == atomic_load_explicit(&s->target, memory_order_relaxed)) {
		atomic_store_explicit(&s->last_tsc, bench_tsc(), memory_order_relaxed);
		if (s->post)
			sem_post(&s->reached);
	}
	/* release: the producer that sees the count also sees last_tsc */
	atomic_store_explicit(&s->received, n, memory_order_release);
}

static const act_handler_fn sink_handlers[Q_TYPES] = {[Q_DATA] = sink_on_data};

static void send_u64(struct act_actor *to, uint64_t v, uint64_t *errors)
{
	if (act_send_copy(to, Q_DATA, &v, sizeof(v)) != 0)
		(*errors)++;
}

/* ------------------------------------------------------------------------ */
/* Table 4, regime 2: bursty single producer                                */
/* ------------------------------------------------------------------------ */

#define BURST 32
#define BURST_GAP_NS 20000
#define BURST_SPIN (1u << 18) /* polls: longer than the gap */

struct burst_result {
	double per_msg_ns;   /* median over bursts of (last handler - first send) / BURST */
	double send_ns;      /* producer: median over bursts of send time / BURST */
	struct bench_samples bursts; /* per-burst (last handler - first send) / BURST */
};

static void burst_run(enum act_queue_type q, uint32_t spin, uint64_t bursts,
		      struct burst_result *out)
{
	struct sink s = {.post = false};
	struct act_actor *c = q_actor("burst", sink_handlers, &s, q, 1, spin);
	double *per = bench_alloc(bursts * sizeof(*per));
	double *send = bench_alloc(bursts * sizeof(*send));
	uint64_t b, i, errors = 0, gap = (uint64_t)(BURST_GAP_NS * bench_clock.ticks_per_ns);

	bench_samples_init(&out->bursts, bursts);
	for (b = 0; b < bursts; b++) {
		uint64_t t0, t1, until;

		/* relaxed: the sends below publish it (the queue's lock or release) */
		atomic_store_explicit(&s.target, (b + 1) * BURST, memory_order_relaxed);
		t0 = bench_tsc();
		for (i = 0; i < BURST; i++)
			send_u64(c, i, &errors);
		t1 = bench_tsc();
		/* acquire: pairs with the consumer's release of the count */
		while (atomic_load_explicit(&s.received, memory_order_acquire) < (b + 1) * BURST)
			bench_pause();
		per[b] = bench_ns(atomic_load_explicit(&s.last_tsc, memory_order_relaxed) - t0) /
			 BURST;
		send[b] = bench_ns(t1 - t0) / BURST;
		bench_samples_add(&out->bursts,
				  (atomic_load_explicit(&s.last_tsc, memory_order_relaxed) - t0) /
					  BURST);
		until = bench_tsc() + gap;
		while (bench_tsc() < until)
			bench_pause();
	}
	out->per_msg_ns = bench_median(per, (unsigned)bursts);
	out->send_ns = bench_median(send, (unsigned)bursts);
	free(per);
	free(send);
	q_destroy(c);
	if (errors != 0)
		bench_die(0, "bursty producer: act_send_copy failed", NULL);
}

/* ------------------------------------------------------------------------ */
/* Table 4, regime 3: fan-in                                                */
/* ------------------------------------------------------------------------ */

struct fan_producer {
	struct act_actor *to;
	uint64_t count;
	pthread_barrier_t *start;
	struct bench_samples push;
	uint64_t errors;
};

static void *fan_producer_main(void *arg)
{
	struct fan_producer *p = arg;
	uint64_t i;

	pthread_barrier_wait(p->start);
	for (i = 0; i < p->count; i++) {
		struct act_msg *m = act_msg_alloc(Q_DATA, sizeof(uint64_t));
		uint64_t t0;
		int rc;

		if (m == NULL) {
			p->errors++;
			continue;
		}
		*ACT_PAYLOAD(m, uint64_t) = i;
		t0 = bench_tsc();
		rc = act_send(p->to, m);
		bench_samples_add(&p->push, bench_tsc() - t0);
		if (rc != 0) {
			act_msg_free(m);
			p->errors++;
		}
	}
	return NULL;
}

/* @return messages per second; appends push samples to @push. */
static double fan_run(enum act_queue_type q, unsigned producers, uint64_t total,
		      struct bench_samples *push)
{
	struct sink s = {.post = true};
	struct fan_producer *p = bench_alloc(producers * sizeof(*p));
	pthread_t *th = bench_alloc(producers * sizeof(*th));
	uint64_t per = total / producers, t0, errors = 0;
	pthread_barrier_t start;
	struct act_actor *c;
	unsigned i;
	double rate;

	atomic_init(&s.target, per * producers);
	if (sem_init(&s.reached, 0, 0) != 0)
		bench_die(errno, "sem_init", NULL);
	if (pthread_barrier_init(&start, NULL, producers + 1) != 0)
		bench_die(errno, "pthread_barrier_init", NULL);
	c = q_actor("fan_in", sink_handlers, &s, q, 1, 0);
	for (i = 0; i < producers; i++) {
		p[i].to = c;
		p[i].count = per;
		p[i].start = &start;
		bench_samples_init(&p[i].push, per);
		bench_thread_start(&th[i], (int)(i % 2), fan_producer_main, &p[i]);
	}
	pthread_barrier_wait(&start);
	t0 = bench_tsc();
	sem_wait_intr(&s.reached);
	rate = (double)(per * producers) / (bench_ns(atomic_load(&s.last_tsc) - t0) * 1e-9);
	for (i = 0; i < producers; i++) {
		bench_thread_join(th[i]);
		errors += p[i].errors;
		memcpy(push->ticks + push->n, p[i].push.ticks,
		       (push->cap - push->n < p[i].push.n ? push->cap - push->n : p[i].push.n) *
			       sizeof(uint64_t));
		push->n += push->cap - push->n < p[i].push.n ? push->cap - push->n : p[i].push.n;
		bench_samples_free(&p[i].push);
	}
	q_destroy(c);
	sem_destroy(&s.reached);
	pthread_barrier_destroy(&start);
	free(p);
	free(th);
	if (errors != 0)
		bench_die(0, "fan-in: act_msg_alloc or act_send failed", NULL);
	return rate;
}

/* ------------------------------------------------------------------------ */
/* Table 4                                                                  */
/* ------------------------------------------------------------------------ */

static const unsigned fan_producers[] = {2, 4, 8, 32};
#define FAN_CONFIGS 4

static void mark_best(char tags[][48], const double *v, unsigned n, bool lowest,
		      const char *label)
{
	unsigned i, best = 0;

	for (i = 1; i < n; i++)
		if (lowest ? v[i] < v[best] : v[i] > v[best])
			best = i;
	if (tags[best][0] != '\0')
		strncat(tags[best], ", ", 47 - strlen(tags[best]));
	strncat(tags[best], label, 47 - strlen(tags[best]));
}

static unsigned best_of(const double *v, unsigned n, bool lowest)
{
	unsigned i, best = 0;

	for (i = 1; i < n; i++)
		if (lowest ? v[i] < v[best] : v[i] > v[best])
			best = i;
	return best;
}

void bench_table4_queues(void)
{
	enum { NQ = ACT_QUEUE_COUNT_ };
	static const struct bench_col burst_cols[] = {
		{"per_msg_ns", "per msg", 1},
		{"p90_ns", "p90", 1},
		{"p99_ns", "p99", 1},
		{"send_ns", "send", 1},
		{"spread_pct", "spread%", 0},
	};
	static const struct bench_col fan_cols[] = {
		{"producers", "producers", 0},
		{"push_p50_ns", "push p50", 1},
		{"push_p99_ns", "push p99", 1},
		{"push_p999_ns", "push p99.9", 1},
		{"mmsg_per_s", "Mmsg/s", 3},
		{"spread_pct", "spread%", 0},
	};
	struct bench_samples rt[NQ], fan_push[NQ][FAN_CONFIGS], burst_all[2][NQ];
	double rt_p50[NQ][BENCH_MAX_ROUNDS], rt_amort[NQ][BENCH_MAX_ROUNDS];
	double burst_per[2][NQ][BENCH_MAX_ROUNDS], burst_send[2][NQ][BENCH_MAX_ROUNDS];
	double fan_rate[NQ][FAN_CONFIGS][BENCH_MAX_ROUNDS];
	double med[NQ], rate_med[FAN_CONFIGS][NQ], p99[FAN_CONFIGS][NQ];
	char tags[NQ][48];
	uint64_t rt_n = bench_iters(100000, 10000), bursts = bench_iters(2000, 300);
	uint64_t fan_total = bench_iters(100000, 20000);
	unsigned rounds = bench_opts.rounds, r, q, f, best, m;
	struct bench_section *sec;
	struct bench_table *t;
	char rule[4][160];

	t = bench_table_begin(4, "Mailbox queues in three regimes");
	bench_pin(0);
	for (q = 0; q < NQ; q++) {
		bench_samples_init(&rt[q], (rt_n + 1) * rounds);
		for (m = 0; m < 2; m++)
			bench_samples_init(&burst_all[m][q], bursts * rounds);
		for (f = 0; f < FAN_CONFIGS; f++)
			bench_samples_init(&fan_push[q][f], fan_total * rounds);
	}
	for (r = 0; r < rounds; r++) {
		for (q = 0; q < NQ; q++) {
			struct bench_rt_opts o = {.mode = BENCH_RT_GROUPED,
						  .queue = (enum act_queue_type)q};
			size_t from = rt[q].n;

			rt_amort[q][r] = bench_rt_run(&o, rt_n, &rt[q]);
			rt_p50[q][r] = bench_p50_ns(rt[q].ticks + from, rt[q].n - from);
			for (m = 0; m < 2; m++) {
				struct burst_result br;
				struct bench_samples *all = &burst_all[m][q];

				burst_run((enum act_queue_type)q, m == 0 ? 0 : BURST_SPIN, bursts,
					  &br);
				burst_per[m][q][r] = br.per_msg_ns;
				burst_send[m][q][r] = br.send_ns;
				memcpy(all->ticks + all->n, br.bursts.ticks,
				       br.bursts.n * sizeof(uint64_t));
				all->n += br.bursts.n;
				bench_samples_free(&br.bursts);
			}
			for (f = 0; f < FAN_CONFIGS; f++)
				fan_rate[q][f][r] = fan_run((enum act_queue_type)q, fan_producers[f],
							    fan_total, &fan_push[q][f]);
		}
	}

	/* regime 1: grouped round trip */
	memset(tags, 0, sizeof(tags));
	for (q = 0; q < NQ; q++)
		med[q] = bench_median(rt_p50[q], rounds);
	mark_best(tags, med, NQ, true, "best");
	sec = bench_section(t, "regime 1: grouped single-thread round trip, ns (ratio = p50 / "
			    "bqueue p50, paired by round)", bench_latr_cols, BENCH_LATR_NCOLS);
	for (q = 0; q < NQ; q++) {
		struct bench_pct p;
		double vals[BENCH_LATR_NCOLS];

		bench_samples_pct(&rt[q], &p);
		bench_lat_vals(vals, &p, bench_median(rt_amort[q], rounds),
			       bench_spread_pct(rt_amort[q], rounds));
		vals[8] = bench_ratio_median(rt_p50[q], rt_p50[0], rounds);
		bench_row(sec, bench_queue_name((enum act_queue_type)q), vals, tags[q]);
		bench_samples_free(&rt[q]);
	}
	best = best_of(med, NQ, true);
	snprintf(rule[0], sizeof(rule[0]), "grouped / same-thread traffic: %s",
		 bench_queue_name((enum act_queue_type)best));

	/* regime 2: bursty producer, consumer sleeping or spinning between bursts */
	for (m = 0; m < 2; m++) {
		memset(tags, 0, sizeof(tags));
		for (q = 0; q < NQ; q++)
			med[q] = bench_median(burst_per[m][q], rounds);
		mark_best(tags, med, NQ, true, "best");
		sec = bench_section(t, m == 0 ? "regime 2a: one bursty producer (32 messages, then "
					"20 us idle), consumer sleeps when empty; ns per message "
					"delivered; send = producer's cost per act_send_copy"
					      : "regime 2b: the same, consumer spins between bursts",
				    burst_cols, 5);
		for (q = 0; q < NQ; q++) {
			struct bench_pct p;
			double vals[5];

			bench_samples_pct(&burst_all[m][q], &p);
			vals[0] = med[q];
			vals[1] = p.p90;
			vals[2] = p.p99;
			vals[3] = bench_median(burst_send[m][q], rounds);
			vals[4] = bench_spread_pct(burst_per[m][q], rounds);
			bench_row(sec, bench_queue_name((enum act_queue_type)q), vals, tags[q]);
			bench_samples_free(&burst_all[m][q]);
		}
		best = best_of(med, NQ, true);
		snprintf(rule[1 + m], sizeof(rule[1]), "one bursty producer, %s consumer: %s",
			 m == 0 ? "sleeping" : "spinning",
			 bench_queue_name((enum act_queue_type)best));
	}

	/* regime 3: fan-in */
	sec = bench_section(t, "regime 3: fan-in, P producer threads on cpus 0-1, one consumer "
			    "on cpu 1; push = one act_send, ns", fan_cols, 6);
	for (f = 0; f < FAN_CONFIGS; f++) {
		memset(tags, 0, sizeof(tags));
		for (q = 0; q < NQ; q++) {
			struct bench_pct p;

			rate_med[f][q] = bench_median(fan_rate[q][f], rounds) / 1e6;
			bench_samples_pct(&fan_push[q][f], &p);
			p99[f][q] = p.p99;
		}
		mark_best(tags, rate_med[f], NQ, false, "best Mmsg/s");
		mark_best(tags, p99[f], NQ, true, "best p99");
		for (q = 0; q < NQ; q++) {
			struct bench_pct p;
			double vals[6];
			char name[48];

			bench_samples_pct(&fan_push[q][f], &p);
			vals[0] = fan_producers[f];
			vals[1] = p.p50;
			vals[2] = p.p99;
			vals[3] = p.p999;
			vals[4] = rate_med[f][q];
			vals[5] = bench_spread_pct(fan_rate[q][f], rounds);
			snprintf(name, sizeof(name), "%s, %u producers",
				 bench_queue_name((enum act_queue_type)q), fan_producers[f]);
			bench_row(sec, name, vals, tags[q]);
			bench_samples_free(&fan_push[q][f]);
		}
	}
	snprintf(rule[3], sizeof(rule[3]), "fan-in: %s with 2 producers, %s with 4, %s with 8, "
		 "%s with 32 (throughput)",
		 bench_queue_name((enum act_queue_type)best_of(rate_med[0], NQ, false)),
		 bench_queue_name((enum act_queue_type)best_of(rate_med[1], NQ, false)),
		 bench_queue_name((enum act_queue_type)best_of(rate_med[2], NQ, false)),
		 bench_queue_name((enum act_queue_type)best_of(rate_med[3], NQ, false)));
	bench_note(t, "winners in this run: %s; %s; %s; %s", rule[0], rule[1], rule[2], rule[3]);
	bench_note(t, "sharded uses its default 4 lanes; every mailbox holds 1024 messages and "
		   "blocks producers when full (the defaults)");
	bench_note(t, "fan-in push times include waiting for space when the mailbox is full, and "
		   "being preempted by the other producers sharing the 2 cpus");
	bench_table_end(t);
}

/* ------------------------------------------------------------------------ */
/* Table 5: asynchronous throughput                                         */
/* ------------------------------------------------------------------------ */

#define TP_WINDOW 64
#define TP_BATCH 16
#define TP_MALLOC_BYTES 64

/* Only the first @count entries of seq[] are sent. */
struct tp_req {
	void *buf; /* "+ malloc" rows: one buffer per message */
	uint32_t count;
	uint32_t pad;
	uint64_t seq[TP_BATCH];
};

struct tp_ping {
	struct act_actor *pong;
	uint64_t total, sent, done;
	uint32_t per_msg;  /* requests per message: 1 or TP_BATCH */
	uint32_t window;   /* requests in flight */
	bool use_malloc;
	uint64_t first, last, errors;
	sem_t finished;
};

struct tp_pong {
	bool use_malloc;
	uint64_t acc, errors;
};

static void tp_send(struct tp_ping *p)
{
	struct tp_req req;
	uint32_t i, n = p->per_msg;

	if (p->total - p->sent < n)
		n = (uint32_t)(p->total - p->sent);
	for (i = 0; i < n; i++)
		req.seq[i] = p->sent + i;
	req.count = n;
	req.buf = NULL;
	if (p->use_malloc) {
		req.buf = malloc(TP_MALLOC_BYTES);
		if (req.buf == NULL)
			p->errors++;
		else
			*(volatile uint8_t *)req.buf = 1;
	}
	p->sent += n;
	if (act_send_copy(p->pong, Q_DATA, &req,
			  (uint32_t)(offsetof(struct tp_req, seq) + n * sizeof(uint64_t))) != 0)
		p->errors++;
}

static void tp_ping_on_start(struct act_actor *self, void *state, struct act_msg *m)
{
	struct tp_ping *p = state;
	unsigned i;

	(void)self;
	(void)m;
	p->first = bench_tsc();
	for (i = 0; i < p->window / p->per_msg && p->sent < p->total; i++)
		tp_send(p);
}

static void tp_ping_on_reply(struct act_actor *self, void *state, struct act_msg *m)
{
	struct tp_ping *p = state;
	const struct tp_req *r = ACT_PAYLOAD(m, const struct tp_req);

	(void)self;
	free(r->buf);
	p->done += r->count;
	if (p->done == p->total) {
		p->last = bench_tsc();
		sem_post(&p->finished);
		return;
	}
	if (p->sent < p->total)
		tp_send(p);
}

static void tp_pong_on_data(struct act_actor *self, void *state, struct act_msg *m)
{
	struct tp_pong *s = state;
	struct tp_req *r = ACT_PAYLOAD(m, struct tp_req);
	uint32_t i;

	(void)self;
	for (i = 0; i < r->count; i++)
		s->acc = (s->acc ^ r->seq[i]) * 0x9e3779b97f4a7c15ull;
	free(r->buf);
	r->buf = NULL;
	if (s->use_malloc) {
		r->buf = malloc(TP_MALLOC_BYTES);
		if (r->buf == NULL)
			s->errors++;
		else
			*(volatile uint8_t *)r->buf = 1;
	}
	if (act_reply(m, Q_REPLY, r, m->size) != 0)
		s->errors++;
}

static const act_handler_fn tp_ping_handlers[Q_TYPES] = {
	[Q_START] = tp_ping_on_start,
	[Q_REPLY] = tp_ping_on_reply,
};
static const act_handler_fn tp_pong_handlers[Q_TYPES] = {[Q_DATA] = tp_pong_on_data};

struct tp_variant {
	const char *name;
	enum act_queue_type queue;
	bool use_malloc;
	uint32_t per_msg;
	uint32_t window;
};

/* @return round trips per second */
static double tp_run(const struct tp_variant *v, uint32_t spin, uint64_t total)
{
	struct tp_ping ping = {
		.total = total,
		.per_msg = v->per_msg,
		.window = v->window,
		.use_malloc = v->use_malloc,
	};
	struct tp_pong pong = {.use_malloc = v->use_malloc};
	struct act_actor *a_ping, *a_pong;

	if (sem_init(&ping.finished, 0, 0) != 0)
		bench_die(errno, "sem_init", NULL);
	a_pong = q_actor("tp_pong", tp_pong_handlers, &pong, v->queue, 1, spin);
	ping.pong = a_pong;
	a_ping = q_actor("tp_ping", tp_ping_handlers, &ping, v->queue, 0, spin);
	if (act_send_copy(a_ping, Q_START, NULL, 0) != 0)
		bench_die(0, "act_send_copy(start)", NULL);
	sem_wait_intr(&ping.finished);
	/* Both threads joined before either mailbox goes: pong may still be
	 * inside its last act_reply() to ping. */
	act_actor_stop(a_pong);
	act_actor_stop(a_ping);
	act_actor_destroy(a_ping);
	act_actor_destroy(a_pong);
	sem_destroy(&ping.finished);
	if (ping.errors != 0 || pong.errors != 0)
		bench_die(0, "throughput: a send or reply failed", NULL);
	return (double)total / (bench_ns(ping.last - ping.first) * 1e-9);
}

void bench_table5_throughput(void)
{
	static const struct tp_variant variants[] = {
		{"bqueue + malloc (baseline)", ACT_QUEUE_BQUEUE, true, 1, TP_WINDOW},
		{"drain-side batching (batched) + malloc", ACT_QUEUE_BQUEUE_BATCHED, true, 1,
		 TP_WINDOW},
		{"batching + pool (batched, pool only)", ACT_QUEUE_BQUEUE_BATCHED, false, 1,
		 TP_WINDOW},
		{"bqueue + pool (the runtime's default)", ACT_QUEUE_BQUEUE, false, 1, TP_WINDOW},
		{"producer-side batching, 64 requests in flight", ACT_QUEUE_BQUEUE_BATCHED, false,
		 TP_BATCH, TP_WINDOW},
		{"producer-side batching, 64 messages in flight", ACT_QUEUE_BQUEUE_BATCHED, false,
		 TP_BATCH, TP_WINDOW * TP_BATCH},
	};
	enum { NV = sizeof(variants) / sizeof(variants[0]) };
	static const struct bench_col cols[] = {
		{"mrt_per_s", "M RT/s", 3},
		{"ns_per_rt", "ns/RT", 1},
		{"spread_pct", "spread%", 0},
		{"ratio", "vs baseline", 2},
	};
	double rate[2][NV][BENCH_MAX_ROUNDS];
	uint64_t total = bench_iters(150000, 30000);
	unsigned rounds = bench_opts.rounds, r, v, m;
	struct bench_section *sec;
	struct bench_table *t;

	t = bench_table_begin(5, "Async throughput (round trips per second)");
	bench_pin(0);
	for (r = 0; r < rounds; r++)
		for (m = 0; m < 2; m++)
			for (v = 0; v < NV; v++)
				rate[m][v][r] = tp_run(&variants[v], m == 0 ? 0 : BURST_SPIN, total);
	for (m = 0; m < 2; m++) {
		sec = bench_section(t, m == 0 ? "ping (cpu 0) <-> pong (cpu 1), 64 requests in "
						"flight, sleeping consumers (the default); ratio = "
						"rate / baseline rate, paired by round"
					      : "the same with spinning consumers",
				    cols, 4);
		for (v = 0; v < NV; v++) {
			double med = bench_median(rate[m][v], rounds);
			double vals[4] = {med / 1e6, 1e9 / med, bench_spread_pct(rate[m][v], rounds),
					  bench_ratio_median(rate[m][v], rate[m][0], rounds)};

			bench_row(sec, variants[v].name, vals, NULL);
		}
	}
	bench_note(t, "the runtime allocates every message from its pool; '+ malloc' rows add a "
		   "malloc'd %d-byte buffer per message (sender allocates, receiver frees), the "
		   "cost a malloc-backed runtime would pay", TP_MALLOC_BYTES);
	bench_note(t, "producer-side batching: ping packs %d requests into one message and pong "
		   "answers them in one reply; a round trip is one request. With 64 requests in "
		   "flight only 4 messages are, so the consumers sleep between them", TP_BATCH);
	bench_table_end(t);
}
