#!/usr/bin/env python3
"""Run ExecuTorch's own Python API tests against ExecuTorch and against etclient.

The test files are taken unchanged from the installed `executorch` package and run
with pytest, one subprocess per file per mode:

  executorch   the files as they are, on the real ExecuTorch runtime
  etclient     a copy of each file with only its imports of executorch.runtime and
               executorch.extension.pybindings.portable_lib switched to etclient
  zero-change  the files as they are, under `python -m etclient run-as-executorch`

Usage: .venv-export/bin/python tests/compat/run_executorch_api_tests.py
           [--mode executorch|etclient|zero-change|all] [--json OUT] [-k EXPR]
Exit status: 0 when it ran (the counts are the result), 2 when there is no executorch.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_FILES = [  # paths inside the executorch package
    "runtime/test/test_runtime.py",
    "runtime/test/test_runtime_etdump_gen.py",
    "runtime/test/test_runtime_xnnpack.py",
    "extension/pybindings/test/test_pybindings.py",
    "extension/pybindings/test/test_backend_pybinding.py",
]
MODES = ["executorch", "etclient", "zero-change"]
TITLES = {"executorch": "passed on ExecuTorch",
          "etclient": "passed on etclient (import switched)",
          "zero-change": "passed zero-change"}

# The etclient mode's rewrite: imports (and dotted references) of the two runtime
# modules, nothing else. make_test and every other executorch module stay the real ones.
REWRITES = [
    (r"^(\s*)from executorch\.runtime import\b", r"\1from etclient import"),
    (r"^(\s*)from executorch import runtime\b", r"\1import etclient as runtime"),
    (r"^(\s*)import executorch\.runtime as\b", r"\1import etclient as"),
    (r"^(\s*)import executorch\.runtime\s*$", r"\1import etclient"),
    (r"\bexecutorch\.runtime\.", "etclient."),
    (r"^(\s*)from executorch\.extension\.pybindings import (\(?\s*)portable_lib\b",
     r"\1from etclient import \2portable_lib"),
    (r"\bexecutorch\.extension\.pybindings\.portable_lib\b", "etclient.portable_lib"),
]

PROBE = """import importlib
for name in ("executorch.runtime", "executorch.extension.pybindings.portable_lib"):
    try:
        m = importlib.import_module(name)
        print(f"  {name} -> {m.__name__} (names from {getattr(m, '__etclient__', None) or getattr(m, '__file__', None)})")
    except Exception as e:
        print(f"  {name} -> import failed: {type(e).__name__}: {e}")
"""


def switch_imports(text: str) -> str:
    for pattern, repl in REWRITES:
        text = re.sub(pattern, repl, text, flags=re.M)
    return text


def first_line(text: str | None) -> str:
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[0] if lines else ""


def parse_junit(xml: Path) -> dict:
    """Counts and the failing/skipped tests from pytest's --junitxml."""
    res = {"tests": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0, "collect_errors": 0,
           "failures": [], "skips": []}
    for case in ET.parse(xml).iter("testcase"):
        cls = case.get("classname") or ""
        name = f"{cls.split('.')[-1]}::{case.get('name')}" if cls else case.get("name")
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        skip = case.find("skipped")
        if problem is not None:
            msg = first_line(problem.get("message"))
            if not msg or msg == "collection failure":  # the exception is in the text
                e_lines = [l for l in (problem.text or "").splitlines() if l.startswith("E ")]
                msg = (e_lines[-1][1:].strip() if e_lines else msg) or first_line(problem.text)
            kind = "failed" if problem.tag == "failure" else "errors"
            if problem.get("message") == "collection failure":
                kind, name = "collect_errors", "(collection of the file)"
            else:
                res["tests"] += 1
            res[kind] += 1
            res["failures"].append([name, msg])
            continue
        res["tests"] += 1
        if skip is not None:
            res["skipped"] += 1
            res["skips"].append([name, first_line(skip.get("message")) or first_line(skip.text)])
        else:
            res["passed"] += 1
    return res


def run_pytest(cmd_prefix, test_path, name, mode, args, env, work, out) -> dict:
    stem = f"{mode}__{name.replace('/', '_').removesuffix('.py')}"
    xml, log = out / f"{stem}.xml", out / f"{stem}.log"
    xml.unlink(missing_ok=True)
    cmd = [*cmd_prefix, "-m", "pytest", str(test_path), "-q", "-p", "no:cacheprovider",
           "-c", str(work / "pytest.ini"), "--rootdir", str(work), f"--junitxml={xml}"]
    if mode == "executorch":
        cmd += ["-p", "no:etclient"]  # nothing of etclient in the reference run
    if args.k:
        cmd += ["-k", args.k]
    start = time.monotonic()
    with open(log, "w") as logf:
        proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, env=env,
                                cwd=work, start_new_session=True)
        try:
            rc = proc.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
    res = {"status": "ok", "rc": rc, "seconds": round(time.monotonic() - start, 1),
           "log": str(log)}
    if rc is None:
        res["status"] = f"timeout after {args.timeout}s"
    elif not xml.exists():
        tail = [l for l in log.read_text(errors="replace").splitlines() if l.strip()][-1:]
        res["status"] = f"no result (rc={rc}): {tail[0] if tail else ''}"
    else:
        res.update(parse_junit(xml))
    return res


def daemon_pids(sock: Path) -> set[int]:
    """Processes holding the socket (via /proc/net/unix inodes) or naming it in argv."""
    inodes = set()
    try:
        for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
            f = line.split()
            if len(f) >= 8 and f[7] == str(sock):
                inodes.add(f"socket:[{f[6]}]")
    except OSError:
        pass
    pids = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if str(sock).encode() in (proc / "cmdline").read_bytes():
                pids.add(int(proc.name))
            elif inodes and any(os.readlink(fd) in inodes for fd in (proc / "fd").iterdir()):
                pids.add(int(proc.name))
        except OSError:
            continue
    return pids


def stop_daemon(sock: Path) -> list[int]:
    pids = daemon_pids(sock)
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 2.0)):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)
    return sorted(pids)


def run_mode(mode, files, args, base_env, work, out) -> dict:
    """{'available': bool, 'note': str, 'files': {name: result}, 'diffs': {...}}."""
    info = {"available": True, "note": "", "files": {}, "diffs": {}}
    env = dict(base_env)
    prefix = [sys.executable]
    if mode != "executorch":
        if importlib.util.find_spec("etclient") is None:
            return {**info, "available": False, "note": "etclient is not installed"}
        sock = work / f"{mode}.sock"
        env.update(ETSERVER_SOCKET=str(sock), ETSERVER_IDLE_EXIT="30")
        serverd = REPO / "build/server/et-serverd"
        if serverd.exists():
            env["ETSERVER_BIN"] = str(serverd)
    if mode == "zero-change":
        prefix = [sys.executable, "-m", "etclient", "run-as-executorch"]
        (work / "et_compat_probe.py").write_text(PROBE)
        try:
            probe = subprocess.run([*prefix, "-m", "et_compat_probe"], capture_output=True,
                                   text=True, cwd=work, env={**env, "PYTHONPATH": os.pathsep.join(
                                       filter(None, [str(work), env.get("PYTHONPATH")]))},
                                   timeout=300)
            err = [l for l in (probe.stderr + probe.stdout).splitlines() if l.strip()][-1:]
            failed = probe.returncode and f"exited {probe.returncode}: {err[0] if err else ''}"
        except subprocess.TimeoutExpired:
            failed = "did not finish in 300s"
        if failed:
            stop_daemon(work / f"{mode}.sock")
            return {**info, "available": False, "note":
                    f"not available: `python -m etclient run-as-executorch` {failed}"}
        info["note"] = "imports resolved to:\n" + probe.stdout.rstrip()
    try:
        for name, path in files.items():
            if mode == "etclient":
                original = path.read_text()
                path = work / "etclient_tests" / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(switch_imports(original))
                info["diffs"][name] = "".join(difflib.unified_diff(
                    original.splitlines(True), path.read_text().splitlines(True),
                    f"executorch/{name}", f"etclient copy/{name}"))
            print(f"[{mode}] {name} ...", end=" ", flush=True)
            res = run_pytest(prefix, path, name, mode, args, env, work, out)
            info["files"][name] = res
            print(cell(res), f"({res['seconds']}s)", flush=True)
    finally:
        if mode != "executorch":
            stopped = stop_daemon(work / f"{mode}.sock")
            if stopped:
                print(f"[{mode}] stopped daemon pid(s) {stopped}")
    return info


def cell(res: dict | None) -> str:
    if res is None:
        return "not run"
    if "passed" not in res:
        return res["status"].split(":")[0]
    if res["collect_errors"]:
        return "collection error"
    text = f"{res['passed']}/{res['tests']}"
    extra = [f"{res[k]} {k}" for k in ("failed", "errors", "skipped") if res[k]]
    return text + (f" ({', '.join(extra)})" if extra else "")


def report(results: dict, files: list[str]) -> str:
    lines = []
    header = ["file", "tests"] + [TITLES[m] for m in MODES]
    rows = []
    for name in files:
        per = {m: (results[m]["files"].get(name) if m in results else None) for m in MODES}
        counts = [r["tests"] for r in per.values() if r and "tests" in r]
        ref = per["executorch"]
        tests = ref["tests"] if ref and "tests" in ref else (max(counts) if counts else "?")
        row = [name, str(tests)]
        for m in MODES:
            if m in results and not results[m]["available"]:
                row.append("not available")
            else:
                row.append(cell(per[m]))
        rows.append(row)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    fmt = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    lines += [fmt(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt(r) for r in rows]
    for m in MODES:
        if m not in results:
            continue
        info = results[m]
        lines += ["", f"== {m} =="]
        if info["note"]:
            lines.append(info["note"])
        for name, res in info["files"].items():
            if "passed" not in res:
                lines.append(f"{name}: {res['status']} (log: {res['log']})")
                continue
            for test, msg in res["failures"]:
                lines.append(f"{name}: FAIL {test}: {msg}")
            for test, reason in res["skips"]:
                lines.append(f"{name}: skip {test}: {reason}")
        for name, diff in info.get("diffs", {}).items():
            lines += [f"-- imports switched in {name} --", diff.rstrip() or "(no change)"]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=MODES + ["all"], default="all")
    ap.add_argument("--json", type=Path, help="write the results as JSON here")
    ap.add_argument("-k", help="pytest -k expression, passed through")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per file per mode")
    ap.add_argument("--out", type=Path, default=REPO / "build/compat",
                    help="where the junit XML and pytest logs go (default build/compat)")
    args = ap.parse_args(argv)

    spec = importlib.util.find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        print("executorch is not installed in this Python:", sys.executable, file=sys.stderr)
        return 2
    files = {}
    for name in TEST_FILES:
        found = [Path(d) / name for d in spec.submodule_search_locations if (Path(d) / name).exists()]
        if found:
            files[name] = found[0]
        else:
            print(f"warning: {name} is not in the installed executorch", file=sys.stderr)
    if not files:
        print("none of the test files are in the installed executorch", file=sys.stderr)
        return 2

    modes = MODES if args.mode == "all" else [args.mode]
    args.out.mkdir(parents=True, exist_ok=True)
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("ETCLIENT_AS_EXECUTORCH", "ETSERVER_SOCKET", "ETSERVER_BIN")}
    try:
        version = importlib.metadata.version("executorch")
    except importlib.metadata.PackageNotFoundError:
        version = "(unknown version)"
    print(f"executorch {version} at {spec.submodule_search_locations[0]}; python {sys.executable}")
    work = Path(tempfile.mkdtemp(prefix="et-compat-"))
    results = {}
    try:
        (work / "pytest.ini").write_text("[pytest]\n")  # keep the repo's pytest.ini out
        for mode in modes:
            results[mode] = run_mode(mode, files, args, base_env, work, args.out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(report(results, list(files)))
    print(f"\njunit XML and pytest logs: {args.out}")
    if args.json:
        args.json.write_text(json.dumps({"executorch_version": version, "python": sys.executable,
                                         "files": {k: str(v) for k, v in files.items()},
                                         "modes": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
