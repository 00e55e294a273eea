"""Profiles written as ETDump and Chrome trace by et-run, read by their real readers:
ExecuTorch's own ETDump schema decoded by the flatc its devtools run (both from the
ExecuTorch 1.5.1 wheel, fetched by scripts/setup; no torch needed), and, where the
export environment exists (.venv-export, made by benchmarks/run), by
executorch.devtools.Inspector itself."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import MODELS, ROOT, built_tool

EXECUTORCH = ROOT / ".cache" / "executorch-1.5.1"
EXPORT_PYTHON = ROOT / ".venv-export" / "bin" / "python"


def profile(tmp_path, model: str, repeat: int, *extra: str):
    """Runs `model` (its first recorded inputs) `repeat` times under et-run with every
    profile output; returns the paths and et-run's stdout (the table)."""
    entry = next(m for m in json.loads((MODELS / "manifest.json").read_text())["models"]
                 if m["pte"] == model)
    method = entry["methods"][0]
    etdump, trace = tmp_path / "profile.etdp", tmp_path / "trace.json"
    args = [built_tool("et-run"), MODELS / model, "--method", method["name"], "--output-dir",
            tmp_path, "--profile", "--repeat", str(repeat), "--etdump", etdump, "--trace", trace,
            *extra]
    for rel in method["inputs"]:
        args += ["--input", MODELS / rel]
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return etdump, trace, result.stdout


def decode(etdump, tmp_path) -> dict:
    """The ETDump as ExecuTorch's devtools read it: its flatc, its schema, size-prefixed."""
    flatc, schema = EXECUTORCH / "flatc", EXECUTORCH / "etdump_schema_flatcc.fbs"
    assert flatc.is_file() and schema.is_file(), "run scripts/setup: it fetches ExecuTorch's ETDump schema"
    subprocess.run([flatc, "--json", "--strict-json", "--defaults-json", "--size-prefixed",
                    "-o", tmp_path, schema, "--", etdump], check=True, capture_output=True)
    return json.loads((tmp_path / (etdump.stem + ".json")).read_text())


def profile_events(run: dict) -> list[dict]:
    return [e["profile_event"] for e in run["events"]]


def test_operator_events_read_with_executorchs_schema(tmp_path):
    etdump, _, table = profile(tmp_path, "mlp.pte", 3)
    dump = decode(etdump, tmp_path)
    assert dump["version"] == 0
    runs = dump["run_data"]
    assert len(runs) == 3  # one per execute
    for run in runs:
        assert run["name"] == "forward"
        events = profile_events(run)
        names = [e["name"] for e in events]
        assert names == ["aten::permute_copy.out", "aten::addmm.out", "aten::relu.out",
                         "aten::permute_copy.out", "aten::addmm.out", "Method::execute"]
        assert [e["instruction_id"] for e in events[:-1]] == [0, 1, 2, 3, 4]
        assert all(e["chain_index"] == 0 for e in events[:-1])
        assert events[-1]["chain_index"] == -1
        whole = events[-1]
        for e in events:
            assert int(e["end_time"]) >= int(e["start_time"]) > 0
            assert int(whole["start_time"]) <= int(e["start_time"])
            assert int(e["end_time"]) <= int(whole["end_time"])
            assert e["delegate_debug_id_int"] == -1
    assert "3 execute(s)" in table and "aten::addmm.out" in table


def test_delegate_steps_read_with_executorchs_schema(tmp_path):
    etdump, _, table = profile(tmp_path, "transformer_block_xnnpack.pte", 2)
    runs = decode(etdump, tmp_path)["run_data"]
    assert len(runs) == 2
    events = profile_events(runs[0])
    calls = [e for e in events if e.get("name") == "DELEGATE_CALL"]
    steps = [e for e in events if e.get("delegate_debug_id_str")]
    assert calls and steps
    for step in steps:
        call = next(c for c in calls if c["instruction_id"] == step["instruction_id"])
        assert int(call["start_time"]) <= int(step["start_time"]) <= int(step["end_time"]) <= int(call["end_time"])
        assert step["delegate_debug_id_str"].startswith("XNNPACK ") or "(own kernel)" in step["delegate_debug_id_str"]
    # Each step is a row of its own for the devtools (they key a run's events by
    # instruction and delegate id).
    assert len({(s["instruction_id"], s["delegate_debug_id_str"]) for s in steps}) == len(steps)
    assert "XnnpackBackend  (delegate 0)" in table and "step at node" in table


def test_chrome_trace_is_json_with_an_event_each(tmp_path):
    _, trace, _ = profile(tmp_path, "mlp_xnnpack.pte", 2)
    data = json.loads(trace.read_text())
    events = [e for e in data["traceEvents"] if e["ph"] == "X"]
    executes = [e for e in events if e["cat"] == "execute"]
    assert len(executes) == 2
    assert {e["cat"] for e in events} == {"execute", "delegate", "delegate step"}
    for e in events:
        assert e["dur"] >= 0 and e["ts"] >= 0 and e["pid"] == 1
    # The second execute starts after the first one ends.
    assert executes[1]["ts"] >= executes[0]["ts"] + executes[0]["dur"]


INSPECT = """
import sys
from executorch.devtools import Inspector
frame = Inspector(etdump_path=sys.argv[1]).to_dataframe()
for row in frame.itertuples():
    print(row.event_block_name, row.event_name, len(row.raw), row._7, row.is_delegated_op, sep="\\t")
"""


@pytest.mark.skipif(not EXPORT_PYTHON.is_file(), reason="needs the export environment (.venv-export, "
                    "with executorch 1.5.1: benchmarks/run makes it)")
def test_inspector_shows_our_timings(tmp_path):
    etdump, _, _ = profile(tmp_path, "transformer_block_xnnpack.pte", 3)
    ours = decode(etdump, tmp_path)["run_data"]
    result = subprocess.run([EXPORT_PYTHON, "-c", INSPECT, etdump], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    events = profile_events(ours[0])
    # One row per event of an execute, in order, each with the 3 executes' samples.
    assert len(rows) == len(events)
    for row, event in zip(rows, events):
        block, name, samples, avg_ms, delegated = row
        assert block == "forward" and samples == "3"
        assert name == (event.get("delegate_debug_id_str") or event["name"])
        assert delegated == str(bool(event.get("delegate_debug_id_str")))
        mean_ns = sum(int(p["end_time"]) - int(p["start_time"])
                      for run in ours for p in profile_events(run)
                      if p["instruction_id"] == event["instruction_id"] and p.get("name") == event.get("name")
                      and p.get("delegate_debug_id_str") == event.get("delegate_debug_id_str")) / 3
        assert float(avg_ms) == pytest.approx(mean_ns / 1e6, rel=1e-4)
