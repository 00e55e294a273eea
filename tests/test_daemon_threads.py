"""How many compute threads et-serverd starts with when nobody says: one per physical
core it may run on, so a daemon pinned with taskset (or limited by a container's CPU
quota) does not start threads that only wait for each other."""

from __future__ import annotations

import os
import re
import signal
import subprocess

from conftest import built_tool, wait_until


def started_threads(tmp_path, prefix: list[str], env: dict | None = None) -> int:
    sock_dir = tmp_path / "d"
    sock_dir.mkdir(mode=0o700)
    log = tmp_path / "daemon.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([*prefix, built_tool("et-serverd", "server"), "--socket",
                                 sock_dir / "s.sock", "--log-level", "info"],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            found = wait_until(lambda: re.search(r"\((\d+) compute threads\)", log.read_text()),
                               lambda: f"et-serverd to say its thread count: {log.read_text()}",
                               running=[proc])
            return int(found.group(1))
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0


def without_thread_settings() -> dict:
    return {k: v for k, v in os.environ.items() if k != "ET_NUM_THREADS"}


def test_a_daemon_pinned_to_one_cpu_starts_one_thread(tmp_path):
    assert started_threads(tmp_path, ["taskset", "-c", "0"], without_thread_settings()) == 1


def test_et_num_threads_overrides_the_default(tmp_path):
    env = dict(without_thread_settings(), ET_NUM_THREADS="3")
    assert started_threads(tmp_path, ["taskset", "-c", "0"], env) == 3
