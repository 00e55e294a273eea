"""etclient: run ExecuTorch .pte programs in et-serverd, without torch or the runtime.

The API mirrors executorch.runtime, so switching is a change of import::

    from etclient import Runtime
    runtime = Runtime.get()                      # connects to et-serverd
    program = runtime.load_program("model.pte")  # a path, or the bytes
    method = program.load_method("forward")
    outputs = method.execute([x])                # numpy, buffers, DLPack, torch tensors

Importing this package loads neither torch nor numpy nor any runtime library: the
program runs in the daemon, and tensors travel through shared memory.
"""

from etclient._native import (
    Error,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    StateLost,
    Tensor,
    Unavailable,
    Unimplemented,
)
from etclient._meta import MethodMeta, TensorInfo
from etclient._profile import Profile, ProfileRow
from etclient._runtime import Method, Program, Runtime
from etclient._verify import VerifyCase, VerifyOutput, VerifyReport

Client = Runtime  # the connection is the runtime here

__all__ = [
    "Client",
    "Error",
    "InvalidArgument",
    "Method",
    "MethodMeta",
    "NotFound",
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
    "VerifyCase",
    "VerifyOutput",
    "VerifyReport",
]
__version__ = "0.1.0"
