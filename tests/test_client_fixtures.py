"""Every fixture through libetclient: one et-serverd for the module, each method run by
a separate client process (tests/support/etclient_run.cc) with inputs from host memory
(fresh output slots per call) and again written into the method's shared-memory input
buffers (zero copy; results into output buffers made once), on both transports. Every
call of a method (stateful ones included) runs on one method instance, in order.
Outputs must match eager PyTorch within the manifest's tolerance.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import MODELS, as_comparable, built_tool, data_args, manifest, running_daemon

MANIFEST = manifest()
CASES = [(m, meth) for m in MANIFEST["models"] for meth in m["methods"]]
OUTCOMES = {"matched eager (host inputs)": 0, "matched eager (shared inputs)": 0}


@pytest.fixture(scope="module")
def daemon(transport):
    with running_daemon() as sock:
        yield sock


def client_run(sock, entry, method, calls, out_dir, shared):
    args = [built_tool("etclient-run", "tests"), "--socket", str(sock), str(MODELS / entry["pte"]),
            *data_args(entry), "--method", method["name"], "--output-dir", str(out_dir)]
    for k, call in enumerate(calls):
        if k:
            args.append("--then")
        for rel in call["inputs"]:
            args += ["--input", str(MODELS / rel)]
    if shared:
        args.append("--shared")
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("shared", [False, True], ids=["host", "shared"])
@pytest.mark.parametrize("entry,method", CASES, ids=[f"{m['name']}.{meth['name']}" for m, meth in CASES])
def test_fixture_through_the_cpp_client(daemon, transport, entry, method, shared, tmp_path):
    calls = [method] + method.get("subsequent_calls", [])
    result = client_run(daemon, entry, method, calls, tmp_path, shared)
    assert result.returncode == 0, result.stderr
    assert f"transport {transport}" in result.stderr, result.stderr
    for k, call in enumerate(calls):
        for i, (rel, dtype) in enumerate(zip(call["expected"], method["expected_dtypes"])):
            expected = np.load(MODELS / rel)
            actual = np.load(tmp_path / f"call{k}" / f"{i}.npy")
            assert actual.shape == expected.shape, f"call {k} output {i}: shape {actual.shape} != {expected.shape}"
            np.testing.assert_allclose(as_comparable(actual, dtype), as_comparable(expected, dtype),
                                       atol=method["atol"], rtol=method["rtol"], equal_nan=True,
                                       err_msg=f"{entry['name']}.{method['name']} call {k} output {i}")
    OUTCOMES["matched eager (shared inputs)" if shared else "matched eager (host inputs)"] += 1
