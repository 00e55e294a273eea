#!/usr/bin/env python3
"""Greedy decoding of a decoder LLM through et-serverd, with the etclient package only
(no torch, no ExecuTorch runtime in this process).

The daemon owns the program and the method instance, so its KV cache lives there;
each call ships token ids and positions in, logits out. By default the program is the
tiny Llama that ExecuTorch's own LLM export flow made (tests/models/llama_export_flow.pte,
its `llama::` cache-update and attention operators, randomly initialised weights), and
the tokens are checked against the ones eager PyTorch picked when the fixture was
recorded (tests/models/manifest.json).

  examples/llm_decode.py --socket PATH [--model FILE.pte] [--tokens N] [--repeat K]

Prints the tokens, whether they equal eager PyTorch's, the prefill time and the decode
rate (tokens per second, the median of K repeats on fresh method instances).
Exit status 1 when the tokens differ from eager's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "tests" / "models"


def recorded_run(pte: Path) -> tuple[list[int], list[int]]:
    """The prompt and eager PyTorch's greedy tokens, from the fixture's manifest entry."""
    manifest = json.loads((MODELS / "manifest.json").read_text())
    entry = next(m for m in manifest["models"] if m["pte"] == pte.name)
    method = entry["methods"][0]
    prompt = np.load(MODELS / method["inputs"][0]).reshape(-1).tolist()
    tokens = [int(np.load(MODELS / c["inputs"][0]).reshape(-1)[0]) for c in method["subsequent_calls"]]
    return prompt, tokens


class Decoder:
    """Prefill and greedy steps on one method instance. Two calling conventions are
    understood: (tokens [1, seq], start position [1]) -> last logits [1, vocab] (the
    export flow), and (tokens [1, seq], positions [seq]) -> logits [1, seq, vocab]."""

    def __init__(self, method):
        self.method = method
        self.per_token_positions = None

    def step(self, tokens: list[int], start: int) -> int:
        ids = np.array([tokens], dtype=np.int64)
        if self.per_token_positions is None:
            self.per_token_positions = self.method.metadata.input_tensor_meta(1).sizes()[0] > 1
        if self.per_token_positions:
            pos = np.arange(start, start + len(tokens), dtype=np.int64)
        else:
            pos = np.array([start], dtype=np.int64)
        logits = np.asarray(self.method.execute([ids, pos])[0])
        return int(logits.reshape(-1, logits.shape[-1])[-1].argmax())


def decode(program, prompt: list[int], steps: int) -> tuple[list[int], float, float, str]:
    """Returns the generated tokens, the prefill and decode seconds, the transport."""
    decoder = Decoder(program.load_method("forward"))
    t0 = time.perf_counter()
    token = decoder.step(prompt, 0)
    t1 = time.perf_counter()
    generated = [token]
    for s in range(1, steps):
        token = decoder.step([token], len(prompt) + s - 1)
        generated.append(token)
    return generated, t1 - t0, time.perf_counter() - t1, decoder.method.transport


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", help="et-serverd's socket (default: etclient's default)")
    parser.add_argument("--model", type=Path, default=MODELS / "llama_export_flow.pte")
    parser.add_argument("--data", type=Path, default=None,
                        help="the program's external weights (.ptd), if it was exported with them")
    parser.add_argument("--tokens", type=int, default=8, help="tokens to generate")
    parser.add_argument("--repeat", type=int, default=5, help="runs to take the median of")
    args = parser.parse_args()

    from etclient import Runtime

    prompt, eager = recorded_run(args.model)
    runtime = Runtime.get(args.socket)
    program = runtime.load_program(args.model.read_bytes(), data_path=args.data)
    runs = [decode(program, prompt, args.tokens) for _ in range(max(1, args.repeat))]
    tokens = runs[0][0]
    prefill = statistics.median(r[1] for r in runs)
    rate = statistics.median((args.tokens - 1) / r[2] for r in runs if r[2] > 0)
    print(f"prompt {prompt}")
    print(f"tokens {tokens}")
    compared = min(len(tokens), len(eager))
    same = tokens[:compared] == eager[:compared]
    print(f"eager PyTorch picked {eager[:compared]}: {'the same' if same else 'DIFFERENT'}")
    print(f"prefill of {len(prompt)} tokens {prefill * 1e3:.2f} ms; "
          f"decode {rate:.0f} tokens/s (median of {len(runs)} runs, transport {runs[0][3]})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
