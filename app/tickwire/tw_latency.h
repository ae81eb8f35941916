/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 tickwire
 */
#ifndef TICKWIRE_TW_LATENCY_H
#define TICKWIRE_TW_LATENCY_H

/**
 * @file
 * Latency records (DESIGN.md section 7): one per published book event or
 * trade, kept in a preallocated array on the decode lcore and written to a
 * file at shutdown. No DPDK here; tickwire-report reads the same format.
 *
 * File layout, every integer little-endian:
 *
 *   header, 64 bytes
 *     off size field
 *       0    8 magic "TWLAT\0\0\1"
 *       8    4 version (1)
 *      12    4 header size (64)
 *      16    4 record size (32)
 *      20    4 flags: bit 0 = one-thread topology, bit 1 = t0 from NIC
 *      24    8 tsc_hz: ticks per second of t0 and t1
 *      32    8 record count
 *      40    8 records dropped (the array was full)
 *      48   16 label, NUL padded (the topology name)
 *
 *   record, 32 bytes, in publication order
 *       0    8 t0: rx time of the packet, TSC ticks
 *       8    8 t1: the book event was published (handed to the signal), TSC ticks
 *      16    4 instrument: SecurityID (int32)
 *      20    1 stream: 0 book, 1 trade
 *      21    1 zero
 *      22    2 idx: index of the event within its packet
 *      24    4 qlen: hand-off queue depth seen at enqueue (0: direct call)
 *      28    4 MsgSeqNum of the packet
 */

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TW_LAT_MAGIC "TWLAT\0\0\1"
#define TW_LAT_VERSION 1
#define TW_LAT_HEADER_SIZE 64
#define TW_LAT_RECORD_SIZE 32
#define TW_LAT_FLAG_ONE_THREAD (1u << 0)
#define TW_LAT_FLAG_NIC_T0 (1u << 1)

/** Stream kinds of a record. */
enum tw_lat_stream {
	TW_LAT_BOOK = 0,
	TW_LAT_TRADE = 1,
};

/** One record, host representation. */
struct tw_lat_record {
	uint64_t t0;
	uint64_t t1;
	int32_t instrument;
	uint8_t stream;
	uint16_t idx;
	uint32_t qlen;
	uint32_t msg_seq_num;
};

/** File header, host representation. */
struct tw_lat_header {
	uint32_t version;
	uint32_t flags;
	uint64_t tsc_hz;
	uint64_t count;
	uint64_t dropped;
	char label[16];
};

/** Buckets of the live histogram: bucket i counts latencies in [2^i, 2^(i+1)) ticks. */
#define TW_LAT_BUCKETS 48

/** A recorder: single writer (the decode lcore), readers at any time. */
struct tw_lat_recorder {
	struct tw_lat_record *records;    /**< NULL: histogram only */
	uint64_t capacity;
	uint64_t count;
	uint64_t dropped;
	uint64_t hist[TW_LAT_BUCKETS];    /**< written with relaxed atomics */
	uint64_t max;                     /**< largest t1 - t0 */
};

/**
 * Initialise; @p capacity records are allocated (and touched) now.
 * @return 0, -ENOMEM.
 */
int tw_lat_init(struct tw_lat_recorder *r, uint64_t capacity);

/** Free the records. */
void tw_lat_fini(struct tw_lat_recorder *r);

/** Add one record (decode lcore only). */
void tw_lat_add(struct tw_lat_recorder *r, const struct tw_lat_record *rec);

/** Write the file. @return 0 or a negative errno. */
int tw_lat_write(const struct tw_lat_recorder *r, const char *path,
		 const struct tw_lat_header *header);

/**
 * Read a whole file. @p *records is malloc'd (caller frees).
 * @return 0, -EPROTO (not a latency file / bad sizes), -errno of I/O.
 */
int tw_lat_read(const char *path, struct tw_lat_header *header,
		struct tw_lat_record **records);

/** Percentile (per mille x 10, i.e. 9999 = p99.99) of the live histogram, in ticks (upper bound). */
uint64_t tw_lat_hist_percentile(const struct tw_lat_recorder *r, uint32_t per_10000);

#ifdef __cplusplus
}
#endif

#endif /* TICKWIRE_TW_LATENCY_H */
