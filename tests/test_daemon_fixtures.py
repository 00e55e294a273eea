"""Every fixture through a running et-serverd: one daemon for the module, each method
run by a separate client process (tests/support/et_daemon_run.cc, standing in for the
clients until their issues land), with tensors inline and again through a shared
memfd segment. Outputs must match eager PyTorch within the manifest's tolerance.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from conftest import MODELS, as_comparable, built_tool, data_args, manifest, running_daemon

MANIFEST = manifest()
CASES = [(m, meth) for m in MANIFEST["models"] for meth in m["methods"]]
OUTCOMES = {"matched eager (inline)": 0, "matched eager (segments)": 0}


@pytest.fixture(scope="module")
def daemon(transport):
    with running_daemon() as sock:
        yield sock


def daemon_run(sock, entry, method, call, out_dir, via_segments):
    args = [built_tool("et-daemon-run", "tests"), "--socket", str(sock), str(MODELS / entry["pte"]),
            *data_args(entry), "--method", method["name"], "--output-dir", str(out_dir)]
    for rel in call["inputs"]:
        args += ["--input", str(MODELS / rel)]
    if via_segments:
        args.append("--via-segments")
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("via_segments", [False, True], ids=["inline", "segments"])
@pytest.mark.parametrize("entry,method", CASES, ids=[f"{m['name']}.{meth['name']}" for m, meth in CASES])
def test_fixture_through_the_daemon(daemon, transport, entry, method, via_segments, tmp_path):
    # A fresh client (session) per call: later calls need no state of earlier ones
    # unless the method is stateful, whose first call is the one recorded.
    calls = [method] if method.get("stateful") else [method] + method.get("subsequent_calls", [])
    for k, call in enumerate(calls):
        out_dir = tmp_path / f"call{k}"
        out_dir.mkdir()
        result = daemon_run(daemon, entry, method, call, out_dir, via_segments)
        assert result.returncode == 0, result.stderr
        assert f"transport {transport}" in result.stderr, result.stderr
        for i, (rel, dtype) in enumerate(zip(call["expected"], method["expected_dtypes"])):
            expected = np.load(MODELS / rel)
            actual = np.load(out_dir / f"{i}.npy")
            assert actual.shape == expected.shape, f"output {i}: shape {actual.shape} != {expected.shape}"
            np.testing.assert_allclose(as_comparable(actual, dtype), as_comparable(expected, dtype),
                                       atol=method["atol"], rtol=method["rtol"], equal_nan=True,
                                       err_msg=f"{entry['name']}.{method['name']} output {i}")
    OUTCOMES["matched eager (segments)" if via_segments else "matched eager (inline)"] += 1
