"""The KServe v2 gRPC service refusing what it must refuse, with the protocol's status
codes and messages that name the tensor or region and what to do, and staying up:
unknown model or version, wrong datatype or shape, missing inputs, a region too small,
unknown, truncated, owned by another user, or planted as a symlink; and the life of
registrations (per user, released when their connections close). The stock
`tritonclient.grpc` client throughout.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

from conftest import DEADLINE_S, unix_connection, wait_until
from kserve_support import kserve_daemon, shm_key


@pytest.fixture(scope="module", params=["tcp", "unix"])
def server(request):
    with kserve_daemon(address="127.0.0.1:0" if request.param == "tcp" else "unix") as server:
        yield server


@pytest.fixture
def client(server):
    c = grpcclient.InferenceServerClient(server[0])
    yield c
    try:
        c.unregister_system_shared_memory()
    finally:
        c.close()


def add_inputs(a=None, b=None, datatype="FP32", shape=(2, 3)):
    a = np.ones(shape, np.float32) if a is None else a
    b = np.ones(shape, np.float32) if b is None else b
    out = []
    for name, x in (("input__0", a), ("input__1", b)):
        t = grpcclient.InferInput(name, list(x.shape), datatype)
        t.set_data_from_numpy(x)
        out.append(t)
    return out


def refused(call, status: str, *words: str):
    with pytest.raises(InferenceServerException) as err:
        call()
    text = str(err.value)
    assert status in str(err.value.status()), text
    for w in words:
        assert w in text, text
    return text


def still_serving(client):
    result = client.infer("add", add_inputs())
    np.testing.assert_array_equal(result.as_numpy("output__0"), np.full((2, 3), 2, np.float32))


def test_unknown_model_and_version(client):
    refused(lambda: client.infer("no_such_model", add_inputs()), "NOT_FOUND", "no_such_model",
            "RepositoryIndex")
    refused(lambda: client.infer("add", add_inputs(), model_version="7"), "NOT_FOUND",
            "no version '7'")
    refused(lambda: client.get_model_metadata("no_such_model"), "NOT_FOUND", "no_such_model")
    still_serving(client)


def test_the_timeout_parameter_is_microseconds(client):
    """Triton's `timeout` request parameter (microseconds) bounds the call in the daemon;
    one that is not a count of microseconds is refused by name."""
    refused(lambda: client.infer("add", add_inputs(), timeout=-1), "INVALID_ARGUMENT",
            "parameter 'timeout'", "microseconds")
    result = client.infer("add", add_inputs(), timeout=60_000_000, client_timeout=DEADLINE_S)
    np.testing.assert_array_equal(result.as_numpy("output__0"), np.full((2, 3), 2, np.float32))
    still_serving(client)


def test_wrong_datatype_shape_and_names(client):
    i64 = np.ones((2, 3), np.int64)
    refused(lambda: client.infer("add", add_inputs(i64, i64, "INT64")), "INVALID_ARGUMENT",
            "input__0", "datatype INT64 given, the model takes FP32")
    big = np.ones((4, 5), np.float32)
    refused(lambda: client.infer("add", add_inputs(big, big, shape=(4, 5))), "INVALID_ARGUMENT",
            "input__0")
    flat = np.ones(6, np.float32)
    refused(lambda: client.infer("add", add_inputs(flat, flat)), "INVALID_ARGUMENT", "input__0",
            "shape has 1 dims, the model's has 2")
    refused(lambda: client.infer("add", add_inputs()[:1]), "INVALID_ARGUMENT", "input__1",
            "missing")
    wrong = add_inputs()
    wrong[1] = grpcclient.InferInput("x", [2, 3], "FP32")
    wrong[1].set_data_from_numpy(np.ones((2, 3), np.float32))
    refused(lambda: client.infer("add", wrong), "INVALID_ARGUMENT", "'x'", "input__0, input__1")
    refused(lambda: client.infer("add", add_inputs(),
                                 outputs=[grpcclient.InferRequestedOutput("output__9")]),
            "INVALID_ARGUMENT", "output__9")
    still_serving(client)


def make_region(client, name, size, register_size=None):
    key = shm_key(name)
    handle = shm.create_shared_memory_region(name, key, size)
    client.register_system_shared_memory(name, key, register_size or size)
    return handle, key


def test_region_too_small_and_unknown(client):
    h, _ = make_region(client, "small", 8)
    try:
        inputs = add_inputs()
        inputs[0].set_shared_memory("small", 24)
        refused(lambda: client.infer("add", inputs), "INVALID_ARGUMENT", "small",
                "reaches past its 8 bytes")
        out = grpcclient.InferRequestedOutput("output__0")
        out.set_shared_memory("small", 8)
        refused(lambda: client.infer("add", add_inputs(), outputs=[out]), "INVALID_ARGUMENT",
                "output__0", "too small")
        inputs = add_inputs()
        inputs[0].set_shared_memory("never_registered", 24)
        refused(lambda: client.infer("add", inputs), "NOT_FOUND", "never_registered",
                "register_system_shared_memory")
        # Registering more than the object holds is refused at once.
        refused(lambda: client.register_system_shared_memory("over", shm_key("small"), 64),
                "OUT_OF_RANGE", "fewer than offset 0 + byte_size 64")
        refused(lambda: client.register_system_shared_memory("nothing", "/et_no_such_key", 8),
                "NOT_FOUND", "no such shared-memory object")
        refused(lambda: client.register_system_shared_memory("bad", "../etc/passwd", 8),
                "INVALID_ARGUMENT", "a key is '/'")
    finally:
        shm.destroy_shared_memory_region(h)
    still_serving(client)


def test_truncated_and_unlinked_regions_do_not_kill_the_daemon(client):
    h, key = make_region(client, "shrinks", 24)
    try:
        shm.set_shared_memory_region(h, [np.full((2, 3), 5, np.float32)])
        inputs = add_inputs()
        inputs[0].set_shared_memory("shrinks", 24)
        result = client.infer("add", inputs)
        np.testing.assert_array_equal(result.as_numpy("output__0"), np.full((2, 3), 6, np.float32))
        # The client truncates its object under the daemon: an error, not a SIGBUS.
        fd = os.open(f"/dev/shm{key}", os.O_RDWR)
        os.ftruncate(fd, 4)
        os.close(fd)
        refused(lambda: client.infer("add", inputs), "OUT_OF_RANGE", "shrinks", "truncated")
        out = grpcclient.InferRequestedOutput("output__0")
        out.set_shared_memory("shrinks", 24)
        refused(lambda: client.infer("add", add_inputs(), outputs=[out]), "OUT_OF_RANGE",
                "truncated")
    finally:
        shm.destroy_shared_memory_region(h)  # unlinked while still registered
    refused(lambda: client.infer("add", inputs), "OUT_OF_RANGE", "truncated")
    still_serving(client)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make an object another user owns "
                    "(CI runs as root; ShmRegion's C++ test covers the check without it)")
def test_region_owned_by_another_user_is_refused(client):
    key = shm_key("theirs")
    path = Path(f"/dev/shm{key}")
    path.write_bytes(b"\0" * 64)
    try:
        os.chown(path, 65534, 65534)  # nobody
        refused(lambda: client.register_system_shared_memory("theirs", key, 64),
                "PERMISSION_DENIED", "belongs to uid 65534")
    finally:
        path.unlink()
    still_serving(client)


def test_symlink_in_dev_shm_is_refused(client):
    target = Path(f"/dev/shm{shm_key('real')}")
    link = Path(f"/dev/shm{shm_key('link')}")
    target.write_bytes(b"\0" * 64)
    link.symlink_to(target)
    try:
        refused(lambda: client.register_system_shared_memory("link", shm_key("link"), 64),
                "PERMISSION_DENIED", "symbolic link")
    finally:
        link.unlink()
        target.unlink()


def regions_seen(client):
    return client.get_system_shared_memory_status(as_json=True).get("regions", {})


def own_connection(url):
    """A client on a connection of its own (grpcio otherwise shares one per target)."""
    return grpcclient.InferenceServerClient(url, channel_args=[("grpc.use_local_subchannel_pool", 1)])


def test_regions_are_per_connection_life_and_released_when_it_closes(server):
    first = own_connection(server[0])
    h, _ = make_region(first, "lives", 24)
    try:
        assert "lives" in regions_seen(first)
        # Another client of the same user sees it while the first is connected.
        second = own_connection(server[0])
        assert "lives" in regions_seen(second)
        first.close()
        # The registration goes when every connection that used it has closed: the
        # second only looked, so it is released at the daemon's next tick.
        wait_until(lambda: "lives" not in regions_seen(second), "the region to go with its connection")
        second.close()
    finally:
        shm.destroy_shared_memory_region(h)


def test_cuda_shared_memory_without_a_gpu_says_so(client):
    text = refused(lambda: client.register_cuda_shared_memory("gpu", b"\0" * 64, 0, 64),
                   "UNIMPLEMENTED")
    assert "no CUDA runtime" in text or "no GPU" in text, text
    assert client.get_cuda_shared_memory_status(as_json=True).get("regions", {}) == {}
    client.unregister_cuda_shared_memory()
    still_serving(client)


OTHER_USER_CLIENT = r"""
import sys
import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException
url, region, key = sys.argv[1:]
c = grpcclient.InferenceServerClient(url)
try:
    print("regions:", sorted(c.get_system_shared_memory_status(as_json=True).get("regions", {})))
except InferenceServerException as e:
    print("connect refused:", e)
    sys.exit(0)
t = grpcclient.InferInput("input__0", [2, 3], "FP32")
t.set_shared_memory(region, 24)
u = grpcclient.InferInput("input__1", [2, 3], "FP32")
u.set_data_from_numpy(np.ones((2, 3), np.float32))
for what, call in (("use", lambda: c.infer("add", [t, u])),
                   ("register", lambda: c.register_system_shared_memory("mine", key, 24))):
    try:
        call()
        print(what, "allowed")
    except InferenceServerException as e:
        print(what, "refused:", e)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a client as another user "
                    "(CI runs as root)")
def test_another_user_cannot_see_or_use_a_region(server, client):
    """Over loopback TCP another user's client sees none of root's regions, cannot use
    them by name, and cannot register root's object; the Unix socket (mode 0600) does not
    even let it connect."""
    import subprocess
    import sys

    h, key = make_region(client, "private", 24)
    try:
        out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              sys.executable, "-c", OTHER_USER_CLIENT, server[0], "private", key],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        if server[0].startswith("unix:"):
            assert "connect refused:" in out.stdout, out.stdout
            return
        assert "regions: []" in out.stdout, out.stdout
        assert "use refused:" in out.stdout and "'private' is not registered" in out.stdout, out.stdout
        assert "register refused:" in out.stdout and "belongs to uid 0" in out.stdout, out.stdout
    finally:
        shm.destroy_shared_memory_region(h)


def test_idle_exit_waits_for_kserve_clients():
    """--idle-exit counts a connected KServe client as a user: the daemon stays while
    one is connected (no session of its own protocol is open), and exits after."""
    import subprocess

    from conftest import MODELS, built_tool

    with tempfile.TemporaryDirectory(prefix="et-kserve-idle-") as tmp:
        ksock = f"unix:{tmp}/k.sock"
        proc = subprocess.Popen([built_tool("et-serverd", "server"), "--socket", f"{tmp}/s.sock",
                                 "--models", MODELS, "--kserve-grpc", ksock, "--idle-exit", "1",
                                 "--log-level", "warn"])
        try:
            # A connection held from the moment it accepts until the KServe client's is
            # up: the idle exit cannot come first, however slowly that client connects.
            probe = wait_until(lambda: unix_connection(Path(f"{tmp}/k.sock")), "the KServe socket to accept",
                               running=[proc])
            c = own_connection(ksock)
            assert c.is_server_live()
            probe.close()
            # The KServe socket accepts before the models are loaded, and the idle clock
            # starts once they are: on a busy machine loading them outlasts the window below.
            wait_until(c.is_server_ready, "the daemon to load its models", running=[proc],
                       deadline_s=3 * DEADLINE_S)  # every fixture model (kserve_daemon's)
            time.sleep(3)  # three idle periods with only the KServe client
            assert proc.poll() is None, "the daemon exited under a connected KServe client"
            assert c.is_model_ready("add")
            c.close()
            assert proc.wait(timeout=DEADLINE_S) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_tcp_shared_memory_off_makes_tcp_clients_remote():
    """--kserve-tcp-shared-memory off (a daemon behind a proxy on its machine): TCP
    clients get no shared memory and may not load or unload models; inference works."""
    with kserve_daemon("--kserve-tcp-shared-memory", "off") as server:
        c = grpcclient.InferenceServerClient(server[0])
        h = shm.create_shared_memory_region("x", shm_key("off"), 24)
        try:
            refused(lambda: c.register_system_shared_memory("x", shm_key("off"), 24),
                    "PERMISSION_DENIED", "shared memory needs a client on this machine")
            refused(lambda: c.unload_model("add"), "PERMISSION_DENIED",
                    "only clients on this machine")
            still_serving(c)
        finally:
            shm.destroy_shared_memory_region(h)
            c.close()
