/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_PLAYER_H
#define TICKWIRE_TW_PLAYER_H

/**
 * @file
 * Paced replay (DESIGN.md section 7): the appliance's stand-in for the
 * network. It reads captures, and releases each frame into the rx ring of
 * a ring-backed DPDK port (net_ring, rte_eth_from_rings()) at its capture
 * time scaled by a speed factor, so the packet reaches the appliance
 * through a real DPDK rx path (rte_eth_rx_burst) one at a time, as a wire
 * would deliver it. The A/B skew of the captures is kept: every frame of
 * every input is placed on one timeline.
 *
 * Each released mbuf carries, in a dynamic field, the TSC read at its
 * release (t0: when it became available, what a NIC's hardware timestamp
 * gives) and the depth of the rx ring it found (packets ahead of it). The
 * player measures its own error, actual minus scheduled release, so a
 * reader knows the floor of the measurement itself.
 *
 * The player is stepped by one thread: either its own lcore
 * (tw_player_run()) or a capture lcore between its polls
 * (tw_player_step()). It allocates mbufs from the appliance's pool a few
 * packets ahead of their release, so the release itself is a stamp and an
 * enqueue.
 *
 * Looping (tw_player_opts.passes > 1): after the last frame the schedule
 * starts again one mean inter-frame interval later (the pass period), for
 * a sustained input of any length from a short capture. So that the
 * appliance sees one continuous session, not the same packets again, each
 * copy of pass k > 0 is rewritten in its mbuf (the mapped capture is never
 * written): the MDP 3.0 packet header's MsgSeqNum + k x the span of its
 * sequence (max - min + 1 over the frames that share it: the A and B
 * copies of one channel's incremental feed, tw_player_seq_fn), SendingTime
 * + k x the pass period, and the UDP checksum to match. lib/book's RptSeq
 * only starts again at a ChannelReset, so the first packet of every
 * sequence must open with one (tickwire-synth --reset-first writes such a
 * capture): each pass then starts from empty books at RptSeq 1, as the
 * first did. tw_player_create() refuses a capture whose sequence opens
 * otherwise. Snapshot and definition streams (a negative key) are
 * replayed as captured: a looped capture must not need recovery.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TW_PLAYER_MAX_INPUTS 16
/** Sequences (distinct keys of tw_player_seq_fn) a looped replay rewrites. */
#define TW_PLAYER_MAX_SEQUENCES 64
/** tw_player_opts.passes: replay until stopped. */
#define TW_PLAYER_FOREVER UINT64_MAX

/**
 * What a released mbuf carries (dynamic field "tickwire_player_stamp").
 * 12 bytes, 4-aligned: it must fit in the mbuf's dynamic area beside the
 * rte_ring hand-off's metadata (16 bytes, 8-aligned).
 */
struct tw_player_stamp {
	uint32_t t0_lo;       /**< TSC at release, low half */
	uint32_t t0_hi;       /**< ... high half */
	uint16_t rxq;         /**< packets in the rx ring before it (saturates) */
	uint16_t magic;       /**< TW_PLAYER_STAMP_MAGIC: set by the player */
};

#define TW_PLAYER_STAMP_MAGIC 0x5457u /* "TW" */

static inline uint64_t
tw_player_stamp_t0(const struct tw_player_stamp *st)
{
	return (uint64_t)st->t0_hi << 32 | st->t0_lo;
}

/** Keep a frame of input @p input? (the port's multicast filter) */
typedef bool (*tw_player_filter_fn)(void *ctx, uint32_t input, const uint8_t *frame,
				    uint32_t length, uint32_t linktype);

/**
 * The MsgSeqNum sequence of a frame the filter kept, for a looped replay:
 * frames with equal keys (>= 0) share one sequence; a negative key leaves
 * the frame as captured in every pass.
 */
typedef int64_t (*tw_player_seq_fn)(void *ctx, uint32_t input, const uint8_t *frame,
				    uint32_t length, uint32_t linktype);

struct tw_player_input {
	const char *path;     /**< capture (pcap or pcapng) */
	struct rte_ring *ring;/**< the rx ring of its port's queue */
	uint16_t port_id;     /**< that port (mbuf->port of its frames) */
};

struct tw_player_opts {
	struct tw_player_input inputs[TW_PLAYER_MAX_INPUTS];
	uint32_t n_inputs;
	uint64_t speed_milli; /**< speed x 1000: 1000 real time; > 0 */
	uint64_t tsc_hz;
	struct rte_mempool *pool;
	int stamp_offset;     /**< dynfield offset of struct tw_player_stamp */
	/** dynfield offset of the release number (uint64_t: release g of the
	 *  schedule, counted over every pass), or -1: not written */
	int release_offset;
	tw_player_filter_fn filter;  /**< NULL: every frame */
	void *filter_ctx;            /**< also given to seq */
	/** times the captures are replayed: 0 or 1 once, TW_PLAYER_FOREVER
	 *  until stopped (Looping, at the top of this file) */
	uint64_t passes;
	tw_player_seq_fn seq;        /**< looping: NULL rewrites nothing */
};

struct tw_player_stats {
	uint64_t frames;      /**< frames scheduled in one pass (after the filter) */
	uint64_t passes;      /**< passes begun (1 without looping) */
	uint64_t released;    /**< enqueued into their ring */
	uint64_t ring_full;   /**< dropped: the rx ring was full (a NIC's imissed) */
	uint64_t no_mbuf;     /**< dropped: the pool was empty */
	uint64_t filtered;    /**< frames the filter refused */
	/** actual - scheduled release: p50, p99, p99.9, max (looping: of the
	 *  last pass's worth of releases) */
	uint64_t err_ns[4];
	uint64_t span_ns;     /**< scheduled length of one pass */
	uint64_t period_ns;   /**< capture time from one pass to the next (looping) */
};

struct tw_player;

/**
 * Read every input (kept open: frames are released from the mapped files)
 * and build the schedule. Not on a hot path.
 * @return the player, or NULL with @p err (a message naming the file, and
 *         for a capture a looped replay cannot use, the frame and a hint)
 *         filled.
 */
struct tw_player *tw_player_create(const struct tw_player_opts *opts, char *err,
				   size_t err_len);

/** Free the player; mbufs not yet released go back to the pool. */
void tw_player_destroy(struct tw_player *p);

/**
 * Fix the schedule's origin: the first frame is due at @p start_tsc. Any
 * thread, before the stepping thread sees the player started (release).
 */
void tw_player_start(struct tw_player *p, uint64_t start_tsc);

/** true once tw_player_start() ran (acquire). */
bool tw_player_started(const struct tw_player *p);

/**
 * Release every frame due by now, prepare the next ones. Never waits.
 * Allocates nothing but the mbufs.
 * @return frames released.
 */
uint32_t tw_player_step(struct tw_player *p);

/**
 * Run until every frame is released or *@p quit: spin to each release
 * time. For a thread of its own.
 */
void tw_player_run(struct tw_player *p, const _Atomic bool *quit);

/** true when every frame of every pass was released or dropped (acquire);
 *  looping until stopped: once tw_player_run() returned. */
bool tw_player_done(const struct tw_player *p);

/** The schedule's origin (tw_player_start()). */
uint64_t tw_player_start_tsc(const struct tw_player *p);

/**
 * Counters and the error percentiles. The percentiles are computed here:
 * call when the stepping thread has finished.
 */
void tw_player_stats(const struct tw_player *p, struct tw_player_stats *st);

/** Frames released so far (any thread; relaxed). */
uint64_t tw_player_released(const struct tw_player *p);

/**
 * Where the releases stand, for a consumer that must take frames in release
 * order (any thread). The player publishes, release after release, first
 * the count of frames enqueued into each input's ring, then the number of
 * the next release (acquire/release pairs): a reader that sees @p next sees
 * every count up to it. Frames the player dropped (ring full, no mbuf) are
 * in @p next but in no count.
 * @param next    releases [0, next) were attempted
 * @param counts  frames enqueued per input (n_inputs of them)
 */
void tw_player_progress(const struct tw_player *p, uint64_t *next, uint64_t *counts);

/** Releases of the whole replay (UINT64_MAX: looping until stopped). */
uint64_t tw_player_total(const struct tw_player *p);

/** The input release @p g goes to. Any thread. */
uint32_t tw_player_input_of(const struct tw_player *p, uint64_t g);

/**
 * The capture time of release @p g (ns): its frame's, moved on by a pass
 * period per pass (as its SendingTime is). Any thread.
 */
uint64_t tw_player_capture_ns(const struct tw_player *p, uint64_t g);

/**
 * The player's clock in capture time: the capture time the schedule has
 * reached at TSC @p tsc (the first frame's before the start). Any thread,
 * once started.
 */
uint64_t tw_player_capture_at(const struct tw_player *p, uint64_t tsc);

/**
 * The counters of tw_player_stats() without the error percentiles (zero):
 * any thread, at any time (relaxed loads), allocates nothing.
 */
void tw_player_counters(const struct tw_player *p, struct tw_player_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_PLAYER_H */
