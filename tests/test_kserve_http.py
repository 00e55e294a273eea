"""The KServe v2 REST service (--kserve-http, docs/kserve.md) spoken to by the stock
Triton HTTP client (`tritonclient.http` from PyPI): every fixture method with binary
tensors (the binary tensor data extension), with JSON tensors, and with inputs and
outputs in system shared memory, each matching eager PyTorch; then the metadata,
config, statistics, repository and shared-memory endpoints, and errors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

from conftest import DEADLINE_S, MODELS
from kserve_support import (BYTES, CASE_IDS, CASES, calls_of, check_outputs, kserve_daemon,
                            load_input, model_name, region_contents, shm_key)
OUTCOMES = {"matched eager (binary)": 0, "matched eager (JSON)": 0,
            "matched eager (shared memory)": 0}


@pytest.fixture(scope="module")
def server():
    with kserve_daemon() as server:
        yield server


@pytest.fixture(scope="module")
def client(server):
    c = httpclient.InferenceServerClient(server[2])
    yield c
    c.close()


@pytest.mark.parametrize("entry,method", CASES, ids=CASE_IDS)
def test_fixture_method_matches_eager(client, entry, method):
    name = model_name(entry, method)
    meta = client.get_model_metadata(name)
    outputs_meta = meta["outputs"]

    def fresh():
        if method.get("stateful"):
            client.load_model(Path(entry["pte"]).stem)

    for binary in (True, False):
        fresh()
        for call in calls_of(method):
            inputs = []
            for spec, rel, kind in zip(meta["inputs"], call["inputs"], method["input_kinds"]):
                a = load_input(rel, kind, spec["datatype"])
                t = httpclient.InferInput(spec["name"], list(a.shape), spec["datatype"])
                # 16-bit floats travel as binary either way (JSON holds no half floats).
                t.set_data_from_numpy(a, binary_data=binary or spec["datatype"] in ("FP16", "BF16"))
                inputs.append(t)
            outputs = [httpclient.InferRequestedOutput(o["name"], binary_data=binary)
                       for o in outputs_meta]
            result = client.infer(name, inputs, outputs=outputs)
            check_outputs(lambda i: result.as_numpy(f"output__{i}"), method, call,
                          "binary" if binary else "JSON")
        OUTCOMES["matched eager (binary)" if binary else "matched eager (JSON)"] += 1

    fresh()
    for k, call in enumerate(calls_of(method)):
        regions = []
        try:
            inputs = []
            for j, (spec, rel, kind) in enumerate(zip(meta["inputs"], call["inputs"],
                                                      method["input_kinds"])):
                a = load_input(rel, kind, spec["datatype"])
                raw = a.view(np.uint16) if spec["datatype"] == "BF16" else a
                key = shm_key(f"h{k}_in{j}")
                h = shm.create_shared_memory_region(f"in{j}", key, max(raw.nbytes, 1))
                regions.append(h)
                if raw.nbytes:
                    shm.set_shared_memory_region(h, [raw.reshape(-1)])
                client.register_system_shared_memory(f"in{j}", key, max(raw.nbytes, 1))
                t = httpclient.InferInput(spec["name"], list(a.shape), spec["datatype"])
                t.set_shared_memory(f"in{j}", raw.nbytes)
                inputs.append(t)
            outputs, handles = [], []
            for i, (rel, spec) in enumerate(zip(call["expected"], outputs_meta)):
                size = max(int(np.load(MODELS / rel).size) * BYTES[spec["datatype"]], 1)
                key = shm_key(f"h{k}_out{i}")
                h = shm.create_shared_memory_region(f"out{i}", key, size)
                regions.append(h)
                handles.append(h)
                client.register_system_shared_memory(f"out{i}", key, size)
                o = httpclient.InferRequestedOutput(spec["name"], binary_data=True)
                o.set_shared_memory(f"out{i}", size)
                outputs.append(o)
            result = client.infer(name, inputs, outputs=outputs)

            def from_region(i):
                out = result.get_output(f"output__{i}")
                return region_contents(handles[i], out["datatype"], out["shape"])

            check_outputs(from_region, method, call, "shared memory")
        finally:
            client.unregister_system_shared_memory()
            for h in regions:
                shm.destroy_shared_memory_region(h)
    OUTCOMES["matched eager (shared memory)"] += 1


def test_health_metadata_config_and_statistics(client):
    assert client.is_server_live() and client.is_server_ready()
    meta = client.get_server_metadata()
    assert meta["name"] == "et-serverd" and "binary_tensor_data" in meta["extensions"]
    assert client.is_model_ready("add") and not client.is_model_ready("add", "3")
    m = client.get_model_metadata("add")
    assert [(t["name"], t["datatype"], t["shape"]) for t in m["inputs"]] == [
        ("input__0", "FP32", [2, 3]), ("input__1", "FP32", [2, 3])]
    config = client.get_model_config("add")
    assert config["max_batch_size"] == 0 and config["input"][0]["dims"] == [2, 3]
    assert config["input"][0]["data_type"] == "TYPE_FP32"
    before = client.get_inference_statistics("add")["model_stats"][0]["inference_count"]
    t = [httpclient.InferInput(n, [2, 3], "FP32") for n in ("input__0", "input__1")]
    for x in t:
        x.set_data_from_numpy(np.ones((2, 3), np.float32))
    client.infer("add", t)
    assert client.get_inference_statistics("add")["model_stats"][0]["inference_count"] == before + 1
    assert len(client.get_inference_statistics()["model_stats"]) > 100


def test_repository_endpoints(client):
    index = {m["name"]: m for m in client.get_model_repository_index()}
    assert index["add"]["state"] == "READY"
    client.unload_model("add")
    assert not client.is_model_ready("add")
    client.load_model("add")
    assert client.is_model_ready("add")
    with pytest.raises(InferenceServerException) as err:
        client.load_model("no_such_program")
    assert "no model 'no_such_program' in the model repository" in str(err.value)


def test_errors_name_the_problem(client):
    def refused(call, *words):
        with pytest.raises(InferenceServerException) as err:
            call()
        for w in words:
            assert w in str(err.value), str(err.value)

    x = httpclient.InferInput("input__0", [2, 3], "INT64")
    x.set_data_from_numpy(np.ones((2, 3), np.int64))
    y = httpclient.InferInput("input__1", [2, 3], "FP32")
    y.set_data_from_numpy(np.ones((2, 3), np.float32))
    refused(lambda: client.infer("add", [x, y]), "input__0", "datatype INT64 given")
    refused(lambda: client.infer("nope", [x, y]), "model 'nope' is not loaded")
    refused(lambda: client.infer("add", [x, y], model_version="2"), "no version '2'")
    z = httpclient.InferInput("input__0", [2, 3], "FP32")
    z.set_shared_memory("unregistered", 24)
    refused(lambda: client.infer("add", [z, y]), "'unregistered' is not registered")
    refused(lambda: client.register_system_shared_memory("r", "/et_no_such_key_http", 8),
            "no such shared-memory object")
    import base64

    refused(lambda: client.register_cuda_shared_memory("g", base64.b64encode(b"\0" * 64), 0, 64),
            "CUDA")
    assert client.is_server_live()


def test_raw_http_requests_get_clear_errors(server):
    """What a hand-written client may send: a body that is not JSON, a binary length
    past the body, an unknown endpoint."""
    import http.client

    host, port = server[2].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=DEADLINE_S)

    def post(path, body, headers=None):
        conn.request("POST", path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read().decode()

    status, text = post("/v2/models/add/infer", "{not json")
    assert status == 400 and "not JSON" in text
    status, text = post("/v2/models/add/infer", '{"inputs": []}',
                        {"Inference-Header-Content-Length": "999"})
    assert status == 400 and "Inference-Header-Content-Length" in text
    body = ('{"inputs":[{"name":"input__0","shape":[2,3],"datatype":"FP32",'
            '"parameters":{"binary_data_size":24}}]}')
    status, text = post("/v2/models/add/infer", body,
                        {"Inference-Header-Content-Length": str(len(body))})
    assert status == 400 and "binary_data_size" in text
    conn.request("GET", "/v2/no/such/thing")
    r = conn.getresponse()
    assert r.status == 404 and "no such endpoint" in r.read().decode()
