"""Scenario 4: the CI scenario (docs/ci.md).

N test processes start at once; each loads MobileNetV2 (XNNPACK) and runs it 10 times.
With etclient, the first process finds no daemon and starts one (`Runtime.get()`), and
the daemon's start and peak memory are counted; with executorch.runtime, every process
loads the runtime, torch and the model itself. Two kinds of etclient process: one that
imports numpy for its input and checks, one that needs nothing but etclient (the .npy
read with the standard library). Wall: launch until the last process finished; memory:
the sum of every process's peak RSS, the daemon's included."""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

from . import harness as h

MODEL = h.MODELS / "mobilenet_v2_xnnpack.pte"
INPUT = h.inputs_of("mobilenet_v2_xnnpack")[0]

ETCLIENT_WORKER = textwrap.dedent("""
    import json, resource, sys
    import numpy as np
    import etclient
    method = etclient.Runtime.get(sys.argv[1]).load_program(sys.argv[2]).load_method()
    x = np.load(sys.argv[3])
    for _ in range(int(sys.argv[4])):
        out = np.asarray(method.execute([x])[0])
    assert out.shape[-1] == 1000, out.shape
    print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
""")

STDLIB_WORKER = textwrap.dedent("""
    import ast, json, resource, sys
    import etclient
    method = etclient.Runtime.get(sys.argv[1]).load_program(sys.argv[2]).load_method()
    raw = open(sys.argv[3], "rb").read()
    header_len = int.from_bytes(raw[8:10], "little")
    header = ast.literal_eval(raw[10:10 + header_len].decode())
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    x = memoryview(raw[10 + header_len:]).cast("f", header["shape"])
    for _ in range(int(sys.argv[4])):
        out = memoryview(method.execute([x])[0])
    assert out.shape[-1] == 1000, out.shape
    print(json.dumps({"rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
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


def launch(python, code: str, n: int, sock: str, runs: int, env: dict) -> tuple[float, list]:
    start = time.perf_counter()
    procs = [subprocess.Popen([str(python), "-c", code, sock, str(MODEL), str(INPUT), str(runs)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(n)]
    outs = h.json_outputs(procs, "a test process", timeout=1800)
    return time.perf_counter() - start, outs


def through_daemon(n: int, runs: int, worker: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="et-ci-") as tmp:
        os.chmod(tmp, 0o700)
        sock = os.path.join(tmp, "s.sock")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ETSERVER_")}
        env.update(ETSERVER_BIN=str(h.SERVERD), ETSERVER_IDLE_EXIT="5")
        wall, outs = launch(h.CLIENT_PY, worker, n, sock, runs, env)
        pids = daemon_pids(sock)
        try:
            assert len(pids) == 1, f"expected one daemon, found {pids}"
            daemon_kb = h.peak_rss_kb(pids[0])
        finally:
            for pid in pids:
                os.kill(pid, 15)
            time.sleep(0.5)
    return {"wall_s": wall, "rss_mb": (sum(o["rss_kb"] for o in outs) + daemon_kb) / 1024,
            "daemon_mb": daemon_kb / 1024}


def in_process(n: int, runs: int) -> dict:
    wall, outs = launch(h.PEER_PY, EXECUTORCH_WORKER, n, "", runs, dict(os.environ))
    return {"wall_s": wall, "rss_mb": sum(o["rss_kb"] for o in outs) / 1024}


CONNECT = textwrap.dedent("""
    import json, sys, time
    import etclient
    t0 = time.perf_counter()
    etclient.Runtime.get(sys.argv[1])
    print(json.dumps({"connect_ms": (time.perf_counter() - t0) * 1e3}))
""")


def connect_costs(repeats: int) -> dict:
    """Runtime.get() in a fresh process: with no daemon (it starts one) and with a warm one."""
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="et-ci-") as tmp:
            os.chmod(tmp, 0o700)
            sock = os.path.join(tmp, "s.sock")
            env = {k: v for k, v in os.environ.items() if not k.startswith("ETSERVER_")}
            env.update(ETSERVER_BIN=str(h.SERVERD), ETSERVER_IDLE_EXIT="5")
            for target in (cold, warm):
                target.append(h.run_json([h.CLIENT_PY, "-c", CONNECT, sock], env=env)["connect_ms"])
            for pid in daemon_pids(sock):
                os.kill(pid, 15)
            time.sleep(0.3)
    return {"cold_ms": statistics.median(cold), "warm_ms": statistics.median(warm)}


def run(s: h.Settings) -> h.Section:
    section = h.Section("ci", "4. CI: N test processes against one auto-started daemon", h.prose(__doc__))
    counts = [4] if s.quick else [1, 4, 16]
    runs, rows = 10, []
    h.interleaved(1, {"numpy": lambda: through_daemon(1, runs, ETCLIENT_WORKER),  # discarded: warms the
                      "stdlib": lambda: through_daemon(1, runs, STDLIB_WORKER),  # page cache for all
                      "executorch": lambda: in_process(1, runs)})
    for n in counts:
        r = h.interleaved(1 if s.quick else 2, {
            "numpy": lambda: through_daemon(n, runs, ETCLIENT_WORKER),
            "stdlib": lambda: through_daemon(n, runs, STDLIB_WORKER),
            "executorch": lambda: in_process(n, runs)})
        h.log(section.name, n, {k: (round(v["wall_s"], 2), round(v["rss_mb"])) for k, v in r.items()})
        theirs = r["executorch"]
        for kind, label in (("numpy", "etclient + numpy"), ("stdlib", "etclient only")):
            mine = r[kind]
            rows.append([n, label, f"{mine['wall_s']:.2f}", f"{theirs['wall_s']:.2f}",
                         f"{theirs['wall_s'] / mine['wall_s']:.1f}x less", f"{mine['rss_mb']:.0f} (daemon "
                         f"{mine['daemon_mb']:.0f})", f"{theirs['rss_mb']:.0f}",
                         f"{theirs['rss_mb'] / mine['rss_mb']:.1f}x less"])
            section.metric(f"n{n}.{kind}.wall_s", mine["wall_s"], "s")
            section.metric(f"n{n}.{kind}.rss_mb", mine["rss_mb"], "MiB")
            section.metric(f"n{n}.{kind}.wall_ratio", theirs["wall_s"] / mine["wall_s"], "x", "higher")
            section.metric(f"n{n}.{kind}.rss_ratio", theirs["rss_mb"] / mine["rss_mb"], "x", "higher")
        section.metric(f"n{n}.executorch.wall_s", theirs["wall_s"], "s")
        section.metric(f"n{n}.executorch.rss_mb", theirs["rss_mb"], "MiB")
    connect = connect_costs(2 if s.quick else 5)
    section.metric("autostart.cold_ms", connect["cold_ms"], "ms")
    section.metric("autostart.warm_ms", connect["warm_ms"], "ms")
    section.text += (f"\n\nStarting the daemon: `Runtime.get()` in a new process took {connect['cold_ms']:.1f} ms "
                     f"with no daemon running (it started one) and {connect['warm_ms']:.1f} ms with a warm one "
                     f"(medians): auto-start adds {connect['cold_ms'] - connect['warm_ms']:.1f} ms.")
    section.table(f"{runs} executes per process; medians of the interleaved runs.",
                  ["processes", "test process", "et-serverd wall (s)", "executorch.runtime wall (s)", "wall ratio",
                   "et-serverd memory (MiB)", "executorch.runtime memory (MiB)", "memory ratio"], rows)
    return section
