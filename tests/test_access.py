"""Who may use a daemon: a daemon shared with a group (--socket-group) run as a user of
its own, as an operator would run it for several users. Members are served (once they
name the daemon's user in ETSERVER_DAEMON_USER), everyone else is refused, by the file
system and, if that is loosened, by the daemon itself; each session belongs to the uid
that opened it (recorded and logged), and no other user can name it, not even with its
token. Needs root, to act as several users (CI runs as root)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import MODELS, built_tool, wait_until

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="acting as several users needs root")

DAEMON_UID, GROUP = 54500, 54400
MEMBER, OTHER_MEMBER, OUTSIDER = 54321, 54323, 54322

ADD = MODELS / "add.pte"
ADD_INPUTS = ["--input", str(MODELS / "add" / "forward.in0.npy"), "--input", str(MODELS / "add" / "forward.in1.npy")]


def as_user(uid: int, groups: list[int], argv: list[str], **env: str) -> subprocess.Popen:
    """`argv` run as `uid` (C++ tools: another user cannot run this checkout's Python,
    which lives under /root)."""
    environment = {"PATH": os.environ["PATH"], "HOME": "/tmp", "ETSERVER_SPAWN": "0", **env}
    return subprocess.Popen(argv, user=uid, group=uid, extra_groups=groups, env=environment,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def output(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    return out.strip().splitlines()[-1]


def run_add(uid: int, groups: list[int], sock: Path, transport: str, **env: str) -> tuple[int, str]:
    """Runs add.pte through libetclient as `uid`: (exit status, stderr)."""
    out = sock.parent.parent / f"out-{uid}"
    out.mkdir(exist_ok=True)
    os.chown(out, uid, uid)
    proc = as_user(uid, groups, [str(built_tool("etclient-run", "tests")), "--socket", str(sock), str(ADD),
                                 *ADD_INPUTS, "--output-dir", str(out)], ETSERVER_TRANSPORT=transport, **env)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


@pytest.fixture
def shared_daemon():
    """et-serverd as its own user, sharing its sockets with GROUP, in /run-like
    directory mode 0750 owned by that user and group."""
    with tempfile.TemporaryDirectory(prefix="et-access-") as tmp:
        os.chmod(tmp, 0o755)
        run = Path(tmp) / "run"
        run.mkdir(mode=0o750)
        os.chown(run, DAEMON_UID, GROUP)
        os.chmod(run, 0o750)
        sock = run / "et-serverd.sock"
        log_path = Path(tmp) / "daemon.log"
        log = open(log_path, "w")
        daemon = subprocess.Popen([str(built_tool("et-serverd", "server")), "--socket", str(sock), "--socket-group",
                                   str(GROUP)], user=DAEMON_UID, group=DAEMON_UID, extra_groups=[GROUP],
                                  stdout=log, stderr=subprocess.STDOUT, env={"PATH": os.environ["PATH"]})
        wait_until(lambda: "ready (" in log_path.read_text(), lambda: log_path.read_text(),
                   running=[daemon])
        try:
            yield Path(tmp), sock, log_path
        finally:
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=60) == 0, log_path.read_text()[-2000:]


@pytest.mark.parametrize("transport", ["fast", "grpc"])
def test_group_members_are_served_and_others_refused(shared_daemon, transport):
    tmp, sock, log_path = shared_daemon
    trust = {"ETSERVER_DAEMON_USER": str(DAEMON_UID)}
    assert oct(sock.stat().st_mode & 0o777) == "0o660" and sock.stat().st_gid == GROUP
    # A member who has not said whom to trust refuses a socket of another user.
    code, err = run_add(MEMBER, [GROUP], sock, transport)
    assert code == 1 and "ETSERVER_DAEMON_USER" in err, err
    code, err = run_add(MEMBER, [GROUP], sock, transport, **trust)
    assert code == 0, err
    assert re.search(rf"session \d+ opened \(.*\) by uid {MEMBER} pid \d+", log_path.read_text())
    # An outsider cannot reach the socket at all ...
    code, err = run_add(OUTSIDER, [], sock, transport, **trust)
    assert code == 1 and "ermission denied" in err, err
    # ... and with the directory and sockets opened up by mistake, the daemon refuses it.
    os.chmod(sock.parent, 0o755)
    for path in (sock, Path(str(sock) + ".fd")):
        os.chmod(path, 0o666)
    code, err = run_add(OUTSIDER, [], sock, transport, **trust)
    assert code == 1 and "may not use this et-serverd" in err, err
    assert f"uid {OUTSIDER}" in err and "--socket-group" in err, err


def test_a_session_token_is_of_no_use_to_another_user(shared_daemon):
    tmp, sock, log_path = shared_daemon
    token_file = str(tmp / "token")
    os.chmod(tmp, 0o777)  # both users pass the token through it
    probe = str(built_tool("session-probe", "tests"))
    trust = {"ETSERVER_DAEMON_USER": str(DAEMON_UID)}
    owner = as_user(MEMBER, [GROUP], [probe, "owner", str(sock), token_file], **trust)
    thief = as_user(OTHER_MEMBER, [GROUP], [probe, "thief", str(sock), token_file], **trust)
    stolen = json.loads(output(thief))
    own = json.loads(output(owner))
    assert own == {"own_list": "OK", "own_segment": "OK"}, own  # the token works for its user
    # UNAUTHENTICATED (16), as for a token no session has.
    assert stolen["list"].startswith("code 16: session: no open session has this token"), stolen
    assert "no open session has this token" in stolen["segment"], stolen
    log = log_path.read_text()
    assert f"refused (it belongs to uid {MEMBER})" in log and f"uid {OTHER_MEMBER}" in log, log[-2000:]
