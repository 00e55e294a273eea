"""LLM decode: greedy decoding of the LLM fixtures (issue 26 builds on it).

Through et-serverd with the Python client (examples/llm_decode.py: etclient, no torch)
on the fast path and over gRPC; this project's runtime in-process (tools/et-bench on
one decode step: every timed call is a real decode step at one position); ExecuTorch's
executorch.runtime in-process, the same greedy loop as the example. Decode steps only
(the prefill is not counted); ratio: tokens/s over executorch.runtime's (higher is
faster)."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import time

from . import harness as h

FIXTURES = ["llama_decode", "llama_decode_xnnpack", "llama_export_flow", "llama_export_flow_xnnpack"]
TOKENS = 32
# Decodes per client process, the median taken: a 32-token decode lasts a few
# milliseconds, so one scheduler stall on a two-core machine (a thread that spins on the
# core the daemon computes on) can cut a single run's rate by two thirds.
RUNS_PER_CALL = 5


def recorded(name: str) -> dict:
    manifest = json.loads((h.MODELS / "manifest.json").read_text())
    return next(m for m in manifest["models"] if m["name"] == name)["methods"][0]


def through_daemon(daemon: h.Daemon, name: str, transport: str) -> dict:
    out = subprocess.run(
        [str(h.CLIENT_PY), str(h.ROOT / "examples" / "llm_decode.py"), "--socket", str(daemon.socket), "--model",
         str(h.MODELS / f"{name}.pte"), "--tokens", str(TOKENS), "--repeat", str(RUNS_PER_CALL)],
        capture_output=True, text=True, check=True, env=dict(os.environ, ETSERVER_TRANSPORT=transport),
        timeout=300).stdout
    assert ": the same" in out, out
    return {"tokens_per_s": float(re.search(r"decode (\d+) tokens/s", out).group(1))}


def in_process_ours(name: str) -> dict:
    call = recorded(name)["subsequent_calls"][2]
    r = h.et_bench(name, iterations=300, warmup=20, inputs=[h.MODELS / rel for rel in call["inputs"]])
    return {"tokens_per_s": 1000.0 / r["median_ms"]}


def in_process_executorch(name: str) -> dict:
    import numpy as np
    import torch
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401
    from executorch.runtime import Runtime

    rec = recorded(name)
    prompt = np.load(h.MODELS / rec["inputs"][0]).reshape(-1).tolist()
    per_token = np.load(h.MODELS / rec["inputs"][1]).size > 1
    program = Runtime.get().load_program(h.MODELS / f"{name}.pte")

    def run() -> float:
        # A fresh method instance (a fresh KV cache), as the example's repeats use.
        method = program.load_method("forward")

        def step(ids, start):
            pos = torch.arange(start, start + len(ids)) if per_token else torch.tensor([start])
            logits = method.execute([torch.tensor([ids]), pos])[0]
            return int(logits.reshape(-1, logits.shape[-1])[-1].argmax())

        token = step(prompt, 0)
        t0 = time.perf_counter()
        for s in range(1, TOKENS):
            token = step([token], len(prompt) + s - 1)
        return (TOKENS - 1) / (time.perf_counter() - t0)

    return {"tokens_per_s": statistics.median(run() for _ in range(RUNS_PER_CALL))}


def run(s: h.Settings) -> h.Section:
    section = h.Section("llm", "LLM decode (tokens per second)", h.prose(__doc__))
    fixtures = FIXTURES[1:2] if s.quick else FIXTURES
    labels = {"fast": "et-serverd fast path", "grpc": "et-serverd gRPC", "in_process": "our runtime in-process",
              "executorch": "executorch.runtime in-process"}
    rows = []
    with h.Daemon() as daemon:
        for name in fixtures:
            contenders = {"fast": lambda: through_daemon(daemon, name, "fast"),
                          "grpc": lambda: through_daemon(daemon, name, "grpc"),
                          "in_process": lambda: in_process_ours(name),
                          "executorch": lambda: in_process_executorch(name)}
            h.interleaved(1, contenders)  # warm-up
            r = h.interleaved(max(s.repeats, 3), contenders)
            peer = r["executorch"]["tokens_per_s"]
            for k, label in labels.items():
                v = r[k]["tokens_per_s"]
                rows.append([name, label, f"{v:.0f}", f"{v / peer:.2f}x"])
                section.metric(f"{name}.{k}.tokens_per_s", v, "1/s", "higher")
            h.log(section.name, name, {k: round(v["tokens_per_s"]) for k, v in r.items()})
    section.table(f"{TOKENS} tokens; medians of the interleaved repeats, each turn of the fast path, gRPC "
                  f"and executorch.runtime the median of {RUNS_PER_CALL} decodes.",
                  ["program", "candidate", "tokens/s", "vs executorch.runtime"], rows)
    return section
