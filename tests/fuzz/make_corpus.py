#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Seed corpora of the fuzz harnesses, one file per distinct seed, named by
its SHA-1.

Captures (the MDP3 harness; with --only, the iLink 3 decoder): the UDP and
TCP payloads of the public CME captures under DATA/pcap (pcap or pcapng;
Ethernet, VLAN, Linux cooked, raw IP) whose path contains --only, and of the
captures given on the command line (tickwire-synth output).  At most
--max-per-file payloads are taken from a capture, evenly spread over it.  A
missing DATA directory is not an error (only the given captures are used).

--plain (the config harnesses): the files given are the seeds, as they are
(dpdk-config/*/ports.ini, tickwire.cfg).

No seed at all is an error unless --allow-empty (another generator fills the
harness's other seed directory).

usage: make_corpus.py [--data DATA [--only TEXT]] [--plain] [--allow-empty]
                      --out DIR --stamp FILE [FILE...]
"""
import argparse
import glob
import hashlib
import os
import shutil
import struct
import sys


def frames(path):
    """(linktype, frame bytes) of every packet of a pcap or pcapng file."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1', b'\xa1\xb2\xc3\xd4',
                 b'\xa1\xb2\x3c\x4d'):
        e = '<' if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
        linktype = struct.unpack_from(e + 'I', data, 20)[0] & 0x0fffffff
        off = 24
        while off + 16 <= len(data):
            caplen = struct.unpack_from(e + 'I', data, off + 8)[0]
            yield linktype, data[off + 16:off + 16 + caplen]
            off += 16 + caplen
        return
    if magic != b'\x0a\x0d\x0d\x0a':
        return
    e = '<'
    links = []
    off = 0
    while off + 12 <= len(data):
        btype = struct.unpack_from(e + 'I', data, off)[0]
        if btype == 0x0a0d0d0a:
            e = '<' if data[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' else '>'
            links = []
        blen = struct.unpack_from(e + 'I', data, off + 4)[0]
        if blen < 12 or off + blen > len(data):
            return
        body = data[off + 8:off + blen - 4]
        if btype == 1:
            links.append(struct.unpack_from(e + 'H', body, 0)[0])
        elif btype == 6 and len(body) >= 20:
            iface, _, _, caplen = struct.unpack_from(e + 'IIII', body, 0)
            if iface < len(links):
                yield links[iface], body[20:20 + caplen]
        elif btype == 3 and links:
            yield links[0], body[4:]
        elif btype == 2 and len(body) >= 20:
            iface = struct.unpack_from(e + 'H', body, 0)[0]
            caplen = struct.unpack_from(e + 'I', body, 12)[0]
            if iface < len(links):
                yield links[iface], body[20:20 + caplen]
        off += blen


def payload(linktype, frame):
    """UDP or TCP payload of an IPv4 frame, or None."""
    if linktype == 1:
        off, proto = 14, frame[12:14]
        while proto in (b'\x81\x00', b'\x88\xa8') and len(frame) >= off + 4:
            proto = frame[off + 2:off + 4]
            off += 4
        if proto != b'\x08\x00':
            return None
    elif linktype == 113:
        if frame[14:16] != b'\x08\x00':
            return None
        off = 16
    elif linktype == 276:
        if frame[0:2] != b'\x08\x00':
            return None
        off = 20
    elif linktype in (101, 228):
        off = 0
    else:
        return None
    ip = frame[off:]
    if len(ip) < 20 or ip[0] >> 4 != 4:
        return None
    ihl = (ip[0] & 15) * 4
    total = struct.unpack_from('>H', ip, 2)[0]
    ip = ip[:total]
    if ip[9] == 17 and len(ip) >= ihl + 8:
        ulen = struct.unpack_from('>H', ip, ihl + 4)[0]
        return ip[ihl + 8:ihl + ulen]
    if ip[9] == 6 and len(ip) >= ihl + 20:
        return ip[ihl + (ip[ihl + 12] >> 4) * 4:]
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--data')
    ap.add_argument('--only', default='')
    ap.add_argument('--plain', action='store_true')
    ap.add_argument('--allow-empty', action='store_true')
    ap.add_argument('--out', required=True)
    ap.add_argument('--stamp', required=True)
    ap.add_argument('--max-per-file', type=int, default=300)
    ap.add_argument('files', nargs='*')
    args = ap.parse_args()
    captures = []
    if args.data is not None:
        captures = sorted(p for p in glob.glob(os.path.join(args.data, 'pcap', '**', '*.pcap*'),
                                               recursive=True) if args.only in p)
        if not captures:
            print('make_corpus.py: no capture under %s/pcap: synthetic seeds only' % args.data)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    total = 0
    for path in captures + args.files:
        if args.plain and path in args.files:
            with open(path, 'rb') as f:
                seeds = [f.read()]
        else:
            payloads = [p for lt, fr in frames(path) for p in [payload(lt, fr)] if p]
            step = max(1, len(payloads) // args.max_per_file)
            seeds = payloads[::step][:args.max_per_file]
        taken = 0
        for p in seeds:
            name = os.path.join(args.out, hashlib.sha1(p).hexdigest())
            if not os.path.exists(name):
                with open(name, 'wb') as f:
                    f.write(p)
                taken += 1
        total += taken
        print('%5d seeds from %s' % (taken, os.path.relpath(path)))
    if total == 0 and not args.allow_empty:
        print('make_corpus.py: no seed found', file=sys.stderr)
        return 1
    with open(args.stamp, 'w') as f:
        f.write('%d seeds in %s\n' % (total, args.out))
    return 0

if __name__ == '__main__':
    sys.exit(main())
