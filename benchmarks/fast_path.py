#!/usr/bin/env python3
"""The fast path (docs/fast_path.md) against the gRPC path and against in-process
execution, side by side in one run, as ratios (issue 14's table):

- round trip from C++ (client/cpp/examples/robot_node: shared-memory inputs, results
  into output buffers made once) for add, MLP and MobileNetV2 (XNNPACK): fast path,
  gRPC path, and the same model in-process (tools/et-bench), free-running and at
  1 kHz and 100 Hz (where waking from sleep dominates): p50, p99, max;
- the same from Python: etclient (numpy inputs) on each transport vs executorch.runtime
  in-process (torch tensors);
- 16 concurrent sessions on this machine (16 robot_node processes, add, free-running):
  calls per second in all, and the worst p99;
- the daemon's CPU use with 64 idle sessions connected (one method each, so 64
  fast-path channels), and the idle client's.

Runs from the export environment (the Python peer needs executorch.runtime) after
`scripts/build` and `scripts/install-client`:

  .venv-export/bin/python benchmarks/fast_path.py [--seconds S] [--markdown FILE]
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
BUILD = ROOT / "build"
CLIENT_PY = ROOT / ".venv" / "bin" / "python"
PEER_PY = ROOT / ".venv-export" / "bin" / "python"
CPP_MODELS = ["add", "mlp", "mobilenet_v2_xnnpack"]
RATES = [0, 1000, 100]  # 0: free-running

PY_PROBE = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    who, sock, model, transport = sys.argv[1:5]
    hz, seconds = float(sys.argv[5]), float(sys.argv[6])
    arrays = [np.load(p) for p in sys.argv[7:]]
    if who == "etclient":
        import etclient
        method = etclient.Runtime(sock, transport=transport).load_program(model).load_method()
        assert method.transport == transport, method.transport
        inputs = arrays
    else:
        import torch
        from executorch.runtime import Runtime
        method = Runtime.get().load_program(model).load_method("forward")
        inputs = [torch.from_numpy(a) for a in arrays]
    for _ in range(20):
        method.execute(inputs)
    times = []
    period = 1.0 / hz if hz > 0 else 0.0
    start = next_tick = time.perf_counter()
    while time.perf_counter() - start < seconds:
        t = time.perf_counter()
        method.execute(inputs)
        times.append((time.perf_counter() - t) * 1e6)
        if period:
            next_tick += period
            delay = next_tick - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
    times.sort()
    print(json.dumps({"p50_us": times[len(times) // 2], "p99_us": times[int(len(times) * 0.99)],
                      "max_us": times[-1], "calls": len(times)}))
""")

IDLE_PROBE = textwrap.dedent("""
    import sys, time
    import etclient
    sock, model, n, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    methods = []
    for _ in range(n):
        m = etclient.Runtime(sock).load_program(model).load_method()
        assert m.transport == "fast"
        m.execute([__import__("numpy").zeros((2, 3), "float32")] * 2)
        methods.append(m)
    print("ready", flush=True)
    time.sleep(seconds)
""")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def robot_node(sock: Path, model: str, transport: str, hz: int, seconds: float, daemon_pid: int) -> dict:
    before, started = cpu_seconds(daemon_pid), time.monotonic()
    out = subprocess.run([BUILD / "client" / "cpp" / "robot_node", MODELS / f"{model}.pte", "--socket", sock,
                          "--transport", transport, "--hz", str(hz), "--seconds", str(seconds)],
                         check=True, capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["transport"] == transport, result
    result["daemon_cpu_pct"] = 100 * (cpu_seconds(daemon_pid) - before) / (time.monotonic() - started)
    return result


def in_process(model: str, hz: int, seconds: float) -> dict:
    probe = json.loads(subprocess.run([BUILD / "tools" / "et-bench", MODELS / f"{model}.pte", "--iterations", "20"],
                                      check=True, capture_output=True, text=True).stdout)
    per_call_s = probe["median_ms"] / 1e3
    iterations = max(50, int(seconds * (hz if hz else 1 / max(per_call_s, 1e-6))))
    out = json.loads(subprocess.run([BUILD / "tools" / "et-bench", MODELS / f"{model}.pte", "--warmup", "20",
                                     "--iterations", str(iterations), "--hz", str(hz)],
                                    check=True, capture_output=True, text=True).stdout)
    return {"p50_us": out["median_ms"] * 1e3, "p99_us": out["p99_ms"] * 1e3, "max_us": out["max_ms"] * 1e3}


def python_probe(python: Path, who: str, sock: Path, model: str, transport: str, hz: int, seconds: float) -> dict:
    inputs = sorted((MODELS / model).glob("forward.in*.npy"))
    out = subprocess.run([str(python), "-c", PY_PROBE, who, str(sock), str(MODELS / f"{model}.pte"), transport,
                          str(hz), str(seconds), *map(str, inputs)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def concurrent(sock: Path, transport: str, sessions: int, seconds: float) -> dict:
    procs = [subprocess.Popen([BUILD / "client" / "cpp" / "robot_node", MODELS / "add.pte", "--socket", sock,
                               "--transport", transport, "--hz", "0", "--seconds", str(seconds)],
                              stdout=subprocess.PIPE, text=True) for _ in range(sessions)]
    results = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    return {"calls_per_s": sum(r["calls_per_s"] for r in results),
            "p50_us": sorted(r["p50_us"] for r in results)[len(results) // 2],
            "p99_us": max(r["p99_us"] for r in results)}


def idle_cpu(sock: Path, daemon_pid: int, sessions: int, seconds: float) -> dict:
    client = subprocess.Popen([str(CLIENT_PY), "-c", IDLE_PROBE, str(sock), str(MODELS / "add.pte"),
                               str(sessions), str(seconds + 5)], stdout=subprocess.PIPE, text=True)
    assert client.stdout.readline().strip() == "ready"
    time.sleep(2)  # past the channels' spin and any warm-up
    d0, c0, t0 = cpu_seconds(daemon_pid), cpu_seconds(client.pid), time.monotonic()
    time.sleep(seconds)
    d1, c1, t1 = cpu_seconds(daemon_pid), cpu_seconds(client.pid), time.monotonic()
    client.kill()
    client.wait()
    return {"daemon_pct": 100 * (d1 - d0) / (t1 - t0), "client_pct": 100 * (c1 - c0) / (t1 - t0)}


def combined(runs: list) -> dict:
    """Repeated measurements as one: the median p50 and p99, the largest max."""
    out = {k: statistics.median(r[k] for r in runs) for k in ("p50_us", "p99_us")}
    out["max_us"] = max(r["max_us"] for r in runs)
    if "daemon_cpu_pct" in runs[0]:
        out["daemon_cpu_pct"] = statistics.median(r["daemon_cpu_pct"] for r in runs)
    return out


def interleaved(repeats: int, contenders: dict) -> dict:
    """Runs each contender `repeats` times, taking turns (so that a noisy neighbour
    slows all of them alike), and combines each one's runs."""
    runs = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, measure in contenders.items():
            runs[name].append(measure())
    return {name: combined(r) for name, r in runs.items()}


def rate_name(hz: int) -> str:
    return "free" if hz == 0 else f"{hz} Hz"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved runs of each contender per row")
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    rows, py_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        sock = Path(tmp) / "s.sock"
        daemon = subprocess.Popen([BUILD / "server" / "et-serverd", "--socket", sock, "--log-level", "warn"])
        try:
            for _ in range(200):
                if sock.exists():
                    break
                time.sleep(0.05)
            for model in CPP_MODELS:
                for hz in RATES:
                    if model == "mobilenet_v2_xnnpack" and hz == 1000:
                        continue  # a call takes longer than the period
                    r = interleaved(args.repeats, {
                        "local": lambda: in_process(model, hz, args.seconds),
                        "fast": lambda: robot_node(sock, model, "fast", hz, args.seconds, daemon.pid),
                        "grpc": lambda: robot_node(sock, model, "grpc", hz, args.seconds, daemon.pid)})
                    fast, grpc, local = r["fast"], r["grpc"], r["local"]
                    rows.append((model, hz, fast, grpc, local))
                    print(model, rate_name(hz), fast["p50_us"], grpc["p50_us"], local["p50_us"], flush=True)
            for model in CPP_MODELS:
                for hz in RATES:
                    if model == "mobilenet_v2_xnnpack" and hz == 1000:
                        continue
                    r = interleaved(args.repeats, {
                        "fast": lambda: python_probe(CLIENT_PY, "etclient", sock, model, "fast", hz, args.seconds),
                        "grpc": lambda: python_probe(CLIENT_PY, "etclient", sock, model, "grpc", hz, args.seconds),
                        "peer": lambda: python_probe(PEER_PY, "executorch", sock, model, "", hz, args.seconds)})
                    fast, grpc, peer = r["fast"], r["grpc"], r["peer"]
                    py_rows.append((model, hz, fast, grpc, peer))
                    print("python", model, rate_name(hz), fast["p50_us"], grpc["p50_us"], peer["p50_us"], flush=True)
            many = {t: concurrent(sock, t, 16, args.seconds) for t in ("fast", "grpc")}
            idle = idle_cpu(sock, daemon.pid, 64, 10.0)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)

    def cells(r: dict) -> str:
        return f"{r['p50_us']:.1f} / {r['p99_us']:.1f} / {r['max_us']:.0f}"

    lines = [
        f"et-serverd's fast path vs its gRPC path vs in-process, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{args.seconds:g} s per measurement, {args.repeats} interleaved runs of each contender per row "
        f"(median p50 and p99, largest max), executorch {importlib.metadata.version('executorch')} (Python peer). "
        "Cells: p50 / p99 / max in microseconds; ratios are p50 over the in-process p50. "
        "Command: `.venv-export/bin/python benchmarks/fast_path.py --markdown benchmarks/results/fast_path.md`.",
        "",
        "C++ (robot_node: shared-memory inputs, results into output buffers made once; in-process: et-bench):",
        "",
        "| model | rate | fast path | gRPC | in-process | fast / in-process | gRPC / in-process | "
        "daemon CPU, fast / gRPC |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for model, hz, fast, grpc, local in rows:
        lines.append(f"| {model} | {rate_name(hz)} | {cells(fast)} | {cells(grpc)} | {cells(local)} | "
                     f"{fast['p50_us'] / local['p50_us']:.2f}x | {grpc['p50_us'] / local['p50_us']:.2f}x | "
                     f"{fast['daemon_cpu_pct']:.0f}% / {grpc['daemon_cpu_pct']:.0f}% |")
    lines += ["", "Python (etclient with numpy inputs; in-process: executorch.runtime with torch tensors):", "",
              "| model | rate | etclient fast path | etclient gRPC | executorch.runtime | fast / in-process | "
              "gRPC / in-process |", "|---|---|---|---|---|---|---|"]
    for model, hz, fast, grpc, peer in py_rows:
        lines.append(f"| {model} | {rate_name(hz)} | {cells(fast)} | {cells(grpc)} | {cells(peer)} | "
                     f"{fast['p50_us'] / peer['p50_us']:.2f}x | {grpc['p50_us'] / peer['p50_us']:.2f}x |")
    lines += ["", "16 concurrent sessions (16 robot_node processes, add, free-running) on this machine:", "",
              "| transport | calls/s in all | median p50 (us) | worst p99 (us) |", "|---|---|---|---|"]
    for t in ("fast", "grpc"):
        lines.append(f"| {t} | {many[t]['calls_per_s']:.0f} | {many[t]['p50_us']:.1f} | {many[t]['p99_us']:.1f} |")
    lines += ["", f"64 idle sessions (one method and fast-path channel each), over 10 s: the daemon used "
              f"{idle['daemon_pct']:.2f}% of one core, the idle client {idle['client_pct']:.2f}%."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
