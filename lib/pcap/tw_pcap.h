/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * A small capture-file reader (no libpcap) and an L2-L4 frame parser, for
 * tools that run without DPDK.
 *
 * Reader: classic pcap (microsecond magic 0xa1b2c3d4 and nanosecond magic
 * 0xa1b23c4d, either byte order) and pcapng (sections SHB, interfaces IDB with
 * if_tsresol / if_tsoffset, packets EPB, SPB and the obsolete PB; other blocks
 * are skipped).  The file is mapped read-only; frames point into the mapping
 * and stay valid until tw_pcap_close().  Timestamps come out as nanoseconds
 * since the Unix epoch, computed with integers only.
 *
 * Parser: Ethernet II, 802.1Q / 802.1ad VLAN tags (QinQ included), Linux
 * cooked captures (SLL, SLL2) and raw IPv4; IPv4 (fragments are counted and
 * not reassembled); UDP; TCP (payload of one segment, no stream reassembly).
 *
 * Error convention: tw_pcap_open() returns a handle or NULL with errno set;
 * the other calls return 0 / 1 or a negative errno.  Nothing prints or exits.
 * A handle is used by one thread at a time; tw_pcap_parse_frame() is
 * reentrant.
 */
#ifndef TW_PCAP_H
#define TW_PCAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Link types (LINKTYPE_* of the pcap and pcapng formats) the parser knows. */
#define TW_PCAP_LINKTYPE_ETHERNET 1
#define TW_PCAP_LINKTYPE_RAW 101
#define TW_PCAP_LINKTYPE_LINUX_SLL 113
#define TW_PCAP_LINKTYPE_IPV4 228
#define TW_PCAP_LINKTYPE_LINUX_SLL2 276

/** File formats. */
enum tw_pcap_format {
	TW_PCAP_FORMAT_CLASSIC_USEC,
	TW_PCAP_FORMAT_CLASSIC_NSEC,
	TW_PCAP_FORMAT_PCAPNG,
};

/** One captured frame. */
struct tw_pcap_frame {
	uint64_t number;        /**< 1-based frame number in the file */
	uint64_t time_ns;       /**< capture time, ns since the Unix epoch */
	const uint8_t *data;    /**< captured bytes (valid until tw_pcap_close) */
	uint32_t caplen;        /**< bytes captured */
	uint32_t origlen;       /**< bytes on the wire */
	uint32_t linktype;      /**< link type of the frame's interface */
	uint32_t interface_id;  /**< pcapng interface; 0 for classic pcap */
	uint64_t file_offset;   /**< offset of the record / block in the file */
};

struct tw_pcap;

/**
 * Open and map a capture file and read its header.
 *
 * @param path  file name.
 * @return a handle, or NULL with errno: the open/mmap/fstat error, EINVAL for
 *         a NULL path, EPROTO when the file is neither pcap nor pcapng (or
 *         its header is cut short).  tw_pcap_error() cannot be called then;
 *         the caller names the file.
 * Thread safety: any thread.
 */
struct tw_pcap *tw_pcap_open(const char *path);

/**
 * Read a capture held in memory (not copied; must outlive the handle).
 * @return a handle, or NULL with errno EINVAL / EPROTO / ENOMEM.
 */
struct tw_pcap *tw_pcap_open_memory(const void *data, size_t length);

/**
 * Next frame.
 *
 * @param pcap   handle.
 * @param frame  filled on success.
 * @return 1 with *frame set; 0 at the clean end of the file; -EPROTO when the
 *         file is corrupt or cut inside a record/block (tw_pcap_error() says
 *         what and where; the frame number at fault is the last one returned
 *         plus one); -EINVAL on NULL arguments.  After an error every call
 *         returns the same error.
 * Thread safety: the handle's user only.
 */
int tw_pcap_next(struct tw_pcap *pcap, struct tw_pcap_frame *frame);

/** The format of the file. */
enum tw_pcap_format tw_pcap_format(const struct tw_pcap *pcap);

/**
 * Description of the last error of tw_pcap_next() (static storage inside the
 * handle, valid until the next call), or "" if none.
 */
const char *tw_pcap_error(const struct tw_pcap *pcap);

/** Unmap and free.  NULL is accepted. */
void tw_pcap_close(struct tw_pcap *pcap);

/* ------------------------------------------------------------------------ */
/* L2-L4 parser                                                              */
/* ------------------------------------------------------------------------ */

/** Why a frame is not an IPv4 UDP/TCP datagram with a payload. */
enum tw_pcap_l4_reason {
	TW_PCAP_L4_OK = 0,
	TW_PCAP_L4_UNSUPPORTED_LINKTYPE,
	TW_PCAP_L4_TRUNCATED_L2,      /**< frame shorter than its L2 header */
	TW_PCAP_L4_NOT_IPV4,          /**< ethertype / protocol is not IPv4 */
	TW_PCAP_L4_TOO_MANY_VLANS,    /**< more than TW_PCAP_MAX_VLANS tags */
	TW_PCAP_L4_BAD_IPV4_HEADER,   /**< version, IHL or total length invalid */
	TW_PCAP_L4_TRUNCATED_IPV4,    /**< total length past the captured bytes */
	TW_PCAP_L4_IPV4_FRAGMENT,     /**< MF set or fragment offset > 0 */
	TW_PCAP_L4_NOT_UDP_OR_TCP,    /**< other IP protocol (see protocol) */
	TW_PCAP_L4_BAD_UDP_HEADER,    /**< UDP length invalid */
	TW_PCAP_L4_BAD_TCP_HEADER,    /**< TCP data offset invalid */
	TW_PCAP_L4_REASON_COUNT
};

/** Most VLAN tags the parser walks through. */
#define TW_PCAP_MAX_VLANS 4

/** Parsed L2-L4 headers of a frame. */
struct tw_pcap_l4 {
	enum tw_pcap_l4_reason reason;
	uint8_t protocol;            /**< IP protocol (17 UDP, 6 TCP ...) */
	uint8_t vlan_count;
	uint16_t vlan[TW_PCAP_MAX_VLANS]; /**< TCI of each tag, outer first */
	uint32_t src_ip;             /**< host byte order */
	uint32_t dst_ip;             /**< host byte order */
	uint16_t src_port;
	uint16_t dst_port;
	uint32_t tcp_seq;
	uint8_t tcp_flags;
	const uint8_t *payload;      /**< UDP / TCP payload */
	uint32_t payload_length;
};

/** Parser counters, per reason (reason[TW_PCAP_L4_OK] counts good frames). */
struct tw_pcap_l4_counters {
	uint64_t reason[TW_PCAP_L4_REASON_COUNT];
};

/**
 * Parse a frame down to its UDP or TCP payload.  The payload is trimmed to
 * the IPv4 total length and the UDP length (Ethernet padding is dropped).
 * Checksums are not verified (captures with offload often have bad ones).
 *
 * @param data      frame bytes.
 * @param caplen    bytes captured.
 * @param linktype  TW_PCAP_LINKTYPE_*.
 * @param out       result; out->reason set on every return.
 * @param counters  incremented for the outcome; may be NULL.
 * @return 0 for an IPv4 UDP or TCP frame; -ENOMSG otherwise (out->reason
 *         says why; for TW_PCAP_L4_NOT_UDP_OR_TCP out->protocol and the
 *         addresses are set); -EINVAL on NULL arguments.
 * Thread safety: reentrant.
 */
int tw_pcap_parse_frame(const uint8_t *data, uint32_t caplen, uint32_t linktype,
		struct tw_pcap_l4 *out, struct tw_pcap_l4_counters *counters);

/** Name of a parser reason ("ipv4_fragment" ...); "unknown" if out of range. */
const char *tw_pcap_l4_reason_name(enum tw_pcap_l4_reason reason);

#ifdef __cplusplus
}
#endif

#endif /* TW_PCAP_H */
