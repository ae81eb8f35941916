#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Market-by-order entry rates of MDP 3.0 captures, for tickwire-synth --mbo's
calibration: order entries (46 NoOrderIDEntries + 47 NoMDEntries) per
price-level entry (46 NoMDEntries, outright bid/offer only) over the unique
incremental packets (the A/B copies counted once, by channel and MsgSeqNum).

  /usr/bin/python3 tests/synth/mbo_rates.py --decoder build/app/decode/tickwire-decode FILE...

--check compares the rates with the v9.1 example capture's (TARGETS, a tiny
sample: 52 unique packets, 306 price-level entries) within TOLERANCES and
exits 1 when one is out (the test synth_mbo_rates, on a tickwire-synth --mbo
capture).
"""
import argparse
import collections
import json
import subprocess
import sys


# The v9.1 example capture (Cme.Mdp3.Sbe.v9.1.Example.pcap): 306 outright
# price-level entries, 219 order entries (70 New, 93 Update, 56 Delete).
TARGETS = {'order_entries_per_level_entry': 0.716, 'share_47': 0.027,
           'order_new': 0.320, 'order_update': 0.425, 'order_delete': 0.256}
# kind, bound: relative (fraction of the target) or absolute (fraction points)
TOLERANCES = {'order_entries_per_level_entry': ('relative', 0.15),
              'share_47': ('absolute', 0.02), 'order_new': ('absolute', 0.08),
              'order_update': ('absolute', 0.08), 'order_delete': ('absolute', 0.08)}


def check(result):
    failures = []
    for name, target in TARGETS.items():
        kind, bound = TOLERANCES[name]
        value = result.get(name)
        margin = bound * target if kind == 'relative' else bound
        if value is None or abs(value - target) > margin:
            failures.append('%s = %s, target %.3f +- %.3f' % (name, value, target, margin))
    return failures


def channel(port):
    return port % 1000 if 14000 <= port < 16000 else port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--check', action='store_true',
                    help='exit 1 unless the rates are within TOLERANCES of TARGETS')
    ap.add_argument('files', nargs='+')
    args = ap.parse_args()
    seen = set()
    c = collections.Counter()
    for path in args.files:
        out = subprocess.run([args.decoder, '--json', path], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = json.loads(line)
            if 'seq' not in m:
                continue
            key = (channel(m.get('dst_port', 0)), m['seq'], m['msg'])
            if key in seen:
                continue
            seen.add(key)
            f = m['fields']
            t = m['template_id']
            if t == 46:
                for e in f.get('NoMDEntries', []):
                    t46 = e['MDEntryType']
                    t46 = t46['value'] if isinstance(t46, dict) else t46
                    kind = 'outright' if t46 in ('0', '1') else 'other'
                    c['level_' + kind] += 1
                    if kind == 'outright':
                        c['level_action_' + e['MDUpdateAction']['name']] += 1
                for e in f.get('NoOrderIDEntries', []):
                    c['order_46'] += 1
                    c['order_46_' + e['OrderUpdateAction']['name']] += 1
                c['msg_46'] += 1
                c['msg_46_with_orders'] += bool(f.get('NoOrderIDEntries'))
            elif t == 47:
                for e in f.get('NoMDEntries', []):
                    c['order_47'] += 1
                    c['order_47_' + e['MDUpdateAction']['name']] += 1
            elif t == 53:
                c['snapshot53_entries'] += len(f.get('NoMDEntries', []))
    level = c['level_outright']
    orders = c['order_46'] + c['order_47']
    result = dict(sorted(c.items()))
    result['order_entries_per_level_entry'] = round(orders / level, 3) if level else None
    result['share_47'] = round(c['order_47'] / orders, 3) if orders else None
    # order actions over 46 and 47 (47's Change is an Update)
    for name, keys in (('new', ('New',)), ('update', ('Update', 'Change')),
                       ('delete', ('Delete',))):
        n = sum(c['order_46_' + k] + c['order_47_' + k] for k in keys)
        result['order_' + name] = round(n / orders, 3) if orders else None
    print(json.dumps(result, indent=1))
    if not args.check:
        return 0
    failures = check(result)
    for f in failures:
        print('mbo_rates: out of tolerance: ' + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
