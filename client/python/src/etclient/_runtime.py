"""Runtime, Program and Method: executorch.runtime's shape over a connection to
et-serverd. The conversions and the ownership rules live in the extension
(etclient._native); this layer decides the result type and keeps the last outputs."""

from __future__ import annotations

import dataclasses
import enum
import math
import operator
import os
import queue
import sys
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set

from etclient import _native
from etclient._meta import MethodMeta
from etclient._profile import Profile
from etclient._verify import VerifyReport

# Executes a program loaded with enable_etdump=True keeps per method between writes
# (the daemon's most).
_ETDUMP_EXECUTES = 100000


class Verification(enum.Enum):
    """How much of a program to check when it loads (executorch.runtime's levels). The
    daemon checks every program fully, whichever is asked: a program it serves to many
    clients is never trusted on a client's word."""

    Minimal = 0
    InternalConsistency = 1


def _bundled_serverd() -> str:
    """The et-serverd shipped inside this package (a wheel built with the daemon)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "et-serverd")


def _socket_for(address: Optional[str]) -> str:
    """The daemon's socket: `address`, else $ETSERVER_SOCKET, else the default ("")."""
    if address is None:
        address = os.environ.get("ETSERVER_SOCKET", "")
    address = os.fspath(address)
    if address.startswith("unix:"):
        address = address[len("unix:"):]
    return address


_DLPACK_BOOL: dict = {}


def _torch_reads_dlpack_bool(torch: Any) -> bool:
    """Whether this torch takes DLPack's bool code (torch >= 2 does), asked once."""
    version = getattr(torch, "__version__", "")
    if version not in _DLPACK_BOOL:
        _DLPACK_BOOL[version] = not version.split(".")[0].isdigit() or int(version.split(".")[0]) >= 2
    return _DLPACK_BOOL[version]


def _max_executes(value: Any) -> int:
    count = operator.index(value)
    if not 0 <= count < 2**32:
        raise _native.InvalidArgument(f"max_executes: {count} is not a count of executes (0: "
                                      "the daemon's default, 1000)")
    return count


def write_etdump(methods: List["Method"], etdump_path: Any, debug_buffer_path: Any) -> None:
    """Ends the profiles `methods` have running, writes their executes as one ETDump,
    and starts them again (the next write holds the executes after this one)."""
    if not methods:
        raise _native.InvalidArgument("write_etdump_result_to_file: no method of the program "
                                      "was loaded, so none ran")
    try:
        data = methods[0]._native.stop_profile(etdump=True, chrome_trace=False,
                                               merge=[m._native for m in methods[1:]])
    finally:  # recording goes on, whether or not this write got its profile
        for m in methods:
            try:
                m.start_profile(_ETDUMP_EXECUTES)
            except _native.Error:
                pass  # a method the daemon lost (a restart) is re-created by its next call
    with open(os.fspath(etdump_path), "wb") as f:
        f.write(data["etdump"])
    if debug_buffer_path is not None:
        with open(os.fspath(debug_buffer_path), "wb"):
            pass  # the daemon records times, not intermediate outputs


@dataclasses.dataclass(frozen=True)
class Generation:
    """What Method.generate() returns."""

    tokens: list  # generated, in order (a stop token last, when one came)
    stop_reason: str  # stop_token, max_new_tokens, context_full, caller
    prompt_tokens: int
    prefill_micros: int  # the prompt, up to the first token's logits
    decode_micros: int  # the decode steps after that
    next_pos: int  # the last token's position (not in the cache yet): continue there

    @property
    def decode_tokens_per_second(self) -> float:
        """Tokens after the first, per second of decoding (0 when there were none)."""
        steps = len(self.tokens) - 1
        return steps / (self.decode_micros * 1e-6) if steps > 0 and self.decode_micros else 0.0


class Method:
    """One loaded method: its own instance in the daemon (state, inputs).

    Used by one thread at a time: a second thread is refused (program.new_method()
    makes one per thread).
    Returns etclient.Tensor results, or torch tensors over the same memory when torch
    was already imported when the method was loaded (decided then, never per call)."""

    def __init__(self, native: Any, torch_module: Any):
        self._native = native
        self._torch = torch_module
        self._meta = MethodMeta(native.meta)
        self._outputs: Optional[list] = None
        self._raw: Optional[list] = None  # the same outputs as etclient values
        self._timeout: Optional[float] = None  # the native method's, as last set

    @property
    def metadata(self) -> MethodMeta:
        return self._meta

    @property
    def returns_torch(self) -> bool:
        return self._torch is not None

    @property
    def transport(self) -> str:
        """"fast" when calls go through the shared-memory channel with the daemon, "grpc"
        when over gRPC (transport="grpc", ETSERVER_TRANSPORT=grpc, or a daemon without
        the fast path)."""
        return self._native.transport

    def execute(self, inputs: Any = None, outputs: Optional[list] = None, *,
                timeout: Optional[float] = None) -> list:
        """Runs the method. `inputs`: a list or tuple of inputs, or a single one (a numpy
        array counts as one input); None runs with the inputs given to set_inputs().
        `outputs`: tensors from output_buffers() to write the results into (nothing is
        allocated for them per call); they are returned, resized to the results, and
        every call rewrites them. `timeout`: seconds this call may take; past it the
        daemon stops the call (or never starts it) and this raises DeadlineExceeded, and
        the method stays usable. None: only the daemon's own deadlines."""
        self._outputs = self._raw = None
        if timeout != self._timeout:
            self._native.set_timeout(0.0 if timeout is None else float(timeout))
            self._timeout = timeout
        if outputs is not None:
            raw = self._native.run_into(inputs, list(outputs))
            self._outputs = self._raw = raw
            return list(raw)
        if inputs is None and self._meta.num_inputs() > 0:
            raw = self._native.execute()
        else:
            raw = self._native.run([] if inputs is None else inputs)
        outputs = raw if self._torch is None else [self._wrap(value) for value in raw]
        self._outputs, self._raw = outputs, raw
        return list(outputs)

    __call__ = execute

    def set_inputs(self, inputs: Any) -> None:
        """Gives the inputs for the next execute(). A writable buffer is referenced, and
        read (copied into shared memory) when the call runs; if its memory has moved by
        then, execute() raises. Anything else is copied now."""
        self._outputs = self._raw = None
        self._native.set_inputs(inputs)

    def outputs(self) -> list:
        """The outputs of the last execute(): the same objects each time."""
        if self._outputs is None:
            raise ValueError(f"method '{self._meta.name()}' has no outputs: the last call was "
                             "refused, or nothing ran since the inputs were set")
        return list(self._outputs)

    def _raw_outputs(self) -> list:
        self.outputs()  # raises as outputs() does
        return list(self._raw or [])

    def output_buffers(self) -> list:
        """One tensor in shared memory per output, each as large as the output may be:
        pass them as execute(inputs, outputs=...) to have results written there."""
        return self._native.output_buffers()

    def input_buffer(self, index: int) -> _native.Tensor:
        """A writable tensor in shared memory shaped and laid out as input `index` is
        declared: fill it (numpy.asarray(buf)[...] = ...) and pass it for zero copy."""
        return self._native.input_buffer(index)

    def attribute(self, name: str) -> Any:
        """A copy of the tensor the program names `name` (metadata.attribute_names()):
        a mutable buffer's state as the last execute left it, or a named constant.
        NotFound (a KeyError) naming the attributes there are."""
        return self._wrap(self._native.attribute(name))

    def generate(self, prompt: Sequence[int], *, max_new_tokens: int = 0,
                 stop_tokens: Sequence[int] = (), temperature: float = 0.0, top_p: float = 1.0,
                 seed: int = 0, start_pos: int = 0, max_context: int = 0,
                 on_token: Optional[Callable[[int], Optional[bool]]] = None) -> "Generation":
        """Generates tokens in the daemon with this LLM method (as ExecuTorch's export
        flow makes them: tokens and positions in, logits out): the prefill of `prompt`
        (token ids) and the decode loop run there, and each token comes back as it is
        chosen: `on_token(token)` is called with it and may return False to stop.

        Greedy when temperature is 0; otherwise sampled from softmax(logits /
        temperature) within the top_p nucleus, drawn with `seed` (the same seed gives
        the same tokens). Stops at any of `stop_tokens` (reported), after
        max_new_tokens (0: no limit), or when the context is full (max_context, by
        default the program's get_max_context_len). The KV cache stays in this
        method's instance: continue a conversation with generate([last token],
        start_pos=result.next_pos). Raises InvalidArgument naming what does not fit."""
        native = self._native.generate(
            [int(t) for t in prompt], int(start_pos), int(max_new_tokens),
            [int(t) for t in stop_tokens], float(temperature), float(top_p), int(seed),
            int(max_context), on_token)
        return Generation(**native)

    def stream(self, prompt: Sequence[int], **options: Any) -> Iterator[int]:
        """generate() as an iterator: yields each token as the daemon sends it.
        Breaking out of the loop stops the generation in the daemon."""
        tokens: "queue.Queue" = queue.Queue()
        stop = threading.Event()
        done = object()
        failure: list = []

        def produce() -> None:
            try:
                self.generate(prompt, on_token=lambda t: (tokens.put(t), not stop.is_set())[1],
                              **options)
            except BaseException as e:  # handed to the consumer
                failure.append(e)
            finally:
                tokens.put(done)

        worker = threading.Thread(target=produce, name="etclient-generate", daemon=True)
        worker.start()
        try:
            while True:
                item = tokens.get()
                if item is done:
                    break
                yield item
        finally:
            stop.set()
            worker.join()
        if failure:
            raise failure[0]

    def profile(self, max_executes: int = 0) -> Profile:
        """A context manager that profiles this method's executes in the daemon while its
        block runs, whichever transport carries them::

            with method.profile() as p:
                method.execute([x])
            print(p)  # the table; p.rows, p.write_etdump(path), p.write_chrome_trace(path)

        The first `max_executes` are kept (0: 1000; at most 100000); later ones run
        unprofiled and are counted in p.dropped. An error in the block ends the profile
        too. See start_profile() for the errors."""
        keep = _max_executes(max_executes)
        return Profile(start=lambda: self._native.start_profile(keep), stop=self._stop_native)

    def start_profile(self, max_executes: int = 0) -> None:
        """Profiles this method's executes in the daemon from now until stop_profile()
        (as profile() does, without a block); starting again discards what was
        recorded. Raises InvalidArgument for max_executes above 100000; StateLost when
        the daemon restarted since the last call (as every call does)."""
        self._native.start_profile(_max_executes(max_executes))

    def stop_profile(self) -> Profile:
        """Ends the profile start_profile() began and returns it (with its ETDump and
        Chrome trace). Raises InvalidArgument when none is running, StateLost when the
        daemon restarted (or ended this process's session) since start_profile(): the
        profile was lost with the method's instance there."""
        return Profile._from_native(self._stop_native())

    def _stop_native(self) -> dict:
        return self._native.stop_profile(etdump=True, chrome_trace=True)

    def _wrap(self, value: Any) -> Any:
        if self._torch is None or not isinstance(value, _native.Tensor):
            return value
        if value.dtype_name == "bool" and not _torch_reads_dlpack_bool(self._torch):
            # torch < 2 has no DLPack bool: the same bytes as uint8, viewed as bool.
            return self._torch.from_dlpack(value._with_dtype("uint8")).view(self._torch.bool)
        return self._torch.from_dlpack(value)


class Program:
    """A program loaded into the daemon (shared there with every client loading the
    same bytes)."""

    def __init__(self, native: Any, etdump: bool = False):
        self._native = native
        self._metas = {d["name"]: MethodMeta(d) for d in native.methods}
        self._methods: Dict[str, Method] = {}
        self._etdump = etdump
        self._lock = threading.Lock()

    @property
    def method_names(self) -> Set[str]:
        return set(self._metas)

    def _fresh(self) -> "Program":
        """The same program in the daemon, with no method loaded through it yet."""
        return Program(self._native, self._etdump)

    @property
    def sha256(self) -> str:
        return self._native.sha256

    def _check_name(self, name: str) -> None:
        if name not in self._metas:
            raise _native.NotFound(f"the program has no method '{name}' "
                                   f"(it has: {', '.join(sorted(self._metas))})")

    def metadata(self, method_name: str) -> MethodMeta:
        """Raises NotFound (a KeyError, and a RuntimeError) for a method the program lacks."""
        self._check_name(method_name)
        return self._metas[method_name]

    def load_method(self, name: str = "forward") -> Method:
        """The method's instance in the daemon: the same object on every call (as
        executorch.runtime), so its state (inputs, mutable buffers) is shared by its
        callers; new_method() makes another. Raises NotFound (a KeyError) for a method
        the program lacks."""
        with self._lock:
            method = self._methods.get(name)
            if method is None:
                method = self.new_method(name)
                if self._etdump:
                    method.start_profile(_ETDUMP_EXECUTES)
                self._methods[name] = method
            return method

    def new_method(self, name: str = "forward") -> Method:
        """A new instance of the method in the daemon, with its own state. Its results
        are torch tensors when torch was imported before this call (never imported here)."""
        return self._new_method(name, sys.modules.get("torch"))  # never importing torch

    def _new_method(self, name: str, torch_module: Any) -> Method:
        """A new instance whose results are torch tensors when `torch_module` is given."""
        self._check_name(name)
        return Method(self._native.load_method(name), torch_module)

    def has_etdump(self) -> bool:
        """Whether the program was loaded with enable_etdump=True."""
        return self._etdump

    def write_etdump_result_to_file(self, etdump_path: Any, debug_buffer_path: Any = None) -> None:
        """Writes the profile of every execute of this program's methods (since loading,
        or since the last write) as an ETDump: executorch.devtools.Inspector reads it.
        The daemon records times, not intermediate outputs: a `debug_buffer_path` is
        written empty. Raises InvalidArgument when the program was not loaded with
        enable_etdump=True or no method was loaded; StateLost when the daemon restarted
        since (the profile was lost with it)."""
        if not self._etdump:
            raise _native.InvalidArgument("write_etdump_result_to_file: the program was loaded "
                                          "without enable_etdump=True, so nothing was recorded")
        with self._lock:
            write_etdump(list(self._methods.values()), etdump_path, debug_buffer_path)

    @property
    def bundled_tests(self) -> dict:
        """A bundled program's (.bpte) test cases: {method: number of cases}, in the
        file's order; empty for a plain .pte."""
        return dict(self._native.bundled_tests)

    def verify(self, rtol: Optional[float] = None, atol: Optional[float] = None,
               method: Optional[str] = None) -> VerifyReport:
        """Runs a bundled program's test cases in the daemon (each tested method on a
        fresh instance; methods loaded here are untouched) and compares every output
        with the one expected: an element passes when |got - expected| <= atol + rtol *
        |expected| (None: 1e-5 and 1e-8, ExecuTorch's defaults). `method`: only its
        cases. A failing case is reported, not raised. Raises InvalidArgument for a
        program without test cases (a plain .pte) or a negative tolerance, NotFound for
        a method without test cases (naming those that have some)."""
        return VerifyReport._from_native(self._native.verify(rtol, atol, method or ""))


class BackendRegistry:
    """The backends the daemon runs delegated programs with (executorch.runtime's)."""

    def __init__(self, native: Any):
        self._native = native

    @property
    def registered_backend_names(self) -> List[str]:
        return list(self._native.registry()["backends"])

    def is_available(self, backend_name: str) -> bool:
        return backend_name in self._native.registry()["backends"]


class OperatorRegistry:
    """The operators the daemon has kernels for, as "aten::add.out"."""

    def __init__(self, native: Any):
        self._native = native

    @property
    def operator_names(self) -> Set[str]:
        return set(self._native.registry()["operators"])


class Runtime:
    """A connection to et-serverd (a session), standing in for executorch.runtime's
    Runtime. Shared by threads."""

    _instances: dict = {}
    _lock = threading.Lock()

    @classmethod
    def get(cls, address: Optional[str] = None, *, spawn: Optional[bool] = None,
            idle_exit: Optional[float] = None) -> "Runtime":
        """The runtime for the daemon at `address` (a socket path, or "unix:PATH"), else
        at $ETSERVER_SOCKET, else at the default socket. One per address per process.
        With no daemon there, one is started (see __init__'s `spawn`)."""
        socket = _socket_for(address)
        with cls._lock:
            runtime = cls._instances.get(socket)
            if runtime is None:
                runtime = cls(socket, spawn=spawn, idle_exit=idle_exit)
                cls._instances[socket] = runtime
            return runtime

    def __init__(self, address: Optional[str] = None, *, client_name: Optional[str] = None,
                 reconnect_timeout: float = 5.0, transport: Optional[str] = None,
                 spawn: Optional[bool] = None, idle_exit: Optional[float] = None):
        """`transport`: "fast" (the default: a shared-memory channel per method, gRPC when
        the daemon has none) or "grpc" (every call over gRPC); None reads
        $ETSERVER_TRANSPORT.

        `spawn`: when no daemon answers, start one (`et-serverd --detach --idle-exit
        idle_exit`, its log at SOCKET.log) and connect to it; processes starting at once
        share one daemon. None reads $ETSERVER_SPAWN ("0" turns it off), else True. The
        binary: $ETSERVER_BIN, else the one this package ships, else et-serverd on PATH.
        `idle_exit` (seconds): None reads $ETSERVER_IDLE_EXIT, else 300."""
        if idle_exit is None:
            idle_exit = float(os.environ.get("ETSERVER_IDLE_EXIT") or 300)
        name = client_name or f"python:{os.getpid()}:{os.path.basename(sys.argv[0] or 'python')}"
        if transport not in (None, "fast", "grpc"):
            raise ValueError(f"transport {transport!r} is not one of 'fast', 'grpc'")
        self._native = _native.NativeClient(_socket_for(address), name,
                                            int(reconnect_timeout * 1000), transport or "",
                                            spawn, _bundled_serverd(), math.ceil(idle_exit))
        self.backend_registry = BackendRegistry(self._native)
        self.operator_registry = OperatorRegistry(self._native)

    def load_program(self, data: Any, *, verification: Verification = Verification.InternalConsistency,
                     enable_etdump: bool = False, debug_buffer_size: int = 0,
                     data_path: Any = None, data_buffer: Any = None) -> Program:
        """Loads a program from a path (str or os.PathLike), bytes, bytearray,
        memoryview or a binary file object (TypeError for anything else). Only its
        SHA-256 is sent when the daemon has it already. `data_path`: the external data
        file (.ptd) the program was exported with, for programs that keep their weights
        outside the .pte. `enable_etdump`: profile every execute of its methods, for
        Program.write_etdump_result_to_file(). `verification` and `debug_buffer_size`
        are accepted as executorch.runtime takes them: the daemon verifies every program
        fully, and records times, not intermediate outputs. `data_buffer` (etclient's):
        the .ptd's bytes instead of a data_path."""
        if not isinstance(verification, Verification):
            raise TypeError(f"verification: expected an etclient.Verification, not "
                            f"{type(verification).__name__}")
        if operator.index(debug_buffer_size) < 0:
            raise ValueError(f"debug_buffer_size: {debug_buffer_size} is negative")
        ptd = "" if data_path is None else os.fspath(data_path)
        if data_path is not None and not ptd:
            raise ValueError("data_path: an empty path; pass the .ptd file or None")
        etdump = bool(enable_etdump)
        if data_buffer is not None and data_path is not None:
            raise ValueError("give data_path or data_buffer, not both")
        if isinstance(data, (str, os.PathLike)) and data_buffer is None:
            return Program(self._native.load_path(os.fspath(data), ptd), etdump)
        if isinstance(data, (str, os.PathLike)):
            with open(os.fspath(data), "rb") as f:
                data = f.read()
        if hasattr(data, "read"):
            data = data.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"Expected data to be bytes, bytearray, a path to a .pte file, or a "
                            f"file-like object, but got {type(data).__name__}.")
        return Program(self._native.load_bytes(data, ptd, data_buffer), etdump)

    def server_status(self) -> dict:
        """What the daemon says of itself: version, protocol_version, uptime_seconds,
        sessions, programs, method_instances, executes, program_loads,
        program_loads_shared (loads it answered from a program it had loaded already),
        idle_exit_seconds, resident_bytes, threads."""
        return self._native.server_status()

    def empty(self, shape: Sequence[int], dtype: Any = "float32") -> _native.Tensor:
        """A writable tensor in shared memory (row-major), for zero-copy inputs. `dtype`:
        a name ("float32", "bfloat16", ...) or a numpy or torch dtype."""
        name = dtype if isinstance(dtype, str) else (
            getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype))
        return self._native.empty([int(s) for s in shape], str(name))
