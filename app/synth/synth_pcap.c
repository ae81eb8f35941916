/* SPDX-License-Identifier: BSD-3-Clause */
/* Classic nanosecond pcap writer of Ethernet/IPv4/UDP frames (synth_pcap.h). */
#include <errno.h>
#include <string.h>

#include "synth_pcap.h"

#define PCAP_MAGIC_NSEC UINT32_C(0xa1b23c4d)
#define PCAP_SNAPLEN 65535
#define LINKTYPE_ETHERNET 1
#define ETHERTYPE_IPV4 0x0800
#define IPPROTO_UDP_NUMBER 17
#define IPV4_TTL 32
#define IPV4_FLAG_DF 0x4000

static void
put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void
put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static void
put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

/* One's complement sum of big-endian 16-bit words (odd byte padded). */
static uint32_t
sum16(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static uint16_t
fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

int
synth_pcap_open(struct synth_pcap *pcap, const char *path)
{
	uint8_t hdr[24];

	memset(pcap, 0, sizeof(*pcap));
	pcap->file = fopen(path, "wb");
	if (pcap->file == NULL)
		return -errno;
	put_le32(hdr, PCAP_MAGIC_NSEC);
	put_le16(hdr + 4, 2);
	put_le16(hdr + 6, 4);
	put_le32(hdr + 8, 0);   /* thiszone */
	put_le32(hdr + 12, 0);  /* sigfigs */
	put_le32(hdr + 16, PCAP_SNAPLEN);
	put_le32(hdr + 20, LINKTYPE_ETHERNET);
	if (fwrite(hdr, sizeof(hdr), 1, pcap->file) != 1) {
		fclose(pcap->file);
		pcap->file = NULL;
		return -EIO;
	}
	return 0;
}

int
synth_pcap_write_udp(struct synth_pcap *pcap, uint64_t time_ns,
		const struct synth_flow *flow, const uint8_t *payload, size_t len)
{
	uint8_t rec[16 + SYNTH_PCAP_L2_L4_SIZE];
	uint8_t *eth = rec + 16, *ip = eth + 14, *udp = ip + 20;
	uint32_t frame_len, sum;
	uint16_t udp_sum;

	if (len > SYNTH_PCAP_MAX_PAYLOAD)
		return -EMSGSIZE;
	frame_len = (uint32_t)(SYNTH_PCAP_L2_L4_SIZE + len);
	put_le32(rec, (uint32_t)(time_ns / 1000000000u));
	put_le32(rec + 4, (uint32_t)(time_ns % 1000000000u));
	put_le32(rec + 8, frame_len);
	put_le32(rec + 12, frame_len);
	/* Ethernet: IPv4 multicast MAC 01:00:5e + low 23 bits of the group. */
	eth[0] = 0x01;
	eth[1] = 0x00;
	eth[2] = 0x5e;
	eth[3] = (uint8_t)((flow->dst_ip >> 16) & 0x7f);
	eth[4] = (uint8_t)(flow->dst_ip >> 8);
	eth[5] = (uint8_t)flow->dst_ip;
	memcpy(eth + 6, flow->src_mac, 6);
	put_be16(eth + 12, ETHERTYPE_IPV4);
	/* IPv4 */
	ip[0] = 0x45;
	ip[1] = 0;
	put_be16(ip + 2, (uint16_t)(20 + 8 + len));
	put_be16(ip + 4, pcap->ip_id++);
	put_be16(ip + 6, IPV4_FLAG_DF);
	ip[8] = IPV4_TTL;
	ip[9] = IPPROTO_UDP_NUMBER;
	put_be16(ip + 10, 0);
	put_be32(ip + 12, flow->src_ip);
	put_be32(ip + 16, flow->dst_ip);
	put_be16(ip + 10, fold(sum16(0, ip, 20)));
	/* UDP, checksum over the pseudo header, header and payload. */
	put_be16(udp, flow->src_port);
	put_be16(udp + 2, flow->dst_port);
	put_be16(udp + 4, (uint16_t)(8 + len));
	put_be16(udp + 6, 0);
	sum = sum16(0, ip + 12, 8);
	sum += IPPROTO_UDP_NUMBER + (uint32_t)(8 + len);
	sum = sum16(sum, udp, 8);
	sum = sum16(sum, payload, len);
	udp_sum = fold(sum);
	put_be16(udp + 6, udp_sum == 0 ? 0xffff : udp_sum);
	if (fwrite(rec, sizeof(rec), 1, pcap->file) != 1 ||
			(len > 0 && fwrite(payload, len, 1, pcap->file) != 1))
		return -EIO;
	pcap->records++;
	pcap->bytes += 16 + frame_len;
	return 0;
}

int
synth_pcap_close(struct synth_pcap *pcap)
{
	int rc = 0;

	if (pcap->file == NULL)
		return 0;
	if (fflush(pcap->file) != 0 || ferror(pcap->file))
		rc = -EIO;
	if (fclose(pcap->file) != 0 && rc == 0)
		rc = -errno;
	pcap->file = NULL;
	return rc;
}
