"""MethodMeta and TensorInfo, shaped like executorch.runtime's (methods, not fields),
with the layout and device each input and output has in et-serverd."""

from __future__ import annotations

from typing import Optional


class TensorInfo:
    """One tensor input or output of a method, as the program declares it."""

    def __init__(self, d: dict):
        self._d = d

    def dtype(self) -> str:
        """The dtype's name, e.g. "float32" or "bfloat16"."""
        return self._d["dtype"]

    def sizes(self) -> tuple:
        """The sizes (the upper bounds, for a dynamic input)."""
        return tuple(self._d["sizes"])

    def dim_order(self) -> tuple:
        """The memory layout: dims from outermost to innermost ((0, 2, 3, 1) is channels last)."""
        return tuple(self._d["dim_order"])

    def nbytes(self) -> int:
        return self._d["nbytes"]

    def is_memory_planned(self) -> bool:
        """False: the daemon reads a shared-memory input in place (zero copy)."""
        return self._d["memory_planned"]

    def is_dynamic(self) -> bool:
        return self._d["dynamic"]

    def device(self) -> str:
        return self._d["device"]

    def __repr__(self) -> str:
        return (f"TensorInfo(dtype={self.dtype()}, sizes={self.sizes()}, dim_order={self.dim_order()}, "
                f"nbytes={self.nbytes()}, is_memory_planned={self.is_memory_planned()}, "
                f"device={self.device()})")


class MethodMeta:
    """What a method takes and returns."""

    def __init__(self, d: dict):
        self._d = d
        self._inputs = [TensorInfo(v["tensor"]) if v["tensor"] else None for v in d["inputs"]]
        self._outputs = [TensorInfo(v["tensor"]) if v["tensor"] else None for v in d["outputs"]]

    def name(self) -> str:
        return self._d["name"]

    def num_inputs(self) -> int:
        return len(self._d["inputs"])

    def num_outputs(self) -> int:
        return len(self._d["outputs"])

    def input_kind(self, index: int) -> str:
        """"tensor", "int", "float", "bool", ..."""
        return self._d["inputs"][index]["kind"]

    def output_kind(self, index: int) -> str:
        return self._d["outputs"][index]["kind"]

    def input_tensor_meta(self, index: int) -> Optional[TensorInfo]:
        return self._inputs[index]

    def output_tensor_meta(self, index: int) -> Optional[TensorInfo]:
        return self._outputs[index]

    def operators(self) -> tuple:
        return tuple(self._d["operators"])

    def backends(self) -> tuple:
        return tuple(self._d["backends"])

    def __repr__(self) -> str:
        ins = ", ".join(repr(t) if t else self.input_kind(i) for i, t in enumerate(self._inputs))
        outs = ", ".join(repr(t) if t else self.output_kind(i) for i, t in enumerate(self._outputs))
        return f"MethodMeta(name={self.name()}, inputs=[{ins}], outputs=[{outs}])"
