"""Profiles taken by the daemon (StartProfile/StopProfile) through both clients: the
Python client (Method.profile(), start_profile()/stop_profile()) on both transports,
and the C++ client (Method::start_profile/stop_profile, through etclient-run --profile,
--etdump and --trace). The ETDump is read with ExecuTorch's own schema (test_etdump's
decode), the Chrome trace as JSON.

mlp.pte runs permute_copy, addmm, relu, permute_copy, addmm per execute; the
transformer block runs XNNPACK delegate calls with steps inside them."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections import Counter

import numpy as np
import pytest

import etclient
from conftest import DEADLINE_S, MODELS, built_tool
from test_bundled_verify import serve
from test_etdump import decode

MLP = MODELS / "mlp.pte"
MLP_INPUT = MODELS / "mlp" / "forward.in0.npy"
BLOCK = MODELS / "transformer_block_xnnpack.pte"
BLOCK_INPUT = MODELS / "transformer_block_xnnpack" / "forward.in0.npy"
# Operator calls per execute of mlp.pte, summed over their rows (one per argument shapes).
MLP_CALLS = {"aten::permute_copy.out": 2, "aten::addmm.out": 2, "aten::relu.out": 1}
# A row of the table: share, total, calls, mean, then what ran.
TABLE_ROW = re.compile(r"^ *[\d.]+% +[\d.]+ [mu]?s +(\d+) +[\d.]+ [mu]?s  (.*)$", re.M)
SUMMARY = "by operator / delegate, all arguments together:\n"


def table_rows(table: str) -> list[tuple[str, str]]:
    """The rows of a table, without its summary by operator."""
    return TABLE_ROW.findall(table.split(SUMMARY)[0])


def summary_rows(table: str) -> dict[str, int]:
    """The summary by operator: calls per operator or delegate."""
    assert SUMMARY in table, table
    return {what: int(count) for count, what in TABLE_ROW.findall(table.split(SUMMARY)[1])}


@pytest.fixture(scope="module")
def runtime(daemon_socket):
    return etclient.Runtime(daemon_socket)


@pytest.fixture
def mlp(runtime, transport):
    method = runtime.load_program(MLP).load_method()
    assert method.transport == transport  # the executes profiled travel this way
    return method


def calls_by_operator(rows) -> Counter:
    calls = Counter()
    for row in rows:
        assert row.kind == "operator", row
        calls[row.name] += row.calls
    return calls


def run(method, inputs, times: int) -> None:
    for _ in range(times):
        method.execute(inputs)


# --- the Python client ----------------------------------------------------------------


def test_every_operator_call_is_counted(mlp):
    x = np.load(MLP_INPUT)
    with mlp.profile() as p:
        run(mlp, [x], 3)
    assert (p.executes, p.dropped) == (3, 0)
    assert calls_by_operator(p.rows) == {name: 3 * n for name, n in MLP_CALLS.items()}
    assert p.table.startswith("3 execute(s), ")
    assert str(p) == p.table.rstrip("\n")
    assert len(table_rows(p.table)) == len(p.rows)
    assert summary_rows(p.table) == {name: 3 * n for name, n in MLP_CALLS.items()}
    totals = [row.total_ns for row in p.rows]
    assert totals == sorted(totals, reverse=True)  # slowest first
    for row in p.rows:
        assert 0 < row.min_ns <= row.mean_ns <= row.max_ns <= row.total_ns
        assert row.mean_ns == pytest.approx(row.total_ns / row.calls)
        assert row.args.startswith("float32[")
    assert 0 < sum(totals) <= p.execute_ns


def test_delegate_calls_are_followed_by_their_steps(runtime):
    method = runtime.load_program(BLOCK).load_method()
    x = np.load(BLOCK_INPUT)
    with method.profile() as p:
        run(method, [x], 2)
    assert p.executes == 2
    kinds = [row.kind for row in p.rows]
    assert set(kinds) == {"operator", "delegate", "delegate step"}
    assert kinds[0] != "delegate step"  # a step comes after its call
    for i, row in enumerate(p.rows):
        if row.kind == "delegate":
            assert row.name == "XnnpackBackend" and row.args.startswith("delegate "), row
            assert row.calls == 2
        if row.kind == "delegate step":
            assert p.rows[i - 1].kind in ("delegate", "delegate step")
    followed = [i for i, row in enumerate(p.rows[:-1])
                if row.kind == "delegate" and p.rows[i + 1].kind == "delegate step"]
    assert followed, [(r.kind, r.name) for r in p.rows]
    assert "XnnpackBackend  (delegate " in p.table and "step at node" in p.table


def test_executes_beyond_max_executes_are_dropped(mlp):
    x = np.load(MLP_INPUT)
    with mlp.profile(max_executes=2) as p:
        run(mlp, [x], 3)
    assert (p.executes, p.dropped) == (2, 1)
    assert calls_by_operator(p.rows)["aten::relu.out"] == 2
    assert p.table.startswith("2 execute(s), ")
    mlp.start_profile(max_executes=1)
    run(mlp, [x], 3)
    q = mlp.stop_profile()
    assert (q.executes, q.dropped) == (1, 2)


def test_after_stop_nothing_is_profiled_and_a_new_profile_starts_empty(mlp):
    x = np.load(MLP_INPUT)
    with mlp.profile() as first:
        run(mlp, [x], 3)
    run(mlp, [x], 2)  # not profiled
    with mlp.profile() as second:
        run(mlp, [x], 1)
    assert first.executes == 3
    assert (second.executes, second.dropped) == (1, 0)
    assert calls_by_operator(second.rows) == MLP_CALLS
    # Starting again discards what was recorded.
    mlp.start_profile()
    run(mlp, [x], 2)
    mlp.start_profile()
    run(mlp, [x], 1)
    assert mlp.stop_profile().executes == 1


def test_stopping_without_a_profile_is_refused(mlp):
    with pytest.raises(etclient.InvalidArgument, match="not being profiled"):
        mlp.stop_profile()
    mlp.start_profile()
    mlp.stop_profile()
    with pytest.raises(etclient.InvalidArgument, match="not being profiled"):
        mlp.stop_profile()


def test_bad_max_executes_are_refused(mlp):
    with pytest.raises(etclient.InvalidArgument, match="100000"):
        mlp.start_profile(max_executes=100_001)
    with pytest.raises(etclient.InvalidArgument, match="max_executes"):
        mlp.profile(max_executes=-1)
    with pytest.raises(etclient.InvalidArgument, match="not being profiled"):
        mlp.stop_profile()  # neither started one
    mlp.start_profile(max_executes=100_000)
    assert mlp.stop_profile().executes == 0


def test_an_error_in_the_block_ends_the_profile(mlp):
    x = np.load(MLP_INPUT)
    with pytest.raises(ZeroDivisionError):
        with mlp.profile() as p:
            run(mlp, [x], 1)
            1 / 0
    assert p.executes == 1
    with pytest.raises(etclient.InvalidArgument, match="not being profiled"):
        mlp.stop_profile()


def test_the_profile_starts_with_the_block_and_is_read_after_it(mlp):
    p = mlp.profile()
    mlp.execute([np.load(MLP_INPUT)])  # before the block: not profiled
    with p:
        with pytest.raises(ValueError, match="after its `with` block"):
            p.executes
    assert p.executes == 0 and p.rows == []
    mlp.start_profile()
    stopped = mlp.stop_profile()
    with pytest.raises(ValueError, match="over"):
        with stopped:
            pass


def test_chrome_trace_has_an_execute_event_per_execute(mlp, tmp_path):
    x = np.load(MLP_INPUT)
    with mlp.profile() as p:
        run(mlp, [x], 3)
    p.write_chrome_trace(tmp_path / "trace.json")
    events = json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    executes = [e for e in spans if e["cat"] == "execute"]
    assert len(executes) == 3
    names = Counter(e["name"] for e in spans if e["cat"] != "execute")
    assert names == {name: 3 * n for name, n in MLP_CALLS.items()}


def test_etdump_reads_with_executorchs_schema(mlp, tmp_path):
    x = np.load(MLP_INPUT)
    with mlp.profile() as p:
        run(mlp, [x], 3)
    p.write_etdump(tmp_path / "profile.etdp")
    data = (tmp_path / "profile.etdp").read_bytes()
    # Size-prefixed: the length, the root table's offset, then the file identifier.
    assert int.from_bytes(data[:4], "little") == len(data) - 4
    assert data[8:12] == b"ED00"
    runs = decode(tmp_path / "profile.etdp", tmp_path)["run_data"]
    assert len(runs) == 3
    for run_data in runs:
        assert run_data["name"] == "forward"
        names = [e["profile_event"]["name"] for e in run_data["events"]]
        assert Counter(names) == {**MLP_CALLS, "Method::execute": 1}


def test_a_restart_loses_the_profile(tmp_path, transport):
    sock = tmp_path / "s.sock"
    daemon = serve(sock)
    try:
        # It finds the restarted daemon however long a busy machine takes (5 s by default).
        runtime = etclient.Runtime(str(sock), spawn=False, reconnect_timeout=DEADLINE_S)
        method = runtime.load_program(MLP).load_method()
        x = np.load(MLP_INPUT)
        for call_first in (False, True):
            method.start_profile()
            run(method, [x], 1)
            daemon.send_signal(signal.SIGTERM)
            assert daemon.wait(timeout=60) == 0
            daemon = serve(sock)
            if call_first:  # another call finds the restart and re-creates the method
                with pytest.raises(etclient.StateLost):
                    method.execute([x])
                run(method, [x], 1)
            with pytest.raises(etclient.StateLost, match="the profile was lost"):
                method.stop_profile()
            with pytest.raises(etclient.InvalidArgument, match="not being profiled"):
                method.stop_profile()  # the lost one is over
        with method.profile() as p:
            run(method, [x], 2)
        assert p.executes == 2
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)


# --- the C++ client (etclient-run --profile) ------------------------------------------


def etclient_run(sock, tmp_path, model, model_input, calls, *args):
    inputs = ["--input", str(model_input)]
    for _ in range(calls - 1):
        inputs += ["--then", "--input", str(model_input)]
    return subprocess.run([built_tool("etclient-run", "tests"), "--socket", str(sock), str(model),
                           *inputs, "--output-dir", str(tmp_path / "out"), *args],
                          capture_output=True, text=True, timeout=120)


def test_cpp_client_prints_the_table(daemon_socket, tmp_path, transport):
    result = etclient_run(daemon_socket, tmp_path, MLP, MLP_INPUT, 3, "--profile")
    assert result.returncode == 0, result.stderr
    assert f"transport {transport}" in result.stderr
    assert result.stdout.startswith("3 execute(s), "), result.stdout
    calls = Counter()
    for count, what in table_rows(result.stdout):
        calls[what.split()[0]] += int(count)
    assert calls == {name: 3 * n for name, n in MLP_CALLS.items()}, result.stdout
    assert (tmp_path / "out" / "call2" / "0.npy").is_file()  # the calls ran as before


def test_cpp_client_steps_under_their_delegate(daemon_socket, tmp_path):
    result = etclient_run(daemon_socket, tmp_path, BLOCK, BLOCK_INPUT, 2, "--profile")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("2 execute(s), ")
    lines = [what for _, what in table_rows(result.stdout)]
    delegate = next(i for i, what in enumerate(lines) if what.startswith("XnnpackBackend  ("))
    assert lines[delegate + 1].startswith("  step at node "), result.stdout


def test_cpp_client_writes_etdump_and_trace(daemon_socket, tmp_path):
    etdump, trace = tmp_path / "p.etdp", tmp_path / "t.json"
    result = etclient_run(daemon_socket, tmp_path, MLP, MLP_INPUT, 3, "--etdump", str(etdump),
                          "--trace", str(trace))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # no --profile: no table
    assert f"ETDump written to {etdump}" in result.stderr
    runs = decode(etdump, tmp_path)["run_data"]
    assert len(runs) == 3
    events = json.loads(trace.read_text())["traceEvents"]
    assert len([e for e in events if e["ph"] == "X" and e["cat"] == "execute"]) == 3


def test_cpp_client_profile_usage(daemon_socket, tmp_path):
    bad = subprocess.run([built_tool("etclient-run", "tests"), "--socket", daemon_socket,
                          str(MODELS / "multi_bundled.bpte"), "--verify", "--profile"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "usage" in bad.stderr
    unwritable = etclient_run(daemon_socket, tmp_path, MLP, MLP_INPUT, 1, "--trace",
                              str(tmp_path / "missing" / "t.json"))
    assert unwritable.returncode == 1 and "cannot write" in unwritable.stderr
