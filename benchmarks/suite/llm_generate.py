"""LLM generation: a small Llama (28M parameters; benchmarks/suite/llm_models.py)
exported by ExecuTorch's export_llm command in two recipes, fp32 and 8da4w + 4-bit
embeddings + int8 KV cache (XNNPACK), generating greedily from one 33-token prompt.

Contenders: ExecuTorch's own LLM runner (executorch.extension.llm.runner.TextLLMRunner,
text in through the same llama2c tokenizer; its rates from its Stats, in whole
milliseconds); executorch.runtime in-process with the token loop in Python; our
runtime in-process (`et-run --generate`: the loop of runtime/llm/generation.h, a fresh
process each time, so its prefill includes compiling the XNNPACK graphs for the
prompt's shape, which the daemon does once per program); et-serverd
with the loop in the daemon (etclient's Method.generate, examples/llm_generate.py, one
call, tokens streamed). Prefill: prompt tokens per second until the first token's
logits; decode: the tokens after the first per second. Ratios are against the runner.

Memory: the daemon's resident set with the 8da4w program loaded by one client and a
method instance that has generated, then each further client process (its own
session, method instance and KV cache) that loads the same program and generates: the
weights are held once, so an extra session should cost its KV cache and activations,
not another copy of the weights."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from . import harness as h
from . import llm_models as models

PROMPT = "The quick brown fox jumps over th"  # 33 bytes: BOS + 33 single-byte pieces
NEW_TOKENS = 64
EXTRA_SESSIONS = 3


def prompt_ids() -> list[int]:
    return [models.BOS] + [3 + ord(c) - 32 for c in PROMPT]


def runner(pte: Path) -> dict:
    import executorch.kernels.quantized  # noqa: F401  (the runner shares the registry)
    from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401
    from executorch.extension.llm.runner import GenerationConfig, TextLLMRunner

    stats = {}
    r = TextLLMRunner(str(pte), str(models.tokenizer()))
    config = GenerationConfig(echo=False, max_new_tokens=NEW_TOKENS, temperature=0.0, num_bos=1)
    r.generate(PROMPT, config, stats_callback=lambda s: stats.update(json.loads(s.to_json_string())))
    return {"prefill": stats["prefill_token_per_sec"], "decode": stats["decode_token_per_sec"],
            "tokens": stats["generated_tokens"]}


def runtime_loop(pte: Path) -> dict:
    import torch
    from executorch.runtime import Runtime

    method = Runtime.get().load_program(pte).load_method("forward")
    ids = prompt_ids()
    t0 = time.perf_counter()
    logits = method.execute([torch.tensor([ids]), torch.tensor([0])])[0]
    t1 = time.perf_counter()
    token, pos = int(logits[0].argmax()), len(ids)
    for _ in range(NEW_TOKENS - 1):
        token = int(method.execute([torch.tensor([[token]]), torch.tensor([pos])])[0][0].argmax())
        pos += 1
    t2 = time.perf_counter()
    return {"prefill": len(ids) / (t1 - t0), "decode": (NEW_TOKENS - 1) / (t2 - t1), "tokens": NEW_TOKENS}


def et_run(pte: Path) -> dict:
    out = subprocess.run([str(h.BUILD / "tools" / "et-run"), str(pte), "--generate",
                          ",".join(map(str, prompt_ids())), "--max-new-tokens", str(NEW_TOKENS)],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    m = re.search(r"\(([\d.]+) tokens/s\); decode (\d+) tokens in [\d.]+ ms \(([\d.]+) tokens/s\)", out)
    return {"prefill": float(m[1]), "decode": float(m[3]), "tokens": int(m[2]) + 1}


def daemon_generate(daemon: h.Daemon, pte: Path, hold: bool = False):
    args = [str(h.CLIENT_PY), str(h.ROOT / "examples" / "llm_generate.py"), "--socket", str(daemon.socket),
            "--model", str(pte), "--prompt-ids", ",".join(map(str, prompt_ids())), "--max-new-tokens",
            str(NEW_TOKENS), "--json"] + (["--hold"] if hold else [])
    if hold:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        json.loads(proc.stdout.readline())
        return proc
    r = json.loads(subprocess.run(args, capture_output=True, text=True, check=True, timeout=600).stdout)
    return {"prefill": r["prefill_tokens_per_s"], "decode": r["decode_tokens_per_s"], "tokens": len(r["tokens"])}


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def memory(pte: Path) -> dict:
    with h.Daemon() as daemon:
        before = rss_kb(daemon.pid)
        holders = [daemon_generate(daemon, pte, hold=True)]
        first = rss_kb(daemon.pid)
        after = []
        for _ in range(EXTRA_SESSIONS):
            holders.append(daemon_generate(daemon, pte, hold=True))
            after.append(rss_kb(daemon.pid))
        for p in holders:
            p.stdin.close()
            p.wait(timeout=60)
    extra = (after[-1] - first) / EXTRA_SESSIONS
    return {"idle_kb": before, "first_session_kb": first - before, "extra_session_kb": extra,
            "pte_kb": pte.stat().st_size / 1024}


def run(s: h.Settings) -> h.Section:
    section = h.Section("llm_generate", "LLM generation (tokens per second; memory per session)",
                        h.prose(__doc__))
    models.ensure(log=lambda m: h.log(section.name, m))
    labels = {"runner": "ExecuTorch TextLLMRunner", "runtime": "executorch.runtime, Python loop",
              "et_run": "our runtime in-process (et-run --generate)",
              "daemon": "et-serverd generate (etclient)"}
    rows = []
    recipes = ["8da4w_emb4_kv8"] if s.quick else list(models.RECIPES)
    with h.Daemon() as daemon:
        for recipe in recipes:
            pte = models.pte(recipe)
            contenders = {"runner": lambda: runner(pte), "runtime": lambda: runtime_loop(pte),
                          "et_run": lambda: et_run(pte), "daemon": lambda: daemon_generate(daemon, pte)}
            h.interleaved(1, contenders)  # warm-up
            # One generation is tens of milliseconds on a shared two-core machine: calls
            # vary by about 10%, so more turns than the default steady the medians.
            r = h.interleaved(s.repeats if s.quick else max(s.repeats, 7), contenders)
            for k, label in labels.items():
                pre, dec = r[k]["prefill"], r[k]["decode"]
                rows.append([recipe, label, f"{pre:.0f}", f"{pre / r['runner']['prefill']:.2f}x", f"{dec:.0f}",
                             f"{dec / r['runner']['decode']:.2f}x"])
                section.metric(f"{recipe}.{k}.prefill_tokens_per_s", pre, "1/s", "higher")
                section.metric(f"{recipe}.{k}.decode_tokens_per_s", dec, "1/s", "higher")
            h.log(section.name, recipe, {k: (round(v["prefill"]), round(v["decode"])) for k, v in r.items()})
    section.table(f"{NEW_TOKENS} new tokens after a {len(prompt_ids())}-token prompt; medians of the "
                  "interleaved repeats.",
                  ["recipe", "candidate", "prefill tok/s", "vs runner", "decode tok/s", "vs runner"], rows)
    mem_rows = []
    for recipe in recipes:
        m = memory(models.pte(recipe))
        mem_rows.append([recipe, f"{m['pte_kb'] / 1024:.1f}", f"{models.kv_cache_bytes(recipe) / 2**20:.2f}",
                         f"{m['first_session_kb'] / 1024:.1f}", f"{m['extra_session_kb'] / 1024:.1f}"])
        section.metric(f"{recipe}.extra_session_kb", m["extra_session_kb"], "KiB", "lower")
        section.metric(f"{recipe}.kv_cache_kb", models.kv_cache_bytes(recipe) / 1024, "KiB", "lower")
        section.metric(f"{recipe}.pte_kb", m["pte_kb"], "KiB", "lower")
        h.log(section.name, "memory", recipe, m)
    section.table(f"Daemon resident set (VmRSS): the first client's program and method, then the mean of "
                  f"{EXTRA_SESSIONS} more client sessions each with its own method instance.",
                  ["recipe", ".pte MiB", "KV cache MiB", "first session MiB", "each extra session MiB"], mem_rows)
    return section
