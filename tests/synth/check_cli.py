#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-synth reports bad input with the option or file at fault and a
hint, and exits 2 for usage errors, 1 for output errors; --help exits 0."""
import argparse
import os
import subprocess
import tempfile

import synth_common as sc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--synth', required=True)
    args = ap.parse_args()
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        a = os.path.join(tmp, 'a.pcap')
        b = os.path.join(tmp, 'b.pcap')
        out = ['--out-a', a, '--out-b', b]
        cases = [
            (['--out-a', a], 2, '--out-b'),
            (out + ['--drop-a', '1.5'], 2, '--drop-a'),
            (out + ['--dup-b', 'x'], 2, '--dup-b'),
            (out + ['--reorder-a', '-0.1'], 2, '--reorder-a'),
            (out + ['--schema-version', '12'], 2, '--schema-version'),
            (out + ['--instruments', '0'], 2, '--instruments'),
            (out + ['--instruments', '100000'], 2, '--instruments'),
            (out + ['--burst-alpha', '20000', '--burst-beta', '10000'], 2, '--burst-alpha'),
            (out + ['--burst-mu', '0'], 2, '--burst-mu'),
            (out + ['--mtu', '300'], 2, '--mtu'),
            (out + ['--gap', '12:x'], 2, '--gap'),
            (out + ['--truth-every'], 2, '--truth'),
            (out + ['--bogus'], 2, 'usage'),
            (out + ['extra'], 2, 'extra'),
            (['--out-a', os.path.join(tmp, 'no', 'dir', 'a.pcap'), '--out-b', b], 1,
             os.path.join(tmp, 'no', 'dir', 'a.pcap')),
            (out + ['--manifest', os.path.join(tmp, 'no', 'm.jsonl')], 1, 'm.jsonl'),
            (out + ['--events', '100', '--reset-at', '100000'], 1, '--reset-at'),
        ]
        for argv, code, needle in cases:
            r = subprocess.run([args.synth] + argv, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            ok = r.returncode == code and needle in r.stderr and \
                ('hint:' in r.stderr or needle == 'usage')
            print('%s exit %d %s' % ('ok  ' if ok else 'FAIL', r.returncode,
                                     ' '.join(argv[len(out):] if argv[:4] == out else argv)))
            if not ok:
                errors.append('%s: exit %d (want %d), stderr %r' % (argv, r.returncode, code,
                                                                    r.stderr))
        r = subprocess.run([args.synth, '--help'], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0 or '--burst-alpha' not in r.stdout:
            errors.append('--help: exit %d' % r.returncode)
    for e in errors:
        print('  ' + e)
    if errors:
        sc.fail('command-line errors')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
