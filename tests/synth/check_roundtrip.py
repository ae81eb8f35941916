#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-decode reads back exactly what tickwire-synth wrote.

For several seeds and both schema versions (9, 13), with and without
impairments, every message tickwire-decode prints from the A, B and snapshot
captures must equal the generator's manifest line for it: envelope (MsgSeqNum,
SendingTime, position, MsgSize, blockLength, template, schema, version, name)
and every field, in wire order, with the same JSON values.  Without
impairments every manifest message must appear exactly once per feed.
"""
import argparse
import collections
import os
import tempfile

import synth_common as sc

ENVELOPE = ('seq', 'sending_time', 'msg', 'size', 'block_length', 'template_id',
            'schema_id', 'version', 'name')


def ordered_equal(a, b):
    """Equal values with objects' keys in the same order (wire order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(ordered_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(ordered_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def count_fields(v):
    if isinstance(v, dict):
        return sum(count_fields(x) for x in v.values()) if v and 'value' not in v \
            and 'mantissa' not in v else 1
    if isinstance(v, list):
        return sum(count_fields(x) for x in v)
    return 1


def first_difference(a, b, path=''):
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return '%s: keys %s vs %s' % (path, list(a), list(b))
        for k in a:
            d = first_difference(a[k], b[k], path + '.' + k)
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return '%s: %d vs %d entries' % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, '%s[%d]' % (path, i))
            if d:
                return d
        return None
    return None if type(a) is type(b) and a == b else '%s: %r vs %r' % (path, a, b)


def check_run(decoder, paths, impaired, label, totals):
    manifest = sc.load_jsonl(paths['manifest'])
    incremental = {}
    snapshots = []
    for m in manifest:
        if m['channel'] == 'incremental':
            incremental[(m['seq'], m['msg'])] = m
        else:
            snapshots.append(m)
    errors = []
    seen = {'a': collections.Counter(), 'b': collections.Counter()}
    for feed, group, port in (('a', sc.INCREMENTAL_A, 14310), ('b', sc.INCREMENTAL_B, 15310),
                              ('s', sc.SNAPSHOT, 14310)):
        decoded = sc.decode(decoder, paths[feed])
        last_time = 0
        snap_index = 0
        for d in decoded:
            if 'fields' not in d:
                errors.append('%s %s frame %s: not a message: %s' % (label, feed, d.get('frame'),
                                                                   d))
                continue
            if d['time_ns'] < last_time:
                errors.append('%s %s frame %d: capture time goes back' % (label, feed,
                                                                        d['frame']))
            last_time = d['time_ns']
            if (d['dst_ip'], d['dst_port'], d['transport']) != (group, port, 'udp'):
                errors.append('%s %s frame %d: sent to %s:%d' % (label, feed, d['frame'],
                                                               d['dst_ip'], d['dst_port']))
            if 'decoded_with_version' in d:
                errors.append('%s %s frame %d: decoded with version %d' % (
                    label, feed, d['frame'], d['decoded_with_version']))
            if feed == 's':
                if snap_index >= len(snapshots):
                    errors.append('%s: more snapshot messages than the manifest' % label)
                    continue
                m = snapshots[snap_index]
                snap_index += 1
            else:
                m = incremental.get((d['seq'], d['msg']))
                if m is None:
                    errors.append('%s %s: seq %d msg %d not in the manifest' % (
                        label, feed, d['seq'], d['msg']))
                    continue
                seen[feed][(d['seq'], d['msg'])] += 1
            for k in ENVELOPE:
                if d[k] != m[k]:
                    errors.append('%s %s seq %d msg %d: %s %r, manifest %r' % (
                        label, feed, d['seq'], d['msg'], k, d[k], m[k]))
            if not ordered_equal(d['fields'], m['fields']):
                errors.append('%s %s seq %d msg %d (%s): %s' % (
                    label, feed, d['seq'], d['msg'], m['name'],
                    first_difference(d['fields'], m['fields'])))
            totals['messages'] += 1
            totals['fields'] += count_fields(d['fields'])
            totals['templates'][d['template_id']] += 1
        if feed == 's' and snap_index != len(snapshots):
            errors.append('%s: %d snapshot messages decoded, manifest has %d' % (
                label, snap_index, len(snapshots)))
    if not impaired:
        for feed in ('a', 'b'):
            missing = [k for k in incremental if seen[feed][k] != 1]
            if missing:
                errors.append('%s %s: %d manifest messages not seen exactly once (first %s)'
                              % (label, feed, len(missing), missing[0]))
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--synth', required=True)
    ap.add_argument('--decoder', required=True)
    args = ap.parse_args()
    totals = {'messages': 0, 'fields': 0, 'templates': collections.Counter()}
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for version in (9, 13):
            for seed, impaired in ((1, False), (2, False), (3, True)):
                label = 'v%d seed %d' % (version, seed)
                opts = ['--seed', seed, '--schema-version', version, '--events', 1500,
                        '--instruments', 5 + seed, '--reset-at', 400 + 100 * seed,
                        '--heartbeat-ms', 3, '--snapshot-every', 150]
                if impaired:
                    opts += ['--drop-a', '0.1', '--dup-a', '0.05', '--reorder-a', '0.05',
                             '--drop-b', '0.05', '--dup-b', '0.1', '--reorder-b', '0.1',
                             '--mtu', '700', '--gap', '300:4']
                paths = sc.run_synth(args.synth, os.path.join(tmp, label.replace(' ', '-')),
                                     'run', opts)
                run_errors = check_run(args.decoder, paths, impaired, label, totals)
                print('%s %s%s' % ('ok  ' if not run_errors else 'FAIL', label,
                                   ' (impaired)' if impaired else ''))
                errors += run_errors
    missing = {4, 12, 30, 46, 48, 52, 54} - set(totals['templates'])
    if missing:
        errors.append('templates never generated: %s' % sorted(missing))
    print('%d messages, %d fields compared; templates %s' % (
        totals['messages'], totals['fields'], dict(sorted(totals['templates'].items()))))
    for e in errors[:20]:
        print('  ' + e)
    if errors:
        sc.fail('%d differences between tickwire-decode and the manifest' % len(errors))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
