"""Zoo family: layout and copy ops (view copies, stack, roll, pixel shuffles,
reflection/replication pads, scatters, masks, nonzero, repeat_interleave) and
executorch_prim::et_copy_index, which the exporter emits to stack the results of a
torch map loop.

Every op here is named l_<op> and exports as zoo_l_<op>. Each program really contains
the operator it is named after (export.py reads them back into the manifest). Some
operators survive only an export that preserves them (ZooOp.preserve): ExecuTorch's
default decomposition table rewrites roll, stack, pixel_shuffle, the pads,
select_scatter and t/transpose_copy into other ops, and its IR verifier rejects
masked_select and repeat_interleave.Tensor as outside core ATen.
"""

from __future__ import annotations

import torch
from torch._higher_order_ops.map import map as torch_map

from zoo_ops import DTYPES, FLOATS, INTS, NUMERIC, Fn, ZooOp, per_dtype, values

ALL = NUMERIC + ["bool"]
A = torch.ops.aten


def with_zeros(x: torch.Tensor, every: int = 3) -> torch.Tensor:
    """x with some elements set to zero, so nonzero skips them: every `every`-th one
    (row-major) for integers and bool, one for floats (whose fixture inputs
    must hold distinct values)."""
    flat = x.clone().reshape(-1)
    if x.is_floating_point():
        if not bool((flat == 0).any()):  # half-precision inputs may hold a zero already
            flat[flat.numel() // 2] = 0
    else:
        flat[::every] = 0
    return flat.reshape(x.shape)


def op(name, fn, variants, exercises, preserve=()):
    return ZooOp(name, lambda: Fn(lambda m, *xs: fn(*xs)), variants, exercises,
                 preserve=list(preserve))


def family_ops() -> list[ZooOp]:
    x3 = (2, 3, 4)
    idx = torch.tensor([[3, 0], [1, 2]])
    return preserved_ops() + [
        # --- view copies
        op("l_diagonal_copy", lambda x: torch.diagonal(x, 1, 0, 2), per_dtype([(3, 4, 5)], ALL),
           ["diagonal_copy"]),
        op("l_diagonal_copy_below", lambda x: torch.diagonal(x, -2, -1, -2),
           per_dtype([(3, 4, 5)], ["float32", "int64"]), ["diagonal_copy"]),
        op("l_narrow_copy", lambda x: torch.narrow_copy(x, 1, 1, 2), per_dtype([x3], ALL),
           ["narrow_copy"]),
        # A negative start (ExecuTorch's own kernel refuses it; a negative dim aborts it).
        op("l_narrow_copy_negative", lambda x: torch.narrow_copy(x, 2, -3, 2),
           per_dtype([x3], ["float32"]), ["narrow_copy"]),
        op("l_unbind_copy", lambda x: torch.unbind_copy(x, 1), per_dtype([x3], ALL),
           ["unbind_copy"]),
        op("l_unbind_copy_last", lambda x: torch.unbind_copy(x, -1),
           per_dtype([(3, 2)], ["float32"]), ["unbind_copy"]),
        op("l_split_copy", lambda x: torch.split_copy(x, 2, 2), per_dtype([(2, 3, 5)], ALL),
           ["split_copy"]),
        op("l_split_copy_dim0", lambda x: torch.split_copy(x, 3), per_dtype([(7, 2)], ["float32"]),
           ["split_copy"]),
        op("l_unfold_copy", lambda x: x.unfold(2, 2, 1), per_dtype([(2, 3, 5)], ALL),
           ["unfold_copy"]),
        op("l_unfold_copy_step", lambda x: x.unfold(0, 3, 2), per_dtype([(8, 3)], ["float32"]),
           ["unfold_copy"]),
        # --- scatters
        op("l_slice_scatter", lambda x, s: torch.slice_scatter(x, s, 1, 1, 4, 2),
           per_dtype([(2, 5, 3), (2, 2, 3)], ALL), ["slice_scatter"]),
        op("l_slice_scatter_negative", lambda x, s: torch.slice_scatter(x, s, -1, -3),
           per_dtype([(3, 5), (3, 3)], ["float32"]), ["slice_scatter"]),
        op("l_scatter_value", lambda x, i: torch.scatter(x, 1, i, 5),
           {d: (values((2, 4), d, 1), idx) for d in ALL}, ["scatter.value"]),
        op("l_scatter_value_float", lambda x, i: torch.scatter(x, 0, i, -2.5),
           {d: (values((3, 4), d, 2), torch.tensor([[2, 0, 1], [0, 2, 2]]))
            for d in FLOATS + ["int64"]}, ["scatter.value"]),
        op("l_masked_scatter", lambda x, m, s: x.masked_scatter(m, s),
           {d: (values(x3, d, 1), values(x3, "bool", 2), values((24,), d, 3)) for d in ALL},
           ["masked_scatter"]),
        op("l_masked_scatter_broadcast", lambda x, m, s: x.masked_scatter(m, s),
           {"float32": (values(x3, "float32", 1), values((3, 1), "bool", 4),
                        values((5, 6), "float32", 5))}, ["masked_scatter"]),
        # --- data-dependent output shape
        op("l_nonzero", lambda x: torch.nonzero(x),
           {d: (with_zeros(values((3, 4), d, 1)),) for d in ALL}
           | {"rank1": (with_zeros(values((7,), "float32", 2)),),
              "rank3": (with_zeros(values((2, 3, 4), "int32", 3), 4),),
              "special": (torch.tensor([float("nan"), -0.0, float("inf"), 1e-30, -2.0]),)},
           ["nonzero"]),
        # --- executorch_prim::et_copy_index: the exporter's loop for torch map
        op("l_et_copy_index", lambda x, y: torch_map(lambda a, b: a + b, x, y),
           per_dtype([(3, 4), (4,)], NUMERIC), ["et_copy_index", "map"]),
        op("l_et_copy_index_rank3", lambda x, y: torch_map(lambda a, b: a * b, x, y),
           per_dtype([(3, 4, 5), (5,)], ["float32"]), ["et_copy_index", "map"]),
    ]


def repeat_interleave_bounded(r: torch.Tensor) -> torch.Tensor:
    """The output's length depends on the data; memory planning needs an upper bound."""
    out = A.repeat_interleave.Tensor(r)
    torch._check(out.shape[0] <= 64)
    return out


def preserved_ops() -> list[ZooOp]:
    """Programs whose operator survives only an export that preserves it (see above)."""
    x3 = (2, 3, 4)
    pads = []
    for mode in ("reflection", "replication"):
        for k, shape, pad, crop in ((1, (2, 3, 6), [2, 3], [-2, 3]),
                                    (2, (2, 3, 5, 6), [1, 2, 3, 1], [-1, 2, 3, -2]),
                                    (3, (2, 3, 4, 5, 6), [1, 2, 2, 1, 3, 1], [2, -1, 1, 1, -2, 3])):
            target = getattr(A, f"{mode}_pad{k}d").default
            # Bool is not padded by PyTorch; the unbatched form drops the leading dim.
            pads += [op(f"l_{mode}_pad{k}d", lambda x, t=target, p=pad: t(x, p),
                        per_dtype([shape], NUMERIC), [f"{mode}_pad{k}d"], [target]),
                     op(f"l_{mode}_pad{k}d_negative", lambda x, t=target, p=crop: t(x, p),
                        per_dtype([shape[1:]], ["float32"]), [f"{mode}_pad{k}d"], [target])]
    return [
        op("l_t_copy", lambda x: A.t_copy.default(x), per_dtype([(3, 5)], ALL), ["t_copy"],
           [A.t_copy.default]),
        op("l_transpose_copy", lambda x: A.transpose_copy.int(x, 0, 2), per_dtype([x3], ALL),
           ["transpose_copy"], [A.transpose_copy.int]),
        op("l_stack", lambda x, y, z: A.stack.default([x, y, z], 1), per_dtype([x3, x3, x3], ALL),
           ["stack"], [A.stack.default]),
        op("l_stack_last", lambda x, y: A.stack.default([x, y], -1),
           per_dtype([x3, x3], ["float32"]), ["stack"], [A.stack.default]),
        op("l_roll", lambda x: A.roll.default(x, [1, -2], [1, 2]), per_dtype([x3], ALL), ["roll"],
           [A.roll.default]),
        op("l_roll_flat", lambda x: A.roll.default(x, [5]), per_dtype([x3], ["float32"]), ["roll"],
           [A.roll.default]),
        op("l_pixel_shuffle", lambda x: A.pixel_shuffle.default(x, 2),
           per_dtype([(2, 8, 3, 5)], ALL), ["pixel_shuffle"], [A.pixel_shuffle.default]),
        op("l_pixel_unshuffle", lambda x: A.pixel_unshuffle.default(x, 2),
           per_dtype([(2, 2, 6, 4)], ALL), ["pixel_unshuffle"], [A.pixel_unshuffle.default]),
        op("l_select_scatter", lambda x, s: A.select_scatter.default(x, s, 1, -1),
           per_dtype([x3, (2, 4)], ALL), ["select_scatter"], [A.select_scatter.default]),
        op("l_masked_select", lambda x, m: A.masked_select.default(x, m),
           {d: (values(x3, d, 1), values(x3, "bool", 2)) for d in ALL}
           | {"broadcast": (values((3, 4), "float32", 3), values((2, 1, 4), "bool", 4))},
           ["masked_select"], [A.masked_select.default]),
        op("l_repeat_interleave", repeat_interleave_bounded,
           {d: (torch.tensor([2, 0, 3, 1], dtype=DTYPES[d]),) for d in INTS},
           ["repeat_interleave.Tensor"], [A.repeat_interleave.Tensor]),
        op("l_repeat_interleave_output_size",
           lambda r: A.repeat_interleave.Tensor(r, output_size=6),
           {"int64": (torch.tensor([2, 0, 3, 1]),)}, ["repeat_interleave.Tensor"],
           [A.repeat_interleave.Tensor]),
        *pads,
    ]
