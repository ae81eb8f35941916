#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The study's quick mode completes and its JSON holds every table.

  smoke_study.py TW_STUDY BUILD SOURCE CME_DATA OUTDIR

No figure is judged (the machine is shared): only that each table of the
study is there, with rows, and that every target has a verdict. What it
catches: a step of the study that stops producing its table (a renamed
report key, a tool that fails, a topology that records nothing), and the
paced runs' books diverging from the unpaced run's.
"""
import json
import os
import subprocess
import sys
import time


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


# Quick studies until one leaves at least two runs without drops on the way
# in to compare: a paced run drops when a busy machine (CI's parallel image
# builds) starves the lcore that reads the rx rings, which says nothing
# about the books. A divergence among runs that did compare fails at once.
ATTEMPTS = 3
# All attempts share one budget inside meson's timeout for this test (600 s,
# tests/perf/study/meson.build), so that a slow attempt ends here with a
# message rather than by meson's kill; another attempt starts only when the
# budget left holds one more of the longest so far.
BUDGET_S = 570


def run_study(study, build, source, cme, out):
    """@return the study's JSON; several attempts only while too few runs
    were without drops to compare and the budget allows."""
    js = os.path.join(out, 'study.json')
    start = time.monotonic()
    longest = 0.0
    for attempt in range(1, ATTEMPTS + 1):
        t0 = time.monotonic()
        left = BUDGET_S - (t0 - start)
        try:
            p = subprocess.run([sys.executable, study, '--build', build, '--source', source,
                                '--cme-data', cme, '--out', out, '--quick', '--json', js],
                               capture_output=True, text=True, timeout=left)
        except subprocess.TimeoutExpired:
            fail('tw_study.py --quick: attempt %d did not finish in the %.0f s left of '
                 'the %d s budget' % (attempt, left, BUDGET_S))
        longest = max(longest, time.monotonic() - t0)
        print(p.stdout[-6000:])
        if p.returncode != 0:
            print(p.stderr[-3000:])
            fail('tw_study.py --quick exited %d' % p.returncode)
        d = json.load(open(js))
        c = d.get('tables', {}).get('consistency') or {}
        if c.get('compared', 0) >= 2 or attempt == ATTEMPTS:
            return d
        if BUDGET_S - (time.monotonic() - start) < 1.2 * longest:
            print('attempt %d of %d: %d run(s) without rx drops; no time left for another '
                  '(%.0f s an attempt)' % (attempt, ATTEMPTS, c.get('compared', 0), longest))
            return d
        print('attempt %d of %d: %d run(s) without rx drops (drops per run %s), again' %
              (attempt, ATTEMPTS, c.get('compared', 0), c.get('rx_drops')))


def main():
    study, build, source, cme, out = sys.argv[1:6]
    d = run_study(study, build, source, cme, out)
    t = d.get('tables', {})
    for key in ('headline', 'player', 'consistency', 'rate', 'arrivals'):
        if not t.get(key):
            fail('table %s missing or empty' % key)
    for topo in ('one-thread', 'two-stage'):
        h = t['headline'].get(topo) or {}
        for k in ('p50_ns', 'p99_ns', 'max_ns', 'floor_fit_ns', 'floor_idx0_ns',
                  'floor_dense_ns', 'share_ahead_zero'):
            if k not in h:
                fail('headline %s: no %s' % (topo, k))
        if h['p50_ns'] is None:
            fail('headline %s: no latency record' % topo)
        if not t['rate'].get(topo, {}).get('steps'):
            fail('rate %s: no step ran' % topo)
    if not t['consistency'].get('same_books_and_orders'):
        fail('paced and unpaced runs differ (runs that dropped packets on the way in are '
             'left out; at least two must remain): %s' % t['consistency'])
    runs = d.get('report', {}).get('runs', [])
    if len(runs) != 2 or d['report'].get('comparison') is None:
        fail('the report holds %d runs and no comparison' % len(runs))
    for r in runs:
        for k in ('percentiles', 'per_message_model', 'floors', 'ahead', 'tick_to_trade',
                  'cdf', 'windows'):
            if k not in r:
                fail('report run %s: no %s' % (r.get('label'), k))
    if len(d.get('plots', [])) < 4:
        fail('%d plots written, want 4' % len(d.get('plots', [])))
    if len(d.get('targets', [])) < 7 or any('met' not in x for x in d['targets']):
        fail('targets: %s' % d.get('targets'))
    if len(d['cacheline_rt_ns']) != 2:
        fail('cache-line round trip not measured before and after')
    print('ok: study --quick: every table, %d plots, %d targets with a verdict' %
          (len(d['plots']), len(d['targets'])))


if __name__ == '__main__':
    main()
