"""The RFC's list (../shared/seeds/rfc-run-pte-without-torch.txt, "How to know it
works") and DESIGN.md section 4's refusals, through the Python client against a real
et-serverd. Ownership cases use two calls (set_inputs, then execute), because the
window in which memory is held does not open inside one call."""

from __future__ import annotations

import gc
import sys
import threading

import numpy as np
import pytest

import etclient
from conftest import MODELS


def load(npy: str) -> np.ndarray:
    return np.load(MODELS / npy)


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime(daemon_socket)


def method_of(runtime, model: str, name: str = "forward"):
    return runtime.load_program(MODELS / f"{model}.pte").load_method(name)


def test_a_resized_input_raises_instead_of_reading_freed_memory(runtime):
    m = method_of(runtime, "add_unplanned_io")
    a, b = load("add_unplanned_io/forward.in0.npy").copy(), load("add_unplanned_io/forward.in1.npy")
    m.set_inputs([a, b])
    a.resize(1 << 20, refcheck=False)  # numpy moves the memory anyway
    with pytest.raises(ValueError, match=r"input 0: .*moved or changed size"):
        m.execute()
    with pytest.raises(ValueError, match="no complete set of inputs"):
        m.execute()  # the set was dropped: give it again
    assert np.allclose(np.asarray(m.execute([a[:6].reshape(2, 3), b])[0]), a[:6].reshape(2, 3) + b)


def test_a_writable_input_is_read_when_the_call_runs(runtime):
    m = method_of(runtime, "add_unplanned_io")
    a, b = load("add_unplanned_io/forward.in0.npy").copy(), load("add_unplanned_io/forward.in1.npy")
    m.set_inputs([a, b])
    a[...] = 7.0  # after set_inputs, before execute
    (out,) = m.execute()
    np.testing.assert_allclose(np.asarray(out), 7.0 + b)


def test_a_read_only_buffer_into_a_method_that_writes_its_input_stays_unchanged(runtime):
    for model in ("inplace_input", "inplace_input_unplanned_io"):
        m = method_of(runtime, model)
        x = load(f"{model}/forward.in0.npy")
        for given in (x.copy(), x.tobytes()):
            if isinstance(given, np.ndarray):
                given.setflags(write=False)
            before = bytes(memoryview(given).cast("B"))
            inputs = [given] if isinstance(given, np.ndarray) else [np.frombuffer(given, x.dtype).reshape(x.shape)]
            outs = m.execute(inputs)
            assert bytes(memoryview(given).cast("B")) == before, model
            np.testing.assert_allclose(np.asarray(outs[0]), load(f"{model}/forward.out0.npy"), rtol=1e-6)


def test_a_method_writing_a_shared_input_writes_the_shared_buffer(runtime):
    m = method_of(runtime, "inplace_input_unplanned_io")
    buf = m.input_buffer(0)
    np.asarray(buf)[...] = load("inplace_input_unplanned_io/forward.in0.npy")
    m.execute([buf])
    np.testing.assert_allclose(np.asarray(buf), load("inplace_input_unplanned_io/forward.in0.after.npy"),
                               rtol=1e-6)


@pytest.mark.parametrize("shape", [(0, 1 << 40), (1 << 31, 0), (0,) * 17])
def test_an_over_large_dimension_on_an_empty_tensor_raises(runtime, shape):
    m = method_of(runtime, "add")
    empty = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=shape, strides=(0,) * len(shape))
    with pytest.raises(ValueError, match="input 0"):
        m.execute([empty, load("add/forward.in1.npy")])
    with pytest.raises(ValueError, match="input 0"):
        m.execute([empty.__dlpack__(), load("add/forward.in1.npy")])


def test_a_program_loaded_from_bytes_nobody_else_holds_works(runtime):
    program = runtime.load_program((MODELS / "mlp.pte").read_bytes())
    gc.collect()
    (out,) = program.load_method().execute([load("mlp/forward.in0.npy")])
    np.testing.assert_allclose(np.asarray(out), load("mlp/forward.out0.npy"), rtol=1e-5, atol=1e-6)
    data = bytearray((MODELS / "mlp.pte").read_bytes())
    refs = sys.getrefcount(data)
    runtime.load_program(data)
    assert sys.getrefcount(data) == refs  # the bytes were copied, not held
    data[:] = b"\0" * len(data)  # and may be reused at once


def test_a_method_returning_its_input_returns_the_inputs_values(runtime):
    for model in ("identity_output", "identity_output_unplanned_io"):
        m = method_of(runtime, model)
        x, y = load(f"{model}/forward.in0.npy").copy(), load(f"{model}/forward.in1.npy")
        outs = m.execute([x, y])
        expected = [load(f"{model}/forward.out{i}.npy") for i in range(len(outs))]
        x[...] = -1.0  # the caller's array changing later changes no result
        for out, want in zip(outs, expected):
            np.testing.assert_allclose(np.asarray(out), want)


def test_outputs_read_twice_are_the_same_objects(runtime):
    m = method_of(runtime, "tuple_output")
    x = [load("tuple_output/forward.in0.npy"), load("tuple_output/forward.in1.npy")]
    first = m.execute(x)
    again, third = m.outputs(), m.outputs()
    assert all(a is b for a, b in zip(first, again)) and all(a is b for a, b in zip(again, third))
    assert len(first) > 1
    assert m.execute(x)[0] is not first[0]  # a new execution, new objects


def test_outputs_after_a_refused_call_raise(runtime):
    m = method_of(runtime, "add")
    m.execute([load("add/forward.in0.npy"), load("add/forward.in1.npy")])
    with pytest.raises(ValueError):
        m.execute([load("add/forward.in0.npy").astype(np.float64), load("add/forward.in1.npy")])
    with pytest.raises(ValueError, match="no outputs"):
        m.outputs()
    with pytest.raises(TypeError):
        m.execute(["not a tensor", load("add/forward.in1.npy")])
    with pytest.raises(ValueError, match="no outputs"):
        m.outputs()


def test_an_earlier_result_is_unchanged_after_a_later_call(runtime):
    m = method_of(runtime, "add_unplanned_io")
    a, b = load("add_unplanned_io/forward.in0.npy"), load("add_unplanned_io/forward.in1.npy")
    (first,) = m.execute([a, b])
    view = np.asarray(first)  # no copy: a view of the result's shared memory
    assert view.ctypes.data == first.data_ptr
    (second,) = m.execute([a * 10, b])
    np.testing.assert_allclose(view, load("add_unplanned_io/forward.out0.npy"))
    np.testing.assert_allclose(np.asarray(second), a * 10 + b, rtol=1e-6)


def test_channels_last_and_size_one_dimensions_against_eager(runtime):
    x = load("channels_last/forward.in0.npy")
    m = method_of(runtime, "channels_last")
    want = load("channels_last/forward.out0.npy")
    strided = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)  # NHWC memory
    for given in (x, strided, np.asfortranarray(x)):
        np.testing.assert_allclose(np.asarray(m.execute([given])[0]), want, rtol=1e-5, atol=1e-6)
    y = load("size_one/forward.in0.npy")
    m = method_of(runtime, "size_one")
    odd_strides = np.lib.stride_tricks.as_strided(y, strides=tuple(999 * 4 if s == 1 else st for s, st in zip(y.shape, y.strides)))
    for given in (y, odd_strides):
        np.testing.assert_allclose(np.asarray(m.execute([given])[0]), load("size_one/forward.out0.npy"), rtol=1e-5)


def test_bfloat16_round_trips_and_keeps_its_shape(runtime):
    m = method_of(runtime, "bfloat16")
    a, b = load("bfloat16/forward.in0.npy"), load("bfloat16/forward.in1.npy")  # uint16 bits
    (out,) = m.execute([a.tobytes(), b.tobytes()])
    assert out.dtype_name == "bfloat16" and out.shape == a.shape
    view = memoryview(out)
    assert view.format == "H" and view.shape == a.shape and view.strides == a.strides
    np.testing.assert_array_equal(np.asarray(out), load("bfloat16/forward.out0.npy"))
    (again,) = m.execute([out, b.tobytes()])  # a result passed straight back in
    assert again.shape == a.shape
    with pytest.raises(TypeError, match="bfloat16"):
        m.execute([a, b])  # uint16 values are not bfloat16: only raw bytes are


def test_two_threads_on_one_method_raise_and_say_one_per_thread(runtime):
    m = method_of(runtime, "mobilenet_v2")
    x = load("mobilenet_v2/forward.in0.npy")
    stop, errors = threading.Event(), []

    def busy():
        while not stop.is_set():
            try:
                m.execute([x])
            except ValueError as e:  # the worker may be the one that comes second
                errors.append(str(e))
                stop.set()

    worker = threading.Thread(target=busy)
    worker.start()
    try:
        for _ in range(2000):
            if stop.is_set():
                break
            try:
                m.execute([x])
            except ValueError as e:
                errors.append(str(e))
                break
    finally:
        stop.set()
        worker.join()
    assert errors and "one per thread" in errors[0]


def test_a_result_goes_straight_back_in_and_kinds_mix(runtime):
    m = method_of(runtime, "add")
    a, b = load("add/forward.in0.npy"), load("add/forward.in1.npy")
    (s,) = m.execute([a, memoryview(b)])
    (t,) = m.execute([s, b.__dlpack__()])
    np.testing.assert_allclose(np.asarray(t), a + b + b, rtol=1e-6)


def test_a_single_array_is_one_input(runtime):
    m = method_of(runtime, "mlp")
    x = load("mlp/forward.in0.npy")
    assert x.shape[0] > 1
    np.testing.assert_allclose(np.asarray(m.execute(x)[0]), load("mlp/forward.out0.npy"), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="takes 2 input"):
        method_of(runtime, "add").execute(load("add/forward.in0.npy"))


def test_shared_memory_inputs_are_read_in_place(runtime):
    m = method_of(runtime, "add_unplanned_io")
    a_buf, b_buf = m.input_buffer(0), m.input_buffer(1)
    b = load("add_unplanned_io/forward.in1.npy")
    np.asarray(b_buf)[...] = b
    np.asarray(a_buf)[...] = 1.0
    m.set_inputs([a_buf, b_buf])
    np.asarray(a_buf)[...] = 5.0
    (out,) = m.execute()
    np.testing.assert_allclose(np.asarray(out), 5.0 + b)
    e = runtime.empty((2, 3), np.float32)
    assert e.shape == (2, 3) and e.dtype_name == "float32" and e.strides == (12, 4)


def test_the_client_holds_one_reference_while_an_input_may_be_read(runtime):
    m = method_of(runtime, "add")
    a, b = load("add/forward.in0.npy").copy(), load("add/forward.in1.npy").copy()
    base = sys.getrefcount(a)
    m.set_inputs([a, b])
    assert sys.getrefcount(a) == base + 1
    m.execute()
    m.set_inputs([b, b])
    assert sys.getrefcount(a) == base


@pytest.mark.parametrize("bad,pattern", [
    (np.zeros((2, 3), np.float64), r"input 0.*float64.*float32"),
    (np.zeros((3, 2), np.float32), r"input 0.*shape"),
    (np.zeros((2, 3), ">f4"), r"input 0.*big-endian"),
    (None, r"input 0: None"),
    ("text", r"str"),
    ({"x": 1}, r"input 0: a dict is not a tensor"),
    ((i for i in range(3)), r"input 0: a generator is not a tensor"),
    ([[1.0, 2.0, 3.0]] * 2, r"input 0: a list is not a tensor; nested"),
    (np.lib.stride_tricks.as_strided(np.zeros(16, np.float32), (2, 3), (5, 4)), r"input 0: stride 5"),
])
def test_refusals_name_the_input_and_what_to_do(runtime, bad, pattern):
    m = method_of(runtime, "add")
    b = load("add/forward.in1.npy")
    inputs = bad if isinstance(bad, str) else [bad, b]
    with pytest.raises((TypeError, ValueError), match=pattern):
        m.execute(inputs)
    np.testing.assert_allclose(np.asarray(m.execute([b, b])[0]), b + b)  # still works


def test_a_dynamic_input_buffer_is_resized_in_place(runtime):
    m = method_of(runtime, "dynamic_batch")
    x = load("dynamic_batch/forward.in0.npy")
    buf = m.input_buffer(0)
    bound = buf.shape
    assert bound[0] >= x.shape[0] and bound != x.shape
    address = buf.data_ptr
    buf.resize(x.shape)
    assert buf.shape == x.shape and buf.data_ptr == address  # the same memory
    np.asarray(buf)[...] = x
    np.testing.assert_allclose(np.asarray(m.execute([buf])[0]), load("dynamic_batch/forward.out0.npy"),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="do not fit"):
        buf.resize((bound[0] + 1,) + tuple(bound[1:]))


def test_calls_take_the_transport_asked_for(runtime, transport, daemon_socket):
    # ETSERVER_TRANSPORT (set per run of this module) and the keyword pick it alike.
    assert method_of(runtime, "add").transport == transport
    forced = etclient.Runtime(daemon_socket, transport="grpc")
    assert method_of(forced, "add").transport == "grpc"
    with pytest.raises(ValueError, match="not one of 'fast', 'grpc'"):
        etclient.Runtime(daemon_socket, transport="carrier-pigeon")


def test_results_go_into_the_callers_own_buffers(runtime):
    method = method_of(runtime, "mlp")
    x = load("mlp/forward.in0.npy")
    buffers = method.output_buffers()
    where = np.asarray(buffers[0]).__array_interface__["data"][0]
    for _ in range(3):
        outputs = method.execute([x], outputs=buffers)
        assert outputs[0] is buffers[0]
        np.testing.assert_allclose(np.asarray(outputs[0]), load("mlp/forward.out0.npy"), atol=1e-5)
        assert np.asarray(outputs[0]).__array_interface__["data"][0] == where
    assert method.outputs()[0] is buffers[0]
    with pytest.raises(Exception, match="0 tensors given"):
        method.execute([x], outputs=[])
    with pytest.raises(TypeError, match="not an etclient.Tensor"):
        method.execute([x], outputs=[np.zeros(16, np.float32)])
    small = runtime.empty([1])
    with pytest.raises(Exception, match=r"outputs\[0\]: 64 bytes"):
        method.execute([x], outputs=[small])
