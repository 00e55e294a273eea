"""Scenario 5: a large input.

A 1x3x1080x1920 float32 frame (24 MiB) into a cheap model (the mean of each channel),
exported with its input unplanned (the caller's memory is used as it is). Through the
daemon with the frame already in shared memory (C++ and Python: no copy on the way in),
with the frame copied in from a numpy array, and over gRPC; in-process with
executorch.runtime; and the model's own compute (our runtime in-process, et-bench). The
overhead is each p50 over the model's own compute."""

from __future__ import annotations

import subprocess
import textwrap

from . import harness as h
from .latency import robot_node

MODEL = h.CACHE / "frame_mean_unplanned.pte"
FRAME = h.CACHE / "frame_mean_unplanned" / "forward.in0.npy"

EXPORT = textwrap.dedent("""
    import sys
    import numpy as np
    import torch
    from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    class FrameMean(torch.nn.Module):
        def forward(self, x):
            return x.mean(dim=(2, 3))

    x = torch.rand(1, 3, 1080, 1920)
    program = to_edge_transform_and_lower(torch.export.export(FrameMean(), (x,))).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(alloc_graph_input=False)))
    open(sys.argv[1], "wb").write(program.buffer)
    np.save(sys.argv[2], x.numpy())
""")

CONTENDERS = {"compute": "model's own compute (et-bench)", "cpp_fast_shm": "C++ fast path, frame in shm",
              "py_fast_shm": "etclient fast, frame in shm", "py_fast_copy": "etclient fast, numpy frame (copied in)",
              "py_grpc": "etclient gRPC, numpy frame", "executorch": "executorch.runtime in-process"}


def export() -> None:
    """Exports the model once into build/bench-cache (the peer environment has the exporter)."""
    if MODEL.exists() and FRAME.exists():
        return
    FRAME.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(h.PEER_PY), "-c", EXPORT, str(MODEL), str(FRAME)], check=True)


def run(s: h.Settings) -> h.Section:
    section = h.Section("large_input", "5. Large input (1x3x1080x1920 float32)", h.prose(__doc__))
    export()
    seconds = s.seconds
    with h.Daemon() as daemon, h.Worker(h.CLIENT_PY) as ours, h.Worker(h.PEER_PY) as peer:
        def py(worker, who, mode, transport=""):
            return lambda: worker.ask(op="latency", who=who, model=MODEL, inputs=[FRAME], mode=mode,
                                      transport=transport, socket=daemon.socket, seconds=seconds, warmup=5)

        def compute():
            probe = h.et_bench(MODEL, iterations=3, warmup=1, inputs=[FRAME])
            n = max(20, int(seconds / max(probe["median_ms"] / 1e3, 1e-6)))
            out = h.et_bench(MODEL, iterations=n, warmup=3, inputs=[FRAME])
            return {"p50_us": out["median_ms"] * 1e3, "p99_us": out["p99_ms"] * 1e3, "max_us": out["max_ms"] * 1e3}

        r = h.interleaved(s.repeats, {
            "compute": compute,
            "cpp_fast_shm": lambda: robot_node(daemon, MODEL, "fast", 0, seconds),
            "py_fast_shm": py(ours, "etclient", "shared", "fast"),
            "py_fast_copy": py(ours, "etclient", "numpy", "fast"),
            "py_grpc": py(ours, "etclient", "numpy", "grpc"),
            "executorch": py(peer, "executorch", "torch")})
    base = r["compute"]["p50_us"]
    rows = []
    for key, label in CONTENDERS.items():
        rows.append([label, f"{r[key]['p50_us']:.0f}", f"{r[key]['p99_us']:.0f}", f"{r[key]['p50_us'] / base:.2f}x"])
        section.metric(f"{key}.p50_us", r[key]["p50_us"], "us")
        section.metric(f"{key}.overhead", r[key]["p50_us"] / base, "x")
    section.table("Microseconds; overhead: p50 over the model's own compute p50.",
                  ["", "p50 (us)", "p99 (us)", "overhead"], rows)
    return section
