"""examples/llm_decode.py as a user runs it: greedy decoding through a running
et-serverd (each transport), with etclient only; the tokens must equal those eager
PyTorch picked when the fixtures were recorded."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import MODELS, ROOT

LLMS = ["llama_decode", "llama_decode_xnnpack", "llama_export_flow", "llama_export_flow_xnnpack",
        "llama_recipe_8da4w_xnnpack", "llama_recipe_emb4_xnnpack", "llama_recipe_8da4w_emb4_kv8_xnnpack",
        "llama_decode_ptd"]


@pytest.mark.parametrize("model", LLMS)
def test_greedy_decode_matches_eager(daemon_socket, transport, model):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "llm_decode.py"), "--socket", str(daemon_socket),
         "--model", str(MODELS / f"{model}.pte"), "--repeat", "1",
         *(["--data", str(MODELS / f"{model}.ptd")] if model.endswith("_ptd") else [])],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ": the same" in result.stdout, result.stdout
    assert f"transport {transport}" in result.stdout, result.stdout
