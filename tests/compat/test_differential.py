"""Differential test: the same calls, good and bad, through ExecuTorch's own Python APIs
(executorch.runtime, executorch.extension.pybindings.portable_lib) and through etclient's
drop-in copies (etclient.runtime, etclient.portable_lib), on the fixtures in tests/models/.

Each case is a function of an API side, run on ExecuTorch, then on etclient. When
ExecuTorch returns, etclient must return the same: torch tensors of the same dtype, shape,
strides and values (within the tolerance of the fixture the case id names), builtins
equal and of the same type, anything else (MethodMeta, TensorInfo) with the same str().
When ExecuTorch raises, etclient must raise an instance of ExecuTorch's class, or at least
of the same builtin base among KeyError, IndexError, TypeError, ValueError, RuntimeError
(the property "relation", e.g. in --junitxml, says which). What differs by design is an
xfail(strict=True) case naming the difference.

    .venv-export/bin/python -m pytest tests/compat/test_differential.py -q

etclient spawns a private et-serverd (socket in a temporary directory, ETSERVER_BIN from
the build), stopped when the module ends.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("executorch.runtime",
                    reason="executorch is not importable: run in .venv-export")
import torch  # noqa: E402  (before etclient loads a method: results are torch tensors)
import executorch.runtime as et_runtime  # noqa: E402
from executorch.extension.pybindings import portable_lib as et_portable_lib  # noqa: E402

import etclient.runtime as ec_runtime  # noqa: E402
from etclient import portable_lib as ec_portable_lib  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "tests" / "models"
SERVERD = ROOT / "build" / "server" / "et-serverd"
MANIFEST = {m["name"]: m for m in json.loads((MODELS / "manifest.json").read_text())["models"]}
BASES = (KeyError, IndexError, TypeError, ValueError, RuntimeError)  # narrowest first


# --- the fixtures' inputs ---------------------------------------------------------------

def _method_entry(model: str, method: str) -> dict:
    return next(m for m in MANIFEST[model]["methods"] if m["name"] == method)


def _tensor(rel: str, dtype: str, dim_order: list) -> torch.Tensor:
    a = np.load(MODELS / rel)
    t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if dtype == "bfloat16" \
        else torch.from_numpy(a)
    return t.contiguous(memory_format=torch.channels_last) if dim_order == [0, 2, 3, 1] else t


def inp(model: str, method: str = "forward", call: int = 0) -> list:
    """Call `call`'s inputs (0: the first; then the manifest's subsequent_calls)."""
    m = _method_entry(model, method)
    files = m["inputs"] if call == 0 else m["subsequent_calls"][call - 1]["inputs"]
    return [_tensor(f, d, o) for f, d, o in zip(files, m["input_dtypes"], m["input_dim_orders"])]


def calls(model: str, method: str = "forward") -> range:
    return range(1 + len(_method_entry(model, method).get("subsequent_calls", [])))


# --- the two sides ----------------------------------------------------------------------

class Side:
    """One implementation of both APIs. What the helpers load (and the buffers they hand
    over) is kept alive for the module: ExecuTorch's methods read their program's memory
    in place without holding the program."""

    def __init__(self, name: str, runtime, pl):
        self.name, self.runtime, self.pl, self._keep = name, runtime, pl, []

    @property
    def rt(self):
        return self.runtime.Runtime.get()

    def keep(self, obj):
        self._keep.append(obj)
        return obj

    def program(self, model: str, **kw):
        return self.keep(self.rt.load_program(MODELS / MANIFEST[model]["pte"], **kw))

    def method(self, model: str, name: str = "forward", **kw):
        return self.program(model, **kw).load_method(name)

    def data(self, filename: str) -> bytes:
        return self.keep((MODELS / filename).read_bytes())

    def module(self, model: str, with_ptd: bool = False):
        ptd = self.data(MANIFEST[model]["ptd"]) if with_ptd else None
        return self.keep(self.pl._load_for_executorch_from_buffer(
            self.data(MANIFEST[model]["pte"]), ptd))

    def pl_program(self, model: str):
        return self.keep(self.pl._load_program_from_buffer(self.data(MANIFEST[model]["pte"])))

    def pl_method(self, model: str):
        return self.pl_program(model).load_method("forward")

    def bundle(self, model: str):
        return self.keep(self.pl._load_bundled_program_from_buffer(
            self.data(MANIFEST[model]["pte"])))

    def bundled_module(self, model: str):
        return self.keep(self.pl._load_for_executorch_from_bundled_program(self.bundle(model)))

    def verify(self, model: str, method: str, index: int, **tolerances):
        """ExecuTorch 1.5.1's bundled check: load case `index`'s inputs, run, compare."""
        return self.bundle(model).verify_result_with_bundled_expected_output(
            method, index, **tolerances)


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _daemon_pids(sock: str) -> list:
    """The processes whose command line names the socket (the daemon etclient spawned)."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()
            and sock.encode() in _cmdline(p)]


@pytest.fixture(scope="module")
def sides():
    tmp = tempfile.mkdtemp(prefix="et-differential-")
    sock = os.path.join(tmp, "et.sock")
    env = {"ETSERVER_SOCKET": sock, "ETSERVER_BIN": str(SERVERD), "ETSERVER_IDLE_EXIT": "60"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # before etclient's first Runtime.get(): it spawns the daemon
    try:
        yield (Side("ExecuTorch", et_runtime, et_portable_lib),
               Side("etclient", ec_runtime, ec_portable_lib))
    finally:
        pids = _daemon_pids(sock)  # the daemon detached itself: not our child
        for pid in pids:
            os.kill(pid, signal.SIGTERM)
        for _ in range(200):
            if not any(os.path.exists(f"/proc/{p}") for p in pids):
                break
            time.sleep(0.1)
        for pid in filter(lambda p: os.path.exists(f"/proc/{p}"), pids):
            os.kill(pid, signal.SIGKILL)
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        shutil.rmtree(tmp, ignore_errors=True)


# --- comparing --------------------------------------------------------------------------

def same(a, b, tol: float, where: str = "result") -> None:
    """Asserts etclient's `b` is what ExecuTorch's `a` is."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), f"{where}: a {type(b).__name__}, not a torch.Tensor"
        assert (b.dtype, tuple(b.shape)) == (a.dtype, tuple(a.shape)), \
            f"{where}: {b.dtype} {tuple(b.shape)}, ExecuTorch {a.dtype} {tuple(a.shape)}"
        big = [i for i, n in enumerate(a.shape) if n > 1]  # strides of size-1 dims are free
        assert [b.stride(i) for i in big] == [a.stride(i) for i in big], \
            f"{where}: strides {b.stride()}, ExecuTorch {a.stride()}"
        torch.testing.assert_close(b, a, rtol=tol, atol=tol, msg=lambda m: f"{where}: {m}")
    elif isinstance(a, (list, tuple, set, dict, str, int, float, bool, type(None))):
        assert type(b) is type(a), f"{where}: a {type(b).__name__}, ExecuTorch a {type(a).__name__}"
        if isinstance(a, (list, tuple)):
            assert len(b) == len(a), f"{where}: {len(b)} items, ExecuTorch {len(a)}: {b!r} vs {a!r}"
            for i, (x, y) in enumerate(zip(a, b)):
                same(x, y, tol, f"{where}[{i}]")
        elif isinstance(a, set):
            assert b == a, f"{where}: only etclient {sorted(b - a)}, only ET {sorted(a - b)}"
        else:
            assert b == a, f"{where}: {b!r}, ExecuTorch {a!r}"
    else:  # MethodMeta, TensorInfo, ...
        assert str(b) == str(a), f"{where}: str() {str(b)!r}, ExecuTorch {str(a)!r}"


def relation(et_exc: BaseException, ec_exc: BaseException):
    if isinstance(ec_exc, type(et_exc)):
        return f"isinstance of {type(et_exc).__name__}"
    base = next((b for b in BASES if isinstance(et_exc, b)), None)
    return f"same base {base.__name__}" if base and isinstance(ec_exc, base) else None


def run(fn, side: Side):
    try:
        return fn(side), None
    except Exception as e:  # noqa: BLE001  (what is raised is the result)
        return None, e


def _exc(e: BaseException) -> str:
    return f"{type(e).__module__}.{type(e).__qualname__}: {' '.join(str(e).split())[:200]}"


# --- helpers the cases use --------------------------------------------------------------

def describe(meta) -> tuple:
    """Everything MethodMeta says, as values (TensorInfo by str() and by its methods)."""
    def info(t):
        return (str(t), t.sizes(), t.dtype(), t.nbytes(), t.is_memory_planned())
    return (str(meta), meta.name(), meta.num_inputs(), meta.num_outputs(), meta.num_attributes(),
            [info(meta.input_tensor_meta(i)) for i in range(meta.num_inputs())],
            [info(meta.output_tensor_meta(i)) for i in range(meta.num_outputs())],
            [info(meta.attribute_tensor_meta(i)) for i in range(meta.num_attributes())])


def each_call(run_one, model: str, method: str = "forward") -> list:
    """The outputs of every call in the manifest, in order, through `run_one(inputs)`."""
    return [[t.clone() for t in run_one(inp(model, method, c))] for c in calls(model, method)]


def dynamic_calls(s: Side) -> list:
    m = s.method("dynamic_batch")
    outs = each_call(m.execute, "dynamic_batch")
    return outs + [m.execute([torch.ones(0, 16)]), m.execute([torch.full((8, 16), 0.5)])]


def attribute_over_calls(s: Side) -> list:
    m = s.pl_program("mutable_buffer_named").load_method("forward")
    seen = [m.get_attribute("total").clone()]
    for c in calls("mutable_buffer_named"):
        seen += [m.call(inp("mutable_buffer_named", call=c))[0].clone(),
                 m.get_attribute("total").clone()]
    return seen


def later_call_changes(get, call) -> bool:
    """Whether a tensor got from `get()` changes when `call()` runs after (aliasing)."""
    t = get()
    before = t.clone()
    call()
    return not torch.equal(t, before)


def etdump_sizes(s: Side) -> tuple:
    with tempfile.TemporaryDirectory() as d:
        p = s.program("add", enable_etdump=True, debug_buffer_size=4096)
        p.load_method("forward").execute(inp("add"))
        p.write_etdump_result_to_file(f"{d}/run.etdp", f"{d}/debug.bin")
        return os.path.getsize(f"{d}/run.etdp") > 0, os.path.getsize(f"{d}/debug.bin") > 0


def bad_inputs() -> dict:
    """Bad input lists for add.pte (two float32 tensors of shape (2, 3))."""
    good = inp("add")
    x = good[0]
    return {
        "too-few-inputs": good[:-1],
        "too-many-inputs": good + [x],
        "float64-input": [x.double()] + good[1:],
        "int32-input": [x.int()] + good[1:],
        "wrong-shape": [torch.ones(3, 3)] + good[1:],
        "list-as-one-input": [list(good)] + good[1:],
        "meta-device-input": [torch.empty(x.shape, device="meta")] + good[1:],
        "none-input": [None] + good[1:],
        "float-for-tensor": [1.0] + good[1:],
        "non-contiguous-input": [torch.ones(x.shape[::-1]).t()] + good[1:],
    }


GARBAGE = b"this is not an ExecuTorch program" * 4
RUN_MODELS = ["add", "mlp", "channels_last", "bfloat16", "dynamic_batch", "cnn_xnnpack",
              "mobilenet_v2_xnnpack"]
PTD = {"data_path": MODELS / "cnn_ptd.ptd"}
FRESH = "by design: etclient results are always fresh memory, whatever clone_outputs says"

# --- executorch.runtime vs etclient.runtime: case id -> call(side) ----------------------

RUNTIME = {f"execute/{m}": (lambda s, m=m: s.method(m).execute(inp(m))) for m in RUN_MODELS}
for _m in RUN_MODELS + ["cnn_ptd", "mutable_buffer_named"]:
    RUNTIME[f"metadata/{_m}"] = lambda s, m=_m: describe(s.program(m).metadata("forward"))
    RUNTIME[f"method.metadata/{_m}"] = lambda s, m=_m, kw=(PTD if _m == "cnn_ptd" else {}): \
        describe(s.method(m, **kw).metadata)
RUNTIME.update({
    "execute/cnn_ptd+data_path": lambda s: s.method("cnn_ptd", **PTD).execute(inp("cnn_ptd")),
    "state-across-calls/mutable_buffer_named":
        lambda s: each_call(s.method("mutable_buffer_named").execute, "mutable_buffer_named"),
    "dynamic-batch-calls/dynamic_batch": dynamic_calls,
    "execute-tuple": lambda s: s.method("add").execute(tuple(inp("add"))),
    "verification-minimal": lambda s: s.method(
        "add", verification=s.runtime.Verification.Minimal).execute(inp("add")),
    "load-bytes": lambda s: s.keep(s.rt.load_program(
        (MODELS / "add.pte").read_bytes())).load_method("forward").execute(inp("add")),
    "load-bytearray":
        lambda s: s.rt.load_program(bytearray((MODELS / "mlp.pte").read_bytes())).method_names,
    "load-file-object": lambda s: s.keep(s.rt.load_program(io.BytesIO(
        (MODELS / "add.pte").read_bytes()))).load_method("forward").execute(inp("add")),
    "load-str-path": lambda s: s.rt.load_program(str(MODELS / "add.pte")).method_names,
    "load_method-same-object": lambda s: (
        lambda p: p.load_method("forward") is p.load_method("forward"))(s.program("add")),
    "backend_registry.registered_backend_names":
        lambda s: sorted(s.rt.backend_registry.registered_backend_names),
    "backend_registry.is_available/XnnpackBackend":
        lambda s: s.rt.backend_registry.is_available("XnnpackBackend"),
    "backend_registry.is_available/unknown":
        lambda s: s.rt.backend_registry.is_available("NoSuchBackend"),
    "operator_registry.operator_names": lambda s: s.rt.operator_registry.operator_names,
    "etdump-written": lambda s: etdump_sizes(s)[0],
    "etdump-debug-buffer-has-intermediate-outputs": lambda s: etdump_sizes(s)[1],
    "ptd-missing/load_program": lambda s: s.program("cnn_ptd").method_names,
    # bad calls
    "bad/ptd-missing/load_method": lambda s: s.program("cnn_ptd").load_method("forward"),
    "bad/load_method-unknown": lambda s: s.program("add").load_method("nope"),
    "bad/metadata-unknown": lambda s: s.program("add").metadata("nope"),
    "execute-bare-tensor-not-a-list": lambda s: s.method("mlp").execute(inp("mlp")[0]),
    "bad/dynamic-batch-above-bound":
        lambda s: s.method("dynamic_batch").execute([torch.ones(9, 16)]),
    "bad/dynamic-wrong-inner-dim": lambda s: s.method("dynamic_batch").execute([torch.ones(3, 17)]),
    "bad/attribute_tensor_meta(1)/mutable_buffer_named":
        lambda s: s.program("mutable_buffer_named").metadata("forward").attribute_tensor_meta(1),
    "bad/load_program-garbage": lambda s: s.rt.load_program(GARBAGE),
    "bad/load_program-2-bytes": lambda s: s.rt.load_program(b"xx"),
    "bad/load_program-int": lambda s: s.rt.load_program(5),
    "bad/load_program-missing-path": lambda s: s.rt.load_program("/nonexistent/x.pte"),
    "bad/load_program-bundled-bpte": lambda s: s.program("multi_bundled").method_names,
    "bad/verification-not-an-enum":
        lambda s: s.program("add", verification="Minimal").method_names,
})
for _k in bad_inputs():
    RUNTIME[f"bad/{_k}"] = lambda s, k=_k: s.method("add").execute(bad_inputs()[k])
for _what, _i in [("input", 5), ("input", -1), ("output", 1), ("attribute", 0)]:
    RUNTIME[f"bad/{_what}_tensor_meta({_i})/add"] = lambda s, w=_what, i=_i: \
        getattr(s.program("add").metadata("forward"), f"{w}_tensor_meta")(i)

# --- portable_lib vs etclient.portable_lib: case id -> call(side) -----------------------

PORTABLE_LIB = {f"forward/{m}": (lambda s, m=m: s.module(m).forward(inp(m)))
                for m in ["add", "mlp", "bfloat16", "cnn_xnnpack"]}
PORTABLE_LIB.update({
    "_load_for_executorch/path":
        lambda s: s.keep(s.pl._load_for_executorch(str(MODELS / "add.pte"))).forward(inp("add")),
    "__call__": lambda s: s.module("add")(inp("add")),
    "run_method": lambda s: s.module("mlp").run_method("forward", inp("mlp")),
    "forward-tuple": lambda s: s.module("add").forward(tuple(inp("add"))),
    "forward-clone_outputs-False-values": lambda s: (lambda m: [
        t.clone() for t in m.forward(inp("add"), clone_outputs=False)])(s.module("add")),
    "state-across-calls/mutable_buffer_named":
        lambda s: each_call(s.module("mutable_buffer_named").forward, "mutable_buffer_named"),
    "dynamic-batch-calls/dynamic_batch":
        lambda s: each_call(s.module("dynamic_batch").forward, "dynamic_batch"),
    "from_buffer+data_map_buffer/cnn_ptd":
        lambda s: s.module("cnn_ptd", with_ptd=True).forward(inp("cnn_ptd")),
    "_load_for_executorch+data_path/cnn_ptd": lambda s: s.keep(s.pl._load_for_executorch(
        str(MODELS / "cnn_ptd.pte"), str(MODELS / "cnn_ptd.ptd"))).forward(inp("cnn_ptd")),
    "ptd-missing/load+method_meta": lambda s: describe(s.module("cnn_ptd").method_meta("forward")),
    "method_names": lambda s: s.module("mlp").method_names(),
    "method_meta/mutable_buffer_named":
        lambda s: describe(s.module("mutable_buffer_named").method_meta("forward")),
    "plan_execute-after-forward": lambda s: (
        lambda m: (m.forward(inp("add")), m.plan_execute("forward")))(s.module("add")),
    "program.num_methods": lambda s: s.pl_program("mlp").num_methods(),
    "program.get_method_name": lambda s: s.pl_program("mlp").get_method_name(0),
    "program.method_meta": lambda s: describe(s.pl_program("add").method_meta("forward")),
    "method.call": lambda s: s.pl_method("add").call(inp("add")),
    "method.__call__": lambda s: s.pl_method("mlp")(inp("mlp")),
    "method.set_inputs+execute+get_outputs": lambda s: (lambda m: (
        m.set_inputs(inp("add")), m.execute(), m.get_outputs())[2])(s.pl_method("add")),
    "method.method_meta": lambda s: describe(s.pl_method("mlp").method_meta()),
    "method.get_attribute-over-calls": attribute_over_calls,
    "bundled/method_names": lambda s: sorted(s.bundled_module("multi_bundled").method_names()),
    "bundled/forward": lambda s: s.bundled_module("multi_bundled").forward(inp("multi_bundled")),
    "bundled/run_method-scale": lambda s: s.bundled_module("multi_bundled").run_method(
        "scale", inp("multi_bundled", "scale")),
    "bundled/method_meta-scale":
        lambda s: describe(s.bundled_module("multi_bundled").method_meta("scale")),
    # ExecuTorch 1.5.1 checks bundled cases through the bundle (BundledModule), not the module.
    "bundled/module-has-load_bundled_input+verify": lambda s: [
        hasattr(s.pl.ExecuTorchModule, n)
        for n in ("load_bundled_input", "verify_result_with_bundled_expected_output")],
    "bundled/verify/forward-0": lambda s: s.verify("multi_bundled", "forward", 0),
    "bundled/verify/forward-2": lambda s: s.verify("multi_bundled", "forward", 2),
    "bundled/verify/scale-1": lambda s: s.verify("multi_bundled", "scale", 1),
    "bundled/verify/wrong-bundle-right-case": lambda s: s.verify("mlp_bundled_wrong", "forward", 0),
    "bundled/verify/wrong-case-loose-atol":
        lambda s: s.verify("mlp_bundled_wrong", "forward", 1, atol=0.02),
    "_get_operator_names": lambda s: set(s.pl._get_operator_names()),
    "_get_registered_backend_names": lambda s: sorted(s.pl._get_registered_backend_names()),
    "_is_available/XnnpackBackend": lambda s: s.pl._is_available("XnnpackBackend"),
    "_is_available/unknown": lambda s: s.pl._is_available("NoSuchBackend"),
    # differences by design (XFAIL below)
    "clone_outputs-False-aliases-next-call": lambda s: (lambda m: later_call_changes(
        lambda: m.forward(inp("add"), clone_outputs=False)[0],
        lambda: m.forward([t * 2 for t in inp("add")], clone_outputs=False)))(s.module("add")),
    "get_outputs-False-aliases-next-call": lambda s: (lambda m: later_call_changes(
        lambda: (m.set_inputs(inp("add")), m.execute(), m.get_outputs(clone_outputs=False))[2][0],
        lambda: m.call([t * 2 for t in inp("add")])))(s.pl_method("add")),
    "get_attribute-aliases-state": lambda s: (lambda m: later_call_changes(
        lambda: m.get_attribute("total"), lambda: m.call(inp("mutable_buffer_named"))))(
        s.pl_method("mutable_buffer_named")),
    "_unsafe_reset_threadpool":
        lambda s: s.pl._unsafe_reset_threadpool(s.pl._threadpool_get_thread_count()),
    # bad calls
    "bad/run_method-unknown": lambda s: s.module("add").run_method("nope", inp("add")),
    "bad/method_meta-unknown": lambda s: s.module("add").method_meta("nope"),
    "bad/plan_execute-unknown": lambda s: s.module("add").plan_execute("nope"),
    "bad/forward-bare-tensor": lambda s: s.module("mlp").forward(inp("mlp")[0]),
    "bad/program.get_method_name(1)": lambda s: s.pl_program("add").get_method_name(1),
    "bad/program.get_method_name(-1)": lambda s: s.pl_program("add").get_method_name(-1),
    "bad/program.load_method-unknown": lambda s: s.pl_program("add").load_method("nope"),
    "bad/program.method_meta-unknown": lambda s: s.pl_program("add").method_meta("nope"),
    "bad/method.set_inputs-too-few": lambda s: s.pl_method("add").set_inputs(inp("add")[:1]),
    "bad/method.call-float64": lambda s: s.pl_method("add").call(bad_inputs()["float64-input"]),
    "bad/method.get_attribute-unknown":
        lambda s: s.pl_method("mutable_buffer_named").get_attribute("nope"),
    "bad/_load_program_from_buffer-garbage": lambda s: s.pl._load_program_from_buffer(GARBAGE),
    "bad/_load_program_from_buffer-int": lambda s: s.pl._load_program_from_buffer(5),
    "bad/_load_for_executorch-missing-path":
        lambda s: s.pl._load_for_executorch("/nonexistent/x.pte"),
    "bad/_load_for_executorch_from_buffer-int": lambda s: s.pl._load_for_executorch_from_buffer(5),
    # ExecuTorch loads a buffer's program lazily: the module is made, its calls raise.
    "_load_for_executorch_from_buffer-garbage-makes-module":
        lambda s: type(s.pl._load_for_executorch_from_buffer(GARBAGE)).__name__,
    "bad/garbage-module.forward":
        lambda s: s.pl._load_for_executorch_from_buffer(GARBAGE).forward(inp("add")),
    "bad/ptd-missing/forward": lambda s: s.module("cnn_ptd").forward(inp("cnn_ptd")),
    "bad/bundled/verify-index-out-of-range": lambda s: s.verify("multi_bundled", "forward", 3),
    "bad/bundled/verify-index-negative": lambda s: s.verify("multi_bundled", "forward", -1),
    "bad/bundled/verify-unknown-method": lambda s: s.verify("multi_bundled", "nope", 0),
    "bad/bundled/verify-wrong-case": lambda s: s.verify("mlp_bundled_wrong", "forward", 1),
    "bad/_load_bundled_program_from_buffer-int":
        lambda s: s.pl._load_bundled_program_from_buffer(5),
    "bad/_load_for_executorch_from_bundled_program-bytes":
        lambda s: s.pl._load_for_executorch_from_bundled_program(s.data("multi_bundled.bpte")),
})
for _k in bad_inputs():
    PORTABLE_LIB[f"bad/forward-{_k}"] = lambda s, k=_k: s.module("add").forward(bad_inputs()[k])

REGISTRY = ("different builds: the daemon registers XnnpackBackend only (no OpenVINO or QNN) "
            "and more operators than ExecuTorch's wheel's portable runtime (ExecuTorch's "
            "quantized and LLM custom-op libraries, _embedding_bag, sort, squeeze_copy); it "
            "lacks none of the wheel's")
LAYOUT = ("by design: an input in another dim order is copied into the exported layout "
          "(the RFC's and the seeds' portable_lib rule); ExecuTorch 1.5.1 refuses it")
XFAIL = {
    "runtime/etdump-debug-buffer-has-intermediate-outputs":
        "by design: the daemon records no intermediate outputs (its debug buffer file is empty)",
    "portable_lib/clone_outputs-False-aliases-next-call": FRESH,
    "portable_lib/get_outputs-False-aliases-next-call": FRESH,
    "portable_lib/get_attribute-aliases-state":
        "by design: etclient's get_attribute returns a copy of the state",
    "portable_lib/_unsafe_reset_threadpool":
        "by design: the thread pool is the daemon's; etclient refuses to reset it",
    "runtime/execute/channels_last":
        "ExecuTorch 1.5.1's portable batch norm refuses a channels-last input (its bug: "
        "the manifest records it); etclient matches eager",
    "runtime/backend_registry.registered_backend_names": REGISTRY,
    "runtime/operator_registry.operator_names": REGISTRY,
    "portable_lib/_get_operator_names": REGISTRY,
    "portable_lib/_get_registered_backend_names": REGISTRY,
    "runtime/bad/load_program-bundled-bpte":
        "by design: a .bpte loads anywhere a .pte does, as the program it carries (issue 22)",
    "runtime/bad/non-contiguous-input": LAYOUT,
    "portable_lib/bad/forward-non-contiguous-input": LAYOUT,
    "portable_lib/bad/forward-bare-tensor":
        "by design: a single input may be passed directly (the seeds' portable_lib README)",
    "portable_lib/bundled/module-has-load_bundled_input+verify":
        "by design: etclient's ExecuTorchModule has load_bundled_input and "
        "verify_result_with_bundled_expected_output, as portable_lib's .pyi declares; "
        "ExecuTorch 1.5.1's module lacks them",
}


def tolerance(case_id: str) -> float:
    """The largest atol of the fixtures the case id names (1e-5 when it names none)."""
    named = [MANIFEST[p]["methods"][0]["atol"] for p in case_id.split("/") if p in MANIFEST]
    return max(named + [1e-5])


CASES = [pytest.param(fn, id=f"{api}/{name}", marks=[pytest.mark.xfail(
             strict=True, reason=XFAIL[f"{api}/{name}"])] if f"{api}/{name}" in XFAIL else [])
         for api, table in (("runtime", RUNTIME), ("portable_lib", PORTABLE_LIB))
         for name, fn in table.items()]


@pytest.mark.parametrize("call", CASES)
def test_same(call, sides, request, record_property):
    (a, ea), (b, eb) = run(call, sides[0]), run(call, sides[1])
    if ea is None:
        assert eb is None, f"ExecuTorch returned {a!r:.300}; etclient raised {_exc(eb)}"
        same(a, b, tolerance(request.node.callspec.id))
        record_property("relation", "same result")
    else:
        assert eb is not None, f"ExecuTorch raised {_exc(ea)}; etclient returned {b!r:.300}"
        rel = relation(ea, eb)
        record_property("relation", rel or "different")
        assert rel, f"ExecuTorch raised {_exc(ea)}; etclient raised {_exc(eb)}"
