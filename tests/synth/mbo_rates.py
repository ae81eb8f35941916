#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Market-by-order entry rates of MDP 3.0 captures, for tickwire-synth --mbo's
calibration: order entries (46 NoOrderIDEntries + 47 NoMDEntries) per
price-level entry (46 NoMDEntries, outright bid/offer only) over the unique
incremental packets (the A/B copies counted once, by channel and MsgSeqNum).

  /usr/bin/python3 tests/synth/mbo_rates.py --decoder build/app/decode/tickwire-decode FILE...
"""
import argparse
import collections
import json
import subprocess
import sys


def channel(port):
    return port % 1000 if 14000 <= port < 16000 else port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--decoder', required=True)
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
    print(json.dumps(result, indent=1))
    return 0


if __name__ == '__main__':
    sys.exit(main())
