"""examples/llm_generate.py as a user runs it against a running et-serverd: text in,
text out through a llama2c-format tokenizer (the format ExecuTorch's runner reads),
the tokens generated in the daemon. The fixture's tokens are eager PyTorch's."""

from __future__ import annotations

import json
import struct
import subprocess
import sys

import numpy as np

from conftest import MODELS, ROOT

MODEL = "llama_recipe_8da4w_emb4_kv8_xnnpack"


def write_tokenizer(path, vocab=512):
    """<unk>, <s>, </s>, printable ASCII, one merged piece "ab" (scored highest), then
    placeholders <tN>."""
    pieces = [b"<unk>", b"<s>", b"</s>"] + [bytes([c]) for c in range(32, 127)] + [b"ab"]
    pieces += [f"<t{i}>".encode() for i in range(len(pieces), vocab)]
    with open(path, "wb") as f:
        f.write(struct.pack("IIII", len(pieces), 1, 2, 8))
        for i, p in enumerate(pieces):
            f.write(struct.pack("fI", 100.0 if p == b"ab" else -float(i), len(p)))
            f.write(p)
    return pieces


def generate(daemon_socket, *args):
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "llm_generate.py"), "--socket",
                          daemon_socket, "--model", str(MODELS / f"{MODEL}.pte"), *args],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_text_comes_back_decoded_as_eager_chose_it(daemon_socket, tmp_path):
    pieces = write_tokenizer(tmp_path / "tok.bin")
    prompt = np.load(MODELS / MODEL / "forward.in0.npy").reshape(-1).tolist()
    eager = [int(np.load(MODELS / MODEL / f"forward.call{i}.in0.npy").reshape(-1)[0]) for i in range(1, 9)]
    out = generate(daemon_socket, "--tokenizer", str(tmp_path / "tok.bin"), "--prompt-ids",
                   ",".join(map(str, prompt)), "--max-new-tokens", "8")
    text = "".join(pieces[t].decode() for t in eager)
    assert out.startswith(text), out
    assert "stopped: max_new_tokens" in out, out
    result = json.loads(generate(daemon_socket, "--tokenizer", str(tmp_path / "tok.bin"), "--prompt",
                                 "cab!", "--max-new-tokens", "4", "--json"))
    # BOS, then "c", the merged "ab", "!": the tokenizer encodes as llama2c does.
    assert result["prompt"] == [1, 3 + ord("c") - 32, pieces.index(b"ab"), 3 + ord("!") - 32]
    assert len(result["tokens"]) == 4 and result["decode_tokens_per_s"] > 0
