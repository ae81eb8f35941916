#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drops, duplicates and reordering of tickwire-synth are what was asked.

Measured on the captures themselves (a small pcap reader, not the decoder):
  drop rate     sequence numbers missing from a feed / packets sent
  dup rate      extra copies / packets kept
  reorder rate  first copies that arrive after a higher MsgSeqNum / packets kept
Each must be within 5 binomial standard deviations (+ 2/N) of the requested
probability, and equal the generator's own counters (--stats).  A forced gap
(--gap) is missing from both feeds; a feed without impairment has none; feed B
arrives within +-skew of feed A.  At the extremes (probability 1) every packet
is still there, twice, or none is.
"""
import argparse
import math
import tempfile

import synth_common as sc

REQUESTED = {'a': {'drop': 0.05, 'dup': 0.03, 'reorder': 0.04},
             'b': {'drop': 0.02, 'dup': 0.06, 'reorder': 0.0}}
GAP = (3000, 25)
SKEW_NS = 400


def measure(path, last_seq):
    frames = sc.read_pcap(path)
    first = {}
    copies = 0
    reordered = 0
    highest = 0
    last_time = 0
    for t, _, _, payload in frames:
        if t < last_time:
            sc.fail('%s: capture time goes back' % path)
        last_time = t
        seq = sc.packet_seq(payload)
        if seq in first:
            copies += 1
            continue
        first[seq] = t
        if seq < highest:
            reordered += 1
        highest = max(highest, seq)
    missing = [s for s in range(1, last_seq + 1) if s not in first]
    return {'first': first, 'missing': missing, 'copies': copies, 'reordered': reordered,
            'frames': len(frames)}


def within(observed, p, n):
    return abs(observed - p) <= 5 * math.sqrt(p * (1 - p) / n) + 2.0 / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--synth', required=True)
    args = ap.parse_args()
    opts = ['--seed', 5, '--events', 16000, '--instruments', 6, '--skew-ns', SKEW_NS,
            '--gap', '%d:%d' % GAP]
    for feed, r in REQUESTED.items():
        for k, p in r.items():
            opts += ['--%s-%s' % (k, feed), str(p)]
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = sc.run_synth(args.synth, tmp, 'imp', opts, snapshot=False, manifest=False,
                             stats=True)
        stats = paths['stats']
        last_seq = stats['last_seq']
        gap = set(range(GAP[0], GAP[0] + GAP[1]))
        result = {}
        for feed in ('a', 'b'):
            m = measure(paths[feed], last_seq)
            result[feed] = m
            c = stats[feed]
            dropped = [s for s in m['missing'] if s not in gap]
            if not gap <= set(m['missing']):
                errors.append('%s: the gap %s is not missing' % (feed, GAP))
            sent = last_seq - len(gap)
            kept = sent - len(dropped)
            rates = {'drop': len(dropped) / sent, 'dup': m['copies'] / kept,
                     'reorder': m['reordered'] / kept}
            counts = {'drop': (len(dropped), c['dropped']), 'dup': (m['copies'], c['duplicated']),
                      'reorder': (m['reordered'], c['reordered'])}
            for k, p in REQUESTED[feed].items():
                n = sent if k == 'drop' else kept
                ok = within(rates[k], p, n)
                print('%s %s %-7s requested %.3f measured %.4f over %d packets (counter %d, '
                      'seen %d)' % ('ok  ' if ok else 'FAIL', feed, k, p, rates[k], n,
                                    counts[k][1], counts[k][0]))
                if not ok:
                    errors.append('%s %s rate %.4f, requested %.3f' % (feed, k, rates[k], p))
                # A held packet can only show as reordered if a later one is written first.
                if k != 'reorder' and counts[k][0] != counts[k][1]:
                    errors.append('%s %s: %d in the capture, generator counted %d'
                                  % (feed, k, counts[k][0], counts[k][1]))
                if k == 'reorder' and not 0 <= counts[k][1] - counts[k][0] <= 3:
                    errors.append('%s reorder: %d seen, %d held' % (feed, counts[k][0],
                                                                   counts[k][1]))
            if c['gap_dropped'] != len(gap):
                errors.append('%s: gap_dropped %d, expected %d' % (feed, c['gap_dropped'],
                                                                  len(gap)))
        both = [s for s in result['a']['first'] if s in result['b']['first']]
        skews = sorted(abs(result['a']['first'][s] - result['b']['first'][s]) for s in both)
        p95 = skews[int(len(skews) * 0.95)]
        median = skews[len(skews) // 2]
        print('A/B skew over %d packets: median %d ns, 95%% %d ns (asked +-%d ns)'
              % (len(skews), median, p95, SKEW_NS))
        # |uniform(-skew, skew)|: median skew/2; a late packet may be pushed a little.
        if p95 > SKEW_NS + 300 or not 0.3 * SKEW_NS <= median <= 0.7 * SKEW_NS:
            errors.append('A/B skew: median %d ns, 95th percentile %d ns' % (median, p95))
        # Extremes: everything reordered and duplicated on A, everything lost on B.
        paths = sc.run_synth(args.synth, tmp, 'extreme',
                             ['--seed', 6, '--events', 400, '--reorder-a', '1', '--dup-a', '1',
                              '--drop-b', '1'], snapshot=False, manifest=False, stats=True)
        last_seq = paths['stats']['last_seq']
        m = measure(paths['a'], last_seq)
        if m['missing'] or m['copies'] != last_seq:
            errors.append('extremes: A misses %d packets, has %d copies of %d'
                          % (len(m['missing']), m['copies'], last_seq))
        if sc.read_pcap(paths['b']):
            errors.append('extremes: --drop-b 1 left packets on B')
        print('%s extremes: A reordered %d and duplicated %d of %d packets, B empty' % (
            'ok  ' if not errors else 'FAIL', m['reordered'], m['copies'], last_seq))
    for e in errors:
        print('  ' + e)
    if errors:
        sc.fail('impairments differ from the request')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
