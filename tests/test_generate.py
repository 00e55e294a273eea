"""Method.generate and Method.stream in etclient, against a running et-serverd: the
LLM programs ExecuTorch's export flow made (fp32 and the quantized recipes) generate
inside the daemon, token for token as eager PyTorch picked them when the fixtures were
recorded; streaming, stopping, seeded sampling and refusals as a user meets them."""

from __future__ import annotations

import numpy as np
import pytest

import etclient
from conftest import MODELS

LLMS = ["llama_export_flow", "llama_export_flow_xnnpack", "llama_recipe_8da4w_xnnpack",
        "llama_recipe_emb4_xnnpack", "llama_recipe_8da4w_emb4_kv8_xnnpack"]


def recorded(model: str) -> tuple[list[int], list[int]]:
    """The prompt and eager's 8 greedy tokens (each recorded decode call's input)."""
    prompt = np.load(MODELS / model / "forward.in0.npy").reshape(-1).tolist()
    tokens = [int(np.load(MODELS / model / f"forward.call{i}.in0.npy").reshape(-1)[0])
              for i in range(1, 9)]
    return prompt, tokens


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime.get(daemon_socket)


def method_of(runtime, model: str):
    return runtime.load_program((MODELS / f"{model}.pte").read_bytes()).load_method("forward")


@pytest.mark.parametrize("model", LLMS)
def test_greedy_tokens_equal_eagers(runtime, model):
    prompt, want = recorded(model)
    method = method_of(runtime, model)
    seen = []
    result = method.generate(prompt, max_new_tokens=8, on_token=seen.append)
    assert result.tokens == want
    assert seen == want
    assert result.stop_reason == "max_new_tokens"
    assert result.prompt_tokens == len(prompt)
    assert result.next_pos == len(prompt) + 7
    assert result.decode_tokens_per_second > 0


def test_stream_yields_tokens_as_they_come_and_a_break_stops_it(runtime):
    prompt, want = recorded("llama_export_flow")
    method = method_of(runtime, "llama_export_flow")
    assert list(method.stream(prompt, max_new_tokens=8)) == want
    taken = []
    for token in method.stream(prompt):  # no bound: would run to the end of the context
        taken.append(token)
        if len(taken) == 3:
            break
    assert taken == want[:3]
    # The instance is free again and continues a conversation where asked.
    first = method.generate(prompt, max_new_tokens=4)
    rest = method.generate([first.tokens[-1]], start_pos=first.next_pos, max_new_tokens=4)
    assert first.tokens + rest.tokens == want


def test_sampling_is_seeded_and_stop_tokens_end_it(runtime):
    prompt, want = recorded("llama_export_flow")
    method = method_of(runtime, "llama_export_flow")
    a = method.generate(prompt, max_new_tokens=12, temperature=1.2, top_p=0.9, seed=5).tokens
    b = method.generate(prompt, max_new_tokens=12, temperature=1.2, top_p=0.9, seed=5).tokens
    c = method.generate(prompt, max_new_tokens=12, temperature=1.2, top_p=0.9, seed=6).tokens
    assert a == b and a != c and len(a) == 12
    stopped = method.generate(prompt, stop_tokens=[want[1]])
    assert stopped.tokens == want[:2] and stopped.stop_reason == "stop_token"
    full = method.generate(prompt)
    assert full.stop_reason == "context_full" and full.next_pos == 64


def test_errors_name_the_problem(runtime):
    method = method_of(runtime, "llama_export_flow")
    with pytest.raises(etclient.InvalidArgument, match="no tokens"):
        method.generate([])
    with pytest.raises(etclient.InvalidArgument, match="top_p"):
        method.generate([1], top_p=1.5)
    with pytest.raises(etclient.InvalidArgument, match="finite temperature"):
        method.generate([1], temperature=float("inf"))
    with pytest.raises(etclient.InvalidArgument, match="does not fit a context of 64"):
        method.generate([1, 2, 3], start_pos=63)

    def boom(token):
        raise RuntimeError(f"callback failed at {token}")

    with pytest.raises(RuntimeError, match="callback failed"):
        method.generate([1, 2], on_token=boom)
    assert len(method.generate([1, 2], max_new_tokens=2).tokens) == 2  # still usable
    mlp = runtime.load_program((MODELS / "mlp.pte").read_bytes()).load_method("forward")
    with pytest.raises(etclient.InvalidArgument, match="LLM export flow"):
        mlp.generate([1, 2, 3])
