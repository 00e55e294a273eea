"""What etclient.Tensor adds in Python, for portable_lib's ExecuTorchResult: to_host()
and from_host()."""

from __future__ import annotations

from typing import Any

from etclient import _native


def to_host(self: _native.Tensor) -> _native.Tensor:
    """A copy of the tensor in fresh shared memory, C-contiguous (results of et-serverd
    are always on the host; the copy is never rewritten by a later call)."""
    from etclient._runtime import Runtime
    out = Runtime.get().empty(tuple(self.shape), self.dtype_name)
    if self.nbytes:
        memoryview(out).cast("B")[:] = self.to_bytes()
    return out


def from_host(buffer: Any, device_index: int = 0) -> _native.Tensor:
    """ExecuTorch copies a CPU buffer to CUDA device `device_index` here, for a method
    whose inputs live there. et-serverd runs programs on the CPU: pass the buffer itself."""
    raise _native.Unimplemented(
        f"ExecuTorchResult.from_host: copies a buffer to CUDA device {device_index}, and "
        "et-serverd runs programs on the CPU (no CUDA device is in use here): pass the CPU "
        "buffer to the method itself")


_native.Tensor.to_host = to_host
_native.Tensor.from_host = staticmethod(from_host)
