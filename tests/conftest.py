"""Shared helpers for the end-to-end tests: where the build and the fixtures are, daemons
to run, and waits for a condition (never for a fixed time)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
BUILD = Path(os.environ.get("ET_BUILD_DIR", ROOT / "build"))
# How long a wait for a condition goes on before it fails: a backstop against a hang,
# never a measure of speed (a loaded machine may take many times longer than an idle one).
DEADLINE_S = 120.0


def wait_until(condition: Callable, what, *, running: Iterable[subprocess.Popen] = (),
               deadline_s: float = DEADLINE_S):
    """Polls `condition` until it returns something true, and returns that. Fails naming
    `what` (a string, or a callable that returns one: a log read at the time) once
    `deadline_s` has passed, or at once when a process in `running` has exited."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = condition()
        if value:
            return value
        exited = [p for p in running if p.poll() is not None]
        if exited or time.monotonic() > deadline:
            why = (f"exited ({exited[0].returncode}) first" if exited
                   else f"not after {deadline_s:g} s")
            raise AssertionError(f"waiting for {what() if callable(what) else what}: {why}")
        time.sleep(0.05)


def unix_connection(path: Path) -> socket.socket | None:
    """A connection to the Unix socket at `path`, or None while nothing accepts there (its
    file exists from bind(), before listen(): a connect then is refused)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
        return s
    except OSError:
        s.close()
        return None


def accepts(path: Path) -> bool:
    """Whether a server accepts connections on the Unix socket at `path`."""
    connection = unix_connection(path)
    if connection is None:
        return False
    connection.close()
    return True


def data_args(entry: dict) -> list[str]:
    """`--data FILE.ptd` for a fixture whose weights are in an external data file."""
    return ["--data", str(MODELS / entry["ptd"])] if "ptd" in entry else []


def data_path(entry: dict):
    """The fixture's external data file (.ptd), or None."""
    return MODELS / entry["ptd"] if "ptd" in entry else None


def manifest() -> dict:
    return json.loads((MODELS / "manifest.json").read_text())


@contextlib.contextmanager
def session_held(sock: Path):
    """Holds a session on the daemon that others start at `sock`, from the moment it
    accepts until the block ends: its --idle-exit cannot fall between two of the block's
    clients, however slowly a busy machine brings them. It may exit once the block ends."""
    import etclient

    done = threading.Event()

    def hold():
        while not done.wait(0.05):
            if accepts(sock):
                try:
                    runtime = etclient.Runtime(str(sock), spawn=False)
                except etclient.Error:  # it went away again: wait for the next one
                    continue
                done.wait()
                del runtime
                return

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        yield
    finally:
        done.set()
        holder.join()


@contextlib.contextmanager
def running_daemon(*args: str):
    """An et-serverd from the build on a private socket; stopped with SIGTERM after."""
    serverd = built_tool("et-serverd", "server")
    with tempfile.TemporaryDirectory(prefix="et-py-") as tmp:
        sock = Path(tmp) / "s.sock"
        log_path = Path(tmp) / "daemon.log"
        log = open(log_path, "w+")
        proc = subprocess.Popen([serverd, "--socket", sock, "--log-level", "warn", *args],
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until(lambda: accepts(sock), lambda: f"et-serverd to listen: {log_path.read_text()}",
                       running=[proc])
            yield sock
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
        assert code == 0, f"et-serverd did not exit cleanly on SIGTERM ({code})"
        assert not sock.exists(), "et-serverd left its socket behind"


@pytest.fixture(scope="module", params=["fast", "grpc"])
def transport(request):
    """Every test that talks to a daemon runs twice: on the fast path (shared-memory
    channels, the clients' default) and over gRPC alone. Clients read
    ETSERVER_TRANSPORT when they connect, in this process and in child processes."""
    saved = os.environ.get("ETSERVER_TRANSPORT")
    os.environ["ETSERVER_TRANSPORT"] = request.param
    yield request.param
    if saved is None:
        os.environ.pop("ETSERVER_TRANSPORT", None)
    else:
        os.environ["ETSERVER_TRANSPORT"] = saved


@pytest.fixture(scope="module")
def daemon_socket(transport):
    """A daemon shared by a test module (once per transport)."""
    with running_daemon() as sock:
        yield str(sock)


def daemons_on(sock: Path) -> list[int]:
    """Pids of et-serverd processes serving `sock` (from their command lines)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"et-serverd") and str(sock).encode() in argv:
            pids.append(int(entry.name))
    return pids


def built_tool(name: str, folder: str = "tools") -> Path:
    """A tool from the CMake build; a missing build is a failure, not a skip."""
    path = BUILD / folder / name
    if not path.exists():
        pytest.fail(f"{path} is missing: build first (scripts/build), or set ET_BUILD_DIR")
    return path


def as_comparable(array: np.ndarray, dtype_name: str) -> np.ndarray:
    """Values as float64 (bfloat16 bit patterns widened to the floats they encode)."""
    if dtype_name == "bfloat16":
        bits = np.asarray(array).reshape(-1).astype(np.uint32) << 16  # 1-d: 0-d arrays
        return bits.view(np.float32).astype(np.float64).reshape(np.shape(array))  # cannot .view
    if array.dtype == np.bool_:
        return array.astype(np.float64)
    return array.astype(np.float64)


def pytest_terminal_summary(terminalreporter):
    """How many fixture methods et-run matched, and how many it refused and why."""
    import sys

    for name, label in (("test_et_run", "et-run"), ("test_daemon_fixtures", "et-serverd"),
                        ("test_client_fixtures", "libetclient"),
                        ("test_py_fixtures", "etclient (Python)"),
                        ("test_torch_fixtures", "etclient (Python, torch)"),
                        ("test_kserve_grpc", "KServe v2 gRPC (tritonclient)"),
                        ("test_kserve_http", "KServe v2 HTTP (tritonclient)")):
        module = sys.modules.get(name)
        if module is not None and any(module.OUTCOMES.values()):
            counts = ", ".join(f"{n} {what}" for what, n in module.OUTCOMES.items())
            terminalreporter.write_line(f"{label} over the fixtures: {counts}")
