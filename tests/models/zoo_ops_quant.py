"""Zoo family: ExecuTorch's quantized kernel library (quantized_decomposed::*) and its
LLM custom ops (llama::*), each called directly from a small module so every kernel is
reached by a real program; the expected outputs are eager PyTorch's (the functional
ops of torch.ao.quantization.fx._decomposed and executorch.exir.passes, and the llama
ops' own CPU kernels).

Inputs sit on grids that produce exact ties (x / scale = k + 0.5), so rounding to
even is checked, and values past the quant range, so clamping is.

Also llama::fast_hadamard_transform, the gated delta rules (decode, T = 1, and a
prefill) and preprocess::tile_crop, whose eager implementations are ExecuTorch's own
kernels.

Not here: quantized_decomposed add, mixed_mm and mixed_linear have no eager
implementation (only ExecuTorch's .out kernel, which export cannot trace), nor does
llama::fallback (eager returns its input, so export removes it); their unit tests are
kernels/ops/quantized_ops_test.cc.
"""

from __future__ import annotations

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
import executorch.exir.passes._quant_patterns_and_replacements  # noqa: F401  (embeddings)
import executorch.kernels.quantized  # noqa: F401  (the .out overloads to_executorch needs)
from executorch.extension.llm.custom_ops import custom_ops  # noqa: F401  (llama::)
from executorch.extension.llm.custom_ops import op_tile_crop_aot  # noqa: F401  (its fake kernel)

from fixture_models import half_precision_distinct
from zoo_ops import Fn, ZooOp, seeded

QD = torch.ops.quantized_decomposed
NO_IR_CHECK = {"_skip_dim_order": False}  # any edge_config: export.py then skips the IR check


def op(name, fn, variants, exercises, loose=1.0):
    return ZooOp("q_" + name, lambda: Fn(lambda m, *a: fn(*a)), variants, exercises, loose=loose,
                 edge_config=dict(NO_IR_CHECK))


def ties(shape, step, seed, spread=300):
    """Distinct multiples of step / 2 (ties after dividing by step), shuffled, some past
    int8's range."""
    g = seeded(seed)
    n = int(torch.tensor(shape).prod())
    k = (torch.randperm(2 * spread, generator=g)[:n] - spread).float()
    return (k * (step / 2)).reshape(shape)


def distinct_zero_points(shape, seed):
    """Float zero points (embeddings take them in the scales' dtype), all distinct."""
    n = int(torch.tensor(shape).prod())
    return ((torch.randperm(4 * n, generator=seeded(seed))[:n] - 2 * n).float() / 4).reshape(shape)


def int8(shape, seed, lo=-128, hi=128, dtype=torch.int8):
    return torch.randint(lo, hi, shape, generator=seeded(seed)).to(dtype)


def pack4(values):
    """int4 values [-8, 7] [rows, 2n] -> uint8 [rows, n], high nibble first (+8 each)."""
    u = (values + 8).to(torch.uint8)
    return (u[:, ::2] << 4) | u[:, 1::2]


def pack2(values):
    """int2 values [-2, 1] [rows, 4n] -> uint8 [rows, n], low bits first (+2 each)."""
    u = (values + 2).to(torch.uint8)
    return u[:, 0::4] | (u[:, 1::4] << 2) | (u[:, 2::4] << 4) | (u[:, 3::4] << 6)


def embeddings():
    g = seeded(410)
    idx = torch.tensor([[3, 0, 5], [5, 1, 2]])
    scales = torch.rand(6, 2, generator=g) * 0.1 + 0.01
    zps = distinct_zero_points((6, 2), 412)
    w8 = int8((6, 8), 411)
    w4 = torch.randint(-8, 8, (6, 8), generator=g)
    w2 = torch.randint(-2, 2, (6, 16), generator=g)
    return [
        op("embedding_byte",
           lambda w, s, z, i: QD.embedding_byte.default(w, s, z, -128, 127, i),
           {"float32": (w8, scales, zps, idx)}, ["embedding_byte"]),
        op("embedding_byte_dtype",
           lambda w, s, i: QD.embedding_byte.dtype(w, s, None, -128, 127, i, dtype=torch.float32),
           {"float32": (w8, scales[:, :1].reshape(6), idx), "float16": (w8, scales.half(), idx)},
           ["embedding_byte"]),
        op("embedding_4bit",
           lambda w, s, i: QD.embedding_4bit.dtype(w, s, None, -8, 7, i, dtype=torch.float32),
           {"float32": (pack4(w4), scales, idx), "float16_scales": (pack4(w4), scales.half(), idx)},
           ["embedding_4bit"]),
        op("embedding_4bit_zero_points",
           lambda w, s, z, i: QD.embedding_4bit.default(w, s, z, -8, 7, i),
           {"float32": (pack4(w4), scales, zps, idx)}, ["embedding_4bit"]),
        op("embedding_2bit",
           lambda w, s, i: QD.embedding_2bit.dtype(w, s, None, -2, 1, i, dtype=torch.float32),
           {"float32": (pack2(w2), scales, idx)}, ["embedding_2bit"]),
    ]


def sdpa_inputs(seed, seq, start, cache=8, heads=4, kv_heads=2, dim=8):
    g = seeded(seed)

    def q8(shape):
        return (torch.randint(-128, 128, shape, generator=g).to(torch.int8),
                torch.randint(-20, 20, shape[:-1] + (1,), generator=g).to(torch.int8),
                torch.rand(shape[:-1] + (1,), generator=g) * 0.05 + 0.01)

    q, qz, qs = q8((1, seq, heads, dim))
    k, kz, ks = q8((1, cache, kv_heads, dim))
    v, vz, vs = q8((1, cache, kv_heads, dim))
    return (q, k, v, torch.tensor(start), qz, qs, kz, ks, vz, vs)


def quantized_sdpa(q, k, v, start_pos, qz, qs, kz, ks, vz, vs):
    pos = start_pos.item()
    torch._check_is_size(pos)
    torch._check(pos + q.size(1) <= k.size(1))
    return torch.ops.llama.custom_quantized_sdpa(q, k, v, pos, None, 0.0, True, None,
                                                 qz, qs, kz, ks, vz, vs, False)


def delta_rule_inputs(seed, t, per_channel, hq=4, h=2, k=8, v=6):
    g = seeded(seed)
    q = torch.randn(1, hq, t, k, generator=g) * 0.5
    key = torch.nn.functional.normalize(torch.randn(1, h, t, k, generator=g), dim=-1)
    value = torch.randn(1, h, t, v, generator=g)
    decay_shape = (1, h, t, k) if per_channel else (1, h, t)
    decay = torch.rand(decay_shape, generator=g) * 0.5 + 0.45
    beta = torch.rand(1, h, t, generator=g)
    state = torch.randn(1, h, k, v, generator=g) * 0.1
    return (q, key, value, decay, beta, state)


def llama_ops() -> list[ZooOp]:
    rows = torch.randn(3, 64, generator=seeded(430))
    return [
        op("fast_hadamard_transform", lambda x: torch.ops.llama.fast_hadamard_transform(x),
           {"float32": (rows,), "float32_3d": (torch.randn(2, 3, 16, generator=seeded(431)),),
            "float16": (half_precision_distinct(192, "normal", seeded(433)).reshape(3, 64).half(),),
            "float32_odd_power": (torch.randn(4, 32, generator=seeded(432)),)},
           ["fast_hadamard_transform"]),
        op("gated_delta_rule", lambda *a: torch.ops.llama.gated_delta_rule(*a),
           {"decode": delta_rule_inputs(440, 1, True), "decode_scalar_decay": delta_rule_inputs(441, 1, False),
            "prefill": delta_rule_inputs(442, 5, True)},
           ["gated_delta_rule"], loose=100),
        op("channelwise_gated_delta_rule", lambda *a: torch.ops.llama.channelwise_gated_delta_rule(*a),
           {"decode": delta_rule_inputs(443, 1, True)}, ["gated_delta_rule"], loose=100),
        # Eager's functional tile_crop allocates float32 for at most 4 tiles (more, or
        # another dtype, and it returns garbage): an 8 x 8 image in tiles of 4.
        op("tile_crop", lambda x: torch.ops.preprocess.tile_crop(x, 4),
           {"float32": (torch.randn(3, 8, 8, generator=seeded(450)),)}, ["tile_crop"]),
    ]


def family_ops() -> list[ZooOp]:
    x = ties((3, 4, 5), 0.05, 401)
    rows = ties((2, 3, 8), 0.1, 402)
    # ExecuTorch's own runtime (export.py runs each program there too) takes float64
    # channel scales only; eager then computes in float64.
    ch_scales = torch.tensor([0.05, 0.1, 0.025, 0.2], dtype=torch.float64)
    ch_zps = torch.tensor([0, 3, -5, 127])
    tok_scales = torch.rand(2, 3, 1, generator=seeded(403), dtype=torch.float64) * 0.1 + 0.02
    tok_zps = torch.randint(-10, 10, (2, 3, 1), generator=seeded(404))
    return [
        op("quantize_per_tensor",
           lambda a: QD.quantize_per_tensor(a, 0.05, 3, -128, 127, torch.int8),
           {"float32": (x,)}, ["quantize_per_tensor"]),
        op("quantize_per_tensor_uint8",
           lambda a: QD.quantize_per_tensor(a, 0.05, 100, 0, 255, torch.uint8),
           {"float32": (x,)}, ["quantize_per_tensor"]),
        op("quantize_per_tensor_tensor",
           lambda a, s, z: QD.quantize_per_tensor.tensor(a, s, z, -128, 127, torch.int8),
           {"float32": (x, torch.tensor([0.1], dtype=torch.float64), torch.tensor([-4]))}, ["quantize_per_tensor"]),
        op("dequantize_per_tensor",
           lambda q: QD.dequantize_per_tensor(q, 0.05, 3, -128, 127, torch.int8),
           {"int8": (int8((3, 4, 5), 405),)}, ["dequantize_per_tensor"]),
        op("dequantize_per_tensor_float64",
           lambda q: QD.dequantize_per_tensor(q, 0.05, 3, -128, 127, torch.int8,
                                              out_dtype=torch.float64),
           {"int8": (int8((3, 4, 5), 406),)}, ["dequantize_per_tensor"]),
        op("dequantize_per_tensor_tensor",
           lambda q, s, z: QD.dequantize_per_tensor.tensor(q, s, z, 0, 255, torch.uint8),
           {"uint8": (int8((3, 4, 5), 407, 0, 256, torch.uint8), torch.tensor([0.02], dtype=torch.float64),
                      torch.tensor([128]))}, ["dequantize_per_tensor"]),
        op("quantize_per_channel",
           lambda a, s, z: QD.quantize_per_channel(a, s, z, 1, -128, 127, torch.int8),
           {"float64_scales": (x, ch_scales, ch_zps)},
           ["quantize_per_channel"]),
        op("dequantize_per_channel",
           lambda q, s, z: QD.dequantize_per_channel(q, s, z, 1, -128, 127, torch.int8),
           {"int8": (int8((3, 4, 5), 408), ch_scales, ch_zps)}, ["dequantize_per_channel"]),
        op("dequantize_per_channel_no_zero_points",
           lambda q, s: QD.dequantize_per_channel(q, s, None, -1, -128, 127, torch.int8),
           {"int8": (int8((3, 5, 4), 409), ch_scales)}, ["dequantize_per_channel"]),
        op("quantize_per_token",
           lambda a, s, z: QD.quantize_per_token(a, s, z, -128, 127, torch.int8),
           {"float64_scales": (rows, tok_scales, tok_zps)}, ["quantize_per_token"]),
        op("dequantize_per_token",
           lambda q, s, z: QD.dequantize_per_token(q, s, z, -128, 127, torch.int8, torch.float32),
           {"int8": (int8((2, 3, 8), 412), tok_scales, tok_zps)}, ["dequantize_per_token"]),
        op("choose_qparams_per_token_asymmetric",
           lambda a: QD.choose_qparams_per_token_asymmetric(a, torch.int8),
           {"float32": (rows,), "positive": (ties((2, 3, 8), 0.1, 405, 600) * 0.01 + 40,),
            "near_zero": (ties((2, 4), 2e-9, 406),)},
           ["choose_qparams_per_token_asymmetric"]),
        op("choose_qparams",
           lambda a: QD.choose_qparams.tensor(a, -128, 127, torch.finfo(torch.float32).eps,
                                              torch.int8),
           {"float32": (x,), "negative": (x - x.max() - 0.1,)}, ["choose_qparams"]),
        *embeddings(),
        op("custom_quantized_sdpa", quantized_sdpa,
           {"prefill": sdpa_inputs(420, 5, 0), "decode": sdpa_inputs(421, 1, 6)},
           ["custom_quantized_sdpa"], loose=100),
        *llama_ops(),
    ]
