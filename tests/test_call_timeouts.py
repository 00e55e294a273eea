"""A per-call timeout from Python (Method.execute(..., timeout=SECONDS)): the daemon
stops the call there, the method stays usable, and a call without one runs to its end.
MobileNetV2 on the portable kernels takes over 100 ms a call on any machine this runs
on (as tests/daemon_test.cc's execution deadline test also relies on); the timeout is
20 ms. On the fast path the client waits for the daemon's answer, so the error is the
daemon's own."""

from __future__ import annotations

import numpy as np
import pytest

import etclient
from conftest import MODELS


def test_a_timeout_stops_the_call_and_the_method_stays_usable(daemon_socket, transport):
    rt = etclient.Runtime(daemon_socket, spawn=False)
    method = rt.load_program(MODELS / "mobilenet_v2.pte").load_method("forward")
    image = np.zeros((1, 3, 224, 224), np.float32)
    for _ in range(2):
        with pytest.raises(etclient.Unavailable) as stopped:
            method.execute([image], timeout=0.02)
        if transport == "fast":
            assert "the call's deadline passed" in str(stopped.value), stopped.value
            assert method.transport == "fast"  # the channel was not given up
    (logits,) = method.execute([image])  # no timeout: runs to its end
    assert tuple(logits.shape) == (1, 1000)
    (again,) = method.execute([image], timeout=600)
    np.testing.assert_array_equal(np.asarray(again), np.asarray(logits))


def test_a_timeout_that_is_not_seconds_is_refused(daemon_socket):
    method = etclient.Runtime(daemon_socket, spawn=False).load_program(
        MODELS / "add.pte").load_method("forward")
    with pytest.raises(etclient.InvalidArgument, match="timeout: give seconds"):
        method.execute([np.ones((2, 3), np.float32)] * 2, timeout=-1)
