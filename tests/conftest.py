"""Shared helpers for the end-to-end tests: where the build and the fixtures are."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
BUILD = Path(os.environ.get("ET_BUILD_DIR", ROOT / "build"))


def data_args(entry: dict) -> list[str]:
    """`--data FILE.ptd` for a fixture whose weights are in an external data file."""
    return ["--data", str(MODELS / entry["ptd"])] if "ptd" in entry else []


def data_path(entry: dict):
    """The fixture's external data file (.ptd), or None."""
    return MODELS / entry["ptd"] if "ptd" in entry else None


def manifest() -> dict:
    return json.loads((MODELS / "manifest.json").read_text())


@contextlib.contextmanager
def running_daemon(*args: str):
    """An et-serverd from the build on a private socket; stopped with SIGTERM after."""
    serverd = built_tool("et-serverd", "server")
    with tempfile.TemporaryDirectory(prefix="et-py-") as tmp:
        sock = Path(tmp) / "s.sock"
        log = open(Path(tmp) / "daemon.log", "w+")
        proc = subprocess.Popen([serverd, "--socket", sock, "--log-level", "warn", *args],
                                stdout=log, stderr=subprocess.STDOUT)
        for _ in range(600):
            if sock.exists():
                break
            assert proc.poll() is None, "et-serverd exited at start"
            time.sleep(0.05)
        try:
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
