#!/usr/bin/env python3
"""Generates text with an LLM through et-serverd: the prefill and the decode loop run in
the daemon (Method.generate), each token streams back as it is chosen, and only the
tokenizer runs here (no torch, no ExecuTorch runtime in this process).

  examples/llm_generate.py --model FILE.pte [--tokenizer FILE] [--prompt TEXT]
      [--prompt-ids 1,2,3] [--max-new-tokens N] [--temperature T] [--top-p P] [--seed S]
      [--socket PATH] [--json] [--hold]

The program is one ExecuTorch's LLM export flow made (python -m
executorch.extension.llm.export.export_llm). Tokenizers: a llama2c-format tokenizer.bin
(what ExecuTorch's runner also reads; decoded and encoded here), or a Hugging Face
tokenizer.json when the `tokenizers` package is installed. Without one, --prompt-ids
gives the prompt and the tokens print as ids. Stops at the program's end-of-sequence
ids (its get_eos_ids method, or the tokenizer's), after --max-new-tokens, or when the
context is full. --json prints the result and rates as one JSON line; --hold keeps the
session (and so the method's KV cache in the daemon) until stdin closes.
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from pathlib import Path


class Llama2cTokenizer:
    """The llama2c tokenizer.bin format: a header (vocab size, BOS, EOS, longest piece;
    all uint32), then per piece its score (float32), length (uint32) and bytes.
    Encoding starts from single bytes and merges the adjacent pair whose joined piece
    scores highest, as llama2c does."""

    def __init__(self, path: Path):
        data = path.read_bytes()
        size, self.bos, self.eos, _ = struct.unpack_from("IIII", data, 0)
        at, self.pieces, self.scores = 16, [], []
        for _ in range(size):
            score, n = struct.unpack_from("fI", data, at)
            self.pieces.append(data[at + 8:at + 8 + n])
            self.scores.append(score)
            at += 8 + n
        self.ids = {p: i for i, p in enumerate(self.pieces)}

    def encode(self, text: str) -> list[int]:
        ids = []
        for b in text.encode():
            piece = bytes([b])
            if piece not in self.ids:
                raise SystemExit(f"llm_generate: the tokenizer has no piece for byte {b:#x}")
            ids.append(self.ids[piece])
        while True:
            best, where = None, -1
            for i in range(len(ids) - 1):
                merged = self.ids.get(self.pieces[ids[i]] + self.pieces[ids[i + 1]])
                if merged is not None and (best is None or self.scores[merged] > self.scores[best]):
                    best, where = merged, i
            if best is None:
                return [self.bos] + ids
            ids[where:where + 2] = [best]

    def decode(self, token: int) -> str:
        return self.pieces[token].decode(errors="replace") if 0 <= token < len(self.pieces) else ""


class HuggingFaceTokenizer:
    def __init__(self, path: Path):
        from tokenizers import Tokenizer  # optional: pip install tokenizers
        self.tok = Tokenizer.from_file(str(path))
        self.eos = None

    def encode(self, text: str) -> list[int]:
        return self.tok.encode(text).ids

    def decode(self, token: int) -> str:
        return self.tok.decode([token])


def load_tokenizer(path: Path | None):
    if path is None:
        return None
    if path.suffix == ".json":
        try:
            return HuggingFaceTokenizer(path)
        except ImportError:
            raise SystemExit("llm_generate: a tokenizer.json needs the `tokenizers` package "
                             "(pip install tokenizers)") from None
    return Llama2cTokenizer(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--tokenizer", type=Path)
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--prompt-ids", help="comma-separated token ids (instead of --prompt)")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--top-p", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--socket", help="et-serverd's socket (default: etclient's default)")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    ap.add_argument("--hold", action="store_true", help="keep the session until stdin closes")
    args = ap.parse_args()

    from etclient import Runtime

    tokenizer = load_tokenizer(args.tokenizer)
    if args.prompt_ids:
        prompt = [int(t) for t in args.prompt_ids.split(",")]
    elif tokenizer is not None:
        prompt = tokenizer.encode(args.prompt)
    else:
        raise SystemExit("llm_generate: give --tokenizer (to encode --prompt) or --prompt-ids")
    program = Runtime.get(args.socket).load_program(args.model.read_bytes())
    stops = []
    if "get_eos_ids" in program.method_names:
        stops = [int(t) for t in program.load_method("get_eos_ids").execute([])]
    elif tokenizer is not None and getattr(tokenizer, "eos", None) is not None:
        stops = [tokenizer.eos]
    method = program.load_method("forward")

    def show(token: int) -> None:
        if not args.json:
            print(tokenizer.decode(token) if tokenizer else f"{token} ", end="", flush=True)

    result = method.generate(prompt, max_new_tokens=args.max_new_tokens, stop_tokens=stops,
                             temperature=args.temperature, top_p=args.top_p, seed=args.seed,
                             on_token=show)
    prefill_rate = result.prompt_tokens / (result.prefill_micros * 1e-6) if result.prefill_micros else 0
    if args.json:
        print(json.dumps({"prompt": prompt, "tokens": result.tokens, "stop_reason": result.stop_reason,
                          "prefill_tokens_per_s": prefill_rate,
                          "decode_tokens_per_s": result.decode_tokens_per_second,
                          "transport": method.transport}), flush=True)
    else:
        print(f"\n[{len(result.tokens)} tokens, stopped: {result.stop_reason}; prefill of "
              f"{result.prompt_tokens} tokens {prefill_rate:.0f} tokens/s, decode "
              f"{result.decode_tokens_per_second:.0f} tokens/s]")
    if args.hold:
        sys.stdin.read()
    return 0


if __name__ == "__main__":
    sys.exit(main())
