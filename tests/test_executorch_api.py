"""etclient as a drop-in for ExecuTorch's two Python APIs, without torch: the surface of
executorch.runtime (etclient / etclient.runtime) and of
executorch.extension.pybindings.portable_lib (etclient.portable_lib) with ExecuTorch's
names, return types and exception classes, and the zero-change mode
(`python -m etclient run-as-executorch`, ETCLIENT_AS_EXECUTORCH=1) in a venv that has
neither torch nor ExecuTorch. ExecuTorch's own test files run against etclient in
tests/compat/ (they need torch to export their programs)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import etclient  # noqa: E402
from conftest import MODELS  # noqa: E402
from test_etdump import decode  # noqa: E402

ADD, MLP, NAMED = MODELS / "add.pte", MODELS / "mlp.pte", MODELS / "mutable_buffer_named.pte"
MULTI, WRONG = MODELS / "multi_bundled.bpte", MODELS / "mlp_bundled_wrong.bpte"
CNN_PTD, CNN_DATA = MODELS / "cnn_ptd.pte", MODELS / "cnn_ptd.ptd"


def npy(path: str) -> np.ndarray:
    return np.load(MODELS / path)


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    saved = os.environ.get("ETSERVER_SOCKET")
    os.environ["ETSERVER_SOCKET"] = daemon_socket  # Runtime.get() and portable_lib use it
    yield etclient.Runtime.get()
    if saved is None:
        os.environ.pop("ETSERVER_SOCKET", None)
    else:
        os.environ["ETSERVER_SOCKET"] = saved


@pytest.fixture(scope="module")
def portable_lib(runtime):
    # This venv has no torch, so results are ExecuTorchResult (tests/torch_paths has the
    # torch case).
    from etclient import portable_lib
    assert portable_lib._MODE == "executorch"
    return portable_lib


# ---- executorch.runtime ---------------------------------------------------------------


def test_runtime_is_one_per_address_and_names_its_registries(runtime):
    assert etclient.Runtime.get() is runtime
    from etclient.runtime import Runtime, Verification
    assert Runtime is etclient.Runtime and Verification.Minimal != Verification.InternalConsistency
    assert "aten::add.out" in runtime.operator_registry.operator_names
    assert isinstance(runtime.operator_registry.operator_names, set)
    assert "XnnpackBackend" in runtime.backend_registry.registered_backend_names
    assert runtime.backend_registry.is_available(backend_name="XnnpackBackend")
    assert not runtime.backend_registry.is_available("NonExistBackend")


def test_load_program_takes_what_executorch_takes(runtime):
    data = ADD.read_bytes()
    a, b = npy("add/forward.in0.npy"), npy("add/forward.in1.npy")
    for source in (str(ADD), ADD, data, bytearray(data), memoryview(data), io.BytesIO(data)):
        program = runtime.load_program(source, verification=etclient.Verification.Minimal)
        out = program.load_method("forward").execute((a, b))
        np.testing.assert_allclose(np.asarray(out[0]), a + b, rtol=1e-6)
    with pytest.raises(TypeError, match="but got int"):
        runtime.load_program(3)
    with pytest.raises(TypeError, match="verification"):
        runtime.load_program(data, verification="Minimal")


def test_load_method_returns_the_same_method_and_unknown_names_raise_key_error(runtime):
    program = runtime.load_program(NAMED)
    assert program.load_method("forward") is program.load_method("forward")
    assert program.new_method("forward") is not program.load_method("forward")
    for cls in (KeyError, RuntimeError, etclient.NotFound):
        with pytest.raises(cls, match="no method 'nope'.*forward"):
            program.load_method("nope")
        with pytest.raises(cls):
            program.metadata("nope")
    try:
        program.load_method("nope")
    except KeyError as e:
        assert str(e).startswith("the program has no method"), "str() is the message, unquoted"


def test_method_meta_reads_as_executorchs(runtime):
    meta = runtime.load_program(ADD).metadata("forward")
    info = "TensorInfo(sizes=[2, 3], dtype=Float, is_memory_planned=True, nbytes=24)"
    assert str(meta) == (f"MethodMeta(name='forward', num_inputs=2, input_tensor_meta=['{info}', "
                         f"'{info}'], num_outputs=1, output_tensor_meta=['{info}'])")
    t = meta.input_tensor_meta(0)
    assert (t.dtype(), t.dtype_name(), t.sizes(), t.nbytes()) == (6, "float32", (2, 3), 24)
    assert str([t]) == f"[{info}]"
    with pytest.raises(IndexError):
        meta.input_tensor_meta(2)
    with pytest.raises(TypeError, match="negative"):  # ExecuTorch's index is unsigned
        meta.input_tensor_meta(-1)
    assert meta.num_attributes() == 0
    with pytest.raises(IndexError):
        meta.attribute_tensor_meta(0)


def test_a_named_buffer_is_an_attribute_read_after_executes(runtime):
    method = runtime.load_program(NAMED).load_method("forward")
    meta = method.metadata
    assert meta.num_attributes() == 1 and meta.attribute_names() == ("total",)
    a = meta.attribute_tensor_meta(0)
    assert (a.name(), a.sizes(), a.dtype()) == ("total", (2, 3), 6)
    x0, x1 = npy("mutable_buffer_named/forward.in0.npy"), npy("mutable_buffer_named/forward.call1.in0.npy")
    method.execute([x0])
    method.execute([x1])
    np.testing.assert_allclose(np.asarray(method.attribute("total")), x0 + x1, rtol=1e-6)
    with pytest.raises(KeyError, match="no attribute 'totals'; it has: total"):
        method.attribute("totals")


def test_wrong_inputs_raise_runtime_error_as_executorch_does(runtime):
    method = runtime.load_program(ADD).load_method("forward")
    a = npy("add/forward.in0.npy")
    for cls in (RuntimeError, ValueError):  # ExecuTorch's, and the builtin it was
        with pytest.raises(cls, match="takes 2 input"):
            method.execute((a,))
    one = runtime.load_program(NAMED).load_method("forward")
    for cls in (RuntimeError, TypeError):
        with pytest.raises(cls, match="input 0"):
            one.execute(([a, a],))  # a list of tensors as one input


def test_etdump_of_a_program_covers_every_method_it_ran(runtime, tmp_path):
    program = runtime.load_program(MULTI, enable_etdump=True, debug_buffer_size=int(1e7))
    assert program.has_etdump()
    forward, scale = program.load_method("forward"), program.load_method("scale")
    x = np.ones(forward.metadata.input_tensor_meta(0).sizes(), np.float32)
    forward.execute([x])
    scale.execute([np.ones(scale.metadata.input_tensor_meta(0).sizes(), np.float32)])
    forward.execute([x])
    etdump, debug = tmp_path / "a.etdp", tmp_path / "a.bin"
    program.write_etdump_result_to_file(str(etdump), str(debug))
    runs = decode(etdump, tmp_path)["run_data"]
    assert len(runs) == 3 and debug.exists()
    assert all(r["events"] for r in runs)
    # The next write holds what ran since.
    forward.execute([x])
    program.write_etdump_result_to_file(etdump, debug)
    assert len(decode(etdump, tmp_path)["run_data"]) == 1
    with pytest.raises(RuntimeError, match="enable_etdump=True"):
        runtime.load_program(MULTI).write_etdump_result_to_file(etdump, debug)


# ---- portable_lib ---------------------------------------------------------------------


def test_a_module_runs_methods_and_keeps_their_state(portable_lib):
    module = portable_lib._load_for_executorch_from_buffer(NAMED.read_bytes())
    x0, x1 = npy("mutable_buffer_named/forward.in0.npy"), npy("mutable_buffer_named/forward.call1.in0.npy")
    module.forward([x0])
    (out,) = module(x1)  # a single buffer may be passed directly
    assert isinstance(out, portable_lib.ExecuTorchResult)
    np.testing.assert_allclose(np.asarray(out), npy("mutable_buffer_named/forward.call1.out0.npy"),
                               rtol=1e-6)
    assert module.method_names() == ["forward"]
    assert str(module.method_meta("forward")).startswith("MethodMeta(name='forward'")
    with pytest.raises(RuntimeError):
        module.run_method("not_a_real_method", [x0])
    module = portable_lib._load_for_executorch(str(ADD), program_verification=portable_lib.Verification.Minimal)
    a, b = npy("add/forward.in0.npy"), npy("add/forward.in1.npy")
    np.testing.assert_allclose(np.asarray(module.run_method("forward", (a, b))[0]), a + b, rtol=1e-6)


def test_a_program_counts_names_and_loads_methods(portable_lib):
    program = portable_lib._load_program_from_buffer(MULTI.read_bytes())
    assert program.num_methods() == 2
    assert [program.get_method_name(i) for i in range(2)] == ["forward", "scale"]
    with pytest.raises(RuntimeError):
        program.get_method_name(2)
    with pytest.raises(TypeError):
        program.get_method_name(-1)
    with pytest.raises(RuntimeError):
        program.load_method("not_a_real_method")
    first, second = program.load_method("forward"), program.load_method("forward")
    assert first is not second  # portable_lib makes one per call
    x = np.ones(first.method_meta().input_tensor_meta(0).sizes(), np.float32)
    first.set_inputs([x])
    first.execute()
    np.testing.assert_allclose(np.asarray(first.get_outputs()[0]), np.asarray(second.call([x])[0]))
    named = portable_lib._load_program(str(NAMED)).load_method("forward")
    named(npy("mutable_buffer_named/forward.in0.npy"))
    np.testing.assert_allclose(np.asarray(named.get_attribute("total")),
                               npy("mutable_buffer_named/forward.in0.npy"), rtol=1e-6)


def test_bundled_inputs_run_and_verify(portable_lib):
    bundle = portable_lib._load_bundled_program_from_buffer(MULTI.read_bytes())
    module = portable_lib._load_for_executorch_from_bundled_program(bundle)
    for method in ("forward", "scale"):
        for case in range(3):
            module.load_bundled_input(bundle, method, case)
            module.plan_execute(method)
            module.verify_result_with_bundled_expected_output(bundle, method, case)
    wrong = portable_lib._load_bundled_program_from_buffer(WRONG.read_bytes())
    module = portable_lib._load_for_executorch_from_bundled_program(wrong)
    module.load_bundled_input(wrong, "forward", 0)
    module.plan_execute("forward")
    module.verify_result_with_bundled_expected_output(wrong, "forward", 0)
    module.load_bundled_input(wrong, "forward", 1)
    module.plan_execute("forward")
    with pytest.raises(RuntimeError, match="test case 1: output 0 element 0"):
        module.verify_result_with_bundled_expected_output(wrong, "forward", 1)
    with pytest.raises(RuntimeError, match="it has 2"):
        module.load_bundled_input(wrong, "forward", 2)
    with pytest.raises(RuntimeError, match="not a bundled program"):
        portable_lib._load_bundled_program_from_buffer(ADD.read_bytes())


def test_a_bundle_verifies_its_own_cases_as_executorch_151_does(portable_lib):
    bundle = portable_lib._load_bundled_program_from_buffer(MULTI.read_bytes())
    (out,) = bundle.verify_result_with_bundled_expected_output("scale", 2)
    np.testing.assert_allclose(np.asarray(out), npy("multi_bundled/scale.call2.out0.npy"), rtol=1e-5)
    wrong = portable_lib._load_bundled_program_from_buffer(WRONG.read_bytes())
    wrong.verify_result_with_bundled_expected_output("forward", 0)
    with pytest.raises(RuntimeError, match="output 0 element 0"):
        wrong.verify_result_with_bundled_expected_output("forward", 1)
    wrong.verify_result_with_bundled_expected_output("forward", 1, atol=0.02)
    for bad, cls in ((3, RuntimeError), (-1, TypeError)):
        with pytest.raises(cls):
            wrong.verify_result_with_bundled_expected_output("forward", bad)
    with pytest.raises(RuntimeError, match="no test cases for method 'nope'"):
        wrong.verify_result_with_bundled_expected_output("nope", 0)


def test_external_data_is_read_when_a_method_runs_as_executorch_does(portable_lib):
    x = npy("cnn_ptd/forward.in0.npy")
    want = npy("cnn_ptd/forward.out0.npy")
    data = CNN_DATA.read_bytes()
    for module in (portable_lib._load_for_executorch(str(CNN_PTD), str(CNN_DATA)),
                   portable_lib._load_for_executorch_from_buffer(CNN_PTD.read_bytes(), data)):
        np.testing.assert_allclose(np.asarray(module.forward([x])[0]), want, rtol=1e-4, atol=1e-5)
    # Modules load lazily, as ExecuTorch's: what does not load fails at the first call.
    # Without its data the program loads (its names and metadata read) and the method fails.
    without = portable_lib._load_for_executorch_from_buffer(CNN_PTD.read_bytes())
    assert without.method_names() == ["forward"]
    assert without.method_meta("forward").num_inputs() == 1
    with pytest.raises(RuntimeError, match="kept in an external data file"):
        without.forward([x])
    for program, bad in ((CNN_PTD.read_bytes(), b"invalid bytes"), (b"not a program", data)):
        module = portable_lib._load_for_executorch_from_buffer(program, bad)
        with pytest.raises(RuntimeError):
            module.forward([x])
        with pytest.raises(RuntimeError):
            module.method_names()
    for load in (portable_lib._load_for_executorch_from_buffer, portable_lib._load_program_from_buffer,
                 portable_lib._load_bundled_program_from_buffer):
        with pytest.raises(TypeError, match="not int"):
            load(5)
    with pytest.raises(RuntimeError, match="cannot read the program /nonexistent/x.pte"):
        portable_lib._load_for_executorch("/nonexistent/x.pte")


def test_results_speak_buffer_protocol_and_dlpack_1(portable_lib):
    module = portable_lib._load_for_executorch(str(ADD))
    a, b = npy("add/forward.in0.npy"), npy("add/forward.in1.npy")
    (out,) = module.forward([a, b])
    assert out.dtype_name == "float32"
    view = np.from_dlpack(out, copy=False)
    copied = np.from_dlpack(out, copy=True)
    host = out.to_host()
    np.testing.assert_allclose(view, a + b, rtol=1e-6)
    view[0, 0] = 42.0  # the same memory as the result; the copies are not
    assert np.asarray(out)[0, 0] == 42.0 and copied[0, 0] != 42.0 and np.asarray(host)[0, 0] != 42.0
    with pytest.raises(BufferError, match="not the CPU"):
        out.__dlpack__(dl_device=(2, 0))
    with pytest.raises(NotImplementedError, match="runs programs on the CPU"):
        portable_lib.ExecuTorchResult.from_host(a, device_index=0)


def test_the_thread_pool_is_the_daemons(portable_lib, runtime):
    assert portable_lib._threadpool_get_thread_count() == runtime.server_status()["threads"] > 0
    with pytest.raises(NotImplementedError, match="et-serverd --threads"):
        portable_lib._unsafe_reset_threadpool(2)
    assert "aten::add.out" in portable_lib._get_operator_names()
    assert portable_lib._is_available("XnnpackBackend")
    assert "XnnpackBackend" in portable_lib._get_registered_backend_names()


# ---- zero-change mode -----------------------------------------------------------------

SCRIPT = textwrap.dedent("""
    import sys
    from executorch.runtime import Runtime, Verification
    from executorch.extension.pybindings import portable_lib
    import numpy as np
    rt = Runtime.get()
    program = rt.load_program(sys.argv[1], verification=Verification.Minimal)
    x = np.ones((2, 3), np.float32)
    out = program.load_method("forward").execute([x, x])
    module = portable_lib._load_for_executorch(sys.argv[1])
    out2 = module.forward([x, x])
    assert float(np.asarray(out[0])[0, 0]) == 2.0 == float(np.asarray(out2[0])[0, 0])
    assert "torch" not in sys.modules, "torch was imported"
    print("ran on", type(rt).__module__, portable_lib.__etclient__)
""")


def run_script(tmp_path, daemon_socket, *prefix: str, env_extra: dict | None = None):
    script = tmp_path / "uses_executorch.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "ETCLIENT_AS_EXECUTORCH"}
    env.update({"ETSERVER_SOCKET": daemon_socket, **(env_extra or {})})
    return subprocess.run([sys.executable, *prefix, str(script), str(ADD)], capture_output=True,
                          text=True, timeout=120, env=env)


def test_zero_change_mode_runs_an_unmodified_script_without_torch_or_executorch(tmp_path, daemon_socket):
    import importlib.util
    assert importlib.util.find_spec("executorch") is None, "this venv must not have ExecuTorch"
    plain = run_script(tmp_path, daemon_socket)
    assert plain.returncode != 0 and "No module named 'executorch'" in plain.stderr
    for prefix, env in (((("-m", "etclient", "run-as-executorch")), None),
                        ((), {"ETCLIENT_AS_EXECUTORCH": "1"})):
        result = run_script(tmp_path, daemon_socket, *prefix, env_extra=env)
        assert result.returncode == 0, result.stderr
        assert "ran on etclient._runtime etclient.portable_lib" in result.stdout


def test_zero_change_mode_passes_on_the_scripts_exit_status(tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys\nsys.exit(7)\n")
    result = subprocess.run([sys.executable, "-m", "etclient", "run-as-executorch", str(script)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 7, result.stderr
    missing = subprocess.run([sys.executable, "-m", "etclient", "run-as-executorch"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and "usage" in missing.stderr
