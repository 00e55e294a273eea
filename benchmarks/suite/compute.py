"""Scenario 7: compute, every fixture family.

The same .pte in-process in each runtime, taking turns: this project's runtime
(tools/et-bench: set_inputs + execute in C++) and ExecuTorch's (`method.execute` from
Python, a few microseconds of binding overhead on its side). Portable-only programs
(our kernels against ExecuTorch's portable kernels) with one thread; XNNPACK-delegated
programs (Debian's XNNPACK plus our kernels for the nodes it lacks, against ExecuTorch's
bundled XNNPACK), also quantized and fp16, with one thread and with every CPU. Ratio: ours over ExecuTorch's p50,
below 1 is faster."""

from __future__ import annotations

import os

from . import harness as h

FAMILIES = ["mobilenet_v2", "mobilenet_v3", "cnn", "convnext", "unet", "mlp", "transformer_block", "vit",
            "transformer_encoder", "speech_encoder", "lstm", "gru"]
QUICK = ["transformer_block"]
# XNNPACK-only variants: quantized (qs8: static int8; qd8: dynamic int8 activations) and fp16.
VARIANTS = ["cnn_qs8_xnnpack", "mobilenet_v2_qs8_xnnpack", "mlp_qd8_xnnpack", "transformer_block_qd8_xnnpack",
            "cnn_fp16_xnnpack", "mlp_fp16_xnnpack", "transformer_block_fp16_xnnpack"]


def measure(peer: h.Worker, model: str, threads: int, seconds: float, repeats: int) -> dict:
    path, inputs = h.MODELS / f"{model}.pte", h.inputs_of(model)

    def ours():
        probe = h.et_bench(model, iterations=3, warmup=1, threads=threads)
        n = max(10, min(20000, int(seconds / max(probe["median_ms"] / 1e3, 1e-6))))
        out = h.et_bench(model, iterations=n, warmup=3, threads=threads)
        return {"p50_us": out["median_ms"] * 1e3, "p99_us": out["p99_ms"] * 1e3}

    def theirs():
        r = peer.ask(op="latency", who="executorch", model=path, inputs=inputs, mode="torch", seconds=seconds,
                     warmup=3, threads=threads, min_calls=10)
        return {"p50_us": r["p50_us"], "p99_us": r["p99_us"]}

    return h.interleaved(repeats, {"ours": ours, "executorch": theirs})


def run(s: h.Settings) -> h.Section:
    section = h.Section("compute", "7. Compute: our runtime vs ExecuTorch's, in-process", h.prose(__doc__))
    cpus = os.cpu_count() or 1
    families = QUICK if s.quick else FAMILIES
    seconds = 0.3 if s.quick else 1.0
    cases = [(f, "portable", 1) for f in families]
    threads = [cpus] if s.quick else sorted({1, cpus})
    cases += [(f"{f}_xnnpack", "XNNPACK", t) for f in families for t in threads]
    cases += [] if s.quick else [(v, "XNNPACK " + v.split("_")[-2], t) for v in VARIANTS for t in threads]
    rows = []
    with h.Worker(h.PEER_PY) as peer:
        for model, kind, threads in cases:
            r = measure(peer, model, threads, seconds, s.repeats)
            ratio = r["ours"]["p50_us"] / r["executorch"]["p50_us"]
            h.log(section.name, model, threads, f"{ratio:.2f}x")
            rows.append([model, kind, threads, f"{r['executorch']['p50_us']:.1f}", f"{r['ours']['p50_us']:.1f}",
                         f"{ratio:.2f}x"])
            section.metric(f"{model}.t{threads}.ours_p50_us", r["ours"]["p50_us"], "us")
            section.metric(f"{model}.t{threads}.executorch_p50_us", r["executorch"]["p50_us"], "us")
            section.metric(f"{model}.t{threads}.ratio", ratio, "x")
    section.table("p50 in microseconds; medians of the interleaved runs.",
                  ["model", "kind", "threads", "executorch.runtime (us)", "ours (us)", "ours / executorch"], rows)
    mem = h.et_bench("mobilenet_v2_xnnpack", iterations=3, warmup=1, threads=1, extra=["--instances", "20"])
    per_instance = (mem["rss_mb_all"] - mem["rss_mb_one"]) / (mem["instances"] - 1)
    section.metric("mobilenet_v2_xnnpack.mb_per_extra_instance", per_instance, "MiB")
    section.text += (f"\n\nResident memory of our runtime, one process, MobileNetV2 (XNNPACK): "
                     f"{mem['rss_mb_one']:.1f} MiB with one method instance, {mem['rss_mb_all']:.1f} MiB with "
                     f"{mem['instances']} (each executed once): {per_instance:.2f} MiB per extra instance, its "
                     "planned activations; the packed weights are shared.")
    return section
