"""gRPC over TCP (--listen): plaintext only on loopback; elsewhere TLS (--tls-cert,
--tls-key), optionally requiring client certificates (--tls-client-ca). Spoken to by
grpcio, as a client in another language would, with certificates openssl makes."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import grpc
import pytest
from conftest import DEADLINE_S, built_tool, wait_until

HEALTH = "/grpc.health.v1.Health/Check"  # an empty request asks for the whole server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_certificates(d: Path) -> None:
    """A CA; a server certificate for localhost and a client certificate, both signed by it."""
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test CA",
            "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"))
    for name, extension in (("server", "subjectAltName=DNS:localhost,IP:127.0.0.1"),
                            ("client", "extendedKeyUsage=clientAuth")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={name}", "-keyout", str(d / f"{name}.key"),
                "-out", str(d / f"{name}.csr"))
        (d / f"{name}.ext").write_text(extension + "\n")
        openssl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
                "-CAcreateserial", "-days", "2", "-extfile", str(d / f"{name}.ext"), "-out", str(d / f"{name}.pem"))


@pytest.fixture
def certs():
    """A directory with make_certificates()'s files."""
    with tempfile.TemporaryDirectory(prefix="et-tls-") as tmp:
        make_certificates(Path(tmp))
        yield Path(tmp)


def server_tls(d: Path) -> list[str]:
    return ["--tls-cert", str(d / "server.pem"), "--tls-key", str(d / "server.key")]


def serving(channel: grpc.Channel) -> str:
    try:
        answer = channel.unary_unary(HEALTH)(b"", timeout=DEADLINE_S)
        return "SERVING" if answer == b"\x08\x01" else f"answer {answer!r}"
    except grpc.RpcError as e:
        return e.code().name


class Daemon(subprocess.Popen):
    def communicate(self, timeout=None):  # the log, once it has exited
        self.wait(timeout)
        return self.log.read_text(), ""


def start(tmp: Path, *args: str) -> Daemon:
    """et-serverd, once it is ready or has exited."""
    log = tmp / f"daemon-{time.monotonic_ns()}.log"
    with open(log, "w") as out:
        proc = Daemon([str(built_tool("et-serverd", "server")), "--socket", str(tmp / "s.sock"), *args],
                      stdout=out, stderr=subprocess.STDOUT)
    proc.log = log
    wait_until(lambda: proc.poll() is not None or "ready (" in log.read_text(), "et-serverd to start")
    return proc


def port_of(proc: Daemon) -> int:
    """The TCP port a daemon started with --listen HOST:0 got (a port chosen beforehand
    could be taken meanwhile by another test's daemon)."""
    return int(re.search(r"\(port (\d+)\)", proc.log.read_text()).group(1))


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


@pytest.mark.parametrize("address", ["0.0.0.0:{port}", "[::]:{port}", "10.1.2.3:{port}"])
def test_plaintext_beyond_loopback_is_refused_at_start(address):
    with tempfile.TemporaryDirectory(prefix="et-tls-") as tmp:
        proc = start(Path(tmp), "--listen", address.format(port=free_port()))
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2, out
    assert "not a loopback address, and no TLS" in out and "--tls-cert" in out, out


def test_plaintext_on_loopback_still_serves():
    with tempfile.TemporaryDirectory(prefix="et-tls-") as tmp:
        proc = start(Path(tmp), "--listen", "127.0.0.1:0")
        try:
            assert serving(grpc.insecure_channel(f"127.0.0.1:{port_of(proc)}")) == "SERVING"
        finally:
            stop(proc)


def test_tls_serves_tls_clients_only(certs):
    d = certs
    proc = start(d, "--listen", "0.0.0.0:0", *server_tls(d))
    try:
        port = port_of(proc)
        trusted = grpc.ssl_channel_credentials(root_certificates=(d / "ca.pem").read_bytes())
        assert serving(grpc.secure_channel(f"localhost:{port}", trusted)) == "SERVING"
        assert serving(grpc.insecure_channel(f"localhost:{port}")) == "UNAVAILABLE"
        # A client that does not trust the server's CA does not talk to it.
        untrusted = grpc.ssl_channel_credentials(root_certificates=(d / "client.pem").read_bytes())
        assert serving(grpc.secure_channel(f"localhost:{port}", untrusted)) == "UNAVAILABLE"
    finally:
        stop(proc)


def test_mutual_tls_requires_a_client_certificate(certs):
    d = certs
    proc = start(d, "--listen", "0.0.0.0:0", *server_tls(d), "--tls-client-ca", str(d / "ca.pem"))
    try:
        port = port_of(proc)
        ca = (d / "ca.pem").read_bytes()
        with_cert = grpc.ssl_channel_credentials(root_certificates=ca, private_key=(d / "client.key").read_bytes(),
                                                 certificate_chain=(d / "client.pem").read_bytes())
        assert serving(grpc.secure_channel(f"localhost:{port}", with_cert)) == "SERVING"
        without = grpc.ssl_channel_credentials(root_certificates=ca)
        assert serving(grpc.secure_channel(f"localhost:{port}", without)) == "UNAVAILABLE"
    finally:
        stop(proc)


def test_unreadable_or_wrong_tls_files_say_which():
    with tempfile.TemporaryDirectory(prefix="et-tls-") as tmp:
        d = Path(tmp)
        (d / "not.pem").write_text("hello\n")
        port = str(free_port())
        missing = start(d, "--listen", f"0.0.0.0:{port}", "--tls-cert", str(d / "nope.pem"), "--tls-key",
                        str(d / "nope.key"))
        out, _ = missing.communicate(timeout=30)
        assert missing.returncode == 1 and f"--tls-cert {d / 'nope.pem'}: cannot read it" in out, out
        wrong = start(d, "--listen", f"0.0.0.0:{port}", "--tls-cert", str(d / "not.pem"), "--tls-key",
                      str(d / "not.pem"))
        out, _ = wrong.communicate(timeout=30)
        assert wrong.returncode == 1 and "not a PEM file" in out, out
        alone = start(d, "--listen", f"0.0.0.0:{port}", "--tls-cert", str(d / "not.pem"))
        out, _ = alone.communicate(timeout=30)
        assert alone.returncode == 2 and "--tls-cert and --tls-key go together" in out, out


def test_listen_is_for_tcp_only(certs):
    proc = start(certs, "--listen", f"unix:{certs / 'other.sock'}", *server_tls(certs))
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "--listen is for TCP" in out, out
