#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The Hawkes arrivals of tickwire-synth cluster; the Poisson setting does not.

Two runs with the same mean rate, 5000 events/s: Hawkes (mu 1000, alpha 8000,
beta 10000: branching ratio 0.8) and Poisson (mu 5000, alpha 0).  Event times
are the TransactTime of each market event (manifest lines of origin "event").
Counts per 1 ms window must have an index of dispersion (variance / mean)
within [0.85, 1.15] for Poisson (its standard error is about 0.03 here, 2400
windows) and
above 3 for Hawkes (theory: about 1/(1-0.8)^2 = 25 for windows much longer
than the 0.5 ms cluster time; less for 1 ms).  Both mean rates must be within
15% of 5000/s.
"""
import argparse
import tempfile

import synth_common as sc

WINDOW_NS = 1000000
EVENTS = 12000


def event_times(manifest_path):
    times = {}
    for m in sc.load_jsonl(manifest_path):
        if m['origin'] == 'event' and m['event'] not in times:
            times[m['event']] = m['fields']['TransactTime']
    return [times[k] for k in sorted(times)]


def dispersion(times):
    start, end = times[0], times[-1]
    n = (end - start) // WINDOW_NS
    counts = [0] * n
    for t in times:
        i = (t - start) // WINDOW_NS
        if i < n:
            counts[i] += 1
    mean = sum(counts) / n
    var = sum((c - mean) ** 2 for c in counts) / (n - 1)
    return var / mean, len(times) / ((end - start) / 1e9), n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--synth', required=True)
    args = ap.parse_args()
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for name, rates in (('hawkes', ('1000', '8000', '10000')),
                            ('poisson', ('5000', '0', '10000'))):
            paths = sc.run_synth(args.synth, tmp, name,
                                 ['--seed', 9, '--events', EVENTS, '--instruments', 4,
                                  '--burst-mu', rates[0], '--burst-alpha', rates[1],
                                  '--burst-beta', rates[2], '--snapshot-every', 1000000],
                                 snapshot=False)
            times = event_times(paths['manifest'])
            if len(times) != EVENTS:
                errors.append('%s: %d events in the manifest, %d asked' % (name, len(times),
                                                                          EVENTS))
            if any(b <= a for a, b in zip(times, times[1:])):
                errors.append('%s: event times not increasing' % name)
            results[name] = dispersion(times)
            iod, rate, windows = results[name]
            print('%s: index of dispersion %.2f over %d windows of 1 ms, rate %.0f/s'
                  % (name, iod, windows, rate))
            if abs(rate - 5000) > 0.15 * 5000:
                errors.append('%s: mean rate %.0f/s, expected about 5000/s' % (name, rate))
    if not 0.85 <= results['poisson'][0] <= 1.15:
        errors.append('Poisson index of dispersion %.2f not within [0.85, 1.15]'
                      % results['poisson'][0])
    if results['hawkes'][0] <= 3:
        errors.append('Hawkes index of dispersion %.2f not above 3' % results['hawkes'][0])
    for e in errors:
        print('  ' + e)
    if errors:
        sc.fail('arrival process')
    print('ok   Hawkes arrivals cluster, Poisson arrivals do not')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
