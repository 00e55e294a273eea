"""Programs with their weights in an external data file (.ptd), through the Python
client as executorch.runtime takes them: load_program(path_or_bytes, data_path=...)."""

from __future__ import annotations

import numpy as np
import pytest

import etclient
from conftest import MODELS


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime(daemon_socket)


@pytest.mark.parametrize("model", ["mlp_ptd", "mlp_ptd_xnnpack"])
@pytest.mark.parametrize("source", ["path", "bytes", "file"])
def test_a_program_runs_with_its_data_file(runtime, model, source):
    pte = MODELS / f"{model}.pte"
    data = {"path": pte, "bytes": pte.read_bytes(), "file": open(pte, "rb")}[source]
    method = runtime.load_program(data, data_path=MODELS / f"{model}.ptd").load_method("forward")
    x = np.load(MODELS / model / "forward.in0.npy")
    (out,) = method.execute([x])
    np.testing.assert_allclose(np.asarray(out), np.load(MODELS / model / "forward.out0.npy"),
                               atol=1e-5, rtol=1e-5)


def test_without_its_data_file_the_program_loads_and_its_method_names_the_tensor(runtime):
    # As executorch.runtime: the program and its metadata load; the method does not.
    program = runtime.load_program(MODELS / "mlp_ptd.pte")
    assert program.metadata("forward").num_inputs() == 1
    with pytest.raises(ValueError, match=r"method 'forward' cannot load: tensor 'fc1\.weight' is "
                                         r"kept in an external data file"):
        program.load_method("forward")


def test_another_programs_data_file_is_refused(runtime):
    with pytest.raises(ValueError, match=r"has no tensor 'fc1\.weight'"):
        runtime.load_program(MODELS / "mlp_ptd.pte", data_path=MODELS / "cnn_ptd.ptd")


def test_a_missing_or_empty_data_path_is_named(runtime, tmp_path):
    with pytest.raises(LookupError, match="nowhere.ptd"):
        runtime.load_program(MODELS / "mlp_ptd.pte", data_path=tmp_path / "nowhere.ptd")
    with pytest.raises(LookupError, match="nowhere.ptd"):
        runtime.load_program((MODELS / "mlp_ptd.pte").read_bytes(),
                             data_path=tmp_path / "nowhere.ptd")
    empty = tmp_path / "empty.ptd"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        runtime.load_program(MODELS / "mlp_ptd.pte", data_path=empty)
    with pytest.raises(ValueError, match="empty path"):
        runtime.load_program(MODELS / "mlp_ptd.pte", data_path="")
