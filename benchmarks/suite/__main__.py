"""benchmarks/run: every scenario, side by side with its peers, into RESULTS.md, JSON
and plots. Run through benchmarks/run (it sets up the build and the environments);
`benchmarks/run --help` lists the options."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
import time
import traceback
from pathlib import Path

from . import harness as h
from . import report

SCENARIOS = {  # name -> (module, function): the order they run in
    "latency": ("latency", "free_running"), "loops": ("latency", "loops"), "startup": ("startup", "run"),
    "ci": ("ci", "run"), "large_input": ("large_input", "run"), "throughput": ("throughput", "run"),
    "compute": ("compute", "run"), "kserve": ("kserve", "run"), "llm": ("llm", "run"),
    "llm_generate": ("llm_generate", "run"), "contention": ("contention", "run")}


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="benchmarks/run", description="Runs the benchmark scenarios against their peers and writes "
        "RESULTS.md, the raw numbers as JSON and PNG plots.",
        epilog="Scenarios: " + ", ".join(SCENARIOS) + ". A full run takes about 45 minutes on 2 CPUs; "
        "--quick about 3.")
    ap.add_argument("--quick", action="store_true", help="a short subset of every scenario (writes into "
                    "build/bench-quick unless --out says otherwise; a run of some scenarios writes into "
                    "build/bench-partial, so benchmarks/RESULTS.md always holds a whole run)")
    ap.add_argument("--only", help="comma-separated scenarios to run")
    ap.add_argument("--skip", help="comma-separated scenarios not to run")
    ap.add_argument("--out", type=Path, help="where RESULTS.md goes (default: benchmarks/, or "
                    "build/bench-quick with --quick); JSON and plots go into its results/")
    ap.add_argument("--compare", nargs="+", metavar="JSON", help="OLD.json: after the run, print what got "
                    "faster or slower since OLD; OLD.json NEW.json: compare two runs without running")
    ap.add_argument("--render", type=Path, metavar="JSON", help="write RESULTS.md and the plots again from a "
                    "results file (after the report's code changed), without running")
    ap.add_argument("--threshold", type=float, default=0.10, help="a change smaller than this is no change "
                    "(default 0.10)")
    args = ap.parse_args(argv)
    chosen = list(SCENARIOS)
    for flag, keep in (("only", True), ("skip", False)):
        names = [n for n in (getattr(args, flag) or "").split(",") if n]
        unknown = [n for n in names if n not in SCENARIOS]
        if unknown:
            ap.error(f"--{flag}: unknown scenario {', '.join(unknown)} (known: {', '.join(SCENARIOS)})")
        if names:
            chosen = [n for n in chosen if (n in names) == keep]
    args.scenarios = chosen
    if args.compare and len(args.compare) > 2:
        ap.error("--compare takes OLD.json, or OLD.json NEW.json")
    for p in args.compare or []:
        if not Path(p).is_file():
            ap.error(f"--compare: {p} does not exist")
    return args


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine())
    mem_kb = int(next(line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")))
    return f"{cpu}, {os.cpu_count()} CPUs, {mem_kb / 2**20:.0f} GiB, Linux {platform.release()}"


def revision() -> str:
    def git(*a):
        return subprocess.run(["git", "-C", str(h.ROOT), *a], capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("+changes" if git("status", "--porcelain", "--untracked-files=no")
                                                  else "")


def versions() -> str:
    def pkg(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "absent"
    xnn = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libxnnpack-dev"], capture_output=True,
                         text=True).stdout or "unknown"
    return (f"et-serverd {revision()}, executorch {pkg('executorch')}, torch {pkg('torch')}, numpy "
            f"{pkg('numpy')}, Python {platform.python_version()}, Debian XNNPACK {xnn}")


def run_scenarios(args: argparse.Namespace, settings: h.Settings) -> tuple[list, list]:
    sections, failures = [], []
    for name in args.scenarios:
        module, function = SCENARIOS[name]
        print(f"== {name}", file=sys.stderr, flush=True)
        started = time.monotonic()
        try:
            section = getattr(importlib.import_module(f".{module}", __package__), function)(settings)
        except Exception as e:  # one scenario's failure is reported; the others still run
            traceback.print_exc()
            failures.append(name)
            section = h.Section(name, f"{name}: FAILED", f"This scenario failed: `{type(e).__name__}: "
                                f"{str(e).splitlines()[0] if str(e) else ''}`. The log above the run has the rest.")
        section.seconds = time.monotonic() - started
        print(f"   {name}: {section.seconds:.0f} s", file=sys.stderr, flush=True)
        sections.append(dataclasses.asdict(section))
    return sections, failures


def write_report(run: dict, out: Path, results: Path, comparison: list[str] | None) -> bool:
    """RESULTS.md and the plots of a run; False when the plots failed (the tables are
    written all the same)."""
    drawn, ok = [], True
    try:
        from . import plots

        drawn = [f"results/plots/{p}" for p in plots.draw(report.all_metrics(run), results / "plots")]
    except Exception:
        traceback.print_exc()
        ok = False
    report.write_markdown(out / "RESULTS.md", run, drawn, comparison)
    print(f"\nwrote {out / 'RESULTS.md'}, {len(drawn)} plots ({run['meta']['minutes']:.1f} minutes of measuring)")
    for row in report.targets_table(report.all_metrics(run)):
        print(f"  {row[3]:>12}  {row[1]}: {row[2]}")
    if comparison:
        print("\n" + "\n".join(comparison))
    return ok


def main(argv: list[str]) -> int:
    args = parse(argv)
    if args.compare and len(args.compare) == 2:
        print("\n".join(report.compare(report.load(args.compare[0]), report.load(args.compare[1]), args.threshold)))
        return 0
    if args.render:
        run = report.load(args.render)
        out = args.out or args.render.resolve().parent.parent
        write_report(run, out, out / "results", None)
        return 0
    settings = h.Settings.make(args.quick)
    full = not args.quick and args.scenarios == list(SCENARIOS)
    out = args.out or (h.ROOT / "benchmarks" if full else h.BUILD / ("bench-quick" if args.quick else "bench-partial"))
    results = out / "results"
    results.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    sections, failures = run_scenarios(args, settings)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    run = {"meta": {"command": shlex.join(["benchmarks/run", *argv]), "date": stamp,
                    "minutes": (time.monotonic() - started) / 60, "machine": machine(), "versions": versions(),
                    "revision": revision(), "repeats": settings.repeats, "quick": settings.quick,
                    "json": "results/latest.json"},
           "sections": sections}
    (results / "latest.json").write_text(json.dumps(run, indent=1) + "\n")
    history = results / "history"
    previous = sorted(history.glob("*.json")) if history.exists() else []
    if full and not failures:  # history holds whole runs only, so each compares with a whole run
        history.mkdir(exist_ok=True)
        (history / f"{time.strftime('%Y%m%d-%H%M', time.gmtime())}-{run['meta']['revision']}.json").write_text(
            json.dumps(run, indent=1) + "\n")
    comparison = None
    old = report.load(Path(args.compare[0])) if args.compare else (report.load(previous[-1]) if previous else None)
    if old is not None:
        comparison = report.compare(old, run, args.threshold)
    if not write_report(run, out, results, comparison):
        failures.append("plots")
    if failures:
        print(f"\nFAILED scenarios: {', '.join(failures)} (their errors are above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
