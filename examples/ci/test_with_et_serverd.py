"""A CI test file whose tests run .pte programs through one shared et-serverd (docs/ci.md).

    pip install etclient pytest pytest-xdist
    pytest -n 16 examples/ci/test_with_et_serverd.py

The first test that needs the daemon starts it (no setup step); every worker process
shares it; each process loads a program once (et_program); the daemon exits by itself
once the run has been over for $ETSERVER_IDLE_EXIT seconds (300 by default). Nothing
here imports torch or numpy.
"""

import array
import os
from pathlib import Path

import pytest

MODELS = Path(os.environ.get("ET_MODELS", Path(__file__).resolve().parents[2] / "tests" / "models"))


def floats(values, shape):
    return memoryview(array.array("f", values)).cast("B").cast("f", shape)


@pytest.mark.parametrize("step", range(32))
def test_add_doubles_its_input(et_program, step):
    method = et_program(MODELS / "add.pte").load_method()
    x = floats([float(step + i) for i in range(6)], (2, 3))
    out = method.execute([x, x])[0]
    assert memoryview(out).tolist() == [[2.0 * (step + i) for i in r] for r in ((0, 1, 2), (3, 4, 5))]


def test_the_daemon_says_who_it_is(et_runtime):
    status = et_runtime.server_status()
    assert status["protocol_version"] >= 1
    assert status["sessions"] >= 1
