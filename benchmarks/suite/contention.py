"""Scenario 11: contention, the robot's machine is never idle.

The fixed-rate loops of scenario 2 (add and MLP at 1 kHz, MobileNetV2 with XNNPACK at
50 Hz), first on an idle machine, then with as many CPU-burning processes as the
machine has CPUs (`scripts/busy`'s burners: shell loops at the contenders' own
priority) started before the warm-up and stopped after the last contender. Contenders,
interleaved: the C++ client (robot_node) on the fast path and over gRPC, the same
with the real-time class on both sides (a daemon started with `--rt fifo:10 --rt-cpus 0`,
robot_node with `--rt fifo:20 --rt-cpus 1`: pinned apart, so both sides poll; where the
machine allows it), our runtime in-process (et-bench), etclient on the fast path,
executorch.runtime in-process (the peer), and the hand-off floor (`handoff-floor`: two
processes handing a counter back and forth through a futex at the same rate, no daemon,
protocol or model: what any call between processes at an ordinary priority costs). Under
load, the real-time class also runs add and MLP for a minute each at 1 kHz (the
issue's test of missed periods). Missed periods: calls robot_node could not start on time (its period is 1/rate;
a call that overruns delays the next), from its count of calls made. The targets
(issue 43) compare each contender under load with executorch.runtime under the same
load."""

from __future__ import annotations

import contextlib
import os
import subprocess

from . import harness as h
from .latency import cells, in_process, rate_name, robot_node

CASES = [("add", 1000), ("mlp", 1000), ("mobilenet_v2_xnnpack", 50)]
CONTENDERS = {"cpp_fast": "C++ fast path", "cpp_grpc": "C++ gRPC", "cpp_fast_rt": "C++ fast path, real-time",
              "in_process": "in-process (ours)",
              "py_fast": "etclient fast", "executorch": "executorch.runtime",
              "handoff": "hand-off floor"}
HANDOFF_FLOOR = h.BUILD / "benchmarks" / "handoff-floor"
BURNER = 'while :; do i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; done'


@contextlib.contextmanager
def burners(n: int):
    procs = [subprocess.Popen(["sh", "-c", BURNER]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def missed(r: dict, hz: int, seconds: float) -> int:
    return max(0, round(hz * seconds) - int(r.get("calls", 0)))


def pinned_apart() -> tuple[list, list]:
    """The daemon's and the client's --rt-cpus: the first two CPUs this process may use,
    one each (docs/operations.md, "Real-time class"); none on a single CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return [], []
    return ["--rt-cpus", str(cpus[0])], ["--rt-cpus", str(cpus[1])]


RT_CLIENT = ["--rt", "fifo:20"] + pinned_apart()[1]


@contextlib.contextmanager
def real_time_daemon():
    """A daemon in the real-time class, or None where this machine does not allow it
    (et-serverd --rt refuses to start: docs/operations.md, "Real-time class")."""
    try:
        daemon = h.Daemon(args=["--rt", "fifo:10"] + pinned_apart()[0])
    except Exception as e:  # noqa: BLE001 (refused: the reason is logged)
        h.log("contention", "no real-time class here:", str(e).splitlines()[-1][:200])
        yield None
        return
    with daemon:
        yield daemon


def measure(daemon: h.Daemon, rt_daemon: h.Daemon | None, ours: h.Worker, peer: h.Worker, model: str,
            hz: int, s: h.Settings) -> dict:
    path, inputs = h.MODELS / f"{model}.pte", h.inputs_of(model)

    def py(worker, who, mode, transport=""):
        return lambda: worker.ask(op="latency", who=who, model=path, inputs=inputs, mode=mode, transport=transport,
                                  socket=daemon.socket, hz=hz, seconds=s.seconds)

    def node(transport, on=daemon, extra=None):
        def run():
            r = robot_node(on, model, transport, hz, s.seconds, extra)
            r["missed"] = missed(r, hz, s.seconds)
            return r
        return run

    rt = {"cpp_fast_rt": node("fast", rt_daemon, RT_CLIENT)} if rt_daemon else {}
    return h.interleaved(s.repeats, {
        "cpp_fast": node("fast"), "cpp_grpc": node("grpc"), **rt,
        "in_process": lambda: in_process(model, hz, s.seconds),
        "py_fast": py(ours, "etclient", "numpy", "fast"),
        "executorch": py(peer, "executorch", "torch"),
        "handoff": lambda: h.run_json([HANDOFF_FLOOR, "--hz", hz, "--seconds", s.seconds])})


def run(s: h.Settings) -> h.Section:
    section = h.Section("contention", "11. Under contention (a busy machine)", h.prose(__doc__))
    cases = [("add", 1000)] if s.quick else CASES
    cpus = len(os.sched_getaffinity(0))
    rows, minutes = [], []
    for load in (0, cpus):
        with burners(load), h.Daemon() as daemon, real_time_daemon() as rt_daemon, \
                h.Worker(h.CLIENT_PY) as ours, h.Worker(h.PEER_PY) as peer:
            for model, hz in cases:
                r = measure(daemon, rt_daemon, ours, peer, model, hz, s)
                rows.append((load, model, hz, r))
                h.log(section.name, load, model, hz, {c: round(v["p99_us"], 1) for c, v in r.items()})
            if load and rt_daemon:
                seconds = 2.0 if s.quick else 60.0
                for model, hz in [c for c in cases if c[1] >= 1000]:
                    r = robot_node(rt_daemon, model, "fast", hz, seconds, RT_CLIENT)
                    minutes.append((model, hz, seconds, r, missed(r, hz, seconds)))
                    h.log(section.name, "real-time minute", model, r["p99_us"], missed(r, hz, seconds))
    section.table(
        f"Cells: p50 / p99 / max in microseconds. Busy: {cpus} CPU-burning processes on {cpus} CPUs. "
        "Missed: periods robot_node missed (fast path / gRPC), of rate x seconds.",
        ["busy", "model", "rate"] + list(CONTENDERS.values())
        + ["C++ fast p99 / executorch p99", "missed (fast / gRPC)"],
        [[load, model, rate_name(hz)] + [cells(r[c]) if c in r else "not allowed here" for c in CONTENDERS]
         + [f"{r['cpp_fast']['p99_us'] / r['executorch']['p99_us']:.2f}x",
            f"{r['cpp_fast']['missed']} / {r['cpp_grpc']['missed']}"] for load, model, hz, r in rows])
    for load, model, hz, r in rows:
        key = f"{'busy' if load else 'idle'}.{model}.{rate_name(hz).replace(' ', '')}"
        for c in [c for c in CONTENDERS if c in r]:
            for q in ("p50_us", "p99_us"):
                section.metric(f"{key}.{c}.{q}", r[c][q], "us")
        for c in [c for c in ("cpp_fast", "cpp_grpc", "cpp_fast_rt") if c in r]:
            section.metric(f"{key}.{c}.missed", r[c]["missed"], "calls")
    if minutes:
        section.table(
            f"The real-time class beside {cpus} burners, one run each (fast path, robot_node "
            f"--rt fifo:20 {' '.join(pinned_apart()[1])}, daemon --rt fifo:10 {' '.join(pinned_apart()[0])}).",
            ["model", "rate", "seconds", "p50 / p99 / max (us)", "missed periods"],
            [[model, rate_name(hz), f"{sec:.0f}", cells(r), str(m)] for model, hz, sec, r, m in minutes])
        for model, hz, _, r, m in minutes:
            section.metric(f"busy.{model}.{rate_name(hz).replace(' ', '')}.rt_minute.p99_us", r["p99_us"], "us")
            section.metric(f"busy.{model}.{rate_name(hz).replace(' ', '')}.rt_minute.missed", m, "calls")
    return section
