#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-synth's presets reproduce the arrival shape of the real captures.

For each public A/B capture (channel 340 and 320, cme_data) the merged stream
of the real capture is measured with tickwire-arrivals, then five synthetic
runs of the matching preset (seeds 1..5, about 5,000 packets each).  The
preset process is near-critical (branching ratio 0.99+), so one run's rate
and slow-window statistics vary a lot from seed to seed, as one real 5-minute
capture would; the test therefore compares the MEDIAN over the five seeds:

- CV of the inter-arrival times within a factor 2 of the real one;
- index of dispersion at 1 ms, 10 ms and 100 ms within a factor 2;
- mean messages per packet within 30%;
- A/B skew: median B - A within 30%, share of B first within 10 points.

Negative control (proves the bands discriminate): a Poisson run of the same
rate (--burst-alpha 0) must FAIL the CV band and the dispersion bands.
Catches: a preset or kernel that is not applied (--preset parsing), a broken
multi-kernel Hawkes (no clustering at 10-100 ms), event batching or the
skew model dropped.  Skipped (77) when the CME data directory is missing.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CAPTURES = {
    340: ('pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.classic-nsec.pcap', 10000),
    320: ('pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.classic-nsec.pcap',
          5800),
}
SEEDS = (1, 2, 3, 4, 5)
WINDOWS = ('1ms', '10ms', '100ms')


def measure(tool, json_path, pcaps):
    subprocess.run([tool, '--json', json_path] + pcaps, check=True, stdout=subprocess.DEVNULL)
    with open(json_path) as f:
        doc = json.load(f)
    m = [s for s in doc['streams'] if s['kind'] == 'merged'][0]
    k = m['ab_skew']
    out = {'cv': m['interarrival']['cv'], 'msgs': m['messages_per_packet']['mean'],
           'rate': m['rate_per_s'], 'skew_p50': k['b_minus_a_ns']['p50'],
           'b_first': k['b_first'] / k['pairs']}
    for d in m['dispersion']:
        out[d['window']] = d['index']
    return out


def synth_run(args, tmp, channel, events, seed, extra):
    a = os.path.join(tmp, 'a.pcap')
    b = os.path.join(tmp, 'b.pcap')
    subprocess.run([args.synth, '--channel', str(channel), '--events', str(events),
                    '--seed', str(seed), '--instruments', '8', '--out-a', a, '--out-b', b] +
                   extra, check=True)
    return measure(args.arrivals, os.path.join(tmp, 's.json'), [a, b])


def median_of(runs):
    # A short run may lack the longest windows: keep the keys every run has.
    keys = set.intersection(*(set(r) for r in runs))
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def within(real, synth):
    """Failures of synth against real, as strings."""
    bad = []
    if not real['cv'] / 2 <= synth['cv'] <= real['cv'] * 2:
        bad.append('CV %.2f vs real %.2f' % (synth['cv'], real['cv']))
    for w in WINDOWS:
        if not real[w] / 2 <= synth[w] <= real[w] * 2:
            bad.append('dispersion %s %.1f vs real %.1f' % (w, synth[w], real[w]))
    if abs(synth['msgs'] / real['msgs'] - 1) > 0.3:
        bad.append('messages/packet %.2f vs real %.2f' % (synth['msgs'], real['msgs']))
    if abs(synth['skew_p50'] / real['skew_p50'] - 1) > 0.3:
        bad.append('skew median %.0f vs real %.0f' % (synth['skew_p50'], real['skew_p50']))
    if abs(synth['b_first'] - real['b_first']) > 0.1:
        bad.append('B first %.2f vs real %.2f' % (synth['b_first'], real['b_first']))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--synth', required=True)
    ap.add_argument('--arrivals', required=True)
    ap.add_argument('--cme-data', required=True)
    args = ap.parse_args()
    paths = {ch: os.path.join(args.cme_data, p) for ch, (p, _) in CAPTURES.items()}
    if not all(os.path.exists(p) for p in paths.values()):
        print('CME captures not found under %s: skipped' % args.cme_data)
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for ch, (_, events) in CAPTURES.items():
            real = measure(args.arrivals, os.path.join(tmp, 'real.json'), [paths[ch]])
            runs = [synth_run(args, tmp, ch, events, s, ['--preset', 'cme-%d' % ch])
                    for s in SEEDS]
            med = median_of(runs)
            bad = within(real, med)
            print('channel %d real  %s' % (ch, json.dumps(real, sort_keys=True)))
            print('channel %d synth %s' % (ch, json.dumps(med, sort_keys=True)))
            failures += ['channel %d: %s' % (ch, b) for b in bad]
            # Negative control: Poisson at the real rate, same coalescing.
            poisson = synth_run(args, tmp, ch, events, 1,
                                ['--burst-mu', '%.3f' % real['rate'], '--burst-alpha', '0',
                                 '--heartbeat-ms', '30000'])
            bad = within(real, poisson)
            if not any(b.startswith('CV') for b in bad) or \
                    not any(b.startswith('dispersion') for b in bad):
                failures.append('channel %d: the Poisson control passes the bands (%r): '
                                'they do not discriminate' % (ch, bad))
    for f in failures:
        print('FAIL:', f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
