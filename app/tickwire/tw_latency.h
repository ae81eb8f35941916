/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_LATENCY_H
#define TICKWIRE_TW_LATENCY_H

/**
 * @file
 * Latency records (DESIGN.md section 7): one per published book event or
 * trade, and one per order, kept in preallocated arrays (one per writing
 * thread: the decode lcore's for book events, order-out's for orders) and
 * written to one file at shutdown. No DPDK here; tickwire-report reads the
 * same format.
 *
 * The four stamps, all on one clock (the TSC, tsc_hz ticks a second):
 *   t0  arrival: the packet became available on the rx path (paced replay:
 *       the player's release into the port's rx ring; otherwise the TSC
 *       read when its rx burst returned, per packet, before any packet of
 *       the burst ran the chain)
 *   t1  the book event was published (handed to the signal)
 *   t2  the signal had decided: book events, when the signal returned;
 *       orders, when the strategy handed the order to order-out
 *   t3  the order was handed to the tx queue (orders only)
 * A stamp that does not apply is 0.
 *
 * File layout, every integer little-endian:
 *
 *   header, 128 bytes
 *     off size field
 *       0    8 magic "TWLAT\0\0\2"
 *       8    4 version (2)
 *      12    4 header size (128)
 *      16    4 record size (64)
 *      20    4 flags: bit 0 one-thread topology, bit 1 t0 from the NIC,
 *                     bit 2 paced replay, bit 3 t0 is a capture time (a
 *                     replayed capture's timestamps, --rx-clock nic on
 *                     net_pcap): not a clock t1 can be read against, so
 *                     t1 - t0 is no latency
 *      24    8 tsc_hz: ticks per second of t0 .. t3
 *      32    8 record count
 *      40    8 records dropped (an array was full)
 *      48   16 label, NUL padded (the topology name)
 *      64    8 speed_milli: replay speed x 1000 (1000 = real time; 0 = unpaced)
 *      72    8 start_tsc: the TSC of the schedule's origin (paced; the first
 *              packet's scheduled release); capture offset of a t0 =
 *              (t0 - start_tsc) / tsc_hz x speed
 *      80    8 player error p50, ns (actual - scheduled release; paced)
 *      88    8 player error p99, ns
 *      96    8 player error p99.9, ns
 *     104    8 player error max, ns
 *     112    8 packets released by the player (paced)
 *     120    8 rx drops: packets lost before the decode group (player's rx
 *              ring full, hand-off full)
 *
 *   record, 64 bytes, decode records in publication order, then orders
 *       0    8 t0
 *       8    8 t1
 *      16    8 t2
 *      24    8 t3
 *      32    4 instrument: SecurityID (int32)
 *      36    1 stream: 0 book, 1 trade, 2 order
 *      37    1 burst_idx: position of the packet in the rx burst that read it
 *              (saturates at 255)
 *      38    2 idx: index in its packet of the SBE message that published it
 *      40    2 n_msgs: SBE messages in the packet
 *      42    2 event: index of the event in its packet
 *      44    4 qlen: packets ahead of it in the hand-off queue at enqueue
 *              (two-stage; 0 one-thread)
 *      48    4 rxq: packets ahead of it in the rx queue when it arrived
 *              (paced replay; flags bit 0)
 *      52    4 MsgSeqNum of the packet
 *      56    4 orders: client_order_id; book and trade: wait, the ticks from
 *              t0 to the decode group taking the packet (the arbiter's
 *              handler began; saturates at 2^32 - 1): t1 - t0 - wait is
 *              the decode group's own time
 *      60    4 flags: bit 0 rxq is known
 */

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TW_LAT_MAGIC "TWLAT\0\0\2"
#define TW_LAT_VERSION 2
#define TW_LAT_HEADER_SIZE 128
#define TW_LAT_RECORD_SIZE 64
#define TW_LAT_FLAG_ONE_THREAD (1u << 0)
#define TW_LAT_FLAG_NIC_T0 (1u << 1)
#define TW_LAT_FLAG_PACED (1u << 2)
#define TW_LAT_FLAG_CAPTURE_T0 (1u << 3)
/** record flags */
#define TW_LAT_REC_RXQ (1u << 0)

/** Stream kinds of a record. */
enum tw_lat_stream {
	TW_LAT_BOOK = 0,
	TW_LAT_TRADE = 1,
	TW_LAT_ORDER = 2,
};

/** One record, host representation. */
struct tw_lat_record {
	uint64_t t0;
	uint64_t t1;
	uint64_t t2;
	uint64_t t3;
	int32_t instrument;
	uint8_t stream;
	uint8_t burst_idx;
	uint16_t idx;
	uint16_t n_msgs;
	uint16_t event;
	uint32_t qlen;
	uint32_t rxq;
	uint32_t msg_seq_num;
	uint32_t order_id;                /**< orders */
	uint32_t wait;                    /**< book and trade: t0 -> decode group, ticks */
	uint32_t flags;
};

/** File header, host representation. */
struct tw_lat_header {
	uint32_t version;
	uint32_t flags;
	uint64_t tsc_hz;
	uint64_t count;
	uint64_t dropped;
	char label[16];
	uint64_t speed_milli;
	uint64_t start_tsc;
	uint64_t player_err_ns[4];        /**< p50, p99, p99.9, max */
	uint64_t player_packets;
	uint64_t rx_drops;
};

/** Buckets of the live histogram: bucket i counts latencies in [2^i, 2^(i+1)) ticks. */
#define TW_LAT_BUCKETS 48

/** A recorder: single writer, readers at any time. */
struct tw_lat_recorder {
	struct tw_lat_record *records;    /**< NULL: histogram only */
	uint64_t capacity;
	uint64_t count;
	uint64_t dropped;
	uint64_t hist[TW_LAT_BUCKETS];    /**< t1 - t0 (t3 - t0 for orders); relaxed atomics */
	uint64_t max;                     /**< largest of those */
};

/**
 * Initialise; @p capacity records are allocated (and touched) now.
 * @return 0, -ENOMEM.
 */
int tw_lat_init(struct tw_lat_recorder *r, uint64_t capacity);

/** Free the records. */
void tw_lat_fini(struct tw_lat_recorder *r);

/**
 * Add one record (the recorder's one writer). The histogram takes t1 - t0,
 * or t3 - t0 for an order.
 * @return the stored record, which the writer may still complete (t2,
 *         n_msgs), or NULL if the array was full (counted in dropped).
 */
struct tw_lat_record *tw_lat_add(struct tw_lat_recorder *r, const struct tw_lat_record *rec);

/**
 * Write the file: the records of @p n recorders, one after the other.
 * header->count and ->dropped are the sums over them.
 * @return 0 or a negative errno.
 */
int tw_lat_write(const struct tw_lat_recorder *const *r, unsigned int n, const char *path,
		 const struct tw_lat_header *header);

/**
 * Read a whole file. @p *records is malloc'd (caller frees).
 * @return 0, -EPROTO (not a latency file of this version / bad sizes),
 *         -errno of I/O.
 */
int tw_lat_read(const char *path, struct tw_lat_header *header,
		struct tw_lat_record **records);

/**
 * A replay speed: "1" (real time), "10", "0.5", ... or "max" (unpaced, 0).
 * @return 0 with *@p milli = speed x 1000, or -EINVAL.
 */
int tw_lat_parse_speed(const char *s, uint64_t *milli);

/**
 * Nearest-rank percentiles of @p n values (sorted in place): @p out[k] is
 * the @p per_10000[k] / 10000 quantile, for k < @p k_count. n = 0: zeros.
 */
void tw_lat_percentiles_u32(uint32_t *values, uint64_t n, const uint32_t *per_10000,
			    unsigned int k_count, uint64_t *out);

/** Percentile (per mille x 10, i.e. 9999 = p99.99) of the live histogram, in ticks (upper bound). */
uint64_t tw_lat_hist_percentile(const struct tw_lat_recorder *r, uint32_t per_10000);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_LATENCY_H */
