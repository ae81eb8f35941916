/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * tickwire-demo: the actor runtime in one file, written to be copied.
 *
 * Two actors, "ping" and "pong", play three ways and the program prints the
 * round-trip time of each:
 *   1. fast_send: ping's thread runs pong's handler and gets the reply back
 *      as a value (no queue, no context switch);
 *   2. grouped: ping and pong share one group, one thread, one mailbox; the
 *      request and the reply are both queued (send + reply);
 *   3. cross-thread: ping and pong each have their own mailbox and thread.
 *
 * Usage: tickwire-demo [--rounds N] [--queue bqueue|batched|sharded|lockfree]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"

/* 1. Message types: small integers that index each actor's handler table. */
enum demo_type {
	MSG_PING,  /* payload: struct ping */
	MSG_PONG,  /* payload: struct ping (the reply) */
	MSG_START, /* payload: none; tells ping to start a round */
	MSG_COUNT,
};

struct ping {
	uint64_t seq;
	uint64_t t0_ns; /* when the round started */
};

/* 2. Actor state: private to the actor, only its handlers touch it. */
struct pinger {
	struct act_actor *peer;
	uint64_t rounds, done;
	uint64_t *rt_ns; /* one sample per round */
	_Atomic int finished;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* 3. Handlers: one message at a time, under the actor's lock. */

/* pong: answer every ping with the same payload. act_reply() routes the
 * answer: into the caller's return buffer for fast_send, or as a MSG_PONG
 * message on the sender's mailbox for send. pong cannot tell which. */
static void pong_on_ping(struct act_actor *self, void *state, struct act_msg *m)
{
	(void)self;
	(void)state;
	act_reply(m, MSG_PONG, m->payload, sizeof(struct ping));
}

/* ping: start a round by sending (asynchronously) to the peer. */
static void ping_on_start(struct act_actor *self, void *state, struct act_msg *m)
{
	struct pinger *p = state;
	struct ping req = {.seq = p->done, .t0_ns = now_ns()};

	(void)m;
	(void)self;
	if (act_send_copy(p->peer, MSG_PING, &req, sizeof(req)) != 0)
		atomic_store(&p->finished, -1);
}

/* ping: the reply came back through the mailbox; record and go again. */
static void ping_on_pong(struct act_actor *self, void *state, struct act_msg *m)
{
	struct pinger *p = state;
	const struct ping *r = ACT_PAYLOAD(m, struct ping);

	p->rt_ns[p->done++] = now_ns() - r->t0_ns;
	if (p->done == p->rounds) {
		atomic_store(&p->finished, 1);
		return;
	}
	ping_on_start(self, state, m);
}

static const act_handler_fn pong_handlers[MSG_COUNT] = {[MSG_PING] = pong_on_ping};
static const act_handler_fn ping_handlers[MSG_COUNT] = {
	[MSG_PONG] = ping_on_pong,
	[MSG_START] = ping_on_start,
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *ns, uint64_t n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	printf("%-34s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10" PRIu64 "\n", what,
	       n, ns[n / 2], ns[n * 99 / 100], ns[n * 999 / 1000], ns[n - 1]);
}

static struct act_actor *make(const char *name, const act_handler_fn *h, void *state,
			      struct act_group *g, const struct act_group_opts *own)
{
	struct act_actor_opts o = {
		.name = name,
		.handlers = h,
		.handler_count = MSG_COUNT,
		.state = state,
		.group = g,
		.mailbox = own,
	};
	struct act_actor *a = act_actor_create(&o);

	if (a == NULL || act_actor_start(a) != 0) {
		fprintf(stderr, "tickwire-demo: cannot create actor %s: %s\n", name,
			strerror(errno));
		exit(1);
	}
	return a;
}

/* 4. fast_send: the reply is a value on the caller's stack. */
static int run_fast_send(uint64_t rounds, uint64_t *rt)
{
	struct act_group *g = act_group_create(&(struct act_group_opts){.name = "fs", .cpu = -1});
	struct act_actor *pong = make("pong", pong_handlers, NULL, g, NULL);
	uint64_t i;

	for (i = 0; i < rounds; i++) {
		struct ping back;
		uint64_t t0 = now_ns();
		int rc;

		ACT_STACK_MSG(req, struct ping); /* a request on the stack */
		act_msg_init(&req.hdr, MSG_PING, sizeof(struct ping));
		req.body.seq = i;
		rc = act_fast_send(pong, &req.hdr, &back, sizeof(back));
		rt[i] = now_ns() - t0;
		if (rc != (int)sizeof(back) || back.seq != i) {
			fprintf(stderr, "tickwire-demo: fast_send: %s\n", strerror(-rc));
			return -1;
		}
	}
	act_actor_stop(pong);
	act_actor_destroy(pong);
	act_group_destroy(g);
	return 0;
}

/* 5. A group: both actors on one thread behind one mailbox. */
static int run_grouped(uint64_t rounds, uint64_t *rt, enum act_queue_type q)
{
	struct act_group_opts go = {.name = "grouped", .queue = q, .cpu = -1};
	struct act_group *g = act_group_create(&go);
	struct pinger p = {.rounds = rounds, .rt_ns = rt};
	struct act_actor *pong, *ping;

	if (g == NULL)
		return -1;
	pong = make("pong", pong_handlers, NULL, g, NULL);
	p.peer = pong;
	ping = make("ping", ping_handlers, &p, g, NULL);
	if (act_send_copy(ping, MSG_START, NULL, 0) != 0)
		return -1;
	/* Caller-driven: this thread is the group's thread (as on a DPDK lcore). */
	while (atomic_load(&p.finished) == 0)
		act_group_step(g, 0);
	act_actor_stop(ping);
	act_actor_stop(pong);
	act_actor_destroy(ping);
	act_actor_destroy(pong);
	act_group_destroy(g);
	return atomic_load(&p.finished) == 1 ? 0 : -1;
}

/* 6. Two threads: each actor has its own mailbox and thread. */
static int run_cross_thread(uint64_t rounds, uint64_t *rt, enum act_queue_type q, uint32_t spin)
{
	struct act_group_opts own = {.queue = q, .spin = spin, .cpu = -1};
	struct pinger p = {.rounds = rounds, .rt_ns = rt};
	struct act_actor *pong = make("pong", pong_handlers, NULL, NULL, &own);
	struct act_actor *ping;
	struct timespec pause = {0, 1000000};

	p.peer = pong;
	ping = make("ping", ping_handlers, &p, NULL, &own);
	if (act_send_copy(ping, MSG_START, NULL, 0) != 0)
		return -1;
	while (atomic_load(&p.finished) == 0)
		nanosleep(&pause, NULL);
	act_actor_stop(ping);
	act_actor_stop(pong);
	act_actor_destroy(ping);
	act_actor_destroy(pong);
	return atomic_load(&p.finished) == 1 ? 0 : -1;
}

static int parse_queue(const char *s, enum act_queue_type *q)
{
	static const char *const names[] = {"bqueue", "batched", "sharded", "lockfree"};
	unsigned i;

	for (i = 0; i < 4; i++) {
		if (strcmp(s, names[i]) == 0) {
			*q = (enum act_queue_type)i;
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"rounds", required_argument, NULL, 'n'},
		{"queue", required_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	enum act_queue_type q = ACT_QUEUE_BQUEUE;
	uint64_t rounds = 100000;
	uint64_t *rt;
	int c;

	while ((c = getopt_long(argc, argv, "n:q:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			rounds = strtoull(optarg, NULL, 10);
			if (rounds < 10 || rounds > 100000000) {
				fprintf(stderr, "tickwire-demo: --rounds %s: want 10..1e8\n", optarg);
				return 2;
			}
			break;
		case 'q':
			if (parse_queue(optarg, &q) != 0) {
				fprintf(stderr, "tickwire-demo: --queue %s: want bqueue, batched, "
						"sharded or lockfree\n", optarg);
				return 2;
			}
			break;
		default:
			printf("usage: tickwire-demo [--rounds N] [--queue bqueue|batched|sharded|"
			       "lockfree]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	rt = calloc(rounds, sizeof(*rt));
	if (rt == NULL) {
		fprintf(stderr, "tickwire-demo: out of memory for %" PRIu64 " samples\n", rounds);
		return 1;
	}
	printf("tickwire-demo: ping/pong round trips, %" PRIu64 " rounds each, ns "
	       "(clock_gettime per sample, ~20 ns overhead)\n", rounds);
	printf("%-34s %10s %8s %8s %8s %10s\n", "mode", "rounds", "p50", "p99", "p99.9", "max");
	if (run_fast_send(rounds, rt) != 0)
		return 1;
	report("fast_send (same thread)", rt, rounds);
	if (run_grouped(rounds, rt, q) != 0)
		return 1;
	report("grouped send+reply (one thread)", rt, rounds);
	if (run_cross_thread(rounds / 10, rt, q, 0) != 0)
		return 1;
	report("cross-thread, sleeping consumers", rt, rounds / 10);
	if (run_cross_thread(rounds / 10, rt, q, 100000) != 0)
		return 1;
	report("cross-thread, spinning consumers", rt, rounds / 10);
	free(rt);
	return 0;
}
