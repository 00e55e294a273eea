"""A benchmark worker: one long-lived process per Python environment (etclient's, with
no torch; the peer's, with executorch and torch), asked for measurements as JSON
lines on stdin and answering one JSON line each on stdout. Methods stay loaded between
requests, so the suite can interleave contenders without paying imports or loads.

Requests:
  {"op": "latency", "who": "etclient"|"executorch", "model": PATH, "inputs": [NPY...],
   "mode": "numpy"|"shared"|"torch", "transport": "fast"|"grpc", "socket": PATH,
   "hz": N, "seconds": S, "warmup": N, "threads": N}
    -> {"p50_us", "p99_us", "max_us", "calls", "calls_per_s", "late_ms"}
    With "start_at" (wall-clock seconds), the timed window starts then, after the warm-up.
  {"op": "prepare", ...the same keys}: imports, loads and warms up; measures nothing.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: this file runs as a script
from benchmarks.suite.harness import nearest_rank  # noqa: E402

_methods: dict = {}
_runtimes: dict = {}
_threads = [0]  # ExecuTorch's thread pool size as last set (0: its default)


def _etclient_method(request: dict):
    import etclient

    key = (request["socket"], request["transport"])
    if key not in _runtimes:
        _runtimes[key] = etclient.Runtime(request["socket"], transport=request["transport"])
    method = _runtimes[key].load_program(request["model"]).load_method()
    return method


def _executorch_method(request: dict):
    from executorch.runtime import Runtime

    return Runtime.get().load_program(request["model"]).load_method("forward")


def _prepared(request: dict):
    """The method and the inputs to call it with, made once per (model, who, transport, mode)."""
    key = (request["who"], request["model"], request.get("transport"), request["mode"], request.get("socket"))
    if key in _methods:
        return _methods[key]
    arrays = [np.load(p) for p in request["inputs"]]
    if request["who"] == "etclient":
        method = _etclient_method(request)
        if request["mode"] == "shared":
            inputs = []
            for i, a in enumerate(arrays):
                buf = method.input_buffer(i)
                np.asarray(buf)[...] = a
                inputs.append(buf)
        else:
            inputs = arrays
    else:
        import torch

        method = _executorch_method(request)
        inputs = [torch.from_numpy(a) for a in arrays]
    _methods[key] = (method, inputs)
    return method, inputs


def _set_threads(request: dict) -> None:
    """Resizes ExecuTorch's thread pool. A loaded XNNPACK method keeps the pool it was
    loaded with, which the resize frees, so every ExecuTorch method is loaded again."""
    threads = int(request.get("threads") or 0)
    if request["who"] != "executorch" or not threads or threads == _threads[0]:
        return
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool

    for key in [k for k in _methods if k[0] == "executorch"]:
        del _methods[key]
    _unsafe_reset_threadpool(threads)
    _threads[0] = threads


def prepare(request: dict) -> dict:
    """Imports, loads and warms up, so that a later latency request measures at once."""
    _set_threads(request)
    method, inputs = _prepared(request)
    _warm_up(method, inputs, request)
    return {}


def _warm_up(method, inputs, request: dict) -> None:
    """Up to `warmup` calls (20 unless asked), at most about half a second of them."""
    started = time.perf_counter()
    for _ in range(int(request.get("warmup", 20))):
        method.execute(inputs)
        if time.perf_counter() - started > 0.5:
            break


def latency(request: dict) -> dict:
    _set_threads(request)
    method, inputs = _prepared(request)
    _warm_up(method, inputs, request)
    late_ms = 0.0
    if request.get("start_at"):  # a shared window with other clients (wall-clock time)
        late_ms = max(0.0, (time.time() - request["start_at"]) * 1e3)
        time.sleep(max(0.0, request["start_at"] - time.time()))
    hz, seconds = float(request.get("hz", 0)), float(request["seconds"])
    min_calls = int(request.get("min_calls", 5))
    period = 1.0 / hz if hz > 0 else 0.0
    times = []
    start = next_tick = time.perf_counter()
    while time.perf_counter() - start < seconds or len(times) < min_calls:
        t = time.perf_counter()
        method.execute(inputs)
        times.append((time.perf_counter() - t) * 1e6)
        if period:
            next_tick += period
            delay = next_tick - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
    elapsed = time.perf_counter() - start
    times.sort()
    return {"p50_us": times[len(times) // 2], "p99_us": nearest_rank(times, 0.99), "max_us": times[-1],
            "calls": len(times),
            "calls_per_s": len(times) / elapsed, "late_ms": late_ms}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        try:
            reply = {"latency": latency, "prepare": prepare}[request["op"]](request)
        except Exception as e:  # reported to the suite, which stops with it
            reply = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
