#!/usr/bin/env python3
"""The Python client (etclient, talking to et-serverd) against executorch.runtime
(in-process), side by side in one run, as ratios:

- what `import` costs a process (time, resident memory), each in a fresh interpreter:
  etclient from the client environment (.venv, no torch), executorch.runtime from the
  export environment (it imports torch);
- time to the first result in a fresh process (import, load add.pte, one call);
- the per-call round trip of the add fixture from Python (p50, p99), etclient with
  numpy inputs and with shared-memory inputs (zero copy), executorch with torch tensors.

Runs from the export environment after `scripts/build` and installing etclient in .venv:

  .venv-export/bin/python benchmarks/python_client_vs_executorch.py [--markdown FILE]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import signal
import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
CLIENT_PY = ROOT / ".venv" / "bin" / "python"
PEER_PY = ROOT / ".venv-export" / "bin" / "python"

PROBE = textwrap.dedent("""
    import json, sys, time
    def rss_kb():
        return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS:")).split()[1])
    base = rss_kb()
    t0 = time.perf_counter()
    if sys.argv[1] == "etclient":
        import etclient
        runtime = etclient.Runtime(sys.argv[2])
        imported = time.perf_counter()
        import array
        x = memoryview(array.array("f", [0.5] * 6)).cast("B").cast("f", (2, 3))
        method = runtime.load_program(sys.argv[3]).load_method("forward")
        method.execute([x, x])
    else:
        from executorch.runtime import Runtime
        import torch
        imported = time.perf_counter()
        method = Runtime.get().load_program(sys.argv[3]).load_method("forward")
        method.execute([torch.full((2, 3), 0.5), torch.full((2, 3), 0.5)])
    first = time.perf_counter()
    print(json.dumps({"import_ms": (imported - t0) * 1e3, "first_result_ms": (first - t0) * 1e3,
                      "import_rss_mb": (rss_kb() - base) / 1024}))
""")

LATENCY = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    iterations, warmup = int(sys.argv[3]), int(sys.argv[4])
    a = np.load(sys.argv[5]); b = np.load(sys.argv[6])
    def measure(call):
        times = []
        for i in range(warmup + iterations):
            t = time.perf_counter(); call()
            if i >= warmup: times.append((time.perf_counter() - t) * 1e6)
        times.sort()
        return {"p50_us": times[len(times) // 2], "p99_us": times[int(len(times) * 0.99)]}
    result = {}
    if sys.argv[1] == "etclient":
        import etclient
        method = etclient.Runtime(sys.argv[2]).load_program(sys.argv[7]).load_method("forward")
        result["numpy"] = measure(lambda: method.execute([a, b]))
        sa, sb = method.input_buffer(0), method.input_buffer(1)
        np.asarray(sa)[...] = a; np.asarray(sb)[...] = b
        result["shared"] = measure(lambda: method.execute([sa, sb]))
    else:
        import torch
        from executorch.runtime import Runtime
        method = Runtime.get().load_program(sys.argv[7]).load_method("forward")
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        result["torch"] = measure(lambda: method.execute([ta, tb]))
    print(json.dumps(result))
""")


def run(python: Path, code: str, *args) -> dict:
    out = subprocess.run([str(python), "-c", code, *map(str, args)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(python: Path, which: str, sock: Path, repeats: int) -> dict:
    runs = [run(python, PROBE, which, sock, MODELS / "add.pte") for _ in range(repeats)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per import measurement")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sock = Path(tmp) / "s.sock"
        proc = subprocess.Popen([ROOT / "build" / "server" / "et-serverd", "--socket", sock, "--log-level", "warn"])
        try:
            for _ in range(200):
                if sock.exists():
                    break
                time.sleep(0.05)
            ours = median_of(CLIENT_PY, "etclient", sock, args.repeats)
            peer = median_of(PEER_PY, "executorch", sock, args.repeats)
            lat_args = (sock, args.iterations, args.warmup, MODELS / "add/forward.in0.npy",
                        MODELS / "add/forward.in1.npy", MODELS / "add.pte")
            our_lat = run(CLIENT_PY, LATENCY, "etclient", *lat_args)
            peer_lat = run(PEER_PY, LATENCY, "executorch", *lat_args)["torch"]
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    lines = [
        f"Python client vs executorch.runtime, {platform.machine()}, {os.cpu_count()} CPUs, executorch "
        f"{importlib.metadata.version('executorch')}, torch {importlib.metadata.version('torch')}; medians of "
        f"{args.repeats} fresh processes; latency: add fixture, {args.iterations} calls after {args.warmup} warm-up.",
        "",
        "| | etclient (daemon) | executorch.runtime (in-process) | ratio |",
        "|---|---|---|---|",
        f"| import time (ms) | {ours['import_ms']:.1f} | {peer['import_ms']:.1f} | {ours['import_ms'] / peer['import_ms']:.3f}x |",
        f"| import resident memory (MiB) | {ours['import_rss_mb']:.1f} | {peer['import_rss_mb']:.1f} | "
        f"{ours['import_rss_mb'] / peer['import_rss_mb']:.3f}x |",
        f"| fresh process to first result (ms) | {ours['first_result_ms']:.1f} | {peer['first_result_ms']:.1f} | "
        f"{ours['first_result_ms'] / peer['first_result_ms']:.3f}x |",
        f"| add, p50 (us), numpy inputs | {our_lat['numpy']['p50_us']:.1f} | {peer_lat['p50_us']:.1f} | "
        f"{our_lat['numpy']['p50_us'] / peer_lat['p50_us']:.2f}x |",
        f"| add, p99 (us), numpy inputs | {our_lat['numpy']['p99_us']:.1f} | {peer_lat['p99_us']:.1f} | "
        f"{our_lat['numpy']['p99_us'] / peer_lat['p99_us']:.2f}x |",
        f"| add, p50 (us), shared-memory inputs | {our_lat['shared']['p50_us']:.1f} | {peer_lat['p50_us']:.1f} | "
        f"{our_lat['shared']['p50_us'] / peer_lat['p50_us']:.2f}x |",
        f"| add, p99 (us), shared-memory inputs | {our_lat['shared']['p99_us']:.1f} | {peer_lat['p99_us']:.1f} | "
        f"{our_lat['shared']['p99_us'] / peer_lat['p99_us']:.2f}x |",
        "",
        "executorch's import includes torch (its Python runtime needs it); etclient's includes the gRPC "
        "libraries and opening a session. Each etclient call is a gRPC round trip to the daemon.",
    ]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
