#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The committed app/synth/generated files must be what synth_layout_gen.py
writes from the schemas under cme_data.  Exit 77 (skip) only when the data
directory does not exist."""
import argparse
import filecmp
import os
import subprocess
import sys
import tempfile

SCHEMAS = ['Cme.Futures.Mdp3.Sbe.v1.9.xml', 'Cme.Futures.Mdp3.Sbe.v1.13.xml']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--generator', required=True)
    ap.add_argument('--committed', required=True)
    ap.add_argument('--data', required=True)
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print('SKIP: data directory %s does not exist' % args.data)
        return 77
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, args.generator, '--out-dir', out] + \
            [os.path.join(args.data, 'schemas', 'mdp3', s) for s in SCHEMAS]
        subprocess.run(cmd, check=True)
        failed = 0
        for name in ('synth_layout_gen.h', 'synth_layout_gen.c'):
            same = filecmp.cmp(os.path.join(out, name), os.path.join(args.committed, name),
                               shallow=False)
            print('%s %s' % ('ok  ' if same else 'FAIL', name))
            failed += 0 if same else 1
    if failed:
        print('hint: run `ninja -C BUILD regen-synth` and commit app/synth/generated')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
