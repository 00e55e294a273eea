#!/usr/bin/env python3
"""Portable-only programs: et-serverd's runtime vs ExecuTorch's own runtime.

Same .pte, same machine, one run: median latency of `method.execute` in
`executorch.runtime` (ExecuTorch's portable kernels), and of set_inputs + execute in
our runtime (build/tools/et-bench, no daemon), reported as a ratio.

Runs in the export environment (it needs `executorch` and `torch`, see
tests/models/README.md), after `scripts/build`:

  .venv-export/bin/python benchmarks/portable_vs_executorch.py [--iterations N] [--markdown FILE]
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
CASES = ["mobilenet_v2", "cnn", "mlp", "transformer_block", "vit", "speech_encoder", "mobilenet_v3",
         "convnext", "unet", "lstm", "gru", "transformer_encoder"]


def executorch_median_ms(name: str, iterations: int, warmup: int) -> float:
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(MODELS / f"{name}.pte").load_method("forward")
    x = torch.from_numpy(np.load(MODELS / name / "forward.in0.npy"))
    times = []
    for i in range(warmup + iterations):
        start = time.perf_counter()
        method.execute([x])
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def ours_median_ms(name: str, iterations: int, warmup: int, threads: int) -> float:
    env = dict(os.environ, ET_NUM_THREADS=str(threads))
    out = subprocess.run([BENCH, MODELS / f"{name}.pte", "--input", MODELS / name / "forward.in0.npy",
                          "--iterations", str(iterations), "--warmup", str(warmup)],
                         check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)["median_ms"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    if not BENCH.exists():
        raise SystemExit(f"{BENCH} is missing: run scripts/build first")
    torch.set_num_threads(1)

    threads = os.cpu_count() or 1
    rows = []
    for name in CASES:
        peer = executorch_median_ms(name, args.iterations, args.warmup)
        one = ours_median_ms(name, args.iterations, args.warmup, 1)
        all_threads = ours_median_ms(name, args.iterations, args.warmup, threads)
        rows.append((name, peer, one, all_threads))
        print(f"{name}: executorch.runtime {peer:.3f} ms, ours {one:.3f} ms (1 thread), "
              f"{all_threads:.3f} ms ({threads} threads)", flush=True)
    lines = [
        f"Portable-only programs, median of {args.iterations} runs after {args.warmup} warm-up, "
        f"one process each, {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"executorch {importlib.metadata.version('executorch')}, torch {torch.__version__}. "
        "Ours: set_inputs + execute in C++ (et-bench); theirs: method.execute from Python, so "
        "the smallest models include a few microseconds of binding overhead on their side.",
        "",
        "ExecuTorch's portable kernels use one thread; ours are shown with one thread and with "
        f"{threads} (ET_NUM_THREADS).",
        "",
        "| model | executorch.runtime (ms) | ours, 1 thread (ms) | speed-up | "
        f"ours, {threads} threads (ms) | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    lines += [f"| {n} | {p:.3f} | {o:.3f} | {p / o:.2f}x | {a:.3f} | {p / a:.2f}x |" for n, p, o, a in rows]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
