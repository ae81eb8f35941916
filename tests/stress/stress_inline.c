/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Stress of inline messages (lockfree, bqueue and bqueue_batched mailboxes,
 * actor_pvt.h; each mode runs on each of the three): 3 producer
 * threads act_send_copy() into a group of 2 actors on its own thread, ring
 * of 16 cells, so the ring wraps every few microseconds and runs full.
 *
 * Message k of producer p has a size that cycles over 8..33 bytes (33 is one
 * above ACT__INLINE_MAX: it takes the pool, in the same order) and a payload
 * whose first 8 bytes are (p << 40 | k) and whose other bytes are a function
 * of (p, k, i); even k go to actor a, odd k to actor b. The handlers (one
 * thread) check that:
 *  - each producer's messages arrive in order across both actors, with no
 *    loss (BLOCK, FAIL) or only counted losses (DROP_NEWEST),
 *  - size, type, destination and every payload byte are intact (a torn
 *    copy, or a cell published before it was written),
 *  - the payload is still intact after the handler spins for a while every
 *    64th message (a message that lived in a cell freed before the handler
 *    returned is overwritten by the producers waiting for space),
 *  - inline and pooled messages come as act_msg_is_pooled() says.
 *
 * Modes: BLOCK (consumer spin 0: it sleeps, every push may have to wake
 * it), FAIL (producers retry on -EAGAIN; spin 256), DROP_NEWEST (spin 256;
 * delivered + dropped == sent, and the group's dropped counter agrees).
 * Time: TW_STRESS_SECONDS (default 10), split over the modes and queues.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "act_fixture.h"
#include "actor_pvt.h"

#define PRODUCERS 3
#define SIZE_MIN 8u
#define SIZE_SPAN 26u /* sizes 8..33 */

enum { T_DATA, T_COUNT };

struct shared {
	/* written by the group's thread only */
	uint64_t next[PRODUCERS];
	uint64_t delivered;
	uint64_t errors;
	char first_error[160];
	bool drops_allowed; /* DROP_NEWEST: gaps in a producer's sequence */
	/* published to the main thread */
	_Atomic uint64_t delivered_pub;
	struct act_actor *actors[2];
};

struct producer {
	struct shared *sh;
	unsigned id;
	enum act_overflow ov;
	double deadline;
	uint64_t sent;     /* accepted (0 returned) */
	uint64_t refused;  /* -EAGAIN retries (FAIL) */
	int bad_rc;
};

static uint32_t size_of(uint64_t k)
{
	return SIZE_MIN + (uint32_t)(k % SIZE_SPAN);
}

static unsigned char byte_of(unsigned p, uint64_t k, uint32_t i)
{
	return (unsigned char)((k * 131u) ^ (p * 29u) ^ (i * 7u) ^ 0x5a);
}

static void note_error(struct shared *sh, const char *what, unsigned p, uint64_t k, uint64_t x)
{
	if (sh->errors++ == 0)
		snprintf(sh->first_error, sizeof(sh->first_error),
			 "%s: producer %u message %llu (%llu)", what, p, (unsigned long long)k,
			 (unsigned long long)x);
}

/* @return false on the first wrong byte */
static bool payload_ok(const struct act_msg *m, unsigned p, uint64_t k)
{
	uint32_t i;

	for (i = 8; i < m->size; i++)
		if (m->payload[i] != byte_of(p, k, i))
			return false;
	return true;
}

static void h_data(struct act_actor *self, void *state, struct act_msg *m)
{
	struct shared *sh = state;
	uint64_t word, k;
	unsigned p;

	memcpy(&word, m->payload, sizeof(word));
	p = (unsigned)(word >> 40);
	k = word & ((1ull << 40) - 1);
	if (p >= PRODUCERS) {
		note_error(sh, "bad producer id", p, k, word);
		goto out;
	}
	if (k < sh->next[p])
		note_error(sh, "out of order or duplicate", p, k, sh->next[p]);
	else if (k > sh->next[p] && !sh->drops_allowed)
		note_error(sh, "lost", p, k, sh->next[p]);
	sh->next[p] = k + 1;
	if (m->size != size_of(k))
		note_error(sh, "wrong size", p, k, m->size);
	else if (m->type != T_DATA || m->dest != self || self != sh->actors[k & 1])
		note_error(sh, "wrong type or destination", p, k, m->type);
	else if (act_msg_is_pooled(m) != (m->size > ACT__INLINE_MAX))
		note_error(sh, "inline/pool mismatch", p, k, m->size);
	else if (!payload_ok(m, p, k))
		note_error(sh, "torn payload", p, k, m->size);
	else if (k % 64 == 0) {
		unsigned i;

		/* producers are blocked on the full ring: give them time to
		 * overwrite a cell this message might still live in */
		for (i = 0; i < 20000; i++)
			act__cpu_relax();
		if (!payload_ok(m, p, k) || m->size != size_of(k))
			note_error(sh, "payload changed while the handler ran", p, k, m->size);
	}
out:
	sh->delivered++;
	atomic_store_explicit(&sh->delivered_pub, sh->delivered, memory_order_release);
}

static const act_handler_fn handlers[T_COUNT] = {[T_DATA] = h_data};

static void *producer_main(void *arg)
{
	struct producer *pr = arg;
	unsigned char buf[64];
	uint64_t k = 0;

	while (tw_now_s() < pr->deadline) {
		uint32_t size = size_of(k), i;
		uint64_t word = ((uint64_t)pr->id << 40) | k;
		int rc;

		memcpy(buf, &word, sizeof(word));
		for (i = 8; i < size; i++)
			buf[i] = byte_of(pr->id, k, i);
		rc = act_send_copy(pr->sh->actors[k & 1], T_DATA, buf, size);
		if (rc == -EAGAIN && pr->ov == ACT_OVERFLOW_FAIL) {
			pr->refused++;
			sched_yield();
			continue; /* the same k again */
		}
		if (rc != 0) {
			pr->bad_rc = rc;
			break;
		}
		pr->sent++;
		k++;
	}
	return NULL;
}

static void run_mode(enum act_overflow ov, uint32_t spin, double seconds)
{
	struct act_group_opts go = {
		.name = "inline",
		.queue = fx_queue(),
		.capacity = 16,
		.overflow = ov,
		.spin = spin,
		.cpu = -1,
	};
	struct shared *sh = calloc(1, sizeof(*sh));
	struct producer pr[PRODUCERS];
	pthread_t th[PRODUCERS];
	struct act_mailbox_stats st;
	struct act_group *g;
	uint64_t sent = 0, refused = 0;
	double t_end;
	unsigned i;

	assert_non_null(sh);
	sh->drops_allowed = ov == ACT_OVERFLOW_DROP_NEWEST;
	g = act_group_create(&go);
	assert_non_null(g);
	sh->actors[0] = fx_actor("a", g, handlers, T_COUNT, sh, false);
	sh->actors[1] = fx_actor("b", g, handlers, T_COUNT, sh, false);
	assert_int_equal(act_group_start(g), 0);
	for (i = 0; i < PRODUCERS; i++) {
		pr[i] = (struct producer){.sh = sh, .id = i, .ov = ov,
					  .deadline = tw_now_s() + seconds};
		assert_int_equal(pthread_create(&th[i], NULL, producer_main, &pr[i]), 0);
	}
	for (i = 0; i < PRODUCERS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(pr[i].bad_rc, 0);
		sent += pr[i].sent;
		refused += pr[i].refused;
	}
	act_group_mailbox_stats(g, &st);
	/* everything accepted is delivered (or was dropped, and counted) */
	t_end = tw_now_s() + 10;
	while (atomic_load_explicit(&sh->delivered_pub, memory_order_acquire) + st.dropped <
		       sent &&
	       tw_now_s() < t_end) {
		sched_yield();
		act_group_mailbox_stats(g, &st);
	}
	act_group_stop(g);
	act_group_mailbox_stats(g, &st);
	printf("  overflow %d spin %u: sent %llu, delivered %llu, dropped %llu, refused %llu, "
	       "producer waits %llu, errors %llu\n", (int)ov, spin, (unsigned long long)sent,
	       (unsigned long long)sh->delivered, (unsigned long long)st.dropped,
	       (unsigned long long)refused, (unsigned long long)st.blocked,
	       (unsigned long long)sh->errors);
	if (sh->errors != 0)
		fail_msg("%s", sh->first_error);
	assert_int_equal(sh->delivered + st.dropped, sent);
	assert_int_equal(st.dequeued, sh->delivered);
	if (ov != ACT_OVERFLOW_DROP_NEWEST)
		assert_int_equal(st.dropped, 0);
	/* the full ring was reached: the point of a 16-cell ring */
	if (ov == ACT_OVERFLOW_BLOCK)
		assert_true(st.blocked > 0);
	else if (ov == ACT_OVERFLOW_FAIL)
		assert_true(refused > 0);
	else
		assert_true(st.dropped > 0);
	assert_true(sh->delivered > 1000);
	act_actor_stop(sh->actors[0]);
	act_actor_stop(sh->actors[1]);
	act_actor_destroy(sh->actors[0]);
	act_actor_destroy(sh->actors[1]);
	act_group_destroy(g);
	free(sh);
}

static void inline_block(void **unused)
{
	(void)unused;
	run_mode(ACT_OVERFLOW_BLOCK, 0, tw_stress_seconds() * 0.1);
}

static void inline_fail(void **unused)
{
	(void)unused;
	run_mode(ACT_OVERFLOW_FAIL, 256, tw_stress_seconds() * 0.1);
}

static void inline_drop(void **unused)
{
	(void)unused;
	run_mode(ACT_OVERFLOW_DROP_NEWEST, 256, tw_stress_seconds() * 0.1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		FX_PER_INLINE_QUEUE(inline_block),
		FX_PER_INLINE_QUEUE(inline_fail),
		FX_PER_INLINE_QUEUE(inline_drop),
	};

	TW_RUN_TESTS(argc, argv, tests);
}
