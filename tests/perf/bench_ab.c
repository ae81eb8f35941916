/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * A/B harness: the tree's lib/actor (act_*) against another revision's
 * (base_act_*), linked into one process, the arms interleaved round by
 * round on one cpu, so both sides see the same machine at the same time
 * (RESULTS.md, "Before / after"). Not built by meson: it needs the other
 * revision's library with its symbols renamed. Recipe (REV = HEAD, say):
 *
 *   mkdir -p /tmp/ab/src && git archive REV lib/actor | tar -x -C /tmp/ab/src
 *   for f in actor group queue pool runtime; do
 *     gcc -O3 -DNDEBUG -std=c11 -D_GNU_SOURCE -fPIC -pthread \
 *         -c /tmp/ab/src/lib/actor/$f.c -o /tmp/ab/$f.o; done
 *   (cd /tmp/ab && ar rcs libbase.a actor.o group.o queue.o pool.o runtime.o)
 *   nm --defined-only -g /tmp/ab/libbase.a | awk 'NF==3 {print $3" base_"$3}' \
 *       | sort -u > /tmp/ab/syms.map
 *   objcopy --redefine-syms=/tmp/ab/syms.map /tmp/ab/libbase.a /tmp/ab/libbase_renamed.a
 *   gcc -O3 -DNDEBUG -std=gnu11 -Ilib/actor -o /tmp/ab/bench_ab tests/perf/bench_ab.c \
 *       /tmp/perf/lib/actor/libtickwire_actor.a /tmp/ab/libbase_renamed.a -lpthread
 *   taskset -c 0 /tmp/ab/bench_ab 1000000 21      # operations per arm, rounds
 *
 * Columns: median ns; median of per-round ratios to the direct call, to the
 * raw lock (CAS + call + exchange release; the store-release arm beside it
 * is the floor of a lock released by a plain store), and of the tree's arm
 * to the base's. The TSC rate is this machine's (2.096 ticks/ns); only the
 * ratios are portable.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "act.h"

#if defined(__clang__)
#define AB_OPAQUE __attribute__((noinline))
#else
#define AB_OPAQUE __attribute__((noipa, noinline))
#endif

#define DECL(ret, name, args) ret base_##name args;
DECL(struct act_group *, act_group_create, (const struct act_group_opts *))
DECL(struct act_actor *, act_actor_create, (const struct act_actor_opts *))
DECL(int, act_actor_start, (struct act_actor *))
DECL(int, act_group_bind, (struct act_group *))
DECL(int, act_group_step, (struct act_group *, uint32_t))
DECL(int, act_fast_send, (struct act_actor *, struct act_msg *, void *, uint32_t))
DECL(int, act_send, (struct act_actor *, struct act_msg *))
DECL(struct act_msg *, act_msg_alloc, (uint32_t, uint32_t))
DECL(int, act_reply, (struct act_msg *, uint32_t, const void *, uint32_t))

struct st {
	uint64_t acc, count;
};
static struct st S;
AB_OPAQUE static void work(struct act_actor *self, void *state, struct act_msg *m)
{
	struct st *s = state;
	uint64_t v = *ACT_PAYLOAD(m, uint64_t);
	(void)self;
	s->acc = (s->acc ^ v) * 0x9e3779b97f4a7c15ull + (v >> 7);
	s->count++;
}
struct r24 {
	uint64_t a, b, c;
};
AB_OPAQUE static void work_reply(struct act_actor *self, void *state, struct act_msg *m)
{
	struct r24 r = {1, 2, 3};
	work(self, state, m);
	r.a = ((struct st *)state)->acc;
	act_reply(m, 1, &r, sizeof(r));
}
AB_OPAQUE static void base_work_reply(struct act_actor *self, void *state, struct act_msg *m)
{
	struct r24 r = {1, 2, 3};
	work(self, state, m);
	r.a = ((struct st *)state)->acc;
	base_act_reply(m, 1, &r, sizeof(r));
}
AB_OPAQUE static void direct_reply(struct st *s, struct act_msg *m, struct r24 *out)
{
	work(NULL, s, m);
	out->a = s->acc;
	out->b = 2;
	out->c = 3;
}
static _Alignas(64) _Atomic uint32_t raw;

/* The floor of a lockable dispatch: CAS, indirect call, release by an
 * exchange or by a plain store (inlined: @store is a constant per arm). */
static inline __attribute__((always_inline)) void raw_lock_call(act_handler_fn fn,
								struct act_msg *m, bool store)
{
	uint32_t e = 0;

	atomic_compare_exchange_strong(&raw, &e, 1);
	fn(NULL, &S, m);
	if (store)
		atomic_store_explicit(&raw, 0, memory_order_release);
	else
		atomic_exchange_explicit(&raw, 0, memory_order_release);
}

enum {
	DIRECT,
	NEW_PRIV,
	BASE_PRIV,
	NEW_LOCK,
	BASE_LOCK,
	RAW,
	RAW_STORE,
	NEW_SEND,
	BASE_SEND,
	DIRECT_RT,
	NEW_PRIV_RT,
	BASE_PRIV_RT,
	NEW_LOCK_RT,
	BASE_LOCK_RT,
	NARMS
};
static const char *names[NARMS] = {"direct call",
				   "NEW fast_send private",
				   "BASE fast_send private",
				   "NEW fast_send lockable (store release)",
				   "BASE fast_send lockable",
				   "raw CAS+call+xchg",
				   "raw CAS+call+store",
				   "NEW send+step bqueue",
				   "BASE send+step bqueue",
				   "direct call + 24B reply",
				   "NEW private RT 24B",
				   "BASE private RT 24B",
				   "NEW lockable RT 24B (store release)",
				   "BASE lockable RT 24B"};

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 15;
	static const act_handler_fn h[2] = {work, work_reply};
	static const act_handler_fn hb[2] = {work, base_work_reply};
	struct act_group_opts go = {.name = "g", .queue = ACT_QUEUE_BQUEUE, .cpu = -1};
	struct act_group *g = act_group_create(&go), *bg = base_act_group_create(&go);
	struct act_actor_opts o = {.name = "p",
				   .handlers = h,
				   .handler_count = 2,
				   .state = &S,
				   .group = g,
				   .group_private = true};
	struct act_actor *np = act_actor_create(&o);
	o.group_private = false;
	o.lock_release_store = true;   /* the tree's opt-in store release */
	struct act_actor *nl = act_actor_create(&o);
	o.lock_release_store = false;
	o.handlers = hb;
	o.group = bg;
	o.group_private = true;
	struct act_actor *bp = base_act_actor_create(&o);
	o.group_private = false;
	struct act_actor *bl = base_act_actor_create(&o);
	act_actor_start(np);
	act_actor_start(nl);
	base_act_actor_start(bp);
	base_act_actor_start(bl);
	act_group_bind(g);
	base_act_group_bind(bg);
	ACT_STACK_MSG(req, uint64_t);
	act_msg_init(&req.hdr, 0, 8);
	struct r24 rep;
	double(*ns)[64] = calloc(NARMS, sizeof(*ns));
	long err = 0, i;
	for (int r = 0; r < rounds && r < 64; r++)
		for (int a = 0; a < NARMS; a++) {
			long cnt = (a == NEW_SEND || a == BASE_SEND) ? n / 8 : n;
			uint64_t t0 = __builtin_ia32_rdtsc();
			for (i = 0; i < cnt; i++) {
				req.body = (uint64_t)i;
				switch (a) {
				case DIRECT:
					work(NULL, &S, &req.hdr);
					break;
				case NEW_PRIV:
					req.hdr.type = 0;
					err += act_fast_send(np, &req.hdr, NULL, 0) != 0;
					break;
				case BASE_PRIV:
					req.hdr.type = 0;
					err += base_act_fast_send(bp, &req.hdr, NULL, 0) != 0;
					break;
				case NEW_LOCK:
					req.hdr.type = 0;
					err += act_fast_send(nl, &req.hdr, NULL, 0) != 0;
					break;
				case BASE_LOCK:
					req.hdr.type = 0;
					err += base_act_fast_send(bl, &req.hdr, NULL, 0) != 0;
					break;
				case RAW:
					raw_lock_call(h[0], &req.hdr, false);
					break;
				case RAW_STORE:
					raw_lock_call(h[0], &req.hdr, true);
					break;
				case NEW_SEND: {
					struct act_msg *m = act_msg_alloc(0, 8);
					*ACT_PAYLOAD(m, uint64_t) = (uint64_t)i;
					err += act_send(np, m) != 0;
					err += act_group_step(g, 1) != 1;
				} break;
				case BASE_SEND: {
					struct act_msg *m = base_act_msg_alloc(0, 8);
					*ACT_PAYLOAD(m, uint64_t) = (uint64_t)i;
					err += base_act_send(bp, m) != 0;
					err += base_act_group_step(bg, 1) != 1;
				} break;
				case DIRECT_RT:
					direct_reply(&S, &req.hdr, &rep);
					break;
				case NEW_PRIV_RT:
					req.hdr.type = 1;
					err +=
					    act_fast_send(np, &req.hdr, &rep, sizeof(rep)) != 24;
					break;
				case BASE_PRIV_RT:
					req.hdr.type = 1;
					err += base_act_fast_send(bp, &req.hdr, &rep,
								  sizeof(rep)) != 24;
					break;
				case NEW_LOCK_RT:
					req.hdr.type = 1;
					err +=
					    act_fast_send(nl, &req.hdr, &rep, sizeof(rep)) != 24;
					break;
				case BASE_LOCK_RT:
					req.hdr.type = 1;
					err += base_act_fast_send(bl, &req.hdr, &rep,
								  sizeof(rep)) != 24;
					break;
				}
			}
			ns[a][r] = (double)(__builtin_ia32_rdtsc() - t0) / 2.096 / (double)cnt;
		}
	if (err) {
		fprintf(stderr, "errors %ld\n", err);
		return 1;
	}
	printf("%-26s %8s %10s %10s %10s\n", "arm", "ns p50", "/direct", "/raw lock", "NEW/BASE");
	for (int a = 0; a < NARMS; a++) {
		double v[64], rd[64], rr[64], ab[64];
		int base_of = a == NEW_PRIV	 ? BASE_PRIV
			      : a == NEW_LOCK	 ? BASE_LOCK
			      : a == NEW_SEND	 ? BASE_SEND
			      : a == NEW_PRIV_RT ? BASE_PRIV_RT
			      : a == NEW_LOCK_RT ? BASE_LOCK_RT
						 : -1;
		int dir = a >= DIRECT_RT ? DIRECT_RT : DIRECT;
		for (int r = 0; r < rounds; r++) {
			v[r] = ns[a][r];
			rd[r] = ns[a][r] / ns[dir][r];
			rr[r] = ns[a][r] / ns[RAW][r];
			ab[r] = base_of >= 0 ? ns[a][r] / ns[base_of][r] : 0;
		}
		qsort(v, rounds, 8, cmpd);
		qsort(rd, rounds, 8, cmpd);
		qsort(rr, rounds, 8, cmpd);
		qsort(ab, rounds, 8, cmpd);
		printf("%-26s %8.2f %10.2f %10.2f", names[a], v[rounds / 2], rd[rounds / 2],
		       rr[rounds / 2]);
		if (base_of >= 0)
			printf(" %10.2f", ab[rounds / 2]);
		printf("\n");
	}
	printf("(%lu handler runs)\n", (unsigned long)S.count);
	return 0;
}
