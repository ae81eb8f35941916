#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Decoding the real iLink 3 captures with lib/ilink3 (il3_dump) agrees with the
independent OMI Wireshark Lua dissector (tshark JSON under
reference/omi-wireshark-lua/iLink3.Sbe.8.5) on every field.

Matching is by position: every reference leaf carries (frame offset, length);
our decoder reports the same for every leaf it decodes.  A reference leaf is
either compared (same position, mapped name, equal value under the rule for
its type) or listed in METADATA below (containers and dissector-made values);
anything else fails.  Every message the reference shows must be decoded, and
the QuoteCancelAck capture must end with the reassembler holding the bytes of
the cut message.  Exit 77 (skip) only when the data directory is missing."""
import argparse
import json
import os
import subprocess
import sys
from decimal import Decimal

P = 'cme.globex.ilink3.sbe.v8.5.'
CAPTURES = {
    'Sequence': {'messages': 1, 'incomplete': 0},
    'QuoteCancel': {'messages': 1, 'incomplete': 0},
    'QuoteCancelAck': {'messages': 3, 'incomplete': 353},
    'ExecutionReportStatus': {'messages': 1, 'incomplete': 0},
}

# Reference leaves that are not schema fields: tree containers (value ''),
# and the dissector's own 1-based group entry index.  Reviewed by hand.
METADATA = {'simpleopenframe', 'simpleopenframingheader', 'messageheader',
            'sequence', 'quotecancel', 'quotecancelack', 'executionreportstatus',
            'quotecancelentriesgroups', 'quotecancelentriesgroup',
            'quotecancelsetsgroups', 'quotecancelsetsgroup',
            'quotecancelackentriesgroups', 'quotecancelackentriesgroup',
            'quotecancelacksetsgroups', 'quotecancelacksetsgroup',
            'groupsize', 'execinst',
            'quotecancelentriesgroupindex', 'quotecancelackentriesgroupindex',
            'quotecancelsetsgroupindex', 'quotecancelacksetsgroupindex'}

# Reference name -> our schema field name (lower case, no punctuation), where
# the dissector renames a field (it suffixes types with "optional").
ALIASES = {
    'priceoptional': 'price',
    'ordtypeoptional': 'ordtype',
    'ordstatusreqidoptional': 'ordstatusreqid',
    'massstatusreqidoptional': 'massstatusreqid',
    'crossidoptional': 'crossid',
    'securityidoptional': 'securityid',
    'totnoquoteentriesoptional': 'totnoquoteentries',
    'quotecxlstatus': 'quotestatus',
}

# Set choices of ExecInst (bit mask in the reference's raw[3]).
SET_BITS = {'aon': 1, 'ob': 2, 'nh': 4, 'reserved1': 8, 'reserved2': 16, 'reserved3': 32,
            'reserved4': 64, 'reserved5': 128}


def pairs(p):
    return p


def ref_messages(path):
    with open(path) as f:
        frames = json.load(f, object_pairs_hook=pairs)
    out = []
    for frame in frames:
        layers = dict(dict(frame)['_source'])['layers']
        for k, v in layers:
            if k == 'omi.cme.globex.ilink3.sbe.v8.5':
                out.append(ordered_leaves(v))
    return out


def ordered_leaves(obj):
    """Leaves in document order, pairing each value with the _raw just before it."""
    out = []

    def walk(o):
        pending = {}
        for k, v in o:
            if k.endswith('_raw'):
                pending[k[:-4]] = v
                continue
            if k.endswith('_tree'):
                walk(v)
                continue
            name = k[len(P):] if k.startswith(P) else k
            r = pending.pop(k, None)
            if r is None:
                out.append((name, None, None, None, v))
            else:
                out.append((name, r[1], r[2], r[3], v))
    walk(obj)
    return out


def norm(name):
    return ''.join(c for c in name.lower() if c.isalnum())


def our_leaves(line):
    """position -> (field name, leaf dict) plus message-level header values."""
    pos = {}
    m = line
    hdr = m['offset']
    for key, off, size in (('messagelength', 0, 2), ('encodingtype', 2, 2),
                           ('blocklength', 4, 2), ('templateid', 6, 2),
                           ('schemaid', 8, 2), ('version', 10, 2)):
        val = {'messagelength': m['message_length'], 'encodingtype': m['encoding_type'],
               'blocklength': m['block_length'], 'templateid': m['template_id'],
               'schemaid': m['schema_id'], 'version': m['version']}[key]
        pos[(hdr + off, size, key)] = {'value': val, 'type': 'header'}
    for f in m['fields']:
        if 'offset' in f:
            pos[(f['offset'], f['size'], norm(f['name'].replace('.mantissa', '')))] = f
    for g in m['groups']:
        pos[(g['offset'], 2, 'blocklength')] = {'value': g['block_length'], 'type': 'dim'}
        pos[(g['offset'] + 2, 1, 'numingroup')] = {'value': g['num_in_group'], 'type': 'dim'}
        for entry in g['entries']:
            for f in entry:
                if 'offset' in f:
                    pos[(f['offset'], f['size'],
                         norm(f['name'].replace('.mantissa', '')))] = f
    return pos


def same(ref, ours):
    v = ours['value']
    if isinstance(v, str):
        return ref == v or (ref == '[N/A]' and v == '')
    if 'exponent' in ours:
        if ours.get('null'):
            return ref in ('-nan', 'nan', 'NaN')
        try:
            return Decimal(ref) == Decimal(v).scaleb(ours['exponent'])
        except ArithmeticError:
            return False
    if 'char' in ours:
        return ref == ours['char'] or ref == str(v)
    return ref == str(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--data', required=True)
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print('SKIP: data directory %s does not exist' % args.data)
        return 77
    failed = compared = classified = 0
    for cap, want in CAPTURES.items():
        pcap = os.path.join(args.data, 'pcap', 'omi-data-packets', 'Cme', 'iLink3.Sbe.8.5',
                            cap + '.pcap')
        ref = os.path.join(args.data, 'reference', 'omi-wireshark-lua', 'iLink3.Sbe.8.5',
                           cap + '.json')
        out = subprocess.run([args.decoder, pcap], check=True, capture_output=True,
                             text=True).stdout
        lines = [json.loads(x) for x in out.splitlines()]
        msgs = [x for x in lines if 'template_id' in x]
        tail = [x for x in lines if 'incomplete' in x]
        errs = [x for x in lines if 'error' in x]
        if errs or len(msgs) != want['messages'] or tail != [{'incomplete': want['incomplete']}]:
            print('FAIL %s: %d messages, tail %s, errors %s' % (cap, len(msgs), tail, errs))
            failed += 1
            continue
        before = failed
        ours = {}
        for m in msgs:
            ours.update(our_leaves(m))
        by_pos = {}
        for (off, size, name), leaf in ours.items():
            by_pos.setdefault((off, size), []).append((name, leaf))
        execinst = [leaf for (o, s, n), leaf in ours.items() if n == 'execinst']
        for leaves in ref_messages(ref):
            for name, off, length, mask, value in leaves:
                if name in SET_BITS:
                    hits = [leaf for leaf in execinst if leaf['offset'] == off]
                    if len(hits) != 1 or str(int(bool(hits[0]['value'] & mask))) != value:
                        print('FAIL %s: set bit %s at %s' % (cap, name, off))
                        failed += 1
                    else:
                        compared += 1
                    continue
                if name in METADATA:
                    classified += 1
                    continue
                want_name = ALIASES.get(name, name)
                cands = [leaf for n, leaf in by_pos.get((off, length), []) if n == want_name]
                if len(cands) != 1:
                    print('FAIL %s: reference %s at (%s,%s) = %r has no decoded field (have %s)'
                          % (cap, name, off, length, value,
                             [n for n, _ in by_pos.get((off, length), [])]))
                    failed += 1
                    continue
                if not same(value, cands[0]):
                    print('FAIL %s: %s at %s: reference %r, ours %r' %
                          (cap, name, off, value, cands[0]))
                    failed += 1
                    continue
                compared += 1
        print('%s %s: %d messages' % ('ok  ' if failed == before else 'FAIL', cap, len(msgs)))
    print('%d leaves compared, %d classified as metadata, %d failures' %
          (compared, classified, failed))
    return 1 if failed or compared == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
