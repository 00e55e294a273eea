"""systemd integration as systemd itself sees it: the units in deploy/systemd/ checked by
`systemd-analyze verify`, the daemon started by the real `systemd-socket-activate` on
its first connection, both sockets handed over as a socket unit does, and the notify
protocol (Type=notify: READY, STOPPING, the watchdog) read from a NOTIFY_SOCKET of
the test's own."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

import etclient
from conftest import DEADLINE_S, MODELS, ROOT, built_tool, wait_until

SERVERD = built_tool("et-serverd", "server")
UNITS = ROOT / "deploy" / "systemd"


def units_in(folder: Path, source: Path, instance: str = "") -> list[Path]:
    """The units of `source`, with the service naming the built daemon, in `folder`
    (templates as the instance `instance`, as systemctl would load them)."""
    folder.mkdir()
    out = []
    for unit in sorted(source.glob("et-serverd*")):
        if not unit.is_file() or unit.suffix not in (".in", ".socket"):
            continue
        target = folder / unit.name.removesuffix(".in").replace("@.", f"@{instance}.")
        target.write_text(unit.read_text().replace("@ET_SERVERD@", str(SERVERD)))
        out.append(target)
    return out


@pytest.mark.parametrize("scope", ["system", "user"])
def test_units_pass_systemd_analyze_verify(tmp_path, scope):
    if scope == "system":  # a template: one instance per user the daemon serves
        units = units_in(tmp_path / "units", UNITS, "root")
        assert {u.name for u in units} == {"et-serverd@root.socket", "et-serverd@root.service"}
    else:
        units = units_in(tmp_path / "units", UNITS / "user")
        assert {u.name for u in units} == {"et-serverd.socket", "et-serverd.service"}
    runtime = tmp_path / "xdg"
    runtime.mkdir(mode=0o700)
    args = ["systemd-analyze", *(["--user"] if scope == "user" else []), "verify", *map(str, units)]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60,
                       env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})
    # verify exits 0 on unknown keys and bad values: it only warns. Both count here.
    assert r.returncode == 0 and r.stdout + r.stderr == "", r


def add_inputs():
    return [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)]


def wait_until_serving(sock: Path, daemon: subprocess.Popen):
    """`et-serverd --check` until SERVING: NOT_SERVING while the repository loads, and no
    answer in the check's own few seconds while a busy machine starts the daemon."""
    def check():
        ok = subprocess.run([SERVERD, "--check", str(sock)], capture_output=True, text=True,
                            timeout=60)
        assert ok.returncode in (0, 1, 2), ok
        return ok if ok.returncode == 0 else None

    ok = wait_until(check, "et-serverd --check to say SERVING", running=[daemon])
    assert ok.stdout.strip() == "SERVING", ok


def listens(path: Path) -> bool:
    """Whether a socket listens at `path`, seen without connecting to it (a connection
    would start a socket-activated daemon): /proc/net/unix, flag __SO_ACCEPTCON."""
    lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    return any(f[-1] == str(path) and int(f[3], 16) & 0x10000 for f in map(str.split, lines) if len(f) == 8)


def test_started_by_systemd_socket_activate_on_first_connection(tmp_path):
    """The gRPC socket made by systemd-socket-activate, the daemon started when the first
    client connects (the descriptor socket it binds itself)."""
    sock = tmp_path / "s.sock"
    models = tmp_path / "models"
    models.mkdir()
    (models / "add.pte").write_bytes((MODELS / "add.pte").read_bytes())
    log = open(tmp_path / "daemon.log", "w+")
    activator = subprocess.Popen(
        ["systemd-socket-activate", "-l", str(sock), "--fdname=grpc", str(SERVERD),
         "--socket", str(sock), "--models", str(models), "--log-level", "info"],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: listens(sock), lambda: (tmp_path / "daemon.log").read_text(),
                   running=[activator])
        assert "listening on" not in (tmp_path / "daemon.log").read_text()  # not started yet
        wait_until_serving(sock, activator)  # the first connection starts it
        text = (tmp_path / "daemon.log").read_text()
        assert "(sockets from systemd)" in text, text
        rt = etclient.Runtime(str(sock), spawn=False)
        out = rt.load_program(models / "add.pte").load_method("forward").execute(add_inputs())
        np.testing.assert_array_equal(np.asarray(out[0]), add_inputs()[0] + 1)
        del rt
    finally:
        activator.send_signal(signal.SIGTERM)  # systemd-socket-activate execs the daemon
        assert activator.wait(timeout=60) == 0, (tmp_path / "daemon.log").read_text()
    # The socket file is systemd's: the daemon leaves it.
    assert sock.exists()


def listening(path: Path, kind) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, kind)
    s.bind(str(path))
    s.listen(64)
    return s


def test_both_sockets_and_the_notify_protocol(tmp_path):
    """What a socket unit and Type=notify do, done here as systemd does them: the two
    listening sockets passed as descriptors 3 and 4 (LISTEN_FDS, LISTEN_PID,
    LISTEN_FDNAMES), and a NOTIFY_SOCKET the daemon reports to."""
    sock = tmp_path / "s.sock"
    grpc_sock = listening(sock, socket.SOCK_STREAM)
    fd_sock = listening(Path(f"{sock}.fd"), socket.SOCK_SEQPACKET)
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(DEADLINE_S)
    env = {**os.environ, "NOTIFY_SOCKET": str(tmp_path / "notify"), "WATCHDOG_USEC": "200000",
           "LISTEN_FDNAMES": "et-serverd.socket:et-serverd.socket"}
    a, b = grpc_sock.fileno(), fd_sock.fileno()
    # LISTEN_PID and WATCHDOG_PID name the daemon: the shell's pid, which exec keeps.
    script = (f'exec 3<&{a} 4<&{b} {a}<&- {b}<&-; LISTEN_PID=$$ WATCHDOG_PID=$$ LISTEN_FDS=2 '
              f'exec "$0" --socket "$1" --log-level info')
    log = open(tmp_path / "daemon.log", "w+")
    proc = subprocess.Popen(["bash", "-c", script, str(SERVERD), str(sock)], env=env,
                            pass_fds=(a, b), stdout=log, stderr=subprocess.STDOUT)
    grpc_sock.close()
    fd_sock.close()
    try:
        messages = []
        while not any("READY=1" in m for m in messages):
            messages.append(notify.recv(4096).decode())
        assert any(m.startswith("READY=1") and "STATUS=serving" in m for m in messages), messages
        # The watchdog: pinged again and again (at half of WATCHDOG_USEC: how many come in
        # a second is the machine's speed as much, so that is not counted).
        pings = 0
        while pings < 3:
            pings += notify.recv(4096).decode() == "WATCHDOG=1"
        # Both sockets work: the fast path goes through the descriptor socket.
        rt = etclient.Runtime(str(sock), spawn=False, transport="fast")
        method = rt.load_program(MODELS / "add.pte").load_method("forward")
        out = method.execute(add_inputs())
        np.testing.assert_array_equal(np.asarray(out[0]), add_inputs()[0] + 1)
        assert method.transport == "fast", (tmp_path / "daemon.log").read_text()
        del method, rt
        proc.send_signal(signal.SIGTERM)
        stopping = []
        while not any(m.startswith("STOPPING=1") for m in stopping):
            stopping.append(notify.recv(4096).decode())
        assert proc.wait(timeout=60) == 0, (tmp_path / "daemon.log").read_text()
        assert sock.exists() and Path(f"{sock}.fd").exists()  # systemd's files stay
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_socket_of_the_wrong_kind_is_refused(tmp_path):
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(tmp_path / "d.sock"))
    d = dgram.fileno()
    r = subprocess.run(["bash", "-c", f'exec 3<&{d} {d}<&-; LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" '
                        f'--socket "$1"', str(SERVERD), str(tmp_path / "s.sock")],
                       pass_fds=(d,), capture_output=True, text=True, timeout=DEADLINE_S)
    assert r.returncode == 1 and "socket activation: socket 0" in r.stdout + r.stderr, r
