/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_FAULT_H
#define TICKWIRE_TW_FAULT_H

/**
 * @file
 * Fault injection on the appliance's rx path, per feed, for tests:
 * [feed.NAME] fault.* in ports.ini (lib/config's struct tw_cfg_fault;
 * dpdk-config/README.md). Called by the lcore that polls the feed's rx
 * queue, on each burst right after rte_eth_rx_burst() and the feed filter,
 * so the rest of the appliance sees what a faulty network would deliver.
 *
 * What happens to a packet of a faulty feed, in this order:
 *  1. die: once fault.die_after packets of the feed have arrived (whatever
 *     the faults below did to them) it is dead: what it still holds goes
 *     on, every later packet is freed and counted (silenced); the death is
 *     reported once (tw_fault_death_news()).
 *  2. only for a MsgSeqNum in fault.first_seq .. fault.last_seq (0: no end):
 *     drop: freed (rte_pktmbuf_free);
 *     duplicate: passed on twice (the same mbuf, its reference count + 1;
 *     the two copies travel together);
 *     delay: held until fault.delay_packets later packets of the feed have
 *     arrived, or fault.delay_us have passed (when set);
 *     reorder (if not delayed): held until 1 .. fault.reorder_window later
 *     packets of the feed have arrived.
 *  3. otherwise, and after the packet itself, the held packets that are
 *     due go on, oldest first.
 *
 * Decisions are reproducible and independent of timing: each is a pure
 * function of (fault.seed, feed side, channel, the packet's MsgSeqNum,
 * what is decided), tw_fault_hash() and tw_fault_ppm() below: a decision
 * fires when tw_fault_ppm(hash) < its rate. A test recomputes exactly which
 * sequence numbers each feed dropped. (A MsgSeqNum a feed carries twice
 * gets the same decisions both times.) Only when a held packet goes on can
 * depend on time (fault.delay_us), never whether it does.
 *
 * Bounds: at most TW_FAULT_HOLD_MAX packets held per feed (the settings
 * keep fewer: each arrival holds at most one, for at most
 * TW_CFG_FAULT_DELAY_MAX arrivals; a full hold passes the packet on and
 * counts it); a burst of n leaves at most TW_FAULT_OUT_MAX(n) packets (held
 * packets that would not fit stay, due, for the next burst). No
 * allocation, no floating point, no lock. The cost when no feed of a queue
 * has faults is one predicted branch in the caller.
 *
 * Threads: a struct tw_fault belongs to the lcore polling its feed's rx
 * queue. Its counters (struct tw_fault_stats) are written with relaxed
 * stores and may be read from any thread (tw_fault_stats()).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "tw_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Packets one feed may hold at once (reordered and delayed). */
#define TW_FAULT_HOLD_MAX 128
/** Most packets tw_fault_burst() passes on for @p n received. */
#define TW_FAULT_OUT_MAX(n) (4 * (n))

/** What a hash decides (an input of tw_fault_hash()). */
enum tw_fault_kind {
	TW_FAULT_DROP = 1,
	TW_FAULT_DUP = 2,
	TW_FAULT_REORDER = 3,         /**< its low 32 bits also give the distance */
	TW_FAULT_DELAY = 4,
};

/** splitmix64's finalizer. */
static inline uint64_t
tw_fault_mix(uint64_t z)
{
	z += UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/**
 * The hash of one decision:
 * mix(mix(seed ^ (kind << 48 | side << 32 | channel)) ^ seq), with mix
 * splitmix64's finalizer. Any thread.
 * @param side 0 feed A, 1 feed B
 */
static inline uint64_t
tw_fault_hash(uint64_t seed, uint32_t side, uint32_t channel, uint32_t seq,
	      enum tw_fault_kind kind)
{
	return tw_fault_mix(tw_fault_mix(seed ^ ((uint64_t)kind << 48 | (uint64_t)side << 32 |
						 channel)) ^ seq);
}

/** A hash as a draw in 0 .. 999999: ((hash >> 32) * 1000000) >> 32. */
static inline uint32_t
tw_fault_ppm(uint64_t hash)
{
	return (uint32_t)(((hash >> 32) * UINT64_C(1000000)) >> 32);
}

/** The MsgSeqNum of an MDP packet (its first 4 bytes, little-endian); 0 if shorter. */
static inline uint32_t
tw_fault_seq(const uint8_t *payload, uint32_t length)
{
	return length < 4 ? 0 : (uint32_t)payload[0] | (uint32_t)payload[1] << 8 |
				(uint32_t)payload[2] << 16 | (uint32_t)payload[3] << 24;
}

/** Counters of one feed's injector. packets + duplicated = passed + dropped
 *  + silenced + held. */
struct tw_fault_stats {
	uint64_t packets;             /**< packets of the feed received */
	uint64_t passed;              /**< passed on (duplicates included) */
	uint64_t dropped;             /**< freed by fault.drop_ppm */
	uint64_t duplicated;          /**< passed on twice */
	uint64_t reordered;           /**< held by fault.reorder_ppm */
	uint64_t delayed;             /**< held by fault.delay_ppm */
	uint64_t died;                /**< 1 once the feed died (fault.die_after) */
	uint64_t silenced;            /**< freed because the feed was dead */
	uint64_t held;                /**< held now (a gauge) */
	uint64_t hold_full;           /**< to hold, but the hold was full: passed on */
};

/** One held packet (private to tw_fault.c). */
struct tw_fault_hold {
	struct rte_mbuf *m;
	uint64_t release_count;       /**< due once the feed has received this many */
	uint64_t release_tsc;         /**< ... or at this TSC; UINT64_MAX: by count only */
	uint32_t copies;              /**< 1, or 2 with its duplicate */
};

/** The injector of one feed. Members are private to tw_fault.c. */
struct tw_fault {
	struct tw_cfg_fault cfg;
	const char *name;             /**< the feed's NAME, for the caller's messages */
	uint32_t channel;
	uint32_t side;                /**< 0 A, 1 B */
	uint64_t delay_ticks;         /**< fault.delay_us in TSC ticks; 0: by count only */
	uint64_t next_tsc;            /**< earliest release_tsc held; UINT64_MAX: none */
	bool dead;
	bool death_news;              /**< dead and not yet reported */
	bool stopping;                /**< tw_fault_stop(): hold nothing, release all */
	uint32_t n_held;
	struct tw_fault_stats stats;
	struct tw_fault_hold hold[TW_FAULT_HOLD_MAX];
};

/** A received packet as tw_fault_burst() takes it. */
struct tw_fault_rx {
	struct rte_mbuf *m;
	struct tw_fault *fault;       /**< its feed's injector; NULL: passed on as is */
	uint32_t seq;                 /**< its MsgSeqNum (tw_fault_seq()) */
};

/**
 * Set up the injector of one feed (setup time; the polling lcore only
 * touches it afterwards).
 * @param name the feed's NAME (kept, not copied)
 * @param side 0 feed A, 1 feed B
 */
void tw_fault_init(struct tw_fault *f, const struct tw_cfg_fault *cfg, const char *name,
		   uint32_t side, uint32_t channel, uint64_t tsc_hz);

/**
 * Apply the faults to a burst: the @p n packets of @p in (in arrival order)
 * become those written to @p out, at most @p cap (at least 2 * @p n;
 * TW_FAULT_OUT_MAX(n) keeps the held packets that are due moving). The
 * held packets of @p feeds (the faulty feeds of the rx queue) that are due
 * by time go on too, last, so a burst of 0 releases them. Packets dropped
 * or silenced are freed here. The polling lcore only.
 * @param now the TSC
 * @param died incremented for every feed that died in this burst
 * @return the packets written to @p out.
 */
uint16_t tw_fault_burst(const struct tw_fault_rx *in, uint16_t n, struct tw_fault *const *feeds,
			uint32_t n_feeds, uint64_t now, struct rte_mbuf **out, uint16_t cap,
			uint32_t *died);

/**
 * Whether a burst of nothing would pass something on now (a held packet is
 * due by time, or everything is to go after tw_fault_stop()). The polling
 * lcore only; a few loads per feed.
 */
bool tw_fault_pending(struct tw_fault *const *feeds, uint32_t n_feeds, uint64_t now);

/**
 * Stop holding (the capture is stopping): from now on nothing is held and
 * the next tw_fault_burst() passes on everything held, as it fits. The
 * polling lcore, once it has stopped receiving for good.
 */
void tw_fault_stop(struct tw_fault *f);

/** Packets held now. Any thread (relaxed). */
uint64_t tw_fault_held(const struct tw_fault *f);

/** True once after the feed died: for the caller's log line. The polling lcore. */
bool tw_fault_death_news(struct tw_fault *f);

/** A copy of the counters. Any thread (relaxed loads). */
void tw_fault_stats(const struct tw_fault *f, struct tw_fault_stats *out);

/** Names of the counters, in the order of struct tw_fault_stats ("packets", ...). */
extern const char *const tw_fault_stat_names[sizeof(struct tw_fault_stats) / sizeof(uint64_t)];

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_FAULT_H */
