"""etclient.portable_lib's result types with real torch installed, each in a fresh
process (the choice is made when the module is imported): torch tensors by default when
torch is installed, ExecuTorchResult when EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT=executorch,
and torch itself imported only when a method is loaded, never by the import."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import MODELS

CHILD = textwrap.dedent("""
    import sys
    from etclient import portable_lib
    assert "torch" not in sys.modules, "importing portable_lib imported torch"
    import numpy as np
    x = np.ones((2, 3), np.float32)
    module = portable_lib._load_for_executorch(sys.argv[1])
    (out,) = module.forward([x, x])
    print(type(out).__module__, type(out).__name__, float(np.asarray(out)[0, 0]))
    print("torch loaded:", "torch" in sys.modules)
""")


def run(daemon_socket, output: str | None) -> list[str]:
    env = {**os.environ, "ETSERVER_SOCKET": daemon_socket}
    env.pop("EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT", None)
    if output is not None:
        env["EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT"] = output
    result = subprocess.run([sys.executable, "-c", CHILD, str(MODELS / "add.pte")],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_results_are_torch_tensors_when_torch_is_installed(daemon_socket):
    assert run(daemon_socket, None) == ["torch Tensor 2.0", "torch loaded: True"]
    assert run(daemon_socket, "torch") == ["torch Tensor 2.0", "torch loaded: True"]


def test_the_variable_chooses_executorch_results_and_torch_stays_out(daemon_socket):
    assert run(daemon_socket, "executorch") == ["etclient._native Tensor 2.0", "torch loaded: False"]


def test_an_unknown_choice_is_refused_naming_both(daemon_socket):
    env = {**os.environ, "ETSERVER_SOCKET": daemon_socket,
           "EXECUTORCH_PYBINDINGS_TENSOR_OUTPUT": "numpy"}
    result = subprocess.run([sys.executable, "-c", "from etclient import portable_lib"],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode != 0
    assert "'executorch'" in result.stderr and "'torch'" in result.stderr
