#!/usr/bin/env python3
"""The KServe v2 services (docs/kserve.md) under Triton's own load generator, and their
per-call latency next to et-serverd's own protocol, side by side in one run (issue 18):

- perf_analyzer (from tritonclient 2.41.0's wheel: see docs/kserve.md, "perf_analyzer")
  against one daemon, for add, MLP and MobileNetV2 (XNNPACK): over gRPC and over HTTP,
  each with tensors in the request and with system shared memory
  (`--shared-memory system`), concurrency 1: p50 / p99 latency and inferences per second;
- the same models through et-serverd's own protocol from C++ (client/cpp/examples/
  robot_node, free-running): over its gRPC service and over the fast path;
- ratios: each KServe row's p50 over our own gRPC p50.

perf_analyzer and robot_node are both C++ clients, so the comparison is of protocols
and servers, not of client languages. Run after `scripts/build`:

  python3 benchmarks/kserve.py [--seconds S] [--markdown FILE]

It makes the perf_analyzer environment (.venv-perf) and installs Debian's libb64-0d if
they are missing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
BUILD = ROOT / "build"
PERF_VENV = ROOT / ".venv-perf"
PERF_TRITONCLIENT = "tritonclient[all]==2.41.0"  # the last wheel that carries perf_analyzer
CASES = ["add", "mlp", "mobilenet_v2_xnnpack"]


def perf_analyzer() -> tuple[Path, dict]:
    """The perf_analyzer binary and the environment it needs (TOOLS.md's recipe)."""
    binary = PERF_VENV / "bin" / "perf_analyzer"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", PERF_VENV], check=True)
        subprocess.run([PERF_VENV / "bin" / "pip", "install", "-q", PERF_TRITONCLIENT,
                        "nvidia-cuda-runtime-cu12"], check=True)
    if subprocess.run(["dpkg-query", "-W", "libb64-0d"], capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "install", "-y", "-qq", "libb64-0d"], check=True)
    cudart = next(PERF_VENV.glob("lib/python3*/site-packages/nvidia/cuda_runtime/lib"))
    env = dict(os.environ, LD_LIBRARY_PATH=f"{cudart}:{os.environ.get('LD_LIBRARY_PATH', '')}")
    return binary, env


def start_daemon(tmp: Path):
    models = tmp / "models"
    models.mkdir()
    for name in CASES:
        shutil.copy(MODELS / f"{name}.pte", models / f"{name}.pte")
    sock, log_path = tmp / "d.sock", tmp / "daemon.log"
    proc = subprocess.Popen([BUILD / "server" / "et-serverd", "--socket", sock, "--models", models,
                             "--kserve-grpc", "127.0.0.1:0", "--kserve-http", "127.0.0.1:0"],
                            stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    for _ in range(600):
        text = log_path.read_text()
        g = re.search(r"KServe v2 gRPC listening on \S+ \(port (\d+)\)", text)
        h = re.search(r"KServe v2 HTTP listening on \S+ \(port (\d+)\)", text)
        if g and h and sock.exists() and re.search(r" ready \(", text):
            return proc, sock, int(g.group(1)), int(h.group(1))
        assert proc.poll() is None, text
        time.sleep(0.05)
    raise RuntimeError("et-serverd did not start")


def run_perf(binary, env, model, protocol, port, shm, seconds, tmp) -> dict:
    out_csv = tmp / f"{model}-{protocol}-{shm}.csv"
    args = [binary, "-m", model, "-u", f"127.0.0.1:{port}", "-i", protocol,
            "--shared-memory", shm, "--concurrency-range", "1",
            "--measurement-interval", str(int(seconds * 1000)), "--stability-percentage", "25",
            "--max-trials", "6", "-f", out_csv]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"perf_analyzer {' '.join(map(str, args[1:]))}:\n{done.stdout}\n{done.stderr}")
    row = next(csv.DictReader(open(out_csv)))
    return {"p50_us": float(row["p50 latency"]), "p99_us": float(row["p99 latency"]),
            "per_s": float(row["Inferences/Second"])}


def robot_node(sock: Path, model: str, transport: str, seconds: float) -> dict:
    out = subprocess.run([BUILD / "client" / "cpp" / "robot_node", MODELS / f"{model}.pte",
                          "--socket", sock, "--transport", transport, "--hz", "0",
                          "--seconds", str(seconds)], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["transport"] == transport, r
    return {"p50_us": r["p50_us"], "p99_us": r["p99_us"], "per_s": 1e6 / max(r["p50_us"], 1e-3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=3.0, help="per measurement")
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    binary, env = perf_analyzer()
    rows = []
    with tempfile.TemporaryDirectory(prefix="et-kserve-bench-") as tmp_name:
        tmp = Path(tmp_name)
        proc, sock, grpc_port, http_port = start_daemon(tmp)
        try:
            for model in CASES:
                r = {"model": model}
                r["ours_grpc"] = robot_node(sock, model, "grpc", args.seconds)
                r["ours_fast"] = robot_node(sock, model, "fast", args.seconds)
                for protocol, port in (("grpc", grpc_port), ("http", http_port)):
                    for shm in ("none", "system"):
                        r[f"{protocol}_{shm}"] = run_perf(binary, env, model, protocol, port, shm,
                                                          args.seconds, tmp)
                rows.append(r)
                print(json.dumps(r), flush=True)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)

    def cell(m):
        return f"{m['p50_us']:.0f} / {m['p99_us']:.0f} / {m['per_s']:.0f}"

    cols = [("grpc_none", "KServe gRPC"), ("grpc_system", "KServe gRPC + system shm"),
            ("http_none", "KServe HTTP"), ("http_system", "KServe HTTP + system shm"),
            ("ours_grpc", "et-serverd gRPC"), ("ours_fast", "et-serverd fast path")]
    lines = [f"KServe v2 services vs et-serverd's own protocol, {platform.machine()}, "
             f"{os.cpu_count()} CPUs, {args.seconds:g} s per measurement, concurrency 1. "
             "KServe: perf_analyzer (tritonclient 2.41.0's wheel); ours: robot_node (C++, "
             "free-running). Cells: p50 / p99 latency in microseconds / calls per second. "
             "Command: `python3 benchmarks/kserve.py --markdown benchmarks/results/kserve.md`.", "",
             "| model | " + " | ".join(name for _, name in cols) + " |",
             "|---|" + "---|" * len(cols)]
    for r in rows:
        lines.append(f"| {r['model']} | " + " | ".join(cell(r[k]) for k, _ in cols) + " |")
    lines += ["", "p50 ratios over et-serverd's own gRPC p50:", "",
              "| model | " + " | ".join(name for _, name in cols) + " |", "|---|" + "---|" * len(cols)]
    for r in rows:
        base = r["ours_grpc"]["p50_us"]
        lines.append(f"| {r['model']} | " + " | ".join(f"{r[k]['p50_us'] / base:.2f}x" for k, _ in cols) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text("# KServe v2 / Triton protocol\n\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
