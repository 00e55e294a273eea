"""Every fixture through the Python client with REAL torch (Debian's python3-torch, in
.venv-torch; scripts/test runs this directory there): torch tensors in, read through
torch's Python API, and torch tensors out, because torch was imported before the methods
were loaded. Fails (never skips) where torch is missing."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # first: methods loaded after this return torch tensors

import etclient
from conftest import MODELS, as_comparable, data_path, manifest

MANIFEST = manifest()
CASES = [(m, meth) for m in MANIFEST["models"] if not m["bundled"] for meth in m["methods"]]
OUTCOMES = {"matched eager (torch in, torch out)": 0}


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime(daemon_socket)


def to_torch(a: np.ndarray, dtype: str, order) -> torch.Tensor:
    if dtype == "bfloat16":  # the .npy holds the bit patterns
        t = torch.from_numpy(a.copy(order="C").view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(a.copy(order="C"))  # ascontiguousarray makes 0-d arrays 1-d
    if list(order) == [0, 2, 3, 1]:
        t = t.contiguous(memory_format=torch.channels_last)
    return t


def to_numpy(value, dtype: str) -> np.ndarray:
    if not isinstance(value, torch.Tensor):
        return np.asarray(value)
    if value.dtype == torch.bfloat16:
        return value.contiguous().view(torch.int16).numpy().view(np.uint16)
    return value.contiguous().numpy()


@pytest.mark.parametrize("entry,spec", CASES, ids=[f"{m['name']}.{s['name']}" for m, s in CASES])
def test_fixture_with_torch_tensors(runtime, entry, spec):
    method = runtime.load_program(MODELS / entry["pte"], data_path=data_path(entry)).load_method(
        spec["name"])
    assert method.returns_torch
    for k, call in enumerate([spec] + spec.get("subsequent_calls", [])):
        inputs = []
        for i, rel in enumerate(call["inputs"]):
            a = np.load(MODELS / rel)
            kind = spec["input_kinds"][i]
            if kind != "tensor":
                inputs.append({"int": int, "float": float, "bool": bool}[kind](a.item()))
            else:
                inputs.append(to_torch(a, spec["program_input_dtypes"][i], spec["input_dim_orders"][i]))
        outputs = method.execute(inputs)
        for i, (rel, dtype) in enumerate(zip(call["expected"], spec["expected_dtypes"])):
            expected = np.load(MODELS / rel)
            if spec.get("input_kinds") and isinstance(outputs[i], (int, float, bool)):
                actual = np.asarray(outputs[i])
            else:
                assert isinstance(outputs[i], torch.Tensor), type(outputs[i])
                actual = to_numpy(outputs[i], dtype)
            assert actual.shape == expected.shape
            np.testing.assert_allclose(as_comparable(actual, dtype), as_comparable(expected, dtype),
                                       atol=spec["atol"], rtol=spec["rtol"], equal_nan=True,
                                       err_msg=f"{entry['name']}.{spec['name']} call {k} output {i}")
    OUTCOMES["matched eager (torch in, torch out)"] += 1
