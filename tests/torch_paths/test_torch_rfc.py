"""torch-specific rules with real torch: refusals of views whose memory differs from
their values, objects that lie about being tensors, devices, the result type decided
once at load, and zero copy out."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import etclient
from conftest import MODELS


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime(daemon_socket)


@pytest.fixture
def add(runtime):
    return runtime.load_program(MODELS / "add.pte").load_method()


def test_negated_and_conjugated_views_are_refused(add):
    x = torch.randn(2, 3)
    with pytest.raises(ValueError, match=r"input 0: a negated torch view.*resolve_neg"):
        add.execute([torch._neg_view(x), x])
    z = torch.randn(2, 3, dtype=torch.cfloat).conj()
    assert z.is_conj()
    with pytest.raises(ValueError, match=r"input 1: a conjugated torch view.*resolve_conj"):
        add.execute([x, z])
    out = add.execute([torch._neg_view(x).resolve_neg(), x])[0]
    torch.testing.assert_close(out, torch.zeros(2, 3))


def test_objects_that_lie_about_being_tensors_are_refused(add):
    x = torch.randn(2, 3)

    class Impostor:
        __class__ = torch.Tensor  # isinstance() believes it

        shape, dtype, device, layout = x.shape, x.dtype, x.device, x.layout

        def data_ptr(self):
            return x.data_ptr()

        def stride(self):
            return x.stride()

        def element_size(self):
            return 4

    assert isinstance(Impostor(), torch.Tensor)
    with pytest.raises(TypeError, match="input 0"):
        add.execute([Impostor(), x])

    class Liar(torch.Tensor):
        def data_ptr(self):  # points past its storage
            return super().data_ptr() + (1 << 20)

    with pytest.raises(ValueError, match=r"input 0: a torch tensor whose elements lie outside its storage"):
        add.execute([x.as_subclass(Liar), x])


def test_tensors_on_other_devices_are_refused_naming_the_device(add):
    # ExecuTorch raises RuntimeError here: InvalidArgument is one, and a ValueError.
    for cls in (ValueError, RuntimeError, etclient.InvalidArgument):
        with pytest.raises(cls, match=r"input 0: a torch tensor that is on device meta: only CPU "
                                      r"and CUDA tensors .*pass a CPU tensor"):
            add.execute([torch.empty(2, 3, device="meta"), torch.randn(2, 3)])


def test_strided_views_and_requires_grad_are_read_by_value(add):
    base = torch.randn(6, 4, requires_grad=True)
    a = base[::3, 1:].detach().t()[:, :2].t()  # a strided (2, 3) view
    b = torch.randn(3, 2).t()                    # transposed
    out = add.execute([a, b])[0]
    torch.testing.assert_close(out, a + b)
    out = add.execute([torch.utils.dlpack.to_dlpack(a.contiguous()), b])[0]  # a bare capsule
    torch.testing.assert_close(out, a + b)


def test_torch_results_share_the_result_memory(runtime):
    m = runtime.load_program(MODELS / "add.pte").load_method()
    assert m.returns_torch
    x = torch.randn(2, 3)
    out = m.execute([x, x])[0]
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert m.outputs()[0] is out
    bf = runtime.load_program(MODELS / "bfloat16.pte").load_method()
    a = torch.randn(3, 5).to(torch.bfloat16)
    y = bf.execute([a, a])[0]
    assert y.dtype == torch.bfloat16 and y.shape == a.shape  # DLPack names bfloat16


def test_the_result_type_is_decided_at_load_and_never_imports_torch(daemon_socket):
    child = textwrap.dedent(f"""
        import sys
        import etclient
        assert "torch" not in sys.modules
        runtime = etclient.Runtime({daemon_socket!r})
        program = runtime.load_program({str(MODELS / "add.pte")!r})
        before = program.load_method()
        import array
        x = array.array("f", range(6))
        v = memoryview(x).cast("B").cast("f", (2, 3))
        out = before.execute([v, v])
        assert "torch" not in sys.modules, "etclient imported torch"
        assert type(out[0]).__name__ == "Tensor" and type(out[0]).__module__.startswith("etclient")
        import torch
        assert type(before.execute([v, v])[0]).__module__.startswith("etclient"), "changed per call"
        after = program.new_method()
        assert isinstance(after.execute([v, v])[0], torch.Tensor)
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr
