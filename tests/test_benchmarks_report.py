"""benchmarks/run's reporting (benchmarks/suite/report.py and its command line): the
targets table, the comparison of two runs and the refusals of bad options. The
measurements themselves need the peer environment and a quiet machine, so they run in
benchmarks/run, never here; this checks what turns their numbers into verdicts."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.suite import report  # noqa: E402


def run_of(metrics: dict, date: str = "2026-12-01 10:00 UTC", revision: str = "abc1234") -> dict:
    return {"meta": {"date": date, "revision": revision, "command": "benchmarks/run", "minutes": 1.0,
                     "machine": "test machine", "versions": "v", "repeats": 3, "json": "results/latest.json"},
            "sections": [{"name": "s", "title": "S", "text": "about S", "seconds": 1.0,
                          "tables": [{"caption": "cap", "columns": ["a", "b"], "rows": [[1, 2]]}],
                          "metrics": {k: {"value": v[0], "unit": v[1], "better": v[2]}
                                      for k, v in metrics.items()}, "plots": []}]}


def verdicts(metrics: dict) -> dict:
    return {row[1]: (row[2], row[3]) for row in report.targets_table(run_of(metrics)["sections"][0]["metrics"])}


def test_a_bound_is_met_missed_or_not_measured():
    target = "C++ client round trip on a tiny model under 10 us (add, fast path, p50)"
    assert verdicts({"latency.add.free.cpp_fast.p50_us": (3.2, "us", "lower")})[target] == ("3.2 us", "met")
    assert verdicts({"latency.add.free.cpp_fast.p50_us": (12.0, "us", "lower")})[target] == ("12 us", "**missed**")
    assert verdicts({})[target] == ("not measured by this run", "-")


def test_a_ratio_target_divides_ours_by_the_peer():
    target = ("Python client per-call time on a tiny model (add, p50) at most 1.5x in-process "
              "executorch.runtime")
    met = verdicts({"latency.add.free.py_fast.p50_us": (6.0, "us", "lower"),
                    "latency.add.free.executorch.p50_us": (5.0, "us", "lower")})[target]
    assert met == ("1.20x (6 / 5)", "met")
    missed = verdicts({"latency.add.free.py_fast.p50_us": (9.0, "us", "lower"),
                       "latency.add.free.executorch.p50_us": (5.0, "us", "lower")})[target]
    assert missed[1] == "**missed**"


def test_every_family_target_names_the_worst_and_counts():
    xnn = "XNNPACK-delegated programs at most 1.0x ExecuTorch's XNNPACK time, every family"
    portable = ("Portable-only programs at least 3x faster than ExecuTorch's portable kernels (ratio at most "
                "0.33x), every family")
    v = verdicts({"compute.cnn_xnnpack.t1.ratio": (0.8, "x", "lower"),
                  "compute.vit_xnnpack.t2.ratio": (1.2, "x", "lower"),
                  "compute.cnn.t1.ratio": (0.2, "x", "lower"),
                  "compute.vit.t1.ratio": (0.3, "x", "lower")})
    assert v[xnn] == ("worst 1.20x (vit_xnnpack, t2); 1 of 2 within", "**missed**")
    assert v[portable] == ("worst 0.30x (vit, t1); 2 of 2 within", "met")


def test_a_target_of_several_parts_needs_them_all():
    target = "1 kHz loop, C++ fast path: p99 under 50 us (add and MLP)"
    v = verdicts({"loops.add.1000Hz.cpp_fast.p99_us": (20.0, "us", "lower"),
                  "loops.mlp.1000Hz.cpp_fast.p99_us": (80.0, "us", "lower")})
    assert v[target] == ("add 20 us; MLP 80 us", "**missed**")
    assert verdicts({"loops.add.1000Hz.cpp_fast.p99_us": (20.0, "us", "lower")})[target][1] == "-"


def test_compare_sorts_better_and_worse_by_each_metrics_direction():
    old = run_of({"lat": (100.0, "us", "lower"), "rate": (1000.0, "1/s", "higher"),
                  "steady": (50.0, "us", "lower"), "gone": (1.0, "us", "lower")})
    new = run_of({"lat": (50.0, "us", "lower"), "rate": (500.0, "1/s", "higher"),
                  "steady": (52.0, "us", "lower"), "added": (1.0, "us", "lower")}, revision="def5678")
    text = "\n".join(report.compare(old, new, threshold=0.10))
    assert "1 better, 1 worse, 1 within 10%, 2 in one run only" in text, text
    better, worse = text.split("| worse |")
    assert "| lat | 100 us | 50 us | 0.50x |" in better
    assert "| rate | 1000 1/s | 500 1/s | 0.50x |" in worse
    assert "steady" not in text


def test_compare_a_flag_or_a_zero_goes_by_its_direction():
    old = run_of({"torch_mapped": (1.0, "bool", "lower"), "errors": (0.0, "", "lower")})
    new = run_of({"torch_mapped": (0.0, "bool", "lower"), "errors": (5.0, "", "lower")})
    text = "\n".join(report.compare(old, new))
    better, worse = text.split("| worse |")
    assert "| torch_mapped | 1 bool | 0 bool | 0.00x |" in better, text
    assert "| errors | 0  | 5  | from 0 |" in worse, text


def test_the_keys_scenarios_record_are_the_keys_targets_read():
    from benchmarks.suite import harness, latency

    stats = {"p50_us": 3.0, "p99_us": 30.0, "max_us": 90.0, "daemon_cpu_pct": 5.0}
    rows = [("add", 0, {c: dict(stats) for c in latency.CONTENDERS})]
    section = harness.Section("latency", "t")
    latency.record(section, rows)
    loops = harness.Section("loops", "t")
    latency.record(loops, [("add", 1000, {c: dict(stats) for c in latency.CONTENDERS}),
                           ("mlp", 1000, {c: dict(stats) for c in latency.CONTENDERS})])
    v = {row[1]: row[3] for row in report.targets_table({**section.metrics, **loops.metrics})}
    assert v["C++ client round trip on a tiny model under 10 us (add, fast path, p50)"] == "met"
    assert v["1 kHz loop, C++ fast path: p99 under 50 us (add and MLP)"] == "met"
    assert v["gRPC-only path under 150 us (add, C++ over gRPC, p50)"] == "met"


def test_markdown_holds_targets_sections_and_plots(tmp_path):
    out = tmp_path / "RESULTS.md"
    report.write_markdown(out, run_of({}), ["results/plots/latency.png"], ["compared"])
    text = out.read_text()
    for piece in ("## Targets", "## Against the previous run", "compared", "![latency](results/plots/latency.png)",
                  "## S", "about S", "| a | b |", "| 1 | 2 |"):
        assert piece in text, piece


def cli(*args):
    return subprocess.run([str(ROOT / "benchmarks" / "run"), *args], capture_output=True, text=True, timeout=120)


def test_compare_two_files_from_the_command_line(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(run_of({"lat": (100.0, "us", "lower")})))
    b.write_text(json.dumps(run_of({"lat": (300.0, "us", "lower")}, revision="def5678")))
    done = cli("--compare", str(a), str(b))
    assert done.returncode == 0, done.stderr
    assert "0 better, 1 worse" in done.stdout and "| lat | 100 us | 300 us | 3.00x |" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--only", "latency,nonesuch"], "--only: unknown scenario nonesuch"),
    (["--compare", "/nonexistent/old.json", "/nonexistent/new.json"], "--compare: /nonexistent/old.json does not exist"),
])
def test_bad_options_are_refused_by_name(args, message):
    done = subprocess.run([sys.executable, "-m", "benchmarks.suite", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_a_file_that_is_not_a_run_is_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    done = cli("--compare", str(bad), str(bad))
    assert done.returncode != 0 and "is not a results file of benchmarks/run" in done.stderr
