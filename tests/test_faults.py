"""Faults under load: the daemon killed with SIGKILL while clients call. Either the
operator starts it again on the same socket (clients that never start a daemon
themselves), or the clients start one as they do by default. Every client must get
clear errors only (naming the restart or the daemon's absence), keep running, and be
served by the new daemon."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from conftest import MODELS, accepts, built_tool, daemons_on, wait_until

# A client process: calls add, touching its READY file once it has been answered, until
# the test writes its STOP file ({"after": time, "calls": n}), then until it has been
# answered n times after that time (or a backstop passes); prints its calls and errors.
CLIENT = textwrap.dedent("""
    import json, os, sys, time
    import numpy as np
    import etclient
    sock, stop, transport, fresh, pte, ready = sys.argv[1:7]
    fresh = fresh == "1"
    a, b = np.ones((2, 3), "float32"), np.full((2, 3), 2, "float32")
    ok, errors = [], []
    runtime = method = told = None
    while told is None or (sum(t > told["after"] for t in ok) < told["calls"]
                           and time.time() < told["backstop"]):
        if told is None and os.path.exists(stop):
            told = dict(json.loads(open(stop).read()), backstop=time.time() + 120)
        try:
            if method is None or fresh:  # a fresh client opens a session every few calls
                runtime = etclient.Runtime(sock, transport=transport, reconnect_timeout=20)
                method = runtime.load_program(pte).load_method()
            for _ in range(5):
                out = method.execute([a, b])[0]
                assert float(np.asarray(out)[0, 0]) == 3.0
                ok.append(time.time())
            if not os.path.exists(ready):
                open(ready, "w").close()
        except Exception as e:
            errors.append([time.time(), f"{type(e).__name__}: {e}"])
            time.sleep(0.05)
    print(json.dumps({"ok": ok, "errors": errors}))
""")


def tell_clients_to_stop(stop: Path, after: float, calls: int) -> None:
    """CLIENT's stop file, written whole (a client may read it at any moment)."""
    Path(f"{stop}.tmp").write_text(json.dumps({"after": after, "calls": calls}))
    os.replace(f"{stop}.tmp", stop)


# What a client may be told while the daemon is gone or just restarted.
CLEAR = re.compile(r"restarted|no et-serverd answers|not answering|unavailable|connection|session|"
                   r"stopped|lost", re.IGNORECASE)


def start_daemon(sock: Path, log) -> subprocess.Popen:
    proc = subprocess.Popen([str(built_tool("et-serverd", "server")), "--socket", str(sock), "--log-level", "info"],
                            stdout=log, stderr=subprocess.STDOUT)
    wait_until(lambda: re.search(r"\bready \(\d+ models served", Path(log.name).read_text().split("SIGKILLED")[-1]),
               lambda: Path(log.name).read_text(), running=[proc])
    return proc


def start_clients(sock: Path, tmp: Path, kinds, env: dict) -> list[subprocess.Popen]:
    """CLIENT processes, one per (transport, fresh) in `kinds`, once each has been served."""
    clients = [subprocess.Popen([sys.executable, "-c", CLIENT, str(sock), str(tmp / "stop"), transport, fresh,
                                 str(MODELS / "add.pte"), str(tmp / f"ready-{i}")], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
               for i, (transport, fresh) in enumerate(kinds)]
    try:
        wait_until(lambda: all((tmp / f"ready-{i}").exists() for i in range(len(clients))),
                   "every client to be served once", running=clients)
    except AssertionError:
        for c in clients:
            c.kill()
        raise
    return clients


@pytest.mark.parametrize("restart", ["operator", "clients"])
def test_daemon_killed_under_load_every_client_recovers(restart):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETSERVER_")}
    # Clients that open a new session every few calls, and clients that keep one. With
    # no operator, only clients that keep theirs: the daemon must come back through
    # their reconnect, not through a new session's start.
    fresh_kinds = ("0", "1") if restart == "operator" else ("0", "0")
    if restart == "operator":
        env["ETSERVER_SPAWN"] = "0"  # only the operator's restart can serve them
    else:
        env.update(ETSERVER_BIN=str(built_tool("et-serverd", "server")), ETSERVER_IDLE_EXIT="3")
    with tempfile.TemporaryDirectory(prefix="et-faults-") as tmp:
        sock = Path(tmp) / "s.sock"
        log = open(Path(tmp) / "daemon.log", "w+")
        first = start_daemon(sock, log)
        second, clients = None, []
        try:
            clients = start_clients(sock, Path(tmp), [(transport, fresh) for transport in ("fast", "grpc")
                                                      for fresh in fresh_kinds for _ in range(2)], env)
            first.send_signal(signal.SIGKILL)
            first.wait()
            killed_at = time.time()
            log.write("\nSIGKILLED\n")
            log.flush()
            time.sleep(0.5)  # the clients find no daemon for a while
            if restart == "operator":
                second = start_daemon(sock, log)
            restarted_at = time.time()
            tell_clients_to_stop(Path(tmp) / "stop", after=restarted_at, calls=10)
            results = []
            for c in clients:
                out, err = c.communicate(timeout=300)
                assert c.returncode == 0, f"a client died: {err[-2000:]}"
                results.append(json.loads(out.strip().splitlines()[-1]))
        finally:
            for p in [first, *clients]:
                if p.poll() is None:
                    p.kill()
            if second is not None:
                second.send_signal(signal.SIGTERM)
                assert second.wait(timeout=60) == 0
            for pid in daemons_on(sock):  # the one the clients started
                os.kill(pid, signal.SIGTERM)
    if restart == "clients":  # SIGTERM: it finishes what runs and exits
        wait_until(lambda: not daemons_on(sock), "the daemon the clients started to stop")
    summary = [(len([t for t in r["ok"] if t > restarted_at]), [round(t - killed_at, 2) for t, _ in r["errors"]][:4])
               for r in results]
    for i, r in enumerate(results):
        before = [t for t in r["ok"] if t < killed_at]
        after = [t for t in r["ok"] if t > restarted_at]
        assert before, f"client {i} made no call before the kill"
        assert len(after) >= 10, f"client {i} was not served by the restarted daemon: {r['errors'][-3:]} {len(r['ok'])} ok, last at {max(r['ok']) - killed_at:.2f} s after the kill; all clients (calls after, error times): {summary}"
        unclear = [e for _, e in r["errors"] if not CLEAR.search(e)]
        assert not unclear, f"client {i} got errors that do not say what happened: {unclear[:3]}"
        late = [e for t, e in r["errors"] if t > after[0]]
        assert not late, f"client {i} failed again once the restarted daemon had served it: {late[:3]}"


HOG = textwrap.dedent("""
    import gc, json, sys
    import numpy as np
    import etclient
    runtime = etclient.Runtime(sys.argv[1], transport="fast")
    held, refused = [], None
    for _ in range(10):  # 64 MiB each, against a 200 MB limit
        try:
            held.append(runtime.empty([16, 1024, 1024], "float32"))
        except etclient.ResourceExhausted as e:
            refused = str(e)
            break
    del held  # letting go gives the session its memory back
    gc.collect()
    method = runtime.load_program(sys.argv[2]).load_method()
    a = np.ones((2, 3), "float32")
    still_runs = float(np.asarray(method.execute([a, a])[0])[0, 0]) == 2.0
    again = runtime.empty([16, 1024, 1024], "float32") is not None
    print(json.dumps({"refused": refused, "still_runs": still_runs, "again": again}))
""")


def test_a_session_at_its_segment_limit_harms_no_one_else():
    with tempfile.TemporaryDirectory(prefix="et-faults-") as tmp:
        sock = Path(tmp) / "s.sock"
        log = open(Path(tmp) / "daemon.log", "w+")
        daemon = subprocess.Popen([str(built_tool("et-serverd", "server")), "--socket", str(sock),
                                   "--max-segment-bytes", "200000000"], stdout=log, stderr=subprocess.STDOUT)
        others = []
        try:
            wait_until(lambda: accepts(sock), lambda: Path(log.name).read_text(), running=[daemon])
            env = dict(os.environ, ETSERVER_SPAWN="0")
            # The others call from before the hog starts until after it is done.
            others = start_clients(sock, Path(tmp), [("fast", "0"), ("grpc", "0")], env)
            hog = subprocess.run([sys.executable, "-c", HOG, str(sock), str(MODELS / "add.pte")], capture_output=True,
                                 text=True, env=env, timeout=300)
            assert hog.returncode == 0, hog.stderr[-2000:]
            r = json.loads(hog.stdout.strip().splitlines()[-1])
            tell_clients_to_stop(Path(tmp) / "stop", after=0, calls=101)
            results = [json.loads(o.communicate(timeout=300)[0].strip().splitlines()[-1]) for o in others]
        finally:
            for o in others:
                if o.poll() is None:
                    o.kill()
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=60) == 0
    assert r["refused"] and "segment limit" in r["refused"] and "--max-segment-bytes" in r["refused"], r
    assert r["still_runs"] and r["again"], r  # the session goes on, and gets memory back when it lets go
    for other in results:
        assert not other["errors"] and len(other["ok"]) > 100, other["errors"][:3]
