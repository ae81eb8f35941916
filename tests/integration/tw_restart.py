#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Restart safety of the appliance's iLink 3 session (issue 16, item 4).

  tw_restart.py --build DIR --source DIR --cme-data DIR [--seed N] [--kills K]

tickwire replays the synthetic capture (a few hundred orders per pass, then
it stays up) with an iLink 3 session to tickwire-ilink-sim --strict on an
ephemeral 127.0.0.1 port. Once the simulator has applied some orders of a
run, tickwire gets SIGKILL, at K (default 6) seeded moments: a number of
orders, then a random delay of up to 3 ms that lands before, inside or after
the journal's save of the next order; the second kill comes while the
restarted session's RetransmitRequest is still unanswered. tickwire is
started again on the same session journal against the same simulator, and
the last run stops with SIGTERM. Before each restart the test reads the
journal's next inbound SeqNum and tells the simulator ("owed-from"), which
then expects the restarted session to ask for everything from there.

The simulator confirms (its audit, exit status 3 under --strict otherwise):
inbound SeqNums form one unbroken sequence across the restarts (none skipped,
none received twice outside a NotApplied fill), no ClOrdID or OrderRequestID
applied twice, no RetransmitRequest rejected, and every owed range asked for.
The test checks the same from the event lines as well, and per restart: one
UUID (Establish, never Negotiate again), Establish.NextSeqNo equal to the
journal's next outbound SeqNum, a message in doubt resent after NotApplied
with its SeqNum and ClOrdID. A watchdog ends everything after WATCHDOG_S.
"""
import argparse
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
import tw_integration as twi  # noqa: E402 (after the line above on purpose)

WATCHDOG_S = 50
WAIT_S = 15           # each wait of the test (establish, orders, exit)
ORDERS_AFTER = 20     # orders of the last run before its SIGTERM
# in this run the simulator leaves RetransmitRequests unanswered, so its kill
# comes while the restarted session still waits for what it missed
OUTSTANDING_RUN = 1


class RestartSim(twi.Sim):
    """twi.Sim whose stdout is read as it comes (tickwire sends hundreds of
    orders; a pipe read only at the end would fill and stall the simulator)."""

    def __init__(self, ctx, *args):
        super().__init__(ctx, *args)
        self.lines = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            with self.cond:
                self.lines.append(line.rstrip('\n'))
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)  # EOF
            self.cond.notify_all()

    def wait(self, pattern, n=1, start=0, seconds=WAIT_S):
        """Wait until @p n lines from index @p start match @p pattern;
        @return the n-th match or None."""
        end = time.monotonic() + seconds
        with self.cond:
            while True:
                found = [m for m in (re.match(pattern, line) for line in self.lines[start:]
                                     if line is not None) if m]
                if len(found) >= n:
                    return found[n - 1]
                left = end - time.monotonic()
                if left <= 0 or (self.lines and self.lines[-1] is None):
                    return None
                self.cond.wait(left)

    def mark(self):
        with self.cond:
            return len(self.lines)

    def control(self, command):
        start = self.mark()
        self.p.stdin.write(command + '\n')
        self.p.stdin.flush()
        if self.wait(r'ok ' + re.escape(command) + '$', start=start) is None:
            twi.fail('simulator did not accept "%s"' % command)

    def events(self):
        self.stop()
        self.reader.join(timeout=10)
        self.p.stdout.close()
        self.p.stderr.close()
        with self.cond:
            return '\n'.join(line for line in self.lines if line is not None) + '\n'


def journal(path):
    """The fields of struct il3_journal_record (lib/ilink3/ilink3.h) after the
    file's 8-byte magic: uuid, last_uuid, next_out_seq, next_in_seq,
    next_clordid, pending_seq."""
    with open(path, 'rb') as f:
        data = f.read(48)
    if data[:8] != b'I3JRNAL1':
        twi.fail('%s: not a session journal (magic %r)' % (path, data[:8]))
    uuid, _, next_out, next_in, next_clordid, pending = struct.unpack_from('<QQIIQI', data, 8)
    return {'uuid': uuid, 'next_out': next_out, 'next_in': next_in,
            'next_clordid': next_clordid, 'pending': pending}


class Appliance:
    """One tickwire run of the profile, under its own --file-prefix."""

    def __init__(self, ctx, prof, run):
        self.prefix = 'tw-restart-%d-%d' % (os.getpid(), run)
        self.p = subprocess.Popen(
            [ctx.tickwire, '--file-prefix', self.prefix, '--',
             '--ports', os.path.join(prof, 'ports.ini'),
             '--config', os.path.join(prof, 'tickwire.cfg'), '--print-books', '0'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def kill9(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.communicate(timeout=WAIT_S)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            out, err = self.p.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.p.kill()
            twi.fail('tickwire: no exit within %d s of SIGTERM' % WAIT_S)
        if self.p.returncode != 0 or '== counters' not in out:
            print(out, err)
            twi.fail('tickwire exited %d' % self.p.returncode)
        return twi.counters(out)

    def dump(self):
        """SIGTERM; print what it printed (the counters say why it stalled)."""
        self.p.send_signal(signal.SIGTERM)
        try:
            out, err = self.p.communicate(timeout=WAIT_S)
            print('tickwire exited %d' % self.p.returncode)
            print(out[-6000:], err[-3000:])
        except subprocess.TimeoutExpired:
            print('tickwire: no exit within %d s of SIGTERM' % WAIT_S)

    def cleanup(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        # a SIGKILLed EAL leaves its runtime directory behind
        shutil.rmtree(os.path.dirname(twi.telemetry_path(self.prefix)), ignore_errors=True)


def watchdog(procs):
    print('FAIL: watchdog: the test ran %d s' % WATCHDOG_S)
    for p in procs:
        if p.poll() is None:
            p.kill()
    sys.stdout.flush()
    os._exit(1)


def app_lines(events):
    """(seq, template, clordid, request, fill) of every applied message."""
    return [(int(m[0]), int(m[1]), m[2], int(m[3]), int(m[4])) for m in re.findall(
        r'^app seq=(\d+) template=(\d+) clordid=(\S*) request=(\d+) fill=(\d)$',
        events, re.M)]


def check_restart(ctx, seed, kills):
    rng = random.Random(seed)
    # kill k after this many orders of its run: early, then spread to late
    targets = [rng.randint(1, 3)] + sorted(rng.randint(5, 40) for _ in range(kills - 1))
    delays_us = [rng.choice([0, rng.randint(0, 3000)]) for _ in range(kills)]
    print('seed %d (--seed to repeat): kills after %s orders of their run, then %s us' %
          (seed, targets, delays_us))

    sim = RestartSim(ctx, '--fill-max', '10', '--strict')
    procs = [sim.p]
    dog = threading.Timer(WATCHDOG_S, watchdog, [procs])
    dog.daemon = True
    dog.start()
    path = os.path.join(ctx.tmp, 'restart.journal')
    runs = []
    restarts = []
    final = None
    try:
        # one pass of the synthetic capture (a few hundred orders), then the
        # appliance stays up (stop_idle_ms 0); both feeds fit in the hand-off
        # and the mbufs, so no loss halts the strategy (infinite_rx would
        # flood the decode mailbox with the repeats of the loop)
        prof = ctx.profile('restart', synthetic=True,
                           cfg=sim.session_cfg(ctx, 'restart') + [
                               r'(capture_to_decode = \{[^}]*?capacity = )\d+=>\g<1>65536',
                               r'max_orders = \d+;=>max_orders = 100000;',
                               r'max_open_orders = \d+;=>max_open_orders = 1000;',
                               r'max_position = \d+;=>max_position = 1000000;',
                               r'max_messages_per_second = \d+;=>'
                               r'max_messages_per_second = 100000;',
                               r'stop_idle_ms = \d+;=>stop_idle_ms = 0;'],
                           ini=[r'^mbufs = \d+$=>mbufs = 65535'])
        for run in range(kills + 1):
            start = sim.mark()
            before = journal(path) if run > 0 else None
            if before is not None:
                sim.control('owed-from %d' % before['next_in'])
            if run == OUTSTANDING_RUN:
                sim.control('ignore-rr on')
            tw = Appliance(ctx, prof, run)
            runs.append(tw)
            procs.append(tw.p)
            est = sim.wait(r'establish (?:ok uuid=(\d+) next_in=(\d+) next_out=(\d+) '
                           r'client_next=(\d+) |reject .*)', start=start)
            if est is None or est.group(1) is None:
                print('\n'.join(line for line in sim.lines[start:] if line))
                tw.dump()
                twi.fail('run %d: %s' % (run, est.group(0) if est else
                                         'no Establish within %d s' % WAIT_S))
            if before is not None:
                restarts.append((before, [int(x) for x in est.groups()], start))
            if run == OUTSTANDING_RUN and sim.wait(r'retransmit-request-ignored ',
                                                   start=start) is None:
                twi.fail('run %d: the restarted session asked for no retransmission' % run)
            want = targets[run] if run < kills else ORDERS_AFTER
            if sim.wait(r'app seq=\d+ template=514 ', n=want, start=start) is None:
                print('\n'.join(line for line in sim.lines[start:] if line)[-3000:])
                tw.dump()
                twi.fail('run %d: the simulator saw fewer than %d orders in %d s' %
                         (run, want, WAIT_S))
            if run == kills:
                final = tw.stop()
                break
            time.sleep(delays_us[run] / 1e6)
            tw.kill9()
            if sim.wait(r'disconnect ', start=start) is None:
                twi.fail('run %d: the simulator saw no disconnect after SIGKILL' % run)
            if run == OUTSTANDING_RUN:
                sim.control('ignore-rr off')
            print('kill %d: after %d+ orders of the run, journal %s' %
                  (run + 1, want, journal(path)))
    finally:
        for tw in runs:
            tw.cleanup()
        if final is None:  # failed: the simulator goes too
            sim.p.kill()
    events = sim.events()
    dog.cancel()

    problems = []
    apps = app_lines(events)
    seqs = sorted(a[0] for a in apps)
    if not seqs or seqs != list(range(1, len(seqs) + 1)):
        missing = sorted(set(range(1, max(seqs, default=0) + 1)) - set(seqs))
        repeated = sorted({s for s in seqs if seqs.count(s) > 1})
        problems.append('inbound SeqNums not 1..%d once each: missing %s, repeated %s' %
                        (len(seqs), missing[:10], repeated[:10]))
    clordids = [a[2] for a in apps if a[1] == 514]
    if len(set(clordids)) != len(clordids):
        problems.append('a ClOrdID applied twice')
    requests = [a[3] for a in apps]
    if len(set(requests)) != len(requests):
        problems.append('an OrderRequestID applied twice')
    for what in ('duplicate', 'gap-skipped', 'gap-abandoned', 'retransmit-reject',
                 'establish reject', 'violation'):
        n = len(re.findall(r'^%s\b' % what, events, re.M))
        if n:
            problems.append('%d "%s" lines' % (n, what))
    if len(re.findall(r'^negotiate ok ', events, re.M)) != 1:
        problems.append('negotiated more than once: the restarts did not keep the UUID')

    resent = 0
    for i, (before, (uuid, sim_in, sim_out, client_next), start) in enumerate(restarts):
        tag = 'restart %d' % (i + 1)
        if uuid != before['uuid']:
            problems.append('%s: UUID %d, journal %d' % (tag, uuid, before['uuid']))
        if client_next != before['next_out']:
            problems.append('%s: Establish.NextSeqNo %d, journal next_out %d' %
                            (tag, client_next, before['next_out']))
        if sim_in == client_next - 1:
            # the last journaled message never arrived: NotApplied, resent as is
            doubt = before['pending']
            line = sim.wait(r'app seq=%d template=\d+ clordid=\S* request=\d+ fill=1$' %
                            doubt, start=start, seconds=0)
            if doubt != sim_in or line is None:
                problems.append('%s: SeqNum %d in doubt not resent (journal pending %d)' %
                                (tag, sim_in, doubt))
            resent += 1
        elif sim_in != client_next:
            problems.append('%s: simulator expected %d, Establish said %d' %
                            (tag, sim_in, client_next))
        if i + 1 != OUTSTANDING_RUN and before['next_in'] < sim_out and sim.wait(
                r'retransmission from=%d count=%d$' % (before['next_in'],
                                                       sim_out - before['next_in']),
                start=start, seconds=0) is None:
            problems.append('%s: [%d, %d) not asked for again' %
                            (tag, before['next_in'], sim_out))

    audit = re.findall(r'^audit uuid=\d+ establishes=(\d+) .* violations=(\d+)$', events, re.M)
    summary = re.search(r'^audit-summary sessions=(\d+) violations=(\d+) untracked=(\d+)$',
                        events, re.M)
    if summary is None or len(audit) != 1:
        problems.append('no audit of exactly one session from the simulator')
    elif int(audit[0][0]) != kills + 1 or summary.group(2) != '0' or summary.group(3) != '0':
        problems.append('simulator audit: %s' % summary.group(0))
    if sim.p.returncode != 0:
        problems.append('simulator --strict exited %d' % sim.p.returncode)
    if int(final.get('session.established', 0)) != 1 or int(final.get('order.sent', 0)) == 0:
        problems.append('last run: session.established %s, order.sent %s' %
                        (final.get('session.established'), final.get('order.sent')))
    if problems:
        print(events[-4000:])
        for p in problems:
            print('FAIL: ' + p)
        sys.exit(1)
    print('\n'.join(re.findall(r'^audit.*$', events, re.M)))
    print('ok: %d kill -9 + restarts, %d inbound SeqNums once each, %d orders, none twice; '
          '%d in doubt resent after NotApplied; every owed range retransmitted' %
          (kills, len(seqs), len(clordids), resent))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--cme-data', required=True)
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--kills', type=int, default=6)
    a = ap.parse_args()
    a.test = 'restart'
    seed = a.seed if a.seed is not None else int(time.time() * 1000) % 1000000
    check_restart(twi.Ctx(a), seed, max(3, a.kills))


if __name__ == '__main__':
    main()
