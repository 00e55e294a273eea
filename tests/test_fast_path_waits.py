"""How the fast path waits on a busy machine (docs/fast_path.md, "Waiting"): with more
runnable threads than CPUs, the daemon's channel threads stop polling for requests and
sleep on the doorbell, as its metrics page counts. The burners are real CPU-bound
processes at the test's own priority; nothing here measures time."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

import etclient
from conftest import DEADLINE_S, MODELS, accepts, built_tool, wait_until


@contextlib.contextmanager
def daemon_with_metrics():
    serverd = built_tool("et-serverd", "server")
    with tempfile.TemporaryDirectory(prefix="et-waits-") as tmp:
        sock, log_path = Path(tmp) / "s.sock", Path(tmp) / "daemon.log"
        with open(log_path, "w+") as log:
            proc = subprocess.Popen([serverd, "--socket", sock, "--log-level", "info",
                                     "--metrics", "127.0.0.1:0"], stdout=log, stderr=subprocess.STDOUT)
            try:
                found = wait_until(lambda: accepts(sock) and re.search(r"metrics on .*\(port (\d+)\)",
                                                                       log_path.read_text()),
                                   lambda: f"et-serverd to listen: {log_path.read_text()}", running=[proc])
                yield sock, int(found.group(1))
            finally:
                proc.send_signal(signal.SIGTERM)
                assert proc.wait(timeout=60) == 0


def counters(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=DEADLINE_S) as r:
        text = r.read().decode()
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.startswith("et_serverd_fast_path_"):
                found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


@contextlib.contextmanager
def burners():
    """One CPU-bound process per CPU this test may use, plus one: more runnable threads
    than CPUs however the calls below are scheduled."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(len(os.sched_getaffinity(0)) + 1)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_a_saturated_machine_makes_channel_threads_sleep_instead_of_polling():
    skipped = ("et_serverd_fast_path_spins_skipped_total", (("reason", "saturated"),))
    with daemon_with_metrics() as (sock, port):
        rt = etclient.Runtime(sock, transport="fast", spawn=False)
        method = rt.load_program(MODELS / "add.pte").load_method("forward")
        inputs = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]
        before = counters(port)
        assert skipped in before, sorted(before)
        with burners():
            def calls_see_saturation():
                for _ in range(20):
                    out = method.execute(inputs)
                    np.testing.assert_array_equal(np.asarray(out[0]), inputs[0] + inputs[1])
                return counters(port)[skipped] > before[skipped]

            wait_until(calls_see_saturation, "the daemon to see the machine saturated and skip polls")
        after = counters(port)
        waits = ("et_serverd_fast_path_waits_total", (("how", "slept"),))
        assert after[waits] > before.get(waits, 0)
