"""Every fixture through the Python client (etclient), through every input path:
numpy arrays, memoryviews, array.array, DLPack producers (and bare capsules), and
buffers in shared memory (Method.input_buffer, zero copy). Every call of a method,
stateful ones included, runs on one method instance, in order; outputs must match eager
PyTorch within the manifest's tolerance. (torch tensors in and out: tests/torch_paths.)
"""

from __future__ import annotations

import array

import numpy as np
import pytest

import etclient
from conftest import MODELS, as_comparable, data_path, manifest

MANIFEST = manifest()
CASES = [(m, meth) for m in MANIFEST["models"] for meth in m["methods"]]
PATHS = ["numpy", "memoryview", "array", "dlpack", "capsule", "shared"]
OUTCOMES = {f"matched eager ({p})": 0 for p in PATHS}
ARRAY_CODES = {"float32": "f", "float64": "d", "int8": "b", "uint8": "B", "int16": "h",
               "int32": "i", "int64": "q"}


class DLPackOnly:
    """A producer that speaks DLPack and nothing else (numpy would offer its buffer)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime(daemon_socket)


def in_layout(a: np.ndarray, order) -> np.ndarray:
    """The same values, laid out in memory in `order` (a strided view when not C order)."""
    order = list(order)
    if order == sorted(order):
        return a
    return np.ascontiguousarray(a.transpose(order)).transpose(np.argsort(order))


def make_input(path: str, runtime, method, i: int, a: np.ndarray, spec: dict):
    kind = spec["input_kinds"][i]
    if kind != "tensor":
        return {"int": int, "float": float, "bool": bool}[kind](a.item())
    dtype = spec["program_input_dtypes"][i]
    order = spec["input_dim_orders"][i]
    if dtype == "bfloat16":
        # No format code names bfloat16: its raw bytes, in the method's layout.
        raw = np.ascontiguousarray(a.transpose(order)).view(np.uint8).reshape(-1)
        if path == "shared":
            buf = method.input_buffer(i)
            np.asarray(buf)[...] = a
            return buf
        return {"memoryview": memoryview(raw.tobytes()),
                "array": array.array("B", raw.tobytes())}.get(path, raw)
    if path == "numpy":
        return a
    if path == "memoryview":
        return memoryview(a)
    if path == "array":
        code = ARRAY_CODES.get(dtype)
        if code is None or a.size == 0:  # array.array has no bool or float16;
            return memoryview(a)  # memoryview.cast cannot make a shape with a 0
        arr = array.array(code, a.reshape(-1).tolist())
        return arr if a.ndim == 1 else memoryview(arr).cast("B").cast(code, a.shape)
    if path == "dlpack":
        return DLPackOnly(in_layout(a, order))
    if path == "capsule":
        return in_layout(a, order).__dlpack__()
    buf = method.input_buffer(i)
    if tuple(buf.shape) != a.shape:  # a dynamic input smaller than its bound
        buf.resize(a.shape)
    np.asarray(buf)[...] = a
    return buf


def as_array(value) -> np.ndarray:
    return np.asarray(value)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("entry,spec", CASES, ids=[f"{m['name']}.{s['name']}" for m, s in CASES])
def test_fixture_through_the_python_client(runtime, transport, entry, spec, path):
    program = runtime.load_program(MODELS / entry["pte"], data_path=data_path(entry))
    method = program.load_method(spec["name"])
    assert method.transport == transport
    for k, call in enumerate([spec] + spec.get("subsequent_calls", [])):
        arrays = [np.load(MODELS / rel) for rel in call["inputs"]]
        inputs = [make_input(path, runtime, method, i, a, spec) for i, a in enumerate(arrays)]
        outputs = method.execute(inputs)
        assert len(outputs) == len(call["expected"])
        for i, (rel, dtype) in enumerate(zip(call["expected"], spec["expected_dtypes"])):
            expected = np.load(MODELS / rel)
            actual = as_array(outputs[i])
            assert actual.shape == expected.shape, f"call {k} output {i}: {actual.shape} != {expected.shape}"
            np.testing.assert_allclose(as_comparable(actual, dtype), as_comparable(expected, dtype),
                                       atol=spec["atol"], rtol=spec["rtol"], equal_nan=True,
                                       err_msg=f"{entry['name']}.{spec['name']} call {k} output {i} ({path})")
            if isinstance(outputs[i], etclient.Tensor):
                assert outputs[i].dtype_name == dtype
    OUTCOMES[f"matched eager ({path})"] += 1
