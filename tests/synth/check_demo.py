#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The demo capture built by meson (synth_demo_pcaps) is usable: feeds A and B
decode without a single malformed or foreign frame, carry about 20,000
messages each with the same MsgSeqNums and payloads, the snapshot channel
decodes, and the truth has a final book per instrument."""
import argparse
import collections
import json
import subprocess

import synth_common as sc


def stats(decoder, path):
    r = subprocess.run([decoder, '--quiet', '--stats', path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sc.fail('tickwire-decode %s: exit %d %s' % (path, r.returncode, r.stderr))
    return json.loads(r.stderr.splitlines()[-1])['stats']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--snapshot', required=True)
    ap.add_argument('--truth', required=True)
    ap.add_argument('pcaps', nargs=2)
    args = ap.parse_args()
    errors = []
    payloads = []
    for path in args.pcaps:
        s = stats(args.decoder, path)
        print('%s: %d frames, %d messages, templates %s' % (path, s['frames'], s['messages'],
                                                           s['templates']))
        if s['not_mdp3'] or s['packets_dropped'] or s['messages_skipped']:
            errors.append('%s: not_mdp3 %d, packets_dropped %d, skipped %d' % (
                path, s['not_mdp3'], s['packets_dropped'], s['messages_skipped']))
        if not 15000 <= s['messages'] <= 25000:
            errors.append('%s: %d messages, expected about 20,000' % (path, s['messages']))
        payloads.append({sc.packet_seq(p): p for _, _, _, p in sc.read_pcap(path)})
    if payloads[0] != payloads[1]:
        errors.append('feeds A and B differ')
    s = stats(args.decoder, args.snapshot)
    if s['messages'] == 0 or s['not_mdp3'] or s['packets_dropped']:
        errors.append('snapshot channel: %s' % s)
    final = [t for t in sc.load_jsonl(args.truth) if t.get('final')]
    kinds = collections.Counter(len(t['bids']) > 0 for t in final)
    if len(final) != 8 or kinds[True] != 8:
        errors.append('truth: %d final books, %d with bids' % (len(final), kinds[True]))
    for e in errors:
        print('  ' + e)
    if errors:
        sc.fail('demo capture')
    print('ok   demo capture')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
