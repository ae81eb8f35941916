#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Faults through the appliance (issue 16, item 3): the rx-path fault injector
of [feed.NAME] fault.* (app/tickwire/tw_fault.h) drops, duplicates, reorders,
delays or silences packets per feed, and the appliance must keep its
invariants.

  tw_faults.py --build DIR --source DIR --cme-data DIR TEST

Tests (each on the synthetic capture and, when the CME data is there, on the
real channel-340 capture; 'recovery' on tickwire-synth captures only: the
public capture has neither a snapshot feed nor a ChannelReset):
  equal      drops, duplicates, reorders and delays on both feeds, no
             MsgSeqNum missing from both: books, the counters that must match
             and the orders (byte-compared) equal the fault-free run's; the
             injector's counters equal what this script recomputes
  lost       drops on both feeds: arb.lost_packets == the MsgSeqNums this
             script computes as dropped on both; with recovery.on_loss
             "stale_all" no order is triggered after the first loss
  feed-dies  feed A dies mid-run (two-stage and one-thread): everything equal
             to the fault-free run; a log line and counters say so
  both-die   both feeds die mid-run: no hang, no crash, a log line per feed,
             exact counters, books and orders equal a fault-free run of the
             captures cut where the feeds died (TODO: stale books, cancelled
             orders once "both feeds silent" is detected)
  recovery   drops on both feeds, then a snapshot recovery (recovery.mode
             "snapshot") or a ChannelReset: the books at the end equal the
             fault-free run's
  config     bad fault.* values refused with file:line, section, key and range

Decisions are recomputed here with the injector's hash (tw_fault_hash()):
a decision of kind K fires for MsgSeqNum s of a feed when
ppm(mix(mix(seed ^ (K << 48 | side << 32 | channel)) ^ s)) < rate.
Runs that compare exactly read both feeds from one rx queue on the decode
lcore (one-thread), in capture order, and declare gaps by packet count only,
so what the arbiter sees does not depend on timing.
"""
import os
import re
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tw_integration as ti  # noqa: E402

RUN_TIMEOUT = 90      # seconds a single appliance run may take (ASan, loaded machine)
M64 = (1 << 64) - 1
DROP, DUP, REORDER, DELAY = 1, 2, 3, 4
# every order the strategy decides is written (no risk limit, which may
# depend on the clock, refuses one), so orders compare over the whole run
ORDERS_CFG = [r'max_orders = \d+;=>max_orders = 100000;',
              r'max_open_orders = \d+;=>max_open_orders = 100000;',
              r'max_position = \d+;=>max_position = 10000000;',
              r'max_messages_per_second = \d+;=>max_messages_per_second = 100000;']
# one-thread, both feeds on one rx queue: the arbiter sees the capture order
EXACT_CFG = [ti.ONE_THREAD]
EXACT_INI = list(ti.ONE_QUEUE)
# two-stage with room for the whole capture in the hand-off and the pool
TWO_STAGE_CFG = [r'(capture_to_decode = \{[^}]*?capacity = )\d+=>\g<1>65536']
TWO_STAGE_INI = [r'^mbufs = \d+$=>mbufs = 65535']
# what faults that leave every MsgSeqNum on a feed must not change (arb.gaps,
# arb.duplicates and the packet counts do change)
BOOK_KEYS = tuple(k for k in ti.BOOK_KEYS if k != 'arb.gaps') + (
    'book.stale_books', 'chain.decoded', 'chain.events', 'book.events', 'book.instruments')


# the order-out frames of tw_msg.h, as hex: orders, cancels (stale book, kill
# switch), and where an order carries the MsgSeqNum that triggered it
ORDER_MAGIC, CANCEL_MAGIC = b'TWO1'.hex(), b'TWX1'.hex()
ORDER_SEQ = slice(40, 48)


# -- the injector's decisions, recomputed ---------------------------------------

def mix(z):
    z = (z + 0x9e3779b97f4a7c15) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def fires(fault, side, channel, seq, kind):
    rate = fault.get({DROP: 'drop_ppm', DUP: 'dup_ppm', REORDER: 'reorder_ppm',
                      DELAY: 'delay_ppm'}[kind], 0)
    if not rate or seq < fault.get('first_seq', 0) or \
            (fault.get('last_seq', 0) and seq > fault['last_seq']):
        return False
    h = mix(mix(fault.get('seed', 0) ^ (kind << 48 | side << 32 | channel)) ^ seq)
    return ((h >> 32) * 1000000) >> 32 < rate


def expected_counters(fault, side, channel, seqs):
    """What the injector of a feed must count for its packets' MsgSeqNums @seqs."""
    c = dict.fromkeys(('packets', 'dropped', 'duplicated', 'reordered', 'delayed', 'died',
                       'silenced', 'held', 'hold_full'), 0)
    c['packets'] = len(seqs)
    die = fault.get('die_after', 0)
    for n, s in enumerate(seqs, 1):
        if die and n > die:
            c['silenced'] += 1
            c['died'] = 1
        elif fires(fault, side, channel, s, DROP):
            c['dropped'] += 1
        else:
            c['duplicated'] += fires(fault, side, channel, s, DUP)
            if fires(fault, side, channel, s, DELAY):
                c['delayed'] += 1
            elif fires(fault, side, channel, s, REORDER):
                c['reordered'] += 1
    c['passed'] = c['packets'] + c['duplicated'] - c['dropped'] - c['silenced']
    return c


def delivered(fault, side, channel, seqs):
    """The MsgSeqNums a feed still delivers."""
    die = fault.get('die_after', 0)
    return {s for n, s in enumerate(seqs, 1)
            if not (die and n > die) and not fires(fault, side, channel, s, DROP)}


# -- captures ------------------------------------------------------------------------

class Feed:
    def __init__(self, name, side, channel, group, port):
        self.name, self.side, self.channel = name, side, channel
        self.group, self.port = group, port


class Source:
    """A capture and its two incremental feeds: the synthetic channel 310 of
    the build (or one tickwire-synth writes), or the real channel 340."""

    def __init__(self, ctx, name, a, b, extra=(), channel=310):
        self.name = name
        self.files = (a, b)          # what ports feed_a and feed_b replay
        self.merged = a if a == b else ti.pcap_merge(
            os.path.join(ctx.tmp, name + '-merged.pcap'), [a, b] + list(extra))
        if channel == 310:
            self.feeds = (Feed('incr_a', 0, 310, '224.0.31.1', 14310),
                          Feed('incr_b', 1, 310, '224.0.32.1', 15310))
        else:
            self.feeds = (Feed('cme340_a', 0, 340, '224.0.31.64', 14340),
                          Feed('cme340_b', 1, 340, '224.0.32.64', 15340))
        self.seqs = {f.name: [] for f in self.feeds}
        for _, frame, _ in ti.pcap_records(self.merged):
            feed = self.feed_of(frame)
            if feed is not None:
                self.seqs[feed.name].append(struct.unpack('<I', ti.udp_payload(frame)[:4])[0])

    def feed_of(self, frame):
        ip = frame[14:]
        ihl = (ip[0] & 15) * 4
        dst = '.'.join(str(x) for x in ip[16:20])
        port = struct.unpack('>H', ip[ihl + 2:ihl + 4])[0]
        for f in self.feeds:
            if f.group == dst and f.port == port:
                return f
        return None

    def cut(self, ctx, name, keep):
        """A copy of the merged capture with only the first keep[feed] packets of each feed."""
        seen = dict.fromkeys(keep, 0)
        out = []
        for rec in ti.pcap_records(self.merged):
            feed = self.feed_of(rec[1])
            if feed is not None:
                seen[feed.name] += 1
                if seen[feed.name] > keep[feed.name]:
                    continue
            out.append(rec)
        path = os.path.join(ctx.tmp, name + '.pcap')
        ti.pcap_write(path, out)
        return path


def sources(ctx):
    out = [Source(ctx, 'synth', ctx.synth[0], ctx.synth[1])]
    if os.path.exists(ctx.capture):
        out.append(Source(ctx, 'cme340', ctx.capture, ctx.capture, channel=340))
    else:
        print('(%s missing: the real channel-340 capture is not checked)' % ctx.capture)
    return out


# -- running the appliance -------------------------------------------------------------

def fault_ini(feed, fault):
    """ports.ini substitution: fault.KEY = VALUE lines under [feed.NAME]."""
    keys = ''.join('fault.%s = %s\\n' % kv for kv in sorted(fault.items()))
    return r'^(\[feed\.%s\]\n)=>\g<1>%s' % (feed.name, keys)


class Run:
    def __init__(self, out, err, prof):
        self.out, self.err, self.prof = out, err, prof
        self.c = ti.counters(out)
        self.faults = {}
        for feed, key, value in re.findall(r'^fault\.(\w+)\.(\w+) (\d+)$', out, re.M):
            self.faults.setdefault(feed, {})[key] = int(value)
        self.books = re.search(r'^== books.*?(?=^== |\Z)', out, re.M | re.S)
        self.books = self.books.group(0) if self.books else ''
        frames = ti.payloads(os.path.join(prof, 'orders.pcap'))
        self.orders = [f for f in frames if f.startswith(ORDER_MAGIC)]
        self.cancels = [f for f in frames if f.startswith(CANCEL_MAGIC)]

    def n(self, key):
        return int(self.c[key])


def run(ctx, src, name, faults=None, cfg=(), ini=(), rx=None, exact=True):
    """The appliance on @src (merged on one queue when @exact, else each port
    its own file, two-stage) with @faults {feed: {key: value}}."""
    ini = list(ini) + [fault_ini(f, faults[f.name]) for f in src.feeds
                       if faults and f.name in faults]
    cfg = ORDERS_CFG + list(cfg)
    if exact:
        cfg, ini = EXACT_CFG + cfg, EXACT_INI + ini
        rx = rx or (src.merged, src.merged)
    else:
        cfg, ini = TWO_STAGE_CFG + list(cfg), TWO_STAGE_INI + ini
        rx = rx or src.files
    prof = ctx.profile('%s-%s' % (src.name, name), cfg, ini, rx=rx)
    start = time.monotonic()
    try:
        p = subprocess.run(ctx.tickwire_cmd(prof, ['--print-books', '1000']),
                           capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        ti.fail('%s %s: no exit within %d s (a hang)' % (src.name, name, RUN_TIMEOUT))
    if p.returncode != 0 or '== counters' not in p.stdout:
        print(p.stdout, p.stderr)
        ti.fail('%s %s: tickwire exited %d' % (src.name, name, p.returncode))
    r = Run(p.stdout, p.stderr, prof)
    drops = sum(int(v) for k, v in r.c.items() if k.endswith('handoff_drops'))
    if drops or r.c.get('rx_drops', '0') != '0':
        ti.fail('%s %s: %d hand-off drops, rx_drops %s: the test needs every packet '
                'through' % (src.name, name, drops, r.c.get('rx_drops')))
    print('%s %s: %.1f s' % (src.name, name, time.monotonic() - start))
    return r


def expect(ok, what):
    if not ok:
        ti.fail(what)


def same_as(what, got, ref, keys=BOOK_KEYS, orders=True):
    """Books (the final dump), @keys and the orders of @got equal @ref's."""
    for k in keys:
        expect(got.c.get(k) == ref.c.get(k), '%s: %s = %s, fault-free %s' %
               (what, k, got.c.get(k), ref.c.get(k)))
    if got.books != ref.books:
        a, b = got.books.splitlines(), ref.books.splitlines()
        diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        ti.fail('%s: final books differ from the fault-free run at line %d:\n  %s\n  %s' %
                (what, diff, a[diff] if diff < len(a) else '(end)',
                 b[diff] if diff < len(b) else '(end)'))
    if orders:
        expect(got.orders == ref.orders, '%s: %d orders differ from the fault-free run\'s %d' %
               (what, len(got.orders), len(ref.orders)))


def check_fault_counters(what, r, src, faults):
    """The injector's counters are what the hash says, and add up."""
    for f in src.feeds:
        if f.name not in faults:
            continue
        want = expected_counters(faults[f.name], f.side, f.channel, src.seqs[f.name])
        got = r.faults.get(f.name)
        expect(got is not None, '%s: no fault.%s.* counters in the report' % (what, f.name))
        for k, v in want.items():
            expect(got.get(k) == v, '%s: fault.%s.%s = %s, recomputed %d' %
                   (what, f.name, k, got.get(k), v))
        expect(got['packets'] + got['duplicated'] == got['passed'] + got['dropped'] +
               got['silenced'] + got['held'], '%s: fault.%s.* do not add up: %s' %
               (what, f.name, got))
        arb = 'arb.packets_' + 'ab'[f.side]
        expect(r.n(arb) == got['passed'], '%s: %s = %s, but fault.%s.passed = %d' %
               (what, arb, r.c[arb], f.name, got['passed']))


def double_drops(src, faults):
    """MsgSeqNums dropped on both feeds that the arbiter can see missing (a
    later one was delivered)."""
    a, b = src.feeds
    got = delivered(faults.get(a.name, {}), a.side, a.channel, src.seqs[a.name]) | \
        delivered(faults.get(b.name, {}), b.side, b.channel, src.seqs[b.name])
    every = set(src.seqs[a.name]) | set(src.seqs[b.name])
    return sorted(s for s in every - got if min(got) < s < max(got))


# -- a: faults on both feeds, every MsgSeqNum on one of them ---------------------------

def check_equal(ctx):
    for src in sources(ctx):
        a, b = src.feeds
        ref = run(ctx, src, 'fault-free', cfg=ti.arb_wait(200))
        # feed A loses nothing here when B's delays are timed (a timed delay
        # is the only decision whose effect depends on the clock: it must
        # never hold the only copy)
        timed = src.name == 'cme340'
        faults = None
        for seed in range(1, 200):
            faults = {
                a.name: {'seed': seed, 'drop_ppm': 0 if timed else 10000, 'dup_ppm': 20000,
                         'reorder_ppm': 30000, 'reorder_window': 4, 'delay_ppm': 10000,
                         'delay_packets': 16},
                b.name: {'seed': seed, 'drop_ppm': 20000, 'dup_ppm': 10000,
                         'reorder_ppm': 20000, 'reorder_window': 3, 'delay_ppm': 20000,
                         'delay_packets': 64 if timed else 8},
            }
            if timed:
                faults[b.name]['delay_us'] = 200
            if not double_drops(src, faults):
                break
        expect(not double_drops(src, faults), 'no seed below 200 drops nothing on both feeds')
        r = run(ctx, src, 'faults', faults, cfg=ti.arb_wait(200))
        what = '%s: faults on both feeds' % src.name
        check_fault_counters(what, r, src, faults)
        same_as(what, r, ref)
        expect(r.n('arb.lost_packets') == ref.n('arb.lost_packets'), '%s: %s lost' %
               (what, r.c['arb.lost_packets']))
        expect(r.n('arb.gaps') > 0, '%s: the arbiter saw no gap: were faults injected?' % what)
        fa, fb = r.faults[a.name], r.faults[b.name]
        print('ok: %s (seed %d): A dropped %d dup %d reordered %d delayed %d, B dropped %d '
              'dup %d reordered %d delayed %d%s; %d gaps, 0 lost: books (hash %s), %d '
              'counters and %d orders equal the fault-free run' %
              (src.name, faults[a.name]['seed'], fa['dropped'], fa['duplicated'],
               fa['reordered'], fa['delayed'], fb['dropped'], fb['duplicated'],
               fb['reordered'], fb['delayed'], ' (B delays timed, 200 us)' if timed else '',
               r.n('arb.gaps'), r.c['book.hash'], len(BOOK_KEYS), len(r.orders)))


# -- b: drops on both feeds: every loss declared and counted exactly ---------------------



def check_lost(ctx):
    for src in sources(ctx):
        a, b = src.feeds
        faults = {a.name: {'seed': 3, 'drop_ppm': 50000},
                  b.name: {'seed': 3, 'drop_ppm': 50000}}
        lost = double_drops(src, faults)
        expect(len(lost) >= 3, '%s: only %d MsgSeqNums dropped on both' % (src.name, len(lost)))
        ref = run(ctx, src, 'fault-free', cfg=ti.arb_wait(32))
        r = run(ctx, src, 'drops', faults, cfg=ti.arb_wait(32))
        what = '%s: drops on both feeds' % src.name
        check_fault_counters(what, r, src, faults)
        want = ref.n('arb.lost_packets') + len(lost)
        expect(r.n('arb.lost_packets') == want, '%s: arb.lost_packets = %s, recomputed %d '
               '(%s...)' % (what, r.c['arb.lost_packets'], want, lost[:8]))
        expect(r.n('book.declared_losses') > 0, '%s: the books saw no declared loss' % what)
        # No order on a stale book. recovery.on_loss "stale_all": the first
        # declared loss makes every book stale for good (no snapshot, no
        # reset), and nothing past a gap is delivered before the gap is
        # declared lost. Drops from the middle of the capture on: the
        # orders are the fault-free run's before the first loss, none after.
        # Order-out refuses an order whose book went stale while it was
        # queued (TW_ORDER_STALE_BOOK): how many of them go out depends on
        # how far order-out lags, so the orders written are a prefix.
        mid = sorted(src.seqs[a.name])[len(src.seqs[a.name]) // 2]
        for f in faults.values():
            f['first_seq'] = mid
        n_both, lost = len(lost), double_drops(src, faults)
        sa = run(ctx, src, 'stale-all', faults, cfg=ti.arb_wait(32) + [
            r'^(\s*)on_loss = "\w+";=>\1on_loss = "stale_all";'])
        expect(sa.n('arb.lost_packets') == ref.n('arb.lost_packets') + len(lost),
               '%s, stale_all: %s lost, recomputed %d' % (what, sa.c['arb.lost_packets'],
                                                          len(lost)))
        expect(sa.n('book.stale_books') == sa.n('book.instruments'),
               '%s, stale_all: %s of %s books stale' %
               (what, sa.c['book.stale_books'], sa.c['book.instruments']))
        before = [o for o in ref.orders if order_seq(o) < lost[0]]
        late = [o for o in sa.orders if order_seq(o) > lost[0]]
        expect(not late, '%s, stale_all: %d orders triggered after MsgSeqNum %d, when every '
               'book was stale (first: %s)' % (what, len(late), lost[0], late[:1]))
        expect(sa.orders == before[:len(sa.orders)],
               '%s, stale_all: %d orders, not the first of the fault-free run\'s %d before '
               'MsgSeqNum %d' % (what, len(sa.orders), len(before), lost[0]))
        print('ok: %s: %d + %d dropped, %d on both = arb.lost_packets %s (recomputed); '
              'drops from MsgSeqNum %d with on_loss stale_all: %s books stale, %d orders (of '
              'the fault-free run\'s %d) before MsgSeqNum %d, none after; %d cancels' %
              (src.name, r.faults[a.name]['dropped'], r.faults[b.name]['dropped'],
               n_both, r.c['arb.lost_packets'], mid, sa.c['book.stale_books'], len(sa.orders),
               len(before), lost[0], len(sa.cancels)))


def order_seq(payload_hex):
    """The MsgSeqNum that triggered an order (TW_ORDER_WIRE: offset 20)."""
    return struct.unpack('<I', bytes.fromhex(payload_hex[ORDER_SEQ]))[0]


# -- c: feed A dies mid-run ---------------------------------------------------------------

def died_logged(r, feed, after):
    pat = r'^tickwire: feed %s \(channel %d, side %s\) died after %d packets' % (
        feed.name, feed.channel, 'AB'[feed.side], after)
    return re.search(pat, r.err, re.M) is not None


def check_feed_dies(ctx):
    for src in sources(ctx):
        a, b = src.feeds
        ref = run(ctx, src, 'fault-free', cfg=ti.arb_wait(32))
        n_a = len(src.seqs[a.name])
        faults = {a.name: {'die_after': n_a // 2}}
        for exact in (False, True):
            topology = 'one-thread' if exact else 'two-stage'
            r = run(ctx, src, 'a-dies-' + topology, faults, cfg=ti.arb_wait(32), exact=exact)
            what = '%s %s: feed A dies after %d of %d packets' % (src.name, topology,
                                                                   n_a // 2, n_a)
            check_fault_counters(what, r, src, faults)
            expect(died_logged(r, a, n_a // 2), '%s: no log line says so' % what)
            same_as(what, r, ref)
            expect(r.n('arb.lost_packets') == 0, '%s: %s lost' % (what, r.c['arb.lost_packets']))
            print('ok: %s: logged, fault.%s.silenced %d, books (hash %s), counters and %d '
                  'orders equal the fault-free run' % (what, a.name, r.faults[a.name]['silenced'],
                                                       r.c['book.hash'], len(r.orders)))


# -- d: both feeds die mid-run ----------------------------------------------------------

def check_both_die(ctx):
    for src in sources(ctx):
        a, b = src.feeds
        keep = {a.name: len(src.seqs[a.name]) * 2 // 5, b.name: len(src.seqs[b.name]) * 3 // 5}
        faults = {f.name: {'die_after': keep[f.name]} for f in src.feeds}
        # the reference: a fault-free run of the capture cut where each feed died
        cut = src.cut(ctx, src.name + '-cut', keep)
        # both feeds silent 1 s: every book stale, every order cancelled (the
        # run goes on stop_idle_ms = 2.5 s after the captures end; 1 s, not
        # less, so that a capture lcore descheduled on this shared machine
        # does not look like silence mid-run)
        silence = [r'silence_ms = \d+;=>silence_ms = 1000;',
                   r'stop_idle_ms = \d+;=>stop_idle_ms = 2500;']
        ref = run(ctx, src, 'cut', cfg=silence, rx=(cut, cut), exact=False)
        r = run(ctx, src, 'both-die', faults, cfg=silence, exact=False)
        what = '%s: both feeds die (A after %d, B after %d packets)' % (
            src.name, keep[a.name], keep[b.name])
        check_fault_counters(what, r, src, faults)
        for f in src.feeds:
            expect(died_logged(r, f, keep[f.name]), '%s: feed %s: no log line' % (what, f.name))
            expect(r.n('arb.packets_' + 'ab'[f.side]) == keep[f.name],
                   '%s: the arbiter got %s packets of %s' %
                   (what, r.c['arb.packets_' + 'ab'[f.side]], f.name))
        same_as(what, r, ref)
        # Nothing after the silence is declared lost: the arbiter sees no
        # gap behind the last packet.
        expect(r.n('arb.lost_packets') == 0, '%s: %s lost' % (what, r.c['arb.lost_packets']))
        # Both feeds silent past recovery.silence_ms: every book halted
        # (stale means stop), every open order cancelled, no order after.
        expect(r.n('stale.silences') == 1 and
               re.search(r'^channel\.%d\.silences 1$' % a.channel, r.out, re.M),
               '%s: stale.silences %s, channel %d silent once' %
               (what, r.c['stale.silences'], a.channel))
        expect(r.n('stale.halted') == r.n('book.instruments') > 0,
               '%s: %s of %s instruments halted after both feeds died' %
               (what, r.c['stale.halted'], r.c['book.instruments']))
        expect(len(r.orders) > 0 and len(r.cancels) == len(r.orders) ==
               r.n('order.cancels_on_stale'),
               '%s: %d orders open, %d cancel frames, order.cancels_on_stale %s' %
               (what, len(r.orders), len(r.cancels), r.c['order.cancels_on_stale']))
        print('ok: %s: exit 0, both deaths logged, arbiter got %d + %d packets, books (hash '
              '%s) and %d orders equal a fault-free run of the cut capture; silent: %s '
              'instruments halted, %d orders cancelled' %
              (what, r.n('arb.packets_a'), r.n('arb.packets_b'), r.c['book.hash'],
               len(r.orders), r.c['stale.halted'], len(r.cancels)))


# -- e: recovery: snapshot, channel reset ----------------------------------------------

def check_recovery(ctx):
    # Snapshot recovery: a snapshot loop starts every 500 packets; drops on
    # both feeds between MsgSeqNums 300 and 1200 make books stale, the loops
    # recover them.
    f = ti.synth(ctx, 'rec', '--seed', '7', '--events', '3000')
    src = Source(ctx, 'snapshot', f['a'], f['b'], extra=[f['s']])
    cfg = ti.arb_wait(32) + [r'mode = "none";=>mode = "snapshot";']
    ini = [ti.SNAPSHOT_FEEDS]
    recovered(ctx, src, 300, 1200, cfg, ini, 'recoveries')
    # ChannelReset in packet 1500 (recovery.mode "none": a stale book waits
    # for it): drops on both feeds between 200 and 1400.
    f = ti.synth(ctx, 'reset', '--seed', '11', '--events', '3000', '--reset-at', '1500')
    src = Source(ctx, 'reset', f['a'], f['b'])
    recovered(ctx, src, 200, 1400, ti.arb_wait(32), [], None)


def recovered(ctx, src, first, last, cfg, ini, recoveries):
    ref = run(ctx, src, 'fault-free', cfg=cfg, ini=ini)
    faults = {f.name: {'seed': 9, 'drop_ppm': 100000, 'first_seq': first, 'last_seq': last}
              for f in src.feeds}
    lost = double_drops(src, faults)
    expect(lost and first <= lost[0] and lost[-1] <= last,
           '%s: drops on both feeds %s, want some in %d..%d' % (src.name, lost, first, last))
    r = run(ctx, src, 'drops', faults, cfg=cfg, ini=ini)
    what = '%s: %d MsgSeqNums lost on both feeds' % (src.name, len(lost))
    check_fault_counters(what, r, src, faults)
    expect(r.n('arb.lost_packets') == len(lost), '%s: arb.lost_packets %s' %
           (what, r.c['arb.lost_packets']))
    expect(r.n('book.rpt_seq_gaps') > 0, '%s: no book went stale (no RptSeq gap)' % what)
    if recoveries:
        expect(r.n('book.recoveries') > 0, '%s: no snapshot recovery' % what)
    expect(r.n('book.stale_books') == 0, '%s: %s books still stale at the end' %
           (what, r.c['book.stale_books']))
    # the books at the end, not the way there: no order or event count compares
    same_as(what, r, ref, keys=('book.hash', 'book.instruments', 'book.stale_books'),
            orders=False)
    print('ok: %s: %s RptSeq gaps, %s snapshot recoveries, 0 stale at the end; books (hash '
          '%s) equal the fault-free run\'s' % (what, r.c['book.rpt_seq_gaps'],
                                               r.c['book.recoveries'], r.c['book.hash']))


# -- bad fault.* values ----------------------------------------------------------------

BAD = [
    # (key = value, what the error line must say)
    ('fault.drop_ppm = 0.01', r'\[feed\.incr_a\] fault\.drop_ppm = 0\.01: not an integer per '
     r'million; hint: .*fault\.drop_ppm = 10000'),
    ('fault.dup_ppm = 2000000', r'\[feed\.incr_a\] fault\.dup_ppm = 2000000: out of range '
     r'0\.\.1000000'),
    ('fault.reorder_window = 0', r'\[feed\.incr_a\] fault\.reorder_window = 0: out of range '
     r'1\.\.16'),
    ('fault.delay_packets = 65', r'fault\.delay_packets = 65: out of range 1\.\.64'),
    ('fault.first_seq = 10\nfault.last_seq = 5', r'fault\.last_seq = 5: below '
     r'fault\.first_seq = 10'),
    ('fault.drop = 1000', r'\[feed\.incr_a\] fault\.drop: unknown key; hint: did you mean '),
]


def check_config(ctx):
    for i, (line, pat) in enumerate(BAD):
        prof = ctx.profile('bad%d' % i, ini=[r'^(\[feed\.incr_a\]\n)=>\g<1>%s\n' %
                                             line.replace('\n', r'\n')], synthetic=True)
        ports = os.path.join(prof, 'ports.ini')
        want_line = open(ports).read().splitlines().index(line.split('\n')[-1]) + 1
        p = subprocess.run(ctx.tickwire_cmd(prof), capture_output=True, text=True, timeout=60)
        m = re.search(r'^%s:(\d+): error: (.*)$' % re.escape(ports), p.stderr, re.M)
        if p.returncode != 1 or m is None or int(m.group(1)) != want_line or \
                not re.search(pat, m.group(2)) or 'EAL' in p.stderr:
            print(p.stderr)
            ti.fail('%s: not refused with %s:%d and /%s/ (exit %d)' %
                    (line, ports, want_line, pat, p.returncode))
        print('ok: %s -> %s' % (line.replace('\n', '; '), m.group(0)))
    # a good one: tickwire-check shows what the feed will do
    prof = ctx.profile('good', ini=[r'^(\[feed\.incr_b\]\n)=>\g<1>fault.drop_ppm = 1000\n'
                                    r'fault.die_after = 500\n'], synthetic=True)
    check = os.path.join(ctx.build, 'app/check/tickwire-check')
    p = subprocess.run([check, '--ports', os.path.join(prof, 'ports.ini'), '--config',
                        os.path.join(prof, 'tickwire.cfg')], capture_output=True, text=True,
                       timeout=60)
    want = (r'ports\.ini:\d+: warning: \[feed\.incr_b\]: fault injection on: per million '
            r'1000 dropped, 0 duplicated, 0 reordered, 0 delayed; dies after 500 packets')
    if p.returncode != 0 or not re.search(want, p.stdout + p.stderr):
        print(p.stdout, p.stderr)
        ti.fail('tickwire-check: no warning naming the faults of [feed.incr_b]')
    print('ok: tickwire-check warns: %s' % re.search(want, p.stdout + p.stderr).group(0))


def main():
    a, ctx = ti.parse_args()
    start = time.monotonic()
    {
        'equal': lambda: check_equal(ctx),
        'lost': lambda: check_lost(ctx),
        'feed-dies': lambda: check_feed_dies(ctx),
        'both-die': lambda: check_both_die(ctx),
        'recovery': lambda: check_recovery(ctx),
        'config': lambda: check_config(ctx),
    }[a.test]()
    print('faults %s: %.1f s' % (a.test, time.monotonic() - start))


if __name__ == '__main__':
    main()
