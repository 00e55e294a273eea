"""Scenario 3: client start.

A fresh process imports the client, loads MobileNetV2
(XNNPACK), runs it once and exits; the same with `executorch.runtime` in-process. Also
what the import alone costs. The daemon is warm (the model was loaded once before), as
it is for every process after the first."""

from __future__ import annotations

import json
import statistics
import subprocess
import textwrap
import time

from . import harness as h

MODEL = "mobilenet_v2_xnnpack"

PROBE = textwrap.dedent("""
    import json, sys, time
    t0 = time.perf_counter()
    def status(key):
        return int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1])
    base = status("VmRSS:")
    who, sock, model, npy = sys.argv[1:5]
    if who == "etclient":
        import etclient
        runtime = etclient.Runtime(sock)
        imported, import_kb = time.perf_counter(), status("VmRSS:") - base
        import numpy as np
        method = runtime.load_program(model).load_method()
        out = method.execute([np.load(npy)])[0]
    else:
        import torch
        from executorch.runtime import Runtime
        runtime = Runtime.get()
        imported, import_kb = time.perf_counter(), status("VmRSS:") - base
        import numpy as np
        method = runtime.load_program(model).load_method("forward")
        out = method.execute([torch.from_numpy(np.load(npy))])[0]
    assert tuple(out.shape)[-1] == 1000, out.shape
    done = time.perf_counter()
    maps = open("/proc/self/maps").read()
    print(json.dumps({"import_ms": (imported - t0) * 1e3, "import_mb": import_kb / 1024,
                      "first_result_ms": (done - t0) * 1e3, "peak_rss_mb": status("VmHWM:") / 1024,
                      "torch_mapped": "libtorch" in maps,
                      "runtime_mapped": "_portable_lib" in maps or "libexecutorch" in maps}))
""")


def fresh_process(python, who: str, sock) -> dict:
    started = time.perf_counter()
    done = subprocess.run([str(python), "-c", PROBE, who, str(sock), str(h.MODELS / f"{MODEL}.pte"),
                           str(h.inputs_of(MODEL)[0])], capture_output=True, text=True, timeout=300)
    wall_ms = (time.perf_counter() - started) * 1e3
    if done.returncode != 0:
        raise RuntimeError(f"{who} probe failed:\n{done.stderr[-3000:]}")
    r = json.loads(done.stdout.strip().splitlines()[-1])
    r["process_ms"] = wall_ms
    return r


def run(s: h.Settings) -> h.Section:
    section = h.Section("startup", "3. Client start", h.prose(__doc__))
    repeats = 3 if s.quick else 7
    with h.Daemon() as daemon:
        fresh_process(h.CLIENT_PY, "etclient", daemon.socket)  # discarded: the daemon loads the model once,
        fresh_process(h.PEER_PY, "executorch", daemon.socket)  # and both sides' files are in the page cache
        runs = {"etclient": [], "executorch": []}
        for _ in range(repeats):
            runs["etclient"].append(fresh_process(h.CLIENT_PY, "etclient", daemon.socket))
            runs["executorch"].append(fresh_process(h.PEER_PY, "executorch", daemon.socket))
    med = {who: {k: statistics.median(float(r[k]) for r in rs) for k in rs[0] if k.endswith(("ms", "mb"))}
           for who, rs in runs.items()}
    mapped = {who: (any(r["torch_mapped"] for r in rs), any(r["runtime_mapped"] for r in rs))
              for who, rs in runs.items()}
    ours, theirs = med["etclient"], med["executorch"]
    rows = []
    for key, label in (("import_ms", "import (ms)"), ("import_mb", "import, resident memory (MiB)"),
                       ("first_result_ms", "start to first result, in the process (ms)"),
                       ("process_ms", "whole process, spawn to exit (ms)"),
                       ("peak_rss_mb", "peak resident memory (MiB)")):
        rows.append([label, f"{ours[key]:.1f}", f"{theirs[key]:.1f}", f"{ours[key] / theirs[key]:.3f}x"])
        section.metric(key, ours[key], "ms" if key.endswith("ms") else "MiB")
        section.metric(f"executorch.{key}", theirs[key], "ms" if key.endswith("ms") else "MiB")
    rows.append(["torch mapped / ExecuTorch runtime mapped", "{} / {}".format(*map(yes, mapped["etclient"])),
                 "{} / {}".format(*map(yes, mapped["executorch"])), ""])
    section.metric("torch_mapped", float(mapped["etclient"][0]), "bool")
    section.metric("runtime_mapped", float(mapped["etclient"][1]), "bool")
    section.table(f"Medians of {repeats} fresh processes each, taking turns. Ratio: etclient over "
                  "executorch.runtime.", ["", "etclient (daemon)", "executorch.runtime (in-process)", "ratio"], rows)
    return section


def yes(flag: bool) -> str:
    return "yes" if flag else "no"
