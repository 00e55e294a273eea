#!/usr/bin/env python3
"""The CI scenario (docs/ci.md): N test processes start at once, each loads MobileNetV2
(XNNPACK-delegated) and runs it 10 times. Side by side in one run:

- etclient (no torch) against et-serverd that the first process starts itself (the
  daemon's start is counted in the wall time, and its peak memory in the sum);
- in-process executorch.runtime 1.5.1 in every process (the peer).

Reported per N (1, 4, 16): wall time from launch until the last process finished, the
sum of every process's peak RSS (the daemon's included), and the ratios. Also what
starting the daemon adds to the first process: its time to connect with no daemon
running, against connecting to a warm one.

Runs from the export environment after scripts/build and scripts/install-client:

  .venv-export/bin/python benchmarks/ci_scenario.py [--runs 10] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
MODEL = MODELS / "mobilenet_v2_xnnpack.pte"
INPUT = MODELS / "mobilenet_v2_xnnpack" / "forward.in0.npy"
CLIENT_PY = ROOT / ".venv" / "bin" / "python"
SERVERD = ROOT / "build" / "server" / "et-serverd"

ETCLIENT_WORKER = textwrap.dedent("""
    import json, resource, sys, time
    t0 = time.perf_counter()
    import numpy as np
    import etclient
    runtime = etclient.Runtime.get(sys.argv[1])
    connected = time.perf_counter() - t0
    method = runtime.load_program(sys.argv[2]).load_method()
    x = np.load(sys.argv[3])
    for _ in range(int(sys.argv[4])):
        out = np.asarray(method.execute([x])[0])
    assert out.shape[-1] == 1000, out.shape
    print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      "connect_s": connected}))
""")

# The same test process without numpy (etclient needs none): the .npy input read with
# the standard library, the output checked through the buffer protocol.
ETCLIENT_STDLIB_WORKER = textwrap.dedent("""
    import ast, json, resource, sys, time
    t0 = time.perf_counter()
    import etclient
    runtime = etclient.Runtime.get(sys.argv[1])
    connected = time.perf_counter() - t0
    method = runtime.load_program(sys.argv[2]).load_method()
    raw = open(sys.argv[3], "rb").read()
    header_len = int.from_bytes(raw[8:10], "little")
    header = ast.literal_eval(raw[10:10 + header_len].decode())
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    x = memoryview(raw[10 + header_len:]).cast("f", header["shape"])
    for _ in range(int(sys.argv[4])):
        out = memoryview(method.execute([x])[0])
    assert out.shape[-1] == 1000, out.shape
    print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                      "connect_s": connected}))
""")

EXECUTORCH_WORKER = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    import torch
    from executorch.runtime import Runtime
    method = Runtime.get().load_program(sys.argv[2]).load_method("forward")
    x = torch.from_numpy(np.load(sys.argv[3]))
    for _ in range(int(sys.argv[4])):
        out = method.execute([x])[0]
    assert out.shape[-1] == 1000, out.shape
    print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")


def daemon_pids(sock: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"et-serverd") and sock.encode() in argv:
                pids.append(int(entry.name))
    return pids


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def launch(python: str, code: str, n: int, sock: str, runs: int, env: dict) -> tuple[float, list]:
    start = time.perf_counter()
    procs = [subprocess.Popen([python, "-c", code, sock, str(MODEL), str(INPUT), str(runs)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(n)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=1800)
        if p.returncode != 0:
            raise SystemExit(f"a worker failed:\n{err}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    return time.perf_counter() - start, outs


def through_daemon(n: int, runs: int, worker: str = ETCLIENT_WORKER) -> dict:
    with tempfile.TemporaryDirectory(prefix="et-ci-") as tmp:
        os.chmod(tmp, 0o700)
        sock = os.path.join(tmp, "s.sock")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ETSERVER_")}
        env.update(ETSERVER_BIN=str(SERVERD), ETSERVER_IDLE_EXIT="5")
        wall, outs = launch(str(CLIENT_PY), worker, n, sock, runs, env)
        pids = daemon_pids(sock)
        assert len(pids) == 1, f"expected one daemon, found {pids}"
        daemon_kb = peak_rss_kb(pids[0])
        os.kill(pids[0], 15)
        time.sleep(0.5)
    return {"wall_s": wall, "rss_mb": (sum(o["rss_kb"] for o in outs) + daemon_kb) / 1024,
            "daemon_mb": daemon_kb / 1024}


def in_process(n: int, runs: int) -> dict:
    wall, outs = launch(sys.executable, EXECUTORCH_WORKER, n, "", runs, dict(os.environ))
    return {"wall_s": wall, "rss_mb": sum(o["rss_kb"] for o in outs) / 1024}


def connect_costs(repeats: int) -> dict:
    """Time for Runtime.get() in a fresh process: no daemon (it starts one) vs a warm one."""
    code = textwrap.dedent("""
        import json, sys, time
        import etclient
        t0 = time.perf_counter()
        etclient.Runtime.get(sys.argv[1])
        print(json.dumps({"connect_s": time.perf_counter() - t0}))
    """)
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="et-ci-") as tmp:
            os.chmod(tmp, 0o700)
            sock = os.path.join(tmp, "s.sock")
            env = {k: v for k, v in os.environ.items() if not k.startswith("ETSERVER_")}
            env.update(ETSERVER_BIN=str(SERVERD), ETSERVER_IDLE_EXIT="5")
            for target in (cold, warm):
                out = subprocess.run([str(CLIENT_PY), "-c", code, sock], env=env,
                                     capture_output=True, text=True, check=True)
                target.append(json.loads(out.stdout)["connect_s"] * 1e3)
            for pid in daemon_pids(sock):
                os.kill(pid, 15)
            time.sleep(0.3)
    return {"cold_ms": statistics.median(cold), "warm_ms": statistics.median(warm)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="executes per process")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    rows = []
    for n in args.processes:
        ours, theirs = through_daemon(n, args.runs), in_process(n, args.runs)
        bare = through_daemon(n, args.runs, ETCLIENT_STDLIB_WORKER)
        rows.append((n, ours, bare, theirs))
        print(n, ours, bare, theirs, flush=True)
    connect = connect_costs(5)
    print(connect, flush=True)
    lines = [
        f"The CI scenario: N processes started at once, each loads {MODEL.name} and runs it "
        f"{args.runs} times. `.venv-export/bin/python benchmarks/ci_scenario.py`, "
        f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"executorch {importlib.metadata.version('executorch')}. Wall: launch until the "
        "last process finished; memory: the sum of every process's peak RSS, et-serverd's "
        "included (started by the first client, counted in both).",
        "",
        "Two kinds of test process use et-serverd: one that imports numpy (for its "
        "input and checks; numpy alone is 16 MiB of each process here) and one that "
        "needs nothing but etclient (the .npy input read with the standard library). The "
        "executorch.runtime processes need torch and numpy.",
        "",
        "| processes | test processes | et-serverd wall (s) | executorch.runtime wall (s) | "
        "wall ratio | et-serverd memory (MiB) | executorch.runtime memory (MiB) | memory ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, ours, bare, theirs in rows:
        for kind, mine in (("etclient + numpy", ours), ("etclient only", bare)):
            lines.append(f"| {n} | {kind} | {mine['wall_s']:.2f} | {theirs['wall_s']:.2f} | "
                         f"{theirs['wall_s'] / mine['wall_s']:.1f}x less | {mine['rss_mb']:.0f} "
                         f"(daemon {mine['daemon_mb']:.0f}) | {theirs['rss_mb']:.0f} | "
                         f"{theirs['rss_mb'] / mine['rss_mb']:.1f}x less |")
    lines += ["", f"Starting the daemon: `Runtime.get()` in a new process took "
                  f"{connect['cold_ms']:.1f} ms with no daemon running (it started one) and "
                  f"{connect['warm_ms']:.1f} ms with a warm one (medians of 5): auto-start adds "
                  f"{connect['cold_ms'] - connect['warm_ms']:.1f} ms."]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
