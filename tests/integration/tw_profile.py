#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write a copy of a tickwire profile with test inputs and outputs.

  tw_profile.py --from dpdk-config/demo --out DIR [--rx PORT=FILE]... [--tx PORT=FILE]...
                [--cfg 'REGEX=>REPLACEMENT']... [--ini 'REGEX=>REPLACEMENT']...

--rx/--tx replace the rx_pcap=/tx_pcap= file of [port.PORT]; --cfg/--ini apply
regular-expression substitutions (multiline) to tickwire.cfg / ports.ini.
"""
import argparse
import os
import re
import sys


def set_pcap(text, port, key, path):
    sec = re.search(r'^\[port\.%s\]\s*$' % re.escape(port), text, re.M)
    if sec is None:
        sys.exit('tw_profile: no [port.%s]' % port)
    end = re.search(r'^\[', text[sec.end():], re.M)
    stop = sec.end() + (end.start() if end else len(text) - sec.end())
    body = text[sec.end():stop]
    new, n = re.subn(r'%s=[^,\s]*' % key, '%s=%s' % (key, path), body)
    if n == 0:
        sys.exit('tw_profile: [port.%s] has no %s=' % (port, key))
    return text[:sec.end()] + new + text[stop:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--from', dest='src', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--rx', action='append', default=[])
    ap.add_argument('--tx', action='append', default=[])
    ap.add_argument('--cfg', action='append', default=[])
    ap.add_argument('--ini', action='append', default=[])
    a = ap.parse_args()
    ini = open(os.path.join(a.src, 'ports.ini')).read()
    cfg = open(os.path.join(a.src, 'tickwire.cfg')).read()
    for spec in a.rx:
        port, path = spec.split('=', 1)
        ini = set_pcap(ini, port, 'rx_pcap', os.path.abspath(path))
    for spec in a.tx:
        port, path = spec.split('=', 1)
        ini = set_pcap(ini, port, 'tx_pcap', os.path.abspath(path))
    for spec in a.ini:
        pat, rep = spec.split('=>', 1)
        ini = re.sub(pat, rep, ini, flags=re.M)
    for spec in a.cfg:
        pat, rep = spec.split('=>', 1)
        cfg = re.sub(pat, rep, cfg, flags=re.M)
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, 'ports.ini'), 'w').write(ini)
    open(os.path.join(a.out, 'tickwire.cfg'), 'w').write(cfg)


if __name__ == '__main__':
    main()
