#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turn a dpdk-config profile (ports.ini + tickwire.cfg) into the Ansible
variables of ansible/roles/tickwire_config (tickwire_profile_base: none,
tickwire_ports, tickwire_cfg), as JSON for `ansible-playbook -e @FILE`.

    profile-vars.py PROFILE_DIR > vars.json

The profile stays the one description of the core map: image/build renders
it through the roles and then checks that tickwire-check derives the same
tuning from the rendered pair as from the profile. Only the syntax the
profiles use is read (ports.ini: sections, key = value, ; and # comments;
tickwire.cfg: groups, scalars, arrays, the three comment styles); anything
else stops with FILE:LINE.
"""
import json
import re
import sys


def fail(path, line, msg):
    sys.exit(f"{path}:{line}: error: {msg}; hint: image/lib/profile-vars.py reads the "
             "syntax of the shipped profiles (dpdk-config/README.md)")


def scalar(text):
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    return text


def read_ini(path):
    out = {"eal": {}, "mempool": {}, "ports": {}, "feeds": {}}
    cur = None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line[0] in ";#":
                continue
            m = re.fullmatch(r"\[([a-z0-9_.]+)\]", line)
            if m:
                name = m.group(1)
                if name in ("eal", "mempool"):
                    cur = out[name]
                elif name.startswith("port."):
                    cur = out["ports"].setdefault(name[5:], {})
                elif name.startswith("feed."):
                    cur = out["feeds"].setdefault(name[5:], {})
                else:
                    fail(path, n, f"unknown section [{name}]")
                continue
            m = re.fullmatch(r"([a-z0-9_]+)\s*=\s*(.*)", line)
            if not m or cur is None:
                fail(path, n, "expected [section] or key = value")
            value = m.group(2)
            if value.startswith('"'):
                end = value.find('"', 1)
                if end < 0:
                    fail(path, n, "unterminated quoted value")
                value = value[1:end]
            else:
                value = re.split(r"[;#]", value, maxsplit=1)[0].strip()
                value = scalar(value)
            cur[m.group(1)] = value
    return out


TOKEN = re.compile(r"""
    (?P<ws>\s+) | (?P<comment>\#[^\n]*|//[^\n]*|/\*.*?\*/) |
    (?P<string>"(?:[^"\\]|\\.)*") | (?P<number>-?(?:0x[0-9a-fA-F]+|[0-9]+)L?) |
    (?P<name>[A-Za-z][A-Za-z0-9_*-]*) | (?P<punct>[={}\[\]();:,])
""", re.X | re.S)


def read_cfg(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    toks, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            fail(path, text.count("\n", 0, pos) + 1, f"cannot read {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        if kind not in ("ws", "comment"):
            toks.append((kind, m.group(kind), text.count("\n", 0, pos) + 1))
        pos = m.end()
    toks.append(("end", "", text.count("\n") + 1))
    i = 0

    def value():
        nonlocal i
        kind, tok, line = toks[i]
        i += 1
        if kind == "string":
            return json.loads(tok)
        if kind == "number":
            return int(tok.rstrip("L"), 0)
        if kind == "name" and tok.lower() in ("true", "false"):
            return tok.lower() == "true"
        if tok == "{":
            return settings("}")
        if tok in "[(":
            close = "]" if tok == "[" else ")"
            items = []
            while toks[i][1] != close:
                items.append(value())
                if toks[i][1] == ",":
                    i += 1
            i += 1
            return items
        fail(path, line, f"unexpected {tok!r}")
        return None

    def settings(close):
        nonlocal i
        group = {}
        while toks[i][1] != close:
            kind, name, line = toks[i]
            if kind != "name" or toks[i + 1][1] not in "=:":
                fail(path, line, f"expected a setting name, got {name!r}")
            i += 2
            group[name] = value()
            if toks[i][1] in ";,":
                i += 1
        i += 1
        return group

    return settings("")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: profile-vars.py PROFILE_DIR")
    d = sys.argv[1].rstrip("/")
    json.dump({"tickwire_profile_base": "none",
               "tickwire_ports": read_ini(d + "/ports.ini"),
               "tickwire_cfg": read_cfg(d + "/tickwire.cfg")}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
