"""The LLMs the generate benchmark runs: a small Llama (dim 512, 8 layers, 8 heads, 4 KV
heads, vocab 4096, 256 positions: 28M parameters) exported by ExecuTorch's own LLM
export command (python -m executorch.extension.llm.export.export_llm --config FILE) in
two recipes, fp32 on XNNPACK and 8da4w + 4-bit embeddings + int8 KV cache, from one
seeded random checkpoint; and a llama2c-format tokenizer for ExecuTorch's runner.
Made once into build/bench-llm/ (a few minutes on two cores); run this module to make
them: .venv-export/bin/python -m benchmarks.suite.llm_models"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "bench-llm"
PARAMS = {"dim": 512, "n_layers": 8, "n_heads": 8, "n_kv_heads": 4, "vocab_size": 4096,
          "multiple_of": 256, "norm_eps": 1e-5, "rope_theta": 10000.0, "use_scaled_rope": False}
CONTEXT = 256
RECIPES = {
    "fp32": {},
    "8da4w_emb4_kv8": {"quantization": {"qmode": "8da4w", "group_size": 32,
                                        "embedding_quantize": "4,32"},
                       "model": {"quantize_kv_cache": True}},
}
BOS, EOS = 1, 2


def pte(recipe: str) -> Path:
    return OUT / f"llama_bench_{recipe}.pte"


def tokenizer() -> Path:
    return OUT / "tokenizer.bin"


def kv_cache_bytes(recipe: str) -> int:
    """One method instance's KV cache: keys and values of every layer at every position,
    float32, or int8 with a float32 scale and an int8 zero point per token and head."""
    heads_dim = PARAMS["n_kv_heads"] * (PARAMS["dim"] // PARAMS["n_heads"])
    per_position = heads_dim * 4
    if RECIPES[recipe].get("model", {}).get("quantize_kv_cache"):
        per_position = heads_dim + PARAMS["n_kv_heads"] * 5
    return 2 * PARAMS["n_layers"] * CONTEXT * per_position


def write_checkpoint(path: Path) -> None:
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    torch.manual_seed(0)
    model = construct_transformer(ModelArgs(**PARAMS))
    g = torch.Generator().manual_seed(61)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.randn(p.shape, generator=g) * 0.05 if p.dim() >= 2 else torch.ones(p.shape))
    torch.save(model.state_dict(), path)


def write_tokenizer(path: Path) -> None:
    """llama2c format (vocab, bos, eos, longest piece; then score, length, bytes per
    piece): <unk>, <s>, </s>, the printable ASCII bytes, then placeholders."""
    pieces = [b"<unk>", b"<s>", b"</s>"] + [bytes([c]) for c in range(32, 127)]
    pieces += [f"<t{i}>".encode() for i in range(len(pieces), PARAMS["vocab_size"])]
    with open(path, "wb") as f:
        f.write(struct.pack("IIII", len(pieces), BOS, EOS, max(len(p) for p in pieces)))
        for i, p in enumerate(pieces):
            f.write(struct.pack("fI", -float(i), len(p)))
            f.write(p)


def yaml_for(recipe: str) -> str:
    extra = RECIPES[recipe]
    lines = ["base:", "  model_class: llama3", f"  params: {OUT / 'params.json'}",
             f"  checkpoint: {OUT / 'ckpt.pth'}",
             f"  metadata: '{{\"get_bos_id\": {BOS}, \"get_eos_ids\": [{EOS}]}}'",
             "model:", "  use_kv_cache: True", "  use_sdpa_with_kv_cache: True",
             "  dtype_override: fp32"]
    lines += [f"  {k}: {v}" for k, v in extra.get("model", {}).items()]
    lines += ["export:", f"  max_seq_length: {CONTEXT}", f"  max_context_length: {CONTEXT}",
              f"  output_dir: {OUT}", f"  output_name: {pte(recipe).name}"]
    if "quantization" in extra:
        lines += ["quantization:"] + [f"  {k}: '{v}'" if isinstance(v, str) and "," in v
                                      else f"  {k}: {v}" for k, v in extra["quantization"].items()]
    lines += ["backend:", "  xnnpack:", "    enabled: True", "    extended_ops: True"]
    return "\n".join(lines) + "\n"


def ensure(log=print) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    if not (OUT / "params.json").exists() or json.loads((OUT / "params.json").read_text()) != PARAMS:
        (OUT / "params.json").write_text(json.dumps(PARAMS))
        for f in OUT.glob("*.pt*"):
            f.unlink()
    if not (OUT / "ckpt.pth").exists():
        write_checkpoint(OUT / "ckpt.pth")
    if not tokenizer().exists():
        write_tokenizer(tokenizer())
    for recipe in RECIPES:
        if pte(recipe).exists():
            continue
        config = OUT / f"{recipe}.yaml"
        config.write_text(yaml_for(recipe))
        log(f"exporting {pte(recipe).name} with export_llm (recipe {recipe})")
        subprocess.run([sys.executable, "-m", "executorch.extension.llm.export.export_llm",
                        "--config", str(config)], check=True, cwd=OUT, capture_output=True)


if __name__ == "__main__":
    ensure()
