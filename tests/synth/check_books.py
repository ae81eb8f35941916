#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The books of tickwire-synth are realistic and its truth is right.

A reference book written here from the MDP 3.0 rules (synth_common.Book)
replays feed A as tickwire-decode reads it:
  - every entry follows the rules (levels exist, depth respected, Change keeps
    the price), RptSeq is +1 per instrument (back to 1 after ChannelReset);
  - after every packet the touched books pass the invariants: prices on the
    instrument's tick, bids descending, offers ascending, outright depth <=
    the definition's GBX MarketDepth, implied depth <= GBI, not crossed;
  - after every packet the touched books equal the generator's truth
    (--truth-every), the ChannelReset packet empties every book, and the
    final books equal the final truth;
  - every SnapshotFullRefresh52 equals the book right after its
    LastMsgSeqNumProcessed.
Then a reference recovery: with a run of packets lost on both feeds
(--gap; feed A also loses 20% at random, B has duplicates and reordering but
keeps the rest), an instrument whose RptSeq jumps goes stale until its snapshot;
entries after the snapshot apply; the final books must equal the truth and
at least one instrument must have gone stale and recovered.
"""
import argparse
import collections
import tempfile

import synth_common as sc


class Replay:
    def __init__(self, defs):
        self.defs = defs
        self.books = {}
        self.errors = []
        self.touched = set()
        self.stale = set()
        self.went_stale = set()
        self.recovered = set()

    def book(self, sid):
        if sid not in self.books:
            depth, implied, tick = self.defs.get(sid, (10, 2, None))
            self.books[sid] = sc.Book(sid, depth, implied, tick)
        return self.books[sid]

    def rpt(self, b, rpt, where, recovering):
        """True if the entry applies."""
        if b.security_id in self.stale:
            return False
        if rpt != b.rpt_seq + 1:
            if recovering and rpt > b.rpt_seq + 1:
                self.stale.add(b.security_id)
                self.went_stale.add(b.security_id)
                return False
            if rpt <= b.rpt_seq and recovering:
                return False
            self.errors.append('%s: SecurityID %d RptSeq %d after %d' % (
                where, b.security_id, rpt, b.rpt_seq))
        b.rpt_seq = rpt
        return True

    def message(self, m, recovering=False):
        where = 'seq %d msg %d' % (m['seq'], m['msg'])
        f = m['fields']
        t = m['template_id']
        if t == 46:
            for e in f['NoMDEntries']:
                b = self.book(e['SecurityID'])
                if not self.rpt(b, e['RptSeq'], where, recovering):
                    continue
                side = sc.SIDE_OF_TYPE[sc.enum_value(e['MDEntryType'])]
                implied = side.startswith('implied')
                value = [sc.mantissa(e['MDEntryPx']), e['MDEntrySize']]
                if not implied:
                    value.append(e['NumberOfOrders'])
                err = b.apply(side, sc.enum_value(e['MDUpdateAction']), e['MDPriceLevel'], value)
                if err:
                    self.errors.append('%s: SecurityID %d %s: %s' % (where, b.security_id,
                                                                     side, err))
                self.touched.add(b.security_id)
        elif t == 48:
            for e in f['NoMDEntries']:
                b = self.book(e['SecurityID'])
                if self.rpt(b, e['RptSeq'], where, recovering):
                    b.last_trade = [sc.mantissa(e['MDEntryPx']), e['MDEntrySize']]
                    self.touched.add(b.security_id)
        elif t == 30:
            b = self.book(f['SecurityID'])
            b.status = sc.enum_value(f['SecurityTradingStatus'])
            self.touched.add(b.security_id)
        elif t == 4:
            for b in self.books.values():
                b.clear()
            self.stale.clear()
            self.touched.clear()
            return 'reset'
        return None

    def snapshot(self, m):
        """Book of a snapshot message, as sc.Book.as_truth()."""
        f = m['fields']
        t = {'security_id': f['SecurityID'], 'rpt_seq': f['RptSeq'],
             'status': sc.enum_value(f['MDSecurityTradingStatus']), 'last_trade': None}
        for side in sc.SIDES:
            t[side] = []
        for e in f['NoMDEntries']:
            kind = sc.enum_value(e['MDEntryType'])
            if kind == '2':
                t['last_trade'] = [sc.mantissa(e['MDEntryPx']), e['MDEntrySize']]
                continue
            side = sc.SIDE_OF_TYPE[kind]
            value = [sc.mantissa(e['MDEntryPx']), e['MDEntrySize']]
            if not side.startswith('implied'):
                value.append(e['NumberOfOrders'])
            if e['MDPriceLevel'] != len(t[side]) + 1:
                self.errors.append('snapshot of %d: %s level %d out of order'
                                   % (t['security_id'], side, e['MDPriceLevel']))
            t[side].append(value)
        return t

    def recover(self, m):
        t = self.snapshot(m)
        sid = t['security_id']
        b = self.book(sid)
        if sid in self.stale or t['rpt_seq'] > b.rpt_seq:
            b.rpt_seq = t['rpt_seq']
            b.status = t['status']
            b.last_trade = t['last_trade']
            for side in sc.SIDES:
                b.sides[side] = [list(x) for x in t[side]]
            if sid in self.stale:
                self.stale.discard(sid)
                self.recovered.add(sid)


def by_seq(decoded):
    packets = collections.OrderedDict()
    for d in decoded:
        packets.setdefault(d['seq'], []).append(d)
    return packets


def check_replay(args, tmp):
    paths = sc.run_synth(args.synth, tmp, 'books',
                         ['--seed', 11, '--events', 6000, '--instruments', 9,
                          '--reset-at', 2500, '--snapshot-every', 300, '--heartbeat-ms', 5],
                         truth=True, truth_every=True)
    decoded = sc.decode(args.decoder, paths['a'])
    snaps = collections.defaultdict(list)
    for s in sc.decode(args.decoder, paths['s']):
        snaps[s['fields']['LastMsgSeqNumProcessed']].append(s)
    truth = collections.defaultdict(dict)
    resets = set()
    final = {}
    for line in sc.load_jsonl(paths['truth']):
        if line.get('channel_reset'):
            resets.add(line['seq'])
        elif line.get('final'):
            final[line['security_id']] = sc.truth_book(line)
        else:
            truth[line['seq']][line['security_id']] = sc.truth_book(line)
    r = Replay(sc.definitions(decoded))
    compared = invariants = snapshots = 0
    for seq, msgs in by_seq(decoded).items():
        r.touched = set()
        reset = False
        for m in msgs:
            reset = r.message(m) == 'reset' or reset
        if reset:
            if seq not in resets:
                r.errors.append('seq %d: ChannelReset not in the truth' % seq)
            if any(any(b.sides.values()) for b in r.books.values()):
                r.errors.append('seq %d: a book not empty after ChannelReset' % seq)
        if set(truth[seq]) != r.touched:
            r.errors.append('seq %d: truth lists %s, replay touched %s' % (
                seq, sorted(truth[seq]), sorted(r.touched)))
        for sid in r.touched:
            err = r.books[sid].check_invariants()
            invariants += 1
            if err:
                r.errors.append('seq %d SecurityID %d: %s' % (seq, sid, err))
            if truth[seq].get(sid) != r.books[sid].as_truth():
                r.errors.append('seq %d SecurityID %d: replay %s, truth %s' % (
                    seq, sid, r.books[sid].as_truth(), truth[seq].get(sid)))
            compared += 1
        for s in snaps.pop(seq, []):
            t = r.snapshot(s)
            if t != r.book(t['security_id']).as_truth():
                r.errors.append('snapshot after seq %d of %d: %s, book %s' % (
                    seq, t['security_id'], t, r.book(t['security_id']).as_truth()))
            snapshots += 1
    if snaps:
        r.errors.append('snapshots after unknown MsgSeqNums: %s' % sorted(snaps))
    for sid, b in r.books.items():
        if final.get(sid) != b.as_truth():
            r.errors.append('final book of %d: replay %s, truth %s' % (sid, b.as_truth(),
                                                                      final.get(sid)))
    if set(final) != set(r.books):
        r.errors.append('final truth has %s, replay %s' % (sorted(final), sorted(r.books)))
    if not resets:
        r.errors.append('no ChannelReset generated')
    print('%s replay: %d packets, %d books compared with the truth, %d invariant checks, '
          '%d snapshots, %d final books' % ('ok  ' if not r.errors else 'FAIL', len(truth),
                                            compared, invariants, snapshots, len(final)))
    return r.errors


def check_recovery(args, tmp):
    gap = (1400, 40)
    paths = sc.run_synth(args.synth, tmp, 'recovery',
                         ['--seed', 12, '--events', 5000, '--instruments', 6,
                          '--snapshot-every', 200, '--gap', '%d:%d' % gap,
                          '--drop-a', '0.2', '--dup-b', '0.1', '--reorder-b', '0.1'],
                         truth=True)
    final = {line['security_id']: sc.truth_book(line) for line in sc.load_jsonl(paths['truth'])}
    packets = {}
    for feed in ('a', 'b'):
        for d in sc.decode(args.decoder, paths[feed]):
            packets.setdefault(d['seq'], {}).setdefault(d['msg'], d)
    snaps = collections.defaultdict(list)
    for s in sc.decode(args.decoder, paths['s']):
        snaps[s['fields']['LastMsgSeqNumProcessed']].append(s)
    last = max(max(packets), max(snaps))
    r = Replay({})
    r.defs = sc.definitions([m for p in packets.values() for m in p.values()])
    lost = 0
    for seq in range(1, last + 1):
        if seq in packets:
            for i in sorted(packets[seq]):
                r.message(packets[seq][i], recovering=True)
        else:
            lost += 1
        for s in snaps.pop(seq, []):
            r.recover(s)
    errors = list(r.errors)
    if lost < gap[1]:
        errors.append('only %d packets lost on both feeds, the gap has %d' % (lost, gap[1]))
    if not r.went_stale or r.recovered != r.went_stale or r.stale:
        errors.append('stale %s, recovered %s, still stale %s' % (
            sorted(r.went_stale), sorted(r.recovered), sorted(r.stale)))
    for sid, b in r.books.items():
        if final.get(sid) != b.as_truth():
            errors.append('recovered book of %d: %s, truth %s' % (sid, b.as_truth(),
                                                                 final.get(sid)))
    print('%s recovery: %d packets lost on both feeds, %d books stale, %d recovered from '
          'snapshots, final books equal the truth' % ('ok  ' if not errors else 'FAIL', lost,
                                                      len(r.went_stale), len(r.recovered)))
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--synth', required=True)
    ap.add_argument('--decoder', required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        errors = check_replay(args, tmp) + check_recovery(args, tmp)
    for e in errors[:20]:
        print('  ' + e)
    if errors:
        sc.fail('%d book errors' % len(errors))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
