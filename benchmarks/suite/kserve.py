"""KServe v2: Triton's load generator against our KServe services.

perf_analyzer (tritonclient 2.41.0's wheel, see docs/kserve.md) against one daemon,
over gRPC and HTTP, each with tensors in the request and with system shared memory,
concurrency 1; next to et-serverd's own protocol from C++ (robot_node, free-running) over
its gRPC service and its fast path. Both are C++ clients, so the comparison is of
protocols and servers. Ratio: each p50 over our own gRPC p50."""

from __future__ import annotations

import csv
import os
import subprocess
import tempfile
from pathlib import Path

from . import harness as h
from .latency import robot_node

PERF_VENV = h.ROOT / ".venv-perf"
MODELS = ["add", "mlp", "mobilenet_v2_xnnpack"]
COLUMNS = {"grpc_none": "KServe gRPC", "grpc_system": "KServe gRPC + system shm", "http_none": "KServe HTTP",
           "http_system": "KServe HTTP + system shm", "ours_grpc": "et-serverd gRPC",
           "ours_fast": "et-serverd fast path"}


def perf_analyzer() -> tuple[Path, dict]:
    binary = PERF_VENV / "bin" / "perf_analyzer"
    if not binary.exists():
        raise RuntimeError(f"{binary} is missing: benchmarks/run sets it up")
    cudart = next(PERF_VENV.glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib"))
    return binary, dict(os.environ, LD_LIBRARY_PATH=f"{cudart}:{os.environ.get('LD_LIBRARY_PATH', '')}")


def run_perf(binary, env, model, protocol, port, shm, seconds, tmp: Path) -> dict:
    out_csv = tmp / f"{model}-{protocol}-{shm}.csv"
    args = [binary, "-m", model, "-u", f"127.0.0.1:{port}", "-i", protocol, "--shared-memory", shm,
            "--concurrency-range", "1", "--measurement-interval", str(int(seconds * 1000)),
            "--stability-percentage", "25", "--max-trials", "6", "-f", out_csv]
    done = subprocess.run([str(a) for a in args], env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"perf_analyzer {' '.join(map(str, args[1:]))}:\n{done.stdout}\n{done.stderr}")
    row = next(csv.DictReader(open(out_csv)))
    return {"p50_us": float(row["p50 latency"]), "p99_us": float(row["p99 latency"]),
            "per_s": float(row["Inferences/Second"])}


def run(s: h.Settings) -> h.Section:
    section = h.Section("kserve", "KServe v2 / Triton protocol", h.prose(__doc__))
    binary, env = perf_analyzer()
    models = ["add"] if s.quick else MODELS
    seconds = 1.0 if s.quick else 3.0
    rows = []
    with h.Daemon(models=models, kserve=True) as daemon, tempfile.TemporaryDirectory() as tmp:
        for model in models:
            contenders = {"ours_grpc": lambda: node(daemon, model, "grpc", seconds),
                          "ours_fast": lambda: node(daemon, model, "fast", seconds)}
            for protocol, port in (("grpc", daemon.kserve_grpc), ("http", daemon.kserve_http)):
                for shm in ("none", "system"):
                    contenders[f"{protocol}_{shm}"] = (lambda p=protocol, q=port, m=shm:
                                                       run_perf(binary, env, model, p, q, m, seconds, Path(tmp)))
            r = h.interleaved(1 if s.quick else 2, contenders)
            base = r["ours_grpc"]["p50_us"]
            rows.append([model] + [f"{r[k]['p50_us']:.0f} / {r[k]['p99_us']:.0f} / {r[k]['per_s']:.0f} "
                                   f"({r[k]['p50_us'] / base:.2f}x)" for k in COLUMNS])
            for k in COLUMNS:
                section.metric(f"{model}.{k}.p50_us", r[k]["p50_us"], "us")
                section.metric(f"{model}.{k}.per_s", r[k]["per_s"], "1/s", "higher")
            h.log(section.name, model, {k: round(v["p50_us"]) for k, v in r.items()})
    section.table("Cells: p50 / p99 latency (us) / calls per second (p50 over our gRPC p50).",
                  ["model"] + list(COLUMNS.values()), rows)
    return section


def node(daemon: h.Daemon, model: str, transport: str, seconds: float) -> dict:
    r = robot_node(daemon, model, transport, 0, seconds)
    return {"p50_us": r["p50_us"], "p99_us": r["p99_us"], "per_s": r["calls_per_s"]}
