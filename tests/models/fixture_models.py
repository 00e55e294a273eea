"""The model fixtures: whole models and the behaviours the runtime must get right.

Each entry is a ModelSpec; export.py turns it into a program, its inputs and the
eager outputs. Needs torch (and torchvision for MobileNetV2): runs only in the export
environment, never in the test suite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


@dataclass
class MethodSpec:
    """One method of a program: the module to export and the inputs to record.

    `inputs` are used both to trace and as the recorded fixture inputs, unless
    `trace_inputs` is given (dynamic shapes trace at the upper bound).
    `subsequent_calls` are further input tuples run on the SAME method instance
    after the first call (state carried by mutable buffers shows in their outputs).
    """

    name: str
    module: nn.Module
    inputs: tuple
    trace_inputs: tuple | None = None
    dynamic_shapes: Any = None
    subsequent_calls: list[tuple] = field(default_factory=list)
    atol: float | None = None
    rtol: float | None = None


@dataclass
class ModelSpec:
    name: str
    methods: list[MethodSpec]
    exercises: list[str]
    delegated: bool = False
    zoo: bool = False
    plan_io: bool = True  # False: MemoryPlanningPass(alloc_graph_input/output=False)
    bundled: bool = False
    notes: str = ""
    # Operators to_edge must keep as they are (it would decompose them, or refuse them
    # as not core ATen), for kernels the standard export never reaches otherwise; and
    # further EdgeCompileConfig fields (e.g. _skip_dim_order).
    preserve: list = field(default_factory=list)
    edge_config: dict = field(default_factory=dict)
    # Weights kept in an external data file, NAME.ptd beside NAME.pte, as ExecuTorch
    # writes them with ExecutorchBackendConfig(external_constants=...): the program's
    # constants, and with `delegated` the XNNPACK payload's weights too.
    external_data: bool = False
    # Bundled only: {method: {case: delta}} added to that case's expected outputs in the .bpte.
    bundled_perturb: dict = field(default_factory=dict)
    # ExecutorchBackendConfig(emit_mutable_buffer_names=True): mutable buffers carry their
    # names (ExecuTorch's method attributes, get_attribute()).
    buffer_names: bool = False


def seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def half_precision_distinct(n: int, kind: str, g: torch.Generator) -> torch.Tensor:
    """n distinct values that float16 and bfloat16 hold exactly: k * 2**-m with |k| <= 256
    (bfloat16 keeps 8 significant bits), shuffled, spanning about the same range as the
    float32 inputs of the same kind."""
    span = {"positive": 3.0, "unit": 0.9}.get(kind, 3.0)
    k = torch.randperm(n, generator=g).double()
    k = k + 1 if kind == "positive" else k - n // 2
    m = max(0, math.ceil(math.log2(max(k.abs().max().item(), 1.0) / span)))
    return (k * 2.0 ** -m).float()



def randn(*shape, seed: int, dtype=torch.float32) -> torch.Tensor:
    """Values that all differ, so no layout passes by luck: normal samples, or for
    float16/bfloat16 (too coarse for random samples to stay distinct) a shuffled grid."""
    if dtype in (torch.float16, torch.bfloat16) and math.prod(shape) <= 256:
        return half_precision_distinct(math.prod(shape), "normal", seeded(seed)).reshape(shape).to(dtype)
    x = torch.randn(*shape, generator=seeded(seed)).to(dtype)
    if x.numel() <= 65536:
        x = nudge_repeats(x)
    return x


def nudge_repeats(x: torch.Tensor) -> torch.Tensor:
    """x with every repeated value but its first occurrence moved up by one ulp, until all
    differ (normal samples repeat by chance from a few thousand elements on)."""
    flat = x.flatten().clone()
    while True:
        _, first = np.unique(flat.numpy(), return_index=True)
        if first.size == flat.numel():
            return flat.reshape(x.shape)
        repeated = np.setdiff1d(np.arange(flat.numel()), first)
        idx = torch.from_numpy(repeated)
        flat[idx] = torch.nextafter(flat[idx], torch.full_like(flat[idx], float("inf")))


def distinct_ints(*shape, seed: int, low: int = 0, dtype=torch.int64) -> torch.Tensor:
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n, generator=seeded(seed)) + low).reshape(shape).to(dtype)


def randomize_batch_norms(module: nn.Module, seed: int) -> nn.Module:
    """Gives every batch norm non-trivial running statistics and affine terms."""
    g = seeded(seed)
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.weight.data.copy_(torch.rand(n, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.1)
    return module


def init_weights(module: nn.Module, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    for m in module.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
    return randomize_batch_norms(module, seed + 1).eval()


class Add(nn.Module):
    def forward(self, x, y):
        return x + y


class Mlp(nn.Module):
    def __init__(self, d_in=16, d_hidden=32, d_out=8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class SmallCnn(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.conv(x))))
        x = F.relu(self.bn2(self.conv2(x)))
        return self.fc(torch.flatten(self.gap(x), 1))


class TransformerBlock(nn.Module):
    """Pre-norm encoder block written out, so attention's softmax is a real op."""

    def __init__(self, dim=64, heads=4, hidden=128):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * (d // h) ** -0.5
        attn = torch.softmax(scores, dim=-1)
        y = torch.matmul(attn, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class SizeOne(nn.Module):
    """Input (1, 4, 1, 5): size-one dims carry no layout."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.linspace(0.5, 2.0, 5))

    def forward(self, x):
        return (x * self.scale).sum(dim=1)


class Embedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 8)

    def forward(self, ids):
        return self.emb(ids).mean(dim=1)


class WhereMask(nn.Module):
    def forward(self, x, mask):
        return torch.where(mask, x, -x), mask.logical_not()


class Elementwise(nn.Module):
    """A dtype-typed small model: linear-free so float16/bfloat16/float64 stay exact-ish."""

    def forward(self, x, y):
        return torch.tanh(x * y + x) - y / 2


class IdentityOutput(nn.Module):
    """The first output IS the first input."""

    def forward(self, x, y):
        return x, x + y


class InplaceInput(nn.Module):
    """Writes its input in place; the caller's tensor changes."""

    def forward(self, x):
        x.mul_(2.0)
        return x + 1.0


class Counter(nn.Module):
    """A mutable buffer: state that changes across calls of one method instance."""

    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(2, 3))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 1.0


class Scalars(nn.Module):
    def forward(self, x, n: int, s: float):
        return x * s + n


class TupleOutput(nn.Module):
    def forward(self, x, y):
        return x + y, x * y


class DictOutput(nn.Module):
    def forward(self, x, y):
        return {"sum": x + y, "diff": x - y, "nested": (x * y, torch.relu(x))}


class TwoMethodsForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x):
        return self.fc(x)


class TwoMethodsEncode(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x) * 3.0


class ScaleShift(nn.Module):
    def forward(self, x):
        return x * 2.0 + 1.0


def mobilenet_v2() -> nn.Module:
    import torchvision

    torch.manual_seed(7)
    return randomize_batch_norms(torchvision.models.mobilenet_v2(weights=None), 8).eval()


def _mlp_spec(name: str, **kw) -> ModelSpec:
    return ModelSpec(
        name,
        [MethodSpec("forward", init_weights(Mlp(), 2), (randn(4, 16, seed=3),))],
        ["linear", "relu"],
        **kw,
    )


def _cnn_spec(name: str, **kw) -> ModelSpec:
    return ModelSpec(
        name,
        [MethodSpec("forward", init_weights(SmallCnn(), 4), (randn(2, 3, 16, 16, seed=5),),
                    atol=1e-4, rtol=1e-4)],
        ["conv2d", "batch_norm", "relu", "max_pool2d", "adaptive_avg_pool2d", "linear"],
        **kw,
    )


def _with_calls(spec: ModelSpec, *calls: tuple) -> ModelSpec:
    """The spec with further calls on its (single) method after the first (for a bundled
    program, one test case each)."""
    spec.methods[0].subsequent_calls = list(calls)
    return spec


def _as_half(spec: ModelSpec) -> ModelSpec:
    """The spec with its modules and float inputs in float16 (a model exported the way
    users export half-precision models: model.half())."""
    def half(x):
        return x.half() if isinstance(x, torch.Tensor) and x.is_floating_point() else x

    for m in spec.methods:
        m.module = m.module.half()
        m.inputs = tuple(half(x) for x in m.inputs)
        m.atol = m.rtol = None  # float16's own tolerance
    spec.exercises = spec.exercises + ["float16"]
    return spec


def _mobilenet_spec(name: str, **kw) -> ModelSpec:
    return ModelSpec(
        name,
        [MethodSpec("forward", mobilenet_v2(), (randn(1, 3, 224, 224, seed=9),),
                    atol=1e-3, rtol=1e-3)],
        ["conv2d", "depthwise_conv2d", "batch_norm", "hardtanh", "add", "mean", "linear"],
        **kw,
    )


def _transformer_spec(name: str, **kw) -> ModelSpec:
    return ModelSpec(
        name,
        [MethodSpec("forward", init_weights(TransformerBlock(), 10), (randn(2, 10, 64, seed=11),),
                    atol=1e-4, rtol=1e-4)],
        ["layer_norm", "linear", "bmm", "softmax", "gelu", "add"],
        **kw,
    )


def _llm_spec(name: str, **kw) -> ModelSpec:
    from torch.export import Dim

    from llm import greedy_calls, tiny_llama

    model = tiny_llama(50)
    calls = greedy_calls(model, prompt=[17, 3, 250, 96, 41], steps=6)
    seq = Dim("seq", min=1, max=32)
    return ModelSpec(
        name,
        [MethodSpec("forward", model, calls[0], dynamic_shapes=({1: seq}, {0: seq}),
                    subsequent_calls=calls[1:], atol=1e-4, rtol=1e-4)],
        ["llm_decode", "kv_cache", "index_put", "rms_norm", "rotary_embedding", "sdpa", "swiglu",
         "dynamic_shape", "mutable_buffer"],
        notes="a tiny Llama (llm.py): the first call is the prefill of a 5-token prompt, each "
              "later call one greedy decode step on the same instance, its KV cache in "
              "mutable buffers",
        **kw,
    )


def model_specs() -> list[ModelSpec]:
    from torch.export import Dim

    from llm_export_flow import RECIPES, export_flow_spec

    batch = Dim("batch", min=1, max=8)
    bf16, f16, f64 = torch.bfloat16, torch.float16, torch.float64
    specs = [
        ModelSpec("add", [MethodSpec("forward", Add(), (randn(2, 3, seed=1), randn(2, 3, seed=2)))],
                  ["add"]),
        _mlp_spec("mlp"),
        _cnn_spec("cnn"),
        _mobilenet_spec("mobilenet_v2"),
        _transformer_spec("transformer_block"),
        ModelSpec(
            "channels_last",
            [MethodSpec("forward", init_weights(SmallCnn(), 4),
                        (randn(2, 3, 16, 16, seed=5).to(memory_format=torch.channels_last),),
                        atol=1e-4, rtol=1e-4)],
            ["conv2d", "channels_last"],
            notes="exported with a channels-last example input: the method's input "
                  "dim order is (0, 2, 3, 1); the .npy holds the logical NCHW values",
        ),
        ModelSpec("size_one", [MethodSpec("forward", SizeOne(), (randn(1, 4, 1, 5, seed=12),))],
                  ["mul", "sum", "size_one_dim"]),
        ModelSpec("embedding_int64",
                  [MethodSpec("forward", init_weights(Embedding(), 13),
                              (distinct_ints(3, 5, seed=14) % 50,))],
                  ["embedding", "mean", "int64"]),
        ModelSpec("where_bool",
                  [MethodSpec("forward", WhereMask(),
                              (randn(3, 4, seed=15), randn(3, 4, seed=16) > 0))],
                  ["where", "logical_not", "bool"]),
        ModelSpec("float16", [MethodSpec("forward", Elementwise(),
                                         (randn(3, 5, seed=17, dtype=f16), randn(3, 5, seed=18, dtype=f16)),
                                         atol=1e-2, rtol=1e-2)],
                  ["mul", "add", "tanh", "sub", "div", "float16"]),
        ModelSpec("bfloat16", [MethodSpec("forward", Elementwise(),
                                          (randn(3, 5, seed=19, dtype=bf16), randn(3, 5, seed=20, dtype=bf16)),
                                          atol=3e-2, rtol=3e-2)],
                  ["mul", "add", "tanh", "sub", "div", "bfloat16"]),
        ModelSpec("float64", [MethodSpec("forward", Elementwise(),
                                         (randn(3, 5, seed=21, dtype=f64), randn(3, 5, seed=22, dtype=f64)),
                                         atol=1e-12, rtol=1e-12)],
                  ["mul", "add", "tanh", "sub", "div", "float64"]),
        ModelSpec("identity_output",
                  [MethodSpec("forward", IdentityOutput(), (randn(2, 3, seed=23), randn(2, 3, seed=24)))],
                  ["output_is_input", "add"]),
        ModelSpec("inplace_input", [MethodSpec("forward", InplaceInput(), (randn(2, 3, seed=25),))],
                  ["mul", "add", "copy_", "input_mutation"]),
        ModelSpec("mutable_buffer",
                  [MethodSpec("forward", Counter(), (randn(2, 3, seed=26),),
                              subsequent_calls=[(randn(2, 3, seed=27),), (randn(2, 3, seed=28),)])],
                  ["add", "copy_", "mutable_buffer"]),
        ModelSpec("mutable_buffer_named",
                  [MethodSpec("forward", Counter(), (randn(2, 3, seed=26),),
                              subsequent_calls=[(randn(2, 3, seed=27),), (randn(2, 3, seed=28),)])],
                  ["add", "copy_", "mutable_buffer", "attributes"], buffer_names=True,
                  notes="the buffer 'total' is named (emit_mutable_buffer_names): an attribute"),
        ModelSpec("dynamic_batch",
                  [MethodSpec("forward", init_weights(Mlp(), 29), (randn(3, 16, seed=30),),
                              trace_inputs=(randn(8, 16, seed=31),), dynamic_shapes=({0: batch},),
                              subsequent_calls=[(randn(8, 16, seed=32),), (randn(1, 16, seed=33),)])],
                  ["linear", "relu", "dynamic_shape"],
                  notes="batch is dynamic in [1, 8]; MethodMeta reports the upper bound"),
        ModelSpec("dynamic_batch_xnnpack",
                  [MethodSpec("forward", init_weights(Mlp(), 29), (randn(3, 16, seed=30),),
                              trace_inputs=(randn(8, 16, seed=31),), dynamic_shapes=({0: batch},),
                              subsequent_calls=[(randn(8, 16, seed=32),), (randn(1, 16, seed=33),)])],
                  ["linear", "relu", "dynamic_shape", "xnnpack_dynamic_shape"], delegated=True,
                  notes="batch is dynamic in [1, 8]: the delegate compiles a graph per batch size"),
        ModelSpec("cnn_dynamic_batch_xnnpack",
                  [MethodSpec("forward", init_weights(SmallCnn(), 4), (randn(3, 3, 16, 16, seed=47),),
                              trace_inputs=(randn(4, 3, 16, 16, seed=48),), dynamic_shapes=({0: batch},),
                              subsequent_calls=[(randn(1, 3, 16, 16, seed=49),),
                                                (randn(4, 3, 16, 16, seed=51),)],
                              atol=1e-4, rtol=1e-4)],
                  ["conv2d", "batch_norm", "max_pool2d", "linear", "dynamic_shape",
                   "xnnpack_dynamic_shape"], delegated=True,
                  notes="batch is dynamic in [1, 8]; convolutions and pooling in the delegate"),
        ModelSpec("two_methods",
                  [MethodSpec("forward", init_weights(TwoMethodsForward(), 34), (randn(2, 6, seed=35),)),
                   MethodSpec("encode", TwoMethodsEncode(), (randn(3, 2, seed=36),))],
                  ["linear", "sigmoid", "mul", "two_methods"]),
        ModelSpec("scalars",
                  [MethodSpec("forward", Scalars(), (randn(2, 3, seed=37), 3, 1.5))],
                  ["mul", "add", "int_input", "float_input"],
                  notes="int and float inputs are traced values: they must equal 3 and 1.5"),
        ModelSpec("tuple_output",
                  [MethodSpec("forward", TupleOutput(), (randn(2, 3, seed=38), randn(2, 3, seed=39)))],
                  ["add", "mul", "tuple_output"]),
        ModelSpec("dict_output",
                  [MethodSpec("forward", DictOutput(), (randn(2, 3, seed=40), randn(2, 3, seed=41)))],
                  ["add", "sub", "mul", "relu", "dict_output"]),
        ModelSpec("add_unplanned_io",
                  [MethodSpec("forward", Add(), (randn(2, 3, seed=42), randn(2, 3, seed=43)))],
                  ["add", "unplanned_io"], plan_io=False),
        _mlp_spec("mlp_unplanned_io", plan_io=False),
        ModelSpec("identity_output_unplanned_io",
                  [MethodSpec("forward", IdentityOutput(), (randn(2, 3, seed=44), randn(2, 3, seed=45)))],
                  ["output_is_input", "unplanned_io"], plan_io=False),
        ModelSpec("inplace_input_unplanned_io",
                  [MethodSpec("forward", InplaceInput(), (randn(2, 3, seed=46),))],
                  ["input_mutation", "unplanned_io"], plan_io=False),
        _mlp_spec("mlp_xnnpack", delegated=True),
        _cnn_spec("cnn_xnnpack", delegated=True),
        _mobilenet_spec("mobilenet_v2_xnnpack", delegated=True),
        _transformer_spec("transformer_block_xnnpack", delegated=True),
        _mlp_spec("mlp_bundled", bundled=True),
        ModelSpec("multi_bundled",
                  [MethodSpec("forward", init_weights(Mlp(), 52), (randn(4, 16, seed=53),),
                              subsequent_calls=[(randn(4, 16, seed=54),), (randn(4, 16, seed=55),)]),
                   MethodSpec("scale", ScaleShift(), (randn(3, 5, seed=56),),
                              subsequent_calls=[(randn(3, 5, seed=57),), (randn(3, 5, seed=58),)])],
                  ["linear", "relu", "mul", "add", "two_methods"], bundled=True,
                  notes="a bundled program with two methods, three test cases each"),
        _with_calls(_cnn_spec("cnn_bundled_xnnpack", delegated=True, bundled=True,
                              notes="a bundled program, XNNPACK-delegated, three test cases"),
                    (randn(2, 3, 16, 16, seed=59),), (randn(2, 3, 16, 16, seed=76),)),
        _with_calls(_mlp_spec("mlp_bundled_wrong", bundled=True,
                              bundled_perturb={"forward": {1: 0.01}},
                              notes="a bundled program whose test case 1 is deliberately wrong: its "
                                    "expected output in the .bpte is the true one (the .npy) plus "
                                    "0.01 everywhere; case 0 is right"),
                    (randn(4, 16, seed=77),)),
        _as_half(_mlp_spec("mlp_fp16_xnnpack", delegated=True)),
        _as_half(_cnn_spec("cnn_fp16_xnnpack", delegated=True)),
        _as_half(_transformer_spec("transformer_block_fp16_xnnpack", delegated=True)),
        _mlp_spec("mlp_ptd", external_data=True),
        _cnn_spec("cnn_ptd", external_data=True),
        _mlp_spec("mlp_ptd_xnnpack", delegated=True, external_data=True),
        _cnn_spec("cnn_ptd_xnnpack", delegated=True, external_data=True),
        _transformer_spec("transformer_block_ptd_xnnpack", delegated=True, external_data=True),
        _llm_spec("llama_decode_ptd", external_data=True),
        _llm_spec("llama_decode"),
        _llm_spec("llama_decode_xnnpack", delegated=True),
        export_flow_spec("llama_export_flow", delegated=False),
        export_flow_spec("llama_export_flow_xnnpack", delegated=True),
        *(export_flow_spec(f"llama_recipe_{r}_xnnpack", delegated=True, recipe=r) for r in RECIPES),
    ]
    from quantized_models import quantized_specs  # 8-bit XNNPACKQuantizer programs
    specs += quantized_specs()
    from family_models import family_specs  # the model families issue #16 measures
    specs += family_specs()
    return specs
