#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Decode the two 10,000-frame A/B captures and check the template histograms
recorded in shared/data/cme/SOURCES.md, with zero malformed or skipped input.
Exit 77 (skip) only when the data directory does not exist."""
import argparse
import json
import os
import subprocess
import sys

EXPECTED = {
    'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.pcap':
        {12: 18, 32: 19138, 35: 614, 37: 388, 42: 388},
    'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.pcap':
        {12: 12, 30: 198, 32: 9796, 35: 358, 37: 114, 42: 120},
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--data', required=True)
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print('SKIP: data directory %s does not exist' % args.data)
        return 77
    failed = 0
    for rel, want in EXPECTED.items():
        path = os.path.join(args.data, rel)
        proc = subprocess.run([args.decoder, '--quiet', '--stats', path],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            print('FAIL %s: exit %d: %s' % (rel, proc.returncode, proc.stderr.strip()))
            failed += 1
            continue
        stats = [json.loads(l)['stats'] for l in proc.stderr.splitlines() if l.startswith('{')]
        if len(stats) != 1:
            print('FAIL %s: no stats line in %r' % (rel, proc.stderr))
            failed += 1
            continue
        s = stats[0]
        got = {int(k): v for k, v in s['templates'].items()}
        bad = []
        if got != want:
            bad.append('histogram %s != %s' % (got, want))
        for key in ('not_mdp3', 'packets_dropped', 'messages_skipped', 'version_fallbacks'):
            if s[key] != 0:
                bad.append('%s = %d' % (key, s[key]))
        if any(s['reasons'].values()):
            bad.append('reasons %s' % {k: v for k, v in s['reasons'].items() if v})
        if s['frames'] != 10000 or s['packets'] != 10000:
            bad.append('frames %d packets %d (want 10000)' % (s['frames'], s['packets']))
        if s['messages'] != sum(want.values()):
            bad.append('messages %d != %d' % (s['messages'], sum(want.values())))
        if bad:
            print('FAIL %s: %s' % (rel, '; '.join(bad)))
            failed += 1
        else:
            print('ok   %s: %d messages, %s, 0 malformed' %
                  (rel, s['messages'], dict(sorted(got.items()))))
    print('%d passed, %d failed' % (len(EXPECTED) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
