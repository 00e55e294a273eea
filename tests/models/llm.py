"""A tiny Llama-style decoder for the LLM fixtures: RMSNorm, rotary embeddings,
grouped-query attention with scaled_dot_product_attention, SwiGLU, and a KV cache
kept in mutable buffers that each call updates in place (`cache[:, :, pos] = k`), as
torch.export sees the decoders people deploy. forward(tokens [1, seq], positions
[seq]) returns the logits [1, seq, vocab]; seq is dynamic, so one method serves the
prefill (the prompt at once) and every decode step (one token)."""

from __future__ import annotations

import torch
from torch import nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    """Rotary embedding on interleaved pairs of x's last dim."""
    even, odd = x[..., ::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], -1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int, kv_heads: int, max_seq: int):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        shape = (1, kv_heads, max_seq, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def forward(self, x, pos, cos, sin, mask):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim)
        k = self.wk(x).view(b, t, self.kv_heads, self.head_dim)
        v = self.wv(x).view(b, t, self.kv_heads, self.head_dim)
        q = rotate(q, cos, sin).transpose(1, 2)
        k = rotate(k, cos, sin).transpose(1, 2)
        self.k_cache[:, :, pos] = k
        self.v_cache[:, :, pos] = v.transpose(1, 2)
        group = self.heads // self.kv_heads
        keys = self.k_cache.repeat_interleave(group, 1)
        vals = self.v_cache.repeat_interleave(group, 1)
        y = F.scaled_dot_product_attention(q, keys, vals, attn_mask=mask)
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class Block(nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden, max_seq):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention(dim, heads, kv_heads, max_seq)
        self.ffn_norm = RMSNorm(dim)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, pos, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), pos, cos, sin, mask)
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class TinyLlama(nn.Module):
    def __init__(self, vocab=256, dim=64, heads=4, kv_heads=2, hidden=128, layers=2, max_seq=64):
        super().__init__()
        self.max_seq = max_seq
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(Block(dim, heads, kv_heads, hidden, max_seq) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        head_dim = dim // heads
        inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(max_seq).float(), inv)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        causal = torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool))
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, tokens, pos):
        x = self.tok_embeddings(tokens)
        cos = self.cos[pos].unsqueeze(0).unsqueeze(2)
        sin = self.sin[pos].unsqueeze(0).unsqueeze(2)
        mask = self.causal[pos]
        for layer in self.layers:
            x = layer(x, pos, cos, sin, mask)
        return self.output(self.norm(x))


def tiny_llama(seed: int) -> TinyLlama:
    torch.manual_seed(seed)
    model = TinyLlama().eval()
    with torch.no_grad():  # RMSNorm weights away from 1 so a dropped scale shows
        for m in model.modules():
            if isinstance(m, RMSNorm):
                m.weight.uniform_(0.5, 1.5)
    return model.requires_grad_(False)  # buffers are written in place when traced


def greedy_calls(model: TinyLlama, prompt: list[int], steps: int) -> list[tuple]:
    """The prefill call and `steps` decode calls of a greedy decode of `prompt`, as
    (tokens, positions) inputs: each decode step feeds the token eager picked."""
    import copy

    m = copy.deepcopy(model)
    calls = [(torch.tensor([prompt]), torch.arange(len(prompt)))]
    with torch.no_grad():
        logits = m(*calls[0])
        for s in range(steps):
            token = int(logits[0, -1].argmax())
            p = len(prompt) + s
            calls.append((torch.tensor([[token]]), torch.tensor([p])))
            logits = m(*calls[-1])
    return calls
