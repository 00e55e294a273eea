"""The container image (deploy/container/build-image): built with buildah from scratch,
then run with podman, a client on the host reaching the daemon through the mounted
socket directory (gRPC, and the fast path's memfd across the container's boundary)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import etclient
from conftest import DEADLINE_S, MODELS, ROOT, built_tool, wait_until

IMAGE = f"localhost/et-serverd-test:{os.getpid()}"
# vfs: storage that works in any container this test may itself run in; runc: crun
# refuses hosts whose cgroups are in hybrid mode (this machine's).
STORAGE = ["--storage-driver", "vfs"]
PODMAN = ["podman", *STORAGE, "--runtime", "runc"]


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture(scope="module")
def image():
    built = run(str(ROOT / "deploy" / "container" / "build-image"),
                str(built_tool("et-serverd", "server")), IMAGE,
                env={**os.environ, "BUILDAH_ARGS": " ".join(STORAGE)})
    assert built.returncode == 0, built
    yield IMAGE
    run(*PODMAN, "rmi", "-f", IMAGE)


def test_image_is_the_daemon_alone_as_a_non_root_user(image):
    info = json.loads(run("buildah", *STORAGE, "inspect", "--type", "image", image).stdout)
    config = info["Docker"]["config"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["/usr/bin/et-serverd"]
    assert set(config["Volumes"]) == {"/run/et-serverd", "/models"}
    assert config["Healthcheck"]["Test"] == ["CMD", "/usr/bin/et-serverd", "--check",
                                             "/run/et-serverd/et-serverd.sock"]
    # No base image: one layer, and no shell in it.
    assert len(info["Docker"]["rootfs"]["diff_ids"]) == 1


def test_runs_as_its_own_user_with_no_options(image):
    """The image alone: its user (65532) owns the socket and model volumes it makes."""
    name = f"et-serverd-plain-{os.getpid()}"
    started = run(*PODMAN, "run", "-d", "--name", name, "--network", "none",
                  "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", image)
    assert started.returncode == 0, started
    try:
        def serving():
            check = run(*PODMAN, "exec", name, "/usr/bin/et-serverd", "--check",
                        "/run/et-serverd/et-serverd.sock")
            return check if check.returncode == 0 else None

        check = wait_until(serving, lambda: f"the container to serve: {run(*PODMAN, 'logs', name)}")
        assert check.stdout.strip() == "SERVING"
        assert run(*PODMAN, "healthcheck", "run", name).returncode == 0
    finally:
        run(*PODMAN, "rm", "-f", name)


def test_run_with_podman_and_call_from_the_host(image, tmp_path):
    sockets = tmp_path / "run"
    sockets.mkdir(mode=0o700)
    models = tmp_path / "models"
    models.mkdir()
    (models / "add.pte").write_bytes((MODELS / "add.pte").read_bytes())
    name = f"et-serverd-test-{os.getpid()}"
    started = run(*PODMAN, "run", "-d", "--name", name, "--network", "none",
                  "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
                  "--user", f"{os.getuid()}:{os.getgid()}",
                  "-v", f"{sockets}:/run/et-serverd", "-v", f"{models}:/models:ro", image)
    assert started.returncode == 0, started
    try:
        sock = sockets / "et-serverd.sock"
        serverd = str(built_tool("et-serverd", "server"))
        wait_until(lambda: run(serverd, "--check", str(sock)).returncode == 0,
                   lambda: f"the container to serve: {run(*PODMAN, 'logs', name)}")
        # No shell in the image: only what build-image put there.
        shell = run(*PODMAN, "exec", name, "/bin/sh", "-c", "true")
        assert shell.returncode != 0
        # The host's client, through the mounted directory: a fast-path channel's memfd
        # and the descriptor socket cross into the container.
        rt = etclient.Runtime(str(sock), spawn=False, transport="fast")
        method = rt.load_program(MODELS / "add.pte").load_method("forward")
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        out = method.execute([a, np.ones((2, 3), np.float32)])
        np.testing.assert_array_equal(np.asarray(out[0]), a + 1)
        assert method.transport == "fast"
        del method, rt
        health = run(*PODMAN, "healthcheck", "run", name)
        assert health.returncode == 0, health
        logs = run(*PODMAN, "logs", name)
        assert "model add version 1 loaded from /models/add.pte" in logs.stdout + logs.stderr
    finally:
        stopped = run(*PODMAN, "stop", "-t", f"{DEADLINE_S:.0f}", name)  # SIGKILL after that (exit 137)
        exit_code = run(*PODMAN, "inspect", name, "--format", "{{.State.ExitCode}}").stdout.strip()
        run(*PODMAN, "rm", "-f", name)
    assert stopped.returncode == 0 and exit_code == "0", (stopped, exit_code)
