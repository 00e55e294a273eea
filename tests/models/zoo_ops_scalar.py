"""Zoo family: Scalar overloads of arithmetic and bitwise ops, shifts, a few real
functions (acosh, asinh, atanh, logit, glu), fills, whole-tensor reductions
(max/min/prod/var/var_mean), factories (ones, zeros, empty, arange, rand, randn),
copies (_to_copy, alias/detach/lift_fresh), item() and numel(), and eval-mode dropout.

Each op is called as torch.ops.aten.<op>.<overload> where plain PyTorch would trace to
another overload, so the exported program names the operator under test.

`family_ops()` holds the programs the standard export keeps intact. `preserved_ops()`
holds the rest: the standard export decomposes them (rsub, floor_divide, logit, glu,
fill, masked_fill, var.out, tril, ones, zeros, arange.out) or rejects them as not core
ATen (the shifts, var_mean), and its dim-order pass renames _to_copy and empty.out.
Each comes with the ops to keep, for EdgeCompileConfig(preserve_ops=...,
_core_aten_ops_exception_list=..., _check_ir_validity=False), and further config
fields (_skip_dim_order=True); export.py has no such option yet. Two ops never survive
any export config: torch.export turns lift_fresh_copy into clone, and x.numel() into
a product of sym_size values (`dynamic_specs()` builds that program for sym_numel);
only a rewrite of the edge graph makes a program name them.

Random factories are checked through deterministic statistics: rand's values all lie
in [0, 1), randn's mean and standard deviation over 4096 draws are near 0 and 1, and
`r * 0` carries the shape and dtype (a NaN or inf would show).
"""

from __future__ import annotations

import torch
from torch import nn

from fixture_models import MethodSpec, ModelSpec
from zoo_ops import FLOATS, INTS, NUMERIC, SIGNED_INTS, Fn, ZooOp, per_dtype, values

A = torch.ops.aten
X3 = (2, 3, 4)


def _op(name, fn, variants, loose=1.0):
    return ZooOp(name, lambda: Fn(fn), variants, [name], loose)


def _unary(name, fn, dtypes, kind="normal", shape=X3, loose=1.0):
    return _op(name, lambda m, x: fn(x), per_dtype([shape], dtypes, kind), loose)


def _shifted(dtype, seed):
    """Shift amounts 0..width+1 of `dtype` (some past the width), as dtype."""
    width = torch.iinfo(getattr(torch, dtype)).bits
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, width + 2, X3, generator=g).to(getattr(torch, dtype))


def _standard_ops() -> list[ZooOp]:
    f = lambda shape, seed, dt="float32", kind="normal": values(shape, dt, seed, kind)  # noqa: E731
    bools = {"bool": (values(X3, "bool", 3),)}
    # Values on both sides of 44 (300 wrapped to 8 bits) and of 300.
    wrapping = {"int8": (torch.tensor([-128, -100, -44, -1, 0, 1, 43, 44, 45, 88, 100, 127], dtype=torch.int8),),
                "uint8": (torch.tensor([0, 1, 43, 44, 45, 88, 200, 255], dtype=torch.uint8),),
                "int16": (torch.tensor([-300, -44, 0, 44, 299, 300, 301, 1000], dtype=torch.int16),)}
    return [
        # --- arithmetic with a Scalar
        _unary("s_add_scalar", lambda x: A.add.Scalar(x, 2, alpha=3), NUMERIC),
        # an int scalar beyond the tensor's integer dtype wraps first (300 -> 44 in int8)
        _op("s_remainder_wrapped_scalar", lambda m, x: torch.remainder(x, 300), wrapping),
        _op("s_fmod_wrapped_scalar", lambda m, x: torch.fmod(x, 300), wrapping),
        _op("s_eq_wrapped_scalar", lambda m, x: torch.eq(x, 300), wrapping),
        _op("s_lt_wrapped_scalar", lambda m, x: torch.lt(x, 300), wrapping),
        _op("s_add_scalar_float", lambda m, x: A.add.Scalar(x, 2.5, alpha=1.5),
            per_dtype([X3], FLOATS + ["int32"])),
        _op("s_add_scalar_bool", lambda m, x: A.add.Scalar(x, True), bools),
        _unary("s_sub_scalar", lambda x: A.sub.Scalar(x, 2.5, alpha=2), FLOATS + ["int32"]),
        _unary("s_sub_scalar_int", lambda x: A.sub.Scalar(x, 3), SIGNED_INTS + ["uint8"]),
        _unary("s_div_scalar", lambda x: A.div.Scalar(x, 3), FLOATS + INTS + ["bool"]),
        _unary("s_div_scalar_float", lambda x: A.div.Scalar(x, -0.75), FLOATS + ["int64"]),
        _unary("s_div_scalar_floor", lambda x: A.div.Scalar_mode(x, -3, rounding_mode="floor"),
               NUMERIC),
        _unary("s_div_scalar_trunc", lambda x: A.div.Scalar_mode(x, 3, rounding_mode="trunc"),
               NUMERIC),
        _unary("s_div_scalar_wrap", lambda x: A.div.Scalar_mode(x, 300, rounding_mode="floor"),
               ["int8", "uint8"]),
        _unary("s_div_scalar_none", lambda x: A.div.Scalar_mode(x, 4, rounding_mode=None),
               ["float32", "int32"]),
        # --- bitwise with a Scalar
        _unary("s_bitwise_and_scalar", lambda x: A.bitwise_and.Scalar(x, 0x5A), INTS),
        _unary("s_bitwise_or_scalar", lambda x: A.bitwise_or.Scalar(x, 6), INTS),
        _unary("s_bitwise_xor_scalar", lambda x: A.bitwise_xor.Scalar(x, -3), SIGNED_INTS),
        _op("s_bitwise_scalar_bool",
            lambda m, x: (A.bitwise_and.Scalar(x, True), A.bitwise_or.Scalar(x, False),
                          A.bitwise_xor.Scalar(x, True), A.bitwise_and.Scalar(x, 5)), bools),
        # --- real functions
        _op("s_acosh", lambda m, x: torch.acosh(x + 1.0), per_dtype([X3], FLOATS, "positive")),
        _unary("s_asinh", torch.asinh, FLOATS),
        _unary("s_atanh", torch.atanh, FLOATS, "unit"),
        _unary("s_trig_int", lambda x: (torch.asinh(x), torch.acosh(x), torch.atanh(x)),
               ["int32"], "positive"),
        # --- whole-tensor reductions
        _unary("s_max_unary", lambda x: A.max.default(x), NUMERIC + ["bool"]),
        _unary("s_min_unary", lambda x: A.min.default(x), NUMERIC + ["bool"]),
        _op("s_max_min_nan", lambda m, x: (A.max.default(x), A.min.default(x)),
            {"float32": (f(X3, 4, kind="special"),)}),
        _unary("s_prod", lambda x: A.prod.default(x), FLOATS + ["int32", "int64", "bool"],
               "positive", shape=(2, 3), loose=10),
        _op("s_prod_dtype", lambda m, x: A.prod.default(x, dtype=torch.float64),
            per_dtype([(2, 3)], ["float32", "int32"], "positive"), loose=10),
        # --- factories and copies
        _op("s_empty", lambda m, x: torch.empty((3, 4), dtype=x.dtype).fill_(1.5) + x,
            per_dtype([(3, 4)], ["float32", "int64"])),
        _op("s_local_scalar_dense", lambda m, x: x * x[0, 1, 2].item(),
            per_dtype([X3], ["float32", "float16", "float64", "int32", "int64"])),
        # bool .item() is refused by the exporter (an AssertionError in to_edge): recorded.
        _op("s_local_scalar_dense_bool", lambda m, x, y: y * x[1].item(),
            {"bool": (torch.tensor([False, True]), f(X3, 5))}),
        _unary("s_alias_copy", lambda x: A.alias_copy.default(x), ["float32", "int64", "bool"]),
        _unary("s_detach_copy", lambda x: A.detach_copy.default(x), ["float32", "int64", "bool"]),
        # --- dropout, eval and deterministic training forms
        _unary("s_native_dropout", lambda x: A.native_dropout.default(x, 0.5, False),
               FLOATS + ["int64"]),
        _unary("s_native_dropout_train_p0", lambda x: A.native_dropout.default(x, 0.0, True),
               ["float32"]),
        _op("s_native_dropout_train_p1", lambda m, x: A.native_dropout.default(x, 1.0, True),
            {"float32": (f(X3, 6, kind="special"),)}),
        # --- random factories (statistics, see the module docstring)
        _op("s_rand", lambda m, x: _rand_facts(A.rand.default([64, 64], dtype=x.dtype), x),
            per_dtype([(64, 64)], FLOATS)),
        _op("s_randn", lambda m, x: _randn_facts(A.randn.default([64, 64], dtype=x.dtype), x),
            per_dtype([(64, 64)], FLOATS)),
    ]


def _rand_facts(r, x):
    in_range = ((r >= 0) & (r < 1)).all()
    spread = (r.float().mean() - 0.5).abs() < 0.05
    return r * 0 + x, in_range, spread


def _randn_facts(r, x):
    rf = r.float()
    mean_ok = rf.mean().abs() < 0.1
    std_ok = (rf.var(dim=None) - 1.0).abs() < 0.1
    return r * 0 + x, mean_ok, std_ok


def preserved_ops() -> list[tuple]:
    """Programs the standard export would decompose or refuse: (op, the ops to keep,
    further EdgeCompileConfig fields). _to_copy, empty and lift_fresh_copy also need
    _skip_dim_order=True, else ExecuTorch's dim-order pass renames them."""
    no_dim_order = {"_skip_dim_order": True}
    f = lambda shape, seed, dt="float32", kind="normal": values(shape, dt, seed, kind)  # noqa: E731
    masks = {d: (values(X3, d, 1), values(X3, "bool", 2)) for d in FLOATS + ["int64", "bool"]}
    masks["broadcast"] = (f(X3, 3), values((3, 1), "bool", 4))
    shifts = {d: (values(X3, d, 1), _shifted(d, 2)) for d in INTS}
    shifts["promote"] = (values(X3, "int8", 3), _shifted("int64", 4))
    return [
        (_unary("s_rsub_scalar", lambda x: A.rsub.Scalar(x, 2.5, alpha=2), FLOATS + ["int32"]),
         [A.rsub.Scalar]),
        (_unary("s_rsub_scalar_int", lambda x: A.rsub.Scalar(x, 300), SIGNED_INTS + ["uint8"]),
         [A.rsub.Scalar]),
        (_op("s_floor_divide", lambda m, x, y: A.floor_divide.default(x, y),
             per_dtype([X3, X3], NUMERIC, "positive")
             | {"negative": (f(X3, 1), f(X3, 2)),
                "signed_ints": (values(X3, "int32", 3), -values(X3, "int32", 4, "positive")),
                "broadcast": (f(X3, 5), f((3, 1), 6, kind="positive"))}),
         [A.floor_divide.default]),
        (_op("s_bitwise_left_shift", lambda m, x, y: A.bitwise_left_shift.Tensor(x, y), shifts),
         [A.bitwise_left_shift.Tensor]),
        (_op("s_bitwise_right_shift", lambda m, x, y: A.bitwise_right_shift.Tensor(x, y), shifts),
         [A.bitwise_right_shift.Tensor]),
        (_unary("s_bitwise_shift_scalar",
                lambda x: (A.bitwise_left_shift.Tensor_Scalar(x, 3),
                           A.bitwise_right_shift.Tensor_Scalar(x, 2),
                           A.bitwise_left_shift.Tensor_Scalar(x, 300),
                           A.bitwise_right_shift.Tensor_Scalar(x, 70)), INTS),
         [A.bitwise_left_shift.Tensor_Scalar, A.bitwise_right_shift.Tensor_Scalar]),
        (_unary("s_logit", lambda x: A.logit.default(x), FLOATS, "unit"), [A.logit.default]),
        (_op("s_logit_eps", lambda m, x: A.logit.default(x, 0.05),
             {d: ((values(X3, "float32", 7, "unit") * 0.6 + 0.5).to(getattr(torch, d)),)
              for d in FLOATS}), [A.logit.default]),
        (_op("s_logit_int", lambda m, x: A.logit.default(x, 0.25),
             {"int32": (torch.tensor([0, 1, 2, -1], dtype=torch.int32),)}), [A.logit.default]),
        (_op("s_glu", lambda m, x: A.glu.default(x, 1), per_dtype([(2, 6, 3)], FLOATS)),
         [A.glu.default]),
        (_op("s_glu_last", lambda m, x: A.glu.default(x, -1), per_dtype([(3, 8)], ["float32"])),
         [A.glu.default]),
        (_op("s_fill_scalar", lambda m, x: A.fill.Scalar(x, -2.75),
             per_dtype([X3], FLOATS + ["int32", "int64", "bool"])), [A.fill.Scalar]),
        (_op("s_fill_tensor", lambda m, x, v: A.fill.Tensor(x, v),
             {"float32": (f(X3, 1), torch.tensor(3.25)),
              "int64": (values(X3, "int64", 2), torch.tensor(-7.9)),
              "float16": (values(X3, "float16", 3), torch.tensor(5, dtype=torch.int32))}),
         [A.fill.Tensor]),
        (_op("s_masked_fill", lambda m, x, c: A.masked_fill.Scalar(x, c, -7.5), masks),
         [A.masked_fill.Scalar]),
        (_op("s_var_unbiased", lambda m, x: A.var.dim(x, [1], True, False),
             per_dtype([X3], FLOATS), loose=10), [A.var.dim]),
        (_op("s_var_biased_keepdim", lambda m, x: A.var.dim(x, [0, 2], False, True),
             per_dtype([X3], ["float32", "float64"]), loose=10), [A.var.dim]),
        (_op("s_var_mean", lambda m, x: A.var_mean.correction(x, [1], correction=1, keepdim=False),
             per_dtype([X3], FLOATS), loose=10), [A.var_mean.correction]),
        (_op("s_var_mean_all", lambda m, x: A.var_mean.correction(x, None, correction=0, keepdim=True),
             per_dtype([X3], ["float32"]), loose=10), [A.var_mean.correction]),
        (_op("s_tril", lambda m, x: A.tril.default(x), per_dtype([(4, 5)], NUMERIC + ["bool"])),
         [A.tril.default]),
        (_op("s_tril_diagonal", lambda m, x: (A.tril.default(x, 1), A.tril.default(x, -2)),
             per_dtype([(2, 4, 5)], ["float32"])), [A.tril.default]),
        (_op("s_ones", lambda m, x: A.ones.default([3, 4], dtype=x.dtype) + x,
             per_dtype([(3, 4)], ["float32", "float16", "int64"])), [A.ones.default]),
        (_op("s_zeros", lambda m, x: A.zeros.default([3, 4], dtype=x.dtype) - x,
             per_dtype([(3, 4)], ["float32", "bfloat16", "int32"])), [A.zeros.default]),
        (_op("s_empty_out", lambda m, x: A.empty.memory_format([3, 4], dtype=x.dtype).fill_(2) * x,
             per_dtype([(3, 4)], ["float32"])), [A.empty.memory_format], no_dim_order),
        (_op("s_arange_end", lambda m, x: A.arange.default(4, dtype=x.dtype) + x,
             per_dtype([X3], ["float32", "int64", "float64"])), [A.arange.default]),
        (_op("s_to_copy", lambda m, x: A._to_copy.default(x, dtype=torch.float16),
             per_dtype([X3], ["float32", "int64", "bool"])), [A._to_copy.default], no_dim_order),
        (_op("s_lift_fresh_copy", lambda m, x: A.lift_fresh_copy.default(x),
             per_dtype([X3], ["float32", "int64"])), [A.lift_fresh_copy.default], no_dim_order),
    ]


class NumelScale(nn.Module):
    """x * x.numel() for a dynamic batch: the count is computed at run time."""

    def forward(self, x):
        return x * A.sym_numel.default(x)


def dynamic_specs() -> list[ModelSpec]:
    """aten::sym_numel needs a dynamic dim (a static numel is folded into a constant)."""
    from torch.export import Dim

    batch = Dim("batch", min=1, max=6)
    return [
        ModelSpec("zoo_s_sym_numel",
                  [MethodSpec("float32", NumelScale(), (values((3, 4), "float32", 1),),
                              dynamic_shapes=({0: batch},),
                              subsequent_calls=[(values((5, 4), "float32", 2),),
                                                (values((1, 4), "float32", 3),)])],
                  ["sym_numel"], zoo=True),
    ]


def family_ops() -> list[ZooOp]:
    """The standard-export programs, then those exported with their ops preserved."""
    import dataclasses

    preserved = [dataclasses.replace(op, preserve=list(keep), edge_config=dict(extra[0]) if extra else {})
                 for op, keep, *extra in preserved_ops()]
    return _standard_ops() + preserved
