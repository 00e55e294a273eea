"""What a run leaves behind: RESULTS.md (targets, plots, every scenario's tables), the
raw numbers as JSON, PNG plots, and the comparison of two runs' JSON (--compare)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path
from typing import Callable

# --- targets ---------------------------------------------------------------------------


@dataclasses.dataclass
class Target:
    source: str  # where the target is set
    text: str  # the target as it is set
    check: Callable[[dict], tuple[str, bool] | None]  # metrics -> (measured, met), None: not measured


def _value(m: dict, key: str) -> float | None:
    return m[key]["value"] if key in m else None


def _bound(key: str, limit: float, unit: str, at_most: bool = True, label: str = "") -> Callable:
    def check(m: dict):
        v = _value(m, key)
        if v is None:
            return None
        shown = ("yes" if v else "no") if unit == "bool" else f"{v:.3g}{'' if unit in ('x', 'x less') else ' '}{unit}"
        return f"{label}{shown}", (v <= limit if at_most else v >= limit)
    return check


def _ratio(num: str, den: str, limit: float, label: str = "") -> Callable:
    def check(m: dict):
        a, b = _value(m, num), _value(m, den)
        if a is None or b is None:
            return None
        return f"{label}{a / b:.2f}x ({a:.3g} / {b:.3g})", a / b <= limit
    return check


def _all(*checks: Callable) -> Callable:
    def check(m: dict):
        results = [c(m) for c in checks]
        if any(r is None for r in results):
            return None
        return "; ".join(r[0] for r in results), all(r[1] for r in results)
    return check


def _worst_ratio(pattern: str, limit: float) -> Callable:
    """The largest of the metrics whose key matches `pattern`, with its model."""
    def check(m: dict):
        found = {k: v["value"] for k, v in m.items() if re.fullmatch(pattern, k)}
        if not found:
            return None
        key = max(found, key=found.get)
        met = sum(v <= limit for v in found.values())
        return (f"worst {found[key]:.2f}x ({key.split('.')[1]}, {key.split('.')[2]}); "
                f"{met} of {len(found)} within", found[key] <= limit)
    return check


def _worst_vs_peer(pattern: str, peer_key: str, peer_name: str):
    """A check: each metric matching `pattern` over the one `peer_key` names (the
    pattern's groups format it), the worst ratio, met when at least 1."""
    def check(m: dict):
        found = {}
        for k, v in m.items():
            g = re.fullmatch(pattern, k)
            peer = m.get(peer_key.format(*g.groups())) if g else None
            if peer:
                found[" ".join(g.groups())] = v["value"] / peer["value"]
        if not found:
            return None
        worst = min(found, key=found.get)
        return f"worst {found[worst]:.2f}x ({worst}), vs {peer_name}", found[worst] >= 1.0
    return check


_llm_vs_peer = _worst_vs_peer(r"llm\.(\w+)\.fast\.tokens_per_s", "llm.{}.executorch.tokens_per_s",
                              "executorch.runtime's greedy loop")
_generate_vs_runner = _worst_vs_peer(r"llm_generate\.(\w+)\.daemon\.(prefill|decode)_tokens_per_s",
                                     "llm_generate.{}.runner.{}_tokens_per_s", "ExecuTorch's TextLLMRunner")


def _extra_session(m: dict):
    rows = []
    for k, v in m.items():
        g = re.fullmatch(r"llm_generate\.(\w+)\.extra_session_kb", k)
        if g:
            kv = m.get(f"llm_generate.{g[1]}.kv_cache_kb", {}).get("value", 0)
            weights = m.get(f"llm_generate.{g[1]}.pte_kb", {}).get("value", 0)
            rows.append((g[1], v["value"], kv, weights))
    if not rows:
        return None
    text = "; ".join(f"{r}: {e / 1024:.1f} MiB (KV cache {kv / 1024:.1f} MiB, weights {w / 1024:.0f} MiB)"
                     for r, e, kv, w in rows)
    return text, all(e < w / 2 for _, e, _, w in rows)



def _busy(model: str, rate: str, who: str, q: str, limit: float, label: str) -> Callable:
    return _ratio(f"contention.busy.{model}.{rate}.{who}.{q}", f"contention.busy.{model}.{rate}.executorch.{q}",
                  limit, label=label)


TARGETS = [
    Target("DESIGN 7", "Python client per-call time on a tiny model (add, p50) at most 1.5x in-process "
           "executorch.runtime", _ratio("latency.add.free.py_fast.p50_us", "latency.add.free.executorch.p50_us", 1.5)),
    Target("DESIGN 7", "C++ client round trip on a tiny model under 10 us (add, fast path, p50)",
           _bound("latency.add.free.cpp_fast.p50_us", 10, "us")),
    Target("DESIGN 7", "gRPC-only path under 150 us (add, C++ over gRPC, p50)",
           _bound("latency.add.free.cpp_grpc.p50_us", 150, "us")),
    Target("DESIGN 7", "Client import under 50 ms", _bound("startup.import_ms", 50, "ms")),
    Target("DESIGN 7", "Client import under 30 MB resident", _bound("startup.import_mb", 30, "MiB")),
    Target("DESIGN 7", "No torch and no runtime mapped in the client process",
           _all(_bound("startup.torch_mapped", 0, "bool", label="torch mapped: "),
                _bound("startup.runtime_mapped", 0, "bool", label="runtime mapped: "))),
    Target("DESIGN 7", "24 MiB input in shared memory: the call under 1.1x the model's own compute",
           _all(_bound("large_input.cpp_fast_shm.overhead", 1.1, "x", label="C++ "),
                _bound("large_input.py_fast_shm.overhead", 1.1, "x", label="Python "))),
    Target("DESIGN 7", "CI scenario, 16 processes: at least 20x less wall time than in-process (test processes "
           "with numpy, and with etclient only)",
           _all(_bound("ci.n16.numpy.wall_ratio", 20, "x less", at_most=False, label="with numpy "),
                _bound("ci.n16.stdlib.wall_ratio", 20, "x less", at_most=False, label="etclient only "))),
    Target("DESIGN 7", "CI scenario, 16 processes: at least 20x less memory, daemon included (test processes "
           "with numpy, and with etclient only)",
           _all(_bound("ci.n16.numpy.rss_ratio", 20, "x less", at_most=False, label="with numpy "),
                _bound("ci.n16.stdlib.rss_ratio", 20, "x less", at_most=False, label="etclient only "))),
    Target("DESIGN 7", "1 kHz loop, C++ fast path: p99 under 50 us (add and MLP)",
           _all(_bound("loops.add.1000Hz.cpp_fast.p99_us", 50, "us", label="add "),
                _bound("loops.mlp.1000Hz.cpp_fast.p99_us", 50, "us", label="MLP "))),
    Target("issue 43", "Busy machine (as many burners as CPUs): fast path at 1 kHz, p50 and p99 at most 2x "
           "executorch.runtime's under the same load (add and MLP)",
           _all(*[_busy(m, "1000Hz", "cpp_fast", q, 2.0, f"{m} {q[:3]} ") for m in ("add", "mlp")
                  for q in ("p50_us", "p99_us")])),
    Target("issue 43", "Busy machine: fast path at 1 kHz misses no period (add and MLP)",
           _all(_bound("contention.busy.add.1000Hz.cpp_fast.missed", 0, "calls", label="add "),
                _bound("contention.busy.mlp.1000Hz.cpp_fast.missed", 0, "calls", label="MLP "))),
    Target("issue 43", "Busy machine: MobileNetV2 (XNNPACK) at 50 Hz through the daemon, p50 and p99 at most "
           "1.2x executorch.runtime's; in-process (ours) p99 at most 1.2x",
           _all(_busy("mobilenet_v2_xnnpack", "50Hz", "cpp_fast", "p50_us", 1.2, "p50 "),
                _busy("mobilenet_v2_xnnpack", "50Hz", "cpp_fast", "p99_us", 1.2, "p99 "),
                _busy("mobilenet_v2_xnnpack", "50Hz", "in_process", "p99_us", 1.2, "in-process p99 "))),
    Target("issue 43", "Busy machine, real-time class: add and MLP at 1 kHz for 60 s, p99 under 100 us and no "
           "missed period",
           _all(*[_bound(f"contention.busy.{m}.1000Hz.rt_minute.{q}", limit, unit, label=f"{m} {q} ")
                  for m in ("add", "mlp") for q, limit, unit in (("p99_us", 100, "us"), ("missed", 0, "calls"))])),
    Target("DESIGN 7", "Idle daemon with 64 sessions under 1% of a core",
           _bound("loops.idle64.daemon_cpu_pct", 1, "%")),
    Target("DESIGN 7", "XNNPACK-delegated programs at most 1.0x ExecuTorch's XNNPACK time, every family",
           _worst_ratio(r"compute\.\w+_xnnpack\.t\d+\.ratio", 1.0)),
    Target("DESIGN 7", "Portable-only programs at least 3x faster than ExecuTorch's portable kernels "
           "(ratio at most 0.33x), every family", _worst_ratio(r"compute\.(?!\w+_xnnpack)\w+\.t\d+\.ratio", 1 / 3)),
    Target("issue 26", "LLM decode through the daemon at least as fast as ExecuTorch (tokens/s, fast path)",
           _llm_vs_peer),
    Target("issue 26", "LLM generation through the daemon at least as fast as ExecuTorch's LLM runner "
           "(prefill and decode tokens/s, every recipe)", _generate_vs_runner),
    Target("issue 26", "An extra LLM session costs its KV cache, not the weights (under half the weights)",
           _extra_session),
    Target("issue 21", "Soak: 64 clients for 10 minutes, zero errors, RSS and descriptors flat (its own command, "
           "`benchmarks/soak`: [results/soak.md](results/soak.md))", lambda m: None),
]


def targets_table(metrics: dict) -> list[list[str]]:
    rows = []
    for t in TARGETS:
        r = t.check(metrics)
        rows.append([t.source, t.text, "not measured by this run" if r is None else r[0],
                     "-" if r is None else ("met" if r[1] else "**missed**")])
    return rows


# --- markdown --------------------------------------------------------------------------


def markdown_table(columns: list, rows: list) -> list[str]:
    out = ["| " + " | ".join(map(str, columns)) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    return out


def write_markdown(path: Path, run: dict, plots: list[str], comparison: list[str] | None) -> None:
    meta = run["meta"]
    metrics = all_metrics(run)
    lines = ["# Benchmark results", "",
             f"Command: `{meta['command']}`, {meta['date']}, {meta['minutes']:.1f} minutes. Machine: "
             f"{meta['machine']}. Versions: {meta['versions']}.", "",
             "Every scenario runs its contenders interleaved (A B C A B C ...) after a warm-up, "
             f"{meta['repeats']} times unless its text says otherwise; cells are medians of those runs "
             "(largest max). Raw numbers: "
             f"[{meta['json']}]({meta['json']}). The scenarios' code: `benchmarks/suite/`.", "",
             "## Targets", ""]
    lines += markdown_table(["set by", "target", "measured", ""], targets_table(metrics))
    if comparison:
        lines += ["", "## Against the previous run", ""] + comparison
    if plots:
        lines += ["", "## Plots", ""] + [f"![{Path(p).stem}]({p})" for p in plots]
    for s in run["sections"]:
        lines += ["", f"## {s['title']}", "", s["text"], ""]
        for t in s["tables"]:
            lines += [t["caption"], ""] + markdown_table(t["columns"], t["rows"]) + [""]
        lines.append(f"_{s['seconds']:.0f} s._")
    path.write_text("\n".join(lines) + "\n")


def all_metrics(run: dict) -> dict:
    out = {}
    for s in run["sections"]:
        out.update(s["metrics"])
    return out


# --- comparison ------------------------------------------------------------------------


def compare(old: dict, new: dict, threshold: float = 0.10) -> list[str]:
    """Markdown lines: every metric that moved by more than `threshold` between two runs,
    faster (better) first, each with both values."""
    a, b = all_metrics(old), all_metrics(new)
    better, worse, same = [], [], 0
    for key in sorted(set(a) & set(b)):
        va, vb, unit = a[key]["value"], b[key]["value"], b[key]["unit"]
        if va == vb or (va != 0 and abs(vb / va - 1) <= threshold):
            same += 1
            continue
        change = vb / va if va != 0 else math.inf  # from 0 (or a flag set): no ratio
        improved = vb < va if b[key]["better"] == "lower" else vb > va
        (better if improved else worse).append((change, key, va, vb, unit))
    lines = [f"{old['meta']['date']} ({old['meta']['revision']}) to {new['meta']['date']} "
             f"({new['meta']['revision']}): {len(better)} better, {len(worse)} worse, {same} within "
             f"{threshold:.0%}, {len(set(a) ^ set(b))} in one run only.", ""]
    for title, items in (("better", better), ("worse", worse)):
        if items:
            lines += markdown_table([title, "before", "after", "change"],
                                    [[k, f"{va:.4g} {u}", f"{vb:.4g} {u}", _change(c)]
                                     for c, k, va, vb, u in sorted(items, key=_size, reverse=True)]) + [""]
    return lines


def _change(c: float) -> str:
    return "from 0" if math.isinf(c) else f"{c:.2f}x"


def _size(item: tuple) -> float:
    """How far a change moved, alike for halving and doubling."""
    c = item[0]
    return math.inf if math.isinf(c) or c <= 0 else abs(math.log(c))


def load(path: Path) -> dict:
    run = json.loads(Path(path).read_text())
    if "sections" not in run or "meta" not in run:
        raise SystemExit(f"{path} is not a results file of benchmarks/run (no 'sections' or 'meta')")
    return run
