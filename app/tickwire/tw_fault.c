/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 *
 * Fault injection on the rx path (tw_fault.h). The held packets are an
 * array in arrival order, compacted as they go: O(held) per release, held
 * at most TW_FAULT_HOLD_MAX; a test feature, off the path of feeds
 * without faults.
 */
#include <string.h>

#include "tw_fault.h"

const char *const tw_fault_stat_names[sizeof(struct tw_fault_stats) / sizeof(uint64_t)] = {
	"packets", "passed", "dropped", "duplicated", "reordered", "delayed", "died",
	"silenced", "held", "hold_full",
};

/* single writer (the polling lcore); pairs with the relaxed loads of
 * tw_fault_stats() and tw_fault_held() on other threads */
static inline void
bump(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, *counter + n, __ATOMIC_RELAXED);
}

void
tw_fault_init(struct tw_fault *f, const struct tw_cfg_fault *cfg, const char *name,
	      uint32_t side, uint32_t channel, uint64_t tsc_hz)
{
	memset(f, 0, sizeof(*f));
	f->cfg = *cfg;
	if (f->cfg.reorder_window == 0)
		f->cfg.reorder_window = 1;
	if (f->cfg.delay_packets == 0)
		f->cfg.delay_packets = 1;
	f->name = name;
	f->side = side;
	f->channel = channel;
	f->delay_ticks = (uint64_t)((__uint128_t)cfg->delay_us * tsc_hz / 1000000u);
	f->next_tsc = UINT64_MAX;
}

static inline bool
fires(const struct tw_fault *f, uint32_t seq, enum tw_fault_kind kind, uint32_t rate,
      uint64_t *hash)
{
	if (rate == 0)
		return false;
	*hash = tw_fault_hash(f->cfg.seed, f->side, f->channel, seq, kind);
	return tw_fault_ppm(*hash) < rate;
}

static inline uint16_t
emit(struct tw_fault *f, struct rte_mbuf *m, uint32_t copies, struct rte_mbuf **out)
{
	out[0] = m;
	if (copies == 2)
		out[1] = m;
	bump(&f->stats.passed, copies);
	return (uint16_t)copies;
}

/*
 * Pass on the held packets that are due (every one when @p all), oldest
 * first, while they fit in @p room; the others stay in arrival order.
 */
static uint16_t
release(struct tw_fault *f, uint64_t now, bool all, struct rte_mbuf **out, uint16_t room)
{
	const uint64_t count = f->stats.packets;
	uint64_t next = UINT64_MAX;
	uint32_t keep = 0;
	uint16_t n = 0;
	bool full = false;

	for (uint32_t i = 0; i < f->n_held; i++) {
		const struct tw_fault_hold h = f->hold[i];

		if (!full && (all || h.release_count <= count || h.release_tsc <= now)) {
			if (h.copies <= (uint32_t)(room - n)) {
				n += emit(f, h.m, h.copies, &out[n]);
				continue;
			}
			full = true;    /* keep the order: nothing later goes first */
		}
		if (h.release_tsc < next)
			next = h.release_tsc;
		f->hold[keep++] = h;
	}
	f->n_held = keep;
	f->next_tsc = next;
	__atomic_store_n(&f->stats.held, keep, __ATOMIC_RELAXED);
	return n;
}

/* Hold @p m (and its duplicate) until @p after more arrivals or @p ticks. */
static inline bool
hold(struct tw_fault *f, struct rte_mbuf *m, uint32_t copies, uint64_t after, uint64_t now,
     uint64_t ticks)
{
	struct tw_fault_hold *h;

	if (f->n_held == TW_FAULT_HOLD_MAX) {
		bump(&f->stats.hold_full, 1);
		return false;
	}
	h = &f->hold[f->n_held++];
	h->m = m;
	h->copies = copies;
	h->release_count = f->stats.packets + after;
	h->release_tsc = ticks != 0 ? now + ticks : UINT64_MAX;
	if (h->release_tsc < f->next_tsc)
		f->next_tsc = h->release_tsc;
	__atomic_store_n(&f->stats.held, f->n_held, __ATOMIC_RELAXED);
	return true;
}

/* One packet of the feed; @p room >= 2. @return the packets written to @p out. */
static uint16_t
packet(struct tw_fault *f, struct rte_mbuf *m, uint32_t seq, uint64_t now,
       struct rte_mbuf **out, uint16_t room, uint32_t *died)
{
	const struct tw_cfg_fault *c = &f->cfg;
	uint32_t copies = 1;
	uint16_t n = 0;
	uint64_t h;

	bump(&f->stats.packets, 1);
	if (f->dead || (c->die_after != 0 && f->stats.packets > c->die_after)) {
		rte_pktmbuf_free(m);
		bump(&f->stats.silenced, 1);
		if (!f->dead) {
			f->dead = true;
			f->death_news = true;
			bump(&f->stats.died, 1);
			(*died)++;
		}
		/* what it held before it died goes on */
		return f->n_held != 0 ? release(f, now, true, out, room) : 0;
	}
	if (seq < c->first_seq || (c->last_seq != 0 && seq > c->last_seq)) {
		n = emit(f, m, 1, out);
	} else if (fires(f, seq, TW_FAULT_DROP, c->drop_ppm, &h)) {
		rte_pktmbuf_free(m);
		bump(&f->stats.dropped, 1);
	} else {
		if (fires(f, seq, TW_FAULT_DUP, c->dup_ppm, &h)) {
			rte_mbuf_refcnt_update(m, 1);
			copies = 2;
			bump(&f->stats.duplicated, 1);
		}
		if (f->stopping) {
			n = emit(f, m, copies, out);
		} else if (fires(f, seq, TW_FAULT_DELAY, c->delay_ppm, &h) &&
			   hold(f, m, copies, c->delay_packets, now, f->delay_ticks)) {
			bump(&f->stats.delayed, 1);
		} else if (fires(f, seq, TW_FAULT_REORDER, c->reorder_ppm, &h) &&
			   hold(f, m, copies, 1 + (uint32_t)h % c->reorder_window, now, 0)) {
			bump(&f->stats.reordered, 1);
		} else {
			n = emit(f, m, copies, out);
		}
	}
	if (f->n_held != 0)
		n += release(f, now, f->stopping, &out[n], (uint16_t)(room - n));
	return n;
}

/* Something held goes on without a packet of the feed: by time, or all of it. */
static inline bool
due(const struct tw_fault *f, uint64_t now)
{
	return f->n_held != 0 && (f->stopping || f->dead || f->next_tsc <= now);
}

uint16_t
tw_fault_burst(const struct tw_fault_rx *in, uint16_t n, struct tw_fault *const *feeds,
	       uint32_t n_feeds, uint64_t now, struct rte_mbuf **out, uint16_t cap,
	       uint32_t *died)
{
	uint16_t o = 0;

	for (uint16_t i = 0; i < n; i++) {
		/* room for this packet's releases, keeping 2 for each one after it */
		const uint16_t room = (uint16_t)(cap - o - 2 * (n - i - 1));

		if (in[i].fault == NULL)
			out[o++] = in[i].m;
		else
			o += packet(in[i].fault, in[i].m, in[i].seq, now, &out[o], room, died);
	}
	for (uint32_t k = 0; k < n_feeds; k++) {
		struct tw_fault *f = feeds[k];

		if (due(f, now))
			o += release(f, now, f->stopping || f->dead, &out[o], (uint16_t)(cap - o));
	}
	return o;
}

bool
tw_fault_pending(struct tw_fault *const *feeds, uint32_t n_feeds, uint64_t now)
{
	for (uint32_t k = 0; k < n_feeds; k++)
		if (due(feeds[k], now))
			return true;
	return false;
}

void
tw_fault_stop(struct tw_fault *f)
{
	f->stopping = true;
}

uint64_t
tw_fault_held(const struct tw_fault *f)
{
	return __atomic_load_n(&f->stats.held, __ATOMIC_RELAXED);
}

bool
tw_fault_death_news(struct tw_fault *f)
{
	const bool news = f->death_news;

	f->death_news = false;
	return news;
}

void
tw_fault_stats(const struct tw_fault *f, struct tw_fault_stats *out)
{
	const uint64_t *src = (const uint64_t *)&f->stats;
	uint64_t *dst = (uint64_t *)out;

	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}
