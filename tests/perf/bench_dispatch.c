/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Table 1: dispatch without reply, identical work in every arm.
 *
 * The work is one handler, disp_work0(), with the act_handler_fn signature:
 * the direct-call arm calls it by name, the pointer arms through a table,
 * and the runtime arms run it as an actor's handler. So every arm but EMPTY
 * and RDTSC executes the very same instructions for the work, and the
 * difference between two arms is the cost of getting there. The handler is
 * BENCH_OPAQUE (noipa): the compiler can neither inline it nor learn from
 * its body, and its effect on the state is checked at the end, so no arm's
 * work can be removed. disp_work1..7 are identical copies at other
 * addresses, the targets of the unpredictable pointer arm.
 *
 * Each arm loop is written once (disp_op) and specialised per arm by an
 * always-inline expansion with a constant arm, so the loops carry no
 * dispatch of their own.
 *
 * The declared-edge arms (act_fast_send_edge, issue 15) must call from a
 * handler: their loop runs inside the handler of a group-private driver
 * actor, entered once per pass by one act_fast_send whose cost is outside
 * the timed loop; the driver has declared edges to the two targets.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

enum { DISP_WORK, DISP_DRIVE, DISP_TYPES };

/* 64 Ki target indices: a random pattern no predictor can learn. */
#define DISP_INDEX_COUNT (1u << 16)
#define DISP_INDEX_MASK (DISP_INDEX_COUNT - 1)
#define DISP_RAW_WAITERS 0x80000000u

struct disp_state {
	uint64_t acc;
	uint64_t count;
};

struct disp_ctx {
	act_handler_fn table[8];
	uint8_t *same_index;   /* all 0 */
	uint8_t *random_index; /* 0..7 */
	struct act_group *group;          /* bound to the main thread, bqueue */
	struct act_group *group_lockfree; /* bound to the main thread, lockfree */
	struct act_group *group_instr;    /* bound, bqueue, instrumentation on */
	struct act_actor *private_actor;
	struct act_actor *lockable_actor;
	struct act_actor *biased_actor;
	struct act_actor *private_lockfree;
	struct act_actor *private_instr;
	/* declared edges: the driver (group-private) -> the two targets */
	struct act_group *group_edge;
	struct act_actor *edge_driver;
	struct act_actor *edge_private;
	struct act_actor *edge_biased;
	uint64_t errors;
	/* The raw baseline's lock word, alone on its line like an actor's. */
	_Alignas(64) _Atomic uint32_t raw_lock;
};

static struct disp_state disp_state;
/* Like the runtime's thread id: the raw baseline stores it in the lock word. */
static __thread uint32_t disp_thread_id = 1;

static const char *const arm_names[BENCH_ARM_COUNT_] = {
	[BENCH_ARM_EMPTY] = "empty loop",
	[BENCH_ARM_DIRECT] = "direct call (non-inlined)",
	[BENCH_ARM_FNPTR] = "function pointer, predicted",
	[BENCH_ARM_FNPTR_RANDOM] = "function pointer, random of 8",
	[BENCH_ARM_FAST_PRIVATE] = "fast_send, group-private actor",
	[BENCH_ARM_FAST_LOCKABLE] = "fast_send, lockable actor",
	[BENCH_ARM_FAST_BIASED] = "fast_send, lockable actor, lock_bias",
	[BENCH_ARM_EDGE_PRIVATE] = "fast_send along a declared edge, group-private",
	[BENCH_ARM_EDGE_BIASED] = "fast_send along a declared edge, lockable (lock_bias)",
	[BENCH_ARM_SEND_BQUEUE] = "send + dispatch, group mailbox (bqueue)",
	[BENCH_ARM_SEND_LOCKFREE] = "send + dispatch, group mailbox (lockfree)",
	[BENCH_ARM_SEND_BQUEUE_INSTR] = "send + dispatch, bqueue, instrumented",
	[BENCH_ARM_RAW_LOCK_XCHG] = "raw CAS lock + call + xchg release",
	[BENCH_ARM_RAW_LOCK_STORE] = "raw CAS lock + call + store release",
	[BENCH_ARM_RDTSC] = "one rdtsc (no work)",
};

const char *bench_arm_name(enum bench_arm arm)
{
	return (unsigned)arm < BENCH_ARM_COUNT_ ? arm_names[arm] : "?";
}

/* The work: a few integer operations on the state. */
BENCH_INLINE void disp_body(void *state, const struct act_msg *m)
{
	struct disp_state *s = state;
	uint64_t v = *ACT_PAYLOAD(m, const uint64_t);

	s->acc = (s->acc ^ v) * 0x9e3779b97f4a7c15ull + (v >> 7);
	s->count++;
}

#define DISP_WORK_FN(n)                                                              \
	BENCH_OPAQUE static void disp_work##n(struct act_actor *self, void *state,   \
					      struct act_msg *m)                     \
	{                                                                            \
		(void)self;                                                          \
		disp_body(state, m);                                                 \
	}
DISP_WORK_FN(0)
DISP_WORK_FN(1)
DISP_WORK_FN(2)
DISP_WORK_FN(3)
DISP_WORK_FN(4)
DISP_WORK_FN(5)
DISP_WORK_FN(6)
DISP_WORK_FN(7)

static struct disp_ctx disp_ctx;

static uint64_t disp_edge_loops(struct disp_ctx *c, enum bench_arm arm, uint64_t n,
				struct bench_samples *s);

/* What the driver's handler is asked to run (an edge arm's pass). */
struct disp_drive_req {
	enum bench_arm arm;
	uint64_t n;
	struct bench_samples *samples;
};

/* The driver: runs the pass inside its handler, replies the ticks. */
static void disp_drive(struct act_actor *self, void *state, struct act_msg *m)
{
	const struct disp_drive_req *r = ACT_PAYLOAD(m, const struct disp_drive_req);
	uint64_t ticks = disp_edge_loops(&disp_ctx, r->arm, r->n, r->samples);

	(void)self;
	(void)state;
	if (act_reply_sync(m, DISP_DRIVE, &ticks, sizeof(ticks)) != 0)
		disp_ctx.errors++;
}

static struct act_actor *make_actor(const char *name, struct act_group *g, bool private_actor)
{
	static const act_handler_fn handlers[DISP_TYPES] = {[DISP_WORK] = disp_work0};

	return bench_actor(name, handlers, DISP_TYPES, &disp_state, g, NULL, private_actor);
}

/* The edge group: edges are declared before it is bound (act_group_edge()). */
static void disp_setup_edges(struct disp_ctx *c)
{
	static const act_handler_fn work[DISP_TYPES] = {[DISP_WORK] = disp_work0};
	static const act_handler_fn drive[DISP_TYPES] = {[DISP_DRIVE] = disp_drive};
	struct act_group_opts o = {.name = "disp_edge", .queue = ACT_QUEUE_BQUEUE, .cpu = -1};
	int rc;

	c->group_edge = act_group_create(&o);
	if (c->group_edge == NULL)
		bench_die(errno, "act_group_create", NULL);
	c->edge_driver = bench_actor("driver", drive, DISP_TYPES, NULL, c->group_edge, NULL, true);
	c->edge_private = bench_actor("edge_private", work, DISP_TYPES, &disp_state, c->group_edge,
				      NULL, true);
	c->edge_biased = bench_actor_biased("edge_biased", work, DISP_TYPES, &disp_state,
					    c->group_edge);
	rc = act_group_edge(c->group_edge, c->edge_driver, c->edge_private);
	if (rc == 0)
		rc = act_group_edge(c->group_edge, c->edge_driver, c->edge_biased);
	if (rc == 0)
		rc = act_group_bind(c->group_edge);
	if (rc != 0)
		bench_die(-rc, "act_group_edge / act_group_bind",
			  "run the unit tests (actor_edge)");
}

static void disp_setup(struct disp_ctx *c)
{
	static const act_handler_fn copies[8] = {
		disp_work0, disp_work1, disp_work2, disp_work3,
		disp_work4, disp_work5, disp_work6, disp_work7,
	};
	uint64_t x = 0x2545f4914f6cdd1dull;
	unsigned i, j;

	if (c->group != NULL)
		return;
	memcpy(c->table, copies, sizeof(copies));
	for (i = 0; i < 8; i++)
		for (j = 0; j < i; j++)
			if (c->table[i] == c->table[j])
				fprintf(stderr, "bench_actor: warning: the compiler merged two "
					"handler copies; the random-pointer arm has fewer targets\n");
	c->same_index = bench_alloc(DISP_INDEX_COUNT);
	c->random_index = bench_alloc(DISP_INDEX_COUNT);
	for (i = 0; i < DISP_INDEX_COUNT; i++) {
		x ^= x << 13; /* xorshift64 */
		x ^= x >> 7;
		x ^= x << 17;
		c->random_index[i] = (uint8_t)(x >> 61);
	}
	c->group = bench_bound_group("disp", ACT_QUEUE_BQUEUE);
	c->group_lockfree = bench_bound_group("disp_lf", ACT_QUEUE_LOCKFREE);
	c->private_actor = make_actor("private", c->group, true);
	c->lockable_actor = make_actor("lockable", c->group, false);
	{
		static const act_handler_fn handlers[DISP_TYPES] = {[DISP_WORK] = disp_work0};

		c->biased_actor = bench_actor_biased("biased", handlers, DISP_TYPES, &disp_state,
						     c->group);
	}
	c->private_lockfree = make_actor("private_lf", c->group_lockfree, true);
	c->group_instr = bench_bound_group("disp_instr", ACT_QUEUE_BQUEUE);
	act_group_set_instrument(c->group_instr, true);
	c->private_instr = make_actor("private_instr", c->group_instr, true);
	disp_setup_edges(c);
}

/* Mailbox arm: what a same-thread asynchronous delivery costs. */
BENCH_INLINE void disp_send(struct disp_ctx *c, struct act_actor *to, struct act_group *g,
			    uint64_t i)
{
	struct act_msg *a = act_msg_alloc(DISP_WORK, sizeof(uint64_t));

	if (a == NULL) {
		c->errors++;
		return;
	}
	*ACT_PAYLOAD(a, uint64_t) = i;
	if (act_send(to, a) != 0) {
		act_msg_free(a);
		c->errors++;
	}
	if (act_group_step(g, 1) != 1)
		c->errors++;
}

BENCH_INLINE void disp_raw_lock(struct disp_ctx *c, struct act_msg *m, bool store_release)
{
	uint32_t expected = 0;

	/* seq_cst CAS and exchange: what act_fast_send's lock_try/release do */
	if (!atomic_compare_exchange_strong_explicit(&c->raw_lock, &expected, disp_thread_id,
						     memory_order_seq_cst, memory_order_relaxed))
		c->errors++;
	c->table[c->same_index[0]](NULL, &disp_state, m);
	if (store_release)
		atomic_store_explicit(&c->raw_lock, 0, memory_order_release);
	else if (atomic_exchange_explicit(&c->raw_lock, 0, memory_order_release) &
		 DISP_RAW_WAITERS)
		c->errors++; /* a real lock would wake a waiter here */
}

BENCH_INLINE void disp_op(struct disp_ctx *c, enum bench_arm arm, struct act_msg *m, uint64_t i)
{
	*ACT_PAYLOAD(m, uint64_t) = i;
	switch (arm) {
	case BENCH_ARM_EMPTY:
		bench_clobber();
		break;
	case BENCH_ARM_DIRECT:
		disp_work0(NULL, &disp_state, m);
		break;
	case BENCH_ARM_FNPTR:
		c->table[c->same_index[i & DISP_INDEX_MASK]](NULL, &disp_state, m);
		break;
	case BENCH_ARM_FNPTR_RANDOM:
		c->table[c->random_index[i & DISP_INDEX_MASK]](NULL, &disp_state, m);
		break;
	case BENCH_ARM_FAST_PRIVATE:
		c->errors += act_fast_send(c->private_actor, m, NULL, 0) != 0;
		break;
	case BENCH_ARM_FAST_LOCKABLE:
		c->errors += act_fast_send(c->lockable_actor, m, NULL, 0) != 0;
		break;
	case BENCH_ARM_FAST_BIASED:
		c->errors += act_fast_send(c->biased_actor, m, NULL, 0) != 0;
		break;
	case BENCH_ARM_EDGE_PRIVATE:
		c->errors += act_fast_send_edge(c->edge_private, m, NULL, 0) != 0;
		break;
	case BENCH_ARM_EDGE_BIASED:
		c->errors += act_fast_send_edge(c->edge_biased, m, NULL, 0) != 0;
		break;
	case BENCH_ARM_SEND_BQUEUE:
		disp_send(c, c->private_actor, c->group, i);
		break;
	case BENCH_ARM_SEND_LOCKFREE:
		disp_send(c, c->private_lockfree, c->group_lockfree, i);
		break;
	case BENCH_ARM_SEND_BQUEUE_INSTR:
		disp_send(c, c->private_instr, c->group_instr, i);
		break;
	case BENCH_ARM_RAW_LOCK_XCHG:
		disp_raw_lock(c, m, false);
		break;
	case BENCH_ARM_RAW_LOCK_STORE:
		disp_raw_lock(c, m, true);
		break;
	case BENCH_ARM_RDTSC:
		bench_keep(bench_tsc());
		break;
	default:
		break;
	}
}

/* Specialised per arm by the callers' constant @arm. */
BENCH_INLINE uint64_t disp_loop(struct disp_ctx *c, enum bench_arm arm, uint64_t n,
				struct bench_samples *s)
{
	ACT_STACK_MSG(req, uint64_t);
	uint64_t i, t0;

	act_msg_init(&req.hdr, DISP_WORK, sizeof(uint64_t));
	if (s != NULL) {
		for (i = 0; i < n; i++) {
			t0 = bench_tsc_begin();
			disp_op(c, arm, &req.hdr, i);
			bench_samples_add(s, bench_tsc_end() - t0);
		}
		return 0;
	}
	t0 = bench_tsc_begin();
	for (i = 0; i < n; i++)
		disp_op(c, arm, &req.hdr, i);
	return bench_tsc_end() - t0;
}

#define DISP_CASE(a)                                                                 \
	case a:                                                                      \
		return disp_loop(c, a, n, s)

/* An edge arm's pass: inside the driver's handler (disp_drive()). */
static __attribute__((noinline)) uint64_t disp_edge_loops(struct disp_ctx *c, enum bench_arm arm,
							  uint64_t n, struct bench_samples *s)
{
	switch (arm) {
		DISP_CASE(BENCH_ARM_EDGE_PRIVATE);
		DISP_CASE(BENCH_ARM_EDGE_BIASED);
	default:
		return 0;
	}
}

static uint64_t disp_edge_run(struct disp_ctx *c, enum bench_arm arm, uint64_t n,
			      struct bench_samples *s)
{
	uint64_t ticks = 0;

	ACT_STACK_MSG(req, struct disp_drive_req);
	act_msg_init(&req.hdr, DISP_DRIVE, sizeof(req.body));
	req.body = (struct disp_drive_req){.arm = arm, .n = n, .samples = s};
	if (act_fast_send(c->edge_driver, &req.hdr, &ticks, sizeof(ticks)) != sizeof(ticks))
		c->errors++;
	return ticks;
}

static __attribute__((noinline)) uint64_t disp_run(struct disp_ctx *c, enum bench_arm arm,
						   uint64_t n, struct bench_samples *s)
{
	switch (arm) {
	case BENCH_ARM_EDGE_PRIVATE:
	case BENCH_ARM_EDGE_BIASED:
		return disp_edge_run(c, arm, n, s);
		DISP_CASE(BENCH_ARM_EMPTY);
		DISP_CASE(BENCH_ARM_DIRECT);
		DISP_CASE(BENCH_ARM_FNPTR);
		DISP_CASE(BENCH_ARM_FNPTR_RANDOM);
		DISP_CASE(BENCH_ARM_FAST_PRIVATE);
		DISP_CASE(BENCH_ARM_FAST_LOCKABLE);
		DISP_CASE(BENCH_ARM_FAST_BIASED);
		DISP_CASE(BENCH_ARM_SEND_BQUEUE);
		DISP_CASE(BENCH_ARM_SEND_LOCKFREE);
		DISP_CASE(BENCH_ARM_SEND_BQUEUE_INSTR);
		DISP_CASE(BENCH_ARM_RAW_LOCK_XCHG);
		DISP_CASE(BENCH_ARM_RAW_LOCK_STORE);
		DISP_CASE(BENCH_ARM_RDTSC);
	default:
		return 0;
	}
}

/* Operations that fill @p pass_ns, from a timed warm-up pass. */
static uint64_t calibrate_ops(struct disp_ctx *c, enum bench_arm arm, double pass_ns)
{
	uint64_t n = 4096;
	double per_op;

	for (;;) {
		per_op = bench_ns(disp_run(c, arm, n, NULL)) / (double)n;
		if (per_op * (double)n > 2e6 || n >= (1u << 24))
			break;
		n *= 4;
	}
	if (!(per_op > 0.01))
		per_op = 0.01;
	n = (uint64_t)(pass_ns / per_op);
	return n < 1000 ? 1000 : n;
}

void bench_measure_arms(const enum bench_arm *arms, unsigned n, double pass_ms,
			uint64_t samples, struct bench_arm_result *out)
{
	struct disp_ctx *c = &disp_ctx;
	struct bench_samples *s = bench_alloc(n * sizeof(*s));
	uint64_t *ops = bench_alloc(n * sizeof(*ops));
	uint64_t *nsamples = bench_alloc(n * sizeof(*nsamples));
	uint64_t count_before;
	unsigned r, a;

	disp_setup(c);
	bench_pin(0);
	for (a = 0; a < n; a++) {
		memset(&out[a], 0, sizeof(out[a]));
		ops[a] = calibrate_ops(c, arms[a], pass_ms * 1e6);
		/* sampled passes: as many operations, at most @samples per round */
		nsamples[a] = ops[a] < samples ? ops[a] : samples;
		bench_samples_init(&s[a], nsamples[a] * bench_opts.rounds);
	}
	count_before = disp_state.count;
	for (r = 0; r < bench_opts.rounds && r < BENCH_MAX_ROUNDS; r++) {
		for (a = 0; a < n; a++) {
			uint64_t ticks = disp_run(c, arms[a], ops[a], NULL);

			out[a].round_ns[r] = bench_ns(ticks) / (double)ops[a];
			out[a].rounds = r + 1;
			disp_run(c, arms[a], nsamples[a], &s[a]);
		}
	}
	for (a = 0; a < n; a++) {
		bench_samples_pct(&s[a], &out[a].pct);
		out[a].amort_ns = bench_median(out[a].round_ns, out[a].rounds);
		out[a].spread_pct = bench_spread_pct(out[a].round_ns, out[a].rounds);
		bench_samples_free(&s[a]);
	}
	free(s);
	free(ops);
	free(nsamples);
	if (c->errors != 0 || disp_state.count == count_before)
		bench_die(0, "dispatch arms: a delivery failed or no work ran",
			  "a runtime call returned an error; run the unit tests");
}

double bench_paired_ratio(const struct bench_arm_result *a, const struct bench_arm_result *b)
{
	unsigned n = a->rounds < b->rounds ? a->rounds : b->rounds;

	return bench_ratio_median(a->round_ns, b->round_ns, n);
}

void bench_table1_dispatch(void)
{
	static const enum bench_arm arms[] = {
		BENCH_ARM_EMPTY,
		BENCH_ARM_DIRECT,
		BENCH_ARM_FNPTR,
		BENCH_ARM_FNPTR_RANDOM,
		BENCH_ARM_FAST_PRIVATE,
		BENCH_ARM_FAST_LOCKABLE,
		BENCH_ARM_FAST_BIASED,
		BENCH_ARM_EDGE_PRIVATE,
		BENCH_ARM_EDGE_BIASED,
		BENCH_ARM_SEND_BQUEUE,
		BENCH_ARM_SEND_LOCKFREE,
		BENCH_ARM_SEND_BQUEUE_INSTR,
		BENCH_ARM_RAW_LOCK_XCHG,
		BENCH_ARM_RDTSC,
	};
	enum { N = sizeof(arms) / sizeof(arms[0]) };
	struct bench_arm_result res[N];
	struct bench_table *t;
	struct bench_section *sec;
	double r_private, r_lockable, r_biased, r_edge_private, r_edge_biased;
	unsigned a;

	t = bench_table_begin(1, "Dispatch, no reply, identical work in every arm");
	bench_measure_arms(arms, N, bench_opts.quick ? 10.0 : 40.0, bench_iters(200000, 30000), res);

	sec = bench_section(t, "per operation, ns; ratio = amortized / direct call (paired by round)",
			    bench_latr_cols, BENCH_LATR_NCOLS);
	for (a = 0; a < N; a++) {
		double vals[BENCH_LATR_NCOLS];

		bench_lat_vals(vals, &res[a].pct, res[a].amort_ns, res[a].spread_pct);
		vals[8] = bench_paired_ratio(&res[a], &res[1]);
		bench_row(sec, bench_arm_name(arms[a]), vals,
			  arms[a] == BENCH_ARM_RAW_LOCK_XCHG || arms[a] == BENCH_ARM_RDTSC
				  ? "(reference)" : NULL);
	}
	r_private = bench_paired_ratio(&res[4], &res[1]);
	r_lockable = bench_paired_ratio(&res[5], &res[1]);
	r_biased = bench_paired_ratio(&res[6], &res[1]);
	r_edge_private = bench_paired_ratio(&res[7], &res[1]);
	r_edge_biased = bench_paired_ratio(&res[8], &res[1]);
	bench_target(t, "fast_send to a group-private actor / direct call", r_private, 1.5, false);
	bench_target(t, "fast_send to a lockable actor / direct call", r_lockable, 2.0, false);
	bench_target(t, "fast_send to a lockable actor with lock_bias / direct call", r_biased,
		     2.0, false);
	bench_target(t, "issue 15: fast_send along a declared edge, group-private / direct call",
		     r_edge_private, 1.5, false);
	bench_target(t, "issue 15: fast_send along a declared edge, lockable (lock_bias) / "
		     "direct call", r_edge_biased, 1.5, false);
	bench_target(t, "issue 15: fast_send to a lockable actor (dynamic checks) / direct call",
		     r_lockable, 3.0, false);
	bench_note(t, "the seed's fast_send measured 5-10x a direct call on this machine");
	bench_note(t, "lock_bias: the lock is biased to this thread (act_actor_opts.lock_bias): "
		   "no atomic read-modify-write while no other thread delivers to the actor");
	bench_note(t, "work in every arm but 'empty' and 'rdtsc': the handler itself, "
		   "%u-byte payload, xor-multiply-add and a counter on the state", 8u);
	bench_note(t, "send + dispatch = act_msg_alloc + act_send + act_group_step(g, 1) to a "
		   "group-private actor on the group's own thread");
	bench_note(t, "declared edge (act_fast_send_edge, inline in the caller): called from "
		   "a handler of a group-private driver with edges to both targets, which "
		   "runs the timed loop");
	bench_note(t, "send + dispatch, instrumented / not (bqueue, paired by round): %.2f",
		   bench_paired_ratio(&res[11], &res[9]));
	bench_note(t, "instrumented: the group's per-send instrumentation on "
		   "(act_group_set_instrument: qdepth, mailbox_was_empty, enqueue_tsc, "
		   "max_depth); off by default, so the other mailbox rows do not pay it");
	bench_note(t, "reference rows: a bare CAS lock + indirect call + exchange release (the "
		   "floor of any lockable dispatch), and one rdtsc, which an instrumented "
		   "act_send pays for enqueue_tsc");
	bench_note(t, "per-sample columns include ~%.0f ns of timer overhead and a %.0f ns "
		   "step; compare the amortized column", bench_clock.pair_ns,
		   bench_clock.step_ns);
	bench_table_end(t);
}
