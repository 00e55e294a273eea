"""The metrics page (--metrics) read as Prometheus reads it, with the prometheus-client
package's parser, while the daemon serves calls over each transport; the log level
changed at run time; JSON log lines."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from prometheus_client.parser import text_string_to_metric_families
from tritonclient.utils import InferenceServerException

import etclient
from conftest import DEADLINE_S, MODELS, built_tool, wait_until
from kserve_support import kserve_daemon


def port_of(log: Path, what: str) -> int:
    return int(re.search(rf"{what} .*\(port (\d+)\)", log.read_text()).group(1))


def scrape(port: int) -> dict:
    """{(sample name, frozen labels): value} of the whole page."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=DEADLINE_S) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def calls(samples, model, transport, code="OK", method="forward"):
    return value(samples, "et_serverd_calls_total", model=model, method=method,
                 transport=transport, code=code)


def count(samples, family, model, transport, method="forward"):
    return value(samples, f"{family}_count", model=model, method=method, transport=transport)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    repo = tmp_path_factory.mktemp("models")
    for name in ("add", "mlp_xnnpack"):
        (repo / f"{name}.pte").write_bytes((MODELS / f"{name}.pte").read_bytes())
    with kserve_daemon("--metrics", "127.0.0.1:0", models=repo, control=()) as (url, log, http):
        yield {"kserve": url, "log": log, "metrics": port_of(log, "metrics on"),
               "socket": str(log.parent / "s.sock")}


def add_inputs():
    return [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]


@pytest.mark.parametrize("transport", ["grpc", "fast"])
def test_calls_of_the_daemons_protocol_are_counted(daemon, transport):
    before = scrape(daemon["metrics"])
    rt = etclient.Runtime(daemon["socket"], transport=transport, spawn=False)
    program = rt.load_program(MODELS / "add.pte")
    method = program.load_method("forward")
    during = scrape(daemon["metrics"])
    assert value(during, "et_serverd_sessions") >= 1
    assert value(during, "et_serverd_method_instances") > value(before, "et_serverd_method_instances")
    for _ in range(5):
        method.execute(add_inputs())
    after = scrape(daemon["metrics"])
    label = "fast_path" if transport == "fast" else "grpc"
    # Each execute is one Run call (whichever transport).
    assert calls(after, "add", label) - calls(before, "add", label) == 5
    for family in ("et_serverd_call_seconds", "et_serverd_call_compute_seconds",
                   "et_serverd_call_queue_seconds"):
        assert count(after, family, "add", label) - count(before, family, "add", label) >= 5
    assert value(after, "et_serverd_call_compute_seconds_sum", model="add", method="forward",
                 transport=label) > 0
    if transport == "fast":
        assert value(during, "et_serverd_fast_channels") + value(after, "et_serverd_fast_channels") > 0
        assert value(after, "et_serverd_shared_memory_mapped_bytes") > 0


def test_kserve_calls_are_counted(daemon):
    client = grpcclient.InferenceServerClient(daemon["kserve"])
    before = scrape(daemon["metrics"])
    inputs = []
    for i, a in enumerate(add_inputs()):
        t = grpcclient.InferInput(f"input__{i}", [2, 3], "FP32")
        t.set_data_from_numpy(a)
        inputs.append(t)
    for _ in range(3):
        client.infer("add", inputs)
    bad = grpcclient.InferInput("input__0", [2, 3], "FP32")
    bad.set_data_from_numpy(add_inputs()[0])
    with pytest.raises(InferenceServerException):
        client.infer("add", [bad])
    after = scrape(daemon["metrics"])
    assert calls(after, "add", "kserve_grpc") - calls(before, "add", "kserve_grpc") == 3
    assert calls(after, "add", "kserve_grpc", "INVALID_ARGUMENT") - \
        calls(before, "add", "kserve_grpc", "INVALID_ARGUMENT") == 1
    assert count(after, "et_serverd_call_seconds", "add", "kserve_grpc") - \
        count(before, "et_serverd_call_seconds", "add", "kserve_grpc") == 4
    # The histogram's buckets are cumulative and end at the count.
    buckets = sorted((float(dict(k[1])["le"]), v) for k, v in after.items()
                     if k[0] == "et_serverd_call_seconds_bucket"
                     and dict(k[1]).get("transport") == "kserve_grpc"
                     and dict(k[1]).get("model") == "add")
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)
    assert buckets[-1] == (float("inf"), count(after, "et_serverd_call_seconds", "add",
                                               "kserve_grpc"))


def test_gauges_describe_the_daemon(daemon):
    s = scrape(daemon["metrics"])
    assert value(s, "et_serverd_ready") == 1
    assert value(s, "et_serverd_models_served") == 2
    assert value(s, "et_serverd_repository_loads_total", result="ok") == 2
    assert value(s, "et_serverd_programs") >= 2
    # mlp_xnnpack's KServe model holds an instance: its graph's replica and weights (its
    # filters are small, so XNNPACK packs them; large ones would be packed once for our
    # kernels and counted by the other gauge, as compiled_graph_test.cc checks).
    assert value(s, "et_serverd_xnnpack_replicas") >= 1
    assert value(s, "et_serverd_xnnpack_packed_weight_bytes") > 1000
    assert ("et_serverd_kernel_packed_weight_bytes", frozenset()) in s
    assert value(s, "process_resident_memory_bytes") > 10 << 20
    assert value(s, "process_open_fds") > 5
    assert value(s, "process_start_time_seconds") > time.time() - 3600
    version = subprocess.run([built_tool("et-serverd", "server"), "--version"],
                             capture_output=True, text=True, timeout=DEADLINE_S).stdout.split()[1]
    assert value(s, "et_serverd_build_info", version=version) == 1


def test_log_level_changes_at_run_time(daemon):
    base = f"http://127.0.0.1:{daemon['metrics']}/log-level"

    def level():
        with urllib.request.urlopen(base, timeout=DEADLINE_S) as r:
            return r.read().decode().strip()

    def put(text):
        req = urllib.request.Request(base, data=text.encode(), method="PUT")
        return urllib.request.urlopen(req, timeout=DEADLINE_S).read().decode().strip()

    assert level() == "info"
    assert put("debug") == "debug" and level() == "debug"
    with pytest.raises(urllib.error.HTTPError) as bad:
        put("loud")
    assert bad.value.code == 400 and level() == "debug"
    pid = int(subprocess.check_output(["pgrep", "-f", daemon["socket"]]).split()[0])
    os.kill(pid, signal.SIGUSR2)  # back to --log-level
    wait_until(lambda: level() == "info", "SIGUSR2 to set the level back to info")
    os.kill(pid, signal.SIGUSR1)  # one step more verbose
    wait_until(lambda: level() == "debug", "SIGUSR1 to set the level to debug")
    put("info")
    # Logged just after the level changes: the page may show the level first.
    wait_until(lambda: "log level set to debug (SIGUSR1)" in daemon["log"].read_text(),
               "the log to say SIGUSR1 set the level")


def test_json_logs_carry_session_and_call(tmp_path):
    repo = tmp_path / "models"
    repo.mkdir()
    with kserve_daemon("--log-format", "json", models=repo, control=()) as (url, log, http):
        rt = etclient.Runtime(str(log.parent / "s.sock"), spawn=False)
        rt.load_program(MODELS / "add.pte").load_method("forward").execute(add_inputs())
        del rt
        lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert all({"time", "level", "message"} <= set(e) for e in lines)
    loaded = [e for e in lines if e["message"].startswith("program ") and "loaded" in e["message"]]
    assert loaded and loaded[0]["session"] >= 1 and loaded[0]["call"] >= 1, lines
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", lines[0]["time"])
