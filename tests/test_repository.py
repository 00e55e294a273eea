"""The model repository as operators use it (docs/operations.md): a daemon following a
directory in poll mode while files are added, rewritten, half-written, corrupted and
removed under it, seen through the stock Triton client; explicit mode's requests; and
gRPC health through a daemon's start and stop."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tritonclient.utils import InferenceServerException

from conftest import DEADLINE_S, MODELS, accepts, built_tool, wait_until
from kserve_support import kserve_daemon

POLL = ("--model-control-mode", "poll", "--repository-poll-secs", "0")


def eventually(check, timeout=DEADLINE_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def served_version(client, name):
    try:
        return client.get_model_metadata(name).versions[0]
    except InferenceServerException:
        return None


def index_of(client):
    return [(m.name, m.version, m.state, m.reason)
            for m in client.get_model_repository_index().models]


def add_inputs(a, b):
    inputs = []
    for i, value in enumerate((a, b)):
        t = grpcclient.InferInput(f"input__{i}", [2, 3], "FP32")
        t.set_data_from_numpy(np.full((2, 3), value, np.float32))
        inputs.append(t)
    return inputs


def test_poll_mode_follows_the_directory(tmp_path):
    repo = tmp_path / "models"
    repo.mkdir()
    with kserve_daemon(models=repo, http=False, control=POLL) as (url, log, _):
        client = grpcclient.InferenceServerClient(url)
        assert index_of(client) == []

        # A new file is a new model, version 1.
        shutil.copy(MODELS / "add.pte", repo / "add.pte")
        assert eventually(lambda: served_version(client, "add") == "1"), log.read_text()
        out = client.infer("add", add_inputs(1, 2)).as_numpy("output__0")
        np.testing.assert_array_equal(out, np.full((2, 3), 3, np.float32))

        # Rewritten with other content (mlp: one input): version 2.
        shutil.copy(MODELS / "mlp.pte", repo / "add.pte")
        assert eventually(lambda: served_version(client, "add") == "2"), log.read_text()
        assert len(client.get_model_metadata("add").inputs) == 1
        with pytest.raises(InferenceServerException, match="no version '1'"):
            client.get_model_metadata("add", "1")

        # Corrupted: reported in the index and the log; version 2 is still served.
        (repo / "add.pte").write_bytes(b"\0" * 64)
        assert eventually(lambda: any(v == "3" and s == "UNAVAILABLE" and "not an ExecuTorch program" in r
                                      for n, v, s, r in index_of(client) if n == "add")), \
            index_of(client)
        assert served_version(client, "add") == "2"
        assert "model add version 3" in log.read_text()

        # Half-written and still open: not read until its writer closes it.
        whole = (MODELS / "add.pte").read_bytes()
        with open(repo / "late.pte", "wb") as f:
            f.write(whole[: len(whole) // 2])
            f.flush()
            time.sleep(1.0)  # several settle periods
            assert served_version(client, "late") is None
            assert not any(n == "late" and s == "UNAVAILABLE" and r != "not loaded"
                           for n, v, s, r in index_of(client)), index_of(client)
            f.write(whole[len(whole) // 2:])
        assert eventually(lambda: served_version(client, "late") == "1"), log.read_text()
        assert not re.search(r"model late .* did not load", log.read_text())

        # Triton's layout beside the flat one: the newest version directory is served,
        # and removing it falls back to the one before.
        (repo / "cnn" / "1").mkdir(parents=True)
        shutil.copy(MODELS / "cnn.pte", repo / "cnn" / "1" / "model.pte")
        assert eventually(lambda: served_version(client, "cnn") == "1"), log.read_text()
        (repo / "cnn" / "4").mkdir()
        shutil.copy(MODELS / "cnn.pte", repo / "cnn" / "4" / "model.pte")
        assert eventually(lambda: served_version(client, "cnn") == "4"), log.read_text()
        assert client.get_model_config("cnn").config.default_model_filename == "model.pte"
        shutil.rmtree(repo / "cnn" / "4")
        assert eventually(lambda: served_version(client, "cnn") == "1"), log.read_text()

        # Removed: no longer served. Requests to change the repository are refused in
        # poll mode (the directory decides).
        (repo / "late.pte").unlink()
        assert eventually(lambda: not client.is_model_ready("late")), log.read_text()
        with pytest.raises(InferenceServerException, match="explicit"):
            client.load_model("late")


def test_a_call_running_on_a_version_keeps_it(tmp_path):
    """A model replaced while calls run (the same program, other bytes: a new version
    that takes the same inputs): every call answers, from one version or the other,
    and none fails."""
    repo = tmp_path / "models"
    repo.mkdir()
    shutil.copy(MODELS / "add.pte", repo / "add.pte")
    with kserve_daemon(models=repo, http=False, control=POLL) as (url, log, _):
        client = grpcclient.InferenceServerClient(url)
        assert served_version(client, "add") == "1"
        errors, done, swapped = [], threading.Event(), threading.Event()
        answered = {"1": 0, "2": 0}  # calls answered by each version
        lock = threading.Lock()

        def caller():
            c = grpcclient.InferenceServerClient(url)
            while not done.is_set():
                try:
                    version = c.infer("add", add_inputs(1, 2)).get_response().model_version
                    with lock:
                        answered[version] += 1
                except Exception as e:  # noqa: BLE001 (any failure counts)
                    errors.append(repr(e))

        def answered_by(version):
            with lock:
                return answered[version] > 10

        threads = [threading.Thread(target=caller) for _ in range(4)]
        for t in threads:
            t.start()
        wait_until(lambda: answered_by("1"), lambda: f"calls to version 1: {answered} {errors[:3]}")
        tmp = repo / ".add.pte.tmp"  # written aside, renamed in: what deploy tools do
        shutil.copy(MODELS / "add.pte", tmp)
        with open(tmp, "ab") as f:
            f.write(b"\0" * 16)  # other bytes, same program: a new version
        os.rename(tmp, repo / "add.pte")
        assert eventually(lambda: served_version(client, "add") == "2"), log.read_text()
        wait_until(lambda: answered_by("2"), lambda: f"calls to version 2: {answered} {errors[:3]}")
        done.set()
        for t in threads:
            t.join()
        assert errors == []
        assert answered["1"] > 10 and answered["2"] > 10, answered
        out = client.infer("add", add_inputs(2, 2)).as_numpy("output__0")
        np.testing.assert_array_equal(out, np.full((2, 3), 4, np.float32))


def test_explicit_mode_loads_only_what_it_is_asked(tmp_path):
    repo = tmp_path / "models"
    repo.mkdir()
    for name in ("add", "mlp"):
        shutil.copy(MODELS / f"{name}.pte", repo / f"{name}.pte")
    (repo / "broken.pte").write_bytes(b"not a program")
    with kserve_daemon(models=repo, http=False,
                       control=("--model-control-mode", "explicit", "--load-model", "add")) as (
            url, log, _):
        client = grpcclient.InferenceServerClient(url)
        assert client.is_model_ready("add") and not client.is_model_ready("mlp")
        assert ("mlp", "", "UNAVAILABLE", "not loaded") in index_of(client)
        client.load_model("mlp")
        assert client.is_model_ready("mlp")
        with pytest.raises(InferenceServerException, match="broken"):
            client.load_model("broken")
        with pytest.raises(InferenceServerException, match="no model 'nothing'"):
            client.load_model("nothing")
        client.unload_model("add")
        assert not client.is_model_ready("add")


def test_none_mode_refuses_repository_requests(tmp_path):
    repo = tmp_path / "models"
    repo.mkdir()
    shutil.copy(MODELS / "add.pte", repo / "add.pte")
    with kserve_daemon(models=repo, http=False, control=()) as (url, log, _):
        client = grpcclient.InferenceServerClient(url)
        assert client.is_model_ready("add")
        shutil.copy(MODELS / "mlp.pte", repo / "mlp.pte")
        time.sleep(0.5)
        assert not client.is_model_ready("mlp")  # not followed
        with pytest.raises(InferenceServerException, match="mode 'none'"):
            client.load_model("mlp")


def test_bad_flags_are_refused_with_the_reason(tmp_path):
    serverd = built_tool("et-serverd", "server")
    for args, words in [(["--model-control-mode", "sometimes"], "give none, poll or explicit"),
                        (["--models", str(tmp_path), "--load-model", "add"], "explicit"),
                        (["--model-control-mode", "poll"], "need --models"),
                        (["--models", str(tmp_path / "missing")], "not a directory")]:
        r = subprocess.run([serverd, "--socket", str(tmp_path / "s.sock"), *args],
                           capture_output=True, text=True, timeout=DEADLINE_S)
        assert r.returncode != 0 and words in (r.stdout + r.stderr), (args, r)


def test_health_is_not_serving_while_loading_and_stopping(tmp_path):
    """gRPC health through a daemon's life, by Watch (what probes that follow it use):
    NOT_SERVING while the repository loads, SERVING, then NOT_SERVING from the moment
    SIGTERM arrives, and the stream ends saying the daemon is stopping (that update is
    delivered before the server shuts down, however busy the machine)."""
    # A repository that takes a while to load: programs padded with sparse zeros (no disk
    # used), each read and hashed in full, where a client connects within tens of
    # milliseconds of the socket appearing. On a busy machine the Watch may still come
    # after the load: then the loading phase went unseen (no failure of the daemon's),
    # and the next try pads twice as much, until one sees it.
    S, N = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
    add = (MODELS / "add.pte").read_bytes()
    serverd = built_tool("et-serverd", "server")
    for attempt in range(3):  # 96, 192, 384 MiB a program
        repo = tmp_path / f"models-{attempt}"
        repo.mkdir()
        for i in range(8):
            with open(repo / f"m{i}.pte", "wb") as f:
                f.write(add + i.to_bytes(8, "little"))
                f.truncate((96 << 20) << attempt)
        sock = tmp_path / f"s{attempt}.sock"
        proc = subprocess.Popen([serverd, "--socket", sock, "--models", repo, "--log-level", "warn"])
        try:
            wait_until(lambda: accepts(sock), "et-serverd to listen", running=[proc])
            seen, end = [], None
            with grpc.insecure_channel(f"unix:{sock}") as channel:
                stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(),
                                                                    timeout=3 * DEADLINE_S)
                try:
                    for update in stream:
                        seen.append(update.status)
                        if update.status == S:
                            proc.send_signal(signal.SIGTERM)
                except grpc.RpcError as e:
                    end = e
            assert S in seen, seen
            assert seen[seen.index(S) + 1:] == [N], seen
            assert end is not None and end.code() == grpc.StatusCode.UNAVAILABLE, end
            assert "et-serverd is stopping" in end.details(), end
            assert proc.wait(timeout=DEADLINE_S) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        if seen[0] == N:
            break
    assert seen[0] == N, f"never NOT_SERVING while loading, in {attempt + 1} tries: {seen}"
