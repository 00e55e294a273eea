#!/usr/bin/env python3
"""Greedy decoding of the LLM fixtures, side by side in one run:

- through et-serverd with the Python client (examples/llm_decode.py: etclient, no
  torch), on the fast path and over gRPC;
- in-process with this project's runtime (tools/et-bench on one decode step: the
  method instance is reused, so every timed call is a real decode step at one position);
- in-process with ExecuTorch 1.5.1's own runtime (executorch.runtime, the peer), the
  same greedy loop as the example.

Candidates are interleaved (A B C A B C ...) after a warm-up; medians of the repeats.
Runs from the export environment after `scripts/build` and `scripts/install-client`:

  .venv-export/bin/python benchmarks/llm_decode.py [--repeat N] [--tokens N] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import re
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"
BUILD = ROOT / "build"
CLIENT_PY = ROOT / ".venv" / "bin" / "python"
FIXTURES = ["llama_decode", "llama_decode_xnnpack", "llama_export_flow", "llama_export_flow_xnnpack"]


def recorded(name: str):
    manifest = json.loads((MODELS / "manifest.json").read_text())
    method = next(m for m in manifest["models"] if m["name"] == name)["methods"][0]
    return method


def through_daemon(sock: str, name: str, tokens: int, transport: str) -> float:
    out = subprocess.run(
        [CLIENT_PY, ROOT / "examples" / "llm_decode.py", "--socket", sock, "--model",
         MODELS / f"{name}.pte", "--tokens", str(tokens), "--repeat", "1"],
        capture_output=True, text=True, check=True, env={"ETSERVER_TRANSPORT": transport},
        timeout=300).stdout
    assert ": the same" in out, out
    return float(re.search(r"decode (\d+) tokens/s", out).group(1))


def in_process_ours(name: str) -> float:
    """et-bench on the third decode step's inputs: per-call time of one decode step."""
    method = recorded(name)
    call = method["subsequent_calls"][2]
    args = [BUILD / "tools" / "et-bench", MODELS / f"{name}.pte", "--warmup", "20",
            "--iterations", "300"]
    for rel in call["inputs"]:
        args += ["--input", MODELS / rel]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    record = json.loads(out.strip().splitlines()[-1])
    return 1000.0 / record["median_ms"]


def in_process_executorch(name: str, tokens: int) -> float:
    import numpy as np
    import torch
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401
    from executorch.runtime import Runtime

    method_rec = recorded(name)
    prompt = np.load(MODELS / method_rec["inputs"][0]).reshape(-1).tolist()
    per_token = np.load(MODELS / method_rec["inputs"][1]).size > 1
    program = Runtime.get().load_program(MODELS / f"{name}.pte")
    method = program.load_method("forward")

    def step(ids, start):
        pos = torch.arange(start, start + len(ids)) if per_token else torch.tensor([start])
        logits = method.execute([torch.tensor([ids]), pos])[0]
        return int(logits.reshape(-1, logits.shape[-1])[-1].argmax())

    token = step(prompt, 0)
    t0 = time.perf_counter()
    for s in range(1, tokens):
        token = step([token], len(prompt) + s - 1)
    return (tokens - 1) / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--markdown", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="et-bench-") as tmp:
        sock = str(Path(tmp) / "s.sock")
        daemon = subprocess.Popen([BUILD / "server" / "et-serverd", "--socket", sock,
                                   "--log-level", "warn"])
        try:
            for _ in range(100):
                if Path(sock).exists():
                    break
                time.sleep(0.05)
            for name in FIXTURES:
                candidates = {
                    "et-serverd, fast path": lambda: through_daemon(sock, name, args.tokens, "fast"),
                    "et-serverd, gRPC": lambda: through_daemon(sock, name, args.tokens, "grpc"),
                    "our runtime in-process (et-bench)": lambda: in_process_ours(name),
                    "executorch.runtime in-process": lambda: in_process_executorch(name, args.tokens),
                }
                for fn in candidates.values():  # warm-up
                    fn()
                results = {k: [] for k in candidates}
                for _ in range(args.repeat):
                    for k, fn in candidates.items():
                        results[k].append(fn())
                peer = statistics.median(results["executorch.runtime in-process"])
                for k, v in results.items():
                    med = statistics.median(v)
                    rows.append((name, k, med, med / peer))
                    print(f"{name:28s} {k:36s} {med:8.0f} tokens/s  {med / peer:5.2f}x of executorch.runtime",
                          flush=True)
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    if args.markdown:
        lines = ["# Greedy decode of the LLM fixtures: tokens per second", "",
                 f"`{' '.join(['.venv-export/bin/python', 'benchmarks/llm_decode.py'] + [f'--repeat {args.repeat}', f'--tokens {args.tokens}'])}`, "
                 f"{time.strftime('%Y-%m-%d')}, {platform.node()} ({platform.processor() or platform.machine()}), "
                 f"executorch {importlib.metadata.version('executorch')}. Medians of {args.repeat} interleaved "
                 "repeats; decode steps only (the prefill is not counted); ratio = tokens/s over "
                 "executorch.runtime's (higher is faster).", "",
                 "| program | candidate | tokens/s | vs executorch.runtime |", "|---|---|---|---|"]
        lines += [f"| {n} | {k} | {v:.0f} | {r:.2f}x |" for n, k, v, r in rows]
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
