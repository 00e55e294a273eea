"""Zoo family: ExecuTorch's prim scalar ops (executorch_prim::<op>.Scalar) on symbolic
integers and floats, and two aten overloads the standard export does not pick by
itself (any.all_out, squeeze_copy.dim_out).

The symbolic integer is `n.item()` of an int64 0-d input: torch.export keeps it as an
unbacked SymInt `u0`, so every arithmetic step on it stays in the program as a prim op
(a value of a dynamic dim would do the same, but the zoo's ZooOps carry no dynamic
shapes, and an item can also be negative, which is where floor division, modulo,
truncation and rounding differ). Each method is one value of n, chosen on both sides
of the op's edge cases (negative, zero, ties at .5, equality at the compared bound);
the value reaches the output as `x * value`.

torch.sym_float, sym_max, sym_min, sym_not and sym_ite stay Python functions in the
edge graph until to_executorch() maps them to executorch_prim ops, and to_edge's IR
check refuses any Python function but `alloc` there. Those programs are exported
without that check: export.py uses an EdgeCompileConfig(_check_ir_validity=False)
whenever a spec has an edge_config, so `_NO_IR_CHECK` names a field at its default.

Not emitted by any export of the current exporter, so tested in C++
(kernels/ops/prim_ops_test.cc, kernels/ops/unexported_ops_test.cc): floordiv.int and mod.int
(older exporters' names), sym_int.Scalar (torch.sym_int of a SymFloat traces as
math.trunc), and the aten ops that export rewrites (_native_batch_norm_legit.out,
index_put_, lift_fresh_copy.out, sym_numel) or that only a device-aware lowering
inserts (et_copy::_h2d_copy.out, _d2h_copy.out).
"""

from __future__ import annotations

import math

import torch

from zoo_ops import Fn, ZooOp, per_dtype, values

A = torch.ops.aten
X = torch.tensor([1.0, -2.0, 0.5, 3.0])  # exact in float32; x * value shows the value
# export.py exports a spec with an edge_config without to_edge's IR check (see above).
_NO_IR_CHECK = {"_skip_dim_order": False}


def _n(v: int) -> torch.Tensor:
    return torch.tensor(v, dtype=torch.int64)


def _prim(name, fn, ns, exercises, no_ir_check=False):
    """A program computing x * fn(n.item()) (or a tuple of those), one method per n."""

    def forward(m, x, n):
        r = fn(n.item())
        return tuple(x * v for v in r) if isinstance(r, tuple) else x * r

    variants = {(f"n{v}" if v >= 0 else f"n_neg{-v}"): (X.clone(), _n(v)) for v in ns}
    return ZooOp(name, lambda: Fn(forward), variants, exercises,
                 edge_config=dict(_NO_IR_CHECK) if no_ir_check else {})


SIGNS = [7, -7, 6, -6, 0, 1, -1]  # exact and inexact quotients on both sides of zero
AROUND_4 = [3, 4, 5, -4]           # both sides of the bound and on it


def _prim_ops() -> list[ZooOp]:
    ite = torch.sym_ite
    return [
        # Python semantics: // and % round toward negative infinity (-7 // 2 == -4,
        # -7 % 3 == 2, 7 % -4 == -1), a C division would not.
        _prim("p_floordiv", lambda n: (n // 2, n // 3, n // -4), SIGNS, ["floordiv.Scalar"]),
        _prim("p_mod", lambda n: (n % 2, n % 3, n % -4), SIGNS, ["mod.Scalar"]),
        _prim("p_truediv", lambda n: (n / 4, n / -3), SIGNS, ["truediv.Scalar"]),
        _prim("p_neg", lambda n: -n, [7, -7, 0], ["neg.Scalar"]),
        _prim("p_sym_float", lambda n: torch.sym_float(n), [7, -7, 0], ["sym_float.Scalar"],
              no_ir_check=True),
        # float -> int: ceil, Python's round (half to even: 2.5 -> 2, 3.5 -> 4,
        # -2.5 -> -2), trunc (toward zero: -1.75 -> -1).
        _prim("p_ceil", lambda n: (math.ceil(n / 4), math.ceil(n / -3)), SIGNS, ["ceil.Scalar"]),
        _prim("p_round", lambda n: (round(n / 2), round(n / 4)), SIGNS + [5, -5, 10, -10],
              ["round.Scalar"]),
        _prim("p_trunc", lambda n: (math.trunc(n / 4), math.trunc(n / -3)), SIGNS,
              ["trunc.Scalar"]),
        _prim("p_sym_max", lambda n: (max(n, 4), torch.sym_max(n, -2)), AROUND_4 + [-2, -3],
              ["sym_max.Scalar"], no_ir_check=True),
        _prim("p_sym_min", lambda n: (min(n, 4), torch.sym_min(n, -2)), AROUND_4 + [-2, -3],
              ["sym_min.Scalar"], no_ir_check=True),
        # Comparisons give a SymBool; sym_ite turns it into a number.
        _prim("p_gt", lambda n: ite(n > 4, 2, 3), AROUND_4, ["gt.Scalar", "sym_ite.Scalar"],
              no_ir_check=True),
        _prim("p_lt", lambda n: ite(n < 4, 2, 3), AROUND_4, ["lt.Scalar", "sym_ite.Scalar"],
              no_ir_check=True),
        _prim("p_ge", lambda n: ite(n >= 4, 2, 3), AROUND_4, ["ge.Scalar", "sym_ite.Scalar"],
              no_ir_check=True),
        _prim("p_le", lambda n: ite(n <= 4, 2, 3), AROUND_4, ["le.Scalar", "sym_ite.Scalar"],
              no_ir_check=True),
        _prim("p_sym_not", lambda n: ite(torch.sym_not(n <= 4), 2, 3), AROUND_4,
              ["sym_not.Scalar", "le.Scalar", "sym_ite.Scalar"], no_ir_check=True),
        # sym_ite choosing between symbolic floats (both branches are computed).
        _prim("p_sym_ite_float", lambda n: ite(n > 4, n / 2, n / -8), AROUND_4,
              ["sym_ite.Scalar", "gt.Scalar", "truediv.Scalar"], no_ir_check=True),
    ]


def _one_at_end(t: torch.Tensor, v) -> torch.Tensor:
    t.view(-1)[-1] = v
    return t


def _aten_ops() -> list[ZooOp]:
    x3 = (2, 3, 4)
    # x.any() traces to aten::any.default, whose out variant is any.all_out.
    any_variants = per_dtype([x3], ["bool", "float32", "float16", "int64", "uint8"])
    any_variants |= {
        # all zero (float inputs hold distinct values, so the float ones are short)
        "all_false": (torch.zeros(x3, dtype=torch.int64),),
        "all_false_float": (torch.tensor([-0.0]),),
        "last_true": (_one_at_end(torch.zeros(x3, dtype=torch.bool), True),),
        "nan_only": (torch.tensor([0.0, float("nan")]),),  # NaN is nonzero
        "empty": (torch.zeros(0, 3),),
        "scalar": (torch.tensor(0.0),),
    }
    return [
        ZooOp("p_any_all", lambda: Fn(lambda m, x: x.any()), any_variants, ["any.all_out"]),
        # x.squeeze(1) traces to squeeze.dims; squeeze_copy.dim kept as it is names
        # the one-dim overload. A named dim not of size one is kept, as in PyTorch.
        ZooOp("p_squeeze_copy_dim",
              lambda: Fn(lambda m, x: (A.squeeze_copy.dim(x, 1), A.squeeze_copy.dim(x, -2),
                                       A.squeeze_copy.dim(x, 2), A.squeeze_copy.dim(x, 0))),
              {d: (values((2, 1, 4), d, 1),) for d in ["float32", "int64", "bool", "bfloat16"]}
              | {"leading_one": (values((1, 1, 3), "float32", 2),)},
              ["squeeze_copy.dim_out"], preserve=[A.squeeze_copy.dim]),
        ZooOp("p_squeeze_copy_dim_scalar",
              lambda: Fn(lambda m, x: (A.squeeze_copy.dim(x, 0), A.squeeze_copy.dim(x, -1))),
              {"float32": (torch.tensor(2.5),)}, ["squeeze_copy.dim_out"],
              preserve=[A.squeeze_copy.dim]),
    ]


def family_ops() -> list[ZooOp]:
    return _prim_ops() + _aten_ops()
