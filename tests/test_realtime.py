"""The real-time class (docs/operations.md, "Real-time class"). Where the kernel does
not allow it (RLIMIT_RTPRIO 0, no CAP_SYS_NICE), et-serverd --rt and robot_node --rt
refuse to start with an error naming what allows it; where RLIMIT_RTPRIO does (as
systemd's LimitRTPRIO= gives it), the daemon's fast-path channel threads and compute
workers run at SCHED_FIFO, its other threads stay ordinary, and a real-time client's
calls are answered. The process limits and capabilities are set with the real
setrlimit and setpriv(1)."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import etclient
from conftest import DEADLINE_S, MODELS, accepts, built_tool, wait_until

SCHED_OTHER, SCHED_FIFO = 0, 1


CAP_IPC_LOCK, CAP_SYS_NICE, CAP_SYS_RESOURCE = 14, 23, 24


def capabilities() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0


def without_sys_nice(command: list) -> list:
    """Root keeps CAP_SYS_NICE across exec unless the bounding set loses it first."""
    if capabilities() & (1 << CAP_SYS_NICE):
        return ["setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice", "--", *command]
    return command


def confined(command: list) -> tuple[list, object]:
    """`command` run as an ordinary user runs: RLIMIT_RTPRIO 0 and no CAP_SYS_NICE."""
    return without_sys_nice(command), lambda: resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))


def allowed(command: list, priority: int) -> tuple[list, object] | None:
    """`command` allowed `priority` by RLIMIT_RTPRIO alone (as systemd's LimitRTPRIO=
    allows it) where this process can set that limit; else by CAP_SYS_NICE where it has
    that; else None."""
    hard = resource.getrlimit(resource.RLIMIT_RTPRIO)[1]
    if hard == resource.RLIM_INFINITY or hard >= priority:
        return without_sys_nice(command), lambda: resource.setrlimit(resource.RLIMIT_RTPRIO, (priority, hard))
    if capabilities() & (1 << CAP_SYS_RESOURCE):
        return without_sys_nice(command), lambda: resource.setrlimit(resource.RLIMIT_RTPRIO,
                                                                       (priority, priority))
    if capabilities() & (1 << CAP_SYS_NICE):
        return command, None
    return None


def test_the_daemon_refuses_a_real_time_class_it_may_not_enter():
    with tempfile.TemporaryDirectory(prefix="et-rt-") as tmp:
        sock = Path(tmp) / "s.sock"
        command, limit = confined([built_tool("et-serverd", "server"), "--socket", sock,
                                   "--rt", "fifo:10"])
        done = subprocess.run(command, preexec_fn=limit, capture_output=True, text=True,
                              timeout=DEADLINE_S)
        out = done.stdout + done.stderr
        assert done.returncode == 2, out
        assert "--rt: cannot run threads as SCHED_FIFO priority 10: Operation not permitted" in out, out
        assert "RLIMIT_RTPRIO is 0" in out and "CAP_SYS_NICE" in out, out
        assert "LimitRTPRIO=10" in out, out
        assert not sock.exists(), "the daemon listened before refusing"


def test_the_daemon_refuses_to_lock_memory_under_a_finite_limit():
    with tempfile.TemporaryDirectory(prefix="et-rt-") as tmp:
        sock = Path(tmp) / "s.sock"
        command = [built_tool("et-serverd", "server"), "--socket", sock, "--rt-mlock"]
        if capabilities() & (1 << CAP_IPC_LOCK):
            command = ["setpriv", "--bounding-set", "-ipc_lock", "--inh-caps", "-ipc_lock", "--",
                       *command]
        hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
        limit = 64 << 20 if hard == resource.RLIM_INFINITY else min(64 << 20, hard)
        done = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_S,
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_MEMLOCK, (limit, hard)))
        out = done.stdout + done.stderr
        assert done.returncode == 2, out
        assert f"--rt-mlock: RLIMIT_MEMLOCK is {limit} bytes" in out, out
        assert "LimitMEMLOCK=infinity" in out and "CAP_IPC_LOCK" in out, out
        assert not sock.exists(), "the daemon listened before refusing"


def test_a_client_refuses_a_real_time_class_it_may_not_enter():
    command, limit = confined([built_tool("robot_node", "client/cpp"), MODELS / "add.pte",
                               "--rt", "fifo:20"])
    done = subprocess.run(command, preexec_fn=limit, capture_output=True, text=True,
                          timeout=DEADLINE_S)
    assert done.returncode == 2, done.stderr
    assert "robot_node: --rt: cannot run threads as SCHED_FIFO priority 20" in done.stderr
    assert "RLIMIT_RTPRIO" in done.stderr


def threads_of(pid: int) -> dict[str, list[int]]:
    """Thread name -> the scheduling policies of the threads of that name."""
    found: dict[str, list[int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            stat = (task / "stat").read_text()
        except OSError:
            continue  # the thread ended
        fields = stat[stat.rindex(")") + 2:].split()
        found.setdefault(name, []).append(int(fields[38]))  # field 41: policy
    return found


@contextlib.contextmanager
def real_time_daemon(tmp: str, extra: list | None = None):
    sock, log_path = Path(tmp) / "s.sock", Path(tmp) / "daemon.log"
    command, limit = allowed([built_tool("et-serverd", "server"), "--socket", sock,
                              "--rt", "fifo:10", "--threads", "2", "--log-level", "info",
                              *(extra or [])], 10)
    with open(log_path, "w+") as log:
        proc = subprocess.Popen(command, preexec_fn=limit, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until(lambda: accepts(sock), lambda: f"et-serverd to listen: {log_path.read_text()}",
                       running=[proc])
            yield proc, sock, log_path
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=DEADLINE_S) == 0


@pytest.mark.skipif(allowed([], 20) is None,
                    reason="needs an RLIMIT_RTPRIO hard limit of 20, CAP_SYS_RESOURCE or CAP_SYS_NICE")
def test_an_allowed_class_runs_channel_and_compute_threads_at_sched_fifo():
    with tempfile.TemporaryDirectory(prefix="et-rt-") as tmp, real_time_daemon(tmp) as (proc, sock, log):
        assert "real-time class SCHED_FIFO priority 10" in log.read_text()
        rt = etclient.Runtime(sock, transport="fast", spawn=False)
        method = rt.load_program(MODELS / "add.pte").load_method("forward")
        inputs = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]
        np.testing.assert_array_equal(np.asarray(method.execute(inputs)[0]), inputs[0] + inputs[1])
        def with_channel_thread():
            found = threads_of(proc.pid)
            return found if "et-fast" in found else None

        threads = wait_until(with_channel_thread, "the session's fast-path channel thread")
        assert set(threads["et-fast"]) == {SCHED_FIFO}, threads
        assert set(threads["et-pool-1"]) == {SCHED_FIFO}, threads
        stat = Path(f"/proc/{proc.pid}/task/{proc.pid}/stat").read_text()
        main_policy = int(stat[stat.rindex(")") + 2:].split()[38])
        assert main_policy == SCHED_OTHER, threads  # the rest stay ordinary

        # A real-time client at a higher priority, under the same limit.
        command, limit = allowed([built_tool("robot_node", "client/cpp"), MODELS / "add.pte",
                                  "--socket", sock, "--rt", "fifo:20", "--hz", "0",
                                  "--seconds", "0.2"], 20)
        done = subprocess.run(command, preexec_fn=limit, capture_output=True, text=True,
                              timeout=DEADLINE_S)
        assert done.returncode == 0, done.stderr
        assert '"transport": "fast"' in done.stdout, done.stdout


def spun(port: int) -> float:
    """How many requests the daemon's channel threads found while polling."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=DEADLINE_S) as r:
        text = r.read().decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "et_serverd_fast_path_waits_total" and sample.labels == {"how": "spun"}:
                return sample.value
    raise AssertionError(f"no et_serverd_fast_path_waits_total{{how=\"spun\"}} in:\n{text}")


def free_running_client(sock: Path, cpus: list[str]) -> None:
    """A real-time robot_node calling back to back for a moment (on `cpus`, if any)."""
    pin = ["--rt-cpus", cpus[0]] if cpus else []
    command, limit = allowed([built_tool("robot_node", "client/cpp"), MODELS / "add.pte",
                              "--socket", sock, "--rt", "fifo:20", *pin, "--hz", "0",
                              "--seconds", "0.2"], 20)
    done = subprocess.run(command, preexec_fn=limit, capture_output=True, text=True,
                          timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr
    assert '"transport": "fast"' in done.stdout, done.stdout


@pytest.mark.skipif(allowed([], 20) is None,
                    reason="needs an RLIMIT_RTPRIO hard limit of 20, CAP_SYS_RESOURCE or CAP_SYS_NICE")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to pin the two sides apart")
@pytest.mark.parametrize("pinned", [True, False], ids=["pinned-apart", "not-pinned"])
def test_real_time_threads_poll_only_when_pinned_to_different_cpus(pinned):
    """port/realtime.h, realtime_polls_beside: a real-time channel thread pinned to one CPU
    polls for a real-time caller pinned to another (sparing both the wake-up); unpinned,
    it never polls (it could keep the caller off its CPU)."""
    daemon_cpu, client_cpu = [str(c) for c in sorted(os.sched_getaffinity(0))[:2]]
    extra = ["--metrics", "127.0.0.1:0"] + (["--rt-cpus", daemon_cpu] if pinned else [])
    with tempfile.TemporaryDirectory(prefix="et-rt-") as tmp, \
            real_time_daemon(tmp, extra) as (proc, sock, log):
        port = int(wait_until(lambda: re.search(r"metrics on .*\(port (\d+)\)", log.read_text()),
                              "the metrics port in the log").group(1))
        if pinned:
            # The caller answers at once, so some request comes while the thread polls.
            def polled():
                free_running_client(sock, [client_cpu])
                return spun(port) > 0

            wait_until(polled, "the pinned channel thread to find a request while polling")
        else:
            for _ in range(3):
                free_running_client(sock, [])
            assert spun(port) == 0, "a real-time channel thread polled beside an unpinned caller"
