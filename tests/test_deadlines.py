"""Per-call deadlines on the fast path (etclient::Method::set_deadline, robot_node
--deadline-us): a call longer than its deadline is counted by the client, flagged by
the daemon in its answer when the daemon's part alone took longer, and counted per
method on the daemon's metrics page (et_serverd_deadline_misses_total), read with the
real Prometheus parser. The deadlines are chosen so that no timing decides the
outcome: 1 us for a MobileNetV2 call (milliseconds of compute), 60 s for another."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import tempfile
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from conftest import DEADLINE_S, MODELS, accepts, built_tool, wait_until

MODEL = "mobilenet_v2_xnnpack"
# A program a client sends is known to the daemon by its hash (docs/operations.md, metrics).
LABEL = "sha256:" + hashlib.sha256((MODELS / f"{MODEL}.pte").read_bytes()).hexdigest()[:12]


def deadline_misses(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=DEADLINE_S) as r:
        text = r.read().decode()
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "et_serverd_deadline_misses_total":
                found[(s.labels["model"], s.labels["method"], s.labels["transport"])] = s.value
    return found


def robot_node(sock: Path, deadline_us: int, calls: int) -> dict:
    done = subprocess.run([built_tool("robot_node", "client/cpp"), MODELS / f"{MODEL}.pte",
                           "--socket", sock, "--hz", "0", "--seconds", "0", "--warmup", str(calls - 1),
                           "--deadline-us", str(deadline_us)],
                          capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_calls_longer_than_their_deadline_are_counted_by_client_and_daemon():
    with tempfile.TemporaryDirectory(prefix="et-deadline-") as tmp:
        sock, log_path = Path(tmp) / "s.sock", Path(tmp) / "daemon.log"
        with open(log_path, "w+") as log:
            proc = subprocess.Popen([built_tool("et-serverd", "server"), "--socket", sock,
                                     "--metrics", "127.0.0.1:0"], stdout=log, stderr=subprocess.STDOUT)
            try:
                found = wait_until(lambda: accepts(sock) and re.search(r"metrics on .*\(port (\d+)\)",
                                                                       log_path.read_text()),
                                   lambda: f"et-serverd to listen: {log_path.read_text()}", running=[proc])
                port = int(found.group(1))
                assert deadline_misses(port) == {}

                # One timed call (robot_node times the calls after its warm-up) with a
                # deadline no MobileNetV2 call can meet.
                tight = robot_node(sock, deadline_us=1, calls=1)
                assert tight["transport"] == "fast", tight
                assert tight["calls"] == 1, tight
                assert tight["deadline_misses"] == 1, tight
                assert tight["deadline_misses_in_daemon"] == 1, tight
                assert deadline_misses(port) == {(LABEL, "forward", "fast_path"): 1.0}

                # A deadline every call meets: nothing more is counted.
                loose = robot_node(sock, deadline_us=60_000_000, calls=1)
                assert loose["deadline_misses"] == 0, loose
                assert deadline_misses(port) == {(LABEL, "forward", "fast_path"): 1.0}
            finally:
                proc.send_signal(signal.SIGTERM)
                assert proc.wait(timeout=DEADLINE_S) == 0
