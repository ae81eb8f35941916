#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The latency study (DESIGN.md section 7): both topologies on the same
capture at the same speed, paced through a real DPDK rx path, in one run.

  tw_study.py --build BUILD --source SRC [--cme-data DIR] [--out DIR]
              [--quick] [--speed S] [--capture 340|320|synth]
              [--rates S,S,...] [--handoff TYPE] [--json FILE]

What it does, in order (each step prints the load average beside it):
 1. the cache-line round trip between cpu 0 and cpu 1 (study_cacheline),
    the yardstick of the two-stage target, before and after the runs;
 2. tickwire, profile dpdk-config/study, one-thread then two-stage, paced
    at --speed (1 = real time) on the capture; the same capture unpaced,
    whose books must equal the paced runs' (paced replay changes when
    packets arrive, never what they do);
 3. tickwire-report on the two latency files side by side (--json), and
    tickwire-plots.py: latency CDF per topology, the median ladder by idx,
    latency against packets ahead, packet rate and p99 over capture time;
 4. the sustained rate: for each topology, the speed stepped up until a
    run drops a packet or its p99 exceeds twice the p99 at --speed; the
    highest passing speed in packets and messages per second;
 5. the arrival process of the real A/B captures and of tickwire-synth's
    calibrated output (tickwire-arrivals);
 6. one line per target, `[ met  ]` or `[MISSED]`, and study.json.

--quick (the perf suite's smoke run) runs the same steps at speed 1000,
with two rate steps: it checks that every table is produced, and judges
no figure. The full study at speed 1 replays the 303-second channel-340
capture twice: about 12 minutes.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

CAPTURES = {
    '340': 'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.classic-nsec.pcap',
    '320': 'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.classic-nsec.pcap',
}
TOPOLOGIES = ('one-thread', 'two-stage')
PY = '/usr/bin/python3' if os.path.exists('/usr/bin/python3') else sys.executable

# targets of the study (issue 14), ns and packets/s
T_ONE_P50 = 150
T_ONE_P99 = 400
T_ONE_T2T_P50 = 300
T_FLOOR_AGREE = 0.10
T_RATE_PPS = 1000000


def load():
    return os.getloadavg()[0]


def log(msg):
    print('[%s load %.2f] %s' % (time.strftime('%H:%M:%S'), load(), msg), flush=True)


def run(cmd, timeout=3600, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        sys.exit('tw_study: %s exited %d' % (os.path.basename(cmd[0]), p.returncode))
    return p


def counters(text):
    c = dict(re.findall(r'^([a-z_.0-9]+) (\S+)$', text, re.M))
    m = re.search(r'^player\.error_ns (.*)$', text, re.M)
    if m:
        c['player.error_ns'] = m.group(1)
    return c


class Study:
    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.source = os.path.abspath(a.source)
        self.out = os.path.abspath(a.out)
        os.makedirs(self.out, exist_ok=True)
        self.exe = lambda rel: os.path.join(self.build, rel)
        self.result = {'tool': 'tw_study', 'quick': a.quick, 'speed': a.speed,
                       'date': time.strftime('%Y-%m-%d %H:%M:%S %Z'),
                       'machine': machine(), 'tables': {}, 'targets': []}
        self.runs = 0

    # -- inputs -----------------------------------------------------------------
    def capture(self):
        name = self.a.capture
        if name in CAPTURES and self.a.cme_data:
            path = os.path.join(self.a.cme_data, CAPTURES[name])
            if os.path.exists(path):
                return name, path, path
            log('capture %s not found under %s: using the synthetic cme-340 preset' %
                (name, self.a.cme_data))
        a = os.path.join(self.out, 'synth-a.pcap')
        b = os.path.join(self.out, 'synth-b.pcap')
        run([self.exe('app/synth/tickwire-synth'), '--preset', 'cme-340', '--seed', '1',
             '--out-a', a, '--out-b', b])
        return 'synth-cme-340', a, b

    def profile(self, name, topology, rx_a, rx_b):
        out = os.path.join(self.out, name)
        run([PY, os.path.join(self.source, 'tests/integration/tw_profile.py'),
             '--from', os.path.join(self.source, 'dpdk-config/study'), '--out', out,
             '--rx', 'feed_a=' + rx_a, '--rx', 'feed_b=' + rx_b,
             '--tx', 'orders=' + os.path.join(out, 'orders.pcap'),
             '--cfg', r'^(\s*file\s*=\s*)"[^"]*latency[^"]*"=>\1"%s"' %
             os.path.join(out, 'latency.bin'),
             '--cfg', r'^(\s*file\s*=\s*)"[^"]*session[^"]*"=>\1"%s"' %
             os.path.join(out, 'session'),
             '--cfg', r'interval_ms = \d+=>interval_ms = 0',
             '--cfg', r'^topology = .*$=>topology = "%s";' % topology] +
            (['--cfg', r'(capture_to_decode = \{[^}]*?type = )"\w+"=>\g<1>"%s"' %
              self.a.handoff] if self.a.handoff else []))
        return out

    # -- one appliance run ---------------------------------------------------------
    def tickwire(self, name, topology, rx, speed):
        prof = self.profile(name, topology, *rx)
        self.runs += 1
        cmd = [self.exe('app/tickwire/tickwire'), '--file-prefix',
               'tw-study-%d-%d' % (os.getpid(), self.runs), '--log-level=tickwire.*:notice',
               '--', '--ports', os.path.join(prof, 'ports.ini'),
               '--config', os.path.join(prof, 'tickwire.cfg'), '--print-books', '0']
        if speed != 'max':
            # order-out beside the decode lcore, as live: tick-to-trade
            # without the turns that make a paced run replay-identical
            cmd += ['--pace', str(speed), '--order-out-free']
        t = time.time()
        p = run(cmd, timeout=7200)
        c = counters(p.stdout)
        c['_seconds'] = time.time() - t
        c['_latency'] = os.path.join(prof, 'latency.bin')
        c['_load'] = load()
        return c

    def report(self, files, json_path):
        p = run([self.exe('app/report/tickwire-report'), '--json', json_path] + files)
        return p.stdout, json.load(open(json_path))

    # -- steps -----------------------------------------------------------------------
    def cacheline(self):
        p = run([self.exe('tests/perf/study/study_cacheline'),
                 '20000' if self.a.quick else '400000'])
        c = counters(p.stdout)
        return float(c['cacheline_rt_p50_ns'])

    def main(self):
        r = self.result
        speed = self.a.speed
        cap_name, rx_a, rx_b = self.capture()
        r['capture'] = {'name': cap_name, 'a': rx_a, 'b': rx_b}
        log('study: capture %s, speed %s, topologies %s' % (cap_name, speed,
                                                             ' and '.join(TOPOLOGIES)))
        line = [self.cacheline()]
        log('cache-line round trip cpu0<->cpu1: %.1f ns' % line[0])

        # 2. both topologies, paced; the same capture unpaced
        base = {}
        for topo in TOPOLOGIES:
            log('tickwire %s, paced at %s ...' % (topo, speed))
            base[topo] = self.tickwire('base-' + topo, topo, (rx_a, rx_b), speed)
            c = base[topo]
            log('  %s: %s packets, rx drops %s, player error ns %s, %.0f s' %
                (topo, c.get('player.released'), c.get('rx_drops'),
                 c.get('player.error_ns'), c['_seconds']))
        log('tickwire two-stage, unpaced (consistency) ...')
        unpaced = self.tickwire('unpaced', 'two-stage', (rx_a, rx_b), 'max')
        line.append(self.cacheline())
        log('cache-line round trip after the runs: %.1f ns' % line[1])
        r['cacheline_rt_ns'] = line
        rt = sum(line) / len(line)

        keys = ('book.hash', 'book.packets_applied', 'book.messages', 'strategy.orders')
        runs = [base[t] for t in TOPOLOGIES] + [unpaced]
        consistency = {k: [c.get(k) for c in runs] for k in keys}
        # a run that dropped packets on the way in (rx or hand-off, e.g. a
        # capture lcore descheduled on a loaded machine) saw other input:
        # compare the runs that got every packet, and say which did not
        drops = [int(c.get('rx_drops') or 0) for c in runs]
        whole = [i for i, d in enumerate(drops) if d == 0]
        same = len(whole) >= 2 and all(len(set(v[i] for i in whole)) == 1
                                       for v in consistency.values())
        r['tables']['consistency'] = {'same_books_and_orders': same, 'values': consistency,
                                      'rx_drops': drops, 'compared': len(whole)}

        # 3. the report, side by side
        text, rep = self.report([base[t]['_latency'] for t in TOPOLOGIES],
                                os.path.join(self.out, 'report.json'))
        open(os.path.join(self.out, 'report.txt'), 'w').write(text)
        r['report'] = rep
        plots = os.path.join(self.out, 'plots')
        p = run([PY, self.exe('app/report/tickwire-plots.py'),
                 os.path.join(self.out, 'report.json'), plots], check=False)
        r['plots'] = sorted(os.path.join(plots, f) for f in os.listdir(plots)) \
            if p.returncode == 0 and os.path.isdir(plots) else []
        if p.returncode != 0:
            log('tickwire-plots.py exited %d: %s' % (p.returncode, p.stderr.strip()[-300:]))

        head = {}
        for topo, run_ in zip(TOPOLOGIES, rep['runs']):
            head[topo] = headline(run_, base[topo])
        r['tables']['headline'] = head
        r['tables']['player'] = {t: {'error_ns': base[t].get('player.error_ns'),
                                     'released': base[t].get('player.released'),
                                     'rx_drops': base[t].get('rx_drops'),
                                     'seconds': round(base[t]['_seconds'], 1),
                                     'load': round(base[t]['_load'], 2)}
                                 for t in TOPOLOGIES}

        # 4. sustained rate
        r['tables']['rate'] = self.rates(cap_name, (rx_a, rx_b), head)

        # 5. the arrival process
        r['tables']['arrivals'] = self.arrivals(rx_a)

        # 6. print, judge, write
        self.print_tables(rt)
        self.judge(rt)
        path = self.a.json or os.path.join(self.out, 'study.json')
        json.dump(r, open(path, 'w'), indent=1, sort_keys=True)
        log('study.json: %s' % path)
        return 0

    def rates(self, cap_name, rx, head):
        """Sustained rate, on the synthetic demo capture (a steady 3,500
        packets/s a feed for 3.7 s: the real captures idle for seconds, so
        their mean rate says little): speed 1 first (the p99 reference),
        then stepped up. Item 6's sustained rate: the highest speed with no
        drop and p99 within twice speed 1's; also the highest with no drop."""
        syn = (self.exe('app/synth/synth-demo-a.pcap'), self.exe('app/synth/synth-demo-b.pcap'))
        steps = [float(s) for s in self.a.rates.split(',')] if self.a.rates else \
            ([1, 100] if self.a.quick else [1, 10, 30, 100, 200, 300, 600, 1000])
        if steps[0] != 1:
            steps.insert(0, 1)
        table = {}
        for topo in TOPOLOGIES:
            rows, best, best_nodrop, limit = [], None, None, None
            for s in steps:
                c = self.tickwire('rate-%s-%g' % (topo, s), topo, syn, '%g' % s)
                _, rep = self.report([c['_latency']], os.path.join(self.out, 'rate.json'))
                one = headline(rep['runs'][0], c)
                span = int(c.get('player.span_us', '0')) / 1e6
                pps = int(c.get('player.released', 0)) / span if span > 0 else 0.0
                mps = int(c.get('book.messages', 0)) / span if span > 0 else 0.0
                drops = int(c.get('rx_drops', '0'))
                if s == 1:
                    limit = 2 * one['p99_ns'] if one['p99_ns'] else None
                ok = drops == 0 and limit is not None and one['p99_ns'] is not None and \
                    one['p99_ns'] <= limit
                rows.append({'speed': s, 'packets_per_s': round(pps), 'messages_per_s':
                             round(mps), 'rx_drops': drops, 'p50_ns': one['p50_ns'],
                             'p99_ns': one['p99_ns'], 'pass': ok,
                             'player_error_ns': c.get('player.error_ns'),
                             'load': round(c['_load'], 2)})
                log('  rate %s x%g: %.0f packets/s, %s drops, p99 %s ns: %s' %
                    (topo, s, pps, drops, fmt(one['p99_ns']), 'pass' if ok else 'fail'))
                # sustained: every step up to this one passed
                if ok and all(x['pass'] for x in rows):
                    best = rows[-1]
                if drops == 0:
                    best_nodrop = rows[-1]
                else:
                    break
            table[topo] = {'capture': 'synth-demo', 'p99_limit_ns': limit, 'steps': rows,
                           'sustained': best, 'zero_drop': best_nodrop}
        return table

    def arrivals(self, rx_a):
        exe = self.exe('app/arrivals/tickwire-arrivals')
        inputs = {}
        if self.a.cme_data:
            for name, rel in sorted(CAPTURES.items()):
                path = os.path.join(self.a.cme_data, rel)
                if os.path.exists(path):
                    inputs['real-' + name] = [path]
        for preset in ('cme-340', 'cme-320'):
            a = os.path.join(self.out, 'arr-%s-a.pcap' % preset)
            b = os.path.join(self.out, 'arr-%s-b.pcap' % preset)
            run([self.exe('app/synth/tickwire-synth'), '--preset', preset, '--seed', '1',
                 '--out-a', a, '--out-b', b])
            inputs['synth-' + preset] = [a, b]
        out = {}
        for name, files in inputs.items():
            j = os.path.join(self.out, 'arrivals-%s.json' % name)
            p = run([exe, '--json', j] + files)
            open(os.path.join(self.out, 'arrivals-%s.txt' % name), 'w').write(p.stdout)
            out[name] = json.load(open(j))
        return out

    # -- output ---------------------------------------------------------------------
    def print_tables(self, rt):
        r = self.result
        t = r['tables']
        print()
        print('== latency study: capture %s, speed %s, load %.2f, %s' %
              (r['capture']['name'], r['speed'], load(), r['machine']))
        print('t0 = the player released the packet into its port\'s rx ring; t1 = the book '
              'event was published; t3 = the order was handed to the tx queue')
        print('cache-line round trip cpu0<->cpu1: %s ns (before, after)' %
              ', '.join('%.1f' % x for x in r['cacheline_rt_ns']))
        print()
        print('%-12s %9s %9s %9s %9s %9s %9s %9s %9s %9s %7s' %
              ('topology', 'p50', 'p90', 'p99', 'p99.9', 'max', 't2t p50', 't2t p99',
               'floor(a)', 'floor(b)', 'ahead0'))
        for topo, h in t['headline'].items():
            print('%-12s %9s %9s %9s %9s %9s %9s %9s %9s %9s %6s%%' %
                  (topo, fmt(h['p50_ns']), fmt(h['p90_ns']), fmt(h['p99_ns']),
                   fmt(h['p99_9_ns']), fmt(h['max_ns']), fmt(h['t2t_p50_ns']),
                   fmt(h['t2t_p99_ns']), fmt(h['floor_fit_ns']), fmt(h['floor_idx0_ns']),
                   fmt(h['share_ahead_zero'] * 100 if h['share_ahead_zero'] is not None
                       else None)))
        print()
        print('packets that found nothing ahead, p50 ns: t0 -> decode group takes it -> '
              't1 published (-> t2 decided)')
        for topo, h in t['headline'].items():
            print('%-12s t1-t0 %7s = to decode %7s + decode group %7s   (signal %s)' %
                  (topo, fmt(h['ahead0_p50_ns']), fmt(h['ahead0_to_decode_p50_ns']),
                   fmt(h['ahead0_decode_group_p50_ns']), fmt(h['ahead0_signal_p50_ns'])))
        one, two = t['headline']['one-thread'], t['headline']['two-stage']
        if one['p50_ns'] is not None and two['p50_ns'] is not None:
            print('two-stage p50 - one-thread p50 = %.0f ns (%.2f cache-line round trips)' %
                  (two['p50_ns'] - one['p50_ns'], (two['p50_ns'] - one['p50_ns']) / rt))
        print('paced and unpaced runs: same books and orders: %s (%d of %d runs compared; '
              'rx drops per run %s)' % (t['consistency']['same_books_and_orders'],
                                        t['consistency']['compared'],
                                        len(t['consistency']['rx_drops']),
                                        t['consistency']['rx_drops']))
        print()
        print('player error (actual - scheduled release), ns: ' + '; '.join(
            '%s %s' % (k, v['error_ns']) for k, v in t['player'].items()))
        print()
        print('sustained rate, synthetic demo capture (pass: no drop and p99 <= 2 x p99 at '
              'speed 1):')
        for topo, v in t['rate'].items():
            for row in v['steps']:
                print('  %-11s x%-8g %10d packets/s %10d messages/s drops %d p99 %s ns %s '
                      '(load %.2f)' % (topo, row['speed'], row['packets_per_s'],
                                       row['messages_per_s'], row['rx_drops'],
                                       fmt(row['p99_ns']), 'pass' if row['pass'] else 'FAIL',
                                       row['load']))
        print()
        print('arrival process (merged A/B stream of each channel):')
        print('  %-16s %8s %10s %7s %9s %9s  %s' % ('input', 'packets', 'rate/s', 'CV',
                                                     'msgs/pkt', 'burst%', 'index of '
                                                     'dispersion at 1ms 10ms 100ms 1s '
                                                     '(Poisson: 1)'))
        for name, j in t['arrivals'].items():
            for row in arrival_rows(j):
                print('  %-16s %8d %10.1f %7.2f %9.2f %8.1f%%  %s' % ((name,) + row))
        print()
        print(open(os.path.join(self.out, 'report.txt')).read())

    def judge(self, rt):
        t = self.result['tables']
        one, two = t['headline']['one-thread'], t['headline']['two-stage']
        rate = (t['rate']['one-thread']['sustained'] or {}).get('packets_per_s', 0)
        nodrop = (t['rate']['one-thread']['zero_drop'] or {}).get('packets_per_s', 0)
        tests = [
            ('one-thread rx->book p50 <= %d ns' % T_ONE_P50, one['p50_ns'],
             one['p50_ns'] is not None and one['p50_ns'] <= T_ONE_P50),
            ('one-thread rx->book p99 <= %d ns' % T_ONE_P99, one['p99_ns'],
             one['p99_ns'] is not None and one['p99_ns'] <= T_ONE_P99),
            ('one-thread tick-to-trade p50 <= %d ns' % T_ONE_T2T_P50, one['t2t_p50_ns'],
             one['t2t_p50_ns'] is not None and one['t2t_p50_ns'] <= T_ONE_T2T_P50),
            ('two-stage p50 <= one-thread p50 + cache-line RT (%.0f ns)' % rt, two['p50_ns'],
             None not in (one['p50_ns'], two['p50_ns']) and
             two['p50_ns'] <= one['p50_ns'] + rt),
            ('floor three ways within 10%% (one-thread; spread %s)' %
             fmt2(one['floor_spread']), one['floor_spread'],
             one['floor_spread'] is not None and one['floor_spread'] <= T_FLOOR_AGREE),
            ('floor three ways within 10%% (two-stage; spread %s)' %
             fmt2(two['floor_spread']), two['floor_spread'],
             two['floor_spread'] is not None and two['floor_spread'] <= T_FLOOR_AGREE),
            ('sustained one-thread >= 1M packets/s, zero drops (%d; with no drop at all: %d)'
             % (rate, nodrop), rate, rate >= T_RATE_PPS),
        ]
        print('== targets (speed %s%s)' % (self.result['speed'],
                                           ', quick: figures not judged' if self.a.quick
                                           else ''))
        for what, value, ok in tests:
            self.result['targets'].append({'target': what, 'value': value, 'met': bool(ok)})
            print('[%s] %s: %s' % (' met  ' if ok else 'MISSED', what, fmt(value)))


def headline(run_, c):
    def row(kind):
        for p in run_.get('percentiles', []):
            if p.get('kind') == kind and p.get('instrument') is None:
                return p
        return {}
    ov = row('overall')
    t2t = (run_.get('tick_to_trade') or {}).get('total') or {}
    fl = run_.get('floors') or {}
    parts = run_.get('parts_ahead_zero') or {}
    return {
        'ahead0_p50_ns': (parts.get('t1_t0') or {}).get('p50'),
        'ahead0_to_decode_p50_ns': (parts.get('to_decode') or {}).get('p50'),
        'ahead0_decode_group_p50_ns': (parts.get('decode_group') or {}).get('p50'),
        'ahead0_signal_p50_ns': (parts.get('signal') or {}).get('p50'),
        'records': ov.get('count'), 'p50_ns': ov.get('p50'), 'p90_ns': ov.get('p90'),
        'p99_ns': ov.get('p99'), 'p99_9_ns': ov.get('p99_9'), 'max_ns': ov.get('max'),
        't2t_p50_ns': t2t.get('p50'), 't2t_p99_ns': t2t.get('p99'),
        'floor_fit_ns': fl.get('fit_ns'), 'floor_idx0_ns': fl.get('idx0_ns'),
        'floor_dense_ns': fl.get('dense_ns'), 'floor_spread': fl.get('spread'),
        'share_ahead_zero': (run_.get('ahead') or {}).get('share_ahead_zero'),
        'player_error_ns': c.get('player.error_ns'), 'rx_drops': c.get('rx_drops'),
    }


def arrival_rows(j):
    """(packets, rate, cv, msgs/packet, burst share, dispersion text) of each
    channel's merged A/B stream."""
    out = []
    for s in j.get('streams', []):
        if s.get('kind') != 'merged':
            continue
        disp = ' '.join('%.1f' % d['index'] for d in s.get('dispersion', [])
                        if d.get('window') in ('1ms', '10ms', '100ms', '1s'))
        out.append((s.get('packets', 0), s.get('rate_per_s', 0.0),
                    s.get('interarrival', {}).get('cv', 0.0),
                    s.get('messages_per_packet', {}).get('mean', 0.0),
                    100.0 * s.get('bursts', {}).get('share_in_bursts_ge2', 0.0), disp))
    return out


def fmt(v):
    if v is None:
        return '-'
    if isinstance(v, float):
        return '%.0f' % v if abs(v) >= 10 else '%.2f' % v
    return str(v)


def fmt2(v):
    return '-' if v is None else '%.3f' % v


def machine():
    cpu = ''
    try:
        for ln in open('/proc/cpuinfo'):
            if ln.startswith('model name'):
                cpu = ln.split(':', 1)[1].strip()
                break
    except OSError:
        pass
    return '%d cpus, %s, %s' % (os.cpu_count() or 0, cpu, os.uname().release)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--cme-data', default='')
    ap.add_argument('--out', default='study')
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--speed', default=None)
    ap.add_argument('--capture', default='340', choices=('340', '320', 'synth'))
    ap.add_argument('--rates', default='')
    ap.add_argument('--handoff', default='',
                    choices=('', 'bqueue', 'batched', 'sharded', 'lockfree', 'rte_ring'),
                    help='capture -> decode hand-off of the two-stage runs (default: the '
                    'study profile\'s)')
    ap.add_argument('--json', default='')
    a = ap.parse_args()
    if a.speed is None:
        a.speed = '1000' if a.quick else '1'
    if os.path.isdir(a.out) and os.path.basename(os.path.abspath(a.out)).startswith('study'):
        shutil.rmtree(a.out)
    return Study(a).main()


if __name__ == '__main__':
    sys.exit(main())
