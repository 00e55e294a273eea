"""--vet end to end: a program a client sends that the daemon has not seen is tried
in the sandboxed child first (the log says so, with its time), once per content; the
operator's --models programs and a daemon run with --vet off are not."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import numpy as np
from conftest import MODELS, built_tool, wait_until


def run_daemon_and_load(*args: str, models: Path | None = None) -> str:
    """Starts et-serverd with `args`, loads add.pte twice from two clients, runs it;
    returns the daemon's log."""
    import etclient

    with tempfile.TemporaryDirectory(prefix="et-vet-") as tmp:
        sock = Path(tmp) / "s.sock"
        log_path = Path(tmp) / "daemon.log"
        extra = ["--models", str(models)] if models else []
        with open(log_path, "w") as log:
            daemon = subprocess.Popen([str(built_tool("et-serverd", "server")), "--socket", str(sock), "--log-level",
                                       "debug", *extra, *args], stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until(lambda: "ready (" in log_path.read_text(), lambda: log_path.read_text(),
                       running=[daemon])
            a = np.ones((2, 3), "float32")
            for _ in range(2):
                runtime = etclient.Runtime(str(sock), transport="grpc")
                method = runtime.load_program(str(MODELS / "add.pte")).load_method()
                assert float(np.asarray(method.execute([a, a])[0])[0, 0]) == 2.0
                del method, runtime
        finally:
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=60) == 0
        return log_path.read_text()


def test_a_new_program_from_a_client_is_vetted_once():
    log = run_daemon_and_load()
    vetted = re.findall(r"vetted program 7ab82ae2f65c in \d+ ms: sandbox: opening files refused; "
                        r"method forward: ran; done", log)
    assert len(vetted) == 1, log[-3000:]  # the second client's load found it loaded


def test_vet_off_and_the_operators_models_are_not_vetted():
    assert "vetted program" not in run_daemon_and_load("--vet", "off")
    with tempfile.TemporaryDirectory(prefix="et-vet-models-") as models:
        shutil.copy(MODELS / "add.pte", Path(models) / "add.pte")
        log = run_daemon_and_load(models=Path(models))
        assert "vetted program" not in log, log[-3000:]
