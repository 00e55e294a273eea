"""The Python client rides out a daemon that comes back slowly, as under systemd's restart
on a busy machine: its socket file missing, then bound but not listening (a connect is
refused), then listening but not answering gRPC, then a daemon again. While its reconnect
deadline runs each of those is "not yet"; the call that finds the new daemon says the
method's state was lost (StateLost), and the next one is served. On both transports."""

from __future__ import annotations

import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import DEADLINE_S, MODELS, accepts, built_tool, wait_until

import etclient


class LateListener:
    """A socket at `path` bound now and listening only when told; once listening it
    takes each connection, reads what comes (a client's attempt) and hangs up."""

    def __init__(self, path: Path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.attempts = 0
        self._stop = threading.Event()
        self._thread = None

    def listen_without_answering(self):
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:  # the timeout: look at the stop flag again
                continue
            with conn:
                conn.settimeout(5)
                try:
                    if conn.recv(1):
                        self.attempts += 1
                except OSError:
                    pass

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sock.close()


def start_daemon(sock: Path, log) -> subprocess.Popen:
    proc = subprocess.Popen([str(built_tool("et-serverd", "server")), "--socket", str(sock),
                             "--log-level", "info"], stdout=log, stderr=subprocess.STDOUT)
    wait_until(lambda: accepts(sock), lambda: Path(log.name).read_text(), running=[proc])
    return proc


@pytest.mark.parametrize("transport", ["fast", "grpc"])
def test_a_call_waits_for_a_daemon_that_listens_late(transport, monkeypatch):
    # As a client would by default, it may start a daemon of its own when none answers
    # past a supervisor's grace; the one it finds cannot start (ETSERVER_BIN comes first),
    # so a failed start is "not yet" too, and the restart below finds its socket free.
    monkeypatch.setenv("ETSERVER_BIN", "/nonexistent/et-serverd")
    a, b = np.ones((2, 3), "float32"), np.full((2, 3), 2, "float32")
    with tempfile.TemporaryDirectory(prefix="et-reconnect-") as tmp:
        sock = Path(tmp) / "s.sock"
        log = open(Path(tmp) / "daemon.log", "w+")
        daemons = [start_daemon(sock, log)]
        try:
            runtime = etclient.Runtime(str(sock), transport=transport,
                                       reconnect_timeout=3 * DEADLINE_S, spawn=True)
            method = runtime.load_program(MODELS / "add.pte").load_method()
            assert float(np.asarray(method.execute([a, b])[0])[0, 0]) == 3.0
            daemons[0].send_signal(signal.SIGKILL)
            daemons[0].wait()
            sock.unlink()  # what a supervisor's cleanup does: no socket file for a while
            outcome = {}

            def call():
                try:
                    outcome["value"] = method.execute([a, b])
                except etclient.Error as e:
                    outcome["error"] = e

            caller = threading.Thread(target=call)
            caller.start()
            # The missing socket and the refusing one give the client nothing to count:
            # each lasts a few of its backoff periods, and the call must still be running
            # after them (a loaded machine only makes it try fewer times)...
            caller.join(timeout=1.0)
            assert caller.is_alive(), outcome
            late = LateListener(sock)  # bound, not listening: the kernel refuses
            try:
                caller.join(timeout=3.0)
                assert caller.is_alive(), outcome
                late.listen_without_answering()
                # ...then listening without answering until it has come back thrice.
                wait_until(lambda: late.attempts >= 3, "the client to keep trying a silent listener")
                assert caller.is_alive(), outcome
            finally:
                late.close()
                sock.unlink()
            daemons.append(start_daemon(sock, log))
            caller.join(timeout=3 * DEADLINE_S)
            assert not caller.is_alive(), "the call did not end once the daemon was back"
            assert isinstance(outcome.get("error"), etclient.StateLost), outcome
            assert float(np.asarray(method.execute([a, b])[0])[0, 0]) == 3.0
            del method, runtime
        finally:
            for d in daemons:
                if d.poll() is None:
                    d.send_signal(signal.SIGTERM)
                    d.wait(timeout=DEADLINE_S)
