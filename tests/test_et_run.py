"""Every fixture through et-run: outputs match eager PyTorch within the manifest's
tolerance where the runtime has the method's operators; otherwise the method is
refused at load with the list of every missing operator (and backend), never a crash.

A registered kernel may still lack a dtype or argument form (the kernels issue brings
the rest): then et-run must fail cleanly with NotSupported naming the operator. Wrong
numbers, a crash, or any other failure fails the test. KERNEL_GAPS counts those cases.
"""

from __future__ import annotations

import os
import re
import subprocess

import numpy as np
import pytest

from conftest import MODELS, as_comparable, built_tool, data_args, manifest

MANIFEST = manifest()
CASES = [(m, meth) for m in MANIFEST["models"] for meth in m["methods"]]


def registered_ops() -> set[str]:
    out = subprocess.run([built_tool("et-run"), "--list-ops"], check=True, capture_output=True, text=True)
    return set(out.stdout.split())


def registered_backends() -> set[str]:
    out = subprocess.run([built_tool("et-run"), "--list-backends"], check=True, capture_output=True,
                         text=True)
    return set(out.stdout.split())


OPS = registered_ops()
BACKENDS = registered_backends()
KERNEL_GAPS: list[str] = []  # methods a registered kernel refused as NotSupported
OUTCOMES = {"matched eager": 0, "refused by a kernel (NotSupported)": 0,
            "refused at load (missing operators or backend)": 0}


def runnable(method) -> bool:
    return set(method["operators"]) <= OPS and set(method["delegates"]) <= BACKENDS


def et_run(entry, method, call, out_dir):
    args = [built_tool("et-run"), str(MODELS / entry["pte"]), *data_args(entry), "--method",
            method["name"], "--output-dir", str(out_dir)]
    for rel in call["inputs"]:
        args += ["--input", str(MODELS / rel)]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def calls_to_check(method):
    """The first call, and the later ones when each can run on a fresh instance."""
    if method.get("stateful"):
        return [method]
    return [method] + method.get("subsequent_calls", [])


@pytest.mark.parametrize("entry,method", CASES, ids=[f"{m['name']}.{meth['name']}" for m, meth in CASES])
def test_fixture_through_et_run(entry, method, tmp_path):
    if not runnable(method):
        result = et_run(entry, method, method, tmp_path)
        assert result.returncode == 1, f"expected a refusal, got {result.returncode}: {result.stderr}"
        missing = sorted(set(method["operators"]) - OPS)
        for name in missing + sorted(set(method["delegates"]) - BACKENDS):
            assert name in result.stderr, f"{name} not named in: {result.stderr}"
        assert "cannot load" in result.stderr
        OUTCOMES["refused at load (missing operators or backend)"] += 1
        return
    for k, call in enumerate(calls_to_check(method)):
        out_dir = tmp_path / f"call{k}"
        result = et_run(entry, method, call, out_dir)
        if result.returncode == 1 and "et-run: NotSupported:" in result.stderr:
            assert any(op in result.stderr for op in method["operators"]), result.stderr
            KERNEL_GAPS.append(f"{entry['name']}.{method['name']}")
            OUTCOMES["refused by a kernel (NotSupported)"] += 1
            return
        assert result.returncode == 0, result.stderr
        for i, (rel, dtype) in enumerate(zip(call["expected"], method["expected_dtypes"])):
            expected = np.load(MODELS / rel)
            actual = np.load(out_dir / f"{i}.npy")
            assert actual.shape == expected.shape, f"output {i}: shape {actual.shape} != {expected.shape}"
            assert actual.dtype == expected.dtype, f"output {i}: dtype {actual.dtype} != {expected.dtype}"
            np.testing.assert_allclose(as_comparable(actual, dtype), as_comparable(expected, dtype),
                                       atol=method["atol"], rtol=method["rtol"], equal_nan=True,
                                       err_msg=f"{entry['name']}.{method['name']} output {i}")
    OUTCOMES["matched eager"] += 1


FLOOR = ["add", "mlp", "add_unplanned_io", "mlp_unplanned_io", "dynamic_batch", "identity_output",
         "identity_output_unplanned_io", "inplace_input", "inplace_input_unplanned_io",
         "mutable_buffer", "tuple_output", "mlp_xnnpack", "cnn_xnnpack", "mobilenet_v2_xnnpack",
         "transformer_block_xnnpack"]


@pytest.mark.parametrize("name", FLOOR)
def test_the_floor_runs_and_matches(name, tmp_path):
    """Fixtures the runtime must run, not refuse: each output matches eager."""
    entry = {m["name"]: m for m in MANIFEST["models"]}[name]
    for method in entry["methods"]:
        assert runnable(method), f"{name}.{method['name']} needs {method['operators']}"
        for k, call in enumerate(calls_to_check(method)):
            result = et_run(entry, method, call, tmp_path / f"{method['name']}{k}")
            assert result.returncode == 0, result.stderr
            for i, rel in enumerate(call["expected"]):
                np.testing.assert_allclose(np.load(tmp_path / f"{method['name']}{k}" / f"{i}.npy"),
                                           np.load(MODELS / rel), atol=method["atol"], rtol=method["rtol"])


def test_info_lists_every_method():
    for entry in MANIFEST["models"]:
        out = subprocess.run([built_tool("et-run"), str(MODELS / entry["pte"]), *data_args(entry),
                              "--info"], capture_output=True, text=True, check=True).stdout
        for method in entry["methods"]:
            assert f"method {method['name']}\n" in out
        assert ("external data file:" in out) == ("ptd" in entry), out
        assert ("\nbundled program: test cases for " in out) == entry["bundled"], out
        # Each method's planned memory: its buffers' bytes, or "none" (metadata methods).
        for line in out.splitlines():
            if line.startswith("  planned memory: "):
                assert re.fullmatch(r"  planned memory: (none|\d+( \+ \d+)* bytes)", line), line


@pytest.mark.parametrize("min_filter", ["0", "1000000000"])
def test_float_fully_connected_on_either_path_generates_eagers_tokens(min_filter):
    """The fp32 export-flow Llama with every FullyConnected on our packed_sgemm (bound 0;
    the fixture's filters are below the default bound) and every one on XNNPACK: the
    tokens eager PyTorch picked, either way."""
    name = "llama_export_flow_xnnpack"
    prompt = np.load(MODELS / name / "forward.in0.npy").reshape(-1).tolist()
    eager = [int(np.load(MODELS / name / f"forward.call{i}.in0.npy").reshape(-1)[0]) for i in range(1, 9)]
    out = subprocess.run([built_tool("et-run"), str(MODELS / f"{name}.pte"), "--generate",
                          ",".join(map(str, prompt)), "--max-new-tokens", "8"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, ET_XNNPACK_FC_MIN_FILTER=min_filter))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "tokens " + ",".join(map(str, eager)), out.stdout


def test_generate_matches_eagers_tokens():
    """et-run --generate: the generation loop of runtime/llm/generation.h in-process, on the
    quantized recipe the export flow made; the tokens eager PyTorch picked."""
    name = "llama_recipe_8da4w_emb4_kv8_xnnpack"
    prompt = np.load(MODELS / name / "forward.in0.npy").reshape(-1).tolist()
    eager = [int(np.load(MODELS / name / f"forward.call{i}.in0.npy").reshape(-1)[0]) for i in range(1, 9)]
    out = subprocess.run([built_tool("et-run"), str(MODELS / f"{name}.pte"), "--generate",
                          ",".join(map(str, prompt)), "--max-new-tokens", "8"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "tokens " + ",".join(map(str, eager)), out.stdout
    assert "stopped: max_new_tokens" in out.stdout
    bad = subprocess.run([built_tool("et-run"), str(MODELS / f"{name}.pte"), "--generate", "1,x"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "comma-separated token ids" in bad.stderr
