"""What every scenario shares: paths, a daemon to measure against, persistent worker
processes (one per Python environment), interleaved repetitions and the statistics
of a run. Nothing here knows a scenario."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "models"
BUILD = ROOT / "build"
SERVERD = BUILD / "server" / "et-serverd"
ET_BENCH = BUILD / "tools" / "et-bench"
ROBOT_NODE = BUILD / "client" / "cpp" / "robot_node"
CLIENT_PY = ROOT / ".venv" / "bin" / "python"  # etclient, no torch
PEER_PY = ROOT / ".venv-export" / "bin" / "python"  # executorch, torch
CACHE = BUILD / "bench-cache"  # models the suite exports itself (large input)


@dataclasses.dataclass
class Settings:
    """How long and how often: --quick shrinks every scenario alike."""
    quick: bool = False
    seconds: float = 2.0  # per latency measurement
    repeats: int = 3  # interleaved runs of each contender

    @staticmethod
    def make(quick: bool) -> "Settings":
        return Settings(quick=True, seconds=0.5, repeats=2) if quick else Settings()


@dataclasses.dataclass
class Section:
    """What a scenario reports: its tables (for RESULTS.md), its metrics (flat keys for
    the targets table, the plots and --compare; `better` is "lower" or "higher")."""
    name: str
    title: str
    text: str = ""
    tables: list = dataclasses.field(default_factory=list)  # [{"caption", "columns", "rows"}]
    metrics: dict = dataclasses.field(default_factory=dict)  # key -> {"value", "unit", "better"}
    seconds: float = 0.0

    def table(self, caption: str, columns: list[str], rows: list[list]) -> None:
        self.tables.append({"caption": caption, "columns": columns, "rows": rows})

    def metric(self, key: str, value: float, unit: str, better: str = "lower") -> None:
        assert better in ("lower", "higher"), better
        self.metrics[f"{self.name}.{key}"] = {"value": float(value), "unit": unit, "better": better}


def nearest_rank(sorted_values: list[float], p: float) -> float:
    """The smallest value with a fraction p of the values at or below it (with fewer
    than 100 values, p99 is the largest)."""
    rank = math.ceil(p * len(sorted_values))
    return sorted_values[min(max(rank, 1), len(sorted_values)) - 1]


def combine(runs: list[dict]) -> dict:
    """Repeated runs as one: medians of every number, except max (the largest)."""
    out = {}
    for key in runs[0]:
        values = [r[key] for r in runs if key in r]
        if isinstance(values[0], (int, float)):
            out[key] = max(values) if key.startswith("max") else statistics.median(values)
        else:
            out[key] = values[0]
    out["repeats"] = len(runs)
    return out


def interleaved(repeats: int, contenders: dict[str, Callable[[], dict]], pause: float = 0.3) -> dict[str, dict]:
    """Runs each contender `repeats` times, taking turns (A B C A B C ...) so that a noisy
    neighbour slows all of them alike, and combines each one's runs. `pause` seconds
    between turns let the last contender's threads go idle (OpenMP and thread pools
    spin for a while after their work) before the next one is timed."""
    runs: dict[str, list] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, measure in contenders.items():
            time.sleep(pause)
            runs[name].append(measure())
    return {name: combine(r) for name, r in runs.items()}


def json_outputs(procs: list, what: str, timeout: float) -> list[dict]:
    """The last stdout line, as JSON, of each process started with stdout and stderr
    piped; the first that fails raises with its stderr. None is left running."""
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            if p.returncode != 0:
                raise RuntimeError(f"{what} failed ({p.returncode}):\n{err[-3000:]}")
            outs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return outs


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def inputs_of(model: str) -> list[Path]:
    """The recorded inputs of a fixture's forward (tests/models/NAME/forward.inK.npy)."""
    return sorted((MODELS / model).glob("forward.in*.npy"), key=lambda p: int(p.stem.split("in")[-1]))


def run_json(args: list, env: dict | None = None, timeout: float = 1800) -> dict:
    """Runs a command that prints one JSON line last; a failure raises with its stderr."""
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def et_bench(model: str | Path, iterations: int, warmup: int = 5, threads: int | None = None,
             hz: int = 0, inputs: list[Path] | None = None, extra: list | None = None) -> dict:
    """This project's runtime in-process (tools/et-bench): the model's own compute."""
    path = model if isinstance(model, Path) else MODELS / f"{model}.pte"
    args = [ET_BENCH, path, "--iterations", iterations, "--warmup", warmup, "--hz", hz]
    for p in (inputs if inputs is not None else inputs_of(path.stem)):
        args += ["--input", p]
    env = dict(os.environ)
    if threads:
        env["ET_NUM_THREADS"] = str(threads)
    return run_json(args + (extra or []), env=env)


class Daemon:
    """An et-serverd of this build on a private socket, optionally serving a model
    directory and the KServe services; started ready, stopped with SIGTERM."""

    def __init__(self, models: list[str | Path] | None = None, kserve: bool = False, args: list | None = None):
        self.tmp = Path(tempfile.mkdtemp(prefix="et-bench-"))
        os.chmod(self.tmp, 0o700)
        self.socket = self.tmp / "d.sock"
        self.log = self.tmp / "daemon.log"
        cmd = [SERVERD, "--socket", self.socket, "--log-level", "info"]
        if models:
            repo = self.tmp / "models"
            repo.mkdir()
            for m in models:
                src = m if isinstance(m, Path) else MODELS / f"{m}.pte"
                shutil.copy(src, repo / src.name)
            cmd += ["--models", repo]
        if kserve:
            cmd += ["--kserve-grpc", "127.0.0.1:0", "--kserve-http", "127.0.0.1:0"]
        cmd += args or []
        with open(self.log, "w") as log_file:
            self.proc = subprocess.Popen([str(c) for c in cmd], stdout=log_file, stderr=subprocess.STDOUT)
        self.kserve_grpc = self.kserve_http = 0
        try:
            self._wait_ready(kserve)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, kserve: bool) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = self.log.read_text()
            if re.search(r"\bready \(\d+ models served", text) and self.socket.exists():
                if kserve:
                    self.kserve_grpc = int(re.search(r"KServe v2 gRPC listening on \S+ \(port (\d+)\)", text)[1])
                    self.kserve_http = int(re.search(r"KServe v2 HTTP listening on \S+ \(port (\d+)\)", text)[1])
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"et-serverd did not start:\n{self.log.read_text()[-3000:]}")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> "Daemon":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class Worker:
    """A long-lived Python process (benchmarks/suite/worker.py) in one environment that
    keeps its imports and loaded methods between requests, so contenders can take turns
    without paying an import or a load each time."""

    def __init__(self, python: Path, env: dict | None = None):
        script = Path(__file__).with_name("worker.py")
        self.errors = tempfile.TemporaryFile("w+")  # the libraries' chatter; shown when the worker dies
        self.proc = subprocess.Popen([str(python), str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errors, text=True, env=env, bufsize=1)

    def ask(self, **request) -> dict:
        self.send(**request)
        return self.receive(request)

    def send(self, **request) -> None:
        """Sends a request without waiting: workers asked at once measure at once."""
        self.proc.stdin.write(json.dumps(request, default=str) + "\n")
        self.proc.stdin.flush()

    def receive(self, request: dict | None = None) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.errors.seek(0)
            raise RuntimeError(f"benchmark worker exited ({code}) on {request}:\n{self.errors.read()[-3000:]}")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"benchmark worker: {reply['error']} on {request}")
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.errors.close()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def log(*parts) -> None:
    print("  ", *parts, file=sys.stderr, flush=True)


def prose(doc: str) -> str:
    """A module docstring without its title line, each paragraph on one line."""
    paragraphs = [" ".join(p.split()) for p in doc.strip().split("\n\n")]
    return "\n\n".join(p for p in paragraphs[1:] if p)
