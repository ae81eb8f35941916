/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Classic pcap writer (nanosecond magic 0xa1b23c4d, little-endian, link type
 * Ethernet) of IPv4/UDP multicast frames: Ethernet II to the group's
 * 01:00:5e MAC, IPv4 with a valid header checksum (DF, TTL 32), UDP with a
 * valid checksum.  Single-threaded; returns 0 or a negative errno.
 */
#ifndef SYNTH_PCAP_H
#define SYNTH_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Largest UDP payload a frame may carry (Ethernet MTU 9000 jumbo at most). */
#define SYNTH_PCAP_MAX_PAYLOAD 8972
/** Ethernet + IPv4 + UDP header bytes. */
#define SYNTH_PCAP_L2_L4_SIZE 42

/** Source and destination of a UDP flow; addresses in host byte order. */
struct synth_flow {
	uint8_t src_mac[6];
	uint32_t src_ip;
	uint32_t dst_ip;
	uint16_t src_port;
	uint16_t dst_port;
};

struct synth_pcap {
	FILE *file;
	uint64_t records;
	uint64_t bytes;
	uint16_t ip_id;          /**< IPv4 identification of the next frame */
};

/**
 * Create path and write the file header.
 * @return 0, or -errno of fopen/fwrite.
 */
int synth_pcap_open(struct synth_pcap *pcap, const char *path);

/**
 * Append one frame carrying payload to flow, captured at time_ns.
 * @return 0; -EMSGSIZE if len > SYNTH_PCAP_MAX_PAYLOAD; -EIO on a write error.
 */
int synth_pcap_write_udp(struct synth_pcap *pcap, uint64_t time_ns,
		const struct synth_flow *flow, const uint8_t *payload, size_t len);

/** Flush and close; 0 or -errno of the failed write/close.  NULL file is fine. */
int synth_pcap_close(struct synth_pcap *pcap);

#endif /* SYNTH_PCAP_H */
