/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A/B arbitration of an MDP 3.0 incremental stream by packet MsgSeqNum.
 *
 * Algorithm.  next_seq is the number to deliver.  A copy of next_seq is
 * delivered from the caller's buffer (zero copy), then every held successor
 * is released from the ring.  A copy ahead of next_seq goes into ring slot
 * seq & (window - 1); every held number lies in [next_seq, next_seq + window),
 * so two held numbers never share a slot.  While next_seq is missing behind a
 * held packet the arbiter waits; the wait started with the earliest arrival
 * still held (wait_arrival, wait_rx_ns), and ends by the missing copy
 * arriving or by a bound (arrivals or rx time), when next_seq .. lowest held
 * - 1 are declared lost.
 *
 * Bounds: each number is delivered or declared lost once; finding the lowest
 * held packet and the new wait start after a release scans at most `window`
 * slots; a jump far ahead reports one loss range for the part beyond the
 * window without visiting it.  Memory is one block sized by the config.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "mdp3_feed.h"

#define ARB_ALIGN 64u

struct arb_slot {
	uint64_t rx_ns;
	uint64_t arrival;   /* value of arb->arrivals when it was held */
	uint32_t seq;
	uint32_t length;
	uint8_t feed;
	uint8_t full;
};

struct mdp3_arb {
	struct mdp3_arb_config config;
	struct mdp3_arb_handler handler;
	struct mdp3_arb_counters counters;
	struct arb_slot *slots;
	uint8_t *data;
	size_t stride;
	uint64_t arrivals;
	uint64_t wait_arrival;  /* start of the current wait (held > 0) */
	uint64_t wait_rx_ns;
	uint32_t mask;
	uint32_t next_seq;
	uint32_t held;
	uint32_t highest_held;  /* valid when held > 0 */
	bool started;
	bool heap;
	/* Pending loss range, reported before the next delivery. */
	uint32_t loss_first;
	uint32_t loss_count;
};

static size_t
round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

static int
fill_config(const struct mdp3_arb_config *in, struct mdp3_arb_config *out)
{
	if (in != NULL)
		*out = *in;
	else
		memset(out, 0, sizeof(*out));
	if (out->window == 0)
		out->window = MDP3_ARB_DEFAULT_WINDOW;
	if (out->max_packet_size == 0)
		out->max_packet_size = MDP3_ARB_DEFAULT_MAX_PACKET;
	if (out->wait_packets == 0 && out->wait_ns == 0) {
		out->wait_packets = MDP3_ARB_DEFAULT_WAIT_PACKETS;
		out->wait_ns = MDP3_ARB_DEFAULT_WAIT_NS;
	}
	if (out->window < 2 || out->window > MDP3_ARB_WINDOW_MAX ||
			(out->window & (out->window - 1)) != 0)
		return -EINVAL;
	if (out->max_packet_size > 65535)
		return -EINVAL;
	return 0;
}

static void
layout(const struct mdp3_arb_config *c, size_t *slots_off, size_t *data_off,
		size_t *stride, size_t *total)
{
	*slots_off = round_up(sizeof(struct mdp3_arb), ARB_ALIGN);
	*data_off = round_up(*slots_off + (size_t)c->window * sizeof(struct arb_slot), ARB_ALIGN);
	*stride = round_up(c->max_packet_size, ARB_ALIGN);
	*total = *data_off + (size_t)c->window * *stride;
}

size_t
mdp3_arb_memsize(const struct mdp3_arb_config *config)
{
	struct mdp3_arb_config c;
	size_t s, d, st, total;

	if (fill_config(config, &c) < 0) {
		errno = EINVAL;
		return 0;
	}
	layout(&c, &s, &d, &st, &total);
	return total;
}

struct mdp3_arb *
mdp3_arb_init(void *mem, size_t size, const struct mdp3_arb_config *config,
		const struct mdp3_arb_handler *handler)
{
	struct mdp3_arb_config c;
	struct mdp3_arb *arb = mem;
	size_t s, d, st, total;

	if (mem == NULL || handler == NULL || handler->deliver == NULL ||
			((uintptr_t)mem % ARB_ALIGN) != 0 || fill_config(config, &c) < 0) {
		errno = EINVAL;
		return NULL;
	}
	layout(&c, &s, &d, &st, &total);
	if (size < total) {
		errno = ENOSPC;
		return NULL;
	}
	memset(arb, 0, sizeof(*arb));
	arb->config = c;
	arb->handler = *handler;
	arb->slots = (struct arb_slot *)((uint8_t *)mem + s);
	arb->data = (uint8_t *)mem + d;
	arb->stride = st;
	arb->mask = c.window - 1;
	memset(arb->slots, 0, (size_t)c.window * sizeof(struct arb_slot));
	if (c.initial_seq != 0) {
		arb->next_seq = c.initial_seq;
		arb->started = true;
	}
	return arb;
}

struct mdp3_arb *
mdp3_arb_create(const struct mdp3_arb_config *config, const struct mdp3_arb_handler *handler)
{
	struct mdp3_arb *arb;
	size_t size = mdp3_arb_memsize(config);
	void *mem;

	if (size == 0)
		return NULL;
	mem = aligned_alloc(ARB_ALIGN, round_up(size, ARB_ALIGN));
	if (mem == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	arb = mdp3_arb_init(mem, size, config, handler);
	if (arb == NULL) {
		int e = errno;

		free(mem);
		errno = e;
		return NULL;
	}
	arb->heap = true;
	return arb;
}

void
mdp3_arb_destroy(struct mdp3_arb *arb)
{
	if (arb != NULL && arb->heap)
		free(arb);
}

static inline uint32_t
load_seq(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline struct arb_slot *
slot_of(struct mdp3_arb *arb, uint32_t seq)
{
	return &arb->slots[seq & arb->mask];
}

static inline bool
is_held(struct mdp3_arb *arb, uint32_t seq)
{
	struct arb_slot *s = slot_of(arb, seq);

	return s->full && s->seq == seq;
}

static void
report_loss(struct mdp3_arb *arb, uint64_t now_ns)
{
	if (arb->loss_count == 0)
		return;
	arb->counters.losses++;
	arb->counters.lost_packets += arb->loss_count;
	if (arb->handler.loss != NULL)
		arb->handler.loss(arb->handler.ctx, arb->loss_first, arb->loss_count, now_ns);
	arb->loss_count = 0;
}

/* Declare count numbers from first lost (merged with a pending adjacent range). */
static void
add_loss(struct mdp3_arb *arb, uint32_t first, uint32_t count, uint64_t now_ns)
{
	if (count == 0)
		return;
	if (arb->loss_count != 0 && arb->loss_first + arb->loss_count != first)
		report_loss(arb, now_ns);
	if (arb->loss_count == 0)
		arb->loss_first = first;
	arb->loss_count += count;
}

static int
deliver(struct mdp3_arb *arb, const uint8_t *data, uint32_t length, uint32_t seq,
		uint64_t rx_ns, uint8_t feed, bool held)
{
	struct mdp3_arb_packet p = {
		.data = data, .length = length, .seq = seq, .rx_ns = rx_ns,
		.feed = feed, .held = held,
	};
	int rc;

	rc = arb->handler.deliver(arb->handler.ctx, &p);
	if (rc < 0) {
		arb->counters.rejected[feed]++;
		return rc;
	}
	arb->counters.accepted[feed]++;
	arb->next_seq = seq + 1;
	return 0;
}

/* Take the packet of slot s out of the ring and deliver it. */
static int
release_slot(struct mdp3_arb *arb, struct arb_slot *s, uint64_t now_ns)
{
	uint64_t waited = now_ns > s->rx_ns ? now_ns - s->rx_ns : 0;

	s->full = 0;
	arb->held--;
	arb->counters.held_now = arb->held;
	if (waited > arb->counters.max_hold_ns)
		arb->counters.max_hold_ns = waited;
	return deliver(arb, arb->data + (size_t)(s - arb->slots) * arb->stride, s->length,
			s->seq, s->rx_ns, s->feed, true);
}

/* Deliver held packets from next_seq on while they are there. */
static int
release_run(struct mdp3_arb *arb, uint64_t now_ns)
{
	int released = 0;

	while (arb->held > 0) {
		struct arb_slot *s = slot_of(arb, arb->next_seq);

		if (!s->full || s->seq != arb->next_seq)
			break;
		report_loss(arb, now_ns);
		if (release_slot(arb, s, now_ns) < 0)
			break;
		released++;
	}
	return released;
}

/* After the held set changed: the wait starts at the earliest held arrival. */
static void
recompute_wait(struct mdp3_arb *arb)
{
	uint32_t i, found = 0;
	uint64_t first = UINT64_MAX, rx = 0;
	uint32_t highest = arb->next_seq;

	for (i = 0; i <= arb->mask && found < arb->held; i++) {
		uint32_t seq = arb->next_seq + i;
		struct arb_slot *s = slot_of(arb, seq);

		if (!s->full || s->seq != seq)
			continue;
		found++;
		highest = seq;
		if (s->arrival < first) {
			first = s->arrival;
			rx = s->rx_ns;
		}
	}
	arb->wait_arrival = first;
	arb->wait_rx_ns = rx;
	arb->highest_held = highest;
}

/* Lowest held number (held > 0). */
static uint32_t
lowest_held(struct mdp3_arb *arb)
{
	uint32_t i;

	for (i = 0; i <= arb->mask; i++)
		if (is_held(arb, arb->next_seq + i))
			return arb->next_seq + i;
	return arb->next_seq; /* not reached while held > 0 */
}

/* Declare the missing numbers before the lowest held lost, release the run. */
static int
give_up_head(struct mdp3_arb *arb, uint64_t now_ns)
{
	uint32_t low = lowest_held(arb);
	int released;

	add_loss(arb, arb->next_seq, low - arb->next_seq, now_ns);
	arb->next_seq = low;
	released = release_run(arb, now_ns);
	report_loss(arb, now_ns);
	recompute_wait(arb);
	return released;
}

static bool
wait_expired(const struct mdp3_arb *arb, uint64_t now_ns)
{
	const struct mdp3_arb_config *c = &arb->config;

	if (c->wait_packets != 0 && arb->arrivals - arb->wait_arrival >= c->wait_packets)
		return true;
	if (c->wait_ns != 0 && now_ns > arb->wait_rx_ns && now_ns - arb->wait_rx_ns >= c->wait_ns)
		return true;
	return false;
}

static int
expire(struct mdp3_arb *arb, uint64_t now_ns)
{
	int released = 0;

	while (arb->held > 0 && wait_expired(arb, now_ns))
		released += give_up_head(arb, now_ns);
	return released;
}

/* Make next_seq >= target: deliver what is held below it, declare the rest lost. */
static void
advance_to(struct mdp3_arb *arb, uint32_t target, uint64_t now_ns)
{
	uint32_t span = target - arb->next_seq, i;

	for (i = 0; i < span && i <= arb->mask; i++) {
		uint32_t seq = arb->next_seq;

		if (arb->held > 0 && is_held(arb, seq)) {
			report_loss(arb, now_ns);
			if (release_slot(arb, slot_of(arb, seq), now_ns) == 0)
				continue;
		}
		add_loss(arb, seq, 1, now_ns);
		arb->next_seq = seq + 1;
	}
	if (arb->next_seq != target) {
		add_loss(arb, arb->next_seq, target - arb->next_seq, now_ns);
		arb->next_seq = target;
	}
	report_loss(arb, now_ns);
}

static void
drop_held(struct mdp3_arb *arb)
{
	uint32_t i;

	for (i = 0; i <= arb->mask; i++)
		arb->slots[i].full = 0;
	arb->held = 0;
	arb->counters.held_now = 0;
}

static int
hold(struct mdp3_arb *arb, enum mdp3_feed_id feed, const uint8_t *data, size_t length,
		uint32_t seq, uint64_t rx_ns)
{
	struct arb_slot *s = slot_of(arb, seq);

	if (s->full) {
		/* Held numbers lie in [next_seq, next_seq + window): same number. */
		arb->counters.duplicates[feed]++;
		return MDP3_ARB_DUPLICATE;
	}
	if (length > arb->config.max_packet_size) {
		arb->counters.oversize++;
		return MDP3_ARB_DROPPED;
	}
	memcpy(arb->data + (size_t)(s - arb->slots) * arb->stride, data, length);
	s->seq = seq;
	s->length = (uint32_t)length;
	s->rx_ns = rx_ns;
	s->arrival = arb->arrivals;
	s->feed = (uint8_t)feed;
	s->full = 1;
	/*
	 * Missing runs seen: a packet above every held one opens a run when its
	 * predecessor is missing; one inside a run splits it when both of its
	 * neighbours are missing (next_seq itself is never held).
	 */
	if (arb->held == 0 || (int32_t)(seq - arb->highest_held) > 0) {
		if (!is_held(arb, seq - 1))
			arb->counters.gaps++;
	} else if (!is_held(arb, seq - 1) && !is_held(arb, seq + 1)) {
		arb->counters.gaps++;
	}
	if (arb->held == 0) {
		arb->wait_arrival = arb->arrivals;
		arb->wait_rx_ns = rx_ns;
		arb->highest_held = seq;
	} else if ((int32_t)(seq - arb->highest_held) > 0) {
		arb->highest_held = seq;
	}
	arb->held++;
	arb->counters.held++;
	arb->counters.held_now = arb->held;
	if (arb->held > arb->counters.max_held)
		arb->counters.max_held = arb->held;
	return MDP3_ARB_HELD;
}

int
mdp3_arb_push(struct mdp3_arb *arb, enum mdp3_feed_id feed, const uint8_t *data,
		size_t length, uint64_t rx_ns)
{
	uint32_t seq;
	int32_t ahead;
	int verdict;

	if (arb == NULL || data == NULL || (unsigned int)feed >= MDP3_FEED_COUNT)
		return -EINVAL;
	/* A wait whose time ran out before this copy arrived ended then: the
	 * copy cannot fill it, however often the caller polls. So the verdict
	 * depends on rx times only, not on when the polls ran. (The packet
	 * count is the one this copy's predecessors left.) */
	if (arb->held > 0 && rx_ns != 0)
		expire(arb, rx_ns - 1);
	arb->counters.packets[feed]++;
	arb->arrivals++;
	if (length < 4) {
		arb->counters.short_packets++;
		verdict = MDP3_ARB_DROPPED;
		goto out;
	}
	seq = load_seq(data);
	if (!arb->started) {
		arb->next_seq = seq;
		arb->started = true;
	}
	ahead = (int32_t)(seq - arb->next_seq);
	if (ahead < 0 && arb->config.reset_distance != 0 &&
			(uint32_t)0 - (uint32_t)ahead >= arb->config.reset_distance) {
		/* The exchange restarted its sequence: finish the old one. */
		while (arb->held > 0)
			give_up_head(arb, rx_ns);
		drop_held(arb);
		arb->counters.seq_resets++;
		arb->next_seq = seq;
		ahead = 0;
	}
	if (ahead < 0) {
		arb->counters.duplicates[feed]++;
		verdict = MDP3_ARB_DUPLICATE;
		goto out;
	}
	if ((uint32_t)ahead > arb->mask) {
		arb->counters.window_overflows++;
		advance_to(arb, seq - arb->mask, rx_ns);
		release_run(arb, rx_ns);
		if (arb->held > 0)
			recompute_wait(arb);
		ahead = (int32_t)(seq - arb->next_seq);
	}
	if (ahead > 0) {
		verdict = hold(arb, feed, data, length, seq, rx_ns);
		goto out;
	}
	if (arb->loss_count != 0)
		report_loss(arb, rx_ns);
	if (deliver(arb, data, (uint32_t)length, seq, rx_ns, (uint8_t)feed, false) < 0) {
		verdict = MDP3_ARB_REJECTED;
		goto out;
	}
	verdict = MDP3_ARB_DELIVERED;
	if (arb->held > 0) {
		arb->counters.gaps_filled++;
		release_run(arb, rx_ns);
		if (arb->held > 0)
			recompute_wait(arb);
	}
out:
	if (arb->held > 0)
		expire(arb, rx_ns);
	return verdict;
}

int
mdp3_arb_poll(struct mdp3_arb *arb, uint64_t now_ns)
{
	if (arb == NULL)
		return -EINVAL;
	return expire(arb, now_ns);
}

int
mdp3_arb_flush(struct mdp3_arb *arb, uint64_t now_ns)
{
	int released = 0;

	if (arb == NULL)
		return -EINVAL;
	while (arb->held > 0)
		released += give_up_head(arb, now_ns);
	return released;
}

void
mdp3_arb_reset(struct mdp3_arb *arb)
{
	if (arb == NULL)
		return;
	drop_held(arb);
	arb->loss_count = 0;
	arb->started = false;
	arb->counters.seq_resets++;
}

bool
mdp3_arb_next_seq(const struct mdp3_arb *arb, uint32_t *seq)
{
	if (arb == NULL || !arb->started)
		return false;
	if (seq != NULL)
		*seq = arb->next_seq;
	return true;
}

const struct mdp3_arb_counters *
mdp3_arb_counters(const struct mdp3_arb *arb)
{
	return arb != NULL ? &arb->counters : NULL;
}

const struct mdp3_arb_config *
mdp3_arb_config(const struct mdp3_arb *arb)
{
	return arb != NULL ? &arb->config : NULL;
}
