"""LLM fixtures made by ExecuTorch's own LLM export flow (the code behind
`python -m executorch.extension.llm.export.export_llm`), as its users run it: a tiny,
randomly initialised Llama (dim 64, 2 layers, 4 heads, 2 KV heads, vocab 512) with a
KV cache and `use_sdpa_with_kv_cache`, so the program calls the flow's `llama::`
custom operators for the cache update and attention. The eager reference is the very
module the flow exports (after its source transforms), captured just before export.

forward(tokens [1, seq], input_pos [1]) returns the last token's logits [1, 512]; the
first recorded call is the prefill of a prompt, each later call one greedy decode step
on the same method instance.

Recipes (RECIPES): the quantized forms users ship, with the flow's own options:
8da4w (int8 dynamic activations x 4-bit weights in groups of 32, XNNPACK), 4-bit
embeddings in groups of 32, and an int8 KV cache. Their weights come from a seeded
checkpoint (the flow quantizes what it loads), so the eager reference is the flow's
quantized module itself."""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

import torch
from torch import nn

from fixture_models import MethodSpec, ModelSpec

PARAMS = {"dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 512,
          "multiple_of": 32, "norm_eps": 1e-5, "rope_theta": 10000.0}
PROMPT = [1, 7, 300, 42, 5]
DECODE_STEPS = 8

# Recipe name -> the flow's options beyond the common ones (llm_recipes/*.yaml say the
# same as export_llm --config files).
RECIPES = {
    "8da4w": {"quantization.qmode": "8da4w", "quantization.group_size": 32},
    "emb4": {"quantization.embedding_quantize": "4,32"},
    "8da4w_emb4_kv8": {"quantization.qmode": "8da4w", "quantization.group_size": 32,
                       "quantization.embedding_quantize": "4,32", "model.quantize_kv_cache": True},
}


class EagerStep(nn.Module):
    """The flow's module with the program's calling convention."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, tokens, input_pos):
        return self.model(tokens, {"input_pos": input_pos})


def randomize(model: nn.Module, seed: int) -> None:
    """Seeded weights: normal(0, 0.1) for matrices and embeddings, (0.5, 1.5) for norm
    scales, so every layer shapes the logits and a decode step picks varied tokens."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.dim() >= 2:
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
            else:
                p.copy_(torch.rand(p.shape, generator=g) + 0.5)


def greedy_calls(step: nn.Module) -> list[tuple]:
    m = copy.deepcopy(step)
    calls = [(torch.tensor([PROMPT]), torch.tensor([0]))]
    with torch.no_grad():
        logits = m(*calls[0])
        for s in range(DECODE_STEPS):
            calls.append((torch.tensor([[int(logits[0].argmax())]]), torch.tensor([len(PROMPT) + s])))
            logits = m(*calls[-1])
    return calls


def write_checkpoint(path: Path, seed: int) -> None:
    """A seeded state dict for the flow's Llama (randomize's distribution)."""
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    model = construct_transformer(ModelArgs(**PARAMS))
    randomize(model, seed)
    torch.save(model.state_dict(), path)


def prepare(spec: ModelSpec) -> None:
    """Runs the export flow; fills spec.methods and spec.program."""
    from executorch.examples.models.llama import export_llama_lib
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401 (registers llama::)
    from executorch.extension.llm.export.builder import LLMEdgeManager
    from executorch.extension.llm.export.config.llm_config import LlmConfig

    with tempfile.TemporaryDirectory(prefix="et-llm-") as tmp:
        params = Path(tmp) / "params.json"
        params.write_text(json.dumps(PARAMS))
        config = LlmConfig()
        config.base.params = str(params)
        config.model.use_kv_cache = True
        config.model.use_sdpa_with_kv_cache = True
        config.model.enable_dynamic_shape = True
        config.export.max_seq_length = 64
        config.export.max_context_length = 64
        config.export.output_dir = tmp
        config.export.output_name = str(Path(tmp) / f"{spec.name}.pte")
        config.backend.xnnpack.enabled = spec.delegated
        recipe = RECIPES.get(getattr(spec, "recipe", ""), None)
        if recipe is not None:
            config.backend.xnnpack.extended_ops = True
            config.base.checkpoint = str(Path(tmp) / "ckpt.pth")
            write_checkpoint(Path(config.base.checkpoint), seed=61)
            for key, value in recipe.items():
                section, field = key.split(".")
                setattr(getattr(config, section), field, value)
        captured = {}
        original = LLMEdgeManager.export

        def capture(self):
            # Without a checkpoint the flow's weights give all-zero logits: draw them.
            if recipe is None:
                randomize(self.model, seed=61)
            captured["model"] = copy.deepcopy(self.model)
            return original(self)

        LLMEdgeManager.export = capture
        try:
            torch.manual_seed(60)
            builder = export_llama_lib._export_llama(config)
        finally:
            LLMEdgeManager.export = original
    step = EagerStep(captured["model"]).eval()
    calls = greedy_calls(step)
    # 8da4w: eager (torchao) and XNNPACK quantize activations differently (ExecuTorch's
    # own runtime is 0.05-0.07 off eager's logits, of magnitude ~2, on these programs);
    # the greedy tokens still agree (tests/test_llm_decode.py checks each one).
    atol, rtol = (0.15, 0.05) if "8da4w" in getattr(spec, "recipe", "") else (1e-4, 1e-4)
    method = MethodSpec("forward", step, calls[0], subsequent_calls=calls[1:], atol=atol,
                        rtol=rtol)
    method.stateful = True  # type: ignore[attr-defined]
    spec.methods = [method]
    spec.program = builder.export_program  # type: ignore[attr-defined]


def export_flow_spec(name: str, delegated: bool, recipe: str = "") -> ModelSpec:
    exercises = ["llm_decode", "llm_export_flow", "llama_custom_ops", "kv_cache"]
    if recipe:
        exercises.append("llm_recipe_" + recipe)
    spec = ModelSpec(name, [], exercises, delegated=delegated,
                     notes="made by ExecuTorch's LLM export flow (llm_export_flow.py"
                           + (f", recipe {recipe}" if recipe else "") + "): "
                           "prefill of a 5-token prompt, then 8 greedy decode steps")
    spec.prepare = prepare  # type: ignore[attr-defined]
    spec.recipe = recipe  # type: ignore[attr-defined]
    return spec
