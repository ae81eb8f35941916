/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Instruction counts of the dispatch arms of table 1, for callgrind, which
 * counts instructions exactly where the timers of a shared VM cannot
 * (hardware counters are not exposed in this guest). Runs one arm N times:
 *
 *   bench_icount ARM N
 *
 * Instructions per operation = (Ir at 2N - Ir at N) / N, which cancels the
 * set-up; tests/perf/RESULTS.md has the loop. The loop, the 8-byte payload
 * store and the handler (the same work as table 1) are in every arm, so
 * arm - direct is what the runtime adds.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "bench.h" /* BENCH_OPAQUE */

struct icount_state {
	uint64_t acc;
	uint64_t count;
};

static struct icount_state icount_state;

BENCH_OPAQUE static void icount_work(struct act_actor *self, void *state, struct act_msg *m)
{
	struct icount_state *s = state;
	uint64_t v = *ACT_PAYLOAD(m, uint64_t);

	(void)self;
	s->acc = (s->acc ^ v) * 0x9e3779b97f4a7c15ull + (v >> 7);
	s->count++;
}

/* The same work, then a 24-byte reply (table 2's payload size). */
BENCH_OPAQUE static void icount_work_reply(struct act_actor *self, void *state,
					   struct act_msg *m)
{
	uint64_t r[3] = {0, 2, 3};

	icount_work(self, state, m);
	r[0] = ((struct icount_state *)state)->acc;
	act_reply(m, 1, r, sizeof(r));
}

static _Alignas(64) _Atomic uint32_t icount_raw_lock;

enum icount_arm {
	IC_DIRECT, IC_PRIVATE, IC_LOCKABLE, IC_RAW_LOCK, IC_SEND_BQUEUE, IC_SEND_LOCKFREE,
	IC_SEND_BQUEUE_INSTR, IC_PRIVATE_RT, IC_LOCKABLE_RT, IC_BIASED, IC_BIASED_RT,
	IC_SEND_CONTROL, IC_ARMS
};

static const char *const icount_names[IC_ARMS] = {
	"direct", "private", "lockable", "raw_lock", "send_bqueue", "send_lockfree",
	"send_bqueue_instr", "private_rt", "lockable_rt", "biased", "biased_rt",
	"send_control",
};

static struct act_group *icount_group(enum act_queue_type q, bool instrument)
{
	struct act_group_opts o = {.name = "icount", .queue = q, .cpu = -1,
				   .instrument = instrument};
	struct act_group *g = act_group_create(&o);

	if (g == NULL || act_group_bind(g) != 0) {
		fprintf(stderr, "bench_icount: group set-up failed\n");
		exit(1);
	}
	return g;
}

/* @lock_bias: a lockable actor whose lock is biased to this thread */
static struct act_actor *icount_actor(struct act_group *g, bool group_private, bool lock_bias)
{
	static const act_handler_fn handlers[2] = {icount_work, icount_work_reply};
	struct act_actor_opts o = {.name = "icount", .handlers = handlers, .handler_count = 2,
				   .state = &icount_state, .group = g,
				   .group_private = group_private, .lock_bias = lock_bias};
	struct act_actor *a = act_actor_create(&o);

	if (a == NULL || act_actor_start(a) != 0) {
		fprintf(stderr, "bench_icount: actor set-up failed\n");
		exit(1);
	}
	return a;
}

static int icount_send(struct act_actor *to, struct act_group *g, uint64_t i)
{
	struct act_msg *m = act_msg_alloc(0, sizeof(uint64_t));

	if (m == NULL)
		return 1;
	*ACT_PAYLOAD(m, uint64_t) = i;
	if (act_send(to, m) != 0) {
		act_msg_free(m);
		return 1;
	}
	return act_group_step(g, 1) != 1;
}

int main(int argc, char **argv)
{
	struct act_group *g, *g_lockfree, *g_instr;
	struct act_actor *priv, *lockable, *biased, *priv_lockfree, *priv_instr;
	enum icount_arm arm = IC_ARMS;
	uint64_t reply[3], i, n, errors = 0;
	unsigned a;

	if (argc != 3) {
		fprintf(stderr, "usage: %s ARM N\narms:", argv[0]);
		for (a = 0; a < IC_ARMS; a++)
			fprintf(stderr, " %s", icount_names[a]);
		fprintf(stderr, "\n");
		return 2;
	}
	for (a = 0; a < IC_ARMS; a++)
		if (strcmp(argv[1], icount_names[a]) == 0)
			arm = (enum icount_arm)a;
	n = strtoull(argv[2], NULL, 10);
	if (arm == IC_ARMS || n == 0) {
		fprintf(stderr, "bench_icount: unknown arm or bad N\n");
		return 2;
	}
	g = icount_group(ACT_QUEUE_BQUEUE, false);
	g_lockfree = icount_group(ACT_QUEUE_LOCKFREE, false);
	g_instr = icount_group(ACT_QUEUE_BQUEUE, true);
	priv = icount_actor(g, true, false);
	lockable = icount_actor(g, false, false);
	biased = icount_actor(g, false, true);
	priv_lockfree = icount_actor(g_lockfree, true, false);
	priv_instr = icount_actor(g_instr, true, false);

	ACT_STACK_MSG(req, uint64_t);
	act_msg_init(&req.hdr, 0, sizeof(uint64_t));
	for (i = 0; i < n; i++) {
		req.body = i;
		switch (arm) {
		case IC_DIRECT:
			icount_work(NULL, &icount_state, &req.hdr);
			break;
		case IC_PRIVATE:
			errors += act_fast_send(priv, &req.hdr, NULL, 0) != 0;
			break;
		case IC_LOCKABLE:
			errors += act_fast_send(lockable, &req.hdr, NULL, 0) != 0;
			break;
		case IC_RAW_LOCK: {
			uint32_t expected = 0;

			atomic_compare_exchange_strong(&icount_raw_lock, &expected, 1);
			icount_work(NULL, &icount_state, &req.hdr);
			atomic_exchange_explicit(&icount_raw_lock, 0, memory_order_release);
			break;
		}
		case IC_SEND_BQUEUE:
			errors += icount_send(priv, g, i);
			break;
		case IC_SEND_LOCKFREE:
			errors += icount_send(priv_lockfree, g_lockfree, i);
			break;
		case IC_SEND_BQUEUE_INSTR:
			errors += icount_send(priv_instr, g_instr, i);
			break;
		case IC_SEND_CONTROL:   /* act_send_control(), then the step that runs it */
			errors += act_send_control(priv, 0, &i, sizeof(i)) != 0 ||
				  act_group_step(g, 1) != 1;
			break;
		case IC_PRIVATE_RT:
			req.hdr.type = 1;
			errors += act_fast_send(priv, &req.hdr, reply, sizeof(reply)) != 24;
			break;
		case IC_LOCKABLE_RT:
			req.hdr.type = 1;
			errors += act_fast_send(lockable, &req.hdr, reply, sizeof(reply)) != 24;
			break;
		case IC_BIASED:
			errors += act_fast_send(biased, &req.hdr, NULL, 0) != 0;
			break;
		case IC_BIASED_RT:
			req.hdr.type = 1;
			errors += act_fast_send(biased, &req.hdr, reply, sizeof(reply)) != 24;
			break;
		default:
			break;
		}
	}
	if (errors != 0) {
		fprintf(stderr, "bench_icount: %llu failed operations\n",
			(unsigned long long)errors);
		return 1;
	}
	printf("%s: %llu operations, %llu handler runs\n", icount_names[arm],
	       (unsigned long long)n, (unsigned long long)icount_state.count);
	return 0;
}
