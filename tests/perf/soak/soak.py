#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Soak: the appliance replaying at a sustained rate for a chosen time.

  soak.py --build DIR [--source DIR] [--duration S] [--speed X | --rate PPS]
          [--captures A.pcap B.pcap] [--profile DIR] [--warmup S]
          [--busy-poll] [--out DIR] [--json FILE] [--markdown FILE]
          [--keep-going] [--margin-rss-kb N] [--margin-mbufs N]
          [--margin-depth N]

It runs tickwire on the profile (default dpdk-config/demo: --no-huge
--no-pci, lcores floating over the cpus) with the paced player in loop mode
(--pace X --loop 0): the captures again and again as one session, each
pass opening with a ChannelReset. Without --captures it writes them with
tickwire-synth --reset-first (the demo capture: 8 instruments, 12,868
packets a feed, 3.7 s at speed 1, about 6,900 packets/s over both feeds).
--rate PPS picks the speed that gives PPS packets a second over both feeds.

Every second it reads telemetry (/tickwire/resources, /tickwire/stats) and
/proc, and prints one line: elapsed seconds, 1-minute load average, RSS of
tickwire (kB), mbufs in use, depths of the decode group's and order-out's
mailboxes, packets of the second, drops so far, the p99 latency of the
second (t1 - t0 of the book events published in it: the log2 bucket's upper
bound, from the difference of two reads of the live histogram) and the
passes begun. At the end it stops tickwire (SIGTERM), prints a summary per
minute and the verdict, and writes the JSON (and with --markdown a section
for tests/perf/RESULTS.md).

It fails (exit 1, the reasons printed) on:
 - any drop: rx_drops of /tickwire/resources (port imissed, errors and
   rx_nombuf, the player's ring full or pool empty, hand-off drops, rte_ring
   drops), or any sign that the books lost their way: arbiter gaps or lost
   packets, RptSeq gaps, stale books (per channel, /tickwire/stats), and
   the same in the final counters;
 - growth: after the warm-up (--warmup, default a quarter of the run, at
   most 60 s), the samples are cut in thirds; a metric grew when the median
   of the last third exceeds the median of the first third by more than its
   margin: RSS (--margin-rss-kb, 2048 kB), mbufs in use (--margin-mbufs,
   128), each mailbox depth (--margin-depth, 128 messages). Medians, not
   maxima: on shared cpus a descheduled lcore leaves a backlog for a second
   or two, which moves a maximum but not a median, while a leak moves the
   whole level (leaking one mbuf in 1000 packets at 3,500 packets/s, a
   2-minute run measured medians of 190 and 403 mbufs; without the leak,
   32 and 32: the player's mbufs prepared ahead);
 - a stall: no packet for 5 seconds in a row after the warm-up, tickwire
   exiting on its own, telemetry not answering for 5 s in a row, or an
   unclean exit after SIGTERM.
--keep-going runs to the end after a drop (the verdict still fails).

The meson test `soak` (suites integration and soak) runs 2 minutes at speed
0.5; the 30-minute run of tests/perf/RESULTS.md:
  tests/perf/soak/soak.py --build build --duration 1800 --json soak.json \\
      --markdown soak.md
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, '../../..'))
sys.path.insert(0, os.path.join(SOURCE, 'tests/integration'))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
import tw_integration as twi  # noqa: E402  (telemetry client, pcap reader, counters)

PY = '/usr/bin/python3' if os.path.exists('/usr/bin/python3') else sys.executable
# the demo capture, opening with a ChannelReset so that it can loop
SYNTH_ARGS = ['--seed', '310', '--instruments', '8', '--events', '18700',
              '--schema-version', '9', '--reset-first']
IDLE_SLEEP_US = 50   # poll.idle_sleep_us of the hot lcores but the player's
IDLE_POLLS = 1000
GROWTH = ('rss_kb', 'mbufs_in_use', 'decode_depth', 'order_depth')
STALL_S = 5


def log(msg):
    print(msg, flush=True)


def capture_rate(paths):
    """Frames a second over the inputs at speed 1, as the player loops them:
    one pass lasts the span plus one mean interval; None unless every input
    is a classic pcap."""
    for p in paths:
        with open(p, 'rb') as f:
            if f.read(4) not in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
                return None
    times = sorted(t for p in paths for t, _, _ in twi.pcap_records(p))
    if len(times) < 2:
        sys.exit('soak: %s: fewer than 2 frames; hint: longer captures' % ' '.join(paths))
    span = times[-1] - times[0]
    period = span + span // (len(times) - 1)
    return len(times) * 1e9 / period


def make_profile(a, out, captures):
    prof = os.path.join(out, 'profile')
    cfg = [r'^(\s*file\s*=\s*)"[^"]*latency[^"]*"=>\1""',     # histogram only
           r'interval_ms = \d+=>interval_ms = 0',
           r'stop_idle_ms = \d+;=>stop_idle_ms = 0;',
           # the order path works all along (orders are written to a pcap)
           r'max_orders = \d+;=>max_orders = 100000000;']
    if not a.busy_poll:
        # the hot lcores sleep when idle (all but the one stepping the
        # player): the soak shares two cpus with the rest of a test run
        with open(os.path.join(a.profile, 'tickwire.cfg')) as f:
            has_poll = re.search(r'(?m)^poll\s*=', f.read()) is not None
        if has_poll:
            cfg += [r'(?m)^(\s*)idle_sleep_us = \d+;=>\g<1>idle_sleep_us = %d;' % IDLE_SLEEP_US,
                    r'(?m)^(\s*)idle_polls = \d+;=>\g<1>idle_polls = %d;' % IDLE_POLLS]
        else:
            cfg.append(r'(?m)^replay = \{=>poll = { idle_sleep_us = %d; idle_polls = %d; };\n'
                       'replay = {' % (IDLE_SLEEP_US, IDLE_POLLS))
    cmd = [PY, os.path.join(a.source, 'tests/integration/tw_profile.py'), '--from', a.profile,
           '--out', prof, '--rx', 'feed_a=' + captures[0], '--rx', 'feed_b=' + captures[1],
           '--tx', 'orders=' + os.path.join(out, 'orders.pcap'),
           # a NIC's deep rx ring: a stall of a shared cpu must not overflow it
           '--ini', r'^rx_desc = 1024$=>rx_desc = 4096']
    for c in cfg:
        cmd += ['--cfg', c]
    subprocess.run(cmd, check=True)
    return prof


def p99_ns(before, after, hz):
    """Nearest-rank p99 of the histogram difference: the bucket's upper
    bound in ns (as tw_lat_hist_percentile), None without records."""
    diff = [y - x for x, y in zip(before, after)]
    total = sum(diff)
    if total <= 0:
        return None
    want, seen = (total * 9900 + 9999) // 10000, 0
    for i, n in enumerate(diff):
        seen += n
        if seen >= want:
            return ((2 << i) - 1) * 10**9 // hz
    return None


def rss_kb(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


def feed_health(st):
    """Arbiter gaps, lost packets, RptSeq gaps and stale books over the channels."""
    keys = ('gaps', 'lost_packets', 'rpt_seq_gaps', 'stale_books')
    return {k: sum(v for n, v in st.items() if n.startswith('channel_') and n.endswith('_' + k))
            for k in keys}


def machine():
    model = ''
    try:
        with open('/proc/cpuinfo') as f:
            model = next((ln.split(':', 1)[1].strip() for ln in f
                          if ln.startswith('model name')), '')
    except OSError:
        pass
    return {'cpus': os.cpu_count(), 'cpu': model, 'kernel': platform.release(),
            'python': platform.python_version()}


def connect(prefix, proc, seconds=60):
    """The telemetry socket, once the chain answers /tickwire/resources."""
    path = twi.telemetry_path(prefix)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            return None
        try:
            if os.path.exists(path):
                t = twi.Telemetry(path)
                if t.query('/tickwire/resources').get('/tickwire/resources'):
                    return t
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    return None


def median(xs):
    return statistics.median(xs) if xs else 0


def growth(samples, warmup, margins):
    """The growth rule (module docstring): per metric, medians and maxima of
    the first and last thirds after the warm-up."""
    after = [s for s in samples if s['t'] > warmup]
    third = len(after) // 3
    out = {}
    if third < 3:
        return out, ['too few samples after the warm-up (%d) to judge growth; hint: a '
                     'longer --duration or a shorter --warmup' % len(after)]
    first, last, reasons = after[:third], after[-third:], []
    for m in GROWTH:
        f = [s[m] for s in first]
        lst = [s[m] for s in last]
        g = {'first_median': median(f), 'last_median': median(lst), 'first_max': max(f),
             'last_max': max(lst), 'margin': margins[m],
             'first_s': [first[0]['t'], first[-1]['t']],
             'last_s': [last[0]['t'], last[-1]['t']]}
        g['grew'] = g['last_median'] - g['first_median'] > margins[m]
        out[m] = g
        if g['grew']:
            reasons.append('%s grew: median %s in %d-%d s, %s in %d-%d s (margin %d)' %
                           (m, g['first_median'], g['first_s'][0], g['first_s'][1],
                            g['last_median'], g['last_s'][0], g['last_s'][1], margins[m]))
    return out, reasons


def per_minute(samples):
    rows = []
    for m in range(0, (samples[-1]['t'] + 59) // 60 if samples else 0):
        ss = [s for s in samples if m * 60 < s['t'] <= (m + 1) * 60]
        if not ss:
            continue
        p99 = [s['p99_ns'] for s in ss if s['p99_ns'] is not None]
        rows.append({
            'minute': m + 1, 'load': round(statistics.mean(s['load'] for s in ss), 2),
            'rss_kb_max': max(s['rss_kb'] for s in ss),
            'mbufs_median': median([s['mbufs_in_use'] for s in ss]),
            'mbufs_max': max(s['mbufs_in_use'] for s in ss),
            'decode_depth_max': max(s['decode_depth'] for s in ss),
            'order_depth_max': max(s['order_depth'] for s in ss),
            'pps': round(statistics.mean(s['pps'] for s in ss)),
            'p99_us_median': round(median(p99) / 1000, 1) if p99 else None,
            'p99_us_max': round(max(p99) / 1000, 1) if p99 else None,
            'drops': ss[-1]['drops'], 'passes': ss[-1]['passes']})
    return rows


def minute_table(rows):
    head = ('| minute | load | RSS max (kB) | mbufs in use median / max | decode depth max | '
            'order depth max | packets/s | p99 of the second, median / max (us) | drops | '
            'passes |\n|---|---|---|---|---|---|---|---|---|---|\n')
    return head + ''.join(
        '| %d | %.2f | %d | %d / %d | %d | %d | %d | %s / %s | %d | %d |\n' %
        (r['minute'], r['load'], r['rss_kb_max'], r['mbufs_median'], r['mbufs_max'],
         r['decode_depth_max'], r['order_depth_max'], r['pps'], r['p99_us_median'],
         r['p99_us_max'], r['drops'], r['passes']) for r in rows)


def markdown(res):
    g = res['growth']
    lines = ['## Soak: %d minutes at %d packets/s (issue 16)\n' %
             (round(res['duration'] / 60), res['rate_pps']),
             'Date: %s. Machine: %s, %d cpus, kernel %s; build `%s` of commit %s. Load '
             'average (1 min) %.2f at the start, %.2f at the end.\n' %
             (res['start_utc'], res['machine']['cpu'] or 'unknown cpu', res['machine']['cpus'],
              res['machine']['kernel'], res['build'], res['commit'], res['load_start'],
              res['load_end']),
             '```sh\n%s\n```\n' % res['command'],
             'tickwire: `%s`\n' % ' '.join(res['tickwire_command']),
             'Verdict: **%s**%s. Warm-up %d s; growth rule: median of the last third '
             'against the first third after it.\n' %
             (res['verdict'], ' (' + '; '.join(res['reasons']) + ')' if res['reasons'] else '',
              res['warmup']),
             '| metric | first third median (max) | last third median (max) | margin |\n'
             '|---|---|---|---|']
    for m, v in g.items():
        lines.append('| %s | %s (%s) | %s (%s) | %s |' % (m, v['first_median'], v['first_max'],
                                                          v['last_median'], v['last_max'],
                                                          v['margin']))
    lines.append('')
    f = res['final']
    lines.append('Final counters: %s passes, %s packets applied, arbiter gaps %s, lost %s, '
                 'RptSeq gaps %s, stale books %s, rx drops %s.\n' %
                 (f.get('player.passes'), f.get('book.packets_applied'), f.get('arb.gaps'),
                  f.get('arb.lost_packets'), f.get('book.rpt_seq_gaps'),
                  f.get('book.stale_books'), f.get('rx_drops')))
    lines.append('Per minute:\n')
    lines.append(minute_table(res['minutes']))
    return '\n'.join(lines)


def stop(proc, reasons):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        reasons.append('tickwire did not exit within 60 s of SIGTERM')


def final_checks(out_text, rc, reasons):
    final = twi.counters(out_text)
    if rc != 0 or 'stopped by signal' not in out_text:
        reasons.append('tickwire exited %s%s' % (rc, '' if 'stopped by signal' in out_text
                                                  else ' before the end of the soak'))
    for k in ('rx_drops', 'arb.gaps', 'arb.lost_packets', 'book.rpt_seq_gaps',
              'book.stale_books', 'book.stale_entries', 'decode.mailbox_full'):
        if final.get(k, '0') != '0':
            reasons.append('final counters: %s %s' % (k, final[k]))
    return final


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', default=SOURCE)
    ap.add_argument('--duration', type=int, default=120, help='seconds (default 120)')
    g = ap.add_mutually_exclusive_group()
    g.add_argument('--speed', help='replay speed, as tickwire --pace (default 1)')
    g.add_argument('--rate', type=float, help='packets a second over both feeds')
    ap.add_argument('--captures', nargs=2, metavar=('A', 'B'),
                    help='feed A and B captures, opening with a ChannelReset '
                         '(default: tickwire-synth --reset-first)')
    ap.add_argument('--profile', help='profile directory (default dpdk-config/demo)')
    ap.add_argument('--warmup', type=int, help='seconds (default min(60, duration / 4))')
    ap.add_argument('--busy-poll', action='store_true',
                    help="keep the profile's poll settings (default: idle lcores sleep)")
    ap.add_argument('--out', help='work directory (default: a new one under /tmp)')
    ap.add_argument('--json', help='write the samples and the verdict here')
    ap.add_argument('--markdown', help='write a section for tests/perf/RESULTS.md here')
    ap.add_argument('--keep-going', action='store_true', help='run to the end after a drop')
    ap.add_argument('--margin-rss-kb', type=int, default=2048)
    ap.add_argument('--margin-mbufs', type=int, default=128)
    ap.add_argument('--margin-depth', type=int, default=128)
    a = ap.parse_args()
    a.build, a.source = os.path.abspath(a.build), os.path.abspath(a.source)
    a.profile = os.path.abspath(a.profile or os.path.join(a.source, 'dpdk-config/demo'))
    if a.duration < 10:
        ap.error('--duration %d: at least 10 seconds' % a.duration)
    warmup = a.warmup if a.warmup is not None else min(60, a.duration // 4)
    tickwire = os.path.join(a.build, 'app/tickwire/tickwire')
    synth = os.path.join(a.build, 'app/synth/tickwire-synth')
    for exe in (tickwire,) + (() if a.captures else (synth,)):
        if not os.access(exe, os.X_OK):
            sys.exit('soak: %s: not built; hint: ninja -C %s' % (exe, a.build))
    out = os.path.abspath(a.out or tempfile.mkdtemp(prefix='tw-soak-'))
    os.makedirs(out, exist_ok=True)

    if a.captures:
        captures = [os.path.abspath(c) for c in a.captures]
    else:
        captures = [os.path.join(out, 'soak-%s.pcap' % s) for s in 'ab']
        subprocess.run([synth, '--out-a', captures[0], '--out-b', captures[1]] + SYNTH_ARGS,
                       check=True)
    base = capture_rate(captures)
    if a.rate:
        if base is None:
            sys.exit('soak: --rate: the rate of pcapng captures is not measured here; hint: '
                     '--speed X (X times real time)')
        speed = '%.3f' % (a.rate / base)
        if float(speed) <= 0:
            sys.exit('soak: --rate %g: below what speed 0.001 gives (%.1f packets/s)' %
                     (a.rate, base / 1000))
    else:
        speed = a.speed or '1'
    try:
        rate = round(base * float(speed)) if base else 0  # 0: see packets a second
    except ValueError:
        sys.exit('soak: --speed %s: not a number; hint: 1 is real time, 0.5 half' % speed)
    prof = make_profile(a, out, captures)
    prefix = 'tw-soak-%d' % os.getpid()
    cmd = [tickwire, '--file-prefix', prefix, '--', '--ports', os.path.join(prof, 'ports.ini'),
           '--config', os.path.join(prof, 'tickwire.cfg'), '--pace', speed, '--loop', '0',
           '--print-books', '0']
    res = {'command': ' '.join([os.path.relpath(sys.argv[0], a.source)] + sys.argv[1:]),
           'tickwire_command': cmd, 'build': a.build, 'duration': a.duration,
           'warmup': warmup, 'speed': speed, 'rate_pps': rate, 'captures': captures,
           'machine': machine(), 'load_start': os.getloadavg()[0],
           'commit': subprocess.run(['git', '-C', a.source, 'describe', '--always', '--dirty'],
                                    capture_output=True, text=True).stdout.strip() or 'unknown',
           'start_utc': datetime.datetime.now(datetime.timezone.utc).strftime(
               '%Y-%m-%d %H:%M UTC')}
    log('soak: %d s at speed %s (%s packets/s over both feeds), warm-up %d s, load %.2f; '
        'work directory %s' % (a.duration, speed, rate or '?', warmup, res['load_start'], out))
    log('soak: ' + ' '.join(cmd))

    stdout = open(os.path.join(out, 'tickwire.out'), 'w+')
    stderr = open(os.path.join(out, 'tickwire.err'), 'w+')
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr)
    reasons, samples = [], []
    tel = connect(prefix, proc)
    if tel is None:
        stop(proc, reasons)
        stderr.seek(0)
        sys.exit('soak: tickwire did not answer telemetry within 60 s (exit %s):\n%s' %
                 (proc.returncode, stderr.read()[-3000:]))
    log('%6s %5s %8s %6s %6s %6s %7s %6s %9s %6s' % ('t_s', 'load', 'rss_kB', 'mbufs',
                                                     'dec_q', 'ord_q', 'pkts', 'drops',
                                                     'p99_us', 'passes'))
    t0 = time.monotonic()
    prev, silent, quiet, second = None, 0, 0, 0
    while second < a.duration:
        second += 1
        time.sleep(max(0.0, t0 + second - time.monotonic()))
        if proc.poll() is not None:
            reasons.append('tickwire exited %d at %d s' % (proc.returncode, second))
            break
        try:
            r = tel.query('/tickwire/resources')['/tickwire/resources']
            st = tel.query('/tickwire/stats')['/tickwire/stats']
            silent = 0
        except (OSError, ValueError, KeyError, TypeError):
            silent += 1
            if silent >= STALL_S:
                reasons.append('telemetry did not answer for %d s at %d s' % (silent, second))
                break
            continue
        health = feed_health(st)
        s = {'t': second, 'load': os.getloadavg()[0], 'rss_kb': rss_kb(proc.pid),
             'mbufs_in_use': r['mbufs_in_use'], 'decode_depth': r['decode_mailbox_depth'],
             'order_depth': r['order_mailbox_depth'], 'rx_ring_depth': r['rx_ring_depth'],
             'packets': st['decode_rx_packets'], 'rx_drops': r['rx_drops'],
             'passes': r['player_passes'], 'orders': st['orders_written'], 'health': health,
             'hist': r['latency_hist']}
        s['drops'] = s['rx_drops'] + sum(health.values())
        s['pps'] = s['packets'] - prev['packets'] if prev else 0
        s['p99_ns'] = p99_ns(prev['hist'], s['hist'], r['latency_hz']) if prev else None
        samples.append(s)
        prev = s
        log('%6d %5.2f %8d %6d %6d %6d %7d %6d %9s %6d' % (
            second, s['load'], s['rss_kb'], s['mbufs_in_use'], s['decode_depth'],
            s['order_depth'], s['pps'], s['drops'],
            '-' if s['p99_ns'] is None else '%.1f' % (s['p99_ns'] / 1000), s['passes']))
        if s['drops'] and not any(x.startswith('drops') for x in reasons):
            reasons.append('drops at %d s: rx_drops %d (%s), feeds: %s' % (
                second, s['rx_drops'], ', '.join('%s %d' % (k, v) for k, v in r.items()
                                                 if k in ('rx_imissed', 'rx_errors',
                                                          'rx_nombuf', 'handoff_drops',
                                                          'ring_drops', 'player_ring_full',
                                                          'player_no_mbuf') and v),
                ', '.join('%s %d' % kv for kv in health.items())))
            if not a.keep_going:
                break
        quiet = quiet + 1 if second > warmup and s['pps'] == 0 else 0
        if quiet >= STALL_S:
            reasons.append('no packet for %d s at %d s: the replay stalled' % (quiet, second))
            break
    stop(proc, reasons)
    # EAL leaves its runtime directory (sockets, config) behind
    shutil.rmtree(os.path.dirname(twi.telemetry_path(prefix)), ignore_errors=True)
    stdout.seek(0)
    out_text = stdout.read()
    res['final'] = final_checks(out_text, proc.returncode, reasons)
    margins = {'rss_kb': a.margin_rss_kb, 'mbufs_in_use': a.margin_mbufs,
               'decode_depth': a.margin_depth, 'order_depth': a.margin_depth}
    if second >= a.duration and not reasons:
        res['growth'], grew = growth(samples, warmup, margins)
        reasons += grew
    else:
        res['growth'] = growth(samples, warmup, margins)[0]
    res['load_end'] = os.getloadavg()[0]
    res['minutes'] = per_minute(samples)
    res['reasons'] = reasons
    res['verdict'] = 'fail' if reasons else 'pass'
    for s in samples:
        del s['hist']
    res['samples'] = samples

    log('\nper minute:\n' + minute_table(res['minutes']))
    for m, g in res['growth'].items():
        log('growth %-13s median %s -> %s, max %s -> %s (margin %d)%s' % (
            m, g['first_median'], g['last_median'], g['first_max'], g['last_max'],
            g['margin'], '  GREW' if g['grew'] else ''))
    f = res['final']
    log('final: %s passes, %s packets applied, gaps %s, lost %s, rpt_seq_gaps %s, stale %s, '
        'rx_drops %s, orders %s' % (f.get('player.passes'), f.get('book.packets_applied'),
                                    f.get('arb.gaps'), f.get('arb.lost_packets'),
                                    f.get('book.rpt_seq_gaps'), f.get('book.stale_books'),
                                    f.get('rx_drops'), f.get('chain.orders_written')))
    if a.json:
        with open(a.json, 'w') as fj:
            json.dump(res, fj, indent=1)
    if a.markdown:
        with open(a.markdown, 'w') as fm:
            fm.write(markdown(res))
    if reasons:
        stderr.seek(0)
        tail = stderr.read()[-2000:]
        log('FAIL: ' + '; '.join(reasons) + ('\ntickwire stderr (end):\n' + tail if tail else ''))
        return 1
    log('ok: soak %d s at %s packets/s: no drop, no growth (RSS, mbufs, mailboxes)' %
        (a.duration, rate or '?'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
