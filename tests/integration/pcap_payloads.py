#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the UDP payload of every frame of a classic pcap file, one hex line each
(Ethernet/IPv4/UDP only). Timestamps are ignored: order bytes compare across runs."""
import struct
import sys


def payloads(path):
    d = open(path, 'rb').read()
    magic = struct.unpack('<I', d[:4])[0]
    endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    o = 24
    while o + 16 <= len(d):
        _, _, caplen, _ = struct.unpack(endian + 'IIII', d[o:o + 16])
        f = d[o + 16:o + 16 + caplen]
        o += 16 + caplen
        ip = f[14:]
        ihl = (ip[0] & 15) * 4
        udp_len = struct.unpack('>H', ip[ihl + 4:ihl + 6])[0]
        yield ip[ihl + 8:ihl + udp_len]


for p in payloads(sys.argv[1]):
    print(p.hex())
