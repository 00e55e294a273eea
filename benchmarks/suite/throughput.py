"""Scenario 6: throughput.

N clients call at once, back to back: N C++ processes (robot_node, fast path), N Python
processes (etclient, fast path, numpy inputs) against one daemon, and N processes each
running executorch.runtime in-process (the peer: every process holds its own runtime and
model). Every client is loaded and warm before one shared window opens, and all measure
that window. Calls per second in all, and the worst p99 of any client. Every contender runs
with its default threading (the daemon's XNNPACK pool; ExecuTorch's per process)."""

from __future__ import annotations

import subprocess
import time

from . import harness as h

MODELS = ["mlp", "mobilenet_v2_xnnpack"]
CLIENTS = [1, 2, 4, 8, 16]


def cpp_clients(daemon: h.Daemon, model: str, n: int, seconds: float) -> dict:
    start_at = time.time() + 1.0 + 0.15 * n  # every node connected, loaded and warm by then
    procs = [subprocess.Popen([str(h.ROBOT_NODE), str(h.MODELS / f"{model}.pte"), "--socket", str(daemon.socket),
                               "--transport", "fast", "--hz", "0", "--seconds", str(seconds),
                               "--start-at", f"{start_at:.3f}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    return totals(h.json_outputs(procs, "robot_node", timeout=600), seconds)


def worker_clients(workers: list, request: dict) -> dict:
    for w in workers:  # loaded and warm first, so every client's window is the same
        w.send(**dict(request, op="prepare"))
    for w in workers:
        w.receive(request)
    start_at = time.time() + 0.5
    for w in workers:
        w.send(**dict(request, start_at=start_at, warmup=0))
    return totals([w.receive(request) for w in workers], request["seconds"])


def totals(results: list[dict], seconds: float) -> dict:
    """Calls per second of all clients in their shared window; a client that started
    late (it was not ready when the window opened) makes the window wrong, so it is an
    error rather than a number."""
    late = max(r.get("late_ms", 0.0) for r in results)
    if late > 0.1 * seconds * 1e3:
        raise RuntimeError(f"a client started {late:.0f} ms after the shared window opened")
    return {"calls_per_s": sum(r["calls_per_s"] for r in results), "p99_us": max(r["p99_us"] for r in results),
            "late_ms": late}


def run(s: h.Settings) -> h.Section:
    section = h.Section("throughput", "6. Throughput: N concurrent clients", h.prose(__doc__))
    models, clients = (["mlp"], [4]) if s.quick else (MODELS, CLIENTS)
    seconds = s.seconds
    rows = []
    with h.Daemon() as daemon:
        ours, peers = [], []
        try:
            ours += [h.Worker(h.CLIENT_PY) for _ in range(max(clients))]
            peers += [h.Worker(h.PEER_PY) for _ in range(max(clients))]
            for model in models:
                path, inputs = h.MODELS / f"{model}.pte", h.inputs_of(model)
                for n in clients:
                    ask_ours = dict(op="latency", who="etclient", model=path, inputs=inputs, mode="numpy",
                                    transport="fast", socket=daemon.socket, seconds=seconds)
                    ask_peer = dict(op="latency", who="executorch", model=path, inputs=inputs, mode="torch",
                                    seconds=seconds)
                    r = h.interleaved(min(s.repeats, 2), {
                        "cpp_fast": lambda: cpp_clients(daemon, model, n, seconds),
                        "py_fast": lambda: worker_clients(ours[:n], ask_ours),
                        "executorch": lambda: worker_clients(peers[:n], ask_peer)})
                    h.log(section.name, model, n, {k: round(v["calls_per_s"]) for k, v in r.items()})
                    rows.append([model, n] + [f"{r[k]['calls_per_s']:.0f} / {r[k]['p99_us']:.0f}"
                                              for k in ("cpp_fast", "py_fast", "executorch")]
                                + [f"{r['py_fast']['calls_per_s'] / r['executorch']['calls_per_s']:.2f}x"])
                    for k in ("cpp_fast", "py_fast", "executorch"):
                        section.metric(f"{model}.n{n}.{k}.calls_per_s", r[k]["calls_per_s"], "1/s", "higher")
                        section.metric(f"{model}.n{n}.{k}.p99_us", r[k]["p99_us"], "us")
        finally:
            for w in ours + peers:
                w.close()
    section.table("Cells: calls per second in all / worst p99 (us). Ratio: etclient calls/s over "
                  "executorch.runtime's.", ["model", "clients", "C++ fast path", "etclient fast path",
                                            "executorch.runtime (N processes)", "etclient / executorch"], rows)
    return section
