"""Bundled programs (.bpte) verified three ways: through the Python client
(Program.verify, the daemon's VerifyProgram), through the C++ client (etclient-run
--verify) and in-process (et-run --verify). The three print the same table.

Fixtures: multi_bundled (forward and scale, 3 passing cases each), mlp_bundled_wrong
(case 0 passes; every element of case 1's output is off by 0.01), cnn_bundled_xnnpack
(3 cases, XNNPACK), and the plain mlp.pte (no test cases).
"""

from __future__ import annotations

import re
import signal
import subprocess

import numpy as np
import pytest

import etclient
from conftest import DEADLINE_S, MODELS, accepts, built_tool, manifest, wait_until

MULTI = MODELS / "multi_bundled.bpte"
WRONG = MODELS / "mlp_bundled_wrong.bpte"
CNN = MODELS / "cnn_bundled_xnnpack.bpte"
PLAIN = MODELS / "mlp.pte"
# Case 1 of mlp_bundled_wrong: all 32 elements off by 0.01, as the table shows it.
WRONG_ROW = re.compile(r"^forward +1 +0  FAIL +0\.01 +\S+  32/32$", re.M)


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime(daemon_socket)


def etclient_run(sock, model, *args):
    return subprocess.run([built_tool("etclient-run", "tests"), "--socket", str(sock), str(model),
                           "--verify", *args], capture_output=True, text=True, timeout=120)


def et_run(model, *args):
    return subprocess.run([built_tool("et-run"), str(model), *args], capture_output=True,
                          text=True, timeout=120)


# --- the Python client ----------------------------------------------------------------


def test_every_case_of_both_methods_passes_in_order(runtime):
    report = runtime.load_program(MULTI).verify()
    assert report.passed and report.num_passed == 6
    assert [(c.method, c.index) for c in report.cases] == [
        ("forward", 0), ("forward", 1), ("forward", 2), ("scale", 0), ("scale", 1), ("scale", 2)]
    for case in report.cases:
        assert case.passed and case.error == "" and len(case.outputs) == 1
        out = case.outputs[0]
        assert out.passed and out.mismatched == 0 and out.problem == ""
        assert out.elements == (32 if case.method == "forward" else 15)
    assert (report.rtol, report.atol) == (1e-5, 1e-8)  # ExecuTorch's defaults


def test_a_wrong_expectation_is_reported_not_raised(runtime):
    report = runtime.load_program(WRONG).verify()
    assert not report.passed and report.num_passed == 1
    assert [c.passed for c in report.cases] == [True, False]
    out = report.cases[1].outputs[0]
    assert (out.index, out.passed, out.elements, out.mismatched) == (0, False, 32, 32)
    assert out.max_abs_error == pytest.approx(0.01, rel=1e-3)
    assert out.problem == ""
    assert WRONG_ROW.search(str(report)), str(report)
    assert str(report).endswith("1 of 2 case(s) passed")


def test_tolerances_reach_the_comparison(runtime):
    program = runtime.load_program(WRONG)
    loose = program.verify(atol=0.011, rtol=0)
    assert loose.passed and loose.num_passed == 2
    assert (loose.rtol, loose.atol) == (0, 0.011)
    assert loose.cases[1].outputs[0].mismatched == 0
    tight = program.verify(atol=0.009, rtol=0)
    assert tight.num_passed == 1 and tight.cases[1].outputs[0].mismatched == 32


def test_xnnpack_cases_pass(runtime):
    program = runtime.load_program(CNN)
    assert program.bundled_tests == {"forward": 3}
    for kwargs in ({}, {"rtol": 1e-4, "atol": 1e-4}):
        report = program.verify(**kwargs)
        assert report.passed and report.num_passed == 3, str(report)


def test_method_restricts_the_run(runtime):
    report = runtime.load_program(MULTI).verify(method="scale")
    assert report.passed
    assert [(c.method, c.index) for c in report.cases] == [("scale", 0), ("scale", 1), ("scale", 2)]


def test_a_method_without_cases_is_not_found(runtime):
    with pytest.raises(etclient.NotFound, match="forward, scale"):
        runtime.load_program(MULTI).verify(method="nope")


def test_a_plain_program_cannot_be_verified(runtime):
    program = runtime.load_program(PLAIN)
    assert program.bundled_tests == {}
    # The daemon's FAILED_PRECONDITION: the client raises InvalidArgument for it.
    with pytest.raises(etclient.InvalidArgument, match="bundled program"):
        program.verify()


def test_a_negative_tolerance_is_refused(runtime):
    with pytest.raises(etclient.InvalidArgument, match="tolerance"):
        runtime.load_program(MULTI).verify(rtol=-1)


def test_bundled_tests_lists_methods_in_file_order(runtime):
    tests = runtime.load_program(MULTI).bundled_tests
    assert list(tests.items()) == [("forward", 3), ("scale", 3)]
    assert runtime.load_program(WRONG).bundled_tests == {"forward": 2}


def serve(sock):
    """An et-serverd on `sock`, once it listens."""
    proc = subprocess.Popen([built_tool("et-serverd", "server"), "--socket", sock, "--log-level",
                             "warn"])
    wait_until(lambda: accepts(sock), "et-serverd to listen", running=[proc])
    return proc


def test_verify_survives_a_daemon_restart(tmp_path):
    sock = tmp_path / "s.sock"
    daemon = serve(sock)
    try:
        # It finds the restarted daemon however long a busy machine takes (5 s by default).
        runtime = etclient.Runtime(str(sock), spawn=False, reconnect_timeout=DEADLINE_S)
        program = runtime.load_program(WRONG)
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=60) == 0
        daemon = serve(sock)
        report = program.verify()  # reconnects and reloads the program first
        assert (report.num_passed, len(report.cases)) == (1, 2)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)


def test_a_bundled_program_runs_like_a_plain_one(runtime):
    entry = next(m for m in manifest()["models"] if m["name"] == "multi_bundled")
    spec = next(meth for meth in entry["methods"] if meth["name"] == "scale")
    method = runtime.load_program(MULTI).load_method("scale")
    outputs = method.execute([np.load(MODELS / rel) for rel in spec["inputs"]])
    expected = np.load(MODELS / "multi_bundled" / "scale.out0.npy")
    np.testing.assert_allclose(np.asarray(outputs[0]), expected, rtol=spec["rtol"],
                               atol=spec["atol"])


# --- the C++ client (etclient-run --verify) -----------------------------------------


def test_cpp_client_all_pass(daemon_socket):
    result = etclient_run(daemon_socket, MULTI)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{MULTI}: 6 test case(s), rtol 1e-05, atol 1e-08\n")
    assert re.search(r"^scale +2 +0  pass +0 +0  0/15$", result.stdout, re.M), result.stdout
    assert result.stdout.endswith("6 of 6 case(s) passed\n")


def test_cpp_client_reports_a_failing_case(daemon_socket):
    result = etclient_run(daemon_socket, WRONG)
    assert result.returncode == 3, result.stderr
    assert WRONG_ROW.search(result.stdout), result.stdout
    assert result.stdout.endswith("1 of 2 case(s) passed\n")
    loose = etclient_run(daemon_socket, WRONG, "--atol", "0.011", "--rtol", "0")
    assert loose.returncode == 0, loose.stdout + loose.stderr
    assert "rtol 0, atol 0.011" in loose.stdout


def test_cpp_client_method_and_errors(daemon_socket):
    scale = etclient_run(daemon_socket, MULTI, "--method", "scale")
    assert scale.returncode == 0 and "3 of 3 case(s) passed" in scale.stdout, scale.stdout
    assert not re.search(r"^forward ", scale.stdout, re.M), scale.stdout
    unknown = etclient_run(daemon_socket, MULTI, "--method", "nope")
    assert unknown.returncode == 1 and "forward, scale" in unknown.stderr, unknown.stderr
    plain = etclient_run(daemon_socket, PLAIN)
    assert plain.returncode == 1 and "bundled program" in plain.stderr, plain.stderr
    assert etclient_run(daemon_socket, MULTI, "--rtol", "-1").returncode == 2


def test_the_three_tables_agree(runtime, daemon_socket):
    for model in (MULTI, WRONG):
        local = et_run(model, "--verify").stdout
        assert etclient_run(daemon_socket, model).stdout == local
        assert f"{model}: {runtime.load_program(model).verify()}\n" == local


# --- et-run, in-process ----------------------------------------------------------------


def test_et_run_verify_exit_statuses():
    passed = et_run(MULTI, "--verify")
    assert passed.returncode == 0 and passed.stdout.endswith("6 of 6 case(s) passed\n"), passed
    failed = et_run(WRONG, "--verify")
    assert failed.returncode == 3 and WRONG_ROW.search(failed.stdout), failed.stdout
    assert et_run(WRONG, "--verify", "--atol", "0.011", "--rtol", "0").returncode == 0
    scale = et_run(MULTI, "--verify", "--method", "scale")
    assert scale.returncode == 0 and "3 test case(s)" in scale.stdout, scale.stdout
    plain = et_run(PLAIN, "--verify")
    assert plain.returncode == 1 and "bundled program" in plain.stderr, plain.stderr
    for bad in ("-1", "abc"):
        assert et_run(MULTI, "--verify", "--rtol", bad).returncode == 2


def test_et_run_info_names_the_bundled_cases():
    out = et_run(MULTI, "--info")
    assert out.returncode == 0, out.stderr
    assert "bundled program: test cases for forward (3 case(s)), scale (3 case(s))" in out.stdout
    assert "bundled program" not in et_run(PLAIN, "--info").stdout
