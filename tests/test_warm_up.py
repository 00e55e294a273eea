"""Warm-up (docs/operations.md, "Warm-up"): before the daemon says it is ready, every
method of every model of its repository has run once on zeros, so that no caller's
first call pays XNNPACK's graph compilation or the first touch of the weights;
`--warm-up off` skips it. Read from the daemon's own log, in the order it wrote it."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import etclient
from conftest import MODELS, accepts, built_tool, wait_until

SERVED = ["add", "mlp_xnnpack"]


def daemon_log(*args: str) -> str:
    """Starts a daemon on a repository of SERVED, waits until it is ready, makes one call,
    stops it; returns its log."""
    with tempfile.TemporaryDirectory(prefix="et-warm-") as tmp:
        repo, sock, log_path = Path(tmp) / "models", Path(tmp) / "s.sock", Path(tmp) / "log"
        repo.mkdir()
        for name in SERVED:
            shutil.copy(MODELS / f"{name}.pte", repo / f"{name}.pte")
        with open(log_path, "w+") as log:
            proc = subprocess.Popen([built_tool("et-serverd", "server"), "--socket", sock, "--models",
                                     repo, "--log-level", "info", *args],
                                    stdout=log, stderr=subprocess.STDOUT)
            try:
                wait_until(lambda: accepts(sock) and "ready (" in log_path.read_text(),
                           lambda: f"et-serverd to be ready: {log_path.read_text()}", running=[proc])
                rt = etclient.Runtime(sock, spawn=False)
                method = rt.load_program(MODELS / "add.pte").load_method("forward")
                x = np.ones((2, 3), np.float32)
                np.testing.assert_array_equal(np.asarray(method.execute([x, x])[0]), 2 * x)
            finally:
                proc.send_signal(signal.SIGTERM)
                assert proc.wait(timeout=60) == 0
        return log_path.read_text()


def test_every_repository_method_runs_once_before_the_daemon_is_ready():
    log = daemon_log()
    ready = log.index("ready (")
    for name in SERVED:
        found = re.search(rf"model {name}: method forward warmed up \(\d+\.\d ms on zeros\)", log)
        assert found, log
        assert found.start() < ready, f"model {name} warmed up after the daemon was ready:\n{log}"


def test_warm_up_off_runs_nothing_before_ready():
    log = daemon_log("--warm-up", "off")
    assert "warmed up" not in log, log


def test_warm_up_takes_on_or_off():
    done = subprocess.run([built_tool("et-serverd", "server"), "--warm-up", "maybe"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "--warm-up: give on or off" in done.stdout + done.stderr
