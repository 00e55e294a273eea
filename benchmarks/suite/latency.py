"""Scenarios 1 and 2: per-call latency, free-running and in fixed-rate loops.


Contenders per model, interleaved: the C++ client (client/cpp/examples/robot_node:
inputs in shared memory, results into output buffers made once) on the fast path and
over gRPC; this project's runtime in-process (tools/et-bench, the model's own compute);
the Python client (etclient, numpy inputs; and shared-memory inputs) on each transport;
ExecuTorch's `executorch.runtime` in-process with torch tensors (the peer). The Python
contenders and et-bench take the fixture's recorded inputs; robot_node zeros of the
same shapes (these models' times do not depend on the values). Every contender warms
up before it is timed; p99 is the nearest rank (with fewer than 100 calls, the max)."""

from __future__ import annotations

import subprocess
import textwrap
import time
from pathlib import Path

from . import harness as h

FREE_MODELS = ["add", "mlp", "mobilenet_v2", "mobilenet_v2_xnnpack", "transformer_block_xnnpack"]
LOOP_CASES = [("add", 1000), ("add", 100), ("mlp", 1000), ("mlp", 100), ("mobilenet_v2_xnnpack", 100)]
CONTENDERS = {  # name -> column title
    "cpp_fast": "C++ fast path", "cpp_grpc": "C++ gRPC", "in_process": "in-process (ours)",
    "py_fast": "etclient fast", "py_fast_shm": "etclient fast, shm inputs", "py_grpc": "etclient gRPC",
    "executorch": "executorch.runtime"}


def robot_node(daemon: h.Daemon, model: str | Path, transport: str, hz: int, seconds: float,
               extra: list | None = None) -> dict:
    path = model if isinstance(model, Path) else h.MODELS / f"{model}.pte"
    before, started = h.cpu_seconds(daemon.pid), time.monotonic()
    r = h.run_json([h.ROBOT_NODE, path, "--socket", daemon.socket,
                    "--transport", transport, "--hz", hz, "--seconds", seconds] + (extra or []))
    assert r["transport"] == transport, r
    r["daemon_cpu_pct"] = 100 * (h.cpu_seconds(daemon.pid) - before) / (time.monotonic() - started)
    return r


def in_process(model: str, hz: int, seconds: float) -> dict:
    probe = h.et_bench(model, iterations=5, warmup=1)
    per_call_s = max(probe["median_ms"] / 1e3, 1e-6)
    iterations = max(20, int(seconds * (hz if hz else 1 / per_call_s)))
    out = h.et_bench(model, iterations=iterations, warmup=10, hz=hz)
    return {"p50_us": out["median_ms"] * 1e3, "p99_us": out["p99_ms"] * 1e3, "max_us": out["max_ms"] * 1e3}


def measure(daemon: h.Daemon, ours: h.Worker, peer: h.Worker, model: str, hz: int, s: h.Settings) -> dict:
    path, inputs = h.MODELS / f"{model}.pte", h.inputs_of(model)

    def py(worker, who, mode, transport=""):
        return lambda: worker.ask(op="latency", who=who, model=path, inputs=inputs, mode=mode, transport=transport,
                                  socket=daemon.socket, hz=hz, seconds=s.seconds)

    return h.interleaved(s.repeats, {
        "cpp_fast": lambda: robot_node(daemon, model, "fast", hz, s.seconds),
        "cpp_grpc": lambda: robot_node(daemon, model, "grpc", hz, s.seconds),
        "in_process": lambda: in_process(model, hz, s.seconds),
        "py_fast": py(ours, "etclient", "numpy", "fast"),
        "py_fast_shm": py(ours, "etclient", "shared", "fast"),
        "py_grpc": py(ours, "etclient", "numpy", "grpc"),
        "executorch": py(peer, "executorch", "torch")})


def cells(r: dict) -> str:
    return f"{r['p50_us']:.1f} / {r['p99_us']:.1f} / {r['max_us']:.0f}"


def rate_name(hz: int) -> str:
    return "free" if hz == 0 else f"{hz} Hz"


def record(section: h.Section, rows: list) -> None:
    section.table(
        "Cells: p50 / p99 / max in microseconds. Ratios: p50 over the in-process p50 of the same "
        "language (C++: our runtime in-process; Python: executorch.runtime).",
        ["model", "rate"] + list(CONTENDERS.values()) + ["C++ fast / in-process", "etclient fast / executorch",
                                                         "daemon CPU, C++ fast"],
        [[model, rate_name(hz)] + [cells(r[c]) for c in CONTENDERS]
         + [f"{r['cpp_fast']['p50_us'] / r['in_process']['p50_us']:.2f}x",
            f"{r['py_fast']['p50_us'] / r['executorch']['p50_us']:.2f}x",
            f"{r['cpp_fast']['daemon_cpu_pct']:.0f}%"] for model, hz, r in rows])
    for model, hz, r in rows:
        for c in CONTENDERS:
            for q in ("p50_us", "p99_us"):
                section.metric(f"{model}.{rate_name(hz).replace(' ', '')}.{c}.{q}", r[c][q], "us")


def free_running(s: h.Settings) -> h.Section:
    section = h.Section("latency", "1. Per-call latency (free-running)", h.prose(__doc__))
    models = ["add", "mobilenet_v2_xnnpack"] if s.quick else FREE_MODELS
    rows = []
    with h.Daemon() as daemon, h.Worker(h.CLIENT_PY) as ours, h.Worker(h.PEER_PY) as peer:
        for model in models:
            rows.append((model, 0, measure(daemon, ours, peer, model, 0, s)))
            h.log(section.name, model, {c: round(v["p50_us"], 1) for c, v in rows[-1][2].items()})
    record(section, rows)
    return section


IDLE_PROBE = textwrap.dedent("""
    import sys, time
    import numpy as np
    import etclient
    sock, model, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    methods = []
    for _ in range(n):
        m = etclient.Runtime(sock).load_program(model).load_method()
        assert m.transport == "fast", m.transport
        m.execute([np.zeros((2, 3), "float32")] * 2)
        methods.append(m)
    print("ready", flush=True)
    sys.stdin.read()
""")


def idle_cpu(daemon: h.Daemon, sessions: int, seconds: float) -> dict:
    """CPU used by the daemon and by the client while `sessions` sessions (one method and
    fast-path channel each) sit idle."""
    client = subprocess.Popen([str(h.CLIENT_PY), "-c", IDLE_PROBE, str(daemon.socket), str(h.MODELS / "add.pte"),
                               str(sessions)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert client.stdout.readline().strip() == "ready"
        time.sleep(2)  # past the channels' spin and any warm-up
        d0, c0, t0 = h.cpu_seconds(daemon.pid), h.cpu_seconds(client.pid), time.monotonic()
        time.sleep(seconds)
        d1, c1, t1 = h.cpu_seconds(daemon.pid), h.cpu_seconds(client.pid), time.monotonic()
    finally:
        client.kill()
        client.wait()
    return {"daemon_pct": 100 * (d1 - d0) / (t1 - t0), "client_pct": 100 * (c1 - c0) / (t1 - t0)}


def loops(s: h.Settings) -> h.Section:
    section = h.Section("loops", "2. Fixed-rate loops (the robot case)",
                        "The same contenders calling at a fixed rate (sleeping between calls, as a "
                        "control loop does), then the cost of idle sessions.")
    cases = [("add", 1000)] if s.quick else LOOP_CASES
    rows = []
    with h.Daemon() as daemon:
        with h.Worker(h.CLIENT_PY) as ours, h.Worker(h.PEER_PY) as peer:
            for model, hz in cases:
                rows.append((model, hz, measure(daemon, ours, peer, model, hz, s)))
                h.log(section.name, model, hz, {c: round(v["p99_us"], 1) for c, v in rows[-1][2].items()})
        idle_seconds = 3.0 if s.quick else 10.0
        idle = idle_cpu(daemon, 64, idle_seconds)
    record(section, rows)
    section.text += (f"\n\n64 idle sessions (one method and fast-path channel each), over {idle_seconds:g} s: "
                     f"the daemon used {idle['daemon_pct']:.2f}% of one core, the idle client "
                     f"{idle['client_pct']:.2f}%.")
    section.metric("idle64.daemon_cpu_pct", idle["daemon_pct"], "%")
    section.metric("idle64.client_cpu_pct", idle["client_pct"], "%")
    return section
