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
from conftest import MODELS, built_tool, wait_until
from test_faults import CLEAR, start_clients, tell_clients_to_stop

KEEPALIVE_MS, KEEPALIVE_TIMEOUT_MS = 1000, 6000

# Calls from several threads as fast as it can, saying "calling" once answered, until
# the stop file (test_faults.CLIENT's) says it has been answered enough; after SIGCONT
# it must be told clearly what happened and be served again.
VICTIM = textwrap.dedent("""
    import json, os, sys, threading, time
    import numpy as np
    import etclient
    sock, stop, transport, pte = sys.argv[1:5]
    runtime = etclient.Runtime(sock, transport=transport, reconnect_timeout=20)
    program = runtime.load_program(pte)
    ok, errors, done = [], [], threading.Event()
    def calls():
        method = program.new_method()  # one per thread
        a = np.ones((2, 3), "float32")
        while not done.is_set():
            try:
                assert float(np.asarray(method.execute([a, a])[0])[0, 0]) == 2.0
                ok.append(time.time())
            except Exception as e:
                errors.append([time.time(), f"{type(e).__name__}: {e}"])
                time.sleep(0.05)
    threads = [threading.Thread(target=calls) for _ in range(8)]
    for t in threads:
        t.start()
    backstop = time.time() + 120
    while not ok and time.time() < backstop:  # stopped in the middle of its calls, not before
        time.sleep(0.01)
    print("calling", flush=True)
    while not os.path.exists(stop):
        time.sleep(0.05)
    told, backstop = json.loads(open(stop).read()), time.time() + 120
    while sum(t > told["after"] for t in ok) < told["calls"] and time.time() < backstop:
        time.sleep(0.05)
    done.set()
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
    """et-serverd once it is ready (its log says so: a connection to see whether it
    accepts would be one more descriptor for a while, in counts of its descriptors)."""
    sock = tmp / "s.sock"
    log = open(tmp / "daemon.log", "w")
    proc = subprocess.Popen([str(built_tool("et-serverd", "server")), "--socket", str(sock),
                             "--keepalive-ms", str(KEEPALIVE_MS), "--keepalive-timeout-ms",
                             str(KEEPALIVE_TIMEOUT_MS), *args], stdout=log, stderr=subprocess.STDOUT)
    wait_until(lambda: "ready (" in (tmp / "daemon.log").read_text(),
               lambda: (tmp / "daemon.log").read_text(), running=[proc])
    return proc, sock


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
        victim, others = None, []
        try:
            stop = Path(tmp) / "stop"
            others = start_clients(sock, Path(tmp), [("fast", "0"), ("grpc", "0")], env)
            victim = subprocess.Popen([sys.executable, "-c", VICTIM, str(sock), str(stop), transport,
                                       str(MODELS / "add.pte")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=env)
            assert victim.stdout.readline().strip() == "calling", victim.stderr.read()[-2000:]
            # Opened only now: an idle client answers pings when its gRPC polls (every 5 s), 1 s
            # within the deadline; left idle while a busy machine starts the others, it could
            # lose its session too.
            observer = etclient.Runtime(str(sock), transport="grpc")
            assert sessions(observer) == 4  # every client calling: 1 observer, 2 others, the victim
            calling = []  # a few samples: threads come and go with the calls in flight
            for _ in range(10):
                calling.append(proc_stats(daemon.pid))
                time.sleep(0.1)
            before = dict(calling[-1], threads=max(s["threads"] for s in calling))
            victim.send_signal(signal.SIGSTOP)
            stopped_at = time.time()
            samples = []

            def reaped() -> bool:
                samples.append(proc_stats(daemon.pid))
                return sessions(observer) == 3

            wait_until(reaped, "the stopped client's session to be reaped", running=[daemon])
            reaped_at = time.time()
            # It sits there stopped as long as before, and until each other client has been
            # answered 100 times more (how many calls fit in a time is the machine's speed):
            # a client touches its READY file again after its next 5 calls once it is gone.
            ready = [Path(tmp) / f"ready-{i}" for i in range(len(others))]
            rounds = 0
            while time.time() < stopped_at + 10.0 or rounds < 22:  # 5 calls each from round 2 on
                for r in ready:
                    r.unlink()
                wait_until(lambda: all(r.exists() for r in ready),
                           "the other clients to be served while the victim is stopped", running=others)
                rounds += 1
                samples.append(proc_stats(daemon.pid))
            victim.send_signal(signal.SIGCONT)
            resumed_at = time.time()
            tell_clients_to_stop(stop, after=resumed_at, calls=11)
            out, err = victim.communicate(timeout=300)
            assert victim.returncode == 0, err[-2000:]
            v = json.loads(out.strip().splitlines()[-1])
            results = [json.loads(o.communicate(timeout=300)[0].strip().splitlines()[-1]) for o in others]
        finally:
            for p in [victim, *others]:
                if p is not None and p.poll() is None:
                    p.send_signal(signal.SIGCONT)
                    p.kill()
            stop_daemon(daemon)
    # How soon it was reaped is the machine's speed as much as the deadline's: printed only.
    print(f"{transport}: reaped after {reaped_at - stopped_at:.1f} s (keepalive + timeout "
          f"{(KEEPALIVE_MS + KEEPALIVE_TIMEOUT_MS) / 1000} s); daemon RSS {before['rss'] >> 20} MiB, at most "
          f"{max(s['rss'] for s in samples) >> 20} MiB while stopped; threads {before['threads']} -> "
          f"{max(s['threads'] for s in samples)}; victim: {len(v['errors'])} errors, first {v['errors'][:1]}")
    # Bounded: a stopped client costs no growth while it sits there.
    grew = max(s["rss"] for s in samples) - before["rss"]
    assert grew < 32 << 20, f"the daemon grew {grew >> 20} MiB for a stopped client"
    # Its threads are printed only: gRPC's and the thread pools' come and go by themselves.
    for other in results:
        assert not other["errors"], other["errors"][:3]
        during = [t for t in other["ok"] if stopped_at < t < resumed_at]
        # No one waits for the stopped client: served while it still held its session.
        held = [t for t in during if t < reaped_at]
        assert len(during) > 100 and len(held) > 10, f"{len(during)} calls, {len(held)} before the reaping"
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
        peers, other = [], None
        try:
            baseline = proc_stats(daemon.pid)
            (other,) = start_clients(sock, Path(tmp), [("grpc", "1")], env)
            for i in range(60):  # half say nothing at all, half speak HTTP/2 and never read
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(str(sock))
                if i % 2:
                    s.sendall(PREFACE)
                peers.append(s)

            def fds_when(enough):
                stats = proc_stats(daemon.pid)
                return stats if enough(stats["fds"]) else None

            held = wait_until(lambda: fds_when(lambda n: n >= baseline["fds"] + 60),
                              "the daemon to take the 60 peers")
            # Dropped on the keepalive deadline; how soon is the machine's speed as much.
            after = wait_until(lambda: fds_when(lambda n: n <= baseline["fds"] + 8),
                               lambda: f"the daemon to drop the stuck peers: {baseline} -> {proc_stats(daemon.pid)}")
            tell_clients_to_stop(Path(tmp) / "stop", after=0, calls=51)
            result = json.loads(other.communicate(timeout=300)[0].strip().splitlines()[-1])
        finally:
            for s in peers:
                s.close()
            if other is not None and other.poll() is None:
                other.kill()
            stop_daemon(daemon)
    print(f"descriptors: {baseline['fds']} before, {held['fds']} with 60 stuck peers, {after['fds']} after")
    assert held["fds"] >= baseline["fds"] + 60, (baseline, held)  # they were connected
    assert after["fds"] <= baseline["fds"] + 8, f"stuck peers still held: {baseline} -> {after}"
    assert not result["errors"] and len(result["ok"]) > 50, result["errors"][:3]
