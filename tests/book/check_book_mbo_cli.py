#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""tickwire-book --mbo end to end.

- The v9.1 example capture (18 feeds on 224.0.28.x, channels by port; it
  starts mid-stream, so every MBO book is partial): the order entries the
  tool counts per channel equal an independent count over tickwire-decode's
  output (6 template-47 entries, 213 NoOrderIDEntries of template 46, over
  the unique packets); with room for every book, the books printed equal a
  model of partial books built here from the decoder's output (every order:
  id, priority, quantity, level, priority order); the default 64 books refuse
  the instruments beyond them on channel 361; --join recover gives stale
  books and applies nothing; --mbo-orders 1 overflows books; the oracle
  compares nothing there (no book is complete).
- A crafted capture (ChannelReset, then 46s with level and order entries):
  valid books, the oracle's checks, one difference reported with its
  instrument, packet, side, level and both values, "+K more", priority order.
- tickwire-synth --mbo (with --synth): every MBO level equals the
  price level, no mismatch.
- Without --mbo nothing of the above is printed; --mbo-* options are
  checked and errors name the option.

Exit 77 when the data directory is missing.
"""
import argparse
import collections
import json
import os
import struct
import subprocess
import sys
import tempfile

V91 = "pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.9/Cme.Mdp3.Sbe.v9.1.Example.pcap"
ROUTES = ["--a-group", "224.0.28.0/25", "--b-group", "224.0.28.128/25"]
STATES = ["valid", "partial", "stale", "overflow"]
MBO_COUNTERS = ["mbo_entries_47", "mbo_entries_46", "mbo_new", "mbo_changes", "mbo_deletes",
                "mbo_unknown_orders", "mbo_bad_entries", "mbo_not_applied", "mbo_replayed",
                "mbo_books_refused", "mbo_order_overflows", "mbo_level_overflows",
                "mbo_stale_marked", "mbo_stale_books", "mbo_snapshots", "mbo_snapshots_ignored",
                "mbo_resets", "mbo_table_grows", "mbo_checks", "mbo_mismatches", "mbo_level_diffs",
                "mbo_checks_ahead"]
OUTCOMES = ["mbo_new", "mbo_changes", "mbo_deletes", "mbo_unknown_orders", "mbo_bad_entries",
            "mbo_not_applied"]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(tool, *args, expect=0):
    p = subprocess.run([tool, *args], capture_output=True, text=True)
    if p.returncode != expect:
        failures.append("%s: exit %d, expected %d (%s)" % (" ".join(args), p.returncode,
                                                            expect, p.stderr.strip()[:300]))
        print("FAIL:", failures[-1])
    return p


def tool_json(tool, *args):
    p = run(tool, "--json", *args)
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        check(False, "%s: JSON output (%s)" % (" ".join(args), e))
        return {"channels": []}


# ---- an independent model from tickwire-decode's output --------------------------


def decode_v91(decode, path):
    """Messages of the unique incremental packets, per channel in MsgSeqNum order."""
    p = run(decode, "--json", path)
    packets = collections.defaultdict(dict)   # channel -> seq -> [(msg, message)]
    first_copy = {}
    for line in p.stdout.splitlines():
        d = json.loads(line)
        if "template_id" not in d or not 14000 <= d["dst_port"] < 16000:
            continue
        channel = d["dst_port"] % 1000
        key = (channel, d["seq"])
        copy = (d["dst_port"] // 1000, d["frame"])
        if first_copy.setdefault(key, copy)[0] != copy[0]:
            continue   # the other feed's copy of a packet already taken
        packets[channel].setdefault(d["seq"], []).append((d["msg"], d))
    return {ch: [m for seq in sorted(p) for _, m in sorted(p[seq], key=lambda x: x[0])]
            for ch, p in packets.items()}


def entry_type(e):
    t = e["MDEntryType"]
    return t["value"] if isinstance(t, dict) else t


def model_partial_books(messages, max_books=None, max_orders=None):
    """Partial MBO books (BOOK_JOIN_TRUST, joined mid-stream) of one channel.

    An unknown order's change is inserted, an unknown order's delete ignored;
    an instrument gets a book at its first order entry (None: refused when
    max_books are taken); a book whose order count would pass max_orders is
    emptied and stops (overflow).  Returns (books, counts, overflowed, refused)
    with books: security id -> order id -> (side, price, qty, priority, arrival).
    """
    books, counts = {}, collections.Counter()
    overflowed, refused = set(), set()
    arrival = 0

    def apply(sid, action, order_id, side, price, qty, priority):
        nonlocal arrival
        counts["entries"] += 1
        if sid in refused:
            counts["not_applied"] += 1
            return
        if sid not in books:
            if max_books is not None and len(books) >= max_books:
                refused.add(sid)
                counts["not_applied"] += 1
                return
            books[sid] = {}
        if sid in overflowed:
            counts["not_applied"] += 1
            return
        book = books[sid]
        arrival += 1
        if action == 2:   # Delete
            counts["delete" if order_id in book else "unknown"] += 1
            book.pop(order_id, None)
            return
        if action == 1 and order_id not in book:
            counts["unknown"] += 1
        else:
            counts["new" if action == 0 else "change"] += 1
        old = book.get(order_id)
        keep = old is not None and old[3] == priority and old[1] == price and old[0] == side
        book[order_id] = (side, price, qty, priority, old[4] if keep else arrival)
        if max_orders is not None and len(book) > max_orders:
            book.clear()
            overflowed.add(sid)

    for m in messages:
        f = m["fields"]
        if m["template_id"] == 47:
            for e in f["NoMDEntries"]:
                apply(e["SecurityID"], e["MDUpdateAction"]["value"], e["OrderID"],
                      "bid" if entry_type(e) == "0" else "ask", e["MDEntryPx"]["mantissa"],
                      e["MDDisplayQty"], e["MDOrderPriority"])
        elif m["template_id"] == 46:
            levels = f["NoMDEntries"]
            for o in f.get("NoOrderIDEntries", []):
                ref = levels[o["ReferenceID"] - 1]
                check(entry_type(ref) in ("0", "1"), "v9.1: order entries reference bids/offers")
                apply(ref["SecurityID"], o["OrderUpdateAction"]["value"], o["OrderID"],
                      "bid" if entry_type(ref) == "0" else "ask", ref["MDEntryPx"]["mantissa"],
                      o["MDDisplayQty"], o["MDOrderPriority"])
    return books, counts, overflowed, refused


def model_levels(book, side):
    """Levels of one side, best first: (price, qty, [(order id, priority, qty)...])."""
    by_price = collections.defaultdict(list)
    for order_id, (s, price, qty, priority, arrival) in book.items():
        if s == side:
            by_price[price].append((priority, arrival, order_id, qty))
    out = []
    for price in sorted(by_price, reverse=(side == "bid")):
        orders = sorted(by_price[price])
        out.append((price, sum(o[3] for o in orders), [(o[2], o[0], o[3]) for o in orders]))
    return out


def printed_levels(mbo_side):
    return [(l["mantissa"], l["qty"], [(o["order_id"], o["priority"], o["qty"]) for o in l["top"]])
            for l in mbo_side]


# ---- checks on any --mbo JSON document ---------------------------------------------


def check_structure(doc, what, levels, shown):
    for ch in doc["channels"]:
        m = ch.get("mbo")
        if not check(isinstance(m, dict), "%s ch %s: an mbo object" % (what, ch["channel"])):
            continue
        check(sorted(m) == ["books", "bounds", "counters", "diffs"],
              "%s: mbo keys %s" % (what, sorted(m)))
        if not (check(list(m["counters"]) == MBO_COUNTERS,
                      "%s: the mbo_* counters in order" % what) and
                check(list(m["books"]) == STATES, "%s: books by state" % what)):
            continue
        c = m["counters"]
        check(c["mbo_entries_47"] + c["mbo_entries_46"] == sum(c[k] for k in OUTCOMES),
              "%s ch %s: every entry ends in one outcome" % (what, ch["channel"]))
        check(len(m["diffs"]) == min(c["mbo_level_diffs"], m["bounds"]["diffs"]),
              "%s ch %s: differences kept" % (what, ch["channel"]))
        states = collections.Counter()
        for i in ch["instruments"]:
            check("mbo" in i, "%s: every instrument has an mbo key" % what)
            b = i.get("mbo")
            if b is None:
                continue
            states[b["state"]] += 1
            check(sorted(b) == ["ask", "bid", "orders", "state"], "%s: mbo book keys" % what)
            if b["state"] in ("stale", "overflow"):
                check(b["orders"] == 0 and b["bid"] == [] and b["ask"] == [],
                      "%s: %s book unreadable" % (what, b["state"]))
            for side in ("bid", "ask"):
                prices = [l["mantissa"] for l in b[side]]
                check(prices == sorted(prices, reverse=(side == "bid")),
                      "%s %d %s: best level first" % (what, i["security_id"], side))
                check(len(b[side]) <= levels, "%s: at most --levels levels" % what)
                for n, l in enumerate(b[side]):
                    check(l["level"] == n + 1, "%s: level numbers" % what)
                    check(len(l["top"]) == min(shown, l["orders"]) and
                          l["more"] == l["orders"] - len(l["top"]),
                          "%s %d %s L%d: top orders and more" % (what, i["security_id"],
                                                                  side, n + 1))
                    pr = [o["priority"] for o in l["top"]]
                    check(pr == sorted(pr), "%s: orders in priority order" % what)
                    if l["more"] == 0:
                        check(sum(o["qty"] for o in l["top"]) == l["qty"],
                              "%s: level quantity = its orders'" % what)
        if ch["instruments"]:
            check(dict(states) == {k: v for k, v in m["books"].items() if v},
                  "%s ch %s: books by state %s, instruments show %s" %
                  (what, ch["channel"], m["books"], dict(states)))


# ---- the v9.1 capture ---------------------------------------------------------------------


def test_v91(tool, decode, path):
    per_channel = decode_v91(decode, path)
    n47 = {ch: sum(len(m["fields"]["NoMDEntries"]) for m in ms if m["template_id"] == 47)
           for ch, ms in per_channel.items()}
    n46 = {ch: sum(len(m["fields"].get("NoOrderIDEntries", [])) for m in ms
                   if m["template_id"] == 46) for ch, ms in per_channel.items()}
    check(sum(n47.values()) == 6 and sum(n46.values()) == 213,
          "v9.1: decoder counts 6 47-entries and 213 46 order entries (got %d, %d)" %
          (sum(n47.values()), sum(n46.values())))

    # without --mbo: nothing of it, 47 ignored
    off = tool_json(tool, *ROUTES, path)
    check(all("mbo" not in ch and all("mbo" not in i for i in ch["instruments"])
              for ch in off["channels"]), "v9.1: no mbo keys without --mbo")
    check(sum(ch["counters"]["messages_ignored"] for ch in off["channels"]) > 0,
          "v9.1: 47 ignored without --mbo")
    text = run(tool, *ROUTES, path).stdout
    check("mbo" not in text, "v9.1: no mbo in the text without --mbo")

    # room for every book, every order shown: the model's books exactly
    doc = tool_json(tool, "--mbo", "--mbo-instruments", "256", "--mbo-orders-per-level", "1000",
                    "--levels", "12", *ROUTES, path)
    check_structure(doc, "v9.1 full", 12, 1000)
    check(len(doc["channels"]) == 9, "v9.1: 9 channels")
    total47 = total46 = books_seen = 0
    for ch in doc["channels"]:
        cid, c = ch["channel"], ch["mbo"]["counters"]
        check(ch["mbo"]["bounds"] == {"instruments": 256, "orders": 4096, "levels": 1024,
                                      "diffs": 16, "presize": False},
              "v9.1: bounds %s" % ch["mbo"]["bounds"])
        check(c["mbo_entries_47"] == n47.get(cid, 0) and c["mbo_entries_46"] == n46.get(cid, 0),
              "v9.1 ch %d: entries %d/%d, decoder %d/%d" % (cid, c["mbo_entries_47"],
                                                           c["mbo_entries_46"], n47.get(cid, 0),
                                                           n46.get(cid, 0)))
        total47 += c["mbo_entries_47"]
        total46 += c["mbo_entries_46"]
        books, counts, _, _ = model_partial_books(per_channel[cid])
        check(c["mbo_new"] == counts["new"] and c["mbo_changes"] == counts["change"] and
              c["mbo_deletes"] == counts["delete"] and
              c["mbo_unknown_orders"] == counts["unknown"],
              "v9.1 ch %d: new/change/delete/unknown %d/%d/%d/%d, model %s" %
              (cid, c["mbo_new"], c["mbo_changes"], c["mbo_deletes"], c["mbo_unknown_orders"],
               dict(counts)))
        check(c["mbo_not_applied"] == 0 and c["mbo_books_refused"] == 0 and
              c["mbo_bad_entries"] == 0, "v9.1 ch %d: everything applied" % cid)
        check(c["mbo_checks"] == 0 and c["mbo_mismatches"] == 0 and ch["mbo"]["diffs"] == [],
              "v9.1 ch %d: the oracle compared nothing (no complete book)" % cid)
        check(ch["mbo"]["books"] == {"valid": 0, "partial": len(books), "stale": 0,
                                     "overflow": 0},
              "v9.1 ch %d: %s, model %d partial" % (cid, ch["mbo"]["books"], len(books)))
        got = {i["security_id"]: i["mbo"] for i in ch["instruments"] if i["mbo"] is not None}
        check(set(got) == set(books), "v9.1 ch %d: the instruments with a book" % cid)
        books_seen += len(got)
        for sid, b in got.items():
            model = books.get(sid, {})
            check(b["state"] == "partial" and b["orders"] == len(model),
                  "v9.1 %d: partial, %d orders (model %d)" % (sid, b["orders"], len(model)))
            for side in ("bid", "ask"):
                want = model_levels(model, side)[:12]
                check(printed_levels(b[side]) == want,
                      "v9.1 %d %s: levels %s, model %s" % (sid, side, printed_levels(b[side]),
                                                          want))
    check(total47 == 6 and total46 == 213, "v9.1: 6 + 213 entries counted by the tool")

    # --levels bounds the MBO levels printed too (170506's asks: two levels)
    doc = tool_json(tool, "--mbo", "--mbo-instruments", "256", "--levels", "1", *ROUTES, path)
    check_structure(doc, "v9.1 one level", 1, 3)
    two = 0
    for ch in doc["channels"]:
        books = model_partial_books(per_channel[ch["channel"]])[0]
        for i in ch["instruments"]:
            if i["mbo"] is None:
                continue
            for side in ("bid", "ask"):
                want = [(p, q, o[:3]) for p, q, o in model_levels(books[i["security_id"]],
                                                                   side)[:1]]
                two += len(model_levels(books[i["security_id"]], side)) >= 2
                check(printed_levels(i["mbo"][side]) == want,
                      "v9.1 --levels 1 %d %s: %s, model %s" %
                      (i["security_id"], side, printed_levels(i["mbo"][side]), want))
    check(two > 0, "v9.1: a side with two MBO levels (cut by --levels 1)")
    check(books_seen > 100, "v9.1: more than 100 partial books (%d)" % books_seen)

    # default bounds: channel 361 has more instruments with orders than 64 books
    doc = tool_json(tool, "--mbo", *ROUTES, path)
    check_structure(doc, "v9.1 default", 5, 3)
    for ch in doc["channels"]:
        books, counts, _, refused = model_partial_books(per_channel[ch["channel"]], max_books=64)
        c = ch["mbo"]["counters"]
        check(ch["mbo"]["bounds"] == {"instruments": 64, "orders": 4096, "levels": 1024,
                                      "diffs": 16, "presize": False}, "v9.1: default bounds")
        check(c["mbo_books_refused"] == len(refused) and
              c["mbo_not_applied"] == counts["not_applied"] and
              ch["mbo"]["books"]["partial"] == len(books),
              "v9.1 ch %d: %d refused, %d not applied, %d books (model %d, %d, %d)" %
              (ch["channel"], c["mbo_books_refused"], c["mbo_not_applied"],
               ch["mbo"]["books"]["partial"], len(refused), counts["not_applied"], len(books)))
        if ch["channel"] == 361:
            check(len(refused) > 0 and ch["mbo"]["books"]["partial"] == 64,
                  "v9.1 ch 361: 64 books, the rest refused")

    # --join recover: books start stale, nothing applied
    doc = tool_json(tool, "--mbo", "--join", "recover", "--mbo-instruments", "256", *ROUTES,
                    path)
    check_structure(doc, "v9.1 recover", 5, 3)
    for ch in doc["channels"]:
        c = ch["mbo"]["counters"]
        nbooks = ch["mbo"]["books"]["stale"]
        check(nbooks > 0 and sum(ch["mbo"]["books"].values()) == nbooks and
              c["mbo_stale_books"] == nbooks and
              c["mbo_not_applied"] == c["mbo_entries_47"] + c["mbo_entries_46"],
              "v9.1 ch %d recover: every book stale, nothing applied" % ch["channel"])

    # one order per book: the books that would hold two overflow
    doc = tool_json(tool, "--mbo", "--mbo-orders", "1", "--mbo-instruments", "256", *ROUTES,
                    path)
    check_structure(doc, "v9.1 overflow", 5, 3)
    overflows = 0
    for ch in doc["channels"]:
        _, _, overflowed, _ = model_partial_books(per_channel[ch["channel"]], max_orders=1)
        c = ch["mbo"]["counters"]
        check(c["mbo_order_overflows"] == len(overflowed) and
              ch["mbo"]["books"]["overflow"] == len(overflowed),
              "v9.1 ch %d: %d overflows, %d overflow books, model %d" %
              (ch["channel"], c["mbo_order_overflows"], ch["mbo"]["books"]["overflow"],
               len(overflowed)))
        overflows += len(overflowed)
    check(overflows > 0, "v9.1: some book overflows at one order")

    # text: a block per book, the counters, the oracle
    text = run(tool, "--mbo", "--mbo-instruments", "256", "--levels", "3", *ROUTES,
               path).stdout
    check(text.count("    mbo          state=partial orders=") == books_seen,
          "v9.1 text: one mbo line per book")
    check(text.count("  mbo oracle: checks=0 mismatches=0 level_diffs=0, first 0 differences")
          == 9, "v9.1 text: the oracle line of each channel")
    check(text.count("mbo_entries_47=") == 9 and "mbo_books_refused=0" in text,
          "v9.1 text: the mbo counters")
    check("        order 88463941772 priority 1423908494 qty 2\n" in text,
          "v9.1 text: an order of instrument 170506")
    text = run(tool, "--mbo", "--join", "recover", *ROUTES, path).stdout
    check("state=stale orders=0 (not readable until a snapshot or a reset)" in text,
          "v9.1 text: stale books")
    doc = tool_json(tool, "--mbo", "--counters-only", *ROUTES, path)
    check(all(ch["instruments"] == [] and "mbo" in ch for ch in doc["channels"]),
          "v9.1: --counters-only keeps the mbo block")


# ---- a crafted capture: valid books, the oracle, a difference --------------------------

CHANNEL = 310
SID = 1001
PX = 100250000000   # 100.25 at 10^-9
PX_ASK = 100500000000


def sbe_message(template, root, groups):
    body = root + b"".join(groups)
    return struct.pack("<HHHHH", 10 + len(body), len(root), template, 1, 9) + body


def group(block_length, entries, eight_byte=False):
    if eight_byte:
        head = struct.pack("<H5xB", block_length, len(entries))
    else:
        head = struct.pack("<HB", block_length, len(entries))
    return head + b"".join(entries)


def level_entry(price, qty, orders, rpt_seq, level, action, entry_type):
    return struct.pack("<qiiIiBBc5x", price, qty, SID, rpt_seq, orders, level, action,
                       entry_type)


def order_entry(order_id, priority, qty, ref, action):
    return struct.pack("<QQiBB2x", order_id, priority, qty, ref, action)


def book46(levels, orders):
    root = struct.pack("<QB2x", 1, 0x80)   # TransactTime, EndOfEvent
    return sbe_message(46, root, [group(32, levels), group(24, orders, eight_byte=True)])


def udp_frame(payload, dst_ip, port):
    udp = struct.pack(">HHHH", port, port, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes(dst_ip))
    eth = bytes([1, 0, 0x5e, dst_ip[1] & 0x7f, dst_ip[2], dst_ip[3]]) + bytes(6) + b"\x08\x00"
    return eth + ip + udp


def write_pcap(path, payloads):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for n, p in enumerate(payloads):
            frame = udp_frame(p, [224, 0, 31, 1], 14000 + CHANNEL)
            f.write(struct.pack("<IIII", 1700000000, n, len(frame), len(frame)) + frame)


def test_crafted(tool, tmp):
    reset = sbe_message(4, struct.pack("<QB", 1, 0x80), [group(2, [struct.pack("<h", CHANNEL)])])
    # event 1: bid 6 @ 100.25 (3 orders, sent out of priority order), ask 4 @ 100.5 (1)
    ev1 = book46([level_entry(PX, 6, 3, 1, 1, 0, b"0"),
                  level_entry(PX_ASK, 4, 1, 2, 1, 0, b"1")],
                 [order_entry(11, 30, 1, 1, 0), order_entry(12, 10, 2, 1, 0),
                  order_entry(13, 20, 3, 1, 0), order_entry(21, 5, 4, 2, 0)])
    # event 2: the ask level says 9 (2 orders), the orders say 4 + 3
    ev2 = book46([level_entry(PX_ASK, 9, 2, 3, 1, 1, b"1")], [order_entry(22, 6, 3, 1, 0)])
    packets = [struct.pack("<IQ", seq, 1700000000000000000 + seq) + msg
               for seq, msg in ((1, reset), (2, ev1), (3, ev2))]
    path = os.path.join(tmp, "crafted.pcap")
    write_pcap(path, packets)

    doc = tool_json(tool, "--mbo", "--mbo-orders-per-level", "1", path)
    check_structure(doc, "crafted", 5, 1)
    if not check(len(doc["channels"]) == 1, "crafted: one channel"):
        return
    ch = doc["channels"][0]
    m, c = ch["mbo"], ch["mbo"]["counters"]
    check(ch["channel"] == CHANNEL and ch["counters"]["packets_applied"] == 3,
          "crafted: channel %d, 3 packets applied" % CHANNEL)
    check(c["mbo_entries_46"] == 5 and c["mbo_new"] == 5 and c["mbo_resets"] == 0,
          "crafted: 5 orders added (%s)" % c)
    check(m["books"] == {"valid": 1, "partial": 0, "stale": 0, "overflow": 0},
          "crafted: one valid book (%s)" % m["books"])
    check(c["mbo_checks"] == 2 and c["mbo_mismatches"] == 1 and c["mbo_level_diffs"] == 1,
          "crafted: 2 checks, 1 mismatch, 1 level (%d, %d, %d)" %
          (c["mbo_checks"], c["mbo_mismatches"], c["mbo_level_diffs"]))
    want = [{"security_id": SID, "msg_seq_num": 3, "side": "ask", "level": 1,
             "mbo": {"price": "100.5", "mantissa": PX_ASK, "qty": 7, "orders": 2},
             "mbp": {"price": "100.5", "mantissa": PX_ASK, "qty": 9, "orders": 2}}]
    check(m["diffs"] == want, "crafted: the difference %s" % m["diffs"])
    b = ch["instruments"][0]["mbo"] if ch["instruments"] else None
    check(b is not None and b["state"] == "valid" and b["orders"] == 5,
          "crafted: the book valid with 5 orders")
    if b is not None:
        check(b["bid"] == [{"level": 1, "price": "100.25", "mantissa": PX, "qty": 6, "orders": 3,
                            "top": [{"order_id": 12, "priority": 10, "qty": 2}], "more": 2}],
              "crafted: bid level, first order by priority, 2 more: %s" % b["bid"])
        check(b["ask"] == [{"level": 1, "price": "100.5", "mantissa": PX_ASK, "qty": 7,
                            "orders": 2, "top": [{"order_id": 21, "priority": 5, "qty": 4}],
                            "more": 1}], "crafted: ask level %s" % b["ask"])
    doc = tool_json(tool, "--mbo", "--mbo-orders-per-level", "0", path)
    b = doc["channels"][0]["instruments"][0]["mbo"] if doc["channels"] else {}
    check(b.get("bid", [{}])[0].get("top") == [] and b["bid"][0]["more"] == 3,
          "crafted: --mbo-orders-per-level 0 shows no order, 3 more")

    text = run(tool, "--mbo", "--mbo-orders-per-level", "2", path).stdout
    for line in ["    mbo          state=valid orders=5\n",
                 "      bid L1          6 @ 100.25       (  3)\n"
                 "        order 12 priority 10 qty 2\n"
                 "        order 13 priority 20 qty 3\n"
                 "        +1 more\n",
                 "      ask L1          7 @ 100.5        (  2)\n"
                 "        order 21 priority 5 qty 4\n"
                 "        order 22 priority 6 qty 3\n  counters:\n",
                 "  mbo: books valid=1 partial=0 stale=0 overflow=0",
                 "  mbo oracle: checks=2 mismatches=1 level_diffs=1, first 1 difference:\n"
                 "    instrument 1001 seq 3 ask L1: mbo 7 @ 100.5 (2) | mbp 9 @ 100.5 (2)\n"]:
        check(line in text, "crafted text: %r" % line)
    check("      ask L1" in text and text.index("      bid L1") < text.index("      ask L1"),
          "crafted text: bid before ask")


# ---- tickwire-synth --mbo ---------------------------------------------------------------


def test_synth(tool, synth, tmp):
    if synth is None:
        return
    a, b = os.path.join(tmp, "a.pcap"), os.path.join(tmp, "b.pcap")
    run(synth, "--mbo", "--reset-first", "--instruments", "4", "--events", "3000", "--seed",
        "7", "--out-a", a, "--out-b", b)
    doc = tool_json(tool, "--mbo", "--levels", "10", a, b)
    check_structure(doc, "synth", 10, 3)
    for ch in doc["channels"]:
        m, c = ch["mbo"], ch["mbo"]["counters"]
        check(m["books"]["valid"] > 0 and m["books"]["valid"] == sum(m["books"].values()),
              "synth: every MBO book valid (%s)" % m["books"])
        check(c["mbo_checks"] > 0 and c["mbo_mismatches"] == 0 and m["diffs"] == [],
              "synth: the oracle checked (%d) and found nothing (%d)" %
              (c["mbo_checks"], c["mbo_mismatches"]))
        for i in ch["instruments"]:
            if i["mbo"] is None:
                continue
            for side in ("bid", "ask"):
                mbp = [(l["mantissa"], l["qty"], l["orders"]) for l in i["outright"][side]
                       if l["mantissa"] is not None]
                mbo = [(l["mantissa"], l["qty"], l["orders"]) for l in i["mbo"][side]]
                check(mbo == mbp, "synth %d %s: MBO levels %s = MBP %s" %
                      (i["security_id"], side, mbo, mbp))
    # --mbo-presize: the same books, tables never doubled (they did above)
    pre = tool_json(tool, "--mbo", "--mbo-presize", "--levels", "10", a, b)
    for ch, chp in zip(doc["channels"], pre["channels"]):
        grows, grows_pre = (c["mbo"]["counters"]["mbo_table_grows"] for c in (ch, chp))
        check(grows > 0 and grows_pre == 0 and chp["mbo"]["bounds"]["presize"],
              "synth: --mbo-presize, no table doubled (%d without it, %d with)" %
              (grows, grows_pre))
        check(chp["instruments"] == ch["instruments"] and
              chp["mbo"]["counters"]["mbo_mismatches"] == 0,
              "synth: --mbo-presize gives the same books")


def test_usage(tool, path):
    for args, option in ((["--mbo", "--mbo-orders", "0"], "--mbo-orders"),
                         (["--mbo", "--mbo-orders", "x"], "--mbo-orders"),
                         (["--mbo", "--mbo-orders", "16777217"], "--mbo-orders"),
                         (["--mbo", "--mbo-levels", "0"], "--mbo-levels"),
                         (["--mbo", "--mbo-levels", "1048577"], "--mbo-levels"),
                         (["--mbo", "--mbo-instruments", "65537"], "--mbo-instruments"),
                         (["--mbo", "--mbo-orders-per-level", "1001"], "--mbo-orders-per-level"),
                         (["--mbo", "--mbo-orders-per-level", "-1"], "--mbo-orders-per-level"),
                         (["--mbo", "--mbo-diffs", "0"], "--mbo-diffs"),
                         (["--mbo-orders", "10"], "--mbo-orders"),
                         (["--mbo-orders-per-level", "2"], "--mbo-orders-per-level"),
                         (["--mbo-presize"], "--mbo-presize")):
        p = run(tool, *args, path, expect=2)
        check(option in p.stderr and "want" in p.stderr or "needs --mbo" in p.stderr,
              "usage %s: the error names %s (%s)" % (args, option, p.stderr.strip()))
    check("--mbo-orders-per-level" in run(tool, "--help").stdout, "--help lists the mbo options")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tool", required=True)
    ap.add_argument("--decode", required=True)
    ap.add_argument("--synth")
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    if not os.path.isdir(a.data):
        print("no CME data directory %s: skipping" % a.data)
        return 77
    path = os.path.join(a.data, V91)
    with tempfile.TemporaryDirectory() as tmp:
        test_v91(a.tool, a.decode, path)
        test_crafted(a.tool, tmp)
        test_synth(a.tool, a.synth, tmp)
    test_usage(a.tool, path)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("tickwire-book --mbo: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
