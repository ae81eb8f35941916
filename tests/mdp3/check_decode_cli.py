#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-decode as a program: exit codes, error messages naming the file and
the frame at fault, in-band reports of frames that are not MDP3.
Exit 77 (skip) only when the data directory does not exist (the checks that
need no data run first)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

V9 = 'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.9/Cme.Mdp3.Sbe.v9.1.Example.pcap'
TCP = 'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.12/SnapshotFullRefreshTcpLongQty.Tcp.pcap'
ILINK = 'pcap/omi-data-packets/Cme/iLink3.Sbe.8.5/Sequence.pcap'

results = []


def check(name, cond, detail=''):
    results.append(cond)
    print('%s %s%s' % ('ok  ' if cond else 'FAIL', name, '' if cond else ': ' + detail))


def run(decoder, *args):
    p = subprocess.run([decoder] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--decoder', required=True)
    ap.add_argument('--data', required=True)
    args = ap.parse_args()
    d = args.decoder
    with tempfile.TemporaryDirectory() as tmp:
        rc, out, err = run(d)
        check('no file: exit 2 with usage', rc == 2 and 'usage' in err, repr((rc, err)))
        rc, out, err = run(d, '--bogus', 'x')
        check('bad option: exit 2', rc == 2, repr((rc, err)))
        missing = os.path.join(tmp, 'missing.pcap')
        rc, out, err = run(d, missing)
        check('missing file: exit 1, names the file', rc == 1 and missing in err and
              'hint' in err, repr((rc, err)))
        junk = os.path.join(tmp, 'junk.pcap')
        with open(junk, 'wb') as f:
            f.write(b'this is not a capture file at all')
        rc, out, err = run(d, junk)
        check('not a capture: exit 1, names the file', rc == 1 and junk in err and
              'not a pcap' in err, repr((rc, err)))
        if not os.path.isdir(args.data):
            print('SKIP: data directory %s does not exist' % args.data)
            return 1 if not all(results) else 77
        v9 = os.path.join(args.data, V9)
        with open(v9, 'rb') as f:
            data = f.read()
        # Cut in the middle of frame 3's record.
        off = 24
        for _ in range(2):
            off += 16 + int.from_bytes(data[off + 8:off + 12], 'little')
        cut = os.path.join(tmp, 'cut.pcap')
        with open(cut, 'wb') as f:
            f.write(data[:off + 30])
        rc, out, err = run(d, cut)
        frames = {json.loads(l)['frame'] for l in out.splitlines()}
        check('truncated capture: exit 1, error names file and frame 3',
              rc == 1 and cut in err and 'frame 3' in err, repr((rc, err)))
        check('truncated capture: frames 1-2 still decoded', frames == {1, 2}, repr(frames))
        rc, out, err = run(d, v9)
        lines = [json.loads(l) for l in out.splitlines()]
        pim = [l for l in lines if 'not_mdp3' in l]
        check('PIM frame reported not_mdp3, not guessed',
              rc == 0 and len(pim) == 1 and 'protocol 103' in pim[0]['not_mdp3'], repr(pim))
        rc, out, err = run(d, os.path.join(args.data, TCP))
        lines = [json.loads(l) for l in out.splitlines()]
        check('TCP without --tcp: not_mdp3 with a hint',
              rc == 0 and len(lines) == 1 and '--tcp' in lines[0].get('not_mdp3', ''),
              repr(lines))
        rc, out, err = run(d, '--tcp', os.path.join(args.data, ILINK))
        lines = [json.loads(l) for l in out.splitlines()]
        check('iLink 3 segment with --tcp: not_mdp3 (bad_encoding_type)',
              rc == 0 and len(lines) == 1 and 'bad_encoding_type' in lines[0].get('not_mdp3', ''),
              repr(lines))
        rc, out, err = run(d, '--text', os.path.join(args.data, TCP), '--tcp')
        check('--text decodes one line per message', rc == 0 and out.count('\n') == 1 and
              'SnapshotFullRefreshTCPLongQty68' in out and 'LowLimitPrice=0.00005' in out,
              repr(out[:300]))
        rc, out, err = run(d, v9, os.path.join(args.data, TCP))
        first = json.loads(out.splitlines()[0])
        check('several files: each line names its file', rc == 0 and first.get('file') == v9,
              repr(first))
    passed = sum(results)
    print('%d passed, %d failed' % (passed, len(results) - passed))
    return 0 if all(results) else 1


if __name__ == '__main__':
    sys.exit(main())
