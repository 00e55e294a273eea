"""The op zoo: one tiny program per operator, one method per dtype or variant.

A method named after a dtype ("float32", "int64", ...) runs the op on inputs of that
dtype; other method names ("broadcast", "stride_pad", ...) vary the op's arguments.
Which `name.overload` each program really contains is read back from the exported
program by export.py and written to the manifest; `exercises` is only the intent.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch import nn
import torch.nn.functional as F

from fixture_models import MethodSpec, ModelSpec, half_precision_distinct, seeded

# Further op families, each a module beside this one with `family_ops() -> list[ZooOp]`.
ZOO_FAMILIES = ["zoo_ops_index", "zoo_ops_scalar", "zoo_ops_math", "zoo_ops_layout", "zoo_ops_prim", "zoo_ops_users",
                "zoo_ops_fft", "zoo_ops_quant"]

DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float64": torch.float64, "int8": torch.int8, "uint8": torch.uint8,
    "int16": torch.int16, "int32": torch.int32, "int64": torch.int64, "bool": torch.bool,
}
FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int8", "uint8", "int16", "int32", "int64"]
SIGNED_INTS = ["int8", "int16", "int32", "int64"]
NUMERIC = FLOATS + INTS


class Fn(nn.Module):
    """Wraps a function of the inputs (and optional parameters) as a module."""

    def __init__(self, fn: Callable, **params: torch.Tensor):
        super().__init__()
        self.fn = fn
        for k, v in params.items():
            self.register_buffer(k, v)

    def forward(self, *xs):
        return self.fn(self, *xs)


def values(shape, dtype: str, seed: int, kind: str = "normal") -> torch.Tensor:
    """Inputs whose values all differ (where the dtype has room), so no layout
    mistake can pass by luck. kind: normal, positive (> 0.1), unit (-0.9, 0.9),
    special (normal with nan, +inf, -inf planted)."""
    g = seeded(seed)
    n = math.prod(shape)
    dt = DTYPES[dtype]
    if dtype == "bool":
        return torch.rand(shape, generator=g) > 0.5
    if dt in (torch.float16, torch.bfloat16) and n <= 256:
        t = half_precision_distinct(n, kind, g).reshape(shape)
    elif dt.is_floating_point:
        if kind == "positive":
            t = torch.rand(shape, generator=g) * 3.0 + 0.1
        elif kind == "unit":
            t = torch.rand(shape, generator=g) * 1.8 - 0.9
        else:
            t = torch.randn(shape, generator=g) * 2.0
    if dt.is_floating_point:
        if kind == "special":
            flat = t.reshape(-1)
            flat[0], flat[n // 2], flat[-1] = float("nan"), float("inf"), float("-inf")
        return t.to(dt)
    p = torch.randperm(n, generator=g)
    if kind == "positive":
        p = p + 1
    elif dtype != "uint8":
        p = p - n // 2
    info = torch.iinfo(dt)
    if info.bits <= 16:  # wrap into range; distinct as long as n fits the dtype
        p = torch.remainder(p - info.min, info.max - info.min + 1) + info.min
    return p.reshape(shape).to(dt)


@dataclass
class ZooOp:
    name: str
    module: Callable[[], nn.Module]
    variants: dict[str, tuple]
    exercises: list[str] = field(default_factory=list)
    loose: float = 1.0  # tolerance multiplier for ops that accumulate
    preserve: list = field(default_factory=list)  # see ModelSpec.preserve
    edge_config: dict = field(default_factory=dict)


def per_dtype(shapes, dtypes, kind="normal", seed=100):
    return {d: tuple(values(s, d, seed + i, kind) for i, s in enumerate(shapes)) for d in dtypes}


def unary(name, fn, dtypes=FLOATS, kind="normal", shape=(2, 3, 4), **kw):
    return ZooOp(name, lambda: Fn(lambda m, x: fn(x)), per_dtype([shape], dtypes, kind), [name], **kw)


def binary(name, fn, dtypes=NUMERIC, kind="normal", promote=True, **kw):
    variants = per_dtype([(2, 3, 4), (2, 3, 4)], dtypes, kind)
    variants["broadcast"] = (values((2, 3, 4), "float32", 7, kind), values((3, 1), "float32", 8, kind))
    if promote:
        variants["promote_int_float"] = (values((2, 3, 4), "int32", 9, kind),
                                         values((2, 3, 4), "float32", 10, kind))
    return ZooOp(name, lambda: Fn(lambda m, x, y: fn(x, y)), variants, [name], **kw)


def with_equal_elements(variants):
    """Makes half of y equal to x, so equality ops see both answers. Float inputs drawn
    from one grid share their values, so y's own values move half a grid step first:
    every input still holds distinct values."""
    out = {}
    for k, (x, y) in variants.items():
        if x.shape == y.shape and x.dtype == y.dtype:
            if x.is_floating_point():
                grid = torch.unique(x.double().flatten())
                step = (grid[1:] - grid[:-1]).min().item() if grid.numel() > 1 else 1.0
                y = (y.double() + step / 2).to(y.dtype)
            mask = torch.arange(x.numel()).reshape(x.shape) % 2 == 0
            y = torch.where(mask, x, y)
        out[k] = (x, y)
    return out


def module_op(name, make, variants, exercises=None, loose=1.0):
    return ZooOp(name, make, variants, exercises or [name], loose)


def seeded_module(make, seed):
    def build():
        torch.manual_seed(seed)
        m = make()
        for mod in m.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm):
                g = seeded(seed + 1)
                n = mod.num_features
                mod.running_mean.copy_(torch.randn(n, generator=g) * 0.5)
                mod.running_var.copy_(torch.rand(n, generator=g) + 0.5)
                mod.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
                mod.bias.data.copy_(torch.randn(n, generator=g))
        return m.eval()
    return build


def f(shape, seed, dtype="float32", kind="normal"):
    return values(shape, dtype, seed, kind)


def zoo_ops() -> list[ZooOp]:
    ops: list[ZooOp] = []
    # --- unary, elementwise
    for name, fn, kind, dts in [
        ("relu", torch.relu, "normal", FLOATS + SIGNED_INTS),
        ("sigmoid", torch.sigmoid, "normal", FLOATS),
        ("tanh", torch.tanh, "normal", FLOATS),
        ("gelu", F.gelu, "normal", FLOATS),
        ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), "normal", FLOATS),
        ("silu", F.silu, "normal", FLOATS),
        ("hardswish", F.hardswish, "normal", FLOATS),
        ("hardsigmoid", F.hardsigmoid, "normal", FLOATS),
        ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.5), "normal", FLOATS),
        ("relu6", F.relu6, "normal", FLOATS),
        ("elu", F.elu, "normal", FLOATS),
        ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), "normal", FLOATS),
        ("softplus", F.softplus, "normal", FLOATS),
        ("exp", torch.exp, "normal", FLOATS),
        ("expm1", torch.expm1, "normal", FLOATS),
        ("log", torch.log, "positive", FLOATS),
        ("log2", torch.log2, "positive", FLOATS),
        ("log10", torch.log10, "positive", FLOATS),
        ("log1p", torch.log1p, "positive", FLOATS),
        ("sqrt", torch.sqrt, "positive", FLOATS),
        ("rsqrt", torch.rsqrt, "positive", FLOATS),
        ("reciprocal", torch.reciprocal, "positive", FLOATS),
        ("abs", torch.abs, "normal", FLOATS + SIGNED_INTS),
        ("neg", torch.neg, "normal", FLOATS + SIGNED_INTS),
        ("sign", torch.sign, "normal", FLOATS + SIGNED_INTS),
        ("floor", torch.floor, "normal", FLOATS),
        ("ceil", torch.ceil, "normal", FLOATS),
        ("round", torch.round, "normal", FLOATS),
        ("trunc", torch.trunc, "normal", FLOATS),
        ("sin", torch.sin, "normal", FLOATS),
        ("cos", torch.cos, "normal", FLOATS),
        ("tan", torch.tan, "unit", FLOATS),
        ("asin", torch.asin, "unit", FLOATS),
        ("acos", torch.acos, "unit", FLOATS),
        ("atan", torch.atan, "normal", FLOATS),
        ("sinh", torch.sinh, "normal", FLOATS),
        ("cosh", torch.cosh, "normal", FLOATS),
        ("erf", torch.erf, "normal", FLOATS),
        ("isnan", torch.isnan, "special", FLOATS),
        ("isinf", torch.isinf, "special", FLOATS),
        ("logical_not", torch.logical_not, "normal", ["bool", "float32", "int32"]),
        ("bitwise_not", torch.bitwise_not, "normal", ["bool"] + INTS),
        ("square", torch.square, "normal", FLOATS + SIGNED_INTS),
    ]:
        ops.append(unary(name, fn, dts, kind))

    # --- binary, elementwise (dtype variants, broadcasting, int/float promotion)
    ops += [
        binary("add", torch.add),
        binary("sub", torch.sub, dtypes=FLOATS + SIGNED_INTS + ["uint8"]),
        binary("mul", torch.mul),
        binary("div", torch.div),
        binary("div_floor", lambda x, y: torch.div(x, y, rounding_mode="floor"), kind="positive"),
        binary("div_trunc", lambda x, y: torch.div(x, y, rounding_mode="trunc"), kind="positive"),
        binary("remainder", torch.remainder, kind="positive"),
        binary("fmod", torch.fmod, kind="positive"),
        binary("floor_divide", torch.floor_divide, kind="positive"),
        binary("maximum", torch.maximum),
        binary("minimum", torch.minimum),
        binary("pow", torch.pow, dtypes=FLOATS, kind="positive"),
        binary("atan2", torch.atan2, dtypes=FLOATS),
        binary("add_alpha", lambda x, y: torch.add(x, y, alpha=2), dtypes=["float32", "int64"]),
        binary("logical_and", torch.logical_and, dtypes=["bool", "float32", "int32"], promote=False),
        binary("logical_or", torch.logical_or, dtypes=["bool", "float32", "int32"], promote=False),
        binary("logical_xor", torch.logical_xor, dtypes=["bool", "float32", "int32"], promote=False),
        ZooOp("bitwise_and", lambda: Fn(lambda m, x, y: x & y), per_dtype([(2, 3, 4)] * 2, ["bool"] + INTS)),
        ZooOp("bitwise_or", lambda: Fn(lambda m, x, y: x | y), per_dtype([(2, 3, 4)] * 2, ["bool"] + INTS)),
        ZooOp("bitwise_xor", lambda: Fn(lambda m, x, y: x ^ y), per_dtype([(2, 3, 4)] * 2, ["bool"] + INTS)),
    ]
    for name, fn in [("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le),
                     ("gt", torch.gt), ("ge", torch.ge)]:
        op = binary(name, fn)
        op.variants = with_equal_elements(op.variants)
        ops.append(op)
    for name, fn, dts in [
        ("add_scalar", lambda x: x + 2, NUMERIC),
        ("sub_scalar", lambda x: x - 1.5, FLOATS),
        ("rsub_scalar", lambda x: 1 - x, FLOATS + ["int32", "int64"]),
        ("mul_scalar", lambda x: x * 2.5, FLOATS),
        ("mul_scalar_int", lambda x: x * 3, NUMERIC),
        ("div_scalar", lambda x: x / 3, FLOATS + ["int64"]),
        ("pow_tensor_scalar", lambda x: x ** 2, FLOATS + ["int32"]),
        ("pow_scalar_tensor", lambda x: 2 ** x, FLOATS),
        ("eq_scalar", lambda x: x == 0, FLOATS + ["int32", "int64"]),
        ("gt_scalar", lambda x: x > 0.5, FLOATS + ["int64"]),
        ("lt_scalar", lambda x: x < 0.5, FLOATS + ["int64"]),
        ("ge_scalar", lambda x: x >= 1, FLOATS + ["int64"]),
        ("le_scalar", lambda x: x <= 1, FLOATS + ["int64"]),
        ("ne_scalar", lambda x: x != 1, FLOATS + ["int64"]),
        ("clamp", lambda x: torch.clamp(x, -0.5, 1.0), FLOATS + ["int32", "int64"]),
        ("clamp_min", lambda x: torch.clamp(x, min=0.2), FLOATS),
        ("remainder_scalar", lambda x: torch.remainder(x, 3), FLOATS + ["int64"]),
        ("lerp", lambda x: torch.lerp(x, torch.zeros_like(x), 0.3), FLOATS),
    ]:
        ops.append(unary(name, fn, dts))
    ops += [
        ZooOp("where", lambda: Fn(lambda m, c, x, y: torch.where(c, x, y)),
              {d: (values((2, 3, 4), "bool", 1), values((2, 3, 4), d, 2), values((2, 3, 4), d, 3))
               for d in ["float32", "float16", "bfloat16", "int64", "bool"]}
              | {"broadcast": (values((3, 1), "bool", 4), f((2, 3, 4), 5), f((4,), 6))}),
        ZooOp("masked_fill", lambda: Fn(lambda m, x, c: x.masked_fill(c, -7.0)),
              {d: (values((2, 3, 4), d, 1), values((2, 3, 4), "bool", 2)) for d in FLOATS}
              | {"broadcast": (f((2, 3, 4), 3), values((3, 1), "bool", 4))}),
        ZooOp("clamp_tensor", lambda: Fn(lambda m, x, lo, hi: torch.clamp(x, lo, hi)),
              {"float32": (f((2, 3, 4), 1), f((3, 4), 2) - 1.0, f((4,), 3, kind="positive"))}),
        ZooOp("lerp_tensor", lambda: Fn(lambda m, x, y, w: torch.lerp(x, y, w)),
              {"float32": (f((2, 3), 1), f((2, 3), 2), f((2, 3), 3, kind="unit"))}),
    ]

    # --- matrix products
    ops += [
        ZooOp("mm", lambda: Fn(lambda m, a, b: torch.mm(a, b)),
              {d: (values((5, 7), d, 1), values((7, 3), d, 2)) for d in FLOATS + ["int64"]}, loose=10),
        ZooOp("bmm", lambda: Fn(lambda m, a, b: torch.bmm(a, b)),
              {d: (values((2, 5, 7), d, 1), values((2, 7, 3), d, 2)) for d in FLOATS}, loose=10),
        ZooOp("addmm", lambda: Fn(lambda m, c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0)),
              {d: (values((3,), d, 3), values((5, 7), d, 1), values((7, 3), d, 2)) for d in FLOATS}, loose=10),
        ZooOp("matmul", lambda: Fn(lambda m, a, b: torch.matmul(a, b)),
              {"3d_2d": (f((2, 5, 7), 1), f((7, 3), 2)), "4d_4d": (f((2, 2, 4, 6), 3), f((2, 2, 6, 3), 4)),
               "vector": (f((5, 7), 5), f((7,), 6))}, loose=10),
        ZooOp("baddbmm", lambda: Fn(lambda m, c, a, b: torch.baddbmm(c, a, b)),
              {"float32": (f((2, 5, 3), 3), f((2, 5, 7), 1), f((2, 7, 3), 2))}, loose=10),
        module_op("linear", seeded_module(lambda: nn.Linear(7, 5), 1),
                  {"float32": (f((3, 7), 1),), "batched_3d": (f((2, 3, 7), 2),)}, loose=10),
        module_op("linear_no_bias", seeded_module(lambda: nn.Linear(7, 5, bias=False), 2),
                  {"float32": (f((3, 7), 1),)}, loose=10),
        ZooOp("scaled_dot_product_attention",
              lambda: Fn(lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v)),
              {"float32": (f((1, 2, 5, 8), 1), f((1, 2, 6, 8), 2), f((1, 2, 6, 8), 3))}, loose=10),
        ZooOp("sdpa_causal",
              lambda: Fn(lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
              {"float32": (f((1, 2, 5, 8), 1), f((1, 2, 5, 8), 2), f((1, 2, 5, 8), 3))}, loose=10),
    ]

    # --- convolution, normalisation, pooling
    img = f((2, 4, 9, 11), 1)
    ops += [
        module_op("conv2d", seeded_module(lambda: nn.Conv2d(4, 6, 3), 1),
                  {"float32": (img,), "float64": (img.double(),)}, loose=10),
        module_op("conv2d_stride_pad_dilation",
                  seeded_module(lambda: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2), 2),
                  {"float32": (img,)}, loose=10),
        module_op("conv2d_depthwise", seeded_module(lambda: nn.Conv2d(4, 4, 3, padding=1, groups=4), 3),
                  {"float32": (img,)}, loose=10),
        module_op("conv2d_grouped_no_bias",
                  seeded_module(lambda: nn.Conv2d(4, 6, (3, 1), groups=2, bias=False), 4),
                  {"float32": (img,)}, loose=10),
        module_op("conv2d_asymmetric_padding",
                  lambda: Fn(lambda m, x: F.conv2d(F.pad(x, (0, 1, 2, 0)), m.w, None, stride=(1, 2)),
                             w=f((5, 4, 2, 2), 9)),
                  {"float32": (img,)}, loose=10),
        module_op("conv1d", seeded_module(lambda: nn.Conv1d(4, 6, 3, padding=1), 5),
                  {"float32": (f((2, 4, 12), 2),)}, loose=10),
        module_op("conv_transpose2d",
                  seeded_module(lambda: nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1), 6),
                  {"float32": (f((2, 4, 5, 6), 3),)}, loose=10),
        module_op("batch_norm2d", seeded_module(lambda: nn.BatchNorm2d(4), 7),
                  {"float32": (img,), "float64": (img.double(),)}),
        module_op("batch_norm1d", seeded_module(lambda: nn.BatchNorm1d(4), 8),
                  {"float32": (f((3, 4, 5), 4),)}),
        module_op("layer_norm", seeded_module(lambda: nn.LayerNorm(11), 9),
                  {"float32": (img,), "float64": (img.double(),)}, loose=10),
        module_op("layer_norm_2d_shape", seeded_module(lambda: nn.LayerNorm([9, 11]), 10),
                  {"float32": (img,)}, loose=10),
        module_op("group_norm", seeded_module(lambda: nn.GroupNorm(2, 4), 11),
                  {"float32": (img,)}, loose=10),
        module_op("instance_norm", seeded_module(lambda: nn.InstanceNorm2d(4), 12),
                  {"float32": (img,)}, loose=10),
        ZooOp("max_pool2d", lambda: Fn(lambda m, x: F.max_pool2d(x, 2)),
              {d: (values((2, 4, 9, 11), d, 1),) for d in FLOATS}
              | {"stride_pad_dilation": (img,), "ceil_mode": (img,)}),
        ZooOp("max_pool2d_args", lambda: Fn(lambda m, x: F.max_pool2d(x, 3, stride=2, padding=1, dilation=1,
                                                                     ceil_mode=True)),
              {"float32": (img,)}),
        ZooOp("max_pool2d_with_indices",
              lambda: Fn(lambda m, x: F.max_pool2d(x, 2, return_indices=True)), {"float32": (img,)}),
        ZooOp("avg_pool2d", lambda: Fn(lambda m, x: F.avg_pool2d(x, 2)),
              {d: (values((2, 4, 9, 11), d, 1),) for d in FLOATS}),
        ZooOp("avg_pool2d_args",
              lambda: Fn(lambda m, x: F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True,
                                                   count_include_pad=False)),
              {"float32": (img,)}),
        ZooOp("adaptive_avg_pool2d", lambda: Fn(lambda m, x: F.adaptive_avg_pool2d(x, 1)),
              {"float32": (img,), "float16": (img.half(),)}),
        ZooOp("adaptive_avg_pool2d_uneven", lambda: Fn(lambda m, x: F.adaptive_avg_pool2d(x, (2, 3))),
              {"float32": (img,)}),
        ZooOp("upsample_nearest2d", lambda: Fn(lambda m, x: F.interpolate(x, scale_factor=2, mode="nearest")),
              {"float32": (img,)}),
        ZooOp("upsample_nearest2d_size", lambda: Fn(lambda m, x: F.interpolate(x, size=(5, 17), mode="nearest")),
              {"float32": (img,)}),
        ZooOp("upsample_bilinear2d",
              lambda: Fn(lambda m, x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)),
              {"float32": (img,)}),
        ZooOp("upsample_bilinear2d_align_corners",
              lambda: Fn(lambda m, x: F.interpolate(x, size=(7, 13), mode="bilinear", align_corners=True)),
              {"float32": (img,)}),
        ZooOp("pixel_shuffle", lambda: Fn(lambda m, x: F.pixel_shuffle(x, 2)), {"float32": (f((2, 8, 3, 5), 1),)}),
        ZooOp("pixel_unshuffle", lambda: Fn(lambda m, x: F.pixel_unshuffle(x, 2)), {"float32": (f((2, 2, 6, 4), 1),)}),
        ZooOp("constant_pad_nd", lambda: Fn(lambda m, x: F.pad(x, (1, 2, 0, 3), value=0.5)),
              {d: (values((2, 4, 5, 6), d, 1),) for d in FLOATS + ["int64"]}),
        ZooOp("reflection_pad2d", lambda: Fn(lambda m, x: F.pad(x, (1, 2, 2, 1), mode="reflect")),
              {"float32": (img,)}),
        ZooOp("replication_pad2d", lambda: Fn(lambda m, x: F.pad(x, (1, 2, 2, 1), mode="replicate")),
              {"float32": (img,)}),
        module_op("prelu", seeded_module(lambda: nn.PReLU(4), 13), {"float32": (img,)}),
        ZooOp("glu", lambda: Fn(lambda m, x: F.glu(x, dim=-1)), {"float32": (f((3, 8), 1),)}),
    ]

    # --- softmax and reductions
    x3 = (2, 3, 4)
    ops += [
        ZooOp("softmax", lambda: Fn(lambda m, x: torch.softmax(x, dim=-1)),
              per_dtype([x3], FLOATS) | {"dim1": (f((2, 5, 3), 1),)}),
        ZooOp("softmax_dim1", lambda: Fn(lambda m, x: torch.softmax(x, dim=1)), per_dtype([x3], ["float32"])),
        ZooOp("log_softmax", lambda: Fn(lambda m, x: torch.log_softmax(x, dim=-1)), per_dtype([x3], FLOATS)),
        ZooOp("sum_dim", lambda: Fn(lambda m, x: x.sum(dim=1)), per_dtype([x3], NUMERIC + ["bool"]), loose=10),
        ZooOp("sum_dims_keepdim", lambda: Fn(lambda m, x: x.sum(dim=(0, 2), keepdim=True)),
              per_dtype([x3], ["float32", "int64"]), loose=10),
        ZooOp("sum_all", lambda: Fn(lambda m, x: x.sum()), per_dtype([x3], ["float32", "int32"]), loose=10),
        ZooOp("mean_dim", lambda: Fn(lambda m, x: x.mean(dim=-1, keepdim=True)), per_dtype([x3], FLOATS), loose=10),
        ZooOp("mean_all", lambda: Fn(lambda m, x: x.mean()), per_dtype([x3], ["float32"]), loose=10),
        ZooOp("amax", lambda: Fn(lambda m, x: x.amax(dim=1)), per_dtype([x3], FLOATS + ["int64"])),
        ZooOp("amin", lambda: Fn(lambda m, x: x.amin(dim=(0, 2))), per_dtype([x3], FLOATS + ["int64"])),
        ZooOp("argmax", lambda: Fn(lambda m, x: x.argmax(dim=1)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("argmin", lambda: Fn(lambda m, x: x.argmin(dim=-1)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("max_dim", lambda: Fn(lambda m, x: x.max(dim=1)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("min_dim", lambda: Fn(lambda m, x: x.min(dim=2, keepdim=True)), per_dtype([x3], ["float32"])),
        ZooOp("var", lambda: Fn(lambda m, x: x.var(dim=1)), per_dtype([x3], ["float32", "float64"]), loose=10),
        ZooOp("std", lambda: Fn(lambda m, x: x.std(dim=-1, correction=0)), per_dtype([x3], ["float32"]), loose=10),
        ZooOp("prod", lambda: Fn(lambda m, x: x.prod(dim=1)), per_dtype([x3], ["float32", "int64"]), loose=10),
        ZooOp("cumsum", lambda: Fn(lambda m, x: x.cumsum(dim=1)), per_dtype([x3], ["float32", "int64"]), loose=10),
        ZooOp("any", lambda: Fn(lambda m, x: x.any(dim=1)), per_dtype([x3], ["bool", "float32"])),
        ZooOp("all", lambda: Fn(lambda m, x: x.all()), per_dtype([x3], ["bool"])),
        ZooOp("logsumexp", lambda: Fn(lambda m, x: torch.logsumexp(x, dim=-1)), per_dtype([x3], ["float32"]),
              loose=10),
        ZooOp("vector_norm", lambda: Fn(lambda m, x: torch.linalg.vector_norm(x, dim=-1)),
              per_dtype([x3], ["float32"]), loose=10),
        ZooOp("topk", lambda: Fn(lambda m, x: torch.topk(x, 2, dim=-1)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("sort", lambda: Fn(lambda m, x: torch.sort(x, dim=1, descending=True)),
              per_dtype([x3], ["float32", "int64"])),
    ]

    # --- shape and indexing
    idx = torch.tensor([2, 0, 1, 2], dtype=torch.int64)
    ops += [
        ZooOp("view", lambda: Fn(lambda m, x: x.view(6, 4) + 0), per_dtype([x3], ["float32", "int64", "bool"])),
        ZooOp("reshape_transposed", lambda: Fn(lambda m, x: x.transpose(0, 2).reshape(4, 6) * 1),
              per_dtype([x3], ["float32"])),
        ZooOp("flatten", lambda: Fn(lambda m, x: torch.flatten(x, 1) * 1), per_dtype([x3], ["float32"])),
        ZooOp("permute", lambda: Fn(lambda m, x: x.permute(2, 0, 1) * 1), per_dtype([x3], ["float32", "int64"])),
        ZooOp("transpose", lambda: Fn(lambda m, x: x.transpose(1, 2).contiguous() * 1), per_dtype([x3], ["float32"])),
        ZooOp("t", lambda: Fn(lambda m, x: x.t() * 1), per_dtype([(3, 5)], ["float32"])),
        ZooOp("expand", lambda: Fn(lambda m, x: x.expand(2, 3, 4) * 1), per_dtype([(3, 1)], ["float32", "int64"])),
        ZooOp("squeeze", lambda: Fn(lambda m, x: x.squeeze(1) * 1), per_dtype([(2, 1, 4)], ["float32"])),
        ZooOp("squeeze_dims", lambda: Fn(lambda m, x: x.squeeze((0, 2)) * 1), per_dtype([(1, 3, 1, 4)], ["float32"])),
        ZooOp("unsqueeze", lambda: Fn(lambda m, x: x.unsqueeze(1) * 1), per_dtype([x3], ["float32"])),
        ZooOp("select", lambda: Fn(lambda m, x: x.select(1, 2) * 1), per_dtype([x3], ["float32", "int64"])),
        ZooOp("select_negative", lambda: Fn(lambda m, x: x[:, -1] * 1), per_dtype([x3], ["float32"])),
        ZooOp("slice", lambda: Fn(lambda m, x: x[:, 1:, ::2] * 1), per_dtype([x3], ["float32", "int64"])),
        ZooOp("narrow", lambda: Fn(lambda m, x: x.narrow(2, 1, 2) * 1), per_dtype([x3], ["float32"])),
        ZooOp("cat", lambda: Fn(lambda m, x, y: torch.cat([x, y], dim=1)),
              per_dtype([(2, 3, 4), (2, 2, 4)], ["float32", "float16", "int64", "bool"])),
        ZooOp("cat_dim0_three", lambda: Fn(lambda m, x, y, z: torch.cat([x, y, z])),
              per_dtype([(1, 4), (2, 4), (3, 4)], ["float32"])),
        ZooOp("stack", lambda: Fn(lambda m, x, y: torch.stack([x, y], dim=1)), per_dtype([x3, x3], ["float32"])),
        ZooOp("split_with_sizes", lambda: Fn(lambda m, x: torch.split(x, [1, 3], dim=2)),
              per_dtype([x3], ["float32", "int64"])),
        ZooOp("split", lambda: Fn(lambda m, x: torch.split(x, 2, dim=2)), per_dtype([(2, 3, 5)], ["float32"])),
        ZooOp("chunk", lambda: Fn(lambda m, x: torch.chunk(x, 3, dim=1)), per_dtype([x3], ["float32"])),
        ZooOp("unbind", lambda: Fn(lambda m, x: torch.unbind(x, dim=1)), per_dtype([x3], ["float32"])),
        ZooOp("flip", lambda: Fn(lambda m, x: torch.flip(x, dims=(0, 2))), per_dtype([x3], ["float32", "int64"])),
        ZooOp("roll", lambda: Fn(lambda m, x: torch.roll(x, shifts=(1, -2), dims=(1, 2))), per_dtype([x3], ["float32"])),
        ZooOp("repeat", lambda: Fn(lambda m, x: x.repeat(2, 1, 3)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("repeat_interleave", lambda: Fn(lambda m, x: x.repeat_interleave(2, dim=1)),
              per_dtype([x3], ["float32"])),
        ZooOp("tril", lambda: Fn(lambda m, x: torch.tril(x)), per_dtype([(4, 5)], ["float32"])),
        ZooOp("triu", lambda: Fn(lambda m, x: torch.triu(x, diagonal=1)), per_dtype([(4, 5)], ["float32"])),
        ZooOp("index_select", lambda: Fn(lambda m, x, i: torch.index_select(x, 1, i)),
              {d: (values(x3, d, 1), torch.tensor([2, 0, 2])) for d in ["float32", "int64"]}),
        ZooOp("gather", lambda: Fn(lambda m, x, i: torch.gather(x, 2, i)),
              {"float32": (f(x3, 1), torch.tensor([[[3, 0], [1, 1], [2, 0]], [[0, 3], [2, 2], [1, 3]]]))}),
        ZooOp("index_tensor", lambda: Fn(lambda m, x, i: x[i]),
              {d: (values((4, 3), d, 1), idx) for d in ["float32", "int64"]}),
        ZooOp("index_tensor_two", lambda: Fn(lambda m, x, i, j: x[i, :, j]),
              {"float32": (f(x3, 1), torch.tensor([1, 0]), torch.tensor([3, 2]))}),
        ZooOp("index_bool_mask_where", lambda: Fn(lambda m, x, c: torch.where(c, x, 0.0)),
              {"float32": (f(x3, 1), values(x3, "bool", 2))}),
        ZooOp("index_put", lambda: Fn(lambda m, x, i, v: torch.index_put(x, (i,), v)),
              {"float32": (f((4, 3), 1), torch.tensor([3, 0]), f((2, 3), 2))}),
        ZooOp("scatter", lambda: Fn(lambda m, x, i, s: torch.scatter(x, 1, i, s)),
              {"float32": (f((2, 4), 1), torch.tensor([[3, 0], [1, 2]]), f((2, 2), 2))}),
        ZooOp("scatter_add", lambda: Fn(lambda m, x, i, s: torch.scatter_add(x, 1, i, s)),
              {"float32": (f((2, 4), 1), torch.tensor([[3, 3], [1, 2]]), f((2, 2), 2))}),
        ZooOp("embedding", lambda: Fn(lambda m, i: F.embedding(i, m.w), w=f((10, 4), 3)),
              {"int64": (torch.tensor([[3, 0, 9], [1, 1, 7]]),), "int32": (torch.tensor([4, 2, 8], dtype=torch.int32),)}),
        ZooOp("clone_channels_last", lambda: Fn(lambda m, x: x.clone(memory_format=torch.channels_last) + 0),
              {"float32": (f((2, 3, 4, 5), 1),)}),
        ZooOp("contiguous_from_channels_last", lambda: Fn(lambda m, x: x.contiguous() * 1),
              {"float32": (f((2, 3, 4, 5), 1).to(memory_format=torch.channels_last),)}),
    ]

    # --- dtype conversion and creation
    ops += [
        ZooOp("to_float16", lambda: Fn(lambda m, x: x.to(torch.float16)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("to_float32", lambda: Fn(lambda m, x: x.to(torch.float32)),
              per_dtype([x3], ["float16", "bfloat16", "float64", "int8", "uint8", "int32", "int64", "bool"])),
        ZooOp("to_int32", lambda: Fn(lambda m, x: x.to(torch.int32)), per_dtype([x3], ["float32", "int64", "bool"])),
        ZooOp("to_bfloat16", lambda: Fn(lambda m, x: x.to(torch.bfloat16)), per_dtype([x3], ["float32"])),
        ZooOp("to_bool", lambda: Fn(lambda m, x: x.to(torch.bool)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("arange", lambda: Fn(lambda m, x: x + torch.arange(1, 5, dtype=x.dtype)), per_dtype([x3], ["float32", "int64"])),
        ZooOp("arange_step", lambda: Fn(lambda m, x: x * torch.arange(0.5, 2.5, 0.5)), per_dtype([x3], ["float32"])),
        ZooOp("full", lambda: Fn(lambda m, x: x + torch.full((3, 4), 1.5)), per_dtype([x3], ["float32"])),
        ZooOp("full_like", lambda: Fn(lambda m, x: torch.full_like(x, 2.5) - x), per_dtype([x3], ["float32"])),
        ZooOp("zeros_like", lambda: Fn(lambda m, x: torch.zeros_like(x) + x * 2), per_dtype([x3], ["float32"])),
        ZooOp("ones_like", lambda: Fn(lambda m, x: torch.ones_like(x) - x), per_dtype([x3], ["float32", "int64"])),
        ZooOp("scalar_tensor_add", lambda: Fn(lambda m, x: x + torch.tensor(3.0)), per_dtype([x3], ["float32"])),
    ]
    for family in ZOO_FAMILIES:
        ops += importlib.import_module(family).family_ops()
    return ops


class BufferCopy(nn.Module):
    """aten::copy_ through a mutable buffer written from the input."""

    def __init__(self):
        super().__init__()
        self.register_buffer("state", torch.zeros(2, 3))

    def forward(self, x):
        y = self.state + x
        self.state.copy_(x)
        return y


class DynamicView(nn.Module):
    """Dynamic batch: sym_size and prim scalar arithmetic feed a view."""

    def forward(self, x):
        b = x.shape[0]
        return (x.reshape(b * 2, -1) + 1).sum(dim=0) / b


def stateful_zoo_specs() -> list[ModelSpec]:
    """Zoo programs that need a dynamic dim or several calls on one instance."""
    from torch.export import Dim

    batch = Dim("batch", min=1, max=6)
    return [
        ModelSpec("zoo_copy_", [MethodSpec("float32", BufferCopy(), (values((2, 3), "float32", 1),),
                                           subsequent_calls=[(values((2, 3), "float32", 2),)])],
                  ["copy_"], zoo=True),
        ModelSpec("zoo_sym_size",
                  [MethodSpec("float32", DynamicView(), (values((3, 4, 6), "float32", 3),),
                              dynamic_shapes=({0: batch},),
                              subsequent_calls=[(values((6, 4, 6), "float32", 4),),
                                                (values((1, 4, 6), "float32", 5),)])],
                  ["sym_size", "prim_scalar_ops", "view"], zoo=True),
    ]
