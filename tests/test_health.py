"""gRPC's standard health service and server reflection on the daemon's gRPC servers,
spoken to by the real Python packages probes and tools use (`grpcio-health-checking`,
`grpcio-reflection`), and `et-serverd --check` for scripts."""

from __future__ import annotations

import subprocess

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase)

from conftest import DEADLINE_S, built_tool
from kserve_support import kserve_daemon


@pytest.fixture(scope="module")
def daemon():
    with kserve_daemon(http=False) as server:
        # The daemon's own socket is beside its log.
        yield {"own": f"unix:{server[1].parent / 's.sock'}", "kserve": server[0]}


@pytest.mark.parametrize("which", ["own", "kserve"])
def test_health_service_answers_serving(daemon, which):
    with grpc.insecure_channel(daemon[which]) as channel:
        status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                           timeout=DEADLINE_S).status
    assert status == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize("which,service", [("own", "etserver.v1.EtServer"),
                                           ("kserve", "inference.GRPCInferenceService")])
def test_reflection_lists_the_services(daemon, which, service):
    with grpc.insecure_channel(daemon[which]) as channel:
        services = set(ProtoReflectionDescriptorDatabase(channel).get_services())
    assert {service, "grpc.health.v1.Health"} <= services, services
    # And a client can learn a method's request type from it (what grpcurl does).
    with grpc.insecure_channel(daemon[which]) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        assert db.FindFileContainingSymbol(service).name


def test_check_command(daemon, tmp_path):
    serverd = built_tool("et-serverd", "server")
    sock = daemon["own"][len("unix:"):]
    ok = subprocess.run([serverd, "--check", sock], capture_output=True, text=True,
                        timeout=DEADLINE_S)
    assert ok.returncode == 0 and ok.stdout.strip() == "SERVING", ok
    also = subprocess.run([serverd, "--socket", sock, "--check"], capture_output=True, text=True,
                          timeout=DEADLINE_S)
    assert also.returncode == 0 and also.stdout.strip() == "SERVING", also
    missing = tmp_path / "nobody.sock"
    gone = subprocess.run([serverd, "--check", str(missing)], capture_output=True, text=True,
                          timeout=DEADLINE_S)
    assert gone.returncode == 2 and str(missing) in gone.stdout, gone


def test_watchers_on_both_listeners_see_the_daemon_stop():
    """A Watch on each gRPC server is sent NOT_SERVING when the daemon stops, and its stream
    then ends saying so, before the servers shut down."""
    S, N = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
    channels, streams = [], []
    try:
        with kserve_daemon(http=False) as server:
            for address in (f"unix:{server[1].parent / 's.sock'}", server[0]):
                channels.append(grpc.insecure_channel(address))
                streams.append(health_pb2_grpc.HealthStub(channels[-1]).Watch(
                    health_pb2.HealthCheckRequest(), timeout=3 * DEADLINE_S))
                assert next(streams[-1]).status == S  # the daemon is ready
        # The daemon has exited (SIGTERM, exit status 0): what each stream was sent is read now.
        for stream in streams:
            seen = []
            with pytest.raises(grpc.RpcError) as end:
                for update in stream:
                    seen.append(update.status)
            assert seen == [N]
            assert end.value.code() == grpc.StatusCode.UNAVAILABLE, end.value
            assert "et-serverd is stopping" in end.value.details(), end.value
    finally:
        for channel in channels:
            channel.close()


def test_check_of_another_service_is_not_found(daemon):
    with grpc.insecure_channel(daemon["own"]) as channel:
        with pytest.raises(grpc.RpcError) as e:
            health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="etserver.v1.EtServer"), timeout=DEADLINE_S)
    assert e.value.code() == grpc.StatusCode.NOT_FOUND
