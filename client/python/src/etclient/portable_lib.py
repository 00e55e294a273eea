"""executorch.extension.pybindings.portable_lib's surface, backed by et-serverd:
`from etclient import portable_lib` where code had `from executorch.extension.pybindings
import portable_lib`. Modules, programs and methods live in the daemon; results are
torch tensors or ExecuTorchResult (etclient.Tensor: buffer protocol, DLPack,
dtype_name) as portable_lib returns them.

Results: EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT, read when this module is imported,
chooses: "executorch" gives ExecuTorchResult, "torch" torch tensors (torch must import),
unset torch tensors when torch is installed, else ExecuTorchResult. Unlike ExecuTorch,
importing this module never imports torch: the first method loaded does, when results
are to be torch tensors.

Where et-serverd differs by design (client/python/README.md, "Drop-in for ExecuTorch"):
results are in fresh shared memory on every call whatever clone_outputs says (never
overwritten by a later call); get_attribute() returns a copy of the state; the thread
pool is the daemon's (shared by its clients, set with et-serverd --threads); the daemon
records times, not intermediate outputs (a debug buffer file is written empty); a
program is always verified fully; CUDA results need a GPU this daemon has not."""

from __future__ import annotations

import importlib.util
import operator
import os
import sys
import threading
import weakref
from typing import Any, Callable, List, Optional, Sequence

from etclient import _native
from etclient._meta import MethodMeta, TensorInfo
from etclient._runtime import Method, Program, Runtime, Verification, write_etdump

ExecuTorchResult = _native.Tensor

_MODES = ("executorch", "torch")
_MODE = os.environ.get("EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT", "").strip().lower()
if _MODE and _MODE not in _MODES:
    raise ImportError(f"EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT={_MODE!r}: expected 'executorch' "
                      "(ExecuTorchResult outputs) or 'torch' (torch tensors)")
if not _MODE:
    _MODE = "torch" if "torch" in sys.modules or importlib.util.find_spec("torch") else "executorch"


def _torch_for_results() -> Any:
    """The torch module results are converted with, or None for ExecuTorchResult."""
    if _MODE != "torch":
        return None
    try:
        import torch
    except ImportError as e:
        raise ImportError("EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT asks for torch tensors, and torch "
                          f"does not import ({e}); set it to 'executorch' for ExecuTorchResult") from e
    return torch


def _runtime() -> Runtime:
    return Runtime.get()


def _non_negative(value: Any, what: str) -> int:
    """An index as ExecuTorch's bindings take one (an unsigned int): TypeError otherwise."""
    index = operator.index(value)
    if index < 0:
        raise TypeError(f"{what}: {index} is negative; an index counts from 0")
    return index


def _buffer(data: Any, what: str) -> bytes:
    """The bytes of a buffer (bytes, bytearray, memoryview, numpy array): TypeError for
    anything else, as ExecuTorch's bindings raise."""
    try:
        return bytes(memoryview(data))
    except TypeError:
        raise TypeError(f"{what}: expected bytes or another buffer, not "
                        f"{type(data).__name__}") from None


def _read_file(path: Any, what: str) -> bytes:
    """A file's bytes; NotFound (a RuntimeError, as ExecuTorch raises) when unreadable."""
    try:
        with open(os.fspath(path), "rb") as f:
            return f.read()
    except OSError as e:
        raise _native.NotFound(f"cannot read the {what} {os.fspath(path)}: {e.strerror} "
                               "(check the path)") from None


class ExecuTorchMethod:
    """One instance of a method in the daemon, with its own state. Calls from several
    threads are serialized (set_inputs, execute and get_outputs each on their own:
    hold a lock of yours around such a sequence)."""

    def __init__(self, method: Method):
        self._method = method
        self._lock = threading.RLock()

    def set_inputs(self, inputs: Sequence[Any]) -> None:
        with self._lock:
            self._method.set_inputs(inputs)

    def execute(self) -> None:
        with self._lock:
            self._method.execute()

    def get_outputs(self, clone_outputs: bool = True) -> List[Any]:
        """The last execute's outputs (fresh memory either way: see the module's doc)."""
        del clone_outputs
        with self._lock:
            try:
                return self._method.outputs()
            except ValueError as e:
                raise _native.InvalidArgument(str(e)) from None

    def call(self, inputs: Any = (), clone_outputs: bool = True) -> List[Any]:
        del clone_outputs
        with self._lock:
            return self._method.execute(inputs)

    __call__ = call

    def method_meta(self) -> MethodMeta:
        return self._method.metadata

    def get_attribute(self, name: str) -> Any:
        """A copy of the tensor the program names `name` (a mutable buffer's state
        after the last execute, or a named constant)."""
        with self._lock:
            return self._method.attribute(name)


def _load_method(program: Program, name: str) -> ExecuTorchMethod:
    return ExecuTorchMethod(program._new_method(name, _torch_for_results()))


class ExecuTorchProgram:
    """A loaded program: load_method() makes a new instance of a method each call."""

    def __init__(self, program: Program, etdump: bool):
        self._program = program
        self._names = [d["name"] for d in program._native.methods]
        self._etdump = etdump
        self._loaded: "weakref.WeakSet[ExecuTorchMethod]" = weakref.WeakSet()

    def num_methods(self) -> int:
        return len(self._names)

    def get_method_name(self, method_index: int) -> str:
        method_index = _non_negative(method_index, "method_index")
        if method_index >= len(self._names):
            raise _native.InvalidArgument(f"method index {method_index} is out of range: the "
                                          f"program has {len(self._names)} method(s)")
        return self._names[method_index]

    def load_method(self, method_name: str) -> ExecuTorchMethod:
        method = _load_method(self._program, method_name)
        if self._etdump:
            method._method.start_profile(100000)
            self._loaded.add(method)
        return method

    def method_meta(self, method_name: str) -> MethodMeta:
        return self._program.metadata(method_name)

    def has_etdump(self) -> bool:
        return self._etdump

    def write_etdump_result_to_file(self, path: str, debug_buffer_path: Optional[str] = None) -> None:
        if not self._etdump:
            raise _native.InvalidArgument("write_etdump_result_to_file: the program was loaded "
                                          "without enable_etdump=True")
        write_etdump([m._method for m in self._loaded], path, debug_buffer_path)


class BundledModule:
    """A bundled program (.bpte): the program and its test cases."""

    def __init__(self, data: bytes):
        self._data = data
        self._runner: Optional["ExecuTorchModule"] = None
        self._lock = threading.Lock()

    def verify_result_with_bundled_expected_output(self, method_name: str, testset_idx: int,
                                                   rtol: float = 1e-5,
                                                   atol: float = 1e-8) -> List[Any]:
        """Runs test case `testset_idx` of `method_name` (on this bundle's own instance
        of the method) and compares its outputs with the expected ones; returns the
        outputs. InvalidArgument (a RuntimeError) naming the first output and element
        that differ, or an index out of range; NotFound for a method without cases."""
        index = _non_negative(testset_idx, "testset_idx")
        with self._lock:
            if self._runner is None:
                self._runner = _module(lambda d: _runtime().load_program(self._data), None, False)
            runner = self._runner
        runner.load_bundled_input(self, method_name, index)
        outputs = runner.plan_execute(method_name)
        runner.verify_result_with_bundled_expected_output(self, method_name, index, rtol, atol)
        return outputs


class ExecuTorchModule:
    """A program with one instance of each method it runs (made when first run; its
    state lives across calls). A load error that only running would show in ExecuTorch
    (missing or bad external data) is raised by the first call, as there."""

    def __init__(self, program: Optional[Program], etdump: bool,
                 deferred: Optional[Exception] = None):
        self._program = program
        self._deferred = deferred
        self._etdump = etdump
        self._methods: dict = {}
        self._inputs_set: set = set()
        self._lock = threading.RLock()

    def _method(self, name: str) -> ExecuTorchMethod:
        if self._deferred is not None:
            raise type(self._deferred)(str(self._deferred))
        assert self._program is not None
        method = self._methods.get(name)
        if method is None:
            method = _load_method(self._program, name)
            if self._etdump:
                method._method.start_profile(100000)
            self._methods[name] = method
        return method

    def run_method(self, method_name: str, inputs: Sequence[Any],
                   clone_outputs: bool = True) -> List[Any]:
        with self._lock:
            return self._method(method_name).call(inputs, clone_outputs)

    def forward(self, inputs: Sequence[Any], clone_outputs: bool = True) -> List[Any]:
        return self.run_method("forward", inputs, clone_outputs)

    def __call__(self, inputs: Any, clone_outputs: bool = True) -> List[Any]:
        return self.forward(inputs, clone_outputs)

    def plan_execute(self, method_name: str, clone_outputs: bool = True) -> List[Any]:
        """Runs the method on the inputs set before (load_bundled_input)."""
        with self._lock:
            method = self._method(method_name)
            method.execute()
            return method.get_outputs(clone_outputs)

    def load_bundled_input(self, bundle: BundledModule, method_name: str, testset_idx: int) -> None:
        from etclient._bundle import test_case
        case = test_case(bundle._data, method_name, testset_idx, _runtime().empty)
        with self._lock:
            self._method(method_name).set_inputs(case.inputs)

    def verify_result_with_bundled_expected_output(self, bundle: BundledModule, method_name: str,
                                                   testset_idx: int, rtol: float = 1e-5,
                                                   atol: float = 1e-8) -> List[Any]:
        """Compares the method's last outputs with test case `testset_idx`'s expected
        ones (|got - expected| <= atol + rtol * |expected|); InvalidArgument naming the
        first output and element that differ. Returns the outputs."""
        from etclient._bundle import compare, test_case
        case = test_case(bundle._data, method_name, testset_idx)
        with self._lock:
            method = self._method(method_name)
            outputs = method._method.outputs()
            raw = method._method._raw_outputs()
        compare(raw, case.expected, rtol, atol, method_name, testset_idx)
        return outputs

    def has_etdump(self) -> bool:
        return self._etdump

    def write_etdump_result_to_file(self, path: str, debug_buffer_path: Optional[str] = None) -> None:
        if not self._etdump:
            raise _native.InvalidArgument("write_etdump_result_to_file: the module was loaded "
                                          "without enable_etdump=True")
        write_etdump([m._method for m in self._methods.values()], path, debug_buffer_path)

    def method_meta(self, method_name: str) -> MethodMeta:
        if self._deferred is not None:
            raise type(self._deferred)(str(self._deferred))
        assert self._program is not None
        return self._program.metadata(method_name)

    def method_names(self) -> List[str]:
        if self._deferred is not None:
            raise type(self._deferred)(str(self._deferred))
        assert self._program is not None
        return [d["name"] for d in self._program._native.methods]


def _check_verification(program_verification: Any) -> None:
    if not isinstance(program_verification, Verification):
        raise TypeError("program_verification: expected a Verification, not "
                        f"{type(program_verification).__name__}")


def _read_data(data: Any) -> Optional[bytes]:
    """A .ptd given as bytes, or as a path (str or os.PathLike)."""
    if data is None:
        return None
    if isinstance(data, (str, os.PathLike)):
        return _read_file(data, "data file")
    return _buffer(data, "data_map_buffer")


def _module(load: Callable[[Optional[bytes]], Program], data: Optional[bytes],
            enable_etdump: bool) -> ExecuTorchModule:
    """A module over what `load` loads. As ExecuTorch's modules load lazily, a program
    that does not load (bad bytes, missing or bad external data) still makes a module,
    whose calls raise the load's error."""
    try:
        return ExecuTorchModule(load(data), enable_etdump)
    except _native.Error as e:
        return ExecuTorchModule(None, enable_etdump, deferred=e)


def _load_for_executorch(program_path: str, data_path: Optional[str] = None,
                         enable_etdump: bool = False, debug_buffer_size: int = 0,
                         program_verification: Verification = Verification.InternalConsistency
                         ) -> ExecuTorchModule:
    _check_verification(program_verification)
    program = _read_file(program_path, "program")
    return _module(lambda d: _runtime().load_program(program, data_buffer=d),
                   _read_data(data_path), enable_etdump)


def _load_for_executorch_from_buffer(buffer: bytes, data_map_buffer: Optional[bytes] = None,
                                     enable_etdump: bool = False, debug_buffer_size: int = 0,
                                     program_verification: Verification =
                                     Verification.InternalConsistency) -> ExecuTorchModule:
    _check_verification(program_verification)
    program = _buffer(buffer, "buffer")
    return _module(lambda d: _runtime().load_program(program, data_buffer=d),
                   _read_data(data_map_buffer), enable_etdump)


def _load_for_executorch_from_bundled_program(module: BundledModule, data_map_buffer: Any = None,
                                              enable_etdump: bool = False,
                                              debug_buffer_size: int = 0) -> ExecuTorchModule:
    if not isinstance(module, BundledModule):
        raise TypeError(f"expected a BundledModule, not {type(module).__name__}")
    return _module(lambda d: _runtime().load_program(module._data, data_buffer=d),
                   _read_data(data_map_buffer), enable_etdump)


def _load_for_executorch_from_data_loader(loader: Any, data_path: Optional[str] = None,
                                          enable_etdump: bool = False,
                                          debug_buffer_size: int = 0) -> ExecuTorchModule:
    """`loader`: an object with read() (a file object) or a buffer of the program's
    bytes; the bytes go to the daemon, which loads them."""
    data = loader.read() if hasattr(loader, "read") else loader
    return _load_for_executorch_from_buffer(data, _read_data(data_path), enable_etdump,
                                            debug_buffer_size)


def _load_bundled_program_from_buffer(buffer: bytes, non_const_pool_size: int = 0) -> BundledModule:
    from etclient._bundle import check_bundle
    data = _buffer(buffer, "buffer")
    check_bundle(data)
    return BundledModule(data)


def _load_program(path: str, enable_etdump: bool = False, debug_buffer_size: int = 0,
                  program_verification: Verification = Verification.Minimal,
                  data_path: Optional[str] = None) -> ExecuTorchProgram:
    _check_verification(program_verification)
    program = _runtime().load_program(path, data_path=data_path)
    return ExecuTorchProgram(program, enable_etdump)


def _load_program_from_buffer(buffer: bytes, enable_etdump: bool = False,
                              debug_buffer_size: int = 0,
                              program_verification: Verification = Verification.Minimal,
                              data_path: Optional[str] = None) -> ExecuTorchProgram:
    _check_verification(program_verification)
    program = _runtime().load_program(_buffer(buffer, "buffer"), data_path=data_path)
    return ExecuTorchProgram(program, enable_etdump)


def _is_available(backend_name: str) -> bool:
    return _runtime().backend_registry.is_available(backend_name)


def _get_operator_names() -> List[str]:
    return sorted(_runtime().operator_registry.operator_names)


def _get_registered_backend_names() -> List[str]:
    return _runtime().backend_registry.registered_backend_names


def _threadpool_get_thread_count() -> int:
    """The daemon's compute threads (shared by every client)."""
    return int(_runtime().server_status()["threads"])


def _unsafe_reset_threadpool(num_threads: int) -> None:
    raise _native.Unimplemented(
        "_unsafe_reset_threadpool: the thread pool is et-serverd's, shared by every client "
        "of the daemon; set its size with et-serverd --threads N (or ET_NUM_THREADS)")


# ExecuTorch's legacy profiler (EXECUTORCH_ENABLE_PROFILING), compiled out of its own
# wheels: blocks are accepted and nothing is recorded, as there. Profiles are
# enable_etdump=True (write_etdump_result_to_file) or etclient.Method.profile().
def _create_profile_block(name: str) -> None:
    str(name)


def _dump_profile_results() -> bytes:
    return b""


def _reset_profile_results() -> None:
    return None


class PyDataLoader:
    """ExecuTorch wraps its C++ data loaders in this; etclient takes any object with
    read() (or a buffer) in _load_for_executorch_from_data_loader instead."""


__all__ = [
    "BundledModule", "ExecuTorchMethod", "ExecuTorchModule", "ExecuTorchProgram",
    "ExecuTorchResult", "MethodMeta", "PyDataLoader", "TensorInfo", "Verification",
    "_create_profile_block", "_dump_profile_results", "_get_operator_names",
    "_get_registered_backend_names", "_is_available", "_load_bundled_program_from_buffer",
    "_load_for_executorch", "_load_for_executorch_from_buffer",
    "_load_for_executorch_from_bundled_program", "_load_for_executorch_from_data_loader",
    "_load_program", "_load_program_from_buffer", "_reset_profile_results",
    "_threadpool_get_thread_count", "_unsafe_reset_threadpool",
]
