#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The pcapng originals and their classic nanosecond-pcap conversions (editcap
-F nsecpcap, SOURCES.md) must decode to byte-identical output (JSON and
text).  Exit 77 (skip) only when the data directory does not exist."""
import argparse
import os
import subprocess
import sys

PAIRS = [
    ('pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.pcap',
     'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.classic-nsec.pcap'),
    ('pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.pcap',
     'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.classic-nsec.pcap'),
]


def run(decoder, mode, path):
    proc = subprocess.run([decoder, mode, path], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError('%s %s: exit %d: %s' % (mode, path, proc.returncode,
                                                    proc.stderr.decode()))
    return proc.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--data', required=True)
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print('SKIP: data directory %s does not exist' % args.data)
        return 77
    failed = passed = 0
    for ng, classic in PAIRS:
        with open(os.path.join(args.data, ng), 'rb') as f:
            magic = f.read(4)
        with open(os.path.join(args.data, classic), 'rb') as f:
            magic2 = f.read(4)
        if magic != b'\x0a\x0d\x0d\x0a' or magic2 != b'\x4d\x3c\xb2\xa1':
            print('FAIL %s / %s: not pcapng / classic-nsec (%r %r)' % (ng, classic, magic, magic2))
            failed += 1
            continue
        for mode in ('--json', '--text'):
            a = run(args.decoder, mode, os.path.join(args.data, ng))
            b = run(args.decoder, mode, os.path.join(args.data, classic))
            lines = a.count(b'\n')
            if a != b or lines < 10000:
                print('FAIL %s %s: outputs differ (%d vs %d lines)' %
                      (os.path.basename(ng), mode, lines, b.count(b'\n')))
                failed += 1
            else:
                print('ok   %s %s: %d identical lines' % (os.path.basename(ng), mode, lines))
                passed += 1
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
