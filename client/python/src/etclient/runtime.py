"""executorch.runtime's surface over et-serverd: `from etclient.runtime import Runtime`
(or `from etclient import Runtime`) where code had `from executorch.runtime import
Runtime`. The classes are etclient's own (etclient/_runtime.py): the same names,
arguments, return types and exception types, with what the daemon adds."""

from etclient._meta import MethodMeta, TensorInfo
from etclient._runtime import (
    BackendRegistry,
    Method,
    OperatorRegistry,
    Program,
    Runtime,
    Verification,
)

__all__ = [
    "BackendRegistry",
    "Method",
    "MethodMeta",
    "OperatorRegistry",
    "Program",
    "Runtime",
    "TensorInfo",
    "Verification",
]
