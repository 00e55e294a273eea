"""etclient: run ExecuTorch .pte programs in et-serverd, without torch or the runtime.

The API mirrors executorch.runtime, so switching is a change of import::

    from etclient import Runtime
    runtime = Runtime.get()                      # connects to et-serverd
    program = runtime.load_program("model.pte")  # a path, or the bytes
    method = program.load_method("forward")
    outputs = method.execute([x])                # numpy, buffers, DLPack, torch tensors

Importing this package loads neither torch nor numpy nor any runtime library: the
program runs in the daemon, and tensors travel through shared memory.

etclient.runtime has executorch.runtime's whole surface and etclient.portable_lib
executorch.extension.pybindings.portable_lib's; `python -m etclient run-as-executorch
script.py` (or ETCLIENT_AS_EXECUTORCH=1) runs unmodified code written against either
(docs: client/python/README.md, "Drop-in for ExecuTorch").
"""

from etclient._native import (
    Error,
    InputTypeError,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    StateLost,
    Tensor,
    Unavailable,
    Unimplemented,
)
from etclient import _tensor  # noqa: F401  (Tensor.to_host, Tensor.from_host)
from etclient._meta import MethodMeta, TensorInfo
from etclient._profile import Profile, ProfileRow
from etclient._runtime import (
    BackendRegistry,
    Generation,
    Method,
    OperatorRegistry,
    Program,
    Runtime,
    Verification,
)
from etclient._verify import VerifyCase, VerifyOutput, VerifyReport

Client = Runtime  # the connection is the runtime here

__all__ = [
    "BackendRegistry",
    "Client",
    "Error",
    "Generation",
    "InputTypeError",
    "InvalidArgument",
    "Method",
    "MethodMeta",
    "NotFound",
    "OperatorRegistry",
    "PermissionDenied",
    "Profile",
    "ProfileRow",
    "Program",
    "ResourceExhausted",
    "Runtime",
    "StateLost",
    "Tensor",
    "TensorInfo",
    "Unavailable",
    "Unimplemented",
    "Verification",
    "VerifyCase",
    "VerifyOutput",
    "VerifyReport",
]
__version__ = "0.1.0"
