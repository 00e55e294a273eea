"""Zero-setup use (docs/ci.md): a client that finds no daemon starts one, processes
starting at once share it, and it exits by itself once idle, leaving nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import MODELS, built_tool, daemons_on, session_held, wait_until

# A client process: connects (starting the daemon if needed), runs add once, prints OK.
CLIENT = textwrap.dedent("""
    import array, sys
    import etclient
    runtime = etclient.Runtime.get(sys.argv[1])
    x = memoryview(array.array("f", [1, 2, 3, 4, 5, 6])).cast("B").cast("f", (2, 3))
    out = runtime.load_program(sys.argv[2]).load_method().execute([x, x])[0]
    assert memoryview(out).tolist() == [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]], memoryview(out).tolist()
    print("OK")
""")


@pytest.fixture
def private_dir(tmp_path):
    d = tmp_path / "run"
    d.mkdir(mode=0o700)
    yield d
    for pid in daemons_on(d / "s.sock"):  # never leave one behind, whatever failed
        os.kill(pid, 9)


def spawn_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ETSERVER_")}
    env["ETSERVER_BIN"] = str(built_tool("et-serverd", "server"))
    env.update(extra)
    return env


def test_sixteen_processes_at_once_start_one_daemon_that_exits_when_idle(private_dir):
    sock = private_dir / "s.sock"
    shm_before = set(os.listdir("/dev/shm"))
    # Every process starts its daemon with --idle-exit 2 (Runtime.get's default is 300).
    code = CLIENT.replace("etclient.Runtime.get(sys.argv[1])",
                          "etclient.Runtime(sys.argv[1], idle_exit=2)")
    with session_held(sock):  # the 16 share it however far apart a busy machine starts them
        procs = [subprocess.Popen([sys.executable, "-c", code, str(sock), str(MODELS / "add.pte")],
                                  env=spawn_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(16)]
        results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    for out, err, rc in results:
        assert rc == 0 and out.strip() == "OK", err
    log = (private_dir / "s.sock.log").read_text()
    assert log.count("listening on") == 1, log
    assert log.count("session") >= 16, log
    # Then it goes by itself: socket removed, process gone, nothing left in /dev/shm.
    wait_until(lambda: not daemons_on(sock), "the daemon to exit when idle")
    assert not sock.exists() and not Path(str(sock) + ".fd").exists()
    assert "no session for 2 s (--idle-exit)" in (private_dir / "s.sock.log").read_text()
    # Other tests' KServe regions (pytest-xdist runs them beside this one) are not its.
    left = {n for n in set(os.listdir("/dev/shm")) - shm_before if not n.startswith("et_kserve_test_")}
    assert left == set()


def test_a_client_arriving_while_the_daemon_exits_is_served(private_dir):
    # Connect again and again just as the idle daemon (--idle-exit 1) decides to exit:
    # each client is served, by the old daemon or by a new one it starts. At least 8
    # rounds, and on until the log shows an exit (a busy machine may need more).
    sock = private_dir / "s.sock"
    code = textwrap.dedent("""
        import array, gc, sys, time
        import etclient
        x = memoryview(array.array("f", [1, 2, 3, 4, 5, 6])).cast("B").cast("f", (2, 3))
        for i in range(int(sys.argv[3])):
            runtime = etclient.Runtime(sys.argv[1], idle_exit=1)
            out = runtime.load_program(sys.argv[2]).load_method().execute([x, x])[0]
            assert memoryview(out).tolist() == [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]
            del runtime, out
            gc.collect()
            time.sleep((0.9, 1.0, 1.1, 1.2, 1.3, 1.5)[i % 6])  # before, at and after its exit
            if i >= 7 and "--idle-exit" in open(sys.argv[1] + ".log").read():
                break
        print("OK")
    """)
    result = subprocess.run([sys.executable, "-c", code, str(sock), str(MODELS / "add.pte"), "60"],
                            env=spawn_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.strip() == "OK", result.stderr
    log = (private_dir / "s.sock.log").read_text()
    assert log.count("--idle-exit") >= 1, "no exit was raced: the test proved nothing\n" + log


def test_spawn_off_gives_the_no_daemon_error(private_dir):
    result = subprocess.run([sys.executable, "-c", CLIENT, str(private_dir / "s.sock"),
                             str(MODELS / "add.pte")], env=spawn_env(ETSERVER_SPAWN="0"),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "is the daemon running" in result.stderr, result.stderr
    assert not daemons_on(private_dir / "s.sock")


def test_with_nothing_set_the_daemon_the_package_ships_is_started(private_dir):
    # One pip install is the whole setup: no ETSERVER_BIN, no et-serverd on PATH.
    import etclient

    bundled = Path(etclient.__file__).parent / "bin" / "et-serverd"
    assert bundled.is_file(), f"the installed etclient ships no daemon at {bundled}"
    env = spawn_env()
    del env["ETSERVER_BIN"]
    env["PATH"] = "/usr/bin:/bin"
    sock = private_dir / "s.sock"
    code = CLIENT.replace("etclient.Runtime.get(sys.argv[1])",
                          "etclient.Runtime(sys.argv[1], idle_exit=1)")
    result = subprocess.run([sys.executable, "-c", code, str(sock), str(MODELS / "add.pte")],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "OK", result.stderr
    pids = daemons_on(sock)
    if pids:  # still idling: it must be the package's binary
        assert Path(f"/proc/{pids[0]}/exe").resolve() == bundled.resolve()
    assert "listening on" in (private_dir / "s.sock.log").read_text()
    wait_until(lambda: not daemons_on(sock), "the daemon to exit when idle")


def test_a_daemon_that_cannot_start_is_reported_with_its_log(private_dir):
    # A "binary" that fails at once: the client quotes the end of the daemon's log.
    fake = private_dir / "et-serverd"
    fake.write_text("#!/bin/sh\necho 'et-serverd: cannot listen: disk on fire' >&2\nexit 3\n")
    fake.chmod(0o700)
    result = subprocess.run([sys.executable, "-c", CLIENT, str(private_dir / "s.sock"),
                             str(MODELS / "add.pte")], env=spawn_env(ETSERVER_BIN=str(fake)),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "did not start" in result.stderr and "disk on fire" in result.stderr, result.stderr


def test_the_next_process_finds_the_program_loaded(private_dir):
    # Test processes that run one after another (a CI job's steps) send and parse a
    # program once: the daemon keeps it loaded after the first process ends.
    sock = private_dir / "s.sock"
    code = textwrap.dedent("""
        import json, sys
        import etclient
        runtime = etclient.Runtime(sys.argv[1], idle_exit=300)  # outlasts any gap between them
        runtime.load_program(sys.argv[2]).load_method()
        print(json.dumps(runtime.server_status()))
    """)
    statuses = []
    for _ in range(3):
        result = subprocess.run([sys.executable, "-c", code, str(sock),
                                 str(MODELS / "mobilenet_v2_xnnpack.pte")],
                                env=spawn_env(), capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        statuses.append(json.loads(result.stdout))
    assert [s["program_loads"] for s in statuses] == [1, 2, 3]
    assert [s["program_loads_shared"] for s in statuses] == [0, 1, 2]
    log = (private_dir / "s.sock.log").read_text()
    assert log.count(" loaded (") == 1, log
