#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-arrivals on constructed captures whose statistics are known.

- periodic: 2000 packets exactly 1 ms apart.  CV must be 0 and the index of
  dispersion 0 for windows that are multiples of the period (1, 10, 100 ms;
  1 s has too few windows); for 100 us windows the counts are Bernoulli(0.1), so 0.9.  Catches a
  wrong window origin or count, an off-by-one in the window loop, a variance
  with the wrong normalisation.
- poisson: 20,000 packets of a Poisson process (1000/s, fixed seed).  CV within
  0.95..1.05 (its standard error is about 0.01); index of dispersion within
  1 +- 0.05 at 1 ms (20,000 windows, standard error 0.01), 1 +- 0.15 at 10 ms
  (se 0.03), 1 +- 0.4 at 100 ms (se 0.1); the tool's own Poisson band must
  contain 1.  Catches a statistic that does not reduce to the Poisson values.
- bursts: runs of 1, 2, 3, 5, 2, 1, 4 packets 5 us apart, runs 1 ms apart:
  with --burst-gap-us 10 the histogram must be exactly {1:2, 2:2, 3:1, 4:1,
  5:1} and the share in bursts of >= 2 16/18; with --burst-gap-us 4 all 18
  are singletons.  Messages per packet cycle 1, 2, 3: the histogram exact.
- A/B: feeds 14077 and 15077 with B 500 ns before A, one packet missing on
  each: per-feed counts, the merged stream (every MsgSeqNum once), the skew
  (every common one B first, median -500).
- JSON: valid, the documented keys present; usage errors exit 2, an unreadable
  capture exits 1.
"""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

ERRORS = []


def check(cond, what):
    if not cond:
        ERRORS.append(what)
        print('FAIL:', what)


def ip_checksum(header):
    s = sum(struct.unpack('!10H', header))
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def frame(dst_ip, port, seq, messages, sending):
    payload = struct.pack('<IQ', seq, sending)
    for _ in range(messages):
        # AdminHeartbeat12: MsgSize 10, blockLength 0, template 12, schema 1, v9
        payload += struct.pack('<HHHHH', 10, 0, 12, 1, 9)
    udp = struct.pack('!HHHH', port, port, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0x4000, 32, 17,
                               0, bytes([205, 209, 221, 71]), bytes(dst_ip)))
    struct.pack_into('!H', ip, 10, ip_checksum(bytes(ip)))
    eth = bytes([1, 0, 0x5e, dst_ip[1], dst_ip[2], dst_ip[3]]) + bytes(6) + b'\x08\x00'
    return eth + bytes(ip) + udp


def write_pcap(path, records):
    """records: (time_ns, dst_ip, port, seq, messages)"""
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))
        for t, dst, port, seq, msgs in records:
            data = frame(dst, port, seq, msgs, t - 2000)
            f.write(struct.pack('<IIII', t // 10**9, t % 10**9, len(data), len(data)))
            f.write(data)


T0 = 1709562600 * 10**9
FEED_A = ([224, 0, 31, 77], 14077)
FEED_B = ([224, 0, 32, 77], 15077)


def run(tool, tmp, name, records, extra=()):
    pcap = os.path.join(tmp, name + '.pcap')
    out = os.path.join(tmp, name + '.json')
    write_pcap(pcap, records)
    subprocess.run([tool, '--json', out] + list(extra) + [pcap], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def stream(doc, kind, name=None):
    for s in doc['streams']:
        if s['kind'] == kind and (name is None or s['name'] == name):
            return s
    raise KeyError((kind, name))


def idc(s, window):
    for d in s['dispersion']:
        if d['window'] == window:
            return d
    return None


def one_feed(times, msgs=None):
    return [(t, FEED_A[0], FEED_A[1], i + 1, msgs[i] if msgs else 1)
            for i, t in enumerate(times)]


def test_periodic(tool, tmp):
    doc = run(tool, tmp, 'periodic', one_feed([T0 + i * 10**6 for i in range(2000)]))
    s = stream(doc, 'feed')
    check(s['packets'] == 2000, 'periodic: packets %d' % s['packets'])
    check(s['interarrival']['cv'] == 0, 'periodic: CV %r, expected 0' % s['interarrival']['cv'])
    check(abs(s['rate_per_s'] - 1000) < 1e-6, 'periodic: rate %r' % s['rate_per_s'])
    for w in ('1ms', '10ms', '100ms'):
        d = idc(s, w)
        check(d is not None and abs(d['index']) < 1e-9,
              'periodic: dispersion at %s is %r, expected 0' % (w, d and d['index']))
    d = idc(s, '100us')
    check(d is not None and abs(d['index'] - 0.9) < 0.001,
          'periodic: dispersion at 100us %r, expected 0.9 (Bernoulli 0.1)' % (d and d['index']))
    check(idc(s, '10s') is None, 'periodic: 10 s windows reported for a 2 s capture')
    p = s['interarrival']['percentiles_ns']
    check(p['p1'] == p['max'] == 1e6, 'periodic: percentiles %r' % p)
    hist = s['interarrival']['log2_histogram']
    check(len(hist) == 1 and hist[0]['lo_ns'] <= 10**6 < hist[0]['hi_ns'] and
          hist[0]['count'] == 1999, 'periodic: log2 histogram %r' % hist)


def test_poisson(tool, tmp):
    rng = random.Random(20240304)
    t, times = T0, []
    for _ in range(20000):
        times.append(t)
        t += max(1, int(rng.expovariate(1000.0) * 1e9))
    doc = run(tool, tmp, 'poisson', one_feed(times))
    s = stream(doc, 'feed')
    cv = s['interarrival']['cv']
    check(0.95 <= cv <= 1.05, 'poisson: CV %.3f outside 0.95..1.05' % cv)
    for w, band in (('1ms', 0.05), ('10ms', 0.15), ('100ms', 0.4)):
        d = idc(s, w)
        check(d is not None and abs(d['index'] - 1) <= band,
              'poisson: dispersion at %s %r outside 1 +- %g' % (w, d and d['index'], band))
        check(d is not None and d['poisson_sim_min'] <= 1 <= d['poisson_sim_max'],
              'poisson: simulated band at %s does not hold 1: %r' % (w, d))
    check(0.9 < s['interarrival']['poisson_sample_cv'] < 1.1,
          'poisson: simulated sample CV %r' % s['interarrival']['poisson_sample_cv'])


def test_bursts(tool, tmp):
    sizes = [1, 2, 3, 5, 2, 1, 4]
    times = []
    t = T0
    for n in sizes:
        for k in range(n):
            times.append(t + k * 5000)
        t += 10**6
    msgs = [1 + i % 3 for i in range(len(times))]
    doc = run(tool, tmp, 'bursts', one_feed(times, msgs), ['--burst-gap-us', '10'])
    b = stream(doc, 'feed')['bursts']
    check(b['histogram'] == {'1': 2, '2': 2, '3': 1, '4': 1, '5': 1},
          'bursts: histogram %r' % b['histogram'])
    check(b['bursts'] == 7 and b['max_packets'] == 5, 'bursts: count/max %r' % b)
    check(abs(b['share_in_bursts_ge2'] - 16 / 18) < 1e-9, 'bursts: share %r' % b)
    m = stream(doc, 'feed')['messages_per_packet']
    check(m['histogram'] == {'1': 6, '2': 6, '3': 6} and m['max'] == 3 and
          abs(m['mean'] - 2) < 1e-9, 'messages per packet: %r' % m)
    doc = run(tool, tmp, 'bursts4', one_feed(times, msgs), ['--burst-gap-us', '4'])
    b = stream(doc, 'feed')['bursts']
    check(b['histogram'] == {'1': 18} and b['share_in_bursts_ge2'] == 0,
          'bursts at 4 us: %r' % b)


def test_ab(tool, tmp):
    recs = []
    for i in range(1000):
        t = T0 + i * 137000 + (i * i % 7) * 1000
        if i != 100:
            recs.append((t, FEED_A[0], FEED_A[1], 1 + i, 1))
        if i != 200:
            recs.append((t - 500, FEED_B[0], FEED_B[1], 1 + i, 1))
    recs.sort()
    doc = run(tool, tmp, 'ab', recs)
    a = stream(doc, 'feed', '224.0.31.77:14077')
    b = stream(doc, 'feed', '224.0.32.77:15077')
    m = stream(doc, 'merged', 'channel 77')
    check(a['packets'] == 999 and b['packets'] == 999 and a['feed'] == 'A' and
          b['feed'] == 'B' and a['channel'] == 77, 'A/B: feeds %r %r' %
          (a['packets'], b['packets']))
    check(m['packets'] == 1000, 'A/B: merged packets %d, expected 1000' % m['packets'])
    k = m.get('ab_skew', {})
    check(k.get('pairs') == 998 and k.get('b_first') == 998 and
          k.get('b_minus_a_ns', {}).get('p50') == -500, 'A/B: skew %r' % k)
    keys = {'kind', 'name', 'channel', 'feed', 'packets', 'duration_s', 'rate_per_s',
            'interarrival', 'dispersion', 'messages_per_packet', 'bursts'}
    check(keys <= set(a), 'JSON: keys missing: %r' % (keys - set(a)))
    check({'tool', 'format', 'files', 'frames', 'burst_gap_us', 'streams'} <= set(doc),
          'JSON: top-level keys %r' % sorted(doc))


def test_errors(tool, tmp):
    r = subprocess.run([tool, '--burst-gap-us', 'x', 'f.pcap'], capture_output=True)
    check(r.returncode == 2, 'bad --burst-gap-us: exit %d, expected 2' % r.returncode)
    r = subprocess.run([tool], capture_output=True)
    check(r.returncode == 2, 'no capture: exit %d, expected 2' % r.returncode)
    r = subprocess.run([tool, os.path.join(tmp, 'missing.pcap')], capture_output=True)
    check(r.returncode == 1, 'missing capture: exit %d, expected 1' % r.returncode)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--arrivals', required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for t in (test_periodic, test_poisson, test_bursts, test_ab, test_errors):
            t(args.arrivals, tmp)
    if ERRORS:
        print('%d check(s) failed' % len(ERRORS))
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
