#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the session result (tickwire-replay --result) and tickwire-backtest.

  tw_backtest_test.py --build DIR --source DIR --cme-data DIR TEST

Tests (suite `backtest`):
  result-determinism  a session replayed twice, and from another directory,
                      gives byte-identical result JSON; its content checked
                      against the replay's printed counters and orders pcap;
                      the backtest's report.json does not depend on -j or the
                      order of the sessions
  merge               the gather on hand-made results: histograms added
                      exactly, percentiles from the summed buckets
  retry-local         a session failing its first attempt is resubmitted
                      once and named; one failing every time is reported
  slurm               a one-node Slurm cluster this test starts and stops
                      (munged, slurmctld, slurmd on localhost, as root; exit
                      77 when not root): the local and Slurm back ends give
                      byte-identical report.json over 10 sessions (6
                      tickwire-synth seeds, 4 real CME captures); on Slurm a
                      task failing once is resubmitted and named, one
                      failing twice is reported by name
Not a test:
  bench [--sessions N] [--events E] [--default-scheduler] [--json FILE]
                      sessions per minute, local and Slurm back ends over the
                      same sessions, and the scheduler's overhead per task
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import tempfile
import time

CME_CAPTURES = [
    'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.classic-nsec.pcap',
    'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.6/Cme.Mdp3.Sbe.v6.1.pcap',
    'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.8/Cme.Mdp3.Sbe.v8.1.Example.pcap',
    'pcap/omi-data-packets/Cme/Mdp3.Sbe.v1.9/Cme.Mdp3.Sbe.v9.1.Example.pcap',
]
SEEDS = (1, 2, 3, 4, 5, 6)
SKIP = 77


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


class Ctx:
    def __init__(self, a):
        self.build = os.path.abspath(a.build)
        self.source = os.path.abspath(a.source)
        self.cme_data = os.path.abspath(a.cme_data)
        self.replay = os.path.join(self.build, 'app/replay/tickwire-replay')
        self.synth_exe = os.path.join(self.build, 'app/synth/tickwire-synth')
        self.backtest = os.path.join(self.source, 'app/backtest/tickwire-backtest')
        self.profile = os.path.join(self.source, 'dpdk-config/demo')
        # under the build directory: the Slurm daemons' files and the shared
        # filesystem of the one-node cluster
        base = os.path.join(self.build, 'tests', 'backtest')
        os.makedirs(base, exist_ok=True)
        self.tmp = tempfile.mkdtemp(prefix='bt-%s-' % a.test, dir=base)

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def synth(self, name, seed, events=2000):
        """A session directory: tickwire-synth feeds A, B and snapshots."""
        d = self.path('sessions', name)
        os.makedirs(d, exist_ok=True)
        subprocess.run([self.synth_exe, '--out-a', os.path.join(d, 'a.pcap'),
                        '--out-b', os.path.join(d, 'b.pcap'),
                        '--snapshot', os.path.join(d, 's.pcap'),
                        '--seed', str(seed), '--events', str(events)],
                       check=True, capture_output=True)
        return d

    def cme(self):
        paths = [os.path.join(self.cme_data, c) for c in CME_CAPTURES]
        missing = [p for p in paths if not os.path.isfile(p)]
        if missing:
            fail('CME capture %s missing; hint: meson configure -Dcme_data=DIR' % missing[0])
        return paths

    def sessions(self, seeds=SEEDS, events=2000):
        """The test's sessions: synthetic session directories and real captures."""
        return [self.synth('seed-%d' % s, s, events) for s in seeds] + self.cme()

    def run_replay(self, result, captures, *extra):
        cmd = [self.replay, '--ports', os.path.join(self.profile, 'ports.ini'),
               '--config', os.path.join(self.profile, 'tickwire.cfg'), '--print-books', '0',
               '--result', result] + list(extra) + list(captures)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            fail('%s: exit %d: %s' % (' '.join(cmd), p.returncode, p.stderr))
        return p.stdout

    def run_backtest(self, out, sessions, *extra, expect=0, env=None, cluster=None,
                     deadline=150):
        """tickwire-backtest run; past @deadline seconds it is killed and the
        test fails with the cluster's view (a hang says why, not only
        meson's TIMEOUT)."""
        cmd = [sys.executable, self.backtest, 'run', '--profile', self.profile,
               '--replay', self.replay, '--out', out] + list(extra) + list(sessions)
        start = time.monotonic()
        # its own process group: on the deadline its sbatch --wait goes too
        # (killing tickwire-backtest alone left sbatch polling forever)
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
        try:
            out, err = p.communicate(timeout=deadline)
        except subprocess.TimeoutExpired:
            why = cluster.diagnose() if cluster else ''
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            fail('%s: not done after %d s%s\nits stderr: %s' %
                 (' '.join(cmd), deadline, why, err[-2000:]))
        p = subprocess.CompletedProcess(cmd, p.returncode, out, err)
        seconds = time.monotonic() - start
        if p.returncode != expect:
            fail('%s: exit %d (want %d): %s%s' % (' '.join(cmd), p.returncode, expect,
                                                  p.stdout, p.stderr))
        return p, seconds


def read(path, mode='r'):
    with open(path, mode) as f:
        return f.read()


def counters_of(stdout):
    """name -> value of the replay's '== counters' block ("name value" lines)."""
    out, block = {}, False
    for line in stdout.splitlines():
        if line.startswith('== '):
            block = line == '== counters'
            continue
        parts = line.split(' ')
        if block and len(parts) == 2:
            out[parts[0]] = int(parts[1]) if re.fullmatch(r'-?\d+', parts[1]) else parts[1]
    return out


# -- (a) --------------------------------------------------------------------------

def test_result_determinism(ctx):
    sessions = ctx.sessions(seeds=(7,), events=3000)
    synth_dir, real = sessions[0], sessions[1]
    synth_caps = [os.path.join(synth_dir, f) for f in ('a.pcap', 'b.pcap', 's.pcap')]
    for name, caps in (('seed-7', synth_caps), ('real', [real])):
        r1, r2 = ctx.path(name + '-1.json'), ctx.path(name + '-2.json')
        out1 = ctx.run_replay(r1, caps, '--session', name)
        ctx.run_replay(r2, caps, '--session', name, '--orders-out', ctx.path(name + '.o.pcap'))
        check(read(r1, 'rb') == read(r2, 'rb'), '%s: two replays, different JSON (%s, %s)' %
              (name, r1, r2))
        # the same captures elsewhere: files are named by basename and hash
        moved = ctx.path('moved-' + name)
        os.makedirs(moved)
        caps2 = [shutil.copy(c, moved) for c in caps]
        r3 = ctx.path(name + '-3.json')
        ctx.run_replay(r3, caps2, '--session', name)
        check(read(r1, 'rb') == read(r3, 'rb'), '%s: the captures moved, different JSON' % name)
        res = json.loads(read(r1))
        check(res['schema'] == 'tickwire-session-result/1', 'schema %r' % res['schema'])
        check(res['session'] == name, 'session %r' % res['session'])
        check(res['counters'] == counters_of(out1),
              '%s: counters differ from the printed ones' % name)
        check(len(res['orders']) == res['counters']['chain.orders_written'],
              '%s: %d orders in the result, chain.orders_written %d' %
              (name, len(res['orders']), res['counters']['chain.orders_written']))
        check(len(res['orders']) > 0, '%s: no orders: the test needs some' % name)
        ids = [o['client_order_id'] for o in res['orders']]
        check(ids == sorted(ids), '%s: orders out of order %s' % (name, ids))
        for c, path in zip(res['inputs']['captures'], caps):
            want = hashlib.sha256(read(path, 'rb')).hexdigest()
            check(c['sha256'] == want and c['bytes'] == os.path.getsize(path),
                  '%s: %s: sha256/bytes %s/%d, want %s/%d' % (name, path, c['sha256'],
                                                            c['bytes'], want,
                                                            os.path.getsize(path)))
        check(sum(c['frames'] for c in res['inputs']['captures']) == res['replay']['frames'],
              '%s: capture frames do not add up to the replay\'s' % name)
        check(res['fills'] == [] and res['positions'] == {}, 'fills/positions not empty')
        for h in ('order_to_ack_ns', 'order_to_fill_ns'):
            check(res['latency'][h] == [0] * 64, 'latency.%s not 64 zero counts' % h)
        text = read(r1)
        check(re.search(r'\d\.\d|[eE][+-]\d', re.sub(r'"[^"]*"', '""', text)) is None,
              '%s: a float in the result' % name)
    # default session name: the first input's basename
    r4 = ctx.path('default-name.json')
    ctx.run_replay(r4, [real])
    check(json.loads(read(r4))['session'] == os.path.basename(real), 'default session name')
    check(os.path.isfile(r4 + '.orders.pcap'), 'no default orders file beside the result')

    # the report: the same whatever -j and the order of the sessions
    all_sessions = sessions + [ctx.synth('seed-8', 8)]
    ctx.run_backtest(ctx.path('bt1'), all_sessions, '-j', '1')
    ctx.run_backtest(ctx.path('bt2'), list(reversed(all_sessions)), '-j', '2')
    ctx.run_backtest(ctx.path('bt3'), [ctx.path('sessions')] + sessions[1:], '-j', '2')
    a = read(ctx.path('bt1', 'report.json'), 'rb')
    check(a == read(ctx.path('bt2', 'report.json'), 'rb'),
          'report.json depends on -j or the order of the sessions')
    check(a == read(ctx.path('bt3', 'report.json'), 'rb'),
          'report.json differs given a directory of sessions')
    print('result-determinism: 2 sessions x 3 replays identical; report.json identical '
          'over -j 1/2, reversed order and a directory of sessions')


# -- (d) ----------------------------------------------------------------------------

def hand_result(name, ack, fill, positions=None):
    return {
        'schema': 'tickwire-session-result/1', 'session': name,
        'inputs': {'captures': [{'file': name + '.pcap', 'bytes': 1, 'frames': 1,
                                 'complete': True, 'sha256': '0' * 64}],
                   'ports': {'file': 'ports.ini', 'bytes': 1, 'sha256': '1' * 64},
                   'config': {'file': 'tickwire.cfg', 'bytes': 1, 'sha256': '2' * 64}},
        'replay': {'frames': 1, 'passed': 1, 'filtered': 0},
        'counters': {'book.hash': '0x0'}, 'diagnostics': [], 'orders': [], 'cancels': [],
        'fills': [], 'positions': positions or {},
        'latency': {'unit': 'ns', 'buckets': 64, 'order_to_ack_ns': ack,
                    'order_to_fill_ns': fill},
    }


def hist(**buckets):
    h = [0] * 64
    for k, v in buckets.items():
        h[int(k[1:])] = v
    return h


def test_merge(ctx):
    # session x: 90 samples in bucket 10 ([1024, 2048) ns), 9 in 20, 1 in 30;
    # session y: 10 in bucket 0, 890 in 12. Summed: b0 10, b10 90, b12 890,
    # b20 9, b30 1 (N = 1000). Ranks ceil(q N): p50 500 -> b12; p90 900 -> b12;
    # p99 990 -> b12 (cum 990); p99.9 999 -> b20 (cum 999); max 1000 -> b30.
    # Averaging the sessions' own p50s (b10 and b12) would give neither.
    x = hand_result('x', hist(b10=90, b20=9, b30=1), hist(b5=3),
                    {'7': {'position': 2, 'realised': -50, 'unrealised': 20}})
    y = hand_result('y', hist(b0=10, b12=890), hist(b5=4, b63=1),
                    {'7': {'position': -1, 'realised': 100, 'unrealised': 0},
                     '9': {'position': 1, 'realised': 0, 'unrealised': -5}})
    paths = []
    for r in (x, y):
        p = ctx.path(r['session'] + '.json')
        with open(p, 'w') as f:
            json.dump(r, f)
        paths.append(p)
    for order in (paths, list(reversed(paths))):
        out = ctx.path('merge-%s' % os.path.basename(order[0]))
        p = subprocess.run([sys.executable, ctx.backtest, 'merge', '--out', out] + order,
                           capture_output=True, text=True)
        check(p.returncode == 0, 'merge: exit %d: %s' % (p.returncode, p.stderr))
    rep = json.loads(read(ctx.path('merge-x.json', 'report.json')))
    check(read(ctx.path('merge-x.json', 'report.json')) ==
          read(ctx.path('merge-y.json', 'report.json')), 'merge depends on the order')
    ack = rep['latency']['order_to_ack_ns']
    check(ack['counts'] == hist(b0=10, b10=90, b12=890, b20=9, b30=1),
          'summed counts %s' % ack['counts'])
    check(ack['samples'] == 1000, 'samples %d' % ack['samples'])
    want = {'p50': 12, 'p90': 12, 'p99': 12, 'p99.9': 20, 'max': 30}
    got = {k: v['bucket'] for k, v in ack['percentiles'].items()}
    check(got == want, 'percentile buckets %s, want %s' % (got, want))
    check(ack['percentiles']['p50'] == {'bucket': 12, 'lo_ns': 4096, 'hi_ns': 8192},
          'p50 bounds %s' % ack['percentiles']['p50'])
    fill = rep['latency']['order_to_fill_ns']
    check(fill['counts'] == hist(b5=7, b63=1), 'fill counts %s' % fill['counts'])
    check(fill['percentiles']['p50']['bucket'] == 5 and
          fill['percentiles']['max'] == {'bucket': 63, 'lo_ns': 1 << 63, 'hi_ns': 1 << 64},
          'fill percentiles %s' % fill['percentiles'])
    t = rep['totals']
    check((t['realised'], t['unrealised'], t['pnl']) == (50, 15, 65),
          'pnl totals %s' % t)
    check(t['positions'] == {'7': {'position': 1, 'realised': 50, 'unrealised': 20},
                             '9': {'position': 1, 'realised': 0, 'unrealised': -5}},
          'positions %s' % t['positions'])
    check([s['pnl'] for s in rep['sessions']] == [-30, 95], 'session pnl')
    # bucket 0 holds 0 ns too: its bounds
    check(rep['latency']['order_to_ack_ns']['percentiles']['p50']['lo_ns'] == 4096, 'lo')
    # an empty histogram has no percentiles
    z = hand_result('z', [0] * 64, [0] * 64)
    pz = ctx.path('z.json')
    with open(pz, 'w') as f:
        json.dump(z, f)
    subprocess.run([sys.executable, ctx.backtest, 'merge', '--out', ctx.path('mz'), pz],
                   check=True, capture_output=True)
    rz = json.loads(read(ctx.path('mz', 'report.json')))
    check(all(v is None for v in rz['latency']['order_to_ack_ns']['percentiles'].values()),
          'empty histogram: percentiles not null')
    # a malformed histogram is refused
    bad = hand_result('bad', [0] * 63, [0] * 64)
    pb = ctx.path('bad.json')
    with open(pb, 'w') as f:
        json.dump(bad, f)
    p = subprocess.run([sys.executable, ctx.backtest, 'merge', '--out', ctx.path('mb'), pb],
                       capture_output=True, text=True)
    check(p.returncode == 2 and 'latency.order_to_ack_ns' in p.stderr,
          'a 63-bucket histogram accepted: %s' % p.stderr)
    print('merge: counts summed exactly, percentiles from the summed buckets, PnL and '
          'positions added, order-independent')


# -- (c) and (b) --------------------------------------------------------------------

def corrupt_capture(ctx):
    """A capture cut inside a record: tickwire-replay exits 1 every time."""
    src = ctx.cme()[0]
    dst = ctx.path('broken', 'cut-short.pcap')
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    data = read(src, 'rb')
    with open(dst, 'wb') as f:
        f.write(data[:len(data) // 2 + 7])
    return dst


def check_retry(ctx, out, flaky, broken):
    """flaky failed once and was resubmitted; broken failed twice."""
    run = json.loads(read(os.path.join(out, 'run.json')))
    check(run['resubmitted'] == sorted([flaky, broken]),
          'resubmitted %s, want %s' % (run['resubmitted'], sorted([flaky, broken])))
    check(run['failed'] == [broken], 'failed %s, want [%s]' % (run['failed'], broken))
    st1 = json.loads(read(os.path.join(out, 'sessions', flaky, 'status-1.json')))
    st2 = json.loads(read(os.path.join(out, 'sessions', flaky, 'status-2.json')))
    check(st1['exit'] == 75 and st2['exit'] == 0,
          '%s: attempts exit %s then %s' % (flaky, st1['exit'], st2['exit']))
    check(not os.path.exists(os.path.join(out, 'sessions', flaky, 'status-3.json')),
          'a third attempt')
    txt = read(os.path.join(out, 'report.txt'))
    check('resubmitted %s' % flaky in txt, 'report.txt does not name %s' % flaky)
    check('FAILED %s' % broken in txt, 'report.txt does not name the failed %s' % broken)
    rep = json.loads(read(os.path.join(out, 'report.json')))
    check(rep['failed'] == [{'name': broken, 'exit': 1}], 'report failed %s' % rep['failed'])
    check(flaky in [s['name'] for s in rep['sessions']], '%s not in the report' % flaky)


def test_retry_local(ctx):
    sessions = [ctx.synth('seed-%d' % s, s) for s in (1, 2, 3)]
    clean, _ = ctx.run_backtest(ctx.path('clean'), sessions)
    ctx.run_backtest(ctx.path('flaky'), sessions, '--fail-once', 'seed-2')
    check(read(ctx.path('clean', 'report.json'), 'rb') ==
          read(ctx.path('flaky', 'report.json'), 'rb'),
          'a resubmitted session changes report.json')
    run = json.loads(read(ctx.path('flaky', 'run.json')))
    check(run['resubmitted'] == ['seed-2'] and run['failed'] == [],
          'run.json %s' % run)
    broken = corrupt_capture(ctx)
    p, _ = ctx.run_backtest(ctx.path('both'), sessions + [broken], '--fail-once', 'seed-1',
                            expect=1)
    check('session cut-short failed twice' in p.stderr, 'stderr does not name cut-short: %s' %
          p.stderr)
    check_retry(ctx, ctx.path('both'), 'seed-1', 'cut-short')
    print('retry-local: seed-2 failed once, resubmitted, report.json unchanged; cut-short '
          'failed twice and is named')


class SlurmCluster:
    """munged, slurmctld and slurmd on localhost, as root, with their own
    key, socket, ports, state and spool under @base; stopped by stop()."""

    def __init__(self, base, tuned=True):
        self.base = base
        # the sockets (munged's, slurmstepd's in SlurmdSpoolDir, named
        # NODE_JOBID.STEPID) live in a short directory of their own: under
        # a deep build tree slurmstepd's name passed the 108 bytes of a Unix
        # socket path once job ids had two digits, the task was requeued
        # and held, and sbatch --wait never returned (a CI run)
        self.short = None
        # tuned: sbatch --wait polls every 2 s (its sleep grows while below
        # MinJobAge / 2, up to 32 s: 2+8+32 s with the default 300) and the
        # scheduler starts the next tasks as soon as others end (default
        # batch_sched_delay: 3 s)
        self.tuned = tuned
        self.procs = []
        self.conf = os.path.join(base, 'slurm.conf')
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    @staticmethod
    def free_ports(n):
        socks, ports = [], []
        for _ in range(n):
            s = socket.socket()
            s.bind(('127.0.0.1', 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
        for s in socks:
            s.close()
        return ports

    def start(self):
        for prog in ('munged', 'mungekey', 'slurmctld', 'slurmd', 'sbatch', 'sinfo'):
            if shutil.which(prog) is None and not os.path.exists('/usr/sbin/' + prog):
                fail('%s not installed; hint: apt-get install munge slurmctld slurmd '
                     'slurm-client (listed in .ci/packages)' % prog)
        b = self.base
        for d in ('munge', 'state'):
            os.makedirs(os.path.join(b, d), mode=0o700, exist_ok=True)
        os.chmod(b, 0o755)
        self.short = tempfile.mkdtemp(prefix='twbt.', dir='/tmp')
        os.chmod(self.short, 0o755)
        spool = os.path.join(self.short, 'spool')
        os.makedirs(spool, mode=0o700)
        # slurmstepd's socket: SPOOL/localhost_JOBID.4294967291 (step id
        # up to 10 digits), job ids up to 7 digits here
        if len(spool) + len('/localhost_1234567.4294967291') >= 108:
            fail('%s: too long for slurmstepd\'s Unix sockets (108 bytes)' % spool)
        key = os.path.join(b, 'munge', 'munge.key')
        subprocess.run(['mungekey', '--create', '--keyfile=' + key, '--force'], check=True,
                       capture_output=True)
        os.chmod(key, 0o600)
        self.sock = os.path.join(self.short, 'munge.sock')
        self.spawn(['munged', '--foreground', '--force', '--socket=' + self.sock,
                    '--key-file=' + key, '--pid-file=' + os.path.join(b, 'munge', 'pid'),
                    '--log-file=' + os.path.join(b, 'munge', 'log'),
                    '--seed-file=' + os.path.join(b, 'munge', 'seed')], 'munged')
        self.wait_for(lambda: os.path.exists(self.sock), 10, 'munged socket')
        ctld, slurmd = self.free_ports(2)
        name = 'twbt%d' % os.getpid()
        with open(self.conf, 'w') as f:
            f.write('\n'.join([
                'ClusterName=' + name,
                'SlurmctldHost=localhost',
                'SlurmctldPort=%d' % ctld,
                'SlurmdPort=%d' % slurmd,
                'SlurmUser=root',
                'SlurmdUser=root',
                'AuthType=auth/munge',
                'CredType=cred/munge',
                'AuthInfo=socket=' + self.sock,
                'StateSaveLocation=' + os.path.join(b, 'state'),
                'SlurmdSpoolDir=' + spool,
                'SlurmctldPidFile=' + os.path.join(b, 'slurmctld.pid'),
                'SlurmdPidFile=' + os.path.join(b, 'slurmd.pid'),
                'SlurmctldLogFile=' + os.path.join(b, 'slurmctld.log'),
                'SlurmdLogFile=' + os.path.join(b, 'slurmd.log'),
                'ProctrackType=proctrack/linuxproc',
                'TaskPlugin=task/none',
                'JobAcctGatherType=jobacct_gather/none',
                'AccountingStorageType=accounting_storage/none',
                'JobCompType=jobcomp/none',
                'SelectType=select/cons_tres',
                'SelectTypeParameters=CR_CPU',
                'SchedulerType=sched/backfill',
                'MpiDefault=none',
                'ReturnToService=2',
                'SlurmdParameters=config_overrides',
                'MinJobAge=%d' % (4 if self.tuned else 300),
                'SchedulerParameters=batch_sched_delay=0' if self.tuned else '',
                'KillWait=5',
                'NodeName=localhost CPUs=2 State=UNKNOWN',
                'PartitionName=backtest Nodes=localhost Default=YES MaxTime=INFINITE State=UP',
                '']))
        self.spawn(['slurmctld', '-D', '-i', '-f', self.conf], 'slurmctld')
        self.spawn(['slurmd', '-D', '-N', 'localhost', '-f', self.conf], 'slurmd')
        self.wait_for(self.node_idle, 60, 'node localhost idle')
        return self

    def spawn(self, cmd, name):
        log = open(os.path.join(self.base, name + '.out'), 'w')
        self.procs.append((name, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                                  env=self.env, start_new_session=True)))

    def node_idle(self):
        for name, p in self.procs:
            if p.poll() is not None:
                fail('%s exited %d; see %s' % (name, p.returncode,
                                               os.path.join(self.base, name + '.out')))
        p = subprocess.run(['sinfo', '-h', '-N', '-o', '%T'], capture_output=True, text=True,
                           env=self.env)
        return p.returncode == 0 and p.stdout.strip() == 'idle'

    def wait_for(self, cond, seconds, what):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.2)
        fail('%s: not after %d s; logs in %s' % (what, seconds, self.base))

    def diagnose(self):
        """What the cluster says of its node and jobs, and its logs' tails."""
        out = []
        for cmd in (['sinfo', '-N', '-l'], ['squeue', '-a', '-l'],
                    ['scontrol', 'show', 'node', 'localhost']):
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, env=self.env,
                                   timeout=20)
                out.append('$ %s\n%s%s' % (' '.join(cmd), p.stdout, p.stderr))
            except (OSError, subprocess.TimeoutExpired) as e:
                out.append('$ %s: %s' % (' '.join(cmd), e))
        for name in ('slurmctld.log', 'slurmd.log'):
            try:
                lines = read(os.path.join(self.base, name)).splitlines()[-25:]
            except OSError as e:
                lines = [str(e)]
            out.append('-- %s (last lines)\n%s' % (name, '\n'.join(lines)))
        return '\n' + '\n'.join(out)

    def stop(self):
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []
        if self.short is not None:
            shutil.rmtree(self.short, ignore_errors=True)
            self.short = None


def slurm_cluster(ctx, tuned=True):
    if os.geteuid() != 0:
        print('slurm: not root: the one-node cluster needs root (skip)')
        sys.exit(SKIP)
    cluster = SlurmCluster(ctx.path('cluster'), tuned)
    try:
        return cluster.start()
    except BaseException:  # fail() exits: stop what started, remove the sockets
        cluster.stop()
        raise


def test_slurm(ctx):
    sessions = ctx.sessions()
    cluster = slurm_cluster(ctx)
    try:
        env = cluster.env
        ctx.run_backtest(ctx.path('local'), sessions, '-j', '2')
        ctx.run_backtest(ctx.path('slurm'), sessions, '--backend', 'slurm',
                         '--partition', 'backtest',
                         '--sbatch-arg=--comment=tickwire-backtest-test', env=env,
                         cluster=cluster)
        local = read(ctx.path('local', 'report.json'), 'rb')
        check(local == read(ctx.path('slurm', 'report.json'), 'rb'),
              'local and Slurm report.json differ (%s, %s)' %
              (ctx.path('local', 'report.json'), ctx.path('slurm', 'report.json')))
        rep = json.loads(local)
        check(len(rep['sessions']) >= 8 and rep['totals']['sessions_failed'] == 0,
              '%d sessions, %d failed' % (len(rep['sessions']),
                                          rep['totals']['sessions_failed']))
        hosts = {json.loads(read(ctx.path('slurm', 'sessions', s['name'], 'status-1.json'))
                            )['host'] for s in rep['sessions']}
        run = json.loads(read(ctx.path('slurm', 'run.json')))
        check(run['backend'] == 'slurm' and len(run['submissions']) == 1 and
              run['submissions'][0]['job'].isdigit(), 'run.json %s' % run)
        job = run['submissions'][0]['job']
        # a task failing once is resubmitted, one failing twice is named
        broken = corrupt_capture(ctx)
        p, _ = ctx.run_backtest(ctx.path('slurm-retry'), sessions + [broken], '--backend',
                                'slurm', '--fail-once', 'seed-3', expect=1, env=env,
                                cluster=cluster)
        check('session seed-3 failed (attempt 1, exit 75); resubmitting it once' in p.stderr,
              'stderr does not name seed-3: %s' % p.stderr)
        check_retry(ctx, ctx.path('slurm-retry'), 'seed-3', 'cut-short')
        run = json.loads(read(ctx.path('slurm-retry', 'run.json')))
        check(len(run['submissions']) == 2 and run['submissions'][1]['tasks'] == 2,
              'resubmission: %s' % run['submissions'])
        retry = json.loads(read(ctx.path('slurm-retry', 'report.json')))
        check(retry['sessions'] == rep['sessions'],
              'the sessions that ran differ from the clean run')
        # a submission Slurm refuses is an error, with sbatch's reason
        p, _ = ctx.run_backtest(ctx.path('slurm-refused'), sessions[:1], '--backend', 'slurm',
                                '--partition', 'nosuch', expect=2, env=env,
                                cluster=cluster)
        check('sbatch refused the job array' in p.stderr and 'nosuch' in p.stderr,
              'refused submission: %s' % p.stderr)
        # a held task never starts by itself: cancelled past --held-grace,
        # resubmitted once, named when held again (sbatch --hold holds both)
        p, _ = ctx.run_backtest(ctx.path('slurm-held'), sessions[:2], '--backend', 'slurm',
                                '--sbatch-arg=--hold', '--held-grace', '2', expect=1,
                                env=env, cluster=cluster, deadline=120)
        held = json.loads(read(ctx.path('slurm-held', 'report.json')))
        names = sorted(f['name'] for f in held['failed'])
        run = json.loads(read(ctx.path('slurm-held', 'run.json')))
        check(len(names) == 2 and held['totals']['sessions_ok'] == 0, 'held: %s' % held)
        check('held by Slurm (JobHeldUser)' in p.stderr and
              p.stderr.count('failed twice (held by Slurm and cancelled)') == 2,
              'held tasks not reported: %s' % p.stderr)
        check(len(run['submissions']) == 2 and
              all(sorted(s.get('held_cancelled', [])) == names for s in run['submissions'])
              and run['held'] == {n: [1, 2] for n in names} and sorted(run['failed']) == names,
              'held: run.json %s' % run)
        # --max-wait bounds a submission whatever its tasks wait for
        p, _ = ctx.run_backtest(ctx.path('slurm-max-wait'), sessions[:1], '--backend', 'slurm',
                                '--sbatch-arg=--hold', '--held-grace', '1000',
                                '--max-wait', '3', expect=1, env=env, cluster=cluster,
                                deadline=120)
        run = json.loads(read(ctx.path('slurm-max-wait', 'run.json')))
        check(p.stderr.count('not done after --max-wait 3 s; cancelled') == 2 and
              all(s.get('max_wait_cancelled') for s in run['submissions']) and
              len(run['failed']) == 1, 'max-wait: %s %s' % (p.stderr, run))
    finally:
        cluster.stop()
    print('slurm: %d sessions, local and Slurm report.json identical (array job %s on %s); '
          'seed-3 resubmitted once, cut-short failed twice and named; held tasks cancelled '
          'after --held-grace and named; --max-wait cancelled a submission' %
          (len(rep['sessions']), job, ', '.join(sorted(hosts))))


# -- benchmark ---------------------------------------------------------------------

def bench(ctx, n_sessions, events, tuned, json_out):
    """The same sessions through both back ends, -j 2 and a 2-cpu node: wall
    time of `tickwire-backtest run` (submission, tasks, waiting, gather)."""
    if os.geteuid() != 0:
        print('bench: not root: no Slurm cluster')
        sys.exit(SKIP)
    cme = ctx.cme()
    sessions = [cme[i] if i < len(cme) else ctx.synth('seed-%d' % (i + 1), i + 1, events)
                for i in range(n_sessions)]
    cluster = slurm_cluster(ctx, tuned)
    rows = []
    try:
        for backend in ('local', 'slurm'):
            out = ctx.path('bench-' + backend)
            load = os.getloadavg()
            _, seconds = ctx.run_backtest(out, sessions, '--backend', backend, '-j', '2',
                                          env=cluster.env)
            report = read(os.path.join(out, 'report.json'), 'rb')
            task_ms = sorted(json.loads(read(os.path.join(out, 'sessions', s['name'],
                                                          'status-1.json')))['seconds_milli']
                             for s in json.loads(report)['sessions'])
            rows.append({'backend': backend, 'sessions': len(sessions),
                         'wall_ms': int(seconds * 1000),
                         'sessions_per_minute': int(len(sessions) * 60 / seconds),
                         'task_ms_median': task_ms[len(task_ms) // 2],
                         'loadavg_at_start': ['%.2f' % x for x in load],
                         'report_sha256': hashlib.sha256(report).hexdigest()})
    finally:
        cluster.stop()
    local, slurm = rows
    overhead_ms = (slurm['wall_ms'] - local['wall_ms']) // len(sessions)
    result = {'cpus': os.cpu_count(), 'events_per_synth_session': events,
              'scheduler': 'tuned (MinJobAge=4, batch_sched_delay=0)' if tuned else
              'Debian defaults (MinJobAge=300, batch_sched_delay=3)',
              'rows': rows, 'slurm_overhead_ms_per_task': overhead_ms,
              'reports_identical': local['report_sha256'] == slurm['report_sha256'],
              'loadavg_at_end': ['%.2f' % x for x in os.getloadavg()]}
    print('scheduler: %s' % result['scheduler'])
    print('%-7s %8s %9s %12s %14s  %s' % ('backend', 'sessions', 'wall_s', 'sessions/min',
                                          'task_median_ms', 'loadavg 1/5/15 at start'))
    for r in rows:
        print('%-7s %8d %9.2f %12d %14d  %s' % (
            r['backend'], r['sessions'], r['wall_ms'] / 1000.0, r['sessions_per_minute'],
            r['task_ms_median'], ' '.join(r['loadavg_at_start'])))
    print('slurm overhead per task: %d ms ((slurm wall - local wall) / sessions); '
          'report.json identical: %s; loadavg at end %s' %
          (overhead_ms, result['reports_identical'], ' '.join(result['loadavg_at_end'])))
    if json_out:
        with open(json_out, 'w') as f:
            json.dump(result, f, indent=1)
            f.write('\n')
        print('wrote ' + json_out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--source', required=True)
    ap.add_argument('--cme-data', required=True)
    ap.add_argument('--keep', action='store_true', help='keep the temporary directory')
    ap.add_argument('--sessions', type=int, default=16, help='bench: sessions')
    ap.add_argument('--events', type=int, default=20000, help='bench: events per synth session')
    ap.add_argument('--json', help='bench: write the figures here')
    ap.add_argument('--default-scheduler', action='store_true',
                    help="bench: Debian's scheduler defaults, not the tuned ones")
    ap.add_argument('test', choices=('result-determinism', 'merge', 'retry-local', 'slurm',
                                     'bench'))
    a = ap.parse_args()
    if a.test in ('slurm', 'bench') and os.geteuid() != 0:
        print('%s: not root: the one-node Slurm cluster needs root (skip)' % a.test)
        return SKIP
    ctx = Ctx(a)
    ok = False
    try:
        if a.test == 'result-determinism':
            test_result_determinism(ctx)
        elif a.test == 'merge':
            test_merge(ctx)
        elif a.test == 'retry-local':
            test_retry_local(ctx)
        elif a.test == 'slurm':
            test_slurm(ctx)
        else:
            bench(ctx, a.sessions, a.events, not a.default_scheduler, a.json)
        ok = True
    except Failure as e:
        print('FAIL %s: %s' % (a.test, e), file=sys.stderr)
    finally:
        if ok and not a.keep:
            shutil.rmtree(ctx.tmp, ignore_errors=True)
        elif not ok:
            print('kept ' + ctx.tmp, file=sys.stderr)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
