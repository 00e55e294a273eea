"""PNG plots of a run (matplotlib: the benchmark environment only), drawn from the
metrics every scenario records. Each function returns the file it wrote, or None when
the run has nothing for it."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .latency import CONTENDERS  # noqa: E402


def _grouped(m: dict, section: str, rate: str) -> tuple[list, dict]:
    """Models of a latency section at a rate, and per contender its (p50, p99) per model."""
    models = []
    for key in m:
        g = re.fullmatch(rf"{section}\.(\w+)\.{rate}\.cpp_fast\.p50_us", key)
        if g:
            models.append(g[1])
    series = {c: [(m[f"{section}.{x}.{rate}.{c}.p50_us"]["value"], m[f"{section}.{x}.{rate}.{c}.p99_us"]["value"])
                  for x in models] for c in CONTENDERS}
    return models, series


def latency(m: dict, out: Path) -> str | None:
    cases = [("latency", "free", "free-running")] + [
        ("loops", r, r.replace("Hz", " Hz")) for r in sorted({k.split(".")[2] for k in m if k.startswith("loops.")
                                                             and k.split(".")[2].endswith("Hz")})]
    cases = [c for c in cases if _grouped(m, c[0], c[1])[0]]
    if not cases:
        return None
    fig, axes = plt.subplots(len(cases), 1, figsize=(11, 3.6 * len(cases)), squeeze=False)
    for ax, (section, rate, title) in zip(axes[:, 0], cases):
        models, series = _grouped(m, section, rate)
        width = 0.8 / len(series)
        for i, (c, values) in enumerate(series.items()):
            xs = [j + i * width for j in range(len(models))]
            ax.bar(xs, [v[0] for v in values], width, label=CONTENDERS[c])
            ax.scatter(xs, [v[1] for v in values], marker="_", color="black", s=60, zorder=3)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(models))], models)
        ax.set_yscale("log")
        ax.set_ylabel("microseconds")
        ax.set_title(f"Per-call latency, {title}: bars p50, dashes p99 (lower is better)")
    axes[0, 0].legend(fontsize=7, ncol=4)
    return _save(fig, out / "latency.png")


def ci(m: dict, out: Path) -> str | None:
    counts = sorted({int(k.split(".")[1][1:]) for k in m if re.fullmatch(r"ci\.n\d+\.executorch\.wall_s", k)})
    if not counts:
        return None
    fig, (wall, mem) = plt.subplots(1, 2, figsize=(11, 4))
    for kind, label in (("numpy", "etclient + numpy"), ("stdlib", "etclient only"),
                        ("executorch", "executorch.runtime")):
        wall.plot(counts, [m[f"ci.n{n}.{kind}.wall_s"]["value"] for n in counts], marker="o", label=label)
        mem.plot(counts, [m[f"ci.n{n}.{kind}.rss_mb"]["value"] for n in counts], marker="o", label=label)
    wall.set(xlabel="test processes", ylabel="seconds, launch to last exit", title="CI scenario: wall time")
    mem.set(xlabel="test processes", ylabel="MiB, sum of peak RSS (daemon included)", title="CI scenario: memory")
    wall.legend()
    return _save(fig, out / "ci.png")


def throughput(m: dict, out: Path) -> str | None:
    models = sorted({k.split(".")[1] for k in m if k.startswith("throughput.")})
    if not models:
        return None
    fig, axes = plt.subplots(1, len(models), figsize=(5.5 * len(models), 4), squeeze=False)
    for ax, model in zip(axes[0], models):
        counts = sorted({int(k.split(".")[2][1:]) for k in m if k.startswith(f"throughput.{model}.n")})
        for kind, label in (("cpp_fast", "C++ fast path"), ("py_fast", "etclient fast path"),
                            ("executorch", "executorch.runtime, N processes")):
            ax.plot(counts, [m[f"throughput.{model}.n{n}.{kind}.calls_per_s"]["value"] for n in counts],
                    marker="o", label=label)
        ax.set(xlabel="concurrent clients", ylabel="calls per second, all clients", title=model, xscale="log")
        ax.set_xticks(counts, [str(n) for n in counts])
        ax.legend(fontsize=8)
    return _save(fig, out / "throughput.png")


def compute(m: dict, out: Path) -> str | None:
    ratios = {k: v["value"] for k, v in m.items() if re.fullmatch(r"compute\.\w+\.t\d+\.ratio", k)}
    if not ratios:
        return None
    labels = [f"{k.split('.')[1]} ({k.split('.')[2]})" for k in ratios]
    fig, ax = plt.subplots(figsize=(11, 0.28 * len(ratios) + 1.5))
    colors = ["tab:orange" if "_xnnpack" in k else "tab:blue" for k in ratios]
    ax.barh(labels, list(ratios.values()), color=colors)
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set(xlabel="our time / ExecuTorch's time (below 1: faster); blue portable, orange XNNPACK",
           title="Compute, in-process, per fixture family and thread count")
    return _save(fig, out / "compute.png")


def _save(fig, path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path.name


def draw(metrics: dict, out: Path) -> list[str]:
    return [p for p in (latency(metrics, out), ci(metrics, out), throughput(metrics, out), compute(metrics, out)) if p]
