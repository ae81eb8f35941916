/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * One output feed of tickwire-synth (incremental A, incremental B or the
 * snapshot channel): a pcap file, a UDP flow and controlled impairments.
 *
 * For every packet sent, five random numbers are drawn from the feed's own
 * stream whatever happens to the packet, so the fate of packet n depends only
 * on the seed, the feed and n (changing --drop-a does not move B's losses or
 * A's duplicates).  A packet is
 *   - dropped with probability drop (or when forced: a gap on both feeds);
 *   - otherwise held back with probability reorder and written after 1-3
 *     later packets of the feed (so it arrives after a higher MsgSeqNum);
 *   - and, independently, duplicated with probability dup: the copy follows
 *     the original directly or after up to two later packets.
 * Capture times never go backwards in a file: a late packet takes the time of
 * the packet before it (plus 50 ns).  At most SYNTH_FEED_MAX_HELD packets
 * wait at once; when full, a packet is written in order (not counted as
 * reordered) and a duplicate follows its original at once.
 */
#ifndef SYNTH_FEED_H
#define SYNTH_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "synth_pcap.h"
#include "synth_random.h"

#define SYNTH_FEED_MAX_HELD 16
/** Largest MDP payload the generator builds (UDP payload of a 1500 MTU). */
#define SYNTH_FEED_MAX_PAYLOAD 1472

struct synth_feed_counters {
	uint64_t packets;        /**< packets offered */
	uint64_t records;        /**< frames written (copies included) */
	uint64_t dropped;        /**< random drops */
	uint64_t gap_dropped;    /**< forced drops (gaps on both feeds) */
	uint64_t duplicated;     /**< extra copies written */
	uint64_t reordered;      /**< packets written after a later one */
};

struct synth_feed_held {
	uint64_t time_ns;
	uint32_t wait;           /**< packets still to be written before this one */
	uint16_t len;
	uint8_t data[SYNTH_FEED_MAX_PAYLOAD];
};

struct synth_feed {
	const char *name;        /**< "A", "B", "snapshot" (for messages) */
	const char *path;
	struct synth_pcap pcap;
	struct synth_flow flow;
	uint64_t drop;           /**< probabilities, Q32.32 */
	uint64_t dup;
	uint64_t reorder;
	struct synth_rng rng;
	uint64_t last_time_ns;
	unsigned int held_count;
	struct synth_feed_held held[SYNTH_FEED_MAX_HELD];
	struct synth_feed_counters counters;
};

/**
 * Open the feed's file.  The caller sets name, path, flow, drop, dup and
 * reorder first; rng is seeded here from seed and stream.
 * @return 0 or -errno (see synth_pcap_open).
 */
int synth_feed_open(struct synth_feed *feed, uint64_t seed, uint64_t stream);

/**
 * Offer one packet (payload of len bytes) due at time_ns.
 * @param force_drop  drop it whatever the draws say (counted in gap_dropped).
 * @return 0 or a negative errno of the writer.
 */
int synth_feed_send(struct synth_feed *feed, uint64_t time_ns, const uint8_t *payload,
		uint16_t len, bool force_drop);

/** Write every held packet, then close the file.  0 or a negative errno. */
int synth_feed_close(struct synth_feed *feed);

#endif /* SYNTH_FEED_H */
