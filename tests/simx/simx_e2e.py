#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-replay --exchange end to end (suite backtest, issue 18 item 1).

On a synthetic market-by-order capture (tickwire-synth --mbo) and the demo
profile with book.mbo on channel 310:
  1. the strategy's orders reach the simulated exchange through order-out's
     iLink 3 session and its acks and fills come back to the strategy
     (strategy.exec.new, strategy.exec.fill; order-out relayed as many as
     the exchange made), orders joined at their MBO place, the session
     result lists fills, positions and latency counts;
  2. a second run gives byte-identical stdout, orders pcap and result JSON;
  3. pre-trade risk still refuses in order-out, through the whole path
     (max_open_orders = 1 and a 2 s latency: orders wait for their ack).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def counters(text):
    out = {}
    for line in text.splitlines():
        parts = line.split(' ', 1)
        if len(parts) == 2 and re.match(r'^[a-z0-9_.]+$', parts[0]):
            out[parts[0]] = parts[1]
    return out


def cfg_variant(src, dst, subs):
    with open(src) as f:
        text = f.read()
    for pat, rep in subs:
        text, n = re.subn(pat, rep, text, flags=re.M)
        if n == 0:
            fail('%s: no match for %s' % (src, pat))
    with open(dst, 'w') as f:
        f.write(text)


def replay(args, run_dir, cfg, captures, extra):
    os.makedirs(run_dir, exist_ok=True)
    cmd = [os.path.join(args.build, 'app/replay/tickwire-replay'),
           '--ports', os.path.join(args.source, 'dpdk-config/demo/ports.ini'),
           '--config', cfg, '--exchange', '--print-books', '4',
           '--orders-out', 'orders.pcap', '--result', 'result.json',
           '--session', 'synth', '--exchange-log', 'reports.il3'] + extra + captures
    p = subprocess.run(cmd, cwd=run_dir, capture_output=True, text=True, timeout=150)
    if p.returncode != 0:
        fail('%s: exit %d\n%s' % (' '.join(cmd), p.returncode, p.stderr))
    return p.stdout


def read(path, mode='rb'):
    with open(path, mode) as f:
        return f.read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--keep', action='store_true')
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.source = os.path.abspath(args.source)
    tmp = tempfile.mkdtemp(prefix='simx-e2e-', dir=args.build)
    try:
        caps = [os.path.join(tmp, n) for n in ('a.pcap', 'b.pcap', 's.pcap')]
        subprocess.run([os.path.join(args.build, 'app/synth/tickwire-synth'),
                        '--out-a', caps[0], '--out-b', caps[1], '--snapshot', caps[2],
                        '--mbo', '--reset-first', '--seed', '41', '--events', '6000',
                        '--instruments', '4'], check=True, capture_output=True)
        demo_cfg = os.path.join(args.source, 'dpdk-config/demo/tickwire.cfg')
        cfg = os.path.join(tmp, 'tickwire.cfg')
        cfg_variant(demo_cfg, cfg, [
            (r'(max_instruments = \d+;)', r'\1\n  mbo = { channels = [ 310 ]; };'),
            (r'max_orders = \d+;', 'max_orders = 400;')])

        # 1. acks and fills reach the strategy
        out1 = replay(args, os.path.join(tmp, 'run1'), cfg, caps, [])
        c = counters(out1)
        for k in ('strategy.exec.new', 'strategy.exec.fill', 'simx.acks', 'simx.fills',
                  'simx.mbo_joins', 'order.sent'):
            if int(c.get(k, '0')) == 0:
                fail('%s is %s, want > 0' % (k, c.get(k)))
        if c['simx.mismatches'] != '0' or c['simx.overflows'] != '0':
            fail('simx.mismatches %s, simx.overflows %s' % (c['simx.mismatches'],
                                                            c['simx.overflows']))
        if c['order.exec.new'] != c['simx.acks'] or c['order.exec.fill'] != c['simx.fills']:
            fail('order-out relayed %s acks and %s fills, the exchange made %s and %s' %
                 (c['order.exec.new'], c['order.exec.fill'], c['simx.acks'], c['simx.fills']))
        if c['strategy.exec.fill'] != c['simx.fills'] or \
                c['strategy.filled_qty'] != c['simx.filled_qty']:
            fail('the strategy saw %s fills (%s contracts), the exchange made %s (%s)' %
                 (c['strategy.exec.fill'], c['strategy.filled_qty'], c['simx.fills'],
                  c['simx.filled_qty']))
        reports = read(os.path.join(tmp, 'run1', 'reports.il3'))
        n, off = 0, 0
        while off + 4 <= len(reports):
            off += reports[off] | reports[off + 1] << 8  # SOFH length, little-endian
            n += 1
        want = sum(int(c[k]) for k in ('simx.acks', 'simx.rejects', 'simx.fills',
                                       'simx.canceled', 'simx.cancel_rejects'))
        if off != len(reports) or n != want:
            fail('exchange log: %d frames (%d of %d bytes), want %d' % (n, off, len(reports),
                                                                      want))
        res = json.loads(read(os.path.join(tmp, 'run1', 'result.json'), 'r'))
        if len(res['fills']) != int(c['simx.fills']) or not res['positions']:
            fail('result: %d fills, %d positions' % (len(res['fills']),
                                                     len(res['positions'])))
        if any(f['client_order_id'] == 0 for f in res['fills']):
            fail('result: a fill without the strategy\'s order id')
        ack = res['latency']['order_to_ack_ns']
        acks = sum(ack['counts'] if isinstance(ack, dict) else ack)
        if acks != int(c['simx.acks']):
            fail('result: %d acks in order_to_ack_ns, want %s' % (acks, c['simx.acks']))
        print('ok: %s orders, %s acks, %s fills (%s passive, %s MBO joins), positions %s' %
              (c['order.sent'], c['simx.acks'], c['simx.fills'], c['simx.passive_fills'],
               c['simx.mbo_joins'], ' '.join('%s:%s' % (k, v['position'] if isinstance(v, dict)
                                                          else v)
                                             for k, v in res['positions'].items())))

        # 2. the same bytes again
        out2 = replay(args, os.path.join(tmp, 'run2'), cfg, caps, [])
        if out1 != out2:
            fail('stdout differs between two runs')
        for name in ('orders.pcap', 'result.json', 'reports.il3'):
            if read(os.path.join(tmp, 'run1', name)) != read(os.path.join(tmp, 'run2', name)):
                fail('%s differs between two runs' % name)
        print('ok: two runs, byte-identical stdout, orders pcap, result JSON and execution '
              'reports')

        # 3. risk refuses in order-out, the exchange acknowledges the rest
        cfg_risk = os.path.join(tmp, 'risk.cfg')
        cfg_variant(cfg, cfg_risk, [(r'max_open_orders = \d+;', 'max_open_orders = 1;')])
        out3 = replay(args, os.path.join(tmp, 'run3'), cfg_risk, caps,
                      ['--latency-us', '2000000'])
        c3 = counters(out3)
        if int(c3.get('strategy.refused.max_open_orders', '0')) == 0 or \
                int(c3['strategy.exec.new']) == 0:
            fail('risk: refused.max_open_orders %s, exec.new %s' %
                 (c3.get('strategy.refused.max_open_orders'), c3['strategy.exec.new']))
        if int(c3['simx.news']) != int(c3['order.sent']):
            fail('risk: the exchange saw %s orders, order-out sent %s' %
                 (c3['simx.news'], c3['order.sent']))
        print('ok: risk refused %s orders in order-out (max_open_orders), the exchange '
              'acknowledged %s' % (c3['strategy.refused.max_open_orders'],
                                  c3['strategy.exec.new']))
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print('PASS')


if __name__ == '__main__':
    main()
