#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The committed lib/ilink3/generated files are what il3_gen.py writes from the
schemas under cme_data.  Exit 77 (skip) only when the data directory is missing."""
import argparse
import filecmp
import os
import subprocess
import sys
import tempfile

SCHEMAS = ['ilinkbinary.v8.5.xml', 'Cme.Futures.iLink3.Sbe.v8.9.xml']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--generator', required=True)
    ap.add_argument('--committed', required=True)
    ap.add_argument('--data', required=True)
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        print('SKIP: data directory %s does not exist' % args.data)
        return 77
    failed = 0
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, args.generator, '--out-dir', out] +
                       [os.path.join(args.data, 'schemas', 'ilink3', s) for s in SCHEMAS],
                       check=True, stdout=subprocess.DEVNULL)
        for name in ('il3_cme_gen.h', 'il3_cme_gen.c'):
            same = filecmp.cmp(os.path.join(out, name), os.path.join(args.committed, name),
                               shallow=False)
            print('%s %s' % ('ok  ' if same else 'FAIL', name))
            failed += 0 if same else 1
    if failed:
        print('hint: run `ninja -C BUILD regen-ilink3` and commit lib/ilink3/generated')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
