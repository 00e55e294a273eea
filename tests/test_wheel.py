"""The zero-setup CI path end to end, as a new user runs it: a fresh virtual
environment, one pip install of the repaired wheel (et-serverd inside), and
`pytest -n 16` on the example test file, with no daemon running, no ETSERVER_BIN and no
et-serverd on PATH. One daemon is started, serves all sixteen workers and exits."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MODELS, ROOT, daemons_on, session_held, wait_until

# What a manylinux wheel may take from the system (the rest must be vendored).
SYSTEM_LIBRARIES = {"linux-vdso.so.1", "ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6",
                    "libstdc++.so.6", "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2",
                    "librt.so.1", "libz.so.1"}


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    """A new venv with the repaired wheel, pytest and pytest-xdist installed: nothing else."""
    tmp = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([ROOT / "scripts" / "build-wheel", tmp / "dist"], capture_output=True,
                           text=True, timeout=1800)
    assert built.returncode == 0, built.stdout + built.stderr
    wheels = list((tmp / "dist").glob("etclient-*manylinux*.whl"))
    assert len(wheels) == 1, f"no repaired (manylinux) wheel: {built.stdout}"
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
    pip = subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", wheels[0],
                          "pytest", "pytest-xdist"], capture_output=True, text=True, timeout=900)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return venv


def installed_daemon(venv: Path) -> Path:
    out = subprocess.run([venv / "bin" / "python", "-c",
                          "import etclient, os; print(os.path.dirname(etclient.__file__))"],
                         capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
    return Path(out.stdout.strip()) / "bin" / "et-serverd"


def test_the_installed_daemon_needs_only_base_system_libraries(fresh_venv):
    daemon = installed_daemon(fresh_venv)
    assert os.access(daemon, os.X_OK), f"{daemon} is missing or not executable"
    ldd = subprocess.run(["ldd", daemon], capture_output=True, text=True, check=True).stdout
    assert "not found" not in ldd, ldd
    from_system = set()
    for line in ldd.splitlines():
        name = line.split()[0]
        if "etclient.libs" not in line:
            from_system.add(Path(name).name)
    assert from_system <= SYSTEM_LIBRARIES, f"taken from the system: {from_system - SYSTEM_LIBRARIES}"
    assert "etclient.libs" in ldd  # gRPC, protobuf, XNNPACK ... come with the wheel


def test_pytest_n16_in_a_fresh_venv_starts_one_daemon_that_exits(fresh_venv, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir(mode=0o700)
    sock = run_dir / "s.sock"
    shutil.copy(ROOT / "examples" / "ci" / "test_with_et_serverd.py", tmp_path / "test_example.py")
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp"),
           "ETSERVER_IDLE_EXIT": "2", "ET_MODELS": str(MODELS)}
    try:
        with session_held(sock):  # one daemon however far apart a busy machine runs the workers
            result = subprocess.run(
                [fresh_venv / "bin" / "python", "-m", "pytest", "-n", "16", "-p", "no:cacheprovider",
                 "--et-serverd-socket", str(sock), str(tmp_path / "test_example.py")],
                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        assert re.search(r"\b33 passed\b", result.stdout), result.stdout[-2000:]
        log = (run_dir / "s.sock.log").read_text()
        assert log.count("listening on") == 1, log
        pids = daemons_on(sock)
        if pids:  # still idling: the wheel's daemon, not the build's
            assert Path(f"/proc/{pids[0]}/exe").resolve() == installed_daemon(fresh_venv).resolve()
        wait_until(lambda: not daemons_on(sock), "the daemon to exit when idle")
        assert not sock.exists()
    finally:
        for pid in daemons_on(sock):
            os.kill(pid, 9)
