"""A daemon with the KServe v2 service on, and the fixtures' tensors in KServe form,
for the tests that speak to it with the stock Triton clients (tests/test_kserve_*.py)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
import tritonclient.utils.shared_memory as shm

from conftest import DEADLINE_S, MODELS, as_comparable, built_tool, manifest, wait_until

# Every fixture method but the bundled programs' (their programs run like any other;
# what KServe adds is the same for them).
CASES = [(m, meth) for m in manifest()["models"] if not m["bundled"] for meth in m["methods"]]
CASE_IDS = [f"{m['name']}.{meth['name']}" for m, meth in CASES]
BYTES = {"FP32": 4, "FP64": 8, "FP16": 2, "BF16": 2, "INT64": 8, "INT32": 4, "INT16": 2,
         "INT8": 1, "UINT8": 1, "BOOL": 1}
NP = {"FP32": np.float32, "FP64": np.float64, "FP16": np.float16, "INT64": np.int64,
      "INT32": np.int32, "INT16": np.int16, "INT8": np.int8, "UINT8": np.uint8, "BOOL": np.bool_}


def model_name(entry, method) -> str:
    """The KServe model of a fixture method (docs/kserve.md's naming rule)."""
    stem = Path(entry["pte"]).stem
    return stem if method["name"] == "forward" else f"{stem}.{method['name']}"


def calls_of(method):
    """The recorded calls to make: a stateful method's first only (on fresh instances)."""
    return [method] if method.get("stateful") else [method] + method.get("subsequent_calls", [])


def check_outputs(actual_of, method, call, how):
    """Each output (actual_of(i)) against eager PyTorch's, within the manifest's tolerance."""
    for i, (rel, dtype) in enumerate(zip(call["expected"], method["expected_dtypes"])):
        expected = np.load(MODELS / rel)
        actual = np.asarray(actual_of(i))
        if expected.ndim == 0:  # an int, float or bool output comes back as shape [1]
            actual = actual.reshape(())
        assert actual.shape == expected.shape, f"output {i}: shape {actual.shape} != {expected.shape}"
        np.testing.assert_allclose(comparable_output(actual, dtype), as_comparable(expected, dtype),
                                   atol=method["atol"], rtol=method["rtol"], equal_nan=True,
                                   err_msg=f"{method['name']} output {i} ({how})")


def region_contents(handle, datatype: str, shape):
    """An output written into a shared-memory region, as numpy (BF16 as float32)."""
    if datatype == "BF16":
        bits = shm.get_contents_as_numpy(handle, np.uint16, shape)
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return shm.get_contents_as_numpy(handle, NP[datatype], shape)

KSERVE_DTYPES = {"float32": "FP32", "float64": "FP64", "float16": "FP16", "bfloat16": "BF16",
                 "int64": "INT64", "int32": "INT32", "int16": "INT16", "int8": "INT8",
                 "uint8": "UINT8", "bool": "BOOL"}


@contextlib.contextmanager
def kserve_daemon(*args: str, models: Path = MODELS, address: str = "127.0.0.1:0",
                  http: bool = True,
                  control: tuple = ("--model-control-mode", "explicit", "--load-model", "*")):
    """An et-serverd with `--models models --kserve-grpc address` (and `--kserve-http
    127.0.0.1:0`), by default in explicit mode with every model loaded (tests reload
    stateful models; `control` replaces those flags); yields (grpc url, path of its log, http url or None) once it is ready. TCP
    ports 0 are read back from the log."""
    serverd = built_tool("et-serverd", "server")
    with tempfile.TemporaryDirectory(prefix="et-kserve-") as tmp:
        sock = Path(tmp) / "s.sock"
        if address == "unix":
            address = f"unix:{tmp}/kserve.sock"
        log_path = Path(tmp) / "daemon.log"
        log = open(log_path, "w+")
        http_args = ["--kserve-http", "127.0.0.1:0"] if http else []
        proc = subprocess.Popen([serverd, "--socket", sock, "--models", models, "--kserve-grpc",
                                 address, *http_args, "--log-level", "info",
                                 *control, *args],
                                stdout=log, stderr=subprocess.STDOUT)

        def started():
            text = log_path.read_text()
            found = re.search(r"KServe v2 gRPC listening on (\S+)(?: \(port (\d+)\))?", text)
            found_http = re.search(r"KServe v2 HTTP listening on \S+ \(port (\d+)\)", text)
            if found and (found_http or not http) and re.search(r"\bready \(\d+ models served", text):
                return found, found_http

        # Loading every fixture model is the slow part: a longer backstop than most.
        found, found_http = wait_until(started, lambda: "et-serverd to start its KServe "
                                       f"service:\n{log_path.read_text()}", running=[proc],
                                       deadline_s=3 * DEADLINE_S)
        url = (f"127.0.0.1:{found.group(2)}" if found.group(2) else found.group(1))
        http_url = f"127.0.0.1:{found_http.group(1)}" if http else None
        try:
            yield url, log_path, http_url
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
            assert code == 0, f"et-serverd did not exit cleanly on SIGTERM ({code}):\n" + log_path.read_text()[-3000:]


def load_input(rel: str, kind: str, datatype: str) -> np.ndarray:
    """A fixture input as the numpy array tritonclient sends as `datatype`: scalars as
    shape [1]; BF16 (kept as bit patterns) as ml_dtypes.bfloat16, as tritonclient wants."""
    a = np.load(MODELS / rel)
    if kind != "tensor":
        a = np.asarray(a).reshape(1)
    if datatype == "BF16":
        return np.asarray(a).astype(np.uint16, order="C").view(ml_dtypes.bfloat16)
    if datatype == "BOOL":
        return a.astype(np.bool_)
    np_type = {"FP32": np.float32, "FP64": np.float64, "FP16": np.float16, "INT64": np.int64,
               "INT32": np.int32, "INT16": np.int16, "INT8": np.int8, "UINT8": np.uint8}[datatype]
    return np.asarray(a).astype(np_type, order="C")  # (ascontiguousarray makes 0-d 1-d)


def comparable_output(actual: np.ndarray, dtype: str) -> np.ndarray:
    """An output as float64; BF16 outputs come back from tritonclient as float32."""
    return np.asarray(actual).astype(np.float64)


def shm_key(tag: str) -> str:
    return f"/et_kserve_test_{os.getpid()}_{tag}"
