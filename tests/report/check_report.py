#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 tickwire
"""Tests of tickwire-report and tickwire-plots.py on synthetic record files
(report_gen, tests/report/report_synth.h: floor given, slope 150 ns/idx).

  check_report.py cli   --report R --gen G --plots P
      text tables (the lines tests/integration's report case reads, the
      parseable floor_agreement line), --json with every table key and no
      NaN, a comparison with two files, an empty file, refused files
  check_report.py plots --report R --gen G --plots P
      tickwire-plots.py writes the four PNGs (one and two runs, and an empty
      run); exit 77 (skip) without matplotlib
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

RUN_KEYS = ('file', 'label', 'topology', 'paced', 'one_thread', 'nic_t0', 'speed_milli', 'speed',
            'speed_text', 'tsc_hz', 'records', 'dropped_records', 'rx_drops', 'player_packets',
            'player_error_ns', 'capture_seconds', 'packets', 'load_packets_per_s',
            'peak_packets_per_s', 'percentiles', 'streams_total', 'per_message_model', 'floors',
            'ahead', 'tick_to_trade', 'cdf', 'windows')
PCT_KEYS = ('count', 'p50', 'p90', 'p99', 'p99_9', 'p99_99', 'max')
MODEL_KEYS = ('min_count', 'floor_ns', 'slope_ns', 'r2', 'points', 'ladder')
FLOOR_KEYS = ('fit_ns', 'fit_points', 'idx0_ns', 'idx0_count', 'dense_ns', 'dense_count',
              'dense_windows', 'spread', 'agree_threshold', 'agree')
COMPARISON_KEYS = ('ratio_of', 'file1', 'file2', 'percentiles', 'floors', 'slope',
                   'share_ahead_zero', 'ahead', 'tick_to_trade')
PLOTS = ('latency-cdf.png', 'median-ladder.png', 'latency-ahead.png', 'rate-p99.png')

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: %s' % what)


def near(got, want, rel):
    return got is not None and abs(got - want) <= rel * abs(want)


def no_nan(constant):
    raise ValueError('JSON holds %s' % constant)


def load_json(path):
    with open(path) as f:
        return json.load(f, parse_constant=no_nan)


def has_keys(obj, keys, where):
    missing = [k for k in keys if k not in obj]
    check(not missing, '%s lacks %s' % (where, missing))


def run(cmd, code=0):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != code:
        print(p.stdout, p.stderr)
    check(p.returncode == code, '%s: exit %d, want %d' % (' '.join(cmd), p.returncode, code))
    return p


def gen(args, tmp, name, mode, floor, label):
    path = os.path.join(tmp, name)
    run([args.gen, path, label, mode, str(floor)])
    return path


def check_run(r, where):
    has_keys(r, RUN_KEYS, where)
    for row in r.get('percentiles', []):
        has_keys(row, ('stream', 'kind', 'instrument') + PCT_KEYS, where + ' percentile row')
    check([row['stream'] for row in r['percentiles'][:4]] ==
          ['overall', 'book', 'trade', 'order'], where + ' kind rows')
    has_keys(r['per_message_model'], MODEL_KEYS, where + ' per_message_model')
    has_keys(r['floors'], FLOOR_KEYS, where + ' floors')
    has_keys(r['ahead'], ('share_ahead_zero', 'buckets'), where + ' ahead')
    check([b['ahead'] for b in r['ahead']['buckets']] ==
          ['0', '1', '2', '3', '4-7', '8-15', '16-63', '64+'], where + ' ahead buckets')
    for b in r['ahead']['buckets']:
        has_keys(b, ('ahead', 'lo', 'hi', 'count', 'p50_ns', 'p99_ns'), where + ' bucket')
    has_keys(r['tick_to_trade'], ('total', 'parts'), where + ' tick_to_trade')
    has_keys(r['tick_to_trade']['total'], PCT_KEYS, where + ' tick_to_trade total')
    has_keys(r['tick_to_trade']['parts'], ('t1_t0', 't2_t1', 't3_t2'), where + ' parts')
    cdf = r['cdf']
    has_keys(cdf, ('p', 'book', 'trade', 'order'), where + ' cdf')
    check(len(cdf['p']) >= 200 and cdf['p'][-1] == 1, where + ' cdf probabilities')
    for kind in ('book', 'trade', 'order'):
        check(len(cdf[kind]['ns']) == len(cdf['p']), where + ' cdf ' + kind)
    has_keys(r['windows'], ('length_s', 'span_s', 'series'), where + ' windows')
    for w in r['windows']['series'][:1]:
        has_keys(w, ('start_s', 'packets', 'packets_per_s', 'records', 'p99_ns'),
                 where + ' window')


def cli(args, tmp):
    a = gen(args, tmp, 'a.bin', 'paced', 2000, 'two-stage')
    b = gen(args, tmp, 'b.bin', 'unpaced', 3000, 'one-thread')
    empty = gen(args, tmp, 'empty.bin', 'empty', 2000, 'two-stage')

    # one file: the text the integration case reads, and the study's lines
    aj = os.path.join(tmp, 'a.json')
    p = run([args.report, '--json', aj, a])
    out = p.stdout
    for pat in (r'^overall +\d+ +\d+', r'^book \(all\)', r'^trade \(all\)', r'^order \(all\)',
                r'floor -?\d+ ns, slope', r'player error ns .*p50 120, p99 900',
                r'paced, speed 2\.000', r'^found the hand-off empty \(ahead == 0\): file 1 \d',
                r'^t3-t0 tick-to-trade +\d+ +1800 '):
        check(re.search(pat, out, re.M), 'text lacks %s' % pat)
    m = re.search(r'^floor_agreement file=1 fit_ns=(\d+) idx0_ns=(\d+) dense_ns=(\d+) '
                  r'spread=([0-9.]+) agree=(yes|no|unknown)$', out, re.M)
    check(m is not None, 'no parseable floor_agreement line')
    if m:
        for v in m.groups()[:3]:
            check(near(float(v), 2000, 0.03), 'a floor %s is not near 2000' % v)
        check(m.group(5) == 'yes', 'floors do not agree')
    doc = load_json(aj)
    has_keys(doc, ('tool', 'format', 'ratio_of', 'windows_k', 'runs', 'comparison'), 'json')
    check(len(doc['runs']) == 1 and doc['comparison'] is None, 'one run, no comparison')
    r = doc['runs'][0]
    check_run(r, 'run a')
    check(r['topology'] == 'two-stage' and r['paced'] is True and r['speed'] == 2,
          'run a facts')
    check(near(r['per_message_model']['floor_ns'], 2000, 0.03), 'json fit floor')
    check(near(r['per_message_model']['slope_ns'], 150, 0.03), 'json slope')
    check(r['floors']['agree'] is True, 'json agree')
    check([w['start_s'] for w in r['floors']['dense_windows'][:3]] == [10, 25, 40],
          'dense windows')
    check(len(r['windows']['series']) >= 50, 'fewer than 50 windows')
    check(sum(w['packets'] for w in r['windows']['series']) == r['packets'], 'window packets')

    # two files: side by side, and the comparison
    abj = os.path.join(tmp, 'ab.json')
    p = run([args.report, '--streams', '3', '--windows', '4', '--json', abj, a, b])
    check('p50 2/1' in p.stdout, 'no side-by-side comparison in the text')
    check(re.search(r'^floor_agreement file=2 ', p.stdout, re.M), 'no agreement of file 2')
    doc = load_json(abj)
    check(len(doc['runs']) == 2 and doc['windows_k'] == 4, 'two runs')
    for i, r in enumerate(doc['runs']):
        check_run(r, 'run %d' % (i + 1))
    check(doc['runs'][1]['paced'] is False and doc['runs'][1]['speed'] is None,
          'unpaced run has speed null')
    c = doc['comparison']
    check(isinstance(c, dict), 'no comparison')
    if isinstance(c, dict):
        has_keys(c, COMPARISON_KEYS, 'comparison')
        check(len(c['percentiles']) == 4 + 3, 'comparison rows: 4 kinds and 3 streams')
        check(near(c['floors']['fit'], 1.5, 0.05), 'fit floor ratio %s' % c['floors']['fit'])
        check(near(c['tick_to_trade']['p50'], 1.0, 1e-6), 'tick-to-trade ratio')

    # a file with no records: tables of "-", valid JSON of nulls
    ej = os.path.join(tmp, 'empty.json')
    p = run([args.report, '--json', ej, empty])
    check(re.search(r'^overall +0 +- +- ', p.stdout, re.M), 'empty: no "-" row')
    check('agree=unknown' in p.stdout, 'empty: agreement not unknown')
    doc = load_json(ej)
    check_run(doc['runs'][0], 'empty run')
    check(doc['runs'][0]['per_message_model']['floor_ns'] is None, 'empty: floor not null')

    # refused files
    bad = os.path.join(tmp, 'not-latency.txt')
    with open(bad, 'w') as f:
        f.write('[ports]\nthis is not a latency file\n' * 10)
    old = os.path.join(tmp, 'old.bin')
    with open(a, 'rb') as f:
        data = bytearray(f.read())
    data[7] = 1
    data[8:12] = struct.pack('<I', 1)
    with open(old, 'wb') as f:
        f.write(data)
    cut = os.path.join(tmp, 'cut.bin')
    with open(a, 'rb') as f:
        data = f.read()
    with open(cut, 'wb') as f:
        f.write(data[:128 + 64 * 10 + 5])
    for path, why in ((bad, 'no TWLAT magic'), (old, 'version 1'), (cut, 'truncated')):
        p = run([args.report, path], 1)
        want = 'tickwire-report: %s: not a version-2 latency file (' % path
        check(p.stderr.startswith(want) and why in p.stderr and '; hint: ' in p.stderr,
              'refusal of %s: %r' % (os.path.basename(path), p.stderr))
    capture_t0 = os.path.join(tmp, 'capture-t0.bin')
    with open(a, 'rb') as f:
        data = bytearray(f.read())
    data[20] |= 8                      # flags bit 3: t0 is a capture time
    with open(capture_t0, 'wb') as f:
        f.write(data)
    p = run([args.report, capture_t0], 1)
    check('t1 - t0 is no latency' in p.stderr, 'a capture-time t0 was read as a clock')
    p = run([args.report, os.path.join(tmp, 'missing.bin')], 1)
    check('No such file' in p.stderr, 'missing file')
    run([args.report], 2)
    run([args.report, '--windows', 'x', a], 2)


def plots(args, tmp):
    if importlib.util.find_spec('matplotlib') is None:
        print('SKIP: matplotlib is missing')
        sys.exit(77)
    a = gen(args, tmp, 'a.bin', 'paced', 2000, 'two-stage')
    b = gen(args, tmp, 'b.bin', 'unpaced', 3000, 'one-thread')
    empty = gen(args, tmp, 'empty.bin', 'empty', 2000, 'two-stage')
    for name, files in (('ab', [a, b]), ('a', [a]), ('empty', [empty])):
        js = os.path.join(tmp, name + '.json')
        run([args.report, '--json', js] + files)
        outdir = os.path.join(tmp, 'png-' + name)
        p = run([sys.executable, args.plots, js, outdir])
        for png in PLOTS:
            path = os.path.join(outdir, png)
            ok = os.path.exists(path) and os.path.getsize(path) > 1000
            if ok:
                with open(path, 'rb') as f:
                    ok = f.read(8) == b'\x89PNG\r\n\x1a\n'
            check(ok, '%s: %s not written' % (name, png))
            check(path in p.stdout, '%s: %s not printed' % (name, png))
    run([sys.executable, args.plots, os.path.join(tmp, 'a.bin'), tmp], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('mode', choices=('cli', 'plots'))
    ap.add_argument('--report', required=True)
    ap.add_argument('--gen', required=True)
    ap.add_argument('--plots', required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix='tw-report-')
    try:
        (cli if args.mode == 'cli' else plots)(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print('%d failure(s)' % len(failures))
        return 1
    print('ok: %s' % args.mode)
    return 0


if __name__ == '__main__':
    sys.exit(main())
