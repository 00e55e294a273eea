"""The KServe v2 gRPC service (docs/kserve.md) spoken to by the stock Triton client
(`tritonclient.grpc` from PyPI): every fixture method through ModelInfer with tensors in
the request, through ModelStreamInfer, and with inputs and outputs in system shared
memory made by `tritonclient.utils.shared_memory`, each matching eager PyTorch; then
metadata, config, readiness, statistics and the repository calls.
"""

from __future__ import annotations

import queue
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm

from conftest import MODELS
from kserve_support import (BYTES, CASE_IDS, CASES, calls_of, check_outputs, kserve_daemon,
                            load_input, model_name, region_contents, shm_key)

OUTCOMES = {"matched eager (request)": 0, "matched eager (stream)": 0,
            "matched eager (shared memory)": 0}


@pytest.fixture(scope="module")
def server():
    with kserve_daemon() as server:
        yield server


@pytest.fixture(scope="module")
def client(server):
    c = grpcclient.InferenceServerClient(server[0])
    yield c
    c.close()


@pytest.fixture(scope="module")
def stream(server):
    """One ModelStreamInfer stream for the module; responses arrive on a queue."""
    c = grpcclient.InferenceServerClient(server[0])
    responses: queue.Queue = queue.Queue()
    c.start_stream(callback=lambda result, error: responses.put((result, error)))
    yield c, responses
    c.stop_stream()
    c.close()


def make_inputs(meta, method, call):
    inputs, arrays = [], []
    for spec, rel, kind in zip(meta.inputs, call["inputs"], method["input_kinds"]):
        a = load_input(rel, kind, spec.datatype)
        t = grpcclient.InferInput(spec.name, list(a.shape), spec.datatype)
        t.set_data_from_numpy(a)
        inputs.append(t)
        arrays.append(a)
    return inputs, arrays


@pytest.mark.parametrize("entry,method", CASES, ids=CASE_IDS)
def test_fixture_method_matches_eager(server, client, stream, entry, method):
    name = model_name(entry, method)
    meta = client.get_model_metadata(name)
    assert [o.name for o in meta.outputs] == [f"output__{i}" for i in range(len(method["expected"]))]

    def fresh():  # a stateful method's recorded call is its first on a fresh instance
        if method.get("stateful"):
            client.load_model(Path(entry["pte"]).stem)

    # In the request (unary ModelInfer).
    fresh()
    for call in calls_of(method):
        inputs, _ = make_inputs(meta, method, call)
        result = client.infer(name, inputs)
        check_outputs(lambda i: result.as_numpy(f"output__{i}"), method, call, "request")
    OUTCOMES["matched eager (request)"] += 1

    # On a stream (ModelStreamInfer).
    fresh()
    streamer, responses = stream
    for k, call in enumerate(calls_of(method)):
        inputs, _ = make_inputs(meta, method, call)
        streamer.async_stream_infer(name, inputs, request_id=f"{name}#{k}")
        result, error = responses.get(timeout=120)
        assert error is None, error
        assert result.get_response().id == f"{name}#{k}"
        check_outputs(lambda i: result.as_numpy(f"output__{i}"), method, call, "stream")
    OUTCOMES["matched eager (stream)"] += 1

    # In system shared memory, inputs and outputs.
    fresh()
    for k, call in enumerate(calls_of(method)):
        inputs, arrays = make_inputs(meta, method, call)
        regions = []
        try:
            for j, (t, a) in enumerate(zip(inputs, arrays)):
                raw = a.view(np.uint16) if t.datatype() == "BF16" else a
                key = shm_key(f"{k}_in{j}")
                h = shm.create_shared_memory_region(f"in{j}", key, max(raw.nbytes, 1))
                regions.append(h)
                if raw.nbytes:
                    shm.set_shared_memory_region(h, [raw.reshape(-1)])  # (it cannot take 0-d)
                client.register_system_shared_memory(f"in{j}", key, max(raw.nbytes, 1))
                t.set_shared_memory(f"in{j}", raw.nbytes)
            outputs, out_handles = [], []
            for i, (rel, spec) in enumerate(zip(call["expected"], meta.outputs)):
                size = max(int(np.load(MODELS / rel).size) * BYTES[spec.datatype], 1)
                key = shm_key(f"{k}_out{i}")
                h = shm.create_shared_memory_region(f"out{i}", key, size)
                regions.append(h)
                out_handles.append(h)
                client.register_system_shared_memory(f"out{i}", key, size)
                o = grpcclient.InferRequestedOutput(spec.name)
                o.set_shared_memory(f"out{i}", size)
                outputs.append(o)
            result = client.infer(name, inputs, outputs=outputs)

            def from_region(i):
                out = result.get_output(f"output__{i}")
                return region_contents(out_handles[i], out.datatype, list(out.shape))

            check_outputs(from_region, method, call, "shared memory")
        finally:
            client.unregister_system_shared_memory()
            for h in regions:
                shm.destroy_shared_memory_region(h)
    OUTCOMES["matched eager (shared memory)"] += 1


def test_server_health_and_metadata(client):
    assert client.is_server_live() and client.is_server_ready()
    meta = client.get_server_metadata()
    assert meta.name == "et-serverd"
    for ext in ("system_shared_memory", "cuda_shared_memory", "statistics", "model_repository"):
        assert ext in meta.extensions


def test_model_metadata_and_config_come_from_the_program(client):
    meta = client.get_model_metadata("add")
    assert meta.versions == ["1"] and meta.platform == "executorch_pte"
    assert [(t.name, t.datatype, list(t.shape)) for t in meta.inputs] == [
        ("input__0", "FP32", [2, 3]), ("input__1", "FP32", [2, 3])]
    config = client.get_model_config("add").config
    assert config.max_batch_size == 0
    assert [(t.name, list(t.dims)) for t in config.input] == [("input__0", [2, 3]), ("input__1", [2, 3])]
    assert config.parameters["method"].string_value == "forward"
    # A dynamically shaped program: -1 for its dims, the bounds in the config.
    dyn = client.get_model_metadata("llama_decode_ptd")
    assert all(d == -1 for t in dyn.inputs for d in t.shape)
    bounds = client.get_model_config("llama_decode_ptd").config.parameters
    assert "max_shape.input__0" in bounds


def test_methods_other_than_forward_are_models(client):
    methods = [(m, meth) for m, meth in CASES if meth["name"] != "forward"]
    assert methods, "no fixture has a method other than forward"
    entry, method = methods[0]
    assert client.is_model_ready(model_name(entry, method))
    assert client.is_model_ready(model_name(entry, method), "1")


def test_readiness_and_versions(client):
    assert client.is_model_ready("add")
    assert not client.is_model_ready("add", "2")
    assert not client.is_model_ready("no_such_model")


def test_statistics_count_inferences(client):
    before = client.get_inference_statistics("add").model_stats[0]
    a = np.ones((2, 3), np.float32)
    inputs = []
    for n in ("input__0", "input__1"):
        t = grpcclient.InferInput(n, [2, 3], "FP32")
        t.set_data_from_numpy(a)
        inputs.append(t)
    client.infer("add", inputs)
    after = client.get_inference_statistics("add").model_stats[0]
    assert after.inference_count == before.inference_count + 1
    assert after.inference_stats.success.count == before.inference_stats.success.count + 1
    assert after.inference_stats.compute_infer.ns > before.inference_stats.compute_infer.ns
    assert after.last_inference > 0
    everything = client.get_inference_statistics()
    assert len(everything.model_stats) > 100


def test_repository_index_load_and_unload(client):
    index = {m.name: m for m in client.get_model_repository_index().models}
    assert index["add"].state == "READY"
    client.unload_model("add")
    assert not client.is_model_ready("add")
    index = {m.name: m for m in client.get_model_repository_index().models}
    assert index["add"].state == "UNAVAILABLE" and "not loaded" in index["add"].reason
    client.load_model("add")
    assert client.is_model_ready("add")


def test_typed_contents_are_accepted(server):
    """Tensors in InferTensorContents (not raw bytes), as clients of other languages send."""
    import tritonclient.grpc.service_pb2 as pb
    import tritonclient.grpc.service_pb2_grpc as rpc
    import grpc

    with grpc.insecure_channel(server[0]) as channel:
        stub = rpc.GRPCInferenceServiceStub(channel)
        req = pb.ModelInferRequest(model_name="add")
        for n, v in (("input__0", 1.5), ("input__1", 2.0)):
            t = req.inputs.add(name=n, datatype="FP32", shape=[2, 3])
            t.contents.fp32_contents.extend([v] * 6)
        resp = stub.ModelInfer(req)
        out = np.frombuffer(resp.raw_output_contents[0], np.float32)
        np.testing.assert_array_equal(out, np.full(6, 3.5, np.float32))
        # The wrong count for the shape is refused, naming the input.
        req.inputs[1].contents.fp32_contents.append(1.0)
        with pytest.raises(grpc.RpcError) as err:
            stub.ModelInfer(req)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "input__1" in err.value.details() and "7 elements" in err.value.details()


def test_every_datatype_round_trips(client):
    """Each KServe datatype the runtime has, in and out (the fixtures of each dtype)."""
    seen = set()
    for entry, method in CASES:
        meta = client.get_model_metadata(model_name(entry, method))
        seen.update(t.datatype for t in meta.inputs)
        seen.update(t.datatype for t in meta.outputs)
    assert {"BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "FP16", "BF16", "FP32",
            "FP64"} <= seen, seen
