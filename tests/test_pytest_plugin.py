"""The CI scenario as a user runs it: `pytest -n 16` over a test file that uses the
etclient pytest plugin, with no daemon running and no setup step. One daemon is
started by the first worker that needs it, shared by all sixteen, and exits by itself."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from conftest import MODELS, ROOT, built_tool, daemons_on, session_held, wait_until

EXAMPLE = ROOT / "examples" / "ci" / "test_with_et_serverd.py"


def test_sixteen_xdist_workers_share_one_auto_started_daemon(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    sock = run_dir / "s.sock"
    shutil.copy(EXAMPLE, tmp_path / "test_example.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETSERVER_")}
    env.update(ETSERVER_BIN=str(built_tool("et-serverd", "server")), ETSERVER_IDLE_EXIT="1",
               ET_MODELS=str(MODELS))
    try:
        with session_held(sock):  # one daemon however far apart a busy machine runs the workers
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-n", "16", "-p", "no:cacheprovider",
                 "--et-serverd-socket", str(sock), str(tmp_path / "test_example.py")],
                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert re.search(r"\b33 passed\b", result.stdout), result.stdout[-2000:]
        # The plugin's summary line: program loads from the 16 workers, all but the
        # first load of each program answered from the one the daemon had loaded.
        found = re.search(r"et-serverd \S+: up \d+ s; (\d+) program loads, (\d+) of them shared "
                          r"across processes \(loaded once\); (\d+) executes served",
                          result.stdout)
        assert found, result.stdout[-2000:]
        loads, shared, executes = map(int, found.groups())
        assert loads >= 2 and shared == loads - 1, found.group(0)
        assert executes == 32, found.group(0)
        log = (run_dir / "s.sock.log").read_text()
        assert log.count("listening on") == 1, log
        opened = len(re.findall(r"session \d+ opened", log))  # the workers' and session_held's
        assert opened >= 17, f"{opened} sessions: fewer than 16 workers reached the daemon\n{log}"
        wait_until(lambda: not daemons_on(sock), "the daemon to exit when idle")
        assert not sock.exists()
    finally:
        for pid in daemons_on(sock):
            os.kill(pid, 9)
