/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * CME MDP 3.0 feed handling ahead of the decoder: which multicast group is
 * which stream and feed (routes), and A/B arbitration of the incremental
 * stream by packet MsgSeqNum.
 *
 * CME sends every incremental packet twice, on feed A and feed B, with the
 * same MsgSeqNum (the first 4 bytes of the binary packet header).  The
 * arbiter delivers each sequence number once, in order:
 *
 *  - the first copy wins; a later copy of a delivered (or declared lost)
 *    sequence number is a duplicate, counted and dropped;
 *  - a packet ahead of the next expected number opens a gap: it is copied
 *    into a preallocated ring of `window` slots and held;
 *  - a gap waits for the other feed at most `wait_packets` arrivals (either
 *    feed, duplicates included) and/or `wait_ns` of packet rx time, both
 *    counted from the arrival of the first held packet after the gap; then
 *    the missing numbers are declared lost (counted, reported through
 *    on_loss) and the held packets are released in order;
 *  - a packet more than `window - 1` ahead forces the oldest gaps to be
 *    declared lost at once, so that it fits (counted as window_overflows).
 *
 * Time is whatever the caller passes as rx_ns (NIC or capture timestamp,
 * TSC converted to ns ...): the library never reads a clock.  Between
 * packets, mdp3_arb_poll() lets time-bounded gaps expire.
 *
 * A delivery the consumer rejects (its callback returns a negative value,
 * e.g. the walker's -EBADMSG for a malformed copy) does not consume the
 * sequence number: the other feed's copy can still fill it.
 *
 * Bounds: window <= MDP3_ARB_WINDOW_MAX slots of max_packet_size bytes,
 * allocated once; push, poll and flush never allocate.  Cost of a push: O(1)
 * amortized (each sequence number is released or declared lost once; a
 * window overflow walks at most `window` slots).
 *
 * Threads: an arbiter belongs to one thread (the decode lcore).  Callbacks
 * run on that thread, inside push/poll/flush, and must not call back into
 * the same arbiter.  Routes are read-only after setup and may be shared.
 *
 * Error convention: constructors return a pointer or NULL with errno set;
 * operations return a non-negative value or a negative errno.
 */
#ifndef MDP3_FEED_H
#define MDP3_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The two redundant copies of a CME multicast stream. */
enum mdp3_feed_id {
	MDP3_FEED_A = 0,
	MDP3_FEED_B = 1,
	MDP3_FEED_COUNT
};

/** What a multicast stream of a channel carries. */
enum mdp3_stream {
	MDP3_STREAM_INCREMENTAL = 0, /**< real-time incremental refresh (arbitrated) */
	MDP3_STREAM_SNAPSHOT,        /**< market recovery: SnapshotFullRefresh loop */
	MDP3_STREAM_DEFINITION,      /**< instrument replay: definitions loop */
	MDP3_STREAM_COUNT
};

/* ------------------------------------------------------------------------ */
/* Routes: destination group (and port) -> stream and feed                   */
/* ------------------------------------------------------------------------ */

/** Most routes a table holds. */
#define MDP3_ROUTES_MAX 32

/** First default route: CME incremental feed A groups, 224.0.31.0/24. */
#define MDP3_ROUTE_DEFAULT_A_GROUP UINT32_C(0xE0001F00)
/** Second default route: CME incremental feed B groups, 224.0.32.0/24. */
#define MDP3_ROUTE_DEFAULT_B_GROUP UINT32_C(0xE0002000)
/** Prefix length of both default routes. */
#define MDP3_ROUTE_DEFAULT_PREFIX 24

/** One route: datagrams to group/prefix_len (and port, unless 0). */
struct mdp3_route {
	uint32_t group;       /**< IPv4 address, host byte order */
	uint8_t prefix_len;   /**< 0..32 leading bits of group that must match */
	uint8_t stream;       /**< enum mdp3_stream */
	uint8_t feed;         /**< enum mdp3_feed_id */
	uint16_t port;        /**< UDP destination port; 0 matches any */
};

/** A route table; fill with mdp3_routes_init() / mdp3_routes_add(). */
struct mdp3_routes {
	struct mdp3_route route[MDP3_ROUTES_MAX];
	uint32_t count;
};

/**
 * Initialise a route table.
 *
 * With defaults, the table holds CME's convention for incremental feeds:
 * 224.0.31.0/24 -> incremental, feed A; 224.0.32.0/24 -> incremental, feed B
 * (e.g. channel 340: A 224.0.31.64:14340, B 224.0.32.64:15340).  In CME's
 * production configuration the market-recovery and instrument-replay groups
 * of a channel live in the same /24s (channel 310: snapshot 224.0.31.22,
 * replay 224.0.31.43): add /32 routes for them, which win by being more
 * specific.
 *
 * @param routes    table to initialise.
 * @param defaults  true: add the two default routes; false: empty table.
 * @return 0, or -EINVAL if routes is NULL.
 * Thread safety: touches only *routes.
 */
int mdp3_routes_init(struct mdp3_routes *routes, bool defaults);

/**
 * Add a route, or replace the route with the same group, prefix and port.
 *
 * @return 0; -EINVAL for a NULL argument, prefix_len > 32, or a stream or
 *         feed out of range; -ENOSPC when MDP3_ROUTES_MAX routes are held.
 * Thread safety: touches only *routes (no concurrent readers).
 */
int mdp3_routes_add(struct mdp3_routes *routes, const struct mdp3_route *route);

/**
 * Remove every route of a stream and feed (e.g. before overriding the
 * default feed A group).
 * @return how many routes were removed, or -EINVAL for NULL.
 * Thread safety: touches only *routes (no concurrent readers).
 */
int mdp3_routes_remove(struct mdp3_routes *routes, enum mdp3_stream stream,
		enum mdp3_feed_id feed);

/**
 * Find the route of a datagram: the most specific match (longest prefix; at
 * equal prefix, a route with a port beats one without).
 *
 * @param routes  table.
 * @param ip      destination address, host byte order.
 * @param port    destination UDP port.
 * @param out     the route found; may be NULL.
 * @return 0; -ENOENT when nothing matches; -EINVAL when routes is NULL.
 * Thread safety: any thread (read-only).
 */
int mdp3_routes_match(const struct mdp3_routes *routes, uint32_t ip, uint16_t port,
		struct mdp3_route *out);

/**
 * Parse "A.B.C.D[/LEN][:PORT]" (LEN defaults to 32, PORT to 0 = any).
 *
 * @return 0 with group, prefix_len and port of *route set (stream and feed
 *         untouched); -EINVAL when the text is malformed or an argument NULL.
 * Thread safety: reentrant.
 */
int mdp3_route_parse(const char *text, struct mdp3_route *route);

/* ------------------------------------------------------------------------ */
/* A/B arbitration                                                            */
/* ------------------------------------------------------------------------ */

/** Largest hold window (slots). */
#define MDP3_ARB_WINDOW_MAX 65536u
/** Default hold window (slots). */
#define MDP3_ARB_DEFAULT_WINDOW 64u
/** Default largest packet that can be held (CME packets stay under 1420). */
#define MDP3_ARB_DEFAULT_MAX_PACKET 1472u
/** Default wait of a gap, in packets arrived after it was seen. */
#define MDP3_ARB_DEFAULT_WAIT_PACKETS 32u
/** Default wait of a gap, in ns of rx time after it was seen (1 ms). */
#define MDP3_ARB_DEFAULT_WAIT_NS UINT64_C(1000000)

/** Arbiter configuration; zero fields take the defaults above. */
struct mdp3_arb_config {
	uint32_t window;          /**< held packets at most: power of two, 2..65536 */
	uint32_t max_packet_size; /**< bytes of the largest packet that can be held */
	/**
	 * Declare a gap lost after this many arrivals (either feed) since the
	 * first packet held behind it.  0 with wait_ns set: no packet bound.
	 */
	uint32_t wait_packets;
	/** ... or after this many ns of rx time.  0 with wait_packets set: no time bound. */
	uint64_t wait_ns;
	/** Next expected MsgSeqNum at start; 0: the first packet seen sets it. */
	uint32_t initial_seq;
	/**
	 * A packet this far or more behind the next expected number is taken as
	 * a sequence reset by the exchange (everything held is released, losses
	 * declared, and the sequence restarts at it).  0: never (reset with
	 * mdp3_arb_reset()).
	 */
	uint32_t reset_distance;
};

/** A packet being delivered in sequence. */
struct mdp3_arb_packet {
	const uint8_t *data;      /**< the packet (caller's buffer, or a ring copy) */
	uint32_t length;          /**< bytes */
	uint32_t seq;             /**< its MsgSeqNum */
	uint64_t rx_ns;           /**< rx time the caller gave with it */
	uint8_t feed;             /**< enum mdp3_feed_id of the copy delivered */
	bool held;                /**< came out of the hold ring */
};

/**
 * Delivery callback: one packet, in sequence.  Runs inside push/poll/flush.
 * The data is valid only during the call.  Return 0 to accept; a negative
 * value rejects this copy: the sequence number stays expected (counted in
 * rejected[feed]).
 */
typedef int (*mdp3_arb_deliver_fn)(void *ctx, const struct mdp3_arb_packet *packet);

/**
 * Loss callback (optional): sequence numbers first_seq .. first_seq+count-1
 * were declared lost (missing on both feeds).  now_ns is the time that
 * expired the wait (or of the packet that overflowed the window).
 */
typedef void (*mdp3_arb_loss_fn)(void *ctx, uint32_t first_seq, uint32_t count,
		uint64_t now_ns);

/** Consumer of an arbiter. */
struct mdp3_arb_handler {
	mdp3_arb_deliver_fn deliver; /**< required */
	mdp3_arb_loss_fn loss;       /**< may be NULL */
	void *ctx;
};

/** Arbiter counters (monotonic, except held_now). */
struct mdp3_arb_counters {
	uint64_t packets[MDP3_FEED_COUNT];    /**< copies pushed, per feed */
	uint64_t accepted[MDP3_FEED_COUNT];   /**< copies delivered and accepted, per feed */
	uint64_t duplicates[MDP3_FEED_COUNT]; /**< copies of a number already delivered,
	                                           held or declared lost */
	uint64_t rejected[MDP3_FEED_COUNT];   /**< copies the consumer refused */
	uint64_t short_packets;     /**< under 4 bytes: no MsgSeqNum, dropped */
	uint64_t oversize;          /**< ahead of sequence but larger than a slot: dropped */
	uint64_t gaps;              /**< missing runs seen (a held packet whose
	                                 predecessor is missing) */
	uint64_t gaps_filled;       /**< expected numbers that arrived late, while
	                                 later ones were held, and were delivered */
	uint64_t losses;            /**< ranges declared lost */
	uint64_t lost_packets;      /**< sequence numbers declared lost */
	uint64_t window_overflows;  /**< losses forced by a packet beyond the window */
	uint64_t held;              /**< packets copied into the hold ring */
	uint64_t held_now;          /**< packets in the ring now */
	uint64_t max_held;          /**< most packets in the ring at once */
	uint64_t max_hold_ns;       /**< longest rx-time wait of a released packet */
	uint64_t seq_resets;        /**< sequence resets (reset_distance or mdp3_arb_reset) */
};

/** An arbiter (opaque). */
struct mdp3_arb;

/**
 * Bytes an arbiter with this configuration needs (for mdp3_arb_init()).
 * @return the size, or 0 with errno = EINVAL for an invalid configuration
 *         (window not a power of two in 2..65536, max_packet_size 0 or over
 *         65535 after defaults).
 * Thread safety: any thread.
 */
size_t mdp3_arb_memsize(const struct mdp3_arb_config *config);

/**
 * Build an arbiter in caller memory (e.g. hugepages on the rx NUMA node).
 *
 * @param mem      at least mdp3_arb_memsize() bytes, 64-byte aligned.
 * @param size     bytes at mem.
 * @param config   configuration (copied); NULL for all defaults.
 * @param handler  callbacks (copied); deliver is required.
 * @return the arbiter (at mem), or NULL with errno = EINVAL (bad argument or
 *         configuration, misaligned mem) or ENOSPC (size too small).
 * Thread safety: touches only mem.
 */
struct mdp3_arb *mdp3_arb_init(void *mem, size_t size, const struct mdp3_arb_config *config,
		const struct mdp3_arb_handler *handler);

/**
 * Allocate and build an arbiter (mdp3_arb_init() in aligned heap memory).
 * @return the arbiter, or NULL with errno = EINVAL or ENOMEM.
 * Thread safety: any thread.
 */
struct mdp3_arb *mdp3_arb_create(const struct mdp3_arb_config *config,
		const struct mdp3_arb_handler *handler);

/**
 * Free an arbiter from mdp3_arb_create() (one from mdp3_arb_init() lives in
 * the caller's memory and is left alone); NULL is accepted.
 * Thread safety: the arbiter's thread, once it is no longer used.
 */
void mdp3_arb_destroy(struct mdp3_arb *arb);

/** What mdp3_arb_push() did with a copy. */
enum mdp3_arb_verdict {
	MDP3_ARB_DELIVERED = 0, /**< in sequence: delivered (and held successors released) */
	MDP3_ARB_HELD,          /**< ahead of sequence: copied into the ring */
	MDP3_ARB_DUPLICATE,     /**< number already delivered, held or declared lost */
	MDP3_ARB_REJECTED,      /**< in sequence but the consumer refused it */
	MDP3_ARB_DROPPED,       /**< too short to carry a MsgSeqNum, or too large to hold */
};

/**
 * Offer one received copy of a packet.
 *
 * @param arb     arbiter.
 * @param feed    MDP3_FEED_A or MDP3_FEED_B.
 * @param data    UDP payload (binary packet header first); only read.
 * @param length  bytes at data.
 * @param rx_ns   rx time of the copy, ns (any epoch, the same for both feeds).
 * @return an enum mdp3_arb_verdict (>= 0), or -EINVAL for a NULL arb/data or
 *         a feed out of range.  Gaps whose wait_ns ran out before rx_ns
 *         are declared lost before the copy is taken (it cannot fill
 *         them), so verdicts do not depend on when mdp3_arb_poll() ran;
 *         gaps expired at rx_ns (or by wait_packets) after it. Held
 *         packets behind them are released before it returns.
 * Thread safety: the arbiter's thread only.  No allocation.
 */
int mdp3_arb_push(struct mdp3_arb *arb, enum mdp3_feed_id feed, const uint8_t *data,
		size_t length, uint64_t rx_ns);

/**
 * Let time pass without a packet: gaps older than wait_ns at now_ns are
 * declared lost and the packets behind them released.
 * @return packets released, or -EINVAL for NULL.
 * Thread safety: the arbiter's thread only.  No allocation.
 */
int mdp3_arb_poll(struct mdp3_arb *arb, uint64_t now_ns);

/**
 * End of input (end of a capture, feed shutdown): declare every open gap
 * lost and release everything held.
 * @return packets released, or -EINVAL for NULL.
 * Thread safety: the arbiter's thread only.  No allocation.
 */
int mdp3_arb_flush(struct mdp3_arb *arb, uint64_t now_ns);

/**
 * Forget the sequence (exchange sequence reset, new session): drop what is
 * held (not delivered, not declared lost); the next packet sets the sequence.
 * Counters are kept (seq_resets incremented).
 * Thread safety: the arbiter's thread only.
 */
void mdp3_arb_reset(struct mdp3_arb *arb);

/**
 * Next sequence number the arbiter will deliver, and whether it knows one.
 * @param seq  where to store it; may be NULL.
 * @return true with *seq set once a first packet (or initial_seq) set it;
 *         false before, or for a NULL arb.
 * Thread safety: the arbiter's thread (or while it is idle).
 */
bool mdp3_arb_next_seq(const struct mdp3_arb *arb, uint32_t *seq);

/**
 * Counters of an arbiter.
 * @return a pointer valid while the arbiter lives, NULL for NULL.
 * Thread safety: read on the arbiter's thread or while it is idle.
 */
const struct mdp3_arb_counters *mdp3_arb_counters(const struct mdp3_arb *arb);

/**
 * The configuration in use, defaults filled in.
 * @return a pointer valid while the arbiter lives, NULL for NULL.
 * Thread safety: any thread (constant after init).
 */
const struct mdp3_arb_config *mdp3_arb_config(const struct mdp3_arb *arb);

/** Name of a feed ("A", "B"), "?" out of range.  Any thread. */
const char *mdp3_feed_name(enum mdp3_feed_id feed);

/** Name of a stream ("incremental", "snapshot", "definition"), "?" out of range.  Any thread. */
const char *mdp3_stream_name(enum mdp3_stream stream);

#ifdef __cplusplus
}
#endif

#endif /* MDP3_FEED_H */
