/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * L2-L4 parser: Ethernet (VLAN, QinQ), Linux cooked, raw IPv4; IPv4; UDP/TCP.
 * Every header is read after checking it lies inside the captured bytes.
 */
#include <errno.h>
#include <string.h>

#include "tw_pcap.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define ETHERTYPE_QINQ_OLD 0x9100
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17

static const char *const l4_reason_names[TW_PCAP_L4_REASON_COUNT] = {
	[TW_PCAP_L4_OK] = "ok",
	[TW_PCAP_L4_UNSUPPORTED_LINKTYPE] = "unsupported_linktype",
	[TW_PCAP_L4_TRUNCATED_L2] = "truncated_l2",
	[TW_PCAP_L4_NOT_IPV4] = "not_ipv4",
	[TW_PCAP_L4_TOO_MANY_VLANS] = "too_many_vlans",
	[TW_PCAP_L4_BAD_IPV4_HEADER] = "bad_ipv4_header",
	[TW_PCAP_L4_TRUNCATED_IPV4] = "truncated_ipv4",
	[TW_PCAP_L4_IPV4_FRAGMENT] = "ipv4_fragment",
	[TW_PCAP_L4_NOT_UDP_OR_TCP] = "not_udp_or_tcp",
	[TW_PCAP_L4_BAD_UDP_HEADER] = "bad_udp_header",
	[TW_PCAP_L4_BAD_TCP_HEADER] = "bad_tcp_header",
};

const char *
tw_pcap_l4_reason_name(enum tw_pcap_l4_reason reason)
{
	if ((unsigned int)reason >= TW_PCAP_L4_REASON_COUNT)
		return "unknown";
	return l4_reason_names[reason];
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int
done(struct tw_pcap_l4 *out, struct tw_pcap_l4_counters *counters,
		enum tw_pcap_l4_reason reason)
{
	out->reason = reason;
	if (counters != NULL)
		counters->reason[reason]++;
	return reason == TW_PCAP_L4_OK ? 0 : -ENOMSG;
}

int
tw_pcap_parse_frame(const uint8_t *data, uint32_t caplen, uint32_t linktype,
		struct tw_pcap_l4 *out, struct tw_pcap_l4_counters *counters)
{
	uint32_t off, ihl, total, l4len, doff, udplen;
	uint16_t ethertype, frag;
	const uint8_t *ip, *l4;

	if (data == NULL || out == NULL)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	switch (linktype) {
	case TW_PCAP_LINKTYPE_ETHERNET:
		if (caplen < 14)
			return done(out, counters, TW_PCAP_L4_TRUNCATED_L2);
		off = 12;
		ethertype = be16(data + off);
		off += 2;
		while (ethertype == ETHERTYPE_VLAN || ethertype == ETHERTYPE_QINQ ||
				ethertype == ETHERTYPE_QINQ_OLD) {
			if (out->vlan_count == TW_PCAP_MAX_VLANS)
				return done(out, counters, TW_PCAP_L4_TOO_MANY_VLANS);
			if (caplen - off < 4)
				return done(out, counters, TW_PCAP_L4_TRUNCATED_L2);
			out->vlan[out->vlan_count++] = be16(data + off);
			ethertype = be16(data + off + 2);
			off += 4;
		}
		break;
	case TW_PCAP_LINKTYPE_LINUX_SLL:
		if (caplen < 16)
			return done(out, counters, TW_PCAP_L4_TRUNCATED_L2);
		ethertype = be16(data + 14);
		off = 16;
		break;
	case TW_PCAP_LINKTYPE_LINUX_SLL2:
		if (caplen < 20)
			return done(out, counters, TW_PCAP_L4_TRUNCATED_L2);
		ethertype = be16(data);
		off = 20;
		break;
	case TW_PCAP_LINKTYPE_RAW:
	case TW_PCAP_LINKTYPE_IPV4:
		if (caplen < 1)
			return done(out, counters, TW_PCAP_L4_TRUNCATED_L2);
		ethertype = (data[0] >> 4) == 4 ? ETHERTYPE_IPV4 : 0;
		off = 0;
		break;
	default:
		return done(out, counters, TW_PCAP_L4_UNSUPPORTED_LINKTYPE);
	}
	if (ethertype != ETHERTYPE_IPV4)
		return done(out, counters, TW_PCAP_L4_NOT_IPV4);
	if (caplen - off < 20)
		return done(out, counters, TW_PCAP_L4_TRUNCATED_IPV4);
	ip = data + off;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	total = be16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < 20 || total < ihl)
		return done(out, counters, TW_PCAP_L4_BAD_IPV4_HEADER);
	out->protocol = ip[9];
	out->src_ip = be32(ip + 12);
	out->dst_ip = be32(ip + 16);
	if (total > caplen - off)
		return done(out, counters, TW_PCAP_L4_TRUNCATED_IPV4);
	frag = be16(ip + 6);
	if ((frag & 0x2000) != 0 || (frag & 0x1fff) != 0)
		return done(out, counters, TW_PCAP_L4_IPV4_FRAGMENT);
	l4 = ip + ihl;
	l4len = total - ihl;
	if (out->protocol == IPPROTO_UDP_) {
		if (l4len < 8)
			return done(out, counters, TW_PCAP_L4_BAD_UDP_HEADER);
		udplen = be16(l4 + 4);
		if (udplen < 8 || udplen > l4len)
			return done(out, counters, TW_PCAP_L4_BAD_UDP_HEADER);
		out->src_port = be16(l4);
		out->dst_port = be16(l4 + 2);
		out->payload = l4 + 8;
		out->payload_length = udplen - 8;
		return done(out, counters, TW_PCAP_L4_OK);
	}
	if (out->protocol == IPPROTO_TCP_) {
		if (l4len < 20)
			return done(out, counters, TW_PCAP_L4_BAD_TCP_HEADER);
		doff = (uint32_t)(l4[12] >> 4) * 4;
		if (doff < 20 || doff > l4len)
			return done(out, counters, TW_PCAP_L4_BAD_TCP_HEADER);
		out->src_port = be16(l4);
		out->dst_port = be16(l4 + 2);
		out->tcp_seq = be32(l4 + 4);
		out->tcp_flags = l4[13];
		out->payload = l4 + doff;
		out->payload_length = l4len - doff;
		return done(out, counters, TW_PCAP_L4_OK);
	}
	return done(out, counters, TW_PCAP_L4_NOT_UDP_OR_TCP);
}
