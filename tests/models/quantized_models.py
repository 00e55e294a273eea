"""8-bit quantized programs made by ExecuTorch's standard XNNPACKQuantizer flows
(docs/xnnpack.md, "Quantized graphs"):

- static: `get_symmetric_quantization_config(is_per_channel=True)`, prepare_pt2e,
  calibration on seeded inputs, convert_pt2e; int8 activations with per-tensor scales
  and int8 weights with per-output-channel scales (the small CNN and MobileNetV2).
- dynamic: `get_symmetric_quantization_config(is_per_channel=True, is_dynamic=True)`;
  linear layers quantize their input per row at run time (qdint8) and multiply it with
  per-channel int8 weights (the transformer block, a small MLP).

Each is lowered with XnnpackPartitioner. The eager reference is the converted module
itself (its quantize/dequantize ops in float), so the recorded outputs carry the
quantization error the program is meant to have. What remains between eager and a
runtime (docs/xnnpack.md, "Quantized graphs"):

- static: eager rounds each requantization in float after a float convolution, XNNPACK
  in integers; a value at a rounding tie lands one output step away. atol is about
  three steps of the output's scale (0.0029 for the CNN, about 0.0016 for MobileNetV2;
  measured: 0 and one step, ExecuTorch's runtime the same).
- dynamic: eager quantizes a linear layer's input with one scale per tensor
  (choose_qparams), XNNPACK with one per row (per token), so the two differ by the
  input rounding, at most half a step of either scale times the weights' sum per
  output. atol is about three times the measured difference (0.011 for the transformer
  block, 0.0069 for the MLP: exactly what ExecuTorch's runtime gives too).
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from fixture_models import (Mlp, MethodSpec, ModelSpec, SmallCnn, TransformerBlock, init_weights,
                            mobilenet_v2, randn)


def quantize(module: nn.Module, example: tuple, calibration: list[tuple], dynamic: bool) -> nn.Module:
    """The XNNPACKQuantizer flow: export for training, prepare, calibrate, convert."""
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True, is_dynamic=dynamic))
    graph = torch.export.export(copy.deepcopy(module).eval(), example, strict=False).module()
    prepared = prepare_pt2e(graph, quantizer)
    with torch.no_grad():
        for inputs in calibration:
            prepared(*inputs)
    return convert_pt2e(prepared)


def make_prepare(build, atol: float, rtol: float):
    """spec.prepare: quantizes the module `build()` returns and lowers it to XNNPACK."""

    def prepare(spec: ModelSpec) -> None:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.exir import ExecutorchBackendConfig, to_edge_transform_and_lower
        from executorch.exir.passes import MemoryPlanningPass

        module, inputs, calibration, dynamic = build()
        quantized = quantize(module, inputs, calibration, dynamic)
        program = torch.export.export(quantized, inputs, strict=False)
        edge = to_edge_transform_and_lower({"forward": program}, partitioner=[XnnpackPartitioner()])
        spec.methods = [MethodSpec("forward", quantized, inputs, atol=atol, rtol=rtol)]
        spec.program = edge.to_executorch(  # type: ignore[attr-defined]
            ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass()))

    return prepare


def _cnn():
    calibration = [(randn(2, 3, 16, 16, seed=100 + i),) for i in range(8)]
    return init_weights(SmallCnn(), 4), (randn(2, 3, 16, 16, seed=5),), calibration, False


def _mobilenet():
    calibration = [(randn(1, 3, 224, 224, seed=110 + i),) for i in range(4)]
    return mobilenet_v2(), (randn(1, 3, 224, 224, seed=9),), calibration, False


def _transformer():
    x = randn(2, 10, 64, seed=11)
    return init_weights(TransformerBlock(), 10), (x,), [(x,)], True


def _mlp():
    x = randn(4, 16, seed=3)
    return init_weights(Mlp(), 2), (x,), [(x,)], True


def _spec(name: str, build, exercises: list[str], notes: str, atol: float, rtol: float) -> ModelSpec:
    spec = ModelSpec(name, [], exercises, delegated=True, notes=notes)
    spec.prepare = make_prepare(build, atol, rtol)  # type: ignore[attr-defined]
    return spec


def quantized_specs() -> list[ModelSpec]:
    static = "static int8 (XNNPACKQuantizer, per-channel weights), lowered to XNNPACK; "
    dynamic = "dynamic int8 linear (XNNPACKQuantizer is_dynamic, per-channel weights); "
    return [
        _spec("cnn_qs8_xnnpack", _cnn,
              ["quantized", "qs8", "conv2d", "max_pool2d", "adaptive_avg_pool2d", "linear"],
              static + "eager is the converted module", atol=0.01, rtol=0.0),
        _spec("mobilenet_v2_qs8_xnnpack", _mobilenet,
              ["quantized", "qs8", "conv2d", "depthwise_conv2d", "add", "mean", "linear"],
              static + "eager is the converted module", atol=0.005, rtol=0.0),
        _spec("transformer_block_qd8_xnnpack", _transformer,
              ["quantized", "qd8", "dynamic_quantization", "linear", "layer_norm", "softmax"],
              dynamic + "eager is the converted module", atol=0.03, rtol=0.0),
        _spec("mlp_qd8_xnnpack", _mlp,
              ["quantized", "qd8", "dynamic_quantization", "linear", "relu"],
              dynamic + "eager is the converted module", atol=0.02, rtol=0.0),
    ]
