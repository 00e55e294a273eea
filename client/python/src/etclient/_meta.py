"""MethodMeta and TensorInfo as executorch.runtime has them (methods, not fields; the
dtype as ExecuTorch's ScalarType code; the same str()), with what et-serverd adds: the
layout, the device and whether a size is dynamic."""

from __future__ import annotations

import operator
from typing import Any, Optional

from etclient import _native

# ExecuTorch's ScalarType codes and names (runtime/core/portable_type/scalar_type.h)
# for the dtypes the daemon carries.
SCALAR_TYPES = {
    "uint8": (0, "Byte"),
    "int8": (1, "Char"),
    "int16": (2, "Short"),
    "int32": (3, "Int"),
    "int64": (4, "Long"),
    "float16": (5, "Half"),
    "float32": (6, "Float"),
    "float64": (7, "Double"),
    "bool": (11, "Bool"),
    "bfloat16": (15, "BFloat16"),
}


def _index(value: Any, count: int, what: str) -> int:
    """`value` as an index into `count` items: IndexError at count or beyond; TypeError
    for a negative one (ExecuTorch's bindings take an unsigned index)."""
    index = operator.index(value)
    if index < 0:
        raise TypeError(f"{what} index {index} is negative; an index counts from 0")
    if index >= count:
        raise IndexError(f"{what} index {index} is out of range: there are {count}")
    return index


class TensorInfo:
    """One tensor input, output or attribute of a method, as the program declares it."""

    def __init__(self, d: dict, name: str = ""):
        self._d = d
        self._name = name

    def dtype(self) -> int:
        """The dtype as ExecuTorch's ScalarType code (6 is float32); dtype_name() names it."""
        return SCALAR_TYPES[self._d["dtype"]][0]

    def dtype_name(self) -> str:
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
        """Whether the program planned memory for it. An input that is not planned
        (exported with alloc_graph_input=False) is read in place from shared memory."""
        return self._d["memory_planned"]

    def is_dynamic(self) -> bool:
        return self._d["dynamic"]

    def device(self) -> str:
        return self._d["device"]

    def name(self) -> str:
        """An attribute's fully qualified name; empty for inputs and outputs."""
        return self._name

    def __repr__(self) -> str:
        return (f"TensorInfo(sizes={list(self.sizes())}, dtype={SCALAR_TYPES[self._d['dtype']][1]}, "
                f"is_memory_planned={self.is_memory_planned()}, nbytes={self.nbytes()})")


class MethodMeta:
    """What a method takes and returns, and the tensors it names (its attributes)."""

    def __init__(self, d: dict):
        self._d = d
        self._inputs = [TensorInfo(v["tensor"]) if v["tensor"] else None for v in d["inputs"]]
        self._outputs = [TensorInfo(v["tensor"]) if v["tensor"] else None for v in d["outputs"]]
        self._attributes = [TensorInfo(a["tensor"], a["name"]) for a in d.get("attributes", [])]

    def name(self) -> str:
        return self._d["name"]

    def num_inputs(self) -> int:
        return len(self._d["inputs"])

    def num_outputs(self) -> int:
        return len(self._d["outputs"])

    def num_attributes(self) -> int:
        return len(self._attributes)

    def input_kind(self, index: int) -> str:
        """"tensor", "int", "float", "bool", ..."""
        return self._d["inputs"][_index(index, self.num_inputs(), "input")]["kind"]

    def output_kind(self, index: int) -> str:
        return self._d["outputs"][_index(index, self.num_outputs(), "output")]["kind"]

    def input_tensor_meta(self, index: int) -> TensorInfo:
        """IndexError outside [0, num_inputs()); InvalidArgument for an input that is
        not a tensor (input_kind() says what it is)."""
        return self._tensor(self._inputs, index, "input", self.input_kind)

    def output_tensor_meta(self, index: int) -> TensorInfo:
        return self._tensor(self._outputs, index, "output", self.output_kind)

    def attribute_tensor_meta(self, index: int) -> TensorInfo:
        """IndexError outside [0, num_attributes()); its name() is the attribute's."""
        return self._attributes[_index(index, self.num_attributes(), "attribute")]

    def attribute_names(self) -> tuple:
        return tuple(a.name() for a in self._attributes)

    def operators(self) -> tuple:
        return tuple(self._d["operators"])

    def backends(self) -> tuple:
        return tuple(self._d["backends"])

    def _tensor(self, infos: list, index: int, what: str, kind: Any) -> TensorInfo:
        info: Optional[TensorInfo] = infos[_index(index, len(infos), what)]
        if info is None:
            raise _native.InvalidArgument(f"{what} {index} of method '{self.name()}' is not a "
                                          f"tensor: it is {kind(index)!r}")
        return info

    def __repr__(self) -> str:
        def listed(infos: list, kinds: list) -> list:
            return [repr(t) if t else v["kind"] for t, v in zip(infos, kinds)]
        return (f"MethodMeta(name={self.name()!r}, num_inputs={self.num_inputs()}, "
                f"input_tensor_meta={listed(self._inputs, self._d['inputs'])}, "
                f"num_outputs={self.num_outputs()}, "
                f"output_tensor_meta={listed(self._outputs, self._d['outputs'])})")
