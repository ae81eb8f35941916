#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 tickwire
"""Smoke test of bench_actor: it runs, prints every table, writes its JSON.

No figure is judged (timings on a shared machine are not a test): this
checks that the program completes a quick run (--quick --rounds 1), that
the JSON holds tables 1-6 with their rows and the fifteen targets of
issue 3 and the seven of issue 15, each with a verdict, and that the text ends with the summary.
The one exact figure is table 3's allocation count on the synchronous
path, which is a guarantee, not a timing: it must be 0.

usage: smoke_bench_actor.py BENCH_ACTOR WORKDIR
"""
import json
import math
import os
import subprocess
import sys


def fail(msg):
    print("smoke_bench_actor: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    bench, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "bench_actor_smoke.json")
    run = subprocess.run([bench, "--quick", "--rounds", "1", "--no-caf", "--json", out],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=600)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        fail("exit status %d (its output is above)" % run.returncode)
    if "== Summary of the targets of issue 3 ==" not in run.stdout:
        fail("no summary of the targets in the output")
    with open(out) as f:
        doc = json.load(f)
    tables = doc.get("tables", [])
    if [t.get("id") for t in tables] != [1, 2, 3, 4, 5, 6]:
        fail("tables %r, expected 1..6" % [t.get("id") for t in tables])
    targets = []
    for t in tables:
        rows = [r for s in t.get("sections", []) for r in s.get("rows", [])]
        if not rows:
            fail("table %d has no rows" % t["id"])
        for r in rows:
            if not r.get("name"):
                fail("table %d: a row without a name" % t["id"])
        targets += [(t["id"], g) for g in t.get("targets", [])]
    if len(targets) != 22:
        fail("%d targets, expected 22 (15 of issue 3, 7 of issue 15)" % len(targets))
    for tid, g in targets:
        if not isinstance(g.get("met"), bool) or not g.get("what"):
            fail("table %d: a target without a verdict: %r" % (tid, g))
        v = g.get("value")
        if v is not None and not (isinstance(v, (int, float)) and not math.isnan(v)):
            fail("table %d: target %r has value %r" % (tid, g["what"], v))
        if tid == 3 and g["what"].startswith("allocations on the synchronous path"):
            if v != 0:
                fail("allocations on the synchronous path: %r, must be 0" % v)
    print("smoke_bench_actor: 6 tables, 22 targets, JSON in " + out)


if __name__ == "__main__":
    main()
