"""Clients that stop answering: a client stopped (SIGSTOP) in the middle of its calls,
whose answers it then never reads, and peers that connect and never speak, or speak
HTTP/2 and never read. The daemon must hold bounded memory for them, drop them on its
keepalive deadline (--keepalive-ms + --keepalive-timeout-ms), and keep serving every
other client as if nothing happened."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from conftest import MODELS, built_tool
from test_faults import CLEAR, CLIENT

KEEPALIVE_MS, KEEPALIVE_TIMEOUT_MS = 1000, 6000

# Calls from several threads as fast as it can until `until`; after SIGCONT it must
# be told clearly what happened and be served again.
VICTIM = textwrap.dedent("""
    import json, sys, threading, time
    import numpy as np
    import etclient
    sock, until, transport, pte = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
    runtime = etclient.Runtime(sock, transport=transport, reconnect_timeout=20)
    program = runtime.load_program(pte)
    ok, errors = [], []
    def calls():
        method = program.new_method()  # one per thread
        a = np.ones((2, 3), "float32")
        while time.time() < until:
            try:
                assert float(np.asarray(method.execute([a, a])[0])[0, 0]) == 2.0
                ok.append(time.time())
            except Exception as e:
                errors.append([time.time(), f"{type(e).__name__}: {e}"])
                time.sleep(0.05)
    threads = [threading.Thread(target=calls) for _ in range(8)]
    for t in threads:
        t.start()
    print("calling", flush=True)
    for t in threads:
        t.join()
    print(json.dumps({"ok": ok, "errors": errors}))
""")


def proc_stats(pid: int) -> dict:
    status = Path(f"/proc/{pid}/status").read_text()
    field = {line.split(":")[0]: line.split(":")[1].split() for line in status.splitlines()}
    return {"rss": int(field["VmRSS"][0]) * 1024, "threads": int(field["Threads"][0]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def start_daemon(tmp: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    sock = tmp / "s.sock"
    log = open(tmp / "daemon.log", "w")
    proc = subprocess.Popen([str(built_tool("et-serverd", "server")), "--socket", str(sock),
                             "--keepalive-ms", str(KEEPALIVE_MS), "--keepalive-timeout-ms",
                             str(KEEPALIVE_TIMEOUT_MS), *args], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        if sock.exists():
            return proc, sock
        assert proc.poll() is None, (tmp / "daemon.log").read_text()
        time.sleep(0.05)
    raise AssertionError("et-serverd did not start")


def stop_daemon(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


def sessions(observer) -> int:
    return int(observer.server_status()["sessions"])


@pytest.mark.parametrize("transport", ["fast", "grpc"])
def test_a_stopped_client_loses_its_session_on_the_deadline_and_no_one_else_waits(transport):
    import etclient

    env = dict(os.environ, ETSERVER_SPAWN="0")
    with tempfile.TemporaryDirectory(prefix="et-stuck-") as tmp:
        daemon, sock = start_daemon(Path(tmp))
        victim = others = None
        try:
            observer = etclient.Runtime(str(sock), transport="grpc")
            until = time.time() + 20.0
            others = [subprocess.Popen([sys.executable, "-c", CLIENT, str(sock), str(until), t, "0",
                                        str(MODELS / "add.pte")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, env=env) for t in ("fast", "grpc")]
            victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(sock), str(until), transport,
                                       str(MODELS / "add.pte")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=env)
            assert victim.stdout.readline().strip() == "calling", victim.stderr.read()[-2000:]
            time.sleep(1.0)  # every client calling: 1 observer, 2 others, the victim
            assert sessions(observer) == 4
            before = proc_stats(daemon.pid)
            victim.send_signal(signal.SIGSTOP)
            stopped_at = time.time()
            samples, reaped_after = [], None
            while time.time() < stopped_at + 10.0:
                samples.append(proc_stats(daemon.pid))
                if reaped_after is None and sessions(observer) == 3:
                    reaped_after = time.time() - stopped_at
                time.sleep(0.1)
            victim.send_signal(signal.SIGCONT)
            resumed_at = time.time()
            out, err = victim.communicate(timeout=60)
            assert victim.returncode == 0, err[-2000:]
            v = json.loads(out.strip().splitlines()[-1])
            results = [json.loads(o.communicate(timeout=60)[0].strip().splitlines()[-1]) for o in others]
        finally:
            for p in [victim, *(others or [])]:
                if p is not None and p.poll() is None:
                    p.send_signal(signal.SIGCONT)
                    p.kill()
            stop_daemon(daemon)
    deadline = (KEEPALIVE_MS + KEEPALIVE_TIMEOUT_MS) / 1000
    print(f"{transport}: reaped after {reaped_after} s; daemon RSS {before['rss'] >> 20} MiB, at most "
          f"{max(s['rss'] for s in samples) >> 20} MiB while stopped; threads {before['threads']} -> "
          f"{max(s['threads'] for s in samples)}; victim: {len(v['errors'])} errors, first {v['errors'][:1]}")
    assert reaped_after is not None, "the stopped client's session was never reaped"
    assert reaped_after <= deadline + 2.0, f"reaped after {reaped_after:.1f} s, past keepalive + timeout"
    # Bounded: a stopped client costs no growth while it sits there.
    grew = max(s["rss"] for s in samples) - before["rss"]
    assert grew < 32 << 20, f"the daemon grew {grew >> 20} MiB for a stopped client"
    assert max(s["threads"] for s in samples) <= before["threads"] + 4, (before, samples[-1])
    for other in results:
        assert not other["errors"], other["errors"][:3]
        during = [t for t in other["ok"] if stopped_at < t < resumed_at]
        gaps = [b - a for a, b in zip(during, during[1:])]
        assert len(during) > 100 and max(gaps) < 0.5, f"{len(during)} calls, longest gap {max(gaps or [0]):.2f} s"
    # Woken, the victim is told what happened and is served again.
    after = [t for t in v["ok"] if t > resumed_at]
    assert len(after) > 10, f"the resumed client was not served again: {v['errors'][-3:]}"
    unclear = [e for _, e in v["errors"] if not CLEAR.search(e)]
    assert not unclear, unclear[:3]
    assert "keepalive" in v["errors"][0][1], v["errors"][0]  # not "restarted": it did not


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # + empty SETTINGS


def test_peers_that_never_speak_or_never_read_are_dropped_and_others_are_served():
    env = dict(os.environ, ETSERVER_SPAWN="0")
    with tempfile.TemporaryDirectory(prefix="et-stuck-") as tmp:
        daemon, sock = start_daemon(Path(tmp))
        peers = []
        try:
            baseline = proc_stats(daemon.pid)
            until = time.time() + 12.0
            other = subprocess.Popen([sys.executable, "-c", CLIENT, str(sock), str(until), "grpc", "1",
                                      str(MODELS / "add.pte")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
            for i in range(60):  # half say nothing at all, half speak HTTP/2 and never read
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(str(sock))
                if i % 2:
                    s.sendall(PREFACE)
                peers.append(s)
            time.sleep(0.5)
            held = proc_stats(daemon.pid)
            time.sleep((KEEPALIVE_MS + KEEPALIVE_TIMEOUT_MS) / 1000 + 2.0)
            after = proc_stats(daemon.pid)
            result = json.loads(other.communicate(timeout=60)[0].strip().splitlines()[-1])
        finally:
            for s in peers:
                s.close()
            stop_daemon(daemon)
    print(f"descriptors: {baseline['fds']} before, {held['fds']} with 60 stuck peers, {after['fds']} after")
    assert held["fds"] >= baseline["fds"] + 60, (baseline, held)  # they were connected
    assert after["fds"] <= baseline["fds"] + 8, f"stuck peers still held: {baseline} -> {after}"
    assert not result["errors"] and len(result["ok"]) > 50, result["errors"][:3]
