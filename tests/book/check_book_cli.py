#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-book end to end on the two real A/B captures.

- --feed A, --feed B and both give the same books (book hash, every level);
- duplicates: 5000 with both feeds, 0 with one;
- random drops on both feeds: the lost sequence numbers the tool counted on
  both feeds equal the arbiter's declared losses; stale books appear;
- drops on one feed only: no loss, the same books as the full replay;
- --a-group overrides the feed A route; text output; usage errors exit 2,
  an unreadable file exits 1.

Exit 77 when the data directory is missing.
"""
import argparse
import json
import os
import subprocess
import sys

CAPTURES = [
    ("pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.pcap", 340, 127),
    ("pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.pcap", 320, 39),
]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(tool, *args, expect=0):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    if p.returncode != expect:
        failures.append("%s: exit %d, expected %d (%s)" % (" ".join(args), p.returncode,
                                                            expect, p.stderr.strip()[:200]))
    return p


def book_json(tool, path, *args):
    p = run(tool, "--json", "--levels", "10", *args, path)
    doc = json.loads(p.stdout)
    check(len(doc["channels"]) == 1, "one channel in %s %s" % (path, args))
    return doc, doc["channels"][0]


def books_of(channel):
    return {i["security_id"]: (i["state"], i["rpt_seq"], i["hash"], json.dumps(i["outright"]),
                               json.dumps(i["implied"]), json.dumps(i["consolidated"]))
            for i in channel["instruments"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print("no CME data directory %s: skipping" % a.data)
        return 77

    for rel, channel_id, instruments in CAPTURES:
        path = os.path.join(a.data, rel)
        _, both = book_json(a.tool, path)
        _, only_a = book_json(a.tool, path, "--feed", "A")
        _, only_b = book_json(a.tool, path, "--feed", "B")
        check(both["channel"] == channel_id, "channel %d" % channel_id)
        check(both["instrument_count"] == instruments, "%s: %d instruments" % (rel, instruments))
        check(both["book_hash"] == only_a["book_hash"] == only_b["book_hash"],
              "%s: A, B and both give the same book hash" % rel)
        check(books_of(both) == books_of(only_a) == books_of(only_b),
              "%s: A, B and both give the same levels" % rel)
        c = both["counters"]
        check(c["duplicates"] == 5000 and c["packets_applied"] == 5000,
              "%s: 5000 duplicates with both feeds" % rel)
        check(only_a["counters"]["duplicates"] == 0, "%s: no duplicates on one feed" % rel)
        check(c["declared_losses"] == 0 and c["stale_books"] == 0 and c["malformed"] == 0,
              "%s: no loss, no stale book, nothing malformed" % rel)

        for seed in (1, 2, 3):
            _, d = book_json(a.tool, path, "--drop-a", "20", "--drop-b", "20", "--seed",
                             str(seed))
            dc = d["counters"]
            check(dc["lost_packets"] == d["lost_on_both"],
                  "%s seed %d: declared %d lost, %d lost on both" %
                  (rel, seed, dc["lost_packets"], d["lost_on_both"]))
            check(dc["dropped_by_tool_a"] > 800 and dc["dropped_by_tool_b"] > 800,
                  "%s seed %d: about 20%% dropped per feed" % (rel, seed))
            check(dc["stale_books"] > 0 and dc["rpt_seq_gaps"] == dc["stale_books"],
                  "%s seed %d: stale books after losses" % (rel, seed))
            check(dc["packets_applied"] + dc["lost_packets"] <= 5000,
                  "%s seed %d: applied + lost within the capture" % (rel, seed))
            # one feed only loses: the other fills every gap
            _, one = book_json(a.tool, path, "--drop-a", "50", "--seed", str(seed))
            check(one["counters"]["lost_packets"] == 0 and one["lost_on_both"] == 0,
                  "%s seed %d: no loss when B is intact" % (rel, seed))
            check(one["book_hash"] == both["book_hash"],
                  "%s seed %d: A at 50%% drop, B intact: same books" % (rel, seed))

        # route override: feed A's group moved away -> A unrouted, books from B
        doc, moved = book_json(a.tool, path, "--a-group", "224.0.99.0/24")
        check(doc["unrouted"] == 5000, "%s: feed A unrouted after --a-group" % rel)
        check(moved["book_hash"] == both["book_hash"], "%s: books from B alone" % rel)
        doc, exact = book_json(a.tool, path, "--a-group",
                               "224.0.31.%d:%d" % (64 if channel_id == 340 else 11,
                                                   14000 + channel_id))
        check(doc["unrouted"] == 0 and exact["counters"]["duplicates"] == 5000,
              "%s: --a-group with an exact group and port" % rel)

        text = run(a.tool, "--levels", "2", path).stdout
        check(("channel %d:" % channel_id) in text and "consolidated" in text and
              "counters:" in text, "%s: text output" % rel)

    path = os.path.join(a.data, CAPTURES[0][0])
    for bad in (["--feed", "C", path], ["--drop-a", "101", path], ["--drop-a", "x", path],
                ["--levels", "0", path], ["--window", "3", path], ["--a-group", "1.2.3", path],
                ["--join", "maybe", path], []):
        run(a.tool, *bad, expect=2)
    run(a.tool, os.path.join(a.data, "no-such-file.pcap"), expect=1)
    run(a.tool, "--help", expect=0)

    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("tickwire-book: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
