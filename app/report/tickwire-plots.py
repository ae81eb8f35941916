#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 tickwire
"""tickwire-plots.py JSON OUTDIR: the latency study's figures.

JSON is what `tickwire-report --json` wrote (one or two runs). Writes four
PNGs to OUTDIR and prints their paths:
  latency-cdf.png     latency CDF per stream kind, every run on one axes (log x),
                      and the tail (1 - p, log-log) beside it
  median-ladder.png   median latency by idx (ahead == 0) with the fitted line
  latency-ahead.png   median and p99 latency against packets ahead
  rate-p99.png        packet rate over capture time, p99 per window on a
                      second axis (one panel per run)
Needs matplotlib (python3-matplotlib; run with /usr/bin/python3). Exit 0,
1 on a bad JSON, 77 when matplotlib is missing (the tests' skip code).
"""
import json
import os
import sys

try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
except ImportError:
    print('tickwire-plots: matplotlib is missing (apt install python3-matplotlib; '
          'run with /usr/bin/python3)', file=sys.stderr)
    sys.exit(77)

KINDS = ('book', 'trade', 'order')
STYLE = {'book': '-', 'trade': '--', 'order': ':'}
COLORS = ('tab:blue', 'tab:red')


def run_name(run):
    return run.get('topology') or os.path.basename(run.get('file', '?'))


def run_title(run):
    load = run.get('load_packets_per_s')
    peak = run.get('peak_packets_per_s')
    speed = run.get('speed')
    parts = ['%s' % run_name(run),
             'speed %s' % ('max (unpaced)' if speed is None else '%gx' % speed),
             'load %s pkt/s' % ('-' if load is None else '%.0f' % load)]
    if peak is not None:
        parts.append('peak %.0f pkt/s' % peak)
    return ', '.join(parts)


def suptitle(fig, what, runs):
    fig.suptitle(what + '\n' + '  vs  '.join(run_title(r) for r in runs), fontsize=9)


def finish(fig, ax, what, runs, out):
    """Grid, legend, title naming the runs; write and close."""
    ax.grid(True, which='both', alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7)
    suptitle(fig, what, runs)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def plot_cdf(runs, out):
    fig, (ax, tail) = plt.subplots(1, 2, figsize=(12, 5))
    probs = None
    for i, run in enumerate(runs):
        cdf = run['cdf']
        probs = cdf['p']
        for kind in KINDS:
            pts = [(ns, p) for ns, p in zip(cdf[kind]['ns'], probs) if ns is not None]
            if not pts:
                continue
            xs = [max(ns, 1.0) for ns, _ in pts]
            label = '%s %s (n=%d)' % (run_name(run), kind, cdf[kind]['count'])
            ax.plot(xs, [p for _, p in pts], STYLE[kind], color=COLORS[i % 2], label=label)
            tail.plot(xs, [max(1.0 - p, 1e-6) for _, p in pts], STYLE[kind],
                      color=COLORS[i % 2], label=label)
    ax.set_xscale('log')
    ax.set_xlabel('latency, ns (book/trade t1 - t0, order t3 - t0)')
    ax.set_ylabel('fraction of records')
    tail.set_xscale('log')
    tail.set_yscale('log')
    tail.set_xlabel('latency, ns')
    tail.set_ylabel('1 - p (max plotted at 1e-6)')
    tail.grid(True, which='both', alpha=0.3)
    finish(fig, ax, 'latency CDF', runs, out)


def plot_ladder(runs, out):
    fig, ax = plt.subplots(figsize=(8, 5))
    for i, run in enumerate(runs):
        m = run['per_message_model']
        ladder = [g for g in m['ladder'] if g['median_ns'] is not None]
        used = [g for g in ladder if g['used']]
        unused = [g for g in ladder if not g['used']]
        color = COLORS[i % 2]
        ax.plot([g['idx'] for g in used], [g['median_ns'] for g in used], 'o', color=color,
                label='%s median (>= %d records)' % (run_name(run), m['min_count']))
        if unused:
            ax.plot([g['idx'] for g in unused], [g['median_ns'] for g in unused], 'x',
                    color=color, alpha=0.4, label='%s median (fewer)' % run_name(run))
        if m['floor_ns'] is not None and m['slope_ns'] is not None and used:
            xs = [0, max(g['idx'] for g in used)]
            r2 = '-' if m['r2'] is None else '%.3f' % m['r2']
            ax.plot(xs, [m['floor_ns'] + m['slope_ns'] * x for x in xs], '-', color=color,
                    label='%s fit %.0f + %.1f x idx (R^2 %s)' % (
                        run_name(run), m['floor_ns'], m['slope_ns'], r2))
    ax.set_xlabel('idx (SBE message index in its packet)')
    ax.set_ylabel('median latency, ns (ahead == 0)')
    finish(fig, ax, 'per-message model: median = floor + slope x idx', runs, out)


def plot_ahead(runs, out):
    fig, ax = plt.subplots(figsize=(8, 5))
    labels = [b['ahead'] for b in runs[0]['ahead']['buckets']]
    for i, run in enumerate(runs):
        buckets = run['ahead']['buckets']
        color = COLORS[i % 2]
        for key, style, name in (('p50_ns', 'o-', 'median'), ('p99_ns', 's--', 'p99')):
            pts = [(j, b[key]) for j, b in enumerate(buckets) if b[key] is not None]
            if pts:
                ax.plot([j for j, _ in pts], [v for _, v in pts], style, color=color,
                        label='%s %s' % (run_name(run), name))
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels)
    ax.set_yscale('log')
    ax.set_xlabel('packets ahead on the path (qlen + rxq)')
    ax.set_ylabel('latency, ns (book and trade)')
    share = ', '.join('%s %s' % (run_name(r), '-' if r['ahead']['share_ahead_zero'] is None
                                 else '%.1f%%' % (100 * r['ahead']['share_ahead_zero']))
                      for r in runs)
    finish(fig, ax, 'latency against ahead (hand-off found empty: %s)' % share, runs, out)


def plot_rate(runs, out):
    fig, axes = plt.subplots(len(runs), 1, figsize=(10, 4 * len(runs)), squeeze=False)
    for i, run in enumerate(runs):
        ax = axes[i][0]
        w = run['windows']
        series = w['series']
        xs = [s['start_s'] for s in series]
        ax.step(xs, [s['packets_per_s'] for s in series], where='post', color='tab:gray',
                label='packets/s')
        ax.set_xlabel('capture time, s (windows of %s s)' % ('%g' % w['length_s']))
        ax.set_ylabel('packets/s (capture time)')
        right = ax.twinx()
        half = w['length_s'] / 2
        pts = [(s['start_s'] + half, s['p99_ns']) for s in series if s['p99_ns'] is not None]
        if pts:
            right.plot([x for x, _ in pts], [v for _, v in pts], '.-', color=COLORS[i % 2],
                       label='p99 latency')
            right.set_yscale('log')
        right.set_ylabel('p99 latency per window, ns')
        ax.set_title(run_title(run), fontsize=9)
        ax.grid(True, alpha=0.3)
    fig.suptitle('packet rate and p99 latency over capture time', fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(argv):
    if len(argv) != 3 or argv[1] in ('-h', '--help'):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            doc = json.load(f)
        runs = doc['runs']
        if not runs:
            raise ValueError('no runs')
    except (OSError, ValueError, KeyError) as e:
        print('tickwire-plots: %s: %s' % (argv[1], e), file=sys.stderr)
        return 1
    os.makedirs(argv[2], exist_ok=True)
    for name, plot in (('latency-cdf.png', plot_cdf), ('median-ladder.png', plot_ladder),
                       ('latency-ahead.png', plot_ahead), ('rate-p99.png', plot_rate)):
        path = os.path.join(argv[2], name)
        plot(runs, path)
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
