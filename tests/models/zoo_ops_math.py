"""Zoo family: sampling, distance, matrix and training-style ops (grid_sampler_2d,
linear, antialiased bilinear upsampling, cdist/pdist, convolution_backward,
max_pool2d_with_indices_backward).

Ops whose argument choices are Python values (modes, flags) take them as int inputs:
torch.export specialises each method on the values it is traced with, so one program
holds every combination as its own method.

Not here: aten::_native_batch_norm_legit.out (with running statistics). torch.export
functionalises it into _native_batch_norm_legit_functional, which has no out variant,
so no exported program can contain it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from zoo_ops import FLOATS, Fn, ZooOp, values

GRID_MODES = ["bilinear", "nearest", "bicubic"]
GRID_PADDINGS = ["zeros", "border", "reflection"]


def grid(shape, dtype, seed, span=1.3):
    """Grid points spread over [-span, span]: some fall outside the input. float16 and
    bfloat16 grids keep to (-0.9, 0.9), where their values stay distinct."""
    if dtype in ("float16", "bfloat16"):
        return values(shape, dtype, seed, "unit")
    return (values(shape, "float32", seed, "unit") * (span / 0.9)).to(getattr(torch, dtype))


def special_grid(shape, dtype, seed):
    """A grid with NaN, infinities and coordinates far outside [-1, 1] planted."""
    g = grid(shape, dtype, seed).clone()
    flat = g.view(-1)
    specials = [float("nan"), float("inf"), float("-inf"), 1e4, -1e4, 3.7, -2.9, 1.0, -1.0]
    for i, v in enumerate(specials):
        flat[(7 * i + 3) % flat.numel()] = v
    flat[-1] = flat[-2] = float("nan")  # both coordinates of the last point
    return g


def grid_sample_op() -> ZooOp:
    variants = {}
    img, pts = (2, 3, 5, 7), (2, 4, 6, 2)
    for mi, mode in enumerate(GRID_MODES):
        for pi, pad in enumerate(GRID_PADDINGS):
            for align in (0, 1):
                name = f"{mode}_{pad}_{'align' if align else 'noalign'}"
                variants[name] = (values(img, "float32", 10 + mi), grid(pts, "float32", 20 + pi + 3 * align),
                                  mi, pi, align)
                variants[f"special_{name}"] = (values(img, "float32", 30 + mi),
                                               special_grid(pts, "float32", 40 + pi), mi, pi, align)
    for k, dtype in enumerate(["float64", "float16", "bfloat16"]):
        for mi, mode in enumerate(GRID_MODES):
            pi, align = (mi + k) % 3, (mi + k) % 2
            variants[f"{dtype}_{mode}_{GRID_PADDINGS[pi]}"] = (
                values(img, dtype, 50 + mi), grid(pts, dtype, 60 + mi), mi, pi, align)
    # Enough points that the sampling loop is split across threads.
    variants["large_bilinear_zeros"] = (values((1, 2, 16, 16), "float32", 65),
                                        grid((1, 20, 30, 2), "float32", 66), 0, 0, 0)
    return ZooOp(
        "m_grid_sample",
        lambda: Fn(lambda m, x, g, mode, pad, align: F.grid_sample(
            x, g, mode=GRID_MODES[mode], padding_mode=GRID_PADDINGS[pad], align_corners=bool(align))),
        variants, ["grid_sampler_2d"])


# (size, scale_factor, align_corners) for F.interpolate(mode="bilinear", antialias=True)
AA_CONFIGS = [((4, 5), None, False), ((13, 17), None, False), ((4, 3), None, True),
              ((2, 11), None, False), (None, 0.4, False), (None, 1.7, True)]


def upsample_aa_op() -> ZooOp:
    img = (2, 3, 9, 11)
    names = ["down", "up", "down_align", "width_only", "scale_0_4", "scale_1_7_align"]
    variants = {name: (values(img, "float32", 70 + i), i) for i, name in enumerate(names)}
    variants["float64"] = (values(img, "float64", 80), 0)
    variants["float64_up_align"] = (values(img, "float64", 81), 5)
    variants["channels_last"] = (values(img, "float32", 82).to(memory_format=torch.channels_last), 0)

    def fn(m, x, cfg):
        size, scale, align = AA_CONFIGS[cfg]
        return F.interpolate(x, size=size, scale_factor=scale, mode="bilinear", align_corners=align,
                             antialias=True)
    return ZooOp("m_upsample_bilinear2d_aa", lambda: Fn(fn), variants, ["_upsample_bilinear2d_aa"])


P_VALUES = [0.0, 1.0, 2.0, float("inf"), 1.5, 0.5]
P_NAMES = ["p0", "p1", "p2", "pinf", "p1_5", "p0_5"]


def sharing(a, b):
    """b with some coordinates copied from a's rows (each from a different element of a),
    so p = 0 counts differ while each tensor's values stay distinct."""
    b = b.clone()
    rows = min(a.shape[-2], b.shape[-2])
    b[..., :rows, ::2] = a[..., :rows, ::2]
    b[..., 0, 1::2] = a[..., rows - 1, 1::2]
    return b


def cdist_op() -> ZooOp:
    variants = {}
    for i, name in enumerate(P_NAMES):
        a, b = values((2, 5, 4), "float32", 90 + i), values((2, 6, 4), "float32", 100 + i)
        if name == "p0":
            b = sharing(a, b)
        variants[name] = (a, b, i, 0)
    variants["float64_p2"] = (values((5, 4), "float64", 110), values((3, 4), "float64", 111), 2, 0)
    variants["float64_p1_5"] = (values((5, 4), "float64", 112), values((3, 4), "float64", 113), 4, 0)
    variants["broadcast_batch"] = (values((3, 1, 4, 5), "float32", 114), values((2, 6, 5), "float32", 115), 2, 0)
    variants["mm_mode"] = (values((4, 5), "float32", 116), values((6, 5), "float32", 117), 2, 1)
    variants["many_rows_default_mode"] = (values((30, 3), "float32", 118), values((7, 3), "float32", 119), 2, 0)
    variants["no_mm_mode"] = (values((30, 3), "float32", 120), values((7, 3), "float32", 121), 2, 2)
    # The op itself, called directly: torch.cdist decomposes the matrix form into mm at export.
    modes = [None, 1, 2]
    return ZooOp("m_cdist",
                 lambda: Fn(lambda m, a, b, p, mode: torch.ops.aten._cdist_forward.default(
                     a, b, P_VALUES[p], modes[mode])),
                 variants, ["_cdist_forward"], loose=10)


def pdist_op() -> ZooOp:
    variants = {}
    for i, name in enumerate(P_NAMES):
        # Distinct values: p = 0 counts every coordinate (cdist's p0 covers shared ones).
        variants[name] = (values((6, 4), "float32", 130 + i), i)
    variants["float64_p2"] = (values((5, 3), "float64", 140), 2)
    variants["float64_pinf"] = (values((5, 3), "float64", 141), 3)
    return ZooOp("m_pdist", lambda: Fn(lambda m, x, p: F.pdist(x, p=P_VALUES[p])), variants,
                 ["_pdist_forward"], loose=10)


# (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
CONV_CONFIGS = [
    ((2, 3, 6, 7), (4, 3, 3, 3), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
    ((2, 4, 9, 8), (6, 2, 3, 2), [2, 1], [1, 0], [2, 1], False, [0, 0], 2),
    ((1, 3, 5, 5), (3, 1, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 3),
    ((2, 3, 10), (5, 3, 3), [2], [1], [1], False, [0], 1),
    ((2, 4, 3, 4), (4, 3, 3, 3), [2, 2], [1, 1], [1, 1], True, [1, 1], 1),
    ((1, 4, 3, 3), (4, 1, 2, 2), [2, 2], [0, 0], [1, 1], True, [0, 0], 2),
    ((1, 2, 4, 4, 4), (3, 2, 2, 2, 2), [1, 1, 1], [0, 0, 0], [1, 1, 1], False, [0, 0, 0], 1),
]
CONV_MASKS = [[True, True, True], [True, False, False], [False, True, True]]


def conv_backward_inputs(cfg, dtype, seed):
    x_shape, w_shape, stride, pad, dil, transposed, out_pad, groups = CONV_CONFIGS[cfg]
    x, w = values(x_shape, dtype, seed), values(w_shape, dtype, seed + 1)
    y = torch.ops.aten.convolution.default(x.float(), w.float(), None, stride, pad, dil, transposed,
                                           out_pad, groups)
    return values(tuple(y.shape), dtype, seed + 2), x, w


def conv_backward_op() -> ZooOp:
    names = ["conv2d", "conv2d_strided_dilated_grouped", "depthwise", "conv1d", "transposed",
             "transposed_grouped", "conv3d"]
    variants = {name: (*conv_backward_inputs(i, "float32", 150 + 3 * i), i, 0) for i, name in enumerate(names)}
    variants["mask_input_only"] = (*conv_backward_inputs(1, "float32", 180), 1, 1)
    variants["mask_weight_bias"] = (*conv_backward_inputs(4, "float32", 183), 4, 2)
    for dtype in ["float64", "float16", "bfloat16"]:
        variants[dtype] = (*conv_backward_inputs(0, dtype, 186), 0, 0)

    def fn(m, go, x, w, cfg, mask):
        _, w_shape, stride, pad, dil, transposed, out_pad, groups = CONV_CONFIGS[cfg]
        out_channels = w_shape[1] * groups if transposed else w_shape[0]
        grads = torch.ops.aten.convolution_backward.default(
            go, x, w, [out_channels], stride, pad, dil, transposed, out_pad, groups, CONV_MASKS[mask])
        return tuple(t for t in grads if t is not None)
    return ZooOp("m_convolution_backward", lambda: Fn(fn), variants, ["convolution_backward"], loose=10)


# (input shape, kernel, stride, padding, dilation, ceil_mode)
POOL_CONFIGS = [((2, 3, 6, 8), [2, 2], [2, 2], [0, 0], [1, 1], False),
                ((1, 2, 5, 7), [3, 3], [1, 2], [1, 1], [1, 1], False),
                ((2, 7, 9), [3, 2], [2, 2], [1, 0], [2, 1], True)]


def pool_backward_inputs(cfg, dtype, seed):
    shape, k, s, p, d, ceil = POOL_CONFIGS[cfg]
    x = values(shape, dtype, seed)
    out, idx = torch.ops.aten.max_pool2d_with_indices.default(x, k, s, p, d, ceil)
    return values(tuple(out.shape), dtype, seed + 1), x, idx


def pool_backward_op() -> ZooOp:
    variants = {name: (*pool_backward_inputs(i, "float32", 200 + 2 * i), i)
                for i, name in enumerate(["disjoint", "overlapping", "3d_dilated_ceil"])}
    for k, dtype in enumerate(["float64", "float16", "bfloat16"]):
        variants[dtype] = (*pool_backward_inputs(1, dtype, 210 + 2 * k), 1)

    def fn(m, go, x, idx, cfg):
        _, k, s, p, d, ceil = POOL_CONFIGS[cfg]
        return torch.ops.aten.max_pool2d_with_indices_backward.default(go, x, k, s, p, d, ceil, idx)
    return ZooOp("m_max_pool2d_with_indices_backward", lambda: Fn(fn), variants,
                 ["max_pool2d_with_indices_backward"])


def linear_op() -> ZooOp:
    """aten::linear itself (the standard export decomposes it into addmm/matmul)."""
    def inputs(x_shape, dtype, seed, bias=True):
        w = values((5, x_shape[-1]), dtype, seed + 1)
        return (values(x_shape, dtype, seed), w, values((5,), dtype, seed + 2), int(bias))
    variants = {d: inputs((3, 7), d, 220 + 3 * i) for i, d in enumerate(FLOATS + ["int64", "int32"])}
    variants["batched_3d"] = inputs((2, 3, 7), "float32", 240)
    variants["batched_4d_no_bias"] = inputs((2, 2, 3, 7), "float32", 243, bias=False)
    variants["vector_input"] = inputs((7,), "float32", 246)
    g = torch.Generator().manual_seed(249)
    big = lambda *shape: torch.randint(-2 ** 40, 2 ** 40, shape, generator=g)
    variants["int64_wraps"] = (big(3, 7), big(5, 7), big(5), 1)
    return ZooOp("m_linear", lambda: Fn(lambda m, x, w, b, bias: F.linear(x, w, b if bias else None)),
                 variants, ["linear"],
                 loose=10, preserve=[torch.ops.aten.linear.default])


def family_ops() -> list[ZooOp]:
    return [grid_sample_op(), linear_op(), upsample_aa_op(), cdist_op(), pdist_op(),
            conv_backward_op(), pool_backward_op()]
