#!/usr/bin/python3
"""The health gate (ansible/roles/tickwire_service/files/tickwire-health)
against a stand-in systemctl and a stand-in DPDK telemetry socket:
  - the unit failed (systemd's start limit hit): refused at once, not after
    --timeout, and the verdict says why;
  - the unit still activating: refused when --timeout runs out;
  - active, no telemetry socket: refused, the socket named;
  - active, counters that grow: passed;
  - active, a counter that goes backwards: refused.
  check-health-gate.py SOURCE_ROOT"""
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time

GATE = os.path.join(sys.argv[1], "ansible/roles/tickwire_service/files/tickwire-health")
failures = []


def check(what, ok, detail=""):
    print("%s: %s%s" % ("ok" if ok else "FAIL", what, (" (%s)" % detail) if detail else ""))
    if not ok:
        failures.append(what)


def fake_systemctl(bindir, active, sub, result):
    path = os.path.join(bindir, "systemctl")
    with open(path, "w", encoding="ascii") as f:
        f.write("#!/bin/sh\nprintf 'ActiveState=%s\\nSubState=%s\\nNRestarts=5\\nResult=%s\\n'\n"
                % (active, sub, result))
    os.chmod(path, stat.S_IRWXU)


def telemetry_server(path, samples):
    """DPDK telemetry v2 as the gate reads it: a greeting, then one reply a connection."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(8)

    def serve():
        for sample in samples:
            conn, _ = srv.accept()
            with conn:
                conn.send(json.dumps({"version": "test", "pid": 1, "max_output_len": 16384}).encode())
                conn.recv(1024)
                conn.send(json.dumps({"/tickwire/stats": sample}).encode())
        srv.close()
    threading.Thread(target=serve, daemon=True).start()


def gate(tmp, *extra, timeout=30):
    env = dict(os.environ, PATH=os.path.join(tmp, "bin") + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    t = time.monotonic()
    res = subprocess.run([GATE, "--file-prefix", "tw", "--runtime-dir", tmp, "--interval", "0.2",
                          "--moving", "capture_a_rx", *extra],
                         capture_output=True, text=True, env=env, timeout=timeout, check=False)
    verdict = json.loads(res.stdout.strip().splitlines()[-1]) if res.stdout.strip() else {}
    return res.returncode, verdict, time.monotonic() - t


def main():
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "bin"))
        os.makedirs(os.path.join(tmp, "tw"))

        fake_systemctl(os.path.join(tmp, "bin"), "failed", "failed", "start-limit-hit")
        rc, v, took = gate(tmp, "--timeout", "20")
        check("failed unit refused at once", rc == 1 and took < 10, "rc %d, %.1f s" % (rc, took))
        check("the verdict says the unit failed",
              "failed, no restart pending" in v.get("reason", "") and
              "start-limit-hit" in v.get("reason", ""), v.get("reason"))

        fake_systemctl(os.path.join(tmp, "bin"), "activating", "auto-restart", "exit-code")
        rc, v, took = gate(tmp, "--timeout", "1")
        check("activating unit refused when the timeout runs out", rc == 1 and took >= 1,
              "rc %d, %.1f s" % (rc, took))
        check("the verdict says not active", "not active" in v.get("reason", ""), v.get("reason"))

        fake_systemctl(os.path.join(tmp, "bin"), "active", "running", "success")
        rc, v, took = gate(tmp, "--timeout", "1")
        check("no telemetry socket: refused", rc == 1 and "telemetry" in v.get("reason", ""),
              v.get("reason"))

        sock = os.path.join(tmp, "tw", "dpdk_telemetry.v2")
        telemetry_server(sock, [{"capture_a_rx": 10}, {"capture_a_rx": 25}])
        rc, v, took = gate(tmp, "--timeout", "10")
        check("growing counters: passed", rc == 0 and v.get("healthy") is True and v.get("grew") == 15,
              json.dumps(v))

        os.unlink(sock)
        telemetry_server(sock, [{"capture_a_rx": 10 + i, "gaps": 100 - i} for i in range(40)])
        rc, v, took = gate(tmp, "--timeout", "1")
        check("a counter going backwards: refused",
              rc == 1 and "backwards" in v.get("reason", ""), v.get("reason"))
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
