# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of the tickwire-synth tests (python3 standard library only):
run the generator, run tickwire-decode, read classic pcap files, and a
reference market-by-price book written from the MDP 3.0 rules (independent
of app/synth/synth_book.c and lib/book)."""
import json
import os
import struct
import subprocess
import sys

INCREMENTAL_A = '224.0.31.1'
INCREMENTAL_B = '224.0.32.1'
SNAPSHOT = '224.0.31.22'


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def run_synth(synth, outdir, name, args, snapshot=True, manifest=True, truth=False,
              truth_every=False, stats=False):
    """Run tickwire-synth; return a dict of output paths (+ 'stats' if asked)."""
    os.makedirs(outdir, exist_ok=True)
    paths = {'a': os.path.join(outdir, name + '-a.pcap'),
             'b': os.path.join(outdir, name + '-b.pcap')}
    cmd = [synth, '--out-a', paths['a'], '--out-b', paths['b']]
    if snapshot:
        paths['s'] = os.path.join(outdir, name + '-s.pcap')
        cmd += ['--snapshot', paths['s']]
    if manifest:
        paths['manifest'] = os.path.join(outdir, name + '-manifest.jsonl')
        cmd += ['--manifest', paths['manifest']]
    if truth:
        paths['truth'] = os.path.join(outdir, name + '-truth.jsonl')
        cmd += ['--truth', paths['truth']]
        if truth_every:
            cmd += ['--truth-every']
    if stats:
        cmd += ['--stats']
    cmd += [str(a) for a in args]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail('%s exited %d: %s' % (' '.join(cmd), r.returncode, r.stderr.strip()))
    if stats:
        for line in r.stderr.splitlines():
            if line.startswith('{"stats"'):
                paths['stats'] = json.loads(line)['stats']
    return paths


def decode(decoder, path):
    """tickwire-decode --json of one file: a list of objects."""
    r = subprocess.run([decoder, '--json', path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail('tickwire-decode %s exited %d: %s' % (path, r.returncode, r.stderr.strip()))
    return [json.loads(line) for line in r.stdout.splitlines() if line]


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_pcap(path):
    """Frames of a classic pcap (either resolution, little endian) as
    (time_ns, dst_ip, dst_port, udp_payload)."""
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack_from('<I', data, 0)[0]
    if magic == 0xa1b23c4d:
        scale = 1
    elif magic == 0xa1b2c3d4:
        scale = 1000
    else:
        fail('%s: not a little-endian classic pcap' % path)
    linktype = struct.unpack_from('<I', data, 20)[0]
    if linktype != 1:
        fail('%s: link type %d, expected Ethernet' % (path, linktype))
    frames = []
    off = 24
    while off < len(data):
        sec, frac, caplen, _ = struct.unpack_from('<IIII', data, off)
        off += 16
        frame = data[off:off + caplen]
        off += caplen
        if struct.unpack_from('>H', frame, 12)[0] != 0x0800:
            fail('%s: a frame is not IPv4' % path)
        ihl = (frame[14] & 15) * 4
        if frame[14 + 9] != 17:
            fail('%s: a frame is not UDP' % path)
        dst_ip = '.'.join(str(b) for b in frame[30:34])
        udp = 14 + ihl
        dport, ulen = struct.unpack_from('>HH', frame, udp + 2)
        frames.append((sec * 1000000000 + frac * scale, dst_ip, dport,
                       frame[udp + 8:udp + ulen]))
    return frames


def packet_seq(payload):
    return struct.unpack_from('<I', payload, 0)[0]


# ---- reference book ----

NEW, CHANGE, DELETE, DELETE_THRU, DELETE_FROM, OVERLAY = range(6)
SIDE_OF_TYPE = {'0': 'bids', '1': 'offers', 'E': 'implied_bids', 'F': 'implied_offers'}
SIDES = ('bids', 'offers', 'implied_bids', 'implied_offers')


class Book:
    """What a receiver knows of one instrument (levels are [px, size, orders];
    implied levels [px, size])."""

    def __init__(self, security_id, depth=10, implied_depth=2, tick=None):
        self.security_id = security_id
        self.depth = depth
        self.implied_depth = implied_depth
        self.tick = tick
        self.rpt_seq = 0
        self.status = None
        self.last_trade = None
        self.sides = {s: [] for s in SIDES}

    def clear(self):
        self.sides = {s: [] for s in SIDES}
        self.rpt_seq = 0
        self.last_trade = None

    def side_depth(self, side):
        return self.implied_depth if side.startswith('implied') else self.depth

    def apply(self, side, action, level, level_value):
        """MDP 3.0 rules; returns an error string or None."""
        s = self.sides[side]
        depth = self.side_depth(side)
        if action == NEW:
            if not 1 <= level <= min(len(s) + 1, depth):
                return 'New at level %d of %d levels (depth %d)' % (level, len(s), depth)
            s.insert(level - 1, level_value)
            del s[depth:]
        elif action in (CHANGE, OVERLAY):
            if not 1 <= level <= len(s):
                return 'action %d at level %d of %d levels' % (action, level, len(s))
            if action == CHANGE and s[level - 1][0] != level_value[0]:
                return 'Change at level %d moves the price' % level
            s[level - 1] = level_value
        elif action == DELETE:
            if not 1 <= level <= len(s):
                return 'Delete at level %d of %d levels' % (level, len(s))
            del s[level - 1]
        elif action == DELETE_THRU:
            s.clear()
        elif action == DELETE_FROM:
            if not 1 <= level <= len(s):
                return 'DeleteFrom %d of %d levels' % (level, len(s))
            del s[:level]
        else:
            return 'unknown action %d' % action
        return None

    def as_truth(self):
        t = {'security_id': self.security_id, 'rpt_seq': self.rpt_seq, 'status': self.status,
             'last_trade': self.last_trade}
        for side in SIDES:
            t[side] = [list(x) for x in self.sides[side]]
        return t

    def check_invariants(self):
        """Prices on ticks, levels ordered, depth respected, not crossed."""
        for side in SIDES:
            s = self.sides[side]
            if len(s) > self.side_depth(side):
                return '%s: %d levels > depth %d' % (side, len(s), self.side_depth(side))
            pxs = [x[0] for x in s]
            if self.tick and any(p % self.tick or p <= 0 for p in pxs):
                return '%s: price off the tick %d: %s' % (side, self.tick, pxs)
            desc = side.endswith('bids')
            for a, b in zip(pxs, pxs[1:]):
                if (desc and not a > b) or (not desc and not a < b):
                    return '%s: levels out of order: %s' % (side, pxs)
            if any(x[1] <= 0 for x in s):
                return '%s: a level with size <= 0' % side
        bids = [x[0] for x in self.sides['bids'][:1] + self.sides['implied_bids'][:1]]
        offers = [x[0] for x in self.sides['offers'][:1] + self.sides['implied_offers'][:1]]
        if bids and offers and max(bids) >= min(offers):
            return 'crossed book: best bid %d >= best offer %d' % (max(bids), min(offers))
        return None


def truth_book(line):
    """A truth line in the shape of Book.as_truth()."""
    t = {k: line[k] for k in ('security_id', 'rpt_seq', 'status')}
    t['last_trade'] = line['last_trade']
    for side in SIDES:
        t[side] = line[side]
    return t


def definitions(messages):
    """SecurityID -> (depth, implied depth, tick) from MDInstrumentDefinitionFuture54."""
    out = {}
    for m in messages:
        if m.get('template_id') != 54:
            continue
        f = m['fields']
        depth = {d['MDFeedType']: d['MarketDepth'] for d in f['NoMDFeedTypes']}
        out[f['SecurityID']] = (depth.get('GBX', 10), depth.get('GBI', 0),
                                f['MinPriceIncrement']['mantissa'])
    return out


def mantissa(px, exponent=-9):
    if px is None:
        return None
    if px['exponent'] != exponent:
        fail('price with exponent %d' % px['exponent'])
    return px['mantissa']


def enum_value(v):
    return v['value'] if isinstance(v, dict) else v
