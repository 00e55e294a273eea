#!/usr/bin/env python3
"""XNNPACK-delegated programs: et-serverd's runtime vs ExecuTorch's own runtime.

Same .pte, same machine, one run: median latency of `method.execute` in
`executorch.runtime` (ExecuTorch's XNNPACK delegate, a 2025 XNNPACK), and of
set_inputs + execute in our runtime (build/tools/et-bench; the Debian 2022 XNNPACK plus
our kernels for the nodes it lacks), each with 1 thread and with every CPU. Ours also
with node-by-node partitioning (one XNNPACK runtime per node, ET_XNNPACK_PARTITION=node)
against the default (one runtime per run of consecutive XNNPACK nodes). Then resident
memory of one vs 20 instances of MobileNetV2's method in one process.

Runs in the export environment (it needs `executorch` and `torch`, see
tests/models/README.md), after `scripts/build`:

  .venv-export/bin/python benchmarks/xnnpack_vs_executorch.py [--iterations N] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
BENCH = ROOT / "build" / "tools" / "et-bench"
CASES = ["mobilenet_v2_xnnpack", "transformer_block_xnnpack", "cnn_xnnpack", "mlp_xnnpack",
         "vit_xnnpack", "speech_encoder_xnnpack", "mobilenet_v3_xnnpack", "convnext_xnnpack",
         "unet_xnnpack", "lstm_xnnpack", "gru_xnnpack", "transformer_encoder_xnnpack"]


def executorch_median_ms(name: str, iterations: int, warmup: int, threads: int) -> float:
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
    from executorch.runtime import Runtime

    _unsafe_reset_threadpool(threads)
    method = Runtime.get().load_program(MODELS / f"{name}.pte").load_method("forward")
    x = torch.from_numpy(np.load(MODELS / name / "forward.in0.npy"))
    times = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        method.execute([x])
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench(name: str, iterations: int, warmup: int, threads: int, partition: str = "runs",
          instances: int = 0) -> dict:
    env = dict(os.environ, ET_NUM_THREADS=str(threads))
    if partition == "node":
        env["ET_XNNPACK_PARTITION"] = "node"
    args = [BENCH, MODELS / f"{name}.pte", "--input", MODELS / name / "forward.in0.npy",
            "--iterations", str(iterations), "--warmup", str(warmup)]
    if instances:
        args += ["--instances", str(instances)]
    out = subprocess.run(args, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    if not BENCH.exists():
        raise SystemExit(f"{BENCH} is missing: run scripts/build first")
    torch.set_num_threads(1)
    cpus = os.cpu_count() or 1
    rows = []
    for name in CASES:
        row = {"name": name}
        for t in (1, cpus):
            row[f"peer{t}"] = executorch_median_ms(name, args.iterations, args.warmup, t)
            row[f"ours{t}"] = bench(name, args.iterations, args.warmup, t)["median_ms"]
            row[f"node{t}"] = bench(name, args.iterations, args.warmup, t, "node")["median_ms"]
        rows.append(row)
        print(row, flush=True)
    memory = bench("mobilenet_v2_xnnpack", 3, 1, 1, instances=20)
    print(memory, flush=True)

    def ratio(ours: float, peer: float) -> str:
        return f"{ours / peer:.2f}x"

    lines = [
        f"XNNPACK-delegated programs, median of {args.iterations} runs after {args.warmup} "
        f"warm-up, {platform.processor() or platform.machine()}, {cpus} CPUs, executorch "
        f"{importlib.metadata.version('executorch')} (its bundled XNNPACK), ours on Debian's "
        "XNNPACK 0.0~git20220216. Ours: set_inputs + execute in C++ (et-bench); theirs: "
        "method.execute from Python (a few microseconds of binding overhead on their side). "
        "Ratio = ours / theirs: below 1 is faster than ExecuTorch.",
        "",
        "| model | threads | executorch.runtime (us) | ours (us) | ratio | ours, node by node (us) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        for t in (1, cpus):
            lines.append(f"| {r['name']} | {t} | {r[f'peer{t}'] * 1e3:.1f} | {r[f'ours{t}'] * 1e3:.1f} | "
                         f"{ratio(r[f'ours{t}'], r[f'peer{t}'])} | {r[f'node{t}'] * 1e3:.1f} |")
    lines += [
        "",
        "Resident memory, one process, MobileNetV2 (XNNPACK): "
        f"{memory['rss_mb_one']:.1f} MiB with one method instance, "
        f"{memory['rss_mb_all']:.1f} MiB with {memory['instances']} (each executed once): "
        f"{(memory['rss_mb_all'] - memory['rss_mb_one']) / (memory['instances'] - 1):.2f} MiB per "
        "extra instance, which is its planned activations; the packed weights are shared.",
    ]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
